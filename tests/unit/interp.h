/* interp.h — a lockstep interpreter of thread-level IR for the unit tests (interp.c).
 *
 * One kernel runs for every block of its grid; inside a block every statement runs for
 * all active threads before the next, as a SIMT machine would.  Global buffers are set
 * through interp_global before the run and read after it.  The interpreter counts
 * `errors` (an out-of-bounds access, an uninitialised register, a construct codegen would
 * not accept, a barrier not reached by every thread, a cp.async never waited for) and
 * shared-memory `races` (between two barriers, an element written by one thread and
 * touched by another): a missing __syncthreads fails a test even though lockstep
 * execution hides it.  Each cp.async write lands at the wait that retires its group, so a
 * read before that wait sees the old (or poisoned: NaN) contents. */
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
} Mem;
/* A cp.async write in flight: it lands at the latest moment the hardware allows, the
 * issuing thread's wait that retires its group, so a read before that wait sees the old
 * (or poisoned) contents. */
typedef struct Pending { Mem *m; int64_t a; double v; int t, group; } Pending;
typedef struct Interp {
  int T;
  Slot *slots; int nslots;
  Mem mem[64]; int nmem;
  int epoch;
  int races, errors;
  bool active[MAXT];
  Pending *pend; int npend, cap_pend;
  int committed[MAXT]; /* cp.async groups each thread has committed */
} Interp;

/* Runs every block of the (only) kernel of f. */
void interp_run(Interp *in, IrFunc *f);
/* The memory of buffer b (created, NaN-poisoned, on first use); shared memory and registers
 * keep the last block's contents after a run. */
Mem *interp_mem(Interp *in, IrBuffer *b);
/* The contents of global buffer b (allocated, NaN-poisoned, on first use). */
double *interp_global(Interp *in, IrBuffer *b);
void interp_free(Interp *in);
#endif
