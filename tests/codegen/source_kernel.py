# T.CUDASourceCodeKernel: a kernel written in CUDA by the user, launched over the prim_func's
# parameters (tensors' data pointers in order, then the dynamic dims, here N) with the grid and
# threads given; source_code_or_path is the text or a file's path.  regress_gpu.py runs it.
# tilescale-test: -k source_kernel
# tilescale-dump: lower_tile_ops
import tilelang
import tilelang.language as T

SCALE_SOURCE = """
extern "C" __global__ void __launch_bounds__(128) scale_copy(const float* A, float* B, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) B[i] = 3.0f * A[i];
}

__device__ int unused_helper(int x) { return x + 1; }
"""


@tilelang.jit
def source_kernel(source=SCALE_SOURCE, entry_name="scale_copy"):
    N = T.dynamic("N")

    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        T.CUDASourceCodeKernel(T.ceildiv(N, 128), threads=128, source_code_or_path=source, entry_name=entry_name)

    return main
