"""host_api.py — TileScale's host API in the packages, on 2+ GPUs, checked piece by piece
(the example scripts of run_corpus_dist.py use them all at once):

    build/tilescale launch -n 2 python3 tests/dist/host_api.py        (PYTHONPATH=python)
    torchrun --nproc_per_node 2 tests/dist/host_api.py

init_distributed (torch.distributed + the library's group), symmetric tensors (zero-filled,
same offset everywhere, peer views readable and writable from this GPU), frees reused by later
allocations (more bytes than the heap holds), tilelang.get_allocator/tilelang.tensor with
return_peers, create_mapped_tensor (the GPU writes, the host reads), set_signal/wait_eq stream
operations, and a kernel compiled with tilelang.compile that stores into its peer's copy of a
symmetric tensor (attached to the heap at compile time, no initialize call; initialize() later
neither uploads again nor waits for the GPU) and one that gets its output allocated on the heap.  Every rank prints "host_api: rank R ok" at the end."""
import os
import sys
import time

import torch
import torch.distributed as dist

import pynvshmem
import tilelang
import tilelang.language as T
from tilelang.distributed import (create_mapped_tensor, init_distributed, perf_fn, set_signal,
                                  wait_eq)


@tilelang.jit
def ring_store(N, dtype="float32"):
    @T.prim_func
    def main(src: T.Tensor((N,), dtype), dst: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, 128), threads=128) as bx:
            tx = T.get_thread_binding()
            rank = T.get_rank()
            peer = (rank + 1) % T.get_num_ranks()
            i = bx * 128 + tx
            if i < N:
                T.st(dst[i], src[i] + T.cast(rank, dtype), dst_pe=peer)
    return main


@tilelang.jit(out_idx=[-1])
def shift_out(N, dtype="float32"):
    @T.prim_func
    def main(src: T.Tensor((N,), dtype), dst: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, 128), threads=128) as bx:
            tx = T.get_thread_binding()
            peer = (T.get_rank() + 1) % T.get_num_ranks()
            i = bx * 128 + tx
            if i < N:
                T.st(dst[i], src[i], dst_pe=peer)
    return main


def check(cond, what):
    if not cond:
        print("host_api: rank %s FAILED: %s" % (os.environ.get("RANK"), what), flush=True)
        sys.exit(1)


def main():
    world, rank, local_rank, group = init_distributed(return_tp_group=True)
    check(world >= 2, "needs 2 or more ranks")
    nxt, prv = (rank + 1) % world, (rank - 1) % world
    check(tilelang.distributed.get_rank() == rank, "the library's rank is torch's")

    # symmetric tensors and peer views
    a = pynvshmem.nvshmem_create_tensor([1 << 16], torch.float32)
    check(a.device.index == local_rank and bool((a == 0).all()), "zero-filled on this GPU")
    peers = pynvshmem.nvshmem_create_tensor_list_intra_node([1024], torch.int32)
    check(len(peers) == world and all(p.device.index == local_rank for p in peers),
          "peer views are tensors of this GPU")
    peers[local_rank].fill_(rank + 1)
    pynvshmem.nvshmem_barrier_all()
    check(bool((peers[nxt % world] == nxt + 1).all()), "reading the next rank's copy")
    peers[nxt][:4] = 100 + rank                      # a write into the next rank's copy
    pynvshmem.nvshmem_barrier_all()
    check(peers[local_rank][:4].tolist() == [100 + prv] * 4, "the previous rank wrote here")
    offs = [None] * world
    dist.all_gather_object(offs, a.data_ptr() - tilelang.distributed.context().heap_base)
    check(len(set(offs)) == 1, "same heap offset on every rank: %s" % offs)

    # frees are reused: 40 x 64 MiB through a ~1 GiB heap
    for i in range(40):
        t = pynvshmem.nvshmem_create_tensor([16 << 20], torch.float32)
        t.fill_(i)
        del t
    pynvshmem.nvshmem_barrier_all()

    # allocator + tilelang.tensor
    alloc = tilelang.get_allocator(size=2**25, device="cuda", is_distributed=True,
                                   local_rank=local_rank, num_local_ranks=world, group=group)
    x = tilelang.tensor((4096,), torch.bfloat16, allocator=alloc).normal_()
    xs = tilelang.tensor((4096,), torch.bfloat16, allocator=alloc, return_peers=True)
    xs[local_rank].copy_(x)
    dist.barrier(group)
    torch.cuda.synchronize()
    gathered = [torch.empty_like(x) for _ in range(world)]
    dist.all_gather(gathered, x, group)
    check(torch.equal(xs[nxt].clone(), gathered[nxt]), "return_peers views hold the peers' data")

    # mapped host counters
    host, devt = create_mapped_tensor([4], torch.int32)
    devt.fill_(7 + rank)
    torch.cuda.synchronize()
    check(host.tolist() == [7 + rank] * 4, "the GPU's write is visible on the host")

    # stream signals
    sig = pynvshmem.nvshmem_create_tensor([2], torch.uint32)
    s64 = pynvshmem.nvshmem_create_tensor([1], torch.uint64)
    set_signal(sig, 5)
    set_signal(s64, 1 << 40)
    wait_eq(sig, 5)
    torch.cuda.synchronize()
    check(sig[0].item() == 5 and s64[0].item() == 1 << 40, "stream write 32/64")

    # kernels: attached at compile time, outputs on the heap
    n = 1000
    src = pynvshmem.nvshmem_create_tensor([n], torch.float32)
    dst = pynvshmem.nvshmem_create_tensor([n], torch.float32)
    src.copy_(torch.arange(n, dtype=torch.float32, device="cuda"))
    pynvshmem.nvshmem_barrier_all()
    k = ring_store(n)
    k(src, dst)
    pynvshmem.nvshmem_barrier_all()
    want = torch.arange(n, dtype=torch.float32, device="cuda") + prv
    check(torch.equal(dst, want), "T.st(dst_pe=next) from every rank")
    out = shift_out(n)(src)
    pynvshmem.nvshmem_barrier_all()
    base = tilelang.distributed.context().heap_base
    size = tilelang.distributed.context().heap_size
    check(base <= out.data_ptr() < base + size, "a distributed kernel's output is symmetric")
    check(torch.equal(out, torch.arange(n, dtype=torch.float32, device="cuda")),
          "the previous rank stored into my output")
    # initialize() again (TileScale's scripts call it before every launch) leaves an attached
    # module alone: it neither uploads the heap table again nor waits for the GPU (a
    # synchronous upload would wait for the sleep on the default stream)
    torch.cuda.synchronize()
    torch.cuda._sleep(400_000_000)  # about 0.2 s of GPU time
    t0 = time.perf_counter()
    k.initialize(allocator=alloc)
    waited = time.perf_counter() - t0
    torch.cuda.synchronize()
    check(waited < 0.05, "kernel.initialize() on an attached kernel took %.0f ms "
          "(it waited for the GPU)" % (1e3 * waited))
    dst.zero_()
    pynvshmem.nvshmem_barrier_all()
    k(src, dst)
    pynvshmem.nvshmem_barrier_all()
    check(torch.equal(dst, want), "T.st(dst_pe=next) after initialize() again")
    ms = perf_fn(lambda: k(src, dst), 2, 5)
    check(ms > 0, "perf_fn times")
    print("host_api: rank %d ok" % rank, flush=True)
    dist.barrier(group)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
