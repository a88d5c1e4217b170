/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel-version differences, each behind one small named helper.  No other
 * file tests LINUX_VERSION_CODE.
 *
 * Targets: Debian's 6.1 and 6.12 kernels (and newer where this still builds).
 * Checked against both header trees and found identical, so used directly:
 *  - rdma_link_ops.newlink(ibdev_name, ndev), rdma_link_(un)register();
 *  - ib_register_device(dev, name, dma_device) with a NULL dma_device selects
 *    ib_core's virtual DMA (CONFIG_INFINIBAND_VIRT_DMA=y in both configs),
 *    so no dma_ops or DMA parent are needed;
 *  - ops.dealloc_driver, ib_unregister_device{,_queued}(), and nldev's
 *    dellink requiring IBK_ALLOW_USER_UNREG in attrs.kernel_cap_flags;
 *  - ib_device_set_netdev() (ib_core holds its own tracked netdev reference
 *    and answers get_netdev from it) and netdev_hold()/netdev_put();
 *  - ib_device->uverbs_cmd_mask is filled by ib_alloc_device() with every
 *    write command but the fast-path ones, which a driver opts into;
 *  - the device, port, GID, P_Key, PD and ucontext ops used by verbs.c;
 *  - <kunit/visibility.h> and EXPORT_SYMBOL_IF_KUNIT().
 * Known differences not used yet (add helpers here when they are):
 *  - ops.reg_user_mr_dmabuf takes a struct ib_udata * in 6.1 and a
 *    struct uverbs_attr_bundle * in 6.12 (create_cq too: rsw_uarg below);
 *  - IB_SPEED_XDR exists from 6.6 only;
 *  - ib_device_get_netdev() is declared in <rdma/ib_verbs.h> in 6.12 only.
 */
#ifndef RDMAP_SW_COMPAT_H
#define RDMAP_SW_COMPAT_H

#include <linux/mm.h>
#include <linux/module.h>
#include <linux/socket.h>
#include <linux/version.h>
#include <kunit/visibility.h>
#include <rdma/ib_verbs.h>

/*
 * Register a software device: no DMA-capable parent, so ib_core stashes
 * kernel virtual addresses in ib_sge/scatterlist DMA addresses.
 *
 * uverbs builds its command table at registration.  The user QP doorbell
 * (user ABI) is a post_send command with no work request, so that write
 * command must be enabled; post_recv too (an empty one flushes what the
 * process posted to a QP in ERROR).  poll_cq and req_notify_cq stay off:
 * the process does both on the mapped ring.
 */
static inline int rsw_register_sw_device(struct ib_device *ibdev,
					 const char *name)
{
	ibdev->uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
				  BIT_ULL(IB_USER_VERBS_CMD_POST_RECV);
	return ib_register_device(ibdev, name, NULL);
}

/*
 * KUnit suites import the namespace EXPORT_SYMBOL_IF_KUNIT() exports into;
 * MODULE_IMPORT_NS() takes a bare identifier up to 6.12, a string after.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 13, 0)
#define RSW_IMPORT_KUNIT_NS() MODULE_IMPORT_NS("EXPORTED_FOR_KUNIT_TESTING")
#else
#define RSW_IMPORT_KUNIT_NS() MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING)
#endif

/*
 * ops.create_cq (and ops.reg_user_mr_dmabuf) get the caller's udata in 6.1
 * and, from 6.11, the uverbs attribute bundle that holds it; kernel callers
 * pass NULL either way.  Implementations take a struct rsw_uarg * and ask
 * rsw_uarg_udata() for the udata.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
#include <rdma/uverbs_ioctl.h>
#define rsw_uarg uverbs_attr_bundle

static inline struct ib_udata *rsw_uarg_udata(struct rsw_uarg *uarg)
{
	return uarg ? &uarg->driver_udata : NULL;
}
#else
#define rsw_uarg ib_udata

static inline struct ib_udata *rsw_uarg_udata(struct rsw_uarg *uarg)
{
	return uarg;
}
#endif

/*
 * Kernel pointer behind a virtual DMA address (SGE addr, page list entry).
 * ib_virt_dma_to_ptr() exists from 6.4 (in 6.12, not in Debian's 6.1).
 */
static inline void *rsw_virt_dma_to_ptr(u64 dma_addr)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 4, 0)
	return ib_virt_dma_to_ptr(dma_addr);
#else
	return (void *)(uintptr_t)dma_addr;
#endif
}

/*
 * sendmsg() with MSG_SPLICE_PAGES (6.5 on) lets TCP hold pages by reference
 * (zero copy).  Before 6.5, rsw_have_splice_pages() is false and
 * RSW_MSG_SPLICE_PAGES is no flag at all: every byte is copied.  Test the
 * version, not #ifdef MSG_SPLICE_PAGES: Debian's 6.1 declares the flag (a
 * stable backport) but its TCP does not honour it.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 5, 0)
#define RSW_MSG_SPLICE_PAGES MSG_SPLICE_PAGES
#else
#define RSW_MSG_SPLICE_PAGES 0
#endif

static inline bool rsw_have_splice_pages(void)
{
	return RSW_MSG_SPLICE_PAGES != 0;
}

/*
 * Set or clear @flags on a VMA being mapped (ops.mmap): vm_flags is written
 * through vm_flags_set()/vm_flags_clear() from 6.3 on, directly before.
 */
static inline void rsw_vma_set_flags(struct vm_area_struct *vma,
				     vm_flags_t flags)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	vm_flags_set(vma, flags);
#else
	vma->vm_flags |= flags;
#endif
}

static inline void rsw_vma_clear_flags(struct vm_area_struct *vma,
				       vm_flags_t flags)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	vm_flags_clear(vma, flags);
#else
	vma->vm_flags &= ~flags;
#endif
}

/*
 * MR walks take user pages' kernel addresses with page_address(): a page
 * of high memory has none while unmapped.  Supported kernels are 64-bit.
 */
/*
 * net.core.max_skb_frags (KUnit lowers it to split an FPDU over skbs): a
 * field of net_hotdata from 6.9 on, a variable of its own before.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 9, 0)
#include <net/hotdata.h>
#define rsw_max_skb_frags net_hotdata.sysctl_max_skb_frags
#else
#include <linux/skbuff.h>
#define rsw_max_skb_frags sysctl_max_skb_frags
#endif

#ifdef CONFIG_HIGHMEM
#error "rdmap_sw needs a kernel without CONFIG_HIGHMEM (a 64-bit kernel)"
#endif

#endif /* RDMAP_SW_COMPAT_H */
