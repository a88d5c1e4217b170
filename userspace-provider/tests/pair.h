/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * A connected QP pair inside one process (rdma_cm on the local address of
 * an rdmap_sw device): what the tests that play both ends share.  The
 * includer includes wait.h first (TIMEOUT_S, now_s()).
 */
#ifndef RSW_TESTS_PAIR_H
#define RSW_TESTS_PAIR_H

#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <time.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

struct conn {
	struct rdma_cm_id *cid;		/* initiator */
	struct rdma_cm_id *sid;		/* target */
	struct ibv_cq *ccq, *scq;
};

/* Both ends gone: disconnect, destroy, forget the events. */
static inline void teardown(struct conn *c)
{
	rdma_disconnect(c->cid);
	rdma_disconnect(c->sid);
	rdma_destroy_qp(c->cid);
	rdma_destroy_qp(c->sid);
	rdma_destroy_id(c->cid);
	rdma_destroy_id(c->sid);
	ibv_destroy_cq(c->ccq);
	ibv_destroy_cq(c->scq);
}

static inline int qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;

	if (ibv_query_qp(qp, &attr, IBV_QP_STATE, &init))
		return -1;
	return attr.qp_state;
}

static inline bool all(const unsigned char *p, size_t len, unsigned char v)
{
	while (len--)
		if (*p++ != v)
			return false;
	return true;
}

/*
 * [@p, @p + @len) holds @v within TIMEOUT_S.  A Write completes at the
 * writer once it is sent: its data may land at the target a little later.
 */
static inline bool arrived(const unsigned char *p, size_t len,
			   unsigned char v)
{
	struct timespec pause = { 0, 1000000 };
	double end = now_s() + TIMEOUT_S;

	for (;;) {
		__sync_synchronize();
		if (all(p, len, v))
			return true;
		if (now_s() >= end)
			return false;
		nanosleep(&pause, NULL);
	}
}

/*
 * Async events of @type on @ctx for both @a and @b, in any order (others
 * are acked and printed).  True once both came.
 */
static inline bool wait_qp_events(struct ibv_context *ctx, struct ibv_qp *a,
				  struct ibv_qp *b, enum ibv_event_type type)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	double end = now_s() + TIMEOUT_S;
	bool seen_a = false, seen_b = false;
	struct ibv_async_event ev;

	while (!(seen_a && seen_b) && now_s() < end) {
		if (poll(&pfd, 1, 100) <= 0)
			continue;
		if (ibv_get_async_event(ctx, &ev))
			return false;
		if (ev.event_type == type && ev.element.qp == a)
			seen_a = true;
		else if (ev.event_type == type && ev.element.qp == b)
			seen_b = true;
		else
			printf("# async event %s (waiting for %s)\n",
			       ibv_event_type_str(ev.event_type),
			       ibv_event_type_str(type));
		ibv_ack_async_event(&ev);
	}
	return seen_a && seen_b;
}

#endif /* RSW_TESTS_PAIR_H */
