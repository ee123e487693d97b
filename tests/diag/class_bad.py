# Classes in host code: a class derived from a library class the interpreter does not have
# (torch.nn.Module) cannot be used, an attribute no class in the hierarchy defines is an
# AttributeError, and __init__ is called with the constructor's arguments.
# tilescale-test: -k bad
import torch
import tilelang
import tilelang.language as T


class Model(torch.nn.Module):
    def __init__(self):
        self.n = 1


class Helper:
    def __init__(self, n):
        self.n = n


@tilelang.jit
def bad(N=64):
    m = Model()
    h = Helper(4)
    w = h.width
    h2 = Helper()

    @T.prim_func
    def main(A: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=N) as bx:
            A[0] = 1.0

    return main
