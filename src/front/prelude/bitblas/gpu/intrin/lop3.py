"""bitblas.gpu.intrin.lop3: the CUDA device functions that BitBLAS kernels pass as a kernel
prelude (T.Kernel(prelude=...)) to turn packed 4-bit weights into float16 in registers.

decode_i4u_to_f16(src, dst, N=8) / decode_i4s_to_f16: the 32-bit word at src holds eight 4-bit
values n0..n7 (n_j in bits 4j .. 4j+3); dst[2i] = n_i and dst[2i + 1] = n_(i+4), i < N / 2, as
unsigned values, or minus 8 for the signed form.  That interleaved order is the one BitBLAS's
LOP3 permutation stores the weights in, so that each pair dst[2i], dst[2i + 1] is one f16x2
register of the mma B operand.  Written for this project from that contract (plain shifts
and conversions)."""

decode_i4_to_f16 = """
template <typename T1, typename T2, bool kSigned>
__device__ void ts_decode_i4_pairs_to_f16(T1 *src, T2 *dst, const int N) {
  const unsigned word = *reinterpret_cast<const unsigned *>(src);
  const int bias = kSigned ? 8 : 0;
  for (int i = 0; i < N / 2 && i < 4; ++i) {
    dst[2 * i] = __int2half_rn((int)((word >> (4 * i)) & 15u) - bias);
    dst[2 * i + 1] = __int2half_rn((int)((word >> (16 + 4 * i)) & 15u) - bias);
  }
}

template <typename T1, typename T2>
__device__ void decode_i4u_to_f16(T1 *src, T2 *dst, const int N = 8) {
  ts_decode_i4_pairs_to_f16<T1, T2, false>(src, dst, N);
}

template <typename T1, typename T2>
__device__ void decode_i4s_to_f16(T1 *src, T2 *dst, const int N = 8) {
  ts_decode_i4_pairs_to_f16<T1, T2, true>(src, dst, N);
}
"""
