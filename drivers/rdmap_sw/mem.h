/* SPDX-License-Identifier: GPL-2.0 */
/*
 * STags and memory regions: the objects and the STag encoding.  The
 * functions that operate on them are listed in internal.h (mem.c group);
 * the lifetime and locking rules are described at the top of mem.c.
 *
 * An STag is the 32-bit name of a region on the wire (RFC 5040 section 2.1)
 * and at the same time its lkey and rkey:
 *
 *   | index (24 bits, per device, never 0) | key (8 bits, consumer-owned) |
 *
 * The index is chosen by the driver when the MR is created and never
 * changes; the key is initially random and afterwards whatever the consumer
 * registers with IB_WR_REG_MR (ib_update_fast_reg_key(), ib_inc_rkey()).
 * Every lookup compares all 32 bits.
 */
#ifndef RDMAP_SW_MEM_H
#define RDMAP_SW_MEM_H

#include <linux/list.h>
#include <linux/refcount.h>
#include <linux/rcupdate.h>
#include <linux/sizes.h>
#include <linux/spinlock.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>

#define RSW_STAG_KEY_BITS	8
#define RSW_STAG_KEY_MASK	0xffU
/* Index 0 is reserved: no valid STag has it. */
#define RSW_STAG_INDEX_MAX	((1U << (32 - RSW_STAG_KEY_BITS)) - 1)
/*
 * The STag of our zero-length Write RTR: index 0, which no MR or window
 * ever gets, so it is invalid here, and not 0, which hardware RNICs may
 * treat as special.  A zero-length Write places nothing: we and siw
 * accept it whatever its STag.
 */
#define RSW_STAG_RTR		0x000000ffU

static inline u32 rsw_stag(u32 index, u8 key)
{
	return index << RSW_STAG_KEY_BITS | key;
}

static inline u32 rsw_stag_index(u32 stag)
{
	return stag >> RSW_STAG_KEY_BITS;
}

static inline u8 rsw_stag_key(u32 stag)
{
	return stag & RSW_STAG_KEY_MASK;
}

/*
 * Limits advertised by query_device and enforced by mem.c.  MRs are spread
 * at random over the 2^24 indices (RFC 5040 section 8.1.1 item 8), so
 * RSW_MAX_MR stays a small fraction of them.
 */
#define RSW_MAX_MR		(256 * 1024)
/* Memory windows (alloc_mw), counted apart from the MRs. */
#define RSW_MAX_MW		(64 * 1024)
/* Page list entries of one fast-registration MR (ib_alloc_mr max_num_sg). */
#define RSW_MAX_FRMR_PAGES	4096
/* Page sizes accepted by map_mr_sg: any power of two in this range. */
#define RSW_MR_MIN_PAGE_SIZE	SZ_512
#define RSW_MR_MAX_PAGE_SIZE	SZ_1G
#define RSW_MAX_MR_SIZE		((u64)RSW_MAX_FRMR_PAGES * RSW_MR_MAX_PAGE_SIZE)

/* Per-device MR registry; a member of struct rsw_device. */
struct rsw_mr_table {
	struct xarray xa;	/* index -> struct rsw_mr, lookups under RCU */
	atomic_t count;		/* MRs in xa, at most RSW_MAX_MR */
	atomic_t mw_count;	/* windows in xa, at most RSW_MAX_MW */
};

enum rsw_mr_kind {
	RSW_MR_DMA,		/* get_dma_mr: all kernel memory, local only */
	RSW_MR_FAST_REG,	/* alloc_mr + map_mr_sg + IB_WR_REG_MR */
	RSW_MR_USER,		/* reg_user_mr: pinned process pages (ib_umem) */
	RSW_MR_WINDOW,		/* alloc_mw: a window onto a user MR */
};

enum rsw_mr_state {
	RSW_MR_INVALID,		/* allocated, invalidated or deregistered */
	RSW_MR_VALID,		/* registered: accesses may be granted */
};

/*
 * Page list of a fast-registration MR as map_mr_sg left it: rsw_mr.pages[i]
 * is the page-aligned kernel virtual address (virtual DMA) of page i, and
 * the byte at the iova map_mr_sg computed lies fbo bytes into page 0.  A
 * user MR has the same list, built once by reg_user_mr from its ib_umem:
 * PAGE_SIZE pages, the kernel (linear map) address of each pinned page,
 * and fbo the offset of the registered start in the first one.
 */
struct rsw_mr_map {
	u32 max;		/* entries allocated (max_num_sg) */
	u32 n;			/* entries set by the last map_mr_sg */
	u32 fbo;		/* first byte offset into page 0 */
	u8 shift;		/* log2(page size) */
};

/*
 * A memory region.  ib_core sees the embedded ib_mr; lkey == rkey == stag.
 * Members below the lock are written under it (writer side) and read under
 * it by every access, except for DMA MRs, whose attributes never change
 * after creation (only state, once, at deregistration).
 *
 * A memory window is an rsw_mr too, of kind RSW_MR_WINDOW, in the same
 * registry: its STag shares the index space, and every lookup by STag
 * finds it.  Its iova, length, access and state are the window's (the
 * ibmr, map, umem and pages of an MR are unused); parent is the MR it is
 * bound to.  ib_core's struct ib_mw lives in struct rsw_mw, which points
 * to it (rules at the top of mem.c, "Memory windows").
 */
struct rsw_mr {
	struct ib_mr ibmr;
	struct ib_pd *pd;		/* fixed at creation */
	enum rsw_mr_kind kind;		/* fixed at creation */
	refcount_t ref;
	struct rcu_head rcu;

	rwlock_t lock;			/* BH-safe */
	u32 stag;			/* also read locklessly by lookups */
	enum rsw_mr_state state;
	bool dead;			/* dereg_mr began: never VALID again */
	u32 access;			/* IB_ACCESS_* granted */
	u64 iova;			/* registered region: [iova, iova + length) */
	u64 length;
	struct rsw_mr_map map;		/* RSW_MR_FAST_REG and _USER */
	u64 *pages;			/* map's list: what accesses walk */
	/*
	 * RSW_MR_FAST_REG: the list the last map_mr_sg built (next_ready),
	 * which the next REG_MR makes the registered one by swapping it
	 * with map and pages.  map_mr_sg may so run while the MR is still
	 * valid, as ULPs rely on when a LOCAL_INV posted before the REG_MR
	 * has yet to execute, without changing what the valid region maps.
	 */
	struct rsw_mr_map next_map;
	u64 *next_pages;
	bool next_ready;
	struct ib_umem *umem;		/* RSW_MR_USER: released by dereg_mr */
	/*
	 * RSW_MR_FAST_REG and RSW_MR_WINDOW: TX pieces collected from this
	 * MR (through this window) and not yet handed to TCP (rsw_mr_hold()
	 * .. rsw_mr_unhold()).  Invalidation, dereg_mr, a rebind and
	 * dealloc_mw wait for it to drop to zero.
	 */
	atomic_t tx_busy;
	/*
	 * RSW_MR_WINDOW: the MR bound to, with a reference, while the
	 * window is valid (NULL otherwise), and the window's place in that
	 * MR's mws (both changed under this window's lock, mw_node also
	 * under the MR's mws_lock); IB_MW_TYPE_1 or _2, fixed.
	 */
	struct rsw_mr *parent;
	struct list_head mw_node;
	enum ib_mw_type mw_type;
	/*
	 * IB_MW_TYPE_2, while bound: the serial (rsw_qp.serial, never
	 * reused) of the QP that bound it, the only one it serves.
	 */
	u64 bound_qp;
	/* RSW_MR_USER: the windows whose parent it is (dereg_mr detaches). */
	spinlock_t mws_lock;		/* BH-safe, inside a window's lock */
	struct list_head mws;
	u64 page_buf[];			/* map.max entries, 2x for fast-reg */
};

static inline struct rsw_mr *to_rsw_mr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct rsw_mr, ibmr);
}

/* ib_core's memory window object (alloc_mw); the window is @win. */
struct rsw_mw {
	struct ib_mw ibmw;
	struct rsw_mr *win;
};

static inline struct rsw_mw *to_rsw_mw(struct ib_mw *ibmw)
{
	return container_of(ibmw, struct rsw_mw, ibmw);
}

/*
 * Why an access, invalidation or lookup was refused.  Kept apart from
 * -errno: rsw_mr_err_to_term() turns it into the RFC 5040 / RFC 5041
 * Terminate layer, type and code for the operation that hit it.
 */
enum rsw_mr_err {
	RSW_MR_OK = 0,
	RSW_MR_ERR_STAG,	/* no MR with this index, or its key differs */
	RSW_MR_ERR_PD,		/* MR of another PD: not associated with the stream */
	RSW_MR_ERR_STATE,	/* MR exists but is not valid (not registered) */
	RSW_MR_ERR_ACCESS,	/* MR does not grant the required right */
	RSW_MR_ERR_BOUNDS,	/* range not inside the region (base or bounds) */
	RSW_MR_ERR_WRAP,	/* last byte of the range lies beyond 2^64 - 1 */
	RSW_MR_ERR_NO_INVAL,	/* MR that this invalidation may not invalidate */
};

/* Which operation an enum rsw_mr_err came from, for the Terminate codes. */
enum rsw_mr_use {
	RSW_MR_USE_TAGGED,	/* DDP tagged placement: Write, Read Response */
	RSW_MR_USE_READ_REQ,	/* source of an incoming RDMA Read Request */
	RSW_MR_USE_INVALIDATE,	/* Send with (SE and) Invalidate */
};

/*
 * An RFC 7306 atomic operation as the Responder executes it: AOpCode and
 * the request's operands in host order (sections 5.1.1-5.1.3).
 */
struct rsw_atomic {
	u8 op;			/* enum rsw_atomic_op */
	u64 data;		/* Add Data or Swap Data */
	u64 data_mask;		/* Add Mask or Swap Mask */
	u64 cmp;		/* Compare Data */
	u64 cmp_mask;		/* Compare Mask */
};

/*
 * An access that passed rsw_mr_get(): pins the MR (not its memory) until
 * rsw_mr_ref_put().  Every data access through it re-validates stag, state,
 * right and range under the MR lock, so a ref may be kept across socket
 * callbacks (a DDP segment whose payload arrives in pieces) and an
 * invalidation in between stops it.  Through a window's STag, mr is the
 * window: every access re-validates the window under its lock, then its
 * MR under the MR's (a dereg_mr stops it as well).
 */
struct rsw_mr_ref {
	struct rsw_mr *mr;
	u32 stag;
	u32 right;		/* IB_ACCESS_* bit required, 0 for local read */
	u64 qp;			/* serial of the accessing QP, 0: none */
};

/*
 * What a TX piece holds on the memory it names, from its collection in a
 * walk until the sink returned (rsw_mr_hold(), rsw_mr_unhold()).
 */
enum rsw_mr_hold {
	RSW_MR_HOLD_NONE,	/* DMA MR: the WQE's owner keeps the memory */
	RSW_MR_HOLD_PAGE,	/* user MR: a reference to the page */
	RSW_MR_HOLD_BUSY,	/* fast-reg MR: one count in mr->tx_busy */
	/*
	 * Window: a reference to the page (the user MR's umem may be
	 * released) and a count in the window's tx_busy (its invalidation
	 * and dealloc_mw wait for it); never spliced.
	 */
	RSW_MR_HOLD_WINDOW,
};

struct bio_vec;

/*
 * Visits one piece of a range: @len bytes at @off in @page, never crossing
 * the end of @page.  Runs under the MR lock with BHs off: must not sleep or
 * take locks.  Returns false to stop the walk early.
 */
typedef bool (*rsw_mr_seg_fn)(void *arg, struct page *page, unsigned int off,
			      unsigned int len);

#endif /* RDMAP_SW_MEM_H */
