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
 * and libibverbs itself checks that the device's uverbs ABI version (the
 * oldest version its module speaks) is one this header knows before it
 * calls alloc_context, which negotiates the version (rsw_get_context()).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
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

/*
 * The user ABI versions this provider speaks: the header's, or a narrower
 * range for tests (cmake -DRSW_TEST_ABI_MIN=.. -DRSW_TEST_ABI_MAX=..), to
 * act as an older or a newer provider.  The negotiation is the contract
 * of rdmap_sw-abi.h.
 */
#ifdef RSW_TEST_ABI_MIN
#define RSW_PROV_ABI_MIN RSW_TEST_ABI_MIN
#define RSW_PROV_ABI_MAX RSW_TEST_ABI_MAX
#else
#define RSW_PROV_ABI_MIN RDMAP_SW_ABI_VERSION_MIN
#define RSW_PROV_ABI_MAX RDMAP_SW_ABI_VERSION_MAX
#endif
_Static_assert(RSW_PROV_ABI_MIN >= 1 && RSW_PROV_ABI_MIN <= RSW_PROV_ABI_MAX &&
	       RSW_PROV_ABI_MAX <= RDMAP_SW_ABI_VERSION_MAX,
	       "provider ABI range outside rdmap_sw-abi.h's");

/*
 * Why this process gets no context, on stderr: libibverbs' own log
 * (verbs_err) is silent unless asked for, and a user who upgraded one
 * half must learn which half to upgrade.
 */
static void rsw_refuse(struct ibv_device *ibdev, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void rsw_refuse(struct ibv_device *ibdev, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "rdmap_sw: %s: ", ibv_get_device_name(ibdev));
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

/*
 * The versions the module says it speaks (sysfs RDMAP_SW_SYSFS_ABI) into
 * @min/@max: 0, or ENOENT for a module from before the negotiation
 * (version 1 only), or EPROTO for an attribute that is not "MIN MAX".
 */
static int rsw_module_abi(struct ibv_device *ibdev, unsigned int *min,
			  unsigned int *max)
{
	struct verbs_device *vdev = verbs_get_device(ibdev);
	char buf[32], end;

	if (ibv_read_ibdev_sysfs_file(buf, sizeof(buf), vdev->sysfs, "%s",
				      RDMAP_SW_SYSFS_ABI) < 0)
		return ENOENT;
	if (sscanf(buf, "%u %u%c", min, max, &end) != 2 || !*min ||
	    *min > *max) {
		rsw_refuse(ibdev, "unreadable sysfs %s \"%s\"\n",
			   RDMAP_SW_SYSFS_ABI, buf);
		return EPROTO;
	}
	return 0;
}

/* A module from before the negotiation: ask as version 1 did, if we can. */
static int rsw_get_context_v1(struct rsw_context *ctx)
{
	struct ibv_device *ibdev = ctx->ibv_ctx.context.device;
	struct rsw_alloc_context cmd = {};
	struct rsw_alloc_context_resp resp = {};
	int ret;

	if (RSW_PROV_ABI_MIN > 1) {
		rsw_refuse(ibdev, "the rdmap_sw module speaks user ABI version 1 only (no sysfs %s), this provider %u..%u: upgrade the rdmap_sw module\n",
			   RDMAP_SW_SYSFS_ABI, RSW_PROV_ABI_MIN,
			   RSW_PROV_ABI_MAX);
		return EPROTO;
	}
	/* No request data: the whole command is libibverbs' own. */
	ret = ibv_cmd_get_context(&ctx->ibv_ctx, &cmd.ibv_cmd,
				  sizeof(cmd.ibv_cmd), &resp.ibv_resp,
				  sizeof(resp));
	if (ret) {
		rsw_refuse(ibdev, "the module refused a version 1 context: %s\n",
			   strerror(ret));
		return ret;
	}
	if (resp.abi_version != 1) {
		rsw_refuse(ibdev, "the module answered user ABI version %u to a version 1 request\n",
			   resp.abi_version);
		return EPROTO;
	}
	ctx->dev_id = resp.dev_id;
	ctx->abi_version = 1;
	verbs_info(&ctx->ibv_ctx, "user ABI version 1 (module without negotiation, provider %u..%u)\n",
		   RSW_PROV_ABI_MIN, RSW_PROV_ABI_MAX);
	return 0;
}

/* The module speaks @min..@max, which meet ours: negotiate. */
static int rsw_get_context_v2(struct rsw_context *ctx, unsigned int min,
			      unsigned int max)
{
	struct ibv_device *ibdev = ctx->ibv_ctx.context.device;
	struct rsw_alloc_context cmd = {
		.abi_min = RSW_PROV_ABI_MIN,
		.abi_max = RSW_PROV_ABI_MAX,
	};
	struct rsw_alloc_context_resp resp = {};
	unsigned int v;
	int ret;

	ret = ibv_cmd_get_context(&ctx->ibv_ctx, &cmd.ibv_cmd, sizeof(cmd),
				  &resp.ibv_resp, sizeof(resp));
	if (ret) {
		rsw_refuse(ibdev, "the module (user ABI %u..%u) refused a context to this provider (%u..%u): %s\n",
			   min, max, RSW_PROV_ABI_MIN, RSW_PROV_ABI_MAX,
			   strerror(ret));
		return ret;
	}
	v = resp.abi_version;
	if (v < RSW_PROV_ABI_MIN || v > RSW_PROV_ABI_MAX ||
	    v < resp.abi_min || v > resp.abi_max) {
		rsw_refuse(ibdev, "the module answered user ABI version %u (module %u..%u, provider %u..%u)\n",
			   v, resp.abi_min, resp.abi_max, RSW_PROV_ABI_MIN,
			   RSW_PROV_ABI_MAX);
		return EPROTO;
	}
	ctx->dev_id = resp.dev_id;
	ctx->abi_version = v;
	verbs_info(&ctx->ibv_ctx, "user ABI version %u (module %u..%u, provider %u..%u)\n",
		   v, resp.abi_min, resp.abi_max, RSW_PROV_ABI_MIN,
		   RSW_PROV_ABI_MAX);
	return 0;
}

/*
 * Find a version both speak before asking (rdmap_sw-abi.h): a pairing
 * with none never calls GET_CONTEXT, whose failure through the ioctl
 * path costs a task reference in ib_core 6.1 and 6.12.
 */
static int rsw_get_context(struct rsw_context *ctx)
{
	struct ibv_device *ibdev = ctx->ibv_ctx.context.device;
	unsigned int min, max;
	int ret;

	ret = rsw_module_abi(ibdev, &min, &max);
	if (ret == ENOENT)
		return rsw_get_context_v1(ctx);
	if (ret)
		return ret;
	if (max < RSW_PROV_ABI_MIN || min > RSW_PROV_ABI_MAX) {
		rsw_refuse(ibdev, "no user ABI version in common: the rdmap_sw module speaks %u..%u, this provider %u..%u: upgrade the %s\n",
			   min, max, RSW_PROV_ABI_MIN, RSW_PROV_ABI_MAX,
			   max < RSW_PROV_ABI_MIN ? "rdmap_sw module" :
			   "rdma-core provider (librdmap_sw)");
		return EPROTO;
	}
	return rsw_get_context_v2(ctx, min, max);
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
	/*
	 * Every version this header knows, even in a narrowed test build:
	 * the device's uverbs ABI is its module's oldest version, and a
	 * pairing without a common one is refused, with the reason, by
	 * rsw_get_context() rather than by an unmatched device.
	 */
	.match_min_abi_version = RDMAP_SW_ABI_VERSION_MIN,
	.match_max_abi_version = RDMAP_SW_ABI_VERSION_MAX,
	.match_table = rsw_match_table,
	.match_device = rsw_match_device,
	.alloc_device = rsw_alloc_device,
	.uninit_device = rsw_uninit_device,
	.alloc_context = rsw_alloc_context,
};

PROVIDER_DRIVER(rdmap_sw, rsw_device_ops);
