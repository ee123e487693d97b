# `if 128 <= tx < 256:` is a T.ws body over warpgroup 1, but its `else` runs on threads [0, 128)
# and [256, 384), not one range: its tile op cannot be split over them, so it is refused.
# tilescale-test: -k split_else -D M=256 --arch sm_90a
import tilelang
import tilelang.language as T


def split_else(M, block_M=128, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M,), dtype), C: T.Tensor((M,), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=384) as bx:
            S = T.alloc_shared((block_M,), dtype)
            tx = T.get_thread_binding()
            if 128 <= tx < 256:
                T.copy(A[bx * block_M], S)
            else:
                T.fill(S, 0)
            T.copy(S, C[bx * block_M])

    return main
