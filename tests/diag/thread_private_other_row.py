# Only rows one thread alone touches are thread-private: a loop whose trip count differs
# between threads and that updates a row two threads share (tx // 2) still needs a barrier
# inside, which cannot be placed there.  ((tx + 1) % threads, each row one thread's, is fine.)
# tilescale-test: -k other_row
import tilelang
import tilelang.language as T


@tilelang.jit
def other_row(threads=128):
    n = T.dynamic("n")

    @T.prim_func
    def main(idx: T.Tensor([n], "int32"), out: T.Tensor([4], "int32")):
        with T.Kernel(1, threads=threads) as bx:
            tx = T.get_thread_binding()
            cnt = T.alloc_shared([threads, 4], "int32")
            T.clear(cnt)
            for i in T.serial(tx, n, threads):
                e = T.alloc_var("int32")
                e = idx[i] % 4
                cnt[tx // 2, e] += 1
            if tx < 4:
                out[tx] = cnt[0, tx]

    return main
