// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite rdmap_sw_iw: the QP references iw_cm takes through the
 * device ops, iw_get_qp then iw_add_ref (both under iw_cm's cm_id lock,
 * iw_cm_connect() and iw_cm_accept()), dropped with iw_rem_ref.  A destroy
 * that runs between the two calls must wait for iw_cm, not free the QP.
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

#include "env.h"
#include "internal.h"

RSW_IMPORT_KUNIT_NS();

static const u8 rsw_iwt_mac[ETH_ALEN] = { 0x02, 0x00, 0x5e, 0x30, 0x70, 0x01 };

static struct rsw_env_suite rsw_iwt;

static int rsw_iwt_suite_init(struct kunit_suite *suite)
{
	return rsw_env_suite_init(&rsw_iwt, rsw_iwt_mac, "rswiwt%d", "rswiwt0");
}

static void rsw_iwt_suite_exit(struct kunit_suite *suite)
{
	rsw_env_suite_exit(&rsw_iwt);
}

/* A QP on its own CQ, and a work that destroys both. */
struct rsw_iwt_qp {
	struct ib_cq *cq;
	struct ib_qp *qp;
	struct work_struct destroy;
	struct completion destroyed;
};

static void rsw_iwt_destroy_work(struct work_struct *work)
{
	struct rsw_iwt_qp *t = container_of(work, typeof(*t), destroy);

	ib_destroy_qp(t->qp);
	ib_destroy_cq(t->cq);
	complete(&t->destroyed);
}

static void rsw_iwt_create(struct kunit *test, struct rsw_iwt_qp *t)
{
	struct ib_cq_init_attr cq_attr = { .cqe = 4 };
	struct ib_qp_init_attr attr = {
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = { .max_send_wr = 2, .max_recv_wr = 2,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	t->cq = ib_create_cq(rsw_iwt.ibdev, NULL, NULL, NULL, &cq_attr);
	KUNIT_ASSERT_FALSE(test, IS_ERR(t->cq));
	attr.send_cq = t->cq;
	attr.recv_cq = t->cq;
	t->qp = ib_create_qp(rsw_iwt.pd, &attr);
	if (IS_ERR(t->qp))
		ib_destroy_cq(t->cq);
	KUNIT_ASSERT_FALSE(test, IS_ERR(t->qp));
	INIT_WORK_ONSTACK(&t->destroy, rsw_iwt_destroy_work);
	init_completion(&t->destroyed);
}

/* Start destroying @t; true if it finished within @ms (nobody held it). */
static bool rsw_iwt_destroy(struct rsw_iwt_qp *t, unsigned int ms)
{
	schedule_work(&t->destroy);
	return wait_for_completion_timeout(&t->destroyed,
					   msecs_to_jiffies(ms));
}

static void rsw_iwt_finish(struct kunit *test, struct rsw_iwt_qp *t)
{
	KUNIT_EXPECT_TRUE(test, wait_for_completion_timeout(&t->destroyed,
							    10 * HZ));
	flush_work(&t->destroy);
	destroy_work_on_stack(&t->destroy);
}

/*
 * Regression (issue 10, defect 4): iw_get_qp used to drop its lookup
 * reference at once, so a destroy_qp before iw_add_ref freed the QP iw_cm
 * was about to reference.  Now the QP it returns stays until iw_cm's
 * iw_add_ref + iw_rem_ref, and only then does the destroy return.
 */
static void rsw_iwt_get_qp_pins(struct kunit *test)
{
	const struct ib_device_ops *ops = &rsw_iwt.ibdev->ops;
	unsigned long deadline;
	struct rsw_iwt_qp t;
	struct ib_qp *got;

	rsw_iwt_create(test, &t);
	got = ops->iw_get_qp(rsw_iwt.ibdev, t.qp->qp_num);
	KUNIT_ASSERT_PTR_EQ(test, got, t.qp);
	if (rsw_iwt_destroy(&t, 800)) {
		/* The QP is freed: iw_cm's add_ref would be a use-after-free. */
		flush_work(&t.destroy);
		destroy_work_on_stack(&t.destroy);
		KUNIT_FAIL(test, "destroy_qp returned between iw_get_qp and iw_add_ref");
		return;
	}
	/* Pinned: wait until destroy_qp has unpublished it. */
	deadline = jiffies + 10 * HZ;
	while (!READ_ONCE(to_rsw_qp(got)->dead) && time_before(jiffies, deadline))
		usleep_range(1000, 2000);
	KUNIT_EXPECT_TRUE(test, READ_ONCE(to_rsw_qp(got)->dead));
	KUNIT_EXPECT_NULL(test, ops->iw_get_qp(rsw_iwt.ibdev, t.qp->qp_num));
	ops->iw_add_ref(got);
	KUNIT_EXPECT_FALSE(test, completion_done(&t.destroyed));
	ops->iw_rem_ref(got);
	rsw_iwt_finish(test, &t);
}

/* iw_add_ref with no iw_get_qp before it takes a reference of its own. */
static void rsw_iwt_add_ref_unlent(struct kunit *test)
{
	const struct ib_device_ops *ops = &rsw_iwt.ibdev->ops;
	struct rsw_iwt_qp t;

	rsw_iwt_create(test, &t);
	ops->iw_add_ref(t.qp);
	KUNIT_EXPECT_FALSE(test, rsw_iwt_destroy(&t, 200));
	ops->iw_rem_ref(t.qp);
	rsw_iwt_finish(test, &t);
}

/* Two lookups, two add_refs (two cm_ids on one QPN), in either order. */
static void rsw_iwt_two_lent(struct kunit *test)
{
	const struct ib_device_ops *ops = &rsw_iwt.ibdev->ops;
	struct rsw_iwt_qp t;
	struct ib_qp *a, *b;

	rsw_iwt_create(test, &t);
	a = ops->iw_get_qp(rsw_iwt.ibdev, t.qp->qp_num);
	b = ops->iw_get_qp(rsw_iwt.ibdev, t.qp->qp_num);
	KUNIT_ASSERT_PTR_EQ(test, a, t.qp);
	KUNIT_ASSERT_PTR_EQ(test, b, t.qp);
	ops->iw_add_ref(b);
	ops->iw_add_ref(a);
	KUNIT_EXPECT_FALSE(test, rsw_iwt_destroy(&t, 200));
	ops->iw_rem_ref(a);
	KUNIT_EXPECT_FALSE(test, wait_for_completion_timeout(&t.destroyed,
							     HZ / 5));
	ops->iw_rem_ref(b);
	rsw_iwt_finish(test, &t);
}

static struct kunit_case rsw_iw_cases[] = {
	KUNIT_CASE(rsw_iwt_get_qp_pins),
	KUNIT_CASE(rsw_iwt_add_ref_unlent),
	KUNIT_CASE(rsw_iwt_two_lent),
	{}
};

static struct kunit_suite rsw_iw_suite = {
	.name = "rdmap_sw_iw",
	.suite_init = rsw_iwt_suite_init,
	.suite_exit = rsw_iwt_suite_exit,
	.test_cases = rsw_iw_cases,
};

kunit_test_suite(rsw_iw_suite);

MODULE_DESCRIPTION("KUnit tests for rdmap_sw's iw_cm QP references");
MODULE_LICENSE("GPL");
