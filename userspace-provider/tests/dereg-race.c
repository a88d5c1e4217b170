// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * dereg-race: a process deregisters and unmaps the source of a large Send
 * or RDMA Write while the driver is sending it (issue 10, defect 1: pages
 * handed to TCP without a reference).
 *
 *   dereg-race DEVICE IP PORT [ROUNDS]
 *
 * One process plays both ends over rdma_cm on IP:PORT.  Each round makes a
 * new connection, maps a fresh anonymous source buffer of LEN bytes,
 * fills it with the round's pattern, registers it, posts a Send (even
 * rounds) or an RDMA Write (odd rounds) of all of it, waits a varying
 * time, then calls ibv_dereg_mr() and munmap() on the buffer while the
 * message is still going out; the QPs are then destroyed.
 *
 * What must hold: the driver never reads a page for sending after the
 * process could have freed it.  Two observables:
 *   - the kernel: a read of a freed page from sock_sendmsg() is a KASAN
 *     use-after-free report (panic_on_warn on the debug kernel: the guest
 *     dies and the script fails);
 *   - the data: the server's target (the receive buffer of a Send, the
 *     MR a Write lands in) is filled with FILL before the round; every
 *     byte placed must be the round's pattern at that offset.  A page that
 *     was freed and reused while TCP still copied from it puts someone
 *     else's bytes there ("foreign" bytes, neither FILL nor pattern).
 * Round 0 deregisters nothing and must deliver the whole message; it
 * times a transfer, and later rounds spread their dereg over that time.
 * Prints one TAP line per check; exits 0 only if every check passed.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

/* Bound of every wait (wait.h), seconds. */
#define TIMEOUT_S 30.0
#define LEN (1024 * 1024)		/* one message */
#define FILL 0xee			/* the target before a round */

#include "wait.h"

/* The process's objects: the server's part lives across rounds. */
static struct {
	uint8_t *tbuf;			/* server target: receive buffer, MR */
	struct ibv_mr *tmr;
	struct ibv_cq *scq;		/* server send + receive */
	struct ibv_cq *ccq;		/* client send + receive */
	struct ibv_pd *pd;
	struct ibv_context *ctx;
	struct sockaddr_in addr;	/* where the listener listens */
	struct rdma_event_channel *ech;	/* every id's events */
	struct rdma_cm_id *listen;
	struct rdma_cm_id *cid, *sid;	/* this round's client, server */
} g;

/* Totals over the rounds, printed at the end. */
static struct {
	unsigned int ok, err, none;
	unsigned long long placed;
} st;

/* Byte @k of round @r's message: never 0 and never FILL. */
static uint8_t pat(unsigned int r, size_t k)
{
	return 1 + (k * 131 + (k >> 12) * 7 + r * 29) % 200;
}

static void setup(const char *dev, const char *ip, int port)
{
	g.listen = listen_on(&g.ech, ip, port, 4, &g.addr);
	g.ctx = g.listen->verbs;
	if (!check(!strcmp(ibv_get_device_name(g.ctx->device), dev),
		   "rdma_cm bound %s:%d to %s (want %s)", ip, port,
		   ibv_get_device_name(g.ctx->device), dev))
		die("wrong device");
	g.pd = ibv_alloc_pd(g.ctx);
	if (!g.pd)
		die("ibv_alloc_pd");
	g.tbuf = malloc(LEN);
	if (!g.tbuf)
		die("malloc");
	g.tmr = ibv_reg_mr(g.pd, g.tbuf, LEN, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE);
	g.ccq = ibv_create_cq(g.ctx, 16, NULL, NULL, 0);
	g.scq = ibv_create_cq(g.ctx, 16, NULL, NULL, 0);
	if (!g.tmr || !g.ccq || !g.scq)
		die("MR or CQs");
}

/* A new connection: client g.cid, server g.sid with a receive posted. */
static void connect_pair(void)
{
	struct rdma_conn_param param = { .responder_resources = 1,
					 .initiator_depth = 1 };
	struct ibv_qp_init_attr attr = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_sge sge = { .addr = (uintptr_t)g.tbuf, .length = LEN,
			       .lkey = g.tmr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 7, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	if (rdma_create_id(g.ech, &g.cid, NULL, RDMA_PS_TCP))
		die("rdma_create_id (client)");
	if (rdma_resolve_addr(g.cid, NULL, (struct sockaddr *)&g.addr, 5000) ||
	    !wait_cm_on(g.ech, RDMA_CM_EVENT_ADDR_RESOLVED, g.cid, NULL))
		die("rdma_resolve_addr");
	if (rdma_resolve_route(g.cid, 5000) ||
	    !wait_cm_on(g.ech, RDMA_CM_EVENT_ROUTE_RESOLVED, g.cid, NULL))
		die("rdma_resolve_route");
	attr.send_cq = attr.recv_cq = g.ccq;
	if (rdma_create_qp(g.cid, g.pd, &attr))
		die("rdma_create_qp (client)");
	if (rdma_connect(g.cid, &param))
		die("rdma_connect");
	if (!wait_cm_on(g.ech, RDMA_CM_EVENT_CONNECT_REQUEST, NULL, &g.sid))
		die("no CONNECT_REQUEST");
	attr.send_cq = attr.recv_cq = g.scq;
	if (rdma_create_qp(g.sid, g.pd, &attr))
		die("rdma_create_qp (server)");
	if (ibv_post_recv(g.sid->qp, &rwr, &bad))
		die("ibv_post_recv");
	if (rdma_accept(g.sid, &param))
		die("rdma_accept");
	if (!wait_cm_pair(g.ech, RDMA_CM_EVENT_ESTABLISHED, g.sid, g.cid))
		die("connection not established");
}

static void drain(struct ibv_cq *cq)
{
	struct ibv_wc wc;

	while (ibv_poll_cq(cq, 1, &wc) > 0)
		;
}

/* Tear the round's connection down, whatever state it is in. */
static void disconnect_pair(void)
{
	rdma_disconnect(g.cid);
	rdma_destroy_qp(g.cid);
	rdma_destroy_qp(g.sid);
	if (rdma_destroy_id(g.cid) || rdma_destroy_id(g.sid))
		die("rdma_destroy_id");
	drain(g.ccq);
	drain(g.scq);
}

/* Post the round's message from @mr: a Send, or a Write into g.tmr. */
static void post(unsigned int r, struct ibv_mr *mr)
{
	struct ibv_sge sge = { .addr = (uintptr_t)mr->addr, .length = LEN,
			       .lkey = mr->lkey };
	struct ibv_send_wr wr = { .wr_id = r, .sg_list = &sge, .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad;

	if (r & 1) {
		wr.opcode = IBV_WR_RDMA_WRITE;
		wr.wr.rdma.remote_addr = (uintptr_t)g.tbuf;
		wr.wr.rdma.rkey = g.tmr->rkey;
	} else {
		wr.opcode = IBV_WR_SEND;
	}
	if (ibv_post_send(g.cid->qp, &wr, &bad))
		die("ibv_post_send");
}

static void spin_us(double us)
{
	double end = now_s() + us / 1e6;

	while (now_s() < end)
		;
}

/* Bytes of the target that are the pattern / neither it nor FILL. */
static void scan(unsigned int r, size_t *placed, size_t *foreign,
		 size_t *first)
{
	size_t k;

	*placed = *foreign = 0;
	*first = LEN;
	for (k = 0; k < LEN; k++) {
		if (g.tbuf[k] == pat(r, k)) {
			(*placed)++;
		} else if (g.tbuf[k] != FILL) {
			if (!*foreign)
				*first = k;
			(*foreign)++;
		}
	}
}

/*
 * One round; @delay_us < 0: no dereg, wait for the completion.  Returns
 * the time from post to completion (round 0) or 0.
 */
static double round_once(unsigned int r, double delay_us)
{
	size_t placed, foreign, first;
	struct ibv_wc wc;
	struct ibv_mr *mr;
	uint8_t *buf;
	double t0, t;
	size_t k;

	memset(g.tbuf, FILL, LEN);
	connect_pair();
	buf = mmap(NULL, LEN, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (buf == MAP_FAILED)
		die("mmap");
	for (k = 0; k < LEN; k++)
		buf[k] = pat(r, k);
	mr = ibv_reg_mr(g.pd, buf, LEN, 0);
	if (!mr)
		die("ibv_reg_mr (source)");
	t0 = now_s();
	post(r, mr);
	if (delay_us >= 0) {
		spin_us(delay_us);
		if (ibv_dereg_mr(mr) || munmap(buf, LEN))
			die("ibv_dereg_mr + munmap");
	}
	if (!poll_one(g.ccq, &wc))
		st.none++;
	else if (wc.status == IBV_WC_SUCCESS)
		st.ok++;
	else
		st.err++;
	t = now_s() - t0;
	/* For a Send, the receive's completion says all of it landed. */
	if (delay_us < 0 && !(r & 1))
		poll_one(g.scq, &wc);
	disconnect_pair();
	if (delay_us < 0) {
		check(wc.status == IBV_WC_SUCCESS, "round 0: %s completed (%s)",
		      r & 1 ? "Write" : "Send", ibv_wc_status_str(wc.status));
		if (ibv_dereg_mr(mr) || munmap(buf, LEN))
			die("ibv_dereg_mr + munmap");
	}
	scan(r, &placed, &foreign, &first);
	st.placed += placed;
	if (delay_us < 0)
		check(placed == LEN, "round 0: all %d bytes placed (%zu)",
		      LEN, placed);
	if (foreign)
		check(false, "round %u (%s, dereg after %.0f us): %zu foreign "
		      "bytes placed, first at offset %zu (0x%02x)", r,
		      r & 1 ? "Write" : "Send", delay_us, foreign, first,
		      g.tbuf[first]);
	return delay_us < 0 ? t : 0;
}

int main(int argc, char **argv)
{
	unsigned int r, rounds = 40;
	double span;

	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: %s DEVICE IP PORT [ROUNDS]\n", argv[0]);
		return 2;
	}
	if (argc == 5)
		rounds = strtoul(argv[4], NULL, 0);
	setvbuf(stdout, NULL, _IOLBF, 0);
	srand(1);
	setup(argv[1], argv[2], atoi(argv[3]));
	span = round_once(0, -1) * 1e6;
	printf("# one %d-byte Send took %.0f us\n", LEN, span);
	for (r = 1; r <= rounds; r++)
		round_once(r, span * 1.2 * (rand() % 1000) / 1000.0);
	check(true, "%u rounds with dereg + munmap under traffic: %u "
	      "completed, %u in error, %u without completion, %llu bytes "
	      "placed", rounds, st.ok, st.err, st.none, st.placed);
	check(cq_quiet(g.ccq, 50) && cq_quiet(g.scq, 50),
	      "no completion after the last round's teardown");
	ibv_dereg_mr(g.tmr);
	ibv_destroy_cq(g.ccq);
	ibv_destroy_cq(g.scq);
	ibv_dealloc_pd(g.pd);
	rdma_destroy_id(g.listen);
	rdma_destroy_event_channel(g.ech);
	free(g.tbuf);
	printf("# %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
