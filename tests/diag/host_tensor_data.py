# Shape-only torch tensors: what needs a tensor's data while building a kernel is refused
# (indexing, truth, matmul, a non-broadcasting shape, a bad view, an out-of-range dimension,
# a method that needs the data, a tensor used as an IR value).
# tilescale-test: -k bad
import torch

import tilelang
import tilelang.language as T

A = torch.rand(64, 32, dtype=torch.float16)
X = A[0, 0]
Y = 1 if A.sum else 0
Z = 1 if A > 0 else 0
W = A @ A
U = A + torch.zeros(3, 5)
V = A.view(7, -1)
S = A.size(2)


@tilelang.jit
def bad():

    @T.prim_func
    def main(B: T.Tensor((64,), "float16")):
        with T.Kernel(1, threads=32) as bx:
            B[0] = A * 2
            B[1] = X + Z + W[0] + U.ndim + V.ndim + S + Y

    return main
