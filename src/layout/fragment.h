/* fragment.h — register layouts of `local.fragment` buffers and of T.Parallel loop nests.
 *
 *   layout_inference (src/pass) picks one Fragment per fragment buffer and per parallel
 *   nest  ->  lower_tile_ops turns logical indices into (thread, register) with it.
 *
 * A Fragment is a "block fragment": every logical dim k of extent d_k is split, fastest
 * first, into
 *   V_k contiguous elements per thread (a vector; only useful on the last dim),
 *   t_k threads (coordinate c_k, at thread-index stride tstride_k),
 *   M_k registers ("mid", 1 for plain block layouts),
 *   t2_k threads (coordinate c2_k at stride tstride2_k; 1 for plain block layouts), and
 *   O_k = ceil(d_k / (V_k t_k M_k t2_k)) outer repetitions held in registers.
 * Element i_k: u = i_k % V_k, c_k = (i_k / V_k) % t_k, m = (i_k / (V_k t_k)) % M_k,
 * c2_k = (i_k / (V_k t_k M_k)) % t2_k, o = i_k / (V_k t_k M_k t2_k); its register
 * coordinate is l_k = (o M_k + m) V_k + u.  The second level exists for the tensor-core
 * accumulators: an mma.sync / wgmma tile gives a lane 2 rows 8 apart (t = 8 lanes, M = 2
 * registers) and the warps of a block stack those 16-row strips (t2 = warps).
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
  int64_t mid;      /* M_k; 0 reads as 1 */
  int64_t threads2; /* t2_k; 0 reads as 1 */
  int64_t tstride2; /* thread-index stride of c2_k */
} FragDim;

static inline int64_t fragdim_mid(const FragDim *d) { return d->mid > 1 ? d->mid : 1; }
static inline int64_t fragdim_t2(const FragDim *d) { return d->threads2 > 1 ? d->threads2 : 1; }
/* Elements of one outer repetition: V t M t2. */
static inline int64_t fragdim_span(const FragDim *d) { return d->vec * d->threads * fragdim_mid(d) * fragdim_t2(d); }

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
/* Adds a replicate field (count threads at `stride` hold copies), merged and sorted. */
void fragment_add_replicate(Fragment *f, int64_t count, int64_t stride);

/* A user's map (T.Fragment): element idx, replica rep -> *thread; false stops (an error
 * already reported). */
typedef bool (*FragmentMapFn)(void *ctx, const int64_t *idx, int64_t rep, int64_t *thread);
/* The block fragment whose owning threads are the map's (fragment_fit.c: its registers are
 * this model's), for `replicate` replicas of each element; threads of the block the map
 * leaves out hold copies.  NULL with *why (or NULL when fn failed) when the map is not one. */
Fragment *fragment_fit(TsCompiler *c, int ndim, const int64_t *shape, int64_t nthreads, int64_t replicate,
                       FragmentMapFn fn, void *ctx, const char **why);

/* Every thread holds every element: register = row-major flat index. */
Fragment *fragment_replicated(TsCompiler *c, int ndim, const int64_t *shape, int64_t nthreads);
/* The layout of a buffer whose dim p is the loop dim map[p] of the loop layout `loop`
 * (map[p] = -1: a dim of extent 1 that is not indexed by a loop var).  Loop dims no
 * buffer dim maps to become replicate fields: their threads hold copies. */
Fragment *fragment_derive(TsCompiler *c, const Fragment *loop, int ndim, const int *map);
/* map[p] == FRAG_HELD: dim p is indexed by an expression that does not change within the
 * nest (an enclosing serial loop's var, a constant): it is not split over threads, every
 * thread holds all held[p] elements of it in registers (T.Parallel(i, j) reading
 * b[k, j] for a serial k keeps b's column j with the thread that owns column j). */
#define FRAG_HELD (-3)
Fragment *fragment_derive_held(TsCompiler *c, const Fragment *loop, int ndim, const int *map, const int64_t *held);
/* fragment_derive_held where dims p with div && div[p] > 1 are indexed by the loop var of
 * dim map[p] divided by div[p] (`j // 2` reading packed 4-bit values: buffer element x
 * stands for loop elements c x .. c x + c - 1, c = div[p]; the loop dim's extent is c times
 * the buffer's).  Well defined when those c elements are lanes of one thread's vector
 * (V % c == 0: the dim keeps the loop's fields with V / c lanes and extent / c), or whole
 * vectors of r = c / V adjacent threads with r dividing t (the r threads each hold a copy: a
 * replicate field; t / r thread coordinates at r times the stride).  NULL otherwise: some
 * thread would read an element whose register another thread owns. */
Fragment *fragment_derive_div(TsCompiler *c, const Fragment *loop, int ndim, const int *map, const int64_t *held,
                              const int64_t *div);
/* The layout of `src` with dim `dim` reduced away (keep_dim: kept with extent 1). */
Fragment *fragment_reduce(TsCompiler *c, const Fragment *src, int dim, bool keep_dim);

/* The accumulator layout of a tensor-core GEMM C tile [rows x cols] (see fragment.c):
 * lanes hold 2 rows 8 apart and 2 adjacent columns of each 8-column block; warps are
 * stacked over rows in 16-row strips (wm of them, interleaved), warp columns (wn) own
 * contiguous column blocks.  For wgmma wm counts warps (4 per warpgroup along M), so a
 * warpgroup's 4 warps hold one 64-row atom.  Returns NULL when the shape does not tile. */
Fragment *fragment_gemm_acc(TsCompiler *c, int64_t rows, int64_t cols, int64_t wm, int64_t wn, int64_t nthreads);

/* The layout of a 2-D fragment seen with its dims swapped (the transposed buffer): every
 * element keeps its thread; registers run row-major over the new shape. */
Fragment *fragment_transpose2(TsCompiler *c, const Fragment *f);

/* The layout of the window [off_k, off_k + ext_k) of `f` seen as a fragment of shape ext
 * (the same threads and registers, re-indexed from 0), or NULL when the window does not
 * line up with f's fields: along each dim either whole outer repetitions (off and ext
 * multiples of V t M t2), or, in a dim of one repetition with t2 = 1, a run of `mid`
 * registers (off and ext multiples of V t).  *reg_off: the register index of window
 * element 0 (window element x has register fragment_reg_of(win, x) + *reg_off, with
 * f's register strides). */
Fragment *fragment_crop(TsCompiler *c, const Fragment *f, const int64_t *off, const int64_t *ext, int64_t *reg_off);

/* The layout of the prefix window [0, ext_k) of `f` when it does not line up with f's
 * fields (fragment_crop): f itself with smaller extents, so every element keeps its thread
 * and its register coordinates l_k; registers of the window are addressed with f's
 * register strides, and elements past ext_k are padding that lowering guards (a decoder's
 * `T.copy(acc_o[:valid_rows, :], O)` of 4 rows of a 64-row accumulator).  NULL when an
 * ext_k exceeds f's extent. */
Fragment *fragment_restrict(TsCompiler *c, const Fragment *f, const int64_t *ext);
/* The same registers seen through another shape of the same size (T.reshape of a fragment):
 * unit dims inserted or removed (they hold nothing: one register coordinate), and a dim
 * split into consecutive dims ([256 x 128] as [256, 4, 32]) where each split falls on a
 * boundary of the dim's levels (vector lanes, threads, mid registers, second-level threads,
 * outer registers; a level may itself split when the factor divides it) and the dim has no
 * padding, so every element keeps its thread and every register its index.  A layout not
 * split over threads without padding (registers row-major) reshapes to any shape.  NULL for
 * anything else (merging dims of a spread layout). */
Fragment *fragment_reshape(TsCompiler *c, const Fragment *f, int ndim, const int64_t *shape);

/* The loop layout of a nest of extents ext[0..nloop) that reads a fragment `f` whose dim p
 * is indexed by loop var map[p] (-1: a unit dim at index 0) but does not index every loop
 * var (`scores_max[h]` in T.Parallel(h, k)): each iteration runs in the threads that hold
 * the element it reads.  Mapped loop dims take f's fields; the others are not split over
 * threads, except that each replicate field of f (threads holding copies) goes to an
 * unmapped loop dim whose extent it divides: those threads split that dim instead of
 * repeating it.  NULL when a loop dim is mapped twice or f is not split over threads. */
Fragment *fragment_from_read(TsCompiler *c, const Fragment *f, int nloop, const int64_t *ext, const int *map);

/* Shifting an index of dim k by a multiple of fragment_shift_period(f, k) keeps its thread
 * and adds shift / fragment_shift_divisor(f, k) to its register coordinate l_k (when the
 * shifted index stays inside the dim): a window `acc[i + s * 32, j]` at an offset that
 * changes in an outer serial loop reads the elements the loop's own threads hold. */
int64_t fragment_shift_period(const Fragment *f, int k);
int64_t fragment_shift_divisor(const Fragment *f, int k);
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
