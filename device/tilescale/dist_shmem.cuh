/* dist_shmem.cuh — the NVSHMEM device family (reference/tilescale-distributed.md §1.5) on the
 * `ipc` backend: within one node every peer's heap is mapped, so puts and gets are plain
 * copies through the ts_dist_meta table (dist.cuh) and signals are system-scope atomics.
 *
 *   T.putmem_nbi_block(...) --codegen--> ts::shmem::putmem_nbi_block(...)   (ipc backend)
 *                                   or   nvshmemx_putmem_nbi_block(...)     (nvshmem backend)
 *
 * Sizes are BYTES, as in NVSHMEM.  The _nbi variants complete before they return (a valid
 * implementation: quiet() then only has to order them).  Enum values are NVSHMEM's: CmpType
 * EQ 0 NE 1 GT 2 LE 3 LT 4 GE 5 (not TileScale's BinaryRelation order) and signal ops
 * SIGNAL_SET 9, SIGNAL_ADD 10.  Not here yet: barrier_all / sync_all (they need a symmetric
 * barrier buffer from the runtime) and the collectives (fcollect, broadcast). */
#pragma once

#include <tilescale/dist.cuh>

namespace ts {
namespace shmem {

enum CmpType : int { CMP_EQ = 0, CMP_NE = 1, CMP_GT = 2, CMP_LE = 3, CMP_LT = 4, CMP_GE = 5 };
enum SignalOp : int { SIGNAL_SET = 9, SIGNAL_ADD = 10 };

TS_DEV int my_pe() { return (int)ts::dist::rank(); }
TS_DEV int n_pes() { return (int)ts::dist::num_ranks(); }

/* Remote pointer of a symmetric address on pe (pe == my_pe: itself). */
template <class T> TS_DEV T *ptr(T *p, int pe) { return ts::dist::remote(p, (int64_t)pe); }

/* ---- put / get (bytes) ------------------------------------------------------------------------ */
TS_DEV void putmem(void *dest, const void *src, size_t nbytes, int pe) {
  char *d = ptr((char *)dest, pe);
  for (size_t i = 0; i < nbytes; i++) d[i] = ((const char *)src)[i];
}
TS_DEV void getmem(void *dest, const void *src, size_t nbytes, int pe) {
  const char *s = ptr((const char *)src, pe);
  for (size_t i = 0; i < nbytes; i++) ((char *)dest)[i] = s[i];
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
  using namespace ts::dist;
  switch (cmp) {
  case CMP_EQ: return wait_eq(sig_addr, value);
  case CMP_NE: return wait_ne(sig_addr, value);
  case CMP_GT: return wait_gt(sig_addr, value);
  case CMP_LE: return wait_le(sig_addr, value);
  case CMP_LT: return wait_lt(sig_addr, value);
  default: return wait_ge(sig_addr, value);
  }
}

} // namespace shmem
} // namespace ts
