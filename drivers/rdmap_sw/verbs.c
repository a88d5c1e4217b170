// SPDX-License-Identifier: GPL-2.0
/*
 * Device, port, GID, P_Key, PD and user context verbs.
 *
 * The port mirrors the netdev: rsw_port_refresh() copies what the port
 * reports from the netdev under RTNL, the query verbs read that snapshot.
 * Every verb here runs in process context and may be called by
 * unprivileged users, so errors are returned, never logged.
 */
#include <linux/ethtool.h>
#include <linux/log2.h>
#include <linux/rtnetlink.h>
#include <rdma/ib_mad.h>
#include <rdma/rdmap_sw-abi.h>
#include <rdma/uverbs_ioctl.h>

#include "internal.h"

/* Speed reported when the netdev does not know its own (dummy, virtio). */
#define RSW_DEFAULT_MBPS SPEED_1000

/*
 * Netdev speed -> the slowest IB speed x width combination that is at least
 * as fast; all of them exist in 6.1 and 6.12.
 */
static const struct {
	u32 max_mbps;
	u16 speed;
	u8 width;
} rsw_speed_map[] = {
	{ SPEED_2500, IB_SPEED_SDR, IB_WIDTH_1X },
	{ SPEED_5000, IB_SPEED_DDR, IB_WIDTH_1X },
	{ SPEED_10000, IB_SPEED_QDR, IB_WIDTH_1X },
	{ SPEED_20000, IB_SPEED_QDR, IB_WIDTH_2X },
	{ SPEED_25000, IB_SPEED_EDR, IB_WIDTH_1X },
	{ SPEED_40000, IB_SPEED_QDR, IB_WIDTH_4X },
	{ SPEED_50000, IB_SPEED_HDR, IB_WIDTH_1X },
	{ SPEED_100000, IB_SPEED_EDR, IB_WIDTH_4X },
	{ SPEED_200000, IB_SPEED_HDR, IB_WIDTH_4X },
	{ SPEED_400000, IB_SPEED_NDR, IB_WIDTH_4X },
	{ U32_MAX, IB_SPEED_NDR, IB_WIDTH_8X },
};

__be64 rsw_guid_from_mac(const u8 *mac)
{
	u8 eui[8];
	__be64 guid;

	/* EUI-48 -> modified EUI-64: insert ff:fe, flip universal/local. */
	eui[0] = mac[0] ^ 0x02;
	eui[1] = mac[1];
	eui[2] = mac[2];
	eui[3] = 0xff;
	eui[4] = 0xfe;
	eui[5] = mac[3];
	eui[6] = mac[4];
	eui[7] = mac[5];
	memcpy(&guid, eui, sizeof(guid));
	return guid;
}

static u32 rsw_netdev_mbps(struct net_device *ndev)
{
	struct ethtool_link_ksettings ks = {};

	ASSERT_RTNL();
	if (__ethtool_get_link_ksettings(ndev, &ks) ||
	    ks.base.speed == (u32)SPEED_UNKNOWN || !ks.base.speed)
		return RSW_DEFAULT_MBPS;
	return ks.base.speed;
}

static void rsw_speed_from_mbps(u32 mbps, struct rsw_port_snap *snap)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(rsw_speed_map) - 1; i++)
		if (mbps <= rsw_speed_map[i].max_mbps)
			break;
	snap->speed = rsw_speed_map[i].speed;
	snap->width = rsw_speed_map[i].width;
}

/* The port is usable when the netdev is up, has carrier and is not dormant. */
static enum ib_port_state rsw_netdev_port_state(const struct net_device *ndev)
{
	if (netif_running(ndev) && netif_carrier_ok(ndev) &&
	    !netif_dormant(ndev))
		return IB_PORT_ACTIVE;
	return IB_PORT_DOWN;
}

unsigned int rsw_port_refresh(struct rsw_device *rsw)
{
	struct net_device *ndev = rsw->netdev;
	struct rsw_port_snap now = {};
	unsigned int changes = 0;

	ASSERT_RTNL();
	ether_addr_copy(now.mac, ndev->dev_addr);
	now.state = rsw_netdev_port_state(ndev);
	now.mtu = READ_ONCE(ndev->mtu);
	rsw_speed_from_mbps(rsw_netdev_mbps(ndev), &now);

	spin_lock_bh(&rsw->port_lock);
	if (now.state != rsw->port.state)
		changes |= RSW_PORT_STATE_CHANGED;
	if (!ether_addr_equal(now.mac, rsw->port.mac))
		changes |= RSW_PORT_ADDR_CHANGED;
	rsw->port = now;
	spin_unlock_bh(&rsw->port_lock);
	return changes;
}

static void rsw_port_read(struct rsw_device *rsw, struct rsw_port_snap *snap)
{
	spin_lock_bh(&rsw->port_lock);
	*snap = rsw->port;
	spin_unlock_bh(&rsw->port_lock);
}

enum ib_port_state rsw_port_state(struct rsw_device *rsw)
{
	struct rsw_port_snap snap;

	rsw_port_read(rsw, &snap);
	return snap.state;
}

static int rsw_query_device(struct ib_device *ibdev,
			    struct ib_device_attr *attr, struct ib_udata *udata)
{
	/* The ABI has no query_device request or response data. */
	if (udata && (udata->inlen || udata->outlen))
		return -EINVAL;

	memset(attr, 0, sizeof(*attr));
	attr->sys_image_guid = ibdev->node_guid;
	attr->max_pd = RSW_MAX_PD;
	attr->max_cq = RSW_MAX_CQ;
	attr->max_cqe = RSW_MAX_CQE;
	attr->max_mr = RSW_MAX_MR;
	attr->max_mw = RSW_MAX_MW;
	attr->max_fast_reg_page_list_len = RSW_MAX_FRMR_PAGES;
	attr->max_mr_size = RSW_MAX_MR_SIZE;
	/*
	 * No vendor behind us: "rsw" in a 24-bit value whose first octet has
	 * the locally administered bit, so no assigned OUI can collide.
	 */
	attr->vendor_id = 0x727377;
	/* The page sizes fast registration takes (mem.c). */
	attr->page_size_cap = GENMASK_ULL(ilog2(RSW_MR_MAX_PAGE_SIZE),
					  ilog2(RSW_MR_MIN_PAGE_SIZE));
	attr->max_pkeys = 1;
	attr->max_qp = RSW_MAX_QP;
	attr->max_qp_wr = RSW_MAX_QP_WR;
	attr->max_send_sge = RSW_MAX_SGE;
	attr->max_recv_sge = RSW_MAX_SGE;
	attr->max_sge_rd = RSW_MAX_SGE_RD;
	attr->max_qp_rd_atom = RSW_MAX_RD_ATOM;
	attr->max_qp_init_rd_atom = RSW_MAX_RD_ATOM;
	/*
	 * RFC 7306 atomics run as CPU atomics on the target memory
	 * (rsw_mr_atomic()), so they are atomic against the CPUs' own, in
	 * this process and any other that maps the memory: global.
	 */
	attr->atomic_cap = IB_ATOMIC_GLOB;
	attr->masked_atomic_cap = IB_ATOMIC_GLOB;
	attr->max_srq = RSW_MAX_SRQ;
	attr->max_srq_wr = RSW_MAX_SRQ_WR;
	attr->max_srq_sge = RSW_MAX_SGE;
	attr->device_cap_flags = IB_DEVICE_PORT_ACTIVE_EVENT |
				 IB_DEVICE_SYS_IMAGE_GUID |
				 IB_DEVICE_MEM_MGT_EXTENSIONS |
				 IB_DEVICE_MEM_WINDOW |
				 IB_DEVICE_MEM_WINDOW_TYPE_2B;
	/* modify_srq resizes (IB_SRQ_MAX_WR, srq.c). */
	attr->device_cap_flags |= IB_DEVICE_SRQ_RESIZE;
	/* Lets "rdma link delete" (nldev dellink) remove the device. */
	attr->kernel_cap_flags = IBK_ALLOW_USER_UNREG;
	return 0;
}

/*
 * ib_core's iWARP query_port fills the port from the netdev first (state
 * INIT without an IPv4 address); everything set here overrides it.
 */
static int rsw_query_port(struct ib_device *ibdev, u32 port,
			  struct ib_port_attr *attr)
{
	struct rsw_port_snap snap;

	rsw_port_read(to_rsw_dev(ibdev), &snap);
	attr->state = snap.state;
	attr->phys_state = snap.state == IB_PORT_ACTIVE ?
			   IB_PORT_PHYS_STATE_LINK_UP :
			   IB_PORT_PHYS_STATE_DISABLED;
	attr->max_mtu = IB_MTU_4096;
	attr->max_msg_sz = RSW_MAX_MSG_SIZE;
	attr->active_mtu = ib_mtu_int_to_enum(snap.mtu);
	attr->active_speed = snap.speed;
	attr->active_width = snap.width;
	attr->gid_tbl_len = 1;
	attr->pkey_tbl_len = 1;
	return 0;
}

/*
 * The single GID is the MAC followed by zeros: rdma_cm finds an iWARP
 * device for a source address by the netdev's hardware address.
 */
static int rsw_query_gid(struct ib_device *ibdev, u32 port, int index,
			 union ib_gid *gid)
{
	struct rsw_port_snap snap;

	if (index != 0)
		return -EINVAL;
	rsw_port_read(to_rsw_dev(ibdev), &snap);
	memset(gid, 0, sizeof(*gid));
	memcpy(gid->raw, snap.mac, ETH_ALEN);
	return 0;
}

/* iWARP has no partitions; ib_core still expects one full-member P_Key. */
static int rsw_query_pkey(struct ib_device *ibdev, u32 port, u16 index,
			  u16 *pkey)
{
	if (index != 0)
		return -EINVAL;
	*pkey = IB_DEFAULT_PKEY_FULL;
	return 0;
}

static int rsw_get_port_immutable(struct ib_device *ibdev, u32 port,
				  struct ib_port_immutable *immutable)
{
	immutable->core_cap_flags = RDMA_CORE_PORT_IWARP;
	immutable->gid_tbl_len = 1;
	immutable->pkey_tbl_len = 1;
	immutable->max_mad_size = 0;
	return 0;
}

/* What the device and its one port report: attributes, GID, P_Key. */
const struct ib_device_ops rsw_query_ops = {
	.get_port_immutable = rsw_get_port_immutable,
	.query_device = rsw_query_device,
	.query_port = rsw_query_port,
	.query_gid = rsw_query_gid,
	.query_pkey = rsw_query_pkey,
};

static int rsw_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct rsw_device *rsw = to_rsw_dev(ibpd->device);

	if (atomic_inc_return(&rsw->num_pd) > RSW_MAX_PD) {
		atomic_dec(&rsw->num_pd);
		return -ENOMEM;
	}
	return 0;
}

static int rsw_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	atomic_dec(&to_rsw_dev(ibpd->device)->num_pd);
	return 0;
}

static_assert(RSW_ABI_MIN >= 1 && RSW_ABI_MIN <= RSW_ABI_MAX);
static_assert(RSW_ABI_MAX <= RDMAP_SW_ABI_VERSION_MAX);

/* The per-version lengths of rdmap_sw-abi.h are where the fields end. */
static_assert(RDMAP_SW_UREQ_ALLOC_CTX_V2_LEN ==
	      offsetofend(struct rdmap_sw_ureq_alloc_ctx, abi_max));
static_assert(RDMAP_SW_URESP_ALLOC_CTX_V1_LEN ==
	      offsetofend(struct rdmap_sw_uresp_alloc_ctx, abi_version));
static_assert(RDMAP_SW_URESP_ALLOC_CTX_V2_LEN ==
	      offsetofend(struct rdmap_sw_uresp_alloc_ctx, abi_max));
/*
 * Every field of both structures is version 2's: a version that adds one
 * must teach rsw_ucontext_req() and rsw_uresp_ctx_len() about it.
 */
static_assert(sizeof(struct rdmap_sw_ureq_alloc_ctx) ==
	      RDMAP_SW_UREQ_ALLOC_CTX_V2_LEN);
static_assert(sizeof(struct rdmap_sw_uresp_alloc_ctx) ==
	      RDMAP_SW_URESP_ALLOC_CTX_V2_LEN);

/*
 * The length of a negotiated answer choosing version @v: versions 1 and 2
 * answer the same fields; a version that adds one answers more.
 */
static size_t rsw_uresp_ctx_len(u32 v)
{
	switch (v) {
	case 1:
	case 2:
		return RDMAP_SW_URESP_ALLOC_CTX_V2_LEN;
	}
	WARN_ON_ONCE(1);	/* the negotiation chose within our range */
	return RDMAP_SW_URESP_ALLOC_CTX_V2_LEN;
}

/*
 * Why a process got no context: at debug level only, rate limited, as any
 * user can ask.  The values are the caller's own.
 */
static int rsw_ucontext_refuse(int err, const char *why, u32 min, u32 max)
{
	pr_debug_ratelimited("ucontext refused (%d): %s; provider ABI %u..%u, module %u..%u\n",
			     err, why, min, max, RSW_ABI_MIN, RSW_ABI_MAX);
	return err;
}

/*
 * Answer @resp (@len bytes of it) and record its version in the context;
 * ib_core publishes the context only after we return 0.
 */
static int rsw_ucontext_answer(struct ib_ucontext *ibctx,
			       struct ib_udata *udata,
			       struct rdmap_sw_uresp_alloc_ctx *resp,
			       size_t len)
{
	int ret = ib_copy_to_udata(udata, resp, len);

	if (!ret)
		container_of(ibctx, struct rsw_ucontext, base)->abi_version =
			resp->abi_version;
	return ret;
}

bool rsw_udata_abi_ok(struct ib_udata *udata)
{
	return rsw_uctx_abi_ok(rdma_udata_to_drv_context(udata,
				struct rsw_ucontext, base));
}

/* A provider that sent no request data speaks version 1. */
static int rsw_ucontext_v1(struct ib_ucontext *ibctx, struct ib_udata *udata)
{
	struct rdmap_sw_uresp_alloc_ctx resp = {
		.dev_id = ibctx->device->index,
		.abi_version = 1,
	};

	if (RSW_ABI_MIN > 1)
		return rsw_ucontext_refuse(-EPROTO,
					   "version 1 no longer spoken", 1, 1);
	if (udata->outlen < RDMAP_SW_URESP_ALLOC_CTX_V1_LEN)
		return rsw_ucontext_refuse(-EINVAL, "short response", 1, 1);
	return rsw_ucontext_answer(ibctx, udata, &resp,
				   RDMAP_SW_URESP_ALLOC_CTX_V1_LEN);
}

/*
 * The request of version 2 on (@req zeroed): at least version 2's length,
 * and a sane range.  What lies past the fields of the versions we speak
 * belongs to newer ones, which we will not choose: it is not read, so a
 * newer provider's request, whatever it sets there, still meets us at a
 * version both speak.
 */
static int rsw_ucontext_req(struct ib_udata *udata,
			    struct rdmap_sw_ureq_alloc_ctx *req)
{
	size_t len = min(udata->inlen, sizeof(*req));

	/* A module speaking version 1 only has no request: zeros or EINVAL. */
	if (RSW_ABI_MAX < RDMAP_SW_ABI_VERSION_NEGOTIATE) {
		if (!ib_is_udata_cleared(udata, 0, udata->inlen))
			return rsw_ucontext_refuse(-EINVAL, "request data",
						   0, 0);
		return 1;
	}
	if (udata->inlen < RDMAP_SW_UREQ_ALLOC_CTX_V2_LEN)
		return rsw_ucontext_refuse(-EINVAL, "short request", 0, 0);
	/* An unreadable request is EFAULT (review A8: never EINVAL). */
	if (ib_copy_from_udata(req, udata, len))
		return -EFAULT;
	if (!req->abi_min || req->abi_min > req->abi_max)
		return rsw_ucontext_refuse(-EINVAL, "bad range",
					   req->abi_min, req->abi_max);
	return 0;
}

/* The negotiation of rdmap_sw-abi.h; a refusal writes no answer. */
static int rsw_alloc_ucontext(struct ib_ucontext *ibctx,
			      struct ib_udata *udata)
{
	struct rdmap_sw_ureq_alloc_ctx req = {};
	struct rdmap_sw_uresp_alloc_ctx resp = {
		.dev_id = ibctx->device->index,
		.abi_min = RSW_ABI_MIN,
		.abi_max = RSW_ABI_MAX,
	};
	int ret;

	if (!udata->inlen)
		return rsw_ucontext_v1(ibctx, udata);
	ret = rsw_ucontext_req(udata, &req);
	if (ret > 0)
		return rsw_ucontext_v1(ibctx, udata);
	if (ret)
		return ret;
	resp.abi_version = min_t(u32, req.abi_max, RSW_ABI_MAX);
	if (resp.abi_version < max_t(u32, req.abi_min, RSW_ABI_MIN))
		return rsw_ucontext_refuse(-EPROTO, "no common version",
					   req.abi_min, req.abi_max);
	/* The answer is as long as the chosen version's. */
	if (udata->outlen < rsw_uresp_ctx_len(resp.abi_version))
		return rsw_ucontext_refuse(-EINVAL, "short response",
					   req.abi_min, req.abi_max);
	return rsw_ucontext_answer(ibctx, udata, &resp,
				   rsw_uresp_ctx_len(resp.abi_version));
}

static void rsw_dealloc_ucontext(struct ib_ucontext *ibctx)
{
}

/*
 * Called on device removal after ib_core destroyed every object of the
 * context (which removed their rdma_user_mmap_entry mappings, umap.c);
 * having it lets removal proceed while processes still hold the uverbs
 * file open.  All user mappings stay on that API.
 */
static void rsw_disassociate_ucontext(struct ib_ucontext *ibctx)
{
}

/*
 * A process's context, from its first verbs call to its close (or device
 * removal), and the ring mappings it owns.  ib_core allocates the object.
 */
const struct ib_device_ops rsw_ctx_ops = {
	INIT_RDMA_OBJ_SIZE(ib_ucontext, rsw_ucontext, base),
	.alloc_ucontext = rsw_alloc_ucontext,
	.mmap = rsw_mmap,
	.mmap_free = rsw_mmap_free,
	.disassociate_ucontext = rsw_disassociate_ucontext,
	.dealloc_ucontext = rsw_dealloc_ucontext,
};

/* Protection domains: an object ib_core allocates, and a device count. */
const struct ib_device_ops rsw_pd_ops = {
	INIT_RDMA_OBJ_SIZE(ib_pd, rsw_pd, base),
	.alloc_pd = rsw_alloc_pd,
	.dealloc_pd = rsw_dealloc_pd,
};
