/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmap_sw per-device settings: what new connections of one device use.
 * Module parameters give every new device its defaults; an administrator
 * changes one device at runtime through sysfs attributes of its ib device
 * (/sys/class/infiniband/<dev>/, Documentation/admin.rst).  A connection
 * takes one snapshot (rsw_settings_get()) when it starts and keeps it:
 * changes apply to connections set up afterwards, never to running ones.
 * A responder's MPA settings are its listener's snapshot (iw.c), taken
 * when the listener was created; the rest that of its Request's arrival.
 *
 * Locking: rsw_device.settings_lock (a plain spinlock, process context
 * only) guards the whole struct, so a snapshot is always one consistent
 * set of values.
 */
#ifndef _RDMAP_SW_SETTINGS_H
#define _RDMAP_SW_SETTINGS_H

#include <linux/math.h>
#include <linux/types.h>

struct rsw_device;
struct rsw_mpa_params;
struct socket;

/*
 * CRC policy (RFC 5044 section 7.1.1 C): either side asking turns CRC on
 * for both directions, so "off" only stops us asking.  "required" also
 * refuses a Reply without C to our Request that had it: such a responder
 * does not follow the RFC and may send no CRC.
 */
enum rsw_crc_policy {
	RSW_CRC_OFF,
	RSW_CRC_ON,
	RSW_CRC_REQUIRED,
};

/*
 * Every field is a u32: sysfs reaches each through one accessor.
 * @crc:          enum rsw_crc_policy
 * @mpa_rev:      revision an initiator offers, the most a responder uses
 * @p2p:          initiator: ask for the RFC 6581 peer-to-peer model (0/1)
 * @markers:      ask for MPA Markers in what we receive (0/1; a peer's
 *                ask is honoured either way)
 * @rtr:          RSW_MPA_RTR_* types an initiator offers and a responder
 *                accepts (never empty)
 * @rtr_prefer:   one RSW_MPA_RTR_* type a responder picks first when the
 *                offer has it; 0: Write, then Read, then Send
 * @max_fpdu:     largest FPDU we send (octets: length field, ULPDU, pad,
 *                CRC; with Markers the wire adds 4 per Marker); 0: MSS-bound
 *                only
 * @dead_peer_s:  a connection whose peer stopped answering ends within
 *                about this many seconds (TCP_USER_TIMEOUT and keepalive);
 *                0: TCP's own defaults (many minutes)
 */
struct rsw_settings {
	u32	crc;
	u32	mpa_rev;
	u32	p2p;
	u32	markers;
	u32	rtr;
	u32	rtr_prefer;
	u32	max_fpdu;
	u32	dead_peer_s;
	u32	peer_ird_ord;	/* 1..RSW_MAX_RD_ATOM */
};

/* Lower bound of a non-zero max_fpdu: room for any header and data. */
#define RSW_SETTINGS_MIN_FPDU	128
#define RSW_SETTINGS_MIN_DEAD_S	5
#define RSW_SETTINGS_MAX_DEAD_S	3600

/*
 * The longest ULPDU an FPDU of at most @max_fpdu octets carries: the
 * length field (2), the ULPDU and its pad to a multiple of 4, the CRC (4).
 * 0 for no cap.
 */
static inline u32 rsw_settings_max_ulpdu(const struct rsw_settings *set)
{
	if (!set->max_fpdu)
		return 0;
	return round_down(set->max_fpdu - 4, 4) - 2;
}

void rsw_settings_init(struct rsw_device *rsw);
void rsw_settings_get(struct rsw_device *rsw, struct rsw_settings *out);
/* The MPA policy of a new connection: @lp from the device's settings. */
void rsw_settings_mpa(const struct rsw_settings *set,
		      struct rsw_mpa_params *lp);
/* Dead-peer detection on a connection's socket (before it is attached). */
void rsw_settings_sock(const struct rsw_settings *set, struct socket *sock);

extern const struct attribute_group rsw_dev_attr_group;

#endif /* _RDMAP_SW_SETTINGS_H */
