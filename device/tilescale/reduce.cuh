/* reduce.cuh — warp shuffles for every element type, and warp/block all-reduce helpers.
 *
 *   Lowered T.reduce_* becomes per-thread partial results combined with butterfly
 *   shuffles (codegen prints IRI_SHFL_XOR as ts::shfl_xor or __shfl_xor_sync; T.shfl_* as
 *   ts::shfl<Kind> or CUDA's own) and, across
 *   warps, through shared memory.  Included by generated code that shuffles.
 *
 * __shfl_xor_sync has native overloads for 32/64-bit ints, float, double, half and
 * bfloat16; the narrow types here are widened to int first, fp8 travels as its bits. */
#pragma once

#include <tilescale/common.cuh>

namespace ts {

/* The four shuffles, in the order of ir.h's T.shfl_* rows (codegen prints ts::shfl<Kind>). */
enum ShflKind { SHFL_IDX = 0, SHFL_UP = 1, SHFL_DOWN = 2, SHFL_XOR = 3 };

template <int Kind, class W> TS_DEV W shfl_native(unsigned mask, W v, int lane, int width) {
  if constexpr (Kind == SHFL_IDX) return __shfl_sync(mask, v, lane, width);
  else if constexpr (Kind == SHFL_UP) return __shfl_up_sync(mask, v, (unsigned)lane, width);
  else if constexpr (Kind == SHFL_DOWN) return __shfl_down_sync(mask, v, (unsigned)lane, width);
  else return __shfl_xor_sync(mask, v, lane, width);
}

/* A shuffle of any element type among the lanes of mask (lane: the source lane, or the
 * delta of up / down / xor). */
template <int Kind, class T> TS_DEV T shfl(unsigned mask, T v, int lane, int width = 32) {
  if constexpr (is_same<T, int>::value || is_same<T, unsigned int>::value || is_same<T, float>::value ||
                is_same<T, double>::value || is_same<T, long long>::value ||
                is_same<T, unsigned long long>::value || is_same<T, __half>::value ||
                is_same<T, __nv_bfloat16>::value) {
    return shfl_native<Kind>(mask, v, lane, width);
  } else if constexpr (sizeof(T) == 8) {
    /* int64_t is `long` on 64-bit Linux: no native overload, same bits as long long. */
    return bit_cast<T>(shfl_native<Kind>(mask, bit_cast<long long>(v), lane, width));
  } else if constexpr (is_low_float<T>::value) {
    /* fp8: shuffle the byte. */
    unsigned char b = bit_cast<unsigned char>(v);
    return bit_cast<T>((unsigned char)shfl_native<Kind>(mask, (int)b, lane, width));
  } else {
    /* bool, 8/16-bit ints: widen, shuffle, narrow. */
    return static_cast<T>(shfl_native<Kind>(mask, static_cast<int>(v), lane, width));
  }
}

/* The full-warp xor shuffle of the reductions. */
template <class T> TS_DEV T shfl_xor(T v, int lane_mask, int width = 32) {
  return shfl<SHFL_XOR>(0xffffffffu, v, lane_mask, width);
}

struct SumOp {
  template <class T> static TS_DEV T run(T a, T b) { return a + b; }
};
struct MaxOp {
  template <class T> static TS_DEV T run(T a, T b) { return ts::max(a, b); }
};
struct MinOp {
  template <class T> static TS_DEV T run(T a, T b) { return ts::min(a, b); }
};

/* All-reduce across groups of Width consecutive lanes (Width a power of two <= 32):
 * every lane of the group ends with the group's result.  log2(Width) shuffles. */
template <class Op, int Width, class T> TS_DEV T warp_allreduce(T v) {
#pragma unroll
  for (int m = Width / 2; m > 0; m >>= 1) v = Op::run(v, shfl_xor(v, m));
  return v;
}

/* All-reduce over a block of Threads threads (Threads a multiple of 32, scratch holds
 * Threads/32 elements of shared memory).  Every thread receives the result; the second
 * barrier makes the scratch reusable by the next call. */
template <class Op, int Threads, class T> TS_DEV T block_allreduce(T v, T *scratch) {
  constexpr int kWarps = Threads / 32;
  v = warp_allreduce<Op, 32>(v);
  if (kWarps == 1) return v;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = scratch[0];
#pragma unroll
  for (int w = 1; w < kWarps; ++w) v = Op::run(v, scratch[w]);
  __syncthreads();
  return v;
}

} // namespace ts
