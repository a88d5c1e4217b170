/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * rdmap_sw rdma-core provider: objects and the internal API index.
 *
 * Every provider object embeds its libibverbs counterpart as the first
 * member, so the to_rsw_*() helpers are plain container_of() conversions.
 * The kernel side of every command is rdmap_sw.ko; the wire format of the
 * driver-specific parts is include/uapi/rdma/rdmap_sw-abi.h (shared with
 * the kernel, not copied).
 */
#ifndef RDMAP_SW_PROVIDER_H
#define RDMAP_SW_PROVIDER_H

#include <stdint.h>

#include <ccan/container_of.h>
#include <infiniband/driver.h>

#include <rdma/rdmap_sw-abi.h>
#include <kernel-abi/rdmap_sw-abi.h>

/*
 * Driver-specific command layouts (the core command plus our payload).
 * GET_CONTEXT sends nothing extra and receives struct
 * rdmap_sw_uresp_alloc_ctx.
 */
DECLARE_DRV_CMD(rsw_alloc_context, IB_USER_VERBS_CMD_GET_CONTEXT,
		empty, rdmap_sw_uresp_alloc_ctx);

struct rsw_device {
	struct verbs_device ibv_dev;
};

struct rsw_context {
	struct verbs_context ibv_ctx;
	uint32_t dev_id;	/* kernel device index, from alloc_ucontext */
};

struct rsw_pd {
	struct ibv_pd ibv_pd;
};

static inline struct rsw_device *to_rsw_device(struct ibv_device *ibdev)
{
	return container_of(ibdev, struct rsw_device, ibv_dev.device);
}

static inline struct rsw_context *to_rsw_context(struct ibv_context *ctx)
{
	return container_of(ctx, struct rsw_context, ibv_ctx.context);
}

static inline struct rsw_pd *to_rsw_pd(struct ibv_pd *pd)
{
	return container_of(pd, struct rsw_pd, ibv_pd);
}

/*
 * verbs.c: control-path verbs.  Each one is a single system call into
 * ib_uverbs; none is used from a data path.
 */
int rsw_query_device_ex(struct ibv_context *ctx,
			const struct ibv_query_device_ex_input *input,
			struct ibv_device_attr_ex *attr, size_t attr_size);
int rsw_query_port(struct ibv_context *ctx, uint8_t port,
		   struct ibv_port_attr *attr);
struct ibv_pd *rsw_alloc_pd(struct ibv_context *ctx);
int rsw_dealloc_pd(struct ibv_pd *pd);

#endif /* RDMAP_SW_PROVIDER_H */
