/* index_map.c — T.Layout index maps on global tensors (index_map.h): the output box, the
 * bijection check, and the physical offset of an access. */
#include "index_map.h"

#include "../ir/analysis.h"

/* Bounds a map output must stay under to count as bounded for any input extent (an output
 * such as 4 * (l % 8) + d % 2 does not grow with the shape). */
static const int64_t UNBOUNDED_INPUT = (int64_t)1 << 40, BOUNDED_OUTPUT = (int64_t)1 << 31;
/* Largest group of inputs checked element by element (a bit per box position). */
static const int64_t ENUMERATE_MAX = (int64_t)1 << 22;

static IrExpr *extent_const(TsCompiler *c, int64_t v) {
  return ir_int(c, v, v > INT32_MAX ? TS_DTYPE_INT64 : TS_DTYPE_INT32, SRCLOC_NONE);
}

static int input_of(const IndexMap *m, const IrExpr *e) {
  if (e->kind != IR_VAR) return -1;
  for (int k = 0; k < m->nin; k++)
    if (m->in[k] == e->u.var) return k;
  return -1;
}

/* The extent of output e when the input extents are symbolic: i_k or i_k // c. */
static IrExpr *symbolic_extent(TsCompiler *c, const IndexMap *m, const IrExpr *e) {
  int k = input_of(m, e);
  if (k >= 0) return m->in_shape[k];
  int64_t d;
  if (e->kind == IR_FLOORDIV && (k = input_of(m, e->u.ops[0])) >= 0 && ir_is_const_int(e->u.ops[1], &d) &&
      d > 0) {
    IrExpr *n = m->in_shape[k];
    return ir_binary(c, IR_FLOORDIV, ir_binary(c, IR_ADD, n, extent_const(c, d - 1), SRCLOC_NONE),
                     extent_const(c, d), SRCLOC_NONE);
  }
  return NULL;
}

/* val[0..nin) = input tuple number n of a shape of extents ext, the last input fastest. */
static void input_tuple(const int64_t *ext, int nin, int64_t n, int64_t *val) {
  for (int k = nin - 1; k >= 0; k--) {
    val[k] = n % ext[k];
    n /= ext[k];
  }
}

/* The range of output e over every input of a constant shape of at most 2^20 elements,
 * evaluated one by one: forms the interval analysis cannot bound (i ^ 1). */
static bool enumerated_range(const IndexMap *m, const IrExpr *e, int64_t *lo, int64_t *hi) {
  int64_t ext[INDEX_MAP_MAX_DIMS], val[INDEX_MAP_MAX_DIMS], size = 1, o;
  for (int k = 0; k < m->nin; k++)
    if (!ir_is_const_int(m->in_shape[k], &ext[k]) || (size *= ext[k]) > ENUMERATE_MAX / 4) return false;
  for (int64_t n = 0; n < size; n++) {
    input_tuple(ext, m->nin, n, val);
    if (!ir_eval_int(e, m->in, val, m->nin, &o)) return false;
    if (!n || o < *lo) *lo = o;
    if (!n || o > *hi) *hi = o;
  }
  return size > 0;
}

bool index_map_box(TsCompiler *c, IndexMap *m, const char **why) {
  IrRangeEnv exact = {0}, loose = {0};
  *why = NULL;
  for (int k = 0; k < m->nin; k++) {
    int64_t n;
    if (ir_is_const_int(m->in_shape[k], &n)) {
      if (n <= 0) {
        *why = arena_printf(c->arena, "input dim %d has extent %lld", k, (long long)n);
        return false;
      }
      ir_range_env_add(&exact, m->in[k], 0, n - 1);
      ir_range_env_add(&loose, m->in[k], 0, n - 1);
    } else {
      ir_range_env_add(&loose, m->in[k], 0, UNBOUNDED_INPUT);
    }
  }
  m->box = ARENA_ARRAY(c->arena, IrExpr *, m->nout);
  for (int j = 0; j < m->nout; j++) {
    int64_t lo, hi;
    if (ir_range(m->out[j], &exact, &lo, &hi) ||
        (ir_range(m->out[j], &loose, &lo, &hi) && hi < BOUNDED_OUTPUT) || enumerated_range(m, m->out[j], &lo, &hi)) {
      if (lo < 0) {
        *why = arena_printf(c->arena, "output %d can be negative (down to %lld)", j, (long long)lo);
        return false;
      }
      m->box[j] = extent_const(c, hi + 1);
      continue;
    }
    if (!(m->box[j] = symbolic_extent(c, m, m->out[j]))) {
      StrBuf sb = {0};
      ir_print_expr(&sb, m->out[j]);
      *why = arena_printf(c->arena,
                          "the extent of output %d (%s) is not computable: use constant extents, or outputs "
                          "of the form i or i // c over symbolic ones",
                          j, sb_str(&sb));
      sb_free(&sb);
      return false;
    }
  }
  return true;
}

/* ---- the bijection check ------------------------------------------------------------ */
static int find(int *parent, int x) {
  while (parent[x] != x) x = parent[x] = parent[parent[x]];
  return x;
}

/* Enumerates the inputs of one group (ins[0..ni)) and checks that its outputs
 * (outs[0..no)) hit every position of their box once (the sizes are already equal). */
static bool enumerate_group(TsCompiler *c, const IndexMap *m, const int *ins, int ni, const int64_t *in_ext,
                            const int *outs, int no, const int64_t *box, int64_t size, const char **why) {
  uint8_t *seen = arena_alloc(c->arena, (size_t)(size + 7) / 8);
  int64_t val[INDEX_MAP_MAX_DIMS] = {0};
  for (int64_t n = 0; n < size; n++) {
    int64_t rest = n, pos = 0;
    for (int q = ni - 1; q >= 0; q--) { /* the n-th input tuple, last input fastest */
      val[ins[q]] = rest % in_ext[q];
      rest /= in_ext[q];
    }
    for (int q = 0; q < no; q++) {
      int64_t o;
      if (!ir_eval_int(m->out[outs[q]], m->in, val, m->nin, &o)) {
        *why = arena_printf(c->arena, "output %d cannot be evaluated at compile time", outs[q]);
        return false;
      }
      if (o < 0 || o >= box[q]) {
        *why = arena_printf(c->arena, "output %d leaves its box", outs[q]);
        return false;
      }
      pos = pos * box[q] + o;
    }
    if (seen[pos / 8] & (1u << (pos % 8))) {
      StrBuf sb = {0};
      for (int q = 0; q < ni; q++)
        sb_printf(&sb, "%s%s=%lld", q ? ", " : "", m->in[ins[q]]->name, (long long)val[ins[q]]);
      *why = arena_printf(
          c->arena, "it is not a bijection: (%s) maps to a position another index already has", sb_str(&sb));
      sb_free(&sb);
      return false;
    }
    seen[pos / 8] |= (uint8_t)(1u << (pos % 8));
  }
  return true;
}

/* Checks the group of inputs whose union-find root is `root`. */
static bool check_group(TsCompiler *c, const IndexMap *m, int *parent, int root, const char **why) {
  int ins[INDEX_MAP_MAX_DIMS], outs[INDEX_MAP_MAX_DIMS], ni = 0, no = 0;
  int64_t in_ext[INDEX_MAP_MAX_DIMS], box[INDEX_MAP_MAX_DIMS], size = 1, bsize = 1;
  bool known = true;
  for (int k = 0; k < m->nin; k++)
    if (find(parent, k) == root) ins[ni++] = k;
  for (int j = 0; j < m->nout; j++)
    if (find(parent, m->nin + j) == root) outs[no++] = j;
  for (int q = 0; q < ni; q++) {
    known &= ir_is_const_int(m->in_shape[ins[q]], &in_ext[q]);
    if (known) size = size > INT64_MAX / 4 / in_ext[q] ? INT64_MAX / 4 : size * in_ext[q];
  }
  for (int q = 0; q < no; q++) {
    known &= ir_is_const_int(m->box[outs[q]], &box[q]);
    if (known) bsize = bsize > INT64_MAX / 4 / box[q] ? INT64_MAX / 4 : bsize * box[q];
  }
  if (!known) {
    /* symbolic extents: only an input passed through unchanged is provably a bijection */
    if (ni == 1 && no == 1 && input_of(m, m->out[outs[0]]) == ins[0]) return true;
    *why = arena_printf(c->arena,
                        "output %d depends on symbolic extents in a way that cannot be checked to be a "
                        "bijection (pass each symbolic dim through unchanged)",
                        outs[0]);
    return false;
  }
  if (size != bsize) {
    *why = arena_printf(c->arena,
                        "it is not a bijection: the inputs of output %d have %lld elements but their output "
                        "box has %lld positions",
                        outs[0], (long long)size, (long long)bsize);
    return false;
  }
  if (size > ENUMERATE_MAX) return true; /* sizes agree; too large to enumerate at compile time */
  return enumerate_group(c, m, ins, ni, in_ext, outs, no, box, size, why);
}

bool index_map_check(TsCompiler *c, const IndexMap *m, const char **why) {
  int parent[2 * INDEX_MAP_MAX_DIMS];
  *why = NULL;
  if (m->nin > INDEX_MAP_MAX_DIMS || m->nout > INDEX_MAP_MAX_DIMS) {
    *why = arena_printf(c->arena, "at most %d input and output dims are supported", INDEX_MAP_MAX_DIMS);
    return false;
  }
  for (int x = 0; x < m->nin + m->nout; x++) parent[x] = x;
  for (int j = 0; j < m->nout; j++)
    for (int k = 0; k < m->nin; k++)
      if (ir_expr_uses_var(m->out[j], m->in[k])) parent[find(parent, m->nin + j)] = find(parent, k);
  for (int k = 0; k < m->nin; k++) {
    int64_t n;
    bool used = false;
    for (int j = 0; j < m->nout && !used; j++) used = find(parent, m->nin + j) == find(parent, k);
    if (!used && !(ir_is_const_int(m->in_shape[k], &n) && n == 1)) {
      *why = arena_printf(c->arena, "it is not a bijection: input %d (%s) appears in no output", k,
                          m->in[k]->name);
      return false;
    }
  }
  for (int x = 0; x < m->nin + m->nout; x++)
    if (find(parent, x) == x && !check_group(c, m, parent, x, why)) return false;
  return true;
}

/* "(i0=1, i1=2)": the values of the map's inputs, for a diagnostic. */
static const char *input_text(TsCompiler *c, const IndexMap *m, const int64_t *val) {
  StrBuf sb = {0};
  for (int k = 0; k < m->nin; k++) sb_printf(&sb, "%s%s=%lld", k ? ", " : "(", m->in[k]->name, (long long)val[k]);
  sb_putc(&sb, ')');
  const char *r = arena_strdup(c->arena, sb_str(&sb));
  sb_free(&sb);
  return r;
}

bool index_map_injective(TsCompiler *c, const IndexMap *m, const char **why) {
  int64_t ext[INDEX_MAP_MAX_DIMS], box[INDEX_MAP_MAX_DIMS], size = 1, bsize = 1, val[INDEX_MAP_MAX_DIMS];
  int64_t out[INDEX_MAP_MAX_DIMS];
  for (int k = 0; k < m->nin; k++)
    if (!ir_is_const_int(m->in_shape[k], &ext[k]) || (size *= ext[k]) > ENUMERATE_MAX) {
      *why = "its shape must be constant and at most 2^22 elements to be checked";
      return false;
    }
  for (int j = 0; j < m->nout; j++)
    if (!ir_is_const_int(m->box[j], &box[j]) || (bsize *= box[j]) > ENUMERATE_MAX * 16) {
      *why = "its outputs must have constant bounds (at most 2^26 positions) to be checked";
      return false;
    }
  int32_t *owner = arena_alloc(c->arena, sizeof *owner * (size_t)bsize);
  for (int64_t p = 0; p < bsize; p++) owner[p] = -1;
  for (int64_t n = 0; n < size; n++) {
    input_tuple(ext, m->nin, n, val);
    int64_t pos = 0;
    for (int j = 0; j < m->nout; j++) {
      if (!ir_eval_int(m->out[j], m->in, val, m->nin, &out[j]) || out[j] < 0 || out[j] >= box[j]) {
        *why = arena_printf(c->arena, "output %d cannot be evaluated at %s", j, input_text(c, m, val));
        return false;
      }
      pos = pos * box[j] + out[j];
    }
    if (owner[pos] >= 0) { /* the diagnostic's text, only now */
      StrBuf at = {0};
      for (int j = 0; j < m->nout; j++) sb_printf(&at, "%s%lld", j ? ", " : "(", (long long)out[j]);
      const char *here = input_text(c, m, val);
      input_tuple(ext, m->nin, owner[pos], val);
      *why = arena_printf(c->arena, "must be injective: logical indices %s and %s both map to physical coordinates %s)",
                          input_text(c, m, val), here, sb_str(&at));
      sb_free(&at);
      return false;
    }
    owner[pos] = (int32_t)n;
  }
  return true;
}

IrExpr *index_map_offset(TsCompiler *c, const IndexMap *m, IrExpr *const *idx, bool wide, SrcLoc loc) {
  IrExpr *off = NULL;
  for (int j = 0; j < m->nout; j++) {
    IrExpr *o = ir_subst(c, m->out[j], m->in, idx, m->nin);
    if (wide) o = ir_cast(c, TS_DTYPE_INT64, o, loc);
    off = off ? ir_binary(c, IR_ADD, ir_binary(c, IR_MUL, off, m->box[j], loc), o, loc) : o;
  }
  return off ? off : ir_int(c, 0, TS_DTYPE_INT32, loc);
}

static bool same_loc(SrcLoc a, SrcLoc b) {
  return a.file == b.file && a.line == b.line && a.col == b.col;
}

bool index_map_has_kernel(const IndexMap *m, SrcLoc kernel) {
  for (int i = 0; i < m->kernels.len; i++)
    if (same_loc(*(const SrcLoc *)m->kernels.items[i], kernel)) return true;
  return false;
}

void index_map_add_kernel(TsCompiler *c, IndexMap *m, SrcLoc kernel) {
  if (index_map_has_kernel(m, kernel)) return;
  SrcLoc *l = ARENA_NEW(c->arena, SrcLoc);
  *l = kernel;
  vec_push(c->arena, &m->kernels, l);
}

bool index_map_equal(TsCompiler *c, const IndexMap *a, const IndexMap *b) {
  if (a == b) return true;
  if (a->nin != b->nin || a->nout != b->nout) return false;
  IrExpr **as_a = ARENA_ARRAY(c->arena, IrExpr *, a->nin);
  for (int k = 0; k < a->nin; k++) {
    if (!ir_expr_equal(a->in_shape[k], b->in_shape[k])) return false;
    as_a[k] = ir_varref(c, a->in[k], SRCLOC_NONE);
  }
  for (int j = 0; j < a->nout; j++)
    if (!ir_expr_equal(a->out[j], ir_subst(c, b->out[j], b->in, as_a, b->nin))) return false;
  return true;
}
