#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Memory windows through the user ABI (issue 12), over the loopback of one
# guest: type 1 and 2 windows bound by ibv_bind_mw, IBV_WR_BIND_MW and
# ibv_wr_bind_mw onto an MR with no remote rights of its own; the peer's
# Writes and Reads through them inside their range and rights succeed,
# outside them end the connection with a Terminate; a type 2 window
# refused through another connection's QP of the same PD; remote and local
# invalidation, binds refused, an MR deregistered under a window.  mw
# does the checks.
#
#   scripts/build debug && scripts/rdma-core provider &&
#   scripts/vm --kernel debug --timeout 900 -- scripts/tests/mw.sh
#
#   rsw0 (rdmap_sw) --- dummy0 192.0.2.1/24; both ends in this guest
# shellcheck source=scripts/tests/lib.sh
. "$(dirname "$0")/lib.sh"

: "${RSW_OUT:?run me through scripts/vm}"
DEV=rsw0
NETDEV=dummy0
IP=192.0.2.1
[ "${RSW_KERNEL:-}" != debug ] || T_CMD_TIMEOUT=300

rdma_core_use mw
PROG=$RSW_RDMA_PROVIDER_BUILD/mw
# This tree's provider, whatever another checkout installed into the
# shared rdma-core build last (libibverbs loads RDMAV_DRIVERS first).
export RDMAV_DRIVERS=$RSW_RDMA_PROVIDER_BUILD/librdmap_sw

t_banner
rsw_dummy_up "$DEV" "$NETDEV" "$IP/24"

step "mw: alloc, bind, access, invalidate, dealloc"
check "$PROG" "$IP" 7495
assert_no_match "$T_OUT" '^not ok' "mw checks"
assert_match "$T_OUT" '^# [0-9]+ checks, 0 failed' "mw summary"

step "no QP and no MR left on $DEV"
no_objs() {
	[ -z "$(rdma res show qp link "$DEV/1")" ] &&
		[ -z "$(rdma res show mr dev "$DEV")" ]
}
poll_until 20 "no QP and no MR left on $DEV" no_objs

rsw_dummy_down "$DEV" "$NETDEV"
echo "mw: PASS"
