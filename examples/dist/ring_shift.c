/* ring_shift.c — host program of ring_shift.py: rank r's tile must arrive at rank r+1. */
#include "example.h"

int main(int argc, char **argv) {
  Ex e;
  int rc = ex_init(&e, argc, argv);
  if (rc) return rc == 1 ? 0 : rc;
  const int M = 256, N = 128;
  ts_param p[] = {{"M", "256"}, {"N", "128"}, {"block_M", "16"}};
  ts_kernel *k = ex_compile(&e, "ring_shift.py", "ring_shift", p, 3);
  if (!k) return 2;
  size_t n = (size_t)M * N;
  uint16_t *a = ex_sym(&e, n * 2), *b = ex_sym(&e, n * 2);
  uint16_t *h = malloc(n * 2), *want = malloc(n * 2), *got = malloc(n * 2);
  ex_fill(h, n, e.seeds[e.rank]);
  ts_memcpy_h2d(e.ctx, a, h, n * 2);
  ts_memset_d8(e.ctx, b, 0xff, n * 2);
  ts_dist_barrier(e.d, NULL);
  int64_t shape[2] = {M, N};
  ts_arg args[2] = {ex_tensor(a, 2, shape), ex_tensor(b, 2, shape)};
  if (!ex_run(&e, k, args, 2)) return 1;
  ts_memcpy_d2h(e.ctx, got, b, n * 2);
  ex_fill(want, n, e.seeds[(e.rank + e.world - 1) % e.world]);
  ex_check(&e, "ring shift", got, want, n);
  ts_kernel_destroy(k);
  free(h), free(want), free(got);
  return ex_finish(&e);
}
