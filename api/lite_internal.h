/*
 * libLITE's inside: what its C files (lite.c, lite_rpc.c) share and
 * applications never see.
 */
#ifndef LITE_API_LITE_INTERNAL_H_
#define LITE_API_LITE_INTERNAL_H_

#include <stddef.h>

#include "api/lite.h"
#include "api/lite_testing.h"

struct lite_ctx {
  int fd;
  lite_fake_ioctl_fn fake; /* tests only; NULL for a real device */
  void *fake_arg;
};

/* lite_message()'s text for this thread: printf-like, cleared, or a kernel
 * message field (NUL-terminated by lite.ko; cut at the buffer if not). */
void lite_priv_message(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
void lite_priv_clear_message(void);
void lite_priv_kernel_message(const char *msg, size_t size);

/* One ioctl (or the fake's answer): 0 or a negative errno. */
int lite_priv_ioctl(struct lite_ctx *ctx, unsigned long request, void *data);
/* -EINVAL with a message for a NULL context, else 0. */
int lite_priv_check_ctx(const struct lite_ctx *ctx);
/* Checks `name` and copies it into a zeroed LITE_NAME_BUF field. */
int lite_priv_put_name(char *dst, const char *name);

/* A rejected argument: the errno, with a message that says which. */
#define REJECT(err, ...) (lite_priv_message(__VA_ARGS__), -(err))

#endif /* LITE_API_LITE_INTERNAL_H_ */
