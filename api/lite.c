/*
 * libLITE: the C API over /dev/lite. See lite.h.
 *
 * Each call fills one uapi struct on the stack and makes one ioctl. The
 * context is immutable after lite_open(), so calls need no lock.
 */
#include "api/lite.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "api/lite_internal.h"
#include "api/lite_testing.h"
#include "common/names/name_rules.h"

/* Why this thread's last failed call failed (see lite_message()). */
static _Thread_local char last_message[LITE_MESSAGE_BUF];

void lite_priv_message(const char *fmt, ...) {
  va_list ap;

  va_start(ap, fmt);
  vsnprintf(last_message, sizeof(last_message), fmt, ap);
  va_end(ap);
}

void lite_priv_clear_message(void) { last_message[0] = '\0'; }

/* Copies a kernel message field, which lite.ko NUL-terminates; a message
 * that is not terminated is cut at the buffer's end rather than overrun. */
void lite_priv_kernel_message(const char *msg, size_t size) {
  size_t n = strnlen(msg, size);

  if (n >= sizeof(last_message)) n = sizeof(last_message) - 1;
  memcpy(last_message, msg, n);
  last_message[n] = '\0';
}

const char *lite_message(void) { return last_message; }

/* One ioctl: 0 or a negative errno. */
int lite_priv_ioctl(struct lite_ctx *ctx, unsigned long request, void *data) {
  if (__builtin_expect(ctx->fake != NULL, 0))
    return ctx->fake(ctx->fake_arg, request, data);
  if (ioctl(ctx->fd, request, data) == 0) return 0;
  return errno > 0 ? -errno : -EIO;
}

int lite_priv_check_ctx(const struct lite_ctx *ctx) {
  if (ctx == NULL) return REJECT(EINVAL, "the LITE context is NULL");
  return 0;
}

int lite_check_name(const char *name) {
  if (name == NULL) return REJECT(EINVAL, "the LMR name is NULL");
  /* The rule every component applies (common/names), its message too. */
  return lite_name_check(LITE_NAME_KIND_LMR, "the LMR name", name, strlen(name),
                         last_message, sizeof(last_message));
}

/* Checks the name and copies it into a LITE_NAME_BUF field. */
int lite_priv_put_name(char *dst, const char *name) {
  int err = lite_check_name(name);

  if (err) return err;
  /* The field is zeroed and the name is at most LITE_NAME_MAX long. */
  memcpy(dst, name, strlen(name));
  return 0;
}

static int finish_open(struct lite_ctx *ctx) {
  struct lite_query q;
  int err;

  memset(&q, 0, sizeof(q));
  err = lite_priv_ioctl(ctx, LITE_IOC_QUERY, &q);
  if (err == -ENOTTY || err == -EINVAL)
    return REJECT(ENOTTY,
                  "the file does not answer LITE_IOC_QUERY: "
                  "not a LITE device");
  if (err) return REJECT(-err, "LITE_IOC_QUERY failed");
  if (q.abi_version != LITE_ABI_VERSION)
    return REJECT(EPROTO,
                  "lite.ko speaks LITE ABI version %u; this libLITE "
                  "was built for version %u",
                  q.abi_version, LITE_ABI_VERSION);
  return 0;
}

int lite_open(const char *path, struct lite_ctx **out) {
  struct lite_ctx *ctx;
  int err;

  if (out == NULL)
    return REJECT(EINVAL, "lite_open needs a place for the context");
  if (path == NULL) path = LITE_DEVICE_PATH;
  ctx = calloc(1, sizeof(*ctx));
  if (ctx == NULL) return REJECT(ENOMEM, "no memory for a LITE context");
  ctx->fd = open(path, O_RDWR | O_CLOEXEC);
  if (ctx->fd < 0) {
    err = errno;
    free(ctx);
    if (err == ENOENT)
      return REJECT(ENOENT, "%s does not exist: is lite.ko loaded?", path);
    return REJECT(err, "cannot open %s", path);
  }
  err = finish_open(ctx);
  if (err) {
    /* Keep finish_open's message, which says more. */
    char why[LITE_MESSAGE_BUF];

    snprintf(why, sizeof(why), "%s", last_message);
    lite_priv_message("%s: %s", path, why);
    close(ctx->fd);
    free(ctx);
    return err;
  }
  lite_priv_clear_message();
  *out = ctx;
  return 0;
}

int lite_open_fake(lite_fake_ioctl_fn fn, void *arg, struct lite_ctx **out) {
  struct lite_ctx *ctx;
  int err;

  if (out == NULL || fn == NULL)
    return REJECT(EINVAL,
                  "lite_open_fake needs a function and an out "
                  "pointer");
  ctx = calloc(1, sizeof(*ctx));
  if (ctx == NULL) return REJECT(ENOMEM, "no memory for a LITE context");
  ctx->fd = -1;
  ctx->fake = fn;
  ctx->fake_arg = arg;
  err = finish_open(ctx);
  if (err) {
    free(ctx);
    return err;
  }
  lite_priv_clear_message();
  *out = ctx;
  return 0;
}

void lite_close(struct lite_ctx *ctx) {
  if (ctx == NULL) return;
  if (ctx->fd >= 0) close(ctx->fd);
  free(ctx);
}

int lite_fd(const struct lite_ctx *ctx) { return ctx ? ctx->fd : -1; }

int lite_node_id(struct lite_ctx *ctx, uint32_t *node_id,
                 uint64_t *incarnation) {
  struct lite_node_info info;
  int err = lite_priv_check_ctx(ctx);

  if (err) return err;
  memset(&info, 0, sizeof(info));
  err = lite_priv_ioctl(ctx, LITE_IOC_NODE, &info);
  if (err) return lite_priv_clear_message(), err;
  if (node_id) *node_id = info.node_id;
  if (incarnation) *incarnation = info.incarnation;
  return 0;
}

int lite_members(struct lite_ctx *ctx, struct lite_member *members,
                 uint32_t max_members, uint32_t *num_members) {
  struct lite_node_info info;
  int err = lite_priv_check_ctx(ctx);

  if (err) return err;
  if (num_members == NULL)
    return REJECT(EINVAL, "lite_members needs num_members");
  if (max_members > 0 && members == NULL)
    return REJECT(EINVAL, "members is NULL but max_members is %u", max_members);
  if (max_members > LITE_MEMBERS_MAX)
    return REJECT(EINVAL,
                  "max_members %u is more than "
                  "LITE_MEMBERS_MAX (%u)",
                  max_members, (unsigned)LITE_MEMBERS_MAX);
  memset(&info, 0, sizeof(info));
  info.max_members = max_members;
  info.members = (uintptr_t)members;
  err = lite_priv_ioctl(ctx, LITE_IOC_NODE, &info);
  if (err) return lite_priv_clear_message(), err;
  *num_members = info.num_members;
  return 0;
}

/* A failed LITE_IOC_NODE_LOOKUP, in words (the struct carries no message). */
static int node_lookup_error(int err, const char *what) {
  switch (-err) {
    case ENOENT:
      return REJECT(ENOENT, "neither this node nor any peer is %s", what);
    case ENOTCONN:
      return REJECT(ENOTCONN,
                    "this node's identity is not set (no "
                    "node agent has set it up)");
    case ENOTTY:
      return REJECT(ENOTTY,
                    "lite.ko does not know "
                    "LITE_IOC_NODE_LOOKUP (it predates node "
                    "names)");
    default:
      return lite_priv_clear_message(), err;
  }
}

int lite_node_lookup(struct lite_ctx *ctx, const char *name,
                     uint32_t *node_id) {
  struct lite_node_lookup req;
  char what[LITE_NODE_NAME_BUF + 16];
  int err = lite_priv_check_ctx(ctx);

  if (err) return err;
  if (node_id == NULL)
    return REJECT(EINVAL,
                  "lite_node_lookup needs a place for the "
                  "node id");
  if (name == NULL) return REJECT(EINVAL, "the node name is NULL");
  err = lite_name_check(LITE_NAME_KIND_NODE, "the node name", name,
                        strlen(name), last_message, sizeof(last_message));
  if (err) return err;
  memset(&req, 0, sizeof(req));
  /* Checked: at most LITE_NODE_NAME_MAX, so the field stays terminated. */
  memcpy(req.name, name, strlen(name));
  err = lite_priv_ioctl(ctx, LITE_IOC_NODE_LOOKUP, &req);
  if (err) {
    snprintf(what, sizeof(what), "named \"%s\"", name);
    return node_lookup_error(err, what);
  }
  lite_priv_clear_message();
  *node_id = req.node_id;
  return 0;
}

int lite_node_name(struct lite_ctx *ctx, uint32_t node_id, char *buf,
                   size_t len) {
  struct lite_node_lookup req;
  char what[32];
  size_t n;
  int err = lite_priv_check_ctx(ctx);

  if (err) return err;
  if (buf == NULL || len == 0)
    return REJECT(EINVAL,
                  "lite_node_name needs a buffer of at least "
                  "1 byte (LITE_NODE_NAME_BUF always "
                  "suffices)");
  buf[0] = '\0';
  memset(&req, 0, sizeof(req));
  req.node_id = node_id;
  err = lite_priv_ioctl(ctx, LITE_IOC_NODE_LOOKUP, &req);
  if (err) {
    snprintf(what, sizeof(what), "node %u", node_id);
    return node_lookup_error(err, what);
  }
  n = strnlen(req.name, sizeof(req.name));
  if (n == sizeof(req.name))
    return REJECT(EPROTO,
                  "lite.ko returned a node name without its "
                  "NUL");
  if (n >= len)
    return REJECT(ERANGE,
                  "node %u's name needs %zu bytes; the "
                  "buffer has %zu",
                  node_id, n + 1, len);
  memcpy(buf, req.name, n + 1);
  lite_priv_clear_message();
  return 0;
}

int lite_alloc(struct lite_ctx *ctx, const char *name, uint64_t size_bytes,
               uint32_t mode, uint32_t home_node_id, uint64_t *lmr_id) {
  struct lite_alloc req;
  int err = lite_priv_check_ctx(ctx);

  if (err) return err;
  memset(&req, 0, sizeof(req));
  err = lite_priv_put_name(req.name, name);
  if (err) return err;
  if (size_bytes == 0) return REJECT(EINVAL, "an LMR's size cannot be 0");
  if (size_bytes > LITE_LMR_SIZE_MAX)
    return REJECT(EINVAL, "size %llu is more than LITE_LMR_SIZE_MAX (%llu)",
                  (unsigned long long)size_bytes,
                  (unsigned long long)LITE_LMR_SIZE_MAX);
  if (mode & ~0666u)
    return REJECT(EINVAL, "mode %#o is not a subset of 0666", mode);
  req.size_bytes = size_bytes;
  req.mode = mode;
  req.home_node_id = home_node_id;
  err = lite_priv_ioctl(ctx, LITE_IOC_ALLOC, &req);
  lite_priv_kernel_message(req.message, sizeof(req.message));
  if (err) return err;
  if (lmr_id) *lmr_id = req.lmr_id;
  return 0;
}

int lite_map(struct lite_ctx *ctx, const char *name, uint32_t access,
             lite_handle_t *handle, struct lite_lmr_info *info) {
  struct lite_map req;
  int err = lite_priv_check_ctx(ctx);

  if (err) return err;
  if (handle == NULL)
    return REJECT(EINVAL, "lite_map needs a place for the handle");
  memset(&req, 0, sizeof(req));
  err = lite_priv_put_name(req.name, name);
  if (err) return err;
  if (access == 0 || (access & ~(LITE_ACCESS_READ | LITE_ACCESS_WRITE)))
    return REJECT(EINVAL,
                  "access %#x: give LITE_ACCESS_READ and/or "
                  "LITE_ACCESS_WRITE, nothing else",
                  access);
  req.access = access;
  err = lite_priv_ioctl(ctx, LITE_IOC_MAP, &req);
  lite_priv_kernel_message(req.message, sizeof(req.message));
  if (err) return err;
  *handle = req.handle;
  if (info) {
    info->lmr_id = req.lmr_id;
    info->size_bytes = req.size_bytes;
    info->home_node_id = req.home_node_id;
    info->access = access;
  }
  return 0;
}

int lite_unmap(struct lite_ctx *ctx, lite_handle_t handle) {
  struct lite_unmap req;
  int err = lite_priv_check_ctx(ctx);

  if (err) return err;
  memset(&req, 0, sizeof(req));
  req.handle = handle;
  err = lite_priv_ioctl(ctx, LITE_IOC_UNMAP, &req);
  if (err) lite_priv_clear_message();
  return err;
}

int lite_free(struct lite_ctx *ctx, const char *name) {
  struct lite_free req;
  int err = lite_priv_check_ctx(ctx);

  if (err) return err;
  memset(&req, 0, sizeof(req));
  err = lite_priv_put_name(req.name, name);
  if (err) return err;
  err = lite_priv_ioctl(ctx, LITE_IOC_FREE, &req);
  lite_priv_kernel_message(req.message, sizeof(req.message));
  return err;
}

/* The operations: no client-side checks beyond the context (lite.ko checks
 * handle, access and bounds), one ioctl each. */
static int op(struct lite_ctx *ctx, unsigned long request, void *data) {
  int err;

  if (__builtin_expect(ctx == NULL, 0)) return lite_priv_check_ctx(ctx);
  err = lite_priv_ioctl(ctx, request, data);
  if (__builtin_expect(err != 0, 0)) lite_priv_clear_message();
  return err;
}

int lite_set_priority(struct lite_ctx *ctx, uint32_t priority) {
  struct lite_priority_args a = {.priority = priority};
  int err;

  if (priority != LITE_PRIO_HIGH && priority != LITE_PRIO_LOW)
    return REJECT(EINVAL,
                  "priority %u is neither LITE_PRIO_HIGH (%d) nor "
                  "LITE_PRIO_LOW (%d)",
                  priority, LITE_PRIO_HIGH, LITE_PRIO_LOW);
  err = op(ctx, LITE_IOC_PRIORITY, &a);
  if (err == -EPERM)
    return REJECT(EPERM,
                  "high priority needs CAP_SYS_NICE or the group "
                  "lite.ko's qos_high_gid names");
  return err;
}

int lite_get_priority(struct lite_ctx *ctx, uint32_t *priority,
                      int *high_allowed) {
  struct lite_priority_args a = {0};
  int err = op(ctx, LITE_IOC_PRIORITY, &a);

  if (err) return err;
  if (priority) *priority = a.priority;
  if (high_allowed) *high_allowed = a.high_allowed != 0;
  return 0;
}

int lite_read_prio(struct lite_ctx *ctx, lite_handle_t handle, uint64_t offset,
                   void *buf, uint64_t length, uint32_t priority) {
  struct lite_rw req = {
      .handle = handle,
      .offset = offset,
      .buf = (uintptr_t)buf,
      .length = length,
      .priority = priority,
  };

  return op(ctx, LITE_IOC_READ, &req);
}

int lite_write_prio(struct lite_ctx *ctx, lite_handle_t handle, uint64_t offset,
                    const void *buf, uint64_t length, uint32_t priority) {
  struct lite_rw req = {
      .handle = handle,
      .offset = offset,
      .buf = (uintptr_t)buf,
      .length = length,
      .priority = priority,
  };

  return op(ctx, LITE_IOC_WRITE, &req);
}

int lite_read(struct lite_ctx *ctx, lite_handle_t handle, uint64_t offset,
              void *buf, uint64_t length) {
  return lite_read_prio(ctx, handle, offset, buf, length, 0);
}

int lite_write(struct lite_ctx *ctx, lite_handle_t handle, uint64_t offset,
               const void *buf, uint64_t length) {
  return lite_write_prio(ctx, handle, offset, buf, length, 0);
}

int lite_memset(struct lite_ctx *ctx, lite_handle_t handle, uint64_t offset,
                uint8_t value, uint64_t length) {
  struct lite_memset req = {
      .handle = handle,
      .offset = offset,
      .length = length,
      .value = value,
  };

  return op(ctx, LITE_IOC_MEMSET, &req);
}

int lite_memcpy(struct lite_ctx *ctx, lite_handle_t dst, uint64_t dst_offset,
                lite_handle_t src, uint64_t src_offset, uint64_t length) {
  struct lite_memcpy req = {
      .dst_handle = dst,
      .dst_offset = dst_offset,
      .src_handle = src,
      .src_offset = src_offset,
      .length = length,
  };

  return op(ctx, LITE_IOC_MEMCPY, &req);
}

int lite_faa(struct lite_ctx *ctx, lite_handle_t handle, uint64_t offset,
             uint64_t add, uint64_t *old) {
  struct lite_atomic req = {
      .handle = handle,
      .offset = offset,
      .operand = add,
  };
  int err = op(ctx, LITE_IOC_FAA, &req);

  if (err == 0 && old) *old = req.result;
  return err;
}

int lite_cas(struct lite_ctx *ctx, lite_handle_t handle, uint64_t offset,
             uint64_t expected, uint64_t desired, uint64_t *old) {
  struct lite_atomic req = {
      .handle = handle,
      .offset = offset,
      .operand = expected,
      .swap = desired,
  };
  int err = op(ctx, LITE_IOC_CAS, &req);

  if (err == 0 && old) *old = req.result;
  return err;
}

const char *lite_errno_name(int err) {
  if (err < 0) err = -err;
  switch (err) {
    case 0:
      return "OK";
    case EPERM:
      return "EPERM";
    case ENOENT:
      return "ENOENT";
    case EINTR:
      return "EINTR";
    case EIO:
      return "EIO";
    case ENXIO:
      return "ENXIO";
    case EBADF:
      return "EBADF";
    case EAGAIN:
      return "EAGAIN";
    case ENOMEM:
      return "ENOMEM";
    case EACCES:
      return "EACCES";
    case EFAULT:
      return "EFAULT";
    case EBUSY:
      return "EBUSY";
    case EEXIST:
      return "EEXIST";
    case ENODEV:
      return "ENODEV";
    case ENOTDIR:
      return "ENOTDIR";
    case EISDIR:
      return "EISDIR";
    case EINVAL:
      return "EINVAL";
    case EMFILE:
      return "EMFILE";
    case EDQUOT:
      return "EDQUOT";
    case ENFILE:
      return "ENFILE";
    case ENOTTY:
      return "ENOTTY";
    case ENOSPC:
      return "ENOSPC";
    case ERANGE:
      return "ERANGE";
    case EPROTO:
      return "EPROTO";
    case EOVERFLOW:
      return "EOVERFLOW";
    case EMSGSIZE:
      return "EMSGSIZE";
    case EOPNOTSUPP:
      return "EOPNOTSUPP";
    case EADDRINUSE:
      return "EADDRINUSE";
    case EADDRNOTAVAIL:
      return "EADDRNOTAVAIL";
    case ECONNRESET:
      return "ECONNRESET";
    case ENOTCONN:
      return "ENOTCONN";
    case ETIMEDOUT:
      return "ETIMEDOUT";
    case ECONNREFUSED:
      return "ECONNREFUSED";
    case ECONNABORTED:
      return "ECONNABORTED";
    case EOWNERDEAD:
      return "EOWNERDEAD";
    case EHOSTDOWN:
      return "EHOSTDOWN";
    case EHOSTUNREACH:
      return "EHOSTUNREACH";
    case ESTALE:
      return "ESTALE";
    case ECANCELED:
      return "ECANCELED";
    case EUSERS:
      return "EUSERS";
    default:
      return "E?";
  }
}
