# T.Tensor([n], T.ptr) is a tensor of device addresses (torch passes data_ptr()s as int64);
# T.make_tensor(ptrs[i], shape, dtype) is a global tensor over one of them, read once where
# it stands (its ALLOC carries the address), then copied like any tensor parameter.
# tilescale-test: -k ptr_gemm -D groups=3
import tilelang
import tilelang.language as T


def ptr_gemm(groups, M=64, N=64, K=64):

    @T.prim_func
    def main(A_ptrs: T.Tensor([groups], T.ptr), B_ptrs: T.Tensor([groups], T.ptr), C_ptrs: T.Tensor([groups], T.ptr)):
        with T.Kernel(groups, threads=128) as g:
            A = T.make_tensor(A_ptrs[g], (M, K), T.float16)
            B = T.make_tensor(B_ptrs[g], (K, N), T.float16)
            C = T.make_tensor(C_ptrs[g], (M, N), T.float32)
            A_s = T.alloc_shared((M, K), T.float16)
            B_s = T.alloc_shared((K, N), T.float16)
            C_l = T.alloc_fragment((M, N), T.float32)
            T.copy(A, A_s)
            T.copy(B[0:K, 0:N], B_s)
            T.gemm(A_s, B_s, C_l, clear_accum=True)
            T.copy(C_l, C)

    return main
