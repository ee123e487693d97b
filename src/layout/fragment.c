/* fragment.c — the block-fragment algebra declared in fragment.h: building block and
 * replicated layouts, deriving a buffer's layout from its loop's layout (dims the buffer
 * does not index turn into replicas; a dim it indexes by a loop var divided by a constant
 * c stands for c loop elements, fragment_derive_div), reductions, and the index
 * arithmetic that lower_tile_ops and the tests rely on.  Pure functions over small structs. */
#include "fragment.h"

static Fragment *frag_new(TsCompiler *c, int ndim, int64_t nthreads) {
  TS_ASSERT(ndim >= 0 && ndim <= FRAG_MAX_DIMS);
  Fragment *f = ARENA_NEW(c->arena, Fragment);
  f->ndim = ndim;
  f->nthreads = nthreads;
  return f;
}

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Adds one replicate field and keeps the list sorted by stride; adjacent fields that
 * tile each other (count1 * stride1 == stride2) merge, so equal layouts compare equal. */
static void add_rep(Fragment *f, int64_t count, int64_t stride) {
  if (count <= 1) return;
  TS_ASSERT(f->nrep < FRAG_MAX_DIMS + 2);
  int i = f->nrep++;
  while (i > 0 && f->rep_stride[i - 1] > stride) {
    f->rep_count[i] = f->rep_count[i - 1];
    f->rep_stride[i] = f->rep_stride[i - 1];
    i--;
  }
  f->rep_count[i] = count;
  f->rep_stride[i] = stride;
  for (int j = 0; j + 1 < f->nrep;) {
    if (f->rep_count[j] * f->rep_stride[j] == f->rep_stride[j + 1]) {
      f->rep_count[j] *= f->rep_count[j + 1];
      for (int k = j + 1; k + 1 < f->nrep; k++) {
        f->rep_count[k] = f->rep_count[k + 1];
        f->rep_stride[k] = f->rep_stride[k + 1];
      }
      f->nrep--;
    } else {
      j++;
    }
  }
}

void fragment_add_replicate(Fragment *f, int64_t count, int64_t stride) { add_rep(f, count, stride); }

Fragment *fragment_block(TsCompiler *c, int ndim, const int64_t *shape, int64_t nthreads, int64_t vec) {
  Fragment *f = frag_new(c, ndim, nthreads);
  int64_t left = nthreads, stride = 1;
  for (int k = ndim - 1; k >= 0; k--) {
    FragDim *d = &f->dim[k];
    d->extent = shape[k];
    d->vec = (k == ndim - 1 && vec > 1 && shape[k] % vec == 0) ? vec : 1;
    /* The largest power of two that fits the dim and divides the threads left: powers
     * of two keep shuffle masks simple and leave whole warps on the fastest dims. */
    int64_t want = ceil_div(shape[k], d->vec), t = 1;
    while (t * 2 <= want && left % (t * 2) == 0) t *= 2;
    /* Vectors on a row that t threads do not tile (192 halves: 16 x 8 lanes would pad a
     * second pass to 64 of 128): half the threads, when their span divides the row, leave
     * no padding, so the vector moves need no guard. */
    if (d->vec > 1 && t > 1 && shape[k] % (t * d->vec) != 0 && shape[k] % (t / 2 * d->vec) == 0) t /= 2;
    d->threads = t;
    d->tstride = t > 1 ? stride : 0;
    stride *= t;
    left /= t;
  }
  add_rep(f, left, stride);
  return f;
}

Fragment *fragment_replicated(TsCompiler *c, int ndim, const int64_t *shape, int64_t nthreads) {
  Fragment *f = frag_new(c, ndim, nthreads);
  for (int k = 0; k < ndim; k++) f->dim[k] = (FragDim){shape[k], 1, 1, 0, 1, 1, 0};
  add_rep(f, nthreads, 1);
  return f;
}

Fragment *fragment_derive(TsCompiler *c, const Fragment *loop, int ndim, const int *map) {
  return fragment_derive_held(c, loop, ndim, map, NULL);
}

Fragment *fragment_derive_held(TsCompiler *c, const Fragment *loop, int ndim, const int *map, const int64_t *held) {
  return fragment_derive_div(c, loop, ndim, map, held, NULL);
}

/* The FragDim of a buffer dim indexed by `i // c` where i runs over the loop dim `d` (see
 * fragment.h).  Buffer element x is loop elements c x .. c x + c - 1.  When V % c == 0 they
 * are c lanes of one vector: the same fields with V / c lanes, register coordinate
 * (o M + m) V/c + u/c.  When c = V r and r divides t, they are the vectors of r adjacent
 * threads: x has t / r thread coordinates at r times the stride, and the r threads of one
 * group all hold a copy (*rep_count = r at *rep_stride = the loop's thread stride); register
 * coordinate o M + m.  Anything else splits one element's loop elements unevenly over
 * threads: false. */
static bool divided_dim(const FragDim *d, int64_t c, FragDim *out, int64_t *rep_count, int64_t *rep_stride) {
  *out = *d;
  *rep_count = 1;
  *rep_stride = 0;
  if (c < 1 || d->extent % c) return false;
  out->extent = d->extent / c;
  if (d->vec % c == 0) {
    out->vec = d->vec / c;
    return true;
  }
  int64_t r = c / d->vec;
  if (c % d->vec || d->threads % r) return false;
  out->vec = 1;
  out->threads = d->threads / r;
  out->tstride = out->threads > 1 ? d->tstride * r : 0;
  *rep_count = r;
  *rep_stride = d->tstride;
  return true;
}

Fragment *fragment_derive_div(TsCompiler *c, const Fragment *loop, int ndim, const int *map, const int64_t *held,
                              const int64_t *div) {
  Fragment *f = frag_new(c, ndim, loop->nthreads);
  bool used[FRAG_MAX_DIMS] = {false};
  for (int p = 0; p < ndim; p++) {
    if (map[p] < 0) { /* not split over threads: extent 1, or a held dim in registers */
      int64_t d = map[p] == FRAG_HELD && held ? held[p] : 1;
      f->dim[p] = (FragDim){d, 1, 1, 0, 1, 1, 0};
      continue;
    }
    TS_ASSERT(map[p] < loop->ndim && !used[map[p]]);
    used[map[p]] = true;
    f->dim[p] = loop->dim[map[p]];
    if (div && div[p] > 1) {
      int64_t rc, rs;
      if (!divided_dim(&loop->dim[map[p]], div[p], &f->dim[p], &rc, &rs)) return NULL;
      add_rep(f, rc, rs);
    }
  }
  for (int i = 0; i < loop->nrep; i++) add_rep(f, loop->rep_count[i], loop->rep_stride[i]);
  for (int q = 0; q < loop->ndim; q++)
    if (!used[q]) {
      if (loop->dim[q].threads > 1) add_rep(f, loop->dim[q].threads, loop->dim[q].tstride);
      if (fragdim_t2(&loop->dim[q]) > 1) add_rep(f, fragdim_t2(&loop->dim[q]), loop->dim[q].tstride2);
    }
  return f;
}

Fragment *fragment_reduce(TsCompiler *c, const Fragment *src, int dim, bool keep_dim) {
  int map[FRAG_MAX_DIMS], n = 0;
  for (int k = 0; k < src->ndim; k++) {
    if (k == dim) {
      if (keep_dim) map[n++] = -1;
    } else {
      map[n++] = k;
    }
  }
  return fragment_derive(c, src, n, map);
}

/* Tensor-core accumulator (mma.sync m16n8 C and wgmma m64nN D have the same per-warp
 * pattern): in each 16 x 8 tile, lane l holds rows l/4 and l/4 + 8, columns 2(l%4) and
 * 2(l%4) + 1.  Rows: 8 lanes at thread stride 4, 2 registers (the +8 row), then wm warps
 * at stride 32 taking interleaved 16-row strips, then outer strips in registers.
 * Columns: pairs (vector of 2), 4 lanes at stride 1, cols/(8 wn) 8-column blocks in
 * registers, wn warp columns at stride 32 wm (contiguous column ranges).  With wgmma,
 * wm counts the warps of all warpgroups along M (4 per warpgroup), so the 4 warps of a
 * warpgroup hold one contiguous 64-row atom, as the instruction requires. */
Fragment *fragment_gemm_acc(TsCompiler *c, int64_t rows, int64_t cols, int64_t wm, int64_t wn, int64_t nthreads) {
  if (wm < 1 || wn < 1 || rows % (16 * wm) || cols % (8 * wn) || wm * wn * 32 > nthreads || nthreads % (wm * wn * 32))
    return NULL;
  Fragment *f = frag_new(c, 2, nthreads);
  f->dim[0] = (FragDim){rows, 8, 1, 4, 2, wm, 32};
  f->dim[1] = (FragDim){cols, 4, 2, 1, cols / (8 * wn), wn, 32 * wm};
  add_rep(f, nthreads / (wm * wn * 32), wm * wn * 32);
  return f;
}

Fragment *fragment_transpose2(TsCompiler *c, const Fragment *f) {
  TS_ASSERT(f->ndim == 2);
  Fragment *t = ARENA_NEW(c->arena, Fragment);
  *t = *f;
  t->dim[0] = f->dim[1];
  t->dim[1] = f->dim[0];
  return t;
}

Fragment *fragment_crop(TsCompiler *c, const Fragment *f, const int64_t *off, const int64_t *ext, int64_t *reg_off) {
  Fragment *w = ARENA_NEW(c->arena, Fragment);
  *w = *f;
  int64_t r = 0;
  for (int k = 0; k < f->ndim; k++) {
    const FragDim *d = &f->dim[k];
    int64_t vt = d->vec * d->threads, M = fragdim_mid(d), span = fragdim_span(d), l0;
    if (off[k] < 0 || ext[k] < 1 || off[k] + ext[k] > d->extent) return NULL;
    if (off[k] == 0 && ext[k] == d->extent) continue;
    if (off[k] % span == 0 && ext[k] % span == 0) {
      l0 = off[k] / span * M * d->vec; /* whole outer repetitions */
    } else if (fragdim_t2(d) == 1 && d->extent == span && off[k] % vt == 0 && ext[k] % vt == 0) {
      l0 = off[k] / vt * d->vec; /* a run of mid registers */
      w->dim[k].mid = ext[k] / vt;
    } else {
      return NULL;
    }
    w->dim[k].extent = ext[k];
    r += l0 * fragment_reg_stride(f, k);
  }
  *reg_off = r;
  return w;
}

bool fragment_equal(const Fragment *a, const Fragment *b) {
  if (a == b) return true;
  if (!a || !b || a->ndim != b->ndim || a->nthreads != b->nthreads || a->nrep != b->nrep) return false;
  for (int k = 0; k < a->ndim; k++) {
    const FragDim *x = &a->dim[k], *y = &b->dim[k];
    if (x->extent != y->extent || x->threads != y->threads || x->vec != y->vec) return false;
    if (x->threads > 1 && x->tstride != y->tstride) return false;
    if (fragdim_mid(x) != fragdim_mid(y) || fragdim_t2(x) != fragdim_t2(y)) return false;
    if (fragdim_t2(x) > 1 && x->tstride2 != y->tstride2) return false;
  }
  for (int i = 0; i < a->nrep; i++)
    if (a->rep_count[i] != b->rep_count[i] || a->rep_stride[i] != b->rep_stride[i]) return false;
  return true;
}

Fragment *fragment_restrict(TsCompiler *c, const Fragment *f, const int64_t *ext) {
  Fragment *r = ARENA_NEW(c->arena, Fragment);
  *r = *f;
  for (int k = 0; k < f->ndim; k++) {
    if (ext[k] < 1 || ext[k] > f->dim[k].extent) return NULL;
    r->dim[k].extent = ext[k];
  }
  return r;
}

/* Registers row-major over the shape: not split over threads, L_k = d_k for every dim. */
static bool is_flat(const Fragment *f) {
  if (!fragment_is_replicated(f)) return false;
  for (int k = 0; k < f->ndim; k++)
    if (fragment_local_extent(f, k) != f->dim[k].extent) return false;
  return true;
}

/* One dim of a fragment as the mixed radix of its levels, fastest first: vector lanes,
 * threads, mid registers, second-level threads, outer registers (fragment.h). */
enum { LV_VEC, LV_THR, LV_MID, LV_THR2, LV_OUT, LV_N };
typedef struct Levels {
  int64_t size[LV_N], stride[LV_N]; /* stride: thread-index stride of the thread levels */
} Levels;

/* Takes the fastest k elements' worth of levels from lv into out (a dim of extent k):
 * whole levels, and at most one level split (its low part, the rest stays in lv with a
 * thread stride scaled accordingly).  False when k does not fall on such a boundary. */
static bool take_levels(Levels *lv, int64_t k, FragDim *out) {
  *out = (FragDim){k, 1, 1, 0, 1, 1, 0};
  for (int l = 0; l < LV_N && k > 1; l++) {
    int64_t r = lv->size[l], piece;
    if (r == 1) continue;
    if (k % r == 0) piece = r;
    else if (r % k == 0) piece = k;
    else return false;
    k /= piece;
    lv->size[l] = r / piece;
    switch (l) {
      case LV_VEC: out->vec = piece; break;
      case LV_THR:
      case LV_THR2:
        /* a lone thread level takes the first thread slot; after mid registers the second */
        if (out->threads == 1 && fragdim_mid(out) == 1) {
          out->threads = piece;
          out->tstride = lv->stride[l];
        } else if (fragdim_t2(out) == 1) {
          out->threads2 = piece;
          out->tstride2 = lv->stride[l];
        } else {
          return false;
        }
        lv->stride[l] *= piece;
        break;
      case LV_MID:
        if (fragdim_t2(out) > 1) return false;
        out->mid = fragdim_mid(out) * piece;
        break;
      default: break; /* outer registers: implied by the extent */
    }
  }
  return k == 1;
}

/* Splits dim d of f into the extents ext[0..n) (outermost first; their product is d's
 * extent), writing n FragDims to out.  Only without padding, so that every register keeps
 * its index: the row-major register order over the new dims is the old (o M + m) V + u. */
static bool split_dim(const FragDim *d, const int64_t *ext, int n, FragDim *out) {
  Levels lv = {{d->vec, d->threads, fragdim_mid(d), fragdim_t2(d), 0}, {0, d->tstride, 0, d->tstride2, 0}};
  if (d->extent % fragdim_span(d)) return false;
  lv.size[LV_OUT] = d->extent / fragdim_span(d);
  for (int i = n - 1; i >= 0; i--)
    if (!take_levels(&lv, ext[i], &out[i])) return false;
  return true;
}

/* Merges dims d[0..n) (outermost first, none padded) into one dim `out`.  The merged dim's
 * levels, fastest first, are the innermost dim's, then the next one's, and so on; that is also
 * the order of the registers' row-major index (l_A L_B + l_B), so every register keeps its
 * index.  The sequence must fit one dim's V t M t2 O: at most two thread levels, registers
 * before the first one only as the innermost dim's vector, registers between the two as mid
 * registers, the rest outer registers. */
static bool merge_dims(const FragDim *d, int n, FragDim *out) {
  int64_t size[LV_N * FRAG_MAX_DIMS], stride[LV_N * FRAG_MAX_DIMS];
  int kind[LV_N * FRAG_MAX_DIMS], nl = 0, nthr = 0;
  for (int j = n - 1; j >= 0; j--) {
    const FragDim *x = &d[j];
    if (x->extent == 1) continue;
    if (x->extent % fragdim_span(x)) return false;
    const int64_t sz[LV_N] = {x->vec, x->threads, fragdim_mid(x), fragdim_t2(x), x->extent / fragdim_span(x)};
    const int64_t st[LV_N] = {0, x->tstride, 0, x->tstride2, 0};
    for (int l = 0; l < LV_N; l++) {
      if (sz[l] == 1) continue;
      int k = l == LV_THR || l == LV_THR2 ? LV_THR : l == LV_VEC && j == n - 1 ? LV_VEC : LV_OUT;
      if (k == LV_THR && nl && kind[nl - 1] == LV_THR && st[l] == stride[nl - 1] * size[nl - 1]) {
        size[nl - 1] *= sz[l]; /* the next threads right after the previous level's: one level */
        continue;
      }
      size[nl] = sz[l], stride[nl] = st[l], kind[nl++] = k;
      nthr += k == LV_THR;
    }
  }
  if (nthr > 2) return false;
  *out = (FragDim){1, 1, 1, 0, 1, 1, 0};
  int seen = 0; /* thread levels passed */
  for (int i = 0; i < nl; i++) {
    out->extent *= size[i];
    if (kind[i] == LV_THR) {
      if (seen++ == 0) out->threads = size[i], out->tstride = stride[i];
      else out->threads2 = size[i], out->tstride2 = stride[i];
    } else if (seen == 0) { /* ahead of any thread level: the vector; other registers only with no threads */
      if (kind[i] == LV_VEC) out->vec = size[i];
      else if (nthr > 0) return false;
    } else if (seen == 1 && nthr == 2) {
      out->mid = fragdim_mid(out) * size[i];
    }
  }
  return true;
}

Fragment *fragment_reshape(TsCompiler *c, const Fragment *f, int ndim, const int64_t *shape) {
  if (ndim > FRAG_MAX_DIMS) return NULL;
  int64_t n_old = 1, n_new = 1;
  for (int k = 0; k < f->ndim; k++) n_old *= f->dim[k].extent;
  for (int k = 0; k < ndim; k++) n_new *= shape[k];
  if (n_old != n_new) return NULL;
  if (is_flat(f)) return fragment_replicated(c, ndim, shape, f->nthreads); /* every thread, row-major */
  Fragment *r = frag_new(c, ndim, f->nthreads);
  int k = 0; /* next new dim */
  for (int j = 0; j < f->ndim; j++) {
    const FragDim *d = &f->dim[j];
    if (d->extent == 1) continue;
    for (; k < ndim && shape[k] == 1; k++) r->dim[k] = (FragDim){1, 1, 1, 0, 1, 1, 0};
    if (k < ndim && shape[k] > d->extent) { /* old dims j.. whose product is this new dim: a merge */
      int j0 = j;
      int64_t prod = 1;
      while (j < f->ndim && prod < shape[k]) prod *= f->dim[j++].extent;
      if (prod != shape[k] || !merge_dims(f->dim + j0, j - j0, &r->dim[k])) return NULL;
      k++, j--;
      continue;
    }
    /* the new dims whose product is this dim's extent: one (kept) or several (a split) */
    int k0 = k;
    int64_t prod = 1;
    while (k < ndim && prod < d->extent) prod *= shape[k++];
    if (prod != d->extent) return NULL;
    if (k - k0 == 1) r->dim[k0] = *d;
    else if (!split_dim(d, shape + k0, k - k0, r->dim + k0)) return NULL;
  }
  for (; k < ndim; k++) {
    if (shape[k] != 1) return NULL;
    r->dim[k] = (FragDim){1, 1, 1, 0, 1, 1, 0};
  }
  r->nrep = f->nrep;
  for (int i = 0; i < f->nrep; i++) r->rep_count[i] = f->rep_count[i], r->rep_stride[i] = f->rep_stride[i];
  return r;
}

Fragment *fragment_from_read(TsCompiler *c, const Fragment *f, int nloop, const int64_t *ext, const int *map) {
  if (fragment_is_replicated(f) || nloop > FRAG_MAX_DIMS) return NULL;
  Fragment *r = frag_new(c, nloop, f->nthreads);
  bool mapped[FRAG_MAX_DIMS] = {false};
  for (int p = 0; p < f->ndim; p++) {
    if (map[p] < 0) continue;
    if (map[p] >= nloop || mapped[map[p]] || ext[map[p]] != f->dim[p].extent) return NULL;
    mapped[map[p]] = true;
    r->dim[map[p]] = f->dim[p];
  }
  for (int q = 0; q < nloop; q++)
    if (!mapped[q]) r->dim[q] = (FragDim){ext[q], 1, 1, 0, 1, 1, 0};
  /* A replicate field becomes the thread field of a free loop dim (innermost first) whose
   * extent it divides; the rest stay replicas (each runs every iteration of its element). */
  for (int i = 0; i < f->nrep; i++) {
    int q = nloop - 1;
    while (q >= 0 && (mapped[q] || r->dim[q].threads > 1 || ext[q] % f->rep_count[i])) q--;
    if (q < 0) {
      add_rep(r, f->rep_count[i], f->rep_stride[i]);
      continue;
    }
    r->dim[q].threads = f->rep_count[i];
    r->dim[q].tstride = f->rep_stride[i];
  }
  return r;
}

int64_t fragment_shift_period(const Fragment *f, int k) {
  const FragDim *d = &f->dim[k];
  if (d->threads <= 1 && fragdim_t2(d) == 1) return 1;
  return fragdim_t2(d) > 1 ? fragdim_span(d) : d->vec * d->threads;
}

int64_t fragment_shift_divisor(const Fragment *f, int k) {
  const FragDim *d = &f->dim[k];
  return (d->threads > 1 ? d->threads : 1) * fragdim_t2(d);
}

bool fragment_is_replicated(const Fragment *f) {
  for (int k = 0; k < f->ndim; k++)
    if (f->dim[k].threads > 1 || fragdim_t2(&f->dim[k]) > 1) return false;
  return true;
}

int64_t fragment_outer(const Fragment *f, int k) { return ceil_div(f->dim[k].extent, fragdim_span(&f->dim[k])); }
int64_t fragment_local_extent(const Fragment *f, int k) {
  return fragment_outer(f, k) * fragdim_mid(&f->dim[k]) * f->dim[k].vec;
}

int64_t fragment_reg_stride(const Fragment *f, int k) {
  int64_t s = 1;
  for (int j = k + 1; j < f->ndim; j++) s *= fragment_local_extent(f, j);
  return s;
}

int64_t fragment_local_size(const Fragment *f) {
  int64_t s = 1;
  for (int k = 0; k < f->ndim; k++) s *= fragment_local_extent(f, k);
  return s;
}

int64_t fragment_replicas(const Fragment *f) {
  int64_t r = 1;
  for (int i = 0; i < f->nrep; i++) r *= f->rep_count[i];
  return r;
}

int64_t fragment_thread_of(const Fragment *f, const int64_t *idx) {
  int64_t t = 0;
  for (int k = 0; k < f->ndim; k++) {
    const FragDim *d = &f->dim[k];
    if (d->threads > 1) t += ((idx[k] / d->vec) % d->threads) * d->tstride;
    if (fragdim_t2(d) > 1) t += ((idx[k] / (d->vec * d->threads * fragdim_mid(d))) % fragdim_t2(d)) * d->tstride2;
  }
  return t;
}

int64_t fragment_reg_of(const Fragment *f, const int64_t *idx) {
  int64_t r = 0;
  for (int k = 0; k < f->ndim; k++) {
    const FragDim *d = &f->dim[k];
    int64_t M = fragdim_mid(d), m = (idx[k] / (d->vec * d->threads)) % M, o = idx[k] / fragdim_span(d);
    int64_t l = (o * M + m) * d->vec + idx[k] % d->vec;
    r += l * fragment_reg_stride(f, k);
  }
  return r;
}

void fragment_print(StrBuf *out, const Fragment *f) {
  sb_putc(out, '[');
  for (int k = 0; k < f->ndim; k++) sb_printf(out, "%s%lld", k ? "x" : "", (long long)f->dim[k].extent);
  sb_append(out, ": t(");
  for (int k = 0; k < f->ndim; k++) {
    const FragDim *d = &f->dim[k];
    sb_printf(out, "%s%lld", k ? "," : "", (long long)d->threads);
    if (d->threads > 1) sb_printf(out, "@%lld", (long long)d->tstride);
    if (fragdim_mid(d) > 1 || fragdim_t2(d) > 1) sb_printf(out, ":m%lld", (long long)fragdim_mid(d));
    if (fragdim_t2(d) > 1) sb_printf(out, ":%lld@%lld", (long long)fragdim_t2(d), (long long)d->tstride2);
  }
  sb_append(out, ")/v(");
  for (int k = 0; k < f->ndim; k++) sb_printf(out, "%s%lld", k ? "," : "", (long long)f->dim[k].vec);
  sb_putc(out, ')');
  for (int i = 0; i < f->nrep; i++)
    sb_printf(out, " rep %lld@%lld", (long long)f->rep_count[i], (long long)f->rep_stride[i]);
  sb_printf(out, " regs %lld]", (long long)fragment_local_size(f));
}
