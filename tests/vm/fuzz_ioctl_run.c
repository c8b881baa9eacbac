// fuzz_ioctl's processes: set-up, the chaos thread, the watchdog, the report
// and main (fuzz_ioctl.c says what the fuzzer does).
#define _GNU_SOURCE
#include "tests/vm/fuzz_ioctl.h"

// --- chaos: files closed, handles unmapped, LMRs freed, callers killed
// ------------

static int ctl(struct busy *b, int ioc, void *arg, const char *what) {
  return call(b, main_fd, ioc, kCmds[ioc], arg, NULL, 0, "%s (chaos)", what);
}

// A child hammers a big LMR with READs and WRITEs and is SIGKILLed mid-way:
// its operations' contexts are abandoned while the RDMA is in flight.
static void killed_child(struct busy *b, uint64_t *s) {
  pid_t pid = fork();
  int status;

  if (pid == 0) {
    int fd = open(LITE_DEVICE_PATH, O_RDWR);
    struct lite_map m = {.access = LITE_ACCESS_READ | LITE_ACCESS_WRITE};
    struct lite_rw op = {.buf = (uintptr_t)rw_area, .length = 1 << 20};

    memcpy(m.name, lmrs[NLMR - 1].name, sizeof(m.name));
    if (fd < 0 || ioctl(fd, LITE_IOC_MAP, &m)) _exit(0);
    op.handle = m.handle;
    for (unsigned i = 0;; i++) {
      op.offset = (i % 8) << 20;
      ioctl(fd, i % 2 ? LITE_IOC_WRITE : LITE_IOC_READ, &op);
    }
  }
  if (pid < 0) return;
  usleep(1000 * (5 + below(s, 150)));
  kill(pid, SIGKILL);
  snprintf(b->what, sizeof(b->what), "waitpid for a SIGKILLed child");
  atomic_store(&b->since_ms, now_ms());
  if (waitpid(pid, &status, 0) != pid ||
      !((WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) ||
        (WIFEXITED(status) && WEXITSTATUS(status) == 0)))
    fail("a child doing READ/WRITE ended with status %#x, not SIGKILL", status);
  atomic_store(&b->since_ms, 0);
}

static void chaos_round(struct busy *b, uint64_t *s, unsigned n) {
  struct lite_alloc a = {.size_bytes = 4096 * (1 + below(s, 16)), .mode = 0600};
  struct lite_map m = {.access = LITE_ACCESS_READ | LITE_ACCESS_WRITE};
  struct lite_free f = {0};
  int fd = open(LITE_DEVICE_PATH, O_RDWR);

  if (fd < 0) {
    fail("open %s: %s", LITE_DEVICE_PATH, strerror(errno));
    return;
  }
  snprintf(a.name, sizeof(a.name), "fzv.%llu.%d.%u", (unsigned long long)g_seed,
           proc_idx, n);
  snprintf(m.name, sizeof(m.name), "%s", a.name);
  snprintf(f.name, sizeof(f.name), "%s", a.name);
  int have = ctl(b, I_ALLOC, &a, "ALLOC victim") == 0;
  if (have && call(b, fd, I_MAP, LITE_IOC_MAP, &m, NULL, 1, "MAP victim") == 0)
    atomic_store(&victim.handle, m.handle);
  atomic_store(&victim.fd, fd);
  usleep(1000 * (2 + below(s, 30)));
  // In a random order while the workers use them: unmap, free, close.
  switch (below(s, 3)) {
    case 0:
      if (atomic_load(&victim.handle)) unmap(b, fd, m.handle, 1);
      usleep(1000 * below(s, 10));
      if (have) ctl(b, I_FREE, &f, "FREE victim");
      break;
    case 1:
      if (have) ctl(b, I_FREE, &f, "FREE victim");
      usleep(1000 * below(s, 10));
      break;
    default:
      break;  // closed with the handle mapped and the LMR alive
  }
  usleep(1000 * below(s, 10));
  atomic_store(&victim.fd, -1);
  close(fd);
  usleep(1000 * below(s, 5));
  atomic_store(&victim.handle, 0);
  if (have) {  // freed already, or now (ENOENT if case 0/1 did)
    f.message[0] = 0;
    call(b, main_fd, I_FREE, LITE_IOC_FREE, &f, NULL, 0, "FREE victim again");
  }
}

static void *chaos_main(void *p) {
  struct worker *w = p;

  atomic_store(&w->b->tid, (int)syscall(SYS_gettid));
  for (unsigned n = 0; !atomic_load(&sh->stop) && !atomic_load(&w->calls);
       n++) {
    if (n % 4 == 3)
      killed_child(w->b, &w->s);
    else
      chaos_round(w->b, &w->s, n);
  }
  return NULL;
}

// --- set-up, one process, the run
// ------------------------------------------------

static void die(const char *what, int err, const char *message) {
  fprintf(stderr, "fuzz_ioctl: %s: %s%s%s\n", what, strerror(err),
          message && *message ? ": " : "", message ? message : "");
  exit(100);
}

static void *map_area(size_t n, int prot) {
  void *p = mmap(NULL, n, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

  if (p == MAP_FAILED) die("mmap", errno, NULL);
  return p;
}

// rofile_area: RO_BYTES of a memfd (shmem: page cache pages, like a
// file's), MAP_SHARED and PROT_READ, then a PROT_NONE guard page.
static void map_file_area(void) {
  int fd = memfd_create("fuzz_ioctl", MFD_CLOEXEC);
  char *w;

  if (fd < 0 || ftruncate(fd, RO_BYTES)) die("memfd", errno, NULL);
  w = mmap(NULL, RO_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (w == MAP_FAILED) die("mmap tmp file", errno, NULL);
  memset(w, FILE_BYTE, RO_BYTES);
  munmap(w, RO_BYTES);
  rofile_area = map_area(RO_BYTES + 4096, PROT_NONE);
  if (mmap(rofile_area, RO_BYTES, PROT_READ, MAP_SHARED | MAP_FIXED, fd, 0) ==
      MAP_FAILED)
    die("mmap tmp file read-only", errno, NULL);
  close(fd);
}

// Maps flap_area again and again, so that the pages a call pinned are
// unmapped under it (they must stay until it unpins them).
static _Atomic int flapping = 1;
static void *flapper_main(void *p) {
  static const int kProt[] = {PROT_READ | PROT_WRITE, PROT_READ, PROT_NONE};
  uint64_t s = g_seed ^ 0xF1A9;

  (void)p;
  for (unsigned n = 0; atomic_load(&flapping); n++) {
    int prot = kProt[n % 3];

    if (mmap(flap_area, RO_BYTES, prot, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
             -1, 0) == MAP_FAILED)
      die("mmap flap area", errno, NULL);
    if (prot & PROT_WRITE) memset(flap_area, 0x3C, RO_BYTES);
    usleep(100 + below(&s, 2000));
  }
  return NULL;
}

static void setup_process(void) {
  static const uint64_t kSizes[NLMR] = {64, 4096, 1048573, 8 << 20};
  struct lite_query q = {0};
  struct lite_node_info n = {0};

  main_fd = open(LITE_DEVICE_PATH, O_RDWR);
  if (main_fd < 0) die(LITE_DEVICE_PATH, errno, NULL);
  if (ioctl(main_fd, LITE_IOC_QUERY, &q)) die("QUERY", errno, NULL);
  if (ioctl(main_fd, LITE_IOC_NODE, &n)) die("NODE", errno, NULL);
  num_devices = q.num_devices, num_members = n.num_members;
  node_id_self = n.node_id;
  rw_area = map_area(RW_BYTES + 4096, PROT_READ | PROT_WRITE);
  mprotect(rw_area + RW_BYTES, 4096, PROT_NONE);
  memset(rw_area, 0x5A, RW_BYTES);
  // The zero page, never written; a PROT_NONE guard page after it, so that
  // a range running past it is not someone else's memory.
  ro_area = map_area(RO_BYTES + 4096, PROT_READ);
  mprotect(ro_area + RO_BYTES, 4096, PROT_NONE);
  none_area = map_area(8192, PROT_NONE);
  map_file_area();
  flap_area = map_area(RO_BYTES + 4096, PROT_NONE);
  for (int i = 0; i < NLMR; i++) {
    struct lite_alloc a = {.size_bytes = kSizes[i], .mode = 0600};

    snprintf(lmrs[i].name, sizeof(lmrs[i].name), "fz.%llu.%d.%d.%d",
             (unsigned long long)g_seed, (int)getppid(), proc_idx, i);
    memcpy(a.name, lmrs[i].name, sizeof(a.name));
    lmrs[i].size = kSizes[i];
    if (ioctl(main_fd, LITE_IOC_ALLOC, &a)) die("ALLOC", errno, a.message);
  }
  for (int i = 0; i < NSLOT; i++) {
    struct lite_map m = {.access = kAccess[i % 3]};

    memcpy(m.name, lmrs[i / 3].name, sizeof(m.name));
    if (ioctl(main_fd, LITE_IOC_MAP, &m)) die("MAP", errno, m.message);
    slots[i] = m.handle;
    own_tag = m.handle >> 32;
    atomic_store(&sh->published[proc_idx][i], m.handle);
  }
  rpc_setup_process();
}

static void teardown_process(void) {
  rpc_teardown_process();
  for (int i = 0; i < NLMR; i++) {
    struct lite_free f = {0};

    memcpy(f.name, lmrs[i].name, sizeof(f.name));
    if (ioctl(main_fd, LITE_IOC_FREE, &f))
      fail("FREE %s at the end: %s %s", f.name, strerror(errno), f.message);
  }
  close(main_fd);
}

static int run_process(void) {
  pthread_t th[MAX_THREADS + 1];
  struct worker w[MAX_THREADS + 1];

  setup_process();
  for (int t = 0; t <= g_threads; t++) {
    w[t] = (struct worker){.idx = t, .b = &sh->busy[proc_idx][t]};
    w[t].s = g_seed * 1000003 + (uint64_t)proc_idx * 1009 + (uint64_t)t;
    w[t].calls = g_calls / g_procs / g_threads;
    w[t].ab.rw_page = map_area(8192, PROT_READ | PROT_WRITE);
    mprotect(w[t].ab.rw_page + 4096, 4096, PROT_NONE);
    w[t].ab.ro_page = map_area(4096, PROT_READ);
  }
  w[g_threads].calls = 0;  // the chaos thread runs until the workers end
  for (int t = 0; t <= g_threads; t++)
    pthread_create(&th[t], NULL, t < g_threads ? worker_main : chaos_main,
                   &w[t]);
  pthread_t flapper;
  pthread_create(&flapper, NULL, flapper_main, NULL);
  for (int t = 0; t < g_threads; t++) pthread_join(th[t], NULL);
  atomic_store(&flapping, 0);
  pthread_join(flapper, NULL);
  atomic_store(&w[g_threads].calls, 1);
  pthread_join(th[g_threads], NULL);
  for (int i = 0; i < NSLOT; i++)
    if (slots[i] > 1 && unmap(w[0].b, main_fd, slots[i], 0))
      fail("UNMAP of live handle %#llx at the end failed",
           (unsigned long long)slots[i]);
  teardown_process();
  return 0;
}

static pid_t pids[MAX_PROCS];  // the fuzzing processes

// The watchdog (in the first process): a call running longer than
// --hang-secs is a hang; print it with its kernel stack and give up.
static void *watchdog_main(void *p) {
  (void)p;
  while (!atomic_load(&sh->stop)) {
    uint64_t now = now_ms();

    for (int i = 0; i < g_procs; i++)
      for (int t = 0; t <= g_threads; t++) {
        struct busy *b = &sh->busy[i][t];
        uint64_t since = atomic_load(&b->since_ms);
        char path[64], stack[2048] = "";

        // A call that began after `now` was read is not late (unsigned
        // now - since would wrap and call it a hang: the FREE (chaos)
        // false alarm whose stack showed the thread asleep in user space).
        if (!since || since >= now ||
            now - since < (uint64_t)g_hang_secs * 1000)
          continue;
        snprintf(path, sizeof(path), "/proc/%d/stack", atomic_load(&b->tid));
        FILE *f = fopen(path, "r");
        if (f) {
          stack[fread(stack, 1, sizeof(stack) - 1, f)] = 0;
          fclose(f);
        }
        proc_idx = i;
        fail("hang: %s still running after %d s; kernel stack:\n%s", b->what,
             g_hang_secs, stack);
        fflush(stdout);
        // The rest stop here; a call stuck unkillably in the kernel stays.
        for (int k = 0; k < g_procs; k++)
          if (pids[k] > 0) kill(pids[k], SIGKILL);
        _exit(1);
      }
    usleep(200000);
  }
  return NULL;
}

static void report(uint64_t ms) {
  uint64_t total = 0;

  printf("fuzz_ioctl: results by ioctl and errno (0 = success):\n");
  for (int i = 0; i < NIOC; i++) {
    uint64_t n = 0;
    char line[1024];
    int len = 0;

    for (int e = 0; e < NERR; e++) {
      uint64_t c = atomic_load(&sh->counts[i][e]);

      if (!c) continue;
      n += c;
      len += snprintf(line + len, sizeof(line) - len, " %s=%llu",
                      e ? (e == NERR - 1 ? "other" : strerrorname_np(e)) : "ok",
                      (unsigned long long)c);
      if (len >= (int)sizeof(line)) break;
    }
    total += n;
    printf("  %-12s %7llu %s\n", kNames[i], (unsigned long long)n, line);
  }
  printf("fuzz_ioctl: %llu calls in %.1f s, %llu failure(s), seed %llu\n",
         (unsigned long long)total, ms / 1000.0,
         (unsigned long long)atomic_load(&sh->failures),
         (unsigned long long)g_seed);
}

static int zero_check(void) {
  size_t n = 1 << 20;
  const unsigned char *p = map_area(n, PROT_READ);

  for (size_t i = 0; i < n; i++)
    if (p[i]) {
      printf(
          "  FAIL  a fresh anonymous read-only mapping has %#x at byte %zu: "
          "the zero page was written\n",
          p[i], i);
      return 1;
    }
  printf(
      "  ok    a fresh anonymous read-only mapping (1 MiB) reads as zeros\n");
  return 0;
}

static long num_arg(int argc, char **argv, int *i) {
  char *end;
  long v;

  if (*i + 1 >= argc) goto bad;
  v = strtol(argv[++*i], &end, 0);
  if (*end || v < 0) goto bad;
  return v;
bad:
  fprintf(stderr,
          "fuzz_ioctl: %s needs a number (see the top of fuzz_ioctl.c)\n",
          argv[*i]);
  exit(2);
}

int main(int argc, char **argv) {
  pthread_t wd;
  uint64_t t0 = now_ms();

  setvbuf(stdout, NULL, _IOLBF, 0);
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--zero-check")) return zero_check();
    if (!strcmp(argv[i], "--seed"))
      g_seed = num_arg(argc, argv, &i);
    else if (!strcmp(argv[i], "--calls"))
      g_calls = num_arg(argc, argv, &i);
    else if (!strcmp(argv[i], "--threads"))
      g_threads = num_arg(argc, argv, &i);
    else if (!strcmp(argv[i], "--procs"))
      g_procs = num_arg(argc, argv, &i);
    else if (!strcmp(argv[i], "--hang-secs"))
      g_hang_secs = num_arg(argc, argv, &i);
    else {
      fprintf(stderr, "fuzz_ioctl: unknown argument '%s'\n", argv[i]);
      return 2;
    }
  }
  if (g_threads < 1 || g_threads > MAX_THREADS || g_procs < 1 ||
      g_procs > MAX_PROCS || g_hang_secs < 1) {
    fprintf(stderr, "fuzz_ioctl: threads 1..%d, procs 1..%d, hang-secs >= 1\n",
            MAX_THREADS, MAX_PROCS);
    return 2;
  }
  printf(
      "fuzz_ioctl: seed %llu, %ld calls, %d process(es) x %d thread(s) "
      "(reproduce: --seed %llu)\n",
      (unsigned long long)g_seed, g_calls, g_procs, g_threads,
      (unsigned long long)g_seed);
  sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
            MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (sh == MAP_FAILED) die("mmap", errno, NULL);
  signal(SIGPIPE, SIG_IGN);
  pthread_create(&wd, NULL, watchdog_main, NULL);
  for (int i = 0; i < g_procs; i++) {
    pids[i] = fork();
    if (pids[i] == 0) {
      proc_idx = i;
      _exit(run_process());
    }
  }
  for (int i = 0; i < g_procs; i++) {
    int status;

    if (waitpid(pids[i], &status, 0) != pids[i] || !WIFEXITED(status)) {
      proc_idx = i;
      fail("fuzzing process %d died (status %#x)", i, status);
    } else if (WEXITSTATUS(status) == 100) {
      printf("fuzz_ioctl: set-up failed in process %d\n", i);
      return 100;
    }
  }
  atomic_store(&sh->stop, 1);
  pthread_join(wd, NULL);
  report(now_ms() - t0);
  return atomic_load(&sh->failures) ? 1 : 0;
}
