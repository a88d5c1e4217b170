// SPDX-License-Identifier: GPL-2.0
/*
 * The transmit engine: send WQEs, Read Responses and Terminates of one
 * stream turned into MPA FPDUs for a sink (types and the sink contract in
 * tx.h).  Entry point: rsw_tx_process().
 *
 * One message is in progress at a time (tx->msg).  It is cut into DDP
 * segments of at most tx->mulpdu octets of ULPDU (RFC 5044 MULPDU of the
 * MSS; with Markers, of an EMSS of at most RSW_TX_MARKER_EMSS); a segment
 * also ends early when its payload pieces run out.  The MSS follows TCP's
 * (rsw_tx_set_mss()) whenever the sink holds no FPDU sent in part, which
 * must be described again with the same length; DDP segments each carry
 * their own offset, so a message's FPDUs need not all be one size.  With
 * Markers each FPDU knows its stream offset (tx->off counts the octets the
 * sink took) and carries its Markers; the sink puts them in place and the
 * CRC covers them in stream order (rsw_tx_crc()).  Each FPDU is described
 * in two passes over its payload source: the first collects the (page,
 * offset, length) pieces, the second, once the header (which holds the
 * length) is known, feeds the same pieces to the CRC under the MR lock,
 * so every byte is read once and only through mem.c's checked walk.
 * Described FPDUs go to the sink in batches; whatever it does not take is
 * described again on the next call.
 *
 * Untagged queues (RFC 5041 section 5): MSNs start at 1 per queue and
 * advance once per message; MO is the message offset of the segment.
 * Tagged messages carry the sink STag and TO + message offset.
 *
 * No locks, no allocation, never sleeps unless the sink does; the caller
 * serialises each rsw_tx (the QP's TX work item later).
 *
 * Lifetime.  The rule: no memory is read for sending after its owner
 * could have freed it, or, for memory its owner keeps, after the owner
 * was told access was revoked.  A page piece takes its hold
 * (rsw_mr_hold(): a page reference for a user MR, a tx_busy count on a
 * fast-reg MR, both through a window, the count on the window) in the
 * collecting walk, under the MR lock, so before any dereg_mr or
 * invalidation can have revoked the access; rsw_tx_release() drops the
 * holds of the batch once the sink returned, and of the FPDUs described
 * so far when describing fails.  Outside rsw_tx_push() and a failed
 * rsw_tx_describe() no piece holds anything, so an invalidation run by
 * the stream's own work item (LOCAL_INV, Send with Invalidate) never
 * waits for itself.  The sink owns none of this: pieces are valid while
 * send() runs; anything TCP keeps longer (spliced pages) it references
 * itself.  Inline data lives in tx->sqe, the engine's own copy.
 */
#include <linux/highmem.h>

#include "internal.h"
#include "fpdu.h"
#include "mem.h"
#include "trace.h"

/* ------------------------------------------------------------ headers */

static void rsw_tx_untagged(struct rsw_tx *tx, struct rsw_ddp_untagged *u,
			    u8 qn, u32 mo)
{
	u->qn = cpu_to_be32(qn);
	u->msn = cpu_to_be32(tx->msn[qn]);
	u->mo = cpu_to_be32(mo);
}

/* The Terminate header with the parts @t carries; its length. */
static u32 rsw_tx_term_parts(struct rsw_tx *tx, struct rsw_tx_fpdu *f,
			     const struct rsw_tx_term *t)
{
	const struct rsw_ctrl *inner = (const struct rsw_ctrl *)t->hdr;
	const struct rsw_rx_term *why = &t->why;
	struct rsw_rdmap_term *term = &f->hdr.term.term;
	u32 len = sizeof(struct rsw_hdr_term);
	u32 ddp_len = 0;

	rsw_tx_untagged(tx, &f->hdr.term.ddp, RSW_QN_TERMINATE, 0);
	term->ctrl = 0;
	rsw_term_set_layer(term, why->cause.layer);
	rsw_term_set_etype(term, why->cause.etype);
	rsw_term_set_ecode(term, why->cause.ecode);
	rsw_term_set_m(term, why->ddp_hdr);
	rsw_term_set_d(term, why->ddp_hdr);
	rsw_term_set_r(term, why->rdma_hdr);
	if (why->ddp_hdr) {
		ddp_len = RSW_MPA_HDR_LEN + rsw_ddp_hdr_len(rsw_ddp_tagged(inner));
		memcpy(f->hdr_octets + len, t->hdr, ddp_len);
		len += ddp_len;
	}
	if (why->rdma_hdr) {
		memcpy(f->hdr_octets + len,
		       t->hdr + sizeof(struct rsw_ddp_untagged),
		       RSW_RDMAP_RREQ_LEN);
		len += RSW_RDMAP_RREQ_LEN;
	}
	return len;
}

/*
 * Header builders of the opcode table (opcode.h): the header of the
 * segment at message offset @pos into @f (zeroed), its length.
 */
u32 rsw_tx_hdr_term(struct rsw_tx *tx, struct rsw_tx_fpdu *f, u32 pos)
{
	return rsw_tx_term_parts(tx, f, &tx->msg.term);
}

u32 rsw_tx_hdr_tagged(struct rsw_tx *tx, struct rsw_tx_fpdu *f, u32 pos)
{
	const struct rsw_tx_msg *m = &tx->msg;

	f->hdr.tagged.stag = cpu_to_be32(m->stag);
	f->hdr.tagged.to = cpu_to_be64(m->to + pos);
	return sizeof(struct rsw_ddp_tagged);
}

u32 rsw_tx_hdr_rreq(struct rsw_tx *tx, struct rsw_tx_fpdu *f, u32 pos)
{
	f->hdr.rreq = tx->msg.rreq;
	rsw_tx_untagged(tx, &f->hdr.rreq.ddp, RSW_QN_READ_REQ, 0);
	return sizeof(struct rsw_hdr_rreq);
}

u32 rsw_tx_hdr_send(struct rsw_tx *tx, struct rsw_tx_fpdu *f, u32 pos)
{
	const struct rsw_tx_msg *m = &tx->msg;

	if (rsw_rdmap_op_inval(m->op))
		f->hdr.untagged.inval_stag = cpu_to_be32(m->inval_stag);
	rsw_tx_untagged(tx, &f->hdr.untagged, RSW_QN_SEND, pos);
	return sizeof(struct rsw_ddp_untagged);
}

u32 rsw_tx_hdr_imm(struct rsw_tx *tx, struct rsw_tx_fpdu *f, u32 pos)
{
	f->hdr.imm.imm = tx->msg.imm;
	rsw_tx_untagged(tx, &f->hdr.imm.ddp, RSW_QN_SEND, 0);
	return sizeof(struct rsw_hdr_imm);
}

u32 rsw_tx_hdr_atomic_req(struct rsw_tx *tx, struct rsw_tx_fpdu *f, u32 pos)
{
	f->hdr.atomic_req.atomic = tx->msg.atomic;
	rsw_tx_untagged(tx, &f->hdr.atomic_req.ddp, RSW_QN_READ_REQ, 0);
	return sizeof(struct rsw_hdr_atomic_req);
}

u32 rsw_tx_hdr_atomic_resp(struct rsw_tx *tx, struct rsw_tx_fpdu *f, u32 pos)
{
	f->hdr.atomic_resp.atomic = tx->msg.aresp;
	rsw_tx_untagged(tx, &f->hdr.atomic_resp.ddp, RSW_QN_ATOMIC_RESP, 0);
	return sizeof(struct rsw_hdr_atomic_resp);
}

/* Header of the segment at message offset @pos: its length. */
static u32 rsw_tx_hdr(struct rsw_tx *tx, struct rsw_tx_fpdu *f, u32 pos)
{
	memset(f->hdr_octets, 0, sizeof(f->hdr_octets));
	return rsw_rdmap_ops[tx->msg.op].tx_hdr(tx, f, pos);
}

/* Fixed header length of the message's segments, for sizing them. */
static u32 rsw_tx_hdr_room(const struct rsw_tx *tx)
{
	return rsw_rdmap_hdr_len(tx->msg.op);
}

/* -------------------------------------------------------- payload walk */

/* State of one pass over a segment's payload. */
struct rsw_tx_walk {
	struct rsw_tx_fpdu *f;
	u32 want;		/* octets the pass may cover */
	u32 got;		/* octets covered so far */
	u32 crc;		/* second pass: running CRC */
	u32 pos;		/* second pass: plain FPDU offset (Markers) */
	u32 i;			/* second pass: next piece to match */
	struct rsw_mr *mr;	/* MR being walked (first pass: holds) */
	bool stop;		/* first pass: pieces ran out */
	bool mismatch;		/* second pass: memory changed under us */
};

static bool rsw_tx_collect(void *arg, struct page *page, unsigned int off,
			   unsigned int len)
{
	struct rsw_tx_walk *w = arg;
	struct rsw_tx_piece *p;

	if (w->f->npieces == RSW_TX_MAX_PIECES) {
		w->stop = true;
		return false;
	}
	p = &w->f->piece[w->f->npieces++];
	*p = (struct rsw_tx_piece) {
		.page = page, .off = off, .len = len, .mr = w->mr,
		.hold = rsw_mr_hold(w->mr, page),
	};
	w->got += len;
	return true;
}

/* Drop what the pieces of @f hold (the sink returned, or describe failed). */
static void rsw_tx_release_fpdu(struct rsw_tx_fpdu *f)
{
	u32 i;

	for (i = 0; i < f->npieces; i++) {
		struct rsw_tx_piece *p = &f->piece[i];

		if (p->page && p->hold != RSW_MR_HOLD_NONE)
			rsw_mr_unhold(p->mr, p->page, p->hold);
		p->hold = RSW_MR_HOLD_NONE;
	}
}

/* Release the first @n FPDUs of the batch. */
static void rsw_tx_release(struct rsw_tx *tx, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		rsw_tx_release_fpdu(&tx->batch[i]);
}

/*
 * Feed @len octets at plain offset *@pos of @f to @crc, in stream order with
 * the Markers among them (RFC 5044: the CRC covers the Markers inside the
 * FPDU), each octet once.
 */
static u32 rsw_tx_crc(const struct rsw_tx_fpdu *f, u32 crc, u32 *pos,
		      const void *p, u32 len)
{
	if (f->nmk)
		crc = rsw_mpa_crc_update_mk(crc, f->start, *pos, p, len);
	else
		crc = rsw_mpa_crc_update(crc, p, len);
	*pos += len;
	return crc;
}

static bool rsw_tx_crc_piece(void *arg, struct page *page, unsigned int off,
			     unsigned int len)
{
	struct rsw_tx_walk *w = arg;
	const struct rsw_tx_piece *p = &w->f->piece[w->i];
	u8 *va;

	if (w->i >= w->f->npieces || p->page != page || p->off != off ||
	    p->len != len) {
		w->mismatch = true;
		return false;
	}
	va = kmap_local_page(page);
	w->crc = rsw_tx_crc(w->f, w->crc, &w->pos, va + off, len);
	kunmap_local(va);
	w->i++;
	w->got += len;
	return true;
}

/* Walk [@to, @to + @len) of @stag with right @right. */
static enum rsw_mr_err rsw_tx_walk_mr(struct rsw_tx *tx, u32 stag, u64 to,
				      u32 len, u32 right, rsw_mr_seg_fn fn,
				      struct rsw_tx_walk *w)
{
	struct rsw_mr_ref ref;
	enum rsw_mr_err err;

	err = rsw_mr_get_qp(tx->rsw, tx->pd, tx->cfg.qp, stag, to, len, right,
			    &ref);
	if (err)
		return err;
	/* The MR outlives the holds its pieces take (see mem.c). */
	w->mr = ref.mr;
	err = rsw_mr_walk(&ref, to, len, fn, w);
	w->mr = NULL;
	rsw_mr_ref_put(&ref);
	return err;
}

/* Walk message offsets [@pos, @pos + w->want) of the SGE list. */
static enum rsw_mr_err rsw_tx_walk_sges(struct rsw_tx *tx, u32 pos,
					rsw_mr_seg_fn fn, struct rsw_tx_walk *w)
{
	const struct rdmap_sw_sqe *sqe = &tx->sqe;
	u32 left = w->want;
	enum rsw_mr_err err;
	unsigned int i;

	for (i = 0; i < sqe->num_sge && left && !w->stop; i++) {
		const struct rdmap_sw_sge *s = &sqe->sge[i];
		u32 n;

		if (pos >= s->length) {
			pos -= s->length;
			continue;
		}
		n = min(left, s->length - pos);
		err = rsw_tx_walk_mr(tx, s->lkey, s->addr + pos, n, 0, fn, w);
		if (err)
			return err;
		if (w->mismatch)
			return RSW_MR_ERR_STATE;
		left -= n;
		pos = 0;
	}
	return RSW_MR_OK;
}

static enum rsw_mr_err rsw_tx_walk_src(struct rsw_tx *tx, u32 pos,
				       rsw_mr_seg_fn fn, struct rsw_tx_walk *w)
{
	const struct rsw_tx_msg *m = &tx->msg;
	enum rsw_mr_err err;

	if (!w->want)
		return RSW_MR_OK;
	if (m->src == RSW_TX_SRC_SGE)
		return rsw_tx_walk_sges(tx, pos, fn, w);
	err = rsw_tx_walk_mr(tx, m->src_stag, m->src_to + pos, w->want,
			     IB_ACCESS_REMOTE_READ, fn, w);
	if (!err && w->mismatch)
		err = RSW_MR_ERR_STATE;
	return err;
}

/* First pass: the pieces of up to @want octets at message offset @pos. */
static enum rsw_mr_err rsw_tx_pieces(struct rsw_tx *tx, struct rsw_tx_fpdu *f,
				     u32 pos, u32 want)
{
	struct rsw_tx_walk w = { .f = f, .want = want };
	enum rsw_mr_err err;

	f->npieces = 0;
	f->payload_len = 0;
	if (!want)
		return RSW_MR_OK;
	if (tx->msg.src == RSW_TX_SRC_INLINE) {
		f->piece[0] = (struct rsw_tx_piece) {
			.kva = tx->sqe.inline_data + pos, .len = want,
		};
		f->npieces = 1;
		f->payload_len = want;
		return RSW_MR_OK;
	}
	err = rsw_tx_walk_src(tx, pos, rsw_tx_collect, &w);
	f->payload_len = w.got;
	return err;
}

/*
 * Second pass: CRC of the payload described by the first, at message
 * offset @pos; *@crc runs on, from plain FPDU offset f->hdr_len.
 */
static enum rsw_mr_err rsw_tx_payload_crc(struct rsw_tx *tx,
					  struct rsw_tx_fpdu *f, u32 pos,
					  u32 *crc)
{
	struct rsw_tx_walk w = {
		.f = f, .want = f->payload_len, .crc = *crc,
		.pos = f->hdr_len,
	};
	enum rsw_mr_err err;

	if (!f->payload_len)
		return RSW_MR_OK;
	if (tx->msg.src == RSW_TX_SRC_INLINE) {
		*crc = rsw_tx_crc(f, *crc, &w.pos, f->piece[0].kva,
				  f->payload_len);
		return RSW_MR_OK;
	}
	err = rsw_tx_walk_src(tx, pos, rsw_tx_crc_piece, &w);
	if (!err && (w.got != f->payload_len || w.i != f->npieces))
		err = RSW_MR_ERR_STATE;
	*crc = w.crc;
	return err;
}

/* ------------------------------------------------------------- FPDUs */

/* PAD and CRC after header and payload, CRC over all three. */
static enum rsw_mr_err rsw_tx_trailer(struct rsw_tx *tx,
				      struct rsw_tx_fpdu *f, u32 pos)
{
	static const u8 zero[RSW_MPA_ALIGN - 1];
	u32 pad = rsw_mpa_pad(f->hdr_len - RSW_MPA_HDR_LEN + f->payload_len);
	__le32 trailer = 0;
	enum rsw_mr_err err;
	u32 crc, at = 0;

	memset(f->trailer, 0, sizeof(f->trailer));
	f->trailer_len = pad + RSW_MPA_CRC_LEN;
	if (tx->cfg.crc) {
		crc = rsw_tx_crc(f, rsw_mpa_crc_init(), &at, f->hdr_octets,
				 f->hdr_len);
		err = rsw_tx_payload_crc(tx, f, pos, &crc);
		if (err)
			return err;
		at += f->payload_len;
		crc = rsw_tx_crc(f, crc, &at, zero, pad);
		if (f->nmk)
			crc = rsw_mpa_crc_mk_end(crc, f->start, at);
		trailer = rsw_mpa_crc_final(crc);
	}
	memcpy(f->trailer + pad, &trailer, sizeof(trailer));
	return RSW_MR_OK;
}

/*
 * The Markers of @f, which starts at stream offset @start (RFC 5044
 * section 5: one at every 512th octet of the stream, counted from the
 * first FPDU of full operation), from its plain length; none without.
 */
static void rsw_tx_markers(struct rsw_tx *tx, struct rsw_tx_fpdu *f,
			   u32 start)
{
	u32 k;

	f->start = start;
	f->nmk = 0;
	if (!tx->cfg.markers)
		return;
	f->nmk = rsw_mpa_markers(start, f->hdr_len + f->payload_len +
					 rsw_mpa_pad(f->hdr_len -
						     RSW_MPA_HDR_LEN +
						     f->payload_len) +
					 RSW_MPA_CRC_LEN);
	/* The 8 KiB cap on FPDUs with Markers keeps this at most 16. */
	f->nmk = min_t(u32, f->nmk, ARRAY_SIZE(f->mk));
	for (k = 0; k < f->nmk; k++)
		f->mk[k] = rsw_mpa_marker(start, k);
}

/* Octets @f occupies in the stream, Markers included. */
static u32 rsw_tx_fpdu_len(const struct rsw_tx_fpdu *f)
{
	return f->hdr_len + f->payload_len + f->trailer_len +
	       f->nmk * RSW_MPA_MARKER_LEN;
}

/*
 * Describe the FPDU of the segment at message offset @pos, starting at
 * stream offset @start, into @f.
 */
static enum rsw_mr_err rsw_tx_fpdu(struct rsw_tx *tx, struct rsw_tx_fpdu *f,
				   u32 pos, u32 start)
{
	const struct rsw_tx_msg *m = &tx->msg;
	u32 room = tx->mulpdu - rsw_tx_hdr_room(tx);
	enum rsw_mr_err err;

	err = rsw_tx_pieces(tx, f, pos, min(room, m->len - pos));
	if (err)
		return err;
	f->msg_end = pos + f->payload_len;
	f->last = f->msg_end == m->len;
	/*
	 * With Markers a page would be cut into spliced runs every 512
	 * octets around copied Markers: copy instead (an untested path and
	 * no gain at that granularity).
	 */
	f->splice = m->kind == RSW_TX_RRESP && !tx->cfg.crc &&
		    !tx->cfg.markers;
	f->hdr_len = rsw_tx_hdr(tx, f, pos);
	f->hdr.c.ctrl = rsw_ctrl_word(m->op, f->last);
	rsw_set_mpa_len(&f->hdr.c, f->hdr_len - RSW_MPA_HDR_LEN +
				   f->payload_len);
	rsw_tx_markers(tx, f, start);
	return rsw_tx_trailer(tx, f, pos);
}

/*
 * Fill the batch with the message's next FPDUs, at most @max (up to
 * RSW_TX_BATCH), up to its last one.  On failure nothing is held and the
 * batch is empty.
 */
static enum rsw_mr_err rsw_tx_describe(struct rsw_tx *tx, unsigned int max)
{
	u32 pos = tx->msg.done, start = tx->off;
	enum rsw_mr_err err;

	tx->nbatch = 0;
	while (tx->nbatch < min_t(unsigned int, max, RSW_TX_BATCH)) {
		struct rsw_tx_fpdu *f = &tx->batch[tx->nbatch];

		err = rsw_tx_fpdu(tx, f, pos, start);
		if (err) {
			/* The failed FPDU's pieces up to the failure too. */
			rsw_tx_release(tx, tx->nbatch + 1);
			tx->nbatch = 0;
			return err;
		}
		tx->nbatch++;
		pos = f->msg_end;
		start += rsw_tx_fpdu_len(f);
		if (f->last)
			break;
	}
	return RSW_MR_OK;
}

/*
 * The message in progress is out (its last FPDU taken): count it by
 * opcode, a Terminate also by its layer.  Our Terminates, the stream's and
 * a cep's MPA-level one alike, pass here (stats.h).
 */
static void rsw_tx_count_msg(struct rsw_tx *tx)
{
	const struct rsw_rdmap_op *op = rsw_rdmap_op(tx->msg.op);

	if (!tx->route || !op)
		return;
	rsw_route_inc(tx->route, op->tx_stat);
	if (tx->msg.op == RSW_OP_TERMINATE)
		rsw_route_inc(tx->route,
			      rsw_stat_term_layer(tx->msg.term.why.cause.layer,
						  false));
}

/*
 * Hand the batch to the sink: 0, -EAGAIN (not all taken) or its error.
 * The batch's holds are dropped once the sink returned: what TCP took it
 * copied or references itself.  Each FPDU is traced once, when taken
 * whole (one taken in part is described again and traced then).
 */
static int rsw_tx_push(struct rsw_tx *tx, bool *last)
{
	const struct rsw_tx_fpdu *f;
	int i, n;

	n = tx->sink->send(tx->sink_ctx, tx->batch, tx->nbatch,
			   !tx->batch[tx->nbatch - 1].last || tx->msg_more ||
			   tx->msg.imm_next);
	rsw_tx_release(tx, tx->nbatch);
	if (n < 0)
		return n;
	if (WARN_ON_ONCE(n > tx->nbatch))
		n = tx->nbatch;
	for (i = 0; i < n; i++) {
		tx->off += rsw_tx_fpdu_len(&tx->batch[i]);
		trace_rsw_fpdu_tx(tx->cfg.qpn, &tx->batch[i].hdr);
	}
	if (n) {
		f = &tx->batch[n - 1];
		tx->msg.done = f->msg_end;
		*last = f->last;
		if (f->last)
			rsw_tx_count_msg(tx);
	}
	return n == tx->nbatch ? 0 : -EAGAIN;
}

/* The message's last FPDU was taken: an untagged queue's MSN advances. */
static void rsw_tx_msg_sent(struct rsw_tx *tx)
{
	if (!rsw_rdmap_op_tagged(tx->msg.op))
		tx->msn[rsw_rdmap_op_qn(tx->msg.op)]++;
}

/*
 * Emit the rest of the message in progress.  0 once its last FPDU was
 * taken (untagged: its queue's MSN advanced), -EAGAIN if the sink is
 * full, -EFAULT with *@err if its source failed a memory check, or the
 * sink's error.
 */
static int rsw_tx_emit(struct rsw_tx *tx, enum rsw_mr_err *err)
{
	bool last = false;
	int ret;

	while (!last) {
		*err = rsw_tx_describe(tx, RSW_TX_BATCH);
		if (*err)
			return -EFAULT;
		ret = rsw_tx_push(tx, &last);
		if (ret)
			return ret;
	}
	rsw_tx_msg_sent(tx);
	return 0;
}

/* ------------------------------------------------------------ messages */

/*
 * The MSS FPDUs are sized for: TCP's, or below RSW_TX_MSS_MIN the least
 * multiple of it that reaches RSW_TX_MSS_MIN, so that an FPDU is whole
 * segments (alignment holds) and not tiny.
 */
static u32 rsw_tx_eff_mss(u32 mss)
{
	if (mss >= RSW_TX_MSS_MIN)
		return mss;
	if (!mss)
		return RSW_TX_MSS_MIN;
	return mss * DIV_ROUND_UP(RSW_TX_MSS_MIN, mss);
}

/* The MULPDU for @mss under @cfg (Markers, max_ulpdu). */
static u32 rsw_tx_mulpdu(const struct rsw_tx_config *cfg, u32 mss)
{
	u32 mulpdu;

	if (cfg->markers)
		mulpdu = rsw_mpa_mulpdu(min_t(u32, mss, RSW_TX_MARKER_EMSS),
					true);
	else
		mulpdu = rsw_mpa_mulpdu(mss, false);
	if (cfg->max_ulpdu)
		mulpdu = min(mulpdu, cfg->max_ulpdu);
	return mulpdu;
}

int rsw_tx_init(struct rsw_tx *tx, const struct rsw_tx_config *cfg,
		struct rsw_device *rsw, struct ib_pd *pd,
		const struct rsw_tx_sink_ops *sink, void *ctx)
{
	u32 mss = rsw_tx_eff_mss(cfg->mss);
	u32 mulpdu = rsw_tx_mulpdu(cfg, mss);
	int i;

	/* Room for the largest header and at least one payload octet. */
	if (mulpdu <= RSW_HDR_MAX_LEN || cfg->ord > RSW_MAX_RD_ATOM)
		return -EINVAL;
	memset(tx, 0, offsetof(struct rsw_tx, batch));
	tx->cfg = *cfg;
	tx->cfg.mss = mss;
	tx->mulpdu = mulpdu;
	tx->rsw = rsw;
	tx->pd = pd;
	tx->sink = sink;
	tx->sink_ctx = ctx;
	for (i = 0; i < ARRAY_SIZE(tx->msn); i++)
		tx->msn[i] = 1;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_tx_init);

void rsw_tx_set_mss(struct rsw_tx *tx, u32 mss)
{
	mss = rsw_tx_eff_mss(mss);
	if (mss == tx->cfg.mss)
		return;
	tx->cfg.mss = mss;
	/* Room for a header: 536 octets or more, and rsw_tx_init() checked
	 * max_ulpdu's.
	 */
	tx->mulpdu = rsw_tx_mulpdu(&tx->cfg, mss);
}
EXPORT_SYMBOL_IF_KUNIT(rsw_tx_set_mss);

/* Every SGE of the WQE copy is readable now (RSW_MR_OK) or not. */
static enum rsw_mr_err rsw_tx_check_sges(struct rsw_tx *tx)
{
	const struct rdmap_sw_sqe *sqe = &tx->sqe;
	struct rsw_mr_ref ref;
	enum rsw_mr_err err;
	unsigned int i;

	for (i = 0; i < sqe->num_sge; i++) {
		const struct rdmap_sw_sge *s = &sqe->sge[i];

		if (!s->length)
			continue;
		err = rsw_mr_get(tx->rsw, tx->pd, s->lkey, s->addr, s->length,
				 0, &ref);
		if (err)
			return err;
		rsw_mr_ref_put(&ref);
	}
	return RSW_MR_OK;
}

/* Send opcode of a Send WQE, by Invalidate and Solicited Event. */
static u8 rsw_tx_send_op(const struct rdmap_sw_sqe *sqe)
{
	bool se = sqe->flags & RDMAP_SW_SQE_SOLICITED;

	if (sqe->opcode == RDMAP_SW_WR_SEND_WITH_INV)
		return se ? RSW_OP_SEND_SE_INV : RSW_OP_SEND_INV;
	return se ? RSW_OP_SEND_SE : RSW_OP_SEND;
}

/*
 * A Read or Atomic Request on a connection with ORD 0 (the ULP asked for
 * none, or a peer without RFC 6581 numbers left it at that) would wait
 * for a credit that never comes: it fails instead.
 */
static bool rsw_tx_no_ord(const struct rsw_tx *tx)
{
	return !tx->cfg.ord;
}

/*
 * Read Request of the WQE copy: sink = its local SGE (one, or none for
 * zero length), source = the peer's rstag/raddr.  0 or the WC status.
 */
static u8 rsw_tx_read_msg(struct rsw_tx *tx)
{
	const struct rdmap_sw_sqe *sqe = &tx->sqe;
	struct rsw_rdmap_rreq *rr = &tx->msg.rreq.rreq;
	struct rsw_mr_ref ref;

	if (sqe->num_sge > 1 || rsw_tx_no_ord(tx))
		return RDMAP_SW_WC_LOC_QP_OP_ERR;
	memset(&tx->msg.rreq, 0, sizeof(tx->msg.rreq));
	if (sqe->num_sge && sqe->sge[0].length) {
		if (rsw_mr_get(tx->rsw, tx->pd, sqe->sge[0].lkey,
			       sqe->sge[0].addr, sqe->sge[0].length,
			       IB_ACCESS_LOCAL_WRITE, &ref))
			return RDMAP_SW_WC_LOC_PROT_ERR;
		rsw_mr_ref_put(&ref);
		rr->sink_stag = cpu_to_be32(sqe->sge[0].lkey);
		rr->sink_to = cpu_to_be64(sqe->sge[0].addr);
	}
	rr->read_size = cpu_to_be32(sqe->length);
	rr->src_stag = cpu_to_be32(sqe->rstag);
	rr->src_to = cpu_to_be64(sqe->raddr);
	tx->msg.op = RSW_OP_READ_REQ;
	tx->msg.kind = RSW_TX_READ;
	return RDMAP_SW_WC_SUCCESS;
}

/* Is @sqe an Atomic Request (the Read resources: ORD, the rd ring)? */
static bool rsw_tx_sqe_atomic(const struct rdmap_sw_sqe *sqe)
{
	switch (sqe->opcode) {
	case RDMAP_SW_WR_ATOMIC_CMP_AND_SWP:
	case RDMAP_SW_WR_ATOMIC_FETCH_AND_ADD:
	case RDMAP_SW_WR_MASKED_ATOMIC_CMP_AND_SWP:
	case RDMAP_SW_WR_MASKED_ATOMIC_FETCH_AND_ADD:
		return true;
	}
	return false;
}

/*
 * The wire operands of an atomic WQE (the verbs' fields) as RFC 7306
 * section 5.2.1 wants them: an unmasked FetchAdd is one 64-bit field
 * (Add Mask 0); an unmasked CmpSwap compares and swaps all 64 bits.
 */
static void rsw_tx_atomic_operands(const struct rdmap_sw_sqe *sqe,
				   struct rsw_rdmap_atomic_req *a)
{
	const struct rdmap_sw_sqe_atomic *op = &sqe->atomic;

	switch (sqe->opcode) {
	case RDMAP_SW_WR_ATOMIC_FETCH_AND_ADD:
		rsw_atomic_set_op(a, RSW_ATOMIC_FETCH_ADD);
		rsw_atomic_set_operands(a, RSW_ATOMIC_FETCH_ADD,
					op->compare_add, 0, 0, 0);
		break;
	case RDMAP_SW_WR_MASKED_ATOMIC_FETCH_AND_ADD:
		rsw_atomic_set_op(a, RSW_ATOMIC_FETCH_ADD);
		rsw_atomic_set_operands(a, RSW_ATOMIC_FETCH_ADD,
					op->compare_add, op->compare_add_mask,
					0, 0);
		break;
	case RDMAP_SW_WR_ATOMIC_CMP_AND_SWP:
		rsw_atomic_set_op(a, RSW_ATOMIC_CMP_SWAP);
		rsw_atomic_set_operands(a, RSW_ATOMIC_CMP_SWAP, op->swap,
					RSW_ATOMIC_MASK_ALL, op->compare_add,
					RSW_ATOMIC_MASK_ALL);
		break;
	default:	/* RDMAP_SW_WR_MASKED_ATOMIC_CMP_AND_SWP */
		rsw_atomic_set_op(a, RSW_ATOMIC_CMP_SWAP);
		rsw_atomic_set_operands(a, RSW_ATOMIC_CMP_SWAP, op->swap,
					op->swap_mask, op->compare_add,
					op->compare_add_mask);
		break;
	}
}

/*
 * Atomic Request of the WQE copy: the result buffer is its one 8-byte
 * SGE (checked writable now, and again when the response is placed).
 * The Request Identifier is the WQE's SQ ticket.  0 or the WC status.
 */
static u8 rsw_tx_atomic_msg(struct rsw_tx *tx)
{
	const struct rdmap_sw_sqe *sqe = &tx->sqe;
	const struct rdmap_sw_sge *res = &sqe->atomic.result;
	struct rsw_rdmap_atomic_req *a = &tx->msg.atomic;
	struct rsw_mr_ref ref;

	if (sqe->num_sge != 1 || sqe->flags & RDMAP_SW_SQE_INLINE ||
	    res->length != sizeof(u64))
		return RDMAP_SW_WC_LOC_LEN_ERR;
	if (rsw_tx_no_ord(tx))
		return RDMAP_SW_WC_LOC_QP_OP_ERR;
	/* The peer would end the connection for it (RFC 7306 section 8.2). */
	if (!IS_ALIGNED(sqe->raddr, sizeof(u64)))
		return RDMAP_SW_WC_LOC_QP_OP_ERR;
	if (rsw_mr_get(tx->rsw, tx->pd, res->lkey, res->addr, sizeof(u64),
		       IB_ACCESS_LOCAL_WRITE, &ref))
		return RDMAP_SW_WC_LOC_PROT_ERR;
	rsw_mr_ref_put(&ref);
	memset(a, 0, sizeof(*a));
	rsw_tx_atomic_operands(sqe, a);
	a->req_id = cpu_to_be32(tx->sqe_idx);
	a->stag = cpu_to_be32(sqe->rstag);
	a->to = cpu_to_be64(sqe->raddr);
	tx->msg.op = RSW_OP_ATOMIC_REQ;
	tx->msg.kind = RSW_TX_READ;
	return RDMAP_SW_WC_SUCCESS;
}

/* Make the WQE copy tx->sqe the message in progress; 0 or WC status. */
static u8 rsw_tx_wqe_msg(struct rsw_tx *tx)
{
	const struct rdmap_sw_sqe *sqe = &tx->sqe;
	struct rsw_tx_msg *m = &tx->msg;

	memset(m, 0, sizeof(*m));
	m->kind = RSW_TX_WQE;
	switch (sqe->opcode) {
	case RDMAP_SW_WR_SEND:
	case RDMAP_SW_WR_SEND_WITH_INV:
		m->op = rsw_tx_send_op(sqe);
		m->inval_stag = sqe->inv_stag;
		break;
	case RDMAP_SW_WR_RDMA_WRITE_WITH_IMM:
		m->imm_next = true;
		memcpy(&m->imm, &sqe->imm_data, sizeof(sqe->imm_data));
		fallthrough;
	case RDMAP_SW_WR_RDMA_WRITE:
		m->op = RSW_OP_WRITE;
		m->stag = sqe->rstag;
		m->to = sqe->raddr;
		break;
	case RDMAP_SW_WR_RDMA_READ:
	case RDMAP_SW_WR_RDMA_READ_WITH_INV:
		return rsw_tx_read_msg(tx);
	case RDMAP_SW_WR_ATOMIC_CMP_AND_SWP:
	case RDMAP_SW_WR_ATOMIC_FETCH_AND_ADD:
	case RDMAP_SW_WR_MASKED_ATOMIC_CMP_AND_SWP:
	case RDMAP_SW_WR_MASKED_ATOMIC_FETCH_AND_ADD:
		return rsw_tx_atomic_msg(tx);
	default:
		return RDMAP_SW_WC_LOC_QP_OP_ERR;
	}
	m->len = sqe->length;
	if (sqe->flags & RDMAP_SW_SQE_INLINE) {
		m->src = RSW_TX_SRC_INLINE;
		if (m->len > RDMAP_SW_MAX_INLINE)
			return RDMAP_SW_WC_LOC_LEN_ERR;
		return RDMAP_SW_WC_SUCCESS;
	}
	m->src = RSW_TX_SRC_SGE;
	if (rsw_tx_check_sges(tx))
		return RDMAP_SW_WC_LOC_PROT_ERR;
	return RDMAP_SW_WC_SUCCESS;
}

/* No message in progress, nor one announced to follow it. */
static void rsw_tx_idle(struct rsw_tx *tx)
{
	tx->msg.kind = RSW_TX_IDLE;
	tx->msg_more = false;
}

/*
 * The message in progress is out: complete a Send/Write WQE of @qp (none
 * in KUnit's @qp == NULL), record a Read Request as outstanding.
 */
static void rsw_tx_finish(struct rsw_tx *tx, struct rsw_qp *qp)
{
	enum rsw_tx_kind kind = tx->msg.kind;

	rsw_tx_idle(tx);
	if (kind == RSW_TX_READ) {
		const struct rdmap_sw_sqe *sqe = &tx->sqe;
		struct rsw_tx_rd *rd = &tx->rd[tx->rd_tail++ % RSW_MAX_RD_ATOM];

		*rd = (struct rsw_tx_rd) {
			.idx = tx->sqe_idx,
			.len = sqe->length,
			.inv = sqe->opcode == RDMAP_SW_WR_RDMA_READ_WITH_INV,
		};
		if (rsw_tx_sqe_atomic(sqe)) {
			rd->atomic = true;
			rd->len = sizeof(u64);
			rd->req_id = tx->msg.atomic.req_id;
		}
		/*
		 * Read with Local Invalidate invalidates the sink's own STag
		 * (the RDMAC verbs' definition).  ex.invalidate_rkey is not
		 * used: rdma_rw fills it before it bumps the MR's key for
		 * the REG_MR in front, so it names the previous key.
		 */
		if (sqe->num_sge) {
			rd->sink_stag = sqe->sge[0].lkey;
			rd->sink_to = sqe->sge[0].addr;
			rd->inv_stag = rd->sink_stag;
		}
		return;
	}
	if (kind == RSW_TX_WQE && qp)
		rsw_qp_sq_complete(qp, tx->sqe_idx, RDMAP_SW_WC_SUCCESS,
				   tx->sqe.length);
}

/*
 * A Write with Immediate's Write is out: its Immediate Data message
 * follows (RFC 7306 section 7: completed after the Write is placed), Send
 * queue, with Solicited Event if the WQE asked.  The verbs' 32 bits of
 * immediate data are the first four octets of the eight on the wire.
 */
static void rsw_tx_imm_next(struct rsw_tx *tx)
{
	struct rsw_tx_msg *m = &tx->msg;

	m->imm_next = false;
	m->op = tx->sqe.flags & RDMAP_SW_SQE_SOLICITED ? RSW_OP_IMM_DATA_SE :
							  RSW_OP_IMM_DATA;
	m->src = RSW_TX_SRC_NONE;
	m->len = 0;
	m->done = 0;
}

/*
 * The cause of the caller's Terminate for a request of @qp that cannot be
 * made or finished (RFC 5040 section 7.1 rule 1, RFC 7306 section 8.1
 * rule 1): RDMAP Local Catastrophic Error.  Set before the WQE's error
 * completion, which moves @qp to ERROR and flushes what it holds: the
 * flushed completions carry it.
 */
static void rsw_tx_local_cause(struct rsw_qp *qp)
{
	struct rsw_term_cause c = RSW_TERM_CAUSE(RSW_TERM_LAYER_RDMAP,
						 RSW_RDMAP_ET_CATASTROPHIC, 0);

	rsw_qp_term_cause(qp, rsw_term_vendor_err(&c));
}

/*
 * The memory went away mid-message (the source MR invalidated,
 * deregistered or changed after the first FPDUs): the message is
 * abandoned, its WQE of @qp completes LOC_PROT_ERR, its cause first.  A
 * Read or Atomic Request too (only the sink's own fault can stop one), as
 * rsw_tx_abort() would have flushed it: once idle, nothing else would.
 * Whether the caller's Terminate may follow is the sink's matter: not
 * after an FPDU TCP took in part (stream.c, rsw_stream_tx_fault()).
 */
static void rsw_tx_fault(struct rsw_tx *tx, struct rsw_qp *qp)
{
	if ((tx->msg.kind == RSW_TX_WQE || tx->msg.kind == RSW_TX_READ) &&
	    qp) {
		rsw_tx_local_cause(qp);
		rsw_qp_sq_complete(qp, tx->sqe_idx, RDMAP_SW_WC_LOC_PROT_ERR, 0);
	}
	rsw_tx_idle(tx);
}

/* Continue the message in progress; 0 when it is finished. */
static int rsw_tx_resume(struct rsw_tx *tx, struct rsw_qp *qp)
{
	enum rsw_mr_err err;
	int ret;

	if (tx->msg.kind == RSW_TX_IDLE)
		return 0;
	ret = rsw_tx_emit(tx, &err);
	if (!ret && tx->msg.imm_next) {
		rsw_tx_imm_next(tx);
		ret = rsw_tx_emit(tx, &err);
	}
	if (ret == -EFAULT)
		rsw_tx_fault(tx, qp);
	if (!ret)
		rsw_tx_finish(tx, qp);
	return ret;
}

int rsw_tx_next_fpdu(struct rsw_tx *tx, struct rsw_qp *qp)
{
	bool last = false;
	int ret;

	if (tx->msg.kind == RSW_TX_IDLE)
		return 0;
	/* A batch of one: the FPDU the sink may have taken in part. */
	ret = rsw_tx_describe(tx, 1) ? -EFAULT : rsw_tx_push(tx, &last);
	if (ret == -EFAULT)
		rsw_tx_fault(tx, qp);
	if (ret || !last || tx->msg.imm_next)
		return ret;
	/* It was the message's last: the message is out as usual. */
	rsw_tx_msg_sent(tx);
	rsw_tx_finish(tx, qp);
	return 0;
}

int rsw_tx_wqe(struct rsw_tx *tx, struct rsw_qp *qp,
	       const struct rdmap_sw_sqe *sqe, u32 idx)
{
	u8 status;

	if (tx->msg.kind != RSW_TX_IDLE)
		return -EBUSY;
	if (sqe != &tx->sqe)
		tx->sqe = *sqe;
	tx->sqe_idx = idx;
	status = rsw_tx_wqe_msg(tx);
	if (status != RDMAP_SW_WC_SUCCESS) {
		rsw_tx_idle(tx);
		if (qp) {
			rsw_tx_local_cause(qp);
			rsw_qp_sq_complete(qp, idx, status, 0);
		}
		/*
		 * A request that cannot be made is replaced by a Terminate
		 * (RFC 5040 section 7.1 rule 1, RFC 7306 section 8.1 rule
		 * 1): the caller's.
		 */
		return -EPROTO;
	}
	return rsw_tx_resume(tx, qp);
}
EXPORT_SYMBOL_IF_KUNIT(rsw_tx_wqe);

/*
 * @term for a refused Read or Atomic Request @rr: its cause and the parts
 * of the request it carries (rr->ddp, and rr->rreq for a Read); -EACCES.
 */
static int rsw_tx_rresp_refused(const struct rsw_tx_rresp *rr,
				enum rsw_mr_err err, struct rsw_rx_term *term)
{
	*term = (struct rsw_rx_term){
		.cause = rsw_mr_err_to_term(err, RSW_MR_USE_READ_REQ),
	};
	rsw_term_parts(term, true, !rr->atomic);
	return -EACCES;
}

/*
 * Execute an Atomic Request now, its turn among the responses, and make
 * its Atomic Response the message in progress.  A refused target sends a
 * Terminate with the request's DDP header (RFC 7306 section 8.1 rule 2).
 */
static int rsw_tx_atomic_response(struct rsw_tx *tx,
				  const struct rsw_tx_rresp *rr,
				  struct rsw_rx_term *term)
{
	struct rsw_tx_msg *m = &tx->msg;
	struct rsw_mr_ref ref;
	enum rsw_mr_err err;
	u64 orig;

	err = rsw_mr_get_qp(tx->rsw, tx->pd, tx->cfg.qp, rr->src_stag,
			    rr->src_to, sizeof(u64), IB_ACCESS_REMOTE_ATOMIC,
			    &ref);
	if (!err) {
		err = rsw_mr_atomic(&ref, rr->src_to, &rr->op, &orig);
		rsw_mr_ref_put(&ref);
	}
	if (err)
		return rsw_tx_rresp_refused(rr, err, term);
	memset(m, 0, sizeof(*m));
	m->kind = RSW_TX_RRESP;
	m->op = RSW_OP_ATOMIC_RESP;
	m->src = RSW_TX_SRC_NONE;
	m->aresp.req_id = rr->req_id;
	m->aresp.orig = cpu_to_be64(orig);
	return rsw_tx_resume(tx, NULL);
}

int rsw_tx_read_response(struct rsw_tx *tx, const struct rsw_tx_rresp *rr,
			 struct rsw_rx_term *term)
{
	struct rsw_tx_msg *m = &tx->msg;
	struct rsw_mr_ref ref;
	enum rsw_mr_err err;

	if (m->kind != RSW_TX_IDLE)
		return -EBUSY;
	if (rr->atomic)
		return rsw_tx_atomic_response(tx, rr, term);
	if (rr->len) {
		err = rsw_mr_get_qp(tx->rsw, tx->pd, tx->cfg.qp, rr->src_stag,
				    rr->src_to, rr->len, IB_ACCESS_REMOTE_READ,
				    &ref);
		if (err)
			return rsw_tx_rresp_refused(rr, err, term);
		rsw_mr_ref_put(&ref);
	}
	memset(m, 0, sizeof(*m));
	m->kind = RSW_TX_RRESP;
	m->op = RSW_OP_READ_RESP;
	m->src = RSW_TX_SRC_MR;
	m->len = rr->len;
	m->stag = rr->sink_stag;
	m->to = rr->sink_to;
	m->src_stag = rr->src_stag;
	m->src_to = rr->src_to;
	return rsw_tx_resume(tx, NULL);
}
EXPORT_SYMBOL_IF_KUNIT(rsw_tx_read_response);

void rsw_tx_term_from_rx(struct rsw_tx_term *t, const struct rsw_rx *rx)
{
	const struct rsw_rx_term *rt = rsw_rx_stopped(rx);

	memset(t, 0, sizeof(*t));
	if (!rt)
		return;
	t->why = *rt;
	memcpy(t->hdr, rx->hdr_octets, sizeof(t->hdr));
}
EXPORT_SYMBOL_IF_KUNIT(rsw_tx_term_from_rx);

int rsw_tx_terminate(struct rsw_tx *tx, const struct rsw_tx_term *t)
{
	struct rsw_tx_msg *m = &tx->msg;

	if (m->kind != RSW_TX_IDLE)
		return -EBUSY;
	memset(m, 0, sizeof(*m));
	m->kind = RSW_TX_TERM;
	m->op = RSW_OP_TERMINATE;
	m->term = *t;
	/* Headers of a Read Request travel only after an untagged one. */
	if (m->term.why.rdma_hdr &&
	    (!m->term.why.ddp_hdr ||
	     rsw_ddp_tagged((const struct rsw_ctrl *)m->term.hdr)))
		m->term.why.rdma_hdr = false;
	return rsw_tx_resume(tx, NULL);
}
EXPORT_SYMBOL_IF_KUNIT(rsw_tx_terminate);

/* ---------------------------------------------------------- the driver */

u32 rsw_tx_reads_outstanding(const struct rsw_tx *tx)
{
	return tx->rd_tail - tx->rd_head;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_tx_reads_outstanding);

const struct rsw_tx_rd *rsw_tx_read_oldest(const struct rsw_tx *tx)
{
	if (!rsw_tx_reads_outstanding(tx))
		return NULL;
	return &tx->rd[tx->rd_head % RSW_MAX_RD_ATOM];
}
EXPORT_SYMBOL_IF_KUNIT(rsw_tx_read_oldest);

bool rsw_tx_read_done(struct rsw_tx *tx, u32 *idx)
{
	if (!rsw_tx_reads_outstanding(tx))
		return false;
	*idx = tx->rd[tx->rd_head++ % RSW_MAX_RD_ATOM].idx;
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_tx_read_done);

/* Whether the taken WQE tx->sqe must wait for Reads (fence, ORD). */
static bool rsw_tx_blocked(const struct rsw_tx *tx)
{
	const struct rdmap_sw_sqe *sqe = &tx->sqe;
	bool read = sqe->opcode == RDMAP_SW_WR_RDMA_READ ||
		    sqe->opcode == RDMAP_SW_WR_RDMA_READ_WITH_INV ||
		    rsw_tx_sqe_atomic(sqe);
	u32 out = rsw_tx_reads_outstanding(tx);

	if (sqe->flags & RDMAP_SW_SQE_FENCE && out)
		return true;
	/* With no ORD at all it fails instead (rsw_tx_no_ord()). */
	return read && tx->cfg.ord && out >= tx->cfg.ord;
}

/*
 * Take the next WQE into tx->sqe, or keep the one that was waiting.  A
 * fenced local operation waits like a wire WQE, then runs here.
 */
static enum rsw_sq_take rsw_tx_take(struct rsw_tx *tx, struct rsw_qp *qp)
{
	enum rsw_sq_take t;

	if (tx->sqe_pending)
		t = tx->sqe_local ? RSW_SQ_FENCED_LOCAL : RSW_SQ_WIRE;
	else
		t = rsw_qp_sq_take(qp, &tx->sqe, &tx->sqe_idx);
	if (t != RSW_SQ_WIRE && t != RSW_SQ_FENCED_LOCAL)
		return t;
	tx->sqe_local = t == RSW_SQ_FENCED_LOCAL;
	tx->sqe_pending = rsw_tx_blocked(tx);
	if (tx->sqe_pending)
		return RSW_SQ_EMPTY;
	if (t == RSW_SQ_WIRE)
		return t;
	tx->sqe_local = false;
	rsw_qp_sq_local(qp, &tx->sqe, tx->sqe_idx);
	return RSW_SQ_LOCAL;
}

int rsw_tx_process(struct rsw_tx *tx, struct rsw_qp *qp, unsigned int budget)
{
	unsigned int done = 0;
	enum rsw_sq_take t;
	int ret;

	ret = rsw_tx_resume(tx, qp);
	if (ret)
		return ret;
	while (done < budget) {
		t = rsw_tx_take(tx, qp);
		if (t == RSW_SQ_EMPTY)
			break;
		done++;
		if (t == RSW_SQ_LOCAL)
			continue;
		/* Another WQE to send in this run: let the sink coalesce. */
		tx->msg_more = done < budget && qp && rsw_qp_sq_pending(qp);
		ret = rsw_tx_wqe(tx, qp, &tx->sqe, tx->sqe_idx);
		if (ret)
			return ret;
	}
	return done;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_tx_process);

void rsw_tx_abort(struct rsw_tx *tx, struct rsw_qp *qp)
{
	u32 idx;

	if (tx->msg.kind == RSW_TX_WQE || tx->msg.kind == RSW_TX_READ ||
	    tx->sqe_pending)
		rsw_qp_sq_complete(qp, tx->sqe_idx, RDMAP_SW_WC_WR_FLUSH_ERR, 0);
	rsw_tx_idle(tx);
	tx->sqe_pending = false;
	tx->sqe_local = false;
	while (rsw_tx_read_done(tx, &idx))
		rsw_qp_sq_complete(qp, idx, RDMAP_SW_WC_WR_FLUSH_ERR, 0);
}
EXPORT_SYMBOL_IF_KUNIT(rsw_tx_abort);
