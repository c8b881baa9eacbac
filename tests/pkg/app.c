/*
 * An application as a user builds it against the installed liblite-dev:
 *   cc app.c $(pkg-config --cflags --libs lite)
 * (tests/pkg/build_apps.sh). It allocates an LMR on node HOME, writes,
 * reads back, adds atomically and frees it. Exit 0 when all of it worked.
 *   app NAME HOME
 */
#include <lite/lite.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  struct lite_ctx *ctx;
  lite_handle_t h;
  char in[16] = {0};
  uint64_t old = 0;
  uint32_t home;
  int rc;

  if (argc != 3) {
    fprintf(stderr, "usage: app NAME HOME_NODE_NAME\n");
    return 2;
  }
  if ((rc = lite_open(NULL, &ctx)) != 0 ||
      (rc = lite_node_lookup(ctx, argv[2], &home)) != 0 ||
      (rc = lite_alloc(ctx, argv[1], 4096, 0600, home, NULL)) != 0 ||
      (rc = lite_map(ctx, argv[1], LITE_ACCESS_READ | LITE_ACCESS_WRITE, &h,
                     NULL)) != 0 ||
      (rc = lite_write(ctx, h, 64, "from C", 7)) != 0 ||
      (rc = lite_read(ctx, h, 64, in, 7)) != 0 ||
      (rc = lite_faa(ctx, h, 0, 5, &old)) != 0 ||
      (rc = lite_faa(ctx, h, 0, 5, &old)) != 0) {
    fprintf(stderr, "app: %s (%s)\n", lite_errno_name(rc), lite_message());
    return 1;
  }
  printf("C app: read back \"%s\", counter was %llu, on %s\n", in,
         (unsigned long long)old, argv[2]);
  lite_unmap(ctx, h);
  rc = lite_free(ctx, argv[1]);
  lite_close(ctx);
  return strcmp(in, "from C") == 0 && old == 5 && rc == 0 ? 0 : 1;
}
