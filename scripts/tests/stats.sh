#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# rdmap_sw's counters (Documentation/admin.rst, "Counters") read as an
# administrator does, with `rdma statistic show link DEV/1` and the port's
# hw_counters in sysfs, before and after workloads whose counts are known.
#
#   scripts/build 6.12 && scripts/rdma-core &&
#   scripts/vm --kernel 6.12 --mem 2048 -- scripts/tests/stats.sh
#
#   dummy0 10.79.0.1 + rsw0: rping server  (responder)
#   dummy1 10.79.0.2 + rsw1: rping client, -I  (initiator)
#   the two local addresses talk over lo; each device counts its own end.
#
# 1. Both views list the same counters with the same values, and devices
#    nobody uses count nothing.
# 2. rping -C N -S 1000: every message counted exactly, per device and
#    direction (RFC 6581's RTR as the type it was, from the RTR counters);
#    each message is one FPDU (1000 octets are far below lo's MSS), what
#    one end sent the other received, FPDU for FPDU and octet for octet;
#    MPA outcomes, no refused input, no Terminate, no kernel post.
# 3. rping -C N -S 60000 with MPA CRC off: Read Responses of 60000 octets,
#    spliced (zero copy, kernels from 6.5) since there is no CRC, exactly
#    their payload; the FPDU count depends on TCP's MSS, so it is bounded
#    (see there); octets still match exactly.
# 4. An rping to a port nobody listens on: one TCP connect failure at the
#    initiator, nothing else.
# 5. Per-QP counters (`rdma statistic qp`): two connections A and B
#    (qpstats-peer.py, pyverbs), rsw0 the responder of both; rsw0's QP
#    of A bound to a new counter once both RTRs are in.  A exchanges 20
#    Sends each way, B 30 at the same time: the counter has exactly A's
#    (none of B's), the link totals exactly both (none twice).  Binding
#    A again, or a QPN nobody has, fails.  Unbound, the counter is gone
#    and the link totals keep its counts; then A's traffic counts on the
#    link.  Bound again, A's QP destroyed while bound: the counter goes
#    and the link totals keep what it had.
# shellcheck source=scripts/tests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=scripts/tests/rdma-env.sh
. "$(dirname "$0")/rdma-env.sh"

: "${RSW_OUT:?run me through scripts/vm}"
SRV=10.79.0.1 CLI=10.79.0.2
IB=/sys/class/infiniband
T_CMD_TIMEOUT=180
LOGS=$RSW_RUN/stats
mkdir -p "$LOGS"
rdma_core_use rping
t_banner

listening() { ss -Hltn "sport = :$1" | grep -q .; }

# snap FILE DEV: DEV's port counters from `rdma statistic`, "name value"
# per line.  It prints "link DEV/1 name value name value ...", on one
# line or (pretty) several: read as one stream of words.
snap() {
	local out
	out=$(rdma statistic show link "$2/1") || fail "rdma statistic show link $2/1"
	awk -v want="$2/1" 'BEGIN { RS = "[ \t\n]+" } NF { w[++n] = $0 }
		END { for (i = 1; i < n; i++) if (w[i] == "link" && w[i + 1] == want) {
			for (j = i + 2; j < n && w[j] != "link"; j += 2) print w[j], w[j + 1]
			exit } }' <<<"$out" >"$1"
	[ -s "$1" ] || fail "no counters for $2/1 in: $out"
}

# val FILE NAME: counter NAME in snapshot FILE; fails if it is missing.
val() {
	local v
	v=$(awk -v n="$2" '$1 == n { print $2; f = 1 } END { exit !f }' "$1") ||
		fail "no counter $2 in $1"
	echo "$v"
}

# begin TAG / finish TAG: snapshots of both devices around a workload;
# d DEV NAME: the counter's growth in between.  deltas DEV works out
# every growth of DEV at once (finish does it for both devices): a check
# then forks no awk, which the emulated guest does slowly.
declare -A DELTA
begin() { TAG=$1; snap "$LOGS/$TAG.rsw0.0" rsw0; snap "$LOGS/$TAG.rsw1.0" rsw1; }
finish() {
	snap "$LOGS/$TAG.rsw0.1" rsw0
	snap "$LOGS/$TAG.rsw1.1" rsw1
	deltas rsw0
	deltas rsw1
}
deltas() {
	local n a b
	DELTA[$TAG.$1]=1
	while read -r n a b; do
		DELTA[$TAG.$1/$n]=$((b - a))
	done <<<"$(awk 'NR == FNR { v[$1] = $2; next } ($1 in v) { print $1, v[$1], $2 }' \
		"$LOGS/$TAG.$1.0" "$LOGS/$TAG.$1.1")"
}
d() {
	if [ -n "${DELTA[$TAG.$1]:-}" ] && [ -n "${DELTA[$TAG.$1/$2]:-}" ]; then
		echo "${DELTA[$TAG.$1/$2]}"
		return
	fi
	echo $(($(val "$LOGS/$TAG.$1.1" "$2") - $(val "$LOGS/$TAG.$1.0" "$2")))
}

# eq DEV NAME WANT / range DEV NAME LO HI: assertions on d.
eq() { assert_eq "$(d "$1" "$2")" "$3" "$1 $2"; }
range() {
	local v
	v=$(d "$1" "$2")
	if [ "$v" -lt "$3" ] || [ "$v" -gt "$4" ]; then
		fail "$1 $2: got $v, want $3..$4"
	fi
	ok "$1 $2 = $v (in $3..$4)"
}

# zero DEV PATTERN: every counter whose name matches PATTERN stayed.
zero() {
	local n _ v
	while read -r n _; do
		[[ $n =~ $2 ]] || continue
		v=${DELTA[$TAG.$1/$n]:-}
		[ -n "$v" ] || v=$(d "$1" "$n")
		[ "$v" = 0 ] || fail "$1 $n: grew by $v"
	done <"$LOGS/$TAG.$1.1"
	ok "$1: every counter /$2/ unchanged"
}

# same_views DEV: sysfs hw_counters and `rdma statistic` agree (the
# devices are idle, so no counter moves between the two reads).
same_views() {
	local f=$LOGS/views.$1 n v c=0
	snap "$f" "$1"
	while read -r n v; do
		assert_file_quiet "$IB/$1/ports/1/hw_counters/$n" "$v"
		c=$((c + 1))
	done <"$f"
	[ "$(find "$IB/$1/ports/1/hw_counters" -mindepth 1 -maxdepth 1 \
		! -name lifespan | wc -l)" = "$c" ] ||
		fail "$1: sysfs has other counters than rdma statistic's $c"
	ok "$1: $c counters, the same in sysfs and rdma statistic"
}
assert_file_quiet() {
	[ "$(<"$1")" = "$2" ] || fail "$1: '$(<"$1")', rdma statistic said '$2'"
}

# ping_run PORT SIZE COUNT: a verified rping from rsw1 to rsw0.
ping_run() {
	bg "srv.$1" "$B/rping" -s -a "$SRV" -p "$1" -V -S "$2" -C "$3"
	poll_until 20 "rping server on $1" listening "$1"
	check "$B/rping" -c -I "$CLI" -a "$SRV" -p "$1" -V -S "$2" -C "$3"
	wait "${PIDS[srv.$1]}" || { cat "$LOGS/srv.$1"; fail "rping server on $1 failed"; }
}

# rtr DEV DIR TYPE: the growth of DEV's DIR (tx|rx) RTR counter of TYPE.
rtr() { d "$1" "$2_rtr_$3"; }

# The counters both ends agree on, and what no rping may cause.
cross_checks() {
	local a b
	for a in rsw0 rsw1; do
		b=$([ "$a" = rsw0 ] && echo rsw1 || echo rsw0)
		assert_eq "$(d "$a" tx_fpdus)" "$(d "$b" rx_fpdus)" "$a tx_fpdus = $b rx_fpdus"
		assert_eq "$(d "$a" tx_octets)" "$(d "$b" rx_octets)" "$a tx_octets = $b rx_octets"
		assert_eq "$(d "$a" tx_octets)" \
			"$(($(d "$a" tx_zcopy_octets) + $(d "$a" tx_copied_octets)))" \
			"$a tx_octets = zero-copy + copied"
		zero "$a" '^rx_err_'
		zero "$a" '^(tx|rx)_terms'
		zero "$a" '^mpa_(closed|truncated|bad|key|pd|enhanced|low|no|crc|timeouts|tcp|req|reply|net|rej)'
		zero "$a" '^kern_'
		range "$a" work_runs 1 1000000
	done
	eq rsw1 mpa_connected 1
	eq rsw0 mpa_accepted 1
	eq rsw0 mpa_connected 0
	eq rsw1 mpa_accepted 0
}

# messages N: rping's N pings, each: client Send (its buffer), server
# Read of it, server Send, client Send (its sink), server Write, server
# Send; plus the RTR, which is a Write, Read Request (with its Read
# Response) or Send on the wire.
messages() {
	local n=$1 w r s
	w=$(rtr rsw1 tx write) r=$(rtr rsw1 tx read) s=$(rtr rsw1 tx send)
	assert_eq "$((w + r + s))" "$P2P" "RTRs sent by the initiator"
	assert_eq "$(rtr rsw0 rx write)/$(rtr rsw0 rx read)/$(rtr rsw0 rx send)" \
		"$w/$r/$s" "RTRs received by the responder (write/read/send)"
	zero rsw0 '^tx_rtr_'
	zero rsw1 '^rx_rtr_'
	eq rsw1 tx_sends $((2 * n + s))
	eq rsw0 rx_sends $((2 * n + s))
	eq rsw0 tx_sends $((2 * n))
	eq rsw1 rx_sends $((2 * n))
	eq rsw0 tx_read_reqs "$n"
	eq rsw1 rx_read_reqs "$n"
	eq rsw1 tx_read_reqs "$r"
	eq rsw0 rx_read_reqs "$r"
	eq rsw1 tx_read_resps "$n"
	eq rsw0 rx_read_resps "$n"
	eq rsw0 tx_read_resps "$r"
	eq rsw1 rx_read_resps "$r"
	eq rsw0 tx_writes "$n"
	eq rsw1 rx_writes "$n"
	eq rsw1 tx_writes "$w"
	eq rsw0 rx_writes "$w"
	zero rsw0 '^(tx|rx)_(imm|atomic)_'
	zero rsw1 '^(tx|rx)_(imm|atomic)_'
	# The provider rings the doorbell at most once per post (fewer while
	# the kernel is still looking at the queue): client 2N Sends and
	# 2N+1 receives, server 4N work requests and 2N+1 receives.
	range rsw1 user_doorbells 1 $((4 * n + 1))
	range rsw0 user_doorbells 1 $((6 * n + 1))
}

step "RDMA core, rdmap_sw, rsw0 on dummy0 and rsw1 on dummy1"
re_rsw_two_up "$SRV" "$CLI"
# An RTR (RFC 6581) goes only with the peer-to-peer model on both.
P2P=$(($(<$IB/rsw0/peer_to_peer) & $(<$IB/rsw1/peer_to_peer)))
note "peer-to-peer model: $P2P"

step "1. the two views agree; idle devices count nothing"
begin idle
same_views rsw0
same_views rsw1
finish
zero rsw0 .
zero rsw1 .
for n in tx_fpdus rx_fpdus tx_sends rx_err_mpa_crc mpa_accepted user_doorbells; do
	val "$LOGS/idle.rsw0.1" "$n" >/dev/null
done
ok "the counters admin.rst names are there"

N=20
step "2. rping -C $N -S 1000: exact counts"
begin small
ping_run 7501 1000 "$N"
finish
messages "$N"
cross_checks
# One FPDU per message: the largest, a 1000-octet Read Response, is far
# below the MULPDU of a loopback connection (MSS near 64 KiB).
eq rsw1 tx_fpdus $((3 * N + P2P))
eq rsw0 tx_fpdus $((4 * N + $(rtr rsw0 rx read)))
range rsw1 tx_octets $((N * 1000)) $((N * 1000 + (3 * N + 1) * 100))
same_views rsw0
same_views rsw1

N=5 S=60000
step "3. rping -C $N -S $S, MPA CRC off: zero copy, bounded FPDUs"
re_rsw_set rsw0 mpa_crc off
re_rsw_set rsw1 mpa_crc off
begin large
ping_run 7502 "$S" "$N"
finish
messages "$N"
cross_checks
# A Read Response of S octets is at least one FPDU and at most one per
# 536 - 40 octets: the TX engine never sizes FPDUs for an MSS below 536
# (RSW_TX_MSS_MIN), whatever TCP's MSS is (near 64 KiB on lo, but it is
# TCP's to choose); every other rping message fits one FPDU.
range rsw1 tx_fpdus $((3 * N + P2P)) $((2 * N + P2P + N * (S / 496 + 1)))
# The server's Writes (strlen + 1 of the echoed buffer, S octets) split
# alike: at least one FPDU each, at most one per 496 octets.
range rsw0 tx_fpdus $((4 * N)) $((3 * N + N * (S / 496 + 1) + $(rtr rsw0 rx read)))
# Without CRC every Read Response from a user MR named by its own STag
# (rping's) goes by page reference, its payload only (tx.h): exactly
# N*S octets; headers, the server's Write and all Sends are copied.
# Kernels before 6.5 have no MSG_SPLICE_PAGES and copy everything
# (compat.h, rsw_have_splice_pages()).
if [ "$(printf '%s\n' 6.5 "$(uname -r | cut -d- -f1)" | sort -V | head -n 1)" = 6.5 ]; then
	eq rsw1 tx_zcopy_octets $((N * S))
else
	note "kernel $(uname -r) has no MSG_SPLICE_PAGES: no zero copy"
	eq rsw1 tx_zcopy_octets 0
fi
eq rsw0 tx_zcopy_octets 0
re_rsw_set rsw0 mpa_crc on
re_rsw_set rsw1 mpa_crc on

step "4. nobody listens: one TCP connect failure at the initiator"
begin refused
check_fails "$B/rping" -c -I "$CLI" -a "$SRV" -p 7503 -C 1
finish
eq rsw1 mpa_tcp_fails 1
zero rsw1 '^mpa_(closed|truncated|bad|key|pd|enhanced|low|no|crc|timeouts|req|reply|net|rej|connected)'
zero rsw0 .

N_A=20 N_B=30
step "5. per-QP counters: A ($N_A Sends each way) bound, B ($N_B) not"
command -v jq >/dev/null || fail "jq is not installed (run scripts/setup)"
export PYTHONPATH=$RSW_RDMA_BUILD/python
PEER=$(dirname "$0")/qpstats-peer.py
FIFOS=$(mktemp -d)
check mkfifo "$FIFOS/srv" "$FIFOS/cli"

# qp_json: rsw0/1's counters, `rdma -j statistic qp show`, to qp.json.
qp_json() {
	rdma -j statistic qp show link rsw0/1 >"$LOGS/qp.json" ||
		fail "rdma statistic qp show link rsw0/1"
}
# cntn_of QPN: the counter QPN is bound to (none: nothing).
cntn_of() {
	qp_json
	jq -r --argjson q "$1" '.[] | select((.lqpn // []) | index($q)) | .cntn' \
		"$LOGS/qp.json"
}
# cnt_snap FILE CNTN: counter CNTN, "name value" per line as snap writes.
cnt_snap() {
	qp_json
	jq -r --argjson c "$2" '.[] | select(.cntn == $c) | to_entries[] |
		select(.key | test("^(ifindex|port|cntn|pid)$") | not) |
		select(.value | type == "number") | "\(.key) \(.value)"' \
		"$LOGS/qp.json" >"$1"
	[ -s "$1" ] || fail "no counter $2 on rsw0/1: $(<"$LOGS/qp.json")"
}
no_counters() {
	qp_json
	assert_eq "$(jq length "$LOGS/qp.json")" 0 "counters on rsw0/1"
}
# said WHO WORD...: peer WHO printed the line "WORD...".
said() { grep -qx -- "${*:2}" "$LOGS/peer.$1"; }
# tell LINE: write LINE to both peers (a FIFO write waits for its reader).
tell() {
	local w
	for w in srv cli; do
		# shellcheck disable=SC2016 # the inner shell's $1 and $2
		timeout 60 sh -c 'echo "$1" >"$2"' - "$1" "$FIFOS/$w" ||
			fail "peer.$w did not read '$1': $(<"$LOGS/peer.$w")"
	done
}
# peers LINE REPLY: both peers obey LINE; each prints REPLY when done.
# Each REPLY is new: a peer's log must not have it yet.
peers() {
	local w
	for w in srv cli; do
		! said "$w" "$2" || fail "peer.$w already said '$2'"
	done
	tell "$1"
	poll_until 120 "both peers: $2" eval "said srv $2 && said cli $2"
}
rtrs_in() {
	snap "$LOGS/rtr.now" rsw0
	[ $(($(val "$LOGS/rtr.now" rx_rtr_write) + $(val "$LOGS/rtr.now" rx_rtr_read) +
		$(val "$LOGS/rtr.now" rx_rtr_send) - RTR0)) -eq $((2 * P2P)) ]
}

snap "$LOGS/rtr.0" rsw0
RTR0=$(($(val "$LOGS/rtr.0" rx_rtr_write) + $(val "$LOGS/rtr.0" rx_rtr_read) +
	$(val "$LOGS/rtr.0" rx_rtr_send)))
# Both start at once (python is slow to start); the client retries.
BG_TIMEOUT=300 bg peer.srv python3 "$PEER" server "$SRV" 7511 7512 "$FIFOS/srv"
BG_TIMEOUT=300 bg peer.cli python3 "$PEER" client "$CLI" 7511 7512 "$FIFOS/cli" "$SRV"
poll_until 90 "both connected" eval "said srv ready && said cli ready"
# Bound before its RTR arrived, A's counter would count that too.
poll_until 20 "the RTRs of A and B at rsw0" rtrs_in
QA=$(sed -n 's/^qpn A //p' "$LOGS/peer.srv")
QB=$(sed -n 's/^qpn B //p' "$LOGS/peer.srv")
note "rsw0's QPs: A $QA, B $QB"
no_counters
check rdma statistic qp bind link rsw0/1 lqpn "$QA"
C=$(cntn_of "$QA")
[ -n "$C" ] || fail "QP $QA bound to no counter: $(<"$LOGS/qp.json")"
assert_eq "$(cntn_of "$QB")" "" "B's counter"
check_fails rdma statistic qp bind link rsw0/1 lqpn "$QA"
assert_eq "$(cntn_of "$QA")" "$C" "A's counter after a second bind"
check_fails rdma statistic qp bind link rsw0/1 lqpn 16777215
assert_match "$T_OUT" "No such file" "an unknown QPN (ENOENT)"

begin qpa
cnt_snap "$LOGS/qpa.cnt.0" "$C"
peers "send $N_A $N_B" "done $N_A $N_B"
finish
cnt_snap "$LOGS/qpa.cnt.1" "$C"
deltas cnt
# What an administrator sees (for the log; the checks read the JSON).
check rdma statistic qp show link rsw0/1
for x in tx_sends rx_sends tx_fpdus rx_fpdus; do
	eq cnt "$x" "$N_A"
	eq rsw0 "$x" $((N_A + N_B))
	eq rsw1 "$x" $((N_A + N_B))
done
# Every FPDU has the same length: A's share of the octets is its share
# of the FPDUs, both ways.
assert_eq "$(d cnt tx_octets)" "$(d cnt rx_octets)" "A's octets, sent = received"
assert_eq $(($(d rsw0 tx_octets) * N_A)) $(($(d cnt tx_octets) * (N_A + N_B))) \
	"rsw0 tx_octets * $N_A = A's * $((N_A + N_B))"
assert_eq $(($(d rsw0 rx_octets) * N_A)) $(($(d cnt rx_octets) * (N_A + N_B))) \
	"rsw0 rx_octets * $N_A = A's * $((N_A + N_B))"
assert_eq "$(d cnt tx_octets)" "$(($(d cnt tx_zcopy_octets) + $(d cnt tx_copied_octets)))" \
	"A's tx_octets = zero-copy + copied"
range cnt user_doorbells 1 "$N_A"
# A's doorbells ran its TX engine, inline (tx_direct_runs) or in its
# work item (work_runs), and either counts for A; which one is timing's.
runs=$(($(d cnt work_runs) + $(d cnt tx_direct_runs)))
[ "$runs" -ge 1 ] || fail "cnt: work_runs + tx_direct_runs = $runs, want at least 1"
ok "cnt work_runs + tx_direct_runs = $runs (at least 1)"
zero cnt '^(rx_err_|(tx|rx)_terms|(tx|rx)_rtr_|(tx|rx)_(writes|read|imm|atomic)|mpa_|kern_)'
zero rsw0 '^(rx_err_|(tx|rx)_terms|mpa_|kern_)'

step "5b. unbound: the counter goes, the link keeps its counts"
begin unbind
check rdma statistic qp unbind link rsw0/1 cntn "$C" lqpn "$QA"
no_counters
finish
# The data counters, not work_runs: a write-space kick or the SQ linger
# timer may run an idle QP's work item at any time.
zero rsw0 '^((tx|rx)_(sends|fpdus|octets|writes|read|imm|atomic|terms|rtr)|tx_(zcopy|copied)_|rx_err_|mpa_|kern_|user_doorbells)'
begin after
peers "send 10 0" "done 10 0"
finish
for x in tx_sends rx_sends tx_fpdus rx_fpdus; do
	eq rsw0 "$x" 10
done

step "5c. bound again, A's QP destroyed while bound"
check rdma statistic qp bind link rsw0/1 lqpn "$QA"
C=$(cntn_of "$QA")
[ -n "$C" ] || fail "QP $QA bound to no counter: $(<"$LOGS/qp.json")"
begin gone
cnt_snap "$LOGS/gone.cnt.0" "$C"
peers "send 5 0" "done 5 0"
cnt_snap "$LOGS/gone.cnt.1" "$C"
deltas cnt
eq cnt tx_sends 5
eq cnt rx_sends 5
peers "close A" "closed A"
released() { [ -z "$(cntn_of "$QA")" ]; }
poll_until 20 "A's counter released" released
no_counters
finish
eq rsw0 tx_sends 5
eq rsw0 rx_sends 5
tell quit
wait "${PIDS[peer.srv]}" || fail "the server peer failed: $(<"$LOGS/peer.srv")"
wait "${PIDS[peer.cli]}" || fail "the client peer failed: $(<"$LOGS/peer.cli")"
rm -r "$FIFOS"

step "tear down"
re_rsw_two_down
echo "PASS: $T_NAME on $RSW_KERNEL ($(uname -r))"
