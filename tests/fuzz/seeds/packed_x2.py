import tilelang
import tilelang.language as T

M = 128


def binary(op="add2", dtype="float16"):
    op_func = getattr(T, op)

    @T.prim_func
    def main(A: T.Tensor((M * 2,), dtype=dtype), B: T.Tensor((M * 2,), dtype=dtype), C: T.Tensor((M * 2,), dtype=dtype)):
        with T.Kernel(1, 1, threads=M) as (bx, by):
            tid = T.get_thread_binding()
            idx = T.Ramp(tid * 2, 1, 2)
            C[idx] = op_func(A[idx], B[idx])

    return main


def ternary(dtype="bfloat16"):

    @T.prim_func
    def main(A: T.Tensor((M * 2,), dtype=dtype), B: T.Tensor((M * 2,), dtype=dtype), C: T.Tensor((M * 2,), dtype=dtype),
             D: T.Tensor((M * 2,), dtype=dtype)):
        with T.Kernel(1, 1, threads=M) as (bx, by):
            tid = T.get_thread_binding()
            idx = T.Ramp(tid * 2, 1, 2)
            D[idx] = T.fma2(A[idx], B[idx], C[idx])

    return main


def mixed():

    @T.prim_func
    def main(A: T.Tensor((M * 2,), dtype="float16"), B: T.Tensor((M * 2,), dtype="bfloat16"), C: T.Tensor((M * 2,), dtype="float16")):
        with T.Kernel(1, 1, threads=M) as (bx, by):
            tid = T.get_thread_binding()
            idx = T.Ramp(tid * 2, 1, 2)
            C[idx] = T.add2(A[idx], B[idx])

    return main


def unary(dtype="float32"):

    @T.prim_func
    def main(A: T.Tensor((M * 2,), dtype=dtype), C: T.Tensor((M * 2,), dtype=dtype)):
        with T.Kernel(1, 1, threads=M) as (bx, by):
            tid = T.get_thread_binding()
            idx = T.Ramp(tid * 2, 1, 2)
            C[idx] = T.abs2(A[idx])

    return main
