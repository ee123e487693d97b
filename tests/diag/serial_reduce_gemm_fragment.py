# A serial loop over a GEMM fragment's column dim inside T.Parallel (TileLang issue 2393): the
# fragment is spread over threads; the error says so and names T.reduce_sum.
# tilescale-test: -k k
import tilelang
import tilelang.language as T
M, N, KD = 64, 64, 64

@tilelang.jit
def k(Q: T.Tensor((M, KD), T.float16), Kk: T.Tensor((N, KD), T.float16)):
    out = T.empty((M,), T.float32)
    with T.Kernel(1, threads=128) as bx:
        Qs = T.alloc_shared((M, KD), T.float16)
        Ks = T.alloc_shared((N, KD), T.float16)
        acc = T.alloc_fragment((M, N), T.float32)
        s = T.alloc_fragment((M,), T.float32)
        T.copy(Q, Qs)
        T.copy(Kk, Ks)
        T.clear(acc)
        T.gemm(Qs, Ks, acc, transpose_B=True)
        T.fill(s, 0.0)
        for i in T.Parallel(M):
            for j in T.serial(N):
                s[i] += acc[i, j]
        T.copy(s, out)
