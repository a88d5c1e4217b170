// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite rdmap_sw_device: attaching rdmap_sw to an Ethernet netdev,
 * following its events and detaching, all through the real ib_core.
 *
 * Every case builds its own netdev (alloc_etherdev, minimal ops, no
 * hardware) and attaches through the driver's rdma_link_ops.newlink.  The
 * netdev is destroyed by a KUnit action after the case, which also removes
 * any device still attached to it (the NETDEV_UNREGISTER path).  Device
 * pointers are used without a reference: only the case itself removes the
 * device, and KASAN reports a use after that.
 */
#include <kunit/resource.h>
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/etherdevice.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <net/net_namespace.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_verbs.h>

#include "env.h"
#include "internal.h"

RSW_IMPORT_KUNIT_NS();

/* Linkwatch delays a carrier-off event by up to a second; TCG is slow. */
#define RSW_KT_EVENT_TIMEOUT (10 * HZ)

static const u8 rsw_kt_mac[ETH_ALEN] = { 0x02, 0x00, 0x5e, 0x10, 0x20, 0x30 };

/* Catches one awaited ib_core event type on one device. */
struct rsw_kt_events {
	struct ib_event_handler handler;
	struct completion seen;
	enum ib_event_type want;
	u32 port;
};

/* A registered, down Ethernet netdev with MAC rsw_kt_mac[0..4]:@last. */
static struct net_device *rsw_kt_netdev(struct kunit *test, u8 last)
{
	u8 mac[ETH_ALEN];

	ether_addr_copy(mac, rsw_kt_mac);
	mac[5] = last;
	return rsw_env_netdev(test, mac, "rswkt%d");
}

static void rsw_kt_netdev_up(struct kunit *test, struct net_device *ndev)
{
	int ret;

	rtnl_lock();
	ret = dev_open(ndev, NULL);
	rtnl_unlock();
	KUNIT_ASSERT_EQ(test, ret, 0);
}

/* A fresh ib_device name per attach, so no case depends on another. */
static void rsw_kt_name(char *name)
{
	static atomic_t seq = ATOMIC_INIT(0);

	snprintf(name, IB_DEVICE_NAME_MAX, "rswkt%d", atomic_inc_return(&seq));
}

static struct ib_device *rsw_kt_attach_named(struct kunit *test,
					     struct net_device *ndev,
					     const char *name)
{
	struct ib_device *ibdev;

	KUNIT_ASSERT_EQ(test, rsw_newlink(name, ndev), 0);
	ibdev = rsw_env_lookup(name);
	KUNIT_ASSERT_NOT_NULL(test, ibdev);
	return ibdev;
}

static struct ib_device *rsw_kt_attach(struct kunit *test,
				       struct net_device *ndev)
{
	char name[IB_DEVICE_NAME_MAX];

	rsw_kt_name(name);
	return rsw_kt_attach_named(test, ndev, name);
}

static void rsw_kt_event(struct ib_event_handler *handler,
			 struct ib_event *event)
{
	struct rsw_kt_events *ev = container_of(handler, struct rsw_kt_events,
						handler);

	if (event->device != handler->device ||
	    event->event != READ_ONCE(ev->want))
		return;
	WRITE_ONCE(ev->port, event->element.port_num);
	complete(&ev->seen);
}

static void rsw_kt_unregister_events(void *data)
{
	struct rsw_kt_events *ev = data;

	ib_unregister_event_handler(&ev->handler);
}

/* Handler on @ibdev, removed (before the netdev) when the case ends. */
static struct rsw_kt_events *rsw_kt_events(struct kunit *test,
					   struct ib_device *ibdev)
{
	struct rsw_kt_events *ev;
	int ret;

	ev = kunit_kzalloc(test, sizeof(*ev), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ev);
	init_completion(&ev->seen);
	INIT_IB_EVENT_HANDLER(&ev->handler, ibdev, rsw_kt_event);
	ib_register_event_handler(&ev->handler);
	ret = kunit_add_action_or_reset(test, rsw_kt_unregister_events, ev);
	KUNIT_ASSERT_EQ(test, ret, 0);
	return ev;
}

/* Call before triggering the event. */
static void rsw_kt_expect(struct rsw_kt_events *ev, enum ib_event_type type)
{
	reinit_completion(&ev->seen);
	WRITE_ONCE(ev->want, type);
}

static void rsw_kt_wait(struct kunit *test, struct rsw_kt_events *ev)
{
	unsigned long left;

	left = wait_for_completion_timeout(&ev->seen, RSW_KT_EVENT_TIMEOUT);
	KUNIT_ASSERT_GT_MSG(test, left, 0, "no %s event",
			    ib_event_msg(ev->want));
	KUNIT_EXPECT_EQ(test, READ_ONCE(ev->port), RSW_PORT);
}

static void rsw_kt_query_port(struct kunit *test, struct ib_device *ibdev,
			      struct ib_port_attr *attr)
{
	KUNIT_ASSERT_EQ(test, ib_query_port(ibdev, RSW_PORT, attr), 0);
}

static void rsw_kt_attach_is_iwarp_rnic(struct kunit *test)
{
	struct ib_device *ibdev = rsw_kt_attach(test, rsw_kt_netdev(test, 1));

	KUNIT_EXPECT_EQ(test, ibdev->node_type, RDMA_NODE_RNIC);
	KUNIT_EXPECT_EQ(test, rdma_node_get_transport(ibdev->node_type),
			RDMA_TRANSPORT_IWARP);
	KUNIT_EXPECT_EQ(test, rdma_end_port(ibdev), RSW_PORT);
	KUNIT_EXPECT_TRUE(test, rdma_protocol_iwarp(ibdev, RSW_PORT));
	KUNIT_EXPECT_TRUE(test, rdma_cap_iw_cm(ibdev, RSW_PORT));
	KUNIT_EXPECT_EQ(test, rdma_port_get_link_layer(ibdev, RSW_PORT),
			IB_LINK_LAYER_ETHERNET);
}

static void rsw_kt_attach_binds_netdev(struct kunit *test)
{
	struct net_device *ndev = rsw_kt_netdev(test, 1);
	struct ib_device *ibdev = rsw_kt_attach(test, ndev);
	struct ib_device *found;
	struct net_device *got;

	got = ib_device_get_netdev(ibdev, RSW_PORT);
	KUNIT_EXPECT_PTR_EQ(test, got, ndev);
	dev_put(got);

	found = ib_device_get_by_netdev(ndev, RDMA_DRIVER_UNKNOWN);
	KUNIT_EXPECT_PTR_EQ(test, found, ibdev);
	if (found)
		ib_device_put(found);
}

static void rsw_kt_attach_reports_caps(struct kunit *test)
{
	struct ib_device *ibdev = rsw_kt_attach(test, rsw_kt_netdev(test, 1));

	KUNIT_EXPECT_TRUE(test, ibdev->attrs.kernel_cap_flags &
				IBK_ALLOW_USER_UNREG);
	KUNIT_EXPECT_TRUE(test, ibdev->attrs.device_cap_flags &
				IB_DEVICE_PORT_ACTIVE_EVENT);
	KUNIT_EXPECT_EQ(test, ibdev->attrs.max_pd, RSW_MAX_PD);
	KUNIT_EXPECT_EQ(test, ibdev->attrs.max_pkeys, 1);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(ibdev->attrs.sys_image_guid),
			be64_to_cpu(ibdev->node_guid));
}

static void rsw_kt_port_active_when_up(struct kunit *test)
{
	struct net_device *ndev = rsw_kt_netdev(test, 1);
	struct ib_port_attr attr;
	struct ib_device *ibdev;

	rsw_kt_netdev_up(test, ndev);
	ibdev = rsw_kt_attach(test, ndev);
	rsw_kt_query_port(test, ibdev, &attr);
	KUNIT_EXPECT_EQ(test, attr.state, IB_PORT_ACTIVE);
	KUNIT_EXPECT_EQ(test, attr.phys_state, IB_PORT_PHYS_STATE_LINK_UP);
	KUNIT_EXPECT_EQ(test, attr.active_mtu, IB_MTU_1024);
	KUNIT_EXPECT_EQ(test, attr.gid_tbl_len, 1);
	KUNIT_EXPECT_EQ(test, attr.pkey_tbl_len, 1);
	/* No ethtool speed: reported like a 1 Gb/s link. */
	KUNIT_EXPECT_EQ(test, attr.active_speed, IB_SPEED_SDR);
	KUNIT_EXPECT_EQ(test, attr.active_width, IB_WIDTH_1X);
}

static void rsw_kt_port_down_when_netdev_down(struct kunit *test)
{
	struct ib_device *ibdev = rsw_kt_attach(test, rsw_kt_netdev(test, 1));
	struct ib_port_attr attr;

	rsw_kt_query_port(test, ibdev, &attr);
	KUNIT_EXPECT_EQ(test, attr.state, IB_PORT_DOWN);
	KUNIT_EXPECT_EQ(test, attr.phys_state, IB_PORT_PHYS_STATE_DISABLED);
}

static void rsw_kt_ifup_reports_port_active(struct kunit *test)
{
	struct net_device *ndev = rsw_kt_netdev(test, 1);
	struct ib_device *ibdev = rsw_kt_attach(test, ndev);
	struct rsw_kt_events *ev = rsw_kt_events(test, ibdev);
	struct ib_port_attr attr;

	rsw_kt_expect(ev, IB_EVENT_PORT_ACTIVE);
	rsw_kt_netdev_up(test, ndev);
	rsw_kt_wait(test, ev);
	rsw_kt_query_port(test, ibdev, &attr);
	KUNIT_EXPECT_EQ(test, attr.state, IB_PORT_ACTIVE);
}

/*
 * A device attached to an up netdev whose carrier then drops; returns once
 * PORT_ERR was reported.  @ev collects the device's further events.
 */
static struct ib_device *rsw_kt_attach_then_carrier_off(struct kunit *test,
							struct net_device *ndev,
							struct rsw_kt_events **ev)
{
	struct ib_device *ibdev;

	rsw_kt_netdev_up(test, ndev);
	ibdev = rsw_kt_attach(test, ndev);
	*ev = rsw_kt_events(test, ibdev);
	rsw_kt_expect(*ev, IB_EVENT_PORT_ERR);
	netif_carrier_off(ndev);
	rsw_kt_wait(test, *ev);
	return ibdev;
}

static void rsw_kt_carrier_off_reports_port_err(struct kunit *test)
{
	struct net_device *ndev = rsw_kt_netdev(test, 1);
	struct rsw_kt_events *ev;
	struct ib_port_attr attr;
	struct ib_device *ibdev = rsw_kt_attach_then_carrier_off(test, ndev, &ev);

	rsw_kt_query_port(test, ibdev, &attr);
	KUNIT_EXPECT_EQ(test, attr.state, IB_PORT_DOWN);
}

static void rsw_kt_carrier_on_reports_port_active(struct kunit *test)
{
	struct net_device *ndev = rsw_kt_netdev(test, 1);
	struct rsw_kt_events *ev;
	struct ib_port_attr attr;
	struct ib_device *ibdev = rsw_kt_attach_then_carrier_off(test, ndev, &ev);

	rsw_kt_expect(ev, IB_EVENT_PORT_ACTIVE);
	netif_carrier_on(ndev);
	rsw_kt_wait(test, ev);
	rsw_kt_query_port(test, ibdev, &attr);
	KUNIT_EXPECT_EQ(test, attr.state, IB_PORT_ACTIVE);
}

struct rsw_kt_mtu_case {
	int mtu;
	enum ib_mtu expect;
	const char *desc;
};

/* All differ from IB_MTU_1024 (the attach-time 1500) to prove an update. */
static const struct rsw_kt_mtu_case rsw_kt_mtu_cases[] = {
	{ 300, IB_MTU_256, "300 -> 256" },
	{ 576, IB_MTU_512, "576 -> 512" },
	{ 2048, IB_MTU_2048, "2048 -> 2048" },
	{ 4095, IB_MTU_2048, "4095 -> 2048" },
	{ 4096, IB_MTU_4096, "4096 -> 4096" },
	{ 9000, IB_MTU_4096, "9000 -> 4096" },
};

KUNIT_ARRAY_PARAM_DESC(rsw_kt_mtu, rsw_kt_mtu_cases, desc);

static void rsw_kt_active_mtu_follows_netdev(struct kunit *test)
{
	const struct rsw_kt_mtu_case *c = test->param_value;
	struct net_device *ndev = rsw_kt_netdev(test, 1);
	struct ib_device *ibdev = rsw_kt_attach(test, ndev);
	struct ib_port_attr attr;
	int ret;

	rtnl_lock();
	ret = dev_set_mtu(ndev, c->mtu);
	rtnl_unlock();
	KUNIT_ASSERT_EQ(test, ret, 0);
	rsw_kt_query_port(test, ibdev, &attr);
	KUNIT_EXPECT_EQ(test, attr.active_mtu, c->expect);
	KUNIT_EXPECT_EQ(test, attr.max_mtu, IB_MTU_4096);
}

static void rsw_kt_gid_and_guid_from_mac(struct kunit *test)
{
	/* Modified EUI-64 of 02:00:5e:10:20:30. */
	static const u8 guid[8] = { 0x00, 0x00, 0x5e, 0xff,
				    0xfe, 0x10, 0x20, 0x30 };
	struct ib_device *ibdev;
	union ib_gid gid;

	ibdev = rsw_kt_attach(test, rsw_kt_netdev(test, rsw_kt_mac[5]));
	KUNIT_ASSERT_EQ(test, rdma_query_gid(ibdev, RSW_PORT, 0, &gid), 0);
	KUNIT_EXPECT_MEMEQ(test, gid.raw, rsw_kt_mac, ETH_ALEN);
	KUNIT_EXPECT_TRUE(test, !memchr_inv(gid.raw + ETH_ALEN, 0,
					    sizeof(gid) - ETH_ALEN));
	KUNIT_EXPECT_MEMEQ(test, &ibdev->node_guid, guid, sizeof(guid));
}

static void rsw_kt_mac_change_updates_gid(struct kunit *test)
{
	static const u8 new_mac[ETH_ALEN] = { 0x02, 0x00, 0x5e, 0xaa, 0xbb,
					      0xcc };
	struct net_device *ndev = rsw_kt_netdev(test, 1);
	struct ib_device *ibdev = rsw_kt_attach(test, ndev);
	__be64 guid = ibdev->node_guid;
	struct sockaddr sa = { .sa_family = ndev->type };
	union ib_gid gid;
	int ret;

	memcpy(sa.sa_data, new_mac, ETH_ALEN);
	rtnl_lock();
	ret = dev_set_mac_address(ndev, &sa, NULL);
	rtnl_unlock();
	KUNIT_ASSERT_EQ(test, ret, 0);
	/* The GID_CHANGE event updates ib_core's GID cache from ib_wq. */
	flush_workqueue(ib_wq);
	KUNIT_ASSERT_EQ(test, rdma_query_gid(ibdev, RSW_PORT, 0, &gid), 0);
	KUNIT_EXPECT_MEMEQ(test, gid.raw, new_mac, ETH_ALEN);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(ibdev->node_guid), be64_to_cpu(guid));
}

static void rsw_kt_single_default_pkey(struct kunit *test)
{
	struct ib_device *ibdev = rsw_kt_attach(test, rsw_kt_netdev(test, 1));
	u16 pkey = 0;

	KUNIT_ASSERT_EQ(test, ib_query_pkey(ibdev, RSW_PORT, 0, &pkey), 0);
	KUNIT_EXPECT_EQ(test, pkey, IB_DEFAULT_PKEY_FULL);
	KUNIT_EXPECT_NE(test, ib_query_pkey(ibdev, RSW_PORT, 1, &pkey), 0);
}

static void rsw_kt_duplicate_netdev_refused(struct kunit *test)
{
	struct net_device *ndev = rsw_kt_netdev(test, 1);
	char name[IB_DEVICE_NAME_MAX];

	rsw_kt_attach(test, ndev);
	rsw_kt_name(name);
	KUNIT_EXPECT_EQ(test, rsw_newlink(name, ndev), -EEXIST);
	KUNIT_EXPECT_NULL(test, rsw_env_lookup(name));
}

static void rsw_kt_duplicate_name_refused(struct kunit *test)
{
	struct net_device *second = rsw_kt_netdev(test, 2);
	char name[IB_DEVICE_NAME_MAX];

	rsw_kt_name(name);
	rsw_kt_attach_named(test, rsw_kt_netdev(test, 1), name);
	KUNIT_EXPECT_EQ(test, rsw_newlink(name, second), -EEXIST);
	/* The refused attempt left nothing behind on the second netdev. */
	rsw_kt_attach(test, second);
}

static void rsw_kt_non_ethernet_refused(struct kunit *test)
{
	char name[IB_DEVICE_NAME_MAX];

	rsw_kt_name(name);
	KUNIT_EXPECT_EQ(test, rsw_newlink(name, init_net.loopback_dev),
			-EOPNOTSUPP);
	KUNIT_EXPECT_NULL(test, rsw_env_lookup(name));
}

static void rsw_kt_netdev_unregister_removes(struct kunit *test)
{
	struct net_device *ndev = rsw_kt_netdev(test, 1);
	char name[IB_DEVICE_NAME_MAX];

	rsw_kt_name(name);
	rsw_kt_attach_named(test, ndev, name);
	/*
	 * unregister_netdev() returns once every netdev reference is gone;
	 * rdmap_sw drops its own only after the queued ib_device
	 * unregistration finished, so no polling is needed.
	 */
	kunit_release_action(test, rsw_env_netdev_action, ndev);
	KUNIT_EXPECT_NULL(test, rsw_env_lookup(name));
	/* Regression: the name must be free again at that point too. */
	rsw_kt_attach_named(test, rsw_kt_netdev(test, 2), name);
}

static void rsw_kt_remove_detaches(struct kunit *test)
{
	struct net_device *ndev = rsw_kt_netdev(test, 1);
	char name[IB_DEVICE_NAME_MAX];

	rsw_kt_name(name);
	rsw_device_remove(rsw_kt_attach_named(test, ndev, name));
	KUNIT_EXPECT_NULL(test, rsw_env_lookup(name));
	/* Neither the netdev nor the name stays claimed. */
	rsw_kt_attach_named(test, ndev, name);
}

/* What "rdma link delete" does in nldev_dellink(). */
static void rsw_kt_dellink_removes(struct kunit *test)
{
	char name[IB_DEVICE_NAME_MAX];
	struct ib_device *ibdev;

	rsw_kt_name(name);
	rsw_kt_attach_named(test, rsw_kt_netdev(test, 1), name);
	ibdev = ib_device_get_by_name(name, RDMA_DRIVER_UNKNOWN);
	KUNIT_ASSERT_NOT_NULL(test, ibdev);
	KUNIT_ASSERT_TRUE(test, ibdev->attrs.kernel_cap_flags &
				IBK_ALLOW_USER_UNREG);
	ib_unregister_device_and_put(ibdev);
	KUNIT_EXPECT_NULL(test, rsw_env_lookup(name));
}

/* A PD as ib_core's uverbs would allocate it, without the DMA MR. */
static struct ib_pd *rsw_kt_pd(struct kunit *test, struct ib_device *ibdev)
{
	struct ib_pd *pd = rdma_zalloc_drv_obj(ibdev, ib_pd);

	KUNIT_ASSERT_NOT_NULL(test, pd);
	pd->device = ibdev;
	return pd;
}

static void rsw_kt_pd_alloc_dealloc(struct kunit *test)
{
	struct ib_device *ibdev = rsw_kt_attach(test, rsw_kt_netdev(test, 1));
	struct rsw_device *rsw = to_rsw_dev(ibdev);
	struct ib_pd *pd = rsw_kt_pd(test, ibdev);

	KUNIT_EXPECT_EQ(test, ibdev->ops.alloc_pd(pd, NULL), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&rsw->num_pd), 1);
	KUNIT_EXPECT_EQ(test, ibdev->ops.dealloc_pd(pd, NULL), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&rsw->num_pd), 0);
	kfree(pd);
}

static void rsw_kt_pd_limit_enforced(struct kunit *test)
{
	struct ib_device *ibdev = rsw_kt_attach(test, rsw_kt_netdev(test, 1));
	struct rsw_device *rsw = to_rsw_dev(ibdev);
	struct ib_pd *pd = rsw_kt_pd(test, ibdev);

	atomic_set(&rsw->num_pd, RSW_MAX_PD);
	KUNIT_EXPECT_EQ(test, ibdev->ops.alloc_pd(pd, NULL), -ENOMEM);
	KUNIT_EXPECT_EQ(test, atomic_read(&rsw->num_pd), RSW_MAX_PD);
	atomic_set(&rsw->num_pd, 0);
	kfree(pd);
}

static struct kunit_case rsw_device_cases[] = {
	KUNIT_CASE(rsw_kt_attach_is_iwarp_rnic),
	KUNIT_CASE(rsw_kt_attach_binds_netdev),
	KUNIT_CASE(rsw_kt_attach_reports_caps),
	KUNIT_CASE(rsw_kt_port_active_when_up),
	KUNIT_CASE(rsw_kt_port_down_when_netdev_down),
	KUNIT_CASE(rsw_kt_ifup_reports_port_active),
	KUNIT_CASE(rsw_kt_carrier_off_reports_port_err),
	KUNIT_CASE(rsw_kt_carrier_on_reports_port_active),
	KUNIT_CASE_PARAM(rsw_kt_active_mtu_follows_netdev,
			 rsw_kt_mtu_gen_params),
	KUNIT_CASE(rsw_kt_gid_and_guid_from_mac),
	KUNIT_CASE(rsw_kt_mac_change_updates_gid),
	KUNIT_CASE(rsw_kt_single_default_pkey),
	KUNIT_CASE(rsw_kt_duplicate_netdev_refused),
	KUNIT_CASE(rsw_kt_duplicate_name_refused),
	KUNIT_CASE(rsw_kt_non_ethernet_refused),
	KUNIT_CASE(rsw_kt_netdev_unregister_removes),
	KUNIT_CASE(rsw_kt_remove_detaches),
	KUNIT_CASE(rsw_kt_dellink_removes),
	KUNIT_CASE(rsw_kt_pd_alloc_dealloc),
	KUNIT_CASE(rsw_kt_pd_limit_enforced),
	{}
};

static struct kunit_suite rsw_device_suite = {
	.name = "rdmap_sw_device",
	.test_cases = rsw_device_cases,
};

kunit_test_suite(rsw_device_suite);

MODULE_DESCRIPTION("KUnit tests for the rdmap_sw device lifecycle");
MODULE_LICENSE("GPL");
