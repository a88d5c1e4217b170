#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Guest side of `make run`: attach rsw0 to a netdev and show it through the
# standard tools, then run the RDMA workload this stage supports (open the
# device, query it, allocate a PD: verbs-smoke) and detach.
#
#   +------------------------ guest -------------------------+
#   |  rdma link / rdma dev / ibv_devices / ibv_devinfo       |
#   |  rsw0 (rdmap_sw) ----- dummy0 192.0.2.1/24              |
#   +---------------------------------------------------------+
. "$(dirname "$0")/lib.sh"

: "${RSW_OUT:?run me through scripts/vm}"
eval "$("$RSW_TOP/scripts/rdma-core" env)"
export LD_LIBRARY_PATH=$RSW_RDMA_LIB

step "load ib_core, iw_cm, ib_uverbs, rdma_cm and rdmap_sw"
check modprobe -a ib_core iw_cm ib_uverbs rdma_cm
check insmod "$RSW_OUT/drivers/rdmap_sw/rdmap_sw.ko"

step "a netdev to attach to: dummy0 with 192.0.2.1/24"
check ip link add dummy0 type dummy
check ip addr add 192.0.2.1/24 dev dummy0
check ip link set dummy0 up

step "attach: rdma link add rsw0 type rdmap_sw netdev dummy0"
check rdma link add rsw0 type rdmap_sw netdev dummy0
poll_until 10 "rsw0 port ACTIVE" file_is /sys/class/infiniband/rsw0/ports/1/state "4: ACTIVE"
check rdma link show
check rdma dev show rsw0

step "libibverbs (rdma-core 56.1, with our provider) sees it"
check "$RSW_RDMA_BIN/ibv_devices"
assert_match "$T_OUT" 'rsw0' "ibv_devices"
check "$RSW_RDMA_BIN/ibv_devinfo" -d rsw0
assert_match "$T_OUT" 'transport:[[:space:]]+iWARP' "transport"
assert_match "$T_OUT" 'state:[[:space:]]+PORT_ACTIVE' "port state"

step "workload: open, query, PD alloc/free (verbs-smoke)"
check "$RSW_RDMA_SMOKE" rsw0 active

step "detach and unload"
check rdma link delete rsw0
check rmmod rdmap_sw
check ip link del dummy0
dmesg_clean
echo "demo: rsw0 attached, listed, queried and detached"
