"""regress_gpu.py — the corpus kernels that once compiled but ran wrong, run on the GPU
through the tilescale binding and checked against torch references written here.

    python3 tests/corpus/regress_gpu.py CORPUS_DIR     (CORPUS_DIR = .../corpus/tilelang/examples)

Each case compiles the file's own kernel factory with the parameters its main() uses (and
smaller shapes), fills inputs the way the file does (torch.randn), runs, and compares with
an independent torch computation.  One PASS/FAIL line per case, then "N passed, N failed".
Root causes (fixed in the compiler, see the reliability issue's note):
  layernorm fwd Y       a replicated fragment written in a T.Parallel loop that also stores
                        to global memory was computed in thread 0 only (lower_tile_ops)
  grouped GEMM bwd dB   no barriers inside a T.Pipelined loop whose trip count is loaded
  MLA paged decode      from global memory (thread_sync took it for thread-dependent)
The MLA file's split-KV variant (num_split > 1) does not compile yet (its P @ V GEMM takes A
from registers with a FullCol policy); it is a corpus-coverage gap, not a wrong result."""
import math
import os
import sys

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
import tilescale  # noqa: E402

RESULTS = []


def check(name, got, want, atol, rtol):
    got, want = got.float(), want.float()
    finite = bool(torch.isfinite(got).all())
    err = (got - want).abs()
    bad = int((err > atol + rtol * want.abs()).sum()) if finite else got.numel()
    ok = finite and bad == 0
    RESULTS.append(ok)
    print("%s %s: max abs err %.3g, %d of %d out of tolerance%s" % (
        "PASS" if ok else "FAIL", name, float(err.nan_to_num(1e30).max()), bad, got.numel(),
        "" if finite else ", non-finite values"))


def layernorm(ctx, corpus, N, D, blk_m):
    k = ctx.load(os.path.join(corpus, "norm/layernorm.py")).compile("_layernorm_fwd", N=N, D=D, blk_m=blk_m)
    x = torch.randn(N, D, dtype=torch.bfloat16, device="cuda")
    g = torch.randn(D, dtype=torch.bfloat16, device="cuda")
    b = torch.randn(D, dtype=torch.bfloat16, device="cuda")
    y, mean, rstd = k(x, g, b)
    xf = x.float()
    ref = torch.nn.functional.layer_norm(xf, (D,), g.float(), b.float(), 1e-5)
    tag = "layernorm fwd N=%d D=%d blk_m=%d" % (N, D, blk_m)
    check(tag + " Y", y, ref, 3e-2, 2e-2)
    check(tag + " Mean", mean, xf.mean(-1), 1e-4, 1e-4)
    check(tag + " Rstd", rstd, torch.rsqrt(xf.var(-1, unbiased=False) + 1e-5), 1e-3, 1e-3)


def grouped_gemm_bwd(ctx, corpus, sizes, K, N, bm, bn, bk, stages, threads):
    prog = ctx.load(os.path.join(corpus, "grouped_gemm/example_grouped_gemm_bwd.py"))
    total, G = sum(sizes), len(sizes)
    kern = prog.compile("grouped_gemm_bwd", block_M=bm, block_N=bn, block_K=bk, num_stages=stages,
                        threads=threads, batch_sum=total, batch_count=G, M=K, N=N)
    a = torch.randn(total, K, dtype=torch.float16, device="cuda")
    grad = torch.randn(total, N, dtype=torch.float16, device="cuda")
    bs = torch.tensor(sizes, dtype=torch.int32, device="cuda")
    offs = torch.tensor([sum(sizes[:i]) for i in range(G)], dtype=torch.int32, device="cuda")
    db = kern(a, grad, bs, offs)
    ref, start = [], 0
    for s in sizes:
        ref.append(a[start:start + s].float().T @ grad[start:start + s].float())
        start += s
    # the file's mask is `i < batch_sizes[g]` on the tile row (not the group row): a group whose
    # size is not a multiple of block_K reads the next group's rows in its last tile.  Sizes
    # here are multiples of block_K, where the file and the math agree.
    check("grouped_gemm_bwd sizes=%s K=N=%d" % (sizes, K), db, torch.stack(ref), 0.5, 2e-2)


def mla_decode_paged(ctx, corpus, b, h_q, seqlens, block_N=64, block_H=64, block_size=64, num_split=1):
    d, dv = 576, 512
    dpe = d - dv
    max_seqlen_pad = math.ceil(max(seqlens) / 256) * 256
    prog = ctx.load(os.path.join(corpus, "deepseek_mla/example_mla_decode_paged.py"))
    scale = d ** -0.5
    kern = prog.compile("mla_decode_tilelang", batch=b, h_q=h_q, h_kv=1, max_seqlen_pad=max_seqlen_pad, dv=dv,
                        dpe=dpe, block_N=block_N, block_H=block_H, num_split=num_split, block_size=block_size,
                        softmax_scale=scale)
    q = torch.randn(b, h_q, d, dtype=torch.float16, device="cuda")
    pages = max_seqlen_pad // block_size
    block_table = torch.randperm(b * pages, dtype=torch.int32, device="cuda").view(b, pages)
    kv = torch.randn(b * max_seqlen_pad, 1, d, dtype=torch.float16, device="cuda")
    cache = torch.tensor(seqlens, dtype=torch.int32, device="cuda")
    glse = torch.empty(b, h_q, num_split, dtype=torch.float16, device="cuda")
    partial = torch.empty(b, h_q, num_split, dv, dtype=torch.float16, device="cuda")
    out = kern(q[..., :dv].contiguous(), q[..., dv:].contiguous(), kv[..., :dv].contiguous(),
               kv[..., dv:].contiguous(), block_table, cache, glse, partial)
    ref = torch.empty(b, h_q, dv, dtype=torch.float32, device="cuda")
    for i in range(b):
        n = seqlens[i]
        rows = (block_table[i].long()[:, None] * block_size + torch.arange(block_size, device="cuda")).flatten()[:n]
        keys = kv[rows, 0].float()
        p = torch.softmax((q[i].float() @ keys.T) * scale, dim=-1)
        ref[i] = p @ keys[:, :dv]
    check("mla_decode_paged b=%d h_q=%d seqlens=%d..%d split=%d" % (b, h_q, min(seqlens), max(seqlens), num_split),
          out, ref, 1e-2, 1e-2)


def mla_decode(ctx, corpus, batch, heads, seqlen, dim=512, pe_dim=64):
    """deepseek_mla/example_mla_decode.py (no split): 299 KB of shared tiles stacked; fits
    only with lifetime-based reuse (merge_shared_memory) and one shared reduction workspace."""
    prog = ctx.load(os.path.join(corpus, "deepseek_mla/example_mla_decode.py"))
    scale = (dim + pe_dim) ** -0.5
    kern = prog.compile("flashattn", batch=batch, heads=heads, kv_head_num=1, seqlen_kv=seqlen, dim=dim,
                        pe_dim=pe_dim, block_N=64, block_H=64, num_split=1, softmax_scale=scale)
    q = torch.randn(batch, heads, dim, dtype=torch.float16, device="cuda")
    q_pe = torch.randn(batch, heads, pe_dim, dtype=torch.float16, device="cuda")
    kv = torch.randn(batch, seqlen, 1, dim, dtype=torch.float16, device="cuda")
    k_pe = torch.randn(batch, seqlen, 1, pe_dim, dtype=torch.float16, device="cuda")
    out = kern(q, q_pe, kv, k_pe)
    query = torch.cat([q, q_pe], -1).float()                      # b h d
    key = torch.cat([kv, k_pe], -1)[:, :, 0].float()              # b s d
    p = torch.softmax(query @ key.transpose(1, 2) * scale, -1)    # b h s
    check("mla_decode b=%d heads=%d kv=%d" % (batch, heads, seqlen), out, p @ kv[:, :, 0].float(), 1e-2, 1e-2)


def mha_fwd_bhsd(ctx, corpus, B, H, S, D, causal, bm, bn, stages, threads):
    """flash_attention/example_mha_fwd_bhsd.py: warp-specialized (warp_specialize_loop): Q, K
    and V by TMA from a producer warpgroup, K and V each in their own stage ring; S not a
    multiple of the tile checks the zero-filled boxes past the edge."""
    prog = ctx.load(os.path.join(corpus, "flash_attention/example_mha_fwd_bhsd.py"))
    kern = prog.compile("flashattn", batch=B, heads=H, seq_q=S, seq_kv=S, dim=D, is_causal=causal, block_M=bm,
                        block_N=bn, num_stages=stages, threads=threads)
    q, k, v = (torch.randn(B, H, S, D, dtype=torch.float16, device="cuda") for _ in range(3))
    out = kern(q, k, v)
    ref = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal)
    check("mha_fwd_bhsd B=%d H=%d S=%d D=%d causal=%s %dx%d st=%d thr=%d" % (B, H, S, D, causal, bm, bn, stages, threads),
          out, ref, 1e-2, 1e-2)


def gqa_fwd_bshd(ctx, corpus, B, H, S, D, causal, groups, bm, bn, stages, threads):
    """flash_attention/example_gqa_fwd_bshd.py: rows of the K/V boxes run along dim 1 of
    [batch, seq, heads, dim] tensors (the TMA box is not on the last two dims)."""
    prog = ctx.load(os.path.join(corpus, "flash_attention/example_gqa_fwd_bshd.py"))
    kern = prog.compile("flashattn", batch=B, heads=H, seq_len=S, dim=D, is_causal=causal, groups=groups, block_M=bm,
                        block_N=bn, num_stages=stages, threads=threads)
    q = torch.randn(B, S, H, D, dtype=torch.float16, device="cuda")
    k = torch.randn(B, S, H // groups, D, dtype=torch.float16, device="cuda")
    v = torch.randn(B, S, H // groups, D, dtype=torch.float16, device="cuda")
    out = kern(q, k, v)
    kf = k.float().repeat_interleave(groups, dim=2).transpose(1, 2)
    vf = v.float().repeat_interleave(groups, dim=2).transpose(1, 2)
    ref = torch.nn.functional.scaled_dot_product_attention(q.float().transpose(1, 2), kf, vf, is_causal=causal)
    check("gqa_fwd_bshd B=%d H=%d S=%d D=%d causal=%s groups=%d" % (B, H, S, D, causal, groups), out,
          ref.transpose(1, 2), 1e-2, 1e-2)


def dynamic_gemm(ctx, M, N, K):
    """examples/gemm_dynamic.py: one kernel, sizes from the tensors (T.dynamic); it once did
    not compile (ambiguous ts::floordiv over the int64 dynamic parameters)."""
    k = ctx.load(os.path.join(ROOT, "examples/gemm_dynamic.py")).compile("matmul_dynamic")
    a = torch.randn(M, K, dtype=torch.float16, device="cuda")
    b = torch.randn(K, N, dtype=torch.float16, device="cuda")
    c = torch.empty(M, N, dtype=torch.float16, device="cuda")
    k(a, b, c)
    check("gemm_dynamic %dx%dx%d" % (M, N, K), c, a.float() @ b.float(), 0.5, 2e-2)


def tma_map_reuse(ctx):
    """One compiled TMA kernel launched on a sequence of tensors: the launcher reuses the
    encoded tensor maps only while each tensor's address and extents are unchanged, so new
    shapes, new buffers and new contents of the same buffers must all give right results."""
    k = ctx.load(os.path.join(ROOT, "examples/gemm_dynamic.py")).compile("matmul_dynamic")
    first = None
    for M, N, K in [(512, 256, 128), (384, 640, 192), (512, 256, 128), (512, 256, 128)]:
        a = torch.randn(M, K, dtype=torch.float16, device="cuda")
        b = torch.randn(K, N, dtype=torch.float16, device="cuda")
        c = torch.empty(M, N, dtype=torch.float16, device="cuda")
        if first is None:
            first = (a, b, c)
        k(a, b, c)
        check("tma map reuse %dx%dx%d" % (M, N, K), c, a.float() @ b.float(), 0.5, 2e-2)
    a, b, c = first  # the very first buffers again, with new contents
    a.normal_(), b.normal_(), c.zero_()
    k(a, b, c)
    check("tma map reuse, first buffers refilled", c, a.float() @ b.float(), 0.5, 2e-2)


def thread_return(ctx):
    """tests/codegen/thread_return.py: warps 2 and 3 leave with T.thread_return after the
    shared tile is ordered; warps 0 and 1 broadcast lane 0's value with a warp shuffle."""
    k = ctx.load(os.path.join(ROOT, "tests/codegen/thread_return.py")).compile("thread_return")
    a = torch.randint(-1000, 1000, (128,), dtype=torch.int32, device="cuda")
    o = torch.full((64,), -7, dtype=torch.int32, device="cuda")
    k(a, o)
    want = torch.stack([a[127 - 32 * (t // 32)] for t in range(64)])
    check("T.thread_return", o, want, 0, 0)


def private_rows(ctx, n):
    """tests/codegen/thread_private_rows.py: per-thread counter rows in shared memory updated in a
    loop whose trip count differs between threads (no barrier inside), summed by other threads."""
    k = ctx.load(os.path.join(ROOT, "tests/codegen/thread_private_rows.py")).compile("private_rows")
    idx = torch.randint(-2, 6, (n,), dtype=torch.int32, device="cuda")
    out = torch.full((4,), -1, dtype=torch.int32, device="cuda")
    k(idx, out)
    want = torch.stack([(idx == e).sum() for e in range(4)]).to(torch.int32)
    check("thread-private shared rows n=%d" % n, out, want, 0, 0)


def fill_local(ctx):
    """tests/codegen/fill_local.py: T.clear and T.copy of T.alloc_local arrays cover all of them
    in every thread (they were once split across threads like a fragment)."""
    k = ctx.load(os.path.join(ROOT, "tests/codegen/fill_local.py")).compile("fill_local")
    a = torch.randint(-100, 100, (128, 8), dtype=torch.int32, device="cuda")
    o = torch.full((128, 8), -1, dtype=torch.int32, device="cuda")
    k(a, o)
    want = a.cpu().clone()
    for t in range(128):
        want[t, t % 8] += t
    check("T.clear / T.copy of local arrays", o, want.cuda(), 0, 0)


def main():
    if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
        sys.exit("usage: regress_gpu.py CORPUS_DIR (the corpus's tilelang/examples folder)")
    corpus = sys.argv[1]
    torch.manual_seed(0)
    ctx = tilescale.Context()
    cases = [
        lambda: layernorm(ctx, corpus, 64, 1024, 1),
        lambda: layernorm(ctx, corpus, 256, 4096, 2),
        lambda: layernorm(ctx, corpus, 4096, 8192, 1),  # the file's own sizes
        lambda: grouped_gemm_bwd(ctx, corpus, [64, 128], 1024, 1024, 64, 128, 64, 2, 256),
        lambda: grouped_gemm_bwd(ctx, corpus, [64, 128], 8192, 8192, 64, 128, 64, 2, 256),  # the file's
        lambda: grouped_gemm_bwd(ctx, corpus, [256, 64, 192], 1024, 512, 64, 128, 64, 2, 256),
        lambda: mla_decode_paged(ctx, corpus, 4, 128, [512, 256, 1024, 64]),
        lambda: mla_decode_paged(ctx, corpus, 8, 128, [1000 + 37 * i for i in range(8)]),
        lambda: mla_decode_paged(ctx, corpus, 128, 128, [8192 + 2 * i for i in range(128)]),  # the file's
        lambda: mla_decode(ctx, corpus, 4, 128, 1024),
        lambda: mla_decode(ctx, corpus, 132, 128, 8192),  # the file's __main__ sizes
        lambda: mha_fwd_bhsd(ctx, corpus, 2, 4, 1024, 128, False, 128, 128, 2, 256),
        lambda: mha_fwd_bhsd(ctx, corpus, 2, 4, 1024, 128, True, 128, 128, 2, 256),
        lambda: mha_fwd_bhsd(ctx, corpus, 1, 3, 1000, 128, False, 128, 128, 2, 256),
        lambda: mha_fwd_bhsd(ctx, corpus, 1, 3, 1000, 128, True, 128, 128, 2, 256),
        lambda: mha_fwd_bhsd(ctx, corpus, 2, 2, 256, 64, False, 64, 64, 1, 128),  # the file's main()
        lambda: gqa_fwd_bshd(ctx, corpus, 1, 16, 1024, 128, True, 4, 64, 64, 2, 128),
        lambda: gqa_fwd_bshd(ctx, corpus, 2, 8, 1000, 128, False, 2, 64, 64, 2, 128),
        lambda: dynamic_gemm(ctx, 1024, 2048, 512),
        lambda: dynamic_gemm(ctx, 1000, 1032, 200),
        lambda: tma_map_reuse(ctx),
        lambda: thread_return(ctx),
        lambda: private_rows(ctx, 1000),
        lambda: private_rows(ctx, 77),
        lambda: fill_local(ctx),
    ]
    for run in cases:
        try:
            run()
        except Exception as e:  # a compile or launch error is a failure of that case
            RESULTS.append(False)
            print("FAIL %s" % str(e).splitlines()[0][:300])
    print("%d passed, %d failed" % (sum(RESULTS), len(RESULTS) - sum(RESULTS)))
    sys.exit(0 if all(RESULTS) else 1)


if __name__ == "__main__":
    main()
