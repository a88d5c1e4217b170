/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmap_sw: the receive stream parser of one connection in full operation
 * (after the MPA exchange): TCP octets in, validated DDP segments out.  The
 * functions are declared in internal.h (rx.c group); this header holds the
 * types the consumer (the QP's placement glue) implements and sees.
 *
 * The parser is a state machine fed with arbitrary chunks of the stream
 * (rsw_rx_feed()), as tcp_read_sock() hands them out in the socket's
 * data-ready path.  It never sleeps, never allocates and never buffers
 * payload: it keeps at most one FPDU header and the CRC trailer, and hands
 * each piece of payload to the consumer as it arrives.
 *
 * A segment goes through these calls, in this order:
 *
 *   window()                    untagged only, once its header is complete:
 *                               the parser checks QN, MSN and MO + length
 *   place_tagged()/_untagged()  zero or more times, in payload order, with
 *                               pieces that together cover the payload once
 *   seg_done()                  after PAD and CRC were checked: the segment
 *                               is valid and may be delivered/completed
 *
 * or, at the first error, one stop() and nothing more, ever.  Placement is
 * not delivery: payload placed before a CRC error (or any later error) has
 * been written to memory the peer was entitled to write, but the segment
 * is never reported by seg_done(), so the consumer must not complete work
 * for it (RFC 5041 section 7: data is Delivered only with a valid segment).
 *
 * MPA Markers (RFC 5044 section 5), when the peer sends them, never reach
 * the states above: rsw_rx_feed() cuts the input at every Marker position,
 * takes the Marker out, checks its FPDUPTR against where the current FPDU
 * began and feeds it to the CRC, and hands the parser only FPDU octets.
 *
 * seg_done() may pause the parser (rsw_rx_pause()): it then consumes
 * nothing after that segment until the consumer resumes it, so a delivery
 * that has to sleep can finish out of the parser's context, in order,
 * before the next segment is looked at.
 */
#ifndef _RDMAP_SW_RX_H
#define _RDMAP_SW_RX_H

#include <linux/types.h>

#include "wire.h"

/* The parser's states; rsw_rx_state_name() has their names. */
enum rsw_rx_state {
	RSW_RX_HDR,		/* MPA length, DDP/RDMAP control, fixed headers */
	RSW_RX_PAYLOAD,		/* ULP payload, handed to the consumer */
	RSW_RX_PAD,		/* 0..3 PAD octets */
	RSW_RX_CRC,		/* 4-octet MPA CRC trailer */
	RSW_RX_ERROR,		/* stopped: every further octet is ignored */
	RSW_RX_NSTATES,
};

/*
 * Terminate reason (RFC 5040 section 7) of a failed stream: layer, error
 * type and code (wire.h values), and which headers of the offending
 * segment the Terminate message carries (M and D bits: segment length and
 * DDP header; R bit: the RDMA Read Request header).  The parser fills the
 * header flags; a consumer refusing an access fills layer/etype/ecode only.
 * The octets to copy into the Terminate are rsw_rx.hdr_octets: from
 * ULPDU_Length (the DDP Segment Length) through the DDP header, and the
 * Read Request header right after an untagged one (rsw_hdr_rreq layout).
 */
struct rsw_rx_term {
	struct rsw_term_cause cause;
	bool ddp_hdr;
	bool rdma_hdr;
};

/*
 * Which parts of the offending segment a Terminate for @t->cause carries
 * (Documentation/design.rst, "Terminate headers"), found by RX or when a
 * Read or Atomic Response is made:
 *  - LLP (MPA) errors: none, the framing itself is in doubt (Figure 10);
 *  - DDP errors: segment length and DDP header (Figure 10), also on a
 *    Read Request (rule 3 speaks of a Request DDP delivered);
 *  - RDMAP errors, Local Catastrophic ones too: segment length and DDP
 *    header, and on a Read Request its header too (RFC 5040 section 7.1
 *    rules 2 and 3, RFC 7306 section 8.1 rule 2: an error found on an
 *    incoming message, even our own buffer failing while it is placed;
 *    where Figure 10 says a Remote Operation or Local Catastrophic error
 *    carries less, the rules' MUST wins).  A Local Catastrophic error not
 *    found on an incoming message (rule 1) never comes here: its
 *    Terminate carries no header.
 * @ddp: the DDP header was read whole; @rreq: the segment is a Read
 * Request whose header was read and accepted by DDP.
 */
static inline void rsw_term_parts(struct rsw_rx_term *t, bool ddp, bool rreq)
{
	const struct rsw_term_cause *c = &t->cause;

	t->ddp_hdr = ddp && c->layer != RSW_TERM_LAYER_LLP;
	t->rdma_hdr = t->ddp_hdr && c->layer == RSW_TERM_LAYER_RDMAP && rreq;
}

/*
 * A segment whose header passed every check.  @hdr is the FPDU header from
 * the ULPDU_Length field on (Read Request fields: hdr->rreq.rreq; Terminate:
 * hdr->term and its optional parts) and is valid only during the callback.
 */
struct rsw_rx_seg {
	const union rsw_hdr *hdr;
	u8 opcode;		/* enum rsw_rdmap_opcode */
	bool tagged;
	bool last;		/* DDP L flag: last segment of its message */
	bool consumes_rq;	/* completes a posted receive (Send types) */
	u16 ulpdu_len;		/* MPA ULPDU_Length */
	u32 payload_len;	/* octets after the fixed headers */
	/* Tagged segments. */
	u32 stag;
	u64 to;
	/* Untagged segments. */
	u8 qn;
	u32 msn;
	u32 mo;
	u32 inval_stag;		/* Send with (SE and) Invalidate only */
};

/*
 * Posted buffers of one untagged queue, as the consumer reports them: the
 * MSNs [msn, msn + count) have a buffer (Send queue: posted receives;
 * Read Request queue: free IRD slots; Terminate queue: normally one).
 * @len is the length of the buffer for the MSN asked about, when inside.
 */
struct rsw_rx_window {
	u32 msn;
	u32 count;
	u64 len;
};

/*
 * The consumer: the QP's placement and delivery glue.  Every callback runs
 * in the context rsw_rx_feed() was called in (the socket's data-ready path,
 * softirq, socket lock held): none may sleep.  A callback returning false
 * stops the stream with the reason it put in @term (layer, etype, ecode).
 */
struct rsw_rx_ops {
	/* The window of untagged queue @qn, with the buffer of @msn. */
	void (*window)(void *ctx, u8 qn, u32 msn, struct rsw_rx_window *w);
	/*
	 * @len payload octets for [@to, @to + @len) of @seg->stag (tagged
	 * model, RFC 5041 section 7.2: STag, bounds, wrap and access are the
	 * consumer's to check, e.g. rsw_mr_get() + rsw_mr_copy_to() mapped by
	 * rsw_mr_err_to_term(..., RSW_MR_USE_TAGGED)).  Never called with 0.
	 */
	bool (*place_tagged)(void *ctx, const struct rsw_rx_seg *seg, u64 to,
			     const void *data, u32 len, struct rsw_term_cause *term);
	/* @len payload octets at message offset @mo of (@seg->qn, ->msn). */
	bool (*place_untagged)(void *ctx, const struct rsw_rx_seg *seg, u32 mo,
			       const void *data, u32 len,
			       struct rsw_term_cause *term);
	/*
	 * @seg arrived whole and valid.  The consumer completes it (L set) or
	 * records progress, and may refuse it for a reason only it can check
	 * (Invalidate STag, Read Request source STag, ...).
	 */
	bool (*seg_done)(void *ctx, const struct rsw_rx_seg *seg,
			 struct rsw_term_cause *term);
	/*
	 * The stream stopped with @term.  @seg is the segment in progress
	 * whose header had been accepted (some payload may have been placed;
	 * none of it is valid), or NULL.  Called exactly once.
	 */
	void (*stop)(void *ctx, const struct rsw_rx_seg *seg,
		     const struct rsw_rx_term *term);
};

/* Negotiated parameters of the stream. */
struct rsw_rx_config {
	bool crc;		/* MPA CRC negotiated: check every trailer */
	bool markers;		/* the peer sends MPA Markers: strip them */
	u16 max_ulpdu;		/* longest ULPDU accepted (MPA/LLP error above) */
	/*
	 * The QP's IB_QP_ACCESS_FLAGS (rsw_qp.access), read at every Write
	 * and Read Request header, since modify_qp may change them at any
	 * time; NULL grants every right (a parser without a QP).
	 */
	const u32 *qp_access;
};

struct rsw_rdmap_op;

/* Parser state of one stream; owned by the QP, serialised by its caller. */
struct rsw_rx {
	enum rsw_rx_state state;
	struct rsw_rx_config cfg;
	const struct rsw_rx_ops *ops;
	void *ctx;

	u32 have;		/* header or trailer octets collected */
	u32 want;		/* header octets needed so far */
	u32 done;		/* payload or PAD octets consumed */
	u32 crc;		/* running CRC32c of the FPDU */
	/* With Markers (cfg.markers) only: */
	u32 off;		/* stream offset of the next octet */
	u32 hdr_off;		/* stream offset of the FPDU's ULPDU_Length */
	u32 mk_have;		/* octets of the Marker being collected */
	u8 mk[RSW_MPA_MARKER_LEN];
	bool ddp_hdr;		/* the DDP header is complete in hdr */
	bool seg_valid;		/* header accepted: seg describes it */
	bool paused;		/* rsw_rx_pause() until rsw_rx_resume() */
	const struct rsw_rdmap_op *op;	/* row of the opcode, once checked */
	struct rsw_rx_seg seg;
	struct rsw_rx_term term;
	u8 trailer[RSW_MPA_CRC_LEN];
	union {
		union rsw_hdr hdr;
		u8 hdr_octets[RSW_HDR_MAX_LEN];
	};
};

#endif /* _RDMAP_SW_RX_H */
