/* gemm_sp.cuh — T.gemm_sp: C += A * B with A 2:4 sparse along K, on the sparse tensor cores
 * (mma.sp m16n8k32, sm_80+, also what this path uses on sm_90a; 8-bit operands:
 * gemm_sp_ss_mma8, mma.sp m16n8k64 for int8 and float8, sm_89+).
 *
 *   lower_tile_ops prints `ts::gemm_sp_ss_mma<M, N, K, ...>(&A_s[..], &E_s[..], &B_s[..],
 *   &C_local[0], tid)`; codegen includes this file when a kernel calls it.
 *
 * Operands (the contract of tilelang/cuda/intrinsics/sparse_layout.py and the compressor):
 *  - A is compressed: [M][K/2], the two kept values of every group of 4 along K, in order;
 *  - E is the metadata, [M][K/e_factor] of any integer type, row-major in shared memory:
 *    4 bits a group (bits 1:0 the first kept index, 3:2 the second, ascending), packed
 *    little-endian, so a row is a bit stream of K/8 bytes whatever E's element type;
 *  - B is [K][N] (TB: [N][K]) and the accumulator is the C fragment of gemm_ss_mma (the
 *    compiler's fragment_gemm_acc), so T.copy of C works as for T.gemm.
 * Hardware facts: the sparse m16n8k32 instruction takes A as the 16x16 compressed tile in
 * the registers of a dense m16n8k16 A fragment (ldmatrix x4), B as the 32x8 tile of two
 * stacked m16n8k16 B fragments (four registers), and one 32-bit metadata register from the
 * threads of each quad that the sparsity selector names: with selector 0, lanes 4g and
 * 4g + 1.  Lane 4g + t (t = 0, 1) holds the 16 bits of K columns 16t .. 16t + 15 for row g
 * (bits 15:0) and row g + 8 (bits 31:16). */
#pragma once

#include <tilescale/gemm.cuh>

namespace ts {

/* One mma.sp with float32 accumulators (row0[0..1], row1[0..1]), four A and four B registers
 * a[], b[] and metadata e in scope; `types` is the instruction's shape and type suffix. */
#define TS_MMA_SP_F32(types)                                                                                   \
  asm volatile("mma.sp::ordered_metadata.sync.aligned." types " {%0, %1, %2, %3}, {%4, %5, %6, %7}, "            \
               "{%8, %9, %10, %11}, {%0, %1, %2, %3}, %12, 0x0;\n"                                             \
               : "+f"(row0[0]), "+f"(row0[1]), "+f"(row1[0]), "+f"(row1[1])                                    \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(b[2]), "r"(b[3]), "r"(e))

/* row0/row1 (rows g and g+8, two adjacent columns each) += A (compressed 16x16, 4 regs) *
 * B (32x8, 4 regs) with metadata e; ordered metadata: each group's indices ascend. */
template <class T, class TC>
TS_DEV void mma_sp_16832(TC *row0, TC *row1, const uint32_t *a, const uint32_t *b, uint32_t e) {
  if constexpr (is_same<TC, half>::value) {
    static_assert(is_same<T, half>::value, "fp16 accumulation needs fp16 operands");
    uint32_t *d0 = reinterpret_cast<uint32_t *>(row0), *d1 = reinterpret_cast<uint32_t *>(row1);
    asm volatile("mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f16.f16.f16.f16 {%0, %1}, "
                 "{%2, %3, %4, %5}, {%6, %7, %8, %9}, {%0, %1}, %10, 0x0;\n"
                 : "+r"(*d0), "+r"(*d1)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(b[2]), "r"(b[3]), "r"(e));
  } else if constexpr (is_same<T, half>::value) {
    TS_MMA_SP_F32("m16n8k32.row.col.f32.f16.f16.f32");
  } else {
    static_assert(is_same<T, __nv_bfloat16>::value, "mma.sp m16n8k32 takes float16 or bfloat16 operands");
    TS_MMA_SP_F32("m16n8k32.row.col.f32.bf16.bf16.f32");
  }
}

/* The metadata register of a 16-row strip at row m0 for the k32 step kk (see above): the
 * 16-bit halves of rows g and g + 8 that hold K columns 32 kk + 16 (t & 1) ...; lanes with
 * t = 2, 3 read the same as t = 0, 1 (the instruction ignores them). */
template <int K> TS_DEV uint32_t sparse_meta(const uint8_t *E, int m0, int kk, int g, int t) {
  constexpr int ROW_BYTES = K / 8; /* 4 bits per group of 4 columns */
  const int byte = kk * 4 + (t & 1) * 2;
  const uint32_t lo = *reinterpret_cast<const uint16_t *>(E + (m0 + g) * ROW_BYTES + byte);
  const uint32_t hi = *reinterpret_cast<const uint16_t *>(E + (m0 + g + 8) * ROW_BYTES + byte);
  return lo | (hi << 16);
}

template <int N, class TC> TS_DEV void zero_acc(TC *acc) {
#pragma unroll
  for (int i = 0; i < N; ++i) acc[i] = TC(0);
}

/* 8-bit operands: row0/row1 += A * B with metadata e, mma.sp m16n8k64 (A the compressed
 * 16x32 bytes in 4 registers, B 64x8 bytes in 4): int8 with int32 accumulators, float8
 * e4m3 / e5m2 with float32. */
template <class T, class TC> TS_DEV void mma_sp8(TC *row0, TC *row1, const uint32_t *a, const uint32_t *b, uint32_t e) {
  if constexpr (is_same<T, int8_t>::value) {
    int *d0 = reinterpret_cast<int *>(row0), *d1 = reinterpret_cast<int *>(row1);
    asm volatile("mma.sp::ordered_metadata.sync.aligned.m16n8k64.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, "
                 "{%4, %5, %6, %7}, {%8, %9, %10, %11}, {%0, %1, %2, %3}, %12, 0x0;\n"
                 : "+r"(d0[0]), "+r"(d0[1]), "+r"(d1[0]), "+r"(d1[1])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(b[2]), "r"(b[3]), "r"(e));
  } else if constexpr (is_same<T, __nv_fp8_e4m3>::value) {
    TS_MMA_SP_F32("m16n8k64.row.col.f32.e4m3.e4m3.f32");
  } else {
    static_assert(is_same<T, __nv_fp8_e5m2>::value, "8-bit mma.sp takes int8, float8_e4m3 or float8_e5m2");
    TS_MMA_SP_F32("m16n8k64.row.col.f32.e5m2.e5m2.f32");
  }
}

/* The 8-bit T.gemm_sp: A compressed [M][K/2] bytes, B [N][K] (K-major, as the 8-bit tensor
 * cores read it), E as for 16 bits; one m16n8k64 step takes 32 compressed bytes of A's rows
 * (registers: rows g / g + 8 of bytes 0-15, then of bytes 16-31: ldmatrix x4), 64 bytes of
 * B's rows (registers of its 16-byte column chunks, the dense 8-bit B fragment) and a
 * metadata word per lane covering 32 dense columns of one row: lane 4g + t holds row
 * g + 8 (t & 1), columns 32 (t >> 1) .. + 31 (its 8 groups in order, the first 16 columns in
 * bits 15:0), all four lanes of a quad (sparsity selector 0). */
/* The metadata word of lane 4g + t for the k64 step kk of the 16-row strip at m0 (above). */
template <int K> TS_DEV uint32_t sparse_meta8(const void *E, int m0, int kk, int g, int t) {
  constexpr int ROW_BYTES = K / 8; /* 4 bits per group of 4 columns */
  const uint8_t *row = reinterpret_cast<const uint8_t *>(E) + (m0 + g + 8 * (t & 1)) * ROW_BYTES;
  return *reinterpret_cast<const uint32_t *>(row + kk * 8 + (t >> 1) * 4);
}

template <int M, int N, int K, int WM, int WN, int SWA, int SWB, bool CLEAR, class T, class TC>
TS_DEV void gemm_sp_ss_mma8(const T *A, const void *E, const T *B, TC *acc, int tid) {
  constexpr int KA = K / 2, MI = M / (16 * WM), NJ = N / (8 * WN);
  static_assert(M % (16 * WM) == 0 && N % (8 * WN) == 0 && K % 64 == 0, "tile does not fit mma.sp m16n8k64");
  const int lane = tid & 31, warp = (tid >> 5) % (WM * WN), wm = warp % WM, wn = warp / WM;
  const int g = lane_group(tid), t = lane_quad(tid);
  const uint32_t a_base = smem_u32(A), b_base = smem_u32(B);
  if constexpr (CLEAR) zero_acc<4 * MI * NJ>(acc);
#pragma unroll
  for (int kk = 0; kk < K / 64; ++kk) {
    uint32_t af[MI][4], ef[MI];
#pragma unroll
    for (int mi = 0; mi < MI; ++mi) {
      const int m0 = 16 * (wm + WM * mi);
      ldsm_x4(af[mi], a_base + tile_offset<M, KA, SWA, 1>(m0 + (lane & 15), kk * 32 + (lane >> 4) * 16));
      ef[mi] = sparse_meta8<K>(E, m0, kk, g, t);
    }
#pragma unroll
    for (int nj = 0; nj < NJ; ++nj) {
      const int n0 = wn * (N / WN) + 8 * nj;
      uint32_t bf[4]; /* chunk j of the step (k 16 j .. 16 j + 15) from lanes 8 j .. 8 j + 7 */
      ldsm_x4(bf, b_base + tile_offset<N, K, SWB, 1>(n0 + (lane & 7), kk * 64 + 16 * (lane >> 3)));
#pragma unroll
      for (int mi = 0; mi < MI; ++mi) {
        TC *row0 = acc + (2 * mi) * (2 * NJ) + 2 * nj, *row1 = row0 + 2 * NJ;
        mma_sp8<T, TC>(row0, row1, af[mi], bf, ef[mi]);
      }
    }
  }
}

/* C[M x N] (+)= A * B for one block with WM x WN warps (warps along M first, as
 * gemm_ss_mma); K is the dense reduction extent (A holds K/2 columns).  A is swizzled by
 * SWA bytes, B by SWB, E row-major. */
template <int M, int N, int K, int WM, int WN, bool TB, int SWA, int SWB, bool CLEAR, class T, class TC>
TS_DEV void gemm_sp_ss_mma16(const T *A, const void *E, const T *B, TC *acc, int tid) {
  constexpr int KA = K / 2, MI = M / (16 * WM), NJ = N / (8 * WN);
  constexpr int BR = TB ? N : K, BC = TB ? K : N;
  static_assert(sizeof(T) == 2, "the 16-bit T.gemm_sp takes float16 or bfloat16 operands");
  static_assert(M % (16 * WM) == 0 && N % (8 * WN) == 0 && K % 32 == 0, "tile does not fit mma.sp m16n8k32");
  const int lane = tid & 31, warp = (tid >> 5) % (WM * WN), wm = warp % WM, wn = warp / WM;
  const int g = lane_group(tid), t = lane_quad(tid);
  const uint32_t a_base = smem_u32(A), b_base = smem_u32(B);
  const uint8_t *e_bytes = reinterpret_cast<const uint8_t *>(E);
  if constexpr (CLEAR) zero_acc<4 * MI * NJ>(acc);
#pragma unroll
  for (int kk = 0; kk < K / 32; ++kk) {
    uint32_t af[MI][4], ef[MI];
#pragma unroll
    for (int mi = 0; mi < MI; ++mi) {
      const int m0 = 16 * (wm + WM * mi);
      const int r = m0 + (lane & 15), c = kk * 16 + (lane >> 4) * 8; /* 16 compressed columns a step */
      ldsm_x4(af[mi], a_base + 2 * tile_offset<M, KA, SWA, 2>(r, c));
      ef[mi] = sparse_meta<K>(e_bytes, m0, kk, g, t);
    }
    /* B two n8 blocks at a time (eight registers live, not the warp's whole row of B) */
#pragma unroll
    for (int nj = 0; nj < NJ; nj += 2) {
      const int n0 = wn * (N / WN) + 8 * nj, j = lane >> 3;
      uint32_t bf[2][4];
#pragma unroll
      for (int h = 0; h < 2; ++h) { /* the two 16-row halves of the 32-row B step */
        const int k0 = kk * 32 + 16 * h;
        uint32_t r4[4];
        if constexpr (!TB) {
          const uint32_t addr = b_base + 2 * tile_offset<BR, BC, SWB, 2>(k0 + (lane & 7) + 8 * (j & 1), n0 + 8 * (j >> 1));
          if (nj + 1 < NJ) ldsm_x4_trans(r4, addr);
          else ldsm_x2_trans(r4, addr);
        } else {
          const uint32_t addr = b_base + 2 * tile_offset<BR, BC, SWB, 2>(n0 + (lane & 7) + 8 * (j >> 1), k0 + 8 * (j & 1));
          if (nj + 1 < NJ) ldsm_x4(r4, addr);
          else ldsm_x2(r4, addr);
        }
        bf[0][2 * h] = r4[0];
        bf[0][2 * h + 1] = r4[1];
        bf[1][2 * h] = r4[2]; /* unused (and not written) when nj + 1 == NJ */
        bf[1][2 * h + 1] = r4[3];
      }
#pragma unroll
      for (int mi = 0; mi < MI; ++mi)
#pragma unroll
        for (int x = 0; x < 2; ++x)
          if (nj + x < NJ) {
            TC *row0 = acc + (2 * mi) * (2 * NJ) + 2 * (nj + x), *row1 = row0 + 2 * NJ;
            mma_sp_16832<T, TC>(row0, row1, af[mi], bf[x], ef[mi]);
          }
    }
  }
}

/* The entry point lower_tile_ops prints: the 16- or 8-bit path by the operand type. */
template <int M, int N, int K, int WM, int WN, bool TB, int SWA, int SWB, bool CLEAR, class T, class TC = float>
TS_DEV void gemm_sp_ss_mma(const T *A, const void *E, const T *B, TC *acc, int tid) {
  if constexpr (sizeof(T) == 1) {
    static_assert(TB, "8-bit T.gemm_sp reads B stored [N, K]");
    gemm_sp_ss_mma8<M, N, K, WM, WN, SWA, SWB, CLEAR, T, TC>(A, E, B, acc, tid);
  } else {
    gemm_sp_ss_mma16<M, N, K, WM, WN, TB, SWA, SWB, CLEAR, T, TC>(A, E, B, acc, tid);
  }
}

} // namespace ts
