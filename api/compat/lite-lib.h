/*
 * The original LITE userspace API (lite-userspace/lite-lib.h of the first
 * LITE), implemented on libLITE: a program written for it builds against
 * this header and //api/compat:lite_v0 with only its include path and link
 * line changed. Names, argument types and return conventions are the
 * original's; docs/compat.md lists every function, what it maps to and
 * every difference.
 *
 * Conventions (the original's: each call was one syscall()):
 *  - a call that fails returns -1 and sets errno (EINVAL, EACCES, ...);
 *    lite_v0_message() then says why in words. userspace_liteapi_
 *    alloc_memory() returns NULL instead.
 *  - lite_handler values ("handlers") are small positive integers, valid in
 *    the process that got them; node numbers are the cluster manager's node
 *    ids (what `litectl nodes` shows).
 *  - every call may be made from any thread.
 */
#ifndef FIT_TEST
#define FIT_TEST

/* The original header brought these in; programs written for it rely on
 * them (pthread_setaffinity_np, CPU_SET and syscall need _GNU_SOURCE). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#ifndef __cplusplus
/* The original's; C only (C++ has std::max, which a macro would break). */
#define max(x, y) ({ (x) > (y) ? (x) : (y); })
#endif

#define IMM_SEND_ONLY_FLAG 0xffffffffffffffff

struct lmr_info {
  void *addr;
  size_t length;
  uint32_t lkey;
  uint32_t rkey;
  uint32_t node_id;
};

struct lite_lock_form {
  int lock_num;
  struct lmr_info lock_mr;
  uint64_t ticket_num;
};
typedef struct lite_lock_form remote_spinlock_t;

struct reply_struct {
  void *addr;
  int size;
  uintptr_t descriptor;
};

struct receive_struct {
  unsigned int designed_port;
  void *ret_addr;
  int receive_size;
  void *descriptor;
  int block_call;
};

#define __ACTIVE_NODES 3
/* Messages and replies are shorter than this (the original's bound). */
#define LIMITATION 1024 * 1024 * 4
#ifndef PAGE_SHIFT
#define PAGE_SHIFT 12
#endif

/* Ports are 0 .. IMM_MAX_PORT - 1. */
#define IMM_MAX_PORT 64
#define IMM_MAX_PORT_BIT 6
#define IMM_MAX_PRIORITY 64
#define IMM_MAX_PRIORITY_BIT 6

#define SEND_REPLY_WAIT -101

#define CHECK_LENGTH 100000

#define USERSPACE_HIGH_PRIORITY 16
#define USERSPACE_LOW_PRIORITY 17
#define NULL_PRIORITY 0

enum permission_mode {
  MR_READ_FLAG = 0x01,
  MR_WRITE_FLAG = 0x02,
  MR_SHARE_FLAG = 0x04,
  MR_ADMIN_FLAG = 0x08,
  MR_ATOMIC_FLAG = 0x10,
  MR_ASK_SUCCESS = 0,
  MR_ASK_REFUSE = 1,
  MR_ASK_UNPERMITTED = 2,
  MR_ASK_HANDLER_ERROR = 3,
  MR_ASK_UNKNOWN = 4
};
#define BLOCK_CALL 1

#ifdef __cplusplus
extern "C" {
#endif

/* Membership. */
int userspace_liteapi_join(char *input_str, int eth_port, int ib_port);
int userspace_liteapi_get_node_id(void);
int userspace_liteapi_get_total_node(void);

/* Memory. */
int userspace_liteapi_alloc_remote_mem(unsigned int node_id, unsigned int size,
                                       bool atomic_flag, int password);
int userspace_liteapi_wrap_alloc(void *data, int size, uint64_t identifier,
                                 int password);
int userspace_liteapi_add_ask_mr_table(uint64_t identifier, uint64_t lmr,
                                       uint64_t permission, int password);
int userspace_liteapi_ask_lmr(int memory_node, uint64_t identifier,
                              uint64_t permission, int password);
int userspace_liteapi_rdma_read(unsigned lite_handler, void *local_addr,
                                unsigned int size, unsigned int offset,
                                int password);
int userspace_liteapi_rdma_read_high(unsigned lite_handler, void *local_addr,
                                     unsigned int size, unsigned int offset,
                                     int password);
int userspace_liteapi_rdma_read_low(unsigned lite_handler, void *local_addr,
                                    unsigned int size, unsigned int offset,
                                    int password);
int userspace_liteapi_rdma_write(unsigned lite_handler, void *local_addr,
                                 unsigned int size, unsigned int offset,
                                 int password);
int userspace_liteapi_rdma_write_high(unsigned lite_handler, void *local_addr,
                                      unsigned int size, unsigned int offset,
                                      int password);
int userspace_liteapi_rdma_write_low(unsigned lite_handler, void *local_addr,
                                     unsigned int size, unsigned int offset,
                                     int password);
int userspace_liteapi_memset(unsigned lite_handler, int offset, int size);
int userspace_liteapi_remote_memset(unsigned lite_handler, int offset,
                                    int size);
int userspace_liteapi_fetch_add(unsigned long lite_handler, void *local_addr,
                                unsigned long long input_value);
int userspace_liteapi_compare_swp(unsigned long lite_handler, void *local_addr,
                                  unsigned long long guess_value,
                                  unsigned long long set_value);
void *userspace_liteapi_alloc_memory(unsigned long size);

/* RPC and messages. */
int userspace_liteapi_register_application(unsigned int destined_port,
                                           unsigned int max_size_per_message,
                                           unsigned int max_user_per_node,
                                           char *name, uint64_t name_len);
int userspace_liteapi_query_port(int target_node, int designed_port);
int userspace_liteapi_send_reply_imm(int target_node, unsigned int port,
                                     void *addr, int size, void *ret_addr,
                                     int max_ret_size);
int userspace_liteapi_send_reply_imm_high(int target_node, unsigned int port,
                                          void *addr, int size, void *ret_addr,
                                          int max_ret_size);
int userspace_liteapi_send_reply_imm_low(int target_node, unsigned int port,
                                         void *addr, int size, void *ret_addr,
                                         int max_ret_size);
int userspace_liteapi_send_reply_imm_fast(int target_node, unsigned int port,
                                          void *addr, int size, void *ret_addr,
                                          int *ret_length, int max_ret_size);
int userspace_liteapi_send(int target_node, unsigned int port, void *addr,
                           int size);
int userspace_liteapi_receive_message(unsigned int port, void *ret_addr,
                                      int receive_size, uintptr_t *descriptor,
                                      int block_call);
int userspace_liteapi_receive_message_high(unsigned int port, void *ret_addr,
                                           int receive_size,
                                           uintptr_t *descriptor,
                                           int block_call);
int userspace_liteapi_receive_message_low(unsigned int port, void *ret_addr,
                                          int receive_size,
                                          uintptr_t *descriptor,
                                          int block_call);
int userspace_liteapi_receive_message_fast(unsigned int port, void *ret_addr,
                                           int receive_size,
                                           uintptr_t *descriptor,
                                           int *ret_length, int block_call);
double userspace_liteapi_receive_message_fast_record(
    unsigned int port, void *ret_addr, int receive_size, uintptr_t *descriptor,
    int *ret_length, int block_call);
int userspace_liteapi_reply_message(void *addr, int size, uintptr_t descriptor);
int userspace_liteapi_reply_message_high(void *addr, int size,
                                         uintptr_t descriptor);
int userspace_liteapi_reply_message_low(void *addr, int size,
                                        uintptr_t descriptor);
int userspace_liteapi_reply_and_receive_message(
    void *addr, int size, uintptr_t descriptor, unsigned int port,
    void *ret_addr, int receive_size, uintptr_t *receive_descriptor);

/* Locks and barriers. */
int userspace_liteapi_create_lock(int target_node, remote_spinlock_t *input);
int userspace_liteapi_ask_lock(int target_node, int target_idx,
                               remote_spinlock_t *input);
int userspace_liteapi_lock(remote_spinlock_t *input);
int userspace_liteapi_unlock(remote_spinlock_t *input);
int userspace_liteapi_dist_barrier(unsigned int num);

/* Other. */
int userspace_syscall_test(void);
int stick_this_thread_to_core(int core_id);

/* Not in the original: why the calling thread's last failed call failed
 * ("" when nothing more than errno is known). */
const char *lite_v0_message(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* FIT_TEST */
