// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * verbs-smoke: the smallest libibverbs application that proves the rdmap_sw
 * provider serves a device.
 *
 *   verbs-smoke DEVICE [active|down]
 *
 * Finds DEVICE, checks that it is an iWARP RNIC, opens it, queries device
 * and port 1 (whose state must be the one given, default active), allocates
 * and frees a PD, and checks that creating a CQ fails cleanly with errno
 * set (the provider does not implement CQs yet).  Prints one line per
 * check; exits 0 only if every check passed.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

static int checks, failures;

static bool check(bool ok, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static bool check(bool ok, const char *fmt, ...)
{
	va_list ap;

	checks++;
	if (!ok)
		failures++;
	printf("%s %d - ", ok ? "ok" : "not ok", checks);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	return ok;
}

static struct ibv_device *find_device(struct ibv_device **list,
				      const char *name)
{
	for (; *list; list++)
		if (!strcmp(ibv_get_device_name(*list), name))
			return *list;
	return NULL;
}

static void check_device_type(struct ibv_device *dev)
{
	check(dev->transport_type == IBV_TRANSPORT_IWARP,
	      "transport is iWARP (%d)", dev->transport_type);
	check(dev->node_type == IBV_NODE_RNIC,
	      "node type is RNIC (%s)", ibv_node_type_str(dev->node_type));
}

static void check_query_device(struct ibv_context *ctx)
{
	struct ibv_device_attr_ex attr;
	int ret;

	ret = ibv_query_device_ex(ctx, NULL, &attr);
	if (!check(!ret, "ibv_query_device_ex (%s)", strerror(ret)))
		return;
	check(attr.orig_attr.phys_port_cnt == 1, "one port (%u)",
	      attr.orig_attr.phys_port_cnt);
	printf("# fw_ver '%s' max_qp %d max_cq %d max_mr %d max_pd %d\n",
	       attr.orig_attr.fw_ver, attr.orig_attr.max_qp,
	       attr.orig_attr.max_cq, attr.orig_attr.max_mr,
	       attr.orig_attr.max_pd);
}

static int mtu_bytes(enum ibv_mtu mtu)
{
	return mtu ? 128 << mtu : 0;
}

static void check_query_port(struct ibv_context *ctx,
			     enum ibv_port_state want)
{
	struct ibv_port_attr attr;
	int ret;

	ret = ibv_query_port(ctx, 1, &attr);
	if (!check(!ret, "ibv_query_port 1 (%s)", strerror(ret)))
		return;
	check(attr.state == want, "port state %s (want %s)",
	      ibv_port_state_str(attr.state), ibv_port_state_str(want));
	check(attr.link_layer == IBV_LINK_LAYER_ETHERNET,
	      "link layer is Ethernet (%u)", attr.link_layer);
	printf("# active_mtu %d max_mtu %d gid_tbl_len %d\n",
	       mtu_bytes(attr.active_mtu), mtu_bytes(attr.max_mtu),
	       attr.gid_tbl_len);
}

static void check_pd(struct ibv_context *ctx)
{
	struct ibv_pd *pd;
	int ret;

	pd = ibv_alloc_pd(ctx);
	if (!check(pd != NULL, "ibv_alloc_pd (%s)", pd ? "ok" : strerror(errno)))
		return;
	ret = ibv_dealloc_pd(pd);
	check(!ret, "ibv_dealloc_pd (%s)", strerror(ret));
}

static void check_no_cq(struct ibv_context *ctx)
{
	struct ibv_cq *cq;
	int err;

	errno = 0;
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	err = errno;
	check(cq == NULL && err != 0,
	      "ibv_create_cq not supported yet, fails with errno set (%s)",
	      cq ? "it succeeded" : strerror(err));
	if (cq)
		ibv_destroy_cq(cq);
}

static int parse_state(const char *arg, enum ibv_port_state *state)
{
	if (!strcmp(arg, "active"))
		*state = IBV_PORT_ACTIVE;
	else if (!strcmp(arg, "down"))
		*state = IBV_PORT_DOWN;
	else
		return -1;
	return 0;
}

static void run(struct ibv_device *dev, enum ibv_port_state want)
{
	struct ibv_context *ctx;
	int ret;

	check_device_type(dev);
	ctx = ibv_open_device(dev);
	if (!check(ctx != NULL, "ibv_open_device (%s)",
		   ctx ? "ok" : strerror(errno)))
		return;
	check_query_device(ctx);
	check_query_port(ctx, want);
	check_pd(ctx);
	check_no_cq(ctx);
	ret = ibv_close_device(ctx);
	check(!ret, "ibv_close_device (%s)", strerror(ret));
}

int main(int argc, char **argv)
{
	enum ibv_port_state want = IBV_PORT_ACTIVE;
	struct ibv_device **list, *dev;

	if (argc < 2 || argc > 3 ||
	    (argc == 3 && parse_state(argv[2], &want))) {
		fprintf(stderr, "usage: %s DEVICE [active|down]\n", argv[0]);
		return 2;
	}

	list = ibv_get_device_list(NULL);
	if (!check(list != NULL, "ibv_get_device_list (%s)",
		   list ? "ok" : strerror(errno)))
		return 1;
	dev = find_device(list, argv[1]);
	if (check(dev != NULL, "device %s is listed", argv[1]))
		run(dev, want);
	ibv_free_device_list(list);

	printf("# %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
