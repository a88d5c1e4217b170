// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite rdmap_sw_fpdu: MPA framing arithmetic of fpdu.h (PAD, FPDU
 * length, Marker count, positions and FPDUPTR, MULPDU) at the boundaries and
 * against a byte-by-byte simulation of the MPA stream on pseudo-random input.
 * The generator has a fixed seed: a failure names the FPDU that failed and
 * reproduces on every run.
 */
#include <kunit/test.h>
#include <linux/limits.h>
#include <linux/module.h>
#include <linux/prandom.h>

#include "fpdu.h"

#define FPDU_SEED		0x72646d61ULL
#define FPDU_RANDOM_STREAM	3000	/* consecutive FPDUs from offset 0 */
#define FPDU_RANDOM_STARTS	2000	/* FPDUs at random offsets */
#define FPDU_RANDOM_EMSS	400	/* MSS values for MULPDU */

/* -------------------------------------------------------------------------
 * Reference: walk the stream one octet at a time, putting a Marker wherever
 * the offset is a multiple of 512 while the FPDU still has octets to place.
 */
#define REF_MAX_MARKERS		(RSW_MPA_MAX_ULPDU / RSW_MPA_MARKER_GAP + 4)

struct ref_fpdu {
	u32 markers;
	u32 total;			/* octets including Markers */
	u32 hdr;			/* stream offset of ULPDU_Length */
	u32 pos[REF_MAX_MARKERS];	/* stream offsets of the Markers */
	u32 ptr[REF_MAX_MARKERS];	/* their FPDUPTR */
};

static void ref_simulate(u32 start, u32 plain, struct ref_fpdu *r)
{
	u32 off = start, placed = 0;

	r->markers = 0;
	r->hdr = start;
	while (placed < plain) {
		if (off % RSW_MPA_MARKER_SPACING == 0 &&
		    r->markers < REF_MAX_MARKERS) {
			r->pos[r->markers] = off;
			r->ptr[r->markers] = placed ? off - r->hdr : 0;
			r->markers++;
			off += RSW_MPA_MARKER_LEN;
			continue;
		}
		if (!placed)
			r->hdr = off;
		off++;
		placed++;
	}
	r->total = off - start;
}

/* Compare fpdu.h with the reference for one FPDU; false on the first miss. */
static bool check_fpdu(struct kunit *test, struct ref_fpdu *r, u32 start,
		       u32 ulpdu, u32 n)
{
	u32 plain = rsw_fpdu_plain_len(ulpdu);
	u32 k, pos;

	ref_simulate(start, plain, r);
	KUNIT_ASSERT_LT(test, r->markers, (u32)REF_MAX_MARKERS);
	KUNIT_EXPECT_EQ_MSG(test, rsw_mpa_markers(start, plain), r->markers,
			    "#%u start %u ulpdu %u", n, start, ulpdu);
	KUNIT_EXPECT_EQ_MSG(test, rsw_fpdu_len(ulpdu, true, start), r->total,
			    "#%u start %u ulpdu %u", n, start, ulpdu);
	KUNIT_EXPECT_EQ_MSG(test, rsw_fpdu_len(ulpdu, false, start), plain,
			    "#%u start %u ulpdu %u", n, start, ulpdu);
	if (rsw_mpa_markers(start, plain) != r->markers)
		return false;
	for (k = 0; k < r->markers; k++) {
		pos = start + rsw_mpa_marker_pos(start, k);
		KUNIT_EXPECT_EQ_MSG(test, pos, r->pos[k],
				    "#%u start %u ulpdu %u marker %u",
				    n, start, ulpdu, k);
		if (pos != r->pos[k])
			return false;
		/* FPDUPTR is 16 bits: senders keep FPDUs with Markers below
		 * 64 KiB (rsw_mpa_mulpdu()); beyond that it is undefined.
		 */
		if (r->ptr[k] > U16_MAX)
			continue;
		KUNIT_EXPECT_EQ_MSG(test, rsw_mpa_fpduptr(start, k), r->ptr[k],
				    "#%u start %u ulpdu %u marker %u",
				    n, start, ulpdu, k);
		KUNIT_EXPECT_EQ_MSG(test, rsw_mpa_marker_hdr(r->pos[k],
							     r->ptr[k]),
				    r->hdr, "#%u start %u ulpdu %u marker %u",
				    n, start, ulpdu, k);
		if (rsw_mpa_fpduptr(start, k) != r->ptr[k])
			return false;
	}
	return rsw_fpdu_len(ulpdu, true, start) == r->total;
}

/*
 * Mostly small ULPDUs, one in sixteen anywhere up to the largest a sender
 * with Markers uses (MULPDU for a 64 KiB - 1 EMSS).
 */
static u32 random_ulpdu(struct rnd_state *rs)
{
	u32 r = prandom_u32_state(rs);

	if ((r & 0xf) == 0)
		return (r >> 4) % (rsw_mpa_mulpdu(U16_MAX, true) + 1);
	return (r >> 4) % 2048;
}

/* -------------------------------------------------------------------------
 * PAD and Marker-free length.
 */
struct pad_case {
	const char *name;
	u32 ulpdu, pad, plain;
};

static const struct pad_case pad_cases[] = {
	{ "ulpdu_0", 0, 2, 8 },
	{ "ulpdu_1", 1, 1, 8 },
	{ "ulpdu_2", 2, 0, 8 },
	{ "ulpdu_3", 3, 3, 12 },
	{ "ulpdu_4", 4, 2, 12 },
	{ "ulpdu_5", 5, 1, 12 },
	{ "ulpdu_6", 6, 0, 12 },
	{ "ulpdu_send_hdr_18", 18, 0, 24 },
	{ "ulpdu_1454_mss_1460", 1454, 0, 1460 },
	{ "ulpdu_65534", 65534, 0, 65540 },
	{ "ulpdu_65535_max", 65535, 3, 65544 },
};

KUNIT_ARRAY_PARAM_DESC(pad, pad_cases, name);

static void fpdu_pad(struct kunit *test)
{
	const struct pad_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, rsw_mpa_pad(c->ulpdu), c->pad);
	KUNIT_EXPECT_EQ(test, (RSW_MPA_HDR_LEN + c->ulpdu + c->pad) %
			RSW_MPA_ALIGN, 0U);
}

static void fpdu_plain_len(struct kunit *test)
{
	const struct pad_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, rsw_fpdu_plain_len(c->ulpdu), c->plain);
	KUNIT_EXPECT_EQ(test, rsw_fpdu_len(c->ulpdu, false, 0), c->plain);
}

/* -------------------------------------------------------------------------
 * Markers at the edges: at the FPDU's first octet, just past its end,
 * between PAD and CRC, straddling several 512 boundaries, across the wrap
 * of the 32-bit offset.
 */
struct marker_case {
	const char *name;
	u32 start, ulpdu;
	u32 markers, first, total;
};

static const struct marker_case marker_cases[] = {
	{ "none_inside_block", 4, 10, 0, 508, 16 },
	{ "at_fpdu_start", 0, 10, 1, 0, 20 },
	{ "at_fpdu_start_512", 512, 10, 1, 0, 20 },
	{ "at_fpdu_end_excluded", 496, 10, 0, 16, 16 },
	{ "between_pad_and_crc", 500, 10, 1, 12, 20 },
	{ "after_first_word", 508, 10, 1, 4, 20 },
	{ "fills_block_exactly", 0, 502, 1, 0, 512 },
	{ "one_word_past_block", 0, 506, 2, 0, 520 },
	{ "straddles_two", 256, 1000, 2, 256, 1016 },
	{ "wraps_offset_zero", 0xfffffe04, 1000, 1, 508, 1012 },
	{ "max_ulpdu", 0, 65535, 130, 0, 66064 },
};

KUNIT_ARRAY_PARAM_DESC(marker, marker_cases, name);

static void fpdu_marker_boundary(struct kunit *test)
{
	const struct marker_case *c = test->param_value;
	u32 plain = rsw_fpdu_plain_len(c->ulpdu);

	KUNIT_EXPECT_EQ(test, rsw_mpa_markers(c->start, plain), c->markers);
	KUNIT_EXPECT_EQ(test, rsw_mpa_next_marker(c->start), c->first);
	KUNIT_EXPECT_EQ(test, rsw_fpdu_len(c->ulpdu, true, c->start), c->total);
	if (c->markers)
		KUNIT_EXPECT_EQ(test, rsw_mpa_marker_pos(c->start, 0), c->first);
}

/* The same edges against the reference simulation. */
static void fpdu_marker_boundary_reference(struct kunit *test)
{
	const struct marker_case *c = test->param_value;
	struct ref_fpdu *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, r);
	KUNIT_EXPECT_TRUE(test, check_fpdu(test, r, c->start, c->ulpdu, 0));
	KUNIT_EXPECT_EQ(test, r->total, c->total);
}

struct ptr_case {
	const char *name;
	u32 start, k;
	u16 fpduptr;
};

static const struct ptr_case ptr_cases[] = {
	{ "leading_marker", 0, 0, 0 },
	{ "second_after_leading", 0, 1, 508 },
	{ "third_after_leading", 0, 2, 1020 },
	{ "before_crc", 500, 0, 12 },
	{ "next_block_before_crc", 500, 1, 524 },
	{ "after_first_word", 508, 0, 4 },
	{ "mid_fpdu_second", 256, 1, 768 },
};

KUNIT_ARRAY_PARAM_DESC(ptr, ptr_cases, name);

static void fpdu_fpduptr(struct kunit *test)
{
	const struct ptr_case *c = test->param_value;
	struct rsw_mpa_marker m = rsw_mpa_marker(c->start, c->k);
	u8 bytes[4] = { 0, 0, c->fpduptr >> 8, c->fpduptr & 0xff };

	KUNIT_EXPECT_EQ(test, rsw_mpa_fpduptr(c->start, c->k), c->fpduptr);
	KUNIT_EXPECT_EQ(test, c->fpduptr % RSW_MPA_ALIGN, 0);
	KUNIT_EXPECT_MEMEQ(test, &m, bytes, sizeof(bytes));
}

struct hdr_case {
	const char *name;
	u32 marker;
	u16 fpduptr;
	u32 hdr;
};

static const struct hdr_case hdr_cases[] = {
	{ "zero_means_next_octets", 512, 0, 516 },
	{ "stream_start", 0, 0, 4 },
	{ "back_pointer", 1024, 12, 1012 },
	{ "low_bits_ignored", 1024, 15, 1012 },
	{ "low_bits_only", 1024, 3, 1028 },
	{ "back_across_wrap", 0, 8, 0xfffffff8 },
};

KUNIT_ARRAY_PARAM_DESC(hdr, hdr_cases, name);

static void fpdu_marker_hdr(struct kunit *test)
{
	const struct hdr_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, rsw_mpa_marker_hdr(c->marker, c->fpduptr), c->hdr);
}

/* -------------------------------------------------------------------------
 * MULPDU.
 */
struct mulpdu_case {
	const char *name;
	u32 emss;
	bool markers;
	u32 mulpdu;
};

static const struct mulpdu_case mulpdu_cases[] = {
	{ "emss_0", 0, false, 0 },
	{ "emss_6", 6, false, 0 },
	{ "emss_7", 7, false, 0 },
	{ "emss_8", 8, false, 2 },
	{ "emss_8_markers", 8, true, 0 },
	{ "emss_12_markers", 12, true, 2 },
	{ "emss_512", 512, false, 506 },
	{ "emss_512_markers", 512, true, 502 },
	{ "emss_513_markers", 513, true, 498 },
	{ "emss_1448", 1448, false, 1442 },
	{ "emss_1448_markers", 1448, true, 1430 },
	{ "emss_1460", 1460, false, 1454 },
	{ "emss_1460_markers", 1460, true, 1442 },
	{ "emss_1461", 1461, false, 1454 },
	{ "emss_1461_markers", 1461, true, 1442 },
	{ "emss_9000", 9000, false, 8994 },
	{ "emss_9000_markers", 9000, true, 8922 },
	{ "emss_65535", 65535, false, 65526 },
	{ "emss_65535_markers", 65535, true, 65014 },
	{ "emss_100000_capped", 100000, false, 65535 },
	{ "emss_100000_markers_capped", 100000, true, 65014 },
};

KUNIT_ARRAY_PARAM_DESC(mulpdu, mulpdu_cases, name);

static void fpdu_mulpdu(struct kunit *test)
{
	const struct mulpdu_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, rsw_mpa_mulpdu(c->emss, c->markers), c->mulpdu);
}

/*
 * For every EMSS up to 9216 octets, a MULPDU FPDU fits in the EMSS wherever
 * it starts; without Markers no larger ULPDU would.
 */
static void fpdu_mulpdu_fits(struct kunit *test)
{
	u32 emss, start, u, bad = 0, loose = 0;

	for (emss = 8; emss <= 9216; emss++) {
		u = rsw_mpa_mulpdu(emss, true);
		for (start = 0; u && start < RSW_MPA_MARKER_SPACING; start += 4)
			if (rsw_fpdu_len(u, true, start) > emss)
				bad++;
		u = rsw_mpa_mulpdu(emss, false);
		if (rsw_fpdu_plain_len(u) > emss)
			bad++;
		if (rsw_fpdu_plain_len(u + 1) <= emss)
			loose++;
	}
	KUNIT_EXPECT_EQ(test, bad, 0U);
	KUNIT_EXPECT_EQ(test, loose, 0U);
}

/* -------------------------------------------------------------------------
 * Pseudo-random input against the reference.
 */

/* A stream of FPDUs back to back from offset 0, as a sender produces it. */
static void fpdu_random_stream(struct kunit *test)
{
	struct ref_fpdu *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	struct rnd_state rs;
	u32 n, start = 0, ulpdu;

	KUNIT_ASSERT_NOT_NULL(test, r);
	prandom_seed_state(&rs, FPDU_SEED);
	for (n = 0; n < FPDU_RANDOM_STREAM; n++) {
		ulpdu = random_ulpdu(&rs);
		if (!check_fpdu(test, r, start, ulpdu, n))
			return;
		start += r->total;
	}
}

/* FPDUs at random 4-aligned offsets, including across the 32-bit wrap. */
static void fpdu_random_starts(struct kunit *test)
{
	struct ref_fpdu *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	struct rnd_state rs;
	u32 n, start, ulpdu;

	KUNIT_ASSERT_NOT_NULL(test, r);
	prandom_seed_state(&rs, FPDU_SEED + 1);
	for (n = 0; n < FPDU_RANDOM_STARTS; n++) {
		start = prandom_u32_state(&rs) & ~(u32)(RSW_MPA_ALIGN - 1);
		if (n & 1)	/* every other one just below the wrap */
			start |= 0xffff0000;
		ulpdu = random_ulpdu(&rs);
		if (!check_fpdu(test, r, start, ulpdu, n))
			return;
	}
}

/* MULPDU at random EMSS fits at random starts, by the reference. */
static void fpdu_random_mulpdu(struct kunit *test)
{
	struct ref_fpdu *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	struct rnd_state rs;
	u32 n, i, emss, start, u;

	KUNIT_ASSERT_NOT_NULL(test, r);
	prandom_seed_state(&rs, FPDU_SEED + 2);
	for (n = 0; n < FPDU_RANDOM_EMSS; n++) {
		emss = 8 + prandom_u32_state(&rs) % 16384;
		u = rsw_mpa_mulpdu(emss, true);
		for (i = 0; u && i < 4; i++) {
			start = prandom_u32_state(&rs) &
				~(u32)(RSW_MPA_ALIGN - 1);
			ref_simulate(start, rsw_fpdu_plain_len(u), r);
			KUNIT_EXPECT_LE_MSG(test, r->total, emss,
					    "emss %u start %u mulpdu %u",
					    emss, start, u);
		}
	}
}

/* -------------------------------------------------------------------------
 * The CRC of an FPDU with Markers (RFC 5044: it covers every octet of the
 * FPDU before the CRC field, Markers inside it included), fed in pieces,
 * against CRC32c over the FPDU laid out octet by octet as the reference
 * simulation places it.  Every start offset a sender can produce (0..508,
 * step 4) with ULPDU lengths around 512, so a Marker lands at each offset
 * within ULPDU_Length, the DDP header, payload, PAD and before the CRC.
 */
#define CRC_MK_MAX_ULPDU	1100
#define CRC_MK_WIRE_MAX		(CRC_MK_MAX_ULPDU + 64)

/* Lay out the FPDU: @plain octets with Markers at the reference's places. */
static u32 crc_mk_layout(u32 start, const u8 *plain, u32 plain_len,
			 struct ref_fpdu *r, u8 *wire)
{
	u32 off = start, placed = 0, k = 0, w = 0;

	ref_simulate(start, plain_len, r);
	while (placed < plain_len) {
		if (k < r->markers && off == r->pos[k]) {
			wire[w++] = 0;
			wire[w++] = 0;
			wire[w++] = r->ptr[k] >> 8;
			wire[w++] = r->ptr[k] & 0xff;
			off += RSW_MPA_MARKER_LEN;
			k++;
			continue;
		}
		wire[w++] = plain[placed++];
		off++;
	}
	return w;
}

/* The cursor's CRC, fed in pieces of @step octets, then the end Marker. */
static __le32 crc_mk_pieces(u32 start, const u8 *plain, u32 crc_len,
			    u32 step)
{
	u32 crc = rsw_mpa_crc_init(), pos = 0, n;

	while (pos < crc_len) {
		n = min(step, crc_len - pos);
		crc = rsw_mpa_crc_update_mk(crc, start, pos, plain + pos, n);
		pos += n;
	}
	return rsw_mpa_crc_final(rsw_mpa_crc_mk_end(crc, start, pos));
}

static void fpdu_crc_markers(struct kunit *test)
{
	static const u32 steps[] = { 7, 64, 508, 4096 };
	struct ref_fpdu *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	u8 *plain = kunit_kzalloc(test, CRC_MK_WIRE_MAX, GFP_KERNEL);
	u8 *wire = kunit_kzalloc(test, CRC_MK_WIRE_MAX, GFP_KERNEL);
	u32 start, ulpdu, plain_len, wire_len, i, bad = 0, cases = 0;
	struct rnd_state rs;
	__le32 want;

	KUNIT_ASSERT_NOT_NULL(test, r);
	KUNIT_ASSERT_NOT_NULL(test, plain);
	KUNIT_ASSERT_NOT_NULL(test, wire);
	prandom_seed_state(&rs, FPDU_SEED + 3);
	prandom_bytes_state(&rs, plain, CRC_MK_WIRE_MAX);
	for (start = 0; start < RSW_MPA_MARKER_SPACING; start += 4) {
		for (ulpdu = 490; ulpdu <= 1040; ulpdu++) {
			if (ulpdu == 530)
				ulpdu = 1000;	/* and two Markers inside */
			plain_len = rsw_fpdu_plain_len(ulpdu);
			wire_len = crc_mk_layout(start, plain, plain_len, r,
						 wire);
			if (wire_len != rsw_fpdu_len(ulpdu, true, start))
				bad++;
			/* Everything before the CRC field, Markers included. */
			want = rsw_mpa_crc(wire, wire_len - RSW_MPA_CRC_LEN);
			for (i = 0; i < ARRAY_SIZE(steps); i++, cases++) {
				if (crc_mk_pieces(start, plain,
						  plain_len - RSW_MPA_CRC_LEN,
						  steps[i]) == want)
					continue;
				if (!bad++)
					KUNIT_FAIL(test, "start %u ulpdu %u step %u",
						   start, ulpdu, steps[i]);
			}
		}
	}
	KUNIT_EXPECT_EQ(test, bad, 0U);
	kunit_info(test, "%u FPDU layouts checked\n", cases);
}

static struct kunit_case fpdu_cases[] = {
	KUNIT_CASE_PARAM(fpdu_pad, pad_gen_params),
	KUNIT_CASE_PARAM(fpdu_plain_len, pad_gen_params),
	KUNIT_CASE_PARAM(fpdu_marker_boundary, marker_gen_params),
	KUNIT_CASE_PARAM(fpdu_marker_boundary_reference, marker_gen_params),
	KUNIT_CASE_PARAM(fpdu_fpduptr, ptr_gen_params),
	KUNIT_CASE_PARAM(fpdu_marker_hdr, hdr_gen_params),
	KUNIT_CASE_PARAM(fpdu_mulpdu, mulpdu_gen_params),
	KUNIT_CASE(fpdu_mulpdu_fits),
	KUNIT_CASE(fpdu_random_stream),
	KUNIT_CASE(fpdu_random_starts),
	KUNIT_CASE(fpdu_random_mulpdu),
	KUNIT_CASE(fpdu_crc_markers),
	{}
};

static struct kunit_suite fpdu_suite = {
	.name = "rdmap_sw_fpdu",
	.test_cases = fpdu_cases,
};

kunit_test_suite(fpdu_suite);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("KUnit tests for rdmap_sw MPA framing arithmetic");
