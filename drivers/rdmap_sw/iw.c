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
 * addresses.  A connection (struct rsw_iw_ep) is one iw_cm_id, one cep
 * and the QP.
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

/* Most addresses of one netdev a wildcard listener binds. */
#define RSW_IW_MAX_LISTEN	32

struct rsw_iw_listen {
	struct iw_cm_id *cm_id;
	struct rsw_device *rsw;
	unsigned int n;
	struct rsw_cep *cep[RSW_IW_MAX_LISTEN];
};

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

/* Addresses of our netdev in @family with @port: how many, at most @max. */
static unsigned int rsw_iw_local_addrs(struct rsw_device *rsw, int family,
				       __be16 port,
				       struct sockaddr_storage *out,
				       unsigned int max)
{
	struct net_device *ndev = rsw->netdev;
	unsigned int n = 0;

	if (family == AF_INET) {
		struct in_device *in = in_dev_get(ndev);
		const struct in_ifaddr *ifa;

		if (!in)
			return 0;
		rcu_read_lock();
		in_dev_for_each_ifa_rcu(ifa, in) {
			struct sockaddr_in *sin = (struct sockaddr_in *)&out[n];

			if (n == max)
				break;
			*sin = (struct sockaddr_in) {
				.sin_family = AF_INET,
				.sin_port = port,
				.sin_addr.s_addr = ifa->ifa_local,
			};
			n++;
		}
		rcu_read_unlock();
		in_dev_put(in);
	} else if (IS_ENABLED(CONFIG_IPV6) && family == AF_INET6) {
		struct inet6_dev *in6 = in6_dev_get(ndev);
		const struct inet6_ifaddr *ifp;

		if (!in6)
			return 0;
		read_lock_bh(&in6->lock);
		list_for_each_entry(ifp, &in6->addr_list, if_list) {
			struct sockaddr_in6 *sin6 =
				(struct sockaddr_in6 *)&out[n];

			if (n == max)
				break;
			if (ifp->flags & (IFA_F_TENTATIVE | IFA_F_DADFAILED))
				continue;
			*sin6 = (struct sockaddr_in6) {
				.sin6_family = AF_INET6,
				.sin6_port = port,
				.sin6_addr = ifp->addr,
			};
			if (ipv6_addr_type(&ifp->addr) & IPV6_ADDR_LINKLOCAL)
				sin6->sin6_scope_id = ndev->ifindex;
			n++;
		}
		read_unlock_bh(&in6->lock);
		in6_dev_put(in6);
	}
	return n;
}

static bool rsw_iw_wildcard(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ((const struct sockaddr_in *)ss)->sin_addr.s_addr ==
		       htonl(INADDR_ANY);
	if (ss->ss_family == AF_INET6)
		return ipv6_addr_any(&((const struct sockaddr_in6 *)ss)->sin6_addr);
	return false;
}

/*
 * The addresses a wildcard listen of @cm_id binds, at most
 * RSW_IW_MAX_LISTEN: those of its family on our netdev and, for an IPv6
 * wildcard that is not IPv6-only (rdma_cm's afonly: net.ipv6.bindv6only
 * unless the ULP set it), the IPv4 ones too, as a dual-stack [::] socket
 * accepts them.  ib_srpt, for one, listens on [::]:port only.  The IPv4
 * ones take at most half the room and come last (*@extra of them: the
 * listen's own family first, which picks an ephemeral port), so that many
 * IPv6 addresses (one link-local and several global per prefix are
 * common) cannot crowd them out, nor they the IPv6 ones.
 */
static unsigned int rsw_iw_wildcard_addrs(struct rsw_device *rsw,
					  const struct iw_cm_id *cm_id,
					  __be16 port,
					  struct sockaddr_storage *addr,
					  unsigned int *extra)
{
	const unsigned int half = RSW_IW_MAX_LISTEN / 2;
	int family = cm_id->m_local_addr.ss_family;
	unsigned int n, v4 = 0;

	/* IPv4 into the upper half, then moved behind the IPv6 ones. */
	if (family == AF_INET6 && !cm_id->afonly)
		v4 = rsw_iw_local_addrs(rsw, AF_INET, port, addr + half, half);
	memmove(addr + RSW_IW_MAX_LISTEN - v4, addr + half,
		v4 * sizeof(*addr));
	n = rsw_iw_local_addrs(rsw, family, port, addr,
			       RSW_IW_MAX_LISTEN - v4);
	memmove(addr + n, addr + RSW_IW_MAX_LISTEN - v4, v4 * sizeof(*addr));
	*extra = v4;
	return n + v4;
}

static void rsw_iw_set_port(struct sockaddr_storage *ss, __be16 port)
{
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = port;
	else
		((struct sockaddr_in6 *)ss)->sin6_port = port;
}

static __be16 rsw_iw_port(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ((const struct sockaddr_in *)ss)->sin_port;
	return ((const struct sockaddr_in6 *)ss)->sin6_port;
}

static void rsw_iw_listen_free(struct rsw_iw_listen *l)
{
	while (l->n)
		rsw_cm_destroy(l->cep[--l->n]);
	kfree(l);
}

/*
 * One listening CEP of @l per address of @addr[0..@n), the last @extra
 * of them (a dual-stack listen's IPv4 ones) best effort; @port 0 (an
 * ephemeral one): the port the first got, on every address.
 */
static int rsw_iw_listen_on(struct rsw_iw_listen *l, struct rsw_cm_args *args,
			    struct sockaddr_storage *addr, unsigned int n,
			    unsigned int extra, __be16 port)
{
	unsigned int i, j;

	for (i = 0; i < n; i++) {
		struct rsw_cep *cep;

		args->local = (struct sockaddr *)&addr[i];
		cep = rsw_cm_listen(args);
		if (IS_ERR(cep) && i >= n - extra) {
			ibdev_dbg(&l->rsw->ibdev, "[::] listen: no IPv4 %pISp: %ld\n",
				  args->local, PTR_ERR(cep));
			continue;
		}
		if (IS_ERR(cep))
			return PTR_ERR(cep);
		l->cep[l->n++] = cep;
		if (!port && !rsw_cm_local_addr(cep, &addr[i])) {
			port = rsw_iw_port(&addr[i]);
			for (j = i + 1; j < n; j++)
				rsw_iw_set_port(&addr[j], port);
		}
	}
	return 0;
}

static int rsw_iw_create_listen(struct iw_cm_id *cm_id, int backlog)
{
	struct rsw_device *rsw = to_rsw_dev(cm_id->device);
	struct sockaddr_storage *addr;
	struct rsw_settings set;
	struct rsw_mpa_params lp;
	struct rsw_cm_args args = {
		.net = rsw_iw_net(rsw),
		.backlog = backlog,
		.lp = &lp,
		.ops = &rsw_iw_cm_ops,
		.stats = rsw->stats,
	};
	struct rsw_iw_listen *l;
	unsigned int n, extra = 0;
	__be16 port;
	int ret = 0;

	l = kzalloc(sizeof(*l), GFP_KERNEL);
	addr = kcalloc(RSW_IW_MAX_LISTEN, sizeof(*addr), GFP_KERNEL);
	if (!l || !addr) {
		ret = -ENOMEM;
		goto out;
	}
	l->cm_id = cm_id;
	l->rsw = rsw;
	args.ctx = l;
	rsw_settings_get(rsw, &set);
	rsw_iw_params(&lp, &set, NULL);
	port = rsw_iw_port(&cm_id->m_local_addr);
	if (rsw_iw_wildcard(&cm_id->m_local_addr)) {
		n = rsw_iw_wildcard_addrs(rsw, cm_id, port, addr, &extra);
	} else {
		addr[0] = cm_id->m_local_addr;
		n = 1;
	}
	ret = rsw_iw_listen_on(l, &args, addr, n, extra, port);
	if (ret)
		goto out;
	cm_id->add_ref(cm_id);
	cm_id->provider_data = l;
	l = NULL;
out:
	if (l)
		rsw_iw_listen_free(l);
	kfree(addr);
	return ret;
}

static int rsw_iw_destroy_listen(struct iw_cm_id *cm_id)
{
	struct rsw_iw_listen *l = cm_id->provider_data;

	if (!l)
		return 0;
	cm_id->provider_data = NULL;
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
	rsw_iw_wq = alloc_workqueue("rdmap_sw_iw", WQ_MEM_RECLAIM, 0);
	return rsw_iw_wq ? 0 : -ENOMEM;
}

void rsw_iw_exit(void)
{
	destroy_workqueue(rsw_iw_wq);
}
