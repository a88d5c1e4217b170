// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * qp-steal: can a connection be bound to a QP its caller does not own?
 * rdma_connect() and rdma_accept() on an rdma_cm id without a QP pass
 * conn_param.qp_num to the kernel as it is; the provider must refuse a QP
 * of another process (or a kernel ULP's) before anything reaches the wire.
 *
 *   qp-steal victim IP
 *       Binds to IP, creates an RC QP (INIT) with one posted receive and
 *       prints "victim: qpn N".  Then reads commands on stdin:
 *         check MS          wait up to MS ms for a receive completion and
 *                           print "victim: completions=C status=S data=D"
 *                           and "victim: state=STATE" (ibv_query_qp)
 *         thread MODE PORT  run "attack MODE IP PORT <own qpn>" in a second
 *                           thread of this process, print its result
 *         quit
 *   qp-steal attack connect|accept IP PORT QPN
 *       With no QP of its own, connect to IP:PORT (or listen on it and
 *       accept one request) naming QPN.  Exit 0 and "attack: bound to QPN"
 *       if the connection was established; exit 2 and "attack: refused"
 *       if rdma_connect()/rdma_accept() failed with EINVAL; 1 otherwise.
 *   qp-steal peer server|client IP PORT
 *       The honest other end with its own QP: accept one request on (or
 *       connect to) IP:PORT, then Send PAYLOAD once established and
 *       disconnect.  Prints "peer: listening", "peer: request",
 *       "peer: established", "peer: sent status=S".
 *
 *   qp-steal race IP PORT ROUNDS
 *       ROUNDS times: a second thread destroys a QP of this process while
 *       rdma_connect() names it, then another while rdma_accept() names it
 *       (listener on IP:PORT); prints "race: ROUNDS rounds, ...".  The
 *       kernel must neither free a QP under iw_cm nor hang.
 *
 * Every wait ends after TIMEOUT_S seconds.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#define TIMEOUT_S 20
/* Not every helper of wait.h is needed here. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "wait.h"
#pragma GCC diagnostic pop

#define PAYLOAD "rdmap_sw qp-steal payload"
#define BUF 64

enum { ATTACK_BOUND = 0, ATTACK_ERROR = 1, ATTACK_REFUSED = 2 };

static void fill_addr(struct sockaddr_in *sin, const char *ip, int port)
{
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	if (inet_pton(AF_INET, ip, &sin->sin_addr) != 1) {
		errno = EINVAL;
		die("address");
	}
}

/* A new channel and an id resolved (address and route) towards @ip:@port. */
static struct rdma_cm_id *resolve(struct rdma_event_channel **ch,
				  const char *ip, int port)
{
	struct sockaddr_in dst;
	struct rdma_cm_id *id;

	fill_addr(&dst, ip, port);
	*ch = rdma_create_event_channel();
	if (!*ch || rdma_create_id(*ch, &id, NULL, RDMA_PS_TCP))
		die("rdma_create_id");
	if (rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000) ||
	    !wait_cm_on(*ch, RDMA_CM_EVENT_ADDR_RESOLVED, id, NULL))
		die("rdma_resolve_addr");
	if (rdma_resolve_route(id, 2000) ||
	    !wait_cm_on(*ch, RDMA_CM_EVENT_ROUTE_RESOLVED, id, NULL))
		die("rdma_resolve_route");
	return id;
}

/* ------------------------------------------------------------- attack */

/*
 * Bind a connection to @qpn without owning it.  Once bound, wait for the
 * peer to disconnect (it does after its Send) so the Send has landed.
 */
static int attack(const char *mode, const char *ip, int port, uint32_t qpn)
{
	struct rdma_conn_param cp = {
		.qp_num = qpn,
		.responder_resources = 1,
		.initiator_depth = 1,
	};
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id, *conn;
	struct sockaddr_in addr;
	int ret;

	if (!strcmp(mode, "connect")) {
		conn = id = resolve(&ch, ip, port);
		ret = rdma_connect(id, &cp);
	} else {
		id = listen_on(&ch, ip, port, 1, &addr);
		printf("attack: listening\n");
		fflush(stdout);
		if (!wait_cm_on(ch, RDMA_CM_EVENT_CONNECT_REQUEST, NULL, &conn))
			die("no connect request");
		ret = rdma_accept(conn, &cp);
	}
	if (ret) {
		int err = errno;

		printf("attack: %s naming QP %u failed: %s\n", mode, qpn,
		       strerror(err));
		if (conn != id)
			rdma_destroy_id(conn);
		rdma_destroy_id(id);
		rdma_destroy_event_channel(ch);
		return err == EINVAL ? ATTACK_REFUSED : ATTACK_ERROR;
	}
	if (!wait_cm_on(ch, RDMA_CM_EVENT_ESTABLISHED, conn, NULL)) {
		printf("attack: %s naming QP %u: not established\n", mode, qpn);
		return ATTACK_ERROR;
	}
	printf("attack: bound to QP %u\n", qpn);
	fflush(stdout);
	if (!wait_cm_on(ch, RDMA_CM_EVENT_DISCONNECTED, conn, NULL))
		printf("attack: no disconnect from the peer\n");
	if (conn != id)
		rdma_destroy_id(conn);
	rdma_destroy_id(id);
	rdma_destroy_event_channel(ch);
	return ATTACK_BOUND;
}

/* --------------------------------------------------------------- peer */

static int peer(const char *mode, const char *ip, int port)
{
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = 2, .max_recv_wr = 2,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
	};
	struct rdma_conn_param cp = {
		.responder_resources = 1,
		.initiator_depth = 1,
	};
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id, *conn;
	struct sockaddr_in addr;
	static char buf[BUF] = PAYLOAD;
	struct ibv_wc wc;
	struct ibv_mr *mr;

	if (!strcmp(mode, "server")) {
		id = listen_on(&ch, ip, port, 1, &addr);
		printf("peer: listening\n");
		fflush(stdout);
		if (!wait_cm_on(ch, RDMA_CM_EVENT_CONNECT_REQUEST, NULL, &conn))
			die("no connect request");
		printf("peer: request\n");
	} else {
		conn = id = resolve(&ch, ip, port);
	}
	if (rdma_create_qp(conn, NULL, &qa))
		die("rdma_create_qp");
	if (conn == id ? rdma_connect(conn, &cp) : rdma_accept(conn, &cp))
		die(conn == id ? "rdma_connect" : "rdma_accept");
	if (!wait_cm_on(ch, RDMA_CM_EVENT_ESTABLISHED, conn, NULL))
		die("not established");
	printf("peer: established\n");
	mr = rdma_reg_msgs(conn, buf, sizeof(buf));
	if (!mr || rdma_post_send(conn, NULL, buf, sizeof(PAYLOAD), mr, 0))
		die("post send");
	poll_one(conn->send_cq, &wc);
	printf("peer: sent status=%s\n", ibv_wc_status_str(wc.status));
	fflush(stdout);
	rdma_disconnect(conn);
	wait_cm_on(ch, RDMA_CM_EVENT_DISCONNECTED, conn, NULL);
	rdma_destroy_qp(conn);
	rdma_dereg_mr(mr);
	if (conn != id)
		rdma_destroy_id(conn);
	rdma_destroy_id(id);
	rdma_destroy_event_channel(ch);
	return wc.status == IBV_WC_SUCCESS ? 0 : 1;
}

/* ------------------------------------------------------------- victim */

struct victim {
	const char *ip;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	char buf[BUF];
	unsigned int completions;
	enum ibv_wc_status status;
};

static struct ibv_qp *victim_qp(struct victim *v)
{
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = 2, .max_recv_wr = 2,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ,
	};
	struct rdma_event_channel *ch;
	struct sockaddr_in addr;
	struct ibv_sge sge;
	struct ibv_recv_wr wr = { .wr_id = 7, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;
	struct rdma_cm_id *id;
	struct ibv_mr *mr;
	struct ibv_pd *pd;

	ch = rdma_create_event_channel();
	if (!ch || rdma_create_id(ch, &id, NULL, RDMA_PS_TCP))
		die("rdma_create_id");
	fill_addr(&addr, v->ip, 0);
	if (rdma_bind_addr(id, (struct sockaddr *)&addr) || !id->verbs)
		die("rdma_bind_addr");
	pd = ibv_alloc_pd(id->verbs);
	v->cq = pd ? ibv_create_cq(id->verbs, 4, NULL, NULL, 0) : NULL;
	if (!v->cq)
		die("pd/cq");
	qa.send_cq = qa.recv_cq = v->cq;
	v->qp = ibv_create_qp(pd, &qa);
	if (!v->qp)
		die("ibv_create_qp");
	if (ibv_modify_qp(v->qp, &attr, IBV_QP_STATE | IBV_QP_PORT |
			  IBV_QP_PKEY_INDEX | IBV_QP_ACCESS_FLAGS))
		die("ibv_modify_qp INIT");
	mr = ibv_reg_mr(pd, v->buf, sizeof(v->buf), IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		die("ibv_reg_mr");
	sge = (struct ibv_sge){ (uintptr_t)v->buf, sizeof(v->buf), mr->lkey };
	if (ibv_post_recv(v->qp, &wr, &bad))
		die("ibv_post_recv");
	return v->qp;
}

static const char *qp_state_str(enum ibv_qp_state s)
{
	static const char *const names[] = {
		[IBV_QPS_RESET] = "RESET", [IBV_QPS_INIT] = "INIT",
		[IBV_QPS_RTR] = "RTR", [IBV_QPS_RTS] = "RTS",
		[IBV_QPS_SQD] = "SQD", [IBV_QPS_SQE] = "SQE",
		[IBV_QPS_ERR] = "ERROR",
	};

	return s < sizeof(names) / sizeof(names[0]) && names[s] ?
	       names[s] : "?";
}

static void victim_check(struct victim *v, int ms)
{
	double end = now_s() + ms / 1000.0;
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr qa;
	struct ibv_wc wc;
	const char *data = "-";

	while (!v->completions && now_s() < end) {
		int n = ibv_poll_cq(v->cq, 1, &wc);

		if (n < 0)
			die("ibv_poll_cq");
		if (n == 1) {
			v->completions++;
			v->status = wc.status;
		}
	}
	if (v->completions && v->status == IBV_WC_SUCCESS)
		data = strcmp(v->buf, PAYLOAD) ? "other" : "payload";
	printf("victim: completions=%u status=%s data=%s\n", v->completions,
	       v->completions ? ibv_wc_status_str(v->status) : "-", data);
	if (ibv_query_qp(v->qp, &qa, IBV_QP_STATE, &ia))
		die("ibv_query_qp");
	printf("victim: state=%s\n", qp_state_str(qa.qp_state));
	fflush(stdout);
}

struct thread_args {
	struct victim *v;
	char mode[16];
	int port;
	int ret;
};

static void *victim_thread(void *p)
{
	struct thread_args *a = p;

	a->ret = attack(a->mode, a->v->ip, a->port, a->v->qp->qp_num);
	return NULL;
}

static int victim(const char *ip)
{
	struct victim v = { .ip = ip };
	char line[128];

	victim_qp(&v);
	printf("victim: qpn %u\n", v.qp->qp_num);
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		struct thread_args a = { .v = &v };
		pthread_t t;
		int ms;

		if (sscanf(line, "check %d", &ms) == 1) {
			victim_check(&v, ms);
		} else if (sscanf(line, "thread %15s %d", a.mode, &a.port) == 2) {
			if (pthread_create(&t, NULL, victim_thread, &a))
				die("pthread_create");
			pthread_join(t, NULL);
			printf("victim: thread attack exit %d\n", a.ret);
			fflush(stdout);
		} else if (!strncmp(line, "quit", 4)) {
			break;
		}
	}
	return 0;
}

/* --------------------------------------------------------------- race */

struct racer {
	pthread_barrier_t go;
	struct ibv_qp *qp;
	unsigned int spin;
	int ret;
};

static void spin(unsigned int n)
{
	volatile unsigned int i;

	for (i = 0; i < n; i++)
		;
}

static void *racer_destroy(void *p)
{
	struct racer *r = p;

	pthread_barrier_wait(&r->go);
	spin(r->spin);
	r->ret = ibv_destroy_qp(r->qp);
	return NULL;
}

static struct ibv_qp *race_qp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = cq, .recv_cq = cq,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct ibv_qp *qp = ibv_create_qp(pd, &qa);

	if (!qp || ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PORT |
				 IBV_QP_PKEY_INDEX | IBV_QP_ACCESS_FLAGS))
		die("race QP");
	return qp;
}

/*
 * Destroy @qp in a second thread while this one connects (@req NULL) or
 * accepts @req naming it; true if the connect/accept succeeded.
 */
static bool race_one(struct rdma_cm_id *id, struct ibv_qp *qp, bool accept)
{
	struct rdma_conn_param cp = {
		.qp_num = qp->qp_num,
		.responder_resources = 1,
		.initiator_depth = 1,
	};
	struct racer r = { .qp = qp, .spin = rand() % 20000 };
	pthread_t t;
	int ret;

	pthread_barrier_init(&r.go, NULL, 2);
	if (pthread_create(&t, NULL, racer_destroy, &r))
		die("pthread_create");
	pthread_barrier_wait(&r.go);
	spin(rand() % 20000);
	ret = accept ? rdma_accept(id, &cp) : rdma_connect(id, &cp);
	pthread_join(t, NULL);
	pthread_barrier_destroy(&r.go);
	if (r.ret) {
		errno = r.ret;
		die("ibv_destroy_qp");
	}
	return !ret;
}

static int race(const char *ip, int port, int rounds)
{
	unsigned int conn_ok = 0, acc_ok = 0, no_req = 0;
	struct rdma_event_channel *lch, *cch;
	struct rdma_cm_id *lid, *cid, *req;
	struct sockaddr_in addr;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	int i;

	srand(port);
	lid = listen_on(&lch, ip, port, 16, &addr);
	pd = ibv_alloc_pd(lid->verbs);
	cq = pd ? ibv_create_cq(lid->verbs, 16, NULL, NULL, 0) : NULL;
	if (!cq)
		die("pd/cq");
	for (i = 0; i < rounds; i++) {
		struct ibv_qp *q1 = race_qp(pd, cq), *q2 = race_qp(pd, cq);

		cid = resolve(&cch, ip, port);
		req = NULL;
		if (race_one(cid, q1, false)) {
			conn_ok++;
			if (!wait_cm_on(lch, RDMA_CM_EVENT_CONNECT_REQUEST,
					NULL, &req))
				no_req++;
		}
		if (req) {
			acc_ok += race_one(req, q2, true);
			rdma_destroy_id(req);
		} else if (ibv_destroy_qp(q2)) {
			die("ibv_destroy_qp");
		}
		rdma_destroy_id(cid);
		rdma_destroy_event_channel(cch);
	}
	printf("race: %d rounds, connect bound %u, accept bound %u, no request %u\n",
	       rounds, conn_ok, acc_ok, no_req);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	rdma_destroy_id(lid);
	rdma_destroy_event_channel(lch);
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: qp-steal victim IP\n"
		"       qp-steal attack connect|accept IP PORT QPN\n"
		"       qp-steal peer server|client IP PORT\n"
		"       qp-steal race IP PORT ROUNDS\n");
	return 1;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(argv[1], "victim"))
		return victim(argv[2]);
	if (argc == 6 && !strcmp(argv[1], "attack"))
		return attack(argv[2], argv[3], atoi(argv[4]),
			      strtoul(argv[5], NULL, 0));
	if (argc == 5 && !strcmp(argv[1], "peer"))
		return peer(argv[2], argv[3], atoi(argv[4]));
	if (argc == 5 && !strcmp(argv[1], "race"))
		return race(argv[2], atoi(argv[3]), atoi(argv[4]));
	return usage();
}
