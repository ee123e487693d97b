# The distributed enums T.Team, T.CmpType (NVSHMEM order) and T.Amo evaluate to their
# documented integer values and can be used as ordinary constants.
# tilescale-test: -k enums -D N=8
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[0])
def enums(N):
    codes = [T.Team.WORLD, T.Team.NODE, T.CmpType.EQ, T.CmpType.GT, T.CmpType.GE, T.Amo.SIGNAL_SET,
             T.Amo.SIGNAL_ADD, T.Amo.COMPARE_SWAP]

    @T.prim_func
    def main(Out: T.Tensor((N,), "int32")):
        with T.Kernel(1, threads=32):
            for k in T.unroll(len(codes)):
                Out[k] = codes[0] + k
            Out[0] = codes[5] * 100 + codes[6]
            Out[1] = codes[3] * 10 + codes[4]
            Out[2] = codes[7] + T.Team.INVALID

    return main
