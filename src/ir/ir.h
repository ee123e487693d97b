/* ir.h — the whole Tile IR in one header (DESIGN.md §5).
 *
 *   src/front builds it  ->  passes (src/pass) rewrite it  ->  codegen/cuda.c prints it.
 *
 * Expressions and statements are tagged unions with a SrcLoc, allocated from the
 * compilation's arena.  Node kinds are rows of X-macro tables; the enums, names,
 * printer and verifier are generated from them, so adding a node is one row.
 * Passes build new nodes instead of mutating shared ones, unless they own them.
 *
 * Two levels live in one IR:
 *  - tile level (what the user wrote): buffers of any scope with logical indices,
 *    T.Parallel loops, tile ops (copy, fill, reduce, gemm, ...);
 *  - thread level (after lower_tile_ops): per-thread loops over fragment registers,
 *    explicit guards, barriers, shuffles.  Codegen only accepts this level. */
#ifndef TS_IR_H
#define TS_IR_H

#include "../base/compiler.h"
#include "../../include/tilescale.h" /* ts_dtype */

/* ---- data types ------------------------------------------------------------------ */
/* ts_dtype (public) names element types; IR expressions also use TS_DTYPE_HANDLE for
 * pointers and TS_DTYPE_VOID for statements-as-expressions. */
int dtype_bits(ts_dtype t);
int dtype_bytes(ts_dtype t);           /* bits/8, at least 1 */
bool dtype_is_packed(ts_dtype t);      /* int4, uint4, float4_e2m1fn: two elements a byte in memory */
int64_t dtype_storage_bytes(ts_dtype t, int64_t n); /* bytes of n elements in memory */
bool dtype_is_float(ts_dtype t);       /* f16 bf16 f32 f64 f8 */
bool dtype_is_int(ts_dtype t);         /* signed or unsigned, not bool */
bool dtype_is_signed(ts_dtype t);
const char *dtype_name(ts_dtype t);    /* "float16" */
const char *dtype_cuda(ts_dtype t);    /* "half", "__nv_bfloat16", "float", "int", ... */
bool dtype_parse(const char *s, ts_dtype *out); /* accepts "float16", "half", "fp16"?, "float8_e4m3fn"... */

/* ---- scopes of buffers ------------------------------------------------------------ */
#define IR_SCOPES(X)                                                                      \
  X(GLOBAL, "global")                                                                     \
  X(SHARED_DYN, "shared.dyn")                                                             \
  X(SHARED, "shared")                                                                     \
  X(LOCAL, "local")                                                                       \
  X(FRAGMENT, "local.fragment")                                                           \
  X(VAR, "local.var")                                                                     \
  X(BARRIER, "shared.barrier")
typedef enum IrScope {
#define IR_SCOPE_ENUM(n, s) IR_SCOPE_##n,
  IR_SCOPES(IR_SCOPE_ENUM)
#undef IR_SCOPE_ENUM
      IR_SCOPE_COUNT
} IrScope;
extern const char *const ir_scope_names[IR_SCOPE_COUNT];

/* ---- expressions ------------------------------------------------------------------- */
/* X(name, printed form, number of operands (-1 = special), flags) */
#define IRF_BINARY 1   /* a op b */
#define IRF_CMP 2      /* result is bool */
#define IRF_LOGIC 4    /* operands are bool */
#define IRF_COMMUT 8   /* commutative */
#define IR_EXPR_KINDS(X)                                         \
  X(INT, "int", 0, 0)           /* ival, dtype */                 \
  X(FLOAT, "float", 0, 0)       /* fval, dtype */                 \
  X(STR, "str", 0, 0)           /* sval (only as call args) */    \
  X(VAR, "var", 0, 0)           /* var */                         \
  X(ADD, "+", 2, IRF_BINARY | IRF_COMMUT)                         \
  X(SUB, "-", 2, IRF_BINARY)                                      \
  X(MUL, "*", 2, IRF_BINARY | IRF_COMMUT)                         \
  X(DIV, "/", 2, IRF_BINARY)    /* floats only */                 \
  X(FLOORDIV, "//", 2, IRF_BINARY)                                \
  X(FLOORMOD, "%", 2, IRF_BINARY)                                 \
  X(TRUNCDIV, "truncdiv", 2, 0)                                   \
  X(TRUNCMOD, "truncmod", 2, 0)                                   \
  X(MIN, "min", 2, IRF_COMMUT)                                    \
  X(MAX, "max", 2, IRF_COMMUT)                                    \
  X(EQ, "==", 2, IRF_BINARY | IRF_CMP | IRF_COMMUT)               \
  X(NE, "!=", 2, IRF_BINARY | IRF_CMP | IRF_COMMUT)               \
  X(LT, "<", 2, IRF_BINARY | IRF_CMP)                             \
  X(LE, "<=", 2, IRF_BINARY | IRF_CMP)                            \
  X(GT, ">", 2, IRF_BINARY | IRF_CMP)                             \
  X(GE, ">=", 2, IRF_BINARY | IRF_CMP)                            \
  X(AND, "&&", 2, IRF_BINARY | IRF_LOGIC | IRF_COMMUT)            \
  X(OR, "||", 2, IRF_BINARY | IRF_LOGIC | IRF_COMMUT)             \
  X(BITAND, "&", 2, IRF_BINARY | IRF_COMMUT)                      \
  X(BITOR, "|", 2, IRF_BINARY | IRF_COMMUT)                       \
  X(BITXOR, "^", 2, IRF_BINARY | IRF_COMMUT)                      \
  X(SHL, "<<", 2, IRF_BINARY)                                     \
  X(SHR, ">>", 2, IRF_BINARY)                                     \
  X(NEG, "-", 1, 0)                                               \
  X(NOT, "!", 1, IRF_LOGIC)                                       \
  X(BITNOT, "~", 1, 0)                                            \
  X(SELECT, "select", 3, 0)     /* a = cond, b = then, c = else; both sides may be evaluated */ \
  X(IF_THEN_ELSE, "if_then_else", 3, 0) /* like SELECT but only the taken side is evaluated */ \
  X(CAST, "cast", 1, 0)         /* value conversion to dtype */   \
  X(REINTERPRET, "reinterpret", 1, 0) /* bit cast to dtype */     \
  X(CALL, "call", -1, 0)        /* intrin, args */                \
  X(LOAD, "load", -1, 0)        /* buffer[indices]; lanes > 1 = vector of contiguous elements */

typedef enum IrExprKind {
#define IR_EXPR_ENUM(n, s, k, f) IR_##n,
  IR_EXPR_KINDS(IR_EXPR_ENUM)
#undef IR_EXPR_ENUM
      IR_EXPR_KIND_COUNT
} IrExprKind;
extern const char *const ir_expr_names[IR_EXPR_KIND_COUNT];
extern const int ir_expr_nops[IR_EXPR_KIND_COUNT];
extern const int ir_expr_flags[IR_EXPR_KIND_COUNT];

/* Intrinsic calls.  X(name, printed/T.* name, CUDA float32 function or NULL, nargs (-1 any), flags)
 * Math intrinsics are pure and element-wise; codegen picks the dtype-specific spelling. */
#define IRI_PURE 1
#define IRI_FLOAT 2   /* operands are converted to float */
#define IRI_LANES 4   /* reads other threads' values (shuffles, votes): its result depends on
                         which threads run it together */
#define IRI_BLOCK_SYNC 8 /* a barrier of the whole block (__syncthreads and its predicate forms) */
#define IRI_FAST 16      /* T.__exp and the other fast-math forms: the CUDA function (__expf) is
                            float32's; other types call it without the "__" (exp, hexp's float) */
#define IR_INTRINSICS(X)                                                   \
  X(EXP, "exp", "expf", 1, IRI_PURE | IRI_FLOAT)                           \
  X(EXP2, "exp2", "exp2f", 1, IRI_PURE | IRI_FLOAT)                        \
  X(EXP10, "exp10", "exp10f", 1, IRI_PURE | IRI_FLOAT)                     \
  X(LOG, "log", "logf", 1, IRI_PURE | IRI_FLOAT)                           \
  X(LOG2, "log2", "log2f", 1, IRI_PURE | IRI_FLOAT)                        \
  X(LOG10, "log10", "log10f", 1, IRI_PURE | IRI_FLOAT)                     \
  X(LOG1P, "log1p", "log1pf", 1, IRI_PURE | IRI_FLOAT)                     \
  X(SQRT, "sqrt", "sqrtf", 1, IRI_PURE | IRI_FLOAT)                        \
  X(RSQRT, "rsqrt", "rsqrtf", 1, IRI_PURE | IRI_FLOAT)                     \
  X(SIN, "sin", "sinf", 1, IRI_PURE | IRI_FLOAT)                           \
  X(COS, "cos", "cosf", 1, IRI_PURE | IRI_FLOAT)                           \
  X(TAN, "tan", "tanf", 1, IRI_PURE | IRI_FLOAT)                           \
  X(TANH, "tanh", "tanhf", 1, IRI_PURE | IRI_FLOAT)                        \
  X(SINH, "sinh", "sinhf", 1, IRI_PURE | IRI_FLOAT)                        \
  X(COSH, "cosh", "coshf", 1, IRI_PURE | IRI_FLOAT)                        \
  X(ASIN, "asin", "asinf", 1, IRI_PURE | IRI_FLOAT)                        \
  X(ACOS, "acos", "acosf", 1, IRI_PURE | IRI_FLOAT)                        \
  X(ATAN, "atan", "atanf", 1, IRI_PURE | IRI_FLOAT)                        \
  X(ASINH, "asinh", "asinhf", 1, IRI_PURE | IRI_FLOAT)                     \
  X(ACOSH, "acosh", "acoshf", 1, IRI_PURE | IRI_FLOAT)                     \
  X(ATANH, "atanh", "atanhf", 1, IRI_PURE | IRI_FLOAT)                     \
  X(ATAN2, "atan2", "atan2f", 2, IRI_PURE | IRI_FLOAT)                     \
  X(HYPOT, "hypot", "hypotf", 2, IRI_PURE | IRI_FLOAT)                     \
  X(COPYSIGN, "copysign", "copysignf", 2, IRI_PURE | IRI_FLOAT)            \
  X(NEXTAFTER, "nextafter", "nextafterf", 2, IRI_PURE | IRI_FLOAT)         \
  X(LDEXP, "ldexp", "ldexpf", 2, IRI_PURE | IRI_FLOAT) /* x * 2^e (e converted to int by the call) */ \
  X(NEARBYINT, "nearbyint", "nearbyintf", 1, IRI_PURE | IRI_FLOAT)         \
  /* fast math (T.__exp ...: CUDA's __expf and friends, less accurate; IRI_FAST) */ \
  X(FAST_EXP, "__exp", "__expf", 1, IRI_PURE | IRI_FLOAT | IRI_FAST)       \
  X(FAST_EXP10, "__exp10", "__exp10f", 1, IRI_PURE | IRI_FLOAT | IRI_FAST) \
  X(FAST_LOG, "__log", "__logf", 1, IRI_PURE | IRI_FLOAT | IRI_FAST)       \
  X(FAST_LOG2, "__log2", "__log2f", 1, IRI_PURE | IRI_FLOAT | IRI_FAST)    \
  X(FAST_LOG10, "__log10", "__log10f", 1, IRI_PURE | IRI_FLOAT | IRI_FAST) \
  X(FAST_TAN, "__tan", "__tanf", 1, IRI_PURE | IRI_FLOAT | IRI_FAST)       \
  X(FAST_COS, "__cos", "__cosf", 1, IRI_PURE | IRI_FLOAT | IRI_FAST)       \
  X(FAST_SIN, "__sin", "__sinf", 1, IRI_PURE | IRI_FLOAT | IRI_FAST)       \
  X(FAST_RCP, "fast_rcp", NULL, 1, IRI_PURE | IRI_FLOAT) /* approximate 1/x (rcp.approx) */ \
  X(SIGMOID, "sigmoid", NULL, 1, IRI_PURE | IRI_FLOAT)                     \
  X(ERF, "erf", "erff", 1, IRI_PURE | IRI_FLOAT)                           \
  X(POW, "pow", "powf", 2, IRI_PURE | IRI_FLOAT)                           \
  X(FMOD, "fmod", "fmodf", 2, IRI_PURE | IRI_FLOAT)                        \
  X(FLOOR, "floor", "floorf", 1, IRI_PURE | IRI_FLOAT)                     \
  X(CEIL, "ceil", "ceilf", 1, IRI_PURE | IRI_FLOAT)                        \
  X(ROUND, "round", "nearbyintf", 1, IRI_PURE | IRI_FLOAT) /* ties to even (TVM's tir.round) */ \
  X(ROUND_AWAY, "round_ties_away_from_zero", "roundf", 1, IRI_PURE | IRI_FLOAT)         \
  X(TRUNC, "trunc", "truncf", 1, IRI_PURE | IRI_FLOAT)                     \
  X(ABS, "abs", NULL, 1, IRI_PURE)                                         \
  X(ISNAN, "isnan", NULL, 1, IRI_PURE)                                     \
  X(ISINF, "isinf", NULL, 1, IRI_PURE)                                     \
  X(ISFINITE, "isfinite", NULL, 1, IRI_PURE)                               \
  X(POPCOUNT, "popcount", NULL, 1, IRI_PURE)                               \
  X(CLZ, "clz", NULL, 1, IRI_PURE)                                         \
  /* thread-level intrinsics (created by lowering or builtins_warp.c, printed by codegen) */ \
  X(SHFL_XOR, "shfl_xor", NULL, 2, IRI_LANES) /* value, lane mask (full warp) */ \
  /* T.shfl_*: mask, value, lane (sync) or lane delta (up, down, xor), width */ \
  X(SHFL_SYNC, "shfl_sync", NULL, 4, IRI_LANES)                            \
  X(SHFL_UP, "shfl_up", NULL, 4, IRI_LANES)                                \
  X(SHFL_DOWN, "shfl_down", NULL, 4, IRI_LANES)                            \
  X(SHFL_XOR_SYNC, "shfl_xor_sync", NULL, 4, IRI_LANES)                    \
  /* warp votes (mask, predicate): int32 (any, all), uint64 (ballot); uint32 (match: mask, value) */ \
  X(ANY_SYNC, "any_sync", NULL, 2, IRI_LANES)                              \
  X(ALL_SYNC, "all_sync", NULL, 2, IRI_LANES)                              \
  X(BALLOT_SYNC, "ballot_sync", NULL, 2, IRI_LANES)                        \
  X(MATCH_ANY_SYNC, "match_any_sync", NULL, 2, IRI_LANES)                  \
  X(MATCH_ALL_SYNC, "match_all_sync", NULL, 2, IRI_LANES)                  \
  X(ACTIVEMASK, "activemask", NULL, 0, IRI_LANES) /* -> uint64 */          \
  /* block barriers with a predicate -> int32: count of, all of, any of the block's threads */ \
  X(SYNCTHREADS_COUNT, "syncthreads_count", NULL, 1, IRI_LANES | IRI_BLOCK_SYNC) \
  X(SYNCTHREADS_AND, "syncthreads_and", NULL, 1, IRI_LANES | IRI_BLOCK_SYNC) \
  X(SYNCTHREADS_OR, "syncthreads_or", NULL, 1, IRI_LANES | IRI_BLOCK_SYNC) \
  /* bit searches: ffs(x) -> int32 (1 + lowest set bit, 0 for none); fns(mask, base, n) -> uint32 */ \
  X(FFS, "__ffs", NULL, 1, IRI_PURE)                                       \
  X(FNS, "__fns", NULL, 3, IRI_PURE)                                       \
  /* max / min where a NaN operand makes the result NaN (T.reduce_max(nan_propagate=True)) */ \
  X(MAX_NAN, "max_nan", NULL, 2, IRI_PURE)                                 \
  X(MIN_NAN, "min_nan", NULL, 2, IRI_PURE)                                 \
  X(SYNCTHREADS, "sync_threads", NULL, 0, IRI_BLOCK_SYNC)                  \
  X(SYNCWARP, "sync_warp", NULL, 0, IRI_LANES)                             \
  X(ATOMIC_ADD, "atomic_add", NULL, 2, 0) /* address (LOAD), value -> prev */ \
  X(ATOMIC_MAX, "atomic_max", NULL, 2, 0)                                  \
  X(ATOMIC_MIN, "atomic_min", NULL, 2, 0)                                  \
  X(ATOMIC_ADD_X, "atomic_add_x", NULL, 3, 0) /* &dst, &src, lanes (INT) */ \
  X(ADDRESS_OF, "address_of", NULL, 1, 0) /* &LOAD */                      \
  X(CALL_EXTERN, "call_extern", NULL, -1, 0) /* args[0] = STR name */      \
  X(PRINTF, "print", NULL, -1, 0)                                          \
  X(DEVICE, "device", NULL, -1, 0) /* a device-library operation: call.dop, call.attrs */

/* Device operations: every operation of the device library (device/tilescale/ headers) that a
 * pass emits, as a typed intrinsic (IRI_DEVICE).  X(name, printed name, nargs (-1: any),
 * nattrs, flags).  Attributes are compile-time integers (counts, bools, dtypes: the template
 * arguments); operands are IR expressions (addresses, indices).  Only codegen spells a call,
 * from its ABI table (src/codegen/device_abi.c), which a unit test checks against the
 * headers: nothing in the passes knows a C++ name or an argument order beyond this table. */
#define IRD_SYNC 1  /* orders the accesses of the threads that run it (mbarrier/named-barrier
                       waits, cluster barrier, cp.async waits of a pass-built pipeline) */
#define IRD_WGMMA 2 /* issues (or waits for) wgmma: shared operands read by the async proxy */
#define IRD_DIST 4  /* the distributed device library: the kernel reads the heap table */
#define IRD_SHMEM 8 /* the NVSHMEM family: linked with NVSHMEM on the nvshmem backend */
#define IRD_GRID_SYNC 16 /* a grid-wide barrier: every block must be resident (cooperative launch) */

/* Memory semantics and scope attributes of the distributed ld/st/atomics. */
typedef enum IrMemSem { IR_SEM_WEAK, IR_SEM_VOLATILE, IR_SEM_ACQUIRE, IR_SEM_RELEASE, IR_SEM_RELAXED } IrMemSem;
typedef enum IrMemScope { IR_MSCOPE_CTA, IR_MSCOPE_GPU, IR_MSCOPE_SYS } IrMemScope;
#define IR_DEVICE_OPS(X)                                                                  \
  X(CP_ASYNC_COMMIT, "cp_async_commit", 0, 0, 0)                                          \
  X(CP_ASYNC_WAIT, "cp_async_wait", 0, 1, IRD_SYNC)            /* <pending groups> */     \
  /* T.ptx_wait_group(n): the user's wait; it orders the issuing thread's own copies only,  \
   * so thread_sync places the barrier other threads' reads need after it */               \
  X(CP_ASYNC_WAIT_GROUP, "cp_async_wait_group", 0, 1, 0)       /* <pending groups> */     \
  X(CP_ASYNC, "cp_async", 2, 1, 0)                   /* (&dst, &src) <bytes>: T.ptx_cp_async */ \
  X(CP_ASYNC_ZFILL, "cp_async_zfill", 3, 1, 0)       /* (&dst, &src, pred) <bytes> */          \
  X(CP_ASYNC_MBAR_ARRIVE_NOINC, "cp_async_mbar_arrive_noinc", 1, 0, 0) /* (&mbarrier) */     \
  X(RNG_INIT, "rng_init", 4, 0, 0)        /* (&state, seed, subsequence, offset): Philox */  \
  X(RNG_RAND, "rng_rand", 1, 0, 0)        /* (&state) -> uint32, advances the state */       \
  X(RNG_RAND_FLOAT, "rng_rand_float", 1, 0, 0) /* (&state) -> float32 in (0, 1] */            \
  X(RNG_RAND_DOUBLE, "rng_rand_double", 1, 0, 0) /* (&state) -> float64 in (0, 1] */          \
  X(RNG_NORMAL, "rng_normal", 1, 0, 0) /* (&state) -> float32 N(0, 1) */                        \
  X(RNG_NORMAL_DOUBLE, "rng_normal_double", 1, 0, 0) /* (&state) -> float64 N(0, 1) */          \
  X(RNG_CURAND_INIT, "rng_curand_init", 4, 1, 0) /* <gen>(&state, seed, subsequence, offset): cuRAND */ \
  X(RNG_CURAND_DRAW, "rng_curand_draw", 1, 2, 0) /* <gen, what>(&state): the next draw (rng_curand.cuh) */ \
  X(DP4A, "dp4a", 3, 0, 0)                /* (&a, &b, &c): c += dot(a[0:4], b[0:4]), 8-bit */ \
  /* T.ieee_*: IEEE-754 arithmetic with a rounding mode <0 rn, 1 rz, 2 ru, 3 rd> (ieee.cuh) */ \
  X(IEEE_ADD, "ieee_add", 2, 1, 0)                                                        \
  X(IEEE_SUB, "ieee_sub", 2, 1, 0)                                                        \
  X(IEEE_MUL, "ieee_mul", 2, 1, 0)                                                        \
  X(IEEE_FMAF, "ieee_fmaf", 3, 1, 0)                                                      \
  X(IEEE_FRCP, "ieee_frcp", 1, 1, 0)                                                      \
  X(IEEE_FSQRT, "ieee_fsqrt", 1, 1, 0)                                                    \
  X(IEEE_FDIV, "ieee_fdiv", 2, 1, 0)                                                      \
  X(IEEE_FRSQRT, "ieee_frsqrt", 1, 1, 0)                                                  \
  /* T.atomic_load / atomic_store / atomic_or: (&x) / (&x, value) <memory order: 0 relaxed,  \
   * 1 consume, 2 acquire, 3 release, 4 acq_rel, 5 seq_cst> (atomic.cuh) */                 \
  X(ATOMIC_LOAD, "atomic_load", 1, 1, 0)                                                  \
  X(ATOMIC_STORE, "atomic_store", 2, 1, 0)                                                \
  X(ATOMIC_OR, "atomic_or", 2, 1, 0)                                                      \
  /* the fence that gives an atomic add / max / min its memory order: <order, after> */     \
  X(ATOMIC_FENCE, "atomic_fence", 0, 2, 0)                                                \
  X(PTX_LDMATRIX, "ptx_ldmatrix", 2, 2, 0) /* (&local, &shared row) <num, trans>: T.ptx_ldmatrix */ \
  X(PTX_MMA, "ptx_mma", 3, 4, 0) /* (&a, &b, &c) <A, B, C dtypes, int4 pairs>: T.ptx_mma, one m16n8kK */ \
  X(FENCE_PROXY_ASYNC, "fence_proxy_async", 0, 0, 0)                                      \
  X(FENCE_PROXY_ASYNC_SHARED, "fence_proxy_async_shared", 0, 0, 0)                        \
  /* GEMM tiles (A, B, C addresses, thread index); SS attrs: M, N, K, WM, WN, trans_a,     \
   * trans_b, swizzle_a, swizzle_b, clear, dtype; RS: M, N, K, WM, WN, trans_a,         \
   * trans_b, swizzle_b, clear, dtype; WM/WN count warps (mma) or warpgroups (wgmma) */              \
  X(GEMM_SS_MMA, "gemm_ss_mma", 4, 11, 0)                                                 \
  /* 4-bit operands (gemm.cuh gemm_ss_mma4): M, N, K, WM, WN, clear, dtype */               \
  X(GEMM_SS_MMA4, "gemm_ss_mma4", 4, 7, 0)                                                 \
  X(GEMM_SS_WGMMA, "gemm_ss_wgmma", 4, 11, IRD_WGMMA)                                     \
  X(GEMM_SS_WGMMA_ISSUE, "gemm_ss_wgmma_issue", 4, 11, IRD_WGMMA)                         \
  X(GEMM_RS_MMA, "gemm_rs_mma", 4, 10, 0)                                                  \
  X(GEMM_RS_WGMMA, "gemm_rs_wgmma", 4, 10, IRD_WGMMA)                                      \
  X(GEMM_RS_WGMMA_ISSUE, "gemm_rs_wgmma_issue", 4, 10, IRD_WGMMA)                          \
  X(GEMM_WGMMA_WAIT, "gemm_wgmma_wait", 1, 2, IRD_WGMMA)       /* <registers, pending> */ \
  /* T.gemm_sp (A compressed, E metadata, B, C addresses, thread index); attrs: M, N, K     \
   * (dense), WM, WN, trans_b, swizzle_a, swizzle_b, clear, dtype (gemm_sp.cuh) */           \
  X(GEMM_SP_SS_MMA, "gemm_sp_ss_mma", 5, 10, 0)                                            \
  /* TMA: (descriptor, smem, mbarrier[, cta mask], coordinates...) / (descriptor, smem,    \
   * coordinates...); attr: the tensor rank */                                             \
  X(TMA_LOAD, "tma_load", -1, 1, 0)                                                       \
  X(TMA_LOAD_MC, "tma_load_mc", -1, 1, 0)                                                 \
  X(TMA_STORE, "tma_store", -1, 1, 0)                                                     \
  X(TMA_STORE_COMMIT, "tma_store_commit", 0, 0, 0)                                        \
  X(TMA_STORE_WAIT, "tma_store_wait", 0, 1, 0)                 /* <pending groups> */     \
  X(TMA_STORE_WAIT_READ, "tma_store_wait_read", 0, 1, 0)       /* <pending groups> */     \
  X(TMA_PREFETCH_DESC, "tma_prefetch_desc", 1, 0, 0)                                      \
  X(NAMED_BARRIER_SYNC, "named_barrier_sync", 0, 2, IRD_SYNC)  /* <id, threads> */        \
  X(NAMED_BARRIER_SYNC_DYN, "named_barrier_sync_dyn", 1, 1, 0) /* (id) <threads>: a turn */ \
  X(NAMED_BARRIER_ARRIVE_DYN, "named_barrier_arrive_dyn", 1, 1, 0) /* (id) <threads> */     \
  X(MBAR_INIT, "mbar_init", 2, 0, 0)                           /* (bar, count) */         \
  X(MBAR_FENCE_INIT, "mbar_fence_init", 0, 0, 0)                                          \
  X(MBAR_ARRIVE, "mbar_arrive", 1, 0, 0)                                                  \
  X(MBAR_ARRIVE_CLUSTER, "mbar_arrive_cluster", 1, 1, 0)       /* <cluster blocks> */     \
  X(MBAR_WAIT, "mbar_wait", 2, 0, IRD_SYNC)                    /* (bar, parity) */        \
  /* distributed shared memory (tma.cuh): a wait acquiring at cluster scope (a barrier of       \
   * T.alloc_cluster_barrier), an arrival on another block's barrier (bar, rank), T.copy_cluster's \
   * element store into another block (&dst, value, rank) and its bulk copy                     \
   * (&dst, &src, bytes, &bar, rank) */                                                         \
  X(MBAR_WAIT_CLUSTER, "mbar_wait_cluster", 2, 0, IRD_SYNC)                               \
  X(MBAR_ARRIVE_REMOTE, "mbar_arrive_remote", 2, 0, 0)                                    \
  X(DSMEM_STORE, "dsmem_store", 3, 0, 0)                                                  \
  X(DSMEM_BULK_COPY, "dsmem_bulk_copy", 5, 0, 0)                                          \
  /* (bar, bytes): an arrival announcing `bytes` (0: none), then a wait for that phase */     \
  X(MBAR_ARRIVE_WAIT, "mbar_arrive_wait", 2, 0, IRD_SYNC)                                 \
  X(MBAR_EXPECT_TX, "mbar_expect_tx", 2, 0, 0)                 /* (bar, bytes) */         \
  X(MBAR_EXPECT_TX_NOARRIVE, "mbar_expect_tx_noarrive", 2, 0, 0) /* (bar, bytes): no arrival */ \
  X(CLUSTER_SYNC, "cluster_sync", 0, 0, IRD_SYNC)                                         \
  X(CLUSTER_ARRIVE, "cluster_arrive", 0, 0, 0)   /* T.cluster_arrive: the split barrier's half */ \
  X(CLUSTER_WAIT, "cluster_wait", 0, 0, IRD_SYNC) /* T.cluster_wait: every block of the cluster arrived */ \
  X(CLUSTER_RANK, "block_rank_in_cluster", 0, 0, 0) /* value: this block's rank in its cluster */ \
  X(GRID_DIM_X, "grid_dim_x", 0, 0, 0)                                                    \
  X(BAR_SYNC, "bar_sync", 2, 0, IRD_SYNC) /* (id, threads): T.sync_threads(id, n): orders \
                         the threads the author chose (not a block barrier for thread_sync) */ \
  X(BAR_ARRIVE, "bar_arrive", 2, 0, 0) /* (id, threads): T.named_barrier_arrive, no wait */ \
  /* T.pdl_trigger / T.pdl_sync: griddepcontrol.launch_dependents / .wait (programmatic       \
   * dependent launch; without a PDL launch the wait returns at once) */                     \
  X(PDL_TRIGGER, "pdl_trigger", 0, 0, 0)                                                  \
  X(PDL_SYNC, "pdl_sync", 0, 0, 0)                                                        \
  X(BLOCK_IDX_X, "block_idx_x", 0, 0, 0)                                                  \
  /* stream-K schedule (gemm.cuh sk_*); partial/fixup attrs: <registers, threads> */       \
  X(SK_DP_TILES, "sk_dp_tiles", 2, 0, 0)                                                  \
  X(SK_BEGIN, "sk_begin", 3, 0, 0)                                                        \
  X(SK_SEGMENTS, "sk_segments", 3, 0, 0)                                                  \
  X(SK_STORE_PARTIAL, "sk_store_partial", 3, 2, 0)                                        \
  X(SK_FIXUP, "sk_fixup", 6, 2, 0)                                                        \
  X(SETMAXNREG_DEC, "setmaxnreg_dec", 0, 1, 0)                 /* <registers> */          \
  X(SETMAXNREG_INC, "setmaxnreg_inc", 0, 1, 0) \
  /* TileScale distributed primitives (dist.cuh) and the NVSHMEM family (dist_shmem.cuh), \
   * printed with their T.* names.  ld attrs: sem, scope, nc, na; st: sem, scope, na;      \
   * atom_add: sem, scope; atom_add_acq_rel: scope; put/get_warp: unroll; shuffle_elect:   \
   * thread extent (IrMemSem / IrMemScope values) */                                      \
  X(DIST_GET_RANK, "get_rank", 0, 0, IRD_DIST) \
  X(DIST_GET_NUM_RANKS, "get_num_ranks", 0, 0, IRD_DIST) \
  X(DIST_PUT_WARP, "put_warp", 4, 1, IRD_DIST) \
  X(DIST_GET_WARP, "get_warp", 4, 1, IRD_DIST) \
  X(DIST_PUT_BLOCK, "put_block", 4, 0, IRD_DIST) \
  X(DIST_GET_BLOCK, "get_block", 4, 0, IRD_DIST) \
  X(DIST_LD, "ld", 2, 4, IRD_DIST) \
  X(DIST_ST, "st", 3, 3, IRD_DIST) \
  X(DIST_WAIT_EQ, "wait_eq", 3, 0, IRD_DIST) \
  X(DIST_WAIT_NE, "wait_ne", 3, 0, IRD_DIST) \
  X(DIST_WAIT_GE, "wait_ge", 3, 0, IRD_DIST) \
  X(DIST_WAIT_LE, "wait_le", 3, 0, IRD_DIST) \
  X(DIST_WAIT_GT, "wait_gt", 3, 0, IRD_DIST) \
  X(DIST_WAIT_LT, "wait_lt", 3, 0, IRD_DIST) \
  X(DIST_BARRIER_BLOCKS, "barrier_blocks", 1, 0, IRD_DIST) \
  X(DIST_SYNC_BLOCKS, "sync_blocks", 1, 0, IRD_DIST) \
  X(DIST_FENCE_CTA, "fence_cta", 0, 0, IRD_DIST) \
  X(DIST_FENCE_GPU, "fence_gpu", 0, 0, IRD_DIST) \
  X(DIST_FENCE_SYS, "fence_sys", 0, 0, IRD_DIST) \
  X(DIST_FENCE_ASYNC_GLOBAL, "fence_async_global", 0, 0, IRD_DIST) \
  X(DIST_INIT_BARRIER_GPU, "init_barrier_gpu", 2, 0, IRD_DIST) \
  X(DIST_ARRIVE_BARRIER_GPU, "arrive_barrier_gpu", 1, 0, IRD_DIST) \
  X(DIST_WAIT_BARRIER_GPU, "wait_barrier_gpu", 1, 0, IRD_DIST) \
  X(DIST_SYNC_BARRIER_GPU, "sync_barrier_gpu", 1, 0, IRD_DIST) \
  X(DIST_SYNC_GRID, "sync_grid", 0, 0, IRD_DIST | IRD_GRID_SYNC) \
  X(DIST_ATOM_ADD, "atom_add", 2, 2, IRD_DIST) \
  X(DIST_ATOM_ADD_ACQ_REL, "atom_add_acq_rel", 2, 1, IRD_DIST) \
  X(DIST_WARP_ANY, "warp_any", 2, 0, IRD_DIST) \
  X(DIST_WARP_ALL, "warp_all", 2, 0, IRD_DIST) \
  X(DIST_SHUFFLE_ELECT, "shuffle_elect", 0, 1, IRD_DIST) \
  X(SHMEM_MY_PE, "get_pe", 0, 0, IRD_DIST | IRD_SHMEM) \
  X(SHMEM_N_PES, "get_pe_num", 0, 0, IRD_DIST | IRD_SHMEM) \
  X(SHMEM_INT_P, "int_p", 3, 0, IRD_DIST | IRD_SHMEM) \
  X(SHMEM_PUTMEM, "putmem", 4, 0, IRD_DIST | IRD_SHMEM) \
  X(SHMEM_PUTMEM_NBI, "putmem_nbi", 4, 0, IRD_DIST | IRD_SHMEM) \
  X(SHMEM_PUTMEM_BLOCK, "putmem_block", 4, 0, IRD_DIST | IRD_SHMEM) \
  X(SHMEM_PUTMEM_WARP, "putmem_warp", 4, 0, IRD_DIST | IRD_SHMEM) \
  X(SHMEM_PUTMEM_NBI_BLOCK, "putmem_nbi_block", 4, 0, IRD_DIST | IRD_SHMEM) \
  X(SHMEM_PUTMEM_NBI_WARP, "putmem_nbi_warp", 4, 0, IRD_DIST | IRD_SHMEM) \
  X(SHMEM_GETMEM, "getmem", 4, 0, IRD_DIST | IRD_SHMEM) \
  X(SHMEM_GETMEM_NBI, "getmem_nbi", 4, 0, IRD_DIST | IRD_SHMEM) \
  X(SHMEM_GETMEM_BLOCK, "getmem_block", 4, 0, IRD_DIST | IRD_SHMEM) \
  X(SHMEM_GETMEM_WARP, "getmem_warp", 4, 0, IRD_DIST | IRD_SHMEM) \
  X(SHMEM_GETMEM_NBI_BLOCK, "getmem_nbi_block", 4, 0, IRD_DIST | IRD_SHMEM) \
  X(SHMEM_GETMEM_NBI_WARP, "getmem_nbi_warp", 4, 0, IRD_DIST | IRD_SHMEM) \
  X(SHMEM_PUTMEM_SIGNAL, "putmem_signal", 7, 0, IRD_DIST | IRD_SHMEM) \
  X(SHMEM_PUTMEM_SIGNAL_NBI, "putmem_signal_nbi", 7, 0, IRD_DIST | IRD_SHMEM) \
  X(SHMEM_PUTMEM_SIGNAL_BLOCK, "putmem_signal_block", 7, 0, IRD_DIST | IRD_SHMEM) \
  X(SHMEM_PUTMEM_SIGNAL_WARP, "putmem_signal_warp", 7, 0, IRD_DIST | IRD_SHMEM) \
  X(SHMEM_PUTMEM_SIGNAL_NBI_BLOCK, "putmem_signal_nbi_block", 7, 0, IRD_DIST | IRD_SHMEM) \
  X(SHMEM_PUTMEM_SIGNAL_NBI_WARP, "putmem_signal_nbi_warp", 7, 0, IRD_DIST | IRD_SHMEM) \
  X(SHMEM_SIGNAL_OP, "signal_op", 4, 0, IRD_DIST | IRD_SHMEM) \
  X(SHMEM_SIGNAL_WAIT_UNTIL, "signal_wait_until", 3, 0, IRD_DIST | IRD_SHMEM) \
  X(SHMEM_BARRIER_ALL, "barrier_all", 0, 0, IRD_DIST | IRD_SHMEM) \
  X(SHMEM_BARRIER_ALL_BLOCK, "barrier_all_block", 0, 0, IRD_DIST | IRD_SHMEM) \
  X(SHMEM_BARRIER_ALL_WARP, "barrier_all_warp", 0, 0, IRD_DIST | IRD_SHMEM) \
  X(SHMEM_SYNC_ALL, "sync_all", 0, 0, IRD_DIST | IRD_SHMEM) \
  X(SHMEM_SYNC_ALL_BLOCK, "sync_all_block", 0, 0, IRD_DIST | IRD_SHMEM) \
  X(SHMEM_SYNC_ALL_WARP, "sync_all_warp", 0, 0, IRD_DIST | IRD_SHMEM) \
  X(SHMEM_QUIET, "quiet", 0, 0, IRD_DIST | IRD_SHMEM) \
  X(SHMEM_FENCE, "fence", 0, 0, IRD_DIST | IRD_SHMEM) \
  X(SHMEM_BROADCAST, "broadcast", 5, 0, IRD_DIST | IRD_SHMEM) \
  X(SHMEM_BROADCAST_WARP, "broadcast_warp", 5, 0, IRD_DIST | IRD_SHMEM) \
  X(SHMEM_BROADCAST_BLOCK, "broadcast_block", 5, 0, IRD_DIST | IRD_SHMEM) \
  X(SHMEM_BROADCASTMEM_BLOCK, "broadcastmem_block", 5, 0, IRD_DIST | IRD_SHMEM) \
  X(SHMEM_FCOLLECT, "fcollect", 4, 0, IRD_DIST | IRD_SHMEM) \
  X(SHMEM_FCOLLECT_WARP, "fcollect_warp", 4, 0, IRD_DIST | IRD_SHMEM) \
  X(SHMEM_FCOLLECT_BLOCK, "fcollect_block", 4, 0, IRD_DIST | IRD_SHMEM)

typedef enum IrDeviceOp {
#define IR_DEVICE_ENUM(n, s, k, a, fl) IRD_##n,
  IR_DEVICE_OPS(IR_DEVICE_ENUM)
#undef IR_DEVICE_ENUM
      IRD_COUNT
} IrDeviceOp;
typedef struct IrDeviceInfo {
  const char *name;
  int nargs, nattrs, flags;
} IrDeviceInfo;
extern const IrDeviceInfo ir_device_info[IRD_COUNT];

typedef enum IrIntrin {
#define IR_INTRIN_ENUM(n, s, f, k, fl) IRI_##n,
  IR_INTRINSICS(IR_INTRIN_ENUM)
#undef IR_INTRIN_ENUM
      IRI_COUNT
} IrIntrin;
typedef struct IrIntrinInfo {
  const char *name, *cuda_f32;
  int nargs, flags;
} IrIntrinInfo;
extern const IrIntrinInfo ir_intrin_info[IRI_COUNT];

typedef struct IrVar IrVar;
typedef struct IrBuffer IrBuffer;
typedef struct IrExpr IrExpr;
typedef struct IrStmt IrStmt;
typedef struct Fragment Fragment; /* src/layout/fragment.h */
typedef struct Layout Layout;     /* src/layout/layout.h (shared-memory swizzles) */
typedef struct IndexMap IndexMap; /* src/layout/index_map.h (T.Layout on a global tensor) */
typedef struct GemmPlan GemmPlan; /* src/layout/layout.h (a T.gemm's plan, pass plan_gemm) */

/* Variables.  Each IrVar is one definition; identity is by pointer (ids for printing). */
typedef enum IrVarKind {
  IR_VAR_LET,        /* x = expr (immutable) */
  IR_VAR_LOOP,       /* for-loop induction variable */
  IR_VAR_PARAM,      /* scalar kernel parameter */
  IR_VAR_DYNAMIC,    /* T.dynamic / T.const dimension bound at launch */
  IR_VAR_BLOCK_IDX,  /* blockIdx.{x,y,z}: axis */
  IR_VAR_THREAD_IDX, /* threadIdx.{x,y,z}: axis */
  IR_VAR_PLACEHOLDER /* layout lambdas and other symbolic helpers */
} IrVarKind;

struct IrVar {
  const char *name;
  ts_dtype dtype;
  IrVarKind kind;
  int axis; /* BLOCK_IDX / THREAD_IDX */
  int id;   /* unique within the compilation, for printing */
  SrcLoc loc;
  const IrExpr *let_value; /* IR_VAR_LET from `x = expr` in a kernel: expr (for symbolic
                              reasoning such as slice extents; the LET statement defines it) */
};

struct IrExpr {
  IrExprKind kind;
  ts_dtype dtype; /* result type */
  SrcLoc loc;
  int lanes;      /* LOAD: vector width (1 = scalar) */
  union {
    int64_t ival;      /* INT */
    double fval;       /* FLOAT */
    const char *sval;  /* STR */
    IrVar *var;        /* VAR */
    IrExpr *ops[3];    /* unary, binary, SELECT, IF_THEN_ELSE, CAST, REINTERPRET */
    struct { IrIntrin op; IrExpr **args; int nargs;
             IrDeviceOp dop; int64_t *attrs; int nattrs; /* IRI_DEVICE only */ } call;
    struct { IrBuffer *buf; IrExpr **idx; int nidx; } load;
  } u;
};

/* Buffers: global tensors (parameters), shared memory, fragments, locals, vars. */
struct IrBuffer {
  const char *name;
  ts_dtype dtype;
  IrScope scope;
  int ndim;
  IrExpr **shape;    /* ndim extents */
  IrExpr **strides;  /* ndim strides in elements; NULL = row-major (compact) */
  int param_index;   /* position in IrFunc.params, or -1 */
  IrExpr *init;      /* alloc_var initial value, or NULL */
  int id;
  SrcLoc loc;
  /* Filled by passes. */
  Fragment *fragment; /* scope FRAGMENT: layout inferred by pass_layout_inference */
  Layout *layout;     /* shared scopes: swizzle (NULL = row-major) */
  IndexMap *remap;    /* GLOBAL parameter annotated with a T.Layout: every access goes through
                         this map (pass remap_global); no TMA, cp.async or vector access */
  int64_t smem_offset;/* SHARED_DYN after pass_merge_shared_memory: byte offset, -1 before */
  int64_t local_size; /* FRAGMENT/LOCAL after lowering: registers per thread */
  IrBuffer *alias_of; /* T.view / T.reshape / T.Tensor(..., data=): the buffer whose memory this is */
  IrExpr *safe_value; /* T.annotate_safe_value: what an out-of-bounds read of it gives (NULL: 0) */
  IrExpr *data;       /* GLOBAL made by T.make_tensor (param_index -1): the 64-bit device address of
                         element 0, evaluated once where its ALLOC stands (a T.ptr tensor's element) */
  IrBuffer *layout_like; /* FRAGMENT made by a pass: takes this fragment's layout (same shape) */
  const int64_t *arrive_counts; /* BARRIER (T.alloc_barrier): each mbarrier's arrive count */
  bool cluster_barrier; /* BARRIER of T.alloc_cluster_barrier: other blocks of the cluster arrive on
                           it (initialised before a cluster barrier; waits acquire at cluster scope) */
  int reducer;        /* T.alloc_reducer (a LOCAL buffer, one copy per thread): 1 + its IrReduceKind
                         (sum / max / min / bitand / bitor / bitxor); its stores in a T.Parallel
                         nest are made by replica 0 only, so that T.finalize_reducer combines each
                         iteration once */
  /* The front end's record of a reducer's epoch (T.reducer_init .. T.finalize_reducer(r, dst)):
   * 0 not opened, 1 open, 2 closed; start: T.reducer_init's starting value (a local.var), or NULL;
   * scope: the innermost IR loop around the init (the front end's loop number, 0: none), where
   * the finalize must be too. */
  int reducer_epoch, reducer_scope;
  IrBuffer *reducer_start;
};

/* A rectangular region of a buffer: the operand of tile ops. */
typedef struct IrRegion {
  IrBuffer *buf;
  int ndim;          /* = buf->ndim */
  IrExpr **min;      /* ndim start indices */
  IrExpr **extent;   /* ndim extents (constants for on-chip tiles) */
  SrcLoc loc;
} IrRegion;

/* ---- statements ------------------------------------------------------------------- */
/* X(name, printed form) — the fields used by each kind are listed in IrStmt below. */
#define IR_STMT_KINDS(X)                                                         \
  X(SEQ, "seq")           /* seq.items */                                        \
  X(FOR, "for")           /* loop */                                             \
  X(IF, "if")             /* cond, then_s, else_s (may be NULL) */               \
  X(WHILE, "while")       /* cond, body */                                       \
  X(LET, "let")           /* var = value; scope: the rest of the enclosing SEQ */ \
  X(STORE, "store")       /* buf[idx] = value (lanes > 1: vector store) */      \
  X(ALLOC, "alloc")       /* declares buf (non-global scopes) */                 \
  X(EVAL, "eval")         /* value (a CALL evaluated for its effect) */          \
  X(KERNEL, "kernel")     /* kernel: one launch of T.Kernel */                   \
  X(BREAK, "break")                                                              \
  X(CONTINUE, "continue")                                                        \
  X(RETURN, "thread_return") /* T.thread_return(): this thread leaves the kernel */ \
  X(ASSERT, "assert")     /* cond, msg */                                        \
  X(COPY, "copy")         /* tile op: copy.src -> copy.dst (dtype converted) */ \
  X(FILL, "fill")         /* tile op: fill.dst = fill.value */                   \
  X(REDUCE, "reduce")     /* tile op: reduce */                                  \
  X(ATOMIC, "atomic")     /* tile or scalar atomic: atomic.dst op= value */      \
  X(GEMM, "gemm")         /* tile op (issue 4) */                                \
  X(UNSUPPORTED, "unsupported") /* a recognised T.* construct with no lowering yet: msg */

typedef enum IrStmtKind {
#define IR_STMT_ENUM(n, s) IR_S_##n,
  IR_STMT_KINDS(IR_STMT_ENUM)
#undef IR_STMT_ENUM
      IR_STMT_KIND_COUNT
} IrStmtKind;
extern const char *const ir_stmt_names[IR_STMT_KIND_COUNT];

typedef enum IrForKind {
  IR_FOR_SERIAL,
  IR_FOR_PARALLEL,   /* T.Parallel: iterations independent, mapped onto threads by layout inference */
  IR_FOR_PIPELINED,  /* T.Pipelined: serial semantics, num_stages etc. in annotations */
  IR_FOR_UNROLLED,
  IR_FOR_VECTORIZED,
  IR_FOR_THREAD      /* bound to a thread index after lowering (loop.thread_var) */
} IrForKind;
extern const char *const ir_for_kind_names[];

typedef enum IrReduceKind {
  IR_RED_SUM, IR_RED_MAX, IR_RED_MIN, IR_RED_ABSMAX, IR_RED_ABSSUM,
  IR_RED_BITAND, IR_RED_BITOR, IR_RED_BITXOR /* integer and bool elements */
} IrReduceKind;
extern const char *const ir_reduce_names[];
typedef enum IrAtomicOp { IR_ATOMIC_ADD, IR_ATOMIC_MAX, IR_ATOMIC_MIN } IrAtomicOp;

typedef struct IrKernel {
  IrExpr *grid[3];      /* gridDim x,y,z (unused = INT 1); may reference dynamic vars */
  IrVar *block_var[3];  /* blockIdx vars bound by `as (bx, by, bz)`; NULL when unused */
  int threads[3];       /* blockDim (unused = 1) */
  IrVar *thread_var[3]; /* threadIdx vars (created on demand by get_thread_binding / lowering) */
  IrStmt *body;
  const char *prelude;  /* T.Kernel(prelude=...) C source, or NULL */
  const char *source;   /* T.CUDASourceCodeKernel: the user's CUDA source, launched as it is (body
                           empty; its kernel takes the prim_func's parameters, cuda.h's ABI) */
  const char *entry;    /* ... and the extern "C" __global__ function of it that is launched */
  bool manual_ws;       /* T.ws in the body: the kernel schedules its warpgroups itself, so
                           no automatic warp specialization or pipelining is applied over it */
  /* Filled by passes. */
  int64_t smem_bytes;   /* merged dynamic shared memory */
  IrExpr *smem_dyn;     /* + these bytes of a buffer sized at run time (merge_shared_memory), or NULL */
  int min_blocks;       /* __launch_bounds__'s minimum blocks per SM (0: none; merge_shared_memory) */
  int ws_blocks;        /* a warp-specialized kernel's blocks per SM, its registers split for them
                           (warp_specialize_loop.c; 0: one) */
  const char *name;     /* CUDA function name (set by codegen) */
  int producer_threads; /* warp_specialize: a producer warpgroup launched after the threads[]
                           consumers (blockDim.x = threads[0] + producer_threads); passes
                           lower for threads[] only */
  int raster_panel;     /* T.use_swizzle(panel_size): > 0 asks for block rasterization in panels
                           of that many block rows; 0 = the compiler decides; < 0 = off */
  bool raster_column;   /* T.use_swizzle(order="column"): the panels are of block columns (bx)
                           and walk by instead */
  int cluster_x;        /* warp_specialize: thread-block cluster of this many blocks along x
                           (__cluster_dims__; 0 or 1 = none); gridDim.x is a multiple of it */
  bool rasterized;      /* the block order is already the one T.use_swizzle asks for (warp_specialize
                           or rasterize_blocks remapped the block indices) */
  bool persistent;      /* warp_specialize: blocks walk the tiles with stride gridDim.x, so grid[0]
                           (all the work, a multiple of cluster_x) is an upper bound that the
                           runtime lowers to the blocks (clusters) co-resident on the device */
} IrKernel;

struct IrStmt {
  IrStmtKind kind;
  SrcLoc loc;
  int iter_owned; /* > 0: a statement of lowered T.Parallel nest number iter_owned (lower_tile_ops;
                     a nest lowered to a list marks each of its statements), whose every iteration
                     runs in one thread: by T.Parallel's contract an iteration's accesses do not
                     conflict with the nest's other iterations, so thread_sync needs no barrier in
                     the parts of the nest that only some threads run (it still places barriers
                     in its uniform parts where its own analysis finds a conflict) */
  union {
    struct { IrStmt **items; int n; } seq;
    struct {
      IrVar *var;
      IrExpr *min, *extent;
      IrForKind kind;
      IrStmt *body;
      int num_stages;       /* PIPELINED (0 = none) */
      int *order, *stage, norder; /* PIPELINED order=/stage= lists */
      int unroll_factor;    /* UNROLLED (0 = full) */
      Fragment *loop_layout;/* PARALLEL: set by layout inference */
      Fragment *pinned_layout; /* PARALLEL, outermost loop of a nest: T.Parallel(..., loop_layout=
                                  T.Fragment(...)), which layout inference takes as the nest's */
      bool async_copy;      /* PARALLEL nest of a copy made asynchronous by inject_pipeline (cp.async) */
    } loop;
    struct { IrExpr *cond; IrStmt *then_s, *else_s;
             /* T.ws: then_s runs on threads [ws_lo, ws_hi) only (ws_hi > 0), cond says so; its
              * tile ops are lowered over those threads, their index rebased to ws_lo.  else_s
              * (a hand-written thread branch only): the next range's IF, or code of the other
              * threads, which form no one range (no tile ops there) */
             int64_t ws_lo, ws_hi;
             /* then_s is an asynchronous vector copy (cp.async) and else_s the zero fill of
              * its destination: codegen may emit one cp.async whose source size is 0 where
              * cond fails (lower_vector_copy) */
             bool zfill; } if_;
    struct { IrExpr *cond; IrStmt *body; } while_;
    struct { IrVar *var; IrExpr *value; } let;
    struct { IrBuffer *buf; IrExpr **idx; int nidx; IrExpr *value; int lanes;
             bool async_; /* global -> shared copy issued as cp.async (inject_pipeline waits for it) */ } store;
    struct { IrBuffer *buf; } alloc;
    struct { IrExpr *value; } eval;
    IrKernel kernel;
    struct { IrExpr *cond; const char *msg; } assert_;
    struct { IrRegion src, dst; bool disable_tma; int coalesced_width;
             bool async_; /* set by inject_pipeline: may complete asynchronously (cp.async) */
             IrExpr *barrier; /* T.tma_copy: &mbarrier the TMA load completes on (split phase:
                                 the user waits); lowered by lower_tile_ops (tma_copy.c).  With
                                 dst_block: T.copy_cluster's remote_barrier (or NULL) */
             IrExpr *dst_block; /* T.copy_cluster: shared -> shared of block dst_block of the
                                   cluster (cluster_copy.c) */
             int64_t cluster_mask; /* T.tma_copy load with cluster_mask=: multicast to these
                                      ranks of the cluster (0: unicast; tma_copy.c) */
             bool wait; /* T.copy_cluster(global, shared, cluster_mask=): a synchronous load on
                           its own barrier, which every thread arrives on and waits for */
             bool tma_store;  /* T.tma_copy(shared, global): a TMA store the user waits for with
                                 T.tma_store_wait (tma_copy.c) */
             Fragment *loop_layout; /* T.copy(..., loop_layout=T.Fragment): the pinned layout of
                                       the nest legalize makes (over dst's non-unit extents) */ } copy;
    struct { IrRegion dst; IrExpr *value; } fill;
    struct { IrReduceKind op; IrBuffer *src, *dst; int dim; bool clear;
             bool nan_propagate; /* max / min / absmax of floats: a NaN makes the result NaN */ } reduce;
    struct { IrAtomicOp op; IrRegion dst; IrExpr *value; /* value may be a LOAD-based region */
             IrRegion src; bool tile;
             int order; /* memory_order= as C++ numbers it (0 relaxed .. 5 seq_cst): every element
                           atomic gets it, through fences (lower_tile_ops) */ } atomic;
    struct { IrRegion a, b, c;
             IrRegion e; /* T.gemm_sp: the 2:4 metadata tile (e.buf NULL for T.gemm); a is compressed */
             bool trans_a, trans_b, clear_accum; int policy; int k_pack;
             int wg_wait; /* 0: synchronous; -1: issue only (wgmma); -2: only wait for issued ones */
             const GemmPlan *plan; /* set by pass plan_gemm, shared by the statement's copies */ } gemm;
    struct { const char *what; } unsupported;
  } u;
};

/* ---- functions --------------------------------------------------------------------- */
typedef struct IrParam {
  const char *name;
  IrBuffer *buf; /* tensor parameter, or NULL */
  IrVar *var;    /* scalar parameter, or NULL */
  bool pointer;  /* var is a `p: T.ptr` device address (dtype handle), not a T.handle */
} IrParam;

typedef struct IrKV { const char *key, *value; } IrKV;
bool ir_config_true(const char *value); /* a pass_configs value that turns its key on: True, true, 1 */

/* A TMA tensor map (warp_specialize): kernel parameter `var` (a CUtensorMap passed
 * __grid_constant__ after the dynamic dims) describing tensor parameter param_index as
 * boxes of box[0] (innermost) x box[1] x ... elements with a `swizzle`-byte swizzle
 * (0/32/64/128); the runtime encodes it at launch from the tensor's pointer and shape. */
typedef struct IrTmaMap {
  IrVar *var;
  int param_index;
  int rank;          /* = the tensor's ndim; box[i] is along dim rank-1-i */
  int64_t box[5];
  int swizzle;
} IrTmaMap;

typedef struct IrFunc {
  const char *name;
  IrParam *params; int nparams;
  IrVar **dyn_vars; int ndyn;     /* dynamic dimensions, appended to the kernel arguments in this order */
  IrStmt *body;                   /* SEQ containing one or more KERNEL statements (and host lets) */
  int *out_idx; int nout_idx;     /* normalised to non-negative indices */
  bool returns_outputs;           /* out_idx are the T.empty tensors the function returns */
  IrKV *pass_configs; int npass_configs;
  SrcLoc loc;
  /* @autotune(configs=...) / @tilelang.autotune(configs=...): the evaluated config list as
   * Python literal text, e.g. "[{'block_M': 64, 'threads': 128}, ...]"; NULL without one. */
  const char *autotune_configs;
  int nautotune_configs;          /* number of configs in that list */
  IrTmaMap *tma_maps; int ntma;   /* TMA descriptors, kernel arguments after the dynamic dims */
  /* T.import_source(src): user device code (functions T.call_extern calls), each distinct
   * text once, emitted verbatim after the device headers and before the kernels. */
  const char **imports; int nimports;
} IrFunc;

/* ---- construction (ir.c) --------------------------------------------------------- */
IrVar *ir_var(TsCompiler *c, const char *name, ts_dtype t, IrVarKind kind, SrcLoc loc);
IrBuffer *ir_buffer(TsCompiler *c, const char *name, ts_dtype t, IrScope scope, int ndim,
                    IrExpr **shape, SrcLoc loc);
IrExpr *ir_int(TsCompiler *c, int64_t v, ts_dtype t, SrcLoc loc);
IrExpr *ir_i32(TsCompiler *c, int64_t v);    /* int32 constant, no location */
IrExpr *ir_float(TsCompiler *c, double v, ts_dtype t, SrcLoc loc);
IrExpr *ir_str(TsCompiler *c, const char *s, SrcLoc loc);
IrExpr *ir_varref(TsCompiler *c, IrVar *v, SrcLoc loc);
/* Binary/unary with TVM-like type rules: int op int -> wider int; int op float -> float;
 * comparisons -> bool.  Constant operands are folded. */
IrExpr *ir_binary(TsCompiler *c, IrExprKind k, IrExpr *a, IrExpr *b, SrcLoc loc);
IrExpr *ir_unary(TsCompiler *c, IrExprKind k, IrExpr *a, SrcLoc loc);
IrExpr *ir_select(TsCompiler *c, IrExprKind k /* SELECT or IF_THEN_ELSE */, IrExpr *cond,
                  IrExpr *a, IrExpr *b, SrcLoc loc);
IrExpr *ir_cast(TsCompiler *c, ts_dtype t, IrExpr *a, SrcLoc loc); /* no-op when same dtype */
IrExpr *ir_call(TsCompiler *c, IrIntrin op, ts_dtype t, IrExpr **args, int nargs, SrcLoc loc);
/* A device-library operation (IRI_DEVICE): value of type t (TS_DTYPE_VOID: a statement's call). */
IrExpr *ir_device(TsCompiler *c, IrDeviceOp op, ts_dtype t, const int64_t *attrs, int nattrs, IrExpr **args, int nargs,
                  SrcLoc loc);
IrStmt *ir_device_stmt(TsCompiler *c, IrDeviceOp op, const int64_t *attrs, int nattrs, IrExpr **args, int nargs,
                       SrcLoc loc);
/* The fence that gives an element atomic memory order `order` (C++'s numbering, 0 relaxed ..
 * 5 seq_cst) on one side of it: before it (after = false) for releasing orders, after it for
 * acquiring ones; NULL when that side needs none. */
IrStmt *ir_atomic_fence(TsCompiler *c, int order, bool after, SrcLoc loc);
bool ir_is_device(const IrExpr *e, IrDeviceOp op); /* e is a call of op */
bool ir_is_flag_wait(const IrExpr *e);              /* T.wait_eq..wait_lt, T.signal_wait_until */
bool ir_call_is_pure(const IrExpr *e);              /* a CALL of an IRI_PURE intrinsic (never IRI_DEVICE) */
bool ir_call_has_flag(const IrExpr *e, int flag); /* an intrinsic call whose row has IRI_<flag> */
IrDeviceOp ir_device_named(const char *name);      /* by printed (T.*) name; IRD_COUNT if none */
IrExpr *ir_load(TsCompiler *c, IrBuffer *b, IrExpr **idx, int nidx, SrcLoc loc);
IrStmt *ir_stmt(TsCompiler *c, IrStmtKind k, SrcLoc loc);      /* zeroed node */
IrStmt *ir_seq(TsCompiler *c, IrStmt **items, int n, SrcLoc loc);
IrStmt *ir_seq_vec(TsCompiler *c, PtrVec *items, SrcLoc loc);  /* flattens nested SEQs, drops NULLs */
IrStmt *ir_store(TsCompiler *c, IrBuffer *b, IrExpr **idx, int nidx, IrExpr *v, SrcLoc loc);
IrStmt *ir_for(TsCompiler *c, IrVar *v, IrExpr *min, IrExpr *extent, IrForKind k, IrStmt *body, SrcLoc loc);
IrStmt *ir_if(TsCompiler *c, IrExpr *cond, IrStmt *then_s, IrStmt *else_s, SrcLoc loc);
IrStmt *ir_let(TsCompiler *c, IrVar *v, IrExpr *value, SrcLoc loc);
/* The kernel's threadIdx variable along axis 0..2 (tx, ty, tz), created on first use. */
IrVar *ir_kernel_thread_var(TsCompiler *c, IrKernel *k, int axis, SrcLoc loc);
IrStmt *ir_eval(TsCompiler *c, IrExpr *e, SrcLoc loc);
IrRegion ir_region_full(TsCompiler *c, IrBuffer *b, SrcLoc loc);

/* ---- queries ------------------------------------------------------------------------- */
bool ir_is_const_int(const IrExpr *e, int64_t *out);   /* after folding */
bool ir_expr_equal(const IrExpr *a, const IrExpr *b);  /* structural */
int64_t ir_buffer_numel(const IrBuffer *b);            /* -1 when not constant */
int64_t ir_buffer_bytes(const IrBuffer *b);            /* its bytes in memory; -1 when not constant */
/* Evaluate an integer expression whose only free variables are given in env (vars[i] = vals[i]).
 * Returns false when something is not known. */
bool ir_eval_int(const IrExpr *e, IrVar *const *vars, const int64_t *vals, int nvars, int64_t *out);
/* The same with each variable's value asked of value(v, ctx, &out) (false: not known). */
typedef bool (*IrVarValue)(const IrVar *v, void *ctx, int64_t *out);
bool ir_eval_int_with(const IrExpr *e, IrVarValue value, void *ctx, int64_t *out);
/* a `k` b for an integer binary kind (constant folding and int_eval.c); false when undefined
 * (division by zero, a shift past 63 bits) or not such a kind. */
bool ir_int_binop(IrExprKind k, int64_t a, int64_t b, int64_t *out);

/* ---- reductions (ir.c) ---------------------------------------------------------------- */
/* The value T.reduce_<op> starts from in type t, and a (op) b; nan: max / min returning NaN
 * when either operand is NaN (one call: a shuffle operand is still evaluated once). */
IrExpr *ir_reduce_identity(TsCompiler *c, IrReduceKind op, ts_dtype t);
IrExpr *ir_reduce_combine(TsCompiler *c, IrReduceKind op, bool nan, IrExpr *a, IrExpr *b);

/* ---- rewriting helpers (ir.c) ----------------------------------------------------- */
/* A CALL or LOAD like e (same op/buffer, dtype and lanes) with operand list xs. */
IrExpr *ir_with_operands(TsCompiler *c, const IrExpr *e, IrExpr **xs);
/* Substitute variables: returns a new expression (shares unchanged subtrees). */
IrExpr *ir_subst(TsCompiler *c, IrExpr *e, IrVar *const *from, IrExpr *const *to, int n);
IrStmt *ir_subst_stmt(TsCompiler *c, IrStmt *s, IrVar *const *from, IrExpr *const *to, int n);
/* s with every load of buffer `from` reading `to` instead (same indices); stores untouched. */
IrStmt *ir_subst_loads_stmt(TsCompiler *c, IrStmt *s, const IrBuffer *from, IrBuffer *to);

/* ---- printer and verifier ------------------------------------------------------------ */
void ir_print_expr(StrBuf *out, const IrExpr *e);
void ir_print_stmt(StrBuf *out, const IrStmt *s, int indent);
void ir_print_func(StrBuf *out, const IrFunc *f);
/* Checks structural invariants (operand counts, dtypes of conditions, vars defined before
 * use, buffer ranks).  Reports failures as compiler bugs (TS_ASSERT with the pass name). */
void ir_verify(TsCompiler *c, const IrFunc *f, const char *after_pass);

/* Arithmetic simplification (arith.c): constant folding, x+0, x*1, (a*c)//c, ... */
IrExpr *ir_simplify(TsCompiler *c, IrExpr *e);

#endif
