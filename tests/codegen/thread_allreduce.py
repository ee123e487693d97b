# T.tvm_thread_allreduce inside `with T.attr(T.comm_reducer(f, [identity]), "reduce_scope", h)`
# (TileLang's GEMV examples): a sum over threadIdx.x (32 adjacent lanes: a shuffle
# butterfly), a max over threadIdx.y (lanes 32 apart: the shared scratch fold), a product
# over both axes with a run-time condition (threads where it fails contribute the identity),
# and a min over threadIdx.x again, each combine traced from the
# user's lambda.
# tilescale-test: -k allreduce
# tilescale-dump: thread_sync
import tilelang.language as T


@T.prim_func
def allreduce(A: T.Tensor((4, 32), "float32"), S: T.Tensor((4, 32), "float32")):
    with T.Kernel(1, threads=(32, 4)) as bx:
        tx = T.get_thread_binding(0)
        ty = T.get_thread_binding(1)
        v = T.alloc_local((1,), "float32")
        r = T.alloc_local((4,), "float32")
        v[0] = A[ty, tx]
        with T.attr(T.comm_reducer(lambda x, y: x + y, [T.cast(0, "float32")]), "reduce_scope",
                    T.reinterpret(T.uint64(0), dtype="handle")):
            T.evaluate(T.tvm_thread_allreduce(T.uint32(1), v[0], True, r[0], tx, dtype="handle"))
        with T.attr(T.comm_reducer(lambda x, y: T.max(x, y), [T.float32(-3.0e38)]), "reduce_scope",
                    T.reinterpret(T.uint64(0), dtype="handle")):
            T.evaluate(T.tvm_thread_allreduce(T.uint32(1), v[0], True, r[1], ty, dtype="handle"))
        with T.attr(T.comm_reducer(lambda x, y: x * y, [T.float32(1)]), "reduce_scope",
                    T.reinterpret(T.uint64(0), dtype="handle")):
            T.evaluate(T.tvm_thread_allreduce(T.uint32(1), v[0], tx < 16, r[2], tx, ty, dtype="handle"))
        with T.attr(T.comm_reducer(lambda x, y: T.min(x, y), [T.float32(3.0e38)]), "reduce_scope",
                    T.reinterpret(T.uint64(0), dtype="handle")):
            T.evaluate(T.tvm_thread_allreduce(T.uint32(1), v[0], True, r[3], tx, dtype="handle"))
        S[ty, tx] = r[0] + r[1] + r[2] + r[3]
