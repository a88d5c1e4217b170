// SPDX-License-Identifier: GPL-2.0
/*
 * Completion queues: the ring of include/uapi/rdma/rdmap_sw-abi.h, filled
 * by the QP code through rsw_cq_push() and drained by poll_cq (kernel
 * CQs) or by the process the ring is mapped into (user CQs).
 *
 * User CQs.  create_cq with udata maps the whole buffer (umap.c) and
 * answers struct rdmap_sw_uresp_create_cq.  The producer side is the same
 * for both kinds; from the ring it reads only ctrl.cons (for "full") and
 * ctrl.notify, and whatever the process writes there can at worst drop
 * entries (overrun: one IB_EVENT_CQ_ERR per CQ) or cost an event.  The process arms by raising
 * ctrl.notify itself, without a system call; req_notify_cq (uverbs'
 * command) does the same and nothing in the kernel relies on it being
 * called.  A satisfied arm has the CQ's comp_handler called (uverbs' for
 * a user CQ: the process's completion channel), as described next.
 * poll_cq refuses user CQs, and rsw_cq_discard_qp() leaves them alone: the
 * process names QPs by qp_num.
 *
 * Notification context.  A producer never calls a ULP callback from
 * rsw_cq_push(): when an entry satisfies the arm word (or the ring
 * overran) it sets a bit in rsw_cq.events and either keeps the CQ in this
 * CPU's open batch, or queues the CQ's notify_work.
 *  - The batch: a softirq producer, the stream's RX in data-ready, opens
 *    one for its QP's two CQs and calls their handlers itself once the
 *    parser returned: on the producer's stack, in softirq like a hardware
 *    driver's tasklet, holding no CQ or QP lock (the socket's spinlock
 *    only; a handler may poll and post, which for a kernel QP only queues
 *    work).  A softirq the handler raises (irq_poll of IB_POLL_SOFTIRQ
 *    CQs) runs in the same softirq pass, unless the kernel defers it to
 *    ksoftirqd.  data-ready called outside a softirq (threaded NAPI, busy
 *    polling, the backlog in release_sock()) opens no batch.
 *  - notify_work, on rsw_cq_wq, a per-CPU, high-priority workqueue with a
 *    rescuer (WQ_MEM_RECLAIM: NVMe-oF and NFS over RDMA complete I/O that
 *    memory reclaim waits for), for everything else: post_send, modify_qp,
 *    flushes and the stream's work never run a handler in their own
 *    call.  The work runs in a kworker on the producer's CPU, where the
 *    entry is cache-hot, holding none of the producer's locks, with
 *    bottom halves disabled: atomic like the interrupt or tasklet context
 *    hardware drivers call handlers from, and a softirq they raise runs
 *    right there at local_bh_enable() instead of waking ksoftirqd.
 * One deliverer at a time per CQ (rsw_cq.delivering), as core_locking.rst
 * requires: a batch on one CPU and the work on another never run a CQ's
 * handlers at once; the one that finds the CQ busy leaves its event bits
 * to the other, which looks again when done.  Events delivered together
 * coalesce.  comp_vector is validated but steers nothing.
 *
 * Solicited-only arming fires for an entry of a message with the Solicited
 * Event bit and for every failed entry, as IBTA and libibverbs define a
 * solicited completion.
 *
 * Resize (resize_cq, kernel and user CQs; resize_mutex serialises them).
 * The indices carry on across the resize, so neither side renumbers
 * anything: a new ring is allocated (a user CQ's charged to the process
 * and published through umap.c, its offset answered before the switch);
 * outside the locks its empty slots are prepared for the consumer index
 * of the moment and the entries published so far are copied, in a few
 * rounds.  Then, under cons_lock and prod_lock, the entries produced
 * since the last round are copied, a kernel CQ's pending entries' QPs,
 * the arm word and flags, and the ring pointers switched.  Producers
 * wait on prod_lock meanwhile, so an entry goes either into the old ring
 * before the copy or into the new one.  Too many pending entries, a user
 * cons out of range, or one that moved a ring or more since the
 * preparation (the process may not consume during the command) refuse
 * the resize with -EINVAL before anything changed.  The work done with
 * interrupts off is thus bounded by the producers' pace during the last
 * round (and a kernel CQ's own pending entries), never by what the
 * process writes into the ring.  The replaced ring is freed afterwards, a
 * user CQ's by removing its mapping entry: the process may still have it
 * mapped, and umap.c frees nothing under a mapping.  The ABI header has
 * the process's half.
 *
 * Teardown (pre_destroy_cq, then post_destroy_cq; destroy_cq does both):
 * mark the CQ dead under prod_lock, so no producer queues notify_work any
 * more, then cancel_work_sync() it, which drops a pending notification and
 * waits for a running one; only then is the ring freed.  ib_free_cq() calls
 * pre_destroy_cq before it stops its own poller, so a notification in flight
 * cannot requeue ib_core's poll work behind its back.  A batch holds a CQ
 * only within one data-ready call of a QP that uses it, and ib_core does
 * not destroy a CQ a QP uses.
 */
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <rdma/uverbs_ioctl.h>

#include "cq.h"
#include "internal.h"

/* The ring layout the user ABI promises. */
static_assert(sizeof(struct rdmap_sw_cqe) == 32);
static_assert(sizeof(struct rdmap_sw_cq_ctrl) == 128);
static_assert(offsetof(struct rdmap_sw_cq_ctrl, cons) == 64);

/*
 * Resize: rounds of copying outside the locks, and how many entries
 * produced meanwhile may be left for the copy with interrupts off.
 */
#define RSW_CQ_COPY_ROUNDS 4
#define RSW_CQ_LOCKED_COPY 1024
#define RSW_CQ_LOCKED_MAX (4 * RSW_CQ_LOCKED_COPY)

static struct workqueue_struct *rsw_cq_wq;
/* The batch of this CPU's softirq producer, if one is open. */
static DEFINE_PER_CPU(struct rsw_cq_batch *, rsw_cq_batch);

/* enum rdmap_sw_cqe_opcode -> enum ib_wc_opcode */
static const enum ib_wc_opcode rsw_wc_opcode[] = {
	[RDMAP_SW_WC_SEND] = IB_WC_SEND,
	[RDMAP_SW_WC_RDMA_WRITE] = IB_WC_RDMA_WRITE,
	[RDMAP_SW_WC_RDMA_READ] = IB_WC_RDMA_READ,
	[RDMAP_SW_WC_COMP_SWAP] = IB_WC_COMP_SWAP,
	[RDMAP_SW_WC_FETCH_ADD] = IB_WC_FETCH_ADD,
	[RDMAP_SW_WC_MASKED_COMP_SWAP] = IB_WC_MASKED_COMP_SWAP,
	[RDMAP_SW_WC_MASKED_FETCH_ADD] = IB_WC_MASKED_FETCH_ADD,
	[RDMAP_SW_WC_LOCAL_INV] = IB_WC_LOCAL_INV,
	[RDMAP_SW_WC_REG_MR] = IB_WC_REG_MR,
	[RDMAP_SW_WC_BIND_MW] = IB_WC_BIND_MW,
	[RDMAP_SW_WC_RECV] = IB_WC_RECV,
	[RDMAP_SW_WC_RECV_RDMA_WITH_IMM] = IB_WC_RECV_RDMA_WITH_IMM,
};

/* enum rdmap_sw_cqe_status -> enum ib_wc_status */
static const enum ib_wc_status rsw_wc_status[] = {
	[RDMAP_SW_WC_SUCCESS] = IB_WC_SUCCESS,
	[RDMAP_SW_WC_LOC_LEN_ERR] = IB_WC_LOC_LEN_ERR,
	[RDMAP_SW_WC_LOC_QP_OP_ERR] = IB_WC_LOC_QP_OP_ERR,
	[RDMAP_SW_WC_LOC_PROT_ERR] = IB_WC_LOC_PROT_ERR,
	[RDMAP_SW_WC_WR_FLUSH_ERR] = IB_WC_WR_FLUSH_ERR,
	[RDMAP_SW_WC_MW_BIND_ERR] = IB_WC_MW_BIND_ERR,
	[RDMAP_SW_WC_BAD_RESP_ERR] = IB_WC_BAD_RESP_ERR,
	[RDMAP_SW_WC_LOC_ACCESS_ERR] = IB_WC_LOC_ACCESS_ERR,
	[RDMAP_SW_WC_REM_INV_REQ_ERR] = IB_WC_REM_INV_REQ_ERR,
	[RDMAP_SW_WC_REM_ACCESS_ERR] = IB_WC_REM_ACCESS_ERR,
	[RDMAP_SW_WC_REM_OP_ERR] = IB_WC_REM_OP_ERR,
	[RDMAP_SW_WC_RESP_TIMEOUT_ERR] = IB_WC_RESP_TIMEOUT_ERR,
	[RDMAP_SW_WC_REM_ABORT_ERR] = IB_WC_REM_ABORT_ERR,
	[RDMAP_SW_WC_FATAL_ERR] = IB_WC_FATAL_ERR,
	[RDMAP_SW_WC_GENERAL_ERR] = IB_WC_GENERAL_ERR,
};

#define RSW_CQE_EX_FLAGS (RDMAP_SW_CQE_WITH_IMM | RDMAP_SW_CQE_WITH_INV)

/*
 * Empty the ring and start its indices at @start: slot of index n holds
 * seq == n - size until entry n is written.  The CQ must be idle (no
 * producer, consumer or notification): creation, or a KUnit case on its
 * own CQ.
 */
VISIBLE_IF_KUNIT void rsw_cq_reset(struct rsw_cq *cq, u32 start)
{
	struct rdmap_sw_cq_ctrl *ctrl = cq->ctrl;
	unsigned long flags;
	u32 i;

	spin_lock_irqsave(&cq->cons_lock, flags);
	spin_lock(&cq->prod_lock);
	for (i = 0; i < cq->size; i++) {
		u32 n = start + i;

		WRITE_ONCE(cq->cqe[n & cq->mask].seq, n - cq->size);
		if (cq->qp)
			cq->qp[n & cq->mask] = NULL;
	}
	ctrl->size = cq->size;
	ctrl->mask = cq->mask;
	ctrl->flags = 0;
	cq->overruns = 0;	/* a reset CQ reports its next overrun */
	WRITE_ONCE(ctrl->notify, RDMAP_SW_CQ_NOTIFY_NONE);
	cq->prod = start;
	cq->cons = start;
	WRITE_ONCE(ctrl->cons, start);
	WRITE_ONCE(ctrl->prod, start);
	spin_unlock(&cq->prod_lock);
	spin_unlock_irqrestore(&cq->cons_lock, flags);
}
EXPORT_SYMBOL_IF_KUNIT(rsw_cq_reset);

/*
 * The ring is one zeroed, page-aligned vmalloc buffer so that it can be
 * mapped into a process as it is; a user CQ's is charged to the process
 * (umap.c).  Only a kernel CQ has a back-pointer array.
 */
static size_t rsw_cq_ring_len(u32 size)
{
	return PAGE_ALIGN(sizeof(struct rdmap_sw_cq_ctrl) +
			  (size_t)size * sizeof(struct rdmap_sw_cqe));
}

/*
 * A ring (struct rsw_cq_ring, cq.h) and its back-pointer array, as
 * create_cq and resize_cq allocate them; resize_cq builds one, switches it
 * in and is left holding the one it replaced.  A user CQ's buffer is owned
 * by umap once published.
 */
VISIBLE_IF_KUNIT int rsw_cq_ring_alloc(struct rsw_cq_ring *r, u32 size,
				       bool user)
{
	void *buf = rsw_umap_alloc(rsw_cq_ring_len(size), user);

	if (!buf)
		return -ENOMEM;
	r->qp = NULL;
	if (!user) {
		r->qp = kvcalloc(size, sizeof(*r->qp), GFP_KERNEL);
		if (!r->qp) {
			vfree(buf);
			return -ENOMEM;
		}
	}
	r->ctrl = buf;
	r->cqe = buf + sizeof(*r->ctrl);
	r->size = size;
	r->mask = size - 1;
	r->umap = NULL;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_cq_ring_alloc);

/* Free @r (a ring never switched in, or the one switched out). */
VISIBLE_IF_KUNIT void rsw_cq_ring_free(struct rsw_cq_ring *r)
{
	kvfree(r->qp);
	if (r->umap)
		rsw_umap_remove(r->umap);	/* frees the buffer when unused */
	else
		vfree(r->ctrl);
}
EXPORT_SYMBOL_IF_KUNIT(rsw_cq_ring_free);

/* Whether a batch may be open here: softirq, not a hard IRQ inside it. */
static bool rsw_cq_batch_context(void)
{
	return in_serving_softirq() && !in_hardirq() && !in_nmi();
}

/* Keep @cq in this CPU's open batch; false if none is open or not its CQ. */
static bool rsw_cq_batch_add(struct rsw_cq *cq)
{
	struct rsw_cq_batch *b;
	unsigned int i;

	if (!rsw_cq_batch_context())
		return false;
	b = __this_cpu_read(rsw_cq_batch);
	if (!b)
		return false;
	for (i = 0; i < ARRAY_SIZE(b->cq); i++) {
		if (b->cq[i] == cq) {
			b->due[i] = true;
			return true;
		}
	}
	return false;
}

/*
 * Producer side, prod_lock held: have @ev delivered, by this CPU's open
 * batch or by notify_work.
 */
static void rsw_cq_schedule(struct rsw_cq *cq, enum rsw_cq_event ev)
{
	lockdep_assert_held(&cq->prod_lock);
	if (cq->dead)
		return;
	set_bit(ev, &cq->events);
	if (!rsw_cq_batch_add(cq))
		queue_work(rsw_cq_wq, &cq->notify_work);
}

static void rsw_cq_report_overrun(struct ib_cq *ibcq)
{
	struct ib_event ev = {
		.device = ibcq->device,
		.element.cq = ibcq,
		.event = IB_EVENT_CQ_ERR,
	};

	ibcq->event_handler(&ev, ibcq->cq_context);
}

/*
 * Call the handlers for what is pending on @cq.  Bottom halves disabled.
 * One deliverer at a time per CQ (core_locking.rst): a second one, on
 * another CPU, leaves its event bits to the one delivering, which looks
 * again after it let go.
 */
static void rsw_cq_deliver(struct rsw_cq *cq)
{
	struct ib_cq *ibcq = &cq->base;
	unsigned long events;

	/* Fully ordered: our event bits before the test; pairs below. */
	while (!test_and_set_bit(0, &cq->delivering)) {
		events = xchg(&cq->events, 0);
		if ((events & BIT(RSW_CQ_EV_ERR)) && ibcq->event_handler)
			rsw_cq_report_overrun(ibcq);
		if ((events & BIT(RSW_CQ_EV_COMP)) && ibcq->comp_handler)
			ibcq->comp_handler(ibcq, ibcq->cq_context);
		clear_bit_unlock(0, &cq->delivering);
		smp_mb__after_atomic();	/* let go before looking again */
		/* A dying CQ starts no handler more (pre_destroy_cq). */
		if (!READ_ONCE(cq->events) || READ_ONCE(cq->dead))
			break;
	}
}

static void rsw_cq_notify_work(struct work_struct *work)
{
	local_bh_disable();
	rsw_cq_deliver(container_of(work, struct rsw_cq, notify_work));
	local_bh_enable();
}

void rsw_cq_batch_begin(struct rsw_cq_batch *b, struct ib_cq *scq,
			struct ib_cq *rcq)
{
	b->cq[0] = scq ? to_rsw_cq(scq) : NULL;
	b->cq[1] = rcq && rcq != scq ? to_rsw_cq(rcq) : NULL;
	b->due[0] = false;
	b->due[1] = false;
	b->open = rsw_cq_batch_context();
	if (!b->open)
		return;
	b->prev = __this_cpu_read(rsw_cq_batch);
	__this_cpu_write(rsw_cq_batch, b);
}

void rsw_cq_batch_end(struct rsw_cq_batch *b)
{
	unsigned int i;

	if (!b->open)
		return;
	__this_cpu_write(rsw_cq_batch, b->prev);
	for (i = 0; i < ARRAY_SIZE(b->cq); i++) {
		if (b->due[i])
			rsw_cq_deliver(b->cq[i]);
	}
}

static int rsw_cq_check_attr(struct ib_device *ibdev,
			     const struct ib_cq_init_attr *attr)
{
	if (attr->flags)
		return -EOPNOTSUPP;
	if (!attr->cqe || attr->cqe > RSW_MAX_CQE)
		return -EINVAL;
	if (attr->comp_vector >= ibdev->num_comp_vectors)
		return -EINVAL;
	return 0;
}

/*
 * A user CQ: publish the ring to the process and tell it where it is.  On
 * success the mapping owns the ring; on failure the caller still does.
 */
static int rsw_cq_map(struct rsw_cq *cq, struct ib_udata *udata,
		      struct ib_ucontext *uctx)
{
	struct rdmap_sw_uresp_create_cq resp = {
		.mmap_len = rsw_cq_ring_len(cq->size),
		.size = cq->size,
	};
	struct rsw_umap *um;
	int ret;

	um = rsw_umap_insert(uctx, cq->ctrl, resp.mmap_len, &resp.mmap_offset);
	if (IS_ERR(um))
		return PTR_ERR(um);
	/* An older provider may pass a shorter response buffer. */
	ret = ib_copy_to_udata(udata, &resp, min(udata->outlen, sizeof(resp)));
	if (ret) {
		/* The entry owns the ring now and frees it. */
		rsw_umap_remove(um);
		cq->ctrl = NULL;
		cq->cqe = NULL;
		return ret;
	}
	cq->umap = um;
	return 0;
}

/* ops.create_cq.  Process context, may sleep. */
static int rsw_create_cq(struct ib_cq *ibcq,
			 const struct ib_cq_init_attr *attr,
			 struct rsw_uarg *uarg)
{
	struct ib_udata *udata = rsw_uarg_udata(uarg);
	struct rsw_cq *cq = to_rsw_cq(ibcq);
	struct rsw_device *rsw = to_rsw_dev(ibcq->device);
	struct rsw_ucontext *uctx = NULL;
	int ret;

	if (udata) {
		/* A ring for a process needs its context to map it. */
		uctx = rdma_udata_to_drv_context(udata, struct rsw_ucontext,
						 base);
		if (!rsw_uctx_abi_ok(uctx))
			return -EINVAL;
		/* No request data is defined: unknown input must be 0. */
		if (udata->inlen &&
		    !ib_is_udata_cleared(udata, 0, udata->inlen))
			return -EINVAL;
	}
	ret = rsw_cq_check_attr(ibcq->device, attr);
	if (ret)
		return ret;
	if (atomic_inc_return(&rsw->num_cq) > RSW_MAX_CQ) {
		ret = -ENOMEM;
		goto err_uncount;
	}

	ret = rsw_cq_ring_alloc(&cq->ring, roundup_pow_of_two(attr->cqe),
				!!udata);
	if (ret)
		goto err_uncount;
	cq->user = !!udata;
	mutex_init(&cq->resize_mutex);
	spin_lock_init(&cq->prod_lock);
	spin_lock_init(&cq->cons_lock);
	INIT_WORK(&cq->notify_work, rsw_cq_notify_work);
	rsw_cq_reset(cq, 0);
	ibcq->cqe = cq->size;
	if (udata) {
		ret = rsw_cq_map(cq, udata, &uctx->base);
		if (ret)
			goto err_free_qp;
	}
	return 0;

err_free_qp:
	/* rsw_cq_map() freed the ring if it had published it. */
	kvfree(cq->qp);
	vfree(cq->ctrl);
err_uncount:
	atomic_dec(&rsw->num_cq);
	return ret;
}

/*
 * ops.pre_destroy_cq: after it returns no handler runs and none will.
 * Process context, may sleep; no QP uses the CQ any more.
 */
static int rsw_pre_destroy_cq(struct ib_cq *ibcq)
{
	struct rsw_cq *cq = to_rsw_cq(ibcq);
	unsigned long flags;

	spin_lock_irqsave(&cq->prod_lock, flags);
	cq->dead = true;
	spin_unlock_irqrestore(&cq->prod_lock, flags);
	cancel_work_sync(&cq->notify_work);
	return 0;
}

/* ops.post_destroy_cq.  Process context. */
static void rsw_post_destroy_cq(struct ib_cq *ibcq)
{
	struct rsw_cq *cq = to_rsw_cq(ibcq);

	kvfree(cq->qp);
	if (cq->umap)
		rsw_umap_remove(cq->umap);	/* frees the ring when unused */
	else
		vfree(cq->ctrl);
	mutex_destroy(&cq->resize_mutex);
	atomic_dec(&to_rsw_dev(ibcq->device)->num_cq);
}

/* ops.destroy_cq (ib_destroy_cq_user(), uverbs).  Process context. */
static int rsw_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	rsw_pre_destroy_cq(ibcq);
	rsw_post_destroy_cq(ibcq);
	return 0;
}

static bool rsw_cqe_valid(const struct rdmap_sw_cqe *cqe)
{
	return cqe->opcode < ARRAY_SIZE(rsw_wc_opcode) &&
	       cqe->status < ARRAY_SIZE(rsw_wc_status) &&
	       (cqe->flags & RSW_CQE_EX_FLAGS) != RSW_CQE_EX_FLAGS;
}

/*
 * Clear the arm word if an entry (@solicited or not) satisfies it; true if
 * it did, and so one event is owed.  Producer side, prod_lock held.
 */
static bool rsw_cq_take_arm(struct rdmap_sw_cq_ctrl *ctrl, bool solicited)
{
	u32 arm = READ_ONCE(ctrl->notify);

	do {
		if (arm == RDMAP_SW_CQ_NOTIFY_NONE ||
		    (arm == RDMAP_SW_CQ_NOTIFY_SOLICITED && !solicited))
			return false;
	} while (!try_cmpxchg(&ctrl->notify, &arm, RDMAP_SW_CQ_NOTIFY_NONE));
	return true;
}

/* Fill slot prod & mask and publish it (see the ABI header).  prod_lock. */
static void rsw_cq_publish(struct rsw_cq *cq, const struct rdmap_sw_cqe *src,
			   struct ib_qp *qp, bool solicited)
{
	u32 n = cq->prod;
	struct rdmap_sw_cqe *dst = &cq->cqe[n & cq->mask];

	lockdep_assert_held(&cq->prod_lock);
	dst->wr_id = src->wr_id;
	dst->byte_len = src->byte_len;
	dst->qp_num = src->qp_num;
	dst->ex_data = src->ex_data;
	dst->vendor_err = src->vendor_err;
	dst->opcode = src->opcode;
	dst->status = src->status;
	dst->flags = (src->flags & ~RDMAP_SW_CQE_SOLICITED) |
		     (solicited ? RDMAP_SW_CQE_SOLICITED : 0);
	dst->reserved = 0;
	if (cq->qp)
		cq->qp[n & cq->mask] = qp;
	/* The entry, then its seq, then prod: see the consumers' acquires. */
	smp_store_release(&dst->seq, n);
	cq->prod = n + 1;
	/* Same order for consumers that watch prod instead of seq. */
	smp_store_release(&cq->ctrl->prod, n + 1);
	/* Publish prod before reading the arm word; pairs with req_notify. */
	smp_mb();
}

int rsw_cq_push(struct rsw_cq *cq, const struct rdmap_sw_cqe *cqe,
		struct ib_qp *qp, bool solicited)
{
	bool notify_solicited = solicited || cqe->status != RDMAP_SW_WC_SUCCESS;
	unsigned long flags;
	int ret = 0;

	if (unlikely(!rsw_cqe_valid(cqe) || !qp))
		return -EINVAL;

	spin_lock_irqsave(&cq->prod_lock, flags);
	/* The consumer's index is trusted for "full or not" only. */
	if (unlikely(cq->prod - smp_load_acquire(&cq->ctrl->cons) >=
		     cq->size)) {
		/* The only ring flag, so no read-modify-write of the ring. */
		WRITE_ONCE(cq->ctrl->flags, RDMAP_SW_CQ_F_OVERFLOW);
		/*
		 * The CQ is in error from its first overrun on: one event.
		 * One per push would let a process that holds ctrl.cons
		 * back queue an unbounded list of them in uverbs.
		 */
		if (!cq->overruns++)
			rsw_cq_schedule(cq, RSW_CQ_EV_ERR);
		ret = -ENOSPC;
	} else {
		rsw_cq_publish(cq, cqe, qp, solicited);
		if (rsw_cq_take_arm(cq->ctrl, notify_solicited))
			rsw_cq_schedule(cq, RSW_CQ_EV_COMP);
	}
	spin_unlock_irqrestore(&cq->prod_lock, flags);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_cq_push);

void rsw_cq_discard_qp(struct rsw_cq *cq, struct ib_qp *qp)
{
	unsigned long flags;
	u32 n, end;

	/* The process polls a user CQ and never sees ib_qp pointers. */
	if (cq->user)
		return;
	spin_lock_irqsave(&cq->cons_lock, flags);
	/* Entries before end are published and stay put until polled. */
	end = smp_load_acquire(&cq->ctrl->prod);
	for (n = cq->cons; n != end; n++)
		if (cq->qp[n & cq->mask] == qp)
			cq->qp[n & cq->mask] = NULL;
	spin_unlock_irqrestore(&cq->cons_lock, flags);
}
EXPORT_SYMBOL_IF_KUNIT(rsw_cq_discard_qp);

static void rsw_cqe_to_wc(const struct rdmap_sw_cqe *cqe, struct ib_qp *qp,
			  struct ib_wc *wc)
{
	*wc = (struct ib_wc) {
		.wr_id = cqe->wr_id,
		.status = rsw_wc_status[cqe->status],
		.opcode = rsw_wc_opcode[cqe->opcode],
		.vendor_err = cqe->vendor_err,
		.byte_len = cqe->byte_len,
		.qp = qp,
	};
	if (cqe->flags & RDMAP_SW_CQE_WITH_IMM) {
		wc->wc_flags = IB_WC_WITH_IMM;
		wc->ex.imm_data = (__force __be32)cqe->ex_data;
	} else if (cqe->flags & RDMAP_SW_CQE_WITH_INV) {
		wc->wc_flags = IB_WC_WITH_INVALIDATE;
		wc->ex.invalidate_rkey = cqe->ex_data;
	}
}

/* ops.poll_cq.  Any context, never sleeps; consumers serialise on cons_lock. */
static int rsw_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct rsw_cq *cq = to_rsw_cq(ibcq);
	unsigned long flags;
	int polled = 0;
	u32 n;

	/* The process is a user CQ's only consumer (uverbs' poll_cq too). */
	if (cq->user)
		return -EINVAL;
	spin_lock_irqsave(&cq->cons_lock, flags);
	for (n = cq->cons; polled < num_entries; n++) {
		const struct rdmap_sw_cqe *cqe = &cq->cqe[n & cq->mask];
		struct ib_qp *qp;

		/* Pairs with the release of seq in rsw_cq_publish(). */
		if (smp_load_acquire(&cqe->seq) != n)
			break;
		qp = cq->qp[n & cq->mask];
		if (qp)
			rsw_cqe_to_wc(cqe, qp, &wc[polled++]);
	}
	if (n != cq->cons) {
		cq->cons = n;
		/* Hands the slots back to the producer. */
		smp_store_release(&cq->ctrl->cons, n);
	}
	spin_unlock_irqrestore(&cq->cons_lock, flags);
	return polled;
}

/* Raise the arm word to @want; it is never lowered here. */
static void rsw_cq_arm(struct rdmap_sw_cq_ctrl *ctrl, u32 want)
{
	u32 arm = READ_ONCE(ctrl->notify);

	while (arm < want && !try_cmpxchg(&ctrl->notify, &arm, want))
		;
}

/*
 * ops.req_notify_cq.  Any context, never sleeps.  Arming for solicited
 * entries while armed for any entry keeps the stronger arm.
 */
static int rsw_req_notify_cq(struct ib_cq *ibcq,
			     enum ib_cq_notify_flags flags)
{
	struct rsw_cq *cq = to_rsw_cq(ibcq);
	struct rdmap_sw_cq_ctrl *ctrl;
	unsigned long irqflags;
	u32 want;
	int ret = 0;

	switch (flags & IB_CQ_SOLICITED_MASK) {
	case IB_CQ_SOLICITED:
		want = RDMAP_SW_CQ_NOTIFY_SOLICITED;
		break;
	case IB_CQ_NEXT_COMP:
		want = RDMAP_SW_CQ_NOTIFY_NEXT;
		break;
	default:
		return -EINVAL;
	}
	/* The ring resize_cq replaces goes only under cons_lock. */
	spin_lock_irqsave(&cq->cons_lock, irqflags);
	ctrl = cq->ctrl;
	rsw_cq_arm(ctrl, want);
	/* Arm before reading prod; pairs with rsw_cq_publish(). */
	smp_mb();
	if (flags & IB_CQ_REPORT_MISSED_EVENTS)
		ret = READ_ONCE(ctrl->prod) != READ_ONCE(ctrl->cons);
	spin_unlock_irqrestore(&cq->cons_lock, irqflags);
	return ret;
}

/* ---------------------------------------------------------------- resize */

/* Mark every slot of @r empty for the indices @start .. @start + size - 1. */
static void rsw_cq_ring_stale(struct rsw_cq_ring *r, u32 start)
{
	u32 i;

	for (i = 0; i < r->size; i++)
		r->cqe[(start + i) & r->mask].seq = start + i - r->size;
}

/*
 * Copy the entries @from .. @to - 1 of @cq's ring into @r, each with
 * seq == n (ours, whatever the process wrote), only the last r->size of
 * them if there are more.  In increasing order, so that an index copied
 * later wins its slot.
 */
static void rsw_cq_ring_copy(struct rsw_cq *cq, struct rsw_cq_ring *r,
			     u32 from, u32 to)
{
	u32 n;

	if (to - from > r->size)
		from = to - r->size;
	for (n = from; n != to; n++) {
		r->cqe[n & r->mask] = cq->cqe[n & cq->mask];
		r->cqe[n & r->mask].seq = n;
	}
}

/* The producer's index, with every entry before it published. */
static u32 rsw_cq_prod(struct rsw_cq *cq)
{
	unsigned long flags;
	u32 prod;

	spin_lock_irqsave(&cq->prod_lock, flags);
	prod = cq->prod;
	spin_unlock_irqrestore(&cq->prod_lock, flags);
	return prod;
}

/*
 * Prepare @r outside the locks for the consumer index @guess: every slot
 * empty, then the entries published from @guess on copied, in rounds
 * until few are left for rsw_cq_switch() to copy with interrupts off.
 * resize_mutex keeps @cq's ring in place.  Entries before the consumer's
 * index at the switch are never read again; the others stay put in the
 * old ring until then (a process that moves ctrl.cons meanwhile garbles
 * only its own entries' contents).  Returns the index @r is filled up to.
 */
VISIBLE_IF_KUNIT u32 rsw_cq_ring_prepare(struct rsw_cq *cq,
					 struct rsw_cq_ring *r, u32 guess,
					 u32 prod)
{
	unsigned int round;
	u32 from = guess;

	lockdep_assert_held(&cq->resize_mutex);
	rsw_cq_ring_stale(r, guess);
	for (round = 0; round < RSW_CQ_COPY_ROUNDS; round++) {
		rsw_cq_ring_copy(cq, r, from, prod);
		from = prod;
		prod = rsw_cq_prod(cq);
		if (prod - from <= RSW_CQ_LOCKED_COPY)
			break;
	}
	return from;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_cq_ring_prepare);

/*
 * Complete @r for the indices @cons on: the entries @copied .. prod - 1
 * that rsw_cq_ring_prepare() did not copy, the QPs of a kernel CQ's
 * pending entries, the control words.  A slot of an index before @cons
 * holds that index's entry (seq == n) or is still empty, so it reads
 * as empty for the index it carries next: nothing to prepare there.
 * Both locks held; nobody else uses @r yet.
 */
static void rsw_cq_ring_fill(struct rsw_cq *cq, struct rsw_cq_ring *r,
			     u32 cons, u32 copied)
{
	u32 n;

	lockdep_assert_held(&cq->cons_lock);
	lockdep_assert_held(&cq->prod_lock);
	rsw_cq_ring_copy(cq, r, copied, cq->prod);
	if (r->qp)
		for (n = cons; n != cq->prod; n++)
			r->qp[n & r->mask] = cq->qp[n & cq->mask];
	r->ctrl->size = r->size;
	r->ctrl->mask = r->mask;
	r->ctrl->flags = READ_ONCE(cq->ctrl->flags);
	r->ctrl->notify = READ_ONCE(cq->ctrl->notify);
	r->ctrl->cons = cons;
	r->ctrl->prod = cq->prod;
}

/* The consumer's index: the process's for a user CQ.  cons_lock held. */
static u32 rsw_cq_cons(struct rsw_cq *cq)
{
	lockdep_assert_held(&cq->cons_lock);
	/* Pairs with the consumer's release: its copies are done. */
	return cq->user ? smp_load_acquire(&cq->ctrl->cons) : cq->cons;
}

/*
 * The consumer's index *@guess and the producer's *@prod before the
 * resize; -EINVAL if the consumer's is not one of the ring's (a bogus
 * user ctrl.cons).
 */
VISIBLE_IF_KUNIT int rsw_cq_snapshot(struct rsw_cq *cq, u32 *guess,
				     u32 *prod)
{
	unsigned long flags;
	int ret = 0;

	spin_lock_irqsave(&cq->cons_lock, flags);
	spin_lock(&cq->prod_lock);
	*guess = rsw_cq_cons(cq);
	*prod = cq->prod;
	if (*prod - *guess > cq->size)
		ret = -EINVAL;
	spin_unlock(&cq->prod_lock);
	spin_unlock_irqrestore(&cq->cons_lock, flags);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_cq_snapshot);

/*
 * Switch @r, prepared for the consumer index @guess and filled up to
 * @copied, in for the ring of @cq, which @r then holds, if the pending
 * entries fit: -EINVAL, nothing changed, if they do not, or if a user
 * CQ's consumer index is not one of the ring's or moved a ring or more
 * from @guess (the process broke the protocol: it may not consume
 * during the command); -EAGAIN, nothing changed, if more than
 * RSW_CQ_LOCKED_MAX entries of a user CQ are still to copy.  Producers,
 * pollers and arming wait on the two locks meanwhile, for a copy of the
 * entries produced since the last round of rsw_cq_ring_prepare() (and a
 * kernel CQ's QP pointers).
 */
VISIBLE_IF_KUNIT int rsw_cq_switch(struct rsw_cq *cq, struct rsw_cq_ring *r,
				   u32 guess, u32 copied)
{
	unsigned long flags;
	int ret = -EINVAL;
	u32 cons;

	spin_lock_irqsave(&cq->cons_lock, flags);
	spin_lock(&cq->prod_lock);
	cons = rsw_cq_cons(cq);
	if (cq->prod - cons > cq->size || cq->prod - cons > r->size)
		goto out;
	if (cq->user && cons - guess >= r->size)
		goto out;
	/*
	 * A process whose QPs outran every round is told to retry rather
	 * than have up to a ring's worth copied with interrupts off.
	 */
	ret = -EAGAIN;
	if (cq->user && cq->prod - copied > RSW_CQ_LOCKED_MAX)
		goto out;
	rsw_cq_ring_fill(cq, r, cons, copied);
	swap(cq->ring, *r);
	cq->base.cqe = cq->size;
	ret = 0;
out:
	spin_unlock(&cq->prod_lock);
	spin_unlock_irqrestore(&cq->cons_lock, flags);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_cq_switch);

/*
 * A user CQ's new ring: publish it and answer where it is, before it is
 * switched in (nothing after the switch may fail).  On failure the caller
 * still frees @r, which then owns nothing of the mapping.
 */
static int rsw_cq_resize_map(struct rsw_cq *cq, struct rsw_cq_ring *r,
			     struct ib_udata *udata)
{
	struct rsw_ucontext *uctx = rdma_udata_to_drv_context(udata,
					struct rsw_ucontext, base);
	struct rdmap_sw_uresp_resize_cq resp = {
		.mmap_len = rsw_cq_ring_len(r->size),
		.size = r->size,
	};
	struct rsw_umap *um;

	/* Without the whole answer the process could not follow the ring. */
	if (!rsw_uctx_abi_ok(uctx) || udata->outlen < sizeof(resp))
		return -EINVAL;
	um = rsw_umap_insert(&uctx->base, r->ctrl, resp.mmap_len,
			     &resp.mmap_offset);
	if (IS_ERR(um))
		return PTR_ERR(um);
	r->umap = um;		/* owns the buffer from now on */
	return ib_copy_to_udata(udata, &resp, sizeof(resp));
}

/*
 * ops.resize_cq (ib_resize_cq(), uverbs' RESIZE_CQ).  Process context, may
 * sleep.  The new ring is allocated, prepared (and, for a user CQ,
 * charged and published) first; the switch then copies what is left
 * under the producer and consumer locks, keeping the indices; the old
 * ring is freed last, or for a user CQ handed to umap.c, which frees it when the
 * process has unmapped it.  A failure anywhere leaves the old ring working.
 */
static int rsw_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct rsw_cq *cq = to_rsw_cq(ibcq);
	struct rsw_cq_ring r;
	u32 guess, prod;
	int ret;

	might_sleep();
	if (cqe <= 0 || cqe > RSW_MAX_CQE)
		return -EINVAL;
	/* User CQs change only through uverbs, kernel CQs only without. */
	if (!!udata != cq->user)
		return -EINVAL;
	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;
	ret = rsw_cq_ring_alloc(&r, roundup_pow_of_two(cqe), cq->user);
	if (ret)
		return ret;
	mutex_lock(&cq->resize_mutex);
	ret = rsw_cq_snapshot(cq, &guess, &prod);
	if (ret)
		goto out_unlock;
	prod = rsw_cq_ring_prepare(cq, &r, guess, prod);
	if (udata) {
		ret = rsw_cq_resize_map(cq, &r, udata);
		if (ret)
			goto out_unlock;
	}
	ret = rsw_cq_switch(cq, &r, guess, prod);
out_unlock:
	mutex_unlock(&cq->resize_mutex);
	/* The replaced ring on success, the unused new one on failure. */
	rsw_cq_ring_free(&r);
	return ret;
}

const struct ib_device_ops rsw_cq_ops = {
	.create_cq = rsw_create_cq,
	.destroy_cq = rsw_destroy_cq,
	.pre_destroy_cq = rsw_pre_destroy_cq,
	.post_destroy_cq = rsw_post_destroy_cq,
	.poll_cq = rsw_poll_cq,
	.req_notify_cq = rsw_req_notify_cq,
	.resize_cq = rsw_resize_cq,

	INIT_RDMA_OBJ_SIZE(ib_cq, rsw_cq, base),
};

int rsw_cq_init(void)
{
	rsw_cq_wq = alloc_workqueue("rdmap_sw_cq", WQ_HIGHPRI | WQ_MEM_RECLAIM,
				    0);
	return rsw_cq_wq ? 0 : -ENOMEM;
}

void rsw_cq_exit(void)
{
	destroy_workqueue(rsw_cq_wq);
}
