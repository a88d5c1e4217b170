// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * memcg-alloc: make the kernel allocate big user-sized objects, to be run
 * inside a memory cgroup with a small memory.max (issue 10, defect 7).
 *
 *   memcg-alloc DEVICE cq ENTRIES      one CQ of ENTRIES entries
 *   memcg-alloc DEVICE qp WR COUNT     up to COUNT QPs of WR send and WR
 *                                      receive entries each
 *   memcg-alloc DEVICE resize ENTRIES  a CQ of 16 entries resized to
 *                                      ENTRIES; if that fails, the CQ must
 *                                      be as it was ("kept": same size,
 *                                      empty, and still resizable to 64)
 *
 * Prints one line per object: "created ..." or "failed ...: <errno>", and
 * a last line "result: all created" or "result: ENOMEM after N".  Exit
 * status: 0 all created, 3 an ENOMEM stopped it, 1 anything else.  The
 * objects are kept until the end, so they add up.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

static struct ibv_context *open_device(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	return ctx;
}

static int verdict(int err, int made)
{
	if (!err) {
		printf("result: all created\n");
		return 0;
	}
	printf("result: %s after %d\n", err == ENOMEM ? "ENOMEM" :
	       strerror(err), made);
	return err == ENOMEM ? 3 : 1;
}

static int make_cq(struct ibv_context *ctx, int entries)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, entries, NULL, NULL, 0);
	int err = cq ? 0 : errno;

	if (cq)
		printf("created CQ of %d entries\n", cq->cqe);
	else
		printf("failed CQ of %d entries: %s\n", entries, strerror(err));
	return verdict(err, cq ? 1 : 0);
}

static int make_qps(struct ibv_context *ctx, int wr, int count)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_qp_init_attr attr = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = wr, .max_recv_wr = wr,
			 .max_send_sge = 16, .max_recv_sge = 16 },
	};
	int i, err = 0;

	if (!pd || !cq) {
		perror("ibv_alloc_pd / ibv_create_cq");
		return 1;
	}
	attr.send_cq = attr.recv_cq = cq;
	for (i = 0; i < count; i++) {
		struct ibv_qp *qp = ibv_create_qp(pd, &attr);

		if (!qp) {
			err = errno;
			printf("failed QP %d of %d entries: %s\n", i, wr,
			       strerror(err));
			break;
		}
		printf("created QP %u (%d)\n", qp->qp_num, i);
	}
	return verdict(err, i);
}

/* A failed resize leaves the CQ as it was: same size, empty, usable. */
static bool cq_kept(struct ibv_cq *cq, int cqe)
{
	struct ibv_wc wc;
	int ret;

	if (cq->cqe != cqe || ibv_poll_cq(cq, 1, &wc) != 0)
		return false;
	ret = ibv_resize_cq(cq, 64);
	return !ret && cq->cqe >= 64 && ibv_poll_cq(cq, 1, &wc) == 0;
}

static int resize_cq(struct ibv_context *ctx, int entries)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	int cqe, err;

	if (!cq) {
		perror("ibv_create_cq");
		return 1;
	}
	cqe = cq->cqe;
	err = ibv_resize_cq(cq, entries);
	if (!err) {
		printf("resized CQ to %d entries\n", cq->cqe);
		return verdict(0, 1);
	}
	printf("failed resize to %d entries: %s\n", entries, strerror(err));
	printf("CQ of %d entries %s\n", cqe, cq_kept(cq, cqe) ? "kept" :
	       "NOT kept");
	return verdict(err, 0);
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx;

	if (argc < 4 || (strcmp(argv[2], "cq") && strcmp(argv[2], "qp") &&
			 strcmp(argv[2], "resize")) ||
	    (!strcmp(argv[2], "qp") && argc != 5)) {
		fprintf(stderr,
			"usage: %s DEVICE cq ENTRIES | qp WR COUNT | resize ENTRIES\n",
			argv[0]);
		return 2;
	}
	ctx = open_device(argv[1]);
	if (!ctx) {
		fprintf(stderr, "%s: cannot open %s\n", argv[0], argv[1]);
		return 1;
	}
	if (!strcmp(argv[2], "cq"))
		return make_cq(ctx, atoi(argv[3]));
	if (!strcmp(argv[2], "resize"))
		return resize_cq(ctx, atoi(argv[3]));
	return make_qps(ctx, atoi(argv[3]), atoi(argv[4]));
}
