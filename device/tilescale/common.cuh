/* common.cuh — the base of the device library that generated kernels include first.
 *
 *   codegen/cuda.c emits `#include <tilescale/common.cuh>`; the runtime hands this file to
 *   NVRTC under that name (or nvcc finds it with -I device).
 *
 * It provides what the generated code spells directly: fixed-width integer types (NVRTC
 * has no <stdint.h>), ts::cast between every element type (half, bfloat16 and fp8 go
 * through float), bit casts, Python-style floor division, min/max/abs and the float
 * classification functions for every type, sigmoid, contiguous vector copies with
 * optional conversion, and the device-side assertion.  Everything lives in namespace
 * ts; nothing here depends on the host standard library. */
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#if defined(__CUDACC_RTC__)
/* NVRTC ships no <stdint.h>.  The widths match what nvcc's <stdint.h> gives on 64-bit
 * Linux (int64_t = long), so overloads resolve identically under both compilers. */
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long uint64_t;
/* glibc's <sys/types.h> names, which nvcc's host headers bring in: device code that a
 * kernel imports verbatim (T.import_source decoders) uses them. */
typedef unsigned short ushort;
typedef unsigned int uint;
typedef unsigned long ulong;
#else
#include <stdint.h>
#include <stdio.h>
#endif

#define TS_DEV __device__ __forceinline__

namespace ts {

typedef __half half_t;
typedef __nv_bfloat16 bfloat16_t;
typedef __nv_fp8_e4m3 fp8_e4m3_t;
typedef __nv_fp8_e5m2 fp8_e5m2_t;

/* ---- tiny type traits (no <type_traits> under NVRTC) ---------------------------- */
template <class A, class B> struct is_same { static constexpr bool value = false; };
template <class A> struct is_same<A, A> { static constexpr bool value = true; };

template <class T> struct is_unsigned { static constexpr bool value = false; };
template <> struct is_unsigned<bool> { static constexpr bool value = true; };
template <> struct is_unsigned<unsigned char> { static constexpr bool value = true; };
template <> struct is_unsigned<unsigned short> { static constexpr bool value = true; };
template <> struct is_unsigned<unsigned int> { static constexpr bool value = true; };
template <> struct is_unsigned<unsigned long> { static constexpr bool value = true; };
template <> struct is_unsigned<unsigned long long> { static constexpr bool value = true; };

/* Types without full native arithmetic: converted through float. */
template <class T> struct is_low_float { static constexpr bool value = false; };
template <> struct is_low_float<__half> { static constexpr bool value = true; };
template <> struct is_low_float<__nv_bfloat16> { static constexpr bool value = true; };
template <> struct is_low_float<__nv_fp8_e4m3> { static constexpr bool value = true; };
template <> struct is_low_float<__nv_fp8_e5m2> { static constexpr bool value = true; };

/* gridDim.x as an int: the stride of persistent blocks over their tiles (the runtime
 * launches only the co-resident blocks of a persistent kernel). */
TS_DEV int grid_dim_x() { return (int)gridDim.x; }
TS_DEV int block_idx_x() { return (int)blockIdx.x; } /* the launch's own index, never remapped */
/* T.sync_threads(id, threads): hardware barrier `id` (0..15) over `threads` threads (a
 * multiple of 32), both run-time values, as the kernel author chose them. */
TS_DEV void bar_sync(int id, int threads) { asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory"); }
TS_DEV void bar_arrive(int id, int threads) { asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory"); }
/* Programmatic dependent launch (sm_90): let the next kernel start / wait for the previous one. */
TS_DEV void pdl_trigger() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
TS_DEV void pdl_sync() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/* T.dp4a(a[i], b[i], c[0]): c += a[i+0]*b[i+0] + ... + a[i+3]*b[i+3] on four packed 8-bit
 * integers (both signed or both unsigned; __dp4a, sm_61+).  a and b point at 4-byte aligned
 * groups of four elements (a local array indexed by a multiple of 4). */
template <class T> TS_DEV void dp4a(const T *a, const T *b, int *c) {
  static_assert(sizeof(T) == 1, "dp4a multiplies 8-bit integers");
  if constexpr (T(-1) < T(0))
    *c = __dp4a(*reinterpret_cast<const int *>(a), *reinterpret_cast<const int *>(b), *c);
  else
    *c = (int)__dp4a(*reinterpret_cast<const unsigned *>(a), *reinterpret_cast<const unsigned *>(b), (unsigned)*c);
}

/* ---- conversions ------------------------------------------------------------------ */
TS_DEV float to_f32(__half x) { return __half2float(x); }
TS_DEV float to_f32(__nv_bfloat16 x) { return __bfloat162float(x); }
TS_DEV float to_f32(__nv_fp8_e4m3 x) { return static_cast<float>(x); }
TS_DEV float to_f32(__nv_fp8_e5m2 x) { return static_cast<float>(x); }

template <class T> struct FromF32;
template <> struct FromF32<__half> {
  static TS_DEV __half run(float x) { return __float2half_rn(x); }
};
template <> struct FromF32<__nv_bfloat16> {
  static TS_DEV __nv_bfloat16 run(float x) { return __float2bfloat16_rn(x); }
};
/* fp8 constructors saturate to the largest finite value (the __NV_SATFINITE mode),
 * which is what training code expects from a float -> fp8 cast. */
template <> struct FromF32<__nv_fp8_e4m3> {
  static TS_DEV __nv_fp8_e4m3 run(float x) { return __nv_fp8_e4m3(x); }
};
template <> struct FromF32<__nv_fp8_e5m2> {
  static TS_DEV __nv_fp8_e5m2 run(float x) { return __nv_fp8_e5m2(x); }
};

/* ---- 4-bit element types (T.int4, T.uint4, T.float4_e2m1fn) ----------------------------
 * In memory (global and shared tensors) two elements share a byte, element 2k in the low
 * nibble and 2k+1 in the high one, as torch packs them; generated code reads and writes such
 * tensors through ld4 / st4 below.  In registers every element has a byte of its own: these
 * one-byte structs, which convert like the numbers they hold. */
struct int4_t {
  int8_t v; /* -8 .. 7 */
  int4_t() = default;
  TS_DEV int4_t(int x) : v((int8_t)(((x & 15) ^ 8) - 8)) {} /* wraps as a 4-bit integer */
  TS_DEV operator int() const { return v; }
  static TS_DEV int4_t from_code(unsigned c) { return int4_t((int)c); }
  TS_DEV unsigned code() const { return (unsigned)v & 15u; }
};
struct uint4_t {
  uint8_t v; /* 0 .. 15 */
  uint4_t() = default;
  TS_DEV uint4_t(int x) : v((uint8_t)(x & 15)) {} /* wraps (one constructor: no ambiguity) */
  TS_DEV operator unsigned() const { return v; }
  static TS_DEV uint4_t from_code(unsigned c) { return uint4_t((int)c); }
  TS_DEV unsigned code() const { return v; }
};
/* float4_e2m1fn: sign, 2 exponent bits (bias 1), 1 mantissa bit; the magnitudes of codes 0..7
 * are 0, 0.5, 1, 1.5, 2, 3, 4, 6; no infinities and no NaN. */
struct fp4_e2m1_t {
  uint8_t bits; /* the code in the low nibble */
  static TS_DEV fp4_e2m1_t from_code(unsigned c) { fp4_e2m1_t r; r.bits = (uint8_t)(c & 15u); return r; }
  TS_DEV unsigned code() const { return bits & 15u; }
};
template <> struct is_low_float<fp4_e2m1_t> { static constexpr bool value = true; };
TS_DEV float to_f32(fp4_e2m1_t x) {
  unsigned c = x.bits & 7u;
  float m = c < 2 ? 0.5f * (float)c : (float)(2 + (c & 1)) * (float)(1 << ((c >> 1) - 1)) * 0.5f;
  return (x.bits & 8u) ? -m : m;
}
/* float -> e2m1: round to nearest, ties to the even code, saturating at +-6 (what PTX's
 * cvt.rn.satfinite.e2m1x2.f32 does on sm_100; sm_90 has no such instruction).  The sign is
 * kept (-0.0 and small negatives give code 8, -0); NaN gives +6, as satfinite does for types
 * without NaN. */
template <> struct FromF32<fp4_e2m1_t> {
  static TS_DEV fp4_e2m1_t run(float x) {
    if (x != x) return fp4_e2m1_t::from_code(7u);
    unsigned sign = (__float_as_uint(x) >> 31) << 3;
    float a = fabsf(x);
    /* Midpoints between neighbours; a tie goes to the even code (0, 2, 4, 6). */
    unsigned c = a <= 0.25f ? 0u : a < 0.75f ? 1u : a <= 1.25f ? 2u : a < 1.75f ? 3u
               : a <= 2.5f ? 4u : a < 3.5f ? 5u : a <= 5.0f ? 6u : 7u;
    return fp4_e2m1_t::from_code(sign | c);
  }
};

/* Element i of a packed 4-bit tensor at p (a global or shared tensor's bytes). */
template <class T> TS_DEV T ld4(const uint8_t *p, int64_t i) {
  return T::from_code((unsigned)(p[i >> 1] >> ((i & 1) * 4)) & 15u);
}
/* Writes element i: the other nibble of its byte may belong to another thread, so the
 * nibble is cleared and set with atomics on its aligned 32-bit word (each touches only this
 * element's bits; tensors are at least 4-byte aligned, so the word is the tensor's). */
template <class T> TS_DEV void st4(uint8_t *p, int64_t i, T v) {
  unsigned long long a = (unsigned long long)(p + (i >> 1));
  unsigned *w = reinterpret_cast<unsigned *>(a & ~3ull);
  int sh = (int)(a & 3) * 8 + (int)(i & 1) * 4;
  atomicAnd(w, ~(15u << sh));
  atomicOr(w, (v.code() & 15u) << sh);
}

/* ts::cast<To>(x): value conversion with C semantics for the builtin types (float ->
 * int truncates toward zero) and round-to-nearest-even into half/bfloat16. */
template <class To, class From> TS_DEV To cast(From x) {
  if constexpr (is_same<To, From>::value) {
    return x;
  } else if constexpr (is_same<To, bool>::value) {
    if constexpr (is_low_float<From>::value) return to_f32(x) != 0.0f;
    else return x != From(0);
  } else if constexpr (is_low_float<From>::value && is_low_float<To>::value) {
    return FromF32<To>::run(to_f32(x));
  } else if constexpr (is_low_float<From>::value) {
    return static_cast<To>(to_f32(x));
  } else if constexpr (is_low_float<To>::value) {
    /* double -> half/bf16 directly: going through float would round twice. */
    if constexpr (is_same<From, double>::value && is_same<To, __half>::value) return __double2half(x);
    else if constexpr (is_same<From, double>::value && is_same<To, __nv_bfloat16>::value)
      return __double2bfloat16(x);
    else return FromF32<To>::run(static_cast<float>(x));
  } else {
    return static_cast<To>(x);
  }
}

/* Reinterpret the bits of a value as another type of the same size. */
template <class To, class From> TS_DEV To bit_cast(From x) {
  static_assert(sizeof(To) == sizeof(From), "bit_cast between types of different sizes");
  To r;
  memcpy(&r, &x, sizeof(To));
  return r;
}

/* A 16-bit value held in (the low half of) a 32-bit word, and back: register arrays that a
 * thread indexes at run time (codegen/cuda_wide16.c says why). */
template <class T> TS_DEV unsigned int to_word(T v) { return bit_cast<unsigned short>(v); }
template <class T> TS_DEV T from_word(unsigned int w) { return bit_cast<T>(static_cast<unsigned short>(w)); }

/* An int* argument whose value nobody reads (__match_all_sync's predicate output): the
 * temporary lives until the end of the call's full expression. */
struct Discard {
  int value;
  TS_DEV operator int *() { return &value; }
};

template <class T> struct always_false { static constexpr bool value = false; };

/* A load or store through inline PTX (`p` the address, `v` the value; WHO names the caller
 * in errors): one body per PTX prefix (ld.acquire.gpu ...), dispatched on the access size
 * (2, 4, 8 or 16 bytes; a 16-byte access is a .v4.b32).  Values move through same-size
 * unsigned words, so half, bfloat16, float and vector types all work. */
#define TS_PTX_ST_BODY(PFX, WHO)                                                                     \
  if constexpr (sizeof(T) == 2) {                                                                \
    unsigned short b = ts::bit_cast<unsigned short>(v);                                          \
    asm volatile(PFX ".b16 [%0], %1;" ::"l"(p), "h"(b) : "memory");                              \
  } else if constexpr (sizeof(T) == 4) {                                                         \
    unsigned int b = ts::bit_cast<unsigned int>(v);                                              \
    asm volatile(PFX ".b32 [%0], %1;" ::"l"(p), "r"(b) : "memory");                              \
  } else if constexpr (sizeof(T) == 8) {                                                         \
    unsigned long long b = ts::bit_cast<unsigned long long>(v);                                  \
    asm volatile(PFX ".b64 [%0], %1;" ::"l"(p), "l"(b) : "memory");                              \
  } else if constexpr (sizeof(T) == 16) {                                                        \
    uint4 b = ts::bit_cast<uint4>(v);                                                            \
    asm volatile(PFX ".v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(b.x), "r"(b.y), "r"(b.z),   \
                 "r"(b.w)                                                                        \
                 : "memory");                                                                    \
  } else {                                                                                       \
    static_assert(ts::always_false<T>::value, WHO " supports 2-, 4-, 8- and 16-byte values"); \
  }

#define TS_PTX_LD_BODY(PFX, WHO)                                                                     \
  if constexpr (sizeof(T) == 2) {                                                                \
    unsigned short b;                                                                            \
    asm volatile(PFX ".b16 %0, [%1];" : "=h"(b) : "l"(p) : "memory");                            \
    return ts::bit_cast<T>(b);                                                                   \
  } else if constexpr (sizeof(T) == 4) {                                                         \
    unsigned int b;                                                                              \
    asm volatile(PFX ".b32 %0, [%1];" : "=r"(b) : "l"(p) : "memory");                            \
    return ts::bit_cast<T>(b);                                                                   \
  } else if constexpr (sizeof(T) == 8) {                                                         \
    unsigned long long b;                                                                        \
    asm volatile(PFX ".b64 %0, [%1];" : "=l"(b) : "l"(p) : "memory");                            \
    return ts::bit_cast<T>(b);                                                                   \
  } else if constexpr (sizeof(T) == 16) {                                                        \
    uint4 b;                                                                                     \
    asm volatile(PFX ".v4.b32 {%0, %1, %2, %3}, [%4];"                                           \
                 : "=r"(b.x), "=r"(b.y), "=r"(b.z), "=r"(b.w)                                    \
                 : "l"(p)                                                                        \
                 : "memory");                                                                    \
    return ts::bit_cast<T>(b);                                                                   \
  } else {                                                                                       \
    static_assert(ts::always_false<T>::value, WHO " supports 2-, 4-, 8- and 16-byte values"); \
    return T();                                                                                  \
  }

/* ---- integer division with Python semantics ----------------------------------- */
/* C truncates toward zero; Python's // and % round toward negative infinity, so the
 * quotient moves down by one (and the remainder up by b) when the signs differ. */
template <class T> TS_DEV T floordiv(T a, T b) {
  if constexpr (is_unsigned<T>::value) {
    return T(a / b);
  } else {
    T q = a / b, r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? T(q - 1) : q;
  }
}
template <class T> TS_DEV T floormod(T a, T b) {
  if constexpr (is_unsigned<T>::value) {
    return T(a % b);
  } else {
    T r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? T(r + b) : r;
  }
}
TS_DEV float floordiv(float a, float b) { return floorf(a / b); }
TS_DEV double floordiv(double a, double b) { return floor(a / b); }
TS_DEV float floormod(float a, float b) { return a - floorf(a / b) * b; }
TS_DEV double floormod(double a, double b) { return a - floor(a / b) * b; }

/* ---- min / max / abs ---------------------------------------------------------------- */
template <class T> TS_DEV T max(T a, T b) {
  if constexpr (is_low_float<T>::value) return static_cast<float>(a) < static_cast<float>(b) ? b : a; /* fp8: no < */
  else return a < b ? b : a;
}
template <class T> TS_DEV T min(T a, T b) {
  if constexpr (is_low_float<T>::value) return static_cast<float>(b) < static_cast<float>(a) ? b : a;
  else return b < a ? b : a;
}
TS_DEV float max(float a, float b) { return fmaxf(a, b); }
TS_DEV float min(float a, float b) { return fminf(a, b); }
TS_DEV double max(double a, double b) { return fmax(a, b); }
TS_DEV double min(double a, double b) { return fmin(a, b); }
TS_DEV __half max(__half a, __half b) { return __hmax(a, b); }
TS_DEV __half min(__half a, __half b) { return __hmin(a, b); }
TS_DEV __nv_bfloat16 max(__nv_bfloat16 a, __nv_bfloat16 b) { return __hmax(a, b); }
TS_DEV __nv_bfloat16 min(__nv_bfloat16 a, __nv_bfloat16 b) { return __hmin(a, b); }
/* max / min that return NaN when an operand is NaN (fmaxf and __hmax return the other one):
 * T.reduce_max / min / absmax(nan_propagate=True). */
template <class T> TS_DEV bool is_nan_value(T a) { return static_cast<float>(a) != static_cast<float>(a); }
TS_DEV bool is_nan_value(double a) { return a != a; }
template <class T> TS_DEV T max_nan(T a, T b) { return is_nan_value(a) ? a : is_nan_value(b) ? b : max(a, b); }
template <class T> TS_DEV T min_nan(T a, T b) { return is_nan_value(a) ? a : is_nan_value(b) ? b : min(a, b); }
TS_DEV __half max_nan(__half a, __half b) { return __hmax_nan(a, b); }
TS_DEV __half min_nan(__half a, __half b) { return __hmin_nan(a, b); }
TS_DEV __nv_bfloat16 max_nan(__nv_bfloat16 a, __nv_bfloat16 b) { return __hmax_nan(a, b); }
TS_DEV __nv_bfloat16 min_nan(__nv_bfloat16 a, __nv_bfloat16 b) { return __hmin_nan(a, b); }

template <class T> TS_DEV T abs(T x) {
  if constexpr (is_low_float<T>::value) return FromF32<T>::run(fabsf(to_f32(x)));
  else if constexpr (is_unsigned<T>::value) return x;
  else return x < T(0) ? T(-x) : x;
}
TS_DEV float abs(float x) { return fabsf(x); }
TS_DEV double abs(double x) { return fabs(x); }

/* ---- float classification (ints are always finite) ------------------------------ */
template <class T> TS_DEV bool isnan(T x) {
  if constexpr (is_low_float<T>::value) { float f = to_f32(x); return f != f; }
  else return x != x;
}
template <class T> TS_DEV bool isinf(T x) {
  if constexpr (is_low_float<T>::value) return fabsf(to_f32(x)) == __int_as_float(0x7f800000);
  else if constexpr (is_same<T, float>::value) return fabsf(x) == __int_as_float(0x7f800000);
  else if constexpr (is_same<T, double>::value)
    return fabs(x) == __longlong_as_double(0x7ff0000000000000LL);
  else return false;
}
template <class T> TS_DEV bool isfinite(T x) { return !ts::isnan(x) && !ts::isinf(x); }

/* ---- math without a CUDA spelling --------------------------------------------------- */
TS_DEV float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }
TS_DEV double sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }
/* T.fast_rcp: the approximate reciprocal (rcp.approx.ftz, about 1 ulp; no IEEE rounding) */
TS_DEV float fast_rcp(float x) {
  float r;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
TS_DEV double fast_rcp(double x) {
  double r;
  asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(r) : "d"(x));
  return r;
}

/* ---- contiguous vector copies ------------------------------------------------------- */
/* The widest machine word that divides a copy: 16-byte copies become one LDG.128 /
 * STS.128.  The lowering proved the addresses aligned to that width. */
template <int Bytes> struct VecWord;
template <> struct VecWord<16> { typedef uint4 type; };
template <> struct VecWord<8> { typedef uint2 type; };
template <> struct VecWord<4> { typedef unsigned int type; };
template <> struct VecWord<2> { typedef unsigned short type; };
template <> struct VecWord<1> { typedef unsigned char type; };

template <int Bytes> TS_DEV void copy_bytes(void *dst, const void *src) {
  constexpr int W = Bytes % 16 == 0 ? 16 : Bytes % 8 == 0 ? 8 : Bytes % 4 == 0 ? 4 : Bytes % 2 == 0 ? 2 : 1;
  typedef typename VecWord<W>::type V;
#pragma unroll
  for (int i = 0; i < Bytes / W; ++i) reinterpret_cast<V *>(dst)[i] = reinterpret_cast<const V *>(src)[i];
}

/* ---- conversions of element pairs -------------------------------------------------------
 * CUDA converts two elements in one instruction for these pairs of types (F2FP on sm_89+);
 * ptxas pairs float <-> half/bfloat16 by itself but not the fp8 ones, where element-wise
 * code costs 2 to 4 instructions per element.  Each gives exactly what ts::cast gives element
 * by element: fp8 and half widen exactly, and the narrowing ones round once and saturate to
 * the largest finite value as FromF32 does.  in and out are 2-element aligned. */
template <class T> struct fp8_kind { static constexpr bool is_fp8 = false; };
template <> struct fp8_kind<__nv_fp8_e4m3> {
  static constexpr bool is_fp8 = true;
  static constexpr __nv_fp8_interpretation_t value = __NV_E4M3;
};
template <> struct fp8_kind<__nv_fp8_e5m2> {
  static constexpr bool is_fp8 = true;
  static constexpr __nv_fp8_interpretation_t value = __NV_E5M2;
};

template <class D, class S> struct PairCast { static constexpr bool packed = false; };
template <> struct PairCast<__half, float> {
  static constexpr bool packed = true;
  static TS_DEV void run(__half *o, const float *i) {
    *reinterpret_cast<__half2 *>(o) = __float22half2_rn(make_float2(i[0], i[1]));
  }
};
template <> struct PairCast<float, __half> {
  static constexpr bool packed = true;
  static TS_DEV void run(float *o, const __half *i) {
    float2 f = __half22float2(*reinterpret_cast<const __half2 *>(i));
    o[0] = f.x;
    o[1] = f.y;
  }
};
template <> struct PairCast<__nv_bfloat16, float> {
  static constexpr bool packed = true;
  static TS_DEV void run(__nv_bfloat16 *o, const float *i) {
    *reinterpret_cast<__nv_bfloat162 *>(o) = __float22bfloat162_rn(make_float2(i[0], i[1]));
  }
};
template <> struct PairCast<float, __nv_bfloat16> {
  static constexpr bool packed = true;
  static TS_DEV void run(float *o, const __nv_bfloat16 *i) {
    float2 f = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162 *>(i));
    o[0] = f.x;
    o[1] = f.y;
  }
};
/* Two fp8 codes as the 16-bit storage CUDA's x2 conversions take and give. */
template <class F> TS_DEV __nv_fp8x2_storage_t fp8_pair_bits(const F *p) {
  return *reinterpret_cast<const __nv_fp8x2_storage_t *>(p);
}
template <class F> TS_DEV __half2 fp8_pair_to_half2(const F *i) {
  return __half2(__nv_cvt_fp8x2_to_halfraw2(fp8_pair_bits(i), fp8_kind<F>::value));
}
template <class D, class S> struct Fp8PairCast { static constexpr bool packed = false; };
template <class F> struct Fp8PairCast<F, float> { /* float -> fp8 */
  static constexpr bool packed = true;
  static TS_DEV void run(F *o, const float *i) {
    *reinterpret_cast<__nv_fp8x2_storage_t *>(o) =
        __nv_cvt_float2_to_fp8x2(make_float2(i[0], i[1]), __NV_SATFINITE, fp8_kind<F>::value);
  }
};
template <class F> struct Fp8PairCast<F, __half> { /* half -> fp8 */
  static constexpr bool packed = true;
  static TS_DEV void run(F *o, const __half *i) {
    *reinterpret_cast<__nv_fp8x2_storage_t *>(o) = __nv_cvt_halfraw2_to_fp8x2(
        __half2_raw(*reinterpret_cast<const __half2 *>(i)), __NV_SATFINITE, fp8_kind<F>::value);
  }
};
template <class F> struct Fp8PairCast<F, __nv_bfloat16> { /* bfloat16 -> fp8, widening exactly first */
  static constexpr bool packed = true;
  static TS_DEV void run(F *o, const __nv_bfloat16 *i) {
    *reinterpret_cast<__nv_fp8x2_storage_t *>(o) = __nv_cvt_float2_to_fp8x2(
        __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162 *>(i)), __NV_SATFINITE, fp8_kind<F>::value);
  }
};
template <class F> struct Fp8PairCast<__half, F> { /* fp8 -> half */
  static constexpr bool packed = true;
  static TS_DEV void run(__half *o, const F *i) { *reinterpret_cast<__half2 *>(o) = fp8_pair_to_half2(i); }
};
template <class F> struct Fp8PairCast<float, F> { /* fp8 -> float */
  static constexpr bool packed = true;
  static TS_DEV void run(float *o, const F *i) {
    float2 f = __half22float2(fp8_pair_to_half2(i));
    o[0] = f.x;
    o[1] = f.y;
  }
};
template <class F> struct Fp8PairCast<__nv_bfloat16, F> { /* fp8 -> bfloat16 (exact via float) */
  static constexpr bool packed = true;
  static TS_DEV void run(__nv_bfloat16 *o, const F *i) {
    *reinterpret_cast<__nv_bfloat162 *>(o) = __float22bfloat162_rn(__half22float2(fp8_pair_to_half2(i)));
  }
};
/* The pair conversion of D <- S, if any: one side fp8 (the other not) or a PairCast. */
template <bool B, class X, class Y> struct pick_type { typedef X type; };
template <class X, class Y> struct pick_type<false, X, Y> { typedef Y type; };
template <class D, class S>
struct PairConv : pick_type<fp8_kind<D>::is_fp8 != fp8_kind<S>::is_fp8, Fp8PairCast<D, S>, PairCast<D, S>>::type {};

/* Copies N contiguous elements; when the element types differ the elements are loaded
 * as one vector, converted in registers (in pairs where PairConv has them), and stored as
 * one packed vector. */
template <int N, class D, class S> TS_DEV void copy_vec(D *dst, const S *src) {
  if constexpr (is_same<D, S>::value) {
    copy_bytes<N * (int)sizeof(S)>(dst, src);
  } else {
    __align__(16) S in[N];
    __align__(16) D out[N];
    copy_bytes<N * (int)sizeof(S)>(in, src);
    if constexpr (N % 2 == 0 && PairConv<D, S>::packed) {
#pragma unroll
      for (int i = 0; i < N; i += 2) PairConv<D, S>::run(&out[i], &in[i]);
    } else {
#pragma unroll
      for (int i = 0; i < N; ++i) out[i] = ts::cast<D>(in[i]);
    }
    copy_bytes<N * (int)sizeof(D)>(dst, out);
  }
}

/* ---- assertions ---------------------------------------------------------------------- */
/* A failed T.device_assert / bounds check prints where and why, then traps: the launch
 * fails with an error the runtime reports instead of producing wrong results. */
TS_DEV void assert_fail(const char *msg, const char *where) {
  printf("tilescale: device assertion failed at %s: %s (block %d,%d,%d thread %d,%d,%d)\n", where, msg,
         (int)blockIdx.x, (int)blockIdx.y, (int)blockIdx.z, (int)threadIdx.x, (int)threadIdx.y,
         (int)threadIdx.z);
  __trap();
}

} // namespace ts

#include <tilescale/ieee.cuh>
