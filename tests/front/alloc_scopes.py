# Every allocation kind: shared.dyn (default), static shared, fragment, local, var (with init).
# tilescale-test: -k scopes -D N=512
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1])
def scopes(N, block=128, dtype="float32"):

    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):
        with T.Kernel(N // block, threads=block) as bx:
            s_dyn = T.alloc_shared((block,), dtype)
            s_static = T.alloc_shared((block,), dtype, scope="shared")
            frag = T.alloc_fragment((block,), dtype)
            acc = T.alloc_local((2,), dtype)
            count = T.alloc_var(T.int32, init=3)
            T.copy(A[bx * block], s_dyn)
            T.copy(s_dyn, s_static)
            T.copy(s_static, frag)
            for i in T.Parallel(block):
                frag[i] = frag[i] * count
            T.copy(frag, B[bx * block])

    return main
