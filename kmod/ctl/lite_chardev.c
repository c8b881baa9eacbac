// SPDX-License-Identifier: GPL-2.0
/*
 * LITE: /dev/lite, the application interface.
 *
 * The misc device's fops carry THIS_MODULE, so the module cannot be unloaded
 * while any file is open: every ioctl runs with the module pinned.
 * Each open file has its handles (lite_file.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/anon_inodes.h>
#include <linux/fs.h>
#include <linux/io_uring.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "mem/lite_grant.h"
#include "lite_ctl.h"
#include "rpc/lite_rpc.h"
#include "sync/lite_sync.h"

/* A snapshot of the devices, taken under the device list lock. */
struct lite_query_ctx {
	struct lite_device_info *devices;	/* room for max_devices */
	u32 max_devices;
	u32 num_devices;			/* all of them, also past max */
};

static u32 lite_mtu_bytes(enum ib_mtu mtu)
{
	int bytes = ib_mtu_enum_to_int(mtu);

	return bytes > 0 ? bytes : 0;
}

static u32 lite_link_layer(struct ib_device *ibdev, u32 port)
{
	switch (rdma_port_get_link_layer(ibdev, port)) {
	case IB_LINK_LAYER_INFINIBAND:
		return LITE_LINK_LAYER_INFINIBAND;
	case IB_LINK_LAYER_ETHERNET:
		return LITE_LINK_LAYER_ETHERNET;
	default:
		return LITE_LINK_LAYER_UNSPECIFIED;
	}
}

static void lite_fill_device_info(struct lite_device *ldev,
				  struct lite_device_info *info)
{
	struct ib_device *ibdev = ldev->ibdev;
	struct ib_port_attr attr;

	memset(info, 0, sizeof(*info));
	strscpy(info->name, dev_name(&ibdev->dev), sizeof(info->name));
	info->node_guid = be64_to_cpu(ibdev->node_guid);
	info->port = ldev->port;
	info->link_layer = lite_link_layer(ibdev, ldev->port);
	if (!ib_query_port(ibdev, ldev->port, &attr)) {
		info->port_state = attr.state;
		if (attr.state == IB_PORT_ACTIVE)
			info->active_mtu_bytes = lite_mtu_bytes(attr.active_mtu);
	}
	info->global_key_errno = ldev->global_key_errno;
	if (!ldev->global_key_errno)
		info->flags |= LITE_DEVICE_GLOBAL_KEY_READY;
}

static int lite_query_one(struct lite_device *ldev, void *arg)
{
	struct lite_query_ctx *ctx = arg;

	if (ctx->num_devices < ctx->max_devices)
		lite_fill_device_info(ldev, &ctx->devices[ctx->num_devices]);
	ctx->num_devices++;
	return 0;
}

/*
 * Fills @ctx with up to @max devices, sized by how many there are: a first
 * pass only counts, and if devices came in between, it takes another.
 * Nothing touches user memory under the device list lock (a faulting page
 * would stall every ib_client add and remove); the caller copies out.
 */
static int lite_query_snapshot(struct lite_query_ctx *ctx, u32 max)
{
	u32 room = 0;

	for (;;) {
		ctx->devices = NULL;
		if (room) {
			ctx->devices = kvcalloc(room, sizeof(*ctx->devices),
						GFP_KERNEL);
			if (!ctx->devices)
				return -ENOMEM;
		}
		ctx->max_devices = room;
		ctx->num_devices = 0;
		lite_visit_devices(lite_query_one, ctx);
		if (ctx->num_devices <= room || room == max)
			return 0;
		kvfree(ctx->devices);
		room = min(max, ctx->num_devices);
	}
}

long lite_ioc_query(struct lite_file *lf, void __user *arg)
{
	struct lite_query __user *uarg = arg;
	struct lite_query q;
	struct lite_query_ctx ctx;
	u32 n;
	int ret;

	if (copy_from_user(&q, uarg, sizeof(q)))
		return -EFAULT;
	if (q.flags || q.reserved)
		return -EINVAL;
	if (q.max_devices && !q.devices)
		return -EINVAL;

	ret = lite_query_snapshot(&ctx, q.max_devices);
	if (ret)
		return ret;
	n = min(ctx.max_devices, ctx.num_devices);
	if (n && copy_to_user(u64_to_user_ptr(q.devices), ctx.devices,
			      array_size(n, sizeof(*ctx.devices))))
		ret = -EFAULT;
	kvfree(ctx.devices);
	if (ret)
		return ret;

	q.abi_version = LITE_ABI_VERSION;
	q.num_devices = ctx.num_devices;
	if (copy_to_user(uarg, &q, sizeof(q)))
		return -EFAULT;
	return 0;
}

/* A service's rings (LITE_IOC_RPC_REGISTER's map_offset). */
static int lite_chardev_mmap(struct file *file, struct vm_area_struct *vma)
{
	return lite_rpc_mmap(file->private_data, vma);
}

/* One-sided operations as io_uring commands (LITE_URING_CMD_OP). */
static int lite_chardev_uring_cmd(struct io_uring_cmd *cmd,
				  unsigned int issue_flags)
{
	return lite_ops_uring_cmd(cmd->file->private_data, cmd, issue_flags);
}

static const struct file_operations lite_fops = {
	.owner = THIS_MODULE,
	.open = lite_file_open,
	.release = lite_file_release,
	.unlocked_ioctl = lite_ioctl,
	.uring_cmd = lite_chardev_uring_cmd,
	.mmap = lite_chardev_mmap,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = no_llseek,
};

struct file *lite_kernel_file_open(void)
{
	struct lite_file *lf = lite_file_new();
	struct file *file;

	if (!lf)
		return ERR_PTR(-ENOMEM);
	file = anon_inode_getfile("[lite]", &lite_fops, lf, O_RDWR);
	if (IS_ERR(file)) {
		kfree(lf);	/* nothing in it yet */
		return file;
	}
	lf->file = file;
	lite_prio_file_init(lf, true);
	return file;
}

static struct miscdevice lite_miscdev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "lite",
	.fops = &lite_fops,
	/*
	 * Not open to all in the moment before udev gives it its group
	 * (packaging/etc/60-lite.rules: group lite, 0660), nor at all on a
	 * host without the rule: a file opened then would stay open.
	 */
	.mode = 0660,
};

int lite_chardev_init(void)
{
	return misc_register(&lite_miscdev);
}

void lite_chardev_exit(void)
{
	misc_deregister(&lite_miscdev);
}
