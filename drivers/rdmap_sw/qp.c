// SPDX-License-Identifier: GPL-2.0
/*
 * RC queue pairs: creation, the RFC 5040 section 6 stream states driven by
 * modify_qp, the send and receive queues, flushing and the hooks through
 * which the TX and RX engines take work requests and complete them.
 *
 * Kernel and user QPs.  A kernel QP's entries are written by post_send /
 * post_recv, which validate the work request and fill the slot shadow.  A
 * user QP (create_qp with udata) has its rings mapped into the process
 * (umap.c) behind the ABI's control page: the process writes entries and
 * ctrl.tail itself, and post_send / post_recv only serve as the doorbell.
 * Its entries are copied, validated (rules above rsw_sqe_check_user()) and
 * given their shadow when an engine takes them; a bad tail or entry moves
 * that QP alone to ERROR.  Retiring publishes ctrl.head, and flushing
 * reads the ring for what was never taken.  The engines see no difference.
 *
 * Shared receive queues (srq.c).  A QP created with an SRQ has no receive
 * ring of its own to post to (post_recv fails with -EINVAL): its rq is a
 * small private ring into which a take copies the SRQ's next entry, so
 * the receives it took complete, retire and flush like any others, on its
 * own recv CQ.  Once such a QP is in ERROR with nothing taken left, it
 * raises IB_EVENT_QP_LAST_WQE_REACHED (rsw_qp_last_wqe()); what it never
 * took stays in the SRQ for the other QPs.
 *
 * Lifetime.  ib_core allocates and frees struct rsw_qp; we count who uses
 * it with qp->ref:
 *   create_qp    builds both queues, then publishes the QP under its QPN in
 *                rsw_qps as the very last step; ref = 1 (creation's).
 *   holders      the CM, TX and RX take a reference with rsw_qp_lookup()
 *                (by QPN) or rsw_qp_get() and drop it with rsw_qp_put().
 *                A work request they took is theirs until they complete it.
 *   destroy_qp   unpublishes the QPN (no new lookups), marks the QP dead
 *                under all its locks (posts fail from then on and nothing
 *                more reaches a CQ: a destroyed QP's work requests complete
 *                nowhere, consumers drain first), drops the creation
 *                reference and waits for the last holder to drop theirs.
 *                Only then does it discard the QP's unpolled CQ entries and
 *                free the rings; ib_core frees the object after it returns.
 * A post racing with destroy_qp either finishes before the QP is marked
 * dead (its entries are then discarded) or fails with -EINVAL.
 *   the stream  attached by the CM (rsw_qp_attach_stream()), holds its own
 *                reference and is live (stream_live) until it ended and
 *                said so (rsw_qp_stream_done()); until then the QP does not
 *                go back to RESET.
 *   MRs          a queued REG_MR holds no MR: it names it by the index of
 *                its key and finds it again, with a reference held for the
 *                registration only, when it executes (rsw_sq_exec_reg()).
 *
 * Locks, all irqsave: qp->lock -> sq.lock -> rq.lock -> rsw_cq.prod_lock.
 * qp->state and qp->dead change only with all three QP locks held, so
 * holding any one of them is enough to read them.  Local operations
 * (REG_MR, LOCAL_INV) run with no QP lock held: mem.c takes BH locks.
 */
#include <linux/vmalloc.h>
#include <linux/xarray.h>
#include <rdma/uverbs_ioctl.h>

#include "cq.h"
#include "internal.h"
#include "ring.h"

/* QPN -> QP for every device; QPN 0 is never used (XA_FLAGS_ALLOC1). */
static DEFINE_XARRAY_FLAGS(rsw_qps, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);
static u32 rsw_qpn_next;
/* RSW_MAX_QP is enforced across all devices of the module. */
static atomic_t rsw_qp_count = ATOMIC_INIT(0);
/* sq.lock nests rq.lock: give lockdep one class for each. */
static struct lock_class_key rsw_sq_lock_key;
static struct lock_class_key rsw_rq_lock_key;
#define RSW_QPN_MAX ((1U << 24) - 1)

/* The entry layouts of the user ABI, checked where they are used. */
static_assert(sizeof(struct rdmap_sw_sge) == 16);
static_assert(sizeof(struct rdmap_sw_sqe) == 48 + RDMAP_SW_MAX_INLINE);
static_assert(sizeof(struct rdmap_sw_rqe) == 16 + RDMAP_SW_MAX_INLINE);
static_assert(RDMAP_SW_MAX_INLINE ==
	      RDMAP_SW_MAX_SGE * sizeof(struct rdmap_sw_sge));

/* --------------------------------------------------------- opcode table */

enum rsw_sq_op_flags {
	RSW_OP_SGE = 1 << 0,	/* carries an SGE list */
	RSW_OP_INLINE = 1 << 1,	/* may carry inline data instead */
	RSW_OP_LOCAL = 1 << 2,	/* executed here, no wire */
	RSW_OP_READ = 1 << 3,	/* SGEs are the Read sink: RSW_MAX_SGE_RD */
};

/* Indexed by enum rdmap_sw_wr_opcode. */
static const struct rsw_sq_op {
	enum ib_wr_opcode ib;
	u8 wc;			/* enum rdmap_sw_cqe_opcode */
	u8 flags;		/* enum rsw_sq_op_flags */
} rsw_sq_ops[] = {
	[RDMAP_SW_WR_SEND] = {
		IB_WR_SEND, RDMAP_SW_WC_SEND, RSW_OP_SGE | RSW_OP_INLINE },
	[RDMAP_SW_WR_SEND_WITH_INV] = {
		IB_WR_SEND_WITH_INV, RDMAP_SW_WC_SEND,
		RSW_OP_SGE | RSW_OP_INLINE },
	[RDMAP_SW_WR_RDMA_WRITE] = {
		IB_WR_RDMA_WRITE, RDMAP_SW_WC_RDMA_WRITE,
		RSW_OP_SGE | RSW_OP_INLINE },
	[RDMAP_SW_WR_RDMA_READ] = {
		IB_WR_RDMA_READ, RDMAP_SW_WC_RDMA_READ,
		RSW_OP_SGE | RSW_OP_READ },
	[RDMAP_SW_WR_RDMA_READ_WITH_INV] = {
		IB_WR_RDMA_READ_WITH_INV, RDMAP_SW_WC_RDMA_READ,
		RSW_OP_SGE | RSW_OP_READ },
	[RDMAP_SW_WR_REG_MR] = {
		IB_WR_REG_MR, RDMAP_SW_WC_REG_MR, RSW_OP_LOCAL },
	[RDMAP_SW_WR_LOCAL_INV] = {
		IB_WR_LOCAL_INV, RDMAP_SW_WC_LOCAL_INV, RSW_OP_LOCAL },
};

/* The ABI opcode of @ib, or -EINVAL for anything not in the table. */
static int rsw_sq_opcode(enum ib_wr_opcode ib)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(rsw_sq_ops); i++)
		if (rsw_sq_ops[i].ib == ib)
			return i;
	return -EINVAL;
}

/* ------------------------------------------------- user QPs: ring indices */

/*
 * Load the process's tail (acquire: the entries before it are written)
 * and accept it only within the ring: at most size entries ahead of head
 * (the process may fill slot n only while n - head < size) and never
 * behind what was accepted before.  False, tail unchanged, otherwise: the
 * QP must go to ERROR.  wq->lock held.
 */
static bool rsw_wq_user_tail(struct rsw_wq *wq)
{
	/* Pairs with the process's release of tail after the entries. */
	u32 tail = smp_load_acquire(&wq->uctrl->tail);

	lockdep_assert_held(&wq->lock);
	if (tail - wq->head > wq->size ||
	    tail - wq->head < wq->tail - wq->head)
		return false;
	wq->tail = tail;
	return true;
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
static void rsw_wq_user_busy(struct rsw_wq *wq, u32 busy)
{
	WRITE_ONCE(wq->uctrl->busy, busy);
}

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
static void rsw_wq_flush(struct rsw_qp *qp, struct rsw_wq *wq)
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
		s->vendor_err = 0;
		s->cqe_flags = 0;
		s->solicited = false;
		s->done = true;
	}
	rsw_wq_retire(qp, wq);
}

/* Forget every entry: only when nothing is taken (head == next). */
static void rsw_wq_reset(struct rsw_wq *wq)
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
		rsw_wq_user_busy(wq, 0);
		rsw_wq_user_head(wq);
		return;
	}
	wq->head = 0;
	wq->next = 0;
	wq->tail = 0;
}

/* ------------------------------------------------------- state machine */

static const char *const rsw_qp_state_names[RSW_QPS_COUNT] = {
	[RSW_QPS_IDLE] = "IDLE",
	[RSW_QPS_RTS] = "RTS",
	[RSW_QPS_CLOSING] = "CLOSING",
	[RSW_QPS_TERMINATE] = "TERMINATE",
	[RSW_QPS_ERROR] = "ERROR",
};

const char *rsw_qp_state_name(enum rsw_qp_state s)
{
	return s < RSW_QPS_COUNT ? rsw_qp_state_names[s] : "?";
}
EXPORT_SYMBOL_IF_KUNIT(rsw_qp_state_name);

/* The stream state an ib_qp_state stands for; RSW_QPS_COUNT if none. */
static enum rsw_qp_state rsw_qp_state_of(enum ib_qp_state ib)
{
	switch (ib) {
	case IB_QPS_RESET:
	case IB_QPS_INIT:
	case IB_QPS_RTR:
		return RSW_QPS_IDLE;
	case IB_QPS_RTS:
		return RSW_QPS_RTS;
	case IB_QPS_SQD:
		return RSW_QPS_CLOSING;
	case IB_QPS_SQE:
		return RSW_QPS_TERMINATE;
	case IB_QPS_ERR:
		return RSW_QPS_ERROR;
	}
	return RSW_QPS_COUNT;
}

/*
 * Legal transitions, RFC 5040 section 6 (rows: from, columns: to).  An
 * iWARP stream leaves RTS only for CLOSING (orderly close), TERMINATE (a
 * Terminate is being sent) or ERROR; the way back to IDLE is through
 * ERROR (and reset) or a completed close.  ERROR -> ERROR is legal because
 * ib_drain_qp() moves a QP to ERR once per queue.
 */
static const bool rsw_qp_legal[RSW_QPS_COUNT][RSW_QPS_COUNT] = {
	[RSW_QPS_IDLE] = {
		[RSW_QPS_IDLE] = true, [RSW_QPS_RTS] = true,
		[RSW_QPS_ERROR] = true },
	[RSW_QPS_RTS] = {
		[RSW_QPS_RTS] = true, [RSW_QPS_CLOSING] = true,
		[RSW_QPS_TERMINATE] = true, [RSW_QPS_ERROR] = true },
	[RSW_QPS_CLOSING] = {
		[RSW_QPS_IDLE] = true, [RSW_QPS_CLOSING] = true,
		[RSW_QPS_TERMINATE] = true, [RSW_QPS_ERROR] = true },
	[RSW_QPS_TERMINATE] = {
		[RSW_QPS_TERMINATE] = true, [RSW_QPS_ERROR] = true },
	[RSW_QPS_ERROR] = {
		[RSW_QPS_IDLE] = true, [RSW_QPS_ERROR] = true },
};

int rsw_qp_transition(enum rsw_qp_state from, enum ib_qp_state to,
		      enum rsw_qp_state *next)
{
	enum rsw_qp_state s = rsw_qp_state_of(to);

	if (from >= RSW_QPS_COUNT || s >= RSW_QPS_COUNT ||
	    !rsw_qp_legal[from][s])
		return -EINVAL;
	/* Out of ERROR only to RESET: INIT and RTR need a reset first. */
	if (from == RSW_QPS_ERROR && s == RSW_QPS_IDLE && to != IB_QPS_RESET)
		return -EINVAL;
	*next = s;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_qp_transition);

/* ib_qp_state reported for the current stream state. */
static enum ib_qp_state rsw_qp_ib_state(const struct rsw_qp *qp)
{
	static const enum ib_qp_state ib[RSW_QPS_COUNT] = {
		[RSW_QPS_RTS] = IB_QPS_RTS,
		[RSW_QPS_CLOSING] = IB_QPS_SQD,
		[RSW_QPS_TERMINATE] = IB_QPS_SQE,
		[RSW_QPS_ERROR] = IB_QPS_ERR,
	};

	return qp->state == RSW_QPS_IDLE ? qp->idle_state : ib[qp->state];
}

static void rsw_qp_lock_queues(struct rsw_qp *qp)
	__acquires(&qp->sq.lock) __acquires(&qp->rq.lock)
{
	lockdep_assert_held(&qp->lock);
	spin_lock(&qp->sq.lock);
	spin_lock(&qp->rq.lock);
}

static void rsw_qp_unlock_queues(struct rsw_qp *qp)
	__releases(&qp->rq.lock) __releases(&qp->sq.lock)
{
	spin_unlock(&qp->rq.lock);
	spin_unlock(&qp->sq.lock);
}

/*
 * One function per target state; each runs with all three QP locks held
 * once rsw_qp_transition() allowed the move and may still refuse it.
 *
 * Back to IDLE (RESET) from CLOSING or ERROR only once the stream is over:
 * a QP in RESET with a live stream would have its connection take, place
 * and complete work in a state that has none.  The move is legal in
 * itself, only not yet: entering ERROR (or the close in CLOSING) ends the
 * stream on its own shortly, so the answer is -EBUSY (try again), not the
 * -EINVAL of a transition that is never allowed.
 */
static int rsw_qp_enter_idle(struct rsw_qp *qp, enum ib_qp_state to)
{
	struct rsw_wq *sq = &qp->sq, *rq = &qp->rq;

	if (qp->state != RSW_QPS_IDLE && qp->stream_live)
		return -EBUSY;
	switch (qp->state) {
	case RSW_QPS_IDLE:
		break;
	case RSW_QPS_CLOSING:
		/* A completed orderly close: nothing may be left behind. */
		if (sq->head != sq->tail || rq->head != rq->tail)
			return -EINVAL;
		break;
	default:	/* ERROR, to RESET */
		/* Work requests still with an engine complete first. */
		if (sq->head != sq->next || rq->head != rq->next)
			return -EINVAL;
		rsw_wq_reset(sq);
		rsw_wq_reset(rq);
		qp->last_wqe_due = false;
		break;
	}
	qp->idle_state = to;
	return 0;
}

static int rsw_qp_enter_rts(struct rsw_qp *qp, enum ib_qp_state to)
{
	if (qp->state == RSW_QPS_RTS)
		return 0;
	/*
	 * IDLE -> RTS needs an established stream (socket after the MPA
	 * exchange); the connection manager attaches one with
	 * rsw_qp_attach_stream().  A consumer's modify_qp never can.
	 */
	return -ENOTCONN;
}

/*
 * CLOSING and TERMINATE change the state only; the stream's work item,
 * kicked after every state change, closes the connection in order
 * (CLOSING) or sends the Terminate.
 */
static int rsw_qp_enter_stream_end(struct rsw_qp *qp, enum ib_qp_state to)
{
	return 0;
}

static int rsw_qp_enter_error(struct rsw_qp *qp, enum ib_qp_state to)
{
	if (qp->state == RSW_QPS_ERROR)
		return 0;
	/* State first: retiring reads it through the dead/state rules. */
	qp->state = RSW_QPS_ERROR;
	if (qp->sq.uctrl) {
		/*
		 * Nothing drains a user SQ in ERROR: have the process ring,
		 * so that what it posts from now on is flushed (doorbell).
		 */
		rsw_wq_user_busy(&qp->sq, 0);
		smp_mb();	/* busy before tail; pairs with the process */
	}
	rsw_wq_flush(qp, &qp->sq);
	rsw_wq_flush(qp, &qp->rq);
	/* Once the receives it took are done: rsw_qp_last_wqe(). */
	if (qp->srq)
		qp->last_wqe_due = true;
	return 0;
}

static int (*const rsw_qp_enter[RSW_QPS_COUNT])(struct rsw_qp *qp,
						 enum ib_qp_state to) = {
	[RSW_QPS_IDLE] = rsw_qp_enter_idle,
	[RSW_QPS_RTS] = rsw_qp_enter_rts,
	[RSW_QPS_CLOSING] = rsw_qp_enter_stream_end,
	[RSW_QPS_TERMINATE] = rsw_qp_enter_stream_end,
	[RSW_QPS_ERROR] = rsw_qp_enter_error,
};

/* Move to @to if legal.  qp->lock held. */
static int rsw_qp_change_state(struct rsw_qp *qp, enum ib_qp_state to)
{
	enum rsw_qp_state next;
	int ret;

	lockdep_assert_held(&qp->lock);
	/*
	 * An orderly close of a stream that has already ended (the peer
	 * closed, a Terminate) has nothing left to do: rdma_disconnect()
	 * moves an iWARP QP to SQD whatever happened before.
	 */
	if (to == IB_QPS_SQD && (qp->state == RSW_QPS_TERMINATE ||
				 qp->state == RSW_QPS_ERROR))
		return 0;
	ret = rsw_qp_transition(qp->state, to, &next);
	if (ret)
		return ret;
	rsw_qp_lock_queues(qp);
	ret = rsw_qp_enter[next](qp, to);
	if (!ret)
		qp->state = next;
	rsw_qp_unlock_queues(qp);
	return ret;
}

/* Let the stream see a state change (its work reads qp->state). */
static void rsw_qp_kick_stream(struct rsw_qp *qp)
{
	lockdep_assert_held(&qp->lock);
	if (qp->stream)
		rsw_stream_kick(qp->stream);
}

/*
 * A QP with an SRQ in ERROR will take no more receives from it; once the
 * ones it took are retired (flushed by the stream, or finished), raise
 * IB_EVENT_QP_LAST_WQE_REACHED, once per entry into ERROR.  ib_drain_qp()
 * waits for it and then polls the flushed receives.  No QP lock held: the
 * handler runs without any (any context).
 */
static void rsw_qp_last_wqe(struct rsw_qp *qp)
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

void rsw_qp_set_error(struct rsw_qp *qp)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->lock, flags);
	if (qp->state != RSW_QPS_ERROR) {
		rsw_qp_change_state(qp, IB_QPS_ERR);
		rsw_qp_kick_stream(qp);
	}
	spin_unlock_irqrestore(&qp->lock, flags);
	rsw_qp_last_wqe(qp);
}

int rsw_qp_attach_stream(struct rsw_qp *qp, struct rsw_stream *s, u32 ird,
			 u32 ord)
{
	unsigned long flags;
	int ret = -EINVAL;

	spin_lock_irqsave(&qp->lock, flags);
	rsw_qp_lock_queues(qp);
	if (!qp->dead && !qp->stream && qp->state == RSW_QPS_IDLE) {
		qp->stream = s;
		qp->stream_live = true;
		qp->state = RSW_QPS_RTS;
		qp->ird = ird;
		qp->ord = ord;
		ret = 0;
	}
	rsw_qp_unlock_queues(qp);
	spin_unlock_irqrestore(&qp->lock, flags);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_qp_attach_stream);

void rsw_qp_stream_done(struct rsw_qp *qp)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->lock, flags);
	rsw_qp_lock_queues(qp);
	qp->stream_live = false;
	rsw_qp_unlock_queues(qp);
	spin_unlock_irqrestore(&qp->lock, flags);
}
EXPORT_SYMBOL_IF_KUNIT(rsw_qp_stream_done);

/* ----------------------------------------------------------- post_send */

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
 * IB_SEND_INLINE: copy the payload into the WQE now, so the buffers may be
 * reused as soon as post_send returns.  Kernel SGE addresses are kernel
 * virtual addresses (virtual DMA) and their lkeys are not used.
 */
static int rsw_sqe_inline(struct rsw_qp *qp, const struct ib_send_wr *wr,
			  struct rdmap_sw_sqe *sqe)
{
	u32 total = 0;
	int i;

	if (wr->num_sge < 0 || wr->num_sge > qp->sq.max_sge)
		return -EINVAL;
	for (i = 0; i < wr->num_sge; i++) {
		const struct ib_sge *sge = &wr->sg_list[i];

		if (sge->length > qp->max_inline - total)
			return -EINVAL;
		memcpy(sqe->inline_data + total,
		       rsw_virt_dma_to_ptr(sge->addr), sge->length);
		total += sge->length;
	}
	sqe->num_sge = 0;
	sqe->length = total;
	sqe->flags |= RDMAP_SW_SQE_INLINE;
	return 0;
}

/* The opcode-specific fields (remote address, STags, MR to register). */
static int rsw_sqe_op_fields(struct rsw_qp *qp, const struct ib_send_wr *wr,
			     struct rdmap_sw_sqe *sqe)
{
	switch (sqe->opcode) {
	case RDMAP_SW_WR_SEND_WITH_INV:
		sqe->inv_stag = wr->ex.invalidate_rkey;
		break;
	case RDMAP_SW_WR_RDMA_READ_WITH_INV:
		sqe->inv_stag = wr->ex.invalidate_rkey;
		fallthrough;
	case RDMAP_SW_WR_RDMA_WRITE:
	case RDMAP_SW_WR_RDMA_READ:
		sqe->rstag = rdma_wr(wr)->rkey;
		sqe->raddr = rdma_wr(wr)->remote_addr;
		break;
	case RDMAP_SW_WR_REG_MR:
		/*
		 * The MR is the caller's only until post_send returns: keep
		 * its name (the index of the key, which must be the MR's)
		 * and the pointer as an identity to compare, never to follow
		 * (rsw_sq_exec_reg()).
		 */
		if (!reg_wr(wr)->mr ||
		    reg_wr(wr)->mr->device != qp->base.device ||
		    rsw_stag_index(reg_wr(wr)->key) !=
		    rsw_stag_index(reg_wr(wr)->mr->lkey))
			return -EINVAL;
		sqe->mr = (uintptr_t)reg_wr(wr)->mr;
		sqe->reg_key = reg_wr(wr)->key;
		sqe->reg_access = reg_wr(wr)->access;
		break;
	case RDMAP_SW_WR_LOCAL_INV:
		if (!rsw_stag_index(wr->ex.invalidate_rkey))
			return -EINVAL;
		sqe->inv_stag = wr->ex.invalidate_rkey;
		break;
	}
	return 0;
}

/* Validate @wr and write it into the free entry at sq.tail. */
static int rsw_sqe_fill(struct rsw_qp *qp, const struct ib_send_wr *wr,
			struct rdmap_sw_sqe *sqe)
{
	int op = rsw_sq_opcode(wr->opcode);
	const struct rsw_sq_op *info;
	int ret;

	if (op < 0)
		return op;
	info = &rsw_sq_ops[op];
	memset(sqe, 0, offsetof(struct rdmap_sw_sqe, sge));
	sqe->wr_id = wr->wr_id;
	sqe->opcode = op;
	if (wr->send_flags & IB_SEND_FENCE)
		sqe->flags |= RDMAP_SW_SQE_FENCE;
	if (wr->send_flags & IB_SEND_SOLICITED)
		sqe->flags |= RDMAP_SW_SQE_SOLICITED;
	if (qp->sig_all || (wr->send_flags & IB_SEND_SIGNALED))
		sqe->flags |= RDMAP_SW_SQE_SIGNALED;

	if (wr->send_flags & IB_SEND_INLINE && info->flags & RSW_OP_INLINE) {
		ret = rsw_sqe_inline(qp, wr, sqe);
	} else if (info->flags & RSW_OP_SGE) {
		u32 max = qp->sq.max_sge;

		if (info->flags & RSW_OP_READ)
			max = min_t(u32, max, RSW_MAX_SGE_RD);
		ret = rsw_wqe_sges(sqe->sge, wr->sg_list, wr->num_sge, max,
				   &sqe->length);
		sqe->num_sge = wr->num_sge;
	} else {
		/* Local operations carry no data. */
		ret = wr->num_sge ? -EINVAL : 0;
	}
	if (ret)
		return ret;
	return rsw_sqe_op_fields(qp, wr, sqe);
}

/* Post one send work request.  sq.lock held. */
static int rsw_sq_post_one(struct rsw_qp *qp, const struct ib_send_wr *wr)
{
	struct rsw_wq *sq = &qp->sq;
	struct rdmap_sw_sqe *sqe;
	struct rsw_wq_slot *s;
	int ret;

	lockdep_assert_held(&sq->lock);
	/* The stream is going down: nothing new is sent on it. */
	if (qp->dead || qp->state == RSW_QPS_CLOSING ||
	    qp->state == RSW_QPS_TERMINATE)
		return -EINVAL;
	if (rsw_wq_full(sq))
		return -ENOMEM;
	sqe = rsw_wq_entry(sq, sq->tail);
	ret = rsw_sqe_fill(qp, wr, sqe);
	if (ret)
		return ret;
	s = rsw_wq_slot(sq, sq->tail);
	memset(s, 0, sizeof(*s));
	s->wr_id = wr->wr_id;
	s->opcode = rsw_sq_ops[sqe->opcode].wc;
	s->signaled = sqe->flags & RDMAP_SW_SQE_SIGNALED;
	sq->tail++;
	/* In ERROR every new work request completes flushed at once. */
	if (qp->state == RSW_QPS_ERROR)
		rsw_wq_flush(qp, sq);
	return 0;
}

/*
 * post_send / post_recv on a user QP: the process writes its rings itself,
 * so a work request list is refused; an empty one is the doorbell (the
 * ABI's for the SQ; the same on the RQ is accepted too).  On the SQ of a
 * stream it runs the stream's TX here (rsw_stream_tx_direct(), outside
 * the queue's lock), which takes the new entries; in ERROR it flushes
 * them: nothing else would, since the stream is gone.
 */
static int rsw_user_doorbell(struct rsw_qp *qp, struct rsw_wq *wq)
{
	bool can_sleep = preemptible() && !rcu_preempt_depth();
	struct rsw_stream *direct = NULL;
	unsigned long flags;
	int ret = 0;

	spin_lock_irqsave(&wq->lock, flags);
	if (qp->dead) {
		ret = -EINVAL;
	} else if (qp->state == RSW_QPS_ERROR) {
		rsw_wq_flush(qp, wq);
	} else if (qp->stream && qp->state == RSW_QPS_RTS && wq == &qp->sq) {
		if (can_sleep) {
			rsw_qp_get(qp);		/* keeps the stream */
			direct = qp->stream;
		} else {
			rsw_stream_kick(qp->stream);
		}
	}
	spin_unlock_irqrestore(&wq->lock, flags);
	if (direct) {
		rsw_stream_tx_direct(direct);
		rsw_qp_put(qp);
	}
	return ret;
}

/*
 * ops.post_send.  Any context, never sleeps (core_locking.rst), for every
 * kernel QP.  The one exception is a user QP's doorbell, which only uverbs
 * reaches, from a system call: it may run TX and wait for the socket lock
 * (rsw_stream_tx_direct()).  Stops at the first work request that is
 * malformed (-EINVAL), does not fit (-ENOMEM) or cannot be accepted in
 * this state (-EINVAL) and returns it in @bad_wr.
 */
static int rsw_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
			 const struct ib_send_wr **bad_wr)
{
	struct rsw_qp *qp = to_rsw_qp(ibqp);
	unsigned long flags;
	int ret = 0;

	if (qp->sq.uctrl) {
		if (!wr)
			return rsw_user_doorbell(qp, &qp->sq);
		*bad_wr = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&qp->sq.lock, flags);
	for (; wr; wr = wr->next) {
		ret = rsw_sq_post_one(qp, wr);
		if (ret)
			break;
	}
	/* The stream's work sends it; never from the caller's context. */
	if (qp->stream && qp->state == RSW_QPS_RTS && !qp->dead)
		rsw_stream_kick(qp->stream);
	spin_unlock_irqrestore(&qp->sq.lock, flags);
	if (ret)
		*bad_wr = wr;
	return ret;
}

/* ----------------------------------------------------------- post_recv */

/* Post one receive work request.  rq.lock held. */
static int rsw_rq_post_one(struct rsw_qp *qp, const struct ib_recv_wr *wr)
{
	struct rsw_wq *rq = &qp->rq;
	struct rdmap_sw_rqe *rqe;
	struct rsw_wq_slot *s;
	int ret;

	lockdep_assert_held(&rq->lock);
	if (qp->dead)
		return -EINVAL;
	if (rsw_wq_full(rq))
		return -ENOMEM;
	rqe = rsw_wq_entry(rq, rq->tail);
	ret = rsw_wqe_sges(rqe->sge, wr->sg_list, wr->num_sge, rq->max_sge,
			   &rqe->length);
	if (ret)
		return ret;
	rqe->wr_id = wr->wr_id;
	rqe->num_sge = wr->num_sge;
	s = rsw_wq_slot(rq, rq->tail);
	memset(s, 0, sizeof(*s));
	s->wr_id = wr->wr_id;
	s->opcode = RDMAP_SW_WC_RECV;
	s->signaled = true;
	rq->tail++;
	if (qp->state == RSW_QPS_ERROR)
		rsw_wq_flush(qp, rq);
	return 0;
}

/* ops.post_recv.  Any context, never sleeps; conventions as post_send. */
static int rsw_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
			 const struct ib_recv_wr **bad_wr)
{
	struct rsw_qp *qp = to_rsw_qp(ibqp);
	unsigned long flags;
	int ret = 0;

	/* Its receives come from the SRQ (ib_post_srq_recv). */
	if (qp->srq) {
		*bad_wr = wr;
		return -EINVAL;
	}
	if (qp->rq.uctrl) {
		if (!wr)
			return rsw_user_doorbell(qp, &qp->rq);
		*bad_wr = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&qp->rq.lock, flags);
	for (; wr; wr = wr->next) {
		ret = rsw_rq_post_one(qp, wr);
		if (ret)
			break;
	}
	spin_unlock_irqrestore(&qp->rq.lock, flags);
	if (ret)
		*bad_wr = wr;
	return ret;
}

/* ------------------------------------------- engine hooks: take, complete */

/*
 * User entries are validated on the kernel's copy, never in the ring: the
 * process may rewrite the ring at any time.  The rules, each failure
 * completing the entry with the status named and moving the QP to ERROR:
 *  SQE  opcode in rsw_sq_ops[] and not a local one (REG_MR, LOCAL_INV name
 *       kernel objects)                                   LOC_QP_OP_ERR
 *       flags only SIGNALED, SOLICITED, FENCE, INLINE      LOC_QP_OP_ERR
 *       INLINE: an opcode that may carry inline data, num_sge 0
 *                                                          LOC_QP_OP_ERR
 *               length <= the QP's max_inline              LOC_LEN_ERR
 *       else: num_sge <= the SQ's max_sge (1 for Reads)    LOC_QP_OP_ERR
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

u8 rsw_sges_check_user(const struct rdmap_sw_sge *sge, u32 num_sge,
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
	if (info->flags & RSW_OP_LOCAL || sqe->flags & ~RSW_SQE_USER_FLAGS)
		return RDMAP_SW_WC_LOC_QP_OP_ERR;
	if (sqe->flags & RDMAP_SW_SQE_INLINE) {
		if (!(info->flags & RSW_OP_INLINE) || sqe->num_sge)
			return RDMAP_SW_WC_LOC_QP_OP_ERR;
		if (sqe->length > qp->max_inline)
			return RDMAP_SW_WC_LOC_LEN_ERR;
		return RDMAP_SW_WC_SUCCESS;
	}
	if (info->flags & RSW_OP_READ)
		max = min_t(u32, max, RSW_MAX_SGE_RD);
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

enum rsw_wq_take {
	RSW_TAKE_NONE,		/* nothing posted */
	RSW_TAKE_OK,		/* *copy and *idx are the caller's */
	RSW_TAKE_BAD,		/* bad tail or entry: the QP must go to ERROR */
};

/*
 * rsw_wq_take() on a user queue.  The SQ's busy flag follows the doorbell
 * protocol of the ABI: 1 whenever an entry is taken; when the queue looks
 * empty, 0, a full barrier, and one more look at the tail, which catches
 * an entry whose producer saw busy still at 1 and did not ring.
 * wq->lock held.
 */
static enum rsw_wq_take rsw_wq_take_user(struct rsw_qp *qp, struct rsw_wq *wq,
					 void *copy, u32 *idx)
{
	bool sq = wq == &qp->sq;
	struct rsw_wq_slot *s;
	u8 status;

	if (wq->next == wq->tail) {
		if (!rsw_wq_user_tail(wq))
			return RSW_TAKE_BAD;
		if (wq->next == wq->tail && sq) {
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
	s = rsw_wq_slot(wq, wq->next);
	status = rsw_wq_user_shadow(qp, wq, copy, s);
	if (status == RDMAP_SW_WC_SUCCESS) {
		*idx = wq->next++;
		return RSW_TAKE_OK;
	}
	wq->next++;
	/* Taken and finished at once; it retires in its turn. */
	s->status = status;
	s->done = true;
	rsw_wq_retire(qp, wq);
	return RSW_TAKE_BAD;
}

/*
 * rsw_wq_take() on the receive queue of a QP with an SRQ: copy the SRQ's
 * next entry into the private ring (so it retires and flushes like any
 * receive) and validate the copy as a user entry, kernel SRQ or not.  A
 * bad entry completes here, on this QP's recv CQ, and fails this QP only.
 * rq.lock held.
 */
static enum rsw_wq_take rsw_wq_take_srq(struct rsw_qp *qp, struct rsw_wq *rq,
					struct rdmap_sw_rqe *rqe, u32 *idx,
					bool *limit)
{
	struct rsw_wq_slot *s;
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
	s = rsw_wq_slot(rq, rq->tail);
	memset(s, 0, sizeof(*s));
	s->wr_id = rqe->wr_id;
	s->opcode = RDMAP_SW_WC_RECV;
	s->signaled = true;
	status = rsw_sges_check_user(rqe->sge, rqe->num_sge, qp->srq->max_sge,
				     rqe->length);
	rq->tail++;
	if (status == RDMAP_SW_WC_SUCCESS) {
		*idx = rq->next++;
		return RSW_TAKE_OK;
	}
	rq->next++;
	s->status = status;
	s->done = true;
	rsw_wq_retire(qp, rq);
	return RSW_TAKE_BAD;
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

/*
 * Record the outcome @res of taken entry @idx and retire what is ready.  A
 * failure, or a completion lost to a full CQ, moves the QP to ERROR,
 * flushing everything not yet taken.  (Flushes themselves only happen in
 * ERROR, so a CQ overrun there needs nothing more.)
 */
static void rsw_wq_finish(struct rsw_qp *qp, struct rsw_wq *wq, u32 idx,
			  const struct rsw_wq_slot *res)
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
	s->byte_len = res->byte_len;
	s->ex_data = res->ex_data;
	s->vendor_err = res->vendor_err;
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

void rsw_qp_sq_complete(struct rsw_qp *qp, u32 idx, u8 status, u32 byte_len)
{
	struct rsw_wq_slot res = { .status = status, .byte_len = byte_len };

	rsw_wq_finish(qp, &qp->sq, idx, &res);
}
EXPORT_SYMBOL_IF_KUNIT(rsw_qp_sq_complete);

/*
 * Execute REG_MR.  The consumer may have deregistered the MR since it
 * posted the request, so the MR is looked up again by the index of the
 * new key, under a reference held while it is registered: a deregistered
 * MR is not found (LOC_PROT_ERR), and one that took its index since is
 * told apart by the identity kept at post time.  The pointer in the entry
 * is never followed.  A dereg_mr racing with this very registration
 * marks the MR dead under its lock first, and a dead MR is never made
 * valid again (rsw_mr_fastreg fails), so no peer access can find it valid
 * between dereg_mr's revocation and its unpublishing.
 */
static u8 rsw_sq_exec_reg(struct rsw_qp *qp, const struct rdmap_sw_sqe *sqe)
{
	struct rsw_mr *mr = rsw_mr_find_index(qp->rsw, sqe->reg_key);
	struct ib_reg_wr reg = {
		.key = sqe->reg_key,
		.access = sqe->reg_access,
	};
	u8 status = RDMAP_SW_WC_LOC_PROT_ERR;

	if (!mr)
		return status;
	reg.mr = &mr->ibmr;
	if ((uintptr_t)reg.mr == sqe->mr && !rsw_mr_fastreg(qp->base.pd, &reg))
		status = RDMAP_SW_WC_SUCCESS;
	rsw_mr_put(mr);
	return status;
}

/* Execute REG_MR or LOCAL_INV; the completion status. */
static u8 rsw_sq_exec_local(struct rsw_qp *qp, const struct rdmap_sw_sqe *sqe)
{
	struct ib_pd *pd = qp->base.pd;

	switch (sqe->opcode) {
	case RDMAP_SW_WR_REG_MR:
		return rsw_sq_exec_reg(qp, sqe);
	case RDMAP_SW_WR_LOCAL_INV:
		if (rsw_mr_invalidate_local(qp->rsw, pd, sqe->inv_stag, NULL))
			return RDMAP_SW_WC_LOC_PROT_ERR;
		return RDMAP_SW_WC_SUCCESS;
	}
	return RDMAP_SW_WC_LOC_QP_OP_ERR;
}

enum rsw_sq_take rsw_qp_sq_take(struct rsw_qp *qp, struct rdmap_sw_sqe *sqe,
				u32 *idx)
{
	if (!rsw_wq_take(qp, &qp->sq, sqe, idx))
		return RSW_SQ_EMPTY;
	if (sqe->opcode >= ARRAY_SIZE(rsw_sq_ops) ||
	    !(rsw_sq_ops[sqe->opcode].flags & RSW_OP_LOCAL))
		return RSW_SQ_WIRE;
	rsw_qp_sq_complete(qp, *idx, rsw_sq_exec_local(qp, sqe), 0);
	return RSW_SQ_LOCAL;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_qp_sq_take);

bool rsw_qp_rq_take(struct rsw_qp *qp, struct rdmap_sw_rqe *rqe, u32 *idx)
{
	return rsw_wq_take(qp, &qp->rq, rqe, idx);
}
EXPORT_SYMBOL_IF_KUNIT(rsw_qp_rq_take);

void rsw_qp_rq_complete(struct rsw_qp *qp, u32 idx,
			const struct rsw_rq_result *r)
{
	struct rsw_wq_slot res = {
		.status = r->status,
		.byte_len = r->byte_len,
		.ex_data = r->ex_data,
		.vendor_err = r->vendor_err,
		.cqe_flags = r->cqe_flags,
		.solicited = r->solicited,
	};

	rsw_wq_finish(qp, &qp->rq, idx, &res);
}
EXPORT_SYMBOL_IF_KUNIT(rsw_qp_rq_complete);

/* ------------------------------------------------------------ lifetime */

void rsw_qp_get(struct rsw_qp *qp)
{
	refcount_inc(&qp->ref);
}
EXPORT_SYMBOL_IF_KUNIT(rsw_qp_get);

void rsw_qp_put(struct rsw_qp *qp)
{
	if (refcount_dec_and_test(&qp->ref))
		complete(&qp->released);
}
EXPORT_SYMBOL_IF_KUNIT(rsw_qp_put);

struct rsw_qp *rsw_qp_lookup(struct rsw_device *rsw, u32 qpn)
{
	struct rsw_qp *qp;
	unsigned long flags;

	xa_lock_irqsave(&rsw_qps, flags);
	qp = xa_load(&rsw_qps, qpn);
	if (qp && (qp->rsw != rsw || !refcount_inc_not_zero(&qp->ref)))
		qp = NULL;
	xa_unlock_irqrestore(&rsw_qps, flags);
	return qp;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_qp_lookup);

/* ----------------------------------------------------------------- verbs */

static int rsw_qp_check_init(struct ib_qp *ibqp,
			     const struct ib_qp_init_attr *attr,
			     struct ib_udata *udata)
{
	const struct ib_qp_cap *cap = &attr->cap;

	if (attr->qp_type != IB_QPT_RC || attr->create_flags)
		return -EOPNOTSUPP;
	/* An SRQ of ours; its QP's receive capabilities are ignored. */
	if (attr->srq && (attr->srq->device != ibqp->device ||
			  attr->srq->srq_type != IB_SRQT_BASIC))
		return -EINVAL;
	/*
	 * A user QP's rings are mapped through its process's context; no
	 * request data is defined, so unknown input must be zero.
	 */
	if (udata && (!rdma_udata_to_drv_context(udata, struct rsw_ucontext,
						 base) ||
		      (udata->inlen &&
		       !ib_is_udata_cleared(udata, 0, udata->inlen))))
		return -EINVAL;
	if (!attr->send_cq || !attr->recv_cq ||
	    attr->send_cq->device != ibqp->device ||
	    attr->recv_cq->device != ibqp->device)
		return -EINVAL;
	if (attr->sq_sig_type != IB_SIGNAL_ALL_WR &&
	    attr->sq_sig_type != IB_SIGNAL_REQ_WR)
		return -EINVAL;
	if (cap->max_send_wr > RSW_MAX_QP_WR ||
	    cap->max_send_sge > RSW_MAX_SGE ||
	    cap->max_inline_data > RSW_MAX_INLINE)
		return -EINVAL;
	if (!attr->srq && (cap->max_recv_wr > RSW_MAX_QP_WR ||
			   cap->max_recv_sge > RSW_MAX_SGE))
		return -EINVAL;
	return 0;
}

static void rsw_qp_init_fields(struct rsw_qp *qp, struct ib_qp_init_attr *attr)
{
	qp->rsw = to_rsw_dev(qp->base.device);
	refcount_set(&qp->ref, 1);
	init_completion(&qp->released);
	spin_lock_init(&qp->lock);
	qp->state = RSW_QPS_IDLE;
	/*
	 * iWARP verbs create a QP in the Idle state, which is reported as INIT
	 * (as rdma-core's suite expects of an RNIC): RESET, INIT and RTR are
	 * all Idle here, and a ULP's RESET->INIT move stays legal.
	 */
	qp->idle_state = IB_QPS_INIT;
	qp->sig_all = attr->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->max_inline = attr->cap.max_inline_data;
	qp->srq = attr->srq ? to_rsw_srq(attr->srq) : NULL;
}

/* The capabilities the QP got: what is enforced, rings rounded up. */
static void rsw_qp_caps(const struct rsw_qp *qp, struct ib_qp_cap *cap)
{
	cap->max_send_wr = qp->sq.size;
	cap->max_recv_wr = qp->srq ? 0 : qp->rq.size;
	cap->max_send_sge = qp->sq.max_sge;
	cap->max_recv_sge = qp->srq ? 0 : qp->rq.max_sge;
	cap->max_inline_data = qp->max_inline;
}

static int rsw_wq_map(struct rsw_wq *wq, struct ib_ucontext *uctx,
		      u64 *offset)
{
	struct rsw_umap *um = rsw_umap_insert(uctx, wq->buf, wq->buf_len,
					      offset);

	if (IS_ERR(um))
		return PTR_ERR(um);
	wq->umap = um;		/* owns buf from now on */
	return 0;
}

/*
 * A user QP: map both queues (control page and ring each) and tell the
 * process where.  On failure, rsw_wq_free() removes what was mapped.
 */
static int rsw_qp_map(struct rsw_qp *qp, struct ib_udata *udata)
{
	struct ib_ucontext *uctx = &rdma_udata_to_drv_context(udata,
				struct rsw_ucontext, base)->base;
	struct rdmap_sw_uresp_create_qp resp = {
		.sq_len = qp->sq.buf_len,
		.sq_size = qp->sq.size,
		.max_inline = qp->max_inline,
	};
	int ret;

	ret = rsw_wq_map(&qp->sq, uctx, &resp.sq_offset);
	/* With an SRQ the receive queue is the kernel's: no mapping. */
	if (!ret && !qp->srq) {
		resp.rq_len = qp->rq.buf_len;
		resp.rq_size = qp->rq.size;
		ret = rsw_wq_map(&qp->rq, uctx, &resp.rq_offset);
	}
	if (ret)
		return ret;
	/* An older provider may pass a shorter response buffer. */
	return ib_copy_to_udata(udata, &resp, min(udata->outlen, sizeof(resp)));
}

#if IS_ENABLED(CONFIG_KUNIT)
/*
 * Give a fresh kernel QP the ring layout of a user QP (control page in
 * front of each ring, process-owned tails, validation at take time)
 * without mapping it anywhere: KUnit plays the process by writing the
 * rings.  Only before anything was posted or attached.  Process context.
 */
int rsw_qp_user_layout(struct ib_qp *ibqp)
{
	struct rsw_qp *qp = to_rsw_qp(ibqp);
	struct rsw_wq sq = qp->sq, rq = qp->rq;
	unsigned long flags;
	int ret;

	if (qp->sq.uctrl || qp->stream || qp->sq.tail || qp->rq.tail ||
	    qp->srq)
		return -EINVAL;
	ret = rsw_wq_alloc_buf(&sq, true);
	if (ret)
		return ret;
	ret = rsw_wq_alloc_buf(&rq, true);
	if (ret) {
		vfree(sq.buf);
		return ret;
	}
	spin_lock_irqsave(&qp->lock, flags);
	rsw_qp_lock_queues(qp);
	swap(qp->sq.buf, sq.buf);
	qp->sq.buf_len = sq.buf_len;
	qp->sq.uctrl = sq.uctrl;
	qp->sq.ring = sq.ring;
	swap(qp->rq.buf, rq.buf);
	qp->rq.buf_len = rq.buf_len;
	qp->rq.uctrl = rq.uctrl;
	qp->rq.ring = rq.ring;
	rsw_qp_unlock_queues(qp);
	spin_unlock_irqrestore(&qp->lock, flags);
	vfree(sq.buf);
	vfree(rq.buf);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_qp_user_layout);
#endif

/* ops.create_qp.  Process context, may sleep. */
static int rsw_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *attr,
			 struct ib_udata *udata)
{
	struct rsw_qp *qp = to_rsw_qp(ibqp);
	struct ib_qp_cap *cap = &attr->cap;
	u32 qpn;
	int ret;

	ret = rsw_qp_check_init(ibqp, attr, udata);
	if (ret)
		return ret;
	if (atomic_inc_return(&rsw_qp_count) > RSW_MAX_QP) {
		ret = -ENOMEM;
		goto err_count;
	}
	rsw_qp_init_fields(qp, attr);
	ret = rsw_wq_alloc(&qp->sq, cap->max_send_wr, max(cap->max_send_sge, 1U),
			   sizeof(struct rdmap_sw_sqe), attr->send_cq,
			   &rsw_sq_lock_key, udata);
	if (ret)
		goto err_count;
	if (qp->srq)	/* private: the SRQ entries it took, never mapped */
		ret = rsw_wq_alloc(&qp->rq, RSW_SRQ_QP_TAKEN, qp->srq->max_sge,
				   sizeof(struct rdmap_sw_rqe), attr->recv_cq,
				   &rsw_rq_lock_key, false);
	else
		ret = rsw_wq_alloc(&qp->rq, cap->max_recv_wr,
				   max(cap->max_recv_sge, 1U),
				   sizeof(struct rdmap_sw_rqe), attr->recv_cq,
				   &rsw_rq_lock_key, udata);
	if (ret)
		goto err_free_sq;
	/* Reserve the QPN now, publish the QP once it is complete. */
	ret = xa_alloc_cyclic_irq(&rsw_qps, &qpn, NULL,
				  XA_LIMIT(1, RSW_QPN_MAX), &rsw_qpn_next,
				  GFP_KERNEL);
	if (ret < 0)
		goto err_free_rq;
	ibqp->qp_num = qpn;
	rsw_qp_caps(qp, cap);
	if (udata) {
		ret = rsw_qp_map(qp, udata);
		if (ret)
			goto err_erase;
	}
	ret = xa_err(xa_store_irq(&rsw_qps, qpn, qp, GFP_KERNEL));
	if (ret)
		goto err_erase;
	return 0;

err_erase:
	xa_erase_irq(&rsw_qps, qpn);
err_free_rq:
	rsw_wq_free(&qp->rq);
err_free_sq:
	rsw_wq_free(&qp->sq);
err_count:
	atomic_dec(&rsw_qp_count);
	return ret;
}

/* ops.destroy_qp.  Process context; waits for every holder (see top). */
static int rsw_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct rsw_qp *qp = to_rsw_qp(ibqp);
	unsigned long flags;

	might_sleep();
	xa_erase_irq(&rsw_qps, ibqp->qp_num);
	spin_lock_irqsave(&qp->lock, flags);
	rsw_qp_lock_queues(qp);
	qp->dead = true;
	rsw_qp_unlock_queues(qp);
	rsw_qp_kick_stream(qp);		/* it ends and drops its reference */
	spin_unlock_irqrestore(&qp->lock, flags);

	rsw_qp_put(qp);
	wait_for_completion(&qp->released);
	rsw_stream_free(qp);

	rsw_cq_discard_qp(qp->sq.cq, ibqp);
	if (qp->rq.cq != qp->sq.cq)
		rsw_cq_discard_qp(qp->rq.cq, ibqp);
	rsw_wq_free(&qp->rq);
	rsw_wq_free(&qp->sq);
	atomic_dec(&rsw_qp_count);
	return 0;
}

#define RSW_QP_ATTR_MASK (IB_QP_STATE | IB_QP_CUR_STATE | \
			  IB_QP_ACCESS_FLAGS | IB_QP_PKEY_INDEX | IB_QP_PORT | \
			  IB_QP_MAX_QP_RD_ATOMIC | IB_QP_MAX_DEST_RD_ATOMIC | \
			  IB_QP_EN_SQD_ASYNC_NOTIFY)

static int rsw_qp_check_modify(const struct ib_qp_attr *attr, int mask,
			       struct ib_udata *udata)
{
	if (mask & ~RSW_QP_ATTR_MASK)
		return -EOPNOTSUPP;
	if (udata && (udata->inlen || udata->outlen))
		return -EOPNOTSUPP;
	if (mask & IB_QP_PORT && attr->port_num != RSW_PORT)
		return -EINVAL;
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC &&
	     attr->max_rd_atomic > RSW_MAX_RD_ATOM) ||
	    (mask & IB_QP_MAX_DEST_RD_ATOMIC &&
	     attr->max_dest_rd_atomic > RSW_MAX_RD_ATOM))
		return -EINVAL;
	return 0;
}

/* ops.modify_qp.  Process context (never sleeps). */
static int rsw_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
			 int mask, struct ib_udata *udata)
{
	struct rsw_qp *qp = to_rsw_qp(ibqp);
	unsigned long flags;
	int ret;

	ret = rsw_qp_check_modify(attr, mask, udata);
	if (ret)
		return ret;
	spin_lock_irqsave(&qp->lock, flags);
	if (mask & IB_QP_CUR_STATE && attr->cur_qp_state != rsw_qp_ib_state(qp))
		ret = -EINVAL;
	else if (mask & IB_QP_STATE)
		ret = rsw_qp_change_state(qp, attr->qp_state);
	if (!ret && mask & IB_QP_STATE)
		rsw_qp_kick_stream(qp);
	if (!ret) {
		if (mask & IB_QP_ACCESS_FLAGS)
			WRITE_ONCE(qp->access, attr->qp_access_flags);
		if (mask & IB_QP_MAX_QP_RD_ATOMIC)
			qp->ord = attr->max_rd_atomic;
		if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
			qp->ird = attr->max_dest_rd_atomic;
	}
	spin_unlock_irqrestore(&qp->lock, flags);
	if (!ret && mask & IB_QP_STATE)
		rsw_qp_last_wqe(qp);
	return ret;
}

/* ops.query_qp.  Process context. */
static int rsw_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
			int mask, struct ib_qp_init_attr *init)
{
	struct rsw_qp *qp = to_rsw_qp(ibqp);
	unsigned long flags;

	memset(attr, 0, sizeof(*attr));
	memset(init, 0, sizeof(*init));
	spin_lock_irqsave(&qp->lock, flags);
	attr->qp_state = rsw_qp_ib_state(qp);
	attr->qp_access_flags = qp->access;
	attr->max_rd_atomic = qp->ord;
	attr->max_dest_rd_atomic = qp->ird;
	spin_unlock_irqrestore(&qp->lock, flags);
	attr->cur_qp_state = attr->qp_state;
	attr->port_num = RSW_PORT;
	attr->path_mtu = IB_MTU_4096;
	rsw_qp_caps(qp, &attr->cap);

	init->qp_type = IB_QPT_RC;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->qp_context = ibqp->qp_context;
	init->sq_sig_type = qp->sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
	init->cap = attr->cap;
	return 0;
}

const struct ib_device_ops rsw_qp_ops = {
	.create_qp = rsw_create_qp,
	.destroy_qp = rsw_destroy_qp,
	.modify_qp = rsw_modify_qp,
	.query_qp = rsw_query_qp,
	.post_send = rsw_post_send,
	.post_recv = rsw_post_recv,

	INIT_RDMA_OBJ_SIZE(ib_qp, rsw_qp, base),
};
