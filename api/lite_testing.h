/*
 * libLITE's test seam: a context whose ioctls go to a function instead of a
 * file, so unit tests check what libLITE puts in each struct and how it maps
 * lite.ko's answers, on any host and without lite.ko. Not for applications.
 */
#ifndef LITE_API_LITE_TESTING_H_
#define LITE_API_LITE_TESTING_H_

#include "api/lite.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Stands in for ioctl(2): returns 0 or a negative errno. */
typedef int (*lite_fake_ioctl_fn)(void *arg, unsigned long request, void *data);

/* Like lite_open() (including its ABI check through `fn`), but every ioctl
 * of the context calls fn(arg, request, data). lite_fd() is -1. */
int lite_open_fake(lite_fake_ioctl_fn fn, void *arg, struct lite_ctx **ctx);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* LITE_API_LITE_TESTING_H_ */
