// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite rdmap_sw_srq: shared receive queues created through the real
 * ib_core (ib_create_srq, ib_modify_srq, ib_post_srq_recv, ib_create_qp
 * with an SRQ, ib_drain_qp, ib_destroy_*) on an rdmap_sw device attached
 * to a throw-away Ethernet netdev.  No stream runs: the RX engine's side
 * is played by calling rsw_qp_rq_take() and rsw_qp_rq_complete() as the
 * stream does for an untagged Send, and a user SRQ's process by writing
 * the ring of an SRQ given the user layout (rsw_srq_user_layout()).
 *
 * KUnit actions undo in reverse order: the SRQ and CQs are created first,
 * so every QP is destroyed before them.
 */
#include <kunit/resource.h>
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

#include "env.h"
#include "internal.h"

RSW_IMPORT_KUNIT_NS();

static const u8 rsw_st_mac[ETH_ALEN] = { 0x02, 0x00, 0x5e, 0x30, 0x50, 0x0b };

static struct rsw_env_suite rsw_st;
static u8 rsw_st_buf[256];

static int rsw_st_suite_init(struct kunit_suite *suite)
{
	return rsw_env_suite_init(&rsw_st, rsw_st_mac, "rswst%d", "rswst0");
}

static void rsw_st_suite_exit(struct kunit_suite *suite)
{
	rsw_env_suite_exit(&rsw_st);
}

/* -------------------------------------------------------------- fixtures */

/* Asynchronous events seen by a handler, per type. */
struct rsw_st_events {
	atomic_t count[IB_EVENT_DEVICE_FATAL + 32];
	void *last_element;
};

static void rsw_st_event(struct ib_event *ev, void *ctx)
{
	struct rsw_st_events *e = ctx;

	if (ev->event < ARRAY_SIZE(e->count))
		atomic_inc(&e->count[ev->event]);
	WRITE_ONCE(e->last_element, ev->event == IB_EVENT_SRQ_LIMIT_REACHED ?
		   (void *)ev->element.srq : (void *)ev->element.qp);
}

static int rsw_st_seen(struct rsw_st_events *e, enum ib_event_type t)
{
	return atomic_read(&e->count[t]);
}

static void rsw_st_destroy_cq(void *cq)
{
	ib_destroy_cq(cq);
}

static void rsw_st_free_cq(void *cq)
{
	ib_free_cq(cq);
}

static void rsw_st_destroy_qp(void *qp)
{
	ib_destroy_qp(qp);
}

static void rsw_st_destroy_srq(void *srq)
{
	ib_destroy_srq(srq);
}

static struct ib_cq *rsw_st_cq(struct kunit *test, int cqe)
{
	struct ib_cq_init_attr attr = { .cqe = cqe };
	struct ib_cq *cq;

	cq = ib_create_cq(rsw_st.ibdev, NULL, NULL, NULL, &attr);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(cq), "ib_create_cq: %ld",
			       PTR_ERR(cq));
	KUNIT_ASSERT_EQ(test,
			kunit_add_action_or_reset(test, rsw_st_destroy_cq, cq),
			0);
	return cq;
}

/* An SRQ of @wr entries and @sge SGEs whose events land in @ev (or none). */
static struct ib_srq *rsw_st_srq(struct kunit *test, u32 wr, u32 sge,
				 struct rsw_st_events *ev)
{
	struct ib_srq_init_attr attr = {
		.event_handler = ev ? rsw_st_event : NULL,
		.srq_context = ev,
		.srq_type = IB_SRQT_BASIC,
		.attr = { .max_wr = wr, .max_sge = sge },
	};
	struct ib_srq *srq;

	srq = ib_create_srq(rsw_st.pd, &attr);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(srq), "ib_create_srq: %ld",
			       PTR_ERR(srq));
	KUNIT_ASSERT_EQ(test,
			kunit_add_action_or_reset(test, rsw_st_destroy_srq, srq),
			0);
	return srq;
}

/* An RC QP taking its receives from @srq, completing them on @rcq. */
static struct ib_qp *rsw_st_qp(struct kunit *test, struct ib_srq *srq,
			       struct ib_cq *scq, struct ib_cq *rcq,
			       struct rsw_st_events *ev)
{
	struct ib_qp_init_attr attr = {
		.event_handler = ev ? rsw_st_event : NULL,
		.qp_context = ev,
		.send_cq = scq,
		.recv_cq = rcq,
		.srq = srq,
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = { .max_send_wr = 8, .max_send_sge = 1 },
	};
	struct ib_qp *qp;

	qp = ib_create_qp(rsw_st.pd, &attr);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(qp), "ib_create_qp: %ld",
			       PTR_ERR(qp));
	KUNIT_ASSERT_EQ(test,
			kunit_add_action_or_reset(test, rsw_st_destroy_qp, qp),
			0);
	return qp;
}

static int rsw_st_modify(struct ib_qp *qp, enum ib_qp_state to)
{
	struct ib_qp_attr attr = { .qp_state = to };

	return ib_modify_qp(qp, &attr, IB_QP_STATE);
}

static enum ib_qp_state rsw_st_state(struct kunit *test, struct ib_qp *qp)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;

	KUNIT_ASSERT_EQ(test, ib_query_qp(qp, &attr, IB_QP_STATE, &init), 0);
	return attr.qp_state;
}

/* Post one receive of one SGE of @len bytes to @srq. */
static int rsw_st_post(struct ib_srq *srq, u64 wr_id, u32 len)
{
	struct ib_sge sge = { .addr = (uintptr_t)rsw_st_buf, .length = len,
			      .lkey = rsw_st.pd->local_dma_lkey };
	struct ib_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				 .num_sge = 1 };

	return ib_post_srq_recv(srq, &wr, NULL);
}

/* Take @qp's next receive as the stream would; its wr_id, or -1. */
static s64 rsw_st_take(struct kunit *test, struct ib_qp *qp, u32 *idx)
{
	struct rdmap_sw_rqe *rqe;

	rqe = kunit_kzalloc(test, sizeof(*rqe), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, rqe);
	if (!rsw_qp_rq_take(to_rsw_qp(qp), rqe, idx))
		return -1;
	return rqe->wr_id;
}

static void rsw_st_complete(struct ib_qp *qp, u32 idx, u8 status, u32 len)
{
	struct rsw_rq_result res = { .status = status, .byte_len = len };

	rsw_qp_rq_complete(to_rsw_qp(qp), idx, &res);
}

/* The next completion on @cq must be @wr_id, @status, from @qp. */
static void rsw_st_expect_wc(struct kunit *test, struct ib_cq *cq,
			     struct ib_qp *qp, u64 wr_id,
			     enum ib_wc_status status)
{
	struct ib_wc wc;

	KUNIT_ASSERT_EQ_MSG(test, ib_poll_cq(cq, 1, &wc), 1, "wr_id %llu",
			    wr_id);
	KUNIT_EXPECT_EQ(test, wc.wr_id, wr_id);
	KUNIT_EXPECT_EQ(test, wc.status, status);
	KUNIT_EXPECT_PTR_EQ(test, wc.qp, qp);
	if (status == IB_WC_SUCCESS)
		KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_RECV);
}

static void rsw_st_expect_empty(struct kunit *test, struct ib_cq *cq)
{
	struct ib_wc wc;

	KUNIT_EXPECT_EQ(test, ib_poll_cq(cq, 1, &wc), 0);
}

/* ------------------------------------------------------ create, attributes */

struct rsw_st_create_case {
	const char *name;
	u32 max_wr, max_sge;
	int ret;
	u32 got_wr;			/* reported, if ret == 0 */
};

static const struct rsw_st_create_case rsw_st_create_cases[] = {
	{ "rounded up to a power of two", 10, 3, 0, 16 },
	{ "zero entries asked: one", 0, 1, 0, 1 },
	{ "at the limits", RSW_MAX_SRQ_WR, RSW_MAX_SGE, 0, RSW_MAX_SRQ_WR },
	{ "max_wr over", RSW_MAX_SRQ_WR + 1, 1, -EINVAL },
	{ "max_sge over", 16, RSW_MAX_SGE + 1, -EINVAL },
};

KUNIT_ARRAY_PARAM_DESC(rsw_st_create, rsw_st_create_cases, name);

static void rsw_st_create_query(struct kunit *test)
{
	const struct rsw_st_create_case *c = test->param_value;
	struct ib_srq_init_attr init = {
		.srq_type = IB_SRQT_BASIC,
		.attr = { .max_wr = c->max_wr, .max_sge = c->max_sge },
	};
	struct ib_srq_attr attr;
	struct ib_srq *srq;

	srq = ib_create_srq(rsw_st.pd, &init);
	if (c->ret) {
		KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(srq), c->ret);
		return;
	}
	KUNIT_ASSERT_FALSE(test, IS_ERR(srq));
	KUNIT_ASSERT_EQ(test,
			kunit_add_action_or_reset(test, rsw_st_destroy_srq, srq),
			0);
	KUNIT_EXPECT_EQ(test, init.attr.max_wr, c->got_wr);
	KUNIT_ASSERT_EQ(test, ib_query_srq(srq, &attr), 0);
	KUNIT_EXPECT_EQ(test, attr.max_wr, c->got_wr);
	KUNIT_EXPECT_EQ(test, attr.max_sge, max(c->max_sge, 1U));
	KUNIT_EXPECT_EQ(test, attr.srq_limit, 0U);
}

/* The device advertises what create_srq enforces. */
static void rsw_st_device_attrs(struct kunit *test)
{
	const struct ib_device_attr *a = &rsw_st.ibdev->attrs;

	KUNIT_EXPECT_EQ(test, a->max_srq, RSW_MAX_SRQ);
	KUNIT_EXPECT_EQ(test, a->max_srq_wr, RSW_MAX_SRQ_WR);
	KUNIT_EXPECT_EQ(test, a->max_srq_sge, 16);
}

/* IB_SRQ_LIMIT arms and shows in query; resizing and bad limits refused. */
static void rsw_st_modify_limit(struct kunit *test)
{
	struct ib_srq *srq = rsw_st_srq(test, 8, 1, NULL);
	struct ib_srq_attr attr = { .srq_limit = 4 };

	KUNIT_EXPECT_EQ(test, ib_modify_srq(srq, &attr, IB_SRQ_LIMIT), 0);
	memset(&attr, 0, sizeof(attr));
	KUNIT_ASSERT_EQ(test, ib_query_srq(srq, &attr), 0);
	KUNIT_EXPECT_EQ(test, attr.srq_limit, 4U);
	/* A resize keeps the armed limit; the limit is checked against it. */
	attr.max_wr = 16;
	KUNIT_EXPECT_EQ(test, ib_modify_srq(srq, &attr, IB_SRQ_MAX_WR), 0);
	KUNIT_ASSERT_EQ(test, ib_query_srq(srq, &attr), 0);
	KUNIT_EXPECT_EQ(test, attr.srq_limit, 4U);
	attr.srq_limit = 17;
	KUNIT_EXPECT_EQ(test, ib_modify_srq(srq, &attr, IB_SRQ_LIMIT),
			-EINVAL);
	attr.srq_limit = 0;
	KUNIT_EXPECT_EQ(test, ib_modify_srq(srq, &attr, IB_SRQ_LIMIT), 0);
	KUNIT_ASSERT_EQ(test, ib_query_srq(srq, &attr), 0);
	KUNIT_EXPECT_EQ(test, attr.srq_limit, 0U);
}

/* -------------------------------------------------------------- posting */

/* Too many SGEs: -EINVAL; a full SRQ: -ENOMEM; bad_wr names the refused. */
static void rsw_st_post_bad(struct kunit *test)
{
	struct ib_srq *srq = rsw_st_srq(test, 4, 2, NULL);
	struct ib_sge sge[3] = {};
	struct ib_recv_wr wr = { .wr_id = 7, .sg_list = sge, .num_sge = 3 };
	struct ib_recv_wr wr2 = { .wr_id = 8 };
	const struct ib_recv_wr *bad = NULL;
	int i;

	KUNIT_EXPECT_EQ(test, ib_post_srq_recv(srq, &wr, &bad), -EINVAL);
	KUNIT_EXPECT_PTR_EQ(test, bad, (const struct ib_recv_wr *)&wr);
	for (i = 0; i < 4; i++)
		KUNIT_ASSERT_EQ(test, rsw_st_post(srq, i, 16), 0);
	wr.num_sge = 1;
	wr.next = &wr2;
	bad = NULL;
	KUNIT_EXPECT_EQ(test, ib_post_srq_recv(srq, &wr, &bad), -ENOMEM);
	KUNIT_EXPECT_PTR_EQ(test, bad, (const struct ib_recv_wr *)&wr);
}

/*
 * QPs take in posting order whichever QP asks; each completes on its own
 * recv CQ with its own qp_num, in its own order; post_recv on them fails.
 */
static void rsw_st_take_order(struct kunit *test)
{
	struct ib_srq *srq = rsw_st_srq(test, 8, 1, NULL);
	struct ib_cq *scq = rsw_st_cq(test, 16);
	struct ib_cq *rcq_a = rsw_st_cq(test, 16), *rcq_b = rsw_st_cq(test, 16);
	struct ib_qp *a = rsw_st_qp(test, srq, scq, rcq_a, NULL);
	struct ib_qp *b = rsw_st_qp(test, srq, scq, rcq_b, NULL);
	struct ib_recv_wr rwr = { .wr_id = 99 };
	const struct ib_recv_wr *bad = NULL;
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;
	u32 ia1, ia3, ib2;
	u64 i;

	KUNIT_EXPECT_EQ(test, ib_post_recv(a, &rwr, &bad), -EINVAL);
	KUNIT_EXPECT_PTR_EQ(test, bad, (const struct ib_recv_wr *)&rwr);
	KUNIT_ASSERT_EQ(test, ib_query_qp(a, &attr, IB_QP_CAP, &init), 0);
	KUNIT_EXPECT_EQ(test, attr.cap.max_recv_wr, 0U);
	KUNIT_EXPECT_EQ(test, rsw_st_take(test, a, &ia1), -1);

	for (i = 1; i <= 4; i++)
		KUNIT_ASSERT_EQ(test, rsw_st_post(srq, i, 10 * i), 0);
	KUNIT_EXPECT_EQ(test, rsw_st_take(test, a, &ia1), 1);
	KUNIT_EXPECT_EQ(test, rsw_st_take(test, b, &ib2), 2);
	KUNIT_EXPECT_EQ(test, rsw_st_take(test, a, &ia3), 3);
	/* Taken slots are free at once: three more fit beside entry 4. */
	for (i = 5; i <= 11; i++)
		KUNIT_ASSERT_EQ(test, rsw_st_post(srq, i, 8), 0);
	KUNIT_EXPECT_EQ(test, rsw_st_post(srq, 12, 8), -ENOMEM);

	rsw_st_complete(b, ib2, RDMAP_SW_WC_SUCCESS, 20);
	rsw_st_expect_wc(test, rcq_b, b, 2, IB_WC_SUCCESS);
	rsw_st_expect_empty(test, rcq_a);
	/* a's second receive finishes first: it still completes in order. */
	rsw_st_complete(a, ia3, RDMAP_SW_WC_SUCCESS, 30);
	rsw_st_expect_empty(test, rcq_a);
	rsw_st_complete(a, ia1, RDMAP_SW_WC_SUCCESS, 10);
	rsw_st_expect_wc(test, rcq_a, a, 1, IB_WC_SUCCESS);
	rsw_st_expect_wc(test, rcq_a, a, 3, IB_WC_SUCCESS);
	rsw_st_expect_empty(test, scq);
	KUNIT_EXPECT_EQ(test, rsw_st_take(test, b, &ib2), 4);
}

/* The take that leaves fewer than the limit raises the event, once. */
static void rsw_st_limit_event(struct kunit *test)
{
	struct rsw_st_events *ev = kunit_kzalloc(test, sizeof(*ev), GFP_KERNEL);
	struct ib_srq *srq;
	struct ib_cq *cq = rsw_st_cq(test, 16);
	struct ib_srq_attr attr = { .srq_limit = 3 };
	struct ib_qp *qp;
	u32 idx;
	u64 i;

	KUNIT_ASSERT_NOT_NULL(test, ev);
	srq = rsw_st_srq(test, 8, 1, ev);
	qp = rsw_st_qp(test, srq, cq, cq, NULL);
	for (i = 0; i < 5; i++)
		KUNIT_ASSERT_EQ(test, rsw_st_post(srq, i, 8), 0);
	KUNIT_ASSERT_EQ(test, ib_modify_srq(srq, &attr, IB_SRQ_LIMIT), 0);
	KUNIT_EXPECT_EQ(test, rsw_st_take(test, qp, &idx), 0);	/* 4 left */
	KUNIT_EXPECT_EQ(test, rsw_st_take(test, qp, &idx), 1);	/* 3 left */
	KUNIT_EXPECT_EQ(test, rsw_st_seen(ev, IB_EVENT_SRQ_LIMIT_REACHED), 0);
	KUNIT_EXPECT_EQ(test, rsw_st_take(test, qp, &idx), 2);	/* 2 left */
	KUNIT_EXPECT_EQ(test, rsw_st_seen(ev, IB_EVENT_SRQ_LIMIT_REACHED), 1);
	KUNIT_EXPECT_PTR_EQ(test, READ_ONCE(ev->last_element), (void *)srq);
	KUNIT_ASSERT_EQ(test, ib_query_srq(srq, &attr), 0);
	KUNIT_EXPECT_EQ(test, attr.srq_limit, 0U);
	KUNIT_EXPECT_EQ(test, rsw_st_take(test, qp, &idx), 3);	/* disarmed */
	KUNIT_EXPECT_EQ(test, rsw_st_seen(ev, IB_EVENT_SRQ_LIMIT_REACHED), 1);
	/* Armed again: the next take below it fires again. */
	attr.srq_limit = 2;
	KUNIT_ASSERT_EQ(test, ib_modify_srq(srq, &attr, IB_SRQ_LIMIT), 0);
	KUNIT_EXPECT_EQ(test, rsw_st_take(test, qp, &idx), 4);
	KUNIT_EXPECT_EQ(test, rsw_st_seen(ev, IB_EVENT_SRQ_LIMIT_REACHED), 2);
}

/* ------------------------------------------------ user SRQ: hostile entries */

static struct ib_srq *rsw_st_usrq(struct kunit *test, u32 wr, u32 sge)
{
	struct ib_srq *srq = rsw_st_srq(test, wr, sge, NULL);

	KUNIT_ASSERT_EQ(test, rsw_srq_user_layout(srq), 0);
	KUNIT_ASSERT_NOT_NULL(test, rsw_srq_uctrl(srq));
	return srq;
}

/* A valid user entry: one SGE of @len bytes. */
static void rsw_st_uentry(struct ib_srq *srq, u32 n, u64 wr_id, u32 len)
{
	struct rdmap_sw_rqe *e = rsw_srq_entry(srq, n);

	memset(e, 0, sizeof(*e));
	e->wr_id = wr_id;
	e->num_sge = 1;
	e->length = len;
	e->sge[0].addr = 0x1000;
	e->sge[0].length = len;
	e->sge[0].lkey = 0x100;
}

static void rsw_st_utail(struct ib_srq *srq, u32 tail)
{
	/* As the process: entries written before tail (kernel acquires). */
	smp_store_release(&rsw_srq_uctrl(srq)->tail, tail);
}

struct rsw_st_hostile_case {
	const char *name;
	void (*spoil)(struct rdmap_sw_rqe *e);
	enum ib_wc_status status;
};

static void rsw_st_sp_num_sge(struct rdmap_sw_rqe *e)
{
	e->num_sge = 3;			/* the SRQ's max_sge is 2 */
	e->sge[1].length = 0;
	e->sge[2].length = 0;
}

static void rsw_st_sp_num_sge_huge(struct rdmap_sw_rqe *e)
{
	e->num_sge = 255;
}

static void rsw_st_sp_len_sum(struct rdmap_sw_rqe *e)
{
	e->length += 1;
}

static void rsw_st_sp_len_over(struct rdmap_sw_rqe *e)
{
	e->num_sge = 2;
	e->sge[0].length = 0x80000000U;
	e->sge[1].length = 0x80000000U;
	e->length = 0;			/* the u32 sum wraps to it */
}

static const struct rsw_st_hostile_case rsw_st_hostile_cases[] = {
	{ "num_sge over the SRQ's max_sge", rsw_st_sp_num_sge,
	  IB_WC_LOC_QP_OP_ERR },
	{ "num_sge over the entry", rsw_st_sp_num_sge_huge,
	  IB_WC_LOC_QP_OP_ERR },
	{ "length is not the SGE sum", rsw_st_sp_len_sum, IB_WC_LOC_LEN_ERR },
	{ "SGE sum over the message size", rsw_st_sp_len_over,
	  IB_WC_LOC_LEN_ERR },
};

KUNIT_ARRAY_PARAM_DESC(rsw_st_hostile, rsw_st_hostile_cases, name);

/*
 * A bad entry fails only the QP that takes it (completion with the rule's
 * status on its recv CQ, QP in ERROR); its slot is free, the other QP
 * takes the next entry and carries on.
 */
static void rsw_st_user_hostile(struct kunit *test)
{
	const struct rsw_st_hostile_case *c = test->param_value;
	struct ib_srq *srq = rsw_st_usrq(test, 4, 2);
	struct ib_cq *scq = rsw_st_cq(test, 16);
	struct ib_cq *rcq_a = rsw_st_cq(test, 16), *rcq_b = rsw_st_cq(test, 16);
	struct ib_qp *a = rsw_st_qp(test, srq, scq, rcq_a, NULL);
	struct ib_qp *b = rsw_st_qp(test, srq, scq, rcq_b, NULL);
	u32 idx;

	rsw_st_uentry(srq, 0, 100, 64);
	c->spoil(rsw_srq_entry(srq, 0));
	rsw_st_uentry(srq, 1, 101, 64);
	rsw_st_utail(srq, 2);

	KUNIT_EXPECT_EQ(test, rsw_st_take(test, a, &idx), -1);
	rsw_st_expect_wc(test, rcq_a, a, 100, c->status);
	KUNIT_EXPECT_EQ(test, rsw_st_state(test, a), IB_QPS_ERR);
	KUNIT_EXPECT_EQ(test, READ_ONCE(rsw_srq_uctrl(srq)->head), 1U);
	rsw_st_expect_empty(test, rcq_b);

	KUNIT_EXPECT_EQ(test, rsw_st_take(test, b, &idx), 101);
	KUNIT_EXPECT_EQ(test, READ_ONCE(rsw_srq_uctrl(srq)->head), 2U);
	rsw_st_complete(b, idx, RDMAP_SW_WC_SUCCESS, 64);
	rsw_st_expect_wc(test, rcq_b, b, 101, IB_WC_SUCCESS);
	KUNIT_EXPECT_NE(test, rsw_st_state(test, b), IB_QPS_ERR);
	rsw_st_expect_empty(test, rcq_a);
}

/*
 * A tail out of the ring fails the QP that was taking and is ignored: once
 * the process fixes it, the entries are there for the other QP.
 */
static void rsw_st_user_tail_bound(struct kunit *test)
{
	struct ib_srq *srq = rsw_st_usrq(test, 4, 1);
	struct ib_cq *cq = rsw_st_cq(test, 16);
	struct ib_qp *a = rsw_st_qp(test, srq, cq, cq, NULL);
	struct ib_qp *b = rsw_st_qp(test, srq, cq, cq, NULL);
	u32 idx;

	rsw_st_uentry(srq, 0, 7, 8);
	rsw_st_utail(srq, 5);			/* size is 4 */
	KUNIT_EXPECT_EQ(test, rsw_st_take(test, a, &idx), -1);
	KUNIT_EXPECT_EQ(test, rsw_st_state(test, a), IB_QPS_ERR);
	KUNIT_EXPECT_EQ(test, READ_ONCE(rsw_srq_uctrl(srq)->head), 0U);
	rsw_st_expect_empty(test, cq);
	rsw_st_utail(srq, 1);
	KUNIT_EXPECT_EQ(test, rsw_st_take(test, b, &idx), 7);
	KUNIT_EXPECT_EQ(test, to_rsw_srq(srq)->bad_tails, 1ULL);
}

/* Good user entries wrap around the ring; head follows each take. */
static void rsw_st_user_wrap(struct kunit *test)
{
	struct ib_srq *srq = rsw_st_usrq(test, 2, 1);
	struct ib_cq *cq = rsw_st_cq(test, 16);
	struct ib_qp *qp = rsw_st_qp(test, srq, cq, cq, NULL);
	u32 n, idx;

	for (n = 0; n < 6; n++) {
		rsw_st_uentry(srq, n, 1000 + n, 4);
		rsw_st_utail(srq, n + 1);
		KUNIT_ASSERT_EQ(test, rsw_st_take(test, qp, &idx), 1000 + n);
		KUNIT_EXPECT_EQ(test, READ_ONCE(rsw_srq_uctrl(srq)->head),
				n + 1);
		rsw_st_complete(qp, idx, RDMAP_SW_WC_SUCCESS, 4);
		rsw_st_expect_wc(test, cq, qp, 1000 + n, IB_WC_SUCCESS);
	}
}

/* ------------------------------------------------------ ERROR and flushing */

/*
 * A QP going to ERROR: the receives it took complete flushed on its own
 * recv CQ (the stream flushes them as it ends), after which it gets
 * LAST_WQE_REACHED, once; what it never took stays in the SRQ for others.
 */
static void rsw_st_error_flush(struct kunit *test)
{
	struct rsw_st_events *ev = kunit_kzalloc(test, sizeof(*ev), GFP_KERNEL);
	struct ib_srq *srq = rsw_st_srq(test, 8, 1, NULL);
	struct ib_cq *scq = rsw_st_cq(test, 16);
	struct ib_cq *rcq_a = rsw_st_cq(test, 16), *rcq_b = rsw_st_cq(test, 16);
	struct ib_qp *a, *b;
	u32 i1, i2, i3;
	u64 i;

	KUNIT_ASSERT_NOT_NULL(test, ev);
	a = rsw_st_qp(test, srq, scq, rcq_a, ev);
	b = rsw_st_qp(test, srq, scq, rcq_b, NULL);
	for (i = 1; i <= 5; i++)
		KUNIT_ASSERT_EQ(test, rsw_st_post(srq, i, 8), 0);
	KUNIT_EXPECT_EQ(test, rsw_st_take(test, a, &i1), 1);
	KUNIT_EXPECT_EQ(test, rsw_st_take(test, a, &i2), 2);
	KUNIT_EXPECT_EQ(test, rsw_st_take(test, b, &i3), 3);

	KUNIT_ASSERT_EQ(test, rsw_st_modify(a, IB_QPS_ERR), 0);
	/* Nothing more is taken; two are still out: no event yet. */
	KUNIT_EXPECT_EQ(test, rsw_st_take(test, a, &i3), -1);
	KUNIT_EXPECT_EQ(test, rsw_st_seen(ev, IB_EVENT_QP_LAST_WQE_REACHED), 0);
	rsw_st_complete(a, i2, RDMAP_SW_WC_WR_FLUSH_ERR, 0);
	rsw_st_expect_empty(test, rcq_a);
	KUNIT_EXPECT_EQ(test, rsw_st_seen(ev, IB_EVENT_QP_LAST_WQE_REACHED), 0);
	rsw_st_complete(a, i1, RDMAP_SW_WC_WR_FLUSH_ERR, 0);
	rsw_st_expect_wc(test, rcq_a, a, 1, IB_WC_WR_FLUSH_ERR);
	rsw_st_expect_wc(test, rcq_a, a, 2, IB_WC_WR_FLUSH_ERR);
	rsw_st_expect_empty(test, rcq_a);
	KUNIT_EXPECT_EQ(test, rsw_st_seen(ev, IB_EVENT_QP_LAST_WQE_REACHED), 1);
	KUNIT_EXPECT_PTR_EQ(test, READ_ONCE(ev->last_element), (void *)a);
	/* ERROR -> ERROR (ib_drain_qp does it) raises nothing more. */
	KUNIT_ASSERT_EQ(test, rsw_st_modify(a, IB_QPS_ERR), 0);
	KUNIT_EXPECT_EQ(test, rsw_st_seen(ev, IB_EVENT_QP_LAST_WQE_REACHED), 1);

	/* b is untouched; entries 4 and 5 were never taken: still there. */
	rsw_st_expect_empty(test, rcq_b);
	KUNIT_EXPECT_EQ(test, rsw_st_take(test, b, &i1), 4);
	KUNIT_EXPECT_EQ(test, rsw_st_take(test, b, &i2), 5);
	rsw_st_complete(b, i3, RDMAP_SW_WC_SUCCESS, 8);
	rsw_st_complete(b, i1, RDMAP_SW_WC_SUCCESS, 8);
	rsw_st_complete(b, i2, RDMAP_SW_WC_SUCCESS, 8);
	rsw_st_expect_wc(test, rcq_b, b, 3, IB_WC_SUCCESS);
	rsw_st_expect_wc(test, rcq_b, b, 4, IB_WC_SUCCESS);
	rsw_st_expect_wc(test, rcq_b, b, 5, IB_WC_SUCCESS);

	/* Reset and into ERROR again: owed once more, nothing taken. */
	KUNIT_ASSERT_EQ(test, rsw_st_modify(a, IB_QPS_RESET), 0);
	KUNIT_ASSERT_EQ(test, rsw_st_modify(a, IB_QPS_ERR), 0);
	KUNIT_EXPECT_EQ(test, rsw_st_seen(ev, IB_EVENT_QP_LAST_WQE_REACHED), 2);
}

/* A QP with nothing taken gets LAST_WQE_REACHED as it enters ERROR. */
static void rsw_st_last_wqe_idle(struct kunit *test)
{
	struct rsw_st_events *ev = kunit_kzalloc(test, sizeof(*ev), GFP_KERNEL);
	struct ib_srq *srq = rsw_st_srq(test, 4, 1, NULL);
	struct ib_cq *cq = rsw_st_cq(test, 16);
	struct ib_qp *qp;

	KUNIT_ASSERT_NOT_NULL(test, ev);
	qp = rsw_st_qp(test, srq, cq, cq, ev);
	KUNIT_ASSERT_EQ(test, rsw_st_post(srq, 1, 8), 0);
	KUNIT_ASSERT_EQ(test, rsw_st_modify(qp, IB_QPS_INIT), 0);
	KUNIT_EXPECT_EQ(test, rsw_st_seen(ev, IB_EVENT_QP_LAST_WQE_REACHED), 0);
	KUNIT_ASSERT_EQ(test, rsw_st_modify(qp, IB_QPS_ERR), 0);
	KUNIT_EXPECT_EQ(test, rsw_st_seen(ev, IB_EVENT_QP_LAST_WQE_REACHED), 1);
	rsw_st_expect_empty(test, cq);	/* the SRQ's entry is not flushed */
}

/*
 * ib_drain_qp() on an SRQ QP waits for LAST_WQE_REACHED (up to 60 s in
 * ib_core): with nothing taken it must come at once, and the SRQ's entry
 * must not be flushed with the QP.
 */
static void rsw_st_drain(struct kunit *test)
{
	struct ib_srq *srq = rsw_st_srq(test, 4, 1, NULL);
	struct ib_cq *scq, *rcq;
	unsigned long start;
	struct ib_qp *qp;
	u32 idx;

	scq = ib_alloc_cq(rsw_st.ibdev, NULL, 16, 0, IB_POLL_DIRECT);
	KUNIT_ASSERT_FALSE(test, IS_ERR(scq));
	KUNIT_ASSERT_EQ(test,
			kunit_add_action_or_reset(test, rsw_st_free_cq, scq),
			0);
	rcq = ib_alloc_cq(rsw_st.ibdev, NULL, 16, 0, IB_POLL_DIRECT);
	KUNIT_ASSERT_FALSE(test, IS_ERR(rcq));
	KUNIT_ASSERT_EQ(test,
			kunit_add_action_or_reset(test, rsw_st_free_cq, rcq),
			0);
	qp = rsw_st_qp(test, srq, scq, rcq, NULL);
	KUNIT_ASSERT_EQ(test, rsw_st_post(srq, 1, 8), 0);
	KUNIT_ASSERT_EQ(test, rsw_st_modify(qp, IB_QPS_INIT), 0);
	start = jiffies;
	ib_drain_qp(qp);
	KUNIT_EXPECT_LT(test, jiffies - start, 10UL * HZ);
	KUNIT_EXPECT_EQ(test, rsw_st_state(test, qp), IB_QPS_ERR);
	/* The entry was never taken: another QP could still have it. */
	KUNIT_EXPECT_EQ(test, to_rsw_srq(srq)->tail - to_rsw_srq(srq)->head,
			1U);
	KUNIT_EXPECT_EQ(test, rsw_st_take(test, qp, &idx), -1);
}

/* -------------------------------------------------------------- lifetime */

/*
 * ib_core refuses to destroy an SRQ in use; a QP holding a taken entry is
 * destroyed cleanly (kmemleak and KASAN watch), then the SRQ.
 */
static void rsw_st_destroy_order(struct kunit *test)
{
	struct ib_srq_init_attr init = {
		.srq_type = IB_SRQT_BASIC,
		.attr = { .max_wr = 4, .max_sge = 1 },
	};
	struct ib_cq *cq = rsw_st_cq(test, 16);
	struct ib_qp_init_attr qattr = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = { .max_send_wr = 4, .max_send_sge = 1 },
	};
	struct ib_srq *srq;
	struct ib_qp *qp;
	u32 idx;

	srq = ib_create_srq(rsw_st.pd, &init);
	KUNIT_ASSERT_FALSE(test, IS_ERR(srq));
	qattr.srq = srq;
	qp = ib_create_qp(rsw_st.pd, &qattr);
	KUNIT_ASSERT_FALSE(test, IS_ERR(qp));
	KUNIT_ASSERT_EQ(test, rsw_st_post(srq, 1, 8), 0);
	KUNIT_ASSERT_EQ(test, rsw_st_post(srq, 2, 8), 0);
	KUNIT_EXPECT_EQ(test, rsw_st_take(test, qp, &idx), 1);
	KUNIT_EXPECT_EQ(test, ib_destroy_srq_user(srq, NULL), -EBUSY);
	KUNIT_EXPECT_EQ(test, ib_destroy_qp(qp), 0);
	KUNIT_EXPECT_EQ(test, ib_destroy_srq_user(srq, NULL), 0);
	rsw_st_expect_empty(test, cq);
}

struct rsw_st_destroyer {
	struct work_struct work;
	struct ib_qp *qp;
	struct completion done;
};

static void rsw_st_destroy_work(struct work_struct *work)
{
	struct rsw_st_destroyer *d = container_of(work, typeof(*d), work);

	ib_destroy_qp(d->qp);
	complete(&d->done);
}

/*
 * A stream mid-take while its QP is destroyed: destroy_qp waits for the
 * holder's reference, the holder's take finds the QP dead (nothing leaves
 * the SRQ) and its completion of an earlier take goes nowhere; the SRQ is
 * intact afterwards.
 */
static void rsw_st_destroy_holder(struct kunit *test)
{
	struct ib_srq *srq = rsw_st_srq(test, 4, 1, NULL);
	struct ib_cq *cq = rsw_st_cq(test, 16);
	struct ib_qp_init_attr attr = {
		.send_cq = cq, .recv_cq = cq, .srq = srq, .qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = { .max_send_wr = 4, .max_send_sge = 1 },
	};
	struct rsw_st_destroyer d = {};
	struct rdmap_sw_rqe *rqe;
	unsigned long deadline;
	struct rsw_qp *held;
	u32 idx, idx2;

	rqe = kunit_kzalloc(test, sizeof(*rqe), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, rqe);
	d.qp = ib_create_qp(rsw_st.pd, &attr);
	KUNIT_ASSERT_FALSE(test, IS_ERR(d.qp));
	KUNIT_ASSERT_EQ(test, rsw_st_post(srq, 1, 8), 0);
	KUNIT_ASSERT_EQ(test, rsw_st_post(srq, 2, 8), 0);
	held = rsw_qp_lookup(to_rsw_dev(rsw_st.ibdev), d.qp->qp_num);
	KUNIT_ASSERT_PTR_EQ(test, held, to_rsw_qp(d.qp));
	KUNIT_ASSERT_TRUE(test, rsw_qp_rq_take(held, rqe, &idx));

	init_completion(&d.done);
	INIT_WORK_ONSTACK(&d.work, rsw_st_destroy_work);
	schedule_work(&d.work);
	deadline = jiffies + 10 * HZ;
	while (!READ_ONCE(held->dead) && time_before(jiffies, deadline))
		usleep_range(1000, 2000);
	KUNIT_EXPECT_TRUE(test, READ_ONCE(held->dead));
	KUNIT_EXPECT_FALSE(test, rsw_qp_rq_take(held, rqe, &idx2));
	KUNIT_EXPECT_EQ(test, to_rsw_srq(srq)->tail - to_rsw_srq(srq)->head,
			1U);
	rsw_st_complete(d.qp, idx, RDMAP_SW_WC_WR_FLUSH_ERR, 0);
	KUNIT_EXPECT_FALSE(test, completion_done(&d.done));
	rsw_qp_put(held);
	KUNIT_EXPECT_TRUE(test, wait_for_completion_timeout(&d.done, 10 * HZ));
	flush_work(&d.work);
	destroy_work_on_stack(&d.work);
	rsw_st_expect_empty(test, cq);
}

/* ---------------------------------------------------------------- resize */

static int rsw_st_resize(struct ib_srq *srq, u32 max_wr)
{
	struct ib_srq_attr attr = { .max_wr = max_wr };

	return ib_modify_srq(srq, &attr, IB_SRQ_MAX_WR);
}

static u32 rsw_st_max_wr(struct kunit *test, struct ib_srq *srq)
{
	struct ib_srq_attr attr;

	KUNIT_ASSERT_EQ(test, ib_query_srq(srq, &attr), 0);
	return attr.max_wr;
}

struct rsw_st_resize_case {
	const char *name;
	u32 wr;			/* created with */
	u32 skip;		/* posted and taken before */
	u32 posted;		/* posted, not taken, at the resize */
	u32 new_wr;
	int ret;
};

static const struct rsw_st_resize_case rsw_st_resize_cases[] = {
	{ "grow 8 -> 64, 5 posted", 8, 0, 5, 64, 0 },
	{ "grow a full 8 -> 16, wrapped", 8, 5, 8, 16, 0 },
	{ "shrink 64 -> 4, 4 posted", 64, 3, 4, 4, 0 },
	{ "shrink 64 -> 8 (rounded up from 5), 7 posted", 64, 61, 7, 5, 0 },
	{ "shrink an empty SRQ to 1", 16, 9, 0, 1, 0 },
	{ "refused: 5 posted, 4 asked", 16, 0, 5, 4, -EINVAL },
	{ "refused: over max_srq_wr", 16, 0, 1, RSW_MAX_SRQ_WR + 1, -EINVAL },
};

KUNIT_ARRAY_PARAM_DESC(rsw_st_resize, rsw_st_resize_cases, name);

/*
 * Posted receives survive a resize, in order, and the new size holds
 * exactly that many; a refused resize leaves size and entries alone.
 */
static void rsw_st_resize_keeps_posted(struct kunit *test)
{
	const struct rsw_st_resize_case *c = test->param_value;
	struct ib_srq *srq = rsw_st_srq(test, c->wr, 1, NULL);
	struct ib_cq *cq = rsw_st_cq(test, 16);
	struct ib_qp *qp = rsw_st_qp(test, srq, cq, cq, NULL);
	u32 old = rsw_st_max_wr(test, srq), size, i, idx;
	u64 id = 0;

	for (i = 0; i < c->skip; i++, id++) {
		KUNIT_ASSERT_EQ(test, rsw_st_post(srq, id, 4), 0);
		KUNIT_ASSERT_EQ(test, rsw_st_take(test, qp, &idx), id);
		rsw_st_complete(qp, idx, RDMAP_SW_WC_SUCCESS, 4);
		rsw_st_expect_wc(test, cq, qp, id, IB_WC_SUCCESS);
	}
	for (i = 0; i < c->posted; i++)
		KUNIT_ASSERT_EQ(test, rsw_st_post(srq, id + i, 4), 0);
	KUNIT_ASSERT_EQ(test, rsw_st_resize(srq, c->new_wr), c->ret);
	size = c->ret ? old : roundup_pow_of_two(c->new_wr);
	KUNIT_EXPECT_EQ(test, rsw_st_max_wr(test, srq), size);
	/* Exactly size receives fit now. */
	for (i = c->posted; i < size; i++)
		KUNIT_ASSERT_EQ(test, rsw_st_post(srq, id + i, 4), 0);
	KUNIT_EXPECT_EQ(test, rsw_st_post(srq, id + size, 4), -ENOMEM);
	for (i = 0; i < size; i++) {
		KUNIT_ASSERT_EQ(test, rsw_st_take(test, qp, &idx), id + i);
		rsw_st_complete(qp, idx, RDMAP_SW_WC_SUCCESS, 4);
		rsw_st_expect_wc(test, cq, qp, id + i, IB_WC_SUCCESS);
	}
	KUNIT_EXPECT_EQ(test, rsw_st_take(test, qp, &idx), -1);
}

/* A limit above the size the call leaves refuses resize and limit both. */
static void rsw_st_resize_limit_checked(struct kunit *test)
{
	struct ib_srq *srq = rsw_st_srq(test, 16, 1, NULL);
	struct ib_srq_attr attr = { .max_wr = 4, .srq_limit = 5 };

	KUNIT_EXPECT_EQ(test, ib_modify_srq(srq, &attr,
					    IB_SRQ_MAX_WR | IB_SRQ_LIMIT),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, rsw_st_max_wr(test, srq), 16);
	attr.srq_limit = 4;
	KUNIT_EXPECT_EQ(test, ib_modify_srq(srq, &attr,
					    IB_SRQ_MAX_WR | IB_SRQ_LIMIT), 0);
	KUNIT_ASSERT_EQ(test, ib_query_srq(srq, &attr), 0);
	KUNIT_EXPECT_EQ(test, attr.max_wr, 4);
	KUNIT_EXPECT_EQ(test, attr.srq_limit, 4);
}

/*
 * The user layout: the new control page starts at the old head and tail,
 * the posted entries sit at their indices in the new ring, and the
 * process goes on writing there; a tail out of bounds refuses the resize.
 */
static void rsw_st_user_resize(struct kunit *test)
{
	struct ib_srq *srq = rsw_st_usrq(test, 4, 1);
	struct ib_cq *cq = rsw_st_cq(test, 16);
	struct ib_qp *qp = rsw_st_qp(test, srq, cq, cq, NULL);
	struct rdmap_sw_wq_ctrl *old;
	u32 n, idx;

	for (n = 0; n < 4; n++)
		rsw_st_uentry(srq, n, 500 + n, 4);
	rsw_st_utail(srq, 3);
	KUNIT_ASSERT_EQ(test, rsw_st_take(test, qp, &idx), 500);
	rsw_st_complete(qp, idx, RDMAP_SW_WC_SUCCESS, 4);
	rsw_st_expect_wc(test, cq, qp, 500, IB_WC_SUCCESS);
	/* A bogus tail: refused, nothing changed. */
	rsw_st_utail(srq, 9);
	old = rsw_srq_uctrl(srq);
	KUNIT_EXPECT_EQ(test, rsw_st_resize(srq, 16), -EINVAL);
	KUNIT_EXPECT_PTR_EQ(test, rsw_srq_uctrl(srq), old);
	KUNIT_EXPECT_EQ(test, rsw_st_max_wr(test, srq), 4);

	rsw_st_utail(srq, 4);
	KUNIT_ASSERT_EQ(test, rsw_st_resize(srq, 16), 0);
	KUNIT_EXPECT_PTR_NE(test, rsw_srq_uctrl(srq), old);
	KUNIT_EXPECT_EQ(test, READ_ONCE(rsw_srq_uctrl(srq)->head), 1);
	KUNIT_EXPECT_EQ(test, READ_ONCE(rsw_srq_uctrl(srq)->tail), 4);
	for (n = 4; n < 17; n++)
		rsw_st_uentry(srq, n, 500 + n, 4);
	rsw_st_utail(srq, 17);
	for (n = 1; n < 17; n++) {
		KUNIT_ASSERT_EQ(test, rsw_st_take(test, qp, &idx), 500 + n);
		rsw_st_complete(qp, idx, RDMAP_SW_WC_SUCCESS, 4);
		rsw_st_expect_wc(test, cq, qp, 500 + n, IB_WC_SUCCESS);
	}
	KUNIT_EXPECT_EQ(test, READ_ONCE(rsw_srq_uctrl(srq)->head), 17);
}

/* The process posts two more entries during the resize command. */
static void rsw_st_tail_moves(struct ib_srq *srq)
{
	rsw_st_uentry(srq, 4, 504, 4);
	rsw_st_uentry(srq, 5, 505, 4);
	rsw_st_utail(srq, 6);
}

/*
 * The posted entries are copied outside srq->lock before the switch, so
 * a user SRQ whose tail moved during the command (its provider holds
 * posts back) is refused, nothing changed; the resize with the tail left
 * alone keeps every entry, those posted before the refusal included.
 */
static void rsw_st_user_resize_tail_moved(struct kunit *test)
{
	struct ib_srq *srq = rsw_st_usrq(test, 8, 1);
	struct rdmap_sw_wq_ctrl *old = rsw_srq_uctrl(srq);
	struct ib_cq *cq = rsw_st_cq(test, 16);
	struct ib_qp *qp = rsw_st_qp(test, srq, cq, cq, NULL);
	u32 n, idx;

	for (n = 0; n < 4; n++)
		rsw_st_uentry(srq, n, 500 + n, 4);
	rsw_st_utail(srq, 4);
	KUNIT_EXPECT_EQ(test, rsw_srq_resize_steps(srq, 16, rsw_st_tail_moves),
			-EINVAL);
	KUNIT_EXPECT_PTR_EQ(test, rsw_srq_uctrl(srq), old);
	KUNIT_EXPECT_EQ(test, rsw_st_max_wr(test, srq), 8);

	KUNIT_ASSERT_EQ(test, rsw_srq_resize_steps(srq, 16, NULL), 0);
	KUNIT_EXPECT_PTR_NE(test, rsw_srq_uctrl(srq), old);
	KUNIT_EXPECT_EQ(test, rsw_st_max_wr(test, srq), 16);
	KUNIT_EXPECT_EQ(test, READ_ONCE(rsw_srq_uctrl(srq)->tail), 6);
	for (n = 0; n < 6; n++) {
		KUNIT_ASSERT_EQ(test, rsw_st_take(test, qp, &idx), 500 + n);
		rsw_st_complete(qp, idx, RDMAP_SW_WC_SUCCESS, 4);
		rsw_st_expect_wc(test, cq, qp, 500 + n, IB_WC_SUCCESS);
	}
}

static struct kunit_case rsw_srq_cases[] = {
	KUNIT_CASE_PARAM(rsw_st_create_query, rsw_st_create_gen_params),
	KUNIT_CASE(rsw_st_device_attrs),
	KUNIT_CASE(rsw_st_modify_limit),
	KUNIT_CASE(rsw_st_post_bad),
	KUNIT_CASE(rsw_st_take_order),
	KUNIT_CASE(rsw_st_limit_event),
	KUNIT_CASE_PARAM(rsw_st_user_hostile, rsw_st_hostile_gen_params),
	KUNIT_CASE(rsw_st_user_tail_bound),
	KUNIT_CASE(rsw_st_user_wrap),
	KUNIT_CASE(rsw_st_error_flush),
	KUNIT_CASE(rsw_st_last_wqe_idle),
	KUNIT_CASE(rsw_st_drain),
	KUNIT_CASE(rsw_st_destroy_order),
	KUNIT_CASE(rsw_st_destroy_holder),
	KUNIT_CASE_PARAM(rsw_st_resize_keeps_posted, rsw_st_resize_gen_params),
	KUNIT_CASE(rsw_st_resize_limit_checked),
	KUNIT_CASE(rsw_st_user_resize),
	KUNIT_CASE(rsw_st_user_resize_tail_moved),
	{}
};

static struct kunit_suite rsw_srq_suite = {
	.name = "rdmap_sw_srq",
	.suite_init = rsw_st_suite_init,
	.suite_exit = rsw_st_suite_exit,
	.test_cases = rsw_srq_cases,
};

kunit_test_suite(rsw_srq_suite);

MODULE_DESCRIPTION("KUnit tests for rdmap_sw shared receive queues");
MODULE_LICENSE("GPL");
