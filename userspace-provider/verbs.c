// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * rdmap_sw rdma-core provider: control-path verbs.
 *
 * Device and port attributes come from the kernel unchanged: rdmap_sw.ko is
 * the only authority on limits, so the provider never trims or invents
 * them.  Verbs that are not listed in rdmap_sw.c's ops table are answered
 * by libibverbs with EOPNOTSUPP.
 */
#include <errno.h>
#include <stdlib.h>

#include "rdmap_sw.h"

int rsw_query_device_ex(struct ibv_context *ctx,
			const struct ibv_query_device_ex_input *input,
			struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct verbs_device *vdev = verbs_get_device(ctx->device);
	int ret;

	ret = ibv_cmd_query_device_any(ctx, input, attr, attr_size, NULL,
				       NULL);
	if (ret)
		return ret;

	/*
	 * The firmware string is whatever the kernel shows in sysfs (empty
	 * when the driver has none); a missing file leaves it empty.
	 */
	if (ibv_read_ibdev_sysfs_file(attr->orig_attr.fw_ver,
				      sizeof(attr->orig_attr.fw_ver),
				      vdev->sysfs, "fw_ver") <= 0)
		attr->orig_attr.fw_ver[0] = '\0';
	return 0;
}

int rsw_query_port(struct ibv_context *ctx, uint8_t port,
		   struct ibv_port_attr *attr)
{
	struct ibv_query_port cmd;

	return ibv_cmd_query_port(ctx, port, attr, &cmd, sizeof(cmd));
}

struct ibv_pd *rsw_alloc_pd(struct ibv_context *ctx)
{
	struct ibv_alloc_pd cmd;
	struct ib_uverbs_alloc_pd_resp resp;
	struct rsw_pd *pd;
	int ret;

	pd = calloc(1, sizeof(*pd));
	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}

	ret = ibv_cmd_alloc_pd(ctx, &pd->ibv_pd, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (ret)
		goto err_free;
	return &pd->ibv_pd;

err_free:
	free(pd);
	errno = ret;
	return NULL;
}

int rsw_dealloc_pd(struct ibv_pd *ibpd)
{
	int ret;

	ret = ibv_cmd_dealloc_pd(ibpd);
	if (ret)
		return ret;
	free(to_rsw_pd(ibpd));
	return 0;
}

struct ibv_mr *rsw_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			  uint64_t hca_va, int access)
{
	struct ibv_reg_mr cmd;
	struct ib_uverbs_reg_mr_resp resp;
	struct verbs_mr *vmr;
	int ret;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_reg_mr(pd, addr, length, hca_va, access, vmr, &cmd,
			     sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(vmr);
		errno = ret;
		return NULL;
	}
	return &vmr->ibv_mr;
}

struct ibv_mw *rsw_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct ib_uverbs_alloc_mw_resp resp;
	struct ibv_alloc_mw cmd;
	struct ibv_mw *mw;
	int ret;

	mw = calloc(1, sizeof(*mw));
	if (!mw) {
		errno = ENOMEM;
		return NULL;
	}
	/* The kernel decides which types exist (EINVAL for the others). */
	ret = ibv_cmd_alloc_mw(pd, type, mw, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (ret) {
		free(mw);
		errno = ret;
		return NULL;
	}
	return mw;
}

int rsw_dealloc_mw(struct ibv_mw *mw)
{
	int ret;

	ret = ibv_cmd_dealloc_mw(mw);
	if (ret)
		return ret;
	free(mw);
	return 0;
}

int rsw_dereg_mr(struct verbs_mr *vmr)
{
	int ret;

	ret = ibv_cmd_dereg_mr(vmr);
	if (ret)
		return ret;
	free(vmr);
	return 0;
}
