// fuzz_ioctl's LITE_IOC_BATCH: batches of READ, WRITE, FAA and CAS entries
// (and unknown opcodes) with every handle, length, offset and buffer the
// single-operation generators make, the array itself in bad places, and
// counts out of range. The call must fail when its header or array is bad;
// otherwise every entry must come back with 0 or an errno its single
// operation documents, an entry that must fail must fail, `failed` must
// count them, and a READ must not have written into read-only memory.
#include "tests/vm/fuzz_ioctl.h"

#define MAX_ENTRIES 24

int batch_errno_ok(int err) {
  static const int kOk[] = {EBADF,     EACCES, ESTALE,     EHOSTDOWN,
                            ETIMEDOUT, EIO,    EOPNOTSUPP, EINTR};

  if (err == EINVAL || err == EFAULT) return 1;
  for (size_t i = 0; i < sizeof(kOk) / sizeof(kOk[0]); i++)
    if (kOk[i] == err) return 1;
  return 0;
}

void batch_gen_entry(struct worker *w, struct lite_batch_op *e,
                     const char **why, struct uptr *u) {
  uint64_t *s = &w->s;
  int lmr, vfd;
  uint32_t access, need;
  uint64_t size;

  memset(e, 0, sizeof(*e));
  e->opcode = (uint16_t)(1 + below(s, 4));
  if (DIRTY(s, 3)) e->opcode = pct(s, 50) ? 0 : (uint16_t)(5 + below(s, 100));
  e->handle = gen_op_handle(s, &lmr, &access, why, &vfd);
  if (!*why && vfd != main_fd) *why = "another file's handle";
  size = lmr >= 0 ? lmrs[lmr].size : 4096;
  u->kind = "none";
  if (e->opcode == LITE_BATCH_READ || e->opcode == LITE_BATCH_WRITE) {
    uint64_t len =
        pct(s, 70) ? 1 + below(s, LITE_BATCH_RW_MAX) : gen_len(s, size);

    e->length = (uint32_t)len;
    e->offset = gen_off(s, size, e->length);
    *u = gen_ptr(s, e->length);
    e->buf = u->p;
    // A length cut to 32 bits is what the kernel sees: judged as sent.
    if (!*why && (!e->length || e->length > LITE_BATCH_RW_MAX))
      *why = "bad length";
    need = e->opcode == LITE_BATCH_WRITE ? LITE_ACCESS_WRITE : LITE_ACCESS_READ;
  } else {
    e->length = DIRTY(s, 3) ? (uint32_t)below(s, 16) : 8;
    e->offset = pct(s, 70) ? below(s, size / 8 + 1) * 8 : gen_off(s, size, 8);
    e->operand = rnd(s);
    if (e->opcode == LITE_BATCH_CAS || DIRTY(s, 5)) e->swap = rnd(s);
    if (DIRTY(s, 2)) e->buf = rnd(s);
    if (!*why && e->length != 8) *why = "an atomic's length not 8";
    if (!*why && e->buf) *why = "an atomic with a buffer";
    if (!*why && e->opcode == LITE_BATCH_FAA && e->swap)
      *why = "FAA with swap not 0";
    if (!*why && e->offset % 8) *why = "misaligned";
    need = LITE_ACCESS_READ | LITE_ACCESS_WRITE;
  }
  if (DIRTY(s, 3)) e->flags = (uint16_t)(1 + below(s, 0xffff));
  if (DIRTY(s, 3)) e->priority = (uint32_t)rnd(s) | 4;  // no enum lite_priority
  if (DIRTY(s, 2)) e->error = (int32_t)rnd(s);          // an output: ignored
  if (!*why && (e->opcode < LITE_BATCH_READ || e->opcode > LITE_BATCH_CAS))
    *why = "unknown opcode";
  if (!*why && (e->flags || e->priority)) *why = "flags or priority";
  if (!*why && lmr >= 0 && !range_ok(e->offset, e->length, size))
    *why = "out of range";
  if (!*why && lmr >= 0 && (access & need) != need)
    *why = "the map lacks the access";
  if (!*why && e->opcode == LITE_BATCH_WRITE && !u->readable) *why = u->kind;
  if (!*why && e->opcode == LITE_BATCH_READ && !u->writable) *why = u->kind;
}

void do_batch(struct worker *w) {
  uint64_t *s = &w->s;
  static __thread struct lite_batch_op ops[MAX_ENTRIES];
  const char *whys[MAX_ENTRIES];
  struct uptr bufs[MAX_ENTRIES];
  struct lite_batch b = {0};
  const char *why = NULL, *aw = NULL;
  uint32_t n = 1 + (uint32_t)below(s, MAX_ENTRIES), must_fail = 0, failed = 0;
  void *array = ops;
  int err;

  for (uint32_t i = 0; i < n; i++) {
    batch_gen_entry(w, &ops[i], &whys[i], &bufs[i]);
    must_fail += whys[i] != NULL;
  }
  b.count = n;
  if (DIRTY(s, 3))
    b.count = pct(s, 50) ? 0 : LITE_BATCH_MAX + 1 + (uint32_t)below(s, 1000);
  if (DIRTY(s, 2)) b.flags = (uint32_t)rnd(s) | 1;
  if (DIRTY(s, 2)) b.reserved = (uint32_t)rnd(s) | 1;
  if (DIRTY(s, 4)) {  // the array somewhere the kernel may not read or write
    struct uptr u = gen_ptr(s, n * sizeof(ops[0]));
    if (!u.writable || !u.readable) array = (void *)(uintptr_t)u.p;
  }
  b.ops = (uintptr_t)array;
  if (!b.count || b.count > LITE_BATCH_MAX) why = "count out of range";
  if (!why && (b.flags || b.reserved)) why = "flags or reserved";
  if (!why && array != ops) why = "the array is not writable memory";
  void *arg = place_arg(s, &w->ab, &b, sizeof(b), 1, &aw);
  err = call(w->b, main_fd, I_BATCH, LITE_IOC_BATCH, arg, why ? why : aw, 0,
             "BATCH %u entries (%u must fail) at %p count %u flags %#x arg %p",
             n, must_fail, array, b.count, b.flags, arg);
  if (err) return;
  for (uint32_t i = 0; i < n; i++) {
    int e = -ops[i].error;

    if (e) failed++;
    if (e && !batch_errno_ok(e))
      fail("BATCH entry %u (opcode %u handle %#llx): %s, not documented", i,
           ops[i].opcode, (unsigned long long)ops[i].handle, strerror(e));
    if (!e && whys[i])
      fail(
          "BATCH entry %u (opcode %u handle %#llx off %#llx len %u) "
          "succeeded but must fail (%s)",
          i, ops[i].opcode, (unsigned long long)ops[i].handle,
          (unsigned long long)ops[i].offset, ops[i].length, whys[i]);
    if (ops[i].opcode == LITE_BATCH_READ) {
      check_unchanged(w, ops[i].buf, ops[i].length, ro_area, 0);
      check_unchanged(w, ops[i].buf, ops[i].length, rofile_area,
                      (char)FILE_BYTE);
    }
  }
  if (b.failed != failed && arg == &b)
    fail("BATCH: failed says %u, the entries %u", b.failed, failed);
}
