/* interp.h — a lockstep interpreter of thread-level IR for the unit tests (interp.c).
 *
 * One kernel runs for every block of its grid; inside a block every statement runs for
 * all active threads before the next, as a SIMT machine would.  Global buffers are set
 * through interp_global before the run and read after it.  The interpreter counts
 * `errors` (an out-of-bounds access, an uninitialised register, a construct codegen would
 * not accept, a barrier not reached by every thread, a cp.async never waited for) and
 * shared-memory `races` (between two barriers, an element written by one thread and
 * touched by another): a missing __syncthreads fails a test even though lockstep
 * execution hides it.  Each cp.async write lands at the wait that retires its group, and
 * any read of its element between the issue and that wait is a race (the hardware may
 * land it at any moment in between).  Buffers that merge_shared_memory lets share bytes are
 * checked by byte (SmemBytes): a read of bytes another buffer has written since is an error.  Tensor-core GEMMs
 * (gemm_ss/rs_mma, gemm_ss/rs_wgmma, issued and waited) run from the compiler's own
 * operand layouts (layout.h swizzles, the accumulator Fragment): a check that the code
 * around them writes and reads those layouts, not of the device templates themselves.
 * Loops run in lockstep too: a thread that runs `break` or `continue` sits out the rest of
 * its iteration (or loop), a while loop runs rounds while any thread's condition holds (at
 * most 2^20: a spin on what no thread of the block writes is an error), and a warp vote
 * (T.warp_any / T.warp_all) counts the lanes of each warp that run it.
 * Warp-specialized kernels run their two roles (`if tx >= T: producer else: consumers`)
 * as coroutines that hand over at each mbarrier wait not yet satisfied; TMA boxes move
 * through the descriptors' swizzles and complete their barrier's transaction bytes. */
#ifndef TS_TEST_INTERP_H
#define TS_TEST_INTERP_H
#include <stdbool.h>
#include <stdint.h>

#include "../../src/ir/ir.h"

#define MAXT 1024
typedef struct Slot { IrVar *var; double val[MAXT]; } Slot;
typedef struct Mem {
  IrBuffer *buf;
  double *data;       /* global/shared: numel; register buffers: numel per thread */
  int64_t n;          /* elements (per thread for registers) */
  int *wep, *wthr, *rep, *rthr; /* race tracking for shared memory */
  int *flux;          /* shared memory: cp.async writes issued to the element, not yet landed */
  bool borrowed;      /* a view (IrBuffer.alias_of): data and tracking are its root's */
} Mem;
/* A cp.async write in flight: it lands at the latest moment the hardware allows, the
 * issuing thread's wait that retires its group, so a read before that wait sees the old
 * (or poisoned) contents. */
typedef struct Pending { Mem *m; int64_t a; double v; int t, group; } Pending;
/* A tensor-core GEMM in flight (wgmma issued, not yet waited for): it reads its shared
 * tiles at the wait that retires it, the latest moment the hardware may, so a stage
 * overwritten before that wait shows in the result. */
typedef struct PendingGemm {
  IrExpr *call;         /* the device call (attrs, buffers) */
  int64_t base_a, base_b; /* element offsets of the A and B tiles (A: registers for RS) */
  int thread_of[MAXT];  /* the interpreter thread running each fragment thread (-1: none) */
  int reader[2];        /* two participating threads: every thread reads the tiles (races) */
  struct Mem *acc, *areg; /* its accumulator and RS A registers: touching them before the
                             wait that retires it is a race (the hardware writes and reads
                             them meanwhile) */
} PendingGemm;
#define INTERP_MAX_GEMMS 8
/* An mbarrier (a uint64 of shared memory): arrivals still expected in the current phase,
 * transaction bytes still expected, completed phases. */
typedef struct MBar { Mem *m; int64_t a; int count, pending; int64_t tx; int phase; } MBar;
#define INTERP_MAX_MBARS 64
/* Dynamic shared memory by byte, at merge_shared_memory's offsets: which buffer's data each
 * byte holds (1 + IrBuffer.id, 0: none yet) and who last wrote and read it since a barrier.
 * Two buffers given the same bytes (their lifetimes do not overlap) show a read of bytes the
 * other wrote since (clobbered: an error) and touches of both by different threads between
 * two barriers (races). */
typedef struct SmemBytes { int64_t n; int *own, *rbuf, *wep, *wthr, *rep, *rthr; } SmemBytes;
struct Coop;
typedef struct Interp {
  int T;
  Slot *slots; int nslots;
  Mem mem[64]; int nmem;
  int epoch;
  int races, errors;
  bool active[MAXT];
  bool brk[MAXT], cont[MAXT]; /* a thread that ran `break` / `continue` in the innermost loop */
  Pending *pend; int npend, cap_pend;
  int committed[MAXT]; /* cp.async groups each thread has committed */
  PendingGemm gemm[INTERP_MAX_GEMMS]; int ngemm; /* wgmma groups in flight, oldest first */
  MBar mbar[INTERP_MAX_MBARS]; int nmbar;
  IrFunc *func;          /* the function running (its TMA descriptors) */
  const IrKernel *kernel;
  int64_t grid[3], block[3]; /* the launch and the running block */
  struct Coop *coop;     /* inside a warp-specialized role split: the two roles' hand-over */
  SmemBytes smem;        /* the running kernel's dynamic shared memory, by byte */
  int64_t resident;      /* > 0: a persistent kernel's grid is clamped to this many blocks, as
                            the runtime clamps it to the co-resident ones (each walks tiles) */
} Interp;

/* Compiles `func` of `file` with "name=value" parameters (NULL-terminated, at most 16) through
 * the front end and the whole pass pipeline, ready to run; NULL (diagnostics on stderr) when
 * it does not compile. */
IrFunc *interp_compile(TsCompiler *c, SourceFile *file, const char *func, const char *const *params);
/* The tensor parameter of f called `name`, or NULL. */
IrBuffer *interp_param(IrFunc *f, const char *name);
/* Runs every block of each kernel of f, in order. */
void interp_run(Interp *in, IrFunc *f);
/* The memory of buffer b (created, NaN-poisoned, on first use); shared memory and registers
 * keep the last block's contents after a run. */
Mem *interp_mem(Interp *in, IrBuffer *b);
/* The contents of global buffer b (allocated, NaN-poisoned, on first use). */
double *interp_global(Interp *in, IrBuffer *b);
/* Sets scalar parameter (or dynamic size) v for every thread before a run. */
void interp_set_scalar(Interp *in, IrVar *v, double value);
void interp_free(Interp *in);
#endif
