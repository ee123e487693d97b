# tilescale-test: -k let_extent --arch sm_90a
"""A tile slice whose bounds are names bound inside the kernel (H1 = H0 + 64): the extent is
the constant 64 once the names are seen through, as TileLang's simplifier finds."""
import tilelang.language as T


@T.prim_func
def let_extent(Q: T.Tensor((4, 256, 32), "float16"), O: T.Tensor((4, 256, 32), "float16")):
    with T.Kernel(2, 4, threads=128) as (bx, by):
        S = T.alloc_shared((64, 32), "float16")
        H0 = by * 64 + (bx % 2) * 128
        H1 = H0 + 64
        T.copy(Q[by, H0:H1, :], S)
        T.copy(S, O[by, H0:H1, :])
