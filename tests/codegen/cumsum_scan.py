# T.cumsum / T.cummax: an inclusive scan along one dim, run as one serial loop per row by the
# threads that own the row (a T.Parallel over the other dims).  An in-place shared operand is
# read from a shared copy (each row scan reads one buffer and writes another, so thread_sync
# needs no barrier inside it); a fragment goes through shared memory both ways; reverse=True
# scans from the last element; float16 accumulates in float32.
# tilescale-test: -k scans -D M=8 -D N=64
# tilescale-dump: thread_sync
import tilelang
import tilelang.language as T


@tilelang.jit
def scans(M, N):

    @T.prim_func
    def main(A: T.Tensor((M, N), "float16"), B: T.Tensor((M, N), "float16"), C: T.Tensor((M, N), "float32"),
             D: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            s = T.alloc_shared((M, N), "float16")
            t = T.alloc_shared((M, N), "float16")
            f = T.alloc_fragment((M, N), "float32")
            v = T.alloc_shared((N,), "float32")
            T.copy(A, s)
            T.cumsum(s, t, dim=1)
            T.cumsum(t, reverse=True, dim=-1)
            T.copy(t, B)
            T.copy(A, f)
            T.cumsum(f, dim=0)
            T.copy(f, C)
            T.copy(A[0, :], v)
            T.cummax(v)
            T.copy(v, D)

    return main
