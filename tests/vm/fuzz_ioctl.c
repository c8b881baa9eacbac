// fuzz_ioctl: hostile input for every ioctl of /dev/lite (issue 9, item 5),
// run by tests/vm/fuzz.sh in a guest whose lite.ko has an agent attached.
//
//   fuzz_ioctl [--seed N] [--calls N] [--threads N] [--procs N]
//              [--hang-secs N]          the fuzzer (defaults: seed 1, 100000
//                                       calls, 4 threads x 2 processes, 30 s)
//   fuzz_ioctl --zero-check             a fresh anonymous PROT_READ mapping
//                                       reads as zeros (the zero page is clean)
//
// Each process opens /dev/lite, allocates and maps real LMRs through the
// real agent (so calls reach the data path), and its threads call every
// ioctl with random and semi-valid arguments: live, unmapped, invented and
// other processes' handles; offsets near 2^64; lengths 0, 1, huge; NULL,
// unmapped, PROT_NONE, read-only and kernel pointers, for buffers and for
// the argument struct itself; unknown flags, reserved fields and commands.
// A chaos thread per process maps LMRs on a second open file and, while the
// workers use them, unmaps the handles, frees the LMRs and closes the file,
// and SIGKILLs children in the middle of operations.
//
// Every call is predicted: a call the uapi says must fail (a write through a
// read-only map, a READ into read-only memory, a bad pointer, a non-zero
// reserved field, ...) fails the run if it succeeds, and so does an errno
// kmod/include/uapi/lite.h does not document for that ioctl, a READ that
// changed read-only memory, a call running longer than --hang-secs (the
// watchdog prints its kernel stack), or a child dying of a signal it was not
// sent. Results are counted per ioctl and errno. Each thread's random stream
// comes from the seed; thread interleaving does not, so a seed reproduces
// the calls, not always their order.
//
// Exit status: 0 when nothing failed, 1 when something did, 100 when the
// set-up failed (no /dev/lite, no agent).
#define _GNU_SOURCE
#include "tests/vm/fuzz_ioctl.h"

const char *const kNames[NIOC] = {
    "QUERY",     "NODE",     "NODE_LOOKUP", "ALLOC",    "MAP",
    "UNMAP",     "FREE",     "READ",        "WRITE",    "MEMSET",
    "MEMCPY",    "FAA",      "CAS",         "RPC_REG",  "RPC_OPEN",
    "RPC_CLOSE", "RPC_CALL", "RPC_SEND",    "RPC_RECV", "RPC_REPLY",
    "RPC_WAIT",  "BATCH",    "URING",       "SYNC",     "unknown"};
const unsigned long kCmds[NIOC] = {LITE_IOC_QUERY,
                                   LITE_IOC_NODE,
                                   LITE_IOC_NODE_LOOKUP,
                                   LITE_IOC_ALLOC,
                                   LITE_IOC_MAP,
                                   LITE_IOC_UNMAP,
                                   LITE_IOC_FREE,
                                   LITE_IOC_READ,
                                   LITE_IOC_WRITE,
                                   LITE_IOC_MEMSET,
                                   LITE_IOC_MEMCPY,
                                   LITE_IOC_FAA,
                                   LITE_IOC_CAS,
                                   LITE_IOC_RPC_REGISTER,
                                   LITE_IOC_RPC_OPEN,
                                   LITE_IOC_RPC_CLOSE,
                                   LITE_IOC_RPC_CALL,
                                   LITE_IOC_RPC_SEND,
                                   LITE_IOC_RPC_RECV,
                                   LITE_IOC_RPC_REPLY,
                                   LITE_IOC_RPC_WAIT,
                                   LITE_IOC_BATCH,
                                   LITE_URING_CMD_OP,
                                   LITE_IOC_SYNC,
                                   0};

// The errnos kmod/include/uapi/lite.h documents for each ioctl (EFAULT and
// EINVAL are common to all of them), 0-terminated.
#define OPS_ERRS EBADF, EACCES, ESTALE, EHOSTDOWN, ETIMEDOUT, EIO
#define CTL_ERRS EINTR, ENOTCONN, EAGAIN, ETIMEDOUT
static const int kDocErrs[NIOC][16] = {
    [I_QUERY] = {0},
    [I_NODE] = {0},
    [I_LOOKUP] = {ENOTCONN, ENOENT, 0},
    [I_ALLOC] = {CTL_ERRS, EEXIST, ENOENT, ENOSPC, ENOMEM, EPERM, 0},
    [I_MAP] = {CTL_ERRS, ENOENT, EACCES, EHOSTDOWN, EMFILE, 0},
    [I_UNMAP] = {EBADF, 0},
    [I_FREE] = {CTL_ERRS, ENOENT, EACCES, 0},
    [I_READ] = {OPS_ERRS, 0},
    [I_WRITE] = {OPS_ERRS, 0},
    [I_MEMSET] = {OPS_ERRS, 0},
    [I_MEMCPY] = {OPS_ERRS, 0},
    [I_FAA] = {OPS_ERRS, 0},
    [I_CAS] = {OPS_ERRS, 0},
    // uapi/lite_rpc.h
    [I_RPC_REGISTER] = {CTL_ERRS, EEXIST, ENOSPC, ENOMEM, EDQUOT, 0},
    [I_RPC_OPEN] = {CTL_ERRS, ENOENT, EACCES, EHOSTDOWN, EUSERS, EMFILE, ENOMEM,
                    EDQUOT, ENOSPC, 0},
    [I_RPC_CLOSE] = {EBADF, 0},
    [I_RPC_CALL] = {EBADF, EMSGSIZE, EAGAIN, ETIMEDOUT, ECONNREFUSED, EHOSTDOWN,
                    EOVERFLOW, EINTR, 0},
    [I_RPC_SEND] = {EBADF, EMSGSIZE, EAGAIN, ETIMEDOUT, ECONNREFUSED, EHOSTDOWN,
                    EINTR, 0},
    [I_RPC_RECV] = {EBADF, ECONNREFUSED, EINTR, EMSGSIZE, EHOSTDOWN, ETIMEDOUT,
                    0},
    [I_RPC_REPLY] = {EBADF, EMSGSIZE, EHOSTDOWN, ETIMEDOUT, EINTR, 0},
    [I_RPC_WAIT] = {EINTR, 0},
    // uapi/lite_batch.h: the call itself (each entry is checked apart)
    [I_BATCH] = {EINTR, 0},
    // each command's CQE (fuzz_uring.c checks them itself)
    [I_URING] = {OPS_ERRS, EOPNOTSUPP, EINTR, ENOTTY, ECANCELED, 0},
    // uapi/lite_sync.h (EINVAL also for a barrier count another arrival
    // of the round did not give)
    [I_SYNC] = {OPS_ERRS, ENOTCONN, EINTR, EBUSY, EPERM, ECONNABORTED, ENOMEM,
                0},
};

struct shared *sh;
uint64_t g_seed = 1;
long g_calls = 100000;
int g_threads = 4, g_procs = 2, g_hang_secs = 30;
static int g_verbose_fails = 40;

// --- per process
// ---------------------------------------------------------------
int proc_idx, main_fd;
uint32_t own_tag;
char *rw_area, *ro_area, *none_area;  // each ends at a PROT_NONE page
char *rofile_area, *flap_area;
const uint32_t kAccess[3] = {LITE_ACCESS_READ, LITE_ACCESS_WRITE,
                             LITE_ACCESS_READ | LITE_ACCESS_WRITE};
struct lmr lmrs[NLMR];
_Atomic uint64_t slots[NSLOT];        // slot i: lmrs[i / 3], kAccess[i % 3]
static _Atomic uint64_t dead[NDEAD];  // handles whose UNMAP returned 0
static _Atomic unsigned dead_next;
static _Atomic uint64_t alloc_seq;
struct victim victim = {-1, 0};
uint32_t node_id_self, num_devices, num_members;

uint64_t now_ms(void) {
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

uint64_t rnd(uint64_t *s) {  // splitmix64
  uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);

  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}
uint64_t below(uint64_t *s, uint64_t n) { return n ? rnd(s) % n : 0; }
int pct(uint64_t *s, int p) { return (int)below(s, 100) < p; }

// Set for a share of the calls: the generators then make valid arguments,
// so that those calls reach the RDMA and the deep paths behind it.
__thread int clean;

void fail(const char *fmt, ...) {
  va_list ap;
  uint64_t n = atomic_fetch_add(&sh->failures, 1);

  if (n >= (uint64_t)g_verbose_fails) return;
  va_start(ap, fmt);
  printf("  FAIL  [seed %llu, process %d] ", (unsigned long long)g_seed,
         proc_idx);
  vprintf(fmt, ap);
  printf("\n");
  fflush(stdout);
  va_end(ap);
}

static int documented(int ioc, int err, int victim_fd) {
  if (ioc == I_UNKNOWN) return err == ENOTTY;
  if (err == EFAULT || err == EINVAL) return 1;
  // A closed victim file: its number is gone (EBADF) or is /dev/lite again.
  if (victim_fd && (err == EBADF || err == ENOTTY)) return 1;
  for (const int *e = kDocErrs[ioc]; *e; e++)
    if (*e == err) return 1;
  return 0;
}

// One call, watched and counted. must_fail: why it may not succeed (NULL if
// it may). Returns 0 or the errno.
int call(struct busy *b, int fd, int ioc, unsigned long cmd, void *arg,
         const char *must_fail, int victim_fd, const char *fmt, ...) {
  va_list ap;
  int err;

  va_start(ap, fmt);
  vsnprintf(b->what, sizeof(b->what), fmt, ap);
  va_end(ap);
  atomic_store(&b->since_ms, now_ms());
  err = ioctl(fd, cmd, arg) == 0 ? 0 : errno;
  atomic_store(&b->since_ms, 0);
  atomic_fetch_add(&sh->counts[ioc][err < NERR ? err : NERR - 1], 1);
  if (err == 0 && must_fail)
    fail("%s succeeded but must fail (%s)", b->what, must_fail);
  else if (err && !documented(ioc, err, victim_fd))
    fail("%s: %s, not documented for %s", b->what, strerror(err), kNames[ioc]);
  return err;
}

// --- argument generators
// ---------------------------------------------------------

// gen_ptr(): a user pointer and whether [p, p + len) is memory the kernel
// may use: readable for a source, writable for a destination.

static int in_area(uint64_t p, uint64_t len, const char *a, uint64_t n) {
  uint64_t base = (uintptr_t)a;

  return p >= base && len <= n && p - base <= n - len;
}

struct uptr gen_ptr(uint64_t *s, uint64_t len) {
  struct uptr u = {0};
  uint64_t n = len < RW_BYTES ? len : RW_BYTES;

  switch (clean ? 12 : below(s, 44)) {
    case 0:
      u.p = 0, u.kind = "NULL";
      break;
    case 1:
      u.p = 0xf000, u.kind = "unmapped";
      break;
    case 2:
      u.p = (uintptr_t)none_area + below(s, 4096), u.kind = "PROT_NONE";
      break;
    case 3:
      u.p = 0xffff888000000000ULL + 8 * below(s, 1 << 20), u.kind = "kernel";
      break;
    case 4:
      u.p = 0xffffffff81000000ULL, u.kind = "kernel text";
      break;
    case 5:
      u.p = 0x0000800000000000ULL + below(s, 4096), u.kind = "non-canonical";
      break;
    case 6:
    case 7:
    case 8:
      u.p = (uintptr_t)ro_area + below(s, RO_BYTES), u.kind = "read-only";
      break;
    case 9:  // runs into the guard page after rw_area
      u.p = (uintptr_t)rw_area + RW_BYTES - (n > 1 ? below(s, n - 1) + 1 : 0);
      u.kind = "into a guard page";
      break;
    case 10:
    case 11:
      u.p = (uintptr_t)rofile_area + below(s, RO_BYTES);
      u.kind = "a read-only shared file mapping";
      break;
    case 12:
    case 13:  // no prediction: the mapping changes under the call
      u.p = (uintptr_t)flap_area + below(s, RO_BYTES), u.kind = "flapping";
      u.writable = u.readable = 1;
      return u;
    default:
      u.p = (uintptr_t)rw_area + below(s, RW_BYTES - n + 1), u.kind = "buffer";
  }
  u.writable = in_area(u.p, len, rw_area, RW_BYTES);
  u.readable = u.writable || in_area(u.p, len, ro_area, RO_BYTES) ||
               in_area(u.p, len, rofile_area, RO_BYTES);
  return u;
}

uint64_t gen_len(uint64_t *s, uint64_t size) {
  static const uint64_t kEdge[] = {0,
                                   1,
                                   7,
                                   8,
                                   9,
                                   4095,
                                   4096,
                                   4097,
                                   LITE_OP_LENGTH_MAX,
                                   LITE_OP_LENGTH_MAX + 1,
                                   UINT64_MAX,
                                   UINT64_MAX - 7,
                                   1ULL << 63};

  if (clean) return below(s, size < 4096 ? size : 4096) + 1;
  switch (below(s, 10)) {
    case 0:
    case 1:
      return kEdge[below(s, sizeof(kEdge) / 8)];
    case 2:
      return size ? below(s, size) + 1 : rnd(s);
    case 3:
      return pct(s, 10) ? size : size + 1;
    case 4:
      return rnd(s);
    default:
      return below(s, 4096) + 1;
  }
}

uint64_t gen_off(uint64_t *s, uint64_t size, uint64_t len) {
  if (clean && len <= size) return below(s, size - len + 1);
  switch (below(s, 12)) {
    case 0:
      return 0;
    case 1:
      return size - len;
    case 2:
      return size - len + 1;
    case 3:
      return size;
    case 4:
      return UINT64_MAX - below(s, 16);
    case 5:
      return -len;  // offset + length wraps to 0
    case 6:
      return 1ULL << 63;
    case 7:
      return rnd(s);
    default:
      return size ? below(s, size) : 0;
  }
}

int range_ok(uint64_t off, uint64_t len, uint64_t size) {
  uint64_t end;

  return len && len <= LITE_OP_LENGTH_MAX &&
         !__builtin_add_overflow(off, len, &end) && end <= size;
}

// A handle for an operation. *lmr and *access are known (>= 0) only for a
// live handle of this process's main file (-2: the victim file's, whose LMR
// is not known here); why is set when any call with it must fail; *vfd is
// the file to use.
uint64_t gen_op_handle(uint64_t *s, int *lmr, uint32_t *access,
                       const char **why, int *vfd) {
  uint64_t h;
  int i;

  *lmr = -1, *access = 0, *why = NULL, *vfd = main_fd;
  switch (clean ? 19 : below(s, 20)) {
    case 0:
      *why = "an unmapped handle";
      h = atomic_load(&dead[below(s, NDEAD)]);
      return h ? h : UINT64_MAX;
    case 1:
      *why = "an invented handle";
      return rnd(s) | 1ULL << 63;  // tags from get_random_u32: not own_tag
    case 2:
      *why = "an index never allocated in this file";
      return (uint64_t)own_tag << 32 |
             (0xfff00000U + (uint32_t)below(s, 1 << 20));
    case 3:
      *why = "another process's handle";
      h = atomic_load(
          &sh->published[(proc_idx + 1) % g_procs][below(s, NSLOT)]);
      return h && h >> 32 != own_tag ? h : (rnd(s) | 1ULL << 62);
    case 4:
      *why = "handle 0, 1 or ~0";
      return (uint64_t[]){0, 1, UINT64_MAX}[below(s, 3)];
    case 5: {
      int fd = atomic_load(&victim.fd);

      h = atomic_load(&victim.handle);
      if (fd >= 0 && h) {
        *vfd = fd, *lmr = -2;
        return h;
      }
    }  // fall through
    default:
      i = (int)below(s, NSLOT);
      h = atomic_load(&slots[i]);
      if (h <= 1) {
        *why = "an empty slot's stand-in";
        return UINT64_MAX;
      }
      *lmr = i / 3, *access = kAccess[i % 3];
      return h;
  }
}

// The argument struct's address: usually a normal copy; sometimes NULL, a
// bad address, a read-only copy or one cut off by a PROT_NONE page.
void *place_arg(uint64_t *s, struct argbuf *ab, void *arg, size_t n,
                int writes_back, const char **why) {
  switch (clean ? 39 : below(s, 40)) {
    case 0:
      *why = "argument NULL";
      return NULL;
    case 1:
      *why = "argument at an unmapped address";
      return (void *)0xf000;
    case 2:
      *why = "argument at a kernel address";
      return (void *)0xffff888000001000ULL;
    case 3:  // the kernel reads it fine; it may not write the answer back
      mprotect(ab->ro_page, 4096, PROT_READ | PROT_WRITE);
      memcpy(ab->ro_page, arg, n);
      mprotect(ab->ro_page, 4096, PROT_READ);
      if (writes_back) *why = "argument read-only but written back";
      return ab->ro_page;
    case 4:
      *why = "argument cut off by a PROT_NONE page";
      memcpy(ab->rw_page + 4096 - n + 1, arg, n - 1);
      return ab->rw_page + 4096 - n + 1;
    default:
      return arg;
  }
}

static int name_ok(const char *n, size_t cap, size_t max) {
  size_t i;

  for (i = 0; i < cap && n[i]; i++) {
    char c = n[i];
    int alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                (c >= '0' && c <= '9');
    if (!alnum &&
        (i == 0 || !strchr(max == LITE_NAME_MAX ? "._:/-" : "._-", c)))
      return 0;
  }
  return i > 0 && i < cap && i <= max;
}

static void gen_name(uint64_t *s, char *n, size_t cap, int thread) {
  static const char kBad[] = "-. /:\x01\xff\t*";

  memset(n, 0, cap);
  switch (below(s, 10)) {
    case 0:
      break;  // empty
    case 1:
      memset(n, 'a', cap);
      break;  // no NUL
    case 2:
      memset(n, 'b', below(s, cap - 1) + 1);
      break;  // maybe too long
    case 3:
      snprintf(n, cap, "%cfz", kBad[below(s, sizeof(kBad) - 1)]);
      break;
    case 4:
      // The suite's root-owned LMRs (0600, 0644): uid 1000 may map only
      // the second, read-only.
      snprintf(n, cap, "%s",
               pct(s, 50) ? lmrs[below(s, NLMR)].name
                          : (const char *[]){"fz.root.private",
                                             "fz.root.shared"}[below(s, 2)]);
      break;
    default:
      snprintf(n, cap, "fzx.%llu.%d.%d.%llu", (unsigned long long)g_seed,
               proc_idx, thread, (unsigned long long)below(s, 50));
  }
}

// --- the calls
// ----------------------------------------------------------------------

void check_unchanged(struct worker *w, uint64_t buf, uint64_t len,
                     const char *area, char want) {
  if (!in_area(buf, 1, area, RO_BYTES)) return;
  uint64_t from = buf - (uintptr_t)area;

  for (uint64_t i = from; i < RO_BYTES && i - from < len; i++)
    if (area[i] != want) {
      fail("%s: wrote into read-only memory (byte %llu is %#x)", w->b->what,
           (unsigned long long)i, (unsigned char)area[i]);
      return;
    }
}

static void do_rw(struct worker *w, int ioc) {
  uint64_t *s = &w->s;
  int lmr, vfd, writes = ioc == I_WRITE;
  uint32_t access;
  const char *why, *aw = NULL;
  struct lite_rw op = {0};
  uint64_t size;
  struct uptr u;

  op.handle = gen_op_handle(s, &lmr, &access, &why, &vfd);
  size = lmr >= 0 ? lmrs[lmr].size : 4096;
  op.length = gen_len(s, size);
  op.offset = gen_off(s, size, op.length);
  u = gen_ptr(s, op.length);
  op.buf = u.p;
  if (DIRTY(s, 3)) op.flags = (uint32_t)rnd(s) | 1;
  if (DIRTY(s, 3)) op.priority = (uint32_t)rnd(s) | 4;  // no enum lite_priority
  if (!why && op.flags) why = "flags not 0";
  if (!why && op.priority) why = "priority not a priority";
  if (!why && (!op.length || op.length > LITE_OP_LENGTH_MAX))
    why = "bad length";
  if (!why && lmr >= 0 && !range_ok(op.offset, op.length, size))
    why = "out of range";
  if (!why && lmr >= 0 &&
      !(access & (writes ? LITE_ACCESS_WRITE : LITE_ACCESS_READ)))
    why = "the map lacks the access";
  if (!why && !(writes ? u.readable : u.writable)) why = u.kind;
  void *arg = place_arg(s, &w->ab, &op, sizeof(op), 0, &aw);
  call(w->b, vfd, ioc, kCmds[ioc], arg, why ? why : aw, vfd != main_fd,
       "%s handle %#llx off %#llx len %#llx buf %#llx (%s) flags %#x prio %#x "
       "arg %p",
       kNames[ioc], (unsigned long long)op.handle,
       (unsigned long long)op.offset, (unsigned long long)op.length,
       (unsigned long long)op.buf, u.kind, op.flags, op.priority, arg);
  // A READ must never write through a read-only mapping: not into the
  // zero page, not into a file's page cache.
  if (!writes) {
    check_unchanged(w, op.buf, op.length, ro_area, 0);
    check_unchanged(w, op.buf, op.length, rofile_area, (char)FILE_BYTE);
  }
}

static void do_memset(struct worker *w) {
  uint64_t *s = &w->s;
  int lmr, vfd;
  uint32_t access;
  const char *why, *aw = NULL;
  struct lite_memset op = {0};
  uint64_t size;

  op.handle = gen_op_handle(s, &lmr, &access, &why, &vfd);
  size = lmr >= 0 ? lmrs[lmr].size : 4096;
  op.length = gen_len(s, size);
  op.offset = gen_off(s, size, op.length);
  op.value = pct(s, 90) ? (uint32_t)below(s, 256) : (uint32_t)rnd(s) | 256;
  if (DIRTY(s, 3)) op.flags = 1U << below(s, 32);
  if (DIRTY(s, 3)) op.priority = 3;
  if (DIRTY(s, 3)) op.reserved = (uint32_t)rnd(s) | 1;
  if (!why && (op.flags || op.priority || op.reserved))
    why = "flags, priority or reserved";
  if (!why && op.value > 255) why = "value > 255";
  if (!why && (!op.length || op.length > LITE_OP_LENGTH_MAX))
    why = "bad length";
  if (!why && lmr >= 0 && !range_ok(op.offset, op.length, size))
    why = "out of range";
  if (!why && lmr >= 0 && !(access & LITE_ACCESS_WRITE))
    why = "the map lacks WRITE";
  void *arg = place_arg(s, &w->ab, &op, sizeof(op), 0, &aw);
  call(w->b, vfd, I_MEMSET, LITE_IOC_MEMSET, arg, why ? why : aw,
       vfd != main_fd,
       "MEMSET handle %#llx off %#llx len %#llx value %#x flags %#x prio %#x "
       "reserved %#x arg %p",
       (unsigned long long)op.handle, (unsigned long long)op.offset,
       (unsigned long long)op.length, op.value, op.flags, op.priority,
       op.reserved, arg);
}

static void do_memcpy(struct worker *w) {
  uint64_t *s = &w->s;
  int dl, sl, dv, sv;
  uint32_t da, sa;
  const char *dwhy, *swhy, *why, *aw = NULL;
  struct lite_memcpy op = {0};
  uint64_t dsize, ssize;

  op.dst_handle = gen_op_handle(s, &dl, &da, &dwhy, &dv);
  op.src_handle = gen_op_handle(s, &sl, &sa, &swhy, &sv);
  if (dv != sv) {  // one file per call: the victim's handles on the main file
    dv = main_fd;
    if (!dwhy && dl == -2) dwhy = "another file's handle";
    if (!swhy && sl == -2) swhy = "another file's handle";
  }
  why = dwhy ? dwhy : swhy;
  dsize = dl >= 0 ? lmrs[dl].size : 4096;
  ssize = sl >= 0 ? lmrs[sl].size : 4096;
  op.length = gen_len(s, dsize < ssize ? dsize : ssize);
  op.dst_offset = gen_off(s, dsize, op.length);
  op.src_offset = gen_off(s, ssize, op.length);
  if (DIRTY(s, 3)) op.flags = 1;
  if (DIRTY(s, 3)) op.priority = 1U << 31;
  if (!why && (op.flags || op.priority)) why = "flags or priority";
  if (!why && (!op.length || op.length > LITE_OP_LENGTH_MAX))
    why = "bad length";
  if (!why && dl >= 0 && !range_ok(op.dst_offset, op.length, dsize))
    why = "destination out of range";
  if (!why && sl >= 0 && !range_ok(op.src_offset, op.length, ssize))
    why = "source out of range";
  if (!why && ((dl >= 0 && !(da & LITE_ACCESS_WRITE)) ||
               (sl >= 0 && !(sa & LITE_ACCESS_READ))))
    why = "the maps lack the access";
  if (!why && dl == sl && dl >= 0 &&
      op.dst_offset < op.src_offset + op.length &&
      op.src_offset < op.dst_offset + op.length)
    why = "overlapping ranges of one LMR";
  void *arg = place_arg(s, &w->ab, &op, sizeof(op), 0, &aw);
  call(w->b, dv, I_MEMCPY, LITE_IOC_MEMCPY, arg, why ? why : aw, dv != main_fd,
       "MEMCPY dst %#llx+%#llx src %#llx+%#llx len %#llx flags %#x prio %#x "
       "arg %p",
       (unsigned long long)op.dst_handle, (unsigned long long)op.dst_offset,
       (unsigned long long)op.src_handle, (unsigned long long)op.src_offset,
       (unsigned long long)op.length, op.flags, op.priority, arg);
}

static void do_atomic(struct worker *w, int ioc) {
  uint64_t *s = &w->s;
  int lmr, vfd;
  uint32_t access;
  const char *why, *aw = NULL;
  struct lite_atomic op = {0};
  uint64_t size;

  op.handle = gen_op_handle(s, &lmr, &access, &why, &vfd);
  size = lmr >= 0 ? lmrs[lmr].size : 4096;
  op.offset = pct(s, 70) ? below(s, size / 8 + 1) * 8 : gen_off(s, size, 8);
  op.operand = rnd(s);
  op.swap = ioc == I_CAS || pct(s, 5) ? rnd(s) : 0;
  if (DIRTY(s, 3)) op.flags = 1U << below(s, 32);
  if (DIRTY(s, 3)) op.priority = 7;
  if (!why && (op.flags || op.priority)) why = "flags or priority";
  if (!why && ioc == I_FAA && op.swap) why = "FAA with swap not 0";
  if (!why && op.offset % 8) why = "misaligned";
  if (!why && lmr >= 0 && !range_ok(op.offset, 8, size)) why = "out of range";
  if (!why && lmr >= 0 && access != (LITE_ACCESS_READ | LITE_ACCESS_WRITE))
    why = "the map lacks READ or WRITE";
  void *arg = place_arg(s, &w->ab, &op, sizeof(op), 1, &aw);
  call(w->b, vfd, ioc, kCmds[ioc], arg, why ? why : aw, vfd != main_fd,
       "%s handle %#llx off %#llx operand %#llx swap %#llx flags %#x prio %#x "
       "arg %p",
       kNames[ioc], (unsigned long long)op.handle,
       (unsigned long long)op.offset, (unsigned long long)op.operand,
       (unsigned long long)op.swap, op.flags, op.priority, arg);
}

// LITE_IOC_SYNC on a random handle: locks, try-locks, unlocks and barriers
// of 1 or 2 with short timeouts, so that a lock another thread of this
// file holds, or a barrier nobody else reaches, costs milliseconds.
static void do_sync(struct worker *w) {
  uint64_t *s = &w->s;
  int lmr, vfd;
  uint32_t access;
  const char *why, *aw = NULL;
  struct lite_sync op = {0};

  op.handle = gen_op_handle(s, &lmr, &access, &why, &vfd);
  op.op = DIRTY(s, 5) ? (uint32_t)below(s, 8) : 1 + (uint32_t)below(s, 4);
  op.timeout_ms = 1 + (uint32_t)below(s, 20);
  if (op.op == LITE_SYNC_BARRIER) op.count = 1 + (uint32_t)below(s, 2);
  if (DIRTY(s, 3)) op.count = (uint32_t)rnd(s);
  if (DIRTY(s, 3)) op.flags = 1U << below(s, 32);
  if (DIRTY(s, 3)) op.reserved = (uint32_t)rnd(s) | 1;
  if (DIRTY(s, 3)) op.result = 1;
  if (DIRTY(s, 3)) op.timeout_ms = LITE_RPC_TIMEOUT_MAX_MS + 1;
  if (!why && (op.op < LITE_SYNC_LOCK || op.op > LITE_SYNC_BARRIER))
    why = "not an op";
  if (!why && (op.flags || op.reserved || op.result))
    why = "flags, reserved or result";
  if (!why && op.timeout_ms > LITE_RPC_TIMEOUT_MAX_MS) why = "timeout too long";
  if (!why && op.op == LITE_SYNC_BARRIER &&
      (!op.count || op.count > LITE_SYNC_COUNT_MAX))
    why = "barrier count";
  if (!why && op.op != LITE_SYNC_BARRIER && op.count)
    why = "a lock with a count";
  void *arg = place_arg(s, &w->ab, &op, sizeof(op), 1, &aw);
  call(w->b, vfd, I_SYNC, LITE_IOC_SYNC, arg, why ? why : aw, vfd != main_fd,
       "SYNC handle %#llx op %u count %u timeout %u flags %#x reserved %#x "
       "result %#x arg %p",
       (unsigned long long)op.handle, op.op, op.count, op.timeout_ms, op.flags,
       op.reserved, op.result, arg);
}

static void push_dead(uint64_t h) {
  atomic_store(&dead[atomic_fetch_add(&dead_next, 1) % NDEAD], h);
}

int unmap(struct busy *b, int fd, uint64_t h, int victim_fd) {
  struct lite_unmap u = {.handle = h};

  return call(b, fd, I_UNMAP, LITE_IOC_UNMAP, &u, NULL, victim_fd,
              "UNMAP handle %#llx", (unsigned long long)h);
}

// A slot's handle unmapped (it must work: this thread owns it now), or an
// empty slot mapped again.
static void do_slot(struct worker *w) {
  int i = (int)below(&w->s, NSLOT);
  uint64_t h = atomic_exchange(&slots[i], 1);  // 1: being changed

  if (h == 1) return;  // another thread has it
  if (h) {
    atomic_store(&sh->published[proc_idx][i], 0);
    if (unmap(w->b, main_fd, h, 0) == 0)
      push_dead(h);
    else
      fail("UNMAP of live handle %#llx failed", (unsigned long long)h);
    atomic_store(&slots[i], 0);
    return;
  }
  struct lite_map m = {.access = kAccess[i % 3]};

  memcpy(m.name, lmrs[i / 3].name, sizeof(m.name));
  if (call(w->b, main_fd, I_MAP, LITE_IOC_MAP, &m, NULL, 0, "MAP %s access %u",
           m.name, m.access) == 0) {
    atomic_store(&sh->published[proc_idx][i], m.handle);
    h = m.handle;
  }
  atomic_store(&slots[i], h);
}

static void do_unmap(struct worker *w) {
  uint64_t *s = &w->s;
  int lmr, vfd;
  uint32_t access;
  const char *why, *aw = NULL;
  struct lite_unmap u = {0};

  u.handle = gen_op_handle(s, &lmr, &access, &why, &vfd);
  if (lmr >= 0) {  // a live slot handle is do_slot's to unmap
    u.handle = (uint64_t)own_tag << 32 | 0xfffff000U;
    why = "an index never allocated in this file";
  }
  if (DIRTY(s, 10)) u.flags = 1;
  if (DIRTY(s, 10)) u.reserved = (uint32_t)rnd(s) | 1;
  if (!why && (u.flags || u.reserved)) why = "flags or reserved";
  void *arg = place_arg(s, &w->ab, &u, sizeof(u), 0, &aw);
  if (call(w->b, vfd, I_UNMAP, LITE_IOC_UNMAP, arg, why ? why : aw,
           vfd != main_fd, "UNMAP handle %#llx flags %#x reserved %#x arg %p",
           (unsigned long long)u.handle, u.flags, u.reserved, arg) == 0 &&
      vfd != main_fd)
    atomic_compare_exchange_strong(&victim.handle, &u.handle, 0);
}

static void do_map(struct worker *w) {
  uint64_t *s = &w->s;
  const char *why = NULL, *aw = NULL;
  struct lite_map m = {0};

  gen_name(s, m.name, sizeof(m.name), w->idx);
  m.access = pct(s, 85) ? kAccess[below(s, 3)] : (uint32_t)rnd(s);
  if (DIRTY(s, 5)) m.flags = 1;
  if (DIRTY(s, 5)) m.reserved = 1;
  if (!name_ok(m.name, sizeof(m.name), LITE_NAME_MAX)) why = "bad name";
  if (!why && (!m.access || m.access & ~3U)) why = "bad access";
  if (!why && (m.flags || m.reserved)) why = "flags or reserved";
  // A MAP whose answer cannot be written back may leave a handle nobody
  // knows: only the victim file gets those.
  int fd = main_fd, vfd = atomic_load(&victim.fd);
  void *arg = &m;
  if (vfd >= 0 && pct(s, 30)) {
    fd = vfd;
    arg = place_arg(s, &w->ab, &m, sizeof(m), 1, &aw);
  }
  if (call(w->b, fd, I_MAP, LITE_IOC_MAP, arg, why ? why : aw, fd != main_fd,
           "MAP name '%.40s' access %#x flags %#x reserved %#x arg %p", m.name,
           m.access, m.flags, m.reserved, arg) == 0 &&
      fd == main_fd && unmap(w->b, main_fd, m.handle, 0) == 0)
    push_dead(m.handle);
}

static void do_alloc_free(struct worker *w) {
  uint64_t *s = &w->s;
  const char *why = NULL, *aw = NULL;
  struct lite_alloc a = {0};
  struct lite_free f = {0};
  static const uint64_t kSizes[] = {
      0, 1, 4096, LITE_LMR_SIZE_MAX, LITE_LMR_SIZE_MAX + 1, UINT64_MAX};

  if (pct(s, 60)) {
    snprintf(a.name, sizeof(a.name), "fza.%llu.%d.%llu",
             (unsigned long long)g_seed, proc_idx,
             (unsigned long long)atomic_fetch_add(&alloc_seq, 1));
  } else {
    gen_name(s, a.name, sizeof(a.name), w->idx);
  }
  a.size_bytes = pct(s, 60) ? below(s, 65536) + 1 : kSizes[below(s, 6)];
  a.mode = pct(s, 85) ? 0600 : (uint32_t)rnd(s) & 0777;
  a.home_node_id = pct(s, 85) ? 0 : (uint32_t)rnd(s);
  if (DIRTY(s, 4)) a.flags = 1;
  if (DIRTY(s, 4)) a.reserved = 1;
  if (!name_ok(a.name, sizeof(a.name), LITE_NAME_MAX)) why = "bad name";
  if (!why && (!a.size_bytes || a.size_bytes > LITE_LMR_SIZE_MAX))
    why = "bad size";
  if (!why && a.mode & ~0666U) why = "mode not in 0666";
  if (!why && (a.flags || a.reserved)) why = "flags or reserved";
  void *arg = place_arg(s, &w->ab, &a, sizeof(a), 1, &aw);
  int err = call(
      w->b, main_fd, I_ALLOC, LITE_IOC_ALLOC, arg, why ? why : aw, 0,
      "ALLOC '%.40s' size %#llx mode %#o home %u flags %#x reserved %#x arg %p",
      a.name, (unsigned long long)a.size_bytes, a.mode, a.home_node_id, a.flags,
      a.reserved, arg);
  // Free it again (or, half the time, a name that is no LMR or no name).
  if (err == 0 || aw || pct(s, 50))
    snprintf(f.name, sizeof(f.name), "%s", a.name);
  else
    gen_name(s, f.name, sizeof(f.name), w->idx);
  if (!strncmp(f.name, "fz.", 3)) snprintf(f.name, sizeof(f.name), "fzy");
  why = name_ok(f.name, sizeof(f.name), LITE_NAME_MAX) ? NULL : "bad name";
  if (DIRTY(s, 4)) f.flags = 1;
  if (DIRTY(s, 4)) f.reserved = 1;
  if (!why && (f.flags || f.reserved)) why = "flags or reserved";
  aw = NULL;
  arg = place_arg(s, &w->ab, &f, sizeof(f), 1, &aw);
  call(w->b, main_fd, I_FREE, LITE_IOC_FREE, arg, why ? why : aw, 0,
       "FREE '%.40s' flags %#x reserved %#x arg %p", f.name, f.flags,
       f.reserved, arg);
}

static void do_info(struct worker *w, int ioc) {
  uint64_t *s = &w->s;
  const char *why = NULL, *aw = NULL;
  uint32_t maxn = pct(s, 70)
                      ? (uint32_t)below(s, 8)
                      : (uint32_t[]){LITE_MEMBERS_MAX, LITE_MEMBERS_MAX + 1,
                                     UINT32_MAX}[below(s, 3)];
  size_t each = ioc == I_QUERY ? sizeof(struct lite_device_info)
                               : sizeof(struct lite_member);
  uint32_t have = ioc == I_QUERY ? num_devices : num_members;
  uint64_t filled = (maxn < have ? maxn : have) * each;
  struct uptr u = gen_ptr(s, filled ? filled : 1);
  uint32_t flags = pct(s, 4) ? 1U << below(s, 32) : 0;
  uint64_t reserved = pct(s, 4) ? rnd(s) | 1 : 0;
  struct lite_query q = {.flags = flags,
                         .max_devices = maxn,
                         .devices = u.p,
                         .reserved = reserved};
  struct lite_node_info n = {.flags = flags,
                             .max_members = maxn,
                             .members = u.p,
                             .reserved = reserved};

  if (flags || reserved) why = "flags or reserved";
  if (!why && maxn && !u.p) why = "NULL array";
  if (!why && ioc == I_NODE && maxn > LITE_MEMBERS_MAX)
    why = "too many members";
  if (!why && filled && !u.writable) why = u.kind;
  void *arg = ioc == I_QUERY ? place_arg(s, &w->ab, &q, sizeof(q), 1, &aw)
                             : place_arg(s, &w->ab, &n, sizeof(n), 1, &aw);
  call(w->b, main_fd, ioc, kCmds[ioc], arg, why ? why : aw, 0,
       "%s max %u array %#llx (%s) flags %#x reserved %#llx arg %p",
       kNames[ioc], maxn, (unsigned long long)u.p, u.kind, flags,
       (unsigned long long)reserved, arg);
}

static void do_lookup(struct worker *w) {
  uint64_t *s = &w->s;
  const char *why = NULL, *aw = NULL;
  struct lite_node_lookup l = {0};

  switch (below(s, 4)) {
    case 0:
      snprintf(l.name, sizeof(l.name), "node%llu",
               (unsigned long long)below(s, 4));
      break;
    case 1:
      l.node_id = pct(s, 50) ? node_id_self : (uint32_t)rnd(s);
      break;
    default:
      gen_name(s, l.name, sizeof(l.name), w->idx);
  }
  if (pct(s, 5)) l.flags = 1;
  if (l.name[0] && !name_ok(l.name, sizeof(l.name), LITE_NODE_NAME_MAX))
    why = "bad node name";
  if (!why && l.flags) why = "flags";
  void *arg = place_arg(s, &w->ab, &l, sizeof(l), 1, &aw);
  call(w->b, main_fd, I_LOOKUP, LITE_IOC_NODE_LOOKUP, arg, why ? why : aw, 0,
       "NODE_LOOKUP name '%.20s' id %u flags %#x arg %p", l.name, l.node_id,
       l.flags, arg);
}

static void do_unknown(struct worker *w) {
  uint64_t *s = &w->s;
  unsigned long cmd;
  char arg[256] = {0};

  switch (below(s, 4)) {
    case 0:
      cmd = _IOC(below(s, 4), LITE_IOC_MAGIC, 0x20 + below(s, 0xe0),
                 below(s, 256));
      break;
    case 1:  // a known nr with the wrong size
      cmd = _IOC(_IOC_READ | _IOC_WRITE, LITE_IOC_MAGIC,
                 _IOC_NR(kCmds[below(s, NIOC - 1)]), below(s, 200) + 1);
      break;
    case 2:
      cmd = _IOC(below(s, 4), LITE_IOC_MAGIC, 7 + below(s, 9), below(s, 64));
      break;
    default:
      cmd = _IOC(below(s, 4), below(s, 256), below(s, 256), below(s, 256));
      break;
  }
  for (int i = 0; i < NIOC - 1; i++)
    if (cmd == kCmds[i]) return;
  call(w->b, main_fd, I_UNKNOWN, cmd, arg, "an unknown command", 0,
       "ioctl %#lx (unknown)", cmd);
}

void *worker_main(void *p) {
  struct worker *w = p;

  atomic_store(&w->b->tid, (int)syscall(SYS_gettid));
  for (long i = 0; i < w->calls && !atomic_load(&sh->stop); i++) {
    uint64_t r = below(&w->s, 1000);

    clean = pct(&w->s, 35);
    if (r < 150)
      do_rw(w, I_READ);
    else if (r < 300)
      do_rw(w, I_WRITE);
    else if (r < 400)
      do_memset(w);
    else if (r < 500)
      do_memcpy(w);
    else if (r < 600)
      do_atomic(w, I_FAA);
    else if (r < 700)
      do_atomic(w, I_CAS);
    else if (r < 770)
      do_unmap(w);
    else if (r < 820)
      do_info(w, I_QUERY);
    else if (r < 870)
      do_info(w, I_NODE);
    else if (r < 900)
      do_lookup(w);
    else if (r < 930)
      do_unknown(w);
    else if (r < 955)
      do_rpc(w);
    else if (r < 962)
      do_batch(w);
    else if (r < 970)
      do_uring(w);
    else if (r < 978)
      do_sync(w);
    else if (r < 985)
      do_slot(w);
    else if (r < 995)
      do_map(w);
    else
      do_alloc_free(w);
  }
  return NULL;
}
