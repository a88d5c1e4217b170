# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2154 # variables the sourcing test sets (below)
# NFSv4 over RDMA, the server (kernel nfsd with svcrdma, rpc.mountd for its
# export upcalls, no rpcbind) and the client (xprtrdma) halves, shared by
# nfs-rdma.sh (both in one guest) and wire2.sh (one in each).  Source it
# after lib.sh and rdma-env.sh.  The test sets IP (the server's address,
# IPv4 or IPv6), PORT (its RDMA port), size_mib, crc, and for the server
# CIDR (who may mount); these keep their state in NFSD, WORK, EXPORT, MNT, SRC,
# mountd_pid, vers, mpa, mpa_crc, write_mbps and read_mbps.
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

# nfs_server_start: nfsd exporting a tmpfs of size_mib + 64 MiB as the
# NFSv4 root to CIDR, RDMA listener on PORT, 4 threads; NFSv4 only.
nfs_server_start() {
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
	# Through /etc/exports: exportfs's CLIENT:PATH argument cannot hold an
	# IPv6 CIDR.
	echo "$EXPORT $CIDR(rw,fsid=0,no_root_squash,insecure,no_subtree_check,sync)" >/etc/exports ||
		fail "/etc/exports"
	check exportfs -r
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
}

# nfs_vers_pick: vers, the newest NFS version this kernel's client has,
# which nfsd must offer too when it runs here (NFS_SERVER_HERE=1).
nfs_vers_pick() {
	step "the newest NFS version this kernel's client has"
	vers=$(nfs_client_vers) || fail "$vers"
	note "NFS client: newest version $vers (from $(kconfig_file))"
	# The server's offer, when it runs here (elsewhere: the mount says).
	[ "${NFS_SERVER_HERE:-0}" = 1 ] || return 0
	nfsd_versions=$(cat "$NFSD/versions")
	# nfsd writes 4.0 as "+4" (minor versions as "+4.1", "+4.2").
	vers_re=${vers//./\\.}
	[ "$vers" != 4.0 ] || vers_re='4(\.0)?'
	assert_match "$nfsd_versions" "(^| )\+$vers_re( |$)" "nfsd offers $vers"
}

# nfs_mount: mount IP:/ over RDMA at MNT with vers (the sniffer on
# ${NFS_IFACE:-lo} checks the MPA CRC); sets mpa and mpa_crc.  An IPv6 IP
# mounts [IP]:/ with proto=rdma6.
nfs_mount() {
	local proto=rdma server=$IP
	case "$IP" in *:*) proto=rdma6 server="[$IP]" ;; esac
	step "mount -t nfs -o proto=$proto,port=$PORT,vers=$vers $server:/"
	check mkdir -p "$MNT"
	re_mpa_watch_start "$PORT" "${NFS_IFACE:-lo}"
	check timeout 60 mount -t nfs -o "proto=$proto,port=$PORT,vers=$vers" "$server:/" "$MNT"
	# What the client negotiated, not what was asked: a mount that fell back to
	# an older version fails here.
	check grep " $MNT " /proc/mounts
	assert_match "$T_OUT" "[ ,]proto=$proto(,| )" "mounted over RDMA ($proto)"
	assert_match "$T_OUT" "[ ,]addr=${IP//./\\.}(,| )" "server address"
	assert_match "$T_OUT" "[ ,]vers=${vers//./\\.}(,| )" "negotiated NFS version"
	check re_mpa_watch_stop
	mpa=$T_OUT
	re_mpa_assert "$mpa" "$crc"
	[ "${cxgb4:-0}" = 0 ] || re_rtr_assert "$mpa"
	# shellcheck disable=SC2034 # mpa_crc: the test's summary
	mpa_crc=$(sed -n 's/.*\brep=\([0-9]*\) rep_crc=\([0-9]*\).*/\2\/\1/p' <<<"$mpa")
}

# nfs_write_read: SRC (size_mib MiB, sum src_sum) written through MNT,
# caches dropped, read back and compared; with the server here
# (NFS_SERVER_HERE=1), its copy too.  Sets write_mbps and read_mbps.
nfs_write_read() {
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
	if [ "${NFS_SERVER_HERE:-0}" = 1 ]; then
		check sha256sum "$EXPORT/file"
		assert_eq "${T_OUT%% *}" "$src_sum" "sha256 of the server's copy"
	fi
	# shellcheck disable=SC2016 # an awk program
	check awk -v m="$MNT" '$0 ~ "mounted on " m " " { on = 1 } on && /xprt:/ { print; exit }' \
		/proc/self/mountstats
	assert_match "$T_OUT" "xprt:[[:space:]]+rdma" "client transport is rdma"
}

# nfs_umount and nfs_server_stop: the client's and the server's teardown.
nfs_umount() {
	check umount "$MNT"
}

nfs_server_stop() {
	echo 0 >"$NFSD/threads" || fail "threads 0"
	check exportfs -ua
	kill "$mountd_pid" 2>/dev/null || true
	wait "$mountd_pid" 2>/dev/null || true
	check umount "$NFSD"
	check umount "$EXPORT"
}
