# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2154,SC2153 # variables the sourcing test sets (below)
# SRP (SCSI RDMA Protocol) over rdma_cm, the target (LIO's ib_srpt with a
# ramdisk LUN) and the initiator (ib_srp) halves, shared by srp.sh (both
# in one guest) and wire2.sh (one in each).  Source it after lib.sh,
# rdma-env.sh and blk-io.sh.  The test sets PORT (ib_srpt's rdma_cm
# port); these keep their state in TPORT, CFS_MOUNTED, bdev and ports.
#
# Target, written straight into configfs (no targetcli in the guest):
# /sys/kernel/config/target/srpt/discovery_auth/rdma_cm_port (in 6.12 a
# configfs attribute, not a module parameter), a target port named after
# the target device's GID as ib_srpt formats it, tpgt_1 with the ramdisk
# as LUN 0, and an ACL for the initiator port ID ib_srp logs in with
# (initiator_ext, then the interface ID of the host device's GID:
# srp_iport).  ib_srpt is loaded with a fixed srpt_service_guid, the
# id_ext and ioc_guid the initiator names.

# id_ext and ioc_guid of the target port (ib_srpt srpt_service_guid).
GUID=0002c90300a0b0c0
# The initiator's port ID extension (ib_srp initiator_ext).
IEXT=0000000000005250
CFS=/sys/kernel/config
LIO=$CFS/target
RD=$LIO/core/rd_mcp_0/srpdisk
# 128 MiB of 4 KiB pages.
RD_PAGES=32768
# shellcheck disable=SC2034 # the tests' BIO_FIO_SIZE
SRP_FIO_SIZE=128M

# srp_target_modules and srp_host_modules: the two halves' modules.
srp_target_modules() {
	check modprobe target_core_mod
	check modprobe ib_srpt srpt_service_guid=0x$GUID
}
srp_host_modules() {
	check modprobe ib_srp
	check modprobe sd_mod
}

# gid_hex DEV: port 1's GID 0 of RDMA device DEV, 32 hex digits.
gid_hex() {
	local g
	g=$(<"$RE_IB/$1/ports/1/gids/0") || return
	echo "${g//:/}"
}

# srp_iport HDEV: the initiator port ID ib_srp logs in with from HDEV.
srp_iport() {
	local g
	g=$(gid_hex "$1") || return
	echo "0x$IEXT${g:16:16}"
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

# srp_live: every SRP remote port exists and is running (no reconnect);
# the tests' bio_live.
srp_live() {
	local p n=0
	for p in /sys/class/srp_remote_ports/*/state; do
		[ -r "$p" ] && [ "$(<"$p")" = running ] || return 1
		n=$((n + 1))
	done
	[ "$n" -ge 1 ]
}

# lio_export TDEV IPORT: ramdisk, ib_srpt's rdma_cm listener, target port
# (TDEV's GID) with LUN 0 and an ACL for initiator port IPORT, enabled;
# then waits for ib_srpt's listener on TDEV.
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
	poll_until 10 "ib_srpt listening on $tdev" srpt_listening "$tdev"
	ok "ib_srpt listens on $tdev port $PORT"
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

# in_brackets IP: IP as ib_srp's dest= and src= take it (IPv6 in brackets).
in_brackets() {
	case "$1" in *:*) echo "[$1]" ;; *) echo "$1" ;; esac
}

# The listener ib_srpt put on each device (restrack: LISTEN, [ib_srpt]).
srpt_listening() {
	local out
	out=$(rdma res show cm_id) || return
	grep -Eq "^link $1/- .*state LISTEN .*comm \[ib_srpt\] src-addr (::|0\.0\.0\.0):$PORT " <<<"$out"
}

# srp_login HDEV DEST_IP SRC_IP: ib_srp add_target on HDEV's port 1 for
# the target at DEST_IP:PORT; the LIO disk appears (bdev) behind one
# running SRP remote port (ports).
srp_login() {
	local hdev=$1 opts
	step "login: ib_srp add_target on srp-$hdev-1, dest=$(in_brackets "$2"):$PORT"
	opts="id_ext=$GUID,ioc_guid=$GUID,dest=$(in_brackets "$2"):$PORT,src=$(in_brackets "$3"),initiator_ext=$IEXT"
	printf '    $ echo %s > %s\n' "$opts" "/sys/class/infiniband_srp/srp-$hdev-1/add_target"
	echo "$opts" >"/sys/class/infiniband_srp/srp-$hdev-1/add_target" ||
		fail "add_target refused the login"
	poll_until 60 "LIO disk on an ib_srp host" srp_bdev
	bdev=$(srp_bdev)
	note "block device $bdev ($(($(<"/sys/block/${bdev#/dev/}/size") / 2048)) MiB)"
	poll_until 10 "SRP remote port running" srp_live
	ports=$(srp_ports)
	assert_eq "$(wc -w <<<"$ports")" 1 "SRP remote ports"
}

# srp_no_channels: ib_srp holds no rdma_cm ID (its channels are freed).
srp_no_channels() { ! rdma res show cm_id | grep -qF 'comm [ib_srp]'; }

# srp_logout: delete the remote port; its SCSI host and disk go, then its
# channels.  ib_srp's removal work takes the remote port away before it
# disconnects the channels: a target torn down in between (wire2.sh, once
# past its 'done' barrier) disconnects them first, and ib_srp logs the
# DREQ and the flushes as failures (CI saw 3).  Logout ends when no
# channel is left.
srp_logout() {
	step "logout: delete the SRP remote port"
	check bash -c "echo 1 > /sys/class/srp_remote_ports/$ports/delete"
	poll_until 30 "$bdev gone" gone "$bdev"
	poll_until 30 "remote port $ports gone" gone "/sys/class/srp_remote_ports/$ports"
	srp_bdev >/dev/null && fail "an SRP disk is left after the logout"
	poll_until 30 "ib_srp's channels closed" srp_no_channels
	ok "disk, remote port and channels gone"
}
