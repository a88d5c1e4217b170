// SPDX-License-Identifier: GPL-2.0
/*
 * rdmap_sw: a QP's connection in full operation (types in stream.h, API in
 * internal.h): its lifecycle, hooks, TX and endings here; its RX delivery
 * side in stream_rx.c; what the two share in stream_priv.h.
 *
 * Model: the socket lock is the stream's lock.
 *  - RX runs in the socket's data-ready callback: tcp_read_sock() feeds the RX
 *    parser, whose callbacks (stream_rx.c) place payload into registered memory
 *    and complete receives and Reads.  data-ready runs in softirq with the
 *    socket's spinlock held and nobody owning the socket, or from
 *    release_sock() processing the backlog in the owner's context; in the
 *    latter case RX runs there only if the owner is the stream's own work
 *    (anyone else might hold a lock a completion handler takes), else the work
 *    item does it; nor while the work is inside the TX engine
 *    (tcp_sendmsg_locked() flushes the backlog now and then).  Nothing on the
 *    RX side sleeps, takes the socket lock or sends, and one data-ready call
 *    does a bounded amount (RSW_STREAM_RX_SOFT_*).  QP and SRQ events RX raises
 *    (SRQ limit, last WQE reached) reach the ULP from softirq, as a hardware
 *    driver's interrupt would.
 *  - One work item per stream, on rsw_stream_wq, does the rest, owning the
 *    socket (lock_sock()) while it touches the stream's state (stream_priv.h):
 *    RX left over (budget, a completion it had to defer), the TX engine over
 *    owed Read Responses and the send queue (tcp_sendmsg_locked()), the
 *    Terminate, and the phase changes.  Upcalls (events, closed()) and sleeping
 *    waits run with the socket released.
 *  - A user doorbell (post_send without work requests, a system call)
 *    that finds the SQ idle runs the TX engine itself, owning the socket,
 *    if the work neither owns it nor waits for it
 *    (rsw_stream_tx_direct()).  No completion handler runs in the
 *    poster: RX that queued up in the backlog meanwhile goes to the work,
 *    and a CQ's handler runs from the CQ's own work (cq.c); the only
 *    event it can raise is the user QP's own, to uverbs.  Kernel posts
 *    only queue the work: a kernel ULP may post from atomic context,
 *    where lock_sock() cannot be taken.
 *  - Wakeups: write space, state changes, post_send and modify_qp queue
 *    the work; RX queues it only when it left something to do (a Read
 *    Request to answer, a Read completed while TX holds a WQE back for
 *    ORD or a fence or an orderly close waits for it, the
 *    first FPDU a responder waited for, the end of RUN, a deferred
 *    completion, its budget spent).  Completions reach the CQ straight
 *    from RX, and in softirq so does the CQ's handler, called once the
 *    parser is out (rsw_cq_batch_end(), cq.c); elsewhere the handler
 *    runs from the CQ's own work.
 * So RX and TX of one stream never run concurrently: the parser, the
 * engine, the Read bookkeeping between them and the stream's state need no
 * lock of their own; the QP's queues keep theirs (taken from softirq too).
 *
 * Phases:
 *   IDLE    attached, QP in RTS, waiting for rsw_stream_start()
 *   RUN     full operation; an orderly close (modify_qp to SQD, the QP in
 *           CLOSING) stays in RUN until everything the SQ held at the
 *           close and every Response owed then is sent and our Reads have
 *           their Responses, or until its deadline
 *           (rsw_stream_close_ready())
 *   LINGER  our side is finished (after a Terminate, or an orderly close):
 *           the message in progress (or our pending Terminate) goes out,
 *           then our FIN; incoming octets are discarded until the peer's
 *           FIN or the linger timeout (RSW_STREAM_LINGER_MS).  modify_qp
 *           to SQE here sends our Terminate before the FIN, as in RUN, or
 *           resets once the FIN is out (rsw_stream_linger_sqe())
 *   DONE    QP in ERROR and flushed, socket released, closed() reported,
 *           the QP reference dropped
 * A QP moved to ERROR (by the ULP, a completion error or destroy_qp), a
 * reset or error on the socket, or a fault in the TX engine end the
 * stream abortively from any phase: the socket is closed with a reset.
 * (Not the memory of a message going away mid-message at an FPDU
 * boundary: a local error, its Terminate goes, rsw_stream_tx_fault().)
 * One exception: the ERROR our own Terminate put the QP in does not cut
 * the LINGER that sends it (rsw_stream_broken()); the consumer's ERROR
 * does.
 *
 * Our Terminate (RFC 5040 section 7.1: sent for every local and remote
 * error before the stream closes) goes at an FPDU boundary.  RUN sends it
 * at once when it can; when TCP holds part of an FPDU (the socket sink's
 * skip, tx.h) or an RTR in progress is in the way, it stays pending
 * (term_pending) and LINGER, before the FIN, finishes the RTR or only
 * that FPDU, abandons the message in progress (its WQE flushed) and sends
 * the Terminate.  A socket still full when the linger timeout ends
 * LINGER: the reset goes without it.
 *
 * Ready to receive (RFC 5044 section 7.1.2, RFC 6581): a responder sends
 * nothing before it has received a valid FPDU; with the peer-to-peer
 * model the initiator's first FPDU is the negotiated zero-length Write,
 * Read or Send, which completes no work request on either side.  The
 * initiator sends it right after our Reply.  If the exchange is not over
 * RSW_STREAM_RTR_MS into RUN (a responder has not had the RTR, an
 * initiator could not send it or its RTR Read has no Response), the stream
 * ends abortively (-ETIMEDOUT).  The deadline is a time (rtr_deadline),
 * checked whenever the work runs, after RX took what had come; the linger
 * delayed work, idle until LINGER, kicks the work at it, and at the
 * orderly close's deadline.
 *
 * Lifetime.  The stream is allocated by rsw_stream_attach(), owned by its
 * QP (qp->stream) and freed by rsw_stream_free() from destroy_qp, after
 * the stream ended (DONE), which drops the QP reference the stream took.
 * The socket is the stream's from attach to rsw_stream_end(), which
 * releases it.  Every count of its work, RX, TX and end goes through its
 * QP's counter route (s->route = &qp->stats, stats.h), never through the
 * device: the device's set, or the set of the rdma counter the QP is
 * bound to at that moment.  The route is borrowed: destroy_qp frees the
 * stream, after its work and linger timeout are gone, before it drops
 * the route's reference (stats.c).  Socket callbacks find
 * the stream through sk_user_data under RCU until the end unhooks them.
 *
 * Network namespaces.  The socket pins no namespace.  While it has its
 * socket, a stream is on rsw_streams with the socket's namespace; when
 * that namespace dies, rsw_stream_net_exit() (pernet .pre_exit, main.c)
 * marks its streams net_gone, which ends them abortively (-ENETDOWN) at
 * their next run, and waits until they have released their sockets.  A
 * socket of a namespace already dying is refused at attach.  The same
 * mark ends the streams of a device whose netdev is unregistering
 * (rsw_stream_dev_gone()): their TCP connections may never move again,
 * and the ULPs' teardown, which ib_core's unregistration waits for,
 * needs their work requests flushed now, not after TCP gives up.
 */
#include <linux/log2.h>
#include <linux/net.h>
#include <linux/slab.h>
#include <linux/tcp.h>
#include <linux/workqueue.h>
#include <net/ipv6.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "internal.h"
#include "stream_priv.h"
#include "trace.h"

/*
 * How long our FIN waits for the peer's before the socket is reset, and
 * how long an orderly close may take to send what it owes before LINGER
 * starts anyway (KUnit may lower both).
 */
#define RSW_STREAM_LINGER_MS	3000
static unsigned int rsw_stream_linger_ms = RSW_STREAM_LINGER_MS;
/* How long a peer-to-peer responder waits for the RTR (KUnit may lower). */
#define RSW_STREAM_RTR_MS	10000
static unsigned int rsw_stream_rtr_ms = RSW_STREAM_RTR_MS;
/* Work done per run before the item requeues itself. */
#define RSW_STREAM_ROUNDS	16
#define RSW_STREAM_TX_BUDGET	32
/*
 * Doorbell linger: how long a user SQ that ran empty stays marked busy
 * before the stream looks again, how many quiet looks it takes, and how
 * many new entries make a batch worth the work's run (fewer: no linger
 * for a while, see rsw_stream_sq_look()).
 */
#define RSW_STREAM_SQ_LINGER_NS	(20 * NSEC_PER_USEC)
#define RSW_STREAM_SQ_LOOKS	4
#define RSW_STREAM_SQ_BATCH	2
#define RSW_STREAM_SQ_BACKOFF	8	/* log2 of the longest pause, ticks */

static struct workqueue_struct *rsw_stream_wq;
/* Streams with a socket, by namespace (see the top); woken at each end. */
static LIST_HEAD(rsw_streams);
static DEFINE_SPINLOCK(rsw_streams_lock);
static DECLARE_WAIT_QUEUE_HEAD(rsw_streams_wait);

void rsw_stream_kick(struct rsw_stream *s)
{
	queue_work(rsw_stream_wq, &s->work);
}

/* ---------------------------------------------------------- socket hooks */

static struct rsw_stream *rsw_stream_of(struct sock *sk)
{
	return rcu_dereference_sk_user_data(sk);
}

static void rsw_stream_sk_wake(struct sock *sk)
{
	struct rsw_stream *s;

	rcu_read_lock();
	s = rsw_stream_of(sk);
	if (s)
		rsw_stream_kick(s);
	rcu_read_unlock();
}

/*
 * data-ready: RX here (see the top), unless someone other than the work
 * owns the socket (a poster must not see completions), or the work does
 * but is inside the TX engine (tcp_sendmsg_locked() flushes the backlog
 * every few segments: RX must not interleave with a message half sent).
 */
static void rsw_stream_sk_data_ready(struct sock *sk)
{
	struct rsw_stream *s;

	rcu_read_lock();
	s = rsw_stream_of(sk);
	if (s) {
		if (sock_owned_by_user(sk) &&
		    (current_work() != &s->work || s->tx_active))
			rsw_stream_kick(s);
		else
			rsw_stream_rx_ready(s, sk);
	}
	rcu_read_unlock();
}

static void rsw_stream_sk_write_space(struct sock *sk)
{
	if (sk_stream_is_writeable(sk) && sk->sk_socket)
		clear_bit(SOCK_NOSPACE, &sk->sk_socket->flags);
	rsw_stream_sk_wake(sk);
}

static void rsw_stream_hook(struct rsw_stream *s)
{
	struct sock *sk = s->sock->sk;

	write_lock_bh(&sk->sk_callback_lock);
	s->saved_data_ready = sk->sk_data_ready;
	s->saved_write_space = sk->sk_write_space;
	s->saved_state_change = sk->sk_state_change;
	rcu_assign_sk_user_data(sk, s);
	sk->sk_data_ready = rsw_stream_sk_data_ready;
	sk->sk_write_space = rsw_stream_sk_write_space;
	sk->sk_state_change = rsw_stream_sk_wake;
	write_unlock_bh(&sk->sk_callback_lock);
}

static void rsw_stream_unhook(struct rsw_stream *s)
{
	struct sock *sk = s->sock->sk;

	write_lock_bh(&sk->sk_callback_lock);
	rcu_assign_sk_user_data(sk, NULL);
	sk->sk_data_ready = s->saved_data_ready;
	sk->sk_write_space = s->saved_write_space;
	sk->sk_state_change = s->saved_state_change;
	write_unlock_bh(&sk->sk_callback_lock);
	/* A callback that found the stream has finished with it. */
	synchronize_rcu();
}

/* ------------------------------------------------------------- helpers */

/* Attach: @s's connection's ends, from its connected socket @sk. */
static void rsw_stream_save_ends(struct rsw_stream *s, const struct sock *sk)
{
	struct rsw_stream_ends *e = &s->ends;

	e->family = sk->sk_family;
	e->sport = htons(sk->sk_num);
	e->dport = sk->sk_dport;
	if (sk->sk_family == AF_INET) {
		e->src.s6_addr32[0] = sk->sk_rcv_saddr;
		e->dst.s6_addr32[0] = sk->sk_daddr;
	}
#if IS_ENABLED(CONFIG_IPV6)
	if (sk->sk_family == AF_INET6) {
		e->src = sk->sk_v6_rcv_saddr;
		e->dst = sk->sk_v6_daddr;
	}
#endif
}

/*
 * List @s (its socket in s->net); false if that namespace is dying or the
 * device's netdev is going (rsw_stream_dev_gone() sets that flag before it
 * takes the lock, so a stream is either refused here or marked there).
 */
static bool rsw_stream_list(struct rsw_stream *s)
{
	bool live;

	spin_lock_bh(&rsw_streams_lock);
	live = check_net(s->net) && !READ_ONCE(s->rsw->netdev_gone);
	if (live)
		list_add_tail(&s->link, &rsw_streams);
	spin_unlock_bh(&rsw_streams_lock);
	return live;
}

/*
 * @s is complete and hooked: from now on rsw_stream_net_exit() kicks it
 * itself; if it marked @s before, kick it now.  Until then its work is
 * never queued, so a failed attach can free it.
 */
static void rsw_stream_mark_hooked(struct rsw_stream *s)
{
	bool gone;

	spin_lock_bh(&rsw_streams_lock);
	s->hooked = true;
	gone = READ_ONCE(s->net_gone);
	spin_unlock_bh(&rsw_streams_lock);
	if (gone)
		rsw_stream_kick(s);
}

/* @s has released its socket. */
static void rsw_stream_unlist(struct rsw_stream *s)
{
	spin_lock_bh(&rsw_streams_lock);
	list_del_init(&s->link);
	spin_unlock_bh(&rsw_streams_lock);
	wake_up_all(&rsw_streams_wait);
}

static void rsw_stream_async(struct rsw_stream *s, enum ib_event_type type)
{
	struct ib_qp *ibqp = &s->qp->base;
	struct ib_event ev = {
		.device = ibqp->device,
		.element.qp = ibqp,
		.event = type,
	};

	if (ibqp->event_handler && !READ_ONCE(s->qp->dead))
		ibqp->event_handler(&ev, ibqp->qp_context);
}

/* Whether the Terminate cause @c is about protection. */
static bool rsw_stream_term_is_access(const struct rsw_term_cause *c)
{
	return (c->layer == RSW_TERM_LAYER_RDMAP &&
		c->etype == RSW_RDMAP_ET_REMOTE_PROT) ||
	       (c->layer == RSW_TERM_LAYER_DDP &&
		c->etype == RSW_DDP_ET_TAGGED);
}

/* ----------------------------------------------------------------- TX */

/* The RTR is the message in progress (the sink took it only in part). */
static bool rsw_stream_rtr_busy(const struct rsw_stream *s)
{
	return s->rtr_send && s->tx.msg.kind != RSW_TX_IDLE;
}

/*
 * The initiator's ready-to-receive message (RFC 6581): 0 once it is out.
 * No WQE stands behind it (it has no SQ ticket), so the engine runs
 * without the QP for it, started or resumed, and completes nothing;
 * s->rtr_send marks it until it is out.  It goes before anything else, so
 * while it is marked the engine holds nothing of the send queue either,
 * and an end has nothing to flush (rsw_stream_tx_abort()).
 */
static int rsw_stream_send_rtr(struct rsw_stream *s)
{
	struct rdmap_sw_sqe *sqe = &s->tx.sqe;
	int ret;

	if (rsw_stream_rtr_busy(s)) {
		ret = rsw_tx_process(&s->tx, NULL, 0);	/* takes no WQE */
		goto out;
	}
	memset(sqe, 0, offsetof(struct rdmap_sw_sqe, sge));
	switch (s->conn.rtr) {
	case RSW_MPA_RTR_WRITE:
		sqe->opcode = RDMAP_SW_WR_RDMA_WRITE;
		sqe->rstag = RSW_STAG_RTR;
		break;
	case RSW_MPA_RTR_READ:
		sqe->opcode = RDMAP_SW_WR_RDMA_READ;
		s->rtr_read = true;
		break;
	default:
		sqe->opcode = RDMAP_SW_WR_SEND;
		break;
	}
	ret = rsw_tx_wqe(&s->tx, NULL, sqe, 0);
out:
	if (!ret) {
		s->rtr_send = false;
		rsw_route_inc(s->route, rsw_stat_rtr(s->conn.rtr, false));
	}
	return ret;
}

/*
 * The stream died: flush what the engine holds of the send queue.  An RTR
 * in progress is all it holds then, and it is no WQE: nothing to flush.
 */
static void rsw_stream_tx_abort(struct rsw_stream *s)
{
	u32 idx;

	if (rsw_stream_rtr_busy(s))
		return;
	if (s->rtr_read && rsw_tx_read_done(&s->tx, &idx))
		s->rtr_read = false;	/* completes nothing */
	rsw_tx_abort(&s->tx, s->qp);
}

/*
 * Where the Responses TX may send end: every one owed, but in an orderly
 * close only up to close_rr (rsw_stream_close_track()): Requests that come
 * once the close's own work is done are not answered, so a peer that keeps
 * asking cannot keep the close from its FIN.  Socket owned.
 */
static u32 rsw_stream_rr_end(const struct rsw_stream *s)
{
	return s->closing ? s->close_rr : s->rr_tail;
}

/* Owed Read and Atomic Responses, oldest first, between messages. */
static int rsw_stream_tx_rresp(struct rsw_stream *s)
{
	struct rsw_rx_term term = {};
	const struct rsw_tx_rresp *rr;
	int ret = 0;

	while (s->rr_head != rsw_stream_rr_end(s)) {
		rr = &s->rr[s->rr_head % s->rr_size];
		ret = rsw_tx_read_response(&s->tx, rr, &term);
		if (ret == -EBUSY)
			return 0;	/* a message is in progress */
		s->rr_head++;
		if (ret == -EACCES) {
			/* The peer's Read Request, refused: its input. */
			rsw_route_inc(s->route, rsw_stat_rx_err(&term.cause));
			memset(&s->term, 0, sizeof(s->term));
			s->term.why = term;
			/* The layout rsw_tx_term.hdr has (rsw_hdr_rreq). */
			if (term.ddp_hdr)
				memcpy(s->term.hdr, &rr->ddp, sizeof(rr->ddp));
			if (term.rdma_hdr)
				memcpy(s->term.hdr + sizeof(rr->ddp), &rr->rreq,
				       sizeof(rr->rreq));
			rsw_stream_set_why(s, RSW_WHY_TERMINATE, -ECONNABORTED);
			return -EACCES;
		}
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * A request could not be made (a WQE completed in error already: bad local
 * SGE, length or shape, a Read or Atomic with ORD 0): a Terminate goes in
 * its place, Local Catastrophic Error with no headers (RFC 5040 section
 * 7.1 rule 1, RFC 7306 section 8.1 rule 1), so the peer hears why the
 * stream ends instead of a reset.
 */
static void rsw_stream_local_term(struct rsw_stream *s)
{
	if (s->why)
		return;		/* an end already decided keeps its cause */
	memset(&s->term, 0, sizeof(s->term));
	s->term.why.cause = RSW_TERM_CAUSE(RSW_TERM_LAYER_RDMAP,
					   RSW_RDMAP_ET_CATASTROPHIC, 0);
	rsw_qp_term_cause(s->qp, rsw_term_vendor_err(&s->term.why.cause));
	rsw_stream_set_why(s, RSW_WHY_TERMINATE, -ECONNABORTED);
}

/*
 * The engine's -EFAULT: the memory of the message in progress went away
 * mid-message (tx.c rsw_tx_fault(): its WQE completed LOC_PROT_ERR, the
 * cause set first).  A local error like a request that cannot be made:
 * the Terminate goes in the message's place, true, when TCP holds no
 * part of an FPDU (ts.skip 0: every FPDU pushed was taken whole; a failed
 * describe and the sink's own -EFAULT send nothing).  When TCP holds part
 * of one, that FPDU cannot be finished, its source gone, and a Terminate
 * may not follow a truncated FPDU (the peer would read it as the rest):
 * false, the end is a reset.  Socket owned.
 */
static bool rsw_stream_tx_fault(struct rsw_stream *s)
{
	sock_owned_by_me(s->sock->sk);
	if (s->ts.skip)
		return false;
	rsw_stream_local_term(s);
	return true;
}

/* The engine's run for rsw_stream_tx(). */
static bool rsw_stream_tx_engine(struct rsw_stream *s)
{
	int ret;

	s->stats.tx_calls++;
	/*
	 * TCP's MSS may have changed (path MTU, the peer's window grown):
	 * size the FPDUs still to describe for it, unless one went out in
	 * part.
	 */
	if (!s->ts.skip)
		rsw_tx_set_mss(&s->tx,
			       READ_ONCE(tcp_sk(s->sock->sk)->mss_cache));
	if (s->rtr_send) {
		ret = rsw_stream_send_rtr(s);
		if (ret == -EAGAIN)
			return false;		/* write space wakes us */
		if (ret)
			goto fail;
	}
	ret = rsw_stream_tx_rresp(s);
	if (ret == -EACCES || (ret == -EFAULT && rsw_stream_tx_fault(s)))
		return true;		/* the Terminate goes next */
	if (ret && ret != -EAGAIN)
		goto fail;
	if (ret)
		return false;
	ret = rsw_tx_process(&s->tx, s->qp, RSW_STREAM_TX_BUDGET);
	if (ret == -EAGAIN)
		return false;		/* write space wakes us */
	if (ret == -EPROTO) {
		rsw_stream_local_term(s);
		return true;		/* the Terminate goes next */
	}
	if (ret == -EFAULT && rsw_stream_tx_fault(s))
		return true;
	if (ret < 0)
		goto fail;
	s->tx_taken += ret;
	return ret == RSW_STREAM_TX_BUDGET ||
	       s->rr_head != rsw_stream_rr_end(s);
fail:
	rsw_stream_set_why(s, RSW_WHY_ABORT, ret);
	return false;
}

/*
 * Run the TX engine, socket owned; true if it stopped at its budget (more
 * to send).  RX that the backlog flushes meanwhile only kicks the work.
 */
static bool rsw_stream_tx(struct rsw_stream *s)
{
	bool more;

	sock_owned_by_me(s->sock->sk);
	s->tx_active = true;
	more = rsw_stream_tx_engine(s);
	s->tx_active = false;
	if (more) {
		s->tx_ran = RSW_TX_RAN_BUDGET;
		return true;
	}
	/*
	 * Stopped at a message boundary after a message sent with MSG_MORE
	 * for a next WQE that sent nothing (a local one, a Read waiting for
	 * ORD, a user's entry that changed): the octets wait in TCP until
	 * rsw_stream_release().  Stopped inside a message (TCP full): what
	 * is queued goes out as ACKs come, and write space resumes us.
	 */
	if (s->ts.corked && s->tx.msg.kind == RSW_TX_IDLE) {
		s->ts.corked = false;
		s->tx_push = true;
	}
	/* Every WQE taken and sent: a lingering SQ may be looked at. */
	if (!s->why && s->tx.msg.kind == RSW_TX_IDLE && !s->tx.sqe_pending)
		s->tx_ran = RSW_TX_RAN_DRAINED;
	else
		s->tx_ran = RSW_TX_RAN_STALLED;
	return false;
}

/*
 * End the doorbell linger: no linger for @ticks; true if the process
 * posted meanwhile (the caller has TX take it).  Any context.
 */
static bool rsw_stream_sq_unlinger(struct rsw_stream *s, unsigned int ticks)
{
	WRITE_ONCE(s->sq_linger_after, jiffies + ticks);
	/* after before off: pairs with rsw_stream_sq_linger()'s acquire */
	smp_store_release(&s->sq_linger, false);
	return rsw_qp_sq_linger_off(s->qp);
}

/*
 * After a TX run that ended as @ran, having taken @taken WQEs, on an SQ
 * that lingers: look at it again if the run emptied it; let go if TX
 * could not run or stalled (TCP full, ORD, a fence), since looks would
 * only requeue a work that cannot send, or if a look's batch turned out
 * smaller (a process moving its tail back and forth).  True if the work
 * must run.  Process context, socket released.
 */
static bool rsw_stream_sq_next(struct rsw_stream *s,
			       enum rsw_stream_tx_ran ran, u32 taken)
{
	if (ran == RSW_TX_RAN_BUDGET)
		return true;		/* the work goes on */
	if (test_and_clear_bit(RSW_SQ_BATCH_SEEN, &s->sq_flags) &&
	    taken < RSW_STREAM_SQ_BATCH)
		ran = RSW_TX_RAN_STALLED;
	if (ran == RSW_TX_RAN_DRAINED) {
		hrtimer_start(&s->sq_timer, RSW_STREAM_SQ_LINGER_NS,
			      HRTIMER_MODE_REL_SOFT);
		return false;
	}
	hrtimer_try_to_cancel(&s->sq_timer);	/* its looks are over */
	return rsw_stream_sq_unlinger(s, 1);
}

/*
 * release_sock() after a TX run, then push what the run left corked (TCP
 * has no exported push for a socket owned, and this is the rare case;
 * @direct, a poster, leaves it to the work rather than wait for the
 * socket twice), and a lingering SQ's next step.  Process context.  True
 * if the work must run.
 */
static bool rsw_stream_release(struct rsw_stream *s, bool direct)
{
	enum rsw_stream_tx_ran ran = s->tx_ran;
	struct sock *sk = s->sock->sk;
	bool push = s->tx_push, kick = false;
	u32 taken = s->tx_taken;

	if (!direct)
		s->tx_push = false;
	s->tx_ran = RSW_TX_RAN_NOT;
	if (ran != RSW_TX_RAN_BUDGET)
		s->tx_taken = 0;
	release_sock(sk);
	if (push && direct)
		kick = true;
	else if (push)
		tcp_sock_set_cork(sk, false);
	/* pairs with rsw_stream_sq_unlinger()'s release */
	if (smp_load_acquire(&s->sq_linger))
		kick |= rsw_stream_sq_next(s, ran, taken);
	return kick;
}

/*
 * The lingering SQ's look (softirq).  A batch came: TX (the work) takes it
 * and the linger goes on.  Nothing came: look again, up to
 * RSW_STREAM_SQ_LOOKS times.  A single entry (a ping-pong's next message)
 * or too long a quiet: the linger ends, and what came is sent.  Restarts
 * with hrtimer_start(), not by forwarding: the work may start the timer
 * from another CPU meanwhile.
 */
static enum hrtimer_restart rsw_stream_sq_look(struct hrtimer *t)
{
	struct rsw_stream *s = container_of(t, struct rsw_stream, sq_timer);
	bool run = READ_ONCE(s->phase) == RSW_STREAM_RUN;
	u32 n = run ? rsw_qp_sq_pending(s->qp) : 0;

	/* pairs with rsw_stream_sq_unlinger()'s release */
	if (!smp_load_acquire(&s->sq_linger)) {
		s->sq_quiet_looks = 0;		/* a look left from an ended one */
		return HRTIMER_NORESTART;
	}
	if (run && n >= RSW_STREAM_SQ_BATCH) {
		s->sq_quiet_looks = 0;
		s->sq_backoff = 0;
		set_bit(RSW_SQ_BATCH_SEEN, &s->sq_flags);
		rsw_stream_kick(s);
		return HRTIMER_NORESTART;
	}
	if (run && !n && ++s->sq_quiet_looks < RSW_STREAM_SQ_LOOKS) {
		hrtimer_start(t, RSW_STREAM_SQ_LINGER_NS,
			      HRTIMER_MODE_REL_SOFT);
		return HRTIMER_NORESTART;
	}
	/*
	 * A miss: the entry a single look caught waits for the work's hop,
	 * which a busy machine may delay by a tick.  A process in ping-pong
	 * misses every time: back off, doubling up to RSW_STREAM_SQ_BACKOFF
	 * ticks, until a look finds a batch again.
	 */
	s->sq_quiet_looks = 0;
	if (s->sq_backoff < RSW_STREAM_SQ_BACKOFF)
		s->sq_backoff++;
	if (rsw_stream_sq_unlinger(s, 1U << s->sq_backoff))
		rsw_stream_kick(s);
	return HRTIMER_NORESTART;
}

/*
 * A doorbell on an idle SQ: linger unless a recent look found too little
 * (rsw_stream_sq_look()).  Poster's context.
 */
static void rsw_stream_sq_linger(struct rsw_stream *s)
{
	/* off, then its sq_linger_after: see rsw_stream_sq_unlinger() */
	if (smp_load_acquire(&s->sq_linger) ||
	    time_before(jiffies, READ_ONCE(s->sq_linger_after)))
		return;
	if (rsw_qp_sq_linger_on(s->qp))
		WRITE_ONCE(s->sq_linger, true);
}

/* Whether the TX engine may run in RUN (socket owned). */
static bool rsw_stream_tx_ready(const struct rsw_stream *s)
{
	return s->phase == RSW_STREAM_RUN && !s->why && !s->eof &&
	       !s->tx_hold;
}

/*
 * TX in the poster's context (see the top).  @s stays allocated: the
 * caller holds a QP reference.  Its socket stays the stream's while
 * posters counts us: rsw_stream_end() marks DONE, then waits for posters
 * to drop to 0 before it releases the socket.
 */
static void rsw_stream_tx_run_direct(struct rsw_stream *s)
{
	struct sock *sk = s->sock->sk;
	bool kick = true;

	/*
	 * The work has the socket, or waits for it: it takes the new entries
	 * itself (and a doorbell storm cannot starve it).
	 */
	if (sock_owned_by_user_nocheck(sk) || waitqueue_active(&sk->sk_lock.wq))
		goto out;
	lock_sock(sk);
	if (rsw_stream_tx_ready(s)) {
		kick = rsw_stream_tx(s) || s->why ||
		       READ_ONCE(s->qp->state) != RSW_QPS_RTS;
	}
	/* RX that came meanwhile: the work's. */
	kick |= rsw_stream_release(s, true);
out:
	if (kick)
		rsw_stream_kick(s);
}

void rsw_stream_tx_direct(struct rsw_stream *s)
{
	might_sleep();
	atomic_inc(&s->posters);
	smp_mb__after_atomic();	/* posters before phase: see rsw_stream_end() */
	if (READ_ONCE(s->phase) == RSW_STREAM_RUN) {
		rsw_route_inc(s->route, RSW_STAT_TX_DIRECT_RUNS);
		rsw_stream_sq_linger(s);
		rsw_stream_tx_run_direct(s);
	} else {
		rsw_stream_kick(s);
	}
	/*
	 * Reading the phase after the decrement is safe only because our
	 * caller's QP reference keeps @s (contrast rsw_stream_unpin()).
	 */
	if (atomic_dec_and_test(&s->posters) &&
	    READ_ONCE(s->phase) == RSW_STREAM_DONE)
		wake_up_all(&rsw_streams_wait);
}
EXPORT_SYMBOL_IF_KUNIT(rsw_stream_tx_direct);

/* ------------------------------------------------------------ endings */

/*
 * The stream is over: QP to ERROR with everything flushed, socket
 * released (reset if @abort), closed() reported (with @err unless an
 * earlier reason stands), QP reference dropped.  Socket not owned.
 */
static void rsw_stream_end(struct rsw_stream *s, bool abort, int err)
{
	struct rsw_qp *qp = s->qp;

	lock_sock(s->sock->sk);		/* RX and posters see DONE from now on */
	WRITE_ONCE(s->phase, RSW_STREAM_DONE);
	if (!s->status)
		s->status = err;
	release_sock(s->sock->sk);
	smp_mb();	/* phase before posters: pairs with rsw_stream_tx_direct() */
	wait_event(rsw_streams_wait, !atomic_read(&s->posters));
	WRITE_ONCE(s->sq_linger, false);	/* the work arms it no more */
	hrtimer_cancel(&s->sq_timer);
	cancel_delayed_work(&s->linger);
	rsw_stream_unhook(s);
	/* A completion RX deferred comes before any flush. */
	rsw_stream_deferred_finish(s);
	rsw_qp_set_error(qp);
	rsw_stream_tx_abort(s);
	rsw_stream_rx_flush(s);
	if (abort)
		sock_no_linger(s->sock->sk);
	sock_release(s->sock);
	s->sock = NULL;
	rsw_stream_unlist(s);
	rsw_qp_stream_done(qp);
	if (s->ops && s->ops->closed)
		s->ops->closed(s->ctx, s->status);
	rsw_qp_put(qp);
}

/*
 * Our side is done: queued output, then FIN, then wait for the peer's.
 * Socket owned.
 */
static void rsw_stream_linger(struct rsw_stream *s)
{
	sock_owned_by_me(s->sock->sk);
	WRITE_ONCE(s->phase, RSW_STREAM_LINGER);
	/* mod: the RTR deadline of RUN may still be pending */
	mod_delayed_work(rsw_stream_wq, &s->linger,
			 msecs_to_jiffies(READ_ONCE(rsw_stream_linger_ms)));
}

/* Our Terminate is all in TCP: count it (stats are for KUnit). */
static void rsw_stream_term_sent(struct rsw_stream *s)
{
	s->stats.term_sent = 1;
	s->stats.term = s->term.why.cause;
}

/*
 * Our pending Terminate (s->term_pending), socket owned, in the engine
 * (tx_active).  It goes at an FPDU boundary, so first whatever is in the
 * way: an RTR still in progress is finished; an FPDU TCP took in part
 * (ts.skip) is finished alone (rsw_tx_next_fpdu()).  Then the message in
 * progress is abandoned (its WQE flushed, with the cause set before) and
 * the Terminate queued.  0 once it is all in TCP; -EAGAIN: socket full,
 * still pending or taken in part, the next LINGER round goes on (write
 * space kicks it); else an error: it stays pending, so LINGER meets the
 * error again and resets (nothing of the message may follow it).
 */
static int rsw_stream_term_out(struct rsw_stream *s)
{
	int ret = 0;

	sock_owned_by_me(s->sock->sk);
	if (rsw_stream_rtr_busy(s))
		ret = rsw_stream_send_rtr(s);
	/* Octets owed to an FPDU no message describes: nothing can follow. */
	if (!ret && s->ts.skip)
		ret = s->tx.msg.kind == RSW_TX_IDLE ? -EIO :
		      rsw_tx_next_fpdu(&s->tx, s->qp);
	if (ret)
		return ret;
	s->term_pending = false;
	rsw_stream_tx_abort(s);
	ret = rsw_tx_terminate(&s->tx, &s->term);
	/* In the engine (all in TCP, or what TCP left LINGER finishes). */
	if (!ret || ret == -EAGAIN)
		trace_rsw_term_tx(s->qp->base.qp_num, &s->term.why.cause);
	/* Taken in part: the message in progress, LINGER finishes it. */
	if (!ret)
		rsw_stream_term_sent(s);
	return ret;
}

/*
 * Send the Terminate decided by RX or TX (socket owned), then linger; the
 * caller reports it once the socket is released (rsw_stream_terminated()).
 * What cannot go out now (TCP full) LINGER sends before our FIN.
 */
static void rsw_stream_terminate(struct rsw_stream *s)
{
	/* Before the abort's flushes: they carry the cause. */
	rsw_qp_term_cause(s->qp, rsw_term_vendor_err(&s->term.why.cause));
	s->term_pending = true;
	s->tx_active = true;
	rsw_stream_term_out(s);
	s->tx_active = false;
	rsw_stream_linger(s);
}

/*
 * A Terminate (@t, sent or received) ended RUN: QP to ERROR, its cause in
 * the flushed completions' vendor_err, tell the ULP.
 */
static void rsw_stream_terminated(struct rsw_stream *s,
				  const struct rsw_term_cause *t)
{
	rsw_qp_set_error_term(s->qp, rsw_term_vendor_err(t));
	rsw_stream_async(s, rsw_stream_term_is_access(t) ?
			    IB_EVENT_QP_ACCESS_ERR : IB_EVENT_QP_FATAL);
}

/*
 * Why the stream must end abortively now (an errno), or 0: the QP was
 * moved to ERROR or destroyed, its namespace or netdev is going, or the
 * socket failed.  Our own Terminate moved the QP to ERROR itself
 * (rsw_stream_terminated()): in the LINGER after it, ERROR does not cut
 * the stream, else the reset would discard the Terminate TCP still holds.
 * The consumer moving it to ERROR (modify_qp, ib_drain_qp: qp->ulp_err)
 * cuts only while our Terminate is still pending: the WQE it will abandon
 * is then still held, and the drain, whose completion retires behind it,
 * must not wait out the linger timeout; that Terminate is lost.  Once it
 * is queued, every kernel ULP's drain on the QP_FATAL it raised must not
 * throw it away.  destroy_qp (dead) always cuts.
 */
static int rsw_stream_broken(const struct rsw_stream *s)
{
	struct sock *sk = s->sock->sk;
	int err = rsw_stream_cut(s);

	/* rsw_stream_cut() tells ERROR first: a dying netns or netdev cuts. */
	if (err == -ECONNABORTED && s->phase == RSW_STREAM_LINGER &&
	    s->why == RSW_WHY_TERMINATE && !READ_ONCE(s->qp->dead) &&
	    !(s->term_pending && READ_ONCE(s->qp->ulp_err)))
		err = READ_ONCE(s->net_gone) ? -ENETDOWN : 0;
	if (err)
		return err;
	/*
	 * A reset sets sk_err.  Closed without one is the end of an orderly
	 * close in LINGER (the FIN path handles it), a loss in RUN.
	 */
	err = READ_ONCE(sk->sk_err);
	if (err)
		return -err;
	if (s->phase == RSW_STREAM_RUN && READ_ONCE(sk->sk_state) == TCP_CLOSE)
		return -ECONNRESET;
	return 0;
}

/*
 * The RTR exchange is not over: as responder the RTR has not come; as
 * initiator ours is not out yet, or our RTR Read awaits its Response.
 */
static bool rsw_stream_rtr_pending(const struct rsw_stream *s)
{
	return s->rtr_wait || s->rtr_send || s->rtr_read;
}

/*
 * RUN, socket owned, after RX took what had come: the RTR deadline
 * (rsw_stream_start()) passed with the exchange not over.  A peer that
 * never sends the RTR, or never answers ours, cannot hold the QP (and, for
 * a Read RTR, every Read behind it) forever.
 */
static void rsw_stream_rtr_timeout(struct rsw_stream *s)
{
	sock_owned_by_me(s->sock->sk);
	if (rsw_stream_rtr_pending(s) &&
	    time_after_eq(jiffies, READ_ONCE(s->rtr_deadline)))
		rsw_stream_set_why(s, RSW_WHY_ABORT, -ETIMEDOUT);
}

/*
 * modify_qp to SQE (TERMINATE), socket owned, in RUN or in the LINGER of
 * an orderly close: the iWARP verbs' Terminate state sends a Terminate,
 * RDMAP Local Catastrophic Error as nothing on the wire caused it, and
 * the stream ends with the QP in ERROR.  A responder that has received
 * nothing may send nothing: the end is a reset.  False if the QP is not
 * in TERMINATE or an end is decided already.
 */
static bool rsw_stream_sqe(struct rsw_stream *s)
{
	if (s->why || READ_ONCE(s->qp->state) != RSW_QPS_TERMINATE)
		return false;
	if (s->tx_hold)
		rsw_stream_set_why(s, RSW_WHY_ABORT, -ECONNABORTED);
	else
		rsw_stream_local_term(s);
	return true;
}

/*
 * Whether an orderly close has sent all it owes, socket owned: no message
 * in progress, no WQE held back (a fence, ORD) or not yet taken, and no
 * Read or Atomic of ours awaiting its Response (LINGER discards what
 * comes, so it would only be flushed: an orderly close waits for it);
 * then every Read or Atomic Response up to close_rr sent (later ones are
 * not: rsw_stream_close_track()).
 */
static bool rsw_stream_close_own_done(struct rsw_stream *s)
{
	return s->tx.msg.kind == RSW_TX_IDLE && !s->tx.sqe_pending &&
	       !rsw_tx_reads_outstanding(&s->tx) &&
	       rsw_qp_sq_taken_all(s->qp);
}

static bool rsw_stream_close_drained(struct rsw_stream *s)
{
	return rsw_stream_close_own_done(s) && s->rr_head == s->close_rr;
}

/*
 * RUN, socket owned, before TX: while an orderly close still has work of
 * its own (rsw_stream_close_own_done()), the Read and Atomic Requests
 * that come are answered too (a Read crossing the peer's own close, both
 * ends disconnecting at once, completes); once it has none, close_rr
 * stays where it is and later Requests go unanswered (flushed at the
 * peer when the stream ends).
 */
static void rsw_stream_close_track(struct rsw_stream *s)
{
	if (s->closing && !rsw_stream_close_own_done(s))
		s->close_rr = s->rr_tail;
}

/*
 * RUN, socket owned: whether an orderly close (the QP in CLOSING) may go
 * on to LINGER and our FIN: at once for a responder that has received
 * nothing (tx_hold).  Else first everything the SQ held at the close
 * (rsw_qp_sq_close()) goes out, with the Responses owed then, and our
 * Reads get their Responses.  A peer that keeps its window shut or never
 * answers cannot hold the QP in CLOSING past the close deadline,
 * rsw_stream_linger_ms after RUN first saw CLOSING: LINGER starts anyway,
 * finishes the message in progress if TCP lets it, and the rest is
 * flushed at the end.  The linger work, idle until LINGER, kicks the work
 * at that deadline (or at the RTR deadline if it is earlier).
 */
static bool rsw_stream_close_ready(struct rsw_stream *s)
{
	unsigned long at, now = jiffies;

	if (READ_ONCE(s->qp->state) != RSW_QPS_CLOSING)
		return false;
	/* A responder that has received nothing can send nothing. */
	if (s->tx_hold)
		return true;
	if (!s->closing) {
		s->closing = true;
		s->close_deadline = now +
			msecs_to_jiffies(READ_ONCE(rsw_stream_linger_ms));
		s->close_rr = s->rr_tail;
	}
	if (rsw_stream_close_drained(s))
		return true;
	at = s->close_deadline;
	if (time_after_eq(now, at)) {
		rsw_stream_dbg(s, "orderly close: deadline, the rest flushed\n");
		return true;
	}
	if (rsw_stream_rtr_pending(s) &&
	    time_before(READ_ONCE(s->rtr_deadline), at))
		at = READ_ONCE(s->rtr_deadline);
	mod_delayed_work(rsw_stream_wq, &s->linger,
			 time_after(at, now) ? at - now : 0);
	return false;
}

/*
 * RUN, socket owned: RX left over, then TX unless RUN is ending, then the
 * Terminate or an orderly close.  What RUN's end is, in *@why; true if
 * there is more to do at once.
 */
static bool rsw_stream_run_locked(struct rsw_stream *s,
				  enum rsw_stream_why *why)
{
	bool more = rsw_stream_rx(s);

	rsw_stream_rtr_timeout(s);
	rsw_stream_sqe(s);
	rsw_stream_close_track(s);
	if (rsw_stream_tx_ready(s))
		more |= rsw_stream_tx(s);
	/*
	 * A user SQ whose tail was bad at the close (ring.c) ends the close
	 * abortively on every path to LINGER, not only the one whose take
	 * reaches that tail.
	 */
	if (!s->why && !s->eof && rsw_stream_close_ready(s)) {
		if (!READ_ONCE(s->qp->sq.close_bad)) {
			rsw_stream_linger(s);
			*why = RSW_WHY_NONE;
			return true;
		}
		rsw_stream_set_why(s, RSW_WHY_ABORT, -EIO);
	}
	*why = s->why;
	if (*why == RSW_WHY_TERMINATE) {
		rsw_stream_terminate(s);
		return true;
	}
	return more;
}

/*
 * The peer's FIN in RUN: whether our output ends at an FPDU boundary, so
 * our FIN may follow it (an orderly end keeps the whole messages TCP
 * holds).  An FPDU TCP took in part gets one try to finish; still cut, a
 * FIN would truncate it: the end is a reset.
 */
static bool rsw_stream_fpdu_done(struct rsw_stream *s)
{
	struct sock *sk = s->sock->sk;
	int ret;

	if (!s->ts.skip)
		return true;
	lock_sock(sk);
	s->tx_active = true;
	ret = rsw_tx_next_fpdu(&s->tx, s->qp);
	s->tx_active = false;
	release_sock(sk);
	return !ret && !s->ts.skip;
}

/* RUN: one round; true if there is more to do at once. */
static bool rsw_stream_step_run(struct rsw_stream *s)
{
	struct sock *sk = s->sock->sk;
	enum rsw_stream_why why;
	bool more;
	int err;

	lock_sock(sk);
	/*
	 * A decided end goes first: RX may have moved the QP to ERROR itself
	 * (a receive completed in error) with its Terminate still to send.
	 */
	err = s->why ? 0 : rsw_stream_broken(s);
	if (err) {
		release_sock(sk);
		rsw_stream_end(s, true, err);
		return false;
	}
	more = rsw_stream_run_locked(s, &why);
	more |= rsw_stream_release(s, false);
	switch (why) {
	case RSW_WHY_TERMINATE:
		rsw_stream_terminated(s, &s->term.why.cause);
		return true;
	case RSW_WHY_PEER_TERM:
		rsw_stream_terminated(s, &s->peer_term);
		rsw_stream_end(s, true, 0);
		return false;
	case RSW_WHY_ABORT:
		rsw_stream_end(s, true, 0);	/* nothing more can be said */
		return false;
	case RSW_WHY_NONE:
		break;
	}
	if (s->eof) {
		if (s->ops && s->ops->disconnect)
			s->ops->disconnect(s->ctx);
		rsw_stream_end(s, !rsw_stream_fpdu_done(s), 0);
		return false;
	}
	return more;
}

/*
 * LINGER's output before our FIN, socket owned: a pending Terminate (with
 * what is in its way), else the message in progress (the RTR, a
 * Terminate taken in part, or what an orderly close lets finish).  0 when
 * all is out, -EAGAIN while TCP is full, or an error (then a reset: the
 * stream may end inside an FPDU).
 */
static int rsw_stream_linger_tx(struct rsw_stream *s)
{
	struct sock *sk = s->sock->sk;
	bool term;
	int ret = 0;

	sock_owned_by_me(sk);
	/*
	 * Nothing is described while TCP has no room: a peer that keeps its
	 * window shut and sends small segments would otherwise have us check
	 * and CRC the same FPDU once per segment.  NOSPACE: write space
	 * kicks us (ACKs are processed at release_sock(), after this).
	 */
	if ((s->term_pending || s->tx.msg.kind != RSW_TX_IDLE) &&
	    !sk_stream_memory_free(sk)) {
		set_bit(SOCK_NOSPACE, &sk->sk_socket->flags);
		return -EAGAIN;
	}
	s->tx_active = true;
	if (s->term_pending)
		ret = rsw_stream_term_out(s);
	term = s->tx.msg.kind == RSW_TX_TERM;
	if (!ret && rsw_stream_rtr_busy(s))
		ret = rsw_stream_send_rtr(s);
	else if (!ret && s->tx.msg.kind != RSW_TX_IDLE)
		ret = rsw_tx_process(&s->tx, s->qp, 0);
	if (!ret && term)
		rsw_stream_term_sent(s);
	s->tx_active = false;
	return ret;
}

/* What modify_qp to SQE in LINGER leaves the caller to do. */
enum rsw_stream_sqe_act {
	RSW_SQE_NONE,		/* not in TERMINATE (or an end decided) */
	RSW_SQE_TERM,		/* our Terminate pending: LINGER goes on */
	RSW_SQE_END,		/* nothing can be sent: reset */
};

/*
 * LINGER after an orderly close, socket owned: modify_qp to SQE, RUN's
 * rule (rsw_stream_sqe()).  Before our FIN, our Terminate becomes pending:
 * rsw_stream_linger_tx() sends it at the next FPDU boundary (the message
 * in progress abandoned, its WQE flushed with the cause), then our FIN.
 * Once our FIN is out nothing more can be said in band: the stream ends
 * with a reset (a peer that read our FIN first may have ended in order;
 * that is timing).  Both ways the QP goes to ERROR with the cause in its
 * flushed completions and IB_EVENT_QP_FATAL (rsw_stream_linger_sqe_done()),
 * but for a responder that has received nothing (tx_hold): the end is a
 * reset with no cause and no event, as in RUN.
 */
static enum rsw_stream_sqe_act rsw_stream_linger_sqe(struct rsw_stream *s)
{
	sock_owned_by_me(s->sock->sk);
	if (!rsw_stream_sqe(s))
		return RSW_SQE_NONE;
	if (s->why != RSW_WHY_TERMINATE || s->fin_sent)
		return RSW_SQE_END;
	s->term_pending = true;
	/* A fresh linger timeout for it, as RUN's rsw_stream_terminate(). */
	rsw_stream_linger(s);
	return RSW_SQE_TERM;
}

/*
 * LINGER before our FIN, socket owned: the engine's -EFAULT on the
 * message an orderly close finishes.  RUN's rule (rsw_stream_tx_fault()):
 * at an FPDU boundary our Terminate becomes pending, with a fresh linger
 * timeout, as for SQE here (rsw_stream_linger_sqe()), and true.  False
 * (a reset) inside an FPDU, with an end decided already (a pending
 * Terminate whose FPDU in the way lost its memory), or with our RTR still
 * to go (the sink's own fault: RUN resets then too, and no Terminate may
 * come before the RTR).
 */
static bool rsw_stream_linger_fault(struct rsw_stream *s)
{
	if (s->why || s->rtr_send || !rsw_stream_tx_fault(s))
		return false;
	s->term_pending = true;
	rsw_stream_linger(s);
	return true;
}

/* After rsw_stream_linger_sqe()'s @act, socket released: true if ended. */
static bool rsw_stream_linger_sqe_done(struct rsw_stream *s,
				       enum rsw_stream_sqe_act act)
{
	if (act == RSW_SQE_NONE)
		return false;
	if (s->why == RSW_WHY_TERMINATE)
		rsw_stream_terminated(s, &s->term.why.cause);
	if (act == RSW_SQE_TERM)
		return false;
	rsw_stream_end(s, true, 0);
	return true;
}

/*
 * LINGER: discard what comes, finish what is queued, then our FIN; the
 * end once the peer's FIN came or the linger timeout ran.  A timeout that
 * comes while TCP is still full ends the stream with a reset before that
 * output (a pending Terminate included) went out: the peer that reads
 * nothing for rsw_stream_linger_ms hears nothing more.  So does the peer's
 * FIN while our output is not all in TCP: a FIN of ours after a truncated
 * FPDU would leave the peer a malformed stream.
 */
static bool rsw_stream_step_linger(struct rsw_stream *s)
{
	struct sock *sk = s->sock->sk;
	enum rsw_stream_sqe_act sqe;
	bool more;
	int ret;

	ret = rsw_stream_broken(s);
	if (ret) {
		rsw_stream_end(s, true, ret);
		return false;
	}
	lock_sock(sk);
	more = rsw_stream_rx(s);
	sqe = rsw_stream_linger_sqe(s);
	if (!s->fin_sent && sqe != RSW_SQE_END)
		ret = rsw_stream_linger_tx(s);
	/* Reported as SQE's Terminate is; it goes out as that one does. */
	if (ret == -EFAULT && rsw_stream_linger_fault(s)) {
		sqe = RSW_SQE_TERM;
		ret = rsw_stream_linger_tx(s);
	}
	release_sock(sk);
	if (rsw_stream_linger_sqe_done(s, sqe))
		return false;
	if (ret && ret != -EAGAIN) {
		/* Output failed mid-way: a FIN would end a truncated stream. */
		rsw_stream_end(s, true, ret);
		return false;
	}
	if (!s->fin_sent && !ret) {
		kernel_sock_shutdown(s->sock, SHUT_WR);
		s->fin_sent = true;
	}
	if (s->eof || !delayed_work_pending(&s->linger)) {
		/* In order only once all our output, FIN last, is in TCP. */
		rsw_stream_end(s, !s->eof || !s->fin_sent, 0);
		return false;
	}
	return more;
}

/* IDLE (nothing may be reported before rsw_stream_start()) and DONE. */
static bool rsw_stream_step_none(struct rsw_stream *s)
{
	return false;
}

static bool (*const rsw_stream_step[])(struct rsw_stream *s) = {
	[RSW_STREAM_IDLE] = rsw_stream_step_none,
	[RSW_STREAM_RUN] = rsw_stream_step_run,
	[RSW_STREAM_LINGER] = rsw_stream_step_linger,
	[RSW_STREAM_DONE] = rsw_stream_step_none,
};

static_assert(ARRAY_SIZE(rsw_stream_step) == RSW_STREAM_PHASES);

#if IS_ENABLED(CONFIG_KUNIT)
/* KUnit: called first thing in each work function (see stream.h). */
static void (*rsw_stream_kunit_stall)(bool linger);

void rsw_stream_kunit_set_stall(void (*stall)(bool linger))
{
	WRITE_ONCE(rsw_stream_kunit_stall, stall);
}
EXPORT_SYMBOL_IF_KUNIT(rsw_stream_kunit_set_stall);

unsigned int rsw_stream_kunit_set_rtr_ms(unsigned int ms)
{
	return xchg(&rsw_stream_rtr_ms, ms ?: RSW_STREAM_RTR_MS);
}
EXPORT_SYMBOL_IF_KUNIT(rsw_stream_kunit_set_rtr_ms);

unsigned int rsw_stream_kunit_set_linger_ms(unsigned int ms)
{
	return xchg(&rsw_stream_linger_ms, ms ?: RSW_STREAM_LINGER_MS);
}
EXPORT_SYMBOL_IF_KUNIT(rsw_stream_kunit_set_linger_ms);

static void rsw_stream_stall(bool linger)
{
	void (*stall)(bool linger) = READ_ONCE(rsw_stream_kunit_stall);

	if (stall)
		stall(linger);
}
#else
static void rsw_stream_stall(bool linger)
{
}
#endif

static void rsw_stream_work(struct work_struct *work)
{
	struct rsw_stream *s = container_of(work, struct rsw_stream, work);
	unsigned int round;

	rsw_stream_stall(false);
	rsw_route_inc(s->route, RSW_STAT_STREAM_WAKEUPS);
	for (round = 0; round < RSW_STREAM_ROUNDS; round++) {
		enum rsw_stream_phase phase = READ_ONCE(s->phase);

		if (!rsw_stream_step[phase](s))
			return;
	}
	rsw_stream_kick(s);
}

static void rsw_stream_linger_timeout(struct work_struct *work)
{
	struct rsw_stream *s = container_of(to_delayed_work(work),
					    struct rsw_stream, linger);

	rsw_stream_stall(true);
	rsw_stream_kick(s);
}

/* ------------------------------------------------------------ lifetime */

static int rsw_stream_setup(struct rsw_stream *s, struct rsw_qp *qp)
{
	struct rsw_tx_config tcfg = {
		.crc = s->conn.crc,
		.markers = s->conn.tx_markers,
		.mss = tcp_sk(s->sock->sk)->mss_cache,
		.ord = min_t(u32, s->conn.ord, RSW_MAX_RD_ATOM),
		.max_ulpdu = s->conn.max_ulpdu,
		.qp = qp->serial,
		.qpn = qp->base.qp_num,
	};
	struct rsw_rx_config rcfg = {
		.crc = s->conn.crc,
		.markers = s->conn.rx_markers,
		.max_ulpdu = U16_MAX,
		.qp_access = &qp->access,
	};
	int ret;

	hrtimer_init(&s->sq_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
	s->sq_timer.function = rsw_stream_sq_look;
	s->sq_linger_after = jiffies;
	/*
	 * IRD 0 admits no Read Request at all: the one for a Read RTR comes
	 * with IRD 1 (rsw_mpa_accept()).
	 */
	s->rr_ird = min_t(u32, s->conn.ird, RSW_MAX_RD_ATOM);
	/* A power of two: the u32 indices stay right across their wrap. */
	s->rr_size = roundup_pow_of_two(max_t(u32, s->rr_ird, 1));
	s->rr = kcalloc(s->rr_size, sizeof(*s->rr), GFP_KERNEL);
	if (!s->rr)
		return -ENOMEM;
	ret = rsw_rx_init(&s->rx, &rcfg, &rsw_stream_rx_ops, s);
	if (ret)
		return ret;
	rsw_tx_sock_init(&s->ts, s->sock);
	ret = rsw_tx_init(&s->tx, &tcfg, qp->rsw, qp->base.pd,
			  &rsw_tx_sock_ops, &s->ts);
	/* Both borrow the QP's route, as the stream (see the top of stats.c). */
	s->ts.route = s->route;
	s->tx.route = s->route;
	return ret;
}

int rsw_stream_attach(struct rsw_qp *qp, struct socket *sock,
		      const struct rsw_mpa_conn *conn, bool initiator,
		      const struct rsw_stream_ops *ops, void *ctx)
{
	struct rsw_stream *s;
	struct sock *sk = sock->sk;
	int ret;

	might_sleep();
	s = kvzalloc(sizeof(*s), GFP_KERNEL);
	if (!s) {
		sock_no_linger(sk);	/* as every failed attach, below */
		sock_release(sock);
		return -ENOMEM;
	}
	s->sock = sock;
	s->conn = *conn;
	s->initiator = initiator;
	s->ops = ops;
	s->ctx = ctx;
	s->tx_hold = !initiator;
	s->rtr_send = initiator && conn->p2p;
	s->rtr_wait = !initiator && conn->p2p;
	s->rtr_deadline = jiffies +
			  msecs_to_jiffies(READ_ONCE(rsw_stream_rtr_ms));
	s->msn[RSW_QN_SEND] = 1;
	s->msn[RSW_QN_READ_REQ] = 1;
	s->msn[RSW_QN_TERMINATE] = 1;
	s->msn[RSW_QN_ATOMIC_RESP] = 1;
	INIT_WORK(&s->work, rsw_stream_work);
	INIT_DELAYED_WORK(&s->linger, rsw_stream_linger_timeout);
	INIT_LIST_HEAD(&s->link);
	atomic_set(&s->posters, 0);
	s->net = sock_net(sk);
	rsw_stream_save_ends(s, sk);
	s->rsw = qp->rsw;
	s->route = &qp->stats;	/* bound or not: the stream counts as its QP */
	ret = rsw_stream_setup(s, qp);
	if (ret)
		goto err;
	if (!rsw_stream_list(s)) {
		ret = -ENETDOWN;
		goto err;
	}
	/* Storage ULPs run over us: no reclaim recursion from the socket. */
	sk->sk_allocation = GFP_ATOMIC;
	sk->sk_use_task_frag = false;
	tcp_sock_set_nodelay(sk);

	rsw_qp_get(qp);
	s->qp = qp;
	ret = rsw_qp_attach_stream(qp, s, conn->ird, conn->ord);
	if (ret) {
		rsw_qp_put(qp);
		goto err;
	}
	rsw_stream_hook(s);
	rsw_stream_mark_hooked(s);
	return 0;

err:
	/*
	 * The peer was told the connection is up: close abortively, which
	 * also leaves no orphan in a namespace that may be dying (exit does
	 * not wait for a stream that is not hooked).
	 */
	sock_no_linger(sk);
	sock_release(sock);
	rsw_stream_unlist(s);
	kfree(s->rr);
	kvfree(s);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_stream_attach);

void rsw_stream_start(struct rsw_qp *qp)
{
	struct rsw_stream *s = qp->stream;

	if (!s)
		return;
	/*
	 * Still IDLE, so RX has not run: the RTR is awaited from now on.  A
	 * work that sees RUN with attach's deadline still (no ordering
	 * here) sees one only earlier by the time until now.
	 */
	if (rsw_stream_rtr_pending(s)) {
		unsigned long t = msecs_to_jiffies(READ_ONCE(rsw_stream_rtr_ms));

		WRITE_ONCE(s->rtr_deadline, jiffies + t);
		queue_delayed_work(rsw_stream_wq, &s->linger, t);
	}
	WRITE_ONCE(s->phase, RSW_STREAM_RUN);
	rsw_stream_kick(s);
}
EXPORT_SYMBOL_IF_KUNIT(rsw_stream_start);

int rsw_stream_stats(struct rsw_qp *qp, struct rsw_stream_stats *st)
{
	struct rsw_stream *s = qp->stream;

	if (!s)
		return -ENOTCONN;
	*st = s->stats;
	st->tx_spliced = READ_ONCE(s->ts.spliced);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_stream_stats);

/* ------------------------------------------- snapshots for rdma res (res.c) */

static const char *const rsw_stream_phase_names[RSW_STREAM_PHASES] = {
	[RSW_STREAM_IDLE] = "idle",
	[RSW_STREAM_RUN] = "run",
	[RSW_STREAM_LINGER] = "linger",
	[RSW_STREAM_DONE] = "done",
};

/*
 * Keep @s's socket while we look, as a doorbell does (rsw_stream_end()
 * waits for posters before it releases the socket): true if the stream
 * has not ended, so s->sock is there until rsw_stream_unpin().  Call
 * rsw_stream_unpin() either way.
 */
static bool rsw_stream_pin(struct rsw_stream *s)
{
	atomic_inc(&s->posters);
	smp_mb__after_atomic();	/* posters before phase: see rsw_stream_end() */
	return READ_ONCE(s->phase) != RSW_STREAM_DONE;
}

/*
 * Nothing may touch @s after the decrement: the last poster gone lets
 * rsw_stream_end() finish and rsw_stream_free() (which waits for posters
 * too) free @s.  So wake whoever waits on the (global) queue without
 * looking at the phase, and only if anyone does: the full barrier of
 * wq_has_sleeper() orders our decrement before its look, as the waiter's
 * prepare_to_wait() orders its enqueue before reading the count.
 */
static void rsw_stream_unpin(struct rsw_stream *s)
{
	if (atomic_dec_and_test(&s->posters) &&
	    wq_has_sleeper(&rsw_streams_wait))
		wake_up_all(&rsw_streams_wait);
}

/*
 * Fill @snap from pinned @s, without the socket's lock (a dump must not
 * hold up a connection's traffic): conn and initiator never change after
 * attach; the phase, the RTR flags (the socket owner's) and TCP's
 * sequence numbers are read once each with READ_ONCE, as /proc/net/tcp
 * reads them, so the values may be of slightly different moments.  Those
 * are the socket's state, shown only to a @viewer in the socket's
 * namespace (/proc/net/tcp too lists only its own namespace's sockets);
 * s->net is compared, never followed.  @has_sock: the pin found the
 * socket there.
 */
static void rsw_stream_snap_pinned(struct rsw_stream *s, bool has_sock,
				   const struct net *viewer,
				   struct rsw_stream_snap *snap)
{
	const struct tcp_sock *tp;

	snap->conn = s->conn;
	snap->initiator = s->initiator;
	snap->qpn = s->qp->base.qp_num;
	snap->live = viewer && net_eq(viewer, s->net);
	if (!snap->live)
		return;
	snap->phase = rsw_stream_phase_names[RSW_STREAM_DONE];
	if (!has_sock)
		return;
	/* The pin keeps s->sock (rsw_stream_end() waits for it). */
	tp = tcp_sk(s->sock->sk);
	snap->phase = rsw_stream_phase_names[READ_ONCE(s->phase)];
	snap->rtr_pending = READ_ONCE(s->rtr_send) || READ_ONCE(s->rtr_read) ||
			    READ_ONCE(s->rtr_wait);
	snap->tcp_queued = READ_ONCE(tp->write_seq) - READ_ONCE(tp->snd_una);
}

/*
 * Pinned under qp->lock, under which rsw_stream_free() unsets qp->stream
 * before it waits for posters: @s stays allocated until our unpin even if
 * ib_core did not keep destroy_qp away (see rsw_stream_free()).
 */
int rsw_stream_snapshot(struct rsw_qp *qp, const struct net *viewer,
			struct rsw_stream_snap *snap)
{
	struct rsw_stream *s;
	unsigned long flags;
	bool live = false;

	/*
	 * All of it under the lock: a few loads, and a pin held there cannot
	 * be preempted, so no dumping process can keep an end or a free
	 * waiting (review R1).
	 */
	spin_lock_irqsave(&qp->lock, flags);
	s = qp->stream;
	if (s) {
		live = rsw_stream_pin(s);
		rsw_stream_snap_pinned(s, live, viewer, snap);
		rsw_stream_unpin(s);
	}
	spin_unlock_irqrestore(&qp->lock, flags);
	return s ? 0 : -ENOTCONN;
}

/* @sa is @family's address @a with port @port. */
static bool rsw_stream_sa_is(const struct sockaddr *sa, sa_family_t family,
			     const struct in6_addr *a, __be16 port)
{
	const struct sockaddr_in *sin = (const void *)sa;
	const struct sockaddr_in6 *sin6 = (const void *)sa;

	if (sa->sa_family != family)
		return false;
	if (family == AF_INET)
		return sin->sin_addr.s_addr == a->s6_addr32[0] &&
		       sin->sin_port == port;
	if (family == AF_INET6)
		return ipv6_addr_equal(&sin6->sin6_addr, a) &&
		       sin6->sin6_port == port;
	return false;
}

/* @s's connection joins @src to @dst (its ends are constant: no lock). */
static bool rsw_stream_ends_are(const struct rsw_stream *s,
				const struct sockaddr *src,
				const struct sockaddr *dst)
{
	const struct rsw_stream_ends *e = &s->ends;

	return rsw_stream_sa_is(src, e->family, &e->src, e->sport) &&
	       rsw_stream_sa_is(dst, e->family, &e->dst, e->dport);
}

/*
 * A listed stream is allocated (unlisting comes before the free); a
 * hooked one is complete and ends only through rsw_stream_end() (a
 * failed attach, which frees without waiting for posters, never hooked
 * it), so once pinned its socket stays.  Match by the constant fields
 * under the list's lock, pin only the match (one that has ended does not
 * count) and look with the pin.  No socket lock: a dump runs
 * for every cm_id and must stay cheap.  The snapshot is taken under the
 * list's lock, so the pin is never held by a preempted dumper.
 */
int rsw_stream_snapshot_addr(struct rsw_device *rsw, const struct net *net,
			     const struct sockaddr *src,
			     const struct sockaddr *dst,
			     const struct net *viewer,
			     struct rsw_stream_snap *snap)
{
	struct rsw_stream *s, *found = NULL;

	spin_lock_bh(&rsw_streams_lock);
	list_for_each_entry(s, &rsw_streams, link) {
		/* s->net and s->ends are set at attach, before listing. */
		if (s->rsw != rsw || s->net != net || !s->hooked ||
		    !rsw_stream_ends_are(s, src, dst))
			continue;
		/* The look under the lock too: a pin is never preempted. */
		if (rsw_stream_pin(s)) {
			found = s;
			rsw_stream_snap_pinned(s, true, viewer, snap);
		}
		rsw_stream_unpin(s);	/* listed: @s stays meanwhile */
		if (found)
			break;
	}
	spin_unlock_bh(&rsw_streams_lock);
	return found ? 0 : -ENOENT;
}

/*
 * The stream is DONE here (its last act dropped the QP reference destroy
 * waited for), so its work queues nothing any more: neither itself nor the
 * linger timeout (the SQ's look, which also queues it, was cancelled by
 * the end).  The linger timeout may still be running, though (the
 * end's cancel_delayed_work() cannot stop a running one), and it queues
 * the work.  Hence the order: first wait out the linger timeout, which
 * nothing can queue again, then the work, which nothing can queue again
 * once the timeout is gone.  The other way round, a timeout running
 * between the two queues the work onto the memory freed below.
 *
 * Then the snapshots (rdma res, res.c): one pins @s under qp->lock
 * having read qp->stream, so once qp->stream is unset under that lock
 * none can start, and we wait for those that did (the posters count them;
 * rsw_stream_unpin() wakes us).  No doorbell is among them: destroy
 * waited for every QP reference, and rsw_stream_tx_direct() runs under
 * one.  A cm_id snapshot pins only a listed stream, under the list's
 * lock; the end unlisted @s, so it is past too.  ib_core also drains
 * its restrack references before destroy_qp on the kernels we build
 * for; this wait keeps us safe without relying on that, and costs a
 * dump-free destroy nothing.
 */
void rsw_stream_free(struct rsw_qp *qp)
{
	struct rsw_stream *s = qp->stream;
	unsigned long flags;

	might_sleep();
	if (!s)
		return;
	cancel_delayed_work_sync(&s->linger);
	cancel_work_sync(&s->work);
	WARN_ON_ONCE(s->sock);
	spin_lock_irqsave(&qp->lock, flags);
	qp->stream = NULL;
	spin_unlock_irqrestore(&qp->lock, flags);
	wait_event(rsw_streams_wait, !atomic_read(&s->posters));
	kfree(s->rr);
	kvfree(s);
}

/* A stream of @net still has its socket. */
static bool rsw_stream_net_busy(struct net *net)
{
	struct rsw_stream *s;
	bool busy = false;

	spin_lock_bh(&rsw_streams_lock);
	list_for_each_entry(s, &rsw_streams, link) {
		if (s->net == net) {
			busy = true;
			break;
		}
	}
	spin_unlock_bh(&rsw_streams_lock);
	return busy;
}

/*
 * Mark the listed streams of @net, or of @rsw, net_gone: each ends
 * abortively at its next run (kicked here once hooked; attach kicks or
 * frees one that is not yet).
 */
static void rsw_stream_mark_gone(const struct net *net,
				 const struct rsw_device *rsw)
{
	struct rsw_stream *s;

	spin_lock_bh(&rsw_streams_lock);
	list_for_each_entry(s, &rsw_streams, link) {
		if (net ? s->net != net : s->rsw != rsw)
			continue;
		WRITE_ONCE(s->net_gone, true);
		if (s->hooked)
			rsw_stream_kick(s);
	}
	spin_unlock_bh(&rsw_streams_lock);
}

void rsw_stream_net_exit(struct net *net)
{
	might_sleep();
	rsw_stream_mark_gone(net, NULL);
	wait_event(rsw_streams_wait, !rsw_stream_net_busy(net));
}

void rsw_stream_dev_gone(struct rsw_device *rsw)
{
	rsw_stream_mark_gone(NULL, rsw);
}

int rsw_stream_init(void)
{
	/*
	 * Storage runs over us: the work must progress under reclaim.
	 * Unbound: RX queues the work from data-ready, i.e. on whatever CPU
	 * the segment arrived, often one where a poller spins on its CQ; a
	 * bound work item would preempt it there while another CPU idles.
	 */
	rsw_stream_wq = alloc_workqueue("rdmap_sw_stream",
					WQ_UNBOUND | WQ_MEM_RECLAIM |
					WQ_HIGHPRI, 0);
	return rsw_stream_wq ? 0 : -ENOMEM;
}

void rsw_stream_exit(void)
{
	destroy_workqueue(rsw_stream_wq);
}
