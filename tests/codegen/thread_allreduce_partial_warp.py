# T.tvm_thread_allreduce in a block of 8 threads (one partial warp, TileLang's issue 2628
# test): a shuffle butterfly whose __shfl_xor_sync masks name only the block's 8 lanes (0xff),
# not the shared-scratch fold in thread order.  The butterfly's order is TileLang's: a bfloat16
# product rounds the same way.
# tilescale-test: -k allreduce_partial_warp
# tilescale-dump: thread_sync
import tilelang.language as T


@T.prim_func
def allreduce_partial_warp(A: T.Tensor((8,), "float32"), S: T.Tensor((8,), "float32")):
    with T.Kernel(1, threads=8) as bx:
        tx = T.get_thread_binding(0)
        v = T.alloc_local((1,), "float32")
        r = T.alloc_local((2,), "float32")
        v[0] = A[tx]
        with T.attr(T.comm_reducer(lambda x, y: x + y, [T.cast(0, "float32")]), "reduce_scope",
                    T.reinterpret(T.uint64(0), dtype="handle")):
            T.evaluate(T.tvm_thread_allreduce(T.uint32(1), v[0], True, r[0], tx, dtype="handle"))
        with T.attr(T.comm_reducer(lambda x, y: x * y, [T.float32(1)]), "reduce_scope",
                    T.reinterpret(T.uint64(0), dtype="handle")):
            T.evaluate(T.tvm_thread_allreduce(T.uint32(1), v[0], True, r[1], tx, dtype="handle"))
        S[tx] = r[0] + r[1]
