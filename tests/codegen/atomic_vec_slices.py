# T.atomic_addx4 / addx2 on slices (dst[i:i+4], as TileLang's tests write them) with
# return_prev=True: the values replaced, as a register array a slice assignment stores (the
# updates are element atomics then, each returning its old value).
# tilescale-test: -k atomic_vec_slices
# tilescale-dump: thread_sync
import tilelang.language as T


@T.prim_func
def atomic_vec_slices(A: T.Tensor((256,), T.float32), B: T.Tensor((256,), T.float32), Prev: T.Tensor((256,), T.float32),
                      H: T.Tensor((128,), T.float16), G: T.Tensor((128,), T.float16), HPrev: T.Tensor((128,), T.float16)):
    with T.Kernel(1, threads=64):
        t = T.get_thread_binding()
        Prev[t * 4:t * 4 + 4] = T.atomic_addx4(B[t * 4:t * 4 + 4], A[t * 4:t * 4 + 4], return_prev=True)
        HPrev[t * 2:t * 2 + 2] = T.atomic_addx2(G[t * 2:t * 2 + 2], H[t * 2:t * 2 + 2], return_prev=True)
