/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * rdmap_sw rdma-core provider: objects and the internal API index.
 *
 * Every provider object embeds its libibverbs counterpart as the first
 * member, so the to_rsw_*() helpers are plain container_of() conversions.
 * The kernel side of every command is rdmap_sw.ko; the wire format of the
 * driver-specific parts is include/uapi/rdma/rdmap_sw-abi.h (shared with
 * the kernel, not copied).
 */
#ifndef RDMAP_SW_PROVIDER_H
#define RDMAP_SW_PROVIDER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ccan/container_of.h>
#include <infiniband/driver.h>

#include <rdma/rdmap_sw-abi.h>
#include <kernel-abi/rdmap_sw-abi.h>

/*
 * Driver-specific command layouts (the core command plus our payload).
 * GET_CONTEXT sends the provider's ABI range (rdmap_sw.c), MODIFY_SRQ
 * where to write a resize's answer; GET_CONTEXT, CREATE_CQ, RESIZE_CQ,
 * CREATE_QP and CREATE_SRQ receive the rdmap_sw_uresp_* structure of the same name.
 */
DECLARE_DRV_CMD(rsw_alloc_context, IB_USER_VERBS_CMD_GET_CONTEXT,
		rdmap_sw_ureq_alloc_ctx, rdmap_sw_uresp_alloc_ctx);
DECLARE_DRV_CMD(rsw_cmd_create_cq, IB_USER_VERBS_CMD_CREATE_CQ,
		empty, rdmap_sw_uresp_create_cq);
DECLARE_DRV_CMD(rsw_cmd_create_cq_ex, IB_USER_VERBS_EX_CMD_CREATE_CQ,
		empty, rdmap_sw_uresp_create_cq);
DECLARE_DRV_CMD(rsw_cmd_create_qp, IB_USER_VERBS_CMD_CREATE_QP,
		empty, rdmap_sw_uresp_create_qp);
DECLARE_DRV_CMD(rsw_cmd_create_srq, IB_USER_VERBS_CMD_CREATE_SRQ,
		empty, rdmap_sw_uresp_create_srq);
DECLARE_DRV_CMD(rsw_cmd_resize_cq, IB_USER_VERBS_CMD_RESIZE_CQ,
		empty, rdmap_sw_uresp_resize_cq);
DECLARE_DRV_CMD(rsw_cmd_modify_srq, IB_USER_VERBS_CMD_MODIFY_SRQ,
		rdmap_sw_ureq_modify_srq, empty);

/*
 * The rings are shared with the kernel, which reads and writes their index
 * words concurrently: every access to one goes through these, with the
 * ordering the ABI header prescribes for it.
 */
static inline uint32_t rsw_load_acquire(const uint32_t *p)
{
	return atomic_load_explicit((_Atomic(uint32_t) *)p,
				    memory_order_acquire);
}

static inline uint32_t rsw_load_relaxed(const uint32_t *p)
{
	return atomic_load_explicit((_Atomic(uint32_t) *)p,
				    memory_order_relaxed);
}

static inline void rsw_store_release(uint32_t *p, uint32_t v)
{
	atomic_store_explicit((_Atomic(uint32_t) *)p, v, memory_order_release);
}

/* The "full barrier" of the ABI header's arm and doorbell rules. */
static inline void rsw_full_barrier(void)
{
	atomic_thread_fence(memory_order_seq_cst);
}

struct rsw_device {
	struct verbs_device ibv_dev;
};

struct rsw_context {
	struct verbs_context ibv_ctx;
	uint32_t dev_id;	/* kernel device index, from alloc_ucontext */
	uint32_t abi_version;	/* the user ABI version this context speaks */
};

struct rsw_pd {
	struct ibv_pd ibv_pd;
};

/*
 * A CQ: the kernel-owned ring mapped read-write.  The kernel produces, we
 * consume; cons is our copy of ctrl->cons (only we write it).  lock
 * serialises pollers, arming and resizing (which replaces map, ctrl, ring
 * and size) of the same CQ.
 */
struct rsw_cq {
	struct verbs_cq vcq;
	/*
	 * A mutex, not a spinlock: a resize holds it across its system call
	 * and mmap(), and other threads then sleep instead of spinning.
	 */
	pthread_mutex_t lock;
	/*
	 * 0, or why the CQ is lost (the kernel switched to a ring we could
	 * not map): polls and arms fail with it from then on.
	 */
	int err;
	void *map;
	size_t map_len;
	struct rdmap_sw_cq_ctrl *ctrl;
	struct rdmap_sw_cqe *ring;
	uint32_t size;		/* entries, a power of two */
	uint32_t cons;		/* next entry to take */
	bool overflow_seen;	/* RDMAP_SW_CQ_F_OVERFLOW already reported */
	/*
	 * Extended polling (ibv_start_poll .. ibv_end_poll), with lock held
	 * throughout: cur is the copy of the current entry, cur_wc its
	 * translation (the read_* callbacks return fields of it) and
	 * poll_start the cons value at start_poll.
	 */
	uint32_t poll_start;
	struct ibv_wc cur_wc;
};

/*
 * One work queue of a user QP: a mapping holding struct rdmap_sw_wq_ctrl
 * and, at RDMAP_SW_WQ_RING_OFFSET, the ring.  We produce (tail is our copy
 * of ctrl->tail), the kernel consumes and moves ctrl->head.  lock
 * serialises posters; it is never held across a system call.
 */
struct rsw_wq {
	pthread_spinlock_t lock;
	/*
	 * 0, or what posting fails with: EAGAIN while an SRQ resize runs its
	 * system call (the lock is not held across it; srq.c waits and posts
	 * again), the reason once the SRQ is lost (the kernel switched to a
	 * ring we could not map).
	 */
	int err;
	void *map;
	size_t map_len;
	struct rdmap_sw_wq_ctrl *ctrl;
	void *ring;		/* struct rdmap_sw_sqe[] or rdmap_sw_rqe[] */
	uint32_t size;		/* entries, a power of two; 0: no queue */
	uint32_t tail;		/* next entry to fill */
	uint32_t max_sge;
};

struct rsw_qp {
	struct verbs_qp vqp;
	struct rsw_wq sq;
	struct rsw_wq rq;
	uint32_t max_inline;
	bool sig_all;		/* every send request completes */
	/*
	 * Extended send API (ibv_wr_*), between wr_start and wr_complete or
	 * wr_abort, with sq.lock held: entries are built from sq.tail up to
	 * wr_tail and published together; wr_cur is the one being built,
	 * wr_err the first error (the whole batch is then dropped).
	 */
	uint32_t wr_tail;
	struct rdmap_sw_sqe *wr_cur;
	int wr_err;
};

/*
 * A shared receive queue: one mapping laid out like a QP's receive queue
 * (struct rdmap_sw_wq_ctrl, then the ring of struct rdmap_sw_rqe) and
 * posted to the same way; the kernel copies an entry out when a QP takes
 * it (ABI header, shared receive queues).
 */
struct rsw_srq {
	struct verbs_srq vsrq;
	struct rsw_wq rq;
	/*
	 * Held by a resize across its system call and mmap(); a poster that
	 * finds rq.err == EAGAIN sleeps on it until the resize is done.
	 */
	pthread_mutex_t resize_lock;
};

static inline struct rsw_device *to_rsw_device(struct ibv_device *ibdev)
{
	return container_of(ibdev, struct rsw_device, ibv_dev.device);
}

static inline struct rsw_context *to_rsw_context(struct ibv_context *ctx)
{
	return container_of(ctx, struct rsw_context, ibv_ctx.context);
}

static inline struct rsw_pd *to_rsw_pd(struct ibv_pd *pd)
{
	return container_of(pd, struct rsw_pd, ibv_pd);
}

static inline struct rsw_cq *to_rsw_cq(struct ibv_cq *cq)
{
	return container_of(cq, struct rsw_cq, vcq.cq);
}

static inline struct rsw_qp *to_rsw_qp(struct ibv_qp *qp)
{
	return container_of(qp, struct rsw_qp, vqp.qp);
}

static inline struct rsw_srq *to_rsw_srq(struct ibv_srq *srq)
{
	return container_of(srq, struct rsw_srq, vsrq.srq);
}

/*
 * verbs.c: control-path verbs.  Each one is a single system call into
 * ib_uverbs; none is used from a data path.
 */
int rsw_query_device_ex(struct ibv_context *ctx,
			const struct ibv_query_device_ex_input *input,
			struct ibv_device_attr_ex *attr, size_t attr_size);
int rsw_query_port(struct ibv_context *ctx, uint8_t port,
		   struct ibv_port_attr *attr);
struct ibv_pd *rsw_alloc_pd(struct ibv_context *ctx);
int rsw_dealloc_pd(struct ibv_pd *pd);
struct ibv_mr *rsw_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			  uint64_t hca_va, int access);
int rsw_dereg_mr(struct verbs_mr *vmr);
/* Memory windows; ibv_bind_mw() of a type 1 window is rsw_bind_mw(). */
struct ibv_mw *rsw_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
int rsw_dealloc_mw(struct ibv_mw *mw);

/*
 * cq.c: completion queues.  create and destroy are system calls plus
 * mmap/munmap; poll_cq, the extended poll (ibv_start_poll and friends) and
 * req_notify_cq only touch the shared ring and may be called from any
 * thread.
 */
struct ibv_cq *rsw_create_cq(struct ibv_context *ctx, int cqe,
			     struct ibv_comp_channel *channel,
			     int comp_vector);
struct ibv_cq_ex *rsw_create_cq_ex(struct ibv_context *ctx,
				   struct ibv_cq_init_attr_ex *attr);
int rsw_destroy_cq(struct ibv_cq *cq);
int rsw_resize_cq(struct ibv_cq *cq, int cqe);
int rsw_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
int rsw_req_notify_cq(struct ibv_cq *cq, int solicited_only);

/*
 * qp.c: RC queue pairs.  create/modify/query/destroy are system calls;
 * post_recv never is, post_send only to ring the doorbell when the kernel
 * is not already draining the send queue.
 */
struct ibv_qp *rsw_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
struct ibv_qp *rsw_create_qp_ex(struct ibv_context *ctx,
				struct ibv_qp_init_attr_ex *attr);
int rsw_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask);
int rsw_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask,
		 struct ibv_qp_init_attr *init_attr);
int rsw_destroy_qp(struct ibv_qp *qp);
int rsw_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
		  struct ibv_send_wr **bad_wr);
int rsw_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw,
		struct ibv_mw_bind *mw_bind);
int rsw_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
		  struct ibv_recv_wr **bad_wr);
/*
 * Shared with srq.c: map (and unmap) one work queue of @size entries of
 * @entry_size bytes that the kernel placed at mmap @offset, @len bytes;
 * initialises wq->lock.  Size 0 with len 0 is a queue with no mapping.
 */
int rsw_wq_map(struct rsw_wq *wq, int cmd_fd, uint64_t offset,
	       uint64_t len, uint32_t size, size_t entry_size,
	       uint32_t max_sge);
void rsw_wq_unmap(struct rsw_wq *wq);
/*
 * Write receive requests into a mapped receive ring (a QP's or an SRQ's)
 * under its lock and publish the tail; *@posted if any was.  0 or the
 * errno of the first refused request, named by *@bad_wr.
 */
int rsw_wq_post_recv(struct rsw_wq *rq, struct ibv_recv_wr *wr,
		     struct ibv_recv_wr **bad_wr, bool *posted);

/*
 * srq.c: shared receive queues.  create/modify/query/destroy are system
 * calls (plus mmap/munmap); post_srq_recv never is, and may be called
 * from any thread.
 */
struct ibv_srq *rsw_create_srq(struct ibv_pd *pd,
			       struct ibv_srq_init_attr *attr);
int rsw_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr, int mask);
int rsw_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr);
int rsw_destroy_srq(struct ibv_srq *srq);
int rsw_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
		      struct ibv_recv_wr **bad_wr);

#endif /* RDMAP_SW_PROVIDER_H */
