// SPDX-License-Identifier: GPL-2.0
/*
 * rdmap_sw: MPA connection setup (RFC 5044 section 7.1, RFC 6581) without
 * sockets: frame builder, incremental frame parser, negotiation.
 *
 * Rules applied, with where they come from:
 *  - Key: a responder accepts only "MPA ID Req Frame", an initiator only
 *    "MPA ID Rep Frame"; anything else closes the connection (RFC 5044
 *    7.1.1, 7.1.2 rule 5).  The other role's key is reported apart
 *    (RSW_MPA_E_KEY_ROLE): it is the Initiator/Initiator or
 *    Responder/Responder startup of 7.1.2 rule 8.
 *  - Rev: a responder accepts 1 and 2 and answers with the lower of the
 *    request's and its own; an initiator accepts a Reply revision from 1 up
 *    to the one it offered (a revision 1 Reply means the responder does not
 *    do RFC 6581).  0 (pre-RFC RDMAC) and anything above 2 close the
 *    connection (7.1.1 Rev: "cannot interoperate ... MUST close").
 *  - PD_Length above 512 closes the connection before any private data is
 *    read (7.1.1 PD_Length, 7.1.2 rule 9).
 *  - Res bits are "not checked on reception" (7.1.1 Res), nor is R in a
 *    Request (7.1.1 R).  In a revision 1 frame the RFC 6581 bit is one of
 *    the Res bits and is ignored the same way.
 *  - C: CRC is on if either frame has C set (7.1.1 C).  A responder
 *    echoes the result in its Reply's C.  An initiator whose policy
 *    requires CRC refuses a Reply that does not (RSW_MPA_E_CRC): that
 *    responder breaks the rule and may send FPDUs without it.
 *  - M (7.1.1 M): set by the sender of a frame to require Markers in the
 *    FPDUs it receives; each direction is decided alone.  A Request's M
 *    makes the responder send Markers, a Reply's M the initiator.  We set
 *    M when the local policy asks for Markers (the device's mpa_markers
 *    setting), in Requests and in Replies alike, and honour a peer's M
 *    in both MPA revisions (RFC 6581 leaves M as it is); a Reject frame
 *    carries no M.  conn.tx_markers is the peer's M, conn.rx_markers ours.
 *
 * Markers, once in full operation (RFC 5044 sections 4 and 5; the
 * framing itself is in fpdu.h, rx.c and tx.c/tx_sock.c):
 *  - a Marker is 4 octets, 16 reserved bits (zero when sent, ignored on
 *    receive except by the CRC) and the 16-bit FPDUPTR, whose two low bits
 *    are zero when sent and taken as zero on receive;
 *  - the first Marker goes immediately before the first FPDU of full
 *    operation (stream offset 0 of each direction: the first octet after
 *    its sender's Request or Reply) and one every 512 octets of the TCP
 *    stream after it, wherever that falls: before an FPDU's ULPDU_Length,
 *    inside the header or payload, in PAD or between PAD and CRC (FPDUs
 *    start at multiples of 4, so never inside the CRC);
 *  - FPDUPTR is the number of octets from the FPDU's ULPDU_Length back to
 *    the Marker; a Marker right before an FPDU has FPDUPTR 0 and belongs to
 *    that FPDU;
 *  - Markers do not count in ULPDU_Length and do not change PAD (which
 *    aligns ULPDU_Length + ULPDU only); the CRC covers every octet of the
 *    FPDU before the CRC field, its Markers included (a leading one too);
 *  - MULPDU with Markers leaves room for the most Markers an FPDU of EMSS
 *    octets can hold (section 7.1 / fpdu.h rsw_mpa_mulpdu());
 *  - a Marker whose FPDUPTR does not lead to the current FPDU's
 *    ULPDU_Length stops the stream with a Terminate: LLP layer, MPA error,
 *    "Marker and ULPDU Length field mismatch" (0x03), and the QP goes to
 *    ERROR like on any other MPA error.
 *  - RFC 6581 data: in a revision 2 frame with the enhanced bit, the first
 *    four octets of the private data are P2P|Send RTR|IRD, Write RTR|Read
 *    RTR|ORD and count in PD_Length; a frame that sets the bit with fewer
 *    octets is malformed.  We send it in every revision 2 Request, and in a
 *    Reply exactly when the Request had it.  A revision 2 Reply without it
 *    is accepted as "no RFC 6581 exchange".
 *  - IRD/ORD: the responder's ORD is at most the initiator's IRD (it must
 *    not overrun the initiator's inbound read queue); it announces its own
 *    IRD unchanged.  The initiator fails with "insufficient IRD" if the
 *    Reply's ORD exceeds its IRD and lowers its ORD to the Reply's IRD.
 *  - Peer-to-peer: the initiator offers every RTR type it can send (Read
 *    only with ORD >= 1, as a zero-length Read uses an ORD slot); the
 *    responder must echo P2P (RFC 6581 section 9.2: "If Control Flag A is
 *    1 in the MPA Request message, then the responder MUST set Control Flag
 *    A to 1 in the MPA reply message") with exactly one offered type it
 *    accepts, preferring the type the device's rtr_prefer names if
 *    offered, else Write (no reply, no receive consumed), then Read
 *    if its IRD is at least 1, then Send, then Read anyway, raising its
 *    IRD to 1 for the connection (what hardware does for cxgb4's default
 *    Read-only offer; the Reply and the ULP both see IRD 1); with none in
 *    common it rejects ("no matching RTR option").  An initiator fails the same way on a Reply
 *    that drops P2P, picks no or several types, one not offered, or sets
 *    P2P unasked.
 *
 * Everything here is a pure function of its arguments (and the caller's
 * rsw_mpa_rx): no allocation, no locks, no sleeping; any context.
 */
#include <linux/bitops.h>
#include <linux/errno.h>
#include <linux/minmax.h>
#include <linux/string.h>

#include "internal.h"

static const struct rsw_mpa_reason_info rsw_mpa_reasons[RSW_MPA_E_NUM] = {
	[RSW_MPA_OK] = { "ok", 0, 0, false, false, RSW_STAT_NONE },
	[RSW_MPA_E_CLOSED] = { "stream closed before the frame",
			       -ECONNRESET, RSW_MPA_EC_TCP_LOST, false, false,
			       RSW_STAT_MPA_E_CLOSED },
	[RSW_MPA_E_TRUNCATED] = { "stream closed inside the frame",
				  -ECONNRESET, RSW_MPA_EC_TCP_LOST, false,
				  false,
				  RSW_STAT_MPA_E_TRUNCATED },
	[RSW_MPA_E_KEY] = { "not an MPA key", -EPROTO, RSW_MPA_EC_BAD_RR,
			    false, false,
			    RSW_STAT_MPA_E_KEY },
	[RSW_MPA_E_KEY_ROLE] = { "MPA key of the wrong role", -EPROTO,
				 RSW_MPA_EC_BAD_RR, false, false,
				 RSW_STAT_MPA_E_KEY_ROLE },
	[RSW_MPA_E_REV] = { "unsupported MPA revision", -EPROTO,
			    RSW_MPA_EC_BAD_RR, false, false,
			    RSW_STAT_MPA_E_REV },
	[RSW_MPA_E_PD_LEN] = { "PD_Length above 512", -EPROTO,
			       RSW_MPA_EC_BAD_RR, false, false,
			       RSW_STAT_MPA_E_PD_LEN },
	[RSW_MPA_E_ENHANCED] = { "RFC 6581 data shorter than IRD/ORD",
				 -EPROTO, RSW_MPA_EC_BAD_RR, false, false,
				 RSW_STAT_MPA_E_ENHANCED },
	[RSW_MPA_E_REJECTED] = { "rejected by the peer", -ECONNREFUSED, 0,
				 false, false,
				 RSW_STAT_MPA_E_REJECTED },
	[RSW_MPA_E_PD_IWCM] = { "private data longer than iw_cm carries",
				-EMSGSIZE, 0, false, true,
				RSW_STAT_MPA_E_PD_IWCM },
	[RSW_MPA_E_IRD] = { "insufficient IRD", -EPROTO, RSW_MPA_EC_IRD,
			    true, true,
			    RSW_STAT_MPA_E_IRD },
	[RSW_MPA_E_NO_RTR] = { "no matching RTR option", -EPROTO,
			       RSW_MPA_EC_NO_RTR, true, true,
			       RSW_STAT_MPA_E_NO_RTR },
	[RSW_MPA_E_CRC] = { "the Reply declined the required CRC", -EPROTO,
			    RSW_MPA_EC_BAD_RR, false, false,
			    RSW_STAT_MPA_E_CRC },
};

static const struct rsw_mpa_reason_info rsw_mpa_reason_unknown = {
	"unknown", -EPROTO, 0, false, false, RSW_STAT_NONE,
};

const struct rsw_mpa_reason_info *rsw_mpa_reason(enum rsw_mpa_reason r)
{
	if ((unsigned int)r >= RSW_MPA_E_NUM)
		return &rsw_mpa_reason_unknown;
	return &rsw_mpa_reasons[r];
}
EXPORT_SYMBOL_IF_KUNIT(rsw_mpa_reason);

/* -------------------------------------------------------------------------
 * Frame descriptions and the builder.
 */
int rsw_mpa_params_check(const struct rsw_mpa_params *lp)
{
	if (lp->rev != RSW_MPA_REV_1 && lp->rev != RSW_MPA_REV_2)
		return -EINVAL;
	if (lp->ird > RSW_MPA_V2_IRD_ORD_MAX ||
	    lp->ord > RSW_MPA_V2_IRD_ORD_MAX)
		return -EINVAL;
	if (lp->rtr & ~RSW_MPA_RTR_ALL || lp->rtr_prefer & ~RSW_MPA_RTR_ALL ||
	    hweight8(lp->rtr_prefer) > 1)
		return -EINVAL;
	if (lp->pd_len > RSW_MPA_MAX_PD || (lp->pd_len && !lp->pd))
		return -EINVAL;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_mpa_params_check);

/* RTR types an initiator offers: Read only if its ORD leaves room. */
static u8 rsw_mpa_rtr_offer(const struct rsw_mpa_params *lp)
{
	u8 rtr = lp->rtr & RSW_MPA_RTR_ALL;

	if (!lp->ord)
		rtr &= ~RSW_MPA_RTR_READ;
	return rtr;
}

int rsw_mpa_request(const struct rsw_mpa_params *lp, struct rsw_mpa_frame *req)
{
	if (rsw_mpa_params_check(lp))
		return -EINVAL;
	*req = (struct rsw_mpa_frame) {
		.rev = lp->rev,
		.crc = lp->crc,
		.markers = lp->markers,
		.enhanced = lp->rev == RSW_MPA_REV_2,
		.pd = lp->pd,
		.pd_len = lp->pd_len,
	};
	if (!req->enhanced)
		return lp->p2p ? -EINVAL : 0;
	req->ird = lp->ird;
	req->ord = lp->ord;
	if (lp->p2p) {
		req->p2p = true;
		req->rtr = rsw_mpa_rtr_offer(lp);
		if (!req->rtr)
			return -EINVAL;
	}
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_mpa_request);

/* Whether @f can be sent as described; the PD limit leaves room for IRD/ORD. */
static bool rsw_mpa_frame_valid(const struct rsw_mpa_frame *f, bool reply)
{
	if (f->rev != RSW_MPA_REV_1 && f->rev != RSW_MPA_REV_2)
		return false;
	if (f->reject && !reply)
		return false;
	if (f->enhanced && f->rev != RSW_MPA_REV_2)
		return false;
	if (!f->enhanced && (f->p2p || f->rtr || f->ird || f->ord))
		return false;
	if (f->rtr & ~RSW_MPA_RTR_ALL)
		return false;
	if (f->p2p && (reply ? hweight8(f->rtr) != 1 : !f->rtr))
		return false;
	if (f->ird > RSW_MPA_V2_IRD_ORD_MAX || f->ord > RSW_MPA_V2_IRD_ORD_MAX)
		return false;
	if (f->pd_len > rsw_mpa_max_ulp_pd(f->enhanced))
		return false;
	return !f->pd_len || f->pd;
}

static void rsw_mpa_put_v2(const struct rsw_mpa_frame *f, u8 *p)
{
	struct rsw_mpa_v2 v2 = {};

	rsw_mpa_v2_set_ird(&v2, f->ird);
	rsw_mpa_v2_set_ord(&v2, f->ord);
	rsw_mpa_v2_set_p2p(&v2, f->p2p);
	rsw_mpa_v2_set_rtr(&v2, f->rtr);
	memcpy(p, &v2, sizeof(v2));
}

/*
 * Write @f as a Request (@reply false) or Reply into @buf.  Returns the
 * frame's length, -EINVAL if @f cannot be sent (ULP private data longer
 * than RSW_MPA_MAX_PD, less the IRD/ORD word if @f->enhanced, included) or
 * -ENOSPC if @size is too small.  PD_Length is computed without wrapping.
 */
int rsw_mpa_build(const struct rsw_mpa_frame *f, bool reply, void *buf,
		  size_t size)
{
	u32 ext = f->enhanced ? sizeof(struct rsw_mpa_v2) : 0;
	struct rsw_mpa_rr rr = {};
	u8 *p = buf;
	u32 len;

	if (!rsw_mpa_frame_valid(f, reply))
		return -EINVAL;
	len = sizeof(rr) + ext + f->pd_len;
	if (size < len)
		return -ENOSPC;
	memcpy(rr.key, reply ? RSW_MPA_KEY_REP : RSW_MPA_KEY_REQ,
	       RSW_MPA_KEY_LEN);
	rsw_mpa_rr_set_crc(&rr, f->crc);
	rsw_mpa_rr_set_markers(&rr, f->markers);
	rsw_mpa_rr_set_reject(&rr, f->reject);
	rsw_mpa_rr_set_enhanced(&rr, f->enhanced);
	rsw_mpa_rr_set_rev(&rr, f->rev);
	rsw_mpa_rr_set_pd_len(&rr, ext + f->pd_len);
	memcpy(p, &rr, sizeof(rr));
	if (ext)
		rsw_mpa_put_v2(f, p + sizeof(rr));
	if (f->pd_len)
		memcpy(p + sizeof(rr) + ext, f->pd, f->pd_len);
	return len;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_mpa_build);

/* -------------------------------------------------------------------------
 * Negotiation.
 */

/*
 * The RTR type a responder picks from @common, or NONE: @prefer if it is
 * offered, else by our order.  A Read RTR needs an inbound Read: with
 * @ird 0 it comes after Send, and when it is the only choice the responder
 * grants IRD 1 (rsw_mpa_rtr_ird()).  A listener does not know its IRD
 * before the ULP accepts, so a peer offering only Read (cxgb4's default)
 * must not be refused for an IRD of 0.
 */
static u8 rsw_mpa_rtr_pick(u8 common, u8 prefer, u16 ird)
{
	if (common & prefer)
		return prefer;
	if (common & RSW_MPA_RTR_WRITE)
		return RSW_MPA_RTR_WRITE;
	if ((common & RSW_MPA_RTR_READ) && ird)
		return RSW_MPA_RTR_READ;
	if (common & RSW_MPA_RTR_SEND)
		return RSW_MPA_RTR_SEND;
	return common & RSW_MPA_RTR_READ;
}

/* The responder's IRD once @rtr is picked: a Read RTR needs one. */
static u16 rsw_mpa_rtr_ird(u8 rtr, u16 ird)
{
	return rtr == RSW_MPA_RTR_READ ? max_t(u16, ird, 1) : ird;
}

static u8 rsw_mpa_rep_rev(const struct rsw_mpa_params *lp,
			  const struct rsw_mpa_frame *req)
{
	return min(lp->rev, req->rev);
}

static bool rsw_mpa_rep_enhanced(const struct rsw_mpa_params *lp,
				 const struct rsw_mpa_frame *req)
{
	return rsw_mpa_rep_rev(lp, req) == RSW_MPA_REV_2 && req->enhanced;
}

/*
 * Responder: whether a parsed Request can be accepted under @lp, before
 * the ULP is asked.  rsw_mpa_accept() checks the same again.
 */
enum rsw_mpa_reason rsw_mpa_check_request(const struct rsw_mpa_params *lp,
					  const struct rsw_mpa_frame *req)
{
	u8 common = lp->rtr & req->rtr;

	if (req->pd_len > RSW_MPA_IWCM_MAX_PD)
		return RSW_MPA_E_PD_IWCM;
	if (rsw_mpa_rep_enhanced(lp, req) && req->p2p &&
	    !rsw_mpa_rtr_pick(common, lp->rtr_prefer, lp->ird))
		return RSW_MPA_E_NO_RTR;
	return RSW_MPA_OK;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_mpa_check_request);

/*
 * Responder: describe in @rep the Reject frame answering @req, carrying
 * @lp's private data (cm.c passes none for rejections of its own).
 */
void rsw_mpa_reject(const struct rsw_mpa_params *lp,
		    const struct rsw_mpa_frame *req, struct rsw_mpa_frame *rep)
{
	*rep = (struct rsw_mpa_frame) {
		.rev = rsw_mpa_rep_rev(lp, req),
		.crc = lp->crc || req->crc,
		.reject = true,
		.enhanced = rsw_mpa_rep_enhanced(lp, req),
		.pd = lp->pd,
		.pd_len = lp->pd_len,
	};
	if (rep->enhanced) {
		rep->ird = lp->ird;
		rep->ord = min(lp->ord, req->ird);
	}
}
EXPORT_SYMBOL_IF_KUNIT(rsw_mpa_reject);

/* Our ORD toward a peer that sent no IRD: at most what it is taken to have. */
static u16 rsw_mpa_ord_blind(const struct rsw_mpa_params *lp)
{
	return lp->peer_ird_ord ? min(lp->ord, lp->peer_ird_ord) : lp->ord;
}

/*
 * Responder: accept @req under @lp.  On RSW_MPA_OK, @rep is the Reply to
 * send (with @lp's private data) and @conn the outcome.  Otherwise @rep is
 * a Reject frame without private data (send it if rsw_mpa_reason()->reply)
 * and @conn is zeroed.
 */
enum rsw_mpa_reason rsw_mpa_accept(const struct rsw_mpa_params *lp,
				   const struct rsw_mpa_frame *req,
				   struct rsw_mpa_frame *rep,
				   struct rsw_mpa_conn *conn)
{
	enum rsw_mpa_reason r = rsw_mpa_check_request(lp, req);
	struct rsw_mpa_params nopd = *lp;

	if (r) {
		nopd.pd = NULL;
		nopd.pd_len = 0;
		rsw_mpa_reject(&nopd, req, rep);
		*conn = (struct rsw_mpa_conn) {};
		return r;
	}
	rsw_mpa_reject(lp, req, rep);
	rep->reject = false;
	rep->markers = lp->markers;
	if (rep->enhanced && req->p2p) {
		rep->p2p = true;
		rep->rtr = rsw_mpa_rtr_pick(lp->rtr & req->rtr, lp->rtr_prefer,
					    lp->ird);
		rep->ird = rsw_mpa_rtr_ird(rep->rtr, lp->ird);
	}
	*conn = (struct rsw_mpa_conn) {
		.rev = rep->rev,
		.crc = rep->crc,
		.tx_markers = req->markers,
		.rx_markers = rep->markers,
		.enhanced = rep->enhanced,
		.p2p = rep->p2p,
		.rtr = rep->rtr,
		.ird = rsw_mpa_rtr_ird(rep->rtr, lp->ird),
		.ord = rep->enhanced ? rep->ord : rsw_mpa_ord_blind(lp),
	};
	return RSW_MPA_OK;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_mpa_accept);

/* Initiator: the Reply's answer to the peer-to-peer question. */
static enum rsw_mpa_reason rsw_mpa_check_rtr(const struct rsw_mpa_params *lp,
					     const struct rsw_mpa_frame *rep,
					     struct rsw_mpa_conn *conn)
{
	u8 offered = lp->p2p ? rsw_mpa_rtr_offer(lp) : RSW_MPA_RTR_NONE;

	if (!conn->enhanced)
		return RSW_MPA_OK;
	if (!offered)
		return rep->p2p ? RSW_MPA_E_NO_RTR : RSW_MPA_OK;
	if (!rep->p2p || hweight8(rep->rtr) != 1 || (rep->rtr & ~offered))
		return RSW_MPA_E_NO_RTR;
	if (rep->rtr == RSW_MPA_RTR_READ && !conn->ord)
		return RSW_MPA_E_IRD;
	conn->p2p = true;
	conn->rtr = rep->rtr;
	return RSW_MPA_OK;
}

/* Initiator: the checks of a Reply that need no arithmetic. */
static enum rsw_mpa_reason rsw_mpa_check_reply(const struct rsw_mpa_params *lp,
					       const struct rsw_mpa_frame *rep,
					       bool enhanced)
{
	if (rep->reject)
		return RSW_MPA_E_REJECTED;
	if (rep->rev < RSW_MPA_REV_1 || rep->rev > lp->rev)
		return RSW_MPA_E_REV;
	if (lp->crc && lp->crc_required && !rep->crc)
		return RSW_MPA_E_CRC;
	if (rep->pd_len > RSW_MPA_IWCM_MAX_PD)
		return RSW_MPA_E_PD_IWCM;
	if (enhanced && rep->ord > lp->ird)
		return RSW_MPA_E_IRD;
	return RSW_MPA_OK;
}

/*
 * Initiator: the outcome of the Request built from @lp and the parsed Reply
 * @rep.  On failure @conn is zeroed; rsw_mpa_reason() says whether to send
 * a Terminate first.
 */
enum rsw_mpa_reason rsw_mpa_connected(const struct rsw_mpa_params *lp,
				      const struct rsw_mpa_frame *rep,
				      struct rsw_mpa_conn *conn)
{
	enum rsw_mpa_reason r;

	*conn = (struct rsw_mpa_conn) {
		.rev = rep->rev,
		.crc = lp->crc || rep->crc,
		.tx_markers = rep->markers,
		.rx_markers = lp->markers,
		.enhanced = lp->rev == RSW_MPA_REV_2 &&
			    rep->rev == RSW_MPA_REV_2 && rep->enhanced,
		.ird = lp->ird,
		.ord = rsw_mpa_ord_blind(lp),
	};
	r = rsw_mpa_check_reply(lp, rep, conn->enhanced);
	if (!r) {
		if (conn->enhanced)
			conn->ord = min(lp->ord, rep->ird);
		r = rsw_mpa_check_rtr(lp, rep, conn);
	}
	if (r)
		*conn = (struct rsw_mpa_conn) {};
	return r;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_mpa_connected);

/* -------------------------------------------------------------------------
 * The parser: one function per state, each returning the next state.
 */
struct rsw_mpa_in {
	const u8	*data;
	size_t		len;
	size_t		used;
};

static const char *const rsw_mpa_rx_names[RSW_MPA_RX_NUM] = {
	[RSW_MPA_RX_HDR] = "header",
	[RSW_MPA_RX_PD] = "private data",
	[RSW_MPA_RX_DONE] = "done",
	[RSW_MPA_RX_ERROR] = "error",
};

const char *rsw_mpa_rx_state_name(enum rsw_mpa_rx_state s)
{
	if ((unsigned int)s >= RSW_MPA_RX_NUM)
		return "unknown";
	return rsw_mpa_rx_names[s];
}
EXPORT_SYMBOL_IF_KUNIT(rsw_mpa_rx_state_name);

/*
 * Responder: @initiator false, @rev ignored.  Initiator: @rev is the
 * revision it offered.
 */
void rsw_mpa_rx_init(struct rsw_mpa_rx *rx, bool initiator, u8 rev)
{
	rx->state = RSW_MPA_RX_HDR;
	rx->reason = RSW_MPA_OK;
	rx->initiator = initiator;
	rx->rev = rev;
	rx->have = 0;
	rx->pd_len = 0;
	rx->frame = (struct rsw_mpa_frame) {};
}
EXPORT_SYMBOL_IF_KUNIT(rsw_mpa_rx_init);

/*
 * Move input into @rx->buf until it holds @end octets (callers guarantee
 * @end <= RSW_MPA_RR_MAX_LEN); true once it does.
 */
static bool rsw_mpa_rx_collect(struct rsw_mpa_rx *rx, struct rsw_mpa_in *in,
			       u32 end)
{
	size_t n = min_t(size_t, end - rx->have, in->len - in->used);

	if (n) {
		memcpy(rx->buf + rx->have, in->data + in->used, n);
		rx->have += n;
		in->used += n;
	}
	return rx->have == end;
}

static enum rsw_mpa_reason rsw_mpa_rx_check_key(const struct rsw_mpa_rx *rx,
						const struct rsw_mpa_rr *rr)
{
	const char *want = rx->initiator ? RSW_MPA_KEY_REP : RSW_MPA_KEY_REQ;
	const char *other = rx->initiator ? RSW_MPA_KEY_REQ : RSW_MPA_KEY_REP;

	if (!memcmp(rr->key, want, RSW_MPA_KEY_LEN))
		return RSW_MPA_OK;
	if (!memcmp(rr->key, other, RSW_MPA_KEY_LEN))
		return RSW_MPA_E_KEY_ROLE;
	return RSW_MPA_E_KEY;
}

static enum rsw_mpa_reason rsw_mpa_rx_check_hdr(const struct rsw_mpa_rx *rx,
						const struct rsw_mpa_rr *rr)
{
	u8 max = rx->initiator ? rx->rev : RSW_MPA_REV_2;
	u8 rev = rsw_mpa_rr_rev(rr);
	enum rsw_mpa_reason r;

	r = rsw_mpa_rx_check_key(rx, rr);
	if (r)
		return r;
	if (rev < RSW_MPA_REV_1 || rev > max)
		return RSW_MPA_E_REV;
	if (rsw_mpa_rr_pd_len(rr) > RSW_MPA_MAX_PD)
		return RSW_MPA_E_PD_LEN;
	if (rev == RSW_MPA_REV_2 && rsw_mpa_rr_enhanced(rr) &&
	    rsw_mpa_rr_pd_len(rr) < sizeof(struct rsw_mpa_v2))
		return RSW_MPA_E_ENHANCED;
	return RSW_MPA_OK;
}

/* Fill @rx->frame from the complete, header-checked frame in @rx->buf. */
static void rsw_mpa_rx_decode(struct rsw_mpa_rx *rx)
{
	struct rsw_mpa_frame *f = &rx->frame;
	const u8 *pd = rx->buf + sizeof(struct rsw_mpa_rr);
	struct rsw_mpa_rr rr;
	struct rsw_mpa_v2 v2;

	memcpy(&rr, rx->buf, sizeof(rr));
	*f = (struct rsw_mpa_frame) {
		.rev = rsw_mpa_rr_rev(&rr),
		.crc = rsw_mpa_rr_crc(&rr),
		.markers = rsw_mpa_rr_markers(&rr),
		.reject = rx->initiator && rsw_mpa_rr_reject(&rr),
		.pd_len = rx->pd_len,
	};
	f->enhanced = f->rev == RSW_MPA_REV_2 && rsw_mpa_rr_enhanced(&rr);
	if (f->enhanced) {
		memcpy(&v2, pd, sizeof(v2));
		f->ird = rsw_mpa_v2_ird(&v2);
		f->ord = rsw_mpa_v2_ord(&v2);
		f->p2p = rsw_mpa_v2_p2p(&v2);
		f->rtr = rsw_mpa_v2_rtr(&v2);
		pd += sizeof(v2);
		f->pd_len -= sizeof(v2);
	}
	f->pd = f->pd_len ? pd : NULL;
}

static enum rsw_mpa_rx_state rsw_mpa_rx_hdr(struct rsw_mpa_rx *rx,
					    struct rsw_mpa_in *in)
{
	struct rsw_mpa_rr rr;

	if (!rsw_mpa_rx_collect(rx, in, sizeof(rr)))
		return RSW_MPA_RX_HDR;
	memcpy(&rr, rx->buf, sizeof(rr));
	rx->reason = rsw_mpa_rx_check_hdr(rx, &rr);
	if (rx->reason)
		return RSW_MPA_RX_ERROR;
	rx->pd_len = rsw_mpa_rr_pd_len(&rr);
	return RSW_MPA_RX_PD;
}

static enum rsw_mpa_rx_state rsw_mpa_rx_pd(struct rsw_mpa_rx *rx,
					   struct rsw_mpa_in *in)
{
	if (!rsw_mpa_rx_collect(rx, in, rsw_mpa_rr_len(rx->pd_len)))
		return RSW_MPA_RX_PD;
	rsw_mpa_rx_decode(rx);
	if (rx->frame.reject) {
		rx->reason = RSW_MPA_E_REJECTED;
		return RSW_MPA_RX_ERROR;
	}
	return RSW_MPA_RX_DONE;
}

static enum rsw_mpa_rx_state rsw_mpa_rx_done(struct rsw_mpa_rx *rx,
					     struct rsw_mpa_in *in)
{
	return RSW_MPA_RX_DONE;
}

static enum rsw_mpa_rx_state rsw_mpa_rx_error(struct rsw_mpa_rx *rx,
					      struct rsw_mpa_in *in)
{
	return RSW_MPA_RX_ERROR;
}

static enum rsw_mpa_rx_state
(*const rsw_mpa_rx_steps[RSW_MPA_RX_NUM])(struct rsw_mpa_rx *rx,
					  struct rsw_mpa_in *in) = {
	[RSW_MPA_RX_HDR] = rsw_mpa_rx_hdr,
	[RSW_MPA_RX_PD] = rsw_mpa_rx_pd,
	[RSW_MPA_RX_DONE] = rsw_mpa_rx_done,
	[RSW_MPA_RX_ERROR] = rsw_mpa_rx_error,
};

static enum rsw_mpa_rx_status rsw_mpa_rx_status(const struct rsw_mpa_rx *rx)
{
	switch (rx->state) {
	case RSW_MPA_RX_DONE:
		return RSW_MPA_RX_COMPLETE;
	case RSW_MPA_RX_ERROR:
		return RSW_MPA_RX_FAILED;
	default:
		return RSW_MPA_RX_MORE;
	}
}

/*
 * Feed @len octets of the stream.  Consumes at most up to the end of the
 * frame (*@used says how many); a finished parser consumes nothing.
 */
enum rsw_mpa_rx_status rsw_mpa_rx_feed(struct rsw_mpa_rx *rx, const void *data,
				       size_t len, size_t *used)
{
	struct rsw_mpa_in in = { .data = data, .len = len };
	enum rsw_mpa_rx_state prev;

	do {
		prev = rx->state;
		rx->state = rsw_mpa_rx_steps[prev](rx, &in);
	} while (rx->state != prev);
	*used = in.used;
	return rsw_mpa_rx_status(rx);
}
EXPORT_SYMBOL_IF_KUNIT(rsw_mpa_rx_feed);

/* Octets still needed to finish the frame (0 once finished). */
u32 rsw_mpa_rx_want(const struct rsw_mpa_rx *rx)
{
	switch (rx->state) {
	case RSW_MPA_RX_HDR:
		return sizeof(struct rsw_mpa_rr) - rx->have;
	case RSW_MPA_RX_PD:
		return rsw_mpa_rr_len(rx->pd_len) - rx->have;
	default:
		return 0;
	}
}
EXPORT_SYMBOL_IF_KUNIT(rsw_mpa_rx_want);

/*
 * The stream ended.  Fails an unfinished parser (RSW_MPA_E_CLOSED or
 * RSW_MPA_E_TRUNCATED) and returns its reason; RSW_MPA_OK after a valid
 * frame.
 */
enum rsw_mpa_reason rsw_mpa_rx_eof(struct rsw_mpa_rx *rx)
{
	switch (rx->state) {
	case RSW_MPA_RX_HDR:
		rx->reason = rx->have ? RSW_MPA_E_TRUNCATED : RSW_MPA_E_CLOSED;
		break;
	case RSW_MPA_RX_PD:
		rx->reason = RSW_MPA_E_TRUNCATED;
		break;
	default:
		return rx->reason;
	}
	rx->state = RSW_MPA_RX_ERROR;
	return rx->reason;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_mpa_rx_eof);
