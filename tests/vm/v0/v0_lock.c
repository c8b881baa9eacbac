// v0_lock: locks under contention and the barrier on the original LITE API,
// written only against lite-lib.h, for tests/vm/compat.sh.
//
//   v0_lock create NODE ID PASSWORD STOP_FILE
//       creates a lock on node NODE (create_lock) and an 8-byte counter
//       registered as ID on this node (wrap_alloc); prints
//       "lock=NODE:INDEX" and "ready"; keeps the counter until STOP_FILE
//   v0_lock contend LOCK_NODE INDEX NODE ID PASSWORD THREADS N
//       ask_lock and ask_lmr, then THREADS threads x N critical sections:
//       lock, rdma_read the counter, add 1, rdma_write it, unlock (a lost
//       update shows as a short final count)
//   v0_lock barrier COUNT ROUNDS NODE ID PASSWORD
//       ROUNDS rounds of: fetch_add 1 on the counter ID of node NODE (as
//       v0_rw serve registers one), dist_barrier(COUNT),
//       then the counter must be at least COUNT x rounds so far (nobody
//       passed before all had arrived)
//   v0_lock squatted NODE INDEX
//       lock INDEX of node NODE was made on another node by another user
//       (review cp-2026-11-28 M5): ask_lock refuses it (EACCES)
//
// Exit status: the number of failed checks (100: at most).
#include "v0_check.h"

static remote_spinlock_t lock;
static int counter, password, sections;

static void *contender(void *arg) {
  unsigned long long v;
  long bad = 0;

  (void)arg;
  for (int i = 0; i < sections; i++) {
    if (userspace_liteapi_lock(&lock) != 0) {
      bad++;
      continue;
    }
    if (userspace_liteapi_rdma_read(counter, &v, 8, 0, password) != 0) bad++;
    v++;
    if (userspace_liteapi_rdma_write(counter, &v, 8, 0, password) != 0) bad++;
    if (userspace_liteapi_unlock(&lock) != 0) bad++;
  }
  return (void *)bad;
}

static int create(int node, uint64_t id, const char *stop) {
  unsigned long long zero = 0;

  CHECK(userspace_liteapi_create_lock(node, &lock) == 0,
        "create_lock on node %d", node);
  counter = userspace_liteapi_wrap_alloc(&zero, sizeof(zero), id, password);
  CHECK(counter > 0, "wrap_alloc of the counter as %llu",
        (unsigned long long)id);
  printf("lock=%u:%d\nready\n", lock.lock_mr.node_id, lock.lock_num);
  fflush(stdout);
  v0_wait_file(stop, 600);
  return v0_exit();
}

static int ask_counter(int node, uint64_t id, uint64_t permission) {
  counter = userspace_liteapi_ask_lmr(node, id, permission, password);
  CHECK(counter > 0, "ask_lmr(node %d, %llu)", node, (unsigned long long)id);
  return counter > 0 ? 0 : -1;
}

static int contend(int lock_node, int index, int node, uint64_t id,
                   int threads) {
  pthread_t tids[64];
  long bad, total_bad = 0;

  if (threads < 1 || threads > 64) return 100;
  CHECK_FAILS(userspace_liteapi_ask_lock(lock_node, index + 1000, &lock),
              ENOENT, "ask_lock of a lock nobody created");
  CHECK(userspace_liteapi_ask_lock(lock_node, index, &lock) == 0,
        "ask_lock(node %d, %d)", lock_node, index);
  if (ask_counter(node, id, MR_READ_FLAG | MR_WRITE_FLAG) < 0) return 100;
  for (int t = 0; t < threads; t++)
    pthread_create(&tids[t], NULL, contender, NULL);
  for (int t = 0; t < threads; t++) {
    pthread_join(tids[t], (void **)&bad);
    total_bad += bad;
  }
  CHECK(total_bad == 0, "%d threads x %d critical sections (%ld calls failed)",
        threads, sections, total_bad);
  return v0_exit();
}

static int barrier(unsigned count, int rounds, int node, uint64_t id) {
  unsigned long long old, now;
  int early = 0;

  if (ask_counter(node, id, MR_READ_FLAG | MR_ATOMIC_FLAG) < 0) return 100;
  for (int r = 1; r <= rounds; r++) {
    if (userspace_liteapi_fetch_add(counter, &old, 1) != 0 ||
        userspace_liteapi_dist_barrier(count) != 0 ||
        userspace_liteapi_rdma_read(counter, &now, 8, 0, password) != 0) {
      CHECK(0, "round %d: fetch_add, dist_barrier, rdma_read", r);
      break;
    }
    early += now < (unsigned long long)count * r;
  }
  CHECK(early == 0, "%d rounds of dist_barrier(%u): nobody passed early (%d)",
        rounds, count, early);
  return v0_exit();
}

/* Lock `index` of `node` was made on another node by another user. */
static int squatted(int node, int index) {
  CHECK_FAILS(userspace_liteapi_ask_lock(node, index, &lock), EACCES,
              "ask_lock(node %d, %d), made on another node by another user, "
              "is refused",
              node, index);
  return v0_exit();
}

int main(int argc, char **argv) {
  if (argc == 6 && strcmp(argv[1], "create") == 0) {
    password = atoi(argv[4]);
    return create(atoi(argv[2]), strtoull(argv[3], NULL, 0), argv[5]);
  }
  if (argc == 9 && strcmp(argv[1], "contend") == 0) {
    password = atoi(argv[6]);
    sections = atoi(argv[8]);
    return contend(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]),
                   strtoull(argv[5], NULL, 0), atoi(argv[7]));
  }
  if (argc == 7 && strcmp(argv[1], "barrier") == 0) {
    password = atoi(argv[6]);
    return barrier((unsigned)atoi(argv[2]), atoi(argv[3]), atoi(argv[4]),
                   strtoull(argv[5], NULL, 0));
  }
  if (argc == 4 && strcmp(argv[1], "squatted") == 0)
    return squatted(atoi(argv[2]), atoi(argv[3]));
  fprintf(stderr, "usage: see the comment at the top of v0_lock.c\n");
  return 100;
}
