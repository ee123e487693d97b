# pass_configs are read from the decorator and recorded on the kernel (keys normalised).
# tilescale-test: -k scaled -D N=2048
import tilelang
import tilelang.language as T


@tilelang.jit(
    out_idx=[1],
    pass_configs={
        tilelang.PassConfigKey.TL_ENABLE_FAST_MATH: True,
        tilelang.PassConfigKey.TL_DISABLE_TMA_LOWER: True,
        "tl.disable_warp_specialized": False,
    },
)
def scaled(N, block=128):

    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(N // block, threads=block) as bx:
            for i in T.Parallel(block):
                B[bx * block + i] = T.exp(A[bx * block + i])

    return main
