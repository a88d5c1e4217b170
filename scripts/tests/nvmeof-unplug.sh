#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Device removal under load: NVMe-oF over rsw0 with direct reads running,
# then `rdma link delete rsw0`.  ib_core makes both ULPs (nvme-rdma,
# nvmet-rdma) drop their connections, which must end the streams, release
# every QP and let the device go within seconds: no hang, no WARN, no leak,
# and every module unloads afterwards.
#
#   scripts/build 6.12
#   scripts/vm --kernel 6.12 --mem 2048 --timeout 600 -- scripts/tests/nvmeof-unplug.sh
# shellcheck source=scripts/tests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=scripts/tests/rdma-env.sh
. "$(dirname "$0")/rdma-env.sh"

NQN=nqn.2026-11.org.rdmap-sw:unplug
IP=10.78.0.1
C=/sys/kernel/config/nvmet

step "rsw0 on dummy0, nvmet-rdma exporting a null_blk"
re_begin
re_load rsw ""
re_netdev dummy0 "$IP/24"
re_attach rsw dummy0
check modprobe null_blk nr_devices=1 memory_backed=1 gb=1
check modprobe -a nvmet-rdma nvme-rdma
mountpoint -q /sys/kernel/config || check mount -t configfs none /sys/kernel/config
check mkdir "$C/subsystems/$NQN"
echo 1 >"$C/subsystems/$NQN/attr_allow_any_host" || fail "allow_any_host"
check mkdir "$C/subsystems/$NQN/namespaces/1"
echo /dev/nullb0 >"$C/subsystems/$NQN/namespaces/1/device_path" || fail "device_path"
echo 1 >"$C/subsystems/$NQN/namespaces/1/enable" || fail "enable"
check mkdir "$C/ports/1"
echo rdma >"$C/ports/1/addr_trtype"; echo ipv4 >"$C/ports/1/addr_adrfam"
echo "$IP" >"$C/ports/1/addr_traddr"; echo 4420 >"$C/ports/1/addr_trsvcid"
check ln -s "$C/subsystems/$NQN" "$C/ports/1/subsystems/$NQN"

step "connect, start reads"
check nvme connect -t rdma -a "$IP" -s 4420 -n "$NQN" --ctrl-loss-tmo=1 \
	--reconnect-delay=1
poll_until 30 "namespace block device" test -b /dev/nvme0n1
timeout 120 dd if=/dev/nvme0n1 of=/dev/null bs=64k iflag=direct \
	count=1000000 2>/dev/null &
reader=$!
sleep 3
kill -0 "$reader" 2>/dev/null || fail "the reads stopped before the unplug"

step "rdma link delete rsw0 under I/O"
t0=$SECONDS
check rdma link delete rsw0
note "device gone after $((SECONDS - t0)) s"
poll_until 30 "rsw0 removed" gone /sys/class/infiniband/rsw0
# The reads fail (no path left) rather than hang.
poll_until 60 "the reader ends" sh -c "! kill -0 $reader 2>/dev/null"
wait "$reader" 2>/dev/null || note "reader ended with an I/O error, as expected"

step "tear down and unload"
nvme disconnect -n "$NQN" >/dev/null 2>&1 || true
check rm "$C/ports/1/subsystems/$NQN"
check rmdir "$C/ports/1"
echo 0 >"$C/subsystems/$NQN/namespaces/1/enable"
check rmdir "$C/subsystems/$NQN/namespaces/1"
check rmdir "$C/subsystems/$NQN"
check ip link del dummy0
re_unload_all
dmesg_clean
echo "PASS: nvmeof-unplug on $RSW_KERNEL ($(uname -r))"
