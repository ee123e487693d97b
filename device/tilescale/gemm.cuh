/* gemm.cuh — tensor-core GEMM for generated kernels: the warp-level (mma.sync, sm_80+)
 * and warpgroup-level (wgmma, sm_90a) loops that T.gemm lowers to, plus the asynchronous
 * copies (cp.async) of software-pipelined loops.
 *
 *   lower_tile_ops prints `ts::gemm_ss_{mma,wgmma}<M, N, K, ...>(&A_s[..], &B_s[..],
 *   &C_local[0], tid)`; codegen includes this file when a kernel calls into it.
 *
 * Contract with the compiler (src/layout/fragment.c fragment_gemm_acc, layout.c):
 *  - the accumulator array holds the C fragment in the compiler's register order:
 *    rows l0 = 2*strip + h (h: the +8 row), cols l1 = 2*block8 + v, register l0*L1 + l1;
 *  - warps stack along M first: warp w owns 16-row strips w % WM + WM*i, warp column
 *    w / WM owns N/WN contiguous columns (wgmma: warpgroups, 64-row atoms);
 *  - shared tiles are stored with ts::tile_offset (the swizzle of layout.h), 1024-byte
 *    aligned, K-major or MN-major as the transposes say;
 *  - operand types: half/bf16 (fp32 or, for half, fp16 accumulators), float read as tf32,
 *    int8/uint8 (int32 accumulators), fp8 e4m3/e5m2 (fp32 or fp16); the 8-bit types only
 *    K-major (A [M][K], B [N][K]): layout.c diagnoses the rest; tf32 operands that are not
 *    K-major are loaded element by element (ldmatrix transposes 16-bit elements only);
 *  - A in registers (gemm_rs_*): the accumulator-shaped fragment [M x K] (16-bit, tf32 and
 *    8-bit types; the last two permute K in both operands); B is always in shared memory;
 *  - an fp16 accumulator holds pairs of adjacent columns in one 32-bit register, which
 *    is the compiler's register order (v fastest), so it is addressed as uint32 words. */
#pragma once

#include <tilescale/common.cuh>
#include <tilescale/rng.cuh>
#include <tilescale/tma.cuh>
#include <tilescale/wgmma_ops.cuh>
#include <tilescale/wgmma_rx.cuh>

namespace ts {

TS_DEV uint32_t smem_u32(const void *p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }

/* Element offset of (r, c) in a ROWS x COLS tile with a W-byte swizzle (layout.h). */
template <int ROWS, int COLS, int W, int EB> TS_DEV int tile_offset(int r, int c) {
  if constexpr (W == 0) {
    return r * COLS + c;
  } else {
    constexpr int A = W / EB, VEC = 16 / EB;
    const int a = c / A, cc = c % A, f = ((r * W) >> 7) & (W / 16 - 1);
    return a * (ROWS * A) + r * A + (((cc / VEC) ^ f) * VEC) + cc % VEC;
  }
}

/* ---- cp.async (sm_80+): global -> shared without registers --------------------------- */
template <int BYTES> TS_DEV void cp_async(void *dst, const void *src) {
  static_assert(BYTES == 4 || BYTES == 8 || BYTES == 16, "cp.async moves 4, 8 or 16 bytes");
  if constexpr (BYTES == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_u32(dst)), "l"(src) : "memory");
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(smem_u32(dst)), "l"(src), "n"(BYTES) : "memory");
}
/* T.ptx_cp_async(..., predicate=p): cp.async with a source size of BYTES when p holds and 0
 * otherwise, so a false predicate fills the destination with zeros (and reads nothing). */
template <int BYTES> TS_DEV void cp_async_zfill(void *dst, const void *src, bool pred) {
  static_assert(BYTES == 4 || BYTES == 8 || BYTES == 16, "cp.async moves 4, 8 or 16 bytes");
  const int src_bytes = pred ? BYTES : 0;
  if constexpr (BYTES == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_u32(dst)), "l"(src), "r"(src_bytes)
                 : "memory");
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(smem_u32(dst)), "l"(src), "n"(BYTES),
                 "r"(src_bytes) : "memory");
}
/* T.cp_async_barrier_noinc(bar): an arrival on mbarrier `bar` once every cp.async this thread
 * issued before it has landed; .noinc: the arrival is one of the barrier's expected arrivals
 * (its init count includes this thread) rather than an extra pending one. */
TS_DEV void cp_async_mbar_arrive_noinc(uint64_t *bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(smem_u32(bar)) : "memory");
}
/* Generic-proxy writes to shared memory (st.shared, cp.async) are not seen by the async
 * proxy (wgmma operand reads, TMA) without this fence, executed by each writing thread
 * after its writes and before the barrier that hands the data to the tensor cores. */
TS_DEV void fence_proxy_async() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}
TS_DEV void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N> TS_DEV void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }

/* ---- ldmatrix / mma.sync ------------------------------------------------------------ */
TS_DEV void ldsm_x4(uint32_t *r, uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}
TS_DEV void ldsm_x4_trans(uint32_t *r, uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}
TS_DEV void ldsm_x2(uint32_t *r, uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n" : "=r"(r[0]), "=r"(r[1]) : "r"(addr));
}
TS_DEV void ldsm_x2_trans(uint32_t *r, uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n" : "=r"(r[0]), "=r"(r[1]) : "r"(addr));
}

/* Within a warp, lane = 4 g + t: g is the mma fragment's row (group), t its column quad. */
TS_DEV int lane_group(int tid) { return (tid & 31) >> 2; }
TS_DEV int lane_quad(int tid) { return tid & 3; }

/* d (4 fp32, rows g and g+8 x cols 2t, 2t+1) += a (16x16, 4 regs) * b (16x8, 2 regs). */
template <class T> TS_DEV void mma_16816(float *d0, float *d1, float *d2, float *d3, const uint32_t *a, const uint32_t *b) {
  if constexpr (is_same<T, half>::value)
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                 "{%0, %1, %2, %3};\n"
                 : "+f"(*d0), "+f"(*d1), "+f"(*d2), "+f"(*d3)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  else
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                 "{%0, %1, %2, %3};\n"
                 : "+f"(*d0), "+f"(*d1), "+f"(*d2), "+f"(*d3)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/* The other mma.sync shapes: one m16n8kKI instruction (KI = 32 bytes of operand) with the
 * accumulator rows at row0 (row g) and row1 (row g + 8), two adjacent columns each. */
#define TS_MMA_X4(SHAPE, C)                                                                             \
  asm volatile("mma.sync.aligned." SHAPE " {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n" \
               : C(row0[0]), C(row0[1]), C(row1[0]), C(row1[1])                                          \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]))
template <class TA_, class TB_, class TC> TS_DEV void mma_x(TC *row0, TC *row1, const uint32_t *a, const uint32_t *b) {
  if constexpr (is_same<TC, half>::value) {
    static_assert(is_same<TA_, half>::value && is_same<TB_, half>::value, "fp16 accumulation needs fp16 operands");
    uint32_t *d0 = reinterpret_cast<uint32_t *>(row0), *d1 = reinterpret_cast<uint32_t *>(row1);
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0, %1}, {%2, %3, %4, %5}, {%6, %7}, {%0, %1};\n"
                 : "+r"(*d0), "+r"(*d1)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else if constexpr (is_same<TA_, half>::value || is_same<TA_, __nv_bfloat16>::value) {
    mma_16816<TA_>(row0, row0 + 1, row1, row1 + 1, a, b);
  } else if constexpr (is_same<TA_, float>::value) {
    TS_MMA_X4("m16n8k8.row.col.f32.tf32.tf32.f32", "+f");
  } else if constexpr (is_same<TA_, int8_t>::value) {
    TS_MMA_X4("m16n8k32.row.col.s32.s8.s8.s32", "+r");
  } else if constexpr (is_same<TA_, uint8_t>::value) {
    TS_MMA_X4("m16n8k32.row.col.s32.u8.u8.s32", "+r");
  } else {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
    if constexpr (is_same<TA_, __nv_fp8_e4m3>::value && is_same<TB_, __nv_fp8_e4m3>::value)
      TS_MMA_X4("m16n8k32.row.col.f32.e4m3.e4m3.f32", "+f");
    else if constexpr (is_same<TA_, __nv_fp8_e4m3>::value)
      TS_MMA_X4("m16n8k32.row.col.f32.e4m3.e5m2.f32", "+f");
    else if constexpr (is_same<TB_, __nv_fp8_e4m3>::value)
      TS_MMA_X4("m16n8k32.row.col.f32.e5m2.e4m3.f32", "+f");
    else
      TS_MMA_X4("m16n8k32.row.col.f32.e5m2.e5m2.f32", "+f");
#else
    (void)row0; (void)row1; (void)a; (void)b;
    __trap(); /* the compiler plans fp8 mma.sync for sm_89+ only */
#endif
  }
}
#undef TS_MMA_X4

/* T.ptx_ldmatrix: NUM 8x8 matrices of 16-bit elements (8-bit ones in pairs) into this
 * thread's registers dst[0..NUM) (32 bits each); src is the row this lane supplies. */
template <int NUM, bool TRANS> TS_DEV void ptx_ldmatrix(void *dst, const void *src) {
  uint32_t *r = reinterpret_cast<uint32_t *>(dst), addr = smem_u32(src);
  if constexpr (NUM == 4 && TRANS) ldsm_x4_trans(r, addr);
  else if constexpr (NUM == 4) ldsm_x4(r, addr);
  else if constexpr (NUM == 2 && TRANS) ldsm_x2_trans(r, addr);
  else if constexpr (NUM == 2) ldsm_x2(r, addr);
  else if constexpr (TRANS)
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];\n" : "=r"(r[0]) : "r"(addr));
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];\n" : "=r"(r[0]) : "r"(addr));
}
/* T.ptx_mma: one mma.sync m16n8kK (K = 32 bytes of TA) on this thread's registers: a (4 x
 * 32 bits), b (2 x 32 bits), c (rows g and g + 8, two adjacent columns each).  INT4: TA / TB
 * (int8_t or uint8_t) registers hold two 4-bit values a byte, m16n8k32.s4 (.u4): a is 2 x 32
 * bits, b one. */
template <class TA, class TB, class TC, bool INT4> TS_DEV void ptx_mma(const void *a, const void *b, TC *c) {
  const uint32_t *ra = reinterpret_cast<const uint32_t *>(a), *rb = reinterpret_cast<const uint32_t *>(b);
  if constexpr (INT4) {
    static_assert(is_same<TC, int>::value && sizeof(TA) == 1 && sizeof(TB) == 1, "4-bit mma accumulates int32");
    if constexpr (is_same<TA, uint8_t>::value)
      asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.u4.u4.s32 {%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};\n"
                   : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3]) : "r"(ra[0]), "r"(ra[1]), "r"(rb[0]));
    else
      asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s4.s4.s32 {%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};\n"
                   : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3]) : "r"(ra[0]), "r"(ra[1]), "r"(rb[0]));
  } else {
    mma_x<TA, TB, TC>(c, c + 2, ra, rb);
  }
}

/* C[M x N] (+)= A * B for one block with WM x WN warps, operands in shared memory.
 * A is [M][K] (TA: [K][M]), B is [K][N] (TB: [N][K]); swizzles SWA/SWB bytes.  KI, the
 * K of one instruction, is 32 bytes of the operand type; ldmatrix moves 16-byte rows
 * whatever the type, which for K-major operands is exactly the fragment every
 * m16n8kKI shape wants (the transposed loads only exist for 16-bit types). */
template <int M, int N, int K, int WM, int WN, bool TA, bool TB, int SWA, int SWB, bool CLEAR, class T, class TB2 = T,
          class TC = float>
TS_DEV void gemm_ss_mma(const T *A, const TB2 *B, TC *acc, int tid) {
  constexpr int EB = sizeof(T), KI = 32 / EB;
  constexpr int MI = M / (16 * WM), NJ = N / (8 * WN);
  constexpr int AR = TA ? K : M, AC = TA ? M : K, BR = TB ? N : K, BC = TB ? K : N;
  static_assert(M % (16 * WM) == 0 && N % (8 * WN) == 0 && K % KI == 0, "tile does not fit mma.sync m16n8k16");
  static_assert(EB != 1 || (!TA && TB), "8-bit operands must be K-major");
  const int g = lane_group(tid), t = lane_quad(tid); /* the mma fragment's row / column quad */
  (void)g, (void)t;                                  /* read by the per-element tf32 loads only */
  const int lane = tid & 31, warp = (tid >> 5) % (WM * WN), wm = warp % WM, wn = warp / WM;
  const uint32_t a_base = smem_u32(A), b_base = smem_u32(B);
  if constexpr (CLEAR) {
#pragma unroll
    for (int i = 0; i < 4 * MI * NJ; ++i) acc[i] = TC(0);
  }
  /* four k-steps at a time, not all: fully unrolled, ptxas hoists every step's ldmatrix loads
   * and a kernel that also keeps large accumulators live spills (the GQA backward's dQ GEMM,
   * K = 128: 36 bytes of spills in its loop at 255 registers; none with 4) */
#pragma unroll 4
  for (int kk = 0; kk < K / KI; ++kk) {
    uint32_t af[MI][4], bf[NJ + 1][2];
#pragma unroll
    for (int mi = 0; mi < MI; ++mi) {
      const int m0 = 16 * (wm + WM * mi);
      if constexpr (!TA) {
        const int r = m0 + (lane & 15), c = kk * KI + (lane >> 4) * (KI / 2);
        ldsm_x4(af[mi], a_base + EB * tile_offset<AR, AC, SWA, EB>(r, c));
      } else if constexpr (EB == 4) { /* A is [K][M]: a0..a3 = A(g, t), A(g+8, t), A(g, t+4), A(g+8, t+4) */
        const int k0 = kk * KI;
        af[mi][0] = bit_cast<uint32_t>(A[tile_offset<AR, AC, SWA, 4>(k0 + t, m0 + g)]);
        af[mi][1] = bit_cast<uint32_t>(A[tile_offset<AR, AC, SWA, 4>(k0 + t, m0 + g + 8)]);
        af[mi][2] = bit_cast<uint32_t>(A[tile_offset<AR, AC, SWA, 4>(k0 + t + 4, m0 + g)]);
        af[mi][3] = bit_cast<uint32_t>(A[tile_offset<AR, AC, SWA, 4>(k0 + t + 4, m0 + g + 8)]);
      } else {
        const int j = lane >> 3, r = kk * 16 + (lane & 7) + 8 * (j >> 1), c = m0 + 8 * (j & 1);
        ldsm_x4_trans(af[mi], a_base + 2 * tile_offset<AR, AC, SWA, 2>(r, c));
      }
    }
#pragma unroll
    for (int nj = 0; nj < NJ; nj += 2) {
      const int n0 = wn * (N / WN) + 8 * nj, j = lane >> 3;
      if constexpr (!TB && EB == 4) { /* B is [K][N]: b0 = B(k=t, n=g), b1 = B(k=t+4, n=g) */
#pragma unroll
        for (int h = 0; h < 2; ++h)
          if (nj + h < NJ) {
            bf[nj + h][0] = bit_cast<uint32_t>(B[tile_offset<BR, BC, SWB, 4>(kk * KI + t, n0 + 8 * h + g)]);
            bf[nj + h][1] = bit_cast<uint32_t>(B[tile_offset<BR, BC, SWB, 4>(kk * KI + t + 4, n0 + 8 * h + g)]);
          }
      } else if constexpr (!TB) {
        const int r = kk * 16 + (lane & 7) + 8 * (j & 1), c = n0 + 8 * (j >> 1);
        const uint32_t addr = b_base + 2 * tile_offset<BR, BC, SWB, 2>(r, c);
        if (nj + 1 < NJ) ldsm_x4_trans(&bf[nj][0], addr);
        else ldsm_x2_trans(&bf[nj][0], addr);
      } else {
        const int r = n0 + (lane & 7) + 8 * (j >> 1), c = kk * KI + (KI / 2) * (j & 1);
        const uint32_t addr = b_base + EB * tile_offset<BR, BC, SWB, EB>(r, c);
        if (nj + 1 < NJ) ldsm_x4(&bf[nj][0], addr);
        else ldsm_x2(&bf[nj][0], addr);
      }
    }
#pragma unroll
    for (int mi = 0; mi < MI; ++mi)
#pragma unroll
      for (int nj = 0; nj < NJ; ++nj) {
        TC *row0 = acc + (2 * mi) * (2 * NJ) + 2 * nj, *row1 = row0 + 2 * NJ;
        mma_x<T, TB2, TC>(row0, row1, af[mi], bf[nj]);
      }
  }
}

/* C[M x N] (+)= A * B on 4-bit integers (T = int4_t or uint4_t), mma.sync m16n8k64 .s4/.u4
 * with int32 accumulators.  A is [M][K] and B [N][K] (K-major), row-major tiles of packed
 * bytes (two elements a byte, element 2k in the low nibble: the order in which the
 * instruction's registers hold them, lower k in lower bits).  By bytes an m16n8k64 .s4
 * fragment is exactly m16n8k32 .s8's (a0: row g, bytes 4t..4t+3 of the first 32; a1: row
 * g + 8; a2/a3: 16 bytes on; b0/b1 the same over B's rows), so the ldmatrix loads are the
 * 8-bit path's on rows of K/2 bytes. */
template <int M, int N, int K, int WM, int WN, bool CLEAR, class T>
TS_DEV void gemm_ss_mma4(const uint8_t *A, const uint8_t *B, int *acc, int tid) {
  constexpr int KB = K / 2, MI = M / (16 * WM), NJ = N / (8 * WN); /* KB: bytes a row */
  static_assert(M % (16 * WM) == 0 && N % (8 * WN) == 0 && K % 64 == 0, "tile does not fit mma.sync m16n8k64");
  static_assert(is_same<T, int4_t>::value || is_same<T, uint4_t>::value, "4-bit GEMM operands are int4 or uint4");
  const int lane = tid & 31, warp = (tid >> 5) % (WM * WN), wm = warp % WM, wn = warp / WM;
  const uint32_t a_base = smem_u32(A), b_base = smem_u32(B);
  if constexpr (CLEAR) {
#pragma unroll
    for (int i = 0; i < 4 * MI * NJ; ++i) acc[i] = 0;
  }
#pragma unroll
  for (int kk = 0; kk < K / 64; ++kk) {
    uint32_t af[MI][4], bf[NJ + 1][2];
#pragma unroll
    for (int mi = 0; mi < MI; ++mi) { /* lanes 0-15: rows m0.., bytes 0-15; lanes 16-31: bytes 16-31 */
      const int r = 16 * (wm + WM * mi) + (lane & 15), cb = kk * 32 + (lane >> 4) * 16;
      ldsm_x4(af[mi], a_base + r * KB + cb);
    }
#pragma unroll
    for (int nj = 0; nj < NJ; nj += 2) { /* matrices: (n block nj, bytes 0-15), (nj, 16-31), (nj + 1, ...) */
      const int j = lane >> 3, r = wn * (N / WN) + 8 * nj + (lane & 7) + 8 * (j >> 1), cb = kk * 32 + 16 * (j & 1);
      if (nj + 1 < NJ) ldsm_x4(&bf[nj][0], b_base + r * KB + cb);
      else ldsm_x2(&bf[nj][0], b_base + r * KB + cb);
    }
#pragma unroll
    for (int mi = 0; mi < MI; ++mi)
#pragma unroll
      for (int nj = 0; nj < NJ; ++nj) {
        int *row0 = acc + (2 * mi) * (2 * NJ) + 2 * nj, *row1 = row0 + 2 * NJ;
        const uint32_t *a = af[mi], *b = bf[nj];
        if constexpr (is_same<T, uint4_t>::value)
          asm volatile("mma.sync.aligned.m16n8k64.row.col.s32.u4.u4.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                       "{%0, %1, %2, %3};\n"
                       : "+r"(row0[0]), "+r"(row0[1]), "+r"(row1[0]), "+r"(row1[1])
                       : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
        else
          asm volatile("mma.sync.aligned.m16n8k64.row.col.s32.s4.s4.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                       "{%0, %1, %2, %3};\n"
                       : "+r"(row0[0]), "+r"(row0[1]), "+r"(row1[0]), "+r"(row1[1])
                       : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
      }
  }
}

/* mma.sync with A in registers (16-bit types): A is the fragment [M x K] laid out like a
 * GEMM accumulator of the same warps with K as its columns (fragment_gemm_acc(M, K, WM,
 * 1)); for strip mi and K step kk its 4 registers are the (row h, 8-column block b)
 * pairs (0, 2kk), (1, 2kk), (0, 2kk+1), (1, 2kk+1) — exactly the m16n8k16 A operand.
 * WM warps along M, WN along N (warp w: row strips w % WM, columns [N/WN * (w / WM), ..)):
 * the A fragment is replicated over the WN warp columns, so every warp holds the whole
 * K extent of its rows and only B's columns depend on the warp column.
 * TA: the fragment is stored [K x M] (transpose_A): the same elements in the same threads,
 * with the register order of the transposed shape (rs_a_reg). */
template <int M, int N, int K, int WM, int WN, bool TA, bool TB, int SWB, bool CLEAR, class T, class TC = float>
TS_DEV void gemm_rs_16(const T *A, const T *B, TC *acc, int tid);
template <int M, int N, int K, int WM, int WN, bool TA, bool TB, int SWB, bool CLEAR, class T, class TC = float>
TS_DEV void gemm_rs_tf32(const T *A, const T *B, TC *acc, int tid);

template <int M, int N, int K, int WM, int WN, bool TA, bool TB, int SWB, bool CLEAR, class T, class TC = float>
TS_DEV void gemm_rs_8(const T *A, const T *B, TC *acc, int tid);

template <int M, int N, int K, int WM, int WN, bool TA, bool TB, int SWB, bool CLEAR, class T, class TC = float>
TS_DEV void gemm_rs_mma(const T *A, const T *B, TC *acc, int tid) {
  if constexpr (sizeof(T) == 4) gemm_rs_tf32<M, N, K, WM, WN, TA, TB, SWB, CLEAR, T, TC>(A, B, acc, tid);
  else if constexpr (sizeof(T) == 1) gemm_rs_8<M, N, K, WM, WN, TA, TB, SWB, CLEAR, T, TC>(A, B, acc, tid);
  else gemm_rs_16<M, N, K, WM, WN, TA, TB, SWB, CLEAR, T, TC>(A, B, acc, tid);
}

/* The register of A's local element (lm, lk): lm = 2 * strip + row half (LM per thread),
 * lk = the thread's K position (K/4 per thread).  The fragment's registers run row-major
 * over its own shape: [M x K] -> lm * K/4 + lk, [K x M] (TA) -> lk * LM + lm. */
template <int LM, int K, bool TA> TS_DEV constexpr int rs_a_reg(int lm, int lk) {
  return TA ? lk * LM + lm : lm * (K / 4) + lk;
}
/* The 32-bit A word of two 16-bit elements at K positions lk, lk + 1 (one register when
 * not transposed; two to pack otherwise). */
template <int LM, int K, bool TA, class T> TS_DEV uint32_t rs_a_word(const T *A, int lm, int lk) {
  if constexpr (!TA) {
    return reinterpret_cast<const uint32_t *>(A)[rs_a_reg<LM, K, TA>(lm, lk) / 2];
  } else {
    return (uint32_t)bit_cast<uint16_t>(A[rs_a_reg<LM, K, TA>(lm, lk)]) |
           ((uint32_t)bit_cast<uint16_t>(A[rs_a_reg<LM, K, TA>(lm, lk + 1)]) << 16);
  }
}

/* 16-bit A in registers: m16n8k16, whose A fragment is the accumulator-shaped one. */
template <int M, int N, int K, int WM, int WN, bool TA, bool TB, int SWB, bool CLEAR, class T, class TC>
TS_DEV void gemm_rs_16(const T *A, const T *B, TC *acc, int tid) {
  constexpr int MI = M / (16 * WM), NJ = N / (8 * WN);
  constexpr int BR = TB ? N : K, BC = TB ? K : N;
  static_assert(sizeof(T) == 2 && M % (16 * WM) == 0 && N % (8 * WN) == 0 && K % 16 == 0,
                "tile does not fit mma.sync m16n8k16");
  const int lane = tid & 31, wn = ((tid >> 5) % (WM * WN)) / WM;
  const uint32_t b_base = smem_u32(B);
  if constexpr (CLEAR) {
#pragma unroll
    for (int i = 0; i < 4 * MI * NJ; ++i) acc[i] = TC(0);
  }
#pragma unroll
  for (int kk = 0; kk < K / 16; ++kk) {
    uint32_t bf[NJ + 1][2];
#pragma unroll
    for (int nj = 0; nj < NJ; nj += 2) {
      const int n0 = wn * (N / WN) + 8 * nj, j = lane >> 3;
      if constexpr (!TB) {
        const int r = kk * 16 + (lane & 7) + 8 * (j & 1), c = n0 + 8 * (j >> 1);
        const uint32_t addr = b_base + 2 * tile_offset<BR, BC, SWB, 2>(r, c);
        if (nj + 1 < NJ) ldsm_x4_trans(&bf[nj][0], addr);
        else ldsm_x2_trans(&bf[nj][0], addr);
      } else {
        const int r = n0 + (lane & 7) + 8 * (j >> 1), c = kk * 16 + 8 * (j & 1);
        const uint32_t addr = b_base + 2 * tile_offset<BR, BC, SWB, 2>(r, c);
        if (nj + 1 < NJ) ldsm_x4(&bf[nj][0], addr);
        else ldsm_x2(&bf[nj][0], addr);
      }
    }
#pragma unroll
    for (int mi = 0; mi < MI; ++mi) {
      const uint32_t af[4] = {rs_a_word<2 * MI, K, TA>(A, 2 * mi, 4 * kk), rs_a_word<2 * MI, K, TA>(A, 2 * mi + 1, 4 * kk),
                              rs_a_word<2 * MI, K, TA>(A, 2 * mi, 4 * kk + 2),
                              rs_a_word<2 * MI, K, TA>(A, 2 * mi + 1, 4 * kk + 2)};
#pragma unroll
      for (int nj = 0; nj < NJ; ++nj) {
        TC *row0 = acc + (2 * mi) * (2 * NJ) + 2 * nj, *row1 = row0 + 2 * NJ;
        mma_x<T, T, TC>(row0, row1, af, bf[nj]);
      }
    }
  }
}

/* mma.sync m16n8k8 tf32 with A in registers.  A's fragment is shaped like an accumulator
 * (thread (g, t) holds columns 2t, 2t+1 of each 8-column block, rows g and g+8), while the
 * instruction wants columns t and t+4.  A product sums over k, so any permutation of k
 * applied to both operands gives the same result: k-slot t is read as column 2t and k-slot
 * t+4 as column 2t+1, for A from the registers the thread already holds and for B by
 * loading rows 2t and 2t+1 (PTX ISA, mma.m16n8k8 .tf32 fragments: a0 (g, t), a1 (g+8, t),
 * a2 (g, t+4), a3 (g+8, t+4); b0 (k=t, n=g), b1 (k=t+4, n=g)). */
template <int M, int N, int K, int WM, int WN, bool TA, bool TB, int SWB, bool CLEAR, class T, class TC>
TS_DEV void gemm_rs_tf32(const T *A, const T *B, TC *acc, int tid) {
  constexpr int MI = M / (16 * WM), NJ = N / (8 * WN);
  constexpr int BR = TB ? N : K, BC = TB ? K : N;
  static_assert(sizeof(T) == 4 && M % (16 * WM) == 0 && N % (8 * WN) == 0 && K % 8 == 0,
                "tile does not fit mma.sync m16n8k8");
  const int g = lane_group(tid), t = lane_quad(tid), n_base = ((tid >> 5) % (WM * WN)) / WM * (N / WN);
  if constexpr (CLEAR) {
#pragma unroll
    for (int i = 0; i < 4 * MI * NJ; ++i) acc[i] = TC(0);
  }
#pragma unroll
  for (int kk = 0; kk < K / 8; ++kk) {
    uint32_t bf[NJ][2];
#pragma unroll
    for (int nj = 0; nj < NJ; ++nj)
#pragma unroll
      for (int v = 0; v < 2; ++v) {
        const int k = kk * 8 + 2 * t + v, n = n_base + 8 * nj + g;
        bf[nj][v] = bit_cast<uint32_t>(B[TB ? tile_offset<BR, BC, SWB, 4>(n, k) : tile_offset<BR, BC, SWB, 4>(k, n)]);
      }
#pragma unroll
    for (int mi = 0; mi < MI; ++mi) {
      const uint32_t af[4] = {bit_cast<uint32_t>(A[rs_a_reg<2 * MI, K, TA>(2 * mi, 2 * kk)]),
                              bit_cast<uint32_t>(A[rs_a_reg<2 * MI, K, TA>(2 * mi + 1, 2 * kk)]),
                              bit_cast<uint32_t>(A[rs_a_reg<2 * MI, K, TA>(2 * mi, 2 * kk + 1)]),
                              bit_cast<uint32_t>(A[rs_a_reg<2 * MI, K, TA>(2 * mi + 1, 2 * kk + 1)])};
#pragma unroll
      for (int nj = 0; nj < NJ; ++nj) {
        TC *row0 = acc + (2 * mi) * (2 * NJ) + 2 * nj, *row1 = row0 + 2 * NJ;
        mma_x<T, T, TC>(row0, row1, af, bf[nj]);
      }
    }
  }
}

/* mma.sync m16n8k32 with 8-bit A (int8/uint8, fp8) in registers.  A's fragment is shaped
 * like an accumulator with K as its columns (thread (g, t) holds columns 2t, 2t+1 of each
 * 8-column block, rows g and g+8), while the instruction wants, per register r (0, 1), the
 * four bytes at k = 16r + 4t .. 16r + 4t + 3 (PTX ISA, mma.m16n8k32 8-bit fragments: a0..a3
 * (g, 4t + i), a4..a7 (g+8, 4t + i), a8..a11 (g, 16 + 4t + i), a12..a15 (g+8, 16 + 4t + i);
 * b0..b3 (k = 4t + i, n = g), b4..b7 (k = 16 + 4t + i, n = g)).  As in gemm_rs_tf32 the k
 * order is permuted for both operands: slot 16r + 4t + i of K step kk stands for column
 * 32kk + 8(2r + i/2) + 2t + i%2.  Those are A's registers lk = 8kk + 4r + i of the thread
 * (lk = 2 * block8 + v), four consecutive bytes: one 32-bit word; B (K-major, [N][K]) is
 * read as two 16-bit pairs, columns 2t, 2t+1 of blocks 2r and 2r+1 of row n. */
template <int M, int N, int K, int WM, int WN, bool TA, bool TB, int SWB, bool CLEAR, class T, class TC>
TS_DEV void gemm_rs_8(const T *A, const T *B, TC *acc, int tid) {
  constexpr int MI = M / (16 * WM), NJ = N / (8 * WN);
  static_assert(sizeof(T) == 1 && !TA && TB && M % (16 * WM) == 0 && N % (8 * WN) == 0 && K % 32 == 0,
                "8-bit A in registers: K-major A [M][K] and B [N][K], tile fitting mma.sync m16n8k32");
  const int g = lane_group(tid), t = lane_quad(tid), n_base = ((tid >> 5) % (WM * WN)) / WM * (N / WN);
  const uint16_t *B16 = reinterpret_cast<const uint16_t *>(B);
  const uint32_t *A32 = reinterpret_cast<const uint32_t *>(A);
  if constexpr (CLEAR) {
#pragma unroll
    for (int i = 0; i < 4 * MI * NJ; ++i) acc[i] = TC(0);
  }
#pragma unroll
  for (int kk = 0; kk < K / 32; ++kk) {
    uint32_t bf[NJ][2];
#pragma unroll
    for (int nj = 0; nj < NJ; ++nj)
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const int n = n_base + 8 * nj + g, k = kk * 32 + 16 * r + 2 * t; /* even: a pair in one 16-byte chunk */
        const uint32_t lo = B16[tile_offset<N, K, SWB, 1>(n, k) / 2], hi = B16[tile_offset<N, K, SWB, 1>(n, k + 8) / 2];
        bf[nj][r] = lo | (hi << 16);
      }
#pragma unroll
    for (int mi = 0; mi < MI; ++mi) {
      /* register (lm, lk) is lm * K/4 + lk (rs_a_reg); 4 | K/4, so each word is aligned */
      const uint32_t af[4] = {A32[((2 * mi) * (K / 4) + 8 * kk) / 4], A32[((2 * mi + 1) * (K / 4) + 8 * kk) / 4],
                              A32[((2 * mi) * (K / 4) + 8 * kk + 4) / 4],
                              A32[((2 * mi + 1) * (K / 4) + 8 * kk + 4) / 4]};
#pragma unroll
      for (int nj = 0; nj < NJ; ++nj) {
        TC *row0 = acc + (2 * mi) * (2 * NJ) + 2 * nj, *row1 = row0 + 2 * NJ;
        mma_x<T, T, TC>(row0, row1, af, bf[nj]);
      }
    }
  }
}

/* ---- wgmma (sm_90a) -------------------------------------------------------------------- */
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 900) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define TS_HAS_WGMMA 1
#endif

/* The wgmma widths N (of m64nNk*) the dispatchers below expand, as X(n, arg) items.  Every
 * width costs NVRTC parse time in every type family (all 32 of them: about 0.6 s per
 * compile), so codegen (cuda.c) defines this list before the include with the widths its
 * kernel issues (N / WGN of each wgmma GEMM call); a width missing from it is a
 * static_assert, never a silently skipped instruction.  Without a definition: all. */
#ifndef TS_WGMMA_N_LIST
#define TS_WGMMA_N_LIST(X, A) X(8, A) X(16, A) X(24, A) X(32, A) X(40, A) X(48, A) X(56, A) X(64, A) \
  X(72, A) X(80, A) X(88, A) X(96, A) X(104, A) X(112, A) X(120, A) X(128, A) X(136, A) X(144, A)   \
  X(152, A) X(160, A) X(168, A) X(176, A) X(184, A) X(192, A) X(200, A) X(208, A) X(216, A)         \
  X(224, A) X(232, A) X(240, A) X(248, A) X(256, A)
#endif
#define TS_WGMMA_OR_IS(n, NI) || (NI) == (n)

/* Shared-memory matrix descriptor: start address, leading/stride byte offsets (16-byte
 * units) and the swizzle mode (1 = 128B, 2 = 64B, 3 = 32B). */
TS_DEV uint64_t gmma_desc(uint32_t addr, uint32_t lbo, uint32_t sbo, int sw) {
  const uint64_t mode = sw == 128 ? 1 : sw == 64 ? 2 : 3;
  return (uint64_t)((addr & 0x3FFFF) >> 4) | ((uint64_t)((lbo >> 4) & 0x3FFF) << 16) |
         ((uint64_t)((sbo >> 4) & 0x3FFF) << 32) | (mode << 62);
}

/* The descriptor of the 16-deep K slice at k0 of rows [mn0, mn0 + extent) of an operand
 * tile.  K-major ([MN][K] storage): atoms of W bytes along K, 8-row groups SBO = 8W apart,
 * LBO unused.  MN-major ([K][MN] storage): atoms of W bytes along MN, LBO = K*W apart
 * (one atom column holds all K rows), 8-row K groups SBO = 8W apart. */
template <int MN, int KD, int W, bool MN_MAJOR, int EB = 2> TS_DEV uint64_t operand_desc(uint32_t base, int mn0, int k0) {
  constexpr int A = W / EB;
  if constexpr (!MN_MAJOR)
    return gmma_desc(base + (k0 / A) * (MN * W) + mn0 * W + (k0 % A) * EB, 16, 8 * W, W);
  else
    return gmma_desc(base + (mn0 / A) * (KD * W) + k0 * W + (mn0 % A) * EB, KD * W, 8 * W, W);
}

TS_DEV void wgmma_fence() {
#ifdef TS_HAS_WGMMA
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
}
TS_DEV void wgmma_commit() {
#ifdef TS_HAS_WGMMA
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#endif
}
template <int N> TS_DEV void wgmma_wait() {
#ifdef TS_HAS_WGMMA
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
#endif
}
/* Keeps the compiler from moving accumulator reads/writes across the asynchronous MMA
 * (fp32 registers as such, other accumulator types as 32-bit words). */
template <int N, class TC = float> TS_DEV void fence_regs(TC *r) {
  if constexpr (is_same<TC, float>::value) {
#pragma unroll
    for (int i = 0; i < N; ++i) asm volatile("" : "+f"(r[i])::"memory");
  } else {
    uint32_t *w = reinterpret_cast<uint32_t *>(r);
#pragma unroll
    for (int i = 0; i < N * (int)sizeof(TC) / 4; ++i) asm volatile("" : "+r"(w[i])::"memory");
  }
}

/* One m64nNIk16 wgmma into the NI/2 accumulators at p (compiler order: row half h major,
 * then 8-column block, then pair; the instruction's order is block, h, pair). */
template <int NI, class T, int TA, int TB> TS_DEV void wgmma_ss(float *p, uint64_t da, uint64_t db, int scale_d) {
#ifdef TS_HAS_WGMMA
#define TS_WGMMA_D(i) p[(((i) >> 1) & 1) * (NI / 4) + ((i) >> 2) * 2 + ((i) & 1)]
#define TS_WGMMA_CASE(n, unused)                                                          \
  if constexpr (NI == n) {                                                                \
    if constexpr (is_same<T, half>::value)                                                \
      TS_WGMMA_SS_N##n("f32.f16.f16", TS_WGMMA_D, da, db, scale_d, TA, TB);               \
    else                                                                                  \
      TS_WGMMA_SS_N##n("f32.bf16.bf16", TS_WGMMA_D, da, db, scale_d, TA, TB);             \
  }
  static_assert(false TS_WGMMA_N_LIST(TS_WGMMA_OR_IS, NI), "wgmma width N missing from TS_WGMMA_N_LIST");
  TS_WGMMA_N_LIST(TS_WGMMA_CASE, _)
#undef TS_WGMMA_CASE
#undef TS_WGMMA_D
#else
  (void)p; (void)da; (void)db; (void)scale_d;
  __trap(); /* the compiler only plans wgmma for sm_90a */
#endif
}

/* One wgmma of any other type combination (wgmma_rx.cuh): SS when ra is null (A through
 * the descriptor da), RS otherwise (A in the 4 registers ra). */
#define TS_WGX_1(n, ARGS) TS_WGX_1_(n, TS_WGX_UNPACK ARGS)
#define TS_WGX_UNPACK(...) __VA_ARGS__
#define TS_WGX_1_(n, ...) TS_WGX_1__(n, __VA_ARGS__)
#define TS_WGX_1__(n, FAM, KT, TAIL, CONS, D, AOP)                                                 \
  if constexpr (NI == n) {                                                                         \
    FAM##n("wgmma.mma_async.sync.aligned.m64n" #n KT, TAIL, CONS, D, AOP, db, scale_d);            \
  }
#define TS_WGX_ALLN(FAM, KT, TAIL, CONS, D, AOP) TS_WGMMA_N_LIST(TS_WGX_1, (FAM, KT, TAIL, CONS, D, AOP))
#define TS_WGX_16(FAMS, FAMR, KT, CONS, D)                                                        \
  if constexpr (RS) {                                                                              \
    if constexpr (TRB) { TS_WGX_ALLN(FAMR, KT, "p, 1, 1, 1", CONS, D, ra) }                       \
    else { TS_WGX_ALLN(FAMR, KT, "p, 1, 1, 0", CONS, D, ra) }                                    \
  } else if constexpr (TRA && TRB) { TS_WGX_ALLN(FAMS, KT, "p, 1, 1, 1, 1", CONS, D, da) }        \
  else if constexpr (TRA) { TS_WGX_ALLN(FAMS, KT, "p, 1, 1, 1, 0", CONS, D, da) }                 \
  else if constexpr (TRB) { TS_WGX_ALLN(FAMS, KT, "p, 1, 1, 0, 1", CONS, D, da) }                 \
  else { TS_WGX_ALLN(FAMS, KT, "p, 1, 1, 0, 0", CONS, D, da) }
#define TS_WGX_FP8(TAILKT, FAM, CONS, D)                                                          \
  if constexpr (is_same<TA_, __nv_fp8_e4m3>::value && is_same<TB_, __nv_fp8_e4m3>::value) {        \
    TS_WGX_ALLN(FAM, "k32." TAILKT ".e4m3.e4m3", "p, 1, 1", CONS, D, da)                           \
  } else if constexpr (is_same<TA_, __nv_fp8_e4m3>::value) {                                       \
    TS_WGX_ALLN(FAM, "k32." TAILKT ".e4m3.e5m2", "p, 1, 1", CONS, D, da)                           \
  } else if constexpr (is_same<TB_, __nv_fp8_e4m3>::value) {                                       \
    TS_WGX_ALLN(FAM, "k32." TAILKT ".e5m2.e4m3", "p, 1, 1", CONS, D, da)                           \
  } else {                                                                                         \
    TS_WGX_ALLN(FAM, "k32." TAILKT ".e5m2.e5m2", "p, 1, 1", CONS, D, da)                           \
  }

template <int NI, class TA_, class TB_, class TC, int TRA, int TRB, bool RS>
TS_DEV void wgmma_x(TC *p, const uint32_t *ra, uint64_t da, uint64_t db, int scale_d) {
#ifdef TS_HAS_WGMMA
#define TS_WGX_DF(i) p[(((i) >> 1) & 1) * (NI / 4) + ((i) >> 2) * 2 + ((i) & 1)]
#define TS_WGX_DH(j) reinterpret_cast<uint32_t *>(p)[((j) & 1) * (NI / 8) + ((j) >> 1)]
  (void)ra;
  (void)da;
  static_assert(false TS_WGMMA_N_LIST(TS_WGMMA_OR_IS, NI), "wgmma width N missing from TS_WGMMA_N_LIST");
  if constexpr (is_same<TC, half>::value && is_same<TA_, half>::value) {
    TS_WGX_16(TS_WGX_SS_H, TS_WGX_RS_H, "k16.f16.f16.f16", "+r", TS_WGX_DH)
  } else if constexpr (is_same<TA_, half>::value) {
    TS_WGX_16(TS_WGX_SS_F, TS_WGX_RS_F, "k16.f32.f16.f16", "+f", TS_WGX_DF)
  } else if constexpr (is_same<TA_, __nv_bfloat16>::value) {
    TS_WGX_16(TS_WGX_SS_F, TS_WGX_RS_F, "k16.f32.bf16.bf16", "+f", TS_WGX_DF)
  } else if constexpr (is_same<TA_, float>::value) {
    TS_WGX_ALLN(TS_WGX_SS_F, "k8.f32.tf32.tf32", "p, 1, 1", "+f", TS_WGX_DF, da)
  } else if constexpr (is_same<TA_, int8_t>::value) {
    TS_WGX_ALLN(TS_WGX_SS_F, "k32.s32.s8.s8", "p", "+r", TS_WGX_DF, da)
  } else if constexpr (is_same<TA_, uint8_t>::value) {
    TS_WGX_ALLN(TS_WGX_SS_F, "k32.s32.u8.u8", "p", "+r", TS_WGX_DF, da)
  } else if constexpr (is_same<TC, half>::value) {
    TS_WGX_FP8("f16", TS_WGX_SS_H, "+r", TS_WGX_DH)
  } else {
    TS_WGX_FP8("f32", TS_WGX_SS_F, "+f", TS_WGX_DF)
  }
#undef TS_WGX_DF
#undef TS_WGX_DH
#else
  (void)p; (void)ra; (void)da; (void)db; (void)scale_d;
  __trap(); /* the compiler only plans wgmma for sm_90a */
#endif
}
#undef TS_WGX_FP8
#undef TS_WGX_16
#undef TS_WGX_ALLN
#undef TS_WGX_1
#undef TS_WGX_1_
#undef TS_WGX_1__
#undef TS_WGX_UNPACK

/* Issues C (+)= A * B for the block's warpgroups without waiting (T.wgmma_gemm); the
 * caller waits with wgmma_wait<N>() + fence.  WGM x WGN warpgroups; warpgroup (gm, gn)
 * owns 64-row atoms gm + WGM*a and columns [gn*N/WGN, (gn+1)*N/WGN). */
template <int M, int N, int K, int WGM, int WGN, bool TA, bool TB, int SWA, int SWB, bool CLEAR, class T, class TB2 = T,
          class TC = float>
TS_DEV void gemm_ss_wgmma_issue(const T *A, const TB2 *B, TC *acc, int tid) {
  constexpr int EB = sizeof(T), KI = 32 / EB, NI = N / WGN, MA = M / (64 * WGM);
  constexpr bool F16F32 = (is_same<T, half>::value || is_same<T, __nv_bfloat16>::value) && is_same<TC, float>::value;
  static_assert(M % (64 * WGM) == 0 && N % WGN == 0 && NI % 8 == 0 && NI <= 256 && K % KI == 0,
                "tile does not fit wgmma m64nNkK");
  static_assert(EB == 2 || (!TA && TB), "8- and 32-bit wgmma operands must be K-major");
  const int wg = (tid >> 7) % (WGM * WGN), gm = wg % WGM, gn = wg / WGM;
  const uint32_t a_base = smem_u32(A), b_base = smem_u32(B);
  fence_regs<MA * NI / 2, TC>(acc);
  wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < K / KI; ++kk)
#pragma unroll
    for (int a = 0; a < MA; ++a) {
      const uint64_t da = operand_desc<M, K, SWA, TA, EB>(a_base, 64 * (gm + WGM * a), KI * kk);
      const uint64_t db = operand_desc<N, K, SWB, !TB, EB>(b_base, gn * NI, KI * kk);
      if constexpr (F16F32)
        wgmma_ss<NI, T, TA ? 1 : 0, TB ? 0 : 1>(acc + a * (NI / 2), da, db, (CLEAR && kk == 0) ? 0 : 1);
      else
        wgmma_x<NI, T, TB2, TC, TA ? 1 : 0, TB ? 0 : 1, false>(acc + a * (NI / 2), nullptr, da, db,
                                                               (CLEAR && kk == 0) ? 0 : 1);
    }
  wgmma_commit();
}

/* T.gemm on sm_90a: synchronous (the accumulators are valid when it returns). */
template <int M, int N, int K, int WGM, int WGN, bool TA, bool TB, int SWA, int SWB, bool CLEAR, class T, class TB2 = T,
          class TC = float>
TS_DEV void gemm_ss_wgmma(const T *A, const TB2 *B, TC *acc, int tid) {
  constexpr int NI = N / WGN, MA = M / (64 * WGM);
  gemm_ss_wgmma_issue<M, N, K, WGM, WGN, TA, TB, SWA, SWB, CLEAR, T>(A, B, acc, tid);
  wgmma_wait<0>();
  fence_regs<MA * NI / 2, TC>(acc);
}

/* wgmma RS (A in registers, 16-bit types): A is the fragment [M x K] that the compiler
 * lays out like a GEMM accumulator with the same warpgroups along M and one along N
 * (fragment_gemm_acc(M, K, 4*WGM, 1)), whose thread/register placement is exactly the
 * wgmma A operand: for K step kk and atom a, the 4 registers are the (row h, 8-column
 * block b) pairs (0, 2kk), (1, 2kk), (0, 2kk+1), (1, 2kk+1).  B is in shared memory.
 * WGM warpgroups along M, WGN along N (warpgroup w: atoms w % WGM + WGM*a, columns
 * [N/WGN * (w / WGM), ..)): the A fragment is replicated over the WGN warpgroup columns,
 * each of which issues m64nNI with NI = N/WGN from the same A registers.  TA: A stored
 * [K x M] (rs_a_reg). */
template <int M, int N, int K, int WGM, int WGN, bool TA, bool TB, int SWB, bool CLEAR, class T, class TC = float>
TS_DEV void gemm_rs_wgmma_issue(const T *A, const T *B, TC *acc, int tid) {
  constexpr int NI = N / WGN, MA = M / (64 * WGM);
  static_assert(sizeof(T) == 2, "wgmma RS: 16-bit A only");
  static_assert(M % (64 * WGM) == 0 && N % WGN == 0 && NI % 8 == 0 && NI <= 256 && K % 16 == 0,
                "tile does not fit wgmma m64nNk16");
  const uint32_t b_base = smem_u32(B);
  const int gn = ((tid >> 7) % (WGM * WGN)) / WGM;
  fence_regs<MA * NI / 2, TC>(acc);
  fence_regs<MA * K / 4 * 2, T>(const_cast<T *>(A));
  wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < K / 16; ++kk)
#pragma unroll
    for (int a = 0; a < MA; ++a) {
      const uint32_t ra[4] = {rs_a_word<2 * MA, K, TA>(A, 2 * a, 4 * kk), rs_a_word<2 * MA, K, TA>(A, 2 * a + 1, 4 * kk),
                              rs_a_word<2 * MA, K, TA>(A, 2 * a, 4 * kk + 2),
                              rs_a_word<2 * MA, K, TA>(A, 2 * a + 1, 4 * kk + 2)};
      const uint64_t db = operand_desc<N, K, SWB, !TB>(b_base, gn * NI, 16 * kk);
      wgmma_x<NI, T, T, TC, 0, TB ? 0 : 1, true>(acc + a * (NI / 2), ra, 0, db, (CLEAR && kk == 0) ? 0 : 1);
    }
  wgmma_commit();
}

template <int M, int N, int K, int WGM, int WGN, bool TA, bool TB, int SWB, bool CLEAR, class T, class TC = float>
TS_DEV void gemm_rs_wgmma(const T *A, const T *B, TC *acc, int tid) {
  gemm_rs_wgmma_issue<M, N, K, WGM, WGN, TA, TB, SWB, CLEAR, T>(A, B, acc, tid);
  wgmma_wait<0>();
  fence_regs<M / (64 * WGM) * (N / WGN) / 2, TC>(acc);
}

/* The wait half of gemm_ss_wgmma_issue: at most PENDING wgmma groups still running
 * (0: the accumulators are valid). */
template <int NREGS, int PENDING, class TC = float> TS_DEV void gemm_wgmma_wait(TC *acc) {
  wgmma_wait<PENDING>();
  fence_regs<NREGS, TC>(acc);
}

/* ---- stream-K (warp_specialize's persistent schedule) ------------------------------------
 * When the tiles do not fill the last wave (tiles % G != 0 for G persistent blocks), all
 * full waves but the last run tile by tile and the rest of the work, (tiles - dp) * KT
 * k-iterations, is split evenly over the G blocks: block b takes iterations
 * [sk_begin(b), sk_begin(b + 1)).  A tile cut between blocks is finished by the block that
 * computed its first k-iterations (at the end of its range): each later block that worked on
 * it (at the start of its own range, so long before) left its partial accumulators in its
 * slot of the workspace and raised its flag; the finisher adds them and stores the tile.
 * A block contributes at most one partial (its first segment), so one slot per block.  The
 * flags are zero at module load and the finisher lowers each one it consumed, so they are
 * zero again after every launch.  More than SK_MAX_BLOCKS blocks: no stream-K. */
constexpr int SK_MAX_BLOCKS = 256;

template <int NREGS, int T> TS_DEV float *sk_workspace() {
  static __device__ float ws[(size_t)SK_MAX_BLOCKS * NREGS * T];
  return ws;
}
template <int NREGS, int T> TS_DEV unsigned *sk_flags() {
  static __device__ unsigned flags[SK_MAX_BLOCKS];
  return flags;
}

/* Tiles run tile by tile (the data-parallel part): all of them when they fill the waves. */
TS_DEV int sk_dp_tiles(int tiles, int G) {
  if (G <= 0 || tiles % G == 0 || G > SK_MAX_BLOCKS) return tiles;
  const int waves = tiles / G;
  return (waves > 0 ? waves - 1 : 0) * G;
}
/* The first stream-K iteration of block b (of `iters`, split over G blocks). */
TS_DEV int sk_begin(int b, int G, int iters) { return (int)((long long)b * iters / G); }
/* Tiles (segments) a range [s, e) of iterations touches, KT iterations per tile. */
TS_DEV int sk_segments(int s, int e, int KT) { return s < e ? (e - 1) / KT - s / KT + 1 : 0; }

/* A later block's partial: this block's accumulators into its slot, then its flag
 * (release: every consumer thread's stores are ordered before it). */
template <int NREGS, int T> TS_DEV void sk_store_partial(const float *acc, int b, int tid) {
  float *w = sk_workspace<NREGS, T>() + (size_t)b * NREGS * T;
#pragma unroll
  for (int r = 0; r < NREGS; ++r) __stcg(w + r * T + tid, acc[r]);
  __threadfence();
  named_barrier_sync<1, T>();
  if (tid == 0) asm volatile("st.release.gpu.global.u32 [%0], %1;\n" ::"l"(sk_flags<NREGS, T>() + b), "r"(1u) : "memory");
}

/* The finisher of a tile whose iterations end at `tile_end` (in the stream-K numbering):
 * adds the partial of every later block whose range starts before that. */
template <int NREGS, int T> TS_DEV void sk_fixup(float *acc, int b, int G, int iters, int tile_end, int tid) {
  unsigned *flags = sk_flags<NREGS, T>();
  for (int b2 = b + 1; b2 < G && sk_begin(b2, G, iters) < tile_end; ++b2) {
    if (sk_begin(b2 + 1, G, iters) == sk_begin(b2, G, iters)) continue; /* no iterations: no partial */
    if (tid == 0) {
      unsigned v;
      uint64_t t0;
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
      for (unsigned spin = 0;; ++spin) {
        asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(v) : "l"(flags + b2) : "memory");
        if (v) break;
        if ((spin & 1023) == 1023) { /* a partial never comes only through a bug: trap, never hang */
          uint64_t t1;
          asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
          if (t1 - t0 > 10000000000ull) {
            printf("tilescale: stream-K block %d waited 10 s for the partial of block %d\n", b, b2);
            __trap();
          }
        }
      }
      flags[b2] = 0; /* consumed: zero for the next launch */
    }
    named_barrier_sync<1, T>();
    const float *w = sk_workspace<NREGS, T>() + (size_t)b2 * NREGS * T;
#pragma unroll
    for (int r = 0; r < NREGS; ++r) acc[r] += __ldcg(w + r * T + tid);
  }
}

} // namespace ts
