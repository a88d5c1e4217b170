// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * wire-smoke: the rdmap_sw provider's scatter/gather lists, inline sends
 * and completion events over one real connection (rdma_cm on the local
 * address of an rdmap_sw device).
 *
 *   wire-smoke DEVICE IP PORT
 *
 * One process plays both ends: a listener on IP:PORT accepts one RC
 * connection from a client QP created through the extended API (ibv_qp_ex).
 * The server's receive CQ is on a completion channel.  Checks, in order:
 *   - DEVICE is the one rdma_cm bound to and ibv_query_device reports
 *     max_sge 16; both QPs get 16 send/receive SGEs and 256 inline bytes;
 *   - a Send gathered from 16 separately registered buffers (61..976
 *     bytes) lands in a receive of 16 SGEs split at other points, with
 *     guard gaps between them: byte_len and every byte (and guard) exact;
 *   - an RDMA Write gathered from the same 16 buffers into a remote region
 *     (address and rkey sent by the server in a Send) and an RDMA Read of
 *     the region back with one SGE: the read bytes, and the server's own
 *     memory, are what was written, and the bytes around it untouched;
 *   - IBV_SEND_INLINE Send of 256 bytes from an unregistered stack buffer
 *     (lkey 0), posted behind a 2 MiB Send and overwritten as soon as
 *     ibv_post_send returns: the receiver gets the bytes of post time; the
 *     same through ibv_wr_send + ibv_wr_set_inline_data from the heap;
 *     257 inline bytes are refused at post time (EINVAL, bad_wr on that
 *     request, the valid request before it in the chain still goes), also
 *     by ibv_wr_complete, and nothing of them reaches the wire;
 *   - solicited events: armed solicited-only, an unsolicited Send gives a
 *     pollable completion but no channel event within 300 ms; a Send with
 *     IBV_SEND_SOLICITED raises one (ibv_get_cq_event names the CQ); armed
 *     for the next completion, an unsolicited Send raises one; unarmed,
 *     none;
 *   - teardown: disconnect seen on both ends, every destroy/dereg succeeds.
 * Prints one TAP line per check; exits 0 only if every check passed.
 */
#include <arpa/inet.h>
#include <sys/socket.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>


#define NSGE 16
#define UNIT 61				/* send SGE i holds (i + 1) * UNIT bytes */
#define MSG (UNIT * NSGE * (NSGE + 1) / 2)	/* 8296 bytes */
#define GAP 16				/* guard bytes between receive SGEs */
#define GUARD 0xee
#define RBUF (4 * 1024 * 1024)		/* server receive buffer */
#define BIG (2 * 1024 * 1024)		/* the Send an inline one queues behind */
#define WBUF 16384			/* RDMA target region */
#define WOFF 100			/* where in it the Write goes */
#define INL 256				/* max_inline_data */
#define TIMEOUT_S 30.0

#include "wait.h"
#include "pattern.h"

static struct {
	struct rdma_event_channel *ech;
	struct rdma_cm_id *listen, *cid, *sid;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *cc;
	struct ibv_cq *ccq;		/* client send + receive */
	struct ibv_cq *scq;		/* server send */
	struct ibv_cq *rcq;		/* server receive, on cc */
	struct ibv_qp_ex *qpx;		/* client QP, extended API */
	struct sockaddr_in addr;
	char *sbuf[NSGE];		/* client gather buffers */
	struct ibv_mr *smr[NSGE];
	char *rbuf;			/* server receive buffer */
	struct ibv_mr *rmr;
	char *wbuf;			/* server RDMA Write/Read region */
	struct ibv_mr *wmr;
	char *dbuf;			/* client RDMA Read sink */
	struct ibv_mr *dmr;
	char *cbuf;			/* client receive buffer */
	struct ibv_mr *cmr;
	char *xbuf;			/* client big Send */
	struct ibv_mr *xmr;
	unsigned int unacked;		/* CQ events not yet acked */
} g;

/* What the server tells the client about its RDMA region. */
struct region_msg {
	uint64_t addr;
	uint32_t rkey;
	uint32_t len;
};

/* A successful send-side completion @wr_id on the client's CQ. */
static bool sent_ok(uint64_t wr_id, enum ibv_wc_opcode op)
{
	struct ibv_wc wc;

	if (!poll_one(g.ccq, &wc))
		return false;
	if (wc.status != IBV_WC_SUCCESS || wc.wr_id != wr_id ||
	    wc.opcode != op) {
		printf("# client completion wr_id %llu (want %llu) opcode %d "
		       "(want %d) %s\n", (unsigned long long)wc.wr_id,
		       (unsigned long long)wr_id, wc.opcode, op,
		       ibv_wc_status_str(wc.status));
		return false;
	}
	return true;
}

/* A receive completion @wr_id of @len bytes on the server's CQ. */
static bool received(uint64_t wr_id, uint32_t len, const char *what)
{
	struct ibv_wc wc;

	if (!poll_one(g.rcq, &wc))
		return check(false, "%s: no receive completion", what);
	return check(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
		     wc.wr_id == wr_id && wc.byte_len == len &&
		     wc.qp_num == g.sid->qp->qp_num,
		     "%s: receive wr_id %llu (want %llu) %s byte_len %u "
		     "(want %u)", what, (unsigned long long)wc.wr_id,
		     (unsigned long long)wr_id, ibv_wc_status_str(wc.status),
		     wc.byte_len, len);
}

/* Post one receive on the server QP. */
static void srv_recv(uint64_t wr_id, struct ibv_sge *sge, int n)
{
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = sge,
				  .num_sge = n }, *bad = NULL;
	int ret = ibv_post_recv(g.sid->qp, &wr, &bad);

	if (ret) {
		errno = ret;
		die("ibv_post_recv (server)");
	}
}

/* A receive of @len bytes at offset @off of the server's buffer. */
static void srv_recv_at(uint64_t wr_id, size_t off, uint32_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)g.rbuf + off, .length = len,
			       .lkey = g.rmr->lkey };

	srv_recv(wr_id, &sge, 1);
}

static int cli_post(struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	*bad = NULL;
	return ibv_post_send(g.cid->qp, wr, bad);
}

static struct ibv_mr *reg(void *p, size_t len, int access)
{
	struct ibv_mr *mr = ibv_reg_mr(g.pd, p, len, access);

	if (!mr)
		die("ibv_reg_mr");
	return mr;
}

static void *zalloc(size_t len)
{
	void *p = calloc(1, len);

	if (!p)
		die("calloc");
	return p;
}

static void setup(const char *dev, const char *ip, int port)
{
	struct ibv_device_attr da;
	int i, ret;

	g.listen = listen_on(&g.ech, ip, port, 1, &g.addr);
	g.ctx = g.listen->verbs;
	if (!check(!strcmp(ibv_get_device_name(g.ctx->device), dev),
		   "rdma_cm bound %s:%d to %s (want %s)", ip, port,
		   ibv_get_device_name(g.ctx->device), dev))
		die("wrong device");
	ret = ibv_query_device(g.ctx, &da);
	if (!check(!ret && da.max_sge == NSGE && da.max_qp_wr >= 64,
		   "ibv_query_device (%d): max_sge %d (want %d), max_qp_wr %d",
		   ret, da.max_sge, NSGE, da.max_qp_wr))
		die("device limits");

	g.pd = ibv_alloc_pd(g.ctx);
	if (!g.pd)
		die("ibv_alloc_pd");
	for (i = 0; i < NSGE; i++) {
		g.sbuf[i] = zalloc((size_t)(i + 1) * UNIT);
		g.smr[i] = reg(g.sbuf[i], (size_t)(i + 1) * UNIT, 0);
	}
	g.rbuf = zalloc(RBUF);
	g.rmr = reg(g.rbuf, RBUF, IBV_ACCESS_LOCAL_WRITE);
	g.wbuf = zalloc(WBUF);
	g.wmr = reg(g.wbuf, WBUF, IBV_ACCESS_LOCAL_WRITE |
		    IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	/* iWARP: the sink of an RDMA Read is written by the peer. */
	g.dbuf = zalloc(WBUF);
	g.dmr = reg(g.dbuf, WBUF, IBV_ACCESS_LOCAL_WRITE |
		    IBV_ACCESS_REMOTE_WRITE);
	g.cbuf = zalloc(64);
	g.cmr = reg(g.cbuf, 64, IBV_ACCESS_LOCAL_WRITE);
	g.xbuf = zalloc(BIG);
	g.xmr = reg(g.xbuf, BIG, 0);

	g.cc = ibv_create_comp_channel(g.ctx);
	if (!g.cc)
		die("ibv_create_comp_channel");
	if (fcntl(g.cc->fd, F_SETFL, fcntl(g.cc->fd, F_GETFL) | O_NONBLOCK))
		die("O_NONBLOCK on the channel");
	g.ccq = ibv_create_cq(g.ctx, 64, NULL, NULL, 0);
	g.scq = ibv_create_cq(g.ctx, 16, NULL, NULL, 0);
	g.rcq = ibv_create_cq(g.ctx, 32, &g, g.cc, 0);
	if (!g.ccq || !g.scq || !g.rcq)
		die("ibv_create_cq");
}

static bool caps_ok(const struct ibv_qp_cap *c)
{
	return c->max_send_sge >= NSGE && c->max_recv_sge >= NSGE &&
	       c->max_inline_data >= INL;
}

/*
 * Leave a TCP connection of @ip's address in TIME_WAIT on a local port and return
 * the port: what an earlier connection of the driver's leaves behind, on a
 * port rdma_cm (whose port space knows nothing of TCP's) may hand out
 * again.  The socket allows address reuse, as the driver's own do.
 */
static int time_wait_port(const struct sockaddr_in *ip)
{
	struct sockaddr_in a = *ip;
	socklen_t len = sizeof(a);
	int one = 1, l, c, s, port, probe, ret;

	a.sin_port = 0;
	l = socket(AF_INET, SOCK_STREAM, 0);
	c = socket(AF_INET, SOCK_STREAM, 0);
	if (l < 0 || c < 0 ||
	    setsockopt(c, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1) ||
	    getsockname(l, (struct sockaddr *)&a, &len) ||
	    connect(c, (struct sockaddr *)&a, sizeof(a)))
		die("TCP connection for TIME_WAIT");
	s = accept(l, NULL, NULL);
	len = sizeof(a);
	if (s < 0 || getsockname(c, (struct sockaddr *)&a, &len))
		die("accept");
	port = ntohs(a.sin_port);
	/* The side that closes first keeps the port in TIME_WAIT. */
	close(c);
	usleep(20000);
	close(s);
	close(l);
	usleep(50000);
	/* Without reuse the port is taken: the leftover is there. */
	probe = socket(AF_INET, SOCK_STREAM, 0);
	ret = bind(probe, (struct sockaddr *)&a, sizeof(a));
	check(ret && errno == EADDRINUSE,
	      "local port %d is held in TIME_WAIT (plain bind: %s)", port,
	      ret ? strerror(errno) : "succeeded");
	close(probe);
	return port;
}

static void connect_pair(void)
{
	struct rdma_conn_param param = { .responder_resources = 1,
					 .initiator_depth = 1 };
	struct ibv_qp_init_attr_ex cattr = {
		.qp_type = IBV_QPT_RC,
		.send_cq = g.ccq, .recv_cq = g.ccq,
		.cap = { .max_send_wr = 32, .max_recv_wr = 4,
			 .max_send_sge = NSGE, .max_recv_sge = NSGE,
			 .max_inline_data = INL },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = g.pd,
		.send_ops_flags = IBV_QP_EX_WITH_SEND |
				  IBV_QP_EX_WITH_RDMA_WRITE |
				  IBV_QP_EX_WITH_RDMA_READ,
	};
	struct ibv_qp_init_attr sattr = {
		.qp_type = IBV_QPT_RC,
		.send_cq = g.scq, .recv_cq = g.rcq,
		.cap = { .max_send_wr = 8, .max_recv_wr = 16,
			 .max_send_sge = NSGE, .max_recv_sge = NSGE,
			 .max_inline_data = INL },
	};
	struct sockaddr_in src;
	int ret;

	if (rdma_create_id(g.ech, &g.cid, NULL, RDMA_PS_TCP))
		die("rdma_create_id (client)");
	/*
	 * The client's rdma_cm port is one TCP holds in TIME_WAIT: the
	 * connection must still be made (the driver's socket allows reuse).
	 */
	src = g.addr;
	src.sin_port = htons(time_wait_port(&g.addr));
	resolve_on(g.ech, g.cid, &src, &g.addr, g.ctx);
	ret = rdma_create_qp_ex(g.cid, &cattr);
	if (!check(!ret && caps_ok(&cattr.cap),
		   "client QP (ibv_qp_ex): %s, sge %u/%u inline %u",
		   ret ? strerror(errno) : "created", cattr.cap.max_send_sge,
		   cattr.cap.max_recv_sge, cattr.cap.max_inline_data))
		die("rdma_create_qp_ex");
	g.qpx = ibv_qp_to_qp_ex(g.cid->qp);
	if (!check(g.qpx != NULL, "ibv_qp_to_qp_ex"))
		die("ibv_qp_to_qp_ex");
	ret = rdma_connect(g.cid, &param);
	if (!check(!ret, "rdma_connect from port %d, in TIME_WAIT (%s)",
		   ntohs(src.sin_port), ret ? strerror(errno) : "ok"))
		die("rdma_connect");
	if (!wait_cm_on(g.ech, RDMA_CM_EVENT_CONNECT_REQUEST, NULL, &g.sid))
		die("no CONNECT_REQUEST");
	ret = rdma_create_qp(g.sid, g.pd, &sattr);
	if (!check(!ret && caps_ok(&sattr.cap),
		   "server QP: %s, sge %u/%u inline %u",
		   ret ? strerror(errno) : "created", sattr.cap.max_send_sge,
		   sattr.cap.max_recv_sge, sattr.cap.max_inline_data))
		die("rdma_create_qp (server)");
	if (rdma_accept(g.sid, &param))
		die("rdma_accept");
	if (!check(wait_cm_pair(g.ech, RDMA_CM_EVENT_ESTABLISHED, g.sid, g.cid),
		   "connection established (QPs %u and %u)",
		   g.cid->qp->qp_num, g.sid->qp->qp_num))
		die("connection not established");
}

/* Fill the 16 gather buffers with message @seed and list them. */
static void gather(struct ibv_sge *sge, int seed)
{
	size_t off = 0;
	int i;

	for (i = 0; i < NSGE; i++) {
		uint32_t len = (uint32_t)(i + 1) * UNIT;

		fill(g.sbuf[i], len, seed, off);
		sge[i].addr = (uintptr_t)g.sbuf[i];
		sge[i].length = len;
		sge[i].lkey = g.smr[i]->lkey;
		off += len;
	}
}

/* a. A Send from 16 buffers into a receive of 16 SGEs split elsewhere. */
static void check_sge_send(void)
{
	struct ibv_sge ssge[NSGE], rsge[NSGE];
	struct ibv_send_wr wr = { .wr_id = 11, .sg_list = ssge,
				  .num_sge = NSGE, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	size_t roff = 0, msg = 0, bad_at = 0;
	uint32_t len[NSGE], used;
	bool data_ok = true;
	long m;
	int j, ret;

	/* Receive SGEs: the send lengths reversed, moved by +-5 bytes; the
	 * last one has room to spare.  Guards in between. */
	for (j = 0; j < NSGE; j++)
		len[j] = j == NSGE - 1 ? 2 * UNIT + 3 :
			 (uint32_t)(NSGE - j) * UNIT + ((j & 1) ? -5 : 5);
	memset(g.rbuf, GUARD, RBUF);
	for (j = 0; j < NSGE; j++) {
		roff += GAP;
		rsge[j].addr = (uintptr_t)g.rbuf + roff;
		rsge[j].length = len[j];
		rsge[j].lkey = g.rmr->lkey;
		roff += len[j];
	}
	srv_recv(21, rsge, NSGE);
	gather(ssge, 1);
	ret = cli_post(&wr, &bad);
	check(!ret, "16-SGE Send posted (%d)", ret);
	check(sent_ok(11, IBV_WC_SEND), "16-SGE Send completed");
	if (!received(21, MSG, "16-SGE Send into 16-SGE receive"))
		return;

	/* Every byte in its SGE, in order; guards and spare room untouched. */
	roff = 0;
	for (j = 0; j < NSGE && data_ok; j++) {
		if ((m = not_byte(g.rbuf + roff, GAP, GUARD)) >= 0) {
			data_ok = false;
			bad_at = roff + m;
			break;
		}
		roff += GAP;
		used = MSG - msg < len[j] ? (uint32_t)(MSG - msg) : len[j];
		if ((m = mismatch(g.rbuf + roff, used, 1, msg)) >= 0) {
			data_ok = false;
			bad_at = roff + m;
		} else if ((m = not_byte(g.rbuf + roff + used, len[j] - used,
					 GUARD)) >= 0) {
			data_ok = false;
			bad_at = roff + used + m;
		}
		if (used < len[j] && j != NSGE - 1)
			data_ok = false;	/* the message must use all 16 */
		msg += used;
		roff += len[j];
	}
	if (data_ok && (m = not_byte(g.rbuf + roff, 4096, GUARD)) >= 0) {
		data_ok = false;
		bad_at = roff + m;
	}
	check(data_ok && msg == MSG,
	      "16-SGE Send: %u bytes scattered over 16 receive SGEs, guards "
	      "intact (%s at buffer offset %zu)", MSG,
	      data_ok ? "no difference" : "WRONG byte", bad_at);
}

/* b. RDMA Write from 16 buffers, RDMA Read back with one SGE. */
static void check_sge_rdma(void)
{
	struct region_msg rm = { .addr = (uintptr_t)g.wbuf, .rkey = g.wmr->rkey,
				 .len = WBUF };
	struct ibv_sge ksge = { .addr = (uintptr_t)&rm, .length = sizeof(rm) };
	struct ibv_send_wr kwr = { .wr_id = 31, .sg_list = &ksge, .num_sge = 1,
				   .opcode = IBV_WR_SEND,
				   .send_flags = IBV_SEND_SIGNALED |
						 IBV_SEND_INLINE }, *bad;
	struct ibv_sge csge = { .addr = (uintptr_t)g.cbuf, .length = 64,
				.lkey = g.cmr->lkey };
	struct ibv_recv_wr crwr = { .wr_id = 32, .sg_list = &csge,
				    .num_sge = 1 }, *rbad;
	struct ibv_sge wsge[NSGE];
	struct ibv_sge dsge = { .addr = (uintptr_t)g.dbuf + 8, .length = MSG,
				.lkey = g.dmr->lkey };
	struct ibv_send_wr wwr = { .wr_id = 33, .sg_list = wsge,
				   .num_sge = NSGE,
				   .opcode = IBV_WR_RDMA_WRITE,
				   .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr rwr = { .wr_id = 34, .sg_list = &dsge,
				   .num_sge = 1, .opcode = IBV_WR_RDMA_READ,
				   .send_flags = IBV_SEND_SIGNALED };
	struct region_msg got;
	struct ibv_wc wc;
	long m1, m2, m3, m4;
	int ret;

	/* The server tells the client where its region is, in a Send. */
	memset(g.wbuf, 0x5a, WBUF);
	memset(g.dbuf, 0, WBUF);
	ret = ibv_post_recv(g.cid->qp, &crwr, &rbad);
	if (ret) {
		errno = ret;
		die("ibv_post_recv (client)");
	}
	ret = ibv_post_send(g.sid->qp, &kwr, &bad);
	if (ret) {
		errno = ret;
		die("ibv_post_send (server)");
	}
	if (!poll_one(g.scq, &wc) || wc.status != IBV_WC_SUCCESS)
		die("server Send did not complete");
	if (!check(poll_one(g.ccq, &wc) && wc.status == IBV_WC_SUCCESS &&
		   wc.wr_id == 32 && wc.byte_len == sizeof(got),
		   "client received the region's address and rkey (%s, %u "
		   "bytes)", ibv_wc_status_str(wc.status), wc.byte_len))
		return;
	memcpy(&got, g.cbuf, sizeof(got));

	gather(wsge, 2);
	wwr.wr.rdma.remote_addr = got.addr + WOFF;
	wwr.wr.rdma.rkey = got.rkey;
	rwr.wr.rdma.remote_addr = got.addr + WOFF;
	rwr.wr.rdma.rkey = got.rkey;
	wwr.next = &rwr;
	ret = cli_post(&wwr, &bad);
	check(!ret, "16-SGE RDMA Write + 1-SGE RDMA Read posted (%d)", ret);
	check(sent_ok(33, IBV_WC_RDMA_WRITE), "16-SGE RDMA Write completed");
	check(sent_ok(34, IBV_WC_RDMA_READ), "RDMA Read completed");
	m1 = mismatch(g.dbuf + 8, MSG, 2, 0);
	m2 = not_byte(g.dbuf, 8, 0) >= 0 ? 0 :
	     not_byte(g.dbuf + 8 + MSG, WBUF - 8 - MSG, 0);
	check(m1 < 0 && m2 < 0,
	      "RDMA Read returned the %u bytes written (first wrong byte %ld, "
	      "sink outside the read %s)", MSG, m1, m2 < 0 ? "untouched" :
	      "WRITTEN");
	/* The Read was ordered after the Write: the region holds it now. */
	m3 = mismatch(g.wbuf + WOFF, MSG, 2, 0);
	m4 = not_byte(g.wbuf, WOFF, 0x5a) >= 0 ? 0 :
	     not_byte(g.wbuf + WOFF + MSG, WBUF - WOFF - MSG, 0x5a);
	check(m3 < 0 && m4 < 0,
	      "server region holds the 16-SGE Write at offset %d (first wrong "
	      "byte %ld, around it %s)", WOFF, m3,
	      m4 < 0 ? "untouched" : "WRITTEN");
}

/* c. Inline Sends of 256 bytes; 257 are refused at post time. */
static void check_inline(void)
{
	char stackbuf[INL + 1];
	char *heap = zalloc(INL + 1);
	struct ibv_sge xsge = { .addr = (uintptr_t)g.xbuf, .length = BIG,
				.lkey = g.xmr->lkey };
	struct ibv_send_wr xwr = { .wr_id = 40, .sg_list = &xsge,
				   .num_sge = 1, .opcode = IBV_WR_SEND,
				   .send_flags = IBV_SEND_SIGNALED };
	struct ibv_sge isge = { .addr = (uintptr_t)stackbuf, .length = INL,
				.lkey = 0 };
	struct ibv_send_wr iwr = { .wr_id = 41, .sg_list = &isge,
				   .num_sge = 1, .opcode = IBV_WR_SEND,
				   .send_flags = IBV_SEND_SIGNALED |
						 IBV_SEND_INLINE }, *bad;
	struct ibv_sge bsge[2] = {
		{ .addr = (uintptr_t)stackbuf, .length = 200 },
		{ .addr = (uintptr_t)stackbuf + 200, .length = INL + 1 - 200 },
	};
	struct ibv_send_wr bwr = { .wr_id = 44, .sg_list = bsge,
				   .num_sge = 2, .opcode = IBV_WR_SEND,
				   .send_flags = IBV_SEND_SIGNALED |
						 IBV_SEND_INLINE };
	long m;
	int ret;

	/* Post-time copy: 256 inline bytes queued behind a 2 MiB Send. */
	fill(g.xbuf, BIG, 3, 0);
	fill(stackbuf, INL, 4, 0);
	srv_recv_at(51, 0, BIG);
	srv_recv_at(52, BIG + 64, INL + 64);
	ret = cli_post(&xwr, &bad);
	check(!ret, "2 MiB Send posted (%d)", ret);
	ret = cli_post(&iwr, &bad);
	memset(stackbuf, 0xa5, sizeof(stackbuf));
	check(!ret, "inline Send of %d bytes from the stack, lkey 0, posted "
	      "behind it (%d); buffer overwritten at once", INL, ret);
	check(sent_ok(40, IBV_WC_SEND), "2 MiB Send completed");
	check(sent_ok(41, IBV_WC_SEND), "inline Send completed");
	if (received(51, BIG, "2 MiB Send"))
		check(mismatch(g.rbuf, BIG, 3, 0) < 0, "2 MiB Send: data");
	if (received(52, INL, "inline Send")) {
		m = mismatch(g.rbuf + BIG + 64, INL, 4, 0);
		check(m < 0, "inline Send: receiver got the bytes of post "
		      "time, not the overwrite (first wrong byte %ld)", m);
	}

	/* The extended API, from the heap. */
	fill(heap, INL, 5, 0);
	srv_recv_at(53, 0, INL + 64);
	ibv_wr_start(g.qpx);
	g.qpx->wr_id = 42;
	g.qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(g.qpx);
	ibv_wr_set_inline_data(g.qpx, heap, INL);
	ret = ibv_wr_complete(g.qpx);
	memset(heap, 0xa5, INL + 1);
	check(!ret, "ibv_wr_send + ibv_wr_set_inline_data(%d bytes) "
	      "(%d); buffer overwritten at once", INL, ret);
	check(sent_ok(42, IBV_WC_SEND), "ibv_wr_* inline Send completed");
	if (received(53, INL, "ibv_wr_* inline Send")) {
		m = mismatch(g.rbuf, INL, 5, 0);
		check(m < 0, "ibv_wr_* inline Send: bytes of post time (first "
		      "wrong byte %ld)", m);
	}

	/* 257 bytes: refused; the valid request before it still goes. */
	fill(stackbuf, INL + 1, 6, 0);
	srv_recv_at(54, 0, INL + 64);
	iwr.wr_id = 43;
	iwr.next = &bwr;
	ret = cli_post(&iwr, &bad);
	check(ret == EINVAL && bad == &bwr,
	      "ibv_post_send: inline %d bytes (2 SGEs) refused: %d (want "
	      "EINVAL) bad_wr %s", INL + 1, ret,
	      bad == &bwr ? "on it" : bad == &iwr ? "on the valid one" :
	      bad ? "elsewhere" : "NULL");
	iwr.next = NULL;
	isge.length = INL + 1;
	ret = cli_post(&iwr, &bad);
	isge.length = INL;
	check(ret == EINVAL && bad == &iwr,
	      "ibv_post_send: inline %d bytes (1 SGE) refused: %d, bad_wr %s",
	      INL + 1, ret, bad == &iwr ? "on it" : "WRONG");
	fill(heap, INL + 1, 6, 0);
	ibv_wr_start(g.qpx);
	g.qpx->wr_id = 45;
	g.qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(g.qpx);
	ibv_wr_set_inline_data(g.qpx, heap, INL + 1);
	ret = ibv_wr_complete(g.qpx);
	check(ret == EINVAL, "ibv_wr_complete: inline %d bytes refused: %d",
	      INL + 1, ret);
	check(sent_ok(43, IBV_WC_SEND),
	      "the valid inline Send ahead of the refused one completed");
	if (received(54, INL, "valid inline Send ahead of the refused one"))
		check(mismatch(g.rbuf, INL, 6, 0) < 0,
		      "valid inline Send ahead of the refused one: data");
	check(cq_quiet(g.ccq, 200) && cq_quiet(g.rcq, 200),
	      "nothing of the refused requests was sent or completed");
	free(heap);
}

/* A completion event on the channel within @ms; true if one came. */
static bool cq_event(int ms, struct ibv_cq **cq, void **cq_ctx)
{
	struct pollfd pfd = { .fd = g.cc->fd, .events = POLLIN };
	double end = now_s() + ms / 1000.0;
	int left;

	for (;;) {
		left = (int)((end - now_s()) * 1000);
		if (left < 0)
			left = 0;
		if (poll(&pfd, 1, left) > 0 &&
		    !ibv_get_cq_event(g.cc, cq, cq_ctx)) {
			g.unacked++;
			return true;
		}
		if (now_s() >= end)
			return false;
	}
}

/* The client sends 64 bytes with @flags; the server's receive @wr_id. */
static bool ping(uint64_t wr_id, unsigned int flags, const char *what)
{
	struct ibv_sge sge = { .addr = (uintptr_t)g.sbuf[1], .length = 64,
			       .lkey = g.smr[1]->lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED | flags },
		*bad;
	int ret;

	fill(g.sbuf[1], 64, (int)wr_id, 0);
	srv_recv_at(wr_id, 0, 128);
	ret = cli_post(&wr, &bad);
	if (!check(!ret && sent_ok(wr_id, IBV_WC_SEND), "%s: posted and sent "
		   "(%d)", what, ret))
		return false;
	return received(wr_id, 64, what);
}

/* An event for the server's receive CQ within 5 s, acked. */
static void expect_event(const char *what)
{
	struct ibv_cq *cq = NULL;
	void *ctx = NULL;
	bool got = cq_event(5000, &cq, &ctx);

	check(got && cq == g.rcq && ctx == &g,
	      "%s: completion event within 5 s (%s)", what,
	      !got ? "none" : cq == g.rcq && ctx == &g ? "the receive CQ" :
	      "ANOTHER CQ");
	if (got) {
		ibv_ack_cq_events(cq, 1);
		g.unacked--;
	}
}

static void expect_no_event(const char *what)
{
	struct ibv_cq *cq;
	void *ctx;
	bool got = cq_event(300, &cq, &ctx);

	check(!got, "%s: no completion event within 300 ms", what);
	if (got) {
		ibv_ack_cq_events(cq, 1);
		g.unacked--;
	}
}

/* d. Completion channel: solicited-only and next-completion arming. */
static void check_events(void)
{
	int ret;

	check(cq_quiet(g.rcq, 10), "server receive CQ drained");
	ret = ibv_req_notify_cq(g.rcq, 1);
	check(!ret, "ibv_req_notify_cq(solicited only) (%d)", ret);
	/* The completion is polled first, so any event is already due. */
	if (ping(61, 0, "unsolicited Send, armed solicited-only"))
		expect_no_event("unsolicited Send, armed solicited-only");

	ret = ibv_req_notify_cq(g.rcq, 1);
	check(!ret, "ibv_req_notify_cq(solicited only) again (%d)", ret);
	if (ping(62, IBV_SEND_SOLICITED, "IBV_SEND_SOLICITED Send"))
		expect_event("IBV_SEND_SOLICITED Send");

	ret = ibv_req_notify_cq(g.rcq, 0);
	check(!ret, "ibv_req_notify_cq(next completion) (%d)", ret);
	if (ping(63, 0, "unsolicited Send, armed for next"))
		expect_event("unsolicited Send, armed for next");

	/* The event disarmed the CQ. */
	if (ping(64, IBV_SEND_SOLICITED, "solicited Send, not re-armed"))
		expect_no_event("solicited Send, not re-armed");
}

/* e. Disconnect and release everything, each step checked. */
static void teardown(void)
{
	int i, ret, mr_fail = 0;

	check(!rdma_disconnect(g.cid), "rdma_disconnect");
	check(wait_cm_pair(g.ech, RDMA_CM_EVENT_DISCONNECTED, g.sid, g.cid),
	      "DISCONNECTED on both ends");
	rdma_destroy_qp(g.cid);
	rdma_destroy_qp(g.sid);
	check(!rdma_destroy_id(g.cid) && !rdma_destroy_id(g.sid),
	      "rdma_destroy_id (both ends)");
	check(g.unacked == 0, "every completion event acked (%u left)",
	      g.unacked);
	ret = ibv_destroy_cq(g.rcq);
	check(!ret, "ibv_destroy_cq (channel CQ) (%d)", ret);
	ret = ibv_destroy_comp_channel(g.cc);
	check(!ret, "ibv_destroy_comp_channel (%d)", ret);
	ret = ibv_destroy_cq(g.ccq) | ibv_destroy_cq(g.scq);
	check(!ret, "ibv_destroy_cq (others) (%d)", ret);
	for (i = 0; i < NSGE; i++) {
		mr_fail += !!ibv_dereg_mr(g.smr[i]);
		free(g.sbuf[i]);
	}
	mr_fail += !!ibv_dereg_mr(g.rmr) + !!ibv_dereg_mr(g.wmr) +
		   !!ibv_dereg_mr(g.dmr) + !!ibv_dereg_mr(g.cmr) +
		   !!ibv_dereg_mr(g.xmr);
	check(!mr_fail, "ibv_dereg_mr x %d (%d failed)", NSGE + 5, mr_fail);
	ret = ibv_dealloc_pd(g.pd);
	check(!ret, "ibv_dealloc_pd (%d)", ret);
	check(!rdma_destroy_id(g.listen), "rdma_destroy_id (listener)");
	rdma_destroy_event_channel(g.ech);
	free(g.rbuf);
	free(g.wbuf);
	free(g.dbuf);
	free(g.cbuf);
	free(g.xbuf);
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: %s DEVICE IP PORT\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	setup(argv[1], argv[2], atoi(argv[3]));
	connect_pair();
	check_sge_send();
	check_sge_rdma();
	check_inline();
	check_events();
	teardown();
	printf("# %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
