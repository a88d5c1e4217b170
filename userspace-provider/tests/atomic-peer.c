// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * atomic-peer: an RFC 7306 atomic from an rdmap_sw QP to a peer that does
 * not implement RFC 7306 (upstream siw), in one process.
 *
 *   atomic-peer CLIENT_DEV CLIENT_IP SERVER_IP PORT
 *
 * The server listens on SERVER_IP (another device, e.g. siw0); the client
 * connects from CLIENT_IP (CLIENT_DEV, rsw0).  RFC 7306 leaves discovery
 * to the ULP, so the atomic goes out and the peer answers it with a
 * Terminate.  Checks, in order:
 *   - the connection works: an RDMA Write completes;
 *   - a FetchAdd completes in error within 10 s, and the Send posted
 *     behind it completes after it (sent or flushed);
 *   - the client's context gets a fatal QP event for its QP within 10 s;
 *   - the client QP is in ERROR and a new post is flushed, not hung,
 *     and nothing else completes;
 *   - teardown: every destroy succeeds.
 * Prints one TAP line per check; exits 0 only if every check passed.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#define TIMEOUT_S 10.0
#define BUF 4096

#include "wait.h"

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	char *buf;
};

static struct {
	struct rdma_event_channel *ech;
	struct rdma_cm_id *listen, *cid, *sid;
	struct side c, s;
} g;

static void side_init(struct side *x, struct ibv_context *ctx, int access)
{
	x->ctx = ctx;
	x->pd = ibv_alloc_pd(ctx);
	x->cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	x->buf = calloc(1, BUF);
	if (!x->pd || !x->cq || !x->buf)
		die("PD, CQ or buffer");
	x->mr = ibv_reg_mr(x->pd, x->buf, BUF, access);
	if (!x->mr)
		die("ibv_reg_mr");
}

static void addr_of(const char *ip, int port, struct sockaddr_in *a)
{
	memset(a, 0, sizeof(*a));
	a->sin_family = AF_INET;
	a->sin_port = htons(port);
	if (inet_pton(AF_INET, ip, &a->sin_addr) != 1) {
		errno = EINVAL;
		die("address");
	}
}

static void create_qp(struct rdma_cm_id *id, struct side *x)
{
	struct ibv_qp_init_attr attr = {
		.qp_type = IBV_QPT_RC, .send_cq = x->cq, .recv_cq = x->cq,
		.cap = { .max_send_wr = 8, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	if (rdma_create_qp(id, x->pd, &attr))
		die("rdma_create_qp");
}

static void connect_pair(const char *cdev, const char *cip, const char *sip,
			 int port)
{
	struct rdma_conn_param param = { .responder_resources = 1,
					 .initiator_depth = 1 };
	struct sockaddr_in src, dst;

	g.listen = listen_on(&g.ech, sip, port, 1, &dst);
	side_init(&g.s, g.listen->verbs, IBV_ACCESS_LOCAL_WRITE |
		  IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	addr_of(cip, 0, &src);
	if (rdma_create_id(g.ech, &g.cid, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(g.cid, (struct sockaddr *)&src,
			      (struct sockaddr *)&dst, 5000) ||
	    !wait_cm_on(g.ech, RDMA_CM_EVENT_ADDR_RESOLVED, g.cid, NULL) ||
	    rdma_resolve_route(g.cid, 5000) ||
	    !wait_cm_on(g.ech, RDMA_CM_EVENT_ROUTE_RESOLVED, g.cid, NULL))
		die("client address and route");
	if (!check(!strcmp(ibv_get_device_name(g.cid->verbs->device), cdev),
		   "client on %s (want %s), server on %s",
		   ibv_get_device_name(g.cid->verbs->device), cdev,
		   ibv_get_device_name(g.s.ctx->device)))
		die("wrong client device");
	side_init(&g.c, g.cid->verbs, IBV_ACCESS_LOCAL_WRITE);
	create_qp(g.cid, &g.c);
	if (rdma_connect(g.cid, &param) ||
	    !wait_cm_on(g.ech, RDMA_CM_EVENT_CONNECT_REQUEST, NULL, &g.sid))
		die("rdma_connect");
	create_qp(g.sid, &g.s);
	if (rdma_accept(g.sid, &param))
		die("rdma_accept");
	if (!check(wait_cm_pair(g.ech, RDMA_CM_EVENT_ESTABLISHED, g.sid,
				g.cid), "connection established"))
		die("connection");
}

static int post(enum ibv_wr_opcode op, uint64_t wr_id, uint32_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)g.c.buf, .length = len,
			       .lkey = g.c.mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .opcode = op, .sg_list = &sge, .num_sge = 1,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = (uintptr_t)g.s.buf + 64;
		wr.wr.atomic.rkey = g.s.mr->rkey;
		wr.wr.atomic.compare_add = 1;
	} else {
		wr.wr.rdma.remote_addr = (uintptr_t)g.s.buf;
		wr.wr.rdma.rkey = g.s.mr->rkey;
	}
	return ibv_post_send(g.cid->qp, &wr, &bad);
}

/* The client's async events until a fatal one for its QP, or none. */
static bool fatal_event(double *secs)
{
	struct pollfd pfd = { .fd = g.c.ctx->async_fd, .events = POLLIN };
	double start = now_s(), end = start + TIMEOUT_S;
	struct ibv_async_event ev;
	bool fatal;

	if (fcntl(pfd.fd, F_SETFL, fcntl(pfd.fd, F_GETFL) | O_NONBLOCK))
		die("O_NONBLOCK on the async fd");
	while (now_s() < end) {
		if (poll(&pfd, 1, 100) <= 0 || ibv_get_async_event(g.c.ctx, &ev))
			continue;
		fatal = ev.element.qp == g.cid->qp &&
			(ev.event_type == IBV_EVENT_QP_FATAL ||
			 ev.event_type == IBV_EVENT_QP_REQ_ERR ||
			 ev.event_type == IBV_EVENT_QP_ACCESS_ERR);
		printf("# async event %s\n", ibv_event_type_str(ev.event_type));
		ibv_ack_async_event(&ev);
		if (fatal) {
			*secs = now_s() - start;
			return true;
		}
	}
	return false;
}

/* The next completion on the client CQ: is it @wr_id with @want? */
static bool next_wc(uint64_t wr_id, bool want_ok, enum ibv_wc_status want,
		    struct ibv_wc *wc)
{
	if (!poll_one(g.c.cq, wc))
		return false;
	if (wc->wr_id != wr_id)
		return false;
	return want_ok ? wc->status == want : wc->status != IBV_WC_SUCCESS;
}

static void check_atomic_terminated(void)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;
	struct ibv_wc wc = {};
	double t0, secs = 0;
	bool ok;
	int ret;

	ret = post(IBV_WR_RDMA_WRITE, 1, 64);
	ok = !ret && next_wc(1, true, IBV_WC_SUCCESS, &wc);
	check(ok, "RDMA Write to the peer: %s", ibv_wc_status_str(wc.status));
	t0 = now_s();
	ret = post(IBV_WR_ATOMIC_FETCH_AND_ADD, 2, 8) ?: post(IBV_WR_SEND, 3, 8);
	check(!ret, "FetchAdd and a Send posted (%s)", strerror(ret));
	ok = next_wc(2, false, 0, &wc);
	check(ok, "FetchAdd completes in error (%s, vendor_err 0x%x) after %.2f s",
	      ibv_wc_status_str(wc.status), wc.vendor_err, now_s() - t0);
	/*
	 * The Send went out before the Terminate came back (a Send is
	 * complete once sent) or was flushed; either way it completes, in
	 * order after the atomic.
	 */
	ok = poll_one(g.c.cq, &wc) && wc.wr_id == 3 &&
	     (wc.status == IBV_WC_SUCCESS || wc.status == IBV_WC_WR_FLUSH_ERR);
	check(ok, "the Send behind it completes next: %s",
	      ibv_wc_status_str(wc.status));
	check(fatal_event(&secs), "fatal QP event on the client, %.2f s", secs);
	ret = ibv_query_qp(g.cid->qp, &attr, IBV_QP_STATE, &init);
	check(!ret && attr.qp_state == IBV_QPS_ERR, "client QP in ERROR (%d)",
	      ret ? -1 : (int)attr.qp_state);
	ret = post(IBV_WR_RDMA_WRITE, 4, 8);
	ok = !ret && next_wc(4, true, IBV_WC_WR_FLUSH_ERR, &wc);
	check(ok, "a later post is flushed: %s", ibv_wc_status_str(wc.status));
	check(cq_quiet(g.c.cq, 200), "no other completion on the client");
}

static void side_fini(struct side *x)
{
	check(!ibv_dereg_mr(x->mr) && !ibv_destroy_cq(x->cq) &&
	      !ibv_dealloc_pd(x->pd), "%s: MR, CQ and PD destroyed",
	      ibv_get_device_name(x->ctx->device));
	free(x->buf);
}

static void teardown(void)
{
	rdma_disconnect(g.cid);
	rdma_destroy_qp(g.cid);
	rdma_destroy_qp(g.sid);
	check(!rdma_destroy_id(g.cid) && !rdma_destroy_id(g.sid),
	      "both ids destroyed");
	side_fini(&g.c);
	side_fini(&g.s);
	rdma_destroy_id(g.listen);
	rdma_destroy_event_channel(g.ech);
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: %s CLIENT_DEV CLIENT_IP SERVER_IP PORT\n",
			argv[0]);
		return 2;
	}
	connect_pair(argv[1], argv[2], argv[3], atoi(argv[4]));
	check_atomic_terminated();
	teardown();
	printf("# %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
