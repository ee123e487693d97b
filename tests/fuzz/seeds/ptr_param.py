# A `p: T.ptr` parameter is a device address the caller passes (a tensor, whose data pointer
# goes, or an int: TileLang's language/test_tilelang_language_ptr.py); T.make_tensor makes it a
# tensor, here before T.Kernel, where its declaration is put at the start of the kernel.
# tilescale-test: -k ptr_matmul -D block=64
import tilelang.language as T


def ptr_matmul(block, dtype=T.float16, accum_dtype=T.float32):
    @T.prim_func
    def main(a_ptr: T.ptr, b_ptr: T.ptr, c_ptr: T.ptr, m: T.int32, n: T.int32, k: T.int32):
        A = T.make_tensor(a_ptr, (m, k), dtype)
        B = T.make_tensor(b_ptr, (k, n), dtype)
        C = T.make_tensor(c_ptr, (m, n), accum_dtype)
        with T.Kernel(T.ceildiv(n, block), T.ceildiv(m, block), threads=128) as (bx, by):
            A_s = T.alloc_shared((block, block), dtype)
            B_s = T.alloc_shared((block, block), dtype)
            C_l = T.alloc_fragment((block, block), accum_dtype)
            T.clear(C_l)
            for ko in T.Pipelined(T.ceildiv(k, block), num_stages=2):
                T.copy(A[by * block, ko * block], A_s)
                T.copy(B[ko * block, bx * block], B_s)
                T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C[by * block, bx * block])

    return main
