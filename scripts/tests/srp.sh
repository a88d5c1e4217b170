#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# SRP (SCSI RDMA Protocol) through the kernel's LIO target ib_srpt and
# initiator ib_srp over rdma_cm, in one guest, with fio verifying every
# block it reads:
#
#   scripts/siw 6.12 && scripts/build 6.12
#   scripts/vm --kernel 6.12 --mem 2048 --timeout 900 -- \
#       scripts/tests/srp.sh [--target siw|rsw] [--host siw|rsw] [--seconds N]
#                            [--family 6|4]
#
#   guest:  dummy0 fd00:78::1/64 <-- target provider: ib_srpt listening on
#                                    rdma_cm port 5555, LUN 0 a 128 MiB
#                                    LIO ramdisk (rd_mcp)
#           dummy1 fd00:78::2/64 <-- host provider: ib_srp add_target
#                                    dest=[fd00:78::1]:5555,src=[fd00:78::2]
#   (--family 4: 10.78.0.1/24 and 10.78.0.2/24, dest=10.78.0.1:5555.)
#   With the same provider on both sides, one device on dummy0 serves both.
#
# IPv6 by default, because ib_srpt's rdma_cm listener is the IPv6
# wildcard [::]:port (it falls back to IPv4 only when that fails).  An
# IPv4 login reaches it on rdmap_sw, whose [::] listen covers the IPv4
# addresses too, but not on upstream siw: siw takes it on a dual-stack
# socket and reports a v4-mapped local address, which rdma_cm cannot
# resolve to a device (6.12: ulp/srpt/ib_srpt.c srpt_rdma_cm_port_store,
# core/cma.c iw_conn_req_handler -> rdma_translate_ip).  --family 4 with
# an siw target is therefore a SKIP.
#
# Mixed providers (--target siw --host rsw and the reverse) are a SKIP in
# this one-guest layout.  ib_srpt listens on every RDMA device, and
# upstream siw binds its part of a wildcard listen to its netdev
# ([::]:port with sk_bound_dev_if, siw_cm.c siw_create_listen):
#  - siw as target: a device-bound TCP listener on dummy0 never sees a
#    connection from an address of dummy1 in the same kernel (plain
#    sockets on 6.12: SYNs from 10.78.0.2 or fd00:78::2 to a listener
#    bound to dummy0 time out; from dummy0's own address they connect);
#  - siw as host: its [::]:port listener on dummy1 also covers every
#    socket not bound to a device, so rdmap_sw's per-address listeners
#    for the same rdma_cm id get EADDRINUSE and ib_srpt's rdma_listen()
#    fails (-98), for [::] and 0.0.0.0 alike.
# Between two hosts (scripts/vm2) neither applies; NVMe-oF interop
# (nvmeof.sh) listens on one address and is not affected.
#
# Target, written straight into configfs (no targetcli in the guest):
# /sys/kernel/config/target/srpt/discovery_auth/rdma_cm_port (in 6.12 a
# configfs attribute, not a module parameter), a target port named after
# the target device's GID as ib_srpt formats it, tpgt_1 with the ramdisk
# as LUN 0, and an ACL for the initiator port ID ib_srp logs in with
# (initiator_ext, then the interface ID of the host device's GID).
# ib_srpt is loaded with a fixed srpt_service_guid, the id_ext and
# ioc_guid the initiator names.
#
# Asserts the login (a LIO-ORG disk on an ib_srp SCSI host, its SRP
# remote port running), no fio error and non-zero reads and writes, that
# while the I/O runs every target cm_id (ib_srpt) is on the target
# provider's device and every host cm_id (ib_srp) on the host provider's,
# their QPs in RTS and one pair per MPA connection seen (`rdma res show
# qp`, `cm_id`); then logs out (the remote port's delete: SCSI host and
# disk gone), tears the target down, deletes the links, unloads every
# module it loaded and checks the kernel log.  One line per block size
# (fio, or dd on a kernel without SysV IPC: scripts/tests/blk-io.sh):
#   srp target=rsw host=rsw ipv6 bs=4k read=… MB/s write=… MB/s errors=0 mpa_crc=0/2
# shellcheck source=scripts/tests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=scripts/tests/rdma-env.sh
. "$(dirname "$0")/rdma-env.sh"
# shellcheck source=scripts/tests/blk-io.sh
. "$(dirname "$0")/blk-io.sh"

target=rsw host=rsw seconds=30 family=6
while [ $# -gt 0 ]; do
	case "$1" in
	--target) target=$2; shift 2 ;;
	--host) host=$2; shift 2 ;;
	--seconds) seconds=$2; shift 2 ;;
	--family) family=$2; shift 2 ;;
	*) echo "usage: $0 [--target siw|rsw] [--host siw|rsw] [--seconds N] [--family 6|4]" >&2
		exit 2 ;;
	esac
done
re_check_provider_name "$target"
re_check_provider_name "$host"
case "$seconds" in ''|*[!0-9]*|0) fail "--seconds takes a positive number" ;; esac
case "$family" in 4|6) ;; *) fail "--family takes 6 or 4" ;; esac
if [ "$target" != "$host" ]; then
	skip "srp --target $target --host $host: upstream siw's device-bound wildcard listener cannot meet another provider in one guest (see the head of $0)"
	exit 0
fi
if [ "$family" = 4 ] && [ "$target" = siw ]; then
	skip "srp --family 4 --target siw: upstream siw cannot take an IPv4 login on ib_srpt's [::] listener (v4-mapped address, see the head of $0)"
	exit 0
fi

if [ "$family" = 6 ]; then
	TGT_IP=fd00:78::1 HOST_IP=fd00:78::2 PFX=64
else
	TGT_IP=10.78.0.1 HOST_IP=10.78.0.2 PFX=24
fi
PORT=5555
# id_ext and ioc_guid of the target port (ib_srpt srpt_service_guid).
GUID=0002c90300a0b0c0
# The initiator's port ID extension (ib_srp initiator_ext).
IEXT=0000000000005250
CFS=/sys/kernel/config
LIO=$CFS/target
RD=$LIO/core/rd_mcp_0/srpdisk
# 128 MiB of 4 KiB pages.
RD_PAGES=32768
BIO_FIO_SIZE=128M

# gid_hex DEV: port 1's GID 0 of RDMA device DEV, 32 hex digits.
gid_hex() {
	local g
	g=$(<"$RE_IB/$1/ports/1/gids/0") || return
	echo "${g//:/}"
}

# srp_bdev: the disk of the logged-in target (LIO's, on an ib_srp host).
srp_bdev() {
	local b host vendor proc
	for b in /sys/block/sd*; do
		# read: the INQUIRY vendor is padded with blanks.
		read -r vendor 2>/dev/null <"$b/device/vendor" || continue
		[ "$vendor" = LIO-ORG ] || continue
		host=$(readlink -f "$b/device")
		host=${host%%/target*}
		read -r proc <"$host/scsi_host/${host##*/}/proc_name" || continue
		[ "$proc" = ib_srp ] || continue
		[ -b "/dev/${b##*/}" ] || continue
		echo "/dev/${b##*/}"
		return 0
	done
	return 1
}

# srp_ports: the SRP remote ports (scsi_transport_srp), one per line.
srp_ports() { ls /sys/class/srp_remote_ports 2>/dev/null || true; }

# bio_live: every SRP remote port exists and is running (no reconnect).
bio_live() {
	local p n=0
	for p in /sys/class/srp_remote_ports/*/state; do
		[ -r "$p" ] && [ "$(<"$p")" = running ] || return 1
		n=$((n + 1))
	done
	[ "$n" -ge 1 ]
}

# lio_export TDEV IPORT: ramdisk, ib_srpt's rdma_cm listener, target port
# (TDEV's GID) with LUN 0 and an ACL for initiator port IPORT, enabled.
lio_export() {
	local tdev=$1 iport=$2 tpg
	if ! mountpoint -q "$CFS"; then
		check mount -t configfs none "$CFS"
		CFS_MOUNTED=1
	fi
	[ -d "$LIO" ] || fail "no $LIO (configfs or target_core_mod missing)"
	check mkdir -p "$RD"
	echo "rd_pages=$RD_PAGES" >"$RD/control" || fail "rd_mcp control"
	echo 1 >"$RD/enable" || fail "rd_mcp enable"
	check mkdir "$LIO/srpt"
	echo "$PORT" >"$LIO/srpt/discovery_auth/rdma_cm_port" || fail "rdma_cm_port"
	assert_file "$LIO/srpt/discovery_auth/rdma_cm_port" "$PORT"
	TPORT=$LIO/srpt/0x$(gid_hex "$tdev")
	tpg=$TPORT/tpgt_1
	check mkdir "$TPORT"
	check mkdir "$tpg"
	check mkdir "$tpg/lun/lun_0"
	check ln -s "$RD" "$tpg/lun/lun_0/srpdisk"
	check mkdir "$tpg/acls/$iport"
	check mkdir "$tpg/acls/$iport/lun_0"
	check ln -s "$tpg/lun/lun_0" "$tpg/acls/$iport/lun_0/lun_0"
	echo 1 >"$tpg/enable" || fail "tpgt_1 enable"
	assert_file "$tpg/enable" 1
}

# lio_unexport IPORT: everything lio_export made, in reverse.
lio_unexport() {
	local iport=$1 tpg=$TPORT/tpgt_1
	echo 0 >"$tpg/enable" || fail "tpgt_1 disable"
	check rm "$tpg/acls/$iport/lun_0/lun_0"
	check rmdir "$tpg/acls/$iport/lun_0" "$tpg/acls/$iport"
	check rm "$tpg/lun/lun_0/srpdisk"
	check rmdir "$tpg/lun/lun_0" "$tpg" "$TPORT"
	echo 0 >"$LIO/srpt/discovery_auth/rdma_cm_port" || fail "rdma_cm_port 0"
	check rmdir "$LIO/srpt"
	check rmdir "$RD" "${RD%/*}"
	[ "${CFS_MOUNTED:-0}" = 0 ] || check umount "$CFS"
}

# in_brackets IP: IP as ib_srp's dest= and src= take it.
in_brackets() {
	if [ "$family" = 6 ]; then echo "[$1]"; else echo "$1"; fi
}

# The listener ib_srpt put on each device (restrack: LISTEN, [ib_srpt]).
srpt_listening() {
	local out
	out=$(rdma res show cm_id) || return
	grep -Eq "^link $1/- .*state LISTEN .*comm \[ib_srpt\] src-addr (::|0\.0\.0\.0):$PORT " <<<"$out"
}

t_banner
note "target=$target host=$host seconds=$seconds family=IPv$family"

step "RDMA core, LIO, ib_srpt, ib_srp and sd modules"
re_begin
check modprobe target_core_mod
check modprobe ib_srpt srpt_service_guid=0x$GUID
check modprobe ib_srp
check modprobe sd_mod

step "providers: target $target on dummy0 $TGT_IP, host $host"
re_pair_up "" "$TGT_IP/$PFX" "$HOST_IP/$PFX"
tdev=$(re_dev "$target")
hdev=$(re_dev "$host")
hgid=$(gid_hex "$hdev")
iport=0x$IEXT${hgid:16:16}
note "target GID 0x$(gid_hex "$tdev"), initiator port ID $iport"

step "LIO target: ramdisk LUN, ib_srpt on rdma_cm port $PORT, ACL $iport"
lio_export "$tdev" "$iport"
poll_until 10 "ib_srpt listening on $tdev" srpt_listening "$tdev"
ok "ib_srpt listens on $tdev port $PORT"

dest=$(in_brackets "$TGT_IP"):$PORT
step "login: ib_srp add_target on srp-$hdev-1, dest=$dest"
re_mpa_watch_start "$PORT"
opts="id_ext=$GUID,ioc_guid=$GUID,dest=$dest,src=$(in_brackets "$host_ip"),initiator_ext=$IEXT"
printf '    $ echo %s > %s\n' "$opts" "/sys/class/infiniband_srp/srp-$hdev-1/add_target"
echo "$opts" >"/sys/class/infiniband_srp/srp-$hdev-1/add_target" ||
	fail "add_target refused the login"
poll_until 60 "LIO disk on an ib_srp host" srp_bdev
bdev=$(srp_bdev)
note "block device $bdev ($(($(<"/sys/block/${bdev#/dev/}/size") / 2048)) MiB)"
poll_until 10 "SRP remote port running" bio_live
ports=$(srp_ports)
assert_eq "$(wc -w <<<"$ports")" 1 "SRP remote ports"
re_mpa_collect ""

# ib_srp opens one channel (RDMA connection) per hardware queue: at least one.
bio_run srp ib_srpt ib_srp 1 "srp target=$target host=$host ipv$family"

step "logout: delete the SRP remote port"
check bash -c "echo 1 > /sys/class/srp_remote_ports/$ports/delete"
poll_until 30 "$bdev gone" gone "$bdev"
poll_until 30 "remote port $ports gone" gone "/sys/class/srp_remote_ports/$ports"
srp_bdev >/dev/null && fail "an SRP disk is left after the logout"
ok "disk and remote port gone"

step "tear down the target"
lio_unexport "$iport"

re_pair_down
bio_summaries
echo "PASS: $T_NAME target=$target host=$host ipv$family on $RSW_KERNEL ($(uname -r))"
