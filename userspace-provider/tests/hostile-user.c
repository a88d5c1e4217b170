// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * hostile-user: a process that abuses its own mapped rings while it uses
 * them (issue 10, "a hostile-user stress").
 *
 *   hostile-user IP PORT SECONDS [SEED]
 *
 * One process plays both ends of NSLOT rdma_cm connections on the local
 * address of an rdmap_sw device.  For SECONDS, three threads run at once:
 *   - the poster posts Sends, Writes and Reads (and the receives for
 *     them, on the QP's receive queue or the slot's SRQ) and polls and arms
 *     the CQs at full speed, taking whatever errors come;
 *   - the scribbler rewrites every mapped ring and control page (each
 *     QP's SQ and RQ, each SRQ, each CQ) with random bytes and targeted
 *     nasty values: ring indices far ahead, behind and wrapped, consumer
 *     counters past the producer, bogus opcodes, lengths, SGE counts,
 *     STags, addresses outside the MR (into guard bytes) or in an MR of
 *     another PD, REG_MR entries naming made-up kernel pointers; after
 *     touching a queue it often rings its doorbell (ibv_cmd_post_* with
 *     no work request) so the kernel looks at once, and now and then it
 *     sends garbage through modify_qp (any state, RESET included, random
 *     attributes) and modify_srq;
 *   - the main thread destroys and re-creates whole slots (QPs, CQs, SRQ,
 *     MRs, connections) and, under the poster's traffic, re-registers a
 *     slot's MRs (the poster keeps using the old keys for a while).
 *     Before it destroys a slot it maps each of its rings once more
 *     itself, the ways the kernel must refuse (longer, private,
 *     executable, from inside the ring) and one it must accept, which it
 *     keeps past the destroy: that copy must not change under it, must
 *     not become executable, and the old offset must map nothing.
 * Errors the kernel gives back (failed posts, error completions, QPs in
 * ERROR, CQ overruns) are expected and counted.  What must hold:
 *   - no thread hangs (the churn and the final joins are bounded);
 *   - the mmap() rules above;
 *   - nothing outside an MR of the right PD is touched: the guard bytes
 *     around every MR and a buffer registered in another PD keep their
 *     fill through the whole run;
 *   - traffic did flow (successful completions) and slots were re-created;
 *   - every connection set-up succeeded;
 *   - afterwards a fresh connection carries a verified Send, Write and
 *     Read: the device still works for this process.
 * Prints one TAP-style line per check; exits 0 only if every check passed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include <rdma/rdma_cma.h>

/* The provider's objects: where each ring and control page is mapped. */
#include "../rdmap_sw.h"

#define NSLOT 4
#define BUFLEN 16384			/* each end's MR */
#define GUARD 4096			/* fill bytes around each MR */
#define MEMLEN (3 * GUARD + 2 * BUFLEN)
#define GUARD_FILL 0x5a
#define FOREIGN_FILL 0xa5
#define DEPTH 16
#define TIMEOUT_S 60.0

/* wait.h's helpers this program has no use for are fine. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "wait.h"
#pragma GCC diagnostic pop

/* One connection and everything it owns; lock: readers use, writer churns. */
struct slot {
	pthread_rwlock_t lock;
	bool live;
	struct rdma_cm_id *cid, *sid;	/* client (initiator), server */
	struct ibv_cq *ccq, *scq;
	struct ibv_srq *srq;		/* the server's, or NULL */
	unsigned char *mem;		/* guard, client MR, guard, server MR, guard */
	struct ibv_mr *cmr, *smr;
	_Atomic uint32_t clkey, slkey, srkey;
};

static struct {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_pd *pd2;		/* another PD: its MR is off limits */
	unsigned char *fbuf;
	struct ibv_mr *fmr;
	struct ibv_comp_channel *comp;
	struct sockaddr_in addr;
	struct slot slot[NSLOT];
	atomic_bool stop;
	unsigned int seed;
	/*
	 * ib_core gives a new ring the lowest free mmap offset, so an SRQ
	 * resized by the scribbler (another slot's) may take the offset of a
	 * ring recreate() just destroyed: held for writing from a slot's
	 * teardown until its dead offsets are checked, for reading around
	 * a resize.
	 */
	pthread_rwlock_t offsets;
} g = { .offsets = PTHREAD_RWLOCK_INITIALIZER };

/* What happened, for the summary (relaxed counters). */
static struct {
	atomic_ulong posted, post_err, wc_ok, wc_err, events;
	atomic_ulong scribbles, doorbells, bad_verbs, async;
	atomic_ulong recreated, mr_churns, setup_fail, qp_err;
	atomic_ulong maps_kept, map_bad, dead_bad, exec_ok;
	atomic_ulong async_type[32];
} st;

#define ADD(c) atomic_fetch_add_explicit(&(c), 1, memory_order_relaxed)
#define GET(c) atomic_load_explicit(&(c), memory_order_relaxed)

static unsigned char *cbuf(struct slot *s) { return s->mem + GUARD; }
static unsigned char *sbuf(struct slot *s)
{
	return s->mem + 2 * GUARD + BUFLEN;
}

static uint32_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return (uint32_t)(*x >> 11);
}

/* --------------------------------------------------------- CM helpers */

/* A connection attempt of @id failed for good. */
static bool cm_failed(const struct rdma_cm_event *ev, struct rdma_cm_id *id,
		      enum rdma_cm_event_type type)
{
	if (ev->id != id || (ev->event != RDMA_CM_EVENT_REJECTED &&
			     ev->event != RDMA_CM_EVENT_CONNECT_ERROR &&
			     ev->event != RDMA_CM_EVENT_UNREACHABLE &&
			     ev->event != RDMA_CM_EVENT_ADDR_ERROR &&
			     ev->event != RDMA_CM_EVENT_ROUTE_ERROR))
		return false;
	printf("# cm event %s (status %d) waiting for %s\n",
	       rdma_event_str(ev->event), ev->status, rdma_event_str(type));
	return true;
}

/*
 * The next event of @type for @id (for any id if NULL: its id in
 * *@new_id) and, if @id2, for @id2 too, in either order.  Other events
 * (the disconnections of the churn) are acked and dropped quietly.
 */
static bool cm_wait2(enum rdma_cm_event_type type, struct rdma_cm_id *id,
		     struct rdma_cm_id *id2, struct rdma_cm_id **new_id)
{
	struct pollfd pfd = { .fd = g.ch->fd, .events = POLLIN };
	double end = now_s() + TIMEOUT_S;
	bool seen = false, seen2 = !id2, bad = false;
	struct rdma_cm_event *ev;

	while (!(seen && seen2) && !bad && now_s() < end) {
		if (poll(&pfd, 1, 100) <= 0)
			continue;
		if (rdma_get_cm_event(g.ch, &ev))
			return false;
		if (ev->event == type && (!id || ev->id == id) && !seen) {
			seen = true;
			if (new_id)
				*new_id = ev->id;
		} else if (id2 && ev->event == type && ev->id == id2) {
			seen2 = true;
		}
		bad = (id && cm_failed(ev, id, type)) ||
		      (id2 && cm_failed(ev, id2, type));
		rdma_ack_cm_event(ev);
	}
	return seen && seen2;
}

static bool cm_wait(enum rdma_cm_event_type type, struct rdma_cm_id *id,
		    struct rdma_cm_id **new_id)
{
	return cm_wait2(type, id, NULL, new_id);
}

static struct ibv_cq *new_cq(void)
{
	return ibv_create_cq(g.ctx, 4 * DEPTH, NULL, g.comp, 0);
}

static void qp_attr(struct ibv_qp_init_attr *a, struct ibv_cq *cq,
		    struct ibv_srq *srq)
{
	*a = (struct ibv_qp_init_attr) {
		.qp_type = IBV_QPT_RC, .send_cq = cq, .recv_cq = cq,
		.srq = srq,
		.cap = { .max_send_wr = DEPTH, .max_recv_wr = DEPTH,
			 .max_send_sge = 2, .max_recv_sge = 2,
			 .max_inline_data = 64 },
	};
}

/* The client's half: id, route, CQ, QP, connect.  False on failure. */
static bool client_up(struct slot *s)
{
	struct rdma_conn_param param = { .responder_resources = 4,
					 .initiator_depth = 4 };
	struct ibv_qp_init_attr a;

	if (rdma_create_id(g.ch, &s->cid, NULL, RDMA_PS_TCP))
		return false;
	if (rdma_resolve_addr(s->cid, NULL, (struct sockaddr *)&g.addr, 5000) ||
	    !cm_wait(RDMA_CM_EVENT_ADDR_RESOLVED, s->cid, NULL) ||
	    rdma_resolve_route(s->cid, 5000) ||
	    !cm_wait(RDMA_CM_EVENT_ROUTE_RESOLVED, s->cid, NULL))
		return false;
	s->ccq = new_cq();
	if (!s->ccq)
		return false;
	qp_attr(&a, s->ccq, NULL);
	return !rdma_create_qp(s->cid, g.pd, &a) && !rdma_connect(s->cid, &param);
}

/* The server's half: take the request, CQ, SRQ (if @srq), QP, accept. */
static bool server_up(struct slot *s, bool srq)
{
	struct rdma_conn_param param = { .responder_resources = 4,
					 .initiator_depth = 4 };
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = DEPTH,
						  .max_sge = 2 } };
	struct ibv_qp_init_attr a;

	if (!cm_wait(RDMA_CM_EVENT_CONNECT_REQUEST, NULL, &s->sid))
		return false;
	s->scq = new_cq();
	if (!s->scq)
		return false;
	if (srq) {
		s->srq = ibv_create_srq(g.pd, &sa);
		if (!s->srq)
			return false;
	}
	qp_attr(&a, s->scq, s->srq);
	if (rdma_create_qp(s->sid, g.pd, &a) || rdma_accept(s->sid, &param))
		return false;
	return cm_wait2(RDMA_CM_EVENT_ESTABLISHED, s->sid, s->cid, NULL);
}

/* (Re-)register the slot's MRs; the old ones are deregistered after. */
static bool mrs_up(struct slot *s)
{
	int remote = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		     IBV_ACCESS_REMOTE_READ;
	struct ibv_mr *cmr = ibv_reg_mr(g.pd, cbuf(s), BUFLEN,
					IBV_ACCESS_LOCAL_WRITE);
	struct ibv_mr *smr = ibv_reg_mr(g.pd, sbuf(s), BUFLEN, remote);

	if (!cmr || !smr) {
		if (cmr)
			ibv_dereg_mr(cmr);
		if (smr)
			ibv_dereg_mr(smr);
		return false;
	}
	atomic_store(&s->clkey, cmr->lkey);
	atomic_store(&s->slkey, smr->lkey);
	atomic_store(&s->srkey, smr->rkey);
	if (s->cmr)
		ibv_dereg_mr(s->cmr);
	if (s->smr)
		ibv_dereg_mr(s->smr);
	s->cmr = cmr;
	s->smr = smr;
	return true;
}

/* Undo whatever slot_up() got done; the slot's writer lock is held. */
static void slot_down(struct slot *s)
{
	s->live = false;
	if (s->cid)
		rdma_disconnect(s->cid);
	if (s->sid)
		rdma_disconnect(s->sid);
	if (s->cid && s->cid->qp)
		rdma_destroy_qp(s->cid);
	if (s->sid && s->sid->qp)
		rdma_destroy_qp(s->sid);
	if (s->cid)
		rdma_destroy_id(s->cid);
	if (s->sid)
		rdma_destroy_id(s->sid);
	if (s->srq)
		ibv_destroy_srq(s->srq);
	if (s->ccq)
		ibv_destroy_cq(s->ccq);
	if (s->scq)
		ibv_destroy_cq(s->scq);
	if (s->cmr)
		ibv_dereg_mr(s->cmr);
	if (s->smr)
		ibv_dereg_mr(s->smr);
	s->cid = s->sid = NULL;
	s->ccq = s->scq = NULL;
	s->srq = NULL;
	s->cmr = s->smr = NULL;
}

/* A connected slot (with an SRQ on the server if @srq); false if not. */
static bool slot_up(struct slot *s, bool srq)
{
	if (mrs_up(s) && client_up(s) && server_up(s, srq)) {
		s->live = true;
		return true;
	}
	ADD(st.setup_fail);
	printf("# slot set-up failed: %s\n", strerror(errno));
	slot_down(s);
	return false;
}

/* Bytes of @len at @p that are not @v. */
static size_t differ(const unsigned char *p, size_t len, unsigned char v)
{
	size_t n = 0;

	while (len--)
		n += *p++ != v;
	return n;
}

/* Guard bytes of @s changed since they were filled. */
static size_t guards_hit(struct slot *s)
{
	return differ(s->mem, GUARD, GUARD_FILL) +
	       differ(s->mem + GUARD + BUFLEN, GUARD, GUARD_FILL) +
	       differ(s->mem + 2 * GUARD + 2 * BUFLEN, GUARD, GUARD_FILL);
}

/* ---------------------------------------------------------- the poster */

/* Receives as long as any Send (a shorter one would fail the QP). */
static void post_recvs(struct slot *s)
{
	uint32_t len = BUFLEN / 2;
	struct ibv_sge cs = { (uintptr_t)cbuf(s), len, atomic_load(&s->clkey) };
	struct ibv_sge ss = { (uintptr_t)sbuf(s), len, atomic_load(&s->slkey) };
	struct ibv_recv_wr cw = { .wr_id = 1, .sg_list = &cs, .num_sge = 1 };
	struct ibv_recv_wr sw = { .wr_id = 2, .sg_list = &ss, .num_sge = 1 };
	struct ibv_recv_wr *bad;
	int ret;

	ret = ibv_post_recv(s->cid->qp, &cw, &bad);
	ret = ret ? ret : (s->srq ? ibv_post_srq_recv(s->srq, &sw, &bad) :
			   ibv_post_recv(s->sid->qp, &sw, &bad));
	if (ret)
		ADD(st.post_err);
	else
		ADD(st.posted);
}

/*
 * One Send, Write or Read (or inline Send) from the client, now and then
 * one with immediate data (which iWARP has not: refused); a Send back.
 */
static void post_sends(struct slot *s, uint64_t *x)
{
	static const enum ibv_wr_opcode ops[] = {
		IBV_WR_SEND, IBV_WR_RDMA_WRITE, IBV_WR_RDMA_READ,
		IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE_WITH_IMM };
	uint32_t r = rnd(x), len = 1 + r % (BUFLEN / 2);
	struct ibv_sge cs = { (uintptr_t)cbuf(s), len, atomic_load(&s->clkey) };
	struct ibv_sge ss = { (uintptr_t)sbuf(s), len, atomic_load(&s->slkey) };
	struct ibv_send_wr cw = {
		.wr_id = 3, .sg_list = &cs, .num_sge = 1,
		.opcode = ops[(r >> 16) % 16 ? (r >> 16) % 3 : 3 + (r & 1)],
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { (uintptr_t)sbuf(s), atomic_load(&s->srkey) },
	}, sw = { .wr_id = 4, .sg_list = &ss, .num_sge = 1,
		  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad;

	if ((r >> 20) % 8 == 0 && len <= 64)
		cw.send_flags |= IBV_SEND_INLINE;
	if (ibv_post_send(s->cid->qp, &cw, &bad))
		ADD(st.post_err);
	else
		ADD(st.posted);
	if ((r >> 24) % 4 == 0 && ibv_post_send(s->sid->qp, &sw, &bad))
		ADD(st.post_err);
}

static void poll_cq(struct ibv_cq *cq)
{
	struct ibv_wc wc[16];
	int n, i;

	n = ibv_poll_cq(cq, 16, wc);
	for (i = 0; i < n; i++) {
		if (wc[i].status == IBV_WC_SUCCESS)
			ADD(st.wc_ok);
		else
			ADD(st.wc_err);
	}
	ibv_req_notify_cq(cq, (n & 1));
}

/*
 * Take (and ack) the completion and asynchronous events that came (QP and
 * CQ errors, SRQ limits); both fds are non-blocking.
 */
static void drain_events(void)
{
	struct ibv_async_event ae;
	struct ibv_cq *cq;
	void *ctx;

	while (!ibv_get_cq_event(g.comp, &cq, &ctx)) {
		ibv_ack_cq_events(cq, 1);
		ADD(st.events);
	}
	while (!ibv_get_async_event(g.ctx, &ae)) {
		ADD(st.async_type[ae.event_type & 31]);
		ibv_ack_async_event(&ae);
		ADD(st.async);
	}
}

static void *poster(void *arg)
{
	uint64_t x = g.seed * 0x9e3779b97f4a7c15ULL + 1;
	unsigned int i = 0;

	while (!atomic_load(&g.stop)) {
		struct slot *s = &g.slot[i++ % NSLOT];

		if (pthread_rwlock_tryrdlock(&s->lock))
			continue;
		if (s->live) {
			post_recvs(s);
			post_sends(s, &x);
			poll_cq(s->ccq);
			poll_cq(s->scq);
		}
		pthread_rwlock_unlock(&s->lock);
		drain_events();
	}
	return NULL;
}

/* ------------------------------------------------------- the scribbler */

/* A value a careful kernel must not believe, around @base. */
static uint32_t nasty32(uint64_t *x, uint32_t base, uint32_t size)
{
	static const uint32_t off[] = { 1, 0x7fffffff, 0x80000000, 0xffffffff,
					0xfffffffe, 0x10000, 0x1000 };
	uint32_t r = rnd(x);

	switch (r % 6) {
	case 0: return base + size + 1 + r % 64;	/* too far ahead */
	case 1: return base - 1 - r % 64;		/* behind */
	case 2: return base + size * 2;
	case 3: return base + off[(r >> 8) % 7];
	case 4: return off[(r >> 8) % 7];
	default: return rnd(x);
	}
}

/* An address inside a guard, another PD's MR, the kernel, or wrapping. */
static uint64_t nasty_addr(struct slot *s, uint64_t *x)
{
	uint32_t r = rnd(x);

	switch (r % 8) {
	case 0: return (uintptr_t)s->mem + r % GUARD;
	case 1: return (uintptr_t)cbuf(s) + BUFLEN + r % GUARD;
	case 2: return (uintptr_t)sbuf(s) + BUFLEN - 1;
	case 3: return (uintptr_t)g.fbuf + r % BUFLEN;
	case 4: return 0xffff888000000000ULL + ((uint64_t)r << 12);
	case 5: return ~0ULL - r % 64;
	case 6: return (uintptr_t)sbuf(s) + r % BUFLEN;	/* in range */
	default: return ((uint64_t)rnd(x) << 32) | rnd(x);
	}
}

static uint32_t nasty_key(struct slot *s, uint64_t *x)
{
	uint32_t r = rnd(x);

	switch (r % 6) {
	case 0: return atomic_load(&s->clkey);
	case 1: return atomic_load(&s->slkey);
	case 2: return atomic_load(&s->srkey);
	case 3: return g.fmr->lkey;
	case 4: return g.fmr->rkey;
	default: return rnd(x);
	}
}

static uint32_t nasty_len(uint64_t *x)
{
	static const uint32_t len[] = { 0, 1, 256, 257, BUFLEN, BUFLEN + 1,
					0x7fffffff, 0x80000000, 0xffffffff };
	uint32_t r = rnd(x);

	return r % 4 ? len[(r >> 4) % 9] : rnd(x);
}

static void nasty_sges(struct slot *s, struct rdmap_sw_sge *sge, uint64_t *x)
{
	int i;

	for (i = 0; i < RDMAP_SW_MAX_SGE; i++) {
		sge[i].addr = nasty_addr(s, x);
		sge[i].length = nasty_len(x);
		sge[i].lkey = nasty_key(s, x);
	}
}

static uint8_t nasty_count(uint64_t *x)
{
	static const uint8_t n[] = { 0, 1, 2, 3, 16, 17, 128, 255 };

	return n[rnd(x) % 8];
}

static void nasty_sqe(struct slot *s, struct rdmap_sw_sqe *e, uint64_t *x)
{
	uint32_t r = rnd(x);

	e->wr_id = rnd(x);
	e->opcode = r % 4 ? r % 8 : (r >> 8) & 0xff;
	e->num_sge = nasty_count(x);
	e->flags = r & (1 << 12) ? rnd(x) & 0xffff : (r >> 13) & 0xf;
	e->length = nasty_len(x);
	e->rstag = nasty_key(s, x);
	e->inv_stag = nasty_key(s, x);
	e->raddr = nasty_addr(s, x);
	e->mr = r & (1 << 20) ? nasty_addr(s, x) :
		0xffff888000000000ULL + ((uint64_t)rnd(x) << 6);
	e->reg_key = nasty_key(s, x);
	e->reg_access = rnd(x);
	if (e->flags & RDMAP_SW_SQE_INLINE && r & (1 << 21))
		memset(e->inline_data, 0xee, sizeof(e->inline_data));
	else
		nasty_sges(s, e->sge, x);
}

static void nasty_rqe(struct slot *s, struct rdmap_sw_rqe *e, uint64_t *x)
{
	e->wr_id = rnd(x);
	e->num_sge = nasty_count(x);
	e->length = nasty_len(x);
	nasty_sges(s, e->sge, x);
}

/* Random bytes over a random stretch of the mapping. */
static void scribble_bytes(void *map, size_t len, uint64_t *x)
{
	size_t off = rnd(x) % len, n = 1 + rnd(x) % 512, i;
	unsigned char *p = map;

	if (n > len - off)
		n = len - off;
	for (i = 0; i < n; i++)
		p[off + i] = (unsigned char)rnd(x);
}

enum wq_kind { WQ_SQ, WQ_RQ, WQ_SRQ };

/*
 * Garbage in one work queue: its control page (the process's tail with
 * nasty values, the kernel's head and busy words), a nasty entry published
 * at the tail, or random bytes anywhere in the mapping.
 */
static void scribble_wq(struct slot *s, struct rsw_wq *wq, enum wq_kind kind,
			uint64_t *x)
{
	uint32_t r = rnd(x), tail;
	void *e;

	if (!wq->map)
		return;		/* a QP's receive queue when it has an SRQ */
	tail = rsw_load_relaxed(&wq->ctrl->tail);
	switch (r % 5) {
	case 0:
		rsw_store_release(&wq->ctrl->tail,
				  nasty32(x, rsw_load_relaxed(&wq->ctrl->head),
					  wq->size));
		break;
	case 1:
		wq->ctrl->head = nasty32(x, tail, wq->size);
		wq->ctrl->busy = rnd(x) % 3 ? 0 : rnd(x);
		break;
	case 2:
	case 3:
		e = (char *)wq->ring + (size_t)(tail & (wq->size - 1)) *
			(kind == WQ_SQ ? sizeof(struct rdmap_sw_sqe) :
					 sizeof(struct rdmap_sw_rqe));
		if (kind == WQ_SQ)
			nasty_sqe(s, e, x);
		else
			nasty_rqe(s, e, x);
		rsw_store_release(&wq->ctrl->tail, tail + 1);
		break;
	default:
		scribble_bytes(wq->map, wq->map_len, x);
	}
}

/* Garbage in a CQ: consumer counter, arm word, producer's words, entries. */
static void scribble_cq(struct ibv_cq *ibcq, uint64_t *x)
{
	struct rsw_cq *cq = to_rsw_cq(ibcq);
	struct rdmap_sw_cq_ctrl *c = cq->ctrl;
	uint32_t r = rnd(x), prod = rsw_load_relaxed(&c->prod);

	switch (r % 5) {
	case 0:
		rsw_store_release(&c->cons, nasty32(x, prod, cq->size));
		break;
	case 1:
		c->notify = r & (1 << 8) ? rnd(x) : 3 + r % 4;
		break;
	case 2:
		c->size = rnd(x);
		c->mask = rnd(x);
		c->prod = nasty32(x, prod, cq->size);
		c->flags = rnd(x);
		break;
	case 3:
		cq->ring[rnd(x) & (cq->size - 1)].seq = r & (1 << 9) ?
			prod : rnd(x);
		break;
	default:
		scribble_bytes(cq->map, cq->map_len, x);
	}
}

/*
 * Garbage through the verbs themselves: a modify_qp of random state and
 * attributes (to RESET under a live connection too), a modify_srq of
 * random size and limit.  Refused or not, the kernel must cope.
 */
static void verbs_garbage(struct slot *s, uint64_t *x)
{
	static const int masks = IBV_QP_STATE | IBV_QP_CUR_STATE |
		IBV_QP_ACCESS_FLAGS | IBV_QP_MAX_QP_RD_ATOMIC |
		IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
		IBV_QP_QKEY | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
		IBV_QP_RNR_RETRY | IBV_QP_MIN_RNR_TIMER | IBV_QP_SQ_PSN |
		IBV_QP_RQ_PSN | IBV_QP_PATH_MTU | IBV_QP_EN_SQD_ASYNC_NOTIFY |
		IBV_QP_CAP | IBV_QP_DEST_QPN;
	uint32_t r = rnd(x);
	struct ibv_qp_attr a;
	struct ibv_srq_attr sa = { .max_wr = r % 2 ? rnd(x) : DEPTH * 2,
				   .srq_limit = rnd(x) % (2 * DEPTH) };

	memset(&a, 0, sizeof(a));
	a.qp_state = r % 8;
	a.cur_qp_state = (r >> 3) % 8;
	a.qp_access_flags = rnd(x);
	a.max_rd_atomic = (uint8_t)rnd(x);
	a.max_dest_rd_atomic = (uint8_t)rnd(x);
	a.port_num = (uint8_t)rnd(x);
	a.path_mtu = rnd(x) % 8;
	a.cap.max_send_wr = rnd(x);
	a.cap.max_inline_data = rnd(x);
	ibv_modify_qp(r & (1 << 8) ? s->cid->qp : s->sid->qp, &a,
		      (int)(rnd(x) & masks));
	if (s->srq) {
		pthread_rwlock_rdlock(&g.offsets);
		ibv_modify_srq(s->srq, &sa, (int)(r >> 9) & 3);
		pthread_rwlock_unlock(&g.offsets);
	}
}

/* Make the kernel look now: the doorbell commands, with no work request. */
static void doorbells(struct slot *s)
{
	struct ibv_send_wr *sbad;
	struct ibv_recv_wr *rbad;

	ibv_cmd_post_send(s->cid->qp, NULL, &sbad);
	ibv_cmd_post_send(s->sid->qp, NULL, &sbad);
	ibv_cmd_post_recv(s->cid->qp, NULL, &rbad);
	if (!s->srq)
		ibv_cmd_post_recv(s->sid->qp, NULL, &rbad);
	ADD(st.doorbells);
}

/* One scribble on one of the slot's mappings, chosen at random. */
static void scribble_slot(struct slot *s, uint64_t *x)
{
	struct rsw_qp *cqp = to_rsw_qp(s->cid->qp), *sqp = to_rsw_qp(s->sid->qp);
	uint32_t r = rnd(x);

	switch (r % 7) {
	case 0: scribble_wq(s, &cqp->sq, WQ_SQ, x); break;
	case 1: scribble_wq(s, &cqp->rq, WQ_RQ, x); break;
	case 2: scribble_wq(s, &sqp->sq, WQ_SQ, x); break;
	case 3:
		if (s->srq)
			scribble_wq(s, &to_rsw_srq(s->srq)->rq, WQ_SRQ, x);
		else
			scribble_wq(s, &sqp->rq, WQ_RQ, x);
		break;
	case 4: scribble_cq(s->ccq, x); break;
	case 5: scribble_cq(s->scq, x); break;
	default: scribble_wq(s, &sqp->rq, WQ_RQ, x);	/* none with an SRQ */
	}
	ADD(st.scribbles);
	if (r & (1 << 16))
		doorbells(s);
	if ((r >> 17) % 32 == 0) {
		verbs_garbage(s, x);
		ADD(st.bad_verbs);
	}
}

static void *scribbler(void *arg)
{
	/* Often enough that few connections live long without garbage. */
	struct timespec pause = { 0, 1000000 };
	uint64_t x = g.seed * 0xda942042e4dd58b5ULL + 7;

	while (!atomic_load(&g.stop)) {
		struct slot *s = &g.slot[rnd(&x) % NSLOT];

		if (pthread_rwlock_tryrdlock(&s->lock))
			continue;
		if (s->live)
			scribble_slot(s, &x);
		pthread_rwlock_unlock(&s->lock);
		nanosleep(&pause, NULL);
	}
	return NULL;
}

/* ------------------------------------------------------ mmap games */

#define RW (PROT_READ | PROT_WRITE)

/* A second mapping of a ring, kept past its object's destruction. */
struct keep {
	void *p;
	size_t len;
	long long off;
};

/* The file offset of the mapping that starts at @addr, or -1. */
static long long map_offset(const void *addr)
{
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned long start, end;
	unsigned long long off;
	long long ret = -1;
	char line[512];

	if (!f)
		return -1;
	while (ret < 0 && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx %*s %llx", &start, &end, &off) == 3 &&
		    start == (uintptr_t)addr)
			ret = (long long)off;
	fclose(f);
	return ret;
}

/* mmap() of the device file as asked is refused. */
static bool map_refused(size_t len, int prot, int flags, long long off)
{
	void *p = mmap(NULL, len, prot, flags, g.ctx->cmd_fd, off);

	if (p == MAP_FAILED)
		return true;
	munmap(p, len);
	return false;
}

/*
 * Mappings of a live ring the kernel must refuse (longer than the ring,
 * private, executable, starting inside it); then a second mapping of it
 * in @k, which must not become executable (mprotect) either.
 */
static void keep_map(void *map, size_t len, struct keep *k)
{
	long long off = map_offset(map);

	k->p = NULL;
	if (!map || off < 0)
		return;
	if (!map_refused(len + 4096, RW, MAP_SHARED, off) ||
	    !map_refused(len, RW, MAP_PRIVATE, off) ||
	    !map_refused(len, RW | PROT_EXEC, MAP_SHARED, off) ||
	    (len > 4096 &&
	     !map_refused(len - 4096, RW, MAP_SHARED, off + 4096))) {
		if (!GET(st.map_bad))
			printf("# a bad mmap() of ring offset %#llx accepted\n", off);
		ADD(st.map_bad);
	}
	k->p = mmap(NULL, len, RW, MAP_SHARED, g.ctx->cmd_fd, off);
	if (k->p == MAP_FAILED) {
		k->p = NULL;
		return;
	}
	k->len = len;
	k->off = off;
	ADD(st.maps_kept);
	if (!mprotect(k->p, len, PROT_READ | PROT_EXEC)) {
		ADD(st.exec_ok);
		mprotect(k->p, len, RW);
	}
}

/* Second mappings of every ring of @s, in @k (at most 7). */
static int keep_maps(struct slot *s, struct keep *k)
{
	struct rsw_qp *cqp = to_rsw_qp(s->cid->qp), *sqp = to_rsw_qp(s->sid->qp);
	int n = 0;

	keep_map(to_rsw_cq(s->ccq)->map, to_rsw_cq(s->ccq)->map_len, &k[n++]);
	keep_map(to_rsw_cq(s->scq)->map, to_rsw_cq(s->scq)->map_len, &k[n++]);
	keep_map(cqp->sq.map, cqp->sq.map_len, &k[n++]);
	keep_map(cqp->rq.map, cqp->rq.map_len, &k[n++]);
	keep_map(sqp->sq.map, sqp->sq.map_len, &k[n++]);
	keep_map(sqp->rq.map, sqp->rq.map_len, &k[n++]);
	if (s->srq)
		keep_map(to_rsw_srq(s->srq)->rq.map,
			 to_rsw_srq(s->srq)->rq.map_len, &k[n++]);
	return n;
}

/*
 * The object is destroyed: its kept mapping is a private dead copy that
 * nobody else writes (nor frees), and its offset maps nothing any more.
 */
static void dead_map(struct keep *k)
{
	if (!k->p)
		return;
	memset(k->p, 0xc3, k->len);
	sched_yield();
	if (differ(k->p, k->len, 0xc3)) {
		if (!GET(st.dead_bad))
			printf("# a destroyed ring's pages changed under us\n");
		ADD(st.dead_bad);
	}
	if (!map_refused(k->len, RW, MAP_SHARED, k->off)) {
		if (!GET(st.map_bad))
			printf("# offset %#llx of a destroyed ring maps\n", k->off);
		ADD(st.map_bad);
	}
	munmap(k->p, k->len);
}

/* ---------------------------------------------------------- the churn */

static size_t guard_hits;

static bool qp_in_error(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;

	return !ibv_query_qp(qp, &attr, IBV_QP_STATE, &init) &&
	       attr.qp_state == IBV_QPS_ERR;
}

/* Tear slot @s down under the poster's feet and bring it back. */
static void recreate(struct slot *s, bool srq)
{
	struct keep keep[7];
	size_t hits;
	int n = 0, i;

	pthread_rwlock_wrlock(&s->lock);
	if (s->live && (qp_in_error(s->cid->qp) || qp_in_error(s->sid->qp)))
		ADD(st.qp_err);
	if (s->live)
		n = keep_maps(s, keep);
	pthread_rwlock_wrlock(&g.offsets);
	slot_down(s);
	for (i = 0; i < n; i++)
		dead_map(&keep[i]);
	pthread_rwlock_unlock(&g.offsets);
	hits = guards_hit(s);
	if (hits && !guard_hits)
		printf("# %zu guard bytes of slot %td changed\n", hits,
		       s - g.slot);
	guard_hits += hits;
	slot_up(s, srq);
	ADD(st.recreated);
	pthread_rwlock_unlock(&s->lock);
}

/* New MRs for a live slot while the poster may still use the old keys. */
static void churn_mrs(struct slot *s)
{
	pthread_rwlock_rdlock(&s->lock);
	if (s->live && mrs_up(s))
		ADD(st.mr_churns);
	pthread_rwlock_unlock(&s->lock);
}

static void churn(double seconds)
{
	struct timespec pause = { 0, 5000000 };
	double end = now_s() + seconds;
	uint64_t x = g.seed * 0x2545f4914f6cdd1dULL + 3;

	while (now_s() < end) {
		uint32_t r = rnd(&x);
		struct slot *s = &g.slot[r % NSLOT];

		if ((r >> 8) % 3 == 0)
			churn_mrs(s);
		else
			recreate(s, (r >> 12) & 1);
		nanosleep(&pause, NULL);
	}
}

/* ------------------------------------------------- after the storm */

/* The next completion on @cq succeeded. */
static bool wc_ok(struct ibv_cq *cq, const char *what)
{
	struct ibv_wc wc;

	if (poll_one(cq, &wc) && wc.status == IBV_WC_SUCCESS)
		return true;
	printf("# %s: %s\n", what, ibv_wc_status_str(wc.status));
	return false;
}

static bool post1(struct ibv_qp *qp, enum ibv_wr_opcode op, void *buf,
		  uint32_t lkey, void *raddr, uint32_t rkey)
{
	struct ibv_sge sge = { (uintptr_t)buf, 4096, lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED,
				  .wr.rdma = { (uintptr_t)raddr, rkey } }, *bad;

	return !ibv_post_send(qp, &wr, &bad);
}

/* A fresh connection: a Send, a Write and a Read back, data verified. */
static bool verify_fresh(struct slot *s)
{
	struct ibv_sge rs = { (uintptr_t)sbuf(s), 4096, s->smr->lkey };
	struct ibv_recv_wr rw = { .sg_list = &rs, .num_sge = 1 }, *rbad;

	memset(cbuf(s), 0x11, BUFLEN);
	memset(sbuf(s), 0, BUFLEN);
	if (ibv_post_recv(s->sid->qp, &rw, &rbad) ||
	    !post1(s->cid->qp, IBV_WR_SEND, cbuf(s), s->cmr->lkey, NULL, 0) ||
	    !wc_ok(s->ccq, "Send") || !wc_ok(s->scq, "receive") ||
	    differ(sbuf(s), 4096, 0x11))
		return false;
	memset(cbuf(s), 0x22, 4096);
	if (!post1(s->cid->qp, IBV_WR_RDMA_WRITE, cbuf(s), s->cmr->lkey,
		   sbuf(s) + 4096, s->smr->rkey) ||
	    !post1(s->cid->qp, IBV_WR_RDMA_READ, cbuf(s) + 8192, s->cmr->lkey,
		   sbuf(s) + 4096, s->smr->rkey) ||
	    !wc_ok(s->ccq, "Write") || !wc_ok(s->ccq, "Read"))
		return false;
	return !differ(sbuf(s) + 4096, 4096, 0x22) &&
	       !differ(cbuf(s) + 8192, 4096, 0x22) &&
	       cq_quiet(s->ccq, 10) && cq_quiet(s->scq, 10);
}

/* ------------------------------------------------------------ main */

static void on_alarm(int sig)
{
	static const char msg[] = "not ok - hostile-user hung (watchdog)\n";

	(void)!write(1, msg, sizeof(msg) - 1);
	_exit(2);
}

static void setup(const char *ip, int port)
{
	int remote = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		     IBV_ACCESS_REMOTE_READ;

	g.listen = listen_on(&g.ch, ip, port, 2 * NSLOT, &g.addr);
	g.ctx = g.listen->verbs;
	printf("# device %s\n", ibv_get_device_name(g.ctx->device));
	g.pd = ibv_alloc_pd(g.ctx);
	g.pd2 = ibv_alloc_pd(g.ctx);
	g.comp = ibv_create_comp_channel(g.ctx);
	g.fbuf = aligned_alloc(4096, BUFLEN);
	if (!g.pd || !g.pd2 || !g.comp || !g.fbuf)
		die("PDs, completion channel, buffer");
	if (fcntl(g.comp->fd, F_SETFL, O_NONBLOCK) ||
	    fcntl(g.ctx->async_fd, F_SETFL, O_NONBLOCK))
		die("O_NONBLOCK on the event fds");
	memset(g.fbuf, FOREIGN_FILL, BUFLEN);
	g.fmr = ibv_reg_mr(g.pd2, g.fbuf, BUFLEN, remote);
	if (!g.fmr)
		die("ibv_reg_mr in the other PD");
}

static void slots_init(void)
{
	pthread_rwlockattr_t a;
	int i;

	pthread_rwlockattr_init(&a);
	/* The churn must get its turn while the others try-lock at will. */
	pthread_rwlockattr_setkind_np(&a,
		PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	for (i = 0; i < NSLOT; i++) {
		struct slot *s = &g.slot[i];

		pthread_rwlock_init(&s->lock, &a);
		s->mem = aligned_alloc(4096, MEMLEN);
		if (!s->mem)
			die("aligned_alloc");
		memset(s->mem, GUARD_FILL, MEMLEN);
		if (!slot_up(s, i & 1))
			die("first connections");
	}
	pthread_rwlockattr_destroy(&a);
}

/* Everything down; the guards and the other PD's buffer are intact. */
static void teardown_checks(void)
{
	int i;

	for (i = 0; i < NSLOT; i++) {
		slot_down(&g.slot[i]);
		guard_hits += guards_hit(&g.slot[i]);
	}
	check(!guard_hits, "guard bytes around every MR intact (%zu changed)",
	      guard_hits);
	check(!differ(g.fbuf, BUFLEN, FOREIGN_FILL),
	      "the MR of another PD untouched (%zu bytes changed)",
	      differ(g.fbuf, BUFLEN, FOREIGN_FILL));
}

static void summary(double secs)
{
	int i;

	printf("# %.1f s: %lu posted, %lu refused, %lu ok / %lu error "
	       "completions, %lu events\n", secs, GET(st.posted),
	       GET(st.post_err), GET(st.wc_ok), GET(st.wc_err), GET(st.events));
	printf("# %lu scribbles, %lu doorbell rounds, %lu garbage modify_qp/"
	       "srq; %lu async events\n", GET(st.scribbles), GET(st.doorbells),
	       GET(st.bad_verbs), GET(st.async));
	for (i = 0; i < 32; i++)
		if (GET(st.async_type[i]))
			printf("#   %lu %s\n", GET(st.async_type[i]),
			       ibv_event_type_str(i));
	printf("# %lu slots re-created (%lu with a QP in ERROR), %lu MR "
	       "re-registrations\n", GET(st.recreated),
	       GET(st.qp_err), GET(st.mr_churns));
	printf("# %lu ring mappings kept past destroy; mprotect(PROT_EXEC) "
	       "of a ring mapping allowed %lu times\n", GET(st.maps_kept),
	       GET(st.exec_ok));
}

static void finish(void)
{
	struct slot *s = &g.slot[0];

	memset(s->mem, GUARD_FILL, MEMLEN);
	check(slot_up(s, false) && verify_fresh(s),
	      "a fresh connection carries a verified Send, Write and Read");
	slot_down(s);
	check(!guards_hit(s), "guards intact after the fresh connection");
	ibv_dereg_mr(g.fmr);
	ibv_destroy_comp_channel(g.comp);
	ibv_dealloc_pd(g.pd2);
	ibv_dealloc_pd(g.pd);
	rdma_destroy_id(g.listen);
	rdma_destroy_event_channel(g.ch);
}

int main(int argc, char **argv)
{
	pthread_t post_t, scrib_t;
	double secs, t0;

	if (argc < 4) {
		fprintf(stderr, "usage: %s IP PORT SECONDS [SEED]\n", argv[0]);
		return 2;
	}
	secs = atof(argv[3]);
	g.seed = argc > 4 ? (unsigned int)atoi(argv[4]) : (unsigned int)time(NULL);
	printf("# seed %u, %.0f s\n", g.seed, secs);
	signal(SIGALRM, on_alarm);
	alarm((unsigned int)secs + 300);
	setup(argv[1], atoi(argv[2]));
	slots_init();
	t0 = now_s();
	if (pthread_create(&post_t, NULL, poster, NULL) ||
	    pthread_create(&scrib_t, NULL, scribbler, NULL))
		die("pthread_create");
	churn(secs);
	atomic_store(&g.stop, true);
	pthread_join(post_t, NULL);
	pthread_join(scrib_t, NULL);
	summary(now_s() - t0);
	check(!GET(st.setup_fail), "every connection set-up succeeded");
	check(GET(st.recreated) > 0 && GET(st.mr_churns) > 0,
	      "slots re-created and MRs re-registered under traffic");
	check(GET(st.scribbles) > 0, "rings and control pages scribbled on");
	check(GET(st.wc_ok) > 0, "traffic flowed (successful completions)");
	check(GET(st.maps_kept) > 0 && !GET(st.map_bad),
	      "bad mmap()s of rings refused, stale offsets map nothing");
	check(!GET(st.exec_ok),
	      "a ring mapping cannot be made executable (mprotect: %lu of %lu)",
	      GET(st.exec_ok), GET(st.maps_kept));
	check(!GET(st.dead_bad),
	      "a ring mapped past its object's destruction is a dead copy");
	teardown_checks();
	finish();
	printf("# %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
