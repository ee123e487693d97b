# T.dp4a with whole buffers (TileLang's issue 2600 test: T.dp4a(A, B, C)): each stands for its
# first element, as TileLang passes the buffers' data pointers.
# tilescale-test: -k kernel
import tilelang.language as T


@T.prim_func
def kernel(A: T.Tensor((4,), "int8"), B: T.Tensor((4,), "int8"), C: T.Tensor((1,), "int32")):
    with T.Kernel(1, threads=32):
        T.dp4a(A, B, C)
