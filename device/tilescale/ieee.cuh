/* ieee.cuh — T.ieee_* (src/front/builtins_ieee.c): IEEE-754 arithmetic with an explicit
 * rounding mode, ts::ieee_<op>_<mode>, over CUDA's rounding intrinsics (__fadd_rz, __dmul_ru,
 * __fsqrt_rd ...), which are never contracted into an FMA nor approximated by fast math.
 * float16 / bfloat16 have only round-to-nearest (__hadd_rn ...).  Included by common.cuh. */
#ifndef TS_IEEE_CUH
#define TS_IEEE_CUH

namespace ts {

#define TS_IEEE_MODE(m)                                                                         \
  TS_DEV float ieee_add_##m(float a, float b) { return __fadd_##m(a, b); }                      \
  TS_DEV double ieee_add_##m(double a, double b) { return __dadd_##m(a, b); }                   \
  TS_DEV float ieee_sub_##m(float a, float b) { return __fsub_##m(a, b); }                      \
  TS_DEV double ieee_sub_##m(double a, double b) { return __dsub_##m(a, b); }                   \
  TS_DEV float ieee_mul_##m(float a, float b) { return __fmul_##m(a, b); }                      \
  TS_DEV double ieee_mul_##m(double a, double b) { return __dmul_##m(a, b); }                   \
  TS_DEV float ieee_fmaf_##m(float a, float b, float c) { return __fmaf_##m(a, b, c); }          \
  TS_DEV double ieee_fmaf_##m(double a, double b, double c) { return __fma_##m(a, b, c); }       \
  TS_DEV float ieee_frcp_##m(float a) { return __frcp_##m(a); }                                 \
  TS_DEV double ieee_frcp_##m(double a) { return __drcp_##m(a); }                               \
  TS_DEV float ieee_fsqrt_##m(float a) { return __fsqrt_##m(a); }                               \
  TS_DEV double ieee_fsqrt_##m(double a) { return __dsqrt_##m(a); }                             \
  TS_DEV float ieee_fdiv_##m(float a, float b) { return __fdiv_##m(a, b); }                     \
  TS_DEV double ieee_fdiv_##m(double a, double b) { return __ddiv_##m(a, b); }
TS_IEEE_MODE(rn)
TS_IEEE_MODE(rz)
TS_IEEE_MODE(ru)
TS_IEEE_MODE(rd)
#undef TS_IEEE_MODE

TS_DEV float ieee_frsqrt_rn(float a) { return __frsqrt_rn(a); }

/* 16-bit floats: round to nearest even only. */
#define TS_IEEE_HALF(T)                                                                  \
  TS_DEV T ieee_add_rn(T a, T b) { return __hadd_rn(a, b); }                             \
  TS_DEV T ieee_sub_rn(T a, T b) { return __hsub_rn(a, b); }                             \
  TS_DEV T ieee_mul_rn(T a, T b) { return __hmul_rn(a, b); }                             \
  TS_DEV T ieee_fmaf_rn(T a, T b, T c) { return __hfma(a, b, c); }                       \
  TS_DEV T ieee_frcp_rn(T a) { return hrcp(a); }                                         \
  TS_DEV T ieee_fsqrt_rn(T a) { return hsqrt(a); }                                       \
  TS_DEV T ieee_fdiv_rn(T a, T b) { return __hdiv(a, b); }
TS_IEEE_HALF(__half)
TS_IEEE_HALF(__nv_bfloat16)
#undef TS_IEEE_HALF

} // namespace ts

#endif
