# An eager kernel must return the tensors it makes with T.empty: an input tensor is not one.
# tilescale-test: -k returns_input
import tilelang
import tilelang.language as T


@tilelang.jit
def returns_input(A):
    A: T.Tensor[[64], T.float32]
    B = T.empty([64], T.float32)
    with T.Kernel(1, threads=64) as bx:
        i = T.get_thread_binding(0)
        B[i] = A[i] * 2.0
    return A
