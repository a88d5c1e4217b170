// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * verbs-smoke: the smallest libibverbs application that proves the rdmap_sw
 * provider serves a device.
 *
 *   verbs-smoke DEVICE [active|down]
 *
 * Finds DEVICE, checks that it is an iWARP RNIC, opens it, queries device
 * and port 1 (whose state must be the one given, default active), allocates
 * and frees a PD, then exercises the user rings without a peer:
 *   - a CQ on a completion channel: create, arm (solicited, then next),
 *     an empty poll, destroy;
 *   - reg_mr/dereg_mr of a malloc'd buffer;
 *   - an RC QP: create, modify to INIT, post receives until the ring is
 *     full (ENOMEM), work requests the provider must refuse locally
 *     (opcode, Read SGE count, inline size) with bad_wr set, then modify to
 *     ERROR: the kernel must flush every posted receive through the CQ in
 *     order (WR_FLUSH_ERR) and signal the armed channel; a send and a
 *     receive posted in ERROR come back flushed (the drain pattern);
 *   - the extended send API (ibv_wr_*): refused batches, an aborted one,
 *     a good one in ERROR flushed;
 *   - the extended CQ (ibv_create_cq_ex): unsupported fields refused,
 *     flushed receives read through ibv_start_poll/next_poll/end_poll.
 * Prints one line per check; exits 0 only if every check passed.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "tap.h"

static struct ibv_device *find_device(struct ibv_device **list,
				      const char *name)
{
	for (; *list; list++)
		if (!strcmp(ibv_get_device_name(*list), name))
			return *list;
	return NULL;
}

static void check_device_type(struct ibv_device *dev)
{
	check(dev->transport_type == IBV_TRANSPORT_IWARP,
	      "transport is iWARP (%d)", dev->transport_type);
	check(dev->node_type == IBV_NODE_RNIC,
	      "node type is RNIC (%s)", ibv_node_type_str(dev->node_type));
}

static void check_query_device(struct ibv_context *ctx)
{
	struct ibv_device_attr_ex attr;
	int ret;

	ret = ibv_query_device_ex(ctx, NULL, &attr);
	if (!check(!ret, "ibv_query_device_ex (%s)", strerror(ret)))
		return;
	check(attr.orig_attr.phys_port_cnt == 1, "one port (%u)",
	      attr.orig_attr.phys_port_cnt);
	printf("# fw_ver '%s' max_qp %d max_cq %d max_mr %d max_pd %d\n",
	       attr.orig_attr.fw_ver, attr.orig_attr.max_qp,
	       attr.orig_attr.max_cq, attr.orig_attr.max_mr,
	       attr.orig_attr.max_pd);
}

static int mtu_bytes(enum ibv_mtu mtu)
{
	return mtu ? 128 << mtu : 0;
}

static void check_query_port(struct ibv_context *ctx,
			     enum ibv_port_state want)
{
	struct ibv_port_attr attr;
	int ret;

	ret = ibv_query_port(ctx, 1, &attr);
	if (!check(!ret, "ibv_query_port 1 (%s)", strerror(ret)))
		return;
	check(attr.state == want, "port state %s (want %s)",
	      ibv_port_state_str(attr.state), ibv_port_state_str(want));
	check(attr.link_layer == IBV_LINK_LAYER_ETHERNET,
	      "link layer is Ethernet (%u)", attr.link_layer);
	printf("# active_mtu %d max_mtu %d gid_tbl_len %d\n",
	       mtu_bytes(attr.active_mtu), mtu_bytes(attr.max_mtu),
	       attr.gid_tbl_len);
}

static void check_mr(struct ibv_pd *pd)
{
	size_t len = 1 << 20;
	struct ibv_mr *mr;
	void *buf;
	int ret;

	buf = malloc(len);
	if (!check(buf != NULL, "malloc %zu", len))
		return;
	memset(buf, 0x5a, len);
	mr = ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (check(mr != NULL, "ibv_reg_mr 1 MiB (%s)",
		  mr ? "ok" : strerror(errno))) {
		check(mr->addr == buf && mr->length == len,
		      "MR covers the buffer (%p+%zu)", mr->addr, mr->length);
		printf("# lkey 0x%x rkey 0x%x\n", mr->lkey, mr->rkey);
		ret = ibv_dereg_mr(mr);
		check(!ret, "ibv_dereg_mr (%s)", strerror(ret));
	}
	free(buf);
}

static void check_pd(struct ibv_context *ctx)
{
	struct ibv_pd *pd;
	int ret;

	pd = ibv_alloc_pd(ctx);
	if (!check(pd != NULL, "ibv_alloc_pd (%s)", pd ? "ok" : strerror(errno)))
		return;
	check_mr(pd);
	ret = ibv_dealloc_pd(pd);
	check(!ret, "ibv_dealloc_pd (%s)", strerror(ret));
}

static void check_cq(struct ibv_context *ctx)
{
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_wc wc;
	int ret;

	ch = ibv_create_comp_channel(ctx);
	if (!check(ch != NULL, "ibv_create_comp_channel (%s)",
		   ch ? "ok" : strerror(errno)))
		return;
	cq = ibv_create_cq(ctx, 16, NULL, ch, 0);
	if (check(cq != NULL, "ibv_create_cq 16 (%s)",
		  cq ? "ok" : strerror(errno))) {
		check(cq->cqe >= 16, "CQ holds at least 16 entries (%d)",
		      cq->cqe);
		ret = ibv_req_notify_cq(cq, 1);
		check(!ret, "ibv_req_notify_cq solicited (%s)", strerror(ret));
		ret = ibv_req_notify_cq(cq, 0);
		check(!ret, "ibv_req_notify_cq next (%s)", strerror(ret));
		ret = ibv_poll_cq(cq, 1, &wc);
		check(ret == 0, "ibv_poll_cq on an empty CQ returns 0 (%d)",
		      ret);
		ret = ibv_destroy_cq(cq);
		check(!ret, "ibv_destroy_cq (%s)", strerror(ret));
	}
	ret = ibv_destroy_comp_channel(ch);
	check(!ret, "ibv_destroy_comp_channel (%s)", strerror(ret));
}

/* Sends the provider must refuse before anything reaches the ring. */
static void check_bad_sends(struct ibv_qp *qp, struct ibv_mr *mr,
			    uint32_t max_inline)
{
	struct ibv_sge sge[2] = {
		{ .addr = (uintptr_t)mr->addr, .length = 64, .lkey = mr->lkey },
		{ .addr = (uintptr_t)mr->addr + 64, .length = 64,
		  .lkey = mr->lkey },
	};
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = sge, .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad;
	int ret;

	wr.opcode = IBV_WR_SEND_WITH_IMM;
	bad = NULL;
	ret = ibv_post_send(qp, &wr, &bad);
	check(ret == EINVAL && bad == &wr,
	      "post_send SEND_WITH_IMM refused: EINVAL, bad_wr set (%s)",
	      strerror(ret));

	wr.opcode = IBV_WR_RDMA_READ;
	wr.num_sge = 2;
	wr.wr.rdma.remote_addr = (uintptr_t)mr->addr;
	wr.wr.rdma.rkey = mr->rkey;
	bad = NULL;
	ret = ibv_post_send(qp, &wr, &bad);
	check(ret == EINVAL && bad == &wr,
	      "post_send RDMA_READ with 2 SGEs refused (%s)", strerror(ret));

	wr.opcode = IBV_WR_SEND;
	wr.num_sge = 1;
	wr.send_flags |= IBV_SEND_INLINE;
	sge[0].length = max_inline + 1;
	bad = NULL;
	ret = ibv_post_send(qp, &wr, &bad);
	check(ret == EINVAL && bad == &wr,
	      "post_send inline %u > max_inline %u refused (%s)",
	      sge[0].length, max_inline, strerror(ret));
}

/* Post receives (wr_id 100, 101, ...) until the ring is full. */
static int fill_rq(struct ibv_qp *qp, struct ibv_mr *mr, int max)
{
	struct ibv_sge sge = { .length = 256, .lkey = mr->lkey };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;
	int n, ret = 0;

	for (n = 0; n < max; n++) {
		wr.wr_id = 100 + n;
		sge.addr = (uintptr_t)mr->addr + 256 * (n % 16);
		bad = NULL;
		ret = ibv_post_recv(qp, &wr, &bad);
		if (ret)
			break;
	}
	check(n >= 1, "ibv_post_recv took %d receives", n);
	check(ret == ENOMEM && bad == &wr,
	      "receive %d refused with ENOMEM, bad_wr set (%s)", n + 1,
	      strerror(ret));
	return n;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The channel must fire within 5 s; then ack the event. */
static void wait_cq_event(struct ibv_comp_channel *ch, struct ibv_cq *cq)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct ibv_cq *ev_cq = NULL;
	void *ev_ctx;
	int ret;

	ret = poll(&pfd, 1, 5000);
	if (!check(ret == 1, "completion channel readable within 5 s (%d)",
		   ret))
		return;
	ret = ibv_get_cq_event(ch, &ev_cq, &ev_ctx);
	check(!ret && ev_cq == cq, "ibv_get_cq_event names our CQ (%d)", ret);
	if (!ret)
		ibv_ack_cq_events(ev_cq, 1);
}

/* Collect @n flushed receives, in order, within 5 s. */
static void check_flushed(struct ibv_cq *cq, struct ibv_qp *qp, int n)
{
	double deadline = now_s() + 5;
	int got = 0, bad = 0, ret;
	struct ibv_wc wc[8];

	while (got < n && now_s() < deadline) {
		ret = ibv_poll_cq(cq, 8, wc);
		if (ret < 0)
			break;
		for (int i = 0; i < ret; i++, got++) {
			if (wc[i].wr_id != (uint64_t)(100 + got) ||
			    wc[i].status != IBV_WC_WR_FLUSH_ERR ||
			    wc[i].opcode != IBV_WC_RECV ||
			    wc[i].qp_num != qp->qp_num) {
				if (!bad++)
					printf("# completion %d: wr_id %llu status %s opcode %d qp %u\n",
					       got,
					       (unsigned long long)wc[i].wr_id,
					       ibv_wc_status_str(wc[i].status),
					       wc[i].opcode, wc[i].qp_num);
			}
		}
	}
	check(got == n, "%d of %d receives completed after ERROR", got, n);
	check(!bad, "all flushed in order: WR_FLUSH_ERR, RECV, our QP (%d bad)",
	      bad);
	ret = ibv_poll_cq(cq, 8, wc);
	check(ret == 0, "nothing more in the CQ (%d)", ret);
}

/* One completion for @wr_id within 5 s: flushed, with @opcode. */
static void expect_flushed(struct ibv_cq *cq, uint64_t wr_id,
			   enum ibv_wc_opcode opcode, const char *what)
{
	double deadline = now_s() + 5;
	struct ibv_wc wc;
	int ret = 0;

	while (now_s() < deadline) {
		ret = ibv_poll_cq(cq, 1, &wc);
		if (ret)
			break;
	}
	if (!check(ret == 1, "%s: one completion within 5 s (%d)", what, ret))
		return;
	check(wc.wr_id == wr_id && wc.status == IBV_WC_WR_FLUSH_ERR &&
	      wc.opcode == opcode,
	      "%s: wr_id %llu, %s, opcode %d", what,
	      (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status),
	      wc.opcode);
}

/* In ERROR a send still goes through the ring and the doorbell: flushed. */
static void check_send_in_error(struct ibv_qp *qp, struct ibv_cq *cq,
				struct ibv_mr *mr)
{
	struct ibv_sge sge = { .addr = (uintptr_t)mr->addr, .length = 16,
			       .lkey = mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 7, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad = NULL;
	int ret;

	ret = ibv_post_send(qp, &wr, &bad);
	check(!ret, "ibv_post_send SEND in ERROR (%s)", strerror(ret));
	if (!ret)
		expect_flushed(cq, 7, IBV_WC_SEND, "send posted in ERROR");
}

/* In ERROR a receive is flushed too (how a QP is drained). */
static void check_recv_in_error(struct ibv_qp *qp, struct ibv_cq *cq,
				struct ibv_mr *mr)
{
	struct ibv_sge sge = { .addr = (uintptr_t)mr->addr, .length = 16,
			       .lkey = mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 8, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad = NULL;
	int ret;

	ret = ibv_post_recv(qp, &wr, &bad);
	check(!ret, "ibv_post_recv in ERROR (%s)", strerror(ret));
	if (!ret)
		expect_flushed(cq, 8, IBV_WC_RECV, "receive posted in ERROR");
}

/*
 * The extended send API: local refusals fail the whole batch at
 * wr_complete; a good batch posted in ERROR comes back flushed.
 */
static void check_qp_ex(struct ibv_context *ctx, struct ibv_pd *pd,
			struct ibv_cq *cq, struct ibv_mr *mr)
{
	struct ibv_qp_init_attr_ex init = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 2, .max_recv_sge = 1,
			 .max_inline_data = 32 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = pd,
		.send_ops_flags = IBV_QP_EX_WITH_SEND |
				  IBV_QP_EX_WITH_SEND_WITH_IMM,
	};
	struct ibv_sge sges[2] = {
		{ .addr = (uintptr_t)mr->addr, .length = 8, .lkey = mr->lkey },
		{ .addr = (uintptr_t)mr->addr + 8, .length = 8,
		  .lkey = mr->lkey },
	};
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
	char big[512] = "";
	struct ibv_qp_ex *qpx;
	struct ibv_qp *qp;
	int ret;

	errno = 0;
	qp = ibv_create_qp_ex(ctx, &init);
	check(!qp && errno == EOPNOTSUPP,
	      "ibv_create_qp_ex with SEND_WITH_IMM refused (%s)",
	      qp ? "it succeeded" : strerror(errno));
	if (qp)
		ibv_destroy_qp(qp);

	init.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE |
			      IBV_QP_EX_WITH_RDMA_READ;
	qp = ibv_create_qp_ex(ctx, &init);
	if (!check(qp != NULL, "ibv_create_qp_ex SEND|WRITE|READ (%s)",
		   qp ? "ok" : strerror(errno)))
		return;
	qpx = ibv_qp_to_qp_ex(qp);
	if (!check(qpx != NULL, "ibv_qp_to_qp_ex"))
		goto out;

	ibv_wr_start(qpx);
	qpx->wr_id = 1;
	qpx->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
	ibv_wr_send(qpx);
	ibv_wr_set_inline_data(qpx, big, init.cap.max_inline_data + 1);
	ret = ibv_wr_complete(qpx);
	check(ret == EINVAL, "wr batch with oversized inline data: EINVAL (%s)",
	      strerror(ret));

	ibv_wr_start(qpx);
	qpx->wr_id = 2;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_read(qpx, mr->rkey, (uintptr_t)mr->addr);
	ibv_wr_set_sge_list(qpx, 2, sges);
	ret = ibv_wr_complete(qpx);
	check(ret == EINVAL, "wr batch with a 2-SGE Read: EINVAL (%s)",
	      strerror(ret));

	ibv_wr_start(qpx);
	qpx->wr_id = 3;
	ibv_wr_send(qpx);
	ibv_wr_set_sge_list(qpx, 2, sges);
	ibv_wr_abort(qpx);

	ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE);
	check(!ret, "ibv_modify_qp ERROR (%s)", strerror(ret));
	ibv_wr_start(qpx);
	qpx->wr_id = 4;
	qpx->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
	ibv_wr_send(qpx);
	ibv_wr_set_inline_data(qpx, big, 16);
	ret = ibv_wr_complete(qpx);
	check(!ret, "wr batch (inline send) in ERROR (%s)", strerror(ret));
	if (!ret)
		expect_flushed(cq, 4, IBV_WC_SEND, "wr_send in ERROR");
	check(ibv_poll_cq(cq, 1, (struct ibv_wc[1]){}) == 0,
	      "the refused and aborted batches left nothing in the CQ");
out:
	ret = ibv_destroy_qp(qp);
	check(!ret, "ibv_destroy_qp (ex) (%s)", strerror(ret));
}

static void check_qp_rings(struct ibv_pd *pd, struct ibv_cq *cq,
			   struct ibv_comp_channel *ch, struct ibv_mr *mr)
{
	struct ibv_qp_init_attr init = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 2, .max_recv_sge = 2,
			 .max_inline_data = 64 },
	};
	struct ibv_qp_attr attr = {};
	struct ibv_qp_init_attr qinit;
	struct ibv_qp *qp;
	int ret, posted;

	qp = ibv_create_qp(pd, &init);
	if (!check(qp != NULL, "ibv_create_qp RC (%s)",
		   qp ? "ok" : strerror(errno)))
		return;
	check(init.cap.max_send_wr >= 16 && init.cap.max_recv_wr >= 16 &&
	      init.cap.max_send_sge >= 2 && init.cap.max_recv_sge >= 2 &&
	      init.cap.max_inline_data >= 64,
	      "caps granted: wr %u/%u sge %u/%u inline %u",
	      init.cap.max_send_wr, init.cap.max_recv_wr,
	      init.cap.max_send_sge, init.cap.max_recv_sge,
	      init.cap.max_inline_data);

	attr.qp_state = IBV_QPS_INIT;
	attr.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS);
	check(!ret, "ibv_modify_qp INIT (%s)", strerror(ret));
	ret = ibv_query_qp(qp, &attr, IBV_QP_STATE, &qinit);
	check(!ret && attr.qp_state == IBV_QPS_INIT,
	      "ibv_query_qp: INIT (%s, state %d)", strerror(ret),
	      attr.qp_state);

	posted = fill_rq(qp, mr, 1 << 16);
	check(posted >= (int)init.cap.max_recv_wr,
	      "receive ring holds max_recv_wr %u (took %d)",
	      init.cap.max_recv_wr, posted);
	check_bad_sends(qp, mr, init.cap.max_inline_data);

	ret = ibv_req_notify_cq(cq, 0);
	check(!ret, "ibv_req_notify_cq next (%s)", strerror(ret));
	attr.qp_state = IBV_QPS_ERR;
	ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE);
	check(!ret, "ibv_modify_qp ERROR (%s)", strerror(ret));
	wait_cq_event(ch, cq);
	check_flushed(cq, qp, posted);
	check_send_in_error(qp, cq, mr);
	check_recv_in_error(qp, cq, mr);

	ret = ibv_destroy_qp(qp);
	check(!ret, "ibv_destroy_qp (%s)", strerror(ret));
}

static void expect_cq_ex_refused(struct ibv_context *ctx,
				 struct ibv_cq_init_attr_ex *attr,
				 const char *what)
{
	struct ibv_cq_ex *cq = ibv_create_cq_ex(ctx, attr);

	check(!cq && errno == EOPNOTSUPP, "ibv_create_cq_ex %s: EOPNOTSUPP (%s)",
	      what, cq ? "created" : strerror(errno));
	if (cq)
		ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
}

/*
 * The extended CQ: unsupported fields refused, an empty start_poll, then
 * receives flushed into it (a QP moved to ERROR) read back through
 * ibv_start_poll/ibv_next_poll/ibv_end_poll, in two batches so that
 * end_poll's hand-back is exercised; ibv_poll_cq sees nothing left.
 */
static void check_cq_ex(struct ibv_context *ctx, struct ibv_pd *pd,
			struct ibv_mr *mr)
{
	struct ibv_cq_init_attr_ex cattr = {
		.cqe = 1 << 16,
		.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_QP_NUM |
			    IBV_WC_EX_WITH_IMM,
		.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS,
		.flags = IBV_CREATE_CQ_ATTR_SINGLE_THREADED,
	};
	struct ibv_cq_init_attr_ex bad = { .cqe = 16 };
	struct ibv_poll_cq_attr pattr = {};
	struct ibv_qp_init_attr qattr = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 64,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr mattr = {};
	int n, got = 0, wrong = 0, batch, ret;
	struct ibv_cq_ex *cq;
	struct ibv_wc wc;
	struct ibv_qp *qp;

	bad.wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
	expect_cq_ex_refused(ctx, &bad, "with completion timestamps");
	bad.wc_flags = 0;
	bad.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS;
	bad.flags = IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN;
	expect_cq_ex_refused(ctx, &bad, "ignoring overruns");

	cq = ibv_create_cq_ex(ctx, &cattr);
	if (!check(cq != NULL, "ibv_create_cq_ex byte_len|qp_num|imm (%s)",
		   cq ? "ok" : strerror(errno)))
		return;
	ret = ibv_start_poll(cq, &pattr);
	check(ret == ENOENT, "ibv_start_poll on an empty CQ: ENOENT (%d)",
	      ret);

	qattr.send_cq = ibv_cq_ex_to_cq(cq);
	qattr.recv_cq = ibv_cq_ex_to_cq(cq);
	qp = ibv_create_qp(pd, &qattr);
	if (!check(qp != NULL, "ibv_create_qp on the extended CQ (%s)",
		   qp ? "ok" : strerror(errno)))
		goto out_cq;
	mattr.qp_state = IBV_QPS_INIT;
	ret = ibv_modify_qp(qp, &mattr, IBV_QP_STATE);
	check(!ret, "modify to INIT (%s)", strerror(ret));
	for (n = 0; n < 40; n++) {
		struct ibv_sge sge = {
			.addr = (uintptr_t)mr->addr, .length = 64,
			.lkey = mr->lkey,
		};
		struct ibv_recv_wr wr = {
			.wr_id = 100 + n, .sg_list = &sge, .num_sge = 1,
		};
		struct ibv_recv_wr *bad_wr;

		if (ibv_post_recv(qp, &wr, &bad_wr))
			break;
	}
	check(n == 40, "40 receives posted (%d)", n);
	mattr.qp_state = IBV_QPS_ERR;
	ret = ibv_modify_qp(qp, &mattr, IBV_QP_STATE);
	check(!ret, "modify to ERROR (%s)", strerror(ret));

	/* Two batches: up to 7 entries, end_poll, then the rest. */
	for (batch = 0; batch < 2 && got < n; batch++) {
		double deadline = now_s() + 5;

		do
			ret = ibv_start_poll(cq, &pattr);
		while (ret == ENOENT && now_s() < deadline);
		if (!check(!ret, "batch %d: ibv_start_poll (%d)", batch, ret))
			break;
		do {
			if (cq->wr_id != (uint64_t)(100 + got) ||
			    cq->status != IBV_WC_WR_FLUSH_ERR ||
			    ibv_wc_read_opcode(cq) != IBV_WC_RECV ||
			    ibv_wc_read_qp_num(cq) != qp->qp_num ||
			    (ibv_wc_read_wc_flags(cq) & IBV_WC_WITH_IMM)) {
				if (!wrong++)
					printf("# entry %d: wr_id %llu status %s opcode %d qp %u\n",
					       got,
					       (unsigned long long)cq->wr_id,
					       ibv_wc_status_str(cq->status),
					       ibv_wc_read_opcode(cq),
					       ibv_wc_read_qp_num(cq));
			}
			(void)ibv_wc_read_byte_len(cq);
			got++;
			if (batch == 0 && got == 7)
				break;
			ret = ibv_next_poll(cq);
		} while (!ret && got < n);
		ibv_end_poll(cq);
	}
	check(got == n, "%d of %d flushed receives read via start/next_poll",
	      got, n);
	check(!wrong, "in order: WR_FLUSH_ERR, RECV, our QP (%d wrong)",
	      wrong);
	ret = ibv_poll_cq(ibv_cq_ex_to_cq(cq), 1, &wc);
	check(ret == 0, "ibv_poll_cq finds the entries handed back (%d)",
	      ret);
	check(!ibv_destroy_qp(qp), "ibv_destroy_qp");
out_cq:
	check(!ibv_destroy_cq(ibv_cq_ex_to_cq(cq)), "ibv_destroy_cq (extended)");
}

static void check_qp(struct ibv_context *ctx)
{
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq = NULL;
	struct ibv_mr *mr = NULL;
	struct ibv_pd *pd;
	size_t len = 4096 * 4;
	void *buf;

	pd = ibv_alloc_pd(ctx);
	ch = ibv_create_comp_channel(ctx);
	buf = calloc(1, len);
	if (!check(pd && ch && buf, "PD, channel and buffer for the QP test"))
		goto out;
	/* Room for the flushes of any receive ring the kernel grants. */
	cq = ibv_create_cq(ctx, 1 << 16, NULL, ch, 0);
	if (!check(cq != NULL, "ibv_create_cq 65536 (%s)",
		   cq ? "ok" : strerror(errno)))
		goto out;
	mr = ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE);
	if (!check(mr != NULL, "ibv_reg_mr (%s)", mr ? "ok" : strerror(errno)))
		goto out;
	check_qp_rings(pd, cq, ch, mr);
	check_qp_ex(ctx, pd, cq, mr);
	check_cq_ex(ctx, pd, mr);
out:
	if (mr)
		check(!ibv_dereg_mr(mr), "ibv_dereg_mr");
	if (cq)
		check(!ibv_destroy_cq(cq), "ibv_destroy_cq");
	if (ch)
		check(!ibv_destroy_comp_channel(ch), "ibv_destroy_comp_channel");
	if (pd)
		check(!ibv_dealloc_pd(pd), "ibv_dealloc_pd");
	free(buf);
}

static int parse_state(const char *arg, enum ibv_port_state *state)
{
	if (!strcmp(arg, "active"))
		*state = IBV_PORT_ACTIVE;
	else if (!strcmp(arg, "down"))
		*state = IBV_PORT_DOWN;
	else
		return -1;
	return 0;
}

static void run(struct ibv_device *dev, enum ibv_port_state want)
{
	struct ibv_context *ctx;
	int ret;

	check_device_type(dev);
	ctx = ibv_open_device(dev);
	if (!check(ctx != NULL, "ibv_open_device (%s)",
		   ctx ? "ok" : strerror(errno)))
		return;
	check_query_device(ctx);
	check_query_port(ctx, want);
	check_pd(ctx);
	check_cq(ctx);
	check_qp(ctx);
	ret = ibv_close_device(ctx);
	check(!ret, "ibv_close_device (%s)", strerror(ret));
}

int main(int argc, char **argv)
{
	enum ibv_port_state want = IBV_PORT_ACTIVE;
	struct ibv_device **list, *dev;

	if (argc < 2 || argc > 3 ||
	    (argc == 3 && parse_state(argv[2], &want))) {
		fprintf(stderr, "usage: %s DEVICE [active|down]\n", argv[0]);
		return 2;
	}

	list = ibv_get_device_list(NULL);
	if (!check(list != NULL, "ibv_get_device_list (%s)",
		   list ? "ok" : strerror(errno)))
		return 1;
	dev = find_device(list, argv[1]);
	if (check(dev != NULL, "device %s is listed", argv[1]))
		run(dev, want);
	ibv_free_device_list(list);

	printf("# %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
