/* launch.c — launching compiled kernels, device memory helpers and timing.
 *
 *   ts_kernel_launch:  rt_kernel_check_args (no driver involved: every mismatch is an
 *                      error naming the parameter, nothing launched)
 *                   -> rt_ensure_device -> module load + function lookup (first time)
 *                   -> grid sizes from the bound dynamic dimensions -> cuLaunchKernel each
 *
 * The kernel ABI is cuda.h's: parameters in order (tensor -> device pointer, scalar ->
 * its C type), then every dynamic dimension as int64_t. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel.h"

/* ---- argument checking ------------------------------------------------------------- */
/* Formats "argument 2 ('B'): " in front of every message. */
static ts_status arg_error(ts_kernel *k, int i, const char *fmt, ...) TS_PRINTF(3, 4);
static ts_status arg_error(ts_kernel *k, int i, const char *fmt, ...) {
  StrBuf *e = &k->ctx->last_error;
  sb_clear(e);
  sb_printf(e, "%s: argument %d ('%s'): ", k->func_name, i, k->params[i].name);
  va_list ap;
  va_start(ap, fmt);
  sb_vprintf(e, fmt, ap);
  va_end(ap);
  return TS_ERR_LAUNCH_ARGUMENT;
}

static void format_dims(StrBuf *sb, const int64_t *v, int n) {
  sb_putc(sb, '(');
  for (int i = 0; i < n; i++) sb_printf(sb, "%s%lld", i ? ", " : "", (long long)v[i]);
  if (n == 1) sb_putc(sb, ',');
  sb_putc(sb, ')');
}

/* Converts a scalar argument to the parameter's type into an 8-byte slot. */
static ts_status pack_scalar(ts_kernel *k, int i, const ts_arg *a, uint64_t *slot, int64_t *as_int) {
  const RtParam *p = &k->params[i];
  *slot = 0;
  *as_int = 0;
  ts_dtype t = p->dtype;
  if (t == TS_DTYPE_BOOL) {
    uint8_t v = a->i != 0;
    memcpy(slot, &v, 1);
    *as_int = v;
    return TS_OK;
  }
  if (dtype_is_int(t)) {
    int bits = dtype_bits(t);
    int64_t v = a->i;
    bool fits = bits >= 64 || (dtype_is_signed(t) ? (v >= -(INT64_C(1) << (bits - 1)) && v < (INT64_C(1) << (bits - 1)))
                                                  : (v >= 0 && v < (INT64_C(1) << bits)));
    if (!fits) return arg_error(k, i, "value %lld does not fit in %s", (long long)v, dtype_name(t));
    memcpy(slot, &v, (size_t)bits / 8); /* little-endian: the low bytes are the value */
    *as_int = v;
    return TS_OK;
  }
  switch (t) {
  case TS_DTYPE_HANDLE: /* a `p: T.ptr` parameter: the device address, as given */
    memcpy(slot, &a->i, 8);
    *as_int = a->i;
    return TS_OK;
  case TS_DTYPE_FLOAT64: memcpy(slot, &a->f, 8); return TS_OK;
  case TS_DTYPE_FLOAT32: {
    float v = (float)a->f;
    memcpy(slot, &v, 4);
    return TS_OK;
  }
  case TS_DTYPE_FLOAT16: {
    uint16_t v = ts_f32_to_f16((float)a->f);
    memcpy(slot, &v, 2);
    return TS_OK;
  }
  case TS_DTYPE_BFLOAT16: {
    uint16_t v = ts_f32_to_bf16((float)a->f);
    memcpy(slot, &v, 2);
    return TS_OK;
  }
  default:
    return arg_error(k, i, "scalar parameters of type %s are not supported", dtype_name(t));
  }
}

/* No tensor (Python's None): data and shape NULL, for a parameter of some dimensions. */
static bool is_no_tensor(const RtParam *p, const ts_tensor *t) { return !t->data && !t->shape && p->ndim > 0; }

/* Checks one tensor's kind-independent facts and binds plain dynamic dimensions. */
static ts_status check_tensor(ts_kernel *k, int i, const ts_tensor *t, int64_t *dyn_vals, int *dyn_from) {
  const RtParam *p = &k->params[i];
  if (is_no_tensor(p, t)) { /* nothing to check or bind */
    if (p->untouched) return TS_OK;
    return arg_error(k, i, "no tensor was given (None), but the kernel reads or writes it");
  }
  if (t->dtype != p->dtype && dtype_is_packed(p->dtype))
    return arg_error(k, i, "expected dtype %s (or its bytes: an int8 or uint8 tensor with the last dimension halved), "
                     "got %s", ts_dtype_name(p->dtype), ts_dtype_name(t->dtype));
  if (t->dtype != p->dtype)
    return arg_error(k, i, "expected dtype %s, got %s", ts_dtype_name(p->dtype), ts_dtype_name(t->dtype));
  if (t->ndim != p->ndim)
    return arg_error(k, i, "expected %d dimensions, got %d", p->ndim, t->ndim);
  if (p->ndim > 0 && !t->shape) return arg_error(k, i, "shape is NULL");
  /* an empty tensor (torch's of a 0 dimension) may have no memory: the kernel reads none of it */
  bool empty = false;
  for (int d = 0; d < p->ndim; d++) empty |= t->shape[d] == 0;
  if (!t->data && !empty) return arg_error(k, i, "data pointer is NULL");
  if (t->device < 0) return arg_error(k, i, "tensor is in host memory; a device pointer is required");
  if (t->device != k->ctx->device)
    return arg_error(k, i, "tensor is on device %d but the context uses device %d", t->device, k->ctx->device);
  /* The generated code may use 16-byte vector loads and stores (and TMA needs 16). */
  if ((uintptr_t)t->data % 16 != 0)
    return arg_error(k, i, "data pointer %p is not 16-byte aligned", t->data);
  for (int d = 0; d < p->ndim; d++) {
    int64_t v = t->shape[d];
    if (v < 0) return arg_error(k, i, "dimension %d is negative (%lld)", d, (long long)v);
    if (p->shape[d] >= 0 && v != p->shape[d])
      return arg_error(k, i, "dimension %d is %lld but the kernel was compiled for %lld", d, (long long)v,
                       (long long)p->shape[d]);
    if (p->dyn_stride[d] > 0) { /* T.StridedTensor((M, N), (NN, 1)): NN from the tensor's stride */
      int sv = p->dyn_stride[d] - 1;
      int64_t st = 1;
      if (t->strides) st = t->strides[d];
      else
        for (int e = d + 1; e < p->ndim; e++) st *= t->shape[e];
      if (dyn_from[sv] < 0) dyn_vals[sv] = st, dyn_from[sv] = i;
    }
    int dv = p->dyn[d];
    if (dv < 0) continue;
    int64_t mul = p->dyn_mul[d] > 1 ? p->dyn_mul[d] : 1, r = v - p->dyn_add[d];
    if (mul > 1 || p->dyn_add[d]) { /* n * 4 + 2: n from the extent, if whole (check_layout checks it) */
      if (dyn_from[dv] < 0 && r >= 0 && r % mul == 0) dyn_vals[dv] = r / mul, dyn_from[dv] = i;
      continue;
    }
    if (dyn_from[dv] < 0) {
      dyn_vals[dv] = v;
      dyn_from[dv] = i;
    } else if (dyn_vals[dv] != v) {
      return arg_error(k, i, "dimension %d is %lld but '%s' is %lld from argument %d ('%s')", d, (long long)v,
                       k->dyn_names[dv], (long long)dyn_vals[dv], dyn_from[dv], k->params[dyn_from[dv]].name);
    }
  }
  return TS_OK;
}

/* Strides and extents given by expressions: checked once every variable is bound. */
static ts_status check_layout(ts_kernel *k, int i, const ts_tensor *t, RtPacked *pk) {
  const RtParam *p = &k->params[i];
  int64_t want[RT_MAX_DIMS];
  for (int d = 0; d < p->ndim; d++) {
    if (!p->shape_expr[d]) continue;
    int64_t v;
    if (!ir_eval_int(p->shape_expr[d], pk->env_vars, pk->env_vals, pk->nenv, &v))
      return arg_error(k, i, "dimension %d cannot be determined from the arguments", d);
    if (t->shape[d] != v)
      return arg_error(k, i, "dimension %d is %lld but the other arguments require %lld", d,
                       (long long)t->shape[d], (long long)v);
  }
  bool explicit_strides = p->ndim > 0 && p->stride_expr[0] != NULL;
  if (explicit_strides) {
    for (int d = 0; d < p->ndim; d++)
      if (!ir_eval_int(p->stride_expr[d], pk->env_vars, pk->env_vals, pk->nenv, &want[d]))
        return arg_error(k, i, "stride %d cannot be determined from the arguments", d);
  } else {
    int64_t s = 1;
    for (int d = p->ndim - 1; d >= 0; d--) {
      want[d] = s;
      s *= t->shape[d];
    }
  }
  if (!t->strides) {
    if (!explicit_strides) return TS_OK;
    /* No strides given means compact row-major: compare that with what the kernel wants. */
    int64_t s = 1, given[RT_MAX_DIMS];
    for (int d = p->ndim - 1; d >= 0; d--) given[d] = s, s *= t->shape[d];
    for (int d = 0; d < p->ndim; d++)
      if (given[d] != want[d] && t->shape[d] > 1) goto mismatch_compact;
    return TS_OK;
  mismatch_compact:;
    StrBuf w = {0};
    format_dims(&w, want, p->ndim);
    ts_status st = arg_error(k, i, "the kernel expects strides %s but the tensor is compact row-major", sb_str(&w));
    sb_free(&w);
    return st;
  }
  for (int d = 0; d < p->ndim; d++) {
    /* The stride of a dimension of extent 1 is never used (frameworks leave any value). */
    if (t->strides[d] == want[d] || t->shape[d] == 1) continue;
    StrBuf g = {0}, w = {0};
    format_dims(&g, t->strides, p->ndim);
    format_dims(&w, want, p->ndim);
    ts_status st =
        explicit_strides
            ? arg_error(k, i, "strides %s do not match the kernel's strides %s", sb_str(&g), sb_str(&w))
            : arg_error(k, i, "strides %s are not compact row-major %s; only contiguous tensors are supported",
                        sb_str(&g), sb_str(&w));
    sb_free(&g);
    sb_free(&w);
    return st;
  }
  return TS_OK;
}

/* 4-bit parameters (int4, uint4, float4_e2m1fn) arrive as their bytes, as torch holds them: an int8
 * or uint8 tensor whose last dimension is half the kernel's, two elements a byte.  The checks
 * below see the logical tensor: that last dimension doubled, the other strides in elements. */
typedef struct PackedArgs {
  ts_arg args[RT_MAX_ARGS];
  int64_t shape[RT_MAX_ARGS][RT_MAX_DIMS], strides[RT_MAX_ARGS][RT_MAX_DIMS];
} PackedArgs;

static ts_status packed_logical(ts_kernel *k, int i, ts_arg *a, PackedArgs *pa) {
  ts_tensor *t = &a->tensor;
  if (t->dtype != TS_DTYPE_INT8 && t->dtype != TS_DTYPE_UINT8) return TS_OK; /* check_tensor words it */
  if (t->ndim < 1 || t->ndim > RT_MAX_DIMS || !t->shape) return TS_OK;
  for (int d = 0; d < t->ndim; d++) pa->shape[i][d] = t->shape[d];
  pa->shape[i][t->ndim - 1] *= 2;
  if (t->strides) {
    if (t->strides[t->ndim - 1] != 1 && t->shape[t->ndim - 1] > 1)
      return arg_error(k, i, "the bytes of a %s tensor must be contiguous along the last dimension (stride %lld)",
                       ts_dtype_name(k->params[i].dtype), (long long)t->strides[t->ndim - 1]);
    for (int d = 0; d < t->ndim; d++) pa->strides[i][d] = d == t->ndim - 1 ? 1 : 2 * t->strides[d];
    t->strides = pa->strides[i];
  }
  t->shape = pa->shape[i];
  t->dtype = k->params[i].dtype;
  return TS_OK;
}

static ts_status check_args(ts_kernel *k, const ts_arg *args, int nargs, RtPacked *pk);

ts_status rt_kernel_check_args(ts_kernel *k, const ts_arg *args, int nargs, RtPacked *pk) {
  bool packed = false;
  for (int i = 0; i < k->nparams && i < nargs && args; i++)
    packed |= k->params[i].kind == TS_ARG_TENSOR && dtype_is_packed(k->params[i].dtype) &&
              args[i].kind == TS_ARG_TENSOR;
  if (!packed || nargs != k->nparams || nargs > RT_MAX_ARGS) return check_args(k, args, nargs, pk);
  PackedArgs pa_storage, *pa = &pa_storage; /* ~24 KB of stack, no allocation on the launch path */
  ts_status st = TS_OK;
  for (int i = 0; i < nargs && st == TS_OK; i++) {
    pa->args[i] = args[i];
    if (args[i].kind == TS_ARG_TENSOR && dtype_is_packed(k->params[i].dtype)) st = packed_logical(k, i, &pa->args[i], pa);
  }
  if (st == TS_OK) st = check_args(k, pa->args, nargs, pk);
  return st;
}

static ts_status check_args(ts_kernel *k, const ts_arg *args, int nargs, RtPacked *pk) {
  if (nargs != k->nparams || (nargs > 0 && !args)) {
    StrBuf e = {0};
    for (int i = 0; i < k->nparams; i++) sb_printf(&e, "%s%s", i ? ", " : "", k->params[i].name);
    rt_set_error(k->ctx, "%s: expected %d arguments (%s), got %d", k->func_name, k->nparams, sb_str(&e),
                 args ? nargs : 0);
    sb_free(&e);
    return TS_ERR_LAUNCH_ARGUMENT;
  }
  ts_status status = TS_OK;
  int dyn_from[RT_MAX_ARGS];
  int64_t dyn_vals[RT_MAX_ARGS];
  for (int d = 0; d < k->ndyn; d++) dyn_from[d] = -1, dyn_vals[d] = 0;
  pk->nenv = 0;
  /* Pass 1: kinds, dtypes, ranks, pointers, static dims; bind the dynamic dims. */
  for (int i = 0; i < nargs; i++) {
    const RtParam *p = &k->params[i];
    const ts_arg *a = &args[i];
    if (a->kind != p->kind)
      return arg_error(k, i, "expected a %s, got a %s", p->kind == TS_ARG_TENSOR ? "tensor" : "scalar",
                       a->kind == TS_ARG_TENSOR ? "tensor" : "scalar");
    if (p->kind == TS_ARG_TENSOR) {
      TS_CHECK(check_tensor(k, i, &a->tensor, dyn_vals, dyn_from));
      uint64_t ptr = (uint64_t)(uintptr_t)a->tensor.data;
      pk->storage[i] = ptr;
    } else {
      int64_t as_int;
      TS_CHECK(pack_scalar(k, i, a, &pk->storage[i], &as_int));
      if (p->var && (dtype_is_int(p->dtype) || p->dtype == TS_DTYPE_BOOL)) {
        pk->env_vars[pk->nenv] = p->var;
        pk->env_vals[pk->nenv++] = as_int;
      }
    }
    pk->ptrs[i] = &pk->storage[i];
  }
  for (int d = 0; d < k->ndyn; d++) {
    if (dyn_from[d] < 0) {
      rt_set_error(k->ctx, "%s: dynamic dimension '%s' is not the extent of any tensor argument", k->func_name,
                   k->dyn_names[d]);
      return TS_ERR_LAUNCH_ARGUMENT;
    }
    pk->storage[nargs + d] = (uint64_t)dyn_vals[d];
    pk->ptrs[nargs + d] = &pk->storage[nargs + d];
    if (k->dyn_vars[d]) {
      pk->env_vars[pk->nenv] = k->dyn_vars[d];
      pk->env_vals[pk->nenv++] = dyn_vals[d];
    }
  }
  pk->nptrs = nargs + k->ndyn;
  /* Pass 2: everything that depends on bound variables. */
  for (int i = 0; i < nargs; i++)
    if (k->params[i].kind == TS_ARG_TENSOR && !is_no_tensor(&k->params[i], &args[i].tensor))
      TS_CHECK(check_layout(k, i, &args[i].tensor, pk));
  /* Tensors read through TMA: every row (each stride in bytes) must be a multiple of 16. */
  for (int j = 0; j < k->ntma; j++) {
    int i = k->tma[j].param;
    const ts_tensor *t = &args[i].tensor;
    int64_t eb = dtype_bytes(t->dtype), inner = 1;
    for (int d = t->ndim - 1; d >= 1; d--) {
      inner *= t->shape[d];
      if ((inner * eb) % 16)
        return arg_error(k, i, "dimension %d has stride %lld bytes; the kernel reads this tensor with TMA, which needs "
                               "strides that are multiples of 16 bytes",
                         d - 1, (long long)(inner * eb));
    }
  }
cleanup:
  return status;
}

/* ---- TMA tensor maps ------------------------------------------------------------------ */
static CUtensorMapDataType tma_dtype(ts_dtype t) {
  switch (t) {
  case TS_DTYPE_FLOAT16: return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  case TS_DTYPE_BFLOAT16: return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  case TS_DTYPE_FLOAT32: return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  case TS_DTYPE_INT32: return CU_TENSOR_MAP_DATA_TYPE_INT32;
  default: return CU_TENSOR_MAP_DATA_TYPE_UINT8; /* 1-byte types (fp8, int8) */
  }
}

_Static_assert(sizeof(CUtensorMap) == sizeof(((RtTma *)0)->cached_map), "CUtensorMap is 128 bytes");

/* True (and *map filled) when m's last encoded map is for the same address and extents. */
static bool tma_cache_hit(const RtTma *m, const void *data, const cuuint64_t *dims, CUtensorMap *map) {
  if (!m->cached || m->cached_data != data) return false;
  for (int d = 0; d < m->rank; d++)
    if (m->cached_dims[d] != dims[d]) return false;
  memcpy(map, m->cached_map, sizeof *map);
  return true;
}

static void tma_cache_store(RtTma *m, const void *data, const cuuint64_t *dims, const CUtensorMap *map) {
  m->cached = true;
  m->cached_data = data;
  for (int d = 0; d < m->rank; d++) m->cached_dims[d] = dims[d];
  memcpy(m->cached_map, map, sizeof *map);
}

ts_status rt_kernel_encode_tma(ts_kernel *k, const ts_arg *args, RtPacked *pk) {
  ts_status status = TS_OK;
  for (int j = 0; j < k->ntma; j++) {
    RtTma *m = &k->tma[j];
    const ts_tensor *t = &args[m->param].tensor;
    CUtensorMap *map = &pk->tma[j];
    memset(map, 0, sizeof *map);
    pk->ptrs[pk->nptrs++] = map;
    cuuint64_t dims[5], strides[4];
    cuuint32_t box[5], estr[5];
    bool empty = false;
    for (int d = 0; d < m->rank; d++) {
      dims[d] = (cuuint64_t)t->shape[t->ndim - 1 - d];
      box[d] = m->box[d];
      estr[d] = 1;
      if (!dims[d]) empty = true;
    }
    /* A zero extent launches no block that loads (the map stays zero). */
    if (empty || tma_cache_hit(m, t->data, dims, map)) continue;
    cuuint64_t s = (cuuint64_t)dtype_bytes(t->dtype);
    for (int d = 0; d + 1 < m->rank; d++) strides[d] = s *= dims[d];
    CUtensorMapSwizzle sw = m->swizzle == 128 ? CU_TENSOR_MAP_SWIZZLE_128B
                          : m->swizzle == 64  ? CU_TENSOR_MAP_SWIZZLE_64B
                          : m->swizzle == 32  ? CU_TENSOR_MAP_SWIZZLE_32B
                                              : CU_TENSOR_MAP_SWIZZLE_NONE;
    CUresult r = k->ctx->drv.cuTensorMapEncodeTiled(map, tma_dtype(t->dtype), (cuuint32_t)m->rank, t->data, dims, strides,
                                                    box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE, sw,
                                                    CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                                    CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
      status = rt_cuda_fail(k->ctx, "cuTensorMapEncodeTiled", r);
      sb_printf(&k->ctx->last_error, " (TMA map of argument %d '%s')", m->param, k->params[m->param].name);
      goto cleanup;
    }
    tma_cache_store(m, t->data, dims, map);
  }
cleanup:
  return status;
}

/* ---- module and launch -------------------------------------------------------------------- */
ts_status rt_kernel_load_module(ts_kernel *k) {
  ts_context *ctx = k->ctx;
  ts_status status = TS_OK;
  if (k->module) return TS_OK;
  CUmodule mod = NULL;
  CU_CHECK(ctx, cuModuleLoadData, (&mod, k->cubin));
  for (int i = 0; i < k->nlaunches; i++) {
    RtLaunch *l = &k->launches[i];
    CUresult r = ctx->drv.cuModuleGetFunction(&l->fn, mod, l->name);
    if (r != CUDA_SUCCESS) {
      status = rt_cuda_fail(ctx, "cuModuleGetFunction", r);
      sb_printf(&ctx->last_error, " (kernel '%s')", l->name);
      goto cleanup;
    }
    /* Above 48 KB of shared memory a kernel must opt in explicitly, and the 48 KB count the
     * kernel's static __shared__ arrays (mbarriers, T.alloc_shared of non-dynamic scope) too:
     * opt in for any dynamic amount, so 48 KB dynamic + 1 KB static still launches. */
    if (l->smem_bytes > 0) {
      l->smem_attr = l->smem_bytes;
      r = ctx->drv.cuFuncSetAttribute(l->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)l->smem_bytes);
      if (r != CUDA_SUCCESS) {
        status = rt_cuda_fail(ctx, "cuFuncSetAttribute", r);
        sb_printf(&ctx->last_error, " (kernel '%s' needs %lld bytes of dynamic shared memory: more than this GPU "
                  "gives one block?)", l->name, (long long)l->smem_bytes);
        goto cleanup;
      }
    }
    for (int w = 0; w < l->nworkspaces; w++) {
      RtWorkspace *ws = &l->workspaces[w];
      size_t size = 0;
      r = ctx->drv.cuModuleGetGlobal(&ws->ptr, &size, mod, ws->symbol);
      if (r != CUDA_SUCCESS || size != (size_t)ws->bytes) {
        status = r != CUDA_SUCCESS ? rt_cuda_fail(ctx, "cuModuleGetGlobal", r) : TS_ERR_INTERNAL;
        if (r == CUDA_SUCCESS) rt_set_error(ctx, "cuModuleGetGlobal: %zu bytes", size);
        sb_printf(&ctx->last_error, " (workspace '%s' of kernel '%s', %lld bytes expected)", ws->symbol, l->name,
                  (long long)ws->bytes);
        goto cleanup;
      }
    }
  }
  if (ctx->module_hook) TS_CHECK(ctx->module_hook(ctx->module_hook_user, mod));
  k->module = mod;
  mod = NULL;
cleanup:
  if (mod) ctx->drv.cuModuleUnload(mod);
  return status;
}

/* How many blocks of persistent kernel `l` are resident on the device at once: SMs x
 * blocks per SM, or for a cluster kernel the co-resident clusters x the cluster size
 * (clusters must fit inside one GPC, so this can be fewer than SMs / cluster size).
 * Launching more than this would leave blocks waiting for others to finish all of
 * their tiles.  Computed once per kernel. */
static ts_status max_resident(ts_context *ctx, RtLaunch *l, unsigned grid0, int64_t *out) {
  ts_status status = TS_OK;
  if (!l->max_resident) {
    int threads = l->block[0] * l->block[1] * l->block[2], n = 0;
    if (l->cluster_x > 1) {
      CUlaunchConfig cfg = {0};
      cfg.gridDimX = grid0;
      cfg.gridDimY = cfg.gridDimZ = 1;
      cfg.blockDimX = (unsigned)l->block[0];
      cfg.blockDimY = (unsigned)l->block[1];
      cfg.blockDimZ = (unsigned)l->block[2];
      cfg.sharedMemBytes = (unsigned)l->smem_bytes;
      CU_CHECK(ctx, cuOccupancyMaxActiveClusters, (&n, l->fn, &cfg));
      l->max_resident = (int64_t)n * l->cluster_x;
    } else {
      int sms = 0;
      CU_CHECK(ctx, cuOccupancyMaxActiveBlocksPerMultiprocessor, (&n, l->fn, threads, (size_t)l->smem_bytes));
      CU_CHECK(ctx, cuDeviceGetAttribute, (&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, ctx->cu_device));
      l->max_resident = (int64_t)n * sms;
    }
    if (ctx->verbose)
      fprintf(stderr, "tilescale: persistent kernel '%s': %lld blocks co-resident (%s%d)\n", l->name,
              (long long)l->max_resident, l->cluster_x > 1 ? "clusters of the cluster size: " : "blocks per SM: ", n);
    if (l->max_resident <= 0) {
      rt_set_error(ctx, "kernel '%s' cannot run on this device: no block%s of %d threads with %lld bytes of shared "
                   "memory fit%s", l->name, l->cluster_x > 1 ? " cluster" : "", threads, (long long)l->smem_bytes,
                   l->cluster_x > 1 ? " in one GPC" : " on an SM");
      TS_CHECK(TS_ERR_LAUNCH_ARGUMENT);
    }
  }
  *out = l->max_resident;
cleanup:
  return status;
}

/* The dynamic shared memory of launch l for these arguments: its compiled bytes plus those of
 * a buffer sized at run time (IrKernel.smem_dyn), the function opted in to that much first. */
static ts_status launch_smem(ts_context *ctx, ts_kernel *k, RtLaunch *l, const RtPacked *pk, int64_t *out) {
  ts_status status = TS_OK;
  int64_t extra = 0;
  *out = l->smem_bytes;
  if (!l->smem_dyn) return TS_OK;
  if (!ir_eval_int(l->smem_dyn, pk->env_vars, pk->env_vals, pk->nenv, &extra) || extra < 0) {
    rt_set_error(ctx, "%s: the shared memory of kernel '%s' cannot be computed from the arguments", k->func_name,
                 l->name);
    TS_CHECK(TS_ERR_LAUNCH_ARGUMENT);
  }
  *out = l->smem_bytes + extra;
  if (*out > l->smem_attr) {
    CUresult r = ctx->drv.cuFuncSetAttribute(l->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)*out);
    if (r != CUDA_SUCCESS) {
      rt_set_error(ctx, "%s: kernel '%s' needs %lld bytes of shared memory for these arguments (%lld sized by them): "
                   "more than one block may have on this GPU", k->func_name, l->name, (long long)*out,
                   (long long)extra);
      TS_CHECK(TS_ERR_LAUNCH_ARGUMENT);
    }
    l->smem_attr = *out;
  }
cleanup:
  return status;
}

/* Everything after the checks: device, module, grids, cuLaunchKernel of each kernel. */
static ts_status submit(ts_kernel *k, RtPacked *pk, CUstream stream) {
  ts_context *ctx = k->ctx;
  ts_status status = TS_OK;
  TS_CHECK(rt_ensure_device(ctx));
  TS_CHECK(rt_kernel_load_module(k));
  for (int i = 0; i < k->nlaunches; i++) {
    RtLaunch *l = &k->launches[i];
    unsigned grid[3];
    for (int d = 0; d < 3; d++) {
      int64_t v = l->grid_static[d];
      if (l->grid[d] && !ir_eval_int(l->grid[d], pk->env_vars, pk->env_vals, pk->nenv, &v)) {
        rt_set_error(ctx, "%s: grid dimension %d of kernel '%s' cannot be computed from the arguments",
                     k->func_name, d, l->name);
        TS_CHECK(TS_ERR_LAUNCH_ARGUMENT);
      }
      if (v <= 0) {
        /* An empty problem (a zero extent) launches nothing, like an empty loop.  (TileLang
         * raises here; a MoE layer whose expert got no tokens should not fail.) */
        goto next_kernel;
      }
      if (v > (d == 0 ? INT64_C(0x7fffffff) : INT64_C(65535))) {
        rt_set_error(ctx, "%s: grid dimension %d of kernel '%s' is %lld, above the hardware limit",
                     k->func_name, d, l->name, (long long)v);
        TS_CHECK(TS_ERR_LAUNCH_ARGUMENT);
      }
      grid[d] = (unsigned)v;
    }
    int64_t smem;
    TS_CHECK(launch_smem(ctx, k, l, pk, &smem));
    if (l->persistent) {
      /* The blocks stride over the work by gridDim.x: launch only what runs at once. */
      int64_t cap = 0;
      TS_CHECK(max_resident(ctx, l, grid[0], &cap));
      if (grid[0] > cap) grid[0] = (unsigned)cap;
    }
    /* T.alloc_global workspaces the kernel reads or counts in start at zero on every launch
     * (the one-shot GPU barriers count up from 0), ordered before the kernel by the stream;
     * those it only stores to are left as they are (CgWorkspace.zero).  Launches of the same
     * kernel on other streams share them. */
    for (int w = 0; w < l->nworkspaces; w++)
      if (l->workspaces[w].zero)
        CU_CHECK(ctx, cuMemsetD8Async, (l->workspaces[w].ptr, 0, (size_t)l->workspaces[w].bytes, stream));
    if (k->cooperative) {
      /* T.sync_grid spins until every block arrives: a grid larger than what fits on the GPU
       * at once would hang, so it is refused with the numbers instead. */
      int per_sm = 0, sms = 0, threads = l->block[0] * l->block[1] * l->block[2];
      CU_CHECK(ctx, cuOccupancyMaxActiveBlocksPerMultiprocessor, (&per_sm, l->fn, threads, (size_t)smem));
      CU_CHECK(ctx, cuDeviceGetAttribute, (&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, ctx->cu_device));
      uint64_t blocks = (uint64_t)grid[0] * grid[1] * grid[2];
      if (blocks > (uint64_t)per_sm * (uint64_t)sms) {
        rt_set_error(ctx,
                     "%s: kernel '%s' calls T.sync_grid, which needs all %llu blocks resident at once, but only "
                     "%d per SM x %d SMs fit (%d threads, %lld bytes of shared memory per block): use a smaller "
                     "or persistent grid",
                     k->func_name, l->name, (unsigned long long)blocks, per_sm, sms, threads, (long long)smem);
        TS_CHECK(TS_ERR_LAUNCH_ARGUMENT);
      }
      CU_CHECK(ctx, cuLaunchCooperativeKernel,
               (l->fn, grid[0], grid[1], grid[2], (unsigned)l->block[0], (unsigned)l->block[1],
                (unsigned)l->block[2], (unsigned)smem, stream, pk->ptrs));
    } else {
      CU_CHECK(ctx, cuLaunchKernel,
               (l->fn, grid[0], grid[1], grid[2], (unsigned)l->block[0], (unsigned)l->block[1],
                (unsigned)l->block[2], (unsigned)smem, stream, pk->ptrs, NULL));
    }
  next_kernel:;
  }
cleanup:
  return status;
}

static ts_status prepare(ts_kernel *k, const ts_arg *args, int nargs, RtPacked *pk) {
  ts_status status = rt_kernel_check_args(k, args, nargs, pk);
  if (status != TS_OK) return status;
  if (!k->cubin) {
    rt_set_error(k->ctx, "%s: the kernel has no binary (compiled with no_jit); nothing to launch", k->func_name);
    return TS_ERR_INVALID_ARGUMENT;
  }
  if (k->ntma) {
    status = rt_ensure_device(k->ctx);
    if (status == TS_OK) status = rt_kernel_encode_tma(k, args, pk);
  }
  return status;
}

static ts_status kernel_launch(ts_kernel *k, const ts_arg *args, int nargs, void *stream) {
  RtPacked pk;
  ts_status status = prepare(k, args, nargs, &pk);
  if (status != TS_OK) return status;
  return submit(k, &pk, (CUstream)stream);
}

ts_status ts_kernel_launch(ts_kernel *k, const ts_arg *args, int nargs, void *stream) {
  if (!k) return TS_ERR_INVALID_ARGUMENT;
  TsAllocScope scope;
  jmp_buf oom;
  rt_alloc_enter(k->ctx, &scope, &oom);
  if (setjmp(oom)) return rt_out_of_memory(k->ctx, &scope);
  ts_status status = kernel_launch(k, args, nargs, stream);
  rt_alloc_leave(&scope);
  return status;
}

/* ---- device memory ------------------------------------------------------------------ */
ts_status ts_device_malloc(ts_context *ctx, size_t bytes, void **dptr) {
  if (!ctx || !dptr) return TS_ERR_INVALID_ARGUMENT;
  *dptr = NULL;
  ts_status status = TS_OK;
  CUdeviceptr p = 0;
  TS_CHECK(rt_ensure_device(ctx));
  CU_CHECK(ctx, cuMemAlloc, (&p, bytes ? bytes : 1));
  *dptr = (void *)(uintptr_t)p;
cleanup:
  return status;
}

ts_status ts_device_free(ts_context *ctx, void *dptr) {
  if (!ctx) return TS_ERR_INVALID_ARGUMENT;
  if (!dptr) return TS_OK;
  ts_status status = TS_OK;
  TS_CHECK(rt_ensure_device(ctx));
  CU_CHECK(ctx, cuMemFree, ((CUdeviceptr)(uintptr_t)dptr));
cleanup:
  return status;
}

ts_status ts_memcpy_h2d(ts_context *ctx, void *dst, const void *src, size_t bytes) {
  if (!ctx || ((!dst || !src) && bytes)) return TS_ERR_INVALID_ARGUMENT;
  ts_status status = TS_OK;
  TS_CHECK(rt_ensure_device(ctx));
  if (bytes) CU_CHECK(ctx, cuMemcpyHtoD, ((CUdeviceptr)(uintptr_t)dst, src, bytes));
cleanup:
  return status;
}

ts_status ts_memcpy_d2h(ts_context *ctx, void *dst, const void *src, size_t bytes) {
  if (!ctx || ((!dst || !src) && bytes)) return TS_ERR_INVALID_ARGUMENT;
  ts_status status = TS_OK;
  TS_CHECK(rt_ensure_device(ctx));
  if (bytes) CU_CHECK(ctx, cuMemcpyDtoH, (dst, (CUdeviceptr)(uintptr_t)src, bytes));
cleanup:
  return status;
}

ts_status ts_memset_d8(ts_context *ctx, void *dst, unsigned char value, size_t bytes) {
  if (!ctx || (!dst && bytes)) return TS_ERR_INVALID_ARGUMENT;
  ts_status status = TS_OK;
  TS_CHECK(rt_ensure_device(ctx));
  if (bytes) CU_CHECK(ctx, cuMemsetD8, ((CUdeviceptr)(uintptr_t)dst, value, bytes));
cleanup:
  return status;
}

ts_status ts_synchronize(ts_context *ctx) {
  if (!ctx) return TS_ERR_INVALID_ARGUMENT;
  ts_status status = TS_OK;
  TS_CHECK(rt_ensure_device(ctx));
  CU_CHECK(ctx, cuCtxSynchronize, ());
cleanup:
  return status;
}

/* ---- timing --------------------------------------------------------------------------- */
#define L2_FLUSH_BYTES ((size_t)256 << 20) /* far above any L2 (H100: 50 MB, H200: 60 MB) */

/* What one timed repetition runs: a kernel launch or a device copy. */
typedef struct BenchWork {
  ts_kernel *k;
  RtPacked *pk;
  CUdeviceptr dst, src;
  size_t bytes;
} BenchWork;

static ts_status bench_run_once(ts_context *ctx, const BenchWork *w) {
  ts_status status = TS_OK;
  if (w->k) return submit(w->k, w->pk, NULL);
  CU_CHECK(ctx, cuMemcpyDtoDAsync, (w->dst, w->src, w->bytes, NULL));
cleanup:
  return status;
}

static int cmp_float(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}

/* warmup untimed runs, then reps runs each between two events on the default stream;
 * the L2 flush (a memset of the scratch buffer) is enqueued before the start event so
 * it is outside the timed region.  Result: the median. */
static ts_status bench(ts_context *ctx, const BenchWork *w, int warmup, int reps, int flush_l2, double *median_ms) {
  ts_status status = TS_OK;
  CUevent *ev = NULL;
  float *times = NULL;
  int nev = 0;
  if (reps <= 0 || warmup < 0 || !median_ms) {
    rt_set_error(ctx, "benchmark: reps must be positive and warmup non-negative");
    return TS_ERR_INVALID_ARGUMENT;
  }
  TS_CHECK(rt_ensure_device(ctx));
  if (flush_l2 && !ctx->l2_scratch) {
    CU_CHECK(ctx, cuMemAlloc, (&ctx->l2_scratch, L2_FLUSH_BYTES));
    ctx->l2_scratch_size = L2_FLUSH_BYTES;
  }
  ev = ts_calloc((size_t)reps * 2, sizeof *ev);
  times = ts_calloc((size_t)reps, sizeof *times);
  for (; nev < reps * 2; nev++) CU_CHECK(ctx, cuEventCreate, (&ev[nev], CU_EVENT_DEFAULT));
  for (int i = 0; i < warmup; i++) TS_CHECK(bench_run_once(ctx, w));
  for (int i = 0; i < reps; i++) {
    /* A different byte each time so no layer can elide the write. */
    if (flush_l2) CU_CHECK(ctx, cuMemsetD8Async, (ctx->l2_scratch, (unsigned char)i, ctx->l2_scratch_size, NULL));
    CU_CHECK(ctx, cuEventRecord, (ev[2 * i], NULL));
    TS_CHECK(bench_run_once(ctx, w));
    CU_CHECK(ctx, cuEventRecord, (ev[2 * i + 1], NULL));
  }
  CU_CHECK(ctx, cuEventSynchronize, (ev[2 * reps - 1]));
  for (int i = 0; i < reps; i++) CU_CHECK(ctx, cuEventElapsedTime, (&times[i], ev[2 * i], ev[2 * i + 1]));
  qsort(times, (size_t)reps, sizeof *times, cmp_float);
  *median_ms = reps % 2 ? times[reps / 2] : 0.5 * ((double)times[reps / 2 - 1] + times[reps / 2]);
cleanup:
  for (int i = 0; i < nev; i++) ctx->drv.cuEventDestroy(ev[i]);
  ts_free(ev);
  ts_free(times);
  return status;
}

static ts_status kernel_benchmark(ts_kernel *k, const ts_arg *args, int nargs, int warmup, int reps, int flush_l2,
                                  double *median_ms);

ts_status ts_kernel_benchmark(ts_kernel *k, const ts_arg *args, int nargs, int warmup, int reps, int flush_l2,
                              double *median_ms) {
  if (!k) return TS_ERR_INVALID_ARGUMENT;
  TsAllocScope scope;
  jmp_buf oom;
  rt_alloc_enter(k->ctx, &scope, &oom);
  if (setjmp(oom)) return rt_out_of_memory(k->ctx, &scope);
  ts_status status = kernel_benchmark(k, args, nargs, warmup, reps, flush_l2, median_ms);
  rt_alloc_leave(&scope);
  return status;
}

static ts_status kernel_benchmark(ts_kernel *k, const ts_arg *args, int nargs, int warmup, int reps, int flush_l2,
                                  double *median_ms) {
  RtPacked pk;
  ts_status status = prepare(k, args, nargs, &pk);
  if (status != TS_OK) return status;
  BenchWork w = {.k = k, .pk = &pk};
  return bench(k->ctx, &w, warmup, reps, flush_l2, median_ms);
}

ts_status ts_memcpy_benchmark(ts_context *ctx, void *dst, const void *src, size_t bytes, int warmup, int reps,
                              int flush_l2, double *median_ms) {
  if (!ctx || !dst || !src) return TS_ERR_INVALID_ARGUMENT;
  BenchWork w = {.dst = (CUdeviceptr)(uintptr_t)dst, .src = (CUdeviceptr)(uintptr_t)src, .bytes = bytes};
  return bench(ctx, &w, warmup, reps, flush_l2, median_ms);
}
