/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared KUnit environment: a throw-away Ethernet netdev (no hardware,
 * every transmitted skb dropped) with an rdmap_sw device attached through
 * the driver's rdma_link_ops.newlink, as the suites that need a real
 * ib_device build it.
 *
 * Unregistering the netdev also removes any rdmap_sw device still attached
 * to it (the NETDEV_UNREGISTER path), so the device pointers handed out
 * here carry no reference of their own.
 *
 * Header only, so that each suite module stays a single object.
 */
#ifndef RSW_KUNIT_ENV_H
#define RSW_KUNIT_ENV_H

#include <kunit/resource.h>
#include <kunit/test.h>
#include <linux/err.h>
#include <linux/etherdevice.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <rdma/ib_verbs.h>

#include "internal.h"

static inline netdev_tx_t rsw_env_xmit(struct sk_buff *skb,
				       struct net_device *ndev)
{
	dev_kfree_skb_any(skb);
	return NETDEV_TX_OK;
}

/*
 * A registered, down Ethernet netdev with address @mac, named after
 * @pattern (e.g. "rswcq%d"); ERR_PTR on failure.
 */
static inline struct net_device *rsw_env_netdev_create(const u8 *mac,
						       const char *pattern)
{
	static const struct net_device_ops ops = {
		.ndo_start_xmit = rsw_env_xmit,
		.ndo_set_mac_address = eth_mac_addr,
		.ndo_validate_addr = eth_validate_addr,
	};
	struct net_device *ndev;
	int ret;

	ndev = alloc_etherdev(0);
	if (!ndev)
		return ERR_PTR(-ENOMEM);
	ndev->netdev_ops = &ops;
	ndev->max_mtu = 9000;
	eth_hw_addr_set(ndev, mac);
	strscpy(ndev->name, pattern, sizeof(ndev->name));
	ret = register_netdev(ndev);
	if (ret)
		goto err_free;
	return ndev;

err_free:
	free_netdev(ndev);
	return ERR_PTR(ret);
}

/* Undoes rsw_env_netdev_create(), detaching any rdmap_sw device with it. */
static inline void rsw_env_netdev_destroy(struct net_device *ndev)
{
	unregister_netdev(ndev);
	free_netdev(ndev);
}

static inline void rsw_env_netdev_action(void *ndev)
{
	rsw_env_netdev_destroy(ndev);
}

/* rsw_env_netdev_create() for one case, destroyed by a KUnit action. */
static inline struct net_device *rsw_env_netdev(struct kunit *test,
						const u8 *mac,
						const char *pattern)
{
	struct net_device *ndev = rsw_env_netdev_create(mac, pattern);
	int ret;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ndev);
	ret = kunit_add_action_or_reset(test, rsw_env_netdev_action, ndev);
	KUNIT_ASSERT_EQ(test, ret, 0);
	return ndev;
}

/* Registered ib_device called @name, or NULL; no reference kept. */
static inline struct ib_device *rsw_env_lookup(const char *name)
{
	struct ib_device *ibdev;

	ibdev = ib_device_get_by_name(name, RDMA_DRIVER_UNKNOWN);
	if (ibdev)
		ib_device_put(ibdev);
	return ibdev;
}

/*
 * Attaches an rdmap_sw device called @name to @ndev and returns it (no
 * reference kept: the netdev's unregistration removes it), or ERR_PTR.
 */
static inline struct ib_device *rsw_env_attach(struct net_device *ndev,
					       const char *name)
{
	struct ib_device *ibdev;
	int ret;

	ret = rsw_newlink(name, ndev);
	if (ret)
		return ERR_PTR(ret);
	ibdev = rsw_env_lookup(name);
	return ibdev ? ibdev : ERR_PTR(-ENODEV);
}

/* A suite's device and two PDs, set up once in its suite_init. */
struct rsw_env_suite {
	struct net_device *ndev;
	struct ib_device *ibdev;
	struct rsw_device *rsw;
	struct ib_pd *pd;
	struct ib_pd *pd2;
};

/*
 * Fills @env: a netdev named after @pattern with address @mac, an rdmap_sw
 * device called @name on it and two PDs on that device.
 */
static inline int rsw_env_suite_init(struct rsw_env_suite *env,
				     const u8 *mac, const char *pattern,
				     const char *name)
{
	int ret;

	env->ndev = rsw_env_netdev_create(mac, pattern);
	if (IS_ERR(env->ndev))
		return PTR_ERR(env->ndev);
	env->ibdev = rsw_env_attach(env->ndev, name);
	if (IS_ERR(env->ibdev)) {
		ret = PTR_ERR(env->ibdev);
		goto err_netdev;
	}
	env->rsw = to_rsw_dev(env->ibdev);
	env->pd = ib_alloc_pd(env->ibdev, 0);
	if (IS_ERR(env->pd)) {
		ret = PTR_ERR(env->pd);
		goto err_netdev;
	}
	env->pd2 = ib_alloc_pd(env->ibdev, 0);
	if (IS_ERR(env->pd2)) {
		ret = PTR_ERR(env->pd2);
		goto err_pd;
	}
	return 0;

err_pd:
	ib_dealloc_pd(env->pd);
err_netdev:
	/* Also removes the device, if it was attached. */
	rsw_env_netdev_destroy(env->ndev);
	return ret;
}

static inline void rsw_env_suite_exit(struct rsw_env_suite *env)
{
	ib_dealloc_pd(env->pd2);
	ib_dealloc_pd(env->pd);
	rsw_env_netdev_destroy(env->ndev);
}

#endif /* RSW_KUNIT_ENV_H */
