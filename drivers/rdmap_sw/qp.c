// SPDX-License-Identifier: GPL-2.0
/*
 * RC queue pairs: creation, the RFC 5040 section 6 stream states driven by
 * modify_qp, posting to the send and receive queues, and the local
 * operations (REG_MR, LOCAL_INV) the send queue executes.  The rings
 * themselves, and the hooks through which the TX and RX engines take work
 * requests and complete them, are ring.c's.
 *
 * Kernel and user QPs.  A kernel QP's entries are written by post_send /
 * post_recv, which validate the work request and fill the slot shadow.  A
 * user QP (create_qp with udata) has its rings mapped into the process
 * (umap.c) behind the ABI's control page: the process writes entries and
 * ctrl.tail itself, and post_send / post_recv only serve as the doorbell.
 * Its entries are copied, validated and given their shadow when an engine
 * takes them (ring.c); a bad tail or entry moves that QP alone to ERROR.
 *
 * Shared receive queues (srq.c).  A QP created with an SRQ has no receive
 * ring of its own to post to (post_recv fails with -EINVAL): its rq is a
 * small private ring into which a take copies the SRQ's next entry (ring.c),
 * so the receives it took complete, retire and flush like any others, on
 * its own recv CQ.  Once such a QP is in ERROR with nothing taken left, it
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
 *   counters     the QP's route (qp->stats, stats.h) holds a reference on
 *                the device's counter set from create_qp until destroy_qp
 *                is past the stream; what the QP, its stream, TX and RX
 *                count goes through it (to an rdma counter's set while
 *                the QP is bound to one, stats.c).
 *   MRs          a queued REG_MR holds no MR: it names it by the index of
 *                its key and finds it again, with a reference held for the
 *                registration only, when it executes (rsw_sq_exec_reg()).
 *
 *   windows      a BIND_MW (user QPs) names the window by the index of its
 *                new STag and the MR by its lkey, both looked up again,
 *                PD-checked and held by reference while it executes
 *                (rsw_mw_bind()); a type 2 window is bound for the QP
 *                (its serial, never reused) and serves no other.  A
 *                destroyed QP's type 2 windows stay bound and serve
 *                nobody: dealloc_mw (or dereg_mr of their MR) frees them
 *                (see Documentation/userspace.rst).
 *
 * Locks, all irqsave: qp->lock -> sq.lock -> rq.lock -> rsw_cq.prod_lock.
 * qp->state and qp->dead change only with all three QP locks held, so
 * holding any one of them is enough to read them (ring.c's takes and
 * retires do, under their queue's lock).  Local operations (REG_MR,
 * LOCAL_INV, BIND_MW) run with no QP lock held: mem.c takes BH locks.
 */
#include <linux/vmalloc.h>
#include <linux/xarray.h>
#include <rdma/uverbs_ioctl.h>

#include "internal.h"
#include "ring.h"
#include "trace.h"

/* QPN -> QP for every device; QPN 0 is never used (XA_FLAGS_ALLOC1). */
static DEFINE_XARRAY_FLAGS(rsw_qps, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);
static u32 rsw_qpn_next;
/* rsw_qp.serial: 64 bits, never reused, unlike QPNs. */
static atomic64_t rsw_qp_serial = ATOMIC64_INIT(0);
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
 * qp->state becomes @state, traced when it changes.  All three QP locks
 * held (the rule above rsw_qp_enter_idle()).
 */
static void rsw_qp_set_state(struct rsw_qp *qp, enum rsw_qp_state state)
{
	lockdep_assert_held(&qp->rq.lock);	/* the innermost of the three */
	if (qp->state != state)
		trace_rsw_qp_state(qp->base.qp_num, qp->state, state);
	qp->state = state;
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
		sq->close_bad = false;	/* rsw_qp_sq_close()'s, of this close */
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
	/* No Terminate cause outlives the stream it belonged to. */
	qp->term_vendor_err = 0;
	WRITE_ONCE(qp->ulp_err, false);
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
 * CLOSING and TERMINATE change the state only (but for a user SQ's tail,
 * accepted as the close starts: rsw_qp_sq_close()); the stream's work
 * item, kicked after every state change, closes the connection in order
 * (CLOSING) or sends a Terminate and ends in ERROR (TERMINATE, see
 * rsw_stream_run_locked()).
 */
static int rsw_qp_enter_stream_end(struct rsw_qp *qp, enum ib_qp_state to)
{
	if (to == IB_QPS_SQD)
		rsw_qp_sq_close(qp);
	return 0;
}

static int rsw_qp_enter_error(struct rsw_qp *qp, enum ib_qp_state to)
{
	if (qp->state == RSW_QPS_ERROR)
		return 0;
	/* State first: retiring reads it through the dead/state rules. */
	rsw_qp_set_state(qp, RSW_QPS_ERROR);
	if (qp->sq.uctrl) {
		/*
		 * Nothing drains a user SQ in ERROR: have the process ring,
		 * so that what it posts from now on is flushed (doorbell).
		 */
		qp->sq.keep_busy = false;
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
		rsw_qp_set_state(qp, next);
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

void rsw_qp_set_error_term(struct rsw_qp *qp, u32 vendor_err)
{
	rsw_qp_term_cause(qp, vendor_err);
	rsw_qp_set_error(qp);
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
		rsw_qp_set_state(qp, RSW_QPS_RTS);
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
	case RDMAP_SW_WR_ATOMIC_CMP_AND_SWP:
	case RDMAP_SW_WR_ATOMIC_FETCH_AND_ADD:
	case RDMAP_SW_WR_MASKED_ATOMIC_CMP_AND_SWP:
	case RDMAP_SW_WR_MASKED_ATOMIC_FETCH_AND_ADD:
		sqe->rstag = atomic_wr(wr)->rkey;
		sqe->raddr = atomic_wr(wr)->remote_addr;
		sqe->atomic.compare_add = atomic_wr(wr)->compare_add;
		sqe->atomic.swap = atomic_wr(wr)->swap;
		sqe->atomic.compare_add_mask = atomic_wr(wr)->compare_add_mask;
		sqe->atomic.swap_mask = atomic_wr(wr)->swap_mask;
		break;
	case RDMAP_SW_WR_RDMA_WRITE_WITH_IMM:
		sqe->imm_data = (__force u32)wr->ex.imm_data;
		sqe->rstag = rdma_wr(wr)->rkey;
		sqe->raddr = rdma_wr(wr)->remote_addr;
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
	case RDMAP_SW_WR_BIND_MW:
		/* Kernel ULPs have no memory windows (user QPs only). */
		return -EINVAL;
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
	info = rsw_sq_op(op);
	memset(sqe, 0, offsetof(struct rdmap_sw_sqe, sge));
	sqe->wr_id = wr->wr_id;
	sqe->opcode = op;
	if (wr->send_flags & IB_SEND_FENCE)
		sqe->flags |= RDMAP_SW_SQE_FENCE;
	if (wr->send_flags & IB_SEND_SOLICITED)
		sqe->flags |= RDMAP_SW_SQE_SOLICITED;
	if (qp->sig_all || (wr->send_flags & IB_SEND_SIGNALED))
		sqe->flags |= RDMAP_SW_SQE_SIGNALED;

	if (wr->send_flags & IB_SEND_INLINE && info->flags & RSW_WR_INLINE) {
		ret = rsw_sqe_inline(qp, wr, sqe);
	} else if (info->flags & RSW_WR_SGE) {
		u32 max = qp->sq.max_sge;

		if (info->flags & RSW_WR_READ)
			max = min_t(u32, max, RSW_MAX_SGE_RD);
		if (info->flags & RSW_WR_ATOMIC)
			max = 1;
		ret = rsw_wqe_sges(sqe->sge, wr->sg_list, wr->num_sge, max,
				   &sqe->length);
		sqe->num_sge = wr->num_sge;
		/* The result of an atomic is one 64-bit word. */
		if (!ret && info->flags & RSW_WR_ATOMIC &&
		    (wr->num_sge != 1 || sqe->length != sizeof(u64)))
			ret = -EINVAL;
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
	s->opcode = rsw_sq_op(sqe->opcode)->wc;
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
 * them: nothing else would, since the stream is gone.  Traced under the
 * queue's lock, which keeps wq->next still (the tail is the process's).
 */
static int rsw_user_doorbell(struct rsw_qp *qp, struct rsw_wq *wq)
{
	bool can_sleep = preemptible() && !rcu_preempt_depth();
	struct rsw_stream *direct = NULL;
	unsigned long flags;
	int ret = 0;

	spin_lock_irqsave(&wq->lock, flags);
	if (trace_rsw_doorbell_enabled())
		trace_rsw_doorbell(qp->base.qp_num, wq == &qp->sq,
				   READ_ONCE(wq->uctrl->tail) - wq->next);
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
	if (!ret)		/* a doorbell that does work: counted */
		rsw_route_inc(&qp->stats, RSW_STAT_USER_DOORBELLS);
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
	rsw_route_inc(&qp->stats, RSW_STAT_KERNEL_SEND_POSTS);
	for (; wr; wr = wr->next) {
		ret = rsw_sq_post_one(qp, wr);
		if (ret)
			break;
		rsw_route_inc(&qp->stats, RSW_STAT_KERNEL_SEND_WRS);
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
	rsw_route_inc(&qp->stats, RSW_STAT_KERNEL_RECV_POSTS);
	for (; wr; wr = wr->next) {
		ret = rsw_rq_post_one(qp, wr);
		if (ret)
			break;
		rsw_route_inc(&qp->stats, RSW_STAT_KERNEL_RECV_WRS);
	}
	spin_unlock_irqrestore(&qp->rq.lock, flags);
	if (ret)
		*bad_wr = wr;
	return ret;
}

/* ---------------------------------------------------- local operations */

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

/* Execute REG_MR, LOCAL_INV or BIND_MW; the completion status. */
u8 rsw_sq_exec_local(struct rsw_qp *qp, const struct rdmap_sw_sqe *sqe)
{
	struct ib_pd *pd = qp->base.pd;

	switch (sqe->opcode) {
	case RDMAP_SW_WR_REG_MR:
		return rsw_sq_exec_reg(qp, sqe);
	case RDMAP_SW_WR_BIND_MW:
		if (rsw_mw_bind(qp->rsw, pd, qp->serial, &sqe->bind))
			return RDMAP_SW_WC_MW_BIND_ERR;
		return RDMAP_SW_WC_SUCCESS;
	case RDMAP_SW_WR_LOCAL_INV:
		if (rsw_mr_invalidate_local(qp->rsw, pd, qp->serial,
					    sqe->inv_stag, NULL))
			return RDMAP_SW_WC_LOC_PROT_ERR;
		return RDMAP_SW_WC_SUCCESS;
	}
	return RDMAP_SW_WC_LOC_QP_OP_ERR;
}

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
	if (udata && (!rsw_udata_abi_ok(udata) ||
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
	qp->serial = atomic64_inc_return(&rsw_qp_serial);
	rsw_qp_caps(qp, cap);
	if (udata) {
		ret = rsw_qp_map(qp, udata);
		if (ret)
			goto err_erase;
	}
	/* Before publishing: a stream may attach and count at once. */
	qp->stats.dev = rsw_stats_get(qp->rsw->stats);
	ret = xa_err(xa_store_irq(&rsw_qps, qpn, qp, GFP_KERNEL));
	if (ret)
		goto err_put_stats;
	return 0;

err_put_stats:
	rsw_stats_put(qp->stats.dev);
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
	/* Nothing counts for @qp any more: its route's references go. */
	rsw_counter_qp_gone(qp);
	rsw_stats_put(qp->stats.dev);

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
	/* The stream's LINGER after our Terminate ends on it (stream.c). */
	if (!ret && mask & IB_QP_STATE && attr->qp_state == IB_QPS_ERR)
		WRITE_ONCE(qp->ulp_err, true);
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
