# T.alloc_global in a prim_func outside T.Kernel: a workspace that the function's kernels
# share in launch order (the split-KV flash-decoding style: partial results written by the
# split kernel, combined by the next).
# tilescale-test: -k split_sum -D N=256
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1])
def split_sum(N, splits=2):
    @T.prim_func
    def main(A: T.Tensor((splits, N), "float32"), B: T.Tensor((N,), "float32")):
        partial = T.alloc_global([splits, N], "float32")
        with T.Kernel(splits, threads=128) as s:
            for i in T.Parallel(N):
                partial[s, i] = A[s, i] * 2
        with T.Kernel(1, threads=128) as bx:
            for i in T.Parallel(N):
                B[i] = partial[0, i] + partial[1, i]

    return main
