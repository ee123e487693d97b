# T.copy operand forms: full buffers, slices with explicit extents, corners (BufferLoad),
# broadcast 1-dims, and dtype conversion on the way.
# tilescale-test: -k regions -D B=2 -D S=256 -D H=4 -D D=64
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1, 2])
def regions(B, S, H, D, block=64, dtype="float16"):

    @T.prim_func
    def main(Q: T.Tensor((B, S, H, D), dtype), O: T.Tensor((B, S, H, D), "float32"),
             P: T.Tensor((B, H, S, D), "float32")):
        with T.Kernel(S // block, H, B, threads=128) as (bx, by, bz):
            q_s = T.alloc_shared((block, D), dtype)
            q_f = T.alloc_fragment((block, D), "float32")
            T.copy(Q[bz, bx * block:(bx + 1) * block, by, :], q_s)
            T.copy(q_s, q_f)
            T.copy(q_f, O[bz, bx * block:(bx + 1) * block, by, :])
            # a corner: the [block, D] extents are right-aligned, leading dims get 1
            T.copy(q_f, P[bz, by, bx * block, 0])

    return main
