/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Completion queue object.  The ring itself (control block and entries) is
 * the user ABI's struct rdmap_sw_cq_ctrl / struct rdmap_sw_cqe, laid out as
 * include/uapi/rdma/rdmap_sw-abi.h describes; a user CQ's buffer is mapped
 * into the process as it is.  Everything else here is kernel-private.
 *
 * Locks: prod_lock serialises producers (rsw_cq_push, any context, taken
 * irqsave) and guards dead and the scheduling of notify_work; cons_lock
 * serialises consumers (poll_cq and req_notify_cq, any context, irqsave).
 * Neither is taken inside the other except cons_lock -> prod_lock.  The
 * ring (ctrl, cqe, qp, size, mask, umap) changes only under both, when
 * resize_cq switches in a new one, so either lock keeps it in place.
 */
#ifndef RDMAP_SW_CQ_H
#define RDMAP_SW_CQ_H

#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/stddef.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdmap_sw-abi.h>

/* Bits of rsw_cq.events: what notify_work has to deliver. */
enum rsw_cq_event {
	RSW_CQ_EV_COMP,		/* call comp_handler */
	RSW_CQ_EV_ERR,		/* dispatch IB_EVENT_CQ_ERR (overrun) */
};

struct rsw_cq {
	struct ib_cq base;

	/*
	 * The ring, as one group so that resize_cq swaps it whole: replaced
	 * only under both locks.
	 */
	struct_group_tagged(rsw_cq_ring, ring,
		/* One rsw_umap_alloc() buffer: ctrl first, then cqe[]. */
		struct rdmap_sw_cq_ctrl *ctrl;
		struct rdmap_sw_cqe *cqe;
		/*
		 * QP of each slot's entry, for ib_wc.qp; NULL marks an entry
		 * discarded by rsw_cq_discard_qp().  Written by the producer
		 * before it publishes the entry, rewritten only under
		 * cons_lock.  Kernel CQs only (NULL for a user CQ, whose
		 * process names QPs by qp_num).
		 */
		struct ib_qp **qp;
		/*
		 * User CQs: the ring's mapping (umap.c), which owns the
		 * buffer; the process is the only consumer (poll_cq
		 * refuses).  NULL otherwise.
		 */
		struct rsw_umap *umap;
		/* Private copies, never read back from the ring. */
		u32 size;
		u32 mask;
	);

	/* Created with udata (a user CQ); never changes, read without locks. */
	bool user;
	/* Serialises resize_cq: it reads the ring outside the locks. */
	struct mutex resize_mutex;

	spinlock_t prod_lock;	/* prod, dead, overruns; queueing work */
	u32 prod;		/* next index to fill */
	bool dead;		/* pre_destroy ran: schedule nothing */
	u64 overruns;		/* entries dropped on a full ring */

	spinlock_t cons_lock;	/* consumers: cons, rewriting qp[] */
	u32 cons;		/* next index to poll */

	/*
	 * Runs comp_handler / event_handler for producers that may not (see
	 * the batch in cq.c).
	 */
	struct work_struct notify_work;
	unsigned long events;	/* BIT(enum rsw_cq_event), atomic bitops */
	unsigned long delivering;	/* bit 0: a deliverer runs handlers */
};

static inline struct rsw_cq *to_rsw_cq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct rsw_cq, base);
}

#endif /* RDMAP_SW_CQ_H */
