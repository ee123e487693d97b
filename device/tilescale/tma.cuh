/* tma.cuh — Hopper (sm_90) asynchronous data movement for generated kernels: TMA tile
 * loads (cp.async.bulk.tensor) completing on shared-memory mbarriers, the mbarrier
 * operations of producer/consumer pipelines, and setmaxnreg for warp-specialized kernels.
 *
 *   src/pass/warp_specialize.c emits calls of these (ts::mbar_*, ts::tma_load_*d,
 *   ts::setmaxnreg_*); the tensor maps are kernel parameters of type ts::TmaDesc, passed
 *   `const __grid_constant__` (codegen) and encoded by the runtime at launch
 *   (src/rt/launch.c, cuTensorMapEncodeTiled).
 *
 * A pipeline stage has two barriers: `full` (one arrival: the producer's expect_tx; the
 * phase completes when the TMA bytes have landed) and `empty` (one arrival per consumer
 * warp when its wgmma no longer reads the stage).  Waits are on the phase parity: a fresh
 * barrier is in phase 0, so waiting for parity 1 returns at once (the producer's first
 * round over the empty barriers). */
#pragma once

#include <tilescale/common.cuh>

namespace ts {

/* CUtensorMap: 128 opaque bytes, 64-byte aligned (NVRTC has no <cuda.h>). */
struct __align__(64) TmaDesc {
  unsigned long long opaque[16];
};

TS_DEV uint32_t smem_addr(const void *p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }

#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900)
#define TS_HAS_TMA 1
#endif

/* ---- mbarrier ------------------------------------------------------------------------ */
TS_DEV void mbar_init(uint64_t *bar, int count) {
#ifdef TS_HAS_TMA
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(count) : "memory");
#else
  (void)bar; (void)count; __trap();
#endif
}

/* Makes initialised barriers visible to the async proxy (TMA) before the block barrier
 * that publishes them. */
TS_DEV void mbar_fence_init() {
#ifdef TS_HAS_TMA
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#endif
}

TS_DEV void mbar_wait(uint64_t *bar, int parity) {
#ifdef TS_HAS_TMA
  uint32_t done;
  do {
    asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
                 : "=r"(done) : "r"(smem_addr(bar)), "r"(parity) : "memory");
  } while (!done);
#else
  (void)bar; (void)parity; __trap();
#endif
}

TS_DEV void mbar_arrive(uint64_t *bar) {
#ifdef TS_HAS_TMA
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_addr(bar)) : "memory");
#else
  (void)bar; __trap();
#endif
}

/* One arrival that also announces `bytes` of TMA transactions for the current phase. */
TS_DEV void mbar_expect_tx(uint64_t *bar, int bytes) {
#ifdef TS_HAS_TMA
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(bytes) : "memory");
#else
  (void)bar; (void)bytes; __trap();
#endif
}

/* Announces `bytes` of TMA transactions for the current phase without arriving: T.tma_copy's
 * leader thread, whose own arrival is the user's T.barrier_arrive (TileLang's semantics: the
 * barrier's arrive count is the threads that call barrier_arrive, the bytes come on top). */
TS_DEV void mbar_expect_tx_noarrive(uint64_t *bar, int bytes) {
#ifdef TS_HAS_TMA
  asm volatile("mbarrier.expect_tx.shared::cta.b64 [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(bytes) : "memory");
#else
  (void)bar; (void)bytes; __trap();
#endif
}

/* ---- TMA tile loads: box at coordinates (innermost first) -> shared, bytes counted on bar.
 * Out-of-bounds elements of the box are filled with zeros by the hardware (non-divisible
 * shapes need no guards). */
TS_DEV void tma_load_2d(const TmaDesc &d, void *dst, uint64_t *bar, int c0, int c1) {
#ifdef TS_HAS_TMA
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];\n"
               ::"r"(smem_addr(dst)), "l"(reinterpret_cast<uint64_t>(&d)), "r"(smem_addr(bar)), "r"(c0), "r"(c1)
               : "memory");
#else
  (void)d; (void)dst; (void)bar; (void)c0; (void)c1; __trap();
#endif
}
TS_DEV void tma_load_3d(const TmaDesc &d, void *dst, uint64_t *bar, int c0, int c1, int c2) {
#ifdef TS_HAS_TMA
  asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], [%2];\n"
               ::"r"(smem_addr(dst)), "l"(reinterpret_cast<uint64_t>(&d)), "r"(smem_addr(bar)), "r"(c0), "r"(c1), "r"(c2)
               : "memory");
#else
  (void)d; (void)dst; (void)bar; (void)c0; (void)c1; (void)c2; __trap();
#endif
}
TS_DEV void tma_load_4d(const TmaDesc &d, void *dst, uint64_t *bar, int c0, int c1, int c2, int c3) {
#ifdef TS_HAS_TMA
  asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, %6}], [%2];\n"
               ::"r"(smem_addr(dst)), "l"(reinterpret_cast<uint64_t>(&d)), "r"(smem_addr(bar)), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
               : "memory");
#else
  (void)d; (void)dst; (void)bar; (void)c0; (void)c1; (void)c2; (void)c3; __trap();
#endif
}

/* ---- TMA tile stores (the epilogue): shared box -> global at coordinates (innermost
 * first).  Elements of the box outside the tensor are not written, so edge tiles need no
 * guards.  The shared data must have been written by the generic proxy, then
 * fence_proxy_async_shared() by each writer, then a barrier, before the one thread that
 * issues the store; tma_store_commit() closes a group, tma_store_wait_read<N>() waits until
 * at most N groups still read shared memory (before the buffer is written again) and
 * tma_store_wait<N>() until their global writes are done too (before the block exits). */
TS_DEV void tma_store_2d(const TmaDesc &d, const void *src, int c0, int c1) {
#ifdef TS_HAS_TMA
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];\n"
               ::"l"(reinterpret_cast<uint64_t>(&d)), "r"(smem_addr(src)), "r"(c0), "r"(c1) : "memory");
#else
  (void)d; (void)src; (void)c0; (void)c1; __trap();
#endif
}
TS_DEV void tma_store_3d(const TmaDesc &d, const void *src, int c0, int c1, int c2) {
#ifdef TS_HAS_TMA
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];\n"
               ::"l"(reinterpret_cast<uint64_t>(&d)), "r"(smem_addr(src)), "r"(c0), "r"(c1), "r"(c2) : "memory");
#else
  (void)d; (void)src; (void)c0; (void)c1; (void)c2; __trap();
#endif
}
TS_DEV void tma_store_4d(const TmaDesc &d, const void *src, int c0, int c1, int c2, int c3) {
#ifdef TS_HAS_TMA
  asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.bulk_group [%0, {%2, %3, %4, %5}], [%1];\n"
               ::"l"(reinterpret_cast<uint64_t>(&d)), "r"(smem_addr(src)), "r"(c0), "r"(c1), "r"(c2), "r"(c3) : "memory");
#else
  (void)d; (void)src; (void)c0; (void)c1; (void)c2; (void)c3; __trap();
#endif
}
TS_DEV void tma_store_commit() {
#ifdef TS_HAS_TMA
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
#endif
}
template <int N> TS_DEV void tma_store_wait_read() {
#ifdef TS_HAS_TMA
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
#endif
}
template <int N> TS_DEV void tma_store_wait() {
#ifdef TS_HAS_TMA
  asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}
TS_DEV void fence_proxy_async_shared() {
#ifdef TS_HAS_TMA
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}
/* Named barrier `id` (1..15; 0 is __syncthreads) over the first `threads` threads (a
 * multiple of 32): the consumer warpgroups synchronise without the producer. */
template <int ID, int THREADS> TS_DEV void named_barrier_sync() {
  asm volatile("bar.sync %0, %1;\n" ::"n"(ID), "n"(THREADS) : "memory");
}
/* The same with the id in a register (one per warpgroup: the turns of ws_pingpong.c), and
 * its arrive-only half: the calling threads count towards barrier `id` without waiting. */
template <int THREADS> TS_DEV void named_barrier_sync_dyn(int id) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "n"(THREADS) : "memory");
}
template <int THREADS> TS_DEV void named_barrier_arrive_dyn(int id) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "n"(THREADS) : "memory");
}

/* ---- thread-block clusters (sm_90): TMA multicast and remote barrier arrivals -----------
 * The multicast loads write the box to the same shared-memory offset in every block of
 * `mask` (bit i = cluster rank i) and count its bytes on the barrier at `bar`'s offset in
 * each of them, so every block of a cluster runs the same pipeline (same stage order and
 * expected bytes) while each issues only its part of the shared operand. */
TS_DEV void tma_load_2d_mc(const TmaDesc &d, void *dst, uint64_t *bar, int mask, int c0, int c1) {
#ifdef TS_HAS_TMA
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
               " [%0], [%1, {%4, %5}], [%2], %3;\n"
               ::"r"(smem_addr(dst)), "l"(reinterpret_cast<uint64_t>(&d)), "r"(smem_addr(bar)), "h"((unsigned short)mask),
                 "r"(c0), "r"(c1)
               : "memory");
#else
  (void)d; (void)dst; (void)bar; (void)mask; (void)c0; (void)c1; __trap();
#endif
}
TS_DEV void tma_load_3d_mc(const TmaDesc &d, void *dst, uint64_t *bar, int mask, int c0, int c1, int c2) {
#ifdef TS_HAS_TMA
  asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
               " [%0], [%1, {%4, %5, %6}], [%2], %3;\n"
               ::"r"(smem_addr(dst)), "l"(reinterpret_cast<uint64_t>(&d)), "r"(smem_addr(bar)), "h"((unsigned short)mask),
                 "r"(c0), "r"(c1), "r"(c2)
               : "memory");
#else
  (void)d; (void)dst; (void)bar; (void)mask; (void)c0; (void)c1; (void)c2; __trap();
#endif
}
TS_DEV void tma_load_4d_mc(const TmaDesc &d, void *dst, uint64_t *bar, int mask, int c0, int c1, int c2, int c3) {
#ifdef TS_HAS_TMA
  asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
               " [%0], [%1, {%4, %5, %6, %7}], [%2], %3;\n"
               ::"r"(smem_addr(dst)), "l"(reinterpret_cast<uint64_t>(&d)), "r"(smem_addr(bar)), "h"((unsigned short)mask),
                 "r"(c0), "r"(c1), "r"(c2), "r"(c3)
               : "memory");
#else
  (void)d; (void)dst; (void)bar; (void)mask; (void)c0; (void)c1; (void)c2; (void)c3; __trap();
#endif
}

/* One arrival on the barrier at `bar`'s offset in each of the cluster's first N blocks
 * (this block included): a stage that is multicast into every block may be refilled only
 * when the consumers of all of them are done with it.  The arrival has the default
 * (release, CTA scope) semantics: what it publishes is that this block's wgmma reads of
 * the stage have completed (wgmma.wait_group before it), which needs no cluster-scope
 * release of this thread's own memory operations. */
template <int N> TS_DEV void mbar_arrive_cluster(uint64_t *bar) {
#ifdef TS_HAS_TMA
#pragma unroll
  for (int r = 0; r < N; ++r) {
    uint32_t remote;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(smem_addr(bar)), "r"(r));
    asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];\n" ::"r"(remote) : "memory");
  }
#else
  (void)bar; __trap();
#endif
}

/* ---- distributed shared memory (T.copy_cluster, T.alloc_cluster_barrier) --------------------
 * The same shared-memory location in block `rank` of this block's cluster, as a generic
 * pointer (mapa); a block outside a cluster launch is its own cluster of one (rank 0). */
template <class T> TS_DEV T *cluster_map(T *p, int rank) {
#ifdef TS_HAS_TMA
  uint64_t r;
  asm volatile("mapa.u64 %0, %1, %2;\n" : "=l"(r) : "l"(p), "r"(rank));
  return reinterpret_cast<T *>(r);
#else
  (void)rank; __trap(); return p;
#endif
}

/* One element stored into block `rank`'s copy of a shared tile (T.copy_cluster's per-thread
 * path). */
template <class T> TS_DEV void dsmem_store(T *dst, T v, int rank) { *cluster_map(dst, rank) = v; }

TS_DEV uint32_t cluster_smem_addr(const void *p, int rank) {
  uint32_t r = 0;
#ifdef TS_HAS_TMA
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(r) : "r"(smem_addr(p)), "r"(rank));
#else
  (void)p; (void)rank; __trap();
#endif
  return r;
}

/* One arrival on block `rank`'s copy of barrier `bar`, releasing at cluster scope: this
 * block's writes into that block's shared memory (dsmem_store, after a block barrier) are
 * visible to the threads that wait for the phase with mbar_wait_cluster. */
TS_DEV void mbar_arrive_remote(uint64_t *bar, int rank) {
#ifdef TS_HAS_TMA
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];\n" ::"r"(cluster_smem_addr(bar, rank))
               : "memory");
#else
  (void)bar; (void)rank; __trap();
#endif
}

/* mbar_wait acquiring at cluster scope: the phase was completed by another block's
 * arrivals (mbar_arrive_remote) and its writes must be seen. */
TS_DEV void mbar_wait_cluster(uint64_t *bar, int parity) {
#ifdef TS_HAS_TMA
  uint32_t done;
  do {
    asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n"
                 "selp.u32 %0, 1, 0, p;\n}\n"
                 : "=r"(done) : "r"(smem_addr(bar)), "r"(parity) : "memory");
  } while (!done);
#else
  (void)bar; (void)parity; __trap();
#endif
}

/* `bytes` (a multiple of 16, both addresses 16-byte aligned) of this block's shared memory at
 * src copied to the same place as dst in block `rank`, by the calling thread alone: one
 * arrival on that block's barrier `bar` announcing the bytes, then a bulk copy that completes
 * them (the receiver waits for the phase).  The tile's writes must be visible to the async
 * proxy first (fence_proxy_async_shared by every writer, then a block barrier). */
TS_DEV void dsmem_bulk_copy(void *dst, const void *src, int bytes, uint64_t *bar, int rank) {
#ifdef TS_HAS_TMA
  uint32_t rbar = cluster_smem_addr(bar, rank);
  asm volatile("mbarrier.arrive.expect_tx.release.cluster.shared::cluster.b64 _, [%0], %1;\n" ::"r"(rbar), "r"(bytes)
               : "memory");
  asm volatile("cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                   cluster_smem_addr(dst, rank)),
               "r"(smem_addr(src)), "r"(bytes), "r"(rbar)
               : "memory");
#else
  (void)dst; (void)src; (void)bytes; (void)bar; (void)rank; __trap();
#endif
}

/* One arrival on bar (announcing `bytes` of transactions when nonzero), then a wait for the
 * phase it arrived in (the arrival's state token: no parity to track).  A synchronous
 * multicast T.copy_cluster: every thread of the block arrives, the leader with the bytes; the
 * wait acquires at cluster scope, as another block's multicast completes the bytes. */
TS_DEV void mbar_arrive_wait(uint64_t *bar, int bytes) {
#ifdef TS_HAS_TMA
  uint64_t state;
  if (bytes)
    asm volatile("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 %0, [%1], %2;\n"
                 : "=l"(state) : "r"(smem_addr(bar)), "r"(bytes) : "memory");
  else
    asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 %0, [%1];\n" : "=l"(state) : "r"(smem_addr(bar)) : "memory");
  uint32_t done;
  do {
    asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.acquire.cluster.shared::cta.b64 p, [%1], %2;\n"
                 "selp.u32 %0, 1, 0, p;\n}\n"
                 : "=r"(done) : "r"(smem_addr(bar)), "l"(state) : "memory");
  } while (!done);
#else
  (void)bar; (void)bytes; __trap();
#endif
}

/* Every thread of the cluster: barrier initialisation visible to the other blocks before
 * their first multicast or remote arrival; and no block leaves while another may still
 * arrive on its barriers. */
TS_DEV void cluster_sync() {
#ifdef TS_HAS_TMA
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
#endif
}

/* T.cluster_arrive / T.cluster_wait: the two halves of cluster_sync (work may go between),
 * and this block's rank in its cluster (T.block_rank_in_cluster); without clusters (before
 * sm_90) a block is its own cluster of one. */
TS_DEV void cluster_arrive() {
#ifdef TS_HAS_TMA
  asm volatile("barrier.cluster.arrive.release;\n" ::: "memory");
#endif
}

TS_DEV void cluster_wait() {
#ifdef TS_HAS_TMA
  asm volatile("barrier.cluster.wait.acquire;\n" ::: "memory");
#endif
}

TS_DEV int block_rank_in_cluster() {
#ifdef TS_HAS_TMA
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return (int)r;
#else
  return 0;
#endif
}

/* Pulls the descriptor into the TMA unit's cache before the first load. */
TS_DEV void tma_prefetch_desc(const TmaDesc &d) {
#ifdef TS_HAS_TMA
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&d)) : "memory");
#else
  (void)d;
#endif
}

/* ---- register reallocation between warpgroups (sm_90a): the producer gives registers
 * back, the consumers take them; both need a register cap at entry
 * (__launch_bounds__(threads, 1)). */
template <int N> TS_DEV void setmaxnreg_dec() {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 900) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
#endif
}
template <int N> TS_DEV void setmaxnreg_inc() {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 900) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
#endif
}

} // namespace ts
