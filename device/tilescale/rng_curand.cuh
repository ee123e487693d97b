/* rng_curand.cuh — T.rng_init(..., generator="curandStateXORWOW_t" / "curandStateMRG32k3a_t")
 * and the draws after it: cuRAND's own device generators (curand_kernel.h, found on NVRTC's
 * CUDA include path), for kernels that ask for them by name as TileLang's do.  The default
 * Philox-4x32-10 stream is rng.cuh's and needs no cuRAND.
 *
 *   front end: the same uint32[RNG_WORDS] local state (64 bytes, 16-aligned) holds the
 *   generator's curandState*_t; codegen includes this header only when a kernel uses one.
 *
 * G: 1 XORWOW, 2 MRG32k3a.  W (the draw): 0 uint32 (curand), 1 float in (0, 1]
 * (curand_uniform), 2 double in (0, 1] (curand_uniform_double), 3 float N(0, 1)
 * (curand_normal), 4 double N(0, 1) (curand_normal_double). */
#pragma once

#include <tilescale/rng.cuh>

/* Under NVRTC curand_kernel.h pulls in libcu++'s <cuda/std/cstdint>, which declares ::int64_t
 * and ::uint64_t as long long, where common.cuh (matching nvcc's <stdint.h>) has long: its
 * names are renamed while it is read (nothing of ours uses them through libcu++). */
#if defined(__CUDACC_RTC__)
#define int64_t ts_cccl_int64_t
#define uint64_t ts_cccl_uint64_t
#include <curand_kernel.h>
#undef int64_t
#undef uint64_t
#else
#include <curand_kernel.h>
#endif

namespace ts {

template <int G> struct RngCurandState;
template <> struct RngCurandState<1> { using type = curandStateXORWOW_t; };
template <> struct RngCurandState<2> { using type = curandStateMRG32k3a_t; };
static_assert(sizeof(curandStateXORWOW_t) <= RNG_WORDS * 4 && sizeof(curandStateMRG32k3a_t) <= RNG_WORDS * 4,
              "a cuRAND state must fit T.rng_init's local words");

template <int G> TS_DEV typename RngCurandState<G>::type *rng_curand_state(uint32_t *st) {
  return reinterpret_cast<typename RngCurandState<G>::type *>(st);
}

/* T.rng_init(seed, subsequence, offset) with generator G. */
template <int G> TS_DEV void rng_curand_init(uint32_t *st, uint64_t seed, uint64_t subsequence, uint64_t offset) {
  curand_init(seed, subsequence, offset, rng_curand_state<G>(st));
}

/* The next draw W of generator G's stream. */
template <int G, int W> TS_DEV auto rng_curand_draw(uint32_t *st) {
  auto *s = rng_curand_state<G>(st);
  if constexpr (W == 0) return (uint32_t)curand(s);
  else if constexpr (W == 1) return curand_uniform(s);
  else if constexpr (W == 2) return curand_uniform_double(s);
  else if constexpr (W == 3) return curand_normal(s);
  else return curand_normal_double(s);
}

} // namespace ts
