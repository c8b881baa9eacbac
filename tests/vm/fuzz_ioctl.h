// fuzz_ioctl.h: what the two files of fuzz_ioctl share (fuzz_ioctl.c has
// the whole story): the generators and calls in fuzz_ioctl.c, the
// processes, chaos, watchdog and report in fuzz_ioctl_run.c.
#ifndef LITE_TESTS_VM_FUZZ_IOCTL_H_
#define LITE_TESTS_VM_FUZZ_IOCTL_H_

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kmod/include/uapi/lite.h"

enum {
  I_QUERY,
  I_NODE,
  I_LOOKUP,
  I_ALLOC,
  I_MAP,
  I_UNMAP,
  I_FREE,
  I_READ,
  I_WRITE,
  I_MEMSET,
  I_MEMCPY,
  I_FAA,
  I_CAS,
  I_RPC_REGISTER,
  I_RPC_OPEN,
  I_RPC_CLOSE,
  I_RPC_CALL,
  I_RPC_SEND,
  I_RPC_RECV,
  I_RPC_REPLY,
  I_RPC_WAIT,
  I_BATCH,
  I_URING,
  I_SYNC,
  I_UNKNOWN,
  NIOC
};

extern const char *const kNames[NIOC];
extern const unsigned long kCmds[NIOC];

#define MAX_PROCS 8
#define MAX_THREADS 16
#define NERR 160          // errno buckets; the last one holds larger values
#define NLMR 4            // LMRs per process
#define NSLOT (NLMR * 3)  // one map per LMR and access (R, W, RW)
#define NDEAD 256
#define RW_BYTES (2 << 20)
#define RO_BYTES (64 << 10)

struct busy {                 // what a thread is doing, for the watchdog
  _Atomic uint64_t since_ms;  // 0: between calls
  _Atomic int tid;
  char what[200];
};

struct shared {  // MAP_SHARED: every process of the run adds to it
  _Atomic uint64_t counts[NIOC][NERR];
  _Atomic uint64_t failures;
  _Atomic uint64_t published[MAX_PROCS][NSLOT];  // live handles, per process
  _Atomic int stop;
  struct busy busy[MAX_PROCS][MAX_THREADS + 1];
};

struct argbuf {
  char *rw_page;  // page 0 read-write, page 1 PROT_NONE
  char *ro_page;
};

struct worker {
  int idx;
  uint64_t s;
  struct busy *b;
  struct argbuf ab;
  long calls;
};

struct lmr {
  char name[LITE_NAME_BUF];
  uint64_t size;
};

struct victim {    // the chaos thread's second open file
  _Atomic int fd;  // -1: none
  _Atomic uint64_t handle;
};

extern struct shared *sh;
extern uint64_t g_seed;
extern long g_calls;
extern int g_threads, g_procs, g_hang_secs;

// Per process.
extern int proc_idx, main_fd;
extern uint32_t own_tag;
extern char *rw_area, *ro_area, *none_area;
// A file's pages, mapped MAP_SHARED and PROT_READ, every byte kFileByte: a
// READ that wrote there would change the file.
extern char *rofile_area;
#define FILE_BYTE 0xAB
// Mapped again and again (read-write, read-only, PROT_NONE) by a thread of
// each process while the workers point buffers into it.
extern char *flap_area;
extern const uint32_t kAccess[3];
extern struct lmr lmrs[NLMR];
extern _Atomic uint64_t slots[NSLOT];
extern struct victim victim;
extern uint32_t node_id_self, num_devices, num_members;

uint64_t now_ms(void);
uint64_t below(uint64_t *s, uint64_t n);
void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
// One call, watched and counted (fuzz_ioctl.c).
int call(struct busy *b, int fd, int ioc, unsigned long cmd, void *arg,
         const char *must_fail, int victim_fd, const char *fmt, ...)
    __attribute__((format(printf, 8, 9)));
int unmap(struct busy *b, int fd, uint64_t h, int victim_fd);
void *worker_main(void *p);

// The generators fuzz_rpc.c shares with fuzz_ioctl.c.
struct uptr {
  uint64_t p;
  int readable, writable;
  const char *kind;
};
struct uptr gen_ptr(uint64_t *s, uint64_t len);
void *place_arg(uint64_t *s, struct argbuf *ab, void *arg, size_t n,
                int writes_back, const char **why);
int pct(uint64_t *s, int p);
uint64_t rnd(uint64_t *s);
uint64_t gen_len(uint64_t *s, uint64_t size);
uint64_t gen_off(uint64_t *s, uint64_t size, uint64_t len);
int range_ok(uint64_t off, uint64_t len, uint64_t size);
// A handle: a live one of this process (*lmr its LMR, *access its map's
// access) or one that must fail (*why says why); *vfd the file to use it on.
uint64_t gen_op_handle(uint64_t *s, int *lmr, uint32_t *access,
                       const char **why, int *vfd);
// A READ into a read-only area must have left it as it was.
void check_unchanged(struct worker *w, uint64_t buf, uint64_t len,
                     const char *area, char want);
extern __thread int clean;
// Set for a share of the calls (clean): the generators then make valid
// arguments. DIRTY: a bad value, p percent of the other calls.
#define DIRTY(s, p) (!clean && pct(s, p))

// fuzz_rpc.c: this process's service (registered and opened at set-up,
// served by a thread of its own) and the RPC ioctls' generators.
void rpc_setup_process(void);
void rpc_teardown_process(void);
void do_rpc(struct worker *w);

// fuzz_batch.c: LITE_IOC_BATCH with entries of every kind.
void do_batch(struct worker *w);
// One entry; *why: why it must fail, or NULL.
void batch_gen_entry(struct worker *w, struct lite_batch_op *e,
                     const char **why, struct uptr *u);
// The errnos an entry may carry (EINVAL, EFAULT and its operation's).
int batch_errno_ok(int err);

// fuzz_uring.c: the same entries as io_uring commands (LITE_URING_CMD_OP).
void do_uring(struct worker *w);

#endif  // LITE_TESTS_VM_FUZZ_IOCTL_H_
