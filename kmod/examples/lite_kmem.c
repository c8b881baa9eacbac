// SPDX-License-Identifier: GPL-2.0
/*
 * lite_kmem: LMRs and one-sided operations from kernel code
 * (include/lite_kernel.h), the example. Loaded with lmr=NAME it maps the
 * LMR NAME (at least size bytes; with create=1 it creates it on this node
 * first and deletes it at the end) and checks, from vmalloc'd buffers:
 * a WRITE of size bytes read back the same (several bounce batches for
 * 64 KiB), a MEMSET, FAA and CAS on a word; it leaves the text
 * "lite_kmem was here" at offset 8192 for others to read, and logs
 * "lite_kmem: NAME: ... checked" (or the first failure, and fails to
 * load). tests/vm/rpc.sh loads it against an LMR on another node.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/vmalloc.h>

#include "lite_kernel.h"

static char *lmr;
module_param(lmr, charp, 0444);
MODULE_PARM_DESC(lmr, "the LMR to map and check");
static unsigned int size = 65536;
module_param(size, uint, 0444);
MODULE_PARM_DESC(size, "bytes to write and read back, >= 9000 (default 65536)");
static bool create;
module_param(create, bool, 0444);
MODULE_PARM_DESC(create, "create the LMR on this node first, delete it after");

static const char kmem_text[] = "lite_kmem was here";
#define KMEM_TEXT_AT	8192

/* Byte @i of the pattern written. */
static u8 kmem_byte(u64 i)
{
	return (u8)(i * 7 + 3);
}

/* MEMSET, FAA and CAS on the word at 0 and the bytes after it. */
static int kmem_word(struct lite_kctx *ctx, u64 h, u8 *back)
{
	u64 old[4], word = 0;
	int ret, i;

	ret = lite_kmemset(ctx, h, 0, 0, 8);
	ret = ret ?: lite_kmemset(ctx, h, 4096, 0xab, 1000);
	ret = ret ?: lite_kfaa(ctx, h, 0, 5, &old[0]);
	ret = ret ?: lite_kfaa(ctx, h, 0, 5, &old[1]);
	ret = ret ?: lite_kcas(ctx, h, 0, 10, 42, &old[2]);	/* swaps */
	ret = ret ?: lite_kcas(ctx, h, 0, 10, 7, &old[3]);	/* does not */
	ret = ret ?: lite_kread(ctx, h, 0, &word, 8);
	ret = ret ?: lite_kread(ctx, h, 4096, back, 1001);
	if (ret)
		return ret;
	if (old[0] != 0 || old[1] != 5 || old[2] != 10 || old[3] != 42 ||
	    word != 42) {
		pr_err("atomics: FAA saw %llu, %llu; CAS %llu, %llu; word %llu (want 0, 5; 10, 42; 42)\n",
		       old[0], old[1], old[2], old[3], word);
		return -EIO;
	}
	for (i = 0; i < 1000; i++)
		if (back[i] != 0xab)
			break;
	if (i < 1000 || back[1000] != kmem_byte(4096 + 1000)) {
		pr_err("memset: byte %d of 1000 is %#x\n", i,
		       i < 1000 ? back[i] : back[1000]);
		return -EIO;
	}
	return 0;
}

static int kmem_check(struct lite_kctx *ctx, u64 h)
{
	u8 *out, *back;
	u64 i;
	int ret;

	out = vmalloc(size);
	back = vzalloc(size);
	if (!out || !back) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < size; i++)
		out[i] = kmem_byte(i);
	ret = lite_kwrite(ctx, h, 0, out, size);
	ret = ret ?: lite_kread(ctx, h, 0, back, size);
	if (ret)
		goto out;
	if (memcmp(out, back, size)) {
		pr_err("read back %u bytes: not what was written\n", size);
		ret = -EIO;
		goto out;
	}
	ret = kmem_word(ctx, h, back);
	ret = ret ?: lite_kwrite(ctx, h, KMEM_TEXT_AT, kmem_text,
				 sizeof(kmem_text) - 1);
out:
	vfree(out);
	vfree(back);
	return ret;
}

static int __init kmem_init(void)
{
	char *message = kzalloc(LITE_KMESSAGE_BUF, GFP_KERNEL);
	struct lite_kmap_info info;
	struct lite_kctx *ctx;
	int ret;

	if (!lmr || size < KMEM_TEXT_AT + sizeof(kmem_text) || !message) {
		kfree(message);
		return -EINVAL;
	}
	ret = lite_kctx_open(&ctx);
	if (ret)
		goto out;
	if (create) {
		ret = lite_kalloc(lmr, size, 0600, 0, NULL, message);
		if (ret) {
			pr_err("creating %s: %d %s\n", lmr, ret, message);
			goto out_ctx;
		}
	}
	ret = lite_kmap(ctx, lmr, LITE_KACCESS_READ | LITE_KACCESS_WRITE,
			&info, message);
	if (ret) {
		pr_err("mapping %s: %d %s\n", lmr, ret, message);
		goto out_free;
	}
	if (info.size < size) {
		pr_err("%s has %llu bytes, fewer than size=%u\n", lmr, info.size,
		       size);
		ret = -EINVAL;
	} else {
		ret = kmem_check(ctx, info.handle);
	}
	if (ret)
		pr_err("%s (on node %u): %d\n", lmr, info.home_node_id, ret);
	else
		pr_info("%s (on node %u): %u bytes written and read back, memset, FAA and CAS checked\n",
			lmr, info.home_node_id, size);
	lite_kunmap(ctx, info.handle);
out_free:
	if (create && lite_kfree(lmr, message))
		pr_err("deleting %s: %s\n", lmr, message);
out_ctx:
	lite_kctx_close(ctx);
out:
	kfree(message);
	return ret;
}

static void __exit kmem_exit(void)
{
}

module_init(kmem_init);
module_exit(kmem_exit);
MODULE_DESCRIPTION("LITE LMRs and one-sided operations from kernel code");
MODULE_LICENSE("GPL");
