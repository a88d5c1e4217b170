#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The user ABI negotiation (include/uapi/rdma/rdmap_sw-abi.h,
# Documentation/userspace.rst "ABI versions"): every pairing of a module
# and a provider either works, at the version both speak, or fails with
# the provider's message naming both ranges and what to upgrade, never
# with garbage, and leaves the device serving a provider that fits.
#
#   scripts/build 6.12 && scripts/rdma-core &&
#   scripts/build 6.12 --abi 1-1 && scripts/build 6.12 --abi 2-2 &&
#   scripts/vm --kernel 6.12 --mem 2048 -- scripts/tests/abi.sh
#
#   dummy0 10.79.9.1 + rsw0: one device, rping server and client over lo
#
# Modules (scripts/build --abi builds stand in for other releases):
#   current  1..2, sysfs abi_versions "1 2"
#   1-1      a module from before the negotiation: no abi_versions
#   2-2      a future module that dropped version 1
# Providers: current (1..2) and the narrowed 1-1 and 2-2 builds
# (scripts/rdma-core provider --abi), chosen by RDMAV_DRIVERS.
#
# 1. current + current: version 2, ibv_devinfo, a verified rping; then
#    abi-probe's crafted requests, each with its exact answer or errno.
# 2. 1-1 + current: version 1 (no request data); 1-1 + provider 2-2: the
#    "upgrade the rdmap_sw module" message; abi-probe: a request is EINVAL.
# 3. 2-2 + provider 1-1: the "upgrade the rdma-core provider" message,
#    nothing else; then the current provider still works, at version 2.
# shellcheck source=scripts/tests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=scripts/tests/rdma-env.sh
. "$(dirname "$0")/rdma-env.sh"

: "${RSW_OUT:?run me through scripts/vm}"
IP=10.79.9.1
IB=/sys/class/infiniband
T_CMD_TIMEOUT=120
LOGS=$RSW_RUN/abi
mkdir -p "$LOGS"
rdma_core_use ibv_devinfo rping abi-probe
PROBE=$RSW_RDMA_PROVIDER_BUILD/abi-probe
t_banner

# ko ABI / drv ABI: the module and the provider of a build ("" = normal).
ko() { echo "$RSW_OUT${1:+-abi$1}/drivers/rdmap_sw/rdmap_sw.ko"; }
drv() { echo "$RSW_RDMA_PROVIDER_BUILD${1:+-abi$1}/librdmap_sw"; }
for a in 1-1 2-2; do
	[ -f "$(ko "$a")" ] || fail "no $(ko "$a"): run scripts/build $RSW_KERNEL --abi $a"
	compgen -G "$(drv "$a")-rdmav*.so" >/dev/null ||
		fail "no $(drv "$a")-rdmav*.so: run scripts/build $RSW_KERNEL --abi $a"
done

# uverbs_node DEV: DEV's uverbs character device.
uverbs_node() {
	local d
	for d in /sys/class/infiniband_verbs/uverbs*; do
		[ "$(<"$d/ibdev")" = "$1" ] && { echo "/dev/infiniband/${d##*/}"; return; }
	done
	fail "no uverbs device for $1"
}

# up ABI: load that module build, rsw0 on dummy0.
up() {
	insmod_deps "$(ko "$1")"
	rdma_attach rsw0 rdmap_sw dummy0
	poll_until 10 "uverbs device for rsw0" uverbs_ready rsw0
	NODE=$(uverbs_node rsw0)
}

# down: rsw0 deleted, the module unloaded.
down() {
	check rdma link delete rsw0
	poll_until 10 "rsw0 gone" gone "$IB/rsw0"
	check rmmod rdmap_sw
}

# devinfo ABI: ibv_devinfo -d rsw0 with that provider build; its own log
# (VERBS_LOG_LEVEL 3, info) in $LOGS/verbs.log.
devinfo() {
	rm -f "$LOGS/verbs.log"
	env RDMAV_DRIVERS="$(drv "$1")" VERBS_LOG_LEVEL=3 \
		VERBS_LOG_FILE="$LOGS/verbs.log" "$B/ibv_devinfo" -d rsw0
}

# works ABI VERSION-LINE: ibv_devinfo opens rsw0 with that provider, which
# logged exactly VERSION-LINE.
works() {
	check devinfo "$1"
	assert_match "$T_OUT" "hca_id:[[:space:]]+rsw0" "ibv_devinfo of rsw0"
	assert_match "$T_OUT" "transport:[[:space:]]+iWARP" "rsw0 transport"
	assert_eq "$(grep -o 'user ABI version.*' "$LOGS/verbs.log")" "$2" "the provider's version"
}

# refused ABI MESSAGE: ibv_devinfo fails with that provider, which said
# exactly MESSAGE on stderr, and nothing else was said but libibverbs'
# tool's own "Failed to open device".
refused() {
	check_fails devinfo "$1"
	assert_eq "$(grep -c . <<<"$T_OUT")" 2 "lines of output"
	assert_eq "$(sed -n 1p <<<"$T_OUT")" "$2" "the provider's message"
	assert_eq "$(sed -n 2p <<<"$T_OUT")" "Failed to open device" "ibv_devinfo's"
}

listening() { rdma res show cm_id | grep -qE "state LISTEN .*:$1( |$)"; }

# pings PORT: a verified rping (3 pings) over rsw0 with the current
# provider (the one rdma_core_use chose).
pings() {
	printf '    $ %s &\n' "rping -s -a $IP -p $1 -C 3 -V"
	"$B/rping" -s -a "$IP" -p "$1" -C 3 -V >"$LOGS/rping-$1.server" 2>&1 &
	local srv=$!
	poll_until 20 "rping listening on $IP:$1" listening "$1"
	check "$B/rping" -c -a "$IP" -p "$1" -C 3 -V -v
	assert_eq "$(grep -o 'rdma-ping-[0-9]*:' <<<"$T_OUT" | sort -u | wc -l)" 3 \
		"verified pings"
	wait "$srv" || { indent <"$LOGS/rping-$1.server"; fail "rping server failed"; }
}

# probe CASE WANT: abi-probe's line for CASE against rsw0's module.
probe() {
	check "$PROBE" "$NODE" "$1"
	assert_eq "$T_OUT" "$1: $2" "abi-probe $1"
}

step "load the RDMA core, dummy0 with $IP"
check modprobe -a ib_core ib_uverbs iw_cm rdma_cm rdma_ucm
check modprobe dummy numdummies=0
dummy_netdev dummy0 "$IP/24"

step "1. current module: versions 1..2, in sysfs; uverbs ABI the oldest"
up ""
assert_file "$IB/rsw0/abi_versions" "1 2"
assert_file "/sys/class/infiniband_verbs/${NODE##*/}/abi_version" 1

step "1. current provider: version 2, a verified rping"
works "" "user ABI version 2 (module 1..2, provider 1..2)"
pings 7601

step "1. abi-probe: crafted requests through write()"
probe none "ok version=1 len=8"
probe none-short-resp EINVAL
probe good "ok version=2 min=1 max=2 len=16"
probe newer-provider "ok version=2 min=1 max=2 len=16"
probe v1-only "ok version=1 min=1 max=2 len=16"
probe short-req EINVAL
probe min0 EINVAL
probe min-gt-max EINVAL
probe no-common EPROTO
probe short-resp EINVAL
probe unreadable EFAULT
probe trailing "ok version=2 min=1 max=2 len=16"

step "1. providers narrowed to one version each meet the current module"
works 1-1 "user ABI version 1 (module 1..2, provider 1..1)"
works 2-2 "user ABI version 2 (module 1..2, provider 2..2)"
down

step "2. module 1-1 (before the negotiation): no abi_versions"
up 1-1
[ ! -e "$IB/rsw0/abi_versions" ] || fail "$IB/rsw0/abi_versions exists"
ok "no $IB/rsw0/abi_versions"
assert_file "/sys/class/infiniband_verbs/${NODE##*/}/abi_version" 1
probe none "ok version=1 len=8"
probe good EINVAL

step "2. current provider: version 1 without request data, a verified rping"
works "" "user ABI version 1 (module without negotiation, provider 1..2)"
pings 7602

step "2. provider 2-2: refused, upgrade the module"
refused 2-2 "rdmap_sw: rsw0: the rdmap_sw module speaks user ABI version 1 only (no sysfs abi_versions), this provider 2..2: upgrade the rdmap_sw module"
down

step "3. module 2-2 (dropped version 1)"
up 2-2
assert_file "$IB/rsw0/abi_versions" "2 2"
assert_file "/sys/class/infiniband_verbs/${NODE##*/}/abi_version" 2
probe none EPROTO
probe v1-only EPROTO
probe good "ok version=2 min=2 max=2 len=16"

step "3. provider 1-1: refused, upgrade the provider"
refused 1-1 "rdmap_sw: rsw0: no user ABI version in common: the rdmap_sw module speaks 2..2, this provider 1..1: upgrade the rdma-core provider (librdmap_sw)"

step "3. the device still serves the current provider, at version 2"
works "" "user ABI version 2 (module 2..2, provider 1..2)"
pings 7603
down

step "tear down"
check ip link del dummy0
dmesg_clean
echo "PASS: $T_NAME on $RSW_KERNEL ($(uname -r))"
