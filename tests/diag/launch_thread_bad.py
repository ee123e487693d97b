# T.launch_thread inside a T.Kernel names one of the kernel's own axes with its extent: a
# different extent and an unknown tag are errors; T.tvm_storage_sync takes "shared" only.
# tilescale-test: -k bad
import tilelang.language as T


@T.prim_func
def bad(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        tx = T.launch_thread("threadIdx.x", 64)
        ty = T.launch_thread("vthread", 2)
        T.tvm_storage_sync("global")
