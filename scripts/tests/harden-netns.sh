#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Network namespace teardown with live rdmap_sw connections (issue 10,
# defect 11): our kernel TCP sockets hold no reference on their namespace,
# so the driver must close them itself when it dies (pernet .pre_exit).
#
#   scripts/build debug && scripts/rdma-core &&
#   scripts/vm --kernel debug -- scripts/tests/harden-netns.sh
#   (with --nic ..., so the guest has eth0, phase 2 runs too)
#
#   +------------------ init netns ------------------+   +---- rswns1 ----+
#   | dummy0 192.0.2.1 + rsw0: control rping (loop)   |   |                |
#   | veth0 10.77.0.1 + rswa  <---------- veth --------+-->| veth1 10.77.0.2|
#   | rping -s -P (any address): listens on every     |   |   + rswb       |
#   |   rdmap_sw device, rswb's socket is in rswns1   |   | rping -s/-c    |
#   +--------------------------------------------------+   +----------------+
#   phase 2 (eth0 present): eth0 + rswc moved into rswns2, which dies with
#   the wildcard listener's socket in it; eth0 (a "physical" device) goes
#   back to init_net instead of dying, so rswc's teardown is not ordered
#   before the namespace's.
#
# Phase 1: connections both ways across the veth and one inside rswns1 run
# while rswns1 is deleted (its processes killed first: they pin it).  The
# namespace must be gone (rswa and rswb removed with the veth pair) within
# a bound; the control rping in init_net, running all along, must still be
# pinging with verified data after every teardown; a new connection in
# init_net must work at the end; the kernel log must stay clean (KASAN,
# lockdep, WARN: the debug kernel panics on a WARN); scripts/vm checks
# kmemleak afterwards.  Phase 2 repeats the teardown with the refunded
# device, RSW_NETNS_ROUNDS times (default 1; 10 with RSW_STRESS=1).
# shellcheck source=scripts/tests/lib.sh
. "$(dirname "$0")/lib.sh"

: "${RSW_OUT:?run me through scripts/vm}"
ROUNDS=${RSW_NETNS_ROUNDS:-1}
[ "${RSW_STRESS:-0}" = 1 ] && ROUNDS=10
# Bound for a namespace's teardown to show (its devices gone).
GONE_S=60
T_CMD_TIMEOUT=240
# Bound for the background rpings, which run until the test stops them.
BG_TIMEOUT=1200

rdma_core_use rping
LOGS=$RSW_RUN/netns
mkdir -p "$LOGS"
NS1=rswns1 NS2=rswns2

t_banner

# bg_wait NAME: the background command NAME's exit status (0 or not).
bg_wait() {
	local rc=0
	wait "${PIDS[$1]}" || rc=$?
	note "$1 (exit $rc):"
	tail -n 4 "$LOGS/$1" | indent
	return "$rc"
}

# pings NAME: verified pings logged so far by rping -v NAME.
pings() { grep -c 'ping data' "$LOGS/$1" 2>/dev/null || true; }
pinging() { [ "$(pings "$1")" -ge "$2" ]; }
alive() { kill -0 "${PIDS[$1]}" 2>/dev/null; }

# ns_listening NS PORT: a TCP socket listens on PORT inside NS.
ns_listening() { ip netns exec "$1" ss -Hltn "sport = :$2" | grep -q .; }
listening_init() { ss -Hltn "sport = :$1" | grep -q .; }
ib_gone() { [ ! -e "/sys/class/infiniband/$1" ]; }
ns_gone() { ! ip netns list | grep -qw "$1"; }
link_in_init() { ip link show "$1" >/dev/null 2>&1; }

# ctl_still_pinging: the control rping in init_net is alive and has logged
# more verified pings than at the last call (rping -V exits on bad data).
CTL_SEEN=0
ctl_more() { alive ctl.client && [ "$(pings ctl.client)" -gt "$CTL_SEEN" ]; }
ctl_still_pinging() {
	poll_until 60 "the control rping in init_net goes on (past $CTL_SEEN pings)" \
		ctl_more
	CTL_SEEN=$(pings ctl.client)
}

# kill_ns NS: SIGKILL every process in NS (they pin it), then delete it.
kill_ns() {
	local pids
	pids=$(ip netns pids "$1" | tr '\n' ' ')
	note "killing the processes in $1: ${pids:-none}"
	# shellcheck disable=SC2086 # a list of pids
	[ -z "$pids" ] || kill -9 $pids
	check ip netns del "$1"
}

rsw_dummy_up rsw0 dummy0 192.0.2.1/24
check modprobe veth
# A connection that never sends its MPA Request stays in the handshake.
echo 600000 >/sys/module/rdmap_sw/parameters/mpa_timeout_ms

step "control connection in init_net: rping over rsw0, verified, until the end"
bg ctl.server "$B/rping" -s -a 192.0.2.1 -p 7301 -V -C 1000000
poll_until 20 "control server listening" listening_init 7301
bg ctl.client "$B/rping" -c -a 192.0.2.1 -p 7301 -v -V -C 1000000
poll_until 60 "control pings flowing" pinging ctl.client 5

step "phase 1: $NS1 with veth1 + rswb, veth0 + rswa in init_net"
check ip netns add "$NS1"
check ip link add veth0 type veth peer name veth1 netns "$NS1"
check ip addr add 10.77.0.1/24 dev veth0
check ip link set veth0 up
check ip -n "$NS1" addr add 10.77.0.2/24 dev veth1
check ip -n "$NS1" link set veth1 up
check ip -n "$NS1" link set lo up
rdma_attach rswa rdmap_sw veth0
check ip netns exec "$NS1" rdma link add rswb type rdmap_sw netdev veth1
poll_until 10 "rswb port ACTIVE" port_active rswb

step "phase 1: a wildcard server in init_net listens on rswb in $NS1 too"
bg any.server "$B/rping" -s -P -a 0.0.0.0 -p 7302 -V -C 1000000
poll_until 20 "wildcard listener on rswb (a socket in $NS1)" \
	ns_listening "$NS1" 7302

step "phase 1: live connections across and inside $NS1"
bg ns.server ip netns exec "$NS1" "$B/rping" -s -a 10.77.0.2 -p 7303 -V -C 1000000
poll_until 20 "server in $NS1 listening" ns_listening "$NS1" 7303
bg in2ns.client "$B/rping" -c -a 10.77.0.2 -p 7303 -v -V -C 1000000
bg ns2in.client ip netns exec "$NS1" "$B/rping" -c -a 10.77.0.1 -p 7302 -v -V -C 1000000
bg ns.lserver ip netns exec "$NS1" "$B/rping" -s -a 10.77.0.2 -p 7304 -V -C 1000000
poll_until 20 "second server in $NS1 listening" ns_listening "$NS1" 7304
bg ns.lclient ip netns exec "$NS1" "$B/rping" -c -a 10.77.0.2 -p 7304 -v -V -C 1000000
for c in in2ns.client ns2in.client ns.lclient; do
	poll_until 60 "$c pinging" pinging "$c" 5
done
check rdma res show qp

# Without the fix this one was left behind: rswb's teardown (while the
# namespace dies) closed it with a FIN that its dead veth cannot carry,
# and the orphaned socket outlived the namespace (ref_tracker WARN).
step "phase 1: a TCP peer in init_net that never sends its MPA Request"
exec {RAW}<>/dev/tcp/10.77.0.2/7302
poll_until 20 "its socket accepted in $NS1 (a cep in the handshake)" \
	eval "ip netns exec $NS1 ss -Htn state established '( sport = :7302 )' | grep -q ."

step "phase 1: delete $NS1 under load"
t0=$(now_ms)
kill_ns "$NS1"
poll_until "$GONE_S" "rswb and rswa gone with the veth pair" \
	eval 'ib_gone rswb && ib_gone rswa'
note "teardown took $(($(now_ms) - t0)) ms"
# Its peer is gone; it may wait a while for its own timeouts.
kill "${PIDS[in2ns.client]}" 2>/dev/null || true
bg_wait in2ns.client || true
exec {RAW}>&-
ctl_still_pinging
dmesg_clean

if [ -n "${RSW_NETDEV:-}" ] && link_in_init "$RSW_NETDEV"; then
	NIC=$RSW_NETDEV
	for round in $(seq 1 "$ROUNDS"); do
		step "phase 2, round $round/$ROUNDS: $NIC + rswc in $NS2"
		check ip netns add "$NS2"
		check ip link set "$NIC" netns "$NS2"
		check ip -n "$NS2" addr add 198.51.100.1/24 dev "$NIC"
		check ip -n "$NS2" link set "$NIC" up
		check ip -n "$NS2" link set lo up
		# rping -P does not always outlive its devices' removal.
		alive any.server ||
			bg any.server "$B/rping" -s -P -a 0.0.0.0 -p 7302 -V -C 1000000
		check ip netns exec "$NS2" rdma link add rswc type rdmap_sw netdev "$NIC"
		poll_until 10 "rswc port ACTIVE" port_active rswc
		poll_until 20 "wildcard listener on rswc (a socket in $NS2)" \
			ns_listening "$NS2" 7302
		bg ns2.server ip netns exec "$NS2" "$B/rping" -s -a 198.51.100.1 -p 7305 -V -C 1000000
		poll_until 20 "server in $NS2 listening" ns_listening "$NS2" 7305
		bg ns2.client ip netns exec "$NS2" "$B/rping" -c -a 198.51.100.1 -p 7305 -v -V -C 1000000
		poll_until 60 "ns2.client pinging" pinging ns2.client 5

		step "phase 2, round $round/$ROUNDS: delete $NS2; $NIC returns"
		t0=$(now_ms)
		kill_ns "$NS2"
		poll_until "$GONE_S" "$NIC back in init_net, rswc gone" \
			eval "link_in_init $NIC && ib_gone rswc"
		note "teardown took $(($(now_ms) - t0)) ms"
		ctl_still_pinging
		dmesg_clean
	done
else
	skip "no spare NIC (scripts/vm --nic): phase 2 (a device that outlives its namespace) not run"
fi

step "init_net: the control rping ran throughout; a new connection works"
ctl_still_pinging
for p in ctl.client ctl.server any.server; do
	kill "${PIDS[$p]}" 2>/dev/null || true
	wait "${PIDS[$p]}" 2>/dev/null || true
done
bg new.server "$B/rping" -s -a 192.0.2.1 -p 7306 -V -C 20
poll_until 20 "new server listening" listening_init 7306
check timeout 120 "$B/rping" -c -a 192.0.2.1 -p 7306 -V -C 20
bg_wait new.server || fail "the new rping server failed"

rsw_dummy_down rsw0 dummy0
echo "harden-netns: PASS"
