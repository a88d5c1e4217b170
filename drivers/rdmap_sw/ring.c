// SPDX-License-Identifier: GPL-2.0
/*
 * The rings of work queues (a QP's send and receive queues) and of shared
 * receive queues, for qp.c and srq.c, which own the objects around them.
 *
 * Storage.  A ring is one zeroed buffer from rsw_umap_alloc(); a user
 * object's has the ABI's struct rdmap_sw_wq_ctrl page in front of the
 * entries and is charged to the process.  A work queue also has a slot
 * shadow per entry (struct rsw_wq_slot), never mapped.
 *
 * Lifetime.  create_qp allocates both work queues (rsw_wq_alloc()) before
 * it publishes the QP and destroy_qp frees them (rsw_wq_free()) after the
 * last holder dropped its QP reference, so nothing else can be using them.
 * Once a user ring is mapped (umap.c), the mapping owns the buffer: freeing
 * removes the mapping, and the buffer goes when the process unmaps it.
 *
 * Locks.  Ring indices and slot shadows are under their queue's lock
 * (rsw_wq.lock, irqsave); allocation and freeing take none.
 */
#include <linux/log2.h>
#include <linux/vmalloc.h>

#include "cq.h"
#include "internal.h"
#include "ring.h"

/* ------------------------------------------------------------- storage */

/*
 * The zeroed, mappable buffer of a ring of @bytes, with the ABI's control
 * page first if @user (mapped by the process, and charged to it: see
 * umap.c).  Work queues and shared receive queues alike.  Sets buf,
 * buf_len, uctrl and ring only on success.
 */
int rsw_ring_alloc(size_t bytes, bool user, void **buf, size_t *buf_len,
		   struct rdmap_sw_wq_ctrl **uctrl, void **ring)
{
	size_t off = user ? RDMAP_SW_WQ_RING_OFFSET : 0;

	*buf_len = PAGE_ALIGN(off + bytes);
	*buf = rsw_umap_alloc(*buf_len, user);
	if (!*buf)
		return -ENOMEM;
	*uctrl = user ? *buf : NULL;
	*ring = *buf + off;
	return 0;
}

int rsw_wq_alloc_buf(struct rsw_wq *wq, bool user)
{
	return rsw_ring_alloc((size_t)wq->size * wq->wqe_size, user, &wq->buf,
			      &wq->buf_len, &wq->uctrl, &wq->ring);
}

int rsw_wq_alloc(struct rsw_wq *wq, u32 wr, u32 sge, size_t wqe_size,
		 struct ib_cq *cq, struct lock_class_key *key, bool user)
{
	int ret;

	spin_lock_init(&wq->lock);
	lockdep_set_class(&wq->lock, key);
	wq->size = roundup_pow_of_two(max(wr, 1U));
	wq->mask = wq->size - 1;
	wq->wqe_size = wqe_size;
	wq->max_sge = sge;
	wq->cq = to_rsw_cq(cq);
	ret = rsw_wq_alloc_buf(wq, user);
	if (ret)
		return ret;
	wq->slot = kvcalloc(wq->size, sizeof(*wq->slot),
			    user ? RSW_GFP_USER : GFP_KERNEL);
	if (!wq->slot) {
		vfree(wq->buf);
		return -ENOMEM;
	}
	return 0;
}

void rsw_wq_free(struct rsw_wq *wq)
{
	kvfree(wq->slot);
	if (wq->umap)
		rsw_umap_remove(wq->umap);	/* frees buf once unmapped */
	else
		vfree(wq->buf);
}
