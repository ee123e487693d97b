/* passes.h — private to src/pass: every pass of the pipeline (one file each) and the
 * small helpers they share (pass_util.c).  pipeline.c runs them in order. */
#ifndef TS_PASS_PASSES_H
#define TS_PASS_PASSES_H

#include "../ir/analysis.h"
#include "../layout/fragment.h"
#include "pipeline.h"

void pass_plan_gemm(TsCompiler *c, IrFunc *f);         /* every T.gemm's plan, once (IrStmt.u.gemm.plan) */
void pass_warp_specialize(TsCompiler *c, IrFunc *f);   /* sm_90a GEMM loops -> TMA producer + wgmma consumers */
/* The epilogue store of a warp-specialized kernel (warp_specialize.c): the statements after
 * the loop that write the accumulator tile to global memory, as one TMA store per column
 * atom of a swizzled shared tile (see there). */
typedef struct WsStore {
  int idx;            /* body index of the copy into global memory; -1: none */
  int idx_frag;       /* form B: body index of T.copy(fragment, S); -1 for form A */
  IrStmt *to_global;  /* the copy into global memory */
  IrBuffer *smem;         /* form B: the user's tile; form A: made by specialize */
  Layout *layout;
  int64_t rows, cols, atom;
  int64_t slots;          /* 0: the whole tile at once; else a ring of `slots` column atoms */
} WsStore;
/* Finds it among the statements after the loop (body items li+1..); false when a statement
 * after the loop uses shared memory in a way the warp-specialized kernel cannot keep. */
bool ws_find_epilogue(TsCompiler *c, IrStmt *body, int li, WsStore *ep);
/* The whole epilogue as one statement of the consumers (threads [0, T), named barrier 1;
 * thread 0 issues the stores); to_smem: form B's T.copy(fragment, S), else NULL. */
IrStmt *ws_epilogue_store(TsCompiler *c, const WsStore *ep, const IrTmaMap *map, IrVar *tx, int64_t T, IrStmt *to_smem);
/* (warp_specialize_epilogue.c) The same as pieces appended to `pieces`: one per ring atom
 * (ep->slots > 0) or one for the whole tile; `from`, when not NULL, is the fragment read
 * instead of the copy's source (the packed tile of an overlapped epilogue). */
void ws_epilogue_pieces(TsCompiler *c, const WsStore *ep, const IrTmaMap *map, IrVar *tx, int64_t T,
                        IrStmt *to_smem, IrBuffer *from, PtrVec *pieces);
/* The pieces for the tile at block indices `to` (replacing from[0..1]), each guarded by
 * `valid` when not NULL: a fresh tree per call. */
void ws_tile_pieces(TsCompiler *c, const WsStore *ep, const IrTmaMap *map, IrVar *tx, int64_t T, IrStmt *to_smem,
                    IrBuffer *from_frag, IrVar **from, IrExpr **to, IrExpr *valid, PtrVec *out);
/* The swizzled layout of a [rows x cols] store tile, when TMA can store it box by box. */
Layout *ws_store_layout(TsCompiler *c, int64_t rows, int64_t cols, ts_dtype t);
IrRegion ws_region2(TsCompiler *c, IrBuffer *b, int64_t m0, int64_t m1, int64_t e0, int64_t e1); /* [m0, m1] + [e0, e1] */
/* Does s touch shared memory (or reduce, which may)?  Is global region r a [rows x cols] box
 * (leading dims of extent 1) of a TMA-able parameter? */
bool ws_touches_shared(IrStmt *s);
bool ws_tma_global_box(const IrRegion *r, int64_t rows, int64_t cols);

/* warp_specialize_tiles.c: how persistent blocks walk the tiles (see there). */
/* How persistent blocks walk the tiles.  Without a cluster a unit is one tile; with a
 * 2-block cluster paired along block axis `axis` a unit is two neighbouring tiles along
 * that axis, block rank r of the cluster taking tile 2u + r (clamped to the grid; a block
 * whose tile lies past an odd edge computes the clamped tile again but stores nothing). */
typedef struct WsSched {
  bool on;          /* persistent at all */
  int cl;           /* blocks per cluster (1 or 2) */
  int axis;         /* cl == 2: the paired block axis (0: bx, 1: by) */
  IrExpr *G;        /* gridDim.x */
  IrExpr *P;        /* clusters: G / cl */
  IrExpr *nunits;   /* units of work */
  IrExpr *GX, *GY;  /* the tile grid */
  IrExpr *UX, *UY;  /* the unit grid */
  int64_t panel;    /* rasterization panel in unit rows (0: none) */
  bool serpentine;  /* ts.raster_serpentine: odd panels walk their columns right to left */
  bool column;      /* the panels are of unit columns (bx) and walk by (T.use_swizzle "column") */
  IrVar *rank;      /* cl == 2: the block's rank in its cluster */
  bool guard;       /* cl == 2 and the paired extent may be odd: guard the epilogue */
} WsSched;

/* The stream-K part of a persistent schedule (gemm.cuh, "stream-K"): lets shared by the
 * producer and the consumers, computed by every thread before they split. */
typedef struct WsSkSched {
  IrVar *dp;    /* tiles run tile by tile (the block's share: t < ndp) */
  IrVar *iters; /* stream-K iterations */
  IrVar *s, *e; /* this block's range */
  IrVar *ndp;   /* this block's data-parallel tiles */
  IrVar *nseg;  /* its stream-K segments */
} WsSkSched;
/* Remaps the block indices of k's body to the rasterized order (panels of `panel` block rows,
 * serpentine: every other panel walked right to left; see warp_specialize_tiles.c). */
IrStmt *ws_rasterize(TsCompiler *c, IrKernel *k, IrStmt *body, int64_t panel, bool serpentine, bool column);
/* The tile coordinates of unit `id` (lets of <bx>_<sfx>, <by>_<sfx> on items; to[0..1] name them). */
void ws_unit_coords(TsCompiler *c, const WsSched *sc, IrExpr *id, IrVar *bx, IrVar *by, const char *sfx, PtrVec *items,
                    IrExpr **to, IrExpr **valid);
IrStmt *ws_tile_body(TsCompiler *c, const WsSched *sc, IrExpr *id, IrVar *bx, IrVar *by, IrStmt *inner, IrStmt *post);
IrExpr *ws_unit_count(TsCompiler *c, const WsSched *sc, IrVar *bx);
IrExpr *ws_unit_id(TsCompiler *c, const WsSched *sc, IrExpr *t, IrVar *bx);
IrStmt *ws_per_tile(TsCompiler *c, const WsSched *sc, IrVar *t, IrVar *bx, IrVar *by, IrStmt *inner, IrStmt *post);
IrStmt *ws_sk_loop(TsCompiler *c, const WsSched *sc, const WsSkSched *sk, IrExpr *KT, IrVar *u, IrVar *vk0, IrVar *vk1,
                   IrVar *vtb, IrVar *bx, IrVar *by, IrStmt *inner, IrStmt *post);

/* warp_specialize_nest.c: the outer serial loops / uniform ifs / lets around a GEMM's
 * pipelined loop (a user-written persistent tile loop) that both roles repeat. */
typedef struct WsNest {
  Arena *arena;
  PtrVec path;      /* IrStmt*: the statements from the kernel body's nest down to `inner` */
  IrStmt *inner;    /* the SEQ holding the pipelined loop */
  PtrVec lets;      /* IrVar*: the nest's lets (uniform, the producer computes them too) */
  PtrVec loop_vars; /* IrVar*: the nest's serial loop variables */
} WsNest;
bool ws_nest_find(TsCompiler *c, IrStmt *body, WsNest *n);
IrStmt *ws_nest_wrap(TsCompiler *c, const WsNest *n, IrStmt *repl);

/* warp_specialize_loop.c, the second half of pass_warp_specialize: any other pipelined loop
 * whose global -> shared copies TMA can issue -> a producer warpgroup filling staged tiles */
void ws_loop_specialize(TsCompiler *c, IrFunc *f);
void ws_gemm_specialize(TsCompiler *c, IrFunc *f); /* warp_specialize.c: the GEMM loops */
bool ws_tma_rows_aligned(const IrBuffer *g); /* every row stride 16-byte aligned (when known; _epilogue.c) */
/* ws_guard.c: guarded loops, and ws_producer_form: e as the producer warpgroup of a
 * warp-specialized loop computes it (lets inlined; a register tile mirroring a tensor nothing
 * writes, filled by a copy among the first li statements of kbody, read from the tensor), or
 * NULL when it cannot (ws_scalar_ok over the prelude's variables pvars, below). */
IrExpr *ws_producer_form(TsCompiler *c, IrStmt *kbody, int li, const PtrVec *pvars, IrExpr *e, const IrVar *kv);
typedef struct WsGuard {
  IrStmt *loop;   /* the loop over the guarded statements (the loop itself when not guarded) */
  IrStmt **lets;  /* the LET statements before the condition */
  int nlets;
  IrExpr *cond;   /* the consumers' condition */
  IrExpr *pcond;  /* the producer's */
} WsGuard;
/* Loop li of kbody as `for k: lets; if cond: body` (no else): 1 and g filled (g->loop iterating
 * body alone); 0 for any other loop (g->loop the loop); -1 for a guard the producer cannot
 * evaluate, or pass_configs ts.ws_guarded_loops False. */
int ws_guard_split(TsCompiler *c, const IrFunc *f, IrStmt *kbody, int li, const PtrVec *pvars, WsGuard *g);
/* An int32 register counter starting at 0 (one per thread), its value, and one iteration of a
 * guarded loop: lets; if cond: body; ctr += 1 (`body` gets the increment). */
IrBuffer *ws_guard_counter(TsCompiler *c, SrcLoc loc);
IrExpr *ws_guard_count(TsCompiler *c, IrBuffer *ctr, SrcLoc loc);
IrStmt *ws_guarded_iteration(TsCompiler *c, IrExpr *cond, IrStmt **lets, int nlets, IrBuffer *ctr, PtrVec *body,
                             SrcLoc loc);
/* ws_prelude.c: the scalar statements before a kernel body's pipelined loop that compute
 * T.alloc_var variables from what a producer warpgroup can read; ws_prelude_vars: those
 * variables; ws_prelude_stmts: the statements, in order, for the producer to repeat.
 * ws_scalar_ok: e reads only tensors nothing in kbody writes, the variables in `vars`, block
 * indices, parameters, dynamic sizes, kv (or any loop variable: any_loop), pure calls and
 * lets of those. */
bool ws_scalar_ok(IrExpr *e, IrStmt *kbody, const PtrVec *vars, const IrVar *kv, bool any_loop, int depth);
void ws_prelude_vars(TsCompiler *c, IrStmt *kbody, PtrVec *out);
void ws_prelude_stmts(TsCompiler *c, IrStmt *kbody, PtrVec *out);
/* Region r of a tile, read from stage `stage` of its staged copy [S, ...] instead. */
IrRegion ws_stage_region(TsCompiler *c, const IrRegion *r, IrBuffer *staged, IrExpr *stage);
/* ts.ws_pingpong: the consumers' loop of a warp-specialized loop kernel (T consumer threads,
 * thread index tx, kbody the kernel's code around it) with its two warpgroups taking turns on
 * the tensor cores (ws_pingpong.c); the loop itself when the switch is off or it does not
 * qualify. */
IrStmt *ws_pingpong(TsCompiler *c, const IrFunc *f, IrStmt *kbody, IrStmt *loop, const IrVar *tx, int64_t T);
/* tma_copy.c, used by lower_tile_ops: explicit mbarriers (T.alloc_barrier) and T.tma_copy.
 * tma_hoist_barriers removes the barrier ALLOCs of a kernel body into `allocs`;
 * tma_init_barriers appends them to `out`, then their initialisation by thread `tid` == 0,
 * the init fence and a __syncthreads.  tma_copy_lower: a T.tma_copy load as `if tid == 0:
 * expect_tx(bytes); TMA boxes`, a store as `fence.proxy.async; if tid == 0: TMA boxes; commit`
 * (tid: the index within the thread range running it; shared addresses still logical), adding
 * its tensor map to f. */
IrStmt *tma_hoist_barriers(TsCompiler *c, IrStmt *body, PtrVec *allocs);
void tma_init_barriers(TsCompiler *c, const PtrVec *allocs, IrExpr *tid, PtrVec *out, SrcLoc loc);
IrStmt *tma_copy_lower(TsCompiler *c, IrFunc *f, IrStmt *s, IrExpr *tid);
/* cluster_copy.c, used by lower_tile_ops: T.copy_cluster over the block's T threads (tid: the
 * linear thread index); *bulk: lowered as one bulk copy, whose kernel must end with a cluster
 * barrier. */
IrStmt *cluster_copy_lower(TsCompiler *c, const IrStmt *s, IrExpr *tid, int64_t T, bool *bulk);
/* lower_gemm.c, used by lower_tile_ops: a planned T.gemm / T.gemm_sp statement as its device
 * call (NULL: nothing to run, e.g. the wait half of an mma.sync GEMM, or after a diagnostic);
 * addr(ctx, r, loc) gives &first element of a shared operand region, tid the thread index. */
typedef IrExpr *(*GemmRegionAddr)(void *ctx, const IrRegion *r, SrcLoc loc);
IrStmt *gemm_lower(TsCompiler *c, IrStmt *s, IrExpr *tid, GemmRegionAddr addr, void *ctx);
void pass_inject_pipeline(TsCompiler *c, IrFunc *f);   /* T.Pipelined -> multi-stage cp.async */
void pass_legalize(TsCompiler *c, IrFunc *f);          /* tile copies/fills -> parallel nests */
void pass_layout_inference(TsCompiler *c, IrFunc *f);  /* fragment and loop layouts */
void pass_view_layouts(TsCompiler *c, IrFunc *f);      /* shared views share their base's swizzle */
/* flat_fragment_index.c: fragments a nest indexes by flattened nest variables (`B[i * n + j]`)
 * accessed there through a reshape view (`B_flat[i, j]`). */
void pass_split_flat_fragment_indices(TsCompiler *c, IrFunc *f);
void pass_lower_tile_ops(TsCompiler *c, IrFunc *f);    /* -> thread-level IR */
void pass_remap_global(TsCompiler *c, IrFunc *f);      /* T.Layout maps of global tensors -> offsets */
void pass_simplify(TsCompiler *c, IrFunc *f);          /* ir_simplify on every expression */
void pass_safe_memory(TsCompiler *c, IrFunc *f);       /* guards for global accesses not proven in bounds */
void pass_prefetch_loads(TsCompiler *c, IrFunc *f);    /* prefetch_loads.c */

/* lower_reduce.c: a T.reduce statement at thread level, for lower_tile_ops.  *pre: each
 * thread's fold, the in-warp shuffles and the cross-warp partials' stores; *post (after the
 * barrier thread_sync places): the partials folded and dst written.  False after an error. */
typedef struct ReduceLowering {
  TsCompiler *c;
  IrExpr *tid;      /* the linear thread index of the scope */
  int64_t T;        /* its threads */
  int *counter;     /* fresh-name counter */
  PtrVec *kallocs;  /* ALLOCs hoisted to the top of the kernel (the scratch buffers) */
  PtrVec *scratch;  /* IrBuffer*: the reductions' cross-warp workspaces */
} ReduceLowering;
bool reduce_lower_parts(const ReduceLowering *lw, IrStmt *s, PtrVec *pre, PtrVec *post);
void pass_vectorize_loops(TsCompiler *c, IrFunc *f);  /* T.vectorized copies as vector accesses */
void pass_rasterize_blocks(TsCompiler *c, IrFunc *f); /* T.use_swizzle block order, any kernel */
void pass_uniform_selects(TsCompiler *c, IrFunc *f); /* selects uniform over a T.Parallel nest (uniform_select.c) */
void pass_pipeline_serial_loops(TsCompiler *c, IrFunc *f); /* serial copy loops pipelined (pipeline_serial.c) */
void pass_heavy_first_blocks(TsCompiler *c, IrFunc *f); /* longest blocks launched first (heavy_first.c) */
void pass_thread_sync(TsCompiler *c, IrFunc *f);       /* __syncthreads for smem hazards */
void pass_merge_shared_memory(TsCompiler *c, IrFunc *f); /* one dynamic smem buffer */
/* thread_return.c: what may follow T.thread_return(): no tile operation (first pass), no
 * block-wide barrier (last pass, after every pass that places them) */
void pass_thread_return_tiles(TsCompiler *c, IrFunc *f);
void pass_thread_return_barriers(TsCompiler *c, IrFunc *f);

/* ---- helpers (pass_util.c) ---- */

/* A T.Parallel nest: consecutive PARALLEL fors with nothing between them. */
typedef struct ParNest {
  IrStmt *root;
  int n;
  IrVar *var[FRAG_MAX_DIMS];
  int64_t min[FRAG_MAX_DIMS], extent[FRAG_MAX_DIMS];
  IrStmt *body;
} ParNest;
/* Fills `out` for a PARALLEL for; false (with a diagnostic) when the bounds are not
 * compile-time constants or the nest is too deep. */
bool pass_parallel_nest(TsCompiler *c, IrStmt *root, ParNest *out);
/* The same, false with no diagnostic (a pass that leaves such nests to the one reporting them). */
bool pass_parallel_nest_quiet(IrStmt *root, ParNest *out);

/* How a fragment access indexes a nest: map[p] = nest dim whose var is index p exactly,
 * or -1 for a constant 0 index into an extent-1 dim.  False when the index pattern is
 * anything else (such fragments need the fully replicated layout). */
bool pass_access_map(const ParNest *nest, IrBuffer *buf, IrExpr *const *idx, int nidx, int *map);
/* pass_access_map where some dims (at least one) are indexed by expressions that use no
 * nest var (map[p] = FRAG_HELD) and at least one dim is a nest var: such a fragment can
 * keep the held dims in every thread's registers instead of being fully replicated. */
bool pass_access_map_held(const ParNest *nest, IrBuffer *buf, IrExpr *const *idx, int nidx, int *map);
/* pass_access_map_held where at least one dim p is indexed by a nest var divided by a
 * constant c > 1 (`j // 2`, or `j >> 1`) whose loop (min 0) runs over c times the dim:
 * map[p] = that nest dim, div[p] = c (div[p] = 1 for plain, held and extent-1 dims), for
 * fragment_derive_div.  Held dims may appear too; false when no dim is divided. */
bool pass_access_map_div(const ParNest *nest, IrBuffer *buf, IrExpr *const *idx, int nidx, int *map, int64_t *div);
/* pass_access_map that also accepts an index `var + c` (c a constant, the window
 * [c, c + extent) inside the dim); off[p] = c (0 for plain vars).  For fragment windows
 * (fragment_crop). */
bool pass_access_map_off(const ParNest *nest, IrBuffer *buf, IrExpr *const *idx, int nidx, int *map, int64_t *off);

/* How a fragment access indexes a nest when some dims are `var + e` with e an expression
 * that uses no nest var (an enclosing serial loop's var times a constant: `acc[i + s * 32,
 * j]`, `x[i, jj * 4 + j]`): map[p] = the nest dim of var (its extent at most the dim's),
 * shift[p] = e (NULL for a plain var; -1 / NULL for a constant 0 into an extent-1 dim).
 * False unless at least one dim has such an offset. */
bool pass_access_map_shift(TsCompiler *c, const ParNest *nest, IrBuffer *buf, IrExpr *const *idx, int nidx, int *map,
                           IrExpr **shift);
/* Can a nest laid out with `loop` read/write fragment `buf` through pass_access_map_shift's
 * map and shifts?  The loop's dims must have buf's fields (extents at most buf's) and each
 * shift must be a provable multiple of fragment_shift_period: then the thread that runs
 * iteration i holds element i + shift, fragment_shift_divisor registers further on. */
bool pass_shift_fits(TsCompiler *c, const Fragment *loop, const Fragment *buf, const int *map, IrExpr *const *shift);

/* vector_lanes.c: over one vector of a nest (V consecutive values of its last var lv, the
 * first a multiple of V):
 *  - pass_lane_uniform: e has one value over the vector (`(x + lv) // c` with V | c,
 *    `x + lv < b` with V | b, and integer arithmetic of such terms; no loads, no calls);
 *  - pass_lane_indices: an access of the nest moves V lanes at once: the loop starts on a
 *    multiple of V, every index but the last is uniform and the last is g + lane with g the
 *    same over the vector and a multiple of V (`lv`, `x + lv`, `(x + lv) % c`, x and c
 *    multiples of V);
 *  - pass_gather_value: the load a stored value copies, optionally converted once
 *    (*converts) and zero where a condition fails: `cast?(select(c1, select(c2, load, 0),
 *    0))`; *cond is the conjunction (NULL: none).  NULL when the value is anything else. */
bool pass_lane_uniform(const IrExpr *e, const IrVar *lv, int64_t V);
bool pass_lane_indices(const ParNest *nest, IrExpr *const *idx, int nidx, int64_t V);
/* Every row of memory buffer b (nidx = its rank) starts on a V-element boundary: its last
 * extent (a compact buffer) or each explicit stride is a multiple of V, the last stride 1. */
bool pass_rows_on_vectors(const IrBuffer *b, int nidx, int64_t V);
IrExpr *pass_gather_value(TsCompiler *c, IrExpr *value, IrExpr **cond, bool *converts);
/* A gather nest: T.Parallel loops around one store into a shared tile of an element of a
 * global tensor (not T.Layout-remapped), zero where a condition fails (pass_gather_value;
 * T.im2col makes these), reading no other memory than global tensors that nothing in the
 * kernel body kbody writes (batch sizes and offsets).  Returns the tile, or NULL.  Such a
 * nest is a pipeline producer (inject_pipeline: cp.async where its lanes vectorize). */
IrBuffer *pass_gather_dst(TsCompiler *c, IrStmt *st, IrStmt *kbody);
/* s with every access of shared tile `from` (loads, stores, tile regions) at its staged copy
 * `to`[stage, ...] (inject_pipeline.c; warp_specialize_loop's thread-read tiles). */
IrStmt *pass_restage(TsCompiler *c, IrStmt *s, IrBuffer *from, IrBuffer *to, IrExpr *stage);
/* stage_fragment.c: the reads of fragment `frag` in and around T.Parallel nest `nest` (a
 * statement of *body) go through a shared copy of it made before the outermost enclosing
 * serial loop that leaves frag alone; false (nothing changed) when that is not sound. */
bool pass_stage_fragment_reads(TsCompiler *c, IrStmt **body, IrStmt *nest, IrBuffer *frag);
/* Every T.gemm whose B is a fragment reads a shared copy of it instead, made right before
 * the GEMM (stage_fragment.c; plan_gemm runs it first).  Returns the rebuilt body. */
IrStmt *pass_stage_gemm_b(TsCompiler *c, IrStmt *body);

/* False (with a diagnostic) when the nest indexes a fragment or local past its constant
 * shape on every iteration's path (register_bounds.c). */
bool pass_check_register_bounds(TsCompiler *c, const ParNest *nest);
/* The first pass: a fragment that only T.Parallel element accesses touch, indexed past its
 * declared shape, takes the shape its loops need (a warning says so), as in TileLang. */
void pass_size_register_buffers(TsCompiler *c, IrFunc *f);
/* T.Parallel loops of a run-time extent bounded by a constant: over the bound, guarded
 * (bound_parallel.c; runs before size_registers). */
void pass_bound_parallel_extents(TsCompiler *c, IrFunc *f);
/* parallel_locals.c: a T.alloc_local buffer indexed by a T.Parallel variable is refused. */
void pass_check_parallel_locals(TsCompiler *c, IrFunc *f);

/* Row-major flat index of idx into buf's shape (for register arrays). */
IrExpr *pass_flat_index(TsCompiler *c, IrBuffer *buf, IrExpr *const *idx, int nidx, SrcLoc loc);
int64_t pass_kernel_threads(const IrKernel *k);
/* setmaxnreg.inc's registers per consumer thread of a warp-specialized kernel (at most 240):
 * the block's pool is what its threads launch with (the registers __launch_bounds__(threads,
 * blocks) allows, a multiple of 8: 96 each for 640 threads), and the consumers can only take
 * what the producers release with setmaxnreg.dec, or their inc waits forever. */
int64_t pass_ws_consumer_regs(int64_t consumers, int64_t producers, int64_t producer_regs, int64_t blocks);
/* May s wait for other blocks or ranks, or for what they write: a while loop (spinning on a
 * flag), distributed, NVSHMEM or grid-wide operations, extern calls? */
bool pass_may_wait(IrStmt *s);
/* pass_configs {key: True} (also "true" / "1"). */
bool pass_config_on(const IrFunc *f, const char *key);
/* A device-operation statement with up to two attributes (ir.h IR_DEVICE_OPS), and &b[idx]. */
IrStmt *pass_dev(TsCompiler *c, IrDeviceOp op, int64_t a0, int64_t a1, IrExpr **args, int nargs, SrcLoc loc);
IrExpr *pass_addr(TsCompiler *c, IrBuffer *b, IrExpr **idx, int n);
/* A copy of GEMM statement g as its issue (wg_wait -1) or wait (-2 all, -3 all but the latest)
 * half: the split wgmma inject_pipeline makes, lowered by lower_gemm. */
IrStmt *pass_gemm_half(TsCompiler *c, const IrStmt *g, int wg_wait);
/* plan_gemm, before planning kernel k: one warpgroup -> two where its fragments overflow the
 * registers (widen_consumers.c). */
void pass_widen_consumers(TsCompiler *c, const IrFunc *f, IrKernel *k);
bool pass_is_shared(const IrBuffer *b); /* scope shared or shared.dyn (the buffer itself, not its root) */
bool pass_is_zero(const IrExpr *e);     /* a constant +0 (integer or float), possibly cast */
/* Whether s holds a T.thread_return (IR_S_RETURN); *loc: the first one's place (loc may be NULL). */
bool pass_has_return(IrStmt *s, SrcLoc *loc);
/* A T.thread_return in s, or a break / continue of the loop s is the body of: a warp-specialized
 * schedule does not take such a loop (the producer would go on loading for consumers that left). */
bool pass_leaves_loop(const IrStmt *s);
/* A switch whose default is decided per kernel: 1 (True), 0 (present, not true), -1 (absent). */
int pass_config_state(const IrFunc *f, const char *key);
/* Is s the role split of a warp-specialized kernel k (warp_specialize, warp_specialize_loop):
 * `if tx >= threads[0]: producer else: consumers`?  The consumer branch runs on threads
 * [0, threads[0]) only, which synchronise among themselves with named barriers. */
bool pass_is_role_split(const IrKernel *k, const IrStmt *s);
/* Dynamic shared memory one block may opt in to on the target (0: unknown). */
int64_t pass_smem_cap(const TsCompiler *c);
/* Shared memory of one SM (all its blocks together); 0 when the target table lacks it. */
int64_t pass_smem_per_sm(const TsCompiler *c);
/* The range environment of a walk over thread-level IR (simplify, safe_memory); entries are only
 * appended, so a scope ends by restoring env->n.
 *  - pass_range_narrow: v's range where `v < c` (<=, >=, >; v a variable, or one plus or minus a constant; c a constant; with
 *    holds, each conjunct of an `a && b`) holds, or, with holds false, where it fails (an else);
 *  - pass_range_enter_kernel: a kernel's block indices (constant grids) and thread indices
 *    (blockDim including a warp-specialized producer warpgroup);
 *  - pass_range_enter_loop: a loop variable in [min, min + extent - 1]; an extent without a
 *    range counts as open_hi (0: the variable gets no range). */
void pass_range_narrow(IrRangeEnv *env, const IrExpr *k, bool holds);
void pass_range_enter_kernel(IrRangeEnv *env, const IrKernel *k);
void pass_range_enter_loop(IrRangeEnv *env, IrVar *v, const IrExpr *min, const IrExpr *extent, int64_t open_hi);
/* Constant memory: a global tensor that nothing in the kernel body kbody writes, through any
 * view (no store, tile-op destination or address passed to a device call; no remote writes:
 * a distributed kernel has none), so a read gives the same value wherever it moves
 * (a pipeline's producer, a TMA producer thread).  pass_reads_constant_memory: every load
 * in e is of constant memory. */
bool pass_constant_buffer(IrStmt *kbody, const IrBuffer *b);
/* Might a statement of s write the memory of b (see pass_constant_buffer; a T.call_extern
 * here writes only the buffers its arguments name)? */
bool pass_may_write(IrStmt *s, const IrBuffer *b);
bool pass_reads_constant_memory(IrExpr *e, IrStmt *kbody);
/* e with every let replaced by the value it was defined with (IrVar.let_value), to a depth of
 * 17 (a let left after that, or one without a recorded value, stays). */
IrExpr *pass_inline_lets(TsCompiler *c, IrExpr *e);

#endif
