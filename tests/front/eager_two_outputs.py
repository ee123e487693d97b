# Eager style with two outputs: they become trailing parameters in return order.
# tilescale-test: -k minmax -D M=128 -D N=64
import tilelang
import tilelang.language as T


@tilelang.jit
def minmax(X, block_M=16, dtype="float32"):
    M, N = T.const("M, N")
    X: T.Tensor((M, N), dtype)
    Lo = T.empty((M,), dtype)
    Hi = T.empty((M,), dtype)
    with T.Kernel(M // block_M, threads=128) as bx:
        tile = T.alloc_fragment((block_M, N), dtype)
        lo = T.alloc_fragment((block_M,), dtype)
        hi = T.alloc_fragment((block_M,), dtype)
        T.copy(X[bx * block_M, 0], tile)
        T.reduce_min(tile, lo, dim=1)
        T.reduce_max(tile, hi, dim=1)
        T.copy(lo, Lo[bx * block_M])
        T.copy(hi, Hi[bx * block_M])
    return Lo, Hi
