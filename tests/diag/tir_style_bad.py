# TIR-style kernels (T.handle + T.match_buffer, thread-bound loops as the launch) misused, each
# reported where it is written: a T.handle never bound, T.match_buffer of a tensor parameter, a
# thread tag that is not an index, a threadIdx loop with no blockIdx loop around it, a blockIdx
# loop not starting at 0, an axis bound twice, and T.handle called.
# tilescale-test: -k bad
import tilelang
import tilelang.language as T


def bad():
    @T.prim_func
    def main(A_ptr: T.handle, B: T.Tensor((64,), "float32"), C_ptr: T.handle):
        A = T.match_buffer(A_ptr, (64,), "float32")
        B2 = T.match_buffer(B, (64,), "float32")
        for w in T.thread_binding(4, thread="warp.x"):
            A[w] = 0.0
        for tx in T.thread_binding(64, thread="threadIdx.x"):
            A[tx] = 1.0
        for bx in T.thread_binding(1, 2, thread="blockIdx.x"):
            A[0] = 2.0
        for bx in T.thread_binding(2, thread="blockIdx.x"):
            for by in T.thread_binding(2, thread="blockIdx.x"):
                A[bx] = 3.0
        h = T.handle()

    return main
