"""deepep_model.py — TileScale's DeepEP intranode example (its EPBuffer: dispatch layout,
dispatch, combine; the kernels compiled by this project) checked against an independent torch
reference of DeepEP's semantics.  The example's own reference is DeepEP itself (`deep_ep`),
which is not installed here, so the unchanged script stops before running anything.

    tilescale launch -n 1 python3 tests/dist/deepep_model.py --num_ranks 4 [--corpus DIR]
        (--num_ranks 1 runs on one GPU with the 2-rank configuration)
        [--num_tokens 256 --hidden 1024 --num_topk 4 --num_experts 8 --expert_alignment 1]
        [--cached] [--buffers N] [--rounds N]

It spawns --num_ranks GPU processes as the example does (init_dist).  Every rank draws every
rank's inputs with the example's gen_inputs (seed 1000 + rank), so each can build the reference
of what it must receive:
  - layout: is_token_in_rank[t, r] = some expert of token t lives on rank r (experts split
    evenly, in order); tokens per rank and per expert counted from it;
  - dispatch: rank r receives, source rank by source rank and in token order, every token that
    has an expert on r; its top-k indices become local expert ids (-1 for experts elsewhere,
    weight 0 there); the count per local expert is rounded up to expert_alignment;
  - combine (sum without weights, of the tokens just received): token t comes back as x[t]
    times the number of ranks it went to, its weights as sent.
Everything is compared exactly (bf16 sums of up to 8 equal terms are exact in fp32).  On a
dispatch mismatch it says whether the same rows arrived in another order.  One PASS or FAIL
line per rank and stage."""
import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def example_dir(corpus):
    return os.path.join(corpus, "tilescale", "examples", "distributed", "deepseek_deepep")


def layout_ref(topk_idx, num_experts, num_ranks):
    """(tokens per rank [R], tokens per expert [E], is_token_in_rank [T, R] bool)."""
    import torch
    per_rank_experts = num_experts // num_ranks
    valid = topk_idx >= 0
    rank_of = torch.where(valid, topk_idx // per_rank_experts, torch.full_like(topk_idx, -1))
    in_rank = torch.stack([(rank_of == r).any(dim=1) for r in range(num_ranks)], dim=1)
    per_expert = torch.bincount(topk_idx[valid].flatten(), minlength=num_experts)
    return in_rank.sum(dim=0), per_expert, in_rank


def channel_tokens(num_tokens, num_channels):
    """Tokens per channel: the kernels split a rank's tokens into num_channels equal runs."""
    return -(-num_tokens // num_channels)


def send_head_ref(in_rank, num_channels):
    """Dispatch's send_head [T, R], which combine reads: for a token sent to rank r, its place
    among the tokens of its channel (T split into num_channels equal runs) sent to r; else -1."""
    import torch
    T = in_rank.shape[0]
    per = channel_tokens(T, num_channels)
    sent = in_rank.to(torch.int64)
    before = torch.cumsum(sent, dim=0) - sent  # tokens sent to r before t, over all channels
    start = torch.arange(T, device=in_rank.device) // per * per
    place = before - before[start]
    return torch.where(in_rank, place, torch.full_like(place, -1)).to(torch.int32)


def handle_ref(inputs, me, num_experts, num_ranks, num_channels):
    """The rest of dispatch's handle on rank `me`, which combine reads, by DeepEP's definitions:
    rank_prefix_matrix's column `me` [R] (row i: tokens ranks 0..i send to me, inclusive; the
    example fills no other column),
    channel_prefix_matrix [R, C] (my tokens in channels 0..c sent to rank j, inclusive),
    recv_channel_prefix_matrix [R, C] (rank r's tokens in channels before c sent to me) and
    recv_src_idx (each received row's token index on its source rank)."""
    import torch
    in_ranks = [layout_ref(idx, num_experts, num_ranks)[2].to(torch.int64) for _, idx, _ in inputs]
    T = in_ranks[0].shape[0]
    channel = torch.arange(T, device=in_ranks[0].device) // channel_tokens(T, num_channels)

    def per_channel(sent):  # [C]: tokens of each channel among `sent` [T]
        return torch.zeros(num_channels, dtype=torch.int64, device=sent.device).index_add_(0, channel, sent)

    rank_prefix = torch.cumsum(torch.stack([r[:, me].sum() for r in in_ranks]), dim=0)
    channel_prefix = torch.stack([torch.cumsum(per_channel(in_ranks[me][:, j]), dim=0) for j in range(num_ranks)])
    recv_channel_prefix = torch.stack([torch.cumsum(per_channel(r[:, me]), dim=0) - per_channel(r[:, me])
                                       for r in in_ranks])
    src_idx = torch.cat([r[:, me].nonzero().flatten() for r in in_ranks])
    return [t.to(torch.int32) for t in (rank_prefix, channel_prefix, recv_channel_prefix, src_idx)]


def dispatch_ref(inputs, me, num_experts, num_ranks, alignment):
    """What rank `me` receives: (x rows, local top-k ids, weights, count per local expert)."""
    import torch
    epr = num_experts // num_ranks
    xs, ids, ws = [], [], []
    counts = [0] * epr
    for x, topk_idx, topk_w in inputs:
        _, _, in_rank = layout_ref(topk_idx, num_experts, num_ranks)
        sel = in_rank[:, me].nonzero().flatten()  # ascending token order
        local = topk_idx[sel] - me * epr
        mine = (topk_idx[sel] >= 0) & (local >= 0) & (local < epr)
        xs.append(x[sel])
        ids.append(torch.where(mine, local, torch.full_like(local, -1)))
        ws.append(torch.where(mine, topk_w[sel], torch.zeros_like(topk_w[sel])))
        for e in range(epr):
            counts[e] += int((topk_idx == me * epr + e).sum().item())
    counts = [-(-c // alignment) * alignment for c in counts]
    return torch.cat(xs), torch.cat(ids), torch.cat(ws), counts


def draw_inputs(gen_inputs, T, H, K, E, R):
    """Every rank's (x, topk_idx, topk_weights), drawn with the example's gen_inputs from seed
    1000 + rank: the same on every rank, so each can build any rank's reference."""
    import torch
    out = []
    for r in range(R):
        torch.manual_seed(1000 + r)
        out.append(tuple(gen_inputs(T, H, K, E, R)[:3]))
    return out


def combine_ref(x, topk_idx, num_experts, num_ranks):
    """What combine returns for tokens x after a dispatch and back: each token times the number
    of ranks it went to (equal bf16 terms summed in fp32, exact)."""
    import torch
    times = layout_ref(topk_idx, num_experts, num_ranks)[2].sum(dim=1).to(torch.float32).unsqueeze(1)
    return (x.float() * times).to(x.dtype)


def combine_diagnosis(got, x, topk_idx, num_experts, num_ranks, num_channels=None):
    """Which rows of a wrong combine are off, and how: ", k of T rows wrong (a all zero, b equal
    to m copies of the token for m = ..., c other; the token went to n ranks in them)", then how
    many of a wrong row's elements are off (a few cache lines: stale reads; all: a row from the
    wrong slot) and, given the kernel's channel count, where the rows sit in their channel (past
    the ring's length: only after the ring wrapped)."""
    import torch
    want_times = layout_ref(topk_idx, num_experts, num_ranks)[2].sum(dim=1)
    if got.shape != x.shape:
        return ": shape %s, want %s" % (tuple(got.shape), tuple(x.shape))
    g, xf = got.float(), x.float()
    copies = [(g == xf * m).all(dim=1) for m in range(num_ranks + 1)]
    want = torch.stack(copies)[want_times.long(), torch.arange(x.shape[0], device=x.device)]
    wrong = (~want).nonzero().flatten()
    if not len(wrong):
        return ""
    zero = int((g[wrong] == 0).all(dim=1).sum())
    multiples = {m: int(copies[m][wrong].sum()) for m in range(1, num_ranks + 1) if int(copies[m][wrong].sum())}
    other = len(wrong) - zero - sum(multiples.values())
    went = sorted(set(want_times[wrong].tolist()))
    want_rows = xf[wrong] * want_times[wrong].float().unsqueeze(1)
    off = (g[wrong] != want_rows).sum(dim=1).float()
    where = ""
    if num_channels:
        per = channel_tokens(x.shape[0], num_channels)
        pos = (wrong % per).float()
        where = "; position in channel (of %d tokens) min %d median %d max %d" % (
            per, int(pos.min()), int(pos.median()), int(pos.max()))
    return ", %d of %d rows wrong (%d all zero, %s, %d other; those tokens went to %s ranks; first wrong row %d; " \
        "elements off per wrong row min %d median %d max %d of %d%s)" % (
            len(wrong), x.shape[0], zero, ", ".join("%d equal to %d copies" % (n, m) for m, n in multiples.items()) or
            "none a multiple", other, "/".join(map(str, went)), int(wrong[0]),
            int(off.min()), int(off.median()), int(off.max()), x.shape[1], where)


def send_head_diagnosis(got, in_rank, num_channels):
    """Where a wrong send_head differs: ", k of T x R entries wrong, first at token t rank r
    (got g, want w)", or ""."""
    want = send_head_ref(in_rank, num_channels)
    if got.shape != want.shape:
        return ": shape %s, want %s" % (tuple(got.shape), tuple(want.shape))
    bad = (got != want).nonzero()
    if not len(bad):
        return ""
    t, r = (int(v) for v in bad[0])
    return ", %d of %d entries wrong, first at token %d rank %d (got %d, want %d)" % (
        len(bad), got.numel(), t, r, int(got[t, r]), int(want[t, r]))


def same(a, b):
    import torch
    return a.shape == b.shape and bool(torch.equal(a.to(b.dtype), b))


def same_rows_any_order(a, b):
    """Whether a and b (2-D) hold the same rows as multisets."""
    import torch
    if a.shape != b.shape:
        return False
    key = lambda t: t.float().view(t.shape[0], -1)  # noqa: E731
    sa = sorted(map(tuple, key(a).tolist()))
    sb = sorted(map(tuple, key(b).tolist()))
    return sa == sb and not torch.equal(a, b)


def report(rank, stage, checks):
    """Print the stage's line; True when every (name, ok) check holds."""
    bad = [name for name, ok in checks if not ok]
    print("%s deepep_model rank %d %s%s" % ("PASS" if not bad else "FAIL", rank, stage,
                                            ": differs in " + ", ".join(bad) if bad else ""), flush=True)
    return not bad


def check_buffer(buf, inputs, rank, E, R, align, args):
    """Layout, dispatch and combine through `buf` against the references; True when all agree."""
    import torch
    x, topk_idx, topk_w = inputs[rank]
    ok = True
    per_rank, per_expert, in_rank = buf.get_dispatch_layout(topk_idx)
    ref_rank, ref_expert, ref_in = layout_ref(topk_idx, E, R)
    ok &= report(rank, "layout", [("num_tokens_per_rank", same(per_rank, ref_rank)),
                                  ("num_tokens_per_expert", same(per_expert, ref_expert)),
                                  ("is_token_in_rank", same(in_rank, ref_in))])

    recv_x, recv_idx, recv_w, counts, handle = buf.dispatch(
        x, None, per_rank, in_rank, per_expert, topk_idx, topk_w, align)
    if args.cached:  # the cached path: the same tokens again from the handle
        recv_x = buf.dispatch(x, handle, per_rank, in_rank, per_expert, None, None, align)
    torch.cuda.synchronize()
    want_x, want_idx, want_w, want_counts = dispatch_ref(inputs, rank, E, R, align)
    order = " (the same rows, in another order)" if same_rows_any_order(recv_x, want_x) else ""
    ok &= report(rank, "cached dispatch" if args.cached else "dispatch",
                 [("recv_x" + order, same(recv_x, want_x)), ("recv_topk_idx", same(recv_idx, want_idx)),
                  ("recv_topk_weights", same(recv_w, want_w)),
                  ("num_recv_tokens_per_expert_list", list(counts) == want_counts),
                  ("send_head" + send_head_diagnosis(handle[5], ref_in, buf.num_channels),
                   same(handle[5], send_head_ref(ref_in, buf.num_channels)))] +
                 [(name, same(got, want)) for name, got, want in zip(
                     ("rank_prefix_matrix", "channel_prefix_matrix", "recv_channel_prefix_matrix", "recv_src_idx"),
                     (handle[0][:, rank],) + tuple(handle[1:4]), handle_ref(inputs, rank, E, R, buf.num_channels))])

    print("deepep_model rank %d: combine started" % rank, flush=True)
    comb_x, comb_w = buf.combine(recv_x, handle, recv_w)
    torch.cuda.synchronize()
    want_cx = combine_ref(x, topk_idx, E, R)
    want_cw = torch.where(topk_idx >= 0, topk_w, torch.zeros_like(topk_w))
    why = "" if same(comb_x, want_cx) else combine_diagnosis(comb_x, x, topk_idx, E, R, buf.num_channels)
    ok &= report(rank, "combine", [("combined_x" + why, same(comb_x, want_cx)),
                                   ("combined_topk_weights", same(comb_w, want_cw))])
    return ok


def run(local_rank, num_ranks, args):
    import torch
    sys.path.insert(0, example_dir(args.corpus))  # the example's own imports (buffer, intranode)
    from tilelang.distributed.utils import init_dist
    from buffer import EPBuffer
    from deepep_utils import Config, gen_inputs
    rank, world, group = init_dist(local_rank, num_ranks)
    E, R, align = args.num_experts, world, args.expert_alignment
    inputs = draw_inputs(gen_inputs, args.num_tokens, args.hidden, args.num_topk, E, R)
    # DeepEP has no configuration for one rank; the 2-rank one lets a single GPU run every
    # kernel, its sender and receiver blocks talking to themselves (ring wrap, flow control)
    cfgs = (Config.get_dispatch_config(2), Config.get_combine_config(2)) if world == 1 else (None, None)
    ok = True
    for i in range(args.buffers):  # a fresh EPBuffer each time, the previous one dropped first
        buf = None
        buf = EPBuffer(group, 2**30, args.num_topk, E, args.hidden, *cfgs)
        for j in range(args.rounds):  # dispatch again after a combine through the same buffer
            if args.buffers > 1 or args.rounds > 1:
                print("deepep_model rank %d: buffer %d of %d, round %d of %d"
                      % (rank, i + 1, args.buffers, j + 1, args.rounds), flush=True)
            ok &= check_buffer(buf, inputs, rank, E, R, align, args)
    group.barrier()
    torch.distributed.destroy_process_group()
    if not ok:
        sys.exit(1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--num_ranks", type=int, default=2)
    ap.add_argument("--corpus", default=os.path.join(os.path.dirname(ROOT), "shared", "corpus"))
    ap.add_argument("--num_tokens", type=int, default=256)
    ap.add_argument("--hidden", type=int, default=1024)
    ap.add_argument("--num_topk", type=int, default=4)
    ap.add_argument("--num_experts", type=int, default=8)
    ap.add_argument("--expert_alignment", type=int, default=1)
    ap.add_argument("--cached", action="store_true")
    ap.add_argument("--buffers", type=int, default=1,
                    help="run everything N times, each time through a new EPBuffer")
    ap.add_argument("--rounds", type=int, default=1,
                    help="per buffer, layout + dispatch + combine N times over")
    args = ap.parse_args()
    args.corpus = os.path.abspath(args.corpus)
    if not os.path.isdir(example_dir(args.corpus)):
        sys.exit("deepep_model: no %s" % example_dir(args.corpus))
    if args.num_experts % args.num_ranks or args.num_topk > args.num_experts:
        sys.exit("deepep_model: num_experts must be a multiple of num_ranks and at least num_topk")
    import torch.multiprocessing
    torch.multiprocessing.spawn(run, args=(args.num_ranks, args), nprocs=args.num_ranks)


if __name__ == "__main__":
    main()
