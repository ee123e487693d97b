# Atomic-add nests whose fragments a vector copy laid out: each statement of a nest of several
# T.atomic_add becomes vector atomics (ts::atomic_add_x), and a layout with more lanes than the
# widest vector atomic holds (8 bf16 lanes; bfloat162 is the widest) is split into chunks of
# that width (four atomic_add_x<2> per vector), each chunk guarded by its own first lane.
# tilescale-test: -k atomic_vec_nests -D N=64
# tilescale-dump: lower_tile_ops
import tilelang
import tilelang.language as T


@tilelang.jit
def atomic_vec_nests(N, D=1024):

    @T.prim_func
    def main(X: T.Tensor((N, D), "float32"), G: T.Tensor((D,), "float32"), B: T.Tensor((D,), "float32"),
             Xh: T.Tensor((N, D), "bfloat16"), Gh: T.Tensor((D,), "bfloat16")):
        with T.Kernel(N, threads=128) as bx:
            x = T.alloc_fragment((D,), "float32")
            xh = T.alloc_fragment((D,), "bfloat16")
            T.copy(X[bx, 0:D], x)
            T.copy(Xh[bx, 0:D], xh)
            for j in T.Parallel(D):
                T.atomic_add(G[j], x[j])
                T.atomic_add(B[j], x[j])
            for j in T.Parallel(D):
                T.atomic_add(Gh[j], xh[j])

    return main
