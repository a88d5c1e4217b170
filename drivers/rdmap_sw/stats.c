// SPDX-License-Identifier: GPL-2.0
/*
 * rdmap_sw: counter sets and the hw_stats ops that show them (stats.h).
 *
 * Data path: every count is a this_cpu_add() into the set's per-CPU
 * array, from any context; no lock, no atomic.  A reader sums the CPUs'
 * shares; a sum taken while others count is as of some moment during the
 * read, per counter (u64 loads are whole on 64-bit kernels, the only
 * ones rsw_stats_alloc() builds for).
 *
 * Lifetime: a kref.  The device takes the first reference at allocation
 * (rsw_device_alloc()) and drops it in dealloc_driver.  Whatever may count
 * after a verb returned holds its own: a QP from create_qp until
 * destroy_qp, in its route (its stream, TX engine and socket sink borrow
 * that: destroy_qp frees the stream first, after its work item and
 * teardown), a cep from rsw_cep_alloc() until rsw_cep_free() (its
 * children take their own; a cep on iw.c's "peer already left" path runs
 * before it is freed).  The verbs themselves (post_send, post_recv, a
 * doorbell) count through their QP's route.
 * So the set is freed only after the last object that could count into
 * it; nothing waits for that.
 *
 * Per-QP counters (`rdma statistic qp`, the rdma counter section below).
 * A QP counts through its route (qp->stats, stats.h): the device's set
 * (a reference the QP holds from create_qp to destroy_qp; its stream,
 * TX engine and socket sink borrow the route, and destroy_qp frees the
 * stream first), or while ib_core has the QP bound to an rdma counter,
 * that counter's set instead.  Each rdma counter has one rsw_counter,
 * which owns a set (one reference) for as long as ib_core has the
 * counter (counter_dealloc drops it); each bound QP holds another in its
 * route from bind to unbind.  Binding publishes the set with
 * rcu_assign_pointer(); every count loads it under rcu_read_lock().
 * Unbinding clears it; the counter's last QP then waits for a grace
 * period before it returns: right after the last unbind ib_core reads
 * the counter a last time and adds its values into the port's history,
 * so no count may still be on its way into the set then (an earlier
 * QP's late counts land in the live counter and are covered by that
 * same wait), and none is lost (it went to the device's set, or into
 * the counter's before that last read).
 */
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include "internal.h"

struct rsw_stats *rsw_stats_alloc(void)
{
	BUILD_BUG_ON(!IS_ENABLED(CONFIG_64BIT));	/* untorn u64 reads */
	struct rsw_stats *st = kzalloc(sizeof(*st), GFP_KERNEL);

	if (!st)
		return NULL;
	st->pcpu = alloc_percpu(struct rsw_stats_pcpu);
	if (!st->pcpu) {
		kfree(st);
		return NULL;
	}
	kref_init(&st->ref);
	return st;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_stats_alloc);

struct rsw_stats *rsw_stats_get(struct rsw_stats *st)
{
	if (st)
		kref_get(&st->ref);
	return st;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_stats_get);

static void rsw_stats_free(struct kref *ref)
{
	struct rsw_stats *st = container_of(ref, struct rsw_stats, ref);

	free_percpu(st->pcpu);
	kfree(st);
}

void rsw_stats_put(struct rsw_stats *st)
{
	if (st)
		kref_put(&st->ref, rsw_stats_free);
}
EXPORT_SYMBOL_IF_KUNIT(rsw_stats_put);

/*
 * Sum every shown counter into @val[0..RSW_STAT_SHOWN): one walk over the
 * CPUs, each CPU's block read in order, rather than one strided walk per
 * counter (a local user may ask for a refresh every 10 ms).
 */
static void rsw_stats_read_all(struct rsw_stats *st, u64 *val)
{
	int cpu, i;

	memset(val, 0, RSW_STAT_SHOWN * sizeof(*val));
	if (!st)
		return;
	for_each_possible_cpu(cpu) {
		const struct rsw_stats_pcpu *p = per_cpu_ptr(st->pcpu, cpu);

		for (i = 0; i < RSW_STAT_SHOWN; i++)
			val[i] += READ_ONCE(p->v[i + 1]);
	}
}

u64 rsw_stats_read(struct rsw_stats *st, enum rsw_stat i)
{
	u64 sum = 0;
	int cpu;

	if (!st || i <= RSW_STAT_NONE || i >= RSW_STAT_NUM)
		return 0;
	for_each_possible_cpu(cpu)
		sum += READ_ONCE(per_cpu_ptr(st->pcpu, cpu)->v[i]);
	return sum;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_stats_read);

/* ------------------------------------------------------------- causes */

#define RSW_RX_ERR_ROW(id, nm, l, t, c)					\
	{ .layer = (l), .etype = (t), .ecode = (c),			\
	  .stat = RSW_STAT_RX_ERR_##id },

const struct rsw_rx_err_row rsw_rx_err_rows[] = {
	RSW_RX_ERRS(RSW_RX_ERR_ROW)
};
EXPORT_SYMBOL_IF_KUNIT(rsw_rx_err_rows);
const unsigned int rsw_rx_err_nrows = ARRAY_SIZE(rsw_rx_err_rows);
EXPORT_SYMBOL_IF_KUNIT(rsw_rx_err_nrows);

static bool rsw_rx_err_match(const struct rsw_rx_err_row *r,
			     const struct rsw_term_cause *c)
{
	return r->layer == c->layer && r->etype == c->etype &&
	       (r->ecode < 0 || r->ecode == c->ecode);
}

/* Cold (a stream ends on it): a walk of the table is fine. */
enum rsw_stat rsw_stat_rx_err(const struct rsw_term_cause *c)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(rsw_rx_err_rows); i++)
		if (rsw_rx_err_match(&rsw_rx_err_rows[i], c))
			return rsw_rx_err_rows[i].stat;
	return RSW_STAT_NONE;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_stat_rx_err);

static const enum rsw_stat rsw_term_layer_stats[][2] = {
	[RSW_TERM_LAYER_RDMAP] = { RSW_STAT_TX_TERMS_RDMAP,
				   RSW_STAT_RX_TERMS_RDMAP },
	[RSW_TERM_LAYER_DDP] = { RSW_STAT_TX_TERMS_DDP, RSW_STAT_RX_TERMS_DDP },
	[RSW_TERM_LAYER_LLP] = { RSW_STAT_TX_TERMS_LLP, RSW_STAT_RX_TERMS_LLP },
};

/* A layer the RFCs do not define (a peer's Terminate) counts nowhere. */
enum rsw_stat rsw_stat_term_layer(u8 layer, bool rx)
{
	if (layer >= ARRAY_SIZE(rsw_term_layer_stats))
		return RSW_STAT_NONE;
	return rsw_term_layer_stats[layer][rx];
}
EXPORT_SYMBOL_IF_KUNIT(rsw_stat_term_layer);

enum rsw_stat rsw_stat_rtr(u8 rtr, bool rx)
{
	switch (rtr) {
	case RSW_MPA_RTR_WRITE:
		return rx ? RSW_STAT_RX_RTR_WRITE : RSW_STAT_TX_RTR_WRITE;
	case RSW_MPA_RTR_READ:
		return rx ? RSW_STAT_RX_RTR_READ : RSW_STAT_TX_RTR_READ;
	case RSW_MPA_RTR_SEND:
		return rx ? RSW_STAT_RX_RTR_SEND : RSW_STAT_TX_RTR_SEND;
	}
	return RSW_STAT_NONE;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_stat_rtr);

/* ----------------------------------------------------------- hw_stats */

#define RSW_STAT_DESC_BASIC(id, nm)					\
	[RSW_STAT_##id - 1] = { .name = nm },
#define RSW_STAT_DESC_RX_ERR(id, nm, l, t, c)				\
	[RSW_STAT_RX_ERR_##id - 1] = { .name = nm },

const struct rdma_stat_desc rsw_stat_descs[RSW_STAT_SHOWN] = {
	RSW_STATS_BASIC(RSW_STAT_DESC_BASIC)
	RSW_RX_ERRS(RSW_STAT_DESC_RX_ERR)
};
EXPORT_SYMBOL_IF_KUNIT(rsw_stat_descs);

/*
 * The port's and every rdma counter's: one layout, since ib_core adds a
 * released counter's values into the port's history index by index.
 */
static struct rdma_hw_stats *rsw_hw_stats_alloc(void)
{
	return rdma_alloc_hw_stats_struct(rsw_stat_descs, RSW_STAT_SHOWN,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

static struct rdma_hw_stats *rsw_alloc_hw_port_stats(struct ib_device *ibdev,
						     u32 port)
{
	return rsw_hw_stats_alloc();
}

/* ops.get_hw_stats: process context, stats->lock held by ib_core. */
static int rsw_get_hw_stats(struct ib_device *ibdev,
			    struct rdma_hw_stats *stats, u32 port, int index)
{
	struct rsw_stats *st = to_rsw_dev(ibdev)->stats;

	if (!port || stats->num_counters != RSW_STAT_SHOWN)
		return -EINVAL;
	rsw_stats_read_all(st, stats->value);
	return RSW_STAT_SHOWN;
}

/* ------------------------------------------------------ rdma counters */

/*
 * What each QP counter follows, and what stays device-wide.  Everything
 * counted on behalf of one QP goes through its route, so it follows the
 * QP into a bound counter: the verbs (user_doorbells, kern_*), and the
 * whole of its stream's life: FPDUs and octets both ways, messages by
 * opcode, Terminates (by layer too), RTRs, rx_err_* causes, work_runs,
 * tx_direct_runs.  The connection setup counts device-wide: mpa_* (a cep
 * has no QP yet on a passive side, and its counts are about the
 * connection, not the QP), and so does the MPA-level Terminate an
 * initiator's cep sends instead of a stream (cm.c, in tx_* as well).
 *
 * ib_core's contract (counters.c, the same in 6.1 and 6.12): it allocates
 * struct rdma_counter and its hw_stats (counter_alloc_stats), calls
 * counter_bind_qp with id 0 to have a new counter made, or with the id
 * of one of ours to add a QP; with the counter's mutex held for bind,
 * unbind and update_stats; and after the last unbind it reads the
 * counter (update_stats), adds it into the port's history and calls
 * counter_dealloc.  All of it in process context.  The driver sets and
 * clears qp->counter itself.
 */

/* Ours behind one of ib_core's counters: found by the id we gave it. */
struct rsw_counter {
	const struct rdma_counter *ib;	/* whose it is: checked at lookup */
	struct rsw_stats *stats;	/* the bound QPs' set: a reference */
	unsigned int nqps;		/* QPs bound now */
};

void rsw_counters_init(struct rsw_device *rsw)
{
	mutex_init(&rsw->counters_lock);
	xa_init_flags(&rsw->counters, XA_FLAGS_ALLOC1);
}

/* dealloc_driver: ib_core released every counter; frees any it left. */
void rsw_counters_destroy(struct rsw_device *rsw)
{
	struct rsw_counter *c;
	unsigned long id;

	xa_for_each(&rsw->counters, id, c) {
		rsw_stats_put(c->stats);
		kfree(c);
	}
	xa_destroy(&rsw->counters);
	mutex_destroy(&rsw->counters_lock);
}

/*
 * Ours behind @counter, or NULL: the id is only a key, the object must
 * also name @counter as its own (a stale id, or one of a counter we
 * already freed, finds nothing).
 */
static struct rsw_counter *rsw_counter_find(struct rsw_device *rsw,
					    const struct rdma_counter *counter)
{
	struct rsw_counter *c;

	lockdep_assert_held(&rsw->counters_lock);
	c = counter->id ? xa_load(&rsw->counters, counter->id) : NULL;
	return c && c->ib == counter ? c : NULL;
}

/* A new counter behind @counter, whose id it sets. */
static struct rsw_counter *rsw_counter_new(struct rsw_device *rsw,
					   struct rdma_counter *counter)
{
	struct rsw_counter *c;
	u32 id;
	int ret;

	lockdep_assert_held(&rsw->counters_lock);
	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return ERR_PTR(-ENOMEM);
	c->ib = counter;
	c->stats = rsw_stats_alloc();
	if (!c->stats) {
		ret = -ENOMEM;
		goto err_free;
	}
	/* Every counter has a QP bound: RSW_MAX_QP ids are enough. */
	ret = xa_alloc_cyclic(&rsw->counters, &id, c, XA_LIMIT(1, RSW_MAX_QP),
			      &rsw->counter_next, GFP_KERNEL);
	if (ret < 0)
		goto err_put;
	counter->id = id;
	return c;

err_put:
	rsw_stats_put(c->stats);
err_free:
	kfree(c);
	return ERR_PTR(ret);
}

/* The counter to bind to: @counter's (id 0: a new one), or an ERR_PTR. */
static struct rsw_counter *rsw_counter_for_bind(struct rsw_device *rsw,
						struct rdma_counter *counter)
{
	struct rsw_counter *c;

	if (!counter->id)
		return rsw_counter_new(rsw, counter);
	c = rsw_counter_find(rsw, counter);
	if (!c)
		return ERR_PTR(-ENOENT);
	/* More would not fit its `rdma statistic qp show` entry. */
	if (c->nqps >= RSW_COUNTER_MAX_QPS)
		return ERR_PTR(-ENOSPC);
	return c;
}

/*
 * ops.counter_bind_qp: from now on what @ibqp counts goes into the
 * counter's set instead of the device's.  A QP without a connection yet
 * is bound all the same: its stream counts through the QP's route.
 */
static int rsw_counter_bind_qp(struct rdma_counter *counter,
			       struct ib_qp *ibqp)
{
	struct rsw_qp *qp = to_rsw_qp(ibqp);
	struct rsw_device *rsw = qp->rsw;
	struct rsw_counter *c;
	int ret = 0;

	might_sleep();
	if (counter->device != ibqp->device)
		return -EINVAL;
	mutex_lock(&rsw->counters_lock);
	/*
	 * destroy_qp sets dead before rsw_counter_qp_gone() takes this
	 * mutex: a bind either finds dead or is undone there.
	 */
	if (READ_ONCE(qp->dead) ||
	    rcu_dereference_protected(qp->stats.bound,
				      lockdep_is_held(&rsw->counters_lock))) {
		ret = -EBUSY;
		goto out;
	}
	c = rsw_counter_for_bind(rsw, counter);
	if (IS_ERR(c)) {
		ret = PTR_ERR(c);
		goto out;
	}
	c->nqps++;
	qp->counter_id = counter->id;
	rcu_assign_pointer(qp->stats.bound, rsw_stats_get(c->stats));
	ibqp->counter = counter;
out:
	mutex_unlock(&rsw->counters_lock);
	return ret;
}

/*
 * Give @qp's counts back to the device: clear its bound set.  The last
 * QP of a counter then waits for a grace period, so that no CPU still
 * adds into the set when this returns: ib_core reads the counter into
 * the port's history right after (see the top).  An earlier QP need not
 * wait: what it still adds lands in a counter that lives on (its own
 * reference keeps the set), and the last unbind's grace period covers
 * those adds too; so N bound QPs torn down cost one grace period a
 * counter, not N under ib_core's counter lock.  A counter found under
 * the QP's id that does not own the QP's set (never, with ib_core's
 * contract) is left alone and the wait made.  False if @qp was bound to
 * nothing.  Reads no ib_core object: destroy_qp may call it for a
 * counter ib_core freed.
 */
static bool rsw_counter_detach(struct rsw_qp *qp)
{
	struct rsw_device *rsw = qp->rsw;
	struct rsw_counter *c;
	struct rsw_stats *st;
	bool last = true;

	might_sleep();
	mutex_lock(&rsw->counters_lock);
	st = rcu_replace_pointer(qp->stats.bound, NULL,
				 lockdep_is_held(&rsw->counters_lock));
	if (st) {
		c = xa_load(&rsw->counters, qp->counter_id);
		if (c && c->stats == st && c->nqps)
			last = --c->nqps == 0;
		qp->counter_id = 0;
		qp->base.counter = NULL;
	}
	mutex_unlock(&rsw->counters_lock);
	if (!st)
		return false;
	if (last)
		synchronize_rcu();
	rsw_stats_put(st);
	return true;
}

/* ops.counter_unbind_qp.  ib_core holds the counter's mutex. */
static int rsw_counter_unbind_qp(struct ib_qp *ibqp)
{
	return rsw_counter_detach(to_rsw_qp(ibqp)) ? 0 : -EINVAL;
}

/* Under the mutex even when nothing looks bound: a bind may be under way. */
void rsw_counter_qp_gone(struct rsw_qp *qp)
{
	rsw_counter_detach(qp);
}

/* ops.counter_alloc_stats: the port's layout (see rsw_hw_stats_alloc()). */
static struct rdma_hw_stats *rsw_counter_alloc_stats(struct rdma_counter *c)
{
	return rsw_hw_stats_alloc();
}

/*
 * ops.counter_update_stats: read the counter's set into its hw_stats.
 * ib_core holds the counter's mutex.  A counter we no longer have (a
 * reader racing with its release) is -ENOENT, which ib_core skips.
 */
static int rsw_counter_update_stats(struct rdma_counter *counter)
{
	struct rsw_device *rsw = to_rsw_dev(counter->device);
	struct rsw_counter *c;

	if (counter->stats->num_counters != RSW_STAT_SHOWN)
		return -EINVAL;
	mutex_lock(&rsw->counters_lock);
	c = rsw_counter_find(rsw, counter);
	if (c)
		rsw_stats_read_all(c->stats, counter->stats->value);
	mutex_unlock(&rsw->counters_lock);
	return c ? 0 : -ENOENT;
}

/*
 * ops.counter_dealloc: its last QP left and ib_core read it a last time.
 * A QP still bound (ib_core releases a counter even when an unbind
 * failed) keeps its own reference on the set until it detaches.
 */
static int rsw_counter_dealloc(struct rdma_counter *counter)
{
	struct rsw_device *rsw = to_rsw_dev(counter->device);
	struct rsw_counter *c;

	mutex_lock(&rsw->counters_lock);
	c = rsw_counter_find(rsw, counter);
	if (c)
		xa_erase(&rsw->counters, counter->id);
	mutex_unlock(&rsw->counters_lock);
	if (!c)
		return -ENOENT;
	rsw_stats_put(c->stats);
	kfree(c);
	return 0;
}

const struct ib_device_ops rsw_stats_ops = {
	.alloc_hw_port_stats = rsw_alloc_hw_port_stats,
	.get_hw_stats = rsw_get_hw_stats,
	.counter_bind_qp = rsw_counter_bind_qp,
	.counter_unbind_qp = rsw_counter_unbind_qp,
	.counter_dealloc = rsw_counter_dealloc,
	.counter_alloc_stats = rsw_counter_alloc_stats,
	.counter_update_stats = rsw_counter_update_stats,
};
