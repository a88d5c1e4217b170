/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Queue pair object: the RFC 5040 section 6 stream state and the send and
 * receive work queues.  The functions that operate on it are listed in
 * internal.h (qp.c group); lifetime and locking are described at the top
 * of qp.c.
 */
#ifndef RDMAP_SW_QP_H
#define RDMAP_SW_QP_H

#include <linux/completion.h>
#include <linux/mutex.h>
#include <linux/refcount.h>
#include <linux/sizes.h>
#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdmap_sw-abi.h>

#include "stats.h"

struct rsw_cq;
struct rsw_umap;

/* Limits advertised by query_device and enforced by create_qp. */
#define RSW_MAX_QP (64 * 1024)		/* module-wide, see qp.c */
#define RSW_MAX_QP_WR (16 * 1024)	/* a power of two */
#define RSW_MAX_SGE RDMAP_SW_MAX_SGE
#define RSW_MAX_INLINE RDMAP_SW_MAX_INLINE
/* A Read Request names one sink STag (RFC 5040 section 4.4): one sink SGE. */
#define RSW_MAX_SGE_RD 1
/* IRD and ORD (RFC 6581): Read Requests in flight per direction. */
#define RSW_MAX_RD_ATOM 128
/* Largest message (RFC 5040 lets it be 2^32 - 1; IB verbs cap at 2^31). */
#define RSW_MAX_MSG_SIZE SZ_2G
/* Shared receive queues (srq.c): module-wide count, entries per SRQ. */
#define RSW_MAX_SRQ (16 * 1024)
#define RSW_MAX_SRQ_WR (16 * 1024)	/* a power of two */
/*
 * Receives a QP with an SRQ may hold taken and not yet completed: the
 * private ring that keeps them in order.  The stream holds one at a time.
 */
#define RSW_SRQ_QP_TAKEN 16

/*
 * RFC 5040 section 6 stream states, in the order of the transition table.
 * ib_qp_state maps onto them as iWARP RNICs map it: RESET, INIT and RTR are
 * IDLE; SQD is CLOSING; SQE is TERMINATE; ERR is ERROR.
 */
enum rsw_qp_state {
	RSW_QPS_IDLE,
	RSW_QPS_RTS,
	RSW_QPS_CLOSING,
	RSW_QPS_TERMINATE,
	RSW_QPS_ERROR,
	RSW_QPS_COUNT
};

/*
 * Kernel-private shadow of one ring slot: everything its completion needs,
 * filled at post time and finished by whoever completes the work request.
 */
struct rsw_wq_slot {
	u64 wr_id;
	u32 byte_len;
	u32 ex_data;		/* cqe.ex_data */
	u32 vendor_err;
	u8 opcode;		/* enum rdmap_sw_cqe_opcode */
	u8 status;		/* enum rdmap_sw_cqe_status, once done */
	u8 cqe_flags;		/* enum rdmap_sw_cqe_flags */
	bool signaled;		/* completes on success too */
	bool solicited;
	bool done;		/* status is final: ready to retire */
};

/*
 * One work queue.  Free-running u32 indices, slot n & mask:
 *   [head, next)  handed to the engine (TX or RX), completing in any order,
 *                 retired to the CQ strictly in posting order;
 *   [next, tail)  posted, not yet taken;
 *   [tail, head + size)  free.
 * A user QP's queue (uctrl set) is the ABI's struct rdmap_sw_wq_ctrl page
 * followed by the ring, mapped into the process: tail here is the last
 * value of uctrl->tail that passed the bound check, head is published to
 * uctrl->head, and the slot shadow is filled when an entry is taken.
 */
struct rsw_wq {
	spinlock_t lock;	/* irqsave; everything below except the ring */
	void *buf;		/* the allocation: [uctrl page,] ring */
	struct rdmap_sw_wq_ctrl *uctrl;	/* user QPs only, else NULL */
	struct rsw_umap *umap;	/* its mapping (owns buf), if mapped */
	size_t buf_len;		/* page aligned */
	void *ring;		/* size entries of wqe_size bytes */
	struct rsw_wq_slot *slot;
	struct rsw_cq *cq;
	u32 size;
	u32 mask;
	u32 wqe_size;
	u32 max_sge;		/* per work request, as created */
	u32 head;
	u32 next;
	u32 tail;
	bool keep_busy;		/* user SQ: the stream lingers, busy stays 1 */
	bool close_bad;		/* user SQ: its tail was bad at the close */
	u64 cq_overruns;	/* completions the CQ had no room for */
};

struct rsw_device;

/*
 * A shared receive queue (srq.c).  Free-running u32 indices, slot n & mask:
 *   [head, tail)  posted, not yet taken;
 *   [tail, head + size)  free.
 * There is no taken-but-unfinished range: a QP that takes entry head
 * copies it into its own receive queue and head moves on at once, so the
 * slot is free again when the take returns.  A user SRQ's buffer is the
 * ABI's struct rdmap_sw_wq_ctrl page followed by the ring, mapped into the
 * process, which writes entries and uctrl->tail; tail here is the last
 * value that passed the bound check and head is published to uctrl->head.
 */
struct rsw_srq {
	struct ib_srq base;
	bool user;		/* a user SRQ; never changes, read unlocked */
	/* Serialises modify_srq: a resize reads the ring outside lock. */
	struct mutex modify_mutex;
	spinlock_t lock;	/* irqsave; everything below except the ring */
	void *buf;		/* the allocation: [uctrl page,] ring */
	struct rdmap_sw_wq_ctrl *uctrl;	/* user SRQs only, else NULL */
	struct rsw_umap *umap;	/* its mapping (owns buf), if mapped */
	size_t buf_len;		/* page aligned */
	void *ring;		/* size entries of struct rdmap_sw_rqe */
	u32 size;
	u32 mask;
	u32 max_sge;		/* per work request, as created */
	u32 head;
	u32 tail;
	u32 limit;		/* armed SRQ limit; 0: not armed */
	u64 bad_tails;		/* process tails refused (user SRQ) */
};

static inline struct rsw_srq *to_rsw_srq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct rsw_srq, base);
}

struct rsw_qp {
	struct ib_qp base;
	struct rsw_device *rsw;
	/* Never reused (unlike the QPN): what a type 2 window is bound by. */
	u64 serial;
	/*
	 * Where this QP's counts go (stats.h): the device's set from
	 * create_qp, an rdma counter's while bound (stats.c).  counter_id:
	 * the id of that counter while bound, else 0 (counters_lock).
	 */
	struct rsw_stats_route stats;
	u32 counter_id;

	/* Creation's reference plus one per CM/TX/RX holder; see qp.c. */
	refcount_t ref;
	struct completion released;
	/*
	 * References iw_get_qp() took and the iw_add_ref() after it has not
	 * claimed yet (iw.c); zero from ib_core's zeroed allocation.
	 */
	atomic_t iw_lent;

	/*
	 * Serialises modify_qp and the engines' state changes.  state and
	 * dead are written under lock, sq.lock and rq.lock (in that order),
	 * so any one of them is enough to read them.
	 */
	spinlock_t lock;
	enum rsw_qp_state state;
	enum ib_qp_state idle_state;	/* RESET, INIT or RTR while IDLE */
	bool dead;			/* destroy_qp began */
	bool ulp_err;			/* the consumer asked for ERROR */
	bool sig_all;			/* IB_SIGNAL_ALL_WR */
	u32 max_inline;
	u32 access;			/* IB_QP_ACCESS_FLAGS */
	u32 ird;			/* IB_QP_MAX_DEST_RD_ATOMIC */
	u32 ord;			/* IB_QP_MAX_QP_RD_ATOMIC */

	struct rsw_wq sq;
	/*
	 * With an SRQ, rq is a private kernel ring of RSW_SRQ_QP_TAKEN
	 * entries: a take copies the next SRQ entry into it (rq.tail and
	 * rq.next move together), completion and retiring are as for any
	 * receive queue.
	 */
	struct rsw_wq rq;
	struct rsw_srq *srq;		/* attr->srq, fixed; NULL: own RQ */
	/* SRQ: IB_EVENT_QP_LAST_WQE_REACHED is owed (rq.lock). */
	bool last_wqe_due;
	/*
	 * The Terminate (sent or received) that moved the QP to ERROR, as
	 * cqe.vendor_err (RDMAP_SW_CQE_TERM_*), 0 for any other cause:
	 * flushed work requests carry it.  Written under all three locks
	 * on the way into ERROR and back to IDLE, read under either queue
	 * lock.
	 */
	u32 term_vendor_err;

	/*
	 * The connection, once the CM attached one (stream.c); set under
	 * all three locks, freed by destroy_qp after the last reference.
	 */
	struct rsw_stream *stream;
	/*
	 * The stream has not ended yet (it may still take, place and
	 * complete work): set by rsw_qp_attach_stream(), cleared by
	 * rsw_qp_stream_done(), both under all three locks.  No way back
	 * to IDLE while it is set.
	 */
	bool stream_live;
};

static inline struct rsw_qp *to_rsw_qp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct rsw_qp, base);
}

/*
 * The outcome of a taken entry: what RX reports when it completes a
 * receive (rsw_qp_rq_complete), and the status and length of a send WQE.
 */
struct rsw_rq_result {
	u8 status;		/* enum rdmap_sw_cqe_status */
	u8 opcode;		/* RDMAP_SW_WC_*: 0 keeps the entry's own */
	u8 cqe_flags;		/* RDMAP_SW_CQE_WITH_INV / _WITH_IMM */
	bool solicited;		/* the Send carried the SE bit */
	u32 byte_len;
	u32 ex_data;		/* invalidated STag / immediate data */
	u32 vendor_err;		/* Terminate layer/type/code, see the ABI */
};

/* What rsw_qp_sq_take() handed out. */
enum rsw_sq_take {
	RSW_SQ_EMPTY,		/* nothing to take */
	RSW_SQ_LOCAL,		/* a local operation ran and was completed */
	RSW_SQ_WIRE,		/* a copy for the TX engine to transmit */
	RSW_SQ_FENCED_LOCAL,	/* a copy for rsw_qp_sq_local(), fenced */
};

#endif /* RDMAP_SW_QP_H */
