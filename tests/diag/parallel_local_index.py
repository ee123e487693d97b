# A T.alloc_local buffer indexed by a T.Parallel loop variable, directly or through a value
# computed from one, is refused (TileLang's analysis/test_tilelang_parallel_local_index_checker):
# each thread holds its own copy while T.Parallel spreads the iterations over the threads.
# tilescale-test: -k bad
import tilelang.language as T


@T.prim_func
def bad(out: T.Tensor((32,), T.float32)):
    with T.Kernel(1, threads=32):
        local = T.alloc_local((32,), T.float32)
        flat = T.alloc_local((32,), T.float32)
        for i in T.serial(32):
            local[i] = T.float32(i)
        for i in T.Parallel(32):
            out[i] = local[i]
        for i, j in T.Parallel(8, 4):
            k = i * 4 + j
            flat[k] = T.float32(1)
