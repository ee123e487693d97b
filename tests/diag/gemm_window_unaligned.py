# A column window of a swizzled tile that does not start on a swizzle atom of any width (8
# columns of bf16 are 16 bytes; the narrowest swizzle is 32) cannot be read by a GEMM.  (A
# window 32 columns in takes the 64-byte swizzle instead: test_interp_kernels.c.)
# tilescale-test: -k qk_split --arch sm_90a
import tilelang
import tilelang.language as T


@tilelang.jit
def qk_split(D=128, D_tail=64, H=64, N=64):

    @T.prim_func
    def main(Q: T.Tensor((H, D + D_tail), "bfloat16"), K: T.Tensor((N, D), "bfloat16"),
             K_tail: T.Tensor((N, D_tail), "bfloat16"), S: T.Tensor((H, N), "float32")):
        with T.Kernel(1, threads=128) as bx:
            Q_shared = T.alloc_shared((H, D + D_tail), "bfloat16")
            K_shared = T.alloc_shared((N, D), "bfloat16")
            K_tail_shared = T.alloc_shared((N, D_tail), "bfloat16")
            acc = T.alloc_fragment((H, N), "float32")
            T.copy(Q, Q_shared)
            T.copy(K, K_shared)
            T.copy(K_tail, K_tail_shared)
            T.gemm(Q_shared[:, 8:D + 8], K_shared, acc, transpose_B=True, clear_accum=True)
            
            T.copy(acc, S)

    return main
