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

# shellcheck source=scripts/tests/nfs-env.sh
. "$(dirname "$0")/nfs-env.sh"

IP=10.78.0.1
CIDR=$IP/24
PORT=20049
NFS_SERVER_HERE=1

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

nfs_server_start
nfs_vers_pick
nfs_mount
nfs_write_read

step "unmount, stop nfsd"
nfs_umount
nfs_server_stop
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
