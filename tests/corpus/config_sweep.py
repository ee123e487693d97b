"""config_sweep.py — configurations beyond each example's own, drawn at random (fixed seed)
from the tuning spaces TileLang's examples and tuners use, on the GPU against torch: a
configuration the autotuner may pick must compile and compute the right thing.

    python3 tests/corpus/config_sweep.py CORPUS_DIR [N]   (CORPUS_DIR = .../corpus/tilelang/examples;
                                                          N cases per family, default 24)

Families: the GEMM of gemm/example_gemm_autotune.py (its 288-point space: block_M/N 64-256,
block_K 32/64, 0-3 stages, 128/256 threads, rasterization; sizes that are not multiples of
the tiles), flash_attention/example_mha_fwd_bhsd.py and example_gqa_fwd_bshd.py (tiles,
stages, threads, causal, head dim, sequence lengths off the tile; at least 16 rows of the
tile per warp, the rule of gqa_fwd_bshd's own get_configs: 64-row tiles over 8 warps are
refused with a layout-conflict error, as outside that space), deepseek_mla/example_mla_decode.py
(block_N, splits, heads, batch) and gemm_fp8/example_tilelang_gemm_fp8.py (tiles, e4m3/e5m2,
sizes off the tile), and those of more_cases (convolution, dequant w4a8, grouped GEMM backward,
MLA paged decode, FlashAttention backward, layernorm, register-operand GEMMs).  One PASS / FAIL / ERROR
line per case (ERROR: it did not compile or launch), then "N passed, N failed"."""
import os
import random
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import regress_gpu as rg  # noqa: E402
from regress_gpu import tilescale  # noqa: E402


def gemm(ctx, M, N, K, bm, bn, bk, stages, threads, raster):
    k = ctx.load(os.path.join(HERE, "sweep_gemm.py")).compile(
        "matmul", M=M, N=N, K=K, block_M=bm, block_N=bn, block_K=bk, num_stages=stages, thread_num=threads,
        enable_rasteration=raster)
    a = torch.randn(M, K, dtype=torch.bfloat16, device="cuda")
    b = torch.randn(N, K, dtype=torch.bfloat16, device="cuda")
    c = k(a, b)
    rg.check("gemm %dx%dx%d tile %dx%dx%d st=%d thr=%d raster=%s" % (M, N, K, bm, bn, bk, stages, threads, raster),
             c, a.float() @ b.float().T, 5e-2, 2e-2)


def mla_decode(ctx, corpus, batch, heads, seqlen, block_N, num_split, dim=512, pe_dim=64):
    prog = ctx.load(os.path.join(corpus, "deepseek_mla/example_mla_decode.py"))
    scale = (dim + pe_dim) ** -0.5
    kern = prog.compile("flashattn", batch=batch, heads=heads, kv_head_num=1, seqlen_kv=seqlen, dim=dim,
                        pe_dim=pe_dim, block_N=block_N, block_H=64, num_split=num_split, softmax_scale=scale)
    q = torch.randn(batch, heads, dim, dtype=torch.float16, device="cuda")
    q_pe = torch.randn(batch, heads, pe_dim, dtype=torch.float16, device="cuda")
    kv = torch.randn(batch, seqlen, 1, dim, dtype=torch.float16, device="cuda")
    k_pe = torch.randn(batch, seqlen, 1, pe_dim, dtype=torch.float16, device="cuda")
    out = kern(q, q_pe, kv, k_pe)
    query = torch.cat([q, q_pe], -1).float()
    key = torch.cat([kv, k_pe], -1)[:, :, 0].float()
    p = torch.softmax(query @ key.transpose(1, 2) * scale, -1)
    rg.check("mla_decode b=%d heads=%d kv=%d block_N=%d split=%d" % (batch, heads, seqlen, block_N, num_split), out,
             p @ kv[:, :, 0].float(), 1e-2, 1e-2)


def gemm_fp8(ctx, corpus, M, N, K, bm, bn, bk, dtype):
    """gemm_fp8/example_tilelang_gemm_fp8.py: the output is fp8 too, so the reference is rounded
    to it and one step of its rounding (1/8 relative for e4m3, 1/4 for e5m2) is allowed."""
    prog = ctx.load(os.path.join(corpus, "gemm_fp8/example_tilelang_gemm_fp8.py"))
    k = prog.compile("matmul", M=M, N=N, K=K, block_M=bm, block_N=bn, block_K=bk, dtype=dtype)
    tdt = getattr(torch, dtype)
    a = (torch.randn(M, K, device="cuda") * 0.5).to(tdt)
    b = (torch.randn(N, K, device="cuda") * 0.5).to(tdt)
    c = k(a, b)
    ref = a.float() @ b.float().T
    rg.check("gemm_fp8 %s %dx%dx%d tile %dx%dx%d" % (dtype, M, N, K, bm, bn, bk), c.float(), ref, 0.1,
             0.13 if dtype == "float8_e4m3fn" else 0.26)


def cases(ctx, corpus, n, rnd):
    out = []
    for _ in range(n):
        cfg = (rnd.choice([64, 128, 256]), rnd.choice([64, 128, 256]), rnd.choice([32, 64]), rnd.choice([0, 1, 2, 3]),
               rnd.choice([128, 256]), rnd.choice([True, False]))
        M, N, K = rnd.choice([(1000, 768, 520), (512, 512, 512), (257, 1000, 192)])
        out.append(("gemm %s %s" % ((M, N, K), cfg), lambda M=M, N=N, K=K, cfg=cfg: gemm(ctx, M, N, K, *cfg)))
    for _ in range(n):  # the examples' own rule (gqa_fwd_bshd's get_configs): 16 rows or more per warp
        bm, bn, st = rnd.choice([64, 128]), rnd.choice([32, 64, 128]), rnd.choice([1, 2, 3])
        th = rnd.choice([128, 256]) if bm == 128 else 128
        causal, D, S = rnd.choice([False, True]), rnd.choice([64, 128]), rnd.choice([1000, 1024, 333])
        a = (2, 3, S, D, causal, bm, bn, st, th)
        out.append(("mha_fwd_bhsd %s" % (a,), lambda a=a: rg.mha_fwd_bhsd(ctx, corpus, *a)))
    for _ in range(n // 2):
        bm, bn, st = rnd.choice([64, 128]), rnd.choice([64, 128]), rnd.choice([1, 2])
        th = rnd.choice([128, 256]) if bm == 128 else 128
        causal, groups = rnd.choice([False, True]), rnd.choice([4, 8])
        a = (1, 16, 1024, 128, causal, groups, bm, bn, st, th)
        out.append(("gqa_fwd_bshd %s" % (a,), lambda a=a: rg.gqa_fwd_bshd(ctx, corpus, *a)))
    for _ in range(n // 2):
        a = (rnd.choice([1, 4]), rnd.choice([64, 128]), rnd.choice([1024, 2048]), rnd.choice([32, 64]),
             rnd.choice([1, 2, 4]))
        out.append(("mla_decode %s" % (a,), lambda a=a: mla_decode(ctx, corpus, *a)))
    for _ in range(n // 2):
        a = (rnd.choice([512, 1000]), rnd.choice([512, 768]), rnd.choice([512, 1024]), rnd.choice([64, 128]),
             rnd.choice([64, 128, 256]), rnd.choice([64, 128]), rnd.choice(["float8_e4m3fn", "float8_e5m2"]))
        out.append(("gemm_fp8 %s" % (a,), lambda a=a: gemm_fp8(ctx, corpus, *a)))
    out += more_cases(ctx, corpus, n, rnd)
    return out


def more_cases(ctx, corpus, n, rnd):
    """The convolution's autotune space (both files), dequantize_gemm w4a8's, grouped GEMM
    backward tiles, MLA paged decode (block_N, page size, splits, ragged lengths), the
    FlashAttention backward, layernorm rows per block and register-operand GEMMs."""
    out = []
    for _ in range(n // 2):
        shape = rnd.choice([(2, 64, 17, 19, 96, 3, 2, 1, 1), (4, 128, 32, 32, 128, 3, 1, 1, 1), (2, 24, 9, 9, 64, 3, 1, 2, 2),
                            (3, 64, 14, 14, 64, 1, 1, 1, 0)])
        tiles = (rnd.choice([64, 128, 256]), rnd.choice([64, 128, 256]), rnd.choice([32, 64]), rnd.choice([0, 1, 2, 3]),
                 rnd.choice([128, 256]), rnd.choice([False, True]))
        a = shape + tiles
        out.append(("convolution %s" % (a,), lambda a=a: rg.convolution(ctx, corpus, *a)))
    for _ in range(n // 4):
        a = (rnd.choice([256, 512]), rnd.choice([256, 384]), rnd.choice([256, 512]), rnd.choice([64, 128]),
             rnd.choice([64, 128]), rnd.choice([128, 256]), rnd.choice([1, 2]), rnd.choice([128, 256, 512]))
        out.append(("dequant_w4a8 %s" % (a,), lambda a=a: rg.dequant_w4a8(ctx, corpus, *a)))
    for _ in range(n // 4):
        bk = rnd.choice([32, 64])
        sizes = [bk * rnd.choice([1, 2, 3, 4]) for _ in range(rnd.choice([1, 2, 3]))]
        a = (sizes, rnd.choice([256, 512]), rnd.choice([256, 384]), rnd.choice([64, 128]), rnd.choice([64, 128]), bk,
             rnd.choice([1, 2, 3]), rnd.choice([128, 256]))
        out.append(("grouped_gemm_bwd %s" % (a,), lambda a=a: rg.grouped_gemm_bwd(ctx, corpus, *a)))
    # the file reads a split's pages at offset (k * block_N) % block_size from the split's
    # first page, right only when each split starts on a page: one split, or block_N pages
    # (with 32-row blocks in 64-row pages, the second split of a 518-token sequence starts at
    # row 288 and reads rows 256.. of its page: wrong in any system)
    for _ in range(n // 4):
        b = rnd.choice([2, 4])
        lens = [rnd.randint(1, 2048) for _ in range(b)]
        bn, split = rnd.choice([32, 64]), rnd.choice([1, 2, 4])
        page = rnd.choice([p for p in (32, 64, 128) if p >= bn]) if split == 1 else bn
        a = (b, 128, lens, bn, 64, page, split)
        out.append(("mla_decode_paged %s" % (a,), lambda a=a: rg.mla_decode_paged(ctx, corpus, *a)))
    for _ in range(n // 4):
        fname, bhsd = rnd.choice([("example_mha_bwd_bshd.py", False), ("example_mha_bwd_bhsd.py", True)])
        a = (fname, bhsd, rnd.choice([1, 2]), rnd.choice([1, 3]), rnd.choice([128, 192, 256, 320]), rnd.choice([64, 128]),
             rnd.choice([False, True]))
        out.append(("mha_bwd %s" % (a,), lambda a=a: rg.mha_bwd(ctx, corpus, *a)))
    for _ in range(n // 4):
        a = (rnd.choice([16, 64, 256, 1000]), rnd.choice([512, 1024, 4096]), rnd.choice([1, 2, 4]))
        out.append(("layernorm %s" % (a,), lambda a=a: rg.layernorm(ctx, corpus, *a)))
    for _ in range(n // 4):
        dt = rnd.choice(["float16", "bfloat16", "float32"])
        a = (rnd.choice([16, 32, 64]), rnd.choice([32, 64, 128]), rnd.choice([32, 64]), rnd.choice([128, 256]), dt,
             rnd.choice([False, True]), rnd.choice([False, True]))
        out.append(("gemm_rs_warps_n %s" % (a,), lambda a=a: rg.gemm_rs_warps_n(ctx, *a)))
    return out


def main():
    if len(sys.argv) not in (2, 3) or not os.path.isdir(sys.argv[1]):
        sys.exit("usage: config_sweep.py CORPUS_DIR [N]")
    n = int(sys.argv[2]) if len(sys.argv) == 3 else 24
    torch.manual_seed(0)
    ctx = tilescale.Context()
    errors = 0
    for name, run in cases(ctx, sys.argv[1], n, random.Random(19)):
        try:
            run()
        except Exception as e:  # a configuration that does not compile or launch
            errors += 1
            print("ERROR %s: %s" % (name, str(e).strip().splitlines()[0][:300]))
    print("%d passed, %d failed, %d errors" % (sum(rg.RESULTS), len(rg.RESULTS) - sum(rg.RESULTS), errors))


if __name__ == "__main__":
    main()
