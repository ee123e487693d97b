# Per-thread counters in shared memory (TileScale's DeepEP layout kernel): inside a loop whose
# trip count differs between threads, each thread only touches row threadIdx.x of `cnt`, so no
# barrier is needed there; the barriers go around the loop, before the rows are summed by
# other threads.
# tilescale-test: -k private_rows
# tilescale-dump: thread_sync
import tilelang
import tilelang.language as T


@tilelang.jit
def private_rows(threads=128):
    n = T.dynamic("n")

    @T.prim_func
    def main(idx: T.Tensor([n], "int32"), out: T.Tensor([4], "int32")):
        with T.Kernel(1, threads=threads) as bx:
            tx = T.get_thread_binding()
            cnt = T.alloc_shared([threads, 4], "int32")
            T.clear(cnt)
            for i in T.serial(tx, n, threads):
                e = T.alloc_var("int32")
                e = idx[i]
                if e >= 0 and e < 4:
                    cnt[tx, e] += 1
            if tx < 4:
                s = T.alloc_var("int32")
                s = 0
                for r in T.serial(threads):
                    s += cnt[r, tx]
                out[tx] = s

    return main
