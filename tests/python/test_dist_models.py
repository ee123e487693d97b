"""The references of the multi-GPU model checks (tests/dist/mesh_gemm_model.py, deepep_model.py)
against naive loop-by-loop versions written from the example files, on CPU.  Needs torch (the
GPU machines have it; skipped where it is missing, e.g. in CI)."""
import os
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "dist"))

try:
    import torch
except ImportError:
    torch = None


@unittest.skipIf(torch is None, "torch is not installed")
class MeshModelTest(unittest.TestCase):
    def test_cannon_is_the_product_and_summa_is_not(self):
        import mesh_gemm_model as m
        torch.manual_seed(0)
        M = N = K = 64
        mesh, ml, nl, kl = 2, 32, 32, 32
        A, B = torch.randn(M, K).half(), torch.randn(N, K).half()

        def a_tile(rr, kk):
            return A[ml * rr:ml * (rr + 1), kl * kk:kl * (kk + 1)].float()

        def b_tile(cc, kk):
            return B[nl * cc:nl * (cc + 1), kl * kk:kl * (kk + 1)].float()
        for r in range(mesh):
            for c in range(mesh):
                true = A.float()[ml * r:ml * (r + 1)] @ B.float()[nl * c:nl * (c + 1)].T
                C, peak = m.model("cannon", A, B, mesh, (r, c), ml, nl, kl)
                self.assertLess((C.float() - true).abs().max().item(), 0.05)
                self.assertTrue(bool((peak >= C.float().abs() - 0.05).all()))
                # SUMMA's kernel: step 0 on the local tiles, then rank (r, 0)'s tiles
                S, _ = m.model("summa", A, B, mesh, (r, c), ml, nl, kl)
                want = a_tile(r, c) @ b_tile(c, r).T + a_tile(r, 0) @ b_tile(0, r).T
                self.assertLess((S.float() - want).abs().max().item(), 0.05)
                self.assertGreater((S.float() - true).abs().max().item(), 1.0)

    def test_fp16_ulp(self):
        import mesh_gemm_model as m
        got = m.fp16_ulp(torch.tensor([1.0, 3.0, 100.0])).tolist()
        self.assertEqual(got, [2.0 ** -10, 2.0 ** -9, 2.0 ** -4])

    def test_put_overrun_matches_the_slices_the_kernel_copies(self):
        import mesh_gemm_model as m
        blocks = (128, 256, 64)
        for size in (2048, 4096, 8192, 12288, 16384, 16896, 20480):
            ml = size // 2
            grid = min(132, (ml // 128) * (ml // 256))
            per = -(-ml // grid)
            # the last row any block's put touches (blocks with block_id < ceildiv(rows, per))
            last = max(per * b + per for b in range(grid) if b < -(-ml // per))
            self.assertEqual(m.put_overrun(size, size, size, 2, blocks) is None, last <= ml, size)
        self.assertIsNotNone(m.put_overrun(16384, 16384, 16384, 2, blocks))
        n = m.in_bounds_size(16384, 2, blocks)
        self.assertTrue(n >= 16384 and m.put_overrun(n, n, n, 2, blocks) is None)


@unittest.skipIf(torch is None, "torch is not installed")
class DeepEPModelTest(unittest.TestCase):
    T, H, K, E, R = 64, 16, 4, 8, 4

    def inputs(self):
        out = []
        for seed in range(self.R):
            g = torch.Generator().manual_seed(seed)
            x = torch.randn(self.T, self.H, generator=g).to(torch.bfloat16)
            idx = torch.topk(torch.randn(self.T, self.E, generator=g).abs() + 1, self.K, dim=-1, sorted=False)[1]
            w = torch.randn(self.T, self.K, generator=g)
            idx[0, 1] = -1  # an empty slot
            out.append((x, idx, w))
        return out

    def test_layout(self):
        import deepep_model as m
        x, idx, w = self.inputs()[1]
        epr = self.E // self.R
        per_rank, per_expert, in_rank = m.layout_ref(idx, self.E, self.R)
        for t in range(self.T):
            for r in range(self.R):
                self.assertEqual(bool(in_rank[t, r]), any(int(e) >= 0 and int(e) // epr == r for e in idx[t]))
        self.assertEqual(per_expert.tolist(), [int((idx == e).sum()) for e in range(self.E)])
        self.assertEqual(per_rank.tolist(), [int(in_rank[:, r].sum()) for r in range(self.R)])

    def test_dispatch(self):
        import deepep_model as m
        inputs, epr = self.inputs(), self.E // self.R
        for me in range(self.R):
            rows, ids, ws, counts = [], [], [], [0] * epr
            for x, idx, w in inputs:
                for t in range(self.T):
                    if me not in {int(e) // epr for e in idx[t] if e >= 0}:
                        continue
                    mine = [int(e) >= 0 and int(e) // epr == me for e in idx[t]]
                    rows.append(x[t])
                    ids.append([int(e) - me * epr if ok else -1 for e, ok in zip(idx[t], mine)])
                    ws.append([float(w[t, j]) if mine[j] else 0.0 for j in range(self.K)])
                for e in range(epr):
                    counts[e] += int((idx == me * epr + e).sum())
            gx, gi, gw, gc = m.dispatch_ref(inputs, me, self.E, self.R, 1)
            self.assertTrue(torch.equal(gx, torch.stack(rows)))
            self.assertEqual(gi.tolist(), ids)
            self.assertTrue(torch.equal(gw, torch.tensor(ws)))
            self.assertEqual(gc, counts)
            self.assertEqual(m.dispatch_ref(inputs, me, self.E, self.R, 4)[3], [-(-c // 4) * 4 for c in counts])

    def test_send_head(self):
        import deepep_model as m
        x, idx, w = self.inputs()[0]
        in_rank = m.layout_ref(idx, self.E, self.R)[2]
        for channels in (1, 3, self.T):
            per = -(-self.T // channels)
            want = [[-1] * self.R for _ in range(self.T)]
            for r in range(self.R):
                for c0 in range(0, self.T, per):
                    n = 0
                    for t in range(c0, min(c0 + per, self.T)):
                        if in_rank[t, r]:
                            want[t][r], n = n, n + 1
            self.assertEqual(m.send_head_ref(in_rank, channels).tolist(), want)
        got = m.send_head_ref(in_rank, 3).clone()
        self.assertEqual(m.send_head_diagnosis(got, in_rank, 3), "")
        got[2, 1] += 7
        self.assertIn("1 of %d entries wrong, first at token 2 rank 1" % got.numel(), m.send_head_diagnosis(got, in_rank, 3))

    def test_handle(self):
        import deepep_model as m
        inputs, epr, C = self.inputs(), self.E // self.R, 3
        per = -(-self.T // C)
        sent = [[[any(int(e) >= 0 and int(e) // epr == j for e in idx[t]) for j in range(self.R)]
                 for t in range(self.T)] for _, idx, _ in inputs]  # sent[i][t][j]
        for me in range(self.R):
            rp, cp, rcp, src = m.handle_ref(inputs, me, self.E, self.R, C)
            self.assertEqual(rp.tolist(), [sum(sum(s[t][me] for t in range(self.T)) for s in sent[:i + 1])
                                           for i in range(self.R)])
            self.assertEqual(cp.tolist(), [[sum(sent[me][t][j] for t in range(min((c + 1) * per, self.T)))
                                            for c in range(C)] for j in range(self.R)])
            self.assertEqual(rcp.tolist(), [[sum(sent[r][t][me] for t in range(min(c * per, self.T)))
                                             for c in range(C)] for r in range(self.R)])
            self.assertEqual(src.tolist(), [t for r in range(self.R) for t in range(self.T) if sent[r][t][me]])

    def test_row_order_and_combine_sum(self):
        import deepep_model as m
        a = torch.arange(12.0).view(4, 3)
        self.assertTrue(m.same_rows_any_order(a[[1, 0, 3, 2]], a))
        self.assertFalse(m.same_rows_any_order(a, a))  # same order: not "another order"
        xb = torch.randn(1000).to(torch.bfloat16)
        for k in range(1, 9):  # the combine reference: k equal bf16 terms summed in fp32
            s = torch.zeros(1000)
            for _ in range(k):
                s += xb.float()
            self.assertTrue(torch.equal(s.to(torch.bfloat16), (xb.float() * k).to(torch.bfloat16)))


if __name__ == "__main__":
    unittest.main()
