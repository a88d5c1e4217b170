/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmap_sw: what stream.c (a connection's lifecycle, TX, endings) and
 * stream_rx.c (its RX delivery side) share.  Private to those two files;
 * the model, contexts and lifetimes are at the top of stream.c.
 */
#ifndef _RDMAP_SW_STREAM_PRIV_H
#define _RDMAP_SW_STREAM_PRIV_H

#include "internal.h"

enum rsw_stream_phase {
	RSW_STREAM_IDLE,
	RSW_STREAM_RUN,
	RSW_STREAM_LINGER,
	RSW_STREAM_DONE,
	RSW_STREAM_PHASES,
};

/* Why RUN ends (the first reason found stands); the peer's FIN aside. */
enum rsw_stream_why {
	RSW_WHY_NONE,		/* it does not */
	RSW_WHY_TERMINATE,	/* ours to send (s->term), then linger */
	RSW_WHY_PEER_TERM,	/* the peer's Terminate (s->peer_term) */
	RSW_WHY_ABORT,		/* nothing more can be said: reset */
};

/* The untagged Send being received. */
struct rsw_stream_recv {
	bool active;
	bool rtr;		/* the zero-length RTR Send: no WQE behind it */
	bool partial;		/* a Send's first segments were placed */
	u8 status;		/* RDMAP_SW_WC_* if placement failed */
	u32 idx;
	struct rdmap_sw_rqe rqe;
};

/*
 * A completion RX must not post yet: its work request invalidated an MR
 * (Send with Invalidate, Read with Invalidate) whose TX pieces, collected
 * by some stream before, are still on their way to TCP.  The parser is
 * paused after its segment; the work item waits the pieces out and then
 * completes it (rsw_stream_deferred_finish()), before anything later.
 */
struct rsw_stream_deferred {
	struct rsw_mr *mr;	/* reference to wait on; NULL: nothing held */
	bool sq;		/* a Read's SQ entry, else a receive */
	u32 idx;
	u8 sq_status;
	u32 sq_len;
	struct rsw_rq_result rq;
};

/* sq_flags: a look saw a batch and kicked the work for it. */
#define RSW_SQ_BATCH_SEEN	0

/* How a TX run ended, for the doorbell linger (rsw_stream_release()). */
enum rsw_stream_tx_ran {
	RSW_TX_RAN_NOT,		/* not run */
	RSW_TX_RAN_STALLED,	/* TCP full, ORD, a fence, or an end */
	RSW_TX_RAN_BUDGET,	/* more to send: the work goes on */
	RSW_TX_RAN_DRAINED,	/* every WQE taken and sent */
};

/*
 * A connection's two ends as its socket had them at attach (a connected
 * socket keeps them): what rdma res matches a cm_id against, under the
 * stream list's lock, without touching the socket.  IPv4 addresses in
 * s6_addr32[0].
 */
struct rsw_stream_ends {
	sa_family_t family;
	__be16 sport;
	__be16 dport;
	struct in6_addr src;
	struct in6_addr dst;
};

struct rsw_stream {
	struct rsw_qp *qp;		/* a reference until DONE */
	struct socket *sock;
	struct work_struct work;
	struct delayed_work linger;
	/*
	 * Doorbell linger (stream.c): the SQ's look, whether it is on (set
	 * by a doorbell, cleared by the look or the end), quiet looks in a
	 * row (the look's own), no linger before this jiffy.
	 */
	struct hrtimer sq_timer;
	bool sq_linger;
	u8 sq_quiet_looks;
	u8 sq_backoff;			/* log2 ticks of no linger (the look's) */
	unsigned long sq_flags;		/* RSW_SQ_BATCH_SEEN: a look kicked */
	unsigned long sq_linger_after;
	const struct rsw_stream_ops *ops;
	void *ctx;
	struct rsw_mpa_conn conn;
	bool initiator;
	struct net *net;		/* the socket's; compared, never used */
	struct rsw_stream_ends ends;	/* set before listing, then constant */
	struct list_head link;		/* on rsw_streams while it has one */
	struct rsw_device *rsw;		/* the QP's device; compared, never used */
	/* The QP's route (stats.h), borrowed: the QP outlives the stream. */
	const struct rsw_stats_route *route;
	bool net_gone;			/* namespace or netdev going: see stream.c */
	bool hooked;			/* net_exit may kick it: streams_lock */
	atomic_t posters;		/* in rsw_stream_tx_direct() */

	/*
	 * Everything below: the socket's owner, i.e. RX (data-ready) or the
	 * work item with the socket locked (see the top of stream.c).  The
	 * work item alone writes phase (with the socket locked, but for the start),
	 * eof and fin_sent, and reads them unlocked.
	 */
	enum rsw_stream_phase phase;
	enum rsw_stream_why why;
	int status;			/* why the stream ends */
	bool tx_hold;			/* responder: no FPDU received yet */
	bool rtr_send;			/* initiator (p2p): RTR still to send */
	bool rtr_read;			/* our RTR Read awaits its response */
	bool rtr_wait;			/* responder (p2p): RTR not yet seen */
	unsigned long rtr_deadline;	/* jiffies: an RTR still pending ends RUN */
	bool closing;			/* RUN saw CLOSING: the two below are set */
	unsigned long close_deadline;	/* jiffies: LINGER starts, sent or not */
	u32 close_rr;			/* rr_tail then: the Responses it sends */
	bool rx_wake;			/* RX left the work item something */
	bool tx_active;			/* in the TX engine: see data-ready */
	bool tx_push;			/* push after release: rsw_stream_release() */
	enum rsw_stream_tx_ran tx_ran;	/* how the last TX run ended */
	u32 tx_taken;			/* WQEs it took (with budget rounds) */
	u32 rx_segs_left;		/* RX's segment budget, this call */
	bool eof;			/* peer's FIN at an FPDU boundary */
	bool fin_sent;
	struct rsw_tx_term term;	/* why == TERMINATE: ours */
	bool term_pending;		/* ours, not yet queued (LINGER sends it) */
	struct rsw_term_cause peer_term;	/* why == PEER_TERM: the peer's */

	struct rsw_stream_recv recv;
	struct rsw_stream_deferred deferred;
	u32 rresp_placed;		/* octets of the Read Response so far */
	u32 write_len;			/* octets of the Write in progress */
	/* Of the last whole Write: the byte_len of an Immediate Data after it. */
	u32 write_last;
	u32 msn[RSW_QN_NUM];		/* next MSN expected per queue */
	/* Read Requests to answer: at most rr_ird (conn.ird) at once. */
	struct rsw_tx_rresp *rr;
	u32 rr_size;			/* entries allocated, at least 1 */
	u32 rr_ird;
	u32 rr_head;
	u32 rr_tail;

	struct rsw_stream_stats stats;
	void (*saved_data_ready)(struct sock *sk);
	void (*saved_write_space)(struct sock *sk);
	void (*saved_state_change)(struct sock *sk);

	struct rsw_rx rx;
	struct rsw_tx tx;
	struct rsw_tx_sock ts;
};

/*
 * The stream must end whatever its socket says (an errno), or 0: its QP
 * was moved to ERROR or destroyed, or its namespace or netdev is going.
 * Read without a lock: RX stops placing on it, the work item ends on it.
 */
static inline int rsw_stream_cut(const struct rsw_stream *s)
{
	if (READ_ONCE(s->qp->dead) || READ_ONCE(s->qp->state) == RSW_QPS_ERROR)
		return -ECONNABORTED;
	if (READ_ONCE(s->net_gone))
		return -ENETDOWN;
	return 0;
}

/*
 * Why a stream ended, for dynamic debug only and rate limited: a peer can
 * end streams at will.  Our verdicts, never the peer's octets.
 */
#define rsw_stream_dbg(s, fmt, ...)					\
	pr_debug_ratelimited("QP[%u]: " fmt, rsw_stream_qpn(s),	\
			     ##__VA_ARGS__)

static inline u32 rsw_stream_qpn(const struct rsw_stream *s)
{
	return s->qp ? s->qp->base.qp_num : 0;
}

/* RUN ends for @why (the first reason stands); the work item acts on it. */
static inline void rsw_stream_set_why(struct rsw_stream *s,
				      enum rsw_stream_why why, int status)
{
	static const char * const names[] = {
		[RSW_WHY_NONE] = "none",
		[RSW_WHY_TERMINATE] = "our Terminate",
		[RSW_WHY_PEER_TERM] = "the peer's Terminate",
		[RSW_WHY_ABORT] = "abort",
	};

	if (s->why)
		return;
	s->why = why;
	if (!s->status)
		s->status = status;
	s->rx_wake = true;
	rsw_stream_dbg(s, "stream ends: %s (%d)\n",
		       why < ARRAY_SIZE(names) ? names[why] : "?", status);
}

/*
 * stream_rx.c.  Contexts: data-ready (socket spinlock held in softirq, or
 * the work owning the socket) for the parser's callbacks; the work with
 * the socket owned for rsw_stream_rx(); process context for the rest.
 */
extern const struct rsw_rx_ops rsw_stream_rx_ops;
/* data-ready's RX: a bounded run of the parser, the work kicked if needed. */
void rsw_stream_rx_ready(struct rsw_stream *s, struct sock *sk);
/*
 * The work's RX, socket owned (released around a deferred completion's
 * wait): true if there is more to read at once.  May sleep.
 */
bool rsw_stream_rx(struct rsw_stream *s);
/* A completion RX deferred: wait out the MR's TX pieces, post it. */
void rsw_stream_deferred_finish(struct rsw_stream *s);
/* The end, after unhooking: flush the receive being filled, if any. */
void rsw_stream_rx_flush(struct rsw_stream *s);

#endif /* _RDMAP_SW_STREAM_PRIV_H */
