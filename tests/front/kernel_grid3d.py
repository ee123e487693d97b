# A 3-d grid bound to (bx, by, bz) in argument order, threads given as an int.
# tilescale-test: -k batched_copy -D B=4 -D H=8 -D S=256
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=-1)
def batched_copy(B, H, S, block_S=64, dtype="float16"):

    @T.prim_func
    def main(X: T.Tensor((B, S, H), dtype), Y: T.Tensor((B, S, H), dtype)):
        with T.Kernel(T.ceildiv(S, block_S), H, B, threads=64) as (bx, by, bz):
            for i in T.Parallel(block_S):
                Y[bz, bx * block_S + i, by] = X[bz, bx * block_S + i, by]

    return main
