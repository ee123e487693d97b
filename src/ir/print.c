/* print.c — the text form of Tile IR: `tilescale compile --emit ir`, --dump-after and
 * the golden files of tests/front.  Deterministic; expressions printed with the fewest
 * parentheses their precedence allows. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ir.h"

static int prec(const IrExpr *e) {
  switch (e->kind) {
    case IR_OR: return 1;
    case IR_AND: return 2;
    case IR_EQ: case IR_NE: case IR_LT: case IR_LE: case IR_GT: case IR_GE: return 3;
    case IR_BITOR: return 4;
    case IR_BITXOR: return 5;
    case IR_BITAND: return 6;
    case IR_SHL: case IR_SHR: return 7;
    case IR_ADD: case IR_SUB: return 8;
    case IR_MUL: case IR_DIV: case IR_FLOORDIV: case IR_FLOORMOD: return 9;
    case IR_NEG: case IR_NOT: case IR_BITNOT: return 10;
    default: return 11;
  }
}

static void print_float(StrBuf *out, double v, ts_dtype t) {
  char buf[64];
  if (isinf(v))
    snprintf(buf, sizeof buf, "%sinf", v < 0 ? "-" : "");
  else if (isnan(v))
    snprintf(buf, sizeof buf, "nan");
  else {
    snprintf(buf, sizeof buf, "%.9g", v);
    bool has_dot = false;
    for (char *p = buf; *p; p++) has_dot |= (*p == '.' || *p == 'e' || *p == 'n');
    if (!has_dot) snprintf(buf + strlen(buf), sizeof buf - strlen(buf), ".0");
  }
  if (t == TS_DTYPE_FLOAT32)
    sb_printf(out, "%sf", buf);
  else if (t == TS_DTYPE_FLOAT64)
    sb_append(out, buf);
  else
    sb_printf(out, "%s(%s)", dtype_name(t), buf);
}

static void print_sub(StrBuf *out, const IrExpr *e, int min_prec);

static void print_list(StrBuf *out, IrExpr *const *xs, int n) {
  for (int i = 0; i < n; i++) {
    if (i) sb_append(out, ", ");
    print_sub(out, xs[i], 0);
  }
}

static void print_sub(StrBuf *out, const IrExpr *e, int min_prec) {
  if (!e) {
    sb_append(out, "<null>");
    return;
  }
  int p = prec(e);
  bool paren = p < min_prec;
  if (paren) sb_putc(out, '(');
  switch (e->kind) {
    case IR_INT:
      if (e->dtype == TS_DTYPE_INT32)
        sb_printf(out, "%lld", (long long)e->u.ival);
      else if (e->dtype == TS_DTYPE_BOOL)
        sb_append(out, e->u.ival ? "True" : "False");
      else
        sb_printf(out, "%s(%lld)", dtype_name(e->dtype), (long long)e->u.ival);
      break;
    case IR_FLOAT: print_float(out, e->u.fval, e->dtype); break;
    case IR_STR: sb_printf(out, "\"%s\"", e->u.sval); break;
    case IR_VAR: sb_append(out, e->u.var->name); break;
    case IR_NEG: case IR_NOT: case IR_BITNOT:
      sb_append(out, e->kind == IR_NEG ? "-" : e->kind == IR_NOT ? "not " : "~");
      print_sub(out, e->u.ops[0], 10);
      break;
    case IR_MIN: case IR_MAX: case IR_TRUNCDIV: case IR_TRUNCMOD:
      sb_printf(out, "%s(", ir_expr_names[e->kind]);
      print_list(out, e->u.ops, 2);
      sb_putc(out, ')');
      break;
    case IR_SELECT: case IR_IF_THEN_ELSE:
      sb_printf(out, "%s(", ir_expr_names[e->kind]);
      print_list(out, e->u.ops, 3);
      sb_putc(out, ')');
      break;
    case IR_CAST:
      sb_printf(out, "%s(", dtype_name(e->dtype));
      print_sub(out, e->u.ops[0], 0);
      sb_putc(out, ')');
      break;
    case IR_REINTERPRET:
      sb_printf(out, "reinterpret<%s>(", dtype_name(e->dtype));
      print_sub(out, e->u.ops[0], 0);
      sb_putc(out, ')');
      break;
    case IR_CALL:
      if (e->u.call.op == IRI_DEVICE) {
        /* T.device.NAME<attrs>(operands) */
        sb_printf(out, "T.device.%s", ir_device_info[e->u.call.dop].name);
        for (int i = 0; i < e->u.call.nattrs; i++)
          sb_printf(out, "%s%lld", i ? ", " : "<", (long long)e->u.call.attrs[i]);
        if (e->u.call.nattrs) sb_putc(out, '>');
        sb_putc(out, '(');
        print_list(out, e->u.call.args, e->u.call.nargs);
        sb_putc(out, ')');
        if (e->dtype != TS_DTYPE_VOID) sb_printf(out, "->%s", dtype_name(e->dtype));
        break;
      }
      sb_printf(out, "T.%s(", ir_intrin_info[e->u.call.op].name);
      print_list(out, e->u.call.args, e->u.call.nargs);
      sb_putc(out, ')');
      /* An extern call's result type is whatever the user declared: show it. */
      if (e->u.call.op == IRI_CALL_EXTERN && e->dtype != TS_DTYPE_VOID) sb_printf(out, "->%s", dtype_name(e->dtype));
      break;
    case IR_LOAD:
      sb_printf(out, "%s[", e->u.load.buf->name);
      print_list(out, e->u.load.idx, e->u.load.nidx);
      sb_putc(out, ']');
      if (e->lanes > 1) sb_printf(out, "x%d", e->lanes);
      break;
    default:
      /* Left-associative binary operators: the right operand needs a strictly higher
       * precedence to print without parentheses. */
      print_sub(out, e->u.ops[0], p);
      sb_printf(out, " %s ", e->kind == IR_AND ? "and" : e->kind == IR_OR ? "or" : ir_expr_names[e->kind]);
      print_sub(out, e->u.ops[1], p + 1);
      break;
  }
  if (paren) sb_putc(out, ')');
}

void ir_print_expr(StrBuf *out, const IrExpr *e) { print_sub(out, e, 0); }

static void print_region(StrBuf *out, const IrRegion *r) {
  sb_printf(out, "%s[", r->buf ? r->buf->name : "<null>");
  for (int i = 0; i < r->ndim; i++) {
    if (i) sb_append(out, ", ");
    print_sub(out, r->min[i], 0);
    sb_append(out, ":+");
    print_sub(out, r->extent[i], 0);
  }
  sb_putc(out, ']');
}

static void print_shape(StrBuf *out, const IrBuffer *b) {
  sb_printf(out, "%s[", dtype_name(b->dtype));
  print_list(out, b->shape, b->ndim);
  sb_putc(out, ']');
}

static void print_block(StrBuf *out, const IrStmt *s, int indent) {
  if (!s) return;
  if (s->kind == IR_S_SEQ) {
    for (int i = 0; i < s->u.seq.n; i++) ir_print_stmt(out, s->u.seq.items[i], indent);
  } else {
    ir_print_stmt(out, s, indent);
  }
}

static const char *const axis_names = "xyz";

/* "kernel grid=(...) threads=(...) bx=blockIdx.x ...:" (the body follows, indented). */
static void print_kernel_header(StrBuf *out, const IrKernel *k) {
  sb_append(out, "kernel grid=(");
  for (int i = 0; i < 3; i++) {
    if (i) sb_append(out, ", ");
    print_sub(out, k->grid[i], 0);
  }
  sb_printf(out, ") threads=(%d, %d, %d)", k->threads[0], k->threads[1], k->threads[2]);
  for (int i = 0; i < 3; i++)
    if (k->block_var[i]) sb_printf(out, " %s=blockIdx.%c", k->block_var[i]->name, axis_names[i]);
  for (int i = 0; i < 3; i++)
    if (k->thread_var[i]) sb_printf(out, " %s=threadIdx.%c", k->thread_var[i]->name, axis_names[i]);
  if (k->smem_bytes) sb_printf(out, " smem=%lld", (long long)k->smem_bytes);
  if (k->producer_threads) sb_printf(out, " producer_threads=%d", k->producer_threads);
  if (k->raster_panel) sb_printf(out, " raster_panel=%d%s", k->raster_panel, k->raster_column ? " column" : "");
  if (k->cluster_x > 1) sb_printf(out, " cluster=%d", k->cluster_x);
  if (k->persistent) sb_printf(out, " persistent");
  if (k->source) sb_printf(out, " source=%s (%zu bytes of CUDA)", k->entry, strlen(k->source));
  sb_append(out, ":\n");
}

void ir_print_stmt(StrBuf *out, const IrStmt *s, int indent) {
  if (!s) return;
  if (s->kind == IR_S_SEQ) {
    print_block(out, s, indent);
    return;
  }
  sb_indent(out, indent);
  switch (s->kind) {
    case IR_S_FOR:
      sb_printf(out, "for %s in %s(", s->u.loop.var->name, ir_for_kind_names[s->u.loop.kind]);
      print_sub(out, s->u.loop.min, 0);
      sb_append(out, ", ");
      print_sub(out, s->u.loop.extent, 0);
      sb_putc(out, ')');
      if (s->u.loop.num_stages) sb_printf(out, " num_stages=%d", s->u.loop.num_stages);
      for (int l = 0; l < 2 && s->u.loop.norder; l++) {
        const int *xs = l == 0 ? s->u.loop.order : s->u.loop.stage;
        if (!xs) continue;
        sb_printf(out, " %s=[", l == 0 ? "order" : "stage");
        for (int i = 0; i < s->u.loop.norder; i++) sb_printf(out, "%s%d", i ? ", " : "", xs[i]);
        sb_putc(out, ']');
      }
      if (s->u.loop.unroll_factor) sb_printf(out, " unroll_factor=%d", s->u.loop.unroll_factor);
      sb_append(out, ":\n");
      print_block(out, s->u.loop.body, indent + 1);
      break;
    case IR_S_IF:
      sb_append(out, "if ");
      print_sub(out, s->u.if_.cond, 0);
      if (s->u.if_.ws_hi) sb_printf(out, " ws[%lld, %lld)", (long long)s->u.if_.ws_lo, (long long)s->u.if_.ws_hi);
      if (s->u.if_.zfill) sb_append(out, " zfill");
      sb_append(out, ":\n");
      print_block(out, s->u.if_.then_s, indent + 1);
      if (s->u.if_.else_s) {
        sb_indent(out, indent);
        sb_append(out, "else:\n");
        print_block(out, s->u.if_.else_s, indent + 1);
      }
      break;
    case IR_S_WHILE:
      sb_append(out, "while ");
      print_sub(out, s->u.while_.cond, 0);
      sb_append(out, ":\n");
      print_block(out, s->u.while_.body, indent + 1);
      break;
    case IR_S_LET:
      sb_printf(out, "let %s: %s = ", s->u.let.var->name, dtype_name(s->u.let.var->dtype));
      print_sub(out, s->u.let.value, 0);
      sb_putc(out, '\n');
      break;
    case IR_S_STORE:
      sb_printf(out, "%s[", s->u.store.buf->name);
      print_list(out, s->u.store.idx, s->u.store.nidx);
      sb_putc(out, ']');
      if (s->u.store.lanes > 1) sb_printf(out, "x%d", s->u.store.lanes);
      sb_append(out, " = ");
      print_sub(out, s->u.store.value, 0);
      sb_putc(out, '\n');
      break;
    case IR_S_ALLOC: {
      const IrBuffer *b = s->u.alloc.buf;
      sb_printf(out, "alloc %s: ", b->name);
      print_shape(out, b);
      sb_printf(out, " %s", ir_scope_names[b->scope]);
      if (b->init) {
        sb_append(out, " init=");
        print_sub(out, b->init, 0);
      }
      if (b->local_size) sb_printf(out, " local_size=%lld", (long long)b->local_size);
      if (b->smem_offset >= 0 && (b->scope == IR_SCOPE_SHARED_DYN)) sb_printf(out, " offset=%lld", (long long)b->smem_offset);
      if (b->alias_of) sb_printf(out, " view_of=%s", b->alias_of->name);
      if (b->data) {
        sb_append(out, " data=");
        print_sub(out, b->data, 0);
      }
      sb_putc(out, '\n');
      break;
    }
    case IR_S_EVAL:
      print_sub(out, s->u.eval.value, 0);
      sb_putc(out, '\n');
      break;
    case IR_S_KERNEL: {
      const IrKernel *k = &s->u.kernel;
      print_kernel_header(out, k);
      print_block(out, k->body, indent + 1);
      break;
    }
    case IR_S_BREAK: sb_append(out, "break\n"); break;
    case IR_S_CONTINUE: sb_append(out, "continue\n"); break;
    case IR_S_RETURN: sb_append(out, "T.thread_return()\n"); break;
    case IR_S_ASSERT:
      sb_append(out, "assert ");
      print_sub(out, s->u.assert_.cond, 0);
      if (s->u.assert_.msg) sb_printf(out, ", \"%s\"", s->u.assert_.msg);
      sb_putc(out, '\n');
      break;
    case IR_S_COPY:
      sb_append(out, "T.copy ");
      print_region(out, &s->u.copy.src);
      sb_append(out, " -> ");
      print_region(out, &s->u.copy.dst);
      if (s->u.copy.disable_tma) sb_append(out, " disable_tma");
      if (s->u.copy.dst_block) {
        sb_append(out, " to block ");
        print_sub(out, s->u.copy.dst_block, 0);
      }
      if (s->u.copy.barrier) {
        sb_append(out, s->u.copy.dst_block ? " remote_barrier=" : " tma barrier=");
        print_sub(out, s->u.copy.barrier, 0);
      }
      sb_putc(out, '\n');
      break;
    case IR_S_FILL:
      sb_append(out, "T.fill ");
      print_region(out, &s->u.fill.dst);
      sb_append(out, " = ");
      print_sub(out, s->u.fill.value, 0);
      sb_putc(out, '\n');
      break;
    case IR_S_REDUCE:
      sb_printf(out, "T.reduce_%s %s -> %s dim=%d clear=%s%s\n", ir_reduce_names[s->u.reduce.op],
                s->u.reduce.src->name, s->u.reduce.dst->name, s->u.reduce.dim,
                s->u.reduce.clear ? "True" : "False", s->u.reduce.nan_propagate ? " nan_propagate" : "");
      break;
    case IR_S_ATOMIC:
      sb_printf(out, "T.atomic_%s ", s->u.atomic.op == IR_ATOMIC_ADD ? "add" : s->u.atomic.op == IR_ATOMIC_MAX ? "max" : "min");
      print_region(out, &s->u.atomic.dst);
      sb_append(out, " <- ");
      if (s->u.atomic.tile)
        print_region(out, &s->u.atomic.src);
      else
        print_sub(out, s->u.atomic.value, 0);
      if (s->u.atomic.order) sb_printf(out, " memory_order=%d", s->u.atomic.order);
      sb_putc(out, '\n');
      break;
    case IR_S_GEMM:
      sb_append(out, s->u.gemm.e.buf ? "T.gemm_sp " : "T.gemm ");
      print_region(out, &s->u.gemm.a);
      sb_append(out, ", ");
      if (s->u.gemm.e.buf) {
        print_region(out, &s->u.gemm.e);
        sb_append(out, ", ");
      }
      print_region(out, &s->u.gemm.b);
      sb_append(out, " -> ");
      print_region(out, &s->u.gemm.c);
      sb_printf(out, " trans_a=%d trans_b=%d clear_accum=%d policy=%d", s->u.gemm.trans_a, s->u.gemm.trans_b,
                s->u.gemm.clear_accum, s->u.gemm.policy);
      /* Asynchronous wgmma: -1 issues only, -2 waits for all, -4-n waits until n groups remain. */
      if (s->u.gemm.wg_wait == -1) sb_append(out, " issue_only");
      else if (s->u.gemm.wg_wait == -2) sb_append(out, " wait_only");
      else if (s->u.gemm.wg_wait == -3) sb_append(out, " wait_only pending=1");
      else if (s->u.gemm.wg_wait <= -4) sb_printf(out, " wait_only pending=%d", -4 - s->u.gemm.wg_wait);
      sb_putc(out, '\n');
      break;
    case IR_S_UNSUPPORTED: sb_printf(out, "unsupported %s\n", s->u.unsupported.what); break;
    default: sb_printf(out, "<%s>\n", ir_stmt_names[s->kind]); break;
  }
}

void ir_print_func(StrBuf *out, const IrFunc *f) {
  sb_printf(out, "func %s(", f->name);
  for (int i = 0; i < f->nparams; i++) {
    if (i) sb_append(out, ", ");
    const IrParam *p = &f->params[i];
    sb_printf(out, "%s: ", p->name);
    if (p->buf) {
      print_shape(out, p->buf);
      if (p->buf->strides) {
        sb_append(out, " strides=(");
        print_list(out, p->buf->strides, p->buf->ndim);
        sb_putc(out, ')');
      }
    } else if (p->var) {
      sb_append(out, dtype_name(p->var->dtype));
    }
  }
  sb_append(out, ")");
  for (int i = 0; i < f->ndyn; i++) sb_printf(out, "%s%s", i ? ", " : " dynamic ", f->dyn_vars[i]->name);
  sb_append(out, ":\n");
  if (f->nout_idx) {
    sb_append(out, "  out_idx [");
    for (int i = 0; i < f->nout_idx; i++) sb_printf(out, "%s%d", i ? ", " : "", f->out_idx[i]);
    sb_append(out, "]\n");
  }
  for (int i = 0; i < f->nimports; i++) sb_printf(out, "  import_source (%zu bytes)\n", strlen(f->imports[i]));
  if (f->autotune_configs) sb_printf(out, "  autotune %d configs %s\n", f->nautotune_configs, f->autotune_configs);
  for (int i = 0; i < f->npass_configs; i++)
    sb_printf(out, "  pass_config %s = %s\n", f->pass_configs[i].key, f->pass_configs[i].value);
  print_block(out, f->body, 1);
}
