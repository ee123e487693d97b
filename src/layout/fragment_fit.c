/* fragment_fit.c — a user's T.Fragment (forward_fn: element -> thread) as a block fragment.
 *
 *   front/builtins_layout.c evaluates the map on every element  ->  fragment_fit  ->
 *   IrBuffer.fragment, pinned before pass/layout_inference.c
 *
 * The block model (fragment.h) places element i on thread sum_k g_k(i_k) + replicas, each g_k
 * of the two-level form ((x / V) % t) s + ((x / (V t M)) % t2) s2.  A map is taken when its
 * thread function is of that form: additive over the dims, each dim's g_k read off its values
 * (V: elements before the first step, s and t: the first level's steps, M: the repetitions of
 * that run before a second level, s2 and t2: the second level's) and then checked on every
 * element.  Replica r adds r * stride (one replicate field); threads the map leaves unused
 * (fewer than the block's) hold copies too, as a replicate field above the map's highest
 * thread.  Which register holds an element is this model's, not the map's local index:
 * registers are private to their thread, so only the thread of each element is observable. */
#include <string.h>

#include "fragment.h"

/* g[x] for x < d as one FragDim, or false. */
static bool fit_dim(const int64_t *g, int64_t d, FragDim *fd) {
  memset(fd, 0, sizeof *fd);
  fd->extent = d;
  fd->vec = 1;
  fd->threads = 1;
  if (g[0] != 0) return false;
  int64_t V = 1;
  while (V < d && g[V] == 0) V++;
  if (V < d) {
    int64_t s = g[V], t = 1;
    if (s <= 0) return false;
    while (t * V < d && g[t * V] == t * s) t++;
    int64_t span = V * t, M = 1;
    while (M * span < d && g[M * span] == 0) M++;
    *fd = (FragDim){d, t, V, s, 1, 1, 0};
    if (M * span < d) { /* a second level of threads after M runs of the first */
      int64_t s2 = g[M * span], t2 = 1;
      if (s2 <= 0) return false;
      while (t2 * M * span < d && g[t2 * M * span] == t2 * s2) t2++;
      *fd = (FragDim){d, t, V, s, M, t2, s2};
    }
  }
  for (int64_t x = 0; x < d; x++) {
    int64_t c1 = (x / fd->vec) % fd->threads, c2 = (x / (fd->vec * fd->threads * fragdim_mid(fd))) % fragdim_t2(fd);
    if (g[x] != c1 * fd->tstride + c2 * fd->tstride2) return false;
  }
  return true;
}

/* The thread and replicate fields of f, sorted by stride, are one mixed radix of
 * [0, total) (fragment.h: total = nthreads): stride 1 first, each next stride the product
 * before it. */
static bool dense(const Fragment *f, int64_t total) {
  int64_t cnt[3 * FRAG_MAX_DIMS + 2], str[3 * FRAG_MAX_DIMS + 2];
  int n = 0;
  for (int k = 0; k < f->ndim; k++) {
    const FragDim *d = &f->dim[k];
    if (d->threads > 1) cnt[n] = d->threads, str[n++] = d->tstride;
    if (fragdim_t2(d) > 1) cnt[n] = fragdim_t2(d), str[n++] = d->tstride2;
  }
  for (int i = 0; i < f->nrep; i++) cnt[n] = f->rep_count[i], str[n++] = f->rep_stride[i];
  for (int i = 1; i < n; i++) /* insertion sort by stride */
    for (int j = i; j > 0 && str[j - 1] > str[j]; j--) {
      int64_t a = cnt[j], b = str[j];
      cnt[j] = cnt[j - 1], str[j] = str[j - 1], cnt[j - 1] = a, str[j - 1] = b;
    }
  int64_t next = 1;
  for (int i = 0; i < n; i++) {
    if (str[i] != next) return false;
    next *= cnt[i];
  }
  return next == total;
}

/* The per-dim thread functions of f, g[k][x] = f(x e_k) (the other dims at 0, replica 0). */
static bool dim_functions(TsCompiler *c, int ndim, const int64_t *shape, FragmentMapFn fn, void *ctx, int64_t **g) {
  int64_t idx[FRAG_MAX_DIMS] = {0};
  for (int k = 0; k < ndim; k++) {
    g[k] = ARENA_ARRAY(c->arena, int64_t, shape[k]);
    for (int64_t x = 0; x < shape[k]; x++) {
      idx[k] = x;
      if (!fn(ctx, idx, 0, &g[k][x])) return false;
    }
    idx[k] = 0;
  }
  return true;
}

Fragment *fragment_fit(TsCompiler *c, int ndim, const int64_t *shape, int64_t nthreads, int64_t replicate,
                       FragmentMapFn fn, void *ctx, const char **why) {
  int64_t *g[FRAG_MAX_DIMS], total = 1;
  *why = NULL;
  for (int k = 0; k < ndim; k++) total *= shape[k];
  if (ndim < 1 || ndim > FRAG_MAX_DIMS || total > (1 << 22) || replicate < 1) {
    *why = "the shape must have 1 to 8 dims and at most 2^22 elements";
    return NULL;
  }
  int64_t first, origin[FRAG_MAX_DIMS] = {0};
  if (!fn(ctx, origin, 0, &first)) return NULL;
  if (first != 0) {
    *why = arena_printf(c->arena, "its first element is on thread %lld; a layout starts at thread 0 (threads from an "
                                  "offset are not supported)", (long long)first);
    return NULL;
  }
  if (!dim_functions(c, ndim, shape, fn, ctx, g)) return NULL;
  Fragment *f = ARENA_NEW(c->arena, Fragment);
  memset(f, 0, sizeof *f);
  f->ndim = ndim;
  f->nthreads = nthreads;
  int64_t used = 1; /* one past the highest thread the map names */
  for (int k = 0; k < ndim; k++) {
    if (!fit_dim(g[k], shape[k], &f->dim[k])) {
      *why = arena_printf(c->arena, "along dim %d its threads (%lld, %lld, ...) do not follow a block layout "
                                    "(V contiguous elements per thread, threads at a constant stride, then repeats)",
                          k, (long long)g[k][0], (long long)(shape[k] > 1 ? g[k][1] : 0));
      return NULL;
    }
    int64_t hi = 0;
    for (int64_t x = 0; x < shape[k]; x++) hi = g[k][x] > hi ? g[k][x] : hi;
    used += hi;
  }
  /* a last dim held whole by each thread: its registers in runs of up to 4 (the same
   * registers; lowering may then move each run as one vector access) */
  FragDim *last = &f->dim[ndim - 1];
  if (ndim >= 2 && last->threads == 1 && fragdim_t2(last) == 1) {
    last->vec = 4;
    while (shape[ndim - 1] % last->vec) last->vec /= 2;
  }
  int64_t r1 = 0; /* the thread of replica 1 of the first element: the replicas' stride */
  if (replicate > 1) {
    if (!fn(ctx, origin, 1, &r1)) return NULL;
    for (int64_t r = 0; r < replicate; r++) {
      int64_t t;
      if (!fn(ctx, origin, r, &t)) return NULL;
      if (t != r * r1 || r1 <= 0) {
        *why = "replica r must sit at r times the thread of replica 1";
        return NULL;
      }
    }
    fragment_add_replicate(f, replicate, r1);
    used += (replicate - 1) * r1;
  }
  /* every element and replica where the model says */
  int64_t idx[FRAG_MAX_DIMS] = {0};
  for (int64_t e = 0; e < total; e++) {
    for (int k = ndim - 1, rest = e; k >= 0; k--) idx[k] = rest % shape[k], rest /= shape[k];
    for (int64_t r = 0; r < replicate; r += replicate > 1 ? replicate - 1 : 1) {
      int64_t t;
      if (!fn(ctx, idx, r, &t)) return NULL;
      if (t != fragment_thread_of(f, idx) + r * r1) {
        *why = "its thread is not the sum of one thread offset per dim";
        return NULL;
      }
      if (t < 0 || t >= nthreads) {
        *why = arena_printf(c->arena, "it names thread %lld of a block of %lld", (long long)t, (long long)nthreads);
        return NULL;
      }
    }
  }
  if (!dense(f, used)) {
    *why = "its threads leave gaps (every thread below its highest must hold elements)";
    return NULL;
  }
  if (nthreads % used) {
    *why = arena_printf(c->arena, "its %lld threads do not divide the block's %lld", (long long)used,
                        (long long)nthreads);
    return NULL;
  }
  fragment_add_replicate(f, nthreads / used, used); /* threads it leaves out hold copies */
  return f;
}
