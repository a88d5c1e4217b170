#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The rdmap-sw-dkms package installed as on a real host, inside a guest
# (the overlay takes every write; the host is never touched):
#
#   scripts/deb && scripts/vm --kernel 6.12 --mem 2048 --timeout 900 -- scripts/tests/pkg.sh
#
#   apt-get install ./rdmap-sw-dkms_<ver>_all.deb  (RSW_PKG_DEB, else scripts/deb's)
#     -> DKMS builds and installs rdmap_sw.ko for the running kernel
#   modprobe rdmap_sw    dummy0 192.0.2.1/24 <-- rsw0    ibv_devinfo, rping
#   apt-get purge rdmap-sw-dkms -> no rdmap_sw left in DKMS, /usr/src, modules
#
# The guest cannot download: the package's
# dependency (dkms, and what it needs) comes installed in the host's root
# (scripts/setup) and apt checks that it is; the guest kernel's headers
# are the ones scripts/setup unpacked into the cache, made visible where
# linux-headers-<release> installs them (/usr/src, /usr/lib/linux-kbuild-*,
# /lib/modules/<release>/build).
# Userspace is rdma-core 56.1 with our provider (scripts/rdma-core), as in
# uverbs.sh.  Debian kernels only: the debug kernel has no headers package.
# Time: the DKMS build under TCG and depmod over Debian 6.12's xz modules
# (twice: install and purge) take minutes, hence make stress.
# dpkg-query formats are dpkg-query's ${...}, not the shell's:
# shellcheck disable=SC2016
# shellcheck source=scripts/tests/lib.sh
. "$(dirname "$0")/lib.sh"

DEV=rsw0 NETDEV=dummy0 IP=192.0.2.1 PINGS=100
REL=$(uname -r)
# The release in an extended regex (Debian's: digits, letters, . + -).
REL_RE=${REL//./\\.}
REL_RE=${REL_RE//+/\\+}
LOGS=$RSW_RUN/pkg
mkdir -p "$LOGS"

# listening PORT: a TCP socket (the device's, for rdma_cm) listens on PORT.
listening() { ss -Hltn "sport = :$1" | grep -q .; }

t_banner
if [ "${RSW_KERNEL:-}" = debug ]; then
	skip "pkg.sh: the debug kernel has no linux-headers package layout to install against"
	exit 0
fi

step "preconditions: the .deb, dkms installed, no rdmap_sw anywhere yet"
ver=$(cd "$RSW_TOP" && dpkg-parsechangelog -S Version)
DEB=${RSW_PKG_DEB:-$(rsw_deb_dir)/rdmap-sw-dkms_${ver}_all.deb}
[ -f "$DEB" ] || fail "no $DEB: build it with scripts/deb (make deb) first"
ok "$DEB"
check dpkg-query -W -f '${Package} ${Version} ${Status}\n' dkms
assert_match "$T_OUT" ' install ok installed$' "dkms status"
[ ! -e /var/lib/dkms/rdmap_sw ] || fail "/var/lib/dkms/rdmap_sw exists before the install"
[ -z "$(find "/lib/modules/$REL" -name 'rdmap_sw.ko*' -print -quit)" ] ||
	fail "a rdmap_sw.ko is in /lib/modules/$REL before the install"
ok "no rdmap_sw in /var/lib/dkms or /lib/modules/$REL"

step "/dev/fd as udev makes it (dkms uses <(...)); linux-headers-$REL as installed"
# The guest's /dev is a bare devtmpfs; a booted Debian has these links.
for l in fd:/proc/self/fd stdin:/proc/self/fd/0 stdout:/proc/self/fd/1 stderr:/proc/self/fd/2; do
	[ -e "/dev/${l%%:*}" ] || check ln -s "${l#*:}" "/dev/${l%%:*}"
done
kroot=$(rsw_modroot "$RSW_KERNEL")
for d in "$kroot"/usr/src/linux-headers-* "$kroot"/usr/lib/linux-kbuild-*; do
	[ -d "$d" ] || fail "$d is missing (run scripts/setup)"
	check ln -sfn "$d" "${d#"$kroot"}"
done
[ -f "/lib/modules/$REL/build/Makefile" ] ||
	fail "/lib/modules/$REL/build does not lead to the headers"
ok "/lib/modules/$REL/build -> $(readlink -f "/lib/modules/$REL/build")"

step "apt-get install the .deb: DKMS builds and installs rdmap_sw for $REL"
t0=$SECONDS
# (Not --no-download: bookworm's apt then fails on a local .deb with
# "Pathname to install is not absolute".  Nothing is missing, so nothing
# is downloaded.)
T_CMD_TIMEOUT=600 check env DEBIAN_FRONTEND=noninteractive apt-get install -y \
	--no-install-recommends "$DEB"
assert_match "$T_OUT" "Building for $REL_RE" "postinst builds for the running kernel"
ok "installed in $((SECONDS - t0)) s"
check dpkg-query -W -f '${Status}\n' rdmap-sw-dkms
assert_eq "$T_OUT" "install ok installed" "rdmap-sw-dkms status"
check dkms status -m rdmap_sw
assert_match "$T_OUT" "^rdmap_sw/$ver, $REL_RE, [^:]+: installed" "dkms status"
check modinfo -n rdmap_sw
assert_match "$T_OUT" "^/lib/modules/$REL_RE/updates/dkms/rdmap_sw\.ko(\.xz|\.zst|\.gz)?$" "module path"
check modinfo -F vermagic rdmap_sw
assert_eq "${T_OUT%% *}" "$REL" "vermagic release"
# The package must be the checkout's: a .deb older than the sources fails.
for f in $(cd "$RSW_TOP" && ls drivers/rdmap_sw/Kbuild drivers/rdmap_sw/*.[ch] include/uapi/rdma/rdmap_sw-abi.h); do
	cmp -s "$RSW_TOP/$f" "/usr/src/rdmap_sw-$ver/$f" ||
		fail "/usr/src/rdmap_sw-$ver/$f differs from the checkout's (rebuild with scripts/deb)"
done
ok "/usr/src/rdmap_sw-$ver holds the checkout's sources"

step "modprobe rdmap_sw (by name, dependencies from depmod)"
check modinfo -F depends rdmap_sw
deps=${T_OUT//,/ }
[ -n "$deps" ] || fail "modinfo lists no dependencies (ib_core at least)"
check modprobe rdmap_sw
check grep -w '^rdmap_sw' /proc/modules
for m in $deps; do
	grep -qw "^$m" /proc/modules || fail "modprobe rdmap_sw did not load $m"
done
ok "its dependencies came with it: $deps"
check modprobe -a ib_uverbs rdma_cm rdma_ucm
check modprobe dummy numdummies=0

step "$NETDEV with $IP/24, $DEV attached"
dummy_netdev "$NETDEV" "$IP/24"
rdma_attach "$DEV" rdmap_sw "$NETDEV"
poll_until 10 "uverbs device for $DEV" uverbs_ready "$DEV"

rdma_core_use ibv_devinfo rping
step "ibv_devinfo -d $DEV"
check "$B/ibv_devinfo" -d "$DEV"
assert_match "$T_OUT" 'transport:[[:space:]]+iWARP ' "transport"
assert_match "$T_OUT" 'state:[[:space:]]+PORT_ACTIVE ' "port 1 state"

step "rping: $PINGS pings, data verified on both sides"
printf '    $ %s &   (server, log %s)\n' "rping -s -a $IP -p 7174 -V -C $PINGS" "$LOGS/rping.server"
timeout -k 5 120 "$B/rping" -s -a "$IP" -p 7174 -V -C "$PINGS" >"$LOGS/rping.server" 2>&1 &
srv=$!
poll_until 20 "rping server listening on 7174" listening 7174
check "$B/rping" -c -a "$IP" -p 7174 -v -V -C "$PINGS"
n=$(grep -o 'rdma-ping-[0-9]*:' <<<"$T_OUT" | sort -u | wc -l)
assert_eq "$n" "$PINGS" "distinct verified pings printed by the client"
rc=0
wait "$srv" || rc=$?
[ "$rc" -eq 0 ] || { indent <"$LOGS/rping.server"; fail "rping server exit status $rc"; }
ok "rping server exited 0"

step "detach and unload"
check rdma link delete "$DEV"
poll_until 5 "$DEV gone" gone "/sys/class/infiniband/$DEV"
check rmmod rdmap_sw
check ip link delete "$NETDEV"

step "apt-get purge: nothing of rdmap_sw is left"
T_CMD_TIMEOUT=600 check env DEBIAN_FRONTEND=noninteractive apt-get purge -y \
	rdmap-sw-dkms
check_fails dpkg-query -W -f '${Status}\n' rdmap-sw-dkms
[ ! -e /var/lib/dkms/rdmap_sw ] || fail "/var/lib/dkms/rdmap_sw is still there"
[ ! -e "/usr/src/rdmap_sw-$ver" ] || fail "/usr/src/rdmap_sw-$ver is still there"
left=$(find "/lib/modules/$REL" -name 'rdmap_sw.ko*')
[ -z "$left" ] || fail "left in the module tree: $left"
ok "no rdmap_sw in /var/lib/dkms, /usr/src or /lib/modules/$REL"
check_fails modinfo -n rdmap_sw
dmesg_clean
