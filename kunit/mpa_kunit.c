// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite rdmap_sw_mpa: MPA connection setup of mpa.c (RFC 5044
 * section 7.1, RFC 6581).
 *  - builder: exact octets, derived by hand from RFC 5044 Figure 8 and the
 *    RFC 6581 IRD/ORD word, and every way a frame can be refused;
 *  - parser: build -> parse round trips of every combination, every frame
 *    split at every octet boundary, malformed and truncated input;
 *  - negotiation: CRC, revision, IRD/ORD and RTR matrices for both roles,
 *    and whole handshakes on pseudo-random policies (fixed seed) checked
 *    against the invariants both sides must agree on.
 */
#include <kunit/test.h>
#include <linux/module.h>
#include <linux/prandom.h>
#include <linux/string.h>

#include "internal.h"

RSW_IMPORT_KUNIT_NS();

/* RFC 5044 Figure 8: "MPA ID Req Frame" and "MPA ID Rep Frame". */
static const u8 key_req[RSW_MPA_KEY_LEN] = {
	0x4d, 0x50, 0x41, 0x20, 0x49, 0x44, 0x20, 0x52,
	0x65, 0x71, 0x20, 0x46, 0x72, 0x61, 0x6d, 0x65,
};

static const u8 key_rep[RSW_MPA_KEY_LEN] = {
	0x4d, 0x50, 0x41, 0x20, 0x49, 0x44, 0x20, 0x52,
	0x65, 0x70, 0x20, 0x46, 0x72, 0x61, 0x6d, 0x65,
};

#define MAX_V2	RSW_MPA_V2_IRD_ORD_MAX
#define RTR_W	RSW_MPA_RTR_WRITE
#define RTR_R	RSW_MPA_RTR_READ
#define RTR_S	RSW_MPA_RTR_SEND
#define RTR_ALL	RSW_MPA_RTR_ALL
#define TRAILER	8	/* octets after a frame: not the parser's */

/* Private data pattern: octet i of any private data is pd_byte(i). */
static u8 pd_byte(u32 i)
{
	return (u8)(i * 7 + 3);
}

static const u8 *pd_pattern(void)
{
	static u8 pat[RSW_MPA_MAX_PD];
	u32 i;

	for (i = 0; i < sizeof(pat); i++)
		pat[i] = pd_byte(i);
	return pat;
}

static struct rsw_mpa_rx *new_rx(struct kunit *test, bool initiator, u8 rev)
{
	struct rsw_mpa_rx *rx = kunit_kzalloc(test, sizeof(*rx), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, rx);
	rsw_mpa_rx_init(rx, initiator, rev);
	return rx;
}

static u8 *new_buf(struct kunit *test, size_t len)
{
	u8 *buf = kunit_kzalloc(test, len, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, buf);
	return buf;
}

/* Build @f or fail the case; returns the frame length. */
static u32 build(struct kunit *test, const struct rsw_mpa_frame *f, bool reply,
		 u8 *buf, size_t size)
{
	int len = rsw_mpa_build(f, reply, buf, size);

	KUNIT_ASSERT_GT_MSG(test, len, 0, "frame not built: %d", len);
	return len;
}

static bool frame_eq(struct kunit *test, const struct rsw_mpa_frame *got,
		     const struct rsw_mpa_frame *want)
{
	bool pd_eq = got->pd_len == want->pd_len &&
		     (!want->pd_len ||
		      !memcmp(got->pd, want->pd, want->pd_len));
	bool eq = got->rev == want->rev && got->crc == want->crc &&
		  got->markers == want->markers &&
		  got->reject == want->reject &&
		  got->enhanced == want->enhanced && got->p2p == want->p2p &&
		  got->rtr == want->rtr && got->ird == want->ird &&
		  got->ord == want->ord && pd_eq;

	KUNIT_EXPECT_TRUE_MSG(test, eq,
			      "got rev %u crc %d m %d r %d s %d p2p %d rtr %#x ird %u ord %u pd %u%s; want rev %u crc %d m %d r %d s %d p2p %d rtr %#x ird %u ord %u pd %u",
			      got->rev, got->crc, got->markers, got->reject,
			      got->enhanced, got->p2p, got->rtr, got->ird,
			      got->ord, got->pd_len, pd_eq ? "" : " (differs)",
			      want->rev, want->crc, want->markers, want->reject,
			      want->enhanced, want->p2p, want->rtr, want->ird,
			      want->ord, want->pd_len);
	return eq;
}

/* =========================================================================
 * Builder: exact octets.  The Key is key_req or key_rep; ctl[] is what
 * follows it up to the ULP private data: M|C|R|S|Res, Rev, PD_Length and,
 * when enhanced, the IRD/ORD word P2P|Send|IRD, Write|Read|ORD.  The ULP
 * private data is the pattern.
 */
struct exact_case {
	const char *name;
	bool reply;
	struct rsw_mpa_frame f;
	u8 ctl[8];
	u32 hdr_len;		/* Key + ctl */
};

#define FR(...) { __VA_ARGS__ }

static const struct exact_case exact_cases[] = {
	{ "req_rev1_crc", 0, FR(.rev = 1, .crc = 1), { 0x40, 0x01, 0x00, 0x00 },
	  20 },
	{ "req_rev1_nocrc_pd1", 0, FR(.rev = 1, .pd_len = 1),
	  { 0x00, 0x01, 0x00, 0x01 }, 20 },
	{ "req_rev1_pd_max", 0, FR(.rev = 1, .crc = 1, .pd_len = 512),
	  { 0x40, 0x01, 0x02, 0x00 }, 20 },
	{ "req_rev2_plain_pd_max", 0, FR(.rev = 2, .crc = 1, .pd_len = 512),
	  { 0x40, 0x02, 0x02, 0x00 }, 20 },
	{ "req_rev2_crc_ird16_ord8", 0,
	  FR(.rev = 2, .crc = 1, .enhanced = 1, .ird = 16, .ord = 8),
	  { 0x50, 0x02, 0x00, 0x04, 0x00, 0x10, 0x00, 0x08 }, 24 },
	{ "req_rev2_nocrc_p2p_all", 0,
	  FR(.rev = 2, .enhanced = 1, .p2p = 1, .rtr = RTR_ALL, .ird = 1,
	     .ord = 1), { 0x10, 0x02, 0x00, 0x04, 0xc0, 0x01, 0xc0, 0x01 },
	  24 },
	{ "req_rev2_p2p_write", 0,
	  FR(.rev = 2, .crc = 1, .enhanced = 1, .p2p = 1, .rtr = RTR_W,
	     .ird = 2, .ord = 3),
	  { 0x50, 0x02, 0x00, 0x04, 0x80, 0x02, 0x80, 0x03 }, 24 },
	{ "req_rev2_p2p_read", 0,
	  FR(.rev = 2, .crc = 1, .enhanced = 1, .p2p = 1, .rtr = RTR_R,
	     .ird = 2, .ord = 3),
	  { 0x50, 0x02, 0x00, 0x04, 0x80, 0x02, 0x40, 0x03 }, 24 },
	{ "req_rev2_p2p_send_pd3", 0,
	  FR(.rev = 2, .crc = 1, .enhanced = 1, .p2p = 1, .rtr = RTR_S,
	     .ird = 2, .ord = 3, .pd_len = 3),
	  { 0x50, 0x02, 0x00, 0x07, 0xc0, 0x02, 0x00, 0x03 }, 24 },
	{ "req_rev2_pd_max_ird_ord_max", 0,
	  FR(.rev = 2, .crc = 1, .enhanced = 1, .ird = MAX_V2, .ord = MAX_V2,
	     .pd_len = 508), { 0x50, 0x02, 0x02, 0x00, 0x3f, 0xff, 0x3f, 0xff },
	  24 },
	{ "rep_rev1_accept_crc", 1, FR(.rev = 1, .crc = 1),
	  { 0x40, 0x01, 0x00, 0x00 }, 20 },
	{ "rep_rev1_reject", 1, FR(.rev = 1, .reject = 1),
	  { 0x20, 0x01, 0x00, 0x00 }, 20 },
	{ "rep_rev1_reject_crc_pd5", 1,
	  FR(.rev = 1, .crc = 1, .reject = 1, .pd_len = 5),
	  { 0x60, 0x01, 0x00, 0x05 }, 20 },
	{ "rep_rev1_pd_max", 1, FR(.rev = 1, .pd_len = 512),
	  { 0x00, 0x01, 0x02, 0x00 }, 20 },
	{ "rep_rev2_write_pd2", 1,
	  FR(.rev = 2, .crc = 1, .enhanced = 1, .p2p = 1, .rtr = RTR_W,
	     .ird = 4, .ord = 2, .pd_len = 2),
	  { 0x50, 0x02, 0x00, 0x06, 0x80, 0x04, 0x80, 0x02 }, 24 },
	{ "rep_rev2_read", 1,
	  FR(.rev = 2, .crc = 1, .enhanced = 1, .p2p = 1, .rtr = RTR_R,
	     .ird = 4, .ord = 2),
	  { 0x50, 0x02, 0x00, 0x04, 0x80, 0x04, 0x40, 0x02 }, 24 },
	{ "rep_rev2_send", 1,
	  FR(.rev = 2, .crc = 1, .enhanced = 1, .p2p = 1, .rtr = RTR_S,
	     .ird = 4, .ord = 2),
	  { 0x50, 0x02, 0x00, 0x04, 0xc0, 0x04, 0x00, 0x02 }, 24 },
	{ "rep_rev2_no_p2p_zero", 1, FR(.rev = 2, .enhanced = 1),
	  { 0x10, 0x02, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00 }, 24 },
	{ "rep_rev2_reject_enhanced", 1,
	  FR(.rev = 2, .crc = 1, .reject = 1, .enhanced = 1, .ird = 9,
	     .ord = 1), { 0x70, 0x02, 0x00, 0x04, 0x00, 0x09, 0x00, 0x01 },
	  24 },
	/* M (RFC 5044 7.1.1): the frame's sender wants Markers. */
	{ "req_rev1_markers", 0, FR(.rev = 1, .markers = 1),
	  { 0x80, 0x01, 0x00, 0x00 }, 20 },
	{ "req_rev1_markers_crc", 0, FR(.rev = 1, .crc = 1, .markers = 1),
	  { 0xc0, 0x01, 0x00, 0x00 }, 20 },
	{ "req_rev2_markers_p2p", 0,
	  FR(.rev = 2, .markers = 1, .enhanced = 1, .p2p = 1, .rtr = RTR_W,
	     .ird = 1, .ord = 1),
	  { 0x90, 0x02, 0x00, 0x04, 0x80, 0x01, 0x80, 0x01 }, 24 },
	{ "rep_rev1_markers", 1, FR(.rev = 1, .markers = 1),
	  { 0x80, 0x01, 0x00, 0x00 }, 20 },
	{ "rep_rev2_markers_crc", 1,
	  FR(.rev = 2, .crc = 1, .markers = 1, .enhanced = 1, .ird = 2,
	     .ord = 3), { 0xd0, 0x02, 0x00, 0x04, 0x00, 0x02, 0x00, 0x03 },
	  24 },
	{ "rep_rev2_pd_max", 1,
	  FR(.rev = 2, .crc = 1, .enhanced = 1, .ird = 128, .ord = 128,
	     .pd_len = 508), { 0x50, 0x02, 0x02, 0x00, 0x00, 0x80, 0x00, 0x80 },
	  24 },
};

KUNIT_ARRAY_PARAM_DESC(exact, exact_cases, name);

static void mpa_build_exact(struct kunit *test)
{
	const struct exact_case *c = test->param_value;
	struct rsw_mpa_frame f = c->f;
	u8 *buf = new_buf(test, RSW_MPA_RR_MAX_LEN);
	u32 len;

	f.pd = pd_pattern();
	len = build(test, &f, c->reply, buf, RSW_MPA_RR_MAX_LEN);
	KUNIT_EXPECT_EQ(test, len, c->hdr_len + f.pd_len);
	KUNIT_EXPECT_MEMEQ(test, buf, c->reply ? key_rep : key_req,
			   RSW_MPA_KEY_LEN);
	KUNIT_EXPECT_MEMEQ(test, buf + RSW_MPA_KEY_LEN, c->ctl,
			   c->hdr_len - RSW_MPA_KEY_LEN);
	KUNIT_EXPECT_MEMEQ(test, buf + c->hdr_len, pd_pattern(), f.pd_len);
	KUNIT_EXPECT_LE(test, len, RSW_MPA_RR_MAX_LEN);
}

/* =========================================================================
 * Builder: refusals.  A refused frame leaves the buffer untouched.
 */
struct refuse_case {
	const char *name;
	bool reply;
	bool no_pd_ptr;		/* pd_len without a pd pointer */
	struct rsw_mpa_frame f;
	size_t size;
	int err;
};

static const struct refuse_case refuse_cases[] = {
	{ "rev1_pd_513", 0, 0, FR(.rev = 1, .pd_len = 513), 600, -EINVAL },
	{ "rev2_enhanced_ulp_pd_509", 0, 0,
	  FR(.rev = 2, .enhanced = 1, .pd_len = 509), 600, -EINVAL },
	{ "rev2_plain_pd_513", 1, 0, FR(.rev = 2, .pd_len = 513), 600,
	  -EINVAL },
	{ "pd_ffff", 0, 0, FR(.rev = 1, .pd_len = 0xffff), 600, -EINVAL },
	{ "pd_len_without_pointer", 0, 1, FR(.rev = 1, .pd_len = 4), 600,
	  -EINVAL },
	{ "reject_in_request", 0, 0, FR(.rev = 1, .reject = 1), 600, -EINVAL },
	{ "rev0", 0, 0, FR(.rev = 0), 600, -EINVAL },
	{ "rev3", 1, 0, FR(.rev = 3), 600, -EINVAL },
	{ "enhanced_rev1", 0, 0, FR(.rev = 1, .enhanced = 1), 600, -EINVAL },
	{ "p2p_not_enhanced", 0, 0, FR(.rev = 2, .p2p = 1, .rtr = RTR_W), 600,
	  -EINVAL },
	{ "ird_not_enhanced", 0, 0, FR(.rev = 2, .ird = 1), 600, -EINVAL },
	{ "request_p2p_no_rtr", 0, 0, FR(.rev = 2, .enhanced = 1, .p2p = 1),
	  600, -EINVAL },
	{ "reply_p2p_two_rtr", 1, 0,
	  FR(.rev = 2, .enhanced = 1, .p2p = 1, .rtr = RTR_W | RTR_R), 600,
	  -EINVAL },
	{ "reply_p2p_no_rtr", 1, 0, FR(.rev = 2, .enhanced = 1, .p2p = 1), 600,
	  -EINVAL },
	{ "rtr_unknown_bit", 0, 0,
	  FR(.rev = 2, .enhanced = 1, .p2p = 1, .rtr = 0x8), 600, -EINVAL },
	{ "ird_above_14_bits", 0, 0, FR(.rev = 2, .enhanced = 1, .ird = 0x4000),
	  600, -EINVAL },
	{ "ord_above_14_bits", 1, 0, FR(.rev = 2, .enhanced = 1, .ord = 0xffff),
	  600, -EINVAL },
	{ "buffer_one_short_header", 0, 0, FR(.rev = 1), 19, -ENOSPC },
	{ "buffer_one_short_max", 0, 0,
	  FR(.rev = 2, .enhanced = 1, .pd_len = 508), 531, -ENOSPC },
	{ "buffer_empty", 1, 0, FR(.rev = 1), 0, -ENOSPC },
};

KUNIT_ARRAY_PARAM_DESC(refuse, refuse_cases, name);

static void mpa_build_refuses(struct kunit *test)
{
	const struct refuse_case *c = test->param_value;
	struct rsw_mpa_frame f = c->f;
	u8 *buf = new_buf(test, 600);
	u8 *ref = new_buf(test, 600);

	f.pd = c->no_pd_ptr ? NULL : pd_pattern();
	if (f.pd_len > RSW_MPA_MAX_PD)
		f.pd = new_buf(test, f.pd_len);
	memset(buf, 0xa5, 600);
	memset(ref, 0xa5, 600);
	KUNIT_EXPECT_EQ(test, rsw_mpa_build(&f, c->reply, buf, c->size),
			c->err);
	KUNIT_EXPECT_MEMEQ(test, buf, ref, 600);
}

/* =========================================================================
 * Request description from local parameters.
 */
struct request_case {
	const char *name;
	struct rsw_mpa_params lp;
	int err;
	struct rsw_mpa_frame want;	/* .pd not compared */
};

/* Local parameters: revision, CRC, P2P, RTR set, IRD, ORD (, PD length). */
#define LP(v, c, p, t, i, o) \
	{ .rev = v, .crc = c, .p2p = p, .rtr = t, .ird = i, .ord = o }
/* Revision 2, no CRC: accepted RTR types @t, preferred @pr. */
#define LPX(t, pr, i, o) \
	{ .rev = 2, .rtr = t, .rtr_prefer = pr, .ird = i, .ord = o }
/* Revision 2 initiator asking for CRC @c, requiring it @r. */
#define LPC(c, r) { .rev = 2, .crc = c, .crc_required = r }
/* The same asking for Markers (M). */
#define LPM(v, c, p, t, i, o) \
	{ .rev = v, .crc = c, .markers = 1, .p2p = p, .rtr = t, .ird = i, \
	  .ord = o }
/* Revision @v, IRD @i, ORD @o, a peer without IRD/ORD taken to have @b. */
#define LPB(v, i, o, b) \
	{ .rev = v, .rtr = RTR_ALL, .ird = i, .ord = o, .peer_ird_ord = b }
#define LPD(v, c, p, t, i, o, l) \
	{ .rev = v, .crc = c, .p2p = p, .rtr = t, .ird = i, .ord = o, \
	  .pd_len = l }

static const struct request_case request_cases[] = {
	{ "defaults_rev2", LP(2, 1, 0, RTR_ALL, 16, 8), 0,
	  FR(.rev = 2, .crc = 1, .enhanced = 1, .ird = 16, .ord = 8) },
	{ "rev1_no_enhanced", LP(1, 1, 0, RTR_ALL, 16, 8), 0,
	  FR(.rev = 1, .crc = 1) },
	{ "crc_off", LP(2, 0, 0, RTR_ALL, 0, 0), 0,
	  FR(.rev = 2, .enhanced = 1) },
	{ "p2p_offers_all", LP(2, 1, 1, RTR_ALL, 1, 1), 0,
	  FR(.rev = 2, .crc = 1, .enhanced = 1, .p2p = 1, .rtr = RTR_ALL,
	     .ird = 1, .ord = 1) },
	{ "p2p_ord0_drops_read", LP(2, 1, 1, RTR_ALL, 1, 0), 0,
	  FR(.rev = 2, .crc = 1, .enhanced = 1, .p2p = 1, .rtr = RTR_W | RTR_S,
	     .ird = 1) },
	{ "p2p_only_read_ord0", LP(2, 1, 1, RTR_R, 0, 0), -EINVAL, {} },
	{ "p2p_no_rtr", LP(2, 1, 1, 0, 0, 1), -EINVAL, {} },
	{ "p2p_rev1", LP(1, 1, 1, RTR_ALL, 0, 1), -EINVAL, {} },
	{ "rev0", LP(0, 1, 0, RTR_ALL, 0, 0), -EINVAL, {} },
	{ "rev3", LP(3, 1, 0, RTR_ALL, 0, 0), -EINVAL, {} },
	{ "ird_0x4000", LP(2, 1, 0, RTR_ALL, 0x4000, 0), -EINVAL, {} },
	{ "ord_0xffff", LP(2, 1, 0, RTR_ALL, 0, 0xffff), -EINVAL, {} },
	{ "rtr_unknown", LP(2, 1, 0, 0x10, 0, 0), -EINVAL, {} },
	{ "pd_513", LPD(2, 1, 0, RTR_ALL, 0, 0, 513), -EINVAL, {} },
	{ "markers_rev1", LPM(1, 0, 0, RTR_ALL, 0, 0), 0,
	  FR(.rev = 1, .markers = 1) },
	{ "markers_rev2_p2p", LPM(2, 1, 1, RTR_ALL, 1, 1), 0,
	  FR(.rev = 2, .crc = 1, .markers = 1, .enhanced = 1, .p2p = 1,
	     .rtr = RTR_ALL, .ird = 1, .ord = 1) },
};

KUNIT_ARRAY_PARAM_DESC(request, request_cases, name);

static void mpa_request_from_params(struct kunit *test)
{
	const struct request_case *c = test->param_value;
	struct rsw_mpa_params lp = c->lp;
	struct rsw_mpa_frame f;

	lp.pd = pd_pattern();
	KUNIT_ASSERT_EQ(test, rsw_mpa_request(&lp, &f), c->err);
	if (c->err)
		return;
	f.pd = NULL;
	frame_eq(test, &f, &c->want);
}

/* ULP private data that fits rev 1 but not rev 2's 508 fails at the builder. */
static void mpa_request_pd_limit_at_builder(struct kunit *test)
{
	struct rsw_mpa_params lp = LPD(2, 1, 0, RTR_ALL, 0, 0, 509);
	u8 *buf = new_buf(test, 600);
	struct rsw_mpa_frame f;

	lp.pd = pd_pattern();
	KUNIT_ASSERT_EQ(test, rsw_mpa_request(&lp, &f), 0);
	KUNIT_EXPECT_EQ(test, rsw_mpa_build(&f, false, buf, 600), -EINVAL);
	lp.pd_len = 508;
	KUNIT_ASSERT_EQ(test, rsw_mpa_request(&lp, &f), 0);
	KUNIT_EXPECT_EQ(test, rsw_mpa_build(&f, false, buf, 600), 532);
	lp.rev = 1;
	lp.pd_len = 512;
	KUNIT_ASSERT_EQ(test, rsw_mpa_request(&lp, &f), 0);
	KUNIT_EXPECT_EQ(test, rsw_mpa_build(&f, false, buf, 600), 532);
}

/* =========================================================================
 * Round trip: every frame the builder accepts parses back to itself.
 */
struct rt_iter {
	struct rsw_mpa_frame f;
	bool reply;
};

static const u8 rt_req_rtr[] = {
	0, RTR_W, RTR_R, RTR_S, RTR_W | RTR_R, RTR_R | RTR_S, RTR_ALL,
};

static const u8 rt_rep_rtr[] = { 0, RTR_W, RTR_R, RTR_S };
static const u16 rt_vals[] = { 0, 1, 127, MAX_V2 };

/* Describe combination @n; false past the last one. */
static bool rt_combo(u32 n, struct rt_iter *it)
{
	u32 reply = n & 1, crc = (n >> 1) & 1, rev = (n >> 2) & 1;
	u32 enh = (n >> 3) & 1, rej = (n >> 4) & 1, pdi = (n >> 5) % 3;
	u32 rtri = (n >> 5) / 3 % ARRAY_SIZE(rt_req_rtr);
	u32 last = (n >> 5) / 3 / ARRAY_SIZE(rt_req_rtr);
	struct rsw_mpa_frame *f = &it->f;

	if (last)
		return false;
	*f = (struct rsw_mpa_frame) { .rev = rev + 1, .crc = crc };
	it->reply = reply;
	f->enhanced = enh && f->rev == 2;
	f->reject = rej && reply;
	if (f->enhanced) {
		f->ird = rt_vals[n % ARRAY_SIZE(rt_vals)];
		f->ord = rt_vals[(n / 3) % ARRAY_SIZE(rt_vals)];
		f->rtr = reply ? rt_rep_rtr[rtri % ARRAY_SIZE(rt_rep_rtr)] :
				 rt_req_rtr[rtri];
		f->p2p = f->rtr && !f->reject;
		if (!f->p2p)
			f->rtr = 0;
	}
	f->pd_len = pdi == 0 ? 0 : pdi == 1 ? 1 :
		    rsw_mpa_max_ulp_pd(f->enhanced);
	f->pd = pd_pattern();
	return true;
}

static void mpa_round_trip_all(struct kunit *test)
{
	u8 *buf = new_buf(test, RSW_MPA_RR_MAX_LEN + TRAILER);
	struct rsw_mpa_rx *rx = new_rx(test, false, 2);
	enum rsw_mpa_rx_status st;
	struct rt_iter it;
	u32 n, len, done = 0;
	size_t used;

	for (n = 0; rt_combo(n, &it); n++) {
		len = build(test, &it.f, it.reply, buf,
			    RSW_MPA_RR_MAX_LEN + TRAILER);
		memset(buf + len, 0xee, TRAILER);
		rsw_mpa_rx_init(rx, it.reply, RSW_MPA_REV_2);
		st = rsw_mpa_rx_feed(rx, buf, len + TRAILER, &used);
		KUNIT_EXPECT_EQ_MSG(test, st, it.f.reject ? RSW_MPA_RX_FAILED :
				    RSW_MPA_RX_COMPLETE, "combination %u", n);
		KUNIT_EXPECT_EQ_MSG(test, used, len, "combination %u", n);
		if (!frame_eq(test, &rx->frame, &it.f))
			break;
		done++;
	}
	KUNIT_EXPECT_EQ(test, done, n);
	KUNIT_EXPECT_GE(test, done, 300U);
}

/* =========================================================================
 * Split streams: a frame fed in two chunks split at every octet, or one
 * octet at a time, gives the one-shot result and leaves what follows it.
 */
struct split_case {
	const char *name;
	bool initiator;
	struct rsw_mpa_frame f;
	bool reply;		/* frame built as a Reply */
	int patch_at;		/* octet overwritten after build, or -1 */
	u8 patch;
};

static const struct split_case split_cases[] = {
	{ "req_rev1_empty", 0, FR(.rev = 1, .crc = 1), 0, -1, 0 },
	{ "req_rev2_p2p_pd7", 0,
	  FR(.rev = 2, .enhanced = 1, .p2p = 1, .rtr = RTR_ALL, .ird = 3,
	     .ord = 5, .pd_len = 7), 0, -1, 0 },
	{ "req_rev1_pd_max", 0, FR(.rev = 1, .pd_len = 512), 0, -1, 0 },
	{ "rep_rev2_pd_max", 1,
	  FR(.rev = 2, .crc = 1, .enhanced = 1, .ird = 1, .ord = 2,
	     .pd_len = 508), 1, -1, 0 },
	{ "req_rev1_markers", 0, FR(.rev = 1, .markers = 1), 0, -1, 0 },
	{ "rep_rev2_markers_p2p", 1,
	  FR(.rev = 2, .crc = 1, .markers = 1, .enhanced = 1, .p2p = 1,
	     .rtr = RTR_W, .ird = 1, .ord = 2), 1, -1, 0 },
	{ "rep_reject_pd9", 1, FR(.rev = 1, .reject = 1, .pd_len = 9), 1, -1,
	  0 },
	{ "bad_key", 0, FR(.rev = 1, .pd_len = 3), 0, 3, 'x' },
	{ "pd_len_768", 1, FR(.rev = 1), 1, 18, 0x03 },
	{ "rev3", 0, FR(.rev = 1, .pd_len = 40), 0, 17, 3 },
	{ "enhanced_pd_too_short", 0, FR(.rev = 2, .pd_len = 2), 0, 16, 0x10 },
};

KUNIT_ARRAY_PARAM_DESC(split, split_cases, name);

struct split_result {
	enum rsw_mpa_rx_status st;
	enum rsw_mpa_reason reason;
	size_t used;
};

/* Feed @buf in chunks ending at the offsets in @cuts (last one = @len). */
static struct split_result feed_cuts(struct rsw_mpa_rx *rx, bool initiator,
				     const u8 *buf, const u32 *cuts, u32 ncuts)
{
	struct split_result res = {};
	u32 i, from = 0;
	size_t used;

	rsw_mpa_rx_init(rx, initiator, RSW_MPA_REV_2);
	for (i = 0; i < ncuts; i++) {
		res.st = rsw_mpa_rx_feed(rx, buf + from, cuts[i] - from, &used);
		res.used += used;
		from = cuts[i];
	}
	res.reason = rx->reason;
	return res;
}

static bool split_same(struct kunit *test, const struct split_result *a,
		       const struct split_result *b, struct rsw_mpa_rx *ra,
		       struct rsw_mpa_rx *rb, u32 at)
{
	bool no_frame = a->st == RSW_MPA_RX_FAILED &&
			a->reason != RSW_MPA_E_REJECTED;

	KUNIT_EXPECT_EQ_MSG(test, a->st, b->st, "split at %u", at);
	KUNIT_EXPECT_EQ_MSG(test, a->reason, b->reason, "split at %u", at);
	KUNIT_EXPECT_EQ_MSG(test, a->used, b->used, "split at %u", at);
	if (!no_frame && !frame_eq(test, &ra->frame, &rb->frame))
		return false;
	return a->st == b->st && a->reason == b->reason && a->used == b->used;
}

static void mpa_split_every_boundary(struct kunit *test)
{
	const struct split_case *c = test->param_value;
	struct rsw_mpa_rx *ref = new_rx(test, c->initiator, 2);
	struct rsw_mpa_rx *rx = new_rx(test, c->initiator, 2);
	u8 *buf = new_buf(test, RSW_MPA_RR_MAX_LEN + TRAILER);
	struct rsw_mpa_frame f = c->f;
	struct split_result one, two;
	u32 len, at, cuts[2];

	f.pd = pd_pattern();
	len = build(test, &f, c->reply, buf, RSW_MPA_RR_MAX_LEN) + TRAILER;
	memset(buf + len - TRAILER, 0xee, TRAILER);
	if (c->patch_at >= 0)
		buf[c->patch_at] = c->patch;
	cuts[0] = len;
	one = feed_cuts(ref, c->initiator, buf, cuts, 1);
	KUNIT_EXPECT_NE(test, one.st, RSW_MPA_RX_MORE);
	KUNIT_EXPECT_LE(test, one.used, (size_t)(len - TRAILER));
	for (at = 0; at <= len; at++) {
		cuts[0] = at;
		cuts[1] = len;
		two = feed_cuts(rx, c->initiator, buf, cuts, 2);
		if (!split_same(test, &one, &two, ref, rx, at))
			return;
	}
}

/* One octet at a time; rsw_mpa_rx_want() always names what is missing. */
static void mpa_split_bytewise_want(struct kunit *test)
{
	const struct split_case *c = test->param_value;
	struct rsw_mpa_rx *rx = new_rx(test, c->initiator, 2);
	u8 *buf = new_buf(test, RSW_MPA_RR_MAX_LEN + TRAILER);
	struct rsw_mpa_frame f = c->f;
	enum rsw_mpa_rx_status st = RSW_MPA_RX_MORE;
	u32 len, total = 0, hdr = sizeof(struct rsw_mpa_rr);
	size_t used;

	f.pd = pd_pattern();
	len = build(test, &f, c->reply, buf, RSW_MPA_RR_MAX_LEN);
	memset(buf + len, 0xee, TRAILER);
	if (c->patch_at >= 0)
		buf[c->patch_at] = c->patch;
	while (total < len + TRAILER && st == RSW_MPA_RX_MORE) {
		u32 end = total < hdr ? hdr : len;

		KUNIT_ASSERT_EQ_MSG(test, rsw_mpa_rx_want(rx), end - total,
				    "at %u", total);
		st = rsw_mpa_rx_feed(rx, buf + total, 1, &used);
		KUNIT_ASSERT_EQ(test, used, (size_t)1);
		total += used;
	}
	KUNIT_EXPECT_NE(test, st, RSW_MPA_RX_MORE);
	KUNIT_EXPECT_EQ(test, rsw_mpa_rx_want(rx), 0U);
	KUNIT_EXPECT_EQ(test, rsw_mpa_rx_feed(rx, buf + total, 1, &used), st);
	KUNIT_EXPECT_EQ(test, used, (size_t)0);
}

/* =========================================================================
 * Malformed and unusual input.  The frame is built from @f as a Request or
 * Reply, its Key replaced by @key if set and octet patch[i][0] set to
 * patch[i][1] (offset 0 ends the list).  @cut feeds only that many octets
 * and then ends the stream; -1 feeds the frame and what follows it.  The
 * parser must finish with @reason (complete if RSW_MPA_OK) after consuming
 * @used octets.
 */
struct bad_case {
	const char *name;
	bool initiator;
	u8 offered;		/* initiator: revision offered */
	bool reply;
	struct rsw_mpa_frame f;
	u8 patch[2][2];
	const char *key;
	int cut;
	enum rsw_mpa_reason reason;
	u32 used;
};

static const struct bad_case bad_cases[] = {
	{ "resp_key_http", 0, 2, 0, FR(.rev = 1),
	  {}, "GET / HTTP/1.1\r\n", -1, RSW_MPA_E_KEY, 20 },
	{ "init_key_http", 1, 2, 1, FR(.rev = 1),
	  {}, "HTTP/1.1 200 OK\r", -1, RSW_MPA_E_KEY, 20 },
	{ "key_lower_case_r", 0, 2, 0, FR(.rev = 1),
	  { { 7, 'r' } }, NULL, -1, RSW_MPA_E_KEY, 20 },
	{ "resp_gets_reply_key", 0, 2, 1, FR(.rev = 1),
	  {}, NULL, -1, RSW_MPA_E_KEY_ROLE, 20 },
	{ "init_gets_request_key", 1, 2, 0, FR(.rev = 1),
	  {}, NULL, -1, RSW_MPA_E_KEY_ROLE, 20 },
	{ "resp_rev0", 0, 2, 0, FR(.rev = 1),
	  { { 17, 0 } }, NULL, -1, RSW_MPA_E_REV, 20 },
	{ "resp_rev3", 0, 2, 0, FR(.rev = 1),
	  { { 17, 3 } }, NULL, -1, RSW_MPA_E_REV, 20 },
	{ "resp_rev255", 0, 2, 0, FR(.rev = 1),
	  { { 17, 255 } }, NULL, -1, RSW_MPA_E_REV, 20 },
	{ "init_rev0", 1, 2, 1, FR(.rev = 1),
	  { { 17, 0 } }, NULL, -1, RSW_MPA_E_REV, 20 },
	{ "init_rev3", 1, 2, 1, FR(.rev = 1),
	  { { 17, 3 } }, NULL, -1, RSW_MPA_E_REV, 20 },
	{ "init_rev255", 1, 2, 1, FR(.rev = 1),
	  { { 17, 255 } }, NULL, -1, RSW_MPA_E_REV, 20 },
	{ "init_offered1_gets_rev2", 1, 1, 1, FR(.rev = 2),
	  {}, NULL, -1, RSW_MPA_E_REV, 20 },
	{ "init_offered2_gets_rev1", 1, 2, 1, FR(.rev = 1),
	  {}, NULL, -1, RSW_MPA_OK, 20 },
	{ "resp_pd_len_513", 0, 2, 0, FR(.rev = 1),
	  { { 18, 0x02 }, { 19, 0x01 } }, NULL, -1, RSW_MPA_E_PD_LEN, 20 },
	{ "init_pd_len_513", 1, 2, 1, FR(.rev = 1),
	  { { 18, 0x02 }, { 19, 0x01 } }, NULL, -1, RSW_MPA_E_PD_LEN, 20 },
	{ "pd_len_ffff", 0, 2, 0, FR(.rev = 1),
	  { { 18, 0xff }, { 19, 0xff } }, NULL, -1, RSW_MPA_E_PD_LEN, 20 },
	{ "pd_len_512_ok", 0, 2, 0, FR(.rev = 1, .pd_len = 512),
	  {}, NULL, -1, RSW_MPA_OK, 532 },
	{ "enhanced_pd_len_0", 0, 2, 0, FR(.rev = 2),
	  { { 16, 0x10 } }, NULL, -1, RSW_MPA_E_ENHANCED, 20 },
	{ "enhanced_pd_len_3", 1, 2, 1, FR(.rev = 2, .pd_len = 3),
	  { { 16, 0x10 } }, NULL, -1, RSW_MPA_E_ENHANCED, 20 },
	{ "res_bits_ignored_request", 0, 2, 0, FR(.rev = 2, .pd_len = 2),
	  { { 16, 0x0f } }, NULL, -1, RSW_MPA_OK, 22 },
	{ "res_bits_ignored_reply", 1, 2, 1, FR(.rev = 1),
	  { { 16, 0x4f } }, NULL, -1, RSW_MPA_OK, 20 },
	{ "rev1_s_bit_is_res", 0, 2, 0, FR(.rev = 1),
	  { { 16, 0x10 } }, NULL, -1, RSW_MPA_OK, 20 },
	{ "r_bit_in_request_ignored", 0, 2, 0, FR(.rev = 1, .pd_len = 1),
	  { { 16, 0x20 } }, NULL, -1, RSW_MPA_OK, 21 },
	{ "reject_no_pd", 1, 2, 1, FR(.rev = 1, .reject = 1),
	  {}, NULL, -1, RSW_MPA_E_REJECTED, 20 },
	{ "reject_with_pd", 1, 2, 1, FR(.rev = 1, .reject = 1, .pd_len = 33),
	  {}, NULL, -1, RSW_MPA_E_REJECTED, 53 },
	{ "reject_rev2_enhanced_pd", 1, 2, 1,
	  FR(.rev = 2, .reject = 1, .enhanced = 1, .ird = 4, .pd_len = 6),
	  {}, NULL, -1, RSW_MPA_E_REJECTED, 30 },
	{ "eof_empty", 0, 2, 0, FR(.rev = 1),
	  {}, NULL, 0, RSW_MPA_E_CLOSED, 0 },
	{ "eof_in_key", 0, 2, 0, FR(.rev = 1),
	  {}, NULL, 10, RSW_MPA_E_TRUNCATED, 10 },
	{ "eof_after_header", 1, 2, 1, FR(.rev = 1, .pd_len = 5),
	  {}, NULL, 20, RSW_MPA_E_TRUNCATED, 20 },
	{ "eof_in_pd", 0, 2, 0, FR(.rev = 1, .pd_len = 5),
	  {}, NULL, 22, RSW_MPA_E_TRUNCATED, 22 },
	{ "eof_one_short", 0, 2, 0, FR(.rev = 2, .enhanced = 1, .pd_len = 508),
	  {}, NULL, 531, RSW_MPA_E_TRUNCATED, 531 },
	{ "eof_after_frame", 0, 2, 0, FR(.rev = 1, .pd_len = 5),
	  {}, NULL, 25, RSW_MPA_OK, 25 },
	{ "eof_after_error", 0, 2, 0, FR(.rev = 1),
	  { { 17, 9 } }, NULL, 20, RSW_MPA_E_REV, 20 },
};

KUNIT_ARRAY_PARAM_DESC(bad, bad_cases, name);

static u32 bad_build(struct kunit *test, const struct bad_case *c, u8 *buf)
{
	struct rsw_mpa_frame f = c->f;
	u32 len, i;

	f.pd = pd_pattern();
	len = build(test, &f, c->reply, buf, RSW_MPA_RR_MAX_LEN);
	if (c->key)
		memcpy(buf, c->key, RSW_MPA_KEY_LEN);
	for (i = 0; i < ARRAY_SIZE(c->patch) && c->patch[i][0]; i++)
		buf[c->patch[i][0]] = c->patch[i][1];
	memset(buf + len, 0xee, TRAILER);
	return len;
}

static void mpa_parse_malformed(struct kunit *test)
{
	const struct bad_case *c = test->param_value;
	struct rsw_mpa_rx *rx = new_rx(test, c->initiator, c->offered);
	u8 *buf = new_buf(test, RSW_MPA_RR_MAX_LEN + TRAILER);
	u32 len = bad_build(test, c, buf);
	enum rsw_mpa_rx_status want = c->reason ? RSW_MPA_RX_FAILED :
						  RSW_MPA_RX_COMPLETE;
	enum rsw_mpa_rx_status st;
	size_t used;

	if (c->cut < 0) {
		st = rsw_mpa_rx_feed(rx, buf, len + TRAILER, &used);
	} else {
		st = rsw_mpa_rx_feed(rx, buf, c->cut, &used);
		if (rsw_mpa_rx_eof(rx) != RSW_MPA_OK)
			st = RSW_MPA_RX_FAILED;
	}
	KUNIT_EXPECT_EQ(test, st, want);
	KUNIT_EXPECT_EQ(test, rx->reason, c->reason);
	KUNIT_EXPECT_EQ(test, used, (size_t)c->used);
	if (st == RSW_MPA_RX_COMPLETE) {
		/* Ignored bits stay ignored: R in a Request, S in rev 1. */
		KUNIT_EXPECT_FALSE(test, rx->frame.reject);
		KUNIT_EXPECT_EQ(test, rx->frame.enhanced, c->f.enhanced);
	}
	/* Finished parsers stay finished and consume nothing. */
	KUNIT_EXPECT_EQ(test, rsw_mpa_rx_feed(rx, buf, len, &used), want);
	KUNIT_EXPECT_EQ(test, used, (size_t)0);
	KUNIT_EXPECT_EQ(test, rsw_mpa_rx_eof(rx), c->reason);
}

/* What the ULP sees of a (rejecting) Reply: its private data, no IRD/ORD. */
static void mpa_parse_reject_pd_visible(struct kunit *test)
{
	struct rsw_mpa_frame f = FR(.rev = 2, .reject = 1, .enhanced = 1,
				    .ird = 7, .ord = 9, .pd_len = 6);
	struct rsw_mpa_rx *rx = new_rx(test, true, 2);
	u8 *buf = new_buf(test, RSW_MPA_RR_MAX_LEN);
	u32 len;
	size_t used;

	f.pd = pd_pattern();
	len = build(test, &f, true, buf, RSW_MPA_RR_MAX_LEN);
	KUNIT_ASSERT_EQ(test, rsw_mpa_rx_feed(rx, buf, len, &used),
			RSW_MPA_RX_FAILED);
	KUNIT_EXPECT_EQ(test, rx->reason, RSW_MPA_E_REJECTED);
	KUNIT_EXPECT_PTR_EQ(test, rx->frame.pd, (const u8 *)rx->buf + 24);
	KUNIT_EXPECT_EQ(test, rx->frame.pd_len, 6);
	KUNIT_EXPECT_MEMEQ(test, rx->frame.pd, pd_pattern(), 6);
	KUNIT_EXPECT_EQ(test, rx->frame.ird, 7);
	KUNIT_EXPECT_EQ(test, rx->frame.ord, 9);
}

/*
 * A peer's M is decoded and honoured by either role: the side that
 * receives the frame sends Markers, whatever its own policy.
 */
static void mpa_parse_markers_honoured(struct kunit *test)
{
	struct rsw_mpa_params lp = LP(2, 1, 0, RTR_ALL, 4, 4);
	struct rsw_mpa_frame f = FR(.rev = 2, .enhanced = 1), rep;
	struct rsw_mpa_rx *rx = new_rx(test, false, 2);
	u8 *buf = new_buf(test, RSW_MPA_RR_MAX_LEN);
	struct rsw_mpa_conn conn;
	size_t used;
	u32 len;

	len = build(test, &f, false, buf, RSW_MPA_RR_MAX_LEN);
	buf[16] |= 0x80;
	KUNIT_ASSERT_EQ(test, rsw_mpa_rx_feed(rx, buf, len, &used),
			RSW_MPA_RX_COMPLETE);
	KUNIT_EXPECT_TRUE(test, rx->frame.markers);
	KUNIT_EXPECT_EQ(test, rsw_mpa_accept(&lp, &rx->frame, &rep, &conn),
			RSW_MPA_OK);
	KUNIT_EXPECT_FALSE(test, rep.reject);
	KUNIT_EXPECT_FALSE(test, rep.markers);
	KUNIT_EXPECT_TRUE(test, conn.tx_markers);
	KUNIT_EXPECT_FALSE(test, conn.rx_markers);

	len = build(test, &f, true, buf, RSW_MPA_RR_MAX_LEN);
	buf[16] |= 0x80;
	rsw_mpa_rx_init(rx, true, 2);
	KUNIT_ASSERT_EQ(test, rsw_mpa_rx_feed(rx, buf, len, &used),
			RSW_MPA_RX_COMPLETE);
	KUNIT_EXPECT_TRUE(test, rx->frame.markers);
	KUNIT_EXPECT_EQ(test, rsw_mpa_connected(&lp, &rx->frame, &conn),
			RSW_MPA_OK);
	KUNIT_EXPECT_TRUE(test, conn.tx_markers);
	KUNIT_EXPECT_FALSE(test, conn.rx_markers);
}

/* =========================================================================
 * Negotiation, responder side: accept(local params, parsed Request).
 */
struct resp_case {
	const char *name;
	struct rsw_mpa_params lp;
	struct rsw_mpa_frame req;
	enum rsw_mpa_reason reason;
	struct rsw_mpa_frame rep;	/* .pd not compared */
	struct rsw_mpa_conn conn;
};

#define REQ2(...) FR(.rev = 2, .enhanced = 1, __VA_ARGS__)
#define CONN(...) { __VA_ARGS__ }

static const struct resp_case resp_cases[] = {
	/* CRC matrix: on if either side sets C; the Reply says so. */
	{ "crc_local0_peer0", LP(2, 0, 0, RTR_ALL, 0, 0), FR(.rev = 1),
	  RSW_MPA_OK, FR(.rev = 1), CONN(.rev = 1) },
	{ "crc_local1_peer0", LP(2, 1, 0, RTR_ALL, 0, 0), FR(.rev = 1),
	  RSW_MPA_OK, FR(.rev = 1, .crc = 1), CONN(.rev = 1, .crc = 1) },
	{ "crc_local0_peer1", LP(2, 0, 0, RTR_ALL, 0, 0),
	  FR(.rev = 1, .crc = 1), RSW_MPA_OK, FR(.rev = 1, .crc = 1),
	  CONN(.rev = 1, .crc = 1) },
	{ "crc_local1_peer1", LP(2, 1, 0, RTR_ALL, 0, 0),
	  FR(.rev = 1, .crc = 1), RSW_MPA_OK, FR(.rev = 1, .crc = 1),
	  CONN(.rev = 1, .crc = 1) },
	/* Revision matrix. */
	{ "rev_local1_req1", LP(1, 0, 0, RTR_ALL, 0, 0), FR(.rev = 1),
	  RSW_MPA_OK, FR(.rev = 1), CONN(.rev = 1) },
	{ "rev_local1_req2_enh", LP(1, 0, 0, RTR_ALL, 4, 4),
	  REQ2(.ird = 2, .ord = 2), RSW_MPA_OK, FR(.rev = 1),
	  CONN(.rev = 1, .ird = 4, .ord = 4) },
	{ "rev_local2_req1", LP(2, 0, 0, RTR_ALL, 4, 4), FR(.rev = 1),
	  RSW_MPA_OK, FR(.rev = 1), CONN(.rev = 1, .ird = 4, .ord = 4) },
	{ "rev_local2_req2_plain", LP(2, 0, 0, RTR_ALL, 4, 4), FR(.rev = 2),
	  RSW_MPA_OK, FR(.rev = 2), CONN(.rev = 2, .ird = 4, .ord = 4) },
	{ "rev_local2_req2_enh", LP(2, 0, 0, RTR_ALL, 4, 4),
	  REQ2(.ird = 8, .ord = 8), RSW_MPA_OK, REQ2(.ird = 4, .ord = 4),
	  CONN(.rev = 2, .enhanced = 1, .ird = 4, .ord = 4) },
	/* IRD/ORD: Reply ORD <= Request IRD; Reply IRD is ours. */
	{ "irdord_ord_limited", LP(2, 0, 0, RTR_ALL, 16, 16),
	  REQ2(.ird = 8, .ord = 4), RSW_MPA_OK, REQ2(.ird = 16, .ord = 8),
	  CONN(.rev = 2, .enhanced = 1, .ird = 16, .ord = 8) },
	{ "irdord_all_zero", LP(2, 0, 0, RTR_ALL, 0, 0), REQ2(), RSW_MPA_OK,
	  REQ2(), CONN(.rev = 2, .enhanced = 1) },
	{ "irdord_peer_ird0", LP(2, 0, 0, RTR_ALL, 4, 128), REQ2(.ord = 2),
	  RSW_MPA_OK, REQ2(.ird = 4), CONN(.rev = 2, .enhanced = 1, .ird = 4) },
	{ "irdord_local_ird0", LP(2, 0, 0, RTR_ALL, 0, 5),
	  REQ2(.ird = MAX_V2, .ord = MAX_V2), RSW_MPA_OK, REQ2(.ord = 5),
	  CONN(.rev = 2, .enhanced = 1, .ord = 5) },
	{ "irdord_max", LP(2, 0, 0, RTR_ALL, MAX_V2, MAX_V2),
	  REQ2(.ird = MAX_V2, .ord = MAX_V2), RSW_MPA_OK,
	  REQ2(.ird = MAX_V2, .ord = MAX_V2),
	  CONN(.rev = 2, .enhanced = 1, .ird = MAX_V2, .ord = MAX_V2) },
	/* RTR matrix: Write, then Read (IRD >= 1), then Send. */
	{ "rtr_all_all", LP(2, 0, 0, RTR_ALL, 1, 1),
	  REQ2(.p2p = 1, .rtr = RTR_ALL, .ird = 1, .ord = 1), RSW_MPA_OK,
	  REQ2(.p2p = 1, .rtr = RTR_W, .ird = 1, .ord = 1),
	  CONN(.rev = 2, .enhanced = 1, .p2p = 1, .rtr = RTR_W, .ird = 1,
	       .ord = 1) },
	{ "rtr_read_send_ird1", LP(2, 0, 0, RTR_ALL, 1, 0),
	  REQ2(.p2p = 1, .rtr = RTR_R | RTR_S, .ord = 1), RSW_MPA_OK,
	  REQ2(.p2p = 1, .rtr = RTR_R, .ird = 1),
	  CONN(.rev = 2, .enhanced = 1, .p2p = 1, .rtr = RTR_R, .ird = 1) },
	{ "rtr_read_send_ird0", LP(2, 0, 0, RTR_ALL, 0, 0),
	  REQ2(.p2p = 1, .rtr = RTR_R | RTR_S, .ord = 1), RSW_MPA_OK,
	  REQ2(.p2p = 1, .rtr = RTR_S),
	  CONN(.rev = 2, .enhanced = 1, .p2p = 1, .rtr = RTR_S) },
	{ "rtr_local_send_only", LP(2, 0, 0, RTR_S, 1, 0),
	  REQ2(.p2p = 1, .rtr = RTR_ALL, .ord = 1), RSW_MPA_OK,
	  REQ2(.p2p = 1, .rtr = RTR_S, .ird = 1),
	  CONN(.rev = 2, .enhanced = 1, .p2p = 1, .rtr = RTR_S, .ird = 1) },
	{ "rtr_no_common", LP(2, 0, 0, RTR_W | RTR_R, 1, 0),
	  REQ2(.p2p = 1, .rtr = RTR_S), RSW_MPA_E_NO_RTR,
	  REQ2(.reject = 1, .ird = 1), CONN() },
	/* A listener's IRD is 0 until its ULP accepts: Read RTR grants 1. */
	{ "rtr_read_only_ird0", LP(2, 0, 0, RTR_ALL, 0, 0),
	  REQ2(.p2p = 1, .rtr = RTR_R, .ord = 1), RSW_MPA_OK,
	  REQ2(.p2p = 1, .rtr = RTR_R, .ird = 1),
	  CONN(.rev = 2, .enhanced = 1, .p2p = 1, .rtr = RTR_R, .ird = 1) },
	{ "rtr_p2p_empty_offer", LP(2, 0, 0, RTR_ALL, 1, 0), REQ2(.p2p = 1),
	  RSW_MPA_E_NO_RTR, REQ2(.reject = 1, .ird = 1), CONN() },
	{ "rtr_bits_without_p2p", LP(2, 0, 0, RTR_ALL, 1, 0),
	  REQ2(.rtr = RTR_ALL), RSW_MPA_OK, REQ2(.ird = 1),
	  CONN(.rev = 2, .enhanced = 1, .ird = 1) },
	{ "rtr_p2p_local_rev1", LP(1, 0, 0, RTR_ALL, 1, 0),
	  REQ2(.p2p = 1, .rtr = RTR_W), RSW_MPA_OK, FR(.rev = 1),
	  CONN(.rev = 1, .ird = 1) },
	/* The device's rtr_prefer, if offered; Read with IRD 0 grants 1. */
	{ "rtr_prefer_send", LPX(RTR_ALL, RTR_S, 1, 0),
	  REQ2(.p2p = 1, .rtr = RTR_ALL, .ord = 1), RSW_MPA_OK,
	  REQ2(.p2p = 1, .rtr = RTR_S, .ird = 1),
	  CONN(.rev = 2, .enhanced = 1, .p2p = 1, .rtr = RTR_S, .ird = 1) },
	{ "rtr_prefer_read_ird0", LPX(RTR_ALL, RTR_R, 0, 0),
	  REQ2(.p2p = 1, .rtr = RTR_ALL, .ord = 1), RSW_MPA_OK,
	  REQ2(.p2p = 1, .rtr = RTR_R, .ird = 1),
	  CONN(.rev = 2, .enhanced = 1, .p2p = 1, .rtr = RTR_R, .ird = 1) },
	{ "rtr_prefer_not_offered", LPX(RTR_ALL, RTR_W, 1, 0),
	  REQ2(.p2p = 1, .rtr = RTR_R | RTR_S, .ord = 1), RSW_MPA_OK,
	  REQ2(.p2p = 1, .rtr = RTR_R, .ird = 1),
	  CONN(.rev = 2, .enhanced = 1, .p2p = 1, .rtr = RTR_R, .ird = 1) },
	{ "rtr_prefer_not_accepted", LPX(RTR_W | RTR_S, RTR_R, 1, 0),
	  REQ2(.p2p = 1, .rtr = RTR_ALL, .ord = 1), RSW_MPA_OK,
	  REQ2(.p2p = 1, .rtr = RTR_W, .ird = 1),
	  CONN(.rev = 2, .enhanced = 1, .p2p = 1, .rtr = RTR_W, .ird = 1) },
	/*
	 * Markers, per direction (RFC 5044 7.1.1): the Request's M makes us
	 * send them, our M (policy) in the Reply makes the peer send them.
	 */
	{ "markers_peer_asks_rev2", LP(2, 0, 0, RTR_ALL, 2, 0),
	  FR(.rev = 2, .markers = 1, .enhanced = 1, .ird = 1), RSW_MPA_OK,
	  REQ2(.ird = 2), CONN(.rev = 2, .tx_markers = 1, .enhanced = 1,
			       .ird = 2) },
	{ "markers_peer_asks_rev1", LP(2, 1, 0, RTR_ALL, 0, 0),
	  FR(.rev = 1, .markers = 1), RSW_MPA_OK, FR(.rev = 1, .crc = 1),
	  CONN(.rev = 1, .crc = 1, .tx_markers = 1) },
	{ "markers_we_ask_rev1", LPM(2, 0, 0, RTR_ALL, 0, 0), FR(.rev = 1),
	  RSW_MPA_OK, FR(.rev = 1, .markers = 1),
	  CONN(.rev = 1, .rx_markers = 1) },
	{ "markers_we_ask_rev2", LPM(2, 1, 0, RTR_ALL, 1, 1),
	  REQ2(.p2p = 1, .rtr = RTR_W, .ird = 1, .ord = 1), RSW_MPA_OK,
	  FR(.rev = 2, .crc = 1, .markers = 1, .enhanced = 1, .p2p = 1,
	     .rtr = RTR_W, .ird = 1, .ord = 1),
	  CONN(.rev = 2, .crc = 1, .rx_markers = 1, .enhanced = 1, .p2p = 1,
	       .rtr = RTR_W, .ird = 1, .ord = 1) },
	{ "markers_both_ask", LPM(1, 0, 0, RTR_ALL, 0, 0),
	  FR(.rev = 2, .markers = 1), RSW_MPA_OK, FR(.rev = 1, .markers = 1),
	  CONN(.rev = 1, .tx_markers = 1, .rx_markers = 1) },
	{ "markers_not_in_reject", LPM(2, 0, 0, RTR_ALL, 0, 0),
	  FR(.rev = 1, .markers = 1, .pd_len = 256), RSW_MPA_E_PD_IWCM,
	  FR(.rev = 1, .reject = 1), CONN() },
	/*
	 * The device's peer_ird_ord: a peer that sent no IRD is taken to
	 * have it, our ORD capped to it; one that sent its IRD is not.
	 */
	{ "peer_ird_ord_rev1", LPB(2, 16, 16, 4), FR(.rev = 1), RSW_MPA_OK,
	  FR(.rev = 1), CONN(.rev = 1, .ird = 16, .ord = 4) },
	{ "peer_ird_ord_rev2_plain", LPB(2, 16, 2, 4), FR(.rev = 2),
	  RSW_MPA_OK, FR(.rev = 2), CONN(.rev = 2, .ird = 16, .ord = 2) },
	{ "peer_ird_ord_enhanced", LPB(2, 16, 16, 4),
	  REQ2(.ird = 8, .ord = 8), RSW_MPA_OK, REQ2(.ird = 16, .ord = 8),
	  CONN(.rev = 2, .enhanced = 1, .ird = 16, .ord = 8) },
	/* Private data iw_cm cannot deliver. */
	{ "pd_255_ok", LP(2, 0, 0, RTR_ALL, 0, 0), FR(.rev = 1, .pd_len = 255),
	  RSW_MPA_OK, FR(.rev = 1), CONN(.rev = 1) },
	{ "pd_256_rejected", LP(2, 0, 0, RTR_ALL, 0, 0),
	  FR(.rev = 1, .pd_len = 256), RSW_MPA_E_PD_IWCM,
	  FR(.rev = 1, .reject = 1), CONN() },
};

KUNIT_ARRAY_PARAM_DESC(resp, resp_cases, name);

static void conn_eq(struct kunit *test, const struct rsw_mpa_conn *got,
		    const struct rsw_mpa_conn *want)
{
	KUNIT_EXPECT_EQ(test, got->rev, want->rev);
	KUNIT_EXPECT_EQ(test, got->crc, want->crc);
	KUNIT_EXPECT_EQ(test, got->tx_markers, want->tx_markers);
	KUNIT_EXPECT_EQ(test, got->rx_markers, want->rx_markers);
	KUNIT_EXPECT_EQ(test, got->enhanced, want->enhanced);
	KUNIT_EXPECT_EQ(test, got->p2p, want->p2p);
	KUNIT_EXPECT_EQ(test, got->rtr, want->rtr);
	KUNIT_EXPECT_EQ(test, got->ird, want->ird);
	KUNIT_EXPECT_EQ(test, got->ord, want->ord);
}

static void mpa_negotiate_responder(struct kunit *test)
{
	const struct resp_case *c = test->param_value;
	struct rsw_mpa_params lp = c->lp;
	struct rsw_mpa_frame req = c->req, rep;
	struct rsw_mpa_conn conn;
	u8 *buf = new_buf(test, RSW_MPA_RR_MAX_LEN);

	lp.pd = pd_pattern();
	lp.pd_len = 4;
	req.pd = pd_pattern();
	KUNIT_EXPECT_EQ(test, rsw_mpa_check_request(&lp, &req), c->reason);
	KUNIT_ASSERT_EQ(test, rsw_mpa_accept(&lp, &req, &rep, &conn),
			c->reason);
	/* The ULP's private data goes into an accepting Reply only. */
	KUNIT_EXPECT_EQ(test, rep.pd_len, c->reason ? 0 : 4);
	rep.pd = NULL;
	rep.pd_len = 0;
	frame_eq(test, &rep, &c->rep);
	conn_eq(test, &conn, &c->conn);
	KUNIT_EXPECT_EQ(test, rsw_mpa_reason(c->reason)->reply, !!c->reason);
	/* Whatever it decided can be sent. */
	KUNIT_EXPECT_GT(test, rsw_mpa_build(&rep, true, buf,
					    RSW_MPA_RR_MAX_LEN), 0);
}

/* A ULP reject carries the ULP's private data and mirrors the revision. */
static void mpa_negotiate_ulp_reject(struct kunit *test)
{
	struct rsw_mpa_params lp = LPD(2, 1, 0, RTR_ALL, 3, 9, 100);
	struct rsw_mpa_frame req = REQ2(.ird = 5, .ord = 1), rep;

	lp.pd = pd_pattern();
	rsw_mpa_reject(&lp, &req, &rep);
	KUNIT_EXPECT_TRUE(test, rep.reject);
	KUNIT_EXPECT_EQ(test, rep.rev, 2);
	KUNIT_EXPECT_TRUE(test, rep.enhanced);
	KUNIT_EXPECT_FALSE(test, rep.p2p);
	KUNIT_EXPECT_EQ(test, rep.ird, 3);
	KUNIT_EXPECT_EQ(test, rep.ord, 5);
	KUNIT_EXPECT_EQ(test, rep.pd_len, 100);
	KUNIT_EXPECT_PTR_EQ(test, rep.pd, (const u8 *)pd_pattern());
}

/* =========================================================================
 * Negotiation, initiator side: connected(local params, parsed Reply).
 */
struct init_case {
	const char *name;
	struct rsw_mpa_params lp;
	struct rsw_mpa_frame rep;
	enum rsw_mpa_reason reason;
	struct rsw_mpa_conn conn;
};

static const struct init_case init_cases[] = {
	{ "crc_local0_peer0", LP(1, 0, 0, RTR_ALL, 0, 0), FR(.rev = 1),
	  RSW_MPA_OK, CONN(.rev = 1) },
	{ "crc_local1_peer0", LP(1, 1, 0, RTR_ALL, 0, 0), FR(.rev = 1),
	  RSW_MPA_OK, CONN(.rev = 1, .crc = 1) },
	{ "crc_local0_peer1", LP(1, 0, 0, RTR_ALL, 0, 0),
	  FR(.rev = 1, .crc = 1), RSW_MPA_OK, CONN(.rev = 1, .crc = 1) },
	{ "crc_local1_peer1", LP(1, 1, 0, RTR_ALL, 0, 0),
	  FR(.rev = 1, .crc = 1), RSW_MPA_OK, CONN(.rev = 1, .crc = 1) },
	{ "rev_offered1_rep1", LP(1, 0, 0, RTR_ALL, 2, 2), FR(.rev = 1),
	  RSW_MPA_OK, CONN(.rev = 1, .ird = 2, .ord = 2) },
	{ "rev_offered1_rep2", LP(1, 0, 0, RTR_ALL, 0, 0), FR(.rev = 2),
	  RSW_MPA_E_REV, CONN() },
	{ "rev_offered2_rep1", LP(2, 0, 0, RTR_ALL, 2, 2), FR(.rev = 1),
	  RSW_MPA_OK, CONN(.rev = 1, .ird = 2, .ord = 2) },
	{ "rev_offered2_rep2_plain", LP(2, 0, 0, RTR_ALL, 2, 2), FR(.rev = 2),
	  RSW_MPA_OK, CONN(.rev = 2, .ird = 2, .ord = 2) },
	{ "rev_offered2_rep3", LP(2, 0, 0, RTR_ALL, 0, 0), FR(.rev = 3),
	  RSW_MPA_E_REV, CONN() },
	/* IRD/ORD: fail if the Reply's ORD exceeds our IRD; ORD lowered. */
	{ "irdord_ord_lowered", LP(2, 0, 0, RTR_ALL, 8, 8),
	  REQ2(.ird = 4, .ord = 8), RSW_MPA_OK,
	  CONN(.rev = 2, .enhanced = 1, .ird = 8, .ord = 4) },
	{ "irdord_ord_kept", LP(2, 0, 0, RTR_ALL, 8, 8),
	  REQ2(.ird = 16, .ord = 4), RSW_MPA_OK,
	  CONN(.rev = 2, .enhanced = 1, .ird = 8, .ord = 8) },
	{ "irdord_insufficient", LP(2, 0, 0, RTR_ALL, 4, 8),
	  REQ2(.ird = 8, .ord = 5), RSW_MPA_E_IRD, CONN() },
	{ "irdord_ird0_peer_ord1", LP(2, 0, 0, RTR_ALL, 0, 4),
	  REQ2(.ird = 4, .ord = 1), RSW_MPA_E_IRD, CONN() },
	{ "irdord_all_zero", LP(2, 0, 0, RTR_ALL, 0, 0), REQ2(), RSW_MPA_OK,
	  CONN(.rev = 2, .enhanced = 1) },
	{ "irdord_peer_ird0", LP(2, 0, 0, RTR_ALL, 16, 16), REQ2(), RSW_MPA_OK,
	  CONN(.rev = 2, .enhanced = 1, .ird = 16) },
	{ "irdord_max", LP(2, 0, 0, RTR_ALL, MAX_V2, MAX_V2),
	  REQ2(.ird = MAX_V2, .ord = MAX_V2), RSW_MPA_OK,
	  CONN(.rev = 2, .enhanced = 1, .ird = MAX_V2, .ord = MAX_V2) },
	{ "irdord_max_ord0", LP(2, 0, 0, RTR_ALL, MAX_V2, 0),
	  REQ2(.ird = MAX_V2, .ord = MAX_V2), RSW_MPA_OK,
	  CONN(.rev = 2, .enhanced = 1, .ird = MAX_V2) },
	{ "irdord_ignored_rev1", LP(2, 0, 0, RTR_ALL, 1, 9), FR(.rev = 1),
	  RSW_MPA_OK, CONN(.rev = 1, .ird = 1, .ord = 9) },
	/* RTR matrix. */
	{ "rtr_write", LP(2, 0, 1, RTR_ALL, 1, 1),
	  REQ2(.p2p = 1, .rtr = RTR_W, .ird = 1, .ord = 1), RSW_MPA_OK,
	  CONN(.rev = 2, .enhanced = 1, .p2p = 1, .rtr = RTR_W, .ird = 1,
	       .ord = 1) },
	{ "rtr_read", LP(2, 0, 1, RTR_ALL, 1, 1),
	  REQ2(.p2p = 1, .rtr = RTR_R, .ird = 1), RSW_MPA_OK,
	  CONN(.rev = 2, .enhanced = 1, .p2p = 1, .rtr = RTR_R, .ird = 1,
	       .ord = 1) },
	{ "rtr_read_peer_ird0", LP(2, 0, 1, RTR_ALL, 1, 1),
	  REQ2(.p2p = 1, .rtr = RTR_R), RSW_MPA_E_IRD, CONN() },
	{ "rtr_send", LP(2, 0, 1, RTR_ALL, 0, 1), REQ2(.p2p = 1, .rtr = RTR_S),
	  RSW_MPA_OK, CONN(.rev = 2, .enhanced = 1, .p2p = 1, .rtr = RTR_S) },
	{ "rtr_two_types", LP(2, 0, 1, RTR_ALL, 0, 1),
	  REQ2(.p2p = 1, .rtr = RTR_W | RTR_S), RSW_MPA_E_NO_RTR, CONN() },
	{ "rtr_none_chosen", LP(2, 0, 1, RTR_ALL, 0, 1), REQ2(.p2p = 1),
	  RSW_MPA_E_NO_RTR, CONN() },
	{ "rtr_p2p_dropped", LP(2, 0, 1, RTR_ALL, 0, 1), REQ2(.rtr = RTR_W),
	  RSW_MPA_E_NO_RTR, CONN() },
	{ "rtr_not_offered", LP(2, 0, 1, RTR_W, 0, 1),
	  REQ2(.p2p = 1, .rtr = RTR_R, .ird = 1), RSW_MPA_E_NO_RTR, CONN() },
	{ "rtr_read_not_offered_ord0", LP(2, 0, 1, RTR_ALL, 1, 0),
	  REQ2(.p2p = 1, .rtr = RTR_R, .ird = 1), RSW_MPA_E_NO_RTR, CONN() },
	{ "rtr_p2p_unasked", LP(2, 0, 0, RTR_ALL, 0, 0),
	  REQ2(.p2p = 1, .rtr = RTR_W), RSW_MPA_E_NO_RTR, CONN() },
	{ "rtr_bits_unasked_ignored", LP(2, 0, 0, RTR_ALL, 0, 0),
	  REQ2(.rtr = RTR_W), RSW_MPA_OK, CONN(.rev = 2, .enhanced = 1) },
	{ "rtr_peer_rev1", LP(2, 0, 1, RTR_ALL, 0, 1), FR(.rev = 1), RSW_MPA_OK,
	  CONN(.rev = 1, .ord = 1) },
	{ "rtr_peer_rev2_plain", LP(2, 0, 1, RTR_ALL, 0, 1), FR(.rev = 2),
	  RSW_MPA_OK, CONN(.rev = 2, .ord = 1) },
	/* Other refusals. */
	{ "rejected", LP(2, 0, 0, RTR_ALL, 0, 0), FR(.rev = 2, .reject = 1),
	  RSW_MPA_E_REJECTED, CONN() },
	/* Markers: the Reply's M makes us send them; ours we asked for. */
	{ "markers_peer_asks_rev1", LP(2, 0, 0, RTR_ALL, 0, 0),
	  FR(.rev = 1, .markers = 1), RSW_MPA_OK,
	  CONN(.rev = 1, .tx_markers = 1) },
	{ "markers_peer_asks_rev2", LP(2, 1, 1, RTR_ALL, 0, 1),
	  REQ2(.markers = 1, .p2p = 1, .rtr = RTR_S), RSW_MPA_OK,
	  CONN(.rev = 2, .crc = 1, .tx_markers = 1, .enhanced = 1, .p2p = 1,
	       .rtr = RTR_S) },
	{ "markers_we_ask_rev2", LPM(2, 0, 0, RTR_ALL, 0, 0), REQ2(),
	  RSW_MPA_OK, CONN(.rev = 2, .rx_markers = 1, .enhanced = 1) },
	{ "markers_we_ask_peer_rev1", LPM(2, 0, 0, RTR_ALL, 0, 0),
	  FR(.rev = 1), RSW_MPA_OK, CONN(.rev = 1, .rx_markers = 1) },
	{ "markers_both_ask", LPM(1, 0, 0, RTR_ALL, 0, 0),
	  FR(.rev = 1, .markers = 1), RSW_MPA_OK,
	  CONN(.rev = 1, .tx_markers = 1, .rx_markers = 1) },
	{ "markers_rejected_conn_zero", LPM(2, 0, 0, RTR_ALL, 0, 0),
	  FR(.rev = 1, .markers = 1, .reject = 1), RSW_MPA_E_REJECTED,
	  CONN() },
	/* The device's mpa_crc "required": a Reply must echo C. */
	{ "crc_required_echoed", LPC(1, 1), FR(.rev = 2, .crc = 1),
	  RSW_MPA_OK, CONN(.rev = 2, .crc = 1) },
	{ "crc_required_dropped", LPC(1, 1), FR(.rev = 2), RSW_MPA_E_CRC,
	  CONN() },
	{ "crc_on_dropped", LPC(1, 0), FR(.rev = 2), RSW_MPA_OK,
	  CONN(.rev = 2, .crc = 1) },
	/* The device's peer_ird_ord caps our ORD toward a silent peer. */
	{ "peer_ird_ord_rev1", LPB(2, 8, 16, 4), FR(.rev = 1), RSW_MPA_OK,
	  CONN(.rev = 1, .ird = 8, .ord = 4) },
	{ "peer_ird_ord_rev1_below", LPB(1, 8, 2, 4), FR(.rev = 1),
	  RSW_MPA_OK, CONN(.rev = 1, .ird = 8, .ord = 2) },
	{ "peer_ird_ord_enhanced", LPB(2, 8, 16, 4), REQ2(.ird = 12),
	  RSW_MPA_OK, CONN(.rev = 2, .enhanced = 1, .ird = 8, .ord = 12) },
	{ "pd_255_ok", LP(2, 0, 0, RTR_ALL, 0, 0), FR(.rev = 1, .pd_len = 255),
	  RSW_MPA_OK, CONN(.rev = 1) },
	{ "pd_256", LP(2, 0, 0, RTR_ALL, 0, 0), FR(.rev = 1, .pd_len = 256),
	  RSW_MPA_E_PD_IWCM, CONN() },
};

KUNIT_ARRAY_PARAM_DESC(init, init_cases, name);

static void mpa_negotiate_initiator(struct kunit *test)
{
	const struct init_case *c = test->param_value;
	struct rsw_mpa_frame rep = c->rep;
	struct rsw_mpa_conn conn;

	rep.pd = pd_pattern();
	KUNIT_EXPECT_EQ(test, rsw_mpa_connected(&c->lp, &rep, &conn),
			c->reason);
	conn_eq(test, &conn, &c->conn);
}

/* =========================================================================
 * Whole handshakes on pseudo-random policies, through builder and parser,
 * checked against what both ends must agree on.
 */
#define HS_SEED		0x6d706131ULL
#define HS_ROUNDS	2000

static u16 hs_depth(struct rnd_state *rnd)
{
	static const u16 picks[] = { 0, 1, 2, 16, 128, MAX_V2 };

	return picks[prandom_u32_state(rnd) % ARRAY_SIZE(picks)];
}

static void hs_params(struct rnd_state *rnd, struct rsw_mpa_params *lp)
{
	u32 r = prandom_u32_state(rnd);

	rsw_mpa_params_init(lp);
	lp->rev = 1 + (r & 1);
	lp->crc = r & 2;
	lp->p2p = lp->rev == 2 && (r & 4);
	lp->rtr = (r >> 3) & RTR_ALL;
	lp->ird = hs_depth(rnd);
	lp->ord = hs_depth(rnd);
	lp->pd = pd_pattern();
	lp->pd_len = (r >> 8) % 300;
}

struct hs_end {
	struct rsw_mpa_rx *rx;
	u8 *buf;
	u32 len;
};

/* Send @f from one end and parse it at the other; the parse status. */
static enum rsw_mpa_rx_status hs_xfer(struct kunit *test,
				      const struct rsw_mpa_frame *f,
				      bool reply, struct hs_end *to)
{
	size_t used;
	int len = rsw_mpa_build(f, reply, to->buf, RSW_MPA_RR_MAX_LEN);

	if (len < 0)
		return RSW_MPA_RX_MORE;
	return rsw_mpa_rx_feed(to->rx, to->buf, len, &used);
}

static void hs_check(struct kunit *test, u32 n, const struct rsw_mpa_conn *i,
		     const struct rsw_mpa_conn *r)
{
	KUNIT_EXPECT_EQ_MSG(test, i->rev, r->rev, "round %u", n);
	KUNIT_EXPECT_EQ_MSG(test, i->crc, r->crc, "round %u", n);
	KUNIT_EXPECT_EQ_MSG(test, i->enhanced, r->enhanced, "round %u", n);
	KUNIT_EXPECT_EQ_MSG(test, i->p2p, r->p2p, "round %u", n);
	KUNIT_EXPECT_EQ_MSG(test, i->rtr, r->rtr, "round %u", n);
	KUNIT_EXPECT_TRUE_MSG(test, !i->p2p || hweight8(i->rtr) == 1,
			      "round %u", n);
	if (!i->enhanced)
		return;
	KUNIT_EXPECT_LE_MSG(test, i->ord, r->ird, "round %u", n);
	KUNIT_EXPECT_LE_MSG(test, r->ord, i->ird, "round %u", n);
	if (i->rtr == RSW_MPA_RTR_READ)
		KUNIT_EXPECT_TRUE_MSG(test, i->ord && r->ird, "round %u", n);
}

/* The initiator refuses only private data iw_cm could not deliver. */
static enum rsw_mpa_reason hs_expect(const struct rsw_mpa_params *rlp)
{
	return rlp->pd_len > RSW_MPA_IWCM_MAX_PD ? RSW_MPA_E_PD_IWCM :
						   RSW_MPA_OK;
}

static void mpa_handshake_random(struct kunit *test)
{
	struct hs_end ini = { new_rx(test, true, 2), new_buf(test, 600) };
	struct hs_end rsp = { new_rx(test, false, 2), new_buf(test, 600) };
	struct rsw_mpa_params ilp, rlp;
	struct rsw_mpa_frame req, rep;
	struct rsw_mpa_conn ic, rc;
	struct rnd_state rnd;
	u32 n, ok = 0;

	prandom_seed_state(&rnd, HS_SEED);
	for (n = 0; n < HS_ROUNDS; n++) {
		hs_params(&rnd, &ilp);
		hs_params(&rnd, &rlp);
		rsw_mpa_rx_init(ini.rx, true, ilp.rev);
		rsw_mpa_rx_init(rsp.rx, false, 0);
		if (rsw_mpa_request(&ilp, &req) ||
		    hs_xfer(test, &req, false, &rsp) != RSW_MPA_RX_COMPLETE)
			continue;
		if (rsw_mpa_accept(&rlp, &rsp.rx->frame, &rep, &rc))
			continue;
		KUNIT_ASSERT_EQ_MSG(test, hs_xfer(test, &rep, true, &ini),
				    RSW_MPA_RX_COMPLETE, "round %u", n);
		KUNIT_ASSERT_EQ_MSG(test,
				    rsw_mpa_connected(&ilp, &ini.rx->frame,
						      &ic),
				    hs_expect(&rlp), "round %u", n);
		if (!ic.rev)
			continue;
		hs_check(test, n, &ic, &rc);
		ok++;
	}
	kunit_info(test, "%u of %u handshakes established\n", ok, HS_ROUNDS);
	KUNIT_EXPECT_GE(test, ok, HS_ROUNDS / 4);
}

/* =========================================================================
 * Reason and state tables.
 */
static void mpa_reason_table(struct kunit *test)
{
	const struct rsw_mpa_reason_info *a, *b;
	u32 i, j;

	for (i = 0; i < RSW_MPA_E_NUM; i++) {
		a = rsw_mpa_reason(i);
		KUNIT_EXPECT_NOT_NULL(test, a->name);
		KUNIT_EXPECT_TRUE(test, a->term == (i == RSW_MPA_E_IRD ||
						    i == RSW_MPA_E_NO_RTR));
		KUNIT_EXPECT_EQ(test, !i, !a->err);
		for (j = 0; j < i; j++) {
			b = rsw_mpa_reason(j);
			KUNIT_EXPECT_STRNEQ(test, a->name, b->name);
		}
	}
	KUNIT_EXPECT_EQ(test, rsw_mpa_reason(RSW_MPA_E_REJECTED)->err,
			-ECONNREFUSED);
	KUNIT_EXPECT_EQ(test, rsw_mpa_reason(RSW_MPA_E_IRD)->ecode,
			RSW_MPA_EC_IRD);
	KUNIT_EXPECT_EQ(test, rsw_mpa_reason(RSW_MPA_E_NO_RTR)->ecode,
			RSW_MPA_EC_NO_RTR);
	KUNIT_EXPECT_STREQ(test, rsw_mpa_reason(RSW_MPA_E_NUM)->name,
			   "unknown");
	KUNIT_EXPECT_STREQ(test, rsw_mpa_rx_state_name(RSW_MPA_RX_PD),
			   "private data");
	KUNIT_EXPECT_STREQ(test, rsw_mpa_rx_state_name(RSW_MPA_RX_NUM),
			   "unknown");
}

static struct kunit_case mpa_cases[] = {
	KUNIT_CASE_PARAM(mpa_build_exact, exact_gen_params),
	KUNIT_CASE_PARAM(mpa_build_refuses, refuse_gen_params),
	KUNIT_CASE_PARAM(mpa_request_from_params, request_gen_params),
	KUNIT_CASE(mpa_request_pd_limit_at_builder),
	KUNIT_CASE(mpa_round_trip_all),
	KUNIT_CASE_PARAM(mpa_split_every_boundary, split_gen_params),
	KUNIT_CASE_PARAM(mpa_split_bytewise_want, split_gen_params),
	KUNIT_CASE_PARAM(mpa_parse_malformed, bad_gen_params),
	KUNIT_CASE(mpa_parse_reject_pd_visible),
	KUNIT_CASE(mpa_parse_markers_honoured),
	KUNIT_CASE_PARAM(mpa_negotiate_responder, resp_gen_params),
	KUNIT_CASE(mpa_negotiate_ulp_reject),
	KUNIT_CASE_PARAM(mpa_negotiate_initiator, init_gen_params),
	KUNIT_CASE(mpa_handshake_random),
	KUNIT_CASE(mpa_reason_table),
	{}
};

static struct kunit_suite mpa_suite = {
	.name = "rdmap_sw_mpa",
	.test_cases = mpa_cases,
};

kunit_test_suite(mpa_suite);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("KUnit tests for rdmap_sw MPA connection setup");
