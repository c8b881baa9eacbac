// SPDX-License-Identifier: GPL-2.0
/*
 * limits_map: maps and unmaps LMRs through raw /dev/lite ioctls on command,
 * for tests/vm/limits.sh (lite.ko's per-user limits). One process holds its
 * files and handles between commands, so the suite can look at debugfs and
 * the process's memory cgroup while it does. Commands on stdin, one a line;
 * one answer line on stdout each:
 *   open                  -> "file I"        a new open file of /dev/lite
 *   map I NAME COUNT      -> "mapped K ERR"  up to COUNT read maps in file I;
 *                                            K made, ERR the first error
 *                                            (its errno name) or "0"
 *   unmap I               -> "unmapped ERR"  file I's last handle
 *   close I               -> "closed ERR"    file I and all its handles
 *   pending I NAME COUNT  -> "pending COUNT" COUNT threads each start one
 *                                            map in file I (they wait for
 *                                            the agent); each ends with
 *                                            "thread ERR" on stdout
 * Exits 0 at the end of its input, 2 on a command it does not know.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "kmod/include/uapi/lite.h"

#define FILES_MAX 8
#define PENDING_MAX 64
/* Handles kept per file for unmap; touched at open, not while mapping. */
#define HANDLES_KEPT 4096

struct lite_fd {
  int fd;
  uint64_t *handles;
  size_t nr;
};

static struct lite_fd files[FILES_MAX];
static int nr_files;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *errno_name(int err) {
  static const struct {
    int err;
    const char *name;
  } names[] = {
      {EDQUOT, "EDQUOT"},       {EAGAIN, "EAGAIN"}, {ENOTCONN, "ENOTCONN"},
      {ETIMEDOUT, "ETIMEDOUT"}, {EINTR, "EINTR"},   {EMFILE, "EMFILE"},
      {ENOENT, "ENOENT"},       {EACCES, "EACCES"}, {EINVAL, "EINVAL"},
      {EHOSTDOWN, "EHOSTDOWN"}, {EBADF, "EBADF"},   {ENOMEM, "ENOMEM"},
  };
  static char other[16];
  size_t i;

  if (!err) return "0";
  for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
    if (names[i].err == err) return names[i].name;
  snprintf(other, sizeof(other), "errno%d", err);
  return other;
}

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...) {
  va_list ap;

  pthread_mutex_lock(&out_lock);
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  putchar('\n');
  fflush(stdout);
  pthread_mutex_unlock(&out_lock);
}

/* One read map of @name in @fd: 0 and *handle, or an errno. */
static int map_once(int fd, const char *name, uint64_t *handle) {
  struct lite_map m;

  memset(&m, 0, sizeof(m));
  snprintf(m.name, sizeof(m.name), "%s", name);
  m.access = LITE_ACCESS_READ;
  if (ioctl(fd, LITE_IOC_MAP, &m)) return errno;
  *handle = m.handle;
  return 0;
}

static struct lite_fd *file_arg(const char *arg) {
  int i = atoi(arg);

  if (i < 0 || i >= nr_files || files[i].fd < 0) return NULL;
  return &files[i];
}

static void cmd_map(struct lite_fd *f, const char *name, long count) {
  long made = 0;
  int err = 0;

  while (made < count) {
    uint64_t handle;

    err = map_once(f->fd, name, &handle);
    if (err) break;
    if (f->nr < HANDLES_KEPT) f->handles[f->nr++] = handle;
    made++;
  }
  say("mapped %ld %s", made, errno_name(err));
}

static void cmd_unmap(struct lite_fd *f) {
  struct lite_unmap u;
  int err = ENOENT;

  if (f->nr) {
    memset(&u, 0, sizeof(u));
    u.handle = f->handles[--f->nr];
    err = ioctl(f->fd, LITE_IOC_UNMAP, &u) ? errno : 0;
  }
  say("unmapped %s", errno_name(err));
}

struct pending_arg {
  int fd;
  char name[LITE_NAME_BUF];
};

static void *pending_thread(void *p) {
  struct pending_arg *a = p;
  uint64_t handle;

  say("thread %s", errno_name(map_once(a->fd, a->name, &handle)));
  return NULL;
}

static int cmd_pending(struct lite_fd *f, const char *name, long count) {
  static struct pending_arg arg;
  pthread_t t;
  long i;

  if (count < 0 || count > PENDING_MAX) return -1;
  arg.fd = f->fd;
  snprintf(arg.name, sizeof(arg.name), "%s", name);
  for (i = 0; i < count; i++) {
    if (pthread_create(&t, NULL, pending_thread, &arg)) return -1;
    pthread_detach(t);
  }
  say("pending %ld", count);
  return 0;
}

int main(void) {
  char line[512], cmd[16], name[LITE_NAME_BUF], fdarg[16];
  long count;

  while (fgets(line, sizeof(line), stdin)) {
    struct lite_fd *f = NULL;
    int n;

    n = sscanf(line, "%15s %15s %135s %ld", cmd, fdarg, name, &count);
    if (n < 1) continue;
    if (n >= 2) f = file_arg(fdarg);
    if (!strcmp(cmd, "open") && nr_files < FILES_MAX) {
      files[nr_files].fd = open("/dev/lite", O_RDWR | O_CLOEXEC);
      /*
       * Touched now, so that mapping allocates nothing the
       * process's memcg would see beside the grants.
       */
      files[nr_files].handles = calloc(HANDLES_KEPT, sizeof(uint64_t));
      if (files[nr_files].handles)
        memset(files[nr_files].handles, 0xff, HANDLES_KEPT * sizeof(uint64_t));
      if (files[nr_files].fd < 0 || !files[nr_files].handles) {
        say("open failed: %s", strerror(errno));
        return 1;
      }
      say("file %d", nr_files++);
    } else if (!strcmp(cmd, "map") && f && n == 4) {
      cmd_map(f, name, count);
    } else if (!strcmp(cmd, "unmap") && f) {
      cmd_unmap(f);
    } else if (!strcmp(cmd, "close") && f) {
      say("closed %s", errno_name(close(f->fd) ? errno : 0));
      f->fd = -1;
      f->nr = 0;
    } else if (!strcmp(cmd, "pending") && f && n == 4 &&
               !cmd_pending(f, name, count)) {
      continue;
    } else {
      fprintf(stderr, "limits_map: bad command: %s", line);
      return 2;
    }
  }
  return 0;
}
