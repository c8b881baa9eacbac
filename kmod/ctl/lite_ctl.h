/* SPDX-License-Identifier: GPL-2.0 */
/*
 * LITE: the entry points (ctl): /dev/lite, its one ioctl table, the
 * netlink family's one command table, and the kernel memory API.
 */
#ifndef LITE_CTL_H
#define LITE_CTL_H

#include "upcall/lite_upcall.h"

struct file;
struct inode;

int lite_chardev_init(void);
void lite_chardev_exit(void);

/* ctl/lite_netlink.c: the generic netlink family's commands. */
int lite_netlink_init(void);
void lite_netlink_exit(void);

/* A file's state, not yet tied to its struct file (lf->file). */
struct lite_file *lite_file_new(void);
int lite_file_open(struct inode *inode, struct file *file);
int lite_file_release(struct inode *inode, struct file *file);
/* The ioctls ctl/lite_ioctl.c's table dispatches to ctl itself. */
long lite_ioctl(struct file *file, unsigned int cmd, unsigned long arg);
long lite_ioc_query(struct lite_file *lf, void __user *uarg);
long lite_ioc_node(struct lite_file *lf, void __user *uarg);
long lite_ioc_unmap(struct lite_file *lf, void __user *uarg);
long lite_ioc_node_lookup(struct lite_file *lf, void __user *uarg);
/*
 * lite_chardev.c: an open /dev/lite for kernel code (lite_kapi_mem.c): an
 * anonymous file with the device's file operations, so that its handles
 * live and end exactly like a process's. It holds lite.ko until fput().
 */
struct file *lite_kernel_file_open(void);

#endif /* LITE_CTL_H */
