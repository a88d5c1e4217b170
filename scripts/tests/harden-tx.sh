#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Issue 10, defect 1: no memory is read for sending after its owner could
# have freed it.  dereg-race deregisters and unmaps the source of large
# Sends and RDMA Writes while the driver sends them, round after round,
# over the loopback of one guest.
#
#   scripts/build debug && scripts/rdma-core provider &&
#   scripts/vm --kernel debug --timeout 900 -- scripts/tests/harden-tx.sh
#
#   rsw0 (rdmap_sw) --- dummy0 192.0.2.1/24; both ends in this guest
#
# Fails on a KASAN report (a freed page read by sock_sendmsg(); the debug
# kernel panics on it), on bytes at the receiver that are neither the
# sender's pattern nor the untouched fill (a freed page reused while TCP
# copied from it), and on any other bug report in the kernel log.
# RSW_STRESS=1 runs ten times the rounds.  The kernel-MR half of the rule
# (invalidation waits for collected pieces) is KUnit's
# rdmap_sw_tx.tx_inval_waits_for_send (`scripts/kunit tx`).
# shellcheck source=scripts/tests/lib.sh
. "$(dirname "$0")/lib.sh"

: "${RSW_OUT:?run me through scripts/vm}"
DEV=rsw0
NETDEV=dummy0
IP=192.0.2.1
ROUNDS=${RSW_DEREG_ROUNDS:-40}
[ -z "${RSW_STRESS:-}" ] || ROUNDS=$((ROUNDS * 10))
T_CMD_TIMEOUT=$((60 + ROUNDS * 3))

rdma_core_use dereg-race
RACE=$RSW_RDMA_PROVIDER_BUILD/dereg-race

t_banner

rsw_dummy_up "$DEV" "$NETDEV" "$IP/24"

step "dereg-race: $ROUNDS rounds of dereg_mr + munmap under a 1 MiB Send/Write"
check "$RACE" "$DEV" "$IP" 7490 "$ROUNDS"
assert_no_match "$T_OUT" '^not ok' "dereg-race checks"

step "no QP left on $DEV"
no_qps() { [ -z "$(rdma res show qp link "$DEV/1")" ]; }
poll_until 10 "no QP left on $DEV" no_qps

rsw_dummy_down "$DEV" "$NETDEV"
