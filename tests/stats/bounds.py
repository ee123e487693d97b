# --emit stats of loops whose trip counts are not constants.  A sliding causal window (steps
# max(0, bx - 1) .. bx in block bx, bounds through lets) depends on the block index alone:
# summed block by block, the FLOPs stay exact, (1 + 2 + 2 + 2) * 2*64*64*64.  A triangular loop (i + 1 steps inside a loop over i) is
# counted at its largest (an upper bound), and so are element stores under a condition on a
# scalar parameter; a branch on the thread index runs both arms (in different threads).
# tilescale-test: -k causal -D N=256
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def causal(N, block=64, dtype="float16"):

    @T.prim_func
    def main(Q: T.Tensor((N, block), dtype), Kt: T.Tensor((block, N), dtype), flag: T.int32,
             O: T.Tensor((N, block), dtype)):
        with T.Kernel(N // block, threads=128) as bx:
            tx = T.get_thread_binding()
            Q_shared = T.alloc_shared((block, block), dtype)
            K_shared = T.alloc_shared((block, block), dtype)
            S = T.alloc_fragment((block, block), "float32")
            T.copy(Q[bx * block, 0], Q_shared)
            T.clear(S)
            end = T.min(N // block, bx + 1)
            start = T.max(0, bx - 1)
            for k in T.serial(start, end):
                T.copy(Kt[0, k * block], K_shared)
                T.gemm(Q_shared, K_shared, S)
            for i in T.serial(2):
                for j in T.serial(i + 1):
                    T.copy(Q[bx * block, 0], Q_shared)
            if tx < 64:
                O[bx * block, 0] = T.float16(1)
            else:
                O[bx * block, 1] = T.float16(2)
            if flag > 0:
                for i, j in T.Parallel(block, block):
                    O[bx * block + i, j] = S[i, j]

    return main
