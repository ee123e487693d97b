# T.Pipelined with num_stages, order, stage and group (serial semantics).
# tilescale-test: -k staged_sum -D M=128 -D K=512
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1])
def staged_sum(M, K, block_M=32, block_K=64, dtype="float32"):

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), S: T.Tensor((M,), dtype)):
        with T.Kernel(M // block_M, threads=128) as bx:
            a_s = T.alloc_shared((block_M, block_K), dtype)
            part = T.alloc_fragment((block_M,), dtype)
            acc = T.alloc_fragment((block_M,), dtype)
            tile = T.alloc_fragment((block_M, block_K), dtype)
            T.clear(acc)
            for k in T.Pipelined(K // block_K, num_stages=2, order=[0, 1], stage=[0, 1], group=[[0], [1]]):
                T.copy(A[bx * block_M, k * block_K], a_s)
                T.copy(a_s, tile)
                T.reduce_sum(tile, part, dim=1)
                for i in T.Parallel(block_M):
                    acc[i] += part[i]
            T.copy(acc, S[bx * block_M])

    return main
