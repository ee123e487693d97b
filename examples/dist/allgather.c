/* allgather.c — host program of allgather_putmem.py (NVSHMEM style) and
 * allgather_put_block.py (IPC style): B on every rank must be the concatenation of every
 * rank's A, for both kernels, over two rounds of fresh data. */
#include "example.h"

int main(int argc, char **argv) {
  Ex e;
  int rc = ex_init(&e, argc, argv);
  if (rc) return rc == 1 ? 0 : rc;
  const int M = 1024, N = 1024, P = e.world;
  char pw[16];
  snprintf(pw, sizeof pw, "%d", P);
  ts_param p[] = {{"M_per_rank", "1024"}, {"N", "1024"}, {"P", pw}};
  const char *files[2] = {"allgather_putmem.py", "allgather_put_block.py"};
  const char *funcs[2] = {"allgather_putmem", "allgather_put_block"};
  size_t n = (size_t)M * N;
  uint16_t *a = ex_sym(&e, n * 2), *b = ex_sym(&e, n * 2 * (size_t)P);
  uint16_t *h = malloc(n * 2), *want = malloc(n * 2 * (size_t)P), *got = malloc(n * 2 * (size_t)P);
  int64_t sa[2] = {M, N}, sb[2] = {(int64_t)M * P, N};
  for (int v = 0; v < 2; v++) {
    ts_kernel *k = ex_compile(&e, files[v], funcs[v], p, 3);
    if (!k) return 2;
    for (int round = 0; round < 2; round++) {
      ex_fill(h, n, e.seeds[e.rank] + (uint64_t)(v * 2 + round));
      ts_memcpy_h2d(e.ctx, a, h, n * 2);
      ts_memset_d8(e.ctx, b, 0xff, n * 2 * (size_t)P);
      ts_dist_barrier(e.d, NULL);
      ts_arg args[2] = {ex_tensor(a, 2, sa), ex_tensor(b, 2, sb)};
      if (!ex_run(&e, k, args, 2)) return 1;
      ts_memcpy_d2h(e.ctx, got, b, n * 2 * (size_t)P);
      for (int r = 0; r < P; r++) ex_fill(want + (size_t)r * n, n, e.seeds[r] + (uint64_t)(v * 2 + round));
      char what[128];
      snprintf(what, sizeof what, "all-gather %s round %d", funcs[v], round);
      ex_check(&e, what, got, want, n * (size_t)P);
    }
    ts_kernel_destroy(k);
  }
  free(h), free(want), free(got);
  return ex_finish(&e);
}
