/* dist.cuh — in-kernel communication between GPUs (DESIGN.md §7; the TileScale IPC family,
 * reference/tilescale-distributed.md §1.2–§1.4).
 *
 *   generated kernel --#include--> tilescale/dist.cuh (embedded for NVRTC)
 *   host: ts_dist_module_attach uploads ts_dist_meta = {rank, world, heap base of every pe}
 *
 * Remote addressing: every rank's symmetric heap holds the same objects at the same offsets,
 * so pe's copy of a local object p is base[pe] + (p - base[rank]); a pe < 0 means "local".
 * Everything is in namespace ts::dist:
 *   rank/num_ranks/remote            the table
 *   ld/st<Sem, Scope, NC, NA>        every memory-model combination PTX can express; the
 *                                    others are compile errors that say why
 *   wait_eq..wait_lt                 32- and 64-bit flags (any integer type), with an optional
 *                                    timeout (TILESCALE_WAIT_TIMEOUT_MS) that traps with the
 *                                    rank, the flag address and the value seen
 *   fence_cta/gpu/sys, atom_add<Sem, Scope>, warp_any/all, shuffle_elect<N>
 *   put/get_warp, put/get_block      copies local or remote; the size is a run-time element
 *                                    count, vector width chosen by run-time alignment
 *   barrier_blocks/sync_blocks       cross-rank barrier on an int32[num_ranks] symmetric buffer
 *   sync_grid, *_barrier_gpu         barriers across the blocks of one GPU
 * Sizes of the remote-translation table never depend on the kernel: 1024 slots (the host
 * checks it holds 2 + world). */
#pragma once

#include <tilescale/common.cuh>

/* Debug timeout for waits and barriers, in milliseconds (0: wait forever).  The runtime
 * defines it from $TILESCALE_WAIT_TIMEOUT_MS when it compiles a distributed kernel. */
#ifndef TILESCALE_WAIT_TIMEOUT_MS
#define TILESCALE_WAIT_TIMEOUT_MS 0
#endif

#define TS_DIST_META_SLOTS 1024

/* The table lives in every distributed module (a definition: the block form of extern "C"
 * defines, the one-line form would only declare).  C linkage keeps the symbol name fixed
 * for cuModuleGetGlobal. */
extern "C" {
__constant__ uint64_t ts_dist_meta[TS_DIST_META_SLOTS];
}

namespace ts {
namespace dist {

/* Encodings match TileLang's (scope cta 0, gpu 1, sys 2; sem weak 0 .. relaxed 4). */
enum class Scope : int { CTA = 0, GPU = 1, SYS = 2 };
enum class Sem : int { WEAK = 0, VOLATILE = 1, ACQUIRE = 2, RELEASE = 3, RELAXED = 4 };
/* TileScale's BinaryRelation order (EQ NE GE LE GT LT); NVSHMEM's CmpType differs
 * (dist_shmem.cuh converts). */
enum class Rel : int { EQ = 0, NE = 1, GE = 2, LE = 3, GT = 4, LT = 5 };

/* ---- the table ----------------------------------------------------------------------------- */
TS_DEV uint64_t rank() { return ts_dist_meta[0]; }
TS_DEV uint64_t num_ranks() { return ts_dist_meta[1]; }
TS_DEV uint64_t remote_base(uint64_t pe) { return ts_dist_meta[2 + pe]; }
/* T.get_rank() / T.get_num_ranks() as ints: generated code does index arithmetic with them,
 * where an unsigned 64-bit value would turn `rank - 1 < 0` into a wrap-around. */
TS_DEV int get_rank() { return (int)ts_dist_meta[0]; }
TS_DEV int get_num_ranks() { return (int)ts_dist_meta[1]; }

/* The runtime keeps the first TS_DIST_RUNTIME_BYTES of every symmetric heap for itself
 * (zeroed at init): the barrier words of the argument-less NVSHMEM-style barriers. */
#define TS_DIST_RUNTIME_BYTES 4096
TS_DEV int *runtime_barrier() { return reinterpret_cast<int *>(ts_dist_meta[2 + ts_dist_meta[0]]); }

/* pe's copy of the symmetric object at p; pe < 0: p itself. */
template <class T> TS_DEV T *remote(T *p, int64_t pe) {
  if (pe < 0) return p;
  return reinterpret_cast<T *>(remote_base((uint64_t)pe) + ((uint64_t)p - remote_base(rank())));
}
TS_DEV uint64_t remote(uint64_t p, int64_t pe) {
  return pe < 0 ? p : remote_base((uint64_t)pe) + (p - remote_base(rank()));
}

/* ---- time, for the debug timeouts ------------------------------------------------------------- */
TS_DEV uint64_t global_timer_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

/* ---- fences --------------------------------------------------------------------------------- */
TS_DEV void fence_cta() { asm volatile("fence.acq_rel.cta;" ::: "memory"); }
TS_DEV void fence_gpu() { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }
TS_DEV void fence_sys() { asm volatile("fence.acq_rel.sys;" ::: "memory"); }
/* After a wait: the async proxy (TMA loads) sees the global data the flag published. */
TS_DEV void fence_async_global() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("fence.proxy.async.global;" ::: "memory");
#endif
}

/* ---- ld / st -------------------------------------------------------------------------------- */
/* Invalid combinations land on the primary templates and fail with a message. */
template <Sem S, Scope C, bool NA> struct StOp {
  template <class T> static TS_DEV void run(T *, T) {
    static_assert(always_false<T>::value || S != Sem::ACQUIRE,
                  "ts::dist::st: a store cannot have acquire semantics (use release)");
    static_assert(always_false<T>::value || S != Sem::VOLATILE || !NA,
                  "ts::dist::st: volatile stores take no L1::no_allocate hint (na=True)");
    static_assert(always_false<T>::value || S == Sem::ACQUIRE || (S == Sem::VOLATILE && NA),
                  "ts::dist::st: unsupported combination");
  }
};
template <Sem S, Scope C, bool NC, bool NA> struct LdOp {
  template <class T> static TS_DEV T run(const T *) {
    static_assert(always_false<T>::value || S != Sem::RELEASE,
                  "ts::dist::ld: a load cannot have release semantics (use acquire)");
    static_assert(always_false<T>::value || !NC || S == Sem::WEAK || S == Sem::RELEASE,
                  "ts::dist::ld: non-coherent loads (nc=True) are weak: they cannot be volatile, relaxed or acquire");
    static_assert(always_false<T>::value || S != Sem::VOLATILE || !NA || NC,
                  "ts::dist::ld: volatile loads take no L1::no_allocate hint (na=True)");
    static_assert(always_false<T>::value || S == Sem::RELEASE || (NC && S != Sem::WEAK) ||
                      (S == Sem::VOLATILE && NA),
                  "ts::dist::ld: unsupported combination");
    return T();
  }
};

/* Weak and volatile accesses have no scope in PTX: any Scope is accepted and ignored.
 * Generic addressing (no .global) so that shared-memory flags work too; nc needs .global. */
#define TS_DIST_ST_SPEC(SEM, SCOPE, NA, PFX)                                                     \
  template <> struct StOp<Sem::SEM, Scope::SCOPE, NA> {                                          \
    template <class T> static TS_DEV void run(T *p, T v) { TS_PTX_ST_BODY(PFX, "ts::dist::st") }                \
  };
#define TS_DIST_LD_SPEC(SEM, SCOPE, NC, NA, PFX)                                                 \
  template <> struct LdOp<Sem::SEM, Scope::SCOPE, NC, NA> {                                      \
    template <class T> static TS_DEV T run(const T *p) { TS_PTX_LD_BODY(PFX, "ts::dist::ld") }                  \
  };
#define TS_DIST_EACH_SCOPE(M, ...) M(__VA_ARGS__, CTA) M(__VA_ARGS__, GPU) M(__VA_ARGS__, SYS)

#define TS_DIST_ST_WEAK(NA, PFX, SCOPE) TS_DIST_ST_SPEC(WEAK, SCOPE, NA, PFX)
#define TS_DIST_ST_VOL(PFX, SCOPE) TS_DIST_ST_SPEC(VOLATILE, SCOPE, false, PFX)
#define TS_DIST_LD_WEAK(NC, NA, PFX, SCOPE) TS_DIST_LD_SPEC(WEAK, SCOPE, NC, NA, PFX)
#define TS_DIST_LD_VOL(PFX, SCOPE) TS_DIST_LD_SPEC(VOLATILE, SCOPE, false, false, PFX)
TS_DIST_EACH_SCOPE(TS_DIST_ST_WEAK, false, "st.weak")
TS_DIST_EACH_SCOPE(TS_DIST_ST_WEAK, true, "st.weak.global.L1::no_allocate")
TS_DIST_EACH_SCOPE(TS_DIST_ST_VOL, "st.volatile")
TS_DIST_EACH_SCOPE(TS_DIST_LD_WEAK, false, false, "ld.weak")
TS_DIST_EACH_SCOPE(TS_DIST_LD_WEAK, false, true, "ld.weak.global.L1::no_allocate")
TS_DIST_EACH_SCOPE(TS_DIST_LD_WEAK, true, false, "ld.global.nc")
TS_DIST_EACH_SCOPE(TS_DIST_LD_WEAK, true, true, "ld.global.nc.L1::no_allocate")
TS_DIST_EACH_SCOPE(TS_DIST_LD_VOL, "ld.volatile")

TS_DIST_ST_SPEC(RELAXED, CTA, false, "st.relaxed.cta")
TS_DIST_ST_SPEC(RELAXED, GPU, false, "st.relaxed.gpu")
TS_DIST_ST_SPEC(RELAXED, SYS, false, "st.relaxed.sys")
TS_DIST_ST_SPEC(RELAXED, CTA, true, "st.relaxed.cta.global.L1::no_allocate")
TS_DIST_ST_SPEC(RELAXED, GPU, true, "st.relaxed.gpu.global.L1::no_allocate")
TS_DIST_ST_SPEC(RELAXED, SYS, true, "st.relaxed.sys.global.L1::no_allocate")
TS_DIST_ST_SPEC(RELEASE, CTA, false, "st.release.cta")
TS_DIST_ST_SPEC(RELEASE, GPU, false, "st.release.gpu")
TS_DIST_ST_SPEC(RELEASE, SYS, false, "st.release.sys")
TS_DIST_ST_SPEC(RELEASE, CTA, true, "st.release.cta.global.L1::no_allocate")
TS_DIST_ST_SPEC(RELEASE, GPU, true, "st.release.gpu.global.L1::no_allocate")
TS_DIST_ST_SPEC(RELEASE, SYS, true, "st.release.sys.global.L1::no_allocate")
TS_DIST_LD_SPEC(RELAXED, CTA, false, false, "ld.relaxed.cta")
TS_DIST_LD_SPEC(RELAXED, GPU, false, false, "ld.relaxed.gpu")
TS_DIST_LD_SPEC(RELAXED, SYS, false, false, "ld.relaxed.sys")
TS_DIST_LD_SPEC(RELAXED, CTA, false, true, "ld.relaxed.cta.global.L1::no_allocate")
TS_DIST_LD_SPEC(RELAXED, GPU, false, true, "ld.relaxed.gpu.global.L1::no_allocate")
TS_DIST_LD_SPEC(RELAXED, SYS, false, true, "ld.relaxed.sys.global.L1::no_allocate")
TS_DIST_LD_SPEC(ACQUIRE, CTA, false, false, "ld.acquire.cta")
TS_DIST_LD_SPEC(ACQUIRE, GPU, false, false, "ld.acquire.gpu")
TS_DIST_LD_SPEC(ACQUIRE, SYS, false, false, "ld.acquire.sys")
TS_DIST_LD_SPEC(ACQUIRE, CTA, false, true, "ld.acquire.cta.global.L1::no_allocate")
TS_DIST_LD_SPEC(ACQUIRE, GPU, false, true, "ld.acquire.gpu.global.L1::no_allocate")
TS_DIST_LD_SPEC(ACQUIRE, SYS, false, true, "ld.acquire.sys.global.L1::no_allocate")

/* The forms generated code calls.  pe selects a peer's copy (-1: local). */
template <Sem S = Sem::WEAK, Scope C = Scope::GPU, bool NC = false, bool NA = false, class T>
TS_DEV T ld(const T *p, int64_t pe = -1) {
  return LdOp<S, C, NC, NA>::template run<T>(remote(p, pe));
}
template <Sem S = Sem::WEAK, Scope C = Scope::GPU, bool NC = false, bool NA = false, class T>
TS_DEV void ld(const T *p, T &out, int64_t pe = -1) {
  out = LdOp<S, C, NC, NA>::template run<T>(remote(p, pe));
}
template <Sem S = Sem::WEAK, Scope C = Scope::GPU, bool NA = false, class T, class V>
TS_DEV void st(T *p, V value, int64_t pe = -1) {
  StOp<S, C, NA>::template run<T>(remote(p, pe), (T)value);
}

/* ---- waits ----------------------------------------------------------------------------------- */
template <Rel R, class T> TS_DEV bool holds(T v, T e) {
  if constexpr (R == Rel::EQ) return v == e;
  else if constexpr (R == Rel::NE) return v != e;
  else if constexpr (R == Rel::GE) return v >= e;
  else if constexpr (R == Rel::LE) return v <= e;
  else if constexpr (R == Rel::GT) return v > e;
  else return v < e;
}

TS_DEV const char *rel_name(Rel r) {
  switch (r) {
  case Rel::EQ: return "eq";
  case Rel::NE: return "ne";
  case Rel::GE: return "ge";
  case Rel::LE: return "le";
  case Rel::GT: return "gt";
  default: return "lt";
  }
}

/* The trap of a wait that can never complete: says who waited for what, then stops the
 * kernel so the launch fails (and the launcher reports the rank) instead of hanging. */
TS_DEV void wait_timeout(const char *what, const void *addr, long long seen, long long expected) {
  printf("tilescale: rank %d: %s timed out after %d ms: flag at %p holds %lld, expected %lld (block %d, thread %d)\n",
         (int)rank(), what, (int)TILESCALE_WAIT_TIMEOUT_MS, addr, seen, expected, (int)blockIdx.x,
         (int)threadIdx.x);
  __trap();
}
/* The same for a barrier, naming the peer that never arrived. */
TS_DEV void wait_timeout_peer(const char *what, int peer, const void *addr, long long seen,
                              long long expected) {
  printf("tilescale: rank %d: %s timed out after %d ms waiting for rank %d: flag at %p holds %lld, "
         "expected %lld (block %d, thread %d)\n",
         (int)rank(), what, (int)TILESCALE_WAIT_TIMEOUT_MS, peer, addr, seen, expected, (int)blockIdx.x,
         (int)threadIdx.x);
  __trap();
}

/* Spins with acquire loads at system scope: flags are written by peers over NVLink, and the
 * data they publish must be visible once the flag is.  `what` names the wait in the timeout
 * message (default "wait_<rel>"). */
template <Rel R, class T, class E>
TS_DEV T wait(const T *flag, E expected_in, int64_t pe = -1, [[maybe_unused]] const char *what = nullptr) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "ts::dist::wait: flags are 32- or 64-bit integers");
  const T expected = (T)expected_in;
  const T *p = remote(flag, pe);
#if TILESCALE_WAIT_TIMEOUT_MS > 0
  const uint64_t start = global_timer_ns();
#endif
  T v;
#pragma unroll 1
  while (!holds<R>(v = LdOp<Sem::ACQUIRE, Scope::SYS, false, false>::template run<T>(p), expected)) {
#if TILESCALE_WAIT_TIMEOUT_MS > 0
    if (global_timer_ns() - start > (uint64_t)TILESCALE_WAIT_TIMEOUT_MS * 1000000ull) {
      char name[8] = {'w', 'a', 'i', 't', '_', 0, 0, 0};
      const char *n = rel_name(R);
      name[5] = n[0], name[6] = n[1];
      wait_timeout(what ? what : name, p, (long long)v, (long long)expected);
    }
#endif
  }
  return v;
}

template <class T, class E> TS_DEV T wait_eq(const T *f, E e, int64_t pe = -1) { return wait<Rel::EQ>(f, e, pe); }
template <class T, class E> TS_DEV T wait_ne(const T *f, E e, int64_t pe = -1) { return wait<Rel::NE>(f, e, pe); }
template <class T, class E> TS_DEV T wait_ge(const T *f, E e, int64_t pe = -1) { return wait<Rel::GE>(f, e, pe); }
template <class T, class E> TS_DEV T wait_le(const T *f, E e, int64_t pe = -1) { return wait<Rel::LE>(f, e, pe); }
template <class T, class E> TS_DEV T wait_gt(const T *f, E e, int64_t pe = -1) { return wait<Rel::GT>(f, e, pe); }
template <class T, class E> TS_DEV T wait_lt(const T *f, E e, int64_t pe = -1) { return wait<Rel::LT>(f, e, pe); }

/* ---- atomics --------------------------------------------------------------------------------- */
#define TS_DIST_ATOM_BODY(SEMS, SCOPES)                                                          \
  if constexpr (sizeof(T) == 4) {                                                                \
    unsigned int old, b = ts::bit_cast<unsigned int>(v);                                         \
    asm volatile("atom.add" SEMS SCOPES ".u32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(b) : "memory"); \
    return ts::bit_cast<T>(old);                                                                 \
  } else {                                                                                       \
    static_assert(sizeof(T) == 8, "ts::dist::atom_add works on 32- and 64-bit integers");        \
    unsigned long long old, b = ts::bit_cast<unsigned long long>(v);                             \
    asm volatile("atom.add" SEMS SCOPES ".u64 %0, [%1], %2;" : "=l"(old) : "l"(p), "l"(b) : "memory"); \
    return ts::bit_cast<T>(old);                                                                 \
  }

/* atom.add's semantics: relaxed, acquire, release or acq_rel (TileLang names them by Sem;
 * weak/volatile mean relaxed).  Two's complement makes .u32/.u64 right for signed values. */
template <Sem S, Scope C> struct AtomAdd {
  template <class T> static TS_DEV T run(T *p, T v) {
    if constexpr (C == Scope::CTA) {
      if constexpr (S == Sem::ACQUIRE) { TS_DIST_ATOM_BODY(".acquire", ".cta") }
      else if constexpr (S == Sem::RELEASE) { TS_DIST_ATOM_BODY(".release", ".cta") }
      else { TS_DIST_ATOM_BODY(".relaxed", ".cta") }
    } else if constexpr (C == Scope::GPU) {
      if constexpr (S == Sem::ACQUIRE) { TS_DIST_ATOM_BODY(".acquire", ".gpu") }
      else if constexpr (S == Sem::RELEASE) { TS_DIST_ATOM_BODY(".release", ".gpu") }
      else { TS_DIST_ATOM_BODY(".relaxed", ".gpu") }
    } else {
      if constexpr (S == Sem::ACQUIRE) { TS_DIST_ATOM_BODY(".acquire", ".sys") }
      else if constexpr (S == Sem::RELEASE) { TS_DIST_ATOM_BODY(".release", ".sys") }
      else { TS_DIST_ATOM_BODY(".relaxed", ".sys") }
    }
  }
};
/* Acquire-and-release in one: TileScale's "acq_rel". */
template <Scope C> struct AtomAddAcqRel {
  template <class T> static TS_DEV T run(T *p, T v) {
    if constexpr (C == Scope::CTA) { TS_DIST_ATOM_BODY(".acq_rel", ".cta") }
    else if constexpr (C == Scope::GPU) { TS_DIST_ATOM_BODY(".acq_rel", ".gpu") }
    else { TS_DIST_ATOM_BODY(".acq_rel", ".sys") }
  }
};

template <Sem S = Sem::RELAXED, Scope C = Scope::GPU, class T, class V>
TS_DEV T atom_add(T *p, V value, int64_t pe = -1) {
  return AtomAdd<S, C>::template run<T>(remote(p, pe), (T)value);
}
template <Scope C = Scope::GPU, class T, class V> TS_DEV T atom_add_acq_rel(T *p, V value, int64_t pe = -1) {
  return AtomAddAcqRel<C>::template run<T>(remote(p, pe), (T)value);
}

/* ---- warp-level helpers ---------------------------------------------------------------------- */
TS_DEV bool warp_any(bool v, unsigned mask = 0xffffffffu) { return __any_sync(mask, v); }
TS_DEV bool warp_all(bool v, unsigned mask = 0xffffffffu) { return __all_sync(mask, v); }

TS_DEV int lane_id() {
  int l;
  asm volatile("mov.s32 %0, %%laneid;" : "=r"(l));
  return l;
}

TS_DEV unsigned linear_tid() { return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z); }
TS_DEV unsigned block_threads() { return blockDim.x * blockDim.y * blockDim.z; }

/* One lane of the converged warp: elect.sync on sm_90+, the lowest active lane before. */
TS_DEV bool elect_one() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  unsigned pred = 0;
  asm volatile("{\n .reg .pred p;\n elect.sync _|p, 0xffffffff;\n selp.u32 %0, 1, 0, p;\n}" : "=r"(pred));
  return pred != 0;
#else
  return lane_id() == __ffs(__activemask()) - 1;
#endif
}

/* True on exactly one thread of each group of N threads (N a multiple of 32; 0: the whole
 * block): the first warp of the group elects one lane.  Works on every architecture, unlike
 * TileScale's sm_90-only version. */
template <int N> TS_DEV bool shuffle_elect() {
  static_assert(N == 0 || N % 32 == 0, "ts::dist::shuffle_elect: the group size must be 0 or a multiple of 32");
  unsigned warp = __shfl_sync(0xffffffffu, linear_tid() / 32, 0);
  bool first = N == 0 ? warp == 0 : warp % (unsigned)(N / 32 > 0 ? N / 32 : 1) == 0;
  return first && elect_one();
}

/* ---- copies ----------------------------------------------------------------------------------- */
/* A warp copies n elements: 16-byte words when both ends are 16-byte aligned and the size
 * divides (checked at run time, unlike TileScale's unchecked aggressive vectorisation), else
 * element by element.  UNROLL independent loads are in flight per lane before the stores. */
template <int UNROLL = 4, class T> TS_DEV void copy_warp(T *dst, const T *src, uint64_t n) {
  const int lane = lane_id();
  const uint64_t bytes = n * sizeof(T);
  if ((((uint64_t)dst | (uint64_t)src | bytes) & 15) == 0) {
    uint4 *d = reinterpret_cast<uint4 *>(dst);
    const uint4 *s = reinterpret_cast<const uint4 *>(src);
    const uint64_t words = bytes / 16;
    uint64_t i = lane;
    for (; i + 32 * (UNROLL - 1) < words; i += 32 * UNROLL) {
      uint4 v[UNROLL];
#pragma unroll
      for (int u = 0; u < UNROLL; u++) v[u] = s[i + 32 * u];
#pragma unroll
      for (int u = 0; u < UNROLL; u++) d[i + 32 * u] = v[u];
    }
    for (; i < words; i += 32) d[i] = s[i];
  } else {
    for (uint64_t i = lane; i < n; i += 32) dst[i] = src[i];
  }
}

/* The whole block copies n elements; the widest of 16/8/4 bytes the alignment allows. */
template <class T> TS_DEV void copy_block(T *dst, const T *src, uint64_t n) {
  const unsigned tid = linear_tid(), nt = block_threads();
  const uint64_t bytes = n * sizeof(T);
  const uint64_t mis = (uint64_t)dst | (uint64_t)src | bytes;
  if ((mis & 15) == 0) {
    for (uint64_t i = tid; i < bytes / 16; i += nt)
      reinterpret_cast<uint4 *>(dst)[i] = reinterpret_cast<const uint4 *>(src)[i];
  } else if ((mis & 7) == 0) {
    for (uint64_t i = tid; i < bytes / 8; i += nt)
      reinterpret_cast<uint2 *>(dst)[i] = reinterpret_cast<const uint2 *>(src)[i];
  } else if ((mis & 3) == 0) {
    for (uint64_t i = tid; i < bytes / 4; i += nt)
      reinterpret_cast<unsigned *>(dst)[i] = reinterpret_cast<const unsigned *>(src)[i];
  } else {
    for (uint64_t i = tid; i < n; i += nt) dst[i] = src[i];
  }
}

/* put: src local, dst on dst_pe; get: src on src_pe, dst local (pe -1: both local). */
template <int UNROLL = 4, class T> TS_DEV void put_warp(const T *src, T *dst, uint64_t n, int64_t dst_pe = -1) {
  copy_warp<UNROLL>(remote(dst, dst_pe), src, n);
  __syncwarp();
}
template <int UNROLL = 4, class T> TS_DEV void get_warp(const T *src, T *dst, uint64_t n, int64_t src_pe = -1) {
  copy_warp<UNROLL>(dst, remote(src, src_pe), n);
  __syncwarp();
}
/* The block forms end with a block barrier and the warp forms with a warp barrier: the
 * compiler's barrier insertion cannot see the writes an extern call makes, and a shared
 * destination is usually read by other threads right after. */
template <class T> TS_DEV void put_block(const T *src, T *dst, uint64_t n, int64_t dst_pe = -1) {
  copy_block(remote(dst, dst_pe), src, n);
  __syncthreads();
}
template <class T> TS_DEV void get_block(const T *src, T *dst, uint64_t n, int64_t src_pe = -1) {
  copy_block(dst, remote(src, src_pe), n);
  __syncthreads();
}

/* ---- cross-rank barrier ----------------------------------------------------------------------- */
/* bar: int32[num_ranks] in the symmetric heap, zero at first use and zero again after every
 * barrier.  For every other rank t, this rank adds +1 to its own slot bar_me[t] and -1 to
 * t's slot bar_t[me]; a slot returns to <= 0 once both sides of the pair have arrived, so
 * the barrier is reusable.  Any block size works (threads loop over the ranks). */
template <bool NeedFence = true>
TS_DEV void barrier_blocks(int *bar, [[maybe_unused]] const char *what = nullptr) {
  const unsigned tid = linear_tid(), nt = block_threads();
  const int n = (int)num_ranks(), me = (int)rank();
  if (NeedFence) fence_sys();
  __syncthreads();
  for (int t = (int)tid; t < n; t += (int)nt) {
    if (t == me) continue;
    atom_add<Sem::RELEASE, Scope::SYS>(bar + t, 1);
    atom_add<Sem::RELEASE, Scope::SYS>(bar + me, -1, t);
  }
#if TILESCALE_WAIT_TIMEOUT_MS > 0
  const uint64_t start = global_timer_ns();
#endif
  for (int t = (int)tid; t < n; t += (int)nt) {
    if (t == me) continue;
    [[maybe_unused]] int v;
#pragma unroll 1
    while ((v = LdOp<Sem::ACQUIRE, Scope::SYS, false, false>::template run<int>(bar + t)) > 0) {
#if TILESCALE_WAIT_TIMEOUT_MS > 0
      if (global_timer_ns() - start > (uint64_t)TILESCALE_WAIT_TIMEOUT_MS * 1000000ull)
        wait_timeout_peer(what ? what : NeedFence ? "barrier_blocks" : "sync_blocks", t, bar + t, v, 0);
#endif
    }
    (void)v;
  }
  __syncthreads();
}
template <class T> TS_DEV void barrier_blocks(T *bar) { barrier_blocks<true>(reinterpret_cast<int *>(bar)); }
template <class T> TS_DEV void sync_blocks(T *bar) { barrier_blocks<false>(reinterpret_cast<int *>(bar)); }

/* ---- barriers across the blocks of one GPU ----------------------------------------------------- */
/* Reusable grid barrier on one zero-initialised uint32 (cooperative launch guarantees the
 * blocks are co-resident): block 0 adds 0x80000000 - (blocks - 1), every other block adds 1,
 * so each round adds exactly 0x80000000 and flips bit 31, which every block waits for. */
TS_DEV void sync_grid(unsigned *bar) {
  __syncthreads();
  if (linear_tid() == 0) {
    const unsigned nb = gridDim.x * gridDim.y * gridDim.z;
    const bool master = blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0;
    const unsigned add = master ? 0x80000000u - (nb - 1) : 1u;
    fence_gpu();
    unsigned old = atom_add<Sem::RELEASE, Scope::GPU>(bar, add);
#if TILESCALE_WAIT_TIMEOUT_MS > 0
    const uint64_t start = global_timer_ns();
#endif
    [[maybe_unused]] unsigned v;
#pragma unroll 1
    while ((((v = LdOp<Sem::ACQUIRE, Scope::GPU, false, false>::template run<unsigned>(bar)) ^ old) & 0x80000000u) ==
           0) {
#if TILESCALE_WAIT_TIMEOUT_MS > 0
      if (global_timer_ns() - start > (uint64_t)TILESCALE_WAIT_TIMEOUT_MS * 1000000ull)
        wait_timeout("sync_grid (are all blocks co-resident? use a cooperative launch)", bar, v, 0);
#endif
    }
    (void)v;
  }
  __syncthreads();
}

/* T.sync_grid() takes no buffer: one word per module, zero at load, reusable (each round
 * flips bit 31 back and forth). */
__device__ unsigned ts_dist_grid_barrier;
TS_DEV void sync_grid() { sync_grid(&ts_dist_grid_barrier); }

/* TileScale's GPU barrier set on a zero-initialised uint32: init_barrier_gpu(bar, expected)
 * adds 0x80000000 - expected (an atomic add rather than a store, so arrivals that come
 * before the init still count); each arrive adds 1; bit 31 is set once `expected` blocks
 * arrived.  One-shot, as in TileScale. */
TS_DEV void init_barrier_gpu(unsigned *bar, unsigned expected) {
  if (linear_tid() == 0 && blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0)
    atom_add<Sem::RELEASE, Scope::GPU>(bar, 0x80000000u - expected);
}
TS_DEV void wait_barrier_gpu(unsigned *bar) {
  if (linear_tid() == 0) {
#if TILESCALE_WAIT_TIMEOUT_MS > 0
    const uint64_t start = global_timer_ns();
#endif
    [[maybe_unused]] unsigned v;
#pragma unroll 1
    while (((v = LdOp<Sem::ACQUIRE, Scope::GPU, false, false>::template run<unsigned>(bar)) & 0x80000000u) == 0) {
#if TILESCALE_WAIT_TIMEOUT_MS > 0
      if (global_timer_ns() - start > (uint64_t)TILESCALE_WAIT_TIMEOUT_MS * 1000000ull)
        wait_timeout("wait_barrier_gpu", bar, v, 0x80000000ll);
#endif
    }
    (void)v;
  }
  __syncthreads();
}
/* Forward declarations of the counting forms below, for the one-argument sync. */
TS_DEV void arrive_barrier_gpu(unsigned *bar);
TS_DEV void sync_barrier_gpu(unsigned *bar) {
  arrive_barrier_gpu(bar);
  wait_barrier_gpu(bar);
}

/* One-shot counting barrier: init (any one thread, before anyone arrives; memory from the
 * symmetric heap is already zero), arrive (+1 per block, release), wait (until `expected`
 * arrivals, acquire).  sync_barrier_gpu = arrive + wait. */
TS_DEV void init_barrier_gpu(unsigned *bar) { st<Sem::RELAXED, Scope::GPU>(bar, 0u); }
TS_DEV void arrive_barrier_gpu(unsigned *bar) {
  __syncthreads();
  if (linear_tid() == 0) {
    fence_gpu();
    atom_add<Sem::RELEASE, Scope::GPU>(bar, 1u);
  }
}
TS_DEV void wait_barrier_gpu(unsigned *bar, unsigned expected) {
  if (linear_tid() == 0) wait_ge(bar, expected);
  __syncthreads();
}
TS_DEV void sync_barrier_gpu(unsigned *bar, unsigned expected) {
  arrive_barrier_gpu(bar);
  wait_barrier_gpu(bar, expected);
}

} // namespace dist
} // namespace ts
