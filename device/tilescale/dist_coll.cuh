/* dist_coll.cuh — all-gather and all-to-all over the symmetric heap, one kernel per call,
 * built on dist.cuh (DESIGN.md §7; measured against NCCL by bench/bench_dist.c).
 *
 *   host: grid (nb, P), any block size  -->  block (j, k) serves the pair
 *         "me -> q = (me + k) % P" (part j of the slice; k = 0 is the local copy)
 *
 * Both collectives move one slice of `words` 16-byte words per (sender, receiver) pair into
 * dst[sender]: all-gather sends the whole src to everyone, all-to-all sends src[q] to q.
 * Three protocols, chosen by the caller per message size:
 *   push   16-byte stores straight into q's dst over NVLink (reads local, writes remote:
 *          NVLink writes are posted, reads pay a round trip), then one release add on q's
 *          signal word for `me`; block (j, k) waits until its own word for (me - k) % P
 *          reaches the running count of parts that peer has sent (no reset between calls).
 *   ll     (small messages) every 16-byte line carries 8 payload bytes and the call's epoch
 *          twice ({d0, epoch, d1, epoch}), so the receiver polls the data itself: no fence,
 *          no separate signal.  Lines land in a staging area on the receiver (two halves by
 *          epoch parity) that the receiver unpacks into dst.
 *   bulk   (large messages) TMA bulk copies global -> shared -> q's global, issued by one
 *          thread per block through a ring of shared-memory stages, then the push signal.
 * Every block of a call must be co-resident on its GPU (the waits span GPUs): the host
 * checks the occupancy.  Waits trap after TILESCALE_WAIT_TIMEOUT_MS when it is set. */
#pragma once

#include <tilescale/dist.cuh>

namespace ts {
namespace dist {
namespace coll {

/* Adds v to pe's copy of *p with release semantics at system scope.  `red` returns no old
 * value, so the thread does not wait for the round trip; release orders the block's data
 * stores before it (the caller synchronises the block first). */
TS_DEV void signal_add(uint64_t *p, uint64_t v, int64_t pe) {
  uint64_t *q = remote(p, pe);
  asm volatile("red.release.sys.add.u64 [%0], %1;" ::"l"(q), "l"(v) : "memory");
}

/* Part j of [0, n) split into `parts` nearly equal ranges. */
TS_DEV void part_range(uint64_t n, unsigned parts, unsigned j, uint64_t &lo, uint64_t &hi) {
  const uint64_t per = (n + parts - 1) / parts;
  lo = per * j < n ? per * j : n;
  hi = lo + per < n ? lo + per : n;
}

/* Streaming 16-byte load of data that nobody writes during the kernel. */
TS_DEV uint4 load_stream(const uint4 *p) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

/* Words [lo, hi) of src into dst by the whole block, UNROLL loads in flight per thread
 * before their stores (the stores to a peer are posted; the loads are what waits). */
template <int UNROLL> TS_DEV void block_copy16(uint4 *dst, const uint4 *src, uint64_t lo, uint64_t hi) {
  const unsigned nt = blockDim.x;
  uint64_t i = lo + threadIdx.x;
  for (; i + (uint64_t)(UNROLL - 1) * nt < hi; i += (uint64_t)UNROLL * nt) {
    uint4 v[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; u++) v[u] = load_stream(src + i + (uint64_t)u * nt);
#pragma unroll
    for (int u = 0; u < UNROLL; u++) dst[i + (uint64_t)u * nt] = v[u];
  }
  for (; i < hi; i += nt) dst[i] = load_stream(src + i);
}

/* Release add on q's word for me, then wait for the word of the peer this block receives
 * from.  fence: a full system fence before the add as well (the older form; release
 * alone is enough, kept to measure the difference). */
TS_DEV void block_signal_and_wait(uint64_t *sig, int me, int q, int from, uint64_t target, bool fence) {
  __syncthreads();
  if (threadIdx.x == 0) {
    if (fence) fence_sys();
    signal_add(sig + me, 1, q);
    wait_ge(sig + from, target);
  }
}

/* ---- push --------------------------------------------------------------------------------- */
/* remote_lo: the remote slices are copied from that word on (the words before it travel by
 * copy engine, see bench_dist.c); kfirst = 1: the grid has P - 1 rows and leaves the local
 * copy to someone else. */
template <bool A2A, int UNROLL = 4>
TS_DEV void push(const uint4 *src, uint4 *dst, uint64_t *sig, uint64_t words, uint64_t target, bool fence,
                 uint64_t remote_lo = 0, int kfirst = 0) {
  const int P = get_num_ranks(), me = get_rank(), k = (int)blockIdx.y + kfirst;
  const int q = (me + k) % P, from = (me - k + P) % P;
  const uint4 *s = A2A ? src + (uint64_t)q * words : src;
  uint4 *d = remote(dst + (uint64_t)me * words, q);
  const uint64_t first = k == 0 ? 0 : remote_lo;
  uint64_t lo, hi;
  part_range(words - first, gridDim.x, blockIdx.x, lo, hi);
  block_copy16<UNROLL>(d, s, first + lo, first + hi);
  if (k == 0) return;
  block_signal_and_wait(sig, me, q, from, target, fence);
}

/* ---- ll ----------------------------------------------------------------------------------- */
TS_DEV void st_volatile16(uint4 *p, uint4 v) {
  asm volatile("st.volatile.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
}
TS_DEV uint4 ld_volatile16(const uint4 *p) {
  uint4 v;
  asm volatile("ld.volatile.global.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p)
               : "memory");
  return v;
}

/* Spins until both flags of the line hold epoch.  An aligned 16-byte store reaches the
 * peer's memory as one piece (the property NCCL's LL protocol relies on too), and each
 * 8-byte half pairs a payload word with its own copy of the flag. */
TS_DEV uint4 ll_wait_line(const uint4 *p, uint32_t epoch) {
#if TILESCALE_WAIT_TIMEOUT_MS > 0
  const uint64_t start = global_timer_ns();
#endif
  uint4 v;
#pragma unroll 1
  while ((v = ld_volatile16(p)).y != epoch || v.w != epoch) {
#if TILESCALE_WAIT_TIMEOUT_MS > 0
    if (global_timer_ns() - start > (uint64_t)TILESCALE_WAIT_TIMEOUT_MS * 1000000ull)
      wait_timeout("ll line wait", p, (long long)v.y, (long long)epoch);
#endif
  }
  return v;
}

/* lines: symmetric, [2 parities][P senders][cap lines]; cap >= 2 * words.  epoch >= 1
 * and different in consecutive calls (the host counts calls).  The two halves make reuse
 * safe without acknowledgements: a sender starts call e + 2 only after its call e + 1
 * received from every peer, which each peer sent only after finishing call e, i.e. after
 * it had read everything of call e. */
template <bool A2A>
TS_DEV void ll(const uint4 *src, uint4 *dst, uint4 *lines, uint64_t words, uint64_t cap, uint32_t epoch) {
  const int P = get_num_ranks(), me = get_rank(), k = (int)blockIdx.y;
  const unsigned nt = blockDim.x;
  uint64_t lo, hi;
  part_range(words, gridDim.x, blockIdx.x, lo, hi);
  if (k == 0) {
    block_copy16<4>(dst + (uint64_t)me * words, A2A ? src + (uint64_t)me * words : src, lo, hi);
    return;
  }
  const int q = (me + k) % P, from = (me - k + P) % P;
  const uint64_t par = epoch & 1u;
  const uint4 *s = A2A ? src + (uint64_t)q * words : src;
  uint4 *out = remote(lines + (par * (uint64_t)P + (uint64_t)me) * cap, q);
  for (uint64_t i = lo + threadIdx.x; i < hi; i += nt) {
    const uint4 v = load_stream(s + i);
    st_volatile16(out + 2 * i, make_uint4(v.x, epoch, v.y, epoch));
    st_volatile16(out + 2 * i + 1, make_uint4(v.z, epoch, v.w, epoch));
  }
  const uint4 *in = lines + (par * (uint64_t)P + (uint64_t)from) * cap;
  uint4 *d = dst + (uint64_t)from * words;
  for (uint64_t i = lo + threadIdx.x; i < hi; i += nt) {
    const uint4 a = ll_wait_line(in + 2 * i, epoch);
    const uint4 b = ll_wait_line(in + 2 * i + 1, epoch);
    d[i] = make_uint4(a.x, a.z, b.x, b.z);
  }
}

/* ---- bulk (TMA) --------------------------------------------------------------------------- */
TS_DEV uint32_t smem_addr(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

/* STAGES buffers of CHUNK bytes in dynamic shared memory (the host sets the size); thread 0
 * issues everything.  Loads run STAGES - 1 chunks ahead of the stores; a stage is refilled
 * once the bulk store that used it has read it (wait_group.read), which does not wait for
 * the remote write itself. */
template <bool A2A, int STAGES, int CHUNK>
TS_DEV void bulk(const uint4 *src, uint4 *dst, uint64_t *sig, uint64_t words, uint64_t target) {
  extern __shared__ __align__(128) unsigned char stage_mem[];
  __shared__ __align__(8) uint64_t full[STAGES];
  const int P = get_num_ranks(), me = get_rank(), k = (int)blockIdx.y;
  const int q = (me + k) % P, from = (me - k + P) % P;
  const unsigned char *s = reinterpret_cast<const unsigned char *>(A2A ? src + (uint64_t)q * words : src);
  unsigned char *d = reinterpret_cast<unsigned char *>(remote(dst + (uint64_t)me * words, q));
  uint64_t lo, hi;
  part_range(words, gridDim.x, blockIdx.x, lo, hi);
  const uint64_t b0 = lo * 16, bytes = (hi - lo) * 16;
  const uint64_t nchunks = (bytes + CHUNK - 1) / CHUNK;
  if (threadIdx.x == 0) {
    for (int i = 0; i < STAGES; i++)
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(&full[i])) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    auto issue_load = [&](uint64_t c) {
      const int st = (int)(c % STAGES);
      const uint64_t off = c * CHUNK;
      const uint32_t n = (uint32_t)(bytes - off < (uint64_t)CHUNK ? bytes - off : (uint64_t)CHUNK);
      const uint32_t bar = smem_addr(&full[st]);
      asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(n) : "memory");
      asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                       smem_addr(stage_mem + (uint64_t)st * CHUNK)),
                   "l"(s + b0 + off), "r"(n), "r"(bar)
                   : "memory");
    };
    for (uint64_t c = 0; c < nchunks && c < (uint64_t)(STAGES - 1); c++) issue_load(c);
    for (uint64_t c = 0; c < nchunks; c++) {
      const int st = (int)(c % STAGES);
      const uint32_t phase = (uint32_t)((c / STAGES) & 1);
      const uint32_t bar = smem_addr(&full[st]);
      uint32_t ready = 0;
#pragma unroll 1
      while (!ready)
        asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
                     : "=r"(ready)
                     : "r"(bar), "r"(phase)
                     : "memory");
      const uint64_t off = c * CHUNK;
      const uint32_t n = (uint32_t)(bytes - off < (uint64_t)CHUNK ? bytes - off : (uint64_t)CHUNK);
      asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(d + b0 + off),
                   "r"(smem_addr(stage_mem + (uint64_t)st * CHUNK)), "r"(n)
                   : "memory");
      asm volatile("cp.async.bulk.commit_group;" ::: "memory");
      const uint64_t next = c + STAGES - 1;
      if (next < nchunks) {
        /* next reuses the stage of chunk c - 1: wait until its store has read it. */
        asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory");
        issue_load(next);
      }
    }
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
    asm volatile("fence.proxy.async;" ::: "memory");
  }
  if (k == 0) return;
  block_signal_and_wait(sig, me, q, from, target, false);
}

} // namespace coll
} // namespace dist
} // namespace ts
