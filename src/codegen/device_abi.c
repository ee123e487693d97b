/* device_abi.c — the device ABI table: for every typed device operation of the IR
 * (ir.h IR_DEVICE_OPS), the template of the device headers (device/tilescale/) that implements it and how
 * its attributes become template arguments.  Codegen (cuda.c) prints the operands after
 * the callee built here.  Rows are in the order of IrDeviceOp; the unit test
 * tests/unit/test_device_abi.c parses the headers and checks each row. */
#include "device_abi.h"

#include <string.h>

const CgDeviceAbi cg_device_abi[IRD_COUNT] = {
    [IRD_CP_ASYNC_COMMIT] = {"ts::cp_async_commit", "", "gemm.cuh"},
    [IRD_CP_ASYNC_WAIT] = {"ts::cp_async_wait", "i", "gemm.cuh"},
    [IRD_CP_ASYNC_WAIT_GROUP] = {"ts::cp_async_wait", "i", "gemm.cuh"},
    [IRD_CP_ASYNC] = {"ts::cp_async", "i", "gemm.cuh"},
    [IRD_CP_ASYNC_ZFILL] = {"ts::cp_async_zfill", "i", "gemm.cuh"},
    [IRD_CP_ASYNC_MBAR_ARRIVE_NOINC] = {"ts::cp_async_mbar_arrive_noinc", "", "gemm.cuh"},
    [IRD_RNG_INIT] = {"ts::rng_init", "", "rng.cuh"},
    [IRD_RNG_RAND] = {"ts::rng_rand", "", "rng.cuh"},
    [IRD_RNG_RAND_FLOAT] = {"ts::rng_rand_float", "", "rng.cuh"},
    [IRD_RNG_RAND_DOUBLE] = {"ts::rng_rand_double", "", "rng.cuh"},
    [IRD_RNG_NORMAL] = {"ts::rng_normal", "", "rng.cuh"},
    [IRD_RNG_NORMAL_DOUBLE] = {"ts::rng_normal_double", "", "rng.cuh"},
    [IRD_RNG_CURAND_INIT] = {"ts::rng_curand_init", "i", "rng_curand.cuh"},
    [IRD_RNG_CURAND_DRAW] = {"ts::rng_curand_draw", "ii", "rng_curand.cuh"},
    [IRD_DP4A] = {"ts::dp4a", "", "common.cuh"},
    [IRD_IEEE_ADD] = {"ts::ieee_add", "i", "ieee.cuh"},
    [IRD_IEEE_SUB] = {"ts::ieee_sub", "i", "ieee.cuh"},
    [IRD_IEEE_MUL] = {"ts::ieee_mul", "i", "ieee.cuh"},
    [IRD_IEEE_FMAF] = {"ts::ieee_fmaf", "i", "ieee.cuh"},
    [IRD_IEEE_FRCP] = {"ts::ieee_frcp", "i", "ieee.cuh"},
    [IRD_IEEE_FSQRT] = {"ts::ieee_fsqrt", "i", "ieee.cuh"},
    [IRD_IEEE_FDIV] = {"ts::ieee_fdiv", "i", "ieee.cuh"},
    [IRD_IEEE_FRSQRT] = {"ts::ieee_frsqrt", "i", "ieee.cuh"},
    [IRD_ATOMIC_LOAD] = {"ts::atomic_load", "i", "atomic.cuh"},
    [IRD_ATOMIC_STORE] = {"ts::atomic_store", "i", "atomic.cuh"},
    [IRD_ATOMIC_OR] = {"ts::atomic_or", "i", "atomic.cuh"},
    [IRD_ATOMIC_FENCE] = {"ts::atomic_fence", "ii", "atomic.cuh"},
    [IRD_PTX_LDMATRIX] = {"ts::ptx_ldmatrix", "ib", "gemm.cuh"},
    [IRD_PTX_MMA] = {"ts::ptx_mma", "tttb", "gemm.cuh"},
    [IRD_FENCE_PROXY_ASYNC] = {"ts::fence_proxy_async", "", "gemm.cuh"},
    [IRD_FENCE_PROXY_ASYNC_SHARED] = {"ts::fence_proxy_async_shared", "", "tma.cuh"},
    [IRD_GEMM_SS_MMA] = {"ts::gemm_ss_mma", "iiiiibbiibt", "gemm.cuh"},
    [IRD_GEMM_SS_MMA4] = {"ts::gemm_ss_mma4", "iiiiibt", "gemm.cuh"},
    [IRD_GEMM_SS_WGMMA] = {"ts::gemm_ss_wgmma", "iiiiibbiibt", "gemm.cuh"},
    [IRD_GEMM_SS_WGMMA_ISSUE] = {"ts::gemm_ss_wgmma_issue", "iiiiibbiibt", "gemm.cuh"},
    [IRD_GEMM_RS_MMA] = {"ts::gemm_rs_mma", "iiiiibbibt", "gemm.cuh"},
    [IRD_GEMM_RS_WGMMA] = {"ts::gemm_rs_wgmma", "iiiiibbibt", "gemm.cuh"},
    [IRD_GEMM_RS_WGMMA_ISSUE] = {"ts::gemm_rs_wgmma_issue", "iiiiibbibt", "gemm.cuh"},
    [IRD_GEMM_WGMMA_WAIT] = {"ts::gemm_wgmma_wait", "ii", "gemm.cuh"},
    [IRD_GEMM_SP_SS_MMA] = {"ts::gemm_sp_ss_mma", "iiiiibiibt", "gemm_sp.cuh"},
    [IRD_TMA_LOAD] = {"ts::tma_load_%dd", "", "tma.cuh"},
    [IRD_TMA_LOAD_MC] = {"ts::tma_load_%dd_mc", "", "tma.cuh"},
    [IRD_TMA_STORE] = {"ts::tma_store_%dd", "", "tma.cuh"},
    [IRD_TMA_STORE_COMMIT] = {"ts::tma_store_commit", "", "tma.cuh"},
    [IRD_TMA_STORE_WAIT] = {"ts::tma_store_wait", "i", "tma.cuh"},
    [IRD_TMA_STORE_WAIT_READ] = {"ts::tma_store_wait_read", "i", "tma.cuh"},
    [IRD_TMA_PREFETCH_DESC] = {"ts::tma_prefetch_desc", "", "tma.cuh"},
    [IRD_NAMED_BARRIER_SYNC] = {"ts::named_barrier_sync", "ii", "tma.cuh"},
    [IRD_NAMED_BARRIER_SYNC_DYN] = {"ts::named_barrier_sync_dyn", "i", "tma.cuh"},
    [IRD_NAMED_BARRIER_ARRIVE_DYN] = {"ts::named_barrier_arrive_dyn", "i", "tma.cuh"},
    [IRD_MBAR_INIT] = {"ts::mbar_init", "", "tma.cuh"},
    [IRD_MBAR_FENCE_INIT] = {"ts::mbar_fence_init", "", "tma.cuh"},
    [IRD_MBAR_ARRIVE] = {"ts::mbar_arrive", "", "tma.cuh"},
    [IRD_MBAR_ARRIVE_CLUSTER] = {"ts::mbar_arrive_cluster", "i", "tma.cuh"},
    [IRD_MBAR_WAIT] = {"ts::mbar_wait", "", "tma.cuh"},
    [IRD_MBAR_WAIT_CLUSTER] = {"ts::mbar_wait_cluster", "", "tma.cuh"},
    [IRD_MBAR_ARRIVE_REMOTE] = {"ts::mbar_arrive_remote", "", "tma.cuh"},
    [IRD_DSMEM_STORE] = {"ts::dsmem_store", "", "tma.cuh"},
    [IRD_DSMEM_BULK_COPY] = {"ts::dsmem_bulk_copy", "", "tma.cuh"},
    [IRD_MBAR_ARRIVE_WAIT] = {"ts::mbar_arrive_wait", "", "tma.cuh"},
    [IRD_MBAR_EXPECT_TX] = {"ts::mbar_expect_tx", "", "tma.cuh"},
    [IRD_MBAR_EXPECT_TX_NOARRIVE] = {"ts::mbar_expect_tx_noarrive", "", "tma.cuh"},
    [IRD_CLUSTER_SYNC] = {"ts::cluster_sync", "", "tma.cuh"},
    [IRD_CLUSTER_ARRIVE] = {"ts::cluster_arrive", "", "tma.cuh"},
    [IRD_CLUSTER_WAIT] = {"ts::cluster_wait", "", "tma.cuh"},
    [IRD_CLUSTER_RANK] = {"ts::block_rank_in_cluster", "", "tma.cuh"},
    [IRD_GRID_DIM_X] = {"ts::grid_dim_x", "", "common.cuh"},
    [IRD_BAR_SYNC] = {"ts::bar_sync", "", "common.cuh"},
    [IRD_BAR_ARRIVE] = {"ts::bar_arrive", "", "common.cuh"},
    [IRD_PDL_TRIGGER] = {"ts::pdl_trigger", "", "common.cuh"},
    [IRD_PDL_SYNC] = {"ts::pdl_sync", "", "common.cuh"},
    [IRD_BLOCK_IDX_X] = {"ts::block_idx_x", "", "common.cuh"},
    [IRD_SK_DP_TILES] = {"ts::sk_dp_tiles", "", "gemm.cuh"},
    [IRD_SK_BEGIN] = {"ts::sk_begin", "", "gemm.cuh"},
    [IRD_SK_SEGMENTS] = {"ts::sk_segments", "", "gemm.cuh"},
    [IRD_SK_STORE_PARTIAL] = {"ts::sk_store_partial", "ii", "gemm.cuh"},
    [IRD_SK_FIXUP] = {"ts::sk_fixup", "ii", "gemm.cuh"},
    [IRD_SETMAXNREG_DEC] = {"ts::setmaxnreg_dec", "i", "tma.cuh"},
    [IRD_SETMAXNREG_INC] = {"ts::setmaxnreg_inc", "i", "tma.cuh"},
    [IRD_DIST_GET_RANK] = {"ts::dist::get_rank", "", "dist.cuh"},
    [IRD_DIST_GET_NUM_RANKS] = {"ts::dist::get_num_ranks", "", "dist.cuh"},
    [IRD_DIST_PUT_WARP] = {"ts::dist::put_warp", "i", "dist.cuh"},
    [IRD_DIST_GET_WARP] = {"ts::dist::get_warp", "i", "dist.cuh"},
    [IRD_DIST_PUT_BLOCK] = {"ts::dist::put_block", "", "dist.cuh"},
    [IRD_DIST_GET_BLOCK] = {"ts::dist::get_block", "", "dist.cuh"},
    [IRD_DIST_LD] = {"ts::dist::ld", "SCbb", "dist.cuh"},
    [IRD_DIST_ST] = {"ts::dist::st", "SCb", "dist.cuh"},
    [IRD_DIST_WAIT_EQ] = {"ts::dist::wait_eq", "", "dist.cuh"},
    [IRD_DIST_WAIT_NE] = {"ts::dist::wait_ne", "", "dist.cuh"},
    [IRD_DIST_WAIT_GE] = {"ts::dist::wait_ge", "", "dist.cuh"},
    [IRD_DIST_WAIT_LE] = {"ts::dist::wait_le", "", "dist.cuh"},
    [IRD_DIST_WAIT_GT] = {"ts::dist::wait_gt", "", "dist.cuh"},
    [IRD_DIST_WAIT_LT] = {"ts::dist::wait_lt", "", "dist.cuh"},
    [IRD_DIST_BARRIER_BLOCKS] = {"ts::dist::barrier_blocks", "", "dist.cuh"},
    [IRD_DIST_SYNC_BLOCKS] = {"ts::dist::sync_blocks", "", "dist.cuh"},
    [IRD_DIST_FENCE_CTA] = {"ts::dist::fence_cta", "", "dist.cuh"},
    [IRD_DIST_FENCE_GPU] = {"ts::dist::fence_gpu", "", "dist.cuh"},
    [IRD_DIST_FENCE_SYS] = {"ts::dist::fence_sys", "", "dist.cuh"},
    [IRD_DIST_FENCE_ASYNC_GLOBAL] = {"ts::dist::fence_async_global", "", "dist.cuh"},
    [IRD_DIST_INIT_BARRIER_GPU] = {"ts::dist::init_barrier_gpu", "", "dist.cuh"},
    [IRD_DIST_ARRIVE_BARRIER_GPU] = {"ts::dist::arrive_barrier_gpu", "", "dist.cuh"},
    [IRD_DIST_WAIT_BARRIER_GPU] = {"ts::dist::wait_barrier_gpu", "", "dist.cuh"},
    [IRD_DIST_SYNC_BARRIER_GPU] = {"ts::dist::sync_barrier_gpu", "", "dist.cuh"},
    [IRD_DIST_SYNC_GRID] = {"ts::dist::sync_grid", "", "dist.cuh"},
    [IRD_DIST_ATOM_ADD] = {"ts::dist::atom_add", "SC", "dist.cuh"},
    [IRD_DIST_ATOM_ADD_ACQ_REL] = {"ts::dist::atom_add_acq_rel", "C", "dist.cuh"},
    [IRD_DIST_WARP_ANY] = {"ts::dist::warp_any", "", "dist.cuh"},
    [IRD_DIST_WARP_ALL] = {"ts::dist::warp_all", "", "dist.cuh"},
    [IRD_DIST_SHUFFLE_ELECT] = {"ts::dist::shuffle_elect", "i", "dist.cuh"},
    [IRD_SHMEM_MY_PE] = {"ts::shmem::my_pe", "", "dist_shmem.cuh"},
    [IRD_SHMEM_N_PES] = {"ts::shmem::n_pes", "", "dist_shmem.cuh"},
    [IRD_SHMEM_INT_P] = {"ts::shmem::int_p", "", "dist_shmem.cuh"},
    [IRD_SHMEM_PUTMEM] = {"ts::shmem::putmem", "", "dist_shmem.cuh"},
    [IRD_SHMEM_PUTMEM_NBI] = {"ts::shmem::putmem_nbi", "", "dist_shmem.cuh"},
    [IRD_SHMEM_PUTMEM_BLOCK] = {"ts::shmem::putmem_block", "", "dist_shmem.cuh"},
    [IRD_SHMEM_PUTMEM_WARP] = {"ts::shmem::putmem_warp", "", "dist_shmem.cuh"},
    [IRD_SHMEM_PUTMEM_NBI_BLOCK] = {"ts::shmem::putmem_nbi_block", "", "dist_shmem.cuh"},
    [IRD_SHMEM_PUTMEM_NBI_WARP] = {"ts::shmem::putmem_nbi_warp", "", "dist_shmem.cuh"},
    [IRD_SHMEM_GETMEM] = {"ts::shmem::getmem", "", "dist_shmem.cuh"},
    [IRD_SHMEM_GETMEM_NBI] = {"ts::shmem::getmem_nbi", "", "dist_shmem.cuh"},
    [IRD_SHMEM_GETMEM_BLOCK] = {"ts::shmem::getmem_block", "", "dist_shmem.cuh"},
    [IRD_SHMEM_GETMEM_WARP] = {"ts::shmem::getmem_warp", "", "dist_shmem.cuh"},
    [IRD_SHMEM_GETMEM_NBI_BLOCK] = {"ts::shmem::getmem_nbi_block", "", "dist_shmem.cuh"},
    [IRD_SHMEM_GETMEM_NBI_WARP] = {"ts::shmem::getmem_nbi_warp", "", "dist_shmem.cuh"},
    [IRD_SHMEM_PUTMEM_SIGNAL] = {"ts::shmem::putmem_signal", "", "dist_shmem.cuh"},
    [IRD_SHMEM_PUTMEM_SIGNAL_NBI] = {"ts::shmem::putmem_signal_nbi", "", "dist_shmem.cuh"},
    [IRD_SHMEM_PUTMEM_SIGNAL_BLOCK] = {"ts::shmem::putmem_signal_block", "", "dist_shmem.cuh"},
    [IRD_SHMEM_PUTMEM_SIGNAL_WARP] = {"ts::shmem::putmem_signal_warp", "", "dist_shmem.cuh"},
    [IRD_SHMEM_PUTMEM_SIGNAL_NBI_BLOCK] = {"ts::shmem::putmem_signal_nbi_block", "", "dist_shmem.cuh"},
    [IRD_SHMEM_PUTMEM_SIGNAL_NBI_WARP] = {"ts::shmem::putmem_signal_nbi_warp", "", "dist_shmem.cuh"},
    [IRD_SHMEM_SIGNAL_OP] = {"ts::shmem::signal_op", "", "dist_shmem.cuh"},
    [IRD_SHMEM_SIGNAL_WAIT_UNTIL] = {"ts::shmem::signal_wait_until", "", "dist_shmem.cuh"},
    [IRD_SHMEM_BARRIER_ALL] = {"ts::shmem::barrier_all", "", "dist_shmem.cuh"},
    [IRD_SHMEM_BARRIER_ALL_BLOCK] = {"ts::shmem::barrier_all_block", "", "dist_shmem.cuh"},
    [IRD_SHMEM_BARRIER_ALL_WARP] = {"ts::shmem::barrier_all_warp", "", "dist_shmem.cuh"},
    [IRD_SHMEM_SYNC_ALL] = {"ts::shmem::sync_all", "", "dist_shmem.cuh"},
    [IRD_SHMEM_SYNC_ALL_BLOCK] = {"ts::shmem::sync_all_block", "", "dist_shmem.cuh"},
    [IRD_SHMEM_SYNC_ALL_WARP] = {"ts::shmem::sync_all_warp", "", "dist_shmem.cuh"},
    [IRD_SHMEM_QUIET] = {"ts::shmem::quiet", "", "dist_shmem.cuh"},
    [IRD_SHMEM_FENCE] = {"ts::shmem::fence", "", "dist_shmem.cuh"},
    [IRD_SHMEM_BROADCAST] = {"ts::shmem::broadcast", "", "dist_shmem.cuh"},
    [IRD_SHMEM_BROADCAST_WARP] = {"ts::shmem::broadcast_warp", "", "dist_shmem.cuh"},
    [IRD_SHMEM_BROADCAST_BLOCK] = {"ts::shmem::broadcast_block", "", "dist_shmem.cuh"},
    [IRD_SHMEM_BROADCASTMEM_BLOCK] = {"ts::shmem::broadcastmem_block", "", "dist_shmem.cuh"},
    [IRD_SHMEM_FCOLLECT] = {"ts::shmem::fcollect", "", "dist_shmem.cuh"},
    [IRD_SHMEM_FCOLLECT_WARP] = {"ts::shmem::fcollect_warp", "", "dist_shmem.cuh"},
    [IRD_SHMEM_FCOLLECT_BLOCK] = {"ts::shmem::fcollect_block", "", "dist_shmem.cuh"},
};

/* Our own spelling, matched to device/tilescale/common.cuh (not dtype_cuda, so that the
 * two sides of the contract live next to each other). */
const char *cg_ctype(ts_dtype t) {
  switch (t) {
  case TS_DTYPE_BOOL: return "bool";
  case TS_DTYPE_INT8: return "int8_t";
  case TS_DTYPE_INT16: return "int16_t";
  case TS_DTYPE_INT32: return "int";
  case TS_DTYPE_INT64: return "int64_t";
  case TS_DTYPE_UINT8: return "uint8_t";
  case TS_DTYPE_UINT16: return "uint16_t";
  case TS_DTYPE_UINT32: return "uint32_t";
  case TS_DTYPE_UINT64: return "uint64_t";
  case TS_DTYPE_FLOAT16: return "half";
  case TS_DTYPE_BFLOAT16: return "__nv_bfloat16";
  case TS_DTYPE_FLOAT32: return "float";
  case TS_DTYPE_FLOAT64: return "double";
  case TS_DTYPE_FLOAT8_E4M3: return "__nv_fp8_e4m3";
  case TS_DTYPE_FLOAT8_E5M2: return "__nv_fp8_e5m2";
  /* 4-bit types in registers, one a byte (in memory they are packed: uint8_t + ts::ld4/st4) */
  case TS_DTYPE_INT4: return "ts::int4_t";
  case TS_DTYPE_UINT4: return "ts::uint4_t";
  case TS_DTYPE_FLOAT4_E2M1: return "ts::fp4_e2m1_t";
  case TS_DTYPE_VOID: return "void";
  default: return NULL;
  }
}

int cg_wgmma_width(const IrExpr *e) {
  switch (e->u.call.dop) {
  case IRD_GEMM_SS_WGMMA:
  case IRD_GEMM_SS_WGMMA_ISSUE:
  case IRD_GEMM_RS_WGMMA:
  case IRD_GEMM_RS_WGMMA_ISSUE: {
    const int64_t *a = e->u.call.attrs; /* M, N, K, WGM, WGN, ... (the 'iiiii' of the rows) */
    return e->u.call.nattrs >= 5 && a[4] > 0 ? (int)(a[1] / a[4]) : -1;
  }
  default: return 0;
  }
}

void cg_device_callee(StrBuf *sb, const IrExpr *e) {
  const CgDeviceAbi *abi = &cg_device_abi[e->u.call.dop];
  const int64_t *attr = e->u.call.attrs;
  int left = e->u.call.nattrs;
  const char *pct = strstr(abi->spelling, "%d");
  if (pct && left > 0) {
    sb_printf(sb, "%.*s%lld%s", (int)(pct - abi->spelling), abi->spelling, (long long)*attr, pct + 2);
    attr++;
    left--;
  } else {
    sb_append(sb, abi->spelling);
  }
  for (int i = 0; i < left && abi->template_args[i]; i++) {
    sb_append(sb, i ? ", " : "<");
    switch (abi->template_args[i]) {
    case 'b': sb_append(sb, attr[i] ? "true" : "false"); break;
    case 'S': {
      static const char *const sems[] = {"WEAK", "VOLATILE", "ACQUIRE", "RELEASE", "RELAXED"};
      sb_printf(sb, "ts::dist::Sem::%s", attr[i] >= 0 && attr[i] < 5 ? sems[attr[i]] : "RELAXED");
      break;
    }
    case 'C': {
      static const char *const scopes[] = {"CTA", "GPU", "SYS"};
      sb_printf(sb, "ts::dist::Scope::%s", attr[i] >= 0 && attr[i] < 3 ? scopes[attr[i]] : "SYS");
      break;
    }
    case 't': {
      const char *ty = cg_ctype((ts_dtype)attr[i]);
      sb_append(sb, ty ? ty : "half"); /* 16-bit operands of unknown type read as half */
      break;
    }
    default: sb_printf(sb, "%lld", (long long)attr[i]); break;
    }
  }
  if (left > 0 && abi->template_args[0]) sb_putc(sb, '>');
}
