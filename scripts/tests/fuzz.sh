#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The hostile-peer fuzzer (issue 10): fuzz-peer speaks raw TCP to a victim
# QP of rsw0, starting from valid MPA exchanges and RDMAP streams and
# mutating fields, lengths, splits, CRC, order and timing (see the header
# of userspace-provider/tests/fuzz-peer.c for the cases and the checks).
#
#   scripts/build debug && scripts/rdma-core &&
#   scripts/vm --kernel debug --timeout 900 -- scripts/tests/fuzz.sh
#
# Environment:
#   RSW_FUZZ_CASES   number of cases (default 2000; RSW_STRESS=1: 50000).
#                    Measured on the debug kernel under TCG with 4 jobs:
#                    15 cases/s (300 cases in 22 s, the VM step 71 s with
#                    boot, set-up, the regression cases and kmemleak).
#   RSW_FUZZ_SEED    run seed (default: the clock; printed either way)
#   RSW_FUZZ_FIRST   first case index (default 0)
#   RSW_FUZZ_JOBS    fuzz-peer processes at once (default 4): a case spends
#                    most of its time waiting (connection set-up, teardown)
#   RSW_FUZZ_REGRESS 1: first replay scripts/tests/fuzz-regress.list, the
#                    cases that found bugs
#   RSW_FUZZ_ARGS    more fuzz-peer options (--keep-going, -v ...)
#   RSW_STRESS       1: the make stress size
#
# Per case fuzz-peer checks the victim QP, guard bytes, the read-only MRs,
# a control connection and (every 50 cases) the device's object counts;
# per batch the kernel log (RSW_BUG_RE) and kmemleak.  The case being run
# is kept, fsync'ed, in $RSW_RUN/fuzz-current.hex.<worker> (what a crash
# leaves behind); failing cases go to $RSW_RUN/fuzz-fail/.
# shellcheck source=scripts/tests/lib.sh
. "$(dirname "$0")/lib.sh"

: "${RSW_OUT:?run me through scripts/vm}"
DEV=rsw0
NETDEV=dummy0
IP=192.0.2.1
PORT=7490
if [ "${RSW_STRESS:-}" = 1 ]; then
	CASES=${RSW_FUZZ_CASES:-50000}
	BATCH=5000
else
	CASES=${RSW_FUZZ_CASES:-2000}
	BATCH=1000
fi
SEED=${RSW_FUZZ_SEED:-$(date +%s)}
FIRST=${RSW_FUZZ_FIRST:-0}
JOBS=${RSW_FUZZ_JOBS:-4}
LIST=$RSW_TOP/scripts/tests/fuzz-regress.list

rdma_core_use fuzz-peer
FUZZ=$RSW_RDMA_PROVIDER_BUILD/fuzz-peer
OUT=$RSW_RUN/fuzz
mkdir -p "$OUT/fail"

t_banner
rsw_dummy_up "$DEV" "$NETDEV" "$IP/24"

leak=()
[ -w /sys/kernel/debug/kmemleak ] && leak=(--kmemleak)
# A 9p run directory without a cache writes through to the host, which
# outlives a guest crash: the saved case needs no fsync there (one per
# case, each a host fsync, was a fifth of a case's time).
sync=()
case "$(findmnt -no FSTYPE,OPTIONS -T "$RSW_RUN" 2>/dev/null)" in
9p\ *cache=*) ;;
9p\ *) sync=(--no-fsync) ;;
esac

# cpu_ticks: busy and total CPU ticks of the guest so far.
cpu_ticks() {
	local _ user nice sys idle iowait irq soft steal
	read -r _ user nice sys idle iowait irq soft steal _ </proc/stat
	echo "$((user + nice + sys + irq + soft + steal))" \
		"$((user + nice + sys + idle + iowait + irq + soft + steal))"
}

# fuzz_run NAME ARGS...: fuzz-peer with the common options, its output
# streamed and kept in $OUT/NAME.log; its exit status.
fuzz_run() {
	local name=$1 rc=0
	shift
	printf '    $ fuzz-peer %s\n' "$*"
	timeout -k 10 "$LIMIT" "$FUZZ" --save "$RSW_RUN/fuzz-current.hex" \
		"${sync[@]}" --fail-dir "$OUT/fail" --bug-re "$T_BUG_RE" "${leak[@]}" \
		"$@" "$DEV" "$IP" "$PORT" >"$OUT/$name.log" 2>&1 || rc=$?
	grep -E '^(FAIL|# (seed|batch|  |rerun|case))' "$OUT/$name.log" |
		head -n 200 | indent
	return "$rc"
}

if [ "${RSW_FUZZ_REGRESS:-}" = 1 ] && [ -r "$LIST" ]; then
	# First, so that they give a verdict whatever the run below finds;
	# one process, no kmemleak scan of its own (10 s on the debug
	# kernel): the main run's first batch scan, and scripts/vm's at the
	# end, report what these cases leaked.
	step "fuzz-peer: regression cases ($LIST)"
	LIMIT=300
	saved_leak=("${leak[@]}")
	leak=()
	fuzz_run regress --replay "$LIST" --count-every 1 -v ||
		fail "a regression case failed (see $OUT/regress.log)"
	ok "every regression case passed"
	leak=("${saved_leak[@]}")
fi

step "fuzz-peer: $CASES cases from $FIRST, seed $SEED"
# Under TCG on the debug kernel a case takes ~0.6 s in one worker (~0.17 s
# of wall time with 4); a stuck case ends at its own bounds (seconds), so
# this limit only catches a hung program.
LIMIT=$((CASES / 2 + 300))
rc=0
read -ra extra <<<"${RSW_FUZZ_ARGS:-}"
read -r busy0 total0 <<<"$(cpu_ticks)"
fuzz_run main --seed "$SEED" --first "$FIRST" --cases "$CASES" \
	--batch "$BATCH" --jobs "$JOBS" "${extra[@]}" || rc=$?
read -r busy1 total1 <<<"$(cpu_ticks)"
note "guest CPUs busy $(((busy1 - busy0) * 100 / (total1 - total0 + 1)))%" \
	"during the run ($JOBS jobs)"
[ "$rc" -eq 0 ] || fail "fuzz-peer seed $SEED: exit $rc (see $OUT/main.log;" \
	"rerun a case with RSW_FUZZ_SEED=$SEED RSW_FUZZ_FIRST=<case> RSW_FUZZ_CASES=1)"
ok "$CASES cases, no failure"
rm -f "$RSW_RUN"/fuzz-current.hex*

rsw_dummy_down "$DEV" "$NETDEV"
