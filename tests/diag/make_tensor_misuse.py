# T.make_tensor misuse: the address must be a 64-bit value (an element of a T.ptr tensor),
# not an int32 index or a Python number; strides are refused; the element type must be
# storable; it is a kernel statement.
# tilescale-test: -k bad
import tilelang.language as T


@T.prim_func
def bad(P: T.Tensor([4], T.ptr), I: T.Tensor([4], T.int32)):
    X = T.make_tensor(P[0], (16, 16), T.float16)
    with T.Kernel(4, threads=32) as g:
        a = T.make_tensor(I[g], (16, 16), T.float16)
        b = T.make_tensor(1234, (16, 16), T.float16)
        c = T.make_tensor(P[g], (16, 16), T.float16, strides=(32, 1))
        d = T.make_tensor(P[g], (16, -1), T.float16)
        e = T.make_tensor(P[g], (16, 16), "handle")
        f = T.make_tensor(P[g], (16, 16.5), T.float16)
