"""bench_cases.py — the cases of bench_vs_tilelang.py: one function per TileLang example file
row, each building the kernel from the corpus file's own factory with the file's own
configuration and sizes (its main()/__main__, or its run_regression_perf() where the name says
so), through the `tilelang` API the file uses; both systems import as `tilelang`, so the same
code runs against TileLang 0.1.15 and against this project.

Each case returns (run, ref, work, unit[, tol]): run() launches the kernel(s) and returns the
output (a tensor or a tuple of tensors), ref() an independent torch result of the same shape(s),
work the flop or byte count of one run(), unit "TFLOP/s" or "GB/s", and tol (default 5e-2) the
largest error allowed relative to max(1, |ref|max) of each output."""
import importlib.util
import math
import os
import sys


def load(corpus, rel):
    """Imports a corpus example file as a module (its directory first on sys.path, as when run)."""
    spec = importlib.util.spec_from_file_location("case_" + os.path.basename(rel)[:-3], os.path.join(corpus, rel))
    mod = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(os.path.join(corpus, rel)))
    spec.loader.exec_module(mod)
    return mod


def _sdpa(*args, **kw):
    import torch
    return torch.nn.functional.scaled_dot_product_attention(*args, **kw)


# ---- GEMMs ----------------------------------------------------------------------------------
def case_gemm(corpus):
    import torch
    m = load(corpus, "gemm/example_gemm.py")
    M = N = K = 8192
    a = torch.randn(M, K, device="cuda", dtype=torch.float16)
    b = torch.randn(K, N, device="cuda", dtype=torch.float16)
    k = m.matmul.compile(M=M, N=N, K=K, block_M=128, block_N=128, block_K=32)
    return (lambda: k(a, b)), (lambda: a @ b), 2.0 * M * N * K, "TFLOP/s"


def case_gemm_persistent(corpus, persistent):
    import torch
    m = load(corpus, "gemm/example_gemm_persistent.py")
    M = N = K = 8192
    a = torch.randn(M, K, device="cuda", dtype=torch.float16)
    b = torch.randn(K, N, device="cuda", dtype=torch.float16)
    f = m.matmul_persistent if persistent else m.matmul_non_persistent
    k = f.compile(M=M, N=N, K=K, block_M=128, block_N=256, block_K=64, threads=256, num_stages=3)
    return (lambda: k(a, b)), (lambda: a @ b), 2.0 * M * N * K, "TFLOP/s"


def case_gemm_autotune_heuristic(corpus):
    """example_gemm_autotune.py without --use_autotune: its sm_90 heuristic config, which both
    autotuners also choose at 4096^3."""
    import torch
    m = load(corpus, "gemm/example_gemm_autotune.py")
    M = N = K = 4096
    a = torch.randn(M, K, device="cuda", dtype=torch.float16)
    b = torch.randn(N, K, device="cuda", dtype=torch.float16)
    k = m.matmul(M, N, K, 128, 256, 64, 3, 256, True)
    return (lambda: k(a, b)), (lambda: a @ b.T), 2.0 * M * N * K, "TFLOP/s"


def case_gemm_splitk(corpus, size):
    """gemm_splitk: the kernel atomically adds into C, so each run zeroes C first (as the file's
    main does once); size 1024 is main()'s, 4096 its run_regression_perf()'s."""
    import torch
    m = load(corpus, "gemm_splitk/example_tilelang_gemm_splitk.py")
    M = N = K = size
    a = torch.randn(M, K, device="cuda", dtype=torch.float16)
    b = torch.randn(K, N, device="cuda", dtype=torch.float16)
    c = torch.zeros(M, N, device="cuda", dtype=torch.float32)

    def run():
        c.zero_()
        m.matmul(a, b, c, 128, 128, 32, 4)
        return c
    return run, (lambda: (a @ b).float()), 2.0 * M * N * K, "TFLOP/s"


def case_grouped_gemm_fwd(corpus):
    """grouped_gemm fwd, __main__'s batch sizes 64,128, K = N = 8192, 64x128x64, 2 stages, 256 thr."""
    import torch
    m = load(corpus, "grouped_gemm/example_grouped_gemm_fwd.py")
    sizes, K, N = (64, 128), 8192, 8192
    A, B, bs, bo, bpo = m.construct_inputs(list(sizes), K, N, False, 64, torch.device("cuda"), torch.float16)
    run = lambda: m.grouped_gemm(A, B, bs, bo, bpo, sizes, 64, 128, 64, False, 2, 256)  # noqa: E731

    def ref():
        return torch.cat([A[:sizes[0]] @ B[0], A[sizes[0]:] @ B[1]])
    return run, ref, 2.0 * sum(sizes) * K * N, "TFLOP/s"


def case_gemm_fp8(corpus, kind):
    """gemm_fp8 example_tilelang_gemm_fp8, e4m3 or e5m2 inputs, fp32 accumulation, C stored in the
    input's fp8 type: against the unrounded fp16 product the error is up to half an fp8 ulp, 1/16
    (e4m3) or 1/8 (e5m2) of the value, hence tol 0.07 or 0.15."""
    import torch
    m = load(corpus, "gemm_fp8/example_tilelang_gemm_fp8.py")
    dtype = m.determine_fp8_type(kind)
    torch_dtype = torch.float8_e4m3fn if kind == "e4m3" else torch.float8_e5m2
    M = N = K = 4096
    a = torch.randn(M, K, device="cuda", dtype=torch.float16).to(torch_dtype)
    b = torch.randn(N, K, device="cuda", dtype=torch.float16).to(torch_dtype)
    run = lambda: m.matmul(a, b, 128, 128, 64, dtype)  # noqa: E731 (the file's eager call)
    return run, (lambda: a.half() @ b.half().T), 2.0 * M * N * K, "TFLOP/s", 0.07 if kind == "e4m3" else 0.15


def case_grouped_gemm_bwd(corpus):
    """grouped_gemm bwd: the file's dB kernel (dB[g] = A_g^T dO_g), __main__'s batch sizes 64,128,
    K = N = 8192, 64x128x64, 2 stages, 256 thr."""
    import torch
    m = load(corpus, "grouped_gemm/example_grouped_gemm_bwd.py")
    sizes, K, N = (64, 128), 8192, 8192
    A, _, _, bs, bo, _ = m.construct_inputs(list(sizes), K, N, False, 64, torch.device("cuda"), torch.float16)
    dO = torch.randn(sum(sizes), N, device="cuda", dtype=torch.float16)
    run = lambda: m.grouped_gemm_bwd(A, dO, bs, bo, 64, 128, 64, 2, 256)  # noqa: E731

    def ref():
        return torch.stack([A[:sizes[0]].T @ dO[:sizes[0]], A[sizes[0]:].T @ dO[sizes[0]:]])
    return run, ref, 2.0 * sum(sizes) * K * N, "TFLOP/s"


def case_gemm_fp8_2xacc(corpus):
    """gemm_fp8 2xAcc (fp32 C, partial sums promoted every 128 of K), main()'s 1024x1024x8192 e4m3
    with its inputs (100 * uniform(-1, 1)); torch column: fp32 matmul of the fp8 values."""
    import torch
    m = load(corpus, "gemm_fp8/example_tilelang_gemm_fp8_2xAcc.py")
    M, N, K = 1024, 1024, 8192
    a = (100 * (2 * torch.rand(M, K, device="cuda", dtype=torch.float16) - 1)).to(torch.float8_e4m3fn)
    b = (100 * (2 * torch.rand(N, K, device="cuda", dtype=torch.float16) - 1)).to(torch.float8_e4m3fn)
    dtype = m.determine_fp8_type()
    run = lambda: m.matmul(a, b, 128, 128, 64, dtype)  # noqa: E731
    return run, (lambda: a.float() @ b.float().T), 2.0 * M * N * K, "TFLOP/s"


def case_deepgemm_fp8(corpus):
    """deepseek_deepgemm fp8 blockwise (per-token A scales, 128x128-block B scales), main()'s
    1024x1024x8192, block_N 128, bf16 C; ref: fp32 matmul of the dequantized operands."""
    import torch
    m = load(corpus, "deepseek_deepgemm/example_deepgemm_fp8_2xAcc.py")
    T = m.T
    M, N, K = 1024, 1024, 8192
    a_fp8, a_s = m.per_token_cast_to_fp8(torch.randn(M, K, device="cuda").to(torch.bfloat16))
    b_fp8, b_s = m.per_block_cast_to_fp8(torch.randn(N, K, device="cuda").to(torch.bfloat16))
    run = lambda: m.tl_gemm(a_fp8, b_fp8, a_s, b_s, 128, T.float8_e4m3fn, T.bfloat16, T.float32)  # noqa: E731

    def ref():
        a = a_fp8.float() * a_s.repeat_interleave(128, dim=1)[:, :K]
        b = b_fp8.float() * b_s.repeat_interleave(128, dim=0)[:N].repeat_interleave(128, dim=1)[:, :K]
        return (a @ b.T).to(torch.bfloat16)
    return run, ref, 2.0 * M * N * K, "TFLOP/s"


def case_dequant_fp4(corpus):
    """dequantize_gemm fp16 x fp4 (e2m1 packed in uint8) on Hopper, run_regression_perf()'s 4096^3
    (main()'s 256^3 is launch-bound), 128x128x128, 2 stages, 256 thr; C is stored transposed."""
    import torch
    m = load(corpus, "dequantize_gemm/example_dequant_gemm_fp4_hopper.py")
    T = m.T
    M = N = K = 4096
    k = m.matmul(M, N, K, T.float16, T.float16, T.float32, num_bits=4, block_M=128, block_N=128, block_K=128,
                 num_stages=2, threads=256, split=1)
    a = torch.randn(M, K, device="cuda", dtype=torch.float16)
    qb = torch.randint(0, 256, (N, K // 2), device="cuda", dtype=torch.uint8)

    def decode_fp4(q):  # s1e2m1 -> fp16 as the kernel does (exponent + 14, no zero/subnormal case)
        f4 = torch.stack((q & 0xF, q >> 4), dim=-1).reshape(q.shape[0], -1).int()
        magnitude = ((((f4 & 6) >> 1) + 14) << 10) | ((f4 & 1) << 9)
        bits = magnitude - (f4 >> 3) * 32768  # the sign bit, within int16's range
        return bits.to(torch.int16).view(torch.float16)
    b = decode_fp4(qb)
    return (lambda: k(a, qb)), (lambda: (b @ a.T)), 2.0 * M * N * K, "TFLOP/s"


# ---- attention --------------------------------------------------------------------------------
def case_mha_bhsd(corpus, causal):
    import torch
    m = load(corpus, "flash_attention/example_mha_fwd_bhsd.py")
    B, H, S, D = 8, 32, 4096, 128
    q, kk, v = (torch.randn(B, H, S, D, device="cuda", dtype=torch.float16) for _ in range(3))
    k = m.flashattn(B, H, S, S, D, causal, block_M=128, block_N=128, num_stages=2, threads=256)
    ref = lambda: _sdpa(q, kk, v, is_causal=causal)  # noqa: E731
    return (lambda: k(q, kk, v)), ref, (2.0 if causal else 4.0) * B * H * S * S * D, "TFLOP/s"


def case_mha_bshd(corpus, causal):
    import torch
    m = load(corpus, "flash_attention/example_mha_fwd_bshd.py")
    B, H, S, D = 8, 32, 4096, 128
    q, kk, v = (torch.randn(B, S, H, D, device="cuda", dtype=torch.float16) for _ in range(3))
    k = m.flashattn(B, H, S, D, causal, block_M=128, block_N=128, num_stages=1, threads=128)
    ref = lambda: _sdpa(q.transpose(1, 2), kk.transpose(1, 2), v.transpose(1, 2), is_causal=causal).transpose(1, 2)  # noqa
    return (lambda: k(q, kk, v)), ref, (2.0 if causal else 4.0) * B * H * S * S * D, "TFLOP/s"


def case_gqa_bshd(corpus):
    import torch
    m = load(corpus, "flash_attention/example_gqa_fwd_bshd.py")
    B, H, S, D, G = 1, 64, 4096, 128, 16
    q = torch.randn(B, S, H, D, device="cuda", dtype=torch.float16)
    kk, v = (torch.randn(B, S, H // G, D, device="cuda", dtype=torch.float16) for _ in range(2))
    k = m.flashattn(B, H, S, D, False, groups=G, block_M=64, block_N=64, num_stages=2, threads=128)

    def ref():
        kr, vr = (t.repeat_interleave(G, dim=2).transpose(1, 2) for t in (kk, v))
        return _sdpa(q.transpose(1, 2), kr, vr).transpose(1, 2)
    return (lambda: k(q, kk, v)), ref, 4.0 * B * H * S * S * D, "TFLOP/s"


def case_mha_bwd(corpus, layout):
    """flash_attention example_mha_bwd_{bhsd,bshd}: main()'s B8 H32 S1024 D64, non-causal.  run()
    is the file's whole backward as its autograd Function composes it (preprocess, bwd with the
    dQ atomics, postprocess), on the forward output of the file's own forward kernel; ref() is
    torch autograd of SDPA (backward only, graph built once).  Outputs: dQ, dK, dV."""
    import torch
    m = load(corpus, "flash_attention/example_mha_bwd_%s.py" % layout)
    B, H, S, D = 8, 32, 1024, 64
    shape = (B, H, S, D) if layout == "bhsd" else (B, S, H, D)
    q, k, v = (torch.randn(shape, device="cuda", dtype=torch.float16).requires_grad_() for _ in range(3))
    do = torch.randn(shape, device="cuda", dtype=torch.float16)
    o = m.attention(q, k, v, False)
    leaves = [t.detach().clone().requires_grad_() for t in (q, k, v)]
    heads_first = (lambda t: t) if layout == "bhsd" else (lambda t: t.transpose(1, 2))
    o_ref = heads_first(_sdpa(*[heads_first(t) for t in leaves]))

    def run():
        q.grad = k.grad = v.grad = None
        o.backward(do, retain_graph=True)
        return q.grad, k.grad, v.grad
    ref = lambda: torch.autograd.grad(o_ref, leaves, do, retain_graph=True)  # noqa: E731
    return run, ref, 5 * 2.0 * B * H * S * S * D, "TFLOP/s"


def case_gqa_bwd(corpus):
    """flash_attention example_gqa_bwd: __main__'s B8 H32 S1024, D_qk 192, D_v 128, 16 query heads
    per KV head, non-causal, dK/dV by atomics; the file's whole backward as its autograd Function
    composes it, against torch autograd of SDPA on repeated K/V (backward only)."""
    import torch
    m = load(corpus, "flash_attention/example_gqa_bwd.py")
    B, H, S, Dqk, Dv, G = 8, 32, 1024, 192, 128, 16
    q = torch.randn(B, S, H, Dqk, device="cuda", dtype=torch.float16).requires_grad_()
    k = torch.randn(B, S, H // G, Dqk, device="cuda", dtype=torch.float16).requires_grad_()
    v = torch.randn(B, S, H // G, Dv, device="cuda", dtype=torch.float16).requires_grad_()
    do = torch.randn(B, S, H, Dv, device="cuda", dtype=torch.float16)
    o = m.attention(q, k, v, False, G, True)
    lq, lk, lv = leaves = [t.detach().clone().requires_grad_() for t in (q, k, v)]
    kr, vr = (t.repeat_interleave(G, dim=2).transpose(1, 2) for t in (lk, lv))
    o_ref = _sdpa(lq.transpose(1, 2), kr, vr).transpose(1, 2)

    def run():
        q.grad = k.grad = v.grad = None
        o.backward(do, retain_graph=True)
        return q.grad, k.grad, v.grad
    ref = lambda: torch.autograd.grad(o_ref, leaves, do, retain_graph=True)  # noqa: E731
    return run, ref, 2.0 * B * H * S * S * (3 * Dqk + 2 * Dv), "TFLOP/s"


def case_mha_inference(corpus):
    """flash_decoding example_mha_inference (4 KV splits, module constant): main()'s b1 h32
    q128 kv8192 d128, block_M 128, block_N 64, bshd."""
    import torch
    m = load(corpus, "flash_decoding/example_mha_inference.py")
    B, H, Sq, Skv, D = 1, 32, 128, 8192, 128
    q = torch.randn(B, Sq, H, D, device="cuda", dtype=torch.float16)
    kk, v = (torch.randn(B, Skv, H, D, device="cuda", dtype=torch.float16) for _ in range(2))
    k = m.flashattn(B, H, Sq, Skv, D, False, 128, 64)
    ref = lambda: _sdpa(q.transpose(1, 2), kk.transpose(1, 2), v.transpose(1, 2)).transpose(1, 2)  # noqa: E731
    return (lambda: k(q, kk, v)), ref, 4.0 * B * H * Sq * Skv * D, "TFLOP/s"


def case_gqa_decode(corpus):
    """flash_decoding example_gqa_decode (split-KV): main()'s b1 h32 g8 kv8192 d128 with the file's
    sm_90 heuristic config (block_N 128, block_H 64, 8 splits, 2 stages, 128 thr) and its random
    0/1 mask; GB/s of K, V and mask."""
    import torch
    m = load(corpus, "flash_decoding/example_gqa_decode.py")
    B, H, G, S, D = 1, 32, 8, 8192, 128
    config, _ = m.get_heuristic_config()
    k = m.flashattn(B, H, G, S, D, **config)
    q = torch.randn(B, H, D, device="cuda", dtype=torch.float16)
    kk, v = (torch.randn(B, S, G, D, device="cuda", dtype=torch.float16) for _ in range(2))
    mask = torch.randint(0, 2, (B, S, G), device="cuda", dtype=torch.uint8)

    def ref():
        qh = q.view(B, G, H // G, D)                       # head h uses KV group h // (H // G)
        keep = mask.permute(0, 2, 1).bool()[:, :, None, :]  # [B, G, 1, S]
        return _sdpa(qh, kk.transpose(1, 2), v.transpose(1, 2), attn_mask=keep).reshape(B, H, D)
    return (lambda: k(q, kk, v, mask)), ref, 2.0 * B * S * G * D * 2 + B * S * G, "GB/s"


def _mla_ref(q, q_pe, kv, k_pe, scale, seqlens=None):
    """MLA decode with one KV head: every query head attends the same keys [kv, k_pe] and values kv;
    keys at or past seqlens[b] are masked."""
    import torch
    s = (torch.bmm(q, kv.transpose(1, 2)).float() + torch.bmm(q_pe, k_pe.transpose(1, 2)).float()) * scale
    if seqlens is not None:
        pos = torch.arange(kv.shape[1], device=kv.device)
        s = s.masked_fill(pos[None, None, :] >= seqlens[:, None, None], float("-inf"))
    return torch.bmm(torch.softmax(s, -1).half(), kv)


def _mla_inputs(B, H, S, D, P):
    import torch
    q = torch.randn(B, H, D, device="cuda", dtype=torch.float16)
    q_pe = torch.randn(B, H, P, device="cuda", dtype=torch.float16)
    kv = torch.randn(B, S, 1, D, device="cuda", dtype=torch.float16)
    k_pe = torch.randn(B, S, 1, P, device="cuda", dtype=torch.float16)
    return q, q_pe, kv, k_pe


def case_mla_decode(corpus):
    """deepseek_mla example_mla_decode at batch 64 (the size of the earlier table; its __main__
    uses 132, as the ws row below does), h128 kv8192, 64x64 tiles, 1 split."""
    m = load(corpus, "deepseek_mla/example_mla_decode.py")
    B, H, S, D, P = 64, 128, 8192, 512, 64
    q, q_pe, kv, k_pe = _mla_inputs(B, H, S, D, P)
    k = m.flashattn(B, H, 1, S, D, P, 64, 64, 1, (D + P) ** -0.5)
    ref = lambda: _mla_ref(q, q_pe, kv[:, :, 0], k_pe[:, :, 0], (D + P) ** -0.5)  # noqa: E731
    return (lambda: k(q, q_pe, kv, k_pe)), ref, 2.0 * B * H * S * (2 * D + P), "TFLOP/s"


def case_mla_decode_split(corpus, rel, B, num_split, with_scale):
    """MLA decode variants with glse / Output_partial inputs: example_mla_decode_ws.py (__main__'s
    batch 132, 1 split) and example_mla_decode_persistent.py (batch 128, 2 splits); h128 kv8192."""
    import torch
    m = load(corpus, rel)
    H, S, D, P = 128, 8192, 512, 64
    q, q_pe, kv, k_pe = _mla_inputs(B, H, S, D, P)
    args = (B, H, 1, S, D, P, 64, 64, num_split) + (((D + P) ** -0.5,) if with_scale else ())
    k = m.flashattn(*args)
    glse = torch.empty(B, H, num_split, device="cuda", dtype=torch.float16)
    part = torch.empty(B, H, num_split, D, device="cuda", dtype=torch.float16)
    ref = lambda: _mla_ref(q, q_pe, kv[:, :, 0], k_pe[:, :, 0], (D + P) ** -0.5)  # noqa: E731
    return (lambda: k(q, q_pe, kv, k_pe, glse, part)), ref, 2.0 * B * H * S * (2 * D + P), "TFLOP/s"


def case_mla_decode_paged(corpus):
    """deepseek_mla example_mla_decode_paged: __main__'s batch 128, h_q 128, cache lengths
    8192 + 2i, 64-token pages, block_N 64, block_H 64, 1 split; TFLOP/s over the real lengths."""
    import torch
    m = load(corpus, "deepseek_mla/example_mla_decode_paged.py")
    b, h_q, d, dv, block_size = 128, 128, 576, 512, 64
    dpe = d - dv
    lengths = [8192 + 2 * i for i in range(b)]
    seqlens = torch.tensor(lengths, dtype=torch.int32, device="cuda")
    pad = math.ceil(max(lengths) / 256) * 256
    table = torch.arange(b * pad // block_size, dtype=torch.int32, device="cuda").view(b, pad // block_size)
    blocked_k = torch.randn(table.numel(), block_size, 1, d, dtype=torch.float16, device="cuda")
    q = torch.randn(b, h_q, d, dtype=torch.float16, device="cuda")
    q_nope, q_pe = q[..., :dv].contiguous(), q[..., dv:].contiguous()
    k_nope = blocked_k[..., :dv].contiguous().view(-1, 1, dv)
    k_pe = blocked_k[..., dv:].contiguous().view(-1, 1, dpe)
    glse = torch.empty(b, h_q, 1, dtype=torch.float16, device="cuda")
    part = torch.empty(b, h_q, 1, dv, dtype=torch.float16, device="cuda")
    k = m.mla_decode_tilelang(b, h_q, 1, pad, dv, dpe, 64, 64, 1, block_size, d ** -0.5)

    def ref():
        keys = blocked_k[table.long()].view(b, pad, d)  # pages gathered through the block table
        return _mla_ref(q_nope, q_pe, keys[..., :dv], keys[..., dv:], d ** -0.5, seqlens)
    work = 2.0 * h_q * sum(lengths) * (d + dv)
    return (lambda: k(q_nope, q_pe, k_nope, k_pe, table, seqlens, glse, part)), ref, work, "TFLOP/s"


def case_mamba_chunk_state(corpus):
    """linear_attention example_mamba_chunk_state: __main__'s b8 L4096 h80 g1 p64 n128, chunk 256,
    64x128x64, 4 stages, 128 thr, normal random inputs (its TensorSupplyType.Normal)."""
    import torch
    m = load(corpus, "linear_attention/example_mamba_chunk_state.py")
    b, L, h, g, p, n, c = 8, 4096, 80, 1, 64, 128, 256
    k = m.chunk_state_fwd.compile(batch=b, seqlen=L, chunk_size=c, ngroups=g, nheads=h, headdim=p, dstate=n,
                                  block_M=64, block_N=128, block_K=64, num_stages=4, threads=128)
    B = torch.randn(b, L, g, n, device="cuda", dtype=torch.float16)
    x = torch.randn(b, L, h, p, device="cuda", dtype=torch.float16)
    dt = torch.randn(b, h, L // c, c, device="cuda", dtype=torch.float16)
    dA = torch.randn(b, h, L // c, c, device="cuda", dtype=torch.float16)

    def ref():  # states[b, c, h, p, n] = sum_l B[l, n] * exp(dA_last - dA[l]) * dt[l] * x[l, p]
        decay = torch.exp(dA[..., -1:].float() - dA.float()) * dt.float()            # [b, h, c, l]
        xs = x.view(b, L // c, c, h, p).float() * decay.permute(0, 2, 3, 1)[..., None]
        Bh = B.view(b, L // c, c, g, n).float().repeat_interleave(h // g, dim=3)
        return torch.einsum("bclhp,bclhn->bchpn", xs, Bh).half()
    return (lambda: k(B, x, dt, dA)), ref, 2.0 * b * L * h * p * n, "TFLOP/s"


def case_mamba_chunk_scan(corpus):
    """linear_attention example_mamba_chunk_scan: __main__'s b8 L4096 h80 g1 p64 n128, chunk 256,
    64x64x64, Dstate block 128, 2 stages, 128 thr, normal random inputs; ref in fp32."""
    import torch
    m = load(corpus, "linear_attention/example_mamba_chunk_scan.py")
    b, L, h, g, p, n, c = 8, 4096, 80, 1, 64, 128, 256
    nc = L // c
    k = m.chunk_scan_fwd.compile(batch=b, seqlen=L, chunk_size=c, ngroups=g, nheads=h, headdim=p, dstate=n,
                                 block_M=64, block_N=64, block_K=64, block_Dstate=128, num_stages=2, threads=128)
    f16 = dict(device="cuda", dtype=torch.float16)
    cb = torch.randn(b, nc, g, c, c, **f16)
    x = torch.randn(b, L, h, p, **f16)
    dt, dA = (torch.randn(b, h, nc, c, **f16) for _ in range(2))
    C = torch.randn(b, L, g, n, **f16)
    prev = torch.randn(b, nc, h, p, n, **f16)
    D = torch.randn(h, **f16)

    def ref():
        # out[l] = sum_{s<=l} cb[l,s] exp(dA[l]-dA[s]) dt[s] x[s] + exp(dA[l]) C[l].prev + D x[l]
        dAf = dA.float()
        decay = torch.exp(dAf[..., :, None] - dAf[..., None, :]).permute(0, 2, 1, 3, 4)   # [b, nc, h, l, s]
        scores = (cb.float().repeat_interleave(h // g, dim=2) * decay).tril()
        out = torch.einsum("bchls,bhcs,bcshp->bclhp", scores, dt.float(), x.float().view(b, nc, c, h, p))
        Ch = C.float().view(b, nc, c, g, n).repeat_interleave(h // g, dim=3)
        out = out + torch.einsum("bclhn,bchpn->bclhp", Ch, prev.float()) * torch.exp(dAf).permute(0, 2, 3, 1)[..., None]
        return (out.reshape(b, L, h, p) + x.float() * D.float()[:, None]).half()
    work = 2.0 * b * L * c * h * p * 0.5 + 2.0 * b * L * h * p * n  # the file's count
    return (lambda: k(cb, x, dt, dA, C, prev, D)), ref, work, "TFLOP/s"


def case_convolution(corpus):
    """convolution example_convolution: main()'s N128 C128 64x64 F128 3x3 stride 1 pad 1, NHWC,
    64x128x32, 3 stages, 256 thr; ref: cuDNN through torch.conv2d."""
    import torch
    m = load(corpus, "convolution/example_convolution.py")
    N, C, H, W, F, K, S, D, P = 128, 128, 64, 64, 128, 3, 1, 1, 1
    a = torch.randn(N, H, W, C, device="cuda", dtype=torch.float16)
    b = torch.randn(K, K, C, F, device="cuda", dtype=torch.float16)
    run = lambda: m.convolution(a, b, S, D, P, 64, 128, 32, 3, 256)  # noqa: E731
    ref = lambda: torch.conv2d(a.permute(0, 3, 1, 2), b.permute(3, 2, 0, 1), stride=S, padding=P, dilation=D).permute(0, 2, 3, 1)  # noqa
    OH = (H + 2 * P - D * (K - 1) - 1) // S + 1
    OW = (W + 2 * P - D * (K - 1) - 1) // S + 1
    return run, ref, 2.0 * N * OH * OW * F * C * K * K, "TFLOP/s"


# ---- memory-bound -------------------------------------------------------------------------------
def case_elementwise_add(corpus):
    import torch
    m = load(corpus, "elementwise/example_elementwise_add.py")
    M = N = 8192
    a, b = (torch.randn(M, N, device="cuda", dtype=torch.float32) for _ in range(2))
    run = lambda: m.elementwise_add(a, b, block_M=32, block_N=32, threads=128, in_dtype="float32", out_dtype="float32")  # noqa
    return run, (lambda: a + b), 3.0 * M * N * 4, "GB/s"


def case_rms_norm(corpus):
    import torch
    m = load(corpus, "norm/rms_norm.py")
    M = N = 8192
    a = torch.randn(M, N, device="cuda", dtype=torch.float32)
    k = m.rms_norm.compile(M=M, N=N, blk_m=1)
    return (lambda: k(a)), (lambda: m.ref_program(a)), 2.0 * M * N * 4, "GB/s"


def case_layernorm(corpus):
    import torch
    m = load(corpus, "norm/layernorm.py")
    N, D = 4096, 8192
    x = torch.randn(N, D, device="cuda", dtype=torch.bfloat16)
    g = torch.randn(D, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(D, device="cuda", dtype=torch.bfloat16)
    k = m._layernorm_fwd(N, D)
    ref = lambda: torch.nn.functional.layer_norm(x.float(), (D,), g.float(), b.float(), 1e-5).to(x.dtype)  # noqa
    return (lambda: k(x, g, b)[0]), ref, 2.0 * N * D * 2, "GB/s"


def case_layernorm_bwd(corpus):
    """norm/layernorm.py _layernorm_bwd, __main__'s 4096x8192 bf16 (blk_m 32, 256 thr): dX, dGamma,
    dBeta from torch-computed mean/rstd, dGamma/dBeta zeroed each run as the file's backward does;
    ref: torch autograd of layer_norm (backward only).  GB/s of dY, X read and dX written."""
    import torch
    m = load(corpus, "norm/layernorm.py")
    N, D, eps = 4096, 8192, 1e-5
    x, dy = (torch.randn(N, D, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    g, b = (torch.randn(D, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    mean = x.float().mean(1)
    rstd = torch.rsqrt(x.float().var(1, unbiased=False) + eps)
    dg, db = (torch.zeros(D, device="cuda", dtype=torch.float32) for _ in range(2))
    k = m._layernorm_bwd(N, D)

    def run():
        dg.zero_()
        db.zero_()
        return k(dy, x, g, mean, rstd, dg, db), dg, db
    leaves = [t.detach().clone().requires_grad_() for t in (x, g, b)]
    y_ref = torch.nn.functional.layer_norm(leaves[0], (D,), leaves[1], leaves[2], eps)
    ref = lambda: torch.autograd.grad(y_ref, leaves, dy, retain_graph=True)  # noqa: E731
    return run, ref, 3.0 * N * D * 2, "GB/s"


def case_online_softmax(corpus):
    """online_softmax/online_softmax.py: its module-level 8192x8192 fp16 (BLOCK_N 8192, 128 thr);
    importing the file runs its own check and timing first."""
    import torch
    m = load(corpus, "online_softmax/online_softmax.py")
    X = torch.randn(8192, 8192, device="cuda", dtype=torch.float16)
    return (lambda: m.softmax_kernel(X)), (lambda: X.softmax(dim=1)), 2.0 * X.numel() * 2, "GB/s"


def case_per_token_cast_fp8(corpus):
    """cast example_per_token_cast_to_fp8: main()'s 8192x8192 fp32, blk_m 8, 128-wide groups.
    An fp8 rounding difference is one e4m3 ulp (1/8 relative), hence tol 0.15."""
    import torch
    m = load(corpus, "cast/example_per_token_cast_to_fp8.py")
    M = N = 8192
    x = torch.randn(M, N, device="cuda", dtype=torch.float32)

    def ref():
        amax = x.view(M, -1, 128).abs().amax(dim=2).clamp(1e-4)
        q = (x.view(M, -1, 128) * (448.0 / amax[..., None])).to(torch.float8_e4m3fn).view(M, N)
        return q, amax / 448.0
    run = lambda: m.per_token_cast_to_fp8(x, 8)  # noqa: E731
    return run, ref, M * N * (4 + 1) + M * (N // 128) * 4, "GB/s", 0.15


def case_gemv(corpus, name, kw):
    """gemv example_gemv: naive_gemv (128x128 tiles) or splitk_gemv_vectorized (BLOCK_N 2, 32
    reduce threads), fp16, at run_regression_perf()'s 4096x4096 (main()'s 1024^2 is launch-bound)."""
    import torch
    m = load(corpus, "gemv/example_gemv.py")
    N = K = 4096
    k = getattr(m, name).compile(N=N, K=K, **kw)
    a = torch.randn(K, device="cuda", dtype=torch.float16)
    b = torch.randn(N, K, device="cuda", dtype=torch.float16)
    return (lambda: k(a, b)), (lambda: b @ a), 2.0 * (N * K + N + K), "GB/s"


def case_topk(corpus):
    """topk example_topk: main()'s 320 tokens x 128 experts fp32, top 6, blk_m 64 (launch-bound);
    threads=128 (the factory's default) is passed so that neither autotuner picks another."""
    import torch
    m = load(corpus, "topk/example_topk.py")
    M, N, K = 320, 128, 6
    logits = torch.rand(M, N, device="cuda", dtype=torch.float32)

    def ref():
        vals, idx = logits.topk(K, dim=1)
        return vals, idx.int()
    return (lambda: m.tl_topk(logits, K, blk_m=64, threads=128)), ref, M * N * 4 + M * K * 8, "GB/s"


# ---- block-sparse kernels (a pipelined loop whose body is guarded by the sparsity) --------------
def case_blocksparse_gemm(corpus):
    """blocksparse_gemm/example_blocksparse_gemm.py, its default configuration at 4096^3, half the
    blocks kept (the file's sparsity 0.5); work counts the kept blocks' flops."""
    import torch
    m = load(corpus, "blocksparse_gemm/example_blocksparse_gemm.py")
    M = N = K = 4096
    bm, bn, bk = m.DEFAULT_BLOCK_M, m.DEFAULT_BLOCK_N, m.DEFAULT_BLOCK_K
    a = torch.randn(M, K, device="cuda", dtype=torch.float16)
    b = torch.randn(K, N, device="cuda", dtype=torch.float16)
    mask = torch.rand(M // bm, N // bn, K // bk, device="cuda") > 0.5
    k = m.blocksparse_matmul.compile(M=M, N=N, K=K, block_M=bm, block_N=bn, block_K=bk, num_stages=m.DEFAULT_NUM_STAGES,
                                     thread_num=m.DEFAULT_THREAD_NUM, enable_rasteration=m.DEFAULT_ENABLE_RASTERIZATION)
    work = 2.0 * bm * bn * bk * float(mask.sum())

    def ref():  # the file's ref_program loops over every block in Python (seconds a call)
        c = torch.zeros(M, N, device="cuda", dtype=torch.float32)
        for kb in range(K // bk):
            keep = mask[:, :, kb].repeat_interleave(bm, 0).repeat_interleave(bn, 1)
            c += keep * (a[:, kb * bk:(kb + 1) * bk].float() @ b[kb * bk:(kb + 1) * bk].float())
        return c.half()
    return (lambda: k(a, b, mask)), ref, work, "TFLOP/s"


def case_blocksparse_attn(corpus):
    """blocksparse_attention/example_tilelang_block_sparse_attn.py (64 x 64 blocks, 1 stage, 128
    threads as the file fixes them), causal, B4 H32 S4096 D64 with the file's top-k mask keeping
    16 of the 64 key blocks of each query block; work counts the kept blocks whole."""
    import torch
    m = load(corpus, "blocksparse_attention/example_tilelang_block_sparse_attn.py")
    B, H, S, D, BLK, TOPK = 4, 32, 4096, 64, 64, 16
    q, kk, v = (torch.randn(B, H, S, D, device="cuda", dtype=torch.float16) for _ in range(3))
    ds = S // BLK
    x = torch.randn(B, H, ds, ds, device="cuda", dtype=torch.bfloat16)
    x[:, :, :, 0] = 100
    mask = m.get_sparse_attn_mask_from_topk(x, topk=TOPK)
    k = m.blocksparse_flashattn(B, H, S, D, ds, is_causal=True)

    def ref():
        full = torch.kron(mask.float(), torch.ones(BLK, BLK, device="cuda")).bool()
        full = full & torch.tril(torch.ones_like(full))
        s = torch.einsum("bhsd,bhtd->bhst", q.float(), kk.float()) / D ** 0.5
        p = torch.softmax(s.masked_fill(~full, float("-inf")), dim=-1)
        return torch.einsum("bhst,bhtd->bhsd", p, v.float()).half()
    return (lambda: k(q, kk, v, mask)), ref, 4.0 * BLK * BLK * D * float(mask.sum()), "TFLOP/s"


def case_sparse_gqa_decode(corpus):
    """blocksparse_attention/example_tilelang_sparse_gqa_decode_varlen_indice.py: main()'s sizes
    (b8 h32 hkv8 kv8192 d128, 80% of the blocks of 32 skipped, random lengths), through the file's
    SparseFlashAttn; GB/s of the K and V blocks read."""
    import torch
    m = load(corpus, "blocksparse_attention/example_tilelang_sparse_gqa_decode_varlen_indice.py")
    B, H, HK, S, D, BS = 8, 32, 8, 8192, 128, 32
    nsel = int(math.ceil(S * 0.2 / BS))
    q = torch.randn(B, H, D, device="cuda", dtype=torch.float16)
    kk, v = (torch.randn(B, S, HK, D, device="cuda", dtype=torch.float16) for _ in range(2))
    lens = torch.randint(1, S, (B,), dtype=torch.int32, device="cuda")
    idx = torch.full((B, HK, nsel), -1, dtype=torch.int32, device="cuda")
    for b in range(B):
        nb = int(math.ceil(int(lens[b]) / BS))
        for h in range(HK):
            sel = torch.randperm(nb, device="cuda", dtype=torch.int32)[:nsel]
            idx[b, h, : len(sel)] = sel
    idx, _ = idx.sort(dim=-1, descending=True)
    mod = m.SparseFlashAttn(B, H, HK, D, D, BS)

    def ref():  # the file's ref_program_torch, with the block mask scattered instead of looped
        keep = torch.zeros(B, HK, S // BS + 1, device="cuda")
        keep.scatter_(2, torch.where(idx >= 0, idx, S // BS).long(), 1.0)
        keep = (keep[:, :, :-1] > 0).repeat_interleave(BS, 2) & (torch.arange(S, device="cuda") < lens[:, None, None])
        qg = q.float().view(B, HK, H // HK, D)
        s = torch.einsum("bhgd,bshd->bhgs", qg, kk.float()) / D ** 0.5
        p = torch.softmax(s.masked_fill(~keep[:, :, None, :], float("-inf")), dim=-1)
        return torch.einsum("bhgs,bshd->bhgd", p, v.float()).reshape(B, H, D).half()
    return (lambda: mod(q, kk, v, idx, lens)), ref, float((idx >= 0).sum()) * BS * 2 * D * 2, "GB/s"


CASES = {
    "gemm 8192^3 fp16 (128x128x32, 3 st, 128 thr)": case_gemm,
    "gemm_persistent non-persistent 8192^3 (128x256x64, 3, 256)": lambda c: case_gemm_persistent(c, False),
    "gemm_persistent persistent 8192^3 (128x256x64, 3, 256)": lambda c: case_gemm_persistent(c, True),
    "gemm_autotune heuristic 4096^3 (128x256x64, 3, 256, raster)": case_gemm_autotune_heuristic,
    "gemm_splitk 1024^3 split 4 (128x128x32)": lambda c: case_gemm_splitk(c, 1024),
    "gemm_splitk 4096^3 split 4 (regression_perf size)": lambda c: case_gemm_splitk(c, 4096),
    "grouped_gemm fwd [64,128]x8192x8192 (64x128x64, 2, 256)": case_grouped_gemm_fwd,
    "grouped_gemm bwd dB [64,128]x8192x8192 (64x128x64, 2, 256)": case_grouped_gemm_bwd,
    "gemm_fp8 e4m3 4096^3 (128x128x64)": lambda c: case_gemm_fp8(c, "e4m3"),
    "gemm_fp8 e5m2 4096^3 (128x128x64)": lambda c: case_gemm_fp8(c, "e5m2"),
    "gemm_fp8 2xAcc e4m3 1024x1024x8192 (128x128x64)": case_gemm_fp8_2xacc,
    "deepgemm fp8 blockwise 1024x1024x8192 (64x128x128, 4 st)": case_deepgemm_fp8,
    "dequant fp16 x fp4 4096^3 (128^3, 2, 256; regression_perf size)": case_dequant_fp4,
    "convolution N128 C128 64x64 F128 k3 (64x128x32, 3, 256)": case_convolution,
    "mha_fwd_bshd B8 H32 S4096 D128 (128x128, 1 st, 128 thr)": lambda c: case_mha_bshd(c, False),
    "mha_fwd_bshd causal B8 H32 S4096 D128 (128x128, 1, 128)": lambda c: case_mha_bshd(c, True),
    "gqa_fwd_bshd b1 h64 g16 S4096 D128 (64x64, 2, 128)": case_gqa_bshd,
    "mha_fwd_bhsd B8 H32 S4096 D128 (128x128, 2 st, 256 thr)": lambda c: case_mha_bhsd(c, False),
    "mha_fwd_bhsd causal B8 H32 S4096 D128 (128x128, 2 st, 256 thr)": lambda c: case_mha_bhsd(c, True),
    "mha_bwd_bhsd B8 H32 S1024 D64 (prep+bwd+post, 64x64)": lambda c: case_mha_bwd(c, "bhsd"),
    "mha_bwd_bshd B8 H32 S1024 D64 (prep+bwd+post, 64x64)": lambda c: case_mha_bwd(c, "bshd"),
    "gqa_bwd B8 H32 S1024 Dqk192 Dv128 g16 (prep+bwd+post, atomic)": case_gqa_bwd,
    "flash_decoding gqa split-KV b1 h32 g8 kv8192 d128 (8 splits)": case_gqa_decode,
    "flash_decoding mha_inference b1 h32 q128 kv8192 d128 (4 splits)": case_mha_inference,
    "mla_decode b64 h128 kv8192 (64x64)": case_mla_decode,
    "mla_decode_ws b132 h128 kv8192 (64x64, 1 split)": lambda c: case_mla_decode_split(
        c, "deepseek_mla/example_mla_decode_ws.py", 132, 1, True),
    "mla_decode_persistent b128 h128 kv8192 (64x64, 2 splits)": lambda c: case_mla_decode_split(
        c, "deepseek_mla/example_mla_decode_persistent.py", 128, 2, False),
    "mla_decode_paged b128 h128 kv8192+2i (page 64, 64x64)": case_mla_decode_paged,
    "blocksparse_gemm 4096^3 half the blocks (128x128x32, 2, 128)": case_blocksparse_gemm,
    "blocksparse_attn causal B4 H32 S4096 D64 top-16 blocks (64x64, 1, 128)": case_blocksparse_attn,
    "sparse_gqa_decode b8 h32 hkv8 kv8192 d128, 20% of blocks": case_sparse_gqa_decode,
    "mamba chunk_state b8 L4096 h80 p64 n128 (64x128x64, 4, 128)": case_mamba_chunk_state,
    "mamba chunk_scan b8 L4096 h80 p64 n128 (64x64x64, 2, 128)": case_mamba_chunk_scan,
    "elementwise add 8192^2 fp32 (32x32, 128 thr)": case_elementwise_add,
    "rms_norm 8192^2 fp32": case_rms_norm,
    "layernorm fwd 4096x8192 bf16": case_layernorm,
    "layernorm bwd 4096x8192 bf16 (blk_m 32, 256 thr)": case_layernorm_bwd,
    "online_softmax 8192^2 fp16": case_online_softmax,
    "per_token_cast_to_fp8 8192^2 (blk_m 8)": case_per_token_cast_fp8,
    "gemv naive 4096^2 fp16 (128x128; regression_perf size)": lambda c: case_gemv(
        c, "naive_gemv", dict(BLOCK_N=128, BLOCK_K=128)),
    "gemv splitk vectorized 4096^2 fp16 (2, 32 thr; regression_perf size)": lambda c: case_gemv(
        c, "splitk_gemv_vectorized", dict(BLOCK_N=2, reduce_threads=32)),
    "topk 320x128 k6 (blk_m 64, 128 thr, launch-bound)": case_topk,
}


# ---- the best-configuration mode (bench_vs_tilelang.py --tuned) ------------------------------
# One configuration list per row, swept the same way in both systems: each builds every
# configuration from the file's factory, drops the ones it gets wrong (or cannot build), times
# the rest and keeps its fastest, so the row compares the best each system reaches on the
# same menu.  The menus hold the configurations TileLang's and this project's autotuners pick
# on Hopper (and their neighbours), not the files' own single-entry autotune lists.

def tuned_gemm(corpus, cfg):
    """example_gemm_autotune.py's factory at 8192^3, B given as [N, K] as the file does;
    cfg = (block_M, block_N, block_K, num_stages, threads, rasterization)."""
    import torch
    m = load(corpus, "gemm/example_gemm_autotune.py")
    M = N = K = 8192
    a = torch.randn(M, K, device="cuda", dtype=torch.float16)
    b = torch.randn(N, K, device="cuda", dtype=torch.float16)
    k = m.matmul(M, N, K, *cfg)
    return (lambda: k(a, b)), (lambda: a @ b.T), 2.0 * M * N * K, "TFLOP/s"


def tuned_mha_bshd(corpus, cfg, causal, B=8, S=4096):
    """example_mha_fwd_bshd.py at B H32 S D128 (B8 S4096 by default; the FA goal covers S 4k-16k);
    cfg = (block_M, block_N, num_stages, threads)."""
    import torch
    m = load(corpus, "flash_attention/example_mha_fwd_bshd.py")
    H, D = 32, 128
    q, kk, v = (torch.randn(B, S, H, D, device="cuda", dtype=torch.float16) for _ in range(3))
    bm, bn, ns, th = cfg
    k = m.flashattn(B, H, S, D, causal, block_M=bm, block_N=bn, num_stages=ns, threads=th)
    ref = lambda: _sdpa(q.transpose(1, 2), kk.transpose(1, 2), v.transpose(1, 2), is_causal=causal).transpose(1, 2)  # noqa
    return (lambda: k(q, kk, v)), ref, (2.0 if causal else 4.0) * B * H * S * S * D, "TFLOP/s"


def tuned_mla_decode(corpus, cfg):
    """example_mla_decode.py at batch 64, h128, kv8192; cfg = (block_N, block_H, num_split)."""
    m = load(corpus, "deepseek_mla/example_mla_decode.py")
    B, H, S, D, P = 64, 128, 8192, 512, 64
    q, q_pe, kv, k_pe = _mla_inputs(B, H, S, D, P)
    k = m.flashattn(B, H, 1, S, D, P, cfg[0], cfg[1], cfg[2], (D + P) ** -0.5)
    ref = lambda: _mla_ref(q, q_pe, kv[:, :, 0], k_pe[:, :, 0], (D + P) ** -0.5)  # noqa: E731
    return (lambda: k(q, q_pe, kv, k_pe)), ref, 2.0 * B * H * S * (2 * D + P), "TFLOP/s"


_GEMM_MENU = [(128, 256, 64, 3, 256, True), (128, 256, 64, 4, 256, True), (256, 128, 64, 3, 256, True),
              (128, 128, 64, 4, 256, True), (128, 128, 64, 3, 128, True), (128, 256, 64, 3, 256, False)]
_FA_MENU = [(64, 64, 1, 128), (128, 128, 1, 128), (128, 128, 2, 256), (128, 64, 2, 256), (128, 128, 1, 256),
            (128, 128, 2, 128)]
_MLA_MENU = [(64, 64, 1), (64, 64, 2), (64, 64, 4)]

TUNED = {
    "tuned gemm 8192^3 fp16 (example_gemm_autotune factory)": (tuned_gemm, _GEMM_MENU),
    "tuned mha_fwd_bshd B8 H32 S4096 D128": (lambda c, cfg: tuned_mha_bshd(c, cfg, False), _FA_MENU),
    "tuned mha_fwd_bshd causal B8 H32 S4096 D128": (lambda c, cfg: tuned_mha_bshd(c, cfg, True), _FA_MENU),
    "tuned mha_fwd_bshd B2 H32 S16384 D128": (lambda c, cfg: tuned_mha_bshd(c, cfg, False, 2, 16384), _FA_MENU),
    "tuned mha_fwd_bshd causal B2 H32 S16384 D128": (lambda c, cfg: tuned_mha_bshd(c, cfg, True, 2, 16384), _FA_MENU),
    "tuned mla_decode b64 h128 kv8192": (tuned_mla_decode, _MLA_MENU),
}
