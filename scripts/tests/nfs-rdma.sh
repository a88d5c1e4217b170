#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# NFSv4 over RDMA (kernel nfsd with svcrdma, kernel client with xprtrdma) in
# one guest, both ends on one RDMA device:
#
#   scripts/siw 6.12 && scripts/build 6.12
#   scripts/vm --kernel 6.12 --mem 2048 --timeout 600 -- \
#       scripts/tests/nfs-rdma.sh [--provider siw|rsw] [--size-mib N] [--crc on|off]
#                                 [--cxgb4]
#
#   guest:  dummy0 10.78.0.1/24 <-- provider device (siw0 or rsw0)
#           nfsd: RDMA listener on 10.78.0.1:20049 only, NFSv4 only (no
#           rpcbind; rpc.mountd answers the kernel's export upcalls),
#           exporting a tmpfs as the NFSv4 root (fsid=0: the guest's / is an
#           overlay that cannot serve as a pseudo-root); client:
#           mount -t nfs -o rdma,port=20049,vers=4.x 10.78.0.1:/
#
# Writes a file of N MiB (default 256) of random data through the mount
# (dd conv=fsync), drops the caches, reads it back, and compares sha256
# with the source and with the server's copy.  The NFS version is the
# newest the client kernel is built with (CONFIG_NFS_V4_2 -> 4.2, V4_1 ->
# 4.1, else 4.0; the debug kernel lacks NFS_V4_1), asked for explicitly,
# and the version the mount negotiated (/proc/mounts) must be that one.  Memory: the source file (/dev/shm), the export
# (tmpfs) and the client's page cache each hold N MiB; with the default
# 256 MiB the default --mem 2048 is plenty.  Prints:
#   nfs-rdma provider=siw crc=default vers=4.2 size=256MiB write=… MB/s read=… MB/s sha256=ok mpa_crc=0/1
# mpa_crc: connections whose MPA reply turned CRC on, of all (see nvmeof.sh);
# --crc on|off as in nvmeof.sh (siw: crc/ variant; rsw: mpa_crc=Y|N).
# --cxgb4 (rsw) as in nvmeof.sh: the device connects as iw_cxgb4 does at its
# defaults (Read-only RTR offer, ORD raised to 1), checked on the wire.
# shellcheck source=scripts/tests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=scripts/tests/rdma-env.sh
. "$(dirname "$0")/rdma-env.sh"

provider=siw size_mib=256 crc= cxgb4=0
while [ $# -gt 0 ]; do
	case "$1" in
	--provider) provider=$2; shift 2 ;;
	--size-mib) size_mib=$2; shift 2 ;;
	--crc) crc=$2; shift 2 ;;
	--cxgb4) cxgb4=1; shift ;;
	*) echo "usage: $0 [--provider siw|rsw] [--size-mib N] [--crc on|off] [--cxgb4]" >&2
		exit 2 ;;
	esac
done
re_check_provider_name "$provider"
case "$size_mib" in ''|*[!0-9]*|0) fail "--size-mib takes a positive number" ;; esac
case "$crc" in ''|on|off) ;; *) fail "--crc takes on or off" ;; esac
[ "$cxgb4" = 0 ] || [ "$provider" = rsw ] || fail "--cxgb4 needs --provider rsw"

IP=10.78.0.1
PORT=20049
NFSD=/proc/fs/nfsd
WORK=/run/nfs-rdma-test
EXPORT=$WORK/export
MNT=$WORK/mnt
SRC=/dev/shm/nfs-rdma-src

mountd_pid=

# For poll_until: rpc.mountd is alive and reads the kernel's export upcalls
# (without a reader nfsd would answer the first lookups negatively).
mountd_listens() {
	local fd
	kill -0 "$mountd_pid" || return 1
	for fd in "/proc/$mountd_pid"/fd/*; do
		case "$(readlink "$fd")" in */nfsd.export/channel) return 0 ;; esac
	done
	return 1
}

# kconfig_file: the running kernel's .config (the kbuild tree scripts/build
# used: Debian's headers or the debug kernel's build directory).
kconfig_file() {
	local kdir
	kdir=$(rsw_kdir "$RSW_KERNEL") || return 1
	[ "$(cat "$kdir/include/config/kernel.release" 2>/dev/null)" = "$(uname -r)" ] ||
		{ echo "$kdir is not the build tree of $(uname -r)"; return 1; }
	[ -r "$kdir/.config" ] || { echo "no $kdir/.config"; return 1; }
	echo "$kdir/.config"
}

# nfs_client_vers: the newest NFSv4 minor version the client is built with
# (4.2, 4.1, 4.0), or why it cannot tell; status 1 then.
nfs_client_vers() {
	local cfg
	cfg=$(kconfig_file) || { echo "$cfg"; return 1; }
	if grep -qx 'CONFIG_NFS_V4_2=y' "$cfg"; then
		echo 4.2
	elif grep -qx 'CONFIG_NFS_V4_1=y' "$cfg"; then
		echo 4.1
	elif grep -qE '^CONFIG_NFS_V4=[ym]$' "$cfg"; then
		echo 4.0
	else
		echo "$cfg: the NFS client has no NFSv4 (CONFIG_NFS_V4)"
		return 1
	fi
}

t_banner
note "provider=$provider size=${size_mib}MiB crc=${crc:-default} cxgb4=$cxgb4"
mem_mib=$(awk '/^MemTotal:/ { print int($2 / 1024) }' /proc/meminfo)
[ "$mem_mib" -ge $((size_mib * 4 + 512)) ] ||
	fail "${mem_mib} MiB of memory is too little for ${size_mib} MiB (want $((size_mib * 4 + 512))): use scripts/vm --mem"

step "RDMA core, provider $provider on dummy0 $IP/24"
re_begin
re_netdev dummy0 "$IP/24"
re_load "$provider" "$crc"
re_attach "$provider" dummy0
[ "$cxgb4" = 0 ] || re_rsw_cxgb4 "$(re_dev "$provider")"

step "source file: ${size_mib} MiB from /dev/urandom"
check dd if=/dev/urandom of="$SRC" bs=1M count="$size_mib" status=none
src_sum=$(sha256sum "$SRC" | cut -d' ' -f1)
note "sha256 $src_sum"

step "nfsd: modules, export a tmpfs, NFSv4 only, RDMA port $PORT"
check modprobe nfsd
check modprobe rpcrdma
mountpoint -q "$NFSD" || check mount -t nfsd nfsd "$NFSD"
check mkdir -p "$EXPORT" "$MNT" /var/lib/nfs/v4recovery
check mount -t tmpfs -o size=$((size_mib + 64))m,mode=0777 nfs-rdma-export "$EXPORT"
# The shortest grace period nfsd allows (10 s): set before nfsd starts.
echo 10 >"$NFSD/nfsv4leasetime" || fail "nfsv4leasetime"
echo 10 >"$NFSD/nfsv4gracetime" || fail "nfsv4gracetime"
echo "-3 +4 +4.1 +4.2" >"$NFSD/versions" || fail "versions"
check cat "$NFSD/versions"
: >/etc/exports
check exportfs -o rw,fsid=0,no_root_squash,insecure,no_subtree_check,sync "$IP/24:$EXPORT"
check exportfs -v
assert_match "$T_OUT" "$EXPORT" "exportfs lists the export"
# mountd answers nfsd's export/fh cache upcalls; NFSv3 mount protocol off.
rpc.mountd -F -N 3 --no-udp >"$WORK/mountd.log" 2>&1 &
mountd_pid=$!
poll_until 20 "rpc.mountd opened nfsd's export cache channel" mountd_listens
echo "rdma $PORT" >"$NFSD/portlist" || fail "rdma listener: echo 'rdma $PORT' > $NFSD/portlist"
check cat "$NFSD/portlist"
assert_match "$T_OUT" "^rdma $PORT$" "nfsd listens on RDMA"
echo 4 >"$NFSD/threads" || fail "threads"
assert_file "$NFSD/threads" 4
kill -0 "$mountd_pid" 2>/dev/null || { cat "$WORK/mountd.log"; fail "rpc.mountd exited"; }

step "the newest NFS version this kernel's client has"
vers=$(nfs_client_vers) || fail "$vers"
note "NFS client: newest version $vers (from $(kconfig_file))"
nfsd_versions=$(cat "$NFSD/versions")
# nfsd writes 4.0 as "+4" (minor versions as "+4.1", "+4.2").
vers_re=${vers//./\\.}
[ "$vers" != 4.0 ] || vers_re='4(\.0)?'
assert_match "$nfsd_versions" "(^| )\+$vers_re( |$)" "nfsd offers $vers"

step "mount -t nfs -o rdma,port=$PORT,vers=$vers $IP:/"
re_mpa_watch_start "$PORT"
check timeout 60 mount -t nfs -o "rdma,port=$PORT,vers=$vers" "$IP:/" "$MNT"
# What the client negotiated, not what was asked: a mount that fell back to
# an older version fails here.
check grep " $MNT " /proc/mounts
assert_match "$T_OUT" "[ ,]proto=rdma(,| )" "mounted over RDMA"
assert_match "$T_OUT" "[ ,]vers=${vers//./\\.}(,| )" "negotiated NFS version"
check re_mpa_watch_stop
mpa=$T_OUT
re_mpa_assert "$mpa" "$crc"
[ "$cxgb4" = 0 ] || re_rtr_assert "$mpa"
mpa_crc=$(sed -n 's/.*\brep=\([0-9]*\) rep_crc=\([0-9]*\).*/\2\/\1/p' <<<"$mpa")

step "write ${size_mib} MiB through the mount (dd conv=fsync)"
t0=$(now_ms)
T_CMD_TIMEOUT=600 check dd if="$SRC" of="$MNT/file" bs=1M conv=fsync status=none
write_ms=$(($(now_ms) - t0))
write_mbps=$(re_mbps $((size_mib * 1048576)) "$write_ms")
note "wrote in $write_ms ms: $write_mbps MB/s (may include part of nfsd's 10 s grace period)"

step "drop caches, read back (dd), compare sha256"
echo 3 >/proc/sys/vm/drop_caches || fail "drop_caches"
t0=$(now_ms)
T_CMD_TIMEOUT=600 check dd if="$MNT/file" of=/dev/null bs=1M status=none
read_ms=$(($(now_ms) - t0))
read_mbps=$(re_mbps $((size_mib * 1048576)) "$read_ms")
note "read in $read_ms ms: $read_mbps MB/s"
# What dd read over RDMA is now in the client's page cache.
check sha256sum "$MNT/file"
assert_eq "${T_OUT%% *}" "$src_sum" "sha256 read back over NFS/RDMA"
check sha256sum "$EXPORT/file"
assert_eq "${T_OUT%% *}" "$src_sum" "sha256 of the server's copy"
# shellcheck disable=SC2016 # an awk program
check awk -v m="$MNT" '$0 ~ "mounted on " m " " { on = 1 } on && /xprt:/ { print; exit }' \
	/proc/self/mountstats
assert_match "$T_OUT" "xprt:[[:space:]]+rdma" "client transport is rdma"

step "unmount, stop nfsd"
check umount "$MNT"
echo 0 >"$NFSD/threads" || fail "threads 0"
check exportfs -ua
kill "$mountd_pid" 2>/dev/null || true
wait "$mountd_pid" 2>/dev/null || true
check umount "$NFSD"
check umount "$EXPORT"
rm -f "$SRC"

step "delete the RDMA link and the netdev"
re_detach "$provider"
check ip link del dummy0

step "unload every module the test loaded"
re_unload_all

step "the kernel log is clean"
dmesg_clean
summary="nfs-rdma provider=$provider crc=${crc:-default} vers=$vers size=${size_mib}MiB write=$write_mbps MB/s read=$read_mbps MB/s sha256=ok mpa_crc=$mpa_crc"
echo "$summary"
echo "PASS: $T_NAME provider=$provider on $RSW_KERNEL ($(uname -r))"
