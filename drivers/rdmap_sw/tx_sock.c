// SPDX-License-Identifier: GPL-2.0
/*
 * The socket sink of the transmit engine (contract in tx.h): each batch of
 * FPDUs becomes bio_vec iov_iters for tcp_sendmsg_locked() with
 * MSG_DONTWAIT, and MSG_MORE while the message continues.  Headers,
 * trailers and inline data live in the engine's own (slab) memory and are
 * copied by TCP; the page pieces of user MRs in FPDUs marked splice (Read
 * Responses without CRC, see tx.h) go out in runs with MSG_SPLICE_PAGES,
 * TCP holding the pages by reference (zero copy; rsw_tx_sock_can_splice()
 * says why only those).
 *
 * Lifetime.  Every piece is held by the engine (tx.c, mem.c) until this
 * function returned: a copied piece is read by TCP inside
 * tcp_sendmsg_locked(), a spliced page gets TCP's own reference there (skb
 * frag), which keeps it allocated through retransmissions after the
 * engine dropped its hold.  Nothing here keeps a pointer to a piece past
 * the return; the bio_vecs in @ts are rebuilt on every call.
 *
 * Markers.  With MPA Markers negotiated, each FPDU carries its own (tx.h):
 * the bio_vecs of its header, pieces and trailer are cut at their plain
 * offsets and a bio_vec of the Marker goes in between, so a Marker may
 * split the header, a (spliced or copied) payload page or PAD from CRC.
 * The Markers live in the FPDU description and are copied by TCP.
 *
 * A partial send.  TCP may take part of an FPDU.  That FPDU then counts as
 * not taken, and the sink remembers how many of its octets went out
 * (@skip); the engine describes the same FPDU again on its next call
 * (same message offset, same pieces) and the sink skips those octets.
 * Should its length differ (its memory was re-registered meanwhile), the
 * stream cannot be continued: -EIO.
 *
 * Alignment (RFC 5044 section 8).  Before an FPDU that would cross the
 * next segment boundary, the data queued so far is closed (the tail skb's
 * eor, what MSG_EOR does at the end of a sendmsg), so the FPDU starts a
 * segment.  Full-sized FPDUs are the MSS long when the MSS is a multiple
 * of 4 (tx.c) and go one per segment, header first, in skbs as large as
 * TCP likes; small FPDUs still share segments.  When full FPDUs are
 * shorter than the MSS (an MSS not a multiple of 4, Markers, max_fpdu)
 * each takes an skb of its own: the cost of alignment there.  A receiver
 * so rarely has to join a header or a trailer from two segments (siw in
 * 6.12 gets a trailer split over two skbs wrong: Documentation/admin.rst,
 * Interoperability).  Best effort: the plan (rsw_tx_sock_plan()) works
 * from the octets queued in the tail skb and TCP's mss_cache when the
 * batch starts, and TCP still cuts segments where the plan cannot see:
 * SACK blocks shortening segments (tcp_current_mss()), a window edge, an
 * skb out of fragment slots (spliced Read Responses mostly), a send that
 * memory pressure stopped inside an FPDU, an MSS below the FPDU size.
 * What follows such a cut is shifted until the next planned cut or the
 * end of the skb.
 *
 * Locking.  The caller owns the socket (lock_sock()) across the engine's
 * whole run, so that nothing else of the connection (the stream's RX, which
 * runs in data-ready, see stream.c) interleaves with a batch; each batch
 * goes to tcp_sendmsg_locked().  Ownership also covers the tail skb whose
 * control block (eor) the alignment writes: only tcp_sendmsg_locked()'s
 * own backlog flush moves or frees skbs meanwhile, and no skb pointer is
 * kept across it.  Never called from data-ready (bh_lock_sock() would
 * satisfy sock_owned_by_me() too), never waits for send buffer space.
 */
#include <linux/bvec.h>
#include <linux/mm.h>
#include <linux/net.h>
#include <linux/socket.h>
#include <linux/uio.h>
#include <linux/vmalloc.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "internal.h"
#include "fpdu.h"

/* Page of a kernel address in the linear map or vmalloc space, or NULL. */
static struct page *rsw_tx_sock_page(const void *kva)
{
	if (virt_addr_valid(kva))
		return virt_to_page(kva);
	if (is_vmalloc_addr(kva))
		return vmalloc_to_page(kva);
	return NULL;
}

/*
 * Building one FPDU's bio_vecs: where the next one goes, and the FPDU's
 * Markers (tx.h): @pos is the plain offset of the next octet appended, @k
 * the next Marker, which goes right before plain octet @next.
 */
struct rsw_tx_sock_cur {
	const struct rsw_tx_fpdu *f;
	unsigned int nbv;
	u32 pos;
	u32 k;
	u32 next;
};

static bool rsw_tx_sock_bvec(struct rsw_tx_sock *ts,
			     struct rsw_tx_sock_cur *c, struct page *page,
			     u32 off, u32 len, bool zc);

/* Append [@kva, @kva + @len) cut at page ends; false if out of room. */
static bool rsw_tx_sock_kva(struct rsw_tx_sock *ts, struct rsw_tx_sock_cur *c,
			    const void *kva, u32 len, bool marker)
{
	while (len) {
		u32 off = offset_in_page(kva);
		u32 n = min_t(u32, len, PAGE_SIZE - off);
		struct page *page = rsw_tx_sock_page(kva);

		if (!page)
			return false;
		if (marker) {
			if (c->nbv == ARRAY_SIZE(ts->bv))
				return false;
			ts->zc[c->nbv] = false;
			bvec_set_page(&ts->bv[c->nbv++], page, n, off);
		} else if (!rsw_tx_sock_bvec(ts, c, page, off, n, false)) {
			return false;
		}
		kva += n;
		len -= n;
	}
	return true;
}

/* Marker c->k goes in now, before plain octet c->next. */
static bool rsw_tx_sock_marker(struct rsw_tx_sock *ts,
			       struct rsw_tx_sock_cur *c)
{
	const struct rsw_mpa_marker *m = &c->f->mk[c->k++];

	c->next = c->k < c->f->nmk ? rsw_mpa_mk_plain(c->f->start, c->k) :
				     U32_MAX;
	return rsw_tx_sock_kva(ts, c, m, sizeof(*m), true);
}

/*
 * Append FPDU octets [@off, @off + @len) of @page, the Markers that fall
 * before or among them in their places; false if out of room.
 */
static bool rsw_tx_sock_bvec(struct rsw_tx_sock *ts,
			     struct rsw_tx_sock_cur *c, struct page *page,
			     u32 off, u32 len, bool zc)
{
	u32 n;

	while (len) {
		if (c->pos == c->next) {
			if (!rsw_tx_sock_marker(ts, c))
				return false;
			continue;
		}
		if (c->nbv == ARRAY_SIZE(ts->bv))
			return false;
		n = min(len, c->next - c->pos);
		ts->zc[c->nbv] = zc;
		bvec_set_page(&ts->bv[c->nbv++], page, n, off);
		off += n;
		len -= n;
		c->pos += n;
	}
	return true;
}

/*
 * Whether a page piece can go to TCP by reference: MSG_SPLICE_PAGES exists
 * (6.5 on), the page is one TCP may hold (not slab, referenced), and it
 * belongs to a user MR, whose pages hold the process's data for as long
 * as they live.  A fast-registered page is the kernel consumer's: TCP
 * reads a spliced page at (re)transmit time, which a peer with a shut
 * window puts after an invalidation, when the consumer may have reused it.
 * A page read through a memory window (RSW_MR_HOLD_WINDOW) is the
 * process's, but the window can be invalidated while the process keeps
 * and rewrites the memory: copied as well.
 */
static bool rsw_tx_sock_can_splice(const struct rsw_tx_fpdu *f,
				   const struct rsw_tx_piece *p)
{
	return rsw_have_splice_pages() && f->splice &&
	       p->hold == RSW_MR_HOLD_PAGE && sendpage_ok(p->page);
}

/*
 * The bio_vecs of FPDU @f, Markers in place (none lies past the CRC);
 * its length in the stream in *@len, or false.
 */
static bool rsw_tx_sock_fpdu(struct rsw_tx_sock *ts, unsigned int *nbv,
			     const struct rsw_tx_fpdu *f, u32 *len)
{
	struct rsw_tx_sock_cur c = {
		.f = f, .nbv = *nbv,
		.next = f->nmk ? rsw_mpa_mk_plain(f->start, 0) : U32_MAX,
	};
	u32 i;

	if (!rsw_tx_sock_kva(ts, &c, f->hdr_octets, f->hdr_len, false))
		return false;
	for (i = 0; i < f->npieces; i++) {
		const struct rsw_tx_piece *p = &f->piece[i];

		if (!p->page) {
			if (!rsw_tx_sock_kva(ts, &c, p->kva, p->len, false))
				return false;
			continue;
		}
		if (!rsw_tx_sock_bvec(ts, &c, p->page, p->off, p->len,
				      rsw_tx_sock_can_splice(f, p)))
			return false;
	}
	if (!rsw_tx_sock_kva(ts, &c, f->trailer, f->trailer_len, false) ||
	    c.k != f->nmk)
		return false;
	*nbv = c.nbv;
	*len = f->hdr_len + f->payload_len + f->trailer_len +
	       f->nmk * RSW_MPA_MARKER_LEN;
	return true;
}

/*
 * Which of the @n FPDUs of lengths @len[] must start a TCP segment, as a
 * bit mask: each one that would cross a boundary of @mss octets when
 * appended after @fill octets already queued since the last boundary.
 * With @cont, FPDU 0 is one that went out in part and goes on where it
 * was (len[0] is then what is left of it).
 */
u32 rsw_tx_sock_plan(u32 fill, u32 mss, const u32 *len, unsigned int n,
		     bool cont)
{
	u32 cut = 0;
	unsigned int i;

	BUILD_BUG_ON(RSW_TX_BATCH > 32);
	if (!mss)
		return 0;
	n = min(n, 32U);
	for (i = 0; i < n; i++) {
		if (fill && fill + len[i] > mss && !(i == 0 && cont)) {
			cut |= BIT(i);
			fill = 0;
		}
		fill = (fill + len[i]) % mss;
	}
	return cut;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_tx_sock_plan);

/*
 * Octets queued since the last segment boundary: those of the tail skb
 * past its last multiple of @mss, if more may still be appended to it.
 */
static u32 rsw_tx_sock_fill(struct sock *sk, u32 mss)
{
	const struct sk_buff *skb = tcp_write_queue_tail(sk);

	if (!skb || !mss || !tcp_skb_can_collapse_to(skb))
		return 0;
	return skb->len % mss;
}

/* Close the queued data: what comes next starts a new skb and segment. */
static void rsw_tx_sock_cut(struct sock *sk)
{
	struct sk_buff *skb = tcp_write_queue_tail(sk);

	if (skb)
		TCP_SKB_CB(skb)->eor = 1;
}

/* FPDUs of @len[] covered whole by @sent octets; the rest in ts->skip. */
static int rsw_tx_sock_taken(struct rsw_tx_sock *ts, const u32 *len,
			     unsigned int n, size_t sent)
{
	unsigned int i;

	for (i = 0; i < n && sent >= len[i]; i++)
		sent -= len[i];
	ts->skip = sent;
	ts->skip_len = sent ? len[i] : 0;
	return i;
}

/* Whether bv[@j] goes in the run that starts at bv[@i]. */
static bool rsw_tx_sock_same_run(const struct rsw_tx_sock *ts,
				 unsigned int i, unsigned int j)
{
	return j == i || (ts->zc[j] == ts->zc[i] && !test_bit(j, ts->cut));
}

/*
 * Send bv[@first, @end) from octet @skip of bv[@first] in runs of equal
 * ts->zc: spliced runs with MSG_SPLICE_PAGES, the others copied; a run
 * also ends before a bio_vec in ts->cut (an FPDU that starts a segment),
 * whose run then closes what TCP has queued.  Octets sent (fewer when TCP
 * is full), or a negative errno if nothing was.
 */
static ssize_t rsw_tx_sock_runs(struct rsw_tx_sock *ts, unsigned int first,
				unsigned int end, size_t skip, int flags)
{
	ssize_t done = 0;
	unsigned int i, j;
	int ret;

	for (i = first; i < end; i = j) {
		struct msghdr msg = { .msg_flags = flags };
		size_t run = 0;

		for (j = i; j < end && rsw_tx_sock_same_run(ts, i, j); j++)
			run += ts->bv[j].bv_len;
		if (test_bit(i, ts->cut)) {
			rsw_tx_sock_cut(ts->sock->sk);
			ts->cuts++;
		}
		run -= skip;
		/* More follows in this batch: let TCP coalesce. */
		if (j < end)
			msg.msg_flags |= MSG_MORE;
		if (ts->zc[i])
			msg.msg_flags |= RSW_MSG_SPLICE_PAGES;
		iov_iter_bvec(&msg.msg_iter, ITER_SOURCE, ts->bv + i, j - i,
			      run + skip);
		iov_iter_advance(&msg.msg_iter, skip);
		skip = 0;
		ret = tcp_sendmsg_locked(ts->sock->sk, &msg,
					 msg_data_left(&msg));
		if (ret < 0)
			return done ? done : ret;
		if (ts->zc[i])
			ts->spliced += ret;
		if (ret > 0)
			rsw_route_add(ts->route, ts->zc[i] ?
				     RSW_STAT_TX_ZC_OCTETS :
				     RSW_STAT_TX_COPIED_OCTETS, ret);
		if (ret)
			ts->corked = msg.msg_flags & MSG_MORE;
		done += ret;
		if (ret < run)
			break;
	}
	return done;
}

/*
 * Mark in ts->cut the first bio_vec (@fbv[i]) of each of the @n FPDUs of
 * @len[] that must start a segment; the first goes on from ts->skip.
 */
static void rsw_tx_sock_align(struct rsw_tx_sock *ts, const u32 *len,
			      const unsigned int *fbv, unsigned int n)
{
	struct sock *sk = ts->sock->sk;
	u32 mss = READ_ONCE(tcp_sk(sk)->mss_cache);
	u32 left[RSW_TX_BATCH];
	unsigned int i;
	u32 cut;

	memcpy(left, len, n * sizeof(*len));
	if (n)
		left[0] -= ts->skip;
	cut = rsw_tx_sock_plan(rsw_tx_sock_fill(sk, mss), mss, left, n,
			       ts->skip);
	for (i = 0; i < n; i++) {
		if (cut & BIT(i))
			__set_bit(fbv[i], ts->cut);
	}
}

static int rsw_tx_sock_send(void *ctx, const struct rsw_tx_fpdu *f,
			    unsigned int n, bool more)
{
	struct rsw_tx_sock *ts = ctx;
	int flags = MSG_DONTWAIT | MSG_NOSIGNAL;
	u32 len[RSW_TX_BATCH];
	unsigned int fbv[RSW_TX_BATCH];
	unsigned int i, first, nbv = 0;
	size_t skip;
	ssize_t ret;
	int taken;

	sock_owned_by_me(ts->sock->sk);
	if (more)
		flags |= MSG_MORE;
	bitmap_zero(ts->cut, RSW_TX_SOCK_BVECS);
	for (i = 0; i < n && i < RSW_TX_BATCH; i++) {
		fbv[i] = nbv;
		if (!rsw_tx_sock_fpdu(ts, &nbv, &f[i], &len[i]))
			return -EFAULT;
	}
	/*
	 * The FPDU sent in part must come back the same; if its source
	 * changed length meanwhile (re-registered memory) the stream is lost.
	 */
	if (ts->skip && ts->skip_len != len[0])
		return -EIO;
	rsw_tx_sock_align(ts, len, fbv, i);
	/* Skip what went out already: whole bio_vecs, then a part of one. */
	skip = ts->skip;
	for (first = 0; first < nbv && skip >= ts->bv[first].bv_len; first++)
		skip -= ts->bv[first].bv_len;
	ret = rsw_tx_sock_runs(ts, first, nbv, skip, flags);
	if (ret == -EAGAIN)
		return 0;
	if (ret < 0)
		return ret;
	rsw_route_add(ts->route, RSW_STAT_TX_OCTETS, ret);
	taken = rsw_tx_sock_taken(ts, len, i, ts->skip + ret);
	rsw_route_add(ts->route, RSW_STAT_TX_FPDUS, taken);
	return taken;
}

const struct rsw_tx_sink_ops rsw_tx_sock_ops = { .send = rsw_tx_sock_send };
EXPORT_SYMBOL_IF_KUNIT(rsw_tx_sock_ops);

void rsw_tx_sock_init(struct rsw_tx_sock *ts, struct socket *sock)
{
	ts->sock = sock;
	ts->skip = 0;
	ts->skip_len = 0;
	ts->corked = false;
	ts->route = NULL;
}
EXPORT_SYMBOL_IF_KUNIT(rsw_tx_sock_init);
