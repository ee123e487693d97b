# Scalar atomics (add/max/min) and the tile form of T.atomic_add, whole buffers and with dst
# given by its corner element (Acc2[0, 0] += tile2, the split-K GEMM epilogue form).
# tilescale-test: -k atomics -D N=1024
import tilelang
import tilelang.language as T


@tilelang.jit
def atomics(N, block=128):

    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), Sum: T.Tensor((1,), "float32"), Mx: T.Tensor((1,), "int32"),
             Acc: T.Tensor((block,), "float32"), Acc2: T.Tensor((4, block), "float32")):
        with T.Kernel(N // block, threads=block) as bx:
            tx = T.get_thread_binding()
            T.atomic_add(Sum[0], A[bx * block + tx])
            T.atomic_max(Mx[0], T.cast(A[bx * block + tx], "int32"))
            T.atomic_min(Mx[0], 0)
            tile = T.alloc_fragment((block,), "float32")
            T.copy(A[bx * block], tile)
            T.atomic_add(Acc, tile)
            tile2 = T.alloc_fragment((2, block), "float32")
            T.fill(tile2, 1)
            T.atomic_add(Acc2[bx % 2 * 2, 0], tile2)

    return main
