/* rng.cuh — the per-thread counter-based random numbers of T.rng_init / T.rng_rand /
 * T.rng_rand_float: Philox-4x32 with 10 rounds (Salmon et al., "Parallel random numbers: as
 * easy as 1, 2, 3", SC'11), the generator cuRAND's curandStatePhilox4_32_10_t and Triton's
 * tl.randint4x use, with the same stream: rng_init(seed, subsequence, offset) starts at
 * 32-bit output `offset` of subsequence `subsequence`, so thread t calling
 * rng_init(seed, 0, t * n) and n times rng_rand() reads outputs t*n .. t*n+n-1 of
 * philox(seed, counter = k) = 4 words per counter k.
 *
 *   front end: T.rng_init allocates a uint32[RNG_WORDS] local state per thread; codegen
 *   prints ts::rng_init(&state[0], seed, subsequence, offset) and ts::rng_rand(&state[0]).
 *
 * State words: counter (128 bits: the low 64 count blocks of 4 outputs, the high 64 are the
 * subsequence), key (the 64-bit seed), the current block's 4 outputs, the next output's index,
 * then the Box-Muller spares of the normal distributions (a flag and the float; a flag and
 * the double's two words).
 *
 * Distributions, as cuRAND computes them for this generator (so a kernel gets the numbers
 * TileLang's curand-based T.rng_* give): uniform float x * 2^-32 + 2^-33; uniform double
 * x * 2^-32 + 2^-32 (one output); normal float: Box-Muller of two outputs, the second result
 * kept for the next call; normal double: Box-Muller of four outputs (two 53-bit uniforms),
 * the second kept likewise. */
#pragma once

#include <tilescale/common.cuh>

namespace ts {

constexpr int RNG_WORDS = 16;

/* One Philox-4x32 round: two 32x32 -> 64-bit products mix the four counter words. */
TS_DEV void philox_round(uint32_t c[4], const uint32_t k[2]) {
  const uint32_t m0 = 0xD2511F53u, m1 = 0xCD9E8D57u;
  const uint32_t hi0 = __umulhi(m0, c[0]), lo0 = m0 * c[0];
  const uint32_t hi1 = __umulhi(m1, c[2]), lo1 = m1 * c[2];
  const uint32_t r0 = hi1 ^ c[1] ^ k[0], r2 = hi0 ^ c[3] ^ k[1];
  c[0] = r0;
  c[1] = lo1;
  c[2] = r2;
  c[3] = lo0;
}

/* out = Philox-4x32-10(counter, key): ten rounds, the key bumped by the Weyl constants
 * (golden ratio, sqrt(3) - 1) between rounds. */
TS_DEV void philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]) {
  uint32_t c[4] = {ctr[0], ctr[1], ctr[2], ctr[3]}, k[2] = {key[0], key[1]};
  for (int r = 0; r < 10; r++) {
    if (r) {
      k[0] += 0x9E3779B9u;
      k[1] += 0xBB67AE85u;
    }
    philox_round(c, k);
  }
  for (int i = 0; i < 4; i++) out[i] = c[i];
}

/* Adds n blocks to the counter's low 64 bits (carrying into the high 64). */
TS_DEV void rng_advance(uint32_t *st, uint64_t n) {
  const uint64_t lo = ((uint64_t)st[1] << 32 | st[0]) + n;
  if (lo < n) { /* carry into the subsequence half */
    const uint64_t hi = ((uint64_t)st[3] << 32 | st[2]) + 1;
    st[2] = (uint32_t)hi;
    st[3] = (uint32_t)(hi >> 32);
  }
  st[0] = (uint32_t)lo;
  st[1] = (uint32_t)(lo >> 32);
}

/* T.rng_init(seed, subsequence, offset): state at output `offset` of `subsequence`. */
TS_DEV void rng_init(uint32_t *st, uint64_t seed, uint64_t subsequence, uint64_t offset) {
  st[0] = st[1] = 0;
  st[2] = (uint32_t)subsequence;
  st[3] = (uint32_t)(subsequence >> 32);
  st[4] = (uint32_t)seed;
  st[5] = (uint32_t)(seed >> 32);
  rng_advance(st, offset / 4);
  philox4x32_10(st, st + 4, st + 6);
  st[10] = (uint32_t)(offset % 4);
  st[11] = st[13] = 0; /* no Box-Muller spare yet */
}

/* T.rng_rand(): the next 32-bit output of the thread's stream. */
TS_DEV uint32_t rng_rand(uint32_t *st) {
  if (st[10] == 4) {
    rng_advance(st, 1);
    philox4x32_10(st, st + 4, st + 6);
    st[10] = 0;
  }
  return st[6 + st[10]++];
}

/* T.rng_rand_float(): the next output as a float in (0, 1] (cuRAND's curand_uniform: x / 2^32
 * plus half a step, so 0 never comes out). */
TS_DEV float rng_rand_float(uint32_t *st) {
  const float step = 2.3283064365386963e-10f; /* 2^-32 */
  return (float)rng_rand(st) * step + step * 0.5f;
}

/* T.rng_rand_float(bit=64): a double in (0, 1] from one output (curand_uniform_double). */
TS_DEV double rng_rand_double(uint32_t *st) {
  const double step = 2.3283064365386963e-10; /* 2^-32 */
  return (double)rng_rand(st) * step + step;
}

/* T.rng_rand_float(dist="normal"): N(0, 1) floats, two per Box-Muller of two outputs
 * (curand_normal: u in (0, 1] from the first, an angle in (0, 2 pi] from the second). */
TS_DEV float rng_normal(uint32_t *st) {
  if (st[11]) {
    st[11] = 0;
    return __uint_as_float(st[12]);
  }
  const uint32_t x = rng_rand(st), y = rng_rand(st);
  const float step = 2.3283064e-10f, angle_step = 2.3283064e-10f * 6.2831855f;
  const float u = x * step + step / 2, v = y * angle_step + angle_step / 2;
  const float s = sqrtf(-2.0f * logf(u));
  float sn, cs;
  __sincosf(v, &sn, &cs);
  st[11] = 1;
  st[12] = __float_as_uint(cs * s);
  return sn * s;
}

/* A 53-bit uniform in (0, 1] from two outputs: lo ^ (hi << 21), scaled by 2^-53. */
TS_DEV unsigned long long rng_bits53(uint32_t lo, uint32_t hi) {
  return (unsigned long long)lo ^ ((unsigned long long)hi << 21);
}

/* T.rng_rand_float(bit=64, dist="normal"): N(0, 1) doubles, two per Box-Muller of four outputs
 * (curand_normal_double). */
TS_DEV double rng_normal_double(uint32_t *st) {
  if (st[13]) {
    st[13] = 0;
    return __hiloint2double((int)st[15], (int)st[14]);
  }
  uint32_t x[4];
  for (int i = 0; i < 4; i++) x[i] = rng_rand(st);
  const double step = 1.1102230246251565e-16; /* 2^-53 */
  const double u = rng_bits53(x[0], x[1]) * step + step / 2.0;
  const double v = rng_bits53(x[2], x[3]) * (step * 2.0) + step; /* in units of pi */
  const double s = sqrt(-2.0 * log(u));
  double sn, cs;
  sincospi(v, &sn, &cs);
  const double spare = cs * s;
  st[13] = 1;
  st[14] = (uint32_t)__double2loint(spare);
  st[15] = (uint32_t)__double2hiint(spare);
  return sn * s;
}

} // namespace ts
