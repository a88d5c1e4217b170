#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# NVMe over Fabrics (RDMA) through the kernel's nvmet-rdma target and
# nvme-rdma host, in one guest, with fio verifying every block it reads:
#
#   scripts/siw 6.12 && scripts/build 6.12
#   scripts/vm --kernel 6.12 --mem 2048 --timeout 600 -- \
#       scripts/tests/nvmeof.sh [--target siw|rsw] [--host siw|rsw]
#                               [--seconds N] [--crc on|off] [--cxgb4]
#                               [--markers on|off]
#
#   guest:  dummy0 10.78.0.1/24 <-- target provider (nvmet-rdma port 4420,
#                                   namespace on memory-backed null_blk)
#           dummy1 10.78.0.2/24 <-- host provider (nvme connect
#                                   --host-traddr 10.78.0.2)
#   With the same provider on both sides, one device on dummy0 serves both.
#
# fio: randrw, direct, libaio, iodepth 16, crc32c verify (verify_backlog,
# so reads check what was written during the run; verify_fatal) at bs=4k
# and bs=128k for N seconds each (default 30) over the first 256 MiB, with
# --thread.
# Asserts no fio error and non-zero reads and writes, that MPA negotiated
# the CRC asked for, that while the I/O runs every target QP (nvmet_rdma) is
# in RTS on the target provider's device and every host QP (nvme_rdma) on
# the host provider's, with cm_ids on the expected addresses and ports
# (`rdma res show qp`, `cm_id`), then disconnects, tears the target down, deletes the
# links, unloads every module it loaded and checks the kernel log.  Prints
# one line per block size (on a kernel without SysV IPC, which fio needs, a
# dd O_DIRECT write, read-back and sha256 compare of 16 MiB at 4k and 64 MiB
# at 128k replaces fio, announced by a SKIP line and marked "(dd)"):
#   nvmeof target=siw host=siw crc=default markers=default bs=4k read=… MB/s write=… MB/s errors=0 mpa_crc=0/3 mpa_m=0/3
# mpa_crc: connections whose MPA reply (seen by a sniffer on lo) turned CRC on,
# of all connections; with --crc on it must be all of them, with off none.
# --cxgb4 (host rsw): the host's device initiates as iw_cxgb4 does at its
# defaults (peer-to-peer, CRC, a zero-length Read as the only RTR, ORD
# raised to 1 for it; re_rsw_cxgb4), and every Request and Reply on the
# wire must show it (re_rtr_assert).  With --target rsw too, one device
# serves both ends and its responder then accepts only the Read RTR.
# --markers on|off sets rdmap_sw's mpa_markers module parameter (ask for MPA
# Markers, RFC 5044 section 5) before anything connects; mpa_m: replies with
# the M bit, of all; with on every Request and every Reply must have M (both
# ends rdmap_sw, so Markers flow both ways), with off none.
# shellcheck source=scripts/tests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=scripts/tests/rdma-env.sh
. "$(dirname "$0")/rdma-env.sh"
# shellcheck source=scripts/tests/blk-io.sh
. "$(dirname "$0")/blk-io.sh"

target=siw host=siw seconds=30 crc= srq=0 cxgb4=0 markers=
while [ $# -gt 0 ]; do
	case "$1" in
	--target) target=$2; shift 2 ;;
	--host) host=$2; shift 2 ;;
	--seconds) seconds=$2; shift 2 ;;
	--crc) crc=$2; shift 2 ;;
	--markers) markers=$2; shift 2 ;;
	--srq) srq=1; shift ;;
	--cxgb4) cxgb4=1; shift ;;
	*) echo "usage: $0 [--target siw|rsw] [--host siw|rsw] [--seconds N] [--crc on|off] [--markers on|off] [--srq] [--cxgb4]" >&2
		exit 2 ;;
	esac
done
re_check_provider_name "$target"
re_check_provider_name "$host"
case "$seconds" in ''|*[!0-9]*|0) fail "--seconds takes a positive number" ;; esac
case "$crc" in ''|on|off) ;; *) fail "--crc takes on or off" ;; esac
[ "$cxgb4" = 0 ] || [ "$host" = rsw ] || fail "--cxgb4 needs --host rsw"
case "$markers" in ''|on|off) ;; *) fail "--markers takes on or off" ;; esac

NQN=nqn.2026-11.org.rdmap-sw:nvmeof-test
TGT_IP=10.78.0.1
HOST_IP=10.78.0.2
PORT=4420

# The block device of the connected subsystem (multipath head or plain).
nvme_bdev() {
	local d
	for d in /sys/block/nvme*n*; do
		[ -e "$d/device/subsysnqn" ] || continue
		[ "$(cat "$d/device/subsysnqn")" = "$NQN" ] || continue
		[ -b "/dev/${d##*/}" ] || continue
		echo "/dev/${d##*/}"
		return 0
	done
	return 1
}

# ctrls_live: every NVMe controller exists and is live (no reconnect).
ctrls_live() {
	local c n=0
	for c in /sys/class/nvme/nvme*/state; do
		[ -r "$c" ] && [ "$(<"$c")" = live ] || return 1
		n=$((n + 1))
	done
	[ "$n" -ge 1 ]
}
bio_live() { ctrls_live; }

t_banner
note "target=$target host=$host seconds=$seconds crc=${crc:-default} markers=${markers:-default} srq=$srq cxgb4=$cxgb4"

step "RDMA core, nvmet, nvme-rdma and null_blk modules"
re_begin
check modprobe null_blk nr_devices=1 gb=1 bs=4096 memory_backed=1
check modprobe nvmet
# --srq: the target's queues share receive queues (nvmet-rdma use_srq).
check modprobe nvmet-rdma use_srq="$srq"
check modprobe nvme-rdma
[ -b /dev/nullb0 ] || fail "no /dev/nullb0"
assert_file /sys/module/null_blk/parameters/memory_backed Y

step "providers: target $target on dummy0 $TGT_IP, host $host"
re_pair_up "$crc" "$TGT_IP/24" "$HOST_IP/24"
[ "$cxgb4" = 0 ] || re_rsw_cxgb4 "$(re_dev "$host")"

step "nvmet target: subsystem $NQN, namespace /dev/nullb0, rdma port $TGT_IP:$PORT"
re_nvmet_export "$NQN" "$TGT_IP" "$PORT" /dev/nullb0

step "nvme connect -t rdma -a $TGT_IP -s $PORT --host-traddr $host_ip"
re_mpa_watch_start "$PORT"
check nvme connect -t rdma -a "$TGT_IP" -s "$PORT" -n "$NQN" --host-traddr "$host_ip"
poll_until 30 "block device of $NQN" nvme_bdev
bdev=$(nvme_bdev)
note "block device $bdev ($(($(cat "/sys/block/${bdev#/dev/}/size") / 2048)) MiB)"
check nvme list-subsys
assert_match "$T_OUT" "rdma traddr=$TGT_IP,trsvcid=$PORT" "nvme list-subsys transport"
assert_match "$T_OUT" "host_traddr=$host_ip" "nvme list-subsys host address"
# One connection per queue (admin + I/O): all must agree on the CRC.
if [ "$srq" = 1 ]; then
	assert_file /sys/module/nvmet_rdma/parameters/use_srq Y
	check rdma res show srq
	n=$(grep -c "^dev $(re_dev "$target") " <<<"$T_OUT" || true)
	[ "$n" -ge 1 ] || fail "no SRQ of the target's device in rdma res"
	ok "target uses $n shared receive queue(s) (nvmet-rdma use_srq)"
fi
re_mpa_collect "$crc"
[ "$cxgb4" = 0 ] || re_rtr_assert "$mpa_counts"

# Admin and I/O queues, one connection each: at least two.
bio_run nvmeof nvmet_rdma nvme_rdma 2 \
	"nvmeof target=$target host=$host crc=${crc:-default} markers=${markers:-default}"

step "nvme disconnect"
check nvme disconnect -n "$NQN"
assert_match "$T_OUT" "disconnected 1 controller" "nvme disconnect"
poll_until 30 "$bdev gone" gone "$bdev"

step "tear down the target"
re_nvmet_unexport "$NQN"

re_pair_down
bio_summaries
echo "PASS: $T_NAME target=$target host=$host crc=${crc:-default} markers=${markers:-default} on $RSW_KERNEL ($(uname -r))"
