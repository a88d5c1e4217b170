/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmap_sw: MPA framing arithmetic (RFC 5044): PAD, FPDU length, MULPDU,
 * Marker positions and the CRC trailer.  Pure functions of their arguments,
 * shared by the TX and RX paths; no state, no locking, any context.
 *
 * Stream offsets.  Marker positions are octet offsets in the MPA data
 * stream: offset 0 is the first octet of the first FPDU after the
 * Request/Reply exchange, where the first Marker goes (RFC 5044: Markers
 * start immediately before the first FPDU of full operation and repeat every
 * 512th octet, so the first Marker's FPDUPTR is 0).  Offsets are u32 and may
 * wrap: 2^32 is a multiple of 512, so "TCP sequence number minus the
 * sequence number of the first FPDU" is a valid offset.
 *
 * Which FPDU owns a Marker.  A Marker occupies [m, m + 4) for every m that
 * is a multiple of 512.  It belongs to the FPDU whose octets follow it:
 *  - a Marker at the first octet of an FPDU is part of that FPDU: it comes
 *    before the ULPDU_Length field, is covered by that FPDU's CRC and has
 *    FPDUPTR 0;
 *  - a Marker right after an FPDU's CRC is the next FPDU's first Marker;
 *  - FPDUs start at multiples of 4 (all their lengths are), so a Marker
 *    never splits the CRC; it may sit between PAD and CRC.
 * Inside an FPDU a Marker's FPDUPTR is the number of stream octets from the
 * ULPDU_Length field to the Marker (Markers in between included).
 */
#ifndef _RDMAP_SW_FPDU_H
#define _RDMAP_SW_FPDU_H

#include <linux/crc32c.h>
#include <linux/math.h>
#include <linux/minmax.h>
#include <linux/types.h>
#include <asm/byteorder.h>

#include "wire.h"

/* Non-Marker octets between two consecutive Markers. */
#define RSW_MPA_MARKER_GAP	(RSW_MPA_MARKER_SPACING - RSW_MPA_MARKER_LEN)

/* PAD octets after a ULPDU of @ulpdu_len: aligns ULPDU_Length + ULPDU to 4. */
static inline u32 rsw_mpa_pad(u32 ulpdu_len)
{
	return -(ulpdu_len + RSW_MPA_HDR_LEN) & (RSW_MPA_ALIGN - 1);
}

/* FPDU octets without Markers: ULPDU_Length + ULPDU + PAD + CRC. */
static inline u32 rsw_fpdu_plain_len(u32 ulpdu_len)
{
	return RSW_MPA_HDR_LEN + ulpdu_len + rsw_mpa_pad(ulpdu_len) +
	       RSW_MPA_CRC_LEN;
}

/* Octets from stream offset @off to the next Marker position (0: at one). */
static inline u32 rsw_mpa_next_marker(u32 off)
{
	return -off & (RSW_MPA_MARKER_SPACING - 1);
}

/*
 * Number of Markers inside an FPDU of @plain_len octets without Markers
 * (rsw_fpdu_plain_len()) that starts at stream offset @start.  Marker k
 * (0-based) has rsw_mpa_next_marker(@start) + 508 * k FPDU octets before it
 * and is inside while that is less than @plain_len.
 */
static inline u32 rsw_mpa_markers(u32 start, u32 plain_len)
{
	u32 first = rsw_mpa_next_marker(start);

	if (first >= plain_len)
		return 0;
	return (plain_len - first - 1) / RSW_MPA_MARKER_GAP + 1;
}

/* Offset, from the FPDU's first octet, of its Marker @k. */
static inline u32 rsw_mpa_marker_pos(u32 start, u32 k)
{
	return rsw_mpa_next_marker(start) + k * RSW_MPA_MARKER_SPACING;
}

/*
 * FPDUPTR of Marker @k of the FPDU starting at @start.  When the FPDU opens
 * with a Marker its ULPDU_Length is 4 octets in, so later Markers point 4
 * octets less far back.  Fits in 16 bits for FPDUs of at most 64 KiB, which
 * rsw_mpa_mulpdu() guarantees.
 */
static inline u16 rsw_mpa_fpduptr(u32 start, u32 k)
{
	u32 first = rsw_mpa_next_marker(start);

	if (first)
		return first + k * RSW_MPA_MARKER_SPACING;
	return k ? k * RSW_MPA_MARKER_SPACING - RSW_MPA_MARKER_LEN : 0;
}

/* Marker @k of the FPDU starting at @start, as sent. */
static inline struct rsw_mpa_marker rsw_mpa_marker(u32 start, u32 k)
{
	return (struct rsw_mpa_marker) {
		.rsvd = 0,
		.fpduptr = cpu_to_be16(rsw_mpa_fpduptr(start, k)),
	};
}

/*
 * Receiver side: stream offset of the ULPDU_Length field that a Marker at
 * @marker_off with @fpduptr designates.  The two low bits of FPDUPTR are
 * treated as zero (RFC 5044).
 */
static inline u32 rsw_mpa_marker_hdr(u32 marker_off, u16 fpduptr)
{
	u32 ptr = fpduptr & ~(u32)(RSW_MPA_ALIGN - 1);

	return ptr ? marker_off - ptr : marker_off + RSW_MPA_MARKER_LEN;
}

/*
 * Marker cursor in FPDU octets without Markers ("plain" offsets, 0 being the
 * first octet of ULPDU_Length): Marker @k of the FPDU that starts at stream
 * offset @start goes right before its plain octet rsw_mpa_mk_plain(), and
 * is inside the FPDU while that is below rsw_fpdu_plain_len().  Every
 * Marker inside an FPDU comes before its CRC field (FPDUs start and end at
 * multiples of 4, so none splits the CRC), which is why the CRC covers them
 * all; the one at plain offset plain_len - 4 sits between PAD and CRC.
 */
static inline u32 rsw_mpa_mk_plain(u32 start, u32 k)
{
	return rsw_mpa_next_marker(start) + k * RSW_MPA_MARKER_GAP;
}

/* Index of the first Marker at plain offset @pos or later. */
static inline u32 rsw_mpa_mk_index(u32 start, u32 pos)
{
	u32 first = rsw_mpa_next_marker(start);

	return pos <= first ? 0 : DIV_ROUND_UP(pos - first, RSW_MPA_MARKER_GAP);
}

/* Octets an FPDU carrying @ulpdu_len occupies in the stream at @start. */
static inline u32 rsw_fpdu_len(u32 ulpdu_len, bool markers, u32 start)
{
	u32 len = rsw_fpdu_plain_len(ulpdu_len);

	if (markers)
		len += RSW_MPA_MARKER_LEN * rsw_mpa_markers(start, len);
	return len;
}

/*
 * MULPDU: the largest ULPDU a sender puts in one FPDU for an effective MSS
 * of @emss octets (RFC 5044, definition of MULPDU):
 *   without Markers  EMSS - (6 + EMSS mod 4)
 *   with Markers     EMSS - (6 + 4 * ceil(EMSS / 512) + EMSS mod 4)
 * The Marker term is the most Markers an FPDU of EMSS octets can hold, so the
 * FPDU fits wherever it starts.  The result is capped to what ULPDU_Length
 * can express; with Markers EMSS is first capped to 64 KiB - 1 so that every
 * FPDUPTR fits in 16 bits.  0 if @emss cannot hold an FPDU.
 */
static inline u32 rsw_mpa_mulpdu(u32 emss, bool markers)
{
	u32 overhead;

	if (markers)
		emss = min_t(u32, emss, RSW_MPA_MAX_ULPDU);
	overhead = RSW_MPA_HDR_LEN + RSW_MPA_CRC_LEN + emss % RSW_MPA_ALIGN;
	if (markers)
		overhead += RSW_MPA_MARKER_LEN *
			    DIV_ROUND_UP(emss, RSW_MPA_MARKER_SPACING);
	if (emss <= overhead)
		return 0;
	return min_t(u32, emss - overhead, RSW_MPA_MAX_ULPDU);
}

/*
 * MPA CRC: CRC32c over every FPDU octet before the CRC field (ULPDU_Length,
 * ULPDU, PAD and any Markers inside the FPDU), in stream order.  Start with
 * rsw_mpa_crc_init(), feed the octets with rsw_mpa_crc_update(), and
 * rsw_mpa_crc_final() gives the trailer value in wire order.
 */
static inline u32 rsw_mpa_crc_init(void)
{
	return ~0U;
}

static inline u32 rsw_mpa_crc_update(u32 crc, const void *p, u32 len)
{
	return crc32c(crc, p, len);
}

static inline __le32 rsw_mpa_crc_final(u32 crc)
{
	return cpu_to_le32(~crc);
}

/*
 * The running CRC of an FPDU with Markers, fed in pieces: @len octets at
 * plain offset @pos of the FPDU starting at stream offset @start, each
 * Marker fed right before the octet it precedes (so in stream order, once).
 * The caller advances its own @pos by @len.  A Marker right after the last
 * octet fed is left for the next call, or for rsw_mpa_crc_mk_end().
 */
static inline u32 rsw_mpa_crc_update_mk(u32 crc, u32 start, u32 pos,
					const void *p, u32 len)
{
	u32 k = rsw_mpa_mk_index(start, pos);
	const u8 *q = p;

	while (len) {
		u32 at = rsw_mpa_mk_plain(start, k);
		struct rsw_mpa_marker m;
		u32 n;

		if (at == pos) {
			m = rsw_mpa_marker(start, k++);
			crc = crc32c(crc, &m, sizeof(m));
			continue;
		}
		n = min(len, at - pos);
		crc = crc32c(crc, q, n);
		q += n;
		pos += n;
		len -= n;
	}
	return crc;
}

/*
 * After the last octet before the CRC field (plain offset @pos): the
 * Marker between PAD and CRC, if one sits there, is still the FPDU's.
 */
static inline u32 rsw_mpa_crc_mk_end(u32 crc, u32 start, u32 pos)
{
	u32 k = rsw_mpa_mk_index(start, pos);
	struct rsw_mpa_marker m;

	if (rsw_mpa_mk_plain(start, k) != pos)
		return crc;
	m = rsw_mpa_marker(start, k);
	return crc32c(crc, &m, sizeof(m));
}

/* CRC trailer of @len contiguous FPDU octets (everything before the CRC). */
static inline __le32 rsw_mpa_crc(const void *fpdu, u32 len)
{
	return rsw_mpa_crc_final(rsw_mpa_crc_update(rsw_mpa_crc_init(),
						    fpdu, len));
}

/*
 * CRC trailer of a Marker-free FPDU made of @hdr (from ULPDU_Length, @hdr_len
 * octets) and @payload: the PAD octets are zero and added here.
 */
static inline __le32 rsw_mpa_fpdu_crc(const void *hdr, u32 hdr_len,
				      const void *payload, u32 payload_len)
{
	static const u8 zero_pad[RSW_MPA_ALIGN - 1];
	u32 ulpdu_len = hdr_len - RSW_MPA_HDR_LEN + payload_len;
	u32 crc = rsw_mpa_crc_init();

	crc = rsw_mpa_crc_update(crc, hdr, hdr_len);
	crc = rsw_mpa_crc_update(crc, payload, payload_len);
	crc = rsw_mpa_crc_update(crc, zero_pad, rsw_mpa_pad(ulpdu_len));
	return rsw_mpa_crc_final(crc);
}

#endif /* _RDMAP_SW_FPDU_H */
