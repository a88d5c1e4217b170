// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * rdmap_sw rdma-core provider: completion queues.
 *
 * rdmap_sw.ko owns the ring (struct rdmap_sw_cq_ctrl followed by the
 * entries) and lets us map it.  Polling and arming never enter the kernel:
 * an entry is ours once its seq word equals its index, and we hand slots
 * back by advancing ctrl.cons; arming raises ctrl.notify and the kernel
 * signals the completion channel itself (ibv_get_cq_event).  The ordering
 * rules are those of include/uapi/rdma/rdmap_sw-abi.h.  ibv_resize_cq is a
 * system call that swaps the ring under the CQ's lock, which polling and
 * arming also take.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "rdmap_sw.h"

static_assert(sizeof(struct rdmap_sw_cq_ctrl) == 128, "ctrl is two lines");
static_assert(sizeof(struct rdmap_sw_cqe) == 32, "cqe layout");

static bool rsw_is_pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

/*
 * Map a ring the kernel described (create_cq's or resize_cq's answer),
 * checking the description before trusting it with our loads: a mapping
 * too short for @size entries would fault later.  The mapping, or NULL
 * with errno set.
 */
static struct rdmap_sw_cq_ctrl *rsw_cq_mmap(int cmd_fd, uint64_t offset,
					    uint64_t len, uint32_t size)
{
	struct rdmap_sw_cq_ctrl *ctrl;
	uint64_t need;

	need = sizeof(struct rdmap_sw_cq_ctrl) +
	       (uint64_t)size * sizeof(struct rdmap_sw_cqe);
	if (!rsw_is_pow2(size) || len < need || len > SIZE_MAX) {
		errno = EPROTO;
		return NULL;
	}
	ctrl = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, cmd_fd,
		    offset);
	if (ctrl == MAP_FAILED)
		return NULL;
	if (ctrl->size != size || ctrl->mask != size - 1) {
		munmap(ctrl, len);
		errno = EPROTO;
		return NULL;
	}
	return ctrl;
}

/* Start using the mapped ring @ctrl (@len bytes) of @size entries. */
static void rsw_cq_use(struct rsw_cq *cq, struct rdmap_sw_cq_ctrl *ctrl,
		       size_t len, uint32_t size)
{
	cq->map = ctrl;
	cq->map_len = len;
	cq->ctrl = ctrl;
	cq->ring = (struct rdmap_sw_cqe *)(ctrl + 1);
	cq->size = size;
}

static int rsw_cq_map(struct rsw_cq *cq, int cmd_fd,
		      const struct rdmap_sw_uresp_create_cq *uresp)
{
	struct rdmap_sw_cq_ctrl *ctrl;

	ctrl = rsw_cq_mmap(cmd_fd, uresp->mmap_offset, uresp->mmap_len,
			   uresp->size);
	if (!ctrl)
		return errno;
	rsw_cq_use(cq, ctrl, uresp->mmap_len, uresp->size);
	cq->cons = rsw_load_relaxed(&cq->ctrl->cons);
	return 0;
}

/* Undo ibv_cmd_create_cq{,_ex}() and free @cq after a failed mapping. */
static int rsw_cq_setup(struct rsw_cq *cq, struct ibv_context *ctx,
			const struct rdmap_sw_uresp_create_cq *uresp)
{
	int ret;

	ret = rsw_cq_map(cq, ctx->cmd_fd, uresp);
	if (ret) {
		verbs_err(verbs_get_ctx(ctx),
			  "cannot map CQ ring (size %u, len %llu): %s\n",
			  uresp->size, (unsigned long long)uresp->mmap_len,
			  strerror(ret));
		ibv_cmd_destroy_cq(&cq->vcq.cq);
	}
	return ret;
}

static struct rsw_cq *rsw_cq_alloc(void)
{
	struct rsw_cq *cq;
	int ret;

	cq = calloc(1, sizeof(*cq));
	if (!cq) {
		errno = ENOMEM;
		return NULL;
	}
	ret = pthread_mutex_init(&cq->lock, NULL);
	if (ret) {
		free(cq);
		errno = ret;
		return NULL;
	}
	return cq;
}

static void rsw_cq_free(struct rsw_cq *cq, int err)
{
	pthread_mutex_destroy(&cq->lock);
	free(cq);
	errno = err;
}

struct ibv_cq *rsw_create_cq(struct ibv_context *ctx, int cqe,
			     struct ibv_comp_channel *channel,
			     int comp_vector)
{
	struct rsw_cmd_create_cq cmd = {};
	struct rsw_cmd_create_cq_resp resp = {};
	struct rsw_cq *cq;
	int ret;

	cq = rsw_cq_alloc();
	if (!cq)
		return NULL;
	ret = ibv_cmd_create_cq(ctx, cqe, channel, comp_vector, &cq->vcq.cq,
				&cmd.ibv_cmd, sizeof(cmd), &resp.ibv_resp,
				sizeof(resp));
	if (!ret)
		ret = rsw_cq_setup(cq, ctx, &resp.drv_payload);
	if (ret) {
		rsw_cq_free(cq, ret);
		return NULL;
	}
	return &cq->vcq.cq;
}

int rsw_destroy_cq(struct ibv_cq *ibcq)
{
	struct rsw_cq *cq = to_rsw_cq(ibcq);
	int ret;

	ret = ibv_cmd_destroy_cq(ibcq);
	if (ret)
		return ret;
	munmap(cq->map, cq->map_len);
	pthread_mutex_destroy(&cq->lock);
	free(cq);
	return 0;
}

/*
 * Resize (ABI header, completion queue ring): with the lock held, so that
 * no poll or arm of ours touches the old ring after the kernel loaded our
 * last ctrl.cons, the command copies the pending entries into a new ring
 * at the same indices and switches the producer to it; we map it and drop
 * the old one.  cons carries on unchanged.  If the new ring cannot be
 * mapped the kernel has switched regardless: the CQ is lost to us.  We
 * say so loudly and mark it failed (cq->err), so that every later poll
 * and arm fails instead of waiting on a ring that gets no new entries.
 */
int rsw_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct rsw_cq *cq = to_rsw_cq(ibcq);
	struct rsw_cmd_resize_cq cmd = {};
	struct rsw_cmd_resize_cq_resp resp = {};
	const struct rdmap_sw_uresp_resize_cq *r = &resp.drv_payload;
	struct rdmap_sw_cq_ctrl *ctrl;
	int ret;

	pthread_mutex_lock(&cq->lock);
	ret = cq->err;
	if (ret)
		goto out;
	ret = ibv_cmd_resize_cq(ibcq, cqe, &cmd.ibv_cmd, sizeof(cmd),
				&resp.ibv_resp, sizeof(resp));
	if (ret)
		goto out;
	ctrl = rsw_cq_mmap(ibcq->context->cmd_fd, r->mmap_offset,
			   r->mmap_len, r->size);
	if (ctrl && rsw_load_relaxed(&ctrl->cons) != cq->cons) {
		munmap(ctrl, r->mmap_len);
		ctrl = NULL;
		errno = EPROTO;
	}
	if (!ctrl) {
		ret = errno;
		verbs_err(verbs_get_ctx(ibcq->context),
			  "CQ %p resized, but its new ring (size %u, len %llu) cannot be used: %s\n",
			  ibcq, r->size, (unsigned long long)r->mmap_len,
			  strerror(ret));
		cq->err = ret;
		goto out;
	}
	munmap(cq->map, cq->map_len);
	rsw_cq_use(cq, ctrl, r->mmap_len, r->size);
out:
	pthread_mutex_unlock(&cq->lock);
	return ret;
}

/* Indexed by enum rdmap_sw_cqe_opcode. */
static const enum ibv_wc_opcode rsw_wc_opcode[] = {
	[RDMAP_SW_WC_SEND] = IBV_WC_SEND,
	[RDMAP_SW_WC_RDMA_WRITE] = IBV_WC_RDMA_WRITE,
	[RDMAP_SW_WC_RDMA_READ] = IBV_WC_RDMA_READ,
	[RDMAP_SW_WC_COMP_SWAP] = IBV_WC_COMP_SWAP,
	[RDMAP_SW_WC_FETCH_ADD] = IBV_WC_FETCH_ADD,
	/* libibverbs has no opcodes of their own for the masked atomics */
	[RDMAP_SW_WC_MASKED_COMP_SWAP] = IBV_WC_COMP_SWAP,
	[RDMAP_SW_WC_MASKED_FETCH_ADD] = IBV_WC_FETCH_ADD,
	[RDMAP_SW_WC_LOCAL_INV] = IBV_WC_LOCAL_INV,
	/* kernel QPs only; a user CQ shared with none never sees it */
	[RDMAP_SW_WC_REG_MR] = IBV_WC_DRIVER1,
	[RDMAP_SW_WC_BIND_MW] = IBV_WC_BIND_MW,
	[RDMAP_SW_WC_RECV] = IBV_WC_RECV,
	[RDMAP_SW_WC_RECV_RDMA_WITH_IMM] = IBV_WC_RECV_RDMA_WITH_IMM,
};

/* Indexed by enum rdmap_sw_cqe_status. */
static const enum ibv_wc_status rsw_wc_status[] = {
	[RDMAP_SW_WC_SUCCESS] = IBV_WC_SUCCESS,
	[RDMAP_SW_WC_LOC_LEN_ERR] = IBV_WC_LOC_LEN_ERR,
	[RDMAP_SW_WC_LOC_QP_OP_ERR] = IBV_WC_LOC_QP_OP_ERR,
	[RDMAP_SW_WC_LOC_PROT_ERR] = IBV_WC_LOC_PROT_ERR,
	[RDMAP_SW_WC_WR_FLUSH_ERR] = IBV_WC_WR_FLUSH_ERR,
	[RDMAP_SW_WC_MW_BIND_ERR] = IBV_WC_MW_BIND_ERR,
	[RDMAP_SW_WC_BAD_RESP_ERR] = IBV_WC_BAD_RESP_ERR,
	[RDMAP_SW_WC_LOC_ACCESS_ERR] = IBV_WC_LOC_ACCESS_ERR,
	[RDMAP_SW_WC_REM_INV_REQ_ERR] = IBV_WC_REM_INV_REQ_ERR,
	[RDMAP_SW_WC_REM_ACCESS_ERR] = IBV_WC_REM_ACCESS_ERR,
	[RDMAP_SW_WC_REM_OP_ERR] = IBV_WC_REM_OP_ERR,
	[RDMAP_SW_WC_RESP_TIMEOUT_ERR] = IBV_WC_RESP_TIMEOUT_ERR,
	[RDMAP_SW_WC_REM_ABORT_ERR] = IBV_WC_REM_ABORT_ERR,
	[RDMAP_SW_WC_FATAL_ERR] = IBV_WC_FATAL_ERR,
	[RDMAP_SW_WC_GENERAL_ERR] = IBV_WC_GENERAL_ERR,
};

#define RSW_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * Translate a copied entry.  A value we do not know (a newer kernel) turns
 * into a general error rather than a made-up success.
 */
static void rsw_cqe_to_wc(const struct rdmap_sw_cqe *cqe, struct ibv_wc *wc)
{
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = cqe->wr_id;
	wc->byte_len = cqe->byte_len;
	wc->qp_num = cqe->qp_num;
	wc->vendor_err = cqe->vendor_err;
	wc->status = IBV_WC_GENERAL_ERR;
	if (cqe->status < RSW_ARRAY_SIZE(rsw_wc_status))
		wc->status = rsw_wc_status[cqe->status];
	if (cqe->opcode < RSW_ARRAY_SIZE(rsw_wc_opcode))
		wc->opcode = rsw_wc_opcode[cqe->opcode];
	else
		wc->status = IBV_WC_GENERAL_ERR;

	if (cqe->flags & RDMAP_SW_CQE_WITH_IMM) {
		wc->wc_flags |= IBV_WC_WITH_IMM;
		wc->imm_data = cqe->ex_data;	/* already big-endian */
	} else if (cqe->flags & RDMAP_SW_CQE_WITH_INV) {
		wc->wc_flags |= IBV_WC_WITH_INV;
		wc->invalidated_rkey = cqe->ex_data;
	}
}

/* Say once, loudly, that the kernel found the ring full.  Lock held. */
static void rsw_cq_check_overrun(struct rsw_cq *cq)
{
	if (!cq->overflow_seen &&
	    (rsw_load_relaxed(&cq->ctrl->flags) & RDMAP_SW_CQ_F_OVERFLOW)) {
		cq->overflow_seen = true;
		verbs_err(verbs_get_ctx(cq->vcq.cq.context),
			  "CQ %p overran: completions were lost\n",
			  &cq->vcq.cq);
	}
}

int rsw_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
	struct rsw_cq *cq = to_rsw_cq(ibcq);
	struct rdmap_sw_cqe copy;
	uint32_t start;
	int n = 0;

	pthread_mutex_lock(&cq->lock);
	n = -cq->err;		/* ibv_poll_cq: negative on error */
	if (n) {
		pthread_mutex_unlock(&cq->lock);
		return n;
	}
	start = cq->cons;
	while (n < num_entries) {
		const struct rdmap_sw_cqe *cqe =
			&cq->ring[cq->cons & (cq->size - 1)];

		/* Acquire: the entry's body is read only after its seq. */
		if (rsw_load_acquire(&cqe->seq) != cq->cons)
			break;
		memcpy(&copy, cqe, sizeof(copy));
		rsw_cqe_to_wc(&copy, &wc[n++]);
		cq->cons++;
	}
	/* Release: the copies are done before the slots go back. */
	if (cq->cons != start)
		rsw_store_release(&cq->ctrl->cons, cq->cons);
	rsw_cq_check_overrun(cq);
	pthread_mutex_unlock(&cq->lock);
	return n;
}

/*
 * Raise ctrl.notify to the requested level, never lower it: the kernel may
 * clear it at any moment (compare-and-exchange), so this is a CAS loop too,
 * under the CQ's lock so that a resize never leaves the arm behind.
 * The full barrier orders the arm before the caller's next poll, which is
 * the consumer's half of the ABI's "signalled or seen" rule; no system call.
 */
int rsw_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct rsw_cq *cq = to_rsw_cq(ibcq);
	_Atomic(uint32_t) *notify;
	uint32_t want = solicited_only ? RDMAP_SW_CQ_NOTIFY_SOLICITED :
					 RDMAP_SW_CQ_NOTIFY_NEXT;
	uint32_t cur;
	int ret;

	/* Never arm a ring a resize is replacing. */
	pthread_mutex_lock(&cq->lock);
	ret = cq->err;
	if (ret) {
		pthread_mutex_unlock(&cq->lock);
		return ret;
	}
	notify = (_Atomic(uint32_t) *)&cq->ctrl->notify;
	cur = atomic_load_explicit(notify, memory_order_relaxed);
	while (cur < want &&
	       !atomic_compare_exchange_weak_explicit(notify, &cur, want,
						      memory_order_seq_cst,
						      memory_order_relaxed))
		;
	rsw_full_barrier();
	pthread_mutex_unlock(&cq->lock);
	return 0;
}

/* ------------------------------------------------- extended CQ polling */

/*
 * The extended poll API walks the ring in place: start_poll takes the
 * lock and the first entry, next_poll the following ones, end_poll hands
 * every entry taken back to the kernel at once and unlocks.  Each entry is
 * copied and translated as it is taken (the ring slot may be rewritten by
 * the kernel once it is handed back), and the read_* callbacks return
 * fields of that translation.
 */
static inline struct rsw_cq *to_rsw_cq_ex(struct ibv_cq_ex *cq)
{
	return container_of(cq, struct rsw_cq, vcq.cq_ex);
}

/* Take the entry at cq->cons into cur_wc; ENOENT when there is none. */
static int rsw_cq_ex_take(struct rsw_cq *cq)
{
	const struct rdmap_sw_cqe *cqe = &cq->ring[cq->cons & (cq->size - 1)];
	struct rdmap_sw_cqe copy;

	if (rsw_load_acquire(&cqe->seq) != cq->cons)
		return ENOENT;
	memcpy(&copy, cqe, sizeof(copy));
	rsw_cqe_to_wc(&copy, &cq->cur_wc);
	cq->cons++;
	cq->vcq.cq_ex.wr_id = cq->cur_wc.wr_id;
	cq->vcq.cq_ex.status = cq->cur_wc.status;
	return 0;
}

static int rsw_start_poll(struct ibv_cq_ex *ibcq, struct ibv_poll_cq_attr *attr)
{
	struct rsw_cq *cq = to_rsw_cq_ex(ibcq);
	int ret;

	if (attr->comp_mask)
		return EINVAL;
	pthread_mutex_lock(&cq->lock);
	cq->poll_start = cq->cons;
	ret = cq->err ? cq->err : rsw_cq_ex_take(cq);
	/* Nothing taken: the caller will not call end_poll. */
	if (ret)
		pthread_mutex_unlock(&cq->lock);
	return ret;
}

static int rsw_next_poll(struct ibv_cq_ex *ibcq)
{
	return rsw_cq_ex_take(to_rsw_cq_ex(ibcq));
}

static void rsw_end_poll(struct ibv_cq_ex *ibcq)
{
	struct rsw_cq *cq = to_rsw_cq_ex(ibcq);

	/* Release: the copies are done before the slots go back. */
	if (cq->cons != cq->poll_start)
		rsw_store_release(&cq->ctrl->cons, cq->cons);
	rsw_cq_check_overrun(cq);
	pthread_mutex_unlock(&cq->lock);
}

static enum ibv_wc_opcode rsw_read_opcode(struct ibv_cq_ex *ibcq)
{
	return to_rsw_cq_ex(ibcq)->cur_wc.opcode;
}

static uint32_t rsw_read_vendor_err(struct ibv_cq_ex *ibcq)
{
	return to_rsw_cq_ex(ibcq)->cur_wc.vendor_err;
}

static uint32_t rsw_read_byte_len(struct ibv_cq_ex *ibcq)
{
	return to_rsw_cq_ex(ibcq)->cur_wc.byte_len;
}

static __be32 rsw_read_imm_data(struct ibv_cq_ex *ibcq)
{
	const struct ibv_wc *wc = &to_rsw_cq_ex(ibcq)->cur_wc;

	/* The union holds the invalidated STag for IBV_WC_WITH_INV. */
	return wc->wc_flags & IBV_WC_WITH_IMM ? wc->imm_data : 0;
}

static uint32_t rsw_read_qp_num(struct ibv_cq_ex *ibcq)
{
	return to_rsw_cq_ex(ibcq)->cur_wc.qp_num;
}

static unsigned int rsw_read_wc_flags(struct ibv_cq_ex *ibcq)
{
	return to_rsw_cq_ex(ibcq)->cur_wc.wc_flags;
}

/* RC over a connection: no source QP, LIDs or service levels; all zero. */
static uint32_t rsw_read_zero32(struct ibv_cq_ex *ibcq)
{
	return 0;
}

static uint8_t rsw_read_zero8(struct ibv_cq_ex *ibcq)
{
	return 0;
}

/* What create_cq_ex accepts; anything else is EOPNOTSUPP. */
#define RSW_CQ_EX_WC_FLAGS	IBV_WC_STANDARD_FLAGS
#define RSW_CQ_EX_COMP_MASK	IBV_CQ_INIT_ATTR_MASK_FLAGS
/* A hint: the CQ keeps its lock, which costs nothing uncontended. */
#define RSW_CQ_EX_FLAGS		IBV_CREATE_CQ_ATTR_SINGLE_THREADED

static void rsw_cq_ex_init_ops(struct ibv_cq_ex *ex, uint64_t wc_flags)
{
	ex->start_poll = rsw_start_poll;
	ex->next_poll = rsw_next_poll;
	ex->end_poll = rsw_end_poll;
	ex->read_opcode = rsw_read_opcode;
	ex->read_vendor_err = rsw_read_vendor_err;
	ex->read_wc_flags = rsw_read_wc_flags;
	if (wc_flags & IBV_WC_EX_WITH_BYTE_LEN)
		ex->read_byte_len = rsw_read_byte_len;
	if (wc_flags & IBV_WC_EX_WITH_IMM)
		ex->read_imm_data = rsw_read_imm_data;
	if (wc_flags & IBV_WC_EX_WITH_QP_NUM)
		ex->read_qp_num = rsw_read_qp_num;
	if (wc_flags & IBV_WC_EX_WITH_SRC_QP)
		ex->read_src_qp = rsw_read_zero32;
	if (wc_flags & IBV_WC_EX_WITH_SLID)
		ex->read_slid = rsw_read_zero32;
	if (wc_flags & IBV_WC_EX_WITH_SL)
		ex->read_sl = rsw_read_zero8;
	if (wc_flags & IBV_WC_EX_WITH_DLID_PATH_BITS)
		ex->read_dlid_path_bits = rsw_read_zero8;
}

struct ibv_cq_ex *rsw_create_cq_ex(struct ibv_context *ctx,
				   struct ibv_cq_init_attr_ex *attr)
{
	struct rsw_cmd_create_cq_ex cmd = {};
	struct rsw_cmd_create_cq_ex_resp resp = {};
	struct rsw_cq *cq;
	int ret;

	if ((attr->wc_flags & ~(uint64_t)RSW_CQ_EX_WC_FLAGS) ||
	    (attr->comp_mask & ~(uint32_t)RSW_CQ_EX_COMP_MASK) ||
	    ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	     (attr->flags & ~(uint32_t)RSW_CQ_EX_FLAGS))) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	cq = rsw_cq_alloc();
	if (!cq)
		return NULL;
	/* libibverbs passes no flag of ours on: the hint stays here. */
	ret = ibv_cmd_create_cq_ex(ctx, attr, &cq->vcq, &cmd.ibv_cmd,
				   sizeof(cmd), &resp.ibv_resp, sizeof(resp), 0);
	if (!ret)
		ret = rsw_cq_setup(cq, ctx, &resp.drv_payload);
	if (ret) {
		rsw_cq_free(cq, ret);
		return NULL;
	}
	rsw_cq_ex_init_ops(&cq->vcq.cq_ex, attr->wc_flags);
	return &cq->vcq.cq_ex;
}
