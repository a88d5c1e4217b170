// SPDX-License-Identifier: GPL-2.0
/*
 * rdmap_sw per-device settings (settings.h): module-parameter defaults,
 * the sysfs attributes of each ib device, and what a new connection takes
 * from them.
 *
 * Lifetime: the settings live in struct rsw_device and die with it; sysfs
 * callbacks run only while the device's attributes exist (ib_core removes
 * them at unregistration), so no reference is taken here.
 */
#include <linux/capability.h>
#include <linux/device.h>
#include <linux/kernel.h>
#include <linux/moduleparam.h>
#include <linux/net.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <linux/tcp.h>
#include <net/sock.h>
#include <net/tcp.h>
#include <rdma/rdmap_sw-abi.h>

#include "internal.h"

static bool rsw_mpa_crc = true;
module_param_named(mpa_crc, rsw_mpa_crc, bool, 0644);
MODULE_PARM_DESC(mpa_crc,
		 "Default of new devices: ask for MPA CRC32c (default Y); a peer that asks gets it anyway");

static bool rsw_peer_to_peer = true;
module_param_named(peer_to_peer, rsw_peer_to_peer, bool, 0644);
MODULE_PARM_DESC(peer_to_peer,
		 "Default of new devices: an initiator asks for the RFC 6581 peer-to-peer model (default Y)");

static bool rsw_mpa_markers;
module_param_named(mpa_markers, rsw_mpa_markers, bool, 0644);
MODULE_PARM_DESC(mpa_markers,
		 "Default of new devices: ask for MPA Markers in what new connections receive (default N); a peer that asks gets them anyway");

static uint rsw_mpa_rev = RSW_MPA_REV_2;
module_param_named(mpa_rev, rsw_mpa_rev, uint, 0644);
MODULE_PARM_DESC(mpa_rev,
		 "Default of new devices: MPA revision an initiator offers and a responder uses at most: 1 or 2 (default 2)");

void rsw_settings_init(struct rsw_device *rsw)
{
	spin_lock_init(&rsw->settings_lock);
	rsw->settings = (struct rsw_settings) {
		.crc = READ_ONCE(rsw_mpa_crc) ? RSW_CRC_ON : RSW_CRC_OFF,
		.mpa_rev = READ_ONCE(rsw_mpa_rev) == RSW_MPA_REV_1 ?
			   RSW_MPA_REV_1 : RSW_MPA_REV_2,
		.p2p = READ_ONCE(rsw_peer_to_peer),
		.markers = READ_ONCE(rsw_mpa_markers),
		.rtr = RSW_MPA_RTR_ALL,
		.peer_ird_ord = RSW_MAX_RD_ATOM,
	};
}

void rsw_settings_get(struct rsw_device *rsw, struct rsw_settings *out)
{
	spin_lock(&rsw->settings_lock);
	*out = rsw->settings;
	spin_unlock(&rsw->settings_lock);
}

void rsw_settings_mpa(const struct rsw_settings *set,
		      struct rsw_mpa_params *lp)
{
	rsw_mpa_params_init(lp);
	lp->rev = set->mpa_rev;
	lp->crc = set->crc != RSW_CRC_OFF;
	lp->crc_required = set->crc == RSW_CRC_REQUIRED;
	lp->markers = set->markers;
	lp->p2p = set->p2p && lp->rev == RSW_MPA_REV_2;
	lp->rtr = set->rtr;
	lp->rtr_prefer = set->rtr_prefer;
	lp->peer_ird_ord = set->peer_ird_ord;
}

/*
 * Dead-peer detection: unacknowledged data gives up after @dead_peer_s
 * (TCP_USER_TIMEOUT), and an idle connection probes after a third of it,
 * three probes a ninth apart, so a silent peer is found within about
 * two thirds of it.
 */
void rsw_settings_sock(const struct rsw_settings *set, struct socket *sock)
{
	u32 s = set->dead_peer_s;
	struct sock *sk = sock->sk;

	if (!s)
		return;
	tcp_sock_set_user_timeout(sk, s * MSEC_PER_SEC);
	sock_set_keepalive(sk);
	tcp_sock_set_keepidle(sk, max_t(u32, s / 3, 1));
	tcp_sock_set_keepintvl(sk, max_t(u32, s / 9, 1));
	tcp_sock_set_keepcnt(sk, 3);
}

/* ------------------------------------------------------------ sysfs */

/*
 * One setting as a sysfs attribute: where it lives in struct rsw_settings,
 * how its text is parsed (0 or -EINVAL; no side effect) and written back.
 */
struct rsw_setting_attr {
	struct device_attribute dev_attr;
	size_t offset;			/* of a u32 in struct rsw_settings */
	int (*parse)(const char *buf, u32 *v);
	ssize_t (*emit)(char *buf, u32 v);
};

static u32 *rsw_setting_field(struct rsw_settings *set,
			      const struct rsw_setting_attr *sa)
{
	return (u32 *)((u8 *)set + sa->offset);
}

/*
 * The device behind @device: through ib_core's helper, since in shared
 * netns mode other namespaces see these attributes on compat devices,
 * which are not embedded in our ib_device.
 */
static struct rsw_device *rsw_setting_dev(struct device *device)
{
	return rdma_device_to_drv_device(device, struct rsw_device, ibdev);
}

static ssize_t rsw_setting_show(struct device *device,
				struct device_attribute *attr, char *buf)
{
	const struct rsw_setting_attr *sa =
		container_of(attr, struct rsw_setting_attr, dev_attr);
	struct rsw_settings set;

	rsw_settings_get(rsw_setting_dev(device), &set);
	return sa->emit(buf, *rsw_setting_field(&set, sa));
}

static ssize_t rsw_setting_store(struct device *device,
				 struct device_attribute *attr,
				 const char *buf, size_t count)
{
	const struct rsw_setting_attr *sa =
		container_of(attr, struct rsw_setting_attr, dev_attr);
	struct rsw_device *rsw = rsw_setting_dev(device);
	u32 v;

	/* The file's mode is for init_net's root; a namespace's is not it. */
	if (!capable(CAP_NET_ADMIN))
		return -EPERM;
	if (sa->parse(buf, &v))
		return -EINVAL;
	spin_lock(&rsw->settings_lock);
	*rsw_setting_field(&rsw->settings, sa) = v;
	spin_unlock(&rsw->settings_lock);
	return count;
}

static ssize_t rsw_emit_u32(char *buf, u32 v)
{
	return sysfs_emit(buf, "%u\n", v);
}

static const char *const rsw_crc_names[] = {
	[RSW_CRC_OFF] = "off", [RSW_CRC_ON] = "on",
	[RSW_CRC_REQUIRED] = "required",
};

static int rsw_parse_crc(const char *buf, u32 *v)
{
	int i = sysfs_match_string(rsw_crc_names, buf);

	*v = i;
	return i < 0 ? -EINVAL : 0;
}

static ssize_t rsw_emit_crc(char *buf, u32 v)
{
	return sysfs_emit(buf, "%s\n", rsw_crc_names[v]);
}

static int rsw_parse_rev(const char *buf, u32 *v)
{
	if (kstrtou32(buf, 0, v) || (*v != RSW_MPA_REV_1 && *v != RSW_MPA_REV_2))
		return -EINVAL;
	return 0;
}

static int rsw_parse_bool(const char *buf, u32 *v)
{
	bool b;

	if (kstrtobool(buf, &b))
		return -EINVAL;
	*v = b;
	return 0;
}

/* RTR type names, in the order a responder prefers them by default. */
static const struct {
	const char *name;
	u8 type;
} rsw_rtr_names[] = {
	{ "write", RSW_MPA_RTR_WRITE },
	{ "read", RSW_MPA_RTR_READ },
	{ "send", RSW_MPA_RTR_SEND },
};

/* "write read send" for the set @v; "none" if empty. */
static ssize_t rsw_emit_rtr(char *buf, u32 v)
{
	ssize_t n = 0;
	int i;

	for (i = 0; i < ARRAY_SIZE(rsw_rtr_names); i++)
		if (v & rsw_rtr_names[i].type)
			n += sysfs_emit_at(buf, n, "%s%s", n ? " " : "",
					   rsw_rtr_names[i].name);
	if (!n)
		n = sysfs_emit(buf, "none");
	return n + sysfs_emit_at(buf, n, "\n");
}

/* One RTR type name of @len octets at @word, or 0. */
static u8 rsw_rtr_word(const char *word, size_t len)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(rsw_rtr_names); i++)
		if (strlen(rsw_rtr_names[i].name) == len &&
		    !strncmp(word, rsw_rtr_names[i].name, len))
			return rsw_rtr_names[i].type;
	return 0;
}

/* "read", "write send", "write,read": a set of types, possibly empty. */
static int rsw_parse_rtr_set(const char *buf, u32 *v)
{
	const char *sep = " ,\t\n";
	size_t len;
	u8 t;

	*v = 0;
	for (buf += strspn(buf, sep); *buf; buf += strspn(buf, sep)) {
		len = strcspn(buf, sep);
		t = rsw_rtr_word(buf, len);
		if (!t)
			return -EINVAL;
		*v |= t;
		buf += len;
	}
	return 0;
}

/* rtr_types: a non-empty set. */
static int rsw_parse_rtr_types(const char *buf, u32 *v)
{
	if (rsw_parse_rtr_set(buf, v) || !*v)
		return -EINVAL;
	return 0;
}

/* rtr_prefer: one type, or "none". */
static int rsw_parse_rtr_prefer(const char *buf, u32 *v)
{
	*v = 0;
	if (sysfs_streq(buf, "none"))
		return 0;
	if (rsw_parse_rtr_set(buf, v) || hweight32(*v) != 1)
		return -EINVAL;
	return 0;
}

static int rsw_parse_max_fpdu(const char *buf, u32 *v)
{
	if (kstrtou32(buf, 0, v) ||
	    (*v && (*v < RSW_SETTINGS_MIN_FPDU || *v > U16_MAX)))
		return -EINVAL;
	return 0;
}

static int rsw_parse_dead_peer(const char *buf, u32 *v)
{
	if (kstrtou32(buf, 0, v) || *v > RSW_SETTINGS_MAX_DEAD_S ||
	    (*v && *v < RSW_SETTINGS_MIN_DEAD_S))
		return -EINVAL;
	return 0;
}

/* peer_ird_ord: what a peer that says nothing is taken to have. */
static int rsw_parse_peer_ird_ord(const char *buf, u32 *v)
{
	if (kstrtou32(buf, 0, v) || !*v || *v > RSW_MAX_RD_ATOM)
		return -EINVAL;
	return 0;
}

#define RSW_SETTING(_name, _field, _parse, _emit)			\
	static struct rsw_setting_attr rsw_setting_##_name = {		\
		.dev_attr = __ATTR(_name, 0644, rsw_setting_show,	\
				   rsw_setting_store),			\
		.offset = offsetof(struct rsw_settings, _field),	\
		.parse = _parse, .emit = _emit,				\
	}

RSW_SETTING(mpa_crc, crc, rsw_parse_crc, rsw_emit_crc);
RSW_SETTING(mpa_rev, mpa_rev, rsw_parse_rev, rsw_emit_u32);
RSW_SETTING(peer_to_peer, p2p, rsw_parse_bool, rsw_emit_u32);
RSW_SETTING(mpa_markers, markers, rsw_parse_bool, rsw_emit_u32);
RSW_SETTING(rtr_types, rtr, rsw_parse_rtr_types, rsw_emit_rtr);
RSW_SETTING(rtr_prefer, rtr_prefer, rsw_parse_rtr_prefer, rsw_emit_rtr);
RSW_SETTING(max_fpdu, max_fpdu, rsw_parse_max_fpdu, rsw_emit_u32);
RSW_SETTING(dead_peer_s, dead_peer_s, rsw_parse_dead_peer, rsw_emit_u32);
RSW_SETTING(peer_ird_ord, peer_ird_ord, rsw_parse_peer_ird_ord, rsw_emit_u32);

/* sysfs hca_type: how the userspace provider recognises our devices. */
static ssize_t hca_type_show(struct device *device,
			     struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n", RDMAP_SW_HCA_TYPE);
}
static DEVICE_ATTR_RO(hca_type);

/*
 * sysfs abi_versions (RDMAP_SW_SYSFS_ABI): the user ABI versions we speak,
 * so a provider negotiates only with a module that does (rdmap_sw-abi.h).
 * A test build standing in for a module from before the negotiation
 * (RSW_ABI_MAX 1) has none, as those modules had none.  The name must
 * stay RDMAP_SW_SYSFS_ABI's.
 */
#if RSW_ABI_MAX >= RDMAP_SW_ABI_VERSION_NEGOTIATE
static ssize_t abi_versions_show(struct device *device,
				 struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u %u\n", RSW_ABI_MIN, RSW_ABI_MAX);
}
static DEVICE_ATTR_RO(abi_versions);
#endif

static struct attribute *rsw_dev_attrs[] = {
	&dev_attr_hca_type.attr,
#if RSW_ABI_MAX >= RDMAP_SW_ABI_VERSION_NEGOTIATE
	&dev_attr_abi_versions.attr,
#endif
	&rsw_setting_mpa_crc.dev_attr.attr,
	&rsw_setting_mpa_rev.dev_attr.attr,
	&rsw_setting_peer_to_peer.dev_attr.attr,
	&rsw_setting_mpa_markers.dev_attr.attr,
	&rsw_setting_rtr_types.dev_attr.attr,
	&rsw_setting_rtr_prefer.dev_attr.attr,
	&rsw_setting_max_fpdu.dev_attr.attr,
	&rsw_setting_dead_peer_s.dev_attr.attr,
	&rsw_setting_peer_ird_ord.dev_attr.attr,
	NULL,
};

const struct attribute_group rsw_dev_attr_group = {
	.attrs = rsw_dev_attrs,
};
