/* fp16.c — the one binary32 <-> binary16 / bfloat16 conversion of the project (public:
 * include/tilescale.h), used by the runtime for half-precision scalar arguments, by the CLI
 * for random inputs, and by the GPU tests for references.  Round to nearest, ties to even
 * (what a cast on the GPU does); overflow goes to infinity; NaN stays NaN (quiet, sign and
 * the high payload bits kept); subnormals are exact.  Integer arithmetic only, so the result
 * never depends on the floating-point environment. */
#include <string.h>

#include "tilescale.h"

static uint32_t bits_of(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  return x;
}
static float float_of(uint32_t x) {
  float f;
  memcpy(&f, &x, 4);
  return f;
}

/* Shifts m right by `shift` (1..31) rounding to nearest, ties to even. */
static uint32_t shift_round_even(uint32_t m, int shift) {
  uint32_t q = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
  return q + (rem > half || (rem == half && (q & 1u)));
}

uint16_t ts_f32_to_f16(float f) {
  uint32_t x = bits_of(f), sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((ax >> 13) & 0x3ffu)); /* NaN, quieted */
  if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* >= 65520 (halfway past 65504): infinity */
  uint32_t e = ax >> 23, m = (ax & 0x7fffffu) | 0x800000u;
  if (e < 102) return (uint16_t)sign; /* below 2^-25: zero (2^-25 itself ties to even zero below) */
  if (e < 113) /* a subnormal half: value / 2^-24 = m * 2^(e - 126) */
    return (uint16_t)(sign | shift_round_even(m, 126 - (int)e));
  /* normal: rebias the exponent, round 13 mantissa bits away (a carry into the exponent
   * field is the correct rounding, up to infinity) */
  return (uint16_t)(sign | shift_round_even(((e - 112u) << 23) | (ax & 0x7fffffu), 13));
}

float ts_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 31) return float_of(sign | 0x7f800000u | (m << 13)); /* infinity, NaN (payload kept) */
  if (e == 0) {
    if (!m) return float_of(sign);
    /* subnormal: normalise the mantissa into an fp32 normal */
    e = 113;
    while (!(m & 0x400u)) {
      m <<= 1;
      e--;
    }
    return float_of(sign | (e << 23) | ((m & 0x3ffu) << 13));
  }
  return float_of(sign | ((e + 112u) << 23) | (m << 13));
}

uint16_t ts_f32_to_bf16(float f) {
  uint32_t x = bits_of(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u); /* NaN, quieted */
  return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

float ts_bf16_to_f32(uint16_t b) { return float_of((uint32_t)b << 16); }
