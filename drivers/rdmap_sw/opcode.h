/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmap_sw: the RDMAP opcodes, one row each (RFC 5040 Figures 4 and 5,
 * RFC 7306 Figures 2 and 3), in one table, rsw_rdmap_ops[] (opcode.c).
 * Everything the code needs to know about an opcode is in its row: the
 * wire facts (header length, T flag, queue, payload, Invalidate STag,
 * Solicited Event), what the receiver does with it (the RX parser's header
 * check, the stream's delivery) and how the sender builds its header.  A
 * reserved opcode has no row (rsw_rdmap_op() answers NULL); an opcode with
 * no RX check is refused on receive as an unexpected opcode.
 *
 * The handlers named here live in rx.c, stream_rx.c and tx.c and are
 * called only through the table, in the contexts of their engines: the
 * RX check and the delivery where the parser runs (softirq or the stream's
 * work, socket lock held, never sleeping), the header builder where
 * rsw_tx_process() runs.
 */
#ifndef _RDMAP_SW_OPCODE_H
#define _RDMAP_SW_OPCODE_H

#include "rx.h"
#include "stats.h"
#include "wire.h"

struct rsw_stream;
struct rsw_tx;
struct rsw_tx_fpdu;

struct rsw_rdmap_op {
	const char *name;
	u8 hdr_len;		/* ULPDU_Length .. end of the fixed headers */
	bool tagged;		/* the DDP T flag the opcode requires */
	u8 qn;			/* DDP queue of an untagged opcode */
	bool payload;		/* may carry ULP payload after hdr_len */
	bool consumes_rq;	/* completes a posted receive */
	bool inval;		/* carries an Invalidate STag */
	bool solicited;		/* a Solicited Event message */
	/*
	 * Counters of its messages sent and received (stats.h), counted
	 * once per message, at its last segment; never RSW_STAT_NONE
	 * (stats_kunit.c).
	 */
	enum rsw_stat tx_stat;
	enum rsw_stat rx_stat;
	/* RX: check the header once hdr_len octets are in (rx.c). */
	enum rsw_rx_state (*rx_check)(struct rsw_rx *rx);
	/* RX: the segment arrived whole and valid (stream_rx.c). */
	bool (*deliver)(struct rsw_stream *s, const struct rsw_rx_seg *seg,
			struct rsw_term_cause *term);
	/* TX: the header of the segment at message offset @pos (tx.c). */
	u32 (*tx_hdr)(struct rsw_tx *tx, struct rsw_tx_fpdu *f, u32 pos);
};

extern const struct rsw_rdmap_op rsw_rdmap_ops[RSW_OP_NUM];

/* The row of @op, NULL for a reserved opcode. */
static inline const struct rsw_rdmap_op *rsw_rdmap_op(u8 op)
{
	return op < RSW_OP_NUM ? &rsw_rdmap_ops[op] : NULL;
}

static inline bool rsw_rdmap_op_valid(u8 op)
{
	return op < RSW_OP_NUM;
}

static inline bool rsw_rdmap_op_tagged(u8 op)
{
	return op < RSW_OP_NUM && rsw_rdmap_ops[op].tagged;
}

/* DDP queue of an untagged @op (meaningless for tagged ones). */
static inline enum rsw_ddp_qn rsw_rdmap_op_qn(u8 op)
{
	return op < RSW_OP_NUM ? rsw_rdmap_ops[op].qn : RSW_QN_SEND;
}

static inline bool rsw_rdmap_op_inval(u8 op)
{
	return op < RSW_OP_NUM && rsw_rdmap_ops[op].inval;
}

static inline bool rsw_rdmap_op_payload(u8 op)
{
	return op < RSW_OP_NUM && rsw_rdmap_ops[op].payload;
}

static inline bool rsw_rdmap_op_solicited(u8 op)
{
	return op < RSW_OP_NUM && rsw_rdmap_ops[op].solicited;
}

/*
 * Octets from ULPDU_Length to the end of the fixed headers of an FPDU of
 * @op; a Terminate's optional parts come on top (rsw_term_hdr_len()).
 * 0 for a reserved opcode.
 */
static inline u32 rsw_rdmap_hdr_len(u8 op)
{
	return op < RSW_OP_NUM ? rsw_rdmap_ops[op].hdr_len : 0;
}

static inline const char *rsw_rdmap_op_name(u8 op)
{
	return op < RSW_OP_NUM ? rsw_rdmap_ops[op].name : "RESERVED";
}

/*
 * The control word of a segment of opcode @op as this implementation sends
 * it: DV = RV = 1, reserved bits zero, T as RFC 5040/7306 require for @op.
 */
static inline __be16 rsw_ctrl_word(enum rsw_rdmap_opcode op, bool last)
{
	__be16 w = 0;

	w = rsw_be16_put(w, RSW_DDP_TAGGED, rsw_rdmap_op_tagged(op));
	w = rsw_be16_put(w, RSW_DDP_LAST, last);
	w = rsw_be16_put(w, RSW_DDP_DV, RSW_DDP_VERSION);
	w = rsw_be16_put(w, RSW_RDMAP_RV, RSW_RDMAP_VERSION);
	return rsw_be16_put(w, RSW_RDMAP_OPCODE, op);
}

/* The handlers of the table, by engine. */
enum rsw_rx_state rsw_rx_check_tagged(struct rsw_rx *rx);
enum rsw_rx_state rsw_rx_check_untagged(struct rsw_rx *rx);
enum rsw_rx_state rsw_rx_check_rreq(struct rsw_rx *rx);
enum rsw_rx_state rsw_rx_check_term(struct rsw_rx *rx);
enum rsw_rx_state rsw_rx_check_atomic_req(struct rsw_rx *rx);

bool rsw_stream_deliver_write(struct rsw_stream *s,
			      const struct rsw_rx_seg *seg,
			      struct rsw_term_cause *term);
bool rsw_stream_deliver_rreq(struct rsw_stream *s,
			     const struct rsw_rx_seg *seg,
			     struct rsw_term_cause *term);
bool rsw_stream_deliver_rresp(struct rsw_stream *s,
			      const struct rsw_rx_seg *seg,
			      struct rsw_term_cause *term);
bool rsw_stream_deliver_send(struct rsw_stream *s,
			     const struct rsw_rx_seg *seg,
			     struct rsw_term_cause *term);
bool rsw_stream_deliver_term(struct rsw_stream *s,
			     const struct rsw_rx_seg *seg,
			     struct rsw_term_cause *term);
bool rsw_stream_deliver_imm(struct rsw_stream *s,
			    const struct rsw_rx_seg *seg,
			    struct rsw_term_cause *term);
bool rsw_stream_deliver_atomic_req(struct rsw_stream *s,
				   const struct rsw_rx_seg *seg,
				   struct rsw_term_cause *term);
bool rsw_stream_deliver_atomic_resp(struct rsw_stream *s,
				    const struct rsw_rx_seg *seg,
				    struct rsw_term_cause *term);

u32 rsw_tx_hdr_tagged(struct rsw_tx *tx, struct rsw_tx_fpdu *f, u32 pos);
u32 rsw_tx_hdr_rreq(struct rsw_tx *tx, struct rsw_tx_fpdu *f, u32 pos);
u32 rsw_tx_hdr_send(struct rsw_tx *tx, struct rsw_tx_fpdu *f, u32 pos);
u32 rsw_tx_hdr_term(struct rsw_tx *tx, struct rsw_tx_fpdu *f, u32 pos);
u32 rsw_tx_hdr_imm(struct rsw_tx *tx, struct rsw_tx_fpdu *f, u32 pos);
u32 rsw_tx_hdr_atomic_req(struct rsw_tx *tx, struct rsw_tx_fpdu *f, u32 pos);
u32 rsw_tx_hdr_atomic_resp(struct rsw_tx *tx, struct rsw_tx_fpdu *f,
			   u32 pos);

#endif /* _RDMAP_SW_OPCODE_H */
