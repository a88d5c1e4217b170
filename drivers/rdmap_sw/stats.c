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
 * after a verb returned holds its own: a stream from rsw_stream_attach()
 * until rsw_stream_free() (its TX engine and socket sink borrow it), a
 * cep from rsw_cep_alloc() until rsw_cep_free() (its children take their
 * own; a cep on iw.c's "peer already left" path, a stream's work item
 * and its teardown all run before their object is freed).  The verbs
 * themselves (post_send, post_recv, a doorbell) count through the
 * device's reference: ib_core calls no verb once dealloc_driver may run.
 * So the set is freed only after the last object that could count into
 * it; nothing waits for that.
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

static struct rdma_hw_stats *rsw_alloc_hw_port_stats(struct ib_device *ibdev,
						     u32 port)
{
	return rdma_alloc_hw_stats_struct(rsw_stat_descs, RSW_STAT_SHOWN,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
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

const struct ib_device_ops rsw_stats_ops = {
	.alloc_hw_port_stats = rsw_alloc_hw_port_stats,
	.get_hw_stats = rsw_get_hw_stats,
};
