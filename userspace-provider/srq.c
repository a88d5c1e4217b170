// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * rdmap_sw rdma-core provider: shared receive queues.
 *
 * The kernel hands out one mapping per SRQ at create_srq, laid out like a
 * QP's receive queue: struct rdmap_sw_wq_ctrl, then at
 * RDMAP_SW_WQ_RING_OFFSET the ring of struct rdmap_sw_rqe.  We produce
 * (fill the entry at tail, publish tail with release semantics, under the
 * SRQ's lock so that threads may post concurrently); the kernel copies an
 * entry out as soon as a QP takes it and moves ctrl.head past it.  Posting
 * is therefore never a system call.  ibv_modify_srq(IBV_SRQ_MAX_WR)
 * replaces the mapping, under the post lock.  QPs created with the SRQ get no
 * receive queue of their own: ibv_post_recv on them fails with EINVAL.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "rdmap_sw.h"

struct ibv_srq *rsw_create_srq(struct ibv_pd *pd,
			       struct ibv_srq_init_attr *attr)
{
	struct rsw_cmd_create_srq cmd = {};
	struct rsw_cmd_create_srq_resp resp = {};
	struct rsw_srq *srq;
	int ret;

	srq = calloc(1, sizeof(*srq));
	if (!srq) {
		errno = ENOMEM;
		return NULL;
	}
	ret = pthread_mutex_init(&srq->resize_lock, NULL);
	if (ret)
		goto err_free;
	ret = ibv_cmd_create_srq(pd, &srq->vsrq.srq, attr, &cmd.ibv_cmd,
				 sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_mutex;
	/* The kernel must map a ring; a zero size would be "no queue". */
	if (!resp.size) {
		ret = EPROTO;
		goto err_destroy;
	}
	ret = rsw_wq_map(&srq->rq, pd->context->cmd_fd, resp.offset, resp.len,
			 resp.size, sizeof(struct rdmap_sw_rqe), resp.max_sge);
	if (ret) {
		verbs_err(verbs_get_ctx(pd->context),
			  "cannot map SRQ (%u entries, %llu bytes): %s\n",
			  resp.size, (unsigned long long)resp.len,
			  strerror(ret));
		goto err_destroy;
	}
	attr->attr.max_wr = resp.size;
	attr->attr.max_sge = srq->rq.max_sge;
	return &srq->vsrq.srq;

err_destroy:
	ibv_cmd_destroy_srq(&srq->vsrq.srq);
err_mutex:
	pthread_mutex_destroy(&srq->resize_lock);
err_free:
	free(srq);
	errno = ret;
	return NULL;
}

/*
 * Switch to the ring a resize answered with: same indices (the kernel set
 * its ctrl.tail to ours), so only the mapping changes.  Posts are held
 * off (rq.err); the switch itself takes rq.lock.
 */
static int rsw_srq_remap(struct rsw_srq *srq, int cmd_fd,
			 const struct rdmap_sw_uresp_resize_srq *r)
{
	struct rsw_wq fresh = {};
	int ret;

	if (!r->size)
		return EPROTO;
	ret = rsw_wq_map(&fresh, cmd_fd, r->offset, r->len, r->size,
			 sizeof(struct rdmap_sw_rqe), r->max_sge);
	if (ret)
		return ret;
	if (fresh.tail != srq->rq.tail) {
		rsw_wq_unmap(&fresh);
		return EPROTO;
	}
	munmap(srq->rq.map, srq->rq.map_len);
	pthread_spin_lock(&srq->rq.lock);
	srq->rq.map = fresh.map;
	srq->rq.map_len = fresh.map_len;
	srq->rq.ctrl = fresh.ctrl;
	srq->rq.ring = fresh.ring;
	srq->rq.size = fresh.size;
	pthread_spin_unlock(&srq->rq.lock);
	pthread_spin_destroy(&fresh.lock);
	return 0;
}

/*
 * Hold posts off for a resize, or fail if the SRQ is lost.  The post lock
 * is never held across the system call: rq.err == EAGAIN under it keeps
 * entries out of the old ring instead, and posters then sleep on
 * resize_lock (taken first, so that they find it held).
 */
static int rsw_srq_hold_posts(struct rsw_srq *srq)
{
	int ret;

	pthread_mutex_lock(&srq->resize_lock);
	pthread_spin_lock(&srq->rq.lock);
	ret = srq->rq.err;
	if (!ret)
		srq->rq.err = EAGAIN;
	pthread_spin_unlock(&srq->rq.lock);
	if (ret)
		pthread_mutex_unlock(&srq->resize_lock);
	return ret;
}

/* Let posts go on, or fail for good with @err. */
static void rsw_srq_release_posts(struct rsw_srq *srq, int err)
{
	pthread_spin_lock(&srq->rq.lock);
	srq->rq.err = err;
	pthread_spin_unlock(&srq->rq.lock);
	pthread_mutex_unlock(&srq->resize_lock);
}

/*
 * IBV_SRQ_MAX_WR resizes (ABI header, shared receive queues): the kernel
 * copies the posted entries into a new ring and writes where it is to
 * the answer we point it at.  Posts are held off throughout, so no entry
 * of ours lands in the old ring after the kernel read its tail.  If the
 * kernel switched but the new ring cannot be mapped, the SRQ is lost to
 * us: we say so and every later post fails with the reason.
 */
int rsw_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
		   int mask)
{
	struct rsw_srq *srq = to_rsw_srq(ibsrq);
	struct rdmap_sw_uresp_resize_srq answer = {};
	struct rsw_cmd_modify_srq cmd = {};
	int ret, lost = 0;

	if (!(mask & IBV_SRQ_MAX_WR))
		return ibv_cmd_modify_srq(ibsrq, attr, mask, &cmd.ibv_cmd,
					  sizeof(cmd));
	cmd.response = (uintptr_t)&answer;
	ret = rsw_srq_hold_posts(srq);
	if (ret)
		return ret;
	ret = ibv_cmd_modify_srq(ibsrq, attr, mask, &cmd.ibv_cmd, sizeof(cmd));
	if (!ret) {
		ret = rsw_srq_remap(srq, ibsrq->context->cmd_fd, &answer);
		if (ret) {
			verbs_err(verbs_get_ctx(ibsrq->context),
				  "SRQ %p resized, but its new ring (%u entries, %llu bytes) cannot be used: %s\n",
				  ibsrq, answer.size,
				  (unsigned long long)answer.len, strerror(ret));
			lost = ret;
		}
	}
	rsw_srq_release_posts(srq, lost);
	return ret;
}

int rsw_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	struct ibv_query_srq cmd = {};

	return ibv_cmd_query_srq(srq, attr, &cmd, sizeof(cmd));
}

int rsw_destroy_srq(struct ibv_srq *ibsrq)
{
	struct rsw_srq *srq = to_rsw_srq(ibsrq);
	int ret;

	ret = ibv_cmd_destroy_srq(ibsrq);
	if (ret)
		return ret;
	rsw_wq_unmap(&srq->rq);
	pthread_mutex_destroy(&srq->resize_lock);
	free(srq);
	return 0;
}

int rsw_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
		      struct ibv_recv_wr **bad_wr)
{
	struct rsw_srq *srq = to_rsw_srq(ibsrq);
	bool posted;
	int ret;

	/* EAGAIN: a resize runs and nothing was posted; wait for its end. */
	while ((ret = rsw_wq_post_recv(&srq->rq, wr, bad_wr, &posted)) ==
	       EAGAIN) {
		pthread_mutex_lock(&srq->resize_lock);
		pthread_mutex_unlock(&srq->resize_lock);
	}
	return ret;
}
