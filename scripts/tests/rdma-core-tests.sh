#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# rdma-core 56.1's own Python test suite (tests/, over pyverbs) against
# rsw0 in one guest.
#
#   scripts/build 6.12 && scripts/rdma-core provider &&
#   scripts/vm --kernel 6.12 --timeout 1800 --mem 2048 -- \
#       scripts/tests/rdma-core-tests.sh [-k PATTERN]...
#
# rsw0 sits on dummy0 (192.0.2.1/24), as in uverbs.sh.  RSW_DRIVER=siw
# runs the same suite on upstream siw (siw0, scripts/siw's plain siw.ko and
# rdma-core's own siw provider) instead: a baseline that tells what the suite
# makes of any iWARP device from what is rdmap_sw's own.  The suite is run
# module by module (tests/test_*.py), each in its own python3 process, so
# that one test crashing its interpreter (SIGSEGV, abort) costs only that
# module's remaining tests; the crash is reported as CRASH for the test that
# was running.  Each test is bounded by RSW_TEST_TIMEOUT seconds (SIGALRM in
# the runner; reported as ERROR "timeout").
#
# The runner loads the tests exactly as tests/run_tests.py does (the tests
# package, its args_parser with --dev rsw0, unittest's loader) and only adds
# a result class that writes one line per test to $RSW_RUN/rdma-core-tests/
# results:
#
#   RESULT <PASS|FAIL|ERROR|SKIP|XFAIL|XPASS|CRASH> <test id> [reason]
#
# At the end the script prints all RESULT lines (sorted by id) and the
# counts.  Test failures do not fail the script: it is a survey.  It exits
# non-zero only when the suite cannot start (pyverbs does not import, no
# test was run) or the kernel logged a bug report (the harness also catches
# WARN/oops).
#
# GID.  Left to choose, the suite drops every GID whose low 64 bits are
# zero (RDMATestCase._add_gids_per_port, meant for unset IB GIDs).  An iWARP
# GID is the netdev's MAC followed by zeros (rdma_cm looks the device up by
# that), so the suite would find no usable port and skip every traffic and
# rdma_cm test.  The script therefore names GID index 0 (--gid 0); set
# RSW_GID= (empty) to let the suite choose.  Further arguments go to
# run_tests.py (e.g. -k PATTERN).
#
# Vendor modules (tests/test_mlx5_*.py, tests/test_efa*.py) test mlx5 and
# EFA hardware; on any other device each of their tests skips, in about 3 s
# of interpreter start per module (some 80 s in all under TCG).  With
# RSW_RDMA_CORE_VENDOR=0 (make check) they are not run and FILE's lines for
# them are not compared; the step says how many; make stress runs them all.
#
# RSW_EXPECT=FILE makes it compare the RESULT lines with FILE and fail on
# any difference: status, test id and reason, the reason normalised
# (normalise_reasons) so that what varies from run to run (addresses,
# timings, the run directory, the per-test limit) does not count, but a
# different cause does (an ERROR that becomes a timeout, an EOPNOTSUPP that
# becomes EINVAL).  The normalised lines of a run are in
# $RSW_RUN/rdma-core-tests/got, the form FILE takes.
# shellcheck source=scripts/tests/lib.sh
. "$(dirname "$0")/lib.sh"

: "${RSW_OUT:?run me through scripts/vm}"
RSW_DRIVER=${RSW_DRIVER:-rdmap_sw}
case "$RSW_DRIVER" in
rdmap_sw) DEV=rsw0 ;;
siw) DEV=siw0 ;;
*) echo "RSW_DRIVER must be rdmap_sw or siw" >&2; exit 2 ;;
esac
NETDEV=dummy0
IP=192.0.2.1
RSW_TEST_TIMEOUT=${RSW_TEST_TIMEOUT:-120}
RSW_RDMA_CORE_VENDOR=${RSW_RDMA_CORE_VENDOR:-1}
case "$RSW_RDMA_CORE_VENDOR" in 0|1) ;; *) echo "RSW_RDMA_CORE_VENDOR must be 0 or 1" >&2; exit 2 ;; esac
VENDOR_RE='^tests\.test_(mlx5|efa)'
if [ "${RSW_KERNEL:-}" = debug ]; then
	RSW_TEST_TIMEOUT=$((RSW_TEST_TIMEOUT * 4))
fi
PY=/usr/bin/python3
RSW_GID=${RSW_GID-0}
SUITE_ARGS=(--dev "$DEV")
[ -z "$RSW_GID" ] || SUITE_ARGS+=(--gid "$RSW_GID")

eval "$("$RSW_TOP/scripts/rdma-core" env)"
[ -r "$RSW_RDMA_SRC/tests/run_tests.py" ] ||
	fail "no rdma-core 56.1 source tests/ in $RSW_RDMA_SRC"
[ -d "$RSW_RDMA_BUILD/python/pyverbs" ] ||
	fail "pyverbs is not built in $RSW_RDMA_BUILD (run scripts/rdma-core)"
export LD_LIBRARY_PATH=$RSW_RDMA_LIB
[ "$RSW_DRIVER" = siw ] || rdma_core_own_provider
export PYTHONPATH=$RSW_RDMA_BUILD/python
# rdma-core's tests call iproute2's rdma and ip; ours are the host's.
LOGS=$RSW_RUN/rdma-core-tests
RESULTS=$LOGS/results
mkdir -p "$LOGS"
: >"$RESULTS"

t_banner

step "load the RDMA core and $RSW_DRIVER"
check modprobe -a ib_core ib_uverbs iw_cm rdma_cm rdma_ucm
check modprobe dummy numdummies=0
if [ "$RSW_DRIVER" = siw ]; then
	# rsw_siw_dir: scripts/lib.sh, which tests/lib.sh sources.
	KO=$(rsw_siw_dir "$RSW_KREL")/plain/siw.ko
	# librdmap_sw has no match table, which libibverbs 56.1 dereferences
	# for devices with a kernel driver id (siw): hide it in this guest (a
	# write to the tmpfs overlay; see bench-guest.sh).
	D=$RSW_RDMA_BUILD/etc/libibverbs.d
	if [ -e "$D/rdmap_sw.driver" ]; then
		check mv "$D/rdmap_sw.driver" "$RSW_RUN/rdmap_sw.driver.hidden"
	fi
	[ -r "$KO" ] || fail "no $KO (run scripts/siw)"
else
	KO=$RSW_OUT/drivers/rdmap_sw/rdmap_sw.ko
fi
insmod_deps "$KO"

step "$NETDEV with $IP/24, $DEV attached to it"
dummy_netdev "$NETDEV" "$IP/24"
rdma_attach "$DEV" "$RSW_DRIVER" "$NETDEV"
poll_until 10 "uverbs device for $DEV" uverbs_ready "$DEV"
check rdma link show -j
check "$RSW_RDMA_BIN/ibv_devinfo" -v -d "$DEV"

# The runner: run_tests.py's loading, plus a per-test result line, a
# per-test time limit, and the id of the running test kept on disk (so a
# crash can be attributed).
cat >"$LOGS/runner.py" <<'EOF'
# SPDX-License-Identifier: GPL-2.0
# Usage: runner.py TESTS_DIR RESULTS_FILE TIMEOUT MODULE [run_tests.py args]
import os
import signal
import sys
import unittest
from importlib.machinery import SourceFileLoader

tests_dir, results, timeout, module = sys.argv[1:5]
timeout = int(timeout)
sys.argv[1:] = sys.argv[5:]
sys.path.insert(0, tests_dir)
# As tests/run_tests.py, but only test_<module>.py is loaded: the tests
# package imports every test_*.py at import time; keep all (some import
# each other) and select by the unittest pattern below.
from args_parser import parser
tests = SourceFileLoader('tests', os.path.join(tests_dir, '__init__.py')).load_module()
parser.parse_args()
running = results + '.running'


class TestTimeout(Exception):
    pass


def on_alarm(signum, frame):
    raise TestTimeout(f'test exceeded {timeout} s')


signal.signal(signal.SIGALRM, on_alarm)


def first_line(text):
    lines = [l for l in str(text).strip().splitlines() if l.strip()]
    return lines[-1].strip()[:300] if lines else ''


class Result(unittest.TextTestResult):
    def _put(self, status, test, why=''):
        with open(results, 'a') as f:
            f.write(f'RESULT {status} {test.id()} {why}'.rstrip() + '\n')

    def startTest(self, test):
        with open(running, 'w') as f:
            f.write(test.id() + '\n')
        signal.alarm(timeout)
        super().startTest(test)

    def stopTest(self, test):
        signal.alarm(0)
        super().stopTest(test)
        try:
            os.unlink(running)
        except FileNotFoundError:
            pass

    def addSuccess(self, test):
        super().addSuccess(test)
        self._put('PASS', test)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._put('FAIL', test, first_line(self.failures[-1][1]))

    def addError(self, test, err):
        super().addError(test, err)
        # setUpClass errors come with a _ErrorHolder, not a test.
        self._put('ERROR', test, first_line(self.errors[-1][1]))

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._put('SKIP', test, first_line(reason))

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self._put('XFAIL', test)

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._put('XPASS', test)


class Loader(unittest.TestLoader):
    def loadTestsFromModule(self, mod, *args, pattern=None, **kws):
        if mod is tests:
            suite = self.suiteClass()
            for m in tests.__test_modules__:
                if m.__name__ == 'tests.' + module:
                    suite.addTests(super().loadTestsFromModule(m))
            return suite
        return super().loadTestsFromModule(mod, *args, pattern=pattern, **kws)


runner = unittest.TextTestRunner(resultclass=Result, verbosity=2)
unittest.main(module=tests, testLoader=Loader(), testRunner=runner, exit=False)
EOF

step "pyverbs imports and the suite lists its tests"
check env -C "$RSW_RDMA_SRC/tests" "$PY" -c 'import pyverbs.device as d; print([x.name for x in d.get_device_list()])'
assert_match "$T_OUT" "'$DEV'" "pyverbs sees $DEV"
check "$PY" "$RSW_RDMA_SRC/tests/run_tests.py" --list-tests
n_listed=$(grep -c '^tests\.' <<<"$T_OUT" || true)
[ "$n_listed" -gt 0 ] || fail "run_tests.py --list-tests listed no test"
ok "$n_listed tests listed"

step "run the suite (${SUITE_ARGS[*]} $*), one python3 per test module (limit ${RSW_TEST_TIMEOUT}s per test)"
vendor_left=0
for f in "$RSW_RDMA_SRC"/tests/test_*.py; do
	mod=$(basename "$f" .py)
	if [ "$RSW_RDMA_CORE_VENDOR" = 0 ] && grep -Eq "$VENDOR_RE" <<<"tests.$mod"; then
		vendor_left=$((vendor_left + 1))
		continue
	fi
	rc=0
	start=$(now_ms)
	timeout -k 10 $((RSW_TEST_TIMEOUT * 40)) "$PY" "$LOGS/runner.py" \
		"$RSW_RDMA_SRC/tests" "$RESULTS" "$RSW_TEST_TIMEOUT" "$mod" \
		"${SUITE_ARGS[@]}" "$@" >"$LOGS/$mod.log" 2>&1 || rc=$?
	if [ -s "$RESULTS.running" ]; then
		printf 'RESULT CRASH %s exit status %d, see %s\n' \
			"$(cat "$RESULTS.running")" "$rc" "$LOGS/$mod.log" >>"$RESULTS"
		rm -f "$RESULTS.running"
	fi
	note "$mod: exit $rc, $(($(now_ms) - start)) ms, $(tail -n 1 "$LOGS/$mod.log")"
	# The kernel must stay clean after every module (the harness ends the
	# run at a WARN; this names the module for other reports).
	if dmesg | grep -Eq "$T_BUG_RE"; then
		fail "kernel bug report after $mod (log $LOGS/$mod.log)"
	fi
done

[ "$vendor_left" -eq 0 ] ||
	note "$vendor_left vendor modules (mlx5, EFA) not run (RSW_RDMA_CORE_VENDOR=0; make stress runs them)"

step "per-test results (also in $RESULTS)"
sort -k3,3 "$RESULTS" >"$RESULTS.sorted"
cat "$RESULTS.sorted"
total=$(wc -l <"$RESULTS.sorted")
[ "$total" -gt 0 ] || fail "no test reported a result"
for s in PASS FAIL ERROR SKIP XFAIL XPASS CRASH; do
	printf 'COUNT %s %d\n' "$s" "$(grep -c "^RESULT $s " "$RESULTS.sorted" || true)"
done
printf 'COUNT TOTAL %d (listed %d)\n' "$total" "$n_listed"

# normalise_reasons: RESULT lines on stdin to "<status> <id> [reason]",
# with the parts of a reason that vary between runs of the same cause
# replaced: the run directory, hexadecimal numbers (addresses, handles),
# decimal fractions (timings), the per-test time limit; blanks squeezed.
# Integers stay: errnos, QP types and counts are part of the cause.
normalise_reasons() {
	local logs=$LOGS
	awk -v logs="$logs" '{
		$1 = ""
		line = substr($0, 2)
		while ((i = index(line, logs)) > 0)
			line = substr(line, 1, i - 1) "<logs>" substr(line, i + length(logs))
		gsub(/0[xX][0-9a-fA-F]+/, "0x<hex>", line)
		gsub(/[0-9]+\.[0-9]+/, "<n.n>", line)
		gsub(/test exceeded [0-9]+ s/, "test exceeded <limit> s", line)
		gsub(/[ \t]+/, " ", line)
		sub(/ $/, "", line)
		print line
	}'
}

if [ -n "${RSW_EXPECT:-}" ]; then
	step "results match $RSW_EXPECT (status, id and normalised reason)"
	normalise_reasons <"$RESULTS.sorted" >"$LOGS/got"
	grep -v '^#' "$RSW_EXPECT" >"$LOGS/expected"
	if [ "$RSW_RDMA_CORE_VENDOR" = 0 ]; then
		n=$(awk '{ print $2 }' "$LOGS/expected" | grep -Ec "$VENDOR_RE" || true)
		awk '{ print $2 " " $0 }' "$LOGS/expected" | grep -Ev "$VENDOR_RE" |
			cut -d' ' -f2- >"$LOGS/expected.run"
		mv "$LOGS/expected.run" "$LOGS/expected"
		note "$n expected results of vendor modules not compared (not run)"
	fi
	if ! diff -u "$LOGS/expected" "$LOGS/got" | indent; then
		fail "results differ from $RSW_EXPECT"
	fi
	ok "all $total results as expected"
fi

step "detach and unload"
check rdma link delete "$DEV"
poll_until 10 "$DEV gone" gone "/sys/class/infiniband/$DEV"
check rmmod "$RSW_DRIVER"
check ip link delete "$NETDEV"
dmesg_clean
