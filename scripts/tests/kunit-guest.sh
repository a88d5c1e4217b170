#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Guest side of `make kunit` (run by scripts/kunit through scripts/vm on the
# debug kernel).  Loads rdmap_sw.ko, then the KUnit suite modules listed in
# $RSW_RUN/kunit.modules (one .ko path per line, chosen by the host) one at a
# time; each runs its suites on load.  Their KTAP
# results (from KUnit's debugfs) are appended to $RSW_RUN/kunit.ktap, one
# document per suite, for the host to merge and judge.  Afterwards everything
# is unloaded and kmemleak is asked for leaks (scripts/vm-init has already
# scanned and cleared what boot left, so only leaks made from here count).
#
# Exit status is non-zero if a module fails to load or unload, a module brings
# no suite, or kmemleak reports anything.  Test verdicts are left to the host
# (kunit.py parse), which also reads the console for lockdep/UBSAN/... reports.
set -uo pipefail
shopt -s nullglob

: "${RSW_OUT:?}" "${RSW_RUN:?}"
dbg=/sys/kernel/debug
ktap="$RSW_RUN/kunit.ktap"
suites_list="$RSW_RUN/kunit.suites"
driver="$RSW_OUT/drivers/rdmap_sw/rdmap_sw.ko"
failures=0

say() { echo "kunit-guest: $*"; }
bad() {
	echo "kunit-guest: FAIL: $*"
	failures=$((failures + 1))
}

modname() { local n=${1##*/}; n=${n%.ko}; echo "${n//-/_}"; }
loaded() { [ -d "/sys/module/$(modname "$1")" ]; }

# Load what a .ko file depends on: our own modules by path, the rest by name.
load_deps() {
	local ko=$1 dep deps
	deps=$(modinfo -F depends "$ko") || return 1
	for dep in ${deps//,/ }; do
		loaded "$dep" && continue
		if [ "$(modname "$dep")" = rdmap_sw ]; then
			insmod "$driver" || return 1
		else
			modprobe "$dep" || return 1
		fi
	done
}

suite_dirs() { printf '%s\n' "$dbg"/kunit/*/; }

# Append the KTAP results of the suites that appeared in debugfs since $1.
collect_suites() {
	local before=$1 mod=$2 d s n=0
	for d in "$dbg"/kunit/*/; do
		grep -qxF -- "$d" <<<"$before" && continue
		s=$(basename "$d")
		if [ ! -r "$dbg/kunit/$s/results" ]; then
			bad "$mod: suite $s has no results file"
			continue
		fi
		cat "$dbg/kunit/$s/results" >>"$ktap"
		echo "$mod $s" >>"$suites_list"
		say "$mod: suite $s: $(grep -cE '^    ok ' "$dbg/kunit/$s/results") ok," \
			"$(grep -cE '^    not ok ' "$dbg/kunit/$s/results") not ok"
		n=$((n + 1))
	done
	[ "$n" -gt 0 ] || bad "$mod: loaded but registered no KUnit suite"
}

run_suite_module() {
	local ko=$1 mod before
	mod=$(modname "$ko")
	say "loading $mod"
	before=$(suite_dirs)
	if ! load_deps "$ko" || ! insmod "$ko"; then
		bad "$mod failed to load"
		return
	fi
	collect_suites "$before" "$mod"
	rmmod "$mod" || bad "rmmod $mod failed"
}

# kmemleak only reports objects older than 5 s: this wait is deliberate.
check_kmemleak() {
	local report
	if [ ! -w "$dbg/kmemleak" ]; then
		bad "no $dbg/kmemleak (kmemleak disabled?)"
		return
	fi
	say "waiting 6 s so that freed-late objects age past kmemleak's 5 s"
	sleep 6
	if ! echo scan >"$dbg/kmemleak" || ! echo scan >"$dbg/kmemleak"; then
		bad "kmemleak scan failed (kmemleak disabled itself?)"
		return
	fi
	report=$(cat "$dbg/kmemleak")
	if [ -n "$report" ]; then
		echo "$report"
		echo "$report" >"$RSW_RUN/kmemleak.txt"
		bad "kmemleak reports unreferenced objects (above)"
	else
		say "kmemleak: no leaks"
	fi
}

mountpoint -q "$dbg" || mount -t debugfs debugfs "$dbg" || exit 1
: >"$ktap"
: >"$suites_list"

say "kernel $(uname -r), modules from $RSW_OUT"
modprobe kunit || { bad "modprobe kunit failed"; exit 1; }
[ -d "$dbg/kunit" ] || { bad "kernel has no KUnit debugfs ($dbg/kunit)"; exit 1; }
if ! load_deps "$driver" || ! insmod "$driver"; then
	bad "rdmap_sw.ko failed to load"
	exit 1
fi
say "rdmap_sw loaded"

mapfile -t kos <"$RSW_RUN/kunit.modules"
[ ${#kos[@]} -gt 0 ] || bad "no suite modules listed in $RSW_RUN/kunit.modules"
for ko in "${kos[@]}"; do
	run_suite_module "$ko"
done

rmmod rdmap_sw || bad "rmmod rdmap_sw failed"
check_kmemleak
dmesg >"$RSW_RUN/dmesg.txt" 2>/dev/null

if [ "$failures" -gt 0 ]; then
	say "$failures failure(s)"
	exit 1
fi
say "all suite modules loaded and unloaded cleanly"
