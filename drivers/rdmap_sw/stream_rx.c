// SPDX-License-Identifier: GPL-2.0
/*
 * rdmap_sw: a connection's RX delivery side (shared types in
 * stream_priv.h; model, contexts and lifetimes at the top of stream.c).
 * The RX parser (rx.c) calls back here to find the receive or Read a
 * segment belongs to, place its payload into registered memory, and
 * complete receives and Reads; Read Requests and Terminates are handed to
 * the TX side through the stream's state, which the socket lock guards.
 *
 * Contexts.  The parser runs from the socket's data-ready callback
 * (rsw_stream_rx_ready(): softirq with the socket's spinlock held, or the
 * stream's work owning the socket) for a bounded run, and from the work
 * item with the socket owned (rsw_stream_rx()).  Nothing here sleeps but
 * rsw_stream_deferred_finish() (process context, parser paused); nothing
 * here sends.
 *
 * Untagged messages are accepted in order only: the window of a queue is
 * its next MSN, so a segment of a later message (which a sender on one TCP
 * stream has no reason to send early) is refused as "no buffer".
 */
#include <linux/tcp.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "internal.h"
#include "mem.h"
#include "stream_priv.h"
#include "trace.h"

/* The work item's RX per call: octets and segments. */
#define RSW_STREAM_RX_BUDGET	(256 * 1024)
#define RSW_STREAM_RX_SEGS	1024
/*
 * RX in data-ready (softirq) per call: octets, and segments, since the
 * cost of a segment is set by the peer and the receive's SGEs, not its
 * size.  The work item goes on from there.
 */
#define RSW_STREAM_RX_SOFT_BUDGET	(256 * 1024)
#define RSW_STREAM_RX_SOFT_SEGS		64

/*
 * Responder of the peer-to-peer model before the ready-to-receive message
 * (RFC 6581 section 5): the peer's first FPDU must be the zero-length
 * message of the negotiated type; a plain Send or one with Solicited
 * Event is a Send RTR.
 */
static bool rsw_stream_is_rtr(const struct rsw_stream *s,
			      const struct rsw_rx_seg *seg)
{
	switch (s->conn.rtr) {
	case RSW_MPA_RTR_WRITE:
		return seg->opcode == RSW_OP_WRITE && !seg->payload_len &&
		       seg->last;
	case RSW_MPA_RTR_READ:
		return seg->opcode == RSW_OP_READ_REQ &&
		       !seg->hdr->rreq.rreq.read_size;
	default:
		return (seg->opcode == RSW_OP_SEND ||
			seg->opcode == RSW_OP_SEND_SE) &&
		       !seg->payload_len && seg->last;
	}
}

/* The awaited RTR arrived: counted by its type. */
static void rsw_stream_rtr_seen(struct rsw_stream *s)
{
	s->rtr_wait = false;
	rsw_route_inc(s->route, rsw_stat_rtr(s->conn.rtr, true));
}

/*
 * Anything but the RTR (or a Terminate) while it is awaited is refused
 * before any of it is placed or delivered: RDMAP Remote Operation Error,
 * unexpected opcode.
 */
static bool rsw_stream_rtr_refused(const struct rsw_stream *s,
				   const struct rsw_rx_seg *seg,
				   struct rsw_term_cause *term)
{
	if (!s->rtr_wait || seg->opcode == RSW_OP_TERMINATE ||
	    rsw_stream_is_rtr(s, seg))
		return false;
	*term = RSW_TERM_CAUSE(RSW_TERM_LAYER_RDMAP, RSW_RDMAP_ET_REMOTE_OP,
			       RSW_RDMAP_EC_OPCODE);
	return true;
}

static void rsw_stream_mr_term(struct rsw_term_cause *t, enum rsw_mr_err err,
			       enum rsw_mr_use use)
{
	*t = rsw_mr_err_to_term(err, use);
}

/* Take the receive WQE for the next Send; false if none is posted. */
static bool rsw_stream_recv_take(struct rsw_stream *s)
{
	struct rsw_stream_recv *r = &s->recv;

	if (r->active)
		return true;
	memset(r, 0, offsetof(struct rsw_stream_recv, rqe));
	if (s->rtr_wait && s->conn.rtr == RSW_MPA_RTR_SEND) {
		r->active = true;
		r->rtr = true;
		return true;
	}
	if (!rsw_qp_rq_take(s->qp, &r->rqe, &r->idx))
		return false;
	r->active = true;
	/* The copy is ours: an entry the ring got wrong places nothing. */
	if (r->rqe.num_sge > RDMAP_SW_MAX_SGE) {
		r->rqe.num_sge = 0;
		r->rqe.length = 0;
		r->status = RDMAP_SW_WC_LOC_QP_OP_ERR;
	}
	return true;
}

static void rsw_stream_window(void *ctx, u8 qn, u32 msn,
			      struct rsw_rx_window *w)
{
	struct rsw_stream *s = ctx;

	w->msn = s->msn[qn];
	switch (qn) {
	case RSW_QN_SEND:
		if (rsw_stream_recv_take(s)) {
			w->count = 1;
			w->len = s->recv.rtr ? 0 : s->recv.rqe.length;
		}
		break;
	case RSW_QN_READ_REQ:
		w->count = s->rr_ird - (s->rr_tail - s->rr_head);
		break;
	case RSW_QN_TERMINATE:
		w->count = 1;
		break;
	case RSW_QN_ATOMIC_RESP:
		/* Responses come in request order: the oldest must be ours. */
		w->count = !s->rtr_read && rsw_tx_read_oldest(&s->tx) &&
			   rsw_tx_read_oldest(&s->tx)->atomic;
		break;
	}
}

/* Copy @len octets at message offset @mo into the receive WQE's SGEs. */
static bool rsw_stream_place_untagged(void *ctx, const struct rsw_rx_seg *seg,
				      u32 mo, const void *data, u32 len,
				      struct rsw_term_cause *term)
{
	struct rsw_stream *s = ctx;
	struct rsw_stream_recv *r = &s->recv;
	struct rsw_mr_ref ref;
	enum rsw_mr_err err;
	u32 i, off = mo;

	if (rsw_stream_rtr_refused(s, seg, term))
		return false;
	if (seg->qn != RSW_QN_SEND || !r->active || r->rtr)
		goto catastrophic;
	for (i = 0; i < r->rqe.num_sge && len; i++) {
		const struct rdmap_sw_sge *sge = &r->rqe.sge[i];
		u32 n;

		if (off >= sge->length) {
			off -= sge->length;
			continue;
		}
		n = min(len, sge->length - off);
		err = rsw_mr_get(s->qp->rsw, s->qp->base.pd, sge->lkey,
				 sge->addr + off, n, IB_ACCESS_LOCAL_WRITE,
				 &ref);
		if (!err) {
			err = rsw_mr_copy_to(&ref, sge->addr + off, data, n);
			rsw_mr_ref_put(&ref);
		}
		if (err) {
			r->status = RDMAP_SW_WC_LOC_PROT_ERR;
			goto catastrophic;
		}
		data += n;
		len -= n;
		off = 0;
	}
	if (!len)
		return true;
catastrophic:
	/* Our receive buffer failed us, not the peer: a local error. */
	*term = RSW_TERM_CAUSE(RSW_TERM_LAYER_RDMAP,
			       RSW_RDMAP_ET_CATASTROPHIC, 0);
	return false;
}

/* Tagged payload: Write into an MR, or Read Response into our sink. */
static bool rsw_stream_place_tagged(void *ctx, const struct rsw_rx_seg *seg,
				    u64 to, const void *data, u32 len,
				    struct rsw_term_cause *term)
{
	struct rsw_stream *s = ctx;
	u32 right = IB_ACCESS_REMOTE_WRITE;
	struct rsw_mr_ref ref;
	enum rsw_mr_err err;

	if (rsw_stream_rtr_refused(s, seg, term))
		return false;
	if (seg->opcode == RSW_OP_READ_RESP) {
		const struct rsw_tx_rd *rd = rsw_tx_read_oldest(&s->tx);

		/*
		 * Only the sink of the oldest outstanding Read, and only
		 * the range it asked for, whatever rights the MR has.
		 */
		if (!rd || s->rtr_read || rd->atomic ||
		    seg->stag != rd->sink_stag) {
			*term = RSW_TERM_CAUSE(RSW_TERM_LAYER_DDP,
					       RSW_DDP_ET_TAGGED,
					       RSW_DDP_EC_T_INVALID_STAG);
			return false;
		}
		if (to < rd->sink_to || to - rd->sink_to > rd->len ||
		    len > rd->len - (to - rd->sink_to)) {
			*term = RSW_TERM_CAUSE(RSW_TERM_LAYER_DDP,
					       RSW_DDP_ET_TAGGED,
					       RSW_DDP_EC_T_BASE_BOUNDS);
			return false;
		}
		right = IB_ACCESS_LOCAL_WRITE;
		s->rresp_placed += len;
	}
	err = rsw_mr_get_qp(s->qp->rsw, s->qp->base.pd, s->qp->serial,
			    seg->stag, to, len, right, &ref);
	if (!err) {
		err = rsw_mr_copy_to(&ref, to, data, len);
		rsw_mr_ref_put(&ref);
	}
	if (err) {
		rsw_stream_mr_term(term, err, RSW_MR_USE_TAGGED);
		return false;
	}
	return true;
}

/*
 * A Read or Atomic of ours has its Response: the work must look if TX
 * holds a WQE back for the Reads (ORD, a fence), or if an orderly close
 * waits for them (rsw_stream_close_ready(), stream.c).
 */
static void rsw_stream_read_wake(struct rsw_stream *s)
{
	if (s->tx.sqe_pending ||
	    READ_ONCE(s->qp->state) == RSW_QPS_CLOSING)
		s->rx_wake = true;
}

/* The last segment of a Read Response: complete the oldest Read. */
static bool rsw_stream_read_done(struct rsw_stream *s,
				 struct rsw_term_cause *term)
{
	const struct rsw_tx_rd *oldest = rsw_tx_read_oldest(&s->tx);
	u32 placed = s->rresp_placed;
	struct rsw_tx_rd rd;
	u8 status = RDMAP_SW_WC_SUCCESS;
	u32 idx;

	s->rresp_placed = 0;
	if (!oldest || oldest->atomic || placed != oldest->len) {
		/* Nothing asked for, or not all of what was asked. */
		*term = RSW_TERM_CAUSE(RSW_TERM_LAYER_RDMAP,
				       RSW_RDMAP_ET_REMOTE_OP,
				       RSW_RDMAP_EC_OPCODE);
		return false;
	}
	rd = *oldest;
	rsw_tx_read_done(&s->tx, &idx);
	rsw_stream_read_wake(s);
	if (s->rtr_read) {
		s->rtr_read = false;
		s->rx_wake = true;
		return true;
	}
	if (rd.inv &&
	    rsw_mr_invalidate_local(s->qp->rsw, s->qp->base.pd,
				    s->qp->serial, rd.inv_stag,
				    &s->deferred.mr))
		status = RDMAP_SW_WC_LOC_PROT_ERR;
	if (s->deferred.mr) {
		s->deferred.sq = true;
		s->deferred.idx = rd.idx;
		s->deferred.sq_status = status;
		s->deferred.sq_len = rd.len;
		rsw_rx_pause(&s->rx);
		s->rx_wake = true;
		return true;
	}
	rsw_qp_sq_complete(s->qp, rd.idx, status, rd.len);
	return true;
}

/* The last segment of a Send: invalidate if asked, complete the receive. */
static bool rsw_stream_send_done(struct rsw_stream *s,
				 const struct rsw_rx_seg *seg,
				 struct rsw_term_cause *term)
{
	struct rsw_stream_recv *r = &s->recv;
	struct rsw_rq_result res = {
		.status = r->status,
		.byte_len = seg->mo + seg->payload_len,
		.solicited = rsw_rdmap_op_solicited(seg->opcode),
	};
	enum rsw_mr_err err;

	s->msn[RSW_QN_SEND]++;
	r->active = false;
	/* An Immediate Data after this Send follows no Write. */
	s->write_last = 0;
	if (r->rtr) {
		rsw_stream_rtr_seen(s);
		return true;
	}
	if (rsw_rdmap_op_inval(seg->opcode)) {
		err = rsw_mr_invalidate_remote(s->qp->rsw, s->qp->base.pd,
					       s->qp->serial, seg->inval_stag,
					       &s->deferred.mr);
		if (err) {
			rsw_stream_mr_term(term, err, RSW_MR_USE_INVALIDATE);
			/* Before the completion in error moves the QP. */
			rsw_qp_term_cause(s->qp, rsw_term_vendor_err(term));
			res.status = RDMAP_SW_WC_REM_INV_REQ_ERR;
			rsw_qp_rq_complete(s->qp, r->idx, &res);
			return false;
		}
		res.cqe_flags = RDMAP_SW_CQE_WITH_INV;
		res.ex_data = seg->inval_stag;
	}
	if (s->deferred.mr) {
		s->deferred.sq = false;
		s->deferred.idx = r->idx;
		s->deferred.rq = res;
		rsw_rx_pause(&s->rx);
		s->rx_wake = true;
		return true;
	}
	rsw_qp_rq_complete(s->qp, r->idx, &res);
	return true;
}

/*
 * Delivery handlers of the opcode table (opcode.h): @seg arrived whole and
 * valid; false refuses it with @term.
 */
bool rsw_stream_deliver_write(struct rsw_stream *s,
			      const struct rsw_rx_seg *seg,
			      struct rsw_term_cause *term)
{
	if (s->rtr_wait && s->conn.rtr == RSW_MPA_RTR_WRITE &&
	    !seg->payload_len)
		rsw_stream_rtr_seen(s);
	s->write_len = min_t(u64, (u64)s->write_len + seg->payload_len,
			     U32_MAX);
	if (seg->last) {
		s->write_last = s->write_len;
		s->write_len = 0;
	}
	return true;
}

/*
 * Immediate Data (RFC 7306 section 6): completes the next receive as
 * RECV_RDMA_WITH_IMM, with the first four of the eight octets as the
 * verbs' immediate data and the length of the Write before it, if any, as
 * byte_len (a Write with Immediate's two messages).
 */
bool rsw_stream_deliver_imm(struct rsw_stream *s,
			    const struct rsw_rx_seg *seg,
			    struct rsw_term_cause *term)
{
	struct rsw_stream_recv *r = &s->recv;
	struct rsw_rq_result res = {
		.status = r->status,
		.opcode = RDMAP_SW_WC_RECV_RDMA_WITH_IMM,
		.cqe_flags = RDMAP_SW_CQE_WITH_IMM,
		.byte_len = s->write_last,
		.solicited = rsw_rdmap_op_solicited(seg->opcode),
	};

	/*
	 * Not the zero-length Send the RTR exchange announced, nor the end
	 * of a Send under way in this receive: refused, the receive (if a
	 * WQE) stays active and is flushed.
	 */
	if (r->rtr || r->partial) {
		*term = RSW_TERM_CAUSE(RSW_TERM_LAYER_RDMAP,
				       RSW_RDMAP_ET_REMOTE_OP,
				       RSW_RDMAP_EC_OPCODE);
		return false;
	}
	s->msn[RSW_QN_SEND]++;
	r->active = false;
	s->write_last = 0;
	memcpy(&res.ex_data, &seg->hdr->imm.imm, sizeof(res.ex_data));
	rsw_qp_rq_complete(s->qp, r->idx, &res);
	return true;
}

/*
 * An Atomic Request: owed an Atomic Response, executed when it is its
 * turn among the owed responses (TX, rsw_tx_read_response()).  The
 * 64-bit alignment and AOpCode were checked by the parser.
 */
bool rsw_stream_deliver_atomic_req(struct rsw_stream *s,
				   const struct rsw_rx_seg *seg,
				   struct rsw_term_cause *term)
{
	const struct rsw_rdmap_atomic_req *a = &seg->hdr->atomic_req.atomic;
	struct rsw_tx_rresp *rr = &s->rr[s->rr_tail++ % s->rr_size];

	*rr = (struct rsw_tx_rresp) {
		.src_stag = be32_to_cpu(a->stag),
		.src_to = be64_to_cpu(a->to),
		.len = sizeof(u64),
		.atomic = true,
		.req_id = a->req_id,
		.op = {
			.op = rsw_atomic_op(a),
			.data = be64_to_cpu(a->data),
			.data_mask = be64_to_cpu(a->data_mask),
			.cmp = be64_to_cpu(a->cmp),
			.cmp_mask = be64_to_cpu(a->cmp_mask),
		},
		.ddp = seg->hdr->atomic_req.ddp,
	};
	s->msn[RSW_QN_READ_REQ]++;
	s->rx_wake = true;		/* an Atomic Response is owed */
	return true;
}

/*
 * An Atomic Response: the oldest outstanding request is an Atomic one
 * (the window said so); its Original Remote Data goes to the WQE's result
 * buffer in host order and the WQE completes.
 */
bool rsw_stream_deliver_atomic_resp(struct rsw_stream *s,
				    const struct rsw_rx_seg *seg,
				    struct rsw_term_cause *term)
{
	const struct rsw_rdmap_atomic_resp *a = &seg->hdr->atomic_resp.atomic;
	const struct rsw_tx_rd *rd = rsw_tx_read_oldest(&s->tx);
	u8 status = RDMAP_SW_WC_SUCCESS;
	u64 orig = be64_to_cpu(a->orig);
	struct rsw_mr_ref ref;
	u32 idx;

	s->msn[RSW_QN_ATOMIC_RESP]++;
	if (!rd || !rd->atomic || a->req_id != rd->req_id) {
		*term = RSW_TERM_CAUSE(RSW_TERM_LAYER_RDMAP,
				       RSW_RDMAP_ET_REMOTE_OP,
				       RSW_RDMAP_EC_OPCODE);
		return false;
	}
	if (rsw_mr_get(s->qp->rsw, s->qp->base.pd, rd->sink_stag,
		       rd->sink_to, sizeof(orig), IB_ACCESS_LOCAL_WRITE, &ref)) {
		status = RDMAP_SW_WC_LOC_PROT_ERR;
	} else {
		if (rsw_mr_copy_to(&ref, rd->sink_to, &orig, sizeof(orig)))
			status = RDMAP_SW_WC_LOC_PROT_ERR;
		rsw_mr_ref_put(&ref);
	}
	rsw_tx_read_done(&s->tx, &idx);
	rsw_stream_read_wake(s);
	if (status != RDMAP_SW_WC_SUCCESS) {
		/*
		 * Our result buffer failed us, not the peer: a Local
		 * Catastrophic Error, whose Terminate carries the DDP
		 * header of the Response (rsw_term_parts()); its cause
		 * before the completion in error moves the QP.
		 */
		*term = RSW_TERM_CAUSE(RSW_TERM_LAYER_RDMAP,
				       RSW_RDMAP_ET_CATASTROPHIC, 0);
		rsw_qp_term_cause(s->qp, rsw_term_vendor_err(term));
	}
	rsw_qp_sq_complete(s->qp, idx, status,
			   status ? 0 : sizeof(orig));
	return status == RDMAP_SW_WC_SUCCESS;
}

bool rsw_stream_deliver_rresp(struct rsw_stream *s,
			      const struct rsw_rx_seg *seg,
			      struct rsw_term_cause *term)
{
	return !seg->last || rsw_stream_read_done(s, term);
}

bool rsw_stream_deliver_send(struct rsw_stream *s,
			     const struct rsw_rx_seg *seg,
			     struct rsw_term_cause *term)
{
	if (!seg->last) {
		s->recv.partial = true;	/* the receive holds a Send now */
		return true;
	}
	return rsw_stream_send_done(s, seg, term);
}

/* A Read Request: owed a Read Response (checked when it is sent). */
bool rsw_stream_deliver_rreq(struct rsw_stream *s,
			     const struct rsw_rx_seg *seg,
			     struct rsw_term_cause *term)
{
	const struct rsw_rdmap_rreq *q = &seg->hdr->rreq.rreq;

	s->rr[s->rr_tail++ % s->rr_size] = (struct rsw_tx_rresp) {
		.sink_stag = be32_to_cpu(q->sink_stag),
		.sink_to = be64_to_cpu(q->sink_to),
		.src_stag = be32_to_cpu(q->src_stag),
		.src_to = be64_to_cpu(q->src_to),
		.len = be32_to_cpu(q->read_size),
		.ddp = seg->hdr->rreq.ddp,
		.rreq = *q,
	};
	s->msn[RSW_QN_READ_REQ]++;
	s->rx_wake = true;		/* a Read Response is owed */
	if (s->rtr_wait && s->conn.rtr == RSW_MPA_RTR_READ)
		rsw_stream_rtr_seen(s);
	return true;
}

/* The cause a Terminate segment carries (its header checked by rx.c). */
static struct rsw_term_cause rsw_stream_seg_term(const struct rsw_rx_seg *seg)
{
	const struct rsw_rdmap_term *t = &seg->hdr->term.term;

	return RSW_TERM_CAUSE(rsw_term_layer(t), rsw_term_etype(t),
			      rsw_term_ecode(t));
}

/*
 * The peer's Terminate: the stream is over, the QP goes to ERROR.  Traced
 * by rsw_stream_seg_done(), also when it arrives after ours.
 */
bool rsw_stream_deliver_term(struct rsw_stream *s,
			     const struct rsw_rx_seg *seg,
			     struct rsw_term_cause *term)
{
	s->msn[RSW_QN_TERMINATE]++;
	s->peer_term = rsw_stream_seg_term(seg);
	s->stats.term_rcvd = 1;
	s->stats.term = s->peer_term;
	rsw_route_inc(s->route, rsw_stat_term_layer(s->peer_term.layer, true));
	rsw_stream_set_why(s, RSW_WHY_PEER_TERM, -ECONNABORTED);
	return true;
}

/*
 * A segment arrived whole and valid (its header is traced here, where the
 * parser reports it; seg->hdr lives while the callback runs).
 */
static bool rsw_stream_seg_done(void *ctx, const struct rsw_rx_seg *seg,
				struct rsw_term_cause *term)
{
	struct rsw_stream *s = ctx;
	const struct rsw_rdmap_op *op;

	trace_rsw_fpdu_rx(s->qp->base.qp_num, seg->hdr);
	s->stats.rx_fpdus++;
	rsw_route_inc(s->route, RSW_STAT_RX_FPDUS);
	/* The budget: pause after this segment (resumed by the next run). */
	if (!--s->rx_segs_left) {
		rsw_rx_pause(&s->rx);
		s->rx_wake = true;
	}
	if (s->tx_hold) {
		s->tx_hold = false;
		s->rx_wake = true;	/* TX may start */
	}
	/* Before the check below: Terminates that cross are traced too. */
	if (seg->opcode == RSW_OP_TERMINATE && trace_rsw_term_rx_enabled()) {
		struct rsw_term_cause c = rsw_stream_seg_term(seg);

		trace_rsw_term_rx(s->qp->base.qp_num, &c);
	}
	if (s->why)		/* after a Terminate nothing counts */
		return true;
	if (rsw_stream_rtr_refused(s, seg, term))
		return false;
	op = &rsw_rdmap_ops[seg->opcode];
	if (!op->deliver(s, seg, term))
		return false;
	if (seg->last)
		rsw_route_inc(s->route, op->rx_stat);
	return true;
}

static void rsw_stream_rx_stop(void *ctx, const struct rsw_rx_seg *seg,
			       const struct rsw_rx_term *term)
{
	struct rsw_stream *s = ctx;
	struct rsw_tx_term *t = &s->term;

	/* Every refusal counts by its cause, whatever RUN's end was. */
	rsw_route_inc(s->route, rsw_stat_rx_err(&term->cause));
	/* A stream cut inside an FPDU has nobody left to tell. */
	if (term->cause.layer == RSW_TERM_LAYER_LLP &&
	    term->cause.ecode == RSW_MPA_EC_TCP_LOST) {
		rsw_stream_set_why(s, RSW_WHY_ABORT, -ECONNRESET);
		return;
	}
	if (s->why)
		return;
	rsw_qp_term_cause(s->qp, rsw_term_vendor_err(&term->cause));
	memset(t, 0, sizeof(*t));
	t->why = *term;
	memcpy(t->hdr, s->rx.hdr_octets, sizeof(t->hdr));
	rsw_stream_set_why(s, RSW_WHY_TERMINATE, -ECONNABORTED);
}

const struct rsw_rx_ops rsw_stream_rx_ops = {
	.window = rsw_stream_window,
	.place_tagged = rsw_stream_place_tagged,
	.place_untagged = rsw_stream_place_untagged,
	.seg_done = rsw_stream_seg_done,
	.stop = rsw_stream_rx_stop,
};

/* --------------------------------------------------------- RX: the socket */

static int rsw_stream_recv_actor(read_descriptor_t *desc, struct sk_buff *skb,
				 unsigned int off, size_t len)
{
	struct rsw_stream *s = desc->arg.data;
	bool linger = s->phase == RSW_STREAM_LINGER;
	size_t used;

	if (linger)
		used = len;			/* discarded */
	else if (s->why || rsw_rx_paused(&s->rx))
		used = 0;
	else
		used = rsw_rx_feed_skb(&s->rx, skb, off, len);
	if (!linger)
		rsw_route_add(s->route, RSW_STAT_RX_OCTETS, used);
	if ((s->why && !linger) || rsw_rx_paused(&s->rx))
		desc->count = 0;
	else
		desc->count -= min_t(size_t, used, desc->count);
	return used;
}

/*
 * One run of the parser over what the socket has, at most @segs segments
 * and desc->count octets; a pause for a spent budget ends here.
 */
static void rsw_stream_read(struct rsw_stream *s, struct sock *sk,
			    read_descriptor_t *desc, u32 segs)
{
	if (rsw_rx_paused(&s->rx))
		rsw_rx_resume(&s->rx);
	s->rx_segs_left = segs;
	tcp_read_sock(sk, desc, rsw_stream_recv_actor);
}

/*
 * RX in data-ready (see the top of stream.c): the socket's spinlock held,
 * or the work owning the socket.  Only in RUN (before it nothing may be
 * reported; LINGER discards, which the work item does).
 */
void rsw_stream_rx_ready(struct rsw_stream *s, struct sock *sk)
{
	read_descriptor_t desc = {
		.arg.data = s,
		.count = RSW_STREAM_RX_SOFT_BUDGET,
	};
	enum rsw_stream_phase phase = READ_ONCE(s->phase);
	struct rsw_qp *qp = s->qp;
	struct rsw_cq_batch batch;

	if (phase != RSW_STREAM_RUN) {
		if (phase == RSW_STREAM_LINGER)
			rsw_stream_kick(s);
		return;
	}
	if (s->why)
		return;			/* the work item was told */
	/* Ending (nothing more is placed), or a wait: the work item's. */
	if (rsw_stream_cut(s) || s->deferred.mr) {
		rsw_stream_kick(s);
		return;
	}
	/* In softirq, CQ handlers run here once the parser is out. */
	rsw_cq_batch_begin(&batch, qp->base.send_cq, qp->base.recv_cq);
	rsw_stream_read(s, sk, &desc, RSW_STREAM_RX_SOFT_SEGS);
	rsw_cq_batch_end(&batch);
	if (!desc.count || s->rx_wake) {
		s->rx_wake = false;
		rsw_stream_kick(s);
	}
}

/*
 * RX deferred a completion and paused (rsw_stream_send_done(),
 * rsw_stream_read_done()): wait out the MR's TX pieces (sleeps, bounded by
 * other streams' tcp_sendmsg_locked(); never our own, which hold nothing
 * between runs), then complete.  The parser stays paused meanwhile, so
 * nothing else touches s->deferred: the socket need not be owned.
 */
void rsw_stream_deferred_finish(struct rsw_stream *s)
{
	struct rsw_stream_deferred *d = &s->deferred;

	if (!d->mr)
		return;
	rsw_mr_wait_tx_put(d->mr);
	if (d->sq)
		rsw_qp_sq_complete(s->qp, d->idx, d->sq_status, d->sq_len);
	else
		rsw_qp_rq_complete(s->qp, d->idx, &d->rq);
	memset(d, 0, sizeof(*d));
}

/*
 * The work item's RX, socket owned: a deferred completion first (with the
 * socket released for the wait), then what the socket has.  True if there
 * is more to read at once.
 */
bool rsw_stream_rx(struct rsw_stream *s)
{
	struct sock *sk = s->sock->sk;
	bool linger = s->phase == RSW_STREAM_LINGER;
	read_descriptor_t desc = {
		.arg.data = s,
		.count = RSW_STREAM_RX_BUDGET,
	};

	sock_owned_by_me(sk);
	if (s->deferred.mr) {
		release_sock(sk);
		rsw_stream_deferred_finish(s);
		lock_sock(sk);
	}
	s->rx_wake = false;
	if (s->why && !linger)
		return false;
	rsw_stream_read(s, sk, &desc, RSW_STREAM_RX_SEGS);
	if (!desc.count)
		return !s->why || linger;
	/*
	 * All read: the peer's FIN, if it came, is next.  Inside an FPDU
	 * the parser stops the stream itself (rsw_stream_rx_stop()).
	 */
	if (READ_ONCE(sk->sk_shutdown) & RCV_SHUTDOWN && !tcp_inq(sk)) {
		if (linger || s->why || rsw_rx_eof(&s->rx))
			s->eof = true;
	}
	return false;
}

void rsw_stream_rx_flush(struct rsw_stream *s)
{
	struct rsw_stream_recv *r = &s->recv;
	struct rsw_rq_result flush = { .status = RDMAP_SW_WC_WR_FLUSH_ERR };

	if (r->active && !r->rtr) {
		if (r->status)
			flush.status = r->status;
		rsw_qp_rq_complete(s->qp, r->idx, &flush);
	}
	r->active = false;
}
