/* prims.cu — hand-written kernels over the device library (device/tilescale/dist.cuh) for
 * what the TileLang surface cannot parametrise at run time, run by dist_prims.c (make
 * check-dist) and compiled through NVRTC for sm_90a by tests/unit/test_dist_kernels.c.
 *
 *   copy_u8 .. copy_u128   put_warp / get_warp / put_block / get_block with run-time sizes
 *                          and element offsets (unaligned starts and lengths), one case per
 *                          block, on 1-, 2-, 4-, 8- and 16-byte elements
 *   atom_every_rank        every thread of every rank adds into a counter on every rank
 *                          (system-scope atom_add, each semantics, 32/64-bit, signed), and
 *                          records the old values of one 64-bit counter
 *
 * Case table of the copies: cfg[4 * b] = {op, n, src_off, dst_off}; op 0 put_warp, 1
 * get_warp, 2 put_block, 3 get_block; the peer is the next rank (put: into its dst; get:
 * from its src).  Block b works in [b * region, (b + 1) * region) of src and dst; the warp
 * forms run on warp b % 4 so a non-zero warp is exercised too. */
#include <tilescale/dist.cuh>

using namespace ts::dist;

template <class T> __device__ void copy_case(const int *cfg, T *src, T *dst, unsigned long long region) {
  const int *c = cfg + 4 * blockIdx.x;
  const int op = c[0], so = c[2], dof = c[3];
  const uint64_t n = (uint64_t)c[1];
  const int64_t right = (int64_t)((rank() + 1) % num_ranks());
  T *s = src + (uint64_t)blockIdx.x * region + so;
  T *d = dst + (uint64_t)blockIdx.x * region + dof;
  const bool my_warp = threadIdx.x / 32 == blockIdx.x % 4;
  switch (op) {
  case 0:
    if (my_warp) put_warp(s, d, n, right);
    break;
  case 1:
    if (my_warp) get_warp<2>(s, d, n, right);
    break;
  case 2: put_block(s, d, n, right); break;
  default: get_block(s, d, n, right); break;
  }
}

extern "C" __global__ void copy_u8(const int *cfg, unsigned char *s, unsigned char *d, unsigned long long r) {
  copy_case(cfg, s, d, r);
}
extern "C" __global__ void copy_u16(const int *cfg, unsigned short *s, unsigned short *d, unsigned long long r) {
  copy_case(cfg, s, d, r);
}
extern "C" __global__ void copy_u32(const int *cfg, float *s, float *d, unsigned long long r) {
  copy_case(cfg, s, d, r);
}
extern "C" __global__ void copy_u64(const int *cfg, double *s, double *d, unsigned long long r) {
  copy_case(cfg, s, d, r);
}
extern "C" __global__ void copy_u128(const int *cfg, uint4 *s, uint4 *d, unsigned long long r) {
  copy_case(cfg, s, d, r);
}

/* c32[0..3] unsigned, c32s[0] signed, c64[0] the counter whose old values are recorded in
 * olds[pe * threads + global thread id].  Only system scope: the adds come from several GPUs. */
extern "C" __global__ void atom_every_rank(unsigned *c32, int *c32s, unsigned long long *c64, unsigned long long *olds,
                                           int iters) {
  const int nr = (int)num_ranks(), me = (int)rank();
  const unsigned nt = gridDim.x * blockDim.x, gt = blockIdx.x * blockDim.x + threadIdx.x;
  for (int p = 0; p < nr; p++) {
    const int pe = (me + p) % nr; /* ranks start on different peers */
    for (int i = 0; i < iters; i++) {
      atom_add<Sem::RELAXED, Scope::SYS>(c32 + 0, 1u, pe);
      atom_add<Sem::RELEASE, Scope::SYS>(c32 + 1, (unsigned)(me + 1), pe);
      atom_add<Sem::ACQUIRE, Scope::SYS>(c32 + 2, 2u, pe);
      atom_add_acq_rel<Scope::SYS>(c32 + 3, 3u, pe);
      atom_add<Sem::RELAXED, Scope::SYS>(c32s, -1, pe);
    }
    olds[(uint64_t)pe * nt + gt] = atom_add<Sem::RELAXED, Scope::SYS>(c64, 1ull, pe);
  }
}
