/* test_index_map.c — unit tests of the T.Layout index maps of global tensors
 * (src/layout/index_map.c): the output box of FlashAttention's dQ map, symbolic extents,
 * the bijection check (accepting permutations and the dQ map, refusing maps that fold or
 * leave holes), and the physical offset against a hand-written formula. */
#include "../../src/layout/index_map.h"
#include "test.h"

static IrExpr *V(TsCompiler *c, IrVar *v) {
  return ir_varref(c, v, SRCLOC_NONE);
}
static IrExpr *K(TsCompiler *c, int64_t x) {
  return ir_i32(c, x);
}
static IrExpr *B(TsCompiler *c, IrExprKind k, IrExpr *a, IrExpr *b) {
  return ir_binary(c, k, a, b, SRCLOC_NONE);
}

/* A map over `nin` inputs named i0.. with extents shape[] (NULL entries: symbolic `sym`). */
static IndexMap *new_map(TsCompiler *c, int nin, const int64_t *shape, IrExpr *sym) {
  IndexMap *m = ARENA_NEW(c->arena, IndexMap);
  m->nin = nin;
  m->in = ARENA_ARRAY(c->arena, IrVar *, nin);
  m->in_shape = ARENA_ARRAY(c->arena, IrExpr *, nin);
  for (int k = 0; k < nin; k++) {
    m->in[k] = ir_var(c, arena_printf(c->arena, "i%d", k), TS_DTYPE_INT32, IR_VAR_PLACEHOLDER, SRCLOC_NONE);
    m->in_shape[k] = shape[k] >= 0 ? K(c, shape[k]) : sym;
  }
  return m;
}

static void set_out(TsCompiler *c, IndexMap *m, int nout, IrExpr **out) {
  m->nout = nout;
  m->out = ARENA_ARRAY(c->arena, IrExpr *, nout);
  for (int j = 0; j < nout; j++) m->out[j] = out[j];
}

/* [b, l // 8, h, d // 8, d % 2, 4 * (l % 8) + (d % 8) // 2] over [B, L, H, D] */
static IndexMap *dq_map(TsCompiler *c, const int64_t *shape, IrExpr *sym) {
  IndexMap *m = new_map(c, 4, shape, sym);
  IrExpr *b = V(c, m->in[0]), *l = V(c, m->in[1]), *h = V(c, m->in[2]), *d = V(c, m->in[3]);
  IrExpr *out[6] = {b,
                    B(c, IR_FLOORDIV, l, K(c, 8)),
                    h,
                    B(c, IR_FLOORDIV, d, K(c, 8)),
                    B(c, IR_FLOORMOD, d, K(c, 2)),
                    B(c, IR_ADD, B(c, IR_MUL, K(c, 4), B(c, IR_FLOORMOD, l, K(c, 8))),
                      B(c, IR_FLOORDIV, B(c, IR_FLOORMOD, d, K(c, 8)), K(c, 2)))};
  set_out(c, m, 6, out);
  return m;
}

static int64_t box_const(const IndexMap *m, int j) {
  int64_t v = -1;
  ir_is_const_int(m->box[j], &v);
  return v;
}

TEST(index_map_dq_box_and_offset) {
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  const int64_t shape[4] = {2, 64, 3, 64};
  IndexMap *m = dq_map(&c, shape, NULL);
  const char *why = NULL;
  REQUIRE(index_map_box(&c, m, &why));
  const int64_t want[6] = {2, 8, 3, 8, 2, 32};
  for (int j = 0; j < 6; j++) CHECK(box_const(m, j) == want[j]);
  CHECK(index_map_check(&c, m, &why));
  /* the offset expression at constant indices equals the formula */
  IrExpr *idx[4];
  IrVar *vars[4];
  for (int k = 0; k < 4; k++) vars[k] = ir_var(&c, "x", TS_DTYPE_INT32, IR_VAR_LOOP, SRCLOC_NONE);
  for (int k = 0; k < 4; k++) idx[k] = V(&c, vars[k]);
  IrExpr *off = index_map_offset(&c, m, idx, false, SRCLOC_NONE);
  const int64_t probes[3][4] = {{0, 0, 0, 0}, {1, 63, 2, 63}, {1, 13, 1, 37}};
  for (int p = 0; p < 3; p++) {
    int64_t b = probes[p][0], l = probes[p][1], h = probes[p][2], d = probes[p][3], got = -1;
    int64_t expect = ((((b * 8 + l / 8) * 3 + h) * 8 + d / 8) * 2 + d % 2) * 32 + 4 * (l % 8) + (d % 8) / 2;
    CHECK(ir_eval_int(off, vars, probes[p], 4, &got));
    CHECK(got == expect);
  }
  ts_compiler_fini(&c);
}

TEST(index_map_symbolic_extents) {
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  IrVar *n = ir_var(&c, "L", TS_DTYPE_INT32, IR_VAR_DYNAMIC, SRCLOC_NONE);
  const int64_t shape[4] = {2, -1, 3, 64};
  IndexMap *m = dq_map(&c, shape, V(&c, n));
  const char *why = NULL;
  REQUIRE(index_map_box(&c, m, &why));
  /* l // 8 -> ceildiv(L, 8); 4 * (l % 8) + ... stays 32 for any L */
  int64_t v = -1, vals[1] = {20};
  CHECK(ir_eval_int(m->box[1], &n, vals, 1, &v) && v == 3);
  CHECK(box_const(m, 5) == 32);
  /* a group mixing a symbolic dim with another cannot be checked */
  CHECK(!index_map_check(&c, m, &why) && why && strstr(why, "symbolic"));
  /* a permutation of symbolic dims passes */
  IndexMap *p = new_map(&c, 3, (const int64_t[3]){-1, 4, 16}, V(&c, n));
  set_out(&c, p, 3, (IrExpr *[3]){V(&c, p->in[1]), V(&c, p->in[0]), V(&c, p->in[2])});
  CHECK(index_map_box(&c, p, &why));
  CHECK(p->box[1] == p->in_shape[0]);
  CHECK(index_map_check(&c, p, &why));
  ts_compiler_fini(&c);
}

TEST(index_map_not_bijective) {
  TsCompiler c;
  ts_compiler_init(&c, (TsTarget){90, true});
  const char *why = NULL;
  /* i // 2 folds pairs together: 8 x 4 positions for 8 x 8 elements */
  IndexMap *m = new_map(&c, 2, (const int64_t[2]){8, 8}, NULL);
  set_out(&c, m, 2, (IrExpr *[2]){V(&c, m->in[0]), B(&c, IR_FLOORDIV, V(&c, m->in[1]), K(&c, 2))});
  REQUIRE(index_map_box(&c, m, &why));
  CHECK(box_const(m, 1) == 4);
  CHECK(!index_map_check(&c, m, &why) && why && strstr(why, "not a bijection"));
  /* same sizes but colliding: (i + j) % 8, j over 8 x 8 */
  IndexMap *q = new_map(&c, 2, (const int64_t[2]){8, 8}, NULL);
  IrExpr *i = V(&c, q->in[0]), *j = V(&c, q->in[1]);
  set_out(&c, q, 2,
          (IrExpr *[2]){B(&c, IR_FLOORMOD, B(&c, IR_ADD, i, j), K(&c, 8)), B(&c, IR_FLOORMOD, i, K(&c, 8))});
  REQUIRE(index_map_box(&c, q, &why));
  CHECK(index_map_check(&c, q, &why)); /* (i + j) % 8, i is a bijection */
  set_out(
      &c, q, 2,
      (IrExpr *[2]){B(&c, IR_FLOORMOD, B(&c, IR_ADD, i, j), K(&c, 8)),
                    B(&c, IR_FLOORMOD,
                      B(&c, IR_SUB, K(&c, 7), B(&c, IR_FLOORMOD, B(&c, IR_ADD, i, j), K(&c, 8))), K(&c, 8))});
  REQUIRE(index_map_box(&c, q, &why));
  CHECK(!index_map_check(&c, q, &why) && why && strstr(why, "not a bijection"));
  /* an input used by no output */
  IndexMap *u = new_map(&c, 2, (const int64_t[2]){4, 4}, NULL);
  set_out(&c, u, 1, (IrExpr *[1]){V(&c, u->in[0])});
  REQUIRE(index_map_box(&c, u, &why));
  CHECK(!index_map_check(&c, u, &why) && why && strstr(why, "appears in no output"));
  /* a negative output */
  IndexMap *n = new_map(&c, 1, (const int64_t[1]){4}, NULL);
  set_out(&c, n, 1, (IrExpr *[1]){B(&c, IR_SUB, V(&c, n->in[0]), K(&c, 1))});
  CHECK(!index_map_box(&c, n, &why) && why && strstr(why, "negative"));
  ts_compiler_fini(&c);
}
