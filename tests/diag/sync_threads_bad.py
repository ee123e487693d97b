# T.sync_threads with a barrier id past the 16 hardware barriers, a thread count that is not
# whole warps, and a float id.
# tilescale-test: -k bad_sync
import tilelang.language as T


def bad_sync():
    @T.prim_func
    def main(A: T.Tensor((256,), "int32")):
        with T.Kernel(1, threads=256) as bx:
            T.sync_threads(16, 64)
            T.sync_threads(1, 48)
            T.sync_threads(1.5, 64)

    return main
