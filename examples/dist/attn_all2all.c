/* attn_all2all.c — host program of pre_attn_all2all.py ([B,H,S/P,D] -> [B,H/P,S,D]) and
 * post_attn_all2all_transpose.py ([B,H/P,S,D] -> [B,S/P,H,D]), each checked against the
 * index arithmetic of the data movement on the CPU. */
#include "example.h"

enum { B = 2, H = 16, S = 256, D = 64 };

int main(int argc, char **argv) {
  Ex e;
  int rc = ex_init(&e, argc, argv);
  if (rc) return rc == 1 ? 0 : rc;
  const int P = e.world, HP = H / P, SP = S / P;
  char pw[16];
  snprintf(pw, sizeof pw, "%d", P);
  ts_param p[] = {{"B", "2"}, {"H", "16"}, {"S", "256"}, {"D", "64"}, {"P", pw}};
  size_t n = (size_t)B * H * SP * D; /* elements per rank, both layouts */
  uint16_t *in = ex_sym(&e, n * 2), *out = ex_sym(&e, n * 2);
  uint16_t *h = malloc(n * 2), *want = malloc(n * 2), *got = malloc(n * 2), *other = malloc(n * 2);

  /* pre: In[b, h, s', d] of rank r -> Out[b, h % HP, r * SP + s', d] on rank h / HP */
  ts_kernel *k = ex_compile(&e, "pre_attn_all2all.py", "pre_attn_all2all", p, 5);
  if (!k) return 2;
  ex_fill(h, n, e.seeds[e.rank] + 11);
  ts_memcpy_h2d(e.ctx, in, h, n * 2);
  ts_memset_d8(e.ctx, out, 0xff, n * 2);
  ts_dist_barrier(e.d, NULL);
  int64_t si[4] = {B, H, SP, D}, so[4] = {B, HP, S, D};
  ts_arg args[2] = {ex_tensor(in, 4, si), ex_tensor(out, 4, so)};
  if (!ex_run(&e, k, args, 2)) return 1;
  ts_memcpy_d2h(e.ctx, got, out, n * 2);
  for (int r = 0; r < P; r++) {
    ex_fill(other, n, e.seeds[r] + 11);
    for (int b = 0; b < B; b++)
      for (int hh = 0; hh < HP; hh++)
        for (int s = 0; s < SP; s++)
          memcpy(want + (((size_t)b * HP + hh) * S + (size_t)r * SP + s) * D,
                 other + (((size_t)b * H + (size_t)e.rank * HP + hh) * SP + s) * D, D * 2);
  }
  ex_check(&e, "pre-attention all-to-all [B,H,S/P,D] -> [B,H/P,S,D]", got, want, n);
  ts_kernel_destroy(k);

  /* post: In[b, h', s, d] of rank r -> Out[b, s % SP, r * HP + h', d] on rank s / SP */
  k = ex_compile(&e, "post_attn_all2all_transpose.py", "post_attn_all2all_transpose", p, 5);
  if (!k) return 2;
  ex_fill(h, n, e.seeds[e.rank] + 12);
  ts_memcpy_h2d(e.ctx, in, h, n * 2);
  ts_memset_d8(e.ctx, out, 0xff, n * 2);
  ts_dist_barrier(e.d, NULL);
  int64_t pi[4] = {B, HP, S, D}, po[4] = {B, SP, H, D};
  ts_arg args2[2] = {ex_tensor(in, 4, pi), ex_tensor(out, 4, po)};
  if (!ex_run(&e, k, args2, 2)) return 1;
  ts_memcpy_d2h(e.ctx, got, out, n * 2);
  for (int r = 0; r < P; r++) {
    ex_fill(other, n, e.seeds[r] + 12);
    for (int b = 0; b < B; b++)
      for (int hh = 0; hh < HP; hh++)
        for (int s = 0; s < SP; s++)
          memcpy(want + (((size_t)b * SP + s) * H + (size_t)r * HP + hh) * D,
                 other + (((size_t)b * HP + hh) * S + (size_t)e.rank * SP + s) * D, D * 2);
  }
  ex_check(&e, "post-attention all-to-all with transpose [B,H/P,S,D] -> [B,S/P,H,D]", got, want, n);
  ts_kernel_destroy(k);
  free(h), free(want), free(got), free(other);
  return ex_finish(&e);
}
