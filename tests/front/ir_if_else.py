# IR if / elif / else on values only known at run time, next to static `if` on parameters.
# tilescale-test: -k branches -D N=256 -D causal=True
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1])
def branches(N, causal=False, block=64):

    @T.prim_func
    def main(A: T.Tensor((N, N), "float32"), B: T.Tensor((N, N), "float32")):
        with T.Kernel(N // block, N // block, threads=128) as (bx, by):
            for i, j in T.Parallel(block, block):
                r = by * block + i
                c = bx * block + j
                if causal:
                    if c > r:
                        B[r, c] = 0
                    elif c == r:
                        B[r, c] = 1
                    else:
                        B[r, c] = A[r, c]
                else:
                    B[r, c] = A[r, c]

    return main
