#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# rdmap_sw through libibverbs (rdma-core 56.1 built by scripts/rdma-core, with
# our provider): the guest side of `make run` and of the verbs VM test.
#
#   scripts/build 6.12 && scripts/rdma-core &&
#   scripts/vm --kernel 6.12 -- scripts/tests/verbs.sh
#
#   +-------------------- guest --------------------+
#   |  rdma / ibv_devices / ibv_devinfo / verbs-smoke |
#   |        | libibverbs 56.1 + librdmap_sw         |
#   |  rsw0 (rdmap_sw) --- dummy0 192.0.2.1/24      |
#   +-----------------------------------------------+
#
# Checks: rsw0 is listed; it is iWARP with port 1 PORT_ACTIVE; verbs-smoke
# (open, query, PD, CQ ring and arming, MR, RC QP, local refusals, flush) passes;
# the port follows dummy0 down and up; next to siw0, both are listed and an
# RFC 7306 atomic from rsw0 to siw0 ends that connection in bounded time
# (atomic-peer); an rping listening on [::] serves IPv4 with 21 IPv6
# addresses on dummy0; a 0.0.0.0 listener started before rsw1's dummy2 has
# an address listens on one added later (verified rping) and drops its
# socket when it is removed, and rsw0's serves it once moved from dummy2
# to dummy0; a [::] listener serves IPv6 (with DAD) and IPv4 addresses
# added to dummy2 later; 0.0.0.0 listeners, old and new, serve the 40th of
# 40 addresses; when rsw1 goes, rsw0's part of a 0.0.0.0 listener serves
# on and none of rsw1's sockets is left; link and module go away cleanly.
# shellcheck source=scripts/tests/lib.sh
. "$(dirname "$0")/lib.sh"

: "${RSW_OUT:?run me through scripts/vm}"
DEV=rsw0
NETDEV=dummy0

rdma_core_use ibv_devinfo verbs-smoke atomic-peer rping


port_state_is() {
	"$RSW_RDMA_BIN/ibv_devinfo" -d "$DEV" | grep -qE "state:[[:space:]]+$1 "
}

rsw_dummy_up "$DEV" "$NETDEV" 192.0.2.1/24
check rdma link show
check rdma dev show "$DEV"

step "ibv_devices lists $DEV"
check "$RSW_RDMA_BIN/ibv_devices"
assert_match "$T_OUT" "^[[:space:]]+${DEV}[[:space:]]" "ibv_devices"

step "ibv_devinfo: iWARP, port active"
check "$RSW_RDMA_BIN/ibv_devinfo" -v -d "$DEV"
assert_match "$T_OUT" 'transport:[[:space:]]+iWARP ' "transport"
assert_match "$T_OUT" 'state:[[:space:]]+PORT_ACTIVE ' "port 1 state"

step "workload: open, query, PD alloc/free (verbs-smoke)"
check "$RSW_RDMA_SMOKE" "$DEV" active

step "port 1 follows $NETDEV down and up"
check ip link set "$NETDEV" down
poll_until 5 "PORT_DOWN" port_state_is PORT_DOWN
check "$RSW_RDMA_SMOKE" "$DEV" down
check ip link set "$NETDEV" up
poll_until 5 "PORT_ACTIVE" port_state_is PORT_ACTIVE

# Devices of other providers, which have a kernel driver id (siw here, a
# test peer built by scripts/siw), sit next to ours: libibverbs walks every
# provider's match table for them, ours included.
siw_ko="$(rsw_siw_dir "$RSW_KREL")/plain/siw.ko"
if [ -f "$siw_ko" ]; then
	step "with siw0 next to $DEV: both listed, both open"
	insmod_deps "$siw_ko"
	dummy_netdev dummy1
	rdma_attach siw0 siw dummy1
	check "$RSW_RDMA_BIN/ibv_devices"
	assert_match "$T_OUT" "^[[:space:]]+${DEV}[[:space:]]" "ibv_devices: $DEV"
	assert_match "$T_OUT" "^[[:space:]]+siw0[[:space:]]" "ibv_devices: siw0"
	check "$RSW_RDMA_SMOKE" "$DEV" active
	check "$RSW_RDMA_BIN/ibv_devinfo" -d siw0

	# RFC 7306 leaves discovery to the ULP: an atomic to siw, which
	# implements none of it, is answered with a Terminate.
	step "atomic from $DEV to siw0: Terminate, ERROR, fatal event, bounded"
	check ip addr add 198.51.100.1/24 dev dummy1
	check "$RSW_RDMA_PROVIDER_BUILD/atomic-peer" "$DEV" 192.0.2.1 \
		198.51.100.1 7490
	check rdma link delete siw0
	check rmmod siw
	check ip link delete dummy1
else
	skip "no siw.ko for $RSW_KREL (scripts/siw): not checked next to siw0"
fi

# A wildcard [::] listener that is not IPv6-only binds each address of
# the netdev, IPv4 ones included, up to a limit: many IPv6 addresses (a
# link-local and 20 global here) must not crowd the IPv4 one out.
step "a dual-stack [::] listener serves IPv4 next to 21 IPv6 addresses"
for i in $(seq 1 20); do
	ip -6 addr add "2001:db8:77::$i/64" dev "$NETDEV" nodad || fail "ip -6 addr add"
done
listening() { rdma res show cm_id | grep -qE "state LISTEN .*:7481( |$)"; }
printf '    $ %s &\n' "rping -s -a :: -p 7481 -C 3 -V"
"$B/rping" -s -a :: -p 7481 -C 3 -V >"$RSW_RUN/rping-v6any.server" 2>&1 &
srv=$!
poll_until 20 "rping listening on [::]:7481" listening
T_CMD_TIMEOUT=60 check "$B/rping" -c -a 192.0.2.1 -p 7481 -C 3 -V -v
assert_eq "$(grep -o 'rdma-ping-[0-9]*:' <<<"$T_OUT" | sort -u | wc -l)" 3 \
	"verified pings over IPv4 to the [::] listener"
wait "$srv" || { indent <"$RSW_RUN/rping-v6any.server"; fail "rping server failed"; }
for i in $(seq 1 20); do
	ip -6 addr del "2001:db8:77::$i/64" dev "$NETDEV" || fail "ip -6 addr del"
done

# A wildcard listener follows its netdev's addresses (rsw_iw_sync): one
# started before dummy2 has an address listens on it once it comes, stops
# when it goes, and listens on as many addresses as a host has (32 was a
# fixed limit once), whether they came before the listen or after it.
LOGS=$RSW_RUN/verbs
mkdir -p "$LOGS"
# tcp_listening ADDR PORT: a TCP socket listens on ADDR:PORT.
tcp_listening() {
	ss -Hltn "sport = :$2" | awk -v a="$1:$2" '$4 == a { f = 1 } END { exit !f }'
}
tcp_not_listening() { ! tcp_listening "$@"; }
# verified_pings ADDR PORT: rping -c to ADDR:PORT pings 3 times, verified.
verified_pings() {
	T_CMD_TIMEOUT=60 check "$B/rping" -c -a "$1" -p "$2" -C 3 -V -v
	assert_eq "$(grep -o 'rdma-ping-[0-9]*:' <<<"$T_OUT" | sort -u | wc -l)" 3 \
		"verified pings to $1:$2"
}

step "a 0.0.0.0 listener serves an address added to dummy2 after it started"
dummy_netdev dummy2
rdma_attach rsw1 rdmap_sw dummy2
poll_until 10 "uverbs device for rsw1" uverbs_ready rsw1
bg wild.server "$B/rping" -s -P -a 0.0.0.0 -p 7482 -C 3 -V
poll_until 20 "rping listening on 192.0.2.1:7482 (rsw0)" \
	tcp_listening 192.0.2.1 7482
check ip addr add 198.51.100.7/24 dev dummy2
poll_until 20 "listening on 198.51.100.7:7482 (rsw1)" \
	tcp_listening 198.51.100.7 7482
verified_pings 198.51.100.7 7482

step "the listener's socket on 198.51.100.7 goes with the address"
check ip addr del 198.51.100.7/24 dev dummy2
poll_until 20 "no socket on 198.51.100.7:7482" \
	tcp_not_listening 198.51.100.7 7482
check ss -Hltn "sport = :7482"

# The address work drops on every listener before any binds: rsw0's
# listener, first in the list, binds an address moved to dummy0 from
# dummy2 once rsw1's socket on it is closed, in the same run.
step "an address moved from dummy2 to dummy0 is served by rsw0's listener"
check ip addr add 198.51.100.7/24 dev dummy2
poll_until 20 "listening on 198.51.100.7:7482 (rsw1)" \
	tcp_listening 198.51.100.7 7482
check ip addr add 198.51.100.7/24 dev "$NETDEV"
check ip addr del 198.51.100.7/24 dev dummy2
# One socket, rsw0's, listens on it (rsw1's closed, rsw0's bound).
one_on_7() {
	[ "$(ss -Hltn "sport = :7482" |
		awk '$4 == "198.51.100.7:7482"' | wc -l)" = 1 ]
}
poll_until 20 "one socket on 198.51.100.7:7482, rsw0's" one_on_7
verified_pings 198.51.100.7 7482
check ip addr del 198.51.100.7/24 dev "$NETDEV"

# The IPv6 notifier, a tentative address (DAD, freebind) and a dual-stack
# listener following IPv4 addresses too.
step "a [::] listener serves IPv6 and IPv4 addresses added to dummy2 later"
bg wild6.server "$B/rping" -s -P -a :: -p 7484 -C 3 -V
poll_until 20 "rping listening on 192.0.2.1:7484 (rsw0, dual-stack)" \
	tcp_listening 192.0.2.1 7484
check ip -6 addr add 2001:db8:78::1/64 dev dummy2
poll_until 20 "listening on [2001:db8:78::1]:7484 (rsw1)" \
	tcp_listening "[2001:db8:78::1]" 7484
dad_done() { ! ip -6 addr show dev dummy2 tentative | grep -q 2001:db8:78::1; }
poll_until 20 "2001:db8:78::1 out of DAD" dad_done
verified_pings 2001:db8:78::1 7484
check ip addr add 198.51.100.9/24 dev dummy2
poll_until 20 "listening on 198.51.100.9:7484 (rsw1)" \
	tcp_listening 198.51.100.9 7484
verified_pings 198.51.100.9 7484
check ip -6 addr del 2001:db8:78::1/64 dev dummy2
check ip addr del 198.51.100.9/24 dev dummy2
poll_until 20 "no socket on [2001:db8:78::1]:7484" \
	tcp_not_listening "[2001:db8:78::1]" 7484
kill "${PIDS[wild6.server]}" || fail "the persistent [::] rping server ended early"
wait "${PIDS[wild6.server]}" || true

step "0.0.0.0 listeners, old and new, serve the 40th of 40 addresses"
for i in $(seq 1 40); do
	ip addr add "203.0.113.$i/24" dev dummy2 || fail "ip addr add"
done
poll_until 20 "the running listener on 203.0.113.40:7482" \
	tcp_listening 203.0.113.40 7482
printf '    $ %s &\n' "rping -s -a 0.0.0.0 -p 7483 -C 3 -V"
"$B/rping" -s -a 0.0.0.0 -p 7483 -C 3 -V >"$LOGS/wild40.server" 2>&1 &
srv=$!
poll_until 20 "a new listener on 203.0.113.40:7483" \
	tcp_listening 203.0.113.40 7483
verified_pings 203.0.113.40 7483
wait "$srv" || { indent <"$LOGS/wild40.server"; fail "rping server failed"; }

# rdma_cm destroys rsw1's part of the listen as rsw1 goes; rsw0's serves on.
step "rsw1 goes under a live 0.0.0.0 listener; rsw0's part still serves"
check rdma link delete rsw1
none_on_dummy2() { ! ss -Hltn "sport = :7482" | grep -q '203\.0\.113\.'; }
poll_until 20 "no socket left on 203.0.113.x:7482" none_on_dummy2
verified_pings 192.0.2.1 7482
kill "${PIDS[wild.server]}" || fail "the persistent rping server ended early"
wait "${PIDS[wild.server]}" || true
check ip link delete dummy2

rsw_dummy_down "$DEV" "$NETDEV"
