// SPDX-License-Identifier: GPL-2.0
/*
 * Shared receive queues (IB_SRQT_BASIC): one ring of receive entries that
 * any number of RC QPs created with it take from.  This file has the SRQ
 * verbs; the ring, the take and the limit event are ring.c's.
 *
 * Taking.  An untagged Send's first segment makes its QP take the next
 * receive (ring.c, rsw_qp_rq_take()); for a QP with an SRQ that take copies
 * the SRQ's head entry into the QP's private receive ring under the QP's
 * rq.lock and then srq->lock, and the SRQ's head moves on at once.  QPs
 * complete their receives in their own order, so the SRQ never waits for a
 * completion: a slot is free again as soon as its entry was copied, and
 * everything after the copy (validation, placement, completion with the
 * taking QP's qp_num to its recv CQ, flushing) is the QP's business.
 *
 * Kernel and user SRQs.  A kernel SRQ's entries are written by
 * post_srq_recv, which validates them.  A user SRQ (create_srq with udata)
 * is mapped into the process behind the ABI's control page: the process
 * writes entries and ctrl.tail, the kernel publishes ctrl.head; the entry
 * copied at take time is validated by the taking QP, and a bad one fails
 * that QP only.
 *
 * Limit.  modify_srq(IB_SRQ_LIMIT) arms the limit; the take that leaves
 * fewer posted entries than the limit disarms it and raises
 * IB_EVENT_SRQ_LIMIT_REACHED once, after every lock is dropped.
 *
 * Resize.  modify_srq(IB_SRQ_MAX_WR) replaces the ring, keeping the
 * posted entries at their indices (refused below their number); a user
 * SRQ's process learns the new mapping through the answer address of
 * struct rdmap_sw_ureq_modify_srq (protocol in the ABI header).  The
 * ring's fields change only under srq->lock, which every take holds.
 *
 * Lifetime.  ib_core allocates and frees struct rsw_srq and refuses
 * destroy_srq while a QP uses the SRQ; a QP is only destroyed after every
 * holder of it (the stream, mid-take or not) dropped its reference, so
 * nothing takes from an SRQ that destroy_srq is freeing.
 */
#include <linux/log2.h>
#include <linux/vmalloc.h>
#include <rdma/uverbs_ioctl.h>

#include "internal.h"
#include "ring.h"

/* RSW_MAX_SRQ is enforced across all devices of the module. */
static atomic_t rsw_srq_count = ATOMIC_INIT(0);

/* ------------------------------------------------------------- verbs */

static int rsw_srq_check_init(struct ib_srq *ibsrq,
			      const struct ib_srq_init_attr *init,
			      struct ib_udata *udata)
{
	if (init->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	if (init->attr.max_wr > RSW_MAX_SRQ_WR ||
	    init->attr.max_sge > RSW_MAX_SGE)
		return -EINVAL;
	/* No request data is defined: unknown input must be zero. */
	if (udata && (!rsw_udata_abi_ok(udata) ||
		      (udata->inlen &&
		       !ib_is_udata_cleared(udata, 0, udata->inlen))))
		return -EINVAL;
	return 0;
}

/* A user SRQ: map control page and ring, tell the process where. */
static int rsw_srq_map(struct rsw_srq *srq, struct ib_udata *udata)
{
	struct ib_ucontext *uctx = &rdma_udata_to_drv_context(udata,
				struct rsw_ucontext, base)->base;
	struct rdmap_sw_uresp_create_srq resp = {
		.len = srq->buf_len,
		.size = srq->size,
		.max_sge = srq->max_sge,
	};
	struct rsw_umap *um;

	um = rsw_umap_insert(uctx, srq->buf, srq->buf_len, &resp.offset);
	if (IS_ERR(um))
		return PTR_ERR(um);
	srq->umap = um;		/* owns buf from now on */
	return ib_copy_to_udata(udata, &resp, min(udata->outlen, sizeof(resp)));
}

/* ops.create_srq.  Process context, may sleep. */
int rsw_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		   struct ib_udata *udata)
{
	struct rsw_srq *srq = to_rsw_srq(ibsrq);
	int ret;

	ret = rsw_srq_check_init(ibsrq, init, udata);
	if (ret)
		return ret;
	if (atomic_inc_return(&rsw_srq_count) > RSW_MAX_SRQ) {
		ret = -ENOMEM;
		goto err_count;
	}
	srq->user = !!udata;
	mutex_init(&srq->modify_mutex);
	spin_lock_init(&srq->lock);
	srq->size = roundup_pow_of_two(max(init->attr.max_wr, 1U));
	srq->mask = srq->size - 1;
	srq->max_sge = max(init->attr.max_sge, 1U);
	ret = rsw_srq_alloc_buf(srq, !!udata);
	if (ret)
		goto err_count;
	if (udata) {
		ret = rsw_srq_map(srq, udata);
		if (ret)
			goto err_free;
	}
	init->attr.max_wr = srq->size;
	init->attr.max_sge = srq->max_sge;
	return 0;

err_free:
	rsw_srq_free_buf(srq);
err_count:
	atomic_dec(&rsw_srq_count);
	return ret;
}

/*
 * The driver data of modify_srq: the address for a resize's answer, 0 if
 * none was given (an older provider, or a kernel caller).
 */
static int rsw_srq_modify_req(struct ib_udata *udata, u64 *response)
{
	struct rdmap_sw_ureq_modify_srq req = {};
	int ret;

	*response = 0;
	if (!udata || !udata->inlen)
		return 0;
	if (udata->inlen > sizeof(req) &&
	    !ib_is_udata_cleared(udata, sizeof(req),
				 udata->inlen - sizeof(req)))
		return -EINVAL;
	ret = ib_copy_from_udata(&req, udata, min(udata->inlen, sizeof(req)));
	if (ret)
		return ret;
	*response = req.response;
	return 0;
}

/*
 * A user SRQ's new ring: publish it and write the answer to the process's
 * @response, before the switch (nothing after it may fail).  On failure
 * @new is still freed by the caller, owning nothing of the mapping.
 */
static int rsw_srq_resize_map(struct rsw_srq *srq, struct rsw_srq *new,
			      struct ib_udata *udata, u64 response)
{
	struct ib_ucontext *uctx = &rdma_udata_to_drv_context(udata,
				struct rsw_ucontext, base)->base;
	struct rdmap_sw_uresp_resize_srq resp = {
		.len = new->buf_len,
		.size = new->size,
		.max_sge = srq->max_sge,
	};
	struct rsw_umap *um;

	um = rsw_umap_insert(uctx, new->buf, new->buf_len, &resp.offset);
	if (IS_ERR(um))
		return PTR_ERR(um);
	new->umap = um;		/* owns the new buffer from now on */
	if (copy_to_user(u64_to_user_ptr(response), &resp, sizeof(resp)))
		return -EFAULT;
	return 0;
}

/*
 * IB_SRQ_MAX_WR: a ring of @max_wr entries (a power of two), keeping the
 * posted entries (ring.c, rsw_srq_switch_ring()).  The new ring is
 * allocated, charged to the process and mapped first; the old one is
 * freed after the switch, a user SRQ's by removing its mapping entry (the
 * process may still have it mapped: umap.c frees nothing under it).  A
 * failure leaves the old ring in use, untouched.  Process context,
 * modify_mutex held.
 */
static int rsw_srq_resize(struct rsw_srq *srq, u32 max_wr,
			  struct ib_udata *udata, u64 response)
{
	struct rsw_srq new = {};
	u32 copied;
	int ret;

	might_sleep();
	lockdep_assert_held(&srq->modify_mutex);
	/*
	 * A process that cannot learn the new mapping must not get one.
	 * umap changes only under modify_mutex (a KUnit user layout has none).
	 */
	if (srq->umap && !response)
		return -EOPNOTSUPP;
	new.size = roundup_pow_of_two(max(max_wr, 1U));
	new.mask = new.size - 1;
	ret = rsw_srq_alloc_buf(&new, srq->user);
	if (ret)
		return ret;
	ret = rsw_srq_prepare_ring(srq, &new, &copied);
	if (ret)
		goto out_free;
	if (srq->umap) {
		ret = rsw_srq_resize_map(srq, &new, udata, response);
		if (ret)
			goto out_free;
	}
	ret = rsw_srq_switch_ring(srq, &new, copied);
out_free:
	/* The replaced ring on success, the unused new one on failure. */
	rsw_srq_free_buf(&new);
	return ret;
}

/*
 * ops.modify_srq.  IB_SRQ_MAX_WR resizes (grow or shrink, never below the
 * posted entries); IB_SRQ_LIMIT arms the limit (0 disarms), checked
 * against the size the call leaves.  Both are checked before either is
 * done; a failed resize arms nothing.  modify_mutex makes the call one
 * step: uverbs runs modify_srq under a shared lock, so a concurrent one
 * could otherwise resize between the check and the arming.
 */
int rsw_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		   enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct rsw_srq *srq = to_rsw_srq(ibsrq);
	unsigned long flags;
	u64 response;
	u32 size;
	int ret;

	if (mask & ~(IB_SRQ_MAX_WR | IB_SRQ_LIMIT))
		return -EINVAL;
	ret = rsw_srq_modify_req(udata, &response);
	if (ret)
		return ret;
	if ((mask & IB_SRQ_MAX_WR) && attr->max_wr > RSW_MAX_SRQ_WR)
		return -EINVAL;
	mutex_lock(&srq->modify_mutex);
	/* Changes only under modify_mutex: stable until we let go. */
	size = srq->size;
	if (mask & IB_SRQ_MAX_WR)
		size = roundup_pow_of_two(max(attr->max_wr, 1U));
	ret = -EINVAL;
	if ((mask & IB_SRQ_LIMIT) && attr->srq_limit > size)
		goto out;
	ret = 0;
	if (mask & IB_SRQ_MAX_WR)
		ret = rsw_srq_resize(srq, attr->max_wr, udata, response);
	if (!ret && (mask & IB_SRQ_LIMIT)) {
		spin_lock_irqsave(&srq->lock, flags);
		WRITE_ONCE(srq->limit, attr->srq_limit);
		spin_unlock_irqrestore(&srq->lock, flags);
	}
out:
	mutex_unlock(&srq->modify_mutex);
	return ret;
}

/*
 * ops.query_srq, process context.  Serialised against modify_srq, not
 * against posting: the size cannot change under modify_mutex, and the
 * armed limit only drops to 0 when it fires (ring.c), which a reader may
 * see either side of.
 */
int rsw_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct rsw_srq *srq = to_rsw_srq(ibsrq);

	mutex_lock(&srq->modify_mutex);
	*attr = (struct ib_srq_attr) {
		.max_wr = srq->size,
		.max_sge = srq->max_sge,
		.srq_limit = READ_ONCE(srq->limit),
	};
	mutex_unlock(&srq->modify_mutex);
	return 0;
}

/* ops.destroy_srq.  Process context; no QP uses the SRQ (ib_core). */
int rsw_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct rsw_srq *srq = to_rsw_srq(ibsrq);

	rsw_srq_free_buf(srq);
	mutex_destroy(&srq->modify_mutex);
	atomic_dec(&rsw_srq_count);
	return 0;
}

/* Post one receive to a kernel SRQ.  srq->lock held. */
static int rsw_srq_post_one(struct rsw_srq *srq, const struct ib_recv_wr *wr)
{
	struct rdmap_sw_rqe *rqe;
	int ret;

	lockdep_assert_held(&srq->lock);
	if (srq->tail - srq->head >= srq->size)
		return -ENOMEM;
	rqe = rsw_srq_slot(srq, srq->tail);
	ret = rsw_wqe_sges(rqe->sge, wr->sg_list, wr->num_sge, srq->max_sge,
			   &rqe->length);
	if (ret)
		return ret;
	rqe->wr_id = wr->wr_id;
	rqe->num_sge = wr->num_sge;
	memset(rqe->reserved, 0, sizeof(rqe->reserved));
	srq->tail++;
	return 0;
}

/*
 * Post the chain that starts at @wr while it lasts; the work request that
 * stopped it (*@err its reason), or NULL once all of it is queued.
 */
static const struct ib_recv_wr *rsw_srq_post_chain(struct rsw_srq *srq,
						   const struct ib_recv_wr *wr,
						   int *err)
{
	lockdep_assert_held(&srq->lock);
	while (wr && !(*err = rsw_srq_post_one(srq, wr)))
		wr = wr->next;
	return wr;
}

/*
 * ops.post_srq_recv: a kernel ULP's receives, any context, never sleeping.
 * What was queued before the first malformed (-EINVAL) or surplus
 * (-ENOMEM) work request stays queued; *@bad_wr names that one.  A user
 * SRQ is fed only through the ring its process maps, so a non-empty chain
 * is refused whole.
 */
int rsw_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		      const struct ib_recv_wr **bad_wr)
{
	struct rsw_srq *srq = to_rsw_srq(ibsrq);
	const struct ib_recv_wr *stop = wr;
	unsigned long flags;
	int err = 0;

	if (!srq->user) {
		spin_lock_irqsave(&srq->lock, flags);
		stop = rsw_srq_post_chain(srq, wr, &err);
		spin_unlock_irqrestore(&srq->lock, flags);
	} else if (wr) {
		err = -EINVAL;
	}
	if (err)
		*bad_wr = stop;
	return err;
}

#if IS_ENABLED(CONFIG_KUNIT)
int rsw_srq_user_layout(struct ib_srq *ibsrq)
{
	struct rsw_srq *srq = to_rsw_srq(ibsrq);
	struct rsw_srq tmp = { .size = srq->size };
	unsigned long flags;
	int ret;

	if (srq->uctrl || srq->umap || srq->tail)
		return -EINVAL;
	ret = rsw_srq_alloc_buf(&tmp, true);
	if (ret)
		return ret;
	spin_lock_irqsave(&srq->lock, flags);
	swap(srq->buf, tmp.buf);
	srq->buf_len = tmp.buf_len;
	srq->uctrl = tmp.uctrl;
	srq->ring = tmp.ring;
	srq->user = true;
	spin_unlock_irqrestore(&srq->lock, flags);
	vfree(tmp.buf);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_srq_user_layout);

struct rdmap_sw_rqe *rsw_srq_entry(struct ib_srq *ibsrq, u32 n)
{
	return rsw_srq_slot(to_rsw_srq(ibsrq), n);
}
EXPORT_SYMBOL_IF_KUNIT(rsw_srq_entry);

struct rdmap_sw_wq_ctrl *rsw_srq_uctrl(struct ib_srq *ibsrq)
{
	return to_rsw_srq(ibsrq)->uctrl;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_srq_uctrl);

int rsw_srq_resize_steps(struct ib_srq *ibsrq, u32 size,
			 void (*during)(struct ib_srq *ibsrq))
{
	struct rsw_srq *srq = to_rsw_srq(ibsrq);
	struct rsw_srq new = { .size = size, .mask = size - 1 };
	u32 copied;
	int ret;

	ret = rsw_srq_alloc_buf(&new, srq->user);
	if (ret)
		return ret;
	mutex_lock(&srq->modify_mutex);
	ret = rsw_srq_prepare_ring(srq, &new, &copied);
	if (!ret) {
		if (during)
			during(ibsrq);
		ret = rsw_srq_switch_ring(srq, &new, copied);
	}
	mutex_unlock(&srq->modify_mutex);
	rsw_srq_free_buf(&new);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_srq_resize_steps);
#endif

/* The SRQ verbs, registered next to the QP's (main.c). */
const struct ib_device_ops rsw_srq_ops = {
	.create_srq = rsw_create_srq,
	.modify_srq = rsw_modify_srq,
	.query_srq = rsw_query_srq,
	.destroy_srq = rsw_destroy_srq,
	.post_srq_recv = rsw_post_srq_recv,

	INIT_RDMA_OBJ_SIZE(ib_srq, rsw_srq, base),
};
