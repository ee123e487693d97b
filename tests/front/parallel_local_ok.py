# Local buffers a T.Parallel nest may use: constant indices, and the variables of a vectorized
# (or serial) loop inside the nest (every iteration uses the same elements of its thread's
# copy); a reducer is indexed by the nest's variables by design.
# tilescale-test: -k ok
import tilelang.language as T


@T.prim_func
def ok(A: T.Tensor((32, 32), T.float32), out: T.Tensor((32,), T.float32)):
    with T.Kernel(1, threads=32):
        scratch = T.alloc_local((4,), T.float32)
        scale = T.alloc_local((1,), T.float32)
        scale[0] = 2.0
        acc = T.alloc_reducer((32,), T.float32, op="sum", replication="all")
        T.clear(acc)
        for i in T.Parallel(32):
            for lane in T.vectorized(4):
                scratch[lane] = T.float32(lane)
            out[i] = scratch[1] * scale[0]
        for i, j in T.Parallel(32, 32):
            acc[i] += A[i, j]
        T.finalize_reducer(acc)
