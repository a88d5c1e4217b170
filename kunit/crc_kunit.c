// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite rdmap_sw_crc: the MPA CRC trailer of fpdu.h.
 *
 * The published iSCSI vectors (RFC 3720 appendix B.4) fix both the CRC32c
 * parameters and the octet order on the wire, which is what interoperation
 * with siw and iWARP RNICs depends on.  FPDU trailers are checked against an
 * independent bit-at-a-time CRC32c written here.
 */
#include <kunit/test.h>
#include <linux/module.h>
#include <linux/string.h>

#include "fpdu.h"
#include "internal.h"

RSW_IMPORT_KUNIT_NS();

/* Reference CRC32c: reflected polynomial 0x82f63b78, init ~0, final ~. */
static u32 ref_crc32c(const u8 *p, size_t len)
{
	u32 crc = ~0U;
	int bit;

	while (len--) {
		crc ^= *p++;
		for (bit = 0; bit < 8; bit++)
			crc = (crc >> 1) ^ (0x82f63b78 & -(crc & 1));
	}
	return ~crc;
}

/* The trailer octets for a CRC value: least significant octet first. */
static void ref_trailer(u32 crc, u8 out[4])
{
	out[0] = crc;
	out[1] = crc >> 8;
	out[2] = crc >> 16;
	out[3] = crc >> 24;
}

/* -------------------------------------------------------------------------
 * RFC 3720 B.4 test vectors, with the CRC octets as printed there.
 */
struct crc_vec {
	const char *name;
	u8 data[48];
	u32 len;
	u8 wire[4];
};

static const struct crc_vec crc_vecs[] = {
	{ "32_zeros", { 0 }, 32, { 0xaa, 0x36, 0x91, 0x8a } },
	{ "32_ones", { [0 ... 31] = 0xff }, 32, { 0x43, 0xab, 0xa8, 0x62 } },
	{ "32_incrementing",
	  { 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
	    0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
	    0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17,
	    0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f },
	  32, { 0x4e, 0x79, 0xdd, 0x46 } },
	{ "32_decrementing",
	  { 0x1f, 0x1e, 0x1d, 0x1c, 0x1b, 0x1a, 0x19, 0x18,
	    0x17, 0x16, 0x15, 0x14, 0x13, 0x12, 0x11, 0x10,
	    0x0f, 0x0e, 0x0d, 0x0c, 0x0b, 0x0a, 0x09, 0x08,
	    0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, 0x00 },
	  32, { 0x5c, 0xdb, 0x3f, 0x11 } },
	{ "iscsi_read_pdu",
	  { 0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	    0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00,
	    0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18,
	    0x28, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	    0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00 },
	  48, { 0x56, 0x3a, 0x96, 0xd9 } },
};

KUNIT_ARRAY_PARAM_DESC(crc_vec, crc_vecs, name);

/* rsw_mpa_crc() gives the RFC 3720 octets, in wire order. */
static void crc_rfc3720_vector(struct kunit *test)
{
	const struct crc_vec *v = test->param_value;
	struct rsw_mpa_trailer t = { .crc = rsw_mpa_crc(v->data, v->len) };

	KUNIT_EXPECT_MEMEQ(test, &t, v->wire, 4);
}

/* The test's own reference agrees with RFC 3720 too. */
static void crc_reference_vector(struct kunit *test)
{
	const struct crc_vec *v = test->param_value;
	u8 out[4];

	ref_trailer(ref_crc32c(v->data, v->len), out);
	KUNIT_EXPECT_MEMEQ(test, out, v->wire, 4);
}

/* Feeding the octets in two pieces, split anywhere, changes nothing. */
static void crc_incremental_split(struct kunit *test)
{
	const struct crc_vec *v = &crc_vecs[ARRAY_SIZE(crc_vecs) - 1];
	__le32 whole = rsw_mpa_crc(v->data, v->len);
	u32 split, crc;

	for (split = 0; split <= v->len; split++) {
		crc = rsw_mpa_crc_init();
		crc = rsw_mpa_crc_update(crc, v->data, split);
		crc = rsw_mpa_crc_update(crc, v->data + split, v->len - split);
		KUNIT_EXPECT_EQ_MSG(test, le32_to_cpu(rsw_mpa_crc_final(crc)),
				    le32_to_cpu(whole), "split at %u", split);
	}
}

/* -------------------------------------------------------------------------
 * Whole FPDUs: a Send header, a payload and the PAD octets.
 */
#define FPDU_MAX	(sizeof(struct rsw_ddp_untagged) + 1024 + 8)

struct fpdu_case {
	const char *name;
	u32 payload_len;
};

static const struct fpdu_case fpdu_cases[] = {
	{ "payload_0_pad_0", 0 },
	{ "payload_1_pad_3", 1 },
	{ "payload_2_pad_2", 2 },
	{ "payload_3_pad_1", 3 },
	{ "payload_4_pad_0", 4 },
	{ "payload_5_pad_3", 5 },
	{ "payload_37_pad_3", 37 },
	{ "payload_1000_pad_0", 1000 },
	{ "payload_1023_pad_1", 1023 },
};

KUNIT_ARRAY_PARAM_DESC(fpdu, fpdu_cases, name);

/*
 * Lay out a Send FPDU in @buf (header, payload, zero PAD) and return the
 * octets the CRC covers.  The payload is a fixed pseudo-random pattern.
 */
static u32 build_send_fpdu(u8 *buf, u32 payload_len)
{
	struct rsw_ddp_untagged *h = (struct rsw_ddp_untagged *)buf;
	u32 ulpdu = RSW_DDP_UNTAGGED_HDR_LEN + payload_len;
	u32 covered = RSW_MPA_HDR_LEN + ulpdu + rsw_mpa_pad(ulpdu);
	u32 i;

	memset(buf, 0, covered);
	rsw_set_mpa_len(&h->c, ulpdu);
	h->c.ctrl = rsw_ctrl_word(RSW_OP_SEND, true);
	h->qn = cpu_to_be32(RSW_QN_SEND);
	h->msn = cpu_to_be32(0x2a);
	for (i = 0; i < payload_len; i++)
		buf[sizeof(*h) + i] = (u8)(i * 37 + 11);
	return covered;
}

/* The trailer of header + payload (+ implicit PAD) matches the reference. */
static void crc_fpdu_matches_reference(struct kunit *test)
{
	const struct fpdu_case *c = test->param_value;
	u8 *buf = kunit_kzalloc(test, FPDU_MAX, GFP_KERNEL);
	u32 covered;
	__le32 got;
	u8 want[4];

	KUNIT_ASSERT_NOT_NULL(test, buf);
	covered = build_send_fpdu(buf, c->payload_len);
	KUNIT_EXPECT_EQ(test, covered % RSW_MPA_ALIGN, 0U);
	KUNIT_EXPECT_EQ(test, covered + RSW_MPA_CRC_LEN,
			rsw_fpdu_plain_len(RSW_DDP_UNTAGGED_HDR_LEN +
					   c->payload_len));

	got = rsw_mpa_fpdu_crc(buf, sizeof(struct rsw_ddp_untagged),
			       buf + sizeof(struct rsw_ddp_untagged),
			       c->payload_len);
	ref_trailer(ref_crc32c(buf, covered), want);
	KUNIT_EXPECT_MEMEQ(test, &got, want, 4);
}

/* The PAD octets are covered: garbage in them would change the CRC. */
static void crc_fpdu_pad_covered(struct kunit *test)
{
	const struct fpdu_case *c = test->param_value;
	u8 *buf = kunit_kzalloc(test, FPDU_MAX, GFP_KERNEL);
	u32 covered, pad;
	__le32 clean;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	covered = build_send_fpdu(buf, c->payload_len);
	pad = rsw_mpa_pad(RSW_DDP_UNTAGGED_HDR_LEN + c->payload_len);
	clean = rsw_mpa_crc(buf, covered);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(clean),
			le32_to_cpu(rsw_mpa_fpdu_crc(buf, 20, buf + 20,
						     c->payload_len)));
	if (!pad)
		return;
	buf[covered - 1] = 0x5a;
	KUNIT_EXPECT_NE(test, le32_to_cpu(rsw_mpa_crc(buf, covered)),
			le32_to_cpu(clean));
}

/* Any single flipped bit of header, payload or PAD changes the trailer. */
static void crc_fpdu_single_bit_flip(struct kunit *test)
{
	const struct fpdu_case *c = test->param_value;
	u8 *buf = kunit_kzalloc(test, FPDU_MAX, GFP_KERNEL);
	u32 covered, bit, missed = 0;
	__le32 clean;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	covered = build_send_fpdu(buf, c->payload_len);
	clean = rsw_mpa_crc(buf, covered);
	for (bit = 0; bit < covered * 8; bit++) {
		buf[bit / 8] ^= 1 << (bit % 8);
		if (rsw_mpa_crc(buf, covered) == clean)
			missed++;
		buf[bit / 8] ^= 1 << (bit % 8);
	}
	KUNIT_EXPECT_EQ(test, missed, 0U);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(rsw_mpa_crc(buf, covered)),
			le32_to_cpu(clean));
}

static struct kunit_case crc_cases[] = {
	KUNIT_CASE_PARAM(crc_rfc3720_vector, crc_vec_gen_params),
	KUNIT_CASE_PARAM(crc_reference_vector, crc_vec_gen_params),
	KUNIT_CASE(crc_incremental_split),
	KUNIT_CASE_PARAM(crc_fpdu_matches_reference, fpdu_gen_params),
	KUNIT_CASE_PARAM(crc_fpdu_pad_covered, fpdu_gen_params),
	KUNIT_CASE_PARAM(crc_fpdu_single_bit_flip, fpdu_gen_params),
	{}
};

static struct kunit_suite crc_suite = {
	.name = "rdmap_sw_crc",
	.test_cases = crc_cases,
};

kunit_test_suite(crc_suite);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("KUnit tests for the rdmap_sw MPA CRC32c trailer");
