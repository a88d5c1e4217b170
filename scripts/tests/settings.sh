#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Per-device runtime settings of rdmap_sw (sysfs attributes of the ib
# device, Documentation/admin.rst): defaults, validation, independence
# of devices, and what each does on the wire.
#
#   scripts/build debug && scripts/rdma-core &&
#   scripts/vm --kernel debug -- scripts/tests/settings.sh
#
#   dummy0 10.78.0.1 + rsw0: rping servers      (responder)
#   dummy1 10.78.0.2 + rsw1: rping clients, -I  (initiator)
#   traffic between the two local addresses flows over lo, where the MPA
#   sniffer of rdma-env.sh reads the Request and Reply frames.
#
# 1. rsw0, created with the module loaded as mpa_crc=N mpa_rev=1
#    peer_to_peer=N, starts with those; rsw1, created after the parameters
#    were set back, starts with theirs; neither changes with the other.
# 2. Every bad value is refused (EINVAL) and leaves the setting as it was;
#    good ones read back in canonical form.
# 3. On the wire, with a verified rping (-V) for each:
#    mpa_rev 1 on the initiator: Request and Reply are revision 1;
#    mpa_crc off on both: no C bit; required on the initiator: C;
#    the iw_cxgb4 profile (Read-only RTR offer) on the initiator against a
#    responder that accepts only Read: re_rtr_assert;
#    max_fpdu 128 on both: 65000-octet pings still verify;
#    mpa_markers 1 on the initiator: its Request has M, the Reply not
#    (Markers flow towards the initiator only), and 65000-octet pings
#    verify.
# 4. Dead-peer detection.  Control first: with dead_peer_s 0 a running
#    rping survives CONTROL_S seconds of every packet on lo dropped
#    (netem loss 100%) and goes on pinging once the loss is lifted.  Then
#    with dead_peer_s 5 on both, the same partition ends both rpings
#    within DEAD_BOUND_S seconds; afterwards a new rping works and the
#    kernel log is clean.
# shellcheck source=scripts/tests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=scripts/tests/rdma-env.sh
. "$(dirname "$0")/rdma-env.sh"

: "${RSW_OUT:?run me through scripts/vm}"
SRV=10.78.0.1 CLI=10.78.0.2
IB=/sys/class/infiniband
# The ends must notice within 5 s (TCP_USER_TIMEOUT) plus the rping's own
# reaction; generous for TCG and the debug kernel.
DEAD_BOUND_S=60
CONTROL_S=15
T_CMD_TIMEOUT=180
LOGS=$RSW_RUN/settings
mkdir -p "$LOGS"
rdma_core_use rping
t_banner

listening() { ss -Hltn "sport = :$1" | grep -q .; }
alive() { kill -0 "${PIDS[$1]}" 2>/dev/null; }
pings() { grep -c 'ping data' "$LOGS/$1" 2>/dev/null || true; }
pinging() { [ "$(pings "$1")" -ge "$2" ]; }

# rping_pair PORT SIZE: a verified rping of 10 pings of SIZE octets from
# rsw1 to rsw0 on PORT, under the MPA sniffer; T_OUT is its counts.
rping_pair() {
	local port=$1 size=$2
	re_mpa_watch_start "$port"
	bg "srv.$port" "$B/rping" -s -a "$SRV" -p "$port" -V -S "$size" -C 10
	poll_until 20 "rping server on $port" listening "$port"
	check "$B/rping" -c -I "$CLI" -a "$SRV" -p "$port" -V -S "$size" -C 10
	wait "${PIDS[srv.$port]}" || { cat "$LOGS/srv.$port"; fail "rping server on $port failed"; }
	check re_mpa_watch_stop
}

# expect KEY N: the sniffer's count KEY in T_OUT is N.
expect() {
	assert_eq "$(re_mpa_count "$T_OUT" "$1")" "$2" "MPA frames: $1"
}

step "RDMA core, rdmap_sw loaded with mpa_crc=N mpa_rev=1 peer_to_peer=N"
re_begin
check modprobe -a ib_uverbs rdma_ucm
insmod_deps "$RSW_OUT/drivers/rdmap_sw/rdmap_sw.ko" mpa_crc=N mpa_rev=1 peer_to_peer=N
re_rsw_dev rsw0 dummy0 "$SRV/24"

step "1. a new device starts from the module parameters"
assert_file $IB/rsw0/mpa_crc off
assert_file $IB/rsw0/mpa_rev 1
assert_file $IB/rsw0/peer_to_peer 0
assert_file $IB/rsw0/mpa_markers 0
assert_file $IB/rsw0/rtr_types "write read send"
assert_file $IB/rsw0/rtr_prefer none
assert_file $IB/rsw0/max_fpdu 0
assert_file $IB/rsw0/dead_peer_s 0
assert_file $IB/rsw0/peer_ird_ord 128
for p in mpa_crc=Y mpa_rev=2 peer_to_peer=Y; do
	echo "${p#*=}" >"/sys/module/rdmap_sw/parameters/${p%=*}" || fail "set $p"
done
re_rsw_dev rsw1 dummy1 "$CLI/24"
assert_file $IB/rsw1/mpa_crc on
assert_file $IB/rsw1/mpa_rev 2
assert_file $IB/rsw1/peer_to_peer 1
assert_file $IB/rsw0/mpa_crc off
assert_file $IB/rsw0/mpa_rev 1
re_rsw_set rsw0 mpa_rev 2
re_rsw_set rsw0 mpa_crc on
re_rsw_set rsw0 peer_to_peer 1
assert_file $IB/rsw1/mpa_rev 2

step "2. bad values are refused and change nothing; good ones read back"
bad() {
	local before
	before=$(<"$IB/rsw1/$1")
	if echo "$2" >"$IB/rsw1/$1" 2>/dev/null; then
		fail "$1 accepted '$2'"
	fi
	assert_file "$IB/rsw1/$1" "$before"
}
bad mpa_crc maybe
bad mpa_crc ""
bad mpa_rev 3
bad mpa_rev 0
bad peer_to_peer perhaps
bad mpa_markers 2
bad rtr_types ""
bad rtr_types "write bogus"
bad rtr_types none
bad rtr_prefer "write read"
bad rtr_prefer bogus
bad max_fpdu 64
bad max_fpdu 65536
bad max_fpdu -1
bad dead_peer_s 4
bad dead_peer_s 3601
bad peer_ird_ord 0
bad peer_ird_ord 129
ok "18 bad values refused, settings unchanged"
good() {
	echo "$2" >"$IB/rsw1/$1" || fail "$1 refused '$2'"
	assert_file "$IB/rsw1/$1" "$3"
}
good mpa_crc required required
good mpa_crc off off
good mpa_crc on on
good rtr_types "send,write" "write send"
good rtr_types " read " read
good rtr_types "write read send" "write read send"
good rtr_prefer send send
good rtr_prefer none none
good max_fpdu 128 128
good max_fpdu 0 0
good dead_peer_s 5 5
good dead_peer_s 0 0
good peer_ird_ord 1 1
good peer_ird_ord 0x80 128
good peer_to_peer n 0
good peer_to_peer 1 1
good mpa_markers 1 1
good mpa_markers off 0

step "3a. mpa_rev 1 on the initiator: revision 1 both ways"
re_rsw_set rsw1 mpa_rev 1
rping_pair 7401 64
expect req 1
expect req_v1 1
expect rep_v1 1
re_rsw_set rsw1 mpa_rev 2

step "3b. mpa_crc off on both: no CRC; required on the initiator: CRC"
re_rsw_set rsw0 mpa_crc off
re_rsw_set rsw1 mpa_crc off
rping_pair 7402 64
expect req_crc 0
expect rep_crc 0
re_rsw_set rsw1 mpa_crc required
rping_pair 7403 64
expect req_crc 1
expect rep_crc 1
re_rsw_set rsw0 mpa_crc on
re_rsw_set rsw1 mpa_crc on

step "3c. the iw_cxgb4 profile against a responder that accepts only Read"
re_rsw_cxgb4 rsw1
re_rsw_set rsw0 rtr_types read
rping_pair 7404 64
re_rtr_assert "$T_OUT"
re_rsw_set rsw0 rtr_types "write read send"
re_rsw_set rsw1 rtr_types "write read send"

step "3d. max_fpdu 128 on both: 65000-octet pings verify"
re_rsw_set rsw0 max_fpdu 128
re_rsw_set rsw1 max_fpdu 128
rping_pair 7405 65000
re_rsw_set rsw0 max_fpdu 0
re_rsw_set rsw1 max_fpdu 0

step "3e. mpa_markers 1 on the initiator: Markers towards it only"
re_rsw_set rsw1 mpa_markers 1
rping_pair 7409 65000
expect req_m 1
expect rep_m 0
re_rsw_set rsw1 mpa_markers 0

step "4a. dead_peer_s 0: a connection outlives a ${CONTROL_S} s partition"
check modprobe sch_netem
bg ctl.srv "$B/rping" -s -a "$SRV" -p 7408 -V -C 100000000
poll_until 20 "rping server on 7408" listening 7408
bg ctl.cli "$B/rping" -c -I "$CLI" -a "$SRV" -p 7408 -v -V -C 100000000
poll_until 60 "pings flowing" pinging ctl.cli 5
check tc qdisc add dev lo root netem loss 100%
t_sleep "$CONTROL_S"
if ! alive ctl.cli || ! alive ctl.srv; then
	fail "a connection without dead_peer_s ended within ${CONTROL_S} s"
fi
check tc qdisc del dev lo root
seen=$(pings ctl.cli)
poll_until 60 "pings flowing again after the partition" pinging ctl.cli $((seen + 5))
kill "${PIDS[ctl.cli]}" "${PIDS[ctl.srv]}"
wait "${PIDS[ctl.cli]}" "${PIDS[ctl.srv]}" 2>/dev/null || true

step "4b. dead_peer_s 5 on both: a partition ends both ends in bounded time"
re_rsw_set rsw0 dead_peer_s 5
re_rsw_set rsw1 dead_peer_s 5
bg dead.srv "$B/rping" -s -a "$SRV" -p 7406 -V -C 100000000
poll_until 20 "rping server on 7406" listening 7406
bg dead.cli "$B/rping" -c -I "$CLI" -a "$SRV" -p 7406 -v -V -C 100000000
poll_until 60 "pings flowing" pinging dead.cli 5
t0=$(now_ms)
check tc qdisc add dev lo root netem loss 100%
ended() { ! alive dead.cli && ! alive dead.srv; }
poll_until "$DEAD_BOUND_S" "both rpings ended by the partition" ended
note "both ends gave up $(($(now_ms) - t0)) ms into the partition"
check tc qdisc del dev lo root
for p in dead.cli dead.srv; do
	rc=0
	wait "${PIDS[$p]}" || rc=$?
	case $rc in 124 | 137) fail "$p was killed by its timeout" ;; esac
	note "$p exit $rc: $(tail -n 1 "$LOGS/$p")"
done
re_rsw_set rsw0 dead_peer_s 0
re_rsw_set rsw1 dead_peer_s 0
rping_pair 7407 64

step "tear down"
re_rsw_two_down
echo "PASS: $T_NAME on $RSW_KERNEL ($(uname -r))"
