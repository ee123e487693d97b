# T.serial / range with start, stop and step (also negative) inside a kernel; range is T.serial.
# tilescale-test: -k prefix -D N=64
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1])
def prefix(N, dtype="float32"):

    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):
        with T.Kernel(1, threads=32):
            acc = T.alloc_var(dtype, init=0)
            for k in T.serial(N):
                acc += A[k]
            for k in range(0, N, 2):
                acc += A[k]
            for k in T.serial(N - 1, -1, -4):
                acc -= A[k]
            for k in range(4, N):
                B[k] = acc

    return main
