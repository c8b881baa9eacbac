// SPDX-License-Identifier: GPL-2.0
/*
 * lite_kecho: LITE RPC from kernel code (include/lite_kernel.h), the
 * example. Loaded with serve=NAME it registers an echo service served by a
 * kernel thread (each call's reply is its request, sent from where the NIC
 * put it; messages are released); with call=NAME count=N it opens the
 * service NAME, calls it N times with a counting pattern, checks every
 * reply and logs "lite_kecho: N calls to NAME, every reply checked" (or
 * the first failure). tests/vm/rpc.sh loads it both ways.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/slab.h>

#include "lite_kernel.h"

static char *serve;
module_param(serve, charp, 0444);
MODULE_PARM_DESC(serve, "register this echo service");
static char *call;
module_param(call, charp, 0444);
MODULE_PARM_DESC(call, "call this (echo) service at load");
static unsigned int count = 10;
module_param(count, uint, 0444);
MODULE_PARM_DESC(count, "calls to make with call= (default 10)");

static struct lite_kservice *kecho_svc;
static struct task_struct *kecho_thread;

static int kecho_serve(void *arg)
{
	struct lite_kreq reqs[8];
	int n, i, ret;

	while (!kthread_should_stop()) {
		n = lite_kservice_recv(kecho_svc, reqs, ARRAY_SIZE(reqs), 100);
		if (n < 0) {
			/* Unregistered under us, or a signal: wait to be stopped. */
			msleep_interruptible(100);
			continue;
		}
		for (i = 0; i < n; i++) {
			if (reqs[i].oneway)
				ret = lite_kservice_release(kecho_svc, &reqs[i]);
			else	/* in place: the request's own bytes */
				ret = lite_kservice_reply(kecho_svc, &reqs[i],
							  reqs[i].data,
							  reqs[i].len);
			if (ret && ret != -EHOSTDOWN)
				pr_warn("answer to node %u: %d\n",
					reqs[i].client_node, ret);
		}
	}
	return 0;
}

static int kecho_call(const char *name)
{
	struct lite_kclient *c;
	u8 req[64], reply[64];
	u32 len, i, j;
	int ret;

	ret = lite_kclient_open(name, &c);
	if (ret) {
		pr_err("opening %s: %d\n", name, ret);
		return ret;
	}
	for (i = 0; i < count; i++) {
		for (j = 0; j < sizeof(req); j++)
			req[j] = i + j;
		ret = lite_kclient_call(c, req, sizeof(req), reply,
					sizeof(reply), &len, 5000);
		if (ret || len != sizeof(req) || memcmp(req, reply, len)) {
			pr_err("call %u to %s: %d (reply %u bytes%s)\n", i, name,
			       ret, len, ret ? "" : ", not the request");
			lite_kclient_close(c);
			return ret ?: -EIO;
		}
	}
	lite_kclient_close(c);
	pr_info("%u calls to %s, every reply checked\n", count, name);
	return 0;
}

static int __init kecho_init(void)
{
	struct lite_kservice_opts opts = {
		.mode = 0711, .max_request = 4096, .max_reply = 4096,
	};
	int ret;

	if (call) {
		ret = kecho_call(call);
		if (ret)
			return ret;
	}
	if (!serve)
		return 0;
	ret = lite_kservice_register(serve, &opts, &kecho_svc);
	if (ret) {
		pr_err("registering %s: %d\n", serve, ret);
		return ret;
	}
	kecho_thread = kthread_run(kecho_serve, NULL, "lite_kecho");
	if (IS_ERR(kecho_thread)) {
		lite_kservice_unregister(kecho_svc);
		return PTR_ERR(kecho_thread);
	}
	pr_info("serving %s\n", serve);
	return 0;
}

static void __exit kecho_exit(void)
{
	if (!kecho_svc)
		return;
	kthread_stop(kecho_thread);
	lite_kservice_unregister(kecho_svc);
}

module_init(kecho_init);
module_exit(kecho_exit);
MODULE_DESCRIPTION("LITE RPC from kernel code: an echo service and client");
MODULE_LICENSE("GPL");
