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
# Between two hosts neither applies (scripts/vm2: wire2.sh --load srp,
# siw in either role; an siw target over IPv6); NVMe-oF interop
# (nvmeof.sh) listens on one address and is not affected.
#
# The target and the initiator: scripts/tests/srp-env.sh.
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
# shellcheck source=scripts/tests/srp-env.sh
. "$(dirname "$0")/srp-env.sh"

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
BIO_FIO_SIZE=$SRP_FIO_SIZE
bio_live() { srp_live; }

t_banner
note "target=$target host=$host seconds=$seconds family=IPv$family"

step "RDMA core, LIO, ib_srpt, ib_srp and sd modules"
re_begin
srp_target_modules
srp_host_modules

step "providers: target $target on dummy0 $TGT_IP, host $host"
re_pair_up "" "$TGT_IP/$PFX" "$HOST_IP/$PFX"
tdev=$(re_dev "$target")
hdev=$(re_dev "$host")
iport=$(srp_iport "$hdev")
note "target GID 0x$(gid_hex "$tdev"), initiator port ID $iport"

step "LIO target: ramdisk LUN, ib_srpt on rdma_cm port $PORT, ACL $iport"
lio_export "$tdev" "$iport"

re_mpa_watch_start "$PORT"
srp_login "$hdev" "$TGT_IP" "$host_ip"
re_mpa_collect ""

# ib_srp opens one channel (RDMA connection) per hardware queue: at least one.
bio_run srp ib_srpt ib_srp 1 "srp target=$target host=$host ipv$family"

srp_logout

step "tear down the target"
lio_unexport "$iport"

re_pair_down
bio_summaries
echo "PASS: $T_NAME target=$target host=$host ipv$family on $RSW_KERNEL ($(uname -r))"
