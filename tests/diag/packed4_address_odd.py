# T.address_of an element of a 4-bit tensor: only an even element of a row of even length
# starts a byte (the 4-bit GEMM's tile addresses); an odd one shares its byte with the element
# before it, so its address is refused.
# tilescale-test: -k odd --arch sm_90a
import tilelang.language as T


@T.prim_func
def odd(A: T.Tensor((128, 64), "int8")):
    with T.Kernel(1, threads=32) as bx:
        s = T.alloc_shared((16, 64), "int4")
        r = T.alloc_local((4,), "int32")
        T.ptx_ldmatrix("int8", False, 1, ".b16", r.data, 0, T.address_of(s[bx, 1]), 0)
        A[0, 0] = r[0]
