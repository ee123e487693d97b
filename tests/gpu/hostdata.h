/* hostdata.h — host-side data helpers for the GPU tests (tests/gpu) and the benchmarks
 * (bench/): a seeded PRNG and conversions between float/double and the 16-bit float
 * formats, written here so that the host reference never depends on a GPU library.
 * Header-only (static inline) because the two programs link separately.
 *
 * All conversions round to nearest even, like the GPU's cvt.rn instructions, so a value
 * generated here and uploaded is exactly the value the kernel sees. */
#ifndef TS_TESTS_GPU_HOSTDATA_H
#define TS_TESTS_GPU_HOSTDATA_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tilescale.h"

/* splitmix64: explicit state, a different stream for every seed. */
static inline uint64_t hd_rng_next(uint64_t *state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* Uniform in [-1, 1) with 24 random bits, so exactly representable in fp32. */
static inline float hd_rng_unit(uint64_t *state) {
  return (float)((int64_t)(hd_rng_next(state) >> 40) - (1 << 23)) / (float)(1 << 23);
}

static inline uint32_t hd_f32_bits(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  return x;
}

static inline float hd_bits_f32(uint32_t x) {
  float f;
  memcpy(&f, &x, 4);
  return f;
}

/* fp32 -> binary16, round to nearest even; overflow goes to infinity, NaN stays NaN. */
static inline uint16_t hd_f32_to_f16(float f) {
  uint32_t x = hd_f32_bits(f);
  uint32_t sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u)
    return (uint16_t)(sign | 0x7e00u);
  if (ax >= 0x477ff000u) /* >= 65520 = halfway between 65504 and 2^16: infinity */
    return (uint16_t)(sign | 0x7c00u);
  if (ax < 0x38800000u) /* below 2^-14: subnormal half, in units of 2^-24 (exact product) */
    return (uint16_t)(sign | (uint32_t)lrintf(hd_bits_f32(ax) * 16777216.0f));
  uint32_t h = (((ax >> 23) - 112u) << 10) | ((ax >> 13) & 0x3ffu);
  uint32_t rest = ax & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
    h++; /* a carry into the exponent field is the correct rounding */
  return (uint16_t)(sign | h);
}

static inline float hd_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0) {
    float v = ldexpf((float)m, -24);
    return sign ? -v : v;
  }
  if (e == 31)
    return hd_bits_f32(sign | 0x7f800000u | (m << 13));
  return hd_bits_f32(sign | ((e + 112u) << 23) | (m << 13));
}

static inline uint16_t hd_f32_to_bf16(float f) {
  uint32_t x = hd_f32_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return (uint16_t)((x >> 16) | 0x40u);
  return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

static inline float hd_bf16_to_f32(uint16_t b) {
  return hd_bits_f32((uint32_t)b << 16);
}

/* An example (written with `@tilelang.jit(out_idx=[-1]`) loaded with `configs` ("key": value,
 * ...) added to its decorator's pass_configs, e.g. "\"tl.enable_tma_multicast\": True".
 * NULL when the file cannot be read, has no such decorator or does not load. */
static inline ts_program *hd_load_with_configs(ts_context *ctx, const char *path, const char *configs) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  enum { CAP = 1 << 16 };
  char *src = malloc(CAP), *out = malloc(CAP + 256);
  size_t n = src ? fread(src, 1, CAP - 1, f) : 0;
  fclose(f);
  ts_program *p = NULL;
  if (src && out) {
    src[n] = 0;
    const char *key = "@tilelang.jit(out_idx=[-1]", *at = strstr(src, key);
    if (at && strlen(configs) < 128) {
      size_t head = (size_t)(at - src) + strlen(key);
      snprintf(out, CAP + 256, "%.*s, pass_configs={%s}%s", (int)head, src, configs, src + head);
      if (ts_program_load_source(ctx, path, out, &p) != TS_OK) p = NULL;
    }
  }
  free(src);
  free(out);
  return p;
}

#endif
