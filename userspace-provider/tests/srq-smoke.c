// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * srq-smoke: shared receive queues of the rdmap_sw provider over real
 * connections (rdma_cm on the local address of an rdmap_sw device).
 *
 *   srq-smoke IP [PORT]
 *
 * One process plays both ends.  A listener on IP:PORT accepts RC
 * connections whose QPs all take their receives from one user SRQ, each
 * with its own receive CQ; the clients are ordinary QPs.  Checks, in order:
 *   - create/query SRQ, QPs with it; ibv_post_recv on such a QP fails;
 *   - Sends from two connections arrive in the SRQ's entries in posting
 *     order, each on its own QP's CQ with the right qp_num, byte_len and
 *     data, also after a resize (IBV_SRQ_MAX_WR) with six entries
 *     posted; the armed SRQ limit raises IBV_EVENT_SRQ_LIMIT_REACHED
 *     (ibv_get_async_event) once, and query shows it disarmed;
 *   - a garbage entry written straight into the mapped ring (struct
 *     rdmap_sw_rqe with num_sge beyond the SRQ's max_sge, ABI header)
 *     fails only the QP that takes it (LOC_QP_OP_ERR on its CQ, then
 *     IBV_EVENT_QP_LAST_WQE_REACHED), while the other QP keeps receiving;
 *   - a receiving QP moved to ERROR while a 64 MiB Send is arriving (the
 *     SRQ's ctrl.head shows the entry taken): that entry completes
 *     WR_FLUSH_ERR on its QP's CQ (or, if the whole message beat the
 *     abort, SUCCESS: reported as not exercised, not failed), the
 *     QP gets LAST_WQE_REACHED, and entries it never took are not flushed:
 *     a third connection receives into them.
 * Prints one line per check; exits 0 only if every check passed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

#include <rdma/rdma_cma.h>

/* The provider's SRQ object, to find the mapped ring (garbage check). */
#include "../rdmap_sw.h"

#define NCONN 3
#define SLOT 8192			/* receive buffer per SRQ entry */
#define NSLOT 16
#define BIG (64 * 1024 * 1024)		/* the Send that is aborted */
#define TIMEOUT_S 60.0

#include "wait.h"

/* Everything both ends share: one device context, PD, SRQ and MRs. */
static struct {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_srq *srq;
	char *rbuf;			/* NSLOT receive slots */
	struct ibv_mr *rmr;
	char *sbuf;			/* client send buffer */
	struct ibv_mr *smr;
	char *bbuf;			/* receive buffer of the big Send */
	struct ibv_mr *bmr;
	struct sockaddr_in addr;
} g;

struct conn {
	struct rdma_cm_id *cid;		/* client end */
	struct rdma_cm_id *sid;		/* server end, its QP on the SRQ */
	struct ibv_cq *ccq;		/* client send + receive CQ */
	struct ibv_cq *rcq;		/* server receive CQ */
	struct ibv_cq *scq;		/* server send CQ */
};

static struct conn conns[NCONN];

/*
 * The next asynchronous event of @type for @obj (a QP or SRQ); others are
 * acked and noted.  False on timeout.
 */
static bool wait_async(enum ibv_event_type type, void *obj, double timeout)
{
	struct pollfd pfd = { .fd = g.ctx->async_fd, .events = POLLIN };
	double end = now_s() + timeout;
	struct ibv_async_event ev;
	void *el;

	while (now_s() < end) {
		if (poll(&pfd, 1, 100) <= 0)
			continue;
		if (ibv_get_async_event(g.ctx, &ev))
			return false;
		el = ev.event_type == IBV_EVENT_SRQ_LIMIT_REACHED ||
		     ev.event_type == IBV_EVENT_SRQ_ERR ?
		     (void *)ev.element.srq : (void *)ev.element.qp;
		ibv_ack_async_event(&ev);
		if (ev.event_type == type && el == obj)
			return true;
		printf("# async event %s while waiting for %s\n",
		       ibv_event_type_str(ev.event_type),
		       ibv_event_type_str(type));
	}
	return false;
}

/* Is an asynchronous event pending (without consuming it)? */
static bool async_pending(int ms)
{
	struct pollfd pfd = { .fd = g.ctx->async_fd, .events = POLLIN };

	return poll(&pfd, 1, ms) > 0;
}

static void setup_listener(const char *ip, int port)
{
	struct ibv_srq_init_attr sattr = {
		.attr = { .max_wr = NSLOT, .max_sge = 2 },
	};
	struct ibv_srq_attr qattr = {};
	int n;

	g.listen = listen_on(&g.ch, ip, port, NCONN, &g.addr);
	g.ctx = g.listen->verbs;
	printf("# device %s\n", ibv_get_device_name(g.ctx->device));
	g.pd = ibv_alloc_pd(g.ctx);
	if (!g.pd)
		die("ibv_alloc_pd");
	g.rbuf = calloc(NSLOT, SLOT);
	g.sbuf = calloc(1, BIG);
	g.bbuf = calloc(1, BIG);
	if (!g.rbuf || !g.sbuf || !g.bbuf)
		die("calloc");
	g.rmr = ibv_reg_mr(g.pd, g.rbuf, (size_t)NSLOT * SLOT,
			   IBV_ACCESS_LOCAL_WRITE);
	g.smr = ibv_reg_mr(g.pd, g.sbuf, BIG, IBV_ACCESS_LOCAL_WRITE);
	g.bmr = ibv_reg_mr(g.pd, g.bbuf, BIG, IBV_ACCESS_LOCAL_WRITE);
	if (!g.rmr || !g.smr || !g.bmr)
		die("ibv_reg_mr");
	g.srq = ibv_create_srq(g.pd, &sattr);
	if (!check(g.srq != NULL, "ibv_create_srq (%s)",
		   g.srq ? "ok" : strerror(errno)))
		die("ibv_create_srq");
	n = ibv_query_srq(g.srq, &qattr);
	check(!n && qattr.max_wr >= NSLOT && qattr.max_sge == 2 &&
	      qattr.srq_limit == 0,
	      "ibv_query_srq (%d): max_wr %u max_sge %u limit %u", n,
	      qattr.max_wr, qattr.max_sge, qattr.srq_limit);
}

static struct ibv_cq *new_cq(int n)
{
	struct ibv_cq *cq = ibv_create_cq(g.ctx, n, NULL, NULL, 0);

	if (!cq)
		die("ibv_create_cq");
	return cq;
}

/* Connect client @i to the listener; the server's QP uses the SRQ. */
static void connect_pair(int i)
{
	struct conn *c = &conns[i];
	struct rdma_conn_param param = { .responder_resources = 1,
					 .initiator_depth = 1 };
	struct ibv_qp_init_attr cattr = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_init_attr sattr = cattr;
	struct ibv_recv_wr rwr = { .wr_id = 1 }, *bad = NULL;
	int n;

	if (rdma_create_id(g.ch, &c->cid, NULL, RDMA_PS_TCP))
		die("rdma_create_id (client)");
	resolve_on(g.ch, c->cid, NULL, &g.addr, g.ctx);
	c->ccq = new_cq(32);
	cattr.send_cq = cattr.recv_cq = c->ccq;
	if (rdma_create_qp(c->cid, g.pd, &cattr))
		die("rdma_create_qp (client)");
	if (rdma_connect(c->cid, &param))
		die("rdma_connect");
	if (!wait_cm_on(g.ch, RDMA_CM_EVENT_CONNECT_REQUEST, NULL, &c->sid))
		die("no CONNECT_REQUEST");

	c->rcq = new_cq(32);
	c->scq = new_cq(16);
	sattr.send_cq = c->scq;
	sattr.recv_cq = c->rcq;
	sattr.srq = g.srq;
	sattr.cap.max_recv_wr = 0;
	sattr.cap.max_recv_sge = 0;
	n = rdma_create_qp(c->sid, g.pd, &sattr);
	if (!check(!n, "connection %d: server QP with the SRQ created (%s)", i,
		   n ? strerror(errno) : "ok"))
		die("rdma_create_qp (server)");
	n = ibv_post_recv(c->sid->qp, &rwr, &bad);
	check(n == EINVAL && bad == &rwr,
	      "connection %d: ibv_post_recv on the SRQ QP refused (%d)", i, n);
	if (rdma_accept(c->sid, &param))
		die("rdma_accept");
	if (!wait_cm_pair(g.ch, RDMA_CM_EVENT_ESTABLISHED, c->sid, c->cid))
		die("connection not established");
	check(true, "connection %d established (server QP %u)", i,
	      c->sid->qp->qp_num);
}

/* Post SRQ entry for slot @slot with wr_id @wr_id, two SGEs. */
static bool post_srq(uint64_t wr_id, int slot)
{
	struct ibv_sge sge[2] = {
		{ .addr = (uintptr_t)g.rbuf + (size_t)slot * SLOT,
		  .length = SLOT / 2, .lkey = g.rmr->lkey },
		{ .addr = (uintptr_t)g.rbuf + (size_t)slot * SLOT + SLOT / 2,
		  .length = SLOT / 2, .lkey = g.rmr->lkey },
	};
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = sge,
				  .num_sge = 2 }, *bad = NULL;

	return ibv_post_srq_recv(g.srq, &wr, &bad) == 0;
}

static void fill_msg(char *p, uint32_t len, int conn, int k)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		p[i] = (char)(conn * 37 + k * 11 + i);
}

static bool msg_ok(const char *p, uint32_t len, int conn, int k)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		if (p[i] != (char)(conn * 37 + k * 11 + i))
			return false;
	return true;
}

static uint32_t msg_len(int conn, int k)
{
	return 1000 + 2500 * conn + 517 * k;	/* some span both SGEs */
}

/* Client @i sends message @k of @len bytes; waits for its completion. */
static bool send_msg(int i, int k, uint32_t len, bool wait)
{
	struct ibv_sge sge = { .addr = (uintptr_t)g.sbuf, .length = len,
			       .lkey = g.smr->lkey };
	struct ibv_send_wr wr = { .wr_id = 100 + k, .sg_list = &sge,
				  .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;

	fill_msg(g.sbuf, len, i, k);
	if (ibv_post_send(conns[i].cid->qp, &wr, &bad))
		return false;
	if (!wait)
		return true;
	return poll_one(conns[i].ccq, &wc) && wc.status == IBV_WC_SUCCESS;
}

/*
 * Receive message @k of connection @i on its server QP's CQ; the SRQ entry
 * it landed in must be @want_wr_id (slot = wr_id - 1000).
 */
static void expect_msg(int i, int k, uint64_t want_wr_id)
{
	struct conn *c = &conns[i];
	uint32_t len = msg_len(i, k);
	struct ibv_wc wc;

	if (!check(poll_one(c->rcq, &wc), "conn %d msg %d: a completion", i, k))
		return;
	check(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
	      wc.wr_id == want_wr_id && wc.qp_num == c->sid->qp->qp_num &&
	      wc.byte_len == len &&
	      msg_ok(g.rbuf + (wc.wr_id - 1000) * SLOT, len, i, k),
	      "conn %d msg %d: %s wr_id %llu (want %llu) qp_num %u (want %u) "
	      "byte_len %u (want %u), data %s", i, k,
	      ibv_wc_status_str(wc.status), (unsigned long long)wc.wr_id,
	      (unsigned long long)want_wr_id, wc.qp_num, c->sid->qp->qp_num,
	      wc.byte_len, len,
	      wc.wr_id >= 1000 && wc.wr_id < 1000 + NSLOT &&
	      msg_ok(g.rbuf + (wc.wr_id - 1000) * SLOT, len, i, k) ?
	      "verified" : "WRONG");
}

/* Two connections share the SRQ; the limit event fires once. */
static void check_traffic(void)
{
	struct ibv_srq_attr attr = { .srq_limit = 4 };
	int k, n;

	for (n = 0; n < 6; n++)
		if (!post_srq(1000 + n, n))
			die("ibv_post_srq_recv");
	check(!ibv_modify_srq(g.srq, &attr, IBV_SRQ_LIMIT),
	      "ibv_modify_srq: limit 4 armed with 6 posted");
	/* The six posted entries survive the resize (checked below). */
	attr.max_wr = 64;
	n = ibv_modify_srq(g.srq, &attr, IBV_SRQ_MAX_WR);
	check(!n, "ibv_modify_srq: resized to 64 with 6 posted (%d)", n);
	/* Interleaved: entries are taken in posting order whoever sends. */
	for (k = 0; k < 3; k++) {
		check(send_msg(0, k, msg_len(0, k), true),
		      "conn 0 send %d completed", k);
		expect_msg(0, k, 1000 + 2 * k);
		check(send_msg(1, k, msg_len(1, k), true),
		      "conn 1 send %d completed", k);
		expect_msg(1, k, 1000 + 2 * k + 1);
	}
	check(wait_async(IBV_EVENT_SRQ_LIMIT_REACHED, g.srq, 10),
	      "IBV_EVENT_SRQ_LIMIT_REACHED for the SRQ");
	check(!async_pending(200), "only one event (limit disarmed)");
	n = ibv_query_srq(g.srq, &attr);
	check(!n && attr.srq_limit == 0, "ibv_query_srq (%d): limit disarmed (%u)",
	      n, attr.srq_limit);
}

/*
 * A garbage entry written into the mapped ring as the process may: it
 * fails the QP that takes it (conn 0) and nothing else.
 */
static void check_garbage(void)
{
	struct rsw_srq *srq = to_rsw_srq(g.srq);
	struct rsw_wq *rq = &srq->rq;
	struct rdmap_sw_rqe *e;
	struct ibv_wc wc;

	pthread_spin_lock(&rq->lock);
	e = (struct rdmap_sw_rqe *)rq->ring + (rq->tail & (rq->size - 1));
	memset(e, 0, sizeof(*e));
	e->wr_id = 0xbad;
	e->num_sge = 200;		/* beyond max_sge (2) and the entry */
	e->length = 64;
	rq->tail++;
	rsw_store_release(&rq->ctrl->tail, rq->tail);
	pthread_spin_unlock(&rq->lock);
	if (!post_srq(1006, 6))
		die("ibv_post_srq_recv");

	send_msg(0, 3, 64, false);
	if (check(poll_one(conns[0].rcq, &wc),
		  "garbage entry: a completion on conn 0's CQ"))
		check(wc.wr_id == 0xbad && wc.status == IBV_WC_LOC_QP_OP_ERR &&
		      wc.qp_num == conns[0].sid->qp->qp_num,
		      "garbage entry: wr_id 0x%llx %s on QP %u",
		      (unsigned long long)wc.wr_id,
		      ibv_wc_status_str(wc.status), wc.qp_num);
	check(wait_async(IBV_EVENT_QP_LAST_WQE_REACHED, conns[0].sid->qp, 30),
	      "IBV_EVENT_QP_LAST_WQE_REACHED for conn 0's server QP");
	check(cq_quiet(conns[1].rcq, 100), "conn 1's CQ saw nothing of it");

	/* The other QP takes the next (good) entry and carries on. */
	check(send_msg(1, 3, msg_len(1, 3), true),
	      "conn 1 send 3 completed after conn 0 failed");
	expect_msg(1, 3, 1006);
	check(cq_quiet(conns[0].rcq, 100), "conn 0's CQ stays quiet");
}

/*
 * Fail conn 1's receiving QP while a 64 MiB Send is being received: the entry its QP
 * took is flushed on its CQ, the entries it never took stay in the SRQ
 * and conn 2 receives into them.
 */
static void check_flush_after_abort(void)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
	struct ibv_sge sge = { .addr = (uintptr_t)g.bbuf, .length = BIG,
			       .lkey = g.bmr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 2007, .sg_list = &sge,
				  .num_sge = 1 }, *bad = NULL;
	struct ibv_wc wc = { .status = IBV_WC_GENERAL_ERR };
	double end = now_s() + TIMEOUT_S;
	uint32_t big_at;
	int n;

	/* A big enough entry for the big message, then two spare ones. */
	if (ibv_post_srq_recv(g.srq, &wr, &bad))
		die("ibv_post_srq_recv");
	if (!post_srq(1008, 8) || !post_srq(1009, 9))
		die("ibv_post_srq_recv");
	big_at = rsw_load_acquire(&to_rsw_srq(g.srq)->rq.ctrl->head);
	if (!send_msg(1, 4, BIG, false))
		die("ibv_post_send (big)");
	/*
	 * The receiving QP took the entry (first segment in): move it to
	 * ERROR now, with most of the message still to come.
	 */
	while (rsw_load_acquire(&to_rsw_srq(g.srq)->rq.ctrl->head) == big_at &&
	       now_s() < end)
		;
	n = ibv_modify_qp(conns[1].sid->qp, &attr, IBV_QP_STATE);
	check(rsw_load_acquire(&to_rsw_srq(g.srq)->rq.ctrl->head) ==
	      big_at + 1, "conn 1's QP took the 64 MiB Send's entry");
	check(!n, "conn 1 server QP moved to ERROR mid-Send (%d)", n);

	if (check(poll_one(conns[1].rcq, &wc), "conn 1: the taken entry completes")) {
		if (wc.status == IBV_WC_SUCCESS)
			printf("# the 64 MiB Send completed before the abort: "
			       "taken-entry flush not exercised this run\n");
		else
			check(wc.wr_id == 2007 &&
			      wc.status == IBV_WC_WR_FLUSH_ERR &&
			      wc.qp_num == conns[1].sid->qp->qp_num,
			      "conn 1: taken entry wr_id %llu %s",
			      (unsigned long long)wc.wr_id,
			      ibv_wc_status_str(wc.status));
	}
	check(wait_async(IBV_EVENT_QP_LAST_WQE_REACHED, conns[1].sid->qp, 30),
	      "IBV_EVENT_QP_LAST_WQE_REACHED for conn 1's server QP");
	check(cq_quiet(conns[1].rcq, 200),
	      "conn 1: the entries it never took are not flushed");

	connect_pair(2);
	check(send_msg(2, 0, msg_len(2, 0), true), "conn 2 send 0 completed");
	expect_msg(2, 0, 1008);
	check(send_msg(2, 1, msg_len(2, 1), true), "conn 2 send 1 completed");
	expect_msg(2, 1, 1009);
}

static void teardown(void)
{
	int i;

	for (i = 0; i < NCONN; i++) {
		struct conn *c = &conns[i];

		if (!c->cid)
			continue;
		rdma_disconnect(c->cid);
		rdma_destroy_qp(c->sid);
		rdma_destroy_qp(c->cid);
		rdma_destroy_id(c->sid);
		rdma_destroy_id(c->cid);
		ibv_destroy_cq(c->rcq);
		ibv_destroy_cq(c->scq);
		ibv_destroy_cq(c->ccq);
	}
	check(!ibv_destroy_srq(g.srq), "ibv_destroy_srq");
	ibv_dereg_mr(g.rmr);
	ibv_dereg_mr(g.smr);
	ibv_dereg_mr(g.bmr);
	ibv_dealloc_pd(g.pd);
	rdma_destroy_id(g.listen);
	rdma_destroy_event_channel(g.ch);
	free(g.rbuf);
	free(g.sbuf);
	free(g.bbuf);
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: %s IP [PORT]\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	setup_listener(argv[1], argc > 2 ? atoi(argv[2]) : 7480);
	connect_pair(0);
	connect_pair(1);
	check_traffic();
	check_garbage();
	check_flush_after_abort();
	teardown();
	printf("# %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
