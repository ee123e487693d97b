/* ieee.cuh — T.ieee_* (IRD_IEEE_* in ir.h, from src/front/builtins_ieee.c): IEEE-754
 * arithmetic with an explicit rounding mode, ts::ieee_<op><Mode>(operands) with Mode 0 rn (to
 * nearest even), 1 rz (toward zero), 2 ru (up), 3 rd (down), over CUDA's rounding intrinsics
 * (__fadd_rz, __dmul_ru, __fsqrt_rd ...), which are never contracted into an FMA nor
 * approximated by fast math.  float16 / bfloat16 have only round-to-nearest (__hadd_rn ...;
 * the front end rejects other modes for them).  Included by common.cuh. */
#ifndef TS_IEEE_CUH
#define TS_IEEE_CUH

namespace ts {

/* f_rn / f_rz / f_ru / f_rd of `args` by the constant mode M. */
#define TS_IEEE_PICK(M, f, args) \
  (M == 0 ? f##_rn args : M == 1 ? f##_rz args : M == 2 ? f##_ru args : f##_rd args)

/* float32 and float64 in every mode; 16-bit floats round to nearest. */
template <int M, class T> TS_DEV T ieee_add(T a, T b) {
  if constexpr (is_same<T, float>::value) return TS_IEEE_PICK(M, __fadd, (a, b));
  else if constexpr (is_same<T, double>::value) return TS_IEEE_PICK(M, __dadd, (a, b));
  else return __hadd_rn(a, b);
}
template <int M, class T> TS_DEV T ieee_sub(T a, T b) {
  if constexpr (is_same<T, float>::value) return TS_IEEE_PICK(M, __fsub, (a, b));
  else if constexpr (is_same<T, double>::value) return TS_IEEE_PICK(M, __dsub, (a, b));
  else return __hsub_rn(a, b);
}
template <int M, class T> TS_DEV T ieee_mul(T a, T b) {
  if constexpr (is_same<T, float>::value) return TS_IEEE_PICK(M, __fmul, (a, b));
  else if constexpr (is_same<T, double>::value) return TS_IEEE_PICK(M, __dmul, (a, b));
  else return __hmul_rn(a, b);
}
template <int M, class T> TS_DEV T ieee_fmaf(T a, T b, T c) {
  if constexpr (is_same<T, float>::value) return TS_IEEE_PICK(M, __fmaf, (a, b, c));
  else if constexpr (is_same<T, double>::value) return TS_IEEE_PICK(M, __fma, (a, b, c));
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  /* no bfloat16 __hfma before sm_80: the fp32 fma of the exact product, rounded to fp32 and
   * then to bfloat16 (a double rounding __hfma avoids) */
  else if constexpr (is_same<T, __nv_bfloat16>::value)
    return __float2bfloat16_rn(__fmaf_rn(__bfloat162float(a), __bfloat162float(b), __bfloat162float(c)));
#endif
  else return __hfma(a, b, c);
}
template <int M, class T> TS_DEV T ieee_frcp(T a) {
  if constexpr (is_same<T, float>::value) return TS_IEEE_PICK(M, __frcp, (a));
  else if constexpr (is_same<T, double>::value) return TS_IEEE_PICK(M, __drcp, (a));
  else return hrcp(a);
}
template <int M, class T> TS_DEV T ieee_fsqrt(T a) {
  if constexpr (is_same<T, float>::value) return TS_IEEE_PICK(M, __fsqrt, (a));
  else if constexpr (is_same<T, double>::value) return TS_IEEE_PICK(M, __dsqrt, (a));
  else return hsqrt(a);
}
template <int M, class T> TS_DEV T ieee_fdiv(T a, T b) {
  if constexpr (is_same<T, float>::value) return TS_IEEE_PICK(M, __fdiv, (a, b));
  else if constexpr (is_same<T, double>::value) return TS_IEEE_PICK(M, __ddiv, (a, b));
  else return __hdiv(a, b);
}
#undef TS_IEEE_PICK

/* 1/sqrt(x) rounded to nearest: float32 (__frsqrt_rn), half and bfloat16 (hrsqrt). */
template <int M, class T> TS_DEV T ieee_frsqrt(T a) {
  if constexpr (is_same<T, float>::value) return __frsqrt_rn(a);
  else return hrsqrt(a);
}

} // namespace ts

#endif
