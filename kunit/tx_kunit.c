// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite rdmap_sw_tx: the transmit engine (tx.c) checked by round
 * trip.  Every case lets the engine emit into a sink that copies the FPDUs
 * into a byte buffer, then feeds those bytes to the receive parser (rx.c)
 * with a consumer that records every segment and places the payload into
 * a flat buffer by message offset (untagged MO, tagged TO - base).  The
 * parser validates framing, CRC, queue numbers, MSN windows and MO; the
 * cases assert the headers (opcode, L flag, MSN, MO, STag, TO) segment by
 * segment and the payload byte for byte.
 *
 * Payload lives in vmalloc memory (pages not contiguous) reached through
 * the PD's DMA MR, or in a fast-registration MR for Read Response sources.
 * The QP-level cases post through the real ib_core and drive
 * rsw_tx_process() against a QP in RESET, as qp_kunit.c drives
 * rsw_qp_sq_take().
 */
#include <kunit/resource.h>
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/highmem.h>
#include <linux/in.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/net.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <net/sock.h>
#include <rdma/ib_verbs.h>

#include "env.h"
#include "internal.h"
#include "fpdu.h"
#include "mem.h"
#include "wire.h"

RSW_IMPORT_KUNIT_NS();

#define TX_MSS		1460
#define TX_STREAM_MAX	(512 * 1024)
#define TX_MSG_MAX	(80 * 1024)
#define TX_SEG_MAX	320
#define TX_RSTAG	0x00abcd42U
#define TX_RADDR	0x7000000000001003ULL
#define TX_INV_STAG	0x00beef17U

static const u8 tx_mac[ETH_ALEN] = { 0x02, 0x00, 0x5e, 0x30, 0x70, 0x01 };
static struct rsw_env_suite tx_env;

static int tx_suite_init(struct kunit_suite *suite)
{
	return rsw_env_suite_init(&tx_env, tx_mac, "rswtx%d", "rswtx0");
}

static void tx_suite_exit(struct kunit_suite *suite)
{
	rsw_env_suite_exit(&tx_env);
}

/* ------------------------------------------------------------ the sink */

struct tx_sink {
	u8 *buf;
	size_t len;
	unsigned int calls;
	unsigned int fpdus;
	int take;		/* FPDUs taken per call, 0: all */
	bool more_last;		/* @more of the last call */
	u32 more_calls;		/* bit i: call i (from 0) had @more */
	unsigned int spliced;	/* FPDUs taken that were marked splice */
	/*
	 * Lay out each FPDU with MPA Markers by the reference rule (RFC 5044
	 * section 5), from its f->start, not from what the engine put in f->mk.
	 */
	bool markers;
	u8 plain[2 * TX_MSS];
};

static void tx_sink_copy(struct tx_sink *s, const void *p, u32 len)
{
	if (s->len + len > TX_STREAM_MAX)
		return;
	memcpy(s->buf + s->len, p, len);
	s->len += len;
}

/*
 * Copy the FPDU at s->buf[@from, s->len) (plain octets) back with Markers:
 * one at every stream offset that is a multiple of 512, FPDUPTR 0 before
 * the FPDU's first octet, else the distance back to its ULPDU_Length.
 */
static void tx_sink_markers(struct tx_sink *s, size_t from, u32 start)
{
	u32 plain = s->len - from, off = start, i, hdr = start;

	if (plain > sizeof(s->plain))
		return;
	memcpy(s->plain, s->buf + from, plain);
	s->len = from;
	for (i = 0; i < plain; i++, off++) {
		if (off % RSW_MPA_MARKER_SPACING == 0) {
			u32 ptr = i ? off - hdr : 0;
			u8 m[4] = { 0, 0, ptr >> 8, ptr & 0xff };

			tx_sink_copy(s, m, sizeof(m));
			off += RSW_MPA_MARKER_LEN;
		}
		if (!i)
			hdr = off;
		tx_sink_copy(s, s->plain + i, 1);
	}
}

static int tx_sink_send(void *ctx, const struct rsw_tx_fpdu *f,
			unsigned int n, bool more)
{
	struct tx_sink *s = ctx;
	unsigned int i, j;

	if (more && s->calls < 32)
		s->more_calls |= BIT(s->calls);
	s->calls++;
	s->more_last = more;
	if (s->take && n > s->take)
		n = s->take;
	for (i = 0; i < n; i++, f++) {
		size_t from = s->len;

		tx_sink_copy(s, f->hdr_octets, f->hdr_len);
		for (j = 0; j < f->npieces; j++) {
			const struct rsw_tx_piece *p = &f->piece[j];
			u8 *va;

			if (!p->page) {
				tx_sink_copy(s, p->kva, p->len);
				continue;
			}
			va = kmap_local_page(p->page);
			tx_sink_copy(s, va + p->off, p->len);
			kunmap_local(va);
		}
		tx_sink_copy(s, f->trailer, f->trailer_len);
		if (s->markers)
			tx_sink_markers(s, from, f->start);
		s->fpdus++;
		s->spliced += f->splice;
	}
	return n;
}

static const struct rsw_tx_sink_ops tx_sink_ops = { .send = tx_sink_send };

/* -------------------------------------------------- the recording consumer */

struct tx_seg {
	u8 opcode;
	bool last;
	bool tagged;
	u32 stag;
	u64 to;
	u8 qn;
	u32 msn;
	u32 mo;
	u32 len;
	u32 inval;
	union rsw_hdr hdr;
	u8 hdr_octets[RSW_HDR_MAX_LEN];
};

struct tx_rec {
	u64 base_to;			/* tagged TO of message offset 0 */
	u8 *data;			/* TX_MSG_MAX octets placed */
	u32 placed;
	u32 nseg;
	struct tx_seg seg[TX_SEG_MAX];
	bool stopped;
	struct rsw_rx_term term;
};

static void tx_rec_window(void *ctx, u8 qn, u32 msn, struct rsw_rx_window *w)
{
	w->msn = msn;
	w->count = 1;
	w->len = TX_MSG_MAX;
}

static bool tx_rec_place(struct tx_rec *r, u64 off, const void *data, u32 len)
{
	if (off > TX_MSG_MAX || len > TX_MSG_MAX - off)
		return false;
	memcpy(r->data + off, data, len);
	r->placed += len;
	return true;
}

static bool tx_rec_place_tagged(void *ctx, const struct rsw_rx_seg *seg,
				u64 to, const void *data, u32 len,
				struct rsw_term_cause *term)
{
	struct tx_rec *r = ctx;

	term->layer = 0xf;
	return tx_rec_place(r, to - r->base_to, data, len);
}

static bool tx_rec_place_untagged(void *ctx, const struct rsw_rx_seg *seg,
				  u32 mo, const void *data, u32 len,
				  struct rsw_term_cause *term)
{
	term->layer = 0xf;
	return tx_rec_place(ctx, mo, data, len);
}

static bool tx_rec_seg_done(void *ctx, const struct rsw_rx_seg *seg,
			    struct rsw_term_cause *term)
{
	struct tx_rec *r = ctx;
	struct tx_seg *s;

	if (r->nseg == TX_SEG_MAX) {
		term->layer = 0xf;
		return false;
	}
	s = &r->seg[r->nseg++];
	*s = (struct tx_seg) {
		.opcode = seg->opcode, .last = seg->last, .tagged = seg->tagged,
		.stag = seg->stag, .to = seg->to, .qn = seg->qn,
		.msn = seg->msn, .mo = seg->mo, .len = seg->payload_len,
		.inval = seg->inval_stag,
	};
	memcpy(s->hdr_octets, seg->hdr, RSW_HDR_MAX_LEN);
	return true;
}

static void tx_rec_stop(void *ctx, const struct rsw_rx_seg *seg,
			const struct rsw_rx_term *term)
{
	struct tx_rec *r = ctx;

	r->stopped = true;
	r->term = *term;
}

static const struct rsw_rx_ops tx_rec_ops = {
	.window = tx_rec_window,
	.place_tagged = tx_rec_place_tagged,
	.place_untagged = tx_rec_place_untagged,
	.seg_done = tx_rec_seg_done,
	.stop = tx_rec_stop,
};

/* ------------------------------------------------------------ fixtures */

struct tx_ctx {
	struct rsw_tx *tx;
	struct tx_sink sink;
	struct tx_rec *rec;
	struct rsw_rx rx;
	u8 *mem;			/* TX_MSG_MAX + 2 pages, vmalloc */
};

static void tx_vfree(void *p)
{
	vfree(p);
}

static void *tx_vzalloc(struct kunit *test, size_t size)
{
	void *p = vzalloc(size);

	KUNIT_ASSERT_NOT_NULL(test, p);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, tx_vfree, p), 0);
	return p;
}

static struct tx_ctx *tx_ctx(struct kunit *test, bool crc, u32 ord)
{
	struct rsw_tx_config cfg = { .crc = crc, .mss = TX_MSS, .ord = ord };
	struct tx_ctx *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, c);
	c->tx = tx_vzalloc(test, sizeof(*c->tx));
	c->rec = tx_vzalloc(test, sizeof(*c->rec));
	c->rec->data = tx_vzalloc(test, TX_MSG_MAX);
	c->sink.buf = tx_vzalloc(test, TX_STREAM_MAX);
	c->mem = tx_vzalloc(test, TX_MSG_MAX + 2 * PAGE_SIZE);
	for (i = 0; i < TX_MSG_MAX + 2 * PAGE_SIZE; i++)
		c->mem[i] = i * 7 + (i >> 8) * 13 + 1;
	KUNIT_ASSERT_EQ(test, rsw_tx_init(c->tx, &cfg, tx_env.rsw, tx_env.pd,
					  &tx_sink_ops, &c->sink), 0);
	return c;
}

/*
 * Feed everything the sink got to a fresh parser; all must be consumed.
 * With @markers the stream carries MPA Markers and began @start octets
 * earlier.
 */
static void tx_parse_stream(struct kunit *test, struct tx_ctx *c, bool crc,
			    bool markers, u32 start)
{
	struct rsw_rx_config cfg = {
		.crc = crc, .markers = markers, .max_ulpdu = 0xffff,
	};

	memset(c->rec->seg, 0, sizeof(c->rec->seg));
	c->rec->nseg = 0;
	c->rec->placed = 0;
	c->rec->stopped = false;
	KUNIT_ASSERT_EQ(test, rsw_rx_init(&c->rx, &cfg, &tx_rec_ops, c->rec),
			0);
	c->rx.off = start;
	KUNIT_EXPECT_EQ(test, rsw_rx_feed(&c->rx, c->sink.buf, c->sink.len),
			c->sink.len);
	KUNIT_EXPECT_FALSE_MSG(test, c->rec->stopped, "stopped: %u/%u/%u",
			       c->rec->term.cause.layer, c->rec->term.cause.etype,
			       c->rec->term.cause.ecode);
}

static void tx_parse(struct kunit *test, struct tx_ctx *c, bool crc)
{
	tx_parse_stream(test, c, crc, false, 0);
}

static void tx_parse_mk(struct kunit *test, struct tx_ctx *c, bool crc,
			u32 start)
{
	tx_parse_stream(test, c, crc, true, start);
}

static struct rdmap_sw_sqe *tx_sqe(struct kunit *test, u8 opcode)
{
	struct rdmap_sw_sqe *sqe = kunit_kzalloc(test, sizeof(*sqe),
						 GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, sqe);
	sqe->opcode = opcode;
	sqe->rstag = TX_RSTAG;
	sqe->raddr = TX_RADDR;
	sqe->inv_stag = TX_INV_STAG;
	return sqe;
}

static void tx_sqe_sge(struct rdmap_sw_sqe *sqe, const void *p, u32 len)
{
	struct rdmap_sw_sge *s = &sqe->sge[sqe->num_sge++];

	s->addr = (uintptr_t)p;
	s->length = len;
	s->lkey = tx_env.pd->local_dma_lkey;
	sqe->length += len;
}

/* Payload room of one segment of @op with MSS TX_MSS. */
static u32 tx_room(u8 op)
{
	return rsw_mpa_mulpdu(TX_MSS, false) - rsw_rdmap_hdr_len(op);
}

/*
 * The segments recorded from index @first are one message of @op with
 * @len payload octets cut at the room an MSS of @mss leaves, queue MSN
 * @msn or tagged at TX_RSTAG/TX_RADDR, and its payload equals @src.
 */
static void tx_expect_msg_mss(struct kunit *test, struct tx_ctx *c,
			      u32 first, u8 op, u32 len, u32 msn,
			      const u8 *src, u32 mss)
{
	u32 room = rsw_mpa_mulpdu(mss, false) - rsw_rdmap_hdr_len(op);
	u32 nseg = len ? DIV_ROUND_UP(len, room) : 1;
	struct tx_rec *r = c->rec;
	u32 k;

	KUNIT_ASSERT_GE(test, r->nseg, first + nseg);
	for (k = 0; k < nseg; k++) {
		const struct tx_seg *s = &r->seg[first + k];

		KUNIT_EXPECT_EQ_MSG(test, s->opcode, op, "seg %u", k);
		KUNIT_EXPECT_EQ_MSG(test, s->last, k == nseg - 1, "seg %u", k);
		KUNIT_EXPECT_EQ_MSG(test, s->len,
				    k == nseg - 1 ? len - k * room : room,
				    "seg %u", k);
		if (rsw_rdmap_op_tagged(op)) {
			KUNIT_EXPECT_TRUE(test, s->tagged);
			KUNIT_EXPECT_EQ(test, s->stag, TX_RSTAG);
			KUNIT_EXPECT_EQ(test, s->to, TX_RADDR + k * room);
			continue;
		}
		KUNIT_EXPECT_FALSE(test, s->tagged);
		KUNIT_EXPECT_EQ(test, s->qn, rsw_rdmap_op_qn(op));
		KUNIT_EXPECT_EQ_MSG(test, s->msn, msn, "seg %u", k);
		KUNIT_EXPECT_EQ_MSG(test, s->mo, k * room, "seg %u", k);
		KUNIT_EXPECT_EQ(test, s->inval,
				rsw_rdmap_op_inval(op) ? TX_INV_STAG : 0);
	}
	if (src && len)
		KUNIT_EXPECT_EQ(test, memcmp(r->data, src, len), 0);
}

/* The same, cut at tx_room(op) (MSS TX_MSS). */
static void tx_expect_msg(struct kunit *test, struct tx_ctx *c, u32 first,
			  u8 op, u32 len, u32 msn, const u8 *src)
{
	tx_expect_msg_mss(test, c, first, op, len, msn, src, TX_MSS);
}

/* ------------------------------------------------ opcodes x sizes round trip */

struct tx_op_case {
	const char *name;
	u8 wr;			/* RDMAP_SW_WR_* */
	bool se;
	u8 op;			/* expected RSW_OP_* */
};

static const struct tx_op_case tx_op_cases[] = {
	{ "Send", RDMAP_SW_WR_SEND, false, RSW_OP_SEND },
	{ "Send with SE", RDMAP_SW_WR_SEND, true, RSW_OP_SEND_SE },
	{ "Send with Invalidate", RDMAP_SW_WR_SEND_WITH_INV, false,
	  RSW_OP_SEND_INV },
	{ "Send with SE and Invalidate", RDMAP_SW_WR_SEND_WITH_INV, true,
	  RSW_OP_SEND_SE_INV },
	{ "RDMA Write", RDMAP_SW_WR_RDMA_WRITE, false, RSW_OP_WRITE },
};

/* Sizes: fixed, or relative to the payload room of a segment. */
enum tx_size_kind { TX_FIXED, TX_ROOM };

static const struct { enum tx_size_kind kind; int n; } tx_sizes[] = {
	{ TX_FIXED, 0 }, { TX_FIXED, 1 }, { TX_FIXED, 3 }, { TX_FIXED, 4 },
	{ TX_ROOM, -1 }, { TX_ROOM, 0 }, { TX_ROOM, 1 },
	{ TX_FIXED, TX_MSS - 1 }, { TX_FIXED, TX_MSS }, { TX_FIXED, TX_MSS + 1 },
	{ TX_FIXED, 3 * 4096 + 5 }, { TX_FIXED, 64 * 1024 },
};

#define TX_NPARAMS (ARRAY_SIZE(tx_op_cases) * ARRAY_SIZE(tx_sizes))

/* Parameter i is &tx_rt_params[i]: operation i / sizes, size i % sizes. */
static const u8 tx_rt_params[TX_NPARAMS];

static u32 tx_param_len(u32 i)
{
	const struct tx_op_case *oc = &tx_op_cases[i / ARRAY_SIZE(tx_sizes)];
	u32 s = i % ARRAY_SIZE(tx_sizes);

	if (tx_sizes[s].kind == TX_ROOM)
		return tx_room(oc->op) + tx_sizes[s].n;
	return tx_sizes[s].n;
}

static const void *tx_rt_gen(const void *prev, char *desc)
{
	u32 i = prev ? (const u8 *)prev - tx_rt_params + 1 : 0;

	if (i >= TX_NPARAMS)
		return NULL;
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s, %u octets",
		 tx_op_cases[i / ARRAY_SIZE(tx_sizes)].name, tx_param_len(i));
	return &tx_rt_params[i];
}

static void tx_roundtrip(struct kunit *test)
{
	u32 i = (const u8 *)test->param_value - tx_rt_params;
	const struct tx_op_case *oc = &tx_op_cases[i / ARRAY_SIZE(tx_sizes)];
	u32 len = tx_param_len(i);
	struct tx_ctx *c = tx_ctx(test, true, 4);
	struct rdmap_sw_sqe *sqe = tx_sqe(test, oc->wr);
	const u8 *src = c->mem + 3;	/* odd offset */

	if (oc->se)
		sqe->flags |= RDMAP_SW_SQE_SOLICITED;
	tx_sqe_sge(sqe, src, len);
	c->rec->base_to = TX_RADDR;
	KUNIT_ASSERT_EQ(test, rsw_tx_wqe(c->tx, NULL, sqe, 0), 0);
	KUNIT_EXPECT_FALSE(test, c->sink.more_last);
	tx_parse(test, c, true);
	tx_expect_msg(test, c, 0, oc->op, len, 1, src);
	KUNIT_EXPECT_EQ(test, c->rec->nseg,
			len ? DIV_ROUND_UP(len, tx_room(oc->op)) : 1);
	KUNIT_EXPECT_EQ(test, c->rec->placed, len);
}

/* Without CRC the trailer is zero and the parser (CRC off) accepts it. */
static void tx_no_crc(struct kunit *test)
{
	struct tx_ctx *c = tx_ctx(test, false, 4);
	struct rdmap_sw_sqe *sqe = tx_sqe(test, RDMAP_SW_WR_SEND);

	tx_sqe_sge(sqe, c->mem, 5);
	KUNIT_ASSERT_EQ(test, rsw_tx_wqe(c->tx, NULL, sqe, 0), 0);
	/* 20 header + 5 payload + 3 PAD + 4 CRC. */
	KUNIT_ASSERT_EQ(test, c->sink.len, 32);
	KUNIT_EXPECT_EQ(test, *(u32 *)(c->sink.buf + 28), 0U);
	tx_parse(test, c, false);
	tx_expect_msg(test, c, 0, RSW_OP_SEND, 5, 1, c->mem);
}

/* Multi-SGE over page boundaries at odd offsets, and zero-length SGEs. */
static void tx_multi_sge(struct kunit *test)
{
	struct tx_ctx *c = tx_ctx(test, true, 4);
	struct rdmap_sw_sqe *sqe = tx_sqe(test, RDMAP_SW_WR_SEND);
	static const u32 off[] = { 4095, 1, 8191, 13, 20001, 777 };
	static const u32 len[] = { 1, 0, 4099, 1455, 9000, 7 };
	u8 *expect = kunit_kzalloc(test, 16 * 1024, GFP_KERNEL);
	u32 i, total = 0;

	KUNIT_ASSERT_NOT_NULL(test, expect);
	for (i = 0; i < ARRAY_SIZE(off); i++) {
		tx_sqe_sge(sqe, c->mem + off[i], len[i]);
		memcpy(expect + total, c->mem + off[i], len[i]);
		total += len[i];
	}
	KUNIT_ASSERT_EQ(test, rsw_tx_wqe(c->tx, NULL, sqe, 0), 0);
	tx_parse(test, c, true);
	tx_expect_msg(test, c, 0, RSW_OP_SEND, total, 1, expect);
}

/*
 * 16 SGEs of 90 octets, each straddling a page end: two pieces per SGE,
 * so the first segment ends early when its RSW_TX_MAX_PIECES run out
 * (12 SGEs), before the payload room (1434) is reached.
 */
static void tx_pieces_run_out(struct kunit *test)
{
	struct tx_ctx *c = tx_ctx(test, true, 4);
	struct rdmap_sw_sqe *sqe = tx_sqe(test, RDMAP_SW_WR_SEND);
	u8 *expect = kunit_kzalloc(test, 16 * 90, GFP_KERNEL);
	u32 i, first = RSW_TX_MAX_PIECES / 2 * 90;

	KUNIT_ASSERT_NOT_NULL(test, expect);
	for (i = 0; i < 16; i++) {
		const u8 *p = c->mem + (i + 1) * PAGE_SIZE - 45;

		tx_sqe_sge(sqe, p, 90);
		memcpy(expect + i * 90, p, 90);
	}
	KUNIT_ASSERT_EQ(test, rsw_tx_wqe(c->tx, NULL, sqe, 0), 0);
	KUNIT_EXPECT_EQ(test, c->sink.fpdus, 2);
	tx_parse(test, c, true);
	KUNIT_ASSERT_EQ(test, c->rec->nseg, 2);
	KUNIT_EXPECT_EQ(test, c->rec->seg[0].len, first);
	KUNIT_EXPECT_FALSE(test, c->rec->seg[0].last);
	KUNIT_EXPECT_EQ(test, c->rec->seg[1].mo, first);
	KUNIT_EXPECT_EQ(test, c->rec->seg[1].len, 16 * 90 - first);
	KUNIT_EXPECT_TRUE(test, c->rec->seg[1].last);
	KUNIT_EXPECT_EQ(test, c->rec->seg[1].msn, 1);
	KUNIT_EXPECT_EQ(test, memcmp(c->rec->data, expect, 16 * 90), 0);
}

/* Inline data comes from the WQE copy. */
static void tx_inline(struct kunit *test)
{
	struct tx_ctx *c = tx_ctx(test, true, 4);
	struct rdmap_sw_sqe *sqe = tx_sqe(test, RDMAP_SW_WR_RDMA_WRITE);
	u32 i;

	sqe->flags |= RDMAP_SW_SQE_INLINE;
	sqe->length = RDMAP_SW_MAX_INLINE - 1;
	for (i = 0; i < sqe->length; i++)
		sqe->inline_data[i] = 0x5a ^ i;
	c->rec->base_to = TX_RADDR;
	KUNIT_ASSERT_EQ(test, rsw_tx_wqe(c->tx, NULL, sqe, 0), 0);
	tx_parse(test, c, true);
	tx_expect_msg(test, c, 0, RSW_OP_WRITE, sqe->length, 0,
		      sqe->inline_data);
}

/* A corrupted payload octet fails the CRC check. */
static void tx_crc_corrupt(struct kunit *test)
{
	struct tx_ctx *c = tx_ctx(test, true, 4);
	struct rdmap_sw_sqe *sqe = tx_sqe(test, RDMAP_SW_WR_SEND);

	tx_sqe_sge(sqe, c->mem, 3000);
	KUNIT_ASSERT_EQ(test, rsw_tx_wqe(c->tx, NULL, sqe, 0), 0);
	c->sink.buf[2000] ^= 0x10;	/* in the second FPDU */
	KUNIT_ASSERT_EQ(test, rsw_rx_init(&c->rx, &(struct rsw_rx_config) {
				.crc = true, .max_ulpdu = 0xffff },
				&tx_rec_ops, c->rec), 0);
	rsw_rx_feed(&c->rx, c->sink.buf, c->sink.len);
	KUNIT_ASSERT_TRUE(test, c->rec->stopped);
	KUNIT_EXPECT_EQ(test, c->rec->term.cause.layer, RSW_TERM_LAYER_LLP);
	KUNIT_EXPECT_EQ(test, c->rec->term.cause.etype, RSW_LLP_ET_MPA);
	KUNIT_EXPECT_EQ(test, c->rec->term.cause.ecode, RSW_MPA_EC_CRC);
	KUNIT_EXPECT_EQ(test, c->rec->nseg, 1);
}

/* MSNs per queue start at 1 and advance once per message. */
static void tx_msn_sequence(struct kunit *test)
{
	struct tx_ctx *c = tx_ctx(test, true, 4);
	struct rdmap_sw_sqe *sqe = tx_sqe(test, RDMAP_SW_WR_SEND);
	struct rdmap_sw_sqe *rd = tx_sqe(test, RDMAP_SW_WR_RDMA_READ);
	struct tx_rec *r = c->rec;
	u32 idx;

	tx_sqe_sge(sqe, c->mem, 3000);		/* 3 segments */
	tx_sqe_sge(rd, c->mem, 100);
	KUNIT_ASSERT_EQ(test, rsw_tx_wqe(c->tx, NULL, sqe, 0), 0);
	KUNIT_ASSERT_EQ(test, rsw_tx_wqe(c->tx, NULL, sqe, 1), 0);
	KUNIT_ASSERT_EQ(test, rsw_tx_wqe(c->tx, NULL, rd, 2), 0);
	KUNIT_ASSERT_EQ(test, rsw_tx_wqe(c->tx, NULL, rd, 3), 0);
	KUNIT_ASSERT_EQ(test, rsw_tx_wqe(c->tx, NULL, sqe, 4), 0);
	tx_parse(test, c, true);
	KUNIT_ASSERT_EQ(test, r->nseg, 11);
	tx_expect_msg(test, c, 0, RSW_OP_SEND, 3000, 1, NULL);
	tx_expect_msg(test, c, 3, RSW_OP_SEND, 3000, 2, NULL);
	KUNIT_EXPECT_EQ(test, r->seg[6].opcode, RSW_OP_READ_REQ);
	KUNIT_EXPECT_EQ(test, r->seg[6].qn, RSW_QN_READ_REQ);
	KUNIT_EXPECT_EQ(test, r->seg[6].msn, 1);
	KUNIT_EXPECT_EQ(test, r->seg[7].msn, 2);
	tx_expect_msg(test, c, 8, RSW_OP_SEND, 3000, 3, NULL);
	/* Both Reads outstanding, oldest first. */
	KUNIT_EXPECT_EQ(test, rsw_tx_reads_outstanding(c->tx), 2);
	KUNIT_ASSERT_TRUE(test, rsw_tx_read_done(c->tx, &idx));
	KUNIT_EXPECT_EQ(test, idx, 2);
	KUNIT_ASSERT_TRUE(test, rsw_tx_read_done(c->tx, &idx));
	KUNIT_EXPECT_EQ(test, idx, 3);
	KUNIT_EXPECT_FALSE(test, rsw_tx_read_done(c->tx, &idx));
}

/* Read Request: sink = the local SGE, source = the peer's STag/TO. */
static void tx_read_request(struct kunit *test)
{
	struct tx_ctx *c = tx_ctx(test, true, 4);
	struct rdmap_sw_sqe *rd = tx_sqe(test, RDMAP_SW_WR_RDMA_READ_WITH_INV);
	const struct rsw_rdmap_rreq *rr;

	tx_sqe_sge(rd, c->mem + 17, 70000);
	KUNIT_ASSERT_EQ(test, rsw_tx_wqe(c->tx, NULL, rd, 0), 0);
	tx_parse(test, c, true);
	KUNIT_ASSERT_EQ(test, c->rec->nseg, 1);
	KUNIT_EXPECT_EQ(test, c->rec->seg[0].opcode, RSW_OP_READ_REQ);
	KUNIT_EXPECT_TRUE(test, c->rec->seg[0].last);
	KUNIT_EXPECT_EQ(test, c->rec->seg[0].mo, 0);
	KUNIT_EXPECT_EQ(test, c->rec->seg[0].len, 0);
	rr = &((const union rsw_hdr *)c->rec->seg[0].hdr_octets)->rreq.rreq;
	KUNIT_EXPECT_EQ(test, be32_to_cpu(rr->sink_stag),
			tx_env.pd->local_dma_lkey);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(rr->sink_to),
			(u64)(uintptr_t)(c->mem + 17));
	KUNIT_EXPECT_EQ(test, be32_to_cpu(rr->read_size), 70000U);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(rr->src_stag), TX_RSTAG);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(rr->src_to), TX_RADDR);
	KUNIT_EXPECT_EQ(test, rsw_tx_reads_outstanding(c->tx), 1);
}

/* A bad lkey or a Read with two sink SGEs is refused before sending. */
static void tx_bad_sge(struct kunit *test)
{
	struct tx_ctx *c = tx_ctx(test, true, 4);
	struct rdmap_sw_sqe *sqe = tx_sqe(test, RDMAP_SW_WR_SEND);
	struct rdmap_sw_sqe *rd = tx_sqe(test, RDMAP_SW_WR_RDMA_READ);

	tx_sqe_sge(sqe, c->mem, 10);
	tx_sqe_sge(sqe, c->mem, 10);
	sqe->sge[1].lkey ^= 0x01000000;		/* another index */
	KUNIT_EXPECT_EQ(test, rsw_tx_wqe(c->tx, NULL, sqe, 0), -EPROTO);
	tx_sqe_sge(rd, c->mem, 10);
	tx_sqe_sge(rd, c->mem, 10);
	KUNIT_EXPECT_EQ(test, rsw_tx_wqe(c->tx, NULL, rd, 1), -EPROTO);
	KUNIT_EXPECT_EQ(test, c->sink.len, 0);
	KUNIT_EXPECT_EQ(test, rsw_tx_reads_outstanding(c->tx), 0);
}

/*
 * A sink taking one FPDU per call: -EAGAIN, and the engine stays busy
 * with the message (tx_qp_process resumes one through rsw_tx_process).
 */
static void tx_backpressure(struct kunit *test)
{
	struct tx_ctx *c = tx_ctx(test, true, 4);
	struct rdmap_sw_sqe *sqe = tx_sqe(test, RDMAP_SW_WR_SEND);
	struct rdmap_sw_sqe *other = tx_sqe(test, RDMAP_SW_WR_SEND);

	c->sink.take = 1;
	/* 14 segments: the first batch does not end the message (@more). */
	tx_sqe_sge(sqe, c->mem + 1, 20000);
	KUNIT_ASSERT_EQ(test, rsw_tx_wqe(c->tx, NULL, sqe, 0), -EAGAIN);
	KUNIT_EXPECT_EQ(test, c->sink.fpdus, 1);
	KUNIT_EXPECT_TRUE(test, c->sink.more_last);
	KUNIT_EXPECT_EQ(test, rsw_tx_wqe(c->tx, NULL, other, 1), -EBUSY);
	/* So are a Terminate and a Read Response while the Send is out. */
	KUNIT_EXPECT_EQ(test, rsw_tx_terminate(c->tx, &(struct rsw_tx_term) {}),
			-EBUSY);
	KUNIT_EXPECT_EQ(test,
			rsw_tx_read_response(c->tx, &(struct rsw_tx_rresp) {},
					     &(struct rsw_rx_term) {}),
			-EBUSY);
	KUNIT_EXPECT_EQ(test, c->sink.fpdus, 1);
	KUNIT_EXPECT_EQ(test, rsw_tx_reads_outstanding(c->tx), 0);
}

/*
 * A new MSS (a path MTU change) sizes the FPDUs described from then on,
 * in the middle of a message too: its segments keep their offsets and
 * payload.  Below RSW_TX_MSS_MIN, FPDUs are whole multiples of the MSS.
 */
static void tx_mss_change(struct kunit *test)
{
	struct tx_ctx *c = tx_ctx(test, true, 4);
	struct rdmap_sw_sqe *sqe = tx_sqe(test, RDMAP_SW_WR_SEND);
	u32 old = tx_room(RSW_OP_SEND), len = 20000, k, nseg;
	u32 room = rsw_mpa_mulpdu(8948, false) - rsw_rdmap_hdr_len(RSW_OP_SEND);
	const struct tx_seg *seg;

	c->sink.take = 1;
	tx_sqe_sge(sqe, c->mem + 1, len);
	KUNIT_ASSERT_EQ(test, rsw_tx_wqe(c->tx, NULL, sqe, 0), -EAGAIN);
	rsw_tx_set_mss(c->tx, 8948);
	KUNIT_EXPECT_EQ(test, c->tx->mulpdu, rsw_mpa_mulpdu(8948, false));
	c->sink.take = 0;
	KUNIT_ASSERT_EQ(test, rsw_tx_process(c->tx, NULL, 0), 0);
	KUNIT_EXPECT_EQ(test, c->tx->msg.kind, RSW_TX_IDLE);
	tx_parse(test, c, true);
	nseg = 1 + DIV_ROUND_UP(len - old, room);
	KUNIT_ASSERT_EQ(test, c->rec->nseg, nseg);
	for (k = 0; k < nseg; k++) {
		seg = &c->rec->seg[k];
		KUNIT_EXPECT_EQ(test, seg->mo, k ? old + (k - 1) * room : 0);
		KUNIT_EXPECT_EQ(test, seg->len,
				!k ? old : min(room, len - seg->mo));
		KUNIT_EXPECT_EQ(test, seg->last, k == nseg - 1);
	}
	KUNIT_EXPECT_EQ(test, memcmp(c->rec->data, c->mem + 1, len), 0);
	/* 500 octets: FPDUs of two segments; 100: of six. */
	rsw_tx_set_mss(c->tx, 500);
	KUNIT_EXPECT_EQ(test, c->tx->mulpdu, rsw_mpa_mulpdu(1000, false));
	rsw_tx_set_mss(c->tx, 100);
	KUNIT_EXPECT_EQ(test, c->tx->mulpdu, rsw_mpa_mulpdu(600, false));
}

/* ------------------------------------------------------- Read Response */

static void tx_dereg(void *mr)
{
	ib_dereg_mr(mr);
}

/* A valid fast-reg MR at @iova over @n vmalloc'ed pages of @c->mem. */
static struct ib_mr *tx_frmr(struct kunit *test, struct tx_ctx *c, u64 iova,
			     int access)
{
	struct ib_reg_wr wr = { .wr.opcode = IB_WR_REG_MR, .access = access };
	struct scatterlist sg[4];
	unsigned int off = 0;
	struct ib_mr *mr;
	u8 *base = PTR_ALIGN(c->mem, PAGE_SIZE);
	int i;

	mr = ib_alloc_mr(tx_env.pd, IB_MR_TYPE_MEM_REG, 4);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, tx_dereg, mr), 0);
	sg_init_table(sg, 4);
	for (i = 0; i < 4; i++)
		sg_set_page(&sg[i], vmalloc_to_page(base + i * PAGE_SIZE),
			    PAGE_SIZE, 0);
	KUNIT_ASSERT_EQ(test, ib_dma_map_sg(tx_env.ibdev, sg, 4,
					    DMA_BIDIRECTIONAL), 4);
	KUNIT_ASSERT_EQ(test, ib_map_mr_sg(mr, sg, 4, &off, PAGE_SIZE), 4);
	mr->iova = iova;
	wr.mr = mr;
	wr.key = mr->rkey;
	KUNIT_ASSERT_EQ(test, rsw_mr_fastreg(tx_env.pd, &wr), 0);
	return mr;
}

static void tx_read_response(struct kunit *test)
{
	struct tx_ctx *c = tx_ctx(test, true, 4);
	u64 iova = 0x100000001ULL;
	struct ib_mr *mr = tx_frmr(test, c, iova, IB_ACCESS_REMOTE_READ);
	u8 *base = PTR_ALIGN(c->mem, PAGE_SIZE);
	struct rsw_tx_rresp rr = {
		.sink_stag = TX_RSTAG, .sink_to = TX_RADDR,
		.src_stag = mr->rkey, .src_to = iova + 4001, .len = 9000,
	};
	struct rsw_rx_term term = {};
	u32 room = tx_room(RSW_OP_READ_RESP);

	c->rec->base_to = TX_RADDR;
	KUNIT_ASSERT_EQ(test, rsw_tx_read_response(c->tx, &rr, &term), 0);
	tx_parse(test, c, true);
	tx_expect_msg(test, c, 0, RSW_OP_READ_RESP, rr.len, 0, base + 4001);
	KUNIT_EXPECT_EQ(test, c->rec->nseg, DIV_ROUND_UP(9000, room));
	/* Zero length: one empty segment, the source is not checked. */
	c->sink.len = 0;
	rr = (struct rsw_tx_rresp) { .sink_stag = TX_RSTAG,
				     .sink_to = TX_RADDR, .src_stag = 1 };
	KUNIT_ASSERT_EQ(test, rsw_tx_read_response(c->tx, &rr, &term), 0);
	tx_parse(test, c, true);
	tx_expect_msg(test, c, 0, RSW_OP_READ_RESP, 0, 0, NULL);
}

struct tx_rresp_case {
	const char *name;
	int access;
	u32 key_xor;
	u64 off;
	u32 len;
	u8 etype, ecode;
};

static const struct tx_rresp_case tx_rresp_cases[] = {
	{ "wrong key", IB_ACCESS_REMOTE_READ, 1, 0, 16,
	  RSW_RDMAP_ET_REMOTE_PROT, RSW_RDMAP_EC_INVALID_STAG },
	{ "no remote read right",
	  IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE, 0, 0, 16,
	  RSW_RDMAP_ET_REMOTE_PROT, RSW_RDMAP_EC_ACCESS },
	{ "past the end", IB_ACCESS_REMOTE_READ, 0, 4 * 4096 - 8, 16,
	  RSW_RDMAP_ET_REMOTE_PROT, RSW_RDMAP_EC_BASE_BOUNDS },
};

KUNIT_ARRAY_PARAM_DESC(tx_rresp, tx_rresp_cases, name);

static void tx_read_response_refused(struct kunit *test)
{
	const struct tx_rresp_case *p = test->param_value;
	struct tx_ctx *c = tx_ctx(test, true, 4);
	struct ib_mr *mr = tx_frmr(test, c, 0x4000, p->access);
	struct rsw_tx_rresp rr = {
		.sink_stag = TX_RSTAG, .sink_to = TX_RADDR,
		.src_stag = mr->rkey ^ p->key_xor, .src_to = 0x4000 + p->off,
		.len = p->len,
	};
	struct rsw_rx_term term = {};

	KUNIT_ASSERT_EQ(test, rsw_tx_read_response(c->tx, &rr, &term),
			-EACCES);
	KUNIT_EXPECT_EQ(test, term.cause.layer, RSW_TERM_LAYER_RDMAP);
	KUNIT_EXPECT_EQ(test, term.cause.etype, p->etype);
	KUNIT_EXPECT_EQ(test, term.cause.ecode, p->ecode);
	/* Its Terminate carries the request's DDP and RDMA headers. */
	KUNIT_EXPECT_TRUE(test, term.ddp_hdr);
	KUNIT_EXPECT_TRUE(test, term.rdma_hdr);
	KUNIT_EXPECT_EQ(test, c->sink.len, 0);
}

/*
 * Read Responses are spliced (zero copy) only without CRC: with CRC the
 * octets TCP sends must be those the trailer was computed from.
 */
static void tx_read_response_splice(struct kunit *test)
{
	const bool *crc = test->param_value;
	struct tx_ctx *c = tx_ctx(test, *crc, 4);
	u64 iova = 0x100000001ULL;
	struct ib_mr *mr = tx_frmr(test, c, iova, IB_ACCESS_REMOTE_READ);
	struct rsw_tx_rresp rr = {
		.sink_stag = TX_RSTAG, .sink_to = TX_RADDR,
		.src_stag = mr->rkey, .src_to = iova, .len = 5000,
	};
	struct rsw_rx_term term = {};

	KUNIT_ASSERT_EQ(test, rsw_tx_read_response(c->tx, &rr, &term), 0);
	KUNIT_ASSERT_GT(test, c->sink.fpdus, 1U);
	KUNIT_EXPECT_EQ(test, c->sink.spliced, *crc ? 0 : c->sink.fpdus);
}

static const bool tx_crc_params[] = { true, false };

static void tx_crc_desc(const bool *p, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "crc %s", *p ? "on" : "off");
}

KUNIT_ARRAY_PARAM(tx_crc, tx_crc_params, tx_crc_desc);

/*
 * Invalidating a fast-reg MR waits for the TX pieces collected from it
 * before the invalidation until the sink returned: its pages may be slab
 * memory the consumer frees at once (issue 10, defect 1).  The sink
 * blocks in send() until told; an invalidation started meanwhile must
 * still be waiting, and must finish once send() returned.
 */
struct tx_block {
	struct tx_ctx *c;
	struct ib_mr *mr;
	struct rsw_tx_rresp rr;
	struct completion in_send;	/* send() entered */
	struct completion release;	/* send() may go on */
	struct completion tx_done;	/* rsw_tx_read_response() returned */
	struct completion inv_done;	/* the invalidation returned */
	int tx_ret;
	enum rsw_mr_err inv_err;
};

#define TX_BLOCK_WAIT	(10 * HZ)
/* How long an invalidation that does not wait would take, at most. */
#define TX_BLOCK_QUIET_MS	300

static int tx_block_send(void *ctx, const struct rsw_tx_fpdu *f,
			 unsigned int n, bool more)
{
	struct tx_block *b = ctx;

	complete(&b->in_send);
	wait_for_completion_timeout(&b->release, TX_BLOCK_WAIT);
	return tx_sink_send(&b->c->sink, f, n, more);
}

static const struct rsw_tx_sink_ops tx_block_ops = { .send = tx_block_send };

static int tx_block_tx(void *arg)
{
	struct tx_block *b = arg;
	struct rsw_rx_term term = {};

	b->tx_ret = rsw_tx_read_response(b->c->tx, &b->rr, &term);
	complete(&b->tx_done);
	return 0;
}

static int tx_block_inv(void *arg)
{
	struct tx_block *b = arg;

	b->inv_err = rsw_mr_invalidate_local(tx_env.rsw, tx_env.pd, 0,
					     b->mr->rkey, NULL);
	complete(&b->inv_done);
	return 0;
}

static void tx_inval_waits_for_send(struct kunit *test)
{
	struct rsw_tx_config cfg = { .crc = true, .mss = TX_MSS, .ord = 4 };
	struct tx_block *b = kunit_kzalloc(test, sizeof(*b), GFP_KERNEL);
	u64 iova = 0x100000001ULL;
	bool waited;

	KUNIT_ASSERT_NOT_NULL(test, b);
	b->c = tx_ctx(test, true, 4);
	b->mr = tx_frmr(test, b->c, iova, IB_ACCESS_REMOTE_READ);
	b->rr = (struct rsw_tx_rresp) {
		.sink_stag = TX_RSTAG, .sink_to = TX_RADDR,
		.src_stag = b->mr->rkey, .src_to = iova + 1, .len = 9000,
	};
	init_completion(&b->in_send);
	init_completion(&b->release);
	init_completion(&b->tx_done);
	init_completion(&b->inv_done);
	KUNIT_ASSERT_EQ(test, rsw_tx_init(b->c->tx, &cfg, tx_env.rsw,
					  tx_env.pd, &tx_block_ops, b), 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(kthread_run(tx_block_tx, b, "txb-tx")));
	if (!wait_for_completion_timeout(&b->in_send, TX_BLOCK_WAIT)) {
		complete(&b->release);
		wait_for_completion(&b->tx_done);
		KUNIT_FAIL(test, "send() never called");
		return;
	}
	if (IS_ERR(kthread_run(tx_block_inv, b, "txb-inv"))) {
		complete(&b->release);
		wait_for_completion(&b->tx_done);
		KUNIT_FAIL(test, "no invalidation thread");
		return;
	}
	waited = !wait_for_completion_timeout(&b->inv_done,
			msecs_to_jiffies(TX_BLOCK_QUIET_MS));
	KUNIT_EXPECT_TRUE_MSG(test, waited,
			      "invalidation returned while send() ran");
	complete(&b->release);
	/* Both threads use @b: wait for them whatever happened. */
	wait_for_completion(&b->tx_done);
	wait_for_completion(&b->inv_done);
	KUNIT_EXPECT_EQ(test, b->inv_err, RSW_MR_OK);
	KUNIT_EXPECT_EQ(test, b->tx_ret, 0);
	b->c->rec->base_to = TX_RADDR;
	tx_parse(test, b->c, true);
	tx_expect_msg(test, b->c, 0, RSW_OP_READ_RESP, b->rr.len, 0,
		      PTR_ALIGN(b->c->mem, PAGE_SIZE) + 1);
}

/* ------------------------------------------------------------ Terminate */

static void tx_terminate(struct kunit *test)
{
	struct tx_ctx *c = tx_ctx(test, true, 4);
	struct rsw_tx_term *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	struct rsw_hdr_rreq *bad = (struct rsw_hdr_rreq *)t->hdr;
	const union rsw_hdr *h;
	const u8 *opt;

	KUNIT_ASSERT_NOT_NULL(test, t);
	/* The offending Read Request. */
	bad->ddp.c.mpa_len = cpu_to_be16(46);
	bad->ddp.c.ctrl = rsw_ctrl_word(RSW_OP_READ_REQ, true);
	bad->ddp.qn = cpu_to_be32(RSW_QN_READ_REQ);
	bad->ddp.msn = cpu_to_be32(9);
	bad->rreq.src_stag = cpu_to_be32(0x1234);
	bad->rreq.read_size = cpu_to_be32(77);
	t->why = (struct rsw_rx_term) {
		.cause = RSW_TERM_CAUSE(RSW_TERM_LAYER_RDMAP,
					RSW_RDMAP_ET_REMOTE_PROT,
					RSW_RDMAP_EC_INVALID_STAG),
		.ddp_hdr = true,
		.rdma_hdr = true,
	};
	KUNIT_ASSERT_EQ(test, rsw_tx_terminate(c->tx, t), 0);
	tx_parse(test, c, true);
	KUNIT_ASSERT_EQ(test, c->rec->nseg, 1);
	KUNIT_EXPECT_EQ(test, c->rec->seg[0].opcode, RSW_OP_TERMINATE);
	KUNIT_EXPECT_EQ(test, c->rec->seg[0].qn, RSW_QN_TERMINATE);
	KUNIT_EXPECT_EQ(test, c->rec->seg[0].msn, 1);
	KUNIT_EXPECT_TRUE(test, c->rec->seg[0].last);
	h = (const union rsw_hdr *)c->rec->seg[0].hdr_octets;
	KUNIT_EXPECT_EQ(test, rsw_term_layer(&h->term.term), t->why.cause.layer);
	KUNIT_EXPECT_EQ(test, rsw_term_etype(&h->term.term), t->why.cause.etype);
	KUNIT_EXPECT_EQ(test, rsw_term_ecode(&h->term.term), t->why.cause.ecode);
	KUNIT_EXPECT_TRUE(test, rsw_term_m(&h->term.term));
	KUNIT_EXPECT_TRUE(test, rsw_term_d(&h->term.term));
	KUNIT_EXPECT_TRUE(test, rsw_term_r(&h->term.term));
	opt = c->rec->seg[0].hdr_octets + sizeof(struct rsw_hdr_term);
	KUNIT_EXPECT_EQ(test, memcmp(opt, t->hdr, 20), 0);
	KUNIT_EXPECT_EQ(test, memcmp(opt + 20, &bad->rreq, 28), 0);
	/* The on-wire ULPDU: 24 - 2 + 20 + 28. */
	KUNIT_EXPECT_EQ(test, be16_to_cpup((__be16 *)c->sink.buf), 70);

	/* A bare one (no headers known): the same queue, MSN 2. */
	c->sink.len = 0;
	memset(t, 0, sizeof(*t));
	t->why.cause.layer = RSW_TERM_LAYER_LLP;
	t->why.cause.ecode = RSW_MPA_EC_CRC;
	KUNIT_ASSERT_EQ(test, rsw_tx_terminate(c->tx, t), 0);
	KUNIT_EXPECT_EQ(test, c->sink.len, 28);
	tx_parse(test, c, true);
	KUNIT_ASSERT_EQ(test, c->rec->nseg, 1);
	KUNIT_EXPECT_EQ(test, c->rec->seg[0].msn, 2);
	h = (const union rsw_hdr *)c->rec->seg[0].hdr_octets;
	KUNIT_EXPECT_EQ(test, rsw_term_layer(&h->term.term), RSW_TERM_LAYER_LLP);
	KUNIT_EXPECT_FALSE(test, rsw_term_d(&h->term.term));
}

/* A consumer that refuses every segment as an invalid Read source STag. */
static bool tx_refuse_seg_done(void *ctx, const struct rsw_rx_seg *seg,
			       struct rsw_term_cause *term)
{
	term->layer = RSW_TERM_LAYER_RDMAP;
	term->etype = RSW_RDMAP_ET_REMOTE_PROT;
	term->ecode = RSW_RDMAP_EC_INVALID_STAG;
	return false;
}

/*
 * The Terminate for a Read Request the parser's consumer refused carries
 * that request's DDP and RDMA headers as the parser kept them.
 */
static void tx_terminate_from_rx(struct kunit *test)
{
	struct tx_ctx *c = tx_ctx(test, true, 4);
	struct rdmap_sw_sqe *rd = tx_sqe(test, RDMAP_SW_WR_RDMA_READ);
	struct rsw_rx_config cfg = { .crc = true, .max_ulpdu = 0xffff };
	struct rsw_rx_ops ops = tx_rec_ops;
	struct rsw_tx_term *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	u8 *req = kunit_kzalloc(test, 48, GFP_KERNEL);
	const union rsw_hdr *h;
	const u8 *opt;

	KUNIT_ASSERT_NOT_NULL(test, t);
	KUNIT_ASSERT_NOT_NULL(test, req);
	tx_sqe_sge(rd, c->mem, 64);
	KUNIT_ASSERT_EQ(test, rsw_tx_wqe(c->tx, NULL, rd, 0), 0);
	KUNIT_ASSERT_EQ(test, c->sink.len, 52);
	memcpy(req, c->sink.buf, 48);

	ops.seg_done = tx_refuse_seg_done;
	KUNIT_ASSERT_EQ(test, rsw_rx_init(&c->rx, &cfg, &ops, c->rec), 0);
	rsw_rx_feed(&c->rx, c->sink.buf, c->sink.len);
	KUNIT_ASSERT_TRUE(test, c->rec->stopped);
	rsw_tx_term_from_rx(t, &c->rx);
	KUNIT_EXPECT_EQ(test, t->why.cause.layer, RSW_TERM_LAYER_RDMAP);
	KUNIT_EXPECT_EQ(test, t->why.cause.ecode, RSW_RDMAP_EC_INVALID_STAG);
	KUNIT_EXPECT_TRUE(test, t->why.ddp_hdr);
	KUNIT_EXPECT_TRUE(test, t->why.rdma_hdr);

	c->sink.len = 0;
	KUNIT_ASSERT_EQ(test, rsw_tx_terminate(c->tx, t), 0);
	tx_parse(test, c, true);
	KUNIT_ASSERT_EQ(test, c->rec->nseg, 1);
	h = (const union rsw_hdr *)c->rec->seg[0].hdr_octets;
	KUNIT_EXPECT_EQ(test, rsw_term_etype(&h->term.term),
			RSW_RDMAP_ET_REMOTE_PROT);
	KUNIT_EXPECT_TRUE(test, rsw_term_r(&h->term.term));
	opt = c->rec->seg[0].hdr_octets + sizeof(struct rsw_hdr_term);
	KUNIT_EXPECT_EQ(test, memcmp(opt, req, 48), 0);
}

/* ------------------------------------------------------------ QP level */

static void tx_destroy_cq(void *cq)
{
	ib_destroy_cq(cq);
}

static void tx_destroy_qp(void *qp)
{
	ib_destroy_qp(qp);
}

static struct ib_qp *tx_qp(struct kunit *test, struct ib_cq **cqp)
{
	struct ib_cq_init_attr cattr = { .cqe = 64 };
	struct ib_qp_init_attr attr = {
		.qp_type = IB_QPT_RC, .sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 4, .max_recv_sge = 4,
			 .max_inline_data = 64 },
	};
	struct ib_cq *cq;
	struct ib_qp *qp;

	cq = ib_create_cq(tx_env.ibdev, NULL, NULL, NULL, &cattr);
	KUNIT_ASSERT_FALSE(test, IS_ERR(cq));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, tx_destroy_cq,
							cq), 0);
	attr.send_cq = cq;
	attr.recv_cq = cq;
	qp = ib_create_qp(tx_env.pd, &attr);
	KUNIT_ASSERT_FALSE(test, IS_ERR(qp));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, tx_destroy_qp,
							qp), 0);
	*cqp = cq;
	return qp;
}

static void tx_expect_wc(struct kunit *test, struct ib_cq *cq, u64 wr_id,
			 enum ib_wc_status status, u32 byte_len)
{
	struct ib_wc wc;

	KUNIT_ASSERT_EQ_MSG(test, ib_poll_cq(cq, 1, &wc), 1, "wr %llu", wr_id);
	KUNIT_EXPECT_EQ(test, wc.wr_id, wr_id);
	KUNIT_EXPECT_EQ(test, wc.status, status);
	if (status == IB_WC_SUCCESS)
		KUNIT_EXPECT_EQ(test, wc.byte_len, byte_len);
}

/*
 * Coalescing: a message's last FPDU goes with @more while another WQE is
 * posted and the budget lets the run take it; the run's last never does.
 */
static void tx_qp_coalesce(struct kunit *test)
{
	struct tx_ctx *c = tx_ctx(test, false, 4);
	struct ib_cq *cq;
	struct ib_qp *qp = tx_qp(test, &cq);
	struct ib_sge sge = { .addr = (uintptr_t)c->mem, .length = 64,
			      .lkey = tx_env.pd->local_dma_lkey };
	struct ib_send_wr wr[3] = {};
	int i;

	for (i = 0; i < 3; i++) {
		wr[i] = (struct ib_send_wr) { .wr_id = i, .opcode = IB_WR_SEND,
					      .sg_list = &sge, .num_sge = 1 };
		if (i)
			wr[i - 1].next = &wr[i];
	}
	KUNIT_ASSERT_EQ(test, ib_post_send(qp, &wr[0], NULL), 0);
	/* Three one-FPDU messages in one run: more, more, then not. */
	KUNIT_EXPECT_EQ(test, rsw_tx_process(c->tx, to_rsw_qp(qp), 16), 3);
	KUNIT_EXPECT_EQ(test, c->sink.calls, 3U);
	KUNIT_EXPECT_EQ(test, c->sink.more_calls, 0x3U);
	KUNIT_EXPECT_FALSE(test, c->sink.more_last);

	/* A budget of one: nothing follows in this run, no @more. */
	wr[0].next = &wr[1];
	wr[1].next = NULL;
	KUNIT_ASSERT_EQ(test, ib_post_send(qp, &wr[0], NULL), 0);
	KUNIT_EXPECT_EQ(test, rsw_tx_process(c->tx, to_rsw_qp(qp), 1), 1);
	KUNIT_EXPECT_EQ(test, c->sink.calls, 4U);
	KUNIT_EXPECT_EQ(test, c->sink.more_calls, 0x3U);
	KUNIT_EXPECT_EQ(test, rsw_tx_process(c->tx, to_rsw_qp(qp), 1), 1);
	KUNIT_EXPECT_EQ(test, c->sink.more_calls, 0x3U);
	KUNIT_EXPECT_EQ(test, rsw_tx_process(c->tx, to_rsw_qp(qp), 1), 0);
	KUNIT_EXPECT_EQ(test, c->sink.fpdus, 5U);
}

/* Send, unsignaled Write, inline Send, through ib_post_send and back. */
static void tx_qp_process(struct kunit *test)
{
	struct tx_ctx *c = tx_ctx(test, true, 4);
	struct ib_cq *cq;
	struct ib_qp *qp = tx_qp(test, &cq);
	struct ib_sge sge[2] = {
		{ .addr = (uintptr_t)(c->mem + 1), .length = 2000,
		  .lkey = tx_env.pd->local_dma_lkey },
		{ .addr = (uintptr_t)(c->mem + 5001), .length = 33,
		  .lkey = tx_env.pd->local_dma_lkey },
	};
	struct ib_send_wr send = {
		.wr_id = 1, .opcode = IB_WR_SEND, .sg_list = sge, .num_sge = 2,
		.send_flags = IB_SEND_SIGNALED,
	};
	struct ib_rdma_wr write = {
		.wr = { .wr_id = 2, .opcode = IB_WR_RDMA_WRITE,
			.sg_list = sge, .num_sge = 1 },
		.remote_addr = TX_RADDR, .rkey = TX_RSTAG,
	};
	struct ib_send_wr inl = {
		.wr_id = 3, .opcode = IB_WR_SEND, .sg_list = &sge[1],
		.num_sge = 1, .send_flags = IB_SEND_SIGNALED | IB_SEND_INLINE,
	};
	struct ib_wc wc;
	int ret, rounds = 0;

	c->rec->base_to = TX_RADDR;
	send.next = &write.wr;
	write.wr.next = &inl;
	KUNIT_ASSERT_EQ(test, ib_post_send(qp, &send, NULL), 0);
	/* A sink taking one FPDU per call: the loop is resumable. */
	c->sink.take = 1;
	do {
		ret = rsw_tx_process(c->tx, to_rsw_qp(qp), 16);
		rounds++;
	} while (ret == -EAGAIN && rounds < 100);
	KUNIT_EXPECT_GE(test, ret, 0);
	KUNIT_EXPECT_EQ(test, rsw_tx_process(c->tx, to_rsw_qp(qp), 16), 0);
	KUNIT_EXPECT_EQ(test, c->sink.fpdus, 2 + 2 + 1);

	tx_parse(test, c, true);
	KUNIT_ASSERT_EQ(test, c->rec->nseg, 5);
	KUNIT_EXPECT_EQ(test, c->rec->seg[1].last, true);
	KUNIT_EXPECT_EQ(test, c->rec->seg[1].msn, 1);
	KUNIT_EXPECT_EQ(test, c->rec->seg[2].opcode, RSW_OP_WRITE);
	KUNIT_EXPECT_EQ(test, c->rec->seg[3].to, TX_RADDR + 1454 - 16);
	KUNIT_EXPECT_EQ(test, c->rec->seg[4].opcode, RSW_OP_SEND);
	KUNIT_EXPECT_EQ(test, c->rec->seg[4].msn, 2);
	KUNIT_EXPECT_EQ(test, c->rec->seg[4].len, 33);
	/* The last Send's payload is at MO 0 of the shared placement buffer. */
	KUNIT_EXPECT_EQ(test, memcmp(c->rec->data, c->mem + 5001, 33), 0);

	tx_expect_wc(test, cq, 1, IB_WC_SUCCESS, 2033);
	tx_expect_wc(test, cq, 3, IB_WC_SUCCESS, 33);
	KUNIT_EXPECT_EQ(test, ib_poll_cq(cq, 1, &wc), 0);
}

/*
 * A bad lkey completes LOC_PROT_ERR, moves the QP to ERR and stops the run
 * with -EPROTO: the stream sends a Terminate in the WQE's place.
 */
static void tx_qp_bad_lkey(struct kunit *test)
{
	struct tx_ctx *c = tx_ctx(test, true, 4);
	struct ib_cq *cq;
	struct ib_qp *qp = tx_qp(test, &cq);
	struct ib_sge sge = {
		.addr = (uintptr_t)c->mem, .length = 64,
		.lkey = tx_env.pd->local_dma_lkey ^ 0x100,
	};
	struct ib_send_wr wr[2] = {
		{ .wr_id = 1, .opcode = IB_WR_SEND, .sg_list = &sge,
		  .num_sge = 1, .next = &wr[1] },
		{ .wr_id = 2, .opcode = IB_WR_SEND },
	};
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;

	KUNIT_ASSERT_EQ(test, ib_post_send(qp, wr, NULL), 0);
	KUNIT_EXPECT_EQ(test, rsw_tx_process(c->tx, to_rsw_qp(qp), 16),
			-EPROTO);
	KUNIT_EXPECT_EQ(test, c->sink.len, 0);
	tx_expect_wc(test, cq, 1, IB_WC_LOC_PROT_ERR, 0);
	tx_expect_wc(test, cq, 2, IB_WC_WR_FLUSH_ERR, 0);
	KUNIT_ASSERT_EQ(test, ib_query_qp(qp, &attr, IB_QP_STATE, &init), 0);
	KUNIT_EXPECT_EQ(test, attr.qp_state, IB_QPS_ERR);
}

/*
 * A Read Response the sink could not take at once is finished by
 * rsw_tx_process() before any WQE; a Send cut short by the stream's end
 * is flushed by rsw_tx_abort().
 */
static void tx_qp_resume_abort(struct kunit *test)
{
	struct tx_ctx *c = tx_ctx(test, true, 4);
	struct ib_cq *cq;
	struct ib_qp *qp = tx_qp(test, &cq);
	struct ib_mr *mr = tx_frmr(test, c, 0x8000, IB_ACCESS_REMOTE_READ);
	u8 *base = PTR_ALIGN(c->mem, PAGE_SIZE);
	struct rsw_tx_rresp rr = {
		.sink_stag = TX_RSTAG, .sink_to = TX_RADDR,
		.src_stag = mr->rkey, .src_to = 0x8000 + 10, .len = 15000,
	};
	struct ib_sge sge = {
		.addr = (uintptr_t)c->mem, .length = 3000,
		.lkey = tx_env.pd->local_dma_lkey,
	};
	struct ib_send_wr send = {
		.wr_id = 7, .opcode = IB_WR_SEND, .sg_list = &sge, .num_sge = 1,
	};
	struct rsw_rx_term term;
	struct ib_wc wc;
	int ret, rounds = 0;

	c->sink.take = 3;
	c->rec->base_to = TX_RADDR;
	KUNIT_ASSERT_EQ(test, rsw_tx_read_response(c->tx, &rr, &term),
			-EAGAIN);
	KUNIT_ASSERT_EQ(test, ib_post_send(qp, &send, NULL), 0);
	while (c->sink.fpdus < 11 && rounds++ < 10) {
		ret = rsw_tx_process(c->tx, to_rsw_qp(qp), 0);
		KUNIT_EXPECT_EQ(test, ret, c->sink.fpdus < 11 ? -EAGAIN : 0);
	}
	KUNIT_EXPECT_EQ(test, c->sink.fpdus, 11);
	tx_parse(test, c, true);
	tx_expect_msg(test, c, 0, RSW_OP_READ_RESP, rr.len, 0, base + 10);

	/* The Send: 3 segments, one taken, then the stream dies. */
	c->sink.take = 1;
	KUNIT_EXPECT_EQ(test, rsw_tx_process(c->tx, to_rsw_qp(qp), 16),
			-EAGAIN);
	KUNIT_EXPECT_EQ(test, c->sink.fpdus, 12);
	KUNIT_EXPECT_EQ(test, ib_poll_cq(cq, 1, &wc), 0);
	rsw_tx_abort(c->tx, to_rsw_qp(qp));
	tx_expect_wc(test, cq, 7, IB_WC_WR_FLUSH_ERR, 0);
	KUNIT_EXPECT_EQ(test, rsw_tx_process(c->tx, to_rsw_qp(qp), 16), 0);
}

/* 100 octets of c->mem, through the PD's local DMA lkey. */
static struct ib_sge tx_mem_sge(const struct tx_ctx *c)
{
	return (struct ib_sge) {
		.addr = (uintptr_t)c->mem, .length = 100,
		.lkey = tx_env.pd->local_dma_lkey,
	};
}

/* A signalled Read into @sge from TX_RADDR under TX_RSTAG. */
static struct ib_rdma_wr tx_read_wr(u64 wr_id, struct ib_sge *sge)
{
	return (struct ib_rdma_wr) {
		.wr = { .wr_id = wr_id, .opcode = IB_WR_RDMA_READ,
			.sg_list = sge, .num_sge = 1,
			.send_flags = IB_SEND_SIGNALED },
		.remote_addr = TX_RADDR, .rkey = TX_RSTAG,
	};
}

/*
 * The Read (wr 1) posted first goes out; the fenced WQE behind it stays
 * back, nothing completes, until the Read is done.
 */
static void tx_fence_release(struct kunit *test, struct tx_ctx *c,
			     struct ib_cq *cq, struct rsw_qp *rqp)
{
	struct ib_wc wc;
	u32 idx;

	KUNIT_EXPECT_EQ(test, rsw_tx_process(c->tx, rqp, 16), 1);
	KUNIT_EXPECT_EQ(test, rsw_tx_process(c->tx, rqp, 16), 0);
	KUNIT_EXPECT_EQ(test, ib_poll_cq(cq, 1, &wc), 0);
	KUNIT_ASSERT_TRUE(test, rsw_tx_read_done(c->tx, &idx));
	rsw_qp_sq_complete(rqp, idx, RDMAP_SW_WC_SUCCESS, 100);
	tx_expect_wc(test, cq, 1, IB_WC_SUCCESS, 100);
}

/*
 * A Read stays outstanding; a fenced Send waits for it, and ORD 1 holds
 * back a second Read.  rsw_tx_read_done() releases them.
 */
static void tx_qp_read_fence(struct kunit *test)
{
	struct tx_ctx *c = tx_ctx(test, true, 1);
	struct ib_cq *cq;
	struct ib_qp *qp = tx_qp(test, &cq);
	struct ib_sge sge = tx_mem_sge(c);
	struct ib_rdma_wr rd[2] = { tx_read_wr(1, &sge), tx_read_wr(3, &sge) };
	struct ib_send_wr send = {
		.wr_id = 2, .opcode = IB_WR_SEND, .sg_list = &sge, .num_sge = 1,
		.send_flags = IB_SEND_SIGNALED | IB_SEND_FENCE,
	};
	struct rsw_qp *rqp = to_rsw_qp(qp);

	rd[0].wr.next = &send;
	send.next = &rd[1].wr;
	KUNIT_ASSERT_EQ(test, ib_post_send(qp, &rd[0].wr, NULL), 0);
	tx_fence_release(test, c, cq, rqp);
	KUNIT_EXPECT_EQ(test, c->sink.fpdus, 1);
	/* The Send goes; the second Read takes the ORD slot. */
	KUNIT_EXPECT_EQ(test, rsw_tx_process(c->tx, rqp, 16), 2);
	KUNIT_EXPECT_EQ(test, c->sink.fpdus, 3);
	tx_expect_wc(test, cq, 2, IB_WC_SUCCESS, 100);
	KUNIT_EXPECT_EQ(test, rsw_tx_reads_outstanding(c->tx), 1);
	/* The stream dies: the outstanding Read is flushed. */
	rsw_tx_abort(c->tx, rqp);
	tx_expect_wc(test, cq, 3, IB_WC_WR_FLUSH_ERR, 0);

	tx_parse(test, c, true);
	KUNIT_ASSERT_EQ(test, c->rec->nseg, 3);
	KUNIT_EXPECT_EQ(test, c->rec->seg[0].opcode, RSW_OP_READ_REQ);
	KUNIT_EXPECT_EQ(test, c->rec->seg[1].opcode, RSW_OP_SEND);
	KUNIT_EXPECT_EQ(test, c->rec->seg[2].opcode, RSW_OP_READ_REQ);
	KUNIT_EXPECT_EQ(test, c->rec->seg[2].msn, 2);
}

/*
 * Regression: a LOCAL_INV posted with IB_SEND_FENCE behind an outstanding
 * Read ran as soon as it was taken.  It waits like a fenced wire WQE and
 * runs (its status does not matter here: no such STag) once the Read is
 * done.
 */
static void tx_qp_fenced_local(struct kunit *test)
{
	struct tx_ctx *c = tx_ctx(test, true, 1);
	struct ib_cq *cq;
	struct ib_qp *qp = tx_qp(test, &cq);
	struct ib_sge sge = tx_mem_sge(c);
	struct ib_rdma_wr rd = tx_read_wr(1, &sge);
	struct ib_send_wr inv = {
		.wr_id = 2, .opcode = IB_WR_LOCAL_INV,
		.send_flags = IB_SEND_SIGNALED | IB_SEND_FENCE,
		.ex.invalidate_rkey = 0x00777700,
	};
	struct rsw_qp *rqp = to_rsw_qp(qp);
	struct ib_wc wc;

	rd.wr.next = &inv;
	KUNIT_ASSERT_EQ(test, ib_post_send(qp, &rd.wr, NULL), 0);
	tx_fence_release(test, c, cq, rqp);
	KUNIT_EXPECT_EQ(test, rsw_tx_process(c->tx, rqp, 16), 1);
	KUNIT_ASSERT_EQ(test, ib_poll_cq(cq, 1, &wc), 1);
	KUNIT_EXPECT_EQ(test, wc.wr_id, 2);
}

/* ---------------------------------------------------------- socket sink */

static void tx_sock_release(void *sock)
{
	sock_release(sock);
}

/* SO_SNDBUF from the kernel (there is no sock_set_sndbuf()). */
static void tx_sock_sndbuf(struct sock *sk, int val)
{
	lock_sock(sk);
	sk->sk_userlocks |= SOCK_SNDBUF_LOCK;
	WRITE_ONCE(sk->sk_sndbuf, val);
	release_sock(sk);
}

/* A connected loopback TCP pair: *@snd sends, *@rcv receives. */
static void tx_sock_pair(struct kunit *test, struct socket **snd,
			 struct socket **rcv)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	struct socket *l;

	KUNIT_ASSERT_EQ(test, sock_create_kern(&init_net, AF_INET, SOCK_STREAM,
					       IPPROTO_TCP, &l), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, tx_sock_release,
							l), 0);
	/*
	 * Small buffers, so that the sender fills them (accept inherits the
	 * receive buffer).  The small window also keeps TCP's MSS and skbs
	 * (at most half the largest window) under TX_SOCK_MSS's FPDUs, so
	 * TCP takes FPDUs in part at skb ends inside them: FPDUs that fit a
	 * segment start one (rsw_tx_sock_plan()) and would stop there only
	 * under memory pressure.
	 */
	sock_set_rcvbuf(l->sk, 8192);
	KUNIT_ASSERT_EQ(test, kernel_bind(l, (struct sockaddr *)&sin,
					  sizeof(sin)), 0);
	KUNIT_ASSERT_EQ(test, kernel_listen(l, 1), 0);
	KUNIT_ASSERT_GT(test, kernel_getsockname(l, (struct sockaddr *)&sin),
			0);
	KUNIT_ASSERT_EQ(test, sock_create_kern(&init_net, AF_INET, SOCK_STREAM,
					       IPPROTO_TCP, snd), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, tx_sock_release,
							*snd), 0);
	tx_sock_sndbuf((*snd)->sk, 8192);
	KUNIT_ASSERT_EQ(test, kernel_connect(*snd, (struct sockaddr *)&sin,
					     sizeof(sin), 0), 0);
	KUNIT_ASSERT_EQ(test, kernel_accept(l, rcv, 0), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, tx_sock_release,
							*rcv), 0);
}

/* Read what @rcv has into the sink buffer; never waits. */
static void tx_sock_drain(struct socket *rcv, struct tx_sink *s)
{
	struct kvec kv;
	struct msghdr msg = {};
	int n;

	do {
		kv.iov_base = s->buf + s->len;
		kv.iov_len = TX_STREAM_MAX - s->len;
		n = kernel_recvmsg(rcv, &msg, &kv, 1, kv.iov_len, MSG_DONTWAIT);
		if (n > 0)
			s->len += n;
	} while (n > 0 && s->len < TX_STREAM_MAX);
}

/*
 * The MSS the socket sink tests size FPDUs for: more than TCP's own on
 * their loopback pair (see tx_sock_pair()).
 */
#define TX_SOCK_MSS	(4 * TX_MSS)

/* Payload room of one Send segment with MSS TX_SOCK_MSS, @markers or not. */
static u32 tx_sock_room(bool markers)
{
	return rsw_mpa_mulpdu(TX_SOCK_MSS, markers) -
	       rsw_rdmap_hdr_len(RSW_OP_SEND);
}

/* Stream octets of a Send of @len (no Markers, MSS TX_SOCK_MSS). */
static u32 tx_send_octets(u32 len)
{
	u32 room = tx_sock_room(false), total = 0, p;

	do {
		p = min(len, room);
		total += rsw_fpdu_plain_len(RSW_DDP_UNTAGGED_HDR_LEN + p);
		len -= p;
	} while (len);
	return total;
}

/* What a run of tx_sock_sends() saw. */
struct tx_sock_seen {
	u32 eagain;		/* rsw_tx_process() found TCP full */
	u32 partial;		/* an FPDU had gone out in part */
	u32 skip;		/* the sink's skip at the end */
	u64 cuts;		/* FPDUs the sink started a segment with */
};

/*
 * @n (at most 6) Sends of @len octets from c->mem + 1 through the socket
 * sink with @cfg, to a receiver read only between rsw_tx_process() calls
 * (so the send buffer fills and TCP takes FPDUs in part), until @expect
 * stream octets arrived in c->sink; every Send completes.
 */
static void tx_sock_sends(struct kunit *test, struct tx_ctx *c,
			  const struct rsw_tx_config *cfg, u32 n, u32 len,
			  u32 expect, struct tx_sock_seen *seen)
{
	struct rsw_tx_sock *ts = kunit_kzalloc(test, sizeof(*ts), GFP_KERNEL);
	unsigned long end = jiffies + 20 * HZ;
	struct ib_sge sge = {
		.addr = (uintptr_t)(c->mem + 1), .length = len,
		.lkey = tx_env.pd->local_dma_lkey,
	};
	struct ib_send_wr wr[6] = {};
	struct socket *snd, *rcv;
	struct ib_cq *cq;
	struct ib_qp *qp = tx_qp(test, &cq);
	struct ib_wc wc;
	u32 i;
	int ret;

	KUNIT_ASSERT_NOT_NULL(test, ts);
	KUNIT_ASSERT_LE(test, n, (u32)ARRAY_SIZE(wr));
	tx_sock_pair(test, &snd, &rcv);
	rsw_tx_sock_init(ts, snd);
	KUNIT_ASSERT_EQ(test, rsw_tx_init(c->tx, cfg, tx_env.rsw, tx_env.pd,
					  &rsw_tx_sock_ops, ts), 0);
	for (i = 0; i < n; i++) {
		wr[i] = (struct ib_send_wr) {
			.wr_id = i, .opcode = IB_WR_SEND, .sg_list = &sge,
			.num_sge = 1, .send_flags = IB_SEND_SIGNALED,
			.next = i < n - 1 ? &wr[i + 1] : NULL,
		};
	}
	KUNIT_ASSERT_EQ(test, ib_post_send(qp, wr, NULL), 0);
	while (c->sink.len < expect && time_before(jiffies, end)) {
		lock_sock(snd->sk);	/* the sink's contract */
		ret = rsw_tx_process(c->tx, to_rsw_qp(qp), 16);
		release_sock(snd->sk);
		if (ts->skip)
			seen->partial++;	/* an FPDU went out in part */
		if (ret == -EAGAIN)
			seen->eagain++;
		else
			KUNIT_ASSERT_GE(test, ret, 0);
		tx_sock_drain(rcv, &c->sink);
		usleep_range(50, 100);
	}
	KUNIT_ASSERT_EQ(test, (u32)c->sink.len, expect);
	seen->skip = ts->skip;
	seen->cuts = ts->cuts;
	for (i = 0; i < n; i++)
		tx_expect_wc(test, cq, i, IB_WC_SUCCESS, len);
	KUNIT_EXPECT_EQ(test, ib_poll_cq(cq, 1, &wc), 0);
}

/*
 * Six 64 KiB Sends through the socket sink: the send buffer fills, TCP
 * takes FPDUs in part, and the stream read back parses to the same
 * segments.
 */
static void tx_sock_stream(struct kunit *test)
{
	struct tx_ctx *c = tx_ctx(test, true, 4);
	struct rsw_tx_config cfg = {
		.crc = true, .mss = TX_SOCK_MSS, .ord = 4,
	};
	u32 len = 64 * 1024, i;
	struct tx_sock_seen seen = {};

	tx_sock_sends(test, c, &cfg, 6, len, 6 * tx_send_octets(len), &seen);
	KUNIT_EXPECT_GT(test, seen.eagain, 0);
	KUNIT_EXPECT_GT(test, seen.partial, 0);
	KUNIT_EXPECT_EQ(test, seen.skip, 0);
	/* FPDUs crossed TCP's MSS now and then: those started segments. */
	KUNIT_EXPECT_GT(test, seen.cuts, 0);
	tx_parse(test, c, true);
	KUNIT_ASSERT_EQ(test, c->rec->nseg,
			6 * DIV_ROUND_UP(len, tx_sock_room(false)));
	for (i = 0; i < 6; i++)
		tx_expect_msg_mss(test, c, i * (c->rec->nseg / 6),
				  RSW_OP_SEND, len, i + 1, c->mem + 1,
				  TX_SOCK_MSS);
}

/*
 * FPDU alignment (tx_sock.c): which FPDUs must start a TCP segment, from
 * the octets queued since the last boundary, the MSS and the lengths.
 */
struct tx_plan_case {
	const char *name;
	u32 fill, mss;
	u32 len[RSW_TX_BATCH];
	unsigned int n;
	bool cont;
	u32 cut;
};

static const struct tx_plan_case tx_plan_cases[] = {
	{ "full FPDUs from a boundary", 0, 1428, { 1428, 1428, 1428 }, 3,
	  false, 0 },
	{ "full FPDU after queued octets", 100, 1428, { 1428, 1428 }, 2,
	  false, BIT(0) },
	{ "small FPDUs share, the third crosses", 0, 1428,
	  { 700, 700, 700, 700 }, 4, false, BIT(2) },
	{ "a tail then full FPDUs", 0, 1428, { 1428, 300, 1428, 1428 }, 4,
	  false, BIT(2) },
	{ "exactly to the boundary", 1000, 1428, { 428, 1428 }, 2, false, 0 },
	{ "rest of a part-sent FPDU stays put", 1000, 1428, { 800, 1428 }, 2,
	  true, BIT(1) },
	{ "FPDU over an MSS that shrank", 0, 1400, { 1428, 100, 1428 }, 3,
	  false, BIT(2) },
	{ "no MSS known", 5, 0, { 1428, 1428 }, 2, false, 0 },
};

static void tx_plan_desc(const struct tx_plan_case *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(tx_plan, tx_plan_cases, tx_plan_desc);

static void tx_sock_plan(struct kunit *test)
{
	const struct tx_plan_case *t = test->param_value;

	KUNIT_EXPECT_EQ(test, rsw_tx_sock_plan(t->fill, t->mss, t->len, t->n,
					       t->cont), t->cut);
}

/*
 * MPA Markers through the engine (RFC 5044 section 5): at every stream
 * offset an FPDU can start at (0..508, step 4), Sends and Writes of
 * lengths around 512 and over several FPDUs, so Markers fall into the
 * header, the payload, PAD and before the CRC.  The mock sink lays the
 * FPDUs out by the reference rule from each FPDU's start; the parser (with
 * Markers, CRC checked over them) must accept every octet, the stream
 * octets must be the engine's count (tx->off), and the segments and
 * payload must be those of the message.
 */
static void tx_markers_alignment(struct kunit *test)
{
	static const u32 lens[] = { 0, 1, 478, 490, 494, 498, 502, 506, 3001 };
	const bool *crc = test->param_value;
	struct rsw_tx_config cfg = {
		.crc = *crc, .markers = true, .mss = TX_MSS, .ord = 4,
	};
	struct tx_ctx *c = tx_ctx(test, *crc, 4);
	struct rdmap_sw_sqe *sqe;
	u32 start, i, room, nseg;
	u8 wr;

	c->sink.markers = true;
	room = rsw_mpa_mulpdu(TX_MSS, true) - rsw_rdmap_hdr_len(RSW_OP_SEND);
	for (start = 0; start < RSW_MPA_MARKER_SPACING; start += 4) {
		for (i = 0; i < ARRAY_SIZE(lens); i++) {
			wr = i & 1 ? RDMAP_SW_WR_RDMA_WRITE : RDMAP_SW_WR_SEND;
			KUNIT_ASSERT_EQ(test, rsw_tx_init(c->tx, &cfg,
							  tx_env.rsw,
							  tx_env.pd,
							  &tx_sink_ops,
							  &c->sink), 0);
			c->tx->off = start;
			c->sink.len = 0;
			sqe = tx_sqe(test, wr);
			tx_sqe_sge(sqe, c->mem + 3, lens[i]);
			c->rec->base_to = TX_RADDR;
			KUNIT_ASSERT_EQ(test, rsw_tx_wqe(c->tx, NULL, sqe, 0),
					0);
			KUNIT_ASSERT_EQ(test, c->tx->off - start,
					(u32)c->sink.len);
			tx_parse_mk(test, c, *crc, start);
			nseg = lens[i] ? DIV_ROUND_UP(lens[i], room) : 1;
			if (wr == RDMAP_SW_WR_SEND)
				KUNIT_ASSERT_EQ(test, c->rec->nseg, nseg);
			KUNIT_ASSERT_EQ(test, c->rec->placed, lens[i]);
			if (lens[i])
				KUNIT_ASSERT_EQ(test, memcmp(c->rec->data,
							     c->mem + 3,
							     lens[i]), 0);
		}
	}
}

/*
 * Sends with Markers through the real socket sink: TCP takes FPDUs in
 * part and the engine resends them from the same stream offset; the bytes
 * read back parse (Markers checked) to the same payload, and the engine's
 * stream offset is the octets sent, Markers included (fpdu.h's count).
 */
static void tx_sock_markers(struct kunit *test)
{
	const bool *crc = test->param_value;
	struct tx_ctx *c = tx_ctx(test, *crc, 4);
	struct rsw_tx_config cfg = {
		.crc = *crc, .markers = true, .mss = TX_SOCK_MSS, .ord = 4,
	};
	u32 len = 64 * 1024 - 3, room, expect = 0, left, p, i;
	struct tx_sock_seen seen = {};

	room = tx_sock_room(true);
	for (i = 0; i < 4; i++) {
		for (left = len; left; left -= p) {
			p = min(left, room);
			expect += rsw_fpdu_len(RSW_DDP_UNTAGGED_HDR_LEN + p,
					       true, expect);
		}
	}
	tx_sock_sends(test, c, &cfg, 4, len, expect, &seen);
	KUNIT_EXPECT_GT(test, seen.partial, 0);
	KUNIT_EXPECT_EQ(test, seen.skip, 0);
	KUNIT_EXPECT_EQ(test, c->tx->off, expect);
	tx_parse_mk(test, c, *crc, 0);
	KUNIT_EXPECT_EQ(test, c->rec->placed, 4 * len);
}

/* ------------------------------------------- RFC 7306 on the wire, by hand */

/*
 * The FPDUs of the RFC 7306 messages, octet by octet, from the draft's
 * Appendix A (A.1, A.2, A.3) and Figures 2, 4, 6 and 7, written out here
 * literally: nothing below uses wire.h's structs or accessors, so a wrong
 * offset or byte order there cannot hide in both.  MPA CRC is off, so the
 * trailer is four zero octets (RFC 5044); MPA markers are not used.
 *
 * Octets 0..1 ULPDU_Length; 2 DDP control |T|L|Resrv|DV| (untagged, last,
 * version 1: 0x41); 3 RDMAP control |RV|Rsv|Opcode| (version 1: 0x40 |
 * opcode); 4..7 reserved (Invalidate STag, zero); 8..11 QN; 12..15 MSN;
 * 16..19 MO; the RDMAP header from octet 20.
 */
#define TX_W_AREQ_LEN	76	/* 2 + 18 + 52, no PAD, CRC */

/* Unmasked FetchAdd: Add Mask 0, Compare Data 0, Compare Mask all ones. */
static const u8 tx_w_fetch_add[TX_W_AREQ_LEN] = {
	0x00, 0x46, 0x41, 0x4a, 0x00, 0x00, 0x00, 0x00,	/* 70, 0xa */
	0x00, 0x00, 0x00, 0x01,			/* QN 1 */
	0x00, 0x00, 0x00, 0x01,			/* MSN 1 */
	0x00, 0x00, 0x00, 0x00,			/* MO 0 */
	0x00, 0x00, 0x00, 0x00,			/* AOpCode 0: FetchAdd */
	0x00, 0x00, 0x00, 0x10,			/* Request Identifier */
	0x00, 0xab, 0xcd, 0x42,			/* Remote STag */
	0x70, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x08,	/* Remote TO */
	0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,	/* Add Data */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,	/* Add Mask */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,	/* Compare Data */
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,	/* Compare Mask */
	0x00, 0x00, 0x00, 0x00,			/* CRC off */
};

/* Unmasked CmpSwap: both masks all ones. */
static const u8 tx_w_cmp_swap[TX_W_AREQ_LEN] = {
	0x00, 0x46, 0x41, 0x4a, 0x00, 0x00, 0x00, 0x00,	/* 70, 0xa */
	0x00, 0x00, 0x00, 0x01,
	0x00, 0x00, 0x00, 0x02,			/* MSN 2 */
	0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x02,			/* AOpCode 2: CmpSwap */
	0x00, 0x00, 0x00, 0x11,
	0x00, 0xab, 0xcd, 0x42,			/* Remote STag */
	0x70, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x08,	/* Remote TO */
	0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x00,	/* Swap Data */
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,	/* Swap Mask */
	0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,	/* Compare Data */
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,	/* Compare Mask */
	0x00, 0x00, 0x00, 0x00,
};

static const u8 tx_w_masked_fetch_add[TX_W_AREQ_LEN] = {
	0x00, 0x46, 0x41, 0x4a, 0x00, 0x00, 0x00, 0x00,	/* 70, 0xa */
	0x00, 0x00, 0x00, 0x01,
	0x00, 0x00, 0x00, 0x03,			/* MSN 3 */
	0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00,			/* FetchAdd */
	0x00, 0x00, 0x00, 0x12,
	0x00, 0xab, 0xcd, 0x42,			/* Remote STag */
	0x70, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x08,	/* Remote TO */
	0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x02,	/* Add Data */
	0x80, 0x00, 0x00, 0x00, 0x80, 0x00, 0x00, 0x00,	/* Add Mask */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	0x00, 0x00, 0x00, 0x00,
};

static const u8 tx_w_masked_cmp_swap[TX_W_AREQ_LEN] = {
	0x00, 0x46, 0x41, 0x4a, 0x00, 0x00, 0x00, 0x00,	/* 70, 0xa */
	0x00, 0x00, 0x00, 0x01,
	0x00, 0x00, 0x00, 0x04,			/* MSN 4 */
	0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x02,			/* CmpSwap */
	0x00, 0x00, 0x00, 0x13,
	0x00, 0xab, 0xcd, 0x42,			/* Remote STag */
	0x70, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x08,	/* Remote TO */
	0x12, 0x34, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,	/* Swap Data */
	0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,	/* Swap Mask */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xab,	/* Compare Data */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff,	/* Compare Mask */
	0x00, 0x00, 0x00, 0x00,
};

/* Atomic Response (A.2): QN 3, Original Request Identifier and Value. */
static const u8 tx_w_atomic_resp[36] = {
	0x00, 0x1e, 0x41, 0x4b, 0x00, 0x00, 0x00, 0x00,	/* 30, 0xb */
	0x00, 0x00, 0x00, 0x03,			/* QN 3 */
	0x00, 0x00, 0x00, 0x01,			/* MSN 1 */
	0x00, 0x00, 0x00, 0x00,
	0xa1, 0xb2, 0xc3, 0xd4,			/* Original Request Id */
	0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,	/* Original Value */
	0x00, 0x00, 0x00, 0x00,
};

/*
 * Write with Immediate: the Write (tagged, 0xc1 0x40, STag, TO, 8
 * octets), then Immediate Data (A.3) on QN 0 (0x48; with SE 0x49): the
 * verbs' 32 bits of immediate data first, then four zero octets.
 */
static const u8 tx_w_write_imm[28 + 32] = {
	0x00, 0x16, 0xc1, 0x40,			/* Write, tagged, last */
	0x00, 0xab, 0xcd, 0x42,			/* STag */
	0x70, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x08,	/* TO */
	0x51, 0x52, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58,	/* payload */
	0x00, 0x00, 0x00, 0x00,
	0x00, 0x1a, 0x41, 0x49, 0x00, 0x00, 0x00, 0x00,	/* 26, 0x9 */
	0x00, 0x00, 0x00, 0x00,			/* QN 0 */
	0x00, 0x00, 0x00, 0x01,			/* MSN 1 */
	0x00, 0x00, 0x00, 0x00,
	0xfe, 0xdc, 0xba, 0x98, 0x00, 0x00, 0x00, 0x00,	/* Immediate Data */
	0x00, 0x00, 0x00, 0x00,
};

/* @got equals @want octet by octet; each difference named by offset. */
static void tx_w_expect(struct kunit *test, const u8 *got, const u8 *want,
			u32 len, const char *what)
{
	u32 i, bad = 0;

	for (i = 0; i < len; i++) {
		if (got[i] == want[i])
			continue;
		if (bad++ < 8)
			KUNIT_FAIL(test, "%s octet %u: %#04x, want %#04x", what,
				   i, got[i], want[i]);
	}
	KUNIT_EXPECT_EQ_MSG(test, bad, 0U, "%s: octets differ", what);
}

/* An atomic SQE with an 8-byte result buffer in @c's memory. */
static struct rdmap_sw_sqe *tx_w_atomic_sqe(struct kunit *test,
					    struct tx_ctx *c, u8 opcode,
					    u64 compare_add, u64 swap,
					    u64 compare_add_mask, u64 swap_mask)
{
	struct rdmap_sw_sqe *sqe = tx_sqe(test, opcode);

	sqe->raddr = 0x7000000000001008ULL;
	tx_sqe_sge(sqe, c->mem + 64, 8);
	sqe->atomic.compare_add = compare_add;
	sqe->atomic.swap = swap;
	sqe->atomic.compare_add_mask = compare_add_mask;
	sqe->atomic.swap_mask = swap_mask;
	return sqe;
}

/*
 * The four kernel atomic WRs as Atomic Requests: the unmasked ones carry
 * the fixed masks of Figure 5 whatever the WR's mask fields hold.
 */
static void tx_wire_atomic_request(struct kunit *test)
{
	struct tx_ctx *c = tx_ctx(test, false, 4);
	const u8 *b = c->sink.buf;
	struct rdmap_sw_sqe *sqe[4];
	u32 i;

	sqe[0] = tx_w_atomic_sqe(test, c, RDMAP_SW_WR_ATOMIC_FETCH_AND_ADD,
				 0x0102030405060708ULL, 0xdeadbeefULL, 0x1111,
				 0x2222);
	sqe[1] = tx_w_atomic_sqe(test, c, RDMAP_SW_WR_ATOMIC_CMP_AND_SWP,
				 0x1122334455667788ULL, 0x99aabbccddeeff00ULL,
				 0x3333, 0x4444);
	sqe[2] = tx_w_atomic_sqe(test, c,
				 RDMAP_SW_WR_MASKED_ATOMIC_FETCH_AND_ADD,
				 0x0000000100000002ULL, 0x5555,
				 0x8000000080000000ULL, 0x6666);
	sqe[3] = tx_w_atomic_sqe(test, c,
				 RDMAP_SW_WR_MASKED_ATOMIC_CMP_AND_SWP, 0xab,
				 0x1234000000000000ULL, 0xff,
				 0xffff000000000000ULL);
	/* SQ indices 0x10..0x13: the Request Identifiers. */
	for (i = 0; i < 4; i++)
		KUNIT_ASSERT_EQ(test, rsw_tx_wqe(c->tx, NULL, sqe[i], 0x10 + i),
				0);
	KUNIT_ASSERT_EQ(test, c->sink.len, 4 * TX_W_AREQ_LEN);
	tx_w_expect(test, b, tx_w_fetch_add, TX_W_AREQ_LEN, "FetchAdd");
	tx_w_expect(test, b + TX_W_AREQ_LEN, tx_w_cmp_swap, TX_W_AREQ_LEN,
		    "CmpSwap");
	tx_w_expect(test, b + 2 * TX_W_AREQ_LEN, tx_w_masked_fetch_add,
		    TX_W_AREQ_LEN, "masked FetchAdd");
	tx_w_expect(test, b + 3 * TX_W_AREQ_LEN, tx_w_masked_cmp_swap,
		    TX_W_AREQ_LEN, "masked CmpSwap");
	/* All four wait for their responses, against ORD as Reads do. */
	KUNIT_EXPECT_EQ(test, rsw_tx_reads_outstanding(c->tx), 4);
}

/* The Responder executes a FetchAdd and answers with its Atomic Response. */
static void tx_wire_atomic_response(struct kunit *test)
{
	struct tx_ctx *c = tx_ctx(test, false, 4);
	struct ib_mr *mr = tx_frmr(test, c, 0x4000, IB_ACCESS_LOCAL_WRITE |
				   IB_ACCESS_REMOTE_ATOMIC);
	u8 *word = PTR_ALIGN(c->mem, PAGE_SIZE) + 8;
	struct rsw_tx_rresp rr = {
		.src_stag = mr->rkey, .src_to = 0x4008, .len = 8,
		.atomic = true, .req_id = cpu_to_be32(0xa1b2c3d4),
		.op = { .op = RSW_ATOMIC_FETCH_ADD, .data = 5, .data_mask = 0,
			.cmp_mask = U64_MAX },
	};
	struct rsw_rx_term term = {};

	*(u64 *)word = 0x0102030405060708ULL;
	KUNIT_ASSERT_EQ(test, rsw_tx_read_response(c->tx, &rr, &term), 0);
	KUNIT_ASSERT_EQ(test, c->sink.len, sizeof(tx_w_atomic_resp));
	tx_w_expect(test, c->sink.buf, tx_w_atomic_resp,
		    sizeof(tx_w_atomic_resp), "Atomic Response");
	KUNIT_EXPECT_EQ(test, *(u64 *)word, 0x010203040506070dULL);
}

/* Write with Immediate and SE: a Write, then Immediate Data with SE. */
static void tx_wire_write_imm(struct kunit *test)
{
	struct tx_ctx *c = tx_ctx(test, false, 4);
	struct rdmap_sw_sqe *sqe = tx_sqe(test,
					  RDMAP_SW_WR_RDMA_WRITE_WITH_IMM);
	static const u8 payload[8] = {
		0x51, 0x52, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58,
	};
	static const u8 imm[4] = { 0xfe, 0xdc, 0xba, 0x98 };

	memcpy(c->mem, payload, sizeof(payload));
	sqe->raddr = 0x7000000000001008ULL;
	sqe->flags |= RDMAP_SW_SQE_SOLICITED;
	memcpy(&sqe->imm_data, imm, sizeof(imm));	/* network order */
	tx_sqe_sge(sqe, c->mem, sizeof(payload));
	KUNIT_ASSERT_EQ(test, rsw_tx_wqe(c->tx, NULL, sqe, 0), 0);
	KUNIT_ASSERT_EQ(test, c->sink.len, sizeof(tx_w_write_imm));
	tx_w_expect(test, c->sink.buf, tx_w_write_imm, sizeof(tx_w_write_imm),
		    "Write with Immediate");
	/* Without SE: opcode 8. */
	c->sink.len = 0;
	sqe->flags &= ~RDMAP_SW_SQE_SOLICITED;
	KUNIT_ASSERT_EQ(test, rsw_tx_wqe(c->tx, NULL, sqe, 1), 0);
	KUNIT_ASSERT_EQ(test, c->sink.len, sizeof(tx_w_write_imm));
	KUNIT_EXPECT_EQ(test, c->sink.buf[28 + 3], 0x48);
	KUNIT_EXPECT_EQ(test, c->sink.buf[28 + 15], 0x02);	/* MSN 2 */
}

/* ------------------------------------------------- Terminate parts */

/*
 * Which parts of the offending segment a Terminate carries, per error
 * class and message (issue 14 item 7; Documentation/design.rst,
 * "Terminate headers"), byte for byte: each row sends a message, breaks
 * it the row's way (a patched octet, or a refusal by the consumer at the
 * row's callback), feeds it to the parser and sends the Terminate the
 * parser's verdict makes.  Its ULPDU is compared whole with one built
 * here from constants and the offending FPDU's own octets.
 */
enum tx_tp_break {
	TP_PATCH,		/* octet @at ^= @xor; the parser finds it */
	TP_REFUSE_PLACE,	/* place_tagged refuses with @cause */
	TP_REFUSE_DONE,		/* seg_done refuses with @cause */
};

struct tx_tp_case {
	const char *name;
	u8 wr;				/* RDMAP_SW_WR_* of the message */
	enum tx_tp_break how;
	u32 at;
	u8 xor;
	bool crc;
	struct rsw_term_cause cause;	/* expected (and the refusal) */
	u32 ddp_len;			/* M and D: octets of the FPDU */
	bool rreq;			/* R: its 28 Read Request octets */
};

#define TP_C(l, t, c)	RSW_TERM_CAUSE(RSW_TERM_LAYER_##l, t, c)

static const struct tx_tp_case tx_tp_cases[] = {
	/* LLP: nothing of a segment whose framing is in doubt. */
	{ "llp_crc_send", RDMAP_SW_WR_SEND, TP_PATCH, 40, 0x01, true,
	  TP_C(LLP, RSW_LLP_ET_MPA, RSW_MPA_EC_CRC), 0, false },
	/* DDP: segment length and DDP header, never an RDMA header. */
	{ "ddp_tagged_write", RDMAP_SW_WR_RDMA_WRITE, TP_REFUSE_PLACE, 0, 0,
	  false, TP_C(DDP, RSW_DDP_ET_TAGGED, RSW_DDP_EC_T_INVALID_STAG),
	  16, false },
	{ "ddp_untagged_qn_send", RDMAP_SW_WR_SEND, TP_PATCH, 11, 0x03,
	  false, TP_C(DDP, RSW_DDP_ET_UNTAGGED, RSW_DDP_EC_U_INVALID_QN),
	  20, false },
	{ "ddp_untagged_msn_rreq", RDMAP_SW_WR_RDMA_READ, TP_PATCH, 15, 0x04,
	  false, TP_C(DDP, RSW_DDP_ET_UNTAGGED, RSW_DDP_EC_U_MSN_NO_BUF),
	  20, false },
	/* RDMAP Remote Protection: on a Read Request its header too. */
	{ "rdmap_prot_rreq", RDMAP_SW_WR_RDMA_READ, TP_REFUSE_DONE, 0, 0,
	  false, TP_C(RDMAP, RSW_RDMAP_ET_REMOTE_PROT,
		      RSW_RDMAP_EC_INVALID_STAG), 20, true },
	{ "rdmap_prot_send_inv", RDMAP_SW_WR_SEND_WITH_INV, TP_REFUSE_DONE,
	  0, 0, false, TP_C(RDMAP, RSW_RDMAP_ET_REMOTE_PROT,
			    RSW_RDMAP_EC_CANT_INVALIDATE), 20, false },
	/* Remote Operation on a Read Request: rule 3 over Figure 10. */
	{ "rdmap_op_rreq", RDMAP_SW_WR_RDMA_READ, TP_REFUSE_DONE, 0, 0,
	  false, TP_C(RDMAP, RSW_RDMAP_ET_REMOTE_OP, RSW_RDMAP_EC_OPCODE),
	  20, true },
	{ "rdmap_op_version_send", RDMAP_SW_WR_SEND, TP_PATCH, 3, 0xc0,
	  false, TP_C(RDMAP, RSW_RDMAP_ET_REMOTE_OP, RSW_RDMAP_EC_VERSION),
	  20, false },
	/* A Read Request header not read yet cannot be included. */
	{ "rdmap_op_version_rreq", RDMAP_SW_WR_RDMA_READ, TP_PATCH, 3, 0xc0,
	  false, TP_C(RDMAP, RSW_RDMAP_ET_REMOTE_OP, RSW_RDMAP_EC_VERSION),
	  20, false },
	/* An Atomic Request's header is no RDMA Read Request header. */
	{ "rdmap_op_atomic_unaligned", RDMAP_SW_WR_ATOMIC_FETCH_AND_ADD,
	  TP_PATCH, 39, 0x04, false,
	  TP_C(RDMAP, RSW_RDMAP_ET_REMOTE_OP,
	       RSW_RDMAP_EC_CATASTROPHIC_STREAM), 20, false },
	/*
	 * Local Catastrophic, found on an incoming message: rules 2 and 3
	 * over Figure 10, as for Remote Operation errors.
	 */
	{ "rdmap_local_send", RDMAP_SW_WR_SEND, TP_REFUSE_DONE, 0, 0, false,
	  TP_C(RDMAP, RSW_RDMAP_ET_CATASTROPHIC, 0), 20, false },
	{ "rdmap_local_rreq", RDMAP_SW_WR_RDMA_READ, TP_REFUSE_DONE, 0, 0,
	  false, TP_C(RDMAP, RSW_RDMAP_ET_CATASTROPHIC, 0), 20, true },
};

static void tx_tp_desc(const struct tx_tp_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(tx_tp, tx_tp_cases, tx_tp_desc);

struct tx_tp_rx {
	const struct tx_tp_case *row;
	bool stopped;
	struct rsw_rx_term term;
};

static bool tx_tp_refuse(const struct tx_tp_rx *r, enum tx_tp_break at,
			 struct rsw_term_cause *term)
{
	if (r->row->how != at)
		return true;
	*term = r->row->cause;
	return false;
}

static bool tx_tp_place_tagged(void *ctx, const struct rsw_rx_seg *seg,
			       u64 to, const void *data, u32 len,
			       struct rsw_term_cause *term)
{
	return tx_tp_refuse(ctx, TP_REFUSE_PLACE, term);
}

static bool tx_tp_place_untagged(void *ctx, const struct rsw_rx_seg *seg,
				 u32 mo, const void *data, u32 len,
				 struct rsw_term_cause *term)
{
	return true;
}

static bool tx_tp_seg_done(void *ctx, const struct rsw_rx_seg *seg,
			   struct rsw_term_cause *term)
{
	return tx_tp_refuse(ctx, TP_REFUSE_DONE, term);
}

static void tx_tp_stop(void *ctx, const struct rsw_rx_seg *seg,
		       const struct rsw_rx_term *term)
{
	struct tx_tp_rx *r = ctx;

	r->stopped = true;
	r->term = *term;
}

/* One message per queue, MSN 1: the first each queue of the sender has. */
static void tx_tp_window(void *ctx, u8 qn, u32 msn, struct rsw_rx_window *w)
{
	w->msn = 1;
	w->count = 1;
	w->len = TX_MSG_MAX;
}

static const struct rsw_rx_ops tx_tp_ops = {
	.window = tx_tp_window,
	.place_tagged = tx_tp_place_tagged,
	.place_untagged = tx_tp_place_untagged,
	.seg_done = tx_tp_seg_done,
	.stop = tx_tp_stop,
};

/* The offending message of @row, sent into @c's sink. */
static void tx_tp_send(struct kunit *test, struct tx_ctx *c,
		       const struct tx_tp_case *row)
{
	struct rdmap_sw_sqe *sqe;

	if (row->wr == RDMAP_SW_WR_ATOMIC_FETCH_AND_ADD) {
		sqe = tx_w_atomic_sqe(test, c, row->wr, 1, 0, 0, 0);
	} else {
		sqe = tx_sqe(test, row->wr);
		tx_sqe_sge(sqe, c->mem, 64);
	}
	KUNIT_ASSERT_EQ(test, rsw_tx_wqe(c->tx, NULL, sqe, 0), 0);
	if (row->how == TP_PATCH) {
		KUNIT_ASSERT_LT(test, row->at, c->sink.len);
		c->sink.buf[row->at] ^= row->xor;
	}
}

/* The Terminate's ULPDU as RFC 5040 section 4.8 lays it out, by hand. */
static u32 tx_tp_expect(const struct tx_tp_case *row, const u8 *bad, u8 *e)
{
	u32 opt = row->ddp_len + (row->rreq ? 28 : 0);
	u32 ulpdu = 22 + opt;

	memset(e, 0, 24);
	e[0] = ulpdu >> 8;
	e[1] = ulpdu & 0xff;
	e[2] = 0x41;			/* DDP: untagged, L, DV 1 */
	e[3] = 0x47;			/* RDMAP: RV 1, opcode Terminate */
	e[11] = 2;			/* QN 2 */
	e[15] = 1;			/* MSN 1: the first Terminate */
	e[20] = row->cause.layer << 4 | row->cause.etype;
	e[21] = row->cause.ecode;
	e[22] = (row->ddp_len ? 0xc0 : 0) | (row->rreq ? 0x20 : 0);
	memcpy(e + 24, bad, row->ddp_len);
	if (row->rreq)
		memcpy(e + 24 + row->ddp_len, bad + 20, 28);
	return 2 + ulpdu;
}

static void tx_term_parts(struct kunit *test)
{
	const struct tx_tp_case *row = test->param_value;
	struct rsw_rx_config cfg = { .crc = row->crc, .max_ulpdu = 0xffff };
	struct tx_ctx *c = tx_ctx(test, row->crc, 4);
	struct tx_tp_rx r = { .row = row };
	struct rsw_tx_term *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	u8 *bad = kunit_kzalloc(test, 64, GFP_KERNEL);
	u8 *want = kunit_kzalloc(test, 128, GFP_KERNEL);
	u32 len;

	KUNIT_ASSERT_NOT_NULL(test, t);
	KUNIT_ASSERT_NOT_NULL(test, bad);
	KUNIT_ASSERT_NOT_NULL(test, want);
	tx_tp_send(test, c, row);
	memcpy(bad, c->sink.buf, min_t(u32, c->sink.len, 64));
	KUNIT_ASSERT_EQ(test, rsw_rx_init(&c->rx, &cfg, &tx_tp_ops, &r), 0);
	rsw_rx_feed(&c->rx, c->sink.buf, c->sink.len);
	KUNIT_ASSERT_TRUE(test, r.stopped);
	KUNIT_EXPECT_EQ(test, r.term.cause.layer, row->cause.layer);
	KUNIT_EXPECT_EQ(test, r.term.cause.etype, row->cause.etype);
	KUNIT_EXPECT_EQ(test, r.term.cause.ecode, row->cause.ecode);

	rsw_tx_term_from_rx(t, &c->rx);
	c->sink.len = 0;
	KUNIT_ASSERT_EQ(test, rsw_tx_terminate(c->tx, t), 0);
	len = tx_tp_expect(row, bad, want);
	/* The ULPDU, then pad to 4 and the CRC field. */
	KUNIT_ASSERT_EQ(test, c->sink.len, ALIGN(len, 4) + 4);
	KUNIT_EXPECT_MEMEQ(test, c->sink.buf, want, len);
}

static struct kunit_case tx_cases[] = {
	KUNIT_CASE_PARAM(tx_roundtrip, tx_rt_gen),
	KUNIT_CASE(tx_no_crc),
	KUNIT_CASE(tx_multi_sge),
	KUNIT_CASE(tx_pieces_run_out),
	KUNIT_CASE(tx_inline),
	KUNIT_CASE(tx_crc_corrupt),
	KUNIT_CASE(tx_msn_sequence),
	KUNIT_CASE(tx_read_request),
	KUNIT_CASE(tx_bad_sge),
	KUNIT_CASE(tx_backpressure),
	KUNIT_CASE(tx_mss_change),
	KUNIT_CASE(tx_read_response),
	KUNIT_CASE_PARAM(tx_read_response_refused, tx_rresp_gen_params),
	KUNIT_CASE_PARAM(tx_read_response_splice, tx_crc_gen_params),
	KUNIT_CASE_PARAM(tx_markers_alignment, tx_crc_gen_params),
	KUNIT_CASE_PARAM(tx_sock_markers, tx_crc_gen_params),
	KUNIT_CASE(tx_inval_waits_for_send),
	KUNIT_CASE(tx_terminate),
	KUNIT_CASE(tx_terminate_from_rx),
	KUNIT_CASE_PARAM(tx_term_parts, tx_tp_gen_params),
	KUNIT_CASE(tx_qp_process),
	KUNIT_CASE(tx_qp_coalesce),
	KUNIT_CASE(tx_qp_bad_lkey),
	KUNIT_CASE(tx_qp_read_fence),
	KUNIT_CASE(tx_qp_fenced_local),
	KUNIT_CASE(tx_qp_resume_abort),
	KUNIT_CASE(tx_sock_stream),
	KUNIT_CASE_PARAM(tx_sock_plan, tx_plan_gen_params),
	KUNIT_CASE(tx_wire_atomic_request),
	KUNIT_CASE(tx_wire_atomic_response),
	KUNIT_CASE(tx_wire_write_imm),
	{}
};

static struct kunit_suite tx_suite = {
	.name = "rdmap_sw_tx",
	.suite_init = tx_suite_init,
	.suite_exit = tx_suite_exit,
	.test_cases = tx_cases,
};

kunit_test_suite(tx_suite);

MODULE_DESCRIPTION("KUnit tests for the rdmap_sw transmit engine");
MODULE_LICENSE("GPL");
