# Performance-only hints are accepted: T.use_swizzle (recorded as the kernel's raster_panel), T.annotate_l2_hit_ratio,
# T.annotate_min_blocks_per_sm, T.annotate_restrict_buffers (results do not depend on them).
# tilescale-test: -k hinted -D M=256 -D N=256
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1])
def hinted(M, N, block=64):

    @T.prim_func
    def main(A: T.Tensor((M, N), "float16"), B: T.Tensor((M, N), "float16")):
        with T.Kernel(N // block, M // block, threads=128) as (bx, by):
            T.use_swizzle(panel_size=10, order="row")
            T.annotate_l2_hit_ratio({A: 0.8})
            T.annotate_min_blocks_per_sm(2)
            T.annotate_restrict_buffers(A, B)
            for i, j in T.Parallel(block, block):
                B[by * block + i, bx * block + j] = A[by * block + i, bx * block + j]

    return main
