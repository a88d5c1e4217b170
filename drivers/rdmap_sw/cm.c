// SPDX-License-Identifier: GPL-2.0
/*
 * rdmap_sw: connection endpoints (CEPs): kernel TCP sockets and the MPA
 * exchange (mpa.c) beneath the iw_cm provider.  Nothing here blocks its
 * caller: the TCP connect is non-blocking, and the socket callbacks only
 * queue the cep's work item on rsw_cm_wq, which reads and advances the
 * state machine.
 *
 * States (one step function each, run by the work item until the state
 * stops changing):
 *
 *   initiator:  CONNECTING --TCP up, Request sent--> AWAIT_REPLY
 *               AWAIT_REPLY --valid Reply--> CONNECTED (connect_reply 0)
 *   responder:  LISTENING (the listener) accepts TCP connections into
 *               children in AWAIT_REQUEST --valid Request--> REQ_RCVD
 *               (connect_request); rsw_cm_accept() sends the Reply:
 *               CONNECTED (established), rsw_cm_reject() the Reject: CLOSED
 *   any:        failure, timeout, peer close or destroy --> CLOSED
 *
 * The MPA frames are read with MSG_DONTWAIT exactly rsw_mpa_rx_want()
 * octets at a time, so nothing after a frame leaves the socket: the first
 * FPDU is still in it when the QP takes the socket (rsw_cm_take_socket()),
 * which restores the socket's callbacks and hands it over.
 *
 * Lifetime: a kref.  References: the owner's (listen/connect return one,
 * connect_request hands the listener's list reference to the callee;
 * rsw_cm_destroy() drops it), one per queued work item or armed timeout
 * (taken by rsw_cep_queue()/arming, dropped by the item or by whoever
 * cancels it), and a child's on its listener.  A cep holds a reference
 * on the counter set it was given (rsw_cm_args.stats; children take the
 * listener's) until it is freed, so a cep that counts after its device
 * was deallocated (iw.c's "peer already left") counts into live memory.
 * Socket callbacks find the cep through sk_user_data under
 * sk_callback_lock; it is cleared before the owner's reference goes, so a
 * callback never sees a freed cep.
 *
 * Locks: cep->lock (mutex) serialises the state machine, accept, reject and
 * destroy; a listener's children_lock (mutex, its own class) guards its
 * children list and is held across connect_request.  Order: children_lock
 * -> cep->lock (of a child) -> socket lock -> sk_callback_lock.
 * Callbacks are made with no cep->lock held.  A failed or abandoned child
 * removes itself from its listener's list.
 *
 * Network namespaces.  A kernel socket holds no reference on its
 * namespace, so nothing of ours keeps one alive: when it dies,
 * rsw_cm_net_exit() (from the pernet .pre_exit, main.c) closes every
 * socket a cep still has there before the namespace's exit methods run.
 * Every cep with a socket is published on rsw_ceps (rsw_cep_publish(),
 * after its socket exists; once the namespace is dying it is listed
 * already marked net_gone) until it is freed.  Listen and connect hold a
 * reference on the namespace from before the socket exists until it is
 * published (rsw_cm_pin_net()), and refuse a dying one with -ENETDOWN.
 * Listeners are closed at once; any other cep is marked net_gone and its
 * work fails it with -ENETDOWN (connect_reply, closed or a silent
 * discard, as for any failure in its state).  rsw_cm_net_exit() returns
 * once none of them has a socket there.
 */
#include <linux/inet.h>
#include <linux/moduleparam.h>
#include <linux/net.h>
#include <linux/slab.h>
#include <linux/tcp.h>
#include <linux/workqueue.h>
#include <net/inet_sock.h>
#include <net/ip.h>
#include <net/sock.h>
#include <net/tcp_states.h>

#include "internal.h"
#include "trace.h"

static unsigned int rsw_mpa_timeout_ms = 10000;
module_param_named(mpa_timeout_ms, rsw_mpa_timeout_ms, uint, 0644);
MODULE_PARM_DESC(mpa_timeout_ms,
		 "Time allowed for the TCP connect plus the MPA Request/Reply exchange of a new connection, in ms (default 10000)");

static struct workqueue_struct *rsw_cm_wq;
static atomic_t rsw_cep_live = ATOMIC_INIT(0);
/* Published ceps (see the top), and a wait for their sockets to close. */
static LIST_HEAD(rsw_ceps);
static DEFINE_SPINLOCK(rsw_ceps_lock);
static DECLARE_WAIT_QUEUE_HEAD(rsw_cep_sock_wait);
static atomic_t rsw_cep_ids = ATOMIC_INIT(0);

static const char *const rsw_cep_names[RSW_CEP_NUM] = {
	[RSW_CEP_LISTENING] = "listening",
	[RSW_CEP_CONNECTING] = "connecting",
	[RSW_CEP_AWAIT_REPLY] = "await reply",
	[RSW_CEP_AWAIT_REQUEST] = "await request",
	[RSW_CEP_REQ_RCVD] = "request received",
	[RSW_CEP_CONNECTED] = "connected",
	[RSW_CEP_CLOSED] = "closed",
};

/* The event the work item delivers once cep->lock is dropped. */
enum rsw_cep_ev {
	RSW_CEP_EV_NONE,
	RSW_CEP_EV_REQUEST,
	RSW_CEP_EV_REPLY,
	RSW_CEP_EV_ESTABLISHED,
	RSW_CEP_EV_CLOSED,
	RSW_CEP_EV_DISCARD,	/* a child failed: leave the listener */
};

struct rsw_cep {
	struct kref		ref;
	u32			id;
	struct mutex		lock;		/* the state machine: see above */
	enum rsw_cep_state	state;
	bool			dead;		/* destroyed: no more events */
	bool			initiator;
	bool			listening;	/* a listener, for its life */
	bool			timed_out;	/* written by the timeout */
	bool			net_gone;	/* written by rsw_cm_net_exit() */
	bool			handing_over;	/* socket taken, not yet placed */
	struct net		*net;		/* of the socket; never pinned */
	struct list_head	all_link;	/* on rsw_ceps once published */
	enum rsw_cep_ev		ev;
	struct rsw_cm_event	evd;
	struct socket		*sock;
	/* The connection's TCP ports (host order), 0 until known: trace. */
	u16			lport;
	u16			rport;
	void (*saved_data_ready)(struct sock *sk);
	void (*saved_state_change)(struct sock *sk);
	struct work_struct	work;
	struct delayed_work	timeout;
	unsigned long		timeout_jiffies;
	const struct rsw_cm_ops	*ops;
	void			*ctx;
	struct rsw_mpa_params	lp;		/* .pd points to pd_buf */
	struct rsw_mpa_conn	conn;
	struct rsw_mpa_rx	rx;

	/* Listener: children not yet handed to connect_request. */
	struct mutex		children_lock;
	struct list_head	children;
	struct rsw_cm_listen_stats stats;
	/* The device's counters: a reference until freed (stats.c). */
	struct rsw_stats	*counters;
	/* Child: its listener (a reference) and place in its list. */
	struct rsw_cep		*listener;
	struct list_head	child_link;

	u8			pd_buf[RSW_MPA_MAX_PD];
	u8			tx[RSW_MPA_RR_MAX_LEN];
};

#define rsw_cep_dbg(cep, fmt, ...) do {					\
	const struct rsw_cep *_c = (cep);				\
									\
	pr_debug_ratelimited("CEP[%u] %s: " fmt, _c->id,		\
			     rsw_cep_state_name(_c->state), ##__VA_ARGS__); \
} while (0)

const char *rsw_cep_state_name(unsigned int s)
{
	if (s >= RSW_CEP_NUM)
		return "unknown";
	return rsw_cep_names[s];
}
EXPORT_SYMBOL_IF_KUNIT(rsw_cep_state_name);

/*
 * Note the ports @cep's socket has so far (a bound, connected or accepted
 * one), kept for the trace once the socket is gone.  Before the socket's
 * callbacks are hooked, or under cep->lock.
 */
static void rsw_cep_note_ports(struct rsw_cep *cep)
{
	const struct inet_sock *inet = inet_sk(cep->sock->sk);

	cep->lport = ntohs(inet->inet_sport);
	cep->rport = ntohs(inet->inet_dport);
}

/*
 * Trace @cep's move from @old (RSW_CEP_NUM: its first state) to @state,
 * with the ports noted so far.  Under whatever guards cep->state:
 * cep->lock, or a listener's children_lock.
 */
static void rsw_cep_trace_state(const struct rsw_cep *cep, unsigned int old,
				enum rsw_cep_state state)
{
	if (!trace_rsw_cm_state_enabled() || old == state)
		return;
	trace_rsw_cm_state(cep->id, cep->lport, cep->rport, old, state);
}

/* A new cep's first state. */
static void rsw_cep_first_state(struct rsw_cep *cep, enum rsw_cep_state state)
{
	rsw_cep_trace_state(cep, RSW_CEP_NUM, state);
	cep->state = state;
}

/* @cep moves to @state; locks as rsw_cep_trace_state(). */
static void rsw_cep_set_state(struct rsw_cep *cep, enum rsw_cep_state state)
{
	rsw_cep_trace_state(cep, cep->state, state);
	cep->state = state;
}

/* -------------------------------------------------------------------------
 * Object lifetime.
 */
static void rsw_cep_free(struct kref *ref)
{
	struct rsw_cep *cep = container_of(ref, struct rsw_cep, ref);
	struct rsw_cep *listener = cep->listener;

	WARN_ON(cep->sock);
	spin_lock_bh(&rsw_ceps_lock);
	list_del(&cep->all_link);
	spin_unlock_bh(&rsw_ceps_lock);
	/* Taken, never placed: a namespace exit may be waiting for it. */
	if (WARN_ON_ONCE(cep->handing_over))
		wake_up_all(&rsw_cep_sock_wait);
	rsw_stats_put(cep->counters);
	kfree(cep);
	atomic_dec(&rsw_cep_live);
	if (listener)
		kref_put(&listener->ref, rsw_cep_free);
}

static void rsw_cep_put(struct rsw_cep *cep)
{
	kref_put(&cep->ref, rsw_cep_free);
}

static void rsw_cep_work(struct work_struct *work);
static void rsw_cep_timeout(struct work_struct *work);

static struct rsw_cep *rsw_cep_alloc(const struct rsw_cm_args *args)
{
	unsigned int ms = args->timeout_ms ?: READ_ONCE(rsw_mpa_timeout_ms);
	struct rsw_cep *cep = kzalloc(sizeof(*cep), GFP_KERNEL);

	if (!cep)
		return NULL;
	kref_init(&cep->ref);
	cep->id = atomic_inc_return(&rsw_cep_ids);
	mutex_init(&cep->lock);
	mutex_init(&cep->children_lock);
	INIT_LIST_HEAD(&cep->children);
	INIT_LIST_HEAD(&cep->child_link);
	INIT_LIST_HEAD(&cep->all_link);
	cep->net = args->net;
	INIT_WORK(&cep->work, rsw_cep_work);
	INIT_DELAYED_WORK(&cep->timeout, rsw_cep_timeout);
	cep->timeout_jiffies = msecs_to_jiffies(max(ms, 1U));
	cep->ops = args->ops;
	cep->ctx = args->ctx;
	cep->counters = rsw_stats_get(args->stats);
	if (args->lp)
		cep->lp = *args->lp;
	else
		rsw_mpa_params_init(&cep->lp);
	cep->lp.pd = NULL;
	cep->lp.pd_len = 0;
	atomic_inc(&rsw_cep_live);
	return cep;
}

/*
 * Let rsw_cm_net_exit() find @cep, whose socket exists: false (and
 * @cep->net_gone set) if its namespace is already dying.  Listed either
 * way, so that an exit already waiting also waits for this socket: the
 * caller's work item closes it at once when it sees net_gone.
 */
static bool rsw_cep_publish(struct rsw_cep *cep)
{
	bool live;

	spin_lock_bh(&rsw_ceps_lock);
	live = check_net(cep->net);
	if (!live)
		WRITE_ONCE(cep->net_gone, true);
	list_add_tail(&cep->all_link, &rsw_ceps);
	spin_unlock_bh(&rsw_ceps_lock);
	return live;
}

/* Queue the work item, which then holds a reference.  Any context. */
static void rsw_cep_queue(struct rsw_cep *cep)
{
	kref_get(&cep->ref);
	if (!queue_work(rsw_cm_wq, &cep->work))
		rsw_cep_put(cep);
}

static void rsw_cep_arm_timeout(struct rsw_cep *cep)
{
	kref_get(&cep->ref);
	if (!queue_delayed_work(rsw_cm_wq, &cep->timeout,
				cep->timeout_jiffies))
		rsw_cep_put(cep);
}

/* Disarm without waiting (under cep->lock, from the work item). */
static void rsw_cep_disarm_timeout(struct rsw_cep *cep)
{
	if (cancel_delayed_work(&cep->timeout))
		rsw_cep_put(cep);
}

static void rsw_cep_timeout(struct work_struct *work)
{
	struct rsw_cep *cep = container_of(to_delayed_work(work),
					   struct rsw_cep, timeout);

	WRITE_ONCE(cep->timed_out, true);
	rsw_cep_queue(cep);
	rsw_cep_put(cep);
}

/* -------------------------------------------------------------------------
 * Socket callbacks.
 */
static void rsw_cep_sk_wake(struct sock *sk)
{
	struct rsw_cep *cep;

	read_lock_bh(&sk->sk_callback_lock);
	cep = sk->sk_user_data;
	if (cep)
		rsw_cep_queue(cep);
	read_unlock_bh(&sk->sk_callback_lock);
}

/*
 * Route @cep's socket callbacks to its work item.  @orig: the callbacks to
 * restore later (an accepted socket inherits its listener's hooks, so a
 * child restores its listener's saved originals), NULL for the socket's own.
 */
static void rsw_cep_hook(struct rsw_cep *cep, const struct rsw_cep *orig)
{
	struct sock *sk = cep->sock->sk;

	write_lock_bh(&sk->sk_callback_lock);
	cep->saved_data_ready = orig ? orig->saved_data_ready : sk->sk_data_ready;
	cep->saved_state_change = orig ? orig->saved_state_change :
					 sk->sk_state_change;
	sk->sk_user_data = cep;
	sk->sk_data_ready = rsw_cep_sk_wake;
	sk->sk_state_change = rsw_cep_sk_wake;
	write_unlock_bh(&sk->sk_callback_lock);
}

/* After this no callback of the socket queues @cep's work.  May sleep. */
static void rsw_cep_unhook(struct rsw_cep *cep)
{
	struct sock *sk = cep->sock->sk;

	write_lock_bh(&sk->sk_callback_lock);
	if (sk->sk_user_data == cep) {
		sk->sk_user_data = NULL;
		sk->sk_data_ready = cep->saved_data_ready;
		sk->sk_state_change = cep->saved_state_change;
	}
	write_unlock_bh(&sk->sk_callback_lock);
}

/* @cep has no socket any more: rsw_cm_net_exit() may be waiting for that. */
static void rsw_cep_sock_gone(struct rsw_cep *cep)
{
	WRITE_ONCE(cep->sock, NULL);
	wake_up_all(&rsw_cep_sock_wait);
}

/* Unhook and release the socket, if any.  Under cep->lock. */
static void rsw_cep_close_sock(struct rsw_cep *cep)
{
	if (!cep->sock)
		return;
	rsw_cep_unhook(cep);
	/* Its namespace is dying: reset, leave nothing behind in it. */
	if (READ_ONCE(cep->net_gone))
		sock_no_linger(cep->sock->sk);
	else
		kernel_sock_shutdown(cep->sock, SHUT_RDWR);
	sock_release(cep->sock);
	rsw_cep_sock_gone(cep);
}

static int rsw_cep_send(struct rsw_cep *cep, const void *buf, size_t len)
{
	struct msghdr msg = { .msg_flags = MSG_DONTWAIT | MSG_NOSIGNAL };
	struct kvec vec = { .iov_base = (void *)buf, .iov_len = len };
	int ret;

	ret = kernel_sendmsg(cep->sock, &msg, &vec, 1, len);
	if (ret < 0)
		return ret;
	/* A fresh socket has room for 532 octets; short means trouble. */
	return ret == len ? 0 : -EIO;
}

/* Build @f and send it.  Under cep->lock. */
static int rsw_cep_send_frame(struct rsw_cep *cep,
			      const struct rsw_mpa_frame *f, bool reply)
{
	int len = rsw_mpa_build(f, reply, cep->tx, sizeof(cep->tx));

	if (len < 0)
		return len;
	return rsw_cep_send(cep, cep->tx, len);
}

/*
 * Feed the parser from the socket, never past the frame.  Returns the
 * parser's status; RSW_MPA_RX_MORE also when the socket is empty.  An
 * ended or broken stream fails the parser (rsw_mpa_rx_eof()).
 */
static enum rsw_mpa_rx_status rsw_cep_read(struct rsw_cep *cep)
{
	enum rsw_mpa_rx_status st = RSW_MPA_RX_MORE;
	u8 buf[64];

	while (st == RSW_MPA_RX_MORE) {
		struct msghdr msg = { .msg_flags = MSG_DONTWAIT };
		size_t want = min_t(size_t, rsw_mpa_rx_want(&cep->rx),
				    sizeof(buf));
		struct kvec vec = { .iov_base = buf, .iov_len = want };
		size_t used;
		int ret;

		ret = kernel_recvmsg(cep->sock, &msg, &vec, 1, want,
				     MSG_DONTWAIT);
		if (ret == -EAGAIN)
			break;
		if (ret <= 0) {
			rsw_mpa_rx_eof(&cep->rx);
			return RSW_MPA_RX_FAILED;
		}
		st = rsw_mpa_rx_feed(&cep->rx, buf, ret, &used);
	}
	return st;
}

/* -------------------------------------------------------------------------
 * The state machine.  Each step runs under cep->lock and returns the next
 * state; an event to deliver is left in cep->ev / cep->evd.
 *
 * rsw_cep_fail(): @status for the owner, MPA @reason (RSW_MPA_OK for a
 * failure that is not the peer's frame), counted in @stat, its true cause
 * (stats.h: no counter stands for "some failure").
 */
static enum rsw_cep_state rsw_cep_fail(struct rsw_cep *cep, int status,
				       enum rsw_mpa_reason reason,
				       enum rsw_stat stat)
{
	rsw_stat_inc(cep->counters, stat);
	rsw_cep_dbg(cep, "failed: %d (%s)\n", status,
		    rsw_mpa_reason(reason)->name);
	cep->evd = (struct rsw_cm_event) { .status = status, .reason = reason };
	if (cep->initiator) {
		cep->ev = RSW_CEP_EV_REPLY;
	} else {
		cep->ev = RSW_CEP_EV_DISCARD;
		if (cep->listener && status == -ETIMEDOUT)
			atomic_inc(&cep->listener->stats.timeouts);
		else if (cep->listener)
			atomic_inc(&cep->listener->stats.fail[reason]);
	}
	rsw_cep_disarm_timeout(cep);
	rsw_cep_close_sock(cep);
	return RSW_CEP_CLOSED;
}

static enum rsw_cep_state rsw_cep_fail_mpa(struct rsw_cep *cep,
					   enum rsw_mpa_reason reason)
{
	const struct rsw_mpa_reason_info *ri = rsw_mpa_reason(reason);

	return rsw_cep_fail(cep, ri->err, reason, ri->stat);
}

static enum rsw_cep_state rsw_cep_step_connecting(struct rsw_cep *cep)
{
	struct sock *sk = cep->sock->sk;
	struct rsw_mpa_frame req;
	int err;

	if (READ_ONCE(cep->timed_out))
		return rsw_cep_fail(cep, -ETIMEDOUT, RSW_MPA_OK,
				    RSW_STAT_MPA_TIMEOUTS);
	switch (READ_ONCE(sk->sk_state)) {
	case TCP_SYN_SENT:
		return RSW_CEP_CONNECTING;
	case TCP_ESTABLISHED:
	case TCP_CLOSE_WAIT:
		rsw_cep_note_ports(cep);
		break;
	default:
		err = sock_error(sk);
		return rsw_cep_fail(cep, err ?: -ECONNREFUSED, RSW_MPA_OK,
				    RSW_STAT_MPA_TCP_FAILS);
	}
	err = rsw_mpa_request(&cep->lp, &req);
	if (!err)
		err = rsw_cep_send_frame(cep, &req, false);
	if (err)
		return rsw_cep_fail(cep, err, RSW_MPA_OK,
				    RSW_STAT_MPA_REQUEST_SEND_FAILS);
	rsw_mpa_rx_init(&cep->rx, true, cep->lp.rev);
	return RSW_CEP_AWAIT_REPLY;
}

static void rsw_cep_event_pd(struct rsw_cep *cep)
{
	const struct rsw_mpa_frame *f = &cep->rx.frame;
	/*
	 * A peer that sent no RFC 6581 IRD/ORD (MPA v1, or v2 without them)
	 * is told the device's peer_ird_ord setting (default: the most we
	 * could use, as before that negotiation existed): a ULP accepting
	 * with its defaults then gets Reads, not IRD 0.
	 */
	u16 blind = cep->lp.peer_ird_ord ?: RSW_MAX_RD_ATOM;

	cep->evd.pd = f->pd;
	cep->evd.pd_len = min_t(u16, f->pd_len, RSW_MPA_IWCM_MAX_PD);
	cep->evd.ird = f->enhanced ? f->ird : blind;
	cep->evd.ord = f->enhanced ? f->ord : blind;
}

/*
 * Initiator: a Reply that fails negotiation is answered, when
 * rsw_mpa_reason() says so (RFC 6581: insufficient IRD, no usable RTR), by
 * an MPA Terminate as the first FPDU, framed as the Reply agreed (its C
 * bit), before the stream closes.  Best effort: the socket is closing.
 */
static void rsw_cep_send_term(struct rsw_cep *cep, enum rsw_mpa_reason r)
{
	const struct rsw_mpa_reason_info *ri = rsw_mpa_reason(r);
	struct rsw_tx_term t = {
		.why.cause = RSW_TERM_CAUSE(RSW_TERM_LAYER_LLP, RSW_LLP_ET_MPA,
					    ri->ecode),
	};
	struct rsw_tx_config cfg = {
		/* Either frame's C turns CRC on (RFC 5044 7.1.1). */
		.crc = cep->lp.crc || cep->rx.frame.crc,
		/* The Reply's M: the responder receives with Markers. */
		.markers = cep->rx.frame.markers,
		.mss = tcp_sk(cep->sock->sk)->mss_cache,
	};
	struct {
		struct rsw_tx tx;
		struct rsw_tx_sock ts;
		struct rsw_stats_route route;	/* never bound: no QP yet */
	} *b;
	int ret;

	if (!ri->term)
		return;
	b = kvzalloc(sizeof(*b), GFP_KERNEL);
	if (!b)
		return;
	rsw_tx_sock_init(&b->ts, cep->sock);
	b->route.dev = cep->counters;	/* the cep's reference */
	b->ts.route = &b->route;
	if (!rsw_tx_init(&b->tx, &cfg, NULL, NULL, &rsw_tx_sock_ops, &b->ts)) {
		b->tx.route = &b->route;
		lock_sock(cep->sock->sk);	/* the sink's contract */
		ret = rsw_tx_terminate(&b->tx, &t);
		release_sock(cep->sock->sk);
		/* As stream.c's: in the engine.  No QP yet: qp=0. */
		if (!ret || ret == -EAGAIN)
			trace_rsw_term_tx(0, &t.why.cause);
	}
	kvfree(b);
}

static enum rsw_cep_state rsw_cep_step_await_reply(struct rsw_cep *cep)
{
	enum rsw_mpa_rx_status st = rsw_cep_read(cep);
	enum rsw_mpa_reason r;

	if (st == RSW_MPA_RX_MORE) {
		if (READ_ONCE(cep->timed_out))
			return rsw_cep_fail(cep, -ETIMEDOUT, RSW_MPA_OK,
					    RSW_STAT_MPA_TIMEOUTS);
		return RSW_CEP_AWAIT_REPLY;
	}
	r = st == RSW_MPA_RX_FAILED ? cep->rx.reason :
	    rsw_mpa_connected(&cep->lp, &cep->rx.frame, &cep->conn);
	if (r) {
		if (st == RSW_MPA_RX_COMPLETE)
			rsw_cep_send_term(cep, r);
		rsw_cep_fail_mpa(cep, r);
		if (r == RSW_MPA_E_REJECTED)
			rsw_cep_event_pd(cep);
		return RSW_CEP_CLOSED;
	}
	rsw_cep_disarm_timeout(cep);
	rsw_stat_inc(cep->counters, RSW_STAT_MPA_CONNECTED);
	cep->ev = RSW_CEP_EV_REPLY;
	cep->evd = (struct rsw_cm_event) {};
	rsw_cep_event_pd(cep);
	return RSW_CEP_CONNECTED;
}

/* Send our Reply or Reject frame; a failure to is counted. */
static int rsw_cep_send_reply(struct rsw_cep *cep,
			      const struct rsw_mpa_frame *rep)
{
	int ret = rsw_cep_send_frame(cep, rep, true);

	if (ret)
		rsw_stat_inc(cep->counters, RSW_STAT_MPA_REPLY_SEND_FAILS);
	return ret;
}

/* Reject frame for a Request we refuse ourselves; best effort. */
static void rsw_cep_refuse(struct rsw_cep *cep, enum rsw_mpa_reason r)
{
	struct rsw_mpa_frame rep;

	if (!rsw_mpa_reason(r)->reply)
		return;
	rsw_mpa_reject(&cep->lp, &cep->rx.frame, &rep);
	rsw_cep_send_reply(cep, &rep);
}

static enum rsw_cep_state rsw_cep_step_await_request(struct rsw_cep *cep)
{
	enum rsw_mpa_rx_status st = rsw_cep_read(cep);
	enum rsw_mpa_reason r;

	if (st == RSW_MPA_RX_MORE) {
		if (READ_ONCE(cep->timed_out))
			return rsw_cep_fail(cep, -ETIMEDOUT, RSW_MPA_OK,
					    RSW_STAT_MPA_TIMEOUTS);
		return RSW_CEP_AWAIT_REQUEST;
	}
	if (st == RSW_MPA_RX_FAILED)
		return rsw_cep_fail_mpa(cep, cep->rx.reason);
	r = rsw_mpa_check_request(&cep->lp, &cep->rx.frame);
	if (r) {
		rsw_cep_refuse(cep, r);
		return rsw_cep_fail_mpa(cep, r);
	}
	rsw_cep_disarm_timeout(cep);
	cep->ev = RSW_CEP_EV_REQUEST;
	cep->evd = (struct rsw_cm_event) {};
	rsw_cep_event_pd(cep);
	return RSW_CEP_REQ_RCVD;
}

static enum rsw_cep_state rsw_cep_step_connected(struct rsw_cep *cep)
{
	struct sock *sk;

	if (!cep->sock)
		return RSW_CEP_CONNECTED;	/* taken by the QP */
	sk = cep->sock->sk;
	/* Report the connection first; the work runs again after it. */
	if (READ_ONCE(sk->sk_state) == TCP_ESTABLISHED ||
	    cep->ev != RSW_CEP_EV_NONE)
		return RSW_CEP_CONNECTED;
	cep->ev = RSW_CEP_EV_CLOSED;
	cep->evd = (struct rsw_cm_event) {
		.status = sock_error(sk) ?: -ECONNRESET,
	};
	rsw_cep_close_sock(cep);
	return RSW_CEP_CLOSED;
}

static enum rsw_cep_state rsw_cep_step_stay(struct rsw_cep *cep)
{
	return cep->state;
}

static enum rsw_cep_state
(*const rsw_cep_steps[RSW_CEP_NUM])(struct rsw_cep *cep) = {
	[RSW_CEP_LISTENING] = rsw_cep_step_stay,	/* rsw_listen_work */
	[RSW_CEP_CONNECTING] = rsw_cep_step_connecting,
	[RSW_CEP_AWAIT_REPLY] = rsw_cep_step_await_reply,
	[RSW_CEP_AWAIT_REQUEST] = rsw_cep_step_await_request,
	[RSW_CEP_REQ_RCVD] = rsw_cep_step_stay,		/* the ULP decides */
	[RSW_CEP_CONNECTED] = rsw_cep_step_connected,
	[RSW_CEP_CLOSED] = rsw_cep_step_stay,
};

/*
 * The namespace of the socket is dying (rsw_cm_net_exit()): a handshake
 * fails as on any error; a connection not yet taken by its QP closes.
 * An event already due goes first (the work runs again after it).
 */
static enum rsw_cep_state rsw_cep_step(struct rsw_cep *cep)
{
	if (!READ_ONCE(cep->net_gone) || !cep->sock ||
	    cep->ev != RSW_CEP_EV_NONE)
		return rsw_cep_steps[cep->state](cep);
	if (cep->state != RSW_CEP_CONNECTED)
		return rsw_cep_fail(cep, -ENETDOWN, RSW_MPA_OK,
				    RSW_STAT_MPA_NETDOWN);
	cep->ev = RSW_CEP_EV_CLOSED;
	cep->evd = (struct rsw_cm_event) { .status = -ENETDOWN };
	rsw_cep_close_sock(cep);
	return RSW_CEP_CLOSED;
}

/* Run the steps; return the event to deliver (copied to *@evd). */
static enum rsw_cep_ev rsw_cep_advance(struct rsw_cep *cep,
				       struct rsw_cm_event *evd)
{
	enum rsw_cep_state prev;
	enum rsw_cep_ev ev;

	mutex_lock(&cep->lock);
	do {
		prev = cep->state;
		rsw_cep_set_state(cep, rsw_cep_step(cep));
		if (cep->state != prev)
			rsw_cep_dbg(cep, "from %s\n", rsw_cep_state_name(prev));
	} while (cep->state != prev);
	ev = cep->dead ? RSW_CEP_EV_NONE : cep->ev;
	cep->ev = RSW_CEP_EV_NONE;
	*evd = cep->evd;
	mutex_unlock(&cep->lock);
	return ev;
}

/*
 * A child with a valid Request: hand it (the list's reference) to the
 * listener's owner, unless the listener is being destroyed, which then
 * owns the child's fate.
 */
static void rsw_cep_deliver_request(struct rsw_cep *cep,
				    const struct rsw_cm_event *evd)
{
	struct rsw_cep *l = cep->listener;

	mutex_lock(&l->children_lock);
	if (l->dead || list_empty(&cep->child_link)) {
		mutex_unlock(&l->children_lock);
		return;
	}
	list_del_init(&cep->child_link);
	l->ops->connect_request(l->ctx, cep, evd);
	mutex_unlock(&l->children_lock);
}

/* A failed child leaves its listener's list and drops the list's reference. */
static void rsw_cep_discard(struct rsw_cep *cep)
{
	struct rsw_cep *l = cep->listener;
	bool listed;

	mutex_lock(&l->children_lock);
	listed = !list_empty(&cep->child_link);
	list_del_init(&cep->child_link);
	mutex_unlock(&l->children_lock);
	if (listed)
		rsw_cep_put(cep);
}

static void rsw_cep_work(struct work_struct *work)
{
	struct rsw_cep *cep = container_of(work, struct rsw_cep, work);
	struct rsw_cm_event evd;

	switch (rsw_cep_advance(cep, &evd)) {
	case RSW_CEP_EV_REQUEST:
		rsw_cep_deliver_request(cep, &evd);
		break;
	case RSW_CEP_EV_REPLY:
		cep->ops->connect_reply(cep->ctx, cep, &evd);
		if (!evd.status)
			rsw_cep_queue(cep);	/* a close seen meanwhile */
		break;
	case RSW_CEP_EV_ESTABLISHED:
		cep->ops->established(cep->ctx, cep);
		rsw_cep_queue(cep);
		break;
	case RSW_CEP_EV_CLOSED:
		if (cep->ops->closed)
			cep->ops->closed(cep->ctx, cep, evd.status);
		break;
	case RSW_CEP_EV_DISCARD:
		rsw_cep_discard(cep);
		break;
	case RSW_CEP_EV_NONE:
		break;
	}
	rsw_cep_put(cep);
}

/* -------------------------------------------------------------------------
 * Listening.
 */

/* A child for accepted socket @sock, listed and running.  children_lock. */
static void rsw_listen_add_child(struct rsw_cep *l, struct socket *sock)
{
	struct rsw_cm_args args = {
		.lp = &l->lp, .ops = l->ops, .ctx = NULL,
		.stats = l->counters,
	};
	struct rsw_cep *cep;

	lockdep_assert_held(&l->children_lock);
	cep = rsw_cep_alloc(&args);
	if (!cep) {
		sock_release(sock);
		return;
	}
	cep->timeout_jiffies = l->timeout_jiffies;
	cep->sock = sock;
	rsw_cep_note_ports(cep);
	rsw_cep_first_state(cep, RSW_CEP_AWAIT_REQUEST);
	cep->net = l->net;
	rsw_cep_publish(cep);	/* if not, its work fails it at once */
	kref_get(&l->ref);
	cep->listener = l;
	rsw_mpa_rx_init(&cep->rx, false, 0);
	list_add_tail(&cep->child_link, &l->children);	/* its reference */
	atomic_inc(&l->stats.accepted);
	rsw_cep_hook(cep, l);
	rsw_cep_arm_timeout(cep);
	rsw_cep_queue(cep);
	rsw_cep_dbg(cep, "accepted by listener CEP[%u]\n", l->id);
}

static void rsw_listen_work(struct work_struct *work)
{
	struct rsw_cep *l = container_of(work, struct rsw_cep, work);
	struct socket *sock;

	mutex_lock(&l->children_lock);
	while (l->state == RSW_CEP_LISTENING &&
	       !kernel_accept(l->sock, &sock, O_NONBLOCK))
		rsw_listen_add_child(l, sock);
	mutex_unlock(&l->children_lock);
	rsw_cep_put(l);
}

static int rsw_addr_len(const struct sockaddr *sa)
{
	switch (sa->sa_family) {
	case AF_INET:
		return sizeof(struct sockaddr_in);
	case AF_INET6:
		return sizeof(struct sockaddr_in6);
	default:
		return -EAFNOSUPPORT;
	}
}

static int rsw_cep_socket(struct rsw_cep *cep, struct net *net,
			  const struct sockaddr *sa)
{
	int len = rsw_addr_len(sa);

	if (len < 0)
		return len;
	return sock_create_kern(net, sa->sa_family, SOCK_STREAM, IPPROTO_TCP,
				&cep->sock);
}

static void rsw_cep_release_sock(struct rsw_cep *cep)
{
	sock_release(cep->sock);
	rsw_cep_sock_gone(cep);
}

/*
 * Run @set_up (which creates a socket in @args->net and publishes its
 * cep) holding the namespace: the device's netdev pins nothing, and the
 * socket must be published before the namespace can begin to die.
 * -ENETDOWN if it is dying already.
 */
static struct rsw_cep *
rsw_cm_pin_net(const struct rsw_cm_args *args,
	       struct rsw_cep *(*set_up)(const struct rsw_cm_args *args))
{
	struct rsw_cep *cep;

	if (!maybe_get_net(args->net))
		return ERR_PTR(-ENETDOWN);
	cep = set_up(args);
	put_net(args->net);
	return cep;
}

static struct rsw_cep *rsw_cm_listen_pinned(const struct rsw_cm_args *args)
{
	struct rsw_cep *l;
	int ret;

	might_sleep();
	if (!args->local || !args->ops || !args->ops->connect_request ||
	    !args->ops->established)
		return ERR_PTR(-EINVAL);
	if (args->lp && rsw_mpa_params_check(args->lp))
		return ERR_PTR(-EINVAL);
	l = rsw_cep_alloc(args);
	if (!l)
		return ERR_PTR(-ENOMEM);
	INIT_WORK(&l->work, rsw_listen_work);
	l->listening = true;
	ret = rsw_cep_socket(l, args->net, args->local);
	if (ret)
		goto err_put;
	sock_set_reuseaddr(l->sock->sk);
	if (args->freebind)
		ip_sock_set_freebind(l->sock->sk);
	ret = kernel_bind(l->sock, (struct sockaddr *)args->local,
			  rsw_addr_len(args->local));
	if (ret)
		goto err_release;
	rsw_cep_note_ports(l);
	rsw_cep_first_state(l, RSW_CEP_LISTENING);
	rsw_cep_hook(l, NULL);
	ret = kernel_listen(l->sock, args->backlog ?: SOMAXCONN);
	if (!ret && !rsw_cep_publish(l))
		ret = -ENETDOWN;
	if (ret)
		goto err_unhook;
	rsw_cep_dbg(l, "listening\n");
	return l;

err_unhook:
	rsw_cep_unhook(l);
	if (cancel_work_sync(&l->work))
		rsw_cep_put(l);
	/* Traced as listening: its history ends closed. */
	mutex_lock(&l->children_lock);
	rsw_cep_set_state(l, RSW_CEP_CLOSED);
	mutex_unlock(&l->children_lock);
err_release:
	rsw_cep_release_sock(l);
err_put:
	rsw_cep_put(l);
	return ERR_PTR(ret);
}

/*
 * Listen on @args->local (port 0: any; rsw_cm_local_addr() tells which).
 * Children take @args->lp as their responder policy.  Process context.
 */
struct rsw_cep *rsw_cm_listen(const struct rsw_cm_args *args)
{
	return rsw_cm_pin_net(args, rsw_cm_listen_pinned);
}
EXPORT_SYMBOL_IF_KUNIT(rsw_cm_listen);

/* -------------------------------------------------------------------------
 * Connecting, accepting, rejecting.
 */
static int rsw_cep_copy_pd(struct rsw_cep *cep, const struct rsw_mpa_params *lp)
{
	if (lp->pd_len > RSW_MPA_IWCM_MAX_PD || (lp->pd_len && !lp->pd))
		return -EINVAL;
	if (lp->pd_len)
		memcpy(cep->pd_buf, lp->pd, lp->pd_len);
	cep->lp.pd = cep->pd_buf;
	cep->lp.pd_len = lp->pd_len;
	return 0;
}

static int rsw_cep_start_connect(struct rsw_cep *cep,
				 const struct rsw_cm_args *args)
{
	int ret;

	if (args->local) {
		/*
		 * The port is the one rdma_cm allocated in its own port space,
		 * which knows nothing of TCP's: an earlier connection of ours
		 * may still hold it in TIME_WAIT.  Our sockets all allow reuse
		 * (as the listeners do), so such a leftover does not refuse
		 * the bind with -EADDRINUSE; a listener on the port still does.
		 */
		sock_set_reuseaddr(cep->sock->sk);
		ret = kernel_bind(cep->sock, (struct sockaddr *)args->local,
				  rsw_addr_len(args->local));
		if (ret)
			return ret;
		rsw_cep_note_ports(cep);
	}
	/* sin_port and sin6_port share their place. */
	cep->rport =
		ntohs(((const struct sockaddr_in *)args->remote)->sin_port);
	rsw_cep_first_state(cep, RSW_CEP_CONNECTING);
	rsw_cep_hook(cep, NULL);
	ret = kernel_connect(cep->sock, (struct sockaddr *)args->remote,
			     rsw_addr_len(args->remote), O_NONBLOCK);
	if (ret && ret != -EINPROGRESS) {
		rsw_cep_unhook(cep);
		if (cancel_work_sync(&cep->work))
			rsw_cep_put(cep);
		/* Traced as connecting: its history ends closed. */
		mutex_lock(&cep->lock);
		rsw_cep_set_state(cep, RSW_CEP_CLOSED);
		mutex_unlock(&cep->lock);
		return ret;
	}
	return 0;
}

static struct rsw_cep *rsw_cm_connect_pinned(const struct rsw_cm_args *args)
{
	struct rsw_mpa_frame req;
	struct rsw_cep *cep;
	int ret;

	might_sleep();
	if (!args->remote || !args->lp || !args->ops ||
	    !args->ops->connect_reply)
		return ERR_PTR(-EINVAL);
	if (rsw_mpa_request(args->lp, &req))
		return ERR_PTR(-EINVAL);
	cep = rsw_cep_alloc(args);
	if (!cep)
		return ERR_PTR(-ENOMEM);
	cep->initiator = true;
	ret = rsw_cep_copy_pd(cep, args->lp);
	if (ret)
		goto err_put;
	ret = rsw_cep_socket(cep, args->net, args->remote);
	if (ret)
		goto err_put;
	/*
	 * From the connect on, the work item may finish the handshake and
	 * report it, and the owner may destroy the cep in its callback
	 * before this function returns: keep a reference of our own until
	 * the end, and arm the timeout only while the handshake is running.
	 */
	kref_get(&cep->ref);
	ret = rsw_cep_start_connect(cep, args);
	if (ret) {
		rsw_cep_put(cep);
		goto err_release;
	}
	mutex_lock(&cep->lock);
	if (!cep->dead && (cep->state == RSW_CEP_CONNECTING ||
			   cep->state == RSW_CEP_AWAIT_REPLY))
		rsw_cep_arm_timeout(cep);
	rsw_cep_publish(cep);	/* if not, the work fails it at once */
	mutex_unlock(&cep->lock);
	rsw_cep_queue(cep);
	rsw_cep_dbg(cep, "connecting\n");
	rsw_cep_put(cep);
	return cep;

err_release:
	rsw_cep_release_sock(cep);
err_put:
	rsw_cep_put(cep);
	return ERR_PTR(ret);
}

/*
 * Connect to @args->remote and send an MPA Request built from @args->lp;
 * the outcome comes as connect_reply.  Never blocks.  Process context.
 * connect_reply may run before this returns; an owner that destroys the
 * cep once connect_reply ran must not use the pointer returned here.
 */
struct rsw_cep *rsw_cm_connect(const struct rsw_cm_args *args)
{
	return rsw_cm_pin_net(args, rsw_cm_connect_pinned);
}
EXPORT_SYMBOL_IF_KUNIT(rsw_cm_connect);

/*
 * Responder: accept @cep (after connect_request) with @lp's IRD/ORD, RTR
 * policy and private data; events then go to @ctx.  Sends the Reply; on a
 * negotiation failure sends a Reject if due, closes and returns the
 * reason's errno.  Process context.
 */
int rsw_cm_accept(struct rsw_cep *cep, const struct rsw_mpa_params *lp,
		  void *ctx)
{
	struct rsw_mpa_frame rep;
	enum rsw_mpa_reason r;
	int ret = -EINVAL;

	mutex_lock(&cep->lock);
	if (cep->state != RSW_CEP_REQ_RCVD || rsw_mpa_params_check(lp))
		goto out_unlock;
	ret = rsw_cep_copy_pd(cep, lp);
	if (ret)
		goto out_unlock;
	cep->lp.ird = lp->ird;
	cep->lp.ord = lp->ord;
	cep->ctx = ctx;
	r = rsw_mpa_accept(&cep->lp, &cep->rx.frame, &rep, &cep->conn);
	if (!r)
		ret = rsw_cep_send_reply(cep, &rep);
	else if (rsw_mpa_reason(r)->reply)
		rsw_cep_send_reply(cep, &rep);
	if (r)
		rsw_stat_inc(cep->counters, rsw_mpa_reason(r)->stat);
	else if (!ret)
		rsw_stat_inc(cep->counters, RSW_STAT_MPA_ACCEPTED);
	if (r || ret) {
		ret = r ? rsw_mpa_reason(r)->err : ret;
		rsw_cep_close_sock(cep);
		rsw_cep_set_state(cep, RSW_CEP_CLOSED);
		goto out_unlock;
	}
	rsw_cep_set_state(cep, RSW_CEP_CONNECTED);
	cep->ev = RSW_CEP_EV_ESTABLISHED;
	rsw_cep_queue(cep);
out_unlock:
	mutex_unlock(&cep->lock);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_cm_accept);

/* Responder: refuse @cep with a Reject carrying @pd.  Process context. */
int rsw_cm_reject(struct rsw_cep *cep, const void *pd, u8 pd_len)
{
	struct rsw_mpa_params lp;
	struct rsw_mpa_frame rep;
	int ret = -EINVAL;

	mutex_lock(&cep->lock);
	if (cep->state != RSW_CEP_REQ_RCVD)
		goto out_unlock;
	lp = cep->lp;
	lp.pd = pd;
	lp.pd_len = pd_len;
	ret = rsw_cep_copy_pd(cep, &lp);
	if (ret)
		goto out_unlock;
	rsw_mpa_reject(&cep->lp, &cep->rx.frame, &rep);
	ret = rsw_cep_send_reply(cep, &rep);
	if (!ret)
		rsw_stat_inc(cep->counters, RSW_STAT_MPA_REJECTS_SENT);
	rsw_cep_close_sock(cep);
	rsw_cep_set_state(cep, RSW_CEP_CLOSED);
out_unlock:
	mutex_unlock(&cep->lock);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_cm_reject);

/* -------------------------------------------------------------------------
 * Queries, handover, destruction.
 */

/* The negotiated connection of a connected cep.  Process context. */
int rsw_cm_conn(struct rsw_cep *cep, struct rsw_mpa_conn *conn)
{
	int ret = -ENOTCONN;

	mutex_lock(&cep->lock);
	if (cep->state == RSW_CEP_CONNECTED) {
		*conn = cep->conn;
		ret = 0;
	}
	mutex_unlock(&cep->lock);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_cm_conn);

/* Bound address of @cep's socket (a listener's port).  Process context. */
int rsw_cm_local_addr(struct rsw_cep *cep, struct sockaddr_storage *ss)
{
	int ret = -ENOTCONN;

	mutex_lock(&cep->lock);
	if (cep->sock)
		ret = kernel_getsockname(cep->sock, (struct sockaddr *)ss);
	mutex_unlock(&cep->lock);
	return ret < 0 ? ret : 0;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_cm_local_addr);

/* Peer address of a connected (or connecting) cep.  Process context. */
int rsw_cm_peer_addr(struct rsw_cep *cep, struct sockaddr_storage *ss)
{
	int ret = -ENOTCONN;

	mutex_lock(&cep->lock);
	if (cep->sock)
		ret = kernel_getpeername(cep->sock, (struct sockaddr *)ss);
	mutex_unlock(&cep->lock);
	return ret < 0 ? ret : 0;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_cm_peer_addr);

/*
 * The QP takes a connected cep's socket: its callbacks are restored and
 * every octet after the MPA frame is still in it.  NULL if not connected
 * or already taken.  The cep stays for rsw_cm_destroy().  Process context.
 */
struct socket *rsw_cm_take_socket(struct rsw_cep *cep)
{
	struct socket *sock = NULL;

	mutex_lock(&cep->lock);
	if (cep->state == RSW_CEP_CONNECTED && cep->sock) {
		rsw_cep_unhook(cep);
		sock = cep->sock;
		/* Still counted by rsw_cm_net_busy() until it is placed. */
		spin_lock_bh(&rsw_ceps_lock);
		cep->handing_over = true;
		WRITE_ONCE(cep->sock, NULL);
		spin_unlock_bh(&rsw_ceps_lock);
	}
	mutex_unlock(&cep->lock);
	return sock;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_cm_take_socket);

/*
 * The socket rsw_cm_take_socket() returned is on a stream's list or
 * released: a namespace exit waiting for @cep's socket may go on.
 */
void rsw_cm_socket_placed(struct rsw_cep *cep)
{
	spin_lock_bh(&rsw_ceps_lock);
	cep->handing_over = false;
	spin_unlock_bh(&rsw_ceps_lock);
	wake_up_all(&rsw_cep_sock_wait);
}
EXPORT_SYMBOL_IF_KUNIT(rsw_cm_socket_placed);

const struct rsw_cm_listen_stats *rsw_cm_listen_stats(struct rsw_cep *l)
{
	return &l->stats;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_cm_listen_stats);

/* CEPs alive module-wide, for leak checks. */
int rsw_cm_live(void)
{
	return atomic_read(&rsw_cep_live);
}
EXPORT_SYMBOL_IF_KUNIT(rsw_cm_live);

/* Stop @cep: no more events, work or timeout; socket closed. */
static void rsw_cep_stop(struct rsw_cep *cep)
{
	mutex_lock(&cep->lock);
	cep->dead = true;
	rsw_cep_set_state(cep, RSW_CEP_CLOSED);
	rsw_cep_close_sock(cep);
	mutex_unlock(&cep->lock);
	if (cancel_delayed_work_sync(&cep->timeout))
		rsw_cep_put(cep);
	if (cancel_work_sync(&cep->work))
		rsw_cep_put(cep);
}

/*
 * Stop accepting and close the listening socket (once: its owner's destroy
 * and rsw_cm_net_exit() may both come).  Children are left alone.
 */
static void rsw_listen_close(struct rsw_cep *l, bool dead)
{
	mutex_lock(&l->children_lock);
	/* rsw_listen_work accepts no more */
	rsw_cep_set_state(l, RSW_CEP_CLOSED);
	if (dead)
		l->dead = true;
	mutex_unlock(&l->children_lock);
	mutex_lock(&l->lock);
	if (l->sock) {
		rsw_cep_unhook(l);
		rsw_cep_release_sock(l);
	}
	mutex_unlock(&l->lock);
	if (cancel_work_sync(&l->work))
		rsw_cep_put(l);
}

static void rsw_listen_stop(struct rsw_cep *l)
{
	struct rsw_cep *child;

	rsw_listen_close(l, true);
	for (;;) {
		mutex_lock(&l->children_lock);
		child = list_first_entry_or_null(&l->children, struct rsw_cep,
						 child_link);
		if (child)
			list_del_init(&child->child_link);
		mutex_unlock(&l->children_lock);
		if (!child)
			break;
		rsw_cep_stop(child);
		rsw_cep_put(child);
	}
}

/*
 * Close and release @cep (a listener also aborts its children not yet
 * handed out).  Waits for its work and callbacks; must not be called from
 * a callback about @cep.  Process context.
 */
void rsw_cm_destroy(struct rsw_cep *cep)
{
	might_sleep();
	rsw_cep_dbg(cep, "destroy\n");
	if (cep->listening)
		rsw_listen_stop(cep);
	else
		rsw_cep_stop(cep);
	rsw_cep_put(cep);
}
EXPORT_SYMBOL_IF_KUNIT(rsw_cm_destroy);

/* A published cep of @net still has a socket, or is handing one over. */
static bool rsw_cm_net_busy(struct net *net)
{
	struct rsw_cep *cep;
	bool busy = false;

	spin_lock_bh(&rsw_ceps_lock);
	list_for_each_entry(cep, &rsw_ceps, all_link) {
		if (cep->net == net &&
		    (READ_ONCE(cep->sock) || cep->handing_over)) {
			busy = true;
			break;
		}
	}
	spin_unlock_bh(&rsw_ceps_lock);
	return busy;
}

/* The next published cep of @net not yet told, referenced and marked. */
static struct rsw_cep *rsw_cm_net_next(struct net *net)
{
	struct rsw_cep *cep, *found = NULL;

	spin_lock_bh(&rsw_ceps_lock);
	list_for_each_entry(cep, &rsw_ceps, all_link) {
		if (cep->net != net || READ_ONCE(cep->net_gone) ||
		    !kref_get_unless_zero(&cep->ref))
			continue;
		WRITE_ONCE(cep->net_gone, true);
		found = cep;
		break;
	}
	spin_unlock_bh(&rsw_ceps_lock);
	return found;
}

void rsw_cm_net_exit(struct net *net)
{
	struct rsw_cep *cep;

	might_sleep();
	while ((cep = rsw_cm_net_next(net))) {
		if (cep->listening)
			rsw_listen_close(cep, false);
		else
			rsw_cep_queue(cep);
		rsw_cep_put(cep);
	}
	wait_event(rsw_cep_sock_wait, !rsw_cm_net_busy(net));
}

int rsw_cm_init(void)
{
	/*
	 * Reclaim-safe work (rsw_iw_wq's endpoint release, kernel ULPs on
	 * iwcm_wq or nvmet_wq) destroys ceps, which cancels their work
	 * synchronously: that needs a queue with a rescuer too.
	 */
	rsw_cm_wq = alloc_workqueue("rdmap_sw_cm", WQ_UNBOUND | WQ_MEM_RECLAIM,
				    0);
	return rsw_cm_wq ? 0 : -ENOMEM;
}

void rsw_cm_exit(void)
{
	destroy_workqueue(rsw_cm_wq);
	WARN_ON(atomic_read(&rsw_cep_live));
}
