# The T.ld / T.st matrix between two ranks (make check-dist, host program dist_prims.c): every
# valid store (sem x scope x na: 21) on one rank, then a release flag handed to the next rank;
# that rank waits for the flag (acquire) and reads every slot with every valid load
# (sem x scope x na x nc: 27), so 21 x 27 pairs per run, on 32- and 64-bit values.
#   remote_st=True:  the writer stores into the reader's D (dst_pe), the reader loads locally
#   remote_st=False: the writer stores into its own D, the reader loads it remotely (src_pe)
# Slot s of D sits on its own 128-byte line (D[s * STRIDE]) and no slot is read before the
# flag, so the non-coherent loads (nc=True) see data that is read-only from then on.
# Values: writer w, slot s, round r -> (w + 1) * 100000 + s * 1000 + r, plus (s + 1) << 40 for
# 64-bit types (a lost upper word shows).  Got[l * NS + s] = slot s read by load variant l.
# Orders of the variants: ST_VARIANTS / LD_VARIANTS in dist_prims.c.
import tilelang
import tilelang.language as T

NS = 21
NL = 27


@tilelang.jit
def ldst_matrix(dtype="int32", remote_st=True):
    STRIDE = 32 if dtype == "int32" else 16
    HI = 0 if dtype == "int32" else 1 << 40

    @T.prim_func
    def main(D: T.Tensor((NS * STRIDE,), dtype), flag: T.Tensor((2,), "uint64"), Got: T.Tensor((NL * NS,), dtype),
             rnd: T.int32):
        with T.Kernel(1, threads=32) as bx:
            tx = T.get_thread_binding()
            rank = T.get_rank()
            nr = T.get_num_ranks()
            right = (rank + 1) % nr
            left = (rank + nr - 1) % nr
            spe = right if remote_st else -1
            lpe = -1 if remote_st else left
            v = T.alloc_var(dtype)

            def val(s):
                return T.cast((rank + 1) * 100000 + s * 1000 + rnd, dtype) + T.cast(s + 1, dtype) * HI

            # writer: one thread stores every slot, each with its own variant, then releases
            if tx == 0:
                T.st(D[0 * STRIDE], val(0), sem="weak", scope="cta", dst_pe=spe)
                T.st(D[1 * STRIDE], val(1), sem="weak", scope="gpu", dst_pe=spe)
                T.st(D[2 * STRIDE], val(2), sem="weak", scope="sys", dst_pe=spe)
                T.st(D[3 * STRIDE], val(3), sem="weak", scope="cta", na=True, dst_pe=spe)
                T.st(D[4 * STRIDE], val(4), sem="weak", scope="gpu", na=True, dst_pe=spe)
                T.st(D[5 * STRIDE], val(5), sem="weak", scope="sys", na=True, dst_pe=spe)
                T.st(D[6 * STRIDE], val(6), sem="volatile", scope="cta", dst_pe=spe)
                T.st(D[7 * STRIDE], val(7), sem="volatile", scope="gpu", dst_pe=spe)
                T.st(D[8 * STRIDE], val(8), sem="volatile", scope="sys", dst_pe=spe)
                T.st(D[9 * STRIDE], val(9), sem="release", scope="cta", dst_pe=spe)
                T.st(D[10 * STRIDE], val(10), sem="release", scope="gpu", dst_pe=spe)
                T.st(D[11 * STRIDE], val(11), sem="release", scope="sys", dst_pe=spe)
                T.st(D[12 * STRIDE], val(12), sem="release", scope="cta", na=True, dst_pe=spe)
                T.st(D[13 * STRIDE], val(13), sem="release", scope="gpu", na=True, dst_pe=spe)
                T.st(D[14 * STRIDE], val(14), sem="release", scope="sys", na=True, dst_pe=spe)
                T.st(D[15 * STRIDE], val(15), sem="relaxed", scope="cta", dst_pe=spe)
                T.st(D[16 * STRIDE], val(16), sem="relaxed", scope="gpu", dst_pe=spe)
                T.st(D[17 * STRIDE], val(17), sem="relaxed", scope="sys", dst_pe=spe)
                T.st(D[18 * STRIDE], val(18), sem="relaxed", scope="cta", na=True, dst_pe=spe)
                T.st(D[19 * STRIDE], val(19), sem="relaxed", scope="gpu", na=True, dst_pe=spe)
                T.st(D[20 * STRIDE], val(20), sem="relaxed", scope="sys", na=True, dst_pe=spe)
                T.st(flag[0], rnd, sem="release", scope="sys", dst_pe=right)
            # reader: every thread acquires the flag itself, then thread s reads slot s
            T.wait_eq(flag[0], rnd)
            if tx < NS:
                T.ld(D[tx * STRIDE], v, sem="weak", scope="cta", src_pe=lpe)
                Got[0 * NS + tx] = v
                T.ld(D[tx * STRIDE], v, sem="weak", scope="gpu", src_pe=lpe)
                Got[1 * NS + tx] = v
                T.ld(D[tx * STRIDE], v, sem="weak", scope="sys", src_pe=lpe)
                Got[2 * NS + tx] = v
                T.ld(D[tx * STRIDE], v, sem="weak", scope="cta", na=True, src_pe=lpe)
                Got[3 * NS + tx] = v
                T.ld(D[tx * STRIDE], v, sem="weak", scope="gpu", na=True, src_pe=lpe)
                Got[4 * NS + tx] = v
                T.ld(D[tx * STRIDE], v, sem="weak", scope="sys", na=True, src_pe=lpe)
                Got[5 * NS + tx] = v
                T.ld(D[tx * STRIDE], v, sem="weak", scope="cta", nc=True, src_pe=lpe)
                Got[6 * NS + tx] = v
                T.ld(D[tx * STRIDE], v, sem="weak", scope="gpu", nc=True, src_pe=lpe)
                Got[7 * NS + tx] = v
                T.ld(D[tx * STRIDE], v, sem="weak", scope="sys", nc=True, src_pe=lpe)
                Got[8 * NS + tx] = v
                T.ld(D[tx * STRIDE], v, sem="weak", scope="cta", na=True, nc=True, src_pe=lpe)
                Got[9 * NS + tx] = v
                T.ld(D[tx * STRIDE], v, sem="weak", scope="gpu", na=True, nc=True, src_pe=lpe)
                Got[10 * NS + tx] = v
                T.ld(D[tx * STRIDE], v, sem="weak", scope="sys", na=True, nc=True, src_pe=lpe)
                Got[11 * NS + tx] = v
                T.ld(D[tx * STRIDE], v, sem="volatile", scope="cta", src_pe=lpe)
                Got[12 * NS + tx] = v
                T.ld(D[tx * STRIDE], v, sem="volatile", scope="gpu", src_pe=lpe)
                Got[13 * NS + tx] = v
                T.ld(D[tx * STRIDE], v, sem="volatile", scope="sys", src_pe=lpe)
                Got[14 * NS + tx] = v
                T.ld(D[tx * STRIDE], v, sem="acquire", scope="cta", src_pe=lpe)
                Got[15 * NS + tx] = v
                T.ld(D[tx * STRIDE], v, sem="acquire", scope="gpu", src_pe=lpe)
                Got[16 * NS + tx] = v
                T.ld(D[tx * STRIDE], v, sem="acquire", scope="sys", src_pe=lpe)
                Got[17 * NS + tx] = v
                T.ld(D[tx * STRIDE], v, sem="acquire", scope="cta", na=True, src_pe=lpe)
                Got[18 * NS + tx] = v
                T.ld(D[tx * STRIDE], v, sem="acquire", scope="gpu", na=True, src_pe=lpe)
                Got[19 * NS + tx] = v
                T.ld(D[tx * STRIDE], v, sem="acquire", scope="sys", na=True, src_pe=lpe)
                Got[20 * NS + tx] = v
                T.ld(D[tx * STRIDE], v, sem="relaxed", scope="cta", src_pe=lpe)
                Got[21 * NS + tx] = v
                T.ld(D[tx * STRIDE], v, sem="relaxed", scope="gpu", src_pe=lpe)
                Got[22 * NS + tx] = v
                T.ld(D[tx * STRIDE], v, sem="relaxed", scope="sys", src_pe=lpe)
                Got[23 * NS + tx] = v
                T.ld(D[tx * STRIDE], v, sem="relaxed", scope="cta", na=True, src_pe=lpe)
                Got[24 * NS + tx] = v
                T.ld(D[tx * STRIDE], v, sem="relaxed", scope="gpu", na=True, src_pe=lpe)
                Got[25 * NS + tx] = v
                T.ld(D[tx * STRIDE], v, sem="relaxed", scope="sys", na=True, src_pe=lpe)
                Got[26 * NS + tx] = v

    return main
