// SPDX-License-Identifier: GPL-2.0
/*
 * rdmap_sw: the iw_cm provider.  Thin wrappers: cm.c sets connections up
 * (TCP plus the MPA exchange), stream.c runs them; this file translates
 * both into iw_cm's calls and events.
 *
 * Objects.  A listener (struct rsw_iw_listen) is one iw_cm_id and one cep
 * per local address it covers: a wildcard address becomes one socket per
 * address of our netdev in that family, so two RDMA devices (ours and
 * another iWARP provider) can listen on the same port, each on its own
 * addresses; it follows the netdev's addresses as they come and go
 * (below).  A connection (struct rsw_iw_ep) is one iw_cm_id, one cep and
 * the QP.
 *
 * Events, in the only orders iw_cm accepts:
 *   initiator  CONNECT_REPLY; if its status was 0: [DISCONNECT] CLOSE
 *   responder  CONNECT_REQUEST (listener's id, provider_data = the new
 *              ep); iw_accept: ESTABLISHED, then [DISCONNECT] CLOSE;
 *              iw_reject or a failed iw_accept: nothing more
 * iw_cm queues every event to its own work, so they may be delivered from
 * any of our contexts; all of ours are process context.
 *
 * References.  An ep holds its iw_cm_id (add_ref) from iw_connect or
 * iw_accept until its last event, and a QP reference; the stream holds its
 * own.  An ep is released (cep destroyed, references dropped, freed) from
 * rsw_iw_wq, never from a cm.c callback about its cep.  iw_cm holds the QP
 * by its own reference, from iw_get_qp() to iw_rem_ref() (see there).
 *
 * Who may bind a QP.  The QPN of iw_connect/iw_accept comes from whoever
 * called rdma_connect()/rdma_accept(), for a process unchecked through
 * ucma, and both run in that caller's task.  rsw_iw_may_bind() admits a
 * user QP only from its own process and a kernel ULP's QP only from a
 * kernel thread or a CAP_NET_ADMIN caller; anything else is -EINVAL
 * before a byte reaches the wire.
 *
 * Wildcard listeners follow their netdev's addresses.  The inetaddr and
 * inet6addr notifiers (module-wide; the IPv6 chain calls in atomic
 * context) only queue rsw_iw_addr_work, on system_unbound_wq (not on
 * rsw_iw_wq, whose rescuer endpoint releases need), and only for an event
 * of a netdev some wildcard listener is on (rsw_iw_listened_dev(): an RCU
 * walk of the listed listeners, comparing pointers).  The work brings
 * every wildcard listener in step with its netdev's addresses of now:
 * first the cep of each one gone is destroyed, for every listener
 * (rsw_iw_sync_drop(), a mark and sweep), then a cep is made for each new
 * one (rsw_iw_sync_add()), so an address moving between two of our
 * netdevs is free when its new owner binds it.  It compares states, not
 * events, so one run covers any number of queued events, in any order.
 * A bind that fails (the address and port taken by another socket) is
 * said and retried by the work itself, with backoff, until none fails.
 * At most RSW_IW_MAX_LISTEN addresses per listener, those it listens on
 * counted first; more are left out, said (rate-limited ibdev_dbg) each
 * time their number grows.
 *
 * Lifetime and locks of wildcard listeners.  rsw_iw_listen_lock (mutex)
 * guards rsw_iw_wildcards, each wildcard listener's ceps and fields
 * marked so, and the scratch rsw_iw_want.  A wildcard listener is listed
 * by create_listen before its first sync (an address coming during it is
 * seen by it or by the run its event queued after the lock is dropped)
 * until destroy_listen unlists it; the work touches listeners only while
 * listed, under the lock, so once unlisted the listener and its ceps are
 * destroy_listen's alone: no flush, no reference needed; its memory is
 * freed after an RCU grace period, for the notifiers' walk.  A listed
 * listener's iw_cm_id is held (by iw_cm until create_listen returns, by
 * our reference after), so its device, and the device's netdev (held
 * until the reap work), stay.  Device unregistration: a device whose
 * netdev is gone is not synced any more, and rdma_cm (cma_remove_one(),
 * an ib_client) destroys its listeners before the unregistration ends.
 * Namespace exit: rsw_cm_net_exit() closes the sockets of listening ceps
 * there, which stay listed until their address goes or the listener is
 * destroyed; a bind in a dying namespace is refused (-ENETDOWN, logged, as
 * any failed bind of a sync).  Module unload: every device, hence every
 * listener, is gone first (main.c); rsw_iw_exit() then unregisters the
 * notifiers (nothing queues the work after that) and cancels the work.
 * Order: rsw_iw_listen_lock -> a cep's locks (rsw_cm_listen(),
 * rsw_cm_destroy()); connect_request runs under its listening cep's
 * children_lock and takes none of ours.
 */
#include <linux/capability.h>
#include <linux/inetdevice.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <net/addrconf.h>
#include <net/if_inet6.h>
#include <rdma/iw_cm.h>
#include <rdma/restrack.h>

#include "internal.h"

static struct workqueue_struct *rsw_iw_wq;

/*
 * Most addresses a wildcard listener listens on, a kernel socket each:
 * a bound on the memory one rdma_listen() on a wildcard may take (any
 * ucma user may make one; the sockets made later by the address work are
 * charged to no one's memory cgroup).
 */
#define RSW_IW_MAX_LISTEN	64

/* An address to listen on, with the port. */
union rsw_iw_sa {
	struct sockaddr sa;
	struct sockaddr_in in;
	struct sockaddr_in6 in6;
};

/* One listening cep of a listener, and the address it is bound to. */
struct rsw_iw_lcep {
	struct list_head link;		/* on rsw_iw_listen.ceps */
	union rsw_iw_sa addr;
	struct rsw_cep *cep;
	bool seen;			/* a sync's mark: the address is there */
};

struct rsw_iw_listen {
	struct iw_cm_id *cm_id;		/* referenced once created */
	struct rsw_device *rsw;
	/* Set at creation. */
	union rsw_iw_sa addr;		/* the cm_id's local address */
	int family;
	bool wildcard;
	bool dual;			/* an [::] listen taking IPv4 too */
	int backlog;
	struct rsw_mpa_params lp;	/* the device's settings then */
	/* rsw->netdev: only compared, by the notifiers, under RCU. */
	const struct net_device *ndev;
	struct rcu_head rcu;		/* freed after the notifiers' walks */
	/* A wildcard listener's: under rsw_iw_listen_lock (see the top). */
	struct list_head link;		/* on rsw_iw_wildcards */
	struct list_head ceps;		/* of struct rsw_iw_lcep */
	unsigned int n;			/* ceps */
	unsigned int n4;		/* of them, IPv4 ones of a dual listen */
	__be16 port;			/* 0 until a bind picked one */
	unsigned int left_out;		/* over RSW_IW_MAX_LISTEN, last sync */
};

static DEFINE_MUTEX(rsw_iw_listen_lock);
static LIST_HEAD(rsw_iw_wildcards);
/* A sync's scratch: the addresses the listener wants. */
static union rsw_iw_sa rsw_iw_want[RSW_IW_MAX_LISTEN];

struct rsw_iw_ep {
	struct iw_cm_id *cm_id;		/* referenced; NULL until it is ours */
	struct rsw_device *rsw;
	struct rsw_cep *cep;
	struct rsw_qp *qp;		/* referenced */
	struct rsw_settings set;	/* the device's, when it started */
	struct work_struct release;
};

/* ------------------------------------------------------------ helpers */

static void rsw_iw_ep_release_work(struct work_struct *work)
{
	struct rsw_iw_ep *ep = container_of(work, struct rsw_iw_ep, release);

	if (ep->cep)
		rsw_cm_destroy(ep->cep);
	if (ep->qp)
		rsw_qp_put(ep->qp);
	if (ep->cm_id)
		ep->cm_id->rem_ref(ep->cm_id);
	kfree(ep);
}

static struct rsw_iw_ep *rsw_iw_ep_alloc(struct rsw_device *rsw)
{
	/* Small and needed to answer a peer at all. */
	struct rsw_iw_ep *ep = kzalloc(sizeof(*ep), GFP_KERNEL | __GFP_NOFAIL);

	ep->rsw = rsw;
	rsw_settings_get(rsw, &ep->set);
	INIT_WORK(&ep->release, rsw_iw_ep_release_work);
	return ep;
}

static void rsw_iw_ep_release(struct rsw_iw_ep *ep)
{
	queue_work(rsw_iw_wq, &ep->release);
}

/*
 * Local policy of a new connection: the device's settings @set with the
 * ULP's IRD/ORD and data.
 */
static void rsw_iw_params(struct rsw_mpa_params *lp,
			  const struct rsw_settings *set,
			  const struct iw_cm_conn_param *p)
{
	rsw_settings_mpa(set, lp);
	if (p) {
		lp->ird = min_t(u32, p->ird, RSW_MAX_RD_ATOM);
		lp->ord = min_t(u32, p->ord, RSW_MAX_RD_ATOM);
		lp->pd = p->private_data;
		lp->pd_len = p->private_data_len;
	}
}

/*
 * An initiator whose only RTR type is Read raises an ORD of 0 to 1, as
 * iw_cxgb4 does: the zero-length Read takes an ORD slot, and a ULP that
 * never reads (nvme-rdma's host, an NFS client) asks for none.
 */
static void rsw_iw_ord_for_rtr(struct rsw_mpa_params *lp)
{
	if (lp->p2p && lp->rtr == RSW_MPA_RTR_READ && !lp->ord)
		lp->ord = 1;
}

static void rsw_iw_event(struct iw_cm_id *id, struct iw_cm_event *ev)
{
	int ret = id->event_handler(id, ev);

	if (ret)
		pr_debug("iw_cm refused event %d: %d\n", ev->event, ret);
}

/* The peer's private data: valid during the call, iw_cm copies it. */
static void rsw_iw_event_pd(struct iw_cm_event *ev,
			    const struct rsw_cm_event *cev)
{
	ev->private_data = (void *)cev->pd;
	ev->private_data_len = cev->pd_len;
}

/* ------------------------------------------------------ stream reports */

static void rsw_iw_stream_disconnect(void *ctx)
{
	struct rsw_iw_ep *ep = ctx;
	struct iw_cm_event ev = { .event = IW_CM_EVENT_DISCONNECT };

	rsw_iw_event(ep->cm_id, &ev);
}

static void rsw_iw_stream_closed(void *ctx, int status)
{
	struct rsw_iw_ep *ep = ctx;
	struct iw_cm_event ev = {
		.event = IW_CM_EVENT_CLOSE,
		.status = status,
	};

	rsw_iw_event(ep->cm_id, &ev);
	rsw_iw_ep_release(ep);
}

static const struct rsw_stream_ops rsw_iw_stream_ops = {
	.disconnect = rsw_iw_stream_disconnect,
	.closed = rsw_iw_stream_closed,
};

/*
 * Take @cep's socket into @qp's stream; the addresses for the event.
 * 0 or -errno (the socket is gone then, the peer sees it close).
 */
static int rsw_iw_attach(struct rsw_iw_ep *ep, bool initiator,
			 struct iw_cm_event *ev)
{
	struct rsw_mpa_conn conn;
	struct socket *sock;
	int ret;

	sock = rsw_cm_take_socket(ep->cep);
	if (!sock)
		return -ECONNRESET;
	ret = rsw_cm_conn(ep->cep, &conn);
	if (!ret)
		ret = kernel_getsockname(sock, (struct sockaddr *)&ev->local_addr) < 0;
	if (!ret)
		ret = kernel_getpeername(sock, (struct sockaddr *)&ev->remote_addr) < 0;
	if (ret) {
		sock_no_linger(sock->sk);	/* see rsw_stream_attach() */
		sock_release(sock);
		rsw_cm_socket_placed(ep->cep);
		return -ENOTCONN;
	}
	ev->ird = min_t(u16, conn.ird, U8_MAX);
	ev->ord = min_t(u16, conn.ord, U8_MAX);
	conn.max_ulpdu = rsw_settings_max_ulpdu(&ep->set);
	rsw_settings_sock(&ep->set, sock);
	ret = rsw_stream_attach(ep->qp, sock, &conn, initiator,
				&rsw_iw_stream_ops, ep);
	rsw_cm_socket_placed(ep->cep);
	return ret;
}

/* ---------------------------------------------------------- cm.c events */

static void rsw_iw_connect_reply(void *ctx, struct rsw_cep *cep,
				 const struct rsw_cm_event *cev)
{
	struct rsw_iw_ep *ep = ctx;
	struct iw_cm_event ev = {
		.event = IW_CM_EVENT_CONNECT_REPLY,
		.status = cev->status,
	};

	ep->cep = cep;
	if (!ev.status)
		ev.status = rsw_iw_attach(ep, true, &ev);
	rsw_iw_event_pd(&ev, cev);
	if (ev.status) {
		memcpy(&ev.local_addr, &ep->cm_id->m_local_addr,
		       sizeof(ev.local_addr));
		memcpy(&ev.remote_addr, &ep->cm_id->m_remote_addr,
		       sizeof(ev.remote_addr));
		rsw_iw_event(ep->cm_id, &ev);
		rsw_iw_ep_release(ep);
		return;
	}
	rsw_iw_event(ep->cm_id, &ev);
	rsw_stream_start(ep->qp);
}

static void rsw_iw_connect_request(void *listen_ctx, struct rsw_cep *cep,
				   const struct rsw_cm_event *cev)
{
	struct rsw_iw_listen *l = listen_ctx;
	struct rsw_iw_ep *ep = rsw_iw_ep_alloc(l->rsw);
	struct iw_cm_event ev = { .event = IW_CM_EVENT_CONNECT_REQUEST };

	ep->cep = cep;
	if (rsw_cm_local_addr(cep, &ev.local_addr) ||
	    rsw_cm_peer_addr(cep, &ev.remote_addr)) {
		rsw_iw_ep_release(ep);	/* the peer already left */
		return;
	}
	rsw_iw_event_pd(&ev, cev);
	/* The peer's IRD/ORD (RFC 6581), our maxima if it sent none. */
	ev.ird = min_t(u16, cev->ird, U8_MAX);
	ev.ord = min_t(u16, cev->ord, U8_MAX);
	ev.provider_data = ep;
	if (l->cm_id->event_handler(l->cm_id, &ev)) {
		rsw_cm_reject(cep, NULL, 0);
		rsw_iw_ep_release(ep);
	}
}

/* The responder's accept already reported ESTABLISHED itself. */
static void rsw_iw_established(void *ctx, struct rsw_cep *cep)
{
}

/*
 * A connection lost before its socket was taken: a request nobody has
 * answered yet (iw_accept then fails), as the socket is taken at once
 * everywhere else.
 */
static void rsw_iw_cm_closed(void *ctx, struct rsw_cep *cep, int status)
{
}

static const struct rsw_cm_ops rsw_iw_cm_ops = {
	.connect_request = rsw_iw_connect_request,
	.connect_reply = rsw_iw_connect_reply,
	.established = rsw_iw_established,
	.closed = rsw_iw_cm_closed,
};

/* ------------------------------------------------------------ iw ops */

/*
 * May the current task bind a connection to @qp?  A user QP's restrack
 * entry holds the task that created it: any thread of that process may
 * (not a forked child: it has the QP's file but not its thread group).  A
 * kernel QP: a kernel thread (ULPs connect and accept from workqueues,
 * nfsd, ...) or a caller with CAP_NET_ADMIN (SMB Direct connects from
 * mount(2), so a task with an mm is not a sign of a process).
 */
static bool rsw_iw_may_bind(struct rsw_qp *qp)
{
	struct rdma_restrack_entry *res = &qp->base.res;

	if (rdma_is_kernel_res(res))
		return (current->flags & PF_KTHREAD) || capable(CAP_NET_ADMIN);
	return res->task && same_thread_group(res->task, current);
}

/*
 * The QP named @qpn, referenced, if it exists and the caller may bind it
 * (@op names the call for the log); NULL otherwise.  Process context.
 */
static struct rsw_qp *rsw_iw_bind_qp(struct rsw_device *rsw, u32 qpn,
				     const char *op)
{
	struct rsw_qp *qp = rsw_qp_lookup(rsw, qpn);

	if (!qp || rsw_iw_may_bind(qp))
		return qp;
	pr_warn_ratelimited("QP[%u]: %s by pid %d (%s) refused: the QP belongs to %s\n",
			    qpn, op, task_tgid_nr(current), current->comm,
			    rdma_is_kernel_res(&qp->base.res) ?
			    "a kernel ULP" : "another process");
	rsw_qp_put(qp);
	return NULL;
}

/*
 * The active side's remote rights.  iw_cm grants REMOTE_WRITE and
 * REMOTE_READ to a QP bound to one of its ids (iw_cm_init_qp_attr), and
 * rdma_cm applies that at INIT for kernel QPs and on the passive side; but
 * librdmacm initialises an active user QP before the iw_cm id exists, when
 * rdma_init_qp_attr() gives no rights, and never again: rping's client
 * would refuse the server's Reads.  So connect grants what iw_cm would; a
 * consumer that wants less lowers them once connected (enforced in rx.c).
 */
static void rsw_iw_grant_remote(struct rsw_qp *qp)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->lock, flags);
	WRITE_ONCE(qp->access, qp->access | IB_ACCESS_REMOTE_WRITE |
			       IB_ACCESS_REMOTE_READ);
	spin_unlock_irqrestore(&qp->lock, flags);
}

static struct net *rsw_iw_net(struct rsw_device *rsw)
{
	return dev_net(rsw->netdev);
}

static int rsw_iw_connect(struct iw_cm_id *cm_id,
			  struct iw_cm_conn_param *param)
{
	struct rsw_device *rsw = to_rsw_dev(cm_id->device);
	struct sockaddr *local = (struct sockaddr *)&cm_id->m_local_addr;
	struct rsw_mpa_params lp;
	struct rsw_cm_args args = {
		.net = rsw_iw_net(rsw),
		.remote = (struct sockaddr *)&cm_id->m_remote_addr,
		.lp = &lp,
		.ops = &rsw_iw_cm_ops,
		.stats = rsw->stats,
	};
	struct rsw_cep *cep;
	struct rsw_iw_ep *ep;
	struct rsw_qp *qp;

	qp = rsw_iw_bind_qp(rsw, param->qpn, "connect");
	if (!qp)
		return -EINVAL;
	rsw_iw_grant_remote(qp);
	ep = rsw_iw_ep_alloc(rsw);
	ep->qp = qp;
	rsw_iw_params(&lp, &ep->set, param);
	rsw_iw_ord_for_rtr(&lp);
	if (local->sa_family == args.remote->sa_family)
		args.local = local;
	cm_id->add_ref(cm_id);
	ep->cm_id = cm_id;
	args.ctx = ep;
	/*
	 * From here connect_reply may run (and release @ep) at any time:
	 * @ep is not touched again on success.
	 */
	cep = rsw_cm_connect(&args);
	if (IS_ERR(cep)) {
		cm_id->rem_ref(cm_id);
		rsw_qp_put(qp);
		kfree(ep);
		return PTR_ERR(cep);
	}
	return 0;
}

static int rsw_iw_accept(struct iw_cm_id *cm_id,
			 struct iw_cm_conn_param *param)
{
	struct rsw_iw_ep *ep = cm_id->provider_data;
	struct iw_cm_event ev = { .event = IW_CM_EVENT_ESTABLISHED };
	struct rsw_mpa_params lp;
	int ret;

	if (!ep || ep->qp)
		return -EINVAL;
	/* iw_cm sends no iw_reject after a failed accept: answer it here. */
	cm_id->provider_data = NULL;
	ep->qp = rsw_iw_bind_qp(ep->rsw, param->qpn, "accept");
	if (!ep->qp) {
		rsw_cm_reject(ep->cep, NULL, 0);
		rsw_iw_ep_release(ep);
		return -EINVAL;
	}
	rsw_iw_params(&lp, &ep->set, param);
	cm_id->add_ref(cm_id);
	ep->cm_id = cm_id;
	ret = rsw_cm_accept(ep->cep, &lp, ep);
	if (!ret)
		ret = rsw_iw_attach(ep, false, &ev);
	if (ret) {
		/* iw_cm expects no event after a failed accept. */
		rsw_iw_ep_release(ep);
		return ret;
	}
	rsw_iw_event(cm_id, &ev);
	rsw_stream_start(ep->qp);
	return 0;
}

static int rsw_iw_reject(struct iw_cm_id *cm_id, const void *pdata,
			 u8 pdata_len)
{
	struct rsw_iw_ep *ep = cm_id->provider_data;
	int ret;

	if (!ep)
		return -EINVAL;
	cm_id->provider_data = NULL;
	ret = rsw_cm_reject(ep->cep, pdata, pdata_len);
	rsw_iw_ep_release(ep);
	return ret;
}

/* ----------------------------------------------------------- listeners */

static void rsw_iw_sa_set_port(union rsw_iw_sa *a, __be16 port)
{
	/* sin_port and sin6_port share their place. */
	a->in.sin_port = port;
}

static __be16 rsw_iw_sa_port(const union rsw_iw_sa *a)
{
	return a->in.sin_port;
}

static bool rsw_iw_sa_any(const union rsw_iw_sa *a)
{
	if (a->sa.sa_family == AF_INET)
		return a->in.sin_addr.s_addr == htonl(INADDR_ANY);
	if (a->sa.sa_family == AF_INET6)
		return ipv6_addr_any(&a->in6.sin6_addr);
	return false;
}

/* The same host address (ports aside). */
static bool rsw_iw_sa_same(const union rsw_iw_sa *a, const union rsw_iw_sa *b)
{
	if (a->sa.sa_family != b->sa.sa_family)
		return false;
	if (a->sa.sa_family == AF_INET)
		return a->in.sin_addr.s_addr == b->in.sin_addr.s_addr;
	return ipv6_addr_equal(&a->in6.sin6_addr, &b->in6.sin6_addr) &&
	       a->in6.sin6_scope_id == b->in6.sin6_scope_id;
}

/*
 * A scan of our netdev's addresses for wildcard listener @l: each address
 * @l has a cep on marks it seen; the others go to @out while there is
 * room, and are counted in @more after that.  Called under RCU or the
 * inet6_dev's lock: no sleeping.  Cost: ceps x addresses comparisons.
 */
struct rsw_iw_scan {
	struct rsw_iw_listen *l;
	union rsw_iw_sa *out;
	unsigned int room;		/* of @out */
	unsigned int n;			/* in @out */
	unsigned int more;		/* no cep, no room */
};

static void rsw_iw_scan_one(struct rsw_iw_scan *sc, const union rsw_iw_sa *a)
{
	struct rsw_iw_lcep *lc;

	lockdep_assert_held(&rsw_iw_listen_lock);
	list_for_each_entry(lc, &sc->l->ceps, link) {
		if (rsw_iw_sa_same(&lc->addr, a)) {
			lc->seen = true;
			return;
		}
	}
	if (sc->n < sc->room)
		sc->out[sc->n++] = *a;
	else
		sc->more++;
}

static void rsw_iw_scan4(struct net_device *ndev, struct rsw_iw_scan *sc)
{
	const struct in_ifaddr *ifa;
	union rsw_iw_sa a = {};
	struct in_device *in;

	a.in.sin_family = AF_INET;
	rcu_read_lock();
	in = __in_dev_get_rcu(ndev);
	if (in) {
		in_dev_for_each_ifa_rcu(ifa, in) {
			a.in.sin_addr.s_addr = ifa->ifa_local;
			rsw_iw_scan_one(sc, &a);
		}
	}
	rcu_read_unlock();
}

/*
 * The same for IPv6.  A tentative address counts (the listener binds it
 * with freebind: no event says when its DAD is done), one whose DAD
 * failed does not; but as no event says that either, a socket bound while
 * it was tentative stays (serving nothing: the address is not local)
 * until the next sync.  Nor does one being removed: addrconf marks it
 * DEAD, then notifies, then unlinks it; this walk takes no RTNL and may
 * run in between, and the run the notification queued must drop it.
 */
static bool rsw_iw_addr6_usable(const struct inet6_ifaddr *ifp)
{
	int state = READ_ONCE(ifp->state);

	return !(READ_ONCE(ifp->flags) & IFA_F_DADFAILED) &&
	       state != INET6_IFADDR_STATE_DEAD &&
	       state != INET6_IFADDR_STATE_ERRDAD;
}

static void rsw_iw_scan6(struct net_device *ndev, struct rsw_iw_scan *sc)
{
	struct inet6_dev *in6 = in6_dev_get(ndev);
	const struct inet6_ifaddr *ifp;
	union rsw_iw_sa a = {};

	if (!in6)
		return;
	a.in6.sin6_family = AF_INET6;
	read_lock_bh(&in6->lock);
	list_for_each_entry(ifp, &in6->addr_list, if_list) {
		if (!rsw_iw_addr6_usable(ifp))
			continue;
		a.in6.sin6_addr = ifp->addr;
		a.in6.sin6_scope_id = 0;
		if (ipv6_addr_type(&ifp->addr) & IPV6_ADDR_LINKLOCAL)
			a.in6.sin6_scope_id = ndev->ifindex;
		rsw_iw_scan_one(sc, &a);
	}
	read_unlock_bh(&in6->lock);
	in6_dev_put(in6);
}

static void rsw_iw_scan(struct rsw_iw_scan *sc, int family)
{
	struct net_device *ndev = sc->l->rsw->netdev;

	if (family == AF_INET)
		rsw_iw_scan4(ndev, sc);
	else if (IS_ENABLED(CONFIG_IPV6) && family == AF_INET6)
		rsw_iw_scan6(ndev, sc);
}

/*
 * Listen on @addr for @l, with @l's port, or with the one this bind picks,
 * which becomes @l's.  The cep joins @l's list.  0 or -errno.
 */
static int rsw_iw_listen_add(struct rsw_iw_listen *l,
			     const union rsw_iw_sa *addr)
{
	struct rsw_cm_args args = {
		.net = rsw_iw_net(l->rsw),
		.backlog = l->backlog,
		.lp = &l->lp,
		.ops = &rsw_iw_cm_ops,
		.ctx = l,
		.stats = l->rsw->stats,
		.freebind = l->wildcard,
	};
	struct sockaddr_storage bound;
	struct rsw_iw_lcep *lc;
	struct rsw_cep *cep;

	lc = kzalloc(sizeof(*lc), GFP_KERNEL);
	if (!lc)
		return -ENOMEM;
	lc->addr = *addr;
	rsw_iw_sa_set_port(&lc->addr, l->port);
	args.local = &lc->addr.sa;
	cep = rsw_cm_listen(&args);
	if (IS_ERR(cep)) {
		kfree(lc);
		return PTR_ERR(cep);
	}
	lc->cep = cep;
	if (!l->port && !rsw_cm_local_addr(cep, &bound))
		l->port = ((struct sockaddr_in *)&bound)->sin_port;
	list_add_tail(&lc->link, &l->ceps);
	l->n++;
	if (addr->sa.sa_family != l->family)
		l->n4++;
	return 0;
}

/* Close @lc's cep (waits for its callbacks) and forget it. */
static void rsw_iw_listen_drop(struct rsw_iw_listen *l, struct rsw_iw_lcep *lc)
{
	list_del(&lc->link);
	l->n--;
	if (lc->addr.sa.sa_family != l->family)
		l->n4--;
	rsw_cm_destroy(lc->cep);
	kfree(lc);
}

/* Addresses over the bound: said once for each time their number grows. */
static void rsw_iw_note_left_out(struct rsw_iw_listen *l,
				 unsigned int left_out)
{
	if (left_out > l->left_out)
		ibdev_dbg_ratelimited(&l->rsw->ibdev,
				      "wildcard listen on port %u: %u addresses over the limit of %u not listened on\n",
				      ntohs(l->port), left_out,
				      RSW_IW_MAX_LISTEN);
	l->left_out = left_out;
}

/* Drop the ceps of @l on addresses its netdev does not have any more. */
static void rsw_iw_sync_drop(struct rsw_iw_listen *l)
{
	struct rsw_iw_scan sc = { .l = l };
	struct rsw_iw_lcep *lc, *tmp;

	lockdep_assert_held(&rsw_iw_listen_lock);
	/* Going away: rdma_cm destroys the listener during unregistration. */
	if (READ_ONCE(l->rsw->netdev_gone))
		return;
	list_for_each_entry(lc, &l->ceps, link)
		lc->seen = false;
	rsw_iw_scan(&sc, l->family);
	if (l->dual)
		rsw_iw_scan(&sc, AF_INET);
	list_for_each_entry_safe(lc, tmp, &l->ceps, link)
		if (!lc->seen)
			rsw_iw_listen_drop(l, lc);
}

/*
 * Listen on the @n addresses of rsw_iw_want for @l.  @strict: the first
 * failed bind fails, -errno; otherwise a failed bind is said (rate-limited;
 * our own address and port only): how many failed.
 */
static int rsw_iw_listen_want(struct rsw_iw_listen *l, unsigned int n,
			      bool strict)
{
	const union rsw_iw_sa *a;
	int ret, failed = 0;
	unsigned int i;

	for (i = 0; i < n; i++) {
		a = &rsw_iw_want[i];
		ret = rsw_iw_listen_add(l, a);
		if (ret && strict)
			return ret;
		if (!ret)
			continue;
		failed++;
		ibdev_warn_ratelimited(&l->rsw->ibdev,
				       "wildcard listen: cannot listen on %pISc port %u (%d), retrying\n",
				       &a->sa, ntohs(l->port), ret);
	}
	return failed;
}

/*
 * Add a cep of @l on addresses of its netdev it has none on, while there
 * is room: RSW_IW_MAX_LISTEN in all, the ceps it has counted first, so
 * that a new address never displaces a served one.  An IPv6 wildcard
 * that is not IPv6-only (rdma_cm's afonly: net.ipv6.bindv6only unless
 * the ULP set it) takes the IPv4 addresses too, as a dual-stack [::]
 * socket accepts them (ib_srpt, for one, listens on [::]:port only); its
 * IPv6 addresses first (an ephemeral port is picked by the first bind),
 * but they leave up to half the room to the IPv4 ones, so that many IPv6
 * addresses (a link-local and several global per prefix are common)
 * cannot crowd them out, nor they the IPv6 ones.  @strict (the
 * listener's creation): a failed bind of its own family fails the sync,
 * as a listen on that address would fail: -errno.  Otherwise how many
 * binds failed, for a later sync to retry (rsw_iw_addr_work_fn()).
 */
static int rsw_iw_sync_add(struct rsw_iw_listen *l, bool strict)
{
	const unsigned int max = RSW_IW_MAX_LISTEN;
	struct rsw_iw_scan sc = { .l = l, .out = rsw_iw_want };
	unsigned int room, left_out, total4 = 0;
	int failed;

	lockdep_assert_held(&rsw_iw_listen_lock);
	might_sleep();
	if (READ_ONCE(l->rsw->netdev_gone))
		return 0;
	if (l->dual) {
		rsw_iw_scan(&sc, AF_INET);	/* no room: counts them */
		total4 = l->n4 + sc.more;
		sc.more = 0;
	}
	/* Own family: up to max - min(total4, max / 2) of them. */
	room = max - min(total4, max / 2);
	room = room > l->n - l->n4 ? room - (l->n - l->n4) : 0;
	sc.room = l->n < max ? min(room, max - l->n) : 0;
	rsw_iw_scan(&sc, l->family);
	left_out = sc.more;
	failed = rsw_iw_listen_want(l, sc.n, strict);
	if (failed < 0)
		return failed;
	if (l->dual) {
		sc = (struct rsw_iw_scan){ .l = l, .out = rsw_iw_want };
		sc.room = l->n < max ? max - l->n : 0;
		rsw_iw_scan(&sc, AF_INET);
		left_out += sc.more;
		failed += rsw_iw_listen_want(l, sc.n, false);
	}
	rsw_iw_note_left_out(l, left_out);
	return failed;
}

/* Retries of failed binds: from 1 s, doubling, up to a minute. */
#define RSW_IW_RETRY_MIN	HZ
#define RSW_IW_RETRY_MAX	(60 * HZ)

/* Under rsw_iw_listen_lock: the delay of the next retry. */
static unsigned long rsw_iw_retry = RSW_IW_RETRY_MIN;

static void rsw_iw_addr_work_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(rsw_iw_addr_work, rsw_iw_addr_work_fn);

/*
 * Every wildcard listener follows its netdev's addresses (see the top).
 * Every listener drops first, then every listener adds: an address moved
 * from one of our netdevs to another is free for its new owner's bind.
 * A bind that still fails (the address and port taken by another socket)
 * is retried, with backoff, until none fails.
 */
static void rsw_iw_addr_work_fn(struct work_struct *work)
{
	struct rsw_iw_listen *l;
	int failed = 0;

	mutex_lock(&rsw_iw_listen_lock);
	list_for_each_entry(l, &rsw_iw_wildcards, link)
		rsw_iw_sync_drop(l);
	list_for_each_entry(l, &rsw_iw_wildcards, link)
		failed += rsw_iw_sync_add(l, false);
	if (failed) {
		/* An address event meanwhile runs the work at once. */
		queue_delayed_work(system_unbound_wq, &rsw_iw_addr_work,
				   rsw_iw_retry);
		rsw_iw_retry = min(2 * rsw_iw_retry, RSW_IW_RETRY_MAX);
	} else {
		rsw_iw_retry = RSW_IW_RETRY_MIN;
	}
	mutex_unlock(&rsw_iw_listen_lock);
}

/*
 * Whether a listed wildcard listener is on @dev: only then is an address
 * event of @dev worth a sync (events of every netdev in every namespace
 * come here).  Any context; listeners are freed after an RCU grace period.
 */
static bool rsw_iw_listened_dev(const struct net_device *dev)
{
	struct rsw_iw_listen *l;
	bool found = false;

	rcu_read_lock();
	list_for_each_entry_rcu(l, &rsw_iw_wildcards, link) {
		if (l->ndev == dev) {
			found = true;
			break;
		}
	}
	rcu_read_unlock();
	return found;
}

static void rsw_iw_addr_event(unsigned long event,
			      const struct net_device *dev)
{
	if (event != NETDEV_UP && event != NETDEV_DOWN)
		return;
	/*
	 * The address (published by our caller) before the listeners: pairs
	 * with rsw_iw_create_listen()'s barrier, so that either its scan sees
	 * the address or we see its listener (a store then a load on each
	 * side, which even x86 may reorder).
	 */
	smp_mb();
	if (rsw_iw_listened_dev(dev))
		mod_delayed_work(system_unbound_wq, &rsw_iw_addr_work, 0);
}

/* An IPv4 address came or went: process context, RTNL held. */
static int rsw_iw_inetaddr_event(struct notifier_block *nb,
				 unsigned long event, void *ptr)
{
	const struct in_ifaddr *ifa = ptr;

	rsw_iw_addr_event(event, ifa->ifa_dev->dev);
	return NOTIFY_DONE;
}

/* An IPv6 address came or went: atomic context. */
static int rsw_iw_inet6addr_event(struct notifier_block *nb,
				  unsigned long event, void *ptr)
{
	const struct inet6_ifaddr *ifp = ptr;

	rsw_iw_addr_event(event, ifp->idev->dev);
	return NOTIFY_DONE;
}

static struct notifier_block rsw_iw_inetaddr_nb = {
	.notifier_call = rsw_iw_inetaddr_event,
};

static struct notifier_block rsw_iw_inet6addr_nb = {
	.notifier_call = rsw_iw_inet6addr_event,
};

static void rsw_iw_listen_free(struct rsw_iw_listen *l)
{
	struct rsw_iw_lcep *lc, *tmp;

	list_for_each_entry_safe(lc, tmp, &l->ceps, link)
		rsw_iw_listen_drop(l, lc);
	kfree_rcu(l, rcu);
}

/* A listener of @cm_id with the device's settings of now, no cep yet. */
static struct rsw_iw_listen *rsw_iw_listen_alloc(struct iw_cm_id *cm_id,
						 int backlog)
{
	struct rsw_device *rsw = to_rsw_dev(cm_id->device);
	struct rsw_iw_listen *l = kzalloc(sizeof(*l), GFP_KERNEL);
	struct rsw_settings set;

	if (!l)
		return NULL;
	l->cm_id = cm_id;
	l->rsw = rsw;
	l->ndev = rsw->netdev;
	l->backlog = backlog;
	memcpy(&l->addr, &cm_id->m_local_addr, sizeof(l->addr));
	l->family = l->addr.sa.sa_family;
	l->wildcard = rsw_iw_sa_any(&l->addr);
	l->dual = l->family == AF_INET6 && !cm_id->afonly;
	l->port = rsw_iw_sa_port(&l->addr);
	INIT_LIST_HEAD(&l->ceps);
	INIT_LIST_HEAD(&l->link);
	rsw_settings_get(rsw, &set);
	rsw_iw_params(&l->lp, &set, NULL);
	return l;
}

static int rsw_iw_create_listen(struct iw_cm_id *cm_id, int backlog)
{
	struct rsw_iw_listen *l = rsw_iw_listen_alloc(cm_id, backlog);
	int ret;

	if (!l)
		return -ENOMEM;
	if (l->wildcard) {
		/* Listed first: an address coming meanwhile is not missed. */
		mutex_lock(&rsw_iw_listen_lock);
		list_add_tail_rcu(&l->link, &rsw_iw_wildcards);
		smp_mb();	/* listed, then scan: see rsw_iw_addr_event() */
		ret = rsw_iw_sync_add(l, true);
		if (ret < 0)
			list_del_rcu(&l->link);
		/* Some other-family bind failed: retried by the work. */
		if (ret > 0) {
			queue_delayed_work(system_unbound_wq,
					   &rsw_iw_addr_work, RSW_IW_RETRY_MIN);
			ret = 0;
		}
		mutex_unlock(&rsw_iw_listen_lock);
	} else {
		ret = rsw_iw_listen_add(l, &l->addr);
	}
	if (ret) {
		rsw_iw_listen_free(l);
		return ret;
	}
	cm_id->add_ref(cm_id);
	cm_id->provider_data = l;
	return 0;
}

static int rsw_iw_destroy_listen(struct iw_cm_id *cm_id)
{
	struct rsw_iw_listen *l = cm_id->provider_data;

	if (!l)
		return 0;
	cm_id->provider_data = NULL;
	if (l->wildcard) {
		/* Unlisted, no sync touches it again: its ceps are ours. */
		mutex_lock(&rsw_iw_listen_lock);
		list_del_rcu(&l->link);
		mutex_unlock(&rsw_iw_listen_lock);
	}
	rsw_iw_listen_free(l);
	cm_id->rem_ref(cm_id);
	return 0;
}

/*
 * iw_cm's QP reference.  iw_cm_connect() and iw_cm_accept() (6.1 and 6.12
 * alike) call "qp = iw_get_qp(dev, qpn); iw_add_ref(qp);" under their
 * cm_id lock and iw_add_ref nowhere else, then iw_rem_ref once when done.
 * A destroy_qp between the two calls must not free the QP, so the lookup
 * reference of iw_get_qp is kept and counted in qp->iw_lent, and
 * iw_add_ref claims a lent one as iw_cm's instead of taking another.  An
 * iw_add_ref with none lent (from a caller holding the QP otherwise) takes
 * a new one; either way every reference is dropped by iw_rem_ref.
 */
static struct ib_qp *rsw_iw_get_qp(struct ib_device *ibdev, int qpn)
{
	struct rsw_qp *qp = rsw_qp_lookup(to_rsw_dev(ibdev), qpn);

	if (!qp)
		return NULL;
	atomic_inc(&qp->iw_lent);
	return &qp->base;
}

static void rsw_iw_add_ref(struct ib_qp *ibqp)
{
	struct rsw_qp *qp = to_rsw_qp(ibqp);

	if (!atomic_add_unless(&qp->iw_lent, -1, 0))
		rsw_qp_get(qp);
}

static void rsw_iw_rem_ref(struct ib_qp *ibqp)
{
	rsw_qp_put(to_rsw_qp(ibqp));
}

const struct ib_device_ops rsw_iw_ops = {
	.iw_accept = rsw_iw_accept,
	.iw_add_ref = rsw_iw_add_ref,
	.iw_connect = rsw_iw_connect,
	.iw_create_listen = rsw_iw_create_listen,
	.iw_destroy_listen = rsw_iw_destroy_listen,
	.iw_get_qp = rsw_iw_get_qp,
	.iw_reject = rsw_iw_reject,
	.iw_rem_ref = rsw_iw_rem_ref,
};

int rsw_iw_init(void)
{
	int ret;

	rsw_iw_wq = alloc_workqueue("rdmap_sw_iw", WQ_MEM_RECLAIM, 0);
	if (!rsw_iw_wq)
		return -ENOMEM;
	ret = register_inetaddr_notifier(&rsw_iw_inetaddr_nb);
	if (ret)
		goto err_destroy_wq;
	ret = register_inet6addr_notifier(&rsw_iw_inet6addr_nb);
	if (ret)
		goto err_inetaddr;
	return 0;

err_inetaddr:
	unregister_inetaddr_notifier(&rsw_iw_inetaddr_nb);
err_destroy_wq:
	destroy_workqueue(rsw_iw_wq);
	return ret;
}

/* After every device went (main.c): no listener is left to sync. */
void rsw_iw_exit(void)
{
	unregister_inet6addr_notifier(&rsw_iw_inet6addr_nb);
	unregister_inetaddr_notifier(&rsw_iw_inetaddr_nb);
	cancel_delayed_work_sync(&rsw_iw_addr_work);
	WARN_ON(!list_empty(&rsw_iw_wildcards));
	destroy_workqueue(rsw_iw_wq);
}
