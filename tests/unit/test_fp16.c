/* test_fp16.c — the shared binary16 / bfloat16 conversion (src/base/fp16.c) against the
 * IEEE 754 rules, computed independently in double precision: every binary16 value decodes
 * exactly and round-trips; NaN stays NaN; fp32 -> binary16 / bfloat16 picks the nearest
 * representable value with ties to even, overflows to infinity, and keeps signed zeros. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "tilescale.h"
#include "test.h"

/* binary16 value of bits h, computed from the definition. */
static double f16_value(uint16_t h) {
  int sign = h >> 15, e = (h >> 10) & 31, m = h & 1023;
  double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
  return sign ? -v : v;
}

static float f32_of(uint32_t x) {
  float f;
  memcpy(&f, &x, 4);
  return f;
}

/* Is h the correctly rounded binary16 of finite f (nearest, ties to even, overflow past
 * 65520 to infinity)? */
static bool f16_rounds_right(float f, uint16_t h) {
  double x = f, best = INFINITY;
  uint16_t want = 0;
  if (fabs(x) >= 65520.0) want = x < 0 ? 0xfc00 : 0x7c00;
  else
    for (uint32_t c = 0; c < 0x7c00; c++) { /* every finite magnitude; sign from x */
      uint16_t cand = (uint16_t)(c | (signbit(x) ? 0x8000 : 0));
      double d = fabs(f16_value(cand) - x);
      if (d < best || (d == best && !(cand & 1))) best = d, want = cand;
    }
  return h == want;
}

TEST(fp16_decode_exhaustive_and_round_trip) {
  int bad = 0;
  for (uint32_t h = 0; h < 65536; h++) {
    float f = ts_f16_to_f32((uint16_t)h);
    double v = f16_value((uint16_t)h);
    if (isnan(v)) {
      bad += !isnan(f) || !isnan(ts_f16_to_f32(ts_f32_to_f16(f)));
      continue;
    }
    bad += (double)f != v || !signbit(f) != !signbit(v) || ts_f32_to_f16(f) != h;
  }
  CHECK(bad == 0);
}

TEST(fp16_encode_rounds_to_nearest_even) {
  /* specials and boundaries: halfway cases, the subnormal range, the overflow edge */
  const float cases[] = {0.0f, -0.0f, 1.0f, 65504.0f, 65519.99f, 65520.0f, -65520.0f, 1e9f, 5.96046448e-8f /* 2^-24 */,
                         2.98023224e-8f /* 2^-25: ties to 0 */, 4.47034836e-8f /* 1.5 * 2^-25 */, 6.103515625e-5f,
                         6.09755516e-5f, 1.00048828f /* 1 + 2^-11: tie, to even 1 */, 1.00146484f /* 1 + 3*2^-11 */};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) CHECK(f16_rounds_right(cases[i], ts_f32_to_f16(cases[i])));
  /* random bit patterns over the whole finite range near binary16 */
  uint64_t s = 12345;
  int bad = 0;
  for (int i = 0; i < 3000; i++) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    uint32_t x = (uint32_t)(s >> 32);
    uint32_t e = 100 + (uint32_t)((s >> 8) % 45); /* exponents 2^-27 .. 2^17 */
    float f = f32_of((x & 0x807fffffu) | (e << 23));
    bad += !f16_rounds_right(f, ts_f32_to_f16(f));
  }
  CHECK(bad == 0);
  CHECK(ts_f32_to_f16(INFINITY) == 0x7c00 && ts_f32_to_f16(-INFINITY) == 0xfc00);
  uint16_t n = ts_f32_to_f16(NAN);
  CHECK((n & 0x7c00) == 0x7c00 && (n & 0x3ff) != 0);
  CHECK(ts_f32_to_f16(-0.0f) == 0x8000);
}

TEST(bf16_rounds_to_nearest_even) {
  CHECK(ts_f32_to_bf16(1.0f) == 0x3f80);
  CHECK(ts_f32_to_bf16(f32_of(0x3f808000u)) == 0x3f80); /* tie: to even */
  CHECK(ts_f32_to_bf16(f32_of(0x3f818000u)) == 0x3f82); /* tie: to even (up) */
  CHECK(ts_f32_to_bf16(f32_of(0x3f808001u)) == 0x3f81); /* past the tie */
  CHECK(ts_f32_to_bf16(f32_of(0x7f7fffffu)) == 0x7f80); /* FLT_MAX rounds to infinity */
  CHECK(ts_f32_to_bf16(f32_of(0x00008000u)) == 0x0000); /* subnormal tie to even zero */
  uint16_t n = ts_f32_to_bf16(f32_of(0x7f800001u));       /* signalling NaN: stays NaN */
  CHECK((n & 0x7f80) == 0x7f80 && (n & 0x7f) != 0);
  int bad = 0;
  for (uint32_t b = 0; b < 65536; b++) {
    float f = ts_bf16_to_f32((uint16_t)b);
    bad += isnan(f) ? !isnan(ts_bf16_to_f32(ts_f32_to_bf16(f))) : ts_f32_to_bf16(f) != b;
  }
  CHECK(bad == 0);
}
