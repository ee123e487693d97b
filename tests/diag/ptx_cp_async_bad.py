# T.ptx_cp_async / T.cp_async_barrier_noinc misuse: operands swapped (global destination), a
# plain value for a pointer, sizes cp.async cannot move, elements of different sizes, an
# offset= with an element base, and a barrier operand that is not a T.alloc_barrier.
# tilescale-test: -k bad
import tilelang.language as T


@T.prim_func
def bad(A: T.Tensor((256, 8), "float16"), C: T.Tensor((256, 8), "float32")):
    with T.Kernel(1, threads=128) as bx:
        tx = T.get_thread_binding()
        s = T.alloc_shared((128, 8), "float16")
        T.ptx_cp_async(T.access_ptr(A[tx, 0], "w", 8), T.access_ptr(s[tx, 0], "r", 8), 8)
        T.ptx_cp_async(s[tx, 0], T.access_ptr(A[tx, 0], "r", 8), 8)
        T.ptx_cp_async(T.access_ptr(s[tx, 0], "w", 6), T.access_ptr(A[tx, 0], "r", 6), 6)
        T.ptx_cp_async(T.access_ptr(s[tx, 0], "w", 4), T.access_ptr(C[tx, 0], "r", 4), 4)
        T.ptx_cp_async(T.access_ptr(s[tx, 0], "w", offset=2), T.access_ptr(A[tx, 0], "r", 8), 8)
        T.cp_async_barrier_noinc(s[0, 0])
