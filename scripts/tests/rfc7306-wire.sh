#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# RFC 7306 on the wire: Atomic Request/Response and Immediate Data as
# rdmap_sw sends them, checked field by field by a decoder written from the
# draft (scripts/tests/rfc7306-wire.py), with MPA CRC on and off.
#
#   scripts/build 6.12 && scripts/rdma-core provider &&
#   scripts/vm --kernel 6.12 --timeout 600 -- scripts/tests/rfc7306-wire.sh
#
# The guest has no tcpdump: the decoder's own AF_PACKET capture on lo (the
# dummy netdev's local address is looped back there) records the TCP
# segments of ext-verbs' port into a pcap while ext-verbs runs every new
# verb (RSW_EXT_WIRE_LOG: what it posted and got back); the decoder then
# reassembles each connection, skips the MPA Request/Reply and checks every
# FPDU: MPA length, PAD and CRC (CRC32c when on, zero when off), DDP/RDMAP
# control (T, L, DV, RV, reserved bits), QN, MSN sequence per queue, MO,
# the Atomic Request header (reserved, AOpCode, Request Identifier, STag,
# TO, operands big-endian, masks as section 5.2.1 and the issue want),
# the Atomic Response (the identifier echoed, the original value the
# requester got), Immediate Data (8 octets, the posted 32 bits first,
# after the Write of a Write with Immediate), and a Terminate instead of a
# response for a refused atomic.  The pcaps stay in $RSW_RUN/rfc7306-wire/
# (tshark knows none of these opcodes).
# shellcheck source=scripts/tests/lib.sh
. "$(dirname "$0")/lib.sh"

: "${RSW_OUT:?run me through scripts/vm}"
DEV=rsw0
NETDEV=dummy0
IP=192.0.2.1
# Racing increments per side in ext-verbs (every one is decoded).
N=${RSW_WIRE_N:-200}
DEC=$RSW_TOP/scripts/tests/rfc7306-wire.py
# The device's CRC policy (a setting new connections read).
PARAM=/sys/class/infiniband/$DEV/mpa_crc

rdma_core_use ext-verbs
LOGS=$RSW_RUN/rfc7306-wire
mkdir -p "$LOGS"
command -v python3 >/dev/null || fail "python3 is not installed"

t_banner

step "decoder self-test: CRC32c vectors, corrupted fields caught"
check python3 "$DEC" selftest

rsw_dummy_up "$DEV" "$NETDEV" "$IP/24"

CAP_PID=
stop_capture() {
	[ -n "$CAP_PID" ] || return 0
	kill -TERM "$CAP_PID" 2>/dev/null || true
	local rc=0
	wait "$CAP_PID" || rc=$?
	CAP_PID=
	indent <"$LOGS/capture-$1.log"
	[ "$rc" -eq 0 ] || fail "capture exit status $rc (packets dropped?)"
}
# A failed step leaves no capture running (the device goes with rsw0).
trap 'stop_capture x >/dev/null 2>&1 || true' EXIT

port=7500
for crc in on off; do
	port=$((port + 1))
	step "MPA CRC $crc: capture lo (port $port) while ext-verbs runs (N=$N)"
	echo "$crc" >"$PARAM" || fail "echo $crc > $PARAM"
	assert_file "$PARAM" "$crc"
	rm -f "$LOGS/ready-$crc"
	python3 "$DEC" capture --iface lo --port "$port" \
		--out "$LOGS/crc-$crc.pcap" --ready "$LOGS/ready-$crc" \
		>"$LOGS/capture-$crc.log" 2>&1 &
	CAP_PID=$!
	poll_until 20 "capture ready" test -e "$LOGS/ready-$crc"
	check env RSW_EXT_WIRE_LOG="$LOGS/posted-$crc.log" \
		"$RSW_RDMA_PROVIDER_BUILD/ext-verbs" "$DEV" "$IP" "$port" "$N"
	assert_match "$T_OUT" "^# [0-9]+ checks, 0 failed" "ext-verbs verdict"
	# Segments still in the socket: the capture drains until quiet.
	t_sleep 1
	stop_capture "$crc"

	step "MPA CRC $crc: decode and check every FPDU"
	check python3 "$DEC" decode --port "$port" --pcap "$LOGS/crc-$crc.pcap" \
		--crc "$crc" --log "$LOGS/posted-$crc.log"
	assert_match "$T_OUT" "checks in [0-9]+ kinds, 0 failed" "decoder verdict"
done
echo on >"$PARAM"

rsw_dummy_down "$DEV" "$NETDEV"
