/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * What the connected test programs share: a listener, and bounded waits
 * (each ends after TIMEOUT_S seconds, defined by the includer before this
 * header), so a lost completion or event fails a check instead of hanging.
 */
#ifndef RSW_TESTS_WAIT_H
#define RSW_TESTS_WAIT_H

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "tap.h"

/* A setup step failed: report it and stop. */
static void die(const char *what)
{
	check(false, "%s: %s", what, strerror(errno));
	printf("# %d checks, %d failed\n", checks, failures);
	exit(1);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * The next rdma_cm event of @type on @ch (for @id, or any id if NULL),
 * acked; its id in *@new_id.  Other events are printed and dropped.
 */
static bool wait_cm_on(struct rdma_event_channel *ch,
		       enum rdma_cm_event_type type, struct rdma_cm_id *id,
		       struct rdma_cm_id **new_id)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	double end = now_s() + TIMEOUT_S;
	struct rdma_cm_event *ev;

	while (now_s() < end) {
		if (poll(&pfd, 1, 100) <= 0)
			continue;
		if (rdma_get_cm_event(ch, &ev))
			return false;
		if (ev->event == type && (!id || ev->id == id)) {
			if (new_id)
				*new_id = ev->id;
			rdma_ack_cm_event(ev);
			return true;
		}
		printf("# cm event %s (status %d) while waiting for %s\n",
		       rdma_event_str(ev->event), ev->status,
		       rdma_event_str(type));
		rdma_ack_cm_event(ev);
	}
	return false;
}

/* @type on both ends of a connection, @a and @b, in either order. */
static bool wait_cm_pair(struct rdma_event_channel *ch,
			 enum rdma_cm_event_type type, struct rdma_cm_id *a,
			 struct rdma_cm_id *b)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	double end = now_s() + TIMEOUT_S;
	bool seen_a = false, seen_b = false;
	struct rdma_cm_event *ev;

	while (!(seen_a && seen_b) && now_s() < end) {
		if (poll(&pfd, 1, 100) <= 0)
			continue;
		if (rdma_get_cm_event(ch, &ev))
			return false;
		if (ev->event == type && ev->id == a)
			seen_a = true;
		else if (ev->event == type && ev->id == b)
			seen_b = true;
		else
			printf("# cm event %s (status %d) while waiting for %s\n",
			       rdma_event_str(ev->event), ev->status,
			       rdma_event_str(type));
		rdma_ack_cm_event(ev);
	}
	return seen_a && seen_b;
}

/*
 * A new event channel in *@ch and an rdma_cm id listening on @ip:@port
 * (*@addr), bound to a device (its verbs context is set), or die.
 */
static struct rdma_cm_id *listen_on(struct rdma_event_channel **ch,
				    const char *ip, int port, int backlog,
				    struct sockaddr_in *addr)
{
	struct rdma_cm_id *id;

	*ch = rdma_create_event_channel();
	if (!*ch)
		die("rdma_create_event_channel");
	if (rdma_create_id(*ch, &id, NULL, RDMA_PS_TCP))
		die("rdma_create_id");
	memset(addr, 0, sizeof(*addr));
	addr->sin_family = AF_INET;
	addr->sin_port = htons(port);
	if (inet_pton(AF_INET, ip, &addr->sin_addr) != 1) {
		errno = EINVAL;
		die("address");
	}
	if (rdma_bind_addr(id, (struct sockaddr *)addr))
		die("rdma_bind_addr");
	if (rdma_listen(id, backlog))
		die("rdma_listen");
	if (!id->verbs) {
		errno = ENODEV;
		die("listener bound to no device");
	}
	return id;
}

/*
 * Resolve @id's address (from @src, any if NULL) and route to @dst on the
 * device that @ctx opened (the id's events come on @ch), or die.
 */
static inline void resolve_on(struct rdma_event_channel *ch,
			      struct rdma_cm_id *id, struct sockaddr_in *src,
			      struct sockaddr_in *dst, struct ibv_context *ctx)
{
	if (rdma_resolve_addr(id, (struct sockaddr *)src,
			      (struct sockaddr *)dst, 5000) ||
	    !wait_cm_on(ch, RDMA_CM_EVENT_ADDR_RESOLVED, id, NULL))
		die("rdma_resolve_addr");
	if (rdma_resolve_route(id, 5000) ||
	    !wait_cm_on(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, id, NULL))
		die("rdma_resolve_route");
	if (id->verbs != ctx) {
		errno = EXDEV;
		die("client on another device context");
	}
}

/* One completion from @cq; on timeout *@wc says GENERAL_ERR, wr_id ~0. */
static bool poll_one(struct ibv_cq *cq, struct ibv_wc *wc)
{
	struct timespec pause = { 0, 200000 };
	double end = now_s() + TIMEOUT_S;
	int n;

	while (now_s() < end) {
		n = ibv_poll_cq(cq, 1, wc);
		if (n < 0)
			return false;
		if (n == 1)
			return true;
		nanosleep(&pause, NULL);
	}
	wc->status = IBV_WC_GENERAL_ERR;
	wc->wr_id = ~0ULL;
	return false;
}

/* No completion on @cq for @ms milliseconds. */
static bool cq_quiet(struct ibv_cq *cq, int ms)
{
	struct timespec pause = { 0, 1000000 };
	struct ibv_wc wc;
	int i;

	for (i = 0; i < ms; i++) {
		if (ibv_poll_cq(cq, 1, &wc) != 0) {
			printf("# unexpected completion wr_id %llu status %s\n",
			       (unsigned long long)wc.wr_id,
			       ibv_wc_status_str(wc.status));
			return false;
		}
		nanosleep(&pause, NULL);
	}
	return true;
}

#endif /* RSW_TESTS_WAIT_H */
