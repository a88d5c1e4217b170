/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * fuzz-peer's wire side, written from the RFCs (not from the driver's
 * headers, so a shared misreading cannot hide): a seeded RNG, CRC32c, and
 * builders for MPA Request frames (RFC 5044 7.1, RFC 6581) and FPDUs
 * (RFC 5044 framing, RFC 5041 DDP headers, RFC 5040 RDMAP headers).
 * All multi-octet fields are big endian except the MPA CRC, which goes
 * least significant octet first.
 */
#ifndef RSW_TESTS_FUZZ_WIRE_H
#define RSW_TESTS_FUZZ_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ RNG */

/* splitmix64: one 64-bit state, every seed is a good one. */
struct rng {
	uint64_t s;
};

static uint64_t rnd(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Case @idx of run @seed: independent of every other case. */
static void rng_case(struct rng *r, uint64_t seed, uint64_t idx)
{
	r->s = seed * 0x2545f4914f6cdd1dULL + idx * 0x9e3779b97f4a7c15ULL;
	rnd(r);
	rnd(r);
}

static uint32_t below(struct rng *r, uint32_t n)
{
	return n ? (uint32_t)(rnd(r) % n) : 0;
}

static bool chance(struct rng *r, unsigned int pct)
{
	return below(r, 100) < pct;
}

/* ---------------------------------------------------------------- CRC32c */

static uint32_t crc32c_table[256];

static void crc32c_init(void)
{
	uint32_t c;
	int i, k;

	for (i = 0; i < 256; i++) {
		c = (uint32_t)i;
		for (k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0x82f63b78U : c >> 1;
		crc32c_table[i] = c;
	}
}

/* The RFC 3720 CRC32c of @len octets (init ~0, final complement). */
static uint32_t crc32c(const uint8_t *p, size_t len)
{
	uint32_t c = ~0U;

	while (len--)
		c = crc32c_table[(c ^ *p++) & 0xff] ^ (c >> 8);
	return ~c;
}

/* ---------------------------------------------------------- byte buffers */

struct buf {
	uint8_t *p;
	size_t len, cap;
};

static void buf_need(struct buf *b, size_t more)
{
	if (b->len + more <= b->cap)
		return;
	b->cap = (b->len + more) * 2 + 64;
	b->p = realloc(b->p, b->cap);
	if (!b->p)
		abort();
}

static void put_bytes(struct buf *b, const void *p, size_t n)
{
	buf_need(b, n);
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

static void put8(struct buf *b, uint8_t v)
{
	put_bytes(b, &v, 1);
}

static void put16(struct buf *b, uint16_t v)
{
	put8(b, v >> 8);
	put8(b, v & 0xff);
}

static void put32(struct buf *b, uint32_t v)
{
	put16(b, v >> 16);
	put16(b, v & 0xffff);
}

static void put64(struct buf *b, uint64_t v)
{
	put32(b, v >> 32);
	put32(b, v & 0xffffffffU);
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)get16(p) << 16 | get16(p + 2);
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) << 32 | get32(p + 4);
}

static void set16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

/* ------------------------------------------------------------------ MPA */

#define MPA_KEY_REQ	"MPA ID Req Frame"
#define MPA_KEY_REP	"MPA ID Rep Frame"
#define MPA_RR_LEN	20
#define MPA_MAX_PD	512
#define MPA_M		0x80	/* octet 16 */
#define MPA_C		0x40
#define MPA_R		0x20
#define MPA_S		0x10
#define MPA_V2_P2P	0x8000	/* first 16 bits of the RFC 6581 data */
#define MPA_V2_RTR_SEND	0x4000
#define MPA_V2_RTR_WRITE 0x8000	/* second 16 bits */
#define MPA_V2_RTR_READ	0x4000
#define MPA_V2_COUNT	0x3fff

enum rtr { RTR_WRITE = 1, RTR_READ = 2, RTR_SEND = 4 };

/* What a Request offers (or a Reply answered). */
struct mpa_frame {
	uint8_t rev;
	bool markers, crc, reject, enhanced, p2p;
	unsigned int rtr;	/* enum rtr bits */
	uint16_t ird, ord;
	uint16_t pd_len;	/* ULP private data after the RFC 6581 word */
};

static void mpa_put(struct buf *b, const char *key, const struct mpa_frame *f)
{
	uint16_t ulp = f->pd_len, i;

	put_bytes(b, key, 16);
	put8(b, (f->markers ? MPA_M : 0) | (f->crc ? MPA_C : 0) |
		(f->reject ? MPA_R : 0) | (f->enhanced ? MPA_S : 0));
	put8(b, f->rev);
	put16(b, (uint16_t)(ulp + (f->enhanced ? 4 : 0)));
	if (f->enhanced) {
		put16(b, (f->p2p ? MPA_V2_P2P : 0) |
			 (f->rtr & RTR_SEND ? MPA_V2_RTR_SEND : 0) |
			 (f->ird & MPA_V2_COUNT));
		put16(b, (f->rtr & RTR_WRITE ? MPA_V2_RTR_WRITE : 0) |
			 (f->rtr & RTR_READ ? MPA_V2_RTR_READ : 0) |
			 (f->ord & MPA_V2_COUNT));
	}
	for (i = 0; i < ulp; i++)
		put8(b, (uint8_t)(i * 7 + 3));
}

/* Parse a complete Reply of @len octets; false if it is not one. */
static bool mpa_parse_reply(const uint8_t *p, size_t len, struct mpa_frame *f)
{
	uint16_t pd;

	if (len < MPA_RR_LEN || memcmp(p, MPA_KEY_REP, 16))
		return false;
	memset(f, 0, sizeof(*f));
	f->markers = p[16] & MPA_M;
	f->crc = p[16] & MPA_C;
	f->reject = p[16] & MPA_R;
	f->rev = p[17];
	pd = get16(p + 18);
	if (len != MPA_RR_LEN + (size_t)pd)
		return false;
	f->enhanced = f->rev == 2 && (p[16] & MPA_S) && pd >= 4;
	if (f->enhanced) {
		uint16_t a = get16(p + 20), o = get16(p + 22);

		f->p2p = a & MPA_V2_P2P;
		f->rtr = (a & MPA_V2_RTR_SEND ? RTR_SEND : 0) |
			 (o & MPA_V2_RTR_WRITE ? RTR_WRITE : 0) |
			 (o & MPA_V2_RTR_READ ? RTR_READ : 0);
		f->ird = a & MPA_V2_COUNT;
		f->ord = o & MPA_V2_COUNT;
	}
	f->pd_len = pd;
	return true;
}

/* ---------------------------------------------------------------- FPDUs */

enum opcode {
	OP_WRITE = 0, OP_READ_REQ = 1, OP_READ_RESP = 2, OP_SEND = 3,
	OP_SEND_INV = 4, OP_SEND_SE = 5, OP_SEND_SE_INV = 6,
	OP_TERMINATE = 7, OP_IMM = 8, OP_IMM_SE = 9, OP_ATOMIC_REQ = 10,
	OP_ATOMIC_RESP = 11,
};

#define HDR_TAGGED	16	/* ULPDU_Length + DDP tagged header */
#define HDR_UNTAGGED	20	/* ULPDU_Length + DDP untagged header */
#define RREQ_LEN	28

/* The control word as RFC 5041/5040 define it: DV = RV = 1. */
static uint16_t ctrl_word(unsigned int op, bool tagged, bool last)
{
	return (tagged ? 0x8000 : 0) | (last ? 0x4000 : 0) | 0x0100 |
	       0x0040 | (op & 0xf);
}

/* Start an FPDU in @b: ULPDU_Length (filled by fpdu_end) and control. */
static size_t fpdu_begin(struct buf *b, uint16_t ctrl)
{
	size_t at = b->len;

	put16(b, 0);
	put16(b, ctrl);
	return at;
}

static void fpdu_tagged(struct buf *b, unsigned int op, bool last,
			uint32_t stag, uint64_t to)
{
	fpdu_begin(b, ctrl_word(op, true, last));
	put32(b, stag);
	put64(b, to);
}

static void fpdu_untagged(struct buf *b, unsigned int op, bool last,
			  uint32_t inval, uint32_t qn, uint32_t msn,
			  uint32_t mo)
{
	fpdu_begin(b, ctrl_word(op, false, last));
	put32(b, inval);
	put32(b, qn);
	put32(b, msn);
	put32(b, mo);
}

/*
 * Close the FPDU that starts at @at of @b: ULPDU_Length, PAD and the CRC
 * trailer (zero without CRC).  Returns the FPDU's length.
 */
static size_t fpdu_end(struct buf *b, size_t at, bool crc)
{
	size_t ulpdu = b->len - at - 2;
	uint32_t c = 0;

	set16(b->p + at, (uint16_t)ulpdu);
	while ((b->len - at) & 3)
		put8(b, 0);
	if (crc)
		c = crc32c(b->p + at, b->len - at);
	put8(b, c & 0xff);
	put8(b, (c >> 8) & 0xff);
	put8(b, (c >> 16) & 0xff);
	put8(b, c >> 24);
	return b->len - at;
}

/* Recompute the CRC of the complete FPDU @p of @len octets in place. */
static void fpdu_recrc(uint8_t *p, size_t len)
{
	uint32_t c;

	if (len < 8)
		return;
	c = crc32c(p, len - 4);
	p[len - 4] = c & 0xff;
	p[len - 3] = (c >> 8) & 0xff;
	p[len - 2] = (c >> 16) & 0xff;
	p[len - 1] = c >> 24;
}

/* Octets of the FPDU whose ULPDU_Length is @ulpdu (with PAD and CRC). */
static size_t fpdu_total(uint16_t ulpdu)
{
	return (2 + (size_t)ulpdu + 3) / 4 * 4 + 4;
}

/* Terminate codes the RFCs define (RFC 5040 4.8, 5041, 5044, 6581). */
static bool term_valid(unsigned int layer, unsigned int etype,
		       unsigned int ecode)
{
	switch (layer) {
	case 0:		/* RDMAP */
		if (etype == 0)
			return true;
		if (etype == 1)
			return ecode <= 4 || ecode == 9 || ecode == 0xff;
		if (etype == 2)
			return (ecode >= 5 && ecode <= 9) || ecode == 0xff;
		return false;
	case 1:		/* DDP */
		if (etype == 0)
			return true;
		if (etype == 1)
			return ecode <= 4;
		if (etype == 2)
			return ecode >= 1 && ecode <= 6;
		return false;
	case 2:		/* LLP (MPA) */
		return etype == 0 && ecode >= 1 && ecode <= 7;
	}
	return false;
}

#endif /* RSW_TESTS_FUZZ_WIRE_H */
