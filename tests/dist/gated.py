# Kernels gated by a flag that one thread waits for (TileScale's AG-GEMM: thread 0 waits for
# the signal of the rows its tile reads, then every thread loads them).  CPU tests
# (test_dist_kernels.c) check the generated code: the other threads wait at a barrier after
# the wait (also at the end of a loop body), a warp-specialized GEMM's TMA producer waits
# itself before its first load, and a 1-D grid GEMM is made persistent with its release count
# after the tile's TMA store has landed (counted_gemm with the opt-in overlapped epilogue:
# count_tiles=False stores each tile during the next tile's K loop).
import tilelang
import tilelang.language as T


@tilelang.jit
def gated_gemm(M=1024, N=1024, K=1024, block_M=128, block_N=128, block_K=64):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), sig: T.Tensor((M // block_M,), "uint32"),
             C: T.Tensor((M, N), "float16")):
        with T.Kernel(N // block_N, M // block_M, threads=256) as (bx, by):
            A_s = T.alloc_shared((block_M, block_K), "float16")
            B_s = T.alloc_shared((block_K, block_N), "float16")
            C_l = T.alloc_fragment((block_M, block_N), "float")
            tid = T.get_thread_binding(0)
            T.clear(C_l)
            if tid == 0:
                T.wait_eq(sig[by], 1)
            for k in T.Pipelined(K // block_K, num_stages=3):
                T.copy(A[by * block_M, k * block_K], A_s)
                T.copy(B[k * block_K, bx * block_N], B_s)
                T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C[by * block_M, bx * block_N])

    return main


@tilelang.jit
def gated_gemm_bias(M=1024, N=1024, K=1024, block_M=128, block_N=128, block_K=64):
    """gated_gemm whose consumers read global memory after the loop (a bias): their own
    wait stays (tests/unit/test_dist_kernels.c)."""
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), sig: T.Tensor((M // block_M,), "uint32"),
             Bias: T.Tensor((N,), "float"), C: T.Tensor((M, N), "float16")):
        with T.Kernel(N // block_N, M // block_M, threads=256) as (bx, by):
            A_s = T.alloc_shared((block_M, block_K), "float16")
            B_s = T.alloc_shared((block_K, block_N), "float16")
            C_l = T.alloc_fragment((block_M, block_N), "float")
            tid = T.get_thread_binding(0)
            T.clear(C_l)
            if tid == 0:
                T.wait_eq(sig[by], 1)
            for k in T.Pipelined(K // block_K, num_stages=3):
                T.copy(A[by * block_M, k * block_K], A_s)
                T.copy(B[k * block_K, bx * block_N], B_s)
                T.gemm(A_s, B_s, C_l)
            for i, j in T.Parallel(block_M, block_N):
                C_l[i, j] = C_l[i, j] + Bias[bx * block_N + j]
            T.copy(C_l, C[by * block_M, bx * block_N])

    return main


@tilelang.jit
def gated_copy(N=4096, block=256):
    @T.prim_func
    def main(In: T.Tensor((N,), "float32"), sig: T.Tensor((N // block,), "int32"), Out: T.Tensor((N,), "float32")):
        with T.Kernel(N // block, threads=block) as bx:
            tid = T.get_thread_binding(0)
            if tid == 0:
                T.wait_ge(sig[bx], 1)
            Out[bx * block + tid] = In[bx * block + tid]

    return main


@tilelang.jit(pass_configs={"ts.enable_epilogue_overlap": True})
def counted_gemm(M=1024, N=1024, K=1024, block_M=128, block_N=128, block_K=64, group=4, count_tiles=True):
    # TileScale's GEMM-RS shape of kernel: a 1-D grid in a swizzled tile order (lets of the block
    # index), then a release count of finished tiles per row block that another agent reads
    # (count_tiles=False: the GEMM alone).
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), count: T.Tensor((M // block_M,), "uint32"),
             C: T.Tensor((M, N), "float16")):
        with T.Kernel((M // block_M) * (N // block_N), threads=256) as bid:
            A_s = T.alloc_shared((block_M, block_K), "float16")
            B_s = T.alloc_shared((block_K, block_N), "float16")
            C_s = T.alloc_shared((block_M, block_N), "float16")
            C_l = T.alloc_fragment((block_M, block_N), "float")
            per_group = group * (N // block_N)
            pid_m = bid // per_group * group + bid % group
            pid_n = bid % per_group // group
            tid = T.get_thread_binding(0)
            T.clear(C_l)
            for k in T.Pipelined(K // block_K, num_stages=3):
                T.copy(A[pid_m * block_M, k * block_K], A_s)
                T.copy(B[k * block_K, pid_n * block_N], B_s)
                T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C_s)
            T.copy(C_s, C[pid_m * block_M, pid_n * block_N])
            if count_tiles and tid == 0:
                T.atom_add(count[pid_m], 1, scope="gpu", sem="release")

    return main


@tilelang.jit
def gated_rounds(rounds=4, block=256):
    # the wait ends the loop body: the next round's reads must follow it in every thread
    @T.prim_func
    def main(In: T.Tensor((rounds * block,), "float32"), sig: T.Tensor((rounds + 1,), "int32"),
             Out: T.Tensor((rounds * block,), "float32")):
        with T.Kernel(1, threads=block) as bx:
            tid = T.get_thread_binding(0)
            for r in T.serial(rounds):
                Out[r * block + tid] = In[r * block + tid]
                if tid == 0:
                    T.wait_ge(sig[r + 1], 1)

    return main
