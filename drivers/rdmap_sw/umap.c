// SPDX-License-Identifier: GPL-2.0
/*
 * Mappings of kernel rings into a process: the CQ ring and the send and
 * receive queues of user QPs and SRQs, each one zeroed vmalloc buffer
 * (rsw_umap_alloc()) published to the process as an rdma_user_mmap_entry
 * of its ucontext.
 *
 * Accounting.  The process chooses the sizes, so what it makes the kernel
 * allocate for it is charged to its memory cgroup (RSW_GFP_USER: rings
 * here, the slot shadows and CQ back-pointers in ring.c and cq.c).  A
 * process over its memory.max gets -ENOMEM at create time instead of
 * taking memory from kernel ULPs; the request fails rather than wake the
 * OOM killer, as it is one the caller can simply not make.  vmalloc_user() takes no gfp flags, so
 * the buffer comes from __vmalloc() without VM_USERMAP, which
 * remap_vmalloc_range() insists on: rsw_mmap() inserts the pages one by one
 * (vm_insert_page(), exported on 6.1 and 6.12), which is what
 * remap_vmalloc_range() does inside.
 *
 * Lifetime.  The object that owns the ring (CQ, QP, SRQ) creates the
 * entry with rsw_umap_insert(), which takes over the buffer, and removes
 * it with rsw_umap_remove() when the object is destroyed, or when a resize
 * (resize_cq, modify_srq) has switched to a new ring with an entry of its
 * own and no longer touches the old one; ib_core frees the entry
 * through ops.mmap_free once no mmap() is using it any more, and only
 * then is the buffer released.  Pages already mapped into a process are
 * held by its page tables (vm_insert_page() takes a reference on each),
 * so a process that keeps a mapping past destroy, or past device
 * removal (ib_core's disassociation destroys the objects first), keeps a
 * private, dead copy and never reaches freed memory.
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "internal.h"

struct rsw_umap {
	struct rdma_user_mmap_entry base;
	void *buf;		/* rsw_umap_alloc(), freed with the entry */
	size_t len;		/* page aligned */
};

static struct rsw_umap *to_rsw_umap(struct rdma_user_mmap_entry *e)
{
	return container_of(e, struct rsw_umap, base);
}

void *rsw_umap_alloc(size_t len, bool user)
{
	gfp_t gfp = (user ? RSW_GFP_USER : GFP_KERNEL) | __GFP_ZERO;

	if (WARN_ON_ONCE(!PAGE_ALIGNED(len) || !len))
		return NULL;
	return __vmalloc(len, gfp);
}

struct rsw_umap *rsw_umap_insert(struct ib_ucontext *uctx, void *buf,
				 size_t len, u64 *offset)
{
	struct rsw_umap *um;
	int ret;

	if (WARN_ON_ONCE(!PAGE_ALIGNED(len) || !len))
		return ERR_PTR(-EINVAL);
	um = kzalloc(sizeof(*um), GFP_KERNEL);
	if (!um)
		return ERR_PTR(-ENOMEM);
	um->buf = buf;
	um->len = len;
	ret = rdma_user_mmap_entry_insert(uctx, &um->base, len);
	if (ret) {
		kfree(um);
		return ERR_PTR(ret);
	}
	*offset = rdma_user_mmap_get_offset(&um->base);
	return um;
}

void rsw_umap_remove(struct rsw_umap *um)
{
	rdma_user_mmap_entry_remove(&um->base);
}

/*
 * Insert every page of @um into @vma, which rdma_user_mmap_entry_get()
 * found to be exactly as long.  A failure part way leaves the pages
 * inserted so far to the unmapping of the VMA that mmap() does on error.
 */
static int rsw_umap_insert_pages(struct rsw_umap *um,
				 struct vm_area_struct *vma)
{
	size_t off;
	int ret;

	rsw_vma_set_flags(vma, VM_DONTEXPAND | VM_DONTDUMP);
	/* rsw_mmap() refused PROT_EXEC; mprotect() may not add it later. */
	rsw_vma_clear_flags(vma, VM_MAYEXEC);
	for (off = 0; off < um->len; off += PAGE_SIZE) {
		ret = vm_insert_page(vma, vma->vm_start + off,
				     vmalloc_to_page(um->buf + off));
		if (ret)
			return ret;
	}
	return 0;
}

/* ops.mmap: map a whole entry, shared, as it was inserted. */
int rsw_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *e;
	int ret;

	if (!rsw_uctx_abi_ok(container_of(uctx, struct rsw_ucontext, base)))
		return -EINVAL;
	e = rdma_user_mmap_entry_get(uctx, vma);
	if (!e)
		return -EINVAL;
	/* Rings are data: never executable. */
	if (vma->vm_flags & VM_EXEC)
		ret = -EPERM;
	else
		ret = rsw_umap_insert_pages(to_rsw_umap(e), vma);
	rdma_user_mmap_entry_put(e);
	return ret;
}

/* ops.mmap_free: the last reference to the entry went. */
void rsw_mmap_free(struct rdma_user_mmap_entry *e)
{
	struct rsw_umap *um = to_rsw_umap(e);

	vfree(um->buf);
	kfree(um);
}
