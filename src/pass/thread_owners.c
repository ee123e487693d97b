/* thread_owners.c — which thread writes which element, for thread_sync's write-after-write
 * test (thread_owners.h).
 *
 * Two writes of one shared buffer, a before b in every thread's program, leave b's value in
 * every element both write when each thread that writes an element in a writes it in b too:
 * its own store in b lands after its store in a, and the last store is then one of b's.  So b
 * needs no barrier after a when, for every element e both write, W_a(e) ⊆ W_b(e), W being
 * the threads that write e; and when b runs under a condition (some of its writers may skip
 * it), only when W_b(e) is one thread (then W_a(e) is that thread too).
 *
 * The writer sets come from enumeration, index by index: the thread indices range over the
 * block, the variables the write's statement binds itself (site `local`: a lowered nest's
 * serial loops, their LETs) over their constant bounds, so a write stands for all it made.
 * Any other variable holds one value at both writes (it was not rebound in between: bound
 * outside, thread_sync's strip_bound says which are) and is kept symbolic: an index is
 * compared as symbolic terms plus enumerated terms, `k * 64 + tx` against `k * 64 + tx / 2`,
 * the symbolic terms having to match to cancel.  An index that cannot be split so is left out
 * of the comparison (any value matches: several elements share a key, which then shows
 * something only when one thread writes them all); an index that cannot be enumerated at all
 * gives no answer (false).  When symbols do not cancel because a loop's earlier iterations
 * (enumerated) meet its current one (symbolic), constant-bound loops are enumerated on both
 * sides, the later write's rows kept apart by their values (compare_index).  The conditions a
 * store is under inside its statement are evaluated when they name enumerated values only
 * (`if tx == 0`, `if tx % 4 == 0`); any other makes the site `guarded` (its sets are
 * supersets), which the rule above accounts for. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "thread_owners.h"

#include "../ir/analysis.h"

enum { MAX_TERMS = 16, MAX_VARS = 8, MAX_DIMS = 8, MAX_ROWS = 1 << 16, LET_DEPTH = 8, MAX_GUARDS = 16 };

/* What an expression's variables are: enumerated (thread indices, the site's own loops and
 * LETs), symbolic (one value at both writes), or beyond the analysis. */
enum { HAS_ENUM = 1, HAS_SYMBOL = 2, HAS_BAD = 4 };

static OwnerLoop *loop_entry(const OwnerEnv *env, const IrVar *v) {
  for (int i = 0; i < env->loops.len; i++) {
    OwnerLoop *l = env->loops.items[i];
    if (l->var == v) return l;
  }
  return NULL;
}
/* The constant range of loop variable v, or NULL (some loop binding it has another). */
static const OwnerLoop *loop_of(const OwnerEnv *env, const IrVar *v) {
  const OwnerLoop *l = loop_entry(env, v);
  return l && l->hi > l->lo ? l : NULL;
}
static IrExpr *let_value(const OwnerEnv *env, const IrVar *v) {
  if (v->kind != IR_VAR_LET || vec_has(env->redefined, v)) return NULL;
  for (int i = 0; i < env->let_vars->len; i++)
    if (env->let_vars->items[i] == v) return env->let_vals->items[i];
  return NULL;
}

/* The variables a site enumerates: those it bound itself (Site.local), and the loops of `promote`
 * (compare_index; then it stands for more writes than it made). */
typedef struct Scope {
  const PtrVec *local, *promote;
  bool all;    /* every constant-bound loop's too */
  bool shared; /* with all: but terms that are symbols on both sides stay symbols (split_sum) */
} Scope;

static int expr_class(const OwnerEnv *env, const Scope *sc, const IrExpr *e, int depth);
static int var_class(const OwnerEnv *env, const Scope *sc, const IrVar *v, int depth) {
  if (v->kind == IR_VAR_THREAD_IDX) return HAS_ENUM;
  if (v->kind == IR_VAR_PLACEHOLDER || depth > LET_DEPTH) return HAS_BAD;
  if ((sc->promote && vec_has(sc->promote, v)) || (sc->all && v->kind == IR_VAR_LOOP && loop_of(env, v)))
    return HAS_ENUM;
  bool mine = vec_has(sc->local, v), varies = vec_has(env->tdep, v);
  if (mine && v->kind == IR_VAR_LOOP) return loop_of(env, v) ? HAS_ENUM : HAS_BAD;
  if (mine || varies) { /* a LET of the site's own values, or of the thread: enumerated through its value */
    IrExpr *val = let_value(env, v);
    return val ? expr_class(env, sc, val, depth + 1) : HAS_BAD;
  }
  return vec_has(env->redefined, v) ? HAS_BAD : HAS_SYMBOL;
}
static int expr_class(const OwnerEnv *env, const Scope *sc, const IrExpr *e, int depth) {
  switch (e->kind) {
    case IR_INT: return 0;
    case IR_VAR: return var_class(env, sc, e->u.var, depth);
    case IR_FLOAT: case IR_STR: case IR_LOAD: case IR_CALL: case IR_DIV: case IR_REINTERPRET: return HAS_BAD;
    case IR_CAST:
      if (dtype_is_float(e->dtype)) return HAS_BAD;
      break;
    default: break;
  }
  int f = 0;
  for (int i = 0; i < ir_expr_nops[e->kind]; i++) f |= expr_class(env, sc, e->u.ops[i], depth);
  return f;
}

/* One point of the enumeration: slots 0-2 the thread indices, 3 + i the value of enumerated
 * variable vars[i] (Side.vars). */
typedef struct Point {
  const OwnerEnv *env;
  const IrVar *const *vars;
  int nvars;
  int64_t slots[3 + MAX_VARS];
  int depth; /* LETs being evaluated */
} Point;

/* The value of v at point p (IrVarValue): a thread index, an enumerated loop, a LET through its
 * value. */
static bool point_value(const IrVar *v, void *ctx, int64_t *out) {
  Point *p = ctx;
  if (v->kind == IR_VAR_THREAD_IDX) {
    *out = p->slots[v->axis];
    return true;
  }
  for (int i = 0; i < p->nvars; i++)
    if (p->vars[i] == v) {
      *out = p->slots[3 + i];
      return true;
    }
  const IrExpr *val = p->depth < LET_DEPTH ? let_value(p->env, v) : NULL;
  if (!val) return false;
  p->depth++;
  bool ok = ir_eval_int_with(val, point_value, p, out);
  p->depth--;
  return ok;
}
static bool eval(Point *p, const IrExpr *e, int64_t *out) { return ir_eval_int_with(e, point_value, p, out); }

/* One index as a signed sum of terms: the enumerated ones, the symbolic ones, a constant. */
typedef struct Sum {
  const IrExpr *en[MAX_TERMS], *sym[MAX_TERMS];
  int en_sign[MAX_TERMS], sym_sign[MAX_TERMS];
  int nen, nsym;
  int64_t k;
  bool ok;
} Sum;
/* e names one of vars (the loops one side enumerates and the other does not). */
static bool uses_one_sided(const IrExpr *e, const PtrVec *vars) {
  for (int i = 0; vars && i < vars->len; i++)
    if (ir_expr_uses_var(e, vars->items[i])) return true;
  return false;
}
static void split_sum(const OwnerEnv *env, const Scope *sc, const IrExpr *e, int sign, Sum *s) {
  if (!s->ok) return;
  if (e->kind == IR_ADD || e->kind == IR_SUB) {
    split_sum(env, sc, e->u.ops[0], sign, s);
    split_sum(env, sc, e->u.ops[1], e->kind == IR_SUB ? -sign : sign, s);
    return;
  }
  if (e->kind == IR_NEG) {
    split_sum(env, sc, e->u.ops[0], -sign, s);
    return;
  }
  if (e->kind == IR_INT) {
    s->k += sign * e->u.ival;
    return;
  }
  int f = expr_class(env, sc, e, 0);
  if (sc->shared && !uses_one_sided(e, sc->promote)) { /* `k % 2 * 4096` of a loop around both: one value */
    Scope plain = {sc->local, NULL, false, false};
    if (expr_class(env, &plain, e, 0) == HAS_SYMBOL) f = HAS_SYMBOL;
  }
  if (f == HAS_ENUM && s->nen < MAX_TERMS) {
    s->en[s->nen] = e;
    s->en_sign[s->nen++] = sign;
  } else if (f == HAS_SYMBOL && s->nsym < MAX_TERMS) {
    s->sym[s->nsym] = e;
    s->sym_sign[s->nsym++] = sign;
  } else {
    s->ok = false; /* a term mixing both, or beyond the analysis */
  }
}
/* The symbolic terms of a and b are the same (as a multiset): they cancel. */
static bool symbols_cancel(const Sum *a, const Sum *b) {
  if (a->nsym != b->nsym) return false;
  bool used[MAX_TERMS] = {false};
  for (int i = 0; i < a->nsym; i++) {
    int j = 0;
    while (j < b->nsym && (used[j] || b->sym_sign[j] != a->sym_sign[i] || !ir_expr_equal(a->sym[i], b->sym[j]))) j++;
    if (j == b->nsym) return false;
    used[j] = true;
  }
  return true;
}

/* One side's enumeration: the compared indices (their enumerated terms), the variables. */
typedef struct Side {
  const OwnerSite *site;
  Sum sum[MAX_DIMS];
  const IrVar *vars[MAX_VARS];
  int nvars;
  int64_t *rows; /* w values per row: the compared indices, the promoted loops' values, the thread */
  int nrows, w;
  bool known[MAX_GUARDS]; /* the site's guards that are evaluated */
  const OwnerEnv *env;    /* set by enumerate (the LETs its programs expand) */
  bool guarded;           /* the site's writes depend on conditions not evaluated */
} Side;

static bool add_var(Side *sd, const OwnerEnv *env, const IrVar *v, int depth);
static bool add_vars(Side *sd, const OwnerEnv *env, const IrExpr *e, int depth) {
  if (e->kind == IR_VAR) return add_var(sd, env, e->u.var, depth);
  if (e->kind == IR_INT) return true;
  if (e->kind == IR_CALL || e->kind == IR_LOAD) return false;
  for (int i = 0; i < ir_expr_nops[e->kind]; i++)
    if (!add_vars(sd, env, e->u.ops[i], depth)) return false;
  return true;
}
/* The loop variables an enumerated term reaches (through LETs). */
static bool add_var(Side *sd, const OwnerEnv *env, const IrVar *v, int depth) {
  if (v->kind == IR_VAR_THREAD_IDX) return true;
  if (v->kind == IR_VAR_LOOP) {
    for (int i = 0; i < sd->nvars; i++)
      if (sd->vars[i] == v) return true;
    if (sd->nvars == MAX_VARS || !loop_of(env, v)) return false;
    sd->vars[sd->nvars++] = v;
    return true;
  }
  const IrExpr *val = depth < LET_DEPTH ? let_value(env, v) : NULL;
  return val && add_vars(sd, env, val, depth + 1);
}
/* A loop variable enumerated although the site did not bind it (compare_index's promotion): its
 * value at the write is one of the range, so its rows are kept apart by that value. */
static bool promoted(const Side *sd, int i) {
  return !sd->site->local || !vec_has(sd->site->local, sd->vars[i]);
}

/* Rows a and b compared on their first n values (lexicographic). */
static int rows_cmp(const int64_t *a, const int64_t *b, int n) {
  for (int i = 0; i < n; i++)
    if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
  return 0;
}
static int qsort_rows(const void *x, const void *y, void *width) { return rows_cmp(x, y, *(const int *)width); }

/* The site's guards and enumerated terms compiled over the point's slots (thread indices 0-2,
 * then sd->vars): NULL where one does not compile (then it is evaluated as a tree). */
typedef struct Progs {
  IrIntProg *guard[MAX_GUARDS], *term[MAX_DIMS][MAX_TERMS];
} Progs;
static int point_slot(const IrVar *v, void *ctx) {
  const Side *sd = ctx;
  if (v->kind == IR_VAR_THREAD_IDX) return v->axis;
  for (int i = 0; i < sd->nvars; i++)
    if (sd->vars[i] == v) return 3 + i;
  return -1;
}
static const IrExpr *let_of(const IrVar *v, void *ctx) { return let_value(((const Side *)ctx)->env, v); }
static void compile_progs(Side *sd, const bool *keep, int ndims, Progs *pg) {
  IrIntSlots slots = {point_slot, let_of, sd};
  memset(pg, 0, sizeof *pg);
  for (int g = 0; g < sd->site->nguards && g < MAX_GUARDS; g++)
    if (sd->known[g]) pg->guard[g] = ir_int_prog(sd->site->guards[g].cond, &slots);
  for (int d = 0; d < ndims; d++)
    for (int i = 0; keep[d] && i < sd->sum[d].nen; i++) pg->term[d][i] = ir_int_prog(sd->sum[d].en[i], &slots);
}
static void free_progs(Progs *pg) {
  for (int g = 0; g < MAX_GUARDS; g++) ir_int_prog_free(pg->guard[g]);
  for (int d = 0; d < MAX_DIMS; d++)
    for (int i = 0; i < MAX_TERMS; i++) ir_int_prog_free(pg->term[d][i]);
}
static bool eval_at(Point *p, const IrIntProg *prog, const IrExpr *e, int64_t *out) {
  return prog ? ir_int_prog_run(prog, p->slots, out) : eval(p, e, out);
}

/* Sorts sd->rows lexicographically.  When every column's range fits, together, in 64 bits the
 * rows are packed into one number each (first column most significant) and radix-sorted,
 * RADIX_BITS a pass; otherwise qsort compares them column by column. */
enum { RADIX_BITS = 11 };
static bool sort_packed(Side *sd) {
  int w = sd->w, n = sd->nrows, bits[MAX_DIMS + MAX_VARS + 1], total = 0;
  int64_t lo[MAX_DIMS + MAX_VARS + 1], hi[MAX_DIMS + MAX_VARS + 1];
  for (int c = 0; c < w; c++) lo[c] = INT64_MAX, hi[c] = INT64_MIN;
  for (int i = 0; i < n; i++)
    for (int c = 0; c < w; c++) {
      int64_t v = sd->rows[(size_t)i * w + c];
      if (v < lo[c]) lo[c] = v;
      if (v > hi[c]) hi[c] = v;
    }
  for (int c = 0; c < w; c++) {
    uint64_t span = (uint64_t)hi[c] - (uint64_t)lo[c];
    bits[c] = 0;
    while (bits[c] < 64 && (span >> bits[c])) bits[c]++;
    total += bits[c];
  }
  if (total > 64 || n < 2) return total <= 64;
  uint64_t *key = malloc(sizeof(uint64_t) * (size_t)n * 2), *tmp = key ? key + n : NULL;
  if (!key) return false;
  for (int i = 0; i < n; i++) {
    uint64_t k = 0;
    for (int c = 0; c < w; c++)
      k = (bits[c] >= 64 ? 0 : k << bits[c]) | ((uint64_t)sd->rows[(size_t)i * w + c] - (uint64_t)lo[c]);
    key[i] = k;
  }
  const uint64_t digit = (1u << RADIX_BITS) - 1;
  for (int shift = 0; shift < total; shift += RADIX_BITS) { /* LSD radix sort, stable */
    int count[1 << RADIX_BITS] = {0};
    for (int i = 0; i < n; i++) count[(key[i] >> shift) & digit]++;
    for (int d = 0, sum = 0; d < (1 << RADIX_BITS); d++) {
      int k = count[d];
      count[d] = sum;
      sum += k;
    }
    for (int i = 0; i < n; i++) tmp[count[(key[i] >> shift) & digit]++] = key[i];
    uint64_t *t = key;
    key = tmp;
    tmp = t;
  }
  for (int i = 0; i < n; i++) { /* back to columns, last first */
    uint64_t k = key[i];
    for (int c = w - 1; c >= 0; c--) {
      uint64_t m = bits[c] == 64 ? ~0ull : (1ull << bits[c]) - 1;
      sd->rows[(size_t)i * w + c] = (int64_t)((k & m) + (uint64_t)lo[c]);
      k = bits[c] == 64 ? 0 : k >> bits[c];
    }
  }
  free(key < tmp ? key : tmp);
  return true;
}
static void sort_rows(Side *sd) {
  if (!sort_packed(sd)) qsort_r(sd->rows, sd->nrows, sizeof(int64_t) * sd->w, qsort_rows, &sd->w);
}

/* Writes one point's row (a vector's lanes each) into sd->rows, none when a guard excludes it. */
static bool emit_rows(Side *sd, Point *p, const Progs *pg, const bool *keep, int ndims, int nkeys, int64_t lanes,
                      int64_t t) {
  for (int g = 0; g < sd->site->nguards; g++) {
    int64_t c;
    if (!sd->known[g]) continue;
    if (!eval_at(p, pg->guard[g], sd->site->guards[g].cond, &c)) return false;
    if ((c != 0) == sd->site->guards[g].neg) return true;
  }
  int64_t key[MAX_DIMS + MAX_VARS];
  int nk = 0;
  for (int d = 0; d < ndims; d++) {
    if (!keep[d]) continue;
    int64_t v = sd->sum[d].k, x;
    for (int i = 0; i < sd->sum[d].nen; i++) {
      if (!eval_at(p, pg->term[d][i], sd->sum[d].en[i], &x)) return false;
      v += sd->sum[d].en_sign[i] * x;
    }
    key[nk++] = v;
  }
  for (int i = 0; i < sd->nvars; i++)
    if (promoted(sd, i)) key[nk++] = p->slots[3 + i];
  for (int64_t l = 0; l < lanes; l++) {
    int64_t *row = sd->rows + (size_t)sd->nrows++ * sd->w;
    memcpy(row, key, sizeof(int64_t) * nk);
    if (lanes > 1) row[nkeys - 1] += l;
    row[nk] = t;
  }
  return true;
}

/* Fills sd->rows: for every thread and every value of the enumerated loops, the elements it
 * writes (compared indices only; a vector's lanes along the last), sorted. */
static bool enumerate(Side *sd, const OwnerEnv *env, const bool *keep, int ndims, int nkeys) {
  int64_t count = 1, lanes = sd->site->lanes > 1 && keep[ndims - 1] ? sd->site->lanes : 1;
  const OwnerLoop *loops[MAX_VARS];
  sd->w = nkeys + 1;
  for (int i = 0; i < sd->nvars; i++) {
    loops[i] = loop_of(env, sd->vars[i]);
    count *= loops[i]->hi - loops[i]->lo;
    sd->w += promoted(sd, i);
    if (count <= 0 || count > MAX_ROWS) return false;
  }
  int64_t nx = env->tx_hi - env->tx_lo, nthreads = nx * env->threads[1] * env->threads[2];
  if (count * nthreads * lanes > MAX_ROWS) return false;
  sd->rows = malloc(sizeof(int64_t) * (size_t)(count * nthreads * lanes * sd->w));
  if (!sd->rows) return false;
  Point p = {env, sd->vars, sd->nvars, {0}, 0};
  Progs *pg = malloc(sizeof *pg);
  if (!pg) return false;
  sd->env = env;
  compile_progs(sd, keep, ndims, pg);
  bool ok = true;
  for (int64_t point = 0; point < count * nthreads && ok; point++) {
    int64_t r = point;
    for (int i = 0; i < sd->nvars; i++) {
      int64_t ext = loops[i]->hi - loops[i]->lo;
      p.slots[3 + i] = loops[i]->lo + r % ext;
      r /= ext;
    }
    p.slots[0] = env->tx_lo + r % nx;
    p.slots[1] = r / nx % env->threads[1];
    p.slots[2] = r / nx / env->threads[1];
    ok = emit_rows(sd, &p, pg, keep, ndims, nkeys, lanes, r);
  }
  free_progs(pg);
  free(pg);
  if (!ok) return false;
  sort_rows(sd);
  return true;
}

/* End of the run of rows from `from` that agree on their first n values. */
static int run_end(const Side *sd, int from, int n) {
  int e = from;
  while (e < sd->nrows && !rows_cmp(sd->rows + (size_t)e * sd->w, sd->rows + (size_t)from * sd->w, n)) e++;
  return e;
}
static int64_t thread_of(const Side *sd, int row) { return sd->rows[(size_t)row * sd->w + sd->w - 1]; }

/* The rule of the file's comment over one element: a's rows [i, ie) and b's [j, je), b's split
 * by the values of its promoted loops (each a possible b).  exact: the keys are the elements;
 * otherwise a key stands for several elements and only one thread writing them all in both
 * shows anything. */
static bool element_ordered(const Side *a, int i, int ie, const Side *b, int j, int je, bool exact) {
  while (j < je) {
    int ve = run_end(b, j, b->w - 1); /* one value of b's promoted loops */
    int nb = 0;
    for (int q = j; q < ve; q++) nb += q == j || thread_of(b, q) != thread_of(b, q - 1);
    if (nb > 1 && (b->guarded || !exact)) return false;
    for (int q = i; q < ie; q++) { /* every writer in a writes it in b */
      int z = j;
      while (z < ve && thread_of(b, z) != thread_of(a, q)) z++;
      if (z == ve) return false;
    }
    j = ve;
  }
  return true;
}
static bool writers_contained(const Side *a, const Side *b, int nkeys, bool exact) {
  int i = 0, j = 0;
  while (i < a->nrows && j < b->nrows) {
    int c = rows_cmp(a->rows + (size_t)i * a->w, b->rows + (size_t)j * b->w, nkeys);
    if (c) {
      c < 0 ? i++ : j++;
      continue;
    }
    int ie = run_end(a, i, nkeys), je = run_end(b, j, nkeys);
    if (!element_ordered(a, i, ie, b, j, je, exact)) return false;
    i = ie;
    j = je;
  }
  return true;
}

/* Index d of both sites as enumerated terms over symbolic ones that cancel (*keep), or always
 * equal (no enumerated terms, same symbols and constant); *apart when they never are.  When the
 * symbols do not cancel (`A_s[tk]` of a loop's current iteration against the same store of its
 * earlier ones, where tk is enumerated), the constant-bound loops enumerated on one side only
 * (`promote`) are enumerated on both, else (`all`) every constant-bound loop: a's rows then
 * stand for more writes (stricter), b's are kept apart by the loops' values. */
static bool split_both(const OwnerEnv *env, Side *sa, Side *sb, int d, const PtrVec *promote, bool all, bool shared) {
  static const PtrVec none = {0};
  Scope ca = {sa->site->local ? sa->site->local : &none, promote, all, shared};
  Scope cb = {sb->site->local ? sb->site->local : &none, promote, all, shared};
  Sum *x = &sa->sum[d], *y = &sb->sum[d];
  memset(x, 0, sizeof *x);
  memset(y, 0, sizeof *y);
  x->ok = y->ok = true;
  split_sum(env, &ca, sa->site->idx[d], 1, x);
  split_sum(env, &cb, sb->site->idx[d], 1, y);
  return x->ok && y->ok && symbols_cancel(x, y);
}
static bool compare_index(const OwnerEnv *env, Side *sa, Side *sb, int d, const PtrVec *promote, bool shared,
                          bool *used_shared, bool *keep, bool *exact, bool *apart) {
  Sum *x = &sa->sum[d], *y = &sb->sum[d];
  bool same_symbols = split_both(env, sa, sb, d, NULL, false, false) ||
                      (promote->len && split_both(env, sa, sb, d, promote, false, false));
  if (!same_symbols && shared && split_both(env, sa, sb, d, promote, true, true)) same_symbols = *used_shared = true;
  if (!same_symbols) same_symbols = split_both(env, sa, sb, d, NULL, true, false);
  *keep = same_symbols && (x->nen || y->nen);
  if (!same_symbols) *exact = false; /* left out: any value matches */
  if (same_symbols && !x->nen && !y->nen && x->k != y->k) *apart = true;
  bool vars_ok = true;
  for (int i = 0; *keep && i < x->nen; i++) vars_ok &= add_vars(sa, env, x->en[i], 0);
  for (int i = 0; *keep && i < y->nen; i++) vars_ok &= add_vars(sb, env, y->en[i], 0);
  return vars_ok;
}

/* The constant-bound loops of x that y does not enumerate, added to out. */
static void one_sided_loops(const OwnerEnv *env, const PtrVec *x, const PtrVec *y, PtrVec *out) {
  for (int i = 0; x && i < x->len; i++)
    if ((!y || !vec_has(y, x->items[i])) && ((IrVar *)x->items[i])->kind == IR_VAR_LOOP && loop_of(env, x->items[i]))
      vec_push(env->c->arena, out, x->items[i]);
}

/* Which of the site's guards are evaluated (of enumerated values only); the others make it
 * guarded.  Their loops join the enumeration. */
static bool side_guards(const OwnerEnv *env, Side *sd) {
  static const PtrVec none = {0};
  Scope sc = {sd->site->local ? sd->site->local : &none, NULL, false, false};
  sd->guarded = sd->site->guarded || sd->site->nguards > MAX_GUARDS;
  for (int g = 0; g < sd->site->nguards && g < MAX_GUARDS; g++) {
    const IrExpr *c = sd->site->guards[g].cond;
    sd->known[g] = (expr_class(env, &sc, c, 0) & ~HAS_ENUM) == 0;
    if (!sd->known[g]) sd->guarded = true;
    else if (!add_vars(sd, env, c, 0)) return false;
  }
  return true;
}

/* shared: may keep loops around both writes as symbols in the last resort (split_sum); when
 * that shows nothing, the caller tries again without (the loops enumerated instead). */
static bool writes_ordered(const OwnerEnv *env, const OwnerSite *a, const OwnerSite *b, bool single, bool shared,
                           bool *used_shared) {
  Side sa, sb;
  memset(&sa, 0, sizeof sa);
  memset(&sb, 0, sizeof sb);
  sa.site = a;
  sb.site = b;
  bool keep[MAX_DIMS], exact = true, apart = false;
  int nkeys = 0, n = a->nidx;
  PtrVec promote = {0};
  one_sided_loops(env, a->local, b->local, &promote);
  one_sided_loops(env, b->local, a->local, &promote);
  for (int d = 0; d < n; d++) {
    if (!compare_index(env, &sa, &sb, d, &promote, shared, used_shared, &keep[d], &exact, &apart)) return false;
    if (apart) return true;
    nkeys += keep[d];
  }
  if (!side_guards(env, &sa) || !side_guards(env, &sb)) return false;
  if (!nkeys) { /* no index tells threads apart: one key for all, every thread writing it */
    keep[n - 1] = true;
    nkeys = 1;
    memset(&sa.sum[n - 1], 0, sizeof(Sum));
    memset(&sb.sum[n - 1], 0, sizeof(Sum));
  }
  bool ok = enumerate(&sa, env, keep, n, nkeys) && enumerate(&sb, env, keep, n, nkeys) &&
            writers_contained(&sa, &sb, nkeys, exact && !single);
  free(sa.rows);
  free(sb.rows);
  return ok;
}

static bool ordered_either_way(const OwnerEnv *env, const OwnerSite *a, const OwnerSite *b, bool single) {
  bool used = false;
  return writes_ordered(env, a, b, single, true, &used) || (used && writes_ordered(env, a, b, single, false, &used));
}
static bool sites_known(const OwnerSite *a, const OwnerSite *b) {
  return a->idx && b->idx && a->nidx == b->nidx && a->nidx <= MAX_DIMS && a->nidx >= 1;
}
static bool one_thread(const OwnerEnv *env) { return (env->tx_hi - env->tx_lo) * env->threads[1] * env->threads[2] <= 1; }
bool owner_writes_ordered(const OwnerEnv *env, const OwnerSite *a, const OwnerSite *b) {
  return sites_known(a, b) && (one_thread(env) || ordered_either_way(env, a, b, false));
}
bool owner_same_thread(const OwnerEnv *env, const OwnerSite *a, const OwnerSite *b) {
  return sites_known(a, b) && (one_thread(env) || ordered_either_way(env, a, b, true));
}

/* A variable bound by several loops (lowering reuses one) ranges over the union of their ranges:
 * more values than any one loop gives, which only adds writes to the enumeration. */
static void collect_loop(IrStmt *s, void *ctx) {
  OwnerEnv *env = ctx;
  int64_t lo, ext;
  if (s->kind != IR_S_FOR || !s->u.loop.var) return;
  OwnerLoop *l = loop_entry(env, s->u.loop.var);
  bool known = ir_is_const_int(s->u.loop.min, &lo) && ir_is_const_int(s->u.loop.extent, &ext) && ext > 0;
  if (l && !known) l->hi = l->lo; /* one binding of unknown range: none */
  if (!known || (l && l->hi == l->lo)) {
    if (!l && !known) { /* remembered as having none */
      l = ARENA_NEW(env->c->arena, OwnerLoop);
      *l = (OwnerLoop){s->u.loop.var, 0, 0};
      vec_push(env->c->arena, &env->loops, l);
    }
    return;
  }
  if (l) {
    l->lo = lo < l->lo ? lo : l->lo;
    l->hi = lo + ext > l->hi ? lo + ext : l->hi;
    return;
  }
  l = ARENA_NEW(env->c->arena, OwnerLoop);
  *l = (OwnerLoop){s->u.loop.var, lo, lo + ext};
  vec_push(env->c->arena, &env->loops, l);
}
typedef struct StoreWalk {
  const OwnerEnv *env;
  PtrVec *out;
  OwnerGuard stack[MAX_GUARDS];
  int depth;
} StoreWalk;
static void walk_stores(StoreWalk *w, IrStmt *s, bool unknown);
static void walk_guarded(StoreWalk *w, IrStmt *s, IrExpr *cond, bool neg, bool unknown) {
  if (!s) return;
  if (w->depth == MAX_GUARDS) {
    walk_stores(w, s, true);
    return;
  }
  w->stack[w->depth++] = (OwnerGuard){cond, neg};
  walk_stores(w, s, unknown);
  w->depth--;
}
static void walk_stores(StoreWalk *w, IrStmt *s, bool unknown) {
  static const PtrVec none = {0};
  Scope sc = {&none, NULL, false, false};
  if (!s) return;
  switch (s->kind) {
    case IR_S_SEQ:
      for (int i = 0; i < s->u.seq.n; i++) walk_stores(w, s->u.seq.items[i], unknown);
      return;
    case IR_S_IF:
      walk_guarded(w, s->u.if_.then_s, s->u.if_.cond, false, unknown);
      walk_guarded(w, s->u.if_.else_s, s->u.if_.cond, true, unknown);
      return;
    case IR_S_FOR: { /* a loop whose trip count may differ between threads runs some stores in some only */
      int f = expr_class(w->env, &sc, s->u.loop.min, 0) | expr_class(w->env, &sc, s->u.loop.extent, 0);
      walk_stores(w, s->u.loop.body, unknown || (f & (HAS_ENUM | HAS_BAD)));
      return;
    }
    case IR_S_WHILE: walk_stores(w, s->u.while_.body, true); return;
    case IR_S_KERNEL: walk_stores(w, s->u.kernel.body, unknown); return;
    case IR_S_STORE: {
      OwnerStore *o = ARENA_NEW(w->env->c->arena, OwnerStore);
      OwnerGuard *g = ARENA_ARRAY(w->env->c->arena, OwnerGuard, w->depth ? w->depth : 1);
      memcpy(g, w->stack, sizeof(OwnerGuard) * w->depth);
      *o = (OwnerStore){s, g, w->depth, unknown};
      vec_push(w->env->c->arena, w->out, o);
      return;
    }
    default: return;
  }
}
void owner_collect_stores(const OwnerEnv *env, IrStmt *s, bool all_unknown, PtrVec *out) {
  StoreWalk w;
  w.env = env;
  w.out = out;
  w.depth = 0;
  walk_stores(&w, s, all_unknown);
}

void owner_collect_loops(OwnerEnv *env, IrStmt *s) {
  IrVisitor v = {collect_loop, NULL, env};
  ir_visit(s, &v);
}
