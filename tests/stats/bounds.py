# --emit stats upper bounds: a loop whose trip count grows with the block index (a causal
# mask: counted at its largest, bx + 1 <= 4), and element accesses under a condition on a
# scalar parameter.  The FLOPs are 4 blocks * 4 steps * 2*64*64*64 at most; a branch on the
# thread index runs both arms (in different threads) and stays exact.
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
            for k in T.serial(bx + 1):
                T.copy(Kt[0, k * block], K_shared)
                T.gemm(Q_shared, K_shared, S)
            if tx < 64:
                O[bx * block, 0] = T.float16(1)
            else:
                O[bx * block, 1] = T.float16(2)
            if flag > 0:
                for i, j in T.Parallel(block, block):
                    O[bx * block + i, j] = S[i, j]

    return main
