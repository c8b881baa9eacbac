// v0_rpc: an RPC server and its callers on the original LITE API, written
// only against lite-lib.h, for tests/vm/compat.sh.
//
//   v0_rpc serve PORT THREADS CALLS MESSAGES
//       registers PORT; THREADS threads answer calls with the request's
//       bytes reversed (half of them with reply_and_receive_message) until
//       CALLS calls and MESSAGES one-way messages have come, from all
//       callers together (the first request is received into a buffer too
//       small first: ENOBUFS, and it must still be served); prints "ready"
//       once registered and "served=C messages=M" at the end
//   v0_rpc call NODE PORT THREADS CALLS MESSAGES
//       THREADS threads x CALLS send_reply_imm (sizes 1..200, every reply
//       checked), then MESSAGES one-way userspace_liteapi_send; and
//       query_port of a port nobody registered
//   v0_rpc squatted NODE PORT
//       another user on another node registered "node NODE, port PORT"
//       first (review cp-2026-11-28 M5): query_port, send_reply_imm and
//       send refuse it (EACCES) and send nothing
//
// Exit status: the number of failed checks (100: at most).
#include "v0_check.h"

static unsigned port;
static int total_calls, total_messages;
static int served, messages; /* atomics */
static long bad_replies;     /* atomic */

static void reverse(const char *in, char *out, int len) {
  for (int i = 0; i < len; i++) out[i] = in[len - 1 - i];
}

static int done(void) {
  return __atomic_load_n(&served, __ATOMIC_RELAXED) >= total_calls &&
         __atomic_load_n(&messages, __ATOMIC_RELAXED) >= total_messages;
}

static void *server_thread(void *arg) {
  int fused = (int)(long)arg;
  char in[256], out[256];
  uintptr_t d = 0, next = 0;
  int len;
  long bad = 0;

  len = userspace_liteapi_receive_message(port, in, sizeof(in), &d, BLOCK_CALL);
  while (len >= 0) {
    if (d == (uintptr_t)IMM_SEND_ONLY_FLAG) {
      /* A one-way message: nothing to answer. */
      __atomic_add_fetch(&messages, 1, __ATOMIC_RELAXED);
      if (done()) break;
      len = userspace_liteapi_receive_message(port, in, sizeof(in), &d,
                                              BLOCK_CALL);
      continue;
    }
    reverse(in, out, len);
    if (__atomic_add_fetch(&served, 1, __ATOMIC_RELAXED) >= total_calls &&
        done()) {
      bad += userspace_liteapi_reply_message(out, len, d) != 0;
      break;
    }
    if (fused) {
      len = userspace_liteapi_reply_and_receive_message(out, len, d, port, in,
                                                        sizeof(in), &next);
      d = next;
    } else {
      bad += userspace_liteapi_reply_message(out, len, d) != 0;
      len = userspace_liteapi_receive_message(port, in, sizeof(in), &d,
                                              BLOCK_CALL);
    }
  }
  __atomic_add_fetch(&bad_replies, bad, __ATOMIC_RELAXED);
  return NULL;
}

static int serve(int threads) {
  pthread_t tid;
  char name[] = "v0-echo";

  CHECK_FAILS(userspace_liteapi_register_application(IMM_MAX_PORT, 256, 8, name,
                                                     sizeof(name)),
              EINVAL, "a port over IMM_MAX_PORT is refused");
  CHECK(userspace_liteapi_register_application(port, 256, 8, name,
                                               sizeof(name)) == 0,
        "register_application(port %u)", port);
  printf("ready\n");
  fflush(stdout);
  {
    /* The first request, into no room at all: refused, and kept for the
     * threads below (the exact count at the end shows nothing was lost). */
    char none[1];
    uintptr_t d = 0;

    CHECK_FAILS(
        userspace_liteapi_receive_message(port, none, 0, &d, BLOCK_CALL),
        ENOBUFS, "a request longer than the buffer: ENOBUFS, kept");
  }
  for (int t = 0; t < threads; t++)
    pthread_create(&tid, NULL, server_thread, (void *)(long)(t % 2));
  while (!done()) usleep(100000);
  printf("served=%d messages=%d\n", served, messages);
  CHECK(__atomic_load_n(&bad_replies, __ATOMIC_RELAXED) == 0,
        "every reply_message succeeded");
  /* The other threads still wait in receive_message (BLOCK_CALL): end the
   * process without running exit handlers under them; closing the file
   * unregisters the port. */
  fflush(stdout);
  _exit(v0_exit());
}

static int node;

static void *caller_thread(void *arg) {
  char req[200], want[200], reply[256];
  long bad = 0;

  (void)arg;
  for (int i = 0; i < total_calls; i++) {
    int len = 1 + (i * 37) % 200;
    for (int k = 0; k < len; k++) req[k] = (char)(i + k * 3);
    reverse(req, want, len);
    int got = userspace_liteapi_send_reply_imm(node, port, req, len, reply,
                                               sizeof(reply));
    if (got != len || memcmp(reply, want, len) != 0) bad++;
  }
  return (void *)bad;
}

static int call(int threads) {
  pthread_t tids[64];
  long bad, total_bad = 0;
  char msg[16] = "one-way";

  CHECK(userspace_liteapi_query_port(node, port) == 0,
        "query_port(node %d, port %u)", node, port);
  CHECK_FAILS(userspace_liteapi_query_port(node, port + 1), ENOENT,
              "query_port of a port nobody registered");
  for (int t = 0; t < threads; t++)
    pthread_create(&tids[t], NULL, caller_thread, NULL);
  for (int t = 0; t < threads; t++) {
    pthread_join(tids[t], (void **)&bad);
    total_bad += bad;
  }
  CHECK(total_bad == 0, "%d threads x %d calls, every reply right (%ld wrong)",
        threads, total_calls, total_bad);
  for (int i = 0; i < total_messages; i++)
    total_bad += userspace_liteapi_send(node, port, msg, sizeof(msg)) != 0;
  CHECK(total_bad == 0, "%d one-way messages sent", total_messages);
  return v0_exit();
}

/* Port `port` of `node` is served by another user on another node. */
static int squatted(void) {
  char req[8] = "secret", reply[64];

  CHECK_FAILS(userspace_liteapi_query_port(node, port), EACCES,
              "query_port(node %d, port %u), served on another node, is "
              "refused",
              node, port);
  CHECK_FAILS(userspace_liteapi_send_reply_imm(node, port, req, sizeof(req),
                                               reply, sizeof(reply)),
              EACCES, "send_reply_imm to it is refused, nothing sent");
  CHECK_FAILS(userspace_liteapi_send(node, port, req, sizeof(req)), EACCES,
              "send to it is refused, nothing sent");
  return v0_exit();
}

int main(int argc, char **argv) {
  if (argc == 6 && strcmp(argv[1], "serve") == 0) {
    port = (unsigned)atoi(argv[2]);
    total_calls = atoi(argv[4]);
    total_messages = atoi(argv[5]);
    return serve(atoi(argv[3]));
  }
  if (argc == 7 && strcmp(argv[1], "call") == 0) {
    node = atoi(argv[2]);
    port = (unsigned)atoi(argv[3]);
    total_calls = atoi(argv[5]);
    total_messages = atoi(argv[6]);
    return call(atoi(argv[4]));
  }
  if (argc == 4 && strcmp(argv[1], "squatted") == 0) {
    node = atoi(argv[2]);
    port = (unsigned)atoi(argv[3]);
    return squatted();
  }
  fprintf(stderr, "usage: see the comment at the top of v0_rpc.c\n");
  return 100;
}
