/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmap_sw: every on-wire format, and nothing else.
 *
 *   RFC 5044  MPA: Request/Reply frames, FPDU header, Markers, CRC trailer
 *   RFC 6581  enhanced connection establishment (IRD/ORD, peer-to-peer RTR)
 *   RFC 5041  DDP: control field, tagged and untagged headers, queues
 *   RFC 5040  RDMAP: control field, opcodes, Read Request, Terminate
 *   RFC 7306  RDMAP extensions: Immediate Data, Atomic Request/Response
 *
 * Conventions.  Multi-octet fields are big endian (__be16/__be32/__be64),
 * except the MPA CRC, which is sent least significant octet first (see
 * struct rsw_mpa_trailer).  Flags and packed fields are described by masks
 * in wire byte order (cpu_to_be* constants) and read or written through one
 * small accessor each.  Whole-width fields (STags, offsets, MSN, ...) are
 * plain __be fields used directly.  Bit numbers in comments follow the RFC
 * figures: bit 0 is the most significant bit of the first octet.
 *
 * Every FPDU header below starts with the 2-octet MPA ULPDU_Length, as in
 * RFC 5040 Figure 3 ("the DDP Header is offset by 16 bits to accommodate the
 * MPA header"); that keeps all 32- and 64-bit DDP fields naturally aligned
 * in a buffer that holds the FPDU from its first octet.  The structs describe
 * the FPDU with MPA Markers already removed.
 */
#ifndef _RDMAP_SW_WIRE_H
#define _RDMAP_SW_WIRE_H

#include <linux/build_bug.h>
#include <linux/stddef.h>
#include <linux/types.h>
#include <asm/byteorder.h>

/* -------------------------------------------------------------------------
 * Field helpers: read or replace the bits of @word selected by @mask (both in
 * wire byte order; the mask must be one contiguous run of bits).
 */
static __always_inline u16 rsw_be16_get(__be16 word, __be16 mask)
{
	u16 m = be16_to_cpu(mask);

	return (be16_to_cpu(word) & m) >> __builtin_ctz(m);
}

static __always_inline __be16 rsw_be16_put(__be16 word, __be16 mask, u16 val)
{
	u16 m = be16_to_cpu(mask);

	return (word & ~mask) | cpu_to_be16((val << __builtin_ctz(m)) & m);
}

static __always_inline u32 rsw_be32_get(__be32 word, __be32 mask)
{
	u32 m = be32_to_cpu(mask);

	return (be32_to_cpu(word) & m) >> __builtin_ctz(m);
}

static __always_inline __be32 rsw_be32_put(__be32 word, __be32 mask, u32 val)
{
	u32 m = be32_to_cpu(mask);

	return (word & ~mask) | cpu_to_be32((val << __builtin_ctz(m)) & m);
}

/* =========================================================================
 * MPA Request/Reply frame (RFC 5044 section 7.1, RFC 6581 section 9)
 *
 *   0..15  Key: "MPA ID Req Frame" or "MPA ID Rep Frame" (no NUL)
 *   16     |M|C|R|S| Res   |      (S: RFC 6581 enhanced data present)
 *   17     Rev
 *   18..19 PD_Length
 *   20..   Private Data, at most RSW_MPA_MAX_PD octets
 */
#define RSW_MPA_KEY_LEN		16
#define RSW_MPA_KEY_REQ		"MPA ID Req Frame"
#define RSW_MPA_KEY_REP		"MPA ID Rep Frame"
#define RSW_MPA_REV_1		1	/* RFC 5044 */
#define RSW_MPA_REV_2		2	/* RFC 6581 */
#define RSW_MPA_MAX_PD		512	/* PD_Length limit, RFC 5044 */

struct rsw_mpa_rr {
	u8	key[RSW_MPA_KEY_LEN];
	__be16	bits;		/* M C R S Res | Rev */
	__be16	pd_len;		/* octets of Private Data that follow */
};

static_assert(sizeof(struct rsw_mpa_rr) == 20);
static_assert(offsetof(struct rsw_mpa_rr, bits) == 16);
static_assert(sizeof(RSW_MPA_KEY_REQ) - 1 == RSW_MPA_KEY_LEN);
static_assert(sizeof(RSW_MPA_KEY_REP) - 1 == RSW_MPA_KEY_LEN);

#define RSW_MPA_RR_MARKERS	cpu_to_be16(0x8000)	/* M: receiver wants Markers */
#define RSW_MPA_RR_CRC		cpu_to_be16(0x4000)	/* C: receiver wants CRC */
#define RSW_MPA_RR_REJECT	cpu_to_be16(0x2000)	/* R: Reply rejects */
#define RSW_MPA_RR_ENHANCED	cpu_to_be16(0x1000)	/* S: RFC 6581 data in PD */
#define RSW_MPA_RR_RESERVED	cpu_to_be16(0x0f00)	/* Res: zero on send */
#define RSW_MPA_RR_REV		cpu_to_be16(0x00ff)

/* Length of a Request/Reply frame carrying @pd_len octets of Private Data. */
static inline u32 rsw_mpa_rr_len(u16 pd_len)
{
	return sizeof(struct rsw_mpa_rr) + pd_len;
}

static inline bool rsw_mpa_rr_markers(const struct rsw_mpa_rr *rr)
{
	return rr->bits & RSW_MPA_RR_MARKERS;
}

static inline void rsw_mpa_rr_set_markers(struct rsw_mpa_rr *rr, bool on)
{
	rr->bits = rsw_be16_put(rr->bits, RSW_MPA_RR_MARKERS, on);
}

static inline bool rsw_mpa_rr_crc(const struct rsw_mpa_rr *rr)
{
	return rr->bits & RSW_MPA_RR_CRC;
}

static inline void rsw_mpa_rr_set_crc(struct rsw_mpa_rr *rr, bool on)
{
	rr->bits = rsw_be16_put(rr->bits, RSW_MPA_RR_CRC, on);
}

static inline bool rsw_mpa_rr_reject(const struct rsw_mpa_rr *rr)
{
	return rr->bits & RSW_MPA_RR_REJECT;
}

static inline void rsw_mpa_rr_set_reject(struct rsw_mpa_rr *rr, bool on)
{
	rr->bits = rsw_be16_put(rr->bits, RSW_MPA_RR_REJECT, on);
}

static inline bool rsw_mpa_rr_enhanced(const struct rsw_mpa_rr *rr)
{
	return rr->bits & RSW_MPA_RR_ENHANCED;
}

static inline void rsw_mpa_rr_set_enhanced(struct rsw_mpa_rr *rr, bool on)
{
	rr->bits = rsw_be16_put(rr->bits, RSW_MPA_RR_ENHANCED, on);
}

/* Res bits as received; a sender leaves them zero. */
static inline u8 rsw_mpa_rr_reserved(const struct rsw_mpa_rr *rr)
{
	return rsw_be16_get(rr->bits, RSW_MPA_RR_RESERVED);
}

static inline u8 rsw_mpa_rr_rev(const struct rsw_mpa_rr *rr)
{
	return rsw_be16_get(rr->bits, RSW_MPA_RR_REV);
}

static inline void rsw_mpa_rr_set_rev(struct rsw_mpa_rr *rr, u8 rev)
{
	rr->bits = rsw_be16_put(rr->bits, RSW_MPA_RR_REV, rev);
}

static inline u16 rsw_mpa_rr_pd_len(const struct rsw_mpa_rr *rr)
{
	return be16_to_cpu(rr->pd_len);
}

static inline void rsw_mpa_rr_set_pd_len(struct rsw_mpa_rr *rr, u16 len)
{
	rr->pd_len = cpu_to_be16(len);
}

/* -------------------------------------------------------------------------
 * RFC 6581 enhanced connection establishment data: the first four octets of
 * the Private Data of a revision 2 frame with S set, counted in PD_Length.
 *
 *   bit 0      peer-to-peer connection model (P2P)
 *   bit 1      ready-to-receive (RTR) may be a zero-length Send
 *   bits 2-15  IRD
 *   bit 16     RTR may be a zero-length RDMA Write
 *   bit 17     RTR may be a zero-length RDMA Read Request
 *   bits 18-31 ORD
 *
 * The initiator sets P2P and every RTR type it can send; the responder
 * answers with the one type it chose.
 */
struct rsw_mpa_v2 {
	__be16	ird;		/* P2P | RTR Send | IRD */
	__be16	ord;		/* RTR Write | RTR Read | ORD */
};

static_assert(sizeof(struct rsw_mpa_v2) == 4);

#define RSW_MPA_V2_P2P		cpu_to_be16(0x8000)	/* in ird */
#define RSW_MPA_V2_RTR_SEND	cpu_to_be16(0x4000)	/* in ird */
#define RSW_MPA_V2_RTR_WRITE	cpu_to_be16(0x8000)	/* in ord */
#define RSW_MPA_V2_RTR_READ	cpu_to_be16(0x4000)	/* in ord */
#define RSW_MPA_V2_IRD_ORD	cpu_to_be16(0x3fff)	/* 14-bit count */
#define RSW_MPA_V2_IRD_ORD_MAX	0x3fff

/* Largest ULP Private Data of a revision 2 frame (the IRD/ORD word counts). */
#define RSW_MPA_V2_MAX_ULP_PD	(RSW_MPA_MAX_PD - sizeof(struct rsw_mpa_v2))

/* Ready-to-receive message types, as a set. */
enum rsw_mpa_rtr {
	RSW_MPA_RTR_NONE	= 0,
	RSW_MPA_RTR_WRITE	= 1 << 0,
	RSW_MPA_RTR_READ	= 1 << 1,
	RSW_MPA_RTR_SEND	= 1 << 2,
};

static inline u16 rsw_mpa_v2_ird(const struct rsw_mpa_v2 *v2)
{
	return rsw_be16_get(v2->ird, RSW_MPA_V2_IRD_ORD);
}

static inline void rsw_mpa_v2_set_ird(struct rsw_mpa_v2 *v2, u16 ird)
{
	v2->ird = rsw_be16_put(v2->ird, RSW_MPA_V2_IRD_ORD, ird);
}

static inline u16 rsw_mpa_v2_ord(const struct rsw_mpa_v2 *v2)
{
	return rsw_be16_get(v2->ord, RSW_MPA_V2_IRD_ORD);
}

static inline void rsw_mpa_v2_set_ord(struct rsw_mpa_v2 *v2, u16 ord)
{
	v2->ord = rsw_be16_put(v2->ord, RSW_MPA_V2_IRD_ORD, ord);
}

static inline bool rsw_mpa_v2_p2p(const struct rsw_mpa_v2 *v2)
{
	return v2->ird & RSW_MPA_V2_P2P;
}

static inline void rsw_mpa_v2_set_p2p(struct rsw_mpa_v2 *v2, bool on)
{
	v2->ird = rsw_be16_put(v2->ird, RSW_MPA_V2_P2P, on);
}

/* The set of RTR types (enum rsw_mpa_rtr bits) present in @v2. */
static inline unsigned int rsw_mpa_v2_rtr(const struct rsw_mpa_v2 *v2)
{
	unsigned int rtr = RSW_MPA_RTR_NONE;

	if (v2->ord & RSW_MPA_V2_RTR_WRITE)
		rtr |= RSW_MPA_RTR_WRITE;
	if (v2->ord & RSW_MPA_V2_RTR_READ)
		rtr |= RSW_MPA_RTR_READ;
	if (v2->ird & RSW_MPA_V2_RTR_SEND)
		rtr |= RSW_MPA_RTR_SEND;
	return rtr;
}

static inline void rsw_mpa_v2_set_rtr(struct rsw_mpa_v2 *v2, unsigned int rtr)
{
	v2->ord = rsw_be16_put(v2->ord, RSW_MPA_V2_RTR_WRITE,
			       !!(rtr & RSW_MPA_RTR_WRITE));
	v2->ord = rsw_be16_put(v2->ord, RSW_MPA_V2_RTR_READ,
			       !!(rtr & RSW_MPA_RTR_READ));
	v2->ird = rsw_be16_put(v2->ird, RSW_MPA_V2_RTR_SEND,
			       !!(rtr & RSW_MPA_RTR_SEND));
}

/* =========================================================================
 * MPA FPDU framing (RFC 5044: FPDU format, Markers, CRC)
 *
 *   ULPDU_Length (2) | ULPDU | PAD (0..3 zero octets) | CRC (4)
 *
 * ULPDU_Length counts the ULPDU only.  PAD aligns ULPDU_Length + ULPDU to 4.
 * The CRC field is present in every FPDU (zero when CRC was not negotiated)
 * and covers ULPDU_Length, ULPDU, PAD and any Markers inside the FPDU.
 * With Markers, a 4-octet Marker sits at every 512th octet of the stream,
 * counted from the first octet of the first FPDU; the arithmetic is in
 * fpdu.h.
 */
#define RSW_MPA_HDR_LEN		2
#define RSW_MPA_CRC_LEN		4
#define RSW_MPA_MARKER_LEN	4
#define RSW_MPA_MARKER_SPACING	512
#define RSW_MPA_ALIGN		4
#define RSW_MPA_MAX_ULPDU	0xffff

struct rsw_mpa_marker {
	__be16	rsvd;		/* zero on send, ignored on receive */
	__be16	fpduptr;	/* octets from ULPDU_Length back to here */
};

static_assert(sizeof(struct rsw_mpa_marker) == RSW_MPA_MARKER_LEN);

/*
 * The CRC trailer.  The CRC32c of RFC 3720 (initial value ~0, final
 * complement) is sent least significant octet first: 32 zero octets give
 * aa 36 91 8a on the wire (RFC 3720 B.4), which is how siw and iWARP RNICs
 * send it.
 */
struct rsw_mpa_trailer {
	__le32	crc;
};

static_assert(sizeof(struct rsw_mpa_trailer) == RSW_MPA_CRC_LEN);

/* =========================================================================
 * DDP (RFC 5041) and RDMAP (RFC 5040) control: the first four octets of
 * every FPDU.
 *
 *   octets 0..1  MPA ULPDU_Length
 *   octet  2     |T|L| Resrv |DV |   DDP control
 *   octet  3     |RV |Rsv|Opcode |   RDMAP control (DDP's first RsvdULP octet)
 */
#define RSW_DDP_VERSION		1
#define RSW_RDMAP_VERSION	1

struct rsw_ctrl {
	__be16	mpa_len;	/* MPA ULPDU_Length */
	__be16	ctrl;		/* DDP control + RDMAP control */
};

static_assert(sizeof(struct rsw_ctrl) == 4);

#define RSW_DDP_TAGGED		cpu_to_be16(0x8000)	/* T */
#define RSW_DDP_LAST		cpu_to_be16(0x4000)	/* L */
#define RSW_DDP_RESERVED	cpu_to_be16(0x3c00)	/* Resrv */
#define RSW_DDP_DV		cpu_to_be16(0x0300)	/* DDP version */
#define RSW_RDMAP_RV		cpu_to_be16(0x00c0)	/* RDMAP version */
#define RSW_RDMAP_RESERVED	cpu_to_be16(0x0030)	/* Rsv */
#define RSW_RDMAP_OPCODE	cpu_to_be16(0x000f)

/* RDMAP opcodes: RFC 5040 Figure 4, RFC 7306 Figure 2. */
enum rsw_rdmap_opcode {
	RSW_OP_WRITE		= 0x0,
	RSW_OP_READ_REQ		= 0x1,
	RSW_OP_READ_RESP	= 0x2,
	RSW_OP_SEND		= 0x3,
	RSW_OP_SEND_INV		= 0x4,
	RSW_OP_SEND_SE		= 0x5,
	RSW_OP_SEND_SE_INV	= 0x6,
	RSW_OP_TERMINATE	= 0x7,
	RSW_OP_IMM_DATA		= 0x8,	/* RFC 7306 */
	RSW_OP_IMM_DATA_SE	= 0x9,	/* RFC 7306 */
	RSW_OP_ATOMIC_REQ	= 0xa,	/* RFC 7306 */
	RSW_OP_ATOMIC_RESP	= 0xb,	/* RFC 7306 */
	RSW_OP_NUM		= 0xc,	/* 0xc..0xf are reserved */
};

/* DDP queue numbers of untagged messages. */
enum rsw_ddp_qn {
	RSW_QN_SEND		= 0,	/* Send*, Immediate Data* */
	RSW_QN_READ_REQ		= 1,	/* Read Request, Atomic Request */
	RSW_QN_TERMINATE	= 2,
	RSW_QN_ATOMIC_RESP	= 3,	/* RFC 7306 */
	RSW_QN_NUM		= 4,
};

static inline u16 rsw_mpa_len(const struct rsw_ctrl *c)
{
	return be16_to_cpu(c->mpa_len);
}

static inline void rsw_set_mpa_len(struct rsw_ctrl *c, u16 len)
{
	c->mpa_len = cpu_to_be16(len);
}

static inline bool rsw_ddp_tagged(const struct rsw_ctrl *c)
{
	return c->ctrl & RSW_DDP_TAGGED;
}

static inline void rsw_ddp_set_tagged(struct rsw_ctrl *c, bool on)
{
	c->ctrl = rsw_be16_put(c->ctrl, RSW_DDP_TAGGED, on);
}

static inline bool rsw_ddp_last(const struct rsw_ctrl *c)
{
	return c->ctrl & RSW_DDP_LAST;
}

static inline void rsw_ddp_set_last(struct rsw_ctrl *c, bool on)
{
	c->ctrl = rsw_be16_put(c->ctrl, RSW_DDP_LAST, on);
}

static inline u8 rsw_ddp_reserved(const struct rsw_ctrl *c)
{
	return rsw_be16_get(c->ctrl, RSW_DDP_RESERVED);
}

static inline u8 rsw_ddp_version(const struct rsw_ctrl *c)
{
	return rsw_be16_get(c->ctrl, RSW_DDP_DV);
}

static inline void rsw_ddp_set_version(struct rsw_ctrl *c, u8 dv)
{
	c->ctrl = rsw_be16_put(c->ctrl, RSW_DDP_DV, dv);
}

static inline u8 rsw_rdmap_version(const struct rsw_ctrl *c)
{
	return rsw_be16_get(c->ctrl, RSW_RDMAP_RV);
}

static inline void rsw_rdmap_set_version(struct rsw_ctrl *c, u8 rv)
{
	c->ctrl = rsw_be16_put(c->ctrl, RSW_RDMAP_RV, rv);
}

static inline u8 rsw_rdmap_reserved(const struct rsw_ctrl *c)
{
	return rsw_be16_get(c->ctrl, RSW_RDMAP_RESERVED);
}

static inline u8 rsw_rdmap_opcode(const struct rsw_ctrl *c)
{
	return rsw_be16_get(c->ctrl, RSW_RDMAP_OPCODE);
}

static inline void rsw_rdmap_set_opcode(struct rsw_ctrl *c, u8 op)
{
	c->ctrl = rsw_be16_put(c->ctrl, RSW_RDMAP_OPCODE, op);
}

/* -------------------------------------------------------------------------
 * DDP tagged and untagged headers (RFC 5041 sections 4.2, 4.3), each with
 * the MPA ULPDU_Length in front.
 *
 * Tagged:   ctrl | STag (4) | TO (8)                         14 + 2 octets
 * Untagged: ctrl | RsvdULP (4) | QN (4) | MSN (4) | MO (4)   18 + 2 octets
 *
 * RDMAP carries the Invalidate STag of Send with Invalidate and Send with SE
 * and Invalidate in the untagged RsvdULP field and sets it to zero in every
 * other untagged message (RFC 5040 section 4.1, RFC 7306 section 4.1).
 */
#define RSW_DDP_TAGGED_HDR_LEN		14	/* without ULPDU_Length */
#define RSW_DDP_UNTAGGED_HDR_LEN	18

struct rsw_ddp_tagged {
	struct rsw_ctrl	c;
	__be32		stag;
	__be64		to;
};

static_assert(sizeof(struct rsw_ddp_tagged) ==
	      RSW_MPA_HDR_LEN + RSW_DDP_TAGGED_HDR_LEN);
static_assert(offsetof(struct rsw_ddp_tagged, to) == 8);

struct rsw_ddp_untagged {
	struct rsw_ctrl	c;
	__be32		inval_stag;	/* DDP RsvdULP */
	__be32		qn;
	__be32		msn;
	__be32		mo;
};

static_assert(sizeof(struct rsw_ddp_untagged) ==
	      RSW_MPA_HDR_LEN + RSW_DDP_UNTAGGED_HDR_LEN);
static_assert(offsetof(struct rsw_ddp_untagged, mo) == 16);

/* Length of the DDP header (without ULPDU_Length) of a segment. */
static inline u32 rsw_ddp_hdr_len(bool tagged)
{
	return tagged ? RSW_DDP_TAGGED_HDR_LEN : RSW_DDP_UNTAGGED_HDR_LEN;
}

/* =========================================================================
 * RDMAP headers that follow the DDP header.
 *
 * Read Request (RFC 5040 section 4.4), also the Terminated RDMA Header:
 *   Sink STag (4) | Sink TO (8) | Read Message Size (4) |
 *   Source STag (4) | Source TO (8)                             28 octets
 */
#define RSW_RDMAP_RREQ_LEN	28

struct rsw_rdmap_rreq {
	__be32	sink_stag;
	__be64	sink_to;
	__be32	read_size;
	__be32	src_stag;
	__be64	src_to;
} __packed;
static_assert(sizeof(struct rsw_rdmap_rreq) == RSW_RDMAP_RREQ_LEN);

/*
 * Terminate header (RFC 5040 section 4.8):
 *
 *   | Layer | EType | Error Code |M|D|R|   Reserved (13)   |   control word
 *   | DDP Segment Length (16)    |  Terminated DDP Header ...   if D
 *   ... Terminated DDP Header: 14 octets tagged, 18 untagged
 *   Terminated RDMA Header: an rsw_rdmap_rreq (28 octets)       if R
 *
 * DDP Segment Length followed by the Terminated DDP Header has exactly the
 * layout of an rsw_ddp_tagged/rsw_ddp_untagged whose mpa_len holds the
 * segment length: a Terminate copies the offending FPDU's first
 * 2 + 14 or 2 + 18 octets there.
 */
struct rsw_rdmap_term {
	__be32	ctrl;
};

static_assert(sizeof(struct rsw_rdmap_term) == 4);

#define RSW_TERM_LAYER		cpu_to_be32(0xf0000000)
#define RSW_TERM_ETYPE		cpu_to_be32(0x0f000000)
#define RSW_TERM_ECODE		cpu_to_be32(0x00ff0000)
#define RSW_TERM_M		cpu_to_be32(0x00008000)	/* segment length valid */
#define RSW_TERM_D		cpu_to_be32(0x00004000)	/* DDP header included */
#define RSW_TERM_R		cpu_to_be32(0x00002000)	/* RDMA header included */
#define RSW_TERM_RESERVED	cpu_to_be32(0x00001fff)

/* Terminate header length for the given included parts. */
static inline u32 rsw_term_hdr_len(bool ddp_hdr, bool tagged, bool rdma_hdr)
{
	u32 len = sizeof(struct rsw_rdmap_term);

	if (ddp_hdr)
		len += RSW_MPA_HDR_LEN + rsw_ddp_hdr_len(tagged);
	if (rdma_hdr)
		len += RSW_RDMAP_RREQ_LEN;
	return len;
}

static inline u8 rsw_term_layer(const struct rsw_rdmap_term *t)
{
	return rsw_be32_get(t->ctrl, RSW_TERM_LAYER);
}

static inline void rsw_term_set_layer(struct rsw_rdmap_term *t, u8 layer)
{
	t->ctrl = rsw_be32_put(t->ctrl, RSW_TERM_LAYER, layer);
}

static inline u8 rsw_term_etype(const struct rsw_rdmap_term *t)
{
	return rsw_be32_get(t->ctrl, RSW_TERM_ETYPE);
}

static inline void rsw_term_set_etype(struct rsw_rdmap_term *t, u8 etype)
{
	t->ctrl = rsw_be32_put(t->ctrl, RSW_TERM_ETYPE, etype);
}

static inline u8 rsw_term_ecode(const struct rsw_rdmap_term *t)
{
	return rsw_be32_get(t->ctrl, RSW_TERM_ECODE);
}

static inline void rsw_term_set_ecode(struct rsw_rdmap_term *t, u8 ecode)
{
	t->ctrl = rsw_be32_put(t->ctrl, RSW_TERM_ECODE, ecode);
}

static inline bool rsw_term_m(const struct rsw_rdmap_term *t)
{
	return t->ctrl & RSW_TERM_M;
}

static inline void rsw_term_set_m(struct rsw_rdmap_term *t, bool on)
{
	t->ctrl = rsw_be32_put(t->ctrl, RSW_TERM_M, on);
}

static inline bool rsw_term_d(const struct rsw_rdmap_term *t)
{
	return t->ctrl & RSW_TERM_D;
}

static inline void rsw_term_set_d(struct rsw_rdmap_term *t, bool on)
{
	t->ctrl = rsw_be32_put(t->ctrl, RSW_TERM_D, on);
}

static inline bool rsw_term_r(const struct rsw_rdmap_term *t)
{
	return t->ctrl & RSW_TERM_R;
}

static inline void rsw_term_set_r(struct rsw_rdmap_term *t, bool on)
{
	t->ctrl = rsw_be32_put(t->ctrl, RSW_TERM_R, on);
}

/* -------------------------------------------------------------------------
 * Terminate layer / error type / error code values.
 *
 * RDMAP: RFC 5040 section 4.8 Figure 9 (and section 7).  DDP: the error
 * types and codes of RFC 5041.  LLP: the MPA error codes of RFC 5044 and the
 * three that RFC 6581 adds (0x05..0x07).
 * RFC 7306 adds no codes: a misaligned atomic target is reported as RDMAP
 * Remote Operation Error, Catastrophic error localized to RDMAP Stream
 * (RFC 7306 section 8.2).
 */
enum rsw_term_layer {
	RSW_TERM_LAYER_RDMAP	= 0x0,
	RSW_TERM_LAYER_DDP	= 0x1,
	RSW_TERM_LAYER_LLP	= 0x2,
};

/*
 * One Terminate cause (RFC 5040 section 4.8): layer, error type and error
 * code, the values above.  Whatever decides, sends, receives or reports
 * a Terminate passes this one type (item 10 of issue 14: three copies of
 * it were copied field by field before).
 */
struct rsw_term_cause {
	u8 layer;	/* enum rsw_term_layer */
	u8 etype;	/* enum rsw_rdmap_etype, rsw_ddp_etype or rsw_llp_etype */
	u8 ecode;
};

#define RSW_TERM_CAUSE(l, t, c) \
	((struct rsw_term_cause){ .layer = (l), .etype = (t), .ecode = (c) })

enum rsw_rdmap_etype {
	RSW_RDMAP_ET_CATASTROPHIC	= 0x0,	/* Local Catastrophic Error */
	RSW_RDMAP_ET_REMOTE_PROT	= 0x1,	/* Remote Protection Error */
	RSW_RDMAP_ET_REMOTE_OP		= 0x2,	/* Remote Operation Error */
};

enum rsw_rdmap_ecode {
	RSW_RDMAP_EC_INVALID_STAG	= 0x00,	/* protection */
	RSW_RDMAP_EC_BASE_BOUNDS	= 0x01,	/* protection */
	RSW_RDMAP_EC_ACCESS		= 0x02,	/* protection */
	RSW_RDMAP_EC_STAG_NOT_ASSOC	= 0x03,	/* protection */
	RSW_RDMAP_EC_TO_WRAP		= 0x04,	/* protection */
	RSW_RDMAP_EC_VERSION		= 0x05,	/* operation */
	RSW_RDMAP_EC_OPCODE		= 0x06,	/* operation */
	RSW_RDMAP_EC_CATASTROPHIC_STREAM = 0x07,	/* operation */
	RSW_RDMAP_EC_CATASTROPHIC_GLOBAL = 0x08,	/* operation */
	RSW_RDMAP_EC_CANT_INVALIDATE	= 0x09,	/* protection and operation */
	RSW_RDMAP_EC_UNSPECIFIED	= 0xff,	/* protection and operation */
};

enum rsw_ddp_etype {
	RSW_DDP_ET_CATASTROPHIC		= 0x0,	/* Local Catastrophic */
	RSW_DDP_ET_TAGGED		= 0x1,	/* Tagged Buffer Error */
	RSW_DDP_ET_UNTAGGED		= 0x2,	/* Untagged Buffer Error */
	RSW_DDP_ET_RSVD_LLP		= 0x3,	/* reserved for the LLP */
};

enum rsw_ddp_ecode {
	/* RSW_DDP_ET_TAGGED */
	RSW_DDP_EC_T_INVALID_STAG	= 0x00,
	RSW_DDP_EC_T_BASE_BOUNDS	= 0x01,
	RSW_DDP_EC_T_STAG_NOT_ASSOC	= 0x02,
	RSW_DDP_EC_T_TO_WRAP		= 0x03,
	RSW_DDP_EC_T_VERSION		= 0x04,
	/* RSW_DDP_ET_UNTAGGED */
	RSW_DDP_EC_U_INVALID_QN		= 0x01,
	RSW_DDP_EC_U_MSN_NO_BUF		= 0x02,
	RSW_DDP_EC_U_MSN_RANGE		= 0x03,
	RSW_DDP_EC_U_INVALID_MO		= 0x04,
	RSW_DDP_EC_U_TOO_LONG		= 0x05,
	RSW_DDP_EC_U_VERSION		= 0x06,
};

enum rsw_llp_etype {
	RSW_LLP_ET_MPA			= 0x0,
};

enum rsw_mpa_ecode {
	RSW_MPA_EC_TCP_LOST		= 0x01,	/* never sent: no stream */
	RSW_MPA_EC_CRC			= 0x02,
	RSW_MPA_EC_MARKER		= 0x03,	/* Marker and ULPDU_Length disagree */
	RSW_MPA_EC_BAD_RR		= 0x04,	/* invalid Request/Reply frame */
	RSW_MPA_EC_CATASTROPHIC		= 0x05,	/* RFC 6581 */
	RSW_MPA_EC_IRD			= 0x06,	/* RFC 6581: insufficient IRD */
	RSW_MPA_EC_NO_RTR		= 0x07,	/* RFC 6581: no matching RTR */
};

static inline const char *rsw_term_rdmap_name(u8 etype, u8 ecode)
{
	bool prot = etype == RSW_RDMAP_ET_REMOTE_PROT;
	bool op = etype == RSW_RDMAP_ET_REMOTE_OP;

	if (etype == RSW_RDMAP_ET_CATASTROPHIC)
		return "RDMAP local catastrophic error";	/* any code */
	if (!prot && !op)
		return NULL;
	switch (ecode) {
	case RSW_RDMAP_EC_INVALID_STAG:
		return prot ? "RDMAP invalid STag" : NULL;
	case RSW_RDMAP_EC_BASE_BOUNDS:
		return prot ? "RDMAP base or bounds violation" : NULL;
	case RSW_RDMAP_EC_ACCESS:
		return prot ? "RDMAP access rights violation" : NULL;
	case RSW_RDMAP_EC_STAG_NOT_ASSOC:
		return prot ? "RDMAP STag not associated with stream" : NULL;
	case RSW_RDMAP_EC_TO_WRAP:
		return prot ? "RDMAP TO wrap" : NULL;
	case RSW_RDMAP_EC_VERSION:
		return op ? "RDMAP invalid version" : NULL;
	case RSW_RDMAP_EC_OPCODE:
		return op ? "RDMAP unexpected opcode" : NULL;
	case RSW_RDMAP_EC_CATASTROPHIC_STREAM:
		return op ? "RDMAP catastrophic error, stream" : NULL;
	case RSW_RDMAP_EC_CATASTROPHIC_GLOBAL:
		return op ? "RDMAP catastrophic error, global" : NULL;
	case RSW_RDMAP_EC_CANT_INVALIDATE:
		return prot ? "RDMAP protection: STag cannot be invalidated" :
			      "RDMAP operation: STag cannot be invalidated";
	case RSW_RDMAP_EC_UNSPECIFIED:
		return prot ? "RDMAP protection: unspecified" :
			      "RDMAP operation: unspecified";
	}
	return NULL;
}

static inline const char *rsw_term_ddp_name(u8 etype, u8 ecode)
{
	if (etype == RSW_DDP_ET_CATASTROPHIC)
		return "DDP local catastrophic error";		/* any code */
	if (etype == RSW_DDP_ET_TAGGED) {
		switch (ecode) {
		case RSW_DDP_EC_T_INVALID_STAG:
			return "DDP tagged: invalid STag";
		case RSW_DDP_EC_T_BASE_BOUNDS:
			return "DDP tagged: base or bounds violation";
		case RSW_DDP_EC_T_STAG_NOT_ASSOC:
			return "DDP tagged: STag not associated with stream";
		case RSW_DDP_EC_T_TO_WRAP:
			return "DDP tagged: TO wrap";
		case RSW_DDP_EC_T_VERSION:
			return "DDP tagged: invalid DDP version";
		}
		return NULL;
	}
	if (etype != RSW_DDP_ET_UNTAGGED)
		return NULL;
	switch (ecode) {
	case RSW_DDP_EC_U_INVALID_QN:
		return "DDP untagged: invalid QN";
	case RSW_DDP_EC_U_MSN_NO_BUF:
		return "DDP untagged: invalid MSN, no buffer";
	case RSW_DDP_EC_U_MSN_RANGE:
		return "DDP untagged: invalid MSN, out of range";
	case RSW_DDP_EC_U_INVALID_MO:
		return "DDP untagged: invalid MO";
	case RSW_DDP_EC_U_TOO_LONG:
		return "DDP untagged: message too long for buffer";
	case RSW_DDP_EC_U_VERSION:
		return "DDP untagged: invalid DDP version";
	}
	return NULL;
}

static inline const char *rsw_term_llp_name(u8 etype, u8 ecode)
{
	if (etype != RSW_LLP_ET_MPA)
		return NULL;
	switch (ecode) {
	case RSW_MPA_EC_TCP_LOST:
		return "MPA: TCP connection lost";
	case RSW_MPA_EC_CRC:
		return "MPA: CRC error";
	case RSW_MPA_EC_MARKER:
		return "MPA: Marker and ULPDU_Length disagree";
	case RSW_MPA_EC_BAD_RR:
		return "MPA: invalid Request or Reply frame";
	case RSW_MPA_EC_CATASTROPHIC:
		return "MPA: local catastrophic error";
	case RSW_MPA_EC_IRD:
		return "MPA: insufficient IRD resources";
	case RSW_MPA_EC_NO_RTR:
		return "MPA: no matching RTR";
	}
	return NULL;
}

/*
 * Name of a Terminate layer/type/code triple, or NULL if the RFCs do not
 * define it.  This is the table of every value a Terminate may carry.
 */
static inline const char *rsw_term_name(u8 layer, u8 etype, u8 ecode)
{
	switch (layer) {
	case RSW_TERM_LAYER_RDMAP:
		return rsw_term_rdmap_name(etype, ecode);
	case RSW_TERM_LAYER_DDP:
		return rsw_term_ddp_name(etype, ecode);
	case RSW_TERM_LAYER_LLP:
		return rsw_term_llp_name(etype, ecode);
	}
	return NULL;
}

/* -------------------------------------------------------------------------
 * RFC 7306 headers.
 *
 * Atomic Request (section 5.2.1):
 *   Reserved (28) | AOpCode (4) | Request Identifier (4) | Remote STag (4) |
 *   Remote TO (8) | Add or Swap Data (8) | Add or Swap Mask (8) |
 *   Compare Data (8) | Compare Mask (8)                         52 octets
 */
enum rsw_atomic_op {
	RSW_ATOMIC_FETCH_ADD	= 0x0,
	RSW_ATOMIC_SWAP		= 0x1,
	RSW_ATOMIC_CMP_SWAP	= 0x2,
	RSW_ATOMIC_NUM		= 0x3,	/* 0x3..0xf are reserved */
};

#define RSW_ATOMIC_REQ_LEN	52
#define RSW_ATOMIC_RESP_LEN	12
#define RSW_ATOMIC_AOPCODE	cpu_to_be32(0x0000000f)
#define RSW_ATOMIC_RESERVED	cpu_to_be32(0xfffffff0)
#define RSW_ATOMIC_MASK_ALL	(~0ULL)	/* "not used" mask value on send */

struct rsw_rdmap_atomic_req {
	__be32	aopcode;	/* Reserved | AOpCode */
	__be32	req_id;
	__be32	stag;
	__be64	to;
	__be64	data;		/* Add Data or Swap Data */
	__be64	data_mask;	/* Add Mask or Swap Mask */
	__be64	cmp;		/* Compare Data */
	__be64	cmp_mask;	/* Compare Mask */
} __packed;
static_assert(sizeof(struct rsw_rdmap_atomic_req) == RSW_ATOMIC_REQ_LEN);

/* Atomic Response (section 5.2.2): Original Request Identifier, Value. */
struct rsw_rdmap_atomic_resp {
	__be32	req_id;
	__be64	orig;
} __packed;
static_assert(sizeof(struct rsw_rdmap_atomic_resp) == RSW_ATOMIC_RESP_LEN);

static inline u8 rsw_atomic_op(const struct rsw_rdmap_atomic_req *a)
{
	return rsw_be32_get(a->aopcode, RSW_ATOMIC_AOPCODE);
}

static inline void rsw_atomic_set_op(struct rsw_rdmap_atomic_req *a, u8 op)
{
	a->aopcode = rsw_be32_put(a->aopcode, RSW_ATOMIC_AOPCODE, op);
}

static inline u32 rsw_atomic_reserved(const struct rsw_rdmap_atomic_req *a)
{
	return rsw_be32_get(a->aopcode, RSW_ATOMIC_RESERVED);
}

/*
 * Fill the operand fields of an atomic request for @op, applying the
 * transmit rules of RFC 7306 Figure 5: a field the operation does not use is
 * sent as zero (Compare Data) or all ones (masks).
 *   FetchAdd: @data = Add Data, @data_mask = Add Mask (0: one 64-bit add)
 *   Swap:     @data = Swap Data
 *   CmpSwap:  all four (all-ones masks give the unmasked operation)
 */
static inline void rsw_atomic_set_operands(struct rsw_rdmap_atomic_req *a,
					   enum rsw_atomic_op op,
					   u64 data, u64 data_mask,
					   u64 cmp, u64 cmp_mask)
{
	if (op == RSW_ATOMIC_SWAP)
		data_mask = RSW_ATOMIC_MASK_ALL;
	if (op != RSW_ATOMIC_CMP_SWAP) {
		cmp = 0;
		cmp_mask = RSW_ATOMIC_MASK_ALL;
	}
	a->data = cpu_to_be64(data);
	a->data_mask = cpu_to_be64(data_mask);
	a->cmp = cpu_to_be64(cmp);
	a->cmp_mask = cpu_to_be64(cmp_mask);
}

/* Immediate Data (section 6.2): eight octets, opaque to RDMAP. */
#define RSW_IMM_DATA_LEN	8

struct rsw_rdmap_imm {
	__be64	data;
} __packed;
static_assert(sizeof(struct rsw_rdmap_imm) == RSW_IMM_DATA_LEN);

/* =========================================================================
 * Complete FPDU headers (ULPDU_Length through the last RDMAP header field).
 */
struct rsw_hdr_rreq {
	struct rsw_ddp_untagged		ddp;
	struct rsw_rdmap_rreq		rreq;
};

static_assert(sizeof(struct rsw_hdr_rreq) == 48);
static_assert(offsetof(struct rsw_hdr_rreq, rreq) == 20);

struct rsw_hdr_term {
	struct rsw_ddp_untagged		ddp;
	struct rsw_rdmap_term		term;
	/* optional parts, see rsw_term_hdr_len() */
};

static_assert(sizeof(struct rsw_hdr_term) == 24);

struct rsw_hdr_atomic_req {
	struct rsw_ddp_untagged		ddp;
	struct rsw_rdmap_atomic_req	atomic;
};

static_assert(sizeof(struct rsw_hdr_atomic_req) == 72);

struct rsw_hdr_atomic_resp {
	struct rsw_ddp_untagged		ddp;
	struct rsw_rdmap_atomic_resp	atomic;
};

static_assert(sizeof(struct rsw_hdr_atomic_resp) == 32);

struct rsw_hdr_imm {
	struct rsw_ddp_untagged		ddp;
	struct rsw_rdmap_imm		imm;
};

static_assert(sizeof(struct rsw_hdr_imm) == 28);

/* Any FPDU header; the largest ones are the Atomic Request and a Terminate
 * with both optional headers.
 */
union rsw_hdr {
	struct rsw_ctrl			c;
	struct rsw_ddp_tagged		tagged;		/* Write, Read Response */
	struct rsw_ddp_untagged		untagged;	/* Send variants */
	struct rsw_hdr_rreq		rreq;
	struct rsw_hdr_term		term;
	struct rsw_hdr_atomic_req	atomic_req;
	struct rsw_hdr_atomic_resp	atomic_resp;
	struct rsw_hdr_imm		imm;
};

#define RSW_HDR_MAX_LEN		72
static_assert(sizeof(union rsw_hdr) == RSW_HDR_MAX_LEN);
static_assert(sizeof(struct rsw_hdr_term) + RSW_MPA_HDR_LEN +
	      RSW_DDP_UNTAGGED_HDR_LEN + RSW_RDMAP_RREQ_LEN <= RSW_HDR_MAX_LEN);

/* The per-opcode facts are one table: opcode.h. */

#endif /* _RDMAP_SW_WIRE_H */
