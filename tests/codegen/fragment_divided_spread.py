# A divided read (`B_local[i, j >> 3]`: eight 4-bit values an int32) where the nest's layout
# comes from another fragment (X_local, copied in float32 vectors of 4): the 8 loop elements
# of one B_local element are the vectors of 2 adjacent threads, so B_local takes half the
# threads along j at twice the stride and each of the 2 holds a copy (a replicate field,
# fragment_derive_div): 4 registers per thread instead of all 16 x 16.  A GPU case of
# tests/corpus/regress_gpu.py.
# tilescale-test: -k unpack8_add
# tilescale-dump: lower_tile_ops
import tilelang
import tilelang.language as T


@tilelang.jit
def unpack8_add(N=16, K=128):
    # Y[i, j] = X[i, j] + nibble j % 8 of B[i, j // 8]

    @T.prim_func
    def main(X: T.Tensor((N, K), "float32"), B: T.Tensor((N, K // 8), "int32"), Y: T.Tensor((N, K), "float32")):
        with T.Kernel(1, threads=128) as bx:
            X_local = T.alloc_fragment((N, K), "float32")
            B_local = T.alloc_fragment((N, K // 8), "int32")
            Y_local = T.alloc_fragment((N, K), "float32")
            T.copy(X, X_local)
            T.copy(B, B_local)
            for i, j in T.Parallel(N, K):
                Y_local[i, j] = X_local[i, j] + T.Cast("float32", (B_local[i, j >> 3] >> (4 * (j % 8))) & 15)
            T.copy(Y_local, Y)

    return main
