# tilescale-test: -k rowsum
import tilelang.language as T

M = 512
N = 256
BLOCK = 4


@T.prim_func
def rowsum(X: T.Tensor((M, N), "float32"), Y: T.Tensor((M,), "float32"), total: T.Tensor((1,), "float32")):
    with T.Kernel(M // BLOCK, threads=128) as bx:
        x = T.alloc_fragment((BLOCK, N), "float32")
        y = T.alloc_fragment((BLOCK,), "float32")
        loc = T.alloc_local((1,), "float32")
        T.fill(loc, 0)
        T.copy(X[bx * BLOCK:(bx + 1) * BLOCK, :], x)
        T.reduce_sum(x, y, dim=1, clear=True)
        for i in T.unroll(BLOCK):
            loc[0] = T.exp2(y[i]) * T.cast(2, "float32") - T.infinity("float32")
            T.atomic_add(total[0], loc[0])
        T.copy(y, Y[bx * BLOCK])
