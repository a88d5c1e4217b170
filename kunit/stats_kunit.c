// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite rdmap_sw_stats: the counters of stats.h and the tables that
 * name them.
 *  - names: every hw_stats descriptor has a name, no two the same, and
 *    all of them fit the one netlink message `rdma statistic` reads;
 *  - mapping: every Terminate cause the RFCs define (rsw_term_name(), the
 *    reference) matches exactly one rx_err row and maps to its counter,
 *    every row is a defined cause; every MPA failure reason, every RDMAP
 *    opcode (sent and received), every Terminate layer and RTR type has a
 *    counter of its own and none is RSW_STAT_NONE (a row left out);
 *  - sets: counts on several CPUs sum, references keep a set alive; a
 *    route counts into its bound set while it has one, else the device's;
 *  - per-QP counters: a counter's `rdma statistic qp show` entry with
 *    RSW_COUNTER_MAX_QPS QPs fits a netlink dump message.
 * The deltas real streams cause are checked in stream_kunit.c.
 */
#include <kunit/test.h>
#include <linux/bitmap.h>
#include <linux/module.h>
#include <linux/string.h>
#include <net/netlink.h>
#include <rdma/ib_verbs.h>

#include "internal.h"

RSW_IMPORT_KUNIT_NS();

static const char *stat_name(enum rsw_stat i)
{
	return rsw_stat_descs[i - 1].name;
}

/* Claim counter @i in @seen; false (and a failure) if taken or invalid. */
static bool stat_claim(struct kunit *test, unsigned long *seen,
		       enum rsw_stat i, const char *what)
{
	KUNIT_EXPECT_GT_MSG(test, i, RSW_STAT_NONE, "%s: no counter", what);
	KUNIT_EXPECT_LT_MSG(test, i, RSW_STAT_NUM, "%s: out of range", what);
	if (i <= RSW_STAT_NONE || i >= RSW_STAT_NUM)
		return false;
	KUNIT_EXPECT_FALSE_MSG(test, test_bit(i, seen),
			       "%s: counter %s used twice", what,
			       stat_name(i));
	return !__test_and_set_bit(i, seen);
}

static void stats_names(struct kunit *test)
{
	unsigned int i, j;

	for (i = 0; i < RSW_STAT_SHOWN; i++) {
		KUNIT_ASSERT_NOT_NULL_MSG(test, rsw_stat_descs[i].name,
					  "counter %u has no name", i + 1);
		KUNIT_EXPECT_EQ(test, rsw_stat_descs[i].flags, 0U);
		for (j = 0; j < i; j++)
			KUNIT_EXPECT_STRNEQ(test, rsw_stat_descs[i].name,
					    rsw_stat_descs[j].name);
	}
}

/*
 * `rdma statistic show` gets every counter of the port in one netlink
 * message that ib_core allocates with nlmsg_new(NLMSG_DEFAULT_SIZE)
 * (nldev.c): a nest per counter with its name and value, after the
 * device's index and name (the longest allowed here) and the port.  A
 * table that outgrows it makes the tool fail ("Message too long").
 */
static void stats_fit_netlink(struct kunit *test)
{
	size_t len = nla_total_size(sizeof(u32)) * 2 +
		     nla_total_size(IB_DEVICE_NAME_MAX) + nla_total_size(0);
	unsigned int i;

	for (i = 0; i < RSW_STAT_SHOWN; i++)
		len += nla_total_size(0) +
		       nla_total_size(strlen(rsw_stat_descs[i].name) + 1) +
		       nla_total_size_64bit(sizeof(u64));
	kunit_info(test, "%u counters, %zu of %lu octets\n", RSW_STAT_SHOWN,
		   len, (unsigned long)NLMSG_DEFAULT_SIZE);
	KUNIT_EXPECT_LE(test, len, (size_t)NLMSG_DEFAULT_SIZE);
}

/*
 * `rdma statistic qp show` dumps one counter per entry (nldev.c,
 * res_get_common_dumpit() and fill_res_counter_entry()) into messages of
 * at least NLMSG_GOODSIZE: the device's index and name (the longest
 * allowed), the table and entry nests, port, counter id, mode, in auto
 * mode the QP type and owner's PID, the QP table with a nest and LQPN per
 * bound QP, and the counters as for the port.  An entry that does not
 * fit an empty message is retried for ever (nothing moves the dump on):
 * RSW_COUNTER_MAX_QPS must keep it inside.
 */
static void stats_counter_fit_netlink(struct kunit *test)
{
	size_t len = nla_total_size(sizeof(u32)) +		/* dev index */
		     nla_total_size(IB_DEVICE_NAME_MAX) +	/* dev name */
		     nla_total_size(0) * 2 +		/* table, entry */
		     nla_total_size(sizeof(u32)) * 3 +	/* port, cntn, mode */
		     nla_total_size(sizeof(u8)) +		/* auto: QP type */
		     nla_total_size(sizeof(u32)) +		/* auto: PID */
		     nla_total_size(0) +			/* QP table */
		     RSW_COUNTER_MAX_QPS * (nla_total_size(0) +
					    nla_total_size(sizeof(u32))) +
		     nla_total_size(0);			/* counters */
	unsigned int i;

	for (i = 0; i < RSW_STAT_SHOWN; i++)
		len += nla_total_size(0) +
		       nla_total_size(strlen(rsw_stat_descs[i].name) + 1) +
		       nla_total_size_64bit(sizeof(u64));
	kunit_info(test, "a counter of %u QPs: %zu of %lu octets\n",
		   RSW_COUNTER_MAX_QPS, len, (unsigned long)NLMSG_DEFAULT_SIZE);
	KUNIT_EXPECT_LE(test, len, (size_t)NLMSG_DEFAULT_SIZE);
}

static unsigned int rx_err_matches(u8 l, u8 t, u8 c, enum rsw_stat *stat)
{
	unsigned int i, n = 0;

	for (i = 0; i < rsw_rx_err_nrows; i++) {
		const struct rsw_rx_err_row *r = &rsw_rx_err_rows[i];

		if (r->layer == l && r->etype == t &&
		    (r->ecode < 0 || r->ecode == c)) {
			n++;
			*stat = r->stat;
		}
	}
	return n;
}

/* Every defined cause -> exactly one row; every undefined one -> none. */
static void stats_rx_err_causes(struct kunit *test)
{
	unsigned int l, t, c, defined = 0, bad = 0;

	for (l = 0; l < 16; l++) {
		for (t = 0; t < 16; t++) {
			for (c = 0; c < 256; c++) {
				struct rsw_term_cause tc =
					RSW_TERM_CAUSE(l, t, c);
				enum rsw_stat want = RSW_STAT_NONE;
				bool def = rsw_term_name(l, t, c);
				unsigned int n = rx_err_matches(l, t, c, &want);

				defined += def;
				if (n == def &&
				    rsw_stat_rx_err(&tc) == want)
					continue;
				if (bad++ < 8)
					KUNIT_FAIL(test, "cause %u/%u/%#x: defined %d, %u rows",
						   l, t, c, def, n);
			}
		}
	}
	KUNIT_EXPECT_EQ(test, bad, 0U);
	KUNIT_EXPECT_GT(test, defined, 0U);
}

/* Every row is a defined cause with a counter of its own, named rx_err_. */
static void stats_rx_err_rows(struct kunit *test)
{
	unsigned long *seen = kunit_kcalloc(test, BITS_TO_LONGS(RSW_STAT_NUM),
					    sizeof(long), GFP_KERNEL);
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, seen);
	KUNIT_EXPECT_GT(test, rsw_rx_err_nrows, 0U);
	for (i = 0; i < rsw_rx_err_nrows; i++) {
		const struct rsw_rx_err_row *r = &rsw_rx_err_rows[i];
		u8 c = r->ecode < 0 ? 0 : r->ecode;

		KUNIT_EXPECT_NOT_NULL_MSG(test,
					  rsw_term_name(r->layer, r->etype, c),
					  "row %u is no defined cause", i);
		if (stat_claim(test, seen, r->stat, "rx_err row"))
			KUNIT_EXPECT_EQ(test, strncmp(stat_name(r->stat),
						      "rx_err_", 7), 0);
	}
}

/* Every failure reason its own mpa_ counter; RSW_MPA_OK none. */
static void stats_mpa_reasons(struct kunit *test)
{
	unsigned long *seen = kunit_kcalloc(test, BITS_TO_LONGS(RSW_STAT_NUM),
					    sizeof(long), GFP_KERNEL);
	enum rsw_mpa_reason r;

	KUNIT_ASSERT_NOT_NULL(test, seen);
	KUNIT_EXPECT_EQ(test, rsw_mpa_reason(RSW_MPA_OK)->stat, RSW_STAT_NONE);
	for (r = RSW_MPA_OK + 1; r < RSW_MPA_E_NUM; r++) {
		enum rsw_stat i = rsw_mpa_reason(r)->stat;

		if (stat_claim(test, seen, i, rsw_mpa_reason(r)->name))
			KUNIT_EXPECT_EQ(test, strncmp(stat_name(i), "mpa_", 4),
					0);
	}
}

/* Every opcode: a tx_ and an rx_ counter; opcodes may share (the Sends). */
static void stats_opcodes(struct kunit *test)
{
	unsigned int op;

	for (op = 0; op < RSW_OP_NUM; op++) {
		const struct rsw_rdmap_op *o = rsw_rdmap_op(op);

		KUNIT_ASSERT_NOT_NULL(test, o);
		KUNIT_EXPECT_GT_MSG(test, o->tx_stat, RSW_STAT_NONE, "%s",
				    o->name);
		KUNIT_EXPECT_GT_MSG(test, o->rx_stat, RSW_STAT_NONE, "%s",
				    o->name);
		KUNIT_EXPECT_NE(test, o->tx_stat, o->rx_stat);
		if (o->tx_stat <= RSW_STAT_NONE || o->rx_stat <= RSW_STAT_NONE)
			continue;
		KUNIT_EXPECT_EQ(test, strncmp(stat_name(o->tx_stat), "tx_", 3),
				0);
		KUNIT_EXPECT_EQ(test, strncmp(stat_name(o->rx_stat), "rx_", 3),
				0);
		/* The two directions of one counter pair: tx_X and rx_X. */
		KUNIT_EXPECT_EQ(test,
				strcmp(stat_name(o->tx_stat) + 3,
				       stat_name(o->rx_stat) + 3), 0);
	}
}

/* Terminate layers and RTR types: one counter each way, all distinct. */
static void stats_layers_rtr(struct kunit *test)
{
	unsigned long *seen = kunit_kcalloc(test, BITS_TO_LONGS(RSW_STAT_NUM),
					    sizeof(long), GFP_KERNEL);
	static const u8 layers[] = { RSW_TERM_LAYER_RDMAP, RSW_TERM_LAYER_DDP,
				     RSW_TERM_LAYER_LLP };
	static const u8 rtrs[] = { RSW_MPA_RTR_WRITE, RSW_MPA_RTR_READ,
				   RSW_MPA_RTR_SEND };
	unsigned int i, rx;

	KUNIT_ASSERT_NOT_NULL(test, seen);
	for (rx = 0; rx < 2; rx++) {
		for (i = 0; i < ARRAY_SIZE(layers); i++)
			stat_claim(test, seen, rsw_stat_term_layer(layers[i], rx),
				   "Terminate layer");
		for (i = 0; i < ARRAY_SIZE(rtrs); i++)
			stat_claim(test, seen, rsw_stat_rtr(rtrs[i], rx), "RTR");
	}
	/* Undefined values from the wire count nowhere. */
	KUNIT_EXPECT_EQ(test, rsw_stat_term_layer(3, true), RSW_STAT_NONE);
	KUNIT_EXPECT_EQ(test, rsw_stat_term_layer(15, true), RSW_STAT_NONE);
	KUNIT_EXPECT_EQ(test, rsw_stat_rtr(0, true), RSW_STAT_NONE);
	KUNIT_EXPECT_EQ(test, rsw_stat_rtr(RSW_MPA_RTR_ALL, true),
			RSW_STAT_NONE);
}

/* Counts from every online CPU sum; NONE and NULL count nothing. */
static void stats_percpu_sum(struct kunit *test)
{
	struct rsw_stats *st = rsw_stats_alloc();
	unsigned int cpu, n = 0;

	KUNIT_ASSERT_NOT_NULL(test, st);
	for_each_online_cpu(cpu) {
		/* Each CPU's share, written as that CPU would. */
		per_cpu_ptr(st->pcpu, cpu)->v[RSW_STAT_TX_FPDUS] += cpu + 1;
		n += cpu + 1;
	}
	rsw_stat_add(st, RSW_STAT_TX_FPDUS, 5);
	rsw_stat_inc(st, RSW_STAT_NONE);
	rsw_stat_inc(NULL, RSW_STAT_TX_FPDUS);
	KUNIT_EXPECT_EQ(test, rsw_stats_read(st, RSW_STAT_TX_FPDUS), n + 5ULL);
	KUNIT_EXPECT_EQ(test, rsw_stats_read(st, RSW_STAT_RX_FPDUS), 0ULL);
	KUNIT_EXPECT_EQ(test, rsw_stats_read(st, RSW_STAT_NONE), 0ULL);
	/* A second reference keeps the set after the first is gone. */
	KUNIT_EXPECT_PTR_EQ(test, rsw_stats_get(st), st);
	rsw_stats_put(st);
	rsw_stat_inc(st, RSW_STAT_RX_FPDUS);
	KUNIT_EXPECT_EQ(test, rsw_stats_read(st, RSW_STAT_RX_FPDUS), 1ULL);
	rsw_stats_put(st);
}

/*
 * A QP's route (stats.h): its counts go to the device's set until a
 * counter's set is bound, then only there, and back once unbound; a
 * NULL route counts nothing.
 */
static void stats_route(struct kunit *test)
{
	struct rsw_stats *dev = rsw_stats_alloc();
	struct rsw_stats *bound = rsw_stats_alloc();
	struct rsw_stats_route r = { .dev = dev };

	KUNIT_ASSERT_NOT_NULL(test, dev);
	KUNIT_ASSERT_NOT_NULL(test, bound);
	rsw_route_inc(&r, RSW_STAT_TX_SENDS);
	rcu_assign_pointer(r.bound, bound);
	rsw_route_add(&r, RSW_STAT_TX_SENDS, 3);
	rsw_route_inc(&r, RSW_STAT_RX_FPDUS);
	RCU_INIT_POINTER(r.bound, NULL);
	synchronize_rcu();
	rsw_route_inc(&r, RSW_STAT_RX_FPDUS);
	rsw_route_inc(NULL, RSW_STAT_RX_FPDUS);
	KUNIT_EXPECT_EQ(test, rsw_stats_read(dev, RSW_STAT_TX_SENDS), 1ULL);
	KUNIT_EXPECT_EQ(test, rsw_stats_read(dev, RSW_STAT_RX_FPDUS), 1ULL);
	KUNIT_EXPECT_EQ(test, rsw_stats_read(bound, RSW_STAT_TX_SENDS), 3ULL);
	KUNIT_EXPECT_EQ(test, rsw_stats_read(bound, RSW_STAT_RX_FPDUS), 1ULL);
	rsw_stats_put(bound);
	rsw_stats_put(dev);
}

static struct kunit_case stats_cases[] = {
	KUNIT_CASE(stats_names),
	KUNIT_CASE(stats_fit_netlink),
	KUNIT_CASE(stats_rx_err_causes),
	KUNIT_CASE(stats_rx_err_rows),
	KUNIT_CASE(stats_mpa_reasons),
	KUNIT_CASE(stats_opcodes),
	KUNIT_CASE(stats_layers_rtr),
	KUNIT_CASE(stats_percpu_sum),
	KUNIT_CASE(stats_route),
	KUNIT_CASE(stats_counter_fit_netlink),
	{}
};

static struct kunit_suite stats_suite = {
	.name = "rdmap_sw_stats",
	.test_cases = stats_cases,
};

kunit_test_suite(stats_suite);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("KUnit tests for rdmap_sw counters");
