# A host helper class used while building a kernel: class attributes, __init__ with
# defaults, a method of a base class called through an instance of the derived one (which
# calls the base's __init__ explicitly), an attribute set after construction, and a method
# that stages IR when called inside the kernel (like TileLang's MMA emitters).
# tilescale-test: -k class_helper
import tilelang
import tilelang.language as T


class Base:
    scale = 2

    def __init__(self, offset=1):
        self.offset = offset

    def value(self, x):
        return x * self.scale + self.offset


class Writer(Base):
    def __init__(self, extra):
        Base.__init__(self, offset=3)
        self.extra = extra

    def store(self, buf, i):
        buf[i] = self.value(i) + self.extra


@tilelang.jit
def class_helper(N=128):
    w = Writer(4)
    w.extra = w.extra + Writer.scale

    @T.prim_func
    def main(A: T.Tensor((N,), "int32")):
        with T.Kernel(1, threads=N) as bx:
            tx = T.get_thread_binding()
            w.store(A, tx)

    return main
