#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Device lifecycle tests for rdmap_sw, run inside a guest:
#
#   scripts/build 6.12 && scripts/vm --kernel 6.12 -- scripts/tests/device.sh
#
#   guest:  dummy0 10.0.0.1/24 <-- rsw0 (rdmap_sw, port 1)
#           dummy1 10.0.1.1/24 <-- rsw1 (second device, independence checks)
#
# Covers: module load, `rdma link add/delete`, what `rdma link`, `rdma dev`
# and sysfs report, port state following the netdev (admin down/up, carrier
# off/on), MTU changes, duplicate and bogus link requests, netdev deletion and
# module unload with devices attached, load/attach/detach/unload cycles
# (RSW_DEVICE_CYCLES, 5 by default; make stress runs 50), installing like
# on a real host (modules_install, depmod -a, modprobe; RSW_DEVICE_INSTALL=0
# leaves it out: depmod -a over Debian 6.12's tree of xz modules takes about
# 80 s under TCG, so make check runs it on 6.1 and the debug kernel and make
# stress on 6.12), and a clean kernel log.  With RSW_RDMA_BUILD (the rdma-core 56.1 build
# holding our provider) it also checks ibv_devices/ibv_devinfo, including the
# port's active_mtu, which nothing else reports.
# shellcheck source=scripts/tests/lib.sh
. "$(dirname "$0")/lib.sh"

KO=$RSW_OUT/drivers/rdmap_sw/rdmap_sw.ko
# Where scripts/rdma-core keeps rdma-core 56.1 and our provider (if built).
eval "$("$RSW_TOP/scripts/rdma-core" env)"
IB=/sys/class/infiniband
CYCLES=${RSW_DEVICE_CYCLES:-5}
INSTALL=${RSW_DEVICE_INSTALL:-1}
case "$CYCLES" in ''|*[!0-9]*|0) echo "RSW_DEVICE_CYCLES must be a positive integer" >&2; exit 2 ;; esac
case "$INSTALL" in 0|1) ;; *) echo "RSW_DEVICE_INSTALL must be 0 or 1" >&2; exit 2 ;; esac
# Taint bits a test module may set: O (out of tree), E (unsigned).
TAINT_OK=$((4096 | 8192))

# --- helpers ---------------------------------------------------------------

port_state() { cat "$IB/$1/ports/1/state"; }

# wait_port DEV STATE: the port reaches "N: STATE" within 10 s.
wait_port() {
	local want
	case "$2" in
	ACTIVE) want="4: ACTIVE" ;;
	DOWN) want="1: DOWN" ;;
	*) fail "wait_port: unknown state $2" ;;
	esac
	poll_until 10 "$1 port 1 state is '$want'" file_is "$IB/$1/ports/1/state" "$want"
}

link_add() { check rdma link add "$1" type rdmap_sw netdev "$2"; }


assert_taint_clean() {
	local t
	t=$(cat /proc/sys/kernel/tainted)
	[ $((t & ~TAINT_OK)) -eq 0 ] || fail "kernel tainted: $t (beyond O/E)"
	ok "taint $t has no bits beyond out-of-tree/unsigned"
}

# rdma-core 56.1 build with our provider, or empty.
# make check builds it before any VM test; where to find it comes from
# scripts/rdma-core unless the caller named a build.
[ -n "${RSW_RDMA_BUILD:-}" ] || eval "$("$RSW_TOP/scripts/rdma-core" env)"
rdma_core_dir() {
	local d=${RSW_RDMA_BUILD:-}
	[ -n "$d" ] || return 0
	[ -x "$d/bin/ibv_devinfo" ] || return 0
	[ -e "$d/etc/libibverbs.d/rdmap_sw.driver" ] || return 0
	compgen -G "$d/lib/librdmap_sw-rdmav*.so" >/dev/null || return 0
	echo "$d"
}

rdma_core_skip_reason() {
	if [ -z "${RSW_RDMA_BUILD:-}" ]; then
		echo "rdma-core 56.1 is not built (run scripts/rdma-core)"
	else
		echo "no ibv_devinfo or rdmap_sw provider in RSW_RDMA_BUILD=$RSW_RDMA_BUILD"
	fi
}

# ibv TOOL ARGS...: run an rdma-core tool from RSW_RDMA_BUILD.
ibv() {
	local d tool=$1
	shift
	d=$(rdma_core_dir)
	timeout -k 5 "$T_CMD_TIMEOUT" env \
		LD_LIBRARY_PATH="$d/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
		${RSW_RDMA_DRIVER:+RDMAV_DRIVERS="$RSW_RDMA_DRIVER"} \
		"$d/bin/$tool" "$@"
}

# active_mtu_is DEV ENUM: ibv_devinfo reports "active_mtu: <bytes> (ENUM)".
active_mtu_is() {
	local out
	out=$(ibv ibv_devinfo -d "$1") || return 1
	grep -Eq "active_mtu:[[:space:]]+[0-9]+ \($2\)" <<<"$out"
}

# --- steps -------------------------------------------------------------------

t_banner
assert_taint_clean

[ -e "$KO" ] || fail "no $KO: build it with scripts/build $RSW_KERNEL"

if [ "$INSTALL" = 1 ]; then
	step "installed like on a real host (1/2): modules_install, depmod -a in the background"
	# The guest's module tree is an overlay: installing leaves the host alone.
	# depmod -a reads (and unxz's) every module of the tree over 9p: on Debian's
	# kernels that is minutes under TCG, so it runs from the start, beside every
	# other step, and the last steps wait for it and check its result.  Until it
	# renames its new index into place, modprobe reads the old one (rdmap_sw is
	# loaded by path until then).
	kdir=/lib/modules/$(uname -r)/build
	[ -e "$kdir/Makefile" ] || kdir=$(cd "$RSW_TOP" && bash -c '. scripts/lib.sh && rsw_kdir "$RSW_KERNEL"')
	install_log=$(mktemp)
	# No signing key here: skip signing (Debian kernels sign on install).
	printf '    $ make -s -C %s M=%s INSTALL_MOD_DIR=updates CONFIG_MODULE_SIG_ALL= modules_install && depmod -a  (background)\n' \
		"$kdir" "$RSW_OUT"
	{
		make -s -C "$kdir" M="$RSW_OUT" INSTALL_MOD_DIR=updates CONFIG_MODULE_SIG_ALL= \
			modules_install && depmod -a
	} >"$install_log" 2>&1 &
	install_pid=$!
else
	note "installing like on a real host is left out (RSW_DEVICE_INSTALL=0)"
fi

step "RDMA core modules load"
for m in ib_core iw_cm ib_uverbs rdma_cm; do
	check modprobe "$m"
done
# numdummies=0: the dummy driver would otherwise create its own dummy0.
check modprobe dummy numdummies=0

step "rdmap_sw.ko loads"
[ -e "$KO" ] || fail "no $KO: build it with scripts/build $RSW_KERNEL"
check modinfo -F vermagic "$KO"
assert_eq "${T_OUT%% *}" "$(uname -r)" "module vermagic release"
insmod_deps "$KO"
check grep -w rdmap_sw /proc/modules

step "a netdev with an address: dummy0 10.0.0.1/24"
dummy_netdev dummy0 10.0.0.1/24

step "rdma link add rsw0 type rdmap_sw netdev dummy0"
link_add rsw0 dummy0
[ -d "$IB/rsw0" ] || fail "$IB/rsw0 does not exist after link add"
ok "$IB/rsw0 exists"

step "rdma link show / rdma dev report rsw0 on dummy0"
check rdma link show rsw0/1
assert_match "$T_OUT" "^link rsw0/1 .*state ACTIVE .*netdev dummy0( |$)" "rdma link show"
check rdma dev show rsw0
assert_match "$T_OUT" "rsw0: node_type rnic " "rdma dev show"
check rdma link show
assert_match "$T_OUT" "link rsw0/1 " "rdma link show (all)"

step "sysfs: RNIC, Ethernet link layer, port ACTIVE with carrier"
assert_file "$IB/rsw0/node_type" "4: RNIC"
assert_file "$IB/rsw0/ports/1/link_layer" "Ethernet"
assert_file "$IB/rsw0/ports/1/state" "4: ACTIVE"
assert_file "$IB/rsw0/ports/1/phys_state" "5: LinkUp"
assert_file /sys/class/net/dummy0/carrier 1

step "admin down -> port DOWN, up -> ACTIVE"
check ip link set dummy0 down
wait_port rsw0 DOWN
check rdma link show rsw0/1
assert_match "$T_OUT" "state DOWN" "rdma link show"
check ip link set dummy0 up
wait_port rsw0 ACTIVE

step "carrier off -> port DOWN, carrier on -> ACTIVE"
check ip link set dummy0 carrier off
assert_file /sys/class/net/dummy0/carrier 0
wait_port rsw0 DOWN
check ip link set dummy0 carrier on
wait_port rsw0 ACTIVE

step "MTU 9000 and back to 1500"
rc_dir=$(rdma_core_dir)
for mtu in 9000 1500; do
	check ip link set dummy0 mtu "$mtu"
	assert_file /sys/class/net/dummy0/mtu "$mtu"
	wait_port rsw0 ACTIVE
	if [ -n "$rc_dir" ]; then
		# IB MTU enum: 1024 -> 3, 4096 -> 5.
		if [ "$mtu" = 9000 ]; then want=5; else want=3; fi
		poll_until 10 "ibv_devinfo: rsw0 active_mtu enum $want for netdev MTU $mtu" \
			active_mtu_is rsw0 "$want"
	fi
done
[ -n "$rc_dir" ] || skip "active_mtu not checked: sysfs and rdma link do not report it; $(rdma_core_skip_reason)"

step "ibv_devices / ibv_devinfo (rdma-core 56.1 with our provider)"
if [ -n "$rc_dir" ]; then
	check ibv ibv_devices
	assert_match "$T_OUT" "rsw0" "ibv_devices"
	check ibv ibv_devinfo -d rsw0
	assert_match "$T_OUT" "transport:[[:space:]]+iWARP" "ibv_devinfo transport"
	assert_match "$T_OUT" "state:[[:space:]]+PORT_ACTIVE" "ibv_devinfo port state"
	assert_match "$T_OUT" "link_layer:[[:space:]]+Ethernet" "ibv_devinfo link_layer"
else
	skip "$(rdma_core_skip_reason)"
fi

step "duplicate and bogus link requests fail cleanly"
check_fails rdma link add rsw1 type rdmap_sw netdev dummy0
[ ! -e "$IB/rsw1" ] || fail "$IB/rsw1 exists after a refused link add"
ok "no rsw1"
check_fails rdma link add rsw9 type rdmap_sw netdev nosuchdev0
[ ! -e "$IB/rsw9" ] || fail "$IB/rsw9 exists"
ok "no rsw9"
dummy_netdev dummy1 10.0.1.1/24
check_fails rdma link add rsw0 type rdmap_sw netdev dummy1
assert_file "$IB/rsw0/ports/1/state" "4: ACTIVE"

step "a second device is independent of the first"
link_add rsw1 dummy1
check rdma link show rsw1/1
assert_match "$T_OUT" "netdev dummy1( |$)" "rsw1 netdev"
check ip link set dummy1 down
wait_port rsw1 DOWN
assert_file "$IB/rsw0/ports/1/state" "4: ACTIVE"
check ip link set dummy1 up
wait_port rsw1 ACTIVE

step "rdma link delete removes the device"
check rdma link delete rsw1
[ ! -e "$IB/rsw1" ] || fail "$IB/rsw1 still exists after link delete"
ok "rsw1 gone"
check rdma link show
assert_no_match "$T_OUT" "rsw1/" "rdma link show"
check ip link del dummy1

step "attach to a netdev that is down: port DOWN until it comes up"
check rdma link delete rsw0
check ip link set dummy0 down
link_add rsw0 dummy0
assert_file "$IB/rsw0/ports/1/state" "1: DOWN"
check ip link set dummy0 up
wait_port rsw0 ACTIVE

step "deleting the netdev removes the device attached to it"
check ip link del dummy0
poll_until 10 "$IB/rsw0 removed" gone "$IB/rsw0"
check rdma link show
assert_no_match "$T_OUT" "rsw0/" "rdma link show"

step "the netdev name can be reused and attached again"
dummy_netdev dummy0 10.0.0.1/24
rdma_attach rsw0 rdmap_sw dummy0

step "rmmod with a device attached removes it"
check rmmod rdmap_sw
[ ! -e "$IB/rsw0" ] || fail "$IB/rsw0 still exists after rmmod"
ok "rsw0 gone"
[ ! -e /sys/module/rdmap_sw ] || fail "/sys/module/rdmap_sw still exists"
ok "module gone"
check ip -br link show dummy0

step "$CYCLES cycles of insmod, link add, link delete, rmmod"
# The module copy the cycles load: the same bytes from tmpfs, not re-read
# over 9p (8 MB with debug info) at every cycle.
KO_TMP=$(mktemp --suffix=.ko)
check cp "$KO" "$KO_TMP"
check cmp "$KO" "$KO_TMP"
for i in $(seq 1 "$CYCLES"); do
	insmod "$KO_TMP" || fail "cycle $i: insmod"
	rdma link add rsw0 type rdmap_sw netdev dummy0 || fail "cycle $i: link add"
	file_is "$IB/rsw0/ports/1/state" "4: ACTIVE" ||
		poll_until 10 "cycle $i: rsw0 ACTIVE" file_is "$IB/rsw0/ports/1/state" "4: ACTIVE"
	rdma link delete rsw0 || fail "cycle $i: link delete"
	[ ! -e "$IB/rsw0" ] || fail "cycle $i: rsw0 still exists after link delete"
	rmmod rdmap_sw || fail "cycle $i: rmmod"
	note "cycle $i: ok"
done

rm -f "$KO_TMP"
if [ "$INSTALL" = 1 ]; then
	step "installed like on a real host (2/2): modules_install and depmod done, then modprobe"
	# depmod reads the whole module tree over 9p: minutes on a loaded host.
	poll_until 300 "modules_install and depmod -a finished" sh -c "! kill -0 $install_pid 2>/dev/null"
	rc=0
	wait "$install_pid" || rc=$?
	[ ! -s "$install_log" ] || indent <"$install_log"
	[ "$rc" -eq 0 ] || fail "modules_install && depmod -a exited $rc"
	ok "modules_install && depmod -a succeeded"
	check modinfo -F filename rdmap_sw
	assert_match "$T_OUT" "^/lib/modules/[^/]+/updates/(.*/)?rdmap_sw\.ko(\.[a-z]+)?$" "modinfo finds the installed module"
	check modprobe rdmap_sw
	rdma_attach rsw0 rdmap_sw dummy0
	check rdma link delete rsw0
	check modprobe -r rdmap_sw
fi

step "the kernel log is clean"
check ip link del dummy0
dmesg_clean
assert_taint_clean
echo "PASS: $T_NAME on $RSW_KERNEL ($(uname -r))"
