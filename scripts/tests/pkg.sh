#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The rdmap-sw-dkms package installed as on a real host, inside a guest
# (the overlay takes every write; the host is never touched):
#
#   scripts/deb && scripts/vm --kernel 6.12 --mem 2048 --timeout 1200 -- scripts/tests/pkg.sh
#   scripts/pkg-check && scripts/vm --kernel 6.12 --mem 2048 --timeout 300 -- \
#       env RSW_PKG_PREBUILT=1 scripts/tests/pkg.sh
#
#   apt-get install ./rdmap-sw-dkms_<ver>_all.deb  (RSW_PKG_DEB, else scripts/deb's)
#     -> DKMS builds and installs rdmap_sw.ko for the running kernel
#   modprobe rdmap_sw    dummy0 192.0.2.1/24 <-- rsw0    ibv_devinfo, rping
#   a second kernel (6.1) installed as a linux-image upgrade does: its
#     headers and module tree appear, /etc/kernel/postinst.d/dkms <6.1 rel>
#     -> DKMS installs rdmap_sw for 6.1 too (AUTOINSTALL)
#   apt-get purge rdmap-sw-dkms -> no rdmap_sw left in DKMS, /usr/src, either
#     module tree
#
# Two modes, the same steps:
#   from source (make stress): the package's postinst compiles rdmap_sw for
#     6.12 in the guest, the kernel hook compiles it for 6.1.
#   RSW_PKG_PREBUILT=1 (make check): scripts/pkg-check's DKMS binary
#     tarballs (rsw_dkms_tarball: `dkms mktarball --binaries-only` of its
#     `dkms build` for 6.1 and 6.12 on the host, one a kernel) are used:
#     6.12's is put where a package's prebuilt DKMS archive goes,
#     /usr/share/<name>-dkms/<name>-<ver>.dkms.tar.gz, and the postinst
#     (dkms's common.postinst) loads it with `dkms ldtarball`, finds
#     rdmap_sw built and only installs it; 6.1's build is put in
#     /var/lib/dkms as ldtarball would (dkms 3.0.10's ldtarball takes one
#     kernel's binaries), so the kernel hook installs it without compiling.
#     The tarballs must be this version's and their source hash must equal
#     the .deb's sources', or the test fails.  The module trees hold only
#     what the test loads and rdmap_sw needs (by the full tree's
#     modules.dep), so each depmod DKMS runs reads ~16 modules, not
#     Debian's ~4200 xz ones (52 s a depmod under TCG).
#     Exercised for real in both modes: apt and dpkg, the package's
#     maintainer scripts, DKMS's add/install/remove, depmod, the kernel
#     hook, modprobe by name, the device in use, purge.  Not in the
#     prebuilt mode: the compile by DKMS inside the guest (pkg-check
#     compiles the same package sources against the same headers, and
#     fails on any warning) and depmod over the full module trees.
#
# The guest cannot download: the package's
# dependency (dkms, and what it needs) comes installed in the host's root
# (scripts/setup) and apt checks that it is; the guest kernel's headers
# are the ones scripts/setup unpacked into the cache, made visible where
# linux-headers-<release> installs them (/usr/src, /usr/lib/linux-kbuild-*,
# /lib/modules/<release>/build).
# Userspace is rdma-core 56.1 with our provider (scripts/rdma-core), as in
# uverbs.sh.  Debian kernels only: the debug kernel has no headers package.
# Time under TCG: from source, the two DKMS compiles and six depmods over
# full trees take over ten minutes (make stress); prebuilt, about 105 s
# (apt install 27 s, the upgrade 20 s, apt purge 27 s).
# dpkg-query formats are dpkg-query's ${...}, not the shell's:
# shellcheck disable=SC2016
# shellcheck source=scripts/tests/lib.sh
. "$(dirname "$0")/lib.sh"

DEV=rsw0 NETDEV=dummy0 IP=192.0.2.1 PINGS=100
PREBUILT=${RSW_PKG_PREBUILT:-0}
REL=$(uname -r) REL2=$(rsw_release 6.1)
LOGS=$RSW_RUN/pkg
mkdir -p "$LOGS"

# re RELEASE: the release in an extended regex (Debian's: digits,
# letters, . + -).
re() { local r=${1//./\\.}; echo "${r//+/\\+}"; }
REL_RE=$(re "$REL") REL2_RE=$(re "$REL2")

# listening PORT: a TCP socket (the device's, for rdma_cm) listens on PORT.
listening() { ss -Hltn "sport = :$1" | grep -q .; }

# headers KERNEL: its linux-headers and linux-kbuild trees from the cache
# where the packages install them (lib/modules/<rel>/build points there).
headers() {
	local kroot d

	kroot=$(rsw_modroot "$1")
	for d in "$kroot"/usr/src/linux-headers-* "$kroot"/usr/lib/linux-kbuild-*; do
		[ -d "$d" ] || fail "$d is missing (run scripts/setup)"
		check ln -sfn "$d" "${d#"$kroot"}"
	done
}

# ko_of RELEASE: the rdmap_sw.ko* in RELEASE's module tree, if any.
ko_of() { find "/lib/modules/$1/" -name 'rdmap_sw.ko*' -print -quit; }

# installed_for RELEASE RELEASE_RE: DKMS says installed, the module is in
# updates/dkms of that tree, built for that release.
installed_for() {
	local ko

	check dkms status -m rdmap_sw -v "$ver" -k "$1"
	assert_match "$T_OUT" "^rdmap_sw/$ver, $2, [^:]+: installed" "dkms status for $1"
	ko=$(ko_of "$1")
	[[ "$ko" =~ ^/lib/modules/$2/updates/dkms/rdmap_sw\.ko(\.xz|\.zst|\.gz)?$ ]] ||
		fail "module for $1 at '$ko', want /lib/modules/$1/updates/dkms/rdmap_sw.ko*"
	check modinfo -F vermagic "$ko"
	assert_eq "${T_OUT%% *}" "$1" "vermagic of $ko"
}

# tarball RELEASE: pkg-check's DKMS binaries for RELEASE, checked to be
# this .deb's version, built from its sources; its rdmap_sw.ko's
# dependencies in DEPS.
tarball() {
	local tb

	tb=$(rsw_dkms_tarball "$ver" "$1")
	[ -f "$tb" ] || fail "no $tb: run scripts/pkg-check first"
	check tar -xOzf "$tb" ./dkms_binaries_only/PACKAGE_VERSION
	assert_eq "$T_OUT" "$ver" "$(basename "$tb")'s PACKAGE_VERSION"
	check tar -xzf "$tb" -C "$W" "./dkms_main_tree/$1"
	check modinfo -F depends "$W/dkms_main_tree/$1/$(uname -m)/module/rdmap_sw.ko"
	DEPS=${T_OUT//,/ }
	TB=$tb
}

# sources_match: the tarballs were built from the .deb's sources.
sources_match() {
	local sums

	sums=$(rsw_dkms_sources "$ver")
	[ -f "$sums" ] || fail "no $sums: run scripts/pkg-check first"
	check dpkg-deb -x "$DEB" "$W/deb"
	assert_eq "$(cat "$sums")" "$(rsw_dkms_sources_hash "$W/deb/usr/src/rdmap_sw-$ver")" \
		"the tarballs' source hash against the .deb's sources"
}

# module_tree KERNEL MODULE...: /lib/modules/<rel> as the kernel's
# package would leave it, for the prebuilt mode holding only MODULE...
# and what they need (by the cache's full tree's modules.dep), then
# depmod: bound over the cache's full tree, writes go to the overlay.
module_tree() {
	local k=$1 rel root full dir f
	shift
	rel=$(rsw_release "$k") root=$(rsw_modroot "$k")
	full=$root/lib/modules/$rel dir=$full
	if [ "$PREBUILT" = 1 ]; then
		dir=$W/modules-$rel
		mkdir -p "$dir"
		cp -a "$full"/modules.builtin* "$full/modules.order" "$full/build" "$dir/"
		for f in $(modprobe -d "$root" -S "$rel" --show-depends -a "$@" |
			awk '$1 == "insmod" { print $2 }' | sort -u); do
			mkdir -p "$(dirname "$dir/${f#"$full"/}")"
			cp "$f" "$dir/${f#"$full"/}"
		done
	fi
	check mkdir -p "/lib/modules/$rel"
	check mount --bind "$dir" "/lib/modules/$rel"
	[ "$PREBUILT" = 1 ] || return 0
	check depmod -a "$rel"
	ok "/lib/modules/$rel: $(find "/lib/modules/$rel/" -name '*.ko*' | wc -l) modules ($*)"
}

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
[ -z "$(ko_of "$REL")" ] || fail "a rdmap_sw.ko is in /lib/modules/$REL before the install"
[ ! -e "/lib/modules/$REL2" ] || fail "/lib/modules/$REL2 exists before its kernel is installed"
ok "no rdmap_sw in /var/lib/dkms or /lib/modules/$REL; no /lib/modules/$REL2"
if [ "$PREBUILT" = 1 ]; then
	step "prebuilt mode: pkg-check's DKMS binaries for $ver; module trees of what is loaded"
	W=/tmp/rsw-pkg
	mkdir -p "$W"
	sources_match
	tarball "$REL"
	# The postinst hands common.postinst /usr/share/$DKMS_NAME-dkms.
	check dpkg-deb -e "$DEB" "$W/control"
	dir=/usr/share/$(sed -n 's/^DKMS_NAME=//p' "$W/control/postinst")-dkms
	check mkdir -p "$dir"
	check cp "$TB" "$dir/rdmap_sw-$ver.dkms.tar.gz"
	ok "$(basename "$TB") at $dir, where a package's prebuilt DKMS archive goes"
	# What this test loads, and what is loaded already.
	# shellcheck disable=SC2046,SC2086 # lists of module names
	module_tree 6.12 $DEPS ib_core ib_uverbs iw_cm rdma_cm rdma_ucm dummy \
		$(cut -d' ' -f1 /proc/modules)
fi

step "/dev/fd as udev makes it (dkms uses <(...)); linux-headers-$REL as installed"
# The guest's /dev is a bare devtmpfs; a booted Debian has these links.
for l in fd:/proc/self/fd stdin:/proc/self/fd/0 stdout:/proc/self/fd/1 stderr:/proc/self/fd/2; do
	[ -e "/dev/${l%%:*}" ] || check ln -s "${l#*:}" "/dev/${l%%:*}"
done
headers 6.12
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
assert_match "$T_OUT" "Building for $REL_RE" "postinst installs for the running kernel"
if [ "$PREBUILT" = 1 ]; then
	assert_match "$T_OUT" "Loading tarball for rdmap_sw-$ver" "postinst loads the prebuilt tarball"
	assert_no_match "$T_OUT" "Building initial module" "postinst compiles nothing"
else
	assert_match "$T_OUT" "Building initial module for $REL_RE" "postinst compiles for $REL"
fi
ok "installed in $((SECONDS - t0)) s"
check dpkg-query -W -f '${Status}\n' rdmap-sw-dkms
assert_eq "$T_OUT" "install ok installed" "rdmap-sw-dkms status"
installed_for "$REL" "$REL_RE"
check modinfo -n rdmap_sw
assert_eq "$T_OUT" "$(ko_of "$REL")" "modinfo rdmap_sw's path"
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

step "kernel upgrade: $REL2 installed, its postinst hook installs rdmap_sw for it"
# What linux-image-$REL2 and its headers leave: the module tree (the
# cache's, bound as scripts/vm binds the running one; writes go to the
# overlay), the headers, then the kernel's postinst.d hooks run.
if [ "$PREBUILT" = 1 ]; then
	# What dkms build leaves, as `dkms ldtarball` loads it (which in dkms
	# 3.0.10 loads one kernel's binaries only: the postinst's took 6.12's).
	tarball "$REL2"
	check cp -a "$W/dkms_main_tree/$REL2" "/var/lib/dkms/rdmap_sw/$ver/"
fi
# shellcheck disable=SC2086 # a list of module names
module_tree 6.1 ${DEPS:-}
headers 6.1
check dkms status -m rdmap_sw -v "$ver" -k "$REL2"
if [ "$PREBUILT" = 1 ]; then
	assert_match "$T_OUT" "^rdmap_sw/$ver, $REL2_RE, [^:]+: built$" "before the hook: built (the tarball's)"
else
	assert_eq "$T_OUT" "rdmap_sw/$ver: added" "before the hook: dkms status for $REL2 (not built)"
fi
t0=$SECONDS
T_CMD_TIMEOUT=600 check /etc/kernel/postinst.d/dkms "$REL2" "/boot/vmlinuz-$REL2"
if [ "$PREBUILT" = 1 ]; then
	assert_no_match "$T_OUT" "Building module" "the hook compiles nothing"
else
	assert_match "$T_OUT" "Building module" "the hook compiles for $REL2"
fi
ok "hook done in $((SECONDS - t0)) s"
installed_for "$REL2" "$REL2_RE"
installed_for "$REL" "$REL_RE"

step "apt-get purge: nothing of rdmap_sw is left"
t0=$SECONDS
T_CMD_TIMEOUT=600 check env DEBIAN_FRONTEND=noninteractive apt-get purge -y \
	rdmap-sw-dkms
ok "purged in $((SECONDS - t0)) s"
check_fails dpkg-query -W -f '${Status}\n' rdmap-sw-dkms
[ ! -e /var/lib/dkms/rdmap_sw ] || fail "/var/lib/dkms/rdmap_sw is still there"
[ ! -e "/usr/src/rdmap_sw-$ver" ] || fail "/usr/src/rdmap_sw-$ver is still there"
for r in "$REL" "$REL2"; do
	[ -z "$(ko_of "$r")" ] || fail "left in /lib/modules/$r: $(ko_of "$r")"
done
ok "no rdmap_sw in /var/lib/dkms, /usr/src, /lib/modules/$REL or /lib/modules/$REL2"
check_fails modinfo -n rdmap_sw
dmesg_clean
