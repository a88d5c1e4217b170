// SPDX-License-Identifier: GPL-2.0
/*
 * Mappings of kernel rings into a process: the CQ ring and the send and
 * receive queues of user QPs, each one vmalloc_user() buffer published to
 * the process as an rdma_user_mmap_entry of its ucontext.
 *
 * Lifetime.  The object that owns the ring (CQ, QP) creates the entry
 * with rsw_umap_insert(), which takes over the buffer, and removes it when
 * the object is destroyed with rsw_umap_remove(); ib_core frees the entry
 * through ops.mmap_free once no mmap() is using it any more, and only
 * then is the buffer released.  Pages already mapped into a process are
 * held by its page tables (remap_vmalloc_range() takes a reference on
 * each), so a process that keeps a mapping past destroy, or past device
 * removal (ib_core's disassociation destroys the objects first), keeps a
 * private, dead copy and never reaches freed memory.
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "internal.h"

struct rsw_umap {
	struct rdma_user_mmap_entry base;
	void *buf;		/* vmalloc_user(), freed with the entry */
	size_t len;		/* page aligned */
};

static struct rsw_umap *to_rsw_umap(struct rdma_user_mmap_entry *e)
{
	return container_of(e, struct rsw_umap, base);
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

/* ops.mmap: map a whole entry, shared, as it was inserted. */
int rsw_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *e;
	int ret;

	e = rdma_user_mmap_entry_get(uctx, vma);
	if (!e)
		return -EINVAL;
	/* Rings are data: never executable. */
	if (vma->vm_flags & VM_EXEC)
		ret = -EPERM;
	else
		ret = remap_vmalloc_range(vma, to_rsw_umap(e)->buf, 0);
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
