// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * fuzz-peer: a hostile iWARP peer speaking raw TCP to an rdmap_sw device.
 *
 *   fuzz-peer [options] DEVICE IP PORT
 *     --seed S        run seed (default: from the clock; always printed)
 *     --first I       first case index (default 0)
 *     --cases N       number of cases (default 100)
 *     --save FILE     before each case's bytes go out, FILE gets the seed,
 *                     the case index and the bytes (hex), fsync'ed: what a
 *                     guest crash leaves behind is the crashing input
 *     --no-fsync      do not fsync --save: for a file system that writes
 *                     through to a host that outlives this kernel (9p
 *                     without a cache, as fuzz.sh's run directory)
 *     --fail-dir DIR  a failing case is also saved as DIR/fuzz-S-I.hex
 *     --batch N       cases per batch (default 500): kernel log and kmemleak
 *     --bug-re RE     kernel log lines that fail a batch (scripts' RSW_BUG_RE)
 *     --kmemleak      scan /sys/kernel/debug/kmemleak after each batch
 *     --count-every N compare the device's object counts (rdma res) with the
 *                     baseline every N cases (default 50; 0: at the end only)
 *     --jobs N        run each batch in N processes at once, each with its
 *                     own victim on PORT + 10 * worker (default 1); the
 *                     object counts are then compared between batches
 *     --keep-going    do not stop at the first failing case
 *     --replay FILE   run the cases listed in FILE ("SEED CASE ..." lines,
 *                     '#' comments) instead of --seed/--first/--cases, in
 *                     one process, as one batch
 *     -v              print every case
 *
 * One process plays the victim and the attacker.  The victim opens an
 * rdma_cm listener on IP:PORT (on DEVICE), with a PD, one CQ and four MRs
 * surrounded by guard bytes (outside the MRs):
 *   region  16 KiB, local write + remote write + remote read
 *   ro      4 KiB, remote read only (never changes)
 *   na      4 KiB, local write only (never changes)
 *   recv    receive slots of 2 KiB with guard gaps between them
 * a second listener on PORT + 2 made with mpa_crc off,
 * and a control connection (two QPs of its own on PORT + 1) that no case
 * touches.  Each case is generated from (seed, index) alone:
 *   1. TCP connect to the listener, MPA Request (revision 1 or 2, CRC asked
 *      or not, RFC 6581 IRD/ORD and peer-to-peer RTR types, private data),
 *      to a listener made with the device's mpa_crc on or off; the victim
 *      accepts (QP with posted receives) and the attacker checks the Reply
 *      and sends the ready-to-receive message it asked for;
 *   2. a valid sequence of RDMA Writes (split into several FPDUs), Sends
 *      (several segments, MSN/MO), Read Requests and a closing Send (the
 *      sentinel), with a model of what the victim must end up with;
 *   3. mutated: MPA fields; one field made invalid in a way the RFCs give
 *      a Terminate for (STag, TO, access, MSN, QN, length, opcode,
 *      versions, unsolicited Read Response, RFC 7306 opcodes...); fields
 *      the RFCs say to ignore (reserved bits, PAD, the CRC when none was
 *      negotiated, the Invalidate STag of plain Sends); a bad CRC; raw
 *      changes (bit flips, ULPDU_Length, duplicated, swapped, dropped or
 *      truncated FPDUs, garbage); timing (writes split at random points
 *      with delays, FIN or RST mid-stream, a zero receive window while Read
 *      Responses are owed, then an RST, a resume or the victim's own
 *      disconnect; or the victim deregistering the MR the owed Read
 *      Responses come from and freeing its pages).
 * Checks per case: valid cases complete exactly (every byte of the region,
 * receive lengths and contents, Read Response contents, QP still RTS, no
 * Terminate); a case the RFCs give a Terminate for ends with the QP in
 * ERROR and a Terminate (with a code the RFCs define) received; any case
 * ends with the victim disconnected within a bound after the attacker
 * leaves, guard bytes and the ro/na MRs intact, the control connection
 * still working, and every FPDU the victim sent well formed (CRC).  Every
 * --count-every cases the device's object counts must be back to the
 * baseline.  Every --batch cases: the kernel log has no line matching
 * --bug-re and kmemleak reports nothing.
 * A failing case prints "FAIL seed S case I: ..." and the command that
 * reruns it alone; the same seed always gives the same cases.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/klog.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <regex.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#define TIMEOUT_S 10.0
#include "wait.h"
#include "fuzz-wire.h"

/*
 * Bump when the same seed gives other cases.  2: the octets of gen 1, but a
 * chunked body is split only where it matters (body_piece()); cases
 * without chunks are the same.
 */
#define GEN_VERSION	2

#define REGION		16384
#define SMALL		4096		/* ro and na MRs */
#define GUARD		4096		/* guard bytes on each side */
#define GUARD_BYTE	0xe7
#define NRECV		6
#define SLOT		2048
#define SLOT_GAP	64
#define RECV_AREA	(NRECV * (SLOT + SLOT_GAP) + SLOT_GAP)
#define IRD		4
#define MAXOPS		8
#define MAXF		64		/* FPDUs of a case */
#define SENTINEL_LEN	16
#define ZW_LEN		65536		/* temporary MR of the dereg case */
#define MAX_DELAYS	64		/* timed pauses in one transmission */
#define PUMP_MS		50		/* longest sleep of one pump() round */
#define ZW_STILL_MS	50		/* a shut window: nothing new for this */
#define SPLIT_HEAD	48		/* octets of an FPDU sent in chunks */
#define SPLIT_TAIL	8

enum expect { EXP_OK, EXP_TERM, EXP_ERR, EXP_ANY };
static const char *const exp_name[] = { "ok", "terminate", "error", "any" };

enum ending {
	END_NORMAL, END_FIN, END_RST, END_ZW_VICTIM, END_ZW_RST,
	END_ZW_RESUME, END_ZW_DEREG,
};
static const char *const end_name[] = {
	"normal", "fin", "rst", "zero-window+victim-disconnect",
	"zero-window+rst", "zero-window+resume", "zero-window+dereg",
};

static struct {
	const char *dev, *ip, *save, *fail_dir, *bug_re, *replay;
	int port, verbose;
	uint64_t seed, first, cases;
	unsigned int batch, count_every, jobs;
	bool kmemleak, keep_going, no_fsync;
} o = { .cases = 100, .batch = 500, .count_every = 50, .jobs = 1 };

#define MAX_JOBS	16

/* The victim: everything that lives across cases. */
static struct {
	struct rdma_event_channel *ech;
	struct rdma_cm_id *listen, *listen_nocrc;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_comp_channel *cch;	/* wakes pump() for v.cq */
	uint8_t *region_area, *ro_area, *na_area, *recv_area;
	struct ibv_mr *region_mr, *ro_mr, *na_mr, *recv_mr;
	/* control connection */
	struct rdma_event_channel *cech;
	struct rdma_cm_id *clisten, *cc, *cs;
	struct ibv_cq *ccq;
	uint8_t *cbuf;
	struct ibv_mr *cmr;
	long base[5];		/* pd cq qp cm_id mr */
	char crc_param[128];
	regex_t bug_re;
	int bugs_seen;
} v;

#define REG(a)	((a) + GUARD)

/* Expected Read Response of one Read Request. */
struct rd_exp {
	uint32_t sink_stag;
	uint64_t sink_to;
	uint32_t len, got;
	uint8_t *data;		/* what the responses must carry */
	uint32_t src_off;	/* in the region */
	bool loose;		/* a later Write overlaps: content open */
	bool last;
};

/* One case: its plan, the model, and what was seen. */
struct kase {
	uint64_t idx;
	struct rng r;
	/* plan */
	struct mpa_frame req;
	bool crc_param;		/* victim's mpa_crc */
	const char *mpa_mut;	/* mutation of the Request, or NULL */
	bool reject;		/* the victim rejects the request */
	struct buf mpa;		/* Request as sent */
	struct buf body;	/* FPDU stream as sent, RTR included */
	size_t foff[MAXF], flen[MAXF];
	int nf;
	enum expect exp;
	char what[160];		/* mutations applied */
	enum ending end;
	unsigned int chunk, delay_us;
	size_t cut;
	/* model */
	uint8_t region[REGION];
	uint32_t nsend;
	uint32_t send_len[NRECV];
	uint8_t send_data[NRECV][SLOT];
	struct rd_exp rd[IRD + 1];
	int nrd;
	uint32_t msn_send, msn_rreq;
	/* run */
	struct rdma_cm_id *sid;
	bool cr, established, disconnected, cm_error, qp_err;
	int fd;
	uint16_t lport;		/* the attacker's TCP port */
	bool rx_eof, rx_hold, sent_all, closed;
	struct buf rx;
	size_t rx_at;		/* parsed up to here */
	bool reply_seen, reply_ok;
	struct mpa_frame rep;
	bool crc;		/* negotiated */
	bool term_rcvd;
	uint8_t term[3];
	int fpdus_rcvd;
	uint32_t recv_ok, recv_flush, recv_other;
	uint32_t recv_len[NRECV];
	bool recv_seen[NRECV];
	bool sentinel;
	/* zero-window dereg case */
	uint8_t *zw_buf;
	struct ibv_mr *zw_mr;
	/* verdict */
	double secs;		/* the case took */
	bool failed;
	char why[512];
};

struct fuzz_stats {
	uint64_t cases, failed, by_exp[4], by_end[7], terms, term_bad;
	uint64_t mpa_muts, stale_cr, established;
	double t_start;
	double t_phase[5];	/* connect, run, teardown, check, save */
	double t_exp[4], t_end[7];	/* whole cases, by kind */
};

static struct fuzz_stats st;

static const char *const phase_name[5] = { "connect", "run", "teardown",
					    "check", "save" };

/* Time since *@t into phase @p; *@t moves on. */
static void phase(int p, double *t)
{
	double now = now_s();

	st.t_phase[p] += now - *t;
	*t = now;
}

/* ------------------------------------------------------------ reporting */

static void kfail(struct kase *k, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void kfail(struct kase *k, const char *fmt, ...)
{
	size_t n = strlen(k->why);
	va_list ap;

	if (n)
		n += (size_t)snprintf(k->why + n, sizeof(k->why) - n, "; ");
	if (n >= sizeof(k->why))
		return;
	va_start(ap, fmt);
	vsnprintf(k->why + n, sizeof(k->why) - n, fmt, ap);
	va_end(ap);
	k->failed = true;
}

/* @b in hex, 32 octets a line, after a line "@name length". */
static void hex_out(FILE *f, const char *name, const struct buf *b)
{
	static const char digit[] = "0123456789abcdef";
	char line[65];
	size_t i, n = 0;

	fprintf(f, "%s %zu\n", name, b->len);
	for (i = 0; i < b->len; i++) {
		line[n++] = digit[b->p[i] >> 4];
		line[n++] = digit[b->p[i] & 15];
		if (n == 64 || i + 1 == b->len) {
			line[n] = 0;
			fprintf(f, "%s\n", line);
			n = 0;
		}
	}
}

static void case_dump(FILE *f, const struct kase *k)
{
	fprintf(f, "fuzz-peer gen %d seed %" PRIu64 " case %" PRIu64 "\n",
		GEN_VERSION, o.seed, k->idx);
	fprintf(f, "expect %s end %s chunk %u delay_us %u cut %zu "
		"mpa_crc_param %d\nwhat %s\n", exp_name[k->exp],
		end_name[k->end], k->chunk, k->delay_us, k->cut,
		k->crc_param, k->what[0] ? k->what : "valid");
	hex_out(f, "mpa_request", &k->mpa);
	hex_out(f, "body", &k->body);
}

/* Write the case to @path. */
static void case_save(const struct kase *k, const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return;
	case_dump(f, k);
	fclose(f);
}

/*
 * The case in --save, fsync'ed unless --no-fsync (it must survive a crash
 * of this kernel): the whole text in one write to a file kept open, so a
 * case costs one write and one fsync, not a create, many writes and a
 * close.
 */
static void case_keep(const struct kase *k)
{
	static int fd = -1;
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);

	if (!m)
		die("open_memstream");
	case_dump(m, k);
	fclose(m);
	if (fd < 0)
		fd = open(o.save, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			  0644);
	if (fd < 0 || pwrite(fd, text, len, 0) != (ssize_t)len ||
	    ftruncate(fd, (off_t)len) || (!o.no_fsync && fsync(fd)))
		die(o.save);
	free(text);
}

static void what_add(struct kase *k, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void what_add(struct kase *k, const char *fmt, ...)
{
	size_t n = strlen(k->what);
	va_list ap;

	if (n && n < sizeof(k->what) - 2)
		n += (size_t)snprintf(k->what + n, sizeof(k->what) - n, ",");
	if (n >= sizeof(k->what))
		return;
	va_start(ap, fmt);
	vsnprintf(k->what + n, sizeof(k->what) - n, fmt, ap);
	va_end(ap);
}

/* Lower the expectation: a weaker one never replaces a stronger claim. */
static void expect(struct kase *k, enum expect e)
{
	if (e == EXP_ANY || k->exp == EXP_OK ||
	    (k->exp == EXP_TERM && e == EXP_ERR))
		k->exp = e;
}

/* ------------------------------------------------------- victim set-up */

/* The device's mpa_crc setting, which listeners created afterwards take. */
static void set_crc_param(bool on)
{
	const char *val = on ? "on" : "off";
	int fd = open(v.crc_param, O_WRONLY);

	if (fd < 0)
		return;
	if (write(fd, val, strlen(val)) != (ssize_t)strlen(val))
		printf("# cannot set %s\n", v.crc_param);
	close(fd);
}

static void *area(size_t len)
{
	uint8_t *p = malloc(len + 2 * GUARD);

	if (!p)
		die("malloc");
	memset(p, GUARD_BYTE, len + 2 * GUARD);
	return p;
}

static struct ibv_mr *reg_mr(void *p, size_t len, int access)
{
	struct ibv_mr *mr = ibv_reg_mr(v.pd, p, len, access);

	if (!mr)
		die("ibv_reg_mr");
	return mr;
}

static void victim_mrs(void)
{
	size_t i;

	v.region_area = area(REGION);
	v.ro_area = area(SMALL);
	v.na_area = area(SMALL);
	v.recv_area = area(RECV_AREA);
	for (i = 0; i < SMALL; i++) {
		REG(v.ro_area)[i] = (uint8_t)(i * 13 + 1);
		REG(v.na_area)[i] = (uint8_t)(i * 17 + 5);
	}
	v.region_mr = reg_mr(REG(v.region_area), REGION,
			     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			     IBV_ACCESS_REMOTE_READ);
	v.ro_mr = reg_mr(REG(v.ro_area), SMALL, IBV_ACCESS_REMOTE_READ);
	v.na_mr = reg_mr(REG(v.na_area), SMALL, IBV_ACCESS_LOCAL_WRITE);
	v.recv_mr = reg_mr(REG(v.recv_area), RECV_AREA,
			   IBV_ACCESS_LOCAL_WRITE);
}

static uint8_t *slot(int i)
{
	return REG(v.recv_area) + SLOT_GAP + (size_t)i * (SLOT + SLOT_GAP);
}

static void control_connect(void)
{
	struct rdma_conn_param param = { .responder_resources = 1,
					 .initiator_depth = 1 };
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct sockaddr_in addr;

	v.clisten = listen_on(&v.cech, o.ip, o.port + 1, 4, &addr);
	v.ccq = ibv_create_cq(v.ctx, 32, NULL, NULL, 0);
	v.cbuf = calloc(1, 256);
	if (!v.ccq || !v.cbuf)
		die("control CQ");
	v.cmr = reg_mr(v.cbuf, 256, IBV_ACCESS_LOCAL_WRITE);
	qa.send_cq = qa.recv_cq = v.ccq;
	if (rdma_create_id(v.cech, &v.cc, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(v.cc, NULL, (struct sockaddr *)&addr, 5000) ||
	    !wait_cm_on(v.cech, RDMA_CM_EVENT_ADDR_RESOLVED, v.cc, NULL) ||
	    rdma_resolve_route(v.cc, 5000) ||
	    !wait_cm_on(v.cech, RDMA_CM_EVENT_ROUTE_RESOLVED, v.cc, NULL))
		die("control connection: resolve");
	if (rdma_create_qp(v.cc, v.pd, &qa) || rdma_connect(v.cc, &param))
		die("control connection: connect");
	if (!wait_cm_on(v.cech, RDMA_CM_EVENT_CONNECT_REQUEST, NULL, &v.cs) ||
	    rdma_create_qp(v.cs, v.pd, &qa) || rdma_accept(v.cs, &param) ||
	    !wait_cm_pair(v.cech, RDMA_CM_EVENT_ESTABLISHED, v.cs, v.cc))
		die("control connection: accept");
}

/* A 64-byte Send over the control connection, checked at both ends. */
static bool control_ping(uint64_t n)
{
	struct ibv_sge rs = { (uintptr_t)v.cbuf + 128, 128, v.cmr->lkey };
	struct ibv_sge ss = { (uintptr_t)v.cbuf, 64, v.cmr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = n, .sg_list = &rs, .num_sge = 1 };
	struct ibv_send_wr swr = { .wr_id = n, .sg_list = &ss, .num_sge = 1,
				   .opcode = IBV_WR_SEND,
				   .send_flags = IBV_SEND_SIGNALED };
	struct ibv_recv_wr *rbad;
	struct ibv_send_wr *sbad;
	struct ibv_wc wc;
	int i, ok = 0;

	memset(v.cbuf, (int)(n & 0xff), 64);
	memset(v.cbuf + 128, 0, 128);
	if (ibv_post_recv(v.cs->qp, &rwr, &rbad) ||
	    ibv_post_send(v.cc->qp, &swr, &sbad))
		return false;
	for (i = 0; i < 2; i++) {
		if (!poll_one(v.ccq, &wc))
			return false;
		ok += wc.status == IBV_WC_SUCCESS && wc.wr_id == n;
	}
	/* Nothing else completes on the control CQ. */
	return ok == 2 && v.cbuf[128] == (uint8_t)n &&
	       v.cbuf[191] == (uint8_t)n && cq_quiet(v.ccq, 1);
}

static void victim_setup(void)
{
	struct sockaddr_in addr;

	struct rdma_event_channel *ch;
	int lock;

	/*
	 * A listener takes the device's mpa_crc setting when it is created:
	 * one with CRC asked for (PORT), one without (PORT + 2).  The setting
	 * is the device's: the other --jobs workers wait (flock) while this
	 * one flips it.
	 */
	snprintf(v.crc_param, sizeof(v.crc_param),
		 "/sys/class/infiniband/%s/mpa_crc", o.dev);
	lock = open(v.crc_param, O_RDONLY);
	if (lock >= 0 && flock(lock, LOCK_EX))
		die("flock mpa_crc");
	set_crc_param(false);
	v.listen_nocrc = listen_on(&ch, o.ip, o.port + 2, 16, &addr);
	set_crc_param(true);
	v.listen = listen_on(&v.ech, o.ip, o.port, 16, &addr);
	if (lock >= 0)
		close(lock);
	if (rdma_migrate_id(v.listen_nocrc, v.ech))
		die("rdma_migrate_id");
	rdma_destroy_event_channel(ch);
	v.ctx = v.listen->verbs;
	if (strcmp(ibv_get_device_name(v.ctx->device), o.dev)) {
		errno = ENODEV;
		die("listener bound to another device");
	}
	v.pd = ibv_alloc_pd(v.ctx);
	v.cch = ibv_create_comp_channel(v.ctx);
	if (!v.cch)
		die("ibv_create_comp_channel");
	v.cq = ibv_create_cq(v.ctx, 256, NULL, v.cch, 0);
	if (!v.pd || !v.cq)
		die("PD/CQ");
	if (fcntl(v.cch->fd, F_SETFL, fcntl(v.cch->fd, F_GETFL) | O_NONBLOCK))
		die("O_NONBLOCK on the completion channel");
	victim_mrs();
	control_connect();
	if (fcntl(v.ech->fd, F_SETFL, fcntl(v.ech->fd, F_GETFL) | O_NONBLOCK))
		die("O_NONBLOCK on the event channel");
}

/* --------------------------------------------------- object counts */

/* pd cq qp cm_id mr of the device, from `rdma res show`; false if absent. */
static bool res_counts(long c[5])
{
	static const char *const key[5] = { " pd ", " cq ", " qp ", " cm_id ",
					     " mr " };
	char line[512], *p;
	bool found = false;
	FILE *f = popen("rdma res show 2>/dev/null", "r");
	int i;

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		p = strstr(line, o.dev);
		if (!p || p[strlen(o.dev)] != ':')
			continue;
		for (i = 0; i < 5; i++) {
			char *q = strstr(line, key[i]);

			c[i] = q ? strtol(q + strlen(key[i]), NULL, 10) : -1;
		}
		found = true;
	}
	pclose(f);
	return found;
}

/* Counts back to the baseline within 5 s; prints the difference if not. */
static bool counts_ok(char *why, size_t len)
{
	double end = now_s() + 5;
	long c[5];

	do {
		if (!res_counts(c))
			return true;	/* no rdma tool: nothing to compare */
		if (!memcmp(c, v.base, sizeof(c)))
			return true;
		usleep(50000);
	} while (now_s() < end);
	snprintf(why, len, "object counts pd %ld cq %ld qp %ld cm_id %ld mr "
		 "%ld, baseline %ld %ld %ld %ld %ld", c[0], c[1], c[2], c[3],
		 c[4], v.base[0], v.base[1], v.base[2], v.base[3], v.base[4]);
	return false;
}

/* ---------------------------------------------------- kernel log, leaks */

/* Number of kernel log lines matching --bug-re (printed if @show). */
static int bug_lines(bool show)
{
	int size = klogctl(10, NULL, 0), n, hits = 0;
	char *buf, *line, *save;

	if (!o.bug_re || size <= 0)
		return 0;
	buf = malloc((size_t)size + 1);
	if (!buf)
		return 0;
	n = klogctl(3, buf, size);
	if (n < 0)
		n = 0;
	buf[n] = 0;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (regexec(&v.bug_re, line, 0, NULL, 0))
			continue;
		hits++;
		if (show)
			printf("# kernel: %s\n", line);
	}
	free(buf);
	return hits;
}

/* kmemleak: scan, then anything listed is a leak (printed). */
static bool kmemleak_clean(void)
{
	const char *path = "/sys/kernel/debug/kmemleak";
	char line[256];
	bool clean = true;
	FILE *f;
	int fd = open(path, O_WRONLY);

	if (fd < 0)
		return true;
	if (write(fd, "scan", 4) != 4) {
		close(fd);
		return true;
	}
	close(fd);
	f = fopen(path, "r");
	if (!f)
		return true;
	while (fgets(line, sizeof(line), f)) {
		clean = false;
		printf("# kmemleak: %s", line);
	}
	fclose(f);
	return clean;
}

/* ------------------------------------------------------- case: the plan */

static uint32_t rnd32(struct kase *k)
{
	return (uint32_t)rnd(&k->r);
}

static void rnd_fill(struct kase *k, uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(rnd(&k->r) >> 24);
}

/* An STag that names no MR of the victim's (not even one of another PD). */
static uint32_t bad_stag(struct kase *k)
{
	uint32_t s;

	do {
		s = rnd32(k);
	} while (s == v.region_mr->rkey || s == v.ro_mr->rkey ||
		 s == v.na_mr->rkey || s == v.recv_mr->rkey ||
		 s == v.cmr->rkey);
	return s;
}

static const char *const mpa_muts[] = {
	"mpa-key", "mpa-rev", "mpa-pd-len-513", "mpa-markers",
	"mpa-enhanced-short", "mpa-p2p-no-rtr", "mpa-truncated",
	"mpa-pd-len-longer", "mpa-reserved-bits", "mpa-rep-key",
	"mpa-ird-max", "mpa-slow",
};

/* Apply MPA mutation @m to the Request bytes in k->mpa. */
static void mpa_mutate(struct kase *k, unsigned int m)
{
	uint8_t *p = k->mpa.p;

	k->mpa_mut = mpa_muts[m];
	switch (m) {
	case 0: p[below(&k->r, 16)] ^= (uint8_t)(1 + below(&k->r, 255));
		break;
	case 1: p[17] = (uint8_t[]){ 0, 3, 0xff }[below(&k->r, 3)];
		break;
	case 2: set16(p + 18, (uint16_t)(513 + below(&k->r, 65000)));
		break;
	case 3: p[16] |= MPA_M;
		break;
	case 4: p[16] |= MPA_S;
		p[17] = 2;
		set16(p + 18, (uint16_t)below(&k->r, 4));
		k->mpa.len = MPA_RR_LEN + get16(p + 18);
		break;
	case 5: if (k->mpa.len >= 24) {
			p[16] |= MPA_S;
			p[20] = 0x80;	/* P2P, no RTR type, IRD 0 */
			p[21] = 0;
			p[22] &= 0x3f;
		}
		break;
	case 6: k->mpa.len = below(&k->r, (uint32_t)k->mpa.len);
		break;
	case 7: set16(p + 18, (uint16_t)(get16(p + 18) + 1 +
					 below(&k->r, 100)));
		break;
	case 8: p[16] |= 0x0f;
		break;
	case 9: memcpy(p, MPA_KEY_REP, 16);
		break;
	case 10: if (k->mpa.len >= 24) {
			p[20] |= 0x3f;
			p[21] = 0xff;
			p[22] |= 0x3f;
			p[23] = 0xff;
		}
		break;
	default: k->chunk = 1;	/* valid, one octet at a time */
		k->delay_us = 200;
		return;
	}
	expect(k, EXP_ANY);
}

static void gen_mpa(struct kase *k)
{
	struct mpa_frame *f = &k->req;

	memset(f, 0, sizeof(*f));
	f->rev = chance(&k->r, 80) ? 2 : 1;
	f->crc = chance(&k->r, 50);
	f->enhanced = f->rev == 2 && chance(&k->r, 90);
	f->p2p = f->enhanced && chance(&k->r, 85);
	if (f->p2p)
		f->rtr = 1 + below(&k->r, 7);
	f->ird = (uint16_t)below(&k->r, IRD + 1);
	f->ord = IRD;
	f->pd_len = chance(&k->r, 30) ? (uint16_t)below(&k->r, 100) : 0;
	k->crc_param = chance(&k->r, 50);
	k->reject = chance(&k->r, 2);
	mpa_put(&k->mpa, MPA_KEY_REQ, f);
	if (chance(&k->r, 10))
		mpa_mutate(k, below(&k->r, sizeof(mpa_muts) /
				       sizeof(mpa_muts[0])));
}

/* Record the FPDU that starts at @at of the body. */
static void fpdu_add(struct kase *k, size_t at, size_t len)
{
	if (k->nf < MAXF) {
		k->foff[k->nf] = at;
		k->flen[k->nf++] = len;
	}
}

/* Where a message goes: a Write's STag and TO, or a Send's queue. */
struct msg_hdr {
	unsigned int op;
	bool tagged;
	uint32_t stag;		/* tagged: the sink; untagged: Invalidate STag */
	uint64_t to;
	uint32_t qn, msn;
};

/* A message of @len octets in @nseg FPDUs (TO or MO counting up). */
static void put_msg(struct kase *k, const struct msg_hdr *h,
		    const uint8_t *data, uint32_t len, unsigned int nseg)
{
	uint32_t done = 0, n;
	size_t at;
	unsigned int i;

	for (i = 0; i < nseg; i++) {
		bool last = i + 1 == nseg;

		n = last ? len - done : below(&k->r, len - done + 1);
		at = k->body.len;
		if (h->tagged)
			fpdu_tagged(&k->body, h->op, last, h->stag, h->to + done);
		else
			fpdu_untagged(&k->body, h->op, last, h->stag, h->qn,
				      h->msn, done);
		put_bytes(&k->body, data + done, n);
		fpdu_add(k, at, fpdu_end(&k->body, at, k->crc));
		done += n;
	}
}

static void put_write(struct kase *k, uint32_t stag, uint64_t to,
		      const uint8_t *data, uint32_t len, unsigned int nseg)
{
	struct msg_hdr h = { .op = OP_WRITE, .tagged = true, .stag = stag,
			     .to = to };

	put_msg(k, &h, data, len, nseg);
}

static void put_send(struct kase *k, unsigned int op, uint32_t inval,
		     uint32_t qn, uint32_t msn, const uint8_t *data,
		     uint32_t len, unsigned int nseg)
{
	struct msg_hdr h = { .op = op, .stag = inval, .qn = qn, .msn = msn };

	put_msg(k, &h, data, len, nseg);
}

static void put_rreq(struct kase *k, uint32_t msn, uint32_t sink_stag,
		     uint64_t sink_to, uint32_t size, uint32_t src_stag,
		     uint64_t src_to)
{
	size_t at = k->body.len;

	fpdu_untagged(&k->body, OP_READ_REQ, true, 0, 1, msn, 0);
	put32(&k->body, sink_stag);
	put64(&k->body, sink_to);
	put32(&k->body, size);
	put32(&k->body, src_stag);
	put64(&k->body, src_to);
	fpdu_add(k, at, fpdu_end(&k->body, at, k->crc));
}

/* The ready-to-receive message the Reply chose (RFC 6581). */
static void put_rtr(struct kase *k)
{
	if (!k->rep.p2p)
		return;
	if (k->rep.rtr == RTR_WRITE) {
		put_write(k, 0, 0, NULL, 0, 1);
	} else if (k->rep.rtr == RTR_READ) {
		put_rreq(k, k->msn_rreq++, 0, 0, 0, 0, 0);
		k->rd[k->nrd++] = (struct rd_exp){ .len = 0 };
	} else if (k->rep.rtr == RTR_SEND) {
		put_send(k, OP_SEND, 0, 0, k->msn_send++, NULL, 0, 1);
	}
}

static uint64_t region_va(void)
{
	return (uintptr_t)REG(v.region_area);
}

/* Make a tagged access of @len octets (at @stag, @to) invalid. */
static void mut_target(struct kase *k, const char *op, uint32_t *stag,
		       uint64_t *to, uint32_t len)
{
	switch (below(&k->r, 4)) {
	case 0:
		*stag = bad_stag(k);
		what_add(k, "%s-bad-stag", op);
		break;
	case 1:
		*stag = v.na_mr->rkey;
		*to = (uintptr_t)REG(v.na_area);
		what_add(k, "%s-no-access", op);
		break;
	case 2:
		*to = region_va() - 1 - below(&k->r, GUARD);
		what_add(k, "%s-below-base", op);
		break;
	default:
		*to = region_va() + REGION - len + 1 + below(&k->r, GUARD);
		what_add(k, "%s-past-end", op);
	}
	expect(k, EXP_TERM);
}

/*
 * RFC 5040 lets a Write that follows a Read Request be placed before the
 * Read Response is generated: a Read whose source a later Write overlaps
 * may carry either content.
 */
static void writes_after_reads(struct kase *k, uint32_t off, uint32_t len)
{
	int i;

	for (i = 0; i < k->nrd; i++)
		if (off < k->rd[i].src_off + k->rd[i].len &&
		    k->rd[i].src_off < off + len)
			k->rd[i].loose = true;
}

/*
 * DDP validates each segment on its own: the segments of a Write that runs
 * past the region's end which lie inside it may be placed before the one
 * that crosses the end is refused, so earlier Reads of that part may carry
 * either content (found by seed 20261126 case 17857).
 */
static void bad_write_placed(struct kase *k, uint32_t stag, uint64_t to,
			     uint32_t len)
{
	uint64_t base = region_va(), off;

	if (stag != v.region_mr->rkey || to >= base + REGION ||
	    to + len <= base)
		return;
	off = to > base ? to - base : 0;
	writes_after_reads(k, (uint32_t)off,
			   (uint32_t)((to + len < base + REGION ? to + len :
				       base + REGION) - base - off));
}

/* A valid Write into the region, or one made invalid (@bad). */
static void gen_write(struct kase *k, bool bad)
{
	uint32_t off = below(&k->r, REGION), len, stag = v.region_mr->rkey;
	uint64_t to;
	uint8_t data[3072];

	len = below(&k->r, (REGION - off < 3072 ? REGION - off : 3072) + 1);
	if (bad && !len)
		len = 1, off = off == REGION ? off - 1 : off;
	if (off + len > REGION)
		off = REGION - len;
	rnd_fill(k, data, len);
	to = region_va() + off;
	if (bad && chance(&k->r, 20)) {
		stag = v.ro_mr->rkey;
		to = (uintptr_t)REG(v.ro_area);
		what_add(k, "write-read-only");
		expect(k, EXP_TERM);
	} else if (bad) {
		mut_target(k, "write", &stag, &to, len);
		bad_write_placed(k, stag, to, len);
	} else {
		memcpy(k->region + off, data, len);
		writes_after_reads(k, off, len);
	}
	put_write(k, stag, to, data, len, 1 + below(&k->r, 4));
}

/* A valid Send into the next receive, or one made invalid (@bad). */
static void gen_send(struct kase *k, bool bad)
{
	uint32_t len = below(&k->r, SLOT + 1), msn = k->msn_send, qn = 0;
	unsigned int op = chance(&k->r, 20) ? OP_SEND_SE : OP_SEND;
	uint32_t inval = 0;
	uint8_t data[SLOT + 600];

	if (bad) {
		switch (below(&k->r, 5)) {
		case 0: len = SLOT + 1 + below(&k->r, 500);
			what_add(k, "send-too-long");
			break;
		case 1: msn += NRECV + 1 + below(&k->r, 1000);
			what_add(k, "send-msn-no-buffer");
			break;
		case 2: msn -= 1 + below(&k->r, 3);
			what_add(k, "send-msn-old");
			break;
		case 3: qn = 4 + below(&k->r, 1000);
			what_add(k, "send-bad-qn");
			break;
		default: op = OP_SEND_INV;
			inval = bad_stag(k);
			what_add(k, "send-inv-bad-stag");
		}
		expect(k, EXP_TERM);
	}
	rnd_fill(k, data, len);
	if (!bad) {
		k->send_len[k->nsend] = len;
		memcpy(k->send_data[k->nsend++], data, len);
	}
	k->msn_send++;
	put_send(k, op, inval, qn, msn, data, len, 1 + below(&k->r, 3));
}

/* A Read Request of the region (the model's bytes at this point). */
static void gen_read(struct kase *k, bool bad)
{
	uint32_t off = below(&k->r, REGION), size, stag = v.region_mr->rkey;
	struct rd_exp *rd = &k->rd[k->nrd];
	uint32_t sink = rnd32(k);
	uint64_t to, sink_to = rnd(&k->r);

	size = 1 + below(&k->r, REGION - off < 4096 ? REGION - off : 4096);
	to = region_va() + off;
	if (bad) {
		mut_target(k, "read", &stag, &to, size);
	} else {
		*rd = (struct rd_exp){ .sink_stag = sink, .sink_to = sink_to,
				       .len = size, .src_off = off };
		rd->data = malloc(size);
		memcpy(rd->data, k->region + off, size);
		k->nrd++;
	}
	put_rreq(k, k->msn_rreq++, sink, sink_to, size, stag, to);
}

/* An FPDU the victim must answer with a Terminate (opcode level). */
static void gen_bad_op(struct kase *k)
{
	size_t at = k->body.len;
	unsigned int op;

	switch (below(&k->r, 4)) {
	case 0: op = 12 + below(&k->r, 4);
		fpdu_untagged(&k->body, op, true, 0, 0, k->msn_send, 0);
		what_add(k, "opcode-reserved-%u", op);
		break;
	case 1: fpdu_tagged(&k->body, OP_READ_RESP, true, rnd32(k),
			    rnd(&k->r));
		put32(&k->body, rnd32(k));
		what_add(k, "read-response-unsolicited");
		break;
	/*
	 * RFC 7306 is implemented: its messages are refused only when
	 * malformed or refused.  Immediate Data longer than its eight
	 * octets (section 6.3: exactly 8); an Atomic Request on a target
	 * that is not 64-bit aligned (section 8.2) or, aligned, in the
	 * region, whose MR grants no REMOTE_ATOMIC: executed up to the
	 * rights check, and refused.
	 */
	case 2: op = OP_IMM + below(&k->r, 2);
		fpdu_untagged(&k->body, op, true, 0, 0, k->msn_send, 0);
		put64(&k->body, rnd(&k->r));
		put8(&k->body, rnd32(k));
		what_add(k, "immediate-data-9-octets");
		break;
	default: fpdu_untagged(&k->body, OP_ATOMIC_REQ, true, 0, 1,
			       k->msn_rreq, 0);
		put32(&k->body, below(&k->r, 3));
		put32(&k->body, rnd32(k));
		put32(&k->body, v.region_mr->rkey);
		put64(&k->body, region_va() + 8 * below(&k->r, REGION / 8) +
				(below(&k->r, 2) ? 1 + below(&k->r, 7) : 0));
		put64(&k->body, rnd(&k->r));
		put64(&k->body, ~0ULL);
		put64(&k->body, rnd(&k->r));
		put64(&k->body, ~0ULL);
		what_add(k, "atomic-request-refused");
	}
	fpdu_add(k, at, fpdu_end(&k->body, at, k->crc));
	expect(k, EXP_TERM);
}

/* The peer's own Terminate: the victim's QP must go to ERROR. */
static void gen_peer_term(struct kase *k)
{
	size_t at = k->body.len;

	fpdu_untagged(&k->body, OP_TERMINATE, true, 0, 2, 1, 0);
	put32(&k->body, 0x00020000U);	/* RDMAP, catastrophic, code 2 */
	fpdu_add(k, at, fpdu_end(&k->body, at, k->crc));
	what_add(k, "peer-terminate");
	expect(k, EXP_ERR);
}

static void gen_sentinel(struct kase *k)
{
	uint8_t data[SENTINEL_LEN];

	memset(data, 0, sizeof(data));
	snprintf((char *)data, sizeof(data), "S%" PRIu64, k->idx);
	k->send_len[k->nsend] = SENTINEL_LEN;
	memcpy(k->send_data[k->nsend++], data, SENTINEL_LEN);
	put_send(k, OP_SEND, 0, 0, k->msn_send++, data, SENTINEL_LEN, 1);
}

/* -------------------------------------------------- case: mutations */

/* Fields the RFCs tell a receiver to ignore, set: the case stays valid. */
static void mut_ignored(struct kase *k)
{
	int f = (int)below(&k->r, (uint32_t)k->nf);
	uint8_t *p = k->body.p + k->foff[f];
	uint16_t ulpdu = get16(p);
	size_t pad = fpdu_total(ulpdu) - 4 - 2 - ulpdu;

	switch (below(&k->r, 4)) {
	case 0: p[2] |= (uint8_t)(0x3c & (1 + rnd32(k)));
		what_add(k, "ddp-reserved-bits");
		break;
	case 1: p[3] |= (uint8_t)(0x30 & (1 + rnd32(k)));
		what_add(k, "rdmap-reserved-bits");
		break;
	case 2: if (!pad)
			return;
		p[2 + ulpdu] = (uint8_t)(1 + below(&k->r, 255));
		what_add(k, "pad-not-zero");
		break;
	default:
		if (!k->crc) {
			p[k->flen[f] - 1 - below(&k->r, 4)] ^= 0x5a;
			what_add(k, "crc-garbage-without-crc");
			return;
		}
		if ((p[3] & 0xf) != OP_SEND && (p[3] & 0xf) != OP_SEND_SE)
			return;
		p[4] ^= (uint8_t)(1 + below(&k->r, 255));
		what_add(k, "send-inval-stag-not-zero");
	}
	if (k->crc)
		fpdu_recrc(p, k->flen[f]);
}

/* Rebuild the body with FPDU @f duplicated, dropped or swapped with @g. */
static void mut_order(struct kase *k, int f, int g, int kind)
{
	struct buf nb = { 0 };
	size_t off[MAXF], len[MAXF];
	int i, n = 0, j;

	for (i = 0; i < k->nf && n < MAXF - 1; i++) {
		j = kind == 2 && i == f ? g : kind == 2 && i == g ? f : i;
		if (kind == 1 && i == f)
			continue;
		off[n] = nb.len;
		len[n++] = k->flen[j];
		put_bytes(&nb, k->body.p + k->foff[j], k->flen[j]);
		if (kind == 0 && i == f) {
			off[n] = nb.len;
			len[n++] = k->flen[j];
			put_bytes(&nb, k->body.p + k->foff[j], k->flen[j]);
		}
	}
	free(k->body.p);
	k->body = nb;
	k->nf = n;
	memcpy(k->foff, off, sizeof(off[0]) * (size_t)n);
	memcpy(k->flen, len, sizeof(len[0]) * (size_t)n);
}

/* One raw change to the byte stream: anything may happen but a crash. */
static void mut_raw(struct kase *k)
{
	static const uint16_t lens[] = { 0, 1, 2, 3, 4, 13, 17, 0xffff,
					 0x8000, 0xfffe };
	uint8_t junk[64], *p;
	size_t flen, at;
	int f;

	/* A body without FPDUs: nothing to change (it read NULL + 0). */
	if (!k->nf)
		return;
	f = (int)below(&k->r, (uint32_t)k->nf);
	p = k->body.p + k->foff[f];
	flen = k->flen[f];
	switch (below(&k->r, 7)) {
	case 0: at = below(&k->r, (uint32_t)(flen < 48 || chance(&k->r, 20) ?
					      flen : 48));
		p[at] ^= (uint8_t)(1 << below(&k->r, 8));
		what_add(k, "flip@%d+%zu", f, at);
		break;
	case 1: set16(p, chance(&k->r, 50) ? lens[below(&k->r, 10)] :
		      (uint16_t)(get16(p) + below(&k->r, 17) - 8));
		what_add(k, "ulpdu-length@%d=%u", f, get16(p));
		break;
	case 2: p[below(&k->r, flen < 48 ? (uint32_t)flen : 48)] =
			(uint8_t[]){ 0, 0xff, 0x80, 0x7f }[below(&k->r, 4)];
		what_add(k, "byte@%d", f);
		break;
	case 3: mut_order(k, f, 0, 0);
		what_add(k, "dup@%d", f);
		return;
	case 4: if (k->nf < 2)
			return;
		mut_order(k, f, 0, 1);
		what_add(k, "drop@%d", f);
		return;
	case 5: mut_order(k, f, (int)below(&k->r, (uint32_t)k->nf), 2);
		what_add(k, "swap@%d", f);
		return;
	default: {
		size_t n = 1 + below(&k->r, sizeof(junk)), tail;

		rnd_fill(k, junk, n);
		at = k->foff[f];
		tail = k->body.len - at;
		buf_need(&k->body, n);
		memmove(k->body.p + at + n, k->body.p + at, tail);
		memcpy(k->body.p + at, junk, n);
		k->body.len += n;
		k->nf = f;	/* the FPDU table ends at the junk */
		what_add(k, "junk@%d+%zu", f, n);
		return;
	}
	}
	if (k->crc && chance(&k->r, 70))
		fpdu_recrc(p, flen);
}

/* ------------------------------------------------ case: body generation */

static bool zero_window(enum ending e)
{
	return e >= END_ZW_VICTIM;
}

/* Zero-window cases: Read Requests of whole MRs, nothing else. */
static void gen_zw_body(struct kase *k)
{
	int n = IRD - k->nrd, i;
	uint32_t size = k->end == END_ZW_DEREG ? ZW_LEN / IRD : REGION;
	uint64_t src;
	uint32_t stag;

	for (i = 0; i < n; i++) {
		struct rd_exp *rd = &k->rd[k->nrd++];

		if (k->end == END_ZW_DEREG) {
			stag = k->zw_mr->rkey;
			src = (uintptr_t)k->zw_buf + (uint64_t)i * size;
		} else {
			stag = v.region_mr->rkey;
			src = region_va();
		}
		*rd = (struct rd_exp){ .sink_stag = rnd32(k),
				       .sink_to = rnd(&k->r), .len = size };
		rd->data = malloc(size);
		memcpy(rd->data, (uint8_t *)(uintptr_t)src, size);
		put_rreq(k, k->msn_rreq++, rd->sink_stag, rd->sink_to, size,
			 stag, src);
	}
}

/* The operations of a normal case, one of them maybe made invalid. */
static void gen_ops(struct kase *k)
{
	int nops = 1 + (int)below(&k->r, 5), bad = -1, i;
	bool term = false;

	if (chance(&k->r, 22))
		bad = (int)below(&k->r, (uint32_t)nops);
	for (i = 0; i < nops && !term; i++) {
		unsigned int w = below(&k->r, 100);

		if (w < 4 && i == bad) {
			gen_bad_op(k);
		} else if (w < 7 && i == nops - 1) {
			gen_peer_term(k);
			term = true;
		} else if (w < 45) {
			gen_write(k, i == bad);
		} else if (w < 75 && k->nsend < NRECV - 2) {
			gen_send(k, i == bad);
		} else if (k->nrd < IRD) {
			gen_read(k, i == bad);
		} else {
			gen_write(k, i == bad);
		}
	}
	if (!term)
		gen_sentinel(k);
}

static void gen_body(struct kase *k)
{
	unsigned int n;

	k->msn_send = k->msn_rreq = 1;
	put_rtr(k);
	if (zero_window(k->end)) {
		gen_zw_body(k);
		return;
	}
	gen_ops(k);
	if (chance(&k->r, 12))
		mut_ignored(k);
	if (k->crc && chance(&k->r, 6)) {
		int f = (int)below(&k->r, (uint32_t)k->nf);

		k->body.p[k->foff[f] + k->flen[f] - 1 - below(&k->r, 4)] ^=
			(uint8_t)(1 << below(&k->r, 8));
		what_add(k, "crc-bad@%d", f);
		expect(k, EXP_ERR);
	}
	if (chance(&k->r, 22)) {
		for (n = 1 + below(&k->r, 3); n; n--)
			mut_raw(k);
		expect(k, EXP_ANY);
	}
	if (k->end == END_FIN || k->end == END_RST) {
		k->cut = below(&k->r, (uint32_t)k->body.len + 1);
		expect(k, EXP_ANY);
	}
}

/* Timing and ending, chosen before the connection (SO_RCVBUF). */
static void gen_timing(struct kase *k)
{
	unsigned int e = below(&k->r, 100);

	k->end = e < 6 ? END_FIN : e < 12 ? END_RST : e < 15 ? END_ZW_VICTIM :
		 e < 18 ? END_ZW_RST : e < 21 ? END_ZW_RESUME :
		 e < 24 ? END_ZW_DEREG : END_NORMAL;
	if (chance(&k->r, 35)) {
		k->chunk = chance(&k->r, 40) ? 1 + below(&k->r, 24) :
			   1 + below(&k->r, 1500);
		k->delay_us = chance(&k->r, 40) ? below(&k->r, 2000) : 0;
	}
	if (k->end == END_ZW_VICTIM || k->end == END_ZW_RST ||
	    k->end == END_ZW_DEREG)
		expect(k, EXP_ANY);
}

/* ------------------------------------------------ attacker: receiving */

/* A Read Response FPDU @p (ULPDU @ulpdu octets): goes to the oldest Read. */
static void rx_read_resp(struct kase *k, const uint8_t *p, uint16_t ulpdu)
{
	uint32_t stag = get32(p + 4), n = ulpdu - (HDR_TAGGED - 2);
	uint64_t to = get64(p + 8), off;
	struct rd_exp *rd = NULL;
	int i;

	/* A mutated stream may ask for anything: only valid ones are held. */
	if (k->exp == EXP_ANY && !zero_window(k->end))
		return;
	for (i = 0; i < k->nrd && !rd; i++)
		if (!k->rd[i].last)
			rd = &k->rd[i];
	if (!rd) {
		kfail(k, "Read Response with no Read outstanding");
		return;
	}
	off = to - rd->sink_to;
	if (stag != rd->sink_stag || to < rd->sink_to || off > rd->len ||
	    n > rd->len - off) {
		kfail(k, "Read Response %u octets at stag %08x TO %" PRIx64
		      " outside Read %d's sink %08x/%" PRIx64 "+%u", n, stag,
		      to, i - 1, rd->sink_stag, rd->sink_to, rd->len);
		rd->last = true;
		return;
	}
	if (n && !rd->loose && memcmp(p + HDR_TAGGED, rd->data + off, n))
		kfail(k, "Read %d: Read Response at offset %" PRIu64 " carries "
		      "octets that are not the source's", i - 1, off);
	rd->got += n;
	if (p[2] & 0x40) {
		rd->last = true;
		if (rd->got != rd->len)
			kfail(k, "Read %d: %u octets of %u before L", i - 1,
			      rd->got, rd->len);
	}
}

/* One complete FPDU from the victim at @p, @total octets. */
static void rx_fpdu(struct kase *k, const uint8_t *p, size_t total)
{
	uint16_t ulpdu = get16(p);
	unsigned int op = p[3] & 0xf;
	uint32_t crc = (uint32_t)p[total - 4] | (uint32_t)p[total - 3] << 8 |
		       (uint32_t)p[total - 2] << 16 |
		       (uint32_t)p[total - 1] << 24;

	k->fpdus_rcvd++;
	if (k->crc && crc != crc32c(p, total - 4))
		kfail(k, "victim sent an FPDU with a wrong CRC (opcode %u)",
		      op);
	if (op == OP_READ_RESP && ulpdu >= HDR_TAGGED - 2) {
		rx_read_resp(k, p, ulpdu);
	} else if (op == OP_TERMINATE && ulpdu >= HDR_UNTAGGED - 2 + 4) {
		if (k->term_rcvd)
			kfail(k, "a second Terminate");
		k->term_rcvd = true;
		k->term[0] = p[20] >> 4;
		k->term[1] = p[20] & 0xf;
		k->term[2] = p[21];
		if (!term_valid(k->term[0], k->term[1], k->term[2]))
			kfail(k, "Terminate with a code no RFC defines: "
			      "layer %u etype %u code 0x%02x", k->term[0],
			      k->term[1], k->term[2]);
	} else {
		kfail(k, "victim sent opcode %u (ULPDU %u): not asked for",
		      op, ulpdu);
	}
	if (k->term_rcvd && op != OP_TERMINATE)
		kfail(k, "victim sent opcode %u after its Terminate", op);
}

/* Parse what has arrived: the Reply, then FPDUs. */
static void rx_parse(struct kase *k)
{
	const uint8_t *p = k->rx.p + k->rx_at;
	size_t have = k->rx.len - k->rx_at, need;

	if (!k->reply_seen) {
		if (have < MPA_RR_LEN)
			return;
		need = MPA_RR_LEN + get16(p + 18);
		if (have < need)
			return;
		k->reply_seen = true;
		k->reply_ok = mpa_parse_reply(p, need, &k->rep);
		k->rx_at += need;
		if (!k->reply_ok || k->rep.reject)
			return;
		k->crc = k->rep.crc;
		p += need;
		have -= need;
	}
	while (have >= 4) {
		need = fpdu_total(get16(p));
		if (have < need)
			return;
		rx_fpdu(k, p, need);
		k->rx_at += need;
		p += need;
		have -= need;
	}
}

static void attacker_close(struct kase *k, bool rst)
{
	struct linger l = { 1, 0 };

	if (k->fd < 0)
		return;
	if (rst)
		setsockopt(k->fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
	close(k->fd);
	k->fd = -1;
	k->closed = true;
}

static void rx_read(struct kase *k)
{
	ssize_t n;

	if (k->fd < 0 || k->rx_hold || k->rx_eof)
		return;
	for (;;) {
		buf_need(&k->rx, 65536);
		n = recv(k->fd, k->rx.p + k->rx.len, 65536, MSG_DONTWAIT);
		if (n > 0) {
			k->rx.len += (size_t)n;
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		k->rx_eof = true;
		break;
	}
	rx_parse(k);
	if (k->rx_eof)
		attacker_close(k, false);	/* the victim closed: so do we */
}

/* ------------------------------------------------- victim: events, CQ */

static void cm_event(struct kase *k, struct rdma_cm_event *ev,
		     struct rdma_cm_id **extra)
{
	bool ours = k->sid && ev->id == k->sid;

	switch (ev->event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		/* A request of a former case's connection: refused. */
		if (ntohs(rdma_get_dst_port(ev->id)) != k->lport) {
			*extra = ev->id;
			st.stale_cr++;
		} else if (!k->sid) {
			k->sid = ev->id;
			k->cr = true;
		} else {
			*extra = ev->id;
			kfail(k, "a second connection request");
		}
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		k->established |= ours;
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		k->disconnected |= ours;
		break;
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		break;
	default:
		k->cm_error |= ours;
		if (o.verbose)
			printf("# case %" PRIu64 ": cm event %s (%d)\n", k->idx,
			       rdma_event_str(ev->event), ev->status);
	}
}

/* The victim's completions of this case; how many there were (all cases). */
static int cq_drain(struct kase *k)
{
	struct ibv_wc wc[16];
	int n, i, seen = 0;

	while ((n = ibv_poll_cq(v.cq, 16, wc)) > 0) {
		seen += n;
		for (i = 0; i < n; i++) {
			if (!k || !k->sid || !k->sid->qp ||
			    wc[i].qp_num != k->sid->qp->qp_num)
				continue;	/* a former case's flush */
			if (wc[i].status == IBV_WC_SUCCESS &&
			    wc[i].opcode == IBV_WC_RECV &&
			    wc[i].wr_id < NRECV) {
				k->recv_ok++;
				k->recv_seen[wc[i].wr_id] = true;
				k->recv_len[wc[i].wr_id] = wc[i].byte_len;
				if (wc[i].byte_len > SLOT)
					kfail(k, "receive completed with %u "
					      "octets in a %u-octet buffer",
					      wc[i].byte_len, SLOT);
			} else if (wc[i].status == IBV_WC_WR_FLUSH_ERR) {
				k->recv_flush++;
				k->qp_err = true;
			} else {
				k->recv_other++;
				k->qp_err = true;
			}
		}
	}
	return seen;
}

/*
 * One round: wait up to @ms for a CM event, a completion (the CQ armed
 * first, then drained: nothing completed before the arming is missed) or
 * the attacker's socket; then take what came.
 */
static void pump(struct kase *k, int ms)
{
	struct pollfd pfd[3] = { { v.ech->fd, POLLIN, 0 },
				 { v.cch->fd, POLLIN, 0 },
				 { k->rx_hold ? -1 : k->fd, POLLIN, 0 } };
	struct rdma_cm_event *ev;
	struct rdma_cm_id *extra;
	struct ibv_cq *cq;
	void *cq_ctx;

	if (ms && (ibv_req_notify_cq(v.cq, 0) || cq_drain(k)))
		ms = 0;
	poll(pfd, 3, ms);
	while (!ibv_get_cq_event(v.cch, &cq, &cq_ctx))
		ibv_ack_cq_events(cq, 1);
	while (!rdma_get_cm_event(v.ech, &ev)) {
		extra = NULL;
		cm_event(k, ev, &extra);
		rdma_ack_cm_event(ev);
		if (extra) {
			rdma_reject(extra, NULL, 0);
			rdma_destroy_id(extra);
		}
	}
	cq_drain(k);
	rx_read(k);
}

static bool dead(const struct kase *k)
{
	return k->qp_err || k->disconnected || k->cm_error;
}

/*
 * Pump until @cond or @ms pass; returns @cond's last value.  Each round
 * sleeps until something happens, or PUMP_MS at most (a lost wake-up
 * costs time, never a verdict).
 */
static bool pump_until(struct kase *k, int ms, bool (*cond)(struct kase *))
{
	double end = now_s() + ms / 1000.0, left;

	for (;;) {
		if (cond(k))
			return true;
		left = end - now_s();
		if (left <= 0)
			return false;
		pump(k, left * 1000 < PUMP_MS ? (int)(left * 1000) + 1 :
			PUMP_MS);
	}
}

/* --------------------------------------------------- attacker: sending */

/*
 * How many octets of the body to send from @at (of @len): the case's chunk
 * where a split point matters to a parser, i.e. in the first SPLIT_HEAD
 * octets of an FPDU (MPA, DDP and RDMAP headers, a Read Request), its last
 * SPLIT_TAIL (pad, CRC) and the first SPLIT_HEAD after the FPDU table
 * (junk); the rest of a payload in one piece.  1-octet chunks of a whole
 * 16 KiB body were one segment per octet: 30-50 s per case on the debug
 * kernel under TCG.
 */
static size_t body_piece(const struct kase *k, size_t at, size_t len)
{
	size_t n = k->chunk, s, e = 0;
	int f;

	for (f = 0; f < k->nf; f++) {
		s = k->foff[f];
		e = s + k->flen[f];
		if (at < s || at >= e)
			continue;
		if (at >= s + SPLIT_HEAD && at + SPLIT_TAIL < e &&
		    n < e - SPLIT_TAIL - at)
			n = e - SPLIT_TAIL - at;
		return n < len - at ? n : len - at;
	}
	if (at >= e + SPLIT_HEAD)
		n = len - at;
	return n < len - at ? n : len - at;
}

/*
 * Send @len octets at @p in the case's chunks (the body: body_piece());
 * false if the peer stalls.  With a delay, at most MAX_DELAYS of the chunk
 * boundaries, spread evenly over @len, wait it: every chunk is still a
 * segment of its own, and a case of 1-octet chunks does not sleep for
 * seconds.
 */
static bool tx_bytes(struct kase *k, const uint8_t *p, size_t len)
{
	double end = now_s() + 3;
	size_t done = 0, n, sent = 0, every = 1;
	ssize_t r;

	if (k->chunk)
		every = len / k->chunk / MAX_DELAYS + 1;
	while (done < len && k->fd >= 0) {
		n = k->chunk ? k->chunk : len - done;
		if (p == k->body.p && k->chunk)
			n = body_piece(k, done, len);
		else if (n > len - done)
			n = len - done;
		r = send(k->fd, p + done, n, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (r > 0) {
			done += (size_t)r;
			if (k->delay_us && done < len && ++sent % every == 0)
				usleep(k->delay_us);
			continue;
		}
		if (r < 0 && errno != EAGAIN && errno != EINTR)
			return false;	/* reset by the victim */
		if (now_s() >= end)
			return false;
		pump(k, 2);
	}
	return done == len;
}

static bool attacker_connect(struct kase *k)
{
	struct sockaddr_in a = {
		.sin_family = AF_INET,
		.sin_port = htons((uint16_t)(o.port + (k->crc_param ? 0 : 2))),
	};
	struct timeval tv = { 3, 0 };
	socklen_t alen = sizeof(a);
	int one = 1, small = 2048;

	inet_pton(AF_INET, o.ip, &a.sin_addr);
	k->fd = socket(AF_INET, SOCK_STREAM, 0);
	if (k->fd < 0)
		die("socket");
	if (zero_window(k->end))
		setsockopt(k->fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	setsockopt(k->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(k->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(k->fd, (struct sockaddr *)&a, sizeof(a))) {
		kfail(k, "TCP connect to the listener: %s", strerror(errno));
		close(k->fd);
		k->fd = -1;
		return false;
	}
	if (getsockname(k->fd, (struct sockaddr *)&a, &alen))
		die("getsockname");
	k->lport = ntohs(a.sin_port);
	return true;
}

/* ------------------------------------------------ case: the connection */

/* The victim's QP on the new id, its receives posted, accepted. */
static void victim_accept(struct kase *k)
{
	struct rdma_conn_param param = { .responder_resources = IRD,
					 .initiator_depth = IRD };
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC, .send_cq = v.cq, .recv_cq = v.cq,
		.cap = { .max_send_wr = 8, .max_recv_wr = NRECV,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_recv_wr *bad;
	int i;

	if (k->reject) {
		rdma_reject(k->sid, NULL, 0);
		return;
	}
	if (rdma_create_qp(k->sid, v.pd, &qa)) {
		kfail(k, "rdma_create_qp: %s", strerror(errno));
		return;
	}
	for (i = 0; i < NRECV; i++) {
		struct ibv_sge sge = { (uintptr_t)slot(i), SLOT,
				       v.recv_mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = (uint64_t)i,
					  .sg_list = &sge, .num_sge = 1 };

		memset(slot(i), 0xaa, SLOT);
		if (ibv_post_recv(k->sid->qp, &wr, &bad))
			kfail(k, "ibv_post_recv: %s", strerror(errno));
	}
	if (rdma_accept(k->sid, &param) && !k->mpa_mut)
		kfail(k, "rdma_accept: %s", strerror(errno));
}

static bool got_cr(struct kase *k)
{
	return k->cr || k->rx_eof || k->reply_seen || k->closed;
}

static bool got_reply(struct kase *k)
{
	return k->reply_seen || k->rx_eof;
}

/* The Reply a valid Request must get (RFC 5044, RFC 6581). */
static void check_reply(struct kase *k)
{
	const struct mpa_frame *q = &k->req, *p = &k->rep;
	unsigned int want_rtr = q->rtr & RTR_WRITE ? RTR_WRITE :
				q->rtr & RTR_READ ? RTR_READ : RTR_SEND;

	if (!k->reply_seen || !k->reply_ok) {
		kfail(k, "%s to a valid MPA Request", k->reply_seen ?
		      "malformed Reply" : "no Reply");
		return;
	}
	if (p->reject != k->reject)
		kfail(k, "Reply R=%d, want %d", p->reject, k->reject);
	if (p->rev != q->rev || p->markers ||
	    p->crc != (q->crc || k->crc_param))
		kfail(k, "Reply rev %u M %d C %d (Request rev %u C %d, "
		      "mpa_crc %d)", p->rev, p->markers, p->crc, q->rev,
		      q->crc, k->crc_param);
	if (!k->reject && q->enhanced != p->enhanced)
		kfail(k, "Reply enhanced %d to a Request with %d",
		      p->enhanced, q->enhanced);
	if (!k->reject && q->p2p && (!p->p2p || p->rtr != want_rtr))
		kfail(k, "Reply P2P %d RTR %#x to an offer of %#x (want %#x)",
		      p->p2p, p->rtr, q->rtr, want_rtr);
	if (!k->reject && p->enhanced && p->ord > q->ird)
		kfail(k, "Reply ORD %u above the Request's IRD %u", p->ord,
		      q->ird);
}

/* TCP, the MPA exchange; true if the case goes on to full operation. */
static bool case_connect(struct kase *k)
{
	if (!attacker_connect(k))
		return false;
	if (!tx_bytes(k, k->mpa.p, k->mpa.len) && !k->mpa_mut)
		kfail(k, "MPA Request not taken");
	if (k->mpa_mut && !strcmp(k->mpa_mut, "mpa-truncated"))
		attacker_close(k, chance(&k->r, 50));
	pump_until(k, k->mpa_mut ? 1500 : 5000, got_cr);
	if (k->cr)
		victim_accept(k);
	else if (!k->mpa_mut)
		kfail(k, "no CONNECT_REQUEST for a valid MPA Request");
	if (k->fd < 0)
		return false;
	pump_until(k, k->mpa_mut ? 1500 : 5000, got_reply);
	if (!k->mpa_mut)
		check_reply(k);
	return !k->failed && k->reply_ok && !k->rep.reject && k->cr &&
	       k->sid->qp && !k->rx_eof;
}

/* ------------------------------------------------- case: full operation */

static bool reads_done(const struct kase *k)
{
	int i;

	for (i = 0; i < k->nrd; i++)
		if (!k->rd[i].last)
			return false;
	return true;
}

static bool ok_done(struct kase *k)
{
	return dead(k) || (k->recv_ok >= k->nsend && reads_done(k) &&
			   k->established);
}

static bool term_done(struct kase *k)
{
	return (k->term_rcvd || k->rx_eof) && dead(k);
}

static bool err_done(struct kase *k)
{
	return dead(k);
}

static bool any_done(struct kase *k)
{
	return dead(k) || k->rx_eof || (k->recv_ok >= k->nsend &&
					reads_done(k));
}

static bool gone(struct kase *k)
{
	return k->disconnected || k->cm_error;
}

static bool zw_reads_done(struct kase *k)
{
	return reads_done(k) || dead(k) || k->rx_eof;
}

/* What a valid case must have produced, checked while the QP lives. */
static void check_ok(struct kase *k)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;
	uint32_t i;

	if (!pump_until(k, 8000, ok_done) || dead(k)) {
		kfail(k, "valid case did not complete: %u/%u receives, reads "
		      "%s, established %d, qp_err %d, disconnected %d, "
		      "Terminate %d (%u/%u/0x%02x)", k->recv_ok, k->nsend,
		      reads_done(k) ? "done" : "missing", k->established,
		      k->qp_err, k->disconnected, k->term_rcvd, k->term[0],
		      k->term[1], k->term[2]);
		return;
	}
	if (ibv_query_qp(k->sid->qp, &a, IBV_QP_STATE, &ia) ||
	    a.qp_state != IBV_QPS_RTS)
		kfail(k, "QP state %d after a valid case (want RTS)",
		      a.qp_state);
	if (memcmp(k->region, REG(v.region_area), REGION))
		kfail(k, "region content differs from the Writes");
	for (i = 0; i < k->nsend; i++) {
		if (!k->recv_seen[i] || k->recv_len[i] != k->send_len[i] ||
		    memcmp(slot((int)i), k->send_data[i], k->send_len[i]))
			kfail(k, "receive %u: %u octets (want %u) or data "
			      "differs", i, k->recv_len[i], k->send_len[i]);
		else if (k->send_len[i] < SLOT &&
			 slot((int)i)[k->send_len[i]] != 0xaa)
			kfail(k, "receive %u: written past its %u octets", i,
			      k->send_len[i]);
	}
	if (k->term_rcvd)
		kfail(k, "Terminate %u/%u/0x%02x in a valid case", k->term[0],
		      k->term[1], k->term[2]);
}

/*
 * Hold the receive side until the window is shut: Read Responses queued
 * on the attacker's socket and no more arriving for ZW_STILL_MS (the
 * buffer is a few KiB, the responses 64 KiB), or the QP failed, or 300 ms.
 */
static void zero_window_hold(struct kase *k)
{
	double end = now_s() + 0.3, since = now_s();
	int q, last = 0;

	k->rx_hold = true;
	while (!dead(k) && now_s() < end) {
		pump(k, 5);
		if (k->fd < 0 || ioctl(k->fd, FIONREAD, &q))
			break;
		if (q != last) {
			last = q;
			since = now_s();
		} else if (q && now_s() - since >= ZW_STILL_MS / 1000.0) {
			break;
		}
	}
}

/* Zero window: hold the receive side, then what the ending says. */
static void zero_window_end(struct kase *k)
{
	double t;

	zero_window_hold(k);
	if (k->end == END_ZW_RST) {
		attacker_close(k, true);
	} else if (k->end == END_ZW_VICTIM) {
		t = now_s();
		rdma_disconnect(k->sid);
		if (now_s() - t > 2)
			kfail(k, "rdma_disconnect under a zero window took "
			      "%.1f s", now_s() - t);
	} else if (k->end == END_ZW_DEREG) {
		t = now_s();
		if (ibv_dereg_mr(k->zw_mr))
			kfail(k, "ibv_dereg_mr under a zero window: %s",
			      strerror(errno));
		k->zw_mr = NULL;
		if (now_s() - t > 2)
			kfail(k, "ibv_dereg_mr waited %.1f s for the peer's "
			      "window", now_s() - t);
		munmap(k->zw_buf, ZW_LEN);
		k->zw_buf = NULL;
	}
	if (k->end == END_ZW_VICTIM)
		return;		/* teardown with the window still shut */
	k->rx_hold = false;
	if (!pump_until(k, 10000, zw_reads_done) && k->end == END_ZW_RESUME)
		kfail(k, "Read Responses did not resume with the window");
	if (k->end == END_ZW_RESUME && (dead(k) || !reads_done(k)))
		kfail(k, "zero window then resume: reads %s, dead %d",
		      reads_done(k) ? "done" : "missing", dead(k));
}

static void case_run(struct kase *k)
{
	size_t len = k->body.len;

	if (k->end == END_FIN || k->end == END_RST)
		len = k->cut;
	if (!tx_bytes(k, k->body.p, len) && k->exp == EXP_OK)
		kfail(k, "victim stopped taking a valid stream");
	if (zero_window(k->end)) {
		zero_window_end(k);
		return;
	}
	if (k->end == END_FIN) {
		shutdown(k->fd, SHUT_WR);
	} else if (k->end == END_RST) {
		attacker_close(k, true);
	}
	switch (k->exp) {
	case EXP_OK:
		check_ok(k);
		break;
	case EXP_TERM:
		if (!pump_until(k, 5000, term_done))
			kfail(k, "no %s%s within 5 s", k->term_rcvd ? "" :
			      "Terminate and no ", "QP error");
		else if (!k->term_rcvd)
			kfail(k, "QP error but no Terminate sent");
		break;
	case EXP_ERR:
		if (!pump_until(k, 5000, err_done))
			kfail(k, "QP still up 5 s after the error");
		break;
	default:
		pump_until(k, 300, any_done);
	}
}

/* --------------------------------------------------- case: teardown */

static void case_teardown(struct kase *k)
{
	double t;

	/*
	 * Under a zero window the victim destroys everything while the peer
	 * still holds the window shut: that must not wait for the peer.
	 */
	bool zw = k->end == END_ZW_VICTIM;

	if (!zw && k->sid && k->established && !dead(k) && k->fd >= 0) {
		rdma_disconnect(k->sid);	/* the victim ends it */
		pump_until(k, 5000, gone);
	}
	if (!zw)
		attacker_close(k, false);
	if (!zw && k->sid && k->established && !pump_until(k, 5000, gone))
		kfail(k, "no DISCONNECTED within 5 s of the peer leaving");
	if (k->sid) {
		t = now_s();
		if (k->sid->qp)
			rdma_destroy_qp(k->sid);
		if (rdma_destroy_id(k->sid))
			kfail(k, "rdma_destroy_id: %s", strerror(errno));
		if (now_s() - t > 5)
			kfail(k, "destroying the QP and id took %.1f s",
			      now_s() - t);
		k->sid = NULL;
	}
	attacker_close(k, true);
	pump(k, 0);
	cq_drain(NULL);
	if (k->zw_mr)
		ibv_dereg_mr(k->zw_mr);
	if (k->zw_buf)
		munmap(k->zw_buf, ZW_LEN);
}

/* Octets of @p that are not @b; the first one's offset in *@at. */
static bool all_are(const uint8_t *p, size_t n, uint8_t b, size_t *at)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != b) {
			*at = i;
			return false;
		}
	return true;
}

/* A guard area of @n octets at @p: intact, or reported and restored. */
static void guard_check(struct kase *k, uint8_t *p, size_t n,
			const char *what)
{
	size_t at;

	if (all_are(p, n, GUARD_BYTE, &at))
		return;
	kfail(k, "guard bytes %s overwritten (offset %zu)", what, at);
	memset(p, GUARD_BYTE, n);
}

static void check_memory(struct kase *k)
{
	uint8_t *r = v.recv_area;
	size_t i;
	int s;

	guard_check(k, v.region_area, GUARD, "before the region MR");
	guard_check(k, REG(v.region_area) + REGION, GUARD,
		    "after the region MR");
	guard_check(k, v.ro_area, GUARD, "before the ro MR");
	guard_check(k, REG(v.ro_area) + SMALL, GUARD, "after the ro MR");
	guard_check(k, v.na_area, GUARD, "before the na MR");
	guard_check(k, REG(v.na_area) + SMALL, GUARD, "after the na MR");
	guard_check(k, r, GUARD, "before the receive MR");
	guard_check(k, REG(r) + RECV_AREA, GUARD, "after the receive MR");
	for (s = 0; s <= NRECV; s++)
		guard_check(k, slot(s) - SLOT_GAP, SLOT_GAP,
			    "between receive buffers");
	for (i = 0; i < SMALL; i++) {
		if (REG(v.ro_area)[i] != (uint8_t)(i * 13 + 1) ||
		    REG(v.na_area)[i] != (uint8_t)(i * 17 + 5)) {
			kfail(k, "read-only or no-access MR changed at %zu", i);
			break;
		}
	}
}

static void case_check(struct kase *k)
{
	char why[256];

	check_memory(k);
	if (k->term_rcvd && k->exp == EXP_ERR && !k->qp_err &&
	    !k->disconnected)
		kfail(k, "Terminate but the QP did not fail");
	if (!control_ping(k->idx))
		kfail(k, "the control connection stopped working");
	if (o.count_every && (k->idx + 1) % o.count_every == 0 &&
	    !counts_ok(why, sizeof(why)))
		kfail(k, "%s", why);
}

/* ------------------------------------------------------- one case */

static void case_free(struct kase *k)
{
	int i;

	for (i = 0; i < k->nrd; i++)
		free(k->rd[i].data);
	free(k->mpa.p);
	free(k->body.p);
	free(k->rx.p);
}

static void zw_mr_make(struct kase *k)
{
	size_t i;

	k->zw_buf = mmap(NULL, ZW_LEN, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (k->zw_buf == MAP_FAILED)
		die("mmap");
	for (i = 0; i < ZW_LEN; i++)
		k->zw_buf[i] = (uint8_t)((i * 31 + 7) ^ 0x5a);
	k->zw_mr = reg_mr(k->zw_buf, ZW_LEN, IBV_ACCESS_LOCAL_WRITE |
			  IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
}

static void case_report(struct kase *k)
{
	char path[512];

	st.cases++;
	st.by_exp[k->exp]++;
	st.by_end[k->end]++;
	st.terms += k->term_rcvd;
	st.mpa_muts += !!k->mpa_mut;
	st.established += k->established;
	if (o.verbose || k->failed)
		printf("# case %" PRIu64 ": expect %s, end %s, chunk %u delay "
		       "%u us, %s%s%s, "
		       "established %d, Terminate %s%u/%u/0x%02x, qp_err %d, "
		       "%.2f s\n",
		       k->idx, exp_name[k->exp], end_name[k->end], k->chunk,
		       k->delay_us, k->mpa_mut ? k->mpa_mut : "", k->mpa_mut ? " " : "",
		       k->what[0] ? k->what : "valid", k->established,
		       k->term_rcvd ? "" : "none ", k->term[0], k->term[1],
		       k->term[2], k->qp_err, k->secs);
	if (!k->failed)
		return;
	st.failed++;
	printf("FAIL seed %" PRIu64 " case %" PRIu64 ": %s\n", o.seed, k->idx,
	       k->why);
	printf("# rerun: fuzz-peer --seed %" PRIu64 " --first %" PRIu64
	       " --cases 1 -v %s %s %d\n", o.seed, k->idx, o.dev, o.ip,
	       o.port);
	case_dump(stdout, k);
	if (o.fail_dir) {
		snprintf(path, sizeof(path), "%s/fuzz-%" PRIu64 "-%" PRIu64
			 ".hex", o.fail_dir, o.seed, k->idx);
		case_save(k, path);
	}
	fflush(stdout);
}

static bool one_case(uint64_t idx)
{
	struct kase *k = calloc(1, sizeof(*k));
	double t, t0 = now_s();
	bool ok;
	size_t i;

	if (!k)
		die("calloc");
	k->idx = idx;
	k->fd = -1;
	rng_case(&k->r, o.seed, idx);
	for (i = 0; i < REGION; i++)
		k->region[i] = (uint8_t)(rnd(&k->r) >> 40);
	memcpy(REG(v.region_area), k->region, REGION);
	gen_timing(k);
	gen_mpa(k);
	if (k->end == END_ZW_DEREG)
		zw_mr_make(k);
	t = now_s();
	if (o.save)
		case_keep(k);
	phase(4, &t);
	if (case_connect(k)) {
		phase(0, &t);
		gen_body(k);
		if (o.save)
			case_keep(k);
		phase(4, &t);
		case_run(k);
		phase(1, &t);
	}
	phase(0, &t);
	case_teardown(k);
	phase(2, &t);
	case_check(k);
	phase(3, &t);
	k->secs = now_s() - t0;
	st.t_exp[k->exp] += k->secs;
	st.t_end[k->end] += k->secs;
	case_report(k);
	ok = !k->failed;
	case_free(k);
	free(k);
	return ok;
}

/* ------------------------------------------------------------- batches */

static bool batch_end(uint64_t done)
{
	int bugs = bug_lines(false);
	bool ok = true;

	if (bugs > v.bugs_seen) {
		printf("FAIL batch ending at case %" PRIu64 ": kernel log has "
		       "%d new bug report line(s)\n", done, bugs - v.bugs_seen);
		bug_lines(true);
		v.bugs_seen = bugs;
		ok = false;
	}
	if (o.kmemleak && !kmemleak_clean()) {
		printf("FAIL batch ending at case %" PRIu64 ": kmemleak reports "
		       "leaks\n", done);
		ok = false;
	}
	printf("# batch to case %" PRIu64 ": %" PRIu64 " cases, %" PRIu64
	       " failed, %.1f cases/s\n", done, st.cases, st.failed,
	       st.cases / (now_s() - st.t_start));
	fflush(stdout);
	return ok;
}

static void usage(void)
{
	fprintf(stderr, "usage: fuzz-peer [--seed S] [--first I] [--cases N] "
		"[--save FILE] [--no-fsync] [--fail-dir DIR] [--batch N] [--bug-re RE] "
		"[--kmemleak] [--count-every N] [--jobs N] [--keep-going] "
		"[--replay FILE] [-v] "
		"DEVICE IP "
		"PORT\n");
	exit(2);
}

static void parse_opts(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "seed", 1, NULL, 's' }, { "first", 1, NULL, 'f' },
		{ "cases", 1, NULL, 'n' }, { "save", 1, NULL, 'S' },
		{ "fail-dir", 1, NULL, 'F' }, { "batch", 1, NULL, 'b' },
		{ "bug-re", 1, NULL, 'r' }, { "kmemleak", 0, NULL, 'k' },
		{ "count-every", 1, NULL, 'c' }, { "keep-going", 0, NULL, 'K' },
		{ "jobs", 1, NULL, 'j' }, { "no-fsync", 0, NULL, 'N' },
		{ "replay", 1, NULL, 'R' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	o.seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 20);
	while ((c = getopt_long(argc, argv, "v", lo, NULL)) != -1) {
		switch (c) {
		case 's': o.seed = strtoull(optarg, NULL, 0); break;
		case 'f': o.first = strtoull(optarg, NULL, 0); break;
		case 'n': o.cases = strtoull(optarg, NULL, 0); break;
		case 'S': o.save = optarg; break;
		case 'F': o.fail_dir = optarg; break;
		case 'b': o.batch = (unsigned int)atoi(optarg); break;
		case 'r': o.bug_re = optarg; break;
		case 'k': o.kmemleak = true; break;
		case 'c': o.count_every = (unsigned int)atoi(optarg); break;
		case 'K': o.keep_going = true; break;
		case 'j': o.jobs = (unsigned int)atoi(optarg); break;
		case 'N': o.no_fsync = true; break;
		case 'R': o.replay = optarg; break;
		case 'v': o.verbose++; break;
		default: usage();
		}
	}
	if (argc - optind != 3)
		usage();
	o.dev = argv[optind];
	o.ip = argv[optind + 1];
	o.port = atoi(argv[optind + 2]);
	if (o.bug_re && regcomp(&v.bug_re, o.bug_re, REG_EXTENDED | REG_NOSUB))
		usage();
	if (!o.batch)
		o.batch = 500;
	if (!o.jobs || o.jobs > MAX_JOBS)
		usage();
}

static void print_summary(void)
{
	double t = now_s() - st.t_start;
	int i;

	printf("# seed %" PRIu64 ": %" PRIu64 " cases in %.1f s (%.1f/s), "
	       "%" PRIu64 " failed; %" PRIu64 " established, %" PRIu64
	       " MPA mutations, %" PRIu64 " Terminates received, %" PRIu64
	       " late connection requests\n", o.seed, st.cases, t,
	       st.cases / (t > 0 ? t : 1), st.failed, st.established,
	       st.mpa_muts, st.terms, st.stale_cr);
	if (o.jobs > 1 && !o.replay)
		printf("#   (times below add up the %u workers' times)\n",
		       o.jobs);
	for (i = 0; i < 5; i++)
		printf("#   time in %-9s %.1f s\n", phase_name[i],
		       st.t_phase[i]);
	for (i = 0; i < 4; i++)
		printf("#   expect %-9s %" PRIu64 " (%.1f s)\n", exp_name[i],
		       st.by_exp[i], st.t_exp[i]);
	for (i = 0; i < 7; i++)
		printf("#   end %-30s %" PRIu64 " (%.1f s)\n", end_name[i],
		       st.by_end[i], st.t_end[i]);
}

/*
 * Worker @j: cases of [@from, @to), each taking the next one not taken
 * (*@next, shared by the workers), so a slow case does not hold back the
 * cases that would have followed it in a fixed share.
 */
static int worker(unsigned int j, uint64_t from, uint64_t to,
		  uint64_t *next, struct fuzz_stats *mine)
{
	static char save[512];
	bool ok = true;
	uint64_t i;

	/*
	 * The fork copied the parent's totals of the batches before: count
	 * this batch's only, which the parent adds to them (stats_add()).
	 */
	memset(&st, 0, sizeof(st));
	o.port += 10 * (int)j;
	o.count_every = 0;	/* other workers' objects come and go */
	if (o.save) {
		snprintf(save, sizeof(save), "%s.%u", o.save, j);
		o.save = save;
	}
	victim_setup();
	if (!control_ping(~0ULL))
		die("control connection ping");
	st.t_start = now_s();
	while ((i = from + __atomic_fetch_add(next, 1, __ATOMIC_RELAXED)) < to) {
		ok &= one_case(i);
		if (!ok && !o.keep_going)
			break;
	}
	printf("# worker %u: %" PRIu64 " cases, %" PRIu64 " failed\n", j,
	       st.cases, st.failed);
	fflush(stdout);
	*mine = st;
	return ok ? 0 : 1;
}

/* Add a worker's figures to this process's; times add up across workers. */
static void stats_add(const struct fuzz_stats *w)
{
	int i;

	st.failed += w->failed;
	st.terms += w->terms;
	st.term_bad += w->term_bad;
	st.mpa_muts += w->mpa_muts;
	st.stale_cr += w->stale_cr;
	st.established += w->established;
	for (i = 0; i < 5; i++)
		st.t_phase[i] += w->t_phase[i];
	for (i = 0; i < 4; i++) {
		st.by_exp[i] += w->by_exp[i];
		st.t_exp[i] += w->t_exp[i];
	}
	for (i = 0; i < 7; i++) {
		st.by_end[i] += w->by_end[i];
		st.t_end[i] += w->t_end[i];
	}
}

/* One batch in --jobs processes, each with its own victim and ports. */
static bool batch_jobs(uint64_t from, uint64_t to)
{
	pid_t pid[MAX_JOBS];
	unsigned int j;
	int status;
	bool ok = true;
	struct shared {
		uint64_t next;
		struct fuzz_stats w[MAX_JOBS];
	} *sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (sh == MAP_FAILED)
		die("mmap");
	memset(sh, 0, sizeof(*sh));
	fflush(stdout);
	for (j = 0; j < o.jobs; j++) {
		pid[j] = fork();
		if (pid[j] < 0)
			die("fork");
		if (!pid[j])
			exit(worker(j, from, to, &sh->next, &sh->w[j]));
	}
	for (j = 0; j < o.jobs; j++) {
		bool died = waitpid(pid[j], &status, 0) != pid[j] ||
			    !WIFEXITED(status);

		if (died || WEXITSTATUS(status))
			ok = false;
		/* a worker that died reported nothing: count it once */
		if (died)
			st.failed++;
		else
			stats_add(&sh->w[j]);
	}
	munmap(sh, sizeof(*sh));
	st.cases += to - from;
	return ok;
}

/* The victim, its baselines (object counts, kernel log) and the clock. */
static void serial_setup(void)
{
	victim_setup();
	if (!control_ping(~0ULL))
		die("control connection ping");
	if (!res_counts(v.base))
		printf("# no `rdma res` counts: object counts not compared\n");
	v.bugs_seen = bug_lines(false);
	st.t_start = now_s();
}

/* The cases in this process, one after the other. */
static bool run_serial(void)
{
	uint64_t i, end = o.first + o.cases;
	bool ok = true;

	serial_setup();
	for (i = o.first; i < end; i++) {
		ok &= one_case(i);
		if ((i + 1 - o.first) % o.batch == 0 || i + 1 == end)
			ok &= batch_end(i + 1);
		if (!ok && !o.keep_going)
			break;
	}
	return ok;
}

/* --replay: the listed cases, each with its own seed, as one batch. */
static bool run_replay(void)
{
	char line[256];
	uint64_t seed, idx, n = 0;
	bool ok = true;
	FILE *f = fopen(o.replay, "r");

	if (!f)
		die(o.replay);
	serial_setup();
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%" SCNu64 " %" SCNu64, &seed, &idx) != 2)
			continue;	/* a comment or a blank line */
		o.seed = seed;
		ok &= one_case(idx);
		n++;
	}
	fclose(f);
	return batch_end(n) && ok;
}

/*
 * Batches of --jobs workers; between batches, with every worker gone,
 * the object counts must be back to what they were before the first.
 */
static bool run_jobs(void)
{
	uint64_t b, to, end = o.first + o.cases;
	char why[256];
	bool ok = true;

	if (!res_counts(v.base))
		printf("# no `rdma res` counts: object counts not compared\n");
	v.bugs_seen = bug_lines(false);
	st.t_start = now_s();
	for (b = o.first; b < end; b = to) {
		to = end - b > o.batch ? b + o.batch : end;
		ok &= batch_jobs(b, to);
		if (!counts_ok(why, sizeof(why))) {
			printf("FAIL batch ending at case %" PRIu64 ": %s\n", to,
			       why);
			ok = false;
		}
		ok &= batch_end(to);
		if (!ok && !o.keep_going)
			break;
	}
	return ok;
}

int main(int argc, char **argv)
{
	char why[256];
	bool ok;

	setvbuf(stdout, NULL, _IOLBF, 0);
	parse_opts(argc, argv);
	crc32c_init();
	printf("# fuzz-peer gen %d seed %" PRIu64 " cases %" PRIu64 "..%"
	       PRIu64 ", %u job(s)\n", GEN_VERSION, o.seed, o.first,
	       o.first + o.cases - 1, o.jobs);
	if (o.replay)
		ok = run_replay();
	else
		ok = o.jobs > 1 ? run_jobs() : run_serial();
	if (!counts_ok(why, sizeof(why))) {
		printf("FAIL at the end: %s\n", why);
		ok = false;
	}
	print_summary();
	check(ok, "fuzz-peer seed %" PRIu64 ": %" PRIu64 " cases, %" PRIu64
	      " failed%s", o.seed, st.cases, st.failed,
	      o.jobs > 1 ? " worker(s)" : "");
	return ok ? 0 : 1;
}
