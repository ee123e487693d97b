# T.ptx_ldmatrix / T.ptx_mma misuse: an smem_ptr that is not an address in shared memory, an
# 8-bit transposed load (ldmatrix.trans moves 16-bit elements only), a count of matrices
# ldmatrix does not have, a register window past the end of its local buffer, a fragment
# where per-thread registers (T.alloc_local) are needed, operand types no mma.sync
# multiplies (4-bit operands accumulate int32 only), and a shape that does not match the
# operand types.
# tilescale-test: -k bad
import tilelang.language as T


@T.prim_func
def bad(A: T.Tensor((64, 64), "float16"), Q: T.Tensor((64, 64), "int8")):
    with T.Kernel(1, threads=32) as bx:
        S = T.alloc_shared((64, 64), "float16")
        S8 = T.alloc_shared((64, 64), "int8")
        a = T.alloc_local((8,), "float16")
        a8 = T.alloc_local((16,), "int8")
        f = T.alloc_fragment((64, 64), "float32")
        c = T.alloc_local((4,), "float32")
        tx = T.get_thread_binding()
        T.ptx_ldmatrix("float16", False, 4, ".b16", a.data, 0, T.address_of(A[tx, 0]), 0)
        T.ptx_ldmatrix("int8", True, 4, ".b16", a8.data, 0, T.address_of(S8[tx, 0]), 0)
        T.ptx_ldmatrix("float16", False, 3, ".b16", a.data, 0, T.address_of(S[tx, 0]), 0)
        T.ptx_ldmatrix("float16", False, 4, ".b16", a.data, 4, T.address_of(S[tx, 0]), 0)
        T.ptx_mma("float32", "m16n8k16", "row", "col", "fp16", "fp16", "fp32", a.data, 0, a.data, 0, f.data, 0, False)
        T.ptx_mma("float32", "m16n8k16", "row", "col", "fp16", "int8", "fp32", a.data, 0, a.data, 0, c.data, 0, False)
        T.ptx_mma("float32", "m16n8k32", "row", "col", "fp16", "fp16", "fp32", a.data, 0, a.data, 0, c.data, 0, False)
        T.ptx_mma("float32", "m16n8k32", "row", "col", "int4", "int4", "fp32", a8.data, 0, a8.data, 0, c.data, 0, False)
