/* fragment.h — register layouts of `local.fragment` buffers and of T.Parallel loop nests.
 *
 *   layout_inference (src/pass) picks one Fragment per fragment buffer and per parallel
 *   nest  ->  lower_tile_ops turns logical indices into (thread, register) with it.
 *
 * A Fragment is a "block fragment": every logical dim k of extent d_k is split into
 *   V_k contiguous elements per thread (a vector; only useful on the last dim),
 *   t_k threads (coordinate c_k, at thread-index stride tstride_k), and
 *   O_k = ceil(d_k / (V_k t_k)) outer repetitions held in registers.
 * Element i_k: c_k = (i_k / V_k) % t_k, l_k = (i_k / (V_k t_k)) * V_k + i_k % V_k.
 * The owning thread is sum_k c_k * tstride_k plus any combination of the replicate
 * fields (threads holding copies, e.g. after a reduction); the register is the row-major
 * (last dim fastest) mixed radix of l_k over L_k = O_k * V_k.  Elements at i_k >= d_k are
 * padding that lowering guards.  Thread fields and replicate fields together form one
 * mixed radix decomposition of [0, nthreads). */
#ifndef TS_LAYOUT_FRAGMENT_H
#define TS_LAYOUT_FRAGMENT_H

#include "../ir/ir.h"

#define FRAG_MAX_DIMS 8

typedef struct FragDim {
  int64_t extent;  /* d_k */
  int64_t threads; /* t_k (1 = not split over threads) */
  int64_t vec;     /* V_k */
  int64_t tstride; /* thread-index stride of c_k (meaningless when threads == 1) */
} FragDim;

struct Fragment {
  int ndim;
  int64_t nthreads;
  FragDim dim[FRAG_MAX_DIMS];
  int nrep; /* replicate fields, sorted by stride */
  int64_t rep_count[FRAG_MAX_DIMS + 2], rep_stride[FRAG_MAX_DIMS + 2];
};

/* A fresh block layout: threads assigned from the last dim outwards (powers of two, as
 * many as fit each dim), `vec` elements per thread on the last dim; leftover threads
 * replicate.  vec must divide shape[ndim-1] (callers pick it). */
Fragment *fragment_block(TsCompiler *c, int ndim, const int64_t *shape, int64_t nthreads, int64_t vec);
/* Every thread holds every element: register = row-major flat index. */
Fragment *fragment_replicated(TsCompiler *c, int ndim, const int64_t *shape, int64_t nthreads);
/* The layout of a buffer whose dim p is the loop dim map[p] of the loop layout `loop`
 * (map[p] = -1: a dim of extent 1 that is not indexed by a loop var).  Loop dims no
 * buffer dim maps to become replicate fields: their threads hold copies. */
Fragment *fragment_derive(TsCompiler *c, const Fragment *loop, int ndim, const int *map);
/* The layout of `src` with dim `dim` reduced away (keep_dim: kept with extent 1). */
Fragment *fragment_reduce(TsCompiler *c, const Fragment *src, int dim, bool keep_dim);

bool fragment_equal(const Fragment *a, const Fragment *b);
bool fragment_is_replicated(const Fragment *f); /* no dim split over threads */
int64_t fragment_outer(const Fragment *f, int k);     /* O_k */
int64_t fragment_local_extent(const Fragment *f, int k); /* L_k = O_k * V_k */
int64_t fragment_reg_stride(const Fragment *f, int k);   /* product of L_j for j > k */
int64_t fragment_local_size(const Fragment *f);          /* registers per thread */
int64_t fragment_replicas(const Fragment *f);            /* threads holding each element */
/* Element (i) -> owning thread (replica 0) and register; used by tests and the checker. */
int64_t fragment_thread_of(const Fragment *f, const int64_t *idx);
int64_t fragment_reg_of(const Fragment *f, const int64_t *idx);
/* "[128x64: t(16,8)/v(1,4) rep 2]" for dumps and diagnostics. */
void fragment_print(StrBuf *out, const Fragment *f);

#endif
