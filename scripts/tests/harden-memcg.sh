#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# User-sized kernel memory is charged to the user (issue 10, defect 7): a
# process in a memory cgroup with a small memory.max that asks for a huge
# CQ, or for QPs with huge rings, or resizes a small CQ to a huge one, gets
# ENOMEM (the resized CQ stays as it was), while the same requests outside
# the cgroup succeed.  Needs CGROUPS and MEMCG (Debian's kernels
# and the debug kernel have them).
#
#   scripts/build 6.12 && scripts/rdma-core provider &&
#   scripts/vm --kernel 6.12 --timeout 600 -- scripts/tests/harden-memcg.sh
#
#   rsw0 (rdmap_sw) --- dummy0 192.0.2.1/24
#
# Sizes: a CQ of 4 Mi entries is ~128 MiB (the ring; a user CQ has no
# back-pointer array); a QP of 16 Ki send and receive entries ~10 MiB;
# the cgroup gets 48 MiB.
# shellcheck source=scripts/tests/lib.sh
. "$(dirname "$0")/lib.sh"

: "${RSW_OUT:?run me through scripts/vm}"
DEV=rsw0
NETDEV=dummy0
IP=192.0.2.1
CG=/sys/fs/cgroup
GROUP=$CG/rsw-memcg
LIMIT=48M
CQE=4194304
QP_WR=16384
QPS=16

rdma_core_use memcg-alloc
PROG=$RSW_RDMA_PROVIDER_BUILD/memcg-alloc

t_banner
grep -qw memory /proc/cgroups ||
	fail "this kernel has no memory cgroup controller (CONFIG_MEMCG)"
rsw_dummy_up "$DEV" "$NETDEV" "$IP/24"

step "a memory cgroup with memory.max $LIMIT"
mountpoint -q "$CG" || check mount -t cgroup2 none "$CG"
check sh -c "echo +memory > $CG/cgroup.subtree_control"
check mkdir -p "$GROUP"
check sh -c "echo $LIMIT > $GROUP/memory.max"
[ ! -e "$GROUP/memory.swap.max" ] || check sh -c "echo 0 > $GROUP/memory.swap.max"

# in_group CMD...: run CMD as a member of the cgroup; its exit status.
in_group() {
	sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$GROUP" "$@"
}

# expect_status WANT CMD...: run CMD, print its output, status must be WANT.
expect_status() {
	local want=$1 rc=0
	shift
	printf '    $ %s   (exit %s expected)\n' "$*" "$want"
	T_OUT=$(t_run "$@" 2>&1) || rc=$?
	printf '%s\n' "$T_OUT" | tail -n 4 | indent
	[ "$rc" -eq "$want" ] || fail "exit status $rc, want $want: $*"
	ok "exit status $rc"
}

step "outside the cgroup: a CQ of $CQE entries is created"
expect_status 0 "$PROG" "$DEV" cq "$CQE"

step "inside the cgroup: the same CQ fails with ENOMEM"
expect_status 3 in_group "$PROG" "$DEV" cq "$CQE"
assert_match "$T_OUT" '^result: ENOMEM after 0' "CQ refused"

step "outside the cgroup: a CQ of 16 entries is resized to $CQE"
expect_status 0 "$PROG" "$DEV" resize "$CQE"

step "inside the cgroup: the same resize fails with ENOMEM, the CQ kept"
expect_status 3 in_group "$PROG" "$DEV" resize "$CQE"
assert_match "$T_OUT" '^result: ENOMEM after 0' "resize refused"
assert_match "$T_OUT" '^CQ of [0-9]+ entries kept$' "old ring kept"

step "outside the cgroup: $QPS QPs of $QP_WR entries are created"
expect_status 0 "$PROG" "$DEV" qp "$QP_WR" "$QPS"

step "inside the cgroup: ENOMEM before $QPS such QPs"
expect_status 3 in_group "$PROG" "$DEV" qp "$QP_WR" "$QPS"
assert_match "$T_OUT" '^result: ENOMEM after [0-9]+' "QPs refused"

step "the limit was enforced by failing, not by the OOM killer"
check cat "$GROUP/memory.events"
assert_match "$T_OUT" '^oom_kill 0$' "no OOM kill in the cgroup"
check rmdir "$GROUP"

step "no QP or CQ left on $DEV"
no_qps() { [ -z "$(rdma res show qp link "$DEV/1")" ]; }
poll_until 20 "no QP left on $DEV" no_qps

rsw_dummy_down "$DEV" "$NETDEV"
echo "harden-memcg: PASS"
