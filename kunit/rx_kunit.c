// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite rdmap_sw_rx: the receive stream parser (rx.c) against a mock
 * consumer that records every call and owns a fake MR and two receive
 * buffers, each between guard bytes.
 *
 * Every case builds a stream with wire.h's accessors and fpdu.h's CRC
 * helpers, and, next to it, the calls a correct parser makes for it
 * (placements, completions, the final stop with its Terminate layer, type,
 * code and included headers).  Each stream is then fed whole, split in two
 * at every octet boundary, and one octet at a time: every way must give the
 * same calls (adjacent placements of one segment merged, since pieces
 * follow the input), the same buffer contents and untouched guards.
 */
#include <kunit/test.h>
#include <linux/module.h>
#include <linux/prandom.h>
#include <linux/skbuff.h>
#include <linux/string.h>

#include "internal.h"
#include "fpdu.h"
#include "mem.h"
#include "wire.h"

RSW_IMPORT_KUNIT_NS();

#define RX_GUARD	0xa5
#define RX_GUARD_LEN	32
#define RX_MR_LEN	512
#define RX_MR_TO	0x10000ULL		/* first TO of the fake MR */
#define RX_MR_STAG	0x00123456U		/* index 0x1234, key 0x56 */
#define RX_OTHER_PD	0x00777701U		/* an MR of another PD */
#define RX_RQ_LEN	128
#define RX_RQ_NUM	2
#define RX_MSN		1			/* first MSN of every queue */
#define RX_INV_STAG	0x00abcd01U		/* may be invalidated */
#define RX_SRC_STAG	0x00beef02U		/* a valid Read source */
#define RX_STREAM_MAX	2048
#define RX_EV_MAX	48
#define RX_MAX_ULPDU	1024
#define RX_SEED		0x72785f6bULL
#define RX_RANDOM_RUNS	3000

/* -------------------------------------------------------------------------
 * The mock consumer.
 */
enum rx_ev_kind { EV_PLACE_T = 1, EV_PLACE_U, EV_DONE, EV_STOP };

struct rx_ev {
	enum rx_ev_kind kind;
	u8 opcode;
	bool last;
	u32 stag;
	u64 to;			/* place: TO of the first octet */
	u32 qn, msn, mo;	/* place: MO of the first octet */
	u32 len;		/* place: octets; done: payload_len */
	u32 extra;		/* done: Invalidate STag, Read size, Term ctrl */
	bool seg;		/* stop: a segment was in progress */
	struct rsw_rx_term term;
};

struct rx_mem {
	u8 mr[RX_GUARD_LEN + RX_MR_LEN + RX_GUARD_LEN];
	u8 rq[RX_RQ_NUM][RX_GUARD_LEN + RX_RQ_LEN + RX_GUARD_LEN];
};

struct rx_mock {
	struct rx_mem mem;
	struct rx_ev ev[RX_EV_MAX];
	u32 nev;
	bool overflow;
};

static struct rx_ev *rx_mock_add(struct rx_mock *m, enum rx_ev_kind kind)
{
	if (m->nev == RX_EV_MAX) {
		m->overflow = true;
		return &m->ev[RX_EV_MAX - 1];
	}
	m->ev[m->nev].kind = kind;
	return &m->ev[m->nev++];
}

/* Record a placement, merged with the previous one if it continues it. */
static void rx_mock_place(struct rx_mock *m, const struct rx_ev *e)
{
	struct rx_ev *prev = m->nev ? &m->ev[m->nev - 1] : NULL;

	if (prev && prev->kind == e->kind && prev->opcode == e->opcode &&
	    prev->stag == e->stag && prev->qn == e->qn &&
	    prev->msn == e->msn &&
	    (e->kind == EV_PLACE_T ? prev->to + prev->len == e->to :
				     prev->mo + prev->len == e->mo)) {
		prev->len += e->len;
		return;
	}
	*rx_mock_add(m, e->kind) = *e;
}

static void rx_mock_window(void *ctx, u8 qn, u32 msn, struct rsw_rx_window *w)
{
	w->msn = RX_MSN;
	w->count = qn == RSW_QN_SEND ? RX_RQ_NUM : 1;
	w->len = qn == RSW_QN_SEND ? RX_RQ_LEN : 0;
}

/* What rsw_mr_get() answers for the whole segment's range. */
static enum rsw_mr_err rx_mock_mr_check(u32 stag, u64 to, u64 len)
{
	if (stag == RX_OTHER_PD)
		return RSW_MR_ERR_PD;
	if (stag != RX_MR_STAG)
		return RSW_MR_ERR_STAG;
	if (to + len < to)
		return RSW_MR_ERR_WRAP;
	if (to < RX_MR_TO || to + len > RX_MR_TO + RX_MR_LEN)
		return RSW_MR_ERR_BOUNDS;
	return RSW_MR_OK;
}

static bool rx_mock_place_tagged(void *ctx, const struct rsw_rx_seg *seg,
				 u64 to, const void *data, u32 len,
				 struct rsw_term_cause *term)
{
	struct rx_mock *m = ctx;
	enum rsw_mr_err err;
	struct rx_ev e = {
		.kind = EV_PLACE_T, .opcode = seg->opcode, .stag = seg->stag,
		.to = to, .len = len,
	};

	err = rx_mock_mr_check(seg->stag, seg->to, seg->payload_len);
	if (err) {
		*term = rsw_mr_err_to_term(err, RSW_MR_USE_TAGGED);
		return false;
	}
	memcpy(m->mem.mr + RX_GUARD_LEN + (to - RX_MR_TO), data, len);
	rx_mock_place(m, &e);
	return true;
}

static bool rx_mock_place_untagged(void *ctx, const struct rsw_rx_seg *seg,
				   u32 mo, const void *data, u32 len,
				   struct rsw_term_cause *term)
{
	struct rx_mock *m = ctx;
	struct rx_ev e = {
		.kind = EV_PLACE_U, .opcode = seg->opcode, .qn = seg->qn,
		.msn = seg->msn, .mo = mo, .len = len,
	};

	/* The parser promised MSN in the window and MO + len in the buffer. */
	if (seg->qn != RSW_QN_SEND || seg->msn - RX_MSN >= RX_RQ_NUM ||
	    mo > RX_RQ_LEN || len > RX_RQ_LEN - mo) {
		term->layer = 0xf;	/* an impossible layer: the case fails */
		return false;
	}
	memcpy(m->mem.rq[seg->msn - RX_MSN] + RX_GUARD_LEN + mo, data, len);
	rx_mock_place(m, &e);
	return true;
}

/* Checks only the consumer can do: Invalidate STag, Read source STag. */
static bool rx_mock_refuse(const struct rsw_rx_seg *seg)
{
	const struct rsw_rdmap_rreq *rr = &seg->hdr->rreq.rreq;

	if (rsw_rdmap_op_inval(seg->opcode))
		return seg->inval_stag != RX_INV_STAG;
	if (seg->opcode == RSW_OP_READ_REQ)
		return rr->read_size && be32_to_cpu(rr->src_stag) != RX_SRC_STAG;
	return false;
}

static bool rx_mock_seg_done(void *ctx, const struct rsw_rx_seg *seg,
			     struct rsw_term_cause *term)
{
	const union rsw_hdr *h = seg->hdr;
	struct rx_ev *e;

	if (rx_mock_refuse(seg)) {
		bool inval = rsw_rdmap_op_inval(seg->opcode);

		*term = rsw_mr_err_to_term(inval ? RSW_MR_ERR_STAG :
						   RSW_MR_ERR_ACCESS,
					   inval ? RSW_MR_USE_INVALIDATE :
						   RSW_MR_USE_READ_REQ);
		return false;
	}
	e = rx_mock_add(ctx, EV_DONE);
	e->opcode = seg->opcode;
	e->last = seg->last;
	e->stag = seg->stag;
	e->to = seg->to;
	e->qn = seg->qn;
	e->msn = seg->msn;
	e->mo = seg->mo;
	e->len = seg->payload_len;
	if (rsw_rdmap_op_inval(seg->opcode))
		e->extra = seg->inval_stag;
	if (seg->opcode == RSW_OP_READ_REQ)
		e->extra = be32_to_cpu(h->rreq.rreq.read_size);
	if (seg->opcode == RSW_OP_TERMINATE)
		e->extra = be32_to_cpu(h->term.term.ctrl);
	return true;
}

static void rx_mock_stop(void *ctx, const struct rsw_rx_seg *seg,
			 const struct rsw_rx_term *term)
{
	struct rx_ev *e = rx_mock_add(ctx, EV_STOP);

	e->seg = seg;
	e->term = *term;
}

static const struct rsw_rx_ops rx_mock_ops = {
	.window = rx_mock_window,
	.place_tagged = rx_mock_place_tagged,
	.place_untagged = rx_mock_place_untagged,
	.seg_done = rx_mock_seg_done,
	.stop = rx_mock_stop,
};

static void rx_mem_init(struct rx_mem *mem)
{
	memset(mem, RX_GUARD, sizeof(*mem));
}

/* -------------------------------------------------------------------------
 * Stream builder: the octets, and the calls and memory they must produce.
 */
struct rx_stream {
	u8 data[RX_STREAM_MAX];
	u32 len;
	bool crc;		/* CRC negotiated for this stream */
	u32 cut;		/* octets dropped at the end, then EOF */
	u16 max_ulpdu;
	u8 seed;
	struct rx_ev ev[RX_EV_MAX];
	u32 nev;
	struct rx_mem mem;	/* expected memory */
	/* Start of the last frame: its events and memory effects. */
	u32 mark;
	struct rx_mem mark_mem;
};

/* Deviations of one frame from a well-formed one. */
struct rx_mut {
	u8 pad;			/* value of every PAD octet */
	bool crc_zero_pad;	/* sender's CRC computed over zero PAD */
	u32 crc_xor;		/* flip these CRC bits */
	bool set_len;		/* ULPDU_Length = len instead of the truth */
	u16 len;
};

static const struct rx_mut rx_ok;

static struct rx_ev *rx_expect(struct rx_stream *s, enum rx_ev_kind kind)
{
	struct rx_ev *e = &s->ev[s->nev++];

	memset(e, 0, sizeof(*e));
	e->kind = kind;
	return e;
}

/*
 * Append a frame: @h (its first @hdr_len octets, ULPDU_Length set here),
 * @plen payload octets of a fresh pattern, PAD and trailer.  Returns the
 * payload's position in s->data.
 */
static const u8 *rx_emit(struct rx_stream *s, union rsw_hdr *h, u32 hdr_len,
			 u32 plen, const struct rx_mut *mut)
{
	u32 ulpdu = hdr_len - RSW_MPA_HDR_LEN + plen;
	u32 pad = rsw_mpa_pad(ulpdu), i;
	u8 *start = s->data + s->len;
	u8 *payload = start + hdr_len;
	__le32 crc = 0;

	s->mark = s->nev;
	s->mark_mem = s->mem;
	rsw_set_mpa_len(&h->c, mut->set_len ? mut->len : ulpdu);
	memcpy(start, h, hdr_len);
	for (i = 0; i < plen; i++)
		payload[i] = s->seed * 31 + i * 7 + (i >> 8);
	s->seed++;
	memset(payload + plen, mut->pad, pad);
	if (s->crc && mut->crc_zero_pad)
		crc = rsw_mpa_fpdu_crc(start, hdr_len, payload, plen);
	else if (s->crc)
		crc = rsw_mpa_crc(start, hdr_len + plen + pad);
	crc ^= cpu_to_le32(mut->crc_xor);
	memcpy(payload + plen + pad, &crc, sizeof(crc));
	s->len += rsw_fpdu_plain_len(ulpdu);
	return payload;
}

static void rx_hdr_tagged(union rsw_hdr *h, u8 op, bool last, u32 stag,
			  u64 to)
{
	memset(h, 0, sizeof(*h));
	h->c.ctrl = rsw_ctrl_word(op, last);
	h->tagged.stag = cpu_to_be32(stag);
	h->tagged.to = cpu_to_be64(to);
}

static void rx_hdr_untagged(union rsw_hdr *h, u8 op, bool last, u32 qn,
			    u32 msn, u32 mo)
{
	memset(h, 0, sizeof(*h));
	h->c.ctrl = rsw_ctrl_word(op, last);
	h->untagged.qn = cpu_to_be32(qn);
	h->untagged.msn = cpu_to_be32(msn);
	h->untagged.mo = cpu_to_be32(mo);
}

/* Write or Read Response segment, well-formed unless @mut says so. */
static void rx_tagged(struct rx_stream *s, u8 op, bool last, u32 stag, u64 to,
		      u32 plen, const struct rx_mut *mut)
{
	union rsw_hdr h;
	const u8 *p;
	struct rx_ev *e;

	rx_hdr_tagged(&h, op, last, stag, to);
	p = rx_emit(s, &h, sizeof(h.tagged), plen, mut);
	if (plen && !rx_mock_mr_check(stag, to, plen)) {
		e = rx_expect(s, EV_PLACE_T);
		e->opcode = op;
		e->stag = stag;
		e->to = to;
		e->len = plen;
		memcpy(s->mem.mr + RX_GUARD_LEN + (to - RX_MR_TO), p, plen);
	}
	e = rx_expect(s, EV_DONE);
	e->opcode = op;
	e->last = last;
	e->stag = stag;
	e->to = to;
	e->len = plen;
}

/* A Send-type segment into receive buffer @msn at @mo. */
static void rx_send(struct rx_stream *s, u8 op, bool last, u32 msn, u32 mo,
		    u32 plen, u32 inval, const struct rx_mut *mut)
{
	union rsw_hdr h;
	const u8 *p;
	struct rx_ev *e;

	rx_hdr_untagged(&h, op, last, RSW_QN_SEND, msn, mo);
	h.untagged.inval_stag = cpu_to_be32(inval);
	p = rx_emit(s, &h, sizeof(h.untagged), plen, mut);
	if (plen && msn - RX_MSN < RX_RQ_NUM && mo + plen <= RX_RQ_LEN) {
		e = rx_expect(s, EV_PLACE_U);
		e->opcode = op;
		e->msn = msn;
		e->mo = mo;
		e->len = plen;
		memcpy(s->mem.rq[msn - RX_MSN] + RX_GUARD_LEN + mo, p, plen);
	}
	e = rx_expect(s, EV_DONE);
	e->opcode = op;
	e->last = last;
	e->msn = msn;
	e->mo = mo;
	e->len = plen;
	e->extra = rsw_rdmap_op_inval(op) ? inval : 0;
}

static void rx_read_req(struct rx_stream *s, u32 msn, u32 size, u32 src_stag)
{
	union rsw_hdr h;
	struct rx_ev *e;

	rx_hdr_untagged(&h, RSW_OP_READ_REQ, true, RSW_QN_READ_REQ, msn, 0);
	h.rreq.rreq.sink_stag = cpu_to_be32(0x4242);
	h.rreq.rreq.sink_to = cpu_to_be64(0x1000);
	h.rreq.rreq.read_size = cpu_to_be32(size);
	h.rreq.rreq.src_stag = cpu_to_be32(src_stag);
	h.rreq.rreq.src_to = cpu_to_be64(RX_MR_TO);
	rx_emit(s, &h, sizeof(h.rreq), 0, &rx_ok);
	e = rx_expect(s, EV_DONE);
	e->opcode = RSW_OP_READ_REQ;
	e->last = true;
	e->qn = RSW_QN_READ_REQ;
	e->msn = msn;
	e->extra = size;
}

/* A Terminate with its optional DDP (@d, of a tagged segment) / RDMA header. */
static void rx_terminate(struct rx_stream *s, bool d, bool r)
{
	union rsw_hdr h;
	struct rsw_ddp_tagged *inner = (void *)((u8 *)&h + sizeof(h.term));
	struct rx_ev *e;

	rx_hdr_untagged(&h, RSW_OP_TERMINATE, true, RSW_QN_TERMINATE, RX_MSN,
			0);
	rsw_term_set_layer(&h.term.term, RSW_TERM_LAYER_DDP);
	rsw_term_set_etype(&h.term.term, RSW_DDP_ET_TAGGED);
	rsw_term_set_ecode(&h.term.term, RSW_DDP_EC_T_BASE_BOUNDS);
	rsw_term_set_m(&h.term.term, d);
	rsw_term_set_d(&h.term.term, d);
	rsw_term_set_r(&h.term.term, r);
	if (d) {
		/* Only the control word's T flag matters to the length. */
		inner->c.ctrl = rsw_ctrl_word(RSW_OP_WRITE, true);
		inner->stag = cpu_to_be32(RX_MR_STAG);
	}
	rx_emit(s, &h, sizeof(struct rsw_ddp_untagged) +
		rsw_term_hdr_len(d, true, r), 0, &rx_ok);
	e = rx_expect(s, EV_DONE);
	e->opcode = RSW_OP_TERMINATE;
	e->last = true;
	e->qn = RSW_QN_TERMINATE;
	e->msn = RX_MSN;
	e->extra = be32_to_cpu(h.term.term.ctrl);
}

/*
 * The last frame fails: drop what it was expected to do (but its
 * placements if @placed), then expect the stop.
 */
static void rx_fail(struct rx_stream *s, bool placed, u8 layer, u8 etype,
		    u8 ecode, bool d, bool r, bool seg)
{
	struct rx_ev *e;

	if (placed) {
		while (s->nev > s->mark &&
		       s->ev[s->nev - 1].kind == EV_DONE)
			s->nev--;
	} else {
		s->nev = s->mark;
		s->mem = s->mark_mem;
	}
	e = rx_expect(s, EV_STOP);
	e->seg = seg;
	e->term = (struct rsw_rx_term) {
		.cause = RSW_TERM_CAUSE(layer, etype, ecode),
		.ddp_hdr = d, .rdma_hdr = r,
	};
}

static void rx_fail_mr(struct rx_stream *s, enum rsw_mr_err err)
{
	struct rsw_term_cause t = rsw_mr_err_to_term(err, RSW_MR_USE_TAGGED);

	rx_fail(s, false, t.layer, t.etype, t.ecode, true, false, true);
}

/* A bad header, rebuilt from a well-formed Send by @mutate. */
static void rx_bad_send(struct rx_stream *s, void (*mutate)(union rsw_hdr *h),
			u32 hdr_len, u8 layer, u8 etype, u8 ecode)
{
	union rsw_hdr h;

	rx_hdr_untagged(&h, RSW_OP_SEND, true, RSW_QN_SEND, RX_MSN, 0);
	mutate(&h);
	rx_emit(s, &h, hdr_len, 8, &rx_ok);
	rx_fail(s, false, layer, etype, ecode, true, false, false);
}

/* -------------------------------------------------------------------------
 * Cases: each builds one stream and its expectations.
 */
struct rx_case {
	const char *desc;
	void (*build)(struct rx_stream *s);
};

static void rx_b_write(struct rx_stream *s)
{
	rx_tagged(s, RSW_OP_WRITE, true, RX_MR_STAG, RX_MR_TO + 5, 37, &rx_ok);
}

static void rx_b_write_zero(struct rx_stream *s)
{
	rx_tagged(s, RSW_OP_WRITE, true, 0xdead, 0, 0, &rx_ok);
}

static void rx_b_write_multi(struct rx_stream *s)
{
	rx_tagged(s, RSW_OP_WRITE, false, RX_MR_STAG, RX_MR_TO, 100, &rx_ok);
	rx_tagged(s, RSW_OP_WRITE, false, RX_MR_STAG, RX_MR_TO + 100, 101,
		  &rx_ok);
	rx_tagged(s, RSW_OP_WRITE, true, RX_MR_STAG, RX_MR_TO + 201, 3, &rx_ok);
}

static void rx_b_read_req(struct rx_stream *s)
{
	rx_read_req(s, RX_MSN, 4096, RX_SRC_STAG);
}

static void rx_b_read_resp_multi(struct rx_stream *s)
{
	rx_tagged(s, RSW_OP_READ_RESP, false, RX_MR_STAG, RX_MR_TO, 64, &rx_ok);
	rx_tagged(s, RSW_OP_READ_RESP, false, RX_MR_STAG, RX_MR_TO + 64, 64,
		  &rx_ok);
	rx_tagged(s, RSW_OP_READ_RESP, true, RX_MR_STAG, RX_MR_TO + 128, 1,
		  &rx_ok);
}

static void rx_b_send(struct rx_stream *s)
{
	rx_send(s, RSW_OP_SEND, true, RX_MSN, 0, 50, 0x1234, &rx_ok);
}

static void rx_b_send_multi(struct rx_stream *s)
{
	rx_send(s, RSW_OP_SEND, false, RX_MSN, 0, 40, 0, &rx_ok);
	rx_send(s, RSW_OP_SEND, false, RX_MSN, 40, 41, 0, &rx_ok);
	rx_send(s, RSW_OP_SEND, true, RX_MSN, 81, 47, 0, &rx_ok);
	rx_send(s, RSW_OP_SEND, true, RX_MSN + 1, 0, 0, 0, &rx_ok);
}

static void rx_b_send_inv(struct rx_stream *s)
{
	rx_send(s, RSW_OP_SEND_INV, true, RX_MSN, 0, 9, RX_INV_STAG, &rx_ok);
}

static void rx_b_send_se(struct rx_stream *s)
{
	rx_send(s, RSW_OP_SEND_SE, true, RX_MSN, 0, 128, 0x99, &rx_ok);
}

static void rx_b_send_se_inv(struct rx_stream *s)
{
	rx_send(s, RSW_OP_SEND_SE_INV, true, RX_MSN + 1, 0, 2, RX_INV_STAG,
		&rx_ok);
}

static void rx_b_term(struct rx_stream *s)
{
	rx_terminate(s, false, false);
}

static void rx_b_term_hdrs(struct rx_stream *s)
{
	rx_terminate(s, true, true);
}

static void rx_b_send_in_read_resp(struct rx_stream *s)
{
	rx_tagged(s, RSW_OP_READ_RESP, false, RX_MR_STAG, RX_MR_TO, 30, &rx_ok);
	rx_send(s, RSW_OP_SEND_SE, true, RX_MSN, 0, 31, 0, &rx_ok);
	rx_tagged(s, RSW_OP_READ_RESP, true, RX_MR_STAG, RX_MR_TO + 30, 33,
		  &rx_ok);
}

static void rx_b_every_op(struct rx_stream *s)
{
	rx_tagged(s, RSW_OP_WRITE, true, RX_MR_STAG, RX_MR_TO, 1, &rx_ok);
	rx_read_req(s, RX_MSN, 0, 0);
	rx_tagged(s, RSW_OP_READ_RESP, true, RX_MR_STAG, RX_MR_TO + 1, 2,
		  &rx_ok);
	rx_send(s, RSW_OP_SEND, true, RX_MSN, 0, 3, 0, &rx_ok);
	rx_send(s, RSW_OP_SEND_INV, true, RX_MSN + 1, 0, 4, RX_INV_STAG,
		&rx_ok);
	rx_send(s, RSW_OP_SEND_SE, true, RX_MSN, 0, 5, 0, &rx_ok);
	rx_send(s, RSW_OP_SEND_SE_INV, true, RX_MSN + 1, 0, 6, RX_INV_STAG,
		&rx_ok);
	rx_terminate(s, true, false);
}

/* RFC 5040/5041: reserved control bits are ignored on receive. */
static void rx_b_reserved_bits(struct rx_stream *s)
{
	union rsw_hdr h;
	const u8 *p;
	struct rx_ev *e;

	rx_hdr_tagged(&h, RSW_OP_WRITE, true, RX_MR_STAG, RX_MR_TO);
	h.c.ctrl |= RSW_DDP_RESERVED | RSW_RDMAP_RESERVED;
	p = rx_emit(s, &h, sizeof(h.tagged), 4, &rx_ok);
	e = rx_expect(s, EV_PLACE_T);
	e->opcode = RSW_OP_WRITE;
	e->stag = RX_MR_STAG;
	e->to = RX_MR_TO;
	e->len = 4;
	memcpy(s->mem.mr + RX_GUARD_LEN, p, 4);
	e = rx_expect(s, EV_DONE);
	e->opcode = RSW_OP_WRITE;
	e->last = true;
	e->stag = RX_MR_STAG;
	e->to = RX_MR_TO;
	e->len = 4;
}

/* RFC 5044: PAD is ignored on receive, only covered by the CRC. */
static void rx_b_pad_nonzero_crc_ok(struct rx_stream *s)
{
	struct rx_mut m = { .pad = 0xee };

	rx_send(s, RSW_OP_SEND, true, RX_MSN, 0, 5, 0, &m);
}

static void rx_b_pad_nonzero_nocrc(struct rx_stream *s)
{
	struct rx_mut m = { .pad = 0xee, .crc_zero_pad = true };

	s->crc = false;
	rx_send(s, RSW_OP_SEND, true, RX_MSN, 0, 5, 0, &m);
}

/* Without CRC the trailer is zero (as sent) or anything: not checked. */
static void rx_b_nocrc_zero(struct rx_stream *s)
{
	s->crc = false;
	rx_b_every_op(s);
}

static void rx_b_nocrc_garbage(struct rx_stream *s)
{
	struct rx_mut m = { .crc_xor = 0xdeadbeef };

	s->crc = false;
	rx_send(s, RSW_OP_SEND, true, RX_MSN, 0, 6, 0, &m);
}

static void rx_b_bad_pad(struct rx_stream *s)
{
	struct rx_mut m = { .pad = 0x01, .crc_zero_pad = true };

	rx_send(s, RSW_OP_SEND, true, RX_MSN, 0, 5, 0, &m);
	rx_fail(s, true, RSW_TERM_LAYER_LLP, RSW_LLP_ET_MPA, RSW_MPA_EC_CRC,
		false, false, true);
}

static void rx_b_bad_crc(struct rx_stream *s)
{
	struct rx_mut m = { .crc_xor = 0x100 };

	rx_tagged(s, RSW_OP_WRITE, true, RX_MR_STAG, RX_MR_TO, 20, &rx_ok);
	rx_tagged(s, RSW_OP_WRITE, true, RX_MR_STAG, RX_MR_TO + 20, 20, &m);
	rx_fail(s, true, RSW_TERM_LAYER_LLP, RSW_LLP_ET_MPA, RSW_MPA_EC_CRC,
		false, false, true);
}

static void rx_b_truncated_payload(struct rx_stream *s)
{
	rx_send(s, RSW_OP_SEND, true, RX_MSN, 0, 11, 0, &rx_ok);
	s->cut = RSW_MPA_CRC_LEN + 1;	/* one PAD octet and the CRC */
	rx_fail(s, true, RSW_TERM_LAYER_LLP, RSW_LLP_ET_MPA,
		RSW_MPA_EC_TCP_LOST, false, false, true);
}

static void rx_b_truncated_hdr(struct rx_stream *s)
{
	rx_send(s, RSW_OP_SEND, true, RX_MSN, 0, 4, 0, &rx_ok);
	rx_read_req(s, RX_MSN, 1, RX_SRC_STAG);
	s->cut = RSW_MPA_CRC_LEN + 10;	/* into the Read Request header */
	rx_fail(s, false, RSW_TERM_LAYER_LLP, RSW_LLP_ET_MPA,
		RSW_MPA_EC_TCP_LOST, false, false, false);
}

static void rx_b_oversized(struct rx_stream *s)
{
	s->max_ulpdu = 256;
	rx_tagged(s, RSW_OP_WRITE, true, RX_MR_STAG, RX_MR_TO, 300, &rx_ok);
	rx_fail(s, false, RSW_TERM_LAYER_LLP, RSW_LLP_ET_MPA,
		RSW_MPA_EC_CATASTROPHIC, false, false, false);
}

static void rx_b_short_ulpdu(struct rx_stream *s)
{
	union rsw_hdr h;
	struct rx_mut m = { .set_len = true, .len = 10 };

	rx_hdr_tagged(&h, RSW_OP_WRITE, true, RX_MR_STAG, RX_MR_TO);
	rx_emit(s, &h, sizeof(h.tagged), 0, &m);
	rx_fail(s, false, RSW_TERM_LAYER_RDMAP, RSW_RDMAP_ET_REMOTE_OP,
		RSW_RDMAP_EC_CATASTROPHIC_STREAM, false, false, false);
}

/* A valid frame after the failing one: the parser must not look at it. */
static void rx_ignored(struct rx_stream *s)
{
	u32 nev = s->nev;

	rx_tagged(s, RSW_OP_WRITE, true, RX_MR_STAG, RX_MR_TO + 400, 8, &rx_ok);
	s->nev = nev;
	s->mem = s->mark_mem;
}

#define RX_BAD_SEND(name, stmt, len, ...)				\
static void rx_m_##name(union rsw_hdr *h)				\
{									\
	stmt;								\
}									\
static void rx_b_##name(struct rx_stream *s)				\
{									\
	rx_bad_send(s, rx_m_##name, len, __VA_ARGS__);			\
	rx_ignored(s);							\
}

#define RX_UNTAGGED_LEN	sizeof(struct rsw_ddp_untagged)
#define RX_RDMAP_OP	RSW_TERM_LAYER_RDMAP, RSW_RDMAP_ET_REMOTE_OP
#define RX_DDP_U	RSW_TERM_LAYER_DDP, RSW_DDP_ET_UNTAGGED

RX_BAD_SEND(opcode_reserved, rsw_rdmap_set_opcode(&h->c, 0xd),
	    RX_UNTAGGED_LEN, RX_RDMAP_OP, RSW_RDMAP_EC_OPCODE)
RX_BAD_SEND(opcode_0xf, rsw_rdmap_set_opcode(&h->c, 0xf),
	    RX_UNTAGGED_LEN, RX_RDMAP_OP, RSW_RDMAP_EC_OPCODE)
RX_BAD_SEND(opcode_0xc, rsw_rdmap_set_opcode(&h->c, 0xc),
	    RX_UNTAGGED_LEN, RX_RDMAP_OP, RSW_RDMAP_EC_OPCODE)
RX_BAD_SEND(send_tagged, rsw_ddp_set_tagged(&h->c, true),
	    RX_UNTAGGED_LEN, RX_RDMAP_OP, RSW_RDMAP_EC_OPCODE)
RX_BAD_SEND(ddp_version_untagged, rsw_ddp_set_version(&h->c, 2),
	    RX_UNTAGGED_LEN, RX_DDP_U, RSW_DDP_EC_U_VERSION)
RX_BAD_SEND(rdmap_version_0, rsw_rdmap_set_version(&h->c, 0),
	    RX_UNTAGGED_LEN, RX_RDMAP_OP, RSW_RDMAP_EC_VERSION)
RX_BAD_SEND(rdmap_version_2, rsw_rdmap_set_version(&h->c, 2),
	    RX_UNTAGGED_LEN, RX_RDMAP_OP, RSW_RDMAP_EC_VERSION)
RX_BAD_SEND(send_on_qn1, h->untagged.qn = cpu_to_be32(RSW_QN_READ_REQ),
	    RX_UNTAGGED_LEN, RX_DDP_U, RSW_DDP_EC_U_INVALID_QN)
RX_BAD_SEND(send_on_qn5, h->untagged.qn = cpu_to_be32(5),
	    RX_UNTAGGED_LEN, RX_DDP_U, RSW_DDP_EC_U_INVALID_QN)
RX_BAD_SEND(msn_no_buffer, h->untagged.msn = cpu_to_be32(RX_MSN + RX_RQ_NUM),
	    RX_UNTAGGED_LEN, RX_DDP_U, RSW_DDP_EC_U_MSN_NO_BUF)
RX_BAD_SEND(msn_behind, h->untagged.msn = cpu_to_be32(RX_MSN - 1),
	    RX_UNTAGGED_LEN, RX_DDP_U, RSW_DDP_EC_U_MSN_RANGE)
RX_BAD_SEND(mo_beyond_buffer, h->untagged.mo = cpu_to_be32(RX_RQ_LEN + 1),
	    RX_UNTAGGED_LEN, RX_DDP_U, RSW_DDP_EC_U_INVALID_MO)
RX_BAD_SEND(mo_plus_len_beyond, h->untagged.mo = cpu_to_be32(RX_RQ_LEN - 7),
	    RX_UNTAGGED_LEN, RX_DDP_U, RSW_DDP_EC_U_TOO_LONG)

static void rx_b_ddp_version_tagged(struct rx_stream *s)
{
	union rsw_hdr h;

	rx_hdr_tagged(&h, RSW_OP_WRITE, true, RX_MR_STAG, RX_MR_TO);
	rsw_ddp_set_version(&h.c, 0);
	rx_emit(s, &h, sizeof(h.tagged), 8, &rx_ok);
	rx_fail(s, false, RSW_TERM_LAYER_DDP, RSW_DDP_ET_TAGGED,
		RSW_DDP_EC_T_VERSION, true, false, false);
}

static void rx_b_write_untagged(struct rx_stream *s)
{
	union rsw_hdr h;

	rx_hdr_tagged(&h, RSW_OP_WRITE, true, RX_MR_STAG, RX_MR_TO);
	rsw_ddp_set_tagged(&h.c, false);
	rx_emit(s, &h, sizeof(h.tagged), 8, &rx_ok);
	rx_fail(s, false, RX_RDMAP_OP, RSW_RDMAP_EC_OPCODE, true, false,
		false);
}

static void rx_b_read_req_payload(struct rx_stream *s)
{
	union rsw_hdr h;

	rx_hdr_untagged(&h, RSW_OP_READ_REQ, true, RSW_QN_READ_REQ, RX_MSN, 0);
	rx_emit(s, &h, sizeof(h.rreq), 4, &rx_ok);
	rx_fail(s, false, RX_DDP_U, RSW_DDP_EC_U_TOO_LONG, true, false, false);
}

static void rx_b_read_req_not_last(struct rx_stream *s)
{
	union rsw_hdr h;

	rx_hdr_untagged(&h, RSW_OP_READ_REQ, false, RSW_QN_READ_REQ, RX_MSN,
			0);
	rx_emit(s, &h, sizeof(h.rreq), 0, &rx_ok);
	rx_fail(s, false, RX_DDP_U, RSW_DDP_EC_U_TOO_LONG, true, false, false);
}

static void rx_b_read_req_over_ird(struct rx_stream *s)
{
	rx_read_req(s, RX_MSN + 1, 8, RX_SRC_STAG);
	rx_fail(s, false, RX_DDP_U, RSW_DDP_EC_U_MSN_NO_BUF, true, false,
		false);
}

static void rx_b_read_req_bad_source(struct rx_stream *s)
{
	struct rsw_term_cause t = rsw_mr_err_to_term(RSW_MR_ERR_ACCESS,
						  RSW_MR_USE_READ_REQ);

	rx_read_req(s, RX_MSN, 8, RX_SRC_STAG + 1);
	rx_fail(s, false, t.layer, t.etype, t.ecode, true, true, true);
}

static void rx_b_send_inv_bad_stag(struct rx_stream *s)
{
	struct rsw_term_cause t = rsw_mr_err_to_term(RSW_MR_ERR_STAG,
						  RSW_MR_USE_INVALIDATE);

	rx_send(s, RSW_OP_SEND_INV, true, RX_MSN, 0, 9, RX_INV_STAG + 1,
		&rx_ok);
	rx_fail(s, true, t.layer, t.etype, t.ecode, true, false, true);
}

static void rx_b_term_short(struct rx_stream *s)
{
	union rsw_hdr h;

	rx_hdr_untagged(&h, RSW_OP_TERMINATE, true, RSW_QN_TERMINATE, RX_MSN,
			0);
	rsw_term_set_d(&h.term.term, true);
	rsw_term_set_r(&h.term.term, true);
	rx_emit(s, &h, sizeof(h.term), 0, &rx_ok);
	rx_fail(s, false, RX_RDMAP_OP, RSW_RDMAP_EC_CATASTROPHIC_STREAM, true,
		false, false);
}

static void rx_b_tagged_beyond_mr(struct rx_stream *s)
{
	rx_tagged(s, RSW_OP_WRITE, true, RX_MR_STAG,
		  RX_MR_TO + RX_MR_LEN - 10, 11, &rx_ok);
	rx_fail_mr(s, RSW_MR_ERR_BOUNDS);
}

static void rx_b_tagged_below_mr(struct rx_stream *s)
{
	rx_tagged(s, RSW_OP_READ_RESP, true, RX_MR_STAG, RX_MR_TO - 1, 4,
		  &rx_ok);
	rx_fail_mr(s, RSW_MR_ERR_BOUNDS);
}

static void rx_b_tagged_wrong_key(struct rx_stream *s)
{
	rx_tagged(s, RSW_OP_WRITE, true, RX_MR_STAG ^ 0x01, RX_MR_TO, 8,
		  &rx_ok);
	rx_fail_mr(s, RSW_MR_ERR_STAG);
}

static void rx_b_tagged_wrong_pd(struct rx_stream *s)
{
	rx_tagged(s, RSW_OP_WRITE, true, RX_OTHER_PD, RX_MR_TO, 8, &rx_ok);
	rx_fail_mr(s, RSW_MR_ERR_PD);
}

static void rx_b_tagged_to_wrap(struct rx_stream *s)
{
	rx_tagged(s, RSW_OP_WRITE, true, RX_MR_STAG, ~0ULL - 3, 8, &rx_ok);
	rx_fail_mr(s, RSW_MR_ERR_WRAP);
}

static const struct rx_case rx_cases[] = {
	{ "write", rx_b_write },
	{ "write zero length, any STag", rx_b_write_zero },
	{ "write in three segments", rx_b_write_multi },
	{ "read request", rx_b_read_req },
	{ "read response in three segments", rx_b_read_resp_multi },
	{ "send", rx_b_send },
	{ "send in three segments, then an empty one", rx_b_send_multi },
	{ "send with invalidate", rx_b_send_inv },
	{ "send with SE", rx_b_send_se },
	{ "send with SE and invalidate", rx_b_send_se_inv },
	{ "terminate, no optional headers", rx_b_term },
	{ "terminate with DDP and RDMA headers", rx_b_term_hdrs },
	{ "send inside a multi-segment read response", rx_b_send_in_read_resp },
	{ "every RFC 5040 opcode in one stream", rx_b_every_op },
	{ "reserved control bits ignored", rx_b_reserved_bits },
	{ "nonzero PAD covered by the CRC accepted", rx_b_pad_nonzero_crc_ok },
	{ "nonzero PAD without CRC accepted", rx_b_pad_nonzero_nocrc },
	{ "CRC off: zero trailers", rx_b_nocrc_zero },
	{ "CRC off: trailer not checked", rx_b_nocrc_garbage },
	{ "bad PAD under CRC: MPA CRC error", rx_b_bad_pad },
	{ "bad CRC after placement: MPA CRC error", rx_b_bad_crc },
	{ "truncated in the trailer", rx_b_truncated_payload },
	{ "truncated in a header", rx_b_truncated_hdr },
	{ "ULPDU over the limit", rx_b_oversized },
	{ "ULPDU shorter than its header", rx_b_short_ulpdu },
	{ "reserved opcode 0xd", rx_b_opcode_reserved },
	{ "reserved opcode 0xf", rx_b_opcode_0xf },
	{ "reserved opcode 0xc (after RFC 7306)", rx_b_opcode_0xc },
	{ "send with T set", rx_b_send_tagged },
	{ "write with T clear", rx_b_write_untagged },
	{ "DDP version 2, untagged", rx_b_ddp_version_untagged },
	{ "DDP version 0, tagged", rx_b_ddp_version_tagged },
	{ "RDMAP version 0", rx_b_rdmap_version_0 },
	{ "RDMAP version 2", rx_b_rdmap_version_2 },
	{ "send on the read request queue", rx_b_send_on_qn1 },
	{ "send on queue 5", rx_b_send_on_qn5 },
	{ "MSN past the posted receives", rx_b_msn_no_buffer },
	{ "MSN before the window", rx_b_msn_behind },
	{ "MO beyond the receive buffer", rx_b_mo_beyond_buffer },
	{ "MO + length beyond the receive buffer", rx_b_mo_plus_len_beyond },
	{ "read request with payload", rx_b_read_req_payload },
	{ "read request without L", rx_b_read_req_not_last },
	{ "read request over the IRD window", rx_b_read_req_over_ird },
	{ "read request source refused by the consumer",
	  rx_b_read_req_bad_source },
	{ "send with invalidate of a foreign STag", rx_b_send_inv_bad_stag },
	{ "terminate too short for its D and R headers", rx_b_term_short },
	{ "tagged range past the MR end", rx_b_tagged_beyond_mr },
	{ "tagged TO below the MR", rx_b_tagged_below_mr },
	{ "tagged STag with the wrong key", rx_b_tagged_wrong_key },
	{ "tagged STag of another PD", rx_b_tagged_wrong_pd },
	{ "tagged TO wraps", rx_b_tagged_to_wrap },
};

KUNIT_ARRAY_PARAM_DESC(rx_stream, rx_cases, desc);

/* -------------------------------------------------------------------------
 * The runner.
 */
static bool rx_ev_equal(const struct rx_ev *a, const struct rx_ev *b)
{
	return a->kind == b->kind && a->opcode == b->opcode &&
	       a->last == b->last && a->stag == b->stag && a->to == b->to &&
	       a->qn == b->qn && a->msn == b->msn && a->mo == b->mo &&
	       a->len == b->len && a->extra == b->extra &&
	       a->seg == b->seg && a->term.cause.layer == b->term.cause.layer &&
	       a->term.cause.etype == b->term.cause.etype &&
	       a->term.cause.ecode == b->term.cause.ecode &&
	       a->term.ddp_hdr == b->term.ddp_hdr &&
	       a->term.rdma_hdr == b->term.rdma_hdr;
}

static void rx_ev_print(struct kunit *test, const char *who, u32 i,
			const struct rx_ev *e)
{
	kunit_info(test,
		   "%s[%u]: kind %d op %u last %d stag %#x to %#llx qn %u msn %u mo %u len %u extra %#x seg %d term %u/%u/%#x D %d R %d\n",
		   who, i, e->kind, e->opcode, e->last, e->stag, e->to, e->qn,
		   e->msn, e->mo, e->len, e->extra, e->seg, e->term.cause.layer,
		   e->term.cause.etype, e->term.cause.ecode, e->term.ddp_hdr,
		   e->term.rdma_hdr);
}

/* Compare a run with the expectations; false (and a report) if it differs. */
static bool rx_check(struct kunit *test, const struct rx_stream *s,
		     const struct rx_mock *m, const char *how)
{
	u32 i;

	if (!m->overflow && m->nev == s->nev &&
	    !memcmp(&m->mem, &s->mem, sizeof(m->mem))) {
		for (i = 0; i < s->nev; i++)
			if (!rx_ev_equal(&m->ev[i], &s->ev[i]))
				break;
		if (i == s->nev)
			return true;
	}
	KUNIT_FAIL(test, "fed %s: calls or memory differ", how);
	for (i = 0; i < s->nev; i++)
		rx_ev_print(test, "expected", i, &s->ev[i]);
	for (i = 0; i < m->nev; i++)
		rx_ev_print(test, "got", i, &m->ev[i]);
	if (memcmp(&m->mem, &s->mem, sizeof(m->mem)))
		kunit_info(test, "memory (or its guards) differs\n");
	return false;
}

/*
 * Feed s->data minus the cut in pieces of @step octets (the first piece
 * @first octets), then EOF, and check the outcome.
 */
static bool rx_run(struct kunit *test, const struct rx_stream *s,
		   struct rx_mock *m, u32 first, u32 step, const char *how)
{
	struct rsw_rx_config cfg = {
		.crc = s->crc,
		.max_ulpdu = s->max_ulpdu ?: RX_MAX_ULPDU,
	};
	bool stops = s->nev && s->ev[s->nev - 1].kind == EV_STOP;
	u32 end = s->len - s->cut, off = 0, n;
	const struct rsw_rx_term *term;
	struct rsw_rx rx;
	size_t used = 0;

	memset(m, 0, sizeof(*m));
	rx_mem_init(&m->mem);
	KUNIT_ASSERT_EQ(test, rsw_rx_init(&rx, &cfg, &rx_mock_ops, m), 0);
	for (n = first; off < end; off += n, n = step) {
		n = min(n, end - off);
		used += rsw_rx_feed(&rx, s->data + off, n);
	}
	if (rsw_rx_eof(&rx) == stops || (!stops && used != end)) {
		KUNIT_FAIL(test, "fed %s: EOF/consumed wrong", how);
		return false;
	}
	term = rsw_rx_stopped(&rx);
	if (!term != !stops || (stops && term->cause.ecode !=
				s->ev[s->nev - 1].term.cause.ecode)) {
		KUNIT_FAIL(test, "fed %s: rsw_rx_stopped() wrong", how);
		return false;
	}
	return rx_check(test, s, m, how);
}

static struct rx_stream *rx_build(struct kunit *test,
				  void (*build)(struct rx_stream *s))
{
	struct rx_stream *s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, s);
	s->crc = true;
	rx_mem_init(&s->mem);
	build(s);
	KUNIT_ASSERT_LE(test, s->len, RX_STREAM_MAX);
	KUNIT_ASSERT_LE(test, s->nev, RX_EV_MAX);
	return s;
}

static void rx_stream_case(struct kunit *test)
{
	const struct rx_case *c = test->param_value;
	struct rx_stream *s = rx_build(test, c->build);
	struct rx_mock *m = kunit_kzalloc(test, sizeof(*m), GFP_KERNEL);
	u32 k;

	KUNIT_ASSERT_NOT_NULL(test, m);
	if (!rx_run(test, s, m, U32_MAX, U32_MAX, "whole"))
		return;
	if (!rx_run(test, s, m, 1, 1, "one octet at a time"))
		return;
	for (k = 0; k <= s->len - s->cut; k++)
		if (!rx_run(test, s, m, k, U32_MAX, "split in two")) {
			kunit_info(test, "first piece: %u octets\n", k);
			return;
		}
}

/* A stopped stream consumes nothing more and calls nobody. */
static void rx_stopped_ignores_input(struct kunit *test)
{
	struct rx_stream *s = rx_build(test, rx_b_opcode_reserved);
	struct rx_mock *m = kunit_kzalloc(test, sizeof(*m), GFP_KERNEL);
	struct rsw_rx_config cfg = { .crc = true, .max_ulpdu = RX_MAX_ULPDU };
	struct rsw_rx rx;
	u32 nev;

	KUNIT_ASSERT_NOT_NULL(test, m);
	rx_mem_init(&m->mem);
	KUNIT_ASSERT_EQ(test, rsw_rx_init(&rx, &cfg, &rx_mock_ops, m), 0);
	KUNIT_EXPECT_LT(test, rsw_rx_feed(&rx, s->data, s->len), (size_t)s->len);
	nev = m->nev;
	KUNIT_EXPECT_EQ(test, rsw_rx_feed(&rx, s->data, s->len), (size_t)0);
	KUNIT_EXPECT_EQ(test, m->nev, nev);
	KUNIT_EXPECT_FALSE(test, rsw_rx_eof(&rx));
	KUNIT_EXPECT_EQ(test, m->nev, nev);
	KUNIT_EXPECT_STREQ(test, rsw_rx_state_name(rx.state), "ERROR");
}

/* Append @len octets of @data to @skb as a fragment at @page_off of a page. */
static void rx_skb_add_frag(struct kunit *test, struct sk_buff *skb,
			    const u8 *data, u32 len, u32 page_off)
{
	struct page *page = alloc_page(GFP_KERNEL);
	int i = skb_shinfo(skb)->nr_frags;

	KUNIT_ASSERT_NOT_NULL(test, page);
	memcpy(page_address(page) + page_off, data, len);
	skb_fill_page_desc(skb, i, page, page_off, len);
	skb->len += len;
	skb->data_len += len;
	skb->truesize += PAGE_SIZE;
}

/*
 * rsw_rx_feed_skb(): a stream spread over an skb's linear part (after 5
 * octets that are not ours) and two page fragments, fed in two calls that
 * split inside the first fragment, gives the same calls as a flat buffer.
 */
static void rx_skb_fragments(struct kunit *test)
{
	struct rx_stream *s = rx_build(test, rx_b_every_op);
	struct rx_mock *m = kunit_kzalloc(test, sizeof(*m), GFP_KERNEL);
	struct rsw_rx_config cfg = { .crc = true, .max_ulpdu = RX_MAX_ULPDU };
	const u32 skip = 5, lin = 37, frag1 = 100;
	struct sk_buff *skb;
	struct rsw_rx rx;
	size_t used;

	KUNIT_ASSERT_NOT_NULL(test, m);
	KUNIT_ASSERT_GT(test, s->len, lin + frag1);
	skb = alloc_skb(skip + lin, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	memset(skb_put(skb, skip), 0xff, skip);
	skb_put_data(skb, s->data, lin);
	rx_skb_add_frag(test, skb, s->data + lin, frag1, 3);
	rx_skb_add_frag(test, skb, s->data + lin + frag1,
			s->len - lin - frag1, 0);

	rx_mem_init(&m->mem);
	KUNIT_ASSERT_EQ(test, rsw_rx_init(&rx, &cfg, &rx_mock_ops, m), 0);
	used = rsw_rx_feed_skb(&rx, skb, skip, lin + 50);
	used += rsw_rx_feed_skb(&rx, skb, skip + lin + 50,
				s->len - lin - 50);
	kfree_skb(skb);
	KUNIT_EXPECT_EQ(test, used, (size_t)s->len);
	KUNIT_EXPECT_TRUE(test, rsw_rx_eof(&rx));
	rx_check(test, s, m, "from an skb");
}

static bool rx_guard_ok(const u8 *p, u32 len)
{
	return !memchr_inv(p, RX_GUARD, RX_GUARD_LEN) &&
	       !memchr_inv(p + RX_GUARD_LEN + len, RX_GUARD, RX_GUARD_LEN);
}

/*
 * Whatever a run did, it kept to the contract: guards intact, placements
 * inside the window and buffer the parser promised (the mock answers
 * layer 0xf otherwise), at most one stop, last, with a defined Terminate.
 */
static bool rx_contract_ok(struct kunit *test, const struct rx_mock *m)
{
	u32 i;

	if (m->overflow || !rx_guard_ok(m->mem.mr, RX_MR_LEN))
		return false;
	for (i = 0; i < RX_RQ_NUM; i++)
		if (!rx_guard_ok(m->mem.rq[i], RX_RQ_LEN))
			return false;
	for (i = 0; i < m->nev; i++) {
		const struct rsw_rx_term *t = &m->ev[i].term;

		if (m->ev[i].kind != EV_STOP)
			continue;
		if (i != m->nev - 1 ||
		    !rsw_term_name(t->cause.layer, t->cause.etype, t->cause.ecode))
			return false;
	}
	return true;
}

/*
 * Regression guard for every check at once: a valid stream with 1-3 random
 * octets changed, with and without CRC, fed in random pieces.  The
 * generator is seeded: a failing run reproduces.
 */
static void rx_random_corruption(struct kunit *test)
{
	struct rx_stream *s = rx_build(test, rx_b_every_op);
	struct rx_mock *m = kunit_kzalloc(test, sizeof(*m), GFP_KERNEL);
	u8 *buf = kunit_kmalloc(test, RX_STREAM_MAX, GFP_KERNEL);
	struct rsw_rx_config cfg = { .max_ulpdu = RX_MAX_ULPDU };
	struct rnd_state rnd;
	u32 run, i, off, n, stops = 0;
	struct rsw_rx rx;

	KUNIT_ASSERT_NOT_NULL(test, m);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	prandom_seed_state(&rnd, RX_SEED);
	for (run = 0; run < RX_RANDOM_RUNS; run++) {
		memcpy(buf, s->data, s->len);
		for (i = prandom_u32_state(&rnd) % 3; i < 3; i++)
			buf[prandom_u32_state(&rnd) % s->len] ^=
				1 + prandom_u32_state(&rnd) % 255;
		cfg.crc = run & 1;
		memset(m, 0, sizeof(*m));
		rx_mem_init(&m->mem);
		KUNIT_ASSERT_EQ(test, rsw_rx_init(&rx, &cfg, &rx_mock_ops, m),
				0);
		for (off = 0; off < s->len; off += n) {
			n = 1 + prandom_u32_state(&rnd) % 64;
			n = min(n, s->len - off);
			rsw_rx_feed(&rx, buf + off, n);
		}
		rsw_rx_eof(&rx);
		stops += !!rsw_rx_stopped(&rx);
		if (!rx_contract_ok(test, m)) {
			KUNIT_FAIL(test, "run %u broke the contract", run);
			return;
		}
		/* With CRC, no corruption goes unnoticed. */
		if (cfg.crc && !rsw_rx_stopped(&rx)) {
			KUNIT_FAIL(test, "run %u: corruption accepted", run);
			return;
		}
	}
	kunit_info(test, "%u of %u runs stopped\n", stops, RX_RANDOM_RUNS);
}

/* -------------------------------------------------------------------------
 * MPA Markers (RFC 5044 section 5).  Reference: a well-formed stream of
 * FPDUs without Markers is laid out again octet by octet, as if it began at
 * stream offset @start, with a Marker at every multiple of 512 (FPDUPTR 0
 * at an FPDU boundary, else the distance back to the FPDU's ULPDU_Length),
 * and each FPDU's CRC recomputed over everything before its CRC field,
 * Markers included.  The parser, told the stream is at @start, must make
 * exactly the calls it makes for the stream without Markers.
 */
#define RX_MK_WIRE_MAX	(RX_STREAM_MAX + RX_STREAM_MAX / 128 + 8)

struct rx_mk_wire {
	u8 data[RX_MK_WIRE_MAX];
	u32 len;
	u32 mk_pos[RX_MK_WIRE_MAX / RSW_MPA_MARKER_SPACING + 2];
	u32 nmk;
};

/* Recompute the CRC of the FPDU at wire [@fw, @end) (CRC last). */
static void rx_mk_crc(struct rx_mk_wire *w, u32 fw, u32 end)
{
	__le32 crc = rsw_mpa_crc(w->data + fw, end - RSW_MPA_CRC_LEN - fw);

	memcpy(w->data + end - RSW_MPA_CRC_LEN, &crc, sizeof(crc));
}

static void rx_mk_marker(struct rx_mk_wire *w, u32 ptr)
{
	u8 *m = w->data + w->len;

	w->mk_pos[w->nmk++] = w->len;
	m[0] = 0;
	m[1] = 0;
	m[2] = ptr >> 8;
	m[3] = ptr & 0xff;
	w->len += RSW_MPA_MARKER_LEN;
}

static void rx_mk_layout(const struct rx_stream *s, u32 start,
			 struct rx_mk_wire *w)
{
	u32 off = start, i = 0, fpdu_end = 0, hdr_off = 0, fw = 0;

	w->len = 0;
	w->nmk = 0;
	for (i = 0; i < s->len; i++, off++) {
		bool first = i == fpdu_end;

		if (first && i) {
			if (s->crc)
				rx_mk_crc(w, fw, w->len);
		}
		if (first)
			fw = w->len;
		if (off % RSW_MPA_MARKER_SPACING == 0) {
			rx_mk_marker(w, first ? 0 : off - hdr_off);
			off += RSW_MPA_MARKER_LEN;
		}
		if (first) {
			hdr_off = off;
			fpdu_end = i + rsw_fpdu_plain_len(s->data[i] << 8 |
							  s->data[i + 1]);
		}
		w->data[w->len++] = s->data[i];
	}
	if (s->crc && s->len)
		rx_mk_crc(w, fw, w->len);
}

/* Feed @w from stream offset @start in pieces of @step; the mock's calls. */
static const struct rsw_rx_term *rx_mk_feed(struct kunit *test,
					    const struct rx_stream *s,
					    const struct rx_mk_wire *w,
					    u32 start, u32 step,
					    struct rx_mock *m, bool *eof)
{
	struct rsw_rx_config cfg = {
		.crc = s->crc, .markers = true, .max_ulpdu = RX_MAX_ULPDU,
	};
	struct rsw_rx *rx = kunit_kzalloc(test, sizeof(*rx), GFP_KERNEL);
	u32 off, n;

	KUNIT_ASSERT_NOT_NULL(test, rx);
	memset(m, 0, sizeof(*m));
	rx_mem_init(&m->mem);
	KUNIT_ASSERT_EQ(test, rsw_rx_init(rx, &cfg, &rx_mock_ops, m), 0);
	rx->off = start;	/* as if @start octets went before */
	for (off = 0; off < w->len; off += n) {
		n = min(step, w->len - off);
		rsw_rx_feed(rx, w->data + off, n);
	}
	*eof = rsw_rx_eof(rx);
	return rsw_rx_stopped(rx);
}

/* Segments long and short, so Markers land in every part of an FPDU. */
static void rx_b_marker_mix(struct rx_stream *s)
{
	rx_tagged(s, RSW_OP_WRITE, true, RX_MR_STAG, RX_MR_TO, 500, &rx_ok);
	rx_send(s, RSW_OP_SEND, false, RX_MSN, 0, 97, 0, &rx_ok);
	rx_send(s, RSW_OP_SEND, true, RX_MSN, 97, 31, 0, &rx_ok);
	rx_read_req(s, RX_MSN, 0, 0);
	rx_tagged(s, RSW_OP_WRITE, true, RX_MR_STAG, RX_MR_TO + 3, 509,
		  &rx_ok);
	rx_tagged(s, RSW_OP_READ_RESP, true, RX_MR_STAG, RX_MR_TO + 1, 2,
		  &rx_ok);
	rx_send(s, RSW_OP_SEND_INV, true, RX_MSN + 1, 0, 4, RX_INV_STAG,
		&rx_ok);
}

static void rx_b_marker_mix_nocrc(struct rx_stream *s)
{
	s->crc = false;
	rx_b_marker_mix(s);
}

static const struct rx_case rx_mk_cases[] = {
	{ "mixed lengths around 512, CRC", rx_b_marker_mix },
	{ "mixed lengths around 512, no CRC", rx_b_marker_mix_nocrc },
	{ "every RFC 5040 opcode in one stream", rx_b_every_op },
	{ "send in three segments, then an empty one", rx_b_send_multi },
};

KUNIT_ARRAY_PARAM_DESC(rx_mk, rx_mk_cases, desc);

/*
 * Every start offset a stream can be at (0..508, step 4), fed whole, one
 * octet at a time and in 7-octet pieces (so Markers straddle pieces).
 */
static void rx_markers_transparent(struct kunit *test)
{
	static const u32 steps[] = { U32_MAX, 1, 7 };
	const struct rx_case *c = test->param_value;
	struct rx_stream *s = rx_build(test, c->build);
	struct rx_mock *m = kunit_kzalloc(test, sizeof(*m), GFP_KERNEL);
	struct rx_mk_wire *w = kunit_kzalloc(test, sizeof(*w), GFP_KERNEL);
	u32 start, i, markers = 0;
	bool eof;

	KUNIT_ASSERT_NOT_NULL(test, m);
	KUNIT_ASSERT_NOT_NULL(test, w);
	for (start = 0; start < RSW_MPA_MARKER_SPACING; start += 4) {
		rx_mk_layout(s, start, w);
		/* A short stream holds a Marker from some starts only. */
		markers += w->nmk;
		for (i = 0; i < ARRAY_SIZE(steps); i++) {
			if (rx_mk_feed(test, s, w, start, steps[i], m, &eof) ||
			    !eof) {
				KUNIT_FAIL(test, "start %u step %u: stopped",
					   start, steps[i]);
				return;
			}
			if (!rx_check(test, s, m, "with Markers")) {
				kunit_info(test, "start %u step %u\n", start,
					   steps[i]);
				return;
			}
		}
	}
	/* Every start offset puts a Marker inside a stream of 512 or more. */
	KUNIT_EXPECT_GE(test, markers, RSW_MPA_MARKER_SPACING / 4 *
			(s->len / RSW_MPA_MARKER_SPACING));
}

/*
 * A bad Marker.  @in_flight: changed after the sender computed the CRC
 * (the CRC sees it first when it covers the change); otherwise the sender
 * sent it so and the CRC matches.  RFC 5044 section 4 (Marker format):
 * the reserved field is ignored on receive, and so are FPDUPTR's two low
 * bits.
 */
struct rx_mk_bad {
	const char *name;
	bool crc;
	u32 mk;			/* which Marker of the stream */
	u16 rsvd_xor, ptr_xor;
	bool in_flight;
	u8 ecode;		/* LLP/MPA code of the Terminate; 0: none */
};

static const struct rx_mk_bad rx_mk_bad_cases[] = {
	{ "fpduptr_plus_4_at_boundary", true, 0, 0, 4, false, RSW_MPA_EC_MARKER },
	{ "fpduptr_off_by_4_inside", true, 1, 0, 4, false, RSW_MPA_EC_MARKER },
	{ "fpduptr_inverted", true, 2, 0, 0xffff, false, RSW_MPA_EC_MARKER },
	{ "fpduptr_in_flight_crc", true, 1, 0, 0x10, true, RSW_MPA_EC_MARKER },
	{ "fpduptr_in_flight_nocrc", false, 1, 0, 0x100, true,
	  RSW_MPA_EC_MARKER },
	{ "fpduptr_low_bits_ignored", true, 1, 0, 3, false, 0 },
	{ "reserved_ignored", true, 1, 0x8001, 0, false, 0 },
	{ "reserved_ignored_nocrc", false, 1, 0xffff, 0, true, 0 },
	{ "reserved_in_flight_crc", true, 1, 0x0100, 0, true, RSW_MPA_EC_CRC },
};

KUNIT_ARRAY_PARAM_DESC(rx_mk_bad, rx_mk_bad_cases, name);

static void rx_markers_bad(struct kunit *test)
{
	const struct rx_mk_bad *c = test->param_value;
	struct rx_stream *s = rx_build(test, c->crc ? rx_b_marker_mix :
						      rx_b_marker_mix_nocrc);
	struct rx_mock *m = kunit_kzalloc(test, sizeof(*m), GFP_KERNEL);
	struct rx_mk_wire *w = kunit_kzalloc(test, sizeof(*w), GFP_KERNEL);
	const struct rsw_rx_term *term;
	u32 p, fw = 0, end, k;
	bool eof;
	u8 *mk;

	KUNIT_ASSERT_NOT_NULL(test, m);
	KUNIT_ASSERT_NOT_NULL(test, w);
	rx_mk_layout(s, 0, w);
	KUNIT_ASSERT_LT(test, c->mk, w->nmk);
	p = w->mk_pos[c->mk];
	mk = w->data + p;
	mk[0] ^= c->rsvd_xor >> 8;
	mk[1] ^= c->rsvd_xor & 0xff;
	mk[2] ^= c->ptr_xor >> 8;
	mk[3] ^= c->ptr_xor & 0xff;
	if (!c->in_flight && c->crc) {
		/* The FPDU holding the Marker: recompute its CRC. */
		for (end = 0; end <= p; ) {
			fw = end;
			k = w->data[end] << 8 | w->data[end + 1];
			if (!(end % RSW_MPA_MARKER_SPACING))	/* led by one */
				k = w->data[end + 4] << 8 | w->data[end + 5];
			end += rsw_fpdu_len(k, true, end);
		}
		rx_mk_crc(w, fw, end);
	}
	term = rx_mk_feed(test, s, w, 0, U32_MAX, m, &eof);
	if (!c->ecode) {
		KUNIT_EXPECT_NULL(test, term);
		KUNIT_EXPECT_TRUE(test, eof);
		rx_check(test, s, m, "with a tolerated Marker");
		return;
	}
	KUNIT_ASSERT_NOT_NULL(test, term);
	KUNIT_EXPECT_EQ(test, term->cause.layer, RSW_TERM_LAYER_LLP);
	KUNIT_EXPECT_EQ(test, term->cause.etype, RSW_LLP_ET_MPA);
	KUNIT_EXPECT_EQ(test, term->cause.ecode, c->ecode);
	KUNIT_EXPECT_FALSE(test, term->ddp_hdr);
	KUNIT_EXPECT_FALSE(test, eof);
	KUNIT_ASSERT_GT(test, m->nev, 0U);
	KUNIT_EXPECT_EQ(test, m->ev[m->nev - 1].kind, EV_STOP);
}

/* The stream ends inside a Marker: the TCP stream was lost mid-FPDU. */
static void rx_markers_eof_inside(struct kunit *test)
{
	struct rx_stream *s = rx_build(test, rx_b_marker_mix);
	struct rx_mock *m = kunit_kzalloc(test, sizeof(*m), GFP_KERNEL);
	struct rx_mk_wire *w = kunit_kzalloc(test, sizeof(*w), GFP_KERNEL);
	const struct rsw_rx_term *term;
	bool eof;

	KUNIT_ASSERT_NOT_NULL(test, m);
	KUNIT_ASSERT_NOT_NULL(test, w);
	rx_mk_layout(s, 0, w);
	w->len = 2;		/* half of the leading Marker */
	term = rx_mk_feed(test, s, w, 0, U32_MAX, m, &eof);
	KUNIT_EXPECT_FALSE(test, eof);
	KUNIT_ASSERT_NOT_NULL(test, term);
	KUNIT_EXPECT_EQ(test, term->cause.ecode, RSW_MPA_EC_TCP_LOST);
}

/* Every Terminate the parser produces is one the RFCs define. */
static void rx_terms_defined(struct kunit *test)
{
	u32 i, j;

	for (i = 0; i < ARRAY_SIZE(rx_cases); i++) {
		struct rx_stream *s = rx_build(test, rx_cases[i].build);

		for (j = 0; j < s->nev; j++) {
			const struct rsw_rx_term *t = &s->ev[j].term;
			const char *name;

			if (s->ev[j].kind != EV_STOP)
				continue;
			name = rsw_term_name(t->cause.layer, t->cause.etype, t->cause.ecode);
			KUNIT_EXPECT_NOT_NULL_MSG(test, name, "%s",
						  rx_cases[i].desc);
		}
	}
}

static struct kunit_case rsw_rx_cases[] = {
	KUNIT_CASE_PARAM(rx_stream_case, rx_stream_gen_params),
	KUNIT_CASE(rx_stopped_ignores_input),
	KUNIT_CASE(rx_skb_fragments),
	KUNIT_CASE(rx_random_corruption),
	KUNIT_CASE_PARAM(rx_markers_transparent, rx_mk_gen_params),
	KUNIT_CASE_PARAM(rx_markers_bad, rx_mk_bad_gen_params),
	KUNIT_CASE(rx_markers_eof_inside),
	KUNIT_CASE(rx_terms_defined),
	{}
};

static struct kunit_suite rsw_rx_suite = {
	.name = "rdmap_sw_rx",
	.test_cases = rsw_rx_cases,
};

kunit_test_suite(rsw_rx_suite);

MODULE_DESCRIPTION("KUnit tests for the rdmap_sw receive stream parser");
MODULE_LICENSE("GPL");
