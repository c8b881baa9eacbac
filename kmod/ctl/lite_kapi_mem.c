// SPDX-License-Identifier: GPL-2.0
/*
 * LITE's one-sided operations for kernel code (include/lite_kernel.h): a
 * kernel user's context is an open /dev/lite of its own (an anonymous file
 * with the device's file operations), so its handles are made, checked,
 * revoked and given back exactly as a process's are, and end with it.
 * Every call is the ioctl's core with kernel buffers instead of user ones.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/file.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "include/lite_kernel.h"
#include "lite_ctl.h"
#include "ops/lite_ops.h"

static_assert(LITE_KACCESS_READ == LITE_ACCESS_READ);
static_assert(LITE_KACCESS_WRITE == LITE_ACCESS_WRITE);
static_assert(LITE_KMESSAGE_BUF == LITE_MESSAGE_BUF);

struct lite_kctx {
	struct file *file;
};

static struct lite_file *lite_kctx_file(struct lite_kctx *ctx)
{
	return ctx->file->private_data;
}

/* The manager's message to the caller's buffer (LITE_KMESSAGE_BUF), if any. */
static void lite_kmessage(char *to, const char *from)
{
	if (to)
		strscpy(to, from, LITE_KMESSAGE_BUF);
}

/* @name into a uapi name buffer: -EINVAL if it does not fit. */
static int lite_kname(char *dst, const char *name)
{
	if (!name || strscpy_pad(dst, name, LITE_NAME_BUF) < 0)
		return -EINVAL;
	return 0;
}

/**
 * lite_kctx_open() - open a context for LMR handles, like opening /dev/lite
 * @out: the context
 *
 * Return: 0, or -ENOMEM.
 */
int lite_kctx_open(struct lite_kctx **out)
{
	struct lite_kctx *ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	struct file *file;

	if (!ctx)
		return -ENOMEM;
	file = lite_kernel_file_open();
	if (IS_ERR(file)) {
		kfree(ctx);
		return PTR_ERR(file);
	}
	ctx->file = file;
	*out = ctx;
	return 0;
}
EXPORT_SYMBOL_GPL(lite_kctx_open);

/**
 * lite_kctx_close() - unmap every handle of @ctx and free it
 * @ctx: from lite_kctx_open()
 *
 * As a process's close of /dev/lite: each grant is given back once no
 * operation of it is in flight. No call may use @ctx from here on.
 */
void lite_kctx_close(struct lite_kctx *ctx)
{
	if (!ctx)
		return;
	/*
	 * Its release runs when this task returns to user space, or for a
	 * kernel thread from a work item: soon, and it holds lite.ko.
	 */
	fput(ctx->file);
	kfree(ctx);
}
EXPORT_SYMBOL_GPL(lite_kctx_close);

/**
 * lite_kalloc() - create an LMR (LITE_IOC_ALLOC)
 * @name: its name
 * @size: bytes, 1..LITE_LMR_SIZE_MAX
 * @mode: Unix mode bits, a subset of 0666
 * @home_node_id: the node to hold it, 0 for this one
 * @lmr_id: out, may be NULL
 * @message: out, the manager's reason on refusal; NULL or LITE_KMESSAGE_BUF
 *
 * Return: 0 or a negative errno as for LITE_IOC_ALLOC.
 */
int lite_kalloc(const char *name, u64 size, u32 mode, u32 home_node_id,
		u64 *lmr_id, char *message)
{
	struct lite_alloc a = {};
	int ret;

	lite_kmessage(message, "");
	ret = lite_kname(a.name, name);
	if (ret)
		return ret;
	a.size_bytes = size;
	a.mode = mode;
	a.home_node_id = home_node_id;
	ret = lite_lmr_alloc_run(&a);
	lite_kmessage(message, a.message);
	if (!ret && lmr_id)
		*lmr_id = a.lmr_id;
	return ret;
}
EXPORT_SYMBOL_GPL(lite_kalloc);

/**
 * lite_kfree() - delete an LMR (LITE_IOC_FREE): every map of it goes ESTALE
 * @name: its name
 * @message: as for lite_kalloc()
 *
 * Return: 0 or a negative errno as for LITE_IOC_FREE.
 */
int lite_kfree(const char *name, char *message)
{
	struct lite_free f = {};
	int ret;

	lite_kmessage(message, "");
	ret = lite_kname(f.name, name);
	if (ret)
		return ret;
	ret = lite_lmr_free_run(&f);
	lite_kmessage(message, f.message);
	return ret;
}
EXPORT_SYMBOL_GPL(lite_kfree);

/**
 * lite_kmap() - map an LMR by name into @ctx (LITE_IOC_MAP)
 * @ctx: the context its handle belongs to
 * @name: the LMR's name
 * @access: LITE_KACCESS_READ and/or LITE_KACCESS_WRITE
 * @info: out: its handle, id, size and home node
 * @message: as for lite_kalloc()
 *
 * The caller's credentials are the current task's, checked by the manager
 * against the LMR's mode bits as for a process.
 *
 * Return: 0 or a negative errno as for LITE_IOC_MAP.
 */
int lite_kmap(struct lite_kctx *ctx, const char *name, u32 access,
	      struct lite_kmap_info *info, char *message)
{
	struct lite_map m = {};
	int ret;

	lite_kmessage(message, "");
	ret = lite_kname(m.name, name);
	if (ret)
		return ret;
	m.access = access;
	ret = lite_lmr_map_run(lite_kctx_file(ctx), &m);
	lite_kmessage(message, m.message);
	if (ret)
		return ret;
	info->handle = m.handle;
	info->lmr_id = m.lmr_id;
	info->size = m.size_bytes;
	info->home_node_id = m.home_node_id;
	return 0;
}
EXPORT_SYMBOL_GPL(lite_kmap);

/**
 * lite_kunmap() - give a handle of @ctx back
 * @ctx: its context
 * @handle: from lite_kmap()
 *
 * Return: 0, or -EBADF if @handle is not one of @ctx's.
 */
int lite_kunmap(struct lite_kctx *ctx, u64 handle)
{
	return lite_file_unmap(lite_kctx_file(ctx), handle);
}
EXPORT_SYMBOL_GPL(lite_kunmap);

static int lite_krw(struct lite_kctx *ctx, u64 handle, u64 offset, void *buf,
		    u64 length, bool write)
{
	int ret = lite_op_rw_kernel(lite_kctx_file(ctx), handle, offset, buf,
				    length, write);

	lite_ops_account(write ? LITE_ST_WRITE : LITE_ST_READ, ret);
	return ret;
}

/**
 * lite_kread() - RDMA READ @length bytes at @offset of an LMR into @buf
 * @ctx: the handle's context
 * @handle: from lite_kmap() with read access
 * @offset: in the LMR
 * @buf: kernel memory (any: vmalloc'd and stack memory too)
 * @length: 1..LITE_OP_LENGTH_MAX
 *
 * Return: 0 or a negative errno as for LITE_IOC_READ.
 */
int lite_kread(struct lite_kctx *ctx, u64 handle, u64 offset, void *buf,
	       u64 length)
{
	return lite_krw(ctx, handle, offset, buf, length, false);
}
EXPORT_SYMBOL_GPL(lite_kread);

/**
 * lite_kwrite() - RDMA WRITE @length bytes of @buf at @offset of an LMR
 * @ctx: the handle's context
 * @handle: from lite_kmap() with write access
 * @offset: in the LMR
 * @buf: kernel memory
 * @length: 1..LITE_OP_LENGTH_MAX
 *
 * Return: 0 or a negative errno as for LITE_IOC_WRITE.
 */
int lite_kwrite(struct lite_kctx *ctx, u64 handle, u64 offset,
		const void *buf, u64 length)
{
	/* Only read from: the WRITE side of the bounce copy. */
	return lite_krw(ctx, handle, offset, (void *)buf, length, true);
}
EXPORT_SYMBOL_GPL(lite_kwrite);

/**
 * lite_kmemset() - set @length bytes at @offset of an LMR to @value
 * @ctx: the handle's context
 * @handle: from lite_kmap() with write access
 * @offset: in the LMR
 * @value: the byte
 * @length: 1..LITE_OP_LENGTH_MAX
 *
 * Return: 0 or a negative errno as for LITE_IOC_MEMSET.
 */
int lite_kmemset(struct lite_kctx *ctx, u64 handle, u64 offset, u8 value,
		 u64 length)
{
	int ret = lite_op_memset_run(lite_kctx_file(ctx), handle, offset,
				     length, value, LITE_PRIO_DEFAULT);

	lite_ops_account(LITE_ST_MEMSET, ret);
	return ret;
}
EXPORT_SYMBOL_GPL(lite_kmemset);

/**
 * lite_kfaa() - atomically add @add to the 8-byte word at @offset
 * @ctx: the handle's context
 * @handle: from lite_kmap() with read and write access
 * @offset: a multiple of 8
 * @add: the addend
 * @old: out: the word before
 *
 * Return: 0 or a negative errno as for LITE_IOC_FAA.
 */
int lite_kfaa(struct lite_kctx *ctx, u64 handle, u64 offset, u64 add,
	      u64 *old)
{
	int ret = lite_op_atomic_run(lite_kctx_file(ctx), handle, offset, add,
				     0, false, LITE_PRIO_DEFAULT, old);

	lite_ops_account(LITE_ST_FAA, ret);
	return ret;
}
EXPORT_SYMBOL_GPL(lite_kfaa);

/**
 * lite_kcas() - atomically set the word at @offset to @swap if it is @expect
 * @ctx: the handle's context
 * @handle: from lite_kmap() with read and write access
 * @offset: a multiple of 8
 * @expect: the value it must have
 * @swap: its new value
 * @old: out: the word before (== @expect: swapped)
 *
 * Return: 0 or a negative errno as for LITE_IOC_CAS.
 */
int lite_kcas(struct lite_kctx *ctx, u64 handle, u64 offset, u64 expect,
	      u64 swap, u64 *old)
{
	int ret = lite_op_atomic_run(lite_kctx_file(ctx), handle, offset,
				     expect, swap, true, LITE_PRIO_DEFAULT,
				     old);

	lite_ops_account(LITE_ST_CAS, ret);
	return ret;
}
EXPORT_SYMBOL_GPL(lite_kcas);
