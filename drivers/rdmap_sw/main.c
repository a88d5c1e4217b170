// SPDX-License-Identifier: GPL-2.0
/*
 * rdmap_sw module: "rdma link" type rdmap_sw, netdev events and the device
 * lifecycle described in rdmap_sw.h.
 */
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/rtnetlink.h>
#include <net/net_namespace.h>
#include <rdma/rdma_netlink.h>
#include <rdma/rdmap_sw-abi.h>

#include <rdma/iw_cm.h>

#include "internal.h"

#define RSW_LINK_TYPE "rdmap_sw"

/* Every device of this module, dead ones until their reap work ran. */
static LIST_HEAD(rsw_devices);
static DEFINE_MUTEX(rsw_devices_lock);
/* Runs the reap works; module unload drains it. */
static struct workqueue_struct *rsw_wq;

/* Lookup by netdev; dead devices may hold a stale netdev pointer. */
static struct rsw_device *rsw_find_locked(const struct net_device *ndev)
{
	struct rsw_device *rsw;

	lockdep_assert_held(&rsw_devices_lock);
	list_for_each_entry(rsw, &rsw_devices, list)
		if (!rsw->dead && rsw->netdev == ndev)
			return rsw;
	return NULL;
}

/*
 * Last step of every device (see rdmap_sw.h).  Runs on rsw_wq; the final
 * put_device() may free @work itself.
 */
static void rsw_reap_work(struct work_struct *work)
{
	struct rsw_device *rsw = container_of(work, struct rsw_device,
					      reap_work);

	/* Returns once no unregistration of this device is in flight. */
	ib_unregister_device(&rsw->ibdev);

	mutex_lock(&rsw_devices_lock);
	list_del_init(&rsw->list);
	mutex_unlock(&rsw_devices_lock);

	netdev_put(rsw->netdev, &rsw->netdev_tracker);
	put_device(&rsw->ibdev.dev);
}

/*
 * ops.dealloc_driver: ib_core calls it last, from ib_dealloc_device(),
 * usually inside an unregistration holding the device's unregistration
 * lock, so nothing here may wait for that unregistration.
 */
static void rsw_dealloc_driver(struct ib_device *ibdev)
{
	struct rsw_device *rsw = to_rsw_dev(ibdev);
	struct rsw_stats *st = rsw->stats;

	rsw_mr_table_destroy(&rsw->mrs);
	rsw_counters_destroy(rsw);
	rsw->stats = NULL;		/* no pointer outlives our reference */
	rsw_stats_put(st);
	mutex_lock(&rsw_devices_lock);
	rsw->dead = true;
	mutex_unlock(&rsw_devices_lock);
	queue_work(rsw_wq, &rsw->reap_work);
}

static const struct ib_device_ops rsw_device_ops = {
	.owner = THIS_MODULE,
	.device_group = &rsw_dev_attr_group,
	/* Out of tree there is no RDMA_DRIVER_* id of our own. */
	.driver_id = RDMA_DRIVER_UNKNOWN,
	/* The oldest version we speak: see rdmap_sw-abi.h. */
	.uverbs_abi_ver = RSW_ABI_MIN,
	.dealloc_driver = rsw_dealloc_driver,
};

/* Only Ethernet-like netdevs carry the TCP streams iWARP runs over. */
static int rsw_check_netdev(const struct net_device *ndev)
{
	if (ndev->type != ARPHRD_ETHER || ndev->addr_len != ETH_ALEN)
		return -EOPNOTSUPP;
	return 0;
}

static void rsw_init_ibdev(struct rsw_device *rsw)
{
	struct ib_device *ibdev = &rsw->ibdev;

	ib_set_device_ops(ibdev, &rsw_device_ops);
	ib_set_device_ops(ibdev, &rsw_query_ops);
	ib_set_device_ops(ibdev, &rsw_ctx_ops);
	ib_set_device_ops(ibdev, &rsw_pd_ops);
	ib_set_device_ops(ibdev, &rsw_mem_ops);
	ib_set_device_ops(ibdev, &rsw_cq_ops);
	ib_set_device_ops(ibdev, &rsw_qp_ops);
	ib_set_device_ops(ibdev, &rsw_srq_ops);
	ib_set_device_ops(ibdev, &rsw_iw_ops);
	ib_set_device_ops(ibdev, &rsw_stats_ops);
	ib_set_device_ops(ibdev, &rsw_res_ops);
	/* Our sockets use the real ports: no iwpmd port mapping. */
	ibdev->iw_driver_flags = IW_F_NO_PORT_MAP;
	strscpy(ibdev->iw_ifname, netdev_name(rsw->netdev),
		sizeof(ibdev->iw_ifname));
	ibdev->node_type = RDMA_NODE_RNIC;
	ibdev->phys_port_cnt = 1;
	ibdev->num_comp_vectors = num_online_cpus();
	/* The node GUID names the device: taken once, kept on MAC changes. */
	ibdev->node_guid = rsw_guid_from_mac(rsw->netdev->dev_addr);
	strscpy(ibdev->node_desc, "rdmap_sw", sizeof(ibdev->node_desc));
}

/* A device holding the list reference and a netdev reference, unlisted. */
static struct rsw_device *rsw_device_alloc(struct net_device *ndev)
{
	struct rsw_stats *stats = rsw_stats_alloc();
	struct rsw_device *rsw;

	if (!stats)
		return NULL;
	rsw = ib_alloc_device(rsw_device, ibdev);
	if (!rsw) {
		rsw_stats_put(stats);
		return NULL;
	}
	rsw->stats = stats;	/* dealloc_driver drops it */
	get_device(&rsw->ibdev.dev);
	INIT_LIST_HEAD(&rsw->list);
	INIT_WORK(&rsw->reap_work, rsw_reap_work);
	spin_lock_init(&rsw->port_lock);
	atomic_set(&rsw->num_pd, 0);
	atomic_set(&rsw->num_cq, 0);
	rsw_mr_table_init(&rsw->mrs);
	rsw_counters_init(rsw);
	rsw_settings_init(rsw);
	rsw->netdev = ndev;
	netdev_hold(ndev, &rsw->netdev_tracker, GFP_KERNEL);
	rsw_init_ibdev(rsw);
	return rsw;
}

/*
 * Bind @rsw to its netdev and list it, unless the netdev is unregistering
 * or already has a device.  RTNL makes the check and the insertion atomic
 * against NETDEV_UNREGISTER.
 */
static int rsw_device_publish(struct rsw_device *rsw)
{
	struct net_device *ndev = rsw->netdev;
	int ret;

	rtnl_lock();
	mutex_lock(&rsw_devices_lock);
	if (ndev->reg_state != NETREG_REGISTERED) {
		ret = -ENODEV;
		goto out_unlock;
	}
	if (rsw_find_locked(ndev)) {
		ret = -EEXIST;
		goto out_unlock;
	}
	ret = ib_device_set_netdev(&rsw->ibdev, ndev, RSW_PORT);
	if (ret)
		goto out_unlock;
	rsw_port_refresh(rsw);
	list_add_tail(&rsw->list, &rsw_devices);
out_unlock:
	mutex_unlock(&rsw_devices_lock);
	rtnl_unlock();
	return ret;
}

static int rsw_device_register(struct rsw_device *rsw, const char *name)
{
	int ret = rsw_register_sw_device(&rsw->ibdev, name);

	/* ib_core reports a name already in use as -ENFILE. */
	return ret == -ENFILE ? -EEXIST : ret;
}

/* NETDEV_UNREGISTER may have come before registration could see it. */
static bool rsw_netdev_lost(struct rsw_device *rsw)
{
	bool gone;

	mutex_lock(&rsw_devices_lock);
	gone = rsw->netdev_gone;
	mutex_unlock(&rsw_devices_lock);
	return gone;
}

/*
 * Synchronous unregistration; ib_core fences concurrent callers.  The
 * caller must keep the device's memory alive (list or kobject reference).
 */
VISIBLE_IF_KUNIT void rsw_device_remove(struct ib_device *ibdev)
{
	might_sleep();
	ib_unregister_device(ibdev);
}
EXPORT_SYMBOL_IF_KUNIT(rsw_device_remove);

/*
 * rdma_link_ops.newlink.  Process context, may sleep; nldev holds a
 * reference on @ndev and link_ops_rwsem for reading, so module unload
 * waits for it.
 */
VISIBLE_IF_KUNIT int rsw_newlink(const char *ibdev_name,
				 struct net_device *ndev)
{
	struct rsw_device *rsw;
	int ret;

	ret = rsw_check_netdev(ndev);
	if (ret)
		return ret;
	rsw = rsw_device_alloc(ndev);
	if (!rsw)
		return -ENOMEM;
	ret = rsw_device_publish(rsw);
	if (ret)
		goto err_dealloc;
	ret = rsw_device_register(rsw, ibdev_name);
	if (ret)
		goto err_dealloc;
	/* The list reference keeps @rsw valid even if ib_core freed it. */
	if (rsw_netdev_lost(rsw)) {
		rsw_device_remove(&rsw->ibdev);
		return -ENODEV;
	}
	ibdev_dbg(&rsw->ibdev, "attached to %s\n", netdev_name(ndev));
	return 0;

err_dealloc:
	/* dealloc_driver queues the reap work, which drops the references. */
	ib_dealloc_device(&rsw->ibdev);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_newlink);

static struct rdma_link_ops rsw_link_ops = {
	.type = RSW_LINK_TYPE,
	.newlink = rsw_newlink,
};

/* Caller holds an ib_device reference, so ib_core's caches still exist. */
static void rsw_dispatch(struct rsw_device *rsw, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = &rsw->ibdev,
		.element.port_num = RSW_PORT,
		.event = type,
	};

	ib_dispatch_event(&ev);
}

/* Netdev state, MTU or address changed.  RTNL and rsw_devices_lock held. */
static void rsw_netdev_changed(struct rsw_device *rsw)
{
	unsigned int changes = rsw_port_refresh(rsw);

	/* Events only while registered: no reference, no event. */
	if (!changes || !ib_device_try_get(&rsw->ibdev))
		return;
	if (changes & RSW_PORT_STATE_CHANGED)
		rsw_dispatch(rsw, rsw_port_state(rsw) == IB_PORT_ACTIVE ?
				  IB_EVENT_PORT_ACTIVE : IB_EVENT_PORT_ERR);
	if (changes & RSW_PORT_ADDR_CHANGED)
		rsw_dispatch(rsw, IB_EVENT_GID_CHANGE);
	ib_device_put(&rsw->ibdev);
}

/*
 * The netdev is going away.  RTNL is held, so unregister asynchronously:
 * the netdev's unregistration then waits for our references, which the
 * reap work drops once the ib_device is gone.  The ULPs' part of that
 * waits for their work requests, so the streams end first: over a netdev
 * that is gone, TCP would hold them for its whole retry time.
 */
static void rsw_netdev_gone(struct rsw_device *rsw)
{
	lockdep_assert_held(&rsw_devices_lock);
	WRITE_ONCE(rsw->netdev_gone, true);
	/* Flush now what would wait for TCP (seen: 30 s of NVMe timeouts). */
	rsw_stream_dev_gone(rsw);
	/* Not registered yet (newlink checks netdev_gone) or going already. */
	if (!ib_device_try_get(&rsw->ibdev))
		return;
	ib_unregister_device_queued(&rsw->ibdev);
	ib_device_put(&rsw->ibdev);
}

/* Netdev notifier: process context, RTNL held. */
static int rsw_netdev_event(struct notifier_block *nb, unsigned long event,
			    void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct rsw_device *rsw;

	switch (event) {
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
	case NETDEV_CHANGEMTU:
	case NETDEV_CHANGEADDR:
	case NETDEV_UNREGISTER:
		break;
	default:
		return NOTIFY_DONE;
	}

	mutex_lock(&rsw_devices_lock);
	rsw = rsw_find_locked(ndev);
	if (rsw && event == NETDEV_UNREGISTER)
		rsw_netdev_gone(rsw);
	else if (rsw)
		rsw_netdev_changed(rsw);
	mutex_unlock(&rsw_devices_lock);
	return NOTIFY_DONE;
}

static struct notifier_block rsw_netdev_nb = {
	.notifier_call = rsw_netdev_event,
};

/*
 * Module unload: unregister every live device.  Each one is marked dead by
 * its dealloc_driver before ib_unregister_device() returns, so the loop
 * ends; the reap works run when rsw_wq is destroyed.  No newlink can run
 * (link ops are unregistered first).
 */
static void rsw_remove_all(void)
{
	struct rsw_device *rsw, *next;

	for (;;) {
		next = NULL;
		mutex_lock(&rsw_devices_lock);
		list_for_each_entry(rsw, &rsw_devices, list) {
			if (!rsw->dead) {
				next = rsw;
				get_device(&next->ibdev.dev);
				break;
			}
		}
		mutex_unlock(&rsw_devices_lock);
		if (!next)
			return;
		rsw_device_remove(&next->ibdev);
		put_device(&next->ibdev.dev);
	}
}

/*
 * A namespace is dying.  Our kernel sockets do not keep it alive, so
 * before its exit methods run (loopback, TCP and the rest of its state
 * go), close everything we have in it: handshakes and listeners first (no
 * new stream gets a socket there after that), then the streams.
 */
static void __net_exit rsw_net_pre_exit(struct net *net)
{
	rsw_cm_net_exit(net);
	rsw_stream_net_exit(net);
}

static struct pernet_operations rsw_net_ops = {
	.pre_exit = rsw_net_pre_exit,
};

static int __init rsw_init(void)
{
	int ret;

	rsw_wq = alloc_workqueue("rdmap_sw", WQ_UNBOUND, 0);
	if (!rsw_wq)
		return -ENOMEM;
	ret = rsw_cq_init();
	if (ret)
		goto err_destroy_wq;
	ret = rsw_cm_init();
	if (ret)
		goto err_cq_exit;
	ret = rsw_stream_init();
	if (ret)
		goto err_cm_exit;
	ret = rsw_iw_init();
	if (ret)
		goto err_stream_exit;
	ret = register_pernet_subsys(&rsw_net_ops);
	if (ret)
		goto err_iw_exit;
	ret = register_netdevice_notifier(&rsw_netdev_nb);
	if (ret)
		goto err_pernet;
	rdma_link_register(&rsw_link_ops);
	return 0;

err_pernet:
	unregister_pernet_subsys(&rsw_net_ops);
err_iw_exit:
	rsw_iw_exit();
err_stream_exit:
	rsw_stream_exit();
err_cm_exit:
	rsw_cm_exit();
err_cq_exit:
	rsw_cq_exit();
err_destroy_wq:
	destroy_workqueue(rsw_wq);
	return ret;
}

/*
 * Teardown order: no new devices (link ops), then no live devices, then no
 * netdev events (unregistering the notifier replays NETDEV_UNREGISTER for
 * every netdev, harmless once the list holds only dead devices), then no
 * namespace hook (its .pre_exit runs for every live namespace and finds
 * nothing left), then no reap work left.
 */
static void __exit rsw_exit(void)
{
	rdma_link_unregister(&rsw_link_ops);
	rsw_remove_all();
	unregister_netdevice_notifier(&rsw_netdev_nb);
	unregister_pernet_subsys(&rsw_net_ops);
	rsw_iw_exit();
	rsw_stream_exit();
	rsw_cm_exit();
	rsw_cq_exit();
	destroy_workqueue(rsw_wq);
	WARN_ON(!list_empty(&rsw_devices));
}

module_init(rsw_init);
module_exit(rsw_exit);

MODULE_ALIAS_RDMA_LINK(RSW_LINK_TYPE);
MODULE_DESCRIPTION("rdmap_sw: software iWARP RDMA provider");
MODULE_LICENSE("GPL");
