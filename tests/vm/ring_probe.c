// ring_probe: one-sided operations as io_uring commands (LITE_URING_CMD_OP)
// against a real lite.ko, with liburing and no libLITE, for
// tests/vm/datapath.sh. NAME is an LMR of at least 64 KiB, zero below
// 60000, that the caller may map read-write (the batch probe's LMR: this
// probe works at other offsets).
//
//   ring_probe mixed NAME    commands that succeed and fail in every way:
//                            each CQE its own errno (or length, or old
//                            value), what the good ones wrote, nothing
//                            written by the failed ones; a WRITE from a
//                            page not mapped in (io-wq's path); a ring
//                            without big entries and an unknown cmd_op are
//                            refused
//   ring_probe window NAME   200 fetch-and-adds on one word, 16 in flight
//                            (uring_cmds_per_file's default): +200, 200
//                            distinct old values
//   ring_probe reads NAME    16 READs of distinct 64-byte pieces in flight
//                            at once: each buffer holds its own piece
//   ring_probe exit NAME     a child submits 16 fetch-and-adds (fewer than
//                            the device's 32 contexts: all issued to
//                            lite.ko at once) and exits without reaping
//                            one: every one still lands, exactly +16
//                            (io_uring waits for what a driver holds; what
//                            still waits in io-wq it may cancel, hence 16)
//   ring_probe kill NAME     a child keeps 16 fetch-and-adds in flight and is
//                            SIGKILLed: the word goes up by at most what was
//                            submitted
//   (exit and kill: then the child's commands stop counting against the
//   uid soon after: a command goes through again within 5 s)
//   ring_probe hold NAME READY
//                            the attack of review 2026-11-28 H1, run as an
//                            unprivileged user: rings with SQE128 | CQE32 |
//                            SINGLE_ISSUER | DEFER_TASKRUN, whose
//                            completions run only when this process waits
//                            for them; 17 8-byte READs of offset 0 on one
//                            file and 20 on another, never reaped: the
//                            first 16 are taken, the 17th fails EBUSY
//                            (uring_cmds_per_file), the other file's
//                            EDQUOT (uring_cmds_per_uid); then writes its
//                            pid to READY and waits for SIGUSR1, reaps the 16
//                            and checks their bytes (its READs completed
//                            and gave their contexts back long before)
//   ring_probe sync NAME     10 READs of 8 bytes with LITE_IOC_READ, each in
//                            time (while another process holds completions)
// Prints ok/FAIL lines; exit status: the failures (100: usage, set-up).
#define _GNU_SOURCE  // memfd_create
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kmod/include/uapi/lite.h"

#define PROBE_NAME "ring_probe"
#include "tests/vm/probe_check.h"

enum { WORD = 32768, PATTERN = 40960, SCRATCH = 49152 };

static int open_lite(void) {
  int fd = open(LITE_DEVICE_PATH, O_RDWR | O_CLOEXEC);

  if (fd < 0) die(LITE_DEVICE_PATH, errno);
  return fd;
}

static void rw_at(int fd, int write, uint64_t h, uint64_t off, void *buf,
                  uint64_t len) {
  struct lite_rw r = {
      .handle = h, .offset = off, .buf = (uintptr_t)buf, .length = len};

  if (ioctl(fd, write ? LITE_IOC_WRITE : LITE_IOC_READ, &r))
    die(write ? "write" : "read back", errno);
}

static uint64_t word_at(int fd, uint64_t h, uint64_t off) {
  uint64_t v = 0;

  rw_at(fd, 0, h, off, &v, 8);
  return v;
}

static void ring_init(struct io_uring *ring, unsigned depth, unsigned flags) {
  int err = io_uring_queue_init(depth, ring, flags);

  if (err < 0) die("io_uring_queue_init", -err);
}

/* A zeroed 128-byte SQE for a command with `cmd_op`; its lite_batch_op. */
static struct lite_batch_op *command_op(struct io_uring *ring, int fd,
                                        uint64_t tag, uint32_t cmd_op) {
  struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

  if (!sqe) die("io_uring_get_sqe", ENOSPC);
  memset(sqe, 0, 2 * sizeof(*sqe));
  sqe->opcode = IORING_OP_URING_CMD;
  sqe->fd = fd;
  sqe->cmd_op = cmd_op;
  sqe->user_data = tag;
  return (struct lite_batch_op *)sqe->cmd;
}

static struct lite_batch_op *command(struct io_uring *ring, int fd,
                                     uint64_t tag) {
  return command_op(ring, fd, tag, LITE_URING_CMD_OP);
}

static void entry(struct lite_batch_op *e, uint16_t opcode, uint64_t handle,
                  uint64_t offset, const void *buf, uint32_t length) {
  e->opcode = opcode;
  e->handle = handle;
  e->offset = offset;
  e->buf = (uintptr_t)buf;
  e->length = length;
}

/* Submits what is queued and reaps n completions into res/old by tag. */
static void reap(struct io_uring *ring, unsigned n, int32_t *res,
                 uint64_t *old) {
  for (unsigned got = 0; got < n; got++) {
    struct io_uring_cqe *cqe;
    int err = io_uring_submit_and_wait(ring, 1);

    if (err < 0) die("io_uring_submit_and_wait", -err);
    err = io_uring_wait_cqe(ring, &cqe);
    if (err < 0) die("io_uring_wait_cqe", -err);
    res[cqe->user_data] = cqe->res;
    if (old) old[cqe->user_data] = cqe->big_cqe[0];
    io_uring_cqe_seen(ring, cqe);
  }
}

static const char *rname(int32_t res) {
  static char buf[32];

  if (res >= 0) {
    snprintf(buf, sizeof(buf), "%d", res);
    return buf;
  }
  switch (-res) {
    case EBADF:
      return "EBADF";
    case EACCES:
      return "EACCES";
    case EINVAL:
      return "EINVAL";
    case EFAULT:
      return "EFAULT";
    case ENOTTY:
      return "ENOTTY";
    default:
      return strerror(-res);
  }
}

static void mixed(const char *name) {
  enum { N = 10 };
  int fd = open_lite();
  uint64_t h = map_lmr(fd, name, LITE_ACCESS_READ | LITE_ACCESS_WRITE);
  uint64_t ro = map_lmr(fd, name, LITE_ACCESS_READ);
  static const char data[16] = "ring-written-16";
  char rbuf[16] = {0}, got[16], zero[16] = {0};
  static char big[LITE_BATCH_RW_MAX + 1];
  static const struct {
    int32_t res;
    const char *what;
  } want[N] = {
      {16, "WRITE 16 B"},
      {-EACCES, "WRITE through a read-only map"},
      {-EBADF, "READ on handle 12345"},
      {0, "FAA +7"},
      {-EINVAL, "CAS at a misaligned offset"},
      {-EFAULT, "WRITE from an unmapped user address"},
      {-EINVAL, "unknown opcode 9"},
      {-EINVAL, "READ of 16 KiB + 1"},
      {-EINVAL, "a command with its result field set"},
      {-ENOTTY, "cmd_op not LITE_URING_CMD_OP"},
  };
  int32_t res[N];
  uint64_t old[N], before = word_at(fd, h, WORD);
  struct io_uring ring;
  struct lite_batch_op *e;

  ring_init(&ring, 16, IORING_SETUP_SQE128 | IORING_SETUP_CQE32);
  entry(command(&ring, fd, 0), LITE_BATCH_WRITE, h, SCRATCH, data, 16);
  entry(command(&ring, fd, 1), LITE_BATCH_WRITE, ro, SCRATCH + 64, data, 16);
  entry(command(&ring, fd, 2), LITE_BATCH_READ, 12345, 0, rbuf, 16);
  e = command(&ring, fd, 3);
  entry(e, LITE_BATCH_FAA, h, WORD, NULL, 8);
  e->operand = 7;
  entry(command(&ring, fd, 4), LITE_BATCH_CAS, h, WORD + 4, NULL, 8);
  entry(command(&ring, fd, 5), LITE_BATCH_WRITE, h, SCRATCH + 128, (void *)8,
        16);
  entry(command(&ring, fd, 6), 9, h, 0, rbuf, 16);
  entry(command(&ring, fd, 7), LITE_BATCH_READ, h, 0, big, sizeof(big));
  e = command(&ring, fd, 8);
  entry(e, LITE_BATCH_READ, h, 0, rbuf, 16);
  e->result = 1;
  entry(command_op(&ring, fd, 9, LITE_IOC_BATCH), LITE_BATCH_READ, h, 0, rbuf,
        16);
  reap(&ring, N, res, old);
  for (int i = 0; i < N; i++)
    check(res[i] == want[i].res, "command %d, %s: %s (got %s)", i, want[i].what,
          rname(want[i].res), rname(res[i]));
  check(old[3] == before, "FAA's old value in big_cqe[0]: %llu (want %llu)",
        (unsigned long long)old[3], (unsigned long long)before);
  check(word_at(fd, h, WORD) == before + 7, "the word went up by 7");
  rw_at(fd, 0, h, SCRATCH, got, 16);
  check(!memcmp(got, data, 16), "command 0's bytes are there");
  rw_at(fd, 0, h, SCRATCH + 64, got, 16);
  check(!memcmp(got, zero, 16), "nothing from the read-only map's WRITE");
  rw_at(fd, 0, h, SCRATCH + 128, got, 16);
  check(!memcmp(got, zero, 16), "nothing from the unreadable buffer");
  entry(command(&ring, fd, 0), LITE_BATCH_READ, h, SCRATCH, rbuf, 16);
  reap(&ring, 1, res, NULL);
  check(res[0] == 16 && !memcmp(rbuf, data, 16),
        "a READ's bytes are in its buffer with its CQE");

  /*
   * A WRITE whose bytes are not resident (a memfd page whose mapping was
   * dropped): -EAGAIN inline, then io-wq faults them in and writes.
   */
  static const char away[16] = "ring-not-there!";
  int mfd = memfd_create("ring_probe", 0);
  if (mfd < 0 || write(mfd, away, 16) != 16) die("memfd", errno);
  char *page = mmap(NULL, 4096, PROT_READ, MAP_SHARED, mfd, 0);
  if (page == MAP_FAILED) die("mmap", errno);
  if (madvise(page, 4096, MADV_DONTNEED)) die("madvise", errno);
  entry(command(&ring, fd, 0), LITE_BATCH_WRITE, h, SCRATCH + 192, page, 16);
  reap(&ring, 1, res, NULL);
  rw_at(fd, 0, h, SCRATCH + 192, got, 16);
  check(res[0] == 16 && !memcmp(got, away, 16),
        "a WRITE from a page not mapped in: 16, and its bytes are there "
        "(got %s)",
        rname(res[0]));
  munmap(page, 4096);
  close(mfd);
  io_uring_queue_exit(&ring);

  /* Without 128-byte SQEs and 32-byte CQEs there is no room: refused. */
  ring_init(&ring, 4, 0);
  struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
  io_uring_prep_nop(sqe);
  sqe->opcode = IORING_OP_URING_CMD;
  sqe->fd = fd;
  sqe->cmd_op = LITE_URING_CMD_OP;
  sqe->user_data = 0;
  reap(&ring, 1, res, NULL);
  check(res[0] == -EINVAL, "a ring without big entries: EINVAL (got %s)",
        rname(res[0]));
  io_uring_queue_exit(&ring);
  close(fd);
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

  return x < y ? -1 : x > y;
}

static void window(const char *name) {
  enum { N = 200, DEPTH = 16 };
  int fd = open_lite();
  uint64_t h = map_lmr(fd, name, LITE_ACCESS_READ | LITE_ACCESS_WRITE);
  uint64_t before = word_at(fd, h, WORD), olds[N];
  int32_t res[N];
  int distinct = 1, errors = 0;
  struct io_uring ring;
  unsigned sent = 0, done = 0;

  ring_init(&ring, DEPTH, IORING_SETUP_SQE128 | IORING_SETUP_CQE32);
  while (done < N) {
    while (sent < N && sent - done < DEPTH) {
      struct lite_batch_op *e = command(&ring, fd, sent++);
      entry(e, LITE_BATCH_FAA, h, WORD, NULL, 8);
      e->operand = 1;
    }
    reap(&ring, 1, res, olds);
    done++;
  }
  for (int i = 0; i < N; i++) errors += res[i] != 0;
  qsort(olds, N, sizeof(olds[0]), cmp_u64);
  for (int i = 0; i < N; i++) distinct &= olds[i] == before + i;
  check(!errors, "200 fetch-and-adds, %d in flight: none failed (%d did)",
        DEPTH, errors);
  check(word_at(fd, h, WORD) == before + N, "the word went up by exactly 200");
  check(distinct, "the old values are %llu..%llu, each once",
        (unsigned long long)before, (unsigned long long)before + N - 1);
  io_uring_queue_exit(&ring);
  close(fd);
}

static void reads(const char *name) {
  enum { N = 16, PIECE = 64 };
  int fd = open_lite();
  uint64_t h = map_lmr(fd, name, LITE_ACCESS_READ | LITE_ACCESS_WRITE);
  static uint8_t pattern[N * PIECE], bufs[N][PIECE];
  int32_t res[N];
  int same = 1, errors = 0;
  struct io_uring ring;

  for (size_t i = 0; i < sizeof(pattern); i++)
    pattern[i] = (uint8_t)(i * 13 + 5);
  rw_at(fd, 1, h, PATTERN, pattern, sizeof(pattern));
  ring_init(&ring, N, IORING_SETUP_SQE128 | IORING_SETUP_CQE32);
  for (int i = 0; i < N; i++)
    entry(command(&ring, fd, i), LITE_BATCH_READ, h,
          PATTERN + (uint64_t)i * PIECE, bufs[i], PIECE);
  reap(&ring, N, res, NULL);
  for (int i = 0; i < N; i++) {
    errors += res[i] != PIECE;
    same &= !memcmp(bufs[i], pattern + i * PIECE, PIECE);
  }
  check(!errors, "16 READs of 64 B in flight at once: each CQE says 64");
  check(same, "every READ's buffer holds its own piece");
  io_uring_queue_exit(&ring);
  close(fd);
}

/*
 * A child that submits @n fetch-and-adds of 1 on the word, tells the parent
 * through @ready, then exits (@wait_for_kill: waits to be killed). Returns
 * its pid.
 */
static pid_t child_in_flight(const char *name, int ready, int n,
                             int wait_for_kill) {
  pid_t pid = fork();

  if (pid < 0) die("fork", errno);
  if (pid) return pid;
  int fd = open_lite();
  uint64_t h = map_lmr(fd, name, LITE_ACCESS_READ | LITE_ACCESS_WRITE);
  struct io_uring ring;

  ring_init(&ring, 64, IORING_SETUP_SQE128 | IORING_SETUP_CQE32);
  for (int i = 0; i < n; i++) {
    struct lite_batch_op *e = command(&ring, fd, i);
    entry(e, LITE_BATCH_FAA, h, WORD, NULL, 8);
    e->operand = 1;
  }
  if (io_uring_submit(&ring) != n) _exit(3);
  if (write(ready, "x", 1) != 1) _exit(4);
  if (wait_for_kill) pause();
  _exit(0);  // no reaping, no ring exit, no close: the kernel does it all
}

/*
 * A killed child's commands stop counting against the uid once io_uring
 * has run their completions (from its fallback worker, soon after the
 * exit): a fetch-and-add of 0 goes through within 5 s.
 */
static void settled(int fd, uint64_t h) {
  struct io_uring ring;
  int32_t res[1] = {-EDQUOT};

  ring_init(&ring, 4, IORING_SETUP_SQE128 | IORING_SETUP_CQE32);
  for (int i = 0; i < 50 && res[0] == -EDQUOT; i++) {
    if (i) usleep(100 * 1000);
    entry(command(&ring, fd, 0), LITE_BATCH_FAA, h, WORD, NULL, 8);
    reap(&ring, 1, res, NULL);
  }
  check(res[0] == 0, "a command after the kill goes through (got %s)",
        rname(res[0]));
  io_uring_queue_exit(&ring);
}

static void exiting(const char *name, int kill_it) {
  int fd = open_lite();
  uint64_t h = map_lmr(fd, name, LITE_ACCESS_READ | LITE_ACCESS_WRITE);
  uint64_t before = word_at(fd, h, WORD), after;
  int pipefd[2], status = 0, n = 16;
  char c;

  if (pipe(pipefd)) die("pipe", errno);
  pid_t pid = child_in_flight(name, pipefd[1], n, kill_it);
  close(pipefd[1]);
  check(read(pipefd[0], &c, 1) == 1, "the child submitted %d commands", n);
  if (kill_it) kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  after = word_at(fd, h, WORD);
  if (kill_it) {
    check(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
          "the child was killed with its commands in flight");
    check(after >= before && after <= before + 16,
          "the word went up by %llu: at most the 16 submitted",
          (unsigned long long)(after - before));
  } else {
    check(WIFEXITED(status) && WEXITSTATUS(status) == 0,
          "the child exited without reaping");
    check(after == before + 16,
          "every one of its 16 fetch-and-adds landed (+%llu)",
          (unsigned long long)(after - before));
  }
  settled(fd, h);
  close(pipefd[0]);
  close(fd);
}

static volatile sig_atomic_t go;

static void on_usr1(int sig) {
  (void)sig;
  go = 1;
}

/* Submits n READs of 8 bytes at offset 0 into bufs; counts the refusals. */
static void hold_submit(struct io_uring *ring, int fd, uint64_t h, int n,
                        uint64_t tag0, uint64_t *bufs, int *busy, int *dquot) {
  struct io_uring_cqe *cqe;

  for (int i = 0; i < n; i++)
    entry(command(ring, fd, tag0 + i), LITE_BATCH_READ, h, 0, &bufs[i], 8);
  if (io_uring_submit(ring) != n) die("io_uring_submit", errno);
  /*
   * A refusal is completed inline, at the submit: its CQE is in the ring
   * already. Peeking enters no kernel, so no task work runs.
   */
  while (!io_uring_peek_cqe(ring, &cqe)) {
    if (cqe->res == -EBUSY) ++*busy;
    if (cqe->res == -EDQUOT) ++*dquot;
    if (cqe->res != -EBUSY && cqe->res != -EDQUOT)
      check(0, "command %llu completed before any wait: %s",
            (unsigned long long)cqe->user_data, rname(cqe->res));
    io_uring_cqe_seen(ring, cqe);
  }
}

static void hold(const char *name, const char *ready) {
  enum { A = 17, B = 20 };
  const unsigned flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32 |
                         IORING_SETUP_SINGLE_ISSUER |
                         IORING_SETUP_DEFER_TASKRUN;
  int fa = open_lite(), fb = open_lite();
  uint64_t ha = map_lmr(fa, name, LITE_ACCESS_READ);
  uint64_t hb = map_lmr(fb, name, LITE_ACCESS_READ);
  static uint64_t bufs[A + B];
  uint64_t want = word_at(fa, ha, 0);
  struct io_uring ra, rb;
  struct io_uring_cqe *cqe;
  int busy = 0, dquot = 0, fbusy = 0, fdquot = 0, good = 0, other = 0;

  signal(SIGUSR1, on_usr1);
  ring_init(&ra, 64, flags);
  ring_init(&rb, 64, flags);
  hold_submit(&ra, fa, ha, A, 0, bufs, &busy, &dquot);
  check(busy == 1 && !dquot,
        "file 1: %d READs submitted, never reaped: 16 taken, 1 refused "
        "EBUSY (got %d EBUSY, %d EDQUOT)",
        A, busy, dquot);
  hold_submit(&rb, fb, hb, B, A, bufs + A, &fbusy, &fdquot);
  check(fdquot == B,
        "file 2 of the same uid: %d READs, all refused EDQUOT (got %d EDQUOT, "
        "%d EBUSY)",
        B, fdquot, fbusy);
  int rfd = open(ready, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (rfd < 0 || dprintf(rfd, "%d\n", (int)getpid()) < 0) die(ready, errno);
  close(rfd);
  while (!go) pause();
  /* Now the task work runs: the bytes come from each command's buffer. */
  for (int n = 0; n < A - busy; n++) {
    int err = io_uring_wait_cqe(&ra, &cqe);

    if (err < 0) die("io_uring_wait_cqe", -err);
    if (cqe->res == 8 && cqe->user_data < A && bufs[cqe->user_data] == want)
      good++;
    else
      other++;
    io_uring_cqe_seen(&ra, cqe);
  }
  check(good == A - busy && !other,
        "reaped at last: %d READs with their 8 bytes (%d otherwise)", good,
        other);
  io_uring_queue_exit(&ra);
  io_uring_queue_exit(&rb);
  close(fa);
  close(fb);
}

static void sync_reads(const char *name) {
  int fd = open_lite();
  uint64_t h = map_lmr(fd, name, LITE_ACCESS_READ);
  int ok = 0, err = 0;
  uint64_t v;

  for (int i = 0; i < 10; i++) {
    struct lite_rw r = {
        .handle = h, .offset = 0, .buf = (uintptr_t)&v, .length = 8};

    if (ioctl(fd, LITE_IOC_READ, &r))
      err = errno;
    else
      ok++;
  }
  check(ok == 10, "10 READs from another process: %d succeeded (last error %s)",
        ok, err ? rname(-err) : "none");
  close(fd);
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (argc == 3 && !strcmp(argv[1], "mixed"))
    mixed(argv[2]);
  else if (argc == 3 && !strcmp(argv[1], "window"))
    window(argv[2]);
  else if (argc == 3 && !strcmp(argv[1], "reads"))
    reads(argv[2]);
  else if (argc == 3 && !strcmp(argv[1], "exit"))
    exiting(argv[2], 0);
  else if (argc == 3 && !strcmp(argv[1], "kill"))
    exiting(argv[2], 1);
  else if (argc == 4 && !strcmp(argv[1], "hold"))
    hold(argv[2], argv[3]);
  else if (argc == 3 && !strcmp(argv[1], "sync"))
    sync_reads(argv[2]);
  else {
    fprintf(stderr,
            "usage: ring_probe mixed|window|reads|exit|kill|sync NAME\n"
            "       ring_probe hold NAME READY\n");
    return 100;
  }
  return failures;
}
