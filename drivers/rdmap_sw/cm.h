/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmap_sw: the connection engine beneath the iw_cm provider.  A connection
 * endpoint (CEP) is a kernel TCP socket plus the MPA exchange of mpa.c;
 * cm.c runs it from a module workqueue and reports to its owner through
 * struct rsw_cm_ops.  The functions are listed in internal.h (cm.c group);
 * lifetime, locks and the state machine are described at the top of cm.c.
 *
 * How the iw_cm ops become thin wrappers (the next step wires them; no
 * iw_* op is registered yet):
 *   iw_create_listen(id, backlog)  rsw_cm_listen(), id->provider_data = cep
 *   iw_destroy_listen(id)          rsw_cm_destroy(listener)
 *   iw_connect(id, param)          rsw_cm_connect(); connect_reply() becomes
 *                                  IW_CM_EVENT_CONNECT_REPLY (status, PD,
 *                                  ird/ord); on success the QP takes the
 *                                  socket with rsw_cm_take_socket() and
 *                                  says rsw_cm_socket_placed() once its
 *                                  stream lists it (or it is released)
 *   connect_request()              IW_CM_EVENT_CONNECT_REQUEST with
 *                                  provider_data = the new cep
 *   iw_accept(id, param)           rsw_cm_accept(cep, ...), QP takes the
 *                                  socket; established() becomes
 *                                  IW_CM_EVENT_ESTABLISHED
 *   iw_reject(id, pd, len)         rsw_cm_reject(cep, pd, len)
 *   closed()                       IW_CM_EVENT_CLOSE (before the socket is
 *                                  taken; afterwards the QP reports it)
 *   iw_get_qp(dev, qpn)            rsw_qp_lookup(); the reference is lent
 *                                  to the iw_add_ref that follows (iw.c)
 *   iw_add_ref / iw_rem_ref(qp)    claim the lent reference (or
 *                                  rsw_qp_get()) / rsw_qp_put()
 * Every cep handed out (by listen, connect or connect_request) is released
 * by its owner with rsw_cm_destroy().
 */
#ifndef RDMAP_SW_CM_H
#define RDMAP_SW_CM_H

#include <linux/socket.h>
#include <linux/types.h>

#include "mpa.h"

struct net;
struct socket;
struct rsw_cep;

/* A cep's states (the machine is described at the top of cm.c). */
enum rsw_cep_state {
	RSW_CEP_LISTENING,
	RSW_CEP_CONNECTING,
	RSW_CEP_AWAIT_REPLY,
	RSW_CEP_AWAIT_REQUEST,
	RSW_CEP_REQ_RCVD,
	RSW_CEP_CONNECTED,
	RSW_CEP_CLOSED,
	RSW_CEP_NUM,
};

/* What an event carries.  @pd points into the cep: valid during the call. */
struct rsw_cm_event {
	int			status;	/* 0 or -errno */
	enum rsw_mpa_reason	reason;	/* MPA reason of a failure, or OK */
	const u8		*pd;	/* peer's ULP private data */
	u8			pd_len;
	/* The peer's IRD/ORD (RFC 6581); RSW_MAX_RD_ATOM each if it sent none. */
	u16			ird;
	u16			ord;
};

/*
 * Callbacks (all required but closed; a listener's owner gets
 * connect_request, established and closed, a connector's connect_reply
 * and closed), all from the CM workqueue (process context, may sleep, no
 * spinlock held).  @ctx is the one given to rsw_cm_listen/_connect/_accept.
 * connect_request runs with the listener's mutex held: it must not destroy
 * that listener, but may accept or reject @cep.  No callback may destroy
 * the cep it reports about (rsw_cm_destroy() waits for the callback).
 */
struct rsw_cm_ops {
	/* Responder: a valid MPA Request; @cep now belongs to the callee. */
	void (*connect_request)(void *listen_ctx, struct rsw_cep *cep,
				const struct rsw_cm_event *ev);
	/* Initiator: the outcome (status 0: connected). */
	void (*connect_reply)(void *ctx, struct rsw_cep *cep,
			      const struct rsw_cm_event *ev);
	/* Responder: the accepted connection is up. */
	void (*established)(void *ctx, struct rsw_cep *cep);
	/* A connected cep lost its stream before its socket was taken. */
	void (*closed)(void *ctx, struct rsw_cep *cep, int status);
};

/*
 * Where and how to listen or connect.  @lp is copied (with its private
 * data, the connect Request's; a listener ignores it).  @timeout_ms bounds
 * the TCP connect plus the MPA exchange; 0 means the mpa_timeout_ms module
 * parameter.  Sockets are created in @net, which must outlive the cep.
 */
struct rsw_cm_args {
	struct net			*net;
	const struct sockaddr		*local;		/* listen; connect: optional */
	const struct sockaddr		*remote;	/* connect */
	int				backlog;
	/*
	 * Listen: bind @local even while it is not usable yet (IP_FREEBIND):
	 * a tentative IPv6 address, which no event reports once DAD is done.
	 */
	bool				freebind;
	const struct rsw_mpa_params	*lp;
	unsigned int			timeout_ms;
	const struct rsw_cm_ops		*ops;
	void				*ctx;
	/* Counters (stats.h) the cep takes a reference on; NULL: none. */
	struct rsw_stats		*stats;
};

/* Per-listener counters of refused or abandoned incoming connections. */
struct rsw_cm_listen_stats {
	atomic_t	accepted;		/* TCP connections taken */
	atomic_t	timeouts;		/* no valid Request in time */
	/* by MPA reason; [RSW_MPA_OK]: socket errors */
	atomic_t	fail[RSW_MPA_E_NUM];
};

#endif /* RDMAP_SW_CM_H */
