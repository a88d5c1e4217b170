// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite rdmap_sw_mem: STags, the DMA MR, fast registration,
 * invalidation, the access checks of every remote and local access, the
 * copy and page walks over registered memory, and memory windows (bound
 * to fast-reg MRs that rsw_mr_kunit_as_user() passes off as user MRs).
 *
 * The suite attaches one rdmap_sw device to a netdev of its own and
 * allocates two PDs through the real ib_core (suite_init); every case
 * makes its own MRs through ib_core (ib_alloc_mr, ib_map_mr_sg,
 * ib_dereg_mr) and frees them with KUnit actions.  IB_WR_REG_MR is driven
 * through rsw_mr_fastreg(), which the QP code will call for it.
 */
#include <kunit/resource.h>
#include <kunit/test.h>
#include <linux/bvec.h>
#include <linux/completion.h>
#include <linux/etherdevice.h>
#include <linux/mm.h>
#include <linux/netdevice.h>
#include <linux/prandom.h>
#include <linux/scatterlist.h>
#include <linux/timer.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

#include "env.h"
#include "internal.h"
#include "wire.h"

RSW_IMPORT_KUNIT_NS();

#define RSW_MT_GUARD 0x5a

static const u8 rsw_mt_mac[ETH_ALEN] = { 0x02, 0x00, 0x5e, 0x10, 0x40, 0x01 };

/* The device and PDs every case uses (suite_init / suite_exit). */
static struct rsw_env_suite rsw_mt;

static int rsw_mt_suite_init(struct kunit_suite *suite)
{
	return rsw_env_suite_init(&rsw_mt, rsw_mt_mac, "rswmt%d", "rswmt0");
}

static void rsw_mt_suite_exit(struct kunit_suite *suite)
{
	rsw_env_suite_exit(&rsw_mt);
}

/* ------------------------------------------------------------------------
 * Fixtures
 */
static void rsw_mt_dereg_action(void *mr)
{
	ib_dereg_mr(mr);
}

static struct ib_mr *rsw_mt_alloc_mr(struct kunit *test, u32 max_sg)
{
	struct ib_mr *mr = ib_alloc_mr(rsw_mt.pd, IB_MR_TYPE_MEM_REG, max_sg);
	int ret;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr);
	ret = kunit_add_action_or_reset(test, rsw_mt_dereg_action, mr);
	KUNIT_ASSERT_EQ(test, ret, 0);
	return mr;
}

static void rsw_mt_dereg(struct kunit *test, struct ib_mr *mr)
{
	kunit_release_action(test, rsw_mt_dereg_action, mr);
}

static void rsw_mt_put_page(void *page)
{
	put_page(page);
}

static void rsw_mt_vfree(void *p)
{
	vfree(p);
}

/* vmalloc'ed, so that MiBs need no high-order pages; freed after the case. */
static u8 *rsw_mt_vmalloc(struct kunit *test, size_t size)
{
	u8 *p = vmalloc(size);

	KUNIT_ASSERT_NOT_NULL(test, p);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, rsw_mt_vfree, p),
			0);
	return p;
}

/* Kernel address of 2^@order zeroed pages, freed after the case. */
static u8 *rsw_mt_pages(struct kunit *test, unsigned int order)
{
	struct page *page;
	int ret;

	page = alloc_pages(GFP_KERNEL | __GFP_COMP | __GFP_ZERO | __GFP_NOWARN,
			   order);
	if (!page)
		kunit_skip(test, "no order-%u pages", order);
	ret = kunit_add_action_or_reset(test, rsw_mt_put_page, page);
	KUNIT_ASSERT_EQ(test, ret, 0);
	return page_address(page);
}

/*
 * Map @n MR pages of @psize at @kva[i] into @mr, the first @fbo and the
 * last @tail bytes left out, as a ULP does with ib_map_mr_sg().  Returns
 * what ib_map_mr_sg() returned.
 */
static int rsw_mt_map(struct kunit *test, struct ib_mr *mr, u8 *const *kva,
		      u32 n, u32 psize, u32 fbo, u32 tail)
{
	struct scatterlist *sg;
	unsigned int off = fbo;
	u32 i;

	sg = kunit_kmalloc_array(test, n, sizeof(*sg), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, sg);
	sg_init_table(sg, n);
	for (i = 0; i < n; i++)
		sg_set_buf(&sg[i], kva[i], psize);
	sg[n - 1].length -= tail;
	KUNIT_ASSERT_EQ(test, ib_dma_map_sg(rsw_mt.ibdev, sg, n,
					    DMA_BIDIRECTIONAL), n);
	return ib_map_mr_sg(mr, sg, n, &off, psize);
}

/* @n pointers to the same @chunk: a large MR over little memory. */
static u8 **rsw_mt_alias(struct kunit *test, u8 *chunk, u32 n)
{
	u8 **kva = kunit_kmalloc_array(test, n, sizeof(*kva), GFP_KERNEL);
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, kva);
	for (i = 0; i < n; i++)
		kva[i] = chunk;
	return kva;
}

/* IB_WR_REG_MR of @mr with its current key on a QP of @pd. */
static int rsw_mt_reg_pd(struct ib_mr *mr, struct ib_pd *pd, int access)
{
	struct ib_reg_wr wr = {
		.wr.opcode = IB_WR_REG_MR,
		.mr = mr,
		.key = mr->rkey,
		.access = access,
	};

	return rsw_mr_fastreg(pd, &wr);
}

static int rsw_mt_reg(struct ib_mr *mr, int access)
{
	return rsw_mt_reg_pd(mr, rsw_mt.pd, access);
}

#define RSW_MT_ALL (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ | \
		    IB_ACCESS_REMOTE_WRITE)

/* A valid fast-reg MR over two zeroed 4K pages at @iova. */
static struct ib_mr *rsw_mt_simple_mr(struct kunit *test, u64 iova,
				      int access)
{
	struct ib_mr *mr = rsw_mt_alloc_mr(test, 2);
	u8 *kva[2];

	kva[0] = rsw_mt_pages(test, 0);
	kva[1] = rsw_mt_pages(test, 0);
	KUNIT_ASSERT_EQ(test, rsw_mt_map(test, mr, kva, 2, SZ_4K, 0, 0), 2);
	mr->iova = iova;
	KUNIT_ASSERT_EQ(test, rsw_mt_reg(mr, access), 0);
	return mr;
}

/* Check an access and drop the reference at once. */
static enum rsw_mr_err rsw_mt_check(struct ib_pd *pd, u32 stag, u64 to,
				    u64 len, u32 right)
{
	struct rsw_mr_ref ref;
	enum rsw_mr_err err;

	err = rsw_mr_get(rsw_mt.rsw, pd, stag, to, len, right, &ref);
	if (err == RSW_MR_OK)
		rsw_mr_ref_put(&ref);
	return err;
}

static void rsw_mt_get(struct kunit *test, struct ib_mr *mr, u32 right,
		       struct rsw_mr_ref *ref)
{
	KUNIT_ASSERT_EQ(test, rsw_mr_get(rsw_mt.rsw, rsw_mt.pd, mr->rkey,
					 mr->iova, mr->length, right, ref),
			RSW_MR_OK);
}

/* ------------------------------------------------------------------------
 * STags
 */
struct rsw_mt_stag_case {
	const char *desc;
	u32 index;
	u8 key;
	u32 stag;
};

static const struct rsw_mt_stag_case rsw_mt_stag_cases[] = {
	{ "index 1 key 0", 1, 0x00, 0x00000100 },
	{ "index 1 key ff", 1, 0xff, 0x000001ff },
	{ "mixed", 0x123456, 0x78, 0x12345678 },
	{ "max index", RSW_STAG_INDEX_MAX, 0xa5, 0xffffffa5 },
};

KUNIT_ARRAY_PARAM_DESC(rsw_mt_stag, rsw_mt_stag_cases, desc);

static void rsw_mt_stag_encode_decode(struct kunit *test)
{
	const struct rsw_mt_stag_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, rsw_stag(c->index, c->key), c->stag);
	KUNIT_EXPECT_EQ(test, rsw_stag_index(c->stag), c->index);
	KUNIT_EXPECT_EQ(test, rsw_stag_key(c->stag), c->key);
}

/* The consumer's key helpers touch the key byte only. */
static void rsw_mt_stag_key_helpers(struct kunit *test)
{
	struct ib_mr *mr = rsw_mt_alloc_mr(test, 1);
	u32 stag = mr->rkey;

	KUNIT_EXPECT_EQ(test, mr->lkey, mr->rkey);
	KUNIT_EXPECT_NE(test, rsw_stag_index(stag), 0);
	ib_update_fast_reg_key(mr, rsw_stag_key(stag) + 1);
	KUNIT_EXPECT_EQ(test, rsw_stag_index(mr->rkey), rsw_stag_index(stag));
	KUNIT_EXPECT_EQ(test, ib_inc_rkey(rsw_stag(7, 0xff)), rsw_stag(7, 0));
}

/* RFC 5040 section 8.1.1 item 8: not handed out in sequence. */
static void rsw_mt_stag_indices_spread(struct kunit *test)
{
	u32 first = 0, prev = 0, seq = 0, i;

	for (i = 0; i < 8; i++) {
		u32 index = rsw_stag_index(rsw_mt_alloc_mr(test, 1)->rkey);

		if (i == 0)
			first = index;
		else if (index == prev + 1)
			seq++;
		prev = index;
	}
	KUNIT_EXPECT_NE(test, first, 1);
	KUNIT_EXPECT_LT(test, seq, 7);
}

static void rsw_mt_key_mismatch_refused(struct kunit *test)
{
	struct ib_mr *mr = rsw_mt_simple_mr(test, 0x10000, RSW_MT_ALL);
	u32 stag = mr->rkey;

	KUNIT_EXPECT_EQ(test, rsw_mt_check(rsw_mt.pd, stag, 0x10000, 1, 0),
			RSW_MR_OK);
	KUNIT_EXPECT_EQ(test, rsw_mt_check(rsw_mt.pd, stag ^ 0x01, 0x10000, 1,
					   0), RSW_MR_ERR_STAG);
	KUNIT_EXPECT_EQ(test, rsw_mt_check(rsw_mt.pd, stag ^ 0x80, 0x10000, 1,
					   0), RSW_MR_ERR_STAG);
}

static void rsw_mt_unknown_index_refused(struct kunit *test)
{
	struct ib_mr *mr = rsw_mt_simple_mr(test, 0x10000, RSW_MT_ALL);
	u32 key = rsw_stag_key(mr->rkey);

	KUNIT_EXPECT_EQ(test, rsw_mt_check(rsw_mt.pd, rsw_stag(0, key),
					   0x10000, 1, 0), RSW_MR_ERR_STAG);
	KUNIT_EXPECT_EQ(test, rsw_mt_check(rsw_mt.pd, mr->rkey ^ 0x100,
					   0x10000, 1, 0), RSW_MR_ERR_STAG);
}

static void rsw_mt_lookup_after_dereg_fails(struct kunit *test)
{
	struct ib_mr *mr = rsw_mt_simple_mr(test, 0x10000, RSW_MT_ALL);
	u32 stag = mr->rkey;

	rsw_mt_dereg(test, mr);
	KUNIT_EXPECT_EQ(test, rsw_mt_check(rsw_mt.pd, stag, 0x10000, 1, 0),
			RSW_MR_ERR_STAG);
	KUNIT_EXPECT_EQ(test, rsw_mr_invalidate_local(rsw_mt.rsw, rsw_mt.pd, 0,
						      stag, NULL), RSW_MR_ERR_STAG);
}

/* A reference outlives dereg_mr, but no access goes through it. */
static void rsw_mt_ref_after_dereg_refused(struct kunit *test)
{
	struct ib_mr *mr = rsw_mt_simple_mr(test, 0x10000, RSW_MT_ALL);
	struct rsw_mr_ref ref;
	u8 buf[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };

	rsw_mt_get(test, mr, IB_ACCESS_REMOTE_WRITE, &ref);
	rsw_mt_dereg(test, mr);
	KUNIT_EXPECT_EQ(test, rsw_mr_copy_to(&ref, 0x10000, buf, sizeof(buf)),
			RSW_MR_ERR_STATE);
	rsw_mr_ref_put(&ref);
	KUNIT_EXPECT_NULL(test, ref.mr);
}

/* ------------------------------------------------------------------------
 * Device ops and limits
 */
static void rsw_mt_limits_advertised(struct kunit *test)
{
	struct ib_device_attr *attrs = &rsw_mt.ibdev->attrs;

	KUNIT_EXPECT_EQ(test, attrs->max_mr, RSW_MAX_MR);
	KUNIT_EXPECT_EQ(test, attrs->max_fast_reg_page_list_len,
			RSW_MAX_FRMR_PAGES);
	KUNIT_EXPECT_GE(test, attrs->max_fast_reg_page_list_len, 256);
	KUNIT_EXPECT_EQ(test, attrs->max_mr_size, RSW_MAX_MR_SIZE);
}

static void rsw_mt_alloc_mr_limits(struct kunit *test)
{
	struct ib_mr *mr;

	mr = ib_alloc_mr(rsw_mt.pd, IB_MR_TYPE_MEM_REG, 0);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(mr), -EINVAL);
	mr = ib_alloc_mr(rsw_mt.pd, IB_MR_TYPE_MEM_REG, RSW_MAX_FRMR_PAGES + 1);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(mr), -EINVAL);
	mr = ib_alloc_mr(rsw_mt.pd, IB_MR_TYPE_SG_GAPS, 16);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(mr), -EOPNOTSUPP);
	mr = rsw_mt_alloc_mr(test, RSW_MAX_FRMR_PAGES);
	KUNIT_EXPECT_EQ(test, to_rsw_mr(mr)->state, RSW_MR_INVALID);
}

static void rsw_mt_max_mr_enforced(struct kunit *test)
{
	struct rsw_mr_table *table = &rsw_mt.rsw->mrs;
	int before = atomic_read(&table->count);
	struct ib_mr *mr;

	atomic_set(&table->count, RSW_MAX_MR);
	mr = ib_alloc_mr(rsw_mt.pd, IB_MR_TYPE_MEM_REG, 1);
	atomic_set(&table->count, before);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(mr), -ENOMEM);
	if (!IS_ERR(mr))
		ib_dereg_mr(mr);
}

/* ------------------------------------------------------------------------
 * DMA MR
 */
static void rsw_mt_dma_mr_local_access(struct kunit *test)
{
	u8 *buf = kunit_kzalloc(test, 64, GFP_KERNEL);
	u32 lkey = rsw_mt.pd->local_dma_lkey;
	u64 addr = (uintptr_t)buf;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_EXPECT_EQ(test, rsw_mt_check(rsw_mt.pd, lkey, addr, 64, 0),
			RSW_MR_OK);
	KUNIT_EXPECT_EQ(test, rsw_mt_check(rsw_mt.pd, lkey, addr, 64,
					   IB_ACCESS_LOCAL_WRITE), RSW_MR_OK);
	KUNIT_EXPECT_EQ(test, rsw_mt_check(rsw_mt.pd2, lkey, addr, 64, 0),
			RSW_MR_ERR_PD);
}

static void rsw_mt_dma_mr_no_remote_access(struct kunit *test)
{
	u32 lkey = rsw_mt.pd->local_dma_lkey;
	struct ib_mr *mr;

	KUNIT_EXPECT_EQ(test, rsw_mt_check(rsw_mt.pd, lkey, 0x1000, 8,
					   IB_ACCESS_REMOTE_READ),
			RSW_MR_ERR_ACCESS);
	KUNIT_EXPECT_EQ(test, rsw_mt_check(rsw_mt.pd, lkey, 0x1000, 8,
					   IB_ACCESS_REMOTE_WRITE),
			RSW_MR_ERR_ACCESS);
	/* What ib_alloc_pd(IB_PD_UNSAFE_GLOBAL_RKEY) would ask for. */
	mr = rsw_mt.ibdev->ops.get_dma_mr(rsw_mt.pd, IB_ACCESS_LOCAL_WRITE |
					  IB_ACCESS_REMOTE_READ |
					  IB_ACCESS_REMOTE_WRITE);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(mr), -EOPNOTSUPP);
}

/* Through the PD's lkey into kmalloc and vmalloc memory, across pages. */
static void rsw_mt_dma_mr_copy(struct kunit *test)
{
	size_t len = 3 * PAGE_SIZE;
	u8 *src = kunit_kmalloc(test, len, GFP_KERNEL);
	u8 *back = kunit_kzalloc(test, len, GFP_KERNEL);
	u8 *vbuf = vzalloc(len + 100);
	struct ib_sge sge;
	struct rsw_mr_ref ref;

	KUNIT_ASSERT_NOT_NULL(test, src);
	KUNIT_ASSERT_NOT_NULL(test, back);
	KUNIT_ASSERT_NOT_NULL(test, vbuf);
	get_random_bytes(src, len);
	sge.addr = (uintptr_t)vbuf + 100;
	sge.length = len;
	sge.lkey = rsw_mt.pd->local_dma_lkey;
	KUNIT_EXPECT_EQ(test, rsw_mr_get_sge(rsw_mt.rsw, rsw_mt.pd, &sge, true,
					     &ref), RSW_MR_OK);
	if (ref.mr) {
		KUNIT_EXPECT_EQ(test, rsw_mr_copy_to(&ref, sge.addr, src, len),
				RSW_MR_OK);
		KUNIT_EXPECT_EQ(test, rsw_mr_copy_from(&ref, sge.addr, back,
						       len), RSW_MR_OK);
		rsw_mr_ref_put(&ref);
	}
	KUNIT_EXPECT_MEMEQ(test, vbuf + 100, src, len);
	KUNIT_EXPECT_MEMEQ(test, back, src, len);
	KUNIT_EXPECT_TRUE(test, !memchr_inv(vbuf, 0, 100));
	vfree(vbuf);
}

static void rsw_mt_dma_mr_bad_address(struct kunit *test)
{
	struct ib_sge sge = {
		.addr = 0x1000,		/* user space, never a kernel page */
		.length = 16,
		.lkey = rsw_mt.pd->local_dma_lkey,
	};
	struct rsw_mr_ref ref;
	u8 buf[16] = {};

	KUNIT_ASSERT_EQ(test, rsw_mr_get_sge(rsw_mt.rsw, rsw_mt.pd, &sge,
					     false, &ref), RSW_MR_OK);
	KUNIT_EXPECT_EQ(test, rsw_mr_copy_from(&ref, sge.addr, buf, 16),
			RSW_MR_ERR_BOUNDS);
	rsw_mr_ref_put(&ref);
}

static void rsw_mt_dma_mr_not_fast_reg(struct kunit *test)
{
	struct rsw_mr_ref ref;
	struct ib_reg_wr wr = { .access = IB_ACCESS_LOCAL_WRITE };
	u32 lkey = rsw_mt.pd->local_dma_lkey;

	KUNIT_ASSERT_EQ(test, rsw_mr_get(rsw_mt.rsw, rsw_mt.pd, lkey, 0x1000,
					 0, 0, &ref), RSW_MR_OK);
	wr.mr = &ref.mr->ibmr;
	wr.key = lkey;
	KUNIT_EXPECT_EQ(test, rsw_mr_fastreg(rsw_mt.pd, &wr), -EINVAL);
	KUNIT_EXPECT_EQ(test, rsw_mr_invalidate_local(rsw_mt.rsw, rsw_mt.pd, 0,
						      lkey, NULL),
			RSW_MR_ERR_NO_INVAL);
	KUNIT_EXPECT_EQ(test, rsw_mr_invalidate_remote(rsw_mt.rsw, rsw_mt.pd, 0,
						       lkey, NULL),
			RSW_MR_ERR_NO_INVAL);
	rsw_mr_ref_put(&ref);
}

/* ------------------------------------------------------------------------
 * Fast registration
 */
struct rsw_mt_frmr_case {
	const char *desc;
	u32 npages;
	u32 psize;
	u32 fbo;
	u32 tail;
};

static const struct rsw_mt_frmr_case rsw_mt_frmr_cases[] = {
	{ "1 x 4K", 1, SZ_4K, 0, 0 },
	{ "256 x 4K", 256, SZ_4K, 0, 0 },
	{ "max x 4K", RSW_MAX_FRMR_PAGES, SZ_4K, 0, 0 },
	{ "1 x 64K", 1, SZ_64K, 0, 0 },
	{ "256 x 64K", 256, SZ_64K, 0, 0 },
	{ "max x 64K", RSW_MAX_FRMR_PAGES, SZ_64K, 0, 0 },
	{ "1 x 2M", 1, SZ_2M, 0, 0 },
	{ "256 x 2M", 256, SZ_2M, 0, 0 },
	{ "max x 2M", RSW_MAX_FRMR_PAGES, SZ_2M, 0, 0 },
	{ "16 x 512 (sub-page)", 16, 512, 3, 1 },
	{ "256 x 4K, first byte at 100", 256, SZ_4K, 100, 50 },
	{ "1 x 4K, first byte at 4095", 1, SZ_4K, 4095, 0 },
	{ "3 x 2M, first byte at 1M + 1", 3, SZ_2M, SZ_1M + 1, 7 },
};

KUNIT_ARRAY_PARAM_DESC(rsw_mt_frmr, rsw_mt_frmr_cases, desc);

/* Every MR page aliases one chunk: byte r of the region is chunk[r % ps]. */
static void rsw_mt_frmr_sizes(struct kunit *test)
{
	const struct rsw_mt_frmr_case *c = test->param_value;
	u8 *chunk = rsw_mt_pages(test, get_order(c->psize));
	u64 length = (u64)c->npages * c->psize - c->fbo - c->tail;
	u8 pat[16] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9 };
	struct ib_mr *mr = rsw_mt_alloc_mr(test, c->npages);
	u8 **kva = rsw_mt_alias(test, chunk, c->npages);
	u32 n = min_t(u64, sizeof(pat), length);
	struct rsw_mr_ref ref;
	u64 end;

	KUNIT_ASSERT_EQ(test, rsw_mt_map(test, mr, kva, c->npages, c->psize,
					 c->fbo, c->tail), c->npages);
	KUNIT_EXPECT_EQ(test, mr->iova, (u64)(uintptr_t)chunk + c->fbo);
	KUNIT_ASSERT_EQ(test, mr->length, length);
	KUNIT_ASSERT_EQ(test, rsw_mt_reg(mr, RSW_MT_ALL), 0);
	end = mr->iova + length;

	rsw_mt_get(test, mr, IB_ACCESS_REMOTE_WRITE, &ref);
	KUNIT_EXPECT_EQ(test, rsw_mr_copy_to(&ref, mr->iova, pat, n),
			RSW_MR_OK);
	KUNIT_EXPECT_MEMEQ(test, chunk + c->fbo, pat, n);
	KUNIT_EXPECT_EQ(test, rsw_mr_copy_to(&ref, end - n, pat, n), RSW_MR_OK);
	KUNIT_EXPECT_MEMEQ(test, chunk + (c->fbo + length - n) % c->psize, pat,
			   n);
	KUNIT_EXPECT_EQ(test, rsw_mr_copy_to(&ref, end - n + 1, pat, n),
			RSW_MR_ERR_BOUNDS);
	KUNIT_EXPECT_EQ(test, rsw_mr_copy_to(&ref, mr->iova - 1, pat, n),
			RSW_MR_ERR_BOUNDS);
	rsw_mr_ref_put(&ref);
}

static void rsw_mt_map_bad_page_size(struct kunit *test)
{
	static const unsigned int sizes[] = { 3000, 256, SZ_2G };
	struct ib_mr *mr = rsw_mt_alloc_mr(test, 4);
	u8 *page = rsw_mt_pages(test, 0);
	struct scatterlist sg;
	unsigned int i;

	sg_init_one(&sg, page, PAGE_SIZE);
	KUNIT_ASSERT_EQ(test, ib_dma_map_sg(rsw_mt.ibdev, &sg, 1,
					    DMA_BIDIRECTIONAL), 1);
	for (i = 0; i < ARRAY_SIZE(sizes); i++)
		KUNIT_EXPECT_EQ_MSG(test, ib_map_mr_sg(mr, &sg, 1, NULL,
						       sizes[i]), -EINVAL,
				    "page size %u", sizes[i]);
}

/* More pages than max_num_sg: the largest prefix that fits is mapped. */
static void rsw_mt_map_prefix(struct kunit *test)
{
	u8 **kva = rsw_mt_alias(test, rsw_mt_pages(test, 0), 257);
	struct ib_mr *mr = rsw_mt_alloc_mr(test, 256);

	KUNIT_EXPECT_EQ(test, rsw_mt_map(test, mr, kva, 257, SZ_4K, 0, 0),
			256);
	KUNIT_EXPECT_EQ(test, mr->length, 256ULL * SZ_4K);
}

/*
 * map_mr_sg while the MR is valid, as ib_srp does with a LOCAL_INV still
 * queued ahead of its next REG_MR: the valid registration keeps its
 * region and pages; LOCAL_INV and REG_MR then register the new list.
 */
static void rsw_mt_map_while_valid_waits_for_reg(struct kunit *test)
{
	struct ib_mr *mr = rsw_mt_simple_mr(test, 0x10000, RSW_MT_ALL);
	u8 *chunk = rsw_mt_pages(test, 0);
	u8 pat[4] = { 1, 2, 3, 4 }, zero[4] = {};
	struct rsw_mr_ref ref;
	u32 old = mr->rkey;

	KUNIT_ASSERT_EQ(test, rsw_mt_map(test, mr, &chunk, 1, SZ_4K, 0, 0), 1);
	KUNIT_ASSERT_EQ(test, rsw_mr_get(rsw_mt.rsw, rsw_mt.pd, old, 0x10000,
					 sizeof(pat), IB_ACCESS_REMOTE_WRITE,
					 &ref), RSW_MR_OK);
	KUNIT_EXPECT_EQ(test, rsw_mr_copy_to(&ref, 0x10000, pat, sizeof(pat)),
			RSW_MR_OK);
	rsw_mr_ref_put(&ref);
	KUNIT_EXPECT_MEMEQ(test, chunk, zero, sizeof(zero));

	KUNIT_ASSERT_EQ(test, rsw_mr_invalidate_local(rsw_mt.rsw, rsw_mt.pd, 0,
						      old, NULL), RSW_MR_OK);
	ib_update_fast_reg_key(mr, rsw_stag_key(ib_inc_rkey(old)));
	KUNIT_ASSERT_EQ(test, rsw_mt_reg(mr, RSW_MT_ALL), 0);
	KUNIT_EXPECT_EQ(test, mr->length, (u64)SZ_4K);
	rsw_mt_get(test, mr, IB_ACCESS_REMOTE_WRITE, &ref);
	KUNIT_EXPECT_EQ(test, rsw_mr_copy_to(&ref, mr->iova, pat, sizeof(pat)),
			RSW_MR_OK);
	rsw_mr_ref_put(&ref);
	KUNIT_EXPECT_MEMEQ(test, chunk, pat, sizeof(pat));
}

static void rsw_mt_reg_new_key(struct kunit *test)
{
	struct ib_mr *mr = rsw_mt_simple_mr(test, 0x10000, RSW_MT_ALL);
	u32 old = mr->rkey;

	KUNIT_ASSERT_EQ(test, rsw_mr_invalidate_local(rsw_mt.rsw, rsw_mt.pd, 0,
						      old, NULL), RSW_MR_OK);
	ib_update_fast_reg_key(mr, rsw_stag_key(ib_inc_rkey(old)));
	KUNIT_ASSERT_EQ(test, rsw_mt_reg(mr, RSW_MT_ALL), 0);
	KUNIT_EXPECT_EQ(test, rsw_mt_check(rsw_mt.pd, mr->rkey, 0x10000, 1, 0),
			RSW_MR_OK);
	KUNIT_EXPECT_EQ(test, rsw_mt_check(rsw_mt.pd, old, 0x10000, 1, 0),
			RSW_MR_ERR_STAG);
}

/* A reference taken under the old key never reaches the new registration. */
static void rsw_mt_ref_after_rereg_refused(struct kunit *test)
{
	struct ib_mr *mr = rsw_mt_simple_mr(test, 0x10000, RSW_MT_ALL);
	u8 buf[4] = { 9, 9, 9, 9 };
	struct rsw_mr_ref ref;

	rsw_mt_get(test, mr, IB_ACCESS_REMOTE_WRITE, &ref);
	KUNIT_ASSERT_EQ(test, rsw_mr_invalidate_local(rsw_mt.rsw, rsw_mt.pd, 0,
						      mr->rkey, NULL), RSW_MR_OK);
	ib_update_fast_reg_key(mr, rsw_stag_key(ib_inc_rkey(mr->rkey)));
	KUNIT_ASSERT_EQ(test, rsw_mt_reg(mr, RSW_MT_ALL), 0);
	KUNIT_EXPECT_EQ(test, rsw_mr_copy_to(&ref, 0x10000, buf, sizeof(buf)),
			RSW_MR_ERR_STAG);
	rsw_mr_ref_put(&ref);
}

/* What one row of rsw_mt_reg_cases changes before IB_WR_REG_MR. */
struct rsw_mt_reg_ctx {
	struct ib_mr *mr;
	struct ib_reg_wr wr;
	struct ib_pd *pd;
};

static void rsw_mt_tweak_pd(struct rsw_mt_reg_ctx *x)
{
	x->pd = rsw_mt.pd2;
}

static void rsw_mt_tweak_index(struct rsw_mt_reg_ctx *x)
{
	x->wr.key ^= 1U << RSW_STAG_KEY_BITS;
}

static void rsw_mt_tweak_rw_only(struct rsw_mt_reg_ctx *x)
{
	x->wr.access = IB_ACCESS_REMOTE_WRITE;
}

static void rsw_mt_tweak_atomic_only(struct rsw_mt_reg_ctx *x)
{
	x->wr.access = IB_ACCESS_REMOTE_ATOMIC | IB_ACCESS_REMOTE_READ;
}

static void rsw_mt_tweak_mw_bind(struct rsw_mt_reg_ctx *x)
{
	x->wr.access |= IB_ACCESS_MW_BIND;
}

static void rsw_mt_tweak_zero_based(struct rsw_mt_reg_ctx *x)
{
	x->wr.access |= IB_ZERO_BASED;
}

static void rsw_mt_tweak_relaxed(struct rsw_mt_reg_ctx *x)
{
	x->wr.access |= IB_ACCESS_RELAXED_ORDERING;
}

static void rsw_mt_tweak_valid(struct rsw_mt_reg_ctx *x)
{
	rsw_mr_fastreg(x->pd, &x->wr);
}

static void rsw_mt_tweak_long(struct rsw_mt_reg_ctx *x)
{
	x->mr->length += 1;
}

static void rsw_mt_tweak_wrap(struct rsw_mt_reg_ctx *x)
{
	x->mr->iova = U64_MAX - 100;
}

static void rsw_mt_tweak_top(struct rsw_mt_reg_ctx *x)
{
	x->mr->iova = U64_MAX - (x->mr->length - 1);
}

struct rsw_mt_reg_case {
	const char *desc;
	void (*tweak)(struct rsw_mt_reg_ctx *x);
	int expect;
};

static const struct rsw_mt_reg_case rsw_mt_reg_cases[] = {
	{ "accepted", NULL, 0 },
	{ "MR of another PD", rsw_mt_tweak_pd, -EACCES },
	{ "key of another index", rsw_mt_tweak_index, -EINVAL },
	{ "remote write without local write", rsw_mt_tweak_rw_only, -EINVAL },
	{ "remote atomic without local write", rsw_mt_tweak_atomic_only,
	  -EINVAL },
	{ "memory window bind", rsw_mt_tweak_mw_bind, -EOPNOTSUPP },
	{ "zero based", rsw_mt_tweak_zero_based, -EOPNOTSUPP },
	{ "relaxed ordering is a hint", rsw_mt_tweak_relaxed, 0 },
	{ "MR already valid", rsw_mt_tweak_valid, -EBUSY },
	{ "length beyond the page list", rsw_mt_tweak_long, -EINVAL },
	{ "region wraps 2^64", rsw_mt_tweak_wrap, -EINVAL },
	{ "region ends at 2^64", rsw_mt_tweak_top, 0 },
};

KUNIT_ARRAY_PARAM_DESC(rsw_mt_reg, rsw_mt_reg_cases, desc);

static void rsw_mt_reg_rules(struct kunit *test)
{
	const struct rsw_mt_reg_case *c = test->param_value;
	u8 *page = rsw_mt_pages(test, 0);
	struct rsw_mt_reg_ctx x = { .pd = rsw_mt.pd };

	x.mr = rsw_mt_alloc_mr(test, 1);
	KUNIT_ASSERT_EQ(test, rsw_mt_map(test, x.mr, &page, 1, SZ_4K, 0, 0), 1);
	x.wr.mr = x.mr;
	x.wr.key = x.mr->rkey;
	x.wr.access = RSW_MT_ALL;
	if (c->tweak)
		c->tweak(&x);
	KUNIT_EXPECT_EQ(test, rsw_mr_fastreg(x.pd, &x.wr), c->expect);
}

static void rsw_mt_reg_unmapped_refused(struct kunit *test)
{
	struct ib_mr *mr = rsw_mt_alloc_mr(test, 1);

	KUNIT_EXPECT_EQ(test, rsw_mt_reg(mr, RSW_MT_ALL), -EINVAL);
}

/* ------------------------------------------------------------------------
 * Access checks
 */
#define RSW_MT_BASE 0x10000123ULL	/* not page aligned */
#define RSW_MT_LEN 8192ULL		/* two 4K pages */
#define RSW_MT_TOP (U64_MAX - RSW_MT_LEN + 1)	/* region ends at 2^64 */

struct rsw_mt_range_case {
	const char *desc;
	u64 base;	/* iova of the region */
	u64 to;		/* offset from base, modulo 2^64 */
	u64 len;
	enum rsw_mr_err expect;
};

static const struct rsw_mt_range_case rsw_mt_range_cases[] = {
	{ "first byte", RSW_MT_BASE, 0, 1, RSW_MR_OK },
	{ "whole region", RSW_MT_BASE, 0, RSW_MT_LEN, RSW_MR_OK },
	{ "last byte", RSW_MT_BASE, RSW_MT_LEN - 1, 1, RSW_MR_OK },
	{ "TO+len == end", RSW_MT_BASE, 100, RSW_MT_LEN - 100, RSW_MR_OK },
	{ "TO+len one past end", RSW_MT_BASE, 100, RSW_MT_LEN - 99,
	  RSW_MR_ERR_BOUNDS },
	{ "TO == end", RSW_MT_BASE, RSW_MT_LEN, 1, RSW_MR_ERR_BOUNDS },
	{ "TO one before base", RSW_MT_BASE, -1ULL, 1, RSW_MR_ERR_BOUNDS },
	{ "TO one before, ends inside", RSW_MT_BASE, -1ULL, 2,
	  RSW_MR_ERR_BOUNDS },
	{ "zero length at base", RSW_MT_BASE, 0, 0, RSW_MR_OK },
	{ "zero length at end", RSW_MT_BASE, RSW_MT_LEN, 0, RSW_MR_OK },
	{ "zero length past end", RSW_MT_BASE, RSW_MT_LEN + 1, 0,
	  RSW_MR_ERR_BOUNDS },
	{ "zero length before base", RSW_MT_BASE, -1ULL, 0, RSW_MR_ERR_BOUNDS },
	{ "TO+len wraps 2^64", RSW_MT_BASE, -RSW_MT_BASE - 10, 20,
	  RSW_MR_ERR_WRAP },
	{ "len 2^64-1 wraps", RSW_MT_BASE, 0, U64_MAX, RSW_MR_ERR_WRAP },
	{ "region at top: last byte", RSW_MT_TOP, RSW_MT_LEN - 1, 1,
	  RSW_MR_OK },
	{ "region at top: whole", RSW_MT_TOP, 0, RSW_MT_LEN, RSW_MR_OK },
	{ "region at top: zero length at end", RSW_MT_TOP, RSW_MT_LEN, 0,
	  RSW_MR_ERR_BOUNDS },
	{ "region at top: one past wraps", RSW_MT_TOP, RSW_MT_LEN - 1, 2,
	  RSW_MR_ERR_WRAP },
};

KUNIT_ARRAY_PARAM_DESC(rsw_mt_range, rsw_mt_range_cases, desc);

static void rsw_mt_access_range(struct kunit *test)
{
	const struct rsw_mt_range_case *c = test->param_value;
	struct ib_mr *mr = rsw_mt_simple_mr(test, c->base, RSW_MT_ALL);

	KUNIT_ASSERT_EQ(test, mr->length, RSW_MT_LEN);
	KUNIT_EXPECT_EQ(test, rsw_mt_check(rsw_mt.pd, mr->rkey, c->base + c->to,
					   c->len, IB_ACCESS_REMOTE_READ),
			c->expect);
}

struct rsw_mt_right_case {
	const char *desc;
	int access;	/* registered */
	u32 right;	/* required */
	enum rsw_mr_err expect;
};

static const struct rsw_mt_right_case rsw_mt_right_cases[] = {
	{ "remote read granted", IB_ACCESS_REMOTE_READ, IB_ACCESS_REMOTE_READ,
	  RSW_MR_OK },
	{ "remote write missing", IB_ACCESS_REMOTE_READ,
	  IB_ACCESS_REMOTE_WRITE, RSW_MR_ERR_ACCESS },
	{ "local write missing", IB_ACCESS_REMOTE_READ, IB_ACCESS_LOCAL_WRITE,
	  RSW_MR_ERR_ACCESS },
	{ "local read always", 0, 0, RSW_MR_OK },
	{ "remote read missing", IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE,
	  IB_ACCESS_REMOTE_READ, RSW_MR_ERR_ACCESS },
	{ "remote write granted",
	  IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE,
	  IB_ACCESS_REMOTE_WRITE, RSW_MR_OK },
	{ "remote atomic missing",
	  IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE,
	  IB_ACCESS_REMOTE_ATOMIC, RSW_MR_ERR_ACCESS },
	{ "remote atomic granted",
	  IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_ATOMIC,
	  IB_ACCESS_REMOTE_ATOMIC, RSW_MR_OK },
};

KUNIT_ARRAY_PARAM_DESC(rsw_mt_right, rsw_mt_right_cases, desc);

static void rsw_mt_access_rights(struct kunit *test)
{
	const struct rsw_mt_right_case *c = test->param_value;
	struct ib_mr *mr = rsw_mt_simple_mr(test, 0x10000, c->access);

	KUNIT_EXPECT_EQ(test, rsw_mt_check(rsw_mt.pd, mr->rkey, 0x10000, 8,
					   c->right), c->expect);
}

static void rsw_mt_access_wrong_pd(struct kunit *test)
{
	struct ib_mr *mr = rsw_mt_simple_mr(test, 0x10000, RSW_MT_ALL);

	KUNIT_EXPECT_EQ(test, rsw_mt_check(rsw_mt.pd2, mr->rkey, 0x10000, 8,
					   IB_ACCESS_REMOTE_READ),
			RSW_MR_ERR_PD);
}

static void rsw_mt_access_invalid_state(struct kunit *test)
{
	struct ib_mr *mr = rsw_mt_alloc_mr(test, 1);

	KUNIT_EXPECT_EQ(test, rsw_mt_check(rsw_mt.pd, mr->rkey, 0, 0, 0),
			RSW_MR_ERR_STATE);
}

/* A reference taken only for reading never writes. */
static void rsw_mt_copy_to_needs_write_right(struct kunit *test)
{
	struct ib_mr *mr = rsw_mt_simple_mr(test, 0x10000, RSW_MT_ALL);
	struct rsw_mr_ref ref;
	u8 buf[4] = { 1, 2, 3, 4 };

	rsw_mt_get(test, mr, IB_ACCESS_REMOTE_READ, &ref);
	KUNIT_EXPECT_EQ(test, rsw_mr_copy_to(&ref, 0x10000, buf, 4),
			RSW_MR_ERR_ACCESS);
	rsw_mr_ref_put(&ref);
}

static void rsw_mt_local_sge_checks(struct kunit *test)
{
	struct ib_mr *mr = rsw_mt_simple_mr(test, 0x10000, IB_ACCESS_REMOTE_READ);
	struct ib_sge sge = { .addr = 0x10000, .length = 8192, .lkey = mr->lkey };
	struct rsw_mr_ref ref;

	KUNIT_EXPECT_EQ(test, rsw_mr_get_sge(rsw_mt.rsw, rsw_mt.pd, &sge, false,
					     &ref), RSW_MR_OK);
	rsw_mr_ref_put(&ref);
	KUNIT_EXPECT_EQ(test, rsw_mr_get_sge(rsw_mt.rsw, rsw_mt.pd, &sge, true,
					     &ref), RSW_MR_ERR_ACCESS);
	KUNIT_EXPECT_NULL(test, ref.mr);
	sge.length++;
	KUNIT_EXPECT_EQ(test, rsw_mr_get_sge(rsw_mt.rsw, rsw_mt.pd, &sge, false,
					     &ref), RSW_MR_ERR_BOUNDS);
	sge.length--;
	sge.lkey ^= 0x40;
	KUNIT_EXPECT_EQ(test, rsw_mr_get_sge(rsw_mt.rsw, rsw_mt.pd, &sge, false,
					     &ref), RSW_MR_ERR_STAG);
}

/* ------------------------------------------------------------------------
 * Invalidation
 */
enum rsw_mt_inv_setup {
	RSW_MT_INV_PLAIN,
	RSW_MT_INV_OTHER_PD,
	RSW_MT_INV_WRONG_KEY,
	RSW_MT_INV_ALREADY,	/* invalidated once before */
	RSW_MT_INV_LOCAL_ONLY,	/* registered without remote rights */
};

struct rsw_mt_inv_case {
	const char *desc;
	bool remote;
	enum rsw_mt_inv_setup setup;
	enum rsw_mr_err expect;
};

static const struct rsw_mt_inv_case rsw_mt_inv_cases[] = {
	{ "local", false, RSW_MT_INV_PLAIN, RSW_MR_OK },
	{ "local, other PD", false, RSW_MT_INV_OTHER_PD, RSW_MR_ERR_PD },
	{ "local, wrong key", false, RSW_MT_INV_WRONG_KEY, RSW_MR_ERR_STAG },
	{ "local, already invalid", false, RSW_MT_INV_ALREADY, RSW_MR_OK },
	{ "local, local-only MR", false, RSW_MT_INV_LOCAL_ONLY, RSW_MR_OK },
	{ "remote", true, RSW_MT_INV_PLAIN, RSW_MR_OK },
	{ "remote, other PD", true, RSW_MT_INV_OTHER_PD, RSW_MR_ERR_PD },
	{ "remote, wrong key", true, RSW_MT_INV_WRONG_KEY, RSW_MR_ERR_STAG },
	{ "remote, already invalid", true, RSW_MT_INV_ALREADY,
	  RSW_MR_ERR_STATE },
	{ "remote, local-only MR", true, RSW_MT_INV_LOCAL_ONLY,
	  RSW_MR_ERR_NO_INVAL },
};

KUNIT_ARRAY_PARAM_DESC(rsw_mt_inv, rsw_mt_inv_cases, desc);

static void rsw_mt_invalidate(struct kunit *test)
{
	const struct rsw_mt_inv_case *c = test->param_value;
	int access = c->setup == RSW_MT_INV_LOCAL_ONLY ? IB_ACCESS_LOCAL_WRITE :
							 RSW_MT_ALL;
	struct ib_mr *mr = rsw_mt_simple_mr(test, 0x10000, access);
	struct ib_pd *pd = rsw_mt.pd;
	u32 stag = mr->rkey;
	enum rsw_mr_err err;

	if (c->setup == RSW_MT_INV_OTHER_PD)
		pd = rsw_mt.pd2;
	if (c->setup == RSW_MT_INV_WRONG_KEY)
		stag ^= 0x10;
	if (c->setup == RSW_MT_INV_ALREADY)
		KUNIT_ASSERT_EQ(test, rsw_mr_invalidate_local(rsw_mt.rsw, pd, 0,
							      stag, NULL), RSW_MR_OK);
	if (c->remote)
		err = rsw_mr_invalidate_remote(rsw_mt.rsw, pd, 0, stag, NULL);
	else
		err = rsw_mr_invalidate_local(rsw_mt.rsw, pd, 0, stag, NULL);
	KUNIT_EXPECT_EQ(test, err, c->expect);
	/* The MR is invalid afterwards exactly when it was invalidated. */
	KUNIT_EXPECT_EQ(test, to_rsw_mr(mr)->state,
			err == RSW_MR_OK || c->setup == RSW_MT_INV_ALREADY ?
			RSW_MR_INVALID : RSW_MR_VALID);
}

static void rsw_mt_access_after_invalidate(struct kunit *test)
{
	struct ib_mr *mr = rsw_mt_simple_mr(test, 0x10000, RSW_MT_ALL);
	u8 before[16], buf[16] = { 7, 7, 7, 7 };
	struct rsw_mr_ref ref;

	rsw_mt_get(test, mr, IB_ACCESS_REMOTE_WRITE, &ref);
	KUNIT_ASSERT_EQ(test, rsw_mr_copy_from(&ref, 0x10000, before, 16),
			RSW_MR_OK);
	KUNIT_ASSERT_EQ(test, rsw_mr_invalidate_remote(rsw_mt.rsw, rsw_mt.pd, 0,
						       mr->rkey, NULL), RSW_MR_OK);
	KUNIT_EXPECT_EQ(test, rsw_mr_copy_to(&ref, 0x10000, buf, 16),
			RSW_MR_ERR_STATE);
	KUNIT_EXPECT_EQ(test, rsw_mt_check(rsw_mt.pd, mr->rkey, 0x10000, 1, 0),
			RSW_MR_ERR_STATE);
	rsw_mr_ref_put(&ref);
	/* Re-register to read the memory back: untouched. */
	KUNIT_ASSERT_EQ(test, rsw_mt_reg(mr, RSW_MT_ALL), 0);
	rsw_mt_get(test, mr, 0, &ref);
	KUNIT_EXPECT_EQ(test, rsw_mr_copy_from(&ref, 0x10000, buf, 16),
			RSW_MR_OK);
	KUNIT_EXPECT_MEMEQ(test, buf, before, 16);
	rsw_mr_ref_put(&ref);
}

/* ------------------------------------------------------------------------
 * Memory windows
 */
static void rsw_mt_mw_free(void *p)
{
	struct ib_mw *mw = p;

	mw->device->ops.dealloc_mw(mw);
	kfree(mw);
}

/* A window of @type in @pd, as ib_uverbs allocates one; freed after. */
static struct ib_mw *rsw_mt_alloc_mw(struct kunit *test, struct ib_pd *pd,
				     enum ib_mw_type type)
{
	struct ib_mw *mw = rdma_zalloc_drv_obj(rsw_mt.ibdev, ib_mw);
	int ret;

	KUNIT_ASSERT_NOT_NULL(test, mw);
	mw->device = rsw_mt.ibdev;
	mw->pd = pd;
	mw->type = type;
	ret = rsw_mt.ibdev->ops.alloc_mw(mw, NULL);
	if (ret)
		kfree(mw);
	KUNIT_ASSERT_EQ(test, ret, 0);
	ret = kunit_add_action_or_reset(test, rsw_mt_mw_free, mw);
	KUNIT_ASSERT_EQ(test, ret, 0);
	return mw;
}

#define RSW_MT_MW_MR_ACCESS (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_MW_BIND)
#define RSW_MT_MW_RW (IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE)
#define RSW_MT_MW_TO 0x10400	/* the window: 2 KiB into the MR's 8 */
#define RSW_MT_MW_LEN 0x800

/* An MR at 0x10000 of 8 KiB that windows may be bound to (a "user" MR). */
static struct ib_mr *rsw_mt_mw_mr(struct kunit *test, u32 access)
{
	struct ib_mr *mr = rsw_mt_simple_mr(test, 0x10000, RSW_MT_ALL);

	rsw_mr_kunit_as_user(mr, access);
	return mr;
}

/* BIND_MW as a user QP of @pd posts it: the window's next key. */
static struct rdmap_sw_sqe_bind rsw_mt_bind_op(struct ib_mw *mw,
					       struct ib_mr *mr, u32 access)
{
	return (struct rdmap_sw_sqe_bind) {
		.addr = RSW_MT_MW_TO, .length = RSW_MT_MW_LEN,
		.mr_lkey = mr ? mr->lkey : 0,
		.mw_rkey = rsw_stag(rsw_stag_index(mw->rkey),
				    rsw_stag_key(mw->rkey) + 1),
		.access = access,
	};
}

/* Execute @b on a QP of @pd; on success the window's rkey is the new one. */
static int rsw_mt_do_bind(struct ib_mw *mw, struct ib_pd *pd,
			  const struct rdmap_sw_sqe_bind *b)
{
	int ret = rsw_mw_bind(rsw_mt.rsw, pd, 0, b);

	if (!ret)
		mw->rkey = b->mw_rkey;
	return ret;
}

static int rsw_mt_bind(struct ib_mw *mw, struct ib_mr *mr, u32 access)
{
	struct rdmap_sw_sqe_bind b = rsw_mt_bind_op(mw, mr, access);

	return rsw_mt_do_bind(mw, rsw_mt.pd, &b);
}

struct rsw_mt_bind_ctx {
	struct kunit *test;
	struct ib_mw *mw;
	struct ib_mr *mr;
	struct ib_pd *pd;
	struct rdmap_sw_sqe_bind b;
};

static void rsw_mt_bt_plain(struct rsw_mt_bind_ctx *x)
{
}

static void rsw_mt_bt_past_end(struct rsw_mt_bind_ctx *x)
{
	x->b.length = 0x2000 - 0x400 + 1;
}

static void rsw_mt_bt_before(struct rsw_mt_bind_ctx *x)
{
	x->b.addr = 0xffff;
}

static void rsw_mt_bt_wrap(struct rsw_mt_bind_ctx *x)
{
	x->b.addr = U64_MAX - 4;
}

static void rsw_mt_bt_no_mw_bind(struct rsw_mt_bind_ctx *x)
{
	rsw_mr_kunit_as_user(x->mr, IB_ACCESS_LOCAL_WRITE |
			     IB_ACCESS_REMOTE_WRITE);
}

static void rsw_mt_bt_no_local_write(struct rsw_mt_bind_ctx *x)
{
	rsw_mr_kunit_as_user(x->mr, IB_ACCESS_MW_BIND);
}

static void rsw_mt_bt_read_no_local_write(struct rsw_mt_bind_ctx *x)
{
	rsw_mr_kunit_as_user(x->mr, IB_ACCESS_MW_BIND);
	x->b.access = IB_ACCESS_REMOTE_READ;
}

static void rsw_mt_bt_zero_based(struct rsw_mt_bind_ctx *x)
{
	x->b.access |= IB_ZERO_BASED;
}

static void rsw_mt_bt_mw_bind_right(struct rsw_mt_bind_ctx *x)
{
	x->b.access |= IB_ACCESS_MW_BIND;
}

static void rsw_mt_bt_qp_pd(struct rsw_mt_bind_ctx *x)
{
	x->pd = rsw_mt.pd2;
}

static void rsw_mt_bt_mw_pd(struct rsw_mt_bind_ctx *x)
{
	x->mw = rsw_mt_alloc_mw(x->test, rsw_mt.pd2, IB_MW_TYPE_2);
	x->b = rsw_mt_bind_op(x->mw, x->mr, RSW_MT_MW_RW);
	x->pd = rsw_mt.pd2;
}

static void rsw_mt_bt_fast_reg(struct rsw_mt_bind_ctx *x)
{
	x->b.mr_lkey = rsw_mt_simple_mr(x->test, 0x10000, RSW_MT_ALL)->lkey;
}

static void rsw_mt_bt_window_as_mr(struct rsw_mt_bind_ctx *x)
{
	x->b.mr_lkey = rsw_mt_alloc_mw(x->test, rsw_mt.pd, IB_MW_TYPE_2)->rkey;
}

static void rsw_mt_bt_mr_key(struct rsw_mt_bind_ctx *x)
{
	x->b.mr_lkey ^= 1;
}

static void rsw_mt_bt_mr_as_window(struct rsw_mt_bind_ctx *x)
{
	x->b.mw_rkey = x->mr->rkey;
}

static void rsw_mt_bt_reserved(struct rsw_mt_bind_ctx *x)
{
	x->b.reserved = 1;
}

static void rsw_mt_bt_bound(struct rsw_mt_bind_ctx *x)
{
	KUNIT_ASSERT_EQ(x->test, rsw_mt_bind(x->mw, x->mr, RSW_MT_MW_RW), 0);
	x->b = rsw_mt_bind_op(x->mw, x->mr, RSW_MT_MW_RW);
}

static void rsw_mt_bt_type1(struct rsw_mt_bind_ctx *x)
{
	x->mw = rsw_mt_alloc_mw(x->test, rsw_mt.pd, IB_MW_TYPE_1);
	x->b = rsw_mt_bind_op(x->mw, x->mr, RSW_MT_MW_RW);
}

static void rsw_mt_bt_type1_bound(struct rsw_mt_bind_ctx *x)
{
	rsw_mt_bt_type1(x);
	rsw_mt_bt_bound(x);
}

static void rsw_mt_bt_type1_unbind(struct rsw_mt_bind_ctx *x)
{
	rsw_mt_bt_type1_bound(x);
	x->b = rsw_mt_bind_op(x->mw, NULL, 0);
	x->b.addr = 0;
	x->b.length = 0;
}

static void rsw_mt_bt_type2_unbind(struct rsw_mt_bind_ctx *x)
{
	x->b = rsw_mt_bind_op(x->mw, NULL, 0);
	x->b.addr = 0;
	x->b.length = 0;
}

struct rsw_mt_bind_case {
	const char *desc;
	void (*tweak)(struct rsw_mt_bind_ctx *x);
	int expect;
};

static const struct rsw_mt_bind_case rsw_mt_bind_cases[] = {
	{ "type 2 inside the MR", rsw_mt_bt_plain, 0 },
	{ "range past the MR's end", rsw_mt_bt_past_end, -EINVAL },
	{ "range before the MR", rsw_mt_bt_before, -EINVAL },
	{ "range wrapping 2^64", rsw_mt_bt_wrap, -EINVAL },
	{ "MR without MW_BIND", rsw_mt_bt_no_mw_bind, -EACCES },
	{ "remote write, MR without local write", rsw_mt_bt_no_local_write,
	  -EACCES },
	{ "remote read, MR without local write",
	  rsw_mt_bt_read_no_local_write, 0 },
	{ "zero based", rsw_mt_bt_zero_based, -EINVAL },
	{ "MW_BIND as a window right", rsw_mt_bt_mw_bind_right, -EINVAL },
	{ "QP of another PD", rsw_mt_bt_qp_pd, -EACCES },
	{ "window and QP of another PD than the MR", rsw_mt_bt_mw_pd,
	  -EACCES },
	{ "fast-reg MR", rsw_mt_bt_fast_reg, -EINVAL },
	{ "a window's STag as the MR", rsw_mt_bt_window_as_mr, -EINVAL },
	{ "MR lkey with a wrong key", rsw_mt_bt_mr_key, -EINVAL },
	{ "an MR's STag as the window", rsw_mt_bt_mr_as_window, -EINVAL },
	{ "reserved field set", rsw_mt_bt_reserved, -EINVAL },
	{ "type 2 already bound", rsw_mt_bt_bound, -EBUSY },
	{ "type 1 inside the MR", rsw_mt_bt_type1, 0 },
	{ "type 1 rebound", rsw_mt_bt_type1_bound, 0 },
	{ "type 1 unbound (no MR)", rsw_mt_bt_type1_unbind, 0 },
	{ "type 2 unbound (no MR)", rsw_mt_bt_type2_unbind, -EINVAL },
};

KUNIT_ARRAY_PARAM_DESC(rsw_mt_bind, rsw_mt_bind_cases, desc);

/*
 * The bind rules; a refused bind leaves the window as it was, a
 * successful one takes the new STag (and a bind with no MR leaves it
 * unbound under it).
 */
static void rsw_mt_mw_bind_rules(struct kunit *test)
{
	const struct rsw_mt_bind_case *c = test->param_value;
	struct rsw_mt_bind_ctx x = { .test = test, .pd = rsw_mt.pd };
	struct rsw_mr *win;
	u32 before;

	x.mr = rsw_mt_mw_mr(test, RSW_MT_MW_MR_ACCESS);
	x.mw = rsw_mt_alloc_mw(test, rsw_mt.pd, IB_MW_TYPE_2);
	x.b = rsw_mt_bind_op(x.mw, x.mr, RSW_MT_MW_RW);
	c->tweak(&x);
	win = to_rsw_mw(x.mw)->win;
	before = win->stag;
	KUNIT_EXPECT_EQ(test, rsw_mw_bind(rsw_mt.rsw, x.pd, 0, &x.b), c->expect);
	KUNIT_EXPECT_EQ(test, win->stag, c->expect ? before : x.b.mw_rkey);
	if (c->expect)
		return;
	KUNIT_EXPECT_EQ(test, win->state,
			x.b.mr_lkey ? RSW_MR_VALID : RSW_MR_INVALID);
	KUNIT_EXPECT_EQ(test, rsw_mt_check(x.pd, x.b.mw_rkey, RSW_MT_MW_TO, 1,
					   IB_ACCESS_REMOTE_READ),
			x.b.mr_lkey ? RSW_MR_OK : RSW_MR_ERR_STATE);
}

/* Every access through a window is held to its range, rights and PD. */
static void rsw_mt_mw_access_narrowed(struct kunit *test)
{
	struct ib_mr *mr = rsw_mt_mw_mr(test, RSW_MT_MW_MR_ACCESS);
	struct ib_mw *mw = rsw_mt_alloc_mw(test, rsw_mt.pd, IB_MW_TYPE_2);
	const u32 w = IB_ACCESS_REMOTE_WRITE;
	const u64 end = RSW_MT_MW_TO + RSW_MT_MW_LEN;
	u32 old = mw->rkey;

	KUNIT_ASSERT_EQ(test, rsw_mt_bind(mw, mr, w), 0);
	KUNIT_EXPECT_NE(test, mw->rkey, old);
	KUNIT_EXPECT_EQ(test, rsw_mt_check(rsw_mt.pd, mw->rkey, RSW_MT_MW_TO,
					   RSW_MT_MW_LEN, w), RSW_MR_OK);
	/* Inside the MR, outside the window. */
	KUNIT_EXPECT_EQ(test, rsw_mt_check(rsw_mt.pd, mw->rkey, 0x10000, 1, w),
			RSW_MR_ERR_BOUNDS);
	KUNIT_EXPECT_EQ(test, rsw_mt_check(rsw_mt.pd, mw->rkey, end - 1, 2, w),
			RSW_MR_ERR_BOUNDS);
	KUNIT_EXPECT_EQ(test, rsw_mt_check(rsw_mt.pd, mw->rkey, RSW_MT_MW_TO,
					   1, IB_ACCESS_REMOTE_READ),
			RSW_MR_ERR_ACCESS);
	/* A window is no local key, whatever rights it has. */
	KUNIT_EXPECT_EQ(test, rsw_mt_check(rsw_mt.pd, mw->rkey, RSW_MT_MW_TO,
					   1, 0), RSW_MR_ERR_STAG);
	KUNIT_EXPECT_EQ(test, rsw_mt_check(rsw_mt.pd, mw->rkey, RSW_MT_MW_TO,
					   1, IB_ACCESS_LOCAL_WRITE),
			RSW_MR_ERR_STAG);
	KUNIT_EXPECT_EQ(test, rsw_mt_check(rsw_mt.pd2, mw->rkey, RSW_MT_MW_TO,
					   1, w), RSW_MR_ERR_PD);
	KUNIT_EXPECT_EQ(test, rsw_mt_check(rsw_mt.pd, old, RSW_MT_MW_TO, 1, w),
			RSW_MR_ERR_STAG);
	/* The MR's own STag still has its own (local) rights only. */
	KUNIT_EXPECT_EQ(test, rsw_mt_check(rsw_mt.pd, mr->rkey, RSW_MT_MW_TO,
					   1, w), RSW_MR_ERR_ACCESS);
}

static bool rsw_mt_mw_hold_seg(void *arg, struct page *page, unsigned int off,
			       unsigned int len)
{
	struct rsw_mr_ref *ref = arg;

	/* What the TX engine does with a piece: a page reference. */
	rsw_mr_unhold(ref->mr, page, rsw_mr_hold(ref->mr, page));
	return true;
}

/* Data written through the window lands in the MR's memory. */
static void rsw_mt_mw_copy_through(struct kunit *test)
{
	struct ib_mr *mr = rsw_mt_mw_mr(test, RSW_MT_MW_MR_ACCESS);
	struct ib_mw *mw = rsw_mt_alloc_mw(test, rsw_mt.pd, IB_MW_TYPE_1);
	u8 in[64], out[64];
	struct rsw_mr_ref ref;
	unsigned int nr;
	struct bio_vec bv[2];
	u64 bytes;

	memset(in, 0xa5, sizeof(in));
	KUNIT_ASSERT_EQ(test, rsw_mt_bind(mw, mr, RSW_MT_MW_RW), 0);
	KUNIT_ASSERT_EQ(test, rsw_mr_get(rsw_mt.rsw, rsw_mt.pd, mw->rkey,
					 RSW_MT_MW_TO, 64,
					 IB_ACCESS_REMOTE_WRITE, &ref),
			RSW_MR_OK);
	KUNIT_EXPECT_EQ(test, rsw_mr_copy_to(&ref, RSW_MT_MW_TO, in, 64),
			RSW_MR_OK);
	KUNIT_EXPECT_EQ(test, rsw_mr_walk(&ref, RSW_MT_MW_TO, 64,
					  rsw_mt_mw_hold_seg, &ref), RSW_MR_OK);
	KUNIT_EXPECT_EQ(test, rsw_mr_bvecs(&ref, RSW_MT_MW_TO, 64, bv, 2, &nr,
					   &bytes), RSW_MR_OK);
	KUNIT_EXPECT_EQ(test, bytes, 64ULL);
	rsw_mr_ref_put(&ref);
	/* Read back through the MR itself (its local right). */
	KUNIT_ASSERT_EQ(test, rsw_mr_get(rsw_mt.rsw, rsw_mt.pd, mr->lkey,
					 RSW_MT_MW_TO, 64, 0, &ref),
			RSW_MR_OK);
	KUNIT_EXPECT_EQ(test, rsw_mr_copy_from(&ref, RSW_MT_MW_TO, out, 64),
			RSW_MR_OK);
	KUNIT_EXPECT_MEMEQ(test, out, in, 64);
	rsw_mr_ref_put(&ref);
}

/*
 * Invalidation: a type 2 window by LOCAL_INV or Send with Invalidate
 * (then free to bind again), never a type 1 window; a reference taken
 * before stops working.
 */
static void rsw_mt_mw_invalidate(struct kunit *test)
{
	struct ib_mr *mr = rsw_mt_mw_mr(test, RSW_MT_MW_MR_ACCESS);
	struct ib_mw *mw1 = rsw_mt_alloc_mw(test, rsw_mt.pd, IB_MW_TYPE_1);
	struct ib_mw *mw2 = rsw_mt_alloc_mw(test, rsw_mt.pd, IB_MW_TYPE_2);
	struct rsw_device *rsw = rsw_mt.rsw;
	struct rsw_mr_ref ref;
	u8 buf[8] = {};

	KUNIT_ASSERT_EQ(test, rsw_mt_bind(mw1, mr, RSW_MT_MW_RW), 0);
	KUNIT_ASSERT_EQ(test, rsw_mt_bind(mw2, mr, RSW_MT_MW_RW), 0);
	KUNIT_EXPECT_EQ(test, rsw_mr_invalidate_remote(rsw, rsw_mt.pd, 0,
						       mw1->rkey, NULL),
			RSW_MR_ERR_NO_INVAL);
	KUNIT_EXPECT_EQ(test, rsw_mr_invalidate_local(rsw, rsw_mt.pd, 0,
						      mw1->rkey, NULL),
			RSW_MR_ERR_NO_INVAL);
	KUNIT_EXPECT_EQ(test, rsw_mt_check(rsw_mt.pd, mw1->rkey, RSW_MT_MW_TO,
					   8, IB_ACCESS_REMOTE_READ), RSW_MR_OK);

	KUNIT_EXPECT_EQ(test, rsw_mr_invalidate_remote(rsw, rsw_mt.pd2, 0,
						       mw2->rkey, NULL),
			RSW_MR_ERR_PD);
	KUNIT_ASSERT_EQ(test, rsw_mr_get(rsw, rsw_mt.pd, mw2->rkey,
					 RSW_MT_MW_TO, 8,
					 IB_ACCESS_REMOTE_WRITE, &ref),
			RSW_MR_OK);
	KUNIT_EXPECT_EQ(test, rsw_mr_invalidate_remote(rsw, rsw_mt.pd, 0,
						       mw2->rkey, NULL),
			RSW_MR_OK);
	KUNIT_EXPECT_NULL(test, to_rsw_mw(mw2)->win->parent);
	KUNIT_EXPECT_EQ(test, rsw_mr_copy_to(&ref, RSW_MT_MW_TO, buf, 8),
			RSW_MR_ERR_STATE);
	rsw_mr_ref_put(&ref);
	KUNIT_EXPECT_EQ(test, rsw_mr_invalidate_remote(rsw, rsw_mt.pd, 0,
						       mw2->rkey, NULL),
			RSW_MR_ERR_STATE);
	KUNIT_EXPECT_EQ(test, rsw_mr_invalidate_local(rsw, rsw_mt.pd, 0,
						      mw2->rkey, NULL),
			RSW_MR_OK);
	/* Free again: bound under its next key, then invalidated locally. */
	KUNIT_ASSERT_EQ(test, rsw_mt_bind(mw2, mr, RSW_MT_MW_RW), 0);
	KUNIT_EXPECT_EQ(test, rsw_mr_invalidate_local(rsw, rsw_mt.pd, 0,
						      mw2->rkey, NULL),
			RSW_MR_OK);
	KUNIT_EXPECT_EQ(test, rsw_mt_check(rsw_mt.pd, mw2->rkey, RSW_MT_MW_TO,
					   8, IB_ACCESS_REMOTE_READ),
			RSW_MR_ERR_STATE);
	/* An MR's invalidation never reaches a window by mistake. */
	KUNIT_EXPECT_EQ(test, rsw_mr_invalidate_local(rsw, rsw_mt.pd, 0,
						      mr->rkey, NULL),
			RSW_MR_ERR_NO_INVAL);
}

/* One TX piece taken through a window's walk, as rsw_tx_collect() does. */
struct rsw_mt_mw_piece {
	struct rsw_mr *mw;
	struct page *page;
	enum rsw_mr_hold hold;
	bool held;
};

static bool rsw_mt_mw_piece_seg(void *arg, struct page *page,
				unsigned int off, unsigned int len)
{
	struct rsw_mt_mw_piece *p = arg;

	p->page = page;
	p->hold = rsw_mr_hold(p->mw, page);
	p->held = true;
	return false;
}

static void rsw_mt_mw_piece_drop(void *arg)
{
	struct rsw_mt_mw_piece *p = arg;

	if (p->held)
		rsw_mr_unhold(p->mw, p->page, p->hold);
	p->held = false;
}

/* A piece of window @mw (REMOTE_READ) held until rsw_mt_mw_piece_drop(). */
static struct rsw_mt_mw_piece *rsw_mt_mw_piece(struct kunit *test,
					       struct ib_mw *mw)
{
	struct rsw_mt_mw_piece *p = kunit_kzalloc(test, sizeof(*p),
						  GFP_KERNEL);
	struct rsw_mr_ref ref;

	KUNIT_ASSERT_NOT_NULL(test, p);
	p->mw = to_rsw_mw(mw)->win;
	KUNIT_ASSERT_EQ(test, rsw_mr_get(rsw_mt.rsw, rsw_mt.pd, mw->rkey,
					 RSW_MT_MW_TO, 8,
					 IB_ACCESS_REMOTE_READ, &ref),
			RSW_MR_OK);
	KUNIT_EXPECT_EQ(test, rsw_mr_walk(&ref, RSW_MT_MW_TO, 8,
					  rsw_mt_mw_piece_seg, p), RSW_MR_OK);
	rsw_mr_ref_put(&ref);
	KUNIT_ASSERT_TRUE(test, p->held);
	KUNIT_ASSERT_EQ(test,
			kunit_add_action_or_reset(test, rsw_mt_mw_piece_drop,
						  p), 0);
	return p;
}

/*
 * Review of the windows (H1): a TX piece read through a window counts in
 * the window, so that its invalidation waits for it (the process rewrites
 * the memory once told), and is never one TCP may splice.
 */
static void rsw_mt_mw_tx_piece_counted(struct kunit *test)
{
	struct ib_mr *mr = rsw_mt_mw_mr(test, RSW_MT_MW_MR_ACCESS);
	struct ib_mw *mw = rsw_mt_alloc_mw(test, rsw_mt.pd, IB_MW_TYPE_2);
	struct rsw_mt_mw_piece *p;
	struct rsw_mr *busy;
	int pref;

	KUNIT_ASSERT_EQ(test, rsw_mt_bind(mw, mr, RSW_MT_MW_RW), 0);
	p = rsw_mt_mw_piece(test, mw);
	KUNIT_EXPECT_EQ(test, p->hold, RSW_MR_HOLD_WINDOW);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->mw->tx_busy), 1);
	pref = page_ref_count(p->page);
	/* A Send with Invalidate (no sleeping) is told to wait. */
	KUNIT_EXPECT_EQ(test, rsw_mr_invalidate_remote(rsw_mt.rsw, rsw_mt.pd, 0,
						       mw->rkey, &busy),
			RSW_MR_OK);
	KUNIT_EXPECT_PTR_EQ(test, busy, p->mw);
	rsw_mt_mw_piece_drop(p);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->mw->tx_busy), 0);
	KUNIT_EXPECT_EQ(test, page_ref_count(p->page), pref - 1);
	if (busy)
		rsw_mr_wait_tx_put(busy);
}

static void rsw_mt_kfree(void *p)
{
	kfree(p);
}

struct rsw_mt_mw_dealloc {
	struct work_struct work;
	struct ib_mw *mw;
	struct completion done;
};

static void rsw_mt_mw_dealloc_fn(struct work_struct *work)
{
	struct rsw_mt_mw_dealloc *d = container_of(work, typeof(*d), work);

	d->mw->device->ops.dealloc_mw(d->mw);
	complete(&d->done);
}

/* dealloc_mw returns only once the pieces read through the window are sent. */
static void rsw_mt_mw_dealloc_waits_tx(struct kunit *test)
{
	struct ib_mr *mr = rsw_mt_mw_mr(test, RSW_MT_MW_MR_ACCESS);
	struct rsw_mt_mw_dealloc *d = kunit_kzalloc(test, sizeof(*d),
						    GFP_KERNEL);
	struct rsw_mt_mw_piece *p;

	KUNIT_ASSERT_NOT_NULL(test, d);
	d->mw = rdma_zalloc_drv_obj(rsw_mt.ibdev, ib_mw);
	KUNIT_ASSERT_NOT_NULL(test, d->mw);
	d->mw->device = rsw_mt.ibdev;
	d->mw->pd = rsw_mt.pd;
	d->mw->type = IB_MW_TYPE_1;
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, rsw_mt_kfree, d->mw),
			0);
	KUNIT_ASSERT_EQ(test, rsw_mt.ibdev->ops.alloc_mw(d->mw, NULL), 0);
	KUNIT_ASSERT_EQ(test, rsw_mt_bind(d->mw, mr, RSW_MT_MW_RW), 0);
	p = rsw_mt_mw_piece(test, d->mw);
	init_completion(&d->done);
	INIT_WORK(&d->work, rsw_mt_mw_dealloc_fn);
	schedule_work(&d->work);
	KUNIT_EXPECT_FALSE_MSG(test,
			       wait_for_completion_timeout(&d->done, HZ / 5),
			       "dealloc_mw returned with a piece in flight");
	rsw_mt_mw_piece_drop(p);
	KUNIT_EXPECT_TRUE(test,
			  wait_for_completion_timeout(&d->done, 10 * HZ));
	flush_work(&d->work);
}

/*
 * dereg_mr of an MR with bound windows succeeds; the windows, and
 * references taken through them before, fail from then on, and a type 2
 * window is free to bind to another MR.
 */
static void rsw_mt_mw_mr_dereg(struct kunit *test)
{
	struct ib_mr *mr = rsw_mt_mw_mr(test, RSW_MT_MW_MR_ACCESS);
	struct ib_mr *mr2 = rsw_mt_mw_mr(test, RSW_MT_MW_MR_ACCESS);
	struct ib_mw *mw1 = rsw_mt_alloc_mw(test, rsw_mt.pd, IB_MW_TYPE_1);
	struct ib_mw *mw2 = rsw_mt_alloc_mw(test, rsw_mt.pd, IB_MW_TYPE_2);
	struct rdmap_sw_sqe_bind dead;
	struct rsw_mr_ref ref;
	u8 buf[8] = {};

	KUNIT_ASSERT_EQ(test, rsw_mt_bind(mw1, mr, RSW_MT_MW_RW), 0);
	KUNIT_ASSERT_EQ(test, rsw_mt_bind(mw2, mr, RSW_MT_MW_RW), 0);
	dead = rsw_mt_bind_op(mw1, mr, RSW_MT_MW_RW);
	KUNIT_ASSERT_EQ(test, rsw_mr_get(rsw_mt.rsw, rsw_mt.pd, mw1->rkey,
					 RSW_MT_MW_TO, 8,
					 IB_ACCESS_REMOTE_WRITE, &ref),
			RSW_MR_OK);
	rsw_mt_dereg(test, mr);
	KUNIT_EXPECT_EQ(test, rsw_mr_copy_to(&ref, RSW_MT_MW_TO, buf, 8),
			RSW_MR_ERR_STATE);
	rsw_mr_ref_put(&ref);
	KUNIT_EXPECT_EQ(test, rsw_mt_check(rsw_mt.pd, mw1->rkey, RSW_MT_MW_TO,
					   8, IB_ACCESS_REMOTE_READ),
			RSW_MR_ERR_STATE);
	KUNIT_EXPECT_EQ(test, rsw_mt_check(rsw_mt.pd, mw2->rkey, RSW_MT_MW_TO,
					   8, IB_ACCESS_REMOTE_READ),
			RSW_MR_ERR_STATE);
	/* No bind onto the dead MR; its windows bind to another one. */
	KUNIT_EXPECT_EQ(test, rsw_mt_do_bind(mw1, rsw_mt.pd, &dead), -EINVAL);
	KUNIT_EXPECT_EQ(test, rsw_mt_bind(mw2, mr2, RSW_MT_MW_RW), 0);
	KUNIT_EXPECT_EQ(test, rsw_mt_bind(mw1, mr2, RSW_MT_MW_RW), 0);
	KUNIT_EXPECT_EQ(test, rsw_mt_check(rsw_mt.pd, mw2->rkey, RSW_MT_MW_TO,
					   8, IB_ACCESS_REMOTE_READ), RSW_MR_OK);
}

/*
 * Review of the windows (M2): dereg_mr unbinds the windows on the MR, so
 * none keeps the dead MR (its struct and page list) alive; a window
 * rebound elsewhere before is not touched.
 */
static void rsw_mt_mw_mr_dereg_unbinds(struct kunit *test)
{
	struct ib_mr *mr = rsw_mt_mw_mr(test, RSW_MT_MW_MR_ACCESS);
	struct ib_mr *mr2 = rsw_mt_mw_mr(test, RSW_MT_MW_MR_ACCESS);
	struct ib_mw *mw1 = rsw_mt_alloc_mw(test, rsw_mt.pd, IB_MW_TYPE_1);
	struct ib_mw *mw2 = rsw_mt_alloc_mw(test, rsw_mt.pd, IB_MW_TYPE_2);
	struct ib_mw *mw3 = rsw_mt_alloc_mw(test, rsw_mt.pd, IB_MW_TYPE_1);
	struct rsw_mr *m = to_rsw_mr(mr);

	KUNIT_ASSERT_EQ(test, rsw_mt_bind(mw1, mr, RSW_MT_MW_RW), 0);
	KUNIT_ASSERT_EQ(test, rsw_mt_bind(mw2, mr, RSW_MT_MW_RW), 0);
	KUNIT_ASSERT_EQ(test, rsw_mt_bind(mw3, mr, RSW_MT_MW_RW), 0);
	KUNIT_ASSERT_EQ(test, rsw_mt_bind(mw3, mr2, RSW_MT_MW_RW), 0);
	/* The registry's reference and one per window bound. */
	KUNIT_EXPECT_EQ(test, refcount_read(&m->ref), 3);
	rsw_mt_dereg(test, mr);
	KUNIT_EXPECT_NULL(test, to_rsw_mw(mw1)->win->parent);
	KUNIT_EXPECT_NULL(test, to_rsw_mw(mw2)->win->parent);
	KUNIT_EXPECT_PTR_EQ(test, to_rsw_mw(mw3)->win->parent, to_rsw_mr(mr2));
	KUNIT_EXPECT_EQ(test, rsw_mt_check(rsw_mt.pd, mw3->rkey, RSW_MT_MW_TO,
					   8, IB_ACCESS_REMOTE_READ), RSW_MR_OK);
}

/* Write @buf through @mw (REMOTE_WRITE) or read into it, as QP @qp. */
static enum rsw_mr_err rsw_mt_mw_qp_copy(struct ib_mw *mw, u64 qp, u32 right,
					 u8 *buf)
{
	struct rsw_mr_ref ref;
	enum rsw_mr_err err;

	err = rsw_mr_get_qp(rsw_mt.rsw, rsw_mt.pd, qp, mw->rkey, RSW_MT_MW_TO,
			    8, right, &ref);
	if (err)
		return err;
	if (right == IB_ACCESS_REMOTE_WRITE)
		err = rsw_mr_copy_to(&ref, RSW_MT_MW_TO, buf, 8);
	else
		err = rsw_mr_copy_from(&ref, RSW_MT_MW_TO, buf, 8);
	rsw_mr_ref_put(&ref);
	return err;
}

/*
 * Review of the windows (M1): a type 2 window serves the QP that bound it
 * (type 2B: its PD is checked as well), and a QP of the same PD gets "not
 * associated" for Writes, Reads, Atomics and both invalidations, the
 * memory untouched.  A type 1 window serves every QP of its PD.
 */
static void rsw_mt_mw_type2_bound_qp(struct kunit *test)
{
	struct ib_mr *mr = rsw_mt_mw_mr(test, RSW_MT_MW_MR_ACCESS);
	struct ib_mw *mw1 = rsw_mt_alloc_mw(test, rsw_mt.pd, IB_MW_TYPE_1);
	struct ib_mw *mw2 = rsw_mt_alloc_mw(test, rsw_mt.pd, IB_MW_TYPE_2);
	struct rdmap_sw_sqe_bind b = rsw_mt_bind_op(mw2, mr, RSW_MT_MW_RW);
	struct rsw_device *rsw = rsw_mt.rsw;
	const u64 qa = 7, qb = 8;
	u8 in[8], bad[8], out[8] = {};
	struct rsw_mr_ref ref;

	KUNIT_EXPECT_TRUE(test, rsw_mt.ibdev->attrs.device_cap_flags &
			  IB_DEVICE_MEM_WINDOW_TYPE_2B);
	KUNIT_ASSERT_EQ(test, rsw_mw_bind(rsw, rsw_mt.pd, qa, &b), 0);
	mw2->rkey = b.mw_rkey;
	b = rsw_mt_bind_op(mw1, mr, RSW_MT_MW_RW);
	KUNIT_ASSERT_EQ(test, rsw_mw_bind(rsw, rsw_mt.pd, qa, &b), 0);
	mw1->rkey = b.mw_rkey;
	/* Its own QP writes; another QP's Write and Read are refused. */
	memset(in, 0x3c, sizeof(in));
	memset(bad, 0xee, sizeof(bad));
	KUNIT_EXPECT_EQ(test, rsw_mt_mw_qp_copy(mw2, qa, IB_ACCESS_REMOTE_WRITE,
						in), RSW_MR_OK);
	KUNIT_EXPECT_EQ(test, rsw_mt_mw_qp_copy(mw2, qb, IB_ACCESS_REMOTE_WRITE,
						bad), RSW_MR_ERR_PD);
	KUNIT_EXPECT_EQ(test, rsw_mt_mw_qp_copy(mw2, qb, IB_ACCESS_REMOTE_READ,
						out), RSW_MR_ERR_PD);
	KUNIT_EXPECT_EQ(test, rsw_mr_get_qp(rsw, rsw_mt.pd2, qa, mw2->rkey,
					    RSW_MT_MW_TO, 8,
					    IB_ACCESS_REMOTE_READ, &ref),
			RSW_MR_ERR_PD);
	KUNIT_EXPECT_EQ(test, rsw_mr_invalidate_remote(rsw, rsw_mt.pd, qb,
						       mw2->rkey, NULL),
			RSW_MR_ERR_PD);
	KUNIT_EXPECT_EQ(test, rsw_mr_invalidate_local(rsw, rsw_mt.pd, qb,
						      mw2->rkey, NULL),
			RSW_MR_ERR_PD);
	/* Memory untouched; a type 1 window serves every QP of its PD. */
	KUNIT_EXPECT_EQ(test, rsw_mt_mw_qp_copy(mw1, qb, IB_ACCESS_REMOTE_READ,
						out), RSW_MR_OK);
	KUNIT_EXPECT_MEMEQ(test, out, in, 8);
	KUNIT_EXPECT_EQ(test, rsw_mr_invalidate_local(rsw, rsw_mt.pd, qa,
						      mw2->rkey, NULL),
			RSW_MR_OK);
}

/* Windows count apart from MRs and are advertised. */
static void rsw_mt_mw_limits(struct kunit *test)
{
	struct ib_device_attr *attrs = &rsw_mt.ibdev->attrs;
	int before = atomic_read(&rsw_mt.rsw->mrs.mw_count);

	KUNIT_EXPECT_EQ(test, attrs->max_mw, RSW_MAX_MW);
	KUNIT_EXPECT_TRUE(test, attrs->device_cap_flags &
			  IB_DEVICE_MEM_WINDOW);
	rsw_mt_alloc_mw(test, rsw_mt.pd, IB_MW_TYPE_1);
	KUNIT_EXPECT_EQ(test, atomic_read(&rsw_mt.rsw->mrs.mw_count),
			before + 1);
}

/* ------------------------------------------------------------------------
 * Terminate codes
 */
struct rsw_mt_term_case {
	const char *desc;
	enum rsw_mr_err err;
	enum rsw_mr_use use;
	struct rsw_term_cause expect;
};

static const struct rsw_mt_term_case rsw_mt_term_cases[] = {
	{ "tagged: invalid STag", RSW_MR_ERR_STAG, RSW_MR_USE_TAGGED,
	  { RSW_TERM_LAYER_DDP, RSW_DDP_ET_TAGGED, RSW_DDP_EC_T_INVALID_STAG } },
	{ "tagged: bounds", RSW_MR_ERR_BOUNDS, RSW_MR_USE_TAGGED,
	  { RSW_TERM_LAYER_DDP, RSW_DDP_ET_TAGGED, RSW_DDP_EC_T_BASE_BOUNDS } },
	{ "tagged: other PD", RSW_MR_ERR_PD, RSW_MR_USE_TAGGED,
	  { RSW_TERM_LAYER_DDP, RSW_DDP_ET_TAGGED,
	    RSW_DDP_EC_T_STAG_NOT_ASSOC } },
	{ "tagged: wrap", RSW_MR_ERR_WRAP, RSW_MR_USE_TAGGED,
	  { RSW_TERM_LAYER_DDP, RSW_DDP_ET_TAGGED, RSW_DDP_EC_T_TO_WRAP } },
	{ "tagged: no write right", RSW_MR_ERR_ACCESS, RSW_MR_USE_TAGGED,
	  { RSW_TERM_LAYER_DDP, RSW_DDP_ET_TAGGED, RSW_DDP_EC_T_INVALID_STAG } },
	{ "read: access", RSW_MR_ERR_ACCESS, RSW_MR_USE_READ_REQ,
	  { RSW_TERM_LAYER_RDMAP, RSW_RDMAP_ET_REMOTE_PROT,
	    RSW_RDMAP_EC_ACCESS } },
	{ "read: invalid state", RSW_MR_ERR_STATE, RSW_MR_USE_READ_REQ,
	  { RSW_TERM_LAYER_RDMAP, RSW_RDMAP_ET_REMOTE_PROT,
	    RSW_RDMAP_EC_INVALID_STAG } },
	{ "read: other PD", RSW_MR_ERR_PD, RSW_MR_USE_READ_REQ,
	  { RSW_TERM_LAYER_RDMAP, RSW_RDMAP_ET_REMOTE_PROT,
	    RSW_RDMAP_EC_STAG_NOT_ASSOC } },
	{ "read: wrap", RSW_MR_ERR_WRAP, RSW_MR_USE_READ_REQ,
	  { RSW_TERM_LAYER_RDMAP, RSW_RDMAP_ET_REMOTE_PROT,
	    RSW_RDMAP_EC_TO_WRAP } },
	{ "invalidate: other PD", RSW_MR_ERR_PD, RSW_MR_USE_INVALIDATE,
	  { RSW_TERM_LAYER_RDMAP, RSW_RDMAP_ET_REMOTE_PROT,
	    RSW_RDMAP_EC_CANT_INVALIDATE } },
	{ "invalidate: not allowed", RSW_MR_ERR_NO_INVAL, RSW_MR_USE_INVALIDATE,
	  { RSW_TERM_LAYER_RDMAP, RSW_RDMAP_ET_REMOTE_PROT,
	    RSW_RDMAP_EC_CANT_INVALIDATE } },
	{ "invalidate: unknown STag", RSW_MR_ERR_STAG, RSW_MR_USE_INVALIDATE,
	  { RSW_TERM_LAYER_RDMAP, RSW_RDMAP_ET_REMOTE_PROT,
	    RSW_RDMAP_EC_INVALID_STAG } },
};

KUNIT_ARRAY_PARAM_DESC(rsw_mt_term, rsw_mt_term_cases, desc);

static void rsw_mt_term_codes(struct kunit *test)
{
	const struct rsw_mt_term_case *c = test->param_value;
	struct rsw_term_cause t = rsw_mr_err_to_term(c->err, c->use);

	KUNIT_EXPECT_EQ(test, t.layer, c->expect.layer);
	KUNIT_EXPECT_EQ(test, t.etype, c->expect.etype);
	KUNIT_EXPECT_EQ(test, t.ecode, c->expect.ecode);
}

/* Every reason in every use maps to a triple the RFCs define. */
static void rsw_mt_term_codes_defined(struct kunit *test)
{
	enum rsw_mr_use use;
	enum rsw_mr_err err;

	for (use = RSW_MR_USE_TAGGED; use <= RSW_MR_USE_INVALIDATE; use++) {
		for (err = RSW_MR_ERR_STAG; err <= RSW_MR_ERR_NO_INVAL; err++) {
			struct rsw_term_cause t = rsw_mr_err_to_term(err, use);
			const char *name = rsw_term_name(t.layer, t.etype,
							 t.ecode);

			KUNIT_EXPECT_NOT_NULL_MSG(test, name, "use %d err %d",
						  use, err);
		}
	}
}

/* ------------------------------------------------------------------------
 * Copy and walk against a reference, with guard bytes
 */
struct rsw_mt_copy_case {
	const char *desc;
	u32 psize;
	u32 npages;
	u32 fbo;
	u32 tail;
	u32 seed;
};

static const struct rsw_mt_copy_case rsw_mt_copy_cases[] = {
	{ "8 x 4K", SZ_4K, 8, 0, 0, 1 },
	{ "8 x 4K, first byte at 1000, tail 77", SZ_4K, 8, 1000, 77, 2 },
	{ "16 x 512, first byte at 37", 512, 16, 37, 5, 3 },
	{ "4 x 64K, first byte at 4097", SZ_64K, 4, 4097, 1, 4 },
	{ "2 x 2M, first byte at 12345", SZ_2M, 2, 12345, 999, 5 },
};

KUNIT_ARRAY_PARAM_DESC(rsw_mt_copy, rsw_mt_copy_cases, desc);

/*
 * Memory behind a fast-reg MR: MR page i lies at a random psize-aligned
 * slot of its own allocation unit (max(PAGE_SIZE, 2 * psize)), the rest of
 * the unit is guard.  shadow[] is what the region must hold.
 */
struct rsw_mt_mem {
	const struct rsw_mt_copy_case *c;
	u32 unit;
	u8 **unit_kva;
	u8 **kva;		/* MR page i */
	u64 length;		/* of the region */
	u8 *shadow;
	struct rnd_state rnd;
};

static void rsw_mt_mem_build(struct kunit *test, struct rsw_mt_mem *m)
{
	const struct rsw_mt_copy_case *c = m->c;
	u32 i, slots;

	m->unit = max_t(u32, PAGE_SIZE, 2 * c->psize);
	slots = m->unit / c->psize;
	m->unit_kva = kunit_kcalloc(test, c->npages, sizeof(u8 *), GFP_KERNEL);
	m->kva = kunit_kcalloc(test, c->npages, sizeof(u8 *), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, m->unit_kva);
	KUNIT_ASSERT_NOT_NULL(test, m->kva);
	for (i = 0; i < c->npages; i++) {
		m->unit_kva[i] = rsw_mt_pages(test, get_order(m->unit));
		memset(m->unit_kva[i], RSW_MT_GUARD, m->unit);
		m->kva[i] = m->unit_kva[i] +
			    prandom_u32_state(&m->rnd) % slots * c->psize;
	}
	m->length = (u64)c->npages * c->psize - c->fbo - c->tail;
	m->shadow = rsw_mt_vmalloc(test, m->length);
	memset(m->shadow, RSW_MT_GUARD, m->length);
}

/* Every byte of every unit: shadow inside the region, guard elsewhere. */
static void rsw_mt_mem_verify(struct kunit *test, struct rsw_mt_mem *m)
{
	const struct rsw_mt_copy_case *c = m->c;
	u32 i;

	for (i = 0; i < c->npages; i++) {
		u64 first = (u64)i * c->psize;	/* MR page offset of byte 0 */
		u64 lo = max_t(u64, first, c->fbo);
		u64 hi = min_t(u64, first + c->psize, c->fbo + m->length);
		u8 *base = m->unit_kva[i];
		u8 *in = m->kva[i] + (lo - first);
		u8 *in_end = m->kva[i] + (hi - first);
		u8 *end = base + m->unit;

		KUNIT_ASSERT_NULL_MSG(test, memchr_inv(base, RSW_MT_GUARD,
						       in - base),
				      "guard before page %u", i);
		KUNIT_ASSERT_NULL_MSG(test, memchr_inv(in_end, RSW_MT_GUARD,
						       end - in_end),
				      "guard after page %u", i);
		KUNIT_ASSERT_TRUE_MSG(test, !memcmp(in, m->shadow + lo - c->fbo,
						    hi - lo),
				      "content of page %u", i);
	}
}

/* Longest copy: a few MR pages, but no more than a few hundred KiB. */
static u32 rsw_mt_max_op(const struct rsw_mt_copy_case *c)
{
	return 3 * min_t(u32, c->psize, SZ_64K) + 100;
}

/* A random range, half of them straddling an MR page boundary. */
static void rsw_mt_mem_range(struct rsw_mt_mem *m, u64 *off, u64 *len)
{
	u32 psize = m->c->psize;
	u64 max_len = min_t(u64, m->length, rsw_mt_max_op(m->c));

	*len = prandom_u32_state(&m->rnd) % (max_len + 1);
	if (prandom_u32_state(&m->rnd) & 1) {
		u64 edge = (prandom_u32_state(&m->rnd) % m->c->npages) * psize;
		u64 back = prandom_u32_state(&m->rnd) % (*len + 1);

		*off = edge > m->c->fbo + back ? edge - m->c->fbo - back : 0;
	} else {
		*off = prandom_u32_state(&m->rnd) % (m->length + 1);
	}
	*off = min(*off, m->length);
	*len = min(*len, m->length - *off);
}

static void rsw_mt_copy_random(struct kunit *test)
{
	struct rsw_mt_mem m = { .c = test->param_value };
	const struct rsw_mt_copy_case *c = m.c;
	struct rsw_mr_ref ref;
	struct ib_mr *mr;
	u8 *buf;
	int i;

	prandom_seed_state(&m.rnd, c->seed);
	rsw_mt_mem_build(test, &m);
	buf = rsw_mt_vmalloc(test, rsw_mt_max_op(c));
	mr = rsw_mt_alloc_mr(test, c->npages);
	KUNIT_ASSERT_EQ(test, rsw_mt_map(test, mr, m.kva, c->npages, c->psize,
					 c->fbo, c->tail), c->npages);
	KUNIT_ASSERT_EQ(test, mr->length, m.length);
	KUNIT_ASSERT_EQ(test, rsw_mt_reg(mr, RSW_MT_ALL), 0);
	rsw_mt_get(test, mr, IB_ACCESS_REMOTE_WRITE, &ref);

	for (i = 0; i < 200; i++) {
		u64 off, len, to;

		rsw_mt_mem_range(&m, &off, &len);
		to = mr->iova + off;
		if (i & 1) {
			prandom_bytes_state(&m.rnd, buf, len);
			KUNIT_ASSERT_EQ(test, rsw_mr_copy_to(&ref, to, buf, len),
					RSW_MR_OK);
			memcpy(m.shadow + off, buf, len);
		} else {
			KUNIT_ASSERT_EQ(test, rsw_mr_copy_from(&ref, to, buf,
							       len), RSW_MR_OK);
			KUNIT_ASSERT_EQ_MSG(test, memcmp(buf, m.shadow + off,
							 len), 0,
					    "read %llu at %llu", len, off);
		}
	}
	rsw_mr_ref_put(&ref);
	rsw_mt_mem_verify(test, &m);
}

/* Bio_vecs name exactly the bytes the reference layout says, in order. */
static void rsw_mt_bvecs_match_layout(struct kunit *test)
{
	static const struct rsw_mt_copy_case c = {
		"bvecs", 512, 16, 37, 5, 6
	};
	struct rsw_mt_mem m = { .c = &c };
	struct bio_vec bv[32];
	unsigned int nr, i;
	struct rsw_mr_ref ref;
	struct ib_mr *mr;
	u64 bytes, pos = 0;

	prandom_seed_state(&m.rnd, c.seed);
	rsw_mt_mem_build(test, &m);
	mr = rsw_mt_alloc_mr(test, c.npages);
	KUNIT_ASSERT_EQ(test, rsw_mt_map(test, mr, m.kva, c.npages, c.psize,
					 c.fbo, c.tail), c.npages);
	KUNIT_ASSERT_EQ(test, rsw_mt_reg(mr, RSW_MT_ALL), 0);
	rsw_mt_get(test, mr, IB_ACCESS_REMOTE_READ, &ref);
	KUNIT_ASSERT_EQ(test, rsw_mr_bvecs(&ref, mr->iova, m.length, bv,
					   ARRAY_SIZE(bv), &nr, &bytes),
			RSW_MR_OK);
	KUNIT_EXPECT_EQ(test, bytes, m.length);
	for (i = 0; i < nr; i++) {
		u64 r = c.fbo + pos;	/* MR page offset of this bvec */
		u8 *want = m.kva[r / c.psize] + r % c.psize;

		KUNIT_EXPECT_PTR_EQ(test, (u8 *)page_address(bv[i].bv_page) +
				    bv[i].bv_offset, want);
		pos += bv[i].bv_len;
	}
	KUNIT_EXPECT_EQ(test, pos, m.length);
	/* Too few bio_vecs: a prefix, and it says how long. */
	KUNIT_EXPECT_EQ(test, rsw_mr_bvecs(&ref, mr->iova, m.length, bv, 2,
					   &nr, &bytes), RSW_MR_OK);
	KUNIT_EXPECT_EQ(test, nr, 2);
	KUNIT_EXPECT_EQ(test, bytes, (u64)bv[0].bv_len + bv[1].bv_len);
	KUNIT_EXPECT_LT(test, bytes, m.length);
	rsw_mr_ref_put(&ref);
}

/* ------------------------------------------------------------------------
 * Lookups in softirq against invalidation and dereg in process context
 */
#define RSW_MT_RACE_IOVA 0x4000ULL
#define RSW_MT_RACE_ROUNDS 100

struct rsw_mt_race {
	struct timer_list timer;
	u32 stag;		/* READ_ONCE/WRITE_ONCE */
	bool stop;
	atomic_t fires;
	atomic_t hits;
	u8 data[64];
};

/* Timer (softirq): look up the current STag and write through it. */
static void rsw_mt_race_timer(struct timer_list *t)
{
	struct rsw_mt_race *r = from_timer(r, t, timer);
	struct rsw_mr_ref ref;
	int i;

	for (i = 0; i < 32; i++) {
		if (rsw_mr_get(rsw_mt.rsw, rsw_mt.pd, READ_ONCE(r->stag),
			       RSW_MT_RACE_IOVA + 64 * i, 64,
			       IB_ACCESS_REMOTE_WRITE, &ref))
			continue;
		if (!rsw_mr_copy_to(&ref, RSW_MT_RACE_IOVA + 64 * i, r->data,
				    sizeof(r->data)))
			atomic_inc(&r->hits);
		rsw_mr_ref_put(&ref);
	}
	atomic_inc(&r->fires);
	if (!READ_ONCE(r->stop))
		mod_timer(&r->timer, jiffies + 1);
}

static void rsw_mt_race_stop(void *data)
{
	struct rsw_mt_race *r = data;

	WRITE_ONCE(r->stop, true);
	timer_shutdown_sync(&r->timer);
}

/* Wait (bounded) until the timer ran at least once more. */
static void rsw_mt_race_wait(struct rsw_mt_race *r)
{
	int seen = atomic_read(&r->fires);
	int i;

	for (i = 0; i < 200 && atomic_read(&r->fires) == seen; i++)
		usleep_range(500, 1000);
}

/*
 * One registration over a fresh page; the page is freed right after the
 * MR is revoked, so KASAN catches any write that gets past the fence.
 */
static void rsw_mt_race_round(struct kunit *test, struct rsw_mt_race *r,
			      int round)
{
	struct page *page = alloc_page(GFP_KERNEL | __GFP_ZERO);
	struct ib_mr *mr = ib_alloc_mr(rsw_mt.pd, IB_MR_TYPE_MEM_REG, 1);
	struct scatterlist sg;

	KUNIT_ASSERT_NOT_NULL(test, page);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr);
	sg_init_table(&sg, 1);
	sg_set_page(&sg, page, PAGE_SIZE, 0);
	ib_dma_map_sg(rsw_mt.ibdev, &sg, 1, DMA_BIDIRECTIONAL);
	KUNIT_EXPECT_EQ(test, ib_map_mr_sg(mr, &sg, 1, NULL, PAGE_SIZE), 1);
	mr->iova = RSW_MT_RACE_IOVA;
	KUNIT_EXPECT_EQ(test, rsw_mt_reg(mr, RSW_MT_ALL), 0);
	WRITE_ONCE(r->stag, mr->rkey);
	rsw_mt_race_wait(r);
	if (round & 1)
		KUNIT_EXPECT_EQ(test, rsw_mr_invalidate_local(rsw_mt.rsw,
							      rsw_mt.pd, 0,
							      mr->rkey, NULL),
				RSW_MR_OK);
	ib_dereg_mr(mr);
	__free_page(page);
}

static void rsw_mt_softirq_lookup_vs_dereg(struct kunit *test)
{
	struct rsw_mt_race *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	int round;

	KUNIT_ASSERT_NOT_NULL(test, r);
	memset(r->data, 0xee, sizeof(r->data));
	timer_setup(&r->timer, rsw_mt_race_timer, 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, rsw_mt_race_stop,
							r), 0);
	mod_timer(&r->timer, jiffies + 1);
	for (round = 0; round < RSW_MT_RACE_ROUNDS; round++)
		rsw_mt_race_round(test, r, round);
	kunit_release_action(test, rsw_mt_race_stop, r);
	/* The timer really did write through valid MRs. */
	KUNIT_EXPECT_GT(test, atomic_read(&r->hits), 0);
}

/* ------------------------------------------------------------------------
 * RFC 7306 section 5.1: rsw_atomic_apply(), against the draft's own
 * pseudo-code written out here independently of mem.c.
 */

/* Section 5.1.1's bit loop, as the draft prints it. */
static u64 rsw_mt_ref_fetch_add(u64 orig, u64 add, u64 add_mask)
{
	u64 bit_location = 1, remote = 0;
	unsigned int carry = 0, sum, val1, val2, bit;

	for (bit = 0; bit < 64; bit++) {
		if (bit != 0)
			bit_location <<= 1;
		val1 = !!(orig & bit_location);
		val2 = !!(add & bit_location);
		sum = carry + val1 + val2;
		carry = !!(sum & 2);
		sum &= 1;
		if (sum)
			remote |= bit_location;
		carry = carry && !(add_mask & bit_location);
	}
	return remote;
}

/* Section 5.1.3's pseudo-code. */
static u64 rsw_mt_ref_cmp_swap(u64 orig, u64 cmp, u64 cmp_mask, u64 swap,
			       u64 swap_mask)
{
	if (!((cmp ^ orig) & cmp_mask))
		return (orig & ~swap_mask) | (swap & swap_mask);
	return orig;
}

static u64 rsw_mt_fadd(u64 old, u64 add, u64 mask)
{
	struct rsw_atomic a = {
		.op = RSW_ATOMIC_FETCH_ADD, .data = add, .data_mask = mask,
		/* What the wire carries for FetchAdd; must not matter. */
		.cmp = 0, .cmp_mask = RSW_ATOMIC_MASK_ALL,
	};

	return rsw_atomic_apply(&a, old);
}

static u64 rsw_mt_cswap(u64 old, u64 cmp, u64 cmp_mask, u64 swap,
			u64 swap_mask)
{
	struct rsw_atomic a = {
		.op = RSW_ATOMIC_CMP_SWAP, .data = swap, .data_mask = swap_mask,
		.cmp = cmp, .cmp_mask = cmp_mask,
	};

	return rsw_atomic_apply(&a, old);
}

struct rsw_mt_fadd_case {
	u64 old, add, mask, expect;
};

/* Literal expectations, worked out by hand from section 5.1.1. */
static const struct rsw_mt_fadd_case rsw_mt_fadd_cases[] = {
	/* Add Mask 0: one plain 64-bit add, wrapping. */
	{ 1, 1, 0, 2 },
	{ 0xffffffffULL, 1, 0, 0x100000000ULL },
	{ 0x7fffffffffffffffULL, 1, 0, 0x8000000000000000ULL },
	{ U64_MAX, 1, 0, 0 },
	{ U64_MAX, U64_MAX, 0, U64_MAX - 1 },
	/* Two 32-bit fields: the low field's carry does not reach bit 32. */
	{ 0x00000001ffffffffULL, 1, 0x8000000080000000ULL,
	  0x0000000100000000ULL },
	{ 0xffffffff00000005ULL, 0x0000000100000003ULL,
	  0x8000000080000000ULL, 0x0000000000000008ULL },
	{ 0x12345678fffffffeULL, 0x0000000100000003ULL,
	  0x8000000080000000ULL, 0x1234567900000001ULL },
	/* Bit 0 a field of its own: 1 + 1 drops the carry. */
	{ 1, 1, 1, 0 },
	{ 3, 1, 1, 2 },
	{ 0xfeULL, 0x2ULL, 1, 0x100ULL },
	/* Fields [0..7] and [8..63]. */
	{ 0xffULL, 1, 0x80, 0 },
	{ 0xffffffffffffff00ULL, 0x100, 0x80, 0 },
	{ 0x00000000000001ffULL, 0x101, 0x80, 0x200ULL },
	/* Only bit 63 set: the same as Add Mask 0. */
	{ U64_MAX, 2, 1ULL << 63, 1 },
	/* All ones: 64 one-bit fields, an XOR. */
	{ 0xf0f0f0f0f0f0f0f0ULL, 0xff00ff00ff00ff00ULL, U64_MAX,
	  0x0ff00ff00ff00ff0ULL },
};

static void rsw_mt_atomic_fetch_add_literal(struct kunit *test)
{
	const struct rsw_mt_fadd_case *c;
	u32 i;

	for (i = 0; i < ARRAY_SIZE(rsw_mt_fadd_cases); i++) {
		c = &rsw_mt_fadd_cases[i];
		/* The reference agrees with the hand-worked value... */
		KUNIT_EXPECT_EQ_MSG(test, rsw_mt_ref_fetch_add(c->old, c->add,
							       c->mask),
				    c->expect, "reference, row %u", i);
		/* ...and so does the driver. */
		KUNIT_EXPECT_EQ_MSG(test, rsw_mt_fadd(c->old, c->add, c->mask),
				    c->expect, "row %u: %#llx + %#llx mask %#llx",
				    i, c->old, c->add, c->mask);
	}
}

static u64 rsw_mt_rnd64(struct rnd_state *rnd)
{
	return (u64)prandom_u32_state(rnd) << 32 | prandom_u32_state(rnd);
}

/* A mask of about 64 >> @k set bits (k 0: dense, k 6: rarely any). */
static u64 rsw_mt_rnd_mask(struct rnd_state *rnd, unsigned int k)
{
	u64 m = rsw_mt_rnd64(rnd);

	while (k--)
		m &= rsw_mt_rnd64(rnd);
	return m;
}

#define RSW_MT_ATOMIC_ROUNDS	400

/* Pseudo-random operands and masks of every density, and Add Mask 0. */
static void rsw_mt_atomic_fetch_add_random(struct kunit *test)
{
	struct rnd_state rnd;
	u64 old, add, mask;
	u32 i, differ = 0;

	prandom_seed_state(&rnd, 7306);
	for (i = 0; i < RSW_MT_ATOMIC_ROUNDS; i++) {
		old = rsw_mt_rnd64(&rnd);
		add = rsw_mt_rnd64(&rnd);
		mask = rsw_mt_rnd_mask(&rnd, i % 7);
		KUNIT_EXPECT_EQ_MSG(test, rsw_mt_fadd(old, add, mask),
				    rsw_mt_ref_fetch_add(old, add, mask),
				    "%#llx + %#llx mask %#llx", old, add, mask);
		KUNIT_EXPECT_EQ(test, rsw_mt_fadd(old, add, 0), old + add);
		/* The masks mattered: the fields are not one 64-bit add. */
		differ += rsw_mt_fadd(old, add, mask) != old + add;
	}
	KUNIT_EXPECT_GT(test, differ, RSW_MT_ATOMIC_ROUNDS / 2);
}

/* Swap writes the Swap Data whatever the masks and Compare Data say. */
static void rsw_mt_atomic_swap(struct kunit *test)
{
	struct rsw_atomic a = {
		.op = RSW_ATOMIC_SWAP, .data = 0x0123456789abcdefULL,
		.data_mask = RSW_ATOMIC_MASK_ALL,
		.cmp = 0, .cmp_mask = RSW_ATOMIC_MASK_ALL,
	};

	KUNIT_EXPECT_EQ(test, rsw_atomic_apply(&a, 0), a.data);
	KUNIT_EXPECT_EQ(test, rsw_atomic_apply(&a, U64_MAX), a.data);
	KUNIT_EXPECT_EQ(test, rsw_atomic_apply(&a, a.data), a.data);
	/* The receiver ignores the Swap Mask and Compare fields of a Swap. */
	a.data_mask = 0;
	a.cmp = 5;
	a.cmp_mask = 0xff;
	KUNIT_EXPECT_EQ(test, rsw_atomic_apply(&a, 7), a.data);
}

static void rsw_mt_atomic_cmp_swap(struct kunit *test)
{
	const u64 all = RSW_ATOMIC_MASK_ALL;

	/* Unmasked (all-ones masks): equal swaps, different keeps. */
	KUNIT_EXPECT_EQ(test, rsw_mt_cswap(42, 42, all, 99, all), 99);
	KUNIT_EXPECT_EQ(test, rsw_mt_cswap(42, 43, all, 99, all), 42);
	KUNIT_EXPECT_EQ(test, rsw_mt_cswap(1ULL << 63, 0, all, 1, all),
			1ULL << 63);
	/* Compare Mask: only the low byte is compared. */
	KUNIT_EXPECT_EQ(test, rsw_mt_cswap(0xaaaa000000000011ULL, 0x11, 0xff,
					   0x5555, all), 0x5555);
	KUNIT_EXPECT_EQ(test, rsw_mt_cswap(0xaaaa000000000012ULL, 0x11, 0xff,
					   0x5555, all),
			0xaaaa000000000012ULL);
	/* Compare Mask 0: always equal. */
	KUNIT_EXPECT_EQ(test, rsw_mt_cswap(3, 4, 0, 9, all), 9);
	/* Swap Mask: only the high half is swapped. */
	KUNIT_EXPECT_EQ(test, rsw_mt_cswap(0x1111111122222222ULL, 0, 0,
					   0x3333333344444444ULL,
					   0xffffffff00000000ULL),
			0x3333333322222222ULL);
	/* Swap Mask 0: a match changes nothing. */
	KUNIT_EXPECT_EQ(test, rsw_mt_cswap(0x77, 0x77, all, 0, 0), 0x77);
	/* A mismatch in the masked bits: nothing swapped at all. */
	KUNIT_EXPECT_EQ(test, rsw_mt_cswap(0x1111111122222222ULL, 0x100,
					   0xf00, 0x3333333344444444ULL,
					   0xffffffff00000000ULL),
			0x1111111122222222ULL);
}

static void rsw_mt_atomic_cmp_swap_random(struct kunit *test)
{
	u64 old, cmp, cmp_mask, swap, swap_mask, ref;
	struct rnd_state rnd;
	u32 i, hits = 0;

	prandom_seed_state(&rnd, 0x7306c5);
	for (i = 0; i < RSW_MT_ATOMIC_ROUNDS; i++) {
		old = rsw_mt_rnd64(&rnd);
		cmp_mask = rsw_mt_rnd_mask(&rnd, i % 5);
		/* Half the time the masked bits match. */
		cmp = i & 1 ? (old & cmp_mask) | (rsw_mt_rnd64(&rnd) &
						   ~cmp_mask) :
			      rsw_mt_rnd64(&rnd);
		swap = rsw_mt_rnd64(&rnd);
		swap_mask = rsw_mt_rnd_mask(&rnd, i % 3);
		ref = rsw_mt_ref_cmp_swap(old, cmp, cmp_mask, swap, swap_mask);
		hits += ref != old;
		KUNIT_EXPECT_EQ_MSG(test, rsw_mt_cswap(old, cmp, cmp_mask, swap,
						       swap_mask), ref,
				    "old %#llx cmp %#llx/%#llx swap %#llx/%#llx",
				    old, cmp, cmp_mask, swap, swap_mask);
	}
	/* Both outcomes were exercised. */
	KUNIT_EXPECT_GT(test, hits, RSW_MT_ATOMIC_ROUNDS / 4);
	KUNIT_EXPECT_LT(test, hits, RSW_MT_ATOMIC_ROUNDS);
}

/* A reserved AOpCode (never let through by the parser) changes nothing. */
static void rsw_mt_atomic_reserved_op(struct kunit *test)
{
	struct rsw_atomic a = { .data = 5, .data_mask = 0, .cmp_mask = 0 };

	for (a.op = RSW_ATOMIC_NUM; a.op <= 0xf; a.op++)
		KUNIT_EXPECT_EQ(test, rsw_atomic_apply(&a, 0x1234), 0x1234);
}

static struct kunit_case rsw_mem_cases[] = {
	KUNIT_CASE_PARAM(rsw_mt_stag_encode_decode, rsw_mt_stag_gen_params),
	KUNIT_CASE(rsw_mt_stag_key_helpers),
	KUNIT_CASE(rsw_mt_stag_indices_spread),
	KUNIT_CASE(rsw_mt_key_mismatch_refused),
	KUNIT_CASE(rsw_mt_unknown_index_refused),
	KUNIT_CASE(rsw_mt_lookup_after_dereg_fails),
	KUNIT_CASE(rsw_mt_ref_after_dereg_refused),
	KUNIT_CASE(rsw_mt_limits_advertised),
	KUNIT_CASE(rsw_mt_alloc_mr_limits),
	KUNIT_CASE(rsw_mt_max_mr_enforced),
	KUNIT_CASE(rsw_mt_dma_mr_local_access),
	KUNIT_CASE(rsw_mt_dma_mr_no_remote_access),
	KUNIT_CASE(rsw_mt_dma_mr_copy),
	KUNIT_CASE(rsw_mt_dma_mr_bad_address),
	KUNIT_CASE(rsw_mt_dma_mr_not_fast_reg),
	KUNIT_CASE_PARAM(rsw_mt_frmr_sizes, rsw_mt_frmr_gen_params),
	KUNIT_CASE(rsw_mt_map_bad_page_size),
	KUNIT_CASE(rsw_mt_map_prefix),
	KUNIT_CASE(rsw_mt_map_while_valid_waits_for_reg),
	KUNIT_CASE(rsw_mt_reg_new_key),
	KUNIT_CASE(rsw_mt_ref_after_rereg_refused),
	KUNIT_CASE_PARAM(rsw_mt_reg_rules, rsw_mt_reg_gen_params),
	KUNIT_CASE(rsw_mt_reg_unmapped_refused),
	KUNIT_CASE_PARAM(rsw_mt_access_range, rsw_mt_range_gen_params),
	KUNIT_CASE_PARAM(rsw_mt_access_rights, rsw_mt_right_gen_params),
	KUNIT_CASE(rsw_mt_access_wrong_pd),
	KUNIT_CASE(rsw_mt_access_invalid_state),
	KUNIT_CASE(rsw_mt_copy_to_needs_write_right),
	KUNIT_CASE(rsw_mt_local_sge_checks),
	KUNIT_CASE_PARAM(rsw_mt_invalidate, rsw_mt_inv_gen_params),
	KUNIT_CASE(rsw_mt_access_after_invalidate),
	KUNIT_CASE_PARAM(rsw_mt_mw_bind_rules, rsw_mt_bind_gen_params),
	KUNIT_CASE(rsw_mt_mw_access_narrowed),
	KUNIT_CASE(rsw_mt_mw_copy_through),
	KUNIT_CASE(rsw_mt_mw_invalidate),
	KUNIT_CASE(rsw_mt_mw_tx_piece_counted),
	KUNIT_CASE(rsw_mt_mw_dealloc_waits_tx),
	KUNIT_CASE(rsw_mt_mw_mr_dereg),
	KUNIT_CASE(rsw_mt_mw_mr_dereg_unbinds),
	KUNIT_CASE(rsw_mt_mw_type2_bound_qp),
	KUNIT_CASE(rsw_mt_mw_limits),
	KUNIT_CASE_PARAM(rsw_mt_term_codes, rsw_mt_term_gen_params),
	KUNIT_CASE(rsw_mt_term_codes_defined),
	KUNIT_CASE_PARAM(rsw_mt_copy_random, rsw_mt_copy_gen_params),
	KUNIT_CASE(rsw_mt_bvecs_match_layout),
	KUNIT_CASE(rsw_mt_softirq_lookup_vs_dereg),
	KUNIT_CASE(rsw_mt_atomic_fetch_add_literal),
	KUNIT_CASE(rsw_mt_atomic_fetch_add_random),
	KUNIT_CASE(rsw_mt_atomic_swap),
	KUNIT_CASE(rsw_mt_atomic_cmp_swap),
	KUNIT_CASE(rsw_mt_atomic_cmp_swap_random),
	KUNIT_CASE(rsw_mt_atomic_reserved_op),
	{}
};

static struct kunit_suite rsw_mem_suite = {
	.name = "rdmap_sw_mem",
	.suite_init = rsw_mt_suite_init,
	.suite_exit = rsw_mt_suite_exit,
	.test_cases = rsw_mem_cases,
};

kunit_test_suite(rsw_mem_suite);

MODULE_DESCRIPTION("KUnit tests for rdmap_sw STags and memory regions");
MODULE_LICENSE("GPL");
