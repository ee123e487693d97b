# Module-level torch tensors used for their shapes while building a kernel (as in
# gemm_streamk's `A = torch.rand(m, k, ...) * 2 - 1; M, K = A.shape`): factories, arithmetic
# with broadcasting and promotion, casts, moves, views and metadata, all folded to constants.
# tilescale-test: -k shapes
import torch

import tilelang
import tilelang.language as T

torch.random.manual_seed(0)
A = torch.rand(64, 32, device="cuda", dtype=torch.float16) * 2 - 1
B = torch.randn((8, 1, 32)).half().cuda()
I = torch.randint(0, 10, (5, 7), device="cuda")
R = torch.arange(3, 20, 4)
F = torch.full((2, 3), 1.5)
M, K = A.shape
P = (B + torch.zeros(64, 32, dtype=torch.float16)).shape          # broadcast: (8, 64, 32)
V = A.view(-1, 16).transpose(0, 1).size()                          # (16, 128)
Q = B.permute(2, 0, 1).unsqueeze(0).shape                          # (1, 32, 8, 1)
BITS = (A.to(torch.float32).element_size(), I.dtype.bits, (A > 0).dtype.bits, (I / 2).dtype.bits)
COUNTS = (A.numel(), A.dim(), I.size(1), R.shape[0], F.dtype.bits, A.T.shape[0], torch.empty_like(I).ndim, len(B))


@tilelang.jit
def shapes():

    @T.prim_func
    def main(X: T.Tensor((M, K), "float16"), Y: T.Tensor((P[0], P[1], P[2] + V[0] + V[1] + Q[1]), "float32"),
             Z: T.Tensor((BITS[0], BITS[1], BITS[2], BITS[3]), "int8"), W: T.Tensor(COUNTS, "int8")):
        with T.Kernel(1, threads=32) as bx:
            Y[0, 0, 0] = X[0, 0]

    return main
