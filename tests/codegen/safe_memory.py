# Global accesses that may fall outside their tensor are guarded (TileLang's semantics): the
# column loop covers ceildiv(N, 256) * 256 columns of an N-column tensor, so the load of X
# reads 0 and the store to Y is skipped past column N; a gather through Idx reads 0 for an
# index outside X; the row index (a block index of a grid of exactly M blocks) and the
# in-range load of Idx are proven and stay unguarded.
# tilescale-test: -k clamp_rows -D M=64 -D N=1000
# tilescale-dump: safe_memory
import tilelang.language as T


def clamp_rows(M, N, threads=256):
    @T.prim_func
    def main(X: T.Tensor((M, N), "float32"), Idx: T.Tensor((M, 4), "int32"), Y: T.Tensor((M, N), "float32"),
             G: T.Tensor((M, 4), "float32")):
        with T.Kernel(M, threads=threads) as bx:
            tx = T.get_thread_binding()
            for k in T.serial(T.ceildiv(N, threads)):
                col = k * threads + tx
                Y[bx, col] = X[bx, col] * 2.0
            if tx < 4:
                G[bx, tx] = X[bx, Idx[bx, tx]]

    return main
