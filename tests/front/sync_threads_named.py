# T.sync_threads forms: the block barrier, and bar.sync on a chosen hardware barrier over a
# chosen number of threads (constants or run-time values, as TileScale's DeepEP uses them).
# tilescale-test: -k named_sync
import tilelang.language as T


def named_sync():
    @T.prim_func
    def main(A: T.Tensor((256,), "int32"), rank: T.int32):
        with T.Kernel(1, threads=256) as bx:
            tx = T.get_thread_binding()
            A[tx] = tx
            T.sync_threads()
            T.sync_threads(1)
            if tx < 96:
                T.sync_threads(rank, 96)
            if tx >= 128:
                T.sync_threads(2, 128)

    return main
