/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Ring accessors shared by ring.c, which owns the rings of work queues and
 * shared receive queues (layouts in qp.h; functions in internal.h, ring.c
 * group; lifetime and locks at the top of ring.c), and the post paths of
 * qp.c and srq.c, which fill free entries.  Each takes the lock of its
 * queue as the caller's: these only compute addresses and compare indices.
 */
#ifndef RDMAP_SW_RING_H
#define RDMAP_SW_RING_H

#include "qp.h"

/* Ring entry @n (free-running index) of @wq. */
static inline void *rsw_wq_entry(const struct rsw_wq *wq, u32 n)
{
	return wq->ring + (size_t)(n & wq->mask) * wq->wqe_size;
}

/* The kernel-private shadow of ring entry @n. */
static inline struct rsw_wq_slot *rsw_wq_slot(const struct rsw_wq *wq, u32 n)
{
	return &wq->slot[n & wq->mask];
}

/* No free entry to post into. */
static inline bool rsw_wq_full(const struct rsw_wq *wq)
{
	return wq->tail - wq->head >= wq->size;
}

/* Ring entry @n (free-running index) of @srq. */
static inline struct rdmap_sw_rqe *rsw_srq_slot(const struct rsw_srq *srq,
						u32 n)
{
	return srq->ring + (size_t)(n & srq->mask) * sizeof(struct rdmap_sw_rqe);
}

/*
 * The send queue's opcodes: one row per enum rdmap_sw_wr_opcode, the
 * table in ring.c (rsw_sq_op(), rsw_sq_opcode()).
 */
enum rsw_sq_op_flags {
	RSW_WR_SGE = 1 << 0,	/* carries an SGE list */
	RSW_WR_INLINE = 1 << 1,	/* may carry inline data instead */
	RSW_WR_LOCAL = 1 << 2,	/* executed here, no wire */
	RSW_WR_READ = 1 << 3,	/* SGEs are the Read sink: RSW_MAX_SGE_RD */
	RSW_WR_ATOMIC = 1 << 4,	/* one SGE of 8 bytes: the atomic's result */
};

struct rsw_sq_op {
	enum ib_wr_opcode ib;
	u8 wc;			/* enum rdmap_sw_cqe_opcode */
	u8 flags;		/* enum rsw_sq_op_flags */
};

#endif /* RDMAP_SW_RING_H */
