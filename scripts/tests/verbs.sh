#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Guest side of the verbs test: rdmap_sw's device seen through libibverbs
# (rdma-core 56.1 built by scripts/rdma-core, with our provider).
#
#   scripts/build 6.12 && scripts/rdma-core &&
#   scripts/vm --kernel 6.12 -- scripts/tests/verbs.sh
#
#   +-------------------- guest --------------------+
#   |  ibv_devices / ibv_devinfo / verbs-smoke      |
#   |        | libibverbs 56.1 + librdmap_sw         |
#   |  rsw0 (rdmap_sw) --- dummy0 192.0.2.1/24      |
#   +-----------------------------------------------+
#
# Checks: rsw0 is listed; it is iWARP with port 1 PORT_ACTIVE; verbs-smoke
# passes (open, query, PD, CQ refused); the port follows dummy0 down and up;
# the link and the module go away cleanly.  Every step is printed; the first
# failure ends the test with a non-zero status.
set -uo pipefail

: "${RSW_OUT:?run me through scripts/vm}" "${RSW_TOP:?}"
ADDR=192.0.2.1/24
DEV=rsw0
NETDEV=dummy0
driver="$RSW_OUT/drivers/rdmap_sw/rdmap_sw.ko"

say() { echo "verbs: $*"; }
fail() {
	echo "verbs: FAIL: $*"
	exit 1
}

# step DESCRIPTION CMD...: run CMD, show its output, fail the test if it fails.
step() {
	local what=$1
	shift
	say "$what: $*"
	"$@" || fail "$what (exit $?)"
}

# poll SECONDS CMD...: run CMD every 0.05 s until it succeeds.
poll() {
	local left=$(($1 * 20))
	shift
	until "$@" >/dev/null 2>&1; do
		left=$((left - 1))
		[ "$left" -gt 0 ] || return 1
		sleep 0.05
	done
}

cleanup() {
	rdma link delete "$DEV" 2>/dev/null
	ip link delete "$NETDEV" 2>/dev/null
	rmmod rdmap_sw 2>/dev/null
}

load_rdma_env() {
	local env
	env=$("$RSW_TOP/scripts/rdma-core" env) || fail "scripts/rdma-core env"
	eval "$env"
	[ -x "$RSW_RDMA_BIN/ibv_devinfo" ] ||
		fail "no rdma-core build at $RSW_RDMA_BUILD (run scripts/rdma-core on the host)"
	[ -e "$RSW_RDMA_LIB/librdmap_sw-rdmav34.so" ] ||
		fail "provider not installed in $RSW_RDMA_LIB (run scripts/rdma-core on the host)"
	[ -x "$RSW_RDMA_SMOKE" ] || fail "no $RSW_RDMA_SMOKE"
	# The build's tools carry a RUNPATH; this covers anything else we run.
	export LD_LIBRARY_PATH=$RSW_RDMA_LIB
}

# True when uverbs has published a character device for $DEV.
uverbs_ready() {
	local d
	for d in /sys/class/infiniband_verbs/uverbs*; do
		[ "$(cat "$d/ibdev" 2>/dev/null)" = "$DEV" ] &&
			[ -c "/dev/infiniband/${d##*/}" ] && return 0
	done
	return 1
}

port_state_is() {
	"$RSW_RDMA_BIN/ibv_devinfo" -d "$DEV" | grep -qE "state:[[:space:]]+$1 "
}

setup() {
	[ -e "$driver" ] || fail "no $driver (run scripts/build $RSW_KERNEL on the host)"
	step "load the RDMA core" modprobe -a ib_core ib_uverbs iw_cm rdma_cm
	step "load rdmap_sw" insmod "$driver"
	step "create $NETDEV" ip link add "$NETDEV" type dummy
	step "address $NETDEV" ip addr add "$ADDR" dev "$NETDEV"
	step "bring $NETDEV up" ip link set "$NETDEV" up
	step "attach $DEV" rdma link add "$DEV" type rdmap_sw netdev "$NETDEV"
	poll 10 uverbs_ready || fail "no uverbs device for $DEV"
	rdma link show
}

check_devices() {
	local out
	out=$("$RSW_RDMA_BIN/ibv_devices" 2>&1)
	echo "$out"
	grep -qE "^[[:space:]]+${DEV}[[:space:]]" <<<"$out" ||
		fail "ibv_devices does not list $DEV"
	say "ibv_devices lists $DEV"
}

check_devinfo() {
	local out
	out=$("$RSW_RDMA_BIN/ibv_devinfo" -v -d "$DEV" 2>&1) ||
		{ echo "$out"; fail "ibv_devinfo -v -d $DEV"; }
	echo "$out"
	grep -qE "transport:[[:space:]]+iWARP " <<<"$out" ||
		fail "ibv_devinfo: transport is not iWARP"
	grep -qE "state:[[:space:]]+PORT_ACTIVE " <<<"$out" ||
		fail "ibv_devinfo: port 1 is not PORT_ACTIVE"
	say "ibv_devinfo: iWARP, PORT_ACTIVE"
}

# The port state must follow the netdev's.
check_port_follows_link() {
	step "take $NETDEV down" ip link set "$NETDEV" down
	poll 5 port_state_is PORT_DOWN || fail "port 1 not PORT_DOWN after $NETDEV down"
	step "smoke with the port down" "$RSW_RDMA_SMOKE" "$DEV" down
	step "bring $NETDEV up" ip link set "$NETDEV" up
	poll 5 port_state_is PORT_ACTIVE || fail "port 1 not PORT_ACTIVE after $NETDEV up"
	say "port 1 follows $NETDEV down and up"
}

teardown() {
	step "detach $DEV" rdma link delete "$DEV"
	poll 5 sh -c "! rdma dev show $DEV" || fail "$DEV still present after delete"
	step "unload rdmap_sw" rmmod rdmap_sw
	step "delete $NETDEV" ip link delete "$NETDEV"
}

trap cleanup EXIT
load_rdma_env
setup
check_devices
check_devinfo
step "verbs-smoke" "$RSW_RDMA_SMOKE" "$DEV" active
check_port_follows_link
teardown
trap - EXIT
say "PASS"
