# An eager kernel returning its T.empty outputs in another order than it made them
# (`return C, B`): the call gives them back in the order returned, so C is the first output
# parameter (out_idx [1, 2] = C, B).
# tilescale-test: -k two_outputs
import tilelang
import tilelang.language as T


@tilelang.jit
def two_outputs(A):
    A: T.Tensor[[64], T.float32]
    B = T.empty([64], T.float32)
    C = T.empty([32], T.float32)
    with T.Kernel(1, threads=64) as bx:
        i = T.get_thread_binding(0)
        B[i] = A[i] * 2.0
        if i < 32:
            C[i] = A[i] + 1.0
    return C, B
