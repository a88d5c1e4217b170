// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * rdmap_sw rdma-core provider: RC queue pairs.
 *
 * Each work queue of a user QP is a mapping the kernel hands out at
 * create_qp: struct rdmap_sw_wq_ctrl, then at RDMAP_SW_WQ_RING_OFFSET a ring
 * of struct rdmap_sw_sqe (send queue) or rdmap_sw_rqe (receive queue).  We
 * are the producer: fill the entry at tail, publish tail with release
 * semantics; the kernel consumes and moves head.  Posting a receive is
 * complete at that point (but see rsw_post_recv() for a QP in ERROR).  Posting a send then follows the doorbell rule of
 * include/uapi/rdma/rdmap_sw-abi.h: full barrier, load ctrl.busy and, only
 * if the kernel is not draining already, a post_send command with no work
 * requests.
 *
 * Work requests are validated here so that the caller gets a bad_wr and an
 * errno for a malformed one; the kernel validates its own copy anyway and
 * is the authority (a bad entry that got past us moves the QP to ERROR).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "rdmap_sw.h"

/*
 * A Read's sink is one SGE (the device's max_sge_rd; see the kernel's
 * RSW_MAX_SGE_RD) and no message exceeds 2^31 bytes (max_msg_sz).
 */
#define RSW_MAX_SGE_RD 1
#define RSW_MAX_MSG_SIZE (1U << 31)

static_assert(sizeof(struct rdmap_sw_wq_ctrl) == 128, "ctrl is two lines");

static bool rsw_is_pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

/* ------------------------------------------------------------- set-up */

/*
 * Map one queue.  A queue of size 0 has no mapping (len 0).  The mapping
 * must hold the ring the kernel claims, or our stores would fault.
 */
int rsw_wq_map(struct rsw_wq *wq, int cmd_fd, uint64_t offset,
	       uint64_t len, uint32_t size, size_t entry_size,
	       uint32_t max_sge)
{
	uint64_t need = RDMAP_SW_WQ_RING_OFFSET + (uint64_t)size * entry_size;
	int ret;

	ret = pthread_spin_init(&wq->lock, PTHREAD_PROCESS_PRIVATE);
	if (ret)
		return ret;
	/* The entry holds RDMAP_SW_MAX_SGE, whatever the kernel says. */
	wq->max_sge = max_sge < RDMAP_SW_MAX_SGE ? max_sge : RDMAP_SW_MAX_SGE;
	if (!size && !len)
		return 0;
	if (!rsw_is_pow2(size) || len < need || len > SIZE_MAX) {
		ret = EPROTO;
		goto err_lock;
	}
	wq->map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, cmd_fd,
		       offset);
	if (wq->map == MAP_FAILED) {
		wq->map = NULL;
		ret = errno;
		goto err_lock;
	}
	wq->map_len = len;
	wq->ctrl = wq->map;
	wq->ring = (char *)wq->map + RDMAP_SW_WQ_RING_OFFSET;
	wq->size = size;
	wq->tail = rsw_load_relaxed(&wq->ctrl->tail);
	return 0;

err_lock:
	pthread_spin_destroy(&wq->lock);
	return ret;
}

void rsw_wq_unmap(struct rsw_wq *wq)
{
	if (wq->map)
		munmap(wq->map, wq->map_len);
	pthread_spin_destroy(&wq->lock);
}

static int rsw_qp_map(struct rsw_qp *qp, int cmd_fd,
		      const struct rdmap_sw_uresp_create_qp *uresp,
		      const struct ibv_qp_cap *cap)
{
	int ret;

	ret = rsw_wq_map(&qp->sq, cmd_fd, uresp->sq_offset, uresp->sq_len,
			 uresp->sq_size, sizeof(struct rdmap_sw_sqe),
			 cap->max_send_sge);
	if (ret)
		return ret;
	ret = rsw_wq_map(&qp->rq, cmd_fd, uresp->rq_offset, uresp->rq_len,
			 uresp->rq_size, sizeof(struct rdmap_sw_rqe),
			 cap->max_recv_sge);
	if (ret) {
		rsw_wq_unmap(&qp->sq);
		return ret;
	}
	return 0;
}

static void rsw_qp_init_wr_ops(struct rsw_qp *qp);

#define RSW_QP_SEND_OPS (IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_INV | \
			 IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_READ | \
			 IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | \
			 IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | \
			 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | \
			 IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV)

/*
 * Both creation verbs end here.  @attr is updated with the capacities the
 * kernel granted, as ibv_create_qp() promises.
 */
static struct ibv_qp *rsw_create_qp_common(struct ibv_context *ctx,
					   struct ibv_qp_init_attr_ex *attr)
{
	struct rsw_cmd_create_qp cmd = {};
	struct rsw_cmd_create_qp_resp resp = {};
	struct ibv_qp_init_attr_ex cmd_attr;
	struct rsw_qp *qp;
	int ret;

	/* iWARP has RC only.  With an SRQ the kernel maps no receive queue. */
	if (attr->qp_type != IBV_QPT_RC) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD)) {
		errno = EINVAL;
		return NULL;
	}
	/* Create flags are fine as long as none is set. */
	if (attr->comp_mask & ~(IBV_QP_INIT_ATTR_PD |
				IBV_QP_INIT_ATTR_SEND_OPS_FLAGS |
				IBV_QP_INIT_ATTR_CREATE_FLAGS) ||
	    ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	     attr->create_flags)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	    (attr->send_ops_flags & ~RSW_QP_SEND_OPS)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp) {
		errno = ENOMEM;
		return NULL;
	}

	/*
	 * libibverbs' command refuses the create-flags mask bit even with no
	 * flag set (checked above): send a copy without it, keep its caps.
	 */
	cmd_attr = *attr;
	cmd_attr.comp_mask &= ~IBV_QP_INIT_ATTR_CREATE_FLAGS;
	ret = ibv_cmd_create_qp_ex(ctx, &qp->vqp, &cmd_attr, &cmd.ibv_cmd,
				   sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_free;
	attr->cap = cmd_attr.cap;

	ret = rsw_qp_map(qp, ctx->cmd_fd, &resp.drv_payload, &attr->cap);
	if (ret) {
		verbs_err(verbs_get_ctx(ctx),
			  "cannot map QP %u queues (sq %u/%llu, rq %u/%llu): %s\n",
			  qp->vqp.qp.qp_num, resp.sq_size,
			  (unsigned long long)resp.sq_len, resp.rq_size,
			  (unsigned long long)resp.rq_len, strerror(ret));
		goto err_destroy;
	}
	qp->max_inline = resp.max_inline;
	if (qp->max_inline > RDMAP_SW_MAX_INLINE)
		qp->max_inline = RDMAP_SW_MAX_INLINE;
	qp->sig_all = attr->sq_sig_all;
	attr->cap.max_inline_data = qp->max_inline;
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
		rsw_qp_init_wr_ops(qp);
	return &qp->vqp.qp;

err_destroy:
	ibv_cmd_destroy_qp(&qp->vqp.qp);
err_free:
	free(qp);
	errno = ret;
	return NULL;
}

struct ibv_qp *rsw_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex attr_ex = {
		.qp_context = attr->qp_context,
		.send_cq = attr->send_cq,
		.recv_cq = attr->recv_cq,
		.srq = attr->srq,
		.cap = attr->cap,
		.qp_type = attr->qp_type,
		.sq_sig_all = attr->sq_sig_all,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = pd,
	};
	struct ibv_qp *qp;

	qp = rsw_create_qp_common(pd->context, &attr_ex);
	if (qp)
		attr->cap = attr_ex.cap;
	return qp;
}

struct ibv_qp *rsw_create_qp_ex(struct ibv_context *ctx,
				struct ibv_qp_init_attr_ex *attr)
{
	return rsw_create_qp_common(ctx, attr);
}

int rsw_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask)
{
	struct ibv_modify_qp cmd = {};

	return ibv_cmd_modify_qp(qp, attr, mask, &cmd, sizeof(cmd));
}

int rsw_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask,
		 struct ibv_qp_init_attr *init_attr)
{
	struct ibv_query_qp cmd = {};

	return ibv_cmd_query_qp(qp, attr, mask, init_attr, &cmd, sizeof(cmd));
}

int rsw_destroy_qp(struct ibv_qp *ibqp)
{
	struct rsw_qp *qp = to_rsw_qp(ibqp);
	int ret;

	ret = ibv_cmd_destroy_qp(ibqp);
	if (ret)
		return ret;
	rsw_wq_unmap(&qp->rq);
	rsw_wq_unmap(&qp->sq);
	free(qp);
	return 0;
}

/* ---------------------------------------------------------- post_send */

/* Copy an SGE list into an entry and add up its length. */
static int rsw_fill_sges(struct rdmap_sw_sge *dst, const struct ibv_sge *src,
			 int num_sge, uint32_t max_sge, uint32_t *length)
{
	uint64_t total = 0;
	int i;

	if (num_sge < 0 || (uint32_t)num_sge > max_sge)
		return EINVAL;
	for (i = 0; i < num_sge; i++) {
		dst[i].addr = src[i].addr;
		dst[i].length = src[i].length;
		dst[i].lkey = src[i].lkey;
		total += src[i].length;
	}
	if (total > RSW_MAX_MSG_SIZE)
		return EINVAL;
	*length = total;
	return 0;
}

/* IBV_SEND_INLINE: the payload is copied now; the buffers are free again. */
static int rsw_fill_inline(struct rsw_qp *qp, const struct ibv_send_wr *wr,
			   struct rdmap_sw_sqe *sqe)
{
	uint32_t total = 0;
	int i;

	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->sq.max_sge)
		return EINVAL;
	for (i = 0; i < wr->num_sge; i++) {
		const struct ibv_sge *sge = &wr->sg_list[i];

		if (sge->length > qp->max_inline - total)
			return EINVAL;
		memcpy(sqe->inline_data + total,
		       (const void *)(uintptr_t)sge->addr, sge->length);
		total += sge->length;
	}
	sqe->num_sge = 0;
	sqe->length = total;
	sqe->flags |= RDMAP_SW_SQE_INLINE;
	return 0;
}

#define RSW_SEND_FLAGS (IBV_SEND_SIGNALED | IBV_SEND_SOLICITED | \
			IBV_SEND_FENCE | IBV_SEND_INLINE)

static bool rsw_opcode_atomic(uint8_t opcode)
{
	return opcode == RDMAP_SW_WR_ATOMIC_CMP_AND_SWP ||
	       opcode == RDMAP_SW_WR_ATOMIC_FETCH_AND_ADD;
}

/*
 * An RFC 7306 atomic: the peer's word at @raddr of @rkey; the original
 * value comes back into the one 8-byte SGE (the kernel checks it too).
 */
static void rsw_sqe_atomic(struct rdmap_sw_sqe *sqe, uint8_t opcode,
			   uint32_t rkey, uint64_t raddr, uint64_t compare_add,
			   uint64_t swap)
{
	sqe->opcode = opcode;
	sqe->rstag = rkey;
	sqe->raddr = raddr;
	sqe->atomic.compare_add = compare_add;
	sqe->atomic.swap = swap;
	sqe->atomic.compare_add_mask = 0;
	sqe->atomic.swap_mask = 0;
}

/*
 * BIND_MW operands: the window by the index of its new STag @rkey, the MR
 * by its lkey (none: unbind a type 1 window).  The kernel checks them all
 * when it executes the entry (mem.c, rsw_mw_bind()).
 */
static void rsw_fill_bind(struct rdmap_sw_sqe *sqe, uint32_t rkey,
			  const struct ibv_mw_bind_info *info)
{
	sqe->opcode = RDMAP_SW_WR_BIND_MW;
	memset(&sqe->bind, 0, sizeof(sqe->bind));
	sqe->bind.addr = info->addr;
	sqe->bind.length = info->length;
	sqe->bind.mr_lkey = info->mr ? info->mr->lkey : 0;
	sqe->bind.mw_rkey = rkey;
	sqe->bind.access = info->mw_access_flags;
}

/* Validate @wr and write it into @sqe (a free slot). */
static int rsw_fill_sqe(struct rsw_qp *qp, const struct ibv_send_wr *wr,
			struct rdmap_sw_sqe *sqe)
{
	uint32_t max_sge = qp->sq.max_sge;
	bool can_inline = true;

	if (wr->send_flags & ~RSW_SEND_FLAGS)
		return EINVAL;
	memset(sqe, 0, offsetof(struct rdmap_sw_sqe, sge));
	sqe->wr_id = wr->wr_id;
	switch (wr->opcode) {
	case IBV_WR_SEND:
		sqe->opcode = RDMAP_SW_WR_SEND;
		break;
	case IBV_WR_SEND_WITH_INV:
		sqe->opcode = RDMAP_SW_WR_SEND_WITH_INV;
		sqe->inv_stag = wr->invalidate_rkey;
		break;
	case IBV_WR_RDMA_WRITE:
		sqe->opcode = RDMAP_SW_WR_RDMA_WRITE;
		sqe->rstag = wr->wr.rdma.rkey;
		sqe->raddr = wr->wr.rdma.remote_addr;
		break;
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		sqe->opcode = RDMAP_SW_WR_RDMA_WRITE_WITH_IMM;
		sqe->rstag = wr->wr.rdma.rkey;
		sqe->raddr = wr->wr.rdma.remote_addr;
		sqe->imm_data = wr->imm_data;	/* network order, as given */
		break;
	case IBV_WR_RDMA_READ:
		sqe->opcode = RDMAP_SW_WR_RDMA_READ;
		sqe->rstag = wr->wr.rdma.rkey;
		sqe->raddr = wr->wr.rdma.remote_addr;
		if (max_sge > RSW_MAX_SGE_RD)
			max_sge = RSW_MAX_SGE_RD;
		can_inline = false;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		if (wr->num_sge != 1 || wr->sg_list[0].length != 8)
			return EINVAL;
		rsw_sqe_atomic(sqe, wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ?
				    RDMAP_SW_WR_ATOMIC_CMP_AND_SWP :
				    RDMAP_SW_WR_ATOMIC_FETCH_AND_ADD,
			       wr->wr.atomic.rkey, wr->wr.atomic.remote_addr,
			       wr->wr.atomic.compare_add, wr->wr.atomic.swap);
		max_sge = 1;
		can_inline = false;
		break;
	case IBV_WR_LOCAL_INV:
		sqe->opcode = RDMAP_SW_WR_LOCAL_INV;
		sqe->inv_stag = wr->invalidate_rkey;
		break;
	case IBV_WR_BIND_MW:
		rsw_fill_bind(sqe, wr->bind_mw.rkey, &wr->bind_mw.bind_info);
		break;
	default:
		/*
		 * Send with Immediate would need two receives for one WR
		 * on iWARP (a Send, then Immediate Data): refused.
		 */
		return EINVAL;
	}
	if (qp->sig_all || (wr->send_flags & IBV_SEND_SIGNALED))
		sqe->flags |= RDMAP_SW_SQE_SIGNALED;
	if (wr->send_flags & IBV_SEND_SOLICITED)
		sqe->flags |= RDMAP_SW_SQE_SOLICITED;
	if (wr->send_flags & IBV_SEND_FENCE)
		sqe->flags |= RDMAP_SW_SQE_FENCE;
	/* Local operations carry no data. */
	if (sqe->opcode == RDMAP_SW_WR_LOCAL_INV ||
	    sqe->opcode == RDMAP_SW_WR_BIND_MW)
		return 0;

	if (can_inline && (wr->send_flags & IBV_SEND_INLINE))
		return rsw_fill_inline(qp, wr, sqe);
	sqe->num_sge = wr->num_sge;
	return rsw_fill_sges(sqe->sge, wr->sg_list, wr->num_sge, max_sge,
			     &sqe->length);
}

/* Is there room for entry @n?  Acquire: the kernel is done with its slot. */
static bool rsw_wq_has_room(struct rsw_wq *wq)
{
	return wq->tail - rsw_load_acquire(&wq->ctrl->head) < wq->size;
}

/* The doorbell: a post_send command carrying no work request. */
static int rsw_ring_doorbell(struct ibv_qp *ibqp)
{
	struct ibv_send_wr *bad = NULL;

	return ibv_cmd_post_send(ibqp, NULL, &bad);
}

/*
 * Publish the entries up to sq.tail and tell whether the doorbell must be
 * rung (after sq.lock is dropped): the kernel was not draining.  sq.lock
 * held.
 */
static bool rsw_sq_publish(struct rsw_wq *sq)
{
	rsw_store_release(&sq->ctrl->tail, sq->tail);
	rsw_full_barrier();
	return !rsw_load_relaxed(&sq->ctrl->busy);
}

int rsw_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		  struct ibv_send_wr **bad_wr)
{
	struct rsw_qp *qp = to_rsw_qp(ibqp);
	struct rsw_wq *sq = &qp->sq;
	struct rdmap_sw_sqe *ring;
	bool ring_bell = false;
	uint32_t start;
	int ret = 0;

	if (!sq->size) {
		*bad_wr = wr;
		return EINVAL;
	}
	ring = sq->ring;
	pthread_spin_lock(&sq->lock);
	start = sq->tail;
	for (; wr; wr = wr->next) {
		if (!rsw_wq_has_room(sq)) {
			ret = ENOMEM;
			break;
		}
		ret = rsw_fill_sqe(qp, wr, &ring[sq->tail & (sq->size - 1)]);
		if (ret)
			break;
		sq->tail++;
	}
	if (sq->tail != start)
		ring_bell = rsw_sq_publish(sq);
	pthread_spin_unlock(&sq->lock);

	if (ret)
		*bad_wr = wr;
	if (ring_bell) {
		int err = rsw_ring_doorbell(ibqp);

		/*
		 * The entries are in the ring already and cannot be taken
		 * back; a failed doorbell (e.g. the QP is gone in the kernel)
		 * is reported when nothing else failed, with no bad_wr.
		 */
		if (err && !ret) {
			*bad_wr = NULL;
			ret = err;
		}
	}
	return ret;
}

/* ------------------------------------------- extended send API (ibv_wr_*) */

static struct rsw_qp *qpx_to_rsw_qp(struct ibv_qp_ex *qpx)
{
	return container_of(qpx, struct rsw_qp, vqp.qp_ex);
}

static void rsw_wr_start(struct ibv_qp_ex *qpx)
{
	struct rsw_qp *qp = qpx_to_rsw_qp(qpx);

	pthread_spin_lock(&qp->sq.lock);
	qp->wr_tail = qp->sq.tail;
	qp->wr_cur = NULL;
	qp->wr_err = qp->sq.size ? 0 : EINVAL;
}

/*
 * Begin the next entry of the batch with the caller's wr_id and flags;
 * NULL once the batch has failed.
 */
/* An atomic whose result buffer was never set cannot be sent. */
static void rsw_wr_check_done(struct rsw_qp *qp)
{
	if (qp->wr_cur && rsw_opcode_atomic(qp->wr_cur->opcode) && !qp->wr_err)
		qp->wr_err = EINVAL;
}

static struct rdmap_sw_sqe *rsw_wr_new(struct rsw_qp *qp, uint8_t opcode)
{
	struct ibv_qp_ex *qpx = &qp->vqp.qp_ex;
	struct rsw_wq *sq = &qp->sq;
	struct rdmap_sw_sqe *sqe;

	rsw_wr_check_done(qp);
	qp->wr_cur = NULL;
	if (qp->wr_err)
		return NULL;
	if (qpx->wr_flags & ~RSW_SEND_FLAGS) {
		qp->wr_err = EINVAL;
		return NULL;
	}
	if (qp->wr_tail - rsw_load_acquire(&sq->ctrl->head) >= sq->size) {
		qp->wr_err = ENOMEM;
		return NULL;
	}
	sqe = (struct rdmap_sw_sqe *)sq->ring + (qp->wr_tail & (sq->size - 1));
	memset(sqe, 0, offsetof(struct rdmap_sw_sqe, sge));
	sqe->wr_id = qpx->wr_id;
	sqe->opcode = opcode;
	if (qp->sig_all || (qpx->wr_flags & IBV_SEND_SIGNALED))
		sqe->flags |= RDMAP_SW_SQE_SIGNALED;
	if (qpx->wr_flags & IBV_SEND_SOLICITED)
		sqe->flags |= RDMAP_SW_SQE_SOLICITED;
	if (qpx->wr_flags & IBV_SEND_FENCE)
		sqe->flags |= RDMAP_SW_SQE_FENCE;
	qp->wr_tail++;
	qp->wr_cur = sqe;
	return sqe;
}

static void rsw_wr_send(struct ibv_qp_ex *qpx)
{
	rsw_wr_new(qpx_to_rsw_qp(qpx), RDMAP_SW_WR_SEND);
}

static void rsw_wr_send_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
	struct rdmap_sw_sqe *sqe;

	sqe = rsw_wr_new(qpx_to_rsw_qp(qpx), RDMAP_SW_WR_SEND_WITH_INV);
	if (sqe)
		sqe->inv_stag = invalidate_rkey;
}

static void rsw_wr_rdma(struct ibv_qp_ex *qpx, uint8_t opcode, uint32_t rkey,
			uint64_t remote_addr)
{
	struct rdmap_sw_sqe *sqe;

	sqe = rsw_wr_new(qpx_to_rsw_qp(qpx), opcode);
	if (sqe) {
		sqe->rstag = rkey;
		sqe->raddr = remote_addr;
	}
}

static void rsw_wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey,
			      uint64_t remote_addr)
{
	rsw_wr_rdma(qpx, RDMAP_SW_WR_RDMA_WRITE, rkey, remote_addr);
}

static void rsw_wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey,
				  uint64_t remote_addr, __be32 imm_data)
{
	struct rsw_qp *qp = qpx_to_rsw_qp(qpx);

	rsw_wr_rdma(qpx, RDMAP_SW_WR_RDMA_WRITE_WITH_IMM, rkey, remote_addr);
	if (qp->wr_cur)
		qp->wr_cur->imm_data = imm_data;
}

static void rsw_wr_atomic(struct ibv_qp_ex *qpx, uint8_t opcode,
			  uint32_t rkey, uint64_t remote_addr,
			  uint64_t compare_add, uint64_t swap)
{
	struct rdmap_sw_sqe *sqe = rsw_wr_new(qpx_to_rsw_qp(qpx), opcode);

	if (sqe)
		rsw_sqe_atomic(sqe, opcode, rkey, remote_addr, compare_add,
			       swap);
}

static void rsw_wr_atomic_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey,
				  uint64_t remote_addr, uint64_t compare,
				  uint64_t swap)
{
	rsw_wr_atomic(qpx, RDMAP_SW_WR_ATOMIC_CMP_AND_SWP, rkey, remote_addr,
		      compare, swap);
}

static void rsw_wr_atomic_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey,
				    uint64_t remote_addr, uint64_t add)
{
	rsw_wr_atomic(qpx, RDMAP_SW_WR_ATOMIC_FETCH_AND_ADD, rkey, remote_addr,
		      add, 0);
}

static void rsw_wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey,
			     uint64_t remote_addr)
{
	rsw_wr_rdma(qpx, RDMAP_SW_WR_RDMA_READ, rkey, remote_addr);
}

static void rsw_wr_bind_mw(struct ibv_qp_ex *qpx, struct ibv_mw *mw,
			   uint32_t rkey, const struct ibv_mw_bind_info *info)
{
	struct rsw_qp *qp = qpx_to_rsw_qp(qpx);
	struct rdmap_sw_sqe *sqe;

	sqe = rsw_wr_new(qp, RDMAP_SW_WR_BIND_MW);
	if (sqe)
		rsw_fill_bind(sqe, rkey, info);
	/* Complete: a set_* now would overwrite the bind (union with sge[]). */
	qp->wr_cur = NULL;
}

static void rsw_wr_local_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
	struct rsw_qp *qp = qpx_to_rsw_qp(qpx);
	struct rdmap_sw_sqe *sqe;

	sqe = rsw_wr_new(qp, RDMAP_SW_WR_LOCAL_INV);
	if (sqe)
		sqe->inv_stag = invalidate_rkey;
	qp->wr_cur = NULL;	/* complete: a set_* fails the batch */
}

/*
 * ibv_bind_mw() of a type 1 window (libibverbs checked the type and the
 * PD): a BIND_MW entry under the next key of the window's STag, which
 * becomes mw->rkey once the entry is posted; the completion says whether
 * the kernel bound it.
 */
int rsw_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw,
		struct ibv_mw_bind *mw_bind)
{
	struct ibv_send_wr wr = {
		.wr_id = mw_bind->wr_id,
		.opcode = IBV_WR_BIND_MW,
		.send_flags = mw_bind->send_flags,
		.bind_mw = {
			.mw = mw,
			.rkey = ibv_inc_rkey(mw->rkey),
			.bind_info = mw_bind->bind_info,
		},
	};
	struct ibv_send_wr *bad;
	int ret;

	ret = rsw_post_send(qp, &wr, &bad);
	if (!ret)
		mw->rkey = wr.bind_mw.rkey;
	return ret;
}

/* The entry being built, if its data may still be set; else fail the batch. */
static struct rdmap_sw_sqe *rsw_wr_cur(struct rsw_qp *qp)
{
	struct rdmap_sw_sqe *sqe = qp->wr_cur;

	if (!qp->wr_err && !sqe)
		qp->wr_err = EINVAL;	/* no operation started */
	qp->wr_cur = NULL;		/* data is set once per entry */
	return qp->wr_err ? NULL : sqe;
}

static void rsw_wr_set_sge_list(struct ibv_qp_ex *qpx, size_t num_sge,
				const struct ibv_sge *sg_list)
{
	struct rsw_qp *qp = qpx_to_rsw_qp(qpx);
	struct rdmap_sw_sqe *sqe = rsw_wr_cur(qp);
	uint32_t max_sge = qp->sq.max_sge;

	if (!sqe)
		return;
	if (sqe->opcode == RDMAP_SW_WR_RDMA_READ && max_sge > RSW_MAX_SGE_RD)
		max_sge = RSW_MAX_SGE_RD;
	if (num_sge > max_sge ||
	    (rsw_opcode_atomic(sqe->opcode) &&
	     (num_sge != 1 || sg_list[0].length != 8))) {
		qp->wr_err = EINVAL;
		return;
	}
	sqe->num_sge = num_sge;
	qp->wr_err = rsw_fill_sges(sqe->sge, sg_list, num_sge, max_sge,
				   &sqe->length);
}

static void rsw_wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey,
			   uint64_t addr, uint32_t length)
{
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	rsw_wr_set_sge_list(qpx, 1, &sge);
}

static void rsw_wr_set_inline_data_list(struct ibv_qp_ex *qpx, size_t num_buf,
					const struct ibv_data_buf *buf_list)
{
	struct rsw_qp *qp = qpx_to_rsw_qp(qpx);
	struct rdmap_sw_sqe *sqe = rsw_wr_cur(qp);
	uint32_t total = 0;
	size_t i;

	if (!sqe)
		return;
	if (sqe->opcode == RDMAP_SW_WR_RDMA_READ ||
	    rsw_opcode_atomic(sqe->opcode)) {
		qp->wr_err = EINVAL;
		return;
	}
	for (i = 0; i < num_buf; i++) {
		if (buf_list[i].length > qp->max_inline - total) {
			qp->wr_err = EINVAL;
			return;
		}
		memcpy(sqe->inline_data + total, buf_list[i].addr,
		       buf_list[i].length);
		total += buf_list[i].length;
	}
	sqe->num_sge = 0;
	sqe->length = total;
	sqe->flags |= RDMAP_SW_SQE_INLINE;
}

static void rsw_wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr,
				   size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	rsw_wr_set_inline_data_list(qpx, 1, &buf);
}

/* Drop the batch: sq.tail never moved, so the kernel saw none of it. */
static void rsw_wr_abort(struct ibv_qp_ex *qpx)
{
	struct rsw_qp *qp = qpx_to_rsw_qp(qpx);

	qp->wr_cur = NULL;
	pthread_spin_unlock(&qp->sq.lock);
}

static int rsw_wr_complete(struct ibv_qp_ex *qpx)
{
	struct rsw_qp *qp = qpx_to_rsw_qp(qpx);
	struct rsw_wq *sq = &qp->sq;
	bool ring_bell = false;
	int ret;

	rsw_wr_check_done(qp);
	ret = qp->wr_err;
	if (!ret && qp->wr_tail != sq->tail) {
		sq->tail = qp->wr_tail;
		ring_bell = rsw_sq_publish(sq);
	}
	qp->wr_cur = NULL;
	pthread_spin_unlock(&sq->lock);
	if (ring_bell)
		ret = rsw_ring_doorbell(&qp->vqp.qp);
	return ret;
}

static void rsw_qp_init_wr_ops(struct rsw_qp *qp)
{
	struct ibv_qp_ex *qpx = &qp->vqp.qp_ex;

	qp->vqp.comp_mask |= VERBS_QP_EX;
	qpx->wr_start = rsw_wr_start;
	qpx->wr_complete = rsw_wr_complete;
	qpx->wr_abort = rsw_wr_abort;
	qpx->wr_send = rsw_wr_send;
	qpx->wr_send_inv = rsw_wr_send_inv;
	qpx->wr_rdma_write = rsw_wr_rdma_write;
	qpx->wr_rdma_read = rsw_wr_rdma_read;
	qpx->wr_rdma_write_imm = rsw_wr_rdma_write_imm;
	qpx->wr_atomic_cmp_swp = rsw_wr_atomic_cmp_swp;
	qpx->wr_atomic_fetch_add = rsw_wr_atomic_fetch_add;
	qpx->wr_bind_mw = rsw_wr_bind_mw;
	qpx->wr_local_inv = rsw_wr_local_inv;
	qpx->wr_set_sge = rsw_wr_set_sge;
	qpx->wr_set_sge_list = rsw_wr_set_sge_list;
	qpx->wr_set_inline_data = rsw_wr_set_inline_data;
	qpx->wr_set_inline_data_list = rsw_wr_set_inline_data_list;
}

/* ---------------------------------------------------------- post_recv */

int rsw_wq_post_recv(struct rsw_wq *rq, struct ibv_recv_wr *wr,
		     struct ibv_recv_wr **bad_wr, bool *posted)
{
	struct rdmap_sw_rqe *ring, *rqe;
	uint32_t start;
	int ret = 0;

	pthread_spin_lock(&rq->lock);
	/* An SRQ resizing or lost (srq.c): nothing goes to its ring. */
	if (rq->err) {
		ret = rq->err;
		pthread_spin_unlock(&rq->lock);
		*bad_wr = wr;
		return ret;
	}
	/* An SRQ resize replaces the ring under the lock (srq.c). */
	ring = rq->ring;
	start = rq->tail;
	for (; wr; wr = wr->next) {
		if (!rsw_wq_has_room(rq)) {
			ret = ENOMEM;
			break;
		}
		rqe = &ring[rq->tail & (rq->size - 1)];
		memset(rqe, 0, offsetof(struct rdmap_sw_rqe, sge));
		ret = rsw_fill_sges(rqe->sge, wr->sg_list, wr->num_sge,
				    rq->max_sge, &rqe->length);
		if (ret)
			break;
		rqe->wr_id = wr->wr_id;
		rqe->num_sge = wr->num_sge;
		rq->tail++;
	}
	*posted = rq->tail != start;
	/* Release: the entries are written before the kernel may see them. */
	if (*posted)
		rsw_store_release(&rq->ctrl->tail, rq->tail);
	pthread_spin_unlock(&rq->lock);
	if (ret)
		*bad_wr = wr;
	return ret;
}

int rsw_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		  struct ibv_recv_wr **bad_wr)
{
	struct rsw_qp *qp = to_rsw_qp(ibqp);
	bool posted;
	int ret;

	/* No ring: a QP with an SRQ posts there (ibv_post_srq_recv). */
	if (!qp->rq.size) {
		*bad_wr = wr;
		return EINVAL;
	}
	ret = rsw_wq_post_recv(&qp->rq, wr, bad_wr, &posted);

	/*
	 * Receives are taken only when a Send arrives, which never happens
	 * in ERROR: after the caller moved the QP there (ibv_modify_qp keeps
	 * ibqp->state), an empty post_recv command makes the kernel flush
	 * them, so that draining a QP with a last receive works.  A move to
	 * ERROR by the kernel itself is not seen here.
	 */
	if (posted && ibqp->state == IBV_QPS_ERR) {
		struct ibv_recv_wr *bad = NULL;
		int err = ibv_cmd_post_recv(ibqp, NULL, &bad);

		if (err && !ret) {
			*bad_wr = NULL;
			ret = err;
		}
	}
	return ret;
}
