// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * abi-probe: crafted alloc_ucontext requests against rdmap_sw.ko, through
 * the write() command path of a uverbs character device (no libibverbs,
 * no provider), so every corner of the negotiation in rdmap_sw-abi.h can
 * be asked for, well-formed or not.  scripts/tests/abi.sh asserts the
 * lines it prints.
 *
 *   abi-probe /dev/infiniband/uverbsN CASE...   (or "all")
 *
 * One line per case: "CASE: ok version=V [min=A max=B] len=N", the
 * answer's fields (min and max when they were written) and how many bytes
 * of the driver's response were written (the buffer is prefilled with a
 * pattern), or "CASE: ERRNONAME".  Each case
 * opens the device anew: a uverbs file holds one context.  Failures go
 * through write(), whose failed GET_CONTEXT costs the kernel nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rdma/ib_user_verbs.h>
#include <rdma/rdmap_sw-abi.h>

#define PATTERN 0xa5

struct probe_case {
	const char *name;
	unsigned int req_len;	/* request data bytes (from req[]) */
	uint32_t req[4];
	unsigned int resp_len;	/* room for the driver's response */
	int unreadable;		/* request data on a PROT_NONE page */
};

#define V1 RDMAP_SW_URESP_ALLOC_CTX_V1_LEN
#define V2 RDMAP_SW_URESP_ALLOC_CTX_V2_LEN
static const struct probe_case cases[] = {
	{ .name = "none", .resp_len = V2 },
	{ .name = "none-short-resp", .resp_len = 4 },
	{ .name = "good", .req_len = 8, .req = { 1, 2 }, .resp_len = V2 },
	{ .name = "newer-provider", .req_len = 8, .req = { 2, 9 }, .resp_len = V2 },
	{ .name = "v1-only", .req_len = 8, .req = { 1, 1 }, .resp_len = V2 },
	{ .name = "short-req", .req_len = 4, .req = { 1 }, .resp_len = V2 },
	{ .name = "min0", .req_len = 8, .req = { 0, 2 }, .resp_len = V2 },
	{ .name = "min-gt-max", .req_len = 8, .req = { 2, 1 }, .resp_len = V2 },
	{ .name = "no-common", .req_len = 8, .req = { 3, 4 }, .resp_len = V2 },
	{ .name = "short-resp", .req_len = 8, .req = { 1, 2 }, .resp_len = V1 },
	{ .name = "unreadable", .req_len = 8, .resp_len = V2, .unreadable = 1 },
	{ .name = "trailing", .req_len = 16,
	  .req = { 1, 2, 0xdeadbeef, 0xffffffff }, .resp_len = V2 },
};

/* The command as write() takes it: header, core command, request data. */
struct probe_cmd {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_get_context cmd;
	uint32_t data[4];
};

struct probe_resp {
	struct ib_uverbs_get_context_resp core;
	struct rdmap_sw_uresp_alloc_ctx drv;
};

static const char *errname(int e)
{
	switch (e) {
	case EINVAL: return "EINVAL";
	case EPROTO: return "EPROTO";
	case EFAULT: return "EFAULT";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case EPROTONOSUPPORT: return "EPROTONOSUPPORT";
	case ENOMEM: return "ENOMEM";
	default: return strerror(e);
	}
}

/* Bytes of the driver response the kernel wrote (pattern left behind). */
static unsigned int written(const struct probe_resp *r, unsigned int room)
{
	const unsigned char *p = (const unsigned char *)&r->drv;
	unsigned int n = room;

	while (n >= 4 && p[n - 1] == PATTERN && p[n - 2] == PATTERN &&
	       p[n - 3] == PATTERN && p[n - 4] == PATTERN)
		n -= 4;
	return n;
}

/*
 * Place the command in @page (two pages, the second PROT_NONE when the
 * case asks for an unreadable request): at the end of the first page, so
 * that its request data starts on the second.
 */
static struct probe_cmd *place(unsigned char *page, long psz,
			       const struct probe_case *c)
{
	size_t head = offsetof(struct probe_cmd, data);

	if (!c->unreadable)
		return (struct probe_cmd *)page;
	return (struct probe_cmd *)(page + psz - head);
}

static int run(const char *dev, const struct probe_case *c,
	       unsigned char *page, long psz)
{
	struct probe_cmd *cmd = place(page, psz, c);
	size_t len = offsetof(struct probe_cmd, data) + c->req_len;
	struct probe_resp resp;
	unsigned int n;
	int fd, ret, err;

	memset(&resp, PATTERN, sizeof(resp));
	memset(cmd, 0, offsetof(struct probe_cmd, data));
	if (!c->unreadable)
		memcpy(cmd->data, c->req, c->req_len);
	cmd->hdr.command = IB_USER_VERBS_CMD_GET_CONTEXT;
	cmd->hdr.in_words = len / 4;
	cmd->hdr.out_words = (sizeof(resp.core) + c->resp_len) / 4;
	cmd->cmd.response = (uintptr_t)&resp;

	fd = open(dev, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		perror(dev);
		return -1;
	}
	ret = write(fd, cmd, len);
	err = errno;
	if (ret == (int)len) {
		n = written(&resp, c->resp_len);
		printf("%s: ok version=%u", c->name, resp.drv.abi_version);
		if (n >= RDMAP_SW_URESP_ALLOC_CTX_V2_LEN)
			printf(" min=%u max=%u", resp.drv.abi_min,
			       resp.drv.abi_max);
		printf(" len=%u\n", n);
		close(resp.core.async_fd);
	} else if (ret < 0) {
		printf("%s: %s\n", c->name, errname(err));
	} else {
		printf("%s: short write %d of %zu\n", c->name, ret, len);
	}
	fflush(stdout);
	close(fd);
	return 0;
}

static int run_named(const char *dev, const char *name, unsigned char *page,
		     long psz)
{
	unsigned int i, n = sizeof(cases) / sizeof(cases[0]);
	int all = !strcmp(name, "all"), found = 0;

	for (i = 0; i < n; i++) {
		if (!all && strcmp(name, cases[i].name))
			continue;
		found = 1;
		if (run(dev, &cases[i], page, psz))
			return 1;
	}
	if (!found)
		fprintf(stderr, "abi-probe: no case %s\n", name);
	return !found;
}

int main(int argc, char **argv)
{
	long psz = sysconf(_SC_PAGESIZE);
	unsigned char *page;
	int i, ret = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: %s /dev/infiniband/uverbsN CASE...|all\n",
			argv[0]);
		return 2;
	}
	page = mmap(NULL, 2 * psz, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED || mprotect(page + psz, psz, PROT_NONE)) {
		perror("mmap");
		return 1;
	}
	for (i = 2; i < argc && !ret; i++)
		ret = run_named(argv[1], argv[i], page, psz);
	return ret;
}
