/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmap_sw objects: the device and the verbs objects implemented so far.
 *
 * Device lifetime (main.c implements it):
 *
 *   rsw_newlink()   allocates the ib_device (its kobject reference is the
 *                   "list reference"), publishes it on rsw_devices under
 *                   RTNL, then registers it with ib_core.
 *   unregistration  (rdma link delete, NETDEV_UNREGISTER, module unload)
 *                   ends in ops.dealloc_driver, which only marks the device
 *                   dead and queues its reap work.
 *   reap work       waits until ib_core has left the unregistration
 *                   (ib_unregister_device() is a fence once it returns),
 *                   unlists the device, drops our netdev reference and
 *                   finally the list reference, which may free it.
 *
 * So a listed device's memory is always valid under rsw_devices_lock, our
 * netdev reference outlives every ib_core use of the device (the netdev's
 * unregistration completes only after the ib_device is gone), and module
 * unload waits for all of it by draining the reap workqueue.
 */
#ifndef RDMAP_SW_H
#define RDMAP_SW_H

#include <linux/atomic.h>
#include <linux/etherdevice.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>

#include "mem.h"
#include "settings.h"

/* Every rdmap_sw device has exactly one port. */
#define RSW_PORT 1

/* Limits advertised by query_device and enforced by the verbs. */
#define RSW_MAX_PD (64 * 1024)

/*
 * What the port reports, taken from the netdev under RTNL by
 * rsw_port_refresh() and read by the query verbs under port_lock.
 */
struct rsw_port_snap {
	u8 mac[ETH_ALEN] __aligned(2);
	enum ib_port_state state;
	unsigned int mtu;
	u16 speed;	/* enum ib_port_speed */
	u8 width;	/* enum ib_port_width */
};

struct rsw_stats;

struct rsw_device {
	struct ib_device ibdev;		/* must stay first (ib_alloc_device) */

	/* Set at allocation, held (tracked) until the reap work runs. */
	struct net_device *netdev;
	netdevice_tracker netdev_tracker;

	/* Membership of rsw_devices and the flags below: rsw_devices_lock. */
	struct list_head list;
	bool dead;		/* dealloc_driver ran: ignore, reap queued */
	/* NETDEV_UNREGISTER seen; also read (READ_ONCE) by rsw_stream_list() */
	bool netdev_gone;
	struct work_struct reap_work;

	/*
	 * Writers hold RTNL and port_lock, readers port_lock; BH-safe so
	 * softirq paths may read the port too.
	 */
	spinlock_t port_lock;
	struct rsw_port_snap port;

	atomic_t num_pd;
	atomic_t num_cq;

	/* STag index -> MR (mem.c); lookups under RCU from any context. */
	struct rsw_mr_table mrs;

	/*
	 * Counters (stats.c): the device's reference, taken at allocation,
	 * dropped by dealloc_driver; streams and ceps hold their own.
	 */
	struct rsw_stats *stats;
	/*
	 * Per-QP counters (stats.c): our objects behind ib_core's rdma
	 * counters, by the counter id we gave them; counters_lock (a mutex,
	 * process context) guards the table, each object and every QP
	 * route's bound set.  Taken inside ib_core's counter->lock.
	 */
	struct mutex counters_lock;
	struct xarray counters;
	u32 counter_next;		/* xa_alloc_cyclic()'s cursor */

	/* What new connections use (settings.h); process context only. */
	spinlock_t settings_lock;
	struct rsw_settings settings;
};

struct rsw_pd {
	struct ib_pd base;
};

struct rsw_ucontext {
	struct ib_ucontext base;
	/*
	 * The user ABI version negotiated (rdmap_sw-abi.h): written once by
	 * alloc_ucontext before ib_core publishes the context, read-only
	 * after (no lock).  Read through rsw_uctx_abi_ok().
	 */
	u32 abi_version;
};

static inline struct rsw_device *to_rsw_dev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct rsw_device, ibdev);
}

#endif /* RDMAP_SW_H */
