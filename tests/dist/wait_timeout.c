/* wait_timeout.c — the child program of the wait-timeout trap test (check_wait_timeout.sh,
 * make check-dist): `tilescale launch -n 2 build/test_dist_wait_timeout MODE [dir]` with
 * TILESCALE_WAIT_TIMEOUT_MS=200, MODE one of wait, barrier, barrier_all, sync_all, signal.
 *
 * Rank 1 launches a kernel of tests/dist/timeout.py that can never finish (wait_eq or
 * signal_wait_until on a flag nobody sets; barrier_blocks, barrier_all_block or sync_all that
 * rank 0 never enters); the debug timeout must trap it, so the launch fails and rank 1 exits
 * 1.  Before launching it prints the address the trap message must name ("ts-test: flag
 * address 0x..."): the flag, the barrier buffer, or for the argument-less NVSHMEM-family
 * barriers the runtime's word for rank 0 at the start of the symmetric heap.  Rank 0 only
 * sleeps: the launcher must stop it once rank 1 failed.  If the kernel returns, rank 1 says
 * so and exits 3. */
#include "../../examples/dist/example.h"
#include "../../src/distributed/dist.h"

int main(int argc, char **argv) {
  static const char *const modes[] = {"wait", "barrier", "barrier_all", "sync_all", "signal"};
  const char *mode = argc > 1 ? argv[1] : "wait";
  int m = -1;
  for (int i = 0; i < 5; i++)
    if (!strcmp(mode, modes[i])) m = i;
  if (m < 0) {
    fprintf(stderr, "usage: %s wait|barrier|barrier_all|sync_all|signal [kernel dir]\n", argv[0]);
    return 2;
  }
  Ex e;
  int rc = ex_init(&e, 1, argv); /* the kernel directory is argv[2] here, not argv[1] */
  if (rc) return rc == 1 ? 0 : rc;
  e.dir = argc > 2 ? argv[2] : "tests/dist";
  char mode_text[16];
  snprintf(mode_text, sizeof mode_text, "%d", m);
  ts_param p[] = {{"mode", mode_text}};
  ts_kernel *k = ex_compile(&e, "timeout.py", "stuck", p, 1);
  if (!k) return 2;
  uint64_t *flag = ex_sym(&e, 16);
  int *bar = ex_sym(&e, 64 * 4);
  if (ts_dist_barrier(e.d, NULL) != TS_OK) return 2;
  if (e.rank != 1) {
    printf("ts-test: rank %d idles until the launcher stops it\n", e.rank);
    fflush(stdout);
    for (int i = 0; i < 120; i++) sleep(1);
    return 4; /* not stopped: the launcher did not react to rank 1's failure */
  }
  unsigned long long addr = (unsigned long long)(uintptr_t)&flag[1];
  if (m == 1) addr = (unsigned long long)(uintptr_t)&bar[0];
  if (m == 2 || m == 3) addr = (unsigned long long)e.d->heap; /* rank 1 waits in its word [0] for rank 0 */
  printf("ts-test: flag address %#llx\n", addr);
  fflush(stdout);
  int64_t s2 = 2, s64 = 64;
  ts_arg a[2];
  memset(a, 0, sizeof a);
  a[0].kind = a[1].kind = TS_ARG_TENSOR;
  a[0].tensor = (ts_tensor){flag, TS_DTYPE_UINT64, 1, &s2, NULL, ts_dist_env_local_rank()};
  a[1].tensor = (ts_tensor){bar, TS_DTYPE_INT32, 1, &s64, NULL, ts_dist_env_local_rank()};
  if (ts_kernel_launch(k, a, 2, NULL) != TS_OK || ts_synchronize(e.ctx) != TS_OK) {
    printf("ts-test: the launch failed as it must: %s\n", ts_last_error(e.ctx));
    fflush(stdout);
    return 1;
  }
  printf("ts-test: the kernel returned, but nothing could satisfy its %s\n", mode);
  return 3;
}
