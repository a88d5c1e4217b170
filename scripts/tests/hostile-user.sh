#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The hostile-user stress of issue 10: one process rewrites its own mapped
# SQ/RQ/SRQ/CQ rings and control pages with garbage while it posts and
# polls at full speed and destroys and re-creates its QPs, CQs, SRQs and
# MRs under traffic (the hostile-user program does that and checks what it
# can see itself: guard bytes around its MRs and an MR of another PD
# untouched, no hang, a fresh connection still verified afterwards).  Here,
# around it:
#   - two other processes keep a verified rping going over the same device
#     the whole time (rounds of rping -V -C N, each must exit 0, one always
#     running while the stress runs);
#   - the kernel log stays free of bug reports (KASAN, lockdep, UBSAN,
#     WARN, BUG: T_BUG_RE);
#   - the device's object counts (rdma res: pd cq qp cm_id mr) are back to
#     what they were before the stress once the program has exited;
#   - the program's own checks all pass, within a bound.
#
#   scripts/build debug && scripts/rdma-core &&
#   scripts/vm --kernel debug --mem 2048 --timeout 900 -- scripts/tests/hostile-user.sh
#
#   rsw0 (rdmap_sw) --- dummy0 192.0.2.1/24; everything in this guest
#
# RSW_HOSTILE_S sets the stress's length (default 10 s; 300 s with
# RSW_STRESS=1); RSW_HOSTILE_SEED its seed (default: the time);
# RSW_HOSTILE_PINGS the pings per rping round (default 20: a few seconds
# a round on the debug kernel).
# shellcheck source=scripts/tests/lib.sh
. "$(dirname "$0")/lib.sh"

: "${RSW_OUT:?run me through scripts/vm}"
DEV=rsw0
NETDEV=dummy0
IP=192.0.2.1
SECS=${RSW_HOSTILE_S:-10}
[ "${RSW_STRESS:-0}" = 0 ] || SECS=${RSW_HOSTILE_S:-300}
SEED=${RSW_HOSTILE_SEED:-$(date +%s)}
PINGS=${RSW_HOSTILE_PINGS:-20}
T_CMD_TIMEOUT=$((SECS + 240))

rdma_core_use hostile-user rping
PROG=$RSW_RDMA_PROVIDER_BUILD/hostile-user
LOGS=$RSW_RUN/hostile-user
mkdir -p "$LOGS"

# res_counts: $DEV's object counts ("pd N cq N qp N ..." of rdma res show).
res_counts() { rdma res show | sed -n "s/^[0-9]*: $DEV: //p"; }
counts_are() { [ "$(res_counts)" = "$1" ]; }
listening() { ss -Hltn "sport = :$1" | grep -q .; }

# rping_rounds: verified rping rounds (server and client, new port each
# time) until $LOGS/stop exists; a failed round is recorded in
# $LOGS/rounds.failed and ends the loop.  Each round's exits go to
# $LOGS/rounds.
rping_rounds() {
	local r=0 port spid rc src
	while [ ! -e "$LOGS/stop" ]; do
		r=$((r + 1))
		port=$((7600 + r % 300))
		timeout -k 5 300 "$RSW_RDMA_BIN/rping" -s -a "$IP" -p "$port" \
			-V -C "$PINGS" >"$LOGS/server.$r" 2>&1 &
		spid=$!
		wait_for 30 listening "$port" || { echo "$r server not listening" \
			>>"$LOGS/rounds.failed"; kill "$spid"; break; }
		rc=0
		timeout -k 5 300 "$RSW_RDMA_BIN/rping" -c -a "$IP" -p "$port" -v \
			-V -C "$PINGS" >"$LOGS/client.$r" 2>&1 || rc=$?
		src=0
		wait "$spid" || src=$?
		echo "round $r: client $rc server $src $(grep -c 'ping data' \
			"$LOGS/client.$r") pings" >>"$LOGS/rounds"
		if [ "$rc" != 0 ] || [ "$src" != 0 ]; then
			echo "round $r: client $rc server $src" >>"$LOGS/rounds.failed"
			break
		fi
	done
}
rounds_done() { [ -s "$LOGS/rounds" ] && [ "$(wc -l <"$LOGS/rounds")" -ge "$1" ]; }
# pinging: the first round's client has logged verified pings.
pinging() { [ "$(grep -c 'ping data' "$LOGS/client.1" 2>/dev/null)" -ge 3 ]; }

t_banner
rsw_dummy_up "$DEV" "$NETDEV" "$IP/24"
BASE=$(res_counts)
[ -n "$BASE" ] || fail "no object counts for $DEV in rdma res show"
note "object counts of $DEV before anything runs: $BASE"

step "a verified rping between two other processes, kept going"
rm -f "$LOGS/stop" "$LOGS/rounds" "$LOGS/rounds.failed"
rping_rounds &
ROUNDS_PID=$!
# A failing step (fail() exits) must not leave the rounds running: the
# guest would wait for them until the VM's time limit.
trap 'touch "$LOGS/stop"; kill "$ROUNDS_PID" 2>/dev/null || true' EXIT
poll_until 120 "the first rping round pinging" pinging
[ ! -e "$LOGS/rounds.failed" ] || fail "rping: $(<"$LOGS/rounds.failed")"
before=0
[ ! -s "$LOGS/rounds" ] || before=$(wc -l <"$LOGS/rounds")

step "hostile-user: ${SECS} s of garbage rings and churn (seed $SEED)"
t0=$(now_ms)
check "$PROG" "$IP" 7590 "$SECS" "$SEED"
note "took $(($(now_ms) - t0)) ms"
assert_no_match "$T_OUT" '^not ok' "hostile-user checks"
assert_match "$T_OUT" '^# [0-9]+ checks, 0 failed' "hostile-user summary"
dmesg_clean

step "the rping went on through the stress, verified"
poll_until 120 "an rping round that overlapped the stress finished" \
	rounds_done $((before + 1))
touch "$LOGS/stop"
wait "$ROUNDS_PID" || true
indent <"$LOGS/rounds"
[ ! -e "$LOGS/rounds.failed" ] || fail "rping: $(<"$LOGS/rounds.failed")"
ok "$(wc -l <"$LOGS/rounds") rping rounds of $PINGS verified pings, all exit 0"

step "object counts back to the baseline"
# Both programs are gone (the rping's rounds stopped): nothing of theirs
# may be left in the driver.
poll_until 20 "object counts of $DEV back to: $BASE" counts_are "$BASE"

rsw_dummy_down "$DEV" "$NETDEV"
echo "hostile-user: PASS"
