# Scalar kernel parameters (annotated with a dtype) next to tensors.
# tilescale-test: -k saxpy -D N=1024
import tilelang
import tilelang.language as T


@tilelang.jit
def saxpy(N, block=128):

    @T.prim_func
    def main(alpha: T.float32, n_valid: T.int32, X: T.Tensor((N,), "float32"), Y: T.Tensor((N,), "float32")):
        with T.Kernel(N // block, threads=block) as bx:
            for i in T.Parallel(block):
                if bx * block + i < n_valid:
                    Y[bx * block + i] = alpha * X[bx * block + i] + Y[bx * block + i]

    return main
