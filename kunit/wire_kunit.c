// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite rdmap_sw_wire: the on-wire formats of wire.h, checked against
 * the octets the RFC figures prescribe, so that a field in the wrong bit
 * position or a setter that disturbs its neighbours fails.
 */
#include <kunit/test.h>
#include <linux/module.h>
#include <linux/string.h>

#include "wire.h"
#include "compat.h"
#include "opcode.h"

RSW_IMPORT_KUNIT_NS();

/* Big-endian value of @width octets at @p. */
static u32 load_be(const u8 *p, unsigned int width)
{
	u32 v = 0;

	while (width--)
		v = v << 8 | *p++;
	return v;
}

/* -------------------------------------------------------------------------
 * Sizes of every on-wire struct (the static_asserts in wire.h say the same;
 * this keeps the numbers visible in the test report).
 */
struct size_case {
	const char *name;
	size_t size;
	size_t expect;
};

static const struct size_case size_cases[] = {
	{ "mpa_rr", sizeof(struct rsw_mpa_rr), 20 },
	{ "mpa_v2", sizeof(struct rsw_mpa_v2), 4 },
	{ "mpa_marker", sizeof(struct rsw_mpa_marker), 4 },
	{ "mpa_trailer", sizeof(struct rsw_mpa_trailer), 4 },
	{ "ctrl", sizeof(struct rsw_ctrl), 4 },
	{ "ddp_tagged", sizeof(struct rsw_ddp_tagged), 2 + 14 },
	{ "ddp_untagged", sizeof(struct rsw_ddp_untagged), 2 + 18 },
	{ "rdmap_rreq", sizeof(struct rsw_rdmap_rreq), 28 },
	{ "rdmap_term", sizeof(struct rsw_rdmap_term), 4 },
	{ "rdmap_atomic_req", sizeof(struct rsw_rdmap_atomic_req), 52 },
	{ "rdmap_atomic_resp", sizeof(struct rsw_rdmap_atomic_resp), 12 },
	{ "rdmap_imm", sizeof(struct rsw_rdmap_imm), 8 },
	{ "hdr_rreq", sizeof(struct rsw_hdr_rreq), 48 },
	{ "hdr_term", sizeof(struct rsw_hdr_term), 24 },
	{ "hdr_atomic_req", sizeof(struct rsw_hdr_atomic_req), 72 },
	{ "hdr_atomic_resp", sizeof(struct rsw_hdr_atomic_resp), 32 },
	{ "hdr_imm", sizeof(struct rsw_hdr_imm), 28 },
	{ "hdr_union", sizeof(union rsw_hdr), RSW_HDR_MAX_LEN },
};

KUNIT_ARRAY_PARAM_DESC(size, size_cases, name);

static void wire_struct_size(struct kunit *test)
{
	const struct size_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, c->size, c->expect);
}

/* -------------------------------------------------------------------------
 * MPA Request/Reply frame.
 */
static void wire_mpa_keys(struct kunit *test)
{
	static const u8 req[RSW_MPA_KEY_LEN] = {
		0x4d, 0x50, 0x41, 0x20, 0x49, 0x44, 0x20, 0x52,
		0x65, 0x71, 0x20, 0x46, 0x72, 0x61, 0x6d, 0x65,
	};
	static const u8 rep[RSW_MPA_KEY_LEN] = {
		0x4d, 0x50, 0x41, 0x20, 0x49, 0x44, 0x20, 0x52,
		0x65, 0x70, 0x20, 0x46, 0x72, 0x61, 0x6d, 0x65,
	};

	KUNIT_EXPECT_MEMEQ(test, RSW_MPA_KEY_REQ, req, RSW_MPA_KEY_LEN);
	KUNIT_EXPECT_MEMEQ(test, RSW_MPA_KEY_REP, rep, RSW_MPA_KEY_LEN);
	KUNIT_EXPECT_EQ(test, rsw_mpa_rr_len(0), 20U);
	KUNIT_EXPECT_EQ(test, rsw_mpa_rr_len(RSW_MPA_MAX_PD), 532U);
	KUNIT_EXPECT_EQ(test, RSW_MPA_V2_MAX_ULP_PD, 508U);
}

struct rr_case {
	const char *name;
	bool m, c, r, s;
	u8 rev;
	u16 pd_len;
	u8 bytes[4];		/* frame octets 16..19 */
};

static const struct rr_case rr_cases[] = {
	{ "rev1_no_flags", 0, 0, 0, 0, 1, 0, { 0x00, 0x01, 0x00, 0x00 } },
	{ "markers", 1, 0, 0, 0, 1, 0, { 0x80, 0x01, 0x00, 0x00 } },
	{ "crc", 0, 1, 0, 0, 1, 0, { 0x40, 0x01, 0x00, 0x00 } },
	{ "reject", 0, 0, 1, 0, 1, 0, { 0x20, 0x01, 0x00, 0x00 } },
	{ "enhanced_rev2", 0, 0, 0, 1, 2, 4, { 0x10, 0x02, 0x00, 0x04 } },
	{ "all_flags_pd_max", 1, 1, 1, 1, 2, 512, { 0xf0, 0x02, 0x02, 0x00 } },
	{ "pd_len_bytes", 0, 1, 0, 0, 1, 0x1234, { 0x40, 0x01, 0x12, 0x34 } },
	{ "rev_255", 0, 0, 0, 0, 0xff, 0, { 0x00, 0xff, 0x00, 0x00 } },
};

KUNIT_ARRAY_PARAM_DESC(rr, rr_cases, name);

static void wire_mpa_rr_encode(struct kunit *test)
{
	const struct rr_case *c = test->param_value;
	struct rsw_mpa_rr rr;

	memset(&rr, 0, sizeof(rr));
	memcpy(rr.key, RSW_MPA_KEY_REQ, RSW_MPA_KEY_LEN);
	rsw_mpa_rr_set_markers(&rr, c->m);
	rsw_mpa_rr_set_crc(&rr, c->c);
	rsw_mpa_rr_set_reject(&rr, c->r);
	rsw_mpa_rr_set_enhanced(&rr, c->s);
	rsw_mpa_rr_set_rev(&rr, c->rev);
	rsw_mpa_rr_set_pd_len(&rr, c->pd_len);

	KUNIT_EXPECT_MEMEQ(test, rr.key, RSW_MPA_KEY_REQ, RSW_MPA_KEY_LEN);
	KUNIT_EXPECT_MEMEQ(test, (u8 *)&rr + 16, c->bytes, 4);
}

static void wire_mpa_rr_decode(struct kunit *test)
{
	const struct rr_case *c = test->param_value;
	struct rsw_mpa_rr rr;

	memset(&rr, 0, sizeof(rr));
	memcpy((u8 *)&rr + 16, c->bytes, 4);
	KUNIT_EXPECT_EQ(test, rsw_mpa_rr_markers(&rr), c->m);
	KUNIT_EXPECT_EQ(test, rsw_mpa_rr_crc(&rr), c->c);
	KUNIT_EXPECT_EQ(test, rsw_mpa_rr_reject(&rr), c->r);
	KUNIT_EXPECT_EQ(test, rsw_mpa_rr_enhanced(&rr), c->s);
	KUNIT_EXPECT_EQ(test, rsw_mpa_rr_rev(&rr), c->rev);
	KUNIT_EXPECT_EQ(test, rsw_mpa_rr_pd_len(&rr), c->pd_len);
	KUNIT_EXPECT_EQ(test, rsw_mpa_rr_reserved(&rr), 0);
}

/* -------------------------------------------------------------------------
 * RFC 6581 IRD/ORD word: P2P, RTR Send, IRD | RTR Write, RTR Read, ORD
 */
struct v2_case {
	const char *name;
	u16 ird, ord;
	bool p2p;
	unsigned int rtr;
	u8 bytes[4];
};

static const struct v2_case v2_cases[] = {
	{ "ird1_ord1", 1, 1, 0, RSW_MPA_RTR_NONE, { 0x00, 0x01, 0x00, 0x01 } },
	{ "p2p_ird16_ord8", 16, 8, 1, RSW_MPA_RTR_NONE,
	  { 0x80, 0x10, 0x00, 0x08 } },
	{ "p2p_rtr_write", 0, 0, 1, RSW_MPA_RTR_WRITE,
	  { 0x80, 0x00, 0x80, 0x00 } },
	{ "p2p_rtr_read", 0, 0, 1, RSW_MPA_RTR_READ,
	  { 0x80, 0x00, 0x40, 0x00 } },
	{ "p2p_rtr_send", 0, 0, 1, RSW_MPA_RTR_SEND,
	  { 0xc0, 0x00, 0x00, 0x00 } },
	{ "p2p_all_rtr_128", 128, 128, 1,
	  RSW_MPA_RTR_WRITE | RSW_MPA_RTR_READ | RSW_MPA_RTR_SEND,
	  { 0xc0, 0x80, 0xc0, 0x80 } },
	{ "ird_ord_max", RSW_MPA_V2_IRD_ORD_MAX, RSW_MPA_V2_IRD_ORD_MAX, 0,
	  RSW_MPA_RTR_NONE, { 0x3f, 0xff, 0x3f, 0xff } },
	{ "ird_ord_distinct", 0x1234, 0x0567, 0, RSW_MPA_RTR_NONE,
	  { 0x12, 0x34, 0x05, 0x67 } },
};

KUNIT_ARRAY_PARAM_DESC(v2, v2_cases, name);

static void wire_mpa_v2_encode(struct kunit *test)
{
	const struct v2_case *c = test->param_value;
	struct rsw_mpa_v2 v2 = {};

	rsw_mpa_v2_set_ird(&v2, c->ird);
	rsw_mpa_v2_set_ord(&v2, c->ord);
	rsw_mpa_v2_set_p2p(&v2, c->p2p);
	rsw_mpa_v2_set_rtr(&v2, c->rtr);
	KUNIT_EXPECT_MEMEQ(test, &v2, c->bytes, 4);
}

static void wire_mpa_v2_decode(struct kunit *test)
{
	const struct v2_case *c = test->param_value;
	struct rsw_mpa_v2 v2;

	memcpy(&v2, c->bytes, 4);
	KUNIT_EXPECT_EQ(test, rsw_mpa_v2_ird(&v2), c->ird);
	KUNIT_EXPECT_EQ(test, rsw_mpa_v2_ord(&v2), c->ord);
	KUNIT_EXPECT_EQ(test, rsw_mpa_v2_p2p(&v2), c->p2p);
	KUNIT_EXPECT_EQ(test, rsw_mpa_v2_rtr(&v2), c->rtr);
}

/* -------------------------------------------------------------------------
 * Field isolation: every accessor touches exactly its own bits.  Each field
 * is described by the offset and width of the big-endian word holding it and
 * its mask in that word.
 */
enum fid {
	F_MPA_M, F_MPA_C, F_MPA_R, F_MPA_S, F_MPA_REV, F_MPA_PD_LEN,
	F_V2_P2P, F_V2_RTR_SEND, F_V2_IRD, F_V2_RTR_WRITE, F_V2_RTR_READ,
	F_V2_ORD, F_MPA_LEN, F_DDP_T, F_DDP_L, F_DDP_DV, F_RDMAP_RV,
	F_RDMAP_OP, F_TERM_LAYER, F_TERM_ETYPE, F_TERM_ECODE, F_TERM_M,
	F_TERM_D, F_TERM_R, F_ATOMIC_OP,
};

struct field_case {
	const char *name;
	enum fid id;
	unsigned int off;	/* of the word in the struct */
	unsigned int width;	/* 2 or 4 */
	u32 mask;		/* host order, within the word */
};

static const struct field_case field_cases[] = {
	{ "mpa_rr_M", F_MPA_M, 16, 2, 0x8000 },
	{ "mpa_rr_C", F_MPA_C, 16, 2, 0x4000 },
	{ "mpa_rr_R", F_MPA_R, 16, 2, 0x2000 },
	{ "mpa_rr_S", F_MPA_S, 16, 2, 0x1000 },
	{ "mpa_rr_rev", F_MPA_REV, 16, 2, 0x00ff },
	{ "mpa_rr_pd_len", F_MPA_PD_LEN, 18, 2, 0xffff },
	{ "v2_p2p", F_V2_P2P, 0, 2, 0x8000 },
	{ "v2_rtr_send", F_V2_RTR_SEND, 0, 2, 0x4000 },
	{ "v2_ird", F_V2_IRD, 0, 2, 0x3fff },
	{ "v2_rtr_write", F_V2_RTR_WRITE, 2, 2, 0x8000 },
	{ "v2_rtr_read", F_V2_RTR_READ, 2, 2, 0x4000 },
	{ "v2_ord", F_V2_ORD, 2, 2, 0x3fff },
	{ "mpa_len", F_MPA_LEN, 0, 2, 0xffff },
	{ "ddp_T", F_DDP_T, 2, 2, 0x8000 },
	{ "ddp_L", F_DDP_L, 2, 2, 0x4000 },
	{ "ddp_DV", F_DDP_DV, 2, 2, 0x0300 },
	{ "rdmap_RV", F_RDMAP_RV, 2, 2, 0x00c0 },
	{ "rdmap_opcode", F_RDMAP_OP, 2, 2, 0x000f },
	{ "term_layer", F_TERM_LAYER, 0, 4, 0xf0000000 },
	{ "term_etype", F_TERM_ETYPE, 0, 4, 0x0f000000 },
	{ "term_ecode", F_TERM_ECODE, 0, 4, 0x00ff0000 },
	{ "term_M", F_TERM_M, 0, 4, 0x00008000 },
	{ "term_D", F_TERM_D, 0, 4, 0x00004000 },
	{ "term_R", F_TERM_R, 0, 4, 0x00002000 },
	{ "atomic_aopcode", F_ATOMIC_OP, 0, 4, 0x0000000f },
};

KUNIT_ARRAY_PARAM_DESC(field, field_cases, name);

/* Big enough for every struct the field table points into. */
union field_buf {
	struct rsw_mpa_rr rr;
	struct rsw_mpa_v2 v2;
	struct rsw_ctrl c;
	struct rsw_rdmap_term t;
	struct rsw_rdmap_atomic_req a;
	u8 b[64];
};

static void v2_put_rtr(struct rsw_mpa_v2 *v2, unsigned int bit, u32 on)
{
	unsigned int rtr = rsw_mpa_v2_rtr(v2);

	rsw_mpa_v2_set_rtr(v2, on ? rtr | bit : rtr & ~bit);
}

/* MPA Request/Reply and RFC 6581 fields; false if @id is not one. */
static bool field_set_mpa(union field_buf *u, enum fid id, u32 v)
{
	switch (id) {
	case F_MPA_M:
		rsw_mpa_rr_set_markers(&u->rr, v);
		break;
	case F_MPA_C:
		rsw_mpa_rr_set_crc(&u->rr, v);
		break;
	case F_MPA_R:
		rsw_mpa_rr_set_reject(&u->rr, v);
		break;
	case F_MPA_S:
		rsw_mpa_rr_set_enhanced(&u->rr, v);
		break;
	case F_MPA_REV:
		rsw_mpa_rr_set_rev(&u->rr, v);
		break;
	case F_MPA_PD_LEN:
		rsw_mpa_rr_set_pd_len(&u->rr, v);
		break;
	case F_V2_P2P:
		rsw_mpa_v2_set_p2p(&u->v2, v);
		break;
	case F_V2_RTR_SEND:
		v2_put_rtr(&u->v2, RSW_MPA_RTR_SEND, v);
		break;
	case F_V2_IRD:
		rsw_mpa_v2_set_ird(&u->v2, v);
		break;
	case F_V2_RTR_WRITE:
		v2_put_rtr(&u->v2, RSW_MPA_RTR_WRITE, v);
		break;
	case F_V2_RTR_READ:
		v2_put_rtr(&u->v2, RSW_MPA_RTR_READ, v);
		break;
	case F_V2_ORD:
		rsw_mpa_v2_set_ord(&u->v2, v);
		break;
	default:
		return false;
	}
	return true;
}

/* DDP/RDMAP control, Terminate and atomic fields. */
static void field_set_ddp(union field_buf *u, enum fid id, u32 v)
{
	switch (id) {
	case F_MPA_LEN:
		rsw_set_mpa_len(&u->c, v);
		break;
	case F_DDP_T:
		rsw_ddp_set_tagged(&u->c, v);
		break;
	case F_DDP_L:
		rsw_ddp_set_last(&u->c, v);
		break;
	case F_DDP_DV:
		rsw_ddp_set_version(&u->c, v);
		break;
	case F_RDMAP_RV:
		rsw_rdmap_set_version(&u->c, v);
		break;
	case F_RDMAP_OP:
		rsw_rdmap_set_opcode(&u->c, v);
		break;
	case F_TERM_LAYER:
		rsw_term_set_layer(&u->t, v);
		break;
	case F_TERM_ETYPE:
		rsw_term_set_etype(&u->t, v);
		break;
	case F_TERM_ECODE:
		rsw_term_set_ecode(&u->t, v);
		break;
	case F_TERM_M:
		rsw_term_set_m(&u->t, v);
		break;
	case F_TERM_D:
		rsw_term_set_d(&u->t, v);
		break;
	case F_TERM_R:
		rsw_term_set_r(&u->t, v);
		break;
	case F_ATOMIC_OP:
		rsw_atomic_set_op(&u->a, v);
		break;
	default:
		break;
	}
}

static void field_set(union field_buf *u, enum fid id, u32 v)
{
	if (!field_set_mpa(u, id, v))
		field_set_ddp(u, id, v);
}

static u32 field_get(const union field_buf *u, enum fid id)
{
	switch (id) {
	case F_MPA_M:
		return rsw_mpa_rr_markers(&u->rr);
	case F_MPA_C:
		return rsw_mpa_rr_crc(&u->rr);
	case F_MPA_R:
		return rsw_mpa_rr_reject(&u->rr);
	case F_MPA_S:
		return rsw_mpa_rr_enhanced(&u->rr);
	case F_MPA_REV:
		return rsw_mpa_rr_rev(&u->rr);
	case F_MPA_PD_LEN:
		return rsw_mpa_rr_pd_len(&u->rr);
	case F_V2_P2P:
		return rsw_mpa_v2_p2p(&u->v2);
	case F_V2_RTR_SEND:
		return !!(rsw_mpa_v2_rtr(&u->v2) &
			  RSW_MPA_RTR_SEND);
	case F_V2_IRD:
		return rsw_mpa_v2_ird(&u->v2);
	case F_V2_RTR_WRITE:
		return !!(rsw_mpa_v2_rtr(&u->v2) &
			  RSW_MPA_RTR_WRITE);
	case F_V2_RTR_READ:
		return !!(rsw_mpa_v2_rtr(&u->v2) &
			  RSW_MPA_RTR_READ);
	case F_V2_ORD:
		return rsw_mpa_v2_ord(&u->v2);
	case F_MPA_LEN:
		return rsw_mpa_len(&u->c);
	case F_DDP_T:
		return rsw_ddp_tagged(&u->c);
	case F_DDP_L:
		return rsw_ddp_last(&u->c);
	case F_DDP_DV:
		return rsw_ddp_version(&u->c);
	case F_RDMAP_RV:
		return rsw_rdmap_version(&u->c);
	case F_RDMAP_OP:
		return rsw_rdmap_opcode(&u->c);
	case F_TERM_LAYER:
		return rsw_term_layer(&u->t);
	case F_TERM_ETYPE:
		return rsw_term_etype(&u->t);
	case F_TERM_ECODE:
		return rsw_term_ecode(&u->t);
	case F_TERM_M:
		return rsw_term_m(&u->t);
	case F_TERM_D:
		return rsw_term_d(&u->t);
	case F_TERM_R:
		return rsw_term_r(&u->t);
	case F_ATOMIC_OP:
		return rsw_atomic_op(&u->a);
	}
	return 0;
}

/* All octets outside the field's word still hold @fill. */
static void expect_rest(struct kunit *test, const struct field_case *c,
			const union field_buf *u, u8 fill)
{
	unsigned int i, bad = 0;

	for (i = 0; i < sizeof(u->b); i++)
		if ((i < c->off || i >= c->off + c->width) && u->b[i] != fill)
			bad++;
	KUNIT_EXPECT_EQ_MSG(test, bad, 0U, "octets outside the field changed");
}

/* Setting the largest value on a zeroed struct sets exactly the mask. */
static void wire_field_set_exact(struct kunit *test)
{
	const struct field_case *c = test->param_value;
	u32 max = c->mask >> __builtin_ctz(c->mask);
	union field_buf u;

	memset(&u, 0, sizeof(u));
	field_set(&u, c->id, max);
	KUNIT_EXPECT_EQ(test, load_be(u.b + c->off, c->width), c->mask);
	KUNIT_EXPECT_EQ(test, field_get(&u, c->id), max);
	expect_rest(test, c, &u, 0);
}

/* Clearing a field on an all-ones struct clears exactly the mask. */
static void wire_field_clear_exact(struct kunit *test)
{
	const struct field_case *c = test->param_value;
	u32 word = c->width == 4 ? ~0U : 0xffff;
	union field_buf u;

	memset(&u, 0xff, sizeof(u));
	field_set(&u, c->id, 0);
	KUNIT_EXPECT_EQ(test, load_be(u.b + c->off, c->width),
			word & ~c->mask);
	KUNIT_EXPECT_EQ(test, field_get(&u, c->id), 0U);
	expect_rest(test, c, &u, 0xff);
}

/* A value wider than the field is cut to the field, never spills over. */
static void wire_field_overflow_masked(struct kunit *test)
{
	const struct field_case *c = test->param_value;
	union field_buf u;

	memset(&u, 0, sizeof(u));
	field_set(&u, c->id, ~0U);
	KUNIT_EXPECT_EQ(test, load_be(u.b + c->off, c->width) & ~c->mask, 0U);
	expect_rest(test, c, &u, 0);
}

/* -------------------------------------------------------------------------
 * RDMAP opcodes: RFC 5040 Figures 4 and 5, RFC 7306 Figures 2 and 3.
 */
struct op_case {
	const char *name;
	u8 op;
	bool tagged;
	enum rsw_ddp_qn qn;	/* untagged only */
	bool payload;
	bool inval;
	u32 hdr_len;
	u8 ctrl_last[2];	/* DDP + RDMAP control octets, L = 1 */
};

static const struct op_case op_cases[] = {
	{ "write", RSW_OP_WRITE, 1, 0, 1, 0, 16, { 0xc1, 0x40 } },
	{ "read_req", RSW_OP_READ_REQ, 0, 1, 0, 0, 48, { 0x41, 0x41 } },
	{ "read_resp", RSW_OP_READ_RESP, 1, 0, 1, 0, 16, { 0xc1, 0x42 } },
	{ "send", RSW_OP_SEND, 0, 0, 1, 0, 20, { 0x41, 0x43 } },
	{ "send_inv", RSW_OP_SEND_INV, 0, 0, 1, 1, 20, { 0x41, 0x44 } },
	{ "send_se", RSW_OP_SEND_SE, 0, 0, 1, 0, 20, { 0x41, 0x45 } },
	{ "send_se_inv", RSW_OP_SEND_SE_INV, 0, 0, 1, 1, 20, { 0x41, 0x46 } },
	{ "terminate", RSW_OP_TERMINATE, 0, 2, 0, 0, 24, { 0x41, 0x47 } },
	{ "imm_data", RSW_OP_IMM_DATA, 0, 0, 0, 0, 28, { 0x41, 0x48 } },
	{ "imm_data_se", RSW_OP_IMM_DATA_SE, 0, 0, 0, 0, 28, { 0x41, 0x49 } },
	{ "atomic_req", RSW_OP_ATOMIC_REQ, 0, 1, 0, 0, 72, { 0x41, 0x4a } },
	{ "atomic_resp", RSW_OP_ATOMIC_RESP, 0, 3, 0, 0, 32, { 0x41, 0x4b } },
};

KUNIT_ARRAY_PARAM_DESC(op, op_cases, name);

static void wire_opcode_facts(struct kunit *test)
{
	const struct op_case *c = test->param_value;

	KUNIT_EXPECT_TRUE(test, rsw_rdmap_op_valid(c->op));
	KUNIT_EXPECT_EQ(test, rsw_rdmap_op_tagged(c->op), c->tagged);
	if (!c->tagged)
		KUNIT_EXPECT_EQ(test, rsw_rdmap_op_qn(c->op), c->qn);
	KUNIT_EXPECT_EQ(test, rsw_rdmap_op_payload(c->op), c->payload);
	KUNIT_EXPECT_EQ(test, rsw_rdmap_op_inval(c->op), c->inval);
	KUNIT_EXPECT_EQ(test, rsw_rdmap_hdr_len(c->op), c->hdr_len);
	KUNIT_EXPECT_STRNEQ(test, rsw_rdmap_op_name(c->op), "RESERVED");
}

static void wire_ctrl_word(struct kunit *test)
{
	const struct op_case *c = test->param_value;
	__be16 last = rsw_ctrl_word(c->op, true);
	__be16 more = rsw_ctrl_word(c->op, false);
	u8 more_bytes[2] = { c->ctrl_last[0] & ~0x40, c->ctrl_last[1] };
	struct rsw_ctrl ctrl = { .ctrl = last };

	KUNIT_EXPECT_MEMEQ(test, &last, c->ctrl_last, 2);
	KUNIT_EXPECT_MEMEQ(test, &more, more_bytes, 2);
	KUNIT_EXPECT_EQ(test, rsw_ddp_version(&ctrl), RSW_DDP_VERSION);
	KUNIT_EXPECT_EQ(test, rsw_rdmap_version(&ctrl), RSW_RDMAP_VERSION);
	KUNIT_EXPECT_EQ(test, rsw_ddp_reserved(&ctrl), 0);
	KUNIT_EXPECT_EQ(test, rsw_rdmap_reserved(&ctrl), 0);
	KUNIT_EXPECT_EQ(test, rsw_rdmap_opcode(&ctrl), c->op);
}

/*
 * Every opcode of RFC 5040 and RFC 7306 is implemented: each row has the
 * three handlers its callers use without looking (the parser's check, the
 * stream's delivery, the TX header builder).
 */
static void wire_opcode_handlers(struct kunit *test)
{
	const struct op_case *c = test->param_value;
	const struct rsw_rdmap_op *row = rsw_rdmap_op(c->op);

	KUNIT_ASSERT_NOT_NULL(test, row);
	KUNIT_EXPECT_NOT_NULL(test, row->rx_check);
	KUNIT_EXPECT_NOT_NULL(test, row->deliver);
	KUNIT_EXPECT_NOT_NULL(test, row->tx_hdr);
	KUNIT_EXPECT_STREQ(test, row->name, rsw_rdmap_op_name(c->op));
}

/* Opcodes 1100b..1111b are reserved by RFC 5040 and RFC 7306. */
static void wire_reserved_opcodes(struct kunit *test)
{
	u8 op;

	for (op = RSW_OP_NUM; op < 16; op++) {
		KUNIT_EXPECT_FALSE(test, rsw_rdmap_op_valid(op));
		KUNIT_EXPECT_EQ(test, rsw_rdmap_hdr_len(op), 0U);
		KUNIT_EXPECT_FALSE(test, rsw_rdmap_op_payload(op));
	}
}

/* -------------------------------------------------------------------------
 * Complete headers, octet by octet.
 */
static void wire_tagged_write_bytes(struct kunit *test)
{
	static const u8 expect[16] = {
		0x00, 0x72, 0xc1, 0x40,			/* len 114, T L, write */
		0xa1, 0xb2, 0xc3, 0xd4,			/* STag */
		0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, /* TO */
	};
	struct rsw_ddp_tagged h = {};

	rsw_set_mpa_len(&h.c, RSW_DDP_TAGGED_HDR_LEN + 100);
	h.c.ctrl = rsw_ctrl_word(RSW_OP_WRITE, true);
	h.stag = cpu_to_be32(0xa1b2c3d4);
	h.to = cpu_to_be64(0x1122334455667788ULL);
	KUNIT_EXPECT_MEMEQ(test, &h, expect, sizeof(expect));
	KUNIT_EXPECT_TRUE(test, rsw_ddp_tagged(&h.c));
	KUNIT_EXPECT_TRUE(test, rsw_ddp_last(&h.c));
	KUNIT_EXPECT_EQ(test, rsw_mpa_len(&h.c), 114);
}

static void wire_untagged_send_inv_bytes(struct kunit *test)
{
	static const u8 expect[20] = {
		0x00, 0x17, 0x01, 0x46,		/* len 23, not last, SE+Inv */
		0xde, 0xad, 0xbe, 0xef,		/* Invalidate STag */
		0x00, 0x00, 0x00, 0x00,		/* QN 0 */
		0x00, 0x00, 0x01, 0x02,		/* MSN */
		0x00, 0x00, 0x10, 0x00,		/* MO */
	};
	struct rsw_ddp_untagged h = {};

	rsw_set_mpa_len(&h.c, RSW_DDP_UNTAGGED_HDR_LEN + 5);
	h.c.ctrl = rsw_ctrl_word(RSW_OP_SEND_SE_INV, false);
	h.inval_stag = cpu_to_be32(0xdeadbeef);
	h.qn = cpu_to_be32(RSW_QN_SEND);
	h.msn = cpu_to_be32(0x102);
	h.mo = cpu_to_be32(0x1000);
	KUNIT_EXPECT_MEMEQ(test, &h, expect, sizeof(expect));
	KUNIT_EXPECT_FALSE(test, rsw_ddp_tagged(&h.c));
	KUNIT_EXPECT_FALSE(test, rsw_ddp_last(&h.c));
}

static void fill_rreq(struct rsw_hdr_rreq *h)
{
	memset(h, 0, sizeof(*h));
	rsw_set_mpa_len(&h->ddp.c, RSW_DDP_UNTAGGED_HDR_LEN + RSW_RDMAP_RREQ_LEN);
	h->ddp.c.ctrl = rsw_ctrl_word(RSW_OP_READ_REQ, true);
	h->ddp.qn = cpu_to_be32(RSW_QN_READ_REQ);
	h->ddp.msn = cpu_to_be32(1);
	h->rreq.sink_stag = cpu_to_be32(0x01020304);
	h->rreq.sink_to = cpu_to_be64(0x0a0b0c0d0e0f1011ULL);
	h->rreq.read_size = cpu_to_be32(0x00100000);
	h->rreq.src_stag = cpu_to_be32(0x05060708);
	h->rreq.src_to = cpu_to_be64(0x2021222324252627ULL);
}

static const u8 rreq_bytes[48] = {
	0x00, 0x2e, 0x41, 0x41,		/* len 46, L, read request */
	0x00, 0x00, 0x00, 0x00,		/* RsvdULP */
	0x00, 0x00, 0x00, 0x01,		/* QN 1 */
	0x00, 0x00, 0x00, 0x01,		/* MSN 1 */
	0x00, 0x00, 0x00, 0x00,		/* MO 0 */
	0x01, 0x02, 0x03, 0x04,		/* Data Sink STag */
	0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11,	/* Sink TO */
	0x00, 0x10, 0x00, 0x00,		/* RDMA Read Message Size */
	0x05, 0x06, 0x07, 0x08,		/* Data Source STag */
	0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27,	/* Source TO */
};

static void wire_read_request_bytes(struct kunit *test)
{
	struct rsw_hdr_rreq h;

	fill_rreq(&h);
	KUNIT_EXPECT_MEMEQ(test, &h, rreq_bytes, sizeof(rreq_bytes));
	KUNIT_EXPECT_EQ(test, be64_to_cpu(h.rreq.src_to), 0x2021222324252627ULL);
}

/* -------------------------------------------------------------------------
 * Terminate.
 */
struct term_case {
	const char *name;
	u8 layer, etype, ecode;
	bool m, d, r;
	u8 bytes[4];
};

static const struct term_case term_cases[] = {
	{ "rdmap_invalid_stag_MDR", 0, 1, 0x00, 1, 1, 1,
	  { 0x01, 0x00, 0xe0, 0x00 } },
	{ "ddp_msn_range_MD", 1, 2, 0x03, 1, 1, 0, { 0x12, 0x03, 0xc0, 0x00 } },
	{ "mpa_crc", 2, 0, 0x02, 0, 0, 0, { 0x20, 0x02, 0x00, 0x00 } },
	{ "rdmap_op_unspecified", 0, 2, 0xff, 0, 0, 0,
	  { 0x02, 0xff, 0x00, 0x00 } },
	{ "extremes_R_only", 0xf, 0xf, 0xa5, 0, 0, 1,
	  { 0xff, 0xa5, 0x20, 0x00 } },
	{ "M_only", 0, 0, 0, 1, 0, 0, { 0x00, 0x00, 0x80, 0x00 } },
	{ "D_only", 0, 0, 0, 0, 1, 0, { 0x00, 0x00, 0x40, 0x00 } },
};

KUNIT_ARRAY_PARAM_DESC(term, term_cases, name);

static void wire_term_ctrl_encode(struct kunit *test)
{
	const struct term_case *c = test->param_value;
	struct rsw_rdmap_term t = {};

	rsw_term_set_layer(&t, c->layer);
	rsw_term_set_etype(&t, c->etype);
	rsw_term_set_ecode(&t, c->ecode);
	rsw_term_set_m(&t, c->m);
	rsw_term_set_d(&t, c->d);
	rsw_term_set_r(&t, c->r);
	KUNIT_EXPECT_MEMEQ(test, &t, c->bytes, 4);
}

static void wire_term_ctrl_decode(struct kunit *test)
{
	const struct term_case *c = test->param_value;
	struct rsw_rdmap_term t;

	memcpy(&t, c->bytes, 4);
	KUNIT_EXPECT_EQ(test, rsw_term_layer(&t), c->layer);
	KUNIT_EXPECT_EQ(test, rsw_term_etype(&t), c->etype);
	KUNIT_EXPECT_EQ(test, rsw_term_ecode(&t), c->ecode);
	KUNIT_EXPECT_EQ(test, rsw_term_m(&t), c->m);
	KUNIT_EXPECT_EQ(test, rsw_term_d(&t), c->d);
	KUNIT_EXPECT_EQ(test, rsw_term_r(&t), c->r);
	KUNIT_EXPECT_FALSE(test, t.ctrl & RSW_TERM_RESERVED);
}

static void wire_term_hdr_len(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, rsw_term_hdr_len(false, false, false), 4U);
	KUNIT_EXPECT_EQ(test, rsw_term_hdr_len(true, true, false), 4U + 2 + 14);
	KUNIT_EXPECT_EQ(test, rsw_term_hdr_len(true, false, false), 4U + 2 + 18);
	KUNIT_EXPECT_EQ(test, rsw_term_hdr_len(true, false, true),
			4U + 2 + 18 + 28);
	KUNIT_EXPECT_EQ(test, rsw_term_hdr_len(false, false, true), 4U + 28);
	KUNIT_EXPECT_LE(test, sizeof(struct rsw_ddp_untagged) +
			rsw_term_hdr_len(true, false, true),
			(size_t)RSW_HDR_MAX_LEN);
}

/*
 * A Terminate for a bad Read Request carries the offending FPDU's
 * ULPDU_Length as DDP Segment Length, its DDP header and its RDMA header at
 * fixed offsets: terminate control at 20, segment length at 24, DDP header
 * at 26, RDMA header at 44, 72 octets in all.
 */
static void wire_term_carries_rreq(struct kunit *test)
{
	static const u8 term_ctrl[4] = { 0x01, 0x01, 0xe0, 0x00 };
	u8 *fpdu = kunit_kzalloc(test, RSW_HDR_MAX_LEN, GFP_KERNEL);
	struct rsw_hdr_term *h = (struct rsw_hdr_term *)fpdu;
	struct rsw_hdr_rreq bad;
	u32 len = rsw_term_hdr_len(true, false, true);

	KUNIT_ASSERT_NOT_NULL(test, fpdu);
	fill_rreq(&bad);
	rsw_set_mpa_len(&h->ddp.c, RSW_DDP_UNTAGGED_HDR_LEN + len);
	h->ddp.c.ctrl = rsw_ctrl_word(RSW_OP_TERMINATE, true);
	h->ddp.qn = cpu_to_be32(RSW_QN_TERMINATE);
	rsw_term_set_layer(&h->term, RSW_TERM_LAYER_RDMAP);
	rsw_term_set_etype(&h->term, RSW_RDMAP_ET_REMOTE_PROT);
	rsw_term_set_ecode(&h->term, RSW_RDMAP_EC_BASE_BOUNDS);
	rsw_term_set_m(&h->term, true);
	rsw_term_set_d(&h->term, true);
	rsw_term_set_r(&h->term, true);
	memcpy(fpdu + sizeof(*h), &bad, sizeof(bad));

	KUNIT_EXPECT_EQ(test, sizeof(*h) + sizeof(bad), (size_t)72);
	KUNIT_EXPECT_EQ(test, sizeof(struct rsw_ddp_untagged) + len, (size_t)72);
	KUNIT_EXPECT_MEMEQ(test, fpdu + 20, term_ctrl, sizeof(term_ctrl));
	KUNIT_EXPECT_MEMEQ(test, fpdu + 24, rreq_bytes, 2);	/* seg length */
	KUNIT_EXPECT_MEMEQ(test, fpdu + 26, rreq_bytes + 2, 18);
	KUNIT_EXPECT_MEMEQ(test, fpdu + 44, rreq_bytes + 20, 28);
}

/* Every layer/type/code the RFCs define, by name. */
struct term_code_case {
	const char *name;
	u8 layer, etype, ecode;
};

#define TC(n, l, t, c) { n, RSW_TERM_LAYER_##l, t, c }
static const struct term_code_case term_code_cases[] = {
	TC("rdmap_catastrophic", RDMAP, RSW_RDMAP_ET_CATASTROPHIC, 0x00),
	TC("rdmap_prot_invalid_stag", RDMAP, 1, RSW_RDMAP_EC_INVALID_STAG),
	TC("rdmap_prot_base_bounds", RDMAP, 1, RSW_RDMAP_EC_BASE_BOUNDS),
	TC("rdmap_prot_access", RDMAP, 1, RSW_RDMAP_EC_ACCESS),
	TC("rdmap_prot_not_assoc", RDMAP, 1, RSW_RDMAP_EC_STAG_NOT_ASSOC),
	TC("rdmap_prot_to_wrap", RDMAP, 1, RSW_RDMAP_EC_TO_WRAP),
	TC("rdmap_prot_cant_inval", RDMAP, 1, RSW_RDMAP_EC_CANT_INVALIDATE),
	TC("rdmap_prot_unspecified", RDMAP, 1, RSW_RDMAP_EC_UNSPECIFIED),
	TC("rdmap_op_version", RDMAP, 2, RSW_RDMAP_EC_VERSION),
	TC("rdmap_op_opcode", RDMAP, 2, RSW_RDMAP_EC_OPCODE),
	TC("rdmap_op_catastrophic_stream", RDMAP, 2,
	   RSW_RDMAP_EC_CATASTROPHIC_STREAM),
	TC("rdmap_op_catastrophic_global", RDMAP, 2,
	   RSW_RDMAP_EC_CATASTROPHIC_GLOBAL),
	TC("rdmap_op_cant_inval", RDMAP, 2, RSW_RDMAP_EC_CANT_INVALIDATE),
	TC("rdmap_op_unspecified", RDMAP, 2, RSW_RDMAP_EC_UNSPECIFIED),
	TC("ddp_catastrophic", DDP, RSW_DDP_ET_CATASTROPHIC, 0x00),
	TC("ddp_t_invalid_stag", DDP, 1, RSW_DDP_EC_T_INVALID_STAG),
	TC("ddp_t_base_bounds", DDP, 1, RSW_DDP_EC_T_BASE_BOUNDS),
	TC("ddp_t_not_assoc", DDP, 1, RSW_DDP_EC_T_STAG_NOT_ASSOC),
	TC("ddp_t_to_wrap", DDP, 1, RSW_DDP_EC_T_TO_WRAP),
	TC("ddp_t_version", DDP, 1, RSW_DDP_EC_T_VERSION),
	TC("ddp_u_invalid_qn", DDP, 2, RSW_DDP_EC_U_INVALID_QN),
	TC("ddp_u_msn_no_buf", DDP, 2, RSW_DDP_EC_U_MSN_NO_BUF),
	TC("ddp_u_msn_range", DDP, 2, RSW_DDP_EC_U_MSN_RANGE),
	TC("ddp_u_invalid_mo", DDP, 2, RSW_DDP_EC_U_INVALID_MO),
	TC("ddp_u_too_long", DDP, 2, RSW_DDP_EC_U_TOO_LONG),
	TC("ddp_u_version", DDP, 2, RSW_DDP_EC_U_VERSION),
	TC("mpa_tcp_lost", LLP, RSW_LLP_ET_MPA, RSW_MPA_EC_TCP_LOST),
	TC("mpa_crc", LLP, RSW_LLP_ET_MPA, RSW_MPA_EC_CRC),
	TC("mpa_marker", LLP, RSW_LLP_ET_MPA, RSW_MPA_EC_MARKER),
	TC("mpa_bad_rr", LLP, RSW_LLP_ET_MPA, RSW_MPA_EC_BAD_RR),
	TC("mpa_catastrophic", LLP, RSW_LLP_ET_MPA, RSW_MPA_EC_CATASTROPHIC),
	TC("mpa_ird", LLP, RSW_LLP_ET_MPA, RSW_MPA_EC_IRD),
	TC("mpa_no_rtr", LLP, RSW_LLP_ET_MPA, RSW_MPA_EC_NO_RTR),
};

#undef TC

KUNIT_ARRAY_PARAM_DESC(term_code, term_code_cases, name);

static void wire_term_code_defined(struct kunit *test)
{
	const struct term_code_case *c = test->param_value;

	KUNIT_EXPECT_NOT_NULL(test, rsw_term_name(c->layer, c->etype, c->ecode));
}

/*
 * Nothing else is defined: over all 16 x 16 x 256 triples exactly the listed
 * codes plus any code of the two Local Catastrophic types have a name.
 */
static void wire_term_code_undefined(struct kunit *test)
{
	unsigned int layer, etype, ecode, named = 0;

	for (layer = 0; layer < 16; layer++)
		for (etype = 0; etype < 16; etype++)
			for (ecode = 0; ecode < 256; ecode++)
				if (rsw_term_name(layer, etype, ecode))
					named++;
	KUNIT_EXPECT_EQ(test, named,
			(unsigned int)ARRAY_SIZE(term_code_cases) - 2 + 2 * 256);
	KUNIT_EXPECT_NULL(test, rsw_term_name(0, 1, RSW_RDMAP_EC_VERSION));
	KUNIT_EXPECT_NULL(test, rsw_term_name(0, 2, RSW_RDMAP_EC_ACCESS));
	KUNIT_EXPECT_NULL(test, rsw_term_name(0, 3, 0));
	KUNIT_EXPECT_NULL(test, rsw_term_name(1, 1, 0x05));
	KUNIT_EXPECT_NULL(test, rsw_term_name(1, 2, 0x00));
	KUNIT_EXPECT_NULL(test, rsw_term_name(1, RSW_DDP_ET_RSVD_LLP, 0));
	KUNIT_EXPECT_NULL(test, rsw_term_name(2, 0, 0x00));
	KUNIT_EXPECT_NULL(test, rsw_term_name(2, 0, 0x08));
	KUNIT_EXPECT_NULL(test, rsw_term_name(2, 1, 0x02));
	KUNIT_EXPECT_NULL(test, rsw_term_name(3, 0, 0));
}

/* -------------------------------------------------------------------------
 * RFC 7306: Atomic Request/Response, Immediate Data.
 */
struct atomic_case {
	const char *name;
	enum rsw_atomic_op op;
	u64 data, data_mask, cmp, cmp_mask;	/* as passed */
	u64 sent_mask, sent_cmp, sent_cmp_mask;	/* as sent */
};

static const struct atomic_case atomic_cases[] = {
	{ "fetch_add_plain", RSW_ATOMIC_FETCH_ADD, 5, 0, 7, 9,
	  0, 0, ~0ULL },
	{ "fetch_add_masked", RSW_ATOMIC_FETCH_ADD, 5, 0x8000000080000000ULL,
	  7, 9, 0x8000000080000000ULL, 0, ~0ULL },
	{ "swap", RSW_ATOMIC_SWAP, 0x1122, 0x1234, 7, 9, ~0ULL, 0, ~0ULL },
	{ "cmp_swap_masked", RSW_ATOMIC_CMP_SWAP, 0xaa, 0x0f, 0x55, 0xf0,
	  0x0f, 0x55, 0xf0 },
	{ "cmp_swap_plain", RSW_ATOMIC_CMP_SWAP, 0xaa, ~0ULL, 0x55, ~0ULL,
	  ~0ULL, 0x55, ~0ULL },
};

KUNIT_ARRAY_PARAM_DESC(atomic, atomic_cases, name);

static void wire_atomic_operands(struct kunit *test)
{
	const struct atomic_case *c = test->param_value;
	struct rsw_rdmap_atomic_req a = {};

	rsw_atomic_set_op(&a, c->op);
	rsw_atomic_set_operands(&a, c->op, c->data, c->data_mask, c->cmp,
				c->cmp_mask);
	KUNIT_EXPECT_EQ(test, rsw_atomic_op(&a), c->op);
	KUNIT_EXPECT_EQ(test, rsw_atomic_reserved(&a), 0U);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(a.data), c->data);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(a.data_mask), c->sent_mask);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(a.cmp), c->sent_cmp);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(a.cmp_mask), c->sent_cmp_mask);
}

static void wire_atomic_req_bytes(struct kunit *test)
{
	static const u8 expect[72] = {
		0x00, 0x46, 0x41, 0x4a,		/* len 70, L, atomic request */
		0x00, 0x00, 0x00, 0x00,		/* RsvdULP */
		0x00, 0x00, 0x00, 0x01,		/* QN 1 */
		0x00, 0x00, 0x00, 0x07,		/* MSN */
		0x00, 0x00, 0x00, 0x00,		/* MO */
		0x00, 0x00, 0x00, 0x02,		/* reserved | CmpSwap */
		0xca, 0xfe, 0xf0, 0x0d,		/* Request Identifier */
		0x12, 0x34, 0x56, 0x78,		/* Remote STag */
		0, 0, 0, 0, 0, 0, 0x10, 0x08,	/* Remote TO */
		1, 2, 3, 4, 5, 6, 7, 8,		/* Swap Data */
		0xff, 0xff, 0, 0, 0, 0, 0xff, 0xff,	/* Swap Mask */
		8, 7, 6, 5, 4, 3, 2, 1,		/* Compare Data */
		0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff,	/* Compare Mask */
	};
	struct rsw_hdr_atomic_req h = {};

	rsw_set_mpa_len(&h.ddp.c, RSW_DDP_UNTAGGED_HDR_LEN + RSW_ATOMIC_REQ_LEN);
	h.ddp.c.ctrl = rsw_ctrl_word(RSW_OP_ATOMIC_REQ, true);
	h.ddp.qn = cpu_to_be32(rsw_rdmap_op_qn(RSW_OP_ATOMIC_REQ));
	h.ddp.msn = cpu_to_be32(7);
	rsw_atomic_set_op(&h.atomic, RSW_ATOMIC_CMP_SWAP);
	h.atomic.req_id = cpu_to_be32(0xcafef00d);
	h.atomic.stag = cpu_to_be32(0x12345678);
	h.atomic.to = cpu_to_be64(0x1008);
	rsw_atomic_set_operands(&h.atomic, RSW_ATOMIC_CMP_SWAP,
				0x0102030405060708ULL, 0xffff00000000ffffULL,
				0x0807060504030201ULL, 0x00000000ffffffffULL);
	KUNIT_EXPECT_MEMEQ(test, &h, expect, sizeof(expect));
}

static void wire_atomic_resp_bytes(struct kunit *test)
{
	static const u8 expect[32] = {
		0x00, 0x1e, 0x41, 0x4b,		/* len 30, L, atomic response */
		0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x03,		/* QN 3 */
		0x00, 0x00, 0x00, 0x07,
		0x00, 0x00, 0x00, 0x00,
		0xca, 0xfe, 0xf0, 0x0d,		/* Original Request Identifier */
		0x80, 0, 0, 0, 0, 0, 0, 0x01,	/* Original Remote Value */
	};
	struct rsw_hdr_atomic_resp h = {};

	rsw_set_mpa_len(&h.ddp.c, RSW_DDP_UNTAGGED_HDR_LEN + RSW_ATOMIC_RESP_LEN);
	h.ddp.c.ctrl = rsw_ctrl_word(RSW_OP_ATOMIC_RESP, true);
	h.ddp.qn = cpu_to_be32(rsw_rdmap_op_qn(RSW_OP_ATOMIC_RESP));
	h.ddp.msn = cpu_to_be32(7);
	h.atomic.req_id = cpu_to_be32(0xcafef00d);
	h.atomic.orig = cpu_to_be64(0x8000000000000001ULL);
	KUNIT_EXPECT_MEMEQ(test, &h, expect, sizeof(expect));
}

static void wire_imm_data_bytes(struct kunit *test)
{
	static const u8 expect[28] = {
		0x00, 0x1a, 0x41, 0x49,		/* len 26, L, imm data + SE */
		0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00,		/* QN 0 */
		0x00, 0x00, 0x00, 0x09,
		0x00, 0x00, 0x00, 0x00,
		0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10,
	};
	struct rsw_hdr_imm h = {};

	rsw_set_mpa_len(&h.ddp.c, RSW_DDP_UNTAGGED_HDR_LEN + RSW_IMM_DATA_LEN);
	h.ddp.c.ctrl = rsw_ctrl_word(RSW_OP_IMM_DATA_SE, true);
	h.ddp.qn = cpu_to_be32(rsw_rdmap_op_qn(RSW_OP_IMM_DATA_SE));
	h.ddp.msn = cpu_to_be32(9);
	h.imm.data = cpu_to_be64(0xfedcba9876543210ULL);
	KUNIT_EXPECT_MEMEQ(test, &h, expect, sizeof(expect));
}

static struct kunit_case wire_cases[] = {
	KUNIT_CASE_PARAM(wire_struct_size, size_gen_params),
	KUNIT_CASE(wire_mpa_keys),
	KUNIT_CASE_PARAM(wire_mpa_rr_encode, rr_gen_params),
	KUNIT_CASE_PARAM(wire_mpa_rr_decode, rr_gen_params),
	KUNIT_CASE_PARAM(wire_mpa_v2_encode, v2_gen_params),
	KUNIT_CASE_PARAM(wire_mpa_v2_decode, v2_gen_params),
	KUNIT_CASE_PARAM(wire_field_set_exact, field_gen_params),
	KUNIT_CASE_PARAM(wire_field_clear_exact, field_gen_params),
	KUNIT_CASE_PARAM(wire_field_overflow_masked, field_gen_params),
	KUNIT_CASE_PARAM(wire_opcode_facts, op_gen_params),
	KUNIT_CASE_PARAM(wire_opcode_handlers, op_gen_params),
	KUNIT_CASE_PARAM(wire_ctrl_word, op_gen_params),
	KUNIT_CASE(wire_reserved_opcodes),
	KUNIT_CASE(wire_tagged_write_bytes),
	KUNIT_CASE(wire_untagged_send_inv_bytes),
	KUNIT_CASE(wire_read_request_bytes),
	KUNIT_CASE_PARAM(wire_term_ctrl_encode, term_gen_params),
	KUNIT_CASE_PARAM(wire_term_ctrl_decode, term_gen_params),
	KUNIT_CASE(wire_term_hdr_len),
	KUNIT_CASE(wire_term_carries_rreq),
	KUNIT_CASE_PARAM(wire_term_code_defined, term_code_gen_params),
	KUNIT_CASE(wire_term_code_undefined),
	KUNIT_CASE_PARAM(wire_atomic_operands, atomic_gen_params),
	KUNIT_CASE(wire_atomic_req_bytes),
	KUNIT_CASE(wire_atomic_resp_bytes),
	KUNIT_CASE(wire_imm_data_bytes),
	{}
};

static struct kunit_suite wire_suite = {
	.name = "rdmap_sw_wire",
	.test_cases = wire_cases,
};

kunit_test_suite(wire_suite);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("KUnit tests for rdmap_sw on-wire formats");
