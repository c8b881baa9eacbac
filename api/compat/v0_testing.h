/*
 * The compat layer's test seam: the process context the layer uses, set by
 * a test (a libLITE context over api/fake_device.h) instead of opening
 * /dev/lite. Not for applications.
 */
#ifndef LITE_API_COMPAT_V0_TESTING_H_
#define LITE_API_COMPAT_V0_TESTING_H_

#include "api/lite.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Uses ctx (still the caller's to close) from now on; NULL: back to none,
 * and every table of the layer (handlers, ports, descriptors, locks) is
 * emptied. */
void lite_v0_use_context(struct lite_ctx *ctx);

#ifdef __cplusplus
}
#endif

#endif /* LITE_API_COMPAT_V0_TESTING_H_ */
