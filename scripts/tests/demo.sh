#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The demo `make run` shows (scripts/run boots one guest for it): rdmap_sw
# attached to a dummy netdev, seen by the standard tools, carrying a
# verified rping, then a small perftest table of rdmap_sw beside upstream
# siw on the same path.  It ends with one screen saying what happened.
#
#   scripts/build 6.12 && scripts/rdma-core && scripts/siw 6.12 &&
#   scripts/vm --kernel 6.12 --timeout 600 -- scripts/tests/demo.sh
#
#   +----------------------- guest ------------------------+
#   |  rping / perftest server --- rdma_cm ---  client     |
#   |  rsw0 (rdmap_sw), then siw0 --- dummy0 192.0.2.1/24  |
#   +------------------------------------------------------+
#
# The demo fails when the device does not come up ACTIVE over iWARP, when
# rping does not verify every ping, or when a rdmap_sw perftest cell has
# no figure.  A siw cell without a figure is shown as such (siw is the
# comparison, not the subject).  The perftest cells are make bench's
# (bench-guest.sh, one round, CRC off); make bench is the measurement.
# shellcheck source=scripts/tests/lib.sh
. "$(dirname "$0")/lib.sh"

: "${RSW_OUT:?run me through scripts/vm}"
DEV=rsw0
NETDEV=dummy0
IP=192.0.2.1
PINGS=200
# write_bw: 64 KiB Writes (Gb/s); write_mr_64: 64 B Writes a second
# (thousands); write_lat: 64 B Write latency (us, half a round trip).
TESTS="write_bw write_mr_64 write_lat"
LOGS=$RSW_RUN/demo
SUMMARY=$LOGS/summary.txt
mkdir -p "$LOGS"

# listening PORT: the rdma_cm id listens on PORT, and so does the
# device's TCP socket (rdma_cm shows LISTEN before the provider's listen
# is done).
listening() {
	rdma res show cm_id | grep -Eq "state LISTEN .*src-addr [^ ]*:$1( |$)" &&
		ss -Hltn "sport = :$1" | grep -q .
}

rdma_core_use rping ibv_devinfo
t_banner

rsw_dummy_up "$DEV" "$NETDEV" "$IP/24"

step "the device, as the standard tools see it"
check rdma link show "$DEV/1"
LINK=$T_OUT
assert_match "$LINK" "state ACTIVE" "rdma link state"
check "$B/ibv_devinfo" -d "$DEV"
assert_match "$T_OUT" 'transport:[[:space:]]+iWARP ' "transport"
assert_match "$T_OUT" 'state:[[:space:]]+PORT_ACTIVE ' "port 1 state"
PORT=$(sed -n 's/^[[:space:]]*state:[[:space:]]*//p' <<<"$T_OUT" | head -n 1)

step "rping: $PINGS pings, data verified on both sides"
timeout -k 5 "$T_CMD_TIMEOUT" "$B/rping" -s -a "$IP" -p 7174 -V -C "$PINGS" \
	>"$LOGS/rping.server" 2>&1 &
srv=$!
poll_until 20 "rping server listening on port 7174" listening 7174
printf '    $ %s\n' "rping -c -a $IP -p 7174 -v -V -C $PINGS   (log $LOGS/rping.client)"
rc=0
timeout -k 5 "$T_CMD_TIMEOUT" "$B/rping" -c -a "$IP" -p 7174 -v -V -C "$PINGS" \
	>"$LOGS/rping.client" 2>"$LOGS/rping.client.err" || rc=$?
[ "$rc" -eq 0 ] || { tail -n 20 "$LOGS/rping.client"* | indent; fail "rping client exit status $rc"; }
wait "$srv" || rc=$?
[ "$rc" -eq 0 ] || { tail -n 20 "$LOGS/rping.server" | indent; fail "rping server exit status $rc"; }
# Distinct ping numbers, from stdout alone: rping's stderr lands inside
# its block-buffered stdout when both go to one file.
PINGED=$(grep -o 'rdma-ping-[0-9]*:' "$LOGS/rping.client" | sort -u | wc -l)
assert_eq "$PINGED" "$PINGS" "distinct verified pings printed by the client"

rsw_dummy_down "$DEV" "$NETDEV"

step "perftest, rdmap_sw beside siw (make bench's cells, one round)"
# bench-guest.sh loads each provider in turn on its own dummy0.
RSW_BENCH_ROUNDS=1 RSW_BENCH_CRC=off RSW_BENCH_CRC_TABLE=off \
	RSW_BENCH_PROVIDERS="rsw siw" RSW_BENCH_TESTS="$TESTS" \
	timeout -k 5 300 "$RSW_TOP/scripts/tests/bench-guest.sh" >"$LOGS/perftest.log" 2>&1 ||
	{ tail -n 20 "$LOGS/perftest.log" | indent; fail "the perftest runs failed"; }
RES=$RSW_RUN/bench/results.tsv
[ -s "$RES" ] || fail "no perftest results in $RES"

# cell PROVIDER TEST: the figure recorded, or "-" when the run failed.
cell() {
	awk -F'\t' -v p="$1" -v t="$2" \
		'$2 == p && $3 == t && $4 == "ok" { v = $5 }
		END { if (v == "") print "-"; else printf "%.2f\n", v }' "$RES"
}

# table: the perftest table, one row per test, with rdmap_sw's figure over
# siw's for bandwidth and rate (higher is better) and siw's over
# rdmap_sw's for latency (lower is better): above 1 is rdmap_sw ahead.
table() {
	local t what rsw siw adv
	printf '  %-28s %12s %12s %10s\n' "" rdmap_sw siw "advantage"
	for t in $TESTS; do
		case "$t" in
		write_bw) what="RDMA Write 64 KiB, Gb/s" ;;
		write_mr_64) what="RDMA Write 64 B, kmsg/s" ;;
		write_lat) what="RDMA Write 64 B, latency us" ;;
		esac
		rsw=$(cell rsw "$t") siw=$(cell siw "$t")
		adv=$(awk -v a="$rsw" -v b="$siw" -v t="$t" 'BEGIN {
			if (a == "-" || b == "-" || a + 0 == 0 || b + 0 == 0) { print "-"; exit }
			printf "%.2fx", (t ~ /lat/ ? b / a : a / b) }')
		printf '  %-28s %12s %12s %10s\n' "$what" "$rsw" "$siw" "$adv"
	done
}

missing=0
for t in $TESTS; do
	[ "$(cell rsw "$t")" != - ] || missing=$((missing + 1))
done

{
	echo
	echo "==================== rdmap_sw demo: what happened ===================="
	printf '  kernel        %s (%s)\n' "$(uname -r)" "${RSW_KERNEL:-?}"
	printf '  device        %s on %s (%s/24), iWARP, port %s\n' "$DEV" "$NETDEV" "$IP" "$PORT"
	printf '  rdma link     %s\n' "$LINK"
	printf '  rping         %s of %s pings verified on both sides\n' "$PINGED" "$PINGS"
	echo "  perftest over rdma_cm on one guest's loopback (TCG: compare, not absolute):"
	table
	echo "  logs          $LOGS (rping, perftest.log), $RSW_RUN/bench (every run)"
	echo "  more          make check (every test), make bench (rdmap_sw vs siw, rxe, TCP)"
	echo "======================================================================"
} | tee "$SUMMARY"

[ "$missing" -eq 0 ] || fail "$missing rdmap_sw perftest cells have no figure (see $RSW_RUN/bench)"
ok "demo done"
