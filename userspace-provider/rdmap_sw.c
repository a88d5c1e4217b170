// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * rdmap_sw rdma-core provider: registration with libibverbs, device
 * matching and the user context.  The verbs themselves live in verbs.c
 * (control path), cq.c and qp.c.
 *
 * Device matching.  rdmap_sw.ko is an out-of-tree driver, so its devices
 * carry no RDMA_DRIVER_* id and, being software devices created with
 * `rdma link add`, no PCI parent either; libibverbs' usual ways of pairing a
 * device with a provider do not apply.  rsw_match_device() accepts a device
 * only when all of these hold:
 *   - the kernel reports no driver id (a device with an id belongs to the
 *     in-tree provider for that id, e.g. upstream siw);
 *   - it is an iWARP RNIC;
 *   - its sysfs attribute hca_type reads RDMAP_SW_HCA_TYPE ("rdmap_sw"),
 *     so the device may carry any name;
 * and libibverbs itself checks that the device's uverbs ABI version is
 * RDMAP_SW_ABI_VERSION before calling alloc_context, which checks the
 * version once more in the driver's reply.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rdmap_sw.h"

/*
 * No table entry can name our devices (no driver id, no PCI ids, any
 * name): rsw_match_device() decides.  The empty table must exist all the
 * same, as libibverbs walks every provider's table for devices that have a
 * driver id (siw, rxe, ...) without checking for NULL.
 */
static const struct verbs_match_ent rsw_match_table[] = {
	{}
};

static bool rsw_match_device(struct verbs_sysfs_dev *sysfs_dev)
{
	char hca_type[32];

	if (sysfs_dev->driver_id != RDMA_DRIVER_UNKNOWN)
		return false;
	if (sysfs_dev->node_type != IBV_NODE_RNIC)
		return false;
	if (ibv_read_ibdev_sysfs_file(hca_type, sizeof(hca_type), sysfs_dev,
				      "hca_type") <= 0)
		return false;
	return strcmp(hca_type, RDMAP_SW_HCA_TYPE) == 0;
}

static void rsw_free_context(struct ibv_context *ibctx)
{
	struct rsw_context *ctx = to_rsw_context(ibctx);

	verbs_uninit_context(&ctx->ibv_ctx);
	free(ctx);
}

static const struct verbs_context_ops rsw_context_ops = {
	.alloc_mw = rsw_alloc_mw,
	.alloc_pd = rsw_alloc_pd,
	.bind_mw = rsw_bind_mw,
	.create_cq = rsw_create_cq,
	.create_cq_ex = rsw_create_cq_ex,
	.create_qp = rsw_create_qp,
	.create_qp_ex = rsw_create_qp_ex,
	.create_srq = rsw_create_srq,
	.dealloc_mw = rsw_dealloc_mw,
	.dealloc_pd = rsw_dealloc_pd,
	.dereg_mr = rsw_dereg_mr,
	.destroy_cq = rsw_destroy_cq,
	.destroy_qp = rsw_destroy_qp,
	.destroy_srq = rsw_destroy_srq,
	.free_context = rsw_free_context,
	.modify_qp = rsw_modify_qp,
	.modify_srq = rsw_modify_srq,
	.poll_cq = rsw_poll_cq,
	.post_recv = rsw_post_recv,
	.post_send = rsw_post_send,
	.post_srq_recv = rsw_post_srq_recv,
	.query_device_ex = rsw_query_device_ex,
	.query_port = rsw_query_port,
	.query_qp = rsw_query_qp,
	.query_srq = rsw_query_srq,
	.reg_mr = rsw_reg_mr,
	.req_notify_cq = rsw_req_notify_cq,
	.resize_cq = rsw_resize_cq,
};

static int rsw_get_context(struct rsw_context *ctx)
{
	struct rsw_alloc_context cmd = {};
	struct rsw_alloc_context_resp resp = {};
	int ret;

	ret = ibv_cmd_get_context(&ctx->ibv_ctx, &cmd.ibv_cmd, sizeof(cmd),
				  &resp.ibv_resp, sizeof(resp));
	if (ret)
		return ret;
	if (resp.abi_version != RDMAP_SW_ABI_VERSION) {
		verbs_err(&ctx->ibv_ctx,
			  "kernel speaks ABI %u, provider ABI %u\n",
			  resp.abi_version, RDMAP_SW_ABI_VERSION);
		return EPROTO;
	}
	ctx->dev_id = resp.dev_id;
	return 0;
}

static struct verbs_context *rsw_alloc_context(struct ibv_device *ibdev,
					       int cmd_fd, void *private_data)
{
	struct rsw_context *ctx;
	int ret;

	/* Takes ownership of cmd_fd, also on failure. */
	ctx = verbs_init_and_alloc_context(ibdev, cmd_fd, ctx, ibv_ctx,
					   RDMA_DRIVER_UNKNOWN);
	if (!ctx)
		return NULL;

	ret = rsw_get_context(ctx);
	if (ret)
		goto err_uninit;

	verbs_set_ops(&ctx->ibv_ctx, &rsw_context_ops);
	return &ctx->ibv_ctx;

err_uninit:
	verbs_uninit_context(&ctx->ibv_ctx);
	free(ctx);
	errno = ret;
	return NULL;
}

static struct verbs_device *rsw_alloc_device(struct verbs_sysfs_dev *sysfs_dev)
{
	struct rsw_device *dev;

	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return NULL;
	return &dev->ibv_dev;
}

static void rsw_uninit_device(struct verbs_device *verbs_dev)
{
	free(to_rsw_device(&verbs_dev->device));
}

static const struct verbs_device_ops rsw_device_ops = {
	.name = "rdmap_sw",
	.match_min_abi_version = RDMAP_SW_ABI_VERSION,
	.match_max_abi_version = RDMAP_SW_ABI_VERSION,
	.match_table = rsw_match_table,
	.match_device = rsw_match_device,
	.alloc_device = rsw_alloc_device,
	.uninit_device = rsw_uninit_device,
	.alloc_context = rsw_alloc_context,
};

PROVIDER_DRIVER(rdmap_sw, rsw_device_ops);
