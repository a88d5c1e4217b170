// SPDX-License-Identifier: GPL-2.0
/*
 * rdmap_sw RX: where incoming FPDUs are parsed.  rsw_rx_feed() is the one
 * entry point: it turns the TCP byte stream of a connection in full
 * operation into validated DDP segments for the consumer (rx.h).
 *
 * One FPDU goes HDR -> PAYLOAD -> PAD -> CRC -> HDR.  The header is taken
 * in up to four steps, each validating what it has before asking for more,
 * so no field is used before it is checked and no header octet is read
 * past the FPDU's own ULPDU_Length:
 *
 *   4 octets     ULPDU_Length and the control word: length limit
 *   16 or 20     the DDP header (by T): versions, opcode, T, QN, ...
 *   op's length  the opcode's fixed RDMAP header (opcode.h's table)
 *   Terminate    its optional DDP and RDMA headers (by its D, R and the
 *                terminated header's own T)
 *
 * Reserved bits of the DDP and RDMAP control fields, the Invalidate STag of
 * messages without invalidation and PAD octets are ignored on receive, as
 * RFC 5040, RFC 5041 and RFC 5044 require (PAD is still covered by the
 * CRC).  Without negotiated CRC the trailer is consumed and not checked:
 * the sender fills it with zeros (RFC 5044) and nothing else is defined.
 * RDMAP version 0 (the RDMA Consortium's) is refused: only version 1 is
 * implemented.
 *
 * Where the RFCs name no code for a failure, these are used:
 *  - ULPDU_Length above the configured limit: LLP, MPA, local catastrophic
 *    (RFC 6581's 0x05): the framing cannot be trusted, no header is sent;
 *  - ULPDU too short for the headers its own control word announces:
 *    RDMAP, Remote Operation, catastrophic error localized to the stream;
 *  - T flag that contradicts the opcode: RDMAP, unexpected opcode;
 *  - payload, MO or a clear L flag on a queue 1/2 message (Read Request,
 *    Terminate: one segment holding only headers): DDP untagged, invalid
 *    MO or message too long, as for a receive buffer of length 0;
 *  - MSN behind the window: DDP untagged, MSN range invalid; MSN past it
 *    (no buffer posted yet): DDP untagged, no buffer available.
 *
 * QP access rights (the verbs' IB_QP_ACCESS_FLAGS, rsw_rx_config.qp_access)
 * gate the peer's accesses to our memory before any STag is looked at:
 *  - a Write segment with payload on a QP without IB_ACCESS_REMOTE_WRITE:
 *    DDP, tagged buffer error, STag not associated with DDP Stream.  A
 *    Write is checked by DDP (RFC 5041 section 7.2), whose tagged buffer
 *    errors have no access rights code, and RFC 5040 Figure 10 allows the
 *    RDMAP Remote Protection Error type only for Read Requests and Sends
 *    with Invalidate.  The STag may be valid and grant the right, but this
 *    stream may write into no buffer: it is the association of the STag
 *    with the stream, for this access, that is missing;
 *  - a Read Request of non-zero size on a QP without IB_ACCESS_REMOTE_READ:
 *    RDMAP, Remote Protection Error, access rights violation (RFC 5040
 *    section 7.2), with the Read Request header in the Terminate.
 * Zero-length ones read or write no octet (the RFC 6581 ready-to-receive
 * messages among them) and pass.  Atomics have no QP-level gate (iw_cm
 * never grants IB_ACCESS_REMOTE_ATOMIC to a QP).
 *
 * CRC.  Each octet is fed to CRC32c right before it is handed on (header
 * octets as they are collected, payload piece by piece just before its
 * placement), so every octet is read from the socket buffer once while it
 * is hot in the cache; a fused copy-and-CRC needs the placement to compute
 * it, which mem.c's copy helpers do not offer yet.
 */
#include <linux/skbuff.h>

#include "internal.h"
#include "fpdu.h"

/* A chunk of the stream still to be parsed. */
struct rsw_rx_in {
	const u8 *p;
	size_t len;
};

static const char * const rsw_rx_state_names[RSW_RX_NSTATES] = {
	[RSW_RX_HDR]		= "HDR",
	[RSW_RX_PAYLOAD]	= "PAYLOAD",
	[RSW_RX_PAD]		= "PAD",
	[RSW_RX_CRC]		= "CRC",
	[RSW_RX_ERROR]		= "ERROR",
};

const char *rsw_rx_state_name(enum rsw_rx_state s)
{
	return s < RSW_RX_NSTATES ? rsw_rx_state_names[s] : "?";
}
EXPORT_SYMBOL_IF_KUNIT(rsw_rx_state_name);

/* -------------------------------------------------------------------------
 * Errors.
 */

/* Stop the stream with cause @c: the parts to include, then ops->stop. */
static enum rsw_rx_state rsw_rx_stop(struct rsw_rx *rx,
				     const struct rsw_term_cause *c)
{
	rx->term = (struct rsw_rx_term){ .cause = *c };
	rsw_term_parts(&rx->term, rx->ddp_hdr,
		       rx->seg_valid && rx->seg.opcode == RSW_OP_READ_REQ);
	rx->ops->stop(rx->ctx, rx->seg_valid ? &rx->seg : NULL, &rx->term);
	return RSW_RX_ERROR;
}

static enum rsw_rx_state rsw_rx_fail(struct rsw_rx *rx, u8 layer, u8 etype,
				     u8 ecode)
{
	struct rsw_term_cause c = RSW_TERM_CAUSE(layer, etype, ecode);

	return rsw_rx_stop(rx, &c);
}

static enum rsw_rx_state rsw_rx_fail_mpa(struct rsw_rx *rx, u8 ecode)
{
	return rsw_rx_fail(rx, RSW_TERM_LAYER_LLP, RSW_LLP_ET_MPA, ecode);
}

static enum rsw_rx_state rsw_rx_fail_rdmap(struct rsw_rx *rx, u8 ecode)
{
	return rsw_rx_fail(rx, RSW_TERM_LAYER_RDMAP, RSW_RDMAP_ET_REMOTE_OP,
			   ecode);
}

static enum rsw_rx_state rsw_rx_fail_untagged(struct rsw_rx *rx, u8 ecode)
{
	return rsw_rx_fail(rx, RSW_TERM_LAYER_DDP, RSW_DDP_ET_UNTAGGED, ecode);
}

/* -------------------------------------------------------------------------
 * Header.
 */

/* Does the QP grant the peer @right (IB_ACCESS_REMOTE_*) right now? */
static bool rsw_rx_qp_grants(const struct rsw_rx *rx, u32 right)
{
	return !rx->cfg.qp_access || READ_ONCE(*rx->cfg.qp_access) & right;
}

/* ULPDU_Length + 2: the octets from ULPDU_Length to the end of the ULPDU. */
static u32 rsw_rx_ulpdu_end(const struct rsw_rx *rx)
{
	return RSW_MPA_HDR_LEN + rsw_mpa_len(&rx->hdr.c);
}

/*
 * Ask for @want header octets in all.  A ULPDU too short to hold them is an
 * RDMAP stream error: the peer's framing and its headers disagree.
 */
static enum rsw_rx_state rsw_rx_want(struct rsw_rx *rx, u32 want)
{
	if (want > rsw_rx_ulpdu_end(rx))
		return rsw_rx_fail_rdmap(rx, RSW_RDMAP_EC_CATASTROPHIC_STREAM);
	rx->want = want;
	return RSW_RX_HDR;
}

/* The first 4 octets: ULPDU_Length against the negotiated limit. */
static enum rsw_rx_state rsw_rx_check_ctrl(struct rsw_rx *rx)
{
	if (rsw_mpa_len(&rx->hdr.c) > rx->cfg.max_ulpdu)
		return rsw_rx_fail_mpa(rx, RSW_MPA_EC_CATASTROPHIC);
	return rsw_rx_want(rx, RSW_MPA_HDR_LEN +
			   rsw_ddp_hdr_len(rsw_ddp_tagged(&rx->hdr.c)));
}

/* The DDP header is in: versions, opcode and its T flag. */
static enum rsw_rx_state rsw_rx_check_ddp(struct rsw_rx *rx)
{
	const struct rsw_ctrl *c = &rx->hdr.c;
	bool tagged = rsw_ddp_tagged(c);
	u8 opcode = rsw_rdmap_opcode(c);

	rx->ddp_hdr = true;
	if (rsw_ddp_version(c) != RSW_DDP_VERSION)
		return rsw_rx_fail(rx, RSW_TERM_LAYER_DDP,
				   tagged ? RSW_DDP_ET_TAGGED :
					    RSW_DDP_ET_UNTAGGED,
				   tagged ? RSW_DDP_EC_T_VERSION :
					    RSW_DDP_EC_U_VERSION);
	if (rsw_rdmap_version(c) != RSW_RDMAP_VERSION)
		return rsw_rx_fail_rdmap(rx, RSW_RDMAP_EC_VERSION);
	rx->op = rsw_rdmap_op(opcode);
	if (!rx->op || !rx->op->rx_check || rx->op->tagged != tagged) {
		rx->op = NULL;
		return rsw_rx_fail_rdmap(rx, RSW_RDMAP_EC_OPCODE);
	}
	return rsw_rx_want(rx, rx->op->hdr_len);
}

/* Fill the parts of rx->seg common to both models; @hdr_len is final. */
static void rsw_rx_seg_init(struct rsw_rx *rx, u32 hdr_len)
{
	struct rsw_rx_seg *seg = &rx->seg;

	memset(seg, 0, sizeof(*seg));
	seg->hdr = &rx->hdr;
	seg->opcode = rsw_rdmap_opcode(&rx->hdr.c);
	seg->tagged = rx->op->tagged;
	seg->last = rsw_ddp_last(&rx->hdr.c);
	seg->consumes_rq = rx->op->consumes_rq;
	seg->ulpdu_len = rsw_mpa_len(&rx->hdr.c);
	seg->payload_len = rsw_rx_ulpdu_end(rx) - hdr_len;
}

/* Where the segment's payload, if any, begins. */
static enum rsw_rx_state rsw_rx_hdr_done(struct rsw_rx *rx)
{
	rx->seg_valid = true;
	rx->done = 0;
	return rx->seg.payload_len ? RSW_RX_PAYLOAD : RSW_RX_PAD;
}

/*
 * Tagged (Write, Read Response): the STag, TO and length are the
 * consumer's to check at placement; a zero-length segment places nothing.
 */
enum rsw_rx_state rsw_rx_check_tagged(struct rsw_rx *rx)
{
	const struct rsw_ddp_tagged *t = &rx->hdr.tagged;

	rsw_rx_seg_init(rx, rx->want);
	rx->seg.stag = be32_to_cpu(t->stag);
	rx->seg.to = be64_to_cpu(t->to);
	if (rx->seg.opcode == RSW_OP_WRITE && rx->seg.payload_len &&
	    !rsw_rx_qp_grants(rx, IB_ACCESS_REMOTE_WRITE))
		return rsw_rx_fail(rx, RSW_TERM_LAYER_DDP, RSW_DDP_ET_TAGGED,
				   RSW_DDP_EC_T_STAG_NOT_ASSOC);
	return rsw_rx_hdr_done(rx);
}

/*
 * Untagged: QN of the opcode, MSN inside the consumer's window, MO and
 * length inside the buffer.  An MSN past the window has no buffer (yet); one
 * before it (2^31 back, serial number arithmetic) is out of range.  An
 * opcode without payload has a buffer of length 0 and is one segment (L
 * set): anything more is too long for it.
 */
static enum rsw_rx_state rsw_rx_untagged_window(struct rsw_rx *rx)
{
	struct rsw_rx_seg *seg = &rx->seg;
	struct rsw_rx_window w = {};
	u32 ahead;

	if (seg->qn != rx->op->qn)
		return rsw_rx_fail_untagged(rx, RSW_DDP_EC_U_INVALID_QN);
	rx->ops->window(rx->ctx, seg->qn, seg->msn, &w);
	ahead = seg->msn - w.msn;
	if (ahead >= w.count)
		return rsw_rx_fail_untagged(rx, ahead < BIT(31) ?
					    RSW_DDP_EC_U_MSN_NO_BUF :
					    RSW_DDP_EC_U_MSN_RANGE);
	if (!rx->op->payload)
		w.len = 0;
	if (seg->mo > w.len)
		return rsw_rx_fail_untagged(rx, RSW_DDP_EC_U_INVALID_MO);
	if (seg->payload_len > w.len - seg->mo ||
	    (!rx->op->payload && !seg->last))
		return rsw_rx_fail_untagged(rx, RSW_DDP_EC_U_TOO_LONG);
	return rsw_rx_hdr_done(rx);
}

enum rsw_rx_state rsw_rx_check_untagged(struct rsw_rx *rx)
{
	const struct rsw_ddp_untagged *u = &rx->hdr.untagged;
	u32 qn = be32_to_cpu(u->qn);

	rsw_rx_seg_init(rx, rx->want);
	/* QN is 32 bits on the wire; anything above u8 is invalid anyway. */
	rx->seg.qn = qn < RSW_QN_NUM ? qn : RSW_QN_NUM;
	rx->seg.msn = be32_to_cpu(u->msn);
	rx->seg.mo = be32_to_cpu(u->mo);
	if (rx->op->inval)
		rx->seg.inval_stag = be32_to_cpu(u->inval_stag);
	return rsw_rx_untagged_window(rx);
}

/* A Read Request: the DDP checks, then the QP's remote read right. */
enum rsw_rx_state rsw_rx_check_rreq(struct rsw_rx *rx)
{
	enum rsw_rx_state next = rsw_rx_check_untagged(rx);

	if (next == RSW_RX_ERROR || !rx->hdr.rreq.rreq.read_size ||
	    rsw_rx_qp_grants(rx, IB_ACCESS_REMOTE_READ))
		return next;
	return rsw_rx_fail(rx, RSW_TERM_LAYER_RDMAP, RSW_RDMAP_ET_REMOTE_PROT,
			   RSW_RDMAP_EC_ACCESS);
}

/*
 * An Atomic Request: the DDP checks, then RFC 7306 section 8.2's: a target
 * that is not 64-bit aligned is a catastrophic error of the stream, and so
 * is a reserved AOpCode (no code fits better).  No QP-level right: iw_cm
 * never grants IB_ACCESS_REMOTE_ATOMIC to a QP; the MR's is checked when
 * the request is executed.
 */
enum rsw_rx_state rsw_rx_check_atomic_req(struct rsw_rx *rx)
{
	const struct rsw_rdmap_atomic_req *a = &rx->hdr.atomic_req.atomic;
	enum rsw_rx_state next = rsw_rx_check_untagged(rx);

	if (next == RSW_RX_ERROR)
		return next;
	if (!IS_ALIGNED(be64_to_cpu(a->to), sizeof(u64)) ||
	    rsw_atomic_op(a) >= RSW_ATOMIC_NUM)
		return rsw_rx_fail_rdmap(rx, RSW_RDMAP_EC_CATASTROPHIC_STREAM);
	return next;
}

/*
 * Terminate: its optional parts make the header longer.  With D, the
 * terminated DDP header's own T flag (two octets into it) says how long it
 * is, so that control word is fetched first.
 */
enum rsw_rx_state rsw_rx_check_term(struct rsw_rx *rx)
{
	const struct rsw_rdmap_term *t = &rx->hdr.term.term;
	u32 fixed = sizeof(struct rsw_hdr_term);
	const struct rsw_ctrl *inner;
	u32 len;

	if (rsw_term_d(t) && rx->have < fixed + sizeof(*inner))
		return rsw_rx_want(rx, fixed + sizeof(*inner));
	inner = (const struct rsw_ctrl *)(rx->hdr_octets + fixed);
	len = sizeof(struct rsw_ddp_untagged) +
	      rsw_term_hdr_len(rsw_term_d(t),
			       rsw_term_d(t) && rsw_ddp_tagged(inner),
			       rsw_term_r(t));
	if (rx->have < len)
		return rsw_rx_want(rx, len);
	return rsw_rx_check_untagged(rx);
}

/* Which check the header octets collected so far call for. */
static enum rsw_rx_state rsw_rx_hdr_check(struct rsw_rx *rx)
{
	if (rx->have == sizeof(struct rsw_ctrl))
		return rsw_rx_check_ctrl(rx);
	if (!rx->op) {
		enum rsw_rx_state next = rsw_rx_check_ddp(rx);

		if (next != RSW_RX_HDR || rx->have < rx->want)
			return next;
	}
	return rx->op->rx_check(rx);
}

/* Take up to @max octets of @in into @dst, CRC included; returns taken. */
static u32 rsw_rx_take(struct rsw_rx *rx, struct rsw_rx_in *in, void *dst,
		       u32 max)
{
	u32 n = min_t(size_t, max, in->len);

	if (dst)
		memcpy(dst, in->p, n);
	if (rx->cfg.crc)
		rx->crc = rsw_mpa_crc_update(rx->crc, in->p, n);
	in->p += n;
	in->len -= n;
	return n;
}

static enum rsw_rx_state rsw_rx_hdr(struct rsw_rx *rx, struct rsw_rx_in *in)
{
	rx->have += rsw_rx_take(rx, in, rx->hdr_octets + rx->have,
				rx->want - rx->have);
	if (rx->have < rx->want)
		return RSW_RX_HDR;
	return rsw_rx_hdr_check(rx);
}

/* -------------------------------------------------------------------------
 * Payload, PAD, CRC.
 */
static enum rsw_rx_state rsw_rx_payload(struct rsw_rx *rx,
					struct rsw_rx_in *in)
{
	const struct rsw_rx_seg *seg = &rx->seg;
	struct rsw_term_cause term = {};
	const u8 *p = in->p;
	u32 n = rsw_rx_take(rx, in, NULL, seg->payload_len - rx->done);
	bool ok;

	if (seg->tagged)
		ok = rx->ops->place_tagged(rx->ctx, seg, seg->to + rx->done,
					   p, n, &term);
	else
		ok = rx->ops->place_untagged(rx->ctx, seg, seg->mo + rx->done,
					     p, n, &term);
	if (!ok)
		return rsw_rx_stop(rx, &term);
	rx->done += n;
	if (rx->done < seg->payload_len)
		return RSW_RX_PAYLOAD;
	rx->done = 0;
	return RSW_RX_PAD;
}

static enum rsw_rx_state rsw_rx_pad(struct rsw_rx *rx, struct rsw_rx_in *in)
{
	u32 pad = rsw_mpa_pad(rx->seg.ulpdu_len);

	rx->done += rsw_rx_take(rx, in, NULL, pad - rx->done);
	if (rx->done < pad)
		return RSW_RX_PAD;
	rx->have = 0;
	return RSW_RX_CRC;
}

/* Ready for the next FPDU's first octet. */
static void rsw_rx_next_fpdu(struct rsw_rx *rx)
{
	rx->have = 0;
	rx->want = sizeof(struct rsw_ctrl);
	rx->done = 0;
	rx->crc = rsw_mpa_crc_init();
	rx->ddp_hdr = false;
	rx->seg_valid = false;
	rx->op = NULL;
}

static enum rsw_rx_state rsw_rx_crc(struct rsw_rx *rx, struct rsw_rx_in *in)
{
	struct rsw_term_cause term = {};
	u32 n = min_t(size_t, RSW_MPA_CRC_LEN - rx->have, in->len);
	__le32 wire;

	memcpy(rx->trailer + rx->have, in->p, n);
	in->p += n;
	in->len -= n;
	rx->have += n;
	if (rx->have < RSW_MPA_CRC_LEN)
		return RSW_RX_CRC;
	memcpy(&wire, rx->trailer, sizeof(wire));
	if (rx->cfg.crc && wire != rsw_mpa_crc_final(rx->crc))
		return rsw_rx_fail_mpa(rx, RSW_MPA_EC_CRC);
	if (!rx->ops->seg_done(rx->ctx, &rx->seg, &term))
		return rsw_rx_stop(rx, &term);
	rsw_rx_next_fpdu(rx);
	return RSW_RX_HDR;
}

/* Stopped: nothing more is parsed; rsw_rx_feed() never calls this. */
static enum rsw_rx_state rsw_rx_error(struct rsw_rx *rx, struct rsw_rx_in *in)
{
	return RSW_RX_ERROR;
}

typedef enum rsw_rx_state (*rsw_rx_state_fn)(struct rsw_rx *rx,
					     struct rsw_rx_in *in);

static const rsw_rx_state_fn rsw_rx_states[RSW_RX_NSTATES] = {
	[RSW_RX_HDR]		= rsw_rx_hdr,
	[RSW_RX_PAYLOAD]	= rsw_rx_payload,
	[RSW_RX_PAD]		= rsw_rx_pad,
	[RSW_RX_CRC]		= rsw_rx_crc,
	[RSW_RX_ERROR]		= rsw_rx_error,
};

/* -------------------------------------------------------------------------
 * MPA Markers (RFC 5044 section 5), taken out of the stream before the
 * states above see it.  rx->off counts every octet since the first FPDU of
 * full operation, where the first Marker sits; a Marker occupies the four
 * octets at each multiple of 512.  Each one is checked (section 4, the
 * Marker format: the two low bits of FPDUPTR count as zero, the reserved
 * field is ignored) and fed to the CRC of the FPDU it belongs to, which is the one whose octets
 * follow it: at an FPDU boundary that is the next FPDU, whose CRC was just
 * restarted.  A Marker that designates anything but the ULPDU_Length field
 * of that FPDU stops the stream: LLP, MPA, Marker and ULPDU_Length
 * mismatch (0x03).
 */

/* At an FPDU boundary: the next octet is an FPDU's first. */
static bool rsw_rx_at_boundary(const struct rsw_rx *rx)
{
	return rx->state == RSW_RX_HDR && !rx->have;
}

static enum rsw_rx_state rsw_rx_marker(struct rsw_rx *rx,
				       struct rsw_rx_in *in)
{
	u32 n = min_t(size_t, RSW_MPA_MARKER_LEN - rx->mk_have, in->len);
	u32 moff, hdr;
	u16 ptr;

	memcpy(rx->mk + rx->mk_have, in->p, n);
	rsw_rx_take(rx, in, NULL, n);
	rx->mk_have += n;
	rx->off += n;
	if (rx->mk_have < RSW_MPA_MARKER_LEN)
		return rx->state;
	rx->mk_have = 0;
	moff = rx->off - RSW_MPA_MARKER_LEN;
	ptr = rx->mk[2] << 8 | rx->mk[3];
	/* At a boundary the Marker is the next FPDU's: FPDUPTR 0. */
	hdr = rsw_rx_at_boundary(rx) ? rx->off : rx->hdr_off;
	if (rsw_mpa_marker_hdr(moff, ptr) != hdr)
		return rsw_rx_fail_mpa(rx, RSW_MPA_EC_MARKER);
	return rx->state;
}

/* The parser over @in up to the next Marker position, keeping rx->off. */
static void rsw_rx_run_to_marker(struct rsw_rx *rx, struct rsw_rx_in *in)
{
	u32 gap = rsw_mpa_next_marker(rx->off);
	struct rsw_rx_in run = { .p = in->p, .len = min_t(size_t, in->len, gap) };
	size_t used;

	while (run.len && rx->state != RSW_RX_ERROR && !rx->paused) {
		if (rsw_rx_at_boundary(rx))
			rx->hdr_off = rx->off + (run.p - in->p);
		rx->state = rsw_rx_states[rx->state](rx, &run);
	}
	used = run.p - in->p;
	rx->off += used;
	in->p += used;
	in->len -= used;
}

static size_t rsw_rx_feed_marked(struct rsw_rx *rx, struct rsw_rx_in *in)
{
	size_t len = in->len;

	while (in->len && rx->state != RSW_RX_ERROR && !rx->paused) {
		if (rx->mk_have || !rsw_mpa_next_marker(rx->off))
			rx->state = rsw_rx_marker(rx, in);
		else
			rsw_rx_run_to_marker(rx, in);
	}
	return len - in->len;
}

/* -------------------------------------------------------------------------
 * Entry points.
 */
int rsw_rx_init(struct rsw_rx *rx, const struct rsw_rx_config *cfg,
		const struct rsw_rx_ops *ops, void *ctx)
{
	if (cfg->max_ulpdu < RSW_HDR_MAX_LEN)
		return -EINVAL;
	memset(rx, 0, sizeof(*rx));
	rx->cfg = *cfg;
	rx->ops = ops;
	rx->ctx = ctx;
	rsw_rx_next_fpdu(rx);
	rx->state = RSW_RX_HDR;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_rx_init);

size_t rsw_rx_feed(struct rsw_rx *rx, const u8 *data, size_t len)
{
	struct rsw_rx_in in = { .p = data, .len = len };

	if (unlikely(rx->cfg.markers))
		return rsw_rx_feed_marked(rx, &in);
	while (in.len && rx->state != RSW_RX_ERROR && !rx->paused)
		rx->state = rsw_rx_states[rx->state](rx, &in);
	return len - in.len;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_rx_feed);

void rsw_rx_pause(struct rsw_rx *rx)
{
	rx->paused = true;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_rx_pause);

void rsw_rx_resume(struct rsw_rx *rx)
{
	rx->paused = false;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_rx_resume);

bool rsw_rx_paused(const struct rsw_rx *rx)
{
	return rx->paused;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_rx_paused);

/*
 * The same over [@off, @off + @len) of @skb, linear part, page fragments and
 * frag_list alike, as a tcp_read_sock() actor sees it.  Fragments are
 * mapped one at a time (atomically) while the parser runs on them.  The
 * loop ends when skb_seq_read() finds the range used up, which also
 * unmaps the last fragment; stopping early needs skb_abort_seq_read().
 */
size_t rsw_rx_feed_skb(struct rsw_rx *rx, struct sk_buff *skb,
		       unsigned int off, size_t len)
{
	struct skb_seq_state st;
	const u8 *p;
	size_t used = 0, got;
	unsigned int n;

	skb_prepare_seq_read(skb, off, off + len, &st);
	while ((n = skb_seq_read(used, &p, &st))) {
		/* A block may run past off + len: skb_seq_read() does not cut. */
		n = min_t(size_t, n, len - used);
		got = rsw_rx_feed(rx, p, n);
		used += got;
		if (got < n) {
			skb_abort_seq_read(&st);
			break;
		}
	}
	return used;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_rx_feed_skb);

bool rsw_rx_eof(struct rsw_rx *rx)
{
	if (rx->state == RSW_RX_ERROR)
		return false;
	if (rsw_rx_at_boundary(rx) && !rx->mk_have)
		return true;
	rx->state = rsw_rx_fail_mpa(rx, RSW_MPA_EC_TCP_LOST);
	return false;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_rx_eof);

const struct rsw_rx_term *rsw_rx_stopped(const struct rsw_rx *rx)
{
	return rx->state == RSW_RX_ERROR ? &rx->term : NULL;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_rx_stopped);
