/* builtins_host.c — the host side of the tilelang package a kernel file touches while
 * building a kernel: `tilelang` itself (tilelang.language is T), the @tilelang.jit /
 * @autotune / @T.prim_func / @T.macro decorators called as functions,
 * tilelang.PassConfigKey, and `_tilescale`, the native queries the prelude's Python helpers
 * (torch.cuda, the carver driver) are written on.
 *
 *   registry.c  ->  here
 *
 * Decorators are read from the syntax by eval_entry.c; called as functions they return
 * their argument, so code that applies them by hand still works. */
#include <string.h>

#include "builtin.h"
#include "../base/target.h"

/* ---- decorators -------------------------------------------------------------------------------- */
static Value *identity_decorator(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi);

/* What @tilelang.jit(out_idx=...) returns: the decorator proper, applied to the function next. */
static const Builtin decorator_row = {"decorator", "*args, **kwargs", identity_decorator, 0, BI_TERSE};

/* @tilelang.jit, @tilelang.autotune, @T.prim_func, @T.macro as plain calls: f -> f, and
 * jit(...) -> a decorator. */
static Value *identity_decorator(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)arg, (void)bi;
  if (a->npos == 1 && a->nkw == 0 && a->pos[0]->kind == V_FUNC) return a->pos[0];
  return builtin_value(ev, &decorator_row, "decorator", NULL);
}

/* tilelang.compile(func, ...) in a factory the compiler re-runs (`return tilelang.compile(main,
 * out_idx=-1)`): the Python package made that call, with those options, and asked for this
 * build; here it stands for its @T.prim_func. */
static Value *compile_in_factory(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)arg, (void)bi;
  Value *f = a->npos ? a->pos[0] : NULL;
  for (int i = 0; !f && i < a->nkw; i++)
    if (!strcmp(a->kw[i], "func")) f = a->kwv[i];
  if (f && f->kind == V_FUNC) return f;
  ts_error(ev->c, a->node ? a->node->loc : SRCLOC_NONE,
           "tilelang.compile in a kernel factory takes its @T.prim_func first, got %s", f ? ev_type_name(f) : "nothing");
  return ev->poison;
}

/* ---- names computed from tables ------------------------------------------------------------------- */
/* tilelang.PassConfigKey.TL_ENABLE_FAST_MATH -> "tl.enable_fast_math" (TIR_* -> "tir.*") */
static Value *passconfig_key(Eval *ev, const char *name) {
  const char *s = !strncmp(name, "TL_", 3) ? name + 3 : !strncmp(name, "TIR_", 4) ? name + 4 : name;
  char *k = arena_printf(ev->a, "%s.%s", !strncmp(name, "TIR_", 4) ? "tir" : "tl", s);
  for (char *p = k; *p; p++)
    if (*p >= 'A' && *p <= 'Z') *p = (char)(*p + 32);
  return ev_str(ev, k);
}

/* Anything else of tilelang is a stub: using it in a kernel is the error. */
static Value *tilelang_missing(Eval *ev, const char *name) {
  return ev_opaque(ev, arena_printf(ev->a, "tilelang.%s is not available in kernels", name));
}

static Value *autotuner_missing(Eval *ev, const char *name) {
  return ev_opaque(ev, arena_printf(ev->a, "tilelang.autotuner.%s is not available in kernels", name));
}

/* ---- _tilescale: what the prelude cannot say in Python ----------------------------------------- */
/* The device host code asks about: the compile target's table row (base/target.c). */
static const TsDeviceProps *query_device(Eval *ev, SrcLoc loc) {
  const TsDeviceProps *d = ts_target_device(ev->c->target.sm);
  if (!d) ts_error(ev->c, loc, "no device properties are known for sm_%d", ev->c->target.sm);
  return d;
}

static bool int_arg(Eval *ev, CallArgs *a, int i, const char *what) {
  if (i >= a->npos) return true;
  if (a->pos[i]->kind == V_INT || a->pos[i]->kind == V_NONE) return true;
  ts_error(ev->c, a->node->loc, "%s must be an int, got %s", what, ev_type_name(a->pos[i]));
  return false;
}

/* _tilescale.device_attribute(name, device=0): an int property, or the name. */
static Value *ts_device_attribute(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)arg, (void)bi;
  SrcLoc loc = a->node->loc;
  if (a->npos < 1 || a->npos > 2 || a->nkw || a->pos[0]->kind != V_STR || !int_arg(ev, a, 1, "the device")) {
    ts_error(ev->c, loc, "device_attribute(name, device=0) takes an attribute name and a device ordinal");
    return ev->poison;
  }
  const TsDeviceProps *d = query_device(ev, loc);
  if (!d) return ev->poison;
  const char *name = a->pos[0]->u.str.s;
  if (!strcmp(name, "name")) return ev_str(ev, d->name);
  int64_t v;
  if (ts_device_int_attr(d, name, &v)) return ev_int(ev, v);
  ts_error(ev->c, loc, "unknown device attribute '%s'", name);
  return ev->poison;
}

/* _tilescale.device_properties(device=0): torch.cuda.get_device_properties' answer, a
 * namespace with its attribute names. */
static Value *ts_device_properties(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)arg, (void)bi;
  if (a->npos > 1 || a->nkw || !int_arg(ev, a, 0, "the device")) {
    ts_error(ev->c, a->node->loc, "device_properties(device=0) takes a device ordinal");
    return ev->poison;
  }
  const TsDeviceProps *d = query_device(ev, a->node->loc);
  if (!d) return ev->poison;
  PyModule *m = ev_module_new(ev, "torch.cuda._CudaDeviceProperties", true);
  const struct { const char *name; int64_t v; } ints[] = {
      {"major", d->sm / 10},
      {"minor", d->sm % 10},
      {"multi_processor_count", d->multiprocessor_count},
      {"total_memory", d->total_memory},
      {"shared_memory_per_block", d->shared_memory_per_block},
      {"shared_memory_per_block_optin", d->shared_memory_per_block_optin},
      {"shared_memory_per_multiprocessor", d->shared_memory_per_sm},
      {"regs_per_multiprocessor", 65536},
      {"max_threads_per_multi_processor", 2048},
      {"warp_size", d->warp_size},
      {"L2_cache_size", d->l2_cache_size},
  };
  for (size_t i = 0; i < TS_ARRAY_LEN(ints); i++) ev_env_set(ev, m->globals, ints[i].name, ev_int(ev, ints[i].v));
  ev_env_set(ev, m->globals, "name", ev_str(ev, d->name));
  return ev_module_value(ev, m);
}

/* _tilescale.nullcontext(enter_result=None): contextlib's context manager that does nothing. */
static Value *ts_nullcontext(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)a, (void)bi;
  Value *v = ev_new(ev, V_NULLCTX);
  v->u.enter = arg[0] ? arg[0] : ev->none;
  return v;
}

/* _tilescale.host_object(param, type): a factory argument Python holds that cannot cross to the
 * compiler (a pytest fixture, a config object): the factory runs while nothing uses it, and
 * any use is the error naming it. */
static Value *ts_host_object(Eval *ev, CallArgs *a, Value **arg, const Builtin *bi) {
  (void)bi;
  if (arg[0]->kind != V_STR || arg[1]->kind != V_STR) {
    ts_error(ev->c, a->node->loc, "host_object(param, type) takes two strings");
    return ev->poison;
  }
  return ev_opaque(ev, arena_printf(ev->a, "parameter '%s' (a %s held by Python) cannot be used by the compiler: "
                                           "pass an int, float, bool, str, dtype, tuple, list or dict",
                                    arg[0]->u.str.s, arg[1]->u.str.s));
}

/* ---- rows -------------------------------------------------------------------------------------- */
static const Builtin tilelang_rows[] = {
    {"language", NULL, bi_value_namespace, MOD_T, BI_VALUE},
    {"PassConfigKey", NULL, bi_value_namespace, MOD_PASSCONFIG, BI_VALUE},
    {"autotuner", NULL, bi_value_namespace, MOD_AUTOTUNER, BI_VALUE},
    {"layout", NULL, bi_value_namespace, MOD_LAYOUT, BI_VALUE},
    {"jit", "*args, **kwargs", identity_decorator, 0, BI_TERSE},
    {"autotune", "*args, **kwargs", identity_decorator, 0, BI_TERSE},
    {"lazy_jit", "*args, **kwargs", identity_decorator, 0, BI_TERSE},
    {"compile", "*args, **kwargs", compile_in_factory, 0, BI_TERSE},
};

static const Builtin autotuner_rows[] = {
    {"autotune", "*args, **kwargs", identity_decorator, 0, BI_TERSE},
};

static const Builtin t_decorator_rows[] = {
    {"prim_func", "*args, **kwargs", identity_decorator, 0, BI_TERSE},
    {"macro", "*args, **kwargs", identity_decorator, 0, BI_TERSE},
};

/* They check their own arguments. */
static const Builtin tilescale_rows[] = {
    {"device_attribute", "*args, **kwargs", ts_device_attribute, 0, BI_TERSE},
    {"device_properties", "*args, **kwargs", ts_device_properties, 0, BI_TERSE},
    {"nullcontext", "enter_result=None", ts_nullcontext, 0, 0},
    {"host_object", "param, type", ts_host_object, 0, 0},
};

const BuiltinTable builtins_host[] = {
    {MOD_TILELANG, tilelang_rows, TS_ARRAY_LEN(tilelang_rows), tilelang_missing},
    {MOD_AUTOTUNER, autotuner_rows, TS_ARRAY_LEN(autotuner_rows), autotuner_missing},
    {MOD_PASSCONFIG, NULL, 0, passconfig_key},
    {MOD_T, t_decorator_rows, TS_ARRAY_LEN(t_decorator_rows), NULL},
    {MOD_TILESCALE, tilescale_rows, TS_ARRAY_LEN(tilescale_rows), NULL},
    BUILTIN_TABLE_END,
};
