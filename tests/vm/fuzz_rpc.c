// fuzz_rpc: the RPC ioctls' part of fuzz_ioctl (fuzz_ioctl.c tells the
// whole story). Each process registers a service at set-up, maps its rings
// and opens it, and a server thread answers what arrives (in place, copied,
// released), now and then with a wrong id. The workers then call and send
// to it with live, foreign and invented handles, lengths past max_request,
// and bad request and reply buffers; take and answer requests themselves
// with random ids and flags; register and open with random names, modes,
// sizes and flags (closing what they made); close invented handles; make
// asynchronous calls and collect them (and wait for invented, repeated
// and too many tokens); and map the device at random offsets. Every call is
// predicted like the others: what the uapi says must fail fails, with a
// documented errno. At set-up, two fixed cases of asynchronous calls (a
// token that cannot be written back, and submits raced by WAITs) and a
// split mapping of the rings.
#define _GNU_SOURCE
#include "tests/vm/fuzz_ioctl.h"

#define RPC_MAX 512  // the service's max_request and max_reply
#define RPC_DEPTH 8

static char svc_name[LITE_NAME_BUF];
static uint64_t svc_handle, open_handle;
static struct lite_rpc_register reg;
static char *rings;
static _Atomic int serving = 1;
static pthread_t server;
static struct busy server_busy;

static void die_rpc(const char *what, int err, const char *msg) {
  printf("fuzz_ioctl: set-up %s: %s %s\n", what, strerror(err), msg ? msg : "");
  exit(100);
}

// Answers what the service takes; a share with ids nobody gave (EINVAL).
static void *server_main(void *arg) {
  struct lite_rpc_request req[LITE_RPC_RECV_MAX];
  uint64_t s = g_seed * 7 + (uint64_t)proc_idx;

  (void)arg;
  while (atomic_load(&serving)) {
    struct lite_rpc_recv r = {.service = svc_handle,
                              .requests = (uintptr_t)req,
                              .max = 1 + below(&s, LITE_RPC_RECV_MAX),
                              .timeout_ms = 50};

    if (call(&server_busy, main_fd, I_RPC_RECV, LITE_IOC_RPC_RECV, &r, NULL, 0,
             "RPC_RECV (server) max %u", r.max))
      continue;
    for (uint32_t i = 0; i < r.count; i++) {
      struct lite_rpc_reply a = {.service = svc_handle, .id = req[i].id};
      const char *why = NULL;

      if (req[i].flags & LITE_RPC_REQ_ONEWAY) {
        a.flags = LITE_RPC_REPLY_RELEASE;
      } else if (below(&s, 2)) {
        a.flags = LITE_RPC_REPLY_IN_PLACE;
        a.data = req[i].offset;
        a.len = req[i].length;
      } else {
        a.data = (uintptr_t)(rings + req[i].offset);
        a.len = req[i].length;
      }
      if (below(&s, 20) == 0) {
        a.id ^= 1ULL << (32 + below(&s, 31));
        why = "a reply to an id RECV never gave";
      }
      call(&server_busy, main_fd, I_RPC_REPLY, LITE_IOC_RPC_REPLY, &a, why, 0,
           "RPC_REPLY (server) id %#llx flags %#x len %u",
           (unsigned long long)a.id, a.flags, a.len);
      if (why) {  // answer it for real, so its caller is not left waiting
        a.id = req[i].id;
        call(&server_busy, main_fd, I_RPC_REPLY, LITE_IOC_RPC_REPLY, &a, NULL,
             0, "RPC_REPLY (server, again) id %#llx", (unsigned long long)a.id);
      }
    }
  }
  return NULL;
}

// All RPC_DEPTH credits of the open handle are there: RPC_DEPTH
// asynchronous calls with LITE_RPC_NONBLOCK are all posted at once, and
// all come back with their echo. `what` says after what.
static void rpc_credits_all_back(const char *what) {
  static char req[RPC_DEPTH][64], rep[RPC_DEPTH][64];
  struct lite_rpc_result res[RPC_DEPTH];
  struct lite_rpc_wait wt = {.results = (uintptr_t)res,
                             .count = 0,
                             .flags = LITE_RPC_WAIT_ALL,
                             .timeout_ms = 10000};
  int i, tries;

  for (i = 0; i < RPC_DEPTH; i++) {
    struct lite_rpc_call c = {.service = open_handle,
                              .request = (uintptr_t)req[i],
                              .reply = (uintptr_t)rep[i],
                              .req_len = sizeof(req[i]),
                              .reply_max = sizeof(rep[i]),
                              .timeout_ms = 10000,
                              .flags = LITE_RPC_ASYNC | LITE_RPC_NONBLOCK};

    snprintf(req[i], sizeof(req[i]), "credit %d of process %d", i, proc_idx);
    // A late reply of an abandoned call may still hold a slot a moment.
    for (tries = 0; tries < 50; tries++) {
      if (!ioctl(main_fd, LITE_IOC_RPC_CALL, &c) || errno != EAGAIN) break;
      usleep(20000);
    }
    if (tries == 50 || c.call == 0) {
      fail("%s: asynchronous call %d of %d: %s (a credit was lost)", what,
           i + 1, RPC_DEPTH, strerror(errno));
      break;
    }
    res[i] = (struct lite_rpc_result){.call = c.call};
    wt.count++;
  }
  if (!wt.count) return;
  if (ioctl(main_fd, LITE_IOC_RPC_WAIT, &wt)) {
    fail("%s: RPC_WAIT of %u calls: %s", what, wt.count, strerror(errno));
    return;
  }
  for (i = 0; i < (int)wt.count; i++)
    if (res[i].error || memcmp(req[i], rep[i], sizeof(req[i])))
      fail("%s: call %d: error %d, reply '%.40s' for '%.40s'", what, i,
           res[i].error, rep[i], req[i]);
  if (wt.done != wt.count)
    fail("%s: %u of %u calls collected", what, wt.done, wt.count);
}

// An asynchronous CALL whose struct lite_rpc_call lies on a read-only page:
// lite.ko reads it but cannot write the token back, so the call fails
// EFAULT and nothing of it may stay behind. Repeated RPC_DEPTH + 1 times
// with LITE_RPC_NONBLOCK: every one must fail EFAULT, never EAGAIN (a
// credit lost each time, as before the fix, leaves the last none), and all
// RPC_DEPTH credits are there afterwards.
static void rpc_async_token_unwritable(void) {
  static char req[64] = "token on a read-only page", rep[64];
  struct lite_rpc_call c = {.service = open_handle,
                            .request = (uintptr_t)req,
                            .reply = (uintptr_t)rep,
                            .req_len = sizeof(req),
                            .reply_max = sizeof(rep),
                            .timeout_ms = 5000,
                            .flags = LITE_RPC_ASYNC | LITE_RPC_NONBLOCK};
  char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  int i, err;

  if (page == MAP_FAILED) die_rpc("mmap of a page", errno, NULL);
  memcpy(page, &c, sizeof(c));
  if (mprotect(page, 4096, PROT_READ)) die_rpc("mprotect", errno, NULL);
  for (i = 0; i <= RPC_DEPTH; i++) {
    err = ioctl(main_fd, LITE_IOC_RPC_CALL, page) ? errno : 0;
    if (err != EFAULT)
      fail(
          "asynchronous CALL %d of %d with its struct on a read-only page: "
          "%s, not EFAULT",
          i + 1, RPC_DEPTH + 1, err ? strerror(err) : "success");
  }
  munmap(page, 4096);
  rpc_credits_all_back("after RPC_DEPTH + 1 tokens that could not be written");
}

// Submits racing a thread that waits for the tokens the submits are about
// to get (a token is the file's tag, which every handle shows, and a
// cyclic index): RPC_WAIT must not find a call before its submit is over.
// Calls have a 1 ms deadline, so a WAIT collects them at once when it can;
// whichever thread collects a call owns it, the other hears EINVAL (not a
// token of the file: not yet, or no longer) or EALREADY. Afterwards every
// credit is back, and the kernel log is clean (a call collected by both
// put its binding twice and freed a slot another call held).
static _Atomic int race_stop;
static _Atomic uint64_t race_last;
static _Atomic long race_stolen;

static void *race_waiter(void *arg) {
  uint64_t tag = open_handle >> 32;

  (void)arg;
  while (!atomic_load(&race_stop)) {
    uint32_t next = (uint32_t)atomic_load(&race_last);

    for (uint32_t k = 1; k <= 3; k++) {
      struct lite_rpc_result r = {.call = tag << 32 | (uint32_t)(next + k)};
      struct lite_rpc_wait wt = {
          .results = (uintptr_t)&r, .count = 1, .timeout_ms = 0};
      int err = ioctl(main_fd, LITE_IOC_RPC_WAIT, &wt) ? errno : 0;

      if (err && err != EINVAL)
        fail("RPC_WAIT of a guessed token %#llx: %s",
             (unsigned long long)r.call, strerror(err));
      else if (!err && wt.done == 1)
        atomic_fetch_add(&race_stolen, 1);
    }
  }
  return NULL;
}

static void rpc_async_submit_wait_race(int rounds) {
  static char req[64] = "raced", rep[64];
  pthread_t waiter;
  long ours = 0, refused = 0;

  atomic_store(&race_stop, 0);
  pthread_create(&waiter, NULL, race_waiter, NULL);
  for (int i = 0; i < rounds; i++) {
    struct lite_rpc_call c = {.service = open_handle,
                              .request = (uintptr_t)req,
                              .reply = (uintptr_t)rep,
                              .req_len = sizeof(req),
                              .reply_max = sizeof(rep),
                              .timeout_ms = 1,
                              .flags = LITE_RPC_ASYNC};
    int err = ioctl(main_fd, LITE_IOC_RPC_CALL, &c) ? errno : 0;

    if (err) {
      if (err != ETIMEDOUT && err != EAGAIN)
        fail("asynchronous CALL (racing a WAIT): %s", strerror(err));
      refused++;
      continue;
    }
    atomic_store(&race_last, c.call);
    for (;;) {
      struct lite_rpc_result r = {.call = c.call};
      struct lite_rpc_wait wt = {
          .results = (uintptr_t)&r, .count = 1, .timeout_ms = 100};

      err = ioctl(main_fd, LITE_IOC_RPC_WAIT, &wt) ? errno : 0;
      if (err == EINVAL) break;  // the other thread collected it
      if (err) {
        fail("RPC_WAIT of its own token (racing): %s", strerror(err));
        break;
      }
      if (wt.done == 1) {
        ours++;
        break;
      }
      if (r.error == -EALREADY) break;
      if (r.error != -EINPROGRESS) {
        fail("RPC_WAIT of its own token (racing): result %d", r.error);
        break;
      }
    }
  }
  atomic_store(&race_stop, 1);
  pthread_join(waiter, NULL);
  printf(
      "fuzz_ioctl: process %d: %d submits raced by a WAIT: %ld collected "
      "by the submitter, %ld by the other thread, %ld without a credit\n",
      proc_idx, rounds, ours, atomic_load(&race_stolen), refused);
  rpc_credits_all_back("after submits raced by WAITs");
}

// A split mapping of the rings still maps each page where REGISTER says
// (review L3): with the first page unmapped, the next one is ring 1, which
// no client node bound, so reading it fails (EIO through /proc/self/mem,
// SIGBUS for a plain load); it must not show ring 0's page, as a fault
// offset taken from the split part's start would.
static void rpc_split_mapping(void) {
  char *p, buf[64];
  int mem;
  ssize_t n;

  if (reg.map_bytes < 2 * 4096 || reg.ring_bytes != 4096) return;
  p = mmap(NULL, reg.map_bytes, PROT_READ, MAP_SHARED, main_fd,
           (off_t)reg.map_offset);
  if (p == MAP_FAILED) die_rpc("mmap of the rings again", errno, NULL);
  munmap(p, 4096);
  mem = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
  if (mem < 0) die_rpc("open /proc/self/mem", errno, NULL);
  n = pread(mem, buf, sizeof(buf), (off_t)(uintptr_t)(p + 4096));
  if (n >= 0)
    fail(
        "the rings' mapping without its first page: ring 1 (no client) "
        "read %zd bytes, not EIO (a page of another ring)",
        n);
  close(mem);
  munmap(p + 4096, reg.map_bytes - 4096);
}

void rpc_setup_process(void) {
  struct lite_rpc_open o = {0};

  snprintf(svc_name, sizeof(svc_name), "fz.%llu.%d.%d.rpc",
           (unsigned long long)g_seed, (int)getppid(), proc_idx);
  memcpy(reg.name, svc_name, sizeof(reg.name));
  reg.mode = 0777;
  reg.max_request = RPC_MAX;
  reg.max_reply = RPC_MAX;
  reg.depth = RPC_DEPTH;
  reg.max_clients = 4;
  if (ioctl(main_fd, LITE_IOC_RPC_REGISTER, &reg))
    die_rpc("RPC_REGISTER", errno, reg.message);
  svc_handle = reg.service;
  rings = mmap(NULL, reg.map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, main_fd,
               (off_t)reg.map_offset);
  if (rings == MAP_FAILED) die_rpc("mmap of the rings", errno, NULL);
  memcpy(o.name, svc_name, sizeof(o.name));
  if (ioctl(main_fd, LITE_IOC_RPC_OPEN, &o))
    die_rpc("RPC_OPEN", errno, o.message);
  open_handle = o.service;
  atomic_store(&server_busy.tid, 0);
  pthread_create(&server, NULL, server_main, NULL);
  rpc_async_token_unwritable();
  rpc_async_submit_wait_race(2000);
  rpc_split_mapping();
}

void rpc_teardown_process(void) {
  struct lite_rpc_close c = {.service = svc_handle};

  atomic_store(&serving, 0);
  pthread_join(server, NULL);
  munmap(rings, reg.map_bytes);
  if (ioctl(main_fd, LITE_IOC_RPC_CLOSE, &c))
    fail("RPC_CLOSE of the service at the end: %s", strerror(errno));
}

// A handle for a call: the open one, the service's own (not an OPEN
// handle), an invented one, or 0; *bad says why it must fail.
static uint64_t gen_handle(uint64_t *s, const char **bad) {
  if (clean) return open_handle;
  switch (below(s, 8)) {
    case 0:
      *bad = "the service's REGISTER handle, not an OPEN one";
      return svc_handle;
    case 1:
      *bad = "an invented handle";
      return ((uint64_t)own_tag << 32) |
             (LITE_HANDLES_MAX + 4000 + below(s, 1000));
    case 2:
      *bad = "handle 0";
      return 0;
    default:
      return open_handle;
  }
}

static uint32_t gen_rpc_len(uint64_t *s) {
  static const uint32_t kEdge[] = {
      0,         1,           63,   64,      511,
      RPC_MAX,   RPC_MAX + 1, 4096, 1 << 20, (1 << 20) + 1,
      UINT32_MAX};

  if (clean) return below(s, RPC_MAX + 1);
  return below(s, 2) ? kEdge[below(s, sizeof(kEdge) / sizeof(kEdge[0]))]
                     : (uint32_t)below(s, RPC_MAX + 1);
}

static int is_call_errno(int e) {
  return e == 0 || e == ETIMEDOUT || e == ECONNREFUSED || e == EHOSTDOWN ||
         e == EOVERFLOW || e == EFAULT || e == EIO;
}

// Collects asynchronous call `token` (an echo of len bytes into a buffer
// of reply_max): waits that must fail first (the token twice, an invented
// one, no results, too many), then waits until it is collected, with a
// documented result. A call ends by its deadline, so this ends too.
static void collect(struct worker *w, uint64_t token, uint32_t len,
                    uint32_t reply_max, int writable) {
  uint64_t *s = &w->s;
  struct lite_rpc_result res[LITE_RPC_WAIT_MAX + 1] = {{.call = token}};
  struct lite_rpc_wait wt = {.results = (uintptr_t)res, .count = 1};
  int rounds;

  switch (below(s, 5)) {
    case 0:
      res[1].call = token;
      wt.count = 2;
      call(w->b, main_fd, I_RPC_WAIT, LITE_IOC_RPC_WAIT, &wt, "a token twice",
           0, "RPC_WAIT token %#llx twice", (unsigned long long)token);
      break;
    case 1:
      res[1].call = token ^ ((1 + below(s, 255)) << 32);  // not our tag
      wt.count = 2;
      call(w->b, main_fd, I_RPC_WAIT, LITE_IOC_RPC_WAIT, &wt,
           "a token this file never gave", 0, "RPC_WAIT token %#llx and %#llx",
           (unsigned long long)token, (unsigned long long)res[1].call);
      break;
    case 2:
      wt.count = below(s, 2) ? 0 : LITE_RPC_WAIT_MAX + 1;
      call(w->b, main_fd, I_RPC_WAIT, LITE_IOC_RPC_WAIT, &wt,
           "count 0 or over LITE_RPC_WAIT_MAX", 0, "RPC_WAIT count %u",
           wt.count);
      break;
    case 3:
      wt.flags = 1u << below(s, 32);
      if (wt.flags != LITE_RPC_WAIT_ALL)
        call(w->b, main_fd, I_RPC_WAIT, LITE_IOC_RPC_WAIT, &wt,
             "an unknown flag", 0, "RPC_WAIT flags %#x", wt.flags);
      break;
  }
  for (rounds = 0; rounds < 100; rounds++) {
    memset(&wt, 0, sizeof(wt));
    wt.results = (uintptr_t)res;
    wt.count = 1;
    wt.flags = below(s, 2) ? LITE_RPC_WAIT_ALL : 0;
    wt.timeout_ms = below(s, 3) ? (uint32_t)below(s, 300) : UINT32_MAX;
    res[0] = (struct lite_rpc_result){.call = token};
    if (call(w->b, main_fd, I_RPC_WAIT, LITE_IOC_RPC_WAIT, &wt, NULL, 0,
             "RPC_WAIT token %#llx timeout %u flags %#x",
             (unsigned long long)token, wt.timeout_ms, wt.flags))
      return;
    if (wt.done == 1) break;
    if (res[0].error != -EINPROGRESS)
      fail("RPC_WAIT: nothing collected, but the call's error is %d",
           res[0].error);
  }
  if (wt.done != 1) {
    fail("RPC_WAIT: call %#llx not collected after 100 waits",
         (unsigned long long)token);
    return;
  }
  if (!is_call_errno(-res[0].error))
    fail("RPC_WAIT: call %#llx ended with %s, not a CALL errno",
         (unsigned long long)token, strerror(-res[0].error));
  else if (res[0].error == 0 && (reply_max < len || (len && !writable)))
    fail("RPC_WAIT: call %#llx collected a %u-byte reply into %s",
         (unsigned long long)token, len,
         reply_max < len ? "a smaller buffer" : "an unwritable buffer");
  // Collected once: the token is gone.
  wt.count = 1;
  wt.flags = 0;
  wt.timeout_ms = 0;
  call(w->b, main_fd, I_RPC_WAIT, LITE_IOC_RPC_WAIT, &wt,
       "a token already collected", 0, "RPC_WAIT token %#llx again",
       (unsigned long long)token);
}

static void do_call(struct worker *w, int send) {
  uint64_t *s = &w->s;
  const char *why = NULL, *aw = NULL;
  uint32_t len = gen_rpc_len(s), reply_max = gen_rpc_len(s);
  // The reply buffer for the bytes lite.ko writes: an echo is len long.
  struct uptr req = gen_ptr(s, len), rep = gen_ptr(s, len);
  uint64_t handle = gen_handle(s, &why);
  uint32_t flags = 0, timeout = 50 + below(s, 1000);

  if (!send && below(s, 4) == 0) {
    // Asynchronous: the reply's buffer and size matter only at WAIT.
    flags = LITE_RPC_ASYNC | (below(s, 2) ? LITE_RPC_NONBLOCK : 0);
  } else if (!clean && below(s, 10) == 0) {
    flags = 1u << below(s, 32);
    if (flags &
        ~(send ? LITE_RPC_NONBLOCK : (LITE_RPC_NONBLOCK | LITE_RPC_ASYNC)))
      why = "an unknown flag";
  }
  if (len > RPC_MAX && !why) why = "longer than max_request";
  if (len && !req.readable && !why) why = "the request is not readable";
  if (!send && !why && !(flags & LITE_RPC_ASYNC) && reply_max < len)
    why = "the reply does not fit";
  if (!send && !why && !(flags & LITE_RPC_ASYNC) && len && !rep.writable)
    why = "the reply buffer is not writable";
  if (send) {
    struct lite_rpc_send m = {.service = handle,
                              .msg = req.p,
                              .len = len,
                              .timeout_ms = timeout,
                              .flags = flags};
    void *arg = place_arg(s, &w->ab, &m, sizeof(m), 0, &aw);

    call(w->b, main_fd, I_RPC_SEND, LITE_IOC_RPC_SEND, arg, why ? why : aw, 0,
         "RPC_SEND handle %#llx len %u msg %#llx (%s) flags %#x",
         (unsigned long long)handle, len, (unsigned long long)req.p, req.kind,
         flags);
    return;
  }
  struct lite_rpc_call c = {.service = handle,
                            .request = req.p,
                            .reply = rep.p,
                            .req_len = len,
                            .reply_max = reply_max,
                            .timeout_ms = timeout,
                            .flags = flags};
  void *arg = place_arg(s, &w->ab, &c, sizeof(c), 1, &aw);

  if (call(w->b, main_fd, I_RPC_CALL, LITE_IOC_RPC_CALL, arg, why ? why : aw, 0,
           "RPC_CALL handle %#llx len %u req %#llx (%s) reply_max %u reply "
           "%#llx (%s) flags %#x",
           (unsigned long long)handle, len, (unsigned long long)req.p, req.kind,
           reply_max, (unsigned long long)rep.p, rep.kind, flags) ||
      !(flags & LITE_RPC_ASYNC))
    return;
  memcpy(&c, arg, sizeof(c));
  collect(w, c.call, len, reply_max, rep.writable);
}

// A worker takes requests itself (competing with the server thread) and
// answers them with random flags and offsets.
static void do_recv_reply(struct worker *w) {
  uint64_t *s = &w->s;
  struct lite_rpc_request req[4];
  const char *why = NULL, *aw = NULL;
  uint32_t max = clean ? 1 + below(s, 4) : below(s, 70);
  struct lite_rpc_recv r = {.service = svc_handle,
                            .requests = (uintptr_t)req,
                            .max = max,
                            .timeout_ms = below(s, 30)};

  if (max == 0 || max > LITE_RPC_RECV_MAX) why = "max out of 1..64";
  if (max > 4) {  // the rest of the array: a user pointer of any kind
    struct uptr u = gen_ptr(s, (uint64_t)max * sizeof(req[0]));

    r.requests = u.p;
  }
  void *arg = place_arg(s, &w->ab, &r, sizeof(r), 1, &aw);
  if (call(w->b, main_fd, I_RPC_RECV, LITE_IOC_RPC_RECV, arg, why ? why : aw, 0,
           "RPC_RECV max %u requests %#llx", max,
           (unsigned long long)r.requests) ||
      max > 4 || arg != &r)
    return;
  for (uint32_t i = 0; i < r.count; i++) {
    struct lite_rpc_reply a = {.service = svc_handle, .id = req[i].id};
    int oneway = req[i].flags & LITE_RPC_REQ_ONEWAY;
    const char *bad = NULL;

    switch (clean ? 0 : below(s, 7)) {
      case 1:  // the wrong kind of answer
        a.flags = oneway ? 0 : LITE_RPC_REPLY_RELEASE;
        bad = oneway ? "a message answered without RELEASE"
                     : "a call answered with RELEASE";
        break;
      case 2:  // an offset anywhere: refused unless it is in the slot
        a.flags =
            LITE_RPC_REPLY_IN_PLACE | (oneway ? LITE_RPC_REPLY_RELEASE : 0);
        a.data =
            below(s, 2) ? below(s, 1ULL << 40) : req[i].offset + below(s, 64);
        a.len = oneway ? 0 : req[i].length;
        break;
      case 4:  // an offset whose sum with len wraps around 2^64
        a.flags =
            LITE_RPC_REPLY_IN_PLACE | (oneway ? LITE_RPC_REPLY_RELEASE : 0);
        a.data = UINT64_MAX - below(s, 64);
        a.len = oneway ? 0 : 64 + (uint32_t)below(s, 64);
        bad = "an in-place offset that wraps around";
        break;
      case 3:
        a.len = RPC_MAX + 1 + below(s, 100);
        a.data = (uintptr_t)(rings + req[i].offset);
        a.flags = oneway ? LITE_RPC_REPLY_RELEASE : 0;
        bad = oneway ? "a release with a length" : "longer than max_reply";
        break;
      default:
        a.flags = oneway ? LITE_RPC_REPLY_RELEASE : 0;
        a.len = oneway ? 0 : req[i].length;
        a.data = oneway ? 0 : (uintptr_t)(rings + req[i].offset);
    }
    // An in-place reply inside the slot by chance is a good one; one whose
    // offset wraps never is.
    int err = call(
        w->b, main_fd, I_RPC_REPLY, LITE_IOC_RPC_REPLY, &a,
        (a.flags & LITE_RPC_REPLY_IN_PLACE) && !oneway && a.data < (1ULL << 41)
            ? NULL
            : bad,
        0, "RPC_REPLY id %#llx flags %#x data %#llx len %u",
        (unsigned long long)a.id, a.flags, (unsigned long long)a.data, a.len);
    if (err) {  // answer it properly: its caller waits for it
      a.flags = oneway ? LITE_RPC_REPLY_RELEASE : 0;
      a.len = oneway ? 0 : req[i].length;
      a.data = oneway ? 0 : (uintptr_t)(rings + req[i].offset);
      call(w->b, main_fd, I_RPC_REPLY, LITE_IOC_RPC_REPLY, &a, NULL, 0,
           "RPC_REPLY (again) id %#llx", (unsigned long long)a.id);
    }
  }
}

static void do_register_open(struct worker *w) {
  uint64_t *s = &w->s;
  const char *why = NULL, *aw = NULL;
  // Never in a name ([A-Za-z0-9._:/-]), wherever they stand.
  static const char kBad[] = " \x01\xff\t*?";

  if (below(s, 2)) {
    struct lite_rpc_register r = {0};
    uint32_t slot;

    snprintf(r.name, sizeof(r.name), "fz.%d.%d.r%llu", proc_idx, w->idx,
             (unsigned long long)below(s, 1000));
    if (!clean && below(s, 4) == 0) {
      r.name[below(s, 8)] = kBad[below(s, sizeof(kBad) - 1)];
      why = "a bad name";
    }
    if (!clean && below(s, 5) == 0) {
      memcpy(r.name, svc_name, sizeof(r.name));
      why = "the name is taken";
    }
    r.mode =
        clean ? 0711 : (uint32_t)below(s, 01000) | (below(s, 8) ? 0 : 01000);
    r.max_request = gen_rpc_len(s);
    r.max_reply = gen_rpc_len(s);
    r.depth = clean ? 4 : (uint32_t)below(s, 1100);
    r.max_clients = clean ? 2 : (uint32_t)below(s, 1100);
    r.flags = clean || below(s, 8) ? 0 : 1u << below(s, 32);
    slot = (r.max_request > r.max_reply ? r.max_request : r.max_reply);
    slot = slot < 64 ? 64 : (slot + 63) & ~63u;
    if (r.mode & ~0777u) why = "mode outside 0777";
    if (r.flags) why = "flags must be 0";
    if (r.max_request > LITE_RPC_MSG_MAX || r.max_reply > LITE_RPC_MSG_MAX)
      why = "a size over LITE_RPC_MSG_MAX";
    if (r.depth > LITE_RPC_DEPTH_MAX || r.max_clients > LITE_RPC_CLIENTS_MAX)
      why = "depth or max_clients over its maximum";
    else if ((uint64_t)(r.depth ? r.depth : 16) * slot > LITE_RPC_RING_MAX)
      why = "a ring over LITE_RPC_RING_MAX";
    // Small enough for the quota: a share of the tries are real services.
    if (!why && (uint64_t)(r.max_clients ? r.max_clients : 16) *
                        (r.depth ? r.depth : 16) * slot >
                    (16u << 20))
      return;
    void *arg = place_arg(s, &w->ab, &r, sizeof(r), 1, &aw);
    if (!call(w->b, main_fd, I_RPC_REGISTER, LITE_IOC_RPC_REGISTER, arg,
              why ? why : aw, 0,
              "RPC_REGISTER '%.20s' mode %#o req %u rep %u depth %u "
              "clients %u flags %#x",
              r.name, r.mode, r.max_request, r.max_reply, r.depth,
              r.max_clients, r.flags)) {
      struct lite_rpc_close c = {
          .service = arg == &r ? r.service
                               : ((struct lite_rpc_register *)arg)->service};

      call(w->b, main_fd, I_RPC_CLOSE, LITE_IOC_RPC_CLOSE, &c, NULL, 0,
           "RPC_CLOSE of a service just registered");
    }
    return;
  }
  struct lite_rpc_open o = {0};

  if (below(s, 3)) {
    memcpy(o.name, svc_name, sizeof(o.name));
  } else {
    snprintf(o.name, sizeof(o.name), "fz.none.%llu",
             (unsigned long long)below(s, 100));
    why = "no such service";
  }
  if (!clean && below(s, 8) == 0) {
    o.reserved = 1;
    why = "reserved must be 0";
  }
  void *arg = place_arg(s, &w->ab, &o, sizeof(o), 1, &aw);
  if (!call(w->b, main_fd, I_RPC_OPEN, LITE_IOC_RPC_OPEN, arg, why ? why : aw,
            0, "RPC_OPEN '%.20s'", o.name) &&
      arg == &o) {
    struct lite_rpc_close c = {.service = o.service};

    call(w->b, main_fd, I_RPC_CLOSE, LITE_IOC_RPC_CLOSE, &c, NULL, 0,
         "RPC_CLOSE of a handle just opened");
  }
}

static void do_close_bogus(struct worker *w) {
  uint64_t *s = &w->s;
  struct lite_rpc_close c = {
      .service = ((uint64_t)own_tag << 32) |
                 (LITE_HANDLES_MAX + 5000 + below(s, 1000)),
      .flags = below(s, 4) == 0};

  call(w->b, main_fd, I_RPC_CLOSE, LITE_IOC_RPC_CLOSE, &c,
       "an invented handle or flags", 0, "RPC_CLOSE %#llx flags %u",
       (unsigned long long)c.service, c.flags);
}

// mmap at random offsets and lengths: refused or mapped, never a crash.
static void do_mmap(struct worker *w) {
  uint64_t *s = &w->s;
  static const uint64_t kOff[] = {
      0, 4096, 1ULL << 32, 2ULL << 32, (1ULL << 32) + 4096, 1ULL << 47};
  uint64_t off = below(s, 2) ? reg.map_offset
                             : kOff[below(s, sizeof(kOff) / sizeof(kOff[0]))];
  size_t len = below(s, 2) ? reg.map_bytes : 4096 * (1 + below(s, 4096));
  void *p = mmap(NULL, len, PROT_READ | (below(s, 2) ? PROT_WRITE : 0),
                 MAP_SHARED, main_fd, (off_t)off);

  if (p != MAP_FAILED) {
    if (off != reg.map_offset || len > reg.map_bytes)
      fail(
          "mmap of %zu bytes at offset %#llx succeeded (not this file's "
          "rings)",
          len, (unsigned long long)off);
    else
      (void)*(volatile char *)p;
    munmap(p, len);
  }
}

void do_rpc(struct worker *w) {
  switch (below(&w->s, 10)) {
    case 0:
    case 1:
    case 2:
      do_call(w, 0);
      break;
    case 3:
    case 4:
      do_call(w, 1);
      break;
    case 5:
      do_recv_reply(w);
      break;
    case 6:
    case 7:
      do_register_open(w);
      break;
    case 8:
      do_close_bogus(w);
      break;
    default:
      do_mmap(w);
  }
}
