# Fuzz seed: the constructs session 25 taught the compiler (a T.Parallel over an unbounded
# run-time extent, composable fragment indices, a parity branch over shared memory, cuRAND
# generators, tilelang.compile inside a factory).
# tilescale-test: -D M=64 -D N=32
import tilelang
import tilelang.language as T


@tilelang.jit
def features(M, N, generator="curandStateXORWOW_t"):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M * N,), "float32"), m: T.int32):
        with T.Kernel(1, threads=128):
            tx = T.get_thread_binding()
            A_local = T.alloc_fragment((M, N), "float32")
            B_local = T.alloc_fragment((M * N,), "float32")
            acc = T.alloc_fragment((N,), "float32")
            s = T.alloc_shared((128,), "float32")
            T.copy(A, A_local)
            for i, j in T.Parallel(M, N):
                B_local[i * N + j] = A_local[i, j]
            for j in T.Parallel(N):
                acc[j] = 0.0
            for r in T.Parallel(m):
                for j in T.Parallel(N):
                    acc[j] += A[r % M, j]
            for k in T.Parallel(m):
                s[k % 128] = 1.0
            if tx % 2 == 0:
                v = s[tx]
                s[tx ^ 1] = v
            T.rng_init(7, 0, tx, generator=generator)
            for k in T.Parallel(M * N):
                B[k] = B_local[k] + T.rng_rand_float() * acc[k % N]

    return tilelang.compile(main, out_idx=-1)
