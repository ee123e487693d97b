# Kernels for tests/python/test_tilelang.py: the shapes of TileLang's own example scripts that
# the tilelang package must handle (each mirrors one corpus file, small enough to compile fast).
import tilelang
import tilelang.language as T


# ---- eager T.const sizes that are not a bare dimension -----------------------------------------
# (convolution: KH = K; deepgemm: A_shape = (M, K) then T.Tensor(A_shape); grouped GEMM:
# `[...] if not trans_b else [...]`, N only in the second tensor; NSA decode: heads // groups;
# packed int4: K // 2.)
@tilelang.jit
def packed_scale(A, B, S, block=64, trans_b=False, groups=2):
    M, K, N, H = T.const("M, K, N, H")
    A_shape = (M, K // 2)
    KK = K
    B_shape = [KK, N] if not trans_b else [N, KK]
    S: T.Tensor((H // groups, 2 * N + 1), T.float32)   # H and N appear only here and later
    A: T.Tensor(A_shape, T.int8)
    B: T.Tensor(B_shape, T.float16)
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(N, block), threads=block) as bx:
        for j in T.Parallel(block):
            if bx * block + j < N:
                C[0, bx * block + j] = B[0, bx * block + j] if not trans_b else B[bx * block + j, 0]
    return C


# A T.const that is also a parameter, its value passed by position; M only through M * N.
@tilelang.jit
def by_position(X, N, block=32):
    M, N = T.const("M, N")
    X: T.Tensor((M * N,), T.float32)
    Y = T.empty((M, N), T.float32)
    with T.Kernel(T.ceildiv(M, block), threads=block) as bx:
        for i in T.Parallel(block):
            if bx * block + i < M:
                Y[bx * block + i, 0] = X[(bx * block + i) * N]
    return Y


# ---- eager kernel with dynamic rows: outputs allocated from the input's dims ---------------------
# (deepseek_v4/act_quant.py's fp8_quant_kernel.)
@tilelang.jit
def row_quant(x, group=128):
    M = T.dynamic("M")
    N = T.const("N")
    x: T.Tensor[(M, N), T.float32]
    q = T.empty((M, N), T.float16)
    s = T.empty((M, T.ceildiv(N, group)), T.float32)
    with T.Kernel(T.ceildiv(M, 32), T.ceildiv(N, group), threads=128) as (bx, by):
        for i, j in T.Parallel(32, group):
            if bx * 32 + i < M:
                q[bx * 32 + i, by * group + j] = T.Cast(T.float16, x[bx * 32 + i, by * group + j])
        for i in T.Parallel(32):
            if bx * 32 + i < M:
                s[bx * 32 + i, by] = 1.0
    return q, s


# ---- @autotune over an eager kernel -------------------------------------------------------------
# (linear_attention/example_mamba_chunk_state.py, topk/example_topk.py.)
@tilelang.autotune(configs=[{"block": b, "threads": t} for b in (32, 64) for t in (32, 64, 128)],
                   warmup=1, rep=1)
@tilelang.jit
def rows_copy(X, block=64, threads=128):
    M, N = T.const("M, N")
    X: T.Tensor((M, N), T.float32)
    Y = T.empty((M, N), T.float32)
    with T.Kernel(T.ceildiv(M, block), threads=threads) as bx:
        for i, j in T.Parallel(block, N):
            if bx * block + i < M:
                Y[bx * block + i, j] = X[bx * block + i, j] * 2.0
    return Y


# ---- @autotune with pass_configs as a tuned parameter (gemm autotune examples) ---------------------
@tilelang.autotune(configs=[{"block": 64, "pass_configs": {tilelang.PassConfigKey.TL_DISABLE_WARP_SPECIALIZED: ws}}
                            for ws in (True, False)], warmup=1, rep=1)
@tilelang.jit(out_idx=[-1])
def scale_lazy(M, block=128):
    @T.prim_func
    def main(A: T.Tensor((M,), T.float32), B: T.Tensor((M,), T.float32)):
        with T.Kernel(T.ceildiv(M, block), threads=block) as bx:
            for i in T.Parallel(block):
                if bx * block + i < M:
                    B[bx * block + i] = A[bx * block + i] * 2.0
    return main


# ---- a factory nested in another function (AutoTuner.from_kernel in gemm autotune examples) -----
def make_factory(M, dtype=T.float16):
    scale = 3.0

    def kernel(block=None, threads=None):
        @T.prim_func
        def main(A: T.Tensor((M,), dtype), B: T.Tensor((M,), dtype)):
            with T.Kernel(T.ceildiv(M, block), threads=threads) as bx:
                for i in T.Parallel(block):
                    if bx * block + i < M:
                        B[bx * block + i] = A[bx * block + i] * scale
        return main
    return kernel


def make_broken(M):
    def kernel(block=None):
        @T.prim_func
        def main(A: T.Tensor((M,), T.float32)):
            with T.Kernel(1, threads=32) as bx:
                A[0] = no_such_name
        return main
    return kernel


# ---- a lazy factory whose @T.prim_func is built by a helper (block-sparse attention examples) ----
@tilelang.jit(out_idx=[1])
def helper_factory(M, dtype=T.float32):
    block = 64

    def kernel_func(block, threads):
        @T.prim_func
        def main(A: T.Tensor((M,), dtype), B: T.Tensor((M,), dtype)):
            with T.Kernel(T.ceildiv(M, block), threads=threads) as bx:
                for i in T.Parallel(block):
                    if bx * block + i < M:
                        B[bx * block + i] = A[bx * block + i]
        return main
    return kernel_func(block, 64)


# ---- a test function that defines a @T.prim_func, then compiles and inspects it (TileLang's own
# tests do this: the compiler re-runs the function only up to the def) ----
def compile_inline(n, dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((n,), dtype), B: T.Tensor((n,), dtype)):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(n):
                B[i] = A[i] * 2
    kernel = tilelang.compile(main, out_idx=[1])
    src = kernel.get_kernel_source()
    assert "__global__" in src
    return kernel, src


def compile_branch(op, n=64, dtype="float32"):
    """The same, the @T.prim_func defined in one branch of an if (TileLang's math tests)."""
    if op == "add":
        @T.prim_func
        def main(A: T.Tensor((n,), dtype), B: T.Tensor((n,), dtype)):
            with T.Kernel(1, threads=32) as bx:
                for i in T.Parallel(n):
                    B[i] = T.ieee_add(A[i], A[i], "rz")
    else:
        @T.prim_func
        def main(A: T.Tensor((n,), dtype), B: T.Tensor((n,), dtype)):
            with T.Kernel(1, threads=32) as bx:
                for i in T.Parallel(n):
                    B[i] = T.ieee_fdiv(A[i], A[i], "ru")
    kernel = tilelang.compile(main, out_idx=[1])
    return kernel.get_kernel_source()


def compile_fmaf_for(target, n=64, dtype="bfloat16", options=None):
    """A factory taking a dict (TileLang's ieee tests pass target={"kind": "cuda", "arch":
    "sm_75"} through their helper); bfloat16 fmaf compiled for that target."""
    @T.prim_func
    def main(A: T.Tensor((n,), dtype), B: T.Tensor((n,), dtype)):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(n):
                B[i] = T.ieee_fmaf(A[i], A[i], A[i], "rn")
    return tilelang.compile(main, out_idx=[1], target=target)


def infinity_fill(dtype):
    """T.infinity of a dtype filled into a tensor (TileLang's infinity test)."""
    @T.prim_func
    def main(A: T.Tensor((32,), dtype)):
        with T.Kernel(1, threads=32):
            T.fill(A, T.infinity(dtype))
    return tilelang.compile(main, out_idx=-1)


@T.macro
def _empty_like_dims(A):
    M, N = A.shape
    B = T.empty(M, N, dtype=A.dtype)  # the dims one by one (TileLang's eager tests)
    with T.Kernel(T.ceildiv(M, 64), threads=128) as bx:
        T.copy(A[bx * 64, 0], B[bx * 64, 0])
    return B


@tilelang.jit
def empty_dims(A):
    M, N = T.const("M, N")
    A: T.Tensor[[M, N], T.float16]
    C = T.empty(M, N, T.float32)  # and a last positional dtype
    with T.Kernel(1, threads=128) as bx:
        T.copy(A[0, 0], C[0, 0])
    return _empty_like_dims(A), C


# ---- lambdas: read from an enclosing scope (TileLang's comm_reducer tests) and passed as a
# factory argument (T.Layout index maps) ----
def make_lambda_reader(combine):
    @tilelang.jit
    def scaled(A, n=64):
        A: T.Tensor((n,), T.float32)
        B = T.empty((n,), T.float32)
        with T.Kernel(1, threads=32):
            for i in T.Parallel(n):
                B[i] = combine(A[i], 3.0)
        return B
    return scaled


def lambda_argument(index_of, n=64):
    @T.prim_func
    def main(A: T.Tensor((n,), T.float32), B: T.Tensor((n,), T.float32)):
        with T.Kernel(1, threads=32):
            for i in T.Parallel(n):
                B[i] = A[index_of(i)]
    return main


# A 4-bit tensor given as its bytes (TileLang's issue 2292): K is the logical width, twice
# the torch tensor's last dimension.
@tilelang.jit
def fp4_rows(A):
    M, K = T.const("M K")
    A: T.Tensor((M, K), T.float4_e2m1fn)
    with T.Kernel(1, threads=32):
        T.evaluate(A[0, 0])


# Pointer parameters of an eager kernel (TileLang's eager jit tests): `A: T.ptr` made a tensor
# with T.make_tensor; compiled with T.ptr() stand-ins, called with tensors.
@tilelang.jit
def ptr_copy(A: T.ptr, B: T.ptr, M: int, dtype: T.dtype):
    A = T.make_tensor(A, (M,), dtype)
    B = T.make_tensor(B, (M,), dtype)
    with T.Kernel(T.ceildiv(M, 128), threads=128) as bx:
        for i in T.Parallel(128):
            B[bx * 128 + i] = A[bx * 128 + i]


class Fixture:
    """Stands for a pytest fixture a test function passes along (TileLang's tests)."""
    size = 3


def compile_with_fixture(fixture, n=64):
    """A test function taking a fixture it does not use that defines and compiles a
    @T.prim_func."""
    @T.prim_func
    def main(A: T.Tensor((n,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(n):
                A[i] = A[i] * 2.0
    return tilelang.compile(main)


def compile_using_fixture(fixture, n=64):
    """The same, its kernel reading the object: refused, naming the parameter."""
    scale = fixture.size

    @T.prim_func
    def main(A: T.Tensor((n,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(n):
                A[i] = A[i] * scale
    return tilelang.compile(main)
