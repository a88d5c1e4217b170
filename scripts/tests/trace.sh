#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# rdmap_sw's tracepoints (Documentation/admin.rst, "Tracepoints") read as
# an administrator does, through tracefs, during workloads whose events
# are known.
#
#   scripts/build 6.12 && scripts/rdma-core &&
#   scripts/vm --kernel 6.12 --mem 2048 -- scripts/tests/trace.sh
#
#   rsw0 (rdmap_sw) --- dummy0 192.0.2.1/24; both ends in this guest
#
# 1. The seven rdmap_sw events exist; they alone are enabled.
# 2. rping -C N -S 1000 -V on rsw0 (its two QPs sampled from `rdma res
#    show qp` while it runs), then from the trace: every event fired;
#    FPDUs sent and received match QP for QP, at least the 7N rping's
#    messages need, equal to the tx_fpdus/rx_fpdus counters; every FPDU's
#    fields are consistent (opcode an RDMAP one, model and queue of that
#    opcode, length from a bare header to S plus a header); the QPNs are
#    the two rdma res showed; each QP's state changes chain, each one
#    legal (qp.c rsw_qp_legal), idle -> rts -> ... -> error; each CEP's
#    chain, every one ending closed, its ports once known the same at every
#    change, the two connection ends through connected to closed with the
#    connection's ports at close; doorbells
#    of those QPs, bounded; no rping payload in the trace.  trace-cmd, when
#    installed, reads the same buffer and finds the same FPDU counts.
# 3. qp-access (a Write to a QP without remote write, a Read from one
#    without remote read): exactly two Terminates sent and two received,
#    with the causes rx.c decides (DDP tagged buffer, STag not associated;
#    RDMAP remote protection, access rights), each received by the peer
#    QP of the one that sent it.
# The events are disabled and the buffer cleared on exit, whatever happens.
# shellcheck source=scripts/tests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=scripts/tests/rdma-env.sh
. "$(dirname "$0")/rdma-env.sh"

: "${RSW_OUT:?run me through scripts/vm}"
DEV=rsw0 NETDEV=dummy0 IP=192.0.2.1 PORT=7611
N=200 S=1000
if [ "${RSW_KERNEL:-}" = debug ]; then
	T_CMD_TIMEOUT=240
	N=100
fi
EVENTS="rsw_fpdu_tx rsw_fpdu_rx rsw_term_tx rsw_term_rx rsw_cm_state rsw_qp_state rsw_doorbell"
LOGS=$RSW_RUN/trace
mkdir -p "$LOGS"
rdma_core_use rping qp-access
t_banner

TR=
OLD_KB=
trace_off() {
	[ -n "$TR" ] && [ -w "$TR/events/rdmap_sw/enable" ] || return 0
	echo 0 >"$TR/events/rdmap_sw/enable" || true
	: >"$TR/trace" || true
	[ -z "$OLD_KB" ] || echo "$OLD_KB" >"$TR/buffer_size_kb" || true
}
trap trace_off EXIT

# trace_on: the rdmap_sw events alone, into an empty buffer.
trace_on() {
	echo nop >"$TR/current_tracer"
	# set_event opened for writing without append starts from no event.
	echo 'rdmap_sw:*' >"$TR/set_event"
	echo 1 >"$TR/tracing_on"
	: >"$TR/trace"
	assert_eq "$(sort "$TR/set_event" | tr '\n' ' ')" \
		"$(for ev in $EVENTS; do echo "rdmap_sw:$ev"; done | sort | tr '\n' ' ')" \
		"enabled events (set_event)"
}

# tp_count FILE EVENT: lines of EVENT in trace text FILE.
tp_count() { grep -c " $2: " "$1" || true; }

# tp_fields FILE EVENT: EVENT's lines of FILE as "key=value ..." only
# (what follows "EVENT: "; the CM and QP "a -> b" become old= new=).
tp_fields() {
	sed -n "s/.* $2: //p" "$1" | sed -E 's/ ([a-z_]+) -> ([a-z_]+)$/ old=\1 new=\2/'
}

# excerpt FILE: the first lines of each event, for the log.
excerpt() {
	local ev
	for ev in $EVENTS; do
		grep -m 3 " $ev: " "$1" | sed -E 's/^ +//' | indent || true
	done
}

# stat_of DEV NAME: counter NAME of DEV's port from `rdma statistic`.
stat_of() {
	rdma statistic show link "$1/1" | awk -v n="$2" \
		'BEGIN { RS = "[ \t\n]+" } $0 == n { getline; print; f = 1; exit } END { exit !f }'
}

listening() { rdma res show cm_id | grep -Eq "state LISTEN .*src-addr [^ ]*:$1( |$)"; }

# qps_seen FILE: `rdma res show qp` of DEV lists two rping QPs; their
# numbers into FILE.
qps_seen() {
	rdma res show qp link "$DEV/1" | grep -w rping |
		sed -nE 's/.* lqpn ([0-9]+) .*/\1/p' | sort -u >"$1.new"
	[ "$(wc -l <"$1.new")" = 2 ] && mv "$1.new" "$1"
}

rsw_dummy_up "$DEV" "$NETDEV" "$IP/24"

step "1. tracefs: the rdmap_sw events, only them enabled"
TR=/sys/kernel/tracing
[ -e "$TR/events" ] || check mount -t tracefs nodev "$TR"
for ev in $EVENTS; do
	[ -e "$TR/events/rdmap_sw/$ev/format" ] || fail "no event rdmap_sw:$ev"
done
have=$(cd "$TR/events/rdmap_sw" && find . -mindepth 1 -maxdepth 1 -type d | wc -l)
assert_eq "$have" 7 "rdmap_sw events"
OLD_KB=$(<"$TR/buffer_size_kb")
OLD_KB=${OLD_KB%% *}
echo 8192 >"$TR/buffer_size_kb"
trace_on

step "2. rping -C $N -S $S -V on $DEV, traced"
tx0=$(stat_of "$DEV" tx_fpdus) rx0=$(stat_of "$DEV" rx_fpdus)
BG_TIMEOUT=$((T_CMD_TIMEOUT + 30))
bg srv "$B/rping" -s -a "$IP" -p "$PORT" -V -S "$S" -C "$N"
poll_until 20 "rping server on $PORT" listening "$PORT"
bg cli "$B/rping" -c -a "$IP" -p "$PORT" -V -S "$S" -C "$N"
poll_until 60 "two rping QPs in rdma res show qp" qps_seen "$LOGS/qpns"
wait "${PIDS[cli]}" || { cat "$LOGS/cli"; fail "rping client failed"; }
wait "${PIDS[srv]}" || { cat "$LOGS/srv"; fail "rping server failed"; }
ok "rping: $N pings verified; QPs $(tr '\n' ' ' <"$LOGS/qpns")"
poll_until 20 "no rping QP left" eval "! rdma res show qp link $DEV/1 | grep -qw rping"
tx1=$(stat_of "$DEV" tx_fpdus) rx1=$(stat_of "$DEV" rx_fpdus)
T1=$LOGS/rping.trace
cp "$TR/trace" "$T1"
# Entries lost to a full buffer would make every count below wrong.
lost=$(cat "$TR"/per_cpu/cpu*/stats | awk '/^overrun:/ { s += $2 } END { print s + 0 }')
assert_eq "$lost" 0 "trace entries overwritten"
note "excerpt ($(wc -l <"$T1") lines):"
excerpt "$T1"
for ev in rsw_fpdu_tx rsw_fpdu_rx rsw_cm_state rsw_qp_state rsw_doorbell; do
	c=$(tp_count "$T1" "$ev")
	[ "$c" -gt 0 ] || fail "$ev never fired"
	ok "$ev fired $c times"
done
assert_eq "$(tp_count "$T1" rsw_term_tx)/$(tp_count "$T1" rsw_term_rx)" 0/0 \
	"Terminates in an rping"

# fpdu_check QPNS DIR: DIR's (tx|rx) FPDU lines of $T1 checked field by
# field; prints "QPN count" per QP, or "bad: why" lines.
fpdu_check() {
	tp_fields "$T1" "rsw_fpdu_$2" | awk -v qpns="$(tr '\n' ' ' <"$1")" -v s="$S" '
	BEGIN {
		split(qpns, q, " "); for (i in q) ok_qp[q[i]] = 1
		# RDMAP opcode: DDP model (1 tagged) and queue of the untagged.
		split("write read_resp", t, " "); for (i in t) tagged[t[i]] = 1
		split("send send_inv send_se send_se_inv imm_data imm_data_se", u, " ")
		for (i in u) qn[u[i]] = 0
		qn["read_req"] = 1; qn["terminate"] = 2; qn["atomic_req"] = 1
		qn["atomic_resp"] = 3
	}
	function bad(why) { print "bad: " why ": " $0; nbad++ }
	{
		delete f
		for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
		if (!(f["qp"] in ok_qp)) bad("QP not one rdma res showed")
		if (!(f["op"] in tagged) && !(f["op"] in qn)) bad("not an RDMAP opcode")
		else if (f["tagged"] + 0 != ((f["op"] in tagged) ? 1 : 0)) bad("model of the opcode")
		else if (f["tagged"] + 0 == 0 && f["qn"] + 0 != qn[f["op"]]) bad("queue of the opcode")
		if (f["op"] == "terminate") bad("a Terminate in an rping")
		if (f["last"] != "0" && f["last"] != "1") bad("L flag")
		# A bare DDP header is 14 octets; the largest rping FPDU is a
		# Read Response or Write of S octets.
		if (f["len"] + 0 < 14 || f["len"] + 0 > s + 14) bad("length")
		n[f["qp"]]++
	}
	END { for (p in n) print p, n[p]; exit nbad > 0 }'
}

fpdu_check "$LOGS/qpns" tx >"$LOGS/tx.count" || { indent <"$LOGS/tx.count"; fail "FPDUs sent"; }
fpdu_check "$LOGS/qpns" rx >"$LOGS/rx.count" || { indent <"$LOGS/rx.count"; fail "FPDUs received"; }
ok "every FPDU's fields consistent, of the two rping QPs"
read -r qa qb <<<"$(tr '\n' ' ' <"$LOGS/qpns")"
cnt() { awk -v q="$2" '$1 == q { print $2; f = 1 } END { if (!f) print 0 }' "$LOGS/$1.count"; }
assert_eq "$(cnt tx "$qa")" "$(cnt rx "$qb")" "QP $qa sent = QP $qb received"
assert_eq "$(cnt tx "$qb")" "$(cnt rx "$qa")" "QP $qb sent = QP $qa received"
tx=$(tp_count "$T1" rsw_fpdu_tx) rx=$(tp_count "$T1" rsw_fpdu_rx)
assert_eq "$tx" "$((tx1 - tx0))" "FPDUs traced as sent = tx_fpdus counter"
assert_eq "$rx" "$((rx1 - rx0))" "FPDUs traced as received = rx_fpdus counter"
# Per ping 3 FPDUs from the client, 4 from the server (stats.sh, each
# message one FPDU), plus at most the RFC 6581 RTR and its Read Response.
lo=$(sort -n -k2 "$LOGS/tx.count" | head -n 1 | cut -d' ' -f2)
hi=$(sort -n -k2 "$LOGS/tx.count" | tail -n 1 | cut -d' ' -f2)
if [ "$lo" -lt $((3 * N)) ] || [ "$lo" -gt $((3 * N + 1)) ] ||
	[ "$hi" -lt $((4 * N)) ] || [ "$hi" -gt $((4 * N + 1)) ]; then
	fail "FPDUs sent per QP: $lo and $hi, want 3N..3N+1 and 4N..4N+1 (N=$N)"
fi
ok "FPDUs sent per QP: $lo (client) and $hi (server), N=$N"

# chains EVENT KEY FIRST LEGAL: EVENT's state changes, per object KEY, each
# from the state the previous one reached (FIRST before the first) and
# each "old>new" among LEGAL; prints "object state>state>... ports" per
# object (ports "lport:rport" of its last change, CM only) or "bad: why"
# lines.  Ports, once both are known, must stay those of every later
# change (cm.c keeps them after the socket has gone).
chains() {
	tp_fields "$T1" "$1" | awk -v key="$2" -v first="$3" -v legal="$4" '
	BEGIN { split(legal, l, " "); for (i in l) ok_move[l[i]] = 1 }
	function bad(why) { print "bad: " why ": " $0; nbad++ }
	{
		delete f
		for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
		k = f[key]
		if (!(k in at)) { at[k] = first; path[k] = first; order[++n] = k }
		if (f["old"] != at[k]) bad("from " f["old"] ", but " k " was " at[k])
		if (!((f["old"] ">" f["new"]) in ok_move)) bad("illegal move")
		at[k] = f["new"]; path[k] = path[k] ">" f["new"]
		if (f["lport"] == "") next
		p = f["lport"] ":" f["rport"]
		if ((k in known) && p != known[k]) bad("ports " p ", were " known[k])
		if (!(k in known) && f["lport"] + 0 && f["rport"] + 0) known[k] = p
		ports[k] = p
	}
	END {
		for (i = 1; i <= n; i++) print order[i], path[order[i]], ports[order[i]]
		exit nbad > 0
	}'
}

# The moves qp.c allows (rsw_qp_legal), changes only.
QP_LEGAL="idle>rts idle>error rts>closing rts>terminate rts>error closing>idle
	closing>terminate closing>error terminate>error error>idle"
chains rsw_qp_state qp idle "$QP_LEGAL" >"$LOGS/qp.chains" ||
	{ indent <"$LOGS/qp.chains"; fail "QP state changes"; }
indent <"$LOGS/qp.chains"
for q in $qa $qb; do
	grep -Eq "^$q idle>rts(>[a-z]+)*>error *\$" "$LOGS/qp.chains" ||
		fail "QP $q: not idle -> rts -> ... -> error"
done
assert_eq "$(wc -l <"$LOGS/qp.chains")" 2 "QPs with state changes"
ok "QP states: each change legal and chained, idle -> rts -> ... -> error"

# cm.c's machine; "none" is a CEP's first state's predecessor.
CM_LEGAL="none>listening none>connecting none>await_request listening>closed
	connecting>await_reply connecting>closed await_reply>connected
	await_reply>closed await_request>req_rcvd await_request>closed
	req_rcvd>connected req_rcvd>closed connected>closed"
chains rsw_cm_state cep none "$CM_LEGAL" >"$LOGS/cm.chains" ||
	{ indent <"$LOGS/cm.chains"; fail "CM state changes"; }
indent <"$LOGS/cm.chains"
grep -Eq "^[0-9]+ none>listening>closed $PORT:0\$" "$LOGS/cm.chains" ||
	fail "no listener on $PORT opened and closed"
# Every CEP traced is traced closed (also one whose listen or connect failed).
open=$(awk '$2 !~ />closed$/' "$LOGS/cm.chains")
[ -z "$open" ] || { indent <<<"$open"; fail "CEPs whose trace does not end closed"; }
ok "every CEP's trace ends closed ($(wc -l <"$LOGS/cm.chains") CEPs)"
# The two ends of the connection, ports crossed, rping's port on one: the
# ports of their "-> closed" change, after the socket went to the QP.
a=$(awk -v p="$PORT" '$2 == "none>connecting>await_reply>connected>closed" &&
	$3 ~ (":" p "$") { print $3 }' "$LOGS/cm.chains")
b=$(awk -v p="$PORT" '$2 == "none>await_request>req_rcvd>connected>closed" &&
	$3 ~ ("^" p ":") { print $3 }' "$LOGS/cm.chains")
if [ -z "$a" ] || [ "$a" != "$(awk -F: '{ print $2 ":" $1 }' <<<"$b")" ]; then
	fail "CM: no initiator and responder of one connection through connected to closed"
fi
ok "CM states: listener, initiator ($a) and responder ($b) through connected to closed"

# Doorbells: the provider rings at most once per post (stats.sh: 4N+1 at
# the client, 6N+1 at the server), on the two QPs' SQ or RQ, and the
# entries pending are what a ring of rping's depth can hold.
tp_fields "$T1" rsw_doorbell | awk -v qpns="$(tr '\n' ' ' <"$LOGS/qpns")" '
	BEGIN { split(qpns, q, " "); for (i in q) ok_qp[q[i]] = 1 }
	{
		delete f
		for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
		if (!(f["qp"] in ok_qp) || (f["ring"] != "sq" && f["ring"] != "rq") ||
		    f["pending"] + 0 > 64) { print "bad: " $0; nbad++ }
	}
	END { exit nbad > 0 }' >"$LOGS/db.bad" || { indent <"$LOGS/db.bad"; fail "doorbell fields"; }
db=$(tp_count "$T1" rsw_doorbell)
if [ "$db" -lt 1 ] || [ "$db" -gt $((10 * N + 2)) ]; then
	fail "doorbells: $db, want 1..$((10 * N + 2))"
fi
ok "doorbells: $db (1..$((10 * N + 2))), of the two QPs, at most 64 pending"
# rping -V's payload is "rdma-ping-<n>: " and a run of the alphabet.
assert_eq "$(grep -cE 'rdma-ping|ABCDEFGH|bcdefgh' "$T1" || true)" 0 "rping payload in the trace"

step "2b. trace-cmd reads the same buffer"
if ! command -v trace-cmd >/dev/null; then
	skip "trace-cmd is not installed (scripts/setup installs it)"
else
	check trace-cmd extract -o "$LOGS/rping.dat"
	T_OUT=$(trace-cmd report -i "$LOGS/rping.dat" 2>"$LOGS/report.err") ||
		{ cat "$LOGS/report.err"; fail "trace-cmd report"; }
	printf '%s\n' "$T_OUT" >"$LOGS/rping.report"
	assert_eq "$(tp_count "$LOGS/rping.report" rsw_fpdu_tx)/$(tp_count "$LOGS/rping.report" rsw_fpdu_rx)" \
		"$tx/$rx" "FPDUs sent/received in trace-cmd report"
	assert_match "$(grep -m 1 ' rsw_qp_state: ' "$LOGS/rping.report")" 'idle -> rts' \
		"trace-cmd names the QP states"
	grep -m 2 ' rsw_fpdu_tx: ' "$LOGS/rping.report" | sed -E 's/^ +//' | indent
fi

step "3. qp-access: Terminates for a Write and a Read the QP does not allow"
# After trace-cmd extract nothing more is recorded: on again, as in step 1.
trace_on
check "$RSW_RDMA_PROVIDER_BUILD/qp-access" "$IP" $((PORT + 1))
assert_no_match "$T_OUT" '^not ok' "qp-access checks"
T1=$LOGS/term.trace
cp "$TR/trace" "$T1"
note "excerpt:"
{ grep -E ' rsw_(term_tx|term_rx): ' "$T1" || true; } | sed -E 's/^ +//' | indent
assert_eq "$(tp_count "$T1" rsw_term_tx)/$(tp_count "$T1" rsw_term_rx)" 2/2 \
	"Terminates sent/received"
# Both causes, each sent by one QP and received by another.
WR_CAUSE="layer=ddp etype=0x1 ecode=0x02" RD_CAUSE="layer=rdmap etype=0x1 ecode=0x02"
for cause in "$WR_CAUSE" "$RD_CAUSE"; do
	s=$(tp_fields "$T1" rsw_term_tx | sed -n "s/^qp=\([0-9]*\) $cause\$/\1/p")
	r=$(tp_fields "$T1" rsw_term_rx | sed -n "s/^qp=\([0-9]*\) $cause\$/\1/p")
	if [ -z "$s" ] || [ -z "$r" ] || [ "$s" = "$r" ]; then
		fail "Terminate '$cause': sent by QP '$s', received by QP '$r'"
	fi
	ok "Terminate $cause: sent by QP $s, received by QP $r"
done
assert_eq "$(tp_fields "$T1" rsw_fpdu_tx | grep -c ' op=terminate ' || true)" 2 \
	"Terminate FPDUs sent"
assert_eq "$(tp_fields "$T1" rsw_fpdu_rx | grep -c ' op=terminate ' || true)" 2 \
	"Terminate FPDUs received"

step "4. events off, buffer cleared"
trace_off
trap - EXIT
assert_eq "$(<"$TR/events/rdmap_sw/enable")" 0 "rdmap_sw events enabled"
assert_eq "$(grep -vc '^#' "$TR/trace" || true)" 0 "trace lines left"

rsw_dummy_down "$DEV" "$NETDEV"
echo "PASS: $T_NAME on ${RSW_KERNEL:-?} ($(uname -r))"
