// fuzz_ioctl's io_uring commands (LITE_URING_CMD_OP): the batch's entries,
// one per command, on a ring with big entries, and now and then on a ring
// without them, with an unknown cmd_op, or with the result or error field
// set. Each CQE must carry the READ's or WRITE's length, 0 for an atomic, or
// an errno the entry's single operation documents; ENOTTY exactly for an
// unknown cmd_op and EINVAL for a ring without big entries; a command that
// must fail must fail; a READ must not have written into read-only memory.
// Counted as URING in the summary, one per command.
//
// A third ring has IORING_SETUP_SINGLE_ISSUER | DEFER_TASKRUN (review
// 2026-11-28 H1): its completions run only when the thread waits for
// them, so its commands are submitted, left a while (now and then across
// other workers' calls, which then run with this thread's completions
// held), and reaped later. A command beyond uring_cmds_per_file or
// uring_cmds_per_uid fails EBUSY or EDQUOT: allowed for every command.
#include <liburing.h>
#include <unistd.h>

#include "tests/vm/fuzz_ioctl.h"

#define MAX_CMDS 16

static __thread struct io_uring big_ring, small_ring, defer_ring;
static __thread int rings_state;  // 0 not yet, 1 ready, -1 failed
static __thread int defer_ok;     // the kernel took DEFER_TASKRUN

static int rings_ready(void) {
  int err;

  if (rings_state) return rings_state > 0;
  rings_state = -1;
  err = io_uring_queue_init(MAX_CMDS, &big_ring,
                            IORING_SETUP_SQE128 | IORING_SETUP_CQE32);
  if (!err) err = io_uring_queue_init(MAX_CMDS, &small_ring, 0);
  if (err) {
    fail("io_uring_queue_init: %s", strerror(-err));
    return 0;
  }
  rings_state = 1;
  /* Per thread, so its one issuer is the thread that made it. */
  defer_ok = !io_uring_queue_init(MAX_CMDS, &defer_ring,
                                  IORING_SETUP_SQE128 | IORING_SETUP_CQE32 |
                                      IORING_SETUP_SINGLE_ISSUER |
                                      IORING_SETUP_DEFER_TASKRUN);
  return 1;
}

// The command's expected failure, given how it was sent.
static const char *command_why(const char *entry_why, uint32_t cmd_op,
                               int small, const struct lite_batch_op *e) {
  if (cmd_op != LITE_URING_CMD_OP) return "unknown cmd_op";
  if (small) return "a ring without big entries";
  if (entry_why) return entry_why;
  if (e->result || e->error) return "result or error set";
  return NULL;
}

void do_uring(struct worker *w) {
  uint64_t *s = &w->s;
  struct lite_batch_op ops[MAX_CMDS];
  const char *whys[MAX_CMDS];
  uint32_t cmd_ops[MAX_CMDS];
  struct uptr bufs[MAX_CMDS];
  uint32_t n = 1 + (uint32_t)below(s, MAX_CMDS);
  int small = DIRTY(s, 2);
  int defer = !small && defer_ok && pct(s, 25);
  struct io_uring *ring = small ? &small_ring : defer ? &defer_ring : &big_ring;
  struct io_uring_cqe *cqe;
  int err;

  if (!rings_ready()) return;
  for (uint32_t i = 0; i < n; i++) {
    const char *why;
    struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

    batch_gen_entry(w, &ops[i], &why, &bufs[i]);
    if (DIRTY(s, 2)) ops[i].result = rnd(s) | 1;
    cmd_ops[i] = DIRTY(s, 2) ? (uint32_t)rnd(s) : LITE_URING_CMD_OP;
    whys[i] = command_why(why, cmd_ops[i], small, &ops[i]);
    memset(sqe, 0, small ? sizeof(*sqe) : 2 * sizeof(*sqe));
    sqe->opcode = IORING_OP_URING_CMD;
    sqe->fd = main_fd;
    sqe->cmd_op = cmd_ops[i];
    sqe->user_data = i;
    if (!small) memcpy(sqe->cmd, &ops[i], sizeof(ops[i]));
  }
  snprintf(w->b->what, sizeof(w->b->what), "URING %u commands%s", n,
           small   ? " on a ring without big entries"
           : defer ? " on a DEFER_TASKRUN ring"
                   : "");
  atomic_store(&w->b->since_ms, now_ms());
  if (defer) {
    /*
     * Submitted without waiting: they complete, and nothing of theirs
     * but the CQE waits for this thread, which first sleeps a while.
     */
    do err = io_uring_submit(ring);
    while (err == -EINTR);
    if (err < 0) fail("URING: io_uring_submit: %s", strerror(-err));
    usleep((useconds_t)below(s, 20000));
  }
  do err = io_uring_submit_and_wait(ring, n);
  while (err == -EINTR);
  if (err < 0) fail("URING: io_uring_submit_and_wait: %s", strerror(-err));
  for (uint32_t got = 0; err >= 0 && got < n; got++) {
    do err = io_uring_wait_cqe(ring, &cqe);
    while (err == -EINTR);
    if (err < 0) {
      fail("URING: io_uring_wait_cqe: %s", strerror(-err));
      break;
    }
    uint64_t i = cqe->user_data;
    int res = cqe->res, e = res < 0 ? -res : 0;
    io_uring_cqe_seen(ring, cqe);
    if (i >= n) {
      fail("URING: a CQE for command %llu of %u", (unsigned long long)i, n);
      continue;
    }
    atomic_fetch_add(&sh->counts[I_URING][e < NERR ? e : NERR - 1], 1);
    if (cmd_ops[i] != LITE_URING_CMD_OP && e != ENOTTY)
      fail("URING cmd_op %#x: %s, not ENOTTY", cmd_ops[i], strerror(e));
    else if (cmd_ops[i] == LITE_URING_CMD_OP && small && e != EINVAL)
      fail("URING on a ring without big entries: %s, not EINVAL", strerror(e));
    else if (e && !batch_errno_ok(e) && e != ENOTTY && e != ECANCELED &&
             e != EBUSY && e != EDQUOT)
      fail("URING command %llu (opcode %u): %s, not documented",
           (unsigned long long)i, ops[i].opcode, strerror(e));
    else if (!e && whys[i])
      fail(
          "URING command %llu (opcode %u handle %#llx off %#llx len %u) "
          "succeeded but must fail (%s)",
          (unsigned long long)i, ops[i].opcode,
          (unsigned long long)ops[i].handle, (unsigned long long)ops[i].offset,
          ops[i].length, whys[i]);
    else if (!e && ops[i].opcode <= LITE_BATCH_WRITE &&
             (uint32_t)res != ops[i].length)
      fail("URING command %llu: res %d, not its length %u",
           (unsigned long long)i, res, ops[i].length);
    if (ops[i].opcode == LITE_BATCH_READ) {
      check_unchanged(w, ops[i].buf, ops[i].length, ro_area, 0);
      check_unchanged(w, ops[i].buf, ops[i].length, rofile_area,
                      (char)FILE_BYTE);
    }
  }
  atomic_store(&w->b->since_ms, 0);
}
