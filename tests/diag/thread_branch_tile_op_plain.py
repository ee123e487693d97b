# A tile operation under a branch on the thread index that is not a warp-aligned range
# (`tx < 100`), in a plain kernel: lowered over the whole block, threads 100..127 would skip
# their share of the copy, so it is refused (it once compiled silently wrong outside
# mbarrier kernels).
# tilescale-test: -k plain_branch
import tilelang
import tilelang.language as T


@tilelang.jit
def plain_branch(N=1024):

    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(N // 128, threads=128) as bx:
            tx = T.get_thread_binding()
            tile = T.alloc_shared((128,), "float32")
            if tx < 100:
                T.copy(A[bx * 128], tile)
            T.copy(tile, B[bx * 128])

    return main
