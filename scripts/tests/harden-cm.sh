#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Connections bound to QPs their caller does not own (issue 10, defects 3
# and 4).  rdma_connect()/rdma_accept() on an rdma_cm id without a QP pass
# conn_param.qp_num through as it is; rdmap_sw must bind only a QP of the
# caller's own process (or, for a kernel ULP's QP, a kernel thread or a
# CAP_NET_ADMIN caller), and refuse anything else with EINVAL before a
# byte reaches the wire.  Then QP destroy racing connect and accept.
#
#   scripts/build debug && scripts/rdma-core provider &&
#   flock /tmp/rsw-vm.lock scripts/vm --kernel debug --timeout 900 -- \
#       scripts/tests/harden-cm.sh
#   RSW_STRESS=1: the destroy race runs 2000 rounds instead of 60.
#   RSW_CM_ROUNDS=N: that many rounds (make check: 20).
#   CASES="1 7": run only those cases (to see each fail without the fix).
#
#   rsw0 (rdmap_sw) --- dummy0 192.0.2.1/24; every end in this guest
#
# Cases (victim = uid 1000 with one RC QP in INIT and one posted receive;
# the honest peer Sends one message as soon as its connection is up):
#   1-2  another uid (1001) connects / accepts naming the victim's QPN:
#        EINVAL, the peer sees no request (connect) or a reject (accept),
#        the victim's receive has no completion, its QP stays INIT
#   3-4  another process of the same uid: the same
#   5-6  a second thread of the victim's process: bound, and the peer's
#        Send completes the victim's receive with the payload
#   7    a kernel ULP's QP (nvmet-rdma, nvme-rdma host on the same device)
#        named by uid 1000: EINVAL, no request at the peer, the
#        controller stays live
#   8    destroy racing connect and accept (qp-steal race), then no QP and
#        no cm_id left, the kernel log clean (KASAN on the debug kernel)
# shellcheck source=scripts/tests/lib.sh
. "$(dirname "$0")/lib.sh"

: "${RSW_OUT:?run me through scripts/vm}"
DEV=rsw0
NETDEV=dummy0
IP=192.0.2.1
VICTIM_UID=1000
OTHER_UID=1001
ROUNDS=60
[ "${RSW_STRESS:-0}" = 1 ] && ROUNDS=2000
ROUNDS=${RSW_CM_ROUNDS:-$ROUNDS}
case "$ROUNDS" in ''|*[!0-9]*|0) echo "RSW_CM_ROUNDS must be a positive integer" >&2; exit 2 ;; esac
[ "${RSW_KERNEL:-}" = debug ] && T_CMD_TIMEOUT=300
CASES=${CASES:-1 2 3 4 5 6 7 8}
want() { [[ " $CASES " == *" $1 "* ]]; }

rdma_core_use qp-steal
QPS=$RSW_RDMA_PROVIDER_BUILD/qp-steal
LOGS=$RSW_RUN/harden-cm
mkdir -p "$LOGS"
chmod 0777 "$LOGS"

# run_as UID CMD...: run CMD as UID (same gid), with no capabilities.
run_as() {
	local uid=$1
	shift
	setpriv --reuid="$uid" --regid="$uid" --clear-groups -- "$@"
}

has_line() { grep -q -- "$2" "$1"; }

# victim_start: a victim process (uid 1000) as coproc VIC; sets VQPN.
victim_start() {
	local line
	coproc VIC { run_as "$VICTIM_UID" "$QPS" victim "$IP" 2>&1; }
	read -r -t 30 line <&"${VIC[0]}" || fail "victim did not start"
	note "$line"
	[[ $line =~ ^victim:\ qpn\ ([0-9]+)$ ]] || fail "victim: $line"
	VQPN=${BASH_REMATCH[1]}
}

# victim_cmd CMD LINES: send CMD to the victim, read LINES answer lines
# into VOUT.
victim_cmd() {
	local line i
	VOUT=
	printf '%s\n' "$1" >&"${VIC[1]}"
	for ((i = 0; i < $2; i++)); do
		read -r -t "$T_CMD_TIMEOUT" line <&"${VIC[0]}" ||
			fail "victim: no answer to '$1'"
		note "$line"
		VOUT+="$line"$'\n'
	done
}

victim_stop() {
	local pid=$VIC_PID
	printf 'quit\n' >&"${VIC[1]}"
	wait "$pid" || fail "victim exited with an error"
}

# bg NAME UID CMD...: run CMD as UID in the background, output in
# $LOGS/NAME; BG_PID.
bg() {
	local name=$1 uid=$2
	shift 2
	printf '    $ %s &   (%s, uid %s)\n' "$*" "$name" "$uid"
	timeout -k 5 "$T_CMD_TIMEOUT" setpriv --reuid="$uid" --regid="$uid" \
		--clear-groups -- "$@" >"$LOGS/$name" 2>&1 &
	BG_PID=$!
}

# finish PID NAME: stop a background helper (it may have exited), show log.
finish() {
	kill "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
	indent <"$LOGS/$2"
}

# connect_attack N UID QPN: uid UID names QPN in rdma_connect to an honest
# peer (case N); its exit status in ATK_RC, the peer stopped after it.
connect_attack() {
	local n=$1 uid=$2 qpn=$3 port=$((7600 + $1)) peer
	ATK_RC=0
	bg "peer-$n" "$VICTIM_UID" "$QPS" peer server "$IP" "$port"
	peer=$BG_PID
	poll_until 20 "peer listening" has_line "$LOGS/peer-$n" "peer: listening"
	printf '    $ qp-steal attack connect %s %s %s   (uid %s)\n' \
		"$IP" "$port" "$qpn" "$uid"
	run_as "$uid" "$QPS" attack connect "$IP" "$port" "$qpn" \
		>"$LOGS/attack-$n" 2>&1 || ATK_RC=$?
	indent <"$LOGS/attack-$n"
	finish "$peer" "peer-$n"
}

# assert_refused_connect N: the attack of case N failed with EINVAL from
# rdma_connect, and its peer saw no connection request.
assert_refused_connect() {
	assert_eq "$ATK_RC" 2 "attacker exit status (2: EINVAL from rdma_connect)"
	! has_line "$LOGS/peer-$1" "peer: request" ||
		fail "the refused connect reached the peer"
	ok "nothing reached the peer"
}

# attack_case N WHO MODE UID: uid UID (another process) names the victim's
# QPN in rdma_connect (MODE connect) or rdma_accept (MODE accept).
attack_case() {
	local n=$1 who=$2 mode=$3 uid=$4 port=$((7600 + $1)) peer atk
	step "$who: rdma_$mode naming the victim's QP is refused"
	victim_start
	if [ "$mode" = connect ]; then
		connect_attack "$n" "$uid" "$VQPN"
		victim_cmd "check 1000" 2
	else
		ATK_RC=0
		bg "attack-$n" "$uid" "$QPS" attack accept "$IP" "$port" "$VQPN"
		atk=$BG_PID
		poll_until 20 "attacker listening" has_line "$LOGS/attack-$n" "attack: listening"
		bg "peer-$n" "$VICTIM_UID" "$QPS" peer client "$IP" "$port"
		peer=$BG_PID
		wait "$atk" || ATK_RC=$?
		indent <"$LOGS/attack-$n"
		victim_cmd "check 1000" 2
		finish "$peer" "peer-$n"
	fi
	victim_stop
	assert_match "$VOUT" 'victim: completions=0 ' "victim's receive"
	assert_match "$VOUT" 'victim: state=INIT' "victim's QP state"
	if [ "$mode" = connect ]; then
		assert_refused_connect "$n"
	else
		assert_eq "$ATK_RC" 2 "attacker exit status (2: EINVAL from rdma_accept)"
	fi
}

# thread_case N MODE: the victim's own second thread binds its QP.
thread_case() {
	local n=$1 mode=$2 port=$((7600 + $1)) peer
	step "the owner's second thread: rdma_$mode naming its QP works"
	victim_start
	if [ "$mode" = connect ]; then
		bg "peer-$n" "$VICTIM_UID" "$QPS" peer server "$IP" "$port"
		peer=$BG_PID
		poll_until 20 "peer listening" has_line "$LOGS/peer-$n" "peer: listening"
		victim_cmd "thread connect $port" 2
	else
		# The thread listens first; the peer connects once it does.
		printf 'thread accept %s\n' "$port" >&"${VIC[1]}"
		local line
		read -r -t 30 line <&"${VIC[0]}" || fail "victim thread silent"
		note "$line"
		bg "peer-$n" "$VICTIM_UID" "$QPS" peer client "$IP" "$port"
		peer=$BG_PID
		VOUT=
		victim_cmd "" 2
	fi
	assert_match "$VOUT" "victim: thread attack exit 0" "thread bound the QP"
	victim_cmd "check 10000" 2
	finish "$peer" "peer-$n"
	victim_stop
	assert_match "$VOUT" 'victim: completions=1 status=success data=payload' \
		"victim's receive got the peer's Send"
}

t_banner
rsw_dummy_up "$DEV" "$NETDEV" "$IP/24"
# rdma-core's udev rules give every user these nodes; do the same here.
check chmod 0666 /dev/infiniband/rdma_cm /dev/infiniband/uverbs0
# The rdma-core build and qp-steal live under the host's /root (0700);
# let the test uids through, in this guest's overlay only.
check chmod o+x /root

want 1 && attack_case 1 "another uid" connect "$OTHER_UID"
want 2 && attack_case 2 "another uid" accept "$OTHER_UID"
want 3 && attack_case 3 "another process of the same uid" connect "$VICTIM_UID"
want 4 && attack_case 4 "another process of the same uid" accept "$VICTIM_UID"
want 5 && thread_case 5 connect
want 6 && thread_case 6 accept

if want 1; then
	step "refusals are logged, rate-limited, without peer data"
	check dmesg
	assert_match "$T_OUT" "rdmap_sw: QP\[[0-9]+\]: connect by pid [0-9]+ \(qp-steal\) refused" \
		"refusal message"
fi

# ---------------------------------------------------------- kernel ULP QP
NQN=nqn.2026-11.org.rdmap-sw:harden-cm
CFS=/sys/kernel/config/nvmet
kqp_case() {
	local kqpn
	step "nvmet-rdma target and nvme-rdma host on $DEV"
	mountpoint -q /sys/kernel/config || check mount -t configfs none /sys/kernel/config
	check modprobe null_blk nr_devices=1 gb=1 bs=4096
	check modprobe -a nvmet nvmet-rdma nvme-rdma
	check mkdir "$CFS/subsystems/$NQN"
	echo 1 >"$CFS/subsystems/$NQN/attr_allow_any_host"
	check mkdir "$CFS/subsystems/$NQN/namespaces/1"
	echo -n /dev/nullb0 >"$CFS/subsystems/$NQN/namespaces/1/device_path"
	echo 1 >"$CFS/subsystems/$NQN/namespaces/1/enable"
	check mkdir "$CFS/ports/1"
	echo rdma >"$CFS/ports/1/addr_trtype"
	echo ipv4 >"$CFS/ports/1/addr_adrfam"
	echo "$IP" >"$CFS/ports/1/addr_traddr"
	echo 4420 >"$CFS/ports/1/addr_trsvcid"
	check ln -s "$CFS/subsystems/$NQN" "$CFS/ports/1/subsystems/$NQN"
	check nvme connect -t rdma -a "$IP" -s 4420 -n "$NQN" -i 1
	# A QP's restrack name is rdma_cm's; its cm_id names the ULP.
	check rdma res show cm_id
	kqpn=$(sed -n "s/^link $DEV\/1 .* lqpn \([0-9]*\) .*state CONNECT .*comm \[nvmet_rdma\].*/\1/p" <<<"$T_OUT" | head -n1)
	[ -n "$kqpn" ] || fail "no connected nvmet_rdma cm_id with a QP on $DEV"
	note "nvmet-rdma QP $kqpn"

	step "uid $VICTIM_UID names nvmet-rdma's QP $kqpn in rdma_connect: refused"
	connect_attack 7 "$VICTIM_UID" "$kqpn"
	assert_refused_connect 7
	check rdma res show qp link "$DEV/1" lqpn "$kqpn"
	assert_match "$T_OUT" "state RTS" "nvmet-rdma's QP state"
	check cat /sys/class/nvme/nvme0/state
	assert_eq "$T_OUT" live "nvme controller state"

	step "tear NVMe-oF down"
	check nvme disconnect -n "$NQN"
	check rm "$CFS/ports/1/subsystems/$NQN"
	check rmdir "$CFS/ports/1"
	echo 0 >"$CFS/subsystems/$NQN/namespaces/1/enable"
	check rmdir "$CFS/subsystems/$NQN/namespaces/1" "$CFS/subsystems/$NQN"
	check modprobe -r nvme-rdma nvmet-rdma null_blk
}
if ! want 7; then
	:
elif command -v nvme >/dev/null; then
	kqp_case
else
	skip "nvme-cli is not installed: no kernel ULP QP case"
fi

if want 8; then
	step "destroy racing connect and accept, $ROUNDS rounds"
	T_CMD_TIMEOUT=$((T_CMD_TIMEOUT + ROUNDS)) \
		check run_as "$VICTIM_UID" "$QPS" race "$IP" 7699 "$ROUNDS"
	assert_match "$T_OUT" "^race: $ROUNDS rounds" "race summary"
fi

step "no QP and no cm_id left"
no_qps() { [ -z "$(rdma res show qp link "$DEV/1")" ]; }
poll_until 20 "no QP left on $DEV" no_qps
no_cm_ids() { ! rdma res show cm_id | grep -q "dev $DEV"; }
poll_until 20 "no cm_id left on $DEV" no_cm_ids

rsw_dummy_down "$DEV" "$NETDEV"
echo "harden-cm: PASS"
