# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Helpers for tests that run inside a scripts/vm guest.  Source it:
#
#   . "$(dirname "$0")/lib.sh"
#
# Output contract: every step prints one "==> [test N] what" line, every
# command a check runs is echoed as "    $ cmd" with its output indented, and
# the first failed check prints "FAIL: [test step N: what] why" plus the tail
# of the kernel log and exits 1.  Waiting is always polling with a deadline
# (poll_until), never a fixed sleep.

set -euo pipefail

T_NAME=${0##*/}
T_START_MS=$((${EPOCHREALTIME/[.,]/} / 1000))
T_STEP=0
T_WHAT=
# Upper bound for any single command run by check/check_fails (seconds).
T_CMD_TIMEOUT=${T_CMD_TIMEOUT:-60}
# The host scripts' helpers (rsw_siw_dir ...) and RSW_BUG_RE, the kernel log
# lines that fail a test: one list for scripts/vm, scripts/kunit and
# dmesg_clean.  scripts/vm exports RSW_TOP.
# shellcheck source=scripts/lib.sh
. "${RSW_TOP:?run me through scripts/vm}/scripts/lib.sh"
T_BUG_RE=$RSW_BUG_RE

step() {
	t_now
	local ms=$((T_NOW - T_START_MS))
	T_STEP=$((T_STEP + 1))
	T_WHAT="$*"
	printf '==> [%s %d] %s  (t=%d.%01ds)\n' "$T_NAME" "$T_STEP" "$*" \
		$((ms / 1000)) $((ms % 1000 / 100))
}

note() { printf '    %s\n' "$*"; }
ok() { printf '    ok: %s\n' "$*"; }
skip() { printf 'SKIP: %s\n' "$*"; }

fail() {
	printf 'FAIL: [%s step %d: %s] %s\n' "$T_NAME" "$T_STEP" "$T_WHAT" "$*"
	echo '---- last kernel messages ----'
	dmesg 2>/dev/null | tail -n 30 || true
	echo '----'
	exit 1
}

# Milliseconds on a monotonic-enough clock (bash 5 EPOCHREALTIME).
now_ms() {
	local t=${EPOCHREALTIME/[.,]/}
	echo $((t / 1000))
}
# t_now: the same into T_NOW, without the subshell $(now_ms) costs (a fork
# is tens of ms in a TCG guest running the debug kernel; helpers called for
# every command and every poll avoid them).
t_now() {
	local t=${EPOCHREALTIME/[.,]/}
	T_NOW=$((t / 1000))
}

# t_sleep SECONDS: sleep(1) without its exec, for polling loops: a read
# that times out on a FIFO nobody writes (opened once, read-write so the
# open does not block).
T_SLEEP_FD=
t_sleep() {
	if [ -z "$T_SLEEP_FD" ]; then
		local f=/tmp/.t_sleep.$$.$BASHPID
		if ! mkfifo -m 600 "$f" || ! exec {T_SLEEP_FD}<>"$f"; then
			T_SLEEP_FD=
			rm -f "$f"
			sleep "$1"
			return 0
		fi
		rm -f "$f"
	fi
	read -r -t "$1" -u "$T_SLEEP_FD" _ || true
}

indent() { sed 's/^/      /'; }
# indent_text TEXT: TEXT indented like indent's, by the shell itself (a
# pipe into sed is two forks and an exec: 0.3 s a command on the debug
# guest).
indent_text() {
	local lines
	mapfile -t lines <<<"$1"
	printf '      %s\n' "${lines[@]}"
}

# Run "$@" with the per-command time limit; shell functions and builtins
# run directly.
t_run() {
	if declare -F -- "$1" >/dev/null || [[ " $T_BUILTINS " == *" $1 "* ]]; then
		"$@"
	else
		timeout -k 5 "$T_CMD_TIMEOUT" "$@"
	fi
}
T_BUILTINS=$(compgen -b -k | tr '\n' ' ')

# check CMD...: CMD must succeed.  Its output is printed and kept in T_OUT.
check() {
	local rc=0
	printf '    $ %s\n' "$*"
	T_OUT=$(t_run "$@" 2>&1) || rc=$?
	[ -z "$T_OUT" ] || indent_text "$T_OUT"
	[ "$rc" -eq 0 ] || fail "exit status $rc from: $*"
}

# check_fails CMD...: CMD must fail (but not time out).
check_fails() {
	local rc=0
	printf '    $ %s   (must fail)\n' "$*"
	T_OUT=$(t_run "$@" 2>&1) || rc=$?
	[ -z "$T_OUT" ] || indent_text "$T_OUT"
	[ "$rc" -ne 0 ] || fail "succeeded but must fail: $*"
	[ "$rc" -ne 124 ] || fail "timed out (${T_CMD_TIMEOUT}s): $*"
	ok "failed as expected (exit $rc)"
}

assert_eq() {
	# ACTUAL EXPECTED WHAT
	[ "$1" = "$2" ] || fail "$3: got '$1', want '$2'"
	ok "$3 = '$2'"
}

assert_match() {
	# TEXT EXTENDED-REGEX WHAT
	grep -Eq -- "$2" <<<"$1" || fail "$3: '$1' does not match /$2/"
	ok "$3 matches /$2/"
}

assert_no_match() {
	# TEXT EXTENDED-REGEX WHAT
	! grep -Eq -- "$2" <<<"$1" || fail "$3: '$1' matches /$2/"
	ok "$3 does not match /$2/"
}

# assert_file FILE EXPECTED: a (sysfs) file holds exactly EXPECTED.
assert_file() {
	local v
	[ -r "$1" ] || fail "$1 does not exist"
	v=$(<"$1") || fail "cannot read $1"
	assert_eq "$v" "$2" "$1"
}

# poll_until SECONDS WHAT CMD...: run CMD until it succeeds; fail after
# SECONDS.  The interval starts at 10 ms and doubles up to 200 ms.
poll_until() {
	local limit=$1 what=$2 start deadline delay=0.01 tries=0 out
	shift 2
	t_now
	start=$T_NOW
	deadline=$((start + limit * 1000))
	until out=$("$@" 2>&1); do
		tries=$((tries + 1))
		t_now
		if [ "$T_NOW" -ge "$deadline" ]; then
			note "last attempt ($*):"
			[ -z "$out" ] || indent_text "$out"
			fail "timed out after ${limit}s waiting for: $what"
		fi
		t_sleep "$delay"
		case "$delay" in
		0.01) delay=0.02 ;; 0.02) delay=0.05 ;; 0.05) delay=0.1 ;; *) delay=0.2 ;;
		esac
	done
	t_now
	ok "$what (after $((T_NOW - start)) ms, $tries retries)"
}

# t_ping ARGS...: iputils ping when installed, else busybox's (same options
# -n -c -W -i; the summary says "N received" or "N packets received").
t_ping() {
	if command -v ping >/dev/null; then
		ping "$@"
	else
		busybox ping "$@"
	fi
}

# Shared set-up steps, each in two flavours: t_* print every command they
# run and return non-zero at the first failure (make bench records that and
# goes on); the wrappers without t_ run them through check, so a failure
# fails the test.

# t_cmd CMD...: print "$ CMD", run it with the per-command time limit.
t_cmd() {
	printf '$ %s\n' "$*"
	timeout -k 5 "$T_CMD_TIMEOUT" "$@"
}

# wait_for SECONDS CMD...: poll CMD (10 ms doubling to 200 ms) until it
# succeeds; status 1 after SECONDS.  Quiet; poll_until is the failing kind.
wait_for() {
	local deadline delay=0.01
	t_now
	deadline=$((T_NOW + $1 * 1000))
	shift
	until "$@" >/dev/null 2>&1; do
		t_now
		[ "$T_NOW" -lt "$deadline" ] || return 1
		t_sleep "$delay"
		case "$delay" in
		0.01) delay=0.02 ;; 0.02) delay=0.05 ;; 0.05) delay=0.1 ;; *) delay=0.2 ;;
		esac
	done
}

# t_insmod_deps KO [PARAM=VALUE...]: load the modules KO depends on
# (modinfo's list, by name, as modprobe would from an installed tree), then
# KO itself with the PARAMs.
t_insmod_deps() {
	local ko=$1 deps
	shift
	deps=$(modinfo -F depends "$ko") || return
	# shellcheck disable=SC2086 # one word per module
	[ -z "$deps" ] || t_cmd modprobe -a ${deps//,/ } || return
	t_cmd insmod "$ko" "$@"
}
insmod_deps() { check t_insmod_deps "$@"; }

# t_dummy_netdev NAME [CIDR]: a new dummy netdev, up, with the IPv4
# address CIDR if given (the dummy module loaded with numdummies=0).
t_dummy_netdev() {
	t_cmd ip link add "$1" type dummy || return
	[ -z "${2:-}" ] || t_cmd ip addr add "$2" dev "$1" || return
	t_cmd ip link set "$1" up
}
dummy_netdev() { check t_dummy_netdev "$@"; }

# port_active DEV: port 1 of RDMA device DEV is ACTIVE.
port_active() { file_is "/sys/class/infiniband/$1/ports/1/state" "4: ACTIVE"; }

# t_rdma_attach DEV TYPE NETDEV: rdma link add DEV type TYPE netdev NETDEV,
# then port 1 ACTIVE within 10 s.
t_rdma_attach() {
	t_cmd rdma link add "$1" type "$2" netdev "$3" || return
	wait_for 10 port_active "$1" ||
		{ echo "$1 port 1 not ACTIVE after 10 s"; return 1; }
	echo "$1 port 1 ACTIVE"
}
rdma_attach() { check t_rdma_attach "$@"; }

# uverbs_ready DEV: uverbs has published a character device for DEV (for
# poll_until).
uverbs_ready() {
	local d
	for d in /sys/class/infiniband_verbs/uverbs*; do
		[ -r "$d/ibdev" ] && [ "$(<"$d/ibdev")" = "$1" ] &&
			[ -c "/dev/infiniband/${d##*/}" ] && return 0
	done
	return 1
}

# file_is FILE VALUE: for poll_until.
# (Reads with $(<FILE), not cat: under TCG every exec over 9p costs tenths of
# a second, and polls and the device tests read sysfs hundreds of times.)
file_is() { [ -r "$1" ] && [ "$(<"$1")" = "$2" ]; }

# gone PATH: for poll_until.
gone() { [ ! -e "$1" ]; }

# dmesg_clean: the kernel log holds no bug report.
dmesg_clean() {
	local hits
	hits=$(dmesg | grep -E "$T_BUG_RE" || true)
	[ -z "$hits" ] || { printf '%s\n' "$hits" | indent; fail "kernel log has bug reports"; }
	ok "no bug reports in the kernel log"
}

# barrier NAME SECONDS: scripts/vm2 guests wait for each other through the
# shared run directory ($RSW_SHARE); $RSW_VMS names every guest.
barrier() {
	local name=$1 limit=$2
	if [ -z "${RSW_SHARE:-}" ] || [ -z "${RSW_VMS:-}" ]; then
		fail "barrier needs RSW_SHARE and RSW_VMS (run under scripts/vm2)"
	fi
	: >"$RSW_SHARE/.barrier-$name-${RSW_VM:?}"
	poll_until "$limit" "barrier '$name' reached by $RSW_VMS" t_all_arrived "$name"
	if compgen -G "$RSW_SHARE/.failed-*" >/dev/null; then
		fail "barrier '$name': $(cd "$RSW_SHARE" && echo .failed-* | sed 's/\.failed-//g') failed (scripts/vm2), no point waiting"
	fi
}

# All arrived, or one of the guests ended in failure already (scripts/vm2
# leaves .failed-<vm>): barrier() then fails instead of waiting it out.
t_all_arrived() {
	local vm
	! compgen -G "$RSW_SHARE/.failed-*" >/dev/null || return 0
	for vm in $RSW_VMS; do
		[ -e "$RSW_SHARE/.barrier-$1-$vm" ] || return 1
	done
}

# rdma_core_own_provider: libibverbs loads this checkout's provider first.
# The build's etc/libibverbs.d/rdmap_sw.driver names the copy installed
# into the shared rdma-core build, which the last checkout to build
# (another worktree, a CI clone) wrote; a driver named in RDMAV_DRIVERS is
# loaded before the config file's, and the first registered driver that
# matches a device claims it.
rdma_core_own_provider() {
	export RDMAV_DRIVERS=$RSW_RDMA_DRIVER
}

# rdma_core_use TOOL...: this test uses the rdma-core 56.1 build
# (scripts/rdma-core env: RSW_RDMA_BIN, RSW_RDMA_PROVIDER_BUILD, ...): its
# libraries first in LD_LIBRARY_PATH, B=$RSW_RDMA_BIN, and each TOOL (a
# file in its bin/ or in the provider's test build) built, else fail.
rdma_core_use() {
	local tool
	eval "$("$RSW_TOP/scripts/rdma-core" env)"
	export LD_LIBRARY_PATH=$RSW_RDMA_LIB
	rdma_core_own_provider
	# shellcheck disable=SC2034 # the callers' name for the tools' directory
	B=$RSW_RDMA_BIN
	for tool in "$@"; do
		[ -x "$RSW_RDMA_BIN/$tool" ] || [ -x "$RSW_RDMA_PROVIDER_BUILD/$tool" ] ||
			fail "$tool is not built (run scripts/rdma-core)"
	done
}

# bg NAME CMD...: run CMD in the background, bounded by $BG_TIMEOUT
# seconds (default 600), its output in $LOGS/NAME (the caller sets LOGS),
# its pid in PIDS[NAME].
declare -A PIDS
bg() {
	local name=$1
	shift
	printf '    $ %s &   (log %s)\n' "$*" "$LOGS/$name"
	timeout -k 5 "${BG_TIMEOUT:-600}" "$@" >"$LOGS/$name" 2>&1 &
	PIDS[$name]=$!
}

# Print where and on what the test runs.
t_banner() {
	printf '==> %s on %s (%s, kernel %s), %s\n' "$T_NAME" "$(hostname)" \
		"${RSW_KERNEL:-?}" "$(uname -r)" "$(date -u +%FT%TZ)"
}

# rsw_dummy_up DEV NETDEV ADDR/PREFIX: load the RDMA core, rdma_ucm and
# rdmap_sw ($RSW_OUT), put ADDR on a new dummy NETDEV and attach DEV to
# it, until its uverbs device is there (two steps).
rsw_dummy_up() {
	step "load the RDMA core and rdmap_sw"
	check modprobe -a ib_core ib_uverbs iw_cm rdma_cm rdma_ucm
	check modprobe dummy numdummies=0
	insmod_deps "$RSW_OUT/drivers/rdmap_sw/rdmap_sw.ko"

	step "$2 with $3, $1 attached to it"
	dummy_netdev "$2" "$3"
	rdma_attach "$1" rdmap_sw "$2"
	poll_until 10 "uverbs device for $1" uverbs_ready "$1"
}

# rsw_dummy_down DEV NETDEV: undo rsw_dummy_up; the kernel log is clean.
rsw_dummy_down() {
	step "detach and unload"
	check rdma link delete "$1"
	poll_until 5 "$1 gone" gone "/sys/class/infiniband/$1"
	check rmmod rdmap_sw
	check ip link delete "$2"
	dmesg_clean
}
