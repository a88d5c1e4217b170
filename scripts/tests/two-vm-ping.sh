#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Both guests of scripts/vm2 run this: each pings the other over the virtual
# wire, then both wait at a barrier so that neither powers off while the
# other still needs it.
#
#   scripts/vm2 -- scripts/tests/two-vm-ping.sh -- scripts/tests/two-vm-ping.sh
# shellcheck source=scripts/tests/lib.sh
. "$(dirname "$0")/lib.sh"

t_banner
: "${RSW_ADDR:?run under scripts/vm2}" "${RSW_PEER_IP:?run under scripts/vm2}"

step "eth0 is up with $RSW_ADDR"
check ip -br addr show dev eth0
assert_match "$T_OUT" "UP .*${RSW_ADDR//./\\.}" "eth0"

step "the peer $RSW_PEER_IP answers a ping (deadline 120 s: it may still be booting)"
poll_until 120 "ping $RSW_PEER_IP" t_ping -c 1 -W 1 "$RSW_PEER_IP"

step "5 more pings, none lost"
check t_ping -c 5 -i 0.2 -W 2 "$RSW_PEER_IP"
assert_match "$T_OUT" " 5 (packets )?received, 0% packet loss" "ping summary"

step "the peer has its answers too"
barrier pinged 120

step "kernel log is clean"
dmesg_clean
echo "PASS: $T_NAME on $RSW_VM"
