# TileLang's explicit-width loads and stores (T.ldg32/64/128, T.lds32, T.stg*/T.sts*) with
# predicates, T.reinterpret of the registers as a vector dtype, and a slice assigned a tile:
# each load or store one vector access of the memory operand's own elements through a view of
# the 32-bit words; a false predicate loads zeros and skips the store.
# tilescale-test: -k ldst_bits
# tilescale-dump: thread_sync
import tilelang.language as T


@T.prim_func
def ldst_bits(X: T.Tensor((128,), T.float32), Z: T.Tensor((256,), T.float16), Y: T.Tensor((128,), T.float32),
              W: T.Tensor((256,), T.float16), V: T.Tensor((64,), T.float32)):
    with T.Kernel(1, threads=32):
        pid = T.get_thread_binding()
        S = T.alloc_shared((128,), T.float32)
        V[pid] = T.reinterpret(T.ldg32(X[pid], pred=pid < 16), T.float32)
        v4 = T.ldg128(X[pid * 4:pid * 4 + 4])
        T.stg128(Y[pid * 4:pid * 4 + 4], v4, pred=pid < 24)
        h = T.ldg128(Z[pid * 8:pid * 8 + 8])
        T.sts128(S[pid * 4:pid * 4 + 4], h)
        w = T.lds64(S[(pid + 1) % 32 * 4:(pid + 1) % 32 * 4 + 2])
        W[pid * 8:pid * 8 + 4] = T.reinterpret(w, T.float16x4)
        V[32 + pid] = T.reinterpret(T.lds32(S[pid * 4 + 3]), T.float32)
