// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * ext-verbs: the RFC 7306 verbs of the rdmap_sw provider (atomics and
 * Write with Immediate) over real connections (rdma_cm on the local
 * address of an rdmap_sw device).
 *
 *   ext-verbs DEVICE IP PORT [N]
 *
 * One process plays both ends: a listener on IP:PORT accepts RC
 * connections from client QPs created through the extended API (ibv_qp_ex,
 * send_ops_flags asking for the atomics and Write with Immediate).  The
 * server's receive CQ is on a completion channel.  Checks, in order:
 *   - ibv_query_device: atomic_cap IBV_ATOMIC_GLOB, max_qp_rd_atom > 0;
 *     a QP asking for IBV_QP_EX_WITH_SEND_WITH_IMM is refused;
 *   - FetchAdd and CmpSwap through ibv_post_send: the original value in
 *     the 8-byte result buffer, the target word afterwards (a carry across
 *     bit 32: one 64-bit field), completion opcodes IBV_WC_FETCH_ADD and
 *     IBV_WC_COMP_SWAP, a failed compare leaves the word; a chain of
 *     dependent atomics is executed in order;
 *   - the same through ibv_wr_atomic_fetch_add / ibv_wr_atomic_cmp_swp;
 *   - an SGE that is not 8 bytes (4, 16, two SGEs; inline data through
 *     ibv_wr_set_inline_data) is refused at post time with EINVAL
 *     (ibv_post_send's bad_wr on it, ibv_wr_complete) and nothing reaches
 *     the wire; IBV_SEND_INLINE on an ibv_post_send atomic is ignored (as
 *     for a Read): the result lands in the SGE;
 *   - racing increments: a thread of this (the target) process does
 *     __atomic_fetch_add(word, 1) N times while the client posts N
 *     FetchAdd(+1) in batches: the word ends at exactly 2N, and the 2N
 *     original values (N remote, N local) are 0 .. 2N-1, each once;
 *   - Write with Immediate through ibv_post_send and ibv_wr_rdma_write_imm:
 *     the target completes IBV_WC_RECV_RDMA_WITH_IMM with IBV_WC_WITH_IMM,
 *     the posted imm_data (network order), byte_len the Write's length
 *     (0 for a zero-length Write after a plain Write), the data placed; a
 *     solicited-only armed CQ gets no event for an unsolicited one and an
 *     event for one with IBV_SEND_SOLICITED; IBV_WR_SEND_WITH_IMM is
 *     refused with EINVAL at post time;
 *   - on a connection of its own each, last: an atomic on a misaligned
 *     address fails locally (IBV_WC_LOC_QP_OP_ERR; never sent, since the
 *     peer would end the connection for it, RFC 7306 section 8.2: a
 *     Terminate with no headers goes in its place, section 8.1); one on
 *     an MR without IBV_ACCESS_REMOTE_ATOMIC completes in error (the
 *     responder's Terminate flushes the requester's WRs) and the client
 *     QP gets IBV_EVENT_QP_ACCESS_ERR (remote protection, section 8.1);
 *     both times both QPs go to ERROR, a WR posted afterwards is flushed
 *     and the target memory is untouched.
 * N (default 2000) is the number of racing increments on each side.
 *
 * If RSW_EXT_WIRE_LOG names a file, every request that reaches the wire is
 * logged there, one line each, for a wire decoder to compare against
 * (scripts/tests/rfc7306-wire.py):
 *   conn K
 *   fadd STAG TO ADD ORIG|-        (ORIG: the returned original value)
 *   cswap STAG TO COMPARE SWAP ORIG|-
 *   wimm STAG TO LEN IMM SOLICITED (IMM: the 4 octets as posted, hex)
 *   write STAG TO LEN
 * Prints one TAP line per check; exits 0 only if every check passed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#define TIMEOUT_S 30.0
#define ABUF 4096			/* atomic target region (server) */
#define WBUF 65536			/* Write with Immediate target */
#define SQ_DEPTH 64
#define BATCH 32			/* racing FetchAdds posted at once */
#define RD_ATOM 16

#include "wait.h"
#include "pattern.h"

struct conn {
	struct rdma_cm_id *cid, *sid;
	struct ibv_qp_ex *qpx;
	struct ibv_cq *ccq;		/* client send + receive */
	struct ibv_cq *scq;		/* server send */
};

static struct {
	struct rdma_event_channel *ech;
	struct rdma_cm_id *listen;
	struct sockaddr_in addr;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *cc;
	struct ibv_cq *rcq;		/* server receive, on cc */
	struct conn c;			/* the main connection */
	uint64_t *abuf;			/* server: atomic targets */
	struct ibv_mr *amr;
	uint64_t *nbuf;			/* server: no REMOTE_ATOMIC */
	struct ibv_mr *nmr;
	char *wbuf;			/* server: Write with Immediate target */
	struct ibv_mr *wmr;
	char *rbuf;			/* server: receive buffers */
	struct ibv_mr *rmr;
	uint64_t *res;			/* client: atomic results */
	struct ibv_mr *resmr;
	char *sbuf;			/* client: Write sources */
	struct ibv_mr *smr;
	unsigned int nres;
	unsigned int conns;
	unsigned int unacked;
	int max_rd_atom;
	FILE *wire;
} g;

static void wire_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void wire_log(const char *fmt, ...)
{
	va_list ap;

	if (!g.wire)
		return;
	va_start(ap, fmt);
	vfprintf(g.wire, fmt, ap);
	va_end(ap);
	fputc('\n', g.wire);
	fflush(g.wire);
}

static struct ibv_mr *reg(void *p, size_t len, int access)
{
	struct ibv_mr *mr = ibv_reg_mr(g.pd, p, len, access);

	if (!mr)
		die("ibv_reg_mr");
	return mr;
}

static void *zalloc_aligned(size_t len)
{
	void *p = NULL;

	if (posix_memalign(&p, 4096, len))
		die("posix_memalign");
	memset(p, 0, len);
	return p;
}

static void setup(const char *dev, const char *ip, int port, unsigned int n)
{
	struct ibv_device_attr da;
	int ret;

	g.listen = listen_on(&g.ech, ip, port, 4, &g.addr);
	g.ctx = g.listen->verbs;
	if (!check(!strcmp(ibv_get_device_name(g.ctx->device), dev),
		   "rdma_cm bound %s:%d to %s (want %s)", ip, port,
		   ibv_get_device_name(g.ctx->device), dev))
		die("wrong device");
	ret = ibv_query_device(g.ctx, &da);
	check(!ret && da.atomic_cap == IBV_ATOMIC_GLOB,
	      "ibv_query_device (%d): atomic_cap %d (want IBV_ATOMIC_GLOB %d)",
	      ret, da.atomic_cap, IBV_ATOMIC_GLOB);
	check(!ret && da.max_qp_rd_atom > 0 && da.max_qp_init_rd_atom > 0,
	      "ibv_query_device: max_qp_rd_atom %d, max_qp_init_rd_atom %d "
	      "(want > 0)", da.max_qp_rd_atom, da.max_qp_init_rd_atom);
	g.max_rd_atom = da.max_qp_rd_atom < RD_ATOM ? da.max_qp_rd_atom :
						      RD_ATOM;
	if (g.max_rd_atom < 1)
		g.max_rd_atom = 1;

	g.pd = ibv_alloc_pd(g.ctx);
	if (!g.pd)
		die("ibv_alloc_pd");
	g.abuf = zalloc_aligned(ABUF);
	g.amr = reg(g.abuf, ABUF, IBV_ACCESS_LOCAL_WRITE |
		    IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_REMOTE_READ |
		    IBV_ACCESS_REMOTE_WRITE);
	g.nbuf = zalloc_aligned(ABUF);
	g.nmr = reg(g.nbuf, ABUF, IBV_ACCESS_LOCAL_WRITE |
		    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
	g.wbuf = zalloc_aligned(WBUF);
	g.wmr = reg(g.wbuf, WBUF, IBV_ACCESS_LOCAL_WRITE |
		    IBV_ACCESS_REMOTE_WRITE);
	g.rbuf = zalloc_aligned(4096);
	g.rmr = reg(g.rbuf, 4096, IBV_ACCESS_LOCAL_WRITE);
	g.nres = n + 64;
	g.res = zalloc_aligned(g.nres * sizeof(uint64_t));
	g.resmr = reg(g.res, g.nres * sizeof(uint64_t),
		      IBV_ACCESS_LOCAL_WRITE);
	g.sbuf = zalloc_aligned(WBUF);
	g.smr = reg(g.sbuf, WBUF, 0);

	g.cc = ibv_create_comp_channel(g.ctx);
	if (!g.cc)
		die("ibv_create_comp_channel");
	if (fcntl(g.cc->fd, F_SETFL, fcntl(g.cc->fd, F_GETFL) | O_NONBLOCK))
		die("O_NONBLOCK on the channel");
	g.rcq = ibv_create_cq(g.ctx, 64, &g, g.cc, 0);
	if (!g.rcq)
		die("ibv_create_cq");
}

#define CLIENT_OPS (IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | \
		    IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | \
		    IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | \
		    IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_SEND)

/* Send with Immediate has no faithful iWARP mapping: refused at create. */
static void check_no_send_imm_qp(void)
{
	struct ibv_cq *cq = ibv_create_cq(g.ctx, 8, NULL, NULL, 0);
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_RC, .send_cq = cq, .recv_cq = cq,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = g.pd,
		.send_ops_flags = CLIENT_OPS | IBV_QP_EX_WITH_SEND_WITH_IMM,
	};
	struct ibv_qp *qp;

	if (!cq)
		die("ibv_create_cq");
	qp = ibv_create_qp_ex(g.ctx, &a);
	check(!qp, "a QP asking for IBV_QP_EX_WITH_SEND_WITH_IMM is refused "
	      "(%s)", qp ? "CREATED" : strerror(errno));
	if (qp)
		ibv_destroy_qp(qp);
	a.send_ops_flags = CLIENT_OPS;
	qp = ibv_create_qp_ex(g.ctx, &a);
	check(qp != NULL, "the same QP without it is created (%s)",
	      qp ? "ok" : strerror(errno));
	if (qp)
		ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
}

/* Connect a new client QP to the listener; the server QP takes g.rcq. */
static void connect_pair(struct conn *c)
{
	struct rdma_conn_param param = {
		.responder_resources = (uint8_t)g.max_rd_atom,
		.initiator_depth = (uint8_t)g.max_rd_atom,
	};
	struct ibv_qp_init_attr_ex cattr = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = SQ_DEPTH, .max_recv_wr = 4,
			 .max_send_sge = 2, .max_recv_sge = 1,
			 .max_inline_data = 64 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = g.pd,
		.send_ops_flags = CLIENT_OPS,
	};
	struct ibv_qp_init_attr sattr = {
		.qp_type = IBV_QPT_RC,
		.recv_cq = g.rcq,
		.cap = { .max_send_wr = 8, .max_recv_wr = 32,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	int ret;

	memset(c, 0, sizeof(*c));
	c->ccq = ibv_create_cq(g.ctx, 2 * SQ_DEPTH, NULL, NULL, 0);
	c->scq = ibv_create_cq(g.ctx, 16, NULL, NULL, 0);
	if (!c->ccq || !c->scq)
		die("ibv_create_cq");
	cattr.send_cq = cattr.recv_cq = c->ccq;
	sattr.send_cq = c->scq;
	if (rdma_create_id(g.ech, &c->cid, NULL, RDMA_PS_TCP))
		die("rdma_create_id (client)");
	resolve_on(g.ech, c->cid, NULL, &g.addr, g.ctx);
	ret = rdma_create_qp_ex(c->cid, &cattr);
	if (!check(!ret, "client QP %u with atomic and Write-with-Immediate "
		   "send_ops_flags: %s", g.conns, ret ? strerror(errno) : "ok"))
		die("rdma_create_qp_ex");
	c->qpx = ibv_qp_to_qp_ex(c->cid->qp);
	if (!c->qpx)
		die("ibv_qp_to_qp_ex");
	if (rdma_connect(c->cid, &param))
		die("rdma_connect");
	if (!wait_cm_on(g.ech, RDMA_CM_EVENT_CONNECT_REQUEST, NULL, &c->sid))
		die("no CONNECT_REQUEST");
	if (rdma_create_qp(c->sid, g.pd, &sattr))
		die("rdma_create_qp (server)");
	if (rdma_accept(c->sid, &param))
		die("rdma_accept");
	if (!check(wait_cm_pair(g.ech, RDMA_CM_EVENT_ESTABLISHED, c->sid,
				c->cid),
		   "connection %u established (QPs %u and %u), IRD/ORD %d",
		   g.conns, c->cid->qp->qp_num, c->sid->qp->qp_num,
		   g.max_rd_atom))
		die("connection not established");
	wire_log("conn %u", g.conns);
	g.conns++;
}

static void drop_pair(struct conn *c, bool errored)
{
	rdma_disconnect(c->cid);
	if (!errored)
		check(wait_cm_pair(g.ech, RDMA_CM_EVENT_DISCONNECTED, c->sid,
				   c->cid), "DISCONNECTED on both ends");
	rdma_destroy_qp(c->cid);
	rdma_destroy_qp(c->sid);
	rdma_destroy_id(c->cid);
	rdma_destroy_id(c->sid);
	ibv_destroy_cq(c->ccq);
	ibv_destroy_cq(c->scq);
}

static int post(struct conn *c, struct ibv_send_wr *wr,
		struct ibv_send_wr **bad)
{
	*bad = NULL;
	return ibv_post_send(c->cid->qp, wr, bad);
}

/* A client completion @wr_id with @op and SUCCESS. */
static bool done_ok(struct conn *c, uint64_t wr_id, enum ibv_wc_opcode op,
		    const char *what)
{
	struct ibv_wc wc;
	bool got = poll_one(c->ccq, &wc);

	return check(got && wc.status == IBV_WC_SUCCESS && wc.wr_id == wr_id &&
		     wc.opcode == op,
		     "%s: completion wr_id %llu (want %llu) opcode %d (want "
		     "%d) %s", what, (unsigned long long)wc.wr_id,
		     (unsigned long long)wr_id, got ? (int)wc.opcode : -1,
		     op, got ? ibv_wc_status_str(wc.status) : "none");
}

static uint64_t raddr(const void *p)
{
	return (uintptr_t)p;
}

static void atomic_wr(struct ibv_send_wr *wr, struct ibv_sge *sge,
		      uint64_t wr_id, enum ibv_wr_opcode op, uint32_t rkey,
		      uint64_t addr, uint64_t compare_add, uint64_t swap,
		      unsigned int slot)
{
	*sge = (struct ibv_sge){ .addr = (uintptr_t)&g.res[slot],
				 .length = 8, .lkey = g.resmr->lkey };
	*wr = (struct ibv_send_wr){ .wr_id = wr_id, .sg_list = sge,
				    .num_sge = 1, .opcode = op,
				    .send_flags = IBV_SEND_SIGNALED };
	wr->wr.atomic.remote_addr = addr;
	wr->wr.atomic.rkey = rkey;
	wr->wr.atomic.compare_add = compare_add;
	wr->wr.atomic.swap = swap;
}

static void log_atomic(const struct ibv_send_wr *wr, const char *orig)
{
	if (wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD)
		wire_log("fadd 0x%x 0x%" PRIx64 " 0x%" PRIx64 " %s",
			 wr->wr.atomic.rkey, wr->wr.atomic.remote_addr,
			 wr->wr.atomic.compare_add, orig);
	else
		wire_log("cswap 0x%x 0x%" PRIx64 " 0x%" PRIx64 " 0x%" PRIx64
			 " %s", wr->wr.atomic.rkey, wr->wr.atomic.remote_addr,
			 wr->wr.atomic.compare_add, wr->wr.atomic.swap, orig);
}

static void log_atomic_done(const struct ibv_send_wr *wr, uint64_t orig)
{
	char s[24];

	snprintf(s, sizeof(s), "0x%" PRIx64, orig);
	log_atomic(wr, s);
}

/*
 * One atomic through ibv_post_send: word @w of abuf starts at @before;
 * want @want_orig returned and @after in the word.
 */
static void one_atomic(enum ibv_wr_opcode op, unsigned int w, uint64_t before,
		       uint64_t compare_add, uint64_t swap, uint64_t after,
		       const char *what)
{
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	enum ibv_wc_opcode wop = op == IBV_WR_ATOMIC_FETCH_AND_ADD ?
				 IBV_WC_FETCH_ADD : IBV_WC_COMP_SWAP;
	int ret;

	g.abuf[w] = before;
	g.abuf[w + 1] = 0x5a5a5a5a5a5a5a5aULL;
	g.res[0] = 0xdeadbeefdeadbeefULL;
	atomic_wr(&wr, &sge, 100 + w, op, g.amr->rkey, raddr(&g.abuf[w]),
		  compare_add, swap, 0);
	ret = post(&g.c, &wr, &bad);
	check(!ret, "%s: ibv_post_send (%d)", what, ret);
	if (!done_ok(&g.c, 100 + w, wop, what))
		return;
	log_atomic_done(&wr, g.res[0]);
	check(g.res[0] == before,
	      "%s: returned 0x%016" PRIx64 " (want the original 0x%016" PRIx64
	      ")", what, g.res[0], before);
	check(g.abuf[w] == after && g.abuf[w + 1] == 0x5a5a5a5a5a5a5a5aULL,
	      "%s: target word 0x%016" PRIx64 " (want 0x%016" PRIx64 "), the "
	      "next word %s", what, g.abuf[w], after,
	      g.abuf[w + 1] == 0x5a5a5a5a5a5a5a5aULL ? "untouched" : "WRITTEN");
}

static void check_post_send_atomics(void)
{
	struct ibv_send_wr wr[3], *bad;
	struct ibv_sge sge[3];
	int ret, i;

	one_atomic(IBV_WR_ATOMIC_FETCH_AND_ADD, 0, 0x1122334455667788ULL,
		   0x0102030405060708ULL, 0, 0x122436485a6c7e90ULL,
		   "FetchAdd");
	one_atomic(IBV_WR_ATOMIC_FETCH_AND_ADD, 2, 0x00000000ffffffffULL,
		   1, 0, 0x0000000100000000ULL,
		   "FetchAdd carrying across bit 32 (one 64-bit field)");
	one_atomic(IBV_WR_ATOMIC_FETCH_AND_ADD, 4, 0xfffffffffffffffeULL,
		   3, 0, 1, "FetchAdd wrapping around 2^64");
	one_atomic(IBV_WR_ATOMIC_CMP_AND_SWP, 6, 0xa1b2c3d4e5f60718ULL,
		   0xa1b2c3d4e5f60718ULL, 0x0f1e2d3c4b5a6978ULL,
		   0x0f1e2d3c4b5a6978ULL, "CmpSwap, compare equal");
	one_atomic(IBV_WR_ATOMIC_CMP_AND_SWP, 8, 0xa1b2c3d4e5f60718ULL,
		   0xa1b2c3d4e5f60719ULL, 0x0f1e2d3c4b5a6978ULL,
		   0xa1b2c3d4e5f60718ULL,
		   "CmpSwap, compare differs in the lowest bit (word kept)");
	one_atomic(IBV_WR_ATOMIC_CMP_AND_SWP, 10, 0x80000000a1b2c3d4ULL,
		   0x00000000a1b2c3d4ULL, 7, 0x80000000a1b2c3d4ULL,
		   "CmpSwap, compare differs in the highest bit (word kept)");

	/* A chain: each depends on the one before (ordered execution). */
	g.abuf[12] = 5;
	for (i = 0; i < 3; i++)
		g.res[i] = ~0ULL;
	atomic_wr(&wr[0], &sge[0], 200, IBV_WR_ATOMIC_FETCH_AND_ADD,
		  g.amr->rkey, raddr(&g.abuf[12]), 10, 0, 0);
	atomic_wr(&wr[1], &sge[1], 201, IBV_WR_ATOMIC_CMP_AND_SWP,
		  g.amr->rkey, raddr(&g.abuf[12]), 15, 100, 1);
	atomic_wr(&wr[2], &sge[2], 202, IBV_WR_ATOMIC_FETCH_AND_ADD,
		  g.amr->rkey, raddr(&g.abuf[12]), 1, 0, 2);
	wr[0].next = &wr[1];
	wr[1].next = &wr[2];
	ret = post(&g.c, wr, &bad);
	check(!ret, "chain FetchAdd(+10), CmpSwap(15 -> 100), FetchAdd(+1) "
	      "posted in one list (%d)", ret);
	done_ok(&g.c, 200, IBV_WC_FETCH_ADD, "chain 1");
	done_ok(&g.c, 201, IBV_WC_COMP_SWAP, "chain 2");
	done_ok(&g.c, 202, IBV_WC_FETCH_ADD, "chain 3");
	for (i = 0; i < 3; i++)
		log_atomic_done(&wr[i], g.res[i]);
	check(g.res[0] == 5 && g.res[1] == 15 && g.res[2] == 100 &&
	      g.abuf[12] == 101,
	      "chain executed in order: returned %" PRIu64 ", %" PRIu64 ", %"
	      PRIu64 " (want 5, 15, 100), word %" PRIu64 " (want 101)",
	      g.res[0], g.res[1], g.res[2], g.abuf[12]);
}

/* Start an ibv_wr_* list with one atomic on g.amr (no SGE yet). */
static void wr_atomic_begin(bool cswap, uint64_t wr_id, uint64_t addr,
			    uint64_t compare_add, uint64_t swap)
{
	struct ibv_qp_ex *q = g.c.qpx;

	ibv_wr_start(q);
	q->wr_id = wr_id;
	q->wr_flags = IBV_SEND_SIGNALED;
	if (cswap)
		ibv_wr_atomic_cmp_swp(q, g.amr->rkey, addr, compare_add, swap);
	else
		ibv_wr_atomic_fetch_add(q, g.amr->rkey, addr, compare_add);
}

/* The same through ibv_wr_atomic_*; returns ibv_wr_complete's status. */
static int wr_atomic(bool cswap, uint64_t wr_id, uint64_t addr,
		     uint64_t compare_add, uint64_t swap, unsigned int slot,
		     uint32_t len)
{
	wr_atomic_begin(cswap, wr_id, addr, compare_add, swap);
	ibv_wr_set_sge(g.c.qpx, g.resmr->lkey, (uintptr_t)&g.res[slot], len);
	return ibv_wr_complete(g.c.qpx);
}

static void check_wr_atomics(void)
{
	struct ibv_qp_ex *q = g.c.qpx;
	struct ibv_sge two[2] = {
		{ .addr = (uintptr_t)&g.res[0], .length = 4,
		  .lkey = g.resmr->lkey },
		{ .addr = (uintptr_t)&g.res[1], .length = 4,
		  .lkey = g.resmr->lkey },
	};
	uint64_t v = 0x7766554433221100ULL;
	char orig[24];
	int ret;

	g.abuf[20] = v;
	g.res[3] = ~0ULL;
	ret = wr_atomic(false, 300, raddr(&g.abuf[20]), 0x100000001ULL, 0, 3, 8);
	check(!ret, "ibv_wr_atomic_fetch_add + ibv_wr_complete (%d)", ret);
	if (done_ok(&g.c, 300, IBV_WC_FETCH_ADD, "ibv_wr_atomic_fetch_add")) {
		snprintf(orig, sizeof(orig), "0x%" PRIx64, g.res[3]);
		wire_log("fadd 0x%x 0x%" PRIx64 " 0x%llx %s", g.amr->rkey,
			 raddr(&g.abuf[20]), 0x100000001ULL, orig);
		check(g.res[3] == v && g.abuf[20] == v + 0x100000001ULL,
		      "ibv_wr_atomic_fetch_add: returned 0x%016" PRIx64
		      " (want 0x%016" PRIx64 "), word 0x%016" PRIx64,
		      g.res[3], v, g.abuf[20]);
	}
	g.res[4] = ~0ULL;
	ret = wr_atomic(true, 301, raddr(&g.abuf[20]), v + 0x100000001ULL,
			0x0123456789abcdefULL, 4, 8);
	check(!ret, "ibv_wr_atomic_cmp_swp + ibv_wr_complete (%d)", ret);
	if (done_ok(&g.c, 301, IBV_WC_COMP_SWAP, "ibv_wr_atomic_cmp_swp")) {
		snprintf(orig, sizeof(orig), "0x%" PRIx64, g.res[4]);
		wire_log("cswap 0x%x 0x%" PRIx64 " 0x%" PRIx64 " 0x%llx %s",
			 g.amr->rkey, raddr(&g.abuf[20]), (uint64_t)(v + 0x100000001ULL),
			 0x0123456789abcdefULL, orig);
		check(g.res[4] == v + 0x100000001ULL &&
		      g.abuf[20] == 0x0123456789abcdefULL,
		      "ibv_wr_atomic_cmp_swp: returned 0x%016" PRIx64
		      ", word 0x%016" PRIx64 " (want the swap value)",
		      g.res[4], g.abuf[20]);
	}
	g.res[5] = ~0ULL;
	ret = wr_atomic(true, 302, raddr(&g.abuf[20]), 1, 2, 5, 8);
	check(!ret, "ibv_wr_atomic_cmp_swp, compare fails (%d)", ret);
	if (done_ok(&g.c, 302, IBV_WC_COMP_SWAP,
		    "ibv_wr_atomic_cmp_swp, compare fails")) {
		snprintf(orig, sizeof(orig), "0x%" PRIx64, g.res[5]);
		wire_log("cswap 0x%x 0x%" PRIx64 " 0x1 0x2 %s", g.amr->rkey,
			 raddr(&g.abuf[20]), orig);
		check(g.res[5] == 0x0123456789abcdefULL &&
		      g.abuf[20] == 0x0123456789abcdefULL,
		      "ibv_wr_atomic_cmp_swp, compare fails: returned 0x%016"
		      PRIx64 ", word 0x%016" PRIx64 " kept", g.res[5],
		      g.abuf[20]);
	}

	/* Result SGEs that are not one 8-byte buffer: refused. */
	ret = wr_atomic(false, 303, raddr(&g.abuf[20]), 1, 0, 6, 4);
	check(ret == EINVAL, "ibv_wr_atomic_fetch_add with a 4-byte SGE: "
	      "ibv_wr_complete %d (want EINVAL)", ret);
	ret = wr_atomic(true, 304, raddr(&g.abuf[20]), 1, 2, 6, 16);
	check(ret == EINVAL, "ibv_wr_atomic_cmp_swp with a 16-byte SGE: "
	      "ibv_wr_complete %d (want EINVAL)", ret);
	wr_atomic_begin(false, 305, raddr(&g.abuf[20]), 1, 0);
	ibv_wr_set_sge_list(q, 2, two);
	ret = ibv_wr_complete(q);
	check(ret == EINVAL, "ibv_wr_atomic_fetch_add with two 4-byte SGEs: "
	      "ibv_wr_complete %d (want EINVAL)", ret);
	wr_atomic_begin(false, 306, raddr(&g.abuf[20]), 1, 0);
	ibv_wr_set_inline_data(q, &v, 8);
	ret = ibv_wr_complete(q);
	check(ret == EINVAL, "ibv_wr_atomic_fetch_add with inline data: "
	      "ibv_wr_complete %d (want EINVAL)", ret);
	check(cq_quiet(g.c.ccq, 200) && g.abuf[20] == 0x0123456789abcdefULL,
	      "nothing of the refused ibv_wr_* atomics completed or reached "
	      "the target (word 0x%016" PRIx64 ")", g.abuf[20]);
}

static void check_post_send_refused(void)
{
	struct ibv_send_wr wr, ok, *bad;
	struct ibv_sge sge, oksge, two[2];
	int ret;

	g.abuf[24] = 77;
	atomic_wr(&ok, &oksge, 400, IBV_WR_ATOMIC_FETCH_AND_ADD, g.amr->rkey,
		  raddr(&g.abuf[24]), 1, 0, 7);
	atomic_wr(&wr, &sge, 401, IBV_WR_ATOMIC_FETCH_AND_ADD, g.amr->rkey,
		  raddr(&g.abuf[24]), 1, 0, 8);
	sge.length = 4;
	ok.next = &wr;
	ret = post(&g.c, &ok, &bad);
	check(ret == EINVAL && bad == &wr,
	      "ibv_post_send: FetchAdd with a 4-byte SGE refused: %d (want "
	      "EINVAL), bad_wr %s", ret, bad == &wr ? "on it" :
	      bad == &ok ? "on the valid one before it" : "elsewhere");
	if (done_ok(&g.c, 400, IBV_WC_FETCH_ADD,
		    "the valid FetchAdd ahead of the refused one"))
		log_atomic_done(&ok, g.res[7]);
	sge.length = 16;
	wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
	ret = post(&g.c, &wr, &bad);
	check(ret == EINVAL && bad == &wr, "ibv_post_send: CmpSwap with a "
	      "16-byte SGE refused: %d (want EINVAL)", ret);
	two[0] = (struct ibv_sge){ .addr = (uintptr_t)&g.res[8], .length = 4,
				   .lkey = g.resmr->lkey };
	two[1] = two[0];
	two[1].addr += 4;
	wr.sg_list = two;
	wr.num_sge = 2;
	ret = post(&g.c, &wr, &bad);
	check(ret == EINVAL && bad == &wr, "ibv_post_send: CmpSwap with two "
	      "4-byte SGEs refused: %d (want EINVAL)", ret);
	wr.sg_list = &sge;
	wr.num_sge = 1;
	sge.length = 8;
	check(cq_quiet(g.c.ccq, 200) && g.abuf[24] == 78,
	      "only the valid FetchAdd reached the target (word %" PRIu64
	      ", want 78)", g.abuf[24]);
	/*
	 * IBV_SEND_INLINE means something only for Sends and Writes: on an
	 * atomic (as on a Read) it is ignored, the result lands in the SGE.
	 */
	wr.send_flags |= IBV_SEND_INLINE;
	wr.wr.atomic.compare_add = 78;
	wr.wr.atomic.swap = 79;
	g.res[8] = ~0ULL;
	ret = post(&g.c, &wr, &bad);
	check(!ret, "ibv_post_send: CmpSwap with IBV_SEND_INLINE (ignored "
	      "there, as for a Read) posted (%d)", ret);
	if (done_ok(&g.c, 401, IBV_WC_COMP_SWAP, "CmpSwap with IBV_SEND_INLINE"))
		log_atomic_done(&wr, g.res[8]);
	check(g.res[8] == 78 && g.abuf[24] == 79, "CmpSwap with "
	      "IBV_SEND_INLINE: result %" PRIu64 " in the SGE (want 78), word %"
	      PRIu64 " (want 79)", g.res[8], g.abuf[24]);
}

/* Racing increments: remote FetchAdds against a local thread's. */
static struct {
	uint64_t *word;
	unsigned int n;
	uint64_t *got;			/* the local thread's originals */
	unsigned int remote_done;	/* completions polled so far */
	unsigned int local_done;	/* local increments so far */
	unsigned int stalls;		/* pacing waits that timed out */
} race;

/*
 * Pacing is two-sided: neither side may get more than 2 batches ahead of
 * the other, so the two really run at once even when the scheduler would
 * let one finish before the other starts (seen on a TCG guest: 200 remote
 * FetchAdds done in 0.09 s before the local thread ran once).  A side
 * gives up waiting after 10 s; such stalls are counted and fail the check.
 */
static bool race_wait(unsigned int mine, const unsigned int *theirs)
{
	double end = now_s() + 10;

	while (mine > __atomic_load_n(theirs, __ATOMIC_ACQUIRE) + 2 * BATCH) {
		if (now_s() >= end) {
			__atomic_fetch_add(&race.stalls, 1, __ATOMIC_RELAXED);
			return false;
		}
		usleep(50);
	}
	return true;
}

static void *local_adder(void *arg)
{
	unsigned int i;

	(void)arg;
	for (i = 0; i < race.n; i++) {
		race_wait(i, &race.remote_done);
		race.got[i] = __atomic_fetch_add(race.word, 1,
						 __ATOMIC_SEQ_CST);
		__atomic_store_n(&race.local_done, i + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void check_race(unsigned int n)
{
	struct ibv_send_wr wr[BATCH], *bad;
	struct ibv_sge sge[BATCH];
	uint64_t *all = calloc(2 * (size_t)n, sizeof(uint64_t));
	unsigned int posted = 0, polled = 0, bad_wc = 0, i, k, dup = 0;
	unsigned int switches = 0, missing = 0;
	bool ok = true, prev_local = false;
	struct ibv_wc wc[BATCH];
	double t0, end;
	pthread_t th;
	int ret;

	race.got = calloc(n, sizeof(uint64_t));
	if (!all || !race.got)
		die("calloc");
	race.word = &g.abuf[32];
	*race.word = 0;
	race.n = n;
	race.remote_done = 0;
	race.local_done = 0;
	race.stalls = 0;
	t0 = now_s();
	end = t0 + 120;
	if (pthread_create(&th, NULL, local_adder, NULL))
		die("pthread_create");
	while (polled < n && now_s() < end && ok) {
		unsigned int b = 0;

		/* Keep at most 2 batches in the send queue. */
		while (posted < n && posted - polled + BATCH <= 2 * BATCH &&
		       b < BATCH) {
			atomic_wr(&wr[b], &sge[b], 1000 + posted,
				  IBV_WR_ATOMIC_FETCH_AND_ADD, g.amr->rkey,
				  raddr(race.word), 1, 0, posted);
			wr[b].next = NULL;
			if (b)
				wr[b - 1].next = &wr[b];
			b++;
			posted++;
		}
		if (b && !race_wait(posted - b, &race.local_done)) {
			check(false, "racing: the local thread made no "
			      "progress for 10 s");
			ok = false;
			break;
		}
		if (b) {
			ret = post(&g.c, wr, &bad);
			if (ret) {
				check(false, "racing FetchAdd: ibv_post_send %d",
				      ret);
				ok = false;
				break;
			}
		}
		ret = ibv_poll_cq(g.c.ccq, BATCH, wc);
		if (ret < 0) {
			ok = false;
			break;
		}
		for (i = 0; i < (unsigned int)ret; i++) {
			if (wc[i].status != IBV_WC_SUCCESS ||
			    wc[i].opcode != IBV_WC_FETCH_ADD ||
			    wc[i].wr_id != 1000 + polled) {
				if (!bad_wc++)
					printf("# racing FetchAdd: wr_id %llu "
					       "(want %u) opcode %d %s\n",
					       (unsigned long long)wc[i].wr_id,
					       1000 + polled, wc[i].opcode,
					       ibv_wc_status_str(wc[i].status));
			}
			polled++;
		}
		__atomic_store_n(&race.remote_done, polled, __ATOMIC_RELEASE);
		if (!ret)
			usleep(20);
	}
	pthread_join(th, NULL);
	check(polled == n && !bad_wc,
	      "racing: %u FetchAdd(+1) posted in batches of %d, %u completed "
	      "(%u in error or out of order) in %.2f s", n, BATCH, polled,
	      bad_wc, now_s() - t0);
	check(*race.word == 2ULL * n,
	      "racing: the word ends at %" PRIu64 " (want exactly 2N = %u)",
	      *race.word, 2 * n);
	/* The 2N originals are 0 .. 2N-1, each once. */
	for (i = 0; i < n; i++) {
		all[i] = g.res[i];
		all[n + i] = race.got[i];
	}
	for (i = 0; i < n; i++)
		log_atomic_done(&(struct ibv_send_wr){
			.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
			.wr.atomic = { .remote_addr = raddr(race.word),
				       .compare_add = 1, .rkey = g.amr->rkey } },
			g.res[i]);
	qsort(all, 2 * (size_t)n, sizeof(uint64_t), cmp_u64);
	for (k = 0; k < 2 * n; k++) {
		if (k && all[k] == all[k - 1])
			dup++;
		if (all[k] != k)
			missing++;
	}
	check(!dup && !missing,
	      "racing: the %u returned originals (remote and local) are "
	      "0 .. %u, each once (%u duplicates, %u out of place)", 2 * n,
	      2 * n - 1, dup, missing);
	/* Did they really interleave?  Count local/remote alternations. */
	memset(all, 0, 2 * (size_t)n * sizeof(uint64_t));
	for (i = 0; i < n; i++)
		if (race.got[i] < 2ULL * n)
			all[race.got[i]] = 1;
	for (k = 0; k < 2 * n; k++) {
		if (k && (all[k] == 1) != prev_local)
			switches++;
		prev_local = all[k] == 1;
	}
	check(switches >= 2 && !race.stalls, "racing: local and remote "
	      "increments interleaved (%u alternations in the order of the "
	      "originals, %u pacing waits timed out)", switches, race.stalls);
	free(all);
	free(race.got);
}

static void srv_recv(uint64_t wr_id, struct conn *c)
{
	struct ibv_sge sge = { .addr = (uintptr_t)g.rbuf, .length = 64,
			       .lkey = g.rmr->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = 1 }, *bad;
	int ret = ibv_post_recv(c->sid->qp, &wr, &bad);

	if (ret) {
		errno = ret;
		die("ibv_post_recv (server)");
	}
}

/* The server's completion of a Write with Immediate. */
static void imm_received(uint64_t wr_id, uint32_t len, __be32 imm,
			 const char *what)
{
	struct ibv_wc wc;

	if (!poll_one(g.rcq, &wc)) {
		check(false, "%s: no receive completion", what);
		return;
	}
	check(wc.status == IBV_WC_SUCCESS && wc.wr_id == wr_id &&
	      wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
	      (wc.wc_flags & IBV_WC_WITH_IMM) && wc.qp_num == g.c.sid->qp->qp_num,
	      "%s: receive wr_id %llu (want %llu) %s opcode %d (want "
	      "IBV_WC_RECV_RDMA_WITH_IMM %d) wc_flags 0x%x (want WITH_IMM)",
	      what, (unsigned long long)wc.wr_id, (unsigned long long)wr_id,
	      ibv_wc_status_str(wc.status), wc.opcode,
	      IBV_WC_RECV_RDMA_WITH_IMM, wc.wc_flags);
	check(wc.imm_data == imm && wc.byte_len == len,
	      "%s: imm_data 0x%08x (want 0x%08x, network order), byte_len %u "
	      "(want %u)", what, ntohl(wc.imm_data), ntohl(imm), wc.byte_len,
	      len);
}

/* A Write with Immediate of @len bytes (pattern @seed) at wbuf + @off. */
static int write_imm(bool ex, uint64_t wr_id, size_t off, uint32_t len,
		     __be32 imm, unsigned int flags, int seed)
{
	struct ibv_sge sge = { .addr = (uintptr_t)g.sbuf, .length = len,
			       .lkey = g.smr->lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = len ? 1 : 0,
				  .opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
				  .send_flags = IBV_SEND_SIGNALED | flags,
				  .imm_data = imm }, *bad;
	struct ibv_qp_ex *q = g.c.qpx;

	fill(g.sbuf, len, seed, 0);
	wire_log("wimm 0x%x 0x%" PRIx64 " %u %08x %d", g.wmr->rkey,
		 raddr(g.wbuf + off), len, ntohl(imm),
		 !!(flags & IBV_SEND_SOLICITED));
	if (!ex) {
		wr.wr.rdma.remote_addr = raddr(g.wbuf + off);
		wr.wr.rdma.rkey = g.wmr->rkey;
		return post(&g.c, &wr, &bad);
	}
	ibv_wr_start(q);
	q->wr_id = wr_id;
	q->wr_flags = IBV_SEND_SIGNALED | flags;
	ibv_wr_rdma_write_imm(q, g.wmr->rkey, raddr(g.wbuf + off), imm);
	if (len)
		ibv_wr_set_sge(q, g.smr->lkey, (uintptr_t)g.sbuf, len);
	else
		ibv_wr_set_sge_list(q, 0, NULL);
	return ibv_wr_complete(q);
}

static bool cq_event(int ms)
{
	struct pollfd pfd = { .fd = g.cc->fd, .events = POLLIN };
	double end = now_s() + ms / 1000.0;
	struct ibv_cq *cq;
	void *ctx;
	int left;

	for (;;) {
		left = (int)((end - now_s()) * 1000);
		if (left < 0)
			left = 0;
		if (poll(&pfd, 1, left) > 0 &&
		    !ibv_get_cq_event(g.cc, &cq, &ctx)) {
			ibv_ack_cq_events(cq, 1);
			return cq == g.rcq;
		}
		if (now_s() >= end)
			return false;
	}
}

static void one_write_imm(bool ex, uint64_t wr_id, size_t off, uint32_t len,
			  uint32_t imm_host, int seed, const char *what)
{
	__be32 imm = htonl(imm_host);
	int ret;
	long m;

	memset(g.wbuf, 0xee, WBUF);
	srv_recv(wr_id, &g.c);
	ret = write_imm(ex, wr_id, off, len, imm, 0, seed);
	check(!ret, "%s: posted (%d)", what, ret);
	done_ok(&g.c, wr_id, IBV_WC_RDMA_WRITE, what);
	imm_received(wr_id, len, imm, what);
	m = mismatch(g.wbuf + off, len, seed, 0);
	check(m < 0 && g.wbuf[off - 1] == (char)0xee &&
	      g.wbuf[off + len] == (char)0xee,
	      "%s: %u bytes placed at offset %zu (first wrong byte %ld, "
	      "bytes around %s)", what, len, off, m,
	      g.wbuf[off - 1] == (char)0xee && g.wbuf[off + len] == (char)0xee ?
	      "untouched" : "WRITTEN");
}

static void check_write_imm(void)
{
	struct ibv_sge sge = { .addr = (uintptr_t)g.sbuf, .length = 200,
			       .lkey = g.smr->lkey };
	struct ibv_send_wr wr = { .wr_id = 600, .sg_list = &sge,
				  .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	int ret;

	one_write_imm(false, 500, 100, 1000, 0x12345678,
		      11, "IBV_WR_RDMA_WRITE_WITH_IMM (ibv_post_send), 1000 B");
	one_write_imm(true, 501, 4096, 40000, 0xcafef00d, 12,
		      "ibv_wr_rdma_write_imm, 40000 B");

	/* A plain Write, then a zero-length Write with Immediate: 0. */
	fill(g.sbuf, 200, 13, 0);
	wr.wr.rdma.remote_addr = raddr(g.wbuf);
	wr.wr.rdma.rkey = g.wmr->rkey;
	wire_log("write 0x%x 0x%" PRIx64 " 200", g.wmr->rkey, raddr(g.wbuf));
	ret = post(&g.c, &wr, &bad);
	check(!ret, "plain RDMA Write of 200 bytes posted (%d)", ret);
	done_ok(&g.c, 600, IBV_WC_RDMA_WRITE, "plain RDMA Write");
	srv_recv(502, &g.c);
	ret = write_imm(true, 502, 8, 0, htonl(0x00000001), 0, 14);
	check(!ret, "zero-length ibv_wr_rdma_write_imm after it: posted (%d)",
	      ret);
	done_ok(&g.c, 502, IBV_WC_RDMA_WRITE, "zero-length Write with Imm");
	imm_received(502, 0, htonl(1), "zero-length Write with Immediate "
		     "after a 200-byte Write");

	/* Solicited events. */
	check(cq_quiet(g.rcq, 10), "server receive CQ drained");
	ret = ibv_req_notify_cq(g.rcq, 1);
	check(!ret, "ibv_req_notify_cq(solicited only) (%d)", ret);
	srv_recv(503, &g.c);
	ret = write_imm(false, 503, 0, 64, htonl(0x0badc0de), 0, 15);
	check(!ret, "unsolicited Write with Immediate posted (%d)", ret);
	done_ok(&g.c, 503, IBV_WC_RDMA_WRITE, "unsolicited Write with Imm");
	imm_received(503, 64, htonl(0x0badc0de), "unsolicited Write with Imm");
	check(!cq_event(300), "unsolicited Write with Immediate, armed "
	      "solicited-only: no completion event within 300 ms");
	ret = ibv_req_notify_cq(g.rcq, 1);
	check(!ret, "ibv_req_notify_cq(solicited only) again (%d)", ret);
	srv_recv(504, &g.c);
	ret = write_imm(false, 504, 0, 64, htonl(0xfeedface),
			IBV_SEND_SOLICITED, 16);
	check(!ret, "Write with Immediate, IBV_SEND_SOLICITED, posted (%d)",
	      ret);
	done_ok(&g.c, 504, IBV_WC_RDMA_WRITE, "solicited Write with Imm");
	check(cq_event(5000), "solicited Write with Immediate raises a "
	      "completion event on the solicited-only armed CQ within 5 s");
	imm_received(504, 64, htonl(0xfeedface), "solicited Write with Imm");
	srv_recv(505, &g.c);
	ret = write_imm(true, 505, 0, 64, htonl(0xabad1dea),
			IBV_SEND_SOLICITED, 17);
	check(!ret, "ibv_wr_rdma_write_imm, IBV_SEND_SOLICITED (%d)", ret);
	done_ok(&g.c, 505, IBV_WC_RDMA_WRITE, "ibv_wr_* solicited Write with Imm");
	imm_received(505, 64, htonl(0xabad1dea),
		     "ibv_wr_* solicited Write with Imm, not re-armed");
	check(!cq_event(300), "CQ not re-armed: no event for the next "
	      "solicited one within 300 ms");
}

static void check_send_imm_refused(void)
{
	struct ibv_sge sge = { .addr = (uintptr_t)g.sbuf, .length = 16,
			       .lkey = g.smr->lkey };
	struct ibv_send_wr wr = { .wr_id = 700, .sg_list = &sge,
				  .num_sge = 1, .opcode = IBV_WR_SEND_WITH_IMM,
				  .send_flags = IBV_SEND_SIGNALED,
				  .imm_data = htonl(7) }, *bad;
	int ret;

	srv_recv(701, &g.c);
	ret = post(&g.c, &wr, &bad);
	check(ret == EINVAL && bad == &wr, "IBV_WR_SEND_WITH_IMM refused at "
	      "post time: %d (want EINVAL), bad_wr %s", ret,
	      bad == &wr ? "on it" : "WRONG");
	check(cq_quiet(g.c.ccq, 200) && cq_quiet(g.rcq, 200),
	      "nothing of it was sent or completed");
}

/* Wait up to 10 s for @qp to be in ERROR. */
static bool qp_in_error(struct ibv_qp *qp, enum ibv_qp_state *st)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;
	double end = now_s() + 10;

	do {
		if (!ibv_query_qp(qp, &a, IBV_QP_STATE, &ia)) {
			*st = a.qp_state;
			if (a.qp_state == IBV_QPS_ERR)
				return true;
		}
		usleep(10000);
	} while (now_s() < end);
	return false;
}

/*
 * The type of the first async event for @qp within @ms (others are acked
 * and skipped), or -1.
 */
static int async_event(struct ibv_qp *qp, int ms)
{
	struct pollfd pfd = { .fd = g.ctx->async_fd, .events = POLLIN };
	double end = now_s() + ms / 1000.0;
	struct ibv_async_event ev;
	int type;

	while (now_s() < end) {
		if (poll(&pfd, 1, 50) <= 0 || ibv_get_async_event(g.ctx, &ev))
			continue;
		type = ev.event_type;
		ibv_ack_async_event(&ev);
		/* The error events of a QP (not COMM_EST, SQ_DRAINED ...). */
		if ((type == IBV_EVENT_QP_FATAL ||
		     type == IBV_EVENT_QP_REQ_ERR ||
		     type == IBV_EVENT_QP_ACCESS_ERR) &&
		    ev.element.qp == qp)
			return type;
		printf("# async event %s (not an error of the client QP)\n",
		       ibv_event_type_str(type));
	}
	return -1;
}

/* On a connection of its own: an atomic the target must refuse. */
/*
 * @local: refused by the requester (misaligned: the peer would end the
 * connection for it), with IBV_WC_LOC_QP_OP_ERR, never sent (a Terminate
 * goes instead, and ends the connection all the same); else by the
 * responder, whose Terminate flushes the request and raises @want_ev.
 */
static void check_atomic_error(uint32_t rkey, uint64_t *target,
			       size_t byte_off, bool local,
			       enum ibv_event_type want_ev, const char *what)
{
	struct ibv_send_wr wr, after, *bad;
	struct ibv_sge sge, asge;
	enum ibv_qp_state st = IBV_QPS_UNKNOWN, sst = IBV_QPS_UNKNOWN;
	struct conn c;
	struct ibv_wc wc;
	bool got;
	int ret, ev;

	target[0] = 0x1111111111111111ULL;
	target[1] = 0x2222222222222222ULL;
	connect_pair(&c);
	atomic_wr(&wr, &sge, 800, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey,
		  raddr(target) + byte_off, 1, 0, 0);
	g.res[0] = g.res[1] = 0xdeadbeefdeadbeefULL;
	ret = ibv_post_send(c.cid->qp, &wr, &bad);
	check(!ret, "%s: FetchAdd posted (%d)", what, ret);
	if (!local)
		log_atomic(&wr, "-");
	got = poll_one(c.ccq, &wc);
	/*
	 * The responder's Terminate ends the stream: every outstanding WR,
	 * the refused one included, completes in error (flushed, as for a
	 * refused Read); the kind of error is in the async event.
	 */
	if (local)
		check(got && wc.wr_id == 800 &&
		      wc.status == IBV_WC_LOC_QP_OP_ERR,
		      "%s: the atomic completes locally in error: wr_id %llu "
		      "status %s (want %s)", what,
		      (unsigned long long)wc.wr_id,
		      got ? ibv_wc_status_str(wc.status) : "none",
		      ibv_wc_status_str(IBV_WC_LOC_QP_OP_ERR));
	else
		check(got && wc.wr_id == 800 && wc.status != IBV_WC_SUCCESS,
		      "%s: the atomic completes in error: wr_id %llu status %s",
		      what, (unsigned long long)wc.wr_id,
		      got ? ibv_wc_status_str(wc.status) : "none");
	check(qp_in_error(c.cid->qp, &st), "%s: the client QP is in ERROR "
	      "(state %d)", what, st);
	check(qp_in_error(c.sid->qp, &sst), "%s: the server QP is in ERROR "
	      "(state %d)", what, sst);
	ev = async_event(c.cid->qp, local ? 1000 : 5000);
	if (local)
		printf("# %s: the client QP's async event: %s\n", what,
		       ev < 0 ? "none" : ibv_event_type_str(ev));
	else
		check(ev == (int)want_ev, "%s: the client QP's async event: %s "
		      "(want %s)", what,
		      ev < 0 ? "none" : ibv_event_type_str(ev),
		      ibv_event_type_str(want_ev));
	/* Posted to the QP in ERROR: flushed, never sent. */
	atomic_wr(&after, &asge, 801, IBV_WR_ATOMIC_CMP_AND_SWP, g.amr->rkey,
		  raddr(&g.abuf[40]), 0, 5, 1);
	g.abuf[40] = 0;
	ret = ibv_post_send(c.cid->qp, &after, &bad);
	got = !ret && poll_one(c.ccq, &wc);
	check(got && wc.wr_id == 801 && wc.status == IBV_WC_WR_FLUSH_ERR &&
	      g.abuf[40] == 0,
	      "%s: a CmpSwap posted after it is flushed (post %d, wr_id %llu "
	      "status %s, its target %s)", what, ret,
	      (unsigned long long)wc.wr_id,
	      got ? ibv_wc_status_str(wc.status) : "none",
	      g.abuf[40] ? "WRITTEN" : "untouched");
	check(target[0] == 0x1111111111111111ULL &&
	      target[1] == 0x2222222222222222ULL &&
	      g.res[0] == 0xdeadbeefdeadbeefULL,
	      "%s: target memory and result buffer untouched", what);
	drop_pair(&c, true);
}

static void teardown(void)
{
	int ret;

	check(g.unacked == 0, "every completion event acked");
	ret = ibv_destroy_cq(g.rcq);
	check(!ret, "ibv_destroy_cq (channel CQ) (%d)", ret);
	ret = ibv_destroy_comp_channel(g.cc);
	check(!ret, "ibv_destroy_comp_channel (%d)", ret);
	ret = ibv_dereg_mr(g.amr) | ibv_dereg_mr(g.nmr) | ibv_dereg_mr(g.wmr) |
	      ibv_dereg_mr(g.rmr) | ibv_dereg_mr(g.resmr) |
	      ibv_dereg_mr(g.smr);
	check(!ret, "ibv_dereg_mr x 6 (%d)", ret);
	ret = ibv_dealloc_pd(g.pd);
	check(!ret, "ibv_dealloc_pd (%d)", ret);
	check(!rdma_destroy_id(g.listen), "rdma_destroy_id (listener)");
	rdma_destroy_event_channel(g.ech);
	free(g.abuf);
	free(g.nbuf);
	free(g.wbuf);
	free(g.rbuf);
	free(g.res);
	free(g.sbuf);
}

int main(int argc, char **argv)
{
	const char *wl = getenv("RSW_EXT_WIRE_LOG");
	unsigned int n = 2000;

	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: %s DEVICE IP PORT [N]\n", argv[0]);
		return 2;
	}
	if (argc == 5)
		n = (unsigned int)strtoul(argv[4], NULL, 0);
	if (n < 1 || n > 1000000) {
		fprintf(stderr, "N must be 1 .. 1000000\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (wl && *wl) {
		g.wire = fopen(wl, "w");
		if (!g.wire)
			die("RSW_EXT_WIRE_LOG");
	}
	setup(argv[1], argv[2], atoi(argv[3]), n);
	check_no_send_imm_qp();
	connect_pair(&g.c);
	check_post_send_atomics();
	check_wr_atomics();
	check_post_send_refused();
	check_race(n);
	check_write_imm();
	check_send_imm_refused();
	drop_pair(&g.c, false);
	/* Last: each on a connection of its own, which ends in ERROR. */
	check_atomic_error(g.amr->rkey, &g.abuf[48], 4, true, 0,
			   "misaligned target (TO 4 bytes into a word)");
	check_atomic_error(g.nmr->rkey, g.nbuf, 0, false,
			   IBV_EVENT_QP_ACCESS_ERR,
			   "MR without IBV_ACCESS_REMOTE_ATOMIC");
	teardown();
	printf("# %d checks, %d failed\n", checks, failures);
	if (g.wire)
		fclose(g.wire);
	return failures ? 1 : 0;
}
