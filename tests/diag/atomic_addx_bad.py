# T.atomic_addx4 adds four float32, float16 or bfloat16 lanes: other element types and non-element
# operands are refused at the call (return_prev=True, here accepted, returns the old lanes).
# tilescale-test: -k bad
import tilelang.language as T


@T.prim_func
def bad(A: T.Tensor((64,), "int32"), B: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=16) as bx:
        tx = T.get_thread_binding()
        T.atomic_addx4(A[tx * 4], A[tx * 4])
        T.atomic_addx4(B, B[tx * 4])
        T.atomic_addx4(B[tx * 4], B[tx * 4], return_prev=True)
        frag = T.alloc_fragment((64,), "float32")
        T.atomic_addx2(frag[0], B[0])
