/* atomic.cuh — atomic read-modify-write for every element type the IR can name.
 *
 *   T.atomic_add / atomic_max / atomic_min lower to IRI_ATOMIC_*; codegen prints CUDA's
 *   atomicAdd directly where a native overload exists and ts::atomic_* otherwise.
 *
 * Native: add for int, unsigned, unsigned long long, float, double, half (sm_70+) and
 * bfloat16 (sm_80+); max/min for 32/64-bit ints.  The rest are compare-and-swap loops on
 * the word that holds the value.  Each returns the value before the update.
 *
 *   T.atomic_addx2 / atomic_addx4 lower to IRI_ATOMIC_ADD_X: atomic_add_x<N>(dst, src).
 *
 *   T.atomic_load / atomic_store / atomic_or(..., memory_order) are the device operations
 *   atomic_load<Order> / atomic_store<Order> / atomic_or<Order> (Order: C++'s numbering,
 *   MemOrder below), at GPU scope. */
#pragma once

#include <tilescale/common.cuh>

namespace ts {

/* Generic CAS loop over a 32/64-bit word (or a 16-bit one, sm_70+). */
template <class T, class Op> TS_DEV T atomic_cas_loop(T *addr, T val, Op op) {
  if constexpr (sizeof(T) == 4) {
    unsigned int *w = reinterpret_cast<unsigned int *>(addr);
    unsigned int old = *w, assumed;
    do {
      assumed = old;
      old = atomicCAS(w, assumed, bit_cast<unsigned int>(op(bit_cast<T>(assumed), val)));
    } while (old != assumed);
    return bit_cast<T>(old);
  } else if constexpr (sizeof(T) == 8) {
    unsigned long long *w = reinterpret_cast<unsigned long long *>(addr);
    unsigned long long old = *w, assumed;
    do {
      assumed = old;
      old = atomicCAS(w, assumed, bit_cast<unsigned long long>(op(bit_cast<T>(assumed), val)));
    } while (old != assumed);
    return bit_cast<T>(old);
  } else {
    static_assert(sizeof(T) == 2, "atomics on 8-bit types are not supported");
    unsigned short *w = reinterpret_cast<unsigned short *>(addr);
    unsigned short old = *w, assumed;
    do {
      assumed = old;
      old = atomicCAS(w, assumed, bit_cast<unsigned short>(op(bit_cast<T>(assumed), val)));
    } while (old != assumed);
    return bit_cast<T>(old);
  }
}

struct AddF { template <class T> TS_DEV T operator()(T a, T b) const { return T(a + b); } };
struct MaxF { template <class T> TS_DEV T operator()(T a, T b) const { return ts::max(a, b); } };
struct MinF { template <class T> TS_DEV T operator()(T a, T b) const { return ts::min(a, b); } };

template <class T> TS_DEV T atomic_add(T *addr, T val) {
  if constexpr (is_same<T, int>::value || is_same<T, unsigned int>::value ||
                is_same<T, unsigned long long>::value || is_same<T, float>::value ||
                is_same<T, double>::value || is_same<T, __half>::value ||
                is_same<T, __nv_bfloat16>::value) {
    return atomicAdd(addr, val);
  } else if constexpr (sizeof(T) == 8 && !is_low_float<T>::value) {
    /* Two's complement: signed 64-bit add is the unsigned add of the same bits. */
    return (T)atomicAdd(reinterpret_cast<unsigned long long *>(addr), (unsigned long long)val);
  } else {
    return atomic_cas_loop(addr, val, AddF());
  }
}

template <class T> TS_DEV T atomic_max(T *addr, T val) {
  if constexpr (is_same<T, int>::value || is_same<T, unsigned int>::value ||
                is_same<T, long long>::value || is_same<T, unsigned long long>::value) {
    return atomicMax(addr, val);
  } else if constexpr (is_same<T, long>::value) {
    return (T)atomicMax(reinterpret_cast<long long *>(addr), (long long)val);
  } else {
    return atomic_cas_loop(addr, val, MaxF());
  }
}

template <class T> TS_DEV T atomic_min(T *addr, T val) {
  if constexpr (is_same<T, int>::value || is_same<T, unsigned int>::value ||
                is_same<T, long long>::value || is_same<T, unsigned long long>::value) {
    return atomicMin(addr, val);
  } else if constexpr (is_same<T, long>::value) {
    return (T)atomicMin(reinterpret_cast<long long *>(addr), (long long)val);
  } else {
    return atomic_cas_loop(addr, val, MinF());
  }
}

/* dst[0..N) += src[0..N) (T.atomic_addx2 / x4): one vector atomic where the hardware has one
 * (sm_90: float2 / float4 on global memory; half2 / bfloat162 on any memory), else N scalar
 * atomics.  Each lane is added atomically either way; dst must be aligned to the vector
 * (N elements), src is read element by element and needs no alignment. */
template <int N, class T> TS_DEV void atomic_add_x(T *dst, const T *src) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if constexpr (is_same<T, float>::value && N == 4) {
    if (__isGlobal(dst)) {
      atomicAdd(reinterpret_cast<float4 *>(dst), make_float4(src[0], src[1], src[2], src[3]));
      return;
    }
  } else if constexpr (is_same<T, float>::value && N == 2) {
    if (__isGlobal(dst)) {
      atomicAdd(reinterpret_cast<float2 *>(dst), make_float2(src[0], src[1]));
      return;
    }
  }
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  /* 16-bit pairs: one packed atomic per aligned pair (x4: two), else element by element */
  if constexpr ((is_same<T, __half>::value || is_same<T, __nv_bfloat16>::value) && (N == 2 || N == 4)) {
    if ((reinterpret_cast<unsigned long long>(dst) & 3) == 0) {
#pragma unroll
      for (int i = 0; i < N; i += 2) {
        if constexpr (is_same<T, __half>::value)
          atomicAdd(reinterpret_cast<__half2 *>(dst + i), __halves2half2(src[i], src[i + 1]));
        else
          atomicAdd(reinterpret_cast<__nv_bfloat162 *>(dst + i), __halves2bfloat162(src[i], src[i + 1]));
      }
      return;
    }
  }
#endif
#pragma unroll
  for (int i = 0; i < N; i++) atomic_add(dst + i, src[i]);
}


/* ---- memory-ordered loads, stores and or ------------------------------------------------- */
enum MemOrder { MO_RELAXED = 0, MO_CONSUME = 1, MO_ACQUIRE = 2, MO_RELEASE = 3, MO_ACQ_REL = 4, MO_SEQ_CST = 5 };

/* relaxed: ld.relaxed; consume and acquire: ld.acquire; seq_cst: fence.sc, then ld.acquire
 * (PTX's mapping of C++'s seq_cst load). */
template <int Order, class T> TS_DEV T atomic_load(const T *p) {
  static_assert(Order != MO_RELEASE && Order != MO_ACQ_REL, "ts::atomic_load: a load cannot release");
  if constexpr (Order == MO_SEQ_CST) asm volatile("fence.sc.gpu;" ::: "memory");
  if constexpr (Order == MO_RELAXED) {
    TS_PTX_LD_BODY("ld.relaxed.gpu", "ts::atomic_load")
  } else {
    TS_PTX_LD_BODY("ld.acquire.gpu", "ts::atomic_load")
  }
}

/* relaxed: st.relaxed; release: st.release; seq_cst: fence.sc, then st.relaxed. */
template <int Order, class T> TS_DEV void atomic_store(T *p, T v) {
  static_assert(Order == MO_RELAXED || Order == MO_RELEASE || Order == MO_SEQ_CST,
                "ts::atomic_store: a store is relaxed, release or seq_cst");
  if constexpr (Order == MO_SEQ_CST) asm volatile("fence.sc.gpu;" ::: "memory");
  if constexpr (Order == MO_RELEASE) {
    TS_PTX_ST_BODY("st.release.gpu", "ts::atomic_store")
  } else {
    TS_PTX_ST_BODY("st.relaxed.gpu", "ts::atomic_store")
  }
}

/* The fence before (After = 0) or after (After = 1) an atomic add / max / min that gives it
 * memory order Order at GPU scope: releasing orders fence before, acquiring ones after, as
 * atomic_or does (T.atomic_add(..., memory_order=...)). */
template <int Order, int After> TS_DEV void atomic_fence() {
  if constexpr (After ? (Order == MO_CONSUME || Order == MO_ACQUIRE || Order == MO_ACQ_REL || Order == MO_SEQ_CST)
                      : (Order == MO_RELEASE || Order == MO_ACQ_REL || Order == MO_SEQ_CST))
    __threadfence();
}

/* *p |= v on a 32/64-bit integer; the previous value.  Release orders (release, acq_rel,
 * seq_cst) fence before, acquire orders after. */
template <int Order, class T> TS_DEV T atomic_or(T *p, T v) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "ts::atomic_or: 32- or 64-bit integers");
  if constexpr (Order == MO_RELEASE || Order == MO_ACQ_REL || Order == MO_SEQ_CST) __threadfence();
  T prev;
  if constexpr (sizeof(T) == 4) {
    prev = bit_cast<T>(atomicOr(reinterpret_cast<unsigned int *>(p), bit_cast<unsigned int>(v)));
  } else {
    prev = bit_cast<T>(atomicOr(reinterpret_cast<unsigned long long *>(p), bit_cast<unsigned long long>(v)));
  }
  if constexpr (Order == MO_CONSUME || Order == MO_ACQUIRE || Order == MO_ACQ_REL || Order == MO_SEQ_CST)
    __threadfence();
  return prev;
}

} // namespace ts
