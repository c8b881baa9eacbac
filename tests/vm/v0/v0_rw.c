// v0_rw: a writer/reader pair of the original LITE API, written only
// against lite-lib.h, for tests/vm/compat.sh.
//
//   v0_rw serve HOME ID PASSWORD SIZE STOP_FILE
//       allocates SIZE bytes on node HOME (alloc_remote_mem), writes a
//       pattern, registers it as ID (add_ask_mr_table, read and atomic
//       permission), prints "ready", and keeps it until STOP_FILE exists
//       (its LMRs live as long as the process)
//   v0_rw read NODE ID PASSWORD SIZE THREADS
//       asks node NODE for ID: a wrong password is refused (MR_ASK_REFUSE),
//       write permission is refused (MR_ASK_UNPERMITTED), the pattern reads
//       back, a write through a read handler fails, and THREADS threads
//       fetch_add 1000 times each on the first word
//   v0_rw value NODE ID PASSWORD EXPECTED   the first word is EXPECTED
//   v0_rw squatted NODE ID PASSWORD
//       node NODE's identifier ID was made by another user on another
//       node (review cp-2026-11-28 M5): ask_lmr refuses it (EACCES)
//   v0_rw bench NODE ID PASSWORD ITERS
//       times ITERS 8-byte rdma_read and fetch_add (p50, p99 in us, and the
//       thread's CPU time per operation), printed as lite-bench's rows are
//
// Exit status: the number of failed checks (100: at most).
#include "v0_check.h"

#define ADDS 1000

static unsigned char pattern(unsigned i) { return (unsigned char)(i * 7 + 3); }

static int handler_for_adds;

static void *adder(void *arg) {
  unsigned long long old;
  long bad = 0;

  (void)arg;
  for (int i = 0; i < ADDS; i++)
    if (userspace_liteapi_fetch_add(handler_for_adds, &old, 1) != 0) bad++;
  return (void *)bad;
}

static int serve(int home, uint64_t id, int password, int size,
                 const char *stop) {
  unsigned char *buf = userspace_liteapi_alloc_memory(size);
  int h;

  CHECK(buf != NULL, "alloc_memory(%d)", size);
  if (buf == NULL) return 100;
  for (int i = 0; i < size; i++) buf[i] = pattern(i);
  memset(buf, 0, 8); /* the first word counts the adds */
  h = userspace_liteapi_alloc_remote_mem(home, size, true, password);
  CHECK(h > 0, "alloc_remote_mem on node %d: handler %d", home, h);
  if (h <= 0) return 100;
  CHECK(userspace_liteapi_rdma_write(h, buf, size, 0, password) == 0,
        "rdma_write of %d bytes", size);
  CHECK_FAILS(userspace_liteapi_rdma_write(h, buf, 8, 0, password + 1), EACCES,
              "rdma_write with a wrong password is refused");
  CHECK(userspace_liteapi_add_ask_mr_table(id, h, MR_READ_FLAG | MR_ATOMIC_FLAG,
                                           password) == 0,
        "add_ask_mr_table(%llu)", (unsigned long long)id);
  printf("ready\n");
  fflush(stdout);
  v0_wait_file(stop, 600);
  return v0_exit();
}

static int reader(int node, uint64_t id, int password, int size, int threads) {
  unsigned char *buf = malloc(size);
  pthread_t tids[64];
  long bad, total_bad = 0;
  int h, wrong = 0;

  if (buf == NULL || threads < 1 || threads > 64) return 100;
  CHECK_FAILS(userspace_liteapi_ask_lmr(node, id, MR_READ_FLAG, password + 1),
              EACCES, "ask_lmr with a wrong password is refused");
  CHECK_FAILS(userspace_liteapi_ask_lmr(node, id, MR_WRITE_FLAG, password),
              EPERM, "ask_lmr for write permission is refused");
  CHECK_FAILS(userspace_liteapi_ask_lmr(node, id + 1, MR_READ_FLAG, password),
              ENOENT, "ask_lmr of an identifier nobody registered");
  h = userspace_liteapi_ask_lmr(node, id, MR_READ_FLAG | MR_ATOMIC_FLAG,
                                password);
  CHECK(h > 0, "ask_lmr(node %d, %llu): handler %d", node,
        (unsigned long long)id, h);
  if (h <= 0) return 100;
  CHECK(userspace_liteapi_rdma_read(h, buf, size, 0, password) == 0,
        "rdma_read of %d bytes", size);
  for (int i = 8; i < size; i++) wrong += buf[i] != pattern(i);
  CHECK(wrong == 0, "the %d bytes read are the writer's (%d differ)", size,
        wrong);
  CHECK(
      userspace_liteapi_rdma_read_high(h, buf, 64, 8, password) == 0 &&
          userspace_liteapi_rdma_read_low(h, buf + 64, 64, 8, password) == 0 &&
          memcmp(buf, buf + 64, 64) == 0,
      "rdma_read_high and rdma_read_low read the same bytes");
  handler_for_adds = h;
  for (int t = 0; t < threads; t++) pthread_create(&tids[t], NULL, adder, NULL);
  for (int t = 0; t < threads; t++) {
    pthread_join(tids[t], (void **)&bad);
    total_bad += bad;
  }
  CHECK(total_bad == 0, "%d threads x %d fetch_add (%ld failed)", threads, ADDS,
        total_bad);
  free(buf);
  return v0_exit();
}

static int value(int node, uint64_t id, int password, unsigned long long want) {
  unsigned long long got = 0;
  int h = userspace_liteapi_ask_lmr(node, id, MR_READ_FLAG, password);

  CHECK(h > 0, "ask_lmr(node %d, %llu)", node, (unsigned long long)id);
  if (h <= 0) return 100;
  CHECK(
      userspace_liteapi_rdma_read(h, &got, 8, 0, password) == 0 && got == want,
      "the first word is %llu (want %llu)", got, want);
  return v0_exit();
}

static int squatted(int node, uint64_t id, int password) {
  CHECK_FAILS(userspace_liteapi_ask_lmr(node, id, MR_READ_FLAG, password),
              EACCES,
              "ask_lmr(node %d, %llu), a record made on another node by "
              "another user, is refused",
              node, (unsigned long long)id);
  return v0_exit();
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static uint64_t now_ns(int clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int bench(int node, uint64_t id, int password, int iters) {
  uint64_t *lat = calloc(iters, sizeof(*lat));
  unsigned long long v;
  int h = userspace_liteapi_ask_lmr(node, id, MR_READ_FLAG | MR_ATOMIC_FLAG,
                                    password);

  if (h <= 0 || lat == NULL || iters < 10) return 100;
  for (int op = 0; op < 2; op++) {
    uint64_t cpu0 = now_ns(CLOCK_THREAD_CPUTIME_ID), cpu1;
    int bad = 0;

    for (int i = 0; i < iters; i++) {
      uint64_t t0 = now_ns(CLOCK_MONOTONIC);
      int rc = op == 0 ? userspace_liteapi_rdma_read(h, &v, 8, 8, password)
                       : userspace_liteapi_fetch_add(h, &v, 1);
      lat[i] = now_ns(CLOCK_MONOTONIC) - t0;
      bad += rc != 0;
    }
    cpu1 = now_ns(CLOCK_THREAD_CPUTIME_ID);
    qsort(lat, iters, sizeof(*lat), cmp_u64);
    printf("compat %-5s 8 B  p50 %.1f us  p99 %.1f us  cpu %.1f us/op%s\n",
           op == 0 ? "read" : "faa", lat[iters / 2] / 1000.0,
           lat[iters * 99 / 100] / 1000.0, (cpu1 - cpu0) / 1000.0 / iters,
           bad ? "  (some failed)" : "");
    v0_failures += bad != 0;
  }
  free(lat);
  return v0_exit();
}

int main(int argc, char **argv) {
  if (argc == 7 && strcmp(argv[1], "serve") == 0)
    return serve(atoi(argv[2]), strtoull(argv[3], NULL, 0), atoi(argv[4]),
                 atoi(argv[5]), argv[6]);
  if (argc == 7 && strcmp(argv[1], "read") == 0)
    return reader(atoi(argv[2]), strtoull(argv[3], NULL, 0), atoi(argv[4]),
                  atoi(argv[5]), atoi(argv[6]));
  if (argc == 6 && strcmp(argv[1], "value") == 0)
    return value(atoi(argv[2]), strtoull(argv[3], NULL, 0), atoi(argv[4]),
                 strtoull(argv[5], NULL, 0));
  if (argc == 5 && strcmp(argv[1], "squatted") == 0)
    return squatted(atoi(argv[2]), strtoull(argv[3], NULL, 0), atoi(argv[4]));
  if (argc == 6 && strcmp(argv[1], "bench") == 0)
    return bench(atoi(argv[2]), strtoull(argv[3], NULL, 0), atoi(argv[4]),
                 atoi(argv[5]));
  fprintf(stderr, "usage: see the comment at the top of v0_rw.c\n");
  return 100;
}
