// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite rdmap_sw_cm: the connection engine of cm.c over loopback TCP
 * in the initial network namespace (127.0.0.1, and ::1 when IPv6 is up):
 *  - listen + connect + accept: both sides agree on the negotiated CRC,
 *    revision, IRD/ORD and peer-to-peer RTR type (table of policies), and
 *    private data arrives in both directions;
 *  - octets sent right after the MPA frames (fake first FPDUs) are still in
 *    the sockets the QP takes;
 *  - reject with private data, connection refused;
 *  - hostile raw TCP clients (garbage, wrong key, PD_Length too large,
 *    close mid-frame, silence) are cleaned up with the right reason
 *    and a raw server answering badly fails our connect cleanly;
 *  - destroying a listener with half-open children, and 50 connect/accept
 *    cycles, leave no cep alive (kmemleak runs after the suites);
 *  - every cep counts into a counter set of the case's own (stats.h): a
 *    reject, a refused connect and each hostile client move exactly the
 *    counters of their outcome, and nothing else.
 */
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/module.h>
#include <linux/net.h>
#include <linux/string.h>
#include <net/net_namespace.h>
#include <net/sock.h>

#include "fpdu.h"
#include "internal.h"

RSW_IMPORT_KUNIT_NS();

#define WAIT (10 * HZ)
#define SHORT_MS 300	/* MPA timeout of the timeout cases */

/*
 * The case's counters: every cep takes its own reference, so the case's
 * is dropped at its end even while ceps of it are still going.
 */
static struct rsw_stats *cm_ctrs;

static int cm_init(struct kunit *test)
{
	cm_ctrs = rsw_stats_alloc();
	return cm_ctrs ? 0 : -ENOMEM;
}

static void cm_exit(struct kunit *test)
{
	rsw_stats_put(cm_ctrs);
	cm_ctrs = NULL;
}

/* Counters @a and @b (RSW_STAT_NONE: unused) are 1, every other 0. */
static void cm_expect_ctrs(struct kunit *test, enum rsw_stat a,
			   enum rsw_stat b)
{
	enum rsw_stat i;

	for (i = RSW_STAT_NONE + 1; i < RSW_STAT_NUM; i++)
		KUNIT_EXPECT_EQ_MSG(test, rsw_stats_read(cm_ctrs, i),
				    (u64)(i == a || i == b), "counter %s",
				    rsw_stat_descs[i - 1].name);
}

/* What one side saw. */
struct side {
	struct completion req, reply, est, closed;
	struct rsw_cep *child;		/* connect_request's cep */
	int status;
	enum rsw_mpa_reason reason;
	u8 pd[RSW_MPA_IWCM_MAX_PD];
	u8 pd_len;
	u16 ird, ord;
	/* What the listener's connect_request does. */
	enum { HOLD, ACCEPT, REJECT } answer;
	struct rsw_mpa_params accept_lp;
	int accept_ret;
	bool fpdu;			/* take the socket, send a fake FPDU */
	struct socket *sock;		/* taken socket */
	bool collect;			/* keep every child in kids[] */
	struct rsw_cep *kids[32];
	int nkids;
};

static const char fpdu_rsp[] = "responder-first-FPDU";
static const char fpdu_ini[] = "initiator-first-FPDU";

static void side_init(struct side *s)
{
	memset(s, 0, sizeof(*s));
	init_completion(&s->req);
	init_completion(&s->reply);
	init_completion(&s->est);
	init_completion(&s->closed);
	rsw_mpa_params_init(&s->accept_lp);
}

/* A test's view of one endpoint, freed with the test. */
static struct side *new_side(struct kunit *test)
{
	struct side *s = kunit_kmalloc(test, sizeof(*s), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, s);
	side_init(s);
	return s;
}

static void side_record(struct side *s, const struct rsw_cm_event *ev)
{
	s->status = ev->status;
	s->reason = ev->reason;
	s->pd_len = ev->pd_len;
	memcpy(s->pd, ev->pd, ev->pd_len);
	s->ird = ev->ird;
	s->ord = ev->ord;
}

static int send_all(struct socket *sock, const void *buf, size_t len)
{
	struct msghdr msg = { .msg_flags = MSG_NOSIGNAL };
	struct kvec vec = { .iov_base = (void *)buf, .iov_len = len };

	return kernel_sendmsg(sock, &msg, &vec, 1, len);
}

static int recv_all(struct socket *sock, void *buf, size_t len)
{
	struct msghdr msg = {};
	struct kvec vec = { .iov_base = buf, .iov_len = len };

	sock->sk->sk_rcvtimeo = WAIT;
	return kernel_recvmsg(sock, &msg, &vec, 1, len, MSG_WAITALL);
}

static void t_connect_request(void *ctx, struct rsw_cep *cep,
			      const struct rsw_cm_event *ev)
{
	static const char no[] = "go away";
	struct side *s = ctx;

	side_record(s, ev);
	s->child = cep;
	if (s->collect && s->nkids < ARRAY_SIZE(s->kids))
		s->kids[s->nkids++] = cep;
	if (s->answer == ACCEPT) {
		s->accept_ret = rsw_cm_accept(cep, &s->accept_lp, s);
		if (s->fpdu && !s->accept_ret) {
			s->sock = rsw_cm_take_socket(cep);
			rsw_cm_socket_placed(cep);	/* init_net: no exit */
			if (s->sock)
				send_all(s->sock, fpdu_rsp, sizeof(fpdu_rsp));
		}
	} else if (s->answer == REJECT) {
		s->accept_ret = rsw_cm_reject(cep, no, sizeof(no));
	}
	complete(&s->req);
}

static void t_connect_reply(void *ctx, struct rsw_cep *cep,
			    const struct rsw_cm_event *ev)
{
	struct side *s = ctx;

	side_record(s, ev);
	complete(&s->reply);
}

static void t_established(void *ctx, struct rsw_cep *cep)
{
	struct side *s = ctx;

	complete(&s->est);
}

static void t_closed(void *ctx, struct rsw_cep *cep, int status)
{
	struct side *s = ctx;

	s->status = status;
	complete(&s->closed);
}

static const struct rsw_cm_ops t_ops = {
	.connect_request = t_connect_request,
	.connect_reply = t_connect_reply,
	.established = t_established,
	.closed = t_closed,
};

static void addr_v4(struct sockaddr_storage *ss, u16 port)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin->sin_port = htons(port);
}

static void addr_v6(struct sockaddr_storage *ss, u16 port)
{
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	sin6->sin6_family = AF_INET6;
	sin6->sin6_addr = in6addr_loopback;
	sin6->sin6_port = htons(port);
}

/* A listener on @local (port 0) whose actual address goes to *@bound. */
static struct rsw_cep *listen_on(struct kunit *test, struct side *s,
				 const struct sockaddr_storage *local,
				 const struct rsw_mpa_params *lp,
				 unsigned int timeout_ms,
				 struct sockaddr_storage *bound)
{
	struct rsw_cm_args args = {
		.net = &init_net, .local = (const struct sockaddr *)local,
		.lp = lp, .timeout_ms = timeout_ms, .ops = &t_ops, .ctx = s,
		.stats = cm_ctrs,
	};
	struct rsw_cep *l = rsw_cm_listen(&args);

	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(l), "listen: %ld", PTR_ERR(l));
	KUNIT_ASSERT_EQ(test, rsw_cm_local_addr(l, bound), 0);
	return l;
}

static struct rsw_cep *connect_to(struct kunit *test, struct side *s,
				  const struct sockaddr_storage *remote,
				  const struct rsw_mpa_params *lp,
				  unsigned int timeout_ms)
{
	struct rsw_cm_args args = {
		.net = &init_net, .remote = (const struct sockaddr *)remote,
		.lp = lp, .timeout_ms = timeout_ms, .ops = &t_ops, .ctx = s,
		.stats = cm_ctrs,
	};
	struct rsw_cep *c = rsw_cm_connect(&args);

	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(c), "connect: %ld", PTR_ERR(c));
	return c;
}

static void wait_done(struct kunit *test, struct completion *c)
{
	KUNIT_ASSERT_GT(test, wait_for_completion_timeout(c, WAIT), 0UL);
}

/* Polls (no fixed sleep) until no cep beyond @base is alive. */
static void wait_live(struct kunit *test, int base)
{
	unsigned long end = jiffies + WAIT;

	while (rsw_cm_live() > base && time_before(jiffies, end))
		usleep_range(5000, 10000);
	KUNIT_EXPECT_EQ(test, rsw_cm_live(), base);
}

/* ------------------------------------------------------------------------
 * Negotiation over a real connection.
 */
struct nego_case {
	const char *name;
	u8 ini_rev, rsp_rev;
	bool ini_crc, rsp_crc, p2p;
	u8 rsp_rtr;
	u8 rev;			/* expected outcome */
	bool crc, enhanced;
	u8 rtr;
};

static const struct nego_case nego_cases[] = {
	{ "rev2 crc both", 2, 2, true, true, false, RSW_MPA_RTR_ALL,
	  2, true, true, 0 },
	{ "rev2 crc responder only", 2, 2, false, true, false, RSW_MPA_RTR_ALL,
	  2, true, true, 0 },
	{ "rev2 no crc", 2, 2, false, false, false, RSW_MPA_RTR_ALL,
	  2, false, true, 0 },
	{ "responder rev1", 2, 1, true, true, false, RSW_MPA_RTR_ALL,
	  1, true, false, 0 },
	{ "initiator rev1", 1, 2, false, true, false, RSW_MPA_RTR_ALL,
	  1, true, false, 0 },
	{ "p2p write", 2, 2, true, true, true, RSW_MPA_RTR_ALL,
	  2, true, true, RSW_MPA_RTR_WRITE },
	{ "p2p read", 2, 2, true, true, true,
	  RSW_MPA_RTR_READ | RSW_MPA_RTR_SEND, 2, true, true, RSW_MPA_RTR_READ },
	{ "p2p send", 2, 2, true, true, true, RSW_MPA_RTR_SEND,
	  2, true, true, RSW_MPA_RTR_SEND },
};

KUNIT_ARRAY_PARAM_DESC(nego, nego_cases, name);

static const char pd_req[] = "hello from the initiator";
static const char pd_rep[] = "and hello back";

/*
 * One accepted connection with fake FPDUs both ways; checks both sides.
 * @ss: the listener's address family, port 0.
 */
static void run_connection(struct kunit *test, const struct nego_case *c,
			   struct sockaddr_storage *ss)
{
	struct side *ls = new_side(test);
	struct side *is = new_side(test);
	struct rsw_mpa_params llp, ilp;
	struct rsw_mpa_conn ic, rc;
	struct rsw_cep *l, *ini;
	struct socket *isock;
	int base = rsw_cm_live();
	char buf[32];

	rsw_mpa_params_init(&llp);
	llp.rev = c->rsp_rev;
	llp.crc = c->rsp_crc;
	llp.rtr = c->rsp_rtr;
	l = listen_on(test, ls, ss, &llp, 0, ss);

	ls->answer = ACCEPT;
	ls->fpdu = true;
	ls->accept_lp = llp;
	ls->accept_lp.ird = 2;
	ls->accept_lp.ord = 16;
	ls->accept_lp.pd = pd_rep;
	ls->accept_lp.pd_len = sizeof(pd_rep);

	rsw_mpa_params_init(&ilp);
	ilp.rev = c->ini_rev;
	ilp.crc = c->ini_crc;
	ilp.p2p = c->p2p;
	ilp.ird = 8;
	ilp.ord = 4;
	ilp.pd = pd_req;
	ilp.pd_len = sizeof(pd_req);
	ini = connect_to(test, is, ss, &ilp, 0);

	wait_done(test, &ls->req);
	KUNIT_EXPECT_EQ(test, ls->accept_ret, 0);
	KUNIT_EXPECT_EQ(test, ls->pd_len, sizeof(pd_req));
	KUNIT_EXPECT_MEMEQ(test, ls->pd, pd_req, sizeof(pd_req));
	wait_done(test, &is->reply);
	KUNIT_EXPECT_EQ(test, is->status, 0);
	KUNIT_EXPECT_EQ(test, is->pd_len, sizeof(pd_rep));
	KUNIT_EXPECT_MEMEQ(test, is->pd, pd_rep, sizeof(pd_rep));
	wait_done(test, &ls->est);

	KUNIT_ASSERT_EQ(test, rsw_cm_conn(ini, &ic), 0);
	KUNIT_ASSERT_EQ(test, rsw_cm_conn(ls->child, &rc), 0);
	KUNIT_EXPECT_EQ(test, ic.rev, c->rev);
	KUNIT_EXPECT_EQ(test, rc.rev, c->rev);
	KUNIT_EXPECT_EQ(test, ic.crc, c->crc);
	KUNIT_EXPECT_EQ(test, rc.crc, c->crc);
	KUNIT_EXPECT_EQ(test, ic.enhanced, c->enhanced);
	KUNIT_EXPECT_EQ(test, rc.enhanced, c->enhanced);
	KUNIT_EXPECT_EQ(test, ic.p2p, !!c->rtr);
	KUNIT_EXPECT_EQ(test, rc.p2p, !!c->rtr);
	KUNIT_EXPECT_EQ(test, ic.rtr, c->rtr);
	KUNIT_EXPECT_EQ(test, rc.rtr, c->rtr);
	if (c->enhanced) {
		/* Each side's ORD is at most the other's IRD. */
		KUNIT_EXPECT_EQ(test, ic.ird, 8);
		KUNIT_EXPECT_EQ(test, ic.ord, 2);
		KUNIT_EXPECT_EQ(test, rc.ird, 2);
		KUNIT_EXPECT_EQ(test, rc.ord, 8);
		KUNIT_EXPECT_EQ(test, ls->ird, 8);
		KUNIT_EXPECT_EQ(test, is->ird, 2);
	}
	if (c->ini_rev == 1) {
		/* No RFC 6581 numbers: the ULP hears what it could use. */
		KUNIT_EXPECT_EQ(test, ls->ird, RSW_MAX_RD_ATOM);
		KUNIT_EXPECT_EQ(test, ls->ord, RSW_MAX_RD_ATOM);
	}

	/* The first FPDUs were not swallowed by the MPA reader. */
	isock = rsw_cm_take_socket(ini);
	rsw_cm_socket_placed(ini);
	KUNIT_ASSERT_NOT_NULL(test, isock);
	KUNIT_ASSERT_NOT_NULL(test, ls->sock);
	KUNIT_EXPECT_NULL(test, rsw_cm_take_socket(ini));
	KUNIT_EXPECT_EQ(test, recv_all(isock, buf, sizeof(fpdu_rsp)),
			(int)sizeof(fpdu_rsp));
	KUNIT_EXPECT_MEMEQ(test, buf, fpdu_rsp, sizeof(fpdu_rsp));
	KUNIT_EXPECT_EQ(test, send_all(isock, fpdu_ini, sizeof(fpdu_ini)),
			(int)sizeof(fpdu_ini));
	KUNIT_EXPECT_EQ(test, recv_all(ls->sock, buf, sizeof(fpdu_ini)),
			(int)sizeof(fpdu_ini));
	KUNIT_EXPECT_MEMEQ(test, buf, fpdu_ini, sizeof(fpdu_ini));
	sock_release(isock);
	sock_release(ls->sock);

	rsw_cm_destroy(ini);
	rsw_cm_destroy(ls->child);
	rsw_cm_destroy(l);
	wait_live(test, base);
}

static void cm_negotiate_v4(struct kunit *test)
{
	struct sockaddr_storage ss;

	addr_v4(&ss, 0);
	run_connection(test, test->param_value, &ss);
}

static void cm_negotiate_v6(struct kunit *test)
{
	struct sockaddr_storage ss;
	struct socket *probe;

	addr_v6(&ss, 0);
	/* IPv6 may be off (or ::1 missing) in the test kernel. */
	if (sock_create_kern(&init_net, AF_INET6, SOCK_STREAM, IPPROTO_TCP,
			     &probe))
		kunit_skip(test, "no IPv6");
	if (kernel_bind(probe, (struct sockaddr *)&ss, sizeof(struct sockaddr_in6))) {
		sock_release(probe);
		kunit_skip(test, "no ::1");
	}
	sock_release(probe);
	run_connection(test, test->param_value, &ss);
}

/* ------------------------------------------------------------------------
 * Refusals.
 */
static void cm_reject_with_pd(struct kunit *test)
{
	static const char no[] = "go away";
	struct side *ls = new_side(test);
	struct side *is = new_side(test);
	struct sockaddr_storage ss;
	struct rsw_mpa_params ilp;
	struct rsw_mpa_conn conn;
	struct rsw_cep *l, *ini;
	int base = rsw_cm_live();

	ls->answer = REJECT;
	addr_v4(&ss, 0);
	l = listen_on(test, ls, &ss, NULL, 0, &ss);
	rsw_mpa_params_init(&ilp);
	ilp.pd = pd_req;
	ilp.pd_len = sizeof(pd_req);
	ini = connect_to(test, is, &ss, &ilp, 0);

	wait_done(test, &ls->req);
	KUNIT_EXPECT_EQ(test, ls->accept_ret, 0);
	wait_done(test, &is->reply);
	KUNIT_EXPECT_EQ(test, is->status, -ECONNREFUSED);
	KUNIT_EXPECT_EQ(test, is->reason, RSW_MPA_E_REJECTED);
	KUNIT_EXPECT_EQ(test, is->pd_len, sizeof(no));
	KUNIT_EXPECT_MEMEQ(test, is->pd, no, sizeof(no));
	KUNIT_EXPECT_EQ(test, rsw_cm_conn(ini, &conn), -ENOTCONN);
	/* A rejected cep can be neither accepted nor rejected again. */
	KUNIT_EXPECT_EQ(test, rsw_cm_accept(ls->child, &ls->accept_lp, ls),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, rsw_cm_reject(ls->child, NULL, 0), -EINVAL);
	cm_expect_ctrs(test, RSW_STAT_MPA_REJECTS_SENT,
		       RSW_STAT_MPA_E_REJECTED);

	rsw_cm_destroy(ini);
	rsw_cm_destroy(ls->child);
	rsw_cm_destroy(l);
	wait_live(test, base);
}

static void cm_connect_refused(struct kunit *test)
{
	struct side *ls = new_side(test);
	struct side *is = new_side(test);
	struct sockaddr_storage ss;
	struct rsw_mpa_params ilp;
	struct rsw_cep *l, *ini;
	int base = rsw_cm_live();

	addr_v4(&ss, 0);
	/* A port that was just free: listen, learn it, stop listening. */
	l = listen_on(test, ls, &ss, NULL, 0, &ss);
	rsw_cm_destroy(l);
	rsw_mpa_params_init(&ilp);
	ini = connect_to(test, is, &ss, &ilp, 0);
	wait_done(test, &is->reply);
	KUNIT_EXPECT_EQ(test, is->status, -ECONNREFUSED);
	KUNIT_EXPECT_EQ(test, is->reason, RSW_MPA_OK);
	cm_expect_ctrs(test, RSW_STAT_MPA_TCP_FAILS, RSW_STAT_NONE);
	rsw_cm_destroy(ini);
	wait_live(test, base);
}

/* ------------------------------------------------------------------------
 * Hostile raw clients against our listener.
 */
struct raw_case {
	const char *name;
	enum { RAW_BYTES, RAW_NOTHING } how;
	u8 key;			/* 0: garbage, 1: Req key, 2: Rep key */
	u16 pd_len;		/* PD_Length field */
	u32 send;		/* octets of the frame sent (0: all) */
	enum rsw_mpa_reason reason;	/* RSW_MPA_OK: a timeout */
	bool reject;		/* a Reject frame comes back */
};

static const struct raw_case raw_cases[] = {
	{ "garbage", RAW_BYTES, 0, 0, 0, RSW_MPA_E_KEY, false },
	{ "reply key", RAW_BYTES, 2, 0, 0, RSW_MPA_E_KEY_ROLE, false },
	{ "PD_Length 600", RAW_BYTES, 1, 600, 0, RSW_MPA_E_PD_LEN,
	  false },
	{ "closed after 10 octets", RAW_BYTES, 1, 0, 10,
	  RSW_MPA_E_TRUNCATED, false },
	{ "closed at once", RAW_NOTHING, 0, 0, 0, RSW_MPA_E_CLOSED,
	  false },
	{ "silent", RAW_NOTHING, 0, 0, 0, RSW_MPA_OK, false },
};

KUNIT_ARRAY_PARAM_DESC(raw, raw_cases, name);

static struct socket *raw_connect(struct kunit *test,
				  const struct sockaddr_storage *ss)
{
	struct socket *sock;

	KUNIT_ASSERT_EQ(test, sock_create_kern(&init_net, ss->ss_family,
					       SOCK_STREAM, IPPROTO_TCP,
					       &sock), 0);
	KUNIT_ASSERT_EQ(test, kernel_connect(sock, (struct sockaddr *)ss,
					     sizeof(struct sockaddr_in), 0), 0);
	return sock;
}

static u32 raw_frame(const struct raw_case *c, u8 *buf)
{
	struct rsw_mpa_rr rr = {};

	if (c->key == 0)
		memset(rr.key, 0xa5, sizeof(rr.key));
	else
		memcpy(rr.key, c->key == 1 ? RSW_MPA_KEY_REQ : RSW_MPA_KEY_REP,
		       RSW_MPA_KEY_LEN);
	rsw_mpa_rr_set_rev(&rr, RSW_MPA_REV_1);
	rsw_mpa_rr_set_pd_len(&rr, c->pd_len);
	memcpy(buf, &rr, sizeof(rr));
	return c->send ?: sizeof(rr);
}

/* Polls until @ctr reaches 1. */
static void wait_count(struct kunit *test, const atomic_t *ctr)
{
	unsigned long end = jiffies + WAIT;

	while (!atomic_read(ctr) && time_before(jiffies, end))
		usleep_range(2000, 5000);
	KUNIT_EXPECT_EQ(test, atomic_read(ctr), 1);
}

static void cm_hostile_client(struct kunit *test)
{
	const struct raw_case *c = test->param_value;
	struct side *ls = new_side(test);
	const struct rsw_cm_listen_stats *st;
	u8 buf[sizeof(struct rsw_mpa_rr)];
	struct sockaddr_storage ss;
	struct socket *raw;
	struct rsw_cep *l;
	int base = rsw_cm_live();
	int i, n;

	addr_v4(&ss, 0);
	l = listen_on(test, ls, &ss, NULL, SHORT_MS, &ss);
	st = rsw_cm_listen_stats(l);
	raw = raw_connect(test, &ss);
	if (c->how == RAW_BYTES) {
		n = raw_frame(c, buf);
		KUNIT_EXPECT_EQ(test, send_all(raw, buf, n), n);
		if (c->send)
			kernel_sock_shutdown(raw, SHUT_WR);
	} else if (c->reason == RSW_MPA_E_CLOSED) {
		kernel_sock_shutdown(raw, SHUT_WR);
	}
	if (c->reason)
		wait_count(test, &st->fail[c->reason]);
	else
		wait_count(test, &st->timeouts);
	for (i = 0; i < RSW_MPA_E_NUM; i++)
		if (i != c->reason)
			KUNIT_EXPECT_EQ(test, atomic_read(&st->fail[i]), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&st->accepted), 1);
	KUNIT_EXPECT_FALSE(test, completion_done(&ls->req));
	/* Counted before the listener's own count above. */
	cm_expect_ctrs(test, c->reason ? rsw_mpa_reason(c->reason)->stat :
					 RSW_STAT_MPA_TIMEOUTS, RSW_STAT_NONE);

	/* The client sees a Reject if due, then the end of the stream. */
	if (c->reject) {
		KUNIT_ASSERT_EQ(test, recv_all(raw, buf, sizeof(buf)),
				(int)sizeof(buf));
		KUNIT_EXPECT_MEMEQ(test, buf, RSW_MPA_KEY_REP, RSW_MPA_KEY_LEN);
		KUNIT_EXPECT_TRUE(test,
				  rsw_mpa_rr_reject((struct rsw_mpa_rr *)buf));
	}
	KUNIT_EXPECT_LE(test, recv_all(raw, buf, 1), 0);
	sock_release(raw);
	rsw_cm_destroy(l);
	wait_live(test, base);
}

/*
 * A Chelsio T5/T6 initiator at iw_cxgb4's defaults (peer-to-peer, CRC,
 * MPA revision 2, a zero-length Read as its only RTR, its ORD raised to 1
 * for it), written out octet by octet: "MPA ID Req Frame", C and the
 * RFC 6581 bit, revision 2, PD_Length 12; IRD word A|8, ORD word D|1;
 * eight octets of ULP private data.  A ULP accepting with IRD 0 (nvmet and
 * svcrdma set no responder_resources) and ORD 4 must get a Reply that
 * grants the Read RTR and IRD 1 for it: "MPA ID Rep Frame", C|S, revision
 * 2, PD_Length 4 + 3, IRD word A|1, ORD word D|4 (at most the peer's IRD
 * 8), then its private data.
 */
static const u8 cxgb4_req[] = {
	'M', 'P', 'A', ' ', 'I', 'D', ' ', 'R',
	'e', 'q', ' ', 'F', 'r', 'a', 'm', 'e',
	0x50, 0x02, 0x00, 0x0c,
	0x80, 0x08, 0x40, 0x01,
	0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,
};

static const char cxgb4_rep_pd[] = "ok";

static const u8 cxgb4_rep[] = {
	'M', 'P', 'A', ' ', 'I', 'D', ' ', 'R',
	'e', 'p', ' ', 'F', 'r', 'a', 'm', 'e',
	0x50, 0x02, 0x00, 0x07,
	0x80, 0x01, 0x40, 0x04,
	'o', 'k', 0x00,
};

static void cm_cxgb4_read_rtr(struct kunit *test)
{
	struct side *ls = new_side(test);
	u8 buf[sizeof(cxgb4_rep) + 1];
	struct sockaddr_storage ss;
	struct rsw_mpa_conn rc;
	struct socket *raw;
	struct rsw_cep *l;
	int base = rsw_cm_live();

	addr_v4(&ss, 0);
	l = listen_on(test, ls, &ss, NULL, 0, &ss);
	ls->answer = ACCEPT;
	ls->accept_lp.ird = 0;
	ls->accept_lp.ord = 4;
	ls->accept_lp.pd = cxgb4_rep_pd;
	ls->accept_lp.pd_len = sizeof(cxgb4_rep_pd);
	raw = raw_connect(test, &ss);
	KUNIT_ASSERT_EQ(test, send_all(raw, cxgb4_req, sizeof(cxgb4_req)),
			(int)sizeof(cxgb4_req));
	wait_done(test, &ls->req);
	KUNIT_EXPECT_EQ(test, ls->accept_ret, 0);
	/* The ULP hears the peer's numbers: IRD 8, ORD 1. */
	KUNIT_EXPECT_EQ(test, ls->ird, 8);
	KUNIT_EXPECT_EQ(test, ls->ord, 1);
	KUNIT_ASSERT_EQ(test, recv_all(raw, buf, sizeof(cxgb4_rep)),
			(int)sizeof(cxgb4_rep));
	KUNIT_EXPECT_MEMEQ(test, buf, cxgb4_rep, sizeof(cxgb4_rep));
	KUNIT_ASSERT_EQ(test, rsw_cm_conn(ls->child, &rc), 0);
	KUNIT_EXPECT_TRUE(test, rc.p2p);
	KUNIT_EXPECT_EQ(test, rc.rtr, RSW_MPA_RTR_READ);
	KUNIT_EXPECT_EQ(test, rc.ird, 1);
	KUNIT_EXPECT_EQ(test, rc.ord, 4);
	KUNIT_EXPECT_TRUE(test, rc.crc);
	sock_release(raw);
	rsw_cm_destroy(ls->child);
	rsw_cm_destroy(l);
	wait_live(test, base);
}

/* ------------------------------------------------------------------------
 * A raw server answering our connect badly.
 */
struct srv_case {
	const char *name;
	enum { SRV_GARBAGE, SRV_BIG_PD, SRV_CLOSE, SRV_SILENT, SRV_NO_RTR,
	       SRV_BIG_ORD } how;
	int status;
	enum rsw_mpa_reason reason;
};

static const struct srv_case srv_cases[] = {
	{ "garbage", SRV_GARBAGE, -EPROTO, RSW_MPA_E_KEY },
	{ "PD_Length 513", SRV_BIG_PD, -EPROTO, RSW_MPA_E_PD_LEN },
	{ "closes", SRV_CLOSE, -ECONNRESET, RSW_MPA_E_CLOSED },
	{ "silent", SRV_SILENT, -ETIMEDOUT, RSW_MPA_OK },
	/* RFC 6581: answered by an MPA Terminate, then the close. */
	{ "P2P without an RTR type", SRV_NO_RTR, 0, RSW_MPA_E_NO_RTR },
	{ "ORD above our IRD", SRV_BIG_ORD, 0, RSW_MPA_E_IRD },
};

KUNIT_ARRAY_PARAM_DESC(srv, srv_cases, name);

/*
 * An RFC 6581 Reply with CRC: P2P but no RTR type (our builder refuses
 * that, so the bit is cleared afterwards), or an ORD of 16 against our IRD
 * of 8.  Into @buf; its length.
 */
static int srv_build_reply(u8 *buf, size_t size, bool no_rtr)
{
	struct rsw_mpa_frame rep = {
		.rev = RSW_MPA_REV_2,
		.crc = true,
		.enhanced = true,
		.p2p = true,
		.rtr = RSW_MPA_RTR_WRITE,
		.ird = 8,
		.ord = no_rtr ? 8 : 16,
	};
	int len = rsw_mpa_build(&rep, true, buf, size);

	if (len > 0 && no_rtr)
		rsw_mpa_v2_set_rtr((struct rsw_mpa_v2 *)
				   (buf + sizeof(struct rsw_mpa_rr)),
				   RSW_MPA_RTR_NONE);
	return len;
}

/* The next FPDU on @conn is an MPA (LLP layer) Terminate with @ecode. */
static void expect_mpa_term(struct kunit *test, struct socket *conn,
			    u8 ecode)
{
	struct rsw_hdr_term t;
	u8 trailer[RSW_MPA_ALIGN + RSW_MPA_CRC_LEN];
	int rest;

	KUNIT_ASSERT_EQ(test, recv_all(conn, &t, sizeof(t)), (int)sizeof(t));
	KUNIT_EXPECT_EQ(test, rsw_rdmap_opcode(&t.ddp.c), RSW_OP_TERMINATE);
	/* PAD and CRC after the header, as framed for the Reply's C bit. */
	rest = sizeof(t.ddp.c.mpa_len) + rsw_mpa_len(&t.ddp.c) +
	       rsw_mpa_pad(rsw_mpa_len(&t.ddp.c)) + RSW_MPA_CRC_LEN -
	       sizeof(t);
	KUNIT_ASSERT_GE(test, rest, 0);
	KUNIT_ASSERT_LE(test, rest, (int)sizeof(trailer));
	KUNIT_EXPECT_EQ(test, recv_all(conn, trailer, rest), rest);
	KUNIT_EXPECT_EQ(test, rsw_term_layer(&t.term), RSW_TERM_LAYER_LLP);
	KUNIT_EXPECT_EQ(test, rsw_term_etype(&t.term), RSW_LLP_ET_MPA);
	KUNIT_EXPECT_EQ(test, rsw_term_ecode(&t.term), ecode);
}

static void cm_hostile_server(struct kunit *test)
{
	const struct srv_case *c = test->param_value;
	struct side *is = new_side(test);
	struct socket *lsock, *conn;
	struct sockaddr_storage ss;
	struct rsw_mpa_params ilp;
	struct rsw_mpa_rr rr = {};
	struct rsw_cep *ini;
	u8 buf[sizeof(rr) + 4];
	int base = rsw_cm_live();
	u8 rep[RSW_MPA_RR_MAX_LEN];
	int rep_len = srv_build_reply(rep, sizeof(rep), c->how == SRV_NO_RTR);

	addr_v4(&ss, 0);
	KUNIT_ASSERT_EQ(test, sock_create_kern(&init_net, AF_INET, SOCK_STREAM,
					       IPPROTO_TCP, &lsock), 0);
	KUNIT_ASSERT_EQ(test, kernel_bind(lsock, (struct sockaddr *)&ss,
					  sizeof(struct sockaddr_in)), 0);
	KUNIT_ASSERT_EQ(test, kernel_listen(lsock, 4), 0);
	KUNIT_ASSERT_GT(test, kernel_getsockname(lsock, (struct sockaddr *)&ss),
			0);
	KUNIT_ASSERT_GT(test, rep_len, 0);
	rsw_mpa_params_init(&ilp);
	ilp.p2p = true;
	ilp.ord = 4;
	ilp.ird = 8;
	/* Only the silent server waits for the (short) timeout. */
	ini = connect_to(test, is, &ss, &ilp,
			 c->how == SRV_SILENT ? SHORT_MS : 0);
	lsock->sk->sk_rcvtimeo = WAIT;
	KUNIT_ASSERT_EQ(test, kernel_accept(lsock, &conn, 0), 0);
	/* Our Request: header plus the IRD/ORD word. */
	KUNIT_EXPECT_EQ(test, recv_all(conn, buf, sizeof(buf)), (int)sizeof(buf));
	KUNIT_EXPECT_MEMEQ(test, buf, RSW_MPA_KEY_REQ, RSW_MPA_KEY_LEN);

	memcpy(rr.key, RSW_MPA_KEY_REP, RSW_MPA_KEY_LEN);
	rsw_mpa_rr_set_rev(&rr, RSW_MPA_REV_1);
	switch (c->how) {
	case SRV_GARBAGE:
		memset(rr.key, 'x', RSW_MPA_KEY_LEN);
		send_all(conn, &rr, sizeof(rr));
		break;
	case SRV_BIG_PD:
		rsw_mpa_rr_set_pd_len(&rr, RSW_MPA_MAX_PD + 1);
		send_all(conn, &rr, sizeof(rr));
		break;
	case SRV_CLOSE:
		kernel_sock_shutdown(conn, SHUT_WR);
		break;
	case SRV_SILENT:
		break;
	case SRV_NO_RTR:
	case SRV_BIG_ORD:
		send_all(conn, rep, rep_len);
		break;
	}
	wait_done(test, &is->reply);
	KUNIT_EXPECT_EQ(test, is->status,
			c->status ?: rsw_mpa_reason(c->reason)->err);
	KUNIT_EXPECT_EQ(test, is->reason, c->reason);
	if (c->how == SRV_NO_RTR || c->how == SRV_BIG_ORD)
		expect_mpa_term(test, conn, rsw_mpa_reason(c->reason)->ecode);
	/* Our side closed the stream. */
	KUNIT_EXPECT_LE(test, recv_all(conn, buf, 1), 0);
	sock_release(conn);
	sock_release(lsock);
	rsw_cm_destroy(ini);
	wait_live(test, base);
}

/* ------------------------------------------------------------------------
 * Teardown.
 */
static void cm_destroy_listener_pending(struct kunit *test)
{
	struct side *ls = new_side(test);
	struct side *is = new_side(test);
	const struct rsw_cm_listen_stats *st;
	struct socket *raw[3];
	struct sockaddr_storage ss;
	struct rsw_mpa_params ilp;
	struct rsw_cep *l, *ini;
	int base = rsw_cm_live();
	unsigned long end;
	u8 b;
	int i;

	ls->answer = HOLD;
	addr_v4(&ss, 0);
	l = listen_on(test, ls, &ss, NULL, 0, &ss);
	st = rsw_cm_listen_stats(l);
	/* Half-open children: TCP up, a partial Request or nothing. */
	for (i = 0; i < ARRAY_SIZE(raw); i++) {
		raw[i] = raw_connect(test, &ss);
		if (i)
			send_all(raw[i], RSW_MPA_KEY_REQ, 4 * i);
	}
	/* And one handed to the owner, not yet answered. */
	rsw_mpa_params_init(&ilp);
	ini = connect_to(test, is, &ss, &ilp, 0);
	wait_done(test, &ls->req);
	end = jiffies + WAIT;
	while (atomic_read(&st->accepted) < 4 && time_before(jiffies, end))
		usleep_range(2000, 5000);
	KUNIT_EXPECT_EQ(test, atomic_read(&st->accepted), 4);

	rsw_cm_destroy(l);
	/* Left: ini, the handed-out child and (held by it) the listener. */
	KUNIT_EXPECT_EQ(test, rsw_cm_live(), base + 3);
	for (i = 0; i < ARRAY_SIZE(raw); i++) {
		KUNIT_EXPECT_LE(test, recv_all(raw[i], &b, 1), 0);
		sock_release(raw[i]);
	}
	/* The handed-out child survives its listener; closing it fails ini. */
	rsw_cm_destroy(ls->child);
	wait_done(test, &is->reply);
	KUNIT_EXPECT_EQ(test, is->status, -ECONNRESET);
	rsw_cm_destroy(ini);
	wait_live(test, base);
}

static void cm_many_cycles(struct kunit *test)
{
	struct side *ls = new_side(test);
	struct side *is = new_side(test);
	struct sockaddr_storage ss;
	struct rsw_mpa_params ilp;
	struct rsw_cep *l, *ini;
	int base = rsw_cm_live();
	int i;

	addr_v4(&ss, 0);
	l = listen_on(test, ls, &ss, NULL, 0, &ss);
	rsw_mpa_params_init(&ilp);
	ilp.pd = pd_req;
	ilp.pd_len = sizeof(pd_req);
	for (i = 0; i < 50; i++) {
		side_init(ls);
		side_init(is);
		ls->answer = ACCEPT;
		ini = connect_to(test, is, &ss, &ilp, 0);
		wait_done(test, &ls->req);
		wait_done(test, &is->reply);
		KUNIT_ASSERT_EQ(test, is->status, 0);
		wait_done(test, &ls->est);
		/* Alternate which side goes first. */
		if (i & 1) {
			rsw_cm_destroy(ini);
			rsw_cm_destroy(ls->child);
		} else {
			rsw_cm_destroy(ls->child);
			rsw_cm_destroy(ini);
		}
	}
	rsw_cm_destroy(l);
	wait_live(test, base);
}

/*
 * Destroy ceps while their work is queued or running: initiators right
 * after connect, then the listener with children in every state.
 */
static void cm_destroy_racing(struct kunit *test)
{
	struct side *ls = new_side(test);
	struct side *is = new_side(test);
	struct sockaddr_storage ss;
	struct rsw_mpa_params ilp;
	struct rsw_cep *l, *ini[20];
	int base = rsw_cm_live();
	int i;

	ls->answer = ACCEPT;
	ls->collect = true;
	addr_v4(&ss, 0);
	l = listen_on(test, ls, &ss, NULL, 0, &ss);
	rsw_mpa_params_init(&ilp);
	for (i = 0; i < ARRAY_SIZE(ini); i++) {
		ini[i] = connect_to(test, is, &ss, &ilp, 0);
		if (i & 1)
			rsw_cm_destroy(ini[i]);
	}
	for (i = 0; i < ARRAY_SIZE(ini); i += 2) {
		if (i % 4 == 0)
			rsw_cm_destroy(ini[i]);
	}
	rsw_cm_destroy(l);
	/* No connect_request after its listener is gone. */
	for (i = 0; i < ls->nkids; i++)
		rsw_cm_destroy(ls->kids[i]);
	for (i = 2; i < ARRAY_SIZE(ini); i += 4)
		rsw_cm_destroy(ini[i]);
	wait_live(test, base);
}

/* A connected cep whose peer goes away reports closed. */
static void cm_peer_close(struct kunit *test)
{
	struct side *ls = new_side(test);
	struct side *is = new_side(test);
	struct sockaddr_storage ss;
	struct rsw_mpa_params ilp;
	struct rsw_cep *l, *ini;
	int base = rsw_cm_live();

	ls->answer = ACCEPT;
	addr_v4(&ss, 0);
	l = listen_on(test, ls, &ss, NULL, 0, &ss);
	rsw_mpa_params_init(&ilp);
	ini = connect_to(test, is, &ss, &ilp, 0);
	wait_done(test, &is->reply);
	KUNIT_ASSERT_EQ(test, is->status, 0);
	wait_done(test, &ls->est);
	rsw_cm_destroy(ls->child);
	wait_done(test, &is->closed);
	KUNIT_EXPECT_LT(test, is->status, 0);
	KUNIT_EXPECT_NULL(test, rsw_cm_take_socket(ini));
	rsw_cm_destroy(ini);
	rsw_cm_destroy(l);
	wait_live(test, base);
}

static struct kunit_case cm_cases[] = {
	KUNIT_CASE_PARAM(cm_negotiate_v4, nego_gen_params),
	KUNIT_CASE_PARAM(cm_negotiate_v6, nego_gen_params),
	KUNIT_CASE(cm_reject_with_pd),
	KUNIT_CASE(cm_connect_refused),
	KUNIT_CASE_PARAM(cm_hostile_client, raw_gen_params),
	KUNIT_CASE(cm_cxgb4_read_rtr),
	KUNIT_CASE_PARAM(cm_hostile_server, srv_gen_params),
	KUNIT_CASE(cm_destroy_listener_pending),
	KUNIT_CASE(cm_many_cycles),
	KUNIT_CASE(cm_destroy_racing),
	KUNIT_CASE(cm_peer_close),
	{}
};

static struct kunit_suite cm_suite = {
	.name = "rdmap_sw_cm",
	.init = cm_init,
	.exit = cm_exit,
	.test_cases = cm_cases,
};

kunit_test_suite(cm_suite);

MODULE_DESCRIPTION("KUnit tests for rdmap_sw connection endpoints");
MODULE_LICENSE("GPL");
