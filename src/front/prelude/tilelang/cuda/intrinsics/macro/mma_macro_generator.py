"""tilelang.cuda.intrinsics.macro.mma_macro_generator: TileLang's hand-scheduled warp MMA, as
kernels that write their own GEMM main loop use it (examples/gemm/example_gemm_intrinsics.py):

    mma_emitter = TensorCoreIntrinEmitter(a_dtype=..., b_dtype=..., accum_dtype=...,
        a_transposed=False, b_transposed=True, block_row_warps=2, block_col_warps=2,
        warp_row_tiles=64, warp_col_tiles=64, chunk=32)
    ... inside T.Kernel:
    A_local = T.alloc_local((warp_rows * local_size_a), in_dtype)     # per-thread registers
    mma_emitter.ldmatrix_a(A_local, A_shared, ki)    # this warp's rows of A, k-step ki
    mma_emitter.ldmatrix_b(B_local, B_shared, ki)
    mma_emitter.mma(A_local, B_local, C_local)       # C_local += A_local * B_local
    mma_emitter.stmatrix(C_local, C_shared)          # the block's C tile, [M/16, N/16, 16, 16]

The block's warps form a block_row_warps x block_col_warps grid; each owns a warp_row_tiles x
warp_col_tiles piece of the block's C, cut into 16 x 16 tiles (warp_rows x warp_cols of them).
Per 16 x 16 tile a thread holds local_size_a elements of A (16 x micro_size_k), local_size_b
of B and 8 accumulators, in the register order of mma.sync.m16n8kK (K = 32 bytes of the input
type: 16 for 16-bit types, 32 for 8-bit), lane l = 4 g + t:
  A regs r0..r3 = rows (g, g+8, g, g+8) x k chunks (0, 0, 1, 1) of K/2, each 4 bytes at t
  B regs r0, r1 = n rows g, k chunks 0, 1 (the tile's first 8 columns), then r2, r3 the next 8
  C values 0..3 = (row g, col 2t), (g, 2t+1), (g+8, 2t), (g+8, 2t+1); 4..7 the same at col + 8
ldmatrix x4 loads exactly these registers from shared memory: lane l supplies row l % 8 of
matrix l // 8 (T.ptx_ldmatrix); mma issues two m16n8kK per tile (T.ptx_mma); stmatrix writes
each thread's accumulators with plain stores.  Transposed operands (A as [K, M], B as [K, N])
use ldmatrix.trans, which exists for 16-bit types only.

Written for this project from the PTX ISA's fragment layouts; the methods trace IR when called
inside a kernel, like TileLang's T.macro helpers."""
import tilelang.language as T


class TensorCoreIntrinEmitter:
    WARP_SIZE = 32
    M_DIM = 16
    N_DIM = 16

    def __init__(
        self,
        a_dtype=T.float16,
        b_dtype=T.float16,
        accum_dtype=T.float16,
        a_transposed=False,
        b_transposed=False,
        block_row_warps=2,
        block_col_warps=2,
        warp_row_tiles=8,
        warp_col_tiles=8,
        chunk=16,
        reduce_k=1,
        num_elems_per_byte=1,
        is_m_first=False,
        thread_var=None,
    ):
        self.a_dtype = T.dtype(a_dtype)
        self.b_dtype = T.dtype(b_dtype)
        self.accum_dtype = T.dtype(accum_dtype)
        self.a_transposed = a_transposed
        self.b_transposed = b_transposed
        self.block_row_warps = block_row_warps
        self.block_col_warps = block_col_warps
        self.warp_row_tiles = warp_row_tiles
        self.warp_col_tiles = warp_col_tiles
        self.chunk = chunk
        self.reduce_k = reduce_k
        self.num_elems_per_byte = num_elems_per_byte
        self.is_m_first = is_m_first
        self.thread_var = thread_var
        assert num_elems_per_byte == 1, "TensorCoreIntrinEmitter: packed operands (num_elems_per_byte > 1) are not supported"
        assert self.a_dtype.bits == self.b_dtype.bits, "TensorCoreIntrinEmitter: A and B must have the same width"
        self.micro_size_x = 16
        self.micro_size_y = 16
        self.micro_size_k = 256 // self.a_dtype.bits
        self.k_dim = self.micro_size_k
        assert warp_row_tiles % 16 == 0 and warp_col_tiles % 16 == 0, (
            "TensorCoreIntrinEmitter: warp_row_tiles and warp_col_tiles must be multiples of 16")
        assert chunk % self.micro_size_k == 0, (
            "TensorCoreIntrinEmitter: chunk must be a multiple of the mma's K (" + str(self.micro_size_k) + ")")
        self.warp_rows = warp_row_tiles // 16
        self.warp_cols = warp_col_tiles // 16
        self.local_size_a = 16 * self.micro_size_k // 32
        self.local_size_b = 16 * self.micro_size_k // 32
        self.local_size_out = 16 * 16 // 32
        self.threads = 32 * block_row_warps * block_col_warps * reduce_k
        self.mma_prefix = "m16n8k" + str(self.micro_size_k)

    # ---- which warp and lane run ---------------------------------------------------------------
    def get_thread_binding(self, thread_bindings=None):
        """The thread index: BitBLAS's emitter takes it per call (thread_bindings=, the value of
        T.thread_binding(0, threads, "threadIdx.x")), TileLang's from the constructor."""
        if thread_bindings is not None:
            return thread_bindings
        if self.thread_var is None:
            return T.get_thread_binding()
        return self.thread_var

    def extract_thread_binding(self, thread_id, is_m_first=None):
        """(lane, warp_m, warp_n) of thread_id: warps along N first (is_m_first: along M first)."""
        if is_m_first is None:
            is_m_first = self.is_m_first
        lane = thread_id % 32
        warp = thread_id // 32
        if is_m_first:
            warp_m = (warp // self.block_col_warps) % self.block_row_warps
            warp_n = warp % self.block_col_warps
        else:
            warp_m = warp % self.block_row_warps
            warp_n = (warp // self.block_row_warps) % self.block_col_warps
        return lane, warp_m, warp_n

    # ---- shared memory -> registers ------------------------------------------------------------
    def ldmatrix_a(self, A_local_buf, A_shared_buf, ki, rk=0, thread_bindings=None):
        assert len(A_shared_buf.shape) == 2, "ldmatrix_a: A_shared must be a 2-D shared tile"
        lane, warp_m, warp_n = self.extract_thread_binding(self.get_thread_binding(thread_bindings))
        k0 = rk * self.chunk + ki * self.micro_size_k
        half_k = self.micro_size_k // 2  # 16 bytes: one ldmatrix row
        q = lane // 8
        for i in T.unroll(self.warp_rows):
            m0 = warp_m * self.warp_row_tiles + i * 16
            if not self.a_transposed:
                # matrices (rows 0-7, k 0), (rows 8-15, k 0), (rows 0-7, k 1), (rows 8-15, k 1)
                T.ptx_ldmatrix(self.a_dtype, False, 4, ".b16", A_local_buf.data, i * self.local_size_a,
                               T.address_of(A_shared_buf[m0 + lane % 16, k0 + (lane // 16) * half_k]), 0)
            else:
                assert self.a_dtype.bits == 16, "ldmatrix_a: a transposed A needs a 16-bit type (ldmatrix.trans)"
                # A_shared is [K, M]: matrix q covers m (q % 2) * 8 and k (q // 2) * 8; rows are k
                T.ptx_ldmatrix(self.a_dtype, True, 4, ".b16", A_local_buf.data, i * self.local_size_a,
                               T.address_of(A_shared_buf[k0 + (q // 2) * 8 + lane % 8, m0 + (q % 2) * 8]), 0)

    def ldmatrix_b(self, B_local_buf, B_shared_buf, ki, rk=0, thread_bindings=None):
        assert len(B_shared_buf.shape) == 2, "ldmatrix_b: B_shared must be a 2-D shared tile"
        lane, warp_m, warp_n = self.extract_thread_binding(self.get_thread_binding(thread_bindings))
        k0 = rk * self.chunk + ki * self.micro_size_k
        half_k = self.micro_size_k // 2
        q = lane // 8
        for j in T.unroll(self.warp_cols):
            n0 = warp_n * self.warp_col_tiles + j * 16
            if self.b_transposed:
                # B_shared is [N, K]: matrix q covers n (q // 2) * 8 and k chunk q % 2
                T.ptx_ldmatrix(self.b_dtype, False, 4, ".b16", B_local_buf.data, j * self.local_size_b,
                               T.address_of(B_shared_buf[n0 + (q // 2) * 8 + lane % 8, k0 + (q % 2) * half_k]), 0)
            else:
                assert self.b_dtype.bits == 16, "ldmatrix_b: B as [K, N] needs a 16-bit type (ldmatrix.trans)"
                T.ptx_ldmatrix(self.b_dtype, True, 4, ".b16", B_local_buf.data, j * self.local_size_b,
                               T.address_of(B_shared_buf[k0 + (q % 2) * 8 + lane % 8, n0 + (q // 2) * 8]), 0)

    # ---- the tensor-core product -----------------------------------------------------------------
    def mma(self, A_local_buf, B_local_buf, C_local_buf, k_inner=0):
        half_b = self.local_size_b // 2
        for i in T.unroll(self.warp_rows):
            for j in T.unroll(self.warp_cols):
                c = i * self.warp_cols * self.local_size_out + j * self.local_size_out
                for h in [0, 1]:  # the tile's two 8-column halves
                    T.ptx_mma(self.accum_dtype, self.mma_prefix, "row", "col", self.a_dtype, self.b_dtype,
                              self.accum_dtype, A_local_buf.data, i * self.local_size_a, B_local_buf.data,
                              j * self.local_size_b + h * half_b, C_local_buf.data, c + h * 4, False)

    # ---- registers -> memory -------------------------------------------------------------------
    def stmatrix(self, C_local_buf, C_buf, pid_m=None, pid_n=None, thread_bindings=None):
        """Each thread stores its accumulators: into C_buf[M/16, N/16, 16, 16] (a shared tile of
        16 x 16 tiles), or into a 2-D C_buf at the block (pid_m, pid_n) when those are given."""
        lane, warp_m, warp_n = self.extract_thread_binding(self.get_thread_binding(thread_bindings))
        g = lane // 4
        t = lane % 4
        block_m = self.block_row_warps * self.warp_row_tiles
        block_n = self.block_col_warps * self.warp_col_tiles
        four_d = len(C_buf.shape) == 4
        assert four_d or len(C_buf.shape) == 2, "stmatrix: C must be [M/16, N/16, 16, 16] or 2-D"
        for i in T.unroll(self.warp_rows):
            for j in T.unroll(self.warp_cols):
                for v in T.unroll(8):
                    row = g + ((v % 4) // 2) * 8
                    col = (v // 4) * 8 + t * 2 + v % 2
                    val = C_local_buf[i * self.warp_cols * self.local_size_out + j * self.local_size_out + v]
                    if four_d:
                        C_buf[warp_m * self.warp_rows + i, warp_n * self.warp_cols + j, row, col] = val
                    else:
                        m = warp_m * self.warp_row_tiles + i * 16 + row
                        n = warp_n * self.warp_col_tiles + j * 16 + col
                        if pid_m is not None:
                            m = pid_m * block_m + m
                        if pid_n is not None:
                            n = pid_n * block_n + n
                        C_buf[m, n] = val


class TensorCoreIntrinEmitterWithLadderTransform(TensorCoreIntrinEmitter):
    """B in BitBLAS's Ladder layout.  transform_kind_b=3 (LDMatrixTransform): B is stored as
    [N/16, K/16, 16, 16 / num_elems_per_byte] tiles whose bytes are already in the order the
    mma wants them, so lane l of a warp reads bytes [l * L, (l + 1) * L) of its 16 x 16 tile
    (L = local_size_b / num_elems_per_byte: 4 bytes, eight 4-bit weights) with plain loads, no
    ldmatrix; the kernel then decodes them into local_size_b values in the B register order
    (r0, r1: n rows 0-7 at k halves 0 / 1, then r2, r3 for n rows 8-15) that mma() takes.
    transform_kind_b=0 is the base emitter's B.  A is not transformed (transform_kind_a=0);
    kinds 1 and 2 (tiled, and tiled with an in-tile ldmatrix permutation) are not provided."""

    def __init__(self, a_dtype=T.float16, b_dtype=T.float16, accum_dtype=T.float16, a_transposed=False,
                 b_transposed=False, block_row_warps=2, block_col_warps=2, warp_row_tiles=8, warp_col_tiles=8,
                 chunk=16, reduce_k=1, num_elems_per_byte=1, is_m_first=False, transform_kind_a=0,
                 transform_kind_b=0):
        # (the base class checks an unpacked B: a packed one is only read by ldmatrix_b below)
        TensorCoreIntrinEmitter.__init__(self, a_dtype=a_dtype, b_dtype=b_dtype, accum_dtype=accum_dtype,
                                         a_transposed=a_transposed, b_transposed=b_transposed,
                                         block_row_warps=block_row_warps, block_col_warps=block_col_warps,
                                         warp_row_tiles=warp_row_tiles, warp_col_tiles=warp_col_tiles, chunk=chunk,
                                         reduce_k=reduce_k, num_elems_per_byte=1, is_m_first=is_m_first)
        transform_kind_a = int(transform_kind_a)
        transform_kind_b = int(transform_kind_b)
        if transform_kind_a != 0 or transform_kind_b not in [0, 3]:
            raise NotImplementedError("TensorCoreIntrinEmitterWithLadderTransform: transform_kind_a=" +
                                      str(transform_kind_a) + ", transform_kind_b=" + str(transform_kind_b) +
                                      " is not supported yet (A untransformed, B with kind 0 or 3)")
        assert num_elems_per_byte == 1 or transform_kind_b == 3, (
            "TensorCoreIntrinEmitterWithLadderTransform: packed B (num_elems_per_byte > 1) needs transform_kind_b=3")
        assert self.b_transposed, "TensorCoreIntrinEmitterWithLadderTransform: the Ladder layout of B is [N, K] tiles"
        self.num_elems_per_byte = num_elems_per_byte
        self.transform_kind_a = transform_kind_a
        self.transform_kind_b = transform_kind_b

    def ldmatrix_b(self, B_local_buf, B_shared_buf, ki, rk=0, thread_bindings=None):
        if self.transform_kind_b == 0:
            return TensorCoreIntrinEmitter.ldmatrix_b(self, B_local_buf, B_shared_buf, ki, rk, thread_bindings)
        assert len(B_shared_buf.shape) == 4, "ldmatrix_b: a Ladder B tile is [N/16, K/16, 16, 16 / elems per byte]"
        lane, warp_m, warp_n = self.extract_thread_binding(self.get_thread_binding(thread_bindings))
        per_lane = self.local_size_b // self.num_elems_per_byte  # bytes of the tile each lane holds
        row_bytes = self.micro_size_k // self.num_elems_per_byte
        tk = rk * (self.chunk // self.micro_size_k) + ki
        for j in T.unroll(self.warp_cols):
            tn = warp_n * self.warp_cols + j
            for v in T.vectorized(per_lane):
                e = lane * per_lane + v
                B_local_buf[j * per_lane + v] = B_shared_buf[tn, tk, e // row_bytes, e % row_bytes]


class INT4TensorCoreIntrinEmitter(TensorCoreIntrinEmitter):
    """A and B in int8 (uint8) registers that hold two 4-bit values a byte: the loads are the
    8-bit emitter's (a 16 x 32-byte tile per 16 x 16 output tile), the product takes four
    mma.sync.m16n8k32.s4 per tile, one per (k half, n half): A's registers r0, r1 are the first
    16 bytes of k, r2, r3 the next; B's r0 / r1 are n rows 0-7 at k halves 0 / 1, r2 / r3 the
    same for rows 8-15."""

    def mma(self, A_local_buf, B_local_buf, C_local_buf, k_inner=0):
        assert self.a_dtype.bits == 8, "INT4TensorCoreIntrinEmitter: A and B are int8 storage of int4 pairs"
        kind = "uint4" if self.a_dtype == T.uint8 else "int4"
        la = self.local_size_a
        lb = self.local_size_b
        for i in T.unroll(self.warp_rows):
            for j in T.unroll(self.warp_cols):
                c = i * self.warp_cols * self.local_size_out + j * self.local_size_out
                for kh in [0, 1]:
                    for h in [0, 1]:
                        T.ptx_mma(self.accum_dtype, "m16n8k32", "row", "col", kind, kind, self.accum_dtype,
                                  A_local_buf.data, i * la + kh * (la // 2), B_local_buf.data,
                                  j * lb + h * (lb // 2) + kh * (lb // 4), C_local_buf.data, c + h * 4, False)
