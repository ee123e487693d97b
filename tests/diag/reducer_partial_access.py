# Between T.reducer_init and T.finalize_reducer each thread holds only its partial value of a
# reducer: a plain store into it (the v1 `acc[i] += x`) or a read of it is refused, naming the
# reducer (TileLang's reducer_v2 tests); T.reducer_update is the way in, the finalized result
# the way out.  A v1 reducer (T.clear, no T.reducer_init) keeps its plain updates.
# tilescale-test: -k partial
import tilelang
import tilelang.language as T


@tilelang.jit
def partial():
    @T.prim_func
    def main(A: T.Tensor((8,), "float32"), B: T.Tensor((2,), "float32")):
        with T.Kernel(1, threads=128):
            src = T.alloc_fragment((8,), "float32")
            T.copy(A, src)
            acc = T.alloc_reducer((1,), "float32", op="sum")
            T.reducer_init(acc)
            for i in T.Parallel(8):
                acc[0] += src[i]
            peek = T.alloc_reducer((1,), "float32", op="max")
            T.reducer_init(peek)
            for i in T.Parallel(8):
                T.reducer_update(peek[0], src[i])
            if T.get_thread_binding() == 0:
                B[0] = peek[0]
            result = T.alloc_fragment((1,), "float32")
            T.finalize_reducer(acc, result)
            T.finalize_reducer(peek, result)
            old = T.alloc_reducer((1,), "float32", op="sum", replication="all")
            T.clear(old)
            for i in T.Parallel(8):
                old[0] += src[i]
            T.finalize_reducer(old)
            B[1] = result[0] + old[0]

    return main
