/* cuda.c — prints thread-level Tile IR as one CUDA C++ translation unit, plus the launch
 * metadata (grid expressions, block dims, dynamic shared memory) the runtime needs.
 *
 *   passes (lower_tile_ops ... flatten) ─► cg_cuda ─► NVRTC / nvcc ─► cubin
 *
 * Each KERNEL statement of the function becomes one `extern "C" __global__` function with
 * the ABI of cuda.h.  Inside, the IR maps one to one onto C: loops, ifs, lets as const
 * declarations, buffer accesses as flat array indexing.  Everything the generated code
 * needs beyond CUDA itself (casts involving half/bfloat16/fp8, Python floor division,
 * vector copies, shuffles and atomics for every type) lives in the device/tilescale headers,
 * so this file stays a printer: it never expands a helper inline.
 *
 * Names: the user's names are kept, made legal C and unique within a kernel (a clash or a
 * keyword gets a _N suffix), so the output reads like the kernel file. */
#include "cuda_gen.h"

#include "../layout/layout.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- statements -------------------------------------------------------------------- */
static bool workspace_needs_zero(const IrStmt *body, const IrBuffer *b);
static void stmt(Cg *g, const IrStmt *s);

static void block(Cg *g, const IrStmt *s) {
  g->indent++;
  if (s) stmt(g, s);
  g->indent--;
}

static bool expr_has_load(const IrExpr *e) {
  switch (e->kind) {
  case IR_INT: case IR_FLOAT: case IR_STR: case IR_VAR: return false;
  case IR_LOAD: return true;
  case IR_CALL:
    for (int i = 0; i < e->u.call.nargs; i++)
      if (expr_has_load(e->u.call.args[i])) return true;
    return !ir_call_is_pure(e); /* thread-level intrinsics have effects */
  default:
    for (int i = 0; i < ir_expr_nops[e->kind]; i++)
      if (expr_has_load(e->u.ops[i])) return true;
    return false;
  }
}

static void for_loop(Cg *g, const IrStmt *s) {
  IrForKind kind = s->u.loop.kind;
  if (kind == IR_FOR_PARALLEL || kind == IR_FOR_THREAD) {
    ts_error(g->c, s->loc, "internal error: %s loop reached codegen without being lowered to threads",
             ir_for_kind_names[kind]);
    return;
  }
  const IrVar *v = s->u.loop.var;
  const char *type = cg_ctype(v->dtype);
  if (!type || !is_integer(v->dtype)) type = "int";
  const char *name = bind_name(g, v, v->name);
  const IrExpr *min = s->u.loop.min, *ext = s->u.loop.extent;
  if (nonneg(g, min)) pmap_put(g->c->arena, &g->nonneg, v, (void *)1);
  int64_t m0;
  bool zero_min = ir_is_const_int(min, &m0) && m0 == 0;

  /* The bound is evaluated once in the IR; hoist it when it reads memory that the body
   * might change. */
  StrBuf bound = {0};
  if (expr_has_load(ext) || (!zero_min && expr_has_load(min))) {
    const char *end = fresh_name(g, arena_printf(g->c->arena, "%s_end", name));
    StrBuf tmp = {0};
    if (!zero_min) {
      expr_as(g, &tmp, min, v->dtype, PREC_ADD);
      sb_append(&tmp, " + ");
    }
    expr_as(g, &tmp, ext, v->dtype, PREC_ADD + 1);
    line(g, "const %s %s = %s;", type, end, sb_str(&tmp));
    sb_free(&tmp);
    sb_append(&bound, end);
  } else {
    if (!zero_min) {
      expr_as(g, &bound, min, v->dtype, PREC_ADD);
      sb_append(&bound, " + ");
      expr_as(g, &bound, ext, v->dtype, PREC_ADD + 1);
    } else {
      expr_as(g, &bound, ext, v->dtype, PREC_REL + 1);
    }
  }
  if (kind == IR_FOR_UNROLLED && s->u.loop.unroll_factor > 0) line(g, "#pragma unroll %d", s->u.loop.unroll_factor);
  else if (kind == IR_FOR_UNROLLED || kind == IR_FOR_VECTORIZED) line(g, "#pragma unroll");
  StrBuf init = {0};
  expr_as(g, &init, min, v->dtype, 0);
  line(g, "for (%s %s = %s; %s < %s; ++%s) {", type, name, sb_str(&init), name, sb_str(&bound), name);
  sb_free(&init);
  sb_free(&bound);
  block(g, s->u.loop.body);
  line(g, "}");
}

/* `FN<bytes>(&dst, &src[, pred]);` for the vector store st (cp.async, global -> shared). */
static void async_copy(Cg *g, const char *fn, int bytes, const IrStmt *st, const IrExpr *src, const IrExpr *pred) {
  g->use_gemm = true;
  line_start(g);
  sb_printf(g->out, "%s<%d>(", fn, bytes);
  address_of(g, g->out, &(IrExpr){.kind = IR_LOAD, .lanes = 1, .loc = st->loc,
                                  .u.load = {st->u.store.buf, st->u.store.idx, st->u.store.nidx}});
  sb_append(g->out, ", ");
  address_of(g, g->out, src);
  if (pred) {
    sb_append(g->out, ", ");
    expr_as(g, g->out, pred, TS_DTYPE_BOOL, 0);
  }
  sb_append(g->out, ");\n");
}

/* A SEQ of one statement: that statement; else s. */
static const IrStmt *lone_stmt(const IrStmt *s) {
  return s && s->kind == IR_S_SEQ && s->u.seq.n == 1 ? s->u.seq.items[0] : s;
}

/* Is `e` (the IF's else branch) the unrolled zero fill of `lanes` elements of buffer b? */
static bool is_zero_fill(const IrStmt *e, const IrBuffer *b, int lanes) {
  int64_t ext = 0;
  e = lone_stmt(e);
  if (!e || e->kind != IR_S_FOR || e->u.loop.kind != IR_FOR_UNROLLED || !ir_is_const_int(e->u.loop.extent, &ext) ||
      ext != lanes)
    return false;
  const IrStmt *z = lone_stmt(e->u.loop.body);
  if (!z || z->kind != IR_S_STORE || z->u.store.buf != b || z->u.store.lanes != 1) return false;
  const IrExpr *v = z->u.store.value;
  return (v->kind == IR_INT && v->u.ival == 0) || (v->kind == IR_FLOAT && v->u.fval == 0.0);
}

/* An IF marked zfill (lower_vector_copy: a cp.async vector copy under a condition, the zero
 * fill of its destination otherwise) as one ts::cp_async_zfill: a source size of 0 where the
 * condition fails writes the zeros, without a branch (a guarded 64x64 + 64x128 tile copy took
 * 141 registers with the branches, 64 without).  False when the branch no longer has that
 * shape. */
static bool zfill_copy(Cg *g, const IrStmt *s) {
  const IrStmt *t = lone_stmt(s->u.if_.then_s);
  if (!s->u.if_.zfill || !t || t->kind != IR_S_STORE || !t->u.store.async_) return false;
  const IrExpr *src = t->u.store.value;
  int lanes = t->u.store.lanes, bytes = lanes * tbytes(t->u.store.buf->dtype);
  if (src->kind != IR_LOAD || src->lanes != lanes || (bytes != 4 && bytes != 8 && bytes != 16) ||
      !is_zero_fill(s->u.if_.else_s, t->u.store.buf, lanes))
    return false;
  async_copy(g, "ts::cp_async_zfill", bytes, t, src, s->u.if_.cond);
  return true;
}

static void if_stmt(Cg *g, const IrStmt *s, bool chained) {
  if (!chained && zfill_copy(g, s)) return;
  StrBuf cond = {0};
  expr_as(g, &cond, s->u.if_.cond, TS_DTYPE_BOOL, 0);
  if (chained) sb_printf(g->out, "if (%s) {\n", sb_str(&cond));
  else line(g, "if (%s) {", sb_str(&cond));
  sb_free(&cond);
  block(g, s->u.if_.then_s);
  const IrStmt *e = lone_stmt(s->u.if_.else_s);
  if (e && e->kind == IR_S_IF) {
    line_start(g);
    sb_append(g->out, "} else ");
    if_stmt(g, e, true);
    return;
  }
  if (e) {
    line(g, "} else {");
    block(g, e);
  }
  line(g, "}");
}

/* Largest power of two <= 16 that divides the byte size: register arrays and static
 * shared arrays are aligned so the vector copies the lowering chose are legal. */
static int array_align(int64_t bytes) {
  int a = 16;
  while (a > 1 && bytes % a) a /= 2;
  return a;
}

static void alloc(Cg *g, const IrStmt *s) {
  const IrBuffer *b = s->u.alloc.buf;
  const char *type = mem_ctype(b);
  if (!type || b->dtype == TS_DTYPE_VOID) {
    ts_error(g->c, s->loc, "buffer '%s' has no CUDA element type", b->name);
    return;
  }
  const char *name = bind_name(g, b, b->name);
  int64_t numel = ir_buffer_numel(b);
  if (b->alias_of && b->scope != IR_SCOPE_VAR) {
    /* A view (T.view / reshape) reuses the memory of the buffer it aliases. */
    line(g, "%s* %s = reinterpret_cast<%s*>(%s);", type, name, type, buf_name(g, b->alias_of));
    return;
  }
  if (b->data) {
    /* T.make_tensor: a typed view of a loaded 64-bit address, read once here. */
    StrBuf addr = {0};
    expr(g, &addr, b->data, 0);
    line(g, "%s* __restrict__ %s = reinterpret_cast<%s*>(%s);", type, name, type, sb_str(&addr));
    sb_free(&addr);
    return;
  }
  switch (b->scope) {
  case IR_SCOPE_SHARED_DYN: {
    if (b->smem_offset < 0) {
      ts_error(g->c, s->loc, "internal error: shared buffer '%s' has no offset (merge_shared_memory did not run)",
               b->name);
      return;
    }
    if (numel > 0 && b->smem_offset + mem_bytes(b, numel) > g->smem_end)
      g->smem_end = b->smem_offset + mem_bytes(b, numel);
    line(g, "%s* %s = reinterpret_cast<%s*>(ts_smem + %lld);", type, name, type, (long long)b->smem_offset);
    return;
  }
  case IR_SCOPE_SHARED:
  case IR_SCOPE_BARRIER:
    if (numel <= 0) {
      ts_error(g->c, s->loc, "shared buffer '%s' needs a constant size", b->name);
      return;
    }
    if (b->scope == IR_SCOPE_BARRIER) line(g, "__shared__ __align__(8) uint64_t %s[%lld];", name, (long long)numel);
    else line(g, "__shared__ __align__(%d) %s %s[%lld];", array_align(mem_bytes(b, numel)), type, name,
              (long long)(packed_mem(b) ? mem_bytes(b, numel) : numel));
    return;
  case IR_SCOPE_LOCAL:
  case IR_SCOPE_FRAGMENT: {
    int64_t n = b->local_size > 0 ? b->local_size : numel;
    if (numel == 0 && b->scope == IR_SCOPE_LOCAL) return; /* T.alloc_local(0, ...): no storage (mem_access() refuses one) */
    if (n <= 0) {
      ts_error(g->c, s->loc, "internal error: register buffer '%s' has no per-thread size", b->name);
      return;
    }
    if (cg_is_wide16(g, b)) { /* one element per 32-bit word: see cuda_wide16.c */
      line(g, "__align__(%d) unsigned int %s[%lld]; /* %s elements */", array_align(n * 4), name, (long long)n, type);
      return;
    }
    line(g, "__align__(%d) %s %s[%lld];", array_align(n * tbytes(b->dtype)), type, name, (long long)n);
    return;
  }
  case IR_SCOPE_VAR: {
    StrBuf init = {0};
    if (b->init) {
      expr_as(g, &init, b->init, b->dtype, 0);
    } else {
      IrExpr zero = {.kind = is_floating(b->dtype) ? IR_FLOAT : IR_INT, .dtype = b->dtype, .lanes = 1};
      expr(g, &init, &zero, 0);
    }
    line(g, "%s %s = %s;", type, name, sb_str(&init));
    sb_free(&init);
    return;
  }
  case IR_SCOPE_GLOBAL: {
    /* T.alloc_global: static storage of the module, not a local array (an atomic through a
     * generic pointer into local memory is undefined, and every thread would have its own
     * copy).  C linkage keeps the symbol findable by cuModuleGetGlobal; the runtime zeroes
     * it before each launch where the kernel may read it first (CgWorkspace.zero).  The
     * kernel sees it through a pointer of the buffer's name, so accesses print like any
     * other global buffer. */
    if (numel <= 0) {
      ts_error(g->c, s->loc, "workspace '%s' needs a constant size", b->name);
      return;
    }
    const char *sym = fresh_name(g, arena_printf(g->c->arena, "%s_ws_%s", g->kernel_name, name));
    int64_t bytes = mem_bytes(b, numel);
    sb_printf(g->decls, "extern \"C\" {\n__device__ __align__(16) %s %s[%lld];\n}\n", type, sym,
              (long long)(packed_mem(b) ? bytes : numel));
    CgWorkspace *w = ARENA_NEW(g->c->arena, CgWorkspace);
    w->symbol = sym;
    w->bytes = bytes;
    w->zero = workspace_needs_zero(g->kernel_body, b);
    vec_push(g->c->arena, &g->workspaces, w);
    line(g, "%s* %s = %s;", type, name, sym);
    return;
  }
  default: ts_unreachable(); /* every scope is a case above */
  }
}

/* STORE of V lanes (or an asynchronous one of one lane): a contiguous copy (possibly with one conversion) becomes
 * ts::copy_vec<V>; any other vector value is printed element by element under
 * `#pragma unroll`, every V-lane load reading element [flat + lane]. */
static void vector_store(Cg *g, const IrStmt *s) {
  int lanes = s->u.store.lanes;
  if (packed_mem(s->u.store.buf))
    ts_error(g->c, s->loc, "internal error: vector store to the 4-bit tensor '%s'", s->u.store.buf->name);
  const IrExpr *v = s->u.store.value, *src = v;
  if (src->kind == IR_CAST) src = src->u.ops[0];
  if (s->u.store.async_ && v == src && src->kind == IR_LOAD && src->lanes == lanes) {
    /* global -> shared without conversion, completed by the pipeline's cp.async waits */
    async_copy(g, "ts::cp_async", lanes * tbytes(s->u.store.buf->dtype), s, src, NULL);
    return;
  }
  if (src->kind == IR_LOAD && src->lanes == lanes && src->u.load.buf->scope != IR_SCOPE_VAR &&
      s->u.store.buf->scope != IR_SCOPE_VAR && (v == src || v->dtype == s->u.store.buf->dtype)) {
    line_start(g);
    sb_printf(g->out, "ts::copy_vec<%d>(", lanes);
    address_of(g, g->out, &(IrExpr){.kind = IR_LOAD, .lanes = 1, .loc = s->loc,
                                    .u.load = {s->u.store.buf, s->u.store.idx, s->u.store.nidx}});
    sb_append(g->out, ", ");
    address_of(g, g->out, src);
    sb_append(g->out, ");\n");
    return;
  }
  const char *lane = fresh_name(g, "vec");
  line(g, "#pragma unroll");
  line(g, "for (int %s = 0; %s < %d; ++%s) {", lane, lane, lanes, lane);
  g->indent++;
  g->lane = lane;
  line_start(g);
  mem_access(g, g->out, s->u.store.buf, s->u.store.idx, s->u.store.nidx, lanes, s->loc);
  sb_append(g->out, " = ");
  expr_as(g, g->out, v, s->u.store.buf->dtype, 0);
  sb_append(g->out, ";\n");
  g->lane = NULL;
  g->indent--;
  line(g, "}");
}

static void stmt(Cg *g, const IrStmt *s) {
  switch (s->kind) {
  case IR_S_SEQ:
    for (int i = 0; i < s->u.seq.n; i++) stmt(g, s->u.seq.items[i]);
    return;
  case IR_S_FOR: for_loop(g, s); return;
  case IR_S_IF: if_stmt(g, s, false); return;
  case IR_S_WHILE: {
    StrBuf cond = {0};
    expr_as(g, &cond, s->u.while_.cond, TS_DTYPE_BOOL, 0);
    line(g, "while (%s) {", sb_str(&cond));
    sb_free(&cond);
    block(g, s->u.while_.body);
    line(g, "}");
    return;
  }
  case IR_S_LET: {
    const IrVar *v = s->u.let.var;
    const char *type = cg_ctype(v->dtype);
    if (!type || v->dtype == TS_DTYPE_VOID) {
      ts_error(g->c, s->loc, "'%s' has a type CUDA cannot hold", v->name);
      return;
    }
    StrBuf val = {0};
    expr_as(g, &val, s->u.let.value, v->dtype, 0);
    if (nonneg(g, s->u.let.value)) pmap_put(g->c->arena, &g->nonneg, v, (void *)1);
    line(g, "const %s %s = %s;", type, bind_name(g, v, v->name), sb_str(&val));
    sb_free(&val);
    return;
  }
  case IR_S_STORE: {
    if (s->u.store.lanes > 1 || s->u.store.async_) { /* (a 4- or 8-byte element may be a cp.async) */
      vector_store(g, s);
      return;
    }
    line_start(g);
    if (packed_mem(s->u.store.buf)) { /* ts::st4(bytes, i, value) */
      sb_printf(g->out, "ts::st4<%s>(%s, ", cg_ctype(s->u.store.buf->dtype), buf_name(g, s->u.store.buf));
      flat_index(g, g->out, s->u.store.buf, s->u.store.idx, s->u.store.nidx);
      sb_append(g->out, ", ");
      expr_as(g, g->out, s->u.store.value, s->u.store.buf->dtype, 0);
      sb_append(g->out, ");\n");
      return;
    }
    mem_access(g, g->out, s->u.store.buf, s->u.store.idx, s->u.store.nidx, 1, s->loc);
    bool wide = cg_is_wide16(g, s->u.store.buf);
    sb_append(g->out, wide ? " = ts::to_word(" : " = ");
    expr_as(g, g->out, s->u.store.value, s->u.store.buf->dtype, 0);
    sb_append(g->out, wide ? ");\n" : ";\n");
    return;
  }
  case IR_S_ALLOC: alloc(g, s); return;
  case IR_S_EVAL:
    line_start(g);
    expr(g, g->out, s->u.eval.value, 0);
    sb_append(g->out, ";\n");
    return;
  case IR_S_BREAK: line(g, "break;"); return;
  case IR_S_CONTINUE: line(g, "continue;"); return;
  case IR_S_RETURN: line(g, "return;"); return; /* pass thread_return_* checked what follows */
  case IR_S_ASSERT: {
    StrBuf cond = {0}, msg = {0}, where = {0};
    expr_as(g, &cond, s->u.assert_.cond, TS_DTYPE_BOOL, PREC_UNARY);
    c_string(&msg, s->u.assert_.msg ? s->u.assert_.msg : "assertion");
    c_string(&where, arena_printf(g->c->arena, "%s:%d:%d", s->loc.file ? s->loc.file->name : "?", s->loc.line,
                                  s->loc.col));
    line(g, "if (!%s) ts::assert_fail(%s, %s);", sb_str(&cond), sb_str(&msg), sb_str(&where));
    sb_free(&cond);
    sb_free(&msg);
    sb_free(&where);
    return;
  }
  case IR_S_KERNEL:
    ts_error(g->c, s->loc, "a T.Kernel inside another T.Kernel is not supported");
    return;
  case IR_S_UNSUPPORTED:
    ts_error(g->c, s->loc, "%s is not supported yet", s->u.unsupported.what ? s->u.unsupported.what : "this construct");
    return;
  default:
    ts_error(g->c, s->loc, "internal error: tile operation '%s' reached codegen without being lowered",
             ir_stmt_names[s->kind]);
    return;
  }
}

/* ---- kernels ------------------------------------------------------------------------ */
static bool has_dyn_smem(const IrStmt *s) {
  if (!s) return false;
  switch (s->kind) {
  case IR_S_SEQ:
    for (int i = 0; i < s->u.seq.n; i++)
      if (has_dyn_smem(s->u.seq.items[i])) return true;
    return false;
  case IR_S_FOR: return has_dyn_smem(s->u.loop.body);
  case IR_S_WHILE: return has_dyn_smem(s->u.while_.body);
  case IR_S_IF: return has_dyn_smem(s->u.if_.then_s) || has_dyn_smem(s->u.if_.else_s);
  case IR_S_ALLOC: return s->u.alloc.buf->scope == IR_SCOPE_SHARED_DYN && !s->u.alloc.buf->alias_of;
  default: return false;
  }
}

static bool has_swizzled_smem(const IrStmt *s) {
  if (!s) return false;
  switch (s->kind) {
  case IR_S_SEQ:
    for (int i = 0; i < s->u.seq.n; i++)
      if (has_swizzled_smem(s->u.seq.items[i])) return true;
    return false;
  case IR_S_FOR: return has_swizzled_smem(s->u.loop.body);
  case IR_S_WHILE: return has_swizzled_smem(s->u.while_.body);
  case IR_S_IF: return has_swizzled_smem(s->u.if_.then_s) || has_swizzled_smem(s->u.if_.else_s);
  case IR_S_ALLOC:
    return s->u.alloc.buf->scope == IR_SCOPE_SHARED_DYN && s->u.alloc.buf->layout != NULL &&
           s->u.alloc.buf->layout->swizzle; /* a pinned linear layout needs no 1024-byte alignment */
  default: return false;
  }
}

/* Binds the kernel's parameter names in ABI order and prints the parameter list. */
static void params(Cg *g, StrBuf *sig) {
  const IrFunc *f = g->f;
  bool first = true;
  for (int i = 0; i < f->nparams; i++) {
    const IrParam *p = &f->params[i];
    if (!first) sb_append(sig, ", ");
    first = false;
    if (p->buf) {
      const char *type = mem_ctype(p->buf);
      sb_printf(sig, "%s* __restrict__ %s", type ? type : "void",
                bind_name(g, p->buf, p->name ? p->name : p->buf->name));
    } else if (p->var) {
      const char *type = p->pointer ? "void*" : cg_ctype(p->var->dtype); /* `p: T.ptr` */
      if (!type || p->var->dtype == TS_DTYPE_VOID) {
        ts_error(g->c, p->var->loc, "parameter '%s' has a type CUDA cannot pass", p->var->name);
        type = "int";
      }
      sb_printf(sig, "%s %s", type, bind_name(g, p->var, p->name ? p->name : p->var->name));
    } else {
      ts_error(g->c, f->loc, "internal error: parameter %d is neither a tensor nor a scalar", i);
    }
  }
  for (int i = 0; i < f->ndyn; i++) {
    if (!first) sb_append(sig, ", ");
    first = false;
    sb_printf(sig, "int64_t %s", bind_name(g, f->dyn_vars[i], f->dyn_vars[i]->name));
  }
  /* TMA tensor maps last: TMA reads them from the kernel's parameter space, which is why
   * they are passed by value and __grid_constant__ (their address is taken). */
  for (int i = 0; i < f->ntma; i++) {
    if (!first) sb_append(sig, ", ");
    first = false;
    sb_printf(sig, "const __grid_constant__ ts::TmaDesc %s", bind_name(g, f->tma_maps[i].var, f->tma_maps[i].var->name));
  }
}

/* A T.alloc_global made in the prim_func outside its kernels: one module symbol that every
 * kernel of the function using it points at.  The first kernel that uses it declares it
 * (and has it zeroed before its launch); later ones read what earlier ones wrote. */
typedef struct FnWorkspace {
  const IrStmt *alloc;
  const char *symbol; /* NULL until a kernel declared it */
} FnWorkspace;

typedef struct BufUse { const IrBuffer *b; bool found; } BufUse;
static bool is_memory_of(const IrBuffer *x, const IrBuffer *b) {
  for (int guard = 0; x && guard < 64; guard++, x = x->alias_of)
    if (x == b) return true;
  return false;
}
static void use_stmt(IrStmt *s, void *ctx) {
  BufUse *u = ctx;
  if ((s->kind == IR_S_STORE && is_memory_of(s->u.store.buf, u->b)) ||
      (s->kind == IR_S_ALLOC && s->u.alloc.buf != u->b && is_memory_of(s->u.alloc.buf, u->b)))
    u->found = true;
}
static void use_expr(IrExpr *e, void *ctx) {
  BufUse *u = ctx;
  if (e->kind == IR_LOAD && is_memory_of(e->u.load.buf, u->b)) u->found = true;
}

/* Whether workspace b must be zeroed before each launch of the kernel whose body is `body`:
 * any access other than a plain store (a read, an atomic, an address handed to a GPU barrier
 * or a device operation: each is a LOAD of b) may see what is there before the kernel wrote
 * it, and T.alloc_barrier_gpu words and atomic counters count up from 0.  A workspace the
 * kernel only stores to (split-KV partial results that later kernels of the function read)
 * starts undefined, as TileLang's T.alloc_global does, and costs no memset per launch. */
static bool workspace_needs_zero(const IrStmt *body, const IrBuffer *b) {
  BufUse u = {b, false};
  IrVisitor v = {NULL, use_expr, &u};
  if (!body) return true;
  ir_visit((IrStmt *)body, &v);
  return u.found;
}

/* Points the kernel at the function-level workspaces its body uses. */
static void function_workspaces(Cg *g, const IrKernel *k, const PtrVec *fn_ws) {
  for (int i = 0; i < fn_ws->len; i++) {
    FnWorkspace *w = fn_ws->items[i];
    const IrBuffer *b = w->alloc->u.alloc.buf;
    BufUse u = {b, false};
    IrVisitor v = {use_stmt, use_expr, &u};
    if (k->body) ir_visit(k->body, &v);
    if (!u.found) continue;
    if (w->symbol) {
      line(g, "%s* %s = %s;", mem_ctype(b), bind_name(g, b, b->name), w->symbol);
      continue;
    }
    int before = g->workspaces.len;
    stmt(g, w->alloc); /* declares the symbol; zeroed before this kernel's launch */
    if (g->workspaces.len > before) w->symbol = ((CgWorkspace *)g->workspaces.items[before])->symbol;
  }
}

/* T.CUDASourceCodeKernel: the user's source as it is, launched by its entry's name with the
 * kernel's grid and block (front/source_kernel.c checked the entry). */
static void source_kernel(const IrKernel *k, StrBuf *src, CgKernelInfo *info) {
  memset(info, 0, sizeof *info);
  for (int d = 0; d < 3; d++) {
    info->grid[d] = k->grid[d];
    info->block[d] = k->threads[d] > 0 ? k->threads[d] : 1;
  }
  info->name = k->entry;
  sb_printf(src, "\n// T.CUDASourceCodeKernel: %s\n%s\n", k->entry, k->source);
}

static void kernel(Cg *g, const IrKernel *k, const PtrVec *host_lets, const PtrVec *fn_ws, const char *name,
                   StrBuf *src, CgKernelInfo *info) {
  Arena *a = g->c->arena;
  if (k->source) {
    source_kernel(k, src, info);
    return;
  }
  g->names = (PtrMap){0};
  g->used = (StrMap){0};
  g->nonneg = (PtrMap){0};
  g->smem_end = 0;
  g->kernel_name = name;
  g->kernel_body = k->body;
  g->workspaces = (PtrVec){0};
  StrBuf decls = {0};
  g->decls = &decls;
  strmap_put(a, &g->used, name, (void *)1);

  StrBuf sig = {0}, body = {0};
  params(g, &sig);
  g->out = &body;
  g->indent = 1;
  if (k->smem_bytes > 0 || has_dyn_smem(k->body))
    /* Swizzled tiles XOR address bits 4..9 (as TMA and wgmma do), so they start on 1 KB. */
    line(g, "extern __shared__ __align__(%d) unsigned char ts_smem[];", has_swizzled_smem(k->body) ? 1024 : 128);
  /* Host-side lets before this kernel (shapes derived from dynamic dims, ...) are
   * recomputed on the device: they only read parameters. */
  for (int i = 0; i < host_lets->len; i++) stmt(g, host_lets->items[i]);
  function_workspaces(g, k, fn_ws);
  cg_find_wide16(g, k->body);
  if (k->body) stmt(g, k->body);

  int nthreads = 1;
  for (int d = 0; d < 3; d++) {
    info->grid[d] = k->grid[d];
    info->block[d] = k->threads[d] > 0 ? k->threads[d] : 1;
    if (d == 0) info->block[0] += k->producer_threads; /* warp_specialize's producer warpgroup */
    nthreads *= info->block[d];
  }
  info->name = name;
  info->cluster_x = k->cluster_x;
  info->persistent = k->persistent;
  info->smem_bytes = k->smem_bytes > g->smem_end ? k->smem_bytes : g->smem_end;
  info->smem_dyn = k->smem_dyn;
  info->nworkspaces = g->workspaces.len;
  info->workspaces = ARENA_ARRAY(a, CgWorkspace, g->workspaces.len > 0 ? g->workspaces.len : 1);
  for (int i = 0; i < g->workspaces.len; i++) info->workspaces[i] = *(CgWorkspace *)g->workspaces.items[i];

  /* setmaxnreg needs a register cap at entry: one block per SM gives every thread
   * 64K / nthreads registers, which the warpgroups then trade. */
  /* A thread-block cluster (TMA multicast between its blocks) is fixed at compile time, so
   * a plain launch suffices: the runtime's grid is a multiple of it (warp_specialize). */
  /* T.Kernel(prelude=...): C++ the kernel calls (device functions, templates), at file scope */
  if (k->prelude) sb_printf(src, "\n%s\n", k->prelude);
  if (decls.len) sb_printf(src, "\n%s", sb_str(&decls));
  sb_free(&decls);
  g->decls = NULL;
  char cluster[48] = "";
  if (k->cluster_x > 1) snprintf(cluster, sizeof cluster, "__cluster_dims__(%d, 1, 1) ", k->cluster_x);
  int min_blocks = k->producer_threads ? (k->ws_blocks > 1 ? k->ws_blocks : 1) : k->min_blocks;
  if (min_blocks > 0)
    sb_printf(src, "\nextern \"C\" __global__ void %s__launch_bounds__(%d, %d) %s(%s) {\n", cluster, nthreads, min_blocks,
              name, sb_str(&sig));
  else
    sb_printf(src, "\nextern \"C\" __global__ void %s__launch_bounds__(%d) %s(%s) {\n", cluster, nthreads, name,
              sb_str(&sig));
  sb_append(src, sb_str(&body));
  sb_append(src, "}\n");
  sb_free(&sig);
  sb_free(&body);
}

bool cg_cuda(TsCompiler *c, const IrFunc *f, CgOutput *out) {
  Arena *a = c->arena;
  int errors0 = c->diag.errors;
  Cg g = {.c = c, .f = f};
  *out = (CgOutput){0};

  /* The function body: KERNEL statements, with host lets in between. */
  PtrVec items = {0}, kernels = {0}, host_lets = {0}, fn_ws = {0};
  if (f->body && f->body->kind == IR_S_SEQ) {
    for (int i = 0; i < f->body->u.seq.n; i++) vec_push(a, &items, f->body->u.seq.items[i]);
  } else if (f->body) {
    vec_push(a, &items, f->body);
  }
  for (int i = 0; i < items.len; i++) {
    const IrStmt *s = items.items[i];
    if (s->kind == IR_S_KERNEL) vec_push(a, &kernels, (void *)s);
  }
  if (!kernels.len) {
    ts_error(c, f->loc, "'%s' launches no kernel (no T.Kernel block)", f->name);
    return false;
  }

  /* The kernel symbol: the function's name made a legal identifier. */
  Cg namer = {.c = c, .f = f};
  const char *base = fresh_name(&namer, arena_printf(a, "%s_kernel", f->name ? f->name : "main"));

  StrBuf src = {0}, kernels_src = {0};
  out->kernels = ARENA_ARRAY(a, CgKernelInfo, kernels.len);
  out->nkernels = kernels.len;
  int ki = 0;
  for (int i = 0; i < items.len; i++) {
    const IrStmt *s = items.items[i];
    if (s->kind == IR_S_LET) {
      vec_push(a, &host_lets, (void *)s);
    } else if (s->kind == IR_S_ALLOC && s->u.alloc.buf->scope == IR_SCOPE_GLOBAL && !s->u.alloc.buf->alias_of &&
               !s->u.alloc.buf->data) {
      FnWorkspace *w = ARENA_NEW(a, FnWorkspace);
      w->alloc = s;
      vec_push(a, &fn_ws, w);
    } else if (s->kind == IR_S_KERNEL) {
      const char *name = kernels.len == 1 ? base : arena_printf(a, "%s_%d", base, ki);
      kernel(&g, &s->u.kernel, &host_lets, &fn_ws, name, &kernels_src, &out->kernels[ki]);
      ki++;
    } else if (s->kind != IR_S_SEQ || s->u.seq.n) {
      ts_error(c, s->loc, "only kernels and constants may appear outside T.Kernel (found '%s')",
               ir_stmt_names[s->kind]);
    }
  }

  sb_printf(&src, "// Generated by TileScale-C from '%s'.\n", f->name ? f->name : "?");
  sb_append(&src, "#include <tilescale/common.cuh>\n");
  if (g.use_reduce) sb_append(&src, "#include <tilescale/reduce.cuh>\n");
  if (g.use_atomic) sb_append(&src, "#include <tilescale/atomic.cuh>\n");
  if (g.use_curand) sb_append(&src, "#include <tilescale/rng_curand.cuh>\n");
  if (g.use_gemm || f->ntma) {
    if (!g.wgmma_any_width && !f->nimports) wgmma_width_list(&src, g.wgmma_widths);
    sb_append(&src, "#include <tilescale/gemm.cuh>\n");
  }
  if (g.use_gemm_sp) sb_append(&src, "#include <tilescale/gemm_sp.cuh>\n");
  for (int i = 0; i < f->nimports; i++) /* T.import_source: the user's device code, verbatim */
    sb_printf(&src, "\n// T.import_source\n%s\n", f->imports[i]);
  sb_append(&src, sb_str(&kernels_src));
  out->source = arena_strdup(a, sb_str(&src));
  out->uses_dist = g.device_flags & IRD_DIST;
  out->uses_shmem = g.device_flags & IRD_SHMEM;
  out->cooperative = g.device_flags & IRD_GRID_SYNC;
  sb_free(&src);
  sb_free(&kernels_src);
  return c->diag.errors == errors0;
}
