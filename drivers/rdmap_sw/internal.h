/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internal API index: every function one file of rdmap_sw calls in another,
 * grouped by the file that implements it, with its execution context.
 *
 * Lock order: RTNL -> rsw_devices_lock (main.c) -> rsw_device.port_lock.
 * Nothing calls into ib_core's (un)registration while holding
 * rsw_devices_lock.
 */
#ifndef RDMAP_SW_INTERNAL_H
#define RDMAP_SW_INTERNAL_H

#include "compat.h"
#include "rdmap_sw.h"
#include "mpa.h"
#include "qp.h"
#include "rx.h"
#include "opcode.h"
#include "cm.h"
#include "tx.h"
#include "stream.h"
#include "stats.h"

/*
 * main.c - module, rdma link ops, netdev events, device lifecycle.
 * Process context, may sleep, RTNL not held.
 */
#if IS_ENABLED(CONFIG_KUNIT)
/* rdma_link_ops.newlink; exported for KUnit. */
int rsw_newlink(const char *ibdev_name, struct net_device *ndev);
/* Synchronous removal, as on module unload; exported for KUnit. */
void rsw_device_remove(struct ib_device *ibdev);
#endif

/*
 * verbs.c - device, port, GID, P_Key, PD and ucontext verbs.
 */
/*
 * The user ABI versions this module speaks (rdmap_sw-abi.h).  A test build
 * may narrow them (scripts/build --abi MIN-MAX) to act as an older or a
 * newer module; a normal build speaks the header's whole range.
 */
#ifdef RSW_TEST_ABI_MIN
#define RSW_ABI_MIN RSW_TEST_ABI_MIN
#define RSW_ABI_MAX RSW_TEST_ABI_MAX
#else
#define RSW_ABI_MIN RDMAP_SW_ABI_VERSION_MIN
#define RSW_ABI_MAX RDMAP_SW_ABI_VERSION_MAX
#endif

/*
 * @uctx (may be NULL) speaks a version of ours.  Every create verb and
 * mmap asks: versions 1 and 2 share every structure they use, and the
 * first version that does not will branch here.  False only for a
 * context alloc_ucontext did not finish, a driver bug.
 */
static inline bool rsw_uctx_abi_ok(const struct rsw_ucontext *uctx)
{
	return uctx && !WARN_ON_ONCE(uctx->abi_version < RSW_ABI_MIN ||
				     uctx->abi_version > RSW_ABI_MAX);
}

/* The same for @udata's context (verbs.c). */
bool rsw_udata_abi_ok(struct ib_udata *udata);

/* verbs.c's ops tables, each next to its code; main.c merges them. */
extern const struct ib_device_ops rsw_query_ops;
extern const struct ib_device_ops rsw_ctx_ops;
extern const struct ib_device_ops rsw_pd_ops;
/*
 * res.c's: driver details for rdma res show qp and cm_id.  Process
 * context; no socket lock (rsw_stream_snapshot*).
 */
extern const struct ib_device_ops rsw_res_ops;

/* Which parts of the port snapshot rsw_port_refresh() changed. */
enum rsw_port_change {
	RSW_PORT_STATE_CHANGED = 1 << 0,
	RSW_PORT_ADDR_CHANGED = 1 << 1,
};

/*
 * Re-read state, MTU, speed and MAC from the netdev into the snapshot and
 * report what changed.  Process context, RTNL held, may sleep (ethtool).
 */
unsigned int rsw_port_refresh(struct rsw_device *rsw);
/* Current port state.  Process or softirq context. */
enum ib_port_state rsw_port_state(struct rsw_device *rsw);
/* EUI-64 node GUID derived from a MAC address.  Any context. */
__be64 rsw_guid_from_mac(const u8 *mac);

/*
 * umap.c - rings mapped into a process (lifetime at the top of umap.c).
 * Process context, may sleep.
 */
struct rsw_umap;
/*
 * Memory a process made us allocate in a size it chose: charged to its
 * memory cgroup, and failing (-ENOMEM) rather than OOM-killing anyone.
 */
#define RSW_GFP_USER (GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL | __GFP_NOWARN)
/*
 * A zeroed buffer of @len (page aligned) that rsw_mmap() can map; charged
 * to the caller's memory cgroup if @user (a size a process chose).  NULL
 * if out of memory; freed with vfree() (or by the entry, once published).
 */
void *rsw_umap_alloc(size_t len, bool user);
/*
 * Publish @buf (rsw_umap_alloc(), @len page aligned) to @uctx's mmap
 * offsets: *@offset is what the process passes to mmap().  On success the
 * entry owns @buf (freed once no mapping uses it); on failure the caller
 * still does.
 */
struct rsw_umap *rsw_umap_insert(struct ib_ucontext *uctx, void *buf,
				 size_t len, u64 *offset);
/* The owner is destroyed: no new mmap(); @buf goes with the entry. */
void rsw_umap_remove(struct rsw_umap *um);
/* ops.mmap and ops.mmap_free (in rsw_ctx_ops). */
int rsw_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma);
void rsw_mmap_free(struct rdma_user_mmap_entry *e);

/*
 * mpa.c - MPA connection setup (RFC 5044 7.1, RFC 6581) without sockets:
 * frame descriptions, builder, incremental parser, negotiation; types and
 * the exchange's sequence in mpa.h.  Pure functions: no allocation, no
 * locks, never sleep; any context.  The caller serialises each rsw_mpa_rx.
 */
/* Name and handling (errno, MPA error code, Terminate, Reject) of @r. */
const struct rsw_mpa_reason_info *rsw_mpa_reason(enum rsw_mpa_reason r);
/* -EINVAL unless @lp is usable (rev 1/2, IRD/ORD <= 0x3fff, PD <= 512). */
int rsw_mpa_params_check(const struct rsw_mpa_params *lp);
/* Initiator: describe the Request for @lp; -EINVAL if @lp is unusable. */
int rsw_mpa_request(const struct rsw_mpa_params *lp, struct rsw_mpa_frame *req);
/*
 * Frame @f (Request or Reply) into @buf: its length, -EINVAL (e.g. ULP
 * private data over 512, or 508 with IRD/ORD) or -ENOSPC.
 */
int rsw_mpa_build(const struct rsw_mpa_frame *f, bool reply, void *buf,
		  size_t size);
/* Responder: whether Request @req is acceptable under @lp. */
enum rsw_mpa_reason rsw_mpa_check_request(const struct rsw_mpa_params *lp,
					  const struct rsw_mpa_frame *req);
/* Responder: Reply @rep and outcome @conn, or a Reject and the reason. */
enum rsw_mpa_reason rsw_mpa_accept(const struct rsw_mpa_params *lp,
				   const struct rsw_mpa_frame *req,
				   struct rsw_mpa_frame *rep,
				   struct rsw_mpa_conn *conn);
/* Responder: the Reject frame answering @req with @lp's private data. */
void rsw_mpa_reject(const struct rsw_mpa_params *lp,
		    const struct rsw_mpa_frame *req, struct rsw_mpa_frame *rep);
/* Initiator: outcome @conn of Reply @rep to the Request built from @lp. */
enum rsw_mpa_reason rsw_mpa_connected(const struct rsw_mpa_params *lp,
				      const struct rsw_mpa_frame *rep,
				      struct rsw_mpa_conn *conn);
/* Parser: start (initiator: @rev offered), feed, octets wanted, EOF. */
void rsw_mpa_rx_init(struct rsw_mpa_rx *rx, bool initiator, u8 rev);
enum rsw_mpa_rx_status rsw_mpa_rx_feed(struct rsw_mpa_rx *rx, const void *data,
				       size_t len, size_t *used);
u32 rsw_mpa_rx_want(const struct rsw_mpa_rx *rx);
enum rsw_mpa_reason rsw_mpa_rx_eof(struct rsw_mpa_rx *rx);
const char *rsw_mpa_rx_state_name(enum rsw_mpa_rx_state s);

/*
 * cq.c - completion queues (object in cq.h, ring format in the user ABI).
 * Lock order: rsw_cq.cons_lock -> rsw_cq.prod_lock; both irqsave.
 */
/* Limits advertised by query_device; create_cq enforces RSW_MAX_CQE. */
#define RSW_MAX_CQ (128 * 1024)
#define RSW_MAX_CQE (4 * 1024 * 1024)	/* a power of two */

struct rsw_cq;
struct rdmap_sw_cqe;

/* CQ verbs; main.c merges them into every device's ops. */
extern const struct ib_device_ops rsw_cq_ops;
/* Module init/exit: the notification workqueue.  Process context. */
int rsw_cq_init(void);
void rsw_cq_exit(void);
/*
 * Append a completion for @qp (reported as ib_wc.qp; not NULL) to @cq.
 * Any context: process, softirq, hard IRQ, IRQs disabled; takes
 * cq->prod_lock irqsave, never sleeps, never calls a ULP handler (a due
 * notification is queued to a work item, or kept in this CPU's batch,
 * below).  @solicited: the message had the
 * Solicited Event bit; failed entries wake solicited-only arming anyway.
 * cqe->seq and RDMAP_SW_CQE_SOLICITED are ignored.  Returns 0; -EINVAL for
 * an opcode/status out of range, both WITH_IMM and WITH_INV, or no @qp;
 * -ENOSPC if the ring is full: the entry is dropped, IB_EVENT_CQ_ERR is
 * dispatched and the caller should move the QP to ERROR.
 */
int rsw_cq_push(struct rsw_cq *cq, const struct rdmap_sw_cqe *cqe,
		struct ib_qp *qp, bool solicited);
/*
 * Notification without the work item's hop, for a producer that runs in
 * softirq (the stream's RX in data-ready): between rsw_cq_batch_begin()
 * and rsw_cq_batch_end() on this CPU, a notification rsw_cq_push() finds
 * due on @scq or @rcq (the caller's QP's CQs, which that QP keeps alive;
 * any other CQ goes to its work) is kept in @b, and rsw_cq_batch_end()
 * calls the handlers, after the pushes and outside every CQ and QP lock;
 * the caller holds none of those either.  Outside softirq (or in a hard
 * IRQ) nothing is kept.  Batches nest.
 */
struct rsw_cq_batch {
	struct rsw_cq *cq[2];
	bool due[2];
	struct rsw_cq_batch *prev;
	bool open;
};

void rsw_cq_batch_begin(struct rsw_cq_batch *b, struct ib_cq *scq,
			struct ib_cq *rcq);
void rsw_cq_batch_end(struct rsw_cq_batch *b);
/*
 * Discard every entry of @qp not yet polled from @cq, so that none is
 * reported with a freed QP.  destroy_qp, once @qp can push no more.  Any
 * context; takes cq->cons_lock irqsave.
 */
void rsw_cq_discard_qp(struct rsw_cq *cq, struct ib_qp *qp);
#if IS_ENABLED(CONFIG_KUNIT)
/* Empty an idle CQ and restart its indices at @start; exported for KUnit. */
void rsw_cq_reset(struct rsw_cq *cq, u32 start);
/* resize_cq's steps, exported for KUnit (cq.c; struct rsw_cq_ring: cq.h). */
struct rsw_cq_ring;
int rsw_cq_ring_alloc(struct rsw_cq_ring *r, u32 size, bool user);
void rsw_cq_ring_free(struct rsw_cq_ring *r);
int rsw_cq_snapshot(struct rsw_cq *cq, u32 *guess, u32 *prod);
u32 rsw_cq_ring_prepare(struct rsw_cq *cq, struct rsw_cq_ring *r, u32 guess,
			u32 prod);
int rsw_cq_switch(struct rsw_cq *cq, struct rsw_cq_ring *r, u32 guess,
		  u32 copied);
#endif

/*
 * mem.c - STags and memory regions (objects and lifetime in mem.h and at
 * the top of mem.c).  Any context unless noted; nothing here sleeps.
 *
 * An access is checked once with rsw_mr_get(), which pins the MR in an
 * rsw_mr_ref; the memory is then reached only through rsw_mr_walk() and
 * the helpers on it, which re-check the access under the MR lock each
 * time, so an invalidation or dereg in between stops them and no byte
 * outside the registered range is ever touched.  Keep a ref for one
 * operation step (a DDP segment, one FPDU's payload), never in a ring that
 * user space can see; re-resolve by STag at the next step.  Rights:
 * IB_ACCESS_REMOTE_WRITE for tagged placement (Write, and Read Response
 * when the sink is looked up by the STag on the wire), _REMOTE_READ for a
 * Read Request's source, _LOCAL_WRITE for a local SGE written into
 * (receive buffers, Read sink SGEs), 0 for a local SGE only read.
 * Zero-length accesses: RFC 5040 section 7.2 checks a Read Request's
 * source STag only for non-zero lengths; callers skip rsw_mr_get() then.
 */
extern const struct ib_device_ops rsw_mem_ops;
/* Per-device registry, at device allocation / from ops.dealloc_driver. */
void rsw_mr_table_init(struct rsw_mr_table *table);
void rsw_mr_table_destroy(struct rsw_mr_table *table);
/*
 * Look up @stag (all 32 bits) in @pd and check [@to, @to + @len) against
 * it for @right (an IB_ACCESS_* bit, 0 = local read).  RSW_MR_OK: @ref
 * holds a reference, release with rsw_mr_ref_put().  Otherwise @ref->mr
 * is NULL and the reason says which RFC 5040 section 7 check failed
 * (rsw_mr_err_to_term()); local SGE failures complete IB_WC_LOC_PROT_ERR.
 */
enum rsw_mr_err rsw_mr_get(struct rsw_device *rsw, struct ib_pd *pd,
			   u32 stag, u64 to, u64 len, u32 right,
			   struct rsw_mr_ref *ref);
/*
 * rsw_mr_get() for a peer's access on the stream of the QP whose serial
 * (rsw_qp.serial) is @qp: a type 2 window serves only the QP that bound
 * it (RSW_MR_ERR_PD otherwise, "not associated").  rsw_mr_get() is this
 * with no QP (0), which no type 2 window bound by a QP matches.
 */
enum rsw_mr_err rsw_mr_get_qp(struct rsw_device *rsw, struct ib_pd *pd,
			      u64 qp, u32 stag, u64 to, u64 len, u32 right,
			      struct rsw_mr_ref *ref);
/* rsw_mr_get() for a local SGE: lkey, bounds, LOCAL_WRITE if @write. */
enum rsw_mr_err rsw_mr_get_sge(struct rsw_device *rsw, struct ib_pd *pd,
			       const struct ib_sge *sge, bool write,
			       struct rsw_mr_ref *ref);
void rsw_mr_ref_put(struct rsw_mr_ref *ref);
/*
 * The registered MR (or memory window: check its kind) whose index is
 * that of @stag, whatever its key (the key changes with every fast
 * registration and bind), with a reference that rsw_mr_put() drops; NULL
 * once dereg_mr (dealloc_mw) unpublished it.  Any context.
 */
struct rsw_mr *rsw_mr_find_index(struct rsw_device *rsw, u32 stag);
void rsw_mr_put(struct rsw_mr *mr);
/*
 * Visit [@to, @to + @len) of @ref's MR as (page, offset, length) pieces
 * under the MR lock (rsw_mr_seg_fn in mem.h).  Fails without visiting
 * anything if the access no longer holds (invalidated, re-registered with
 * another key, range outside).  For a DMA MR, a kernel address that has no
 * page stops the walk with RSW_MR_ERR_BOUNDS after the pieces before it.
 */
enum rsw_mr_err rsw_mr_walk(const struct rsw_mr_ref *ref, u64 to, u64 len,
			    rsw_mr_seg_fn fn, void *arg);
/*
 * Copy into (RX placement; @ref must carry a write right) or out of (TX
 * source) the MR range.  Bound @len by one segment: the MR lock is held
 * for the whole copy.
 */
enum rsw_mr_err rsw_mr_copy_to(const struct rsw_mr_ref *ref, u64 to,
			       const void *src, size_t len);
enum rsw_mr_err rsw_mr_copy_from(const struct rsw_mr_ref *ref, u64 to,
				 void *dst, size_t len);
/*
 * The value @a leaves in a word that held @old (RFC 7306 section 5.1's
 * pseudo-code).  Pure.
 */
u64 rsw_atomic_apply(const struct rsw_atomic *a, u64 old);
/*
 * Execute @a on the 64-bit word at @to of @ref's MR (which must carry
 * IB_ACCESS_REMOTE_ATOMIC) with a CPU atomic, so that the process or
 * kernel owning the memory sees it atomic against its own atomics; the
 * word's value before it in *@orig.  @to must be 8-aligned; a word that
 * the MR's page list does not map 8-aligned fails with RSW_MR_ERR_BOUNDS.
 * Any context (the MR lock is a BH lock).
 */
enum rsw_mr_err rsw_mr_atomic(const struct rsw_mr_ref *ref, u64 to,
			      const struct rsw_atomic *a, u64 *orig);
/*
 * Describe the range in at most @max_bv bio_vecs (zero-copy TX with
 * MSG_SPLICE_PAGES): *@nr_bv used, *@bytes covered (less than @len when
 * @max_bv ran out).  No page references are taken: splicing is only safe
 * when the memory outlives TCP's use of it, which an invalidation does
 * not guarantee.
 */
enum rsw_mr_err rsw_mr_bvecs(const struct rsw_mr_ref *ref, u64 to, u64 len,
			     struct bio_vec *bv, unsigned int max_bv,
			     unsigned int *nr_bv, u64 *bytes);
/*
 * From a walk callback (under the MR lock): hold what keeps @page's
 * content the MR's until rsw_mr_unhold() with the value returned, which
 * the TX engine calls once the sink returned (rules at the top of mem.c).
 * rsw_mr_unhold() takes no lock and never sleeps.
 */
enum rsw_mr_hold rsw_mr_hold(struct rsw_mr *mr, struct page *page);
void rsw_mr_unhold(struct rsw_mr *mr, struct page *page,
		   enum rsw_mr_hold hold);
/*
 * IB_WR_REG_MR on a QP of @pd.  0, or -EINVAL (not a fast-reg MR, key of
 * another index, bad access flags, region not mapped), -EOPNOTSUPP (rights
 * not offered: memory windows, zero based), -EACCES (MR of another PD),
 * -EBUSY (MR still valid).
 */
int rsw_mr_fastreg(struct ib_pd *pd, const struct ib_reg_wr *wr);
/*
 * IB_WR_LOCAL_INV and the sink of IB_WR_RDMA_READ_WITH_INV: @stag of a
 * fast-reg MR or a type 2 memory window of @pd bound by the QP whose
 * serial is @qp (0: none); invalidating an invalid MR succeeds.  Remote
 * invalidation (Send with Invalidate, RX): the MR must also be valid and
 * have been registered with a remote right.  On return no access through
 * the old registration is in progress or possible.  TX pieces collected
 * through it before may still be on their way to TCP: with @busy NULL the
 * call waits for them (process context, may sleep); from the receive
 * path, which may not sleep, *@busy is NULL if none is, else the MR with
 * a reference, and the work request that reports the invalidation may
 * complete only after rsw_mr_wait_tx_put(*@busy) returned (may sleep).
 */
enum rsw_mr_err rsw_mr_invalidate_local(struct rsw_device *rsw,
					struct ib_pd *pd, u64 qp, u32 stag,
					struct rsw_mr **busy);
enum rsw_mr_err rsw_mr_invalidate_remote(struct rsw_device *rsw,
					 struct ib_pd *pd, u64 qp, u32 stag,
					 struct rsw_mr **busy);
void rsw_mr_wait_tx_put(struct rsw_mr *mr);
/*
 * BIND_MW from the user QP of @pd whose serial is @qp (a type 2 window
 * then serves that QP only, see rsw_mr_get_qp()): bind the window whose index is that of
 * @b->mw_rkey (a window of @pd) to [@b->addr, + @b->length) of the user
 * MR @b->mr_lkey (of @pd, registered with IB_ACCESS_MW_BIND) with the
 * rights @b->access, under the new STag @b->mw_rkey.  A type 2 window
 * must be unbound (invalid, or its MR gone); a type 1 window is rebound,
 * or unbound by a bind that names no MR (@b->mr_lkey 0, empty range).
 * 0, or -EINVAL (no such window or MR, bad rights, range outside the MR,
 * MR not valid), -EACCES (other PD, MR without MW_BIND, remote write or
 * atomic over an MR without local write), -EBUSY (type 2 still bound).
 * Process context: a successful bind revokes the window's old range and,
 * like rsw_mr_invalidate_local(), waits out TX pieces collected through
 * it (never the calling stream's own: none are held between its pushes).
 */
int rsw_mw_bind(struct rsw_device *rsw, struct ib_pd *pd, u64 qp,
		const struct rdmap_sw_sqe_bind *b);
#if IS_ENABLED(CONFIG_KUNIT)
/*
 * Make fast-reg MR @ibmr (registered, KUnit's own pages) pass for a user
 * MR with rights @access, so that windows can be bound to it: KUnit has
 * no process whose memory reg_user_mr could pin.
 */
void rsw_mr_kunit_as_user(struct ib_mr *ibmr, u32 access);
#endif
/* Terminate layer/type/code for a refusal in operation @use. */
struct rsw_term_cause rsw_mr_err_to_term(enum rsw_mr_err err,
					 enum rsw_mr_use use);

/*
 * rx.c - the receive stream parser of one connection in full operation
 * (types, the consumer's ops and the call sequence in rx.h).  No locks, no
 * allocation, never sleeps; the caller serialises each rsw_rx (socket lock
 * in the data-ready path, softirq or process context), and the ops are
 * called in that same context.
 */
/* Start a stream: 0, -EOPNOTSUPP with Markers, -EINVAL for a tiny limit. */
int rsw_rx_init(struct rsw_rx *rx, const struct rsw_rx_config *cfg,
		const struct rsw_rx_ops *ops, void *ctx);
/*
 * Parse @len octets of the stream.  Returns the octets consumed: all of
 * them; or, once the stream stopped at an error (ops->stop called, reason
 * in rsw_rx_stopped()), those up to the error, and later calls consume 0;
 * or, paused, those up to the end of the segment whose seg_done() called
 * rsw_rx_pause(), and 0 until rsw_rx_resume().
 */
size_t rsw_rx_feed(struct rsw_rx *rx, const u8 *data, size_t len);
/*
 * From seg_done(): parse nothing more until rsw_rx_resume(), e.g. while
 * the consumer must finish delivering the segment out of this context.
 */
void rsw_rx_pause(struct rsw_rx *rx);
void rsw_rx_resume(struct rsw_rx *rx);
bool rsw_rx_paused(const struct rsw_rx *rx);
/* rsw_rx_feed() over @len octets of @skb from @off (tcp_read_sock actor). */
size_t rsw_rx_feed_skb(struct rsw_rx *rx, struct sk_buff *skb,
		       unsigned int off, size_t len);
/*
 * The peer closed: true at an FPDU boundary, else the stream stops (MPA
 * "TCP connection lost") and the segment in progress is abandoned.
 */
bool rsw_rx_eof(struct rsw_rx *rx);
/* The Terminate reason once stopped, NULL while parsing. */
const struct rsw_rx_term *rsw_rx_stopped(const struct rsw_rx *rx);
const char *rsw_rx_state_name(enum rsw_rx_state s);

/*
 * qp.c - RC queue pairs: the object, RFC 5040 section 6 stream states,
 * the verbs and the post paths (object and queue layout in qp.h, the
 * rings in ring.c, lifetime and locks at the top of qp.c).  Lock order:
 * rsw_qp.lock -> rsw_qp.sq.lock -> rsw_qp.rq.lock -> rsw_srq.lock,
 * rsw_qp.rq.lock -> rsw_cq.prod_lock, all irqsave.  Nothing here sleeps
 * except create_qp, destroy_qp and rsw_sq_exec_local().
 */
/* QP and SRQ verbs; main.c merges them into every device's ops. */
extern const struct ib_device_ops rsw_qp_ops;
extern const struct ib_device_ops rsw_srq_ops;
/*
 * The CM, TX and RX hold a QP by reference: rsw_qp_lookup() finds one of
 * @rsw by QPN (e.g. for iw_get_qp) and takes a reference, NULL if there is
 * none; rsw_qp_get() adds one to a QP already held; rsw_qp_put() drops
 * one.  destroy_qp waits for the last put.  Any context.
 */
struct rsw_qp *rsw_qp_lookup(struct rsw_device *rsw, u32 qpn);
void rsw_qp_get(struct rsw_qp *qp);
void rsw_qp_put(struct rsw_qp *qp);
/*
 * Move @qp to ERROR (a fatal stream or protocol error, a Terminate sent or
 * received): everything posted and not taken by an engine completes with
 * FLUSH_ERR, in order, and so does everything posted later.  Any context;
 * takes the QP locks.  ERROR -> ERROR is a no-op.
 */
void rsw_qp_set_error(struct rsw_qp *qp);
/*
 * The same for a Terminate sent or received: rsw_qp_term_cause(), then
 * ERROR.
 */
void rsw_qp_set_error_term(struct rsw_qp *qp, u32 vendor_err);
/*
 * ring.c: a Terminate with cause @vendor_err (RDMAP_SW_CQE_TERM_*: layer,
 * type and code) is coming: unless the QP is in ERROR already or has a
 * cause, every completion flushed from its move to ERROR on carries it.
 * Call it before the first completion in error the cause leads to.  Any
 * context; takes the QP's three locks.
 */
void rsw_qp_term_cause(struct rsw_qp *qp, u32 vendor_err);
/* The cqe.vendor_err of a Terminate cause. */
static inline u32 rsw_term_vendor_err(const struct rsw_term_cause *c)
{
	return RDMAP_SW_CQE_TERM_VALID |
	       c->layer << RDMAP_SW_CQE_TERM_LAYER_SHIFT |
	       c->etype << RDMAP_SW_CQE_TERM_ETYPE_SHIFT |
	       c->ecode << RDMAP_SW_CQE_TERM_ECODE_SHIFT;
}

/*
 * The CM attaches stream @s (stream.c) to @qp, which moves from IDLE to RTS
 * with IRD/ORD @ird/@ord.  -EINVAL if @qp is not IDLE, has a stream or is
 * being destroyed.  Any context.
 */
struct rsw_stream;
int rsw_qp_attach_stream(struct rsw_qp *qp, struct rsw_stream *s, u32 ird,
			 u32 ord);
/*
 * The attached stream is over (QP in ERROR, its work flushed or completed,
 * socket released) and takes, places and completes no more: from now on
 * the QP may go back to RESET.  The stream still drops its reference with
 * rsw_qp_put() afterwards.  Any context; takes the QP locks.
 */
void rsw_qp_stream_done(struct rsw_qp *qp);
/*
 * Execute local operation @sqe (REG_MR, LOCAL_INV, BIND_MW) taken from
 * @qp's SQ by rsw_qp_sq_take() (ring.c): its completion status.  Process
 * context, no QP lock held; may sleep (a LOCAL_INV waits out the TX
 * pieces of the MR, rsw_mr_invalidate_local()).
 */
u8 rsw_sq_exec_local(struct rsw_qp *qp, const struct rdmap_sw_sqe *sqe);
/*
 * The pure transition table: 0 and *@next if moving from @from to @to is
 * legal, else -EINVAL.  Any context.
 */
int rsw_qp_transition(enum rsw_qp_state from, enum ib_qp_state to,
		      enum rsw_qp_state *next);
const char *rsw_qp_state_name(enum rsw_qp_state s);
#if IS_ENABLED(CONFIG_KUNIT)
/*
 * Turn a fresh kernel QP (nothing posted, no stream) into one with user
 * QP rings, unmapped: the test writes entries and ctrl.tail as a process
 * would and drives the same take/validate code.  Process context.
 */
int rsw_qp_user_layout(struct ib_qp *ibqp);
#endif

/*
 * ring.c - the rings of work queues and shared receive queues: storage,
 * indices, the user-ring protocol of the ABI (tail, head, busy flag,
 * validation of the kernel's copy of a user entry), and taking, finishing,
 * retiring and flushing entries (layouts in qp.h, accessors in ring.h,
 * lifetime and locks at the top of ring.c).  Locks, all irqsave, in the
 * QP's order (qp.c group): rsw_qp.sq.lock -> rsw_qp.rq.lock ->
 * rsw_srq.lock; a queue's lock -> rsw_cq.prod_lock.  Nothing here calls
 * rsw_qp_set_error() or an event handler with one of them held.
 */
struct rsw_sq_op;
/* The row of ABI opcode @opcode, NULL outside the table.  Any context. */
const struct rsw_sq_op *rsw_sq_op(u32 opcode);
/* The ABI opcode of @ib, -EINVAL if the SQ has none.  Any context. */
int rsw_sq_opcode(enum ib_wr_opcode ib);
/*
 * create_qp: set up @wq with room for @wr entries (rounded up to a power
 * of two) of @wqe_size bytes and @sge SGEs each, completing to @cq, its
 * lock in lockdep class @key; a user QP's (@user) ring gets the control
 * page and is charged to the process.  On failure nothing is left to
 * free; else rsw_wq_free() (destroy_qp, or a create failing later) frees
 * it.  Process context, may sleep; no lock held.
 */
int rsw_wq_alloc(struct rsw_wq *wq, u32 wr, u32 sge, size_t wqe_size,
		 struct ib_cq *cq, struct lock_class_key *key, bool user);
void rsw_wq_free(struct rsw_wq *wq);
/*
 * A new buffer for @wq's ring (size and wqe_size set), with the control
 * page if @user; the caller installs it (KUnit: rsw_qp_user_layout()).
 * Process context, may sleep.
 */
int rsw_wq_alloc_buf(struct rsw_wq *wq, bool user);
/*
 * create_srq: the buffer of @srq's ring (size set), with the control page
 * if @user (a user SRQ, charged to the process); rsw_srq_free_buf()
 * frees it, or removes its mapping, which owns it once the SRQ is mapped.
 * Process context, may sleep.
 */
int rsw_srq_alloc_buf(struct rsw_srq *srq, bool user);
void rsw_srq_free_buf(struct rsw_srq *srq);
/*
 * modify_srq(IB_SRQ_MAX_WR), srq->modify_mutex held: prepare @new (from
 * rsw_srq_alloc_buf(), size and mask set) with the posted entries, up to
 * the tail answered in *@copied, outside srq->lock; then switch @srq to
 * it (a user SRQ's already mapped), copying what was posted since: @new
 * then holds the ring it replaced, for rsw_srq_free_buf().  -EINVAL,
 * nothing changed, if the entries do not fit, a user SRQ's tail is
 * refused or moved since the preparation.  Both take srq->lock.
 */
int rsw_srq_prepare_ring(struct rsw_srq *srq, struct rsw_srq *new,
			 u32 *copied);
int rsw_srq_switch_ring(struct rsw_srq *srq, struct rsw_srq *new, u32 copied);
/*
 * Copy an ib_sge list of @num_sge (at most @max_sge) into @dst and add up
 * its *@length (at most RSW_MAX_MSG_SIZE); -EINVAL if it does not pass.
 * For the post paths of qp.c and srq.c.  Any context, no lock needed.
 */
int rsw_wqe_sges(struct rdmap_sw_sge *dst, const struct ib_sge *src,
		 int num_sge, u32 max_sge, u32 *length);
/*
 * The doorbell flag of a user SQ (ABI): 1 while the kernel drains the
 * queue, so that the process need not ring.  Any context, sq.lock held.
 */
void rsw_wq_user_busy(struct rsw_wq *wq, u32 busy);
/*
 * Complete every posted, not yet taken entry of @qp's queue @wq with
 * FLUSH_ERR (a user queue: all the process posted up to its last good
 * tail) and retire what is ready; taken entries stay with their engine.
 * For the post paths and doorbells of a QP in ERROR and the move to
 * ERROR.  Any context, wq->lock held; pushes to the CQ.
 */
void rsw_wq_flush(struct rsw_qp *qp, struct rsw_wq *wq);
/*
 * Forget every entry of @wq, which has none taken (head == next): the
 * move from ERROR to RESET.  A user queue restarts at the process's tail,
 * busy 0.  Any context, wq->lock held.
 */
void rsw_wq_reset(struct rsw_wq *wq);
/*
 * @qp has an SRQ, is in ERROR since qp->last_wqe_due was set, and every
 * receive it took is retired: raise IB_EVENT_QP_LAST_WQE_REACHED, once.
 * Any context, no QP lock held (takes rq.lock; calls the handler with
 * none).
 */
void rsw_qp_last_wqe(struct rsw_qp *qp);

/*
 * The engines' entry points: TX and RX take and complete work requests
 * here, not in qp.c (the names say what they act on, a QP's queues).
 *
 * TX engine (runs only while a stream is attached, i.e. in RTS): take the
 * next send WQE.  RSW_SQ_WIRE: *@sqe is a private copy of it, ticket *@idx,
 * and the caller must finish it with rsw_qp_sq_complete() (also when the
 * stream dies: with RDMAP_SW_WC_WR_FLUSH_ERR).  RSW_SQ_LOCAL: a REG_MR,
 * LOCAL_INV or BIND_MW was executed and completed here.
 * RSW_SQ_FENCED_LOCAL: such an operation with RDMAP_SW_SQE_FENCE, copied
 * and ticketed like a wire WQE, not run: the caller runs it with
 * rsw_qp_sq_local() once none of its Reads and Atomics is outstanding
 * (or flushes it).  RSW_SQ_EMPTY: nothing posted, or the QP is in ERROR /
 * being destroyed.  Fences against outstanding Reads are the caller's to
 * honour (RDMAP_SW_SQE_FENCE) before it takes the next WQE.  The TX
 * engine's context: process, no QP lock held; takes sq.lock, and runs a
 * local operation with none (it may sleep: a LOCAL_INV,
 * rsw_sq_exec_local()).
 */
enum rsw_sq_take rsw_qp_sq_take(struct rsw_qp *qp, struct rdmap_sw_sqe *sqe,
				u32 *idx);
void rsw_qp_sq_local(struct rsw_qp *qp, const struct rdmap_sw_sqe *sqe,
		     u32 idx);
/*
 * How many WQEs the SQ holds not taken yet: a hint for coalescing and the
 * doorbell linger, which a user may falsify (its ring is its own); a wrong
 * answer costs a push or a work item's run.  Any context, no lock.
 */
u32 rsw_qp_sq_pending(struct rsw_qp *qp);
/*
 * The QP leaves RTS for CLOSING (an orderly close): a user SQ accepts the
 * entries its process posted so far, and from now on takes only those
 * (the process's later entries are flushed at the stream's end), so a
 * process that goes on posting cannot extend the close.  A bad tail here
 * fails the take after the last good entry (the QP to ERROR).  All three
 * QP locks held.
 */
void rsw_qp_sq_close(struct rsw_qp *qp);
/*
 * Every send WQE the SQ accepted was taken (in CLOSING: nothing more for
 * the close to send).  Process context or any, takes sq.lock.
 */
bool rsw_qp_sq_taken_all(struct rsw_qp *qp);
/*
 * Doorbell linger on a user SQ in RTS: its busy flag stays 1 when the SQ
 * runs empty, so the process posts without ringing and the stream must
 * come back for the entries (true: lingering; false: a kernel SQ or not
 * in RTS).  Off: the flag drops to 0 by the ABI's protocol; true if an
 * entry came meanwhile, which the caller must have TX take.  Any context,
 * takes sq.lock, never sleeps.
 */
bool rsw_qp_sq_linger_on(struct rsw_qp *qp);
bool rsw_qp_sq_linger_off(struct rsw_qp *qp);
/*
 * Finish taken send WQE @idx with @status (enum rdmap_sw_cqe_status) and
 * @byte_len, in any order: completions reach the CQ in posting order (a
 * later WQE waits for earlier taken ones).  Anything but success, or a
 * completion lost to a full CQ, moves the QP to ERROR.  Any context (TX,
 * or RX for a Read Response), no QP lock held; takes sq.lock and the
 * CQ's, never sleeps.
 */
void rsw_qp_sq_complete(struct rsw_qp *qp, u32 idx, u8 status, u32 byte_len);
/*
 * RX engine: take the next receive WQE for an incoming Send (copy in
 * *@rqe, ticket *@idx); false if none is posted (RFC 5040: the stream then
 * gets a Terminate) or the QP is in ERROR.  Finish it with
 * rsw_qp_rq_complete(); same ordering and error rules as the SQ.
 * On a user QP both takes read the process's ring and validate the copy
 * first: a bad entry or ring index completes with an error, moves the QP
 * to ERROR and the take reports nothing (RSW_SQ_EMPTY / false).  A QP with
 * an SRQ takes the SRQ's next entry (and may raise its limit event).  Any
 * context (the socket's data-ready callback in softirq, or the stream's
 * work), no QP lock held; takes rq.lock (then rsw_srq.lock; completing:
 * the CQ's), never sleeps.  Event handlers are called with no lock held.
 */
bool rsw_qp_rq_take(struct rsw_qp *qp, struct rdmap_sw_rqe *rqe, u32 *idx);
void rsw_qp_rq_complete(struct rsw_qp *qp, u32 idx,
			const struct rsw_rq_result *res);

/*
 * srq.c - shared receive queues' verbs (object in qp.h, ring ownership in
 * the user ABI, the ring and its take in ring.c).  The verbs run in
 * process context (create and destroy may sleep); post_srq_recv in any
 * context.  rsw_srq.lock is irqsave and nests inside rsw_qp.rq.lock.
 */
int rsw_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		   struct ib_udata *udata);
int rsw_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		   enum ib_srq_attr_mask mask, struct ib_udata *udata);
int rsw_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int rsw_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
int rsw_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		      const struct ib_recv_wr **bad_wr);
#if IS_ENABLED(CONFIG_KUNIT)
/*
 * Give a fresh kernel SRQ (nothing posted) the layout of a user SRQ
 * (control page, process-owned tail), unmapped: KUnit plays the process.
 * Process context.
 */
int rsw_srq_user_layout(struct ib_srq *ibsrq);
/* The SRQ's ring entry @n (KUnit writes user-style entries there). */
struct rdmap_sw_rqe *rsw_srq_entry(struct ib_srq *ibsrq, u32 n);
/* The SRQ's control page, NULL for a kernel SRQ. */
struct rdmap_sw_wq_ctrl *rsw_srq_uctrl(struct ib_srq *ibsrq);
/*
 * A resize to @size entries done step by step, calling @during (if set)
 * between the copy outside srq->lock and the switch.
 */
int rsw_srq_resize_steps(struct ib_srq *ibsrq, u32 size,
			 void (*during)(struct ib_srq *ibsrq));
#endif

/*
 * tx.c - the transmit engine of one stream in full operation: send WQEs,
 * Read Responses and Terminates as MPA FPDUs handed to a sink (state,
 * sink contract and message types in tx.h).  No locks, no allocation,
 * never sleeps unless the sink does; the caller serialises each rsw_tx and
 * the sink runs in its context.  Return values of the emitting calls: 0
 * (all of it taken by the sink), -EAGAIN (sink full: the rest goes out at
 * the next rsw_tx_process()), -EBUSY (another message is in progress),
 * -EFAULT (its memory failed a check mid-message: the message abandoned;
 * its WQE, if it has one (not a Read Response), completed LOC_PROT_ERR
 * after the QP got the cause of the caller's Terminate, RDMAP Local
 * Catastrophic Error; that Terminate may follow
 * unless the sink holds part of an FPDU), or the sink's own negative
 * errno.
 */
/*
 * Start @tx for @pd of @rsw: MULPDU from @cfg's MSS (rsw_tx_set_mss()'s
 * floor applies) and max_ulpdu, MSNs at 1.  0, or -EINVAL for a max_ulpdu
 * with no room for a header or a bad ORD.
 */
int rsw_tx_init(struct rsw_tx *tx, const struct rsw_tx_config *cfg,
		struct rsw_device *rsw, struct ib_pd *pd,
		const struct rsw_tx_sink_ops *sink, void *ctx);
/*
 * Size the FPDUs described from now on for TCP's @mss (below
 * RSW_TX_MSS_MIN, whole multiples of it).  The caller serialises it with
 * the engine, and calls it only while its sink holds no FPDU sent in part
 * (which must be described again with the same length).
 */
void rsw_tx_set_mss(struct rsw_tx *tx, u32 mss);
/*
 * Take up to @budget WQEs of @qp (rsw_qp_sq_take) after finishing the
 * message in progress, and emit them.  Sends and Writes complete (through
 * rsw_qp_sq_complete) once their last FPDU was taken; a Read Request stays
 * taken until rsw_tx_read_done().  A WQE that cannot be made (SGEs failing
 * the lkey check, a bad length or shape, a Read or Atomic with ORD 0)
 * completes in error before anything is sent and stops the run with
 * -EPROTO (see rsw_tx_wqe()).  A WQE with RDMAP_SW_SQE_FENCE waits for
 * every outstanding Read, a Read for a free ORD slot (cfg.ord).  Returns
 * the WQEs taken (>= 0) or a negative value as above.
 */
int rsw_tx_process(struct rsw_tx *tx, struct rsw_qp *qp, unsigned int budget);
/*
 * Emit only the next FPDU of the message in progress (a batch of one), so
 * that a stream that must stop mid-message (its Terminate) first finishes
 * the FPDU its sink took in part (tx.h); the caller then abandons the
 * message (rsw_tx_abort()).  Should that FPDU end the message, the message
 * finishes as usual (a Send or Write completes on @qp; a Read Request is
 * recorded outstanding and flushed with the rest); a Write with Immediate
 * stays in progress, its Immediate unsent, and the abort flushes it.  0
 * once TCP took all of the FPDU (or no message is in progress), -EAGAIN if
 * the sink is full, -EFAULT if its memory failed a check (nothing sent,
 * the message abandoned as above), or the sink's error.
 */
int rsw_tx_next_fpdu(struct rsw_tx *tx, struct rsw_qp *qp);
/*
 * Emit one WQE copy with ticket @idx now (rsw_tx_process()'s step; @qp
 * NULL: complete nothing, for KUnit).  -EPROTO: refused before sending
 * (completed with its error status); the peer must hear of it: the
 * caller sends a Terminate with no headers in its place (RFC 5040
 * section 7.1 rule 1, RFC 7306 section 8.1 rule 1).
 */
int rsw_tx_wqe(struct rsw_tx *tx, struct rsw_qp *qp,
	       const struct rdmap_sw_sqe *sqe, u32 idx);
/*
 * Answer an inbound Read Request.  The source is checked with
 * IB_ACCESS_REMOTE_READ first (zero length: not checked): -EACCES and the
 * RFC 5040 section 7 reason in *@term, nothing sent; the caller sends the
 * Terminate.  An Atomic Request (@rr->atomic) is executed here, on a
 * target checked with IB_ACCESS_REMOTE_ATOMIC, and answered with its
 * Atomic Response; refused, *@term asks for @rr->ddp in the Terminate.
 */
int rsw_tx_read_response(struct rsw_tx *tx, const struct rsw_tx_rresp *rr,
			 struct rsw_rx_term *term);
/* Send Terminate @t; rsw_tx_term_from_rx() fills it from a stopped parser. */
int rsw_tx_terminate(struct rsw_tx *tx, const struct rsw_tx_term *t);
void rsw_tx_term_from_rx(struct rsw_tx_term *t, const struct rsw_rx *rx);
/*
 * RX saw the last Read Response segment: the oldest outstanding Read
 * Request's ticket in *@idx (Read Responses come in request order); the
 * caller completes it with rsw_qp_sq_complete().  false if none.
 */
bool rsw_tx_read_done(struct rsw_tx *tx, u32 *idx);
/* The oldest outstanding Read Request (what a Read Response answers). */
const struct rsw_tx_rd *rsw_tx_read_oldest(const struct rsw_tx *tx);
u32 rsw_tx_reads_outstanding(const struct rsw_tx *tx);
/* The stream died: flush the message in progress and outstanding Reads. */
void rsw_tx_abort(struct rsw_tx *tx, struct rsw_qp *qp);

/*
 * tx_sock.c - the socket sink of the transmit engine (tx.h): batches go
 * out with one tcp_sendmsg_locked() each, MSG_DONTWAIT.  The engine's user
 * owns the socket (lock_sock()) across each run of the engine; process
 * context; serialised with its rsw_tx.
 */
extern const struct rsw_tx_sink_ops rsw_tx_sock_ops;
/* @ts as the sink context of rsw_tx_init() for connected TCP @sock. */
void rsw_tx_sock_init(struct rsw_tx_sock *ts, struct socket *sock);
u32 rsw_tx_sock_plan(u32 fill, u32 mss, const u32 *len, unsigned int n,
		     bool cont);

/*
 * stream.c - a QP's connection in full operation (ops in stream.h, model
 * at the top of stream.c).  Execution contexts:
 *  - RX: the socket's data-ready callback (softirq, socket spinlock held;
 *    or release_sock() in the work item): parses, places, completes
 *    (in softirq it calls the CQ's handler too, once out of the parser;
 *    else the CQ's work does, cq.c), never sleeps, never sends.
 *  - TX, Terminates, phase changes: one work item per stream on
 *    rsw_stream_wq, with the socket locked (lock_sock()); upcalls and
 *    waits with it released.
 * Everything below may be called from any context unless noted, and never
 * sleeps unless noted.
 */
int rsw_stream_init(void);
void rsw_stream_exit(void);
/*
 * Attach connected TCP @sock to @qp (in IDLE, not destroyed) with the
 * negotiated @conn: the QP moves to RTS with conn's IRD/ORD.  @initiator:
 * this side sent the MPA Request (with conn->p2p it sends the
 * ready-to-receive message first; a responder sends nothing before it has
 * received an FPDU).  The stream takes a QP reference and owns @sock from
 * now on, also when this fails (-EINVAL: QP not IDLE or dead; -ENOMEM;
 * -EOPNOTSUPP: Markers; the socket is then closed with a reset).  Nothing
 * runs until rsw_stream_start(), which must follow every successful
 * attach: an IDLE stream does not even end for a dying namespace, whose
 * exit waits for it.  Process context, may sleep.
 */
int rsw_stream_attach(struct rsw_qp *qp, struct socket *sock,
		      const struct rsw_mpa_conn *conn, bool initiator,
		      const struct rsw_stream_ops *ops, void *ctx);
/* Let the attached stream of @qp run (after the ULP heard of it). */
void rsw_stream_start(struct rsw_qp *qp);
/* Something changed (WQE posted, QP state, socket): run the work. */
void rsw_stream_kick(struct rsw_stream *s);
/*
 * A user doorbell found @s's send queue idle: run the TX engine here
 * unless the work owns the socket (then, or if the stream is not in full
 * operation, queue the work), and start the doorbell linger unless a
 * recent one found too little (stream.c: the busy flag stays 1 and a soft
 * hrtimer looks at the SQ again).  The caller holds a reference to @s's
 * QP.  Process context (a system call), may sleep briefly for the socket
 * lock, once; runs no completion handler (see stream.c).
 */
void rsw_stream_tx_direct(struct rsw_stream *s);
/* A copy of @qp's stream counters; -ENOTCONN if none was attached. */
int rsw_stream_stats(struct rsw_qp *qp, struct rsw_stream_stats *st);
/* What rdma res shows of a stream (res.c): a copy, taken at one time. */
struct rsw_stream_snap {
	struct rsw_mpa_conn conn;	/* as negotiated */
	bool initiator;
	u32 qpn;
	/* The rest only for a viewer in the stream's namespace (live set). */
	bool live;
	bool rtr_pending;		/* the RTR exchange is not over */
	const char *phase;		/* idle, run, linger, done */
	u32 tcp_queued;			/* octets in TCP not yet acknowledged */
};

/*
 * A snapshot of @qp's stream; -ENOTCONN if none was attached.  The
 * socket-level fields (snap->live) only if @viewer, the namespace of
 * whoever asks (NULL: unknown), is the stream's.  The caller keeps @qp
 * from destroy_qp.  Takes no socket lock: the live fields are read once
 * each (READ_ONCE), as /proc/net/tcp does.  Any context.
 */
int rsw_stream_snapshot(struct rsw_qp *qp, const struct net *viewer,
			struct rsw_stream_snap *snap);
/*
 * A snapshot of the stream of @rsw in @net whose socket joins @src to
 * @dst; -ENOENT if none has.  @viewer as for rsw_stream_snapshot().
 * Matched by the ends saved at attach under the stream list's lock; only
 * the match is pinned.  Process context (the list lock is taken with BHs
 * off); no socket lock.
 */
int rsw_stream_snapshot_addr(struct rsw_device *rsw, const struct net *net,
			     const struct sockaddr *src,
			     const struct sockaddr *dst,
			     const struct net *viewer,
			     struct rsw_stream_snap *snap);
/*
 * destroy_qp, after the last QP reference went (the stream has ended):
 * wait for the work and for the rdma res snapshots that pinned it
 * (stream.c), then free the stream.  Process context, may sleep.
 */
void rsw_stream_free(struct rsw_qp *qp);
/*
 * Namespace @net is dying (pernet .pre_exit): end its streams abortively
 * and wait until they have released their sockets.  May sleep.
 */
void rsw_stream_net_exit(struct net *net);
/*
 * @rsw's netdev is unregistering (RTNL held, rsw->netdev_gone set): end
 * its streams abortively, QPs to ERROR and flushed, without waiting; an
 * attach from now on is refused (-ENETDOWN).  Process context.
 */
void rsw_stream_dev_gone(struct rsw_device *rsw);

/*
 * iw.c - the iw_cm provider ops over cm.c and stream.c (event orders and
 * references at the top of iw.c), and the address notifiers that keep
 * wildcard listeners on their netdev's addresses.  init: process context;
 * exit: after every device is gone.
 */
extern const struct ib_device_ops rsw_iw_ops;
int rsw_iw_init(void);
void rsw_iw_exit(void);

/*
 * cm.c - connection endpoints: kernel TCP sockets and the MPA exchange
 * beneath the iw_cm provider (types, callbacks and the iw_cm op mapping in
 * cm.h; lifetime, locks and states at the top of cm.c).  Process context,
 * may sleep; never called with a spinlock held.  Callbacks come from the
 * CM workqueue.  rsw_cm_destroy() waits for the cep's work and callbacks.
 */
int rsw_cm_init(void);
void rsw_cm_exit(void);
struct rsw_cep *rsw_cm_listen(const struct rsw_cm_args *args);
struct rsw_cep *rsw_cm_connect(const struct rsw_cm_args *args);
int rsw_cm_accept(struct rsw_cep *cep, const struct rsw_mpa_params *lp,
		  void *ctx);
int rsw_cm_reject(struct rsw_cep *cep, const void *pd, u8 pd_len);
void rsw_cm_destroy(struct rsw_cep *cep);
/* Negotiated outcome; -ENOTCONN unless connected. */
int rsw_cm_conn(struct rsw_cep *cep, struct rsw_mpa_conn *conn);
int rsw_cm_local_addr(struct rsw_cep *cep, struct sockaddr_storage *ss);
int rsw_cm_peer_addr(struct rsw_cep *cep, struct sockaddr_storage *ss);
/* Hand a connected cep's socket (callbacks restored) to the QP. */
struct socket *rsw_cm_take_socket(struct rsw_cep *cep);
void rsw_cm_socket_placed(struct rsw_cep *cep);
const struct rsw_cm_listen_stats *rsw_cm_listen_stats(struct rsw_cep *l);
/* CEPs alive module-wide (leak checks) and state names (debug). */
int rsw_cm_live(void);
/*
 * Namespace @net is dying (pernet .pre_exit): close its listeners, fail
 * its handshakes, and wait until no cep has a socket there.  May sleep.
 */
void rsw_cm_net_exit(struct net *net);
const char *rsw_cep_state_name(unsigned int s);

/*
 * stats.c - counter sets and the hw_stats ops (lifetime at the top of
 * stats.c).  Any context but alloc (process context, may sleep).
 */
extern const struct ib_device_ops rsw_stats_ops;
/* The hw_stats descriptors: counter i is rsw_stat_descs[i - 1]. */
extern const struct rdma_stat_desc rsw_stat_descs[RSW_STAT_SHOWN];
extern const struct rsw_rx_err_row rsw_rx_err_rows[];
extern const unsigned int rsw_rx_err_nrows;
/* A set with one reference, or NULL. */
struct rsw_stats *rsw_stats_alloc(void);
/* Another reference on @st (NULL: none); returns @st. */
struct rsw_stats *rsw_stats_get(struct rsw_stats *st);
void rsw_stats_put(struct rsw_stats *st);
/* The sum of counter @i over every CPU. */
u64 rsw_stats_read(struct rsw_stats *st, enum rsw_stat i);
/* The rx_err_* counter of Terminate cause @c; NONE if the RFCs lack it. */
enum rsw_stat rsw_stat_rx_err(const struct rsw_term_cause *c);
/* The Terminates-by-layer counter of @layer, sent or (@rx) received. */
enum rsw_stat rsw_stat_term_layer(u8 layer, bool rx);
/* The RTR counter of RSW_MPA_RTR_* type @rtr, sent or (@rx) received. */
enum rsw_stat rsw_stat_rtr(u8 rtr, bool rx);
/*
 * Per-QP counters (rdma statistic qp).  Process context, may sleep.
 * init/destroy: the device's table, at allocation and dealloc_driver.
 * qp_gone: destroy_qp, once nothing counts for @qp: drops a binding
 * ib_core left (it unbinds first; this does not rely on it).
 */
void rsw_counters_init(struct rsw_device *rsw);
void rsw_counters_destroy(struct rsw_device *rsw);
void rsw_counter_qp_gone(struct rsw_qp *qp);
/*
 * Bound QPs per counter: its `rdma statistic qp show` entry (every
 * counter and every QPN) must fit one netlink message (stats_kunit.c);
 * ib_core's dump would repeat an entry that does not, for ever.
 */
#define RSW_COUNTER_MAX_QPS	12

#endif /* RDMAP_SW_INTERNAL_H */
