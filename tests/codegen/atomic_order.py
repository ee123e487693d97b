# memory_order= on T.atomic_add: each element atomic gets the order through ts::atomic_fence
# (releasing orders fence before it, acquiring ones after), on the tile form (vectorized: a
# tile added from a global tensor moves half2 / float4 lanes like one from shared memory), the
# element form and return_prev.  regress_gpu.py runs it and checks the sums.
# tilescale-test: -k atomic_order -D N=256
# tilescale-dump: lower_tile_ops
import tilelang
import tilelang.language as T


@tilelang.jit
def atomic_order(N, dtype="float16"):

    @T.prim_func
    def main(X: T.Tensor((N,), dtype), Out: T.Tensor((N,), dtype), Count: T.Tensor((2,), "int32"),
             Prev: T.Tensor((N // 64,), "int32")):
        with T.Kernel(N // 64, threads=32) as bx:
            T.atomic_add(Out[bx * 64:bx * 64 + 64], X[bx * 64:bx * 64 + 64], memory_order="release")
            tx = T.get_thread_binding()
            if tx == 0:
                T.atomic_add(Count[0], 1, memory_order="acquire")
                Prev[bx] = T.atomic_add(Count[1], 2, memory_order="acq_rel", return_prev=True)

    return main
