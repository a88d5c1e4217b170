#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Device removal under load: NVMe-oF over rsw0 with direct reads running,
# then `rdma link delete rsw0`.  ib_core makes both ULPs (nvme-rdma,
# nvmet-rdma) drop their connections, which must end the streams, release
# every QP and let the device go within seconds: no hang, no WARN, no leak,
# and every module unloads afterwards.  The load is proved, not assumed:
# right before the delete the host's and target's QPs are in RTS on rsw0
# and the namespace's read counter is polled until it grows; afterwards the
# reader, which rereads the namespace until a read fails, must have ended
# with dd's I/O error (exit 1), not hang or be killed by its time limit.
#
#   scripts/build 6.12
#   scripts/vm --kernel 6.12 --mem 2048 --timeout 600 -- scripts/tests/nvmeof-unplug.sh
# shellcheck source=scripts/tests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=scripts/tests/rdma-env.sh
. "$(dirname "$0")/rdma-env.sh"

NQN=nqn.2026-11.org.rdmap-sw:unplug
# The reader's time limit: far beyond the unplug, so only a hang reaches it.
READER_LIMIT=300

# Sectors read from the namespace so far (/sys/block/nvme0n1/stat, field 3).
reads() { awk '{ print $3 }' /sys/block/nvme0n1/stat; }
reads_past() { [ "$(reads)" -gt "$1" ]; }
IP=10.78.0.1

step "rsw0 on dummy0, nvmet-rdma exporting a null_blk"
re_begin
re_load rsw ""
re_netdev dummy0 "$IP/24"
re_attach rsw dummy0
check modprobe null_blk nr_devices=1 memory_backed=1 gb=1
check modprobe -a nvmet-rdma nvme-rdma
re_nvmet_export "$NQN" "$IP" 4420 /dev/nullb0

step "connect, start reads"
check nvme connect -t rdma -a "$IP" -s 4420 -n "$NQN" --ctrl-loss-tmo=1 \
	--reconnect-delay=1
poll_until 30 "namespace block device" test -b /dev/nvme0n1
# The reader reads the namespace over and over (one pass is 1 GiB: it must
# not end by reaching the end) until a read fails; its status is dd's.
err=$RSW_RUN/unplug-reader.err
: >"$err"
timeout -k 5 "$READER_LIMIT" bash -c 'rc=0
	while [ "$rc" -eq 0 ]; do
		dd if="$1" of=/dev/null bs=64k iflag=direct status=none 2>"$2" || rc=$?
	done
	exit "$rc"' reader /dev/nvme0n1 "$err" &
reader=$!

step "load at the moment of removal: QPs in RTS, reads advancing"
check rdma res show cm_id
cm=$T_OUT
check rdma res show qp
for ulp in nvme_rdma nvmet_rdma; do
	qpns=$(sed -nE "s/^link rsw0\/1 .* lqpn ([0-9]+) .*state CONNECT .*comm \[$ulp\] .*/\1/p" <<<"$cm")
	n=$(wc -w <<<"$qpns")
	[ "$n" -ge 2 ] || fail "$n connected $ulp cm_ids on rsw0, want admin + I/O queues"
	for q in $qpns; do
		grep -Eq "^link rsw0/1 lqpn $q .*state RTS " <<<"$T_OUT" ||
			fail "QP $q of a $ulp connection is not in RTS on rsw0"
	done
	ok "$n $ulp connections on rsw0, their QPs ($(echo $qpns)) in RTS"
done
# Sectors read from the namespace: sampled, then polled until they grow;
# the link is deleted right after the poll sees them grow.
io_mark=$(reads)
poll_until 30 "reads advance on nvme0n1" reads_past "$io_mark"
before=$(reads)
kill -0 "$reader" 2>/dev/null || fail "the reader ended before the unplug"

step "rdma link delete rsw0 under I/O"
t0=$(now_ms)
check rdma link delete rsw0
note "link delete returned after $(($(now_ms) - t0)) ms, $(((before - io_mark) / 2)) KiB read in the last poll before it"
poll_until 30 "rsw0 removed" gone /sys/class/infiniband/rsw0
# The reads fail (no path left) rather than hang: dd reports an I/O error
# and exits 1; 124/137 would be the time limit killing a hung reader.
poll_until 60 "the reader ends" sh -c "! kill -0 $reader 2>/dev/null"
rc=0
wait "$reader" || rc=$?
check cat "$err"
assert_eq "$rc" 1 "reader exit status (1: dd failed; 124/137: killed by timeout)"
# A read in flight fails with EIO; if the namespace went away between two
# passes, the next open finds no device node.  Either is a clean end.
assert_match "$T_OUT" "^dd: (error reading '/dev/nvme0n1': Input/output error|failed to open '/dev/nvme0n1': No such file or directory)$" "the reader's error"

step "tear down and unload"
nvme disconnect -n "$NQN" >/dev/null 2>&1 || true
re_nvmet_unexport "$NQN"
check ip link del dummy0
re_unload_all
dmesg_clean
echo "PASS: nvmeof-unplug on $RSW_KERNEL ($(uname -r))"
