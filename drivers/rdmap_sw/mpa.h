/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmap_sw: MPA connection setup (RFC 5044 section 7.1, RFC 6581), the
 * socket-free part: describe, build and parse MPA Request/Reply frames and
 * negotiate the connection's parameters.  cm.c owns sockets, timers and
 * iw_cm events and drives these functions (declared in internal.h).
 *
 * The exchange, as cm.c runs it:
 *
 *   initiator                                responder
 *   rsw_mpa_request(params) -> frame
 *   rsw_mpa_build(frame) -> octets  ------>  rsw_mpa_rx_feed() until COMPLETE
 *                                            rsw_mpa_check_request() (early)
 *                                            ... ULP accepts or rejects ...
 *                                            rsw_mpa_accept()/_reject()
 *   rsw_mpa_rx_feed() until COMPLETE <-----  rsw_mpa_build(reply frame)
 *   rsw_mpa_connected() -> rsw_mpa_conn      (accept also gave rsw_mpa_conn)
 *
 * Markers (RFC 5044 sections 5 and 7.1.1) are negotiated per direction:
 * the M bit of a frame asks for Markers in what its sender receives.  This
 * side sets M when its policy asks (rsw_mpa_params.markers) and always
 * honours a peer's M; rsw_mpa_conn says which directions carry Markers.
 */
#ifndef _RDMAP_SW_MPA_H
#define _RDMAP_SW_MPA_H

#include <linux/limits.h>
#include <linux/types.h>

#include "stats.h"
#include "wire.h"

/* Largest Request/Reply frame: header plus RFC 5044's 512 octets of PD. */
#define RSW_MPA_RR_MAX_LEN	(sizeof(struct rsw_mpa_rr) + RSW_MPA_MAX_PD)

/*
 * Largest ULP private data iw_cm can hand to a ULP: iw_cm_event's
 * private_data_len is a u8.  A received frame with more ULP private data
 * fails negotiation (RSW_MPA_E_PD_IWCM) instead of wrapping that length.
 */
#define RSW_MPA_IWCM_MAX_PD	U8_MAX

#define RSW_MPA_RTR_ALL \
	(RSW_MPA_RTR_WRITE | RSW_MPA_RTR_READ | RSW_MPA_RTR_SEND)

/* Largest ULP private data of a frame, with or without the IRD/ORD word. */
static inline u16 rsw_mpa_max_ulp_pd(bool enhanced)
{
	return enhanced ? RSW_MPA_V2_MAX_ULP_PD : RSW_MPA_MAX_PD;
}

/*
 * Why a handshake failed.  rsw_mpa_reason() gives each one's name and what
 * cm.c does about it.
 */
enum rsw_mpa_reason {
	RSW_MPA_OK = 0,
	RSW_MPA_E_CLOSED,	/* stream ended before the frame began */
	RSW_MPA_E_TRUNCATED,	/* stream ended inside the frame */
	RSW_MPA_E_KEY,		/* Key is not an MPA key */
	RSW_MPA_E_KEY_ROLE,	/* the other role's Key */
	RSW_MPA_E_REV,		/* Rev not acceptable */
	RSW_MPA_E_PD_LEN,	/* PD_Length above 512 */
	RSW_MPA_E_ENHANCED,	/* RFC 6581 bit set, PD under 4 octets */
	RSW_MPA_E_REJECTED,	/* the Reply has R set */
	RSW_MPA_E_PD_IWCM,	/* ULP private data over iw_cm's 255 */
	RSW_MPA_E_IRD,		/* RFC 6581: insufficient IRD */
	RSW_MPA_E_NO_RTR,	/* RFC 6581: no matching RTR option */
	RSW_MPA_E_CRC,		/* CRC required, the Reply has no C */
	RSW_MPA_E_NUM,
};

/*
 * What a failure means for cm.c:
 *  @err:   status for IW_CM_EVENT_CONNECT_REPLY at the initiator;
 *  @ecode: the MPA error code (RFC 5044 section 8, RFC 6581; enum
 *          rsw_mpa_ecode) describing it, 0 if none applies;
 *  @term:  the initiator, already in full operation, sends a Terminate
 *          (layer LLP, type MPA, @ecode) before closing;
 *  @reply: the responder answers with a Reject frame (rsw_mpa_reject())
 *          before closing.  Otherwise it closes without answering.
 *  @stat:  the counter a handshake failing for it counts in (stats.h);
 *          RSW_STAT_NONE only for RSW_MPA_OK, which is no failure
 *          (stats_kunit.c checks every failure row has its own).
 */
struct rsw_mpa_reason_info {
	const char	*name;
	int		err;
	u8		ecode;
	bool		term;
	bool		reply;
	enum rsw_stat	stat;
};

/*
 * Local policy for one connection.  The responder fills @ird, @ord and @pd
 * from the ULP's accept (or reject) and may call rsw_mpa_check_request()
 * earlier with what it knows.
 *  @rev: initiator: the revision offered; responder: the highest it uses.
 *  @p2p: initiator: ask for the peer-to-peer model (needs revision 2).  A
 *        responder ignores it: it always honours a peer's ask.
 *  @rtr: RSW_MPA_RTR_* set; initiator: the types it can send, responder:
 *        the types it accepts.
 *  @rtr_prefer: responder: the one type it picks first when offered (0:
 *        Write, then Read, then Send).
 *  @crc_required: initiator: refuse a Reply without C to a Request with C.
 */
struct rsw_mpa_params {
	u8		rev;
	bool		crc;	/* ask for CRC (C) */
	bool		crc_required;
	bool		markers;	/* ask for Markers in what we receive (M) */
	bool		p2p;
	u8		rtr;
	u8		rtr_prefer;
	u16		ird;	/* local IRD, at most 0x3fff */
	u16		ord;	/* local ORD, at most 0x3fff */
	/*
	 * The IRD and ORD taken for a peer whose frames carry none (revision
	 * 1, or 2 without RFC 6581 data): our ORD is capped to it, and a ULP
	 * is told it as the peer's.  0: no cap, and the ULP is told the most
	 * we could use (cm.c).
	 */
	u16		peer_ird_ord;
	const void	*pd;	/* ULP private data */
	u16		pd_len;
};

/* Defaults: revision 2, CRC on, client-server model, any RTR type. */
static inline void rsw_mpa_params_init(struct rsw_mpa_params *lp)
{
	*lp = (struct rsw_mpa_params) {
		.rev = RSW_MPA_REV_2,
		.crc = true,
		.rtr = RSW_MPA_RTR_ALL,
	};
}

/*
 * One Request or Reply frame, decoded.  @enhanced (rev 2 with the RFC 6581
 * bit) says whether @p2p, @rtr, @ird and @ord were on the wire; @pd and
 * @pd_len are the ULP's private data, without that IRD/ORD word.  In a
 * Request @rtr is the set of types offered; in an accepting Reply it is the
 * one chosen.
 */
struct rsw_mpa_frame {
	u8		rev;
	bool		crc;
	bool		markers;
	bool		reject;
	bool		enhanced;
	bool		p2p;
	u8		rtr;
	u16		ird;
	u16		ord;
	const u8	*pd;
	u16		pd_len;
};

/*
 * The negotiated connection, for QP setup.  Markers are per direction
 * (RFC 5044 section 7.1.1): each side's M asks for them in what it
 * receives, whatever the other side asked.  @p2p: the initiator sends one
 * ready-to-receive message of type @rtr as its first FPDU and the responder
 * sends nothing before it has received it.  Without @p2p, RFC 5044 section
 * 7.1.2 rule 4 still holds: the responder sends no FPDU before it has
 * received one.  @ird/@ord are this side's limits for the QP.
 */
struct rsw_mpa_conn {
	u8		rev;
	bool		crc;
	bool		tx_markers;	/* we send Markers: the peer's M */
	bool		rx_markers;	/* the peer sends Markers: our M */
	bool		enhanced;	/* IRD/ORD were exchanged */
	bool		p2p;
	u8		rtr;		/* RTR type if @p2p, else 0 */
	u16		ird;
	u16		ord;
	u32		max_ulpdu;	/* local TX cap, 0: none (not negotiated) */
};

/* -------------------------------------------------------------------------
 * Incremental parser of one received frame.  Fed arbitrary chunks of the TCP
 * stream; consumes exactly the frame's octets and nothing after them.  It
 * holds the whole frame (at most RSW_MPA_RR_MAX_LEN octets) itself and never
 * allocates.
 */
enum rsw_mpa_rx_state {
	RSW_MPA_RX_HDR,		/* collecting the 20-octet header */
	RSW_MPA_RX_PD,		/* collecting PD_Length octets */
	RSW_MPA_RX_DONE,	/* a valid frame is in .frame */
	RSW_MPA_RX_ERROR,	/* .reason says why */
	RSW_MPA_RX_NUM,
};

enum rsw_mpa_rx_status {
	RSW_MPA_RX_MORE,	/* feed more octets */
	RSW_MPA_RX_COMPLETE,	/* .frame is valid */
	RSW_MPA_RX_FAILED,	/* .reason; .frame valid if REJECTED */
};

struct rsw_mpa_rx {
	enum rsw_mpa_rx_state	state;
	enum rsw_mpa_reason	reason;
	bool			initiator;	/* expects a Reply */
	u8			rev;	/* initiator: revision offered */
	u16			have;	/* frame octets in @buf */
	u16			pd_len;	/* PD_Length, once known */
	struct rsw_mpa_frame	frame;	/* .pd points into @buf */
	u8			buf[RSW_MPA_RR_MAX_LEN];
};

#endif /* _RDMAP_SW_MPA_H */
