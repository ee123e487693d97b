# tilescale-test: -k im2col_tile --arch sm_90a
"""T.im2col: one (row, column) tile of the im2col matrix of an NHWC image (rows: output pixels,
columns: kh, kw, c with c fastest), zero outside the image (pad) and past the matrix."""
import tilelang.language as T


@T.prim_func
def im2col_tile(img: T.Tensor((2, 8, 8, 4), "float16"), out: T.Tensor((16, 32), "float16")):
    with T.Kernel(8, threads=128) as by:
        col = T.alloc_shared((16, 32), "float16")
        T.im2col(img, col, by, 0, 3, 1, 1, 1)
        T.copy(col, out)
