#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Run several guest tests in one boot, each with its own verdict.
#
#   scripts/vm [...] -- scripts/tests/group.sh NAME CMD [ARGS...] [-- NAME CMD ...]...
#
# For each member, in order: its output goes to the console (each line
# prefixed with [NAME]) and to
# $RSW_RUN/group/NAME.log, its exit status to NAME.rc and its wall time to
# NAME.secs.  A member passes when it exits 0 and the kernel logged no bug
# report while it ran (the shared regex, on the lines that appeared since
# it started; scripts/vm still fails the whole boot on any report, and a
# WARN or oops ends the boot: panic_on_warn).  After a failed member the
# rest are not run (the guest is no longer in a known state) and get the
# status 126 with a note saying why.
#
# On the debug kernel with leak checking on (rsw.kmemleak=1), kmemleak is
# asked after every member, as scripts/vm-init does after a whole run: wait
# until what the member left is old enough to be reported (5 s), scan
# twice, and fail the member (status 124) on any report; then clear, so
# that the next member starts from nothing.  A leak is thus the verdict of
# the member that made it.  If kmemleak has switched itself off, the member
# fails as well (its leaks could not be looked for).  RSW_GROUP_LEAKS=boot
# leaves that to scripts/vm-init's scan at the end of the boot, which fails
# the boot (its own verdict, named after it) on any leak: each member
# scan costs 15-20 s on the debug kernel under TCG (a 6 s wait for the
# objects to age, two scans of ~5 s), which make check cannot afford for
# every member; the member is then found by running the boot's members
# with the default, RSW_GROUP_LEAKS=member.  Exit status: 0 when every member
# passed, else 1.  scripts/steps.sh (group) reads the files on the host.
set -uo pipefail
# shellcheck source=scripts/lib.sh
. "$RSW_TOP/scripts/lib.sh"

: "${RSW_RUN:?run me through scripts/vm}"
out=$RSW_RUN/group
mkdir -p "$out"

# Split "$@" at each "--" into members.
members=()
cur=''
for a in "$@"; do
	if [ "$a" = -- ]; then
		[ -z "$cur" ] || members+=("$cur")
		cur=''
	else
		cur+=" $(printf '%q' "$a")"
	fi
done
[ -z "$cur" ] || members+=("$cur")
[ ${#members[@]} -gt 0 ] || { echo "usage: group.sh NAME CMD... [-- NAME CMD...]" >&2; exit 2; }

KMEMLEAK=/sys/kernel/debug/kmemleak
leak_check=0
grep -qw 'rsw.kmemleak=1' /proc/cmdline && leak_check=1
case "${RSW_GROUP_LEAKS:-member}" in
member) ;;
boot) leak_check=0 ;;
*) echo "RSW_GROUP_LEAKS must be member or boot" >&2; exit 2 ;;
esac

# member_leaks NAME: 0 when kmemleak reports nothing new since the last
# clear (or leak checking is off); else 1, with the report in NAME's log.
member_leaks() {
	local name=$1 leaks
	[ "$leak_check" = 1 ] || return 0
	sleep 6
	if ! { echo scan >"$KMEMLEAK" && echo scan >"$KMEMLEAK"; } 2>/dev/null; then
		echo "FAIL: kmemleak refused to scan after $name (it is off): no leak check" |
			tee -a "$out/$name.log"
		return 1
	fi
	leaks=$(cat "$KMEMLEAK")
	echo clear >"$KMEMLEAK"
	[ -n "$leaks" ] || return 0
	printf '%s\n' "$leaks" | tee -a "$out/$name.log"
	echo "FAIL: kmemleak reports leaks after $name" | tee -a "$out/$name.log"
	return 1
}

# run_member NAME CMD...: one member; prints its verdict line.
run_member() {
	local name=$1 t0=$SECONDS lines rc=0 bugs
	shift
	lines=$(dmesg | wc -l)
	echo "==== group: $name: $*"
	"$@" 2>&1 | tee "$out/$name.log" | sed -u "s/^/[$name] /"
	rc=${PIPESTATUS[0]}
	bugs=$(dmesg | tail -n +"$((lines + 1))" | grep -E "$RSW_BUG_RE" || true)
	if [ "$rc" -eq 0 ] && [ -n "$bugs" ]; then
		printf '%s\n' "$bugs" | tee -a "$out/$name.log"
		echo "FAIL: kernel bug report while $name ran" | tee -a "$out/$name.log"
		rc=125
	fi
	if [ "$rc" -eq 0 ] && ! member_leaks "$name"; then
		rc=124
	fi
	echo "$((SECONDS - t0))" >"$out/$name.secs"
	echo "$rc" >"$out/$name.rc"
	echo "==== group: $name: exit $rc after $((SECONDS - t0)) s"
	return "$rc"
}

failed_at=''
for m in "${members[@]}"; do
	eval "set -- $m"
	name=$1
	shift
	if [ -n "$failed_at" ]; then
		echo "not run: $failed_at failed before it in the same boot" >"$out/$name.log"
		echo 0 >"$out/$name.secs"
		echo 126 >"$out/$name.rc"
		continue
	fi
	run_member "$name" "$@" || failed_at=$name
done
[ -z "$failed_at" ]
