# A fragment indexed in a T.Parallel nest by a loop var in one dim and by an enclosing serial
# loop's var in another (b[k, j] for a serial k) keeps the serial dim in every thread's
# registers and follows the nest's layout in the other (layout_inference's held layouts):
# b_local is 4 x 2 registers per thread, not all 4 x 256 (the old fully replicated
# layout).  The copy that fills b_local follows that layout (layouts are inferred a
# second time, held nests first, when the copy's vector layout disagrees).
# tilescale-test: -k held_mix -D N=256
# tilescale-dump: lower_tile_ops
import tilelang
import tilelang.language as T


@tilelang.jit
def held_mix(N, hc=4):

    @T.prim_func
    def main(A: T.Tensor((hc, hc), "float32"), B: T.Tensor((hc, N), "float32"), X: T.Tensor((hc, N), "float32")):
        with T.Kernel(1, threads=128) as bx:
            b_shared = T.alloc_shared((hc, N), "float32")
            a_local = T.alloc_fragment((hc, hc), "float32")
            b_local = T.alloc_fragment((hc, N), "float32")
            x_local = T.alloc_fragment((hc, N), "float32")
            T.copy(A, a_local)
            T.copy(B, b_shared)
            T.copy(b_shared, b_local)
            for i, j in T.Parallel(hc, N):
                x_local[i, j] = 0
                for k in T.serial(hc):
                    x_local[i, j] += a_local[k, i] * b_local[k, j]
            T.copy(x_local, X)

    return main
