# A fragment of `heads` elements filled and read by loops over block_M rows, touched by nothing
# else (TileLang's attention-sink examples): it is sized to the loops, as TileLang's layout
# inference sizes it, and a warning says so; the compile succeeds.
# tilescale-test: -k sink_rows -D heads=8
# tilescale-exit: 0
import tilelang
import tilelang.language as T


@tilelang.jit
def sink_rows(heads, block_M=64):

    @T.prim_func
    def main(Sinks: T.Tensor((heads,), "float32"), O: T.Tensor((heads, block_M), "float32")):
        with T.Kernel(heads, threads=128) as by:
            sinks = T.alloc_fragment([heads], "float32")
            for i in T.Parallel(block_M):
                sinks[i] = Sinks[by]
            for i in T.Parallel(block_M):
                O[by, i] = sinks[i]

    return main
