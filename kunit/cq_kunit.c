// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite rdmap_sw_cq: completion queues created through the real
 * ib_core (ib_create_cq / ib_alloc_cq) on an rdmap_sw device attached to a
 * throw-away Ethernet netdev, filled with rsw_cq_push() as the QP code will
 * fill them and drained with ib_poll_cq() and ib_core's own pollers.
 *
 * Whether a notification fired is decided without sleeping on luck:
 * rsw_cq_push() queues the CQ's notify_work before it returns, so after
 * flush_work() every notification it owed has been delivered.
 *
 * KUnit actions undo in reverse order, so each CQ (registered after its
 * device) is destroyed before the netdev, and with it the device, goes.
 */
#include <kunit/resource.h>
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/mutex.h>
#include <linux/etherdevice.h>
#include <linux/netdevice.h>
#include <linux/prandom.h>
#include <linux/sched.h>
#include <linux/smp.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

#include "cq.h"
#include "env.h"
#include "internal.h"

RSW_IMPORT_KUNIT_NS();

#define RSW_KT_TIMEOUT (10 * HZ)

/* One CQ under test and what its handlers saw. */
struct rsw_kt_cq {
	struct kunit *test;
	struct ib_device *ibdev;
	struct ib_cq *ibcq;
	struct rsw_cq *cq;
	struct ib_qp *qp;		/* identity only, never dereferenced */

	atomic_t comps;			/* comp_handler calls */
	struct completion comp_seen;
	atomic_t errs;			/* IB_EVENT_CQ_ERR events */
	struct completion err_seen;
	bool bad_event;			/* any other event, or wrong CQ */

	/* Set by a producer around rsw_cq_push(). */
	struct task_struct *push_task;
	bool in_push;
	/* Set by comp_handler. */
	bool nested;			/* ran inside that producer's call */
	bool bad_ctx;			/* not a BH-disabled workqueue worker */

	/* Destroy-race case: the first handler call spins until release. */
	bool hold;
	struct completion held;
	bool release;
	bool hold_timed_out;
	bool destroyed;			/* ib_destroy_cq() returned */
	bool late;			/* a handler ran after that */
};

/* ---------------------------------------------------------------- device */

/*
 * A registered Ethernet netdev with an rdmap_sw device attached through
 * rdma_link_ops.newlink; unregistering the netdev (a KUnit action) removes
 * the device again.
 */
static struct ib_device *rsw_kt_device(struct kunit *test)
{
	static const u8 mac[ETH_ALEN] = { 0x02, 0x00, 0x5e, 0xc0, 0x00, 0x01 };
	static atomic_t seq = ATOMIC_INIT(0);
	char name[IB_DEVICE_NAME_MAX];
	struct net_device *ndev;
	struct ib_device *ibdev;

	ndev = rsw_env_netdev(test, mac, "rswcq%d");
	snprintf(name, sizeof(name), "rswcq%d", atomic_inc_return(&seq));
	/* Only the netdev action removes it: no reference kept. */
	ibdev = rsw_env_attach(ndev, name);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ibdev);
	return ibdev;
}

/* ------------------------------------------------------------------- CQs */

static void rsw_kt_comp(struct ib_cq *ibcq, void *ctx)
{
	struct rsw_kt_cq *kt = ctx;
	unsigned long deadline;

	if (READ_ONCE(kt->in_push) && READ_ONCE(kt->push_task) == current)
		WRITE_ONCE(kt->nested, true);
	if (!(current->flags & PF_WQ_WORKER) || in_hardirq() || !in_softirq())
		WRITE_ONCE(kt->bad_ctx, true);
	if (READ_ONCE(kt->destroyed))
		WRITE_ONCE(kt->late, true);

	if (READ_ONCE(kt->hold) && atomic_read(&kt->comps) == 0) {
		/* Bottom halves are off: spin, never sleep. */
		complete(&kt->held);
		deadline = jiffies + RSW_KT_TIMEOUT;
		while (!READ_ONCE(kt->release)) {
			if (time_after(jiffies, deadline)) {
				WRITE_ONCE(kt->hold_timed_out, true);
				break;
			}
			cpu_relax();
		}
	}
	atomic_inc(&kt->comps);
	complete(&kt->comp_seen);
}

static void rsw_kt_event(struct ib_event *ev, void *ctx)
{
	struct rsw_kt_cq *kt = ctx;

	if (ev->event != IB_EVENT_CQ_ERR || ev->element.cq != kt->ibcq ||
	    ev->device != kt->ibdev) {
		WRITE_ONCE(kt->bad_event, true);
		return;
	}
	atomic_inc(&kt->errs);
	complete(&kt->err_seen);
}

static void rsw_kt_destroy_cq(void *data)
{
	struct rsw_kt_cq *kt = data;

	if (kt->ibcq)
		ib_destroy_cq(kt->ibcq);
}

/* A kernel CQ of at least @cqe entries, created with ib_create_cq(). */
static struct rsw_kt_cq *rsw_kt_cq(struct kunit *test, unsigned int cqe)
{
	struct ib_cq_init_attr attr = { .cqe = cqe };
	struct rsw_kt_cq *kt;
	int ret;

	kt = kunit_kzalloc(test, sizeof(*kt), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, kt);
	kt->qp = kunit_kzalloc(test, sizeof(*kt->qp), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, kt->qp);
	kt->test = test;
	init_completion(&kt->comp_seen);
	init_completion(&kt->err_seen);
	init_completion(&kt->held);
	kt->ibdev = rsw_kt_device(test);

	kt->ibcq = ib_create_cq(kt->ibdev, rsw_kt_comp, rsw_kt_event, kt,
				&attr);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(kt->ibcq), "ib_create_cq: %ld",
			       PTR_ERR(kt->ibcq));
	kt->cq = to_rsw_cq(kt->ibcq);
	ret = kunit_add_action_or_reset(test, rsw_kt_destroy_cq, kt);
	KUNIT_ASSERT_EQ(test, ret, 0);
	return kt;
}

/* The entry rsw_kt_push() makes for @id: every field derived from it. */
static struct rdmap_sw_cqe rsw_kt_cqe(u64 id, u8 status)
{
	return (struct rdmap_sw_cqe) {
		.wr_id = id,
		.byte_len = (u32)id * 3,
		.qp_num = 17,
		.opcode = id % (RDMAP_SW_WC_RECV_RDMA_WITH_IMM + 1),
		.status = status,
	};
}

static int rsw_kt_push(struct rsw_kt_cq *kt, u64 id, u8 status,
		       bool solicited)
{
	struct rdmap_sw_cqe cqe = rsw_kt_cqe(id, status);

	return rsw_cq_push(kt->cq, &cqe, kt->qp, solicited);
}

/* Push ids [first, first + n), all successful and unsolicited. */
static void rsw_kt_fill(struct rsw_kt_cq *kt, u64 first, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		KUNIT_ASSERT_EQ(kt->test, rsw_kt_push(kt, first + i,
						      RDMAP_SW_WC_SUCCESS,
						      false), 0);
}

static void rsw_kt_arm(struct rsw_kt_cq *kt, enum ib_cq_notify_flags flags)
{
	KUNIT_ASSERT_EQ(kt->test, ib_req_notify_cq(kt->ibcq, flags), 0);
}

/* Every notification owed so far has been delivered. */
static void rsw_kt_settle(struct rsw_kt_cq *kt)
{
	flush_work(&kt->cq->notify_work);
}

static struct ib_wc *rsw_kt_wcs(struct kunit *test, unsigned int n)
{
	struct ib_wc *wc = kunit_kcalloc(test, n, sizeof(*wc), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, wc);
	return wc;
}

/* Poll and expect exactly ids [first, first + n). */
static void rsw_kt_expect_ids(struct rsw_kt_cq *kt, int batch, u64 first,
			      int n)
{
	struct ib_wc *wc = rsw_kt_wcs(kt->test, batch + 1);
	int i, got;

	got = ib_poll_cq(kt->ibcq, batch, wc);
	KUNIT_ASSERT_EQ(kt->test, got, n);
	for (i = 0; i < n; i++) {
		KUNIT_EXPECT_EQ(kt->test, wc[i].wr_id, first + i);
		KUNIT_EXPECT_PTR_EQ(kt->test, wc[i].qp, kt->qp);
	}
}

/* ---------------------------------------------------------- create/limits */

struct rsw_kt_size_case {
	const char *name;
	unsigned int cqe;
	int expect;
};

static const struct rsw_kt_size_case rsw_kt_size_cases[] = {
	{ "1 -> 1", 1, 1 },
	{ "2 -> 2", 2, 2 },
	{ "3 -> 4", 3, 4 },
	{ "100 -> 128", 100, 128 },
	{ "4096 -> 4096", 4096, 4096 },
	{ "65537 -> 131072", 65537, 131072 },
	{ "max_cqe - 1 -> max_cqe", RSW_MAX_CQE - 1, RSW_MAX_CQE },
	{ "max_cqe -> max_cqe", RSW_MAX_CQE, RSW_MAX_CQE },
};

KUNIT_ARRAY_PARAM_DESC(rsw_kt_size, rsw_kt_size_cases, name);

static void rsw_kt_create_rounds_up_to_power_of_two(struct kunit *test)
{
	const struct rsw_kt_size_case *c = test->param_value;
	struct rsw_kt_cq *kt = rsw_kt_cq(test, c->cqe);

	KUNIT_EXPECT_EQ(test, kt->ibcq->cqe, c->expect);
	KUNIT_EXPECT_EQ(test, kt->cq->ctrl->size, c->expect);
	KUNIT_EXPECT_EQ(test, kt->cq->ctrl->mask, c->expect - 1);
}

struct rsw_kt_capacity_case {
	const char *name;
	unsigned int cqe;
};

static const struct rsw_kt_capacity_case rsw_kt_capacity_cases[] = {
	{ "1 entry", 1 },
	{ "5 entries (8)", 5 },
	{ "1024 entries", 1024 },
};

KUNIT_ARRAY_PARAM_DESC(rsw_kt_capacity, rsw_kt_capacity_cases, name);

/* ibcq->cqe entries fit, one more does not (full is prod - cons == size). */
static void rsw_kt_capacity_is_reported_cqe(struct kunit *test)
{
	const struct rsw_kt_capacity_case *c = test->param_value;
	struct rsw_kt_cq *kt = rsw_kt_cq(test, c->cqe);
	int size = kt->ibcq->cqe;

	rsw_kt_fill(kt, 0, size);
	KUNIT_EXPECT_EQ(test, rsw_kt_push(kt, size, RDMAP_SW_WC_SUCCESS,
					  false), -ENOSPC);
	rsw_kt_expect_ids(kt, size + 1, 0, size);
}

struct rsw_kt_reject_case {
	const char *name;
	unsigned int cqe;
	bool bad_vector;	/* comp_vector = num_comp_vectors */
	u32 flags;
	int expect;
};

static const struct rsw_kt_reject_case rsw_kt_reject_cases[] = {
	{ "zero entries", 0, false, 0, -EINVAL },
	{ "over max_cqe", RSW_MAX_CQE + 1, false, 0, -EINVAL },
	{ "comp_vector out of range", 16, true, 0, -EINVAL },
	{ "timestamp flag", 16, false, IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION,
	  -EOPNOTSUPP },
	{ "ignore-overrun flag", 16, false, IB_UVERBS_CQ_FLAGS_IGNORE_OVERRUN,
	  -EOPNOTSUPP },
};

KUNIT_ARRAY_PARAM_DESC(rsw_kt_reject, rsw_kt_reject_cases, name);

static void rsw_kt_create_rejects_bad_attr(struct kunit *test)
{
	const struct rsw_kt_reject_case *c = test->param_value;
	struct ib_device *ibdev = rsw_kt_device(test);
	struct ib_cq_init_attr attr = {
		.cqe = c->cqe,
		.flags = c->flags,
		.comp_vector = c->bad_vector ? ibdev->num_comp_vectors : 0,
	};
	struct ib_cq *ibcq;

	ibcq = ib_create_cq(ibdev, NULL, NULL, NULL, &attr);
	if (!IS_ERR(ibcq))
		ib_destroy_cq(ibcq);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(ibcq), c->expect);
}

/*
 * A user CQ's ring is mapped through the process's context: udata without
 * one (no process behind it) is refused before anything is allocated.
 * Mapping itself needs a real process: scripts/tests/verbs.sh.
 */
static void rsw_kt_user_cq_refused(struct kunit *test)
{
	struct ib_device *ibdev = rsw_kt_device(test);
	struct ib_cq_init_attr attr = { .cqe = 16 };
	struct rsw_uarg *uarg;
	struct ib_cq *ibcq;

	uarg = kunit_kzalloc(test, sizeof(*uarg), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, uarg);
	ibcq = rdma_zalloc_drv_obj(ibdev, ib_cq);
	KUNIT_ASSERT_NOT_NULL(test, ibcq);
	ibcq->device = ibdev;
	KUNIT_EXPECT_EQ(test, ibdev->ops.create_cq(ibcq, &attr, uarg),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, atomic_read(&to_rsw_dev(ibdev)->num_cq), 0);
	kfree(ibcq);
}

static void rsw_kt_device_reports_cq_limits(struct kunit *test)
{
	struct ib_device *ibdev = rsw_kt_device(test);

	KUNIT_EXPECT_EQ(test, ibdev->attrs.max_cq, RSW_MAX_CQ);
	KUNIT_EXPECT_EQ(test, ibdev->attrs.max_cqe, RSW_MAX_CQE);
	KUNIT_EXPECT_TRUE(test, is_power_of_2(ibdev->attrs.max_cqe));
}

/* ------------------------------------------------ ring against reference */

/* Trivially correct FIFO: an array, popped by moving everything down. */
struct rsw_kt_ref {
	u64 *id;
	unsigned int len;
	unsigned int cap;
	u64 total;		/* entries ever accepted */
};

static void rsw_kt_ref_pop(struct rsw_kt_ref *ref)
{
	memmove(ref->id, ref->id + 1, --ref->len * sizeof(*ref->id));
}

struct rsw_kt_ring_case {
	const char *name;
	unsigned int cqe;
	u32 before_wrap;	/* start that many indices below 2^32, or 0 */
	unsigned int laps;
	u64 seed;
};

static const struct rsw_kt_ring_case rsw_kt_ring_cases[] = {
	{ "1 entry", 1, 0, 200, 1 },
	{ "2 entries", 2, 0, 200, 2 },
	{ "8 entries", 8, 0, 100, 3 },
	{ "5 (8) entries", 5, 0, 100, 4 },
	{ "64 entries", 64, 0, 50, 5 },
	{ "1 entry across 2^32", 1, 100, 200, 6 },
	{ "8 entries across 2^32", 8, 7, 100, 7 },
	{ "64 entries across 2^32", 64, 1000, 50, 8 },
};

KUNIT_ARRAY_PARAM_DESC(rsw_kt_ring, rsw_kt_ring_cases, name);

/* Push @k entries; the ring must refuse exactly those the reference can't. */
static bool rsw_kt_ring_push(struct rsw_kt_cq *kt, struct rsw_kt_ref *ref,
			     u64 *next, unsigned int k)
{
	u8 status;
	int ret;

	while (k--) {
		status = *next % 5 ? RDMAP_SW_WC_SUCCESS : RDMAP_SW_WC_REM_OP_ERR;
		ret = rsw_kt_push(kt, *next, status, false);
		if (ret != (ref->len == ref->cap ? -ENOSPC : 0)) {
			KUNIT_FAIL(kt->test, "push %llu with %u/%u queued: %d",
				   *next, ref->len, ref->cap, ret);
			return false;
		}
		if (!ret) {
			ref->id[ref->len++] = *next;
			ref->total++;
		}
		(*next)++;
	}
	return true;
}

/* Poll up to @batch; the ring must return the reference's head, in order. */
static bool rsw_kt_ring_poll(struct rsw_kt_cq *kt, struct rsw_kt_ref *ref,
			     struct ib_wc *wc, unsigned int batch)
{
	unsigned int want = min(batch, ref->len);
	struct rdmap_sw_cqe cqe;
	int i, got;

	got = ib_poll_cq(kt->ibcq, batch, wc);
	if (got != want) {
		KUNIT_FAIL(kt->test, "poll %u with %u queued: %d", batch,
			   ref->len, got);
		return false;
	}
	for (i = 0; i < got; i++) {
		bool ok = wc[i].status == IB_WC_SUCCESS;

		cqe = rsw_kt_cqe(ref->id[0], 0);
		if (wc[i].wr_id != ref->id[0] || wc[i].qp != kt->qp ||
		    wc[i].byte_len != cqe.byte_len ||
		    ok != !!(ref->id[0] % 5)) {
			KUNIT_FAIL(kt->test, "got wr_id %llu, want %llu",
				   wc[i].wr_id, ref->id[0]);
			return false;
		}
		rsw_kt_ref_pop(ref);
	}
	return true;
}

/*
 * Random interleavings of pushes (some beyond capacity) and polls of
 * random batch sizes, for @laps laps of the ring, optionally with the
 * free-running indices crossing 2^32 on the way.
 */
static void rsw_kt_ring_matches_reference(struct kunit *test)
{
	const struct rsw_kt_ring_case *c = test->param_value;
	struct rsw_kt_cq *kt = rsw_kt_cq(test, c->cqe);
	unsigned int size = kt->ibcq->cqe;
	u32 start = c->before_wrap ? 0U - c->before_wrap : 0;
	struct rsw_kt_ref ref = { .cap = size };
	struct rnd_state rnd;
	struct ib_wc *wc;
	u64 next = 0;

	ref.id = kunit_kcalloc(test, size, sizeof(*ref.id), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ref.id);
	wc = rsw_kt_wcs(test, size + 2);
	prandom_seed_state(&rnd, c->seed);
	rsw_cq_reset(kt->cq, start);

	while (ref.total < (u64)c->laps * size) {
		if (!rsw_kt_ring_push(kt, &ref, &next,
				      prandom_u32_state(&rnd) % (size + 2)))
			return;
		if (!rsw_kt_ring_poll(kt, &ref, wc,
				      prandom_u32_state(&rnd) % (size + 2)))
			return;
	}
	if (!rsw_kt_ring_poll(kt, &ref, wc, size + 2))
		return;
	KUNIT_EXPECT_EQ(test, ref.len, 0);
	if (c->before_wrap)
		KUNIT_EXPECT_LT_MSG(test, kt->cq->prod, start,
				    "indices did not wrap");
	KUNIT_EXPECT_EQ(test, kt->cq->ctrl->prod, kt->cq->prod);
	KUNIT_EXPECT_EQ(test, kt->cq->ctrl->cons, kt->cq->prod);
}

/* ------------------------------------------------------------------ poll */

struct rsw_kt_batch_case {
	const char *name;
	int pending;
	int batch;
	int expect;
};

static const struct rsw_kt_batch_case rsw_kt_batch_cases[] = {
	{ "empty ring", 0, 4, 0 },
	{ "batch 0", 5, 0, 0 },
	{ "batch 1 of 5", 5, 1, 1 },
	{ "batch 3 of 5", 5, 3, 3 },
	{ "batch 5 of 5", 5, 5, 5 },
	{ "batch 16 of 5", 5, 16, 5 },
	{ "batch 8 of a full 8", 8, 8, 8 },
	{ "batch 7 of a full 8", 8, 7, 7 },
};

KUNIT_ARRAY_PARAM_DESC(rsw_kt_batch, rsw_kt_batch_cases, name);

static void rsw_kt_poll_returns_batch_in_order(struct kunit *test)
{
	const struct rsw_kt_batch_case *c = test->param_value;
	struct rsw_kt_cq *kt = rsw_kt_cq(test, 8);

	rsw_kt_fill(kt, 0, c->pending);
	rsw_kt_expect_ids(kt, c->batch, 0, c->expect);
	/* The rest is still there, in order, after the batch. */
	rsw_kt_expect_ids(kt, 8, c->expect, c->pending - c->expect);
}

/* ------------------------------------------------------ ib_wc conversion */

struct rsw_kt_op_case {
	const char *name;
	u8 opcode;
	enum ib_wc_opcode expect;
};

static const struct rsw_kt_op_case rsw_kt_op_cases[] = {
	{ "SEND", RDMAP_SW_WC_SEND, IB_WC_SEND },
	{ "RDMA_WRITE", RDMAP_SW_WC_RDMA_WRITE, IB_WC_RDMA_WRITE },
	{ "RDMA_READ", RDMAP_SW_WC_RDMA_READ, IB_WC_RDMA_READ },
	{ "COMP_SWAP", RDMAP_SW_WC_COMP_SWAP, IB_WC_COMP_SWAP },
	{ "FETCH_ADD", RDMAP_SW_WC_FETCH_ADD, IB_WC_FETCH_ADD },
	{ "MASKED_COMP_SWAP", RDMAP_SW_WC_MASKED_COMP_SWAP,
	  IB_WC_MASKED_COMP_SWAP },
	{ "MASKED_FETCH_ADD", RDMAP_SW_WC_MASKED_FETCH_ADD,
	  IB_WC_MASKED_FETCH_ADD },
	{ "LOCAL_INV", RDMAP_SW_WC_LOCAL_INV, IB_WC_LOCAL_INV },
	{ "REG_MR", RDMAP_SW_WC_REG_MR, IB_WC_REG_MR },
	{ "BIND_MW", RDMAP_SW_WC_BIND_MW, IB_WC_BIND_MW },
	{ "RECV", RDMAP_SW_WC_RECV, IB_WC_RECV },
	{ "RECV_RDMA_WITH_IMM", RDMAP_SW_WC_RECV_RDMA_WITH_IMM,
	  IB_WC_RECV_RDMA_WITH_IMM },
};

KUNIT_ARRAY_PARAM_DESC(rsw_kt_op, rsw_kt_op_cases, name);

/* Push @cqe, poll it back through ib_core. */
static void rsw_kt_roundtrip(struct kunit *test,
			     const struct rdmap_sw_cqe *cqe, struct ib_wc *wc)
{
	struct rsw_kt_cq *kt = rsw_kt_cq(test, 4);

	KUNIT_ASSERT_EQ(test, rsw_cq_push(kt->cq, cqe, kt->qp, false), 0);
	KUNIT_ASSERT_EQ(test, ib_poll_cq(kt->ibcq, 4, wc), 1);
	KUNIT_EXPECT_PTR_EQ(test, wc->qp, kt->qp);
}

static void rsw_kt_wc_opcode_mapped(struct kunit *test)
{
	const struct rsw_kt_op_case *c = test->param_value;
	struct rdmap_sw_cqe cqe = {
		.wr_id = 0x1122334455667788ULL,
		.byte_len = 4096,
		.opcode = c->opcode,
	};
	struct ib_wc wc;

	rsw_kt_roundtrip(test, &cqe, &wc);
	KUNIT_EXPECT_EQ(test, wc.opcode, c->expect);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.wr_id, cqe.wr_id);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 4096);
	KUNIT_EXPECT_EQ(test, wc.wc_flags, 0);
}

struct rsw_kt_status_case {
	const char *name;
	u8 status;
	enum ib_wc_status expect;
};

static const struct rsw_kt_status_case rsw_kt_status_cases[] = {
	{ "SUCCESS", RDMAP_SW_WC_SUCCESS, IB_WC_SUCCESS },
	{ "LOC_LEN_ERR", RDMAP_SW_WC_LOC_LEN_ERR, IB_WC_LOC_LEN_ERR },
	{ "LOC_QP_OP_ERR", RDMAP_SW_WC_LOC_QP_OP_ERR, IB_WC_LOC_QP_OP_ERR },
	{ "LOC_PROT_ERR", RDMAP_SW_WC_LOC_PROT_ERR, IB_WC_LOC_PROT_ERR },
	{ "WR_FLUSH_ERR", RDMAP_SW_WC_WR_FLUSH_ERR, IB_WC_WR_FLUSH_ERR },
	{ "MW_BIND_ERR", RDMAP_SW_WC_MW_BIND_ERR, IB_WC_MW_BIND_ERR },
	{ "BAD_RESP_ERR", RDMAP_SW_WC_BAD_RESP_ERR, IB_WC_BAD_RESP_ERR },
	{ "LOC_ACCESS_ERR", RDMAP_SW_WC_LOC_ACCESS_ERR, IB_WC_LOC_ACCESS_ERR },
	{ "REM_INV_REQ_ERR", RDMAP_SW_WC_REM_INV_REQ_ERR,
	  IB_WC_REM_INV_REQ_ERR },
	{ "REM_ACCESS_ERR", RDMAP_SW_WC_REM_ACCESS_ERR, IB_WC_REM_ACCESS_ERR },
	{ "REM_OP_ERR", RDMAP_SW_WC_REM_OP_ERR, IB_WC_REM_OP_ERR },
	{ "RESP_TIMEOUT_ERR", RDMAP_SW_WC_RESP_TIMEOUT_ERR,
	  IB_WC_RESP_TIMEOUT_ERR },
	{ "REM_ABORT_ERR", RDMAP_SW_WC_REM_ABORT_ERR, IB_WC_REM_ABORT_ERR },
	{ "FATAL_ERR", RDMAP_SW_WC_FATAL_ERR, IB_WC_FATAL_ERR },
	{ "GENERAL_ERR", RDMAP_SW_WC_GENERAL_ERR, IB_WC_GENERAL_ERR },
};

KUNIT_ARRAY_PARAM_DESC(rsw_kt_status, rsw_kt_status_cases, name);

static void rsw_kt_wc_status_mapped(struct kunit *test)
{
	const struct rsw_kt_status_case *c = test->param_value;
	/* A Terminate's layer 1 (DDP), type 2, code 0x05 as vendor_err. */
	u32 verr = 1 << RDMAP_SW_CQE_TERM_LAYER_SHIFT |
		   2 << RDMAP_SW_CQE_TERM_ETYPE_SHIFT |
		   5 << RDMAP_SW_CQE_TERM_ECODE_SHIFT;
	struct rdmap_sw_cqe cqe = {
		.wr_id = 7,
		.opcode = RDMAP_SW_WC_SEND,
		.status = c->status,
		.vendor_err = verr,
	};
	struct ib_wc wc;

	rsw_kt_roundtrip(test, &cqe, &wc);
	KUNIT_EXPECT_EQ(test, wc.status, c->expect);
	KUNIT_EXPECT_EQ(test, wc.vendor_err, 0x1205);
	KUNIT_EXPECT_EQ(test, wc.wr_id, 7);
}

struct rsw_kt_ex_case {
	const char *name;
	u8 flags;
	int wc_flags;
};

static const struct rsw_kt_ex_case rsw_kt_ex_cases[] = {
	{ "no ex_data", 0, 0 },
	{ "immediate data", RDMAP_SW_CQE_WITH_IMM, IB_WC_WITH_IMM },
	{ "invalidated STag", RDMAP_SW_CQE_WITH_INV, IB_WC_WITH_INVALIDATE },
};

KUNIT_ARRAY_PARAM_DESC(rsw_kt_ex, rsw_kt_ex_cases, name);

static void rsw_kt_wc_ex_data_mapped(struct kunit *test)
{
	const struct rsw_kt_ex_case *c = test->param_value;
	__be32 imm = cpu_to_be32(0xa1b2c3d4);
	struct rdmap_sw_cqe cqe = {
		.opcode = RDMAP_SW_WC_RECV,
		.flags = c->flags,
		.ex_data = c->flags & RDMAP_SW_CQE_WITH_IMM ?
			   (__force u32)imm : 0x00abcd17,
	};
	struct ib_wc wc;

	rsw_kt_roundtrip(test, &cqe, &wc);
	KUNIT_EXPECT_EQ(test, wc.wc_flags, c->wc_flags);
	if (c->flags & RDMAP_SW_CQE_WITH_IMM)
		KUNIT_EXPECT_EQ(test, be32_to_cpu(wc.ex.imm_data), 0xa1b2c3d4);
	if (c->flags & RDMAP_SW_CQE_WITH_INV)
		KUNIT_EXPECT_EQ(test, wc.ex.invalidate_rkey, 0x00abcd17);
}

struct rsw_kt_bad_case {
	const char *name;
	struct rdmap_sw_cqe cqe;
	bool no_qp;
};

static const struct rsw_kt_bad_case rsw_kt_bad_cases[] = {
	{ "opcode out of range",
	  { .opcode = RDMAP_SW_WC_RECV_RDMA_WITH_IMM + 1 } },
	{ "status out of range",
	  { .status = RDMAP_SW_WC_GENERAL_ERR + 1 } },
	{ "immediate and invalidate",
	  { .flags = RDMAP_SW_CQE_WITH_IMM | RDMAP_SW_CQE_WITH_INV } },
	{ "no QP", {}, true },
};

KUNIT_ARRAY_PARAM_DESC(rsw_kt_bad, rsw_kt_bad_cases, name);

static void rsw_kt_push_rejects_malformed(struct kunit *test)
{
	const struct rsw_kt_bad_case *c = test->param_value;
	struct rsw_kt_cq *kt = rsw_kt_cq(test, 4);
	struct ib_wc wc[2];

	rsw_kt_arm(kt, IB_CQ_NEXT_COMP);
	KUNIT_EXPECT_EQ(test, rsw_cq_push(kt->cq, &c->cqe,
					  c->no_qp ? NULL : kt->qp, true),
			-EINVAL);
	rsw_kt_settle(kt);
	KUNIT_EXPECT_EQ(test, ib_poll_cq(kt->ibcq, 2, wc), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&kt->comps), 0);
}

/* -------------------------------------------------------------- overflow */

static void rsw_kt_overflow_reports_cq_err(struct kunit *test)
{
	struct rsw_kt_cq *kt = rsw_kt_cq(test, 4);
	unsigned long left;

	rsw_kt_fill(kt, 0, 4);
	KUNIT_EXPECT_EQ(test, rsw_kt_push(kt, 4, RDMAP_SW_WC_SUCCESS, false),
			-ENOSPC);
	left = wait_for_completion_timeout(&kt->err_seen, RSW_KT_TIMEOUT);
	KUNIT_EXPECT_GT_MSG(test, left, 0, "no IB_EVENT_CQ_ERR");
	KUNIT_EXPECT_EQ(test, atomic_read(&kt->errs), 1);
	KUNIT_EXPECT_FALSE(test, READ_ONCE(kt->bad_event));
	KUNIT_EXPECT_EQ(test, kt->cq->overruns, 1);
	KUNIT_EXPECT_TRUE(test, kt->cq->ctrl->flags & RDMAP_SW_CQ_F_OVERFLOW);

	/* A CQ in error reports it once, however often it overruns. */
	KUNIT_EXPECT_EQ(test, rsw_kt_push(kt, 5, RDMAP_SW_WC_SUCCESS, false),
			-ENOSPC);
	rsw_kt_settle(kt);
	KUNIT_EXPECT_EQ(test, atomic_read(&kt->errs), 1);
	KUNIT_EXPECT_EQ(test, kt->cq->overruns, 2);
}

/* Regression: a full ring must not overwrite its oldest entry. */
static void rsw_kt_overflow_keeps_entries(struct kunit *test)
{
	struct rsw_kt_cq *kt = rsw_kt_cq(test, 4);

	rsw_kt_fill(kt, 0, 4);
	KUNIT_EXPECT_EQ(test, rsw_kt_push(kt, 4, RDMAP_SW_WC_SUCCESS, false),
			-ENOSPC);
	KUNIT_EXPECT_EQ(test, rsw_kt_push(kt, 5, RDMAP_SW_WC_SUCCESS, false),
			-ENOSPC);
	rsw_kt_expect_ids(kt, 8, 0, 4);
	/* Space again after polling: the CQ keeps working. */
	rsw_kt_fill(kt, 6, 1);
	rsw_kt_expect_ids(kt, 8, 6, 1);
}

/* ---------------------------------------------------------- notification */

static void rsw_kt_next_fires_once_per_arm(struct kunit *test)
{
	struct rsw_kt_cq *kt = rsw_kt_cq(test, 16);

	/* Not armed: nothing fires. */
	rsw_kt_fill(kt, 0, 1);
	rsw_kt_settle(kt);
	KUNIT_EXPECT_EQ(test, atomic_read(&kt->comps), 0);

	rsw_kt_arm(kt, IB_CQ_NEXT_COMP);
	rsw_kt_fill(kt, 1, 1);
	rsw_kt_settle(kt);
	KUNIT_EXPECT_EQ(test, atomic_read(&kt->comps), 1);

	/* Disarmed by firing: more entries stay silent. */
	rsw_kt_fill(kt, 2, 3);
	rsw_kt_settle(kt);
	KUNIT_EXPECT_EQ(test, atomic_read(&kt->comps), 1);

	rsw_kt_arm(kt, IB_CQ_NEXT_COMP);
	rsw_kt_fill(kt, 5, 1);
	rsw_kt_settle(kt);
	KUNIT_EXPECT_EQ(test, atomic_read(&kt->comps), 2);
}

/* Arming twice before an entry still owes one event, not two. */
static void rsw_kt_double_arm_fires_once(struct kunit *test)
{
	struct rsw_kt_cq *kt = rsw_kt_cq(test, 16);

	rsw_kt_arm(kt, IB_CQ_NEXT_COMP);
	rsw_kt_arm(kt, IB_CQ_NEXT_COMP);
	rsw_kt_fill(kt, 0, 2);
	rsw_kt_settle(kt);
	KUNIT_EXPECT_EQ(test, atomic_read(&kt->comps), 1);
}

struct rsw_kt_sol_case {
	const char *name;
	bool solicited;
	u8 status;
	bool fires;
};

/*
 * IBTA / ibv_req_notify_cq(3): a solicited completion is a receive of a
 * message with the Solicited Event bit, or any completion with an error.
 */
static const struct rsw_kt_sol_case rsw_kt_sol_cases[] = {
	{ "unsolicited success", false, RDMAP_SW_WC_SUCCESS, false },
	{ "solicited success", true, RDMAP_SW_WC_SUCCESS, true },
	{ "unsolicited remote access error", false,
	  RDMAP_SW_WC_REM_ACCESS_ERR, true },
	{ "unsolicited flush", false, RDMAP_SW_WC_WR_FLUSH_ERR, true },
};

KUNIT_ARRAY_PARAM_DESC(rsw_kt_sol, rsw_kt_sol_cases, name);

static void rsw_kt_solicited_arm_fires_on_solicited(struct kunit *test)
{
	const struct rsw_kt_sol_case *c = test->param_value;
	struct rsw_kt_cq *kt = rsw_kt_cq(test, 16);

	rsw_kt_arm(kt, IB_CQ_SOLICITED);
	KUNIT_ASSERT_EQ(test, rsw_kt_push(kt, 0, c->status, c->solicited), 0);
	rsw_kt_settle(kt);
	KUNIT_EXPECT_EQ(test, atomic_read(&kt->comps), c->fires ? 1 : 0);
	if (c->fires)
		return;
	/* An entry that does not satisfy the arm leaves it in place. */
	KUNIT_ASSERT_EQ(test, rsw_kt_push(kt, 1, RDMAP_SW_WC_SUCCESS, true),
			0);
	rsw_kt_settle(kt);
	KUNIT_EXPECT_EQ(test, atomic_read(&kt->comps), 1);
}

struct rsw_kt_rearm_case {
	const char *name;
	enum ib_cq_notify_flags first;
	enum ib_cq_notify_flags second;
};

/* Two arms before an entry: the stronger (any entry) wins either way. */
static const struct rsw_kt_rearm_case rsw_kt_rearm_cases[] = {
	{ "solicited then next", IB_CQ_SOLICITED, IB_CQ_NEXT_COMP },
	{ "next then solicited", IB_CQ_NEXT_COMP, IB_CQ_SOLICITED },
};

KUNIT_ARRAY_PARAM_DESC(rsw_kt_rearm, rsw_kt_rearm_cases, name);

static void rsw_kt_next_arm_outranks_solicited(struct kunit *test)
{
	const struct rsw_kt_rearm_case *c = test->param_value;
	struct rsw_kt_cq *kt = rsw_kt_cq(test, 16);

	rsw_kt_arm(kt, c->first);
	rsw_kt_arm(kt, c->second);
	rsw_kt_fill(kt, 0, 1);
	rsw_kt_settle(kt);
	KUNIT_EXPECT_EQ(test, atomic_read(&kt->comps), 1);
}

struct rsw_kt_missed_case {
	const char *name;
	unsigned int pending;
	enum ib_cq_notify_flags flags;
	int expect;
};

static const struct rsw_kt_missed_case rsw_kt_missed_cases[] = {
	{ "empty, report missed", 0,
	  IB_CQ_NEXT_COMP | IB_CQ_REPORT_MISSED_EVENTS, 0 },
	{ "1 pending, report missed", 1,
	  IB_CQ_NEXT_COMP | IB_CQ_REPORT_MISSED_EVENTS, 1 },
	{ "3 pending, solicited, report missed", 3,
	  IB_CQ_SOLICITED | IB_CQ_REPORT_MISSED_EVENTS, 1 },
	{ "1 pending, not asked", 1, IB_CQ_NEXT_COMP, 0 },
};

KUNIT_ARRAY_PARAM_DESC(rsw_kt_missed, rsw_kt_missed_cases, name);

static void rsw_kt_report_missed_events(struct kunit *test)
{
	const struct rsw_kt_missed_case *c = test->param_value;
	struct rsw_kt_cq *kt = rsw_kt_cq(test, 16);

	rsw_kt_fill(kt, 0, c->pending);
	KUNIT_EXPECT_EQ(test, ib_req_notify_cq(kt->ibcq, c->flags), c->expect);
	/* Entries already queued when arming do not fire by themselves. */
	rsw_kt_settle(kt);
	KUNIT_EXPECT_EQ(test, atomic_read(&kt->comps), 0);
}

/* After polling everything, the same request reports nothing missed. */
static void rsw_kt_report_missed_after_drain(struct kunit *test)
{
	struct rsw_kt_cq *kt = rsw_kt_cq(test, 16);

	rsw_kt_fill(kt, 0, 3);
	rsw_kt_expect_ids(kt, 16, 0, 3);
	KUNIT_EXPECT_EQ(test, ib_req_notify_cq(kt->ibcq, IB_CQ_NEXT_COMP |
					       IB_CQ_REPORT_MISSED_EVENTS), 0);
}

static void rsw_kt_req_notify_rejects_bad_flags(struct kunit *test)
{
	struct rsw_kt_cq *kt = rsw_kt_cq(test, 16);

	KUNIT_EXPECT_EQ(test, ib_req_notify_cq(kt->ibcq, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, ib_req_notify_cq(kt->ibcq,
					       IB_CQ_REPORT_MISSED_EVENTS),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, ib_req_notify_cq(kt->ibcq,
					       IB_CQ_SOLICITED_MASK), -EINVAL);
}

/* ------------------------------------------------- producer contexts */

enum rsw_kt_ctx {
	RSW_KT_PROCESS,
	RSW_KT_BH_OFF,
	RSW_KT_IRQS_OFF,
	RSW_KT_HARDIRQ,
};

struct rsw_kt_ctx_case {
	const char *name;
	enum rsw_kt_ctx ctx;
};

static const struct rsw_kt_ctx_case rsw_kt_ctx_cases[] = {
	{ "process", RSW_KT_PROCESS },
	{ "bottom halves off", RSW_KT_BH_OFF },
	{ "interrupts off", RSW_KT_IRQS_OFF },
	{ "hard interrupt (IPI)", RSW_KT_HARDIRQ },
};

KUNIT_ARRAY_PARAM_DESC(rsw_kt_ctx, rsw_kt_ctx_cases, name);

struct rsw_kt_push_arg {
	struct rsw_kt_cq *kt;
	u64 id;
	int ret;
};

/* The producer: marks its own call stack while inside rsw_cq_push(). */
static void rsw_kt_marked_push(void *data)
{
	struct rsw_kt_push_arg *arg = data;
	struct rsw_kt_cq *kt = arg->kt;

	WRITE_ONCE(kt->push_task, current);
	WRITE_ONCE(kt->in_push, true);
	arg->ret = rsw_kt_push(kt, arg->id, RDMAP_SW_WC_SUCCESS, false);
	WRITE_ONCE(kt->in_push, false);
}

/* A CPU other than the caller's, or nr_cpu_ids. */
static unsigned int rsw_kt_other_cpu(void)
{
	unsigned int cpu = get_cpu();
	unsigned int other = cpumask_any_but(cpu_online_mask, cpu);

	put_cpu();
	return other;
}

static void rsw_kt_push_in(struct kunit *test, enum rsw_kt_ctx ctx,
			   struct rsw_kt_push_arg *arg)
{
	unsigned long flags;
	unsigned int cpu;

	switch (ctx) {
	case RSW_KT_PROCESS:
		rsw_kt_marked_push(arg);
		break;
	case RSW_KT_BH_OFF:
		local_bh_disable();
		rsw_kt_marked_push(arg);
		local_bh_enable();
		break;
	case RSW_KT_IRQS_OFF:
		local_irq_save(flags);
		rsw_kt_marked_push(arg);
		local_irq_restore(flags);
		break;
	case RSW_KT_HARDIRQ:
		cpu = rsw_kt_other_cpu();
		if (cpu >= nr_cpu_ids)
			kunit_skip(test, "needs a second CPU");
		KUNIT_ASSERT_EQ(test,
				smp_call_function_single(cpu, rsw_kt_marked_push,
							 arg, 1), 0);
		break;
	}
}

/*
 * Regression guard for "never inline from post_send": the handler runs in a
 * workqueue worker with bottom halves off, never inside the producer's call.
 */
static void rsw_kt_handler_not_in_producer(struct kunit *test)
{
	const struct rsw_kt_ctx_case *c = test->param_value;
	struct rsw_kt_cq *kt = rsw_kt_cq(test, 16);
	struct rsw_kt_push_arg arg = { .kt = kt };
	unsigned long left;

	rsw_kt_arm(kt, IB_CQ_NEXT_COMP);
	rsw_kt_push_in(test, c->ctx, &arg);
	KUNIT_ASSERT_EQ(test, arg.ret, 0);
	left = wait_for_completion_timeout(&kt->comp_seen, RSW_KT_TIMEOUT);
	KUNIT_ASSERT_GT_MSG(test, left, 0, "comp_handler never ran");
	KUNIT_EXPECT_FALSE(test, READ_ONCE(kt->nested));
	KUNIT_EXPECT_FALSE(test, READ_ONCE(kt->bad_ctx));
}

/* ---------------------------------------------------------------- destroy */

struct rsw_kt_destroyer {
	struct work_struct work;
	struct rsw_kt_cq *kt;
	struct ib_cq *ibcq;
	struct completion done;
};

static void rsw_kt_destroy_fn(struct work_struct *work)
{
	struct rsw_kt_destroyer *d = container_of(work, struct rsw_kt_destroyer,
						  work);

	ib_destroy_cq(d->ibcq);
	WRITE_ONCE(d->kt->destroyed, true);
	complete(&d->done);
}

/* Poll (not sleep blindly) for @cond, at most @timeout jiffies. */
static bool rsw_kt_wait_for(bool (*cond)(struct rsw_kt_cq *),
			    struct rsw_kt_cq *kt, unsigned long timeout)
{
	unsigned long deadline = jiffies + timeout;

	while (!cond(kt)) {
		if (time_after(jiffies, deadline))
			return false;
		usleep_range(100, 200);
	}
	return true;
}

static bool rsw_kt_cq_dead(struct rsw_kt_cq *kt)
{
	return READ_ONCE(kt->cq->dead);
}

static bool rsw_kt_notify_not_pending(struct rsw_kt_cq *kt)
{
	return !work_pending(&kt->cq->notify_work);
}

/* Push one entry on @cpu, from a hard interrupt there. */
static void rsw_kt_push_on(struct kunit *test, struct rsw_kt_cq *kt,
			   unsigned int cpu, u64 id)
{
	struct rsw_kt_push_arg arg = { .kt = kt, .id = id };

	KUNIT_ASSERT_EQ(test, smp_call_function_single(cpu, rsw_kt_marked_push,
						       &arg, 1), 0);
	KUNIT_ASSERT_EQ(test, arg.ret, 0);
}

/*
 * Destroying a CQ with a notification still queued: destroy waits for a
 * running handler, no handler runs once it returned, and nothing touches
 * the freed CQ (KASAN).  The first handler call is held spinning on CPU B
 * (notifications run on the producer's CPU) while a second one is queued
 * behind it; the destroyer and this case run on CPU A.
 */
static void rsw_kt_destroy_with_pending_notification(struct kunit *test)
{
	struct rsw_kt_cq *kt = rsw_kt_cq(test, 16);
	struct rsw_kt_destroyer d = { .kt = kt, .ibcq = kt->ibcq };
	unsigned int a, b;
	bool cancelled;

	b = rsw_kt_other_cpu();
	if (b >= nr_cpu_ids)
		kunit_skip(test, "needs a second CPU");
	a = cpumask_any_but(cpu_online_mask, b);
	KUNIT_ASSERT_EQ(test, set_cpus_allowed_ptr(current, cpumask_of(a)), 0);

	WRITE_ONCE(kt->hold, true);
	rsw_kt_arm(kt, IB_CQ_NEXT_COMP);
	rsw_kt_push_on(test, kt, b, 0);
	KUNIT_ASSERT_GT(test, wait_for_completion_timeout(&kt->held,
							  RSW_KT_TIMEOUT), 0);
	/* Handler 1 spins on B; arm again and queue notification 2. */
	rsw_kt_arm(kt, IB_CQ_NEXT_COMP);
	rsw_kt_push_on(test, kt, b, 1);
	KUNIT_ASSERT_TRUE(test, work_pending(&kt->cq->notify_work));

	/* The KUnit action must not destroy it a second time. */
	kt->ibcq = NULL;
	init_completion(&d.done);
	INIT_WORK_ONSTACK(&d.work, rsw_kt_destroy_fn);
	queue_work_on(a, system_highpri_wq, &d.work);
	KUNIT_EXPECT_TRUE(test, rsw_kt_wait_for(rsw_kt_cq_dead, kt,
						RSW_KT_TIMEOUT));
	/* Not required by the contract, but then the second can't run. */
	cancelled = rsw_kt_wait_for(rsw_kt_notify_not_pending, kt, HZ / 10);
	WRITE_ONCE(kt->release, true);

	KUNIT_ASSERT_GT(test, wait_for_completion_timeout(&d.done,
							  RSW_KT_TIMEOUT), 0);
	flush_work(&d.work);
	destroy_work_on_stack(&d.work);
	KUNIT_EXPECT_FALSE(test, READ_ONCE(kt->hold_timed_out));
	KUNIT_EXPECT_FALSE(test, READ_ONCE(kt->late));
	KUNIT_EXPECT_GE(test, atomic_read(&kt->comps), 1);
	if (cancelled)
		KUNIT_EXPECT_EQ(test, atomic_read(&kt->comps), 1);
	KUNIT_EXPECT_EQ(test, set_cpus_allowed_ptr(current, cpu_possible_mask),
			0);
}

/*
 * Six entries on a CQ of 8, the odd ones of a QP that is discarded; then
 * a resize to @resize (if not 0), and only the even ones come out.
 */
static struct rsw_kt_cq *rsw_kt_discard_odd(struct kunit *test, int resize)
{
	struct rsw_kt_cq *kt = rsw_kt_cq(test, 8);
	struct ib_qp *gone = kunit_kzalloc(test, sizeof(*gone), GFP_KERNEL);
	struct rdmap_sw_cqe cqe;
	struct ib_wc wc[8];
	u64 id;

	KUNIT_ASSERT_NOT_NULL(test, gone);
	for (id = 0; id < 6; id++) {
		cqe = rsw_kt_cqe(id, RDMAP_SW_WC_SUCCESS);
		KUNIT_ASSERT_EQ(test, rsw_cq_push(kt->cq, &cqe,
						  id % 2 ? gone : kt->qp,
						  false), 0);
	}
	rsw_cq_discard_qp(kt->cq, gone);
	if (resize)
		KUNIT_ASSERT_EQ(test, ib_resize_cq(kt->ibcq, resize), 0);
	KUNIT_ASSERT_EQ(test, ib_poll_cq(kt->ibcq, 8, wc), 3);
	for (id = 0; id < 3; id++) {
		KUNIT_EXPECT_EQ(test, wc[id].wr_id, 2 * id);
		KUNIT_EXPECT_PTR_EQ(test, wc[id].qp, kt->qp);
	}
	return kt;
}

/* destroy_qp's clean-up: only that QP's unpolled entries disappear. */
static void rsw_kt_discard_qp_drops_only_its_entries(struct kunit *test)
{
	struct rsw_kt_cq *kt = rsw_kt_discard_odd(test, 0);

	/* Their slots were handed back: the full ring is usable again. */
	rsw_kt_fill(kt, 10, 8);
	rsw_kt_expect_ids(kt, 8, 10, 8);
}

/* ---------------------------------------------- ib_core's own pollers */

struct rsw_kt_ulp {
	struct ib_cqe cqe;
	atomic_t done;
	int want;
	struct completion all;
};

static void rsw_kt_ulp_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rsw_kt_ulp *ulp = container_of(wc->wr_cqe, struct rsw_kt_ulp,
					      cqe);

	if (atomic_inc_return(&ulp->done) == ulp->want)
		complete(&ulp->all);
}

static void rsw_kt_free_cq(void *data)
{
	ib_free_cq(data);
}

struct rsw_kt_pollctx_case {
	const char *name;
	enum ib_poll_context ctx;
};

static const struct rsw_kt_pollctx_case rsw_kt_pollctx_cases[] = {
	{ "IB_POLL_DIRECT", IB_POLL_DIRECT },
	{ "IB_POLL_SOFTIRQ", IB_POLL_SOFTIRQ },
	{ "IB_POLL_WORKQUEUE", IB_POLL_WORKQUEUE },
	{ "IB_POLL_UNBOUND_WORKQUEUE", IB_POLL_UNBOUND_WORKQUEUE },
};

KUNIT_ARRAY_PARAM_DESC(rsw_kt_pollctx, rsw_kt_pollctx_cases, name);

/*
 * ib_alloc_cq() users get every entry's done callback, in rounds that
 * refill the ring several times over, and ib_free_cq() tears down cleanly
 * (pre_destroy_cq / post_destroy_cq).
 */
static void rsw_kt_ib_alloc_cq_delivers(struct kunit *test)
{
	const struct rsw_kt_pollctx_case *c = test->param_value;
	struct ib_device *ibdev = rsw_kt_device(test);
	struct ib_qp *qp = kunit_kzalloc(test, sizeof(*qp), GFP_KERNEL);
	struct rsw_kt_ulp *ulp = kunit_kzalloc(test, sizeof(*ulp), GFP_KERNEL);
	struct rdmap_sw_cqe cqe = { .opcode = RDMAP_SW_WC_RECV };
	unsigned long left;
	struct ib_cq *ibcq;
	int round, i;

	KUNIT_ASSERT_NOT_NULL(test, qp);
	KUNIT_ASSERT_NOT_NULL(test, ulp);
	ulp->cqe.done = rsw_kt_ulp_done;
	cqe.wr_id = (uintptr_t)&ulp->cqe;
	ibcq = ib_alloc_cq(ibdev, NULL, 8, 0, c->ctx);
	KUNIT_ASSERT_FALSE(test, IS_ERR(ibcq));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, rsw_kt_free_cq,
							ibcq), 0);

	for (round = 1; round <= 5; round++) {
		init_completion(&ulp->all);
		ulp->want = round * 8;
		for (i = 0; i < 8; i++)
			KUNIT_ASSERT_EQ(test, rsw_cq_push(to_rsw_cq(ibcq), &cqe,
							  qp, false), 0);
		if (c->ctx == IB_POLL_DIRECT)
			KUNIT_EXPECT_EQ(test, ib_process_cq_direct(ibcq, 16), 8);
		left = wait_for_completion_timeout(&ulp->all, RSW_KT_TIMEOUT);
		KUNIT_ASSERT_GT_MSG(test, left, 0, "round %d: %d done", round,
				    atomic_read(&ulp->done));
	}
	KUNIT_EXPECT_EQ(test, atomic_read(&ulp->done), 40);
}

/* ---------------------------------------------------------------- resize */

struct rsw_kt_resize_case {
	const char *name;
	unsigned int cqe;	/* created with */
	u32 start;		/* rsw_cq_reset() index */
	unsigned int skip;	/* pushed and polled before */
	unsigned int pending;	/* pushed, not polled, at the resize */
	int new_cqe;
	int ret;		/* of ib_resize_cq() */
};

static const struct rsw_kt_resize_case rsw_kt_resize_cases[] = {
	{ "grow 8 -> 64, 5 pending", 8, 0, 0, 5, 64, 0 },
	{ "grow a full ring 8 -> 16", 8, 0, 0, 8, 16, 0 },
	{ "grow with pending wrapped in the ring", 8, 0, 6, 7, 32, 0 },
	{ "grow across 2^32", 8, 0U - 5, 0, 8, 100, 0 },
	{ "shrink 64 -> 8, 8 pending", 64, 0, 0, 8, 8, 0 },
	{ "shrink 64 -> 4 (rounded up from 3), 3 pending", 64, 0, 0, 3, 3, 0 },
	{ "shrink across 2^32, wrapped", 64, 0U - 40, 37, 6, 8, 0 },
	{ "shrink an empty ring to 1", 64, 0, 20, 0, 1, 0 },
	{ "same size, 3 pending", 16, 0, 10, 3, 16, 0 },
	{ "refused: 5 pending, 4 asked", 64, 0, 0, 5, 4, -EINVAL },
	{ "refused: full ring of 8, 4 asked", 8, 0, 3, 8, 4, -EINVAL },
	{ "7 asked of a full ring of 8 is 8", 8, 0, 3, 8, 7, 0 },
	{ "refused: 0 entries", 8, 0, 0, 1, 0, -EINVAL },
	{ "refused: negative", 8, 0, 0, 1, -1, -EINVAL },
	{ "refused: over max_cqe", 8, 0, 0, 1, RSW_MAX_CQE + 1, -EINVAL },
};

KUNIT_ARRAY_PARAM_DESC(rsw_kt_resize, rsw_kt_resize_cases, name);

/*
 * Entries pending at a resize come out first and in order, then the new
 * capacity holds exactly new-size further entries; a refused resize leaves
 * the old ring, its size and its entries as they were.
 */
static void rsw_kt_resize_keeps_pending(struct kunit *test)
{
	const struct rsw_kt_resize_case *c = test->param_value;
	struct rsw_kt_cq *kt = rsw_kt_cq(test, c->cqe);
	int old = kt->ibcq->cqe, size;
	unsigned int more;
	u64 next;

	rsw_cq_reset(kt->cq, c->start);
	rsw_kt_fill(kt, 0, c->skip);
	rsw_kt_expect_ids(kt, c->skip, 0, c->skip);
	rsw_kt_fill(kt, c->skip, c->pending);
	KUNIT_ASSERT_EQ(test, ib_resize_cq(kt->ibcq, c->new_cqe), c->ret);
	size = c->ret ? old : roundup_pow_of_two(c->new_cqe);
	KUNIT_EXPECT_EQ(test, kt->ibcq->cqe, size);
	KUNIT_EXPECT_EQ(test, kt->cq->ctrl->size, size);
	KUNIT_EXPECT_EQ(test, kt->cq->ctrl->mask, size - 1);
	KUNIT_EXPECT_EQ(test, kt->cq->ctrl->prod, c->start + c->skip +
			c->pending);
	KUNIT_EXPECT_EQ(test, kt->cq->ctrl->cons, c->start + c->skip);

	/* Fill to capacity: exactly size entries fit, the next overruns. */
	next = c->skip + c->pending;
	more = size - c->pending;
	rsw_kt_fill(kt, next, more);
	KUNIT_EXPECT_EQ(test, rsw_kt_push(kt, next + more, RDMAP_SW_WC_SUCCESS,
					  false), -ENOSPC);
	rsw_kt_expect_ids(kt, size + 1, c->skip, size);
	KUNIT_EXPECT_EQ(test, kt->cq->overruns, 1);
}

/* An arm raised before the resize is owed by the new ring. */
static void rsw_kt_resize_keeps_arm(struct kunit *test)
{
	struct rsw_kt_cq *kt = rsw_kt_cq(test, 8);

	rsw_kt_fill(kt, 0, 2);
	rsw_kt_arm(kt, IB_CQ_NEXT_COMP);
	KUNIT_ASSERT_EQ(test, ib_resize_cq(kt->ibcq, 32), 0);
	KUNIT_EXPECT_EQ(test, kt->cq->ctrl->notify, RDMAP_SW_CQ_NOTIFY_NEXT);
	rsw_kt_fill(kt, 2, 1);
	rsw_kt_settle(kt);
	KUNIT_EXPECT_EQ(test, atomic_read(&kt->comps), 1);
	/* Disarmed by that entry; a missed-event check sees the three. */
	KUNIT_EXPECT_EQ(test, ib_req_notify_cq(kt->ibcq, IB_CQ_NEXT_COMP |
					       IB_CQ_REPORT_MISSED_EVENTS), 1);
	rsw_kt_expect_ids(kt, 8, 0, 3);
}

/* An overrun before the resize stays reported in the new ring. */
static void rsw_kt_resize_keeps_overflow_flag(struct kunit *test)
{
	struct rsw_kt_cq *kt = rsw_kt_cq(test, 2);

	rsw_kt_fill(kt, 0, 2);
	KUNIT_EXPECT_EQ(test, rsw_kt_push(kt, 2, RDMAP_SW_WC_SUCCESS, false),
			-ENOSPC);
	KUNIT_ASSERT_EQ(test, ib_resize_cq(kt->ibcq, 4), 0);
	KUNIT_EXPECT_EQ(test, kt->cq->ctrl->flags, RDMAP_SW_CQ_F_OVERFLOW);
	rsw_kt_expect_ids(kt, 8, 0, 2);
}

/* Entries whose QP was discarded stay skipped after a resize. */
static void rsw_kt_resize_keeps_discards(struct kunit *test)
{
	struct rsw_kt_cq *kt = rsw_kt_discard_odd(test, 6);

	KUNIT_EXPECT_EQ(test, kt->ibcq->cqe, 8);
}

/*
 * resize_cq's steps on @kt's CQ played as a user CQ's (its ctrl.cons is
 * the process's): snapshot and prepare a ring of @size, then @during,
 * then the switch; returns the switch's result.  @r holds the replaced
 * ring on success, the unused one on failure.
 */
static int rsw_kt_user_resize(struct rsw_kt_cq *kt, struct rsw_cq_ring *r,
			      u32 size, void (*during)(struct rsw_kt_cq *))
{
	struct rsw_cq *cq = kt->cq;
	u32 guess, prod;
	int ret;

	cq->user = true;
	KUNIT_ASSERT_EQ(kt->test, rsw_cq_ring_alloc(r, size, true), 0);
	mutex_lock(&cq->resize_mutex);
	ret = rsw_cq_snapshot(cq, &guess, &prod);
	if (!ret) {
		prod = rsw_cq_ring_prepare(cq, r, guess, prod);
		during(kt);
		ret = rsw_cq_switch(cq, r, guess, prod);
	}
	mutex_unlock(&cq->resize_mutex);
	return ret;
}

static void rsw_kt_consume_16(struct rsw_kt_cq *kt)
{
	WRITE_ONCE(kt->cq->ctrl->cons, 16);
}

/*
 * Regression: a process that moved ctrl.cons a ring or more during the
 * command (flipping it between a bogus and the real value) had the switch
 * rewrite every slot of the new ring with interrupts off.  It broke the
 * protocol: refused, the old ring and its entries as they were.
 */
static void rsw_kt_resize_user_cons_jump_refused(struct kunit *test)
{
	struct rsw_kt_cq *kt = rsw_kt_cq(test, 64);
	struct rsw_cq_ring r;

	rsw_kt_fill(kt, 0, 20);
	/* Assert: a switched-in user ring has no qp[] to poll below. */
	KUNIT_ASSERT_EQ(test, rsw_kt_user_resize(kt, &r, 8, rsw_kt_consume_16),
			-EINVAL);
	rsw_cq_ring_free(&r);
	KUNIT_EXPECT_EQ(test, kt->cq->size, 64);
	KUNIT_EXPECT_EQ(test, kt->ibcq->cqe, 64);
	/* Back to a kernel CQ: all 20 entries still there. */
	WRITE_ONCE(kt->cq->ctrl->cons, 0);
	kt->cq->user = false;
	rsw_kt_expect_ids(kt, 64, 0, 20);
}

/* The process's QPs outrun the copying rounds: 5000 entries meanwhile. */
static void rsw_kt_produce_5000(struct rsw_kt_cq *kt)
{
	rsw_kt_fill(kt, 10, 5000);
}

/*
 * A user CQ whose producers left more than the switch may copy with
 * interrupts off (RSW_CQ_LOCKED_MAX) is told to retry: -EAGAIN, the old
 * ring and all its entries as they were.
 */
static void rsw_kt_resize_user_backlog_retry(struct kunit *test)
{
	struct rsw_kt_cq *kt = rsw_kt_cq(test, 8192);
	struct rsw_cq_ring r;

	rsw_kt_fill(kt, 0, 10);
	KUNIT_ASSERT_EQ(test, rsw_kt_user_resize(kt, &r, 8192,
						 rsw_kt_produce_5000), -EAGAIN);
	rsw_cq_ring_free(&r);
	KUNIT_EXPECT_EQ(test, kt->cq->size, 8192);
	kt->cq->user = false;
	rsw_kt_expect_ids(kt, 8192, 0, 5010);
}

#define RSW_KT_USTART (0U - 10)	/* indices wrap during the case below */

/* The process consumes 5 entries, the kernel produces 2, meanwhile. */
static void rsw_kt_consume_5_produce_2(struct rsw_kt_cq *kt)
{
	WRITE_ONCE(kt->cq->ctrl->cons, RSW_KT_USTART + 5);
	rsw_kt_fill(kt, 9, 2);
}

/*
 * A user CQ's new ring, mostly filled outside the locks: after the switch
 * every entry from the process's cons on is there with seq == n (also
 * those produced during the command), every other slot empty for the
 * index it carries next (seq == n - size), across 2^32.
 */
static void rsw_kt_resize_user_ring_filled(struct kunit *test)
{
	const u32 size = 8, cons = RSW_KT_USTART + 5, prod = RSW_KT_USTART + 11;
	struct rsw_kt_cq *kt = rsw_kt_cq(test, 64);
	struct rsw_cq *cq = kt->cq;
	struct rsw_cq_ring r;
	u32 n;

	rsw_cq_reset(cq, RSW_KT_USTART);
	rsw_kt_fill(kt, 0, 9);
	KUNIT_ASSERT_EQ(test, rsw_kt_user_resize(kt, &r, size,
						 rsw_kt_consume_5_produce_2), 0);
	rsw_cq_ring_free(&r);
	KUNIT_EXPECT_EQ(test, cq->size, size);
	KUNIT_EXPECT_NULL(test, cq->qp);
	KUNIT_EXPECT_EQ(test, cq->ctrl->cons, cons);
	KUNIT_EXPECT_EQ(test, cq->ctrl->prod, prod);
	for (n = cons; n != cons + size; n++) {
		const struct rdmap_sw_cqe *e = &cq->cqe[n & cq->mask];

		if (n - cons < prod - cons) {
			KUNIT_EXPECT_EQ_MSG(test, e->seq, n, "index %u", n);
			KUNIT_EXPECT_EQ(test, e->wr_id, n - RSW_KT_USTART);
		} else {
			KUNIT_EXPECT_EQ_MSG(test, e->seq, n - size, "index %u",
					    n);
		}
	}
}

/* The producer of the race below: ids 0 .. total - 1, never overrunning. */
struct rsw_kt_race {
	struct rsw_kt_cq *kt;
	struct work_struct work;
	u64 total;
	unsigned int window;	/* at most this many pushed, not polled */
	atomic64_t polled;
	int push_err;
};

static void rsw_kt_race_produce(struct work_struct *work)
{
	struct rsw_kt_race *r = container_of(work, struct rsw_kt_race, work);
	unsigned long deadline = jiffies + RSW_KT_TIMEOUT;
	u64 id = 0;
	int ret;

	while (id < r->total && !READ_ONCE(r->push_err)) {
		if (id - atomic64_read(&r->polled) >= r->window) {
			/* The consumer stopped polling. */
			if (time_after(jiffies, deadline))
				WRITE_ONCE(r->push_err, -ETIMEDOUT);
			cond_resched();
			continue;
		}
		deadline = jiffies + RSW_KT_TIMEOUT;
		/* As the stream's RX does: bottom halves off. */
		local_bh_disable();
		ret = rsw_kt_push(r->kt, id++, RDMAP_SW_WC_SUCCESS, false);
		local_bh_enable();
		if (ret)
			WRITE_ONCE(r->push_err, ret);
	}
}

/*
 * A producer on another CPU pushes while this thread polls and resizes
 * between 64 and 4096 entries: every id arrives once, in order, and no
 * push ever finds the ring full (at most 64 are outstanding).
 */
static void rsw_kt_resize_under_traffic(struct kunit *test)
{
	struct rsw_kt_cq *kt = rsw_kt_cq(test, 64);
	static const int sizes[] = { 4096, 64, 256, 64, 1024 };
	unsigned long deadline = jiffies + 4 * RSW_KT_TIMEOUT;
	struct rsw_kt_race *r;
	struct ib_wc *wc = rsw_kt_wcs(test, 17);
	unsigned int resizes = 0, polls = 0, cpu;
	u64 expect = 0;
	int i, got = 0, size = 0, ret = 0;

	r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r);
	r->kt = kt;
	r->total = 50000;
	r->window = 64;
	INIT_WORK(&r->work, rsw_kt_race_produce);
	cpu = cpumask_next(raw_smp_processor_id(), cpu_online_mask);
	if (cpu >= nr_cpu_ids)
		cpu = cpumask_first(cpu_online_mask);
	queue_work_on(cpu, system_highpri_wq, &r->work);

	while (expect < r->total && time_before(jiffies, deadline)) {
		got = ib_poll_cq(kt->ibcq, 16, wc);
		for (i = 0; i < got; i++, expect++)
			if (wc[i].wr_id != expect)
				break;
		if (i < got)
			break;
		atomic64_add(got, &r->polled);
		/* No assertion while the producer runs: it uses kt and r. */
		if (!(++polls % 61)) {
			size = sizes[resizes % ARRAY_SIZE(sizes)];
			ret = ib_resize_cq(kt->ibcq, size);
			if (ret)
				break;
			resizes++;
		}
		if (!got)
			cond_resched();
	}
	WRITE_ONCE(r->push_err, READ_ONCE(r->push_err) ?: -ECANCELED);
	flush_work(&r->work);
	KUNIT_EXPECT_EQ_MSG(test, expect, r->total, "last wr_id %llu",
			    got > 0 ? wc[min(i, got - 1)].wr_id : 0);
	KUNIT_EXPECT_EQ_MSG(test, ret, 0, "resize to %d", size);
	KUNIT_EXPECT_EQ(test, r->push_err, -ECANCELED);
	KUNIT_EXPECT_EQ(test, kt->cq->overruns, 0);
	KUNIT_EXPECT_GT(test, resizes, 10);
	KUNIT_EXPECT_EQ(test, ib_poll_cq(kt->ibcq, 16, wc), 0);
}

static struct kunit_case rsw_cq_cases[] = {
	KUNIT_CASE_PARAM(rsw_kt_create_rounds_up_to_power_of_two,
			 rsw_kt_size_gen_params),
	KUNIT_CASE_PARAM(rsw_kt_capacity_is_reported_cqe,
			 rsw_kt_capacity_gen_params),
	KUNIT_CASE_PARAM(rsw_kt_create_rejects_bad_attr,
			 rsw_kt_reject_gen_params),
	KUNIT_CASE(rsw_kt_user_cq_refused),
	KUNIT_CASE(rsw_kt_device_reports_cq_limits),
	KUNIT_CASE_PARAM(rsw_kt_ring_matches_reference,
			 rsw_kt_ring_gen_params),
	KUNIT_CASE_PARAM(rsw_kt_poll_returns_batch_in_order,
			 rsw_kt_batch_gen_params),
	KUNIT_CASE_PARAM(rsw_kt_wc_opcode_mapped, rsw_kt_op_gen_params),
	KUNIT_CASE_PARAM(rsw_kt_wc_status_mapped, rsw_kt_status_gen_params),
	KUNIT_CASE_PARAM(rsw_kt_wc_ex_data_mapped, rsw_kt_ex_gen_params),
	KUNIT_CASE_PARAM(rsw_kt_push_rejects_malformed, rsw_kt_bad_gen_params),
	KUNIT_CASE(rsw_kt_overflow_reports_cq_err),
	KUNIT_CASE(rsw_kt_overflow_keeps_entries),
	KUNIT_CASE(rsw_kt_next_fires_once_per_arm),
	KUNIT_CASE(rsw_kt_double_arm_fires_once),
	KUNIT_CASE_PARAM(rsw_kt_solicited_arm_fires_on_solicited,
			 rsw_kt_sol_gen_params),
	KUNIT_CASE_PARAM(rsw_kt_next_arm_outranks_solicited,
			 rsw_kt_rearm_gen_params),
	KUNIT_CASE_PARAM(rsw_kt_report_missed_events, rsw_kt_missed_gen_params),
	KUNIT_CASE(rsw_kt_report_missed_after_drain),
	KUNIT_CASE(rsw_kt_req_notify_rejects_bad_flags),
	KUNIT_CASE_PARAM(rsw_kt_handler_not_in_producer, rsw_kt_ctx_gen_params),
	KUNIT_CASE(rsw_kt_destroy_with_pending_notification),
	KUNIT_CASE(rsw_kt_discard_qp_drops_only_its_entries),
	KUNIT_CASE_PARAM(rsw_kt_ib_alloc_cq_delivers,
			 rsw_kt_pollctx_gen_params),
	KUNIT_CASE_PARAM(rsw_kt_resize_keeps_pending, rsw_kt_resize_gen_params),
	KUNIT_CASE(rsw_kt_resize_keeps_arm),
	KUNIT_CASE(rsw_kt_resize_keeps_overflow_flag),
	KUNIT_CASE(rsw_kt_resize_keeps_discards),
	KUNIT_CASE(rsw_kt_resize_user_cons_jump_refused),
	KUNIT_CASE(rsw_kt_resize_user_backlog_retry),
	KUNIT_CASE(rsw_kt_resize_user_ring_filled),
	KUNIT_CASE_SLOW(rsw_kt_resize_under_traffic),
	{}
};

static struct kunit_suite rsw_cq_suite = {
	.name = "rdmap_sw_cq",
	.test_cases = rsw_cq_cases,
};

kunit_test_suite(rsw_cq_suite);

MODULE_DESCRIPTION("KUnit tests for rdmap_sw completion queues");
MODULE_LICENSE("GPL");
