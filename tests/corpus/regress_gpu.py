"""regress_gpu.py — the corpus kernels that once compiled but ran wrong, run on the GPU
through the tilescale binding and checked against torch references written here.

    python3 tests/corpus/regress_gpu.py CORPUS_DIR [--only WORD,...]   (CORPUS_DIR = .../corpus/tilelang/examples;
                                                    --only: the cases whose line in main() names a word)

Each case compiles the file's own kernel factory with the parameters its main() uses (and
smaller shapes), fills inputs the way the file does (torch.randn), runs, and compares with
an independent torch computation.  One PASS/FAIL line per case, then "N passed, N failed".
Root causes (fixed in the compiler, see the reliability issue's note):
  layernorm fwd Y       a replicated fragment written in a T.Parallel loop that also stores
                        to global memory was computed in thread 0 only (lower_tile_ops)
  grouped GEMM bwd dB   no barriers inside a T.Pipelined loop whose trip count is loaded
  MLA paged decode      from global memory (thread_sync took it for thread-dependent)
The FlashAttention backward cases (mha_bwd) check T.Layout on a global tensor (dQ's layout,
pass remap_global) end to end: two kernels that must agree on where each element lives.
The MLA files' split-KV variants (num_split > 1) take P @ V's A from registers on a 64-row
tile over two warpgroups, which split N with a copy of P each."""
import inspect
import math
import os
import sys

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
import tilescale  # noqa: E402

RESULTS = []


def check_slack(name, got, want, slack, atol, rtol):
    """check() where each element may also be off by its own `slack` (terms the reference
    cannot decide, e.g. a ReLU input at zero up to rounding)."""
    got, want, slack = got.double(), want.double(), slack.double()
    finite = bool(torch.isfinite(got).all())
    err = (got - want).abs()
    bad = int((err > atol + rtol * want.abs() + slack).sum()) if finite else got.numel()
    ok = finite and bad == 0
    RESULTS.append(ok)
    print("%s %s: max abs err %.3g (slack up to %.3g), %d of %d out of tolerance" % (
        "PASS" if ok else "FAIL", name, float(err.nan_to_num(1e30).max()), float(slack.max()), bad, got.numel()))


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


def convolution(ctx, corpus, N, C, H, W, F, K, S, D, P, bm, bn, bk, stages, threads, autotune_file=False):
    """convolution/example_convolution.py: T.im2col's gather (zero outside the image) in a
    T.Pipelined loop, vectorized and run stages ahead as cp.async; against torch's conv2d on
    NHWC data.  Shapes whose rows (N*OH*OW) or reduction (K*K*C) do not fill the last tile,
    and channel counts that are not a multiple of 8, take the guarded and narrower paths."""
    fname = "example_convolution_autotune.py" if autotune_file else "example_convolution.py"
    prog = ctx.load(os.path.join(corpus, "convolution", fname))
    extra = dict(thread_num=threads, enable_rasteration=True) if autotune_file else dict(threads=threads)
    kern = prog.compile("convolution", S=S, D=D, P=P, block_M=bm, block_N=bn, block_K=bk, num_stages=stages,
                        N=N, C=C, H=H, W=W, F=F, K=K, **extra)
    a = torch.randn(N, H, W, C, dtype=torch.float16, device="cuda")
    b = torch.randn(K, K, C, F, dtype=torch.float16, device="cuda")
    out = kern(a, b)
    ref = torch.nn.functional.conv2d(a.permute(0, 3, 1, 2).float(), b.permute(3, 2, 0, 1).float(), stride=S,
                                     padding=P, dilation=D).permute(0, 2, 3, 1)
    check("convolution N%d C%d %dx%d F%d k%d s%d d%d p%d (%dx%dx%d, %d stages)" % (
        N, C, H, W, F, K, S, D, P, bm, bn, bk, stages), out, ref, 0.05 * math.sqrt(K * K * C / 64), 1e-2)


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


def mla_decode(ctx, corpus, batch, heads, seqlen, dim=512, pe_dim=64, num_split=1):
    """deepseek_mla/example_mla_decode.py (no split): 299 KB of shared tiles stacked; fits
    only with lifetime-based reuse (merge_shared_memory) and one shared reduction workspace.
    num_split > 1: P @ V with P in registers over two warpgroups along N (FullCol)."""
    prog = ctx.load(os.path.join(corpus, "deepseek_mla/example_mla_decode.py"))
    scale = (dim + pe_dim) ** -0.5
    kern = prog.compile("flashattn", batch=batch, heads=heads, kv_head_num=1, seqlen_kv=seqlen, dim=dim,
                        pe_dim=pe_dim, block_N=64, block_H=64, num_split=num_split, softmax_scale=scale)
    q = torch.randn(batch, heads, dim, dtype=torch.float16, device="cuda")
    q_pe = torch.randn(batch, heads, pe_dim, dtype=torch.float16, device="cuda")
    kv = torch.randn(batch, seqlen, 1, dim, dtype=torch.float16, device="cuda")
    k_pe = torch.randn(batch, seqlen, 1, pe_dim, dtype=torch.float16, device="cuda")
    out = kern(q, q_pe, kv, k_pe)
    query = torch.cat([q, q_pe], -1).float()                      # b h d
    key = torch.cat([kv, k_pe], -1)[:, :, 0].float()              # b s d
    p = torch.softmax(query @ key.transpose(1, 2) * scale, -1)    # b h s
    check("mla_decode b=%d heads=%d kv=%d split=%d" % (batch, heads, seqlen, num_split), out,
          p @ kv[:, :, 0].float(), 1e-2, 1e-2)


def mla_decode_persistent(ctx, corpus, batch, heads, seqlen, num_split=2, dim=512, pe_dim=64):
    """deepseek_mla/example_mla_decode_persistent.py: a persistent split-KV kernel (T.sync_grid
    between the split and the combine); its P @ V GEMM takes P from registers on a 64-row
    tile over two warpgroups, which split N (each holds a copy of P)."""
    prog = ctx.load(os.path.join(corpus, "deepseek_mla/example_mla_decode_persistent.py"))
    kern = prog.compile("flashattn", batch=batch, heads=heads, kv_head_num=1, seqlen_kv=seqlen, dim=dim,
                        pe_dim=pe_dim, block_N=64, block_H=64, num_split=num_split)
    q = torch.randn(batch, heads, dim, dtype=torch.float16, device="cuda")
    q_pe = torch.randn(batch, heads, pe_dim, dtype=torch.float16, device="cuda")
    kv = torch.randn(batch, seqlen, 1, dim, dtype=torch.float16, device="cuda")
    k_pe = torch.randn(batch, seqlen, 1, pe_dim, dtype=torch.float16, device="cuda")
    glse = torch.empty(batch, heads, num_split, dtype=torch.float16, device="cuda")
    partial = torch.empty(batch, heads, num_split, dim, dtype=torch.float16, device="cuda")
    out = kern(q, q_pe, kv, k_pe, glse, partial)
    query = torch.cat([q, q_pe], -1).float()
    key = torch.cat([kv, k_pe], -1)[:, :, 0].float()
    p = torch.softmax(query @ key.transpose(1, 2) * (dim + pe_dim) ** -0.5, -1)
    check("mla_decode_persistent b=%d heads=%d kv=%d split=%d" % (batch, heads, seqlen, num_split), out,
          p @ kv[:, :, 0].float(), 1e-2, 1e-2)


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


def chunk_cumsum(ctx, corpus, B, S, H, chunk, reverse, head_first, use_fragment, threads=256):
    """gdn/example_cumsum.py: T.cumsum over a (1, chunk) shared or fragment tile, forward and
    reversed; the reference is torch.cumsum within each chunk of the sequence."""
    prog = ctx.load(os.path.join(corpus, "gdn/example_cumsum.py"))
    k = prog.compile("tilelang_chunk_local_cumsum_scalar", B=B, S=S, H=H, chunk_size=chunk, reverse=reverse,
                     head_first=head_first, input_dtype="float16", output_dtype="float32", block_S=chunk,
                     threads=threads, use_fragment=use_fragment)
    shape = (B, H, S) if head_first else (B, S, H)
    g = torch.randn(*shape, dtype=torch.float16, device="cuda")
    out = k(g)
    seq = 2 if head_first else 1
    x = g.float().movedim(seq, -1).reshape(*(shape[:seq] + shape[seq + 1:]), S // chunk, chunk)
    ref = x.flip(-1).cumsum(-1).flip(-1) if reverse else x.cumsum(-1)
    ref = ref.reshape(*(shape[:seq] + shape[seq + 1:]), S).movedim(-1, seq)
    check("cumsum B=%d S=%d H=%d chunk=%d reverse=%s head_first=%s fragment=%s" % (
        B, S, H, chunk, reverse, head_first, use_fragment), out, ref, 1e-3, 1e-4)


def ptx_cp_async_rows(ctx, N):
    """tests/codegen/ptx_cp_async.py: explicit cp.async (16 bytes, and 8 bytes zero-filled by a
    predicate) completing on an mbarrier through cp.async.mbarrier.arrive.noinc; each thread
    then reads its neighbour's row, so a missing completion shows as stale shared memory."""
    k = ctx.load(os.path.join(ROOT, "tests/codegen/ptx_cp_async.py")).compile("cp_rows", N=N)
    a = torch.randn(N, 8, dtype=torch.float16, device="cuda")
    tail = torch.randn(N + 2, 4, dtype=torch.float16, device="cuda")
    b = torch.full((N, 12), float("nan"), dtype=torch.float16, device="cuda")
    k(a, tail, b)
    rows = torch.arange(N, device="cuda")
    src = rows // 128 * 128 + (rows % 128 + 1) % 128
    ref = torch.cat([a[src], torch.where((src + 2 < N)[:, None], tail[(src + 2).clamp(max=N + 1)], 0)], 1)
    check("ptx_cp_async rows N=%d" % N, b, ref, 0, 0)


def ptx_wait_group_rows(ctx, N):
    """tests/codegen/ptx_wait_group.py: double-buffered T.ptx_cp_async with T.ptx_commit_group /
    T.ptx_wait_group(1); each thread sums its neighbour's row of every tile, so a barrier missing
    after the wait (or before a stage is overwritten) shows as stale rows."""
    k = ctx.load(os.path.join(ROOT, "tests/codegen/ptx_wait_group.py")).compile("rows_groups", N=N)
    a = torch.randn(N, 64, dtype=torch.float16, device="cuda")
    b = torch.full((128, 64), float("nan"), dtype=torch.float32, device="cuda")
    k(a, b)
    nbr = (torch.arange(128, device="cuda") + 1) % 128
    ref = a.double().reshape(N // 128, 128, 64)[:, nbr].sum(0)
    check("ptx_wait_group rows N=%d" % N, b, ref, 1e-3, 1e-3)


def minference_vs(ctx, corpus, heads, seq_len, vertical_size, slash_size, seed):
    """minference/example_vertical_slash_sparse_attn.py: slash blocks through TMA in a producer
    warpgroup, then vertical columns prefetched by the consumers with T.ptx_commit_group /
    T.ptx_wait_group; against attention over the same key rows in float64 (random valid
    block offsets and column lists, some rows with no columns)."""
    dim, bm = 64, 64
    kern = ctx.load(os.path.join(corpus, "minference/example_vertical_slash_sparse_attn.py")).compile(
        "_tl_vs_sparse_flashattn", batch=1, heads=heads, seq_len=seq_len, dim=dim, vertical_size=vertical_size,
        slash_size=slash_size)
    nb = seq_len // bm
    gen = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(1, heads, seq_len, dim, dtype=torch.float16, device="cuda") for _ in range(3))
    bc = torch.zeros(1, heads, nb, dtype=torch.int32)
    bo = torch.zeros(1, heads, nb, slash_size, dtype=torch.int32)
    cc = torch.zeros(1, heads, nb, dtype=torch.int32)
    ci = torch.zeros(1, heads, nb, vertical_size, dtype=torch.int32)
    for h in range(heads):
        for bx in range(nb):
            blocks = torch.randperm(bx, generator=gen)[:slash_size - 1].tolist() + [bx]  # the diagonal block always
            bc[0, h, bx] = len(blocks)
            bo[0, h, bx, :len(blocks)] = torch.tensor(blocks, dtype=torch.int32) * bm
            ncol = int(torch.randint(0, min(vertical_size, (bx + 1) * bm) + 1, (1,), generator=gen))
            cc[0, h, bx] = ncol
            ci[0, h, bx, :ncol] = torch.randperm((bx + 1) * bm, generator=gen)[:ncol].sort().values.to(torch.int32)
    out = kern(q, k, v, bc.cuda(), bo.cuda(), cc.cuda(), ci.cuda())
    ref = torch.empty(1, heads, seq_len, dim, dtype=torch.float64)
    qd, kd, vd = q.double().cpu(), k.double().cpu(), v.double().cpu()
    rows = torch.arange(bm)
    for h in range(heads):
        for bx in range(nb):
            keys, masks = [], []
            for kk in bo[0, h, bx, :int(bc[0, h, bx])].tolist():
                keys.append(torch.arange(kk, kk + bm))
                masks.append(bx * bm + rows[:, None] >= kk + rows[None, :])
            ncol = int(cc[0, h, bx])
            keys.append(ci[0, h, bx, :ncol].long())
            masks.append(torch.ones(bm, ncol, dtype=torch.bool))
            idx, mask = torch.cat(keys), torch.cat(masks, 1)
            s = qd[0, h, bx * bm:(bx + 1) * bm] @ kd[0, h, idx].T * dim ** -0.5
            p = torch.softmax(s.masked_fill(~mask, float("-inf")), -1)
            ref[0, h, bx * bm:(bx + 1) * bm] = p @ vd[0, h, idx]
    check("minference vertical+slash H=%d S=%d V=%d slash=%d" % (heads, seq_len, vertical_size, slash_size),
          out, ref.cuda(), 2e-2, 2e-2)


def thread_return_exit(ctx, N, flag):
    """tests/codegen/thread_return.py: threads 64..127 return early unless flag[0] == 1; the
    others sum four shared and four global neighbours.  Returned threads leave B untouched."""
    k = ctx.load(os.path.join(ROOT, "tests/codegen/thread_return.py")).compile("early_exit", N=N)
    a = torch.randn(N, dtype=torch.float32, device="cuda")
    b = torch.zeros(N, dtype=torch.float32, device="cuda")
    k(a, b, torch.tensor([flag], dtype=torch.int32, device="cuda"))
    i = torch.arange(N, device="cuda")
    ref = 2 * sum(a[i // 128 * 128 + (i % 128 + j) % 128] for j in range(4))
    if flag != 1:
        ref = torch.where(i % 128 < 64, ref, torch.zeros_like(ref))
    check("thread_return N=%d flag=%d" % (N, flag), b, ref, 1e-5, 1e-5)


def safe_memory_rows(ctx, M, N):
    """tests/codegen/safe_memory.py: a column loop past N and a gather through indices outside
    X (some negative, some >= N): out-of-bounds loads read 0 and stores are skipped, as under
    TileLang (Y's columns past N do not exist; a fault or a wrong G would show)."""
    k = ctx.load(os.path.join(ROOT, "tests/codegen/safe_memory.py")).compile("clamp_rows", M=M, N=N)
    x = torch.randn(M, N, dtype=torch.float32, device="cuda")
    idx = torch.randint(-3 * N, 3 * N, (M, 4), dtype=torch.int32, device="cuda")
    y = torch.full((M, N), float("nan"), dtype=torch.float32, device="cuda")
    g = torch.full((M, 4), float("nan"), dtype=torch.float32, device="cuda")
    k(x, idx, y, g)
    inside = (idx >= 0) & (idx < N)
    ref_g = torch.where(inside, torch.gather(x, 1, idx.clamp(0, N - 1).long()), torch.zeros_like(g))
    check("safe_memory rows M=%d N=%d Y" % (M, N), y, 2 * x, 0, 0)
    check("safe_memory rows M=%d N=%d G" % (M, N), g, ref_g, 0, 0)


def clean_and_maintain_logits(ctx, corpus, M, N):
    """dsa_hisa/clean_and_maintain_logits.py: the column loop runs past N (block_K 4096) and
    writes only where its masks say; past N nothing may be written (it faulted before
    safe_memory)."""
    path = os.path.join(corpus, "dsa_hisa/clean_and_maintain_logits.py")
    k = ctx.load(path).compile("clean_and_maintain_logits_", seq_len=M, seq_len_kv=N)
    logits = torch.randn(M, N, dtype=torch.float32, device="cuda")
    ks = torch.randint(0, N // 2, (M,), dtype=torch.int32, device="cuda")
    ke = (ks + torch.randint(1, N // 2, (M,), dtype=torch.int32, device="cuda")).clamp(max=N)
    ref = logits.clone()
    n = torch.arange(N, device="cuda")[None, :]
    ref = ref.masked_fill((n < ks.long()[:, None]) | (n >= ke.long()[:, None]), float("-inf"))
    m = torch.arange(M, device="cuda")
    ref[m, ks.long()] = float("inf")
    ref[m, (ke - 1).long()] = float("inf")
    k(logits, ks, ke)
    ok = torch.equal(logits, ref)  # +-inf marks: exact equality, not check()'s finite test
    RESULTS.append(ok)
    print("%s clean_and_maintain_logits M=%d N=%d: %d of %d elements differ" % (
        "PASS" if ok else "FAIL", M, N, int((logits != ref).sum()), logits.numel()))


def gemm_clear_accum_cond(ctx, M, N, K):
    """tests/front/gemm_clear_accum_cond.py: the accumulator is never T.clear'ed; a runtime
    clear_accum=(k == 0) clears it on the first K tile, then one more GEMM of the last tile."""
    k = ctx.load(os.path.join(ROOT, "tests/front/gemm_clear_accum_cond.py")).compile("matmul_first_clear", M=M, N=N, K=K)
    a = torch.randn(M, K, dtype=torch.float16, device="cuda")
    b = torch.randn(K, N, dtype=torch.float16, device="cuda")
    c = torch.full((M, N), float("nan"), dtype=torch.float32, device="cuda")
    k(a, b, c)
    ref = a.float() @ b.float() + a[:, K - 32:].float() @ b[K - 32:].float()
    check("gemm clear_accum=(k == 0) %dx%dx%d" % (M, N, K), c, ref, 0.5, 2e-2)


def gemv_alloc_reducer(ctx, corpus, M, N):
    """gemv/example_gemv.py gemv_alloc_reducer: T.alloc_reducer partial sums over a pipelined
    K loop, combined by T.finalize_reducer (warp shuffles + a shared scratch)."""
    k = ctx.load(os.path.join(corpus, "gemv/example_gemv.py")).compile("gemv_alloc_reducer", M=M, N=N, block_M=128,
                                                                       block_N=128)
    a = torch.randn(M, N, dtype=torch.float16, device="cuda")
    x = torch.randn(N, dtype=torch.float16, device="cuda")
    o = k(a, x)
    o = o[0] if isinstance(o, (tuple, list)) else o
    check("gemv_alloc_reducer M=%d N=%d" % (M, N), o, a.float() @ x.float(), 5e-2, 1e-2)


def reducer_rows(ctx, M, N):
    """tests/codegen/reducer_rows.py: sum and max reducers over a replicated 4 x 8 nest (each
    iteration must count once)."""
    k = ctx.load(os.path.join(ROOT, "tests/codegen/reducer_rows.py")).compile("row_sums", M=M, N=N)
    a = torch.randn(M, N, dtype=torch.float32, device="cuda")
    s = torch.full((M,), float("nan"), device="cuda")
    x = torch.full((M,), float("nan"), device="cuda")
    k(a, s, x)
    check("reducer sum M=%d N=%d" % (M, N), s, a.sum(1), 1e-4, 1e-4)
    check("reducer max M=%d N=%d" % (M, N), x, a.max(1).values, 0, 0)


def gemv_tvm_allreduce(ctx, corpus, N, K, block_n, reduce_threads):
    """gemv/example_gemv.py splitk_gemv_vectorized_tvm: per-thread partial dot products combined
    by T.tvm_thread_allreduce over threadIdx.y (lanes BLOCK_N apart: the shared-scratch fold, or
    a butterfly of strided shuffles when BLOCK_N * reduce_threads <= 32)."""
    k = ctx.load(os.path.join(corpus, "gemv/example_gemv.py")).compile(
        "splitk_gemv_vectorized_tvm", N=N, K=K, BLOCK_N=block_n, reduce_threads=reduce_threads)
    a = torch.randn(K, dtype=torch.float16, device="cuda")
    b = torch.randn(N, K, dtype=torch.float16, device="cuda")
    o = k(a, b)
    o = o[0] if isinstance(o, (tuple, list)) else o
    check("gemv tvm_thread_allreduce N=%d K=%d BLOCK_N=%d" % (N, K, block_n), o, b.float() @ a.float(), 5e-2, 1e-2)


def thread_allreduce(ctx):
    """tests/codegen/thread_allreduce.py: sum and min over threadIdx.x (shuffles), max over
    threadIdx.y and a conditional product over the block (shared scratch), lambda combiners."""
    k = ctx.load(os.path.join(ROOT, "tests/codegen/thread_allreduce.py")).compile("allreduce")
    a = 1 + 0.01 * torch.randn(4, 32, dtype=torch.float32, device="cuda")
    s = torch.full((4, 32), float("nan"), device="cuda")
    k(a, s)
    d = a.double()
    want = d.sum(1, keepdim=True) + d.max(0, keepdim=True).values + d[:, :16].prod() + d.min(1, keepdim=True).values
    check("thread_allreduce sum/max/prod/min", s, want, 1e-4, 1e-5)
    k8 = ctx.load(os.path.join(ROOT, "tests/codegen/thread_allreduce_partial_warp.py")).compile("allreduce_partial_warp")
    a8 = 1 + 0.01 * torch.randn(8, dtype=torch.float32, device="cuda")
    s8 = torch.full((8,), float("nan"), device="cuda")
    k8(a8, s8)
    d8 = a8.double()
    check("thread_allreduce 8-thread block (partial-warp shuffles)", s8, (d8.sum() + d8.prod()).expand(8), 1e-4, 1e-5)


def ldst_bits(ctx):
    """tests/codegen/ldst_bits.py: T.ldg/lds/stg/sts of 32 to 128 bits with predicates, vector
    reinterprets and a slice assigned the registers, against the same moves done by torch."""
    k = ctx.load(os.path.join(ROOT, "tests/codegen/ldst_bits.py")).compile("ldst_bits")
    x = torch.randn(128, dtype=torch.float32, device="cuda")
    z = torch.randn(256, dtype=torch.float16, device="cuda")
    y = torch.full((128,), 7.0, device="cuda")
    w = torch.full((256,), 7.0, dtype=torch.float16, device="cuda")
    v = torch.full((64,), 7.0, device="cuda")
    k(x, z, y, w, v)
    want_v = torch.cat([torch.where(torch.arange(32, device="cuda") < 16, x[:32], torch.zeros_like(x[:32])),
                        z.view(torch.float32)[3::4]])
    want_y = torch.cat([x[:96], torch.full((32,), 7.0, device="cuda")])
    sw = z.view(torch.float32).view(32, 4)
    want_w = w.clone().view(32, 8)
    want_w[:, :4] = sw.roll(-1, 0)[:, :2].contiguous().view(torch.float16)
    check("T.ldg32 pred / T.lds32 via reinterpret", v, want_v, 0, 0)
    check("T.ldg128 / T.stg128 pred", y, want_y, 0, 0)
    check("T.ldg128 fp16 -> T.sts128 -> T.lds64 -> float16x4 slice", w.float(), want_w.view(-1).float(), 0, 0)


def atomic_vec_slices(ctx):
    """tests/codegen/atomic_vec_slices.py: T.atomic_addx4 / addx2 on slices with return_prev:
    the old values come back, the sums land."""
    k = ctx.load(os.path.join(ROOT, "tests/codegen/atomic_vec_slices.py")).compile("atomic_vec_slices")
    a, b0 = torch.randn(256, device="cuda"), torch.randn(256, device="cuda")
    h, g0 = torch.randn(128, device="cuda").half(), torch.randn(128, device="cuda").half()
    b, g = b0.clone(), g0.clone()
    prev, hprev = torch.full_like(b, float("nan")), torch.full_like(g, float("nan"))
    k(a, b, prev, h, g, hprev)
    check("atomic_addx4 slices return_prev", prev, b0, 0, 0)
    check("atomic_addx4 slices sum", b, b0 + a, 1e-6, 1e-6)
    check("atomic_addx2 float16 slices return_prev", hprev.float(), g0.float(), 0, 0)
    check("atomic_addx2 float16 slices sum", g.float(), (g0 + h).float(), 1e-3, 1e-3)


def prefetch_loads_gemm(ctx, M, N, K, config="ts.prefetch_loads"):
    """tests/codegen/prefetch_loads.py: per-row scales and a bias read after each wgmma, under
    one opt-in schedule: the scales prefetched into registers before the GEMM's mbarrier waits
    (ts.prefetch_loads) or one iteration ahead (ts.prefetch_next_loads), or the GEMM of k+1
    issued before k's promotion (ts.ws_acc_overlap)."""
    k = ctx.load(os.path.join(ROOT, "tests/codegen/prefetch_loads.py")).compile(
        "scaled_gemm", M=M, N=N, K=K, write_bias=False, pass_configs={config: True})
    a = torch.randn(M, K, dtype=torch.float16, device="cuda")
    b = torch.randn(N, K, dtype=torch.float16, device="cuda")
    s = torch.rand(M, K // 64, device="cuda")
    bias = torch.randn(M, device="cuda")
    c = torch.full((M, N), float("nan"), device="cuda")
    k(a, b, s, bias, c)
    ref = sum((a[:, i * 64:(i + 1) * 64].double() @ b[:, i * 64:(i + 1) * 64].double().T) * s[:, i:i + 1].double()
              + bias.double()[:, None] for i in range(K // 64))
    check("scaled wgmma loop %dx%dx%d %s" % (M, N, K, config), c, ref, 5e-2, 1e-3)


def philox_outputs(seed, first, n):
    """Outputs first .. first+n-1 of the Philox-4x32-10 stream of `seed` (subsequence 0), as
    cuRAND and Triton's randint4x number them: 4 words per counter value, counter = index // 4.
    An independent reference (plain Python integers) for T.rng_init / T.rng_rand."""
    m = 0xFFFFFFFF
    blocks = {}
    out = []
    for i in range(first, first + n):
        ctr = i // 4
        if ctr not in blocks:
            c = [ctr & m, ctr >> 32, 0, 0]
            k0, k1 = seed & m, (seed >> 32) & m
            for r in range(10):
                if r:
                    k0, k1 = (k0 + 0x9E3779B9) & m, (k1 + 0xBB67AE85) & m
                p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
                c = [(p1 >> 32) ^ c[1] ^ k0, p1 & m, (p0 >> 32) ^ c[3] ^ k1, p0 & m]
            blocks[ctr] = c
        out.append(blocks[ctr][i % 4])
    return torch.tensor(out, dtype=torch.int64)


def rand_uint(ctx, corpus, M, seed):
    """rand/rand_uint.py: T.rng_init(seed, 0, offset) + T.rng_rand() per element; the file
    compares with Triton's randint4x, here with philox_outputs."""
    k = ctx.load(os.path.join(corpus, "rand/rand_uint.py")).compile("tilelang_rand_1d", M=M, seed=seed)
    a = k()
    a = a[0] if isinstance(a, (tuple, list)) else a
    got = a.cpu().view(torch.int32).to(torch.int64) & 0xFFFFFFFF
    check("rand_uint M=%d seed=%d" % (M, seed), got, philox_outputs(seed, 0, M), 0, 0)


def rng_dp4a(ctx, N):
    """tests/codegen/rng_dp4a.py: four T.rng_rand draws and one T.rng_rand_float per thread from
    output row*5 of seed 1234, and two T.dp4a int8 dot products."""
    k = ctx.load(os.path.join(ROOT, "tests/codegen/rng_dp4a.py")).compile("rng_dp4a", N=N)
    r = torch.zeros(N, 4, dtype=torch.int32, device="cuda")  # uint32 bits
    u = torch.full((N,), float("nan"), device="cuda")
    a = torch.randint(-128, 128, (N, 8), dtype=torch.int8, device="cuda")
    b = torch.randint(-128, 128, (N, 8), dtype=torch.int8, device="cuda")
    d = torch.zeros(N, dtype=torch.int32, device="cuda")
    k(r.view(torch.uint32) if hasattr(torch, "uint32") else r, u, a, b, d)
    ref = philox_outputs(1234, 0, 5 * N).view(N, 5)
    check("rng_rand N=%d" % N, r.cpu().to(torch.int64) & 0xFFFFFFFF, ref[:, :4], 0, 0)
    check("rng_rand_float N=%d" % N, u.cpu().double(), (ref[:, 4].double() + 0.5) * 2.0 ** -32, 1e-7, 1e-6)
    check("dp4a N=%d" % N, d, (a.int() * b.int()).sum(1), 0, 0)


def rng_dists(ctx, N):
    """tests/codegen/rng_dists.py: T.rng_rand_float(bit=64), two dist="normal" floats (one
    Box-Muller pair) and two bit=64 normal doubles per thread from output row*8 of seed 77,
    against the formulas of cuRAND's Philox distributions evaluated on philox_outputs."""
    k = ctx.load(os.path.join(ROOT, "tests/codegen/rng_dists.py")).compile("rng_dists", N=N)
    d = torch.full((N,), float("nan"), dtype=torch.float64, device="cuda")
    f = torch.full((N, 2), float("nan"), device="cuda")
    g = torch.full((N, 2), float("nan"), dtype=torch.float64, device="cuda")
    k(d, f, g)
    x = philox_outputs(77, 0, 8 * N).view(N, 8).double()
    check("rng_rand_float bit=64 N=%d" % N, d.cpu(), x[:, 0] * 2.0 ** -32 + 2.0 ** -32, 0, 1e-15)
    u = (x[:, 1].float() * 2.3283064e-10 + 2.3283064e-10 / 2).double()
    step = 2.3283064e-10 * 6.2831855
    v = (x[:, 2].float() * step + step / 2).double()
    s = torch.sqrt(-2.0 * torch.log(u))
    check("rng_rand_float normal N=%d" % N, f.cpu().double(), torch.stack([s * torch.sin(v), s * torch.cos(v)], 1),
          2e-5, 1e-4)
    b53 = lambda lo, hi: (lo.long() ^ (hi.long() << 21)).double()
    u = b53(x[:, 3], x[:, 4]) * 2.0 ** -53 + 2.0 ** -54
    v = b53(x[:, 5], x[:, 6]) * 2.0 ** -52 + 2.0 ** -53
    s = torch.sqrt(-2.0 * torch.log(u))
    ref = torch.stack([s * torch.sin(math.pi * v), s * torch.cos(math.pi * v)], 1)
    check("rng_rand_float bit=64 normal N=%d" % N, g.cpu(), ref, 1e-12, 1e-12)


def math_functions(ctx, N, dtype):
    """tests/codegen/math_functions.py: T.sinh ... T.nearbyint and the fast forms T.__exp ...
    on x in [0.05, 0.9), y of both signs, against torch in float64 (nextafter: float32 only,
    exactly; float16 computes in float and rounds back to x)."""
    k = ctx.load(os.path.join(ROOT, "tests/codegen/math_functions.py")).compile("math_functions", N=N, dtype=dtype)
    t = getattr(torch, dtype)
    x = (torch.rand(N, device="cuda") * 0.85 + 0.05).to(t)
    y = (torch.rand(N, device="cuda") * 2 - 1).to(t)
    out = torch.full((23, N), float("nan"), dtype=t, device="cuda")
    k(x, y, out)
    a, b = x.double(), y.double()
    want = [torch.sinh(a), torch.cosh(a), torch.asin(a), torch.acos(a), torch.atan(a), torch.asinh(a),
            torch.acosh(a + 1), torch.atanh(a), torch.atan2(a, b), torch.hypot(a, b), torch.copysign(a, b),
            torch.ldexp(a, torch.tensor(3.0, device="cuda", dtype=torch.float64)), torch.round(a * 8),
            torch.nextafter(x, y).double() if dtype == "float32" else a,
            torch.exp(a), torch.pow(10.0, a), torch.log(a), torch.log2(a), torch.log10(a), torch.tan(a),
            torch.cos(a), torch.sin(a), 1 / (a + 0.5)]
    tol = 2e-6 if dtype == "float32" else 2e-3
    for r, name in enumerate(("sinh cosh asin acos atan asinh acosh atanh atan2 hypot copysign ldexp nearbyint "
                              "nextafter __exp __exp10 __log __log2 __log10 __tan __cos __sin fast_rcp").split()):
        exact = name in ("copysign", "ldexp", "nearbyint", "nextafter")
        check("math %s %s N=%d" % (name, dtype, N), out[r].double(), want[r].to(t).double() if exact else want[r],
              0 if exact else tol, 0 if exact else (4 * tol if name.startswith(("__", "fast")) else tol))


def mhc_post(ctx, corpus, n, hidden):
    """deepseek_mhc/example_mhc_post.py: b_local[k, j] is read in a T.Parallel(i, j) nest
    under a serial k, so layout_inference keeps k in every thread's registers (held layout)
    instead of replicating the whole (4 x h_blk) fragment in every thread."""
    k = ctx.load(os.path.join(corpus, "deepseek_mhc/example_mhc_post.py")).compile("mhc_post_tilelang", hc=4,
                                                                                   hidden=hidden)
    a = torch.randn(n, 4, 4, dtype=torch.float32, device="cuda")
    b = torch.randn(n, 4, hidden, dtype=torch.bfloat16, device="cuda")
    c = torch.randn(n, 4, dtype=torch.float32, device="cuda")
    d = torch.randn(n, hidden, dtype=torch.bfloat16, device="cuda")
    x = torch.full((n, 4, hidden), float("nan"), dtype=torch.bfloat16, device="cuda")
    k(a, b, c, d, x)
    ref = c.unsqueeze(-1) * d.float().unsqueeze(1) + torch.bmm(a.mT, b.float())
    check("mhc_post n=%d hidden=%d" % (n, hidden), x, ref, 5e-2, 2e-2)


def gemm_window_atoms(ctx):
    """tests/codegen/gemm_window_atoms.py: two GEMMs read column windows of one swizzled
    shared tile (sparse MLA's query split); the second starts at a later swizzle atom."""
    k = ctx.load(os.path.join(ROOT, "tests/codegen/gemm_window_atoms.py")).compile("qk_split")
    q = torch.randn(64, 192, dtype=torch.bfloat16, device="cuda")
    kk = torch.randn(64, 128, dtype=torch.bfloat16, device="cuda")
    kt = torch.randn(64, 64, dtype=torch.bfloat16, device="cuda")
    s = torch.full((64, 64), float("nan"), dtype=torch.float32, device="cuda")
    k(q, kk, kt, s)
    ref = q[:, :128].float() @ kk.float().T + q[:, 128:].float() @ kt.float().T
    check("gemm on column windows of one swizzled tile", s, ref, 1e-2, 1e-3)


def mha_bwd(ctx, corpus, fname, bhsd, B, H, S, D, causal):
    """flash_attention/example_mha_bwd_{bshd,bhsd}.py, the file's autograd backward: the bwd
    kernel atomically adds dQ through the T.Layout of make_dq_layout (8x8 mma tiles made
    contiguous, pass remap_global) and the postprocess kernel reads it back through the same
    map; dQ, dK and dV against float64 torch autograd of plain softmax attention."""
    prog = ctx.load(os.path.join(corpus, "flash_attention", fname))
    shape = (B, H, S, D) if bhsd else (B, S, H, D)
    fwd = prog.compile("flashattn_fwd", batch=B, heads=H, seq_len=S, dim=D, is_causal=causal, block_M=64,
                       block_N=64 if D <= 128 else 32)
    prep = prog.compile("flashattn_bwd_preprocess", batch=B, heads=H, seq_len=S, dim=D)
    post = prog.compile("flashattn_bwd_postprocess", batch=B, heads=H, seq_len=S, dim=D)
    bwd = prog.compile("flashattn_bwd", batch=B, heads=H, seq_len=S, dim=D, is_causal=causal, block_M=64,
                       block_N=64 if D <= 64 else 32)
    q, k, v, do = (torch.randn(*shape, dtype=torch.float16, device="cuda") for _ in range(4))
    o, lse = fwd(q, k, v)
    delta = prep(o, do)
    dq = torch.zeros(shape, dtype=torch.float32, device="cuda")
    dk = torch.full(shape, float("nan"), dtype=torch.float16, device="cuda")
    dv = torch.full(shape, float("nan"), dtype=torch.float16, device="cuda")
    bwd(q, k, v, do, lse, delta, dq, dk, dv)
    dq = post(dq)
    # reference: [B, H, S, D] float64 attention with autograd
    to_bhsd = (lambda x: x) if bhsd else (lambda x: x.transpose(1, 2))
    qr, kr, vr = (to_bhsd(x).double().requires_grad_() for x in (q, k, v))
    scores = qr @ kr.transpose(-1, -2) * D ** -0.5
    if causal:
        scores = scores.masked_fill(torch.ones(S, S, dtype=torch.bool, device="cuda").triu(1), float("-inf"))
    (torch.softmax(scores, -1) @ vr).backward(to_bhsd(do).double())
    tag = "%s B=%d H=%d S=%d D=%d causal=%s" % (fname[:-3], B, H, S, D, causal)
    check(tag + " dQ", to_bhsd(dq), qr.grad, 2e-2, 2e-2)
    check(tag + " dK", to_bhsd(dk), kr.grad, 2e-2, 2e-2)
    check(tag + " dV", to_bhsd(dv), vr.grad, 2e-2, 2e-2)


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


def fragment_prefix_window(ctx, valid):
    """tests/codegen/fragment_prefix_window.py: the first `valid` rows of a GEMM accumulator
    copied out through a window that does not line up with its warp strips (GQA decode's
    T.copy(acc_o[:valid_block_H, :], O_shared))."""
    k = ctx.load(os.path.join(ROOT, "tests/codegen/fragment_prefix_window.py")).compile("acc_prefix", valid=valid)
    a = torch.randn(64, 64, dtype=torch.float16, device="cuda")
    b = torch.randn(64, 64, dtype=torch.float16, device="cuda")
    o = torch.full((valid, 64), float("nan"), dtype=torch.float32, device="cuda")
    k(a, b, o)
    check("accumulator prefix window valid=%d" % valid, o, (a.float() @ b.float())[:valid], 1e-2, 1e-3)


def replicated_write_nest(ctx, n):
    """tests/codegen/replicated_write_nest.py: a fragment written with reversed indices (held
    whole by every thread) is filled in every thread, not only with each thread's own rows."""
    k = ctx.load(os.path.join(ROOT, "tests/codegen/replicated_write_nest.py")).compile("reverse_rows", n=n)
    a = torch.randn(n, dtype=torch.float32, device="cuda")
    b = torch.full((n,), float("nan"), dtype=torch.float32, device="cuda")
    k(a, b)
    check("replicated fragment written by a T.Parallel loop n=%d" % n, b, a.flip(0) * 2, 0, 0)


def thread_branch_gemm(ctx, M, N, K):
    """tests/codegen/thread_branch_gemm.py: hand-written producer/consumer warp specialization as
    `if tx < 128: ... else: ...` (each branch a T.ws body over its warpgroup), ordered by the
    user's mbarriers: the producer copies the K tiles, the consumer runs a wgmma GEMM on each."""
    k = ctx.load(os.path.join(ROOT, "tests/codegen/thread_branch_gemm.py")).compile("tb_gemm", M=M, N=N, K=K)
    a = torch.randn(M, K, dtype=torch.float16, device="cuda")
    b = torch.randn(K, N, dtype=torch.float16, device="cuda")
    c = torch.full((M, N), float("nan"), dtype=torch.float16, device="cuda")
    k(a, b, c)
    check("thread-branch producer/consumer GEMM %dx%dx%d" % (M, N, K), c, a.float() @ b.float(), 0.5, 2e-2)


def thread_branch_chain(ctx, M):
    """tests/codegen/thread_branch_chain.py: an if/elif chain on the three warps of a 96-thread
    block (a row-sum reduction, a copy through shared memory with a named barrier, a T.Parallel)."""
    k = ctx.load(os.path.join(ROOT, "tests/codegen/thread_branch_chain.py")).compile("tb_chain", M=M)
    a = torch.randn(M, 64, dtype=torch.float32, device="cuda")
    s = torch.full((M,), float("nan"), dtype=torch.float32, device="cuda")
    b = torch.full((M, 64), float("nan"), dtype=torch.float32, device="cuda")
    d = torch.full((M, 64), float("nan"), dtype=torch.float32, device="cuda")
    k(a, s, b, d)
    check("thread-branch chain M=%d row sums" % M, s, a.double().sum(1).float(), 1e-4, 1e-4)
    check("thread-branch chain M=%d reversed rows" % M, b, a.flip(1), 0, 0)
    check("thread-branch chain M=%d doubled" % M, d, a * 2, 0, 0)


def window_loop_atoms(ctx):
    """tests/codegen/window_loop_atoms.py: T.tma_copy and T.gemm on column windows of a swizzled
    tile whose start is a loop variable times the atom (j * 64 in a T.unroll)."""
    k = ctx.load(os.path.join(ROOT, "tests/codegen/window_loop_atoms.py")).compile("qk_loop")
    q = torch.randn(64, 256, dtype=torch.bfloat16, device="cuda")
    kk = torch.randn(64, 256, dtype=torch.bfloat16, device="cuda")
    s = torch.full((64, 64), float("nan"), dtype=torch.float32, device="cuda")
    k(q, kk, s)
    check("tma_copy and gemm on loop-indexed column windows", s, q.float() @ kk.float().T, 1e-2, 1e-3)


def bitonic_sort(ctx, n, threads):
    """tests/codegen/sync_parallel_bitonic.py: a bitonic sort, one compare-and-swap step per
    T.Parallel loop whose swap branch differs between threads (no barrier inside, by T.Parallel's
    contract), against torch.sort."""
    k = ctx.load(os.path.join(ROOT, "tests/codegen/sync_parallel_bitonic.py")).compile("bitonic", N=n, threads=threads)
    a = torch.randn(n, dtype=torch.float32, device="cuda")
    b = torch.full((n,), float("nan"), dtype=torch.float32, device="cuda")
    idx = torch.full((n,), -1, dtype=torch.int32, device="cuda")
    k(a, b, idx)
    tag = "bitonic sort n=%d threads=%d" % (n, threads)
    check(tag + " values", b, torch.sort(a).values, 0, 0)
    check(tag + " indices", a[idx.long().clamp(0, n - 1)], torch.sort(a).values, 0, 0)


def xor_double_buffer(ctx, n, rounds):
    """tests/codegen/sync_xor_double_buffer.py: stream compaction through the halves cur and
    cur ^ 1 of a shared double buffer (no barrier between a round's reads and appends)."""
    k = ctx.load(os.path.join(ROOT, "tests/codegen/sync_xor_double_buffer.py")).compile("compact", N=n, rounds=rounds)
    a = torch.randint(-1000, 1000, (n,), dtype=torch.int32, device="cuda")
    out = torch.full((n,), -7, dtype=torch.int32, device="cuda")
    cnt = torch.full((1,), -1, dtype=torch.int32, device="cuda")
    k(a, out, cnt)
    keep = [int(v) for v in a.cpu()]
    for r in range(rounds):
        keep = [v for v in keep if v % (r + 2) != 0]
    c = int(cnt.item())
    got = sorted(int(v) for v in out[:max(c, 0)].cpu())
    ok = c == len(keep) and got == sorted(keep) and bool((out[c:] == -1).all())
    RESULTS.append(ok)
    print("%s double-buffer compaction n=%d rounds=%d: %d of %d kept (want %d)" % (
        "PASS" if ok else "FAIL", n, rounds, c, n, len(keep)))


def topk_selector(ctx, corpus, batch, seq_len, topk=2048):
    """deepseek_v32/topk_selector.py: radix top-k whose tail passes append survivors to the other
    half (r_idx ^ 1) of a shared double buffer while reading half r_idx in a branch that differs
    between threads.  The selected index set must equal torch.topk's (distinct random values)."""
    k = ctx.load(os.path.join(corpus, "deepseek_v32/topk_selector.py")).compile("tl_topk_impl", topk=topk)
    x = torch.randn(batch, seq_len, dtype=torch.float32, device="cuda")
    starts = torch.zeros(batch, dtype=torch.int32, device="cuda")
    ends = torch.full((batch,), seq_len, dtype=torch.int32, device="cuda")
    idx = torch.full((batch, topk), -1, dtype=torch.int32, device="cuda")
    k(x, idx, starts, ends)
    want = torch.topk(x, topk, dim=-1).indices.sort(-1).values.to(torch.int32)
    check("topk_selector batch=%d seq_len=%d topk=%d (index sets)" % (batch, seq_len, topk), idx.sort(-1).values, want, 0, 0)


def flashmla_ws(ctx, corpus, batch, heads, seqlen, dim=512, pe_dim=64):
    """warp_specialize/example_warp_specialize_flashmla.py: two consumer warpgroups that combine
    their log-sum-exp through shared memory (`logsum[i] += logsum_1[i]` in a T.Parallel loop run
    by one replica per row), ordered by the user's mbarriers."""
    prog = ctx.load(os.path.join(corpus, "warp_specialize/example_warp_specialize_flashmla.py"))
    kern = prog.compile("flashattn", batch=batch, heads=heads, kv_head_num=1, seqlen_kv=seqlen, dim=dim,
                        pe_dim=pe_dim, block_N=64, block_H=64, num_split=1)
    q = torch.randn(batch, heads, dim, dtype=torch.float16, device="cuda")
    q_pe = torch.randn(batch, heads, pe_dim, dtype=torch.float16, device="cuda")
    kv = torch.randn(batch, seqlen, 1, dim, dtype=torch.float16, device="cuda")
    k_pe = torch.randn(batch, seqlen, 1, pe_dim, dtype=torch.float16, device="cuda")
    glse = torch.zeros(batch, heads, 1, dtype=torch.float16, device="cuda")
    opart = torch.zeros(batch, heads, 1, dim, dtype=torch.float16, device="cuda")
    out = kern(q, q_pe, kv, k_pe, glse, opart)
    scale = (dim + pe_dim) ** -0.5
    query = torch.cat([q, q_pe], -1).float()
    key = torch.cat([kv, k_pe], -1)[:, :, 0].float()
    p = torch.softmax(query @ key.transpose(1, 2) * scale, -1)
    check("warp-specialized flashmla b=%d heads=%d kv=%d" % (batch, heads, seqlen), out, p @ kv[:, :, 0].float(), 1e-2, 1e-2)
def gemm_persistent(ctx, corpus, M, N, K, primitive):
    """gemm/example_gemm_persistent.py matmul_persistent: the pipelined K loop inside the file's
    persistent tile loop (T.Persistent, or its hand-written waves with an `if` on the tile)
    gets the TMA producer / wgmma consumer schedule (warp_specialize_nest.c) with the stage
    counter running on across tiles; sizes that are not multiples of the tile, and fewer
    tiles than blocks, check the zero-filled boxes, the clipped TMA stores and idle blocks."""
    prog = ctx.load(os.path.join(corpus, "gemm/example_gemm_persistent.py"))
    kern = prog.compile("matmul_persistent", M=M, N=N, K=K, block_M=128, block_N=256, block_K=64, threads=256,
                        num_stages=3, use_persistent_primitive=primitive)
    a = torch.randn(M, K, dtype=torch.float16, device="cuda")
    b = torch.randn(K, N, dtype=torch.float16, device="cuda")
    c = kern(a, b)
    check("gemm persistent %dx%dx%d primitive=%s" % (M, N, K, primitive), c, a.float() @ b.float(), 0.5, 2e-2)
def gemm_intrinsics(ctx, corpus, M, N, K, in_dtype, out_dtype, accum_dtype):
    """gemm/example_gemm_intrinsics.py tl_matmul: the prelude's TensorCoreIntrinEmitter
    (T.ptx_ldmatrix x4 from swizzled shared tiles, two T.ptx_mma per 16 x 16 tile, per-thread
    stores of the accumulators into a [M/16, N/16, 16, 16] shared tile); C = A @ B^T."""
    prog = ctx.load(os.path.join(corpus, "gemm/example_gemm_intrinsics.py"))
    kern = prog.compile("tl_matmul", M=M, N=N, K=K, in_dtype=in_dtype, out_dtype=out_dtype, accum_dtype=accum_dtype)
    if in_dtype == "int8":
        a = torch.randint(-128, 128, (M, K), dtype=torch.int8, device="cuda")
        b = torch.randint(-128, 128, (N, K), dtype=torch.int8, device="cuda")
        want = (a.cpu().long() @ b.cpu().long().T).cuda()
        tol = (0, 0)
    else:
        a = torch.randn(M, K, dtype=torch.float16, device="cuda")
        b = torch.randn(N, K, dtype=torch.float16, device="cuda")
        want = a.double() @ b.double().T
        tol = (1e-2, 1e-2)
    c = kern(a, b)
    tag = "gemm intrinsics emitter %dx%dx%d %s->%s" % (M, N, K, in_dtype, out_dtype)
    if in_dtype == "int8":
        ok = bool(torch.equal(c.cpu().long(), want.cpu()))
        RESULTS.append(ok)
        print("%s %s: %d of %d differ" % ("PASS" if ok else "FAIL", tag, int((c.cpu().long() != want.cpu()).sum()),
                                         c.numel()))
    else:
        check(tag, c, want, *tol)


def mma_emitter_gemm(ctx, M, N, K, a_t, b_t, dtype):
    """tests/codegen/mma_emitter_gemm.py: the emitter with A stored [K, M] and/or B stored [K, N]
    (ldmatrix .trans), 2 x 2 warps of 32 x 32."""
    k = ctx.load(os.path.join(ROOT, "tests/codegen/mma_emitter_gemm.py")).compile(
        "mma_emitter_gemm", M=M, N=N, K=K, a_transposed=a_t, b_transposed=b_t, dtype=dtype)
    tt = getattr(torch, dtype)
    a = torch.randn(*((K, M) if a_t else (M, K)), dtype=tt, device="cuda")
    b = torch.randn(*((N, K) if b_t else (K, N)), dtype=tt, device="cuda")
    am = a.double().T if a_t else a.double()
    bm = b.double().T if b_t else b.double()
    c = torch.full((M, N), float("nan"), dtype=torch.float32, device="cuda")
    k(a, b, c)
    check("mma emitter %dx%dx%d A^T=%s B^T=%s %s" % (M, N, K, a_t, b_t, dtype), c, am @ bm, 1e-2, 1e-3)


def pack_i2_interleaved(b):
    """BitNet's 2-bit weight format for the int8 decode of tilelang_bitnet_158_int8xint2_prefill.py:
    four 2-bit values a byte (value k of a group of 4 at bits 2k), then, per 32-bit word, value
    `off` (0..15) moved to bit (off % 4) * 8 + (off // 4) * 2, so that one shift and mask give
    four int8 lanes at once.  Written here from that bit layout."""
    n, k = b.shape
    v = b.to(torch.int64).cpu().reshape(n, k // 16, 16)  # 16 values per 32-bit word
    word = torch.zeros(n, k // 16, dtype=torch.int64)
    for off in range(16):
        word |= (v[:, :, off] & 3) << ((off % 4) * 8 + (off // 4) * 2)
    word = torch.where(word >= 2 ** 31, word - 2 ** 32, word).to(torch.int32)
    return word.view(torch.int8).reshape(n, k // 4)


def bitnet_prefill(ctx, corpus, M, N, K):
    """bitnet-1.58b/kernel_benchmark/tilelang_bitnet_158_int8xint2_prefill.py: 2-bit weights
    decoded to int8 in shared memory, then the prelude's INT4TensorCoreIntrinEmitter (ldmatrix of
    the int8 tiles, four mma.sync m16n8k32.s4 per 16 x 16 tile: int8 storage as int4 pairs, exact
    for the file's inputs A in [0, 4), B in {0, 1}); C = A @ B^T in int32."""
    prog = ctx.load(os.path.join(corpus, "bitnet-1.58b/kernel_benchmark/tilelang_bitnet_158_int8xint2_prefill.py"))
    kern = prog.compile("bitnet_158_int8xint2_prefill", M=M, N=N, K=K, in_dtype="int8", out_dtype="int32",
                        accum_dtype="int32", fast_decoding=True)
    a = torch.randint(0, 4, (M, K), dtype=torch.int8, device="cuda")
    b = torch.randint(0, 2, (N, K), dtype=torch.int8, device="cuda")
    qw = pack_i2_interleaved(b).cuda()
    c = torch.full((M, N), -1, dtype=torch.int32, device="cuda")
    kern(a, qw, c)
    want = (a.cpu().long() @ b.cpu().long().T)
    ok = bool(torch.equal(c.cpu().long(), want))
    RESULTS.append(ok)
    print("%s bitnet int8 x int2 prefill %dx%dx%d: %d of %d differ" % (
        "PASS" if ok else "FAIL", M, N, K, int((c.cpu().long() != want).sum()), c.numel()))


def bitnet_int8xint8(ctx, corpus, M, N, K):
    """bitnet-1.58b/kernel_benchmark/tl_int8xint8.py tl_matmul: BitBLAS's spellings (tvm.tl.language,
    bitblas.tl.*, thread_bindings=) over TileLang's MMA emitter, int8 x int8 -> int32, against
    torch's int64 matmul."""
    k = ctx.load(os.path.join(corpus, "bitnet-1.58b/kernel_benchmark/tl_int8xint8.py")).compile(
        "tl_matmul", M=M, N=N, K=K, in_dtype="int8", out_dtype="int32", accum_dtype="int32")
    a = torch.randint(-128, 128, (M, K), dtype=torch.int8, device="cuda")
    b = torch.randint(-128, 128, (N, K), dtype=torch.int8, device="cuda")
    c = torch.full((M, N), -12345, dtype=torch.int32, device="cuda")
    k(a, b, c)
    ref = a.long().cpu() @ b.long().cpu().T
    check("bitnet tl_int8xint8 %dx%dx%d" % (M, N, K), c.cpu(), ref.to(torch.int32), 0, 0)


def ladder_lop3_pack(codes):
    """(N, K) 4-bit codes -> the (N/16, K/16, 16, 8) int8 tensor a TensorCoreIntrinEmitterWithLadderTransform
    kernel (transform_kind_b=3) reads with decode_i4u_to_f16, written from that contract: in each
    16 x 16 tile, lane l (g = l // 4, t = l % 4) owns bytes [4l, 4l + 4), one 32-bit word whose
    value v (0..7, the mma B registers' order: n = g + 8 (v // 4), k = 2t + v % 2 + 8 ((v // 2) % 2))
    sits in nibble v // 2 (v even) or v // 2 + 4 (v odd), as decode_i4u_to_f16 reads them."""
    N, K = codes.shape
    tiles = codes.to(torch.int32).reshape(N // 16, 16, K // 16, 16).permute(0, 2, 1, 3)
    lane = torch.arange(32, device=codes.device)
    g, t = lane // 4, lane % 4
    nib = torch.zeros(N // 16, K // 16, 32, 8, dtype=torch.int32, device=codes.device)
    for v in range(8):
        p = v // 2 if v % 2 == 0 else v // 2 + 4
        nib[:, :, :, p] = tiles[:, :, g + 8 * (v // 4), 2 * t + v % 2 + 8 * ((v // 2) % 2)]
    packed = nib[..., 0::2] | (nib[..., 1::2] << 4)
    return packed.reshape(N // 16, K // 16, 16, 8).to(torch.uint8).view(torch.int8)


def dequant_ladder_gemm(ctx, corpus, M, N, K):
    """dequantize_gemm/example_dequant_gemm_fine_grained.py tl_matmul_with_ladder_..._int4: B as
    unsigned 4-bit weights in the Ladder layout (transform_kind_b=3: plain per-lane loads of each
    tile, no ldmatrix) decoded by the prelude's decode_i4u_to_f16, float16 accumulators; against
    float64 A @ B^T (a float16 sum rounds once per 16-deep mma: the tolerance allows for it)."""
    k = ctx.load(os.path.join(corpus, "dequantize_gemm/example_dequant_gemm_fine_grained.py")).compile(
        "tl_matmul_with_ladder_weight_only_transform_block_reduce_int4", M=M, N=N, K=K, in_dtype="float16",
        out_dtype="float16", accum_dtype="float16", transform_b=3)
    a = torch.rand(M, K, dtype=torch.float16, device="cuda")
    codes = torch.randint(0, 16, (N, K), dtype=torch.uint8, device="cuda")
    c = torch.full((M, N), float("nan"), dtype=torch.float16, device="cuda")
    k(a, ladder_lop3_pack(codes), c)
    ref = a.double() @ codes.double().T
    check("dequant Ladder int4 GEMM %dx%dx%d" % (M, N, K), c, ref, 2.0, 2e-2)


def fp4_to_f16(qb):
    """Two s1e2m1 values a byte, the low nibble first, as float16 bit patterns (exponent bias 14,
    no subnormals): the conversion of the dequantize GEMM files, written here from its bits."""
    f4 = torch.stack((qb & 0x0F, qb >> 4), dim=-1).reshape(qb.shape[0], qb.shape[1] * 2).to(torch.int32)
    bits = (f4 >> 3) * -32768 + ((((f4 >> 1) & 3) + 14) << 10) + ((f4 & 1) << 9)  # fits int16
    return bits.to(torch.int16).view(torch.float16)


def dequant_fp4_matmul(ctx, corpus, M, N, K):
    """dequantize_gemm/example_dequant_gemm_fp4_hopper.py matmul: B_local[i, j // 2] read in a
    T.Parallel nest laid out like the wgmma A operand (B_local takes that layout divided by 2,
    fragment_derive_div); it was a fully replicated 128 x 64 tile per thread before."""
    k = ctx.load(os.path.join(corpus, "dequantize_gemm/example_dequant_gemm_fp4_hopper.py")).compile(
        "matmul", M=M, N=N, K=K, in_dtype=torch.float16, out_dtype=torch.float16, accum_dtype=torch.float32,
        num_bits=4, block_M=128, block_N=128, block_K=128, num_stages=2, threads=256, split=1)
    a = torch.randn(M, K, dtype=torch.float16, device="cuda")
    qb = torch.randint(0, 256, (N, K // 2), dtype=torch.uint8, device="cuda")
    ct = k(a, qb)
    ref = fp4_to_f16(qb).float() @ a.float().T
    check("dequant fp4 GEMM %dx%dx%d" % (M, N, K), ct, ref, 5e-2, 1e-2)


def dequant_convert(ctx, corpus):
    """The dequantize files' convert tests (example_dequant_gemm_fp4_hopper.py test_convert,
    example_dequant_gemm_w4a8.py _convert_test, the manifest's rows): B_local[i, j // 2] in a
    nest with a free layout, now pairs of columns per thread instead of B_local whole."""
    prog = ctx.load(os.path.join(corpus, "dequantize_gemm/example_dequant_gemm_fp4_hopper.py"))
    k = prog.compile("test_convert", N=256, K=256, block_N=64, block_K=64, in_dtype=torch.float16)
    qb = torch.randint(0, 256, (256, 128), dtype=torch.uint8, device="cuda")
    check("dequant fp4 convert", k(qb).view(torch.int16), fp4_to_f16(qb).view(torch.int16), 0, 0)
    prog = ctx.load(os.path.join(corpus, "dequantize_gemm/example_dequant_gemm_w4a8.py"))
    k = prog.compile("_convert_test", N=512, K=512, block_N=64, block_K=64, in_dtype=torch.int8)
    qb = torch.randint(0, 256, (512, 256), dtype=torch.uint8, device="cuda")
    i4 = torch.stack((qb & 15, qb >> 4), dim=-1).reshape(512, 512).to(torch.int32)
    check("dequant int4 convert", k(qb), torch.where(i4 >= 8, i4 - 16, i4), 0, 0)


def grouped_gemm_ptr(ctx, corpus, sizes, K, N, bm, bn, bk, threads):
    """grouped_gemm/example_grouped_gemm_fwd_ptr.py: tensors of pointers (T.ptr, int64 data_ptr()s)
    and T.make_tensor views of each group's own A, B and C (padded to max(sizes) rows)."""
    prog = ctx.load(os.path.join(corpus, "grouped_gemm/example_grouped_gemm_fwd_ptr.py"))
    kern = prog.compile("grouped_gemm_ptr", batch_sizes_list=tuple(sizes), K=K, N=N, block_M=bm, block_N=bn,
                        block_K=bk, num_stages=1, threads=threads)
    mx = max(sizes)
    a = [torch.zeros(mx, K, dtype=torch.float16, device="cuda") for _ in sizes]
    for t, m in zip(a, sizes):
        t[:m].copy_(torch.randn(m, K, dtype=torch.float16, device="cuda"))
    b = [torch.randn(K, N, dtype=torch.float16, device="cuda") for _ in sizes]
    c = [torch.full((mx, N), float("nan"), dtype=torch.float16, device="cuda") for _ in sizes]
    ptrs = [torch.tensor([t.data_ptr() for t in ts], dtype=torch.int64, device="cuda") for ts in (a, b, c)]
    offs, o = [], 0
    for m in sizes:
        offs.append(o)
        o += (m + bm - 1) // bm
    kern(*ptrs, torch.tensor(offs, dtype=torch.int32, device="cuda"))
    for g, m in enumerate(sizes):
        check("grouped GEMM ptr %s K=%d N=%d group %d" % (sizes, K, N, g), c[g][:m], a[g][:m].float() @ b[g].float(),
              5e-2, 1e-2)


def nibbles(b, signed):
    """(R, C) bytes -> (R, 2C) 4-bit values, element 2k in the low nibble (torch's packing)."""
    n = torch.stack((b & 15, b >> 4), dim=-1).reshape(b.shape[0], b.shape[1] * 2).to(torch.int32)
    return torch.where(n >= 8, n - 16, n) if signed else n


def pack_nibbles(codes):
    """(R, 2C) codes 0..15 -> (R, C) uint8, element 2k in the low nibble."""
    c = (codes.to(torch.int32) & 15).reshape(codes.shape[0], -1, 2)
    return (c[..., 0] | (c[..., 1] << 4)).to(torch.uint8)


E2M1 = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]


def e2m1_codes(y):
    """float32 -> float4_e2m1fn codes, written from the format: the nearest of the 8 magnitudes
    (a tie to the even code), saturating at 6, the sign bit kept (-0.0 is code 8); NaN -> +6."""
    vals = torch.tensor(E2M1, dtype=torch.float64, device=y.device)
    a = y.double().abs().clamp(max=6.0)
    d = (a.unsqueeze(-1) - vals).abs()
    tied = d == d.min(dim=-1, keepdim=True).values
    even = tied & (torch.arange(8, device=y.device) % 2 == 0)
    code = torch.where(even.any(-1), even.int().argmax(-1), tied.int().argmax(-1))
    code = code + 8 * torch.signbit(y).int()
    return torch.where(torch.isnan(y), torch.full_like(code, 7), code)


def e2m1_values(codes):
    vals = torch.tensor(E2M1 + [-v for v in E2M1], dtype=torch.float32, device=codes.device)
    return vals[codes.long()]


def packed4(ctx):
    """tests/codegen/packed4.py: int4 / uint4 / float4_e2m1fn tensors, two elements a byte,
    through shared memory and registers (ts::ld4 / st4, nibble writes of many threads into
    the same words), 4-bit arithmetic wrapping, and float -> e2m1 rounding at every tie."""
    prog = ctx.load(os.path.join(ROOT, "tests/codegen/packed4.py"))
    a = torch.randint(0, 256, (64, 32), dtype=torch.uint8, device="cuda")
    b = torch.full((64, 32), 0xAA, dtype=torch.uint8, device="cuda")
    c = torch.full((64, 64), -99, dtype=torch.int32, device="cuda")
    prog.compile("int4_copy")(a, b, c)
    v = nibbles(a, True)
    wrap = lambda t: ((t & 15) ^ 8) - 8  # noqa: E731
    check("int4 copy: C = A * 2 (wraps in int4)", c, wrap(v * 2), 0, 0)
    check("int4 copy: B = A + 1 (packed stores)", nibbles(b, True), wrap(v + 1), 0, 0)
    special = [0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 0.24, 0.26, 5.01, 7.0, 1e30, float("inf"), -float("inf"),
               float("nan"), -0.0, 0.0, -0.1, -0.25, -2.5, -3.5, -6.0, 6.0, 1e-40]
    x = torch.randn(32, 64, dtype=torch.float32, device="cuda") * 3
    x.view(-1)[:len(special)] = torch.tensor(special, dtype=torch.float32)
    x.view(-1)[-len(special):] = -torch.tensor(special, dtype=torch.float32)
    y = torch.full((32, 32), 0xFF, dtype=torch.uint8, device="cuda")
    z = torch.full((32, 64), float("nan"), dtype=torch.float32, device="cuda")
    prog.compile("fp4_convert")(x, y, z)
    want = e2m1_codes(x)
    check("float32 -> float4_e2m1fn codes", nibbles(y, False), want, 0, 0)
    check("float4_e2m1fn -> float32", z, e2m1_values(want), 0, 0)
    u = torch.randint(0, 256, (16, 16), dtype=torch.uint8, device="cuda")
    s = torch.full((16,), -1, dtype=torch.int32, device="cuda")
    prog.compile("uint4_sum")(u, s)
    check("uint4 row sums", s, nibbles(u, False).sum(-1).to(torch.int32), 0, 0)


def int4_gemm(ctx, prog_path, func, M, N, K, signed, **params):
    """T.gemm on int4 / uint4 tiles (mma.sync m16n8k64 on packed bytes, ts::gemm_ss_mma4) against
    torch's int64 matmul of the unpacked values; A and B are packed two a byte, element 2k in
    the low nibble, as torch packs them (the corpus file's pack_int4)."""
    k = ctx.load(prog_path).compile(func, M=M, N=N, K=K, **params)
    a = torch.randint(0, 256, (M, K // 2), dtype=torch.uint8, device="cuda")
    b = torch.randint(0, 256, (N, K // 2), dtype=torch.uint8, device="cuda")
    c = torch.full((M, N), -12345, dtype=torch.int32, device="cuda")
    if signed:
        k(a.view(torch.int8), b.view(torch.int8), c)
    else:
        k(a, b, c)
    ref = nibbles(a, signed).long().cpu() @ nibbles(b, signed).long().cpu().T
    check("%s %s GEMM %dx%dx%d" % (os.path.basename(prog_path), "int4" if signed else "uint4", M, N, K), c.cpu(),
          ref.to(torch.int32), 0, 0)


def fp4_act_quant(ctx, corpus, M, N):
    """deepseek_v4/act_quant.py fp4_quant_kernel: bf16 -> float4_e2m1fn (packed bytes) with a
    power-of-two scale per 32 values, against a bit-exact reference of the same float32 steps."""
    k = ctx.load(os.path.join(corpus, "deepseek_v4/act_quant.py")).compile("fp4_quant_kernel", block_size=32, N=N)
    x = torch.randn(M, N, dtype=torch.bfloat16, device="cuda")
    quant = torch.full((M, N // 2), 0xFF, dtype=torch.uint8, device="cuda")
    scale = torch.full((M, N // 32), float("nan"), dtype=torch.float32, device="cuda")
    k(x, quant, scale)
    xf = x.float().reshape(M, N // 32, 32)
    amax = torch.maximum(xf.abs().amax(-1), torch.tensor(6 * 2.0**-126, dtype=torch.float32, device="cuda"))
    bits = (amax * torch.tensor(1 / 6, dtype=torch.float32, device="cuda")).view(torch.int32)
    e = ((bits >> 23) & 255) - 127 + ((bits & ((1 << 23) - 1)) != 0).int()
    s = ((e + 127) << 23).view(torch.float32)
    y = torch.clamp(xf / s.unsqueeze(-1), -6.0, 6.0).reshape(M, N)
    check("fp4 act quant M=%d N=%d scale" % (M, N), scale, s, 0, 0)
    check("fp4 act quant M=%d N=%d codes" % (M, N), nibbles(quant, False), e2m1_codes(y), 0, 0)


def fragment_divided(ctx):
    """tests/codegen/fragment_divided.py and fragment_divided_spread.py: packed 4-bit values read
    from a fragment at j // 2 and j >> 3 (fragment_derive_div: lanes of one thread's vector, or
    the vectors of two threads that each hold a copy), and a dequantize GEMM."""
    prog = ctx.load(os.path.join(ROOT, "tests/codegen/fragment_divided.py"))
    b = torch.randint(0, 256, (64, 64), dtype=torch.uint8, device="cuda")
    c = torch.full((64, 128), -1, dtype=torch.int32, device="cuda")
    prog.compile("unpack4")(b, c)
    want = torch.stack((b & 15, b >> 4), dim=-1).reshape(64, 128).to(torch.int32)
    check("unpack 4-bit values at j // 2", c, want, 0, 0)
    a = torch.randn(64, 128, dtype=torch.float16, device="cuda")
    b = torch.randint(0, 256, (64, 64), dtype=torch.uint8, device="cuda")
    ct = torch.full((64, 64), float("nan"), dtype=torch.float32, device="cuda")
    prog.compile("dequant_gemm")(a, b, ct)
    nib = torch.stack((b & 15, b >> 4), dim=-1).reshape(64, 128).float() - 8
    check("dequantize GEMM on B_local[i, j // 2]", ct, nib @ a.float().T, 1e-2, 1e-3)
    x = torch.randn(16, 128, dtype=torch.float32, device="cuda")
    w = torch.randint(-2**31, 2**31 - 1, (16, 16), dtype=torch.int32, device="cuda")
    y = torch.full((16, 128), float("nan"), dtype=torch.float32, device="cuda")
    ctx.load(os.path.join(ROOT, "tests/codegen/fragment_divided_spread.py")).compile("unpack8_add")(x, w, y)
    nib8 = torch.stack([(w >> (4 * s)) & 15 for s in range(8)], dim=-1).reshape(16, 128).float()
    check("unpack 4-bit values at j >> 3 over two threads", y, x + nib8, 0, 0)
def gemm_rs_warps_n(ctx, M, N, K, threads, dtype, trans_b, trans_a=False):
    """tests/codegen/gemm_rs_warps_n.py: A in registers (a cast loop writes it) on a tile too
    short for every warp along M: mma.sync warps (or wgmma warpgroups) along N too, A
    replicated over them; trans_a: A stored [K, M] in registers."""
    k = ctx.load(os.path.join(ROOT, "tests/codegen/gemm_rs_warps_n.py")).compile(
        "rs_warps_n", M=M, N=N, K=K, threads=threads, dtype=dtype, trans_A=trans_a, trans_B=trans_b)
    t = getattr(torch, dtype)
    a = torch.randn(*((K, M) if trans_a else (M, K)), dtype=t, device="cuda")
    b = torch.randn(*((N, K) if trans_b else (K, N)), dtype=t, device="cuda")
    c = torch.full((M, N), float("nan"), dtype=torch.float32, device="cuda")
    k(a, b, c)
    bf = b.double().T if trans_b else b.double()
    a2 = (a.float() * 2).to(t).double()
    a2 = a2.T if trans_a else a2
    tol = (5e-2, 1e-2) if dtype == "float32" else (1e-2, 1e-3)  # float32 runs as tf32
    check("gemm A in registers %dx%dx%d %s over %d threads%s%s" % (M, N, K, dtype, threads,
          " (A^T)" if trans_a else "", " (B^T)" if trans_b else ""), c, (a2 @ bf).float(), *tol)


def gemm_rs_wgmma_n(ctx, S, N, threads):
    """tests/codegen/gemm_rs_wgmma_n.py: wgmma RS on a 64-row tile with warpgroups along N,
    P from the first GEMM's accumulator through shared memory."""
    k = ctx.load(os.path.join(ROOT, "tests/codegen/gemm_rs_wgmma_n.py")).compile("rs_wgmma_n", S=S, N=N, threads=threads)
    q = torch.randn(64, 64, dtype=torch.float16, device="cuda") / 8
    kk = torch.randn(S, 64, dtype=torch.float16, device="cuda")
    v = torch.randn(S, N, dtype=torch.float16, device="cuda")
    o = torch.full((64, N), float("nan"), dtype=torch.float32, device="cuda")
    k(q, kk, v, o)
    p = (q.double() @ kk.double().T).half().double()
    check("wgmma A in registers 64x%dx%d over %d threads" % (N, S, threads), o, (p @ v.double()).float(), 2e-2, 2e-3)


def gemm_rs_trans_a(ctx):
    """tests/codegen/gemm_rs_trans_a.py: A in registers stored [K, M] (transpose_A), copied
    from a float32 shared tile with a conversion; 16 x 128 over 4 warps along N."""
    k = ctx.load(os.path.join(ROOT, "tests/codegen/gemm_rs_trans_a.py")).compile("rs_trans_a")
    a = torch.randn(32, 16, dtype=torch.bfloat16, device="cuda")
    b = torch.randn(32, 128, dtype=torch.bfloat16, device="cuda")
    c = torch.full((16, 128), float("nan"), dtype=torch.float32, device="cuda")
    k(a, b, c)
    check("gemm A^T in registers 16x128x32 bfloat16", c, (a.double().T @ b.double()).float(), 1e-2, 1e-3)


def indexer_bwd(ctx, corpus, H, D, topk, S, seed):
    """dsa_sparse_finetune/indexer_bwd.py: two GEMMs with A in registers on 32- and 16-row
    tiles over 4 warps (warps along N, A replicated), one of them with A stored [K, M]
    (transpose_A).  dQ and dW against a torch computation of the kernel's own math (one
    sequence; dK accumulates bf16 atomics from every token and is not compared)."""
    k = ctx.load(os.path.join(corpus, "dsa_sparse_finetune/indexer_bwd.py")).compile(
        "tl_indexer_bwd_impl", heads=H, dim=D, topk=topk)
    g = torch.Generator(device="cuda").manual_seed(seed)
    dev = "cuda"
    q = torch.randn(S, H, D, device=dev, generator=g).bfloat16()
    w = torch.randn(S, H, device=dev, generator=g).bfloat16()
    kk = torch.randn(S, D, device=dev, generator=g).bfloat16()
    attn = torch.rand(S, topk, device=dev, generator=g)
    score = torch.rand(S, topk, device=dev, generator=g)
    idx = torch.randint(-1, S, (S, topk), device=dev, generator=g, dtype=torch.int32)
    offsets = torch.tensor([0, S], dtype=torch.int32, device=dev)
    tok = torch.stack([torch.zeros(S, dtype=torch.int32, device=dev), torch.arange(S, dtype=torch.int32, device=dev)], 1)
    dq = torch.full((S, H, D), float("nan"), dtype=torch.bfloat16, device=dev)
    dw = torch.full((S, H), float("nan"), dtype=torch.bfloat16, device=dev)
    dk = torch.zeros(S, D, dtype=torch.bfloat16, device=dev)
    k(q, w, kk, attn, score, idx, offsets, tok.contiguous(), dq, dw, dk)
    sm = D ** -0.5
    qs = (q.float() * sm).bfloat16().double()
    il = idx.long()
    valid = (il > -1) & (il <= torch.arange(S, device=dev)[:, None])
    kr = torch.where(valid[..., None], kk.double()[il.clamp(min=0)], torch.zeros((), dtype=torch.float64, device=dev))
    pre = torch.einsum("std,shd->sth", kr, qs)
    logits = torch.relu(pre)
    diff = (score - attn).double()
    ref_dw = torch.einsum("st,sth->sh", diff, logits)
    dl_all = (diff[..., None] * w.double()[:, None, :]).bfloat16().double()
    ref_dq = torch.einsum("sth,std->shd", dl_all * (logits > 0), kr) * sm
    # A logit within 1e-2 of zero may land on either side of the ReLU in the kernel's float32
    # sums: such a term may or may not be in dQ, so it widens that element's tolerance.
    slack = torch.einsum("sth,std->shd", dl_all.abs() * (pre.abs() < 1e-2), kr.abs()) * sm
    check_slack("indexer_bwd dQ heads=%d dim=%d topk=%d S=%d" % (H, D, topk, S), dq, ref_dq, slack, 2e-2, 2e-2)
    check("indexer_bwd dW heads=%d dim=%d topk=%d S=%d" % (H, D, topk, S), dw, ref_dw.float(), 5e-2, 2e-2)


def fp8_indexer(ctx, corpus, S, SKV, seed):
    """deepseek_v32/fp8_lighting_indexer.py mqa_attn_return_logits (heads 32, dim 64): 512
    threads, each block's key range a T.alloc_var min / max over its 4 queries' ranges computed
    before the loop, scores read through a T.reshape view of the fp8 wgmma accumulator.  The
    file's own check only prints a difference, so this is the kernel's first independent one:
    every logit of the key blocks a query block covers against sum_h relu(q.k) w scale in
    double (entries beyond are not written: Logits is uninitialised there).  Under
    TILESCALE_PASS_CONFIGS=ts.ws_wide_consumers=True (REGP) the same with a producer warpgroup."""
    H, D, BQ, BN = 32, 64, 4, 256
    k = ctx.load(os.path.join(corpus, "deepseek_v32/fp8_lighting_indexer.py")).compile(
        "mqa_attn_return_logits", heads=H, index_dim=D)
    g = torch.Generator(device="cuda").manual_seed(seed)
    q = torch.randn(S, H, D, device="cuda", generator=g).to(torch.float8_e4m3fn)
    kv = torch.randn(SKV, D, device="cuda", generator=g).to(torch.float8_e4m3fn)
    scale = torch.rand(SKV, device="cuda", generator=g) + 0.5
    w = torch.randn(S, H, device="cuda", generator=g)
    ks = torch.randint(0, SKV // 2, (S,), device="cuda", generator=g, dtype=torch.int32)
    ke = torch.minimum(ks + torch.randint(1, SKV // 2, (S,), device="cuda", generator=g, dtype=torch.int32),
                       torch.tensor(SKV, device="cuda", dtype=torch.int32))
    logits = torch.empty(S, SKV, device="cuda")  # T.empty of dynamic shape: passed, by name
    by_name = dict(IndexQ=q.view(S * H, D), IndexK=kv, IndexKScale=scale, Logits=logits, Weights=w,
                   CuSeqLenKS=ks, CuSeqLenKE=ke)
    k(*[by_name[a.name] for a in k.args])
    score = torch.einsum("shd,nd->shn", q.double(), kv.double()).relu()
    ref = torch.einsum("shn,sh->sn", score, w.double()) * scale.double()
    written = torch.zeros(S, SKV, dtype=torch.bool, device="cuda")
    for b in range(0, S, BQ):
        lo, hi = int(ks[b:b + BQ].min()), int(ke[b:b + BQ].max())
        # A partial last block reads CuSeqLenKS / CuSeqLenKE past seq_len (the file does not
        # guard it), so its key range starts anywhere up to lo: only [lo, hi) is certain.
        end = min(SKV, lo + (hi - lo + BN - 1) // BN * BN) if b + BQ <= S else hi
        written[b:b + BQ, lo:end] = True
    # fp8 wgmma accumulates with fewer bits than fp32 (as lightning_indexer below): at 1e-2 / 1e-3,
    # 3 of 47736 logits (|err| <= 0.021) missed on an H200
    check("fp8_lighting_indexer S=%d SKV=%d" % (S, SKV), logits[written], ref[written].float(), 1e-1, 1e-2)


def blocksparse_attn(ctx, corpus, B, H, S, topk):
    """blocksparse_attention/example_tilelang_block_sparse_attn.py (64 x 64 blocks, 1 stage,
    128 threads, causal): the pipelined loop's body is `if block_mask[k] != 0:`, a guarded loop
    (ws_guard.c) on a producer warpgroup that reads the mask tensor, two blocks an SM.  Against
    softmax over the kept blocks' keys (causal) in float32."""
    D, BLK = 64, 64
    ds = S // BLK
    k = ctx.load(os.path.join(corpus, "blocksparse_attention/example_tilelang_block_sparse_attn.py")).compile(
        "blocksparse_flashattn", batch=B, heads=H, seq_len=S, dim=D, downsample_len=ds, is_causal=True)
    q, kk, v = (torch.randn(B, H, S, D, device="cuda", dtype=torch.float16) for _ in range(3))
    x = torch.randn(B, H, ds, ds, device="cuda")
    x[:, :, :, 0] = 100  # block 0 always kept: every row has a key
    mask = torch.zeros(B, H, ds, ds, dtype=torch.bool, device="cuda")
    mask.scatter_(-1, torch.topk(x, topk, dim=-1).indices, True)
    mask.tril_()
    out = k(q, kk, v, mask)
    full = torch.kron(mask.float(), torch.ones(BLK, BLK, device="cuda")).bool()
    full = full & torch.tril(torch.ones_like(full))
    sc = torch.einsum("bhsd,bhtd->bhst", q.float(), kk.float()) / D ** 0.5
    ref = torch.einsum("bhst,bhtd->bhsd", torch.softmax(sc.masked_fill(~full, float("-inf")), dim=-1), v.float())
    check("blocksparse_attn B=%d H=%d S=%d top-%d" % (B, H, S, topk), out, ref, 1e-2, 1e-2)


def sparse_gqa_decode(ctx, corpus, B, S, num_split):
    """blocksparse_attention/example_tilelang_sparse_gqa_decode_varlen_indice.py (h32 hkv8 d128,
    blocks of 32, 20% kept, random lengths, indices sorted descending with -1 padding): the
    loop's body is `i_s = block_indices[..]; if i_s >= 0:`, a guarded loop whose producer reads
    the indices itself.  Against softmax over the kept blocks within each length."""
    H, HK, D, BS = 32, 8, 128, 32
    k = ctx.load(os.path.join(corpus, "blocksparse_attention/example_tilelang_sparse_gqa_decode_varlen_indice.py")).compile(
        "flashattn", batch=B, heads=H, heads_kv=HK, dim=D, dim_v=D, block_N=BS, block_H=64, num_stages=2, threads=128)
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
    glse = torch.empty(B, H, num_split, dtype=torch.float32, device="cuda")
    part = torch.empty(B, H, num_split, D, dtype=torch.float32, device="cuda")
    out = k(q, kk, v, idx, lens, glse, part)
    keep = torch.zeros(B, HK, S // BS + 1, device="cuda")
    keep.scatter_(2, torch.where(idx >= 0, idx, S // BS).long(), 1.0)
    keep = (keep[:, :, :-1] > 0).repeat_interleave(BS, 2) & (torch.arange(S, device="cuda") < lens[:, None, None])
    sc = torch.einsum("bhgd,bshd->bhgs", q.float().view(B, HK, H // HK, D), kk.float()) / D ** 0.5
    p = torch.softmax(sc.masked_fill(~keep[:, :, None, :], float("-inf")), dim=-1)
    ref = torch.einsum("bhgs,bshd->bhgd", p, v.float()).reshape(B, H, D)
    check("sparse_gqa_decode B=%d S=%d splits=%d" % (B, S, num_split), out, ref, 1e-2, 1e-2)


def blocksparse_gemm(ctx, corpus, M, N, K):
    """blocksparse_gemm/example_blocksparse_gemm.py (its defaults: 128 x 128 x 32, 2 stages, 128
    threads), half the blocks kept: `if BlockMask[by, bx, k]:` around the copies and the GEMM,
    a guarded loop on a producer warpgroup at two blocks an SM."""
    m = ctx.load(os.path.join(corpus, "blocksparse_gemm/example_blocksparse_gemm.py"))
    k = m.compile("blocksparse_matmul", M=M, N=N, K=K, block_M=128, block_N=128, block_K=32, num_stages=2,
                  thread_num=128, enable_rasteration=True)
    a = torch.randn(M, K, device="cuda", dtype=torch.float16)
    b = torch.randn(K, N, device="cuda", dtype=torch.float16)
    mask = torch.rand(M // 128, N // 128, K // 32, device="cuda") > 0.5
    c = k(a, b, mask)
    ref = torch.zeros(M, N, device="cuda", dtype=torch.float64)
    for kb in range(K // 32):
        keep = mask[:, :, kb].repeat_interleave(128, 0).repeat_interleave(128, 1)
        ref += keep * (a[:, kb * 32:(kb + 1) * 32].double() @ b[kb * 32:(kb + 1) * 32].double())
    check("blocksparse_gemm %dx%dx%d" % (M, N, K), c, ref.float(), 5e-2, 1e-2)


def ptr_params(ctx, M, N, K):
    """tests/front/ptr_param.py: `p: T.ptr` parameters made tensors by T.make_tensor before
    T.Kernel, called with tensors (their data pointers go) and with data_ptr() ints, against
    a double matmul; m, n, k not multiples of the 64 block (partial tiles)."""
    k = ctx.load(os.path.join(ROOT, "tests/front/ptr_param.py")).compile("ptr_matmul", block=64)
    a = torch.randn(M, K, dtype=torch.float16, device="cuda")
    b = torch.randn(K, N, dtype=torch.float16, device="cuda")
    want = (a.double() @ b.double()).float()
    c = torch.full((M, N), float("nan"), dtype=torch.float32, device="cuda")
    k(a, b, c, M, N, K)
    check("T.ptr parameters given tensors %dx%dx%d" % (M, N, K), c, want, 1e-2, 1e-3)
    c2 = torch.full((M, N), float("nan"), dtype=torch.float32, device="cuda")
    k(a.data_ptr(), b.data_ptr(), c2.data_ptr(), M, N, K)
    check("T.ptr parameters given data_ptr() ints %dx%dx%d" % (M, N, K), c2, want, 1e-2, 1e-3)


def layout_follow_reads(ctx):
    """tests/codegen/fragment_read_rows.py, fragment_view_units.py, fragment_shift_window.py and
    fragment_shift_strips.py: loops that follow a reduction's row layout (fragment_from_read), a
    T.reshape view of a wgmma accumulator with a unit dim, and accumulator windows at offsets
    that change in a serial loop (acc[i + s * 16, j], acc[i, jj * 8 + j])."""
    a = torch.randn(64, 64, dtype=torch.float16, device="cuda")
    b = torch.randn(64, 64, dtype=torch.float16, device="cuda")
    ab = a.double() @ b.double()
    s = torch.full((64, 64), float("nan"), dtype=torch.float32, device="cuda")
    p = torch.full((64, 64), float("nan"), dtype=torch.float32, device="cuda")
    ctx.load(os.path.join(ROOT, "tests/codegen/fragment_read_rows.py")).compile("row_reads")(a, b, s, p)
    rmax = ab.max(1).values
    check("loop over rows x cols reading a row maximum", s, (ab - rmax[:, None]).float(), 1e-2, 1e-3)
    check("fragment written from a row maximum", p, (rmax[:, None] * 2 + torch.arange(64, device="cuda")).float(),
          2e-2, 1e-3)
    w = torch.randn(64, dtype=torch.float32, device="cuda")
    r = torch.full((64,), float("nan"), dtype=torch.float32, device="cuda")
    ctx.load(os.path.join(ROOT, "tests/codegen/fragment_view_units.py")).compile("view_rows")(a, b, w, r)
    want = ((a.double() @ b.double().T).clamp(min=0) * w.double()).sum(1)
    want[torch.arange(64, device="cuda") % 3 == 0] = -1
    check("T.reshape view (M, 1, N) of a wgmma accumulator, row sums", r, want.float(), 5e-2, 1e-3)
    a2 = torch.randn(32, 64, dtype=torch.float16, device="cuda")
    b2 = torch.randn(64, 128, dtype=torch.float16, device="cuda")
    c = torch.full((32, 128), float("nan"), dtype=torch.float32, device="cuda")
    d = torch.full((32, 128), float("nan"), dtype=torch.float32, device="cuda")
    ctx.load(os.path.join(ROOT, "tests/codegen/fragment_shift_window.py")).compile("acc_halves")(a2, b2, c, d)
    ab2 = a2.double() @ b2.double()
    check("accumulator halves acc[i + s * 16, j] read", c, ab2.float(), 1e-2, 1e-3)
    check("accumulator halves acc[i + s * 16, j] written", d, (ab2 + (torch.arange(32, device="cuda") >= 16)[:, None]).float(),
          1e-2, 1e-3)
    c = torch.full((64, 64), float("nan"), dtype=torch.float32, device="cuda")
    q = torch.full((64, 8), float("nan"), dtype=torch.float32, device="cuda")
    ctx.load(os.path.join(ROOT, "tests/codegen/fragment_shift_strips.py")).compile("acc_strips")(a, b, c, q)
    scale = (torch.arange(64, device="cuda") // 8 + 1).double()
    check("accumulator strips acc[i, jj * 8 + j] written", c, (ab * scale).float(), 5e-2, 1e-3)
    check("accumulator strips acc[i, jj * 8 + j] summed", q, (ab * ab).reshape(64, 8, 8).sum(1).float(), 1.0, 1e-3)
    q = torch.full((64, 4), float("nan"), dtype=torch.float32, device="cuda")
    ctx.load(os.path.join(ROOT, "tests/codegen/fragment_staged_reads.py")).compile("strips4")(a, b, q)
    check("accumulator strips acc[i, jj * 4 + j] read through shared memory", q, ab.reshape(64, 16, 4).sum(1).float(),
          1e-2, 1e-3)


def mhc_pre_gemm_sqrsum(ctx, corpus, n, hidden):
    """deepseek_mhc/example_mhc_pre.py mhc_pre_gemm_sqrsum_tilelang: the tf32 GEMM's A operand in
    registers is read 4 columns at a time under a serial loop (x_frag[i, jj * 4 + j]) while its
    columns repeat every 8 lanes' pairs: the reads go through a shared copy (stage_fragment.c)."""
    k = ctx.load(os.path.join(corpus, "deepseek_mhc/example_mhc_pre.py")).compile(
        "mhc_pre_gemm_sqrsum_tilelang", hc_mult3=24, hc_hidden_size=hidden)
    x = torch.randn(n, hidden, dtype=torch.bfloat16, device="cuda")
    fn = torch.randn(24, hidden, dtype=torch.float32, device="cuda")
    out = torch.full((n, 24), float("nan"), dtype=torch.float32, device="cuda")
    sq = torch.full((n,), float("nan"), dtype=torch.float32, device="cuda")
    k(x, fn, out, sq)
    xd = x.double()
    check("mhc_pre sqrsum n=%d hidden=%d" % (n, hidden), sq, (xd * xd).sum(1).float(), 1e-2, 1e-4)
    # tf32 inputs (10-bit mantissas) over `hidden` terms
    check("mhc_pre tf32 GEMM n=%d hidden=%d" % (n, hidden), out, (xd @ fn.double().T).float(), 0.1 * (hidden / 1024) ** 0.5,
          1e-2)


def mha_inference(ctx, corpus, heads, seqlen_q, seqlen_kv, dim):
    """flash_decoding/example_mha_inference.py: split-KV attention over 4 module-constant splits
    (warp-specialized TMA loops) then the combine kernel, whose 16-byte copy of each split's
    partial output lays out its row values (layout_inference ranks that copy before the fills:
    a few rows per thread, not all of them)."""
    k = ctx.load(os.path.join(corpus, "flash_decoding/example_mha_inference.py")).compile(
        "flashattn", batch=1, heads=heads, seqlen_q=seqlen_q, seqlen_kv=seqlen_kv, dim=dim, is_causal=False,
        block_M=128, block_N=64)
    q = torch.randn(1, seqlen_q, heads, dim, dtype=torch.float16, device="cuda")
    kk, v = (torch.randn(1, seqlen_kv, heads, dim, dtype=torch.float16, device="cuda") for _ in range(2))
    out = k(q, kk, v)
    s = torch.einsum("bqhd,bkhd->bhqk", q.double(), kk.double()) / dim ** 0.5
    want = torch.einsum("bhqk,bkhd->bqhd", torch.softmax(s, -1), v.double())
    check("mha_inference split-KV + combine h%d q%d kv%d d%d" % (heads, seqlen_q, seqlen_kv, dim), out, want.float(),
          2e-2, 1e-2)  # the split log-sums pass through float16 (glse)


def attention_sink_fwd(ctx, corpus, heads, seq_len, window):
    """attention_sink/example_mha_sink_bwd_bhsd.py flashattn_fwd with fewer heads than block_M
    rows: `sinks` is declared with `heads` elements and filled by a loop over block_M rows, so
    it is sized to the loop (size_registers), as TileLang's own tests of the file run it.  Each
    row's softmax counts the head's sink in its denominator; lse is log2 of that denominator."""
    k = ctx.load(os.path.join(corpus, "attention_sink/example_mha_sink_bwd_bhsd.py")).compile(
        "flashattn_fwd", batch=1, heads=heads, seq_len=seq_len, dim=128, window_size=window, dtype="float16")
    q, kk, v = (torch.randn(1, heads, seq_len, 128, dtype=torch.float16, device="cuda") for _ in range(3))
    sinks = torch.randn(heads, dtype=torch.float16, device="cuda")
    o, lse = k(q, kk, v, sinks)
    s = torch.einsum("bhqd,bhkd->bhqk", q.double(), kk.double()) / 128 ** 0.5
    i = torch.arange(seq_len, device="cuda")
    keep = (i[:, None] >= i[None, :]) & ((i[:, None] < i[None, :] + window) if window else True)
    s = s.masked_fill(~keep, float("-inf"))
    m = torch.maximum(s.amax(-1), sinks.double()[None, :, None])
    e = torch.exp(s - m[..., None])
    den = e.sum(-1) + torch.exp(sinks.double()[None, :, None] - m)
    tag = "attention sink fwd heads=%d seq=%d window=%s" % (heads, seq_len, window)
    check(tag + ": output", o, torch.einsum("bhqk,bhkd->bhqd", e / den[..., None], v.double()).float(), 2e-2, 1e-2)
    check(tag + ": lse", lse, (torch.log(den) + m).div(math.log(2)).float(), 1e-3, 1e-3)


def gqa_decode_varlen(ctx, corpus, seqlens, heads, k_heads, dim, sink):
    """flash_decoding/example_gqa_decode_varlen_logits.py: the per-block score output reads the
    final row maximum and log-sum (reductions laid out along the GEMM's rows) in a loop over
    rows x blocks of shared memory, which takes their layout (fragment_from_read).  Semantics as
    the kernel is written: its running maximum restarts at each block (the last block's maximum
    is the reference point at the end) and the sink value itself is added to the denominator."""
    batch, total, max_len = len(seqlens), sum(seqlens), max(seqlens)
    k = ctx.load(os.path.join(corpus, "flash_decoding/example_gqa_decode_varlen_logits.py")).compile(
        "flashattn", batch=batch, heads=heads, k_heads=k_heads, max_seqlen_kv=max_len, total_seqlen_k=total,
        dim=dim, has_sink=sink)
    q = torch.randn(batch, heads, dim, dtype=torch.float16, device="cuda")
    kk = torch.randn(total, k_heads, dim, dtype=torch.float16, device="cuda")
    v = torch.randn(total, k_heads, dim, dtype=torch.float16, device="cuda")
    cu = torch.tensor([sum(seqlens[:i]) for i in range(batch + 1)], dtype=torch.int32, device="cuda")
    s_aux = torch.rand(heads, dtype=torch.float32, device="cuda") + 0.5
    nblk = (max_len + 127) // 128
    o = torch.full((batch, heads, dim), float("nan"), dtype=torch.float16, device="cuda")
    sc = torch.full((batch, heads, nblk), float("nan"), dtype=torch.float16, device="cuda")
    k(q, kk, v, cu, s_aux, o, sc)
    group = heads // k_heads
    ok_o, ok_s = [], []
    for bi, L in enumerate(seqlens):
        kb = kk[cu[bi]:cu[bi] + L].double()
        vb = v[cu[bi]:cu[bi] + L].double()
        for h in range(heads):
            logit = kb[:, h // group] @ q[bi, h].double() * dim ** -0.5
            m = logit[(L - 1) // 128 * 128:].max()  # the last block's maximum
            e = torch.exp(logit - m)
            den = e.sum() + (s_aux[h].double() if sink else 0)
            ok_o.append((o[bi, h].double() - (e / den) @ vb[:, h // group]).abs().max() < 1e-2)
            nb = (L + 127) // 128
            blk = torch.stack([e[j * 128:(j + 1) * 128].max() for j in range(nb)]) / den
            ok_s.append(((sc[bi, h, :nb].double() - blk).abs() < 2e-3 + 1e-2 * blk).all())
    tag = "GQA varlen decode seqlens=%s heads=%d/%d sink=%s" % (seqlens, heads, k_heads, sink)
    RESULTS.append(all(bool(x) for x in ok_o))
    print("%s %s: output" % ("PASS" if RESULTS[-1] else "FAIL", tag))
    RESULTS.append(all(bool(x) for x in ok_s))
    print("%s %s: block scores" % ("PASS" if RESULTS[-1] else "FAIL", tag))


def fp8_block_sparse_mqa(ctx, corpus, seq_len, heads=64, dim=128, kv_block=128, topk=8):
    """dsa_hisa/block_sparse_mqa_fp8.py: the wgmma accumulator seen through T.reshape as
    [block_N, 1, heads] (the view shares the accumulator's layout, fragment_reshape), reduced to
    logits[block_N, 1] that loops index as logits[i, 0]."""
    k = ctx.load(os.path.join(corpus, "dsa_hisa/block_sparse_mqa_fp8.py")).compile(
        "fp8_native_block_sparse_mqa_attn_return_logits", heads=heads, index_dim=dim, kv_block_size=kv_block,
        topk=topk, seq_len=seq_len, seq_len_kv=seq_len)
    q = torch.randn(seq_len * heads, dim, device="cuda").to(torch.float8_e4m3fn)
    kk = torch.randn(seq_len, dim, device="cuda").to(torch.float8_e4m3fn)
    ks = torch.rand(seq_len, dtype=torch.float32, device="cuda") + 0.5
    nblocks = seq_len // kv_block
    blk = torch.randint(0, nblocks, (seq_len, topk), dtype=torch.int64, device="cuda")
    w = torch.randn(seq_len, heads, dtype=torch.float32, device="cuda")
    pos = torch.arange(seq_len, dtype=torch.int32, device="cuda")
    ks_lo = torch.zeros(seq_len, dtype=torch.int32, device="cuda")
    ke = pos + 1
    out = torch.full((seq_len, topk * kv_block), float("nan"), dtype=torch.float32, device="cuda")
    k(q, kk, ks, blk, w, ks_lo, ke, out)
    kabs = blk[..., None] * kv_block + torch.arange(kv_block, device="cuda")  # [S, topk, B]
    kf = kk.to(torch.float64) * ks.double()[:, None]
    qf = q.to(torch.float64).reshape(seq_len, heads, dim)
    every = torch.einsum("mhd,kd->mhk", qf, kf).clamp(min=0)  # [S, H, S_kv]
    every = (every * w.double()[:, :, None]).sum(1)  # [S, S_kv]
    want = torch.gather(every, 1, kabs.reshape(seq_len, -1)).reshape(kabs.shape)
    valid = (kabs >= ks_lo.long()[:, None, None]) & (kabs < ke.long()[:, None, None])
    want = want.masked_fill(~valid, float("-inf")).reshape(seq_len, -1)
    got = out.double()
    same_inf = bool(((got == float("-inf")) == (want == float("-inf"))).all())
    fin = want != float("-inf")
    check("fp8 block-sparse MQA logits seq_len=%d (-inf pattern %s)" % (seq_len, "equal" if same_inf else "DIFFERS"),
          got[fin] if same_inf else got, want[fin] if same_inf else want, 1e-1, 1e-2)  # fp8 wgmma accumulation, as below


def lightning_indexer(ctx, corpus, seq_len, seq_len_kv, heads=32, dim=64, pool=False):
    """deepseek_v32/fp8_lighting_indexer.py mqa_attn_return_logits (pool: dsa_hisa/pool_mqa_fp8.py,
    the same kernel over pooled keys): the wgmma scores [256 x 128] seen through T.reshape as
    [256, block_Q, heads] (the column dim split at a warpgroup boundary, fragment_reshape; the
    view once had a layout of its own over the same registers).  Each block of 128 // heads
    queries writes the logits of the union of their key ranges."""
    if pool:
        k = ctx.load(os.path.join(corpus, "dsa_hisa/pool_mqa_fp8.py")).compile(
            "pool_mqa_attn_return_logits_fp8", heads=heads, index_dim=dim, seq_len=seq_len, seq_len_blocked_kv=seq_len_kv)
    else:
        k = ctx.load(os.path.join(corpus, "deepseek_v32/fp8_lighting_indexer.py")).compile(
            "mqa_attn_return_logits", heads=heads, index_dim=dim)
    q = torch.randn(seq_len * heads, dim, device="cuda").to(torch.float8_e4m3fn)
    kk = torch.randn(seq_len_kv, dim, device="cuda").to(torch.float8_e4m3fn)
    ks = torch.rand(seq_len_kv, dtype=torch.float32, device="cuda") + 0.5
    w = torch.randn(seq_len, heads, dtype=torch.float32, device="cuda")
    pos = torch.arange(seq_len, device="cuda")
    lo = (pos * seq_len_kv // seq_len // 2).to(torch.int32)
    hi = torch.clamp(lo + 300 + pos % 7 * 50, max=seq_len_kv).to(torch.int32)
    out = torch.full((seq_len, seq_len_kv), float("nan"), dtype=torch.float32, device="cuda")
    if pool:
        k(q, kk, ks, out, w, lo, hi)
    else:
        k(q, kk, ks, w, lo, hi, out)
    sc = torch.einsum("mhd,kd->mhk", q.to(torch.float64).reshape(seq_len, heads, dim), kk.to(torch.float64)).clamp(min=0)
    want = (sc * w.double()[:, :, None]).sum(1) * ks.double()[None, :]
    blk = pos // (128 // heads)  # block_Q queries share one key range
    nb = int(blk.max()) + 1
    blo = torch.full((nb,), seq_len_kv, dtype=torch.int64, device="cuda").scatter_reduce(0, blk, lo.long(), "amin")
    bhi = torch.zeros(nb, dtype=torch.int64, device="cuda").scatter_reduce(0, blk, hi.long(), "amax")
    kpos = torch.arange(seq_len_kv, device="cuda")
    written = (kpos[None, :] >= blo[blk][:, None]) & (kpos[None, :] < bhi[blk][:, None])
    check("%s logits seq_len=%d seq_len_kv=%d" % ("pool MQA fp8" if pool else "lightning indexer", seq_len, seq_len_kv),
          out[written], want[written].float(), 1e-1, 1e-2)  # fp8 wgmma accumulates with fewer bits than fp32


def sinkhorn_bwd_cg(ctx, corpus, seqlen, n=16):
    """deepseek_mhc/example_mhc_bwd.py sinkhorn_bwd_implicit_cg: the conjugate-gradient scalars
    (row dot products reduced from shared memory) are read by loops over rows x streams that
    write fragments (fragment_from_read).  Reference: the CG system [[I, R], [R^T, I]] x = b
    solved exactly (pseudo-inverse in double, without the (1, -1) direction a doubly stochastic R
    leaves free and res does not see), res = (dR - x1 - x2^T) * R."""
    k = ctx.load(os.path.join(corpus, "deepseek_mhc/example_mhc_bwd.py")).compile("sinkhorn_bwd_implicit_cg", n_stream=n)
    m = torch.rand(seqlen, n, n, dtype=torch.float64, device="cuda") * 4
    r = torch.softmax(m, -1)
    for _ in range(50):  # nearly doubly stochastic, as sinkhorn's output
        r = r / r.sum(-2, keepdim=True)
        r = r / r.sum(-1, keepdim=True)
    dr = torch.randn(seqlen, n, n, dtype=torch.float64, device="cuda")
    r, dr = r.float(), dr.float()
    res = torch.full((seqlen, n, n), float("nan"), dtype=torch.float32, device="cuda")
    k(r, dr, res)
    r, dr = r.double(), dr.double()
    eye = torch.eye(n, dtype=torch.float64, device="cuda").expand(seqlen, n, n)
    a = torch.cat([torch.cat([eye, r], -1), torch.cat([r.mT, eye], -1)], -2)
    rdr = r * dr
    b = torch.cat([rdr.sum(-1), rdr.sum(-2)], -1)
    x = (torch.linalg.pinv(a, rtol=1e-6, hermitian=True) @ b.unsqueeze(-1)).squeeze(-1)
    want = (dr - x[:, :n, None] - x[:, None, n:]) * r
    check("sinkhorn bwd implicit CG seqlen=%d n=%d" % (seqlen, n), res, want, 2e-3, 1e-2)


def gemm_rs_int8(ctx, M, N, K, threads, dtype):
    """tests/codegen/gemm_rs_int8.py: an 8-bit A in registers (written by a T.Parallel loop)
    times K-major B in shared memory: mma.sync m16n8k32 with K permuted in both operands
    (gemm.cuh gemm_rs_8); int8/uint8 accumulate int32 (exact), float8 float32."""
    fp8 = dtype == "float8_e4m3"
    k = ctx.load(os.path.join(ROOT, "tests/codegen/gemm_rs_int8.py")).compile(
        "rs_int8", M=M, N=N, K=K, threads=threads, dtype=dtype, accum="float32" if fp8 else "int32")
    if fp8:
        a = torch.randn(M, K, device="cuda").to(torch.float8_e4m3fn)
        b = torch.randn(N, K, device="cuda").to(torch.float8_e4m3fn)
        c = torch.full((M, N), float("nan"), dtype=torch.float32, device="cuda")
        want = a.double() @ b.double().T
    else:
        lo, hi, t = (-128, 128, torch.int8) if dtype == "int8" else (0, 256, torch.uint8)
        a = torch.randint(lo, hi, (M, K), dtype=t, device="cuda")
        b = torch.randint(lo, hi, (N, K), dtype=t, device="cuda")
        c = torch.full((M, N), -1, dtype=torch.int32, device="cuda")
        want = (a >> 1).double() @ b.double().T
    k(a, b, c)
    check("gemm %s A in registers %dx%dx%d over %d threads" % (dtype, M, N, K, threads), c.double(), want,
          1e-3 if fp8 else 0, 1e-5 if fp8 else 0)


def gemm_b_fragment(ctx, M, N, K, threads, dtype, trans_b=False, a_frag=False):
    """tests/codegen/gemm_b_fragment.py: B in registers (2 * B written by a T.Parallel loop),
    staged through a shared copy before the GEMM (plan_gemm, pass_stage_gemm_b), multiplied
    twice into one accumulator (the second GEMM reads the same copy): C = 2 A (2 B)."""
    k = ctx.load(os.path.join(ROOT, "tests/codegen/gemm_b_fragment.py")).compile(
        "b_fragment", M=M, N=N, K=K, threads=threads, dtype=dtype, trans_B=trans_b, a_frag=a_frag)
    t = getattr(torch, dtype)
    a = torch.randn(M, K, dtype=t, device="cuda")
    b = torch.randn(*((N, K) if trans_b else (K, N)), dtype=t, device="cuda")
    c = torch.full((M, N), float("nan"), dtype=torch.float32, device="cuda")
    k(a, b, c)
    bf = (b.float() * 2).to(t).double()
    bf = bf.T if trans_b else bf
    tol = (5e-2, 1e-2) if dtype == "float32" else (1e-2, 1e-3)  # float32 runs as tf32
    check("gemm B in registers %dx%dx%d %s over %d threads%s%s" % (M, N, K, dtype, threads,
          " (B^T)" if trans_b else "", " (A in registers too)" if a_frag else ""), c, (2 * (a.double() @ bf)).float(), *tol)


def dequant_w4a8(ctx, corpus, M, N, K, bm=32, bn=32, bk=128, stages=1, threads=128):
    """dequantize_gemm/example_dequant_gemm_w4a8.py matmul_int8xint4: B dequantized from int4
    to int8 in registers and multiplied as the GEMM's A (8-bit A in registers, gemm_rs_8) with
    the int8 activations as B; Ct = B_int4 @ A^T, exact in int32."""
    k = ctx.load(os.path.join(corpus, "dequantize_gemm/example_dequant_gemm_w4a8.py")).compile(
        "matmul_int8xint4", M=M, N=N, K=K, in_dtype="int8", out_dtype="int32", accum_dtype="int32", num_bits=4,
        block_M=bm, block_N=bn, block_K=bk, num_stages=stages, threads=threads)
    a = torch.randint(-128, 128, (M, K), dtype=torch.int8, device="cuda")
    qb = torch.randint(0, 256, (N, K // 2), dtype=torch.uint8, device="cuda")
    i4 = torch.stack((qb & 15, qb >> 4), dim=-1).reshape(N, K).to(torch.int32)
    b = torch.where(i4 >= 8, i4 - 16, i4)
    ct = k(a, qb)
    check("dequant w4a8 GEMM %dx%dx%d, %dx%dx%d tiles, %d stages, %d threads" % (M, N, K, bm, bn, bk, stages, threads),
          ct.double(), b.double() @ a.double().T, 0, 0)


def kda_bwd_intra_ref(q, k, g, beta, dAqk, dAkk, dq, dk, dg, S, BT, DK, block_DK, absolute):
    """The KDA intra-chunk backward (chunk_bwd_intra.py) in float64, derived from the kernel's
    definition: within each chunk of BT tokens, for row r and key position d,
      dq2[r] = sum_{s <= r} dAqk[r, s] k[s] 2^(g[r] - g[s]),   dk2' likewise with dAkk,
      dkt[r] = sum_{u >= r} (dAqk[u, r] q[u] + dAkk[u, r] beta[u] k[u]) 2^(g[u] - g[r]),
      db[kb, r] = sum over the DK block kb of dk2' k,   dk2 = dk2' beta,
      outputs dq + dq2, dk2 + dk + dkt, db, q dq2 + (dk2 - dkt) k + dg.
    absolute: the same sums of absolute terms (a bound for the rounding slack)."""
    f = (lambda x: x.double().abs()) if absolute else (lambda x: x.double())
    B, _, H, _ = q.shape
    NT = (S + BT - 1) // BT
    pad = NT * BT - S

    def chunks(x):  # [B, S, H, ...] -> [B, NT, H, BT, ...], zero rows past S
        x = torch.nn.functional.pad(f(x), (0, 0) * (x.dim() - 3) + (0, 0, 0, pad))
        return x.view(B, NT, BT, H, *x.shape[3:]).transpose(2, 3)

    qc, kc, gc, bc = chunks(q), chunks(k), g.double(), chunks(beta)
    gc = torch.nn.functional.pad(gc, (0, 0, 0, 0, 0, pad)).view(B, NT, BT, H, DK).transpose(2, 3)
    aq, ak = chunks(dAqk), chunks(dAkk)  # [B, NT, H, BT(row), BT(col)]
    low = torch.tril(torch.ones(BT, BT, dtype=torch.float64, device=q.device))
    dq2, dk2p, dkt = (torch.zeros_like(qc) for _ in range(3))
    for n in range(NT):
        e = torch.exp2(gc[:, n, :, :, None, :] - gc[:, n, :, None, :, :])  # [B, H, r, s, D]: 2^(g[r] - g[s])
        dq2[:, n] = torch.einsum("bhrs,bhrsd,bhsd->bhrd", aq[:, n] * low, e, kc[:, n])
        dk2p[:, n] = torch.einsum("bhrs,bhrsd,bhsd->bhrd", ak[:, n] * low, e, kc[:, n])
        w = aq[:, n].transpose(-1, -2)[..., None] * qc[:, n, :, None] + \
            ak[:, n].transpose(-1, -2)[..., None] * (bc[:, n, :, None, :, None] * kc[:, n, :, None])  # [B, H, r, u, D]
        dkt[:, n] = torch.einsum("bhru,bhrud->bhrd", low.T.expand(B, H, BT, BT), w * e.transpose(2, 3))
    sign = 1.0 if absolute else -1.0
    dk2 = dk2p * bc[..., None]
    db = (dk2p * kc).reshape(B, NT, H, BT, DK // block_DK, block_DK).sum(-1)  # [B, NT, H, BT, NK]
    dg2 = qc * dq2 + (dk2 + sign * dkt) * kc

    def unchunk(x):  # [B, NT, H, BT, ...] -> [B, S, H, ...]
        return x.transpose(2, 3).reshape(B, NT * BT, H, *x.shape[4:])[:, :S]

    return (unchunk(dq2) + f(dq), unchunk(dk2 + dkt) + f(dk), unchunk(db).permute(3, 0, 1, 2),
            unchunk(dg2) + f(dg))


def kda_bwd_intra(ctx, corpus, B, S, H, DK=128, block_DK=64):
    """kda/chunk_bwd_intra.py: two GEMMs whose B (kg_fragment) is in registers, staged through
    a shared copy each (pass_stage_gemm_b), beside GEMMs with A stored [K, M]; float32 (tf32
    GEMMs).  Inputs as the file's prepare_input (torch.randn); checked against a float64
    reference with a slack of 5e-3 times the sums of absolute terms (tf32 operands)."""
    BT = 64
    k = ctx.load(os.path.join(corpus, "kda/chunk_bwd_intra.py")).compile(
        "tilelang_chunk_bwd_intra", B=B, S=S, H=H, DK=DK, input_dtype=torch.float32, output_dtype=torch.float32,
        accum_dtype=torch.float32, gate_dtype=torch.float32, state_dtype=torch.float32, chunk_size=BT,
        block_DK=block_DK, threads=128, num_stages=0)
    r = lambda *shape: torch.randn(*shape, dtype=torch.float32, device="cuda")  # noqa: E731
    q, kk, g, beta = r(B, S, H, DK), r(B, S, H, DK), r(B, S, H, DK), r(B, S, H)
    dAqk, dAkk, dq, dk, db, dg = r(B, S, H, BT), r(B, S, H, BT), r(B, S, H, DK), r(B, S, H, DK), r(B, S, H), r(B, S, H, DK)
    got = k(q, kk, g, beta, dAqk, dAkk, dq, dk, db, dg)
    args = (q, kk, g, beta, dAqk, dAkk, dq, dk, dg, S, BT, DK, block_DK)
    want, mag = kda_bwd_intra_ref(*args, False), kda_bwd_intra_ref(*args, True)
    for name, x, w, m in zip(("dq", "dk", "db", "dg"), got, want, mag):
        check_slack("kda chunk_bwd_intra B=%d S=%d H=%d %s" % (B, S, H, name), x, w, 5e-3 * m, 1e-4, 0)


def semi_sparse(M, K, sparse_groups):
    """A random [M, K] float16 matrix with 2:4 sparsity along K (two zeros in every group of
    4, at random places); with sparse_groups, every 5th group keeps one value and every 7th
    none, which the compressor must still encode (its swap and all-zero paths)."""
    a = torch.randn(M, K // 4, 4, device="cuda")
    drop = torch.rand(M, K // 4, 4, device="cuda").argsort(-1)[..., :2]
    a.scatter_(-1, drop, 0.0)
    if sparse_groups:
        g = torch.arange(K // 4, device="cuda")
        keep = a.ne(0).float().cumsum(-1).eq(1) & a.ne(0)  # the first kept value of each group
        a = torch.where((g % 5 == 1).view(1, -1, 1), a * keep, a)
        a = torch.where((g % 7 == 3).view(1, -1, 1), torch.zeros_like(a), a)
    return a.view(M, K).half()


def compress_2to4(ctx, corpus, a, meta_dtype):
    """sparse_utils.py's own compressor kernel on a ([S, K], S dynamic): the outputs are passed
    in (a dynamic shape), poisoned first."""
    M, K = a.shape
    comp = ctx.load(os.path.join(corpus, "gemm_sp/sparse_utils.py")).compile(
        "_compress_fn", D=K, dtype=a.dtype, meta_dtype=meta_dtype, block_M=16, block_K=min(1024, K), elem_per_thread=32)
    bits = torch.empty((), dtype=meta_dtype).element_size() * 8
    a_sp = torch.full((M, K // 2), float("nan"), dtype=a.dtype, device="cuda")
    e = torch.full((M, K // bits), -1, dtype=meta_dtype, device="cuda")
    comp(a, a_sp, e)
    return a_sp, e


def decode_2to4(sp, meta, K):
    """The dense matrix a compressed A ([M, K/2]) and its metadata (4 bits a group of 4, two
    2-bit indices, packed little-endian into meta's integer type) stand for, decoded here
    independently; also whether every group's two indices ascend and differ (mma.sp's
    ordered metadata)."""
    M = sp.shape[0]
    bits = meta.element_size() * 8
    m = meta.cpu().long() & ((1 << bits) - 1)
    nib = torch.stack([(m >> (4 * i)) & 0xF for i in range(bits // 4)], -1).view(M, K // 4)
    i0, i1 = nib & 3, nib >> 2
    dense = torch.zeros(M, K // 4, 4, dtype=torch.float64)
    vals = sp.cpu().double().view(M, K // 4, 2)
    dense.scatter_(-1, i0.unsqueeze(-1), vals[..., :1])
    dense.scatter_add_(-1, i1.unsqueeze(-1), vals[..., 1:])
    return dense.view(M, K), bool((i0 < i1).all())


def gemm_sp(ctx, corpus, M, N, K, e_dtype, accum, bm, bn, bk, threads, stages=2):
    """gemm_sp: the file's own compressor (sparse_utils.py _compress_fn) on a 2:4-sparse A,
    checked by decoding its output here, then example_gemm_sp.py's T.gemm_sp kernel (mma.sp
    m16n8k32) against the dense product in float64."""
    a = semi_sparse(M, K, True)
    a_sp, e = compress_2to4(ctx, corpus, a, e_dtype)
    dense, ordered = decode_2to4(a_sp, e, K)
    ok = torch.equal(dense, a.cpu().double()) and ordered
    RESULTS.append(ok)
    print("%s gemm_sp compress %dx%d meta=%s: decoded %s, indices %s" % (
        "PASS" if ok else "FAIL", M, K, e_dtype, "equal" if torch.equal(dense, a.cpu().double()) else "DIFFERENT",
        "ascending" if ordered else "NOT ascending"))
    kern = ctx.load(os.path.join(corpus, "gemm_sp/example_gemm_sp.py")).compile(
        "matmul_sp_fp16", M=M, N=N, K=K, accum_dtype=accum, e_dtype=e_dtype, block_M=bm, block_N=bn, block_K=bk,
        num_stages=stages, thread_num=threads, policy=0, enable_rasterization=True)
    b = torch.randn(K, N, dtype=torch.float16, device="cuda")
    c = kern(a_sp, e, b)
    want = a.double() @ b.double()
    tol = (2e-2, 1e-2) if accum == torch.float32 else (0.25, 2e-2)
    check("gemm_sp %dx%dx%d meta=%s acc=%s tile %dx%dx%d/%d" % (M, N, K, e_dtype, accum, bm, bn, bk, threads), c,
          want, *tol)


def gemm_sp_codegen(ctx, corpus, M, N, K, dtype, trans_b, bn):
    """tests/codegen/gemm_sp_mma.py with bfloat16 (or float16) and B stored [N, K] (ldmatrix
    without .trans): A compressed by the corpus compressor, C against the float64 product."""
    a = semi_sparse(M, K, False).to(dtype)
    a_sp, e = compress_2to4(ctx, corpus, a, torch.int16)
    kern = ctx.load(os.path.join(ROOT, "tests/codegen/gemm_sp_mma.py")).compile(
        "gemm_sp_kernel", M=M, N=N, K=K, dtype=dtype, trans_B=trans_b, block_N=bn)
    b = torch.randn(N, K, dtype=dtype, device="cuda") if trans_b else torch.randn(K, N, dtype=dtype, device="cuda")
    c = kern(a_sp, e, b)
    want = a.double() @ (b.double().T if trans_b else b.double())
    check("gemm_sp codegen test %dx%dx%d %s trans_B=%s" % (M, N, K, dtype, trans_b), c, want, 3e-2, 1e-2)


def gemm_sp_staged(ctx, corpus, M, N, K, trans_a, a_frag, dtype):
    """tests/codegen/gemm_sp_staged.py: T.gemm_sp with A and E stored transposed (transpose_A /
    transpose_E) or A in registers, staged into row-major shared tiles by the front end."""
    a = semi_sparse(M, K, False).to(dtype)
    a_sp, e = compress_2to4(ctx, corpus, a, torch.int16)
    if trans_a:
        a_sp, e = a_sp.T.contiguous(), e.T.contiguous()
    kern = ctx.load(os.path.join(ROOT, "tests/codegen/gemm_sp_staged.py")).compile(
        "gemm_sp_staged", M=M, N=N, K=K, trans_A=trans_a, a_frag=a_frag, dtype=dtype)
    b = torch.randn(K, N, dtype=dtype, device="cuda")
    c = kern(a_sp, e, b)
    check("gemm_sp staged %dx%dx%d %s trans_A=%s A in registers=%s" % (M, N, K, dtype, trans_a, a_frag), c,
          a.double() @ b.double(), 3e-2, 1e-2)


def gemm_sp8(ctx, corpus, M, N, K, dtype, e_dtype):
    """tests/codegen/gemm_sp8.py: T.gemm_sp on int8 (small integers: exact) and float8 (values
    rounded to the type first), A compressed by the corpus compressor, B [N, K]."""
    pattern = semi_sparse(M, K, False).ne(0)
    if dtype == torch.int8:
        a = (torch.randint(-3, 4, (M, K), device="cuda") * pattern).to(torch.int8)
        b = torch.randint(-3, 4, (N, K), device="cuda").to(torch.int8)
    else:
        a = (torch.randn(M, K, device="cuda") * pattern).to(dtype)
        b = torch.randn(N, K, device="cuda").to(dtype)
    comp = ctx.load(os.path.join(corpus, "gemm_sp/sparse_utils.py")).compile(
        "_compress_fn", D=K, dtype=dtype, meta_dtype=e_dtype, block_M=16, block_K=min(1024, K), elem_per_thread=32)
    bits = torch.empty((), dtype=e_dtype).element_size() * 8
    a_sp = torch.zeros((M, K // 2), dtype=dtype, device="cuda")
    e = torch.full((M, K // bits), -1, dtype=e_dtype, device="cuda")
    comp(a, a_sp, e)
    accum = "int32" if dtype == torch.int8 else "float32"
    kern = ctx.load(os.path.join(ROOT, "tests/codegen/gemm_sp8.py")).compile(
        "gemm_sp8", M=M, N=N, K=K, dtype=dtype, accum=accum, e_dtype=e_dtype)
    c = kern(a_sp, e, b)
    want = a.double() @ b.double().T
    tol = (0, 0) if dtype == torch.int8 else (1e-2, 1e-3)
    check("gemm_sp %s %dx%dx%d meta %s" % (dtype, M, N, K, e_dtype), c.double(), want, *tol)


def cluster_copy(ctx, M, N_full, N_tile, barrier=True, dtype="float32"):
    """tests/codegen/cluster_copy.py: block 0's shared tile copied into block 1's (T.copy_cluster:
    one bulk copy, or element stores through mapa'd addresses), block 1 writes it out."""
    k = ctx.load(os.path.join(ROOT, "tests/codegen/cluster_copy.py")).compile(
        "cluster_copy", M=M, N_full=N_full, N_tile=N_tile, barrier=barrier, dtype=dtype)
    t = getattr(torch, dtype)
    a = torch.randn(M, N_tile, device="cuda").to(t)
    b = torch.full((M, N_tile), float("nan"), device="cuda").to(t)
    k(a, b)
    check("copy_cluster %dx%d of %dx%d %s%s" % (M, N_tile, M, N_full, dtype, "" if barrier else " (T.cluster_sync)"),
          b, a, 0, 0)


def cluster_multicast(ctx, iters, slots):
    """tests/codegen/cluster_copy.py: T.tma_copy(..., cluster_mask=0b11) multicasts every tile
    into both blocks of the cluster; each writes what it received."""
    k = ctx.load(os.path.join(ROOT, "tests/codegen/cluster_copy.py")).compile("multicast", iters=iters, slots=slots)
    a = torch.randn(iters, 64, 64, device="cuda")
    b = torch.full((2, iters, 64, 64), float("nan"), device="cuda")
    k(a, b)
    check("tma_copy multicast to 2 blocks, %d tiles over %d slots" % (iters, slots), b, torch.stack([a, a]), 0, 0)


def cluster_multicast_sync(ctx, M, N, bm, bn, mask):
    """tests/codegen/cluster_copy.py multicast_sync: in every cluster of 4 blocks along x, the
    ranks of `mask` hold the tile of its lowest rank, the others their own."""
    k = ctx.load(os.path.join(ROOT, "tests/codegen/cluster_copy.py")).compile(
        "multicast_sync", M=M, N=N, block_M=bm, block_N=bn, cluster_mask=mask)
    a = torch.randn(M, N, device="cuda").half()
    b = torch.full((M, N), float("nan"), device="cuda").half()
    k(a, b)
    want = a.clone()
    lowest = (mask & -mask).bit_length() - 1
    for x in range(N // bn):
        r = x % 4
        if mask >> r & 1:
            src = x - r + lowest
            want[:, x * bn:(x + 1) * bn] = a[:, src * bn:(src + 1) * bn]
    check("copy_cluster multicast mask %s over %dx%d tiles of %dx%d" % (bin(mask), bm, bn, M, N), b, want, 0, 0)


def source_kernel(ctx, N):
    """tests/codegen/source_kernel.py: the user's CUDA kernel (T.CUDASourceCodeKernel) launched
    over the prim_func's tensors and its dynamic N."""
    k = ctx.load(os.path.join(ROOT, "tests/codegen/source_kernel.py")).compile("source_kernel")
    a = torch.randn(N, device="cuda")
    b = torch.full((N,), float("nan"), device="cuda")
    k(a, b)
    check("CUDASourceCodeKernel N=%d" % N, b, 3 * a, 0, 0)


def gemm_fma(ctx, M, N, K, dtype, accum, trans_a=False, trans_b=False, a_in_regs=False):
    """tests/codegen/gemm_fma.py: T.gemm on types without tensor-core instructions (float64,
    8-bit operands not K-major) computed with FMA in a pipelined K loop, against torch."""
    k = ctx.load(os.path.join(ROOT, "tests/codegen/gemm_fma.py")).compile(
        "gemm_fma", M=M, N=N, K=K, dtype=dtype, accum=accum, trans_A=trans_a, trans_B=trans_b, a_in_regs=a_in_regs)
    t, ta = getattr(torch, dtype), getattr(torch, accum)
    if t.is_floating_point:
        a, b = torch.randn(K, M, device="cuda").to(t), torch.randn(K, N, device="cuda").to(t)
    else:
        a, b = torch.randint(-8, 8, (K, M), device="cuda").to(t), torch.randint(-8, 8, (K, N), device="cuda").to(t)
    a = a if trans_a else a.T.contiguous()  # A stored [K, M] when transposed, else [M, K]
    b = b.T.contiguous() if trans_b else b
    c = torch.zeros(M, N, dtype=ta, device="cuda")
    k(a, b, c)
    ad = a.double().T if trans_a else a.double()
    bd = b.double().T if trans_b else b.double()
    check("gemm FMA fallback %dx%dx%d %s -> %s%s%s%s" % (M, N, K, dtype, accum, " A^T" if trans_a else "",
          " B^T" if trans_b else "", " A in registers" if a_in_regs else ""), c.double(), ad @ bd, 1e-9, 1e-9)


def atomic_order(ctx, N, dtype):
    """tests/codegen/atomic_order.py: T.atomic_add with memory_order= on a tile (vector atomics
    from a global tensor), an element and return_prev: the sums, the count, and the previous
    values of the return_prev counter, which must be 0, 2, 4, ... in some order."""
    k = ctx.load(os.path.join(ROOT, "tests/codegen/atomic_order.py")).compile("atomic_order", N=N, dtype=dtype)
    t = getattr(torch, dtype)
    x = torch.randn(N, device="cuda").to(t)
    out0 = torch.randn(N, device="cuda").to(t)
    out = out0.clone()
    count = torch.zeros(2, dtype=torch.int32, device="cuda")
    prev = torch.full((N // 64,), -1, dtype=torch.int32, device="cuda")
    k(x, out, count, prev)
    check("atomic_add memory_order tile %d %s" % (N, dtype), out, (out0.float() + x.float()).to(t), 0, 0)
    blocks = N // 64
    ok = count.tolist() == [blocks, 2 * blocks] and sorted(prev.tolist()) == list(range(0, 2 * blocks, 2))
    RESULTS.append(ok)
    print("%s atomic_add memory_order element and return_prev over %d blocks: count %s, previous %s" % (
        "PASS" if ok else "FAIL", blocks, count.tolist(), sorted(prev.tolist())))


def cast_reference(x, dst):
    """x (any float tensor) converted as ts::cast does: widened exactly to float32, then rounded
    to nearest even; into fp8 out-of-range magnitudes and infinities saturate to the largest
    finite value (CUDA's __NV_SATFINITE), NaN stays NaN."""
    f = x.float()
    if dst in (torch.float8_e4m3fn, torch.float8_e5m2):
        big = torch.finfo(dst).max
        f = torch.where(torch.isnan(f), f, f.clamp(-big, big))
    return f.to(dst)


def same_values(got, want):
    """Element-wise identity of two float tensors: equal values with the same sign (so -0 and +0
    differ), or both NaN."""
    g, w = got.double(), want.double()
    return ((g == w) & (torch.signbit(g) == torch.signbit(w))) | (torch.isnan(g) & torch.isnan(w))


def vector_casts(ctx, M, through_fragments):
    """tests/codegen/vector_cast.py: every pair of float32 / float16 / bfloat16 / float8_e4m3 /
    float8_e5m2, converted two elements at a time (PairConv in common.cuh), on random values at
    several scales and on NaN, infinities, signed zeros and magnitudes past fp8's range."""
    prog = ctx.load(os.path.join(ROOT, "tests/codegen/vector_cast.py"))
    types = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16,
             "float8_e4m3": torch.float8_e4m3fn, "float8_e5m2": torch.float8_e5m2}
    special = torch.tensor([float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1e-9, -3e-5,
                            448.0, 449.0, 500.0, -6e4, 57344.0, 1e5, 65504.0, 70000.0, 0.5], device="cuda")
    for sname, st in types.items():
        base = torch.randn(M, device="cuda") * torch.tensor([1e-3, 1.0, 30.0, 3e3], device="cuda").repeat(M // 4)
        base[:special.numel()] = special
        x = cast_reference(base, st)
        for dname, dt in types.items():
            if dname == sname:
                continue
            k = prog.compile("vector_cast", M=M, src=sname, dst=dname, through_fragments=through_fragments)
            y = torch.empty(M, dtype=dt, device="cuda")
            k(x, y)
            same = same_values(y, cast_reference(x, dt))
            ok = bool(same.all())
            RESULTS.append(ok)
            print("%s vector cast %s -> %s, %d elements%s: %d of %d differ" % (
                "PASS" if ok else "FAIL", sname, dname, M, " through fragments" if through_fragments else "",
                int((~same).sum()), M))


def selected(cases, only):
    """The cases whose line in main() names one of the comma-separated words of `only`
    (a function name such as convolution, or any other text of the line)."""
    if not only:
        return cases
    words = [w for w in only.split(",") if w]
    return [run for run in cases if any(w in inspect.getsource(run) for w in words)]


def main():
    args = sys.argv[1:]
    only = None
    if len(args) == 3 and args[1] == "--only":
        only = args.pop(2)
        args.pop(1)
    if len(args) != 1 or not os.path.isdir(args[0]):
        sys.exit("usage: regress_gpu.py CORPUS_DIR [--only WORD,WORD...] (CORPUS_DIR: the corpus's tilelang/examples "
                 "folder; --only: the cases whose line names one of the words)")
    corpus = args[0]
    torch.manual_seed(0)
    ctx = tilescale.Context()
    cases = [
        lambda: layernorm(ctx, corpus, 64, 1024, 1),
        lambda: layernorm(ctx, corpus, 256, 4096, 2),
        lambda: layernorm(ctx, corpus, 4096, 8192, 1),  # the file's own sizes
        lambda: grouped_gemm_bwd(ctx, corpus, [64, 128], 1024, 1024, 64, 128, 64, 2, 256),
        lambda: grouped_gemm_bwd(ctx, corpus, [64, 128], 8192, 8192, 64, 128, 64, 2, 256),  # the file's
        lambda: grouped_gemm_bwd(ctx, corpus, [256, 64, 192], 1024, 512, 64, 128, 64, 2, 256),
        lambda: convolution(ctx, corpus, 128, 128, 64, 64, 128, 3, 1, 1, 1, 64, 128, 32, 3, 256),  # the file's main()
        lambda: convolution(ctx, corpus, 3, 64, 17, 19, 96, 3, 2, 1, 1, 64, 128, 32, 3, 256),
        lambda: convolution(ctx, corpus, 2, 12, 9, 9, 64, 3, 1, 2, 2, 64, 64, 32, 2, 128),
        lambda: convolution(ctx, corpus, 4, 128, 32, 32, 256, 3, 1, 1, 1, 128, 256, 64, 3, 256, True),
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
        lambda: chunk_cumsum(ctx, corpus, 2, 1024, 4, 64, True, False, False),  # the manifest's row
        lambda: chunk_cumsum(ctx, corpus, 2, 1024, 4, 64, False, True, True),
        lambda: chunk_cumsum(ctx, corpus, 1, 512, 3, 32, False, False, True, 128),
        lambda: ptx_cp_async_rows(ctx, 512),
        lambda: ptx_wait_group_rows(ctx, 512),
        lambda: ptx_wait_group_rows(ctx, 128),  # the loop's prefetch never runs
        lambda: minference_vs(ctx, corpus, 2, 512, 200, 8, 0),
        lambda: minference_vs(ctx, corpus, 1, 1024, 1000, 200, 1),  # the manifest's vertical/slash sizes
        lambda: thread_return_exit(ctx, 1024, 0),
        lambda: safe_memory_rows(ctx, 64, 1000),
        lambda: clean_and_maintain_logits(ctx, corpus, 300, 5000),
        lambda: thread_return_exit(ctx, 1024, 1),
        lambda: gemm_clear_accum_cond(ctx, 256, 256, 512),
        lambda: gemv_alloc_reducer(ctx, corpus, 1024, 1024),  # the manifest's row
        lambda: gemv_alloc_reducer(ctx, corpus, 384, 2048),
        lambda: reducer_rows(ctx, 64, 64),
        lambda: gemv_tvm_allreduce(ctx, corpus, 1024, 1024, 2, 32),  # the manifest's row
        lambda: gemv_tvm_allreduce(ctx, corpus, 768, 4096, 4, 16),
        lambda: gemv_tvm_allreduce(ctx, corpus, 768, 4096, 2, 16),  # strided lanes: a shuffle butterfly
        lambda: thread_allreduce(ctx),
        lambda: ldst_bits(ctx),
        lambda: atomic_vec_slices(ctx),
        lambda: prefetch_loads_gemm(ctx, 256, 256, 512),
        lambda: prefetch_loads_gemm(ctx, 192, 384, 1024),
        lambda: prefetch_loads_gemm(ctx, 256, 256, 512, "ts.prefetch_next_loads"),
        lambda: prefetch_loads_gemm(ctx, 192, 384, 1024, "ts.prefetch_next_loads"),
        lambda: prefetch_loads_gemm(ctx, 256, 256, 512, "ts.ws_acc_overlap"),
        lambda: prefetch_loads_gemm(ctx, 192, 384, 64, "ts.ws_acc_overlap"),
        lambda: rand_uint(ctx, corpus, 1024, 42),  # the manifest's row and the file's own tests
        lambda: rand_uint(ctx, corpus, 512, 123),
        lambda: rng_dp4a(ctx, 256),
        lambda: rng_dists(ctx, 256),
        lambda: math_functions(ctx, 256, "float32"),
        lambda: math_functions(ctx, 256, "float16"),
        lambda: gemm_window_atoms(ctx),
        lambda: fragment_prefix_window(ctx, 4),
        lambda: fragment_prefix_window(ctx, 24),
        lambda: mhc_post(ctx, corpus, 64, 2560),
        lambda: mhc_post(ctx, corpus, 4096, 7168),  # the largest of the file's sizes
        lambda: mha_bwd(ctx, corpus, "example_mha_bwd_bshd.py", False, 2, 2, 256, 64, False),
        lambda: mha_bwd(ctx, corpus, "example_mha_bwd_bshd.py", False, 1, 3, 192, 64, True),
        lambda: mha_bwd(ctx, corpus, "example_mha_bwd_bshd.py", False, 1, 2, 128, 128, False),
        lambda: mha_bwd(ctx, corpus, "example_mha_bwd_bhsd.py", True, 2, 2, 256, 64, True),
        lambda: private_rows(ctx, 1000),
        lambda: private_rows(ctx, 77),
        lambda: fill_local(ctx),
        lambda: thread_branch_gemm(ctx, 256, 256, 512),
        lambda: thread_branch_gemm(ctx, 384, 256, 1024),
        lambda: thread_branch_chain(ctx, 64),
        lambda: thread_branch_chain(ctx, 1024),
        lambda: window_loop_atoms(ctx),
        lambda: replicated_write_nest(ctx, 64),
        lambda: replicated_write_nest(ctx, 200),
        lambda: bitonic_sort(ctx, 256, 128),
        lambda: bitonic_sort(ctx, 128, 128),
        lambda: bitonic_sort(ctx, 2048, 256),
        lambda: xor_double_buffer(ctx, 256, 4),
        lambda: xor_double_buffer(ctx, 1024, 5),
        lambda: topk_selector(ctx, corpus, 8, 8192),
        lambda: topk_selector(ctx, corpus, 64, 32768),  # the file's test sizes
        lambda: flashmla_ws(ctx, corpus, 4, 128, 1024),
        lambda: flashmla_ws(ctx, corpus, 132, 128, 8192),  # the manifest's row
        lambda: gemm_persistent(ctx, corpus, 8192, 8192, 8192, True),  # the file's own sizes
        lambda: gemm_persistent(ctx, corpus, 8192, 8192, 8192, False),
        lambda: gemm_persistent(ctx, corpus, 1000, 1000, 1000, True),
        lambda: gemm_persistent(ctx, corpus, 1000, 1000, 1000, False),
        lambda: gemm_persistent(ctx, corpus, 1536, 2048, 512, True),
        lambda: gemm_persistent(ctx, corpus, 1536, 2048, 512, False),
        lambda: gemm_persistent(ctx, corpus, 4096, 1024, 2048, True),  # 128 tiles: 4 blocks idle
        lambda: fragment_divided(ctx),
        lambda: packed4(ctx),
        lambda: int4_gemm(ctx, os.path.join(corpus, "gemm_int4/example_tilelang_gemm_int4.py"), "matmul_nt_int4",
                          1024, 1024, 1024, True, block_M=128, block_N=128, block_K=64, threads=128),  # the manifest's row
        lambda: int4_gemm(ctx, os.path.join(corpus, "gemm_int4/example_tilelang_gemm_int4.py"), "matmul_nt_int4",
                          256, 384, 512, True, block_M=128, block_N=128, block_K=64, threads=128),
        lambda: int4_gemm(ctx, os.path.join(ROOT, "tests/codegen/gemm_int4.py"), "gemm_int4", 192, 128, 512, True,
                          dtype="int4"),  # M not a multiple of block_M: guarded copies and stores
        lambda: int4_gemm(ctx, os.path.join(ROOT, "tests/codegen/gemm_int4.py"), "gemm_int4", 256, 192, 256, False,
                          dtype="uint4"),
        lambda: fp4_act_quant(ctx, corpus, 256, 1024),  # the file's test size
        lambda: fp4_act_quant(ctx, corpus, 100, 512),
        lambda: grouped_gemm_ptr(ctx, corpus, [16, 33, 64], 128, 96, 32, 32, 32, 128),  # the file's test
        lambda: grouped_gemm_ptr(ctx, corpus, [64, 128, 256], 4096, 4096, 64, 128, 64, 256),  # the manifest's row
        lambda: dequant_convert(ctx, corpus),
        lambda: dequant_ladder_gemm(ctx, corpus, 256, 1024, 512),  # the manifest's row
        lambda: dequant_ladder_gemm(ctx, corpus, 128, 256, 256),
        lambda: dequant_fp4_matmul(ctx, corpus, 256, 256, 256),  # the file's main()
        lambda: dequant_fp4_matmul(ctx, corpus, 256, 512, 1024),
        lambda: gemm_rs_warps_n(ctx, 32, 64, 64, 128, "float16", False),
        lambda: gemm_rs_warps_n(ctx, 32, 128, 64, 256, "bfloat16", True),
        lambda: gemm_rs_warps_n(ctx, 16, 64, 32, 128, "float16", True),
        lambda: gemm_rs_warps_n(ctx, 32, 32, 256, 128, "float32", True),  # mhc_pre's tf32 GEMM shape
        lambda: gemm_rs_warps_n(ctx, 32, 64, 64, 128, "float32", False),
        lambda: gemm_rs_warps_n(ctx, 16, 128, 32, 128, "bfloat16", False, True),  # indexer_bwd's dQ GEMM
        lambda: gemm_rs_warps_n(ctx, 32, 64, 64, 128, "float16", True, True),
        lambda: gemm_rs_warps_n(ctx, 32, 64, 64, 128, "float32", True, True),
        lambda: gemm_rs_warps_n(ctx, 64, 128, 64, 256, "float16", False, False),  # wgmma RS, 2 warpgroups along N
        lambda: gemm_rs_warps_n(ctx, 64, 128, 64, 256, "bfloat16", True, True),   # the same with A stored [K, M]
        lambda: gemm_rs_warps_n(ctx, 128, 128, 64, 128, "float16", False, True),  # wgmma RS, 1 warpgroup, A^T
        lambda: gemm_rs_trans_a(ctx),
        lambda: indexer_bwd(ctx, corpus, 16, 128, 64, 256, 1),  # the manifest's row
        lambda: indexer_bwd(ctx, corpus, 64, 64, 128, 300, 2),
        lambda: fp8_indexer(ctx, corpus, 64, 1000, 3),
        lambda: fp8_indexer(ctx, corpus, 30, 700, 4),  # a partial last query block
        lambda: blocksparse_attn(ctx, corpus, 1, 4, 1024, 6),
        lambda: sparse_gqa_decode(ctx, corpus, 2, 2048, 4),
        lambda: blocksparse_gemm(ctx, corpus, 1024, 1024, 1024),
        lambda: gemm_rs_wgmma_n(ctx, 64, 256, 256),
        lambda: gemm_rs_wgmma_n(ctx, 96, 192, 384),
        lambda: mla_decode(ctx, corpus, 4, 128, 1024, num_split=2),
        lambda: mla_decode_persistent(ctx, corpus, 4, 128, 1024),
        lambda: mla_decode_persistent(ctx, corpus, 128, 128, 8192),  # the manifest's row
        lambda: layout_follow_reads(ctx),
        lambda: ptr_params(ctx, 200, 136, 72),
        lambda: ptr_params(ctx, 256, 256, 256),
        lambda: gqa_decode_varlen(ctx, corpus, [1000, 257, 4096], 32, 8, 128, True),
        lambda: gqa_decode_varlen(ctx, corpus, [8192], 32, 8, 128, False),  # the manifest's row
        lambda: mha_inference(ctx, corpus, 32, 128, 8192, 128),  # main()'s sizes
        lambda: mha_inference(ctx, corpus, 4, 256, 2048, 64),
        lambda: attention_sink_fwd(ctx, corpus, 1, 512, None),  # TileLang's test: heads=1
        lambda: attention_sink_fwd(ctx, corpus, 1, 512, 128),
        lambda: attention_sink_fwd(ctx, corpus, 8, 1024, 128),
        lambda: fp8_block_sparse_mqa(ctx, corpus, 1024),  # the manifest's row
        lambda: fp8_block_sparse_mqa(ctx, corpus, 512, topk=4),
        lambda: sinkhorn_bwd_cg(ctx, corpus, 64),
        lambda: sinkhorn_bwd_cg(ctx, corpus, 1000),
        lambda: mhc_pre_gemm_sqrsum(ctx, corpus, 4096, 5120),  # the manifest's hidden size
        lambda: mhc_pre_gemm_sqrsum(ctx, corpus, 1000, 1280),
        lambda: lightning_indexer(ctx, corpus, 256, 2048),
        lambda: lightning_indexer(ctx, corpus, 1000, 4000),
        lambda: lightning_indexer(ctx, corpus, 512, 1024, heads=64, dim=128, pool=True),
        lambda: gemm_intrinsics(ctx, corpus, 4096, 4096, 4096, "float16", "float16", "float32"),  # the file's main()
        lambda: gemm_intrinsics(ctx, corpus, 256, 256, 128, "float16", "float16", "float32"),
        lambda: gemm_intrinsics(ctx, corpus, 384, 256, 512, "float16", "float32", "float32"),
        lambda: gemm_intrinsics(ctx, corpus, 384, 256, 512, "int8", "int32", "int32"),
        lambda: mma_emitter_gemm(ctx, 128, 192, 96, False, True, "float16"),
        lambda: mma_emitter_gemm(ctx, 128, 128, 64, True, False, "float16"),
        lambda: mma_emitter_gemm(ctx, 192, 128, 128, False, False, "bfloat16"),
        lambda: mma_emitter_gemm(ctx, 64, 128, 64, True, True, "bfloat16"),
        lambda: bitnet_prefill(ctx, corpus, 256, 256, 256),  # the file's own test
        lambda: bitnet_prefill(ctx, corpus, 128, 384, 512),
        lambda: gemm_rs_int8(ctx, 32, 32, 128, 128, "int8"),
        lambda: gemm_rs_int8(ctx, 32, 32, 128, 128, "uint8"),
        lambda: gemm_rs_int8(ctx, 64, 64, 64, 128, "int8"),  # every warp along M (the wgmma-sized tile: mma.sync)
        lambda: gemm_rs_int8(ctx, 128, 32, 256, 256, "int8"),
        lambda: gemm_rs_int8(ctx, 32, 64, 64, 128, "float8_e4m3"),
        lambda: gemm_b_fragment(ctx, 16, 64, 16, 128, "float32"),  # chunk_bwd_intra's shape
        lambda: gemm_b_fragment(ctx, 32, 64, 32, 128, "float32", True, True),
        lambda: gemm_b_fragment(ctx, 16, 64, 16, 128, "float16"),
        lambda: gemm_b_fragment(ctx, 16, 64, 16, 128, "bfloat16", True),
        lambda: gemm_b_fragment(ctx, 128, 128, 64, 128, "float16"),  # wgmma from the staged tile
        lambda: gemm_b_fragment(ctx, 64, 128, 64, 128, "float16", False, True),  # wgmma RS with a staged B
        lambda: dequant_w4a8(ctx, corpus, 128, 256, 256),  # the file's main()
        lambda: dequant_w4a8(ctx, corpus, 512, 512, 512),  # the manifest's row
        lambda: dequant_w4a8(ctx, corpus, 512, 512, 512, 64, 128, 256, 2, 512),  # autotune configs
        lambda: dequant_w4a8(ctx, corpus, 512, 256, 1024, 128, 128, 128, 2, 128),
        lambda: kda_bwd_intra(ctx, corpus, 1, 256, 2),
        lambda: kda_bwd_intra(ctx, corpus, 2, 200, 3),  # a partial last chunk and sub-chunk
        lambda: kda_bwd_intra(ctx, corpus, 1, 8192, 8),  # the manifest's row
        lambda: gemm_sp(ctx, corpus, 256, 512, 512, torch.int16, torch.float32, 128, 256, 128, 256),  # the manifest's tile
        lambda: gemm_sp(ctx, corpus, 128, 128, 256, torch.int16, torch.float32, 128, 128, 64, 128),  # main()'s tile
        lambda: gemm_sp(ctx, corpus, 192, 120, 512, torch.int8, torch.float32, 64, 40, 64, 128, 3),  # odd n8 blocks
        lambda: gemm_sp(ctx, corpus, 128, 256, 256, torch.int32, torch.float16, 64, 128, 128, 128),
        lambda: gemm_sp_codegen(ctx, corpus, 256, 192, 512, torch.bfloat16, True, 96),
        lambda: gemm_sp_staged(ctx, corpus, 128, 128, 256, True, False, torch.float16),
        lambda: gemm_sp_staged(ctx, corpus, 128, 192, 512, False, True, torch.float16),
        lambda: gemm_sp_staged(ctx, corpus, 192, 128, 256, True, True, torch.bfloat16),
        lambda: gemm_sp8(ctx, corpus, 128, 128, 256, torch.int8, torch.int32),
        lambda: gemm_sp8(ctx, corpus, 192, 128, 512, torch.int8, torch.int16),
        lambda: gemm_sp8(ctx, corpus, 128, 192, 256, torch.float8_e4m3fn, torch.int32),
        lambda: gemm_sp8(ctx, corpus, 128, 128, 512, torch.float8_e5m2, torch.int16),
        lambda: gemm_sp_codegen(ctx, corpus, 128, 128, 256, torch.float16, True, 64),
        lambda: gemm_sp_codegen(ctx, corpus, 128, 128, 256, torch.bfloat16, False, 64),
        lambda: bitnet_int8xint8(ctx, corpus, 256, 256, 256),
        lambda: bitnet_int8xint8(ctx, corpus, 512, 256, 1024),
        lambda: vector_casts(ctx, 1024, False),
        lambda: source_kernel(ctx, 1000),
        lambda: gemm_fma(ctx, 128, 96, 80, "float64", "float64"),
        lambda: gemm_fma(ctx, 64, 64, 64, "float64", "float64", True, True),
        lambda: gemm_fma(ctx, 96, 64, 128, "int8", "int32", True, False),
        lambda: gemm_fma(ctx, 64, 96, 64, "float64", "float64", False, True, True),
        lambda: source_kernel(ctx, 4096),
        lambda: cluster_copy(ctx, 8, 64, 64),  # one bulk copy
        lambda: cluster_copy(ctx, 8, 64, 32),  # element stores, then a remote arrival
        lambda: cluster_copy(ctx, 8, 64, 32, False),  # element stores ordered by T.cluster_sync
        lambda: cluster_copy(ctx, 1, 127, 127),  # 508 bytes: not a bulk copy
        lambda: cluster_copy(ctx, 16, 128, 128, True, "float16"),
        lambda: cluster_multicast(ctx, 8, 4),
        lambda: cluster_multicast_sync(ctx, 1024, 1024, 128, 64, 0b0011),  # TileLang's demo
        lambda: cluster_multicast_sync(ctx, 512, 1024, 64, 64, 0b1110),
        lambda: atomic_order(ctx, 256, "float16"),
        lambda: atomic_order(ctx, 1024, "float32"),
        lambda: atomic_order(ctx, 512, "bfloat16"),
        lambda: vector_casts(ctx, 256, True),
        lambda: vector_casts(ctx, 384, False),  # 3 per thread: the element-wise path
    ]
    cases = selected(cases, only)
    if not cases:
        sys.exit("regress_gpu.py: no case matches --only %s" % only)
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
