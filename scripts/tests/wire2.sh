#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# iWARP between two guests on one virtual Ethernet wire (scripts/vm2): a
# provider in each, the kernel's NVMe-oF or SRP target and host (fio
# verifying every block it reads), NFS over RDMA, perftest or rping -V
# between them, over IPv4 or IPv6, optionally over a lossy wire (tc netem
# on both guests' eth0).  Both guests run this script with
# the same options:
#
#   scripts/siw 6.12 && scripts/build 6.12 && scripts/rdma-core
#   scripts/vm2 --kernel 6.12 --mem 2048 --timeout 900 -- \
#       scripts/tests/wire2.sh OPTS -- scripts/tests/wire2.sh OPTS
#
#   vm-a eth0 10.77.0.1 --a provider: nvmet-rdma target (port 4420, a
#        (fd00:77::1)       memory-backed null_blk namespace), ib_srpt
#                           (rdma_cm port 5555, a 128 MiB LIO ramdisk),
#                           knfsd (20049) or the rping/perftest server
#   vm-b eth0 10.77.0.2 --b provider: nvme-rdma host, ib_srp, the NFS
#        (fd00:77::2)       client or the rping/perftest client (vm-b
#                           initiates every connection)
#
# Options:
#   --a siw|rsw --b siw|rsw   the providers (default: rsw on both)
#   --family 4|6              the address family of every connection
#                             (default 4); 6: both eth0 also get
#                             fd00:77::1/64 and ::2 (nodad), and the
#                             target, server and client use those; every
#                             MPA Request and Reply on the wire must then
#                             be IPv6 (and IPv4 with 4), and the host's
#                             cm_ids (nvmeof, srp) show the addresses.
#                             perftest with 6 is a SKIP: Debian's
#                             perftest 4.5 resolves rdma_cm peers as IPv4
#                             only
#   --load nvmeof|srp|nfs|rping|perftest|partition
#                             nvmeof, srp: fio randrw with crc32c verify
#                             at 4k and 128k for --seconds each (default
#                             nvmeof); srp: ib_srpt (LIO, configfs) on
#                             vm-a, ib_srp add_target on vm-b, logout by
#                             deleting the remote port (scripts/tests/
#                             srp-env.sh); with --a siw it needs
#                             --family 6, a SKIP otherwise: ib_srpt
#                             listens on [::] and siw's dual-stack
#                             listener reports an IPv4 login with a
#                             v4-mapped address rdma_cm cannot resolve
#                             to a device (scripts/tests/srp.sh); rping:
#                             rping -V -C 200 of 16 KiB; nfs: knfsd on
#                             vm-a exports a tmpfs, vm-b mounts it over
#                             RDMA (the newest NFSv4), writes 32 MiB,
#                             reads it back, sha256 on both; perftest:
#                             ib_write_bw, ib_read_bw, ib_send_bw over
#                             rdma_cm, 64 KiB x 200, each must report;
#                             partition (rsw on
#                             both, dead_peer_s 5): an endless rping -V,
#                             then vm-b's eth0 goes down, and both ends'
#                             rping must end on their own within 30 s
#   --crc on|off              MPA CRC (rdmap_sw: its mpa_crc setting;
#                             siw: the variant that requires it, or not)
#   --mtu N                   both eth0 (default 1500)
#   --rev 1|2                 the MPA revision rdmap_sw initiates with (vm-b
#                             must be rsw for 1)
#   --markers on|off          rdmap_sw's mpa_markers (on: both rsw)
#   --netem SPEC              tc qdisc netem SPEC on both eth0 (egress)
#   --seconds N               fio's run per block size (default 10)
# Asserts, on vm-b, what nvmeof.sh and srp.sh assert (fio: no error, data both ways;
# MPA as asked on the wire: C and M bits, revision; every host QP in RTS on
# its device) or every ping verified; that no connection failed on the way
# (a Terminate, a reset, a dead peer): no NVMe error recovery on vm-b, no
# fatal or access QP event at nvmet on vm-a; no ib_srp reconnect, failed
# completion or CM error on vm-b, no failed completion (other than the
# flush at logout), rejected login or CM error at ib_srpt on vm-a; rping
# ends cleanly on both;
# the modules unload and the kernel log is clean on both.  Under netem the
# assertions are about data and completion within the absolute time limits,
# never about speed.  One line on vm-b:
#   wire2 a=rsw b=siw load=nvmeof family=4 crc=on mtu=9000 rev=2 markers=off netem="…" bs=4k read=… MB/s write=… MB/s errors=0 mpa_crc=2/2
# shellcheck source=scripts/tests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=scripts/tests/rdma-env.sh
. "$(dirname "$0")/rdma-env.sh"
# shellcheck source=scripts/tests/blk-io.sh
. "$(dirname "$0")/blk-io.sh"
# shellcheck source=scripts/tests/nfs-env.sh
. "$(dirname "$0")/nfs-env.sh"
# shellcheck source=scripts/tests/srp-env.sh
. "$(dirname "$0")/srp-env.sh"

A=rsw B=rsw load=nvmeof family=4 crc='' mtu=1500 rev='' markers='' netem='' seconds=10
usage() {
	echo "usage: $0 [--a siw|rsw] [--b siw|rsw] [--load nvmeof|srp|nfs|rping|perftest|partition] [--family 4|6] [--crc on|off] [--mtu N] [--rev 1|2] [--markers on|off] [--netem SPEC] [--seconds N]" >&2
	exit 2
}
while [ $# -gt 0 ]; do
	[ $# -ge 2 ] || usage
	case "$1" in
	--a) A=$2 ;;
	--b) B=$2 ;;
	--load) load=$2 ;;
	--family) family=$2 ;;
	--crc) crc=$2 ;;
	--mtu) mtu=$2 ;;
	--rev) rev=$2 ;;
	--markers) markers=$2 ;;
	--netem) netem=$2 ;;
	--seconds) seconds=$2 ;;
	*) usage ;;
	esac
	shift 2
done
re_check_provider_name "$A"
re_check_provider_name "$B"
case "$load" in nvmeof|srp|nfs|rping|perftest) ;; partition) [ "$A$B" = rswrsw ] || fail "--load partition needs rsw on both" ;;
*) fail "--load takes nvmeof, srp, nfs, rping, perftest or partition" ;; esac
case "$family" in 4|6) ;; *) fail "--family takes 4 or 6" ;; esac
case "$crc" in ''|on|off) ;; *) fail "--crc takes on or off" ;; esac
case "$mtu" in ''|*[!0-9]*) fail "--mtu takes a number" ;; esac
case "$rev" in ''|2) ;; 1) [ "$B" = rsw ] || fail "--rev 1 needs --b rsw" ;;
*) fail "--rev takes 1 or 2" ;; esac
case "$markers" in ''|off) ;; on) [ "$A$B" = rswrsw ] || fail "--markers on needs rsw on both" ;;
*) fail "--markers takes on or off" ;; esac
case "$seconds" in ''|*[!0-9]*|0) fail "--seconds takes a positive number" ;; esac
: "${RSW_VM:?run me through scripts/vm2}" "${RSW_PEER_IP:?}" "${RSW_IP:?}"
# Both guests decide alike, before any barrier.
if [ "$load$family" = perftest6 ]; then
	skip "wire2 --load perftest --family 6: Debian's perftest 4.5 resolves rdma_cm peers as IPv4 only"
	exit 0
fi
if [ "$load$family$A" = srp4siw ]; then
	skip "wire2 --load srp --family 4 --a siw: upstream siw cannot take an IPv4 login on ib_srpt's [::] listener (v4-mapped address, see scripts/tests/srp.sh)"
	exit 0
fi

side=${RSW_VM#vm-}
case "$side" in a) me=$A ;; b) me=$B ;; *) fail "RSW_VM=$RSW_VM: want vm-a or vm-b" ;; esac
# The roles blk-io.sh and re_* know: vm-a the target, vm-b the host.
target=$A host=$B
case "$side$RSW_IP" in a10.77.0.1|b10.77.0.2) ;;
*) fail "$RSW_VM has $RSW_IP: scripts/vm2's addresses changed" ;; esac
# The connections' addresses (IPv6: added to eth0 below).
if [ "$family" = 6 ]; then
	TGT_IP=fd00:77::1 host_ip=fd00:77::2
	MY_IP6=fd00:77::$([ "$side" = a ] && echo 1 || echo 2) PEER_IP6=fd00:77::$([ "$side" = a ] && echo 2 || echo 1)
else
	TGT_IP=10.77.0.1 host_ip=10.77.0.2
fi
# The block loads' target port (res_assert_host).
case "$load" in srp) PORT=5555 BIO_FIO_SIZE=$SRP_FIO_SIZE ;; *) PORT=4420 ;; esac
NQN=nqn.2026-11.org.rdmap-sw:wire2
DEV=$(re_dev "$me")
# Barrier limits: the other guest boots, loads and connects under TCG.
BAR_S=300
CONFIG="a=$A b=$B load=$load family=$family crc=${crc:-default} mtu=$mtu rev=${rev:-default} markers=${markers:-default} netem=\"${netem:-none}\""

# The NVMe-oF block device of $NQN (vm-b).
nvme_bdev() {
	local d
	for d in /sys/block/nvme*n*; do
		[ -e "$d/device/subsysnqn" ] || continue
		[ "$(cat "$d/device/subsysnqn")" = "$NQN" ] || continue
		[ -b "/dev/${d##*/}" ] || continue
		echo "/dev/${d##*/}"
		return 0
	done
	return 1
}
ctrls_live() {
	local c n=0
	for c in /sys/class/nvme/nvme*/state; do
		[ -r "$c" ] && [ "$(<"$c")" = live ] || return 1
		n=$((n + 1))
	done
	[ "$n" -ge 1 ]
}
bio_live() { if [ "$load" = srp ]; then srp_live; else ctrls_live; fi; }

# Connections that failed so far, as the ULP saw them: nvme-rdma's error
# recoveries (vm-b), nvmet-rdma's fatal and access QP events (vm-a).  A
# Terminate from either end, a reset or a dead peer shows here.  (grep -c
# on dmesg's output: see re_nvmet_enables.)
# For srp, ib_srp's reconnects, failed completions and CM errors (vm-b);
# ib_srpt's failed completions other than flushes (status 5: the
# logout's), rejected logins and CM errors (vm-a).
conn_failures() {
	if [ "$side$load" = bsrp ]; then
		dmesg | grep -cE 'scsi host[0-9]+: (ib_srp: )?(reconnect|.*failed|SRP abort|SRP reset|DREQ received|received DREQ|connection closed|.*REJ)' || true
	elif [ "$side$load" = asrp ]; then
		dmesg | grep -cE 'ib_srpt.*(failed.* with status ([0-46-9]|[1-9][0-9])|[Rr]ejected|Received CM REJ|transition.*failed|unrecognized)' || true
	elif [ "$side" = b ]; then
		dmesg | grep -cE 'nvme nvme[0-9]+: (starting error recovery|Reconnecting|failed to connect)' || true
	else
		dmesg | grep -cE 'nvmet_rdma: received IB QP event: QP (fatal|access) error' || true
	fi
}
ended_pid() { ! kill -0 "$1" 2>/dev/null; }

t_banner
note "$RSW_VM: $me on $RSW_NETDEV $RSW_IP, peer $RSW_PEER_IP; $CONFIG"

step "modules for $load on $RSW_VM"
re_begin
if [ "$load" = nvmeof ]; then
	if [ "$side" = a ]; then
		check modprobe null_blk nr_devices=1 gb=1 bs=4096 memory_backed=1
		check modprobe nvmet
		check modprobe nvmet-rdma
	else
		check modprobe nvme-rdma
	fi
elif [ "$load" = srp ]; then
	if [ "$side" = a ]; then srp_target_modules; else srp_host_modules; fi
fi

step "the wire: $RSW_NETDEV MTU $mtu${netem:+, netem $netem}"
check ip link set "$RSW_NETDEV" mtu "$mtu"
assert_file "/sys/class/net/$RSW_NETDEV/mtu" "$mtu"
if [ -n "$netem" ]; then
	# shellcheck disable=SC2086 # SPEC is tc's words
	check tc qdisc add dev "$RSW_NETDEV" root netem $netem
	check tc qdisc show dev "$RSW_NETDEV"
	assert_match "$T_OUT" "netem" "netem on $RSW_NETDEV"
fi
if [ "$family" = 6 ]; then
	# nodad: a tentative address is neither bound to nor listened on.
	check ip -6 addr add "$MY_IP6/64" dev "$RSW_NETDEV" nodad
	check ip -6 addr show dev "$RSW_NETDEV" scope global
	assert_match "$T_OUT" "inet6 $MY_IP6/64 " "$MY_IP6 on $RSW_NETDEV"
fi
barrier wire-up "$BAR_S"
T_CMD_TIMEOUT=30 check ping -c 3 -i 0.5 -W 5 -s $((mtu - 28)) -M "do" "$RSW_PEER_IP"
[ "$family" = 4 ] ||
	T_CMD_TIMEOUT=30 check ping -6 -c 3 -i 0.5 -W 5 -s $((mtu - 48)) -M "do" "$PEER_IP6"

step "provider $me on $RSW_NETDEV"
re_load "$me" "$crc" "$markers"
re_attach "$me" "$RSW_NETDEV"
if [ "$me" = rsw ]; then
	[ -z "$crc" ] || re_rsw_set "$DEV" mpa_crc "$crc"
	[ -z "$rev" ] || re_rsw_set "$DEV" mpa_rev "$rev"
	[ -z "$markers" ] || re_rsw_set "$DEV" mpa_markers "$([ "$markers" = on ] && echo 1 || echo 0)"
fi
fail0=$(conn_failures)

run_a_nvmeof() {
	step "nvmet target: $NQN on $TGT_IP:$PORT"
	re_nvmet_export "$NQN" "$TGT_IP" "$PORT" /dev/nullb0
	barrier exported "$BAR_S"
	step "serve until the host is done"
	barrier "done" $((seconds * 6 + 900))
	step "tear down the target"
	re_nvmet_unexport "$NQN"
}

run_b_nvmeof() {
	barrier exported "$BAR_S"
	step "nvme connect -t rdma -a $TGT_IP -s $PORT --host-traddr $host_ip"
	re_mpa_watch_start "$PORT" "$RSW_NETDEV"
	T_CMD_TIMEOUT=120 check nvme connect -t rdma -a "$TGT_IP" -s "$PORT" -n "$NQN" \
		--host-traddr "$host_ip"
	poll_until 60 "block device of $NQN" nvme_bdev
	bdev=$(nvme_bdev)
	re_mpa_collect "$crc"
	wire2_mpa_rev
	wire2_family_of "$mpa_counts"
	BIO_TARGET_REMOTE=1
	bio_run wire2 nvmet_rdma nvme_rdma 2 "wire2 $CONFIG"
	step "nvme disconnect"
	check nvme disconnect -n "$NQN"
	assert_match "$T_OUT" "disconnected 1 controller" "nvme disconnect"
	poll_until 60 "$bdev gone" gone "$bdev"
	barrier "done" "$BAR_S"
}

run_a_rping() {
	rdma_core_use rping
	local pid rc=0 q=()
	# An MPA rev 1 Request carries no IRD/ORD; siw reports 0 for both, and
	# rping's default accept (no conn_param) echoes that back, after which
	# siw refuses the server's RDMA Reads.  -q makes rping set its own
	# depths (1 and 1), as a ULP that chooses its depths does.
	[ "$A$rev" != siw1 ] || q=(-q)
	step "rping server on $TGT_IP"
	printf '    $ %s &\n' "$B/rping -s ${q[*]} -a $TGT_IP -p 7174 -V -C 200 -S 16384"
	"$B/rping" -s "${q[@]}" -a "$TGT_IP" -p 7174 -V -C 200 -S 16384 >"$RSW_RUN/rping.server" 2>&1 &
	pid=$!
	barrier listening "$BAR_S"
	barrier "done" $((seconds * 6 + 600))
	poll_until 60 "the rping server ends" ended_pid "$pid"
	wait "$pid" || rc=$?
	[ "$rc" -eq 0 ] || { indent <"$RSW_RUN/rping.server"; fail "rping server exit status $rc"; }
	ok "rping server ended cleanly after 200 verified pings"
}

run_b_rping() {
	rdma_core_use rping
	barrier listening "$BAR_S"
	step "rping client -V -C 200 -S 16384 to $TGT_IP"
	re_mpa_watch_start 7174 "$RSW_NETDEV"
	# Line-buffered: rping's stderr would otherwise split a ping line.
	T_CMD_TIMEOUT=600 check stdbuf -oL "$B/rping" -c -a "$TGT_IP" -p 7174 -V -C 200 -S 16384 -v
	n=$(grep -o 'rdma-ping-[0-9]*:' <<<"$T_OUT" | sort -u | wc -l)
	assert_eq "$n" 200 "distinct verified pings"
	re_mpa_collect "$crc"
	wire2_mpa_rev
	wire2_family_of "$mpa_counts"
	echo "wire2 $CONFIG pings=$n mpa_crc=$mpa_crc"
	barrier "done" "$BAR_S"
}

# Partition: dead_peer_s 5 on both ends; an endless verified rping; vm-b's
# eth0 down.  Each end's rping must end by itself (dead-peer detection:
# TCP_USER_TIMEOUT and keepalive), not by a time limit or a signal, within
# PART_BOUND_S of the link going down, saying the connection went; then the
# link comes back.  Its exit status cannot tell: iWARP reports every end of
# a connection as RDMA_CM_EVENT_DISCONNECTED, and rping exits 0 when that
# event is what stopped it ("wait for ... state 10", DISCONNECTED), 255
# when an error completion came first; which comes first is a race.
PART_BOUND_S=30
part_pings() { grep -o 'rdma-ping-[0-9]*:' "$RSW_RUN/rping.$1" 2>/dev/null | sort -u | wc -l; }
part_flowing() { [ "$(part_pings client)" -ge 20 ]; }
part_end() {
	local who=$1 pid=$2 rc=0 why
	poll_until "$PART_BOUND_S" "the rping $who ends by itself" ended_pid "$pid"
	wait "$pid" || rc=$?
	case $rc in
	124|137) fail "the rping $who was killed by its time limit" ;;
	0|255) ;;
	*) fail "the rping $who ended with status $rc" ;;
	esac
	# An endless rping that stops has lost its connection; it must say so.
	why=$(grep -vE '^ping data' "$RSW_RUN/rping.$who" |
		grep -E 'DISCONNECT EVENT|state 1[01]$|completion failed|error' |
		tail -n 1)
	[ -n "$why" ] ||
		fail "the rping $who ended (status $rc) without a disconnect or an error"
	ok "rping $who ended with status $rc: $why"
}

run_a_partition() {
	rdma_core_use rping
	re_rsw_set "$DEV" dead_peer_s 5
	step "endless rping server on $TGT_IP"
	timeout -k 5 600 "$B/rping" -s -a "$TGT_IP" -p 7175 -V -C 100000000 \
		>"$RSW_RUN/rping.server" 2>&1 &
	local pid=$!
	barrier listening "$BAR_S"
	barrier link-down "$BAR_S"
	step "the partition ends the server's connection"
	part_end server "$pid"
	barrier "done" "$BAR_S"
}

run_b_partition() {
	rdma_core_use rping
	re_rsw_set "$DEV" dead_peer_s 5
	barrier listening "$BAR_S"
	step "endless rping client -V to $TGT_IP"
	timeout -k 5 600 "$B/rping" -c -a "$TGT_IP" -p 7175 -V -v -C 100000000 \
		>"$RSW_RUN/rping.client" 2>&1 &
	local pid=$!
	poll_until 120 "verified pings flowing" part_flowing
	step "$RSW_NETDEV down: a partition longer than dead_peer_s"
	check ip link set "$RSW_NETDEV" down
	barrier link-down "$BAR_S"
	part_end client "$pid"
	barrier "done" $((PART_BOUND_S + BAR_S))
	step "$RSW_NETDEV up again"
	check ip link set "$RSW_NETDEV" up
	poll_until 20 "$DEV port ACTIVE" eval "rdma link show $DEV/1 | grep -q 'state ACTIVE'"
}

# NFS: vm-a serves (nfs-env.sh), vm-b mounts, writes, reads back and
# compares; vm-a compares its copy with the sum vm-b left in RSW_SHARE.
size_mib=32
run_a_nfs() {
	IP=$TGT_IP CIDR=10.77.0.0/24 PORT=20049
	[ "$family" = 4 ] || CIDR=fd00:77::/64
	nfs_server_start
	barrier exported "$BAR_S"
	barrier "done" $((seconds * 6 + 900))
	step "the server's copy is what vm-b wrote"
	check sha256sum "$EXPORT/file"
	assert_eq "${T_OUT%% *}" "$(<"$RSW_SHARE/nfs.sha256")" "sha256 of the server's copy"
	nfs_server_stop
}

run_b_nfs() {
	IP=$TGT_IP PORT=20049 NFS_IFACE=$RSW_NETDEV
	step "source file: $size_mib MiB from /dev/urandom"
	check dd if=/dev/urandom of="$SRC" bs=1M count="$size_mib" status=none
	src_sum=$(sha256sum "$SRC" | cut -d' ' -f1)
	echo "$src_sum" >"$RSW_SHARE/nfs.sha256"
	nfs_vers_pick
	barrier exported "$BAR_S"
	nfs_mount
	re_mpa_assert_markers "$mpa" "$markers"
	wire2_mpa_rev_of "$mpa"
	wire2_family_of "$mpa"
	nfs_write_read
	nfs_umount
	rm -f "$SRC"
	echo "wire2 $CONFIG vers=$vers size=${size_mib}MiB write=$write_mbps MB/s read=$read_mbps MB/s sha256=ok mpa_crc=$mpa_crc"
	barrier "done" "$BAR_S"
}

# perftest: one tool at a time, its server on vm-a listening before vm-b's
# client starts; both must exit 0 and the client print its result row.
# -F, as in uverbs.sh: a side whose CPU-MHz probe gives up under TCG still
# prints its row (figures 0) and exits 0, instead of exit(1) with "Can't
# produce a report" before the closing sync; the verdict is unchanged.
PERF_TOOLS="ib_write_bw ib_read_bw ib_send_bw"
perf_listening() { rdma res show cm_id | grep -qE "state LISTEN .*:$1( |$)"; }

run_a_perftest() {
	local tool port=7200 pid rc
	command -v ib_write_bw >/dev/null || fail "perftest is not installed"
	rdma_core_use	# perftest on this build's libibverbs and providers
	for tool in $PERF_TOOLS; do
		port=$((port + 1))
		step "$tool server on $TGT_IP:$port"
		printf '    $ %s &\n' "$tool -R -F -d $DEV -p $port -s 65536 -n 200"
		timeout -k 5 300 "$tool" -R -F -d "$DEV" -p "$port" -s 65536 -n 200 \
			>"$RSW_RUN/$tool.server" 2>&1 &
		pid=$!
		poll_until 30 "$tool listening" perf_listening "$port"
		barrier "srv-$tool" "$BAR_S"
		barrier "cli-$tool" "$BAR_S"
		poll_until 60 "$tool server ends" ended_pid "$pid"
		rc=0
		wait "$pid" || rc=$?
		[ "$rc" -eq 0 ] || { indent <"$RSW_RUN/$tool.server"; fail "$tool server exit status $rc"; }
	done
	barrier "done" "$BAR_S"
}

run_b_perftest() {
	local tool port=7200
	command -v ib_write_bw >/dev/null || fail "perftest is not installed"
	rdma_core_use	# perftest on this build's libibverbs and providers
	for tool in $PERF_TOOLS; do
		port=$((port + 1))
		barrier "srv-$tool" "$BAR_S"
		step "$tool client to $TGT_IP:$port"
		T_CMD_TIMEOUT=300 check "$tool" -R -F -d "$DEV" -p "$port" -s 65536 -n 200 "$TGT_IP"
		grep -E "^[[:space:]]*65536[[:space:]]+200[[:space:]]" <<<"$T_OUT" | indent
		grep -qE "^[[:space:]]*65536[[:space:]]+200[[:space:]]" <<<"$T_OUT" ||
			fail "$tool printed no result row"
		echo "wire2 $CONFIG $tool: $(grep -E "^[[:space:]]*65536[[:space:]]+200[[:space:]]" <<<"$T_OUT" | tr -s ' ')"
		barrier "cli-$tool" "$BAR_S"
	done
	barrier "done" "$BAR_S"
}

# SRP: vm-b tells vm-a its initiator port ID (the ACL's name, from vm-b's
# device GID) through RSW_SHARE; vm-a exports, vm-b logs in, runs the
# verified I/O and logs out.
run_a_srp() {
	local iport
	barrier iport "$BAR_S"
	iport=$(<"$RSW_SHARE/srp.iport")
	step "LIO target: ramdisk LUN, ib_srpt on rdma_cm port $PORT, ACL $iport"
	lio_export "$DEV" "$iport"
	barrier exported "$BAR_S"
	step "serve until the host is done"
	barrier "done" $((seconds * 6 + 900))
	step "tear down the target"
	lio_unexport "$iport"
}

run_b_srp() {
	srp_iport "$DEV" >"$RSW_SHARE/srp.iport" || fail "no GID on $DEV"
	note "initiator port ID $(<"$RSW_SHARE/srp.iport")"
	barrier iport "$BAR_S"
	barrier exported "$BAR_S"
	re_mpa_watch_start "$PORT" "$RSW_NETDEV"
	srp_login "$DEV" "$TGT_IP" "$host_ip"
	re_mpa_collect "$crc"
	wire2_mpa_rev
	wire2_family_of "$mpa_counts"
	BIO_TARGET_REMOTE=1
	# ib_srp opens one channel per hardware queue: at least one.
	bio_run wire2 ib_srpt ib_srp 1 "wire2 $CONFIG"
	srp_logout
	barrier "done" "$BAR_S"
}

# wire2_family_of COUNTS: every MPA Request and Reply the sniffer saw
# (re_mpa_watch_stop's line) went over IPv6 with --family 6, none with 4.
wire2_family_of() {
	local req rep req6 rep6
	req=$(re_mpa_count "$1" req)
	rep=$(re_mpa_count "$1" rep)
	req6=$(re_mpa_count "$1" req_v6)
	rep6=$(re_mpa_count "$1" rep_v6)
	[ "${req:-0}" -gt 0 ] || fail "no MPA Request seen ($1)"
	if [ "$family" = 6 ]; then
		assert_eq "$req6/$rep6" "$req/$rep" "MPA Requests/Replies over IPv6"
	else
		assert_eq "$req6/$rep6" "0/0" "MPA Requests/Replies over IPv6 (of $req/$rep)"
	fi
}

# The MPA revision of every Request on the wire, for --rev.
wire2_mpa_rev() { wire2_mpa_rev_of "$mpa_counts"; }
wire2_mpa_rev_of() {
	local req v1
	req=$(re_mpa_count "$1" req)
	v1=$(re_mpa_count "$1" req_v1)
	case "$rev" in
	1) assert_eq "$v1" "$req" "MPA Requests of revision 1 (of $req)" ;;
	2) assert_eq "$v1" 0 "MPA Requests of revision 1 (of $req)" ;;
	esac
}

"run_${side}_$load"

step "no connection failed during the run"
assert_eq "$(conn_failures)" "$fail0" "connection failures the ULP logged"

step "the wire back to plain"
[ -z "$netem" ] || check tc qdisc del dev "$RSW_NETDEV" root
step "detach $DEV, unload"
re_detach "$me"
re_unload_all
step "the kernel log is clean"
dmesg_clean
case "$side$load" in bnvmeof|bsrp) bio_summaries ;; esac
barrier finished "$BAR_S"
echo "PASS: $T_NAME $CONFIG on $RSW_VM ($RSW_KERNEL, $(uname -r))"
