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

/* The binary16 / bfloat16 conversions are the library's own (include/tilescale.h), tested
 * against the IEEE rules in tests/unit/test_fp16.c. */
static inline uint16_t hd_f32_to_f16(float f) { return ts_f32_to_f16(f); }
static inline float hd_f16_to_f32(uint16_t h) { return ts_f16_to_f32(h); }
static inline uint16_t hd_f32_to_bf16(float f) { return ts_f32_to_bf16(f); }
static inline float hd_bf16_to_f32(uint16_t b) { return ts_bf16_to_f32(b); }

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
