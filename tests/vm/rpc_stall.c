// rpc_stall: the RPC fence against a buffer that is slow to fault in
// (tests/vm/rpc.sh). userfaultfd holds the first fault on a page for HOLD
// seconds, as a FUSE daemon could hold a read of its file, while the other
// end of the service goes away:
//
//   rpc_stall call NAME HOLD READY   a CALL to NAME whose request is on the
//                                    held page; the test closes the service
//                                    (kills its server) during the hold
//   rpc_stall serve NAME HOLD READY  serves NAME (mode 0777): a REPLY to the
//                                    first request from the held page, and
//                                    RPC_CLOSE of the service from another
//                                    thread during the hold
//
// READY is created once lite.ko waits on the page. Prints "result=ERRNO"
// (the CALL's or the REPLY's; OK for success) and, for serve, "close_ms=N"
// (how long RPC_CLOSE took). Exit status 0 unless the set-up failed.
// userfaultfd must be allowed (vm.unprivileged_userfaultfd=1 as a user).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "kmod/include/uapi/lite.h"

#define PAGE 4096
#define LEN 64

static int fd, uffd;
static char *held;
static uint64_t handle;
static int result = -1, close_result = -1;
static long close_ms;

static void die(const char *what, const char *msg) {
  printf("rpc_stall: %s: %s %s\n", what, strerror(errno), msg ? msg : "");
  exit(2);
}

static long now_ms(void) {
  struct timespec t;

  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static const char *errname(int err) {
  switch (err) {
    case 0:
      return "OK";
    case ECONNREFUSED:
      return "ECONNREFUSED";
    case EHOSTDOWN:
      return "EHOSTDOWN";
    case ETIMEDOUT:
      return "ETIMEDOUT";
    case EFAULT:
      return "EFAULT";
    case EINVAL:
      return "EINVAL";
    case EIO:
      return "EIO";
    default:
      return strerror(err);
  }
}

// A page whose first fault userfaultfd holds until release_page().
static void hold_page(void) {
  struct uffdio_api api = {.api = UFFD_API};
  struct uffdio_register reg;

  uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
  if (uffd < 0) die("userfaultfd", "(vm.unprivileged_userfaultfd?)");
  if (ioctl(uffd, UFFDIO_API, &api)) die("UFFDIO_API", NULL);
  held = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
              -1, 0);
  if (held == MAP_FAILED) die("mmap", NULL);
  reg =
      (struct uffdio_register){.range = {.start = (uintptr_t)held, .len = PAGE},
                               .mode = UFFDIO_REGISTER_MODE_MISSING};
  if (ioctl(uffd, UFFDIO_REGISTER, &reg)) die("UFFDIO_REGISTER", NULL);
}

// Waits until lite.ko faults on the page, then marks READY.
static void wait_fault(const char *ready) {
  struct pollfd p = {.fd = uffd, .events = POLLIN};
  struct uffd_msg m;

  if (poll(&p, 1, 60000) != 1) die("no fault on the page within 60 s", NULL);
  if (read(uffd, &m, sizeof(m)) != sizeof(m) || m.event != UFFD_EVENT_PAGEFAULT)
    die("read of the fault", NULL);
  if (close(open(ready, O_CREAT | O_WRONLY, 0644))) die("create", ready);
  printf("stalled: lite.ko waits on the page\n");
  fflush(stdout);
}

static void release_page(void) {
  static char src[PAGE] __attribute__((aligned(PAGE)));
  struct uffdio_copy c = {
      .dst = (uintptr_t)held, .src = (uintptr_t)src, .len = PAGE};

  memset(src, 'x', sizeof(src));
  if (ioctl(uffd, UFFDIO_COPY, &c)) die("UFFDIO_COPY", NULL);
}

static void *call_main(void *arg) {
  static char rep[LEN];
  struct lite_rpc_call c = {.service = handle,
                            .request = (uintptr_t)held,
                            .reply = (uintptr_t)rep,
                            .req_len = LEN,
                            .reply_max = LEN,
                            .timeout_ms = 60000};

  (void)arg;
  result = ioctl(fd, LITE_IOC_RPC_CALL, &c) ? errno : 0;
  return NULL;
}

static int do_call(const char *name, int hold, const char *ready) {
  static char req[LEN] = "bind first", rep[LEN];
  struct lite_rpc_open o = {0};
  struct lite_rpc_call c = {.request = (uintptr_t)req,
                            .reply = (uintptr_t)rep,
                            .req_len = LEN,
                            .reply_max = LEN,
                            .timeout_ms = 20000};
  pthread_t t;

  snprintf(o.name, sizeof(o.name), "%s", name);
  if (ioctl(fd, LITE_IOC_RPC_OPEN, &o)) die("RPC_OPEN", o.message);
  handle = o.service;
  c.service = handle;
  // The node's binding exists before the stalled call.
  if (ioctl(fd, LITE_IOC_RPC_CALL, &c)) die("a first call", NULL);
  hold_page();
  pthread_create(&t, NULL, call_main, NULL);
  wait_fault(ready);
  sleep((unsigned int)hold);
  release_page();
  pthread_join(t, NULL);
  printf("result=%s\n", errname(result));
  return 0;
}

static void *reply_main(void *arg) {
  struct lite_rpc_reply *a = arg;

  result = ioctl(fd, LITE_IOC_RPC_REPLY, a) ? errno : 0;
  return NULL;
}

static void *close_main(void *arg) {
  struct lite_rpc_close c = {.service = handle};
  long start = now_ms();

  (void)arg;
  close_result = ioctl(fd, LITE_IOC_RPC_CLOSE, &c) ? errno : 0;
  close_ms = now_ms() - start;
  return NULL;
}

static int do_serve(const char *name, int hold, const char *ready) {
  struct lite_rpc_register r = {.mode = 0777,
                                .max_request = LEN,
                                .max_reply = LEN,
                                .depth = 4,
                                .max_clients = 4};
  struct lite_rpc_request req;
  struct lite_rpc_recv rv = {
      .requests = (uintptr_t)&req, .max = 1, .timeout_ms = 60000};
  struct lite_rpc_reply a;
  pthread_t tr, tc;

  snprintf(r.name, sizeof(r.name), "%s", name);
  if (ioctl(fd, LITE_IOC_RPC_REGISTER, &r)) die("RPC_REGISTER", r.message);
  handle = r.service;
  printf("serving=%s\n", name);
  fflush(stdout);
  rv.service = handle;
  if (ioctl(fd, LITE_IOC_RPC_RECV, &rv) || rv.count != 1)
    die("RPC_RECV of one request in 60 s", NULL);
  hold_page();
  a = (struct lite_rpc_reply){
      .service = handle, .id = req.id, .data = (uintptr_t)held, .len = LEN};
  pthread_create(&tr, NULL, reply_main, &a);
  wait_fault(ready);
  // The service goes while its reply is being copied.
  pthread_create(&tc, NULL, close_main, NULL);
  sleep((unsigned int)hold);
  release_page();
  pthread_join(tr, NULL);
  pthread_join(tc, NULL);
  printf("result=%s close=%s close_ms=%ld\n", errname(result),
         errname(close_result), close_ms);
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 5 || (strcmp(argv[1], "call") && strcmp(argv[1], "serve"))) {
    fprintf(stderr, "usage: rpc_stall call|serve NAME HOLD_SECS READY\n");
    return 2;
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  fd = open("/dev/lite", O_RDWR | O_CLOEXEC);
  if (fd < 0) die("open /dev/lite", NULL);
  if (!strcmp(argv[1], "call")) return do_call(argv[2], atoi(argv[3]), argv[4]);
  return do_serve(argv[2], atoi(argv[3]), argv[4]);
}
