"""The C API of libLITE (liblite.so.0) as cffi sees it, in ABI mode.

ABI mode (cffi's dlopen) needs no compiler where the package is used, only
liblite.so.0; the declarations below must match api/lite.h, api/lite_rpc.h,
api/lite_sync.h and the uapi structs exactly, which
python/tests/test_host.py checks against the C compiler.
"""

import os

import cffi

CDEF = """
typedef uint64_t lite_handle_t;
typedef uint64_t lite_service_t;
struct lite_ctx;

struct lite_lmr_info {
    uint64_t lmr_id;
    uint64_t size_bytes;
    uint32_t home_node_id;
    uint32_t access;
};
struct lite_member {
    uint32_t node_id;
    uint32_t state;
    uint64_t incarnation;
};
struct lite_service_opts {
    uint32_t mode;
    uint32_t max_request;
    uint32_t max_reply;
    uint32_t depth;
    uint32_t max_clients;
};
struct lite_service_info {
    uint64_t service_id;
    uint32_t port;
    uint32_t slot_bytes;
    uint32_t depth;
    uint32_t max_clients;
    uint64_t ring_bytes;
    void *rings;
    size_t map_bytes;
};
struct lite_service_peer {
    uint64_t service_id;
    uint32_t node_id;
    uint32_t max_request;
    uint32_t max_reply;
    uint32_t depth;
};
struct lite_rpc_request {
    uint64_t id;
    uint64_t offset;
    uint32_t length;
    uint32_t client_node;
    uint32_t flags;
    uint32_t reserved;
};

int lite_open(const char *path, struct lite_ctx **ctx);
void lite_close(struct lite_ctx *ctx);
int lite_node_id(struct lite_ctx *ctx, uint32_t *node_id,
                 uint64_t *incarnation);
int lite_members(struct lite_ctx *ctx, struct lite_member *members,
                 uint32_t max_members, uint32_t *num_members);
int lite_node_lookup(struct lite_ctx *ctx, const char *name,
                     uint32_t *node_id);
int lite_node_name(struct lite_ctx *ctx, uint32_t node_id, char *buf,
                   size_t len);
int lite_alloc(struct lite_ctx *ctx, const char *name, uint64_t size_bytes,
               uint32_t mode, uint32_t home_node_id, uint64_t *lmr_id);
int lite_map(struct lite_ctx *ctx, const char *name, uint32_t access,
             lite_handle_t *handle, struct lite_lmr_info *info);
int lite_unmap(struct lite_ctx *ctx, lite_handle_t handle);
int lite_free(struct lite_ctx *ctx, const char *name);
int lite_read_prio(struct lite_ctx *ctx, lite_handle_t handle,
                   uint64_t offset, void *buf, uint64_t length,
                   uint32_t priority);
int lite_write_prio(struct lite_ctx *ctx, lite_handle_t handle,
                    uint64_t offset, const void *buf, uint64_t length,
                    uint32_t priority);
int lite_memset(struct lite_ctx *ctx, lite_handle_t handle, uint64_t offset,
                uint8_t value, uint64_t length);
int lite_memcpy(struct lite_ctx *ctx, lite_handle_t dst, uint64_t dst_offset,
                lite_handle_t src, uint64_t src_offset, uint64_t length);
int lite_faa(struct lite_ctx *ctx, lite_handle_t handle, uint64_t offset,
             uint64_t add, uint64_t *old);
int lite_cas(struct lite_ctx *ctx, lite_handle_t handle, uint64_t offset,
             uint64_t expected, uint64_t desired, uint64_t *old);
int lite_set_priority(struct lite_ctx *ctx, uint32_t priority);
int lite_get_priority(struct lite_ctx *ctx, uint32_t *priority,
                      int *high_allowed);
const char *lite_message(void);
const char *lite_errno_name(int err);

int lite_rpc_register(struct lite_ctx *ctx, const char *name,
                      const struct lite_service_opts *opts,
                      lite_service_t *service,
                      struct lite_service_info *info);
int lite_rpc_unregister(struct lite_ctx *ctx, lite_service_t service,
                        struct lite_service_info *info);
int lite_rpc_open(struct lite_ctx *ctx, const char *name,
                  lite_service_t *service, struct lite_service_peer *peer);
int lite_rpc_close(struct lite_ctx *ctx, lite_service_t service);
int lite_rpc_call_prio(struct lite_ctx *ctx, lite_service_t service,
                       const void *req, size_t req_len, void *reply,
                       size_t reply_max, size_t *reply_len,
                       uint32_t timeout_ms, uint32_t flags,
                       uint32_t priority);
int lite_send(struct lite_ctx *ctx, lite_service_t service, const void *msg,
              size_t len, uint32_t timeout_ms);
int lite_rpc_recv(struct lite_ctx *ctx, lite_service_t service,
                  struct lite_rpc_request *reqs, uint32_t max,
                  uint32_t timeout_ms, uint32_t *count);
int lite_rpc_reply(struct lite_ctx *ctx, lite_service_t service, uint64_t id,
                   const void *data, size_t len);
int lite_rpc_release(struct lite_ctx *ctx, lite_service_t service,
                     uint64_t id);

int lite_sync_create(struct lite_ctx *ctx, const char *name, uint32_t mode,
                     uint32_t home_node_id);
int lite_sync_open(struct lite_ctx *ctx, const char *name,
                   lite_handle_t *lock);
int lite_lock(struct lite_ctx *ctx, lite_handle_t lock, uint32_t timeout_ms);
int lite_trylock(struct lite_ctx *ctx, lite_handle_t lock);
int lite_unlock(struct lite_ctx *ctx, lite_handle_t lock);
int lite_barrier(struct lite_ctx *ctx, lite_handle_t barrier, uint32_t count,
                 uint32_t timeout_ms);
"""

ffi = cffi.FFI()
ffi.cdef(CDEF)


def _candidates():
    """Where liblite.so.0 may be, most specific first."""
    if os.environ.get("LITE_LIBRARY"):
        yield os.environ["LITE_LIBRARY"]
    if os.environ.get("LITE_BIN"):
        yield os.path.join(os.environ["LITE_BIN"], "api", "liblite.so.0")
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    yield os.path.join(repo, "bazel-bin", "api", "liblite.so.0")
    yield "liblite.so.0"  # the dynamic linker's search (an installed liblite)


def _load():
    tried = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append(path + " (missing)")
            continue
        try:
            return ffi.dlopen(path)
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
    raise ImportError(
        "cannot load liblite.so.0; set LITE_LIBRARY to its path "
        "(bazel build //api:liblite.so.0). Tried: " + "; ".join(tried))


lib = _load()
