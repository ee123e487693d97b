# A factory argument Python keeps (tilelang passes `_tilescale.host_object(...)` for an object it
# cannot hand to the compiler): carried while unused, an error naming the parameter once used.
# tilescale-test: -k scaled -D n=64 -D fixture=_tilescale.host_object("fixture","conftest.Fixture")
import tilelang.language as T


def scaled(n, fixture):
    m = fixture.size

    @T.prim_func
    def main(A: T.Tensor((n,), "float32")):
        with T.Kernel(1, threads=n) as bx:
            for i in T.Parallel(n):
                A[i] = A[i] * m
    return main
