import tilelang
import tilelang.language as T


def tir(N=256):

    @T.prim_func
    def main(A_ptr: T.handle, B_ptr: T.handle):
        A = T.match_buffer(A_ptr, (N, 64), dtype=T.float32, align=16)
        B = T.match_buffer(B_ptr, (N, 64), "float32")
        for bx in T.thread_binding(N // 64, thread="blockIdx.x"):
            for ty in T.thread_binding(2, thread="threadIdx.y"):
                for tx in T.thread_binding(0, 32, thread="threadIdx.x"):
                    for r in T.serial(32):
                        B[bx * 64 + r * 2 + ty, tx * 2] = A[bx * 64 + r * 2 + ty, tx * 2] + ty

    return main


def bound_in_kernel(N=128):

    @T.prim_func
    def main(A: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=N):
            for tx in T.thread_binding(N, thread="threadIdx.x"):
                A[tx] = tx

    return main
