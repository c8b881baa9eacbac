// sync_probe: LITE's distributed locks and barriers (api/lite_sync.h) as an
// application uses them, for tests/vm/qos_locks.sh and the demo. Each thread
// has its own context (open file of /dev/lite), as separate processes would.
//
//   sync_probe counter LOCK THREADS N
//       THREADS threads x N critical sections, each a non-atomic
//       read-modify-write of the 8-byte word at offset 0 of LOCK (read,
//       add 1, write) under the lock. Prints "sections S in MS ms" and the
//       word at the end (another node's count is in it too).
//   sync_probe value LOCK EXPECTED       the word at offset 0 is EXPECTED
//   sync_probe hold LOCK READY_FILE      takes the lock, creates READY_FILE,
//                                        sleeps until killed
//   sync_probe acquire LOCK TIMEOUT_MS died|clean
//       waits for the lock; prints "acquired at MS" (CLOCK_REALTIME, as
//       bash's EPOCHREALTIME); checks the owner-died indication is as said
//   sync_probe killed-holder LOCK
//       a child process takes the lock and is killed (SIGKILL) a second
//       later while this one waits: the lock must come within 1 s of the
//       kill, with the owner-died indication; prints how long it took
//   sync_probe barrier BARRIER COUNT THREADS ROUNDS
//       THREADS threads x ROUNDS rounds of: fetch-and-add 1 to the word at
//       offset 0, lite_barrier(COUNT), then the word must be at least
//       COUNT x rounds so far (nobody passed before all had arrived)
//   sync_probe barrier-then BARRIER COUNT ERRNO|hang [READY_FILE]
//       one round that must pass (then creates READY_FILE), then a second
//       whose result must be ERRNO (ECONNABORTED, EHOSTDOWN), or, with
//       hang, sleeps until killed
//   sync_probe errors LOCK RPC_NAME
//       argument and rule checks: ioctl fields, read-only map, unlock not
//       held, try-lock busy, relock through the same context, barrier count
//       mismatch, a "lite." RPC service name refused
//   sync_probe stale LOCK                a waiter gets ESTALE when LOCK is
//                                        freed
//   sync_probe hold-until LOCK READY_FILE RELEASE_FILE
//       takes the lock, creates READY_FILE, and unlocks once RELEASE_FILE
//       exists (the unlock must succeed)
//   sync_probe waiters LOCK N TIMEOUT_MS WAITED READY_FILE
//       N threads, each its own context (all opened first), lock LOCK
//       (held elsewhere) with TIMEOUT_MS: WAITED of them must wait it out
//       (ETIMEDOUT), the rest be refused at once with EDQUOT (the uid's
//       share of the home); READY_FILE is made once all have asked
//   sync_probe forge RPC_NAME LMR_ID
//       the attack of review H2: opens the kernel lock service RPC_NAME
//       (lite.sync.<home>) as an application, which must fail EPERM; if it
//       opens anyway, sends hand-made UNLOCK, CANCEL, DIED and BARRIER
//       frames for LMR_ID with guessed file ids and tokens 1..512 (the
//       victim's counter run then shows whether one released its lock;
//       no BARRIER: a forged arrival would keep a slot of the node's
//       binding, which only the refusal prevents)
//   sync_probe bench LOCK N ROUNDS
//       uncontended lock+unlock vs one fetch-and-add on the same LMR, in
//       ROUNDS interleaved rounds of N each: p50/p99 and CPU per operation
//
// Exit status: the number of failed checks (100: set-up failed).
#define _GNU_SOURCE  // RUSAGE_THREAD
#define PROBE_NAME "sync_probe"
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "api/lite.h"
#include "api/lite_rpc.h"
#include "api/lite_sync.h"
#include "tests/vm/probe_check.h"

static const char *lock_name;

static uint64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void open_lock(struct lite_ctx **ctx, lite_handle_t *h) {
  int err = lite_open(NULL, ctx);
  if (err) die("lite_open", -err);
  err = lite_sync_open(*ctx, lock_name, h);
  if (err) die(lite_message()[0] ? lite_message() : "lite_sync_open", -err);
}

static const char *ename(int err) {
  return lite_errno_name(err < 0 ? -err : err);
}

// ---- counter ----

struct counter_arg {
  int n;
  int errors;
  int died;
};

static void *counter_thread(void *p) {
  struct counter_arg *a = p;
  struct lite_ctx *ctx;
  lite_handle_t h;
  uint64_t v;
  int i, err;

  open_lock(&ctx, &h);
  for (i = 0; i < a->n; i++) {
    err = lite_lock(ctx, h, 60000);
    if (err == -EOWNERDEAD)
      a->died++;
    else if (err) {
      fprintf(stderr, "lock: %s\n", ename(err));
      a->errors++;
      continue;
    }
    if (lite_read(ctx, h, 0, &v, sizeof(v)) != 0) a->errors++;
    v++;
    if (lite_write(ctx, h, 0, &v, sizeof(v)) != 0) a->errors++;
    err = lite_unlock(ctx, h);
    if (err) {
      fprintf(stderr, "unlock: %s\n", ename(err));
      a->errors++;
    }
  }
  lite_close(ctx);
  return NULL;
}

static void counter(int threads, int n) {
  struct counter_arg args[64] = {0};
  pthread_t tids[64];
  struct lite_ctx *ctx;
  lite_handle_t h;
  uint64_t start, v = 0;
  int i, errors = 0, died = 0;

  if (threads < 1 || threads > 64 || n < 1)
    die("counter: threads 1..64, n >= 1", EINVAL);
  start = mono_ns();
  for (i = 0; i < threads; i++) {
    args[i].n = n;
    pthread_create(&tids[i], NULL, counter_thread, &args[i]);
  }
  for (i = 0; i < threads; i++) {
    pthread_join(tids[i], NULL);
    errors += args[i].errors;
    died += args[i].died;
  }
  printf("sections %d in %llu ms\n", threads * n,
         (unsigned long long)((mono_ns() - start) / 1000000));
  open_lock(&ctx, &h);
  lite_read(ctx, h, 0, &v, sizeof(v));
  lite_close(ctx);
  printf("word %llu\n", (unsigned long long)v);
  check(errors == 0, "%d x %d critical sections without an error (%d)", threads,
        n, errors);
  check(died == 0, "no owner-died indication without a death (%d)", died);
}

static void value_is(uint64_t want) {
  struct lite_ctx *ctx;
  lite_handle_t h;
  uint64_t v = 0;
  int err;

  open_lock(&ctx, &h);
  err = lite_read(ctx, h, 0, &v, sizeof(v));
  check(err == 0 && v == want,
        "the word is %llu (want %llu): no increment lost",
        (unsigned long long)v, (unsigned long long)want);
  lite_close(ctx);
}

// ---- holder death ----

static void hold(const char *ready) {
  struct lite_ctx *ctx;
  lite_handle_t h;
  int err, fd;

  open_lock(&ctx, &h);
  err = lite_lock(ctx, h, 60000);
  if (err && err != -EOWNERDEAD) die("lock", -err);
  fd = open(ready, O_CREAT | O_WRONLY, 0644);
  if (fd < 0) die("ready file", errno);
  close(fd);
  for (;;) pause();
}

static void acquire(uint32_t timeout_ms, const char *want) {
  struct lite_ctx *ctx;
  lite_handle_t h;
  struct timespec now;
  int err;

  open_lock(&ctx, &h);
  err = lite_lock(ctx, h, timeout_ms);
  clock_gettime(CLOCK_REALTIME, &now);
  printf("acquired at %lld (%s)\n",
         (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000, ename(err));
  if (!strcmp(want, "died"))
    check(err == -EOWNERDEAD,
          "the lock came with the owner-died indication (%s)", ename(err));
  else
    check(err == 0, "the lock came, no owner died (%s)", ename(err));
  if (err == 0 || err == -EOWNERDEAD) lite_unlock(ctx, h);
  lite_close(ctx);
}

struct killer_arg {
  pid_t child;
  uint64_t killed_ns;
};

static void *killer(void *p) {
  struct killer_arg *k = p;

  sleep(1);  // the waiter's request is at the home by then
  k->killed_ns = mono_ns();
  kill(k->child, SIGKILL);
  return NULL;
}

static void killed_holder(void) {
  struct killer_arg k = {0};
  struct lite_ctx *ctx;
  lite_handle_t h;
  pthread_t tid;
  int fds[2], err;
  char c = 0;

  if (pipe(fds)) die("pipe", errno);
  k.child = fork();
  if (k.child < 0) die("fork", errno);
  if (k.child == 0) {
    open_lock(&ctx, &h);
    err = lite_lock(ctx, h, 30000);
    if (err && err != -EOWNERDEAD) _exit(100);
    if (write(fds[1], &c, 1) != 1) _exit(100);
    for (;;) pause();
  }
  close(fds[1]);
  if (read(fds[0], &c, 1) != 1) die("the holder did not take the lock", EIO);
  open_lock(&ctx, &h);
  pthread_create(&tid, NULL, killer, &k);
  err = lite_lock(ctx, h, 30000);
  uint64_t acquired_ns = mono_ns();
  pthread_join(tid, NULL);
  waitpid(k.child, NULL, 0);
  printf("acquired %.1f ms after the holder's kill (%s)\n",
         (double)(acquired_ns - k.killed_ns) / 1e6, ename(err));
  check(err == -EOWNERDEAD, "the lock came with the owner-died indication (%s)",
        ename(err));
  check(acquired_ns > k.killed_ns && acquired_ns - k.killed_ns <= 1000000000u,
        "... within 1 s of the holder's death");
  if (err == 0 || err == -EOWNERDEAD) lite_unlock(ctx, h);
  lite_close(ctx);
}

// ---- barriers ----

struct barrier_arg {
  uint32_t count;
  int rounds;
  int errors;
  int early;
};

static void *barrier_thread(void *p) {
  struct barrier_arg *a = p;
  struct lite_ctx *ctx;
  lite_handle_t h;
  uint64_t v;
  int r, err;

  open_lock(&ctx, &h);
  for (r = 0; r < a->rounds; r++) {
    if (lite_faa(ctx, h, 0, 1, NULL)) a->errors++;
    err = lite_barrier(ctx, h, a->count, 60000);
    if (err) {
      fprintf(stderr, "barrier round %d: %s\n", r, ename(err));
      a->errors++;
      break;
    }
    if (lite_read(ctx, h, 0, &v, sizeof(v)) || v < (uint64_t)a->count * (r + 1))
      a->early++;
  }
  lite_close(ctx);
  return NULL;
}

static void barrier(uint32_t count, int threads, int rounds) {
  struct barrier_arg args[64] = {0};
  pthread_t tids[64];
  uint64_t start;
  int i, errors = 0, early = 0;

  if (threads < 1 || threads > 64 || rounds < 1)
    die("barrier: threads 1..64", EINVAL);
  start = mono_ns();
  for (i = 0; i < threads; i++) {
    args[i].count = count;
    args[i].rounds = rounds;
    pthread_create(&tids[i], NULL, barrier_thread, &args[i]);
  }
  for (i = 0; i < threads; i++) {
    pthread_join(tids[i], NULL);
    errors += args[i].errors;
    early += args[i].early;
  }
  printf("rounds %d in %llu ms\n", rounds,
         (unsigned long long)((mono_ns() - start) / 1000000));
  check(errors == 0,
        "%d threads x %d rounds of a %u-barrier passed (%d errors)", threads,
        rounds, count, errors);
  check(early == 0,
        "nobody passed a round before all %u had arrived (%d early)", count,
        early);
}

static int errno_of(const char *name) {
  if (!strcmp(name, "ECONNABORTED")) return ECONNABORTED;
  if (!strcmp(name, "EHOSTDOWN")) return EHOSTDOWN;
  die("barrier-then: ECONNABORTED, EHOSTDOWN or hang", EINVAL);
  return 0;
}

static void barrier_then(uint32_t count, const char *then, const char *ready) {
  struct lite_ctx *ctx;
  lite_handle_t h;
  int err, fd;

  open_lock(&ctx, &h);
  err = lite_barrier(ctx, h, count, 60000);
  check(err == 0, "round 1 of the %u-barrier passed (%s)", count, ename(err));
  if (ready) {
    fd = open(ready, O_CREAT | O_WRONLY, 0644);
    if (fd < 0) die("ready file", errno);
    close(fd);
  }
  if (!strcmp(then, "hang"))
    for (;;) pause();
  err = lite_barrier(ctx, h, count, 60000);
  check(err == -errno_of(then), "round 2 failed with %s (%s)", then,
        ename(err));
  lite_close(ctx);
}

// ---- rules ----

static int sync_ioctl(struct lite_ctx *ctx, struct lite_sync *s) {
  return ioctl(lite_fd(ctx), LITE_IOC_SYNC, s) ? errno : 0;
}

struct relock_arg {
  struct lite_ctx *ctx;
  lite_handle_t h;
  uint32_t count;
  int err;
};

static void *barrier_waiter(void *p) {
  struct relock_arg *a = p;
  a->err = lite_barrier(a->ctx, a->h, a->count, 3000);
  return NULL;
}

static void errors(const char *rpc_name) {
  struct lite_ctx *ctx, *other;
  lite_handle_t h, h2, ro;
  struct lite_sync s;
  struct relock_arg wa;
  pthread_t tid;
  int err;

  open_lock(&ctx, &h);
  open_lock(&other, &h2);
  s = (struct lite_sync){.handle = h, .op = 9};
  check(sync_ioctl(ctx, &s) == EINVAL, "an unknown op: EINVAL");
  s = (struct lite_sync){.handle = h, .op = LITE_SYNC_LOCK, .flags = 1};
  check(sync_ioctl(ctx, &s) == EINVAL, "flags: EINVAL");
  s = (struct lite_sync){.handle = h, .op = LITE_SYNC_LOCK, .reserved = 1};
  check(sync_ioctl(ctx, &s) == EINVAL, "reserved: EINVAL");
  s = (struct lite_sync){.handle = h, .op = LITE_SYNC_LOCK, .count = 2};
  check(sync_ioctl(ctx, &s) == EINVAL, "a lock with a count: EINVAL");
  s = (struct lite_sync){.handle = h, .op = LITE_SYNC_BARRIER};
  check(sync_ioctl(ctx, &s) == EINVAL, "a barrier of 0: EINVAL");
  s = (struct lite_sync){
      .handle = h, .op = LITE_SYNC_BARRIER, .count = LITE_SYNC_COUNT_MAX + 1};
  check(sync_ioctl(ctx, &s) == EINVAL,
        "a barrier over LITE_SYNC_COUNT_MAX: EINVAL");
  s = (struct lite_sync){.handle = h,
                         .op = LITE_SYNC_LOCK,
                         .timeout_ms = LITE_RPC_TIMEOUT_MAX_MS + 1};
  check(sync_ioctl(ctx, &s) == EINVAL,
        "a timeout over LITE_RPC_TIMEOUT_MAX_MS: EINVAL");
  s = (struct lite_sync){.handle = h, .op = LITE_SYNC_LOCK, .result = 1};
  check(sync_ioctl(ctx, &s) == EINVAL, "result set on the way in: EINVAL");
  s = (struct lite_sync){.handle = h ^ 0x5a5a0000u, .op = LITE_SYNC_LOCK};
  check(sync_ioctl(ctx, &s) == EBADF, "an invented handle: EBADF");
  err = lite_map(ctx, lock_name, LITE_ACCESS_READ, &ro, NULL);
  check(err == 0, "mapped read-only (%s)", ename(err));
  check(lite_lock(ctx, ro, 1000) == -EACCES,
        "a lock through a read-only map: EACCES");
  check(lite_barrier(ctx, ro, 2, 1000) == -EACCES,
        "a barrier through a read-only map: EACCES");
  check(lite_unlock(ctx, h) == -EPERM, "unlock of a lock nobody holds: EPERM");

  err = lite_lock(ctx, h, 5000);
  check(err == 0, "locked (%s)", ename(err));
  check(lite_unlock(other, h2) == -EPERM,
        "unlock by another context: EPERM, still held");
  check(lite_trylock(other, h2) == -EBUSY,
        "try-lock by another context: EBUSY");
  check(lite_lock(other, h2, 300) == -ETIMEDOUT,
        "lock by another context: ETIMEDOUT after 300 ms");
  check(lite_lock(ctx, h, 300) == -ETIMEDOUT,
        "a second lock through the same context waits too");
  check(lite_unlock(ctx, h) == 0, "unlocked by its holder");
  err = lite_trylock(other, h2);
  check(err == 0, "try-lock of a free lock: taken (%s)", ename(err));
  check(lite_unlock(other, h2) == 0, "and unlocked");

  wa = (struct relock_arg){.ctx = other, .h = h2, .count = 2};
  pthread_create(&tid, NULL, barrier_waiter, &wa);
  usleep(300000);
  check(lite_barrier(ctx, h, 3, 1000) == -EINVAL,
        "a barrier arrival with another count: EINVAL");
  pthread_join(tid, NULL);
  check(wa.err == -ETIMEDOUT, "the lone arrival timed out (%s)", ename(wa.err));
  check(lite_barrier(ctx, h, 1, 1000) == 0, "a barrier of 1 passes at once");

  {
    struct lite_service_opts opts = {.mode = 0700};
    struct lite_service_info info;
    lite_service_t svc;

    err = lite_rpc_register(ctx, rpc_name, &opts, &svc, &info);
    check(err == -EPERM, "an RPC service named %s: EPERM (%s: %s)", rpc_name,
          ename(err), lite_message());
    if (!err) lite_rpc_unregister(ctx, svc, &info);
  }
  lite_close(other);
  lite_close(ctx);
}

struct stale_arg {
  struct lite_ctx *ctx;
  lite_handle_t h;
  int err;
};

static void *stale_waiter(void *p) {
  struct stale_arg *a = p;
  a->err = lite_lock(a->ctx, a->h, 20000);
  return NULL;
}

static void stale(void) {
  struct lite_ctx *ctx, *other;
  lite_handle_t h;
  struct stale_arg a;
  pthread_t tid;
  int err;

  open_lock(&ctx, &h);
  err = lite_lock(ctx, h, 5000);
  check(err == 0, "locked (%s)", ename(err));
  open_lock(&other, &a.h);
  a.ctx = other;
  pthread_create(&tid, NULL, stale_waiter, &a);
  usleep(500000);
  err = lite_free(ctx, lock_name);
  check(err == 0, "freed the lock's LMR (%s)", ename(err));
  pthread_join(tid, NULL);
  check(a.err == -ESTALE, "its waiter: ESTALE (%s)", ename(a.err));
  lite_close(other);
  lite_close(ctx);
}

// ---- review H2 and M3: the attacks ----

static void hold_until(const char *ready, const char *release) {
  struct lite_ctx *ctx;
  lite_handle_t h;
  int err, fd;

  open_lock(&ctx, &h);
  err = lite_lock(ctx, h, 60000);
  if (err) die("lock", -err);
  fd = open(ready, O_CREAT | O_WRONLY, 0644);
  if (fd < 0) die("ready file", errno);
  close(fd);
  while (access(release, F_OK)) usleep(100000);
  err = lite_unlock(ctx, h);
  check(err == 0, "the holder unlocked after its release file (%s)",
        ename(err));
  lite_close(ctx);
}

struct waiter_arg {
  struct lite_ctx *ctx;
  lite_handle_t h;
  uint32_t timeout_ms;
  int err;
  uint64_t ns;
};

static void *waiter_thread(void *p) {
  struct waiter_arg *a = p;
  uint64_t t0 = mono_ns();

  a->err = lite_lock(a->ctx, a->h, a->timeout_ms);
  a->ns = mono_ns() - t0;
  if (!a->err || a->err == -EOWNERDEAD) lite_unlock(a->ctx, a->h);
  return NULL;
}

static void waiters(int n, uint32_t timeout_ms, int want_waited,
                    const char *ready) {
  struct waiter_arg *a = calloc((size_t)n, sizeof(*a));
  pthread_t *tid = calloc((size_t)n, sizeof(*tid));
  int i, fd, waited = 0, quota = 0, other = 0, slow_quota = 0;

  if (!a || !tid || n < 1) die("waiters: N >= 1", EINVAL);
  for (i = 0; i < n; i++) {
    open_lock(&a[i].ctx, &a[i].h);
    a[i].timeout_ms = timeout_ms;
  }
  for (i = 0; i < n; i++) pthread_create(&tid[i], NULL, waiter_thread, &a[i]);
  usleep(500000);  // every LOCK asked (or refused) by then
  fd = open(ready, O_CREAT | O_WRONLY, 0644);
  if (fd < 0) die("ready file", errno);
  close(fd);
  for (i = 0; i < n; i++) {
    pthread_join(tid[i], NULL);
    if (a[i].err == -ETIMEDOUT)
      waited++;
    else if (a[i].err == -EDQUOT)
      quota++, slow_quota += a[i].ns > 1000000000u;
    else
      other++;
    lite_close(a[i].ctx);
  }
  printf(
      "%d waiters: %d waited %u ms (ETIMEDOUT), %d refused (EDQUOT), %d "
      "other\n",
      n, waited, timeout_ms, quota, other);
  check(waited == want_waited, "%d waited their timeout (%d)", want_waited,
        waited);
  check(quota == n - want_waited && !other, "the other %d got EDQUOT (%d)",
        n - want_waited, quota);
  check(!slow_quota, "... at once, not after a wait (%d took over 1 s)",
        slow_quota);
  free(a);
  free(tid);
}

// The home's wire format (kmod/sync/lite_sync_rules.h), as a forger writes it.
struct forged_req {
  uint16_t version, op;
  uint32_t count;
  uint64_t lmr_id, token, file_id;
};

static void forge(const char *rpc_name, uint64_t lmr_id) {
  struct lite_ctx *ctx;
  lite_service_t svc;
  int err, k, op, answered = 0, refused = 0, sent = 0;

  err = lite_open(NULL, &ctx);
  if (err) die("lite_open", -err);
  err = lite_rpc_open(ctx, rpc_name, &svc, NULL);
  check(err == -EPERM, "an application opens the kernel's %s: EPERM (%s)",
        rpc_name, ename(err));
  if (err) {
    lite_close(ctx);
    return;
  }
  // Opened (lite.ko without the refusal): what the home makes of forgeries.
  for (k = 1; k <= 512; k++) {
    for (op = 3; op <= 6; op++) {  // UNLOCK, CANCEL, DIED
      struct forged_req r = {.version = 1,
                             .op = (uint16_t)op,
                             .lmr_id = op == 6 ? 0 : lmr_id,
                             .token = op == 6 ? 0 : (uint64_t)k,
                             .file_id = (uint64_t)k};
      uint32_t reply[2] = {0, 0};
      size_t len = 0;

      if (op == 4) continue;
      err = lite_rpc_call(ctx, svc, &r, sizeof(r), reply, sizeof(reply), &len,
                          2000);
      sent++;
      if (!err && len == sizeof(reply)) reply[0] ? refused++ : answered++;
    }
  }
  printf(
      "forged %d frames through %s: %d accepted, %d refused, the rest "
      "unanswered\n",
      sent, rpc_name, answered, refused);
  lite_rpc_close(ctx, svc);
  lite_close(ctx);
}

// ---- cost ----

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static double cpu_us(void) {
  struct rusage ru;
  getrusage(RUSAGE_THREAD, &ru);
  return ru.ru_utime.tv_sec * 1e6 + ru.ru_utime.tv_usec +
         ru.ru_stime.tv_sec * 1e6 + ru.ru_stime.tv_usec;
}

static void bench(int n, int rounds) {
  uint64_t *lat = calloc((size_t)n, sizeof(*lat));
  struct lite_ctx *ctx;
  lite_handle_t h;
  int r, i, err = 0;

  if (!lat || n < 1 || rounds < 1) die("bench: N and ROUNDS >= 1", EINVAL);
  open_lock(&ctx, &h);
  for (r = 1; r <= rounds; r++) {
    uint64_t p50[2], p99[2];
    double cpu[2];
    int k;

    for (k = 0; k < 2; k++) {
      double c0 = cpu_us();
      for (i = 0; i < n && !err; i++) {
        uint64_t t0 = mono_ns();
        if (k == 0) {
          err = lite_lock(ctx, h, 5000);
          if (!err) err = lite_unlock(ctx, h);
        } else {
          err = lite_faa(ctx, h, 8, 1, NULL);
        }
        lat[i] = mono_ns() - t0;
      }
      cpu[k] = (cpu_us() - c0) / n;
      qsort(lat, (size_t)n, sizeof(*lat), cmp_u64);
      p50[k] = lat[n / 2];
      p99[k] = lat[(size_t)n * 99 / 100];
    }
    printf(
        "round %d: lock+unlock p50 %.1f us p99 %.1f us cpu %.1f us | faa p50 "
        "%.1f us "
        "p99 %.1f us cpu %.1f us | ratio p50 %.2f\n",
        r, p50[0] / 1e3, p99[0] / 1e3, cpu[0], p50[1] / 1e3, p99[1] / 1e3,
        cpu[1], (double)p50[0] / (double)p50[1]);
  }
  check(err == 0, "every lock, unlock and fetch-and-add succeeded (%s)",
        ename(err));
  lite_close(ctx);
  free(lat);
}

int main(int argc, char **argv) {
  if (argc < 3)
    die("usage: see the comment at the top of tests/vm/sync_probe.c", EINVAL);
  lock_name = argv[2];
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (!strcmp(argv[1], "counter") && argc == 5)
    counter(atoi(argv[3]), atoi(argv[4]));
  else if (!strcmp(argv[1], "value") && argc == 4)
    value_is(strtoull(argv[3], NULL, 0));
  else if (!strcmp(argv[1], "hold") && argc == 4)
    hold(argv[3]);
  else if (!strcmp(argv[1], "acquire") && argc == 5)
    acquire((uint32_t)atoi(argv[3]), argv[4]);
  else if (!strcmp(argv[1], "killed-holder") && argc == 3)
    killed_holder();
  else if (!strcmp(argv[1], "barrier") && argc == 6)
    barrier((uint32_t)atoi(argv[3]), atoi(argv[4]), atoi(argv[5]));
  else if (!strcmp(argv[1], "barrier-then") && (argc == 5 || argc == 6))
    barrier_then((uint32_t)atoi(argv[3]), argv[4], argc == 6 ? argv[5] : NULL);
  else if (!strcmp(argv[1], "errors") && argc == 4)
    errors(argv[3]);
  else if (!strcmp(argv[1], "stale") && argc == 3)
    stale();
  else if (!strcmp(argv[1], "hold-until") && argc == 5)
    hold_until(argv[3], argv[4]);
  else if (!strcmp(argv[1], "waiters") && argc == 7)
    waiters(atoi(argv[3]), (uint32_t)atoi(argv[4]), atoi(argv[5]), argv[6]);
  else if (!strcmp(argv[1], "forge") && argc == 4)
    forge(argv[2], strtoull(argv[3], NULL, 0));
  else if (!strcmp(argv[1], "bench") && argc == 5)
    bench(atoi(argv[3]), atoi(argv[4]));
  else
    die("usage: see the comment at the top of tests/vm/sync_probe.c", EINVAL);
  return failures > 99 ? 99 : failures;
}
