# --emit stats of an implicit-GEMM convolution (T.im2col into shared memory, then T.gemm):
# exact FLOPs 2 * (N*OH*OW) * F * (KH*KW*C) = 2 * 512 * 128 * 576; the im2col loads are
# guarded (zero padding at the image border), so the bytes are an upper bound.
# tilescale-test: -k conv -D N=2 -D C=64 -D H=16 -D W=16 -D F=128
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[2])
def conv(N, C, H, W, F, K=3, S=1, D=1, P=1, block_M=64, block_N=128, block_K=32, dtype="float16"):
    KH, KW = K, K
    OH = (H + 2 * P - D * (K - 1) - 1) // S + 1
    OW = (W + 2 * P - D * (K - 1) - 1) // S + 1

    @T.prim_func
    def main(data: T.Tensor((N, H, W, C), dtype), kernel: T.Tensor((KH, KW, C, F), dtype),
             out: T.Tensor((N, OH, OW, F), dtype)):
        with T.Kernel(T.ceildiv(F, block_N), T.ceildiv(N * OH * OW, block_M), threads=128) as (bx, by):
            data_shared = T.alloc_shared((block_M, block_K), dtype)
            kernel_shared = T.alloc_shared((block_K, block_N), dtype)
            out_local = T.alloc_fragment((block_M, block_N), "float32")
            kernel_flat = T.Tensor((KH * KW * C, F), dtype, kernel.data)
            out_flat = T.Tensor((N * OH * OW, F), dtype, out.data)
            T.clear(out_local)
            for k_iter in T.Pipelined(T.ceildiv(KH * KW * C, block_K), num_stages=2):
                T.im2col(data, data_shared, by, k_iter, KH, S, D, P)
                T.copy(kernel_flat[k_iter * block_K, bx * block_N], kernel_shared)
                T.gemm(data_shared, kernel_shared, out_local)
            T.copy(out_local, out_flat[by * block_M, bx * block_N])

    return main
