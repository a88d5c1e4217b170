// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite rdmap_sw_stream: QPs in full operation over real kernel TCP
 * sockets on 127.0.0.1 (stream.c joining rx.c, tx.c, qp.c and mem.c).
 *
 * Part A, loopback: two RC QPs of one device, each attached to one end of a
 * connected socket pair (A as the MPA initiator, B as the responder, the
 * peer-to-peer model with each RTR type), exchanging Sends, Writes and
 * Reads through ib_core verbs.  Data is compared byte for byte, guard bytes
 * around every buffer must stay untouched, completions are polled with a
 * bounded wait, and both orderly and abortive ends are checked.
 *
 * Part B, hostile peer: one QP (responder, no peer-to-peer model: the raw
 * peer speaks first) against a raw kernel socket that writes crafted FPDUs.
 * Each one must bring back a Terminate with the RFC 5040 section 7 layer,
 * type and code, move the QP to ERROR with everything flushed, end the
 * stream, and leave every byte outside what the peer may write unchanged.
 *
 * Every wait is bounded (ST_WAIT_MS); nothing here can hang on a missing
 * completion.  KUnit actions undo in reverse order: each QP is destroyed
 * (which ends its stream) before its MRs' memory and its CQs go, and the
 * per-QP records the stream calls back into outlive the QP.
 */
#include <kunit/resource.h>
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/in.h>
#include <linux/kthread.h>
#include <linux/net.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <net/sock.h>
#include <rdma/ib_verbs.h>

#include "env.h"
#include "fpdu.h"
#include "internal.h"
#include "mem.h"
#include "stream_priv.h"	/* struct rsw_stream: posters */
#include "wire.h"

RSW_IMPORT_KUNIT_NS();

#define ST_WAIT_MS	15000		/* any completion, callback, FPDU */
#define ST_QUIET_MS	200		/* "nothing more happens" */
#define ST_GUARD	0xa5		/* bytes nobody may write */
#define ST_GUARD_LEN	128
#define ST_FILL		0x3c		/* MR contents a refused access keeps */
#define ST_NO_STAG	0x00fedc01U	/* an STag of no MR */
#define ST_QP_RIGHTS	(IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ)

static const u8 st_mac[ETH_ALEN] = { 0x02, 0x00, 0x5e, 0x30, 0x57, 0x01 };

static struct rsw_env_suite st;

static int st_suite_init(struct kunit_suite *suite)
{
	return rsw_env_suite_init(&st, st_mac, "rswst%d", "rswst0");
}

static void st_suite_exit(struct kunit_suite *suite)
{
	rsw_env_suite_exit(&st);
}

/* ------------------------------------------------------------ utilities */

static void st_pattern(u8 *p, size_t len, u32 seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (u8)(seed * 131 + i * 7 + (i >> 9) + (i >> 17));
}

static bool st_all(const u8 *p, size_t len, u8 v)
{
	return !memchr_inv(p, v, len);
}

static void st_vfree(void *p)
{
	vfree(p);
}

/* vmalloc'ed (MiBs need no high-order pages), freed after the case. */
static u8 *st_vmalloc(struct kunit *test, size_t size)
{
	u8 *p = vmalloc(size);

	KUNIT_ASSERT_NOT_NULL(test, p);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, st_vfree, p), 0);
	return p;
}

/* Poll one completion off @cq for at most @ms. */
static bool st_poll(struct ib_cq *cq, struct ib_wc *wc, unsigned int ms)
{
	unsigned long end = jiffies + msecs_to_jiffies(ms);

	for (;;) {
		if (ib_poll_cq(cq, 1, wc) == 1)
			return true;
		if (time_after(jiffies, end))
			return false;
		usleep_range(500, 2000);
	}
}

/* Expect the next completion of @cq: its wr_id, status, opcode. */
static void st_wc(struct kunit *test, struct ib_cq *cq, u64 wr_id,
		  enum ib_wc_status status, int opcode, struct ib_wc *out)
{
	struct ib_wc wc;

	KUNIT_ASSERT_TRUE_MSG(test, st_poll(cq, &wc, ST_WAIT_MS),
			      "no completion for wr_id %llu", wr_id);
	KUNIT_EXPECT_EQ_MSG(test, wc.wr_id, wr_id, "status %d opcode %d",
			    wc.status, wc.opcode);
	KUNIT_EXPECT_EQ_MSG(test, wc.status, status, "wr_id %llu (%s)",
			    wr_id, ib_wc_status_msg(wc.status));
	if (opcode >= 0 && wc.status == IB_WC_SUCCESS)
		KUNIT_EXPECT_EQ_MSG(test, (int)wc.opcode, opcode, "wr_id %llu",
				    wr_id);
	if (out)
		*out = wc;
}

static void st_cq_empty(struct kunit *test, struct ib_cq *cq, const char *what)
{
	struct ib_wc wc;

	KUNIT_EXPECT_FALSE_MSG(test, st_poll(cq, &wc, ST_QUIET_MS),
			       "%s: unexpected completion wr_id %llu status %d opcode %d",
			       what, wc.wr_id, wc.status, wc.opcode);
}

/* ------------------------------------------------------------ QP ends */

/* One QP, its CQs, and what its stream and ib_core reported. */
struct st_end {
	struct ib_qp *qp;
	struct ib_cq *scq, *rcq;
	bool direct;			/* CQs from ib_alloc_cq (IB_POLL_DIRECT) */
	struct completion closed;
	int closed_status;
	atomic_t closed_calls;
	atomic_t disconnects;
	atomic_t rcq_notify;
	unsigned long events;		/* bit per enum ib_event_type */
};

static void st_disconnect(void *ctx)
{
	struct st_end *e = ctx;

	atomic_inc(&e->disconnects);
}

static void st_closed(void *ctx, int status)
{
	struct st_end *e = ctx;

	e->closed_status = status;
	atomic_inc(&e->closed_calls);
	complete(&e->closed);
}

static const struct rsw_stream_ops st_ops = {
	.disconnect = st_disconnect,
	.closed = st_closed,
};

static void st_qp_event(struct ib_event *ev, void *ctx)
{
	struct st_end *e = ctx;

	if (ev->event < BITS_PER_LONG)
		set_bit(ev->event, &e->events);
}

static void st_cq_comp(struct ib_cq *cq, void *ctx)
{
	struct st_end *e = ctx;

	atomic_inc(&e->rcq_notify);
}

static void st_destroy_cq(void *cq)
{
	ib_destroy_cq(cq);
}

static void st_free_cq(void *cq)
{
	ib_free_cq(cq);
}

static void st_destroy_qp(void *qp)
{
	ib_destroy_qp(qp);
}

static struct ib_cq *st_cq(struct kunit *test, struct st_end *e, bool notify)
{
	struct ib_cq_init_attr attr = { .cqe = 256 };
	struct ib_cq *cq;

	if (e->direct) {
		cq = ib_alloc_cq(st.ibdev, e, 256, 0, IB_POLL_DIRECT);
		KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(cq), "ib_alloc_cq: %ld",
				       PTR_ERR(cq));
		KUNIT_ASSERT_EQ(test,
				kunit_add_action_or_reset(test, st_free_cq, cq),
				0);
		return cq;
	}
	cq = ib_create_cq(st.ibdev, notify ? st_cq_comp : NULL, NULL, e,
			  &attr);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(cq), "ib_create_cq: %ld",
			       PTR_ERR(cq));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, st_destroy_cq,
							cq), 0);
	return cq;
}

/* The QP's IB_QP_ACCESS_FLAGS become @access (modify_qp, any state). */
static void st_qp_access(struct kunit *test, struct st_end *e, int access)
{
	struct ib_qp_attr attr = { .qp_access_flags = access };

	KUNIT_ASSERT_EQ(test, ib_modify_qp(e->qp, &attr, IB_QP_ACCESS_FLAGS),
			0);
}

/* A QP whose send and receive queues hold @wrs work requests each. */
static struct st_end *st_end_new_wrs(struct kunit *test, struct ib_pd *pd,
				     bool direct, u32 wrs)
{
	struct st_end *e = kunit_kzalloc(test, sizeof(*e), GFP_KERNEL);
	struct ib_qp_init_attr attr = {};

	KUNIT_ASSERT_NOT_NULL(test, e);
	init_completion(&e->closed);
	e->direct = direct;
	e->scq = st_cq(test, e, false);
	e->rcq = st_cq(test, e, true);
	attr = (struct ib_qp_init_attr) {
		.event_handler = st_qp_event,
		.qp_context = e,
		.send_cq = e->scq,
		.recv_cq = e->rcq,
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = {
			.max_send_wr = wrs, .max_recv_wr = wrs,
			.max_send_sge = 4, .max_recv_sge = 4,
		},
	};
	e->qp = ib_create_qp(pd, &attr);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(e->qp), "ib_create_qp: %ld",
			       PTR_ERR(e->qp));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, st_destroy_qp,
							e->qp), 0);
	/* What iw_cm grants every QP it connects (at INIT). */
	st_qp_access(test, e, ST_QP_RIGHTS);
	return e;
}

static struct st_end *st_end_new(struct kunit *test, struct ib_pd *pd,
				 bool direct)
{
	return st_end_new_wrs(test, pd, direct, 64);
}

static enum ib_qp_state st_state(struct kunit *test, struct st_end *e)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;

	KUNIT_ASSERT_EQ(test, ib_query_qp(e->qp, &attr, IB_QP_STATE, &init),
			0);
	return attr.qp_state;
}

static int st_modify(struct st_end *e, enum ib_qp_state to)
{
	struct ib_qp_attr attr = { .qp_state = to };

	return ib_modify_qp(e->qp, &attr, IB_QP_STATE);
}

static bool st_wait_closed(struct st_end *e)
{
	return wait_for_completion_timeout(&e->closed,
					   msecs_to_jiffies(ST_WAIT_MS)) > 0;
}

/* Wait until the stream of @e reported its end (disconnect or closed). */
static bool st_wait_end(struct st_end *e)
{
	unsigned long end = jiffies + msecs_to_jiffies(ST_WAIT_MS);

	while (!atomic_read(&e->closed_calls) &&
	       !atomic_read(&e->disconnects)) {
		if (time_after(jiffies, end))
			return false;
		msleep(5);
	}
	return true;
}

static struct rsw_stream_stats st_stats(struct kunit *test, struct st_end *e)
{
	struct rsw_stream_stats s = {};

	KUNIT_EXPECT_EQ(test, rsw_stream_stats(to_rsw_qp(e->qp), &s), 0);
	return s;
}

/*
 * The device's counters (stats.h) as a case began: every QP of the suite
 * is on st's device and cases run one at a time, so what the case did is
 * the difference.
 */
struct st_ctrs {
	u64 v[RSW_STAT_NUM];
};

static struct st_ctrs *st_ctrs_snap(struct kunit *test)
{
	struct st_ctrs *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	enum rsw_stat i;

	KUNIT_ASSERT_NOT_NULL(test, c);
	for (i = RSW_STAT_NONE + 1; i < RSW_STAT_NUM; i++)
		c->v[i] = rsw_stats_read(st.rsw->stats, i);
	return c;
}

static u64 st_ctr(const struct st_ctrs *c0, enum rsw_stat i)
{
	return rsw_stats_read(st.rsw->stats, i) - c0->v[i];
}

/* The rx_err_* counters together: refused peer input of any cause. */
static u64 st_ctr_rx_errs(const struct st_ctrs *c0)
{
	u64 sum = 0;
	unsigned int i;

	for (i = 0; i < rsw_rx_err_nrows; i++)
		sum += st_ctr(c0, rsw_rx_err_rows[i].stat);
	return sum;
}

/* ---------------------------------------------------------- TCP sockets */

/* A connected TCP pair on 127.0.0.1: *@c connected, *@s accepted. */
static void st_tcp_pair(struct kunit *test, struct socket **c,
			struct socket **s)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	struct socket *lsock;
	int ret;

	KUNIT_ASSERT_EQ(test, sock_create_kern(&init_net, AF_INET, SOCK_STREAM,
					       IPPROTO_TCP, &lsock), 0);
	ret = kernel_bind(lsock, (struct sockaddr *)&sin, sizeof(sin));
	if (!ret)
		ret = kernel_listen(lsock, 2);
	if (!ret)
		ret = kernel_getsockname(lsock, (struct sockaddr *)&sin) > 0 ?
		      0 : -EINVAL;
	if (!ret)
		ret = sock_create_kern(&init_net, AF_INET, SOCK_STREAM,
				       IPPROTO_TCP, c);
	if (!ret) {
		ret = kernel_connect(*c, (struct sockaddr *)&sin, sizeof(sin),
				     0);
		if (ret)
			sock_release(*c);
	}
	if (!ret) {
		lsock->sk->sk_rcvtimeo = msecs_to_jiffies(ST_WAIT_MS);
		ret = kernel_accept(lsock, s, 0);
		if (ret)
			sock_release(*c);
	}
	sock_release(lsock);
	KUNIT_ASSERT_EQ_MSG(test, ret, 0, "TCP loopback pair");
}

static void st_sock_release(void *sock)
{
	sock_release(sock);
}

static int st_send_all(struct socket *sock, const void *buf, size_t len)
{
	struct kvec vec = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr msg = {};

	return kernel_sendmsg(sock, &msg, &vec, 1, len);
}

static int st_recv_all(struct socket *sock, void *buf, size_t len)
{
	struct kvec vec = { .iov_base = buf, .iov_len = len };
	struct msghdr msg = {};

	sock->sk->sk_rcvtimeo = msecs_to_jiffies(ST_WAIT_MS);
	return kernel_recvmsg(sock, &msg, &vec, 1, len, MSG_WAITALL);
}

static void st_attach(struct kunit *test, struct st_end *e,
		      struct socket *sock, const struct rsw_mpa_conn *conn,
		      bool initiator)
{
	int ret = rsw_stream_attach(to_rsw_qp(e->qp), sock, conn, initiator,
				    &st_ops, e);

	KUNIT_ASSERT_EQ_MSG(test, ret, 0, "rsw_stream_attach");
	KUNIT_EXPECT_EQ(test, st_state(test, e), IB_QPS_RTS);
}

/* ----------------------------------------------------------- memory */

/*
 * A fast-reg MR of @len bytes over vmalloc'ed pages, starting ST_GUARD_LEN
 * bytes into the first page; at least ST_GUARD_LEN guard bytes follow it.
 * The MR's own bytes start as ST_FILL.  Mapped, not registered.
 */
struct st_mr {
	struct ib_mr *mr;
	u8 *base;		/* whole allocation */
	size_t size;
	u32 off;		/* MR start in @base */
	u32 len;
};

static void st_dereg(void *mr)
{
	ib_dereg_mr(mr);
}

static struct st_mr *st_mr_new(struct kunit *test, struct ib_pd *pd, u32 len)
{
	struct st_mr *m = kunit_kzalloc(test, sizeof(*m), GFP_KERNEL);
	struct scatterlist *sg;
	unsigned int sg_off;
	u32 npages, i;

	KUNIT_ASSERT_NOT_NULL(test, m);
	m->off = ST_GUARD_LEN;
	m->len = len;
	npages = DIV_ROUND_UP(m->off + len, PAGE_SIZE);
	m->size = (size_t)(npages + 1) * PAGE_SIZE;	/* a guard page too */
	m->base = st_vmalloc(test, m->size);
	memset(m->base, ST_GUARD, m->size);
	memset(m->base + m->off, ST_FILL, len);

	m->mr = ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, npages);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR_OR_NULL(m->mr), "ib_alloc_mr: %ld",
			       PTR_ERR(m->mr));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, st_dereg, m->mr),
			0);
	sg = kunit_kmalloc_array(test, npages, sizeof(*sg), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, sg);
	sg_init_table(sg, npages);
	for (i = 0; i < npages; i++)
		sg_set_page(&sg[i], vmalloc_to_page(m->base + i * PAGE_SIZE),
			    PAGE_SIZE, 0);
	sg[npages - 1].length = m->off + len - (npages - 1) * PAGE_SIZE;
	KUNIT_ASSERT_EQ(test, ib_dma_map_sg(st.ibdev, sg, npages,
					    DMA_BIDIRECTIONAL), (int)npages);
	sg_off = m->off;
	KUNIT_ASSERT_EQ(test, ib_map_mr_sg(m->mr, sg, npages, &sg_off,
					   PAGE_SIZE), (int)npages);
	KUNIT_ASSERT_EQ(test, m->mr->length, (u64)len);
	return m;
}

/* Register @m directly (no QP involved), as mem_kunit does. */
static void st_mr_reg_direct(struct kunit *test, struct st_mr *m,
			     struct ib_pd *pd, int access)
{
	struct ib_reg_wr wr = {
		.wr.opcode = IB_WR_REG_MR,
		.mr = m->mr,
		.key = m->mr->rkey,
		.access = access,
	};

	KUNIT_ASSERT_EQ(test, rsw_mr_fastreg(pd, &wr), 0);
}

/* IB_WR_REG_MR of @m posted on @e's QP; its completion is checked. */
static void st_mr_reg_post(struct kunit *test, struct st_end *e,
			   struct st_mr *m, int access, u64 wr_id)
{
	struct ib_reg_wr wr = {
		.wr = {
			.opcode = IB_WR_REG_MR,
			.send_flags = IB_SEND_SIGNALED,
			.wr_id = wr_id,
		},
		.mr = m->mr,
		.key = m->mr->rkey,
		.access = access,
	};

	KUNIT_ASSERT_EQ(test, ib_post_send(e->qp, &wr.wr, NULL), 0);
	st_wc(test, e->scq, wr_id, IB_WC_SUCCESS, IB_WC_REG_MR, NULL);
}

/* The guard bytes around @m's range are untouched. */
static void st_mr_guards(struct kunit *test, const struct st_mr *m)
{
	KUNIT_EXPECT_TRUE_MSG(test, st_all(m->base, m->off, ST_GUARD),
			      "guard before MR changed");
	KUNIT_EXPECT_TRUE_MSG(test, st_all(m->base + m->off + m->len,
					   m->size - m->off - m->len, ST_GUARD),
			      "guard after MR changed");
}

static u8 *st_mr_ptr(const struct st_mr *m, u32 off)
{
	return m->base + m->off + off;
}

/* What access through STag @stag checks as, right now. */
static enum rsw_mr_err st_mr_check(struct ib_pd *pd, u32 stag, u64 to,
				   u64 len, u32 right)
{
	struct rsw_mr_ref ref;
	enum rsw_mr_err err;

	err = rsw_mr_get(st.rsw, pd, stag, to, len, right, &ref);
	if (!err)
		rsw_mr_ref_put(&ref);
	return err;
}

/*
 * Local buffers reached through the PD's local_dma_lkey: one vmalloc'ed
 * area with ST_GUARD_LEN guard bytes before and after each of its pieces.
 */
struct st_lbuf {
	u8 *base;
	size_t size;
};

static struct st_lbuf st_lbuf_new(struct kunit *test, size_t size)
{
	struct st_lbuf b = { .size = size };

	b.base = st_vmalloc(test, size);
	memset(b.base, ST_GUARD, size);
	return b;
}

static struct ib_sge st_sge(struct ib_pd *pd, void *p, u32 len)
{
	return (struct ib_sge) {
		.addr = (uintptr_t)p, .length = len, .lkey = pd->local_dma_lkey,
	};
}

static void st_post_recv(struct kunit *test, struct st_end *e, u64 wr_id,
			 struct ib_sge *sge, int n)
{
	struct ib_recv_wr wr = { .wr_id = wr_id, .sg_list = sge, .num_sge = n };

	KUNIT_ASSERT_EQ(test, ib_post_recv(e->qp, &wr, NULL), 0);
}

static void st_post_send(struct kunit *test, struct st_end *e, u64 wr_id,
			 enum ib_wr_opcode op, int flags, struct ib_sge *sge,
			 int n, u32 inv)
{
	struct ib_send_wr wr = {
		.wr_id = wr_id, .opcode = op, .sg_list = sge, .num_sge = n,
		.send_flags = flags | IB_SEND_SIGNALED,
	};

	wr.ex.invalidate_rkey = inv;
	KUNIT_ASSERT_EQ(test, ib_post_send(e->qp, &wr, NULL), 0);
}

static void st_post_rdma(struct kunit *test, struct st_end *e, u64 wr_id,
			 enum ib_wr_opcode op, int flags, struct ib_sge *sge,
			 int n, u64 raddr, u32 rkey, u32 inv)
{
	struct ib_rdma_wr wr = {
		.wr = {
			.wr_id = wr_id, .opcode = op, .sg_list = sge,
			.num_sge = n, .send_flags = flags | IB_SEND_SIGNALED,
		},
		.remote_addr = raddr,
		.rkey = rkey,
	};

	wr.wr.ex.invalidate_rkey = inv;
	KUNIT_ASSERT_EQ(test, ib_post_send(e->qp, &wr.wr, NULL), 0);
}

/* ==========================================================================
 * Part A: loopback between two QPs.
 */
struct st_lb {
	struct st_end *a;	/* initiator */
	struct st_end *b;	/* responder */
};

/*
 * @a_mk: A sends MPA Markers (B asked with M), @b_mk: B sends them; the
 * negotiated connection of each end says so from its own side.
 */
static struct st_lb st_lb_up_mk(struct kunit *test, u8 rtr, bool crc,
				bool direct, bool a_mk, bool b_mk)
{
	struct rsw_mpa_conn conn = {
		.rev = RSW_MPA_REV_2, .crc = crc, .enhanced = true,
		.p2p = true, .rtr = rtr, .ird = 16, .ord = 16,
	};
	struct socket *ca, *cb;
	struct st_lb lb;

	lb.a = st_end_new(test, st.pd, direct);
	lb.b = st_end_new(test, st.pd, direct);
	st_tcp_pair(test, &ca, &cb);
	conn.tx_markers = a_mk;
	conn.rx_markers = b_mk;
	st_attach(test, lb.a, ca, &conn, true);
	conn.tx_markers = b_mk;
	conn.rx_markers = a_mk;
	st_attach(test, lb.b, cb, &conn, false);
	rsw_stream_start(to_rsw_qp(lb.a->qp));
	rsw_stream_start(to_rsw_qp(lb.b->qp));
	return lb;
}

static struct st_lb st_lb_up(struct kunit *test, u8 rtr, bool crc,
			     bool direct)
{
	return st_lb_up_mk(test, rtr, crc, direct, false, false);
}

/* Abortive end of both (the case's last step when it left them running). */
static void st_lb_down(struct kunit *test, struct st_lb *lb)
{
	KUNIT_EXPECT_EQ(test, st_modify(lb->a, IB_QPS_ERR), 0);
	KUNIT_EXPECT_TRUE_MSG(test, st_wait_closed(lb->a), "A not closed");
	KUNIT_EXPECT_TRUE_MSG(test, st_wait_end(lb->b), "B saw no end");
	KUNIT_EXPECT_EQ(test, st_modify(lb->b, IB_QPS_ERR), 0);
	KUNIT_EXPECT_TRUE_MSG(test, st_wait_closed(lb->b), "B not closed");
	KUNIT_EXPECT_EQ(test, atomic_read(&lb->a->closed_calls), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&lb->b->closed_calls), 1);
}

/*
 * Send @len bytes in @nsend SGEs from @src of @from to @to, whose receive
 * has @nrecv SGEs: pieces of odd sizes with guard bytes between them.
 */
static void st_send_check(struct kunit *test, struct st_end *from,
			  struct st_end *to, size_t len, int nsend, int nrecv,
			  int flags, u64 id)
{
	struct st_lbuf sb = st_lbuf_new(test, len + 2 * ST_GUARD_LEN * nsend);
	struct st_lbuf rb = st_lbuf_new(test, len + 2 * ST_GUARD_LEN * nrecv);
	struct ib_sge ss[4], rs[4];
	u8 *expect = st_vmalloc(test, len);
	size_t done = 0, piece;
	u8 *sp = sb.base, *rp = rb.base;
	struct ib_wc wc;
	int i;

	st_pattern(expect, len, (u32)id);
	for (i = 0; i < nsend; i++) {
		piece = i == nsend - 1 ? len - done : len / nsend / (i + 1) + i;
		sp += ST_GUARD_LEN;
		memcpy(sp, expect + done, piece);
		ss[i] = st_sge(from->qp->pd, sp, piece);
		sp += piece + ST_GUARD_LEN;
		done += piece;
	}
	done = 0;
	for (i = 0; i < nrecv; i++) {
		piece = i == nrecv - 1 ? len - done : len / nrecv / (i + 2) + 3;
		rp += ST_GUARD_LEN;
		memset(rp, 0, piece);
		rs[i] = st_sge(to->qp->pd, rp, piece);
		rp += piece + ST_GUARD_LEN;
		done += piece;
	}
	st_post_recv(test, to, id + 1, rs, nrecv);
	st_post_send(test, from, id, IB_WR_SEND, flags, ss, nsend, 0);

	st_wc(test, from->scq, id, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	st_wc(test, to->rcq, id + 1, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, (u32)len);
	KUNIT_EXPECT_EQ(test, wc.wc_flags & (IB_WC_WITH_INVALIDATE |
					      IB_WC_WITH_IMM), 0);
	KUNIT_EXPECT_PTR_EQ(test, wc.qp, to->qp);
	/* The received pieces, in order, are the message. */
	done = 0;
	for (i = 0; i < nrecv; i++) {
		u8 *p = (u8 *)(uintptr_t)rs[i].addr;

		KUNIT_EXPECT_TRUE_MSG(test, !memcmp(p, expect + done,
						    rs[i].length),
				      "receive SGE %d differs", i);
		KUNIT_EXPECT_TRUE(test, st_all(p - ST_GUARD_LEN, ST_GUARD_LEN,
					       ST_GUARD));
		KUNIT_EXPECT_TRUE(test, st_all(p + rs[i].length, ST_GUARD_LEN,
					       ST_GUARD));
		done += rs[i].length;
	}
	/* The sender's buffers were only read. */
	done = 0;
	for (i = 0; i < nsend; i++) {
		u8 *p = (u8 *)(uintptr_t)ss[i].addr;

		KUNIT_EXPECT_TRUE(test, !memcmp(p, expect + done,
						ss[i].length));
		done += ss[i].length;
	}
}

static const u8 st_rtr_params[] = {
	RSW_MPA_RTR_WRITE, RSW_MPA_RTR_READ, RSW_MPA_RTR_SEND,
};

static void st_rtr_desc(const u8 *p, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "rtr %s",
		 *p == RSW_MPA_RTR_WRITE ? "write" :
		 *p == RSW_MPA_RTR_READ ? "read" : "send");
}

KUNIT_ARRAY_PARAM(st_rtr, st_rtr_params, st_rtr_desc);

/*
 * Both ends of a loopback count into st's device: once everything came
 * in, FPDUs and octets sent equal those received.  The sender counts
 * after TCP took the octets, which on loopback may be after the receiver
 * completed them, so this waits (bounded) for the two to meet.
 */
static bool st_ctrs_settled(const struct st_ctrs *c0)
{
	unsigned long end = jiffies + msecs_to_jiffies(ST_WAIT_MS);

	while (st_ctr(c0, RSW_STAT_TX_FPDUS) != st_ctr(c0, RSW_STAT_RX_FPDUS) ||
	       st_ctr(c0, RSW_STAT_TX_OCTETS) !=
	       st_ctr(c0, RSW_STAT_RX_OCTETS)) {
		if (time_after(jiffies, end))
			return false;
		msleep(5);
	}
	return true;
}

/*
 * The counters of st_lb_send: @nsend Sends, each posted alone on both
 * sides, plus the RTR of type @rtr (a Send RTR is a Send on the wire).
 */
static void st_lb_send_ctrs(struct kunit *test, const struct st_ctrs *c0,
			    u8 rtr, u64 nsend)
{
	u64 sends = nsend + (rtr == RSW_MPA_RTR_SEND);

	KUNIT_EXPECT_TRUE_MSG(test, st_ctrs_settled(c0),
			      "FPDUs or octets sent and received differ");
	KUNIT_EXPECT_EQ(test, st_ctr(c0, RSW_STAT_TX_SENDS), sends);
	KUNIT_EXPECT_EQ(test, st_ctr(c0, RSW_STAT_RX_SENDS), sends);
	KUNIT_EXPECT_EQ(test, st_ctr(c0, rsw_stat_rtr(rtr, false)), 1);
	KUNIT_EXPECT_EQ(test, st_ctr(c0, rsw_stat_rtr(rtr, true)), 1);
	KUNIT_EXPECT_EQ(test, st_ctr(c0, RSW_STAT_KERNEL_SEND_POSTS), nsend);
	KUNIT_EXPECT_EQ(test, st_ctr(c0, RSW_STAT_KERNEL_SEND_WRS), nsend);
	KUNIT_EXPECT_EQ(test, st_ctr(c0, RSW_STAT_KERNEL_RECV_POSTS), nsend);
	KUNIT_EXPECT_EQ(test, st_ctr(c0, RSW_STAT_KERNEL_RECV_WRS), nsend);
	/* At least one FPDU per message, the RTR of any type one of them. */
	KUNIT_EXPECT_GE(test, st_ctr(c0, RSW_STAT_TX_FPDUS), nsend + 1);
	KUNIT_EXPECT_EQ(test, st_ctr(c0, RSW_STAT_TX_OCTETS),
			st_ctr(c0, RSW_STAT_TX_ZC_OCTETS) +
			st_ctr(c0, RSW_STAT_TX_COPIED_OCTETS));
	KUNIT_EXPECT_EQ(test, st_ctr(c0, RSW_STAT_TX_TERMS), 0);
	KUNIT_EXPECT_EQ(test, st_ctr(c0, RSW_STAT_RX_TERMS), 0);
	KUNIT_EXPECT_EQ(test, st_ctr_rx_errs(c0), 0);
	KUNIT_EXPECT_GE(test, st_ctr(c0, RSW_STAT_STREAM_WAKEUPS), 2);
}

/* Multi-SGE Sends both ways; the RTR completes nothing on either side. */
static void st_lb_send(struct kunit *test)
{
	const u8 *rtr = test->param_value;
	struct st_ctrs *c0 = st_ctrs_snap(test);
	struct st_lb lb = st_lb_up(test, *rtr, true, false);
	struct rsw_stream_stats sa, sb;
	u64 nsend = 0;

	st_send_check(test, lb.a, lb.b, 433, 2, 2, 0, 100);
	nsend++;
	st_send_check(test, lb.b, lb.a, 5000, 3, 2, 0, 200);
	nsend++;
	st_send_check(test, lb.a, lb.b, 1, 1, 1, 0, 300);
	nsend++;
	st_lb_send_ctrs(test, c0, *rtr, nsend);
	/* Nothing else: no completion for the RTR, none twice. */
	st_cq_empty(test, lb.a->scq, "A send CQ");
	st_cq_empty(test, lb.a->rcq, "A recv CQ");
	st_cq_empty(test, lb.b->scq, "B send CQ");
	st_cq_empty(test, lb.b->rcq, "B recv CQ");
	sa = st_stats(test, lb.a);
	sb = st_stats(test, lb.b);
	KUNIT_EXPECT_GE(test, sa.rx_fpdus, 1);
	KUNIT_EXPECT_GE(test, sb.rx_fpdus, 3);	/* RTR and two Sends */
	KUNIT_EXPECT_EQ(test, sa.term_sent + sa.term_rcvd, 0);
	KUNIT_EXPECT_EQ(test, sb.term_sent + sb.term_rcvd, 0);
	KUNIT_EXPECT_EQ(test, st_state(test, lb.a), IB_QPS_RTS);
	KUNIT_EXPECT_EQ(test, st_state(test, lb.b), IB_QPS_RTS);
	st_lb_down(test, &lb);
}

static const bool st_crc_params[] = { true, false };

static void st_crc_desc(const bool *p, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "crc %s", *p ? "on" : "off");
}

KUNIT_ARRAY_PARAM(st_crc, st_crc_params, st_crc_desc);

/* A Send over 1 MiB: many FPDUs, several SGEs each side. */
static void st_lb_send_large(struct kunit *test)
{
	const bool *crc = test->param_value;
	struct st_lb lb = st_lb_up(test, RSW_MPA_RTR_WRITE, *crc, false);
	struct rsw_stream_stats sb;

	st_send_check(test, lb.a, lb.b, SZ_1M + 3, 3, 4, 0, 400);
	sb = st_stats(test, lb.b);
	/* Loopback MSS is under 64 KiB: at least 16 FPDUs. */
	KUNIT_EXPECT_GE(test, sb.rx_fpdus, 16);
	/* And back, to show the stream is still in step. */
	st_send_check(test, lb.b, lb.a, 70000, 2, 1, 0, 500);
	st_lb_down(test, &lb);
}

/* Solicited Event: only the solicited Send wakes a solicited-only arm. */
static void st_lb_send_solicited(struct kunit *test)
{
	struct st_lb lb = st_lb_up(test, RSW_MPA_RTR_WRITE, true, false);
	unsigned long end;

	KUNIT_ASSERT_EQ(test, ib_req_notify_cq(lb.b->rcq, IB_CQ_SOLICITED), 0);
	st_send_check(test, lb.a, lb.b, 64, 1, 1, 0, 600);
	msleep(ST_QUIET_MS);
	KUNIT_EXPECT_EQ(test, atomic_read(&lb.b->rcq_notify), 0);
	st_send_check(test, lb.a, lb.b, 64, 1, 1, IB_SEND_SOLICITED, 700);
	end = jiffies + msecs_to_jiffies(ST_WAIT_MS);
	while (!atomic_read(&lb.b->rcq_notify) && time_before(jiffies, end))
		msleep(5);
	KUNIT_EXPECT_EQ(test, atomic_read(&lb.b->rcq_notify), 1);
	st_lb_down(test, &lb);
}

/* RDMA Write from two local SGEs into B's fast-registered MR. */
static void st_lb_write(struct kunit *test)
{
	const bool *crc = test->param_value;
	struct st_lb lb = st_lb_up(test, RSW_MPA_RTR_READ, *crc, false);
	const u32 mr_len = 300 * 1024, at = 100, len = 200 * 1024 + 5;
	struct st_mr *m = st_mr_new(test, st.pd, mr_len);
	u8 *src = st_vmalloc(test, len);
	struct ib_sge sge[2];

	st_mr_reg_post(test, lb.b, m, IB_ACCESS_LOCAL_WRITE |
		       IB_ACCESS_REMOTE_WRITE, 1);
	st_pattern(src, len, 7);
	sge[0] = st_sge(st.pd, src, 1000);
	sge[1] = st_sge(st.pd, src + 1000, len - 1000);
	st_post_rdma(test, lb.a, 2, IB_WR_RDMA_WRITE, 0, sge, 2,
		     m->mr->iova + at, m->mr->rkey, 0);
	st_wc(test, lb.a->scq, 2, IB_WC_SUCCESS, IB_WC_RDMA_WRITE, NULL);
	/* The Write completes at the sender once sent: show it was placed. */
	st_send_check(test, lb.a, lb.b, 8, 1, 1, 0, 800);
	KUNIT_EXPECT_TRUE(test, !memcmp(st_mr_ptr(m, at), src, len));
	KUNIT_EXPECT_TRUE(test, st_all(st_mr_ptr(m, 0), at, ST_FILL));
	KUNIT_EXPECT_TRUE(test, st_all(st_mr_ptr(m, at + len),
				       mr_len - at - len, ST_FILL));
	st_mr_guards(test, m);
	/* A Write completes nothing at the target. */
	st_cq_empty(test, lb.b->rcq, "B recv CQ");
	st_cq_empty(test, lb.b->scq, "B send CQ");
	st_lb_down(test, &lb);
}

/* A's Read sink: fast-reg MR with LOCAL_WRITE and REMOTE_WRITE. */
#define ST_SINK_ACCESS	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE)

/* RDMA Read of @len from @src (B) at @soff into @sink (A) at @doff. */
static void st_read(struct kunit *test, struct st_lb *lb, struct st_mr *src,
		    u32 soff, struct st_mr *sink, u32 doff, u32 len, u64 id,
		    enum ib_wr_opcode op, int flags)
{
	struct ib_sge sge = {
		.addr = sink->mr->iova + doff, .length = len,
		.lkey = sink->mr->lkey,
	};

	st_post_rdma(test, lb->a, id, op, flags, &sge, 1,
		     src->mr->iova + soff, src->mr->rkey,
		     op == IB_WR_RDMA_READ_WITH_INV ? sink->mr->lkey : 0);
}

static void st_read_expect(struct kunit *test, struct st_lb *lb, u64 id,
			   u32 len)
{
	struct ib_wc wc;

	st_wc(test, lb->a->scq, id, IB_WC_SUCCESS, IB_WC_RDMA_READ, &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, len);
}

/* RDMA Read over many FPDUs; the target's MR stays as it was. */
static void st_lb_read(struct kunit *test)
{
	const bool *crc = test->param_value;
	struct st_lb lb = st_lb_up(test, RSW_MPA_RTR_SEND, *crc, false);
	const u32 len = 300 * 1024 + 3;
	struct st_mr *src = st_mr_new(test, st.pd, len + 64);
	struct st_mr *sink = st_mr_new(test, st.pd, len + 64);
	u8 *expect = st_vmalloc(test, len + 64);

	st_mr_reg_post(test, lb.b, src, IB_ACCESS_REMOTE_READ, 1);
	st_mr_reg_post(test, lb.a, sink, ST_SINK_ACCESS, 2);
	st_pattern(st_mr_ptr(src, 0), len + 64, 9);
	memcpy(expect, st_mr_ptr(src, 0), len + 64);
	st_read(test, &lb, src, 11, sink, 7, len, 3, IB_WR_RDMA_READ, 0);
	st_read_expect(test, &lb, 3, len);
	KUNIT_EXPECT_TRUE(test, !memcmp(st_mr_ptr(sink, 7), expect + 11, len));
	KUNIT_EXPECT_TRUE(test, st_all(st_mr_ptr(sink, 0), 7, ST_FILL));
	KUNIT_EXPECT_TRUE(test, st_all(st_mr_ptr(sink, 7 + len), 64 - 7,
				       ST_FILL));
	st_mr_guards(test, sink);
	KUNIT_EXPECT_TRUE(test, !memcmp(st_mr_ptr(src, 0), expect, len + 64));
	st_mr_guards(test, src);
	/*
	 * B answered from a fast-registered MR: copied, with CRC or without.
	 * Only user MRs' pages go to TCP by reference (tx_sock.c): a kernel
	 * consumer may reuse its pages once an invalidation completed, and
	 * TCP reads a spliced page whenever it (re)transmits.
	 */
	KUNIT_EXPECT_EQ(test, st_stats(test, lb.b).tx_spliced, 0ULL);
	/* The sink is still valid (a plain Read invalidates nothing). */
	KUNIT_EXPECT_EQ(test, st_mr_check(st.pd, sink->mr->rkey,
					  sink->mr->iova, 1,
					  IB_ACCESS_LOCAL_WRITE), RSW_MR_OK);
	st_cq_empty(test, lb.b->scq, "B send CQ");
	st_cq_empty(test, lb.b->rcq, "B recv CQ");
	st_lb_down(test, &lb);
}

/*
 * MPA Markers (RFC 5044 section 5) through the real stream: in either
 * direction or both, with and without CRC, revision 2 with the RFC 6581
 * RTR (itself the first FPDU, so the first Marker precedes it).  A Send
 * over 1 MiB each way (FPDUs of every alignment), a Write and a Read of
 * odd lengths (Read Responses carry Markers from B), and the streams stay
 * in step: no Terminate, both QPs in RTS.
 */
struct st_mk_case {
	const char *name;
	bool a_mk, b_mk, crc;
	u8 rtr;
};

static const struct st_mk_case st_mk_cases[] = {
	{ "both_crc", true, true, true, RSW_MPA_RTR_WRITE },
	{ "both_nocrc", true, true, false, RSW_MPA_RTR_READ },
	{ "initiator_sends_only", true, false, true, RSW_MPA_RTR_SEND },
	{ "responder_sends_only", false, true, true, RSW_MPA_RTR_WRITE },
	{ "responder_sends_only_nocrc", false, true, false, RSW_MPA_RTR_SEND },
};

KUNIT_ARRAY_PARAM_DESC(st_mk, st_mk_cases, name);

static void st_lb_markers(struct kunit *test)
{
	const struct st_mk_case *c = test->param_value;
	struct st_lb lb = st_lb_up_mk(test, c->rtr, c->crc, false, c->a_mk,
				      c->b_mk);
	const u32 len = 70 * 1024 + 3;
	struct st_mr *src = st_mr_new(test, st.pd, len + 64);
	struct st_mr *sink = st_mr_new(test, st.pd, len + 64);
	u8 *wsrc = st_vmalloc(test, len);
	struct rsw_stream_stats sa, sb;
	struct ib_sge sge;

	st_send_check(test, lb.a, lb.b, SZ_1M + 1, 3, 2, 0, 100);
	st_send_check(test, lb.b, lb.a, SZ_1M + 2, 2, 3, 0, 101);
	/* A Write of B's sink MR, then a Read of B's source. */
	st_mr_reg_post(test, lb.b, src, IB_ACCESS_REMOTE_READ |
		       IB_ACCESS_REMOTE_WRITE | IB_ACCESS_LOCAL_WRITE, 1);
	st_mr_reg_post(test, lb.a, sink, ST_SINK_ACCESS, 2);
	st_pattern(wsrc, len, 5);
	sge = st_sge(st.pd, wsrc, len);
	st_post_rdma(test, lb.a, 3, IB_WR_RDMA_WRITE, 0, &sge, 1,
		     src->mr->iova + 9, src->mr->rkey, 0);
	st_wc(test, lb.a->scq, 3, IB_WC_SUCCESS, IB_WC_RDMA_WRITE, NULL);
	st_read(test, &lb, src, 9, sink, 5, len, 4, IB_WR_RDMA_READ, 0);
	st_read_expect(test, &lb, 4, len);
	KUNIT_EXPECT_TRUE(test, !memcmp(st_mr_ptr(src, 9), wsrc, len));
	KUNIT_EXPECT_TRUE(test, !memcmp(st_mr_ptr(sink, 5), wsrc, len));
	st_mr_guards(test, src);
	st_mr_guards(test, sink);
	sa = st_stats(test, lb.a);
	sb = st_stats(test, lb.b);
	KUNIT_EXPECT_EQ(test, sa.term_sent + sa.term_rcvd, 0);
	KUNIT_EXPECT_EQ(test, sb.term_sent + sb.term_rcvd, 0);
	KUNIT_EXPECT_EQ(test, st_state(test, lb.a), IB_QPS_RTS);
	KUNIT_EXPECT_EQ(test, st_state(test, lb.b), IB_QPS_RTS);
	st_lb_down(test, &lb);
}

/*
 * Send with Invalidate of B's MR: B's completion says so, the MR is
 * invalid, and a Write to it afterwards gets A a Terminate.
 */
static void st_lb_send_inv(struct kunit *test)
{
	struct st_lb lb = st_lb_up(test, RSW_MPA_RTR_WRITE, true, false);
	struct st_mr *m = st_mr_new(test, st.pd, 4096);
	u8 *buf = kunit_kzalloc(test, 64, GFP_KERNEL);
	struct ib_sge s, r;
	struct rsw_stream_stats sa, sb;
	struct ib_wc wc;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	st_mr_reg_post(test, lb.b, m, IB_ACCESS_LOCAL_WRITE |
		       IB_ACCESS_REMOTE_WRITE, 1);
	s = st_sge(st.pd, buf, 32);
	r = st_sge(st.pd, buf + 32, 32);
	st_pattern(buf, 32, 3);
	st_post_recv(test, lb.b, 2, &r, 1);
	st_post_send(test, lb.a, 3, IB_WR_SEND_WITH_INV, 0, &s, 1,
		     m->mr->rkey);
	st_wc(test, lb.a->scq, 3, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	st_wc(test, lb.b->rcq, 2, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 32);
	KUNIT_EXPECT_TRUE(test, wc.wc_flags & IB_WC_WITH_INVALIDATE);
	KUNIT_EXPECT_EQ(test, wc.ex.invalidate_rkey, m->mr->rkey);
	KUNIT_EXPECT_TRUE(test, !memcmp(buf, buf + 32, 32));
	KUNIT_EXPECT_EQ(test, st_mr_check(st.pd, m->mr->rkey, m->mr->iova, 1,
					  IB_ACCESS_REMOTE_WRITE),
			RSW_MR_ERR_STATE);

	/* Now a Write to it: B refuses, Terminates, both end in ERROR. */
	st_post_rdma(test, lb.a, 4, IB_WR_RDMA_WRITE, 0, &s, 1, m->mr->iova,
		     m->mr->rkey, 0);
	KUNIT_EXPECT_TRUE_MSG(test, st_wait_closed(lb.b), "B not closed");
	KUNIT_EXPECT_TRUE_MSG(test, st_wait_closed(lb.a), "A not closed");
	KUNIT_EXPECT_TRUE(test, st_all(st_mr_ptr(m, 0), m->len, ST_FILL));
	st_mr_guards(test, m);
	sb = st_stats(test, lb.b);
	sa = st_stats(test, lb.a);
	KUNIT_EXPECT_EQ(test, sb.term_sent, 1);
	KUNIT_EXPECT_EQ(test, sb.term.layer, RSW_TERM_LAYER_DDP);
	KUNIT_EXPECT_EQ(test, sb.term.etype, RSW_DDP_ET_TAGGED);
	KUNIT_EXPECT_EQ(test, sb.term.ecode, RSW_DDP_EC_T_INVALID_STAG);
	KUNIT_EXPECT_EQ(test, sa.term_rcvd, 1);
	KUNIT_EXPECT_EQ(test, sa.term.layer, RSW_TERM_LAYER_DDP);
	KUNIT_EXPECT_EQ(test, sa.term.etype, RSW_DDP_ET_TAGGED);
	KUNIT_EXPECT_EQ(test, sa.term.ecode, RSW_DDP_EC_T_INVALID_STAG);
	KUNIT_EXPECT_EQ(test, st_state(test, lb.a), IB_QPS_ERR);
	KUNIT_EXPECT_EQ(test, st_state(test, lb.b), IB_QPS_ERR);
	KUNIT_EXPECT_TRUE(test, test_bit(IB_EVENT_QP_ACCESS_ERR,
					 &lb.a->events) ||
			  test_bit(IB_EVENT_QP_FATAL, &lb.a->events));
	KUNIT_EXPECT_TRUE(test, test_bit(IB_EVENT_QP_ACCESS_ERR,
					 &lb.b->events) ||
			  test_bit(IB_EVENT_QP_FATAL, &lb.b->events));
	KUNIT_EXPECT_NE(test, lb.a->closed_status, 0);
	KUNIT_EXPECT_NE(test, lb.b->closed_status, 0);
	/* The Write itself: sent (success) or flushed, but completed. */
	KUNIT_EXPECT_TRUE(test, st_poll(lb.a->scq, &wc, ST_WAIT_MS));
	KUNIT_EXPECT_EQ(test, wc.wr_id, 4);
	KUNIT_EXPECT_EQ(test, atomic_read(&lb.a->closed_calls), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&lb.b->closed_calls), 1);
}

/* IB_WR_LOCAL_INV on B's MR: the MR is invalid, the stream goes on. */
static void st_lb_local_inv(struct kunit *test)
{
	struct st_lb lb = st_lb_up(test, RSW_MPA_RTR_READ, true, false);
	struct st_mr *m = st_mr_new(test, st.pd, 8192);

	st_mr_reg_post(test, lb.b, m, IB_ACCESS_LOCAL_WRITE |
		       IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ, 1);
	KUNIT_EXPECT_EQ(test, st_mr_check(st.pd, m->mr->rkey, m->mr->iova,
					  8192, IB_ACCESS_REMOTE_WRITE),
			RSW_MR_OK);
	st_post_send(test, lb.b, 2, IB_WR_LOCAL_INV, 0, NULL, 0, m->mr->rkey);
	st_wc(test, lb.b->scq, 2, IB_WC_SUCCESS, IB_WC_LOCAL_INV, NULL);
	KUNIT_EXPECT_EQ(test, st_mr_check(st.pd, m->mr->rkey, m->mr->iova, 1,
					  IB_ACCESS_REMOTE_WRITE),
			RSW_MR_ERR_STATE);
	KUNIT_EXPECT_EQ(test, st_mr_check(st.pd, m->mr->rkey, m->mr->iova, 1,
					  IB_ACCESS_REMOTE_READ),
			RSW_MR_ERR_STATE);
	st_send_check(test, lb.a, lb.b, 99, 1, 1, 0, 900);
	st_send_check(test, lb.b, lb.a, 99, 1, 1, 0, 1000);
	st_lb_down(test, &lb);
}

/* IB_WR_RDMA_READ_WITH_INV: data arrives, then the sink is invalid. */
static void st_lb_read_inv(struct kunit *test)
{
	struct st_lb lb = st_lb_up(test, RSW_MPA_RTR_WRITE, true, false);
	const u32 len = 100 * 1024;
	struct st_mr *src = st_mr_new(test, st.pd, len);
	struct st_mr *sink = st_mr_new(test, st.pd, len);

	st_mr_reg_post(test, lb.b, src, IB_ACCESS_REMOTE_READ, 1);
	st_mr_reg_post(test, lb.a, sink, ST_SINK_ACCESS, 2);
	st_pattern(st_mr_ptr(src, 0), len, 21);
	st_read(test, &lb, src, 0, sink, 0, len, 3, IB_WR_RDMA_READ_WITH_INV,
		0);
	st_read_expect(test, &lb, 3, len);
	KUNIT_EXPECT_TRUE(test, !memcmp(st_mr_ptr(sink, 0), st_mr_ptr(src, 0),
					len));
	st_mr_guards(test, sink);
	KUNIT_EXPECT_EQ(test, st_mr_check(st.pd, sink->mr->rkey,
					  sink->mr->iova, 1,
					  IB_ACCESS_LOCAL_WRITE),
			RSW_MR_ERR_STATE);
	/* The source was not invalidated. */
	KUNIT_EXPECT_EQ(test, st_mr_check(st.pd, src->mr->rkey, src->mr->iova,
					  len, IB_ACCESS_REMOTE_READ),
			RSW_MR_OK);
	st_lb_down(test, &lb);
}

/*
 * A TX piece of @m that some stream has collected and not yet handed to
 * TCP (what rsw_tx_collect() holds between its walk and sendmsg()), taken
 * by hand; released by st_tx_unhold() or, whatever happens, before @m is
 * deregistered (a held count would make dereg_mr wait for ever).
 */
struct st_tx_hold {
	struct rsw_mr *mr;
	struct page *page;
	enum rsw_mr_hold hold;
	bool held;
};

static void st_tx_unhold(void *arg)
{
	struct st_tx_hold *h = arg;

	if (h->held)
		rsw_mr_unhold(h->mr, h->page, h->hold);
	h->held = false;
}

static struct st_tx_hold *st_tx_hold(struct kunit *test, struct st_mr *m)
{
	struct st_tx_hold *h = kunit_kzalloc(test, sizeof(*h), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, h);
	h->mr = to_rsw_mr(m->mr);
	h->page = vmalloc_to_page(st_mr_ptr(m, 0));
	read_lock_bh(&h->mr->lock);
	h->hold = rsw_mr_hold(h->mr, h->page);
	read_unlock_bh(&h->mr->lock);
	h->held = true;
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, st_tx_unhold, h),
			0);
	KUNIT_ASSERT_EQ(test, h->hold, RSW_MR_HOLD_BUSY);
	return h;
}

static bool st_mr_revoked(struct st_mr *m)
{
	return st_mr_check(st.pd, m->mr->rkey, m->mr->iova, 1,
			   IB_ACCESS_LOCAL_WRITE) == RSW_MR_ERR_STATE;
}

/*
 * Review of issue 10 (H1): a peer's Send with Invalidate of an MR whose
 * pages another stream is still handing to TCP.  Access is revoked at
 * once; the receive, which tells the consumer it may reuse the memory,
 * completes only once that send is done, and a later Send after it.
 */
static void st_lb_send_inv_waits_tx(struct kunit *test)
{
	struct st_lb lb = st_lb_up(test, RSW_MPA_RTR_WRITE, true, false);
	struct st_mr *m = st_mr_new(test, st.pd, 4096);
	u8 *buf = kunit_kzalloc(test, 96, GFP_KERNEL);
	struct st_tx_hold *h;
	struct ib_sge s, r1, r2;
	unsigned int ms;
	struct ib_wc wc;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	st_mr_reg_post(test, lb.b, m, IB_ACCESS_LOCAL_WRITE |
		       IB_ACCESS_REMOTE_WRITE, 1);
	h = st_tx_hold(test, m);
	s = st_sge(st.pd, buf, 32);
	r1 = st_sge(st.pd, buf + 32, 32);
	r2 = st_sge(st.pd, buf + 64, 32);
	st_pattern(buf, 32, 5);
	st_post_recv(test, lb.b, 2, &r1, 1);
	st_post_recv(test, lb.b, 3, &r2, 1);
	st_post_send(test, lb.a, 4, IB_WR_SEND_WITH_INV, 0, &s, 1,
		     m->mr->rkey);
	st_post_send(test, lb.a, 5, IB_WR_SEND, 0, &s, 1, 0);
	st_wc(test, lb.a->scq, 4, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	st_wc(test, lb.a->scq, 5, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	for (ms = 0; !st_mr_revoked(m) && ms < ST_WAIT_MS; ms += 10)
		msleep(10);
	KUNIT_EXPECT_TRUE_MSG(test, st_mr_revoked(m),
			      "the Send with Invalidate did not revoke the MR");
	/* Pages still being sent: nothing may say the memory is free. */
	st_cq_empty(test, lb.b->rcq, "B recv CQ while the MR is still sent from");
	st_tx_unhold(h);
	st_wc(test, lb.b->rcq, 2, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_TRUE(test, wc.wc_flags & IB_WC_WITH_INVALIDATE);
	KUNIT_EXPECT_EQ(test, wc.ex.invalidate_rkey, m->mr->rkey);
	st_wc(test, lb.b->rcq, 3, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_FALSE(test, wc.wc_flags & IB_WC_WITH_INVALIDATE);
	KUNIT_EXPECT_TRUE(test, !memcmp(buf, buf + 32, 32));
	KUNIT_EXPECT_TRUE(test, !memcmp(buf, buf + 64, 32));
	st_lb_down(test, &lb);
}

/* The same for the sink of a Read with Invalidate, completed by RX. */
static void st_lb_read_inv_waits_tx(struct kunit *test)
{
	struct st_lb lb = st_lb_up(test, RSW_MPA_RTR_WRITE, true, false);
	const u32 len = 8192;
	struct st_mr *src = st_mr_new(test, st.pd, len);
	struct st_mr *sink = st_mr_new(test, st.pd, len);
	struct st_tx_hold *h;
	unsigned int ms;

	st_mr_reg_post(test, lb.b, src, IB_ACCESS_REMOTE_READ, 1);
	st_mr_reg_post(test, lb.a, sink, ST_SINK_ACCESS, 2);
	st_pattern(st_mr_ptr(src, 0), len, 23);
	h = st_tx_hold(test, sink);
	st_read(test, &lb, src, 0, sink, 0, len, 3, IB_WR_RDMA_READ_WITH_INV,
		0);
	for (ms = 0; !st_mr_revoked(sink) && ms < ST_WAIT_MS; ms += 10)
		msleep(10);
	KUNIT_EXPECT_TRUE_MSG(test, st_mr_revoked(sink),
			      "the Read with Invalidate did not revoke its sink");
	st_cq_empty(test, lb.a->scq, "A send CQ while the sink is still sent from");
	st_tx_unhold(h);
	st_read_expect(test, &lb, 3, len);
	KUNIT_EXPECT_TRUE(test, !memcmp(st_mr_ptr(sink, 0), st_mr_ptr(src, 0),
					len));
	st_lb_down(test, &lb);
}

/*
 * A Send from B while B's Read Response of many segments to A is going
 * out: both arrive whole at A.
 */
static void st_lb_send_in_read_resp(struct kunit *test)
{
	struct st_lb lb = st_lb_up(test, RSW_MPA_RTR_WRITE, true, false);
	const u32 len = 768 * 1024, slen = 200 * 1024 + 1;
	struct st_mr *src = st_mr_new(test, st.pd, len);
	struct st_mr *sink = st_mr_new(test, st.pd, len);
	struct st_lbuf sb = st_lbuf_new(test, slen);
	struct st_lbuf rb = st_lbuf_new(test, slen + 2 * ST_GUARD_LEN);
	struct ib_sge s, r;
	struct ib_wc wc;

	st_mr_reg_post(test, lb.b, src, IB_ACCESS_REMOTE_READ, 1);
	st_mr_reg_post(test, lb.a, sink, ST_SINK_ACCESS, 2);
	st_pattern(st_mr_ptr(src, 0), len, 31);
	st_pattern(sb.base, slen, 32);
	s = st_sge(st.pd, sb.base, slen);
	r = st_sge(st.pd, rb.base + ST_GUARD_LEN, slen);
	st_post_recv(test, lb.a, 3, &r, 1);
	st_read(test, &lb, src, 0, sink, 0, len, 4, IB_WR_RDMA_READ, 0);
	/* B's Send as soon as B has seen the Read Request. */
	{
		unsigned long end = jiffies + msecs_to_jiffies(ST_WAIT_MS);

		while (st_stats(test, lb.b).rx_fpdus < 2 &&
		       time_before(jiffies, end))
			usleep_range(100, 500);
	}
	st_post_send(test, lb.b, 5, IB_WR_SEND, 0, &s, 1, 0);
	st_wc(test, lb.b->scq, 5, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	st_wc(test, lb.a->rcq, 3, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, slen);
	st_read_expect(test, &lb, 4, len);
	KUNIT_EXPECT_TRUE(test, !memcmp(rb.base + ST_GUARD_LEN, sb.base, slen));
	KUNIT_EXPECT_TRUE(test, st_all(rb.base, ST_GUARD_LEN, ST_GUARD));
	KUNIT_EXPECT_TRUE(test, st_all(rb.base + ST_GUARD_LEN + slen,
				       ST_GUARD_LEN, ST_GUARD));
	KUNIT_EXPECT_TRUE(test, !memcmp(st_mr_ptr(sink, 0), st_mr_ptr(src, 0),
					len));
	st_mr_guards(test, sink);
	st_lb_down(test, &lb);
}

/*
 * IB_SEND_FENCE after a Read: the fenced Send carries the Read's sink as
 * its data, so it must see what the Read brought, not what was there.
 */
static void st_lb_fence(struct kunit *test)
{
	struct st_lb lb = st_lb_up(test, RSW_MPA_RTR_READ, true, false);
	const u32 len = 256 * 1024;
	struct st_mr *src = st_mr_new(test, st.pd, len);
	struct st_mr *sink = st_mr_new(test, st.pd, len);
	struct st_lbuf rb = st_lbuf_new(test, len);
	struct ib_sge s, r;
	struct ib_wc wc;

	st_mr_reg_post(test, lb.b, src, IB_ACCESS_REMOTE_READ, 1);
	st_mr_reg_post(test, lb.a, sink, ST_SINK_ACCESS, 2);
	st_pattern(st_mr_ptr(src, 0), len, 41);
	r = st_sge(st.pd, rb.base, len);
	st_post_recv(test, lb.b, 3, &r, 1);
	st_read(test, &lb, src, 0, sink, 0, len, 4, IB_WR_RDMA_READ, 0);
	s = (struct ib_sge) {
		.addr = sink->mr->iova, .length = len, .lkey = sink->mr->lkey,
	};
	st_post_send(test, lb.a, 5, IB_WR_SEND, IB_SEND_FENCE, &s, 1, 0);
	st_read_expect(test, &lb, 4, len);
	st_wc(test, lb.a->scq, 5, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	st_wc(test, lb.b->rcq, 3, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, len);
	KUNIT_EXPECT_TRUE_MSG(test, !memcmp(rb.base, st_mr_ptr(src, 0), len),
			      "the fenced Send did not carry the Read's data");
	st_lb_down(test, &lb);
}

/* Abortive close: A to ERROR; A flushes and closes, B sees its end. */
static void st_lb_close_abort(struct kunit *test)
{
	struct st_lb lb = st_lb_up(test, RSW_MPA_RTR_WRITE, true, false);
	struct st_lbuf b = st_lbuf_new(test, 4096);
	struct ib_sge r[3], s;
	int i;

	st_send_check(test, lb.a, lb.b, 10, 1, 1, 0, 1100);
	for (i = 0; i < 3; i++) {
		r[i] = st_sge(st.pd, b.base + i * 256, 128);
		st_post_recv(test, lb.a, 10 + i, &r[i], 1);
	}
	r[0] = st_sge(st.pd, b.base + 1024, 128);
	st_post_recv(test, lb.b, 20, &r[0], 1);
	st_post_recv(test, lb.b, 21, &r[0], 1);

	KUNIT_ASSERT_EQ(test, st_modify(lb.a, IB_QPS_ERR), 0);
	KUNIT_EXPECT_TRUE_MSG(test, st_wait_closed(lb.a), "A not closed");
	KUNIT_EXPECT_NE(test, lb.a->closed_status, 0);
	KUNIT_EXPECT_EQ(test, st_state(test, lb.a), IB_QPS_ERR);
	for (i = 0; i < 3; i++)
		st_wc(test, lb.a->rcq, 10 + i, IB_WC_WR_FLUSH_ERR, -1, NULL);
	/* Posted after the end: flushed too. */
	s = st_sge(st.pd, b.base + 2048, 16);
	st_post_send(test, lb.a, 13, IB_WR_SEND, 0, &s, 1, 0);
	st_wc(test, lb.a->scq, 13, IB_WC_WR_FLUSH_ERR, -1, NULL);

	/* B: the reset ends its stream; the QP is in ERROR and flushed. */
	KUNIT_EXPECT_TRUE_MSG(test, st_wait_closed(lb.b), "B not closed");
	KUNIT_EXPECT_NE(test, lb.b->closed_status, 0);
	KUNIT_EXPECT_EQ(test, st_state(test, lb.b), IB_QPS_ERR);
	st_wc(test, lb.b->rcq, 20, IB_WC_WR_FLUSH_ERR, -1, NULL);
	st_wc(test, lb.b->rcq, 21, IB_WC_WR_FLUSH_ERR, -1, NULL);
	st_cq_empty(test, lb.a->rcq, "A recv CQ");
	KUNIT_EXPECT_EQ(test, atomic_read(&lb.a->closed_calls), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&lb.b->closed_calls), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&lb.a->disconnects), 0);
	KUNIT_EXPECT_TRUE(test, st_all(b.base + 3 * 256, 4096 - 3 * 256,
				       ST_GUARD));
}

/*
 * Orderly close: A moves to SQD after a Send; the Send arrives, B hears a
 * disconnect, and both streams end with status 0.
 */
static void st_lb_close_orderly(struct kunit *test)
{
	struct st_lb lb = st_lb_up(test, RSW_MPA_RTR_WRITE, true, false);
	struct st_lbuf b = st_lbuf_new(test, 1024);
	struct ib_sge s, r, ra;
	struct ib_wc wc;

	st_send_check(test, lb.b, lb.a, 10, 1, 1, 0, 1200);
	st_pattern(b.base, 100, 5);
	s = st_sge(st.pd, b.base, 100);
	r = st_sge(st.pd, b.base + 256, 100);
	ra = st_sge(st.pd, b.base + 512, 100);
	st_post_recv(test, lb.b, 1, &r, 1);
	st_post_recv(test, lb.a, 2, &ra, 1);
	st_post_send(test, lb.a, 3, IB_WR_SEND, 0, &s, 1, 0);
	KUNIT_ASSERT_EQ(test, st_modify(lb.a, IB_QPS_SQD), 0);

	st_wc(test, lb.a->scq, 3, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	st_wc(test, lb.b->rcq, 1, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 100);
	KUNIT_EXPECT_TRUE(test, !memcmp(b.base + 256, b.base, 100));
	KUNIT_EXPECT_TRUE_MSG(test, st_wait_closed(lb.b), "B not closed");
	KUNIT_EXPECT_TRUE_MSG(test, st_wait_closed(lb.a), "A not closed");
	KUNIT_EXPECT_EQ(test, atomic_read(&lb.b->disconnects), 1);
	KUNIT_EXPECT_EQ(test, lb.b->closed_status, 0);
	KUNIT_EXPECT_EQ(test, lb.a->closed_status, 0);
	KUNIT_EXPECT_EQ(test, st_state(test, lb.a), IB_QPS_ERR);
	KUNIT_EXPECT_EQ(test, st_state(test, lb.b), IB_QPS_ERR);
	/* A's receive had nothing to receive: flushed. */
	st_wc(test, lb.a->rcq, 2, IB_WC_WR_FLUSH_ERR, -1, NULL);
	KUNIT_EXPECT_EQ(test, st_stats(test, lb.a).term_sent, 0);
	KUNIT_EXPECT_EQ(test, st_stats(test, lb.b).term_sent, 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&lb.a->closed_calls), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&lb.b->closed_calls), 1);
}

/* ib_drain_qp() on a connected QP (CQs polled directly by ib_core). */
struct st_drain_wr {
	struct ib_cqe cqe;
	enum ib_wc_status status;
	int calls;
};

static void st_drain_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct st_drain_wr *d = container_of(wc->wr_cqe, struct st_drain_wr,
					     cqe);

	d->status = wc->status;
	d->calls++;
}

static void st_lb_drain(struct kunit *test)
{
	struct st_lb lb = st_lb_up(test, RSW_MPA_RTR_WRITE, true, true);
	struct st_drain_wr *d = kunit_kzalloc(test, sizeof(*d), GFP_KERNEL);
	u8 *buf = kunit_kzalloc(test, 64, GFP_KERNEL);
	struct ib_sge r;
	struct ib_recv_wr wr = {};

	KUNIT_ASSERT_NOT_NULL(test, d);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	d->cqe.done = st_drain_done;
	r = st_sge(st.pd, buf, 64);
	wr.wr_cqe = &d->cqe;
	wr.sg_list = &r;
	wr.num_sge = 1;
	KUNIT_ASSERT_EQ(test, ib_post_recv(lb.a->qp, &wr, NULL), 0);
	/* Let the RTR exchange happen first. */
	msleep(ST_QUIET_MS);

	ib_drain_qp(lb.a->qp);
	KUNIT_EXPECT_EQ(test, d->calls, 1);
	KUNIT_EXPECT_EQ(test, d->status, IB_WC_WR_FLUSH_ERR);
	KUNIT_EXPECT_EQ(test, st_state(test, lb.a), IB_QPS_ERR);
	KUNIT_EXPECT_TRUE_MSG(test, st_wait_closed(lb.a), "A not closed");
	KUNIT_EXPECT_TRUE_MSG(test, st_wait_end(lb.b), "B saw no end");
	ib_drain_qp(lb.b->qp);
	KUNIT_EXPECT_TRUE_MSG(test, st_wait_closed(lb.b), "B not closed");
	KUNIT_EXPECT_EQ(test, st_state(test, lb.b), IB_QPS_ERR);
	KUNIT_EXPECT_EQ(test, atomic_read(&lb.a->closed_calls), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&lb.b->closed_calls), 1);
}

/*
 * A doorbell's TX in the poster's context (rsw_stream_tx_direct()) racing
 * the stream's end.  Kthreads post Writes and Sends on A's kernel QP and
 * ring after each post, holding a QP reference across the call as
 * rsw_user_doorbell() does (a kernel QP has no doorbell linger; the rest
 * is the same path).  A's work is held at its start (st_db_hold), so the
 * posters alone send; the case moves A to ERROR, the posters run on into
 * the QP in ERROR, then the work is let go and ends the stream under
 * them, and they ring on across the end.  The end must wait for the
 * posters (posters counts them) before it releases the socket: a poster
 * still inside would use a released socket (KASAN, or a NULL s->sock).
 * Afterwards no poster is counted, every kthread came back, and every WQE
 * completed, sent or flushed.  Every wait is bounded.
 */
#define ST_DB_THREADS	2
#define ST_DB_INFLIGHT	16	/* posted, not yet completed */
#define ST_DB_SENDS	32	/* B's receives: one Send in four, up to this */
#define ST_DB_LEN	64	/* each Write and Send */
#define ST_DB_BEFORE	64	/* WQEs the posters send before the end */

struct st_db {
	struct st_end *e;		/* A */
	struct rsw_stream *s;
	struct st_mr *m;		/* B's, the Writes' target */
	struct st_lbuf src;
	atomic_t ticket, posted, ok, flushed, bad, rings, running;
	bool stop;
	struct completion gone;		/* the last kthread returned */
};

/* The work held (st_db_hold): A's, until st_db_release(). */
static struct {
	struct work_struct *work;
	struct completion in, go;
} st_db_ctl;

static void st_db_hold(bool linger)
{
	if (!linger && current_work() == READ_ONCE(st_db_ctl.work)) {
		complete(&st_db_ctl.in);
		wait_for_completion(&st_db_ctl.go);
	}
}

/* A's work came and is held (bounded wait). */
static bool st_db_held(void)
{
	return wait_for_completion_timeout(&st_db_ctl.in,
					   msecs_to_jiffies(ST_WAIT_MS)) > 0;
}

static void st_db_release(void)
{
	WRITE_ONCE(st_db_ctl.work, NULL);
	complete_all(&st_db_ctl.go);
}

static void st_db_poll(struct st_db *d)
{
	struct ib_wc wc[8];
	int i, n;

	n = ib_poll_cq(d->e->scq, ARRAY_SIZE(wc), wc);
	for (i = 0; i < n; i++)
		atomic_inc(wc[i].status == IB_WC_SUCCESS ? &d->ok :
			   wc[i].status == IB_WC_WR_FLUSH_ERR ? &d->flushed :
			   &d->bad);
}

/* Completions polled so far, whatever their status. */
static int st_db_done(struct st_db *d)
{
	return atomic_read(&d->ok) + atomic_read(&d->flushed) +
	       atomic_read(&d->bad);
}

/* Post the next Write or Send unless ST_DB_INFLIGHT are outstanding. */
static void st_db_post(struct st_db *d)
{
	struct ib_sge sge = st_sge(d->e->qp->pd, d->src.base, ST_DB_LEN);
	struct ib_rdma_wr wr = {
		.wr = {
			.opcode = IB_WR_RDMA_WRITE, .sg_list = &sge,
			.num_sge = 1, .send_flags = IB_SEND_SIGNALED,
		},
		.rkey = d->m->mr->rkey,
	};
	int n;

	if (atomic_read(&d->posted) - st_db_done(d) >= ST_DB_INFLIGHT)
		return;
	n = atomic_inc_return(&d->ticket);
	wr.wr.wr_id = n;
	wr.remote_addr = d->m->mr->iova + (n % 32) * ST_DB_LEN;
	if (n % 4 == 0 && n / 4 < ST_DB_SENDS)
		wr.wr.opcode = IB_WR_SEND;
	if (!ib_post_send(d->e->qp, &wr.wr, NULL))
		atomic_inc(&d->posted);
}

static int st_db_thread(void *arg)
{
	struct st_db *d = arg;
	struct rsw_qp *qp = to_rsw_qp(d->e->qp);

	while (!READ_ONCE(d->stop)) {
		st_db_post(d);
		rsw_qp_get(qp);		/* as rsw_user_doorbell() */
		rsw_stream_tx_direct(d->s);
		rsw_qp_put(qp);
		atomic_inc(&d->rings);
		st_db_poll(d);
		cond_resched();
	}
	if (atomic_dec_and_test(&d->running))
		complete_all(&d->gone);
	return 0;
}

/* Stop the kthreads; false if they did not come back in time. */
static bool st_db_stop(struct st_db *d)
{
	WRITE_ONCE(d->stop, true);
	return wait_for_completion_timeout(&d->gone,
					   msecs_to_jiffies(ST_WAIT_MS)) > 0;
}

/* Before the QPs' destroy: kthreads stopped, A's work let go, unhooked. */
static void st_db_down(void *d)
{
	st_db_stop(d);
	st_db_release();
	rsw_stream_kunit_set_stall(NULL);
}

/* B's MR and receives for A's traffic; A's work held; the kthreads. */
static struct st_db *st_db_up(struct kunit *test, struct st_lb *lb)
{
	struct st_db *d = kunit_kzalloc(test, sizeof(*d), GFP_KERNEL);
	struct st_lbuf rb = st_lbuf_new(test, ST_DB_SENDS * ST_DB_LEN);
	struct task_struct *t;
	struct ib_sge r;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, d);
	d->e = lb->a;
	d->s = to_rsw_qp(lb->a->qp)->stream;
	d->m = st_mr_new(test, st.pd, 32 * ST_DB_LEN);
	d->src = st_lbuf_new(test, ST_DB_LEN);
	st_mr_reg_post(test, lb->b, d->m, ST_SINK_ACCESS, 1);
	for (i = 0; i < ST_DB_SENDS; i++) {
		r = st_sge(st.pd, rb.base + i * ST_DB_LEN, ST_DB_LEN);
		st_post_recv(test, lb->b, 100 + i, &r, 1);
	}
	init_completion(&d->gone);
	atomic_set(&d->running, ST_DB_THREADS);
	init_completion(&st_db_ctl.in);
	init_completion(&st_db_ctl.go);
	WRITE_ONCE(st_db_ctl.work, &d->s->work);
	rsw_stream_kunit_set_stall(st_db_hold);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, st_db_down, d),
			0);
	for (i = 0; i < ST_DB_THREADS; i++) {
		t = kthread_run(st_db_thread, d, "st_db%d", i);
		if (IS_ERR(t) && atomic_dec_and_test(&d->running))
			complete_all(&d->gone);
		KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	}
	return d;
}

/* Wait (bounded) until @v reaches @n. */
static bool st_db_wait(atomic_t *v, int n)
{
	unsigned long end = jiffies + msecs_to_jiffies(ST_WAIT_MS);

	while (atomic_read(v) < n) {
		if (time_after(jiffies, end))
			return false;
		msleep(1);
	}
	return true;
}

/* Every WQE the posters posted completed (sent, or flushed), nothing else. */
static void st_db_drained(struct kunit *test, struct st_db *d)
{
	unsigned long end = jiffies + msecs_to_jiffies(ST_WAIT_MS);
	int done;

	for (;;) {
		st_db_poll(d);
		done = st_db_done(d);
		if (done >= atomic_read(&d->posted) || time_after(jiffies, end))
			break;
		msleep(1);
	}
	KUNIT_EXPECT_EQ_MSG(test, done, atomic_read(&d->posted),
			    "%d sent, %d flushed", atomic_read(&d->ok),
			    atomic_read(&d->flushed));
	KUNIT_EXPECT_EQ(test, atomic_read(&d->bad), 0);
	st_cq_empty(test, d->e->scq, "A send CQ");
}

static void st_lb_direct_end(struct kunit *test)
{
	struct st_lb lb = st_lb_up(test, RSW_MPA_RTR_WRITE, true, false);
	struct st_db *d = st_db_up(test, &lb);
	unsigned long end = jiffies + msecs_to_jiffies(ST_WAIT_MS);
	int ok;

	/* A post kicks the work, which is held: the posters send alone. */
	KUNIT_ASSERT_TRUE_MSG(test, st_db_held(), "no work ran");
	ok = atomic_read(&d->ok);
	KUNIT_ASSERT_TRUE_MSG(test, st_db_wait(&d->ok, ok + ST_DB_BEFORE),
			      "the posters sent %d of %d WQEs",
			      atomic_read(&d->ok) - ok, ST_DB_BEFORE);
	KUNIT_ASSERT_EQ(test, st_modify(lb.a, IB_QPS_ERR), 0);
	msleep(20);		/* the posters meet the QP in ERROR, in RUN */
	/* One more poster: counted, not yet at its look at the phase. */
	atomic_inc(&d->s->posters);
	st_db_release();
	/* The end marks DONE, then waits for that poster, socket kept. */
	while (READ_ONCE(d->s->phase) != RSW_STREAM_DONE &&
	       time_before(jiffies, end))
		msleep(1);
	KUNIT_EXPECT_EQ(test, READ_ONCE(d->s->phase), RSW_STREAM_DONE);
	msleep(ST_QUIET_MS / 4);
	KUNIT_EXPECT_FALSE_MSG(test, completion_done(&lb.a->closed),
			       "the end did not wait for a poster");
	KUNIT_EXPECT_NOT_NULL(test, READ_ONCE(d->s->sock));
	/* It leaves; the next ring that drops posters to 0 wakes the end. */
	atomic_dec(&d->s->posters);
	KUNIT_EXPECT_TRUE_MSG(test, st_wait_closed(lb.a), "A not closed");
	/* The posters ring on across the end: a DONE stream only kicks. */
	KUNIT_EXPECT_TRUE_MSG(test, st_db_wait(&d->rings,
					       atomic_read(&d->rings) + 100),
			      "the posters stopped ringing");
	KUNIT_ASSERT_TRUE_MSG(test, st_db_stop(d), "a poster hangs");
	KUNIT_EXPECT_EQ(test, atomic_read(&d->s->posters), 0);
	st_db_drained(test, d);
	KUNIT_EXPECT_EQ(test, st_state(test, lb.a), IB_QPS_ERR);
	KUNIT_EXPECT_EQ(test, atomic_read(&lb.a->closed_calls), 1);
	st_mr_guards(test, d->m);
	KUNIT_EXPECT_TRUE_MSG(test, st_wait_closed(lb.b), "B not closed");
}

/* ------------------------------------------------- RFC 7306 (loopback) */

/* B's atomic target: an MR with REMOTE_ATOMIC (and LOCAL_WRITE). */
#define ST_ATOMIC_ACCESS (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_ATOMIC)
#define ST_ATOMIC_AT	16	/* the target word's offset in the MR */

/* The operands of one ib_atomic_wr. */
struct st_aop {
	enum ib_wr_opcode op;
	u64 compare_add, swap, compare_add_mask, swap_mask;
};

/* Atomic @o from @e on @raddr/@rkey; the result goes to @result. */
static void st_post_atomic(struct kunit *test, struct st_end *e, u64 wr_id,
			   const struct st_aop *o, u64 *result, u64 raddr,
			   u32 rkey)
{
	struct ib_sge sge = st_sge(e->qp->pd, result, sizeof(u64));
	struct ib_atomic_wr wr = {
		.wr = {
			.wr_id = wr_id, .opcode = o->op, .sg_list = &sge,
			.num_sge = 1, .send_flags = IB_SEND_SIGNALED,
		},
		.remote_addr = raddr,
		.compare_add = o->compare_add,
		.swap = o->swap,
		.compare_add_mask = o->compare_add_mask,
		.swap_mask = o->swap_mask,
		.rkey = rkey,
	};

	KUNIT_ASSERT_EQ(test, ib_post_send(e->qp, &wr.wr, NULL), 0);
}

/* B's target MR of @len octets, registered with @access on B's QP. */
static struct st_mr *st_atomic_target(struct kunit *test, struct st_lb *lb,
				      u32 len, int access)
{
	struct st_mr *m = st_mr_new(test, st.pd, len);

	st_mr_reg_post(test, lb->b, m, access, 1);
	return m;
}

static u64 *st_word(struct st_mr *m, u32 off)
{
	return (u64 *)st_mr_ptr(m, off);
}

struct st_atomic_case {
	const char *name;
	struct st_aop aop;
	u64 init;		/* the target word before */
	u64 after;		/* and after */
	int wc_opcode;
};

static const struct st_atomic_case st_atomic_cases[] = {
	/* Unmasked: one 64-bit add, the carry crosses bit 32. */
	{ "fetch and add", { IB_WR_ATOMIC_FETCH_AND_ADD, 1 },
	  0x00000001ffffffffULL, 0x0000000200000000ULL, IB_WC_FETCH_ADD },
	{ "fetch and add wraps", { IB_WR_ATOMIC_FETCH_AND_ADD, 3 },
	  U64_MAX, 2, IB_WC_FETCH_ADD },
	{ "compare and swap, equal",
	  { IB_WR_ATOMIC_CMP_AND_SWP, 0x1122334455667788ULL,
	    0xcafef00d12345678ULL },
	  0x1122334455667788ULL, 0xcafef00d12345678ULL, IB_WC_COMP_SWAP },
	{ "compare and swap, different",
	  { IB_WR_ATOMIC_CMP_AND_SWP, 0x1122334455667789ULL,
	    0xcafef00d12345678ULL },
	  0x1122334455667788ULL, 0x1122334455667788ULL, IB_WC_COMP_SWAP },
	/* Two 32-bit fields: the low one wraps, its carry is dropped. */
	{ "masked fetch and add",
	  { IB_WR_MASKED_ATOMIC_FETCH_AND_ADD, 0x0000000500000001ULL, 0,
	    0x8000000080000000ULL },
	  0x00000001ffffffffULL, 0x0000000600000000ULL,
	  IB_WC_MASKED_FETCH_ADD },
	/* Only the low byte compared, only the high half swapped. */
	{ "masked compare and swap, equal",
	  { IB_WR_MASKED_ATOMIC_CMP_AND_SWP, 0x00000000000000ffULL,
	    0x5555555566666666ULL, 0xff, 0xffffffff00000000ULL },
	  0xaaaaaaaabbbbbbffULL, 0x55555555bbbbbbffULL,
	  IB_WC_MASKED_COMP_SWAP },
	{ "masked compare and swap, different",
	  { IB_WR_MASKED_ATOMIC_CMP_AND_SWP, 0xaaaaaaaabbbbbbfeULL,
	    0x5555555566666666ULL, 0xff, U64_MAX },
	  0xaaaaaaaabbbbbbffULL, 0xaaaaaaaabbbbbbffULL,
	  IB_WC_MASKED_COMP_SWAP },
};

KUNIT_ARRAY_PARAM_DESC(st_atomic, st_atomic_cases, name);

/*
 * One atomic from A on B's word: the original value comes back into an
 * 8-byte buffer between guards, the word holds the result, and nothing
 * else of the MR or the result buffer's neighbours changed.
 */
static void st_lb_atomic(struct kunit *test)
{
	const struct st_atomic_case *c = test->param_value;
	struct st_lb lb = st_lb_up(test, RSW_MPA_RTR_WRITE, true, false);
	struct st_mr *m = st_atomic_target(test, &lb, 64, ST_ATOMIC_ACCESS);
	struct st_lbuf rb = st_lbuf_new(test, 2 * ST_GUARD_LEN + 8);
	u64 *res = (u64 *)(rb.base + ST_GUARD_LEN);
	struct ib_wc wc;

	*st_word(m, ST_ATOMIC_AT) = c->init;
	st_post_atomic(test, lb.a, 2, &c->aop, res,
		       m->mr->iova + ST_ATOMIC_AT, m->mr->rkey);
	st_wc(test, lb.a->scq, 2, IB_WC_SUCCESS, c->wc_opcode, &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 8);
	KUNIT_EXPECT_EQ_MSG(test, *res, c->init, "original value returned");
	KUNIT_EXPECT_EQ_MSG(test, *st_word(m, ST_ATOMIC_AT), c->after,
			    "target word afterwards");
	KUNIT_EXPECT_TRUE(test, st_all(st_mr_ptr(m, 0), ST_ATOMIC_AT,
				       ST_FILL));
	KUNIT_EXPECT_TRUE(test, st_all(st_mr_ptr(m, ST_ATOMIC_AT + 8),
				       64 - ST_ATOMIC_AT - 8, ST_FILL));
	st_mr_guards(test, m);
	KUNIT_EXPECT_TRUE(test, st_all(rb.base, ST_GUARD_LEN, ST_GUARD));
	KUNIT_EXPECT_TRUE(test, st_all(rb.base + ST_GUARD_LEN + 8,
				       ST_GUARD_LEN, ST_GUARD));
	/* The responder's ULP sees nothing of it. */
	st_cq_empty(test, lb.b->rcq, "B recv CQ");
	st_cq_empty(test, lb.b->scq, "B send CQ");
	KUNIT_EXPECT_EQ(test, st_state(test, lb.a), IB_QPS_RTS);
	KUNIT_EXPECT_EQ(test, st_state(test, lb.b), IB_QPS_RTS);
	st_lb_down(test, &lb);
}

/*
 * Read, FetchAdd, Read on the same word, posted back to back: completed
 * in order, the first Read sees the word before the add, the second after
 * (RFC 7306 section 7: responses are generated in request order).
 */
static void st_lb_atomic_order(struct kunit *test)
{
	struct st_lb lb = st_lb_up(test, RSW_MPA_RTR_READ, true, false);
	struct st_mr *m = st_atomic_target(test, &lb, 64, ST_ATOMIC_ACCESS |
					   IB_ACCESS_REMOTE_READ);
	struct st_mr *sink = st_mr_new(test, st.pd, 128);
	const struct st_aop add = { IB_WR_ATOMIC_FETCH_AND_ADD, 0x100 };
	struct st_lbuf rb = st_lbuf_new(test, 8);
	u64 *res = (u64 *)rb.base;
	struct ib_wc wc;

	st_mr_reg_post(test, lb.a, sink, ST_SINK_ACCESS, 2);
	st_pattern(st_mr_ptr(m, 0), 64, 5);
	*st_word(m, ST_ATOMIC_AT) = 0x4242;
	st_read(test, &lb, m, 0, sink, 0, 64, 3, IB_WR_RDMA_READ, 0);
	st_post_atomic(test, lb.a, 4, &add, res, m->mr->iova + ST_ATOMIC_AT,
		       m->mr->rkey);
	st_read(test, &lb, m, 0, sink, 64, 64, 5, IB_WR_RDMA_READ, 0);
	st_read_expect(test, &lb, 3, 64);
	st_wc(test, lb.a->scq, 4, IB_WC_SUCCESS, IB_WC_FETCH_ADD, &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 8);
	st_read_expect(test, &lb, 5, 64);
	KUNIT_EXPECT_EQ(test, *res, 0x4242);
	KUNIT_EXPECT_EQ(test, *(u64 *)st_mr_ptr(sink, ST_ATOMIC_AT), 0x4242);
	KUNIT_EXPECT_EQ(test, *(u64 *)st_mr_ptr(sink, 64 + ST_ATOMIC_AT),
			0x4342);
	/* The rest of both Reads is the MR as it was. */
	KUNIT_EXPECT_TRUE(test, !memcmp(st_mr_ptr(sink, 0), st_mr_ptr(m, 0),
					ST_ATOMIC_AT));
	KUNIT_EXPECT_TRUE(test, !memcmp(st_mr_ptr(sink, 64), st_mr_ptr(m, 0),
					ST_ATOMIC_AT));
	KUNIT_EXPECT_TRUE(test, !memcmp(st_mr_ptr(sink, 64 + ST_ATOMIC_AT),
					st_mr_ptr(m, ST_ATOMIC_AT), 64 -
					ST_ATOMIC_AT));
	st_mr_guards(test, sink);
	st_cq_empty(test, lb.a->scq, "A send CQ");
	st_lb_down(test, &lb);
}

/* Atomic WRs whose result is not one 8-byte SGE are refused at post. */
static void st_lb_atomic_bad_sge(struct kunit *test)
{
	struct st_lb lb = st_lb_up(test, RSW_MPA_RTR_WRITE, true, false);
	struct st_mr *m = st_atomic_target(test, &lb, 64, ST_ATOMIC_ACCESS);
	const struct st_aop add = { IB_WR_ATOMIC_FETCH_AND_ADD, 1 };
	u64 *res = kunit_kzalloc(test, 16, GFP_KERNEL);
	static const u32 lens[] = { 4, 16, 0 };
	const struct ib_send_wr *bad = NULL;
	struct ib_atomic_wr wr = {
		.wr = { .wr_id = 7, .opcode = IB_WR_ATOMIC_FETCH_AND_ADD,
			.send_flags = IB_SEND_SIGNALED },
		.remote_addr = m->mr->iova + ST_ATOMIC_AT,
		.rkey = m->mr->rkey, .compare_add = 1,
	};
	struct ib_sge sge[2];
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, res);
	*st_word(m, ST_ATOMIC_AT) = 10;
	wr.wr.sg_list = sge;
	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		sge[0] = st_sge(st.pd, res, lens[i]);
		wr.wr.num_sge = 1;
		KUNIT_EXPECT_EQ_MSG(test, ib_post_send(lb.a->qp, &wr.wr, &bad),
				    -EINVAL, "SGE of %u octets", lens[i]);
		KUNIT_EXPECT_PTR_EQ(test, bad, (const struct ib_send_wr *)&wr.wr);
	}
	/* Two SGEs of 4, and none at all. */
	sge[0] = st_sge(st.pd, res, 4);
	sge[1] = st_sge(st.pd, (u8 *)res + 4, 4);
	wr.wr.num_sge = 2;
	KUNIT_EXPECT_EQ(test, ib_post_send(lb.a->qp, &wr.wr, &bad), -EINVAL);
	wr.wr.num_sge = 0;
	KUNIT_EXPECT_EQ(test, ib_post_send(lb.a->qp, &wr.wr, &bad), -EINVAL);
	st_cq_empty(test, lb.a->scq, "A send CQ");
	KUNIT_EXPECT_EQ(test, *st_word(m, ST_ATOMIC_AT), 10);
	/* The QP is as it was: a good one goes through. */
	st_post_atomic(test, lb.a, 8, &add, res, m->mr->iova + ST_ATOMIC_AT,
		       m->mr->rkey);
	st_wc(test, lb.a->scq, 8, IB_WC_SUCCESS, IB_WC_FETCH_ADD, NULL);
	KUNIT_EXPECT_EQ(test, *res, 10);
	KUNIT_EXPECT_EQ(test, *st_word(m, ST_ATOMIC_AT), 11);
	st_lb_down(test, &lb);
}

/* ----- local and remote increments racing on one word (IB_ATOMIC_GLOB) */

#define ST_RACE_REMOTE	1000	/* FetchAdd(+1) WRs */
#define ST_RACE_WINDOW	16	/* of them outstanding */

struct st_race {
	atomic64_t *word;
	atomic64_t local;	/* increments the thread made */
	struct task_struct *task;
};

static int st_race_thread(void *arg)
{
	struct st_race *r = arg;
	u32 n = 0;

	while (!kthread_should_stop()) {
		atomic64_inc(r->word);
		atomic64_inc(&r->local);
		if (!(++n & 63))
			cond_resched();
	}
	return 0;
}

static void st_race_stop(void *arg)
{
	struct st_race *r = arg;

	if (!r->task)
		return;
	kthread_stop(r->task);
	r->task = NULL;
}

/* Post the FetchAdds, ST_RACE_WINDOW at a time; every one must succeed. */
static void st_race_remote(struct kunit *test, struct st_lb *lb,
			   struct st_mr *m, u64 *res)
{
	const struct st_aop add = { IB_WR_ATOMIC_FETCH_AND_ADD, 1 };
	u32 posted = 0, done = 0;
	struct ib_wc wc;

	while (done < ST_RACE_REMOTE) {
		while (posted < ST_RACE_REMOTE &&
		       posted - done < ST_RACE_WINDOW) {
			st_post_atomic(test, lb->a, posted, &add, &res[posted],
				       m->mr->iova + ST_ATOMIC_AT,
				       m->mr->rkey);
			posted++;
		}
		KUNIT_ASSERT_TRUE_MSG(test, st_poll(lb->a->scq, &wc,
						    ST_WAIT_MS),
				      "%u of %u FetchAdds done", done,
				      ST_RACE_REMOTE);
		KUNIT_ASSERT_EQ(test, wc.status, IB_WC_SUCCESS);
		KUNIT_ASSERT_EQ(test, wc.wr_id, (u64)done);
		done++;
	}
}

/*
 * A kthread increments B's word with CPU atomics while A's FetchAdd(+1)s
 * land on it: the final value is the exact sum, and the values A's
 * FetchAdds saw rise strictly in the order they were posted.
 */
static void st_lb_atomic_race(struct kunit *test)
{
	struct st_lb lb = st_lb_up(test, RSW_MPA_RTR_WRITE, true, false);
	struct st_mr *m = st_atomic_target(test, &lb, 64, ST_ATOMIC_ACCESS);
	u64 *res = (u64 *)st_vmalloc(test, ST_RACE_REMOTE * sizeof(u64));
	struct st_race *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	u64 start = 1000000, before, jumps = 0;
	u32 i, down = 0;

	KUNIT_ASSERT_NOT_NULL(test, r);
	*st_word(m, ST_ATOMIC_AT) = start;
	r->word = (atomic64_t *)st_word(m, ST_ATOMIC_AT);
	r->task = kthread_run(st_race_thread, r, "st_race");
	KUNIT_ASSERT_FALSE(test, IS_ERR(r->task));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, st_race_stop,
							r), 0);
	before = atomic64_read(&r->local);
	st_race_remote(test, &lb, m, res);
	KUNIT_EXPECT_GT_MSG(test, (u64)atomic64_read(&r->local), before,
			    "the local increments did not overlap");
	kunit_release_action(test, st_race_stop, r);
	KUNIT_EXPECT_EQ(test, (u64)atomic64_read(r->word),
			start + ST_RACE_REMOTE + atomic64_read(&r->local));
	for (i = 1; i < ST_RACE_REMOTE; i++) {
		if (res[i] <= res[i - 1] && !down++)
			KUNIT_FAIL(test, "result %u: %llu after %llu", i,
				   res[i], res[i - 1]);
		jumps += res[i] > res[i - 1] + 1;
	}
	KUNIT_EXPECT_EQ_MSG(test, down, 0U, "results that did not rise");
	KUNIT_EXPECT_GE(test, res[0], start);
	/* Some local increments fell between two remote ones. */
	KUNIT_EXPECT_GT_MSG(test, jumps, 0ULL, "%lld local increments",
			    atomic64_read(&r->local));
	st_lb_down(test, &lb);
}

/* Write with Immediate of @len from @src into @m at @at; imm @imm. */
static void st_post_write_imm(struct kunit *test, struct st_end *e,
			      u64 wr_id, int flags, u8 *src, u32 len,
			      struct st_mr *m, u32 at, __be32 imm)
{
	struct ib_sge sge = st_sge(e->qp->pd, src, len);
	struct ib_rdma_wr wr = {
		.wr = {
			.wr_id = wr_id, .opcode = IB_WR_RDMA_WRITE_WITH_IMM,
			.sg_list = len ? &sge : NULL, .num_sge = len ? 1 : 0,
			.send_flags = flags | IB_SEND_SIGNALED,
		},
		.remote_addr = m->mr->iova + at,
		.rkey = m->mr->rkey,
	};

	wr.wr.ex.imm_data = imm;
	KUNIT_ASSERT_EQ(test, ib_post_send(e->qp, &wr.wr, NULL), 0);
}

/*
 * One Write with Immediate from A into @m at @at: A completes a Write, B
 * a receive as RECV_RDMA_WITH_IMM with the immediate value and the
 * Write's length, after the data was placed; B's receive buffer (@rbuf,
 * between guards) is not written.
 */
static void st_write_imm_check(struct kunit *test, struct st_lb *lb,
			       struct st_mr *m, u32 at, u32 len, int flags,
			       __be32 imm, u64 id)
{
	u8 *src = st_vmalloc(test, len + 1);
	struct st_lbuf rb = st_lbuf_new(test, 2 * ST_GUARD_LEN + 32);
	struct ib_sge r = st_sge(st.pd, rb.base + ST_GUARD_LEN, 32);
	struct ib_wc wc;

	st_pattern(src, len, (u32)id);
	st_post_recv(test, lb->b, id + 1, &r, 1);
	st_post_write_imm(test, lb->a, id, flags, src, len, m, at, imm);
	st_wc(test, lb->a->scq, id, IB_WC_SUCCESS, IB_WC_RDMA_WRITE, NULL);
	st_wc(test, lb->b->rcq, id + 1, IB_WC_SUCCESS,
	      IB_WC_RECV_RDMA_WITH_IMM, &wc);
	KUNIT_EXPECT_TRUE(test, wc.wc_flags & IB_WC_WITH_IMM);
	KUNIT_EXPECT_FALSE(test, wc.wc_flags & IB_WC_WITH_INVALIDATE);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(wc.ex.imm_data), be32_to_cpu(imm));
	KUNIT_EXPECT_EQ(test, wc.byte_len, len);
	KUNIT_EXPECT_PTR_EQ(test, wc.qp, lb->b->qp);
	/* Placed by the time the receive completed. */
	KUNIT_EXPECT_TRUE(test, !memcmp(st_mr_ptr(m, at), src, len));
	KUNIT_EXPECT_TRUE(test, st_all(rb.base, rb.size, ST_GUARD));
}

/*
 * IB_WR_RDMA_WRITE_WITH_IMM: a multi-FPDU one, a zero-length one, and a
 * solicited one, which alone wakes a solicited-only CQ arm.
 */
static void st_lb_write_imm(struct kunit *test)
{
	struct st_lb lb = st_lb_up(test, RSW_MPA_RTR_READ, true, false);
	const u32 mr_len = 64 * 1024, at = 100, len = 40 * 1024 + 3;
	struct st_mr *m = st_mr_new(test, st.pd, mr_len);
	unsigned long end;

	st_mr_reg_post(test, lb.b, m, IB_ACCESS_LOCAL_WRITE |
		       IB_ACCESS_REMOTE_WRITE, 1);
	KUNIT_ASSERT_EQ(test, ib_req_notify_cq(lb.b->rcq, IB_CQ_SOLICITED), 0);
	st_write_imm_check(test, &lb, m, at, len, 0, cpu_to_be32(0x12345678),
			   10);
	KUNIT_EXPECT_TRUE(test, st_all(st_mr_ptr(m, 0), at, ST_FILL));
	KUNIT_EXPECT_TRUE(test, st_all(st_mr_ptr(m, at + len),
				       mr_len - at - len, ST_FILL));
	st_write_imm_check(test, &lb, m, 0, 0, 0, cpu_to_be32(0xfedcba98), 20);
	msleep(ST_QUIET_MS);
	KUNIT_EXPECT_EQ_MSG(test, atomic_read(&lb.b->rcq_notify), 0,
			    "an unsolicited Immediate Data woke the arm");
	st_write_imm_check(test, &lb, m, 8, 77, IB_SEND_SOLICITED,
			   cpu_to_be32(0x80000001), 30);
	end = jiffies + msecs_to_jiffies(ST_WAIT_MS);
	while (!atomic_read(&lb.b->rcq_notify) && time_before(jiffies, end))
		msleep(5);
	KUNIT_EXPECT_EQ(test, atomic_read(&lb.b->rcq_notify), 1);
	st_mr_guards(test, m);
	/* A plain Send afterwards is a plain receive again. */
	st_send_check(test, lb.a, lb.b, 40, 1, 1, 0, 40);
	st_lb_down(test, &lb);
}

/* IB_WR_SEND_WITH_IMM has no faithful mapping: refused at post. */
static void st_lb_send_imm_refused(struct kunit *test)
{
	struct st_lb lb = st_lb_up(test, RSW_MPA_RTR_WRITE, true, false);
	u8 *buf = kunit_kzalloc(test, 16, GFP_KERNEL);
	const struct ib_send_wr *bad = NULL;
	struct ib_sge sge;
	struct ib_send_wr wr = {
		.wr_id = 1, .opcode = IB_WR_SEND_WITH_IMM, .num_sge = 1,
		.send_flags = IB_SEND_SIGNALED,
	};

	KUNIT_ASSERT_NOT_NULL(test, buf);
	sge = st_sge(st.pd, buf, 16);
	wr.sg_list = &sge;
	wr.ex.imm_data = cpu_to_be32(7);
	KUNIT_EXPECT_EQ(test, ib_post_send(lb.a->qp, &wr, &bad), -EINVAL);
	KUNIT_EXPECT_PTR_EQ(test, bad, (const struct ib_send_wr *)&wr);
	st_cq_empty(test, lb.a->scq, "A send CQ");
	KUNIT_EXPECT_EQ(test, st_state(test, lb.a), IB_QPS_RTS);
	st_send_check(test, lb.a, lb.b, 16, 1, 1, 0, 2);
	st_lb_down(test, &lb);
}

/* ==========================================================================
 * Part B: a hostile peer on a raw socket.
 */
#define ST_HX_MR_LEN	2048
#define ST_HX_RQ_LEN	256
#define ST_HX_RQ_NUM	2
#define ST_HX_FRAME_MAX	1024
#define ST_HX_IRD	16
#define ST_HX_ORD	16

struct st_hx {
	struct st_end *e;
	struct socket *raw;
	struct st_mr *mr;	/* REMOTE_WRITE | REMOTE_READ, this PD */
	struct st_mr *other;	/* REMOTE_WRITE, the other PD */
	struct st_mr *local;	/* LOCAL_WRITE only, this PD */
	struct st_mr *atomic;	/* REMOTE_ATOMIC, this PD */
	struct st_lbuf rq;	/* receive buffers between guards */
	u32 nrecv;
	bool crc;
	u8 frame[ST_HX_FRAME_MAX];
	u32 frame_len;
	u32 last_off;		/* where the last FPDU emitted starts */
};

/* Deviations of a crafted FPDU from a well-formed one. */
struct st_mut {
	u8 pad;			/* every PAD octet */
	bool crc_zero_pad;	/* CRC as if PAD were zero */
	u32 crc_xor;
	bool set_len;		/* ULPDU_Length @len instead of the truth */
	u16 len;
};

/* Append an FPDU (header @h of @hdr_len, @plen pattern octets) to x. */
static void st_emit(struct st_hx *x, const union rsw_hdr *h, u32 hdr_len,
		    u32 plen, const struct st_mut *mut)
{
	static const struct st_mut ok;
	u32 ulpdu = hdr_len - RSW_MPA_HDR_LEN + plen;
	u32 pad = rsw_mpa_pad(ulpdu);
	u8 *out = x->frame + x->frame_len;
	union rsw_hdr hh = *h;
	__le32 crc = 0;

	if (!mut)
		mut = &ok;
	x->last_off = x->frame_len;
	rsw_set_mpa_len(&hh.c, mut->set_len ? mut->len : ulpdu);
	memcpy(out, &hh, hdr_len);
	st_pattern(out + hdr_len, plen, 77);
	memset(out + hdr_len + plen, mut->pad, pad);
	if (x->crc && mut->crc_zero_pad)
		crc = rsw_mpa_fpdu_crc(out, hdr_len, out + hdr_len, plen);
	else if (x->crc)
		crc = rsw_mpa_crc(out, hdr_len + plen + pad);
	crc ^= cpu_to_le32(mut->crc_xor);
	memcpy(out + hdr_len + plen + pad, &crc, sizeof(crc));
	x->frame_len += hdr_len + plen + pad + RSW_MPA_CRC_LEN;
}

static void st_hdr_tagged(union rsw_hdr *h, u8 op, u32 stag, u64 to)
{
	memset(h, 0, sizeof(*h));
	h->c.ctrl = rsw_ctrl_word(op, true);
	h->tagged.stag = cpu_to_be32(stag);
	h->tagged.to = cpu_to_be64(to);
}

static void st_hdr_untagged(union rsw_hdr *h, u8 op, u32 qn, u32 msn, u32 mo)
{
	memset(h, 0, sizeof(*h));
	h->c.ctrl = rsw_ctrl_word(op, true);
	h->untagged.qn = cpu_to_be32(qn);
	h->untagged.msn = cpu_to_be32(msn);
	h->untagged.mo = cpu_to_be32(mo);
}

static void st_write(struct st_hx *x, u32 stag, u64 to, u32 plen)
{
	union rsw_hdr h;

	st_hdr_tagged(&h, RSW_OP_WRITE, stag, to);
	st_emit(x, &h, sizeof(h.tagged), plen, NULL);
}

static void st_send(struct st_hx *x, u8 op, u32 msn, u32 mo, u32 plen,
		    u32 inval, const struct st_mut *mut)
{
	union rsw_hdr h;

	st_hdr_untagged(&h, op, RSW_QN_SEND, msn, mo);
	h.untagged.inval_stag = cpu_to_be32(inval);
	st_emit(x, &h, sizeof(h.untagged), plen, mut);
}

static void st_b_write_no_mr(struct st_hx *x)
{
	st_write(x, ST_NO_STAG, 0, 16);
}

static void st_b_write_wrong_key(struct st_hx *x)
{
	st_write(x, x->mr->mr->rkey ^ 0x5a, x->mr->mr->iova, 16);
}

static void st_b_write_other_pd(struct st_hx *x)
{
	st_write(x, x->other->mr->rkey, x->other->mr->iova, 16);
}

static void st_b_write_no_right(struct st_hx *x)
{
	st_write(x, x->local->mr->rkey, x->local->mr->iova, 16);
}

static void st_b_write_beyond_end(struct st_hx *x)
{
	st_write(x, x->mr->mr->rkey, x->mr->mr->iova + ST_HX_MR_LEN - 8, 16);
}

static void st_b_write_before_start(struct st_hx *x)
{
	st_write(x, x->mr->mr->rkey, x->mr->mr->iova - 4, 16);
}

static void st_b_write_to_wrap(struct st_hx *x)
{
	st_write(x, x->mr->mr->rkey, U64_MAX - 7, 16);
}

static void st_b_send_no_recv(struct st_hx *x)
{
	st_send(x, RSW_OP_SEND, 1, 0, 16, 0, NULL);
}

static void st_b_send_msn_ahead(struct st_hx *x)
{
	st_send(x, RSW_OP_SEND, 2, 0, 16, 0, NULL);
}

static void st_b_send_mo_beyond(struct st_hx *x)
{
	st_send(x, RSW_OP_SEND, 1, ST_HX_RQ_LEN + 4, 8, 0, NULL);
}

static void st_b_send_too_long(struct st_hx *x)
{
	st_send(x, RSW_OP_SEND, 1, 0, ST_HX_RQ_LEN + 4, 0, NULL);
}

static void st_b_short_ulpdu(struct st_hx *x)
{
	static const struct st_mut m = { .set_len = true, .len = 10 };
	union rsw_hdr h;

	st_hdr_tagged(&h, RSW_OP_WRITE, x->mr->mr->rkey, x->mr->mr->iova);
	st_emit(x, &h, sizeof(h.tagged), 0, &m);
}

static void st_b_bad_pad(struct st_hx *x)
{
	static const struct st_mut m = { .pad = 0x01, .crc_zero_pad = true };

	st_send(x, RSW_OP_SEND, 1, 0, 5, 0, &m);
}

static void st_b_bad_crc(struct st_hx *x)
{
	static const struct st_mut m = { .crc_xor = 0x100 };

	st_send(x, RSW_OP_SEND, 1, 0, 16, 0, &m);
}

static void st_b_bad_crc_write(struct st_hx *x)
{
	static const struct st_mut m = { .crc_xor = 0x80000000 };
	union rsw_hdr h;

	st_hdr_tagged(&h, RSW_OP_WRITE, x->mr->mr->rkey, x->mr->mr->iova);
	st_emit(x, &h, sizeof(h.tagged), 16, &m);
}

static void st_b_unknown_opcode(struct st_hx *x)
{
	union rsw_hdr h;

	st_hdr_untagged(&h, RSW_OP_SEND, RSW_QN_SEND, 1, 0);
	rsw_rdmap_set_opcode(&h.c, 0xd);
	st_emit(x, &h, sizeof(h.untagged), 8, NULL);
}

static void st_b_bad_ddp_version(struct st_hx *x)
{
	union rsw_hdr h;

	st_hdr_untagged(&h, RSW_OP_SEND, RSW_QN_SEND, 1, 0);
	rsw_ddp_set_version(&h.c, 2);
	st_emit(x, &h, sizeof(h.untagged), 8, NULL);
}

static void st_b_bad_rdmap_version(struct st_hx *x)
{
	union rsw_hdr h;

	st_hdr_untagged(&h, RSW_OP_SEND, RSW_QN_SEND, 1, 0);
	rsw_rdmap_set_version(&h.c, 2);
	st_emit(x, &h, sizeof(h.untagged), 8, NULL);
}

static void st_read_req(struct st_hx *x, u32 src_stag, u64 src_to, u32 len)
{
	union rsw_hdr h;

	st_hdr_untagged(&h, RSW_OP_READ_REQ, RSW_QN_READ_REQ, 1, 0);
	h.rreq.rreq.sink_stag = cpu_to_be32(0x00424201);
	h.rreq.rreq.sink_to = cpu_to_be64(0x1000);
	h.rreq.rreq.read_size = cpu_to_be32(len);
	h.rreq.rreq.src_stag = cpu_to_be32(src_stag);
	h.rreq.rreq.src_to = cpu_to_be64(src_to);
	st_emit(x, &h, sizeof(h.rreq), 0, NULL);
}

static void st_b_rreq_bad_src(struct st_hx *x)
{
	st_read_req(x, ST_NO_STAG, 0, 64);
}

static void st_b_rreq_no_right(struct st_hx *x)
{
	st_read_req(x, x->local->mr->rkey, x->local->mr->iova, 64);
}

/* A Write and a Read Request the MR allows, to a QP that does not. */
static void st_b_write_qp_denied(struct st_hx *x)
{
	st_write(x, x->mr->mr->rkey, x->mr->mr->iova, 16);
}

static void st_b_rreq_qp_denied(struct st_hx *x)
{
	st_read_req(x, x->mr->mr->rkey, x->mr->mr->iova, 64);
}

/* A Read Request the MR and the QP allow, on a connection with IRD 0. */
static void st_b_rreq_ird0(struct st_hx *x)
{
	st_read_req(x, x->mr->mr->rkey, x->mr->mr->iova, 64);
}

static void st_b_rreq_beyond_end(struct st_hx *x)
{
	st_read_req(x, x->mr->mr->rkey, x->mr->mr->iova + 8, ST_HX_MR_LEN);
}

/* IRD + 1 Read Requests in one burst: the last one finds no room. */
static void st_b_rreq_beyond_ird(struct st_hx *x)
{
	union rsw_hdr h;
	u32 msn;

	for (msn = 1; msn <= ST_HX_IRD + 1; msn++) {
		st_hdr_untagged(&h, RSW_OP_READ_REQ, RSW_QN_READ_REQ, msn, 0);
		h.rreq.rreq.sink_stag = cpu_to_be32(0x00424201);
		h.rreq.rreq.sink_to = cpu_to_be64(0x1000 + 16 * msn);
		h.rreq.rreq.read_size = cpu_to_be32(16);
		h.rreq.rreq.src_stag = cpu_to_be32(x->mr->mr->rkey);
		h.rreq.rreq.src_to = cpu_to_be64(x->mr->mr->iova);
		st_emit(x, &h, sizeof(h.rreq), 0, NULL);
	}
}

static void st_b_rresp_unasked(struct st_hx *x)
{
	union rsw_hdr h;

	st_hdr_tagged(&h, RSW_OP_READ_RESP, x->mr->mr->rkey, x->mr->mr->iova);
	st_emit(x, &h, sizeof(h.tagged), 16, NULL);
}

static void st_b_send_inv_local(struct st_hx *x)
{
	st_send(x, RSW_OP_SEND_INV, 1, 0, 8, x->local->mr->rkey, NULL);
}

static void st_b_send_inv_other_pd(struct st_hx *x)
{
	st_send(x, RSW_OP_SEND_INV, 1, 0, 8, x->other->mr->rkey, NULL);
}

/*
 * RFC 7306: an Atomic Request (FetchAdd +1 unless @aop says otherwise) on
 * queue @qn, MSN 1, to @stag/@to.
 */
static void st_atomic_hdr(union rsw_hdr *h, u32 qn, u32 msn, u8 aop,
			  u32 stag, u64 to)
{
	struct rsw_rdmap_atomic_req *a = &h->atomic_req.atomic;

	st_hdr_untagged(h, RSW_OP_ATOMIC_REQ, qn, msn, 0);
	rsw_atomic_set_operands(a, RSW_ATOMIC_FETCH_ADD, 1, 0, 0, 0);
	rsw_atomic_set_op(a, aop);
	a->req_id = cpu_to_be32(0x00515700 + msn);
	a->stag = cpu_to_be32(stag);
	a->to = cpu_to_be64(to);
}

static void st_atomic_req(struct st_hx *x, u32 qn, u8 aop, u32 stag, u64 to,
			  const struct st_mut *mut)
{
	union rsw_hdr h;

	st_atomic_hdr(&h, qn, 1, aop, stag, to);
	st_emit(x, &h, sizeof(h.atomic_req), 0, mut);
}

static void st_b_atomic_misaligned(struct st_hx *x)
{
	st_atomic_req(x, RSW_QN_READ_REQ, RSW_ATOMIC_FETCH_ADD,
		      x->atomic->mr->rkey, x->atomic->mr->iova + 4, NULL);
}

static void st_b_atomic_no_right(struct st_hx *x)
{
	st_atomic_req(x, RSW_QN_READ_REQ, RSW_ATOMIC_FETCH_ADD,
		      x->mr->mr->rkey, x->mr->mr->iova + 8, NULL);
}

static void st_b_atomic_wrong_qn(struct st_hx *x)
{
	st_atomic_req(x, RSW_QN_SEND, RSW_ATOMIC_FETCH_ADD,
		      x->atomic->mr->rkey, x->atomic->mr->iova, NULL);
}

/* ULPDU_Length covers the DDP header and 22 of the 52 RDMAP octets. */
static void st_b_atomic_truncated(struct st_hx *x)
{
	static const struct st_mut m = { .set_len = true, .len = 40 };

	st_atomic_req(x, RSW_QN_READ_REQ, RSW_ATOMIC_FETCH_ADD,
		      x->atomic->mr->rkey, x->atomic->mr->iova, &m);
}

static void st_b_atomic_reserved_op(struct st_hx *x)
{
	st_atomic_req(x, RSW_QN_READ_REQ, 3, x->atomic->mr->rkey,
		      x->atomic->mr->iova, NULL);
}

/* An Atomic Response with no Atomic Request outstanding. */
static void st_b_atomic_resp_unasked(struct st_hx *x)
{
	union rsw_hdr h;

	st_hdr_untagged(&h, RSW_OP_ATOMIC_RESP, RSW_QN_ATOMIC_RESP, 1, 0);
	h.atomic_resp.atomic.req_id = cpu_to_be32(1);
	h.atomic_resp.atomic.orig = cpu_to_be64(0x1122334455667788ULL);
	st_emit(x, &h, sizeof(h.atomic_resp), 0, NULL);
}

/* Immediate Data, MSN 1, with @plen octets after its eight. */
static void st_imm(struct st_hx *x, u32 plen)
{
	union rsw_hdr h;

	st_hdr_untagged(&h, RSW_OP_IMM_DATA, RSW_QN_SEND, 1, 0);
	h.imm.imm.data = cpu_to_be64(0x0102030405060708ULL);
	st_emit(x, &h, sizeof(h.imm), plen, NULL);
}

static void st_b_imm_no_recv(struct st_hx *x)
{
	st_imm(x, 0);
}

static void st_b_imm_ninth_octet(struct st_hx *x)
{
	st_imm(x, 1);
}

/*
 * The QP asked for MPA Markers (RFC 5044 section 5) and the peer sends a
 * plain FPDU: its ULPDU_Length and control word are read as the Marker
 * that must come first, whose FPDUPTR then points nowhere near 0.
 */
static void st_b_mk_missing(struct st_hx *x)
{
	union rsw_hdr h;

	st_hdr_untagged(&h, RSW_OP_SEND, RSW_QN_SEND, 1, 0);
	st_emit(x, &h, sizeof(h.untagged), 8, NULL);
}

/* The first Marker (before the first FPDU) says FPDUPTR 8, not 0. */
static void st_b_mk_bad_fpduptr(struct st_hx *x)
{
	static const u8 mk[RSW_MPA_MARKER_LEN] = { 0, 0, 0, 8 };

	memcpy(x->frame, mk, sizeof(mk));
	x->frame_len = sizeof(mk);
	st_b_mk_missing(x);
}

/* Whether the Terminate carries the offending DDP header (D bit). */
enum st_d { D_ANY, D_YES, D_NO };

struct st_bad_case {
	const char *name;
	void (*build)(struct st_hx *x);
	u8 layer, etype, ecode;
	enum st_d d;
	bool no_recv;		/* post no receive */
	int rq0_status;		/* the first receive's status */
	bool crc_off;
	/*
	 * Octets at the MR's start that the bad FPDU's payload (st_emit's
	 * pattern) may have reached: placement before a CRC error writes
	 * memory the peer was entitled to write (rx.h), but nothing else.
	 */
	u32 may_write;
	bool rresp_first;	/* Read Responses may precede the Terminate */
	int qp_deny;		/* rights taken from the QP in RTS first */
	bool ird0;		/* the connection agreed IRD 0 */
	bool mk;		/* the QP asked for MPA Markers */
	bool r;			/* a Read Request's header follows (R) */
};

#define ST_DDP_T	RSW_TERM_LAYER_DDP, RSW_DDP_ET_TAGGED
#define ST_DDP_U	RSW_TERM_LAYER_DDP, RSW_DDP_ET_UNTAGGED
#define ST_RDMAP_OP	RSW_TERM_LAYER_RDMAP, RSW_RDMAP_ET_REMOTE_OP
#define ST_RDMAP_PROT	RSW_TERM_LAYER_RDMAP, RSW_RDMAP_ET_REMOTE_PROT
#define ST_MPA		RSW_TERM_LAYER_LLP, RSW_LLP_ET_MPA
#define ST_FLUSH	IB_WC_WR_FLUSH_ERR

static const struct st_bad_case st_bad_cases[] = {
	{ "write STag of no MR", st_b_write_no_mr,
	  ST_DDP_T, RSW_DDP_EC_T_INVALID_STAG, D_YES, false, ST_FLUSH },
	{ "write STag with wrong key", st_b_write_wrong_key,
	  ST_DDP_T, RSW_DDP_EC_T_INVALID_STAG, D_YES, false, ST_FLUSH },
	{ "write MR of another PD", st_b_write_other_pd,
	  ST_DDP_T, RSW_DDP_EC_T_STAG_NOT_ASSOC, D_YES, false, ST_FLUSH },
	{ "write MR without REMOTE_WRITE", st_b_write_no_right,
	  ST_DDP_T, RSW_DDP_EC_T_INVALID_STAG, D_YES, false, ST_FLUSH },
	{ "write TO beyond MR end", st_b_write_beyond_end,
	  ST_DDP_T, RSW_DDP_EC_T_BASE_BOUNDS, D_YES, false, ST_FLUSH },
	{ "write TO before MR start", st_b_write_before_start,
	  ST_DDP_T, RSW_DDP_EC_T_BASE_BOUNDS, D_YES, false, ST_FLUSH },
	{ "write TO wraps", st_b_write_to_wrap,
	  ST_DDP_T, RSW_DDP_EC_T_TO_WRAP, D_YES, false, ST_FLUSH },
	{ "send no receive posted", st_b_send_no_recv,
	  ST_DDP_U, RSW_DDP_EC_U_MSN_NO_BUF, D_YES, true, ST_FLUSH },
	{ "send MSN ahead", st_b_send_msn_ahead,
	  ST_DDP_U, RSW_DDP_EC_U_MSN_NO_BUF, D_YES, false, ST_FLUSH },
	{ "send MO beyond buffer", st_b_send_mo_beyond,
	  ST_DDP_U, RSW_DDP_EC_U_INVALID_MO, D_YES, false, ST_FLUSH },
	{ "send longer than buffer", st_b_send_too_long,
	  ST_DDP_U, RSW_DDP_EC_U_TOO_LONG, D_YES, false, ST_FLUSH },
	{ "ULPDU_Length shorter than header", st_b_short_ulpdu,
	  ST_RDMAP_OP, RSW_RDMAP_EC_CATASTROPHIC_STREAM, D_NO, false,
	  ST_FLUSH },
	{ "bad PAD", st_b_bad_pad,
	  ST_MPA, RSW_MPA_EC_CRC, D_NO, false, ST_FLUSH },
	{ "bad CRC send", st_b_bad_crc,
	  ST_MPA, RSW_MPA_EC_CRC, D_NO, false, ST_FLUSH },
	{ "bad CRC write", st_b_bad_crc_write,
	  ST_MPA, RSW_MPA_EC_CRC, D_NO, false, ST_FLUSH, .may_write = 16 },
	{ "Markers asked, none sent", st_b_mk_missing,
	  ST_MPA, RSW_MPA_EC_MARKER, D_NO, false, ST_FLUSH, .mk = true },
	{ "Marker FPDUPTR wrong", st_b_mk_bad_fpduptr,
	  ST_MPA, RSW_MPA_EC_MARKER, D_NO, false, ST_FLUSH, .mk = true },
	{ "unknown opcode", st_b_unknown_opcode,
	  ST_RDMAP_OP, RSW_RDMAP_EC_OPCODE, D_YES, false, ST_FLUSH },
	{ "bad DDP version", st_b_bad_ddp_version,
	  ST_DDP_U, RSW_DDP_EC_U_VERSION, D_YES, false, ST_FLUSH },
	{ "bad RDMAP version", st_b_bad_rdmap_version,
	  ST_RDMAP_OP, RSW_RDMAP_EC_VERSION, D_YES, false, ST_FLUSH },
	/* Refused when the Response is made: DDP and Read Request header. */
	{ "read request bad source STag", st_b_rreq_bad_src,
	  ST_RDMAP_PROT, RSW_RDMAP_EC_INVALID_STAG, D_YES, false, ST_FLUSH,
	  .r = true },
	{ "read request source without REMOTE_READ", st_b_rreq_no_right,
	  ST_RDMAP_PROT, RSW_RDMAP_EC_ACCESS, D_YES, false, ST_FLUSH,
	  .r = true },
	{ "read request beyond source end", st_b_rreq_beyond_end,
	  ST_RDMAP_PROT, RSW_RDMAP_EC_BASE_BOUNDS, D_YES, false, ST_FLUSH,
	  .r = true },
	{ "read requests beyond IRD", st_b_rreq_beyond_ird,
	  ST_DDP_U, RSW_DDP_EC_U_MSN_NO_BUF, D_YES, false, ST_FLUSH,
	  .rresp_first = true },
	{ "read response with no read outstanding", st_b_rresp_unasked,
	  ST_DDP_T, RSW_DDP_EC_T_INVALID_STAG, D_YES, false, ST_FLUSH },
	{ "send with invalidate of local-only MR", st_b_send_inv_local,
	  ST_RDMAP_PROT, RSW_RDMAP_EC_CANT_INVALIDATE, D_ANY, false,
	  IB_WC_REM_INV_REQ_ERR },
	{ "send with invalidate of other PD's MR", st_b_send_inv_other_pd,
	  ST_RDMAP_PROT, RSW_RDMAP_EC_CANT_INVALIDATE, D_ANY, false,
	  IB_WC_REM_INV_REQ_ERR },
	{ "write STag of no MR, CRC off", st_b_write_no_mr,
	  ST_DDP_T, RSW_DDP_EC_T_INVALID_STAG, D_YES, false, ST_FLUSH, true },
	/* Regressions (issue 10, defect 8): the QP's own access flags. */
	{ "write to QP without REMOTE_WRITE", st_b_write_qp_denied,
	  ST_DDP_T, RSW_DDP_EC_T_STAG_NOT_ASSOC, D_YES, false, ST_FLUSH,
	  .qp_deny = IB_ACCESS_REMOTE_WRITE },
	{ "read request to QP without REMOTE_READ", st_b_rreq_qp_denied,
	  ST_RDMAP_PROT, RSW_RDMAP_EC_ACCESS, D_YES, false, ST_FLUSH,
	  .qp_deny = IB_ACCESS_REMOTE_READ, .r = true },
	/* Review of issue 10: IRD 0 admits no Read Request, not one. */
	{ "read request with IRD 0", st_b_rreq_ird0,
	  ST_DDP_U, RSW_DDP_EC_U_MSN_NO_BUF, D_YES, false, ST_FLUSH,
	  .ird0 = true },
	/* RFC 7306 (issue 12): sections 8.1 and 8.2. */
	{ "atomic request misaligned target", st_b_atomic_misaligned,
	  ST_RDMAP_OP, RSW_RDMAP_EC_CATASTROPHIC_STREAM, D_YES, false,
	  ST_FLUSH },
	{ "atomic request without REMOTE_ATOMIC", st_b_atomic_no_right,
	  ST_RDMAP_PROT, RSW_RDMAP_EC_ACCESS, D_YES, false, ST_FLUSH },
	{ "atomic request on queue 0", st_b_atomic_wrong_qn,
	  ST_DDP_U, RSW_DDP_EC_U_INVALID_QN, D_YES, false, ST_FLUSH },
	{ "atomic request header truncated", st_b_atomic_truncated,
	  ST_RDMAP_OP, RSW_RDMAP_EC_CATASTROPHIC_STREAM, D_YES, false,
	  ST_FLUSH },
	{ "atomic request reserved AOpCode", st_b_atomic_reserved_op,
	  ST_RDMAP_OP, RSW_RDMAP_EC_CATASTROPHIC_STREAM, D_YES, false,
	  ST_FLUSH },
	{ "atomic response with no atomic outstanding",
	  st_b_atomic_resp_unasked,
	  ST_DDP_U, RSW_DDP_EC_U_MSN_NO_BUF, D_YES, false, ST_FLUSH },
	{ "immediate data no receive posted", st_b_imm_no_recv,
	  ST_DDP_U, RSW_DDP_EC_U_MSN_NO_BUF, D_YES, true, ST_FLUSH },
	{ "immediate data with a ninth octet", st_b_imm_ninth_octet,
	  ST_DDP_U, RSW_DDP_EC_U_TOO_LONG, D_YES, false, ST_FLUSH },
};

static void st_bad_desc(const struct st_bad_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(st_bad, st_bad_cases, st_bad_desc);

/*
 * Write zeros into @sock until it takes no more (its peer reads nothing);
 * the octets written.  A small send buffer keeps that a few hundred KiB.
 */
static u32 st_fill(struct kunit *test, struct socket *sock)
{
	static const u8 zero[4096];
	u32 total = 0;
	int ret;

	lock_sock(sock->sk);
	sock->sk->sk_userlocks |= SOCK_SNDBUF_LOCK;
	WRITE_ONCE(sock->sk->sk_sndbuf, 32 * 1024);
	release_sock(sock->sk);
	for (;;) {
		struct kvec vec = { .iov_base = (void *)zero,
				    .iov_len = sizeof(zero) };
		struct msghdr msg = { .msg_flags = MSG_DONTWAIT };

		ret = kernel_sendmsg(sock, &msg, &vec, 1, sizeof(zero));
		if (ret <= 0)
			break;
		total += ret;
		KUNIT_ASSERT_LT_MSG(test, total, 64U << 20, "socket never full");
	}
	KUNIT_ASSERT_EQ(test, ret, -EAGAIN);
	return total;
}

/*
 * A QP on one end, the raw socket on the other: a responder without the
 * peer-to-peer model (the raw peer speaks first), or with @rtr an
 * initiator with it (the QP speaks first: its RTR).  With @filled, the
 * QP's socket is filled first (st_fill(), octets in *@filled), so the
 * stream's first send finds it full.  @ird: the IRD the connection agreed.
 * @mk: the QP asked for MPA Markers (the raw peer must send them).
 */
/*
 * The QP's end (queues of @wrs work requests) with its MRs and receives,
 * and the socket pair; *@qs: its.
 */
static struct st_hx *st_hx_prepare_wrs(struct kunit *test, bool crc,
				       bool no_recv, struct socket **qs,
				       u32 wrs)
{
	struct st_hx *x = kunit_kzalloc(test, sizeof(*x), GFP_KERNEL);
	struct ib_sge sge;
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, x);
	x->crc = crc;
	x->e = st_end_new_wrs(test, st.pd, false, wrs);
	x->mr = st_mr_new(test, st.pd, ST_HX_MR_LEN);
	st_mr_reg_direct(test, x->mr, st.pd, IB_ACCESS_LOCAL_WRITE |
			 IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ);
	x->other = st_mr_new(test, st.pd2, 512);
	st_mr_reg_direct(test, x->other, st.pd2, IB_ACCESS_LOCAL_WRITE |
			 IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ);
	x->local = st_mr_new(test, st.pd, 512);
	st_mr_reg_direct(test, x->local, st.pd, IB_ACCESS_LOCAL_WRITE);
	x->atomic = st_mr_new(test, st.pd, 512);
	st_mr_reg_direct(test, x->atomic, st.pd, ST_ATOMIC_ACCESS);
	KUNIT_ASSERT_EQ(test, st_mr_check(st.pd, ST_NO_STAG, 0, 1,
					  IB_ACCESS_REMOTE_WRITE),
			RSW_MR_ERR_STAG);

	x->rq = st_lbuf_new(test, ST_HX_RQ_NUM * (ST_HX_RQ_LEN + ST_GUARD_LEN) +
			    ST_GUARD_LEN);
	x->nrecv = no_recv ? 0 : ST_HX_RQ_NUM;
	for (i = 0; i < x->nrecv; i++) {
		sge = st_sge(st.pd, x->rq.base + ST_GUARD_LEN +
			     i * (ST_HX_RQ_LEN + ST_GUARD_LEN), ST_HX_RQ_LEN);
		st_post_recv(test, x->e, 50 + i, &sge, 1);
	}

	st_tcp_pair(test, &x->raw, qs);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, st_sock_release,
							x->raw), 0);
	return x;
}

static struct st_hx *st_hx_prepare(struct kunit *test, bool crc, bool no_recv,
				   struct socket **qs)
{
	return st_hx_prepare_wrs(test, crc, no_recv, qs, 64);
}

/* @mk: we asked for Markers (the raw peer sends them). */
static struct st_hx *st_hx_up_fill(struct kunit *test, bool crc,
				   bool no_recv, u8 rtr, u32 *filled, u32 ird,
				   u32 ord, bool mk)
{
	struct rsw_mpa_conn conn = {
		.rev = RSW_MPA_REV_2, .crc = crc, .rx_markers = mk,
		.enhanced = true, .p2p = !!rtr, .rtr = rtr, .ird = ird,
		.ord = ord,
	};
	struct socket *qs;
	struct st_hx *x = st_hx_prepare(test, crc, no_recv, &qs);

	if (filled)
		*filled = st_fill(test, qs);
	st_attach(test, x->e, qs, &conn, !!rtr);
	rsw_stream_start(to_rsw_qp(x->e->qp));
	return x;
}

static struct st_hx *st_hx_up_rtr(struct kunit *test, bool crc, bool no_recv,
				  u8 rtr)
{
	return st_hx_up_fill(test, crc, no_recv, rtr, NULL, ST_HX_IRD,
			     ST_HX_ORD, false);
}

static struct st_hx *st_hx_up(struct kunit *test, bool crc, bool no_recv)
{
	return st_hx_up_rtr(test, crc, no_recv, 0);
}

/* Read one FPDU from the raw socket into @buf; its ULPDU length or < 0. */
static int st_read_fpdu(struct kunit *test, struct st_hx *x, u8 *buf,
			u32 max)
{
	u16 ulpdu;
	u32 rest;
	int ret;
	__le32 crc;

	ret = st_recv_all(x->raw, buf, RSW_MPA_HDR_LEN);
	if (ret != RSW_MPA_HDR_LEN)
		return ret < 0 ? ret : -ENODATA;
	ulpdu = rsw_mpa_len((struct rsw_ctrl *)buf);
	rest = rsw_fpdu_plain_len(ulpdu) - RSW_MPA_HDR_LEN;
	if (rest + RSW_MPA_HDR_LEN > max)
		return -EMSGSIZE;
	ret = st_recv_all(x->raw, buf + RSW_MPA_HDR_LEN, rest);
	if (ret != (int)rest)
		return ret < 0 ? ret : -ENODATA;
	crc = x->crc ? rsw_mpa_crc(buf, rest + RSW_MPA_HDR_LEN -
				   RSW_MPA_CRC_LEN) : 0;
	KUNIT_EXPECT_TRUE_MSG(test, !memcmp(&crc, buf + rest + RSW_MPA_HDR_LEN -
					    RSW_MPA_CRC_LEN, sizeof(crc)),
			      "Terminate's CRC trailer");
	return ulpdu;
}

/* The raw peer's end sees no more octets: EOF or reset, within the wait. */
static void st_expect_eof(struct kunit *test, struct st_hx *x)
{
	u8 b;
	int ret = st_recv_all(x->raw, &b, 1);

	KUNIT_EXPECT_TRUE_MSG(test, ret == 0 || ret == -ECONNRESET ||
			      ret == -EPIPE, "after the Terminate: %d", ret);
}

/* Any vendor_err (st_hx_check_end_vendor()). */
#define ST_ANY_VENDOR_ERR	U32_MAX

/* The vendor_err a Terminate of @layer, @etype, @ecode leaves. */
static u32 st_term_ve(u8 layer, u8 etype, u8 ecode)
{
	struct rsw_term_cause c = RSW_TERM_CAUSE(layer, etype, ecode);

	return rsw_term_vendor_err(&c);
}

/*
 * The stream ended in ERROR, receives flushed (the first with @rq0_status)
 * carrying @vendor_err unless ST_ANY_VENDOR_ERR, and nothing changed
 * beyond the first @may_write octets of the MR.
 */
static void st_hx_check_end_vendor(struct kunit *test, struct st_hx *x,
				   int rq0_status, u32 may_write,
				   u32 vendor_err)
{
	struct st_end *e = x->e;
	u8 allowed[32];
	struct ib_wc wc;
	u32 i;

	KUNIT_EXPECT_TRUE_MSG(test, st_wait_closed(e), "closed() not called");
	KUNIT_EXPECT_EQ(test, atomic_read(&e->closed_calls), 1);
	KUNIT_EXPECT_NE(test, e->closed_status, 0);
	KUNIT_EXPECT_EQ(test, st_state(test, e), IB_QPS_ERR);
	for (i = 0; i < x->nrecv; i++) {
		st_wc(test, e->rcq, 50 + i, i ? IB_WC_WR_FLUSH_ERR : rq0_status,
		      -1, &wc);
		if (vendor_err != ST_ANY_VENDOR_ERR)
			KUNIT_EXPECT_EQ_MSG(test, wc.vendor_err, vendor_err,
					    "receive %u", i);
	}
	st_cq_empty(test, e->rcq, "recv CQ");
	st_cq_empty(test, e->scq, "send CQ");
	/* Nothing outside what the peer could write changed. */
	st_pattern(allowed, sizeof(allowed), 77);
	for (i = 0; i < may_write && i < sizeof(allowed); i++)
		KUNIT_EXPECT_TRUE_MSG(test, *st_mr_ptr(x->mr, i) == ST_FILL ||
				      *st_mr_ptr(x->mr, i) == allowed[i],
				      "MR octet %u: %#x", i,
				      *st_mr_ptr(x->mr, i));
	KUNIT_EXPECT_TRUE_MSG(test, st_all(st_mr_ptr(x->mr, may_write),
					   ST_HX_MR_LEN - may_write, ST_FILL),
			      "MR contents changed");
	st_mr_guards(test, x->mr);
	KUNIT_EXPECT_TRUE(test, st_all(st_mr_ptr(x->other, 0), 512, ST_FILL));
	st_mr_guards(test, x->other);
	KUNIT_EXPECT_TRUE(test, st_all(st_mr_ptr(x->local, 0), 512, ST_FILL));
	st_mr_guards(test, x->local);
	KUNIT_EXPECT_TRUE(test, st_all(st_mr_ptr(x->atomic, 0), 512, ST_FILL));
	st_mr_guards(test, x->atomic);
	for (i = 0; i <= ST_HX_RQ_NUM; i++)
		KUNIT_EXPECT_TRUE_MSG(test, st_all(x->rq.base + i *
						   (ST_HX_RQ_LEN + ST_GUARD_LEN),
						   ST_GUARD_LEN, ST_GUARD),
				      "receive guard %u changed", i);
}

static void st_hx_check_end(struct kunit *test, struct st_hx *x,
			    int rq0_status, u32 may_write)
{
	st_hx_check_end_vendor(test, x, rq0_status, may_write,
			       ST_ANY_VENDOR_ERR);
}

/*
 * The counters of one hostile case: the refused FPDU counted once under
 * the cause the Terminate carries (the case's layer, type and code), that
 * Terminate once among those sent and under its layer, none received.
 */
static void st_hostile_ctrs(struct kunit *test, const struct st_ctrs *c0,
			    const struct st_bad_case *c)
{
	struct rsw_term_cause cause = RSW_TERM_CAUSE(c->layer, c->etype,
						     c->ecode);

	KUNIT_EXPECT_EQ(test, st_ctr(c0, rsw_stat_rx_err(&cause)), 1);
	KUNIT_EXPECT_EQ(test, st_ctr_rx_errs(c0), 1);
	KUNIT_EXPECT_EQ(test, st_ctr(c0, RSW_STAT_TX_TERMS), 1);
	KUNIT_EXPECT_EQ(test, st_ctr(c0, rsw_stat_term_layer(c->layer, false)),
			1);
	KUNIT_EXPECT_EQ(test, st_ctr(c0, RSW_STAT_RX_TERMS), 0);
	if (c->layer == RSW_TERM_LAYER_LLP && c->ecode == RSW_MPA_EC_CRC)
		KUNIT_EXPECT_EQ(test, st_ctr(c0, RSW_STAT_RX_ERR_MPA_CRC), 1);
}

static void st_hostile(struct kunit *test)
{
	const struct st_bad_case *c = test->param_value;
	struct st_hx *x = st_hx_up_fill(test, !c->crc_off, c->no_recv, 0, NULL,
					c->ird0 ? 0 : ST_HX_IRD, ST_HX_ORD, c->mk);
	u8 *t = kunit_kzalloc(test, 256, GFP_KERNEL);
	const struct rsw_hdr_term *th = (const void *)t;
	const struct rsw_rdmap_term *term = &th->term;
	struct rsw_stream_stats ss;
	struct st_ctrs *c0;
	u32 rresps = 0;
	bool access;
	int ulpdu;

	KUNIT_ASSERT_NOT_NULL(test, t);
	c0 = st_ctrs_snap(test);
	if (c->qp_deny)
		st_qp_access(test, x->e, ST_QP_RIGHTS & ~c->qp_deny);
	c->build(x);
	KUNIT_ASSERT_EQ(test, st_send_all(x->raw, x->frame, x->frame_len),
			(int)x->frame_len);

	/* The answer: one Terminate (after Read Responses, if allowed). */
	for (;;) {
		ulpdu = st_read_fpdu(test, x, t, 256);
		KUNIT_ASSERT_GE_MSG(test, ulpdu, 0, "no Terminate came back");
		if (!c->rresp_first ||
		    rsw_rdmap_opcode(&th->ddp.c) != RSW_OP_READ_RESP)
			break;
		KUNIT_ASSERT_LT_MSG(test, ++rresps, ST_HX_IRD + 1,
				    "more Read Responses than Requests");
	}
	KUNIT_ASSERT_GE(test, ulpdu + RSW_MPA_HDR_LEN,
			(int)sizeof(struct rsw_hdr_term));
	KUNIT_EXPECT_EQ(test, rsw_rdmap_opcode(&th->ddp.c), RSW_OP_TERMINATE);
	KUNIT_EXPECT_FALSE(test, rsw_ddp_tagged(&th->ddp.c));
	KUNIT_EXPECT_TRUE(test, rsw_ddp_last(&th->ddp.c));
	KUNIT_EXPECT_EQ(test, rsw_ddp_version(&th->ddp.c), RSW_DDP_VERSION);
	KUNIT_EXPECT_EQ(test, rsw_rdmap_version(&th->ddp.c), RSW_RDMAP_VERSION);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(th->ddp.qn), RSW_QN_TERMINATE);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(th->ddp.msn), 1);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(th->ddp.mo), 0);
	KUNIT_EXPECT_EQ(test, rsw_term_layer(term), c->layer);
	KUNIT_EXPECT_EQ(test, rsw_term_etype(term), c->etype);
	KUNIT_EXPECT_EQ(test, rsw_term_ecode(term), c->ecode);
	KUNIT_EXPECT_NOT_NULL(test, rsw_term_name(rsw_term_layer(term),
						  rsw_term_etype(term),
						  rsw_term_ecode(term)));
	if (c->d != D_ANY)
		KUNIT_EXPECT_EQ(test, rsw_term_d(term), c->d == D_YES);
	if (rsw_term_d(term)) {
		/* The offending header from its DDP control field on. */
		const u8 *copy = t + sizeof(struct rsw_hdr_term);
		u32 n = rsw_ddp_tagged((const struct rsw_ctrl *)
				       (x->frame + x->last_off)) ?
			RSW_DDP_TAGGED_HDR_LEN : RSW_DDP_UNTAGGED_HDR_LEN;

		KUNIT_ASSERT_GE(test, ulpdu + RSW_MPA_HDR_LEN,
				(int)(sizeof(struct rsw_hdr_term) +
				      RSW_MPA_HDR_LEN + n));
		KUNIT_EXPECT_TRUE_MSG(test, !memcmp(copy + RSW_MPA_HDR_LEN,
						    x->frame + x->last_off +
						    RSW_MPA_HDR_LEN, n),
				      "Terminated DDP header differs");
	}
	KUNIT_EXPECT_EQ(test, rsw_term_r(term), c->r);
	if (c->r && rsw_term_d(term)) {
		/* Then the Read Request header, as the peer sent it. */
		const u8 *rr = t + sizeof(struct rsw_hdr_term) +
			       RSW_MPA_HDR_LEN + RSW_DDP_UNTAGGED_HDR_LEN;

		KUNIT_ASSERT_GE(test, ulpdu + RSW_MPA_HDR_LEN,
				(int)(rr - t) + RSW_RDMAP_RREQ_LEN);
		KUNIT_EXPECT_TRUE_MSG(test, !memcmp(rr, x->frame + x->last_off +
						    RSW_MPA_HDR_LEN +
						    RSW_DDP_UNTAGGED_HDR_LEN,
						    RSW_RDMAP_RREQ_LEN),
				      "Terminated Read Request header differs");
	}
	/* We close our side; the QP's stream ends. */
	kernel_sock_shutdown(x->raw, SHUT_WR);
	st_hx_check_end(test, x, c->rq0_status, c->may_write);
	st_expect_eof(test, x);

	ss = st_stats(test, x->e);
	KUNIT_EXPECT_EQ(test, ss.term_sent, 1);
	KUNIT_EXPECT_EQ(test, ss.term_rcvd, 0);
	KUNIT_EXPECT_EQ(test, ss.term.layer, c->layer);
	KUNIT_EXPECT_EQ(test, ss.term.etype, c->etype);
	KUNIT_EXPECT_EQ(test, ss.term.ecode, c->ecode);
	st_hostile_ctrs(test, c0, c);
	/* The local ULP hears of it: access errors as such. */
	access = (c->layer == RSW_TERM_LAYER_RDMAP &&
		  c->etype == RSW_RDMAP_ET_REMOTE_PROT) ||
		 (c->layer == RSW_TERM_LAYER_DDP &&
		  c->etype == RSW_DDP_ET_TAGGED);
	KUNIT_EXPECT_TRUE_MSG(test, test_bit(access ? IB_EVENT_QP_ACCESS_ERR :
					     IB_EVENT_QP_FATAL, &x->e->events),
			      "events %#lx", x->e->events);
}

/*
 * The raw peer sends a Terminate: the QP reports it (async event, the
 * cause in every flushed completion's vendor_err) and goes to ERROR.
 */
struct st_term_case {
	const char *name;
	u8 layer, etype, ecode;
	enum ib_event_type event;
};

static const struct st_term_case st_term_cases[] = {
	{ "DDP tagged base/bounds", RSW_TERM_LAYER_DDP, RSW_DDP_ET_TAGGED,
	  RSW_DDP_EC_T_BASE_BOUNDS, IB_EVENT_QP_ACCESS_ERR },
	{ "RDMAP remote protection", RSW_TERM_LAYER_RDMAP,
	  RSW_RDMAP_ET_REMOTE_PROT, RSW_RDMAP_EC_ACCESS,
	  IB_EVENT_QP_ACCESS_ERR },
	{ "RDMAP catastrophic stream", RSW_TERM_LAYER_RDMAP,
	  RSW_RDMAP_ET_REMOTE_OP, RSW_RDMAP_EC_CATASTROPHIC_STREAM,
	  IB_EVENT_QP_FATAL },
	{ "MPA CRC", RSW_TERM_LAYER_LLP, RSW_LLP_ET_MPA, RSW_MPA_EC_CRC,
	  IB_EVENT_QP_FATAL },
};

static void st_term_desc(const struct st_term_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(st_term, st_term_cases, st_term_desc);

static void st_peer_terminate(struct kunit *test)
{
	const struct st_term_case *c = test->param_value;
	struct st_hx *x = st_hx_up(test, true, false);
	struct rsw_stream_stats ss;
	union rsw_hdr h;

	st_hdr_untagged(&h, RSW_OP_TERMINATE, RSW_QN_TERMINATE, 1, 0);
	rsw_term_set_layer(&h.term.term, c->layer);
	rsw_term_set_etype(&h.term.term, c->etype);
	rsw_term_set_ecode(&h.term.term, c->ecode);
	st_emit(x, &h, sizeof(h.term), 0, NULL);
	KUNIT_ASSERT_EQ(test, st_send_all(x->raw, x->frame, x->frame_len),
			(int)x->frame_len);

	/* Every flushed receive carries the Terminate's cause. */
	st_hx_check_end_vendor(test, x, IB_WC_WR_FLUSH_ERR, 0,
			       st_term_ve(c->layer, c->etype, c->ecode));
	KUNIT_EXPECT_TRUE_MSG(test, test_bit(c->event, &x->e->events),
			      "events %#lx", x->e->events);
	/* No Terminate answers a Terminate: the raw end just sees the end. */
	st_expect_eof(test, x);
	ss = st_stats(test, x->e);
	KUNIT_EXPECT_EQ(test, ss.term_rcvd, 1);
	KUNIT_EXPECT_EQ(test, ss.term_sent, 0);
	KUNIT_EXPECT_EQ(test, ss.term.layer, c->layer);
	KUNIT_EXPECT_EQ(test, ss.term.etype, c->etype);
	KUNIT_EXPECT_EQ(test, ss.term.ecode, c->ecode);
}

/*
 * An abortive end from the raw peer (reset): the stream ends, the QP is in
 * ERROR and both posted receives are flushed.
 */
static void st_peer_reset(struct kunit *test, struct st_hx *x)
{
	sock_no_linger(x->raw->sk);
	kunit_release_action(test, st_sock_release, x->raw);
	KUNIT_EXPECT_TRUE_MSG(test, st_wait_closed(x->e), "closed() not called");
	KUNIT_EXPECT_NE(test, x->e->closed_status, 0);
	KUNIT_EXPECT_EQ(test, st_state(test, x->e), IB_QPS_ERR);
	st_wc(test, x->e->rcq, 50, IB_WC_WR_FLUSH_ERR, -1, NULL);
	st_wc(test, x->e->rcq, 51, IB_WC_WR_FLUSH_ERR, -1, NULL);
}

/* A valid Write from the raw peer is placed; then the peer resets. */
static void st_peer_write_then_reset(struct kunit *test)
{
	struct st_hx *x = st_hx_up(test, true, false);
	union rsw_hdr h;
	u8 *p;

	st_hdr_tagged(&h, RSW_OP_WRITE, x->mr->mr->rkey, x->mr->mr->iova + 10);
	st_emit(x, &h, sizeof(h.tagged), 100, NULL);
	p = x->frame + sizeof(h.tagged);
	KUNIT_ASSERT_EQ(test, st_send_all(x->raw, x->frame, x->frame_len),
			(int)x->frame_len);
	{
		unsigned long end = jiffies + msecs_to_jiffies(ST_WAIT_MS);

		while (st_stats(test, x->e).rx_fpdus < 1 &&
		       time_before(jiffies, end))
			msleep(2);
	}
	KUNIT_EXPECT_EQ(test, st_stats(test, x->e).rx_fpdus, 1);
	KUNIT_EXPECT_TRUE(test, !memcmp(st_mr_ptr(x->mr, 10), p, 100));
	KUNIT_EXPECT_TRUE(test, st_all(st_mr_ptr(x->mr, 0), 10, ST_FILL));
	KUNIT_EXPECT_TRUE(test, st_all(st_mr_ptr(x->mr, 110),
				       ST_HX_MR_LEN - 110, ST_FILL));
	st_mr_guards(test, x->mr);
	KUNIT_EXPECT_EQ(test, st_state(test, x->e), IB_QPS_RTS);
	st_peer_reset(test, x);
	KUNIT_EXPECT_EQ(test, st_stats(test, x->e).term_sent, 0);
}

/*
 * The control for the Atomic rows above: a well-formed FetchAdd and Swap
 * from the raw peer on the REMOTE_ATOMIC MR are executed in order and
 * answered with Atomic Responses (QN 3, MSN 1 and 2) that echo the
 * peer's Request Identifiers and carry the original values big-endian.
 * Swap has no verbs opcode: this is its only end-to-end check.
 */
static void st_peer_atomic_resp(struct kunit *test, struct st_hx *x, u32 msn,
				const u8 *orig)
{
	u8 t[64];
	const u8 want[20] = {
		0x41, 0x4b, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, msn, 0, 0, 0, 0,
		0x00, 0x51,
	};

	KUNIT_ASSERT_EQ(test, st_read_fpdu(test, x, t, sizeof(t)), 30);
	KUNIT_EXPECT_TRUE_MSG(test, !memcmp(t + 2, want, sizeof(want)),
			      "Atomic Response %u header", msn);
	KUNIT_EXPECT_EQ(test, t[22], 0x57);
	KUNIT_EXPECT_EQ(test, t[23], msn);
	KUNIT_EXPECT_TRUE_MSG(test, !memcmp(t + 24, orig, 8),
			      "Original Remote Data %u", msn);
}

static void st_peer_atomic(struct kunit *test)
{
	static const u8 orig1[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	static const u8 orig2[8] = { 1, 2, 3, 4, 5, 6, 8, 8 };
	struct st_hx *x = st_hx_up(test, true, false);
	u64 *word = (u64 *)st_mr_ptr(x->atomic, 8);
	u32 stag = x->atomic->mr->rkey;
	u64 to = x->atomic->mr->iova + 8;
	union rsw_hdr h;

	*word = 0x0102030405060708ULL;
	st_atomic_hdr(&h, RSW_QN_READ_REQ, 1, RSW_ATOMIC_FETCH_ADD, stag, to);
	h.atomic_req.atomic.data = cpu_to_be64(0x100);
	st_emit(x, &h, sizeof(h.atomic_req), 0, NULL);
	st_atomic_hdr(&h, RSW_QN_READ_REQ, 2, RSW_ATOMIC_SWAP, stag, to);
	rsw_atomic_set_operands(&h.atomic_req.atomic, RSW_ATOMIC_SWAP,
				0xa5a5a5a55a5a5a5aULL, 0, 0, 0);
	st_emit(x, &h, sizeof(h.atomic_req), 0, NULL);
	KUNIT_ASSERT_EQ(test, st_send_all(x->raw, x->frame, x->frame_len),
			(int)x->frame_len);
	st_peer_atomic_resp(test, x, 1, orig1);
	st_peer_atomic_resp(test, x, 2, orig2);
	KUNIT_EXPECT_EQ(test, *word, 0xa5a5a5a55a5a5a5aULL);
	KUNIT_EXPECT_TRUE(test, st_all(st_mr_ptr(x->atomic, 0), 8, ST_FILL));
	KUNIT_EXPECT_TRUE(test, st_all(st_mr_ptr(x->atomic, 16), 512 - 16,
				       ST_FILL));
	st_mr_guards(test, x->atomic);
	KUNIT_EXPECT_EQ(test, st_state(test, x->e), IB_QPS_RTS);
	st_cq_empty(test, x->e->rcq, "recv CQ");
	st_peer_reset(test, x);
	KUNIT_EXPECT_EQ(test, st_stats(test, x->e).term_sent, 0);
}

/*
 * Immediate Data after a Send completes with the length of no Write: the
 * raw peer's Write, Send, Immediate Data give a RECV of 8 octets and a
 * RECV_RDMA_WITH_IMM of byte_len 0 (the Write was not the message before
 * it), with the first four of the eight octets as the immediate value.
 */
static void st_peer_imm_after_send(struct kunit *test)
{
	struct st_hx *x = st_hx_up(test, true, false);
	union rsw_hdr h;
	struct ib_wc wc;

	st_write(x, x->mr->mr->rkey, x->mr->mr->iova, 16);
	st_send(x, RSW_OP_SEND, 1, 0, 8, 0, NULL);
	st_hdr_untagged(&h, RSW_OP_IMM_DATA, RSW_QN_SEND, 2, 0);
	h.imm.imm.data = cpu_to_be64(0x0102030405060708ULL);
	st_emit(x, &h, sizeof(h.imm), 0, NULL);
	KUNIT_ASSERT_EQ(test, st_send_all(x->raw, x->frame, x->frame_len),
			(int)x->frame_len);
	st_wc(test, x->e->rcq, 50, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 8);
	KUNIT_EXPECT_FALSE(test, wc.wc_flags & IB_WC_WITH_IMM);
	st_wc(test, x->e->rcq, 51, IB_WC_SUCCESS, IB_WC_RECV_RDMA_WITH_IMM,
	      &wc);
	KUNIT_EXPECT_TRUE(test, wc.wc_flags & IB_WC_WITH_IMM);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(wc.ex.imm_data), 0x01020304U);
	KUNIT_EXPECT_EQ_MSG(test, wc.byte_len, 0,
			    "the length of a Write before the Send");
	/* The second receive's buffer was not written. */
	KUNIT_EXPECT_TRUE(test, st_all(x->rq.base + 2 * ST_GUARD_LEN +
				       ST_HX_RQ_LEN, ST_HX_RQ_LEN, ST_GUARD));
	KUNIT_EXPECT_EQ(test, st_state(test, x->e), IB_QPS_RTS);
	sock_no_linger(x->raw->sk);
	kunit_release_action(test, st_sock_release, x->raw);
	KUNIT_EXPECT_TRUE_MSG(test, st_wait_closed(x->e), "closed() not called");
	st_cq_empty(test, x->e->rcq, "recv CQ");
	KUNIT_EXPECT_EQ(test, st_stats(test, x->e).term_sent, 0);
}

/*
 * The requester's side: a response that is not the one its oldest
 * outstanding request is owed.  The QP sends an Atomic Request (or a
 * Read Request) to the raw peer, which answers wrongly; the QP must send
 * a Terminate with @layer/@etype/@ecode and the DDP header, end in ERROR,
 * complete the WR in error and leave the result buffer untouched.
 */
struct st_resp_case {
	const char *name;
	bool read;			/* a Read outstanding, not an Atomic */
	void (*answer)(struct st_hx *x, const u8 *req, u64 res);
	u8 layer, etype, ecode;
};

/* An Atomic Response to @req with the Request Identifier off by one. */
static void st_r_wrong_id(struct st_hx *x, const u8 *req, u64 res)
{
	const union rsw_hdr *rq = (const void *)req;
	union rsw_hdr h;

	st_hdr_untagged(&h, RSW_OP_ATOMIC_RESP, RSW_QN_ATOMIC_RESP, 1, 0);
	h.atomic_resp.atomic.req_id =
		cpu_to_be32(be32_to_cpu(rq->atomic_req.atomic.req_id) + 1);
	st_emit(x, &h, sizeof(h.atomic_resp), 0, NULL);
}

/* A Read Response of 8 octets onto the Atomic's result buffer. */
static void st_r_rresp_for_atomic(struct st_hx *x, const u8 *req, u64 res)
{
	union rsw_hdr h;

	st_hdr_tagged(&h, RSW_OP_READ_RESP, st.pd->local_dma_lkey, res);
	st_emit(x, &h, sizeof(h.tagged), 8, NULL);
}

/* An Atomic Response while a Read is the oldest outstanding request. */
static void st_r_aresp_for_read(struct st_hx *x, const u8 *req, u64 res)
{
	union rsw_hdr h;

	st_hdr_untagged(&h, RSW_OP_ATOMIC_RESP, RSW_QN_ATOMIC_RESP, 1, 0);
	h.atomic_resp.atomic.req_id = cpu_to_be32(0);
	st_emit(x, &h, sizeof(h.atomic_resp), 0, NULL);
}

static const struct st_resp_case st_resp_cases[] = {
	{ "atomic response with another request identifier", false,
	  st_r_wrong_id, ST_RDMAP_OP, RSW_RDMAP_EC_OPCODE },
	{ "read response while an atomic is outstanding", false,
	  st_r_rresp_for_atomic, ST_DDP_T, RSW_DDP_EC_T_INVALID_STAG },
	{ "atomic response while a read is outstanding", true,
	  st_r_aresp_for_read, ST_DDP_U, RSW_DDP_EC_U_MSN_NO_BUF },
};

KUNIT_ARRAY_PARAM_DESC(st_resp, st_resp_cases, name);

/* The QP's request to the raw peer: an Atomic FetchAdd or a Read of 8. */
static void st_resp_post(struct kunit *test, struct st_hx *x, bool read,
			 u64 *res)
{
	const struct st_aop add = { IB_WR_ATOMIC_FETCH_AND_ADD, 1 };
	struct ib_sge sge = st_sge(st.pd, res, 8);

	if (read)
		st_post_rdma(test, x->e, 9, IB_WR_RDMA_READ, 0, &sge, 1,
			     0x1000, 0x00424201, 0);
	else
		st_post_atomic(test, x->e, 9, &add, res, 0x1000, 0x00424201);
}

/* A buffer for the QP's FPDUs, once the raw peer spoke first (MPA). */
static u8 *st_peer_first(struct kunit *test, struct st_hx *x)
{
	u8 *t = kunit_kzalloc(test, 256, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, t);
	st_write(x, x->mr->mr->rkey, x->mr->mr->iova, 0);
	KUNIT_ASSERT_EQ(test, st_send_all(x->raw, x->frame, x->frame_len),
			(int)x->frame_len);
	x->frame_len = 0;
	return t;
}

/*
 * The QP as peer-to-peer responder awaiting an RTR of type @rtr; the raw
 * initiator sends something else first.  It is refused before anything is
 * placed or delivered: RDMAP Remote Operation Error, unexpected opcode;
 * the QP ends in ERROR, its MR and receives untouched.
 */
struct st_wrong_rtr_case {
	const char *name;
	u8 rtr;
	bool send;		/* the first FPDU: a Send, else a Write */
	u32 len;
};

static const struct st_wrong_rtr_case st_wrong_rtr_cases[] = {
	{ "Write RTR awaited, a Send of 8", RSW_MPA_RTR_WRITE, true, 8 },
	{ "Write RTR awaited, a Write of 8", RSW_MPA_RTR_WRITE, false, 8 },
	{ "Read RTR awaited, a zero-length Write", RSW_MPA_RTR_READ, false,
	  0 },
	{ "Send RTR awaited, a zero-length Write", RSW_MPA_RTR_SEND, false,
	  0 },
	{ "Read RTR awaited, a Send of 8", RSW_MPA_RTR_READ, true, 8 },
};

KUNIT_ARRAY_PARAM_DESC(st_wrong_rtr, st_wrong_rtr_cases, name);

static void st_peer_wrong_rtr(struct kunit *test)
{
	const struct st_wrong_rtr_case *c = test->param_value;
	struct rsw_mpa_conn conn = {
		.rev = RSW_MPA_REV_2, .crc = true, .enhanced = true,
		.p2p = true, .rtr = c->rtr, .ird = ST_HX_IRD, .ord = ST_HX_ORD,
	};
	struct socket *qs;
	struct st_hx *x = st_hx_prepare(test, true, false, &qs);
	u8 *t = kunit_kzalloc(test, 256, GFP_KERNEL);
	const struct rsw_hdr_term *th = (const void *)t;

	KUNIT_ASSERT_NOT_NULL(test, t);
	st_attach(test, x->e, qs, &conn, false);
	rsw_stream_start(to_rsw_qp(x->e->qp));
	if (c->send)
		st_send(x, RSW_OP_SEND, 1, 0, c->len, 0, NULL);
	else
		st_write(x, x->mr->mr->rkey, x->mr->mr->iova, c->len);
	KUNIT_ASSERT_EQ(test, st_send_all(x->raw, x->frame, x->frame_len),
			(int)x->frame_len);
	KUNIT_ASSERT_GT_MSG(test, st_read_fpdu(test, x, t, 256), 0,
			    "no Terminate came");
	KUNIT_EXPECT_EQ(test, rsw_rdmap_opcode(&th->ddp.c), RSW_OP_TERMINATE);
	KUNIT_EXPECT_EQ(test, rsw_term_layer(&th->term), RSW_TERM_LAYER_RDMAP);
	KUNIT_EXPECT_EQ(test, rsw_term_etype(&th->term),
			RSW_RDMAP_ET_REMOTE_OP);
	KUNIT_EXPECT_EQ(test, rsw_term_ecode(&th->term), RSW_RDMAP_EC_OPCODE);
	kernel_sock_shutdown(x->raw, SHUT_WR);
	st_hx_check_end_vendor(test, x, IB_WC_WR_FLUSH_ERR, 0,
			       st_term_ve(RSW_TERM_LAYER_RDMAP,
					  RSW_RDMAP_ET_REMOTE_OP,
					  RSW_RDMAP_EC_OPCODE));
}

static void st_rtr_ms_restore(void *old)
{
	rsw_stream_kunit_set_rtr_ms((uintptr_t)old);
}

/*
 * The QP as peer-to-peer responder awaiting a Write RTR, its deadline
 * lowered to 300 ms.  @rtr_after_ms < 0: the raw initiator never sends it,
 * and the stream ends abortively (-ETIMEDOUT, a reset) with the QP in
 * ERROR.  Otherwise the RTR comes that late and the connection outlives
 * the deadline: a Send after it is delivered, the QP stays in RTS.
 */
static void st_rtr_deadline(struct kunit *test, int rtr_after_ms)
{
	struct rsw_mpa_conn conn = {
		.rev = RSW_MPA_REV_2, .crc = true, .enhanced = true,
		.p2p = true, .rtr = RSW_MPA_RTR_WRITE, .ird = ST_HX_IRD,
		.ord = ST_HX_ORD,
	};
	uintptr_t old = rsw_stream_kunit_set_rtr_ms(300);
	struct socket *qs;
	struct st_hx *x;
	struct ib_wc wc;

	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, st_rtr_ms_restore,
							(void *)old), 0);
	x = st_hx_prepare(test, true, false, &qs);
	st_attach(test, x->e, qs, &conn, false);
	rsw_stream_start(to_rsw_qp(x->e->qp));
	if (rtr_after_ms < 0) {
		/* Waits for closed() (once: a completion) and checks the end. */
		st_expect_eof(test, x);
		st_hx_check_end_vendor(test, x, IB_WC_WR_FLUSH_ERR, 0, 0);
		KUNIT_EXPECT_EQ(test, x->e->closed_status, -ETIMEDOUT);
		return;
	}
	msleep(rtr_after_ms);
	st_write(x, RSW_STAG_RTR, 0, 0);
	st_send(x, RSW_OP_SEND, 1, 0, 8, 0, NULL);
	KUNIT_ASSERT_EQ(test, st_send_all(x->raw, x->frame, x->frame_len),
			(int)x->frame_len);
	KUNIT_ASSERT_TRUE(test, st_poll(x->e->rcq, &wc, ST_WAIT_MS));
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 8);
	msleep(400);		/* past the deadline */
	KUNIT_EXPECT_EQ(test, st_state(test, x->e), IB_QPS_RTS);
	KUNIT_EXPECT_EQ(test, atomic_read(&x->e->closed_calls), 0);
}

static void st_rtr_never(struct kunit *test)
{
	st_rtr_deadline(test, -1);
}

static void st_rtr_late(struct kunit *test)
{
	st_rtr_deadline(test, 150);
}

/*
 * The QP as peer-to-peer initiator with a Read RTR that the raw responder
 * reads and never answers, the deadline lowered to 300 ms: the RTR Read
 * held our only ORD credit and every Read behind it, so the stream ends
 * abortively (-ETIMEDOUT) with the QP in ERROR instead of waiting forever.
 */
static void st_rtr_read_unanswered(struct kunit *test)
{
	uintptr_t old = rsw_stream_kunit_set_rtr_ms(300);
	u8 *t = kunit_kzalloc(test, 256, GFP_KERNEL);
	const union rsw_hdr *th = (const void *)t;
	struct st_hx *x;

	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, st_rtr_ms_restore,
							(void *)old), 0);
	KUNIT_ASSERT_NOT_NULL(test, t);
	x = st_hx_up_rtr(test, true, false, RSW_MPA_RTR_READ);
	KUNIT_ASSERT_GE_MSG(test, st_read_fpdu(test, x, t, 256), 0,
			    "no RTR came");
	KUNIT_EXPECT_EQ(test, rsw_rdmap_opcode(&th->c), RSW_OP_READ_REQ);
	st_expect_eof(test, x);
	st_hx_check_end_vendor(test, x, IB_WC_WR_FLUSH_ERR, 0, 0);
	KUNIT_EXPECT_EQ(test, x->e->closed_status, -ETIMEDOUT);
}

/*
 * modify_qp to SQE, the iWARP verbs' TERMINATE state: the QP sends a
 * Terminate (RDMAP Local Catastrophic Error, neither header), then ends in
 * ERROR with its receives flushed carrying that cause.
 */
static void st_qp_to_sqe(struct kunit *test)
{
	struct st_hx *x = st_hx_up(test, true, false);
	u8 *t = st_peer_first(test, x);
	const struct rsw_hdr_term *th = (const void *)t;
	struct ib_qp_attr attr = { .qp_state = IB_QPS_SQE };
	struct rsw_stream_stats ss;

	KUNIT_ASSERT_EQ(test, ib_modify_qp(x->e->qp, &attr, IB_QP_STATE), 0);
	KUNIT_ASSERT_GT_MSG(test, st_read_fpdu(test, x, t, 256), 0,
			    "no Terminate came");
	KUNIT_EXPECT_EQ(test, rsw_rdmap_opcode(&th->ddp.c), RSW_OP_TERMINATE);
	KUNIT_EXPECT_EQ(test, rsw_term_layer(&th->term), RSW_TERM_LAYER_RDMAP);
	KUNIT_EXPECT_EQ(test, rsw_term_etype(&th->term),
			RSW_RDMAP_ET_CATASTROPHIC);
	KUNIT_EXPECT_FALSE(test, rsw_term_d(&th->term));
	KUNIT_EXPECT_FALSE(test, rsw_term_r(&th->term));
	kernel_sock_shutdown(x->raw, SHUT_WR);
	st_hx_check_end_vendor(test, x, IB_WC_WR_FLUSH_ERR, 0,
			       st_term_ve(RSW_TERM_LAYER_RDMAP,
					  RSW_RDMAP_ET_CATASTROPHIC, 0));
	ss = st_stats(test, x->e);
	KUNIT_EXPECT_EQ(test, ss.term_sent, 1);
	KUNIT_EXPECT_EQ(test, ss.term_rcvd, 0);
}

/*
 * After the QP's Terminate: the raw peer closes, the QP ends in ERROR, WR
 * 9 completed in error (@status, or any error for -1), @res untouched.
 */
static void st_peer_term_end(struct kunit *test, struct st_hx *x,
			     const void *res, int status)
{
	struct ib_wc wc;

	kernel_sock_shutdown(x->raw, SHUT_WR);
	KUNIT_EXPECT_TRUE_MSG(test, st_wait_closed(x->e), "closed() not called");
	KUNIT_EXPECT_EQ(test, st_state(test, x->e), IB_QPS_ERR);
	KUNIT_ASSERT_TRUE(test, st_poll(x->e->scq, &wc, ST_WAIT_MS));
	KUNIT_EXPECT_EQ(test, wc.wr_id, 9);
	if (status < 0)
		KUNIT_EXPECT_NE(test, wc.status, IB_WC_SUCCESS);
	else
		KUNIT_EXPECT_EQ(test, wc.status, status);
	KUNIT_EXPECT_TRUE(test, st_all(res, 8, ST_GUARD));
}

static void st_peer_bad_resp(struct kunit *test)
{
	const struct st_resp_case *c = test->param_value;
	struct st_hx *x = st_hx_up(test, true, false);
	struct st_lbuf rb = st_lbuf_new(test, 8);
	u8 *t = st_peer_first(test, x);
	const struct rsw_hdr_term *th = (const void *)t;

	st_resp_post(test, x, c->read, (u64 *)rb.base);
	KUNIT_ASSERT_GT(test, st_read_fpdu(test, x, t, 256), 0);
	KUNIT_ASSERT_EQ(test, rsw_rdmap_opcode(&th->ddp.c),
			c->read ? RSW_OP_READ_REQ : RSW_OP_ATOMIC_REQ);
	c->answer(x, t, (u64)(uintptr_t)rb.base);
	KUNIT_ASSERT_EQ(test, st_send_all(x->raw, x->frame, x->frame_len),
			(int)x->frame_len);
	KUNIT_ASSERT_GT_MSG(test, st_read_fpdu(test, x, t, 256), 0,
			    "no Terminate came back");
	KUNIT_EXPECT_EQ(test, rsw_rdmap_opcode(&th->ddp.c), RSW_OP_TERMINATE);
	KUNIT_EXPECT_EQ(test, rsw_term_layer(&th->term), c->layer);
	KUNIT_EXPECT_EQ(test, rsw_term_etype(&th->term), c->etype);
	KUNIT_EXPECT_EQ(test, rsw_term_ecode(&th->term), c->ecode);
	KUNIT_EXPECT_TRUE(test, rsw_term_d(&th->term));
	st_peer_term_end(test, x, rb.base, -1);
	KUNIT_EXPECT_EQ(test, st_stats(test, x->e).term_sent, 1);
}

/*
 * Regression: a LOCAL_INV posted with IB_SEND_FENCE behind a Read ran as
 * soon as it was taken.  The raw peer withholds the Read Response: the
 * invalidate must wait (nothing completes, the MR stays valid) until the
 * Read completed, then run.
 */
static void st_peer_fenced_local_inv(struct kunit *test)
{
	struct st_hx *x = st_hx_up(test, true, false);
	struct st_lbuf rb = st_lbuf_new(test, 8);
	struct st_mr *m = st_mr_new(test, st.pd, 4096);
	u8 *t = st_peer_first(test, x);
	const struct rsw_hdr_rreq *rq = (const void *)t;
	union rsw_hdr h;

	st_mr_reg_direct(test, m, st.pd, IB_ACCESS_LOCAL_WRITE |
			 IB_ACCESS_REMOTE_WRITE);
	st_resp_post(test, x, true, (u64 *)rb.base);
	KUNIT_ASSERT_GT(test, st_read_fpdu(test, x, t, 256), 0);
	KUNIT_ASSERT_EQ(test, rsw_rdmap_opcode(&rq->ddp.c), RSW_OP_READ_REQ);
	st_post_send(test, x->e, 10, IB_WR_LOCAL_INV, IB_SEND_FENCE, NULL, 0,
		     m->mr->rkey);
	st_cq_empty(test, x->e->scq, "fenced LOCAL_INV, Read outstanding");
	KUNIT_EXPECT_EQ(test, st_mr_check(st.pd, m->mr->rkey, m->mr->iova, 1,
					  IB_ACCESS_REMOTE_WRITE), RSW_MR_OK);

	st_hdr_tagged(&h, RSW_OP_READ_RESP, be32_to_cpu(rq->rreq.sink_stag),
		      be64_to_cpu(rq->rreq.sink_to));
	st_emit(x, &h, sizeof(h.tagged), 8, NULL);
	KUNIT_ASSERT_EQ(test, st_send_all(x->raw, x->frame, x->frame_len),
			(int)x->frame_len);
	st_wc(test, x->e->scq, 9, IB_WC_SUCCESS, IB_WC_RDMA_READ, NULL);
	st_wc(test, x->e->scq, 10, IB_WC_SUCCESS, IB_WC_LOCAL_INV, NULL);
	KUNIT_EXPECT_EQ(test, st_mr_check(st.pd, m->mr->rkey, m->mr->iova, 1,
					  IB_ACCESS_REMOTE_WRITE),
			RSW_MR_ERR_STATE);
}

/*
 * A request the requester cannot make (RFC 5040 section 7.1 rule 1, RFC
 * 7306 section 8.1 rule 1): the WR completes in error and a Terminate goes
 * to the peer in its place, RDMAP Local Catastrophic Error with neither
 * header; the QP ends in ERROR and the local buffer is untouched.
 */
struct st_local_case {
	const char *name;
	enum ib_wr_opcode op;
	u64 raddr;
	bool bad_lkey;			/* the local SGE's lkey is no MR */
	bool ord0;			/* the connection has ORD 0 */
	enum ib_wc_status status;
};

static const struct st_local_case st_local_cases[] = {
	{ "atomic: misaligned target", IB_WR_ATOMIC_FETCH_AND_ADD, 0x1004,
	  false, false, IB_WC_LOC_QP_OP_ERR },
	{ "atomic: result buffer of no MR", IB_WR_ATOMIC_FETCH_AND_ADD, 0x1000,
	  true, false, IB_WC_LOC_PROT_ERR },
	{ "Send: SGE of no MR", IB_WR_SEND, 0, true, false,
	  IB_WC_LOC_PROT_ERR },
	{ "Read: ORD 0", IB_WR_RDMA_READ, 0x1000, false, true,
	  IB_WC_LOC_QP_OP_ERR },
	{ "atomic: ORD 0", IB_WR_ATOMIC_FETCH_AND_ADD, 0x1000, false, true,
	  IB_WC_LOC_QP_OP_ERR },
};

KUNIT_ARRAY_PARAM_DESC(st_local, st_local_cases, name);

static void st_local_post(struct kunit *test, struct st_hx *x,
			  const struct st_local_case *c, u64 *res)
{
	struct ib_sge sge = st_sge(st.pd, res, sizeof(u64));
	struct ib_atomic_wr wr = {
		.wr = { .wr_id = 9, .opcode = c->op, .sg_list = &sge,
			.num_sge = 1, .send_flags = IB_SEND_SIGNALED },
		.remote_addr = c->raddr, .rkey = 0x00424201, .compare_add = 1,
	};
	struct ib_rdma_wr rd = {
		.wr = wr.wr, .remote_addr = c->raddr, .rkey = 0x00424201,
	};

	struct ib_send_wr next = {
		.wr_id = 10, .opcode = IB_WR_SEND, .send_flags = IB_SEND_SIGNALED,
	};

	if (c->bad_lkey)
		sge.lkey = 0x00777700;
	/* A Send behind it, flushed with the Terminate's cause. */
	wr.wr.next = &next;
	rd.wr.next = &next;
	if (c->op == IB_WR_RDMA_READ)
		KUNIT_ASSERT_EQ(test, ib_post_send(x->e->qp, &rd.wr, NULL), 0);
	else
		KUNIT_ASSERT_EQ(test, ib_post_send(x->e->qp, &wr.wr, NULL), 0);
}

static void st_peer_local_term(struct kunit *test)
{
	const struct st_local_case *c = test->param_value;
	struct st_hx *x = st_hx_up_fill(test, true, false, 0, NULL, ST_HX_IRD,
					c->ord0 ? 0 : ST_HX_ORD, false);
	struct st_lbuf rb = st_lbuf_new(test, 8);
	u8 *t = st_peer_first(test, x);
	const struct rsw_hdr_term *th = (const void *)t;
	struct rsw_stream_stats ss;
	struct ib_wc wc;

	st_local_post(test, x, c, (u64 *)rb.base);
	KUNIT_ASSERT_GT_MSG(test, st_read_fpdu(test, x, t, 256), 0,
			    "no Terminate came");
	KUNIT_EXPECT_EQ(test, rsw_rdmap_opcode(&th->ddp.c), RSW_OP_TERMINATE);
	KUNIT_EXPECT_EQ(test, rsw_term_layer(&th->term), RSW_TERM_LAYER_RDMAP);
	KUNIT_EXPECT_EQ(test, rsw_term_etype(&th->term),
			RSW_RDMAP_ET_CATASTROPHIC);
	KUNIT_EXPECT_FALSE(test, rsw_term_d(&th->term));
	KUNIT_EXPECT_FALSE(test, rsw_term_r(&th->term));
	st_peer_term_end(test, x, rb.base, c->status);
	KUNIT_ASSERT_TRUE(test, st_poll(x->e->scq, &wc, ST_WAIT_MS));
	KUNIT_EXPECT_EQ(test, wc.wr_id, 10);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_WR_FLUSH_ERR);
	KUNIT_EXPECT_EQ(test, wc.vendor_err,
			st_term_ve(RSW_TERM_LAYER_RDMAP,
				   RSW_RDMAP_ET_CATASTROPHIC, 0));
	ss = st_stats(test, x->e);
	KUNIT_EXPECT_EQ(test, ss.term_sent, 1);
	KUNIT_EXPECT_EQ(test, ss.term.layer, RSW_TERM_LAYER_RDMAP);
	KUNIT_EXPECT_EQ(test, ss.term.etype, RSW_RDMAP_ET_CATASTROPHIC);
}

/*
 * Regression: our Terminate while TCP holds part of an FPDU.  The raw peer
 * reads nothing, so a large RDMA Write stops mid-FPDU on a full socket
 * (part of an FPDU in TCP, the sink's skip); then the peer sends a bad
 * FPDU, or the QP is moved to SQE.  RFC 5040 section 7.1 wants the
 * Terminate sent, but the stream skipped it ("no place to put it"): the
 * peer got the rest of the Write and a reset.  Now, when the peer reads,
 * it finds the rest of that FPDU only, then the Terminate, then our FIN;
 * the Write completes with a flush error carrying the cause.
 *
 * With @linger, an orderly close comes first (SQD): the Write cannot
 * finish, so the close reaches LINGER at its deadline, our FIN not sent;
 * SQE there must behave as in RUN (a Terminate before the FIN,
 * IB_EVENT_QP_FATAL).  Before, LINGER ignored SQE: no Terminate, and the
 * linger timeout's reset.
 */
struct st_mid_case {
	const char *name;
	bool sqe;		/* the QP to SQE, else a bad FPDU */
	u8 layer, etype, ecode;
	bool linger;		/* SQD first, SQE once in LINGER */
};

static const struct st_mid_case st_mid_cases[] = {
	{ "bad FPDU: write STag of no MR", false,
	  ST_DDP_T, RSW_DDP_EC_T_INVALID_STAG },
	{ "QP to SQE", true, RSW_TERM_LAYER_RDMAP, RSW_RDMAP_ET_CATASTROPHIC, 0 },
	{ "QP to SQE in the LINGER of an orderly close", true,
	  RSW_TERM_LAYER_RDMAP, RSW_RDMAP_ET_CATASTROPHIC, 0, true },
};

KUNIT_ARRAY_PARAM_DESC(st_mid, st_mid_cases, name);

#define ST_MID_LEN	SZ_1M		/* far more than both buffers hold */
#define ST_MID_BUF	(72 * 1024)	/* an FPDU at the loopback MSS */
#define ST_MID_RADDR	0x10000ULL

static void st_skb_frags_restore(void *old)
{
	WRITE_ONCE(rsw_max_skb_frags, (int)(long)old);
}

/*
 * TCP takes part of an FPDU only where a new skb starts inside it: the
 * socket sink aligns FPDUs with segments, so with today's loopback MSS an
 * FPDU is an skb of its own, taken whole or not at all.  One fragment per
 * skb (net.core.max_skb_frags, restored after the test) splits every FPDU
 * over several skbs, each checked against the send buffer, so a full one
 * stops TX inside an FPDU again.
 */
static void st_small_skbs(struct kunit *test)
{
	long old = READ_ONCE(rsw_max_skb_frags);

	WRITE_ONCE(rsw_max_skb_frags, 1);
	KUNIT_ASSERT_EQ(test,
			kunit_add_action_or_reset(test, st_skb_frags_restore,
						  (void *)old), 0);
}

/* Lock @sk's send buffer at @snd octets. */
static void st_sock_bufs(struct sock *sk, int snd)
{
	lock_sock(sk);
	sk->sk_userlocks |= SOCK_SNDBUF_LOCK;
	WRITE_ONCE(sk->sk_sndbuf, snd);
	release_sock(sk);
}

/*
 * Wait until the stream's TX sits still inside a message, with @mid in the
 * middle of an FPDU (part of it in TCP: ts.skip): the send buffer full,
 * the raw peer's window shut (so nothing can move on), unchanged for
 * ST_QUIET_MS.  The message offset of the next FPDU (the one in part with
 * @mid); the sink's skip then in *@skipp.
 */
static u32 st_wait_tx_still(struct kunit *test, struct rsw_stream *s,
			    bool mid, u32 *skipp)
{
	unsigned long end = jiffies + msecs_to_jiffies(ST_WAIT_MS);
	struct sock *sk = s->sock->sk;
	u32 skip, off, done, last_skip = 0, last_off = 0;
	bool full;

	for (;;) {
		lock_sock(sk);
		skip = s->ts.skip;
		off = s->tx.off;
		done = s->tx.msg.done;
		full = !sk_stream_memory_free(sk) && !tcp_sk(sk)->snd_wnd;
		release_sock(sk);
		/* Out in part: the FPDU with @mid, else the message. */
		if ((mid ? skip : done) && full && skip == last_skip &&
		    off == last_off) {
			*skipp = skip;
			return done;
		}
		last_skip = skip;
		last_off = off;
		KUNIT_ASSERT_TRUE_MSG(test, time_before(jiffies, end),
				      "TX never stopped%s: skip %u, full %d",
				      mid ? " mid-FPDU" : "", skip, full);
		msleep(ST_QUIET_MS);
	}
}

static u32 st_wait_mid_fpdu(struct kunit *test, struct rsw_stream *s)
{
	u32 skip;

	return st_wait_tx_still(test, s, true, &skip);
}

/*
 * Read the Write's FPDUs from the raw end, checking them against @src,
 * up to the first FPDU of another kind, left in @buf; its ULPDU length.
 * *@last_to: the TO of the last Write FPDU read; *@gotp (if set): the
 * Write octets read.
 */
static int st_mid_drain_write(struct kunit *test, struct st_hx *x, u8 *buf,
			      const u8 *src, u64 *last_to, u32 *gotp)
{
	const union rsw_hdr *h = (const void *)buf;
	const u32 hl = sizeof(struct rsw_ddp_tagged);
	u32 got = 0, plen;
	int ulpdu;

	*last_to = 0;
	for (;;) {
		ulpdu = st_read_fpdu(test, x, buf, ST_MID_BUF);
		KUNIT_ASSERT_GE_MSG(test, ulpdu, 0, "after %u Write octets: %d",
				    got, ulpdu);
		if (rsw_rdmap_opcode(&h->c) != RSW_OP_WRITE) {
			if (gotp)
				*gotp = got;
			return ulpdu;
		}
		KUNIT_ASSERT_TRUE(test, rsw_ddp_tagged(&h->c));
		KUNIT_ASSERT_FALSE_MSG(test, rsw_ddp_last(&h->c),
				       "the whole Write went out");
		*last_to = be64_to_cpu(h->tagged.to);
		KUNIT_ASSERT_EQ(test, *last_to, ST_MID_RADDR + got);
		plen = ulpdu + RSW_MPA_HDR_LEN - hl;
		KUNIT_ASSERT_LE(test, got + plen, ST_MID_LEN);
		KUNIT_ASSERT_TRUE_MSG(test, !memcmp(buf + hl, src + got, plen),
				      "Write payload at %u", got);
		got += plen;
	}
}

/*
 * An orderly close (SQD) that cannot finish the message in progress: wait
 * until its deadline took the stream to LINGER, our FIN not sent.
 */
static void st_close_to_linger(struct kunit *test, struct st_hx *x,
			       struct rsw_stream *s)
{
	unsigned long end = jiffies + msecs_to_jiffies(ST_WAIT_MS);

	KUNIT_ASSERT_EQ(test, st_modify(x->e, IB_QPS_SQD), 0);
	while (READ_ONCE(s->phase) != RSW_STREAM_LINGER) {
		KUNIT_ASSERT_TRUE_MSG(test, time_before(jiffies, end),
				      "the close never reached LINGER");
		msleep(5);
	}
	KUNIT_ASSERT_FALSE(test, READ_ONCE(s->fin_sent));
}

/* The QP to SQE; with @linger, SQD first and SQE once in LINGER. */
static void st_mid_sqe(struct kunit *test, struct st_hx *x,
		       struct rsw_stream *s, bool linger)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_SQE };

	if (linger)
		st_close_to_linger(test, x, s);
	KUNIT_ASSERT_EQ(test, ib_modify_qp(x->e->qp, &attr, IB_QP_STATE), 0);
}

static void st_peer_term_mid_fpdu(struct kunit *test)
{
	const struct st_mid_case *c = test->param_value;
	struct rsw_mpa_conn conn = {
		.rev = RSW_MPA_REV_2, .crc = true, .enhanced = true,
		.ird = ST_HX_IRD, .ord = ST_HX_ORD,
	};
	struct st_lbuf src = st_lbuf_new(test, ST_MID_LEN);
	u8 *buf = st_vmalloc(test, ST_MID_BUF);
	const struct rsw_hdr_term *th = (const void *)buf;
	struct rsw_stream_stats ss;
	struct rsw_stream *s;
	struct socket *qs;
	struct st_hx *x;
	struct ib_sge sge;
	struct ib_wc wc;
	u64 last_to;
	u32 done0;
	u8 b;

	x = st_hx_prepare(test, true, false, &qs);
	/* The raw end's receive buffer stays as it is: it reads nothing. */
	st_sock_bufs(qs->sk, 32 * 1024);
	st_small_skbs(test);
	st_attach(test, x->e, qs, &conn, false);
	rsw_stream_start(to_rsw_qp(x->e->qp));
	s = to_rsw_qp(x->e->qp)->stream;
	st_peer_first(test, x);

	st_pattern(src.base, ST_MID_LEN, 5);
	sge = st_sge(st.pd, src.base, ST_MID_LEN);
	st_post_rdma(test, x->e, 9, IB_WR_RDMA_WRITE, 0, &sge, 1, ST_MID_RADDR,
		     0x00424201, 0);
	done0 = st_wait_mid_fpdu(test, s);

	if (c->sqe) {
		st_mid_sqe(test, x, s, c->linger);
	} else {
		st_b_write_no_mr(x);
		KUNIT_ASSERT_EQ(test, st_send_all(x->raw, x->frame,
						  x->frame_len),
				(int)x->frame_len);
	}
	/* The rest of the partial FPDU, the Terminate, the FIN. */
	KUNIT_ASSERT_GE(test, st_mid_drain_write(test, x, buf, src.base,
						 &last_to, NULL) +
			RSW_MPA_HDR_LEN,
			(int)sizeof(struct rsw_hdr_term));
	/* Only the partial FPDU was finished: none of the Write after it. */
	KUNIT_EXPECT_EQ(test, last_to, ST_MID_RADDR + done0);
	KUNIT_EXPECT_EQ(test, rsw_rdmap_opcode(&th->ddp.c), RSW_OP_TERMINATE);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(th->ddp.qn), RSW_QN_TERMINATE);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(th->ddp.msn), 1);
	KUNIT_EXPECT_EQ(test, rsw_term_layer(&th->term), c->layer);
	KUNIT_EXPECT_EQ(test, rsw_term_etype(&th->term), c->etype);
	KUNIT_EXPECT_EQ(test, rsw_term_ecode(&th->term), c->ecode);
	KUNIT_EXPECT_EQ(test, rsw_term_d(&th->term), !c->sqe);
	KUNIT_EXPECT_EQ_MSG(test, st_recv_all(x->raw, &b, 1), 0,
			    "no FIN after the Terminate");

	kernel_sock_shutdown(x->raw, SHUT_WR);
	KUNIT_EXPECT_TRUE_MSG(test, st_wait_closed(x->e), "closed() not called");
	KUNIT_EXPECT_EQ(test, st_state(test, x->e), IB_QPS_ERR);
	KUNIT_ASSERT_TRUE(test, st_poll(x->e->scq, &wc, ST_WAIT_MS));
	KUNIT_EXPECT_EQ(test, wc.wr_id, 9);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_WR_FLUSH_ERR);
	KUNIT_EXPECT_EQ(test, wc.vendor_err,
			st_term_ve(c->layer, c->etype, c->ecode));
	ss = st_stats(test, x->e);
	KUNIT_EXPECT_EQ(test, ss.term_sent, 1);
	KUNIT_EXPECT_EQ(test, ss.term.layer, c->layer);
	KUNIT_EXPECT_EQ(test, ss.term.etype, c->etype);
	KUNIT_EXPECT_EQ(test, ss.term.ecode, c->ecode);
	if (c->sqe) {
		KUNIT_EXPECT_TRUE(test, test_bit(IB_EVENT_QP_FATAL,
						 &x->e->events));
		KUNIT_EXPECT_EQ(test, x->e->closed_status, -ECONNABORTED);
	}
}

/*
 * The QP as peer-to-peer initiator against the raw peer: its first FPDU is
 * the zero-length RTR of the negotiated type (a Read is answered), then
 * Sends flow both ways with the right MSNs.
 */
static void st_peer_rtr_check(struct kunit *test, struct st_hx *x,
			      const u8 *rtr)
{
	u8 *t = kunit_kzalloc(test, 256, GFP_KERNEL);
	const union rsw_hdr *th = (const void *)t;
	u8 *buf = kunit_kzalloc(test, 64, GFP_KERNEL);
	u32 want_op, want_len, msn = 1;
	union rsw_hdr h;
	struct ib_sge sge;
	struct ib_wc wc;
	int ulpdu;

	KUNIT_ASSERT_NOT_NULL(test, t);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	switch (*rtr) {
	case RSW_MPA_RTR_WRITE:
		want_op = RSW_OP_WRITE;
		want_len = sizeof(struct rsw_ddp_tagged);
		break;
	case RSW_MPA_RTR_READ:
		want_op = RSW_OP_READ_REQ;
		want_len = sizeof(struct rsw_hdr_rreq);
		break;
	default:
		want_op = RSW_OP_SEND;
		want_len = sizeof(struct rsw_ddp_untagged);
		break;
	}
	ulpdu = st_read_fpdu(test, x, t, 256);
	KUNIT_ASSERT_GE_MSG(test, ulpdu, 0, "no RTR came");
	KUNIT_EXPECT_EQ(test, rsw_rdmap_opcode(&th->c), want_op);
	KUNIT_EXPECT_EQ(test, ulpdu + RSW_MPA_HDR_LEN, want_len);
	KUNIT_EXPECT_TRUE(test, rsw_ddp_last(&th->c));
	/* Never STag 0, which hardware may treat as special. */
	if (want_op == RSW_OP_WRITE)
		KUNIT_EXPECT_EQ(test, be32_to_cpu(th->tagged.stag),
				RSW_STAG_RTR);
	if (want_op == RSW_OP_READ_REQ) {
		KUNIT_EXPECT_EQ(test, be32_to_cpu(th->rreq.rreq.read_size), 0);
		KUNIT_EXPECT_EQ(test, be32_to_cpu(th->untagged.qn),
				RSW_QN_READ_REQ);
		KUNIT_EXPECT_EQ(test, be32_to_cpu(th->untagged.msn), 1);
		/* Answer it: a zero-length Read Response to its sink. */
		st_hdr_tagged(&h, RSW_OP_READ_RESP,
			      be32_to_cpu(th->rreq.rreq.sink_stag),
			      be64_to_cpu(th->rreq.rreq.sink_to));
		st_emit(x, &h, sizeof(h.tagged), 0, NULL);
	}
	if (want_op == RSW_OP_SEND) {
		KUNIT_EXPECT_EQ(test, be32_to_cpu(th->untagged.qn),
				RSW_QN_SEND);
		KUNIT_EXPECT_EQ(test, be32_to_cpu(th->untagged.msn), 1);
		msn = 2;	/* the RTR used our first Send MSN */
	}
	/* The peer's first Send lands in the first receive, whole. */
	st_send(x, RSW_OP_SEND, 1, 0, 40, 0, NULL);
	KUNIT_ASSERT_EQ(test, st_send_all(x->raw, x->frame, x->frame_len),
			(int)x->frame_len);
	st_wc(test, x->e->rcq, 50, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 40);
	KUNIT_EXPECT_TRUE(test, !memcmp(x->rq.base + ST_GUARD_LEN,
					x->frame + x->last_off +
					sizeof(struct rsw_ddp_untagged), 40));
	/* Our Send to the peer: next MSN, the payload, a good CRC. */
	st_pattern(buf, 24, 99);
	sge = st_sge(st.pd, buf, 24);
	st_post_send(test, x->e, 60, IB_WR_SEND, 0, &sge, 1, 0);
	st_wc(test, x->e->scq, 60, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	ulpdu = st_read_fpdu(test, x, t, 256);
	KUNIT_ASSERT_EQ(test, ulpdu + RSW_MPA_HDR_LEN,
			(int)sizeof(struct rsw_ddp_untagged) + 24);
	KUNIT_EXPECT_EQ(test, rsw_rdmap_opcode(&th->c), RSW_OP_SEND);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(th->untagged.qn), RSW_QN_SEND);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(th->untagged.msn), msn);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(th->untagged.mo), 0);
	KUNIT_EXPECT_TRUE(test, !memcmp(t + sizeof(struct rsw_ddp_untagged),
					buf, 24));
	st_cq_empty(test, x->e->scq, "send CQ");
	KUNIT_EXPECT_EQ(test, st_state(test, x->e), IB_QPS_RTS);

	KUNIT_EXPECT_EQ(test, st_modify(x->e, IB_QPS_ERR), 0);
	KUNIT_EXPECT_TRUE_MSG(test, st_wait_closed(x->e), "closed() not called");
	st_wc(test, x->e->rcq, 51, IB_WC_WR_FLUSH_ERR, -1, NULL);
	st_expect_eof(test, x);
}

/*
 * Regression (issue 10, defect 10): a QP whose stream still runs does not
 * go back to RESET, neither from CLOSING nor from ERROR: -EBUSY, the state
 * unchanged.  Once the streams reported their end, RESET is allowed.  The
 * streams are attached but not started, so they stay live (and do nothing)
 * whatever state their QPs are moved to, until rsw_stream_start().
 */
static void st_reset_live_stream(struct kunit *test)
{
	struct rsw_mpa_conn conn = {
		.rev = RSW_MPA_REV_2, .enhanced = true, .ird = 16, .ord = 16,
	};
	struct st_end *a = st_end_new(test, st.pd, false);
	struct st_end *b = st_end_new(test, st.pd, false);
	struct socket *ca, *cb;

	st_tcp_pair(test, &ca, &cb);
	st_attach(test, a, ca, &conn, true);
	st_attach(test, b, cb, &conn, false);

	KUNIT_EXPECT_EQ(test, st_modify(a, IB_QPS_SQD), 0);
	KUNIT_EXPECT_EQ(test, st_modify(a, IB_QPS_RESET), -EBUSY);
	KUNIT_EXPECT_EQ(test, st_state(test, a), IB_QPS_SQD);
	KUNIT_EXPECT_EQ(test, st_modify(b, IB_QPS_ERR), 0);
	KUNIT_EXPECT_EQ(test, st_modify(b, IB_QPS_RESET), -EBUSY);
	KUNIT_EXPECT_EQ(test, st_state(test, b), IB_QPS_ERR);

	KUNIT_EXPECT_EQ(test, st_modify(a, IB_QPS_ERR), 0);
	rsw_stream_start(to_rsw_qp(a->qp));
	rsw_stream_start(to_rsw_qp(b->qp));
	KUNIT_EXPECT_TRUE_MSG(test, st_wait_closed(a), "A not closed");
	KUNIT_EXPECT_TRUE_MSG(test, st_wait_closed(b), "B not closed");
	KUNIT_EXPECT_EQ(test, st_modify(a, IB_QPS_RESET), 0);
	KUNIT_EXPECT_EQ(test, st_modify(b, IB_QPS_RESET), 0);
	KUNIT_EXPECT_EQ(test, st_state(test, a), IB_QPS_RESET);
	KUNIT_EXPECT_EQ(test, st_state(test, b), IB_QPS_RESET);
}

static void st_peer_rtr(struct kunit *test)
{
	const u8 *rtr = test->param_value;

	st_peer_rtr_check(test, st_hx_up_rtr(test, true, false, *rtr), rtr);
}

/* Read and check the @n zeros st_fill() wrote, from the raw end. */
static void st_drain_fill(struct kunit *test, struct st_hx *x, u32 n)
{
	u8 *buf = kunit_kmalloc(test, 4096, GFP_KERNEL);
	u32 got = 0;
	int ret;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	while (got < n) {
		ret = st_recv_all(x->raw, buf, min_t(u32, n - got, 4096));
		KUNIT_ASSERT_GT_MSG(test, ret, 0, "after %u of %u octets", got,
				    n);
		KUNIT_ASSERT_TRUE(test, st_all(buf, ret, 0));
		got += ret;
	}
}

/* Wait until the stream's TX engine ran at least once. */
static void st_wait_tx(struct kunit *test, struct st_end *e)
{
	unsigned long end = jiffies + msecs_to_jiffies(ST_WAIT_MS);

	while (!st_stats(test, e).tx_calls && time_before(jiffies, end))
		msleep(2);
	KUNIT_ASSERT_GT_MSG(test, st_stats(test, e).tx_calls, 0,
			    "the stream never tried to send");
}

/*
 * Regression (issue 10, defect 6): the RTR meets a full socket (-EAGAIN).
 * It carries no WQE, yet finishing it later through the engine, or
 * flushing it at the stream's end, completed send queue ticket 0, which
 * was never taken: a WARN in qp.c (a panic under panic_on_warn) that a
 * peer causes by not reading.  Now the RTR goes out when the peer reads,
 * and then everything works as in st_peer_rtr; or, when the peer resets
 * first, the stream ends completing nothing on the send queue.
 */
struct st_rtr_full_case {
	u8 rtr;
	bool reset;	/* the peer resets instead of reading */
};

static const struct st_rtr_full_case st_rtr_full_cases[] = {
	{ RSW_MPA_RTR_WRITE, false }, { RSW_MPA_RTR_READ, false },
	{ RSW_MPA_RTR_SEND, false }, { RSW_MPA_RTR_WRITE, true },
	{ RSW_MPA_RTR_READ, true }, { RSW_MPA_RTR_SEND, true },
};

static void st_rtr_full_desc(const struct st_rtr_full_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "rtr %s, peer %s",
		 c->rtr == RSW_MPA_RTR_WRITE ? "write" :
		 c->rtr == RSW_MPA_RTR_READ ? "read" : "send",
		 c->reset ? "resets" : "reads");
}

KUNIT_ARRAY_PARAM(st_rtr_full, st_rtr_full_cases, st_rtr_full_desc);

static void st_peer_rtr_full(struct kunit *test)
{
	const struct st_rtr_full_case *c = test->param_value;
	struct st_hx *x;
	u32 filled;

	x = st_hx_up_fill(test, true, false, c->rtr, &filled, ST_HX_IRD,
			  ST_HX_ORD, false);
	st_wait_tx(test, x->e);
	/* The RTR found no room; nothing happened on the queues. */
	st_cq_empty(test, x->e->scq, "send CQ, socket full");
	KUNIT_EXPECT_EQ(test, st_state(test, x->e), IB_QPS_RTS);
	if (!c->reset) {
		st_drain_fill(test, x, filled);
		st_peer_rtr_check(test, x, &c->rtr);
		return;
	}
	st_peer_reset(test, x);
	st_cq_empty(test, x->e->scq, "send CQ");
}

/*
 * Regression (issue 10, defect 5): the linger timeout runs while the QP is
 * destroyed.  The stream's end cannot cancel a running timeout, which then
 * queues the stream's work; rsw_stream_free() used to cancel the work
 * first and wait for the timeout second, so the work it queued ran on the
 * freed stream.  The test holds the timeout (rsw_stream_kunit_stall) until
 * destroy_qp waits in rsw_stream_free(), then lets it queue the work.
 * Now destroy_qp either cancels that work before it starts or, if it
 * started (it is held before it touches the stream), waits for it.
 * Before the fix destroy_qp returned while the work was held, and freed
 * the stream under it: a use-after-free KASAN reports once the work is
 * let go (or, had the work not started yet, DEBUG_OBJECTS reports a
 * queued work freed).
 */
struct st_stall {
	atomic_t arm_linger, arm_work;
	bool note_linger;	/* a linger timeout only noted, not held */
	struct completion linger_in, linger_go, work_in, work_go;
	struct completion destroyed;
	struct ib_qp *qp;
};

static struct st_stall st_stall_ctl;

static void st_stall_fn(bool linger)
{
	struct st_stall *c = &st_stall_ctl;

	if (linger && READ_ONCE(c->note_linger)) {
		complete(&c->linger_in);
		return;
	}
	if (linger && atomic_xchg(&c->arm_linger, 0)) {
		complete(&c->linger_in);
		wait_for_completion(&c->linger_go);
	} else if (!linger && atomic_xchg(&c->arm_work, 0)) {
		complete(&c->work_in);
		wait_for_completion(&c->work_go);
	}
}

/* Nothing stays held, and the stream runs unhooked again. */
static void st_stall_off(void *unused)
{
	complete_all(&st_stall_ctl.linger_go);
	complete_all(&st_stall_ctl.work_go);
	rsw_stream_kunit_set_stall(NULL);
}

/* Hold the next linger timeout and/or work run (st_stall_fn) from now on. */
static void st_stall_arm(struct kunit *test, bool linger, bool work)
{
	struct st_stall *c = &st_stall_ctl;

	memset(c, 0, sizeof(*c));
	init_completion(&c->linger_in);
	init_completion(&c->linger_go);
	init_completion(&c->work_in);
	init_completion(&c->work_go);
	init_completion(&c->destroyed);
	atomic_set(&c->arm_linger, linger);
	atomic_set(&c->arm_work, work);
	rsw_stream_kunit_set_stall(st_stall_fn);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, st_stall_off,
							NULL), 0);
}

static bool st_wait_done(struct completion *done, unsigned int ms)
{
	return wait_for_completion_timeout(done, msecs_to_jiffies(ms)) > 0;
}

static int st_destroy_thread(void *arg)
{
	struct st_stall *c = arg;

	ib_destroy_qp(c->qp);
	complete(&c->destroyed);
	return 0;
}

static void st_linger_destroy(struct kunit *test)
{
	struct st_stall *c = &st_stall_ctl;
	struct st_hx *x = st_hx_up(test, true, false);
	struct task_struct *t;
	bool early;

	st_stall_arm(test, true, false);
	c->qp = x->e->qp;

	/* Orderly close: our FIN, then the peer's never comes. */
	KUNIT_ASSERT_EQ(test, st_modify(x->e, IB_QPS_SQD), 0);
	st_expect_eof(test, x);
	KUNIT_ASSERT_TRUE_MSG(test, st_wait_done(&c->linger_in, ST_WAIT_MS),
			      "the linger timeout never ran");

	/* destroy_qp ends the stream, then waits in rsw_stream_free(). */
	kunit_remove_action(test, st_destroy_qp, x->e->qp);
	t = kthread_run(st_destroy_thread, c, "st_destroy");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	KUNIT_EXPECT_TRUE_MSG(test, st_wait_closed(x->e), "closed() not called");
	KUNIT_EXPECT_FALSE_MSG(test, st_wait_done(&c->destroyed, ST_QUIET_MS),
			       "destroy_qp did not wait for the linger timeout");
	KUNIT_EXPECT_EQ(test, atomic_read(&x->e->closed_calls), 1);

	/* The timeout queues the work, which is held if it starts. */
	atomic_set(&c->arm_work, 1);
	complete(&c->linger_go);
	while (!completion_done(&c->work_in) && !completion_done(&c->destroyed))
		msleep(1);
	if (completion_done(&c->work_in)) {
		early = st_wait_done(&c->destroyed, ST_QUIET_MS);
		KUNIT_EXPECT_FALSE_MSG(test, early,
				       "destroy_qp freed the stream under its work");
		complete(&c->work_go);
	}
	wait_for_completion(&c->destroyed);
}

/*
 * The consumer's ERROR ends the LINGER that holds our pending Terminate.
 * As st_peer_term_mid_fpdu, the raw peer reads nothing and sends a bad
 * FPDU while TCP holds part of a Write's FPDU: the Terminate waits in
 * LINGER.  ib_drain_qp's modify to ERROR then ends the stream at once
 * (a reset), not after the linger timeout: closed() with the timeout
 * never reached (st_stall_fn notes it).  Before, the drain waited the
 * timeout out behind the abandoned WQE.
 */
static void st_peer_term_ulp_err(struct kunit *test)
{
	struct rsw_mpa_conn conn = {
		.rev = RSW_MPA_REV_2, .crc = true, .enhanced = true,
		.ird = ST_HX_IRD, .ord = ST_HX_ORD,
	};
	struct st_lbuf src = st_lbuf_new(test, ST_MID_LEN);
	unsigned long end = jiffies + msecs_to_jiffies(ST_WAIT_MS);
	struct rsw_stream *s;
	struct socket *qs;
	struct st_hx *x;
	struct ib_sge sge;
	struct ib_wc wc;

	/* Noted, not held: without the cut the test fails, never hangs. */
	st_stall_arm(test, false, false);
	WRITE_ONCE(st_stall_ctl.note_linger, true);
	x = st_hx_prepare(test, true, false, &qs);
	st_sock_bufs(qs->sk, 32 * 1024);
	st_small_skbs(test);
	st_attach(test, x->e, qs, &conn, false);
	rsw_stream_start(to_rsw_qp(x->e->qp));
	s = to_rsw_qp(x->e->qp)->stream;
	st_peer_first(test, x);
	st_pattern(src.base, ST_MID_LEN, 6);
	sge = st_sge(st.pd, src.base, ST_MID_LEN);
	st_post_rdma(test, x->e, 9, IB_WR_RDMA_WRITE, 0, &sge, 1, ST_MID_RADDR,
		     0x00424201, 0);
	st_wait_mid_fpdu(test, s);
	st_b_write_no_mr(x);
	KUNIT_ASSERT_EQ(test, st_send_all(x->raw, x->frame, x->frame_len),
			(int)x->frame_len);
	/* Our Terminate decided: the QP in ERROR, the stream in LINGER. */
	while (st_state(test, x->e) != IB_QPS_ERR) {
		KUNIT_ASSERT_TRUE_MSG(test, time_before(jiffies, end),
				      "no Terminate decided");
		msleep(5);
	}
	KUNIT_ASSERT_EQ(test, st_modify(x->e, IB_QPS_ERR), 0);
	KUNIT_EXPECT_TRUE_MSG(test, st_wait_closed(x->e), "closed() not called");
	KUNIT_EXPECT_FALSE_MSG(test, completion_done(&st_stall_ctl.linger_in),
			       "the stream ended by its linger timeout");
	KUNIT_ASSERT_TRUE(test, st_poll(x->e->scq, &wc, ST_WAIT_MS));
	KUNIT_EXPECT_EQ(test, wc.wr_id, 9);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_WR_FLUSH_ERR);
	KUNIT_EXPECT_EQ(test, wc.vendor_err,
			st_term_ve(ST_DDP_T, RSW_DDP_EC_T_INVALID_STAG));
	/* It never was all in TCP: not counted as sent. */
	KUNIT_EXPECT_EQ(test, st_stats(test, x->e).term_sent, 0);
}

/*
 * The peer's FIN in RUN while TCP holds part of an FPDU of ours and the
 * peer's window stays shut: the FPDU cannot be finished, so the stream
 * must end with a reset.  Before, it closed in order: the peer read a
 * truncated FPDU followed by a clean EOF (a malformed stream).
 */
static void st_peer_fin_mid_fpdu(struct kunit *test)
{
	struct rsw_mpa_conn conn = {
		.rev = RSW_MPA_REV_2, .crc = true, .enhanced = true,
		.ird = ST_HX_IRD, .ord = ST_HX_ORD,
	};
	struct st_lbuf src = st_lbuf_new(test, ST_MID_LEN);
	u8 *buf = st_vmalloc(test, ST_MID_BUF);
	const union rsw_hdr *h = (const void *)buf;
	struct socket *qs;
	struct st_hx *x;
	struct ib_sge sge;
	struct ib_wc wc;
	int ret, writes = 0;
	u8 b;

	x = st_hx_prepare(test, true, false, &qs);
	st_sock_bufs(qs->sk, 32 * 1024);
	st_small_skbs(test);
	st_attach(test, x->e, qs, &conn, false);
	rsw_stream_start(to_rsw_qp(x->e->qp));
	st_peer_first(test, x);
	st_pattern(src.base, ST_MID_LEN, 7);
	sge = st_sge(st.pd, src.base, ST_MID_LEN);
	st_post_rdma(test, x->e, 9, IB_WR_RDMA_WRITE, 0, &sge, 1, ST_MID_RADDR,
		     0x00424201, 0);
	st_wait_mid_fpdu(test, to_rsw_qp(x->e->qp)->stream);

	kernel_sock_shutdown(x->raw, SHUT_WR);
	KUNIT_EXPECT_TRUE_MSG(test, st_wait_closed(x->e), "closed() not called");
	KUNIT_ASSERT_TRUE(test, st_poll(x->e->scq, &wc, ST_WAIT_MS));
	KUNIT_EXPECT_EQ(test, wc.wr_id, 9);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_WR_FLUSH_ERR);
	/* Whole Write FPDUs, then the truncated one, then the reset. */
	while ((ret = st_read_fpdu(test, x, buf, ST_MID_BUF)) >= 0) {
		KUNIT_ASSERT_EQ(test, rsw_rdmap_opcode(&h->c), RSW_OP_WRITE);
		writes++;
	}
	/*
	 * What TCP had not sent when the reset went is gone: the peer's
	 * stream stops inside the FPDU (-ENODATA) or at a boundary; either
	 * way the next read is the reset, never a clean EOF.
	 */
	if (ret == -ENODATA)
		ret = st_recv_all(x->raw, &b, 1);
	KUNIT_EXPECT_EQ_MSG(test, ret, -ECONNRESET,
			    "after %d Write FPDUs (0: a FIN after a truncated FPDU)",
			    writes);
}

/*
 * Issue 14 item 6 (RFC 5040 section 7.1 rule 1): the memory of a message
 * in progress fails its check after its first FPDUs went out (its MR
 * invalidated while TCP is full: the raw peer reads nothing).  The Write
 * completes LOC_PROT_ERR and the Send behind it flushes with the cause,
 * RDMAP Local Catastrophic Error.  TX stopped at an FPDU boundary, the
 * peer then reads the Write's FPDUs (none with L), a Terminate with that
 * cause and neither header, then our FIN; before, the stream reset the
 * connection.  The same in the LINGER of an orderly close that could not
 * finish the Write (SQD first, the memory fails once in LINGER): the
 * Terminate before our FIN.  Stopped inside an FPDU (one fragment per
 * skb, st_small_skbs()), that FPDU cannot be finished without its memory
 * and nothing may follow it: the Write's FPDUs, then the reset, no
 * Terminate.
 */
struct st_fault_case {
	const char *name;
	bool mid;		/* TX stopped inside an FPDU */
	bool linger;		/* SQD first, the MR invalidated in LINGER */
};

static const struct st_fault_case st_fault_cases[] = {
	{ "at an FPDU boundary: Terminate, FIN", false, false },
	{ "in the LINGER of an orderly close: Terminate, FIN", false, true },
	{ "inside an FPDU: reset", true, false },
};

KUNIT_ARRAY_PARAM_DESC(st_fault, st_fault_cases, name);

/*
 * A Write of ST_MID_LEN octets from MR @m (Send 10 behind it) on @x's
 * stream; once TX sits still (inside an FPDU with c->mid, else at a
 * boundary), and with c->linger an orderly close reached LINGER, @m is
 * invalidated.  The message offset TX stopped at.
 */
static u32 st_fault_write(struct kunit *test, struct st_hx *x,
			  struct st_mr *m, const struct st_fault_case *c)
{
	struct rsw_stream *s = to_rsw_qp(x->e->qp)->stream;
	struct ib_sge sge = {
		.addr = m->mr->iova, .length = ST_MID_LEN, .lkey = m->mr->lkey,
	};
	u32 done, skip;

	st_mr_reg_direct(test, m, st.pd, IB_ACCESS_LOCAL_WRITE);
	st_pattern(st_mr_ptr(m, 0), ST_MID_LEN, 8);
	st_post_rdma(test, x->e, 9, IB_WR_RDMA_WRITE, 0, &sge, 1, ST_MID_RADDR,
		     0x00424201, 0);
	st_post_send(test, x->e, 10, IB_WR_SEND, 0, NULL, 0, 0);
	done = st_wait_tx_still(test, s, c->mid, &skip);
	KUNIT_ASSERT_EQ_MSG(test, !!skip, c->mid, "TX stopped with skip %u",
			    skip);
	KUNIT_ASSERT_LT(test, done, (u32)ST_MID_LEN);
	if (c->linger)
		st_close_to_linger(test, x, s);
	KUNIT_ASSERT_EQ(test, rsw_mr_invalidate_local(st.rsw, st.pd, 0,
						      m->mr->lkey, NULL),
			RSW_MR_OK);
	return done;
}

/* At a boundary: the Write's FPDUs up to @done, the Terminate, our FIN. */
static void st_fault_term_read(struct kunit *test, struct st_hx *x,
			       struct st_mr *m, u32 done)
{
	u8 *buf = st_vmalloc(test, ST_MID_BUF);
	const struct rsw_hdr_term *th = (const void *)buf;
	u64 last_to;
	int ulpdu;
	u32 got;
	u8 b;

	ulpdu = st_mid_drain_write(test, x, buf, st_mr_ptr(m, 0), &last_to,
				   &got);
	KUNIT_EXPECT_EQ_MSG(test, got, done, "Write octets before the Terminate");
	KUNIT_ASSERT_EQ(test, rsw_rdmap_opcode(&th->ddp.c), RSW_OP_TERMINATE);
	/* Neither header: the Terminate's own header is all. */
	KUNIT_EXPECT_EQ(test, ulpdu + RSW_MPA_HDR_LEN,
			(int)sizeof(struct rsw_hdr_term));
	KUNIT_EXPECT_EQ(test, be32_to_cpu(th->ddp.qn), RSW_QN_TERMINATE);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(th->ddp.msn), 1);
	KUNIT_EXPECT_EQ(test, rsw_term_layer(&th->term), RSW_TERM_LAYER_RDMAP);
	KUNIT_EXPECT_EQ(test, rsw_term_etype(&th->term),
			RSW_RDMAP_ET_CATASTROPHIC);
	KUNIT_EXPECT_EQ(test, rsw_term_ecode(&th->term), 0);
	KUNIT_EXPECT_FALSE(test, rsw_term_m(&th->term));
	KUNIT_EXPECT_FALSE(test, rsw_term_d(&th->term));
	KUNIT_EXPECT_FALSE(test, rsw_term_r(&th->term));
	KUNIT_EXPECT_EQ_MSG(test, st_recv_all(x->raw, &b, 1), 0,
			    "no FIN after the Terminate");
}

/* Inside an FPDU: the Write's FPDUs, then the reset; no Terminate. */
static void st_fault_reset_read(struct kunit *test, struct st_hx *x)
{
	u8 *buf = st_vmalloc(test, ST_MID_BUF);
	const union rsw_hdr *h = (const void *)buf;
	int ret, writes = 0;
	u8 b;

	while ((ret = st_read_fpdu(test, x, buf, ST_MID_BUF)) >= 0) {
		KUNIT_ASSERT_EQ_MSG(test, rsw_rdmap_opcode(&h->c), RSW_OP_WRITE,
				    "FPDU %d", writes);
		KUNIT_ASSERT_FALSE(test, rsw_ddp_last(&h->c));
		writes++;
	}
	/* Cut inside the FPDU (-ENODATA) or at a boundary: then the reset. */
	if (ret == -ENODATA)
		ret = st_recv_all(x->raw, &b, 1);
	KUNIT_EXPECT_EQ_MSG(test, ret, -ECONNRESET, "after %d Write FPDUs",
			    writes);
}

static void st_peer_fault_mid_msg(struct kunit *test)
{
	const struct st_fault_case *c = test->param_value;
	struct rsw_mpa_conn conn = {
		.rev = RSW_MPA_REV_2, .crc = true, .enhanced = true,
		.ird = ST_HX_IRD, .ord = ST_HX_ORD,
	};
	struct rsw_stream_stats ss;
	struct socket *qs;
	struct st_hx *x;
	struct st_mr *m;
	struct ib_wc wc;
	u32 done;

	x = st_hx_prepare(test, true, false, &qs);
	/* The raw end's receive buffer stays as it is: it reads nothing. */
	st_sock_bufs(qs->sk, 32 * 1024);
	if (c->mid)
		st_small_skbs(test);
	st_attach(test, x->e, qs, &conn, false);
	rsw_stream_start(to_rsw_qp(x->e->qp));
	st_peer_first(test, x);
	m = st_mr_new(test, st.pd, ST_MID_LEN);
	done = st_fault_write(test, x, m, c);
	if (c->mid)
		st_fault_reset_read(test, x);
	else
		st_fault_term_read(test, x, m, done);

	kernel_sock_shutdown(x->raw, SHUT_WR);
	KUNIT_EXPECT_TRUE_MSG(test, st_wait_closed(x->e), "closed() not called");
	KUNIT_EXPECT_EQ(test, st_state(test, x->e), IB_QPS_ERR);
	st_wc(test, x->e->scq, 9, IB_WC_LOC_PROT_ERR, -1, NULL);
	st_wc(test, x->e->scq, 10, IB_WC_WR_FLUSH_ERR, -1, &wc);
	KUNIT_EXPECT_EQ(test, wc.vendor_err,
			st_term_ve(RSW_TERM_LAYER_RDMAP,
				   RSW_RDMAP_ET_CATASTROPHIC, 0));
	ss = st_stats(test, x->e);
	KUNIT_EXPECT_EQ(test, ss.term_sent, c->mid ? 0 : 1);
	if (c->mid)
		return;
	KUNIT_EXPECT_EQ(test, ss.term.layer, RSW_TERM_LAYER_RDMAP);
	KUNIT_EXPECT_EQ(test, ss.term.etype, RSW_RDMAP_ET_CATASTROPHIC);
	KUNIT_EXPECT_TRUE(test, test_bit(IB_EVENT_QP_FATAL, &x->e->events));
	KUNIT_EXPECT_EQ(test, x->e->closed_status, -ECONNABORTED);
}

/*
 * An orderly close with more WQEs queued than one TX run takes
 * (RSW_STREAM_TX_BUDGET, 32): every one goes out, then our FIN.  The
 * stream's work is held while ST_CLOSE_SENDS signaled Sends are posted
 * and the QP moved to SQD, so the close finds them all queued (checked:
 * none taken before SQD, else RUN alone could have sent them).  Before,
 * LINGER started after one budgeted run: 32 Sends went out, then the FIN,
 * and the rest were flushed.
 */
#define ST_CLOSE_SENDS	100
#define ST_CLOSE_LEN	16

static void st_close_sends_all(struct kunit *test)
{
	struct rsw_mpa_conn conn = {
		.rev = RSW_MPA_REV_2, .crc = true, .enhanced = true,
		.ird = ST_HX_IRD, .ord = ST_HX_ORD,
	};
	struct st_lbuf b = st_lbuf_new(test, ST_CLOSE_LEN);
	u8 *t = kunit_kzalloc(test, 256, GFP_KERNEL);
	const union rsw_hdr *h = (const void *)t;
	struct st_stall *c = &st_stall_ctl;
	struct socket *qs;
	struct ib_sge sge;
	struct st_hx *x;
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, t);
	x = st_hx_prepare_wrs(test, true, false, &qs, 2 * ST_CLOSE_SENDS);
	st_attach(test, x->e, qs, &conn, false);
	rsw_stream_start(to_rsw_qp(x->e->qp));
	st_peer_first(test, x);
	st_pattern(b.base, ST_CLOSE_LEN, 8);
	sge = st_sge(st.pd, b.base, ST_CLOSE_LEN);
	/* A first Send out and completed: the stream is in full operation. */
	st_post_send(test, x->e, 0, IB_WR_SEND, 0, &sge, 1, 0);
	st_wc(test, x->e->scq, 0, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	KUNIT_ASSERT_GT(test, st_read_fpdu(test, x, t, 256), 0);

	st_stall_arm(test, false, true);
	for (i = 1; i <= ST_CLOSE_SENDS; i++)
		st_post_send(test, x->e, i, IB_WR_SEND, 0, &sge, 1, 0);
	KUNIT_ASSERT_TRUE_MSG(test, st_wait_done(&c->work_in, ST_WAIT_MS),
			      "the stream's work never ran");
	/* None taken yet: the close, not RUN before it, must send them. */
	KUNIT_ASSERT_EQ(test, rsw_qp_sq_pending(to_rsw_qp(x->e->qp)),
			(u32)ST_CLOSE_SENDS);
	KUNIT_ASSERT_EQ(test, st_modify(x->e, IB_QPS_SQD), 0);
	complete(&c->work_go);

	for (i = 1; i <= ST_CLOSE_SENDS; i++) {
		KUNIT_ASSERT_EQ_MSG(test, st_read_fpdu(test, x, t, 256),
				    (int)(sizeof(h->untagged) + ST_CLOSE_LEN -
					  RSW_MPA_HDR_LEN),
				    "Send %u of %u", i, ST_CLOSE_SENDS);
		KUNIT_EXPECT_EQ(test, rsw_rdmap_opcode(&h->c), RSW_OP_SEND);
		KUNIT_EXPECT_EQ(test, be32_to_cpu(h->untagged.msn), i + 1);
		KUNIT_EXPECT_TRUE(test, !memcmp(t + sizeof(h->untagged),
						b.base, ST_CLOSE_LEN));
	}
	KUNIT_EXPECT_EQ_MSG(test, st_read_fpdu(test, x, t, 256), -ENODATA,
			    "no FIN after the Sends");
	for (i = 1; i <= ST_CLOSE_SENDS; i++)
		st_wc(test, x->e->scq, i, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	kernel_sock_shutdown(x->raw, SHUT_WR);
	KUNIT_EXPECT_TRUE_MSG(test, st_wait_closed(x->e), "closed() not called");
	KUNIT_EXPECT_EQ(test, x->e->closed_status, 0);
	KUNIT_EXPECT_EQ(test, st_state(test, x->e), IB_QPS_ERR);
	st_wc(test, x->e->rcq, 50, IB_WC_WR_FLUSH_ERR, -1, NULL);
	st_wc(test, x->e->rcq, 51, IB_WC_WR_FLUSH_ERR, -1, NULL);
	st_cq_empty(test, x->e->scq, "send CQ");
	KUNIT_EXPECT_EQ(test, st_stats(test, x->e).term_sent, 0);
}

static void st_linger_ms_restore(void *old)
{
	rsw_stream_kunit_set_linger_ms((uintptr_t)old);
}

/*
 * An orderly close against a peer that reads nothing (its window shut
 * from the start): the queued Sends cannot go out, and the close waits for
 * them only until its deadline; then LINGER, whose timeout resets the
 * connection, and the QP ends in ERROR with the Sends flushed.  Before, the
 * stream stayed in RUN with the QP in CLOSING for as long as the peer kept
 * its window shut.  Deadline and linger timeout lowered to 300 ms; each
 * Send is larger than TCP can hold for a peer that reads nothing.  The end
 * is the linger timeout's (status 0, no Terminate), at least the deadline
 * and the timeout after SQD.
 */
#define ST_CLOSE_BIG	SZ_1M

static void st_close_deadline(struct kunit *test)
{
	uintptr_t old = rsw_stream_kunit_set_linger_ms(300);
	struct st_lbuf b = st_lbuf_new(test, ST_CLOSE_BIG);
	struct ib_sge sge;
	struct st_hx *x;
	u32 filled, i;
	ktime_t t0;

	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
							st_linger_ms_restore,
							(void *)old), 0);
	x = st_hx_up_fill(test, true, false, 0, &filled, ST_HX_IRD, ST_HX_ORD,
			  false);
	st_peer_first(test, x);
	sge = st_sge(st.pd, b.base, ST_CLOSE_BIG);
	for (i = 1; i <= 3; i++)
		st_post_send(test, x->e, i, IB_WR_SEND, 0, &sge, 1, 0);
	st_wait_tx(test, x->e);
	t0 = ktime_get();
	KUNIT_ASSERT_EQ(test, st_modify(x->e, IB_QPS_SQD), 0);

	KUNIT_ASSERT_TRUE_MSG(test, st_wait_closed(x->e),
			      "the close never ended");
	/*
	 * The deadline, then the linger timeout: nothing earlier ends it
	 * (each may come up to a jiffy early in real time).
	 */
	KUNIT_EXPECT_GE(test, ktime_ms_delta(ktime_get(), t0),
			(s64)(2 * 300 - 2 * jiffies_to_msecs(1)));
	KUNIT_EXPECT_EQ_MSG(test, x->e->closed_status, 0,
			    "not ended by the linger timeout");
	KUNIT_EXPECT_EQ(test, st_stats(test, x->e).term_sent, 0);
	KUNIT_EXPECT_EQ(test, st_state(test, x->e), IB_QPS_ERR);
	for (i = 1; i <= 3; i++)
		st_wc(test, x->e->scq, i, IB_WC_WR_FLUSH_ERR, -1, NULL);
	st_wc(test, x->e->rcq, 50, IB_WC_WR_FLUSH_ERR, -1, NULL);
	st_wc(test, x->e->rcq, 51, IB_WC_WR_FLUSH_ERR, -1, NULL);
	st_cq_empty(test, x->e->scq, "send CQ");
	KUNIT_EXPECT_EQ(test, atomic_read(&x->e->closed_calls), 1);
}

/* What the peer does about our Read once the close began. */
enum st_close_rd {
	ST_CLOSE_RD_ANSWER,	/* sends its Response */
	ST_CLOSE_RD_LATER,	/* a Read Request of its own, then that */
	ST_CLOSE_RD_LATE,	/* answers only once we are in LINGER */
};

/* Until the stream saw the close (@linger: until it is in LINGER). */
static void st_close_wait(struct kunit *test, struct rsw_stream *s,
			  bool linger)
{
	unsigned long end = jiffies + msecs_to_jiffies(ST_WAIT_MS);

	while (linger ? READ_ONCE(s->phase) != RSW_STREAM_LINGER :
			!READ_ONCE(s->closing)) {
		KUNIT_ASSERT_TRUE_MSG(test, time_before(jiffies, end),
				      "the close never came that far");
		msleep(2);
	}
}

/*
 * An orderly close waits for our Read in flight: its Response, which the
 * peer sends after the close began, is placed and the Read completes with
 * success; then our FIN.  The deadline is set far beyond the case's waits,
 * so the close must move on when the Response comes, not at the deadline.
 * Before, LINGER started at once: our FIN went before the Response, which
 * LINGER discarded, and the Read was flushed.
 *
 * ST_CLOSE_RD_LATER: the peer sends a Read Request of its own once the
 * stream has seen the close, while our Read is still in flight (both ends
 * closing at once, each with a Read out): the close still has work of its
 * own, so that Request is answered, our Read Response before the Response
 * to ours is even sent, and our FIN only after both (rsw_stream_close_
 * track(); second review, item 1: answering only the Requests owed when
 * the close began flushed such a Read at the peer).
 *
 * ST_CLOSE_RD_LATE (review item 8): the peer answers only after the
 * close's deadline (1 s here) put the stream in LINGER, behind our FIN.
 * LINGER discards the Response, and the Read is flushed, exactly once.
 */
static void st_close_read(struct kunit *test, enum st_close_rd rd)
{
	bool late = rd == ST_CLOSE_RD_LATE;
	uintptr_t old = rsw_stream_kunit_set_linger_ms(late ? 1000 : 60000);
	struct st_lbuf rb = st_lbuf_new(test, 8);
	const union rsw_hdr *th;
	struct st_hx *x;
	union rsw_hdr h;
	u8 *t, b;

	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
							st_linger_ms_restore,
							(void *)old), 0);
	x = st_hx_up(test, true, false);
	t = st_peer_first(test, x);
	th = (const void *)t;
	st_resp_post(test, x, true, (u64 *)rb.base);
	KUNIT_ASSERT_GT(test, st_read_fpdu(test, x, t, 256), 0);
	KUNIT_ASSERT_EQ(test, rsw_rdmap_opcode(&th->c), RSW_OP_READ_REQ);
	KUNIT_ASSERT_EQ(test, st_modify(x->e, IB_QPS_SQD), 0);
	if (rd != ST_CLOSE_RD_ANSWER)
		st_close_wait(test, to_rsw_qp(x->e->qp)->stream, late);
	if (rd == ST_CLOSE_RD_LATER) {
		u8 *r = kunit_kzalloc(test, 256, GFP_KERNEL);

		KUNIT_ASSERT_NOT_NULL(test, r);
		st_read_req(x, x->mr->mr->rkey, x->mr->mr->iova, 8);
		KUNIT_ASSERT_EQ(test, st_send_all(x->raw, x->frame,
						  x->frame_len),
				(int)x->frame_len);
		x->frame_len = 0;
		KUNIT_ASSERT_GT_MSG(test, st_read_fpdu(test, x, r, 256), 0,
				    "the peer's Read in our close: no answer");
		KUNIT_EXPECT_EQ(test, rsw_rdmap_opcode(&((union rsw_hdr *)r)->c),
				RSW_OP_READ_RESP);
	}
	if (late)
		KUNIT_EXPECT_EQ_MSG(test, st_recv_all(x->raw, &b, 1), 0,
				    "no FIN once in LINGER");

	st_hdr_tagged(&h, RSW_OP_READ_RESP,
		      be32_to_cpu(th->rreq.rreq.sink_stag),
		      be64_to_cpu(th->rreq.rreq.sink_to));
	st_emit(x, &h, sizeof(h.tagged), 8, NULL);
	/* Late, it may meet the linger timeout's reset: not asserted. */
	KUNIT_ASSERT_TRUE(test, st_send_all(x->raw, x->frame, x->frame_len) ==
				(int)x->frame_len || late);
	if (late) {
		st_wc(test, x->e->scq, 9, IB_WC_WR_FLUSH_ERR, -1, NULL);
	} else {
		st_wc(test, x->e->scq, 9, IB_WC_SUCCESS, IB_WC_RDMA_READ, NULL);
		KUNIT_EXPECT_TRUE(test, !memcmp(rb.base, x->frame +
						x->last_off + sizeof(h.tagged),
						8));
		KUNIT_EXPECT_EQ_MSG(test, st_recv_all(x->raw, &b, 1), 0,
				    "no FIN next after the Read completed");
	}
	kernel_sock_shutdown(x->raw, SHUT_WR);
	KUNIT_EXPECT_TRUE_MSG(test, st_wait_closed(x->e), "closed() not called");
	KUNIT_EXPECT_EQ(test, x->e->closed_status, 0);
	KUNIT_EXPECT_EQ(test, st_state(test, x->e), IB_QPS_ERR);
	st_cq_empty(test, x->e->scq, "send CQ");
}

static void st_close_waits_read(struct kunit *test)
{
	st_close_read(test, ST_CLOSE_RD_ANSWER);
}

static void st_close_later_rreq(struct kunit *test)
{
	st_close_read(test, ST_CLOSE_RD_LATER);
}

static void st_close_read_late(struct kunit *test)
{
	st_close_read(test, ST_CLOSE_RD_LATE);
}

/*
 * A responder that has received nothing may send nothing: its orderly
 * close goes to LINGER and our FIN at once, a Send it holds flushed, not
 * waited for (review item 5).  The close deadline is set far beyond the
 * case's waits.  Before, the close waited for the Send until the deadline.
 */
static void st_close_tx_hold(struct kunit *test)
{
	uintptr_t old = rsw_stream_kunit_set_linger_ms(60000);
	struct st_lbuf b = st_lbuf_new(test, 8);
	struct ib_sge sge;
	struct st_hx *x;
	u8 c;

	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
							st_linger_ms_restore,
							(void *)old), 0);
	x = st_hx_up(test, true, false);
	KUNIT_ASSERT_TRUE(test, READ_ONCE(to_rsw_qp(x->e->qp)->stream->tx_hold));
	sge = st_sge(st.pd, b.base, 8);
	st_post_send(test, x->e, 1, IB_WR_SEND, 0, &sge, 1, 0);
	KUNIT_ASSERT_EQ(test, st_modify(x->e, IB_QPS_SQD), 0);
	KUNIT_EXPECT_EQ_MSG(test, st_recv_all(x->raw, &c, 1), 0,
			    "no FIN at once after the close");
	kernel_sock_shutdown(x->raw, SHUT_WR);
	KUNIT_EXPECT_TRUE_MSG(test, st_wait_closed(x->e), "closed() not called");
	KUNIT_EXPECT_EQ(test, x->e->closed_status, 0);
	st_wc(test, x->e->scq, 1, IB_WC_WR_FLUSH_ERR, -1, NULL);
	st_cq_empty(test, x->e->scq, "send CQ");
}

/*
 * SQE in the LINGER of an orderly close once our FIN is out: nothing can
 * be sent any more, so the stream ends at once with a reset, the QP in
 * ERROR with IB_EVENT_QP_FATAL and the Terminate's cause (RDMAP Local
 * Catastrophic) in its flushed completions, well before the linger
 * timeout (noted, never held).  Before, LINGER ignored SQE: the stream
 * waited out the timeout, with no event.
 */
static void st_close_sqe_after_fin(struct kunit *test)
{
	unsigned long end = jiffies + msecs_to_jiffies(ST_WAIT_MS);
	struct rsw_stream *s;
	struct st_hx *x;
	u8 b;

	st_stall_arm(test, false, false);
	WRITE_ONCE(st_stall_ctl.note_linger, true);
	x = st_hx_up(test, true, false);
	s = to_rsw_qp(x->e->qp)->stream;
	st_peer_first(test, x);
	/* The peer spoke: we may send (else SQE could only reset). */
	while (READ_ONCE(s->tx_hold)) {
		KUNIT_ASSERT_TRUE_MSG(test, time_before(jiffies, end),
				      "the peer's first FPDU never came");
		msleep(2);
	}
	KUNIT_ASSERT_EQ(test, st_modify(x->e, IB_QPS_SQD), 0);
	KUNIT_ASSERT_EQ_MSG(test, st_recv_all(x->raw, &b, 1), 0,
			    "no FIN after the close");
	KUNIT_ASSERT_EQ(test, st_modify(x->e, IB_QPS_SQE), 0);
	st_hx_check_end_vendor(test, x, IB_WC_WR_FLUSH_ERR, 0,
			       st_term_ve(RSW_TERM_LAYER_RDMAP,
					  RSW_RDMAP_ET_CATASTROPHIC, 0));
	KUNIT_EXPECT_FALSE_MSG(test, completion_done(&st_stall_ctl.linger_in),
			       "the stream ended by its linger timeout");
	KUNIT_EXPECT_TRUE(test, test_bit(IB_EVENT_QP_FATAL, &x->e->events));
	KUNIT_EXPECT_EQ(test, x->e->closed_status, -ECONNABORTED);
	KUNIT_EXPECT_EQ(test, st_stats(test, x->e).term_sent, 0);
}

/*
 * Issue 11: RX runs in the socket's data-ready callback.  With the
 * stream's work held at its start, a Write and a Send from the peer are
 * still placed and the Send completes: nothing on the receive path waits
 * for the work item (before, data-ready only queued the work, and the
 * receive never completed while it was held).  Once let go, the work finds
 * the stream in step: a second Send completes too.
 */
static void st_rx_in_data_ready(struct kunit *test)
{
	struct st_stall *c = &st_stall_ctl;
	struct st_hx *x = st_hx_up(test, true, false);
	const u8 *p;
	struct ib_wc wc;
	union rsw_hdr h;

	st_stall_arm(test, false, true);
	rsw_stream_start(to_rsw_qp(x->e->qp));	/* queues the work */
	KUNIT_ASSERT_TRUE_MSG(test, st_wait_done(&c->work_in, ST_WAIT_MS),
			      "the stream's work never ran");

	st_hdr_tagged(&h, RSW_OP_WRITE, x->mr->mr->rkey, x->mr->mr->iova + 10);
	st_emit(x, &h, sizeof(h.tagged), 100, NULL);
	p = x->frame + sizeof(h.tagged);
	st_send(x, RSW_OP_SEND, 1, 0, 40, 0, NULL);
	KUNIT_ASSERT_EQ(test, st_send_all(x->raw, x->frame, x->frame_len),
			(int)x->frame_len);
	st_wc(test, x->e->rcq, 50, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 40);
	KUNIT_EXPECT_TRUE(test, !memcmp(st_mr_ptr(x->mr, 10), p, 100));
	KUNIT_EXPECT_FALSE_MSG(test, completion_done(&c->work_go),
			       "the work was let go early");

	complete(&c->work_go);
	x->frame_len = 0;
	st_send(x, RSW_OP_SEND, 2, 0, 7, 0, NULL);
	KUNIT_ASSERT_EQ(test, st_send_all(x->raw, x->frame, x->frame_len),
			(int)x->frame_len);
	st_wc(test, x->e->rcq, 51, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 7);
	KUNIT_EXPECT_EQ(test, st_state(test, x->e), IB_QPS_RTS);
	KUNIT_EXPECT_EQ(test, st_stats(test, x->e).term_sent, 0);
}

static struct kunit_case st_cases[] = {
	KUNIT_CASE_PARAM(st_lb_send, st_rtr_gen_params),
	KUNIT_CASE_PARAM(st_lb_send_large, st_crc_gen_params),
	KUNIT_CASE(st_lb_send_solicited),
	KUNIT_CASE_PARAM(st_lb_write, st_crc_gen_params),
	KUNIT_CASE_PARAM(st_lb_read, st_crc_gen_params),
	KUNIT_CASE_PARAM(st_lb_markers, st_mk_gen_params),
	KUNIT_CASE(st_lb_send_inv),
	KUNIT_CASE(st_lb_local_inv),
	KUNIT_CASE(st_lb_read_inv),
	KUNIT_CASE(st_lb_send_inv_waits_tx),
	KUNIT_CASE(st_lb_read_inv_waits_tx),
	KUNIT_CASE(st_lb_send_in_read_resp),
	KUNIT_CASE(st_lb_fence),
	KUNIT_CASE(st_lb_close_abort),
	KUNIT_CASE(st_lb_close_orderly),
	KUNIT_CASE(st_lb_drain),
	KUNIT_CASE(st_lb_direct_end),
	KUNIT_CASE_PARAM(st_lb_atomic, st_atomic_gen_params),
	KUNIT_CASE(st_lb_atomic_order),
	KUNIT_CASE(st_lb_atomic_bad_sge),
	KUNIT_CASE(st_lb_atomic_race),
	KUNIT_CASE(st_lb_write_imm),
	KUNIT_CASE(st_lb_send_imm_refused),
	KUNIT_CASE_PARAM(st_hostile, st_bad_gen_params),
	KUNIT_CASE_PARAM(st_peer_terminate, st_term_gen_params),
	KUNIT_CASE(st_qp_to_sqe),
	KUNIT_CASE_PARAM(st_peer_wrong_rtr, st_wrong_rtr_gen_params),
	KUNIT_CASE(st_rtr_never),
	KUNIT_CASE(st_rtr_late),
	KUNIT_CASE(st_rtr_read_unanswered),
	KUNIT_CASE(st_peer_write_then_reset),
	KUNIT_CASE(st_peer_atomic),
	KUNIT_CASE(st_peer_imm_after_send),
	KUNIT_CASE_PARAM(st_peer_bad_resp, st_resp_gen_params),
	KUNIT_CASE_PARAM(st_peer_local_term, st_local_gen_params),
	KUNIT_CASE_PARAM(st_peer_term_mid_fpdu, st_mid_gen_params),
	KUNIT_CASE(st_peer_term_ulp_err),
	KUNIT_CASE(st_peer_fin_mid_fpdu),
	KUNIT_CASE_PARAM(st_peer_fault_mid_msg, st_fault_gen_params),
	KUNIT_CASE(st_peer_fenced_local_inv),
	KUNIT_CASE_PARAM(st_peer_rtr, st_rtr_gen_params),
	KUNIT_CASE(st_reset_live_stream),
	KUNIT_CASE_PARAM(st_peer_rtr_full, st_rtr_full_gen_params),
	KUNIT_CASE(st_linger_destroy),
	KUNIT_CASE(st_rx_in_data_ready),
	KUNIT_CASE(st_close_sends_all),
	KUNIT_CASE(st_close_deadline),
	KUNIT_CASE(st_close_waits_read),
	KUNIT_CASE(st_close_later_rreq),
	KUNIT_CASE(st_close_read_late),
	KUNIT_CASE(st_close_tx_hold),
	KUNIT_CASE(st_close_sqe_after_fin),
	{}
};

static struct kunit_suite st_suite = {
	.name = "rdmap_sw_stream",
	.suite_init = st_suite_init,
	.suite_exit = st_suite_exit,
	.test_cases = st_cases,
};

kunit_test_suite(st_suite);

MODULE_DESCRIPTION("KUnit tests for rdmap_sw streams (QPs over TCP)");
MODULE_LICENSE("GPL");
