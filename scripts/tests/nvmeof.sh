#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# NVMe over Fabrics (RDMA) through the kernel's nvmet-rdma target and
# nvme-rdma host, in one guest, with fio verifying every block it reads:
#
#   scripts/siw 6.12 && scripts/build 6.12
#   scripts/vm --kernel 6.12 --mem 2048 --timeout 600 -- \
#       scripts/tests/nvmeof.sh [--target siw|rsw] [--host siw|rsw]
#                               [--seconds N] [--crc on|off]
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
# --markers on|off sets rdmap_sw's mpa_markers module parameter (ask for MPA
# Markers, RFC 5044 section 5) before anything connects; mpa_m: replies with
# the M bit, of all; with on every Request and every Reply must have M (both
# ends rdmap_sw, so Markers flow both ways), with off none.
# shellcheck source=scripts/tests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=scripts/tests/rdma-env.sh
. "$(dirname "$0")/rdma-env.sh"

target=siw host=siw seconds=30 crc= srq=0 markers=
while [ $# -gt 0 ]; do
	case "$1" in
	--target) target=$2; shift 2 ;;
	--host) host=$2; shift 2 ;;
	--seconds) seconds=$2; shift 2 ;;
	--crc) crc=$2; shift 2 ;;
	--markers) markers=$2; shift 2 ;;
	--srq) srq=1; shift ;;
	*) echo "usage: $0 [--target siw|rsw] [--host siw|rsw] [--seconds N] [--crc on|off] [--markers on|off] [--srq]" >&2
		exit 2 ;;
	esac
done
re_check_provider_name "$target"
re_check_provider_name "$host"
case "$seconds" in ''|*[!0-9]*|0) fail "--seconds takes a positive number" ;; esac
case "$crc" in ''|on|off) ;; *) fail "--crc takes on or off" ;; esac
case "$markers" in ''|on|off) ;; *) fail "--markers takes on or off" ;; esac

NQN=nqn.2026-11.org.rdmap-sw:nvmeof-test
TGT_IP=10.78.0.1
HOST_IP=10.78.0.2
PORT=4420
FIO_SIZE=256M
# dd fallback sizes (MiB): 4 KiB direct I/O is slow under TCG and KASAN.
declare -A DD_MIB=([4k]=16 [128k]=64)
# The debug kernel (KASAN) moves about 0.2 MiB/s at 4 KiB: smaller rounds.
if [ "${RSW_KERNEL:-}" = debug ]; then
	DD_MIB=([4k]=4 [128k]=32)
fi
fio_json=$RSW_RUN/nvmeof-fio

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

# bdev_sectors: sectors read plus written on $bdev so far (/sys/block/X/stat).
bdev_sectors() {
	awk '{ print $3 + $7 }' "/sys/block/${bdev#/dev/}/stat"
}

# For poll_until: $bdev moved sectors since $io_mark.
io_flowing() { [ "$(bdev_sectors)" -gt "$io_mark" ]; }

# res_assert_devices QP CM: while I/O flows (`rdma res show qp`, `cm_id`
# output), every connected NVMe-oF cm_id sits on the device of its side: the
# target's (owned by nvmet_rdma) on $(re_dev $target) at $TGT_IP:$PORT, the
# host's (nvme_rdma) on $(re_dev $host) from $host_ip to $TGT_IP:$PORT, none
# anywhere else; the two sides pair up port by port, one pair per MPA
# connection seen, and the QP of each cm_id is in RTS on that device.  With
# both sides on one provider that is one device; with target != host this
# proves the run really crossed between siw0 and rsw0.
res_assert_devices() {
	local qp=$1 cm=$2 tdev hdev t_re h_re line n dev tports= hports= all
	tdev=$(re_dev "$target")
	hdev=$(re_dev "$host")
	t_re="^link $tdev/1 cm-idn [0-9]+ lqpn ([0-9]+) qp-type RC state CONNECT ps TCP comm \[nvmet_rdma\] src-addr ${TGT_IP//./\\.}:$PORT dst-addr ${host_ip//./\\.}:([0-9]+) *$"
	h_re="^link $hdev/1 cm-idn [0-9]+ lqpn ([0-9]+) qp-type RC state CONNECT ps TCP comm \[nvme_rdma\] src-addr ${host_ip//./\\.}:([0-9]+) dst-addr ${TGT_IP//./\\.}:$PORT *$"
	all=$(grep -E 'state CONNECT .*comm \[nvmet?_rdma\]' <<<"$cm" || true)
	while read -r line; do
		[ -n "$line" ] || continue
		if [[ $line =~ $t_re ]]; then
			tports+="${BASH_REMATCH[2]} "
			dev=$tdev
		elif [[ $line =~ $h_re ]]; then
			hports+="${BASH_REMATCH[2]} "
			dev=$hdev
		else
			fail "NVMe-oF cm_id not on the expected device and addresses: $line"
		fi
		n=${BASH_REMATCH[1]}
		grep -Eq "^link $dev/1 lqpn $n .*state RTS " <<<"$qp" ||
			fail "no QP $n in RTS on $dev for: $line"
	done <<<"$all"
	tports=$(tr ' ' '\n' <<<"$tports" | sed '/^$/d' | sort -n | tr '\n' ' ')
	hports=$(tr ' ' '\n' <<<"$hports" | sed '/^$/d' | sort -n | tr '\n' ' ')
	tports=${tports% }
	hports=${hports% }
	n=$(wc -w <<<"$tports")
	[ "$n" -ge 2 ] || fail "$n target cm_ids on $tdev, want admin + I/O queues"
	assert_eq "$n" "$mpa_conns" "target connections on $tdev = MPA connections seen"
	assert_eq "$hports" "$tports" "host ports on $hdev (paired with the target's on $tdev)"
	ok "$n connections: target on $tdev $TGT_IP:$PORT, host on $hdev $host_ip, QPs in RTS"
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

# sample_while_io WHAT PID: once $bdev moves data while PID (the I/O
# generator) runs, snapshot `rdma res show qp` and `cm_id`.  The snapshot
# shows the connections that carried the I/O as long as the controller
# stayed live throughout (a reconnect would also change the MPA count
# res_assert_devices compares with); a loaded host may finish a short fio
# run before the snapshot is done, which is no reason to fail.
sample_while_io() {
	local what=$1 pid=$2 qp cm
	io_mark=$(bdev_sectors)
	poll_until 60 "$what moves data on $bdev" io_flowing
	check rdma res show qp
	qp=$T_OUT
	check rdma res show cm_id
	cm=$T_OUT
	ctrls_live || fail "an NVMe controller is not live after the snapshot"
	if kill -0 "$pid" 2>/dev/null; then
		ok "sampled while $what runs"
	else
		ok "sampled after $what moved data, controller still live ($what ended during the snapshot)"
	fi
	res_assert_devices "$qp" "$cm"
}

# run_io WHAT LIMIT CMD...: CMD in the background (at most LIMIT s), its
# QPs and cm_ids checked while it runs (sample_while_io); CMD must succeed.
run_io() {
	local what=$1 limit=$2 rc=0 out
	shift 2
	out=$(mktemp)
	printf '    $ %s\n' "$*"
	timeout -k 5 "$limit" "$@" >"$out" 2>&1 &
	local pid=$!
	sample_while_io "$what" "$pid"
	wait "$pid" || rc=$?
	[ ! -s "$out" ] || indent <"$out"
	rm -f "$out"
	[ "$rc" -ne 124 ] || fail "$what timed out (${limit}s): $*"
	[ "$rc" -eq 0 ] || fail "exit status $rc from: $*"
}

# fio_summary FILE: error, bytes, runtimes, bandwidths from fio's JSON.
fio_summary() {
	python3 - "$1" <<'EOF'
import json, sys
with open(sys.argv[1]) as f:
    text = f.read()
# fio may print notes before the JSON document.
doc = json.loads(text[text.index('{'):])
job = doc['jobs'][0]
r, w = job['read'], job['write']
print(job['error'], r['io_bytes'], w['io_bytes'], r['runtime'], w['runtime'],
      r['bw_bytes'], w['bw_bytes'])
EOF
}

# fio_run BS: randrw with crc32c verify; sets summary[BS].
fio_run() {
	local bs=$1 err rbytes wbytes rms wms rbw wbw
	step "fio randrw bs=$bs for ${seconds}s, crc32c verify on $bdev"
	run_io fio $((seconds * 3 + 120)) fio --name="nvmeof-$bs" --filename="$bdev" \
		--thread --ioengine=libaio --direct=1 --rw=randrw --bs="$bs" --iodepth=16 \
		--size="$FIO_SIZE" --time_based --runtime="$seconds" \
		--verify=crc32c --verify_backlog=256 --verify_fatal=1 \
		--output-format=json --output="$fio_json-$bs.json"
	check fio_summary "$fio_json-$bs.json"
	read -r err rbytes wbytes rms wms rbw wbw <<<"$T_OUT"
	assert_eq "$err" 0 "fio error (verify errors included)"
	[ "$rbytes" -gt 0 ] || fail "fio read nothing"
	[ "$wbytes" -gt 0 ] || fail "fio wrote nothing"
	ok "read $rbytes bytes in $rms ms, wrote $wbytes bytes in $wms ms"
	summary[$bs]="nvmeof target=$target host=$host crc=${crc:-default} markers=${markers:-default} bs=$bs read=$(re_mbps "$rbw" 1000) MB/s write=$(re_mbps "$wbw" 1000) MB/s errors=$err mpa_crc=$mpa_crc mpa_m=$mpa_m"
}

# dd_run BS: without fio, write DD_MIB[BS] MiB of random data with O_DIRECT
# in BS blocks, read it back the same way and compare sha256; sets
# summary[BS].
dd_run() {
	local bs=$1 src=/dev/shm/nvmeof-src back=/dev/shm/nvmeof-back sum t0 wms rms err=0
	local mib=${DD_MIB[$1]}
	step "dd direct-I/O round trip, bs=$bs, $mib MiB, sha256 compare on $bdev"
	check dd if=/dev/urandom of="$src" bs=1M count="$mib" status=none
	sum=$(sha256sum "$src" | cut -d' ' -f1)
	t0=$(now_ms)
	run_io "dd write" 600 dd if="$src" of="$bdev" bs="$bs" oflag=direct conv=fsync status=none
	wms=$(($(now_ms) - t0))
	t0=$(now_ms)
	T_CMD_TIMEOUT=600 check dd if="$bdev" of="$back" bs="$bs" iflag=direct \
		count=$((mib * 1048576 / $(numfmt --from=iec "${bs^^}"))) status=none
	rms=$(($(now_ms) - t0))
	[ "$(sha256sum "$back" | cut -d' ' -f1)" = "$sum" ] || err=1
	rm -f "$src" "$back"
	assert_eq "$err" 0 "sha256 mismatches after the round trip"
	summary[$bs]="nvmeof target=$target host=$host crc=${crc:-default} markers=${markers:-default} bs=$bs read=$(re_mbps $((mib * 1048576)) "$rms") MB/s write=$(re_mbps $((mib * 1048576)) "$wms") MB/s errors=$err mpa_crc=$mpa_crc mpa_m=$mpa_m (dd)"
}

t_banner
note "target=$target host=$host seconds=$seconds crc=${crc:-default} markers=${markers:-default} srq=$srq"

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
re_netdev dummy0 "$TGT_IP/24"
re_load "$target" "$crc" "$markers"
re_attach "$target" dummy0
if [ "$host" != "$target" ]; then
	re_netdev dummy1 "$HOST_IP/24"
	re_load "$host" "$crc" "$markers"
	re_attach "$host" dummy1
	host_ip=$HOST_IP
else
	# One device serves both ends.
	host_ip=$TGT_IP
fi

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
check re_mpa_watch_stop
mpa=$T_OUT
re_mpa_assert "$mpa" "$crc"
re_mpa_assert_markers "$mpa" "$markers"
mpa_crc=$(sed -n 's/.*\brep=\([0-9]*\) rep_crc=\([0-9]*\).*/\2\/\1/p' <<<"$mpa")
mpa_m=$(sed -n 's/.*\brep_m=\([0-9]*\).*/\1/p' <<<"$mpa")/${mpa_crc#*/}
mpa_conns=${mpa_crc#*/}

declare -A summary=()
if [ -d /proc/sysvipc ]; then
	use_fio=1
else
	use_fio=0
	skip "fio needs SysV shm (shmget), which this kernel lacks (CONFIG_SYSVIPC): dd direct-I/O round trips (4k: ${DD_MIB[4k]} MiB, 128k: ${DD_MIB[128k]} MiB) instead"
fi
for bs in 4k 128k; do
	if [ "$use_fio" = 1 ]; then
		fio_run "$bs"
	else
		dd_run "$bs"
	fi
	echo "${summary[$bs]}"
done

step "nvme disconnect"
check nvme disconnect -n "$NQN"
assert_match "$T_OUT" "disconnected 1 controller" "nvme disconnect"
poll_until 30 "$bdev gone" gone "$bdev"

step "tear down the target"
re_nvmet_unexport "$NQN"

step "delete the RDMA links and the netdevs"
re_detach "$target"
check ip link del dummy0
if [ "$host" != "$target" ]; then
	re_detach "$host"
	check ip link del dummy1
fi

step "unload every module the test loaded"
re_unload_all

step "the kernel log is clean"
dmesg_clean
for bs in 4k 128k; do
	echo "${summary[$bs]}"
done
echo "PASS: $T_NAME target=$target host=$host crc=${crc:-default} markers=${markers:-default} on $RSW_KERNEL ($(uname -r))"
