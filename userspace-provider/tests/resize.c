// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * resize: ibv_resize_cq and ibv_modify_srq(IBV_SRQ_MAX_WR) of the rdmap_sw
 * provider while a connection (rdma_cm on the local address of an
 * rdmap_sw device) carries traffic.
 *
 *   resize IP [PORT [SECONDS]]
 *
 * One process plays both ends of one RC connection.  The client's Sends
 * complete on the CQ under test (tcq), and so do the server's receives,
 * which it takes from an SRQ.  Checks, in order:
 *   - traffic: a poller thread keeps WINDOW signalled Sends in flight and
 *     the SRQ stocked, polls tcq (an extended CQ) with ibv_poll_cq and
 *     ibv_start_poll in turn, and checks that every completion arrives
 *     exactly once and in order (two wr_id sequences, Sends and
 *     receives, each received payload carrying its sequence number),
 *     while the main thread resizes tcq up and down (never below
 *     2 * WINDOW, the most that can be pending) and the SRQ between
 *     WINDOW and 8 * WINDOW entries, for SECONDS seconds;
 *   - pending entries: with traffic stopped and 16 entries pending in tcq
 *     (the mapped ring's ctrl, ABI header), a resize to 8 is refused with
 *     EINVAL and changes nothing, a resize to 16 succeeds, and the 16 come
 *     out in order;
 *   - SRQ keeping posted receives: 24 posted, a shrink to 16 refused with
 *     EINVAL, a grow to 128 succeeds, 32 posted and a shrink to 32
 *     succeeds, and 32 Sends land in the 32 receives in posting order;
 *   - a resize whose new ring cannot be mapped (RLIMIT_AS): the CQ's
 *     polls and arms and the SRQ's posts fail from then on.
 * Prints one line per check; exits 0 only if every check passed.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

/* The provider's CQ object, to count pending entries in the mapped ring. */
#include "../rdmap_sw.h"

#define TIMEOUT_S 60.0
#include "wait.h"

#define WINDOW 32			/* Sends in flight, receives posted */
#define MSG 64				/* bytes per Send */
#define NSLOT (8 * WINDOW)		/* receive slots (wr_id % NSLOT) */
#define RECV_ID (1ULL << 62)		/* receive wr_ids: RECV_ID + seq */

static struct {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen, *cid, *sid;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq_ex *tcqx;		/* under test: client send, server recv */
	struct ibv_cq *tcq;		/* the same CQ */
	struct ibv_cq *ccq, *scq;	/* client recv, server send: unused */
	struct ibv_srq *srq;
	char *sbuf, *rbuf;
	struct ibv_mr *smr, *rmr;
	struct sockaddr_in addr;
} g;

/* The traffic's state, the poller thread's alone while it runs. */
static struct {
	uint64_t sent, send_done;	/* Sends posted, completed */
	uint64_t posted, recv_done;	/* receives posted, completed */
	volatile bool stop;
	bool failed;
	char why[160];
} t;

static void setup(const char *ip, int port)
{
	struct ibv_srq_init_attr sattr = {
		.attr = { .max_wr = 2 * WINDOW, .max_sge = 1 },
	};
	struct ibv_cq_init_attr_ex cq_attr = {
		.cqe = 2 * WINDOW, .wc_flags = IBV_WC_EX_WITH_BYTE_LEN,
	};

	g.listen = listen_on(&g.ch, ip, port, 1, &g.addr);
	g.ctx = g.listen->verbs;
	printf("# device %s\n", ibv_get_device_name(g.ctx->device));
	g.pd = ibv_alloc_pd(g.ctx);
	g.sbuf = calloc(WINDOW, MSG);
	g.rbuf = calloc(NSLOT, MSG);
	if (!g.pd || !g.sbuf || !g.rbuf)
		die("ibv_alloc_pd / calloc");
	g.smr = ibv_reg_mr(g.pd, g.sbuf, WINDOW * MSG, IBV_ACCESS_LOCAL_WRITE);
	g.rmr = ibv_reg_mr(g.pd, g.rbuf, NSLOT * MSG, IBV_ACCESS_LOCAL_WRITE);
	g.tcqx = ibv_create_cq_ex(g.ctx, &cq_attr);
	g.tcq = g.tcqx ? ibv_cq_ex_to_cq(g.tcqx) : NULL;
	g.ccq = ibv_create_cq(g.ctx, 2, NULL, NULL, 0);
	g.scq = ibv_create_cq(g.ctx, 2, NULL, NULL, 0);
	g.srq = ibv_create_srq(g.pd, &sattr);
	if (!g.smr || !g.rmr || !g.tcq || !g.ccq || !g.scq || !g.srq)
		die("ibv_reg_mr / ibv_create_cq / ibv_create_srq");
}

static void connect_pair(void)
{
	struct rdma_conn_param param = { .responder_resources = 1,
					 .initiator_depth = 1 };
	struct ibv_qp_init_attr cattr = {
		.qp_type = IBV_QPT_RC, .send_cq = g.tcq, .recv_cq = g.ccq,
		.cap = { .max_send_wr = WINDOW, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_init_attr sattr = {
		.qp_type = IBV_QPT_RC, .send_cq = g.scq, .recv_cq = g.tcq,
		.srq = g.srq,
		.cap = { .max_send_wr = 1, .max_send_sge = 1 },
	};

	if (rdma_create_id(g.ch, &g.cid, NULL, RDMA_PS_TCP))
		die("rdma_create_id");
	resolve_on(g.ch, g.cid, NULL, &g.addr, g.ctx);
	if (rdma_create_qp(g.cid, g.pd, &cattr))
		die("rdma_create_qp (client)");
	if (rdma_connect(g.cid, &param))
		die("rdma_connect");
	if (!wait_cm_on(g.ch, RDMA_CM_EVENT_CONNECT_REQUEST, NULL, &g.sid))
		die("no CONNECT_REQUEST");
	if (rdma_create_qp(g.sid, g.pd, &sattr))
		die("rdma_create_qp (server)");
	if (rdma_accept(g.sid, &param))
		die("rdma_accept");
	if (!wait_cm_pair(g.ch, RDMA_CM_EVENT_ESTABLISHED, g.sid, g.cid))
		die("connection not established");
	check(true, "connection established");
}

/* Post receive number t.posted into its slot. */
static bool post_recv(void)
{
	uint64_t seq = t.posted;
	struct ibv_sge sge = { .addr = (uintptr_t)g.rbuf + seq % NSLOT * MSG,
			       .length = MSG, .lkey = g.rmr->lkey };
	struct ibv_recv_wr wr = { .wr_id = RECV_ID + seq, .sg_list = &sge,
				  .num_sge = 1 }, *bad = NULL;

	if (ibv_post_srq_recv(g.srq, &wr, &bad))
		return false;
	t.posted++;
	return true;
}

/* Send number t.sent, its sequence number as the payload. */
static bool post_send(void)
{
	uint64_t seq = t.sent;
	char *p = g.sbuf + seq % WINDOW * MSG;
	struct ibv_sge sge = { .addr = (uintptr_t)p, .length = MSG,
			       .lkey = g.smr->lkey };
	struct ibv_send_wr wr = { .wr_id = seq, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad = NULL;

	memset(p, 0, MSG);
	memcpy(p, &seq, sizeof(seq));
	if (ibv_post_send(g.cid->qp, &wr, &bad))
		return false;
	t.sent++;
	return true;
}

static void fail_traffic(const char *why, const struct ibv_wc *wc)
{
	t.failed = true;
	snprintf(t.why, sizeof(t.why), "%s: wr_id %#llx status %s opcode %d",
		 why, (unsigned long long)wc->wr_id,
		 ibv_wc_status_str(wc->status), wc->opcode);
}

/* One completion of tcq: the next of its sequence, exactly. */
static void take_wc(const struct ibv_wc *wc)
{
	uint64_t seq;

	if (wc->status != IBV_WC_SUCCESS)
		return fail_traffic("failed completion", wc);
	if (wc->opcode == IBV_WC_SEND) {
		if (wc->wr_id != t.send_done)
			return fail_traffic("Send out of order", wc);
		t.send_done++;
		return;
	}
	if (wc->opcode != IBV_WC_RECV || wc->wr_id != RECV_ID + t.recv_done ||
	    wc->byte_len != MSG)
		return fail_traffic("receive out of order", wc);
	memcpy(&seq, g.rbuf + t.recv_done % NSLOT * MSG, sizeof(seq));
	if (seq != t.recv_done)
		return fail_traffic("receive with another Send's data", wc);
	t.recv_done++;
}

/* Keep WINDOW Sends in flight and WINDOW receives posted. */
static bool refill(void)
{
	while (t.posted - t.recv_done < WINDOW)
		if (!post_recv())
			return false;
	while (t.sent - t.send_done < WINDOW &&
	       t.sent - t.recv_done < WINDOW)
		if (!post_send())
			return false;
	return true;
}

/* ibv_poll_cq through the extended API (ibv_start_poll .. ibv_end_poll). */
static int poll_ex(struct ibv_wc *wc, int max)
{
	struct ibv_poll_cq_attr attr = {};
	int n = 0;

	if (ibv_start_poll(g.tcqx, &attr))
		return 0;
	do {
		wc[n++] = (struct ibv_wc) {
			.wr_id = g.tcqx->wr_id,
			.status = g.tcqx->status,
			.opcode = ibv_wc_read_opcode(g.tcqx),
			.byte_len = ibv_wc_read_byte_len(g.tcqx),
		};
	} while (n < max && !ibv_next_poll(g.tcqx));
	ibv_end_poll(g.tcqx);
	return n;
}

/*
 * The poller thread: traffic until told to stop or something is wrong,
 * polling with ibv_poll_cq and the extended API in turn.
 */
static void *traffic(void *arg)
{
	struct timespec pause = { 0, 100000 };
	double idle_since = now_s();
	struct ibv_wc wc[16];
	unsigned int round = 0;
	int i, n;

	while (!t.stop && !t.failed) {
		if (!refill()) {
			t.failed = true;
			snprintf(t.why, sizeof(t.why), "post: %s",
				 strerror(errno));
			break;
		}
		n = round++ % 2 ? poll_ex(wc, 16) : ibv_poll_cq(g.tcq, 16, wc);
		for (i = 0; i < n && !t.failed; i++)
			take_wc(&wc[i]);
		if (n > 0) {
			idle_since = now_s();
		} else if (now_s() - idle_since > TIMEOUT_S) {
			t.failed = true;
			snprintf(t.why, sizeof(t.why), "no completion for %.0f s",
				 TIMEOUT_S);
		} else {
			/* Arming takes the CQ lock a resize holds. */
			ibv_req_notify_cq(g.tcq, 0);
			nanosleep(&pause, NULL);
		}
	}
	return NULL;
}

/* Drain tcq until every Send and receive in flight has completed. */
static void drain(void)
{
	struct ibv_wc wc;

	while (!t.failed && (t.send_done < t.sent || t.recv_done < t.sent)) {
		if (!poll_one(g.tcq, &wc)) {
			fail_traffic("no completion while draining", &wc);
			break;
		}
		take_wc(&wc);
	}
}

/*
 * The main thread's half of the traffic check: resize tcq through
 * CQ_SIZES and the SRQ through SRQ_SIZES for @secs seconds while the
 * poller runs.  A refusal or error is a failure: every size holds all
 * that can be pending.
 */
static void check_traffic(double secs)
{
	static const int cq_sizes[] = { 4 * WINDOW, 2 * WINDOW, 4096,
					2 * WINDOW, 32 * WINDOW };
	static const uint32_t srq_sizes[] = { 8 * WINDOW, WINDOW, 2 * WINDOW };
	struct timespec pause = { 0, 2000000 };
	unsigned int ncq = 0, nsrq = 0, i;
	struct ibv_srq_attr attr;
	double end = now_s() + secs;
	pthread_t th;
	int ret = 0;

	if (pthread_create(&th, NULL, traffic, NULL))
		die("pthread_create");
	for (i = 0; now_s() < end && !t.failed && !ret; i++) {
		ret = ibv_resize_cq(g.tcq, cq_sizes[i % 5]);
		ncq += !ret;
		if (!ret && i % 2) {
			attr.max_wr = srq_sizes[i / 2 % 3];
			ret = ibv_modify_srq(g.srq, &attr, IBV_SRQ_MAX_WR);
			nsrq += !ret;
		}
		nanosleep(&pause, NULL);
	}
	t.stop = true;
	pthread_join(th, NULL);
	check(!ret, "every resize under traffic succeeded (%s)",
	      ret ? strerror(ret) : "ok");
	if (!t.failed)
		drain();
	check(!t.failed, "traffic: %llu Sends and %llu receives completed once each, in order%s%s",
	      (unsigned long long)t.send_done,
	      (unsigned long long)t.recv_done, t.failed ? ": " : "",
	      t.failed ? t.why : "");
	check(ncq >= 20 && nsrq >= 10 && t.send_done >= 200,
	      "%u CQ and %u SRQ resizes during %llu Sends (want 20, 10, 200)",
	      ncq, nsrq, (unsigned long long)t.send_done);
}

/* Entries the kernel produced into tcq that we have not polled. */
static uint32_t tcq_pending(void)
{
	struct rsw_cq *cq = to_rsw_cq(g.tcq);

	return rsw_load_acquire(&cq->ctrl->prod) - cq->cons;
}

/* With 16 entries pending, a resize below them is refused. */
static void check_pending(void)
{
	double end = now_s() + TIMEOUT_S;
	struct timespec pause = { 0, 1000000 };
	uint64_t first = t.send_done;
	struct ibv_wc wc;
	int i, n;

	/* A receive for every Send: an iWARP Send without one ends the QP. */
	while (t.posted - t.recv_done < WINDOW)
		if (!post_recv())
			die("ibv_post_srq_recv");
	for (i = 0; i < 8; i++)
		if (!post_send())
			die("ibv_post_send");
	while (tcq_pending() < 16 && now_s() < end)
		nanosleep(&pause, NULL);
	check(tcq_pending() == 16, "16 entries pending in tcq (%u)",
	      tcq_pending());
	n = ibv_resize_cq(g.tcq, 8);
	check(n == EINVAL && g.tcq->cqe >= 16,
	      "resize to 8 with 16 pending refused (%d), cqe %d", n,
	      g.tcq->cqe);
	n = ibv_resize_cq(g.tcq, 16);
	check(!n && g.tcq->cqe == 16, "resize to 16 with 16 pending (%d), cqe %d",
	      n, g.tcq->cqe);
	for (i = 0; i < 16 && !t.failed && poll_one(g.tcq, &wc); i++)
		take_wc(&wc);
	check(!t.failed && i == 16 && t.send_done == first + 8 &&
	      cq_quiet(g.tcq, 20),
	      "the 16 came out once, in order%s%s", t.failed ? ": " : "",
	      t.failed ? t.why : "");
	n = ibv_resize_cq(g.tcq, 4 * WINDOW);
	check(!n, "resize back to %d (%d)", 4 * WINDOW, n);
}

/*
 * Posted receives survive SRQ resizes and are used in posting order: with
 * the WINDOW - 8 left by check_pending(), a shrink below them is refused;
 * grown to 128, then WINDOW posted and shrunk to exactly WINDOW.
 */
static void check_srq_posted(void)
{
	struct ibv_srq_attr attr = { .max_wr = 16 };
	uint64_t first = t.recv_done;
	struct ibv_wc wc;
	int i, n;

	n = ibv_modify_srq(g.srq, &attr, IBV_SRQ_MAX_WR);
	check(n == EINVAL, "SRQ shrink to 16 with %llu posted refused (%d)",
	      (unsigned long long)(t.posted - t.recv_done), n);
	attr.max_wr = 128;
	n = ibv_modify_srq(g.srq, &attr, IBV_SRQ_MAX_WR);
	check(!n, "SRQ grown to 128 (%d)", n);
	while (t.posted - t.recv_done < WINDOW)
		if (!post_recv())
			die("ibv_post_srq_recv");
	attr.max_wr = WINDOW;
	n = ibv_modify_srq(g.srq, &attr, IBV_SRQ_MAX_WR);
	n = n ?: ibv_query_srq(g.srq, &attr);
	check(!n && attr.max_wr == WINDOW,
	      "SRQ shrunk to %d with %d posted (%d), max_wr %u", WINDOW, WINDOW,
	      n, attr.max_wr);
	for (i = 0; i < WINDOW; i++)
		if (!post_send())
			die("ibv_post_send");
	for (i = 0; i < 2 * WINDOW && !t.failed && poll_one(g.tcq, &wc); i++)
		take_wc(&wc);
	check(!t.failed && t.recv_done == first + WINDOW &&
	      t.posted == t.recv_done && t.send_done == t.sent,
	      "%d Sends landed in the %d posted receives, in order%s%s",
	      WINDOW, WINDOW, t.failed ? ": " : "", t.failed ? t.why : "");
}

/* The address space in use now, in bytes (/proc/self/statm: pages). */
static unsigned long long vm_size(void)
{
	unsigned long long pages = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (!f || fscanf(f, "%llu", &pages) != 1)
		die("/proc/self/statm");
	fclose(f);
	return pages * (unsigned long long)sysconf(_SC_PAGESIZE);
}

/*
 * A resize the kernel does but whose new ring the provider cannot map
 * (RLIMIT_AS just above what is in use): the call fails, and the CQ or
 * SRQ is marked failed instead of hanging quietly: ibv_poll_cq negative,
 * ibv_req_notify_cq and ibv_post_srq_recv an error.
 */
static void check_lost_ring(void)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_srq_attr big = { .max_wr = 16384 };
	struct ibv_recv_wr wr = {}, *bad = NULL;
	struct rlimit old, lim;
	struct ibv_srq *srq;
	struct ibv_cq *cq;
	struct ibv_wc wc;
	int ret, n;

	cq = ibv_create_cq(g.ctx, 16, NULL, NULL, 0);
	srq = ibv_create_srq(g.pd, &sa);
	if (!cq || !srq || getrlimit(RLIMIT_AS, &old))
		die("create_cq/create_srq/getrlimit");
	lim = old;
	lim.rlim_cur = vm_size() + (1 << 20);
	if (setrlimit(RLIMIT_AS, &lim))
		die("setrlimit");
	ret = ibv_resize_cq(cq, 1 << 18);
	n = ibv_poll_cq(cq, 1, &wc);
	check(ret && n < 0 && ibv_req_notify_cq(cq, 0),
	      "CQ ring not mappable after resize: resize %d, poll %d, arm "
	      "fails", ret, n);
	ret = ibv_modify_srq(srq, &big, IBV_SRQ_MAX_WR);
	n = ibv_post_srq_recv(srq, &wr, &bad);
	check(ret && n && bad == &wr,
	      "SRQ ring not mappable after resize: modify %d, post %d", ret,
	      n);
	if (setrlimit(RLIMIT_AS, &old))
		die("setrlimit (restore)");
	check(!ibv_destroy_srq(srq) && !ibv_destroy_cq(cq),
	      "the lost CQ and SRQ destroyed");
}

static void teardown(void)
{
	rdma_disconnect(g.cid);
	wait_cm_pair(g.ch, RDMA_CM_EVENT_DISCONNECTED, g.cid, g.sid);
	rdma_destroy_qp(g.cid);
	rdma_destroy_qp(g.sid);
	rdma_destroy_id(g.cid);
	rdma_destroy_id(g.sid);
	check(!ibv_destroy_srq(g.srq) && !ibv_destroy_cq(g.tcq) &&
	      !ibv_destroy_cq(g.ccq) && !ibv_destroy_cq(g.scq) &&
	      !ibv_dereg_mr(g.smr) && !ibv_dereg_mr(g.rmr) &&
	      !ibv_dealloc_pd(g.pd), "objects destroyed");
	rdma_destroy_id(g.listen);
	rdma_destroy_event_channel(g.ch);
	free(g.sbuf);
	free(g.rbuf);
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 4) {
		fprintf(stderr, "usage: %s IP [PORT [SECONDS]]\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	setup(argv[1], argc > 2 ? atoi(argv[2]) : 7490);
	connect_pair();
	check_traffic(argc > 3 ? atof(argv[3]) : 5.0);
	if (!t.failed) {
		check_pending();
		check_srq_posted();
		check_lost_ring();
	}
	teardown();
	printf("# %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
