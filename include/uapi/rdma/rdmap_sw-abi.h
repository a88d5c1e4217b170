/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause */
/*
 * rdmap_sw user ABI: the contract between rdmap_sw.ko and its rdma-core
 * provider.  Both include this file; there is no second copy.
 *
 * Rules: fixed-width __u types only, explicit padding, every struct a
 * multiple of 8 bytes, no kernel types.  Any incompatible change bumps
 * RDMAP_SW_ABI_VERSION (it is the device's uverbs_abi_ver).
 */
#ifndef RDMAP_SW_ABI_H
#define RDMAP_SW_ABI_H

#include <linux/types.h>

#define RDMAP_SW_ABI_VERSION 1

/*
 * Every rdmap_sw device shows this string in its sysfs attribute hca_type
 * (/sys/class/infiniband/<dev>/hca_type); the provider claims a device by
 * it, whatever name the device was given.
 */
#define RDMAP_SW_HCA_TYPE "rdmap_sw"

/* Response of alloc_ucontext (IB_USER_VERBS_CMD_GET_CONTEXT). */
struct rdmap_sw_uresp_alloc_ctx {
	__u32 dev_id;
	__u32 abi_version;
};

#endif /* RDMAP_SW_ABI_H */
