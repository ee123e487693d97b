# A fragment of `heads` elements filled by a loop over block_M rows (TileLang's attention-sink
# examples) and also cleared by T.fill, a tile operation over its declared shape: it cannot be
# sized to the loop (fragment_sized_to_loop.py), so the loop indexes registers that do not exist.
# tilescale-test: -k sink_rows -D heads=8
import tilelang
import tilelang.language as T


@tilelang.jit
def sink_rows(heads, block_M=64):

    @T.prim_func
    def main(Sinks: T.Tensor((heads,), "float32"), O: T.Tensor((heads, block_M), "float32")):
        with T.Kernel(heads, threads=128) as by:
            sinks = T.alloc_fragment([heads], "float32")
            T.fill(sinks, 0)
            for i in T.Parallel(block_M):
                sinks[i] = Sinks[by]
            for i in T.Parallel(block_M):
                O[by, i] = sinks[i]

    return main
