# An eager kernel that makes two T.empty tensors and returns one: the other would be an output
# the call never gives back (T.alloc_global is the workspace form).
# tilescale-test: -k leaves_one_out
import tilelang
import tilelang.language as T


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
