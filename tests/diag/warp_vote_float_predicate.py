# A warp vote takes an integer or boolean predicate: a float is refused, not truncated (TileLang's TypeError).
# tilescale-test: -k vote
import tilelang
import tilelang.language as T


@tilelang.jit
def vote():
    @T.prim_func
    def main(A: T.Tensor((32,), "float32"), B: T.Tensor((32,), "int32")):
        with T.Kernel(1, threads=32):
            tx = T.get_thread_binding()
            B[tx] = T.any_sync(A[tx])

    return main
