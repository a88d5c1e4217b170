/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmap_sw: the device's counters, shown by `rdma statistic show link
 * rsw0/1` and in /sys/class/infiniband/rsw0/ports/1/hw_counters/
 * (ib_core's hw_stats).  Every counter is one row of the lists below;
 * Documentation/admin.rst ("Counters") says what each counts.  The
 * functions are listed in internal.h (stats.c group); the lifetime of a
 * counter set is at the top of stats.c, per-QP counters (`rdma
 * statistic qp`, struct rsw_stats_route) after it.
 *
 * Index 0 (RSW_STAT_NONE) is no counter: a table row whose counter field
 * was left out holds 0, and stats_kunit.c fails on it; counting into it
 * does nothing.  Counter i is hw_stats value i - 1.
 */
#ifndef _RDMAP_SW_STATS_H
#define _RDMAP_SW_STATS_H

#include <linux/kref.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/types.h>

#include "wire.h"

/*
 * Counters of one row each: X(id, "name").  The per-opcode ones are
 * named from opcode.c's rows (.tx_stat, .rx_stat), the MPA failures
 * from mpa.c's reason rows (.stat).
 */
#define RSW_STATS_BASIC(X)						\
	X(TX_FPDUS, "tx_fpdus")						\
	X(TX_OCTETS, "tx_octets")					\
	X(TX_ZC_OCTETS, "tx_zcopy_octets")				\
	X(TX_COPIED_OCTETS, "tx_copied_octets")				\
	X(RX_FPDUS, "rx_fpdus")						\
	X(RX_OCTETS, "rx_octets")					\
	X(TX_WRITES, "tx_writes")					\
	X(RX_WRITES, "rx_writes")					\
	X(TX_READ_REQS, "tx_read_reqs")				\
	X(RX_READ_REQS, "rx_read_reqs")				\
	X(TX_READ_RESPS, "tx_read_resps")				\
	X(RX_READ_RESPS, "rx_read_resps")				\
	X(TX_SENDS, "tx_sends")						\
	X(RX_SENDS, "rx_sends")						\
	X(TX_IMMS, "tx_imm_data")					\
	X(RX_IMMS, "rx_imm_data")					\
	X(TX_ATOMIC_REQS, "tx_atomic_reqs")				\
	X(RX_ATOMIC_REQS, "rx_atomic_reqs")				\
	X(TX_ATOMIC_RESPS, "tx_atomic_resps")			\
	X(RX_ATOMIC_RESPS, "rx_atomic_resps")			\
	X(TX_TERMS, "tx_terms")					\
	X(RX_TERMS, "rx_terms")					\
	X(TX_TERMS_RDMAP, "tx_terms_rdmap")			\
	X(TX_TERMS_DDP, "tx_terms_ddp")				\
	X(TX_TERMS_LLP, "tx_terms_llp")				\
	X(RX_TERMS_RDMAP, "rx_terms_rdmap")			\
	X(RX_TERMS_DDP, "rx_terms_ddp")				\
	X(RX_TERMS_LLP, "rx_terms_llp")				\
	X(TX_RTR_WRITE, "tx_rtr_write")					\
	X(TX_RTR_READ, "tx_rtr_read")					\
	X(TX_RTR_SEND, "tx_rtr_send")					\
	X(RX_RTR_WRITE, "rx_rtr_write")					\
	X(RX_RTR_READ, "rx_rtr_read")					\
	X(RX_RTR_SEND, "rx_rtr_send")					\
	X(USER_DOORBELLS, "user_doorbells")				\
	X(KERNEL_SEND_POSTS, "kern_send_calls")			\
	X(KERNEL_SEND_WRS, "kern_send_wrs")				\
	X(KERNEL_RECV_POSTS, "kern_recv_calls")			\
	X(KERNEL_RECV_WRS, "kern_recv_wrs")				\
	X(STREAM_WAKEUPS, "work_runs")				\
	X(TX_DIRECT_RUNS, "tx_direct_runs")				\
	X(MPA_CONNECTED, "mpa_connected")				\
	X(MPA_ACCEPTED, "mpa_accepted")					\
	X(MPA_REJECTS_SENT, "mpa_rej_sent")				\
	X(MPA_REPLY_SEND_FAILS, "mpa_reply_fails")		\
	X(MPA_TIMEOUTS, "mpa_timeouts")					\
	X(MPA_TCP_FAILS, "mpa_tcp_fails")			\
	X(MPA_REQUEST_SEND_FAILS, "mpa_req_fails")		\
	X(MPA_NETDOWN, "mpa_net_gone")				\
	X(MPA_E_CLOSED, "mpa_closed")				\
	X(MPA_E_TRUNCATED, "mpa_truncated")			\
	X(MPA_E_KEY, "mpa_bad_key")					\
	X(MPA_E_KEY_ROLE, "mpa_key_role")				\
	X(MPA_E_REV, "mpa_bad_rev")				\
	X(MPA_E_PD_LEN, "mpa_pd_len")				\
	X(MPA_E_ENHANCED, "mpa_enhanced")				\
	X(MPA_E_REJECTED, "mpa_rej_rcvd")			\
	X(MPA_E_PD_IWCM, "mpa_pd_iwcm")				\
	X(MPA_E_IRD, "mpa_low_ird")					\
	X(MPA_E_NO_RTR, "mpa_no_rtr")				\
	X(MPA_E_CRC, "mpa_crc_refused")

/*
 * Peer input RX refused, one counter per Terminate cause the RFCs define
 * (rsw_term_name()): X(id, "name", layer, etype, ecode), ecode -1 for
 * "any code" (the local catastrophic types).  stats_kunit.c checks that
 * every defined cause matches exactly one row and every row a defined
 * cause.  rx_err_mpa_crc is the CRC error counter.
 */
#define RSW_L_RDMAP	RSW_TERM_LAYER_RDMAP
#define RSW_L_DDP	RSW_TERM_LAYER_DDP
#define RSW_L_LLP	RSW_TERM_LAYER_LLP
#define RSW_RX_ERRS(X)							\
	X(RDMAP_CATASTROPHIC, "rx_err_rdmap_cat",		\
	  RSW_L_RDMAP, RSW_RDMAP_ET_CATASTROPHIC, -1)			\
	X(RDMAP_INVALID_STAG, "rx_err_rdmap_stag",		\
	  RSW_L_RDMAP, RSW_RDMAP_ET_REMOTE_PROT, RSW_RDMAP_EC_INVALID_STAG) \
	X(RDMAP_BASE_BOUNDS, "rx_err_rdmap_bounds",		\
	  RSW_L_RDMAP, RSW_RDMAP_ET_REMOTE_PROT, RSW_RDMAP_EC_BASE_BOUNDS) \
	X(RDMAP_ACCESS, "rx_err_rdmap_access",				\
	  RSW_L_RDMAP, RSW_RDMAP_ET_REMOTE_PROT, RSW_RDMAP_EC_ACCESS)	\
	X(RDMAP_STAG_NOT_ASSOC, "rx_err_rdmap_assoc",		\
	  RSW_L_RDMAP, RSW_RDMAP_ET_REMOTE_PROT, RSW_RDMAP_EC_STAG_NOT_ASSOC) \
	X(RDMAP_TO_WRAP, "rx_err_rdmap_to_wrap",			\
	  RSW_L_RDMAP, RSW_RDMAP_ET_REMOTE_PROT, RSW_RDMAP_EC_TO_WRAP)	\
	X(RDMAP_PROT_CANT_INV, "rx_err_rdmap_p_inval",	\
	  RSW_L_RDMAP, RSW_RDMAP_ET_REMOTE_PROT, RSW_RDMAP_EC_CANT_INVALIDATE) \
	X(RDMAP_PROT_UNSPEC, "rx_err_rdmap_p_unspec",		\
	  RSW_L_RDMAP, RSW_RDMAP_ET_REMOTE_PROT, RSW_RDMAP_EC_UNSPECIFIED) \
	X(RDMAP_VERSION, "rx_err_rdmap_version",			\
	  RSW_L_RDMAP, RSW_RDMAP_ET_REMOTE_OP, RSW_RDMAP_EC_VERSION)	\
	X(RDMAP_OPCODE, "rx_err_rdmap_opcode",				\
	  RSW_L_RDMAP, RSW_RDMAP_ET_REMOTE_OP, RSW_RDMAP_EC_OPCODE)	\
	X(RDMAP_CAT_STREAM, "rx_err_rdmap_cat_stream",		\
	  RSW_L_RDMAP, RSW_RDMAP_ET_REMOTE_OP, RSW_RDMAP_EC_CATASTROPHIC_STREAM) \
	X(RDMAP_CAT_GLOBAL, "rx_err_rdmap_cat_global",		\
	  RSW_L_RDMAP, RSW_RDMAP_ET_REMOTE_OP, RSW_RDMAP_EC_CATASTROPHIC_GLOBAL) \
	X(RDMAP_OP_CANT_INV, "rx_err_rdmap_o_inval",		\
	  RSW_L_RDMAP, RSW_RDMAP_ET_REMOTE_OP, RSW_RDMAP_EC_CANT_INVALIDATE) \
	X(RDMAP_OP_UNSPEC, "rx_err_rdmap_o_unspec",		\
	  RSW_L_RDMAP, RSW_RDMAP_ET_REMOTE_OP, RSW_RDMAP_EC_UNSPECIFIED) \
	X(DDP_CATASTROPHIC, "rx_err_ddp_cat",			\
	  RSW_L_DDP, RSW_DDP_ET_CATASTROPHIC, -1)			\
	X(DDP_T_INVALID_STAG, "rx_err_ddp_t_stag",		\
	  RSW_L_DDP, RSW_DDP_ET_TAGGED, RSW_DDP_EC_T_INVALID_STAG)	\
	X(DDP_T_BASE_BOUNDS, "rx_err_ddp_t_bounds",		\
	  RSW_L_DDP, RSW_DDP_ET_TAGGED, RSW_DDP_EC_T_BASE_BOUNDS)	\
	X(DDP_T_STAG_NOT_ASSOC, "rx_err_ddp_t_assoc",	\
	  RSW_L_DDP, RSW_DDP_ET_TAGGED, RSW_DDP_EC_T_STAG_NOT_ASSOC)	\
	X(DDP_T_TO_WRAP, "rx_err_ddp_t_to_wrap",			\
	  RSW_L_DDP, RSW_DDP_ET_TAGGED, RSW_DDP_EC_T_TO_WRAP)		\
	X(DDP_T_VERSION, "rx_err_ddp_t_version",			\
	  RSW_L_DDP, RSW_DDP_ET_TAGGED, RSW_DDP_EC_T_VERSION)		\
	X(DDP_U_INVALID_QN, "rx_err_ddp_u_qn",		\
	  RSW_L_DDP, RSW_DDP_ET_UNTAGGED, RSW_DDP_EC_U_INVALID_QN)	\
	X(DDP_U_MSN_NO_BUF, "rx_err_ddp_u_no_buf",	\
	  RSW_L_DDP, RSW_DDP_ET_UNTAGGED, RSW_DDP_EC_U_MSN_NO_BUF)	\
	X(DDP_U_MSN_RANGE, "rx_err_ddp_u_msn",		\
	  RSW_L_DDP, RSW_DDP_ET_UNTAGGED, RSW_DDP_EC_U_MSN_RANGE)	\
	X(DDP_U_INVALID_MO, "rx_err_ddp_u_mo",		\
	  RSW_L_DDP, RSW_DDP_ET_UNTAGGED, RSW_DDP_EC_U_INVALID_MO)	\
	X(DDP_U_TOO_LONG, "rx_err_ddp_u_too_long",		\
	  RSW_L_DDP, RSW_DDP_ET_UNTAGGED, RSW_DDP_EC_U_TOO_LONG)	\
	X(DDP_U_VERSION, "rx_err_ddp_u_version",			\
	  RSW_L_DDP, RSW_DDP_ET_UNTAGGED, RSW_DDP_EC_U_VERSION)		\
	X(MPA_TCP_LOST, "rx_err_mpa_tcp_lost",				\
	  RSW_L_LLP, RSW_LLP_ET_MPA, RSW_MPA_EC_TCP_LOST)		\
	X(MPA_CRC, "rx_err_mpa_crc",					\
	  RSW_L_LLP, RSW_LLP_ET_MPA, RSW_MPA_EC_CRC)			\
	X(MPA_MARKER, "rx_err_mpa_marker",				\
	  RSW_L_LLP, RSW_LLP_ET_MPA, RSW_MPA_EC_MARKER)			\
	X(MPA_BAD_RR, "rx_err_mpa_bad_rr",			\
	  RSW_L_LLP, RSW_LLP_ET_MPA, RSW_MPA_EC_BAD_RR)			\
	X(MPA_CATASTROPHIC, "rx_err_mpa_cat",			\
	  RSW_L_LLP, RSW_LLP_ET_MPA, RSW_MPA_EC_CATASTROPHIC)		\
	X(MPA_IRD, "rx_err_mpa_ird",					\
	  RSW_L_LLP, RSW_LLP_ET_MPA, RSW_MPA_EC_IRD)			\
	X(MPA_NO_RTR, "rx_err_mpa_no_rtr",				\
	  RSW_L_LLP, RSW_LLP_ET_MPA, RSW_MPA_EC_NO_RTR)

#define RSW_STAT_ENUM_BASIC(id, name)			RSW_STAT_##id,
#define RSW_STAT_ENUM_RX_ERR(id, name, l, t, c)		RSW_STAT_RX_ERR_##id,

enum rsw_stat {
	RSW_STAT_NONE = 0,	/* no counter: see the top */
	RSW_STATS_BASIC(RSW_STAT_ENUM_BASIC)
	RSW_RX_ERRS(RSW_STAT_ENUM_RX_ERR)
	RSW_STAT_NUM,
};

/* How many hw_stats values the port shows (every counter but NONE). */
#define RSW_STAT_SHOWN	(RSW_STAT_NUM - 1)

/* A row of RSW_RX_ERRS: the cause (@ecode -1: any code) and its counter. */
struct rsw_rx_err_row {
	u8 layer;
	u8 etype;
	s16 ecode;
	enum rsw_stat stat;
};

/* One CPU's share of every counter. */
struct rsw_stats_pcpu {
	u64 v[RSW_STAT_NUM];
};

/* A counter set: the device's, referenced by whatever counts into it. */
struct rsw_stats {
	struct kref ref;
	struct rsw_stats_pcpu __percpu *pcpu;
};

/*
 * Count @n into counter @i of @st.  Any context; one per-CPU add, no
 * atomic.  @st NULL (an engine without a device, as in KUnit) or @i
 * RSW_STAT_NONE count nothing.  The caller holds a reference on @st, or
 * is a verb of the device that owns it (see the top of stats.c).
 */
static inline void rsw_stat_add(struct rsw_stats *st, enum rsw_stat i, u64 n)
{
	if (st && i > RSW_STAT_NONE && i < RSW_STAT_NUM)
		this_cpu_add(st->pcpu->v[i], n);
}

static inline void rsw_stat_inc(struct rsw_stats *st, enum rsw_stat i)
{
	rsw_stat_add(st, i, 1);
}

/*
 * Where the counts made on behalf of one QP go: its route, owned by the
 * QP (qp->stats), borrowed by its stream, TX engine and socket sink.
 * @dev is the device's set (the owner's reference).  @bound is NULL, or
 * while an rdma counter has the QP bound (`rdma statistic qp bind`), that
 * counter's set (a reference of the binding), and then the QP counts
 * there INSTEAD: ib_core shows a link's totals as the port's set plus
 * every counter's plus the released counters' history, so each count
 * must land in exactly one set.  Written only by the counter ops, under
 * the device's counters_lock (stats.c); read under RCU at each count.
 */
struct rsw_stats_route {
	struct rsw_stats *dev;
	struct rsw_stats __rcu *bound;
};

/*
 * Count @n into counter @i of @r's current set.  Any context; @r NULL
 * (an engine without a QP, as in KUnit) counts nothing.  The unbind of
 * a counter's last QP waits for a grace period after clearing @bound, so
 * no count still goes into the set once that unbind returned (stats.c).
 */
static inline void rsw_route_add(const struct rsw_stats_route *r,
				 enum rsw_stat i, u64 n)
{
	struct rsw_stats *st;

	if (!r)
		return;
	rcu_read_lock();
	st = rcu_dereference(r->bound);
	rsw_stat_add(st ?: r->dev, i, n);
	rcu_read_unlock();
}

static inline void rsw_route_inc(const struct rsw_stats_route *r,
				 enum rsw_stat i)
{
	rsw_route_add(r, i, 1);
}

#endif /* _RDMAP_SW_STATS_H */
