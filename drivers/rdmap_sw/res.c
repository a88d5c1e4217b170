// SPDX-License-Identifier: GPL-2.0
/*
 * rdmap_sw: driver details for `rdma resource` (restrack fill callbacks):
 * `rdma -dd res show qp` and `rdma -dd res show cm_id` print them after
 * ib_core's own fields.  Read-only: nothing here changes a QP or stream.
 *
 * Lifetime and locks.  ib_core calls these in process context (a netlink
 * dump or get) holding a restrack reference on the object, and
 * ib_destroy_qp drains those references before it calls our destroy_qp
 * on the kernels we build for, so the QP outlives the callback.  The
 * stream does not rely on that: rsw_stream_snapshot() pins it (counts
 * itself among its posters) under qp->lock, and rsw_stream_free() unsets
 * qp->stream under that lock, then waits for the posters before it frees
 * the stream (stream.c: the contract at rsw_stream_free()).
 *  - QP fields (state, IRD/ORD): qp->lock, which every writer holds.
 *  - queue depths: each queue's lock (tail and head move under it).
 *  - the stream (stream.c, rsw_stream_snapshot*): the negotiated MPA
 *    parameters never change after attach; the stream's phase and RTR
 *    flags and TCP's sequence numbers are read once each (READ_ONCE), as
 *    /proc/net/tcp reads them, never with the socket locked: any user may
 *    dump QPs (RES_QP_GET needs no privilege), and a loop of dumps must
 *    not push everyone's traffic through the socket backlog.  The socket
 *    cannot be released meanwhile: the snapshot counts itself among the
 *    stream's posters, for which rsw_stream_end() waits before it
 *    releases the socket, and it looks only if the stream had not ended
 *    when it did so.
 *  - a cm_id has no pointer to our objects (rdma_cm keeps its iw_cm_id
 *    private); its connection is found among our device's streams in its
 *    namespace by the ends saved at attach, compared under the stream
 *    list's lock (which keeps a listed stream allocated) without pinning;
 *    only the match, hooked (its attach completed), is pinned as above
 *    before that lock is dropped.
 * Nothing shown comes from the peer but what MPA negotiated with it
 * (revision, CRC, Markers, IRD/ORD, RTR type), already validated.
 *
 * Who sees what.  Any user of any namespace that sees the device may
 * dump (in the default shared mode every namespace sees every device).
 * What MPA negotiated and the QP's own fields are the RDMA object's, as
 * ib_core's fields are, and shown to all.  The socket's state (stream
 * phase, RTR flags, TCP's queue) is shown only to a requester in the
 * socket's namespace, as /proc/net/tcp shows sockets: known for a dump
 * (the reply's owner, rsw_res_viewer()), not for a get of one QP (ib_core
 * passes us nothing of the request), which hence never shows it.  There
 * is no CAP_NET_ADMIN variant to move them to: the raw callbacks
 * (RES_*_GET_RAW, `rdma res show qp -r`) exist for QPs but not cm_ids and
 * carry one opaque hardware context, which rdma prints as bytes.
 *
 * Cost.  A cm_id's connection is searched for in the list of every
 * stream of the module under its one lock (BHs off): a dump of N cm_ids
 * with M connections takes N * M comparisons there while attaches and
 * ends of every device wait.  Fine for the tens to low thousands of
 * connections a software device carries; an index by the ends would be
 * the fix if that changes.
 */
#include <rdma/rdma_cm.h>
#include <rdma/restrack.h>

#include "internal.h"

static const char *rsw_res_onoff(bool on)
{
	return on ? "on" : "off";
}

static const char *rsw_res_rtr(const struct rsw_mpa_conn *conn)
{
	if (!conn->p2p)
		return "none";
	switch (conn->rtr) {
	case RSW_MPA_RTR_WRITE:
		return "write";
	case RSW_MPA_RTR_READ:
		return "read";
	case RSW_MPA_RTR_SEND:
		return "send";
	}
	return "?";
}

/*
 * The namespace of whoever asks: a dump's message belongs to the
 * requester's netlink socket (netlink_dump() sets the owner before it
 * calls nldev); a get's reply is not owned by anyone yet, so there it is
 * unknown (NULL) and the socket-level fields are left out.  The fill
 * callbacks get nothing else of the request on 6.1 and 6.12.
 */
static const struct net *rsw_res_viewer(const struct sk_buff *msg)
{
	return msg->sk ? sock_net(msg->sk) : NULL;
}

/*
 * What MPA negotiated: QP and cm_id alike.  Then, for a requester in the
 * socket's namespace only (snap->live), the socket's state: the stream's
 * phase, its RTR flags, TCP's queue.
 */
static int rsw_res_put_stream(struct sk_buff *msg,
			      const struct rsw_stream_snap *snap)
{
	const struct rsw_mpa_conn *c = &snap->conn;

	if ((snap->live &&
	     rdma_nl_put_driver_string(msg, "stream", snap->phase)) ||
	    rdma_nl_put_driver_string(msg, "role", snap->initiator ?
				      "initiator" : "responder") ||
	    rdma_nl_put_driver_u32(msg, "mpa-rev", c->rev) ||
	    rdma_nl_put_driver_string(msg, "crc", rsw_res_onoff(c->crc)) ||
	    rdma_nl_put_driver_string(msg, "markers-tx",
				      rsw_res_onoff(c->tx_markers)) ||
	    rdma_nl_put_driver_string(msg, "markers-rx",
				      rsw_res_onoff(c->rx_markers)) ||
	    rdma_nl_put_driver_string(msg, "rtr", rsw_res_rtr(c)))
		return -EMSGSIZE;
	if (!snap->live)
		return 0;
	if (rdma_nl_put_driver_string(msg, "rtr-pending",
				      snap->rtr_pending ? "yes" : "no") ||
	    rdma_nl_put_driver_u32(msg, "tcp-queued", snap->tcp_queued))
		return -EMSGSIZE;
	return 0;
}

/* Entries posted and not yet finished (the ring's [head, tail)). */
static u32 rsw_res_wq_posted(struct rsw_wq *wq)
{
	unsigned long flags;
	u32 n;

	spin_lock_irqsave(&wq->lock, flags);
	n = wq->tail - wq->head;
	spin_unlock_irqrestore(&wq->lock, flags);
	return n;
}

static int rsw_res_qp(struct sk_buff *msg, struct ib_qp *ibqp)
{
	struct rsw_qp *qp = to_rsw_qp(ibqp);
	struct rsw_stream_snap snap = {};
	enum rsw_qp_state state;
	unsigned long flags;
	u32 ird, ord;

	spin_lock_irqsave(&qp->lock, flags);
	state = qp->state;
	ird = qp->ird;
	ord = qp->ord;
	spin_unlock_irqrestore(&qp->lock, flags);

	if (rdma_nl_put_driver_string(msg, "rdmap-state",
				      rsw_qp_state_name(state)) ||
	    rdma_nl_put_driver_u32(msg, "ird", ird) ||
	    rdma_nl_put_driver_u32(msg, "ord", ord) ||
	    rdma_nl_put_driver_u32(msg, "sq-posted",
				   rsw_res_wq_posted(&qp->sq)) ||
	    rdma_nl_put_driver_u32(msg, "rq-posted",
				   rsw_res_wq_posted(&qp->rq)))
		return -EMSGSIZE;
	if (rsw_stream_snapshot(qp, rsw_res_viewer(msg), &snap))
		return rdma_nl_put_driver_string(msg, "stream", "none") ?
		       -EMSGSIZE : 0;
	return rsw_res_put_stream(msg, &snap);
}

/*
 * rsw_res_cm_id()'s "nothing to show": positive, so never a real error,
 * and rsw_res_nest() cancels the empty nest for it.
 */
#define RSW_RES_NONE 1

/*
 * A connected cm_id: the QP number and the stream of its connection.
 * Listeners and ids still connecting have none and show nothing more
 * (RSW_RES_NONE).
 */
static int rsw_res_cm_id(struct sk_buff *msg, struct rdma_cm_id *id)
{
	struct rsw_stream_snap snap = {};

	if (!id->device ||
	    rsw_stream_snapshot_addr(to_rsw_dev(id->device),
				     id->route.addr.dev_addr.net,
				     (struct sockaddr *)&id->route.addr.src_addr,
				     (struct sockaddr *)&id->route.addr.dst_addr,
				     rsw_res_viewer(msg), &snap))
		return RSW_RES_NONE;
	if (rdma_nl_put_driver_u32(msg, "qpn", snap.qpn) ||
	    rdma_nl_put_driver_u32(msg, "ird", snap.conn.ird) ||
	    rdma_nl_put_driver_u32(msg, "ord", snap.conn.ord))
		return -EMSGSIZE;
	return rsw_res_put_stream(msg, &snap);
}

/*
 * The driver's fields go in one RDMA_NLDEV_ATTR_DRIVER nest, which the
 * callback opens itself; a message too small for them loses the nest, and
 * so does an object with nothing to show (RSW_RES_NONE, not an error).
 */
static int rsw_res_nest(struct sk_buff *msg, int ret, struct nlattr *nest)
{
	if (ret) {
		nla_nest_cancel(msg, nest);
		return ret == RSW_RES_NONE ? 0 : ret;
	}
	nla_nest_end(msg, nest);
	return 0;
}

static int rsw_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp)
{
	struct nlattr *nest = nla_nest_start_noflag(msg, RDMA_NLDEV_ATTR_DRIVER);

	if (!nest)
		return -EMSGSIZE;
	return rsw_res_nest(msg, rsw_res_qp(msg, ibqp), nest);
}

static int rsw_fill_res_cm_id_entry(struct sk_buff *msg,
				    struct rdma_cm_id *id)
{
	struct nlattr *nest = nla_nest_start_noflag(msg, RDMA_NLDEV_ATTR_DRIVER);

	if (!nest)
		return -EMSGSIZE;
	return rsw_res_nest(msg, rsw_res_cm_id(msg, id), nest);
}

/* Merged into every device by main.c. */
const struct ib_device_ops rsw_res_ops = {
	.fill_res_qp_entry = rsw_fill_res_qp_entry,
	.fill_res_cm_id_entry = rsw_fill_res_cm_id_entry,
};
