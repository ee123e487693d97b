# T.reduce_* with shared-memory operands (TileLang stages them through fragments): a shared
# source is copied into a fragment (`s_frag`), a shared destination is reduced into a
# fragment (`p_frag`) and copied back; with clear=False the fragment starts from the shared
# destination's values.
# tilescale-test: -k reduce_shared
# tilescale-dump: thread_sync
import tilelang
import tilelang.language as T


@tilelang.jit
def reduce_shared():

    @T.prim_func
    def main(A: T.Tensor((64, 32), "float32"), O: T.Tensor((64,), "float32"), P: T.Tensor((32,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            s = T.alloc_shared((64, 32), "float32")
            p = T.alloc_shared((32,), "float32")
            r = T.alloc_shared((64,), "float32")
            T.copy(A, s)
            T.reduce_sum(s, r, dim=1)
            T.fill(p, 1.0)
            T.reduce_max(s, p, dim=0, clear=False)
            T.copy(r, O)
            T.copy(p, P)

    return main
