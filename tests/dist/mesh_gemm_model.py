"""mesh_gemm_model.py — checks TileScale's Cannon and SUMMA example kernels, compiled by this
project, against a model of what each kernel's program moves and computes, on a square mesh of
ranks (`tilescale launch -n 4 python3 tests/dist/mesh_gemm_model.py --example cannon`).

    python3 mesh_gemm_model.py --example cannon|summa [--corpus DIR] [--M 2048 --N 2048 --K 2048]

Why a model and not A·Bᵀ: both example files check their result against the true product with
allclose(rtol=atol=1e-2), which they cannot meet on a mesh of more than one rank whatever runs
them (see KNOWN in run_corpus_dist.py):
  - both kernels keep C in fp16 between mesh steps (C is loaded, accumulated in fp32, stored
    back in fp16 at every step), so an entry whose partial sums are large but whose total is
    near zero carries an error of a few fp16 ulps of the partial sum;
  - SUMMA's kernel broadcasts B along the mesh row, as it does A, and computes step 0 on each
    rank's own tiles, so it does not compute A·Bᵀ at all for a mesh of 2×2 or more.
The model replays each program's data movement exactly (which rank's buffer reaches which rank
at which step) with the same fp16 round trip of C, in fp32 torch matmuls; the kernel must match
it within two fp16 ulps of the largest partial sum of each entry.  The kernel runs once, with
fresh signals, so the examples' benchmark loop (which resets the signals with no barrier between
calls and can race a peer's late signal) plays no part.

The kernel factory comes from the example file itself: its imports and function definitions only
(the file has module-level benchmark code that runs on import).  Prints one PASS or FAIL line per
rank, with the true-product mismatch ratio the example's own check would see."""
import argparse
import ast
import os
import sys

import torch
import torch.distributed as dist

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FILES = {"cannon": "example_cannon.py", "summa": "example_summa.py"}


def load_factory(path, name):
    """The example's imports and top-level function definitions, executed; returns `name`."""
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    keep = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom, ast.FunctionDef))]
    ns = {"__name__": "example_" + name}
    exec(compile(ast.Module(body=keep, type_ignores=[]), path, "exec"), ns)
    return ns[name]


def start_tiles(example, A, B, mesh, r, c, ml, nl, kl):
    """Rank (r, c)'s A and B tiles as the example's host code scatters them."""
    def a_tile(rr, kk):
        return A[ml * rr:ml * (rr + 1), kl * kk:kl * (kk + 1)]

    def b_tile(cc, kk):
        return B[nl * cc:nl * (cc + 1), kl * kk:kl * (kk + 1)]
    if example == "cannon":
        k = (c + r) % mesh
        return a_tile(r, k), b_tile(c, k)
    return a_tile(r, c), b_tile(c, r)


def source_of(example, mesh, r, c, step):
    """The rank whose step-`step` buffers reach rank (r, c) for step `step` + 1."""
    if example == "cannon":  # A moves left along the row, B up along the column
        return (r, (c + 1) % mesh), ((r + 1) % mesh, c)
    return (r, step), (r, step)  # SUMMA as written: both broadcast by rank (r, step) of the row


def model(example, A, B, mesh, me, ml, nl, kl):
    """C of rank `me` (fp16) and, per entry, the largest |partial sum| on the way."""
    ranks = [(r, c) for r in range(mesh) for c in range(mesh)]
    tiles = {rc: start_tiles(example, A, B, mesh, *rc, ml, nl, kl) for rc in ranks}
    a, b = {rc: t[0] for rc, t in tiles.items()}, {rc: t[1] for rc, t in tiles.items()}
    C = torch.zeros(ml, nl, dtype=torch.float16, device=A.device)
    peak = torch.zeros(ml, nl, dtype=torch.float32, device=A.device)
    for step in range(mesh):
        part = C.float() + a[me].float() @ b[me].float().T
        peak = torch.maximum(peak, part.abs())
        C = part.half()
        srcs = {rc: source_of(example, mesh, *rc, step) for rc in ranks}
        a, b = {rc: a[srcs[rc][0]] for rc in ranks}, {rc: b[srcs[rc][1]] for rc in ranks}
    return C, peak


def fp16_ulp(x):
    """The spacing of fp16 numbers at |x| (2^-24 below the normal range)."""
    e = torch.floor(torch.log2(x.clamp(min=2.0 ** -14)))
    return torch.pow(2.0, e - 10)


EXAMPLE_SM_NUM = 132  # both files' `sm_num` ("132 SMs for H100"), whatever the GPU


def cdiv(a, b):
    return -(-a // b)


def put_overrun(M, N, K, mesh, blocks):
    """None when both examples' kernels copy only inside their buffers at this size, else why
    not.  Each kernel splits the local rows of A (and of B) into slices of ceildiv(rows, grid)
    rows, grid = min(132, output tiles), and every slice's put copies a whole slice: unless the
    slice size divides the rows, the last put runs past the end of the peer's double buffer
    into whatever the heap holds next (the other buffer, the signals): corrupt data or a hang."""
    bm, bn, _ = blocks
    ml, nl, kl = cdiv(M, mesh), cdiv(N, mesh), cdiv(K, mesh)
    grid = min(EXAMPLE_SM_NUM, cdiv(ml, bm) * cdiv(nl, bn))
    for what, rows in (("A", ml), ("B", nl)):
        per = cdiv(rows, grid)
        if rows % per:
            return ("M=%d N=%d K=%d on %dx%d: the example's last %s put copies %d rows from row %d of %d "
                    "(%d bytes past the buffer)" % (M, N, K, mesh, mesh, what, per, per * (cdiv(rows, per) - 1),
                                                     rows, (per * cdiv(rows, per) - rows) * kl * 2))
    return None


def in_bounds_size(size, mesh, blocks):
    """The smallest M = N = K >= size on which put_overrun finds nothing (a step of mesh * the
    largest block keeps every local size a whole number of tiles)."""
    step = mesh * max(blocks)
    n = cdiv(size, step) * step
    while put_overrun(n, n, n, mesh, blocks):
        n += step
    return n


class MeshGemm:
    """One rank's run of a mesh example's kernel (shared by this check and bench_overlap's
    cannon row): the kernel compiled from the file's factory with the examples' own blocks and
    pass configs; the whole A (M x K) and B (N x K) drawn from seed 1234, the same on every
    rank; this rank's starting tiles in buffer 0 of the symmetric double buffers, zero signals
    and a zero C (symmetric tensors start zeroed)."""
    BLOCKS = (128, 256, 64)

    def __init__(self, path, example, mesh, rank, M, N, K):
        import pynvshmem
        import tilelang
        self.example, self.mesh = example, mesh
        self.r, self.c = divmod(rank, mesh)
        self.ml, self.nl, self.kl = -(-M // mesh), -(-N // mesh), -(-K // mesh)
        bm, bn, bk = self.BLOCKS
        why = put_overrun(M, N, K, mesh, self.BLOCKS)
        if why:
            raise ValueError("mesh_gemm_model: %s; pick another size (e.g. %d)" % (
                why, in_bounds_size(max(M, N, K), mesh, self.BLOCKS)))
        func = load_factory(path, example)(mesh, M, N, K, bm, bn, bk, "float16")
        self.kernel = tilelang.compile(func, pass_configs={"tl.disable_tma_lower": True,
                                                           "tl.disable_warp_specialized": True})
        torch.manual_seed(1234)
        self.A = torch.randn(M, K, dtype=torch.float16, device="cuda")
        self.B = torch.randn(N, K, dtype=torch.float16, device="cuda")
        a0, b0 = start_tiles(example, self.A, self.B, mesh, self.r, self.c, self.ml, self.nl, self.kl)
        self.As = pynvshmem.nvshmem_create_tensor([2, self.ml, self.kl], torch.float16)
        self.Bs = pynvshmem.nvshmem_create_tensor([2, self.nl, self.kl], torch.float16)
        self.As[0].copy_(a0)
        self.Bs[0].copy_(b0)
        self.sig = [pynvshmem.nvshmem_create_tensor([-(-n // blk)], torch.uint64)
                    for n, blk in ((M, bm), (M, bm), (N, bn), (N, bn))]
        self.C = pynvshmem.nvshmem_create_tensor([self.ml, self.nl], torch.float16)

    def reset(self):
        for t in self.sig:
            t.zero_()

    def run(self):
        self.kernel(self.As, self.Bs, *self.sig, self.C)

    def off_model(self):
        """(fraction of C's entries off the model by more than two fp16 ulps of their largest
        partial sum, or not finite; the largest error)."""
        want, peak = model(self.example, self.A, self.B, self.mesh, (self.r, self.c), self.ml, self.nl, self.kl)
        err = (self.C.float() - want.float()).abs()
        bad = ~(err <= 2 * fp16_ulp(peak) + 1e-3)  # NaN counts as off
        return bad.float().mean().item(), err.max().item()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--example", choices=sorted(FILES), required=True)
    ap.add_argument("--corpus", default=os.path.join(os.path.dirname(ROOT), "shared", "corpus"))
    ap.add_argument("--M", type=int, default=2048)
    ap.add_argument("--N", type=int, default=2048)
    ap.add_argument("--K", type=int, default=2048)
    args = ap.parse_args()
    from tilelang.distributed import init_distributed
    path = os.path.join(args.corpus, "tilescale", "examples", "distributed", FILES[args.example])
    if not os.path.exists(path):
        sys.exit("mesh_gemm_model: no %s" % path)
    world, rank, _ = init_distributed()
    mesh = int(round(world ** 0.5))
    if mesh * mesh != world:
        sys.exit("mesh_gemm_model: %d ranks is not a square mesh" % world)
    try:
        g = MeshGemm(path, args.example, mesh, rank, args.M, args.N, args.K)
    except ValueError as e:
        sys.exit(str(e))
    torch.cuda.synchronize()
    dist.barrier()
    g.run()
    torch.cuda.synchronize()
    dist.barrier()

    bad, worst = g.off_model()
    r, c = g.r, g.c
    true = (g.A.float()[g.ml * r:g.ml * (r + 1)] @ g.B.float()[g.nl * c:g.nl * (c + 1)].T)
    own = (g.C.float() - true).abs() > 1e-2 + 1e-2 * true.abs()
    ok = bad == 0.0
    print("%s mesh_gemm_model %s rank %d (%d,%d) of %dx%d: %.6f of entries off the model (max %.4f); "
          "the example's own check (allclose 1e-2 against A·Bᵀ) would find %.4f of entries outside it" % (
              "PASS" if ok else "FAIL", args.example, rank, r, c, mesh, mesh, bad, worst,
              own.float().mean().item()), flush=True)
    dist.barrier()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
