# T.CUDASourceCodeKernel misuse, each reported at its call: an entry_name the source does not
# define (the diagnostic lists the entries), an entry that is not extern "C" (the runtime finds
# kernels by unmangled name), no entry_name with two __global__ functions, no source, a path
# to no file, and a source kernel inside a T.Kernel block.
# tilescale-test: -k bad
import tilelang
import tilelang.language as T

SRC = """
extern "C" __global__ void copy_a(float* A, float* B, int n) { }
__global__ void copy_b(float* A, float* B, int n) { }
"""


def bad():
    N = T.dynamic("N")

    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        T.CUDASourceCodeKernel(T.ceildiv(N, 128), threads=128, source_code_or_path=SRC, entry_name="main_kernel")
        T.CUDASourceCodeKernel(T.ceildiv(N, 128), threads=128, source_code_or_path=SRC, entry_name="copy_b")
        T.CUDASourceCodeKernel(T.ceildiv(N, 128), threads=128, source_code_or_path=SRC)
        T.CUDASourceCodeKernel(T.ceildiv(N, 128), threads=128, entry_name="copy_a")
        T.CUDASourceCodeKernel(T.ceildiv(N, 128), threads=128, source_code_or_path="no_such_kernel.cu")
        with T.Kernel(1, threads=32):
            T.CUDASourceCodeKernel(1, threads=32, source_code_or_path=SRC, entry_name="copy_a")

    return main
