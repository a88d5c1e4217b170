// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * qp-access: a QP's own access flags (IBV_QP_ACCESS_FLAGS) are enforced on
 * what the peer does to it, and a connected QP cannot go back to RESET
 * while its connection still runs (issue 10, defects 8 and 10).
 *
 *   qp-access IP [PORT]
 *
 * One process plays both ends of each connection (rdma_cm on the local
 * address of an rdmap_sw device).  The target buffer is registered with
 * every remote right; only the target QP's flags change.  iw_cm grants
 * REMOTE_WRITE and REMOTE_READ at INIT, so each case lowers them with
 * ibv_modify_qp(IBV_QP_ACCESS_FLAGS) once the connection is up:
 *   - Write to a QP without REMOTE_WRITE: the target sends a Terminate;
 *     both QPs report IBV_EVENT_QP_ACCESS_ERR and go to ERR, the writer's
 *     next work request completes with an error (the Write itself may
 *     have completed before the Terminate came back: iWARP completes a
 *     Write once it is sent), and the target memory is untouched;
 *   - Read from a QP without REMOTE_READ: the Read completes with an
 *     error, the same events and states, the reader's sink untouched;
 *   - with the flag (and the other one lowered): the Write or Read
 *     succeeds and the data arrived;
 *   - ERR -> RESET on the target QP of a connection that is still running
 *     (right after ERR, before the stream could end) is refused (EBUSY),
 *     or, if the stream already ended, accepted: which one is printed;
 *     once the connection is gone RESET is accepted.
 * Prints one line per check; exits 0 only if every check passed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

#include <rdma/rdma_cma.h>

#define LEN 4096
#define TIMEOUT_S 60.0
#define FILL 0x3c			/* target contents nobody may change */
#define DATA 0xc5			/* what the peer writes or reads */

#include "wait.h"
#include "pair.h"

static struct {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct sockaddr_in addr;
	unsigned char *tbuf;		/* target: every remote right */
	struct ibv_mr *tmr;
	unsigned char *ibuf;		/* initiator: source / sink */
	struct ibv_mr *imr;
} g;

static struct ibv_cq *new_cq(void)
{
	struct ibv_cq *cq = ibv_create_cq(g.ctx, 16, NULL, NULL, 0);

	if (!cq)
		die("ibv_create_cq");
	return cq;
}

static void setup(const char *ip, int port)
{
	int remote = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		     IBV_ACCESS_REMOTE_READ;

	g.listen = listen_on(&g.ch, ip, port, 4, &g.addr);
	g.ctx = g.listen->verbs;
	printf("# device %s\n", ibv_get_device_name(g.ctx->device));
	g.pd = ibv_alloc_pd(g.ctx);
	if (!g.pd)
		die("ibv_alloc_pd");
	g.tbuf = malloc(LEN);
	g.ibuf = malloc(LEN);
	if (!g.tbuf || !g.ibuf)
		die("malloc");
	g.tmr = ibv_reg_mr(g.pd, g.tbuf, LEN, remote);
	g.imr = ibv_reg_mr(g.pd, g.ibuf, LEN, IBV_ACCESS_LOCAL_WRITE);
	if (!g.tmr || !g.imr)
		die("ibv_reg_mr");
}

static void connect_pair(struct conn *c)
{
	struct rdma_conn_param param = { .responder_resources = 4,
					 .initiator_depth = 4 };
	struct ibv_qp_init_attr attr = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	memset(c, 0, sizeof(*c));
	if (rdma_create_id(g.ch, &c->cid, NULL, RDMA_PS_TCP))
		die("rdma_create_id");
	resolve_on(g.ch, c->cid, NULL, &g.addr, g.ctx);
	c->ccq = new_cq();
	attr.send_cq = attr.recv_cq = c->ccq;
	if (rdma_create_qp(c->cid, g.pd, &attr))
		die("rdma_create_qp (initiator)");
	if (rdma_connect(c->cid, &param))
		die("rdma_connect");
	if (!wait_cm_on(g.ch, RDMA_CM_EVENT_CONNECT_REQUEST, NULL, &c->sid))
		die("no CONNECT_REQUEST");
	c->scq = new_cq();
	attr.send_cq = attr.recv_cq = c->scq;
	if (rdma_create_qp(c->sid, g.pd, &attr))
		die("rdma_create_qp (target)");
	if (rdma_accept(c->sid, &param))
		die("rdma_accept");
	if (!wait_cm_pair(g.ch, RDMA_CM_EVENT_ESTABLISHED, c->sid, c->cid))
		die("connection not established");
}

static bool set_access(struct ibv_qp *qp, int access)
{
	struct ibv_qp_attr attr = { .qp_access_flags = access };
	int n = ibv_modify_qp(qp, &attr, IBV_QP_ACCESS_FLAGS);

	return check(!n, "target QP %u: access flags %#x in RTS (%s)",
		     qp->qp_num, access, n ? strerror(n) : "ok");
}

static int post_rdma(struct conn *c, enum ibv_wr_opcode op, uint64_t wr_id)
{
	struct ibv_sge sge = { .addr = (uintptr_t)g.ibuf, .length = LEN,
			       .lkey = g.imr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .opcode = op, .sg_list = &sge, .num_sge = 1,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)g.tbuf,
			     .rkey = g.tmr->rkey },
	}, *bad = NULL;

	return ibv_post_send(c->cid->qp, &wr, &bad);
}

/* A zero-length Send after the access, to see the initiator's QP fail. */
static int post_send0(struct conn *c, uint64_t wr_id)
{
	struct ibv_send_wr wr = { .wr_id = wr_id, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad = NULL;

	return ibv_post_send(c->cid->qp, &wr, &bad);
}

/* Poll @n completions of @cq; true if any has an error status. */
static bool any_error(struct ibv_cq *cq, int n, const char *what)
{
	struct ibv_wc wc;
	bool err = false;

	while (n--) {
		if (!poll_one(cq, &wc)) {
			printf("# %s: completion missing\n", what);
			return err;
		}
		printf("# %s: wr_id %llu status %s\n", what,
		       (unsigned long long)wc.wr_id,
		       ibv_wc_status_str(wc.status));
		err |= wc.status != IBV_WC_SUCCESS;
	}
	return err;
}

/*
 * After a Terminate both QPs are in ERR: a Send posted on the initiator
 * now completes with an error (the Write itself may have completed
 * successfully before the Terminate came back: iWARP completes a Write
 * once it is sent).
 */
static void check_after_terminate(struct conn *c, const char *what)
{
	check(wait_qp_events(g.ctx, c->cid->qp, c->sid->qp, IBV_EVENT_QP_ACCESS_ERR),
	      "%s: access error event on both QPs", what);
	check(qp_state(c->cid->qp) == IBV_QPS_ERR &&
	      qp_state(c->sid->qp) == IBV_QPS_ERR,
	      "%s: both QPs in ERR (%d, %d)", what, qp_state(c->cid->qp),
	      qp_state(c->sid->qp));
	if (post_send0(c, 9))
		die("ibv_post_send");
	check(any_error(c->ccq, 1, what),
	      "%s: the initiator's next work request fails", what);
}

/*
 * @op against a target QP that has only @access: a Terminate, and the
 * memory the access would have changed (the target's for a Write, the
 * sink's for a Read) keeps FILL.
 */
static void check_denied(enum ibv_wr_opcode op, int access, const char *what)
{
	bool write = op == IBV_WR_RDMA_WRITE;
	unsigned char *kept = write ? g.tbuf : g.ibuf;
	struct conn c;
	bool err;

	connect_pair(&c);
	memset(kept, FILL, LEN);
	memset(write ? g.ibuf : g.tbuf, DATA, LEN);
	set_access(c.sid->qp, access);
	if (post_rdma(&c, op, 1))
		die("ibv_post_send");
	/* A Write may complete before the Terminate comes back. */
	err = any_error(c.ccq, 1, what);
	if (!write)
		check(err, "%s: the Read fails", what);
	check_after_terminate(&c, what);
	check(all(kept, LEN, FILL), "%s: %s memory untouched", what,
	      write ? "target" : "sink");
	teardown(&c);
}

/* With the right granted (the other one taken away), the access works. */
static void check_granted(enum ibv_wr_opcode op, int access)
{
	bool write = op == IBV_WR_RDMA_WRITE;
	const char *name = write ? "Write" : "Read";
	struct conn c;

	connect_pair(&c);
	memset(write ? g.tbuf : g.ibuf, FILL, LEN);
	memset(write ? g.ibuf : g.tbuf, DATA, LEN);
	set_access(c.sid->qp, access);
	if (post_rdma(&c, op, 4))
		die("ibv_post_send");
	check(!any_error(c.ccq, 1, name), "%s with the flag: success", name);
	check(arrived(write ? g.tbuf : g.ibuf, LEN, DATA),
	      "%s with the flag: data arrived", name);
	check(qp_state(c.sid->qp) == IBV_QPS_RTS && cq_quiet(c.scq, 50),
	      "%s with the flag: target QP still in RTS, nothing on its CQ",
	      name);
	teardown(&c);
}

/*
 * ERR -> RESET right after ERR, while the connection still runs: EBUSY.
 * The stream may win the race and be gone already; then RESET is right.
 */
static void check_reset_live(void)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
	double end;
	struct conn c;
	int n;

	connect_pair(&c);
	if (ibv_modify_qp(c.sid->qp, &attr, IBV_QP_STATE))
		die("ibv_modify_qp ERR");
	attr.qp_state = IBV_QPS_RESET;
	n = ibv_modify_qp(c.sid->qp, &attr, IBV_QP_STATE);
	check(n == EBUSY || n == 0,
	      "ERR -> RESET while connected: %s (%s)",
	      n ? strerror(n) : "accepted", n == EBUSY ?
	      "stream still live" : "stream already over");
	if (n == EBUSY)
		check(qp_state(c.sid->qp) == IBV_QPS_ERR,
		      "refused RESET leaves the QP in ERR (%d)",
		      qp_state(c.sid->qp));
	/* The stream ends on its own; then RESET is accepted. */
	end = now_s() + TIMEOUT_S;
	while (n && now_s() < end) {
		struct timespec pause = { 0, 20000000 };

		nanosleep(&pause, NULL);
		n = ibv_modify_qp(c.sid->qp, &attr, IBV_QP_STATE);
	}
	check(!n && qp_state(c.sid->qp) == IBV_QPS_RESET,
	      "ERR -> RESET once the connection is over (%s)",
	      n ? strerror(n) : "ok");
	teardown(&c);
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: %s IP [PORT]\n", argv[0]);
		return 2;
	}
	setup(argv[1], argc > 2 ? atoi(argv[2]) : 7490);
	check_denied(IBV_WR_RDMA_WRITE, IBV_ACCESS_REMOTE_READ,
		     "Write to a QP without REMOTE_WRITE");
	check_denied(IBV_WR_RDMA_READ, IBV_ACCESS_REMOTE_WRITE,
		     "Read from a QP without REMOTE_READ");
	check_granted(IBV_WR_RDMA_WRITE, IBV_ACCESS_REMOTE_WRITE);
	check_granted(IBV_WR_RDMA_READ, IBV_ACCESS_REMOTE_READ);
	check_reset_live();
	ibv_dereg_mr(g.tmr);
	ibv_dereg_mr(g.imr);
	ibv_dealloc_pd(g.pd);
	rdma_destroy_id(g.listen);
	rdma_destroy_event_channel(g.ch);
	printf("# %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
