// SPDX-License-Identifier: GPL-2.0
/*
 * STags and memory regions: the DMA MR, fast registration (alloc_mr,
 * map_mr_sg, IB_WR_REG_MR), user MRs over pinned process memory
 * (reg_user_mr, walked like a fast-registered page list), local and remote
 * invalidation, the access check of every remote or local access, and the
 * walk over a registered range that placement (RX) and gathering (TX) use.
 *
 * The device has no DMA parent, so ib_core uses virtual DMA: SGE addresses
 * and page list entries are kernel virtual addresses.
 *
 * Lifetime.  An rsw_mr is reference counted.  The registry (the device's
 * xarray) holds one reference from creation until dereg_mr.  Lookups run
 * under RCU in any context: xa_load(), compare the full 32-bit STag, then
 * refcount_inc_not_zero().  dereg_mr marks the MR invalid, erases it from
 * the xarray and drops the registry reference; it never waits for other
 * references (only, through the lock below, for a walk in progress).  The
 * last put frees the MR with kvfree_rcu(), so a lookup that loaded the pointer
 * just before the erase still reads valid memory, and fails its
 * refcount_inc_not_zero() or gets a reference to an invalid MR.
 *
 * Memory fence.  A reference pins the rsw_mr, not the memory it describes.
 * Every access to that memory (rsw_mr_walk() and the helpers built on it)
 * runs under the MR's rwlock held for reading and re-checks STag, state,
 * right and range first.  Everything that revokes access (invalidation,
 * deregistration, a new registration) takes the lock for writing.  So once
 * an invalidation or dereg_mr returned, no walk touches the old memory,
 * whatever references are still held; the consumer may reuse its pages.
 * DMA MRs are the exception: their attributes never change and they cover
 * kernel memory that is not theirs to revoke, so they are walked lockless.
 *
 * Memory read after the walk.  The TX engine collects (page, offset,
 * length) pieces in a walk and tcp_sendmsg_locked() reads them after the lock
 * is dropped.  The rule: no memory is read for sending after its owner
 * could have freed it.  So each piece holds, from its collection (under
 * the lock, rsw_mr_hold()) until the sink returned (rsw_mr_unhold()):
 *  - user MR: a reference to its page.  dereg_mr unpins the umem without
 *    waiting; the process may munmap; the page stays allocated, with the
 *    process's old data, until the last piece drops it.
 *  - fast-reg MR: a count in mr->tx_busy.  Its pages are the kernel
 *    consumer's (possibly slab memory, freed and reused while the page
 *    lives), so a page reference would not do: an invalidation or
 *    dereg_mr that revoked access waits, sleeping, until the count is
 *    zero.  The window is one describe-and-sendmsg (MSG_DONTWAIT) of a
 *    stream's work item; it never includes TCP holding skb frags, which a
 *    peer could stretch forever with a zero window.
 *  - window: both, a reference to its page (for its user MR's dereg_mr)
 *    and a count in the window's tx_busy.  Invalidating, rebinding or
 *    deallocating a window revokes access to memory the process keeps
 *    and may rewrite at once, so they wait for the count as a fast-reg
 *    MR's invalidation does; and its pieces are never spliced (TCP would
 *    read the page whenever it (re)transmits).
 *  - DMA MR: nothing.  The memory is the WQE owner's, who may not reuse
 *    it before the WQE completed, i.e. after the sink returned.
 * What TCP keeps after sendmsg() returned is its own: copied octets, or
 * with MSG_SPLICE_PAGES page references it took itself (tx_sock.c), of
 * user MR pages only.
 *
 * Locking.  mr->lock is BH-safe (remote invalidation and placement run in
 * softirq).  It nests inside whatever the caller holds; nothing is called
 * with it held except rsw_mr_seg_fn callbacks, which take no locks.  The
 * xarray's own lock is taken only in process context (create, dereg).
 * dereg_mr and LOCAL_INV may sleep (the tx_busy wait): they run in
 * process context only (ib_core's dereg_mr, a stream's work item).  The
 * invalidations of the receive path (a peer's Send with Invalidate, the
 * sink of a Read with Invalidate) run where nothing may sleep: they
 * revoke at once and, if pieces are still in flight, hand the MR back
 * (the @busy of rsw_mr_invalidate_*()) so the stream waits out the count
 * in its work item before it completes the work request; the consumer
 * learns of the invalidation only from that completion.
 *
 * Memory windows (user QPs only: the kernel verbs have no window API).  A
 * window is an rsw_mr of kind RSW_MR_WINDOW published in the same
 * registry, so its STag is looked up, pinned and freed like an MR's.
 * Binding (a BIND_MW work request, rsw_mw_bind()) points it at a user MR
 * of its PD, whose reference it then holds in parent until the next bind,
 * an invalidation, dereg_mr of the MR or dealloc_mw.  A type 2 window
 * also records the binding QP's serial (bound_qp; never reused, unlike a
 * QPN) and serves, and is invalidated by, that QP only (IBTA type 2B):
 * every access carries its QP's serial in the rsw_mr_ref and the window's
 * check compares it.  destroy_qp leaves such windows bound, serving
 * nobody, until dealloc_mw or dereg_mr of their MR.  An access through the window's STag
 * resolves here, callers unchanged: rsw_mr_get() refuses it as a local
 * key, and rsw_mr_walk() checks the window under its lock, then its MR
 * (valid, range) under the MR's lock, and walks the MR's pages.  Lock
 * order: window lock -> MR lock -> MR's mws_lock (lockdep class of its own
 * for windows).
 * A TX piece collected through a window counts in the window's tx_busy
 * (and holds its page), which LOCAL_INV, Send with Invalidate, a rebind
 * and dealloc_mw of the window wait out.  dereg_mr of an MR with
 * bound windows succeeds: the MR goes invalid and dead, every window onto
 * it fails its next check (ERR_STATE), and before dereg_mr returns it
 * unbinds them all (the MR's list of windows, mws), so no window keeps
 * the dead MR's struct and page list.  User MRs and windows are charged
 * to the creating task's memory cgroup (GFP_KERNEL_ACCOUNT; ib_core
 * charges only the pinned pages, to RLIMIT_MEMLOCK); a kernel ULP's DMA
 * and fast-reg MRs are not, so no container's memcg is pinned by them.
 */
#include <linux/bvec.h>
#include <linux/highmem.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/wait_bit.h>
#include <rdma/ib_umem.h>

#include "internal.h"
#include "wire.h"

/* Rights a registration can grant. */
#define RSW_MR_RIGHTS (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ | \
		       IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)
#define RSW_MR_REMOTE_RIGHTS (IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE | \
			      IB_ACCESS_REMOTE_ATOMIC)
/* Rights that let an access write into the memory. */
#define RSW_MR_WRITE_RIGHTS (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			     IB_ACCESS_REMOTE_ATOMIC)
/* Performance hints a registration may carry; they change nothing here. */
#define RSW_MR_HINTS (IB_ACCESS_RELAXED_ORDERING | IB_ACCESS_OPTIONAL)

void rsw_mr_table_init(struct rsw_mr_table *table)
{
	xa_init_flags(&table->xa, XA_FLAGS_ALLOC1);
	atomic_set(&table->count, 0);
	atomic_set(&table->mw_count, 0);
}

void rsw_mr_table_destroy(struct rsw_mr_table *table)
{
	/* ib_core deregisters every MR before the device goes. */
	WARN_ON(!xa_empty(&table->xa));
	xa_destroy(&table->xa);
}

/* An unpublished MR with one reference (the registry's, once published). */
static struct rsw_mr *rsw_mr_alloc(struct ib_pd *pd, enum rsw_mr_kind kind,
				   u32 npages)
{
	/* A process's objects to its memcg; a kernel ULP's to nobody's. */
	gfp_t gfp = kind == RSW_MR_USER || kind == RSW_MR_WINDOW ?
		    GFP_KERNEL_ACCOUNT : GFP_KERNEL;
	u32 nbuf = kind == RSW_MR_FAST_REG ? 2 * npages : npages;
	struct rsw_mr *mr = kvzalloc(struct_size(mr, page_buf, nbuf), gfp);

	if (!mr)
		return NULL;
	mr->pages = mr->page_buf;
	if (kind == RSW_MR_FAST_REG) {
		mr->next_pages = mr->page_buf + npages;
		mr->next_map.max = npages;
	}
	spin_lock_init(&mr->mws_lock);
	INIT_LIST_HEAD(&mr->mws);
	INIT_LIST_HEAD(&mr->mw_node);
	mr->pd = pd;
	mr->kind = kind;
	refcount_set(&mr->ref, 1);
	rwlock_init(&mr->lock);
	mr->state = RSW_MR_INVALID;
	mr->map.max = npages;
	return mr;
}

/*
 * Reserve an index at random (RFC 5040 section 8.1.1 item 8: STags hard
 * to predict, spread over the whole range): the first free one at or after
 * a random start, else the first free one at all.
 */
static int rsw_mr_reserve_index(struct rsw_mr_table *table, u32 *index)
{
	u32 start = get_random_u32_inclusive(1, RSW_STAG_INDEX_MAX);
	int ret;

	ret = xa_alloc(&table->xa, index, NULL,
		       XA_LIMIT(start, RSW_STAG_INDEX_MAX), GFP_KERNEL);
	if (ret == -EBUSY)
		ret = xa_alloc(&table->xa, index, NULL,
			       XA_LIMIT(1, RSW_STAG_INDEX_MAX), GFP_KERNEL);
	return ret;
}

/* The registry's count of @mr's kind, and its limit. */
static atomic_t *rsw_mr_counter(struct rsw_mr_table *table,
				const struct rsw_mr *mr, int *max)
{
	if (mr->kind == RSW_MR_WINDOW) {
		*max = RSW_MAX_MW;
		return &table->mw_count;
	}
	*max = RSW_MAX_MR;
	return &table->count;
}

/* Give a fully built MR its STag and make it visible to lookups. */
static int rsw_mr_publish(struct rsw_device *rsw, struct rsw_mr *mr)
{
	struct rsw_mr_table *table = &rsw->mrs;
	atomic_t *count;
	u32 index;
	int max, ret;

	might_sleep();
	count = rsw_mr_counter(table, mr, &max);
	if (atomic_inc_return(count) > max) {
		ret = -ENOMEM;
		goto err_uncount;
	}
	ret = rsw_mr_reserve_index(table, &index);
	if (ret)
		goto err_uncount;
	mr->stag = rsw_stag(index, get_random_u8());
	mr->ibmr.lkey = mr->stag;
	mr->ibmr.rkey = mr->stag;
	/* Replaces the reserved entry: no allocation, cannot fail. */
	WARN_ON(xa_is_err(xa_store(&table->xa, index, mr, GFP_KERNEL)));
	return 0;

err_uncount:
	atomic_dec(count);
	return ret;
}

/* Undo rsw_mr_publish(): no new lookup finds @mr.  Process context. */
static void rsw_mr_unpublish(struct rsw_device *rsw, struct rsw_mr *mr)
{
	int max;

	xa_erase(&rsw->mrs.xa, rsw_stag_index(mr->stag));
	atomic_dec(rsw_mr_counter(&rsw->mrs, mr, &max));
}

void rsw_mr_put(struct rsw_mr *mr)
{
	if (refcount_dec_and_test(&mr->ref))
		kvfree_rcu(mr, rcu);
}
EXPORT_SYMBOL_IF_KUNIT(rsw_mr_put);

/* The MR named by the full @stag, with a reference, or NULL.  Any context. */
static struct rsw_mr *rsw_mr_find(struct rsw_device *rsw, u32 stag)
{
	struct rsw_mr *mr;

	rcu_read_lock();
	mr = xa_load(&rsw->mrs.xa, rsw_stag_index(stag));
	if (mr && (READ_ONCE(mr->stag) != stag ||
		   !refcount_inc_not_zero(&mr->ref)))
		mr = NULL;
	rcu_read_unlock();
	return mr;
}

struct rsw_mr *rsw_mr_find_index(struct rsw_device *rsw, u32 stag)
{
	struct rsw_mr *mr;

	rcu_read_lock();
	mr = xa_load(&rsw->mrs.xa, rsw_stag_index(stag));
	if (mr && !refcount_inc_not_zero(&mr->ref))
		mr = NULL;
	rcu_read_unlock();
	return mr;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_mr_find_index);

/*
 * Is [to, to + len) inside [iova, iova + length)?  A non-empty range whose
 * last byte would lie beyond 2^64 - 1 is a TO wrap; an empty one must
 * start inside the region or right at its end.
 */
static enum rsw_mr_err rsw_mr_check_range(u64 iova, u64 length, u64 to,
					  u64 len)
{
	u64 off;

	if (len && to > U64_MAX - (len - 1))
		return RSW_MR_ERR_WRAP;
	if (to < iova)
		return RSW_MR_ERR_BOUNDS;
	off = to - iova;
	if (off > length || len > length - off)
		return RSW_MR_ERR_BOUNDS;
	return RSW_MR_OK;
}

/*
 * The whole access check but the PD's (fixed per MR).  Under mr->lock, or
 * lockless for a DMA MR, whose state is the only field that changes.
 */
static enum rsw_mr_err rsw_mr_check(const struct rsw_mr *mr, u32 stag,
				    u32 right, u64 to, u64 len)
{
	if (mr->stag != stag)
		return RSW_MR_ERR_STAG;
	if (READ_ONCE(mr->state) != RSW_MR_VALID)
		return RSW_MR_ERR_STATE;
	if ((mr->access & right) != right)
		return RSW_MR_ERR_ACCESS;
	return rsw_mr_check_range(mr->iova, mr->length, to, len);
}

static enum rsw_mr_err rsw_mw_walk(const struct rsw_mr_ref *ref, u64 to,
				   u64 len, rsw_mr_seg_fn fn, void *arg);

static enum rsw_mr_err rsw_mr_check_ref(const struct rsw_mr_ref *ref, u64 to,
					u64 len)
{
	struct rsw_mr *mr = ref->mr;
	enum rsw_mr_err err;

	if (mr->kind == RSW_MR_WINDOW)
		return rsw_mw_walk(ref, to, len, NULL, NULL);
	if (mr->kind == RSW_MR_DMA)
		return rsw_mr_check(mr, ref->stag, ref->right, to, len);
	read_lock_bh(&mr->lock);
	err = rsw_mr_check(mr, ref->stag, ref->right, to, len);
	read_unlock_bh(&mr->lock);
	return err;
}

enum rsw_mr_err rsw_mr_get_qp(struct rsw_device *rsw, struct ib_pd *pd,
			      u64 qp, u32 stag, u64 to, u64 len, u32 right,
			      struct rsw_mr_ref *ref)
{
	struct rsw_mr *mr = rsw_mr_find(rsw, stag);
	enum rsw_mr_err err;

	ref->mr = NULL;
	if (!mr)
		return RSW_MR_ERR_STAG;
	if (mr->pd != pd) {
		rsw_mr_put(mr);
		return RSW_MR_ERR_PD;
	}
	/* A window grants remote access only: it is no local key. */
	if (mr->kind == RSW_MR_WINDOW && !(right & RSW_MR_REMOTE_RIGHTS)) {
		rsw_mr_put(mr);
		return RSW_MR_ERR_STAG;
	}
	ref->mr = mr;
	ref->stag = stag;
	ref->right = right;
	ref->qp = qp;
	err = rsw_mr_check_ref(ref, to, len);
	if (err)
		rsw_mr_ref_put(ref);
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_mr_get_qp);

enum rsw_mr_err rsw_mr_get(struct rsw_device *rsw, struct ib_pd *pd,
			   u32 stag, u64 to, u64 len, u32 right,
			   struct rsw_mr_ref *ref)
{
	return rsw_mr_get_qp(rsw, pd, 0, stag, to, len, right, ref);
}
EXPORT_SYMBOL_IF_KUNIT(rsw_mr_get);

void rsw_mr_ref_put(struct rsw_mr_ref *ref)
{
	if (ref->mr)
		rsw_mr_put(ref->mr);
	ref->mr = NULL;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_mr_ref_put);

enum rsw_mr_err rsw_mr_get_sge(struct rsw_device *rsw, struct ib_pd *pd,
			       const struct ib_sge *sge, bool write,
			       struct rsw_mr_ref *ref)
{
	return rsw_mr_get(rsw, pd, sge->lkey, sge->addr, sge->length,
			  write ? IB_ACCESS_LOCAL_WRITE : 0, ref);
}
EXPORT_SYMBOL_IF_KUNIT(rsw_mr_get_sge);

/* Page of a kernel virtual address in the linear map or vmalloc space. */
static struct page *rsw_kva_page(const void *kva)
{
	if (virt_addr_valid(kva))
		return virt_to_page(kva);
	if (is_vmalloc_addr(kva))
		return vmalloc_to_page(kva);
	return NULL;
}

/* A DMA MR's range is kernel virtual addresses, checked page by page. */
static enum rsw_mr_err rsw_mr_walk_dma(u64 to, u64 len, rsw_mr_seg_fn fn,
				       void *arg)
{
	while (len) {
		const void *kva = rsw_virt_dma_to_ptr(to);
		unsigned int off = offset_in_page(kva);
		unsigned int n = min_t(u64, len, PAGE_SIZE - off);
		struct page *page = rsw_kva_page(kva);

		if (!page)
			return RSW_MR_ERR_BOUNDS;
		if (!fn(arg, page, off, n))
			break;
		to += n;
		len -= n;
	}
	return RSW_MR_OK;
}

/*
 * A fast-registered range, pieces cut at MR page and at CPU page ends.
 * Under mr->lock; the range was checked against the region, which
 * registration made sure the page list covers.
 */
static enum rsw_mr_err rsw_mr_walk_frmr(const struct rsw_mr *mr, u64 to,
					u64 len, rsw_mr_seg_fn fn, void *arg)
{
	const struct rsw_mr_map *map = &mr->map;
	u64 psize = 1ULL << map->shift;
	u64 pos = to - mr->iova + map->fbo;

	lockdep_assert_held(&mr->lock);
	while (len) {
		u64 idx = pos >> map->shift;
		u64 in = pos & (psize - 1);
		const void *kva;
		unsigned int off, n;

		if (WARN_ON_ONCE(idx >= map->n))
			return RSW_MR_ERR_BOUNDS;
		kva = rsw_virt_dma_to_ptr(mr->pages[idx] + in);
		off = offset_in_page(kva);
		n = min_t(u64, min_t(u64, len, psize - in), PAGE_SIZE - off);
		if (!fn(arg, virt_to_page(kva), off, n))
			break;
		pos += n;
		len -= n;
	}
	return RSW_MR_OK;
}

/*
 * An access through window @ref->mr: the window's check under its lock,
 * then its MR's (valid, range) under the MR's, and, with @fn, the walk
 * over the MR's pages under both.  A valid window always has a parent.
 */
static enum rsw_mr_err rsw_mw_walk(const struct rsw_mr_ref *ref, u64 to,
				   u64 len, rsw_mr_seg_fn fn, void *arg)
{
	struct rsw_mr *mw = ref->mr, *mr;
	enum rsw_mr_err err;

	read_lock_bh(&mw->lock);
	err = rsw_mr_check(mw, ref->stag, ref->right, to, len);
	/* A type 2 window serves the QP that bound it only. */
	if (!err && mw->mw_type == IB_MW_TYPE_2 && mw->bound_qp != ref->qp)
		err = RSW_MR_ERR_PD;
	mr = mw->parent;
	if (!err) {
		read_lock(&mr->lock);
		err = rsw_mr_check(mr, mr->stag, 0, to, len);
		if (!err && fn)
			err = rsw_mr_walk_frmr(mr, to, len, fn, arg);
		read_unlock(&mr->lock);
	}
	read_unlock_bh(&mw->lock);
	return err;
}

enum rsw_mr_err rsw_mr_walk(const struct rsw_mr_ref *ref, u64 to, u64 len,
			    rsw_mr_seg_fn fn, void *arg)
{
	struct rsw_mr *mr = ref->mr;
	enum rsw_mr_err err;

	if (mr->kind == RSW_MR_WINDOW)
		return rsw_mw_walk(ref, to, len, fn, arg);
	if (mr->kind == RSW_MR_DMA) {
		err = rsw_mr_check(mr, ref->stag, ref->right, to, len);
		return err ?: rsw_mr_walk_dma(to, len, fn, arg);
	}
	read_lock_bh(&mr->lock);
	err = rsw_mr_check(mr, ref->stag, ref->right, to, len);
	if (!err)
		err = rsw_mr_walk_frmr(mr, to, len, fn, arg);
	read_unlock_bh(&mr->lock);
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_mr_walk);

static bool rsw_mr_copy_in_seg(void *arg, struct page *page, unsigned int off,
			       unsigned int len)
{
	const u8 **src = arg;
	u8 *p = kmap_local_page(page);

	memcpy(p + off, *src, len);
	kunmap_local(p);
	*src += len;
	return true;
}

static bool rsw_mr_copy_out_seg(void *arg, struct page *page,
				unsigned int off, unsigned int len)
{
	u8 **dst = arg;
	u8 *p = kmap_local_page(page);

	memcpy(*dst, p + off, len);
	kunmap_local(p);
	*dst += len;
	return true;
}

enum rsw_mr_err rsw_mr_copy_to(const struct rsw_mr_ref *ref, u64 to,
			       const void *src, size_t len)
{
	const u8 *pos = src;

	/* A reference checked for reading only never writes. */
	if (!(ref->right & RSW_MR_WRITE_RIGHTS))
		return RSW_MR_ERR_ACCESS;
	return rsw_mr_walk(ref, to, len, rsw_mr_copy_in_seg, &pos);
}
EXPORT_SYMBOL_IF_KUNIT(rsw_mr_copy_to);

enum rsw_mr_err rsw_mr_copy_from(const struct rsw_mr_ref *ref, u64 to,
				 void *dst, size_t len)
{
	u8 *pos = dst;

	return rsw_mr_walk(ref, to, len, rsw_mr_copy_out_seg, &pos);
}
EXPORT_SYMBOL_IF_KUNIT(rsw_mr_copy_from);

/* Independent additions in the fields the set bits of @mask end. */
static u64 rsw_atomic_masked_add(u64 old, u64 add, u64 mask)
{
	u64 sum = 0, field;
	unsigned int lo = 0, hi;

	while (lo < 64) {
		hi = mask >> lo ? __ffs64(mask >> lo) + lo : 63;
		field = GENMASK_ULL(hi, lo);
		/* The carry out of the field's top bit is dropped. */
		sum |= ((old & field) + (add & field)) & field;
		lo = hi + 1;
	}
	return sum;
}

u64 rsw_atomic_apply(const struct rsw_atomic *a, u64 old)
{
	switch (a->op) {
	case RSW_ATOMIC_FETCH_ADD:
		return rsw_atomic_masked_add(old, a->data, a->data_mask);
	case RSW_ATOMIC_SWAP:
		return a->data;
	case RSW_ATOMIC_CMP_SWAP:
		if ((a->cmp ^ old) & a->cmp_mask)
			return old;
		return (old & ~a->data_mask) | (a->data & a->data_mask);
	}
	return old;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_atomic_apply);

struct rsw_mr_atomic_op {
	const struct rsw_atomic *a;
	u64 orig;
	bool done;
};

static bool rsw_mr_atomic_seg(void *arg, struct page *page, unsigned int off,
			      unsigned int len)
{
	struct rsw_mr_atomic_op *op = arg;
	u64 *word, old;
	u8 *p;

	if (len != sizeof(u64) || !IS_ALIGNED(off, sizeof(u64)))
		return false;
	p = kmap_local_page(page);
	word = (u64 *)(p + off);
	old = READ_ONCE(*word);
	while (!try_cmpxchg64(word, &old, rsw_atomic_apply(op->a, old)))
		;
	kunmap_local(p);
	op->orig = old;
	op->done = true;
	return true;
}

enum rsw_mr_err rsw_mr_atomic(const struct rsw_mr_ref *ref, u64 to,
			      const struct rsw_atomic *a, u64 *orig)
{
	struct rsw_mr_atomic_op op = { .a = a };
	enum rsw_mr_err err;

	if (!(ref->right & IB_ACCESS_REMOTE_ATOMIC))
		return RSW_MR_ERR_ACCESS;
	if (!IS_ALIGNED(to, sizeof(u64)))
		return RSW_MR_ERR_BOUNDS;
	err = rsw_mr_walk(ref, to, sizeof(u64), rsw_mr_atomic_seg, &op);
	if (err)
		return err;
	if (!op.done)
		return RSW_MR_ERR_BOUNDS;
	*orig = op.orig;
	return RSW_MR_OK;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_mr_atomic);

struct rsw_mr_bvec_fill {
	struct bio_vec *bv;
	unsigned int nr;
	unsigned int max;
	u64 bytes;
};

/* One bio_vec per page; pieces adjacent in one page share it. */
static bool rsw_mr_bvec_seg(void *arg, struct page *page, unsigned int off,
			    unsigned int len)
{
	struct rsw_mr_bvec_fill *fill = arg;
	struct bio_vec *last = fill->nr ? &fill->bv[fill->nr - 1] : NULL;

	if (last && last->bv_page == page &&
	    last->bv_offset + last->bv_len == off) {
		last->bv_len += len;
	} else {
		if (fill->nr == fill->max)
			return false;
		bvec_set_page(&fill->bv[fill->nr++], page, len, off);
	}
	fill->bytes += len;
	return true;
}

enum rsw_mr_err rsw_mr_bvecs(const struct rsw_mr_ref *ref, u64 to, u64 len,
			     struct bio_vec *bv, unsigned int max_bv,
			     unsigned int *nr_bv, u64 *bytes)
{
	struct rsw_mr_bvec_fill fill = { .bv = bv, .max = max_bv };
	enum rsw_mr_err err;

	err = rsw_mr_walk(ref, to, len, rsw_mr_bvec_seg, &fill);
	*nr_bv = fill.nr;
	*bytes = fill.bytes;
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_mr_bvecs);

/*
 * Rights of a registration (get_dma_mr, IB_WR_REG_MR, reg_user_mr, which
 * adds IB_ACCESS_MW_BIND): hints dropped, anything we do not implement
 * (windows on kernel MRs, zero-based, on-demand paging, flush) refused,
 * and remote write or atomic only together with local write (IBTA, as
 * ib_check_mr_access() has it for user MRs).
 */
static int rsw_mr_rights(int access, u32 *rights)
{
	access &= ~RSW_MR_HINTS;
	/* MW_BIND (but see reg_user_mr), zero-based, on-demand: refused. */
	if (access & ~RSW_MR_RIGHTS)
		return -EOPNOTSUPP;
	if ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IB_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	*rights = access;
	return 0;
}

/*
 * ops.get_dma_mr: the PD's local_dma_lkey, valid for local access to any
 * kernel address.  Remote rights over all of kernel memory are refused,
 * so ib_alloc_pd(IB_PD_UNSAFE_GLOBAL_RKEY) fails on this device.
 */
static struct ib_mr *rsw_get_dma_mr(struct ib_pd *pd, int access)
{
	struct rsw_mr *mr;
	u32 rights;
	int ret;

	ret = rsw_mr_rights(access, &rights);
	if (ret)
		return ERR_PTR(ret);
	if (rights & RSW_MR_REMOTE_RIGHTS)
		return ERR_PTR(-EOPNOTSUPP);
	mr = rsw_mr_alloc(pd, RSW_MR_DMA, 0);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->access = rights;
	mr->iova = 0;
	mr->length = U64_MAX;
	mr->state = RSW_MR_VALID;
	mr->ibmr.iova = mr->iova;
	mr->ibmr.length = mr->length;
	ret = rsw_mr_publish(to_rsw_dev(pd->device), mr);
	if (ret) {
		kvfree(mr);
		return ERR_PTR(ret);
	}
	return &mr->ibmr;
}

/* ops.alloc_mr: an invalid fast-registration MR of up to @max_num_sg pages. */
static struct ib_mr *rsw_alloc_mr(struct ib_pd *pd, enum ib_mr_type type,
				  u32 max_num_sg)
{
	struct rsw_mr *mr;
	int ret;

	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EOPNOTSUPP);
	if (!max_num_sg || max_num_sg > RSW_MAX_FRMR_PAGES)
		return ERR_PTR(-EINVAL);
	mr = rsw_mr_alloc(pd, RSW_MR_FAST_REG, max_num_sg);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	ret = rsw_mr_publish(to_rsw_dev(pd->device), mr);
	if (ret) {
		kvfree(mr);
		return ERR_PTR(ret);
	}
	return &mr->ibmr;
}

/* ib_sg_to_pages() callback; under mr->lock. */
static int rsw_mr_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct rsw_mr *mr = to_rsw_mr(ibmr);

	lockdep_assert_held_write(&mr->lock);
	if (mr->next_map.n == mr->next_map.max)
		return -ENOMEM;
	/*
	 * Each entry stands for a whole page of 1 << shift octets: one not
	 * aligned to it (ib_map_mr_sg() races on ibmr->page_size with a
	 * second map of the same MR) would let accesses run past its page.
	 */
	if (!IS_ALIGNED(addr, 1ULL << mr->next_map.shift))
		return -EINVAL;
	if (!virt_addr_valid(rsw_virt_dma_to_ptr(addr)))
		return -EFAULT;
	mr->next_pages[mr->next_map.n++] = addr;
	return 0;
}

/*
 * ops.map_mr_sg: ib_map_mr_sg() set ibmr->page_size; ib_sg_to_pages()
 * sets ibmr->iova and ->length and fills the next page list, which only
 * the next REG_MR registers: allowed while the MR is valid (accesses walk
 * the registered list, and check the registered iova and length).
 */
static int rsw_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg,
			 int sg_nents, unsigned int *sg_offset)
{
	struct rsw_mr *mr = to_rsw_mr(ibmr);
	unsigned int psize = ibmr->page_size;
	int ret;

	if (mr->kind != RSW_MR_FAST_REG)
		return -EINVAL;
	if (!is_power_of_2(psize) || psize < RSW_MR_MIN_PAGE_SIZE ||
	    psize > RSW_MR_MAX_PAGE_SIZE)
		return -EINVAL;

	write_lock_bh(&mr->lock);
	mr->next_map.n = 0;
	mr->next_map.shift = ilog2(psize);
	ret = ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, rsw_mr_set_page);
	mr->next_map.fbo = ibmr->iova & (psize - 1);
	mr->next_ready = true;
	write_unlock_bh(&mr->lock);
	return ret;
}

enum rsw_mr_hold rsw_mr_hold(struct rsw_mr *mr, struct page *page)
{
	switch (mr->kind) {
	case RSW_MR_USER:
		/* Pinned by the umem while the lock keeps dereg_mr out. */
		lockdep_assert_held(&mr->lock);
		get_page(page);
		return RSW_MR_HOLD_PAGE;
	case RSW_MR_WINDOW:
		/*
		 * The page as for its user MR (dereg_mr of that MR does not
		 * wait), and a count the window's invalidation waits for:
		 * unlike dereg_mr, it revokes access to memory the process
		 * keeps and may rewrite at once.
		 */
		lockdep_assert_held(&mr->lock);
		get_page(page);
		atomic_inc(&mr->tx_busy);
		return RSW_MR_HOLD_WINDOW;
	case RSW_MR_FAST_REG:
		/* Counted before an invalidation can see the MR invalid. */
		lockdep_assert_held(&mr->lock);
		atomic_inc(&mr->tx_busy);
		return RSW_MR_HOLD_BUSY;
	default:
		return RSW_MR_HOLD_NONE;
	}
}
EXPORT_SYMBOL_IF_KUNIT(rsw_mr_hold);

/*
 * The waiter may free the MR as soon as it sees zero; wake_up_var() only
 * hashes the address, and RCU keeps the kvfree_rcu()'d MR readable in
 * between anyway.
 */
static void rsw_mr_tx_done(struct rsw_mr *mr)
{
	rcu_read_lock();
	if (atomic_dec_and_test(&mr->tx_busy))
		wake_up_var(&mr->tx_busy);
	rcu_read_unlock();
}

void rsw_mr_unhold(struct rsw_mr *mr, struct page *page,
		   enum rsw_mr_hold hold)
{
	if (hold == RSW_MR_HOLD_PAGE || hold == RSW_MR_HOLD_WINDOW)
		put_page(page);
	if (hold == RSW_MR_HOLD_BUSY || hold == RSW_MR_HOLD_WINDOW)
		rsw_mr_tx_done(mr);
}
EXPORT_SYMBOL_IF_KUNIT(rsw_mr_unhold);

/*
 * After access was revoked under the lock: wait until no TX piece
 * collected before that is still on its way to TCP.  Bounded by one
 * sendmsg(MSG_DONTWAIT) of the streams that collected them.
 */
static void rsw_mr_wait_tx(struct rsw_mr *mr)
{
	might_sleep();
	wait_var_event(&mr->tx_busy, !atomic_read(&mr->tx_busy));
}

/*
 * Point window @mw at @mr (NULL: none), moving it between the MRs' lists
 * of windows; the old parent, whose reference the caller now owns (and
 * the new one's it passed in).  mw->lock held for writing.
 */
static struct rsw_mr *rsw_mw_set_parent(struct rsw_mr *mw, struct rsw_mr *mr)
{
	struct rsw_mr *old = mw->parent;

	lockdep_assert_held_write(&mw->lock);
	if (old) {
		spin_lock(&old->mws_lock);
		list_del_init(&mw->mw_node);
		spin_unlock(&old->mws_lock);
	}
	if (mr) {
		spin_lock(&mr->mws_lock);
		list_add(&mw->mw_node, &mr->mws);
		spin_unlock(&mr->mws_lock);
	}
	mw->parent = mr;
	return old;
}

/*
 * dereg_mr of @mr (revoked): unbind every window bound to it and drop
 * their references, so that the dead MR goes with the registry's.  A
 * window in the list has not dropped its registry reference yet
 * (dealloc_mw unbinds first), so it may be pinned here; the list lock
 * nests inside a window's, hence one window at a time.  Process context.
 */
static void rsw_mr_detach_windows(struct rsw_mr *mr)
{
	struct rsw_mr *mw, *old;

	spin_lock_bh(&mr->mws_lock);
	while ((mw = list_first_entry_or_null(&mr->mws, struct rsw_mr,
					      mw_node))) {
		refcount_inc(&mw->ref);
		spin_unlock_bh(&mr->mws_lock);
		old = NULL;
		write_lock_bh(&mw->lock);
		if (mw->parent == mr) {
			WRITE_ONCE(mw->state, RSW_MR_INVALID);
			old = rsw_mw_set_parent(mw, NULL);
		}
		write_unlock_bh(&mw->lock);
		if (old)
			rsw_mr_put(old);
		rsw_mr_put(mw);
		spin_lock_bh(&mr->mws_lock);
	}
	spin_unlock_bh(&mr->mws_lock);
}

/*
 * ops.dereg_mr: revoke, unpublish, wait out TX pieces of a fast-reg MR
 * that are not yet with TCP, drop the registry reference.  Does not wait
 * for other references (see the top of this file).  Windows bound to the
 * MR fail every access from the revocation on (they check their MR), and
 * are unbound before this returns: none keeps the dead MR.
 */
static int rsw_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct rsw_mr *mr = to_rsw_mr(ibmr);
	struct rsw_device *rsw = to_rsw_dev(mr->pd->device);

	write_lock_bh(&mr->lock);
	mr->dead = true;
	WRITE_ONCE(mr->state, RSW_MR_INVALID);
	write_unlock_bh(&mr->lock);
	rsw_mr_unpublish(rsw, mr);
	rsw_mr_detach_windows(mr);
	rsw_mr_wait_tx(mr);
	/* No walk reaches the pages any more: unpin them. */
	if (mr->umem)
		ib_umem_release(mr->umem);
	mr->umem = NULL;
	rsw_mr_put(mr);
	return 0;
}

/*
 * IB_WR_REG_MR, the part under mr->lock: registers the list the last
 * map_mr_sg built, or again the registered one if none was built since.
 */
static int rsw_mr_fastreg_locked(struct rsw_mr *mr, u32 key, u32 rights)
{
	const struct rsw_mr_map *map = mr->next_ready ? &mr->next_map : &mr->map;
	u64 iova = mr->ibmr.iova;
	u64 length = mr->ibmr.length;

	lockdep_assert_held_write(&mr->lock);
	/* A REG_MR that looked the MR up before dereg_mr unpublished it. */
	if (mr->dead)
		return -EINVAL;
	if (mr->state == RSW_MR_VALID)
		return -EBUSY;
	/* The region must lie within what map_mr_sg mapped. */
	if (!map->n || (u64)map->fbo + length > (u64)map->n << map->shift)
		return -EINVAL;
	if (length && iova > U64_MAX - (length - 1))
		return -EINVAL;
	if (mr->next_ready) {
		swap(mr->map, mr->next_map);
		swap(mr->pages, mr->next_pages);
		mr->next_ready = false;
	}
	mr->iova = iova;
	mr->length = length;
	mr->access = rights;
	WRITE_ONCE(mr->stag, key);
	WRITE_ONCE(mr->state, RSW_MR_VALID);
	return 0;
}

int rsw_mr_fastreg(struct ib_pd *pd, const struct ib_reg_wr *wr)
{
	struct rsw_mr *mr = to_rsw_mr(wr->mr);
	u32 rights;
	int ret;

	if (mr->kind != RSW_MR_FAST_REG)
		return -EINVAL;
	if (mr->pd != pd)
		return -EACCES;
	/* The consumer owns the key, never the index. */
	if (rsw_stag_index(wr->key) != rsw_stag_index(READ_ONCE(mr->stag)))
		return -EINVAL;
	ret = rsw_mr_rights(wr->access, &rights);
	if (ret)
		return ret;

	write_lock_bh(&mr->lock);
	ret = rsw_mr_fastreg_locked(mr, wr->key, rights);
	write_unlock_bh(&mr->lock);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_mr_fastreg);

static enum rsw_mr_err rsw_mr_invalidate_locked(struct rsw_mr *mr, u32 stag,
						bool remote)
{
	lockdep_assert_held_write(&mr->lock);
	if (mr->stag != stag)
		return RSW_MR_ERR_STAG;
	if (remote && mr->state != RSW_MR_VALID)
		return RSW_MR_ERR_STATE;
	if (remote && !(mr->access & RSW_MR_REMOTE_RIGHTS))
		return RSW_MR_ERR_NO_INVAL;
	WRITE_ONCE(mr->state, RSW_MR_INVALID);
	return RSW_MR_OK;
}

/*
 * Invalidate window @mw (IB_WR_LOCAL_INV, Send with Invalidate): type 2
 * only (IBTA: a type 1 window is unbound by binding it again), through
 * the QP (serial @qp) that bound it only, with the rules of an MR's
 * invalidation; a window whose MR is gone counts as invalid.  Its MR's
 * reference is dropped.  Any context.
 */
static enum rsw_mr_err rsw_mw_invalidate(struct rsw_mr *mw, u32 stag,
					 bool remote, u64 qp)
{
	struct rsw_mr *parent = NULL;
	enum rsw_mr_err err;

	if (mw->mw_type != IB_MW_TYPE_2)
		return RSW_MR_ERR_NO_INVAL;
	write_lock_bh(&mw->lock);
	if (mw->parent && READ_ONCE(mw->parent->state) != RSW_MR_VALID)
		WRITE_ONCE(mw->state, RSW_MR_INVALID);
	if (mw->stag == stag && mw->state == RSW_MR_VALID &&
	    mw->bound_qp != qp)
		err = RSW_MR_ERR_PD;
	else
		err = rsw_mr_invalidate_locked(mw, stag, remote);
	if (!err)
		parent = rsw_mw_set_parent(mw, NULL);
	write_unlock_bh(&mw->lock);
	if (parent)
		rsw_mr_put(parent);
	return err;
}

/*
 * Revoke @stag of a fast-reg MR or a type 2 window of @pd.  On success
 * *@mrp is the MR (window), with a reference the caller passes to
 * rsw_mr_settle().
 */
static enum rsw_mr_err rsw_mr_revoke(struct rsw_device *rsw, struct ib_pd *pd,
				     u64 qp, u32 stag, bool remote,
				     struct rsw_mr **mrp)
{
	struct rsw_mr *mr = rsw_mr_find(rsw, stag);
	enum rsw_mr_err err;

	if (!mr)
		return RSW_MR_ERR_STAG;
	if (mr->pd != pd) {
		err = RSW_MR_ERR_PD;
	} else if (mr->kind == RSW_MR_WINDOW) {
		err = rsw_mw_invalidate(mr, stag, remote, qp);
	} else if (mr->kind != RSW_MR_FAST_REG) {
		/* Only fast-registered MRs are invalidated (IBTA). */
		err = RSW_MR_ERR_NO_INVAL;
	} else {
		write_lock_bh(&mr->lock);
		err = rsw_mr_invalidate_locked(mr, stag, remote);
		write_unlock_bh(&mr->lock);
	}
	if (err)
		rsw_mr_put(mr);
	else
		*mrp = mr;
	return err;
}

/*
 * After a revocation: wait out the TX pieces collected before it here
 * (@busy NULL, may sleep), or, from a context that must not sleep, hand
 * the MR over in *@busy if any piece is still on its way.  Every piece
 * took its count under the lock the revocation took after it, so a zero
 * read here is final; acquire orders the consumer's reuse of the memory
 * after the sender's last read of it.
 */
static void rsw_mr_settle(struct rsw_mr *mr, struct rsw_mr **busy)
{
	if (!busy) {
		rsw_mr_wait_tx_put(mr);
		return;
	}
	if (atomic_read_acquire(&mr->tx_busy))
		*busy = mr;
	else
		rsw_mr_put(mr);
}

void rsw_mr_wait_tx_put(struct rsw_mr *mr)
{
	rsw_mr_wait_tx(mr);
	rsw_mr_put(mr);
}
EXPORT_SYMBOL_IF_KUNIT(rsw_mr_wait_tx_put);

static enum rsw_mr_err rsw_mr_invalidate(struct rsw_device *rsw,
					 struct ib_pd *pd, u64 qp, u32 stag,
					 bool remote, struct rsw_mr **busy)
{
	struct rsw_mr *mr;
	enum rsw_mr_err err;

	if (busy)
		*busy = NULL;
	err = rsw_mr_revoke(rsw, pd, qp, stag, remote, &mr);
	if (!err)
		rsw_mr_settle(mr, busy);
	return err;
}

enum rsw_mr_err rsw_mr_invalidate_local(struct rsw_device *rsw,
					struct ib_pd *pd, u64 qp, u32 stag,
					struct rsw_mr **busy)
{
	return rsw_mr_invalidate(rsw, pd, qp, stag, false, busy);
}
EXPORT_SYMBOL_IF_KUNIT(rsw_mr_invalidate_local);

/*
 * Kernel MRs belong to a PD, not to a stream: the PD is the association
 * RFC 5040 sections 5.3 and 8.1.1 item 7 ask to check, and the consumer
 * decides by registering with remote rights whether a peer may invalidate.
 */
enum rsw_mr_err rsw_mr_invalidate_remote(struct rsw_device *rsw,
					 struct ib_pd *pd, u64 qp, u32 stag,
					 struct rsw_mr **busy)
{
	return rsw_mr_invalidate(rsw, pd, qp, stag, true, busy);
}
EXPORT_SYMBOL_IF_KUNIT(rsw_mr_invalidate_remote);

#define RSW_MR_NERR (RSW_MR_ERR_NO_INVAL + 1)

#define RSW_MR_TERM_DDP(code) \
	{ RSW_TERM_LAYER_DDP, RSW_DDP_ET_TAGGED, RSW_DDP_EC_T_##code }
#define RSW_MR_TERM_RDMAP(code) \
	{ RSW_TERM_LAYER_RDMAP, RSW_RDMAP_ET_REMOTE_PROT, RSW_RDMAP_EC_##code }

/*
 * Terminate codes per operation and reason.
 *  - Tagged placement is checked by DDP (RFC 5041 section 7.2), whose
 *    tagged buffer errors have no access rights code: an STag that does
 *    not grant the write is reported as invalid for it, as is an MR in
 *    the invalid state.
 *  - A Read Request's source is checked by RDMAP (RFC 5040 section 7.2):
 *    Remote Protection Error with the reason's own code.
 *  - Send with Invalidate (RFC 5040 sections 5.3 and 7.2): an STag that
 *    does not exist or is not valid is invalid, one that exists but is not
 *    this stream's to invalidate "cannot be invalidated".
 * Combinations an operation cannot produce map to "unspecified".
 */
static const struct rsw_term_cause rsw_mr_terms[][RSW_MR_NERR] = {
	[RSW_MR_USE_TAGGED] = {
		[RSW_MR_OK]		= RSW_MR_TERM_DDP(INVALID_STAG),
		[RSW_MR_ERR_STAG]	= RSW_MR_TERM_DDP(INVALID_STAG),
		[RSW_MR_ERR_PD]		= RSW_MR_TERM_DDP(STAG_NOT_ASSOC),
		[RSW_MR_ERR_STATE]	= RSW_MR_TERM_DDP(INVALID_STAG),
		[RSW_MR_ERR_ACCESS]	= RSW_MR_TERM_DDP(INVALID_STAG),
		[RSW_MR_ERR_BOUNDS]	= RSW_MR_TERM_DDP(BASE_BOUNDS),
		[RSW_MR_ERR_WRAP]	= RSW_MR_TERM_DDP(TO_WRAP),
		[RSW_MR_ERR_NO_INVAL]	= RSW_MR_TERM_DDP(INVALID_STAG),
	},
	[RSW_MR_USE_READ_REQ] = {
		[RSW_MR_OK]		= RSW_MR_TERM_RDMAP(UNSPECIFIED),
		[RSW_MR_ERR_STAG]	= RSW_MR_TERM_RDMAP(INVALID_STAG),
		[RSW_MR_ERR_PD]		= RSW_MR_TERM_RDMAP(STAG_NOT_ASSOC),
		[RSW_MR_ERR_STATE]	= RSW_MR_TERM_RDMAP(INVALID_STAG),
		[RSW_MR_ERR_ACCESS]	= RSW_MR_TERM_RDMAP(ACCESS),
		[RSW_MR_ERR_BOUNDS]	= RSW_MR_TERM_RDMAP(BASE_BOUNDS),
		[RSW_MR_ERR_WRAP]	= RSW_MR_TERM_RDMAP(TO_WRAP),
		[RSW_MR_ERR_NO_INVAL]	= RSW_MR_TERM_RDMAP(UNSPECIFIED),
	},
	[RSW_MR_USE_INVALIDATE] = {
		[RSW_MR_OK]		= RSW_MR_TERM_RDMAP(UNSPECIFIED),
		[RSW_MR_ERR_STAG]	= RSW_MR_TERM_RDMAP(INVALID_STAG),
		[RSW_MR_ERR_PD]		= RSW_MR_TERM_RDMAP(CANT_INVALIDATE),
		[RSW_MR_ERR_STATE]	= RSW_MR_TERM_RDMAP(INVALID_STAG),
		[RSW_MR_ERR_ACCESS]	= RSW_MR_TERM_RDMAP(CANT_INVALIDATE),
		[RSW_MR_ERR_BOUNDS]	= RSW_MR_TERM_RDMAP(UNSPECIFIED),
		[RSW_MR_ERR_WRAP]	= RSW_MR_TERM_RDMAP(UNSPECIFIED),
		[RSW_MR_ERR_NO_INVAL]	= RSW_MR_TERM_RDMAP(CANT_INVALIDATE),
	},
};

struct rsw_term_cause rsw_mr_err_to_term(enum rsw_mr_err err,
					 enum rsw_mr_use use)
{
	if (WARN_ON_ONCE(use >= ARRAY_SIZE(rsw_mr_terms) || err >= RSW_MR_NERR))
		return (struct rsw_term_cause)RSW_MR_TERM_RDMAP(UNSPECIFIED);
	return rsw_mr_terms[use][err];
}
EXPORT_SYMBOL_IF_KUNIT(rsw_mr_err_to_term);

/*
 * The page list of a user MR: the kernel address of every pinned page of
 * @umem, PAGE_SIZE granularity, and where the registered range starts.
 */
static int rsw_mr_umem_pages(struct rsw_mr *mr, struct ib_umem *umem,
			     u64 length)
{
	struct sg_page_iter it;
	u32 n = 0;

	for_each_sgtable_page(&umem->sgt_append.sgt, &it, 0) {
		if (WARN_ON_ONCE(n == mr->map.max))
			return -EINVAL;
		mr->pages[n++] = (uintptr_t)page_address(sg_page_iter_page(&it));
	}
	mr->map.n = n;
	mr->map.shift = PAGE_SHIFT;
	mr->map.fbo = ib_umem_offset(umem);
	/* The walk relies on the list covering the whole region. */
	if ((u64)mr->map.fbo + length > (u64)n << PAGE_SHIFT)
		return -EINVAL;
	return 0;
}

/*
 * ops.reg_user_mr: pin [@start, @start + @length) of the calling process
 * (ib_core accounts the pinned pages) and register it at once as
 * [@virt_addr, @virt_addr + @length) with @access.  The op is also what
 * makes ib_core count the device as a kernel verbs provider (rdma_cm
 * skips devices that are not one).  Process context, may sleep.
 */
static struct ib_mr *rsw_reg_user_mr(struct ib_pd *pd, u64 start, u64 length,
				     u64 virt_addr, int access,
				     struct ib_udata *udata)
{
	struct ib_umem *umem;
	struct rsw_mr *mr;
	u32 rights;
	int ret;

	/* No request data is defined: unknown input must be zero. */
	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return ERR_PTR(-EINVAL);
	/* Only a user MR may carry windows (IB_ACCESS_MW_BIND). */
	ret = rsw_mr_rights(access & ~IB_ACCESS_MW_BIND, &rights);
	if (ret)
		return ERR_PTR(ret);
	rights |= access & IB_ACCESS_MW_BIND;
	if (!length || length > RSW_MAX_MR_SIZE ||
	    virt_addr > U64_MAX - (length - 1) ||
	    start > U64_MAX - (length - 1))
		return ERR_PTR(-EINVAL);

	umem = ib_umem_get(pd->device, start, length, access);
	if (IS_ERR(umem))
		return ERR_CAST(umem);
	ret = -EINVAL;
	if (ib_umem_num_pages(umem) > U32_MAX)
		goto err_release;
	ret = -ENOMEM;
	mr = rsw_mr_alloc(pd, RSW_MR_USER, ib_umem_num_pages(umem));
	if (!mr)
		goto err_release;
	ret = rsw_mr_umem_pages(mr, umem, length);
	if (ret)
		goto err_free;
	mr->umem = umem;
	mr->access = rights;
	mr->iova = virt_addr;
	mr->length = length;
	mr->state = RSW_MR_VALID;
	mr->ibmr.iova = virt_addr;
	mr->ibmr.length = length;
	ret = rsw_mr_publish(to_rsw_dev(pd->device), mr);
	if (ret)
		goto err_free;
	return &mr->ibmr;

err_free:
	kvfree(mr);
err_release:
	ib_umem_release(umem);
	return ERR_PTR(ret);
}

/* ------------------------------------------------------ memory windows */

static struct lock_class_key rsw_mw_lock_key;

/*
 * ops.alloc_mw: an unbound window of type 1 or 2 in @ibmw's PD, its STag
 * (rkey) on a fresh index with a random key.  Process context.
 */
static int rsw_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct rsw_mr *mw;
	int ret;

	/* No request data is defined: unknown input must be zero. */
	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;
	if (ibmw->type != IB_MW_TYPE_1 && ibmw->type != IB_MW_TYPE_2)
		return -EINVAL;
	mw = rsw_mr_alloc(ibmw->pd, RSW_MR_WINDOW, 0);
	if (!mw)
		return -ENOMEM;
	lockdep_set_class(&mw->lock, &rsw_mw_lock_key);
	mw->mw_type = ibmw->type;
	ret = rsw_mr_publish(to_rsw_dev(ibmw->device), mw);
	if (ret) {
		kvfree(mw);
		return ret;
	}
	ibmw->rkey = mw->stag;
	to_rsw_mw(ibmw)->win = mw;
	return 0;
}

/*
 * ops.dealloc_mw: revoke, unpublish, let go of the MR, wait out the TX
 * pieces collected through the window (the process may reuse the memory
 * once this returned), drop the registry reference.  Accesses holding a
 * reference fail their next check.  Process context.
 */
static int rsw_dealloc_mw(struct ib_mw *ibmw)
{
	struct rsw_mr *mw = to_rsw_mw(ibmw)->win;
	struct rsw_mr *parent;

	write_lock_bh(&mw->lock);
	mw->dead = true;
	WRITE_ONCE(mw->state, RSW_MR_INVALID);
	parent = rsw_mw_set_parent(mw, NULL);
	write_unlock_bh(&mw->lock);
	rsw_mr_unpublish(to_rsw_dev(ibmw->device), mw);
	if (parent)
		rsw_mr_put(parent);
	rsw_mr_wait_tx_put(mw);
	return 0;
}

/*
 * The rights a bind gives a window: remote ones; IB_ACCESS_LOCAL_WRITE
 * and the hints are accepted and mean nothing (a window is no local
 * key); zero-based windows are not offered.
 */
static int rsw_mw_rights(u32 access, u32 *rights)
{
	access &= ~(RSW_MR_HINTS | IB_ACCESS_LOCAL_WRITE);
	if (access & ~RSW_MR_REMOTE_RIGHTS)
		return -EINVAL;
	*rights = access;
	return 0;
}

/*
 * May a window with @rights cover [@addr, @addr + @len) of @mr?  The MR
 * must be valid and registered with IB_ACCESS_MW_BIND; remote write or
 * atomic rights need its local write (the verbs' rule: the window's
 * remote rights are its own, the MR's remote rights do not limit them).
 * @mr->lock held.
 */
static int rsw_mw_check_mr(const struct rsw_mr *mr, u64 addr, u64 len,
			   u32 rights)
{
	lockdep_assert_held(&mr->lock);
	if (mr->state != RSW_MR_VALID)
		return -EINVAL;
	if (!(mr->access & IB_ACCESS_MW_BIND))
		return -EACCES;
	if ((rights & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(mr->access & IB_ACCESS_LOCAL_WRITE))
		return -EACCES;
	if (rsw_mr_check_range(mr->iova, mr->length, addr, len))
		return -EINVAL;
	return 0;
}

/*
 * Bind @mw to @mr as @b says, under mw->lock; on success the caller's
 * reference to @mr moves into the window and *@old is the MR the window
 * let go of (NULL if none), for the caller to put.
 */
static int rsw_mw_bind_locked(struct rsw_mr *mw, struct rsw_mr *mr,
			      const struct rdmap_sw_sqe_bind *b, u32 rights,
			      u64 qp, struct rsw_mr **old)
{
	int ret;

	lockdep_assert_held_write(&mw->lock);
	if (mw->dead)
		return -EINVAL;
	/* Type 2: only a free window is bound; one whose MR died is free. */
	if (mw->mw_type == IB_MW_TYPE_2 && mw->state == RSW_MR_VALID &&
	    READ_ONCE(mw->parent->state) == RSW_MR_VALID)
		return -EBUSY;
	read_lock(&mr->lock);
	ret = rsw_mw_check_mr(mr, b->addr, b->length, rights);
	/* Listed before a dereg_mr can revoke @mr: it then unbinds @mw. */
	if (!ret)
		*old = rsw_mw_set_parent(mw, mr);
	read_unlock(&mr->lock);
	if (ret)
		return ret;
	mw->iova = b->addr;
	mw->length = b->length;
	mw->access = rights;
	mw->bound_qp = mw->mw_type == IB_MW_TYPE_2 ? qp : 0;
	WRITE_ONCE(mw->stag, b->mw_rkey);
	WRITE_ONCE(mw->state, RSW_MR_VALID);
	return 0;
}

/*
 * A bind that names no MR (ibv_bind_mw() with none): type 1 only, an
 * empty range; the window is left unbound under its new STag.
 */
static int rsw_mw_unbind(struct rsw_mr *mw, const struct rdmap_sw_sqe_bind *b)
{
	struct rsw_mr *old;

	if (mw->mw_type != IB_MW_TYPE_1 || b->addr || b->length)
		return -EINVAL;
	write_lock_bh(&mw->lock);
	if (mw->dead) {
		write_unlock_bh(&mw->lock);
		return -EINVAL;
	}
	old = rsw_mw_set_parent(mw, NULL);
	WRITE_ONCE(mw->state, RSW_MR_INVALID);
	WRITE_ONCE(mw->stag, b->mw_rkey);
	write_unlock_bh(&mw->lock);
	if (old)
		rsw_mr_put(old);
	return 0;
}

/*
 * Before a bound type 1 window is rebound onto @mr: if the bind can
 * succeed, revoke the old range and wait out the pieces read through it,
 * with no new ones collected meanwhile (waiting after the rebind could
 * last as long as other streams keep reading through the new range).
 * A bind that then fails leaves the window unbound.
 */
static void rsw_mw_revoke_for_bind(struct rsw_mr *mw, struct rsw_mr *mr,
				   const struct rdmap_sw_sqe_bind *b,
				   u32 rights)
{
	bool revoke;

	read_lock_bh(&mr->lock);
	revoke = !rsw_mw_check_mr(mr, b->addr, b->length, rights);
	read_unlock_bh(&mr->lock);
	if (!revoke)
		return;
	write_lock_bh(&mw->lock);
	if (mw->mw_type == IB_MW_TYPE_1 && mw->state == RSW_MR_VALID)
		WRITE_ONCE(mw->state, RSW_MR_INVALID);
	write_unlock_bh(&mw->lock);
	rsw_mr_wait_tx(mw);
}

int rsw_mw_bind(struct rsw_device *rsw, struct ib_pd *pd, u64 qp,
		const struct rdmap_sw_sqe_bind *b)
{
	struct rsw_mr *mw, *mr, *old = NULL;
	u32 rights;
	int ret;

	if (b->reserved || rsw_mw_rights(b->access, &rights))
		return -EINVAL;
	/* The window by the index of its new STag, the MR by its lkey. */
	mw = rsw_mr_find_index(rsw, b->mw_rkey);
	if (!mw)
		return -EINVAL;
	ret = -EINVAL;
	if (mw->kind != RSW_MR_WINDOW)
		goto put_mw;
	ret = -EACCES;
	if (mw->pd != pd)
		goto put_mw;
	if (!b->mr_lkey) {
		ret = rsw_mw_unbind(mw, b);
		goto put_mw;
	}
	ret = -EINVAL;
	mr = rsw_mr_find(rsw, b->mr_lkey);
	if (!mr)
		goto put_mw;
	if (mr->pd != pd) {
		ret = -EACCES;
	} else if (mr->kind == RSW_MR_USER) {
		rsw_mw_revoke_for_bind(mw, mr, b, rights);
		write_lock_bh(&mw->lock);
		ret = rsw_mw_bind_locked(mw, mr, b, rights, qp, &old);
		write_unlock_bh(&mw->lock);
	}
	if (ret)
		rsw_mr_put(mr);
	if (old)
		rsw_mr_put(old);
	rsw_mr_put(mw);
	return ret;
put_mw:
	/* An unbind revokes the window's range: as an invalidation does. */
	if (!ret)
		rsw_mr_wait_tx_put(mw);
	else
		rsw_mr_put(mw);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_mw_bind);

#if IS_ENABLED(CONFIG_KUNIT)
void rsw_mr_kunit_as_user(struct ib_mr *ibmr, u32 access)
{
	struct rsw_mr *mr = to_rsw_mr(ibmr);

	write_lock_bh(&mr->lock);
	mr->kind = RSW_MR_USER;
	mr->access = access;
	write_unlock_bh(&mr->lock);
}
EXPORT_SYMBOL_IF_KUNIT(rsw_mr_kunit_as_user);
#endif

const struct ib_device_ops rsw_mem_ops = {
	.alloc_mw = rsw_alloc_mw,
	.dealloc_mw = rsw_dealloc_mw,
	.reg_user_mr = rsw_reg_user_mr,
	.get_dma_mr = rsw_get_dma_mr,
	.alloc_mr = rsw_alloc_mr,
	.map_mr_sg = rsw_map_mr_sg,
	.dereg_mr = rsw_dereg_mr,
	INIT_RDMA_OBJ_SIZE(ib_mw, rsw_mw, ibmw),
};
