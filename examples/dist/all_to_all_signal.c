/* all_to_all_signal.c — host program of all_to_all_signal.py: Out[s] on rank r must be rank
 * s's Send[r], over three rounds (the signal words keep counting: round e waits for e * NB). */
#include "example.h"

int main(int argc, char **argv) {
  Ex e;
  int rc = ex_init(&e, argc, argv);
  if (rc) return rc == 1 ? 0 : rc;
  const int P = e.world, C = 65536;
  char pw[16];
  snprintf(pw, sizeof pw, "%d", P);
  ts_param p[] = {{"P", pw}, {"C", "65536"}, {"NB", "8"}};
  ts_kernel *k = ex_compile(&e, "all_to_all_signal.py", "all_to_all_signal", p, 3);
  if (!k) return 2;
  size_t n = (size_t)P * C;
  uint16_t *send = ex_sym(&e, n * 2), *recv = ex_sym(&e, n * 2), *out = ex_sym(&e, n * 2);
  uint64_t *sig = ex_sym(&e, (size_t)P * 8);
  uint16_t *h = malloc(n * 2), *want = malloc(n * 2), *got = malloc(n * 2), *other = malloc(n * 2);
  int64_t s2[2] = {P, C}, s1[1] = {P};
  for (int round = 1; round <= 3; round++) {
    ex_fill(h, n, e.seeds[e.rank] + (uint64_t)round);
    ts_memcpy_h2d(e.ctx, send, h, n * 2);
    ts_memset_d8(e.ctx, out, 0xff, n * 2);
    ts_dist_barrier(e.d, NULL);
    ts_arg args[5] = {ex_tensor(send, 2, s2), ex_tensor(recv, 2, s2), ex_tensor(out, 2, s2), ex_tensor(sig, 1, s1)};
    args[3].tensor.dtype = TS_DTYPE_UINT64;
    args[4].kind = TS_ARG_SCALAR;
    args[4].i = round;
    if (!ex_run(&e, k, args, 5)) return 1;
    ts_memcpy_d2h(e.ctx, got, out, n * 2);
    for (int s = 0; s < P; s++) {
      ex_fill(other, n, e.seeds[s] + (uint64_t)round);
      memcpy(want + (size_t)s * C, other + (size_t)e.rank * C, (size_t)C * 2);
    }
    char what[64];
    snprintf(what, sizeof what, "all-to-all with signals round %d", round);
    ex_check(&e, what, got, want, n);
  }
  ts_kernel_destroy(k);
  free(h), free(want), free(got), free(other);
  return ex_finish(&e);
}
