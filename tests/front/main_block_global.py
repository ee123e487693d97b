# A global assigned only in the script's main block (`H` below) is what the factory reads
# when the script runs: the main block's straight-line assignments supply names nothing
# else assigns (with a warning naming the line); its other statements never run here, nor
# does an assignment that would also rebind a module-level name (`W, Z = ...`: W stays 64).
# tilescale-test: -k heads_sum -D B=2
import tilelang
import tilelang.language as T

W = 64


@tilelang.jit(out_idx=[1])
def heads_sum(B):
    @T.prim_func
    def main(X: T.Tensor((B * H, W), "float32"), Y: T.Tensor((B * H, W), "float32")):
        with T.Kernel(B * H, threads=64) as bh:
            for j in T.Parallel(W):
                Y[bh, j] = X[bh, j] + bh % H

    return main


if __name__ == "__main__":
    H = 4
    W, Z = 32, 1
    print(heads_sum(2))
