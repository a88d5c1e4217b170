// SPDX-License-Identifier: GPL-2.0
/*
 * The rings of work queues (a QP's send and receive queues) and of shared
 * receive queues: storage, indices, the user-ring protocol of the ABI,
 * and taking, finishing, retiring and flushing entries.  qp.c and srq.c
 * own the objects around them and write entries in their post paths; the
 * TX and RX engines take and complete work requests here.
 *
 * Indices.  Free-running u32 (layouts in qp.h): a work queue's entries
 * move from posted to taken (an engine's, completing in any order) to
 * retired (reported to the CQ strictly in posting order, slot free).
 *
 * Kernel and user rings.  A kernel ring's entries were validated when
 * posted.  A user ring is shared with the process, which may rewrite it at
 * any time: an entry is copied out first and the copy validated (rules
 * above rsw_sges_check_user()); the process's tail is loaded with acquire
 * semantics and accepted only within the ring, head is published with
 * release semantics before the completions that free the slots, and the
 * SQ's busy flag follows the doorbell protocol (rsw_wq_take_user()).  A
 * bad tail or entry completes with an error and moves that QP alone to
 * ERROR (rsw_qp_set_error(), qp.c).
 *
 * Shared receive queues.  An SRQ's ring has no taken range: a QP's take
 * copies the SRQ's head entry into the QP's own small receive ring and
 * moves the SRQ's head on at once (rsw_wq_take_srq()); from there the
 * receive is validated, completed, retired and flushed as the QP's.  The
 * take that leaves fewer entries than the armed limit disarms it and
 * raises IB_EVENT_SRQ_LIMIT_REACHED once no lock is held.  ib_core refuses
 * destroy_srq while a QP uses the SRQ, so no take outlives its ring; a
 * resize switches the ring under srq->lock (rsw_srq_switch_ring()), so a
 * take finds the old ring or the new one, and the old one is freed after.
 *
 * Storage and lifetime.  A ring is one zeroed buffer from rsw_umap_alloc();
 * a user object's has the ABI's struct rdmap_sw_wq_ctrl page in front of
 * the entries and is charged to the process; a work queue also has a slot
 * shadow per entry, never mapped.  create_qp allocates both work queues
 * (rsw_wq_alloc()) before it publishes the QP, and destroy_qp frees them
 * (rsw_wq_free()) after the last holder dropped its QP reference, so
 * nothing else can be using them.  A taken entry is its engine's (which
 * holds a QP reference) until it completes it.  Once a user ring is
 * mapped (umap.c), the mapping owns the buffer: freeing removes the
 * mapping, and the buffer goes when the process unmaps it.
 *
 * Locks, all irqsave.  Indices and slot shadows are under their queue's
 * lock (rsw_wq.lock; the entries of a user ring under none); a take by a
 * QP with an SRQ nests rsw_srq.lock inside its rq.lock, and retiring
 * pushes to the CQ (rsw_cq.prod_lock) under the queue's lock.  The QP's
 * state and dead flag are read under the queue's lock (qp.c writes them
 * under all three QP locks).  rsw_qp_set_error(), event handlers and
 * local operations run with no ring lock held.  Allocation and freeing
 * take none.
 */
#include <linux/log2.h>
#include <linux/vmalloc.h>

#include "cq.h"
#include "internal.h"
#include "ring.h"

/* ----------------------------------------------------- SQ opcode table */

/* Indexed by enum rdmap_sw_wr_opcode. */
static const struct rsw_sq_op rsw_sq_ops[] = {
	[RDMAP_SW_WR_SEND] = {
		IB_WR_SEND, RDMAP_SW_WC_SEND, RSW_WR_SGE | RSW_WR_INLINE },
	[RDMAP_SW_WR_SEND_WITH_INV] = {
		IB_WR_SEND_WITH_INV, RDMAP_SW_WC_SEND,
		RSW_WR_SGE | RSW_WR_INLINE },
	[RDMAP_SW_WR_RDMA_WRITE] = {
		IB_WR_RDMA_WRITE, RDMAP_SW_WC_RDMA_WRITE,
		RSW_WR_SGE | RSW_WR_INLINE },
	[RDMAP_SW_WR_RDMA_READ] = {
		IB_WR_RDMA_READ, RDMAP_SW_WC_RDMA_READ,
		RSW_WR_SGE | RSW_WR_READ },
	[RDMAP_SW_WR_RDMA_READ_WITH_INV] = {
		IB_WR_RDMA_READ_WITH_INV, RDMAP_SW_WC_RDMA_READ,
		RSW_WR_SGE | RSW_WR_READ },
	[RDMAP_SW_WR_REG_MR] = {
		IB_WR_REG_MR, RDMAP_SW_WC_REG_MR, RSW_WR_LOCAL },
	[RDMAP_SW_WR_LOCAL_INV] = {
		IB_WR_LOCAL_INV, RDMAP_SW_WC_LOCAL_INV, RSW_WR_LOCAL },
	[RDMAP_SW_WR_RDMA_WRITE_WITH_IMM] = {
		IB_WR_RDMA_WRITE_WITH_IMM, RDMAP_SW_WC_RDMA_WRITE,
		RSW_WR_SGE | RSW_WR_INLINE },
	[RDMAP_SW_WR_ATOMIC_CMP_AND_SWP] = {
		IB_WR_ATOMIC_CMP_AND_SWP, RDMAP_SW_WC_COMP_SWAP,
		RSW_WR_SGE | RSW_WR_ATOMIC },
	[RDMAP_SW_WR_ATOMIC_FETCH_AND_ADD] = {
		IB_WR_ATOMIC_FETCH_AND_ADD, RDMAP_SW_WC_FETCH_ADD,
		RSW_WR_SGE | RSW_WR_ATOMIC },
	[RDMAP_SW_WR_MASKED_ATOMIC_CMP_AND_SWP] = {
		IB_WR_MASKED_ATOMIC_CMP_AND_SWP, RDMAP_SW_WC_MASKED_COMP_SWAP,
		RSW_WR_SGE | RSW_WR_ATOMIC },
	[RDMAP_SW_WR_MASKED_ATOMIC_FETCH_AND_ADD] = {
		IB_WR_MASKED_ATOMIC_FETCH_AND_ADD, RDMAP_SW_WC_MASKED_FETCH_ADD,
		RSW_WR_SGE | RSW_WR_ATOMIC },
	[RDMAP_SW_WR_BIND_MW] = {
		IB_WR_BIND_MW, RDMAP_SW_WC_BIND_MW, RSW_WR_LOCAL },
};

const struct rsw_sq_op *rsw_sq_op(u32 opcode)
{
	return opcode < ARRAY_SIZE(rsw_sq_ops) ? &rsw_sq_ops[opcode] : NULL;
}

int rsw_sq_opcode(enum ib_wr_opcode ib)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(rsw_sq_ops); i++)
		if (rsw_sq_ops[i].ib == ib)
			return i;
	return -EINVAL;
}

/* ------------------------------------------------------------- storage */

/*
 * The zeroed, mappable buffer of a ring of @bytes, with the ABI's control
 * page first if @user (mapped by the process, and charged to it: see
 * umap.c).  Work queues and shared receive queues alike.  Sets buf,
 * buf_len, uctrl and ring only on success.
 */
static int rsw_ring_alloc(size_t bytes, bool user, void **buf,
			  size_t *buf_len, struct rdmap_sw_wq_ctrl **uctrl,
			  void **ring)
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

int rsw_srq_alloc_buf(struct rsw_srq *srq, bool user)
{
	return rsw_ring_alloc((size_t)srq->size * sizeof(struct rdmap_sw_rqe),
			      user, &srq->buf, &srq->buf_len, &srq->uctrl,
			      &srq->ring);
}

void rsw_srq_free_buf(struct rsw_srq *srq)
{
	if (srq->umap)
		rsw_umap_remove(srq->umap);	/* frees buf once unmapped */
	else
		vfree(srq->buf);
}

/* ------------------------------------------------- user rings: indices */

/*
 * Load the process's tail from @uctrl (acquire: the entries before it are
 * written) and accept it only within a ring of @size entries: at most
 * size entries ahead of @head (the process may fill slot n only while
 * n - head < size) and never behind *@tail, what was accepted before.
 * False, *@tail unchanged, otherwise.  Work queues and SRQs alike.
 */
static bool rsw_ring_user_tail(const struct rdmap_sw_wq_ctrl *uctrl, u32 head,
			       u32 size, u32 *tail)
{
	/* Pairs with the process's release of tail after the entries. */
	u32 t = smp_load_acquire(&uctrl->tail);

	if (t - head > size || t - head < *tail - head)
		return false;
	*tail = t;
	return true;
}

/*
 * rsw_ring_user_tail() for @wq; false: the QP must go to ERROR.  wq->lock
 * held.
 */
static bool rsw_wq_user_tail(struct rsw_wq *wq)
{
	lockdep_assert_held(&wq->lock);
	return rsw_ring_user_tail(wq->uctrl, wq->head, wq->size, &wq->tail);
}

/* Slots before head are free again: tell the process.  wq->lock held. */
static void rsw_wq_user_head(struct rsw_wq *wq)
{
	/* Pairs with the process's acquire of head before it reuses slots. */
	smp_store_release(&wq->uctrl->head, wq->head);
}

/*
 * Retiring: publish the head the entries done from head on will leave,
 * before any of their completions is pushed.  A consumer that polled a
 * completion may post into its slot at once (the verbs promise it), so the
 * slot must already show as free; the kernel no longer needs the ring
 * entry (taken entries live on in their copy and the private shadow).
 * wq->lock held, so nothing is taken in between.
 */
static void rsw_wq_user_retire(struct rsw_wq *wq)
{
	u32 end = wq->head;

	while (end != wq->next && wq->slot[end & wq->mask].done)
		end++;
	if (end == wq->head)
		return;
	/* Pairs with the process's acquire of head before it reuses slots. */
	smp_store_release(&wq->uctrl->head, end);
}

/*
 * The SQ doorbell flag (ABI): 1 while the kernel drains the queue, so the
 * process need not ring.  sq.lock held.
 */
void rsw_wq_user_busy(struct rsw_wq *wq, u32 busy)
{
	WRITE_ONCE(wq->uctrl->busy, busy);
}

/* rsw_ring_user_tail() for a user SRQ, counting refusals.  srq->lock held. */
static bool rsw_srq_user_tail(struct rsw_srq *srq)
{
	lockdep_assert_held(&srq->lock);
	if (rsw_ring_user_tail(srq->uctrl, srq->head, srq->size, &srq->tail))
		return true;
	srq->bad_tails++;
	return false;
}

/*
 * Copy the entries @from .. @to - 1 of @srq's ring into @new's at the same
 * indices, only the last new->size of them if there are more.
 */
static void rsw_srq_copy(struct rsw_srq *srq, struct rsw_srq *new, u32 from,
			 u32 to)
{
	u32 n;

	if (to - from > new->size)
		from = to - new->size;
	for (n = from; n != to; n++)
		memcpy(rsw_srq_slot(new, n), rsw_srq_slot(srq, n),
		       sizeof(struct rdmap_sw_rqe));
}

/*
 * Resize: the posted entries head .. tail - 1 keep their indices, so
 * neither the takers nor the process renumber anything.  First, outside
 * srq->lock, the entries posted so far are copied (modify_mutex keeps
 * @srq's ring in place; a slot of them is rewritten only after a QP took
 * its entry, which the switch then leaves behind; a process that writes
 * them meanwhile changes only its own receives, which the taking QP
 * validates).  *@copied: the tail they were copied up to.
 */
int rsw_srq_prepare_ring(struct rsw_srq *srq, struct rsw_srq *new,
			 u32 *copied)
{
	unsigned long flags;
	int ret = -EINVAL;
	u32 head;

	lockdep_assert_held(&srq->modify_mutex);
	spin_lock_irqsave(&srq->lock, flags);
	if ((!srq->user || rsw_srq_user_tail(srq)) &&
	    srq->tail - srq->head <= new->size)
		ret = 0;
	head = srq->head;
	*copied = srq->tail;
	spin_unlock_irqrestore(&srq->lock, flags);
	if (!ret)
		rsw_srq_copy(srq, new, head, *copied);
	return ret;
}

/*
 * Then srq->lock keeps every QP's take out until the switch is done,
 * which copies only what a kernel SRQ's posters added since the
 * preparation: the process posts nothing during the command (it holds
 * its post lock), and one whose tail moved is refused.
 */
int rsw_srq_switch_ring(struct rsw_srq *srq, struct rsw_srq *new, u32 copied)
{
	unsigned long flags;
	int ret = -EINVAL;

	lockdep_assert_held(&srq->modify_mutex);
	spin_lock_irqsave(&srq->lock, flags);
	if (srq->user && (!rsw_srq_user_tail(srq) || srq->tail != copied))
		goto out;
	if (srq->tail - srq->head > new->size)
		goto out;
	rsw_srq_copy(srq, new, copied, srq->tail);
	if (new->uctrl) {
		WRITE_ONCE(new->uctrl->head, srq->head);
		WRITE_ONCE(new->uctrl->tail, srq->tail);
	}
	swap(srq->buf, new->buf);
	swap(srq->buf_len, new->buf_len);
	swap(srq->uctrl, new->uctrl);
	swap(srq->umap, new->umap);
	swap(srq->ring, new->ring);
	swap(srq->size, new->size);
	swap(srq->mask, new->mask);
	ret = 0;
out:
	spin_unlock_irqrestore(&srq->lock, flags);
	return ret;
}

/* ------------------------------------------------ retire, flush, reset */

/*
 * Report @s on the queue's CQ.  wq->lock held, QP not dead.  False if the
 * CQ was full: the entry is lost (cq.c raised IB_EVENT_CQ_ERR) and the QP
 * must go to ERROR once the caller has dropped wq->lock.
 */
static bool rsw_wq_push(struct rsw_qp *qp, struct rsw_wq *wq,
			const struct rsw_wq_slot *s)
{
	struct rdmap_sw_cqe cqe = {
		.wr_id = s->wr_id,
		.byte_len = s->byte_len,
		.qp_num = qp->base.qp_num,
		.ex_data = s->ex_data,
		.vendor_err = s->vendor_err,
		.opcode = s->opcode,
		.status = s->status,
		.flags = s->cqe_flags,
	};

	if (!rsw_cq_push(wq->cq, &cqe, &qp->base, s->solicited))
		return true;
	wq->cq_overruns++;
	return false;
}

/*
 * Retire finished work requests from the head, in posting order: a
 * completion is reported for every failed one and every signaled one.
 * False if a completion was lost to a full CQ (see rsw_wq_push).
 */
static bool rsw_wq_retire(struct rsw_qp *qp, struct rsw_wq *wq)
{
	struct rsw_wq_slot *s;
	bool ok = true;

	lockdep_assert_held(&wq->lock);
	if (wq->uctrl)
		rsw_wq_user_retire(wq);
	while (wq->head != wq->next) {
		s = rsw_wq_slot(wq, wq->head);
		if (!s->done)
			break;
		if (!qp->dead &&
		    (s->signaled || s->status != RDMAP_SW_WC_SUCCESS))
			ok &= rsw_wq_push(qp, wq, s);
		wq->head++;
	}
	return ok;
}

/*
 * The shadow of user entry @n, flushed without ever being taken (nor
 * validated): what its completion needs, read from the ring.
 */
static void rsw_wq_user_flushed(struct rsw_qp *qp, struct rsw_wq *wq, u32 n,
				struct rsw_wq_slot *s)
{
	const void *e = rsw_wq_entry(wq, n);

	memset(s, 0, sizeof(*s));
	if (wq == &qp->sq) {
		const struct rdmap_sw_sqe *sqe = e;
		u8 op = READ_ONCE(sqe->opcode);

		s->wr_id = READ_ONCE(sqe->wr_id);
		s->opcode = op < ARRAY_SIZE(rsw_sq_ops) ?
			    rsw_sq_ops[op].wc : RDMAP_SW_WC_SEND;
	} else {
		s->wr_id = READ_ONCE(((const struct rdmap_sw_rqe *)e)->wr_id);
		s->opcode = RDMAP_SW_WC_RECV;
	}
}

/*
 * Complete every posted, not yet taken work request with FLUSH_ERR.  Taken
 * ones stay with their engine, which completes them (flushed too, if the
 * stream is gone); retiring stops at the first of them, so order holds.
 */
void rsw_wq_flush(struct rsw_qp *qp, struct rsw_wq *wq)
{
	struct rsw_wq_slot *s;

	lockdep_assert_held(&wq->lock);
	/* User queue: all the process posted (bad tail: up to the last good). */
	if (wq->uctrl)
		rsw_wq_user_tail(wq);
	for (; wq->next != wq->tail; wq->next++) {
		s = rsw_wq_slot(wq, wq->next);
		if (wq->uctrl)
			rsw_wq_user_flushed(qp, wq, wq->next, s);
		s->status = RDMAP_SW_WC_WR_FLUSH_ERR;
		s->byte_len = 0;
		s->ex_data = 0;
		s->vendor_err = qp->term_vendor_err;
		s->cqe_flags = 0;
		s->solicited = false;
		s->done = true;
	}
	rsw_wq_retire(qp, wq);
}

/* Forget every entry: only when nothing is taken (head == next). */
void rsw_wq_reset(struct rsw_wq *wq)
{
	lockdep_assert_held(&wq->lock);
	if (wq->uctrl) {
		/*
		 * The process's indices run on: whatever it posted since
		 * the last flush is dropped, and all slots are free.
		 */
		rsw_wq_user_tail(wq);
		wq->head = wq->tail;
		wq->next = wq->tail;
		wq->keep_busy = false;
		wq->close_bad = false;
		rsw_wq_user_busy(wq, 0);
		rsw_wq_user_head(wq);
		return;
	}
	wq->head = 0;
	wq->next = 0;
	wq->tail = 0;
}

/*
 * A QP with an SRQ in ERROR will take no more receives from it; once the
 * ones it took are retired (flushed by the stream, or finished), raise
 * IB_EVENT_QP_LAST_WQE_REACHED, once per entry into ERROR.  ib_drain_qp()
 * waits for it and then polls the flushed receives.  No QP lock held: the
 * handler runs without any (any context).
 */
void rsw_qp_last_wqe(struct rsw_qp *qp)
{
	struct ib_qp *ibqp = &qp->base;
	struct ib_event ev = {
		.device = ibqp->device,
		.element.qp = ibqp,
		.event = IB_EVENT_QP_LAST_WQE_REACHED,
	};
	unsigned long flags;
	bool due = false;

	if (!qp->srq)
		return;
	spin_lock_irqsave(&qp->rq.lock, flags);
	if (qp->last_wqe_due && !qp->dead && qp->state == RSW_QPS_ERROR &&
	    qp->rq.head == qp->rq.next) {
		qp->last_wqe_due = false;
		due = true;
	}
	spin_unlock_irqrestore(&qp->rq.lock, flags);
	if (due && ibqp->event_handler)
		ibqp->event_handler(&ev, ibqp->qp_context);
}

/* ---------------------------------------- entries: posting, validation */

/*
 * Copy the SGE list and add up its length.  An lkey is only checked for a
 * plausible STag here (index 0 never exists): whether it names a valid MR
 * with the right access is decided when the request is processed, because
 * a REG_MR earlier in the same queue may be what makes it valid.
 */
int rsw_wqe_sges(struct rdmap_sw_sge *dst, const struct ib_sge *src,
		 int num_sge, u32 max_sge, u32 *length)
{
	u64 total = 0;
	int i;

	if (num_sge < 0 || num_sge > max_sge)
		return -EINVAL;
	for (i = 0; i < num_sge; i++) {
		if (src[i].length && !rsw_stag_index(src[i].lkey))
			return -EINVAL;
		dst[i].addr = src[i].addr;
		dst[i].length = src[i].length;
		dst[i].lkey = src[i].lkey;
		total += src[i].length;
	}
	if (total > RSW_MAX_MSG_SIZE)
		return -EINVAL;
	*length = total;
	return 0;
}

/*
 * User entries are validated on the kernel's copy, never in the ring: the
 * process may rewrite the ring at any time.  The rules, each failure
 * completing the entry with the status named and moving the QP to ERROR:
 *  SQE  opcode in rsw_sq_ops[], not a hole in it, and not REG_MR (which
 *       names a kernel object; BIND_MW and LOCAL_INV name STags, looked
 *       up and checked when executed)                     LOC_QP_OP_ERR
 *       flags only SIGNALED, SOLICITED, FENCE, INLINE      LOC_QP_OP_ERR
 *       INLINE: an opcode that may carry inline data, num_sge 0
 *                                                          LOC_QP_OP_ERR
 *               length <= the QP's max_inline              LOC_LEN_ERR
 *       else: num_sge <= the SQ's max_sge (1 for Reads, 0 for local
 *             operations)                                  LOC_QP_OP_ERR
 *             atomics: num_sge 1                           LOC_QP_OP_ERR
 *                      length 8                            LOC_LEN_ERR
 *             length == the sum of the SGE lengths, which is at most
 *             RSW_MAX_MSG_SIZE                             LOC_LEN_ERR
 *  RQE  num_sge <= the RQ's max_sge                        LOC_QP_OP_ERR
 *       length == the sum of the SGE lengths, at most
 *       RSW_MAX_MSG_SIZE                                   LOC_LEN_ERR
 * lkeys, STags and addresses are checked where they are used (the TX and
 * RX engines' MR checks), as for kernel QPs.
 */
#define RSW_SQE_USER_FLAGS (RDMAP_SW_SQE_SIGNALED | RDMAP_SW_SQE_SOLICITED | \
			    RDMAP_SW_SQE_FENCE | RDMAP_SW_SQE_INLINE)

static u8 rsw_sges_check_user(const struct rdmap_sw_sge *sge, u32 num_sge,
			      u32 max_sge, u32 length)
{
	u64 total = 0;
	u32 i;

	if (num_sge > max_sge)
		return RDMAP_SW_WC_LOC_QP_OP_ERR;
	for (i = 0; i < num_sge; i++)
		total += sge[i].length;
	if (total > RSW_MAX_MSG_SIZE || total != length)
		return RDMAP_SW_WC_LOC_LEN_ERR;
	return RDMAP_SW_WC_SUCCESS;
}

static u8 rsw_sqe_check_user(const struct rsw_qp *qp,
			     const struct rdmap_sw_sqe *sqe)
{
	const struct rsw_sq_op *info;
	u32 max = qp->sq.max_sge;

	if (sqe->opcode >= ARRAY_SIZE(rsw_sq_ops))
		return RDMAP_SW_WC_LOC_QP_OP_ERR;
	info = &rsw_sq_ops[sqe->opcode];
	if (!info->flags || sqe->opcode == RDMAP_SW_WR_REG_MR ||
	    sqe->flags & ~RSW_SQE_USER_FLAGS)
		return RDMAP_SW_WC_LOC_QP_OP_ERR;
	if (sqe->flags & RDMAP_SW_SQE_INLINE) {
		if (!(info->flags & RSW_WR_INLINE) || sqe->num_sge)
			return RDMAP_SW_WC_LOC_QP_OP_ERR;
		if (sqe->length > qp->max_inline)
			return RDMAP_SW_WC_LOC_LEN_ERR;
		return RDMAP_SW_WC_SUCCESS;
	}
	if (info->flags & RSW_WR_READ)
		max = min_t(u32, max, RSW_MAX_SGE_RD);
	if (info->flags & RSW_WR_ATOMIC) {
		if (sqe->num_sge != 1)
			return RDMAP_SW_WC_LOC_QP_OP_ERR;
		if (sqe->length != sizeof(u64))
			return RDMAP_SW_WC_LOC_LEN_ERR;
	}
	if (info->flags & RSW_WR_LOCAL)
		max = 0;
	return rsw_sges_check_user(sqe->sge, sqe->num_sge, max, sqe->length);
}

/*
 * Fill shadow @s from the copy of a user entry (no post_send did) and
 * validate the copy: the completion status it gets if it is refused.
 */
static u8 rsw_wq_user_shadow(struct rsw_qp *qp, struct rsw_wq *wq,
			     const void *copy, struct rsw_wq_slot *s)
{
	const struct rdmap_sw_sqe *sqe = copy;
	const struct rdmap_sw_rqe *rqe = copy;

	memset(s, 0, sizeof(*s));
	if (wq == &qp->rq) {
		s->wr_id = rqe->wr_id;
		s->opcode = RDMAP_SW_WC_RECV;
		s->signaled = true;
		return rsw_sges_check_user(rqe->sge, rqe->num_sge,
					   wq->max_sge, rqe->length);
	}
	s->wr_id = sqe->wr_id;
	s->opcode = sqe->opcode < ARRAY_SIZE(rsw_sq_ops) ?
		    rsw_sq_ops[sqe->opcode].wc : RDMAP_SW_WC_SEND;
	s->signaled = qp->sig_all || (sqe->flags & RDMAP_SW_SQE_SIGNALED);
	return rsw_sqe_check_user(qp, sqe);
}

/* -------------------------------------------------------- take, finish */

enum rsw_wq_take {
	RSW_TAKE_NONE,		/* nothing posted */
	RSW_TAKE_OK,		/* *copy and *idx are the caller's */
	RSW_TAKE_BAD,		/* bad tail or entry: the QP must go to ERROR */
};

/*
 * Entry wq->next is copied and its shadow filled; validating the copy
 * gave @status.  Hand it to the taker as *@idx, or, refused, finish it at
 * once with @status (it retires in its turn).  wq->lock held.
 */
static enum rsw_wq_take rsw_wq_taken(struct rsw_qp *qp, struct rsw_wq *wq,
				     u8 status, u32 *idx)
{
	struct rsw_wq_slot *s = rsw_wq_slot(wq, wq->next);

	if (status == RDMAP_SW_WC_SUCCESS) {
		*idx = wq->next++;
		return RSW_TAKE_OK;
	}
	wq->next++;
	s->status = status;
	s->done = true;
	rsw_wq_retire(qp, wq);
	return RSW_TAKE_BAD;
}

/*
 * rsw_wq_take() on a user queue.  The SQ's busy flag follows the doorbell
 * protocol of the ABI: 1 whenever an entry is taken; when the queue looks
 * empty, 0, a full barrier, and one more look at the tail, which catches
 * an entry whose producer saw busy still at 1 and did not ring.  While the
 * stream lingers (keep_busy) the flag stays 1 at empty, and
 * rsw_qp_sq_linger_off() does the same later.  wq->lock held.
 */
static enum rsw_wq_take rsw_wq_take_user(struct rsw_qp *qp, struct rsw_wq *wq,
					 void *copy, u32 *idx)
{
	bool sq = wq == &qp->sq;
	u8 status;

	if (wq->next == wq->tail) {
		/*
		 * Closing: only what was accepted (rsw_qp_sq_close()); a bad
		 * tail then fails the take after the last good entry, as it
		 * would have had the take read it.
		 */
		if (sq && (qp->state == RSW_QPS_CLOSING ||
			   qp->state == RSW_QPS_TERMINATE))
			return wq->close_bad ? RSW_TAKE_BAD : RSW_TAKE_NONE;
		if (!rsw_wq_user_tail(wq))
			return RSW_TAKE_BAD;
		if (wq->next == wq->tail && sq && !wq->keep_busy) {
			rsw_wq_user_busy(wq, 0);
			smp_mb();	/* busy before tail; pairs with the process */
			if (!rsw_wq_user_tail(wq))
				return RSW_TAKE_BAD;
		}
		if (wq->next == wq->tail)
			return RSW_TAKE_NONE;
	}
	if (sq)
		rsw_wq_user_busy(wq, 1);
	memcpy(copy, rsw_wq_entry(wq, wq->next), wq->wqe_size);
	status = rsw_wq_user_shadow(qp, wq, copy, rsw_wq_slot(wq, wq->next));
	return rsw_wq_taken(qp, wq, status, idx);
}

/* What rsw_srq_take() did. */
enum rsw_srq_take {
	RSW_SRQ_NONE,		/* nothing posted */
	RSW_SRQ_OK,		/* *copy holds the entry, its slot is free */
	RSW_SRQ_BAD_TAIL,	/* the process's tail is out of bounds */
};

/*
 * Copy the next posted entry of @srq into *@copy (not validated: the
 * taker does that) and free its slot.  *@limit is set when this take left
 * fewer entries than the armed limit (now disarmed): the caller raises
 * the event with rsw_srq_limit_event() once it holds no lock.  Takes
 * srq->lock (the taker holds its rq.lock).
 */
static enum rsw_srq_take rsw_srq_take(struct rsw_srq *srq,
				      struct rdmap_sw_rqe *copy, bool *limit)
{
	enum rsw_srq_take t = RSW_SRQ_NONE;
	unsigned long flags;

	spin_lock_irqsave(&srq->lock, flags);
	if (srq->uctrl && !rsw_srq_user_tail(srq)) {
		t = RSW_SRQ_BAD_TAIL;
		goto out;
	}
	if (srq->head == srq->tail)
		goto out;
	memcpy(copy, rsw_srq_slot(srq, srq->head), sizeof(*copy));
	srq->head++;
	if (srq->uctrl) {
		/* Copied: pairs with the process's acquire of head. */
		smp_store_release(&srq->uctrl->head, srq->head);
	}
	if (srq->limit && srq->tail - srq->head < srq->limit) {
		WRITE_ONCE(srq->limit, 0);	/* rsw_query_srq() reads it */
		*limit = true;
	}
	t = RSW_SRQ_OK;
out:
	spin_unlock_irqrestore(&srq->lock, flags);
	return t;
}

/* IB_EVENT_SRQ_LIMIT_REACHED to the SRQ's handler.  No lock held. */
static void rsw_srq_limit_event(struct rsw_srq *srq)
{
	struct ib_srq *ibsrq = &srq->base;
	struct ib_event ev = {
		.device = ibsrq->device,
		.element.srq = ibsrq,
		.event = IB_EVENT_SRQ_LIMIT_REACHED,
	};

	if (ibsrq->event_handler)
		ibsrq->event_handler(&ev, ibsrq->srq_context);
}

/*
 * rsw_wq_take() on the receive queue of a QP with an SRQ: copy the SRQ's
 * next entry into the private ring (so it retires and flushes like any
 * receive) and validate the copy as a user entry, kernel SRQ or not (the
 * private ring has the SRQ's max_sge).  A bad entry completes here, on
 * this QP's recv CQ, and fails this QP only.  rq.tail and rq.next move
 * together.  rq.lock held.
 */
static enum rsw_wq_take rsw_wq_take_srq(struct rsw_qp *qp, struct rsw_wq *rq,
					struct rdmap_sw_rqe *rqe, u32 *idx,
					bool *limit)
{
	u8 status;

	lockdep_assert_held(&rq->lock);
	if (rsw_wq_full(rq))
		return RSW_TAKE_NONE;
	switch (rsw_srq_take(qp->srq, rqe, limit)) {
	case RSW_SRQ_NONE:
		return RSW_TAKE_NONE;
	case RSW_SRQ_BAD_TAIL:
		return RSW_TAKE_BAD;
	case RSW_SRQ_OK:
		break;
	}
	memcpy(rsw_wq_entry(rq, rq->tail), rqe, sizeof(*rqe));
	status = rsw_wq_user_shadow(qp, rq, rqe, rsw_wq_slot(rq, rq->tail));
	rq->tail++;
	return rsw_wq_taken(qp, rq, status, idx);
}

/* Copy the next posted entry out and hand it to the caller as *@idx. */
static bool rsw_wq_take(struct rsw_qp *qp, struct rsw_wq *wq, void *copy,
			u32 *idx)
{
	enum rsw_wq_take t = RSW_TAKE_NONE;
	unsigned long flags;
	bool limit = false;

	spin_lock_irqsave(&wq->lock, flags);
	if (qp->dead || qp->state == RSW_QPS_ERROR) {
		t = RSW_TAKE_NONE;
	} else if (qp->srq && wq == &qp->rq) {
		t = rsw_wq_take_srq(qp, wq, copy, idx, &limit);
	} else if (wq->uctrl) {
		t = rsw_wq_take_user(qp, wq, copy, idx);
	} else if (wq->next != wq->tail) {
		memcpy(copy, rsw_wq_entry(wq, wq->next), wq->wqe_size);
		*idx = wq->next++;
		t = RSW_TAKE_OK;
	}
	spin_unlock_irqrestore(&wq->lock, flags);
	if (limit)
		rsw_srq_limit_event(qp->srq);
	/* Only this QP: its own entries flush, nothing else is touched. */
	if (t == RSW_TAKE_BAD)
		rsw_qp_set_error(qp);
	return t == RSW_TAKE_OK;
}

void rsw_qp_term_cause(struct rsw_qp *qp, u32 vendor_err)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->lock, flags);
	spin_lock(&qp->sq.lock);
	spin_lock(&qp->rq.lock);
	if (qp->state != RSW_QPS_ERROR && !qp->term_vendor_err)
		qp->term_vendor_err = vendor_err;
	spin_unlock(&qp->rq.lock);
	spin_unlock(&qp->sq.lock);
	spin_unlock_irqrestore(&qp->lock, flags);
}

/*
 * Record the outcome @res of taken entry @idx and retire what is ready.  A
 * failure, or a completion lost to a full CQ, moves the QP to ERROR,
 * flushing everything not yet taken.  (Flushes themselves only happen in
 * ERROR, so a CQ overrun there needs nothing more.)
 */
static void rsw_wq_finish(struct rsw_qp *qp, struct rsw_wq *wq, u32 idx,
			  const struct rsw_rq_result *res)
{
	struct rsw_wq_slot *s;
	unsigned long flags;
	bool reported;

	spin_lock_irqsave(&wq->lock, flags);
	if (WARN_ON_ONCE(idx - wq->head >= wq->next - wq->head)) {
		spin_unlock_irqrestore(&wq->lock, flags);
		return;
	}
	s = rsw_wq_slot(wq, idx);
	s->status = res->status;
	if (res->opcode)
		s->opcode = res->opcode;
	s->byte_len = res->byte_len;
	s->ex_data = res->ex_data;
	s->vendor_err = res->vendor_err;
	/* A taken entry flushed by the stream's end: its Terminate. */
	if (res->status == RDMAP_SW_WC_WR_FLUSH_ERR && !res->vendor_err)
		s->vendor_err = qp->term_vendor_err;
	s->cqe_flags = res->cqe_flags;
	s->solicited = res->solicited;
	s->done = true;
	reported = rsw_wq_retire(qp, wq);
	spin_unlock_irqrestore(&wq->lock, flags);
	if (res->status != RDMAP_SW_WC_SUCCESS || !reported)
		rsw_qp_set_error(qp);	/* and LAST_WQE_REACHED, if due */
	else if (wq == &qp->rq)
		rsw_qp_last_wqe(qp);
}

/* ------------------------------------------------- engine entry points */

void rsw_qp_sq_complete(struct rsw_qp *qp, u32 idx, u8 status, u32 byte_len)
{
	struct rsw_rq_result res = { .status = status, .byte_len = byte_len };

	rsw_wq_finish(qp, &qp->sq, idx, &res);
}
EXPORT_SYMBOL_IF_KUNIT(rsw_qp_sq_complete);

enum rsw_sq_take rsw_qp_sq_take(struct rsw_qp *qp, struct rdmap_sw_sqe *sqe,
				u32 *idx)
{
	if (!rsw_wq_take(qp, &qp->sq, sqe, idx))
		return RSW_SQ_EMPTY;
	if (sqe->opcode >= ARRAY_SIZE(rsw_sq_ops) ||
	    !(rsw_sq_ops[sqe->opcode].flags & RSW_WR_LOCAL))
		return RSW_SQ_WIRE;
	/* Fenced: it waits, as a wire WQE would, for the caller's Reads. */
	if (sqe->flags & RDMAP_SW_SQE_FENCE)
		return RSW_SQ_FENCED_LOCAL;
	rsw_qp_sq_local(qp, sqe, *idx);
	return RSW_SQ_LOCAL;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_qp_sq_take);

void rsw_qp_sq_local(struct rsw_qp *qp, const struct rdmap_sw_sqe *sqe,
		     u32 idx)
{
	/*
	 * A fenced one runs later than it was taken: if the QP went to
	 * ERROR meanwhile, it is flushed, not run (a bind would outlive it).
	 */
	if (READ_ONCE(qp->dead) || READ_ONCE(qp->state) == RSW_QPS_ERROR) {
		rsw_qp_sq_complete(qp, idx, RDMAP_SW_WC_WR_FLUSH_ERR, 0);
		return;
	}
	rsw_qp_sq_complete(qp, idx, rsw_sq_exec_local(qp, sqe), 0);
}
EXPORT_SYMBOL_IF_KUNIT(rsw_qp_sq_local);

u32 rsw_qp_sq_pending(struct rsw_qp *qp)
{
	struct rsw_wq *sq = &qp->sq;
	u32 tail;

	/*
	 * Unlocked, against writers under sq.lock (and the process): a hint,
	 * whose every use survives a stale or torn answer.
	 */
	tail = sq->uctrl ? READ_ONCE(sq->uctrl->tail) :
			   data_race(sq->tail);	/* a hint, see above */
	return tail - data_race(sq->next);	/* a hint, see above */
}
EXPORT_SYMBOL_IF_KUNIT(rsw_qp_sq_pending);

void rsw_qp_sq_close(struct rsw_qp *qp)
{
	struct rsw_wq *sq = &qp->sq;

	lockdep_assert_held(&sq->lock);
	/*
	 * A bad tail keeps the last good one (the flush takes the same) and
	 * is remembered: once the good entries are taken, the take fails
	 * and the QP goes to ERROR, the stream's end abortive.
	 */
	if (sq->uctrl && qp->state == RSW_QPS_RTS)
		sq->close_bad = !rsw_wq_user_tail(sq);
}

bool rsw_qp_sq_taken_all(struct rsw_qp *qp)
{
	struct rsw_wq *sq = &qp->sq;
	unsigned long flags;
	bool all;

	spin_lock_irqsave(&sq->lock, flags);
	all = sq->next == sq->tail;
	spin_unlock_irqrestore(&sq->lock, flags);
	return all;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_qp_sq_taken_all);

bool rsw_qp_sq_linger_on(struct rsw_qp *qp)
{
	struct rsw_wq *sq = &qp->sq;
	unsigned long flags;
	bool on;

	if (!sq->uctrl)
		return false;
	spin_lock_irqsave(&sq->lock, flags);
	on = qp->state == RSW_QPS_RTS && !qp->dead;
	sq->keep_busy = on;
	spin_unlock_irqrestore(&sq->lock, flags);
	return on;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_qp_sq_linger_on);

bool rsw_qp_sq_linger_off(struct rsw_qp *qp)
{
	struct rsw_wq *sq = &qp->sq;
	unsigned long flags;
	bool more = false;

	spin_lock_irqsave(&sq->lock, flags);
	if (!sq->keep_busy)
		goto out;
	sq->keep_busy = false;
	/*
	 * Out of RTS nothing is taken any more: ERROR set the flag to 0
	 * (rsw_qp_enter_error()); in CLOSING or TERMINATE what is posted is
	 * flushed when the stream's end moves the QP to ERROR.
	 */
	if (qp->state != RSW_QPS_RTS || qp->dead)
		goto out;
	/*
	 * As rsw_wq_take_user() at empty: entries posted and not taken keep
	 * the flag at 1 (TX's take drops it at empty; a bad tail is that
	 * take's to refuse).
	 */
	if (!rsw_wq_user_tail(sq) || sq->next != sq->tail) {
		more = true;
		goto out;
	}
	rsw_wq_user_busy(sq, 0);
	smp_mb();	/* busy before tail; pairs with the process */
	more = READ_ONCE(sq->uctrl->tail) != sq->next;
out:
	spin_unlock_irqrestore(&sq->lock, flags);
	return more;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_qp_sq_linger_off);

bool rsw_qp_rq_take(struct rsw_qp *qp, struct rdmap_sw_rqe *rqe, u32 *idx)
{
	return rsw_wq_take(qp, &qp->rq, rqe, idx);
}
EXPORT_SYMBOL_IF_KUNIT(rsw_qp_rq_take);

void rsw_qp_rq_complete(struct rsw_qp *qp, u32 idx,
			const struct rsw_rq_result *r)
{
	rsw_wq_finish(qp, &qp->rq, idx, r);
}
EXPORT_SYMBOL_IF_KUNIT(rsw_qp_rq_complete);
