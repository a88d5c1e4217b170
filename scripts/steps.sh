# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# The step runner of scripts/check and scripts/stress.  Source it after
# scripts/lib.sh with the suite's name:
#
#   . "$RSW_TOP/scripts/steps.sh" check
#
# step NAME CMD... runs CMD with its output in $logdir/NAME.log and records
# PASS, FAIL or SKIP; skip NAME WHY records a step not run; summary prints
# every verdict, the total wall time, the five slowest steps and the line
# "N passed, N failed, N skipped" that CI reads.
#
# RSW_STEPS=ERE runs only the steps whose names match (and the set-up and
# build steps everything needs): e.g. RSW_STEPS='^vm2-nfs-' make stress.
# A group runs whole if its boot or any member matches.  Steps left out
# are no verdict of any kind: the summary counts them on a line of their
# own, and a selected run never stands for the whole suite.
RSW_SUITE=$1
logdir="$RSW_CACHE/$RSW_SUITE/$(date +%Y%m%d-%H%M%S)"
mkdir -p "$logdir"
# Keep a week of step logs.
find "$RSW_CACHE/$RSW_SUITE" -mindepth 1 -maxdepth 1 -mtime +7 -exec rm -rf {} +
passed=0 failed=0 skipped=0 retries=0
declare -a results=() retry_steps=()
t_start=$SECONDS

declare -A step_secs=()
deselected=0

# selected NAME...: whether any NAME is to run under RSW_STEPS.
selected() {
	local n
	[ -n "${RSW_STEPS:-}" ] || return 0
	for n in "$@"; do
		case "$n" in
		setup | debug-kernel | build-* | rdma-core | siw) return 0 ;;
		esac
		[[ "$n" =~ $RSW_STEPS ]] && return 0
	done
	return 1
}

# inner_skips LOG: the "SKIP: reason" lines a step printed (guest tests'
# skip(), scripts/vm for a check it did not make, kunit for skipped cases).
inner_skips() {
	tr -d '\r' <"$1" | sed -n 's/^SKIP: //p' | sort -u
}

# inner_retries LOG: how many "RETRY: why" lines a step printed (a boot
# tried again, a perftest run its tool spoiled): a retry is a verdict too,
# so every one is counted and shown.
inner_retries() {
	tr -d '\r' <"$1" | grep -c '^RETRY: '
}

# have_debug: the debug kernel is built.
have_debug() { [ -e "$RSW_CACHE/debug/current" ]; }

# vm_data KERNEL TIMEOUT CMD...: a data-path guest test (2 GiB of memory).
vm_data() { scripts/vm --kernel "$1" --mem 2048 --timeout "$2" -- "${@:3}"; }

# record NAME RC SECS: the verdict of a step whose output is in
# $logdir/NAME.log.  A step that exits 0 but skipped part of its checks is
# reported and counted as skipped, never as passed; one that exits non-zero
# fails whatever it printed.
record() {
	local name=$1 rc=$2 secs=$3 skips n
	step_secs[$name]=$secs
	skips=$(inner_skips "$logdir/$name.log")
	n=$(inner_retries "$logdir/$name.log")
	if [ "$n" -gt 0 ]; then
		retries=$((retries + n))
		retry_steps+=("$name: $n ($(tr -d '\r' <"$logdir/$name.log" | sed -n 's/^RETRY: //p' | sort | uniq -c | sed 's/^ *//' | paste -sd';'))")
	fi
	if [ "$rc" -ne 0 ]; then
		failed=$((failed + 1))
		results+=("FAIL  $name ($secs s, rc=$rc, log $logdir/$name.log)")
		tail -n 40 "$logdir/$name.log" | sed "s/^/  $name| /" >&2
	elif [ -n "$skips" ]; then
		skipped=$((skipped + 1))
		results+=("SKIP  $name ($secs s, ran but skipped: $(paste -sd';' <<<"$skips"))")
	else
		passed=$((passed + 1))
		results+=("PASS  $name ($secs s$([ "$n" -eq 0 ] || echo ", $n retries"))")
	fi
	rsw_log "=== $name: ${results[-1]%% *} in $secs s"
}

# step NAME CMD... : run CMD, log to $logdir/NAME.log, record its verdict.
step() {
	local name=$1 t0=$SECONDS rc
	shift
	if ! selected "$name"; then
		deselected=$((deselected + 1))
		return 0
	fi
	rsw_log "=== $name: $*"
	"$@" >"$logdir/$name.log" 2>&1
	rc=$?
	record "$name" "$rc" "$((SECONDS - t0))"
	return $rc
}

# group BOOT VMARGS... -- NAME CMD... [-- NAME CMD...]: one scripts/vm boot
# (log $logdir/BOOT.log) running the members with scripts/tests/group.sh;
# each member gets its own verdict and log, as if it were a step of its
# own.  A boot that fails although every member passed (kmemleak, a bug
# report after the last member) is a failure of its own, named BOOT.
group() {
	local boot=$1 t0=$SECONDS rc=0 run name mrc secs a all_ok=1 vmargs=() names=() prev=--
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do vmargs+=("$1"); shift; done
	shift
	for a in "$@"; do
		[ "$prev" != -- ] || names+=("$a")
		prev=$a
	done
	if ! selected "$boot" "${names[@]}"; then
		deselected=$((deselected + ${#names[@]}))
		return 0
	fi
	mkdir -p "$RSW_CACHE/runs"
	run=$(mktemp -d "$RSW_CACHE/runs/$boot.XXXXXX")
	rsw_log "=== $boot: one boot for ${names[*]}"
	scripts/vm "${vmargs[@]}" --run-dir "$run" -- scripts/tests/group.sh "$@" \
		>"$logdir/$boot.log" 2>&1 || rc=$?
	for name in "${names[@]}"; do
		if [ -r "$run/group/$name.rc" ]; then
			mrc=$(cat "$run/group/$name.rc") secs=$(cat "$run/group/$name.secs")
			cp "$run/group/$name.log" "$logdir/$name.log"
		else
			mrc=125 secs=0
			echo "no verdict: the boot ended before $name finished (see $logdir/$boot.log)" >"$logdir/$name.log"
		fi
		[ "$mrc" -eq 0 ] || all_ok=0
		record "$name" "$mrc" "$secs"
	done
	# The boot's own verdict and skips (members' lines carry a [NAME]
	# prefix in its log, so a SKIP there is scripts/vm's own).
	if { [ "$rc" -ne 0 ] && [ "$all_ok" -eq 1 ]; } ||
		[ -n "$(inner_skips "$logdir/$boot.log")" ]; then
		[ "$all_ok" -eq 0 ] && rc=0
		record "$boot" "$rc" "$((SECONDS - t0))"
	else
		rsw_log "=== $boot: boot done in $((SECONDS - t0)) s (rc=$rc)"
	fi
}

skip() {
	if ! selected "$1"; then
		deselected=$((deselected + 1))
		return 0
	fi
	skipped=$((skipped + 1))
	results+=("SKIP  $1: $2")
	rsw_log "=== $1: SKIP ($2)"
}

# The closing lines: every step's verdict, the total wall time, the five
# slowest steps, and the count line CI reads.
summary() {
	local n
	echo
	echo "make $RSW_SUITE summary (logs in $logdir):"
	printf '  %s\n' "${results[@]}"
	echo "total wall time: $((SECONDS - t_start)) s ($(((SECONDS - t_start + 30) / 60)) min)"
	echo "slowest steps:"
	for n in "${!step_secs[@]}"; do
		printf '%6d s  %s\n' "${step_secs[$n]}" "$n"
	done | sort -rn | head -n 5
	echo "retries: $retries"
	[ "$retries" -eq 0 ] || printf '  %s\n' "${retry_steps[@]}"
	[ -z "${RSW_STEPS:-}" ] ||
		echo "deselected: $deselected steps not run (RSW_STEPS='$RSW_STEPS'): a partial run"
	echo "$passed passed, $failed failed, $skipped skipped"
}

