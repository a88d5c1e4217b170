/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause */
/*
 * rdmap_sw user ABI: the contract between rdmap_sw.ko and its rdma-core
 * provider.  Both include this file; there is no second copy.
 *
 * Rules: fixed-width __u types only, explicit padding, every struct a
 * multiple of 8 bytes, no kernel types.  Any incompatible change adds a
 * new ABI version (below); a structure only ever grows at its end.  So a
 * structure's size is no version's length: each version has a fixed
 * length (the end of its last field, RDMAP_SW_*_V<n>_LEN), a receiver
 * requires only the length of the oldest version it could choose and
 * reads no further than the fields of the versions it speaks.
 */
#ifndef RDMAP_SW_ABI_H
#define RDMAP_SW_ABI_H

#include <linux/types.h>

/*
 * ABI versions.  Each names the whole contract of this file:
 *   1  the rings and responses below; alloc_ucontext takes no request data
 *      and answers dev_id and abi_version (1).
 *   2  as 1, and alloc_ucontext negotiates: the provider sends the range
 *      of versions it speaks (struct rdmap_sw_ureq_alloc_ctx), the module
 *      answers the highest version both speak and its own range (the
 *      whole struct rdmap_sw_uresp_alloc_ctx).
 * A module speaks RDMAP_SW_ABI_VERSION_MIN..RDMAP_SW_ABI_VERSION_MAX.
 *
 * The device's uverbs ABI version (sysfs abi_version, which libibverbs
 * checks against a provider's match_min/max_abi_version before it calls
 * the provider) is the oldest version the module speaks, so a provider
 * whose newest version is older than that is refused by libibverbs with
 * its own message; every other pairing meets in alloc_ucontext:
 *   - no request data (a version 1 provider): the module answers version 1
 *     as version 1 did (the first 8 bytes of the response; less room is
 *     EINVAL) if it still speaks it, else EPROTO;
 *   - a request: at least RDMAP_SW_UREQ_ALLOC_CTX_V2_LEN bytes, with
 *     1 <= abi_min <= abi_max, else EINVAL; bytes past the fields of the
 *     versions the module speaks belong to newer versions, which it will
 *     not choose, and are ignored whatever they hold; no version in
 *     common is EPROTO.  The answer is as long as the chosen version's
 *     negotiated answer (RDMAP_SW_URESP_ALLOC_CTX_V2_LEN for 1 and 2), and
 *     the response buffer must hold it, else EINVAL.  The chosen version
 *     is in the answer.
 *   - a module that speaks only version 1 (before the negotiation)
 *     refuses any non-zero request data with EINVAL and has no sysfs
 *     RDMAP_SW_SYSFS_ABI (below): a provider that finds none asks without
 *     request data, if it speaks version 1, and finds abi_min and abi_max
 *     0 in the answer; a provider that finds one and no version in common
 *     does not ask at all.
 * A failed alloc_ucontext writes no answer.  (Not EPROTONOSUPPORT: uverbs
 * reserves that errno for a method it lacks and warns when a driver
 * returns it.)
 */
#define RDMAP_SW_ABI_VERSION_MIN 1
#define RDMAP_SW_ABI_VERSION_MAX 2
/* The first version with struct rdmap_sw_ureq_alloc_ctx. */
#define RDMAP_SW_ABI_VERSION_NEGOTIATE 2

/*
 * Every rdmap_sw device shows this string in its sysfs attribute hca_type
 * (/sys/class/infiniband/<dev>/hca_type); the provider claims a device by
 * it, whatever name the device was given.
 */
#define RDMAP_SW_HCA_TYPE "rdmap_sw"

/*
 * A module that negotiates (speaks version 2 or later) says so before any
 * context is asked for: its devices have this sysfs attribute next to
 * hca_type, reading "MIN MAX\n", the versions it speaks.  A provider sends
 * request data only when it is there and the ranges meet, so no
 * alloc_ucontext of a working pairing fails (a failed GET_CONTEXT through
 * the ioctl path leaks a task reference in ib_core on 6.1 and 6.12).  No
 * attribute: a module from before the negotiation, version 1 only.
 */
#define RDMAP_SW_SYSFS_ABI "abi_versions"

/* Request of alloc_ucontext (IB_USER_VERBS_CMD_GET_CONTEXT), version 2 on. */
struct rdmap_sw_ureq_alloc_ctx {
	__u32 abi_min;		/* the versions the provider speaks */
	__u32 abi_max;
};

#define RDMAP_SW_UREQ_ALLOC_CTX_V2_LEN 8	/* up to abi_max */

/*
 * Response of alloc_ucontext.  A version 1 answer (no request) is its
 * first RDMAP_SW_URESP_ALLOC_CTX_V1_LEN bytes (dev_id, abi_version == 1);
 * a negotiated one as long as the chosen version's (see above).
 */
struct rdmap_sw_uresp_alloc_ctx {
	__u32 dev_id;
	__u32 abi_version;	/* the version this context speaks */
	__u32 abi_min;		/* the versions the module speaks */
	__u32 abi_max;
};

#define RDMAP_SW_URESP_ALLOC_CTX_V1_LEN 8	/* up to abi_version */
#define RDMAP_SW_URESP_ALLOC_CTX_V2_LEN 16	/* up to abi_max */

/* ===================== Completion queue ring (cq.c) ===================== */

/*
 * A CQ is one buffer: struct rdmap_sw_cq_ctrl at offset 0, followed by
 * ctrl.size entries of struct rdmap_sw_cqe (size is a power of two, fixed
 * for the life of the buffer; resizing replaces the buffer, see below).
 * Indices are free-running __u32 counters that wrap at 2^32; entry n lives
 * in slot n & ctrl.mask.
 *
 * Ownership.  The kernel is the only producer and writes only slots the
 * consumer has handed back (prod - cons < size): it fills an entry, stores
 * its seq = n with release semantics and then ctrl.prod = n + 1 with release
 * semantics.  The consumer owns ctrl.cons: entry n is ready once an acquire
 * load sees seq == n (or ctrl.prod past n); the consumer copies it out and
 * only then stores ctrl.cons = n + 1 with release semantics, which returns
 * the slot to the producer.  Until entry n is written its slot holds
 * seq == n - size, so a stale entry never looks ready.
 *
 * Notification.  ctrl.notify is the arm word: the consumer only raises it
 * (NONE -> SOLICITED -> NEXT), the producer clears it with an atomic
 * compare-and-exchange when a new entry satisfies it and then signals one
 * completion event.  Each side issues a full barrier between storing its
 * own word and loading the other's (producer: ctrl.prod then ctrl.notify;
 * consumer: ctrl.notify then ctrl.prod), so an entry published while the
 * consumer arms is either signalled or seen by the consumer.
 *
 * The producer reads ctrl.cons and ctrl.notify and nothing else from the
 * ring; it never trusts them for more than "is the ring full" and "is it
 * armed".
 *
 * Resizing (ibv_resize_cq, IB_USER_VERBS_CMD_RESIZE_CQ).  The kernel
 * answers struct rdmap_sw_uresp_resize_cq: a new buffer of resp.size
 * entries to mmap() at resp.mmap_offset.  The indices carry on: entry n
 * lives in slot n & (resp.size - 1) of the new buffer, and ctrl.cons and
 * ctrl.prod of the new buffer start where the old ones were.  The command
 * does, with the producer stopped: load the old ctrl.cons (acquire); refuse
 * with EINVAL if prod - cons exceeds the new size (pending entries would
 * not fit) or the old size (a bogus cons); copy the entries cons..prod-1
 * (seq == n each, flags and arm word with them) into the new buffer, whose
 * other slots hold seq == n - resp.size for the n they will carry next;
 * then switch every later entry to the new buffer.  No entry is lost,
 * doubled or reordered; a failed resize changes nothing.  The consumer
 * must not touch the old buffer between loading the last ctrl.cons it
 * stored and the switch: it polls, arms and resizes under one lock, calls
 * the command holding it, maps the new buffer, and only then drops the
 * lock (the old ctrl.cons it stored is the one the kernel loaded).  From
 * the command's return on the kernel never reads or writes the old buffer;
 * the consumer unmaps it when it likes (its pages stay valid until then).
 */

/* ctrl.notify */
enum rdmap_sw_cq_notify {
	RDMAP_SW_CQ_NOTIFY_NONE = 0,
	RDMAP_SW_CQ_NOTIFY_SOLICITED = 1,	/* solicited or failed entries */
	RDMAP_SW_CQ_NOTIFY_NEXT = 2,		/* any entry */
};

/* ctrl.flags, set by the producer, never cleared */
enum rdmap_sw_cq_flags {
	/* An entry was dropped because the ring was full (CQ overrun). */
	RDMAP_SW_CQ_F_OVERFLOW = 1 << 0,
};

struct rdmap_sw_cq_ctrl {
	/* Written by the producer only. */
	__u32 prod;
	__u32 flags;		/* enum rdmap_sw_cq_flags */
	__u32 size;
	__u32 mask;		/* size - 1 */
	__u32 reserved0[12];	/* the producer's 64-byte line */
	/* Written by the consumer; the producer only clears notify. */
	__u32 cons;
	__u32 notify;		/* enum rdmap_sw_cq_notify */
	__u32 reserved1[14];
};

/* cqe.opcode */
enum rdmap_sw_cqe_opcode {
	RDMAP_SW_WC_SEND = 0,
	RDMAP_SW_WC_RDMA_WRITE = 1,
	RDMAP_SW_WC_RDMA_READ = 2,
	RDMAP_SW_WC_COMP_SWAP = 3,
	RDMAP_SW_WC_FETCH_ADD = 4,
	RDMAP_SW_WC_MASKED_COMP_SWAP = 5,
	RDMAP_SW_WC_MASKED_FETCH_ADD = 6,
	RDMAP_SW_WC_LOCAL_INV = 7,
	RDMAP_SW_WC_REG_MR = 8,
	RDMAP_SW_WC_BIND_MW = 9,
	RDMAP_SW_WC_RECV = 10,
	RDMAP_SW_WC_RECV_RDMA_WITH_IMM = 11,
};

/* cqe.status */
enum rdmap_sw_cqe_status {
	RDMAP_SW_WC_SUCCESS = 0,
	RDMAP_SW_WC_LOC_LEN_ERR = 1,
	RDMAP_SW_WC_LOC_QP_OP_ERR = 2,
	RDMAP_SW_WC_LOC_PROT_ERR = 3,
	RDMAP_SW_WC_WR_FLUSH_ERR = 4,
	RDMAP_SW_WC_MW_BIND_ERR = 5,
	RDMAP_SW_WC_BAD_RESP_ERR = 6,
	RDMAP_SW_WC_LOC_ACCESS_ERR = 7,
	RDMAP_SW_WC_REM_INV_REQ_ERR = 8,
	RDMAP_SW_WC_REM_ACCESS_ERR = 9,
	RDMAP_SW_WC_REM_OP_ERR = 10,
	RDMAP_SW_WC_RESP_TIMEOUT_ERR = 11,
	RDMAP_SW_WC_REM_ABORT_ERR = 12,
	RDMAP_SW_WC_FATAL_ERR = 13,
	RDMAP_SW_WC_GENERAL_ERR = 14,
};

/* cqe.flags */
enum rdmap_sw_cqe_flags {
	/* Received with the Solicited Event bit. */
	RDMAP_SW_CQE_SOLICITED = 1 << 0,
	/* ex_data holds immediate data, in network byte order. */
	RDMAP_SW_CQE_WITH_IMM = 1 << 1,
	/* ex_data holds the STag a Send with Invalidate invalidated. */
	RDMAP_SW_CQE_WITH_INV = 1 << 2,
};

/*
 * cqe.vendor_err of a completion caused by a Terminate (sent or received,
 * or decided and then lost to a reset, e.g. when TCP held part of an FPDU):
 * RDMAP_SW_CQE_TERM_VALID and the first 16 bits of the RFC 5040 Terminate
 * Control field, i.e. layer, error type and error code (all three are 0
 * for an RDMAP Local Catastrophic Error); 0 otherwise.
 */
#define RDMAP_SW_CQE_TERM_LAYER_SHIFT 12
#define RDMAP_SW_CQE_TERM_ETYPE_SHIFT 8
#define RDMAP_SW_CQE_TERM_ECODE_SHIFT 0
#define RDMAP_SW_CQE_TERM_VALID (1U << 16)

struct rdmap_sw_cqe {
	__aligned_u64 wr_id;
	__u32 seq;		/* ownership word, see above */
	__u32 byte_len;
	__u32 qp_num;
	__u32 ex_data;		/* see RDMAP_SW_CQE_WITH_IMM / _WITH_INV */
	__u32 vendor_err;
	__u8 opcode;		/* enum rdmap_sw_cqe_opcode */
	__u8 status;		/* enum rdmap_sw_cqe_status */
	__u8 flags;		/* enum rdmap_sw_cqe_flags */
	__u8 reserved;
};

/* Response of resize_cq for a user CQ: the new ring, as create_cq's. */
struct rdmap_sw_uresp_resize_cq {
	__aligned_u64 mmap_offset;
	__aligned_u64 mmap_len;		/* ctrl + size entries, page aligned */
	__u32 size;			/* entries: the new ctrl.size */
	__u32 reserved;
};

/* =================== end of completion queue ring (cq.c) ================= */

/* ====================== Work queue entries (qp.c) ======================= */

/*
 * A send queue is a ring of struct rdmap_sw_sqe and a receive queue a ring
 * of struct rdmap_sw_rqe; each ring holds a power-of-two number of entries
 * of fixed size.  Kernel QPs keep the ring indices in the kernel; the
 * user-mapped rings of user QPs use these entries unchanged behind a
 * control block (struct rdmap_sw_wq_ctrl below).  The kernel copies an
 * entry before it validates and uses it.
 */
#define RDMAP_SW_MAX_SGE 16
/* Inline data replaces the SGE array, so it has exactly its size. */
#define RDMAP_SW_MAX_INLINE 256

/* sqe.opcode */
enum rdmap_sw_wr_opcode {
	RDMAP_SW_WR_SEND = 0,
	RDMAP_SW_WR_SEND_WITH_INV = 1,
	RDMAP_SW_WR_RDMA_WRITE = 2,
	RDMAP_SW_WR_RDMA_READ = 3,
	RDMAP_SW_WR_RDMA_READ_WITH_INV = 4,
	RDMAP_SW_WR_REG_MR = 5,		/* kernel QPs only: sqe.mr */
	RDMAP_SW_WR_LOCAL_INV = 6,
	/* RFC 7306: a Write, then Immediate Data with sqe.imm_data. */
	RDMAP_SW_WR_RDMA_WRITE_WITH_IMM = 7,
	/* RFC 7306 Atomic Requests: operands in sqe.atomic. */
	RDMAP_SW_WR_ATOMIC_CMP_AND_SWP = 8,
	RDMAP_SW_WR_ATOMIC_FETCH_AND_ADD = 9,
	RDMAP_SW_WR_MASKED_ATOMIC_CMP_AND_SWP = 10,
	RDMAP_SW_WR_MASKED_ATOMIC_FETCH_AND_ADD = 11,
	/* Bind a memory window (type 1 or 2): sqe.bind. */
	RDMAP_SW_WR_BIND_MW = 12,
};

/* sqe.flags */
enum rdmap_sw_sqe_flags {
	RDMAP_SW_SQE_SIGNALED = 1 << 0,	/* complete even on success */
	RDMAP_SW_SQE_SOLICITED = 1 << 1,	/* Send with Solicited Event */
	RDMAP_SW_SQE_FENCE = 1 << 2,	/* wait for earlier Reads */
	RDMAP_SW_SQE_INLINE = 1 << 3,	/* payload in inline_data */
};

struct rdmap_sw_sge {
	__aligned_u64 addr;
	__u32 length;
	__u32 lkey;
};

/*
 * Operands of an Atomic Request (the ib_atomic_wr/ibv_wr_atomic fields),
 * in host order.  @result is the local buffer of 8 bytes the Atomic
 * Response's Original Remote Data is placed in; it overlays sge[0] and
 * num_sge is 1.  The masks are used by the MASKED opcodes only.
 */
struct rdmap_sw_sqe_atomic {
	struct rdmap_sw_sge result;
	__aligned_u64 compare_add;
	__aligned_u64 swap;
	__aligned_u64 compare_add_mask;
	__aligned_u64 swap_mask;
};

/*
 * BIND_MW: bind the window whose STag index is that of @mw_rkey to
 * [@addr, @addr + @length) of the MR @mr_lkey with @access
 * (IB_ACCESS_* rights); the window's STag becomes @mw_rkey.
 */
struct rdmap_sw_sqe_bind {
	__aligned_u64 addr;
	__aligned_u64 length;
	__u32 mr_lkey;
	__u32 mw_rkey;
	__u32 access;
	__u32 reserved;
};

struct rdmap_sw_sqe {
	__aligned_u64 wr_id;
	__u8 opcode;		/* enum rdmap_sw_wr_opcode */
	__u8 num_sge;		/* entries of sge[] used; 0 if INLINE */
	__u16 flags;		/* enum rdmap_sw_sqe_flags */
	__u32 length;		/* payload bytes: sum of sge[] or inline */
	__u32 rstag;		/* Write, Read, Atomic: the peer's STag */
	union {
		/* SEND_WITH_INV: peer STag; READ_WITH_INV, LOCAL_INV: local */
		__u32 inv_stag;
		/* WRITE_WITH_IMM: as the verbs give it (network order) */
		__u32 imm_data;
	};
	__aligned_u64 raddr;	/* Write, Read, Atomic: the peer's address */
	__aligned_u64 mr;	/* REG_MR: kernel handle of the MR */
	__u32 reg_key;		/* REG_MR: the STag to register it under */
	__u32 reg_access;	/* REG_MR: IB_ACCESS_* rights */
	union {
		struct rdmap_sw_sge sge[RDMAP_SW_MAX_SGE];
		__u8 inline_data[RDMAP_SW_MAX_INLINE];
		struct rdmap_sw_sqe_atomic atomic;
		struct rdmap_sw_sqe_bind bind;
	};
};

struct rdmap_sw_rqe {
	__aligned_u64 wr_id;
	__u8 num_sge;
	__u8 reserved[3];
	__u32 length;		/* sum of sge[] lengths */
	struct rdmap_sw_sge sge[RDMAP_SW_MAX_SGE];
};

/*
 * User QPs.  Each queue of a user QP is one mapping: struct
 * rdmap_sw_wq_ctrl in the first RDMAP_SW_WQ_RING_OFFSET bytes, then the
 * ring of size entries (sqe or rqe), entry n in slot n & (size - 1).
 *
 * Ownership.  The process is the producer: it may write slot n only while
 * n - ctrl.head < size, fills it, then stores ctrl.tail = n + 1 with release
 * semantics.  The kernel is the consumer: it loads ctrl.tail with acquire
 * semantics, copies entry n out of the ring and validates the copy (opcode,
 * SGE count, lengths, inline size) before it uses it; a tail more than size
 * ahead, or an entry that fails validation, moves the QP to ERROR (only
 * that QP).  ctrl.head is the kernel's: entries before it are finished
 * and their slots are free again.  It is published before their CQEs
 * reach the CQ, so a process that polled an entry's completion may reuse
 * its slot at once.
 *
 * Doorbell (send queue only).  ctrl.busy is 1 while the kernel will come
 * for new entries by itself: while it drains the send queue, and for a
 * moment after, when it expects more (it then looks at the queue again
 * soon, by itself).  The kernel clears it when it finds the
 * queue empty and stops looking, issues a full barrier and looks at
 * ctrl.tail once more.  The process,
 * after storing ctrl.tail, issues a full barrier and loads ctrl.busy: only
 * if it is 0 does it ring the doorbell, a post_send command with no work
 * requests (ibv_cmd_post_send with an empty list).  A receive queue needs
 * no doorbell: receives are taken when a Send arrives.  Once the QP is in
 * ERROR the kernel keeps ctrl.busy at 0, so every post rings and is
 * flushed; a post_recv command with no work requests likewise flushes
 * receives posted after the QP went to ERROR.  From the move to SQD the
 * kernel takes only the send entries before the ctrl.tail it saw at that
 * move; later ones are flushed when the QP reaches ERROR
 * (Documentation/userspace.rst, "The send ring after SQD").
 *
 * User QPs cannot post IB_WR_REG_MR or IB_WR_LOCAL_INV (they name kernel
 * objects); such an entry fails validation.
 */
#define RDMAP_SW_WQ_RING_OFFSET 4096

struct rdmap_sw_wq_ctrl {
	/* Written by the process only. */
	__u32 tail;
	__u32 reserved0[15];		/* the producer's 64-byte line */
	/* Written by the kernel only. */
	__u32 head;
	__u32 busy;
	__u32 reserved1[14];
};

/* Response of create_cq for a user CQ: mmap() the ring at mmap_offset. */
struct rdmap_sw_uresp_create_cq {
	__aligned_u64 mmap_offset;
	__aligned_u64 mmap_len;		/* ctrl + size entries, page aligned */
	__u32 size;			/* entries: ctrl.size */
	__u32 reserved;
};

/* Response of create_qp for a user QP: one mapping per queue. */
struct rdmap_sw_uresp_create_qp {
	__aligned_u64 sq_offset;
	__aligned_u64 sq_len;
	__aligned_u64 rq_offset;
	__aligned_u64 rq_len;
	__u32 sq_size;			/* entries */
	__u32 rq_size;
	__u32 max_inline;
	__u32 reserved;
};

/* ==================== end of work queue entries (qp.c) =================== */

/* ===================== Shared receive queues (srq.c) ===================== */

/*
 * A user SRQ is one mapping laid out like a user QP's receive queue:
 * struct rdmap_sw_wq_ctrl in the first RDMAP_SW_WQ_RING_OFFSET bytes, then
 * the ring of size entries of struct rdmap_sw_rqe, entry n in slot
 * n & (size - 1).  Any number of QPs created with the SRQ take from it.
 *
 * Ownership.  As for a receive queue: the process may write slot n only
 * while n - ctrl.head < size, fills it, then stores ctrl.tail = n + 1 with
 * release semantics (a multi-threaded process serialises its posters).  No
 * doorbell exists: the kernel loads ctrl.tail (acquire) whenever a QP
 * needs a receive.
 *
 * Take-time copy.  When an untagged Send's first segment arrives on a QP
 * with the SRQ, that QP takes the entry at ctrl.head: the kernel copies the
 * whole entry out of the ring, advances ctrl.head past it (release) and
 * only then validates the copy.  So a slot is free again as soon as its
 * entry is taken, even though the receive completes later and QPs complete
 * in any order; ctrl.head says nothing about completions.  The rules for
 * the copy are those of a receive queue entry: num_sge <= the SRQ's
 * max_sge and length == the sum of the SGE lengths <= 2^31, else the
 * receive completes with LOC_QP_OP_ERR (num_sge) or LOC_LEN_ERR (length)
 * on the taking QP's receive CQ and that QP alone goes to ERROR; the SRQ
 * and the other QPs carry on.  A ctrl.tail more than size ahead of
 * ctrl.head, or behind a tail accepted before, is ignored (the kernel keeps
 * the last good tail) and fails the QP that was taking.
 *
 * A QP that goes to ERROR completes the receives it had taken with
 * WR_FLUSH_ERR (to its own receive CQ) and then gets
 * IBV_EVENT_QP_LAST_WQE_REACHED; entries it had not taken stay in the SRQ.
 * The SRQ limit (ibv_modify_srq IBV_SRQ_LIMIT) is checked at take time:
 * the take that leaves fewer than srq_limit entries posted disarms it and
 * raises IBV_EVENT_SRQ_LIMIT_REACHED once.
 *
 * Resizing (ibv_modify_srq with IBV_SRQ_MAX_WR).  modify_srq has no
 * response, so the process passes struct rdmap_sw_ureq_modify_srq with
 * the address of a struct rdmap_sw_uresp_resize_srq in its own memory;
 * without it (an older provider) a user SRQ's resize is refused with
 * EOPNOTSUPP.  The kernel allocates a new mapping of max_wr entries
 * (rounded up to a power of two; shrinking is allowed) and, under the
 * SRQ's lock, so that no QP takes meanwhile: loads the old ctrl.tail by
 * the rules above (a bad one refuses the resize with EINVAL), refuses with
 * EINVAL if more entries are posted (tail - head) than the new size holds,
 * copies the posted entries to the new ring at the same indices (entry n
 * in slot n & (size - 1)), sets the new ctrl.head and ctrl.tail to the
 * old values, and from then on takes from the new ring only.  It writes
 * the answer before it switches; a failed resize changes nothing.  The
 * process serialises the command with its posters (it holds the SRQ's
 * post lock across it), maps the new ring at the answer's offset and
 * posts there from its unchanged tail; entries it wrote to the old ring
 * after the command are never seen.  The old mapping stays valid until
 * the process unmaps it, but is dead.
 *
 * A QP created with an SRQ has no receive queue of its own: create_qp
 * answers rq_offset, rq_len and rq_size 0, and post_recv on it fails.
 */

/* Response of create_srq for a user SRQ: mmap() it at offset. */
struct rdmap_sw_uresp_create_srq {
	__aligned_u64 offset;
	__aligned_u64 len;		/* ctrl page + ring, page aligned */
	__u32 size;			/* entries, a power of two */
	__u32 max_sge;
};

/*
 * Driver data of modify_srq (optional): @response is the address of a
 * struct rdmap_sw_uresp_resize_srq the kernel fills on a successful
 * IBV_SRQ_MAX_WR resize of a user SRQ; 0 if the call resizes nothing.
 */
struct rdmap_sw_ureq_modify_srq {
	__aligned_u64 response;
};

/* The new mapping after a resize, laid out as create_srq's. */
struct rdmap_sw_uresp_resize_srq {
	__aligned_u64 offset;
	__aligned_u64 len;		/* ctrl page + ring, page aligned */
	__u32 size;			/* entries, a power of two */
	__u32 max_sge;
};

/* ================== end of shared receive queues (srq.c) ================= */

#endif /* RDMAP_SW_ABI_H */
