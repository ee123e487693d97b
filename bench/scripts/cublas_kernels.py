# Prints which cuBLAS kernels torch.matmul picks for the bench_gemm shapes (run under ncu to
# see names, grids and clocks).  Reference material for tuning; not part of any test.
import torch
shapes = [(8192, 8192, 8192), (4096, 1024, 8192), (4096, 8192, 8192), (4096, 28672, 8192), (4096, 8192, 28672),
          (8192, 1024, 8192), (8192, 28672, 8192), (8192, 8192, 28672)]
for dt in (torch.float16, torch.bfloat16):
    for m, n, k in shapes:
        a = torch.randn(m, k, device="cuda", dtype=dt)
        b = torch.randn(k, n, device="cuda", dtype=dt)
        for _ in range(3):
            c = a @ b
        torch.cuda.synchronize()
