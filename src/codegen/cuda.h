/* cuda.h — CUDA C++ code generation from thread-level IR, and the launch metadata the
 * runtime needs.
 *
 * Kernel ABI (every kernel of a function takes the same arguments, in this order):
 *   each IrFunc param: tensor -> `T* __restrict__ name`, scalar -> its C type;
 *   then each dynamic dimension in IrFunc.dyn_vars order as `int64_t`.
 * Kernels are `extern "C"` so the runtime finds them by name. */
#ifndef TS_CODEGEN_CUDA_H
#define TS_CODEGEN_CUDA_H

#include "../ir/ir.h"

/* A T.alloc_global workspace: module-scope `__device__` storage with C linkage, found with
 * cuModuleGetGlobal and, when `zero`, zeroed on the launch stream before every launch of its
 * kernel.  Concurrent launches of one kernel (other streams) share it.  One allocated in the
 * prim_func outside its kernels belongs to the first kernel using it (zeroed before that
 * launch only); later kernels of the function point at the same symbol. */
typedef struct CgWorkspace {
  const char *symbol;   /* <kernel>_ws_<buffer> */
  int64_t bytes;
  bool zero;            /* the kernel reads it, or hands it to an atomic or a barrier (cuda.c) */
} CgWorkspace;

typedef struct CgKernelInfo {
  const char *name;     /* extern "C" symbol */
  IrExpr *grid[3];      /* evaluate with the dynamic vars bound (ir_eval_int) */
  int block[3];
  int64_t smem_bytes;   /* dynamic shared memory; > 48 KB needs the attribute raised */
  IrExpr *smem_dyn;     /* plus these bytes, evaluated with the dynamic vars bound; or NULL */
  int cluster_x;        /* __cluster_dims__(cluster_x, 1, 1); 0 or 1: none */
  bool persistent;      /* grid[0] is the work; launch at most what is co-resident (IrKernel) */
  CgWorkspace *workspaces;
  int nworkspaces;
} CgKernelInfo;

typedef struct CgOutput {
  const char *source;   /* complete translation unit (includes the tilescale/ device headers) */
  CgKernelInfo *kernels;
  int nkernels;
  /* What the code uses (from the device operations' flags, ir.h IRD_*), for the runtime:
   * nothing downstream searches the generated text. */
  bool uses_dist;       /* the distributed device library (heap table, dist headers) */
  bool uses_shmem;      /* the NVSHMEM family (linked with NVSHMEM on the nvshmem backend) */
  bool cooperative;     /* a grid-wide barrier: launch cooperatively */
} CgOutput;

bool cg_cuda(TsCompiler *c, const IrFunc *f, CgOutput *out);

#endif
