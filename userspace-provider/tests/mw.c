// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * mw: memory windows (issue 12) over rdma_cm connections on one device.
 *
 *   mw IP [PORT]
 *
 * One process plays both ends of each connection.  The target's buffer is
 * registered with LOCAL_WRITE | MW_BIND only: every remote access goes
 * through a window, bound on the target's QP, onto [WOFF, WOFF + WLEN) of
 * it.  Checked:
 *   - ibv_alloc_mw of type 1 and 2 (and a type 3 refused);
 *   - type 1 bound with ibv_bind_mw, type 2 with IBV_WR_BIND_MW and with
 *     ibv_wr_bind_mw (extended QP API); each bind completes successfully;
 *   - the peer's Write and Read through the window inside its range
 *     succeed and move the data;
 *   - a Write outside the range, and a Read through a window without
 *     REMOTE_READ, are refused: access error events on both QPs, both
 *     QPs in ERR, the target (or sink) memory untouched;
 *   - an RFC 7306 FetchAdd through a type 1 window with REMOTE_ATOMIC is
 *     executed and returns the original; without it, refused (access
 *     errors, the word untouched);
 *   - a type 2 window serves only the QP it was bound on (type 2B):
 *     another connection's Write and Read through it are refused, the
 *     memory untouched, and so are its bind and LOCAL_INV there;
 *   - a type 2 window invalidated by the peer (Send with Invalidate: the
 *     receive reports the STag) or locally (IBV_WR_LOCAL_INV on its QP),
 *     after which a Read through it is refused;
 *   - a Send with Invalidate naming a type 1 window is refused and the
 *     window still works on the next connection;
 *   - a bind onto an MR without MW_BIND completes with MW_BIND_ERR;
 *   - an MR deregistered under a bound window: the dereg succeeds and the
 *     window refuses the next Read;
 *   - ibv_wr_set_sge after ibv_wr_bind_mw or ibv_wr_local_inv fails the
 *     batch with EINVAL, the QP stays in RTS;
 *   - ibv_dealloc_mw of every window.
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

#define LEN 8192			/* target and initiator buffers */
#define WOFF 1024			/* the window: [WOFF, WOFF + WLEN) */
#define WLEN 2048
#define TIMEOUT_S 30.0
#define FILL 0x3c			/* memory nobody may change */
#define DATA 0xc5			/* what the peer writes or reads */

#include "wait.h"
#include "pair.h"

static struct {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct sockaddr_in addr;
	unsigned char *tbuf;		/* target: LOCAL_WRITE | MW_BIND */
	struct ibv_mr *tmr;
	unsigned char *ibuf;		/* initiator: source / sink */
	struct ibv_mr *imr;
} g;

static void setup(const char *ip, int port)
{
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
	g.tmr = ibv_reg_mr(g.pd, g.tbuf, LEN,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	g.imr = ibv_reg_mr(g.pd, g.ibuf, LEN, IBV_ACCESS_LOCAL_WRITE);
	if (!g.tmr || !g.imr)
		die("ibv_reg_mr");
}

/* The target's QP has the extended send API (ibv_wr_bind_mw). */
static void connect_pair(struct conn *c)
{
	struct rdma_conn_param param = { .responder_resources = 4,
					 .initiator_depth = 4 };
	struct ibv_qp_init_attr_ex attr = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = g.pd,
		.send_ops_flags = IBV_QP_EX_WITH_SEND |
				  IBV_QP_EX_WITH_BIND_MW |
				  IBV_QP_EX_WITH_LOCAL_INV,
	};

	memset(c, 0, sizeof(*c));
	if (rdma_create_id(g.ch, &c->cid, NULL, RDMA_PS_TCP))
		die("rdma_create_id");
	resolve_on(g.ch, c->cid, NULL, &g.addr, g.ctx);
	c->ccq = ibv_create_cq(g.ctx, 16, NULL, NULL, 0);
	c->scq = ibv_create_cq(g.ctx, 16, NULL, NULL, 0);
	if (!c->ccq || !c->scq)
		die("ibv_create_cq");
	attr.send_cq = attr.recv_cq = c->ccq;
	if (rdma_create_qp_ex(c->cid, &attr))
		die("rdma_create_qp_ex (initiator)");
	if (rdma_connect(c->cid, &param))
		die("rdma_connect");
	if (!wait_cm_on(g.ch, RDMA_CM_EVENT_CONNECT_REQUEST, NULL, &c->sid))
		die("no CONNECT_REQUEST");
	attr.send_cq = attr.recv_cq = c->scq;
	if (rdma_create_qp_ex(c->sid, &attr))
		die("rdma_create_qp_ex (target)");
	if (rdma_accept(c->sid, &param))
		die("rdma_accept");
	if (!wait_cm_pair(g.ch, RDMA_CM_EVENT_ESTABLISHED, c->sid, c->cid))
		die("connection not established");
}

/* The status of the next completion on @cq (GENERAL_ERR if none came). */
static enum ibv_wc_status next_status(struct ibv_cq *cq, const char *what)
{
	struct ibv_wc wc;

	poll_one(cq, &wc);
	printf("# %s: wr_id %llu status %s\n", what,
	       (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status));
	return wc.status;
}

/* ------------------------------------------------------------ binding */

static struct ibv_mw_bind_info bind_info(struct ibv_mr *mr, int access)
{
	return (struct ibv_mw_bind_info) {
		.mr = mr, .addr = (uintptr_t)g.tbuf + WOFF, .length = WLEN,
		.mw_access_flags = access,
	};
}

/* Type 1: ibv_bind_mw() on the target's QP; the completion's status. */
static enum ibv_wc_status bind1(struct conn *c, struct ibv_mw *mw, int access)
{
	struct ibv_mw_bind b = { .wr_id = 11, .send_flags = IBV_SEND_SIGNALED,
				 .bind_info = bind_info(g.tmr, access) };
	uint32_t old = mw->rkey;
	int n = ibv_bind_mw(c->sid->qp, mw, &b);

	if (!check(!n && mw->rkey != old,
		   "type 1 ibv_bind_mw posted, rkey %#x -> %#x (%s)", old,
		   mw->rkey, n ? strerror(n) : "ok"))
		return IBV_WC_GENERAL_ERR;
	return next_status(c->scq, "bind type 1");
}

/*
 * Type 2 onto @mr under the next key: IBV_WR_BIND_MW in ibv_post_send(),
 * or ibv_wr_bind_mw() if @ex; *@rkey is the window's new STag.
 */
static enum ibv_wc_status bind2(struct conn *c, struct ibv_mw *mw,
				struct ibv_mr *mr, int access, bool ex,
				uint32_t *rkey)
{
	struct ibv_send_wr wr = {
		.wr_id = 12, .opcode = IBV_WR_BIND_MW,
		.send_flags = IBV_SEND_SIGNALED,
		.bind_mw = { .mw = mw, .rkey = ibv_inc_rkey(mw->rkey),
			     .bind_info = bind_info(mr, access) },
	}, *bad = NULL;
	struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(c->sid->qp);
	enum ibv_wc_status st;
	int n;

	*rkey = wr.bind_mw.rkey;
	if (ex) {
		ibv_wr_start(qpx);
		qpx->wr_id = 13;
		qpx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_bind_mw(qpx, mw, *rkey, &wr.bind_mw.bind_info);
		n = ibv_wr_complete(qpx);
	} else {
		n = ibv_post_send(c->sid->qp, &wr, &bad);
	}
	if (!check(!n, "type 2 bind posted (%s): %s",
		   ex ? "ibv_wr_bind_mw" : "IBV_WR_BIND_MW",
		   n ? strerror(n) : "ok"))
		return IBV_WC_GENERAL_ERR;
	st = next_status(c->scq, "bind type 2");
	/* The consumer owns a type 2 window's key: keep it once bound. */
	if (st == IBV_WC_SUCCESS)
		mw->rkey = *rkey;
	return st;
}

/* ------------------------------------------------------ remote access */

/* The initiator's Write or Read of @len at window offset @off. */
static void post_rdma(struct conn *c, enum ibv_wr_opcode op, uint32_t rkey,
		      size_t off, size_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)g.ibuf + off,
			       .length = len, .lkey = g.imr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 21, .opcode = op, .sg_list = &sge, .num_sge = 1,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)g.tbuf + off,
			     .rkey = rkey },
	}, *bad = NULL;

	if (ibv_post_send(c->cid->qp, &wr, &bad))
		die("ibv_post_send (rdma)");
}

/* Write and Read through window @rkey inside its range: data moves. */
static void check_granted(struct conn *c, uint32_t rkey, const char *what)
{
	memset(g.tbuf, FILL, LEN);
	memset(g.ibuf, DATA, LEN);
	post_rdma(c, IBV_WR_RDMA_WRITE, rkey, WOFF, WLEN);
	check(next_status(c->ccq, what) == IBV_WC_SUCCESS &&
	      arrived(g.tbuf + WOFF, WLEN, DATA) && all(g.tbuf, WOFF, FILL) &&
	      all(g.tbuf + WOFF + WLEN, LEN - WOFF - WLEN, FILL),
	      "%s: Write inside the window placed exactly its range", what);
	memset(g.ibuf, FILL, LEN);
	memset(g.tbuf + WOFF, DATA, WLEN);
	post_rdma(c, IBV_WR_RDMA_READ, rkey, WOFF + 512, 1024);
	check(next_status(c->ccq, what) == IBV_WC_SUCCESS &&
	      all(g.ibuf + WOFF + 512, 1024, DATA),
	      "%s: Read inside the window returned its data", what);
	check(qp_state(c->sid->qp) == IBV_QPS_RTS && cq_quiet(c->scq, 20),
	      "%s: target QP in RTS, nothing on its CQ", what);
}

/*
 * @op at window offset @off for @len through @rkey must be refused: the
 * target sends a Terminate (access error on both QPs, both in ERR), a
 * Read completes with an error, and the memory the access would have
 * changed keeps FILL.  Uses up the connection.
 */
static void check_denied(struct conn *c, enum ibv_wr_opcode op, uint32_t rkey,
			 size_t off, size_t len, const char *what)
{
	bool write = op == IBV_WR_RDMA_WRITE;
	enum ibv_wc_status st;

	memset(g.tbuf, write ? FILL : DATA, LEN);
	memset(g.ibuf, write ? DATA : FILL, LEN);
	post_rdma(c, op, rkey, off, len);
	st = next_status(c->ccq, what);
	if (!write)
		check(st != IBV_WC_SUCCESS, "%s: the Read fails (%s)", what,
		      ibv_wc_status_str(st));
	check(wait_qp_events(g.ctx, c->cid->qp, c->sid->qp, IBV_EVENT_QP_ACCESS_ERR),
	      "%s: access error event on both QPs", what);
	check(qp_state(c->cid->qp) == IBV_QPS_ERR &&
	      qp_state(c->sid->qp) == IBV_QPS_ERR,
	      "%s: both QPs in ERR", what);
	check(all(write ? g.tbuf : g.ibuf, LEN, FILL),
	      "%s: %s memory untouched", what, write ? "target" : "sink");
}

/* ------------------------------------------------------------- cases */

static void check_alloc(struct ibv_mw **mw1, struct ibv_mw **mw2)
{
	struct ibv_mw *bad;

	*mw1 = ibv_alloc_mw(g.pd, IBV_MW_TYPE_1);
	*mw2 = ibv_alloc_mw(g.pd, IBV_MW_TYPE_2);
	if (!check(*mw1 && *mw2, "ibv_alloc_mw type 1 and 2 (%s)",
		   *mw1 && *mw2 ? "ok" : strerror(errno)))
		die("ibv_alloc_mw");
	check((*mw1)->type == IBV_MW_TYPE_1 && (*mw2)->type == IBV_MW_TYPE_2 &&
	      (*mw1)->rkey >> 8 && (*mw2)->rkey >> 8 &&
	      (*mw1)->rkey >> 8 != (*mw2)->rkey >> 8 &&
	      (*mw1)->rkey >> 8 != g.tmr->rkey >> 8,
	      "windows have their own STag indices (%#x, %#x, MR %#x)",
	      (*mw1)->rkey, (*mw2)->rkey, g.tmr->rkey);
	bad = ibv_alloc_mw(g.pd, 3);
	check(!bad, "ibv_alloc_mw type 3 refused (%s)",
	      bad ? "allocated" : strerror(errno));
	if (bad)
		ibv_dealloc_mw(bad);
}

/* Type 1: bind, access inside, Write outside refused. */
static void check_type1(struct ibv_mw *mw)
{
	int rw = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	struct conn c;

	connect_pair(&c);
	check(bind1(&c, mw, rw) == IBV_WC_SUCCESS, "type 1 bind completes");
	check_granted(&c, mw->rkey, "type 1");
	check_denied(&c, IBV_WR_RDMA_WRITE, mw->rkey, WOFF + WLEN - 8, 16,
		     "type 1, Write across the window's end");
	teardown(&c);
}

/* Type 1 again (rebound), Read without REMOTE_READ refused. */
static void check_no_read(struct ibv_mw *mw)
{
	struct conn c;

	connect_pair(&c);
	check(bind1(&c, mw, IBV_ACCESS_REMOTE_WRITE) == IBV_WC_SUCCESS,
	      "type 1 rebound write-only");
	check_denied(&c, IBV_WR_RDMA_READ, mw->rkey, WOFF, 64,
		     "type 1 write-only, Read");
	teardown(&c);
}

/* A FetchAdd of @add through @rkey at window offset @off into ibuf[0, 8). */
static void post_fadd(struct conn *c, uint32_t rkey, size_t off, uint64_t add)
{
	struct ibv_sge sge = { .addr = (uintptr_t)g.ibuf, .length = 8,
			       .lkey = g.imr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 41, .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
		.sg_list = &sge, .num_sge = 1, .send_flags = IBV_SEND_SIGNALED,
		.wr.atomic = { .remote_addr = (uintptr_t)g.tbuf + off,
			       .compare_add = add, .rkey = rkey },
	}, *bad = NULL;

	if (ibv_post_send(c->cid->qp, &wr, &bad))
		die("ibv_post_send (atomic)");
}

#define AOFF (WOFF + 64)		/* the atomic's word in the window */

/* The target's word at AOFF: @word, everything else FILL. */
static void atomic_target(uint64_t word)
{
	memset(g.tbuf, FILL, LEN);
	memcpy(g.tbuf + AOFF, &word, sizeof(word));
	memset(g.ibuf, FILL, LEN);
}

static bool atomic_word_is(uint64_t want)
{
	uint64_t got;

	memcpy(&got, g.tbuf + AOFF, sizeof(got));
	return got == want && all(g.tbuf, AOFF, FILL) &&
	       all(g.tbuf + AOFF + 8, LEN - AOFF - 8, FILL);
}

/*
 * On a new connection: bind type 1 window @mw with @access, then a
 * FetchAdd of 5 through it onto @word; the FetchAdd's status.
 */
static enum ibv_wc_status fadd_through(struct conn *c, struct ibv_mw *mw,
				       int access, uint64_t word,
				       const char *what)
{
	connect_pair(c);
	check(bind1(c, mw, access) == IBV_WC_SUCCESS, "%s: window bound", what);
	atomic_target(word);
	post_fadd(c, mw->rkey, AOFF, 5);
	return next_status(c->ccq, what);
}

/*
 * RFC 7306 through a type 1 window: a FetchAdd with REMOTE_ATOMIC is
 * executed on the MR's memory and returns the original; through the
 * window rebound without it, refused (access errors, the word kept).
 */
static void check_atomic(struct ibv_mw *mw)
{
	const uint64_t word = 0x1122334455667788ULL;
	enum ibv_wc_status st;
	uint64_t orig;
	struct conn c;

	st = fadd_through(&c, mw, IBV_ACCESS_REMOTE_ATOMIC, word,
			  "REMOTE_ATOMIC window");
	memcpy(&orig, g.ibuf, sizeof(orig));
	check(st == IBV_WC_SUCCESS && orig == word,
	      "FetchAdd through the window completes (%s) with the original "
	      "(%#llx)", ibv_wc_status_str(st), (unsigned long long)orig);
	check(atomic_word_is(word + 5),
	      "FetchAdd through the window: the word grew by 5, nothing else");
	teardown(&c);
	st = fadd_through(&c, mw, IBV_ACCESS_REMOTE_READ, word,
			  "read-only window");
	check(st != IBV_WC_SUCCESS, "FetchAdd without REMOTE_ATOMIC fails (%s)",
	      ibv_wc_status_str(st));
	check(wait_qp_events(g.ctx, c.cid->qp, c.sid->qp,
			     IBV_EVENT_QP_ACCESS_ERR),
	      "FetchAdd without REMOTE_ATOMIC: access error event on both QPs");
	check(atomic_word_is(word) && all(g.ibuf, 8, FILL),
	      "FetchAdd without REMOTE_ATOMIC: word and result untouched");
	teardown(&c);
}

/* Post a receive on the target and a Send with Invalidate of @rkey. */
static void send_inv(struct conn *c, uint32_t rkey)
{
	struct ibv_recv_wr rwr = { .wr_id = 31 }, *rbad = NULL;
	struct ibv_send_wr wr = {
		.wr_id = 32, .opcode = IBV_WR_SEND_WITH_INV,
		.send_flags = IBV_SEND_SIGNALED, .invalidate_rkey = rkey,
	}, *bad = NULL;

	if (ibv_post_recv(c->sid->qp, &rwr, &rbad) ||
	    ibv_post_send(c->cid->qp, &wr, &bad))
		die("ibv_post_recv/send (Send with Invalidate)");
}

/* IBV_WR_LOCAL_INV of @rkey on @c's target QP: its completion status. */
static enum ibv_wc_status local_inv(struct conn *c, uint32_t rkey)
{
	struct ibv_send_wr wr = { .wr_id = 41, .opcode = IBV_WR_LOCAL_INV,
				  .send_flags = IBV_SEND_SIGNALED,
				  .invalidate_rkey = rkey }, *bad;

	if (ibv_post_send(c->sid->qp, &wr, &bad))
		die("ibv_post_send (LOCAL_INV)");
	return next_status(c->scq, "LOCAL_INV");
}

/*
 * Type 2 by IBV_WR_BIND_MW on one connection's target QP: it serves that
 * QP only (type 2B).  Through another connection of the same PD a Write
 * and a Read are refused (Terminate, memory untouched), and so are a
 * bind and a LOCAL_INV; it still works on its own QP, where LOCAL_INV
 * ends it.
 */
static void check_type2_local_inv(struct ibv_mw *mw)
{
	int rw = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	uint32_t rkey, other;
	struct conn c, o;

	connect_pair(&c);
	check(bind2(&c, mw, g.tmr, rw, false, &rkey) == IBV_WC_SUCCESS,
	      "type 2 IBV_WR_BIND_MW completes");
	check_granted(&c, rkey, "type 2");

	connect_pair(&o);
	check_denied(&o, IBV_WR_RDMA_WRITE, rkey, WOFF, 64,
		     "type 2 through another QP of its PD, Write");
	teardown(&o);
	connect_pair(&o);
	check_denied(&o, IBV_WR_RDMA_READ, rkey, WOFF, 64,
		     "type 2 through another QP of its PD, Read");
	teardown(&o);
	connect_pair(&o);
	check(local_inv(&o, rkey) != IBV_WC_SUCCESS,
	      "LOCAL_INV of the type 2 window on another QP: refused");
	teardown(&o);
	connect_pair(&o);
	check(bind2(&o, mw, g.tmr, rw, false, &other) != IBV_WC_SUCCESS,
	      "type 2 still bound, bound on another QP: refused");
	teardown(&o);

	check_granted(&c, rkey, "type 2 on its own QP after the refusals");
	check(local_inv(&c, rkey) == IBV_WC_SUCCESS,
	      "LOCAL_INV of the type 2 window on its QP completes");
	check_denied(&c, IBV_WR_RDMA_READ, rkey, WOFF, 64,
		     "type 2 after LOCAL_INV, Read");
	teardown(&c);
}

/*
 * ibv_wr_bind_mw and ibv_wr_local_inv take no data: an ibv_wr_set_sge
 * after either fails the batch with EINVAL at ibv_wr_complete, nothing is
 * posted and the QP stays in RTS (the SGE used to overwrite the bind and
 * the kernel moved the QP to ERROR).
 */
static void check_wr_no_data(struct ibv_mw *mw)
{
	struct ibv_mw_bind_info bi = bind_info(g.tmr, IBV_ACCESS_REMOTE_READ);
	struct ibv_qp_ex *qpx;
	struct conn c;
	int n;

	connect_pair(&c);
	qpx = ibv_qp_to_qp_ex(c.sid->qp);
	ibv_wr_start(qpx);
	qpx->wr_id = 51;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_bind_mw(qpx, mw, ibv_inc_rkey(mw->rkey), &bi);
	ibv_wr_set_sge(qpx, g.tmr->lkey, (uintptr_t)g.tbuf, 64);
	n = ibv_wr_complete(qpx);
	check(n == EINVAL, "ibv_wr_bind_mw + ibv_wr_set_sge: ibv_wr_complete "
	      "%d (want EINVAL)", n);
	ibv_wr_start(qpx);
	qpx->wr_id = 52;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_local_inv(qpx, mw->rkey);
	ibv_wr_set_sge(qpx, g.tmr->lkey, (uintptr_t)g.tbuf, 64);
	n = ibv_wr_complete(qpx);
	check(n == EINVAL, "ibv_wr_local_inv + ibv_wr_set_sge: "
	      "ibv_wr_complete %d (want EINVAL)", n);
	check(qp_state(c.sid->qp) == IBV_QPS_RTS && cq_quiet(c.scq, 20),
	      "refused batches: QP in RTS, nothing completed");
	teardown(&c);
}

/* Type 2 by ibv_wr_bind_mw, then invalidated by the peer's Send. */
static void check_type2_remote_inv(struct ibv_mw *mw)
{
	int rw = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	struct ibv_wc wc;
	uint32_t rkey;
	struct conn c;
	bool got;

	connect_pair(&c);
	check(bind2(&c, mw, g.tmr, rw, true, &rkey) == IBV_WC_SUCCESS,
	      "type 2 ibv_wr_bind_mw completes (after LOCAL_INV)");
	check_granted(&c, rkey, "type 2 (wr_bind_mw)");
	send_inv(&c, rkey);
	check(next_status(c.ccq, "Send with Invalidate") == IBV_WC_SUCCESS,
	      "Send with Invalidate of the type 2 window completes");
	/* Polled first: the arguments below are evaluated in any order. */
	got = poll_one(c.scq, &wc);
	check(got && wc.status == IBV_WC_SUCCESS &&
	      (wc.wc_flags & IBV_WC_WITH_INV) && wc.invalidated_rkey == rkey,
	      "the receive reports the invalidated STag (%#x, window %#x)",
	      wc.invalidated_rkey, rkey);
	check_denied(&c, IBV_WR_RDMA_READ, rkey, WOFF, 64,
		     "type 2 after Send with Invalidate, Read");
	teardown(&c);
}

/* A peer may not invalidate a type 1 window; it works afterwards. */
static void check_type1_no_remote_inv(struct ibv_mw *mw)
{
	int rw = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	struct ibv_wc wc;
	struct conn c;

	connect_pair(&c);
	check(bind1(&c, mw, rw) == IBV_WC_SUCCESS, "type 1 rebound");
	send_inv(&c, mw->rkey);
	poll_one(c.scq, &wc);
	check(wc.status != IBV_WC_SUCCESS,
	      "Send with Invalidate of a type 1 window: the receive fails (%s)",
	      ibv_wc_status_str(wc.status));
	teardown(&c);
	connect_pair(&c);
	check_granted(&c, mw->rkey, "type 1 after the refused invalidation");
	teardown(&c);
}

/* A bind onto an MR registered without MW_BIND completes in error. */
static void check_no_mw_bind(struct ibv_mw *mw)
{
	struct ibv_mr *mr = ibv_reg_mr(g.pd, g.tbuf, LEN,
				       IBV_ACCESS_LOCAL_WRITE |
				       IBV_ACCESS_REMOTE_WRITE);
	uint32_t rkey;
	struct conn c;

	if (!mr)
		die("ibv_reg_mr (no MW_BIND)");
	connect_pair(&c);
	check(bind2(&c, mw, mr, IBV_ACCESS_REMOTE_WRITE, false, &rkey) ==
	      IBV_WC_MW_BIND_ERR, "bind onto an MR without MW_BIND: MW_BIND_ERR");
	teardown(&c);
	ibv_dereg_mr(mr);
}

/* dereg_mr under a bound type 2 window: allowed, the window is dead. */
static void check_dereg_under_window(struct ibv_mw *mw)
{
	struct ibv_mr *mr = ibv_reg_mr(g.pd, g.tbuf, LEN,
				       IBV_ACCESS_LOCAL_WRITE |
				       IBV_ACCESS_MW_BIND);
	uint32_t rkey;
	struct conn c;
	int n;

	if (!mr)
		die("ibv_reg_mr (second MR)");
	connect_pair(&c);
	check(bind2(&c, mw, mr, IBV_ACCESS_REMOTE_READ, false, &rkey) ==
	      IBV_WC_SUCCESS, "type 2 bound onto a second MR");
	n = ibv_dereg_mr(mr);
	check(!n, "dereg_mr of an MR with a bound window (%s)",
	      n ? strerror(n) : "ok");
	check_denied(&c, IBV_WR_RDMA_READ, rkey, WOFF, 64,
		     "window of a deregistered MR, Read");
	teardown(&c);
}

int main(int argc, char **argv)
{
	struct ibv_mw *mw1, *mw2, *mw3, *mw4;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: %s IP [PORT]\n", argv[0]);
		return 2;
	}
	setup(argv[1], argc > 2 ? atoi(argv[2]) : 7495);
	check_alloc(&mw1, &mw2);
	mw3 = ibv_alloc_mw(g.pd, IBV_MW_TYPE_2);
	mw4 = ibv_alloc_mw(g.pd, IBV_MW_TYPE_2);
	if (!mw3 || !mw4)
		die("ibv_alloc_mw");
	check_type1(mw1);
	check_no_read(mw1);
	check_atomic(mw1);
	check_type2_local_inv(mw2);
	check_type2_remote_inv(mw2);
	check_type1_no_remote_inv(mw1);
	check_no_mw_bind(mw3);
	check_dereg_under_window(mw4);
	check_wr_no_data(mw3);
	check(!ibv_dealloc_mw(mw1) && !ibv_dealloc_mw(mw2) &&
	      !ibv_dealloc_mw(mw3) && !ibv_dealloc_mw(mw4),
	      "ibv_dealloc_mw of every window");
	ibv_dereg_mr(g.tmr);
	ibv_dereg_mr(g.imr);
	ibv_dealloc_pd(g.pd);
	rdma_destroy_id(g.listen);
	rdma_destroy_event_channel(g.ch);
	printf("# %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
