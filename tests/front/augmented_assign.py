# Augmented assignment on buffer elements and on T.alloc_var scalars, with every operator.
# tilescale-test: -k aug -D N=256
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1, 2])
def aug(N):

    @T.prim_func
    def main(A: T.Tensor((N,), "int32"), B: T.Tensor((N,), "int32"), F: T.Tensor((N,), "float32")):
        with T.Kernel(N // 128, threads=128) as bx:
            tx = T.get_thread_binding()
            i = bx * 128 + tx
            v = T.alloc_var("int32", init=A[i])
            v += 3
            v -= 1
            v *= 2
            v //= 3
            v %= 100
            v <<= 1
            v >>= 1
            v |= 8
            v &= 255
            v ^= 1
            B[i] = v
            F[i] = T.cast(v, "float32")
            F[i] /= 4.0
            F[i] **= 2
            B[i] += A[i]

    return main
