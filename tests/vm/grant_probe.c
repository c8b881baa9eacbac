// grant_probe NAME: maps NAME for reading and writing through /dev/lite,
// prints "map: OK" or "map: ERRNO", then for each line on stdin:
//   r OFFSET   READ 8 bytes at OFFSET: "read: OK HEX" (the bytes, in
//              order) or "read: ERRNO"
//   w OFFSET   WRITE 8 bytes of 0x5a at OFFSET: "write: OK" or
//              "write: ERRNO"
// until EOF. For tests/vm/trust_kernel.sh, whose keymode.py answers the MAP
// upcall itself (as a compromised manager's grant would arrive) and then
// drives the grant through this process, one line per operation.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "kmod/include/uapi/lite.h"

static const char *name_of(int err) {
  const char *name = strerrorname_np(err);

  return name ? name : "unknown errno";
}

static int rw(int fd, unsigned long cmd, uint64_t handle, uint64_t offset,
              uint8_t *buf) {
  struct lite_rw op = {
      .handle = handle,
      .offset = offset,
      .buf = (uintptr_t)buf,
      .length = 8,
  };

  return ioctl(fd, cmd, &op) == 0 ? 0 : errno;
}

int main(int argc, char **argv) {
  struct lite_map m = {.access = LITE_ACCESS_READ | LITE_ACCESS_WRITE};
  char line[64], op;
  uint64_t offset;
  uint8_t buf[8];
  int fd, err, i;

  if (argc != 2) {
    fprintf(stderr, "usage: grant_probe NAME\n");
    return 2;
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  fd = open(LITE_DEVICE_PATH, O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    printf("map: %s\n", name_of(errno));
    return 1;
  }
  snprintf(m.name, sizeof(m.name), "%s", argv[1]);
  err = ioctl(fd, LITE_IOC_MAP, &m) == 0 ? 0 : errno;
  printf("map: %s\n", err ? name_of(err) : "OK");
  while (!err && fgets(line, sizeof(line), stdin)) {
    if (sscanf(line, " %c %" SCNu64, &op, &offset) != 2 ||
        (op != 'r' && op != 'w')) {
      printf("bad line: %s", line);
      continue;
    }
    if (op == 'w') {
      memset(buf, 0x5a, sizeof(buf));
      err = rw(fd, LITE_IOC_WRITE, m.handle, offset, buf);
      printf("write: %s\n", err ? name_of(err) : "OK");
    } else {
      memset(buf, 0, sizeof(buf));
      err = rw(fd, LITE_IOC_READ, m.handle, offset, buf);
      if (err) {
        printf("read: %s\n", name_of(err));
      } else {
        printf("read: OK ");
        for (i = 0; i < 8; i++) printf("%02x", buf[i]);
        printf("\n");
      }
    }
    err = 0;  // the next line is tried too: each operation is reported
  }
  close(fd);
  return 0;
}
