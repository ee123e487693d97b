/* pipeline.c — the passes from tile-level IR (front end) to thread-level IR (codegen):
 *
 *   parallel_locals      a T.alloc_local buffer indexed by a T.Parallel variable: refused
 *      |                 (parallel_locals.c)
 *   bound_parallel       T.Parallel(T.min(n, 512)): over 512, the body guarded by i < n
 *      |                 (bound_parallel.c)
 *   size_registers       a fragment that T.Parallel loops index past its declared shape
 *      |                 (and nothing else touches) is sized to them (register_bounds.c)
 *   thread_return_tiles  T.thread_return(): no tile operation after it (thread_return.c)
 *      |
 *   uniform_selects      a T.Parallel nest storing select(x >= y, a, b): branches for
 *      |                 "true for every element" and "false for every element" (uniform_select.c)
 *   plan_gemm            every T.gemm's plan (mma.sync / wgmma, tiling, swizzles), once
 *      |
 *   warp_specialize      sm_90a: a pipelined T.gemm loop -> TMA producer warpgroup on
 *      |                 mbarriers + wgmma consumer warpgroups (setmaxnreg); any other
 *      |                 pipelined loop (attention, MLA) whose loads TMA can issue: a
 *      |                 producer warpgroup filling staged tiles, each with full/empty
 *      |                 mbarriers around its uses (warp_specialize_loop.c)
 *   rasterize_blocks     T.use_swizzle: block indices remapped to panels (rasterize.c)
 *      |
 *   heavy_first_blocks   an axis whose blocks loop longer as the index grows is walked
 *      |                 backwards, longest blocks first (heavy_first.c)
 *   pipeline_serial_loops  a T.serial (or T.Pipelined(num_stages=0)) loop copying global
 *      |                 tiles to shared memory becomes T.Pipelined(num_stages=2) (pipeline_serial.c)
 *   inject_pipeline      T.Pipelined -> staged shared buffers, cp.async prologue/waits
 *      |
 *   legalize             T.copy / T.fill / tile atomics -> T.Parallel nests; Pipelined -> serial
 *      |
 *   split_flat_indices   `frag[i * n + j]` in T.Parallel(m, n) -> a reshape view `[i, j]`
 *      |
 *   layout_inference     a Fragment for every fragment buffer and parallel nest
 *      |
 *   view_layouts         a T.view of a swizzled shared buffer takes its swizzle, in its own
 *      |                 element type (and a view's swizzle becomes its base's) (view_layouts.c)
 *   lower_tile_ops       nests -> per-thread unrolled register loops (+ guards, vectors);
 *      |                 reductions -> shuffles + smem (consecutive ones sharing a barrier);
 *      |                 atomics -> calls
 *   remap_global         accesses of T.Layout-annotated global tensors -> physical offsets
 *      |
 *   simplify             index arithmetic cleanup (ir_simplify)
 *      |
 *   safe_memory          scalar global accesses not proven in bounds: loads read 0, stores
 *      |                 and atomics are skipped there (TileLang's semantics)
 *   prefetch_loads       opt-in: global loads a wgmma loop makes every iteration, loaded one
 *      |                 iteration ahead into registers; or those after a synchronous wgmma
 *      |                 issued before it and its mbarrier waits (prefetch_loads.c)
 *   thread_sync          __syncthreads for shared-memory RAW/WAR/WAW hazards
 *      |
 *   merge_shared_memory  shared.dyn buffers -> offsets in one dynamic allocation
 *      |
 *   thread_return_barriers  T.thread_return(): no block-wide barrier after it
 *
 * With c->debug the IR is verified after each pass; c->dump_after names a pass (or
 * "all") whose output is appended to c->dump_out under a ";; after <pass>" line.
 * A pass that reports user errors stops the pipeline. */
#include <string.h>

#include "passes.h"

typedef struct PassEntry {
  const char *name;
  void (*run)(TsCompiler *c, IrFunc *f);
} PassEntry;

static const PassEntry passes[] = {
    {"parallel_locals", pass_check_parallel_locals},
    {"bound_parallel", pass_bound_parallel_extents},
    {"size_registers", pass_size_register_buffers},
    {"thread_return_tiles", pass_thread_return_tiles},
    {"uniform_selects", pass_uniform_selects},
    {"plan_gemm", pass_plan_gemm},
    {"warp_specialize", pass_warp_specialize},
    {"rasterize_blocks", pass_rasterize_blocks},
    {"heavy_first_blocks", pass_heavy_first_blocks},
    {"pipeline_serial_loops", pass_pipeline_serial_loops},
    {"inject_pipeline", pass_inject_pipeline},
    {"legalize", pass_legalize},
    {"split_flat_indices", pass_split_flat_fragment_indices},
    {"layout_inference", pass_layout_inference},
    {"view_layouts", pass_view_layouts},
    {"lower_tile_ops", pass_lower_tile_ops},
    {"remap_global", pass_remap_global},
    {"simplify", pass_simplify},
    {"safe_memory", pass_safe_memory},
    {"prefetch_loads", pass_prefetch_loads},
    {"vectorize_loops", pass_vectorize_loops},
    {"thread_sync", pass_thread_sync},
    {"merge_shared_memory", pass_merge_shared_memory},
    {"thread_return_barriers", pass_thread_return_barriers},
};

bool pass_pipeline_has(const char *name) {
  if (!strcmp(name, "all")) return true;
  for (int i = 0; i < TS_ARRAY_LEN(passes); i++)
    if (!strcmp(name, passes[i].name)) return true;
  return false;
}

void pass_pipeline_names(StrBuf *out) {
  for (int i = 0; i < TS_ARRAY_LEN(passes); i++) sb_printf(out, "%s%s", i ? ", " : "", passes[i].name);
}

bool pass_pipeline(TsCompiler *c, IrFunc *f) {
  for (int i = 0; i < TS_ARRAY_LEN(passes); i++) {
    int before = c->diag.errors;
    passes[i].run(c, f);
    if (c->diag.errors > before) return false;
    if (c->debug) ir_verify(c, f, passes[i].name);
    if (c->dump_after && c->dump_out &&
        (strcmp(c->dump_after, "all") == 0 || strcmp(c->dump_after, passes[i].name) == 0)) {
      sb_printf(c->dump_out, ";; after %s\n", passes[i].name);
      ir_print_func(c->dump_out, f);
    }
  }
  return true;
}
