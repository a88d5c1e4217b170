/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internal API index: every function one file of rdmap_sw calls in another,
 * grouped by the file that implements it, with its execution context.
 *
 * Lock order: RTNL -> rsw_devices_lock (main.c) -> rsw_device.port_lock.
 * Nothing calls into ib_core's (un)registration while holding
 * rsw_devices_lock.
 */
#ifndef RDMAP_SW_INTERNAL_H
#define RDMAP_SW_INTERNAL_H

#include "compat.h"
#include "rdmap_sw.h"

/*
 * main.c - module, rdma link ops, netdev events, device lifecycle.
 * Process context, may sleep, RTNL not held.
 */
#if IS_ENABLED(CONFIG_KUNIT)
/* rdma_link_ops.newlink; exported for KUnit. */
int rsw_newlink(const char *ibdev_name, struct net_device *ndev);
/* Synchronous removal, as on module unload; exported for KUnit. */
void rsw_device_remove(struct ib_device *ibdev);
#endif

/*
 * verbs.c - device, port, GID, P_Key, PD and ucontext verbs.
 */
/* Verbs of the device; main.c merges it into every device's ops. */
extern const struct ib_device_ops rsw_verbs_ops;

/* Which parts of the port snapshot rsw_port_refresh() changed. */
enum rsw_port_change {
	RSW_PORT_STATE_CHANGED = 1 << 0,
	RSW_PORT_ADDR_CHANGED = 1 << 1,
};

/*
 * Re-read state, MTU, speed and MAC from the netdev into the snapshot and
 * report what changed.  Process context, RTNL held, may sleep (ethtool).
 */
unsigned int rsw_port_refresh(struct rsw_device *rsw);
/* Current port state.  Process or softirq context. */
enum ib_port_state rsw_port_state(struct rsw_device *rsw);
/* EUI-64 node GUID derived from a MAC address.  Any context. */
__be64 rsw_guid_from_mac(const u8 *mac);

#endif /* RDMAP_SW_INTERNAL_H */
