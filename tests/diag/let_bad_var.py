# T.let binds a declared scalar (`x = T.int32()` in a kernel); anything else is named in the
# error, and so is a variable declared outside T.Kernel.
# tilescale-test: -k main
import tilelang.language as T

@T.prim_func
def main(A: T.Tensor((16,), "float32")):
    n = T.int32()
    with T.Kernel(1, threads=32) as bx:
        T.let(A, 1)
        T.let(3, 4)
        x = T.float32()
        T.let(x, 2.0)
        A[0] = x
