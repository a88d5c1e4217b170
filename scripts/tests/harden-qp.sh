#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# QP rules of issue 10 through the user ABI, over the loopback of one
# guest: the QP's own access flags are enforced on the peer's Writes and
# Read Requests (defect 8: a Terminate, both QPs in ERR, memory untouched;
# success with the flag), and a connected QP cannot go back to RESET while
# its stream still runs (defect 10).  qp-access does the checks.
#
#   scripts/build debug && scripts/rdma-core provider &&
#   scripts/vm --kernel debug --timeout 900 -- scripts/tests/harden-qp.sh
#
#   rsw0 (rdmap_sw) --- dummy0 192.0.2.1/24; both ends in this guest
#
# RSW_STRESS=1 runs qp-access 10 times (new connections each time).
# shellcheck source=scripts/tests/lib.sh
. "$(dirname "$0")/lib.sh"

: "${RSW_OUT:?run me through scripts/vm}"
DEV=rsw0
NETDEV=dummy0
IP=192.0.2.1
[ "${RSW_KERNEL:-}" != debug ] || T_CMD_TIMEOUT=300

rdma_core_use qp-access
PROG=$RSW_RDMA_PROVIDER_BUILD/qp-access

t_banner
rsw_dummy_up "$DEV" "$NETDEV" "$IP/24"

rounds=1
[ "${RSW_STRESS:-0}" = 0 ] || rounds=10
for i in $(seq "$rounds"); do
	step "qp-access round $i: access flags, RESET under a live stream"
	check "$PROG" "$IP" $((7490 + i))
	assert_no_match "$T_OUT" '^not ok' "qp-access checks"
	assert_match "$T_OUT" '^# [0-9]+ checks, 0 failed' "qp-access summary"
done

step "no QP left on $DEV"
no_qps() { [ -z "$(rdma res show qp link "$DEV/1")" ]; }
poll_until 20 "no QP left on $DEV" no_qps

rsw_dummy_down "$DEV" "$NETDEV"
echo "harden-qp: PASS"
