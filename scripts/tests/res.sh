#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# rdmap_sw's driver details in `rdma resource` (Documentation/admin.rst,
# "rdma resource"): `rdma -dd res show qp` and `rdma -dd res show cm_id`
# against connections whose negotiation the test chose.
#
#   scripts/build 6.12 && scripts/rdma-core &&
#   scripts/vm --kernel 6.12 --mem 2048 -- scripts/tests/res.sh
#
#   dummy0 10.81.0.1 + rsw0: rping server   (responder)
#   dummy1 10.81.0.2 + rsw1: rping client, -I   (initiator)
#   the two local addresses talk over lo, where the MPA sniffer of
#   rdma-env.sh sees the Request and Reply; each device shows its own end.
#
# 1. A QP nobody connected (pyverbs creates it and waits) shows the QP's
#    own fields and "stream none", no MPA details, and no error.
# 2. A long verified rping at the defaults (MPA revision 2, CRC, no
#    Markers, peer-to-peer with the responder picking Write): each end's
#    QP (JSON) shows stream run, its role, revision, CRC, Markers per
#    direction, RTR type, IRD/ORD 1/1 (rping asks 1 and 1), a number of
#    octets queued; its connected cm_id shows the same with the QPN of
#    the QP; the listener shows no driver details.  The sniffer confirms
#    revision, C and M bits on the wire.  From another network namespace
#    the same entries show what MPA negotiated but not the socket's state
#    (stream phase, rtr-pending, tcp-queued); nor does a get of one QP
#    (lqpn), for which the driver cannot know who asks.
# 3. The initiator set to MPA revision 1 with Markers, CRC off on both,
#    the responder's peer_ird_ord 16: revision 1, CRC off, Markers only
#    towards the initiator, no RTR, the initiator 1/1, the responder
#    16/16 (what it took for a peer that states none).
# 4. Revision 2, CRC, Markers both ways, the responder preferring the
#    Send RTR: rtr send on both ends.  Then a loop queries QPs and cm_ids
#    (JSON) while this connection is killed and while short rpings
#    connect and tear down, at least RSW_RES_QUERIES times (default 100,
#    as in make check; scripts/stress asks 300 or more): every query
#    succeeds and parses, every entry's driver details are whole.
# 5. The defaults again over IPv6 (fd81::1, fd81::2): the cm_ids, found
#    among the device's streams by their addresses, still show theirs.
#
# The long rpings run at nice 19: they ping as fast as they can, and on a
# two-CPU emulated guest the test's own commands would otherwise queue
# behind them.
# shellcheck source=scripts/tests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=scripts/tests/rdma-env.sh
. "$(dirname "$0")/rdma-env.sh"

: "${RSW_OUT:?run me through scripts/vm}"
SRV=10.81.0.1 CLI=10.81.0.2
RES_QUERIES=${RSW_RES_QUERIES:-100}
OTHER_NS=res-other
T_CMD_TIMEOUT=180
LOGS=$RSW_RUN/res
mkdir -p "$LOGS"
rdma_core_use rping
command -v jq >/dev/null || fail "jq is not installed (run scripts/setup)"
export PYTHONPATH=$RSW_RDMA_BUILD/python
t_banner

listening() { ss -Hltn "sport = :$1" | grep -q .; }
alive() { kill -0 "${PIDS[$1]}" 2>/dev/null; }
pings() { grep -c 'ping data' "$LOGS/$1" 2>/dev/null || true; }
pinging() { [ "$(pings "$1")" -ge "$2" ]; }

# The driver's keys: on every QP, and with a stream (QP or cm_id).
QP_KEYS="rdmap-state ird ord sq-posted rq-posted stream"
STREAM_KEYS="stream role mpa-rev crc markers-tx markers-rx rtr rtr-pending tcp-queued"

# res_pick KIND LINK KEY=VALUE...: `rdma -j -dd res show KIND link LINK`
# (DEV/1, or DEV for objects on no port yet) must succeed and hold
# exactly one entry with every KEY=VALUE; that entry, "key=value" per
# line, into $LOGS/pick.  The command is run through ${RDMA[@]} with
# ${RES_ARGS[@]} after LINK (callers set them local).
RDMA=(rdma)
RES_ARGS=()
res_pick() {
	local kind=$1 link=$2
	shift 2
	check "${RDMA[@]}" -j -dd res show "$kind" link "$link" "${RES_ARGS[@]}"
	# jq, not python: it starts in a tenth of the time under TCG.
	jq -r '
[$ARGS.positional[] | index("=") as $i | {k: .[:$i], v: .[$i + 1:]}] as $w
| length as $n
| [.[] | select(. as $e | all($w[]; ($e[.k] | tostring) == .v))]
| if length != 1 then
	error("\(length) entries with \($ARGS.positional | join(" ")) among \($n)")
  else .[0] | to_entries[] | "\(.key)=\(.value)" end
' --args "$@" <<<"${T_OUT:-[]}" >"$LOGS/pick" ||
		fail "no single $kind on $link with $*"
	local k v
	PICK=()
	while IFS='=' read -r k v; do PICK[$k]=$v; done <"$LOGS/pick"
}
declare -A PICK

# val KEY: ib_core's KEY of the picked entry ("" when it has none);
# dval KEY and dhas KEY: the driver's KEY (rdma prints the driver's
# attributes with a "drv_" prefix).  Bash only: a sed or grep a key is
# a fork and exec each, slow under TCG beside two busy rpings.
val() { echo "${PICK[$1]-}"; }
dval() { val "drv_$1"; }
dhas() { [ -n "${PICK[drv_$1]+set}" ]; }
# expect KEY VALUE...: the picked entry's driver KEYs are VALUEs (pairs).
expect() {
	while [ $# -gt 1 ]; do
		assert_eq "$(dval "$1")" "$2" "$WHO $1"
		shift 2
	done
}

# conn_check DEV ROLE REV CRC MTX MRX RTR IRD ORD: DEV's rping QP and its
# connected cm_id show these driver details for a running connection.
conn_check() {
	local dev=$1 role=$2 want k qpn
	want=(role "$role" mpa-rev "$3" crc "$4" markers-tx "$5" markers-rx "$6"
		rtr "$7" ird "$8" ord "$9" stream run rtr-pending no)
	WHO="$dev QP"
	res_pick qp "$dev/1" comm=rping
	for k in $QP_KEYS $STREAM_KEYS; do
		dhas "$k" || fail "$WHO has no $k"
	done
	expect rdmap-state RTS "${want[@]}"
	assert_match "$(dval tcp-queued)" '^[0-9]+$' "$WHO tcp-queued"
	qpn=$(val lqpn)
	WHO="$dev cm_id"
	res_pick cm_id "$dev/1" state=CONNECT
	expect qpn "$qpn" "${want[@]}"
	[ -z "$(val lqpn)" ] || assert_eq "$(val lqpn)" "$qpn" "$WHO lqpn"
	assert_match "$(dval tcp-queued)" '^[0-9]+$' "$WHO tcp-queued"
}

# Keys of the socket's state (rsw_res_put_stream()): only for a requester
# in the connection's namespace, and only in a dump.
SOCK_KEYS="stream rtr-pending tcp-queued"
# unseen_check ROLE REV CRC MTX MRX RTR IRD ORD: the picked entry shows
# what MPA negotiated and none of the socket's state.
unseen_check() {
	local k
	expect role "$1" mpa-rev "$2" crc "$3" markers-tx "$4" markers-rx "$5" \
		rtr "$6" ird "$7" ord "$8"
	for k in $SOCK_KEYS; do
		! dhas "$k" || fail "$WHO shows $k=$(dval "$k")"
	done
	ok "$WHO: no socket state"
}

# other_check DEV ROLE: DEV's rping QP (a get by its number, then a dump
# from $OTHER_NS) and its connected cm_id (a dump from $OTHER_NS), for
# the defaults of step 2.
other_check() {
	local dev=$1 role=$2 qpn
	WHO="$dev QP"
	res_pick qp "$dev/1" comm=rping
	qpn=$(val lqpn)
	local -a RES_ARGS=(lqpn "$qpn")
	WHO="$dev QP, a get of lqpn $qpn"
	res_pick qp "$dev/1" "lqpn=$qpn"
	unseen_check "$role" 2 on off off write 1 1
	RES_ARGS=()
	local -a RDMA=(ip netns exec "$OTHER_NS" rdma)
	WHO="$dev QP from another namespace"
	res_pick qp "$dev/1" "lqpn=$qpn"
	unseen_check "$role" 2 on off off write 1 1
	WHO="$dev cm_id from another namespace"
	res_pick cm_id "$dev/1" state=CONNECT
	assert_eq "$(dval qpn)" "$qpn" "$WHO qpn"
	unseen_check "$role" 2 on off off write 1 1
}

# rping_long PORT: a verified rping from rsw1 to rsw0 that goes on until
# killed, under the MPA sniffer (stopped into T_OUT once it pings).
rping_long() {
	re_mpa_watch_start "$1"
	bg "srv.$1" nice -n 19 "$B/rping" -s -a "$SRV" -p "$1" -V -C 100000000
	poll_until 20 "rping server on $1" listening "$1"
	bg "cli.$1" nice -n 19 "$B/rping" -c -I "$CLI" -a "$SRV" -p "$1" -v -V \
		-C 100000000
	poll_until 60 "pings flowing on $1" pinging "cli.$1" 5
	check re_mpa_watch_stop
	MPA=$T_OUT
}

# rping_stop PORT: end both rpings of rping_long.
rping_stop() {
	kill "${PIDS[cli.$1]}" "${PIDS[srv.$1]}" 2>/dev/null || true
	wait "${PIDS[cli.$1]}" "${PIDS[srv.$1]}" 2>/dev/null || true
}

# wire KEY N...: the sniffer's counts (pairs).
wire() {
	while [ $# -gt 1 ]; do
		assert_eq "$(re_mpa_count "$MPA" "$1")" "$2" "MPA frames on the wire: $1"
		shift 2
	done
}

# The listener on rsw0 (rping's server, state LISTEN) has no connection:
# no driver details at all.
listener_check() {
	WHO="rsw0 listener"
	res_pick cm_id rsw0/1 state=LISTEN "src-addr=$SRV:$1"
	for k in $STREAM_KEYS qpn; do
		! dhas "$k" || fail "$WHO shows $k=$(dval "$k")"
	done
	ok "$WHO shows no driver details"
}

step "RDMA core, rdmap_sw, rsw0 on dummy0 and rsw1 on dummy1"
re_rsw_two_up "$SRV" "$CLI"

step "1. a QP nobody connected: its fields, stream none, no error"
BG_TIMEOUT=300 bg lone python3 -c '
import sys, time
from pyverbs.device import Context
from pyverbs.pd import PD
from pyverbs.cq import CQ
from pyverbs.qp import QP, QPCap, QPInitAttr
import pyverbs.enums as e
ctx = Context(name="rsw0")
pd = PD(ctx)
cq = CQ(ctx, 8)
cap = QPCap(max_send_wr=4, max_recv_wr=4, max_send_sge=1, max_recv_sge=1)
qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, cap=cap))
print("qpn", qp.qp_num, flush=True)
time.sleep(300)
'
lone_qpn() { grep -q '^qpn ' "$LOGS/lone"; }
poll_until 60 "pyverbs created its QP" lone_qpn
qpn=$(sed -n 's/^qpn //p' "$LOGS/lone")
# Never given a port (rdma prints "link rsw0/-"), it is listed under the
# device only: a port filter (rsw0/1) leaves it out.
check rdma -dd res show qp link rsw0
WHO="unconnected QP"
res_pick qp rsw0 "lqpn=$qpn"
for k in $QP_KEYS; do
	dhas "$k" || fail "$WHO has no $k"
done
expect stream none rdmap-state IDLE sq-posted 0 rq-posted 0
for k in role mpa-rev crc rtr tcp-queued; do
	! dhas "$k" || fail "$WHO shows $k=$(dval "$k")"
done
ok "$WHO: no stream details"
kill "${PIDS[lone]}"
wait "${PIDS[lone]}" 2>/dev/null || true

step "2. defaults: revision 2, CRC, no Markers, RTR Write"
rping_long 7701
check rdma -dd res show qp link rsw0/1
check rdma -dd res show qp link rsw1/1
check rdma -dd res show cm_id link rsw0/1
check rdma -dd res show cm_id link rsw1/1
wire req 1 rep 1 req_v1 0 rep_v1 0 rep_crc 1 req_m 0 rep_m 0
conn_check rsw1 initiator 2 on off off write 1 1
conn_check rsw0 responder 2 on off off write 1 1
listener_check 7701
check ip netns add "$OTHER_NS"
other_check rsw1 initiator
check ip netns del "$OTHER_NS"
rping_stop 7701

step "3. revision 1 from the initiator, Markers towards it, CRC off"
re_rsw_set rsw1 mpa_rev 1
re_rsw_set rsw1 mpa_markers 1
re_rsw_set rsw0 mpa_crc off
re_rsw_set rsw1 mpa_crc off
re_rsw_set rsw0 peer_ird_ord 16
rping_long 7702
check rdma -dd res show qp link rsw1/1
wire req 1 rep 1 req_v1 1 rep_v1 1 rep_crc 0 req_m 1 rep_m 0
conn_check rsw1 initiator 1 off off on none 1 1
conn_check rsw0 responder 1 off on off none 16 16
rping_stop 7702
re_rsw_set rsw1 mpa_rev 2
re_rsw_set rsw1 mpa_markers 0
re_rsw_set rsw0 mpa_crc on
re_rsw_set rsw1 mpa_crc on
re_rsw_set rsw0 peer_ird_ord 128

step "4a. CRC, Markers both ways, the responder prefers the Send RTR"
re_rsw_set rsw0 mpa_markers 1
re_rsw_set rsw1 mpa_markers 1
re_rsw_set rsw0 rtr_prefer send
rping_long 7703
wire req 1 rep 1 req_v1 0 rep_v1 0 rep_crc 1 req_m 1 rep_m 1
conn_check rsw1 initiator 2 on on on send 1 1
conn_check rsw0 responder 2 on on on send 1 1

step "4b. $RES_QUERIES+ queries while connections end and churn"
Q=/tmp/res-queries.$$
rm -f "$Q" "$Q.count" "$Q.stop"
# query_loop: both dumps (every device, JSON, driver details) until told
# to stop; each answer with its exit status into $Q, the count in $Q.count.
query_loop() {
	local count=0 kind out rc
	while [ ! -e "$Q.stop" ]; do
		for kind in qp cm_id; do
			rc=0
			out=$(rdma -j -dd res show "$kind" 2>&1) || rc=$?
			printf '@@ %s %d\n%s\n' "$kind" "$rc" "$out" >>"$Q"
			count=$((count + 1))
		done
		echo "$count" >"$Q.count"
	done
}
queries() { [ -r "$Q.count" ] && [ "$(<"$Q.count")" -ge "$1" ]; }
query_loop &
QPID=$!
poll_until 60 "the query loop runs" queries 10
note "kill the rping of 4a (both ends) under the loop"
rping_stop 7703
rounds=0
while [ "$rounds" -lt 3 ] || ! queries "$RES_QUERIES"; do
	[ "$rounds" -lt 100 ] || fail "100 rounds and still fewer than $RES_QUERIES queries"
	rounds=$((rounds + 1))
	port=$((7710 + rounds))
	bg "churn.srv" "$B/rping" -s -a "$SRV" -p "$port" -V -C 5
	poll_until 20 "rping server on $port" listening "$port"
	check "$B/rping" -c -I "$CLI" -a "$SRV" -p "$port" -V -C 5
	wait "${PIDS[churn.srv]}" || { cat "$LOGS/churn.srv"; fail "rping server on $port failed"; }
done
: >"$Q.stop"
wait "$QPID" || fail "the query loop failed"
note "$rounds short rpings connected and ended under the loop"
check python3 -c '
import json, sys
# One flat object per entry; the driver attributes have a "drv_" prefix.
qp_keys = ["drv_" + k for k in sys.argv[2].split()]
stream_keys = ["drv_" + k for k in sys.argv[3].split()]
want_min = int(sys.argv[4])
phases = {"idle", "run", "linger", "done"}
n = {"qp": 0, "cm_id": 0}
seen = {}
cm_detail = cm_bare = 0
def whole(e, keys, what):
    miss = [k for k in keys if k not in e]
    if miss:
        sys.exit("%s without %s: %s" % (what, miss, e))
text = open(sys.argv[1]).read().split("@@ ")[1:]
for rec in text:
    head, _, body = rec.partition("\n")
    kind, rc = head.split()
    if rc != "0":
        sys.exit("rdma res show %s exited %s: %s" % (kind, rc, body))
    n[kind] += 1
    for e in json.loads(body):
        if kind == "qp":
            whole(e, qp_keys, "QP")
            ph = e["drv_stream"]
            seen[ph] = seen.get(ph, 0) + 1
            if ph != "none":
                if ph not in phases:
                    sys.exit("QP stream phase %r" % ph)
                whole(e, stream_keys, "QP with a stream")
                if not isinstance(e["drv_tcp-queued"], int):
                    sys.exit("tcp-queued not a number: %s" % e)
        elif any(k.startswith("drv_") for k in e):
            whole(e, stream_keys + ["drv_qpn", "drv_ird", "drv_ord"], "cm_id")
            cm_detail += 1
        else:
            cm_bare += 1
print("queries: %d qp, %d cm_id, all exit 0 and valid JSON" % (n["qp"], n["cm_id"]))
print("QP entries by stream phase: %s" % ", ".join("%s %d" % kv for kv in sorted(seen.items())))
print("cm_id entries: %d with driver details, %d without" % (cm_detail, cm_bare))
if n["qp"] + n["cm_id"] < want_min:
    sys.exit("fewer than %d queries" % want_min)
if sum(v for k, v in seen.items() if k != "none") == 0 or cm_detail == 0:
    sys.exit("no connection seen by the loop")
' "$Q" "$QP_KEYS" "$STREAM_KEYS" "$RES_QUERIES"
rm -f "$Q" "$Q.count" "$Q.stop"
re_rsw_set rsw0 mpa_markers 0
re_rsw_set rsw1 mpa_markers 0
re_rsw_set rsw0 rtr_prefer none

step "5. over IPv6: the cm_ids found by their IPv6 ends"
check ip -6 addr add fd81::1/64 dev dummy0 nodad
check ip -6 addr add fd81::2/64 dev dummy1 nodad
SRV=fd81::1 CLI=fd81::2
rping_long 7704
wire req 1 rep 1 req_v6 1 rep_v6 1
conn_check rsw1 initiator 2 on off off write 1 1
conn_check rsw0 responder 2 on off off write 1 1
listener_check 7704
rping_stop 7704

step "no QP and no cm_id left"
no_res() { [ -z "$(rdma res show qp link rsw0/1)$(rdma res show qp link rsw1/1)$(rdma res show cm_id link rsw0/1)$(rdma res show cm_id link rsw1/1)" ]; }
poll_until 30 "rsw0 and rsw1 have no QP and no cm_id" no_res

step "tear down"
re_rsw_two_down
echo "PASS: $T_NAME on $RSW_KERNEL ($(uname -r))"
