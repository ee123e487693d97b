# Integer helpers: // and % (floor semantics), ceildiv, floordiv/floormod, truncdiv/truncmod,
# shifts and bit operators on IR values, T.shift_left/right.
# tilescale-test: -k intops -D N=1024
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1])
def intops(N):

    @T.prim_func
    def main(A: T.Tensor((N,), "int32"), B: T.Tensor((N, 6), "int32")):
        with T.Kernel(T.ceildiv(N, 256), threads=256) as bx:
            for i in T.Parallel(256):
                x = A[bx * 256 + i]
                B[bx * 256 + i, 0] = x // 3 + x % 5
                B[bx * 256 + i, 1] = T.floordiv(x, 7) + T.floormod(x, 7)
                B[bx * 256 + i, 2] = T.truncdiv(x, 7) + T.truncmod(x, 7)
                B[bx * 256 + i, 3] = T.ceildiv(x, 16)
                B[bx * 256 + i, 4] = (x << 2) | (x >> 1) ^ (x & 255)
                B[bx * 256 + i, 5] = T.shift_left(x, 3) + T.shift_right(x, 3) + ~x

    return main
