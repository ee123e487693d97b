# A reducer epoch used wrongly: an update outside T.Parallel, a double init, a finalize in another
# loop than its init, an init value of another dtype, a reducer never finalized.
# tilescale-test: -k epochs
import tilelang
import tilelang.language as T


@tilelang.jit
def epochs():
    @T.prim_func
    def main(A: T.Tensor((8,), "float32"), B: T.Tensor((1,), "float32")):
        with T.Kernel(1, threads=128):
            src = T.alloc_fragment((8,), "float32")
            T.copy(A, src)
            acc = T.alloc_reducer((1,), "float32", op="sum")
            T.reducer_init(acc)
            T.reducer_update(acc[0], src[0])
            T.reducer_init(acc)
            result = T.alloc_fragment((1,), "float32")
            for _ in T.serial(2):
                T.finalize_reducer(acc, result)
            mx = T.alloc_reducer((1,), "float32", op="max")
            T.reducer_init(mx, T.float16(1.0))
            left = T.alloc_reducer((1,), "float32", op="min")
            T.reducer_init(left)
            B[0] = result[0]

    return main
