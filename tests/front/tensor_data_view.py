# tilescale-test: -k flat_copy --arch sm_90a
"""T.Tensor(shape, dtype, buf.data) inside a kernel: a view of a parameter's memory with
another shape (the im2col convolution's flat kernel and output matrices)."""
import tilelang.language as T


@T.prim_func
def flat_copy(A: T.Tensor((4, 8, 16), "float16"), B: T.Tensor((4, 8, 16), "float16")):
    with T.Kernel(4, threads=128) as bx:
        A_flat = T.Tensor((32, 16), "float16", A.data)
        B_flat = T.Tensor((32, 16), "float16", B.data)
        for i, j in T.Parallel(8, 16):
            B_flat[bx * 8 + i, j] = A_flat[bx * 8 + i, j] + T.float16(1)
