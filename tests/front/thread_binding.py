# Thread and block queries: get_thread_binding, get_block_binding(s), get_thread_extent,
# get_block_extent; explicit T.sync_threads and T.sync_warp.
# tilescale-test: -k bindings -D N=1024
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1])
def bindings(N, threads=128):

    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(N // threads, threads=threads) as bx:
            tx = T.get_thread_binding(0)
            b0 = T.get_block_binding()
            nthreads = T.get_thread_extent(0)
            nblocks = T.get_block_extent(0)
            s = T.alloc_shared((threads,), "float32")
            s[tx] = A[b0 * nthreads + tx]
            T.sync_threads()
            T.sync_warp()
            B[bx * threads + tx] = s[nthreads - 1 - tx] + nblocks

    return main
