# An eager kernel must return the tensors it makes with T.empty: an input tensor is not one,
# and a T.empty tensor left out would be an output the call never gives back.
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


@tilelang.jit
def leaves_one_out(A):
    A: T.Tensor[[64], T.float32]
    B = T.empty([64], T.float32)
    C = T.empty([64], T.float32)
    with T.Kernel(1, threads=64) as bx:
        i = T.get_thread_binding(0)
        B[i] = A[i] * 2.0
        C[i] = A[i]
    return B
