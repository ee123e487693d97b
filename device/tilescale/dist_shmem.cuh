/* dist_shmem.cuh — the NVSHMEM device family (reference/tilescale-distributed.md §1.5), in
 * two implementations with one interface (namespace ts::shmem):
 *
 *   T.putmem_nbi_block(...) --front end--> ts::shmem::putmem_nbi_block(...)
 *       ipc backend (default):     plain copies through the ts_dist_meta table (dist.cuh),
 *                                  signals are system-scope atomics
 *       nvshmem backend (the JIT defines TILESCALE_NVSHMEM, links libnvshmem_device.bc):
 *                                  forwards to nvshmem_* / nvshmemx_*
 *
 * Sizes are BYTES, as in NVSHMEM.  On ipc the _nbi variants complete before they return (a
 * valid implementation: quiet() then only has to order them).  Enum values are NVSHMEM's:
 * CmpType EQ 0 NE 1 GT 2 LE 3 LT 4 GE 5 (not TileScale's BinaryRelation order) and signal
 * ops SIGNAL_SET 9, SIGNAL_ADD 10.  barrier_all/sync_all use the runtime's barrier words
 * at the start of the symmetric heap; like NVSHMEM's they are called by one thread
 * (barrier_all), one warp (_warp) or one block (_block) of every PE.  Collectives work on
 * the world team and count elements of the pointee type.
 *
 * No silent hangs: with TILESCALE_WAIT_TIMEOUT_MS compiled in, every wait that depends on
 * another pe (signal_wait_until, the barriers, the collectives' synchronisation) is our own
 * spin on both backends and traps with the rank, the address and the value seen (for a
 * barrier, the rank that never arrived); only with the timeout off does the nvshmem backend
 * forward them to NVSHMEM. */
#pragma once

#include <tilescale/dist.cuh>

#ifdef TILESCALE_NVSHMEM
#if defined(__CUDACC_RTC__)
/* NVSHMEM's headers under NVRTC: libcu++'s <cuda/std/cstdint> would redeclare the 64-bit
 * names that common.cuh already gave (as long, the width the device library was built
 * with), so its own spellings are renamed away; and the collectives use std:: traits that
 * NVRTC lacks, taken from libcu++. */
#define int64_t ts_cccl_int64_t
#define uint64_t ts_cccl_uint64_t
#include <cuda/std/cstdint>
#undef int64_t
#undef uint64_t
#include <cuda/std/type_traits>
namespace std {
using cuda::std::is_floating_point;
using cuda::std::is_integral;
using cuda::std::is_same;
using cuda::std::is_signed;
using cuda::std::is_unsigned;
} // namespace std
#endif
#include <nvshmem.h>
#include <nvshmemx.h>
#endif

namespace ts {
namespace shmem {

enum CmpType : int { CMP_EQ = 0, CMP_NE = 1, CMP_GT = 2, CMP_LE = 3, CMP_LT = 4, CMP_GE = 5 };
enum SignalOp : int { SIGNAL_SET = 9, SIGNAL_ADD = 10 };
enum Team : int { TEAM_WORLD = 0 };

/* ---- pieces both backends use ------------------------------------------------------------------ */
/* The argument-less barriers: a pairwise counting barrier on the runtime's words, bar =
 * int[num_pes] at the start of the symmetric heap (zeroed by the runtime at init).  For every
 * other pe t this pe adds +1 to its own slot bar[t] and -1 to t's slot bar[me] (through
 * `arrive`); a slot is back to <= 0 once both sides arrived and exactly 0 after every
 * barrier, so it is reusable and a peer can run at most one barrier ahead.  One thread per pe
 * calls it.  With TILESCALE_WAIT_TIMEOUT_MS the spin traps naming the pe that never came. */
template <class Arrive> TS_DEV void pairwise_barrier(const char *what, Arrive arrive) {
  using namespace ts::dist;
  int *bar = runtime_barrier();
  const int n = (int)num_ranks(), me = (int)rank();
  for (int t = 0; t < n; t++)
    if (t != me) arrive(bar, t, me);
#if TILESCALE_WAIT_TIMEOUT_MS > 0
  const uint64_t start = global_timer_ns();
#endif
  for (int t = 0; t < n; t++) {
    if (t == me) continue;
    [[maybe_unused]] int v;
#pragma unroll 1
    while ((v = LdOp<Sem::ACQUIRE, Scope::SYS, false, false>::template run<int>(bar + t)) > 0) {
#if TILESCALE_WAIT_TIMEOUT_MS > 0
      if (global_timer_ns() - start > (uint64_t)TILESCALE_WAIT_TIMEOUT_MS * 1000000ull)
        wait_timeout_peer(what, t, bar + t, v, 0);
#endif
    }
    (void)v;
  }
  (void)what;
}

/* signal_wait_until as our own spin (acquire loads of the local word, as NVSHMEM's are), so
 * a wait that never completes traps with the rank, the address and the value seen. */
TS_DEV uint64_t wait_signal(uint64_t *sig, int cmp, uint64_t v) {
  using namespace ts::dist;
  switch (cmp) {
  case CMP_EQ: return wait<Rel::EQ>(sig, v, -1, "signal_wait_until(EQ)");
  case CMP_NE: return wait<Rel::NE>(sig, v, -1, "signal_wait_until(NE)");
  case CMP_GT: return wait<Rel::GT>(sig, v, -1, "signal_wait_until(GT)");
  case CMP_LE: return wait<Rel::LE>(sig, v, -1, "signal_wait_until(LE)");
  case CMP_LT: return wait<Rel::LT>(sig, v, -1, "signal_wait_until(LT)");
  default: return wait<Rel::GE>(sig, v, -1, "signal_wait_until(GE)");
  }
}

#ifndef TILESCALE_NVSHMEM

TS_DEV int my_pe() { return (int)ts::dist::rank(); }
TS_DEV int n_pes() { return (int)ts::dist::num_ranks(); }

/* Remote pointer of a symmetric address on pe (pe == my_pe: itself). */
template <class T> TS_DEV T *ptr(T *p, int pe) { return ts::dist::remote(p, (int64_t)pe); }

/* ---- put / get (bytes) ------------------------------------------------------------------------ */
/* One thread: 16-byte words when both ends and the size allow, else bytes. */
TS_DEV void copy_thread(char *d, const char *s, size_t n) {
  if ((((uint64_t)d | (uint64_t)s | n) & 15) == 0) {
    for (size_t i = 0; i < n / 16; i++) reinterpret_cast<uint4 *>(d)[i] = reinterpret_cast<const uint4 *>(s)[i];
  } else {
    for (size_t i = 0; i < n; i++) d[i] = s[i];
  }
}
TS_DEV void putmem(void *dest, const void *src, size_t nbytes, int pe) {
  copy_thread(ptr((char *)dest, pe), (const char *)src, nbytes);
}
TS_DEV void getmem(void *dest, const void *src, size_t nbytes, int pe) {
  copy_thread((char *)dest, ptr((const char *)src, pe), nbytes);
}
TS_DEV void putmem_warp(void *dest, const void *src, size_t nbytes, int pe) {
  ts::dist::copy_warp((char *)ptr((char *)dest, pe), (const char *)src, nbytes);
  __syncwarp();
}
TS_DEV void getmem_warp(void *dest, const void *src, size_t nbytes, int pe) {
  ts::dist::copy_warp((char *)dest, ptr((const char *)src, pe), nbytes);
  __syncwarp();
}
TS_DEV void putmem_block(void *dest, const void *src, size_t nbytes, int pe) {
  ts::dist::copy_block((char *)ptr((char *)dest, pe), (const char *)src, nbytes);
  __syncthreads();
}
TS_DEV void getmem_block(void *dest, const void *src, size_t nbytes, int pe) {
  ts::dist::copy_block((char *)dest, ptr((const char *)src, pe), nbytes);
  __syncthreads();
}
TS_DEV void putmem_nbi(void *d, const void *s, size_t n, int pe) { putmem(d, s, n, pe); }
TS_DEV void getmem_nbi(void *d, const void *s, size_t n, int pe) { getmem(d, s, n, pe); }
TS_DEV void putmem_nbi_warp(void *d, const void *s, size_t n, int pe) { putmem_warp(d, s, n, pe); }
TS_DEV void getmem_nbi_warp(void *d, const void *s, size_t n, int pe) { getmem_warp(d, s, n, pe); }
TS_DEV void putmem_nbi_block(void *d, const void *s, size_t n, int pe) { putmem_block(d, s, n, pe); }
TS_DEV void getmem_nbi_block(void *d, const void *s, size_t n, int pe) { getmem_block(d, s, n, pe); }

TS_DEV void int_p(int *dest, int value, int pe) { ts::dist::st<ts::dist::Sem::RELAXED, ts::dist::Scope::SYS>(ptr(dest, pe), value); }

/* ---- ordering ---------------------------------------------------------------------------------- */
TS_DEV void fence() { ts::dist::fence_sys(); }
TS_DEV void quiet() { ts::dist::fence_sys(); }

/* ---- signals (uint64 words) --------------------------------------------------------------------- */
TS_DEV void signal_op(uint64_t *sig_addr, uint64_t signal, int sig_op, int pe) {
  using namespace ts::dist;
  uint64_t *p = ptr(sig_addr, pe);
  if (sig_op == SIGNAL_ADD) atom_add<Sem::RELEASE, Scope::SYS>(p, signal);
  else st<Sem::RELEASE, Scope::SYS>(p, signal);
}

/* The data of a put must be visible before its signal: fence between them (release). */
TS_DEV void putmem_signal(void *d, const void *s, size_t n, uint64_t *sig, uint64_t v, int op, int pe) {
  putmem(d, s, n, pe);
  fence();
  signal_op(sig, v, op, pe);
}
TS_DEV void putmem_signal_nbi(void *d, const void *s, size_t n, uint64_t *sig, uint64_t v, int op, int pe) {
  putmem_signal(d, s, n, sig, v, op, pe);
}
TS_DEV void putmem_signal_warp(void *d, const void *s, size_t n, uint64_t *sig, uint64_t v, int op, int pe) {
  putmem_warp(d, s, n, pe);
  if (ts::dist::lane_id() == 0) {
    fence();
    signal_op(sig, v, op, pe);
  }
  __syncwarp();
}
TS_DEV void putmem_signal_nbi_warp(void *d, const void *s, size_t n, uint64_t *sig, uint64_t v, int op, int pe) {
  putmem_signal_warp(d, s, n, sig, v, op, pe);
}
TS_DEV void putmem_signal_block(void *d, const void *s, size_t n, uint64_t *sig, uint64_t v, int op, int pe) {
  putmem_block(d, s, n, pe);
  if (ts::dist::linear_tid() == 0) {
    fence();
    signal_op(sig, v, op, pe);
  }
  __syncthreads();
}
TS_DEV void putmem_signal_nbi_block(void *d, const void *s, size_t n, uint64_t *sig, uint64_t v, int op, int pe) {
  putmem_signal_block(d, s, n, sig, v, op, pe);
}

/* Waits on a local signal word; returns the value that satisfied the comparison. */
TS_DEV uint64_t signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t value) {
  return wait_signal(sig_addr, cmp, value);
}

/* ---- barriers (the runtime's words at the heap start: one int per pe) -------------------------- */
/* Arrivals are system-scope release atomics through the heap table. */
TS_DEV void barrier_thread(bool need_fence, const char *what) {
  using namespace ts::dist;
  if (need_fence) fence_sys();
  pairwise_barrier(what, [](int *bar, int t, int me) {
    atom_add<Sem::RELEASE, Scope::SYS>(bar + t, 1);
    atom_add<Sem::RELEASE, Scope::SYS>(bar + me, -1, t);
  });
}
TS_DEV void barrier_all() { barrier_thread(true, "barrier_all"); }
TS_DEV void sync_all() { barrier_thread(false, "sync_all"); }
TS_DEV void barrier_all_warp() {
  __syncwarp();
  if (ts::dist::lane_id() == 0) barrier_thread(true, "barrier_all_warp");
  __syncwarp();
}
TS_DEV void sync_all_warp() {
  __syncwarp();
  if (ts::dist::lane_id() == 0) barrier_thread(false, "sync_all_warp");
  __syncwarp();
}
TS_DEV void barrier_all_block() {
  ts::dist::barrier_blocks<true>(ts::dist::runtime_barrier(), "barrier_all_block");
}
TS_DEV void sync_all_block() { ts::dist::barrier_blocks<false>(ts::dist::runtime_barrier(), "sync_all_block"); }

#else /* TILESCALE_NVSHMEM: the real library */

TS_DEV int my_pe() { return nvshmem_my_pe(); }
TS_DEV int n_pes() { return nvshmem_n_pes(); }
template <class T> TS_DEV T *ptr(T *p, int pe) { return (T *)nvshmem_ptr(p, pe); }

/* NVSHMEM's puts read the source as global memory; a source in shared memory (a staged,
 * transposed tile) is copied by our own stores when the peer's heap is mapped here (same
 * node), which is also what NVSHMEM itself would do there.  nvshmem_ptr reads NVSHMEM's
 * device state, which the runtime copies into every module at load and checks
 * (dist_nvshmem_module_init).  A peer that is not mapped (another node) would need the
 * proxy, which cannot read this SM's shared memory: trap with a message instead of sending
 * garbage. */
TS_DEV char *direct(void *d, const void *s, int pe) {
  if (!__isShared(s)) return nullptr;
  char *r = (char *)nvshmem_ptr(d, pe);
  if (!r) {
    printf("tilescale: rank %d: a put from shared memory to pe %d, whose heap is not mapped on this GPU (another "
           "node?): stage the tile in a global buffer (block %d, thread %d)\n",
           nvshmem_my_pe(), pe, (int)blockIdx.x, (int)threadIdx.x);
    __trap();
  }
  return r;
}
TS_DEV void putmem(void *d, const void *s, size_t n, int pe) {
  if (char *r = direct(d, s, pe)) {
    for (size_t i = 0; i < n; i++) r[i] = ((const char *)s)[i];
    return;
  }
  nvshmem_putmem(d, s, n, pe);
}
TS_DEV void putmem_nbi(void *d, const void *s, size_t n, int pe) {
  if (__isShared(s)) return putmem(d, s, n, pe);
  nvshmem_putmem_nbi(d, s, n, pe);
}
TS_DEV void getmem(void *d, const void *s, size_t n, int pe) { nvshmem_getmem(d, s, n, pe); }
TS_DEV void getmem_nbi(void *d, const void *s, size_t n, int pe) { nvshmem_getmem_nbi(d, s, n, pe); }
TS_DEV void putmem_warp(void *d, const void *s, size_t n, int pe) {
  if (char *r = direct(d, s, pe)) {
    ts::dist::copy_warp(r, (const char *)s, n);
    __syncwarp();
    return;
  }
  nvshmemx_putmem_warp(d, s, n, pe);
}
TS_DEV void getmem_warp(void *d, const void *s, size_t n, int pe) { nvshmemx_getmem_warp(d, s, n, pe); }
TS_DEV void putmem_block(void *d, const void *s, size_t n, int pe) {
  if (char *r = direct(d, s, pe)) {
    ts::dist::copy_block(r, (const char *)s, n);
    __syncthreads();
    return;
  }
  nvshmemx_putmem_block(d, s, n, pe);
}
TS_DEV void getmem_block(void *d, const void *s, size_t n, int pe) { nvshmemx_getmem_block(d, s, n, pe); }
TS_DEV void putmem_nbi_warp(void *d, const void *s, size_t n, int pe) {
  if (__isShared(s)) return putmem_warp(d, s, n, pe);
  nvshmemx_putmem_nbi_warp(d, s, n, pe);
}
TS_DEV void getmem_nbi_warp(void *d, const void *s, size_t n, int pe) { nvshmemx_getmem_nbi_warp(d, s, n, pe); }
TS_DEV void putmem_nbi_block(void *d, const void *s, size_t n, int pe) {
  if (__isShared(s)) return putmem_block(d, s, n, pe);
  nvshmemx_putmem_nbi_block(d, s, n, pe);
}
TS_DEV void getmem_nbi_block(void *d, const void *s, size_t n, int pe) { nvshmemx_getmem_nbi_block(d, s, n, pe); }
TS_DEV void int_p(int *dest, int value, int pe) { nvshmem_int_p(dest, value, pe); }
TS_DEV void fence() { nvshmem_fence(); }
TS_DEV void quiet() { nvshmem_quiet(); }
TS_DEV void signal_op(uint64_t *sig, uint64_t v, int op, int pe) { nvshmemx_signal_op(sig, v, op, pe); }
/* A shared-memory source: our copy, then the signal ordered after it. */
TS_DEV bool signal_direct(int group, void *d, const void *s, size_t n, uint64_t *sig, uint64_t v, int op, int pe) {
  char *r = direct(d, s, pe);
  if (!r) return false;
  if (group == 0) putmem(d, s, n, pe);
  else if (group == 1) putmem_warp(d, s, n, pe);
  else putmem_block(d, s, n, pe);
  bool leader = group == 0 || (group == 1 ? ts::dist::lane_id() == 0 : ts::dist::linear_tid() == 0);
  if (leader) {
    ts::dist::fence_sys();
    nvshmemx_signal_op(sig, v, op, pe);
  }
  if (group == 1) __syncwarp();
  if (group == 2) __syncthreads();
  return true;
}
TS_DEV void putmem_signal(void *d, const void *s, size_t n, uint64_t *sig, uint64_t v, int op, int pe) {
  if (signal_direct(0, d, s, n, sig, v, op, pe)) return;
  nvshmem_putmem_signal(d, s, n, sig, v, op, pe);
}
TS_DEV void putmem_signal_nbi(void *d, const void *s, size_t n, uint64_t *sig, uint64_t v, int op, int pe) {
  if (signal_direct(0, d, s, n, sig, v, op, pe)) return;
  nvshmem_putmem_signal_nbi(d, s, n, sig, v, op, pe);
}
TS_DEV void putmem_signal_warp(void *d, const void *s, size_t n, uint64_t *sig, uint64_t v, int op, int pe) {
  if (signal_direct(1, d, s, n, sig, v, op, pe)) return;
  nvshmemx_putmem_signal_warp(d, s, n, sig, v, op, pe);
}
TS_DEV void putmem_signal_nbi_warp(void *d, const void *s, size_t n, uint64_t *sig, uint64_t v, int op, int pe) {
  if (signal_direct(1, d, s, n, sig, v, op, pe)) return;
  nvshmemx_putmem_signal_nbi_warp(d, s, n, sig, v, op, pe);
}
TS_DEV void putmem_signal_block(void *d, const void *s, size_t n, uint64_t *sig, uint64_t v, int op, int pe) {
  if (signal_direct(2, d, s, n, sig, v, op, pe)) return;
  nvshmemx_putmem_signal_block(d, s, n, sig, v, op, pe);
}
TS_DEV void putmem_signal_nbi_block(void *d, const void *s, size_t n, uint64_t *sig, uint64_t v, int op, int pe) {
  if (signal_direct(2, d, s, n, sig, v, op, pe)) return;
  nvshmemx_putmem_signal_nbi_block(d, s, n, sig, v, op, pe);
}
/* With the debug timeout on, every wait that could depend on another pe is ours, so a hang
 * traps with the rank, the address and the value seen instead of spinning silently inside
 * NVSHMEM: signal_wait_until spins on the local word; the barriers are the pairwise barrier
 * on the runtime's words with NVSHMEM atomics as arrivals (they reach pes on other nodes
 * through the proxy), barrier_all completing this pe's puts first (quiet), as NVSHMEM's
 * does; the collectives are puts/gets plus that barrier.  Without the timeout everything
 * forwards to NVSHMEM. */
#if TILESCALE_WAIT_TIMEOUT_MS > 0
TS_DEV uint64_t signal_wait_until(uint64_t *sig, int cmp, uint64_t v) { return wait_signal(sig, cmp, v); }
TS_DEV void barrier_thread(bool quiet_first, const char *what) {
  if (quiet_first) nvshmem_quiet();
  /* NVSHMEM's atomics are relaxed: the fence makes the arrivals release this thread's (and,
   * after the block's barrier, the block's) earlier stores, as the ipc backend's do */
  ts::dist::fence_sys();
  pairwise_barrier(what, [](int *bar, int t, int me) {
    nvshmem_int_atomic_add(bar + t, 1, me);
    nvshmem_int_atomic_add(bar + me, -1, t);
  });
}
TS_DEV void barrier_all() { barrier_thread(true, "barrier_all"); }
TS_DEV void sync_all() { barrier_thread(false, "sync_all"); }
TS_DEV void barrier_all_warp() {
  __syncwarp();
  if (ts::dist::lane_id() == 0) barrier_thread(true, "barrier_all_warp");
  __syncwarp();
}
TS_DEV void sync_all_warp() {
  __syncwarp();
  if (ts::dist::lane_id() == 0) barrier_thread(false, "sync_all_warp");
  __syncwarp();
}
/* Thread 0's quiet completes the whole pe's puts; the block barrier orders the other
 * threads' stores before it. */
TS_DEV void barrier_all_block() {
  __syncthreads();
  if (ts::dist::linear_tid() == 0) barrier_thread(true, "barrier_all_block");
  __syncthreads();
}
TS_DEV void sync_all_block() {
  __syncthreads();
  if (ts::dist::linear_tid() == 0) barrier_thread(false, "sync_all_block");
  __syncthreads();
}
#else
TS_DEV uint64_t signal_wait_until(uint64_t *sig, int cmp, uint64_t v) {
  return nvshmem_signal_wait_until(sig, cmp, v);
}
TS_DEV void barrier_all() { nvshmem_barrier_all(); }
TS_DEV void barrier_all_warp() { nvshmemx_barrier_all_warp(); }
TS_DEV void barrier_all_block() { nvshmemx_barrier_all_block(); }
/* NVSHMEM's sync_all only synchronizes execution; ours also orders memory like the ipc
 * backend's: every calling thread's earlier stores (SM stores to peers included) are
 * visible to the other pes when they leave, and this pe's later loads see theirs (a
 * system-scope fence on each side, which also drops stale L1 lines). */
TS_DEV void sync_all() {
  ts::dist::fence_sys();
  nvshmem_sync_all();
  ts::dist::fence_sys();
}
TS_DEV void sync_all_warp() {
  ts::dist::fence_sys();
  nvshmemx_sync_all_warp();
  ts::dist::fence_sys();
}
TS_DEV void sync_all_block() {
  ts::dist::fence_sys();
  nvshmemx_sync_all_block();
  ts::dist::fence_sys();
}
/* Collectives move bytes: an fcollect/broadcast of n elements is one of n*sizeof(T) bytes. */
template <class T> TS_DEV int fcollect(int team, T *d, const T *s, size_t n) {
  return nvshmem_uint8_fcollect(team, (uint8_t *)d, (const uint8_t *)s, n * sizeof(T));
}
template <class T> TS_DEV int fcollect_warp(int team, T *d, const T *s, size_t n) {
  return nvshmemx_uint8_fcollect_warp(team, (uint8_t *)d, (const uint8_t *)s, n * sizeof(T));
}
template <class T> TS_DEV int fcollect_block(int team, T *d, const T *s, size_t n) {
  return nvshmemx_uint8_fcollect_block(team, (uint8_t *)d, (const uint8_t *)s, n * sizeof(T));
}
template <class T> TS_DEV int broadcast(int team, T *d, const T *s, size_t n, int root) {
  return nvshmem_uint8_broadcast(team, (uint8_t *)d, (const uint8_t *)s, n * sizeof(T), root);
}
template <class T> TS_DEV int broadcast_warp(int team, T *d, const T *s, size_t n, int root) {
  return nvshmemx_uint8_broadcast_warp(team, (uint8_t *)d, (const uint8_t *)s, n * sizeof(T), root);
}
template <class T> TS_DEV int broadcast_block(int team, T *d, const T *s, size_t n, int root) {
  return nvshmemx_uint8_broadcast_block(team, (uint8_t *)d, (const uint8_t *)s, n * sizeof(T), root);
}
TS_DEV int broadcastmem_block(int team, void *d, const void *s, size_t n, int root) {
  return nvshmemx_uint8_broadcast_block(team, (uint8_t *)d, (const uint8_t *)s, n, root);
}
#endif
#endif

/* ---- collectives over our own barriers (ipc, and nvshmem when waits must time out) ----------- */
#if !defined(TILESCALE_NVSHMEM) || TILESCALE_WAIT_TIMEOUT_MS > 0
/* fcollect: every pe's src lands at dest[pe * nelems] on every pe (pushes, then a barrier). */
template <class T> TS_DEV int fcollect(int team, T *dest, const T *src, size_t nelems) {
  (void)team;
  for (int pe = 0; pe < n_pes(); pe++) putmem(dest + (size_t)my_pe() * nelems, src, nelems * sizeof(T), pe);
  barrier_all();
  return 0;
}
template <class T> TS_DEV int fcollect_warp(int team, T *dest, const T *src, size_t nelems) {
  (void)team;
  for (int pe = 0; pe < n_pes(); pe++) putmem_warp(dest + (size_t)my_pe() * nelems, src, nelems * sizeof(T), pe);
  barrier_all_warp();
  return 0;
}
template <class T> TS_DEV int fcollect_block(int team, T *dest, const T *src, size_t nelems) {
  (void)team;
  for (int pe = 0; pe < n_pes(); pe++) putmem_block(dest + (size_t)my_pe() * nelems, src, nelems * sizeof(T), pe);
  barrier_all_block();
  return 0;
}
/* broadcast: root's src into dest on every pe (a barrier so the root's data is ready, a
 * pull, a barrier so the root may reuse src). */
template <class T> TS_DEV int broadcast(int team, T *dest, const T *src, size_t nelems, int root) {
  (void)team;
  barrier_all();
  getmem(dest, src, nelems * sizeof(T), root);
  barrier_all();
  return 0;
}
template <class T> TS_DEV int broadcast_warp(int team, T *dest, const T *src, size_t nelems, int root) {
  (void)team;
  barrier_all_warp();
  getmem_warp(dest, src, nelems * sizeof(T), root);
  barrier_all_warp();
  return 0;
}
template <class T> TS_DEV int broadcast_block(int team, T *dest, const T *src, size_t nelems, int root) {
  (void)team;
  barrier_all_block();
  getmem_block(dest, src, nelems * sizeof(T), root);
  barrier_all_block();
  return 0;
}
TS_DEV int broadcastmem_block(int team, void *dest, const void *src, size_t nbytes, int root) {
  return broadcast_block(team, (char *)dest, (const char *)src, nbytes, root);
}
#endif

} // namespace shmem
} // namespace ts
