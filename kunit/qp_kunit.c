// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite rdmap_sw_qp: RC queue pairs created through the real ib_core
 * (ib_create_qp, ib_modify_qp, ib_post_send/recv, ib_drain_qp,
 * ib_destroy_qp) on an rdmap_sw device attached to a throw-away Ethernet
 * netdev, with CQs from cq.c and MRs from mem.c.  There is no stream yet,
 * so the TX engine's side is played by calling rsw_qp_sq_take() and
 * rsw_qp_sq_complete() directly.  The rdma counter ops (per-QP counters)
 * are driven here as ib_core's counters.c drives them.
 *
 * KUnit actions undo in reverse order: each QP is destroyed before its CQs,
 * and everything before the suite's device goes away.
 */
#include <kunit/resource.h>
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <linux/netdevice.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "cq.h"
#include "env.h"
#include "internal.h"

RSW_IMPORT_KUNIT_NS();

static const u8 rsw_qt_mac[ETH_ALEN] = { 0x02, 0x00, 0x5e, 0x30, 0x50, 0x01 };

/* The device and PDs every case uses (suite_init / suite_exit). */
static struct rsw_env_suite rsw_qt;

static int rsw_qt_suite_init(struct kunit_suite *suite)
{
	return rsw_env_suite_init(&rsw_qt, rsw_qt_mac, "rswqt%d", "rswqt0");
}

static void rsw_qt_suite_exit(struct kunit_suite *suite)
{
	rsw_env_suite_exit(&rsw_qt);
}

/* -------------------------------------------------------------- fixtures */

static void rsw_qt_destroy_cq(void *cq)
{
	ib_destroy_cq(cq);
}

static void rsw_qt_free_cq(void *cq)
{
	ib_free_cq(cq);
}

static void rsw_qt_destroy_qp(void *qp)
{
	ib_destroy_qp(qp);
}

static void rsw_qt_dereg_mr(void *mr)
{
	ib_dereg_mr(mr);
}

/* A CQ polled by the case itself (no handlers). */
static struct ib_cq *rsw_qt_cq(struct kunit *test, int cqe)
{
	struct ib_cq_init_attr attr = { .cqe = cqe };
	struct ib_cq *cq;

	cq = ib_create_cq(rsw_qt.ibdev, NULL, NULL, NULL, &attr);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(cq), "ib_create_cq: %ld",
			       PTR_ERR(cq));
	KUNIT_ASSERT_EQ(test,
			kunit_add_action_or_reset(test, rsw_qt_destroy_cq, cq),
			0);
	return cq;
}

/* Attributes of a plain RC QP on @scq / @rcq. */
static struct ib_qp_init_attr rsw_qt_attr(struct ib_cq *scq, struct ib_cq *rcq)
{
	return (struct ib_qp_init_attr) {
		.send_cq = scq,
		.recv_cq = rcq,
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = {
			.max_send_wr = 16, .max_recv_wr = 16,
			.max_send_sge = 2, .max_recv_sge = 2,
			.max_inline_data = 64,
		},
	};
}

static struct ib_qp *rsw_qt_qp_attr(struct kunit *test, struct ib_pd *pd,
				    struct ib_qp_init_attr *attr)
{
	struct ib_qp *qp;

	qp = ib_create_qp(pd, attr);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(qp), "ib_create_qp: %ld",
			       PTR_ERR(qp));
	KUNIT_ASSERT_EQ(test,
			kunit_add_action_or_reset(test, rsw_qt_destroy_qp, qp),
			0);
	return qp;
}

/* A QP with its own send and receive CQ of 64 entries each. */
static struct ib_qp *rsw_qt_qp(struct kunit *test)
{
	struct ib_qp_init_attr attr;

	attr = rsw_qt_attr(rsw_qt_cq(test, 64), rsw_qt_cq(test, 64));
	return rsw_qt_qp_attr(test, rsw_qt.pd, &attr);
}

static int rsw_qt_modify(struct ib_qp *qp, enum ib_qp_state to)
{
	struct ib_qp_attr attr = { .qp_state = to };

	return ib_modify_qp(qp, &attr, IB_QP_STATE);
}

static enum ib_qp_state rsw_qt_state(struct kunit *test, struct ib_qp *qp)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;

	KUNIT_ASSERT_EQ(test, ib_query_qp(qp, &attr, IB_QP_STATE, &init), 0);
	return attr.qp_state;
}

/* Poll one entry; false if the CQ is empty. */
static bool rsw_qt_poll(struct ib_cq *cq, struct ib_wc *wc)
{
	return ib_poll_cq(cq, 1, wc) == 1;
}

static void rsw_qt_expect_wc(struct kunit *test, struct ib_cq *cq, u64 wr_id,
			     enum ib_wc_status status, enum ib_wc_opcode op)
{
	struct ib_wc wc;

	KUNIT_ASSERT_TRUE_MSG(test, rsw_qt_poll(cq, &wc), "wr_id %llu", wr_id);
	KUNIT_EXPECT_EQ(test, wc.wr_id, wr_id);
	KUNIT_EXPECT_EQ(test, wc.status, status);
	if (status == IB_WC_SUCCESS)
		KUNIT_EXPECT_EQ(test, wc.opcode, op);
}

/* ---------------------------------------------------------------- create */

/* What a create case gets wrong besides its caps, if anything. */
enum rsw_qt_odd {
	RSW_QT_SOUND, RSW_QT_UD, RSW_QT_FOREIGN_SRQ, RSW_QT_NO_SCQ,
	RSW_QT_NO_RCQ, RSW_QT_BAD_SIG, RSW_QT_FLAGS,
};

struct rsw_qt_create_case {
	const char *name;
	struct ib_qp_cap cap;		/* asked for */
	enum rsw_qt_odd odd;
	int ret;
	u32 send_wr, recv_wr;		/* reported, if ret == 0 */
};

/* Caps in the order send_wr, recv_wr, send_sge, recv_sge, inline. */
#define RSW_QT_CAP(sw, rw, ss, rs, il)					\
	{ .max_send_wr = (sw), .max_recv_wr = (rw), .max_send_sge = (ss), \
	  .max_recv_sge = (rs), .max_inline_data = (il) }
#define RSW_QT_CAP_DFL		RSW_QT_CAP(16, 16, 2, 2, 64)
#define RSW_QT_WR_MAX		RSW_MAX_QP_WR
#define RSW_QT_SGE_MAX		RSW_MAX_SGE

static struct ib_srq rsw_qt_fake_srq;

static void rsw_qt_make_odd(struct ib_qp_init_attr *a, enum rsw_qt_odd odd)
{
	switch (odd) {
	case RSW_QT_SOUND:
		break;
	case RSW_QT_UD:
		a->qp_type = IB_QPT_UD;
		break;
	case RSW_QT_FOREIGN_SRQ:
		a->srq = &rsw_qt_fake_srq;
		break;
	case RSW_QT_NO_SCQ:
		a->send_cq = NULL;
		break;
	case RSW_QT_NO_RCQ:
		a->recv_cq = NULL;
		break;
	case RSW_QT_BAD_SIG:
		a->sq_sig_type = 7;
		break;
	case RSW_QT_FLAGS:
		a->create_flags = IB_QP_CREATE_INTEGRITY_EN;
		break;
	}
}

static const struct rsw_qt_create_case rsw_qt_create_cases[] = {
	{ "plain", RSW_QT_CAP_DFL, RSW_QT_SOUND, 0, 16, 16 },
	{ "rings rounded up to a power of two", RSW_QT_CAP(5, 100, 2, 2, 64),
	  RSW_QT_SOUND, 0, 8, 128 },
	{ "every cap at its limit",
	  RSW_QT_CAP(RSW_QT_WR_MAX, RSW_QT_WR_MAX, RSW_QT_SGE_MAX,
		     RSW_QT_SGE_MAX, RSW_MAX_INLINE),
	  RSW_QT_SOUND, 0, RSW_QT_WR_MAX, RSW_QT_WR_MAX },
	{ "max_send_wr over", RSW_QT_CAP(RSW_QT_WR_MAX + 1, 16, 2, 2, 64),
	  RSW_QT_SOUND, -EINVAL },
	{ "max_recv_wr over", RSW_QT_CAP(16, RSW_QT_WR_MAX + 1, 2, 2, 64),
	  RSW_QT_SOUND, -EINVAL },
	{ "max_send_sge over", RSW_QT_CAP(16, 16, RSW_QT_SGE_MAX + 1, 2, 64),
	  RSW_QT_SOUND, -EINVAL },
	{ "max_recv_sge over", RSW_QT_CAP(16, 16, 2, RSW_QT_SGE_MAX + 1, 64),
	  RSW_QT_SOUND, -EINVAL },
	{ "max_inline_data over", RSW_QT_CAP(16, 16, 2, 2, RSW_MAX_INLINE + 1),
	  RSW_QT_SOUND, -EINVAL },
	{ "UD refused", RSW_QT_CAP_DFL, RSW_QT_UD, -EOPNOTSUPP },
	/* SRQ QPs: kunit/srq_kunit.c; one from another device is refused. */
	{ "SRQ of another device refused", RSW_QT_CAP_DFL, RSW_QT_FOREIGN_SRQ,
	  -EINVAL },
	{ "no send CQ", RSW_QT_CAP_DFL, RSW_QT_NO_SCQ, -EINVAL },
	{ "no receive CQ", RSW_QT_CAP_DFL, RSW_QT_NO_RCQ, -EINVAL },
	{ "bad sq_sig_type", RSW_QT_CAP_DFL, RSW_QT_BAD_SIG, -EINVAL },
	{ "create_flags refused", RSW_QT_CAP_DFL, RSW_QT_FLAGS, -EOPNOTSUPP },
};

KUNIT_ARRAY_PARAM_DESC(rsw_qt_create, rsw_qt_create_cases, name);

static void rsw_qt_create_caps(struct kunit *test)
{
	const struct rsw_qt_create_case *c = test->param_value;
	struct ib_cq *cq = rsw_qt_cq(test, 16);
	struct ib_qp_init_attr attr = rsw_qt_attr(cq, cq);
	struct ib_qp *qp;

	attr.cap = c->cap;
	rsw_qt_make_odd(&attr, c->odd);
	qp = ib_create_qp(rsw_qt.pd, &attr);
	if (c->ret) {
		KUNIT_ASSERT_TRUE(test, IS_ERR(qp));
		KUNIT_EXPECT_EQ(test, PTR_ERR(qp), (long)c->ret);
		return;
	}
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(qp), "%ld", PTR_ERR(qp));
	KUNIT_ASSERT_EQ(test,
			kunit_add_action_or_reset(test, rsw_qt_destroy_qp, qp),
			0);
	KUNIT_EXPECT_EQ(test, attr.cap.max_send_wr, c->send_wr);
	KUNIT_EXPECT_EQ(test, attr.cap.max_recv_wr, c->recv_wr);
	KUNIT_EXPECT_NE(test, qp->qp_num, 0U);
	KUNIT_EXPECT_EQ(test, rsw_qt_state(test, qp), IB_QPS_INIT);
}

/* ------------------------------------------------ state transition table */

#define I RSW_QPS_IDLE
#define R RSW_QPS_RTS
#define C RSW_QPS_CLOSING
#define T RSW_QPS_TERMINATE
#define E RSW_QPS_ERROR
#define X (-1)

/*
 * The whole table of record, written out: from each stream state to each
 * ib_qp_state (RESET INIT RTR RTS SQD SQE ERR), the resulting state or X.
 */
static const int rsw_qt_trans_expect[RSW_QPS_COUNT][IB_QPS_ERR + 1] = {
	/*              RESET INIT RTR RTS SQD SQE ERR */
	[RSW_QPS_IDLE] = { I, I, I, R, X, X, E },
	[RSW_QPS_RTS] = { X, X, X, R, C, T, E },
	[RSW_QPS_CLOSING] = { I, I, I, X, C, T, E },
	[RSW_QPS_TERMINATE] = { X, X, X, X, X, T, E },
	[RSW_QPS_ERROR] = { I, X, X, X, X, X, E },
};

#undef I
#undef R
#undef C
#undef T
#undef E

static const char *const rsw_qt_ib_names[] = {
	"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR",
};

struct rsw_qt_trans_case {
	enum rsw_qp_state from;
	enum ib_qp_state to;
};

static const void *rsw_qt_trans_gen(const void *prev, char *desc)
{
	static struct rsw_qt_trans_case c;
	int n;

	n = prev ? c.from * (IB_QPS_ERR + 1) + c.to + 1 : 0;
	if (n >= RSW_QPS_COUNT * (IB_QPS_ERR + 1))
		return NULL;
	c.from = n / (IB_QPS_ERR + 1);
	c.to = n % (IB_QPS_ERR + 1);
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s to %s %s",
		 rsw_qp_state_name(c.from), rsw_qt_ib_names[c.to],
		 rsw_qt_trans_expect[c.from][c.to] == X ? "refused" : "allowed");
	return &c;
}

static void rsw_qt_transition(struct kunit *test)
{
	const struct rsw_qt_trans_case *c = test->param_value;
	int want = rsw_qt_trans_expect[c->from][c->to];
	enum rsw_qp_state next = RSW_QPS_COUNT;
	int ret;

	ret = rsw_qp_transition(c->from, c->to, &next);
	if (want == X) {
		KUNIT_EXPECT_EQ(test, ret, -EINVAL);
		return;
	}
	KUNIT_EXPECT_EQ(test, ret, 0);
	KUNIT_EXPECT_STREQ(test, rsw_qp_state_name(next),
			   rsw_qp_state_name(want));
}

#undef X

/* ----------------------------------------------- modify_qp via ib_core */

struct rsw_qt_step {
	enum ib_qp_state to;
	int ret;
	enum ib_qp_state then;		/* queried state afterwards */
};

struct rsw_qt_modify_case {
	const char *name;
	struct rsw_qt_step step[4];
	int n;
};

static const struct rsw_qt_modify_case rsw_qt_modify_cases[] = {
	{ "RESET INIT RTR stay IDLE and report what was set",
	  { { IB_QPS_INIT, 0, IB_QPS_INIT }, { IB_QPS_RTR, 0, IB_QPS_RTR },
	    { IB_QPS_RESET, 0, IB_QPS_RESET } }, 3 },
	{ "RTS without a stream is refused",
	  { { IB_QPS_INIT, 0, IB_QPS_INIT },
	    { IB_QPS_RTS, -ENOTCONN, IB_QPS_INIT } }, 2 },
	{ "SQD and SQE from IDLE refused",
	  { { IB_QPS_SQD, -EINVAL, IB_QPS_INIT },
	    { IB_QPS_SQE, -EINVAL, IB_QPS_INIT } }, 2 },
	{ "SQD after the stream ended does nothing",
	  { { IB_QPS_ERR, 0, IB_QPS_ERR }, { IB_QPS_SQD, 0, IB_QPS_ERR },
	    { IB_QPS_RESET, 0, IB_QPS_RESET } }, 3 },
	{ "ERR is sticky but for RESET",
	  { { IB_QPS_ERR, 0, IB_QPS_ERR }, { IB_QPS_ERR, 0, IB_QPS_ERR },
	    { IB_QPS_INIT, -EINVAL, IB_QPS_ERR },
	    { IB_QPS_RESET, 0, IB_QPS_RESET } }, 4 },
};

KUNIT_ARRAY_PARAM_DESC(rsw_qt_modify, rsw_qt_modify_cases, name);

static void rsw_qt_modify_states(struct kunit *test)
{
	const struct rsw_qt_modify_case *c = test->param_value;
	struct ib_qp *qp = rsw_qt_qp(test);
	int i;

	for (i = 0; i < c->n; i++) {
		KUNIT_EXPECT_EQ_MSG(test, rsw_qt_modify(qp, c->step[i].to),
				    c->step[i].ret, "step %d", i);
		KUNIT_EXPECT_EQ_MSG(test, rsw_qt_state(test, qp),
				    c->step[i].then, "step %d", i);
	}
}

/* IRD/ORD up to RSW_MAX_RD_ATOM are kept; more is refused. */
static void rsw_qt_modify_rd_atomic(struct kunit *test)
{
	struct ib_qp *qp = rsw_qt_qp(test);
	int mask = IB_QP_MAX_QP_RD_ATOMIC | IB_QP_MAX_DEST_RD_ATOMIC;
	struct ib_qp_attr attr = {
		.max_rd_atomic = RSW_MAX_RD_ATOM,
		.max_dest_rd_atomic = RSW_MAX_RD_ATOM,
	};
	struct ib_qp_init_attr init;

	KUNIT_EXPECT_EQ(test, ib_modify_qp(qp, &attr, mask), 0);
	attr.max_rd_atomic = RSW_MAX_RD_ATOM + 1;
	KUNIT_EXPECT_EQ(test, ib_modify_qp(qp, &attr, mask), -EINVAL);
	memset(&attr, 0, sizeof(attr));
	KUNIT_ASSERT_EQ(test, ib_query_qp(qp, &attr, mask, &init), 0);
	KUNIT_EXPECT_EQ(test, attr.max_rd_atomic, RSW_MAX_RD_ATOM);
	KUNIT_EXPECT_EQ(test, attr.max_dest_rd_atomic, RSW_MAX_RD_ATOM);
	KUNIT_EXPECT_EQ(test, init.cap.max_send_sge, 2U);
	KUNIT_EXPECT_EQ(test, init.cap.max_inline_data, 64U);
}

/* ------------------------------------------------------ post validation */

static u8 rsw_qt_buf[128];

/* Three WRs; the middle one is made bad by the case. */
struct rsw_qt_send {
	struct ib_rdma_wr wr[3];
	struct ib_reg_wr reg;
	struct ib_atomic_wr atomic;
	struct ib_sge good;		/* of the good WRs */
	struct ib_sge sge[RSW_MAX_SGE + 1];	/* of the middle one */
};

struct rsw_qt_send_case {
	const char *name;
	void (*spoil)(struct rsw_qt_send *s);
	int ret;
};

static void rsw_qt_sp_imm(struct rsw_qt_send *s)
{
	s->wr[1].wr.opcode = IB_WR_SEND_WITH_IMM;
}

/* An atomic WR in the middle, with the middle SGE list for its result. */
static void rsw_qt_sp_atomic(struct rsw_qt_send *s, enum ib_wr_opcode op,
			     int num_sge, u32 len)
{
	s->atomic.wr = s->wr[1].wr;
	s->atomic.wr.opcode = op;
	s->atomic.wr.num_sge = num_sge;
	s->sge[0].length = len;
	s->sge[1].length = len;
	s->atomic.remote_addr = 0x1000;
	s->atomic.rkey = 0x100;
	s->wr[0].wr.next = &s->atomic.wr;
}

static void rsw_qt_sp_atomic_short(struct rsw_qt_send *s)
{
	rsw_qt_sp_atomic(s, IB_WR_ATOMIC_CMP_AND_SWP, 1, 4);
}

static void rsw_qt_sp_atomic_long(struct rsw_qt_send *s)
{
	rsw_qt_sp_atomic(s, IB_WR_ATOMIC_FETCH_AND_ADD, 1, 16);
}

static void rsw_qt_sp_atomic_sges(struct rsw_qt_send *s)
{
	rsw_qt_sp_atomic(s, IB_WR_MASKED_ATOMIC_FETCH_AND_ADD, 2, 4);
}

static void rsw_qt_sp_sges(struct rsw_qt_send *s)
{
	s->wr[1].wr.num_sge = 3;	/* the QP has max_send_sge 2 */
}

static void rsw_qt_sp_read_sges(struct rsw_qt_send *s)
{
	s->wr[1].wr.opcode = IB_WR_RDMA_READ;
	s->sge[1].length = 1;
	s->sge[1].lkey = s->sge[0].lkey;
	s->wr[1].wr.num_sge = 2;	/* within max_send_sge, over max_sge_rd */
}

static void rsw_qt_sp_length(struct rsw_qt_send *s)
{
	s->sge[0].length = 1U << 31;
	s->sge[1].length = 1;
	s->sge[1].lkey = s->sge[0].lkey;
	s->wr[1].wr.num_sge = 2;
}

static void rsw_qt_sp_lkey(struct rsw_qt_send *s)
{
	s->sge[0].lkey = 0x000000ab;	/* index 0 never exists */
}

static void rsw_qt_sp_inline(struct rsw_qt_send *s)
{
	s->sge[0].addr = (uintptr_t)rsw_qt_buf;
	s->sge[0].length = 65;		/* the QP has max_inline_data 64 */
	s->wr[1].wr.send_flags = IB_SEND_INLINE;
}

static void rsw_qt_sp_reg_null(struct rsw_qt_send *s)
{
	s->reg.wr.opcode = IB_WR_REG_MR;
	s->reg.wr.wr_id = 2;
	s->reg.wr.next = &s->wr[2].wr;
	s->reg.mr = NULL;
	s->wr[0].wr.next = &s->reg.wr;
}

static void rsw_qt_sp_inv_stag(struct rsw_qt_send *s)
{
	s->wr[1].wr.opcode = IB_WR_LOCAL_INV;
	s->wr[1].wr.num_sge = 0;
	s->wr[1].wr.ex.invalidate_rkey = 0x12;
}

static void rsw_qt_sp_inv_sges(struct rsw_qt_send *s)
{
	s->wr[1].wr.opcode = IB_WR_LOCAL_INV;
	s->wr[1].wr.ex.invalidate_rkey = s->sge[0].lkey;
}

static const struct rsw_qt_send_case rsw_qt_send_cases[] = {
	/* On iWARP a Send and an Immediate Data: two receives for one WR. */
	{ "SEND_WITH_IMM refused", rsw_qt_sp_imm, -EINVAL },
	{ "atomic with a 4-byte result", rsw_qt_sp_atomic_short, -EINVAL },
	{ "atomic with a 16-byte result", rsw_qt_sp_atomic_long, -EINVAL },
	{ "atomic with two result SGEs", rsw_qt_sp_atomic_sges, -EINVAL },
	{ "more SGEs than max_send_sge", rsw_qt_sp_sges, -EINVAL },
	{ "RDMA_READ with more sink SGEs than max_sge_rd", rsw_qt_sp_read_sges,
	  -EINVAL },
	{ "total length over 2^31", rsw_qt_sp_length, -EINVAL },
	{ "lkey with index 0", rsw_qt_sp_lkey, -EINVAL },
	{ "inline over max_inline_data", rsw_qt_sp_inline, -EINVAL },
	{ "REG_MR without an MR", rsw_qt_sp_reg_null, -EINVAL },
	{ "LOCAL_INV of STag index 0", rsw_qt_sp_inv_stag, -EINVAL },
	{ "LOCAL_INV with SGEs", rsw_qt_sp_inv_sges, -EINVAL },
};

KUNIT_ARRAY_PARAM_DESC(rsw_qt_send, rsw_qt_send_cases, name);

static void rsw_qt_send_init(struct rsw_qt_send *s, u32 lkey)
{
	int i;

	memset(s, 0, sizeof(*s));
	s->good.addr = (uintptr_t)rsw_qt_buf;
	s->good.length = 8;
	s->good.lkey = lkey;
	for (i = 0; i < ARRAY_SIZE(s->sge); i++) {
		s->sge[i].addr = (uintptr_t)rsw_qt_buf;
		s->sge[i].length = 8;
		s->sge[i].lkey = lkey;
	}
	for (i = 0; i < 3; i++) {
		s->wr[i].wr.wr_id = i + 1;
		s->wr[i].wr.opcode = IB_WR_SEND;
		s->wr[i].wr.sg_list = i == 1 ? s->sge : &s->good;
		s->wr[i].wr.num_sge = 1;
		s->wr[i].wr.send_flags = IB_SEND_SIGNALED;
		if (i < 2)
			s->wr[i].wr.next = &s->wr[i + 1].wr;
	}
}

/* Flush the QP and count what its send CQ reports; wr_ids in @ids. */
static int rsw_qt_flush_count(struct kunit *test, struct ib_qp *qp,
			      struct ib_cq *cq, u64 *ids, int max)
{
	struct ib_wc wc;
	int n = 0;

	KUNIT_EXPECT_EQ(test, rsw_qt_modify(qp, IB_QPS_ERR), 0);
	while (rsw_qt_poll(cq, &wc)) {
		KUNIT_EXPECT_EQ(test, wc.status, IB_WC_WR_FLUSH_ERR);
		KUNIT_EXPECT_PTR_EQ(test, wc.qp, qp);
		if (n < max)
			ids[n] = wc.wr_id;
		n++;
	}
	return n;
}

static void rsw_qt_post_send_bad(struct kunit *test)
{
	const struct rsw_qt_send_case *c = test->param_value;
	struct ib_cq *cq = rsw_qt_cq(test, 64);
	struct ib_qp_init_attr attr = rsw_qt_attr(cq, cq);
	struct ib_qp *qp = rsw_qt_qp_attr(test, rsw_qt.pd, &attr);
	const struct ib_send_wr *bad = NULL, *want;
	struct rsw_qt_send *s;
	u64 ids[4];

	s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s);
	rsw_qt_send_init(s, rsw_qt.pd->local_dma_lkey);
	c->spoil(s);
	want = s->wr[0].wr.next;
	KUNIT_EXPECT_EQ(test, ib_post_send(qp, &s->wr[0].wr, &bad), c->ret);
	KUNIT_EXPECT_PTR_EQ(test, bad, want);
	/* Exactly the WR before the bad one was queued. */
	KUNIT_EXPECT_EQ(test, rsw_qt_flush_count(test, qp, cq, ids, 4), 1);
	KUNIT_EXPECT_EQ(test, ids[0], 1ULL);
}

/* The good chain itself, and a zero-length Write (as ib_drain_sq posts). */
static void rsw_qt_post_send_good(struct kunit *test)
{
	struct ib_cq *cq = rsw_qt_cq(test, 64);
	struct ib_qp_init_attr attr = rsw_qt_attr(cq, cq);
	struct ib_qp *qp = rsw_qt_qp_attr(test, rsw_qt.pd, &attr);
	const struct ib_send_wr *bad = NULL;
	struct ib_rdma_wr zw = { .wr = { .wr_id = 4, .opcode = IB_WR_RDMA_WRITE } };
	struct rsw_qt_send *s;
	u64 ids[8];
	int i;

	s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s);
	rsw_qt_send_init(s, rsw_qt.pd->local_dma_lkey);
	s->wr[2].wr.next = &zw.wr;
	KUNIT_EXPECT_EQ(test, ib_post_send(qp, &s->wr[0].wr, &bad), 0);
	KUNIT_EXPECT_NULL(test, bad);
	KUNIT_ASSERT_EQ(test, rsw_qt_flush_count(test, qp, cq, ids, 8), 4);
	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_EQ(test, ids[i], (u64)i + 1);
}

/* Inline data is copied at post time: the buffer may change afterwards. */
static void rsw_qt_post_send_inline_copied(struct kunit *test)
{
	struct ib_qp *qp = rsw_qt_qp(test);
	struct rsw_qp *rqp = to_rsw_qp(qp);
	u8 data[64];
	struct ib_sge sge = { .addr = (uintptr_t)data, .length = sizeof(data) };
	struct ib_send_wr wr = {
		.opcode = IB_WR_SEND, .sg_list = &sge, .num_sge = 1,
		.send_flags = IB_SEND_INLINE | IB_SEND_SIGNALED,
	};
	struct rdmap_sw_sqe *sqe;
	u32 idx;

	memset(data, 0xa5, sizeof(data));
	KUNIT_ASSERT_EQ(test, ib_post_send(qp, &wr, NULL), 0);
	memset(data, 0, sizeof(data));
	sqe = kunit_kzalloc(test, sizeof(*sqe), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, sqe);
	KUNIT_ASSERT_EQ(test, rsw_qp_sq_take(rqp, sqe, &idx), RSW_SQ_WIRE);
	KUNIT_EXPECT_TRUE(test, sqe->flags & RDMAP_SW_SQE_INLINE);
	KUNIT_EXPECT_EQ(test, sqe->length, 64U);
	KUNIT_EXPECT_EQ(test, sqe->num_sge, 0);
	KUNIT_EXPECT_EQ(test, sqe->inline_data[0], 0xa5);
	KUNIT_EXPECT_EQ(test, sqe->inline_data[63], 0xa5);
	rsw_qp_sq_complete(rqp, idx, RDMAP_SW_WC_SUCCESS, 64);
}

struct rsw_qt_recv_case {
	const char *name;
	int num_sge;
	u32 length;
	u32 lkey_index;
};

static const struct rsw_qt_recv_case rsw_qt_recv_cases[] = {
	{ "more SGEs than max_recv_sge", 3, 8, 1 },
	{ "total length over 2^31", 2, 1U << 31, 1 },
	{ "lkey with index 0", 1, 8, 0 },
};

KUNIT_ARRAY_PARAM_DESC(rsw_qt_recv, rsw_qt_recv_cases, name);

static void rsw_qt_post_recv_bad(struct kunit *test)
{
	const struct rsw_qt_recv_case *c = test->param_value;
	struct ib_cq *scq = rsw_qt_cq(test, 16), *rcq = rsw_qt_cq(test, 16);
	struct ib_qp_init_attr attr = rsw_qt_attr(scq, rcq);
	struct ib_qp *qp = rsw_qt_qp_attr(test, rsw_qt.pd, &attr);
	u32 lkey = rsw_qt.pd->local_dma_lkey;
	struct ib_sge good = { .addr = (uintptr_t)rsw_qt_buf, .length = 8,
			       .lkey = lkey };
	struct ib_sge sge[3];
	struct ib_recv_wr wr[3] = {};
	const struct ib_recv_wr *bad = NULL;
	u64 ids[4];
	int i;

	for (i = 0; i < 3; i++) {
		sge[i] = good;
		wr[i].wr_id = i + 1;
		wr[i].sg_list = i == 1 ? sge : &good;
		wr[i].num_sge = i == 1 ? c->num_sge : 1;
		if (i < 2)
			wr[i].next = &wr[i + 1];
	}
	sge[0].length = c->length;
	sge[1].length = c->length;
	if (!c->lkey_index)
		sge[0].lkey = rsw_stag_key(lkey);
	KUNIT_EXPECT_EQ(test, ib_post_recv(qp, wr, &bad), -EINVAL);
	KUNIT_EXPECT_PTR_EQ(test, bad, (const struct ib_recv_wr *)&wr[1]);
	KUNIT_EXPECT_EQ(test, rsw_qt_flush_count(test, qp, rcq, ids, 4), 1);
	KUNIT_EXPECT_EQ(test, ids[0], 1ULL);
}

/* A full SQ or RQ refuses the first WR that does not fit with -ENOMEM. */
static void rsw_qt_queue_full(struct kunit *test)
{
	struct ib_cq *cq = rsw_qt_cq(test, 64);
	struct ib_qp_init_attr attr = rsw_qt_attr(cq, cq);
	struct ib_send_wr swr[6] = {};
	struct ib_recv_wr rwr[6] = {};
	const struct ib_send_wr *sbad = NULL;
	const struct ib_recv_wr *rbad = NULL;
	struct ib_qp *qp;
	int i;

	attr.cap.max_send_wr = 4;
	attr.cap.max_recv_wr = 4;
	qp = rsw_qt_qp_attr(test, rsw_qt.pd, &attr);
	KUNIT_ASSERT_EQ(test, attr.cap.max_send_wr, 4U);
	for (i = 0; i < 6; i++) {
		swr[i].wr_id = i;
		swr[i].opcode = IB_WR_SEND;
		swr[i].next = i < 5 ? &swr[i + 1] : NULL;
		rwr[i].wr_id = i;
		rwr[i].next = i < 5 ? &rwr[i + 1] : NULL;
	}
	KUNIT_EXPECT_EQ(test, ib_post_send(qp, swr, &sbad), -ENOMEM);
	KUNIT_EXPECT_PTR_EQ(test, sbad, (const struct ib_send_wr *)&swr[4]);
	KUNIT_EXPECT_EQ(test, ib_post_recv(qp, rwr, &rbad), -ENOMEM);
	KUNIT_EXPECT_PTR_EQ(test, rbad, (const struct ib_recv_wr *)&rwr[4]);
}

/* ----------------------------------------------------------------- flush */

/*
 * Moving to ERR flushes every posted WR, signaled or not, in order, with
 * its wr_id and opcode; WRs posted in ERR complete flushed at once.
 */
static void rsw_qt_flush_order(struct kunit *test)
{
	static const struct {
		enum ib_wr_opcode op;
		enum ib_wc_opcode wc;
	} ops[] = {
		{ IB_WR_SEND, IB_WC_SEND },
		{ IB_WR_RDMA_WRITE, IB_WC_RDMA_WRITE },
		{ IB_WR_RDMA_READ, IB_WC_RDMA_READ },
		{ IB_WR_SEND_WITH_INV, IB_WC_SEND },
		{ IB_WR_LOCAL_INV, IB_WC_LOCAL_INV },
	};
	struct ib_cq *scq = rsw_qt_cq(test, 64), *rcq = rsw_qt_cq(test, 64);
	struct ib_qp_init_attr attr = rsw_qt_attr(scq, rcq);
	struct ib_qp *qp = rsw_qt_qp_attr(test, rsw_qt.pd, &attr);
	struct ib_rdma_wr swr = {};
	struct ib_recv_wr rwr = {};
	struct ib_wc wc;
	int i;

	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		swr.wr.wr_id = 100 + i;
		swr.wr.opcode = ops[i].op;
		swr.wr.ex.invalidate_rkey = rsw_qt.pd->local_dma_lkey;
		swr.wr.send_flags = i & 1 ? IB_SEND_SIGNALED : 0;
		KUNIT_ASSERT_EQ(test, ib_post_send(qp, &swr.wr, NULL), 0);
		rwr.wr_id = 200 + i;
		KUNIT_ASSERT_EQ(test, ib_post_recv(qp, &rwr, NULL), 0);
	}
	KUNIT_EXPECT_FALSE(test, rsw_qt_poll(scq, &wc));
	KUNIT_ASSERT_EQ(test, rsw_qt_modify(qp, IB_QPS_ERR), 0);
	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		KUNIT_ASSERT_TRUE(test, rsw_qt_poll(scq, &wc));
		KUNIT_EXPECT_EQ(test, wc.wr_id, 100ULL + i);
		KUNIT_EXPECT_EQ(test, wc.status, IB_WC_WR_FLUSH_ERR);
		KUNIT_EXPECT_EQ(test, wc.opcode, ops[i].wc);
		KUNIT_EXPECT_PTR_EQ(test, wc.qp, qp);
		KUNIT_ASSERT_TRUE(test, rsw_qt_poll(rcq, &wc));
		KUNIT_EXPECT_EQ(test, wc.wr_id, 200ULL + i);
		KUNIT_EXPECT_EQ(test, wc.status, IB_WC_WR_FLUSH_ERR);
		KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_RECV);
	}
	KUNIT_EXPECT_FALSE(test, rsw_qt_poll(scq, &wc));
	KUNIT_EXPECT_FALSE(test, rsw_qt_poll(rcq, &wc));

	swr.wr.wr_id = 300;
	swr.wr.opcode = IB_WR_SEND;
	KUNIT_ASSERT_EQ(test, ib_post_send(qp, &swr.wr, NULL), 0);
	KUNIT_ASSERT_TRUE(test, rsw_qt_poll(scq, &wc));
	KUNIT_EXPECT_EQ(test, wc.wr_id, 300ULL);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_WR_FLUSH_ERR);
}

/*
 * ERR while TX holds a WQE: what was posted after it is flushed only once
 * TX finishes it, so completions stay in order; RESET waits for it too.
 */
static void rsw_qt_flush_behind_taken(struct kunit *test)
{
	struct ib_cq *cq = rsw_qt_cq(test, 64);
	struct ib_qp_init_attr attr = rsw_qt_attr(cq, cq);
	struct ib_qp *qp = rsw_qt_qp_attr(test, rsw_qt.pd, &attr);
	struct ib_send_wr wr[2] = {
		{ .wr_id = 1, .opcode = IB_WR_SEND, .next = &wr[1] },
		{ .wr_id = 2, .opcode = IB_WR_SEND },
	};
	struct rdmap_sw_sqe *sqe;
	struct ib_wc wc;
	u32 idx;

	sqe = kunit_kzalloc(test, sizeof(*sqe), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, sqe);
	KUNIT_ASSERT_EQ(test, ib_post_send(qp, wr, NULL), 0);
	KUNIT_ASSERT_EQ(test, rsw_qp_sq_take(to_rsw_qp(qp), sqe, &idx),
			RSW_SQ_WIRE);
	KUNIT_ASSERT_EQ(test, rsw_qt_modify(qp, IB_QPS_ERR), 0);
	KUNIT_EXPECT_FALSE(test, rsw_qt_poll(cq, &wc));
	KUNIT_EXPECT_EQ(test, rsw_qt_modify(qp, IB_QPS_RESET), -EINVAL);
	KUNIT_EXPECT_EQ(test, rsw_qp_sq_take(to_rsw_qp(qp), sqe, &idx),
			RSW_SQ_EMPTY);
	rsw_qp_sq_complete(to_rsw_qp(qp), idx, RDMAP_SW_WC_WR_FLUSH_ERR, 0);
	rsw_qt_expect_wc(test, cq, 1, IB_WC_WR_FLUSH_ERR, IB_WC_SEND);
	rsw_qt_expect_wc(test, cq, 2, IB_WC_WR_FLUSH_ERR, IB_WC_SEND);
	KUNIT_EXPECT_EQ(test, rsw_qt_modify(qp, IB_QPS_RESET), 0);
}

/* RX takes a receive and completes it as a Send with Invalidate. */
static void rsw_qt_rq_take_complete(struct kunit *test)
{
	struct ib_cq *scq = rsw_qt_cq(test, 16), *rcq = rsw_qt_cq(test, 16);
	struct ib_qp_init_attr attr = rsw_qt_attr(scq, rcq);
	struct ib_qp *qp = rsw_qt_qp_attr(test, rsw_qt.pd, &attr);
	struct ib_sge sge = { .addr = (uintptr_t)rsw_qt_buf, .length = 100,
			      .lkey = rsw_qt.pd->local_dma_lkey };
	struct ib_recv_wr wr = { .wr_id = 9, .sg_list = &sge, .num_sge = 1 };
	struct rsw_rq_result res = {
		.status = RDMAP_SW_WC_SUCCESS, .byte_len = 42,
		.cqe_flags = RDMAP_SW_CQE_WITH_INV, .ex_data = 0x1234,
	};
	struct rdmap_sw_rqe *rqe;
	struct ib_wc wc;
	u32 idx;

	rqe = kunit_kzalloc(test, sizeof(*rqe), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, rqe);
	KUNIT_ASSERT_EQ(test, ib_post_recv(qp, &wr, NULL), 0);
	KUNIT_ASSERT_TRUE(test, rsw_qp_rq_take(to_rsw_qp(qp), rqe, &idx));
	KUNIT_EXPECT_EQ(test, rqe->wr_id, 9ULL);
	KUNIT_EXPECT_EQ(test, rqe->num_sge, 1);
	KUNIT_EXPECT_EQ(test, rqe->length, 100U);
	KUNIT_EXPECT_EQ(test, rqe->sge[0].lkey, sge.lkey);
	KUNIT_EXPECT_FALSE(test, rsw_qp_rq_take(to_rsw_qp(qp), rqe, &idx));
	rsw_qp_rq_complete(to_rsw_qp(qp), idx, &res);
	KUNIT_ASSERT_TRUE(test, rsw_qt_poll(rcq, &wc));
	KUNIT_EXPECT_EQ(test, wc.wr_id, 9ULL);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_RECV);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 42U);
	KUNIT_EXPECT_TRUE(test, wc.wc_flags & IB_WC_WITH_INVALIDATE);
	KUNIT_EXPECT_EQ(test, wc.ex.invalidate_rkey, 0x1234U);
	KUNIT_EXPECT_FALSE(test, rsw_qt_poll(scq, &wc));
}

/* ----------------------------------------------------------------- drain */

struct rsw_qt_cqe {
	struct ib_cqe cqe;
	atomic_t *count;
};

static void rsw_qt_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rsw_qt_cqe *c = container_of(wc->wr_cqe, struct rsw_qt_cqe, cqe);

	if (wc->status == IB_WC_WR_FLUSH_ERR)
		atomic_inc(c->count);
}

struct rsw_qt_drain_case {
	const char *name;
	enum ib_poll_context poll;
};

static const struct rsw_qt_drain_case rsw_qt_drain_cases[] = {
	{ "IB_POLL_DIRECT", IB_POLL_DIRECT },
	{ "IB_POLL_SOFTIRQ", IB_POLL_SOFTIRQ },
	{ "IB_POLL_WORKQUEUE", IB_POLL_WORKQUEUE },
};

KUNIT_ARRAY_PARAM_DESC(rsw_qt_drain, rsw_qt_drain_cases, name);

/* ib_drain_qp() returns, after every earlier WR was flushed, on any CQ. */
static void rsw_qt_drain_qp(struct kunit *test)
{
	const struct rsw_qt_drain_case *c = test->param_value;
	struct ib_cq *scq, *rcq;
	struct ib_qp_init_attr attr;
	struct rsw_qt_cqe sc, rc;
	atomic_t count = ATOMIC_INIT(0);
	struct ib_send_wr swr = { .opcode = IB_WR_SEND, .wr_cqe = &sc.cqe };
	struct ib_recv_wr rwr = { .wr_cqe = &rc.cqe };
	struct ib_qp *qp;
	int i;

	scq = ib_alloc_cq(rsw_qt.ibdev, NULL, 32, 0, c->poll);
	KUNIT_ASSERT_FALSE(test, IS_ERR(scq));
	KUNIT_ASSERT_EQ(test,
			kunit_add_action_or_reset(test, rsw_qt_free_cq, scq),
			0);
	rcq = ib_alloc_cq(rsw_qt.ibdev, NULL, 32, 0, c->poll);
	KUNIT_ASSERT_FALSE(test, IS_ERR(rcq));
	KUNIT_ASSERT_EQ(test,
			kunit_add_action_or_reset(test, rsw_qt_free_cq, rcq),
			0);
	attr = rsw_qt_attr(scq, rcq);
	qp = rsw_qt_qp_attr(test, rsw_qt.pd, &attr);

	sc.cqe.done = rsw_qt_done;
	sc.count = &count;
	rc = sc;
	KUNIT_ASSERT_EQ(test, rsw_qt_modify(qp, IB_QPS_INIT), 0);
	for (i = 0; i < 3; i++) {
		KUNIT_ASSERT_EQ(test, ib_post_send(qp, &swr, NULL), 0);
		KUNIT_ASSERT_EQ(test, ib_post_recv(qp, &rwr, NULL), 0);
	}
	ib_drain_qp(qp);
	KUNIT_EXPECT_EQ(test, atomic_read(&count), 6);
	KUNIT_EXPECT_EQ(test, rsw_qt_state(test, qp), IB_QPS_ERR);
}

/* --------------------------------------------------------------- destroy */

/*
 * Destroying a QP with WRs posted and flushed entries not yet polled
 * frees its rings (kmemleak checks) and leaves nothing of it on the CQ.
 */
static void rsw_qt_destroy_posted(struct kunit *test)
{
	struct ib_cq *cq = rsw_qt_cq(test, 64);
	struct ib_qp_init_attr attr = rsw_qt_attr(cq, cq);
	struct ib_send_wr swr = { .opcode = IB_WR_SEND };
	struct ib_recv_wr rwr = {};
	struct ib_qp *qp, *other;
	struct ib_wc wc;
	int i;

	qp = ib_create_qp(rsw_qt.pd, &attr);
	KUNIT_ASSERT_FALSE(test, IS_ERR(qp));
	other = rsw_qt_qp_attr(test, rsw_qt.pd, &attr);
	for (i = 0; i < 8; i++) {
		KUNIT_ASSERT_EQ(test, ib_post_send(qp, &swr, NULL), 0);
		KUNIT_ASSERT_EQ(test, ib_post_recv(qp, &rwr, NULL), 0);
	}
	KUNIT_ASSERT_EQ(test, rsw_qt_modify(qp, IB_QPS_ERR), 0);
	/* More after the flush, still queued in the rings. */
	KUNIT_ASSERT_EQ(test, rsw_qt_modify(qp, IB_QPS_RESET), 0);
	for (i = 0; i < 8; i++) {
		KUNIT_ASSERT_EQ(test, ib_post_send(qp, &swr, NULL), 0);
		KUNIT_ASSERT_EQ(test, ib_post_recv(qp, &rwr, NULL), 0);
	}
	swr.wr_id = 77;
	KUNIT_ASSERT_EQ(test, ib_post_send(other, &swr, NULL), 0);
	KUNIT_ASSERT_EQ(test, rsw_qt_modify(other, IB_QPS_ERR), 0);
	KUNIT_EXPECT_EQ(test, ib_destroy_qp(qp), 0);
	/* Only the other QP's entry is left. */
	KUNIT_ASSERT_TRUE(test, rsw_qt_poll(cq, &wc));
	KUNIT_EXPECT_EQ(test, wc.wr_id, 77ULL);
	KUNIT_EXPECT_PTR_EQ(test, wc.qp, other);
	KUNIT_EXPECT_FALSE(test, rsw_qt_poll(cq, &wc));
}

/* A QP held by a CM/TX reference stays until it is dropped. */
static void rsw_qt_lookup_ref(struct kunit *test)
{
	struct ib_qp *qp = rsw_qt_qp(test);
	struct rsw_device *rsw = to_rsw_dev(rsw_qt.ibdev);
	struct rsw_qp *held;

	held = rsw_qp_lookup(rsw, qp->qp_num);
	KUNIT_ASSERT_PTR_EQ(test, held, to_rsw_qp(qp));
	KUNIT_EXPECT_EQ(test, refcount_read(&held->ref), 2U);
	rsw_qp_put(held);
	KUNIT_EXPECT_NULL(test, rsw_qp_lookup(rsw, qp->qp_num + 1000000));
}

struct rsw_qt_destroyer {
	struct work_struct work;
	struct ib_qp *qp;
	struct completion done;
};

static void rsw_qt_destroy_work(struct work_struct *work)
{
	struct rsw_qt_destroyer *d = container_of(work, typeof(*d), work);

	ib_destroy_qp(d->qp);
	complete(&d->done);
}

/*
 * destroy_qp waits for a CM/TX holder: while it waits the QP refuses
 * posts, and it returns only after the holder's put.
 */
static void rsw_qt_destroy_waits_for_holder(struct kunit *test)
{
	struct ib_cq *cq = rsw_qt_cq(test, 16);
	struct ib_qp_init_attr attr = rsw_qt_attr(cq, cq);
	struct ib_send_wr wr = { .opcode = IB_WR_SEND };
	struct rsw_qt_destroyer d = {};
	unsigned long deadline;
	struct rsw_qp *held;

	d.qp = ib_create_qp(rsw_qt.pd, &attr);
	KUNIT_ASSERT_FALSE(test, IS_ERR(d.qp));
	held = rsw_qp_lookup(to_rsw_dev(rsw_qt.ibdev), d.qp->qp_num);
	KUNIT_ASSERT_PTR_EQ(test, held, to_rsw_qp(d.qp));
	init_completion(&d.done);
	INIT_WORK_ONSTACK(&d.work, rsw_qt_destroy_work);
	schedule_work(&d.work);

	/* The lookup reference keeps the QP: wait until it is marked dead. */
	deadline = jiffies + 10 * HZ;
	while (!READ_ONCE(held->dead) && time_before(jiffies, deadline))
		usleep_range(1000, 2000);
	KUNIT_EXPECT_TRUE(test, READ_ONCE(held->dead));
	KUNIT_EXPECT_EQ(test, ib_post_send(d.qp, &wr, NULL), -EINVAL);
	KUNIT_EXPECT_NULL(test, rsw_qp_lookup(to_rsw_dev(rsw_qt.ibdev),
					      d.qp->qp_num));
	KUNIT_EXPECT_FALSE(test, completion_done(&d.done));
	rsw_qp_put(held);
	KUNIT_EXPECT_TRUE(test, wait_for_completion_timeout(&d.done, 10 * HZ));
	flush_work(&d.work);
	destroy_work_on_stack(&d.work);
}

/* ------------------------------------------------- processing: local ops */

/* A fast-reg MR of @pd mapped over one page. */
static struct ib_mr *rsw_qt_frmr(struct kunit *test, struct ib_pd *pd)
{
	struct scatterlist sg;
	struct ib_mr *mr;
	void *buf;

	buf = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	mr = ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, 4);
	KUNIT_ASSERT_FALSE(test, IS_ERR(mr));
	KUNIT_ASSERT_EQ(test,
			kunit_add_action_or_reset(test, rsw_qt_dereg_mr, mr),
			0);
	sg_init_one(&sg, buf, PAGE_SIZE);
	KUNIT_ASSERT_EQ(test, ib_dma_map_sg(rsw_qt.ibdev, &sg, 1,
					    DMA_BIDIRECTIONAL), 1);
	KUNIT_ASSERT_EQ(test, ib_map_mr_sg(mr, &sg, 1, NULL, PAGE_SIZE), 1);
	return mr;
}

static void rsw_qt_post_reg(struct kunit *test, struct ib_qp *qp,
			    struct ib_mr *mr, u64 wr_id)
{
	struct ib_reg_wr wr = {
		.wr = { .wr_id = wr_id, .opcode = IB_WR_REG_MR,
			.send_flags = IB_SEND_SIGNALED },
		.mr = mr,
		.key = mr->rkey,
		.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ,
	};

	KUNIT_ASSERT_EQ(test, ib_post_send(qp, &wr.wr, NULL), 0);
}

static void rsw_qt_post_inv(struct kunit *test, struct ib_qp *qp, u32 stag,
			    u64 wr_id)
{
	struct ib_send_wr wr = {
		.wr_id = wr_id, .opcode = IB_WR_LOCAL_INV,
		.send_flags = IB_SEND_SIGNALED, .ex.invalidate_rkey = stag,
	};

	KUNIT_ASSERT_EQ(test, ib_post_send(qp, &wr, NULL), 0);
}

/* REG_MR then LOCAL_INV, executed by the processing hook. */
static void rsw_qt_process_reg_inv(struct kunit *test)
{
	struct ib_cq *cq = rsw_qt_cq(test, 64);
	struct ib_qp_init_attr attr = rsw_qt_attr(cq, cq);
	struct ib_qp *qp = rsw_qt_qp_attr(test, rsw_qt.pd, &attr);
	struct ib_mr *mr = rsw_qt_frmr(test, rsw_qt.pd);
	struct rsw_mr *rmr = to_rsw_mr(mr);
	struct rdmap_sw_sqe *sqe;
	u32 idx;

	sqe = kunit_kzalloc(test, sizeof(*sqe), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, sqe);
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	rsw_qt_post_reg(test, qp, mr, 1);
	rsw_qt_post_inv(test, qp, mr->rkey, 2);
	KUNIT_EXPECT_EQ(test, READ_ONCE(rmr->state), RSW_MR_INVALID);

	KUNIT_ASSERT_EQ(test, rsw_qp_sq_take(to_rsw_qp(qp), sqe, &idx),
			RSW_SQ_LOCAL);
	KUNIT_EXPECT_EQ(test, READ_ONCE(rmr->state), RSW_MR_VALID);
	KUNIT_EXPECT_EQ(test, READ_ONCE(rmr->stag), mr->rkey);
	rsw_qt_expect_wc(test, cq, 1, IB_WC_SUCCESS, IB_WC_REG_MR);

	KUNIT_ASSERT_EQ(test, rsw_qp_sq_take(to_rsw_qp(qp), sqe, &idx),
			RSW_SQ_LOCAL);
	KUNIT_EXPECT_EQ(test, READ_ONCE(rmr->state), RSW_MR_INVALID);
	rsw_qt_expect_wc(test, cq, 2, IB_WC_SUCCESS, IB_WC_LOCAL_INV);
	KUNIT_EXPECT_EQ(test, rsw_qp_sq_take(to_rsw_qp(qp), sqe, &idx),
			RSW_SQ_EMPTY);
	KUNIT_EXPECT_EQ(test, rsw_qt_state(test, qp), IB_QPS_INIT);
}

/*
 * REG_MR of an MR of another PD fails with LOC_PROT_ERR, moves the QP to
 * ERR and flushes what follows; the MR stays invalid.
 */
static void rsw_qt_process_reg_other_pd(struct kunit *test)
{
	struct ib_cq *cq = rsw_qt_cq(test, 64);
	struct ib_qp_init_attr attr = rsw_qt_attr(cq, cq);
	struct ib_qp *qp = rsw_qt_qp_attr(test, rsw_qt.pd, &attr);
	struct ib_mr *mr = rsw_qt_frmr(test, rsw_qt.pd2);
	struct rdmap_sw_sqe *sqe;
	u32 idx;

	sqe = kunit_kzalloc(test, sizeof(*sqe), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, sqe);
	rsw_qt_post_reg(test, qp, mr, 1);
	rsw_qt_post_inv(test, qp, mr->rkey, 2);
	KUNIT_ASSERT_EQ(test, rsw_qp_sq_take(to_rsw_qp(qp), sqe, &idx),
			RSW_SQ_LOCAL);
	KUNIT_EXPECT_EQ(test, READ_ONCE(to_rsw_mr(mr)->state), RSW_MR_INVALID);
	rsw_qt_expect_wc(test, cq, 1, IB_WC_LOC_PROT_ERR, IB_WC_REG_MR);
	rsw_qt_expect_wc(test, cq, 2, IB_WC_WR_FLUSH_ERR, IB_WC_LOCAL_INV);
	KUNIT_EXPECT_EQ(test, rsw_qt_state(test, qp), IB_QPS_ERR);
}

/*
 * Regression (issue 10, defect 9): an MR deregistered after its REG_MR was
 * posted and before it runs is neither registered nor touched: the request
 * completes with LOC_PROT_ERR and the QP goes to ERR.  The MR's memory is
 * freed before the take (kvfree_rcu_barrier()), so code that followed the
 * pointer posted in the work request trips KASAN here.
 */
static void rsw_qt_process_reg_deregistered(struct kunit *test)
{
	struct ib_cq *cq = rsw_qt_cq(test, 64);
	struct ib_qp_init_attr attr = rsw_qt_attr(cq, cq);
	struct ib_qp *qp = rsw_qt_qp_attr(test, rsw_qt.pd, &attr);
	struct ib_mr *mr = rsw_qt_frmr(test, rsw_qt.pd);
	u32 stag = mr->rkey;
	struct rdmap_sw_sqe *sqe;
	u32 idx;

	sqe = kunit_kzalloc(test, sizeof(*sqe), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, sqe);
	rsw_qt_post_reg(test, qp, mr, 1);
	kunit_release_action(test, rsw_qt_dereg_mr, mr);
	kvfree_rcu_barrier();
	KUNIT_ASSERT_EQ(test, rsw_qp_sq_take(to_rsw_qp(qp), sqe, &idx),
			RSW_SQ_LOCAL);
	rsw_qt_expect_wc(test, cq, 1, IB_WC_LOC_PROT_ERR, IB_WC_REG_MR);
	KUNIT_EXPECT_EQ(test, rsw_qt_state(test, qp), IB_QPS_ERR);
	KUNIT_EXPECT_NULL(test, rsw_mr_find_index(rsw_qt.rsw, stag));
}

/* A REG_MR whose key names another index than its MR's is refused. */
static void rsw_qt_post_reg_other_index(struct kunit *test)
{
	struct ib_qp *qp = rsw_qt_qp(test);
	struct ib_mr *mr = rsw_qt_frmr(test, rsw_qt.pd);
	struct ib_reg_wr wr = {
		.wr = { .wr_id = 1, .opcode = IB_WR_REG_MR },
		.mr = mr,
		.key = mr->rkey ^ (1U << RSW_STAG_KEY_BITS),
		.access = IB_ACCESS_LOCAL_WRITE,
	};

	KUNIT_EXPECT_EQ(test, ib_post_send(qp, &wr.wr, NULL), -EINVAL);
}

/*
 * A local operation finished while an earlier wire WQE is still with TX
 * completes after it: completions keep posting order.
 */
static void rsw_qt_process_order(struct kunit *test)
{
	struct ib_cq *cq = rsw_qt_cq(test, 64);
	struct ib_qp_init_attr attr = rsw_qt_attr(cq, cq);
	struct ib_qp *qp = rsw_qt_qp_attr(test, rsw_qt.pd, &attr);
	struct ib_mr *mr = rsw_qt_frmr(test, rsw_qt.pd);
	struct ib_rdma_wr wr = { .wr = { .wr_id = 1,
					 .opcode = IB_WR_RDMA_WRITE,
					 .send_flags = IB_SEND_SIGNALED } };
	struct rdmap_sw_sqe *sqe;
	struct ib_wc wc;
	u32 first, idx;

	sqe = kunit_kzalloc(test, sizeof(*sqe), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, sqe);
	KUNIT_ASSERT_EQ(test, ib_post_send(qp, &wr.wr, NULL), 0);
	rsw_qt_post_reg(test, qp, mr, 2);
	KUNIT_ASSERT_EQ(test, rsw_qp_sq_take(to_rsw_qp(qp), sqe, &first),
			RSW_SQ_WIRE);
	KUNIT_EXPECT_EQ(test, sqe->wr_id, 1ULL);
	KUNIT_EXPECT_EQ(test, sqe->opcode, RDMAP_SW_WR_RDMA_WRITE);
	KUNIT_ASSERT_EQ(test, rsw_qp_sq_take(to_rsw_qp(qp), sqe, &idx),
			RSW_SQ_LOCAL);
	KUNIT_EXPECT_FALSE(test, rsw_qt_poll(cq, &wc));
	rsw_qp_sq_complete(to_rsw_qp(qp), first, RDMAP_SW_WC_SUCCESS, 0);
	rsw_qt_expect_wc(test, cq, 1, IB_WC_SUCCESS, IB_WC_RDMA_WRITE);
	rsw_qt_expect_wc(test, cq, 2, IB_WC_SUCCESS, IB_WC_REG_MR);
}

/*
 * Completions the CQ has no room for are lost (IB_EVENT_CQ_ERR is cq.c's
 * part) and the QP goes to ERR, flushing the rest.
 */
static void rsw_qt_process_cq_overrun(struct kunit *test)
{
	struct ib_cq *cq = rsw_qt_cq(test, 4);
	struct ib_qp_init_attr attr = rsw_qt_attr(cq, cq);
	struct ib_qp *qp = rsw_qt_qp_attr(test, rsw_qt.pd, &attr);
	struct ib_mr *mr = rsw_qt_frmr(test, rsw_qt.pd);
	struct rdmap_sw_sqe *sqe;
	struct ib_wc wc;
	int i, n = cq->cqe;
	u32 idx;

	KUNIT_ASSERT_LE(test, n + 3, 16);
	sqe = kunit_kzalloc(test, sizeof(*sqe), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, sqe);
	/* Invalidating an invalid fast-reg MR succeeds every time. */
	for (i = 0; i < n + 3; i++)
		rsw_qt_post_inv(test, qp, mr->rkey, i);
	for (i = 0; i <= n; i++)
		KUNIT_ASSERT_EQ_MSG(test, rsw_qp_sq_take(to_rsw_qp(qp), sqe,
							 &idx),
				    RSW_SQ_LOCAL, "take %d", i);
	KUNIT_EXPECT_EQ(test, rsw_qt_state(test, qp), IB_QPS_ERR);
	KUNIT_EXPECT_EQ(test, rsw_qp_sq_take(to_rsw_qp(qp), sqe, &idx),
			RSW_SQ_EMPTY);
	for (i = 0; i < n; i++) {
		KUNIT_ASSERT_TRUE(test, rsw_qt_poll(cq, &wc));
		KUNIT_EXPECT_EQ(test, wc.wr_id, (u64)i);
		KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	}
	KUNIT_EXPECT_FALSE(test, rsw_qt_poll(cq, &wc));
}

/* ------------------------------------------------------- user-layout QPs */

/*
 * QPs with the rings of a user QP (rsw_qp_user_layout()): the case plays
 * the process, writing entries and ctrl.tail into the rings, and drives
 * the kernel's take/validate code as the stream would.
 */
static struct ib_qp *rsw_qt_uqp(struct kunit *test, struct ib_cq *scq,
				struct ib_cq *rcq)
{
	struct ib_qp_init_attr attr = rsw_qt_attr(scq, rcq);
	struct ib_qp *qp = rsw_qt_qp_attr(test, rsw_qt.pd, &attr);

	KUNIT_ASSERT_EQ(test, rsw_qp_user_layout(qp), 0);
	KUNIT_ASSERT_NOT_NULL(test, to_rsw_qp(qp)->sq.uctrl);
	KUNIT_ASSERT_NOT_NULL(test, to_rsw_qp(qp)->rq.uctrl);
	return qp;
}

static struct rdmap_sw_sqe *rsw_qt_usqe(struct ib_qp *qp, u32 n)
{
	struct rsw_wq *sq = &to_rsw_qp(qp)->sq;

	return (struct rdmap_sw_sqe *)sq->ring + (n & sq->mask);
}

static struct rdmap_sw_rqe *rsw_qt_urqe(struct ib_qp *qp, u32 n)
{
	struct rsw_wq *rq = &to_rsw_qp(qp)->rq;

	return (struct rdmap_sw_rqe *)rq->ring + (n & rq->mask);
}

/* A valid signaled Send of @len bytes from one SGE. */
static void rsw_qt_usend(struct rdmap_sw_sqe *e, u64 wr_id, u32 len)
{
	memset(e, 0, sizeof(*e));
	e->wr_id = wr_id;
	e->opcode = RDMAP_SW_WR_SEND;
	e->flags = RDMAP_SW_SQE_SIGNALED;
	e->num_sge = 1;
	e->length = len;
	e->sge[0].addr = 0x1000;
	e->sge[0].length = len;
	e->sge[0].lkey = 0x100;
}

/* The process's store of ctrl.tail (release, as the ABI asks). */
static void rsw_qt_utail(struct rsw_wq *wq, u32 tail)
{
	/* Pairs with the kernel's acquire of tail (rsw_wq_user_tail()). */
	smp_store_release(&wq->uctrl->tail, tail);
}

/*
 * Move @q's state under its locks, as the state machine does, without
 * the stream RTS needs (the case plays the stream).
 */
static void rsw_qt_force_state(struct rsw_qp *q, enum rsw_qp_state st)
{
	unsigned long flags;

	spin_lock_irqsave(&q->lock, flags);
	spin_lock(&q->sq.lock);
	spin_lock(&q->rq.lock);
	q->state = st;
	spin_unlock(&q->rq.lock);
	spin_unlock(&q->sq.lock);
	spin_unlock_irqrestore(&q->lock, flags);
}

/*
 * Linger on @qp (in RTS), then the process posts entry @n and TX sends it
 * and finds the SQ empty: busy must stay 1.
 */
static void rsw_qt_linger_one(struct kunit *test, struct ib_qp *qp,
			      struct rdmap_sw_sqe *sqe, u32 n)
{
	struct rsw_qp *q = to_rsw_qp(qp);
	u32 idx;

	KUNIT_EXPECT_TRUE(test, rsw_qp_sq_linger_on(q));
	rsw_qt_usend(rsw_qt_usqe(qp, n), n + 1, 8);
	rsw_qt_utail(&q->sq, n + 1);
	KUNIT_EXPECT_EQ(test, rsw_qp_sq_pending(q), 1U);
	KUNIT_ASSERT_EQ(test, rsw_qp_sq_take(q, sqe, &idx), RSW_SQ_WIRE);
	rsw_qp_sq_complete(q, idx, RDMAP_SW_WC_SUCCESS, 8);
	KUNIT_EXPECT_EQ(test, rsw_qp_sq_take(q, sqe, &idx), RSW_SQ_EMPTY);
	KUNIT_EXPECT_EQ(test, READ_ONCE(q->sq.uctrl->busy), 1U);
	KUNIT_EXPECT_EQ(test, rsw_qp_sq_pending(q), 0U);
}

/*
 * The doorbell linger: busy stays 1 at empty while it is on, and ending
 * it runs the ABI's protocol, catching what the process posted meanwhile.
 */
static void rsw_qt_user_linger(struct kunit *test)
{
	struct ib_cq *scq = rsw_qt_cq(test, 16), *rcq = rsw_qt_cq(test, 16);
	struct ib_qp *qp = rsw_qt_uqp(test, scq, rcq);
	struct rsw_qp *q = to_rsw_qp(qp);
	struct rdmap_sw_sqe *sqe;
	u32 idx;

	sqe = kunit_kzalloc(test, sizeof(*sqe), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, sqe);
	/* Only in RTS (a stream attached). */
	KUNIT_EXPECT_FALSE(test, rsw_qp_sq_linger_on(q));
	rsw_qt_force_state(q, RSW_QPS_RTS);
	rsw_qt_linger_one(test, qp, sqe, 0);

	/* The process posts, sees busy 1 and rings nothing. */
	rsw_qt_usend(rsw_qt_usqe(qp, 1), 2, 8);
	rsw_qt_utail(&q->sq, 2);
	/*
	 * Ending the linger finds the entry: the caller has TX take it, and
	 * busy stays 1 until that take finds the SQ empty.
	 */
	KUNIT_EXPECT_TRUE(test, rsw_qp_sq_linger_off(q));
	KUNIT_EXPECT_EQ(test, READ_ONCE(q->sq.uctrl->busy), 1U);
	KUNIT_ASSERT_EQ(test, rsw_qp_sq_take(q, sqe, &idx), RSW_SQ_WIRE);
	rsw_qp_sq_complete(q, idx, RDMAP_SW_WC_SUCCESS, 8);
	/* Not lingering: empty drops busy, and off again is a no-op. */
	KUNIT_EXPECT_EQ(test, rsw_qp_sq_take(q, sqe, &idx), RSW_SQ_EMPTY);
	KUNIT_EXPECT_EQ(test, READ_ONCE(q->sq.uctrl->busy), 0U);
	KUNIT_EXPECT_FALSE(test, rsw_qp_sq_linger_off(q));

	/* Quiet: ending a linger that held busy at 1 drops it, finds none. */
	rsw_qt_linger_one(test, qp, sqe, 2);
	KUNIT_EXPECT_FALSE(test, rsw_qp_sq_linger_off(q));
	KUNIT_EXPECT_EQ(test, READ_ONCE(q->sq.uctrl->busy), 0U);

	/* ERROR ends a linger that held the flag at 1, with the flag at 0. */
	rsw_qt_linger_one(test, qp, sqe, 3);
	KUNIT_ASSERT_EQ(test, rsw_qt_modify(qp, IB_QPS_ERR), 0);
	KUNIT_EXPECT_FALSE(test, q->sq.keep_busy);
	KUNIT_EXPECT_EQ(test, READ_ONCE(q->sq.uctrl->busy), 0U);
}

/*
 * A user QP in RTS (on send CQ *@scq) whose process posted two signaled
 * Sends, wr_id 1 and 2; *@sqe: room for a take's copy.
 */
static struct ib_qp *rsw_qt_uqp_two(struct kunit *test, struct ib_cq **scq,
				    struct rdmap_sw_sqe **sqe)
{
	struct ib_qp *qp;

	*scq = rsw_qt_cq(test, 16);
	qp = rsw_qt_uqp(test, *scq, rsw_qt_cq(test, 16));
	*sqe = kunit_kzalloc(test, sizeof(**sqe), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, *sqe);
	rsw_qt_force_state(to_rsw_qp(qp), RSW_QPS_RTS);
	rsw_qt_usend(rsw_qt_usqe(qp, 0), 1, 8);
	rsw_qt_usend(rsw_qt_usqe(qp, 1), 2, 8);
	rsw_qt_utail(&to_rsw_qp(qp)->sq, 2);
	return qp;
}

/*
 * An orderly close on a user SQ: what the process posted before modify_qp
 * to SQD is taken and sent; what it writes into the ring afterwards is
 * never taken (a process that keeps posting cannot extend the close) and
 * is flushed when the QP goes to ERROR.  Before, the take read the
 * process's tail in CLOSING too.
 */
static void rsw_qt_user_close(struct kunit *test)
{
	struct rdmap_sw_sqe *sqe;
	struct ib_cq *scq;
	struct ib_qp *qp = rsw_qt_uqp_two(test, &scq, &sqe);
	struct rsw_qp *q = to_rsw_qp(qp);
	struct ib_wc wc;
	u32 idx, i;

	KUNIT_ASSERT_EQ(test, rsw_qt_modify(qp, IB_QPS_SQD), 0);
	rsw_qt_usend(rsw_qt_usqe(qp, 2), 3, 8);
	rsw_qt_utail(&q->sq, 3);
	KUNIT_EXPECT_FALSE(test, rsw_qp_sq_taken_all(q));
	for (i = 0; i < 2; i++) {
		KUNIT_ASSERT_EQ(test, rsw_qp_sq_take(q, sqe, &idx), RSW_SQ_WIRE);
		KUNIT_EXPECT_EQ(test, sqe->wr_id, (u64)i + 1);
		rsw_qp_sq_complete(q, idx, RDMAP_SW_WC_SUCCESS, 8);
	}
	KUNIT_EXPECT_EQ_MSG(test, rsw_qp_sq_take(q, sqe, &idx), RSW_SQ_EMPTY,
			    "an entry posted after the close was taken");
	KUNIT_EXPECT_TRUE(test, rsw_qp_sq_taken_all(q));
	KUNIT_ASSERT_EQ(test, rsw_qt_modify(qp, IB_QPS_ERR), 0);
	for (i = 0; i < 3; i++) {
		KUNIT_ASSERT_TRUE(test, rsw_qt_poll(scq, &wc));
		KUNIT_EXPECT_EQ(test, wc.wr_id, (u64)i + 1);
		KUNIT_EXPECT_EQ(test, wc.status,
				i < 2 ? IB_WC_SUCCESS : IB_WC_WR_FLUSH_ERR);
	}
	KUNIT_EXPECT_FALSE(test, rsw_qt_poll(scq, &wc));
}

/*
 * A bad tail at the move to SQD (review H1 item 1): the entries accepted
 * before it are still taken, then the take fails and the QP goes to ERROR
 * (the stream's end abortive), as it did when the take read the tail in
 * CLOSING.  Before, the bad tail was dropped at SQD and nothing read the
 * tail again: the close ended in order.
 */
static void rsw_qt_user_close_bad_tail(struct kunit *test)
{
	struct rdmap_sw_sqe *sqe;
	struct ib_cq *scq;
	struct ib_qp *qp = rsw_qt_uqp_two(test, &scq, &sqe);
	struct rsw_qp *q = to_rsw_qp(qp);
	struct ib_wc wc;
	u32 idx[3], i;

	KUNIT_ASSERT_EQ(test, rsw_qp_sq_take(q, sqe, &idx[0]), RSW_SQ_WIRE);
	/* Far beyond the ring: bad. */
	rsw_qt_utail(&q->sq, 0x80000000);
	KUNIT_ASSERT_EQ(test, rsw_qt_modify(qp, IB_QPS_SQD), 0);
	KUNIT_ASSERT_EQ(test, rsw_qp_sq_take(q, sqe, &idx[1]), RSW_SQ_WIRE);
	KUNIT_EXPECT_EQ(test, sqe->wr_id, 2ULL);
	KUNIT_EXPECT_EQ(test, rsw_qt_state(test, qp), IB_QPS_SQD);
	KUNIT_EXPECT_EQ(test, rsw_qp_sq_take(q, sqe, &idx[2]), RSW_SQ_EMPTY);
	KUNIT_EXPECT_EQ_MSG(test, rsw_qt_state(test, qp), IB_QPS_ERR,
			    "a bad tail at SQD did not fail the QP");
	for (i = 0; i < 2; i++)
		rsw_qp_sq_complete(q, idx[i], RDMAP_SW_WC_SUCCESS, 8);
	for (i = 0; i < 2; i++) {
		KUNIT_ASSERT_TRUE(test, rsw_qt_poll(scq, &wc));
		KUNIT_EXPECT_EQ(test, wc.wr_id, (u64)i + 1);
		KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	}
	KUNIT_EXPECT_FALSE(test, rsw_qt_poll(scq, &wc));
}

struct rsw_qt_usqe_case {
	const char *name;
	void (*mangle)(struct rdmap_sw_sqe *e);
	enum ib_wc_status status;
};

static void rsw_qt_m_op_range(struct rdmap_sw_sqe *e)
{
	e->opcode = RDMAP_SW_WR_BIND_MW + 1;
}

static void rsw_qt_m_atomic_sges(struct rdmap_sw_sqe *e)
{
	e->opcode = RDMAP_SW_WR_ATOMIC_FETCH_AND_ADD;
	e->num_sge = 2;
	e->sge[0].length = 4;
	e->sge[1] = e->sge[0];
	e->length = 8;
}

static void rsw_qt_m_atomic_short(struct rdmap_sw_sqe *e)
{
	e->opcode = RDMAP_SW_WR_ATOMIC_CMP_AND_SWP;
	e->num_sge = 1;
	e->sge[0].length = 4;
	e->length = 4;
}

static void rsw_qt_m_op_ff(struct rdmap_sw_sqe *e)
{
	e->opcode = 0xff;
}

static void rsw_qt_m_reg_mr(struct rdmap_sw_sqe *e)
{
	e->opcode = RDMAP_SW_WR_REG_MR;
	e->num_sge = 0;
	e->length = 0;
	e->mr = 0xdead0000;	/* never dereferenced */
}

/* A user QP may post LOCAL_INV and BIND_MW, but they carry no data. */
static void rsw_qt_m_local_inv(struct rdmap_sw_sqe *e)
{
	e->opcode = RDMAP_SW_WR_LOCAL_INV;
	e->num_sge = 1;
	e->length = 100;
	e->inv_stag = 0x100;
}

static void rsw_qt_m_bind_len(struct rdmap_sw_sqe *e)
{
	e->opcode = RDMAP_SW_WR_BIND_MW;
	e->num_sge = 0;
	e->length = 100;
}

static void rsw_qt_m_flag(struct rdmap_sw_sqe *e)
{
	e->flags |= 1 << 4;
}

static void rsw_qt_m_inline_read(struct rdmap_sw_sqe *e)
{
	e->opcode = RDMAP_SW_WR_RDMA_READ;
	e->flags |= RDMAP_SW_SQE_INLINE;
	e->num_sge = 0;
	e->length = 8;
}

static void rsw_qt_m_inline_sges(struct rdmap_sw_sqe *e)
{
	e->flags |= RDMAP_SW_SQE_INLINE;
	e->length = 8;		/* num_sge stays 1 */
}

static void rsw_qt_m_inline_long(struct rdmap_sw_sqe *e)
{
	e->flags |= RDMAP_SW_SQE_INLINE;
	e->num_sge = 0;
	e->length = 65;		/* max_inline is 64 */
}

static void rsw_qt_m_inline_huge(struct rdmap_sw_sqe *e)
{
	e->flags |= RDMAP_SW_SQE_INLINE;
	e->num_sge = 0;
	e->length = 0xffffffff;
}

static void rsw_qt_m_sges(struct rdmap_sw_sqe *e)
{
	e->num_sge = 3;		/* max_send_sge is 2 */
	e->sge[1].length = 0;
	e->sge[2].length = 0;
}

static void rsw_qt_m_sges_abi(struct rdmap_sw_sqe *e)
{
	e->num_sge = RDMAP_SW_MAX_SGE + 1;
}

static void rsw_qt_m_sges_ff(struct rdmap_sw_sqe *e)
{
	e->num_sge = 0xff;
}

static void rsw_qt_m_read_sges(struct rdmap_sw_sqe *e)
{
	e->opcode = RDMAP_SW_WR_RDMA_READ;
	e->num_sge = 2;		/* a Read has one sink SGE */
	e->sge[1] = e->sge[0];
	e->length *= 2;
}

static void rsw_qt_m_len_short(struct rdmap_sw_sqe *e)
{
	e->length--;
}

static void rsw_qt_m_len_long(struct rdmap_sw_sqe *e)
{
	e->length++;
}

static void rsw_qt_m_len_wrap(struct rdmap_sw_sqe *e)
{
	/* 2^31 + 2^31 is 0 in 32 bits: only a 64-bit sum sees it. */
	e->num_sge = 2;
	e->sge[0].length = 0x80000000;
	e->sge[1] = e->sge[0];
	e->length = 0;
}

static void rsw_qt_m_len_max(struct rdmap_sw_sqe *e)
{
	e->num_sge = 2;
	e->sge[0].length = RSW_MAX_MSG_SIZE;
	e->sge[1].length = 1;
	e->sge[1].lkey = 0x100;
	e->length = RSW_MAX_MSG_SIZE + 1;
}

static const struct rsw_qt_usqe_case rsw_qt_usqe_cases[] = {
	{ "opcode past the table", rsw_qt_m_op_range, IB_WC_LOC_QP_OP_ERR },
	{ "atomic with two SGEs", rsw_qt_m_atomic_sges, IB_WC_LOC_QP_OP_ERR },
	{ "atomic of 4 bytes", rsw_qt_m_atomic_short, IB_WC_LOC_LEN_ERR },
	{ "opcode 0xff", rsw_qt_m_op_ff, IB_WC_LOC_QP_OP_ERR },
	{ "REG_MR", rsw_qt_m_reg_mr, IB_WC_LOC_QP_OP_ERR },
	{ "LOCAL_INV with an SGE", rsw_qt_m_local_inv, IB_WC_LOC_QP_OP_ERR },
	{ "BIND_MW with a length", rsw_qt_m_bind_len, IB_WC_LOC_LEN_ERR },
	{ "unknown flag", rsw_qt_m_flag, IB_WC_LOC_QP_OP_ERR },
	{ "inline Read", rsw_qt_m_inline_read, IB_WC_LOC_QP_OP_ERR },
	{ "inline with SGEs", rsw_qt_m_inline_sges, IB_WC_LOC_QP_OP_ERR },
	{ "inline over max_inline", rsw_qt_m_inline_long, IB_WC_LOC_LEN_ERR },
	{ "inline 4 GiB", rsw_qt_m_inline_huge, IB_WC_LOC_LEN_ERR },
	{ "num_sge over max_sge", rsw_qt_m_sges, IB_WC_LOC_QP_OP_ERR },
	{ "num_sge over the ABI's", rsw_qt_m_sges_abi, IB_WC_LOC_QP_OP_ERR },
	{ "num_sge 0xff", rsw_qt_m_sges_ff, IB_WC_LOC_QP_OP_ERR },
	{ "Read with two SGEs", rsw_qt_m_read_sges, IB_WC_LOC_QP_OP_ERR },
	{ "length below the SGE sum", rsw_qt_m_len_short, IB_WC_LOC_LEN_ERR },
	{ "length above the SGE sum", rsw_qt_m_len_long, IB_WC_LOC_LEN_ERR },
	{ "SGE sum wraps 32 bits", rsw_qt_m_len_wrap, IB_WC_LOC_LEN_ERR },
	{ "SGE sum over the maximum", rsw_qt_m_len_max, IB_WC_LOC_LEN_ERR },
};

KUNIT_ARRAY_PARAM_DESC(rsw_qt_usqe, rsw_qt_usqe_cases, name);

/*
 * A user SQ holds a good Send, a bad entry and another good Send, and a
 * second user QP one good Send.  The first is taken, the bad one is
 * refused: the QP goes to ERROR, the third is flushed, and the CQ shows
 * all three in order once the first completes.  The other QP is untouched.
 */
static void rsw_qt_user_sqe_bad(struct kunit *test)
{
	const struct rsw_qt_usqe_case *c = test->param_value;
	struct ib_cq *scq = rsw_qt_cq(test, 16), *rcq = rsw_qt_cq(test, 16);
	struct ib_cq *oscq = rsw_qt_cq(test, 16), *orcq = rsw_qt_cq(test, 16);
	struct ib_qp *qp = rsw_qt_uqp(test, scq, rcq);
	struct ib_qp *other = rsw_qt_uqp(test, oscq, orcq);
	struct rsw_qp *q = to_rsw_qp(qp), *o = to_rsw_qp(other);
	struct rdmap_sw_sqe *sqe;
	struct ib_wc wc;
	u32 idx, oidx;

	sqe = kunit_kzalloc(test, sizeof(*sqe), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, sqe);
	rsw_qt_usend(rsw_qt_usqe(qp, 0), 1, 100);
	rsw_qt_usend(rsw_qt_usqe(qp, 1), 2, 100);
	c->mangle(rsw_qt_usqe(qp, 1));
	rsw_qt_usend(rsw_qt_usqe(qp, 2), 3, 100);
	rsw_qt_utail(&q->sq, 3);
	rsw_qt_usend(rsw_qt_usqe(other, 0), 7, 10);
	rsw_qt_utail(&o->sq, 1);

	KUNIT_ASSERT_EQ(test, rsw_qp_sq_take(q, sqe, &idx), RSW_SQ_WIRE);
	KUNIT_EXPECT_EQ(test, sqe->wr_id, 1ULL);
	KUNIT_EXPECT_EQ(test, READ_ONCE(q->sq.uctrl->busy), 1U);
	KUNIT_EXPECT_EQ(test, rsw_qp_sq_take(q, sqe, &oidx), RSW_SQ_EMPTY);
	KUNIT_EXPECT_EQ(test, rsw_qt_state(test, qp), IB_QPS_ERR);
	/* In ERROR nothing drains the SQ: the process must ring. */
	KUNIT_EXPECT_EQ(test, READ_ONCE(q->sq.uctrl->busy), 0U);
	KUNIT_EXPECT_EQ(test, rsw_qp_sq_take(q, sqe, &oidx), RSW_SQ_EMPTY);
	/* Completions wait for the taken first entry. */
	KUNIT_EXPECT_FALSE(test, rsw_qt_poll(scq, &wc));
	KUNIT_EXPECT_EQ(test, READ_ONCE(q->sq.uctrl->head), 0U);

	rsw_qp_sq_complete(q, idx, RDMAP_SW_WC_SUCCESS, 100);
	KUNIT_ASSERT_TRUE(test, rsw_qt_poll(scq, &wc));
	KUNIT_EXPECT_EQ(test, wc.wr_id, 1ULL);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_ASSERT_TRUE(test, rsw_qt_poll(scq, &wc));
	KUNIT_EXPECT_EQ(test, wc.wr_id, 2ULL);
	KUNIT_EXPECT_EQ(test, wc.status, c->status);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 0U);
	KUNIT_ASSERT_TRUE(test, rsw_qt_poll(scq, &wc));
	KUNIT_EXPECT_EQ(test, wc.wr_id, 3ULL);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_WR_FLUSH_ERR);
	KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_SEND);
	KUNIT_EXPECT_FALSE(test, rsw_qt_poll(scq, &wc));
	KUNIT_EXPECT_FALSE(test, rsw_qt_poll(rcq, &wc));
	KUNIT_EXPECT_EQ(test, READ_ONCE(q->sq.uctrl->head), 3U);

	/* The other QP is as it was. */
	KUNIT_EXPECT_EQ(test, rsw_qt_state(test, other), IB_QPS_INIT);
	KUNIT_EXPECT_FALSE(test, rsw_qt_poll(oscq, &wc));
	KUNIT_ASSERT_EQ(test, rsw_qp_sq_take(o, sqe, &oidx), RSW_SQ_WIRE);
	KUNIT_EXPECT_EQ(test, sqe->wr_id, 7ULL);
	KUNIT_EXPECT_EQ(test, sqe->length, 10U);
	rsw_qp_sq_complete(o, oidx, RDMAP_SW_WC_SUCCESS, 10);
	KUNIT_ASSERT_TRUE(test, rsw_qt_poll(oscq, &wc));
	KUNIT_EXPECT_EQ(test, wc.wr_id, 7ULL);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_PTR_EQ(test, wc.qp, other);
	KUNIT_EXPECT_EQ(test, rsw_qt_state(test, other), IB_QPS_INIT);
}

struct rsw_qt_urqe_case {
	const char *name;
	u8 num_sge;
	u32 len0;
	u32 length;
	enum ib_wc_status status;
};

static const struct rsw_qt_urqe_case rsw_qt_urqe_cases[] = {
	{ "num_sge over max_sge", 3, 10, 10, IB_WC_LOC_QP_OP_ERR },
	{ "num_sge 0xff", 0xff, 10, 10, IB_WC_LOC_QP_OP_ERR },
	{ "length below the SGE sum", 1, 10, 9, IB_WC_LOC_LEN_ERR },
	{ "length above the SGE sum", 1, 10, 11, IB_WC_LOC_LEN_ERR },
	{ "SGE sum over the maximum", 1, RSW_MAX_MSG_SIZE + 1,
	  RSW_MAX_MSG_SIZE + 1, IB_WC_LOC_LEN_ERR },
};

KUNIT_ARRAY_PARAM_DESC(rsw_qt_urqe, rsw_qt_urqe_cases, name);

/* A bad receive entry is refused at take time the same way. */
static void rsw_qt_user_rqe_bad(struct kunit *test)
{
	const struct rsw_qt_urqe_case *c = test->param_value;
	struct ib_cq *scq = rsw_qt_cq(test, 16), *rcq = rsw_qt_cq(test, 16);
	struct ib_qp *qp = rsw_qt_uqp(test, scq, rcq);
	struct rsw_qp *q = to_rsw_qp(qp);
	struct rdmap_sw_rqe *rqe, *e;
	struct ib_wc wc;
	u32 idx;

	rqe = kunit_kzalloc(test, sizeof(*rqe), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, rqe);
	e = rsw_qt_urqe(qp, 0);
	e->wr_id = 40;
	e->num_sge = 1;
	e->length = 10;
	e->sge[0].length = 10;
	e->sge[0].lkey = 0x100;
	e = rsw_qt_urqe(qp, 1);
	e->wr_id = 41;
	e->num_sge = c->num_sge;
	e->length = c->length;
	e->sge[0].length = c->len0;
	e->sge[0].lkey = 0x100;
	rsw_qt_utail(&q->rq, 2);

	KUNIT_ASSERT_TRUE(test, rsw_qp_rq_take(q, rqe, &idx));
	KUNIT_EXPECT_EQ(test, rqe->wr_id, 40ULL);
	KUNIT_EXPECT_EQ(test, rqe->length, 10U);
	KUNIT_EXPECT_FALSE(test, rsw_qp_rq_take(q, rqe, &idx));
	KUNIT_EXPECT_EQ(test, rsw_qt_state(test, qp), IB_QPS_ERR);
	KUNIT_EXPECT_FALSE(test, rsw_qt_poll(rcq, &wc));
	rsw_qp_rq_complete(q, idx, &(struct rsw_rq_result) {
			   .status = RDMAP_SW_WC_WR_FLUSH_ERR });
	KUNIT_ASSERT_TRUE(test, rsw_qt_poll(rcq, &wc));
	KUNIT_EXPECT_EQ(test, wc.wr_id, 40ULL);
	KUNIT_ASSERT_TRUE(test, rsw_qt_poll(rcq, &wc));
	KUNIT_EXPECT_EQ(test, wc.wr_id, 41ULL);
	KUNIT_EXPECT_EQ(test, wc.status, c->status);
	KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_RECV);
	KUNIT_EXPECT_FALSE(test, rsw_qt_poll(rcq, &wc));
	KUNIT_EXPECT_FALSE(test, rsw_qt_poll(scq, &wc));
	KUNIT_EXPECT_EQ(test, READ_ONCE(q->rq.uctrl->head), 2U);
}

/*
 * A user QP's rings are mapped through its process's context: udata with
 * no context behind it (no process) is refused before anything is
 * allocated.  The mapped path itself runs in scripts/tests/verbs.sh.
 */
static void rsw_qt_user_no_context(struct kunit *test)
{
	struct ib_cq *cq = rsw_qt_cq(test, 16);
	struct ib_qp_init_attr attr = rsw_qt_attr(cq, cq);
	struct ib_device *ibdev = rsw_qt.ibdev;
	struct uverbs_attr_bundle *bundle;
	struct ib_qp *ibqp;

	bundle = kunit_kzalloc(test, sizeof(*bundle), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, bundle);
	ibqp = rdma_zalloc_drv_obj(ibdev, ib_qp);
	KUNIT_ASSERT_NOT_NULL(test, ibqp);
	ibqp->device = ibdev;
	ibqp->pd = rsw_qt.pd;
	KUNIT_EXPECT_EQ(test, ibdev->ops.create_qp(ibqp, &attr,
						   &bundle->driver_udata),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, ibqp->qp_num, 0U);
	kfree(ibqp);
}

/*
 * ctrl.tail: exactly size entries ahead of head is a full ring and fine;
 * one more, or a tail moved back behind entries already seen, moves the
 * QP to ERROR and nothing is taken or completed from the bad range.
 */
static void rsw_qt_user_tail_bound(struct kunit *test)
{
	struct ib_cq *scq = rsw_qt_cq(test, 64), *rcq = rsw_qt_cq(test, 64);
	struct ib_qp *qp = rsw_qt_uqp(test, scq, rcq);
	struct ib_qp *qp2 = rsw_qt_uqp(test, scq, rcq);
	struct ib_qp *qp3 = rsw_qt_uqp(test, scq, rcq);
	struct rsw_qp *q = to_rsw_qp(qp), *q2 = to_rsw_qp(qp2);
	struct rsw_qp *q3 = to_rsw_qp(qp3);
	u32 size = q->sq.size, i, idx;
	struct rdmap_sw_sqe *sqe;
	struct ib_wc wc;

	sqe = kunit_kzalloc(test, sizeof(*sqe), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, sqe);
	/* A full ring is taken whole. */
	for (i = 0; i < size; i++)
		rsw_qt_usend(rsw_qt_usqe(qp, i), i, 8);
	rsw_qt_utail(&q->sq, size);
	for (i = 0; i < size; i++) {
		KUNIT_ASSERT_EQ(test, rsw_qp_sq_take(q, sqe, &idx),
				RSW_SQ_WIRE);
		KUNIT_EXPECT_EQ(test, sqe->wr_id, (u64)i);
	}
	KUNIT_EXPECT_EQ(test, rsw_qp_sq_take(q, sqe, &idx), RSW_SQ_EMPTY);
	KUNIT_EXPECT_EQ(test, rsw_qt_state(test, qp), IB_QPS_INIT);
	/* Retire one: one more slot is free, two are not. */
	rsw_qp_sq_complete(q, 0, RDMAP_SW_WC_SUCCESS, 8);
	KUNIT_EXPECT_EQ(test, READ_ONCE(q->sq.uctrl->head), 1U);
	rsw_qt_usend(rsw_qt_usqe(qp, size), 99, 8);
	rsw_qt_usend(rsw_qt_usqe(qp, size + 1), 100, 8);
	rsw_qt_utail(&q->sq, size + 2);
	KUNIT_EXPECT_EQ(test, rsw_qp_sq_take(q, sqe, &idx), RSW_SQ_EMPTY);
	KUNIT_EXPECT_EQ(test, rsw_qt_state(test, qp), IB_QPS_ERR);
	/* The taken ones complete; nothing behind the bad tail does. */
	for (i = 1; i < size; i++)
		rsw_qp_sq_complete(q, i, RDMAP_SW_WC_SUCCESS, 8);
	for (i = 0; i < size; i++) {
		KUNIT_ASSERT_TRUE(test, rsw_qt_poll(scq, &wc));
		KUNIT_EXPECT_EQ(test, wc.wr_id, (u64)i);
		KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	}
	KUNIT_EXPECT_FALSE(test, rsw_qt_poll(scq, &wc));
	KUNIT_EXPECT_EQ(test, READ_ONCE(q->sq.uctrl->head), size);

	/* A tail moved back behind what was seen. */
	rsw_qt_usend(rsw_qt_usqe(qp2, 0), 1, 8);
	rsw_qt_usend(rsw_qt_usqe(qp2, 1), 2, 8);
	rsw_qt_utail(&q2->sq, 2);
	KUNIT_ASSERT_EQ(test, rsw_qp_sq_take(q2, sqe, &idx), RSW_SQ_WIRE);
	KUNIT_ASSERT_EQ(test, rsw_qp_sq_take(q2, sqe, &idx), RSW_SQ_WIRE);
	rsw_qt_utail(&q2->sq, 1);
	KUNIT_EXPECT_EQ(test, rsw_qp_sq_take(q2, sqe, &idx), RSW_SQ_EMPTY);
	KUNIT_EXPECT_EQ(test, rsw_qt_state(test, qp2), IB_QPS_ERR);
	rsw_qp_sq_complete(q2, 0, RDMAP_SW_WC_SUCCESS, 8);
	rsw_qp_sq_complete(q2, 1, RDMAP_SW_WC_SUCCESS, 8);
	KUNIT_EXPECT_TRUE(test, rsw_qt_poll(scq, &wc));
	KUNIT_EXPECT_TRUE(test, rsw_qt_poll(scq, &wc));
	KUNIT_EXPECT_FALSE(test, rsw_qt_poll(scq, &wc));

	/* A tail far ahead on an RQ: nothing taken, nothing completed. */
	rsw_qt_utail(&q3->rq, 0x80000000);
	KUNIT_EXPECT_FALSE(test, rsw_qp_rq_take(q3, (void *)sqe, &idx));
	KUNIT_EXPECT_EQ(test, rsw_qt_state(test, qp3), IB_QPS_ERR);
	KUNIT_EXPECT_FALSE(test, rsw_qt_poll(rcq, &wc));
	KUNIT_EXPECT_FALSE(test, rsw_qt_poll(scq, &wc));
}

/*
 * Valid user entries: the copy is what the process wrote, the shadow
 * gives the completion its wr_id and opcode, unsignaled ones complete
 * silently but free their slots, and the doorbell flag follows the ABI.
 */
static void rsw_qt_user_good(struct kunit *test)
{
	struct ib_cq *scq = rsw_qt_cq(test, 16), *rcq = rsw_qt_cq(test, 16);
	struct ib_qp *qp = rsw_qt_uqp(test, scq, rcq);
	struct rsw_qp *q = to_rsw_qp(qp);
	struct ib_send_wr wr = { .opcode = IB_WR_SEND };
	struct ib_recv_wr rwr = {};
	struct rdmap_sw_sqe *sqe, *e;
	struct ib_wc wc;
	u32 idx;

	sqe = kunit_kzalloc(test, sizeof(*sqe), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, sqe);
	KUNIT_EXPECT_EQ(test, READ_ONCE(q->sq.uctrl->busy), 0U);
	/* Work requests are the process's to write: the verbs refuse them. */
	KUNIT_EXPECT_EQ(test, ib_post_send(qp, &wr, NULL), -EINVAL);
	KUNIT_EXPECT_EQ(test, ib_post_recv(qp, &rwr, NULL), -EINVAL);

	e = rsw_qt_usqe(qp, 0);
	memset(e, 0, sizeof(*e));
	e->wr_id = 10;
	e->opcode = RDMAP_SW_WR_RDMA_WRITE;
	e->flags = RDMAP_SW_SQE_INLINE | RDMAP_SW_SQE_FENCE;
	e->length = 64;
	memset(e->inline_data, 0xab, 64);
	e->rstag = 0x1234;
	e->raddr = 0x5000;
	rsw_qt_usend(rsw_qt_usqe(qp, 1), 11, 30);
	rsw_qt_usqe(qp, 1)->flags = RDMAP_SW_SQE_SOLICITED;
	rsw_qt_utail(&q->sq, 2);
	/* The doorbell on an idle QP: nothing to kick, no error. */
	KUNIT_EXPECT_EQ(test, ib_post_send(qp, NULL, NULL), 0);

	KUNIT_ASSERT_EQ(test, rsw_qp_sq_take(q, sqe, &idx), RSW_SQ_WIRE);
	KUNIT_EXPECT_EQ(test, READ_ONCE(q->sq.uctrl->busy), 1U);
	/* The process rewriting the ring now does not change the copy. */
	e->length = 0;
	KUNIT_EXPECT_EQ(test, sqe->length, 64U);
	KUNIT_EXPECT_EQ(test, sqe->inline_data[63], 0xab);
	KUNIT_EXPECT_EQ(test, sqe->raddr, 0x5000ULL);
	rsw_qp_sq_complete(q, idx, RDMAP_SW_WC_SUCCESS, 64);
	KUNIT_ASSERT_EQ(test, rsw_qp_sq_take(q, sqe, &idx), RSW_SQ_WIRE);
	KUNIT_EXPECT_EQ(test, sqe->wr_id, 11ULL);
	rsw_qp_sq_complete(q, idx, RDMAP_SW_WC_SUCCESS, 30);
	KUNIT_EXPECT_EQ(test, READ_ONCE(q->sq.uctrl->head), 2U);
	/* Found empty: busy drops. */
	KUNIT_EXPECT_EQ(test, rsw_qp_sq_take(q, sqe, &idx), RSW_SQ_EMPTY);
	KUNIT_EXPECT_EQ(test, READ_ONCE(q->sq.uctrl->busy), 0U);
	/* Neither was signaled: no completion, but their slots are free. */
	KUNIT_EXPECT_FALSE(test, rsw_qt_poll(scq, &wc));

	rsw_qt_usend(rsw_qt_usqe(qp, 2), 12, 5);
	rsw_qt_utail(&q->sq, 3);
	KUNIT_ASSERT_EQ(test, rsw_qp_sq_take(q, sqe, &idx), RSW_SQ_WIRE);
	rsw_qp_sq_complete(q, idx, RDMAP_SW_WC_SUCCESS, 5);
	KUNIT_ASSERT_TRUE(test, rsw_qt_poll(scq, &wc));
	KUNIT_EXPECT_EQ(test, wc.wr_id, 12ULL);
	KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_SEND);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 5U);
	KUNIT_EXPECT_PTR_EQ(test, wc.qp, qp);

	/*
	 * In ERROR the doorbell flushes what the process posts (nothing
	 * else would); receives too, on the RQ's.
	 */
	KUNIT_ASSERT_EQ(test, rsw_qt_modify(qp, IB_QPS_ERR), 0);
	KUNIT_EXPECT_EQ(test, READ_ONCE(q->sq.uctrl->busy), 0U);
	rsw_qt_usend(rsw_qt_usqe(qp, 3), 13, 5);
	rsw_qt_usqe(qp, 3)->opcode = RDMAP_SW_WR_RDMA_READ;
	rsw_qt_utail(&q->sq, 4);
	KUNIT_EXPECT_EQ(test, ib_post_send(qp, NULL, NULL), 0);
	KUNIT_ASSERT_TRUE(test, rsw_qt_poll(scq, &wc));
	KUNIT_EXPECT_EQ(test, wc.wr_id, 13ULL);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_WR_FLUSH_ERR);
	KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_RDMA_READ);
	KUNIT_EXPECT_EQ(test, READ_ONCE(q->sq.uctrl->head), 4U);
	rsw_qt_urqe(qp, 0)->wr_id = 50;
	rsw_qt_utail(&q->rq, 1);
	KUNIT_EXPECT_EQ(test, ib_post_recv(qp, NULL, NULL), 0);
	KUNIT_ASSERT_TRUE(test, rsw_qt_poll(rcq, &wc));
	KUNIT_EXPECT_EQ(test, wc.wr_id, 50ULL);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_WR_FLUSH_ERR);
	KUNIT_EXPECT_EQ(test, READ_ONCE(q->rq.uctrl->head), 1U);

	/* Reset keeps the process's indices running. */
	KUNIT_ASSERT_EQ(test, rsw_qt_modify(qp, IB_QPS_RESET), 0);
	rsw_qt_usend(rsw_qt_usqe(qp, 4), 14, 5);
	rsw_qt_utail(&q->sq, 5);
	KUNIT_ASSERT_EQ(test, rsw_qp_sq_take(q, sqe, &idx), RSW_SQ_WIRE);
	KUNIT_EXPECT_EQ(test, idx, 4U);
	KUNIT_EXPECT_EQ(test, sqe->wr_id, 14ULL);
	rsw_qp_sq_complete(q, idx, RDMAP_SW_WC_SUCCESS, 5);
	KUNIT_EXPECT_EQ(test, READ_ONCE(q->sq.uctrl->head), 5U);
}

/*
 * A user QP's BIND_MW and LOCAL_INV are taken and executed here, not
 * refused: a LOCAL_INV of a fast-reg MR of its PD completes; a BIND_MW
 * naming an MR where the window should be completes MW_BIND_ERR (opcode
 * BIND_MW), moves that QP to ERROR and flushes the Send behind it.
 */
static void rsw_qt_user_local_ops(struct kunit *test)
{
	struct ib_cq *scq = rsw_qt_cq(test, 16), *rcq = rsw_qt_cq(test, 16);
	struct ib_qp *qp = rsw_qt_uqp(test, scq, rcq);
	struct ib_mr *mr = rsw_qt_frmr(test, rsw_qt.pd);
	struct rsw_qp *q = to_rsw_qp(qp);
	struct rdmap_sw_sqe *sqe, *e;
	struct ib_wc wc;
	u32 idx;

	sqe = kunit_kzalloc(test, sizeof(*sqe), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, sqe);
	e = rsw_qt_usqe(qp, 0);
	memset(e, 0, sizeof(*e));
	e->wr_id = 1;
	e->opcode = RDMAP_SW_WR_LOCAL_INV;
	e->flags = RDMAP_SW_SQE_SIGNALED;
	e->inv_stag = mr->rkey;
	e = rsw_qt_usqe(qp, 1);
	memset(e, 0, sizeof(*e));
	e->wr_id = 2;
	e->opcode = RDMAP_SW_WR_BIND_MW;
	e->flags = RDMAP_SW_SQE_SIGNALED;
	e->bind.mw_rkey = mr->rkey;
	e->bind.mr_lkey = mr->lkey;
	e->bind.length = 8;
	rsw_qt_usend(rsw_qt_usqe(qp, 2), 3, 10);
	rsw_qt_utail(&q->sq, 3);

	KUNIT_EXPECT_EQ(test, rsw_qp_sq_take(q, sqe, &idx), RSW_SQ_LOCAL);
	KUNIT_ASSERT_TRUE(test, rsw_qt_poll(scq, &wc));
	KUNIT_EXPECT_EQ(test, wc.wr_id, 1ULL);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_LOCAL_INV);
	KUNIT_EXPECT_EQ(test, rsw_qp_sq_take(q, sqe, &idx), RSW_SQ_LOCAL);
	KUNIT_ASSERT_TRUE(test, rsw_qt_poll(scq, &wc));
	KUNIT_EXPECT_EQ(test, wc.wr_id, 2ULL);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_MW_BIND_ERR);
	KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_BIND_MW);
	KUNIT_EXPECT_EQ(test, rsw_qt_state(test, qp), IB_QPS_ERR);
	KUNIT_ASSERT_TRUE(test, rsw_qt_poll(scq, &wc));
	KUNIT_EXPECT_EQ(test, wc.wr_id, 3ULL);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_WR_FLUSH_ERR);
	KUNIT_EXPECT_FALSE(test, rsw_qt_poll(scq, &wc));
}

/* ------------------------------------------------------ rdma counters */

/*
 * The device's counter ops driven as ib_core's counters.c drives them: a
 * zeroed struct rdma_counter with device and port, hw_stats from
 * counter_alloc_stats, bind with id 0 to make a counter.  ib_core's own
 * bookkeeping (kref, restrack) is not involved: every QP is unbound
 * before it is destroyed (ib_core would release its counter there).
 */
static void rsw_qt_free_hw_stats(void *stats)
{
	rdma_free_hw_stats_struct(stats);
}

static void rsw_qt_counter_dealloc(void *counter)
{
	rsw_qt.ibdev->ops.counter_dealloc(counter);
}

static void rsw_qt_counter_unbind(void *qp)
{
	if (((struct ib_qp *)qp)->counter)
		rsw_qt.ibdev->ops.counter_unbind_qp(qp);
}

static struct rdma_counter *rsw_qt_counter(struct kunit *test)
{
	struct rdma_counter *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	int ret;

	KUNIT_ASSERT_NOT_NULL(test, c);
	c->device = rsw_qt.ibdev;
	c->port = RSW_PORT;
	c->stats = rsw_qt.ibdev->ops.counter_alloc_stats(c);
	KUNIT_ASSERT_NOT_NULL(test, c->stats);
	ret = kunit_add_action_or_reset(test, rsw_qt_free_hw_stats, c->stats);
	KUNIT_ASSERT_EQ(test, ret, 0);
	ret = kunit_add_action_or_reset(test, rsw_qt_counter_dealloc, c);
	KUNIT_ASSERT_EQ(test, ret, 0);
	return c;
}

/* A QP, unbound again before it is destroyed. */
static struct ib_qp *rsw_qt_counted_qp(struct kunit *test)
{
	struct ib_qp *qp = rsw_qt_qp(test);
	int ret = kunit_add_action_or_reset(test, rsw_qt_counter_unbind, qp);

	KUNIT_ASSERT_EQ(test, ret, 0);
	return qp;
}

/* Post one zero-length receive: kern_recv_calls and kern_recv_wrs. */
static void rsw_qt_post_empty_recv(struct kunit *test, struct ib_qp *qp)
{
	const struct ib_recv_wr wr = { .wr_id = 1 };
	const struct ib_recv_wr *bad;

	KUNIT_ASSERT_EQ(test, ib_post_recv(qp, &wr, &bad), 0);
}

static u64 rsw_qt_counter_val(struct kunit *test, struct rdma_counter *c,
			      enum rsw_stat i)
{
	KUNIT_EXPECT_EQ(test, rsw_qt.ibdev->ops.counter_update_stats(c), 0);
	return c->stats->value[i - 1];
}

/*
 * Bound, a QP's counts go to its counter and not to the device's set;
 * unbound, to the device again; a bound QP cannot be bound twice, an
 * unbound one not unbound; a deallocated counter is gone for good.
 */
static void rsw_qt_counter_bind(struct kunit *test)
{
	const struct ib_device_ops *ops = &rsw_qt.ibdev->ops;
	struct rsw_stats *dev = rsw_qt.rsw->stats;
	struct rdma_counter *c = rsw_qt_counter(test);
	struct ib_qp *qp = rsw_qt_counted_qp(test);
	enum rsw_stat posts = RSW_STAT_KERNEL_RECV_POSTS;
	u64 dev0;

	KUNIT_ASSERT_EQ(test, ops->counter_bind_qp(c, qp), 0);
	KUNIT_EXPECT_NE(test, c->id, 0U);
	KUNIT_EXPECT_PTR_EQ(test, qp->counter, c);
	KUNIT_EXPECT_EQ(test, ops->counter_bind_qp(c, qp), -EBUSY);
	dev0 = rsw_stats_read(dev, posts);
	rsw_qt_post_empty_recv(test, qp);
	KUNIT_EXPECT_EQ(test, rsw_stats_read(dev, posts), dev0);
	KUNIT_EXPECT_EQ(test, rsw_qt_counter_val(test, c, posts), 1ULL);
	KUNIT_EXPECT_EQ(test,
			rsw_qt_counter_val(test, c, RSW_STAT_KERNEL_RECV_WRS),
			1ULL);

	KUNIT_EXPECT_EQ(test, ops->counter_unbind_qp(qp), 0);
	KUNIT_EXPECT_NULL(test, qp->counter);
	KUNIT_EXPECT_EQ(test, ops->counter_unbind_qp(qp), -EINVAL);
	rsw_qt_post_empty_recv(test, qp);
	KUNIT_EXPECT_EQ(test, rsw_stats_read(dev, posts), dev0 + 1);
	KUNIT_EXPECT_EQ(test, rsw_qt_counter_val(test, c, posts), 1ULL);

	KUNIT_EXPECT_EQ(test, ops->counter_dealloc(c), 0);
	KUNIT_EXPECT_EQ(test, ops->counter_update_stats(c), -ENOENT);
	KUNIT_EXPECT_EQ(test, ops->counter_bind_qp(c, qp), -ENOENT);
	KUNIT_EXPECT_EQ(test, ops->counter_dealloc(c), -ENOENT);
}

/*
 * A counter takes RSW_COUNTER_MAX_QPS QPs and refuses one more; an id
 * that is ours but names another rdma_counter, or an id we never gave,
 * finds nothing.
 */
static void rsw_qt_counter_limits(struct kunit *test)
{
	const struct ib_device_ops *ops = &rsw_qt.ibdev->ops;
	struct rdma_counter *c = rsw_qt_counter(test);
	struct rdma_counter *other = rsw_qt_counter(test);
	struct ib_qp *qp;
	unsigned int i;

	for (i = 0; i < RSW_COUNTER_MAX_QPS; i++) {
		qp = rsw_qt_counted_qp(test);
		KUNIT_ASSERT_EQ(test, ops->counter_bind_qp(c, qp), 0);
	}
	qp = rsw_qt_counted_qp(test);
	KUNIT_EXPECT_EQ(test, ops->counter_bind_qp(c, qp), -ENOSPC);
	KUNIT_EXPECT_NULL(test, qp->counter);
	other->id = c->id;
	KUNIT_EXPECT_EQ(test, ops->counter_bind_qp(other, qp), -ENOENT);
	KUNIT_EXPECT_EQ(test, ops->counter_update_stats(other), -ENOENT);
	other->id = RSW_MAX_QP;
	KUNIT_EXPECT_EQ(test, ops->counter_bind_qp(other, qp), -ENOENT);
	other->id = 0;
}

static struct kunit_case rsw_qp_cases[] = {
	KUNIT_CASE_PARAM(rsw_qt_create_caps, rsw_qt_create_gen_params),
	KUNIT_CASE_PARAM(rsw_qt_transition, rsw_qt_trans_gen),
	KUNIT_CASE_PARAM(rsw_qt_modify_states, rsw_qt_modify_gen_params),
	KUNIT_CASE(rsw_qt_modify_rd_atomic),
	KUNIT_CASE_PARAM(rsw_qt_post_send_bad, rsw_qt_send_gen_params),
	KUNIT_CASE(rsw_qt_post_send_good),
	KUNIT_CASE(rsw_qt_post_send_inline_copied),
	KUNIT_CASE_PARAM(rsw_qt_post_recv_bad, rsw_qt_recv_gen_params),
	KUNIT_CASE(rsw_qt_queue_full),
	KUNIT_CASE(rsw_qt_flush_order),
	KUNIT_CASE(rsw_qt_flush_behind_taken),
	KUNIT_CASE(rsw_qt_rq_take_complete),
	KUNIT_CASE_PARAM(rsw_qt_drain_qp, rsw_qt_drain_gen_params),
	KUNIT_CASE(rsw_qt_destroy_posted),
	KUNIT_CASE(rsw_qt_lookup_ref),
	KUNIT_CASE(rsw_qt_destroy_waits_for_holder),
	KUNIT_CASE(rsw_qt_process_reg_inv),
	KUNIT_CASE(rsw_qt_process_reg_other_pd),
	KUNIT_CASE(rsw_qt_process_reg_deregistered),
	KUNIT_CASE(rsw_qt_post_reg_other_index),
	KUNIT_CASE(rsw_qt_process_order),
	KUNIT_CASE(rsw_qt_process_cq_overrun),
	KUNIT_CASE_PARAM(rsw_qt_user_sqe_bad, rsw_qt_usqe_gen_params),
	KUNIT_CASE(rsw_qt_user_local_ops),
	KUNIT_CASE_PARAM(rsw_qt_user_rqe_bad, rsw_qt_urqe_gen_params),
	KUNIT_CASE(rsw_qt_user_tail_bound),
	KUNIT_CASE(rsw_qt_user_no_context),
	KUNIT_CASE(rsw_qt_user_good),
	KUNIT_CASE(rsw_qt_user_linger),
	KUNIT_CASE(rsw_qt_user_close),
	KUNIT_CASE(rsw_qt_user_close_bad_tail),
	KUNIT_CASE(rsw_qt_counter_bind),
	KUNIT_CASE(rsw_qt_counter_limits),
	{}
};

static struct kunit_suite rsw_qp_suite = {
	.name = "rdmap_sw_qp",
	.suite_init = rsw_qt_suite_init,
	.suite_exit = rsw_qt_suite_exit,
	.test_cases = rsw_qp_cases,
};

kunit_test_suite(rsw_qp_suite);

MODULE_DESCRIPTION("KUnit tests for rdmap_sw queue pairs");
MODULE_LICENSE("GPL");
