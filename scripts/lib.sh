# SPDX-License-Identifier: GPL-2.0
# Shared shell helpers for rdmap_sw scripts.  Source it; do not run it.
#
# Cache layout (never inside the checkout):
#   $RSW_CACHE/versions.env          kernel releases chosen by scripts/setup
#   $RSW_CACHE/kernels/<release>/    dpkg -x of linux-image-<release>-unsigned,
#                                    linux-headers-<release> (+ -common, kbuild)
#   $RSW_CACHE/debug/                debug kernel: source, O= build, modules
#   $RSW_CACHE/out/<tree>/<release>/ per-checkout, per-kernel module builds
#   $RSW_CACHE/ccache/               compiler cache for the debug kernel
#   $RSW_CACHE/deb/<tree>/           per-checkout Debian packages (scripts/deb)
#
# Kernel names used by every script: "6.12" (default), "6.1", "debug".

RSW_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RSW_CACHE=${RSW_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rdmap_sw}
export RSW_TOP RSW_CACHE

# Kernel log lines that are bug reports: a run that printed one fails.  The
# one list for scripts/vm (console), scripts/kunit (console) and the guest
# tests' dmesg_clean (scripts/tests/lib.sh; guests source this file through
# $RSW_TOP).  Extended regex; match it against kernel lines only (on the
# console they carry a printk timestamp), so a test echoing these words does
# not fail itself.  KUnit passes cases that trip lockdep, UBSAN, kmemleak
# ..., hence the long list.
RSW_BUG_RE='BUG:|WARNING:|Oops|Kernel panic|KASAN|UBSAN|lockdep is turned off|turning off the locking correctness validator|DEBUG_LOCKS_WARN_ON|possible (circular|recursive) locking|inconsistent lock state|suspicious RCU usage|sleeping function called from invalid context|unreferenced object|new suspected memory leak|refcount_t:|ODEBUG:|list_(add|del) corruption|soft lockup|blocked for more than|workqueue lockup|ref_tracker:|unregister_netdevice: waiting'

rsw_log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
rsw_die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# Load the versions that scripts/setup resolved.
rsw_versions() {
	[ -r "$RSW_CACHE/versions.env" ] ||
		rsw_die "no $RSW_CACHE/versions.env: run scripts/setup first"
	# shellcheck source=/dev/null
	. "$RSW_CACHE/versions.env"
}

# Debug kernel: the directory of the current build (see scripts/debug-kernel).
rsw_debug_dir() {
	[ -e "$RSW_CACHE/debug/current" ] ||
		rsw_die "no debug kernel built: run scripts/debug-kernel"
	readlink -f "$RSW_CACHE/debug/current"
}

# kernel name -> release string
rsw_release() {
	case "$1" in
	6.12) rsw_versions; echo "$RSW_K612" ;;
	6.1) rsw_versions; echo "$RSW_K61" ;;
	debug) cat "$(rsw_debug_dir)/release" ;;
	*) rsw_die "unknown kernel '$1' (want 6.12, 6.1 or debug)" ;;
	esac
}

# Debian kernel release -> its headers, unpacked by scripts/setup
rsw_kdir_of() {
	echo "$RSW_CACHE/kernels/$1/usr/src/linux-headers-$1"
}

# kernel name -> kbuild directory usable as KDIR
rsw_kdir() {
	case "$1" in
	debug) echo "$(rsw_debug_dir)/build" ;;
	*) rsw_kdir_of "$(rsw_release "$1")" ;;
	esac
}

# kernel name -> bootable image
rsw_image() {
	case "$1" in
	debug) echo "$(rsw_debug_dir)/bzImage" ;;
	*) echo "$RSW_CACHE/kernels/$(rsw_release "$1")/boot/vmlinuz-$(rsw_release "$1")" ;;
	esac
}

# kernel name -> directory that holds lib/modules/<release>
rsw_modroot() {
	case "$1" in
	debug) echo "$(rsw_debug_dir)/modroot" ;;
	*) echo "$RSW_CACHE/kernels/$(rsw_release "$1")" ;;
	esac
}

# kernel name -> where this checkout's modules are built for that kernel
rsw_outdir() {
	local tree
	tree=$(printf '%s' "$RSW_TOP" | sha1sum | cut -c1-10)
	echo "$RSW_CACHE/out/$tree/$(rsw_release "$1")"
}

# rsw_abi_range_ok MIN-MAX: a range of user ABI versions for --abi
# (scripts/build, scripts/rdma-core): 1 <= MIN <= MAX.
rsw_abi_range_ok() {
	[[ "$1" =~ ^([1-9][0-9]*)-([1-9][0-9]*)$ ]] &&
		[ "${BASH_REMATCH[1]}" -le "${BASH_REMATCH[2]}" ]
}

# where scripts/deb leaves this checkout's packages (RSW_DEB_OUT overrides)
rsw_deb_dir() {
	echo "${RSW_DEB_OUT:-$RSW_CACHE/deb/$(printf '%s' "$RSW_TOP" | sha1sum | cut -c1-10)}"
}

# version release -> the DKMS binary tarball scripts/pkg-check leaves next
# to the .debs (`dkms mktarball --binaries-only`: its rdmap_sw.ko for that
# kernel, from the package's sources), for pkg.sh's prebuilt mode; one a
# kernel, as bookworm's dkms 3.0.10 archives and loads only the first of
# several.  rsw_dkms_sources version: the rsw_dkms_sources_hash of the
# sources they were built from.
rsw_dkms_tarball() {
	echo "$(rsw_deb_dir)/rdmap_sw-$1-$2.dkms.tar.gz"
}
rsw_dkms_sources() {
	echo "$(rsw_deb_dir)/rdmap_sw-$1.dkms.sources"
}

# DIR (a /usr/src/rdmap_sw-<ver> as the package ships it) -> one hash of
# its dkms.conf, driver sources and uapi header, names and contents.
rsw_dkms_sources_hash() {
	(cd "$1" && find dkms.conf drivers include -type f | LC_ALL=C sort |
		xargs sha256sum | sha256sum | cut -d' ' -f1)
}

# kernel release -> where scripts/siw keeps upstream siw.ko built for it
# (a test peer only): <dir>/plain/siw.ko as upstream has it, <dir>/crc/siw.ko
# with MPA CRC required.  Takes a release so that guests can use $RSW_KREL.
rsw_siw_dir() {
	echo "$RSW_CACHE/siw/$1"
}
