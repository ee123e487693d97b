# T.comm_reducer / T.tvm_thread_allreduce misuse: an all-reduce outside a reduce_scope, a
# combiner that is not a function, a multi-value reducer, a reduce_scope on something else,
# size 2, a reduced operand that is not a thread index, a result that is not a buffer element,
# a handle made by T.reinterpret used as a value, and an all-reduce that only some threads reach.
# tilescale-test: -k bad
import tilelang.language as T


@T.prim_func
def bad(A: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64) as bx:
        tx = T.get_thread_binding(0)
        v = T.alloc_local((1,), "float32")
        r = T.alloc_local((1,), "float32")
        v[0] = A[tx]
        T.evaluate(T.tvm_thread_allreduce(T.uint32(1), v[0], True, r[0], tx, dtype="handle"))
        with T.attr(T.comm_reducer(3, [T.float32(0)]), "reduce_scope", 0):
            pass
        with T.attr(T.comm_reducer(lambda x, y: x + y, [T.float32(0), T.float32(0)]), "reduce_scope", 0):
            pass
        with T.attr(v, "reduce_scope", 0):
            pass
        with T.attr(T.comm_reducer(lambda x, y: x + y, [T.float32(0)]), "reduce_scope", 0):
            T.evaluate(T.tvm_thread_allreduce(T.uint32(2), v[0], True, r[0], tx, dtype="handle"))
            T.evaluate(T.tvm_thread_allreduce(T.uint32(1), v[0], True, r[0], bx, dtype="handle"))
            T.evaluate(T.tvm_thread_allreduce(T.uint32(1), v[0], True, A[0] + 1.0, tx, dtype="handle"))
        A[tx] = T.reinterpret(T.uint64(0), dtype="handle")
        with T.attr(T.comm_reducer(lambda x, y: x + y, [T.float32(0)]), "reduce_scope", 0):
            if tx < 32:
                T.evaluate(T.tvm_thread_allreduce(T.uint32(1), v[0], True, r[0], tx, dtype="handle"))
