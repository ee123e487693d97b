# A T.alloc_var made inside an IR `if` used after it.
# tilescale-test: -k rowwise -D M=256 -D N=128
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def rowwise(M, N, block_M=32, dtype="float16", accum_dtype="float32"):

    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            tile = T.alloc_fragment((block_M, N), accum_dtype)
            row = T.alloc_fragment((block_M,), accum_dtype)
            if bx == 0:
                count = T.alloc_var("int32", init=0)
                count += 1
            B[0, 0] = count

    return main
