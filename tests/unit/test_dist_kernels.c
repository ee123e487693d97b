/* test_dist_kernels.c — CPU tests of the distributed primitives as TileLang kernels: the
 * front end lowers each to the device library (ts::dist:: / ts::shmem::), the JIT includes
 * it, and NVRTC compiles the result for sm_90a (tests/dist/all_primitives.py uses every
 * primitive of both families; the examples/dist kernels are the distributed examples).  With NVSHMEM
 * on the machine, the NVSHMEM family is also linked with NVSHMEM's device library through
 * nvJitLink (skipped with the reason otherwise).  Misuse is a diagnostic, not an NVRTC error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <elf.h>

#include "../../src/distributed/dist.h"
#include "../../src/rt/jit.h"
#include "../../src/rt/kernel.h"
#include "test.h"

static ts_kernel *compile_file_p(TestCtx *t, ts_context *ctx, const char *path, const char *func, const char *arch,
                                 const ts_param *params, int nparams) {
  ts_program *p = NULL;
  if (ts_program_load_file(ctx, path, &p) != TS_OK) {
    fprintf(stderr, "  %s: %s\n", path, ts_last_error(ctx));
    t->failures++;
    return NULL;
  }
  ts_compile_options o = {sizeof o, arch, TS_COMPILER_NVRTC, 0, NULL, 0, NULL, 0, NULL};
  ts_kernel *k = NULL;
  if (ts_kernel_compile(p, func, params, nparams, &o, &k) != TS_OK) {
    fprintf(stderr, "  %s:%s (%s): %s\n", path, func, arch, ts_last_error(ctx));
    t->failures++;
    k = NULL;
  }
  ts_program_destroy(p);
  return k;
}

static ts_kernel *compile_file(TestCtx *t, ts_context *ctx, const char *path, const char *func, const char *arch) {
  return compile_file_p(t, ctx, path, func, arch, NULL, 0);
}

static bool nvrtc_here(void) {
  RtNvrtc nv = {0};
  StrBuf why = {0};
  bool ok = rt_nvrtc_open(&nv, &why);
  rt_nvrtc_close(&nv);
  sb_free(&why);
  return ok;
}

TEST(dist_all_primitives_nvrtc_sm90a) {
  if (!nvrtc_here()) {
    printf("  (skipped %s: NVRTC not available)\n", t->name);
    return;
  }
  ts_context *ctx = NULL;
  ts_context_options co = {.size = sizeof co, .disable_cache = 1};
  REQUIRE(ts_context_create(&co, &ctx) == TS_OK);
  ts_kernel *k = compile_file(t, ctx, "tests/dist/all_primitives.py", "everything", "sm_90a");
  if (k) {
    const char *cu = ts_kernel_text(k, TS_EMIT_CUDA), *ptx = ts_kernel_text(k, TS_EMIT_PTX);
    REQUIRE(cu && ptx);
    CHECK(strstr(cu, "ts::dist::put_block(&S[0], &B[") != NULL);
    CHECK(strstr(cu, "ts::dist::ld<ts::dist::Sem::ACQUIRE, ts::dist::Scope::SYS, false, false>(&flag[0]") != NULL);
    CHECK(strstr(cu, "ts::shmem::putmem_signal_nbi_block(") != NULL);
    CHECK(strstr(cu, "ts::shmem::signal_wait_until(&sig[1], 5,") != NULL); /* T.CmpType.GE = 5 */
    /* what the kernel uses travels from codegen as data (the JIT adds the dist header and,
     * on the nvshmem backend, links NVSHMEM by these flags) */
    CHECK(k->uses_dist && k->uses_shmem);
    /* a shared tile written by T.copy and read by put_block: a barrier in between */
    const char *copy = strstr(cu, "S[(int)threadIdx.x] = ");
    const char *put = strstr(cu, "ts::dist::put_block(&S[0]");
    CHECK(copy && put && strstr(copy, "__syncthreads()") && strstr(copy, "__syncthreads()") < put);
    CHECK(strstr(ptx, "st.release.sys") != NULL);
    CHECK(strstr(ptx, "ld.acquire.sys") != NULL);
    CHECK(strstr(ptx, "ld.global.nc.L1::no_allocate") != NULL);
    CHECK(strstr(ptx, "atom.add.release.sys") != NULL);
    CHECK(strstr(ptx, "fence.acq_rel.sys") != NULL);
    CHECK(strstr(ptx, "elect.sync") != NULL);
    CHECK(strstr(ptx, "ts_dist_meta") != NULL);
    ts_kernel_destroy(k);
  }
  static const char *const examples[][2] = {
      {"examples/dist/ring_shift.py", "ring_shift"},
      {"examples/dist/allgather_putmem.py", "allgather_putmem"},
      {"examples/dist/allgather_put_block.py", "allgather_put_block"},
      {"examples/dist/all_to_all_signal.py", "all_to_all_signal"},
      {"examples/dist/pre_attn_all2all.py", "pre_attn_all2all"},
      {"examples/dist/post_attn_all2all_transpose.py", "post_attn_all2all_transpose"},
  };
  for (int i = 0; i < TS_ARRAY_LEN(examples); i++) {
    ts_kernel *e = compile_file(t, ctx, examples[i][0], examples[i][1], "sm_90a");
    if (e) ts_kernel_destroy(e);
  }
  ts_context_destroy(ctx);
}

/* The nvshmem backend: TILESCALE_NVSHMEM, LTO-IR, nvJitLink with libnvshmem_device. */
TEST(dist_nvshmem_family_nvjitlink) {
  RtNvshmemPaths p = {0};
  StrBuf why = {0};
  bool found = rt_nvshmem_find(&p, &why) && sb_str(&p.include_dir)[0] && sb_str(&p.device_bc)[0];
  rt_nvshmem_paths_free(&p);
  if (!found || !nvrtc_here()) {
    printf("  (skipped %s: %s)\n", t->name, found ? "NVRTC not available" : "NVSHMEM not on this machine");
    sb_free(&why);
    return;
  }
  sb_free(&why);
  const char *old = getenv("TILESCALE_DIST_BACKEND");
  char *saved = old ? ts_strdup(old) : NULL;
  setenv("TILESCALE_DIST_BACKEND", "nvshmem", 1);
  ts_context *ctx = NULL;
  ts_context_options co = {.size = sizeof co, .disable_cache = 1};
  REQUIRE(ts_context_create(&co, &ctx) == TS_OK);
  ts_kernel *k = compile_file(t, ctx, "examples/dist/all_to_all_signal.py", "all_to_all_signal", "sm_90a");
  if (k) {
    const void *bin = NULL;
    size_t n = 0;
    CHECK(ts_kernel_binary(k, &bin, &n) == TS_OK && n > 0);
    /* what the runtime fills in at load: NVSHMEM's state (nvshmemx_cumodule_init, which also
       reads the library version) and our heap table, all found by name after the LTO link */
    CHECK(rt_cubin_symbol(bin, n, "nvshmemi_device_state_d") == RT_CUBIN_SYM_GLOBAL);
    CHECK(rt_cubin_symbol(bin, n, "nvshmemi_device_lib_version_d") == RT_CUBIN_SYM_GLOBAL);
    CHECK(rt_cubin_symbol(bin, n, "ts_dist_meta") == RT_CUBIN_SYM_GLOBAL);
    ts_kernel_destroy(k);
  }
  /* Both attention all-to-alls (the post one puts from a shared-memory tile) link too, and
     keep the symbols the module load fills in. */
  static const char *const attn[][2] = {{"examples/dist/pre_attn_all2all.py", "pre_attn_all2all"},
                                        {"examples/dist/post_attn_all2all_transpose.py", "post_attn_all2all_transpose"}};
  for (int i = 0; i < TS_ARRAY_LEN(attn); i++) {
    ts_kernel *a = compile_file(t, ctx, attn[i][0], attn[i][1], "sm_90a");
    if (!a) continue;
    const void *bin = NULL;
    size_t n = 0;
    CHECK(ts_kernel_binary(a, &bin, &n) == TS_OK && n > 0);
    CHECK(rt_cubin_symbol(bin, n, "nvshmemi_device_state_d") == RT_CUBIN_SYM_GLOBAL);
    CHECK(rt_cubin_symbol(bin, n, "ts_dist_meta") == RT_CUBIN_SYM_GLOBAL);
    CHECK(rt_cubin_symbol(bin, n, attn[i][1]) == RT_CUBIN_SYM_ABSENT); /* the kernel is <name>_kernel */
    ts_kernel_destroy(a);
  }
  /* The LTO link keeps the workspaces (the runtime finds them by name to zero them). */
  ts_kernel *w = compile_file(t, ctx, "tests/dist/workspace.py", "gpu_barrier", "sm_90a");
  if (w) {
    const void *bin = NULL;
    size_t n = 0;
    CHECK(ts_kernel_binary(w, &bin, &n) == TS_OK && n > 0);
    CHECK(rt_cubin_symbol(bin, n, "gpu_barrier_kernel_ws_bar") != RT_CUBIN_SYM_ABSENT);
    CHECK(rt_cubin_symbol(bin, n, "gpu_barrier_kernel_ws_bar2") != RT_CUBIN_SYM_ABSENT);
    ts_kernel_destroy(w);
  }
  ts_context_destroy(ctx);
  if (saved) setenv("TILESCALE_DIST_BACKEND", saved, 1);
  else unsetenv("TILESCALE_DIST_BACKEND");
  ts_free(saved);
}

/* T.alloc_global / T.alloc_barrier_gpu: module-scope storage with C linkage, one symbol per
 * kernel and buffer, recorded in the launch metadata with its size (the runtime zeroes it
 * before each launch); a plain kernel (no distributed op) may use one too. */
TEST(workspace_codegen_and_metadata) {
  if (!nvrtc_here()) {
    printf("  (skipped %s: NVRTC not available)\n", t->name);
    return;
  }
  ts_context *ctx = NULL;
  ts_context_options co = {.size = sizeof co, .disable_cache = 1};
  REQUIRE(ts_context_create(&co, &ctx) == TS_OK);
  ts_kernel *k = compile_file(t, ctx, "tests/dist/workspace.py", "scratch_sum", "sm_90a");
  if (k) {
    const char *cu = ts_kernel_text(k, TS_EMIT_CUDA);
    REQUIRE(cu);
    CHECK(strstr(cu, "extern \"C\" {\n__device__ __align__(16) int scratch_sum_kernel_ws_part[192];\n}") != NULL);
    CHECK(strstr(cu, "int* part = scratch_sum_kernel_ws_part;") != NULL);
    CHECK(strstr(cu, "uint32_t* bar = scratch_sum_kernel_ws_bar;") != NULL);
    CHECK(strstr(cu, "ts::dist::sync_barrier_gpu(&bar[0]);") != NULL);
    REQUIRE(k->nlaunches == 1);
    const RtLaunch *l = &k->launches[0];
    REQUIRE(l->nworkspaces == 3);
    CHECK(!strcmp(l->workspaces[0].symbol, "scratch_sum_kernel_ws_part") && l->workspaces[0].bytes == 2 * 96 * 4);
    CHECK(!strcmp(l->workspaces[1].symbol, "scratch_sum_kernel_ws_acc") && l->workspaces[1].bytes == 4);
    CHECK(!strcmp(l->workspaces[2].symbol, "scratch_sum_kernel_ws_bar") && l->workspaces[2].bytes == 4);
    /* atomic sums and a GPU barrier count up from 0: all three are zeroed before each launch */
    for (int i = 0; i < 3; i++) CHECK(l->workspaces[i].zero);
    const void *bin = NULL;
    size_t n = 0;
    CHECK(ts_kernel_binary(k, &bin, &n) == TS_OK && n > 0);
    for (int i = 0; i < 3; i++) CHECK(rt_cubin_symbol(bin, n, l->workspaces[i].symbol) != RT_CUBIN_SYM_ABSENT);
    ts_kernel_destroy(k);
  }
  /* Two kernels of one function, each with a workspace named `ws`: two symbols. */
  const char *src = "import tilelang.language as T\n"
                    "@T.prim_func\n"
                    "def two(A: T.Tensor((64,), 'float32')):\n"
                    "    with T.Kernel(2, threads=64) as bx:\n"
                    "        ws = T.alloc_global((64,), 'float32')\n"
                    "        tx = T.get_thread_binding()\n"
                    "        ws[tx] = A[tx] * 2.0\n"
                    "        A[tx] = ws[63 - tx]\n"
                    "    with T.Kernel(1, threads=64) as bx:\n"
                    "        ws = T.alloc_global((4, 8), 'float16')\n"
                    "        tx = T.get_thread_binding()\n"
                    "        ws[tx % 4, tx // 8] = T.float16(1)\n"
                    "        A[tx] = T.float32(ws[0, tx % 8])\n";
  ts_program *p = NULL;
  REQUIRE(ts_program_load_source(ctx, "two.py", src, &p) == TS_OK);
  ts_compile_options o = {sizeof o, "sm_90a", TS_COMPILER_NVRTC, 0, NULL, 0, NULL, 0, NULL};
  ts_kernel *k2 = NULL;
  if (ts_kernel_compile(p, "two", NULL, 0, &o, &k2) != TS_OK) {
    fprintf(stderr, "  two: %s\n", ts_last_error(ctx));
    t->failures++;
  } else {
    const char *cu = ts_kernel_text(k2, TS_EMIT_CUDA);
    CHECK(strstr(cu, "float two_kernel_0_ws_ws[64];") != NULL);
    CHECK(strstr(cu, "half two_kernel_1_ws_ws[32];") != NULL);
    CHECK(strstr(cu, "ts::dist") == NULL); /* no distributed op: no device library */
    CHECK(!k2->uses_dist && !k2->uses_shmem && !k2->cooperative);
    REQUIRE(k2->nlaunches == 2);
    CHECK(k2->launches[0].nworkspaces == 1 && k2->launches[0].workspaces[0].bytes == 256);
    CHECK(k2->launches[1].nworkspaces == 1 && k2->launches[1].workspaces[0].bytes == 64);
    CHECK(k2->launches[0].workspaces[0].zero);  /* read back (ws[63 - tx]) in its kernel */
    CHECK(k2->launches[1].workspaces[0].zero);  /* read where other threads did not write */
    ts_kernel_destroy(k2);
  }
  ts_program_destroy(p);
  ts_context_destroy(ctx);
}

TEST(dist_primitive_misuse_is_diagnosed) {
  static const struct {
    const char *stmt, *message;
  } cases[] = {
      {"T.ld(F[0], v, sem='acquire', nc=True)", "non-coherent loads (nc=True) are weak"},
      {"T.ld(F[0], v, sem='volatile', na=True)", "volatile accesses take no L1::no_allocate hint"},
      {"T.st(S[0], 1.0, na=True)", "na=True needs global memory"},
      {"T.put_block(T.address_of(A[0]), T.address_of(F[0]), 4, dst_pe=1)", "must have the same element type"},
      {"T.put_block(T.address_of(A[0]), T.address_of(S[0]), 4, dst_pe=1)", "a global (symmetric) buffer"},
      {"T.signal_op(T.address_of(F[0]), 1, 9, 1)", "sig_addr must point into a global uint64 buffer"},
      {"T.wait_eq(A[0], 1)", "must be a 32- or 64-bit integer"},
      {"T.barrier_blocks(A[0])", "must be a global int32 buffer"},
      {"T.shuffle_elect(48)", "a multiple of 32"},
      {"T.fcollect(T.Team.NODE, A, A, 4)", "only the world team"},
  };
  ts_context *ctx = NULL;
  ts_context_options co = {.size = sizeof co, .disable_cache = 1};
  REQUIRE(ts_context_create(&co, &ctx) == TS_OK);
  for (int i = 0; i < TS_ARRAY_LEN(cases); i++) {
    StrBuf src = {0};
    sb_printf(&src,
              "import tilelang.language as T\n"
              "@T.prim_func\n"
              "def k(A: T.Tensor((64,), 'float32'), F: T.Tensor((64,), 'int32')):\n"
              "    with T.Kernel(1, threads=32) as bx:\n"
              "        S = T.alloc_shared((64,), 'float32')\n"
              "        v = T.alloc_var('int32')\n"
              "        %s\n",
              cases[i].stmt);
    ts_program *p = NULL;
    REQUIRE(ts_program_load_source(ctx, "k.py", sb_str(&src), &p) == TS_OK);
    ts_compile_options o = {sizeof o, "sm_90a", TS_COMPILER_NVRTC, 1, NULL, 0, NULL, 0, NULL};
    ts_kernel *k = NULL;
    ts_status s = ts_kernel_compile(p, "k", NULL, 0, &o, &k);
    CHECK(s == TS_ERR_COMPILE);
    if (!strstr(ts_last_error(ctx), cases[i].message)) {
      fprintf(stderr, "  %s: expected '%s' in: %s\n", cases[i].stmt, cases[i].message, ts_last_error(ctx));
      t->failures++;
    }
    if (k) ts_kernel_destroy(k);
    ts_program_destroy(p);
    sb_free(&src);
  }
  ts_context_destroy(ctx);
}

/* A minimal ELF64 image with one symbol table: `local` defined with local binding, `undef`
 * only referenced (undefined), `global` defined globally. */
static size_t tiny_elf(unsigned char *buf, size_t cap, const char *local, const char *undef, const char *global) {
  char strtab[128] = {0};
  size_t sl = 1;
  const char *names[3] = {local, undef, global};
  Elf64_Sym syms[4];
  memset(syms, 0, sizeof syms);
  for (int i = 0; i < 3; i++) {
    syms[i + 1].st_name = (Elf64_Word)sl;
    memcpy(strtab + sl, names[i], strlen(names[i]) + 1);
    sl += strlen(names[i]) + 1;
  }
  syms[1].st_info = ELF64_ST_INFO(STB_LOCAL, STT_OBJECT), syms[1].st_shndx = 1;
  syms[2].st_info = ELF64_ST_INFO(STB_GLOBAL, STT_OBJECT), syms[2].st_shndx = SHN_UNDEF;
  syms[3].st_info = ELF64_ST_INFO(STB_GLOBAL, STT_OBJECT), syms[3].st_shndx = 1;
  Elf64_Ehdr eh;
  memset(&eh, 0, sizeof eh);
  memcpy(eh.e_ident, ELFMAG, SELFMAG);
  eh.e_ident[EI_CLASS] = ELFCLASS64;
  eh.e_shentsize = sizeof(Elf64_Shdr);
  eh.e_shnum = 3; /* null, symtab, strtab */
  size_t sym_off = sizeof eh, str_off = sym_off + sizeof syms, sh_off = str_off + sl;
  eh.e_shoff = sh_off;
  Elf64_Shdr sh[3];
  memset(sh, 0, sizeof sh);
  sh[1].sh_type = SHT_SYMTAB, sh[1].sh_offset = sym_off, sh[1].sh_size = sizeof syms;
  sh[1].sh_entsize = sizeof(Elf64_Sym), sh[1].sh_link = 2;
  sh[2].sh_type = SHT_STRTAB, sh[2].sh_offset = str_off, sh[2].sh_size = sl;
  size_t total = sh_off + sizeof sh;
  if (total > cap) return 0;
  memcpy(buf, &eh, sizeof eh);
  memcpy(buf + sym_off, syms, sizeof syms);
  memcpy(buf + str_off, strtab, sl);
  memcpy(buf + sh_off, sh, sizeof sh);
  return total;
}

/* The symbol check the JIT runs on every distributed image (and ts_dist_kernel_attach on a
 * kernel's binary): real NVRTC images, a hand-made one, and malformed input. */
TEST(dist_cubin_symbol_check) {
  unsigned char img[1024];
  size_t n = tiny_elf(img, sizeof img, "ts_dist_meta", "nvshmemi_device_state_d", "k_kernel");
  REQUIRE(n > 0);
  CHECK(rt_cubin_symbol(img, n, "ts_dist_meta") == RT_CUBIN_SYM_LOCAL);
  CHECK(rt_cubin_symbol(img, n, "nvshmemi_device_state_d") == RT_CUBIN_SYM_ABSENT); /* only referenced */
  CHECK(rt_cubin_symbol(img, n, "k_kernel") == RT_CUBIN_SYM_GLOBAL);
  CHECK(rt_cubin_symbol(img, n, "ts_dist") == RT_CUBIN_SYM_ABSENT);          /* a prefix is not the name */
  CHECK(rt_cubin_symbol(img, n, "ts_dist_meta_x") == RT_CUBIN_SYM_ABSENT);
  /* truncations never read past the image */
  for (size_t cut = 0; cut < n; cut += 7) CHECK(rt_cubin_symbol(img, cut, "k_kernel") == RT_CUBIN_SYM_BAD_ELF);
  CHECK(rt_cubin_symbol(NULL, 0, "k_kernel") == RT_CUBIN_SYM_BAD_ELF);
  CHECK(rt_cubin_symbol("not an ELF image at all, but long enough to hold a header.......", 64, "x") ==
        RT_CUBIN_SYM_BAD_ELF);
  if (!nvrtc_here()) {
    printf("  (real images skipped in %s: NVRTC not available)\n", t->name);
    return;
  }
  ts_context *ctx = NULL;
  ts_context_options co = {.size = sizeof co, .disable_cache = 1};
  REQUIRE(ts_context_create(&co, &ctx) == TS_OK);
  ts_kernel *k = compile_file(t, ctx, "examples/dist/ring_shift.py", "ring_shift", "sm_90a");
  if (k) {
    const void *bin = NULL;
    size_t bn = 0;
    REQUIRE(ts_kernel_binary(k, &bin, &bn) == TS_OK);
    RtCubinSym s = rt_cubin_symbol(bin, bn, "ts_dist_meta");
    CHECK(s == RT_CUBIN_SYM_LOCAL || s == RT_CUBIN_SYM_GLOBAL);
    CHECK(rt_cubin_symbol(bin, bn, "ring_shift_kernel") == RT_CUBIN_SYM_GLOBAL);
    CHECK(rt_cubin_symbol(bin, bn, "nvshmemi_device_state_d") == RT_CUBIN_SYM_ABSENT);
    ts_kernel_destroy(k);
  }
  ts_context_destroy(ctx);
}

/* The read-back check of a module's NVSHMEM device state after nvshmemx_cumodule_init: a
 * module that NVSHMEM skipped (its registry still held the address of an unloaded module)
 * kept a zero state, which ran as pe 0 with no heap. */
TEST(dist_nvshmem_state_readback_check) {
  StrBuf why = {0};
  int zero[4] = {0, 0, 0, 0};
  CHECK(!dist_nvshmem_state_ok(zero, sizeof zero, 1, 2, &why));
  CHECK(strstr(sb_str(&why), "zeros") != NULL);
  sb_free(&why);
  int v1 = (1 << 16) + 776;
  int good[4] = {v1, 1, 2, 1};
  CHECK(dist_nvshmem_state_ok(good, sizeof good, 1, 2, &why));
  int r0[4] = {v1, 0, 2, 0};
  CHECK(dist_nvshmem_state_ok(r0, sizeof r0, 0, 2, &why));
  CHECK(!dist_nvshmem_state_ok(r0, sizeof r0, 1, 2, &why)); /* rank 1 reading pe 0 */
  CHECK(strstr(sb_str(&why), "pe 0 of 2") && strstr(sb_str(&why), "rank 1 of 2"));
  sb_free(&why);
  int other[4] = {(1 << 16) + 800, 5, 9, 0}; /* another layout: "written" is all that is known */
  CHECK(dist_nvshmem_state_ok(other, sizeof other, 1, 2, &why));
  CHECK(!dist_nvshmem_state_ok(zero, 2, 0, 1, &why)); /* a short read is zero-filled, not overrun */
  sb_free(&why);
}

/* The GPU tests of make check-dist (tests/dist/dist_prims.c, wait_timeout.c): every kernel
 * they compile at run time, with every parameter combination they use, compiles here for
 * sm_90a, and the PTX holds the instruction each variant stands for. */
TEST(dist_gpu_test_kernels_nvrtc_sm90a) {
  if (!nvrtc_here()) {
    printf("  (skipped %s: NVRTC not available)\n", t->name);
    return;
  }
  ts_context *ctx = NULL;
  ts_context_options co = {.size = sizeof co, .disable_cache = 1};
  REQUIRE(ts_context_create(&co, &ctx) == TS_OK);
  /* ld/st matrix: every store and load form, in both widths and both directions */
  static const char *const ldst_ptx[] = {"st.weak.b", "st.weak.global.L1::no_allocate.b", "st.volatile.b",
                                         "st.release.cta.b", "st.release.sys.global.L1::no_allocate.b",
                                         "st.relaxed.gpu.global.L1::no_allocate.b", "ld.weak.b",
                                         "ld.weak.global.L1::no_allocate.b", "ld.global.nc.b",
                                         "ld.global.nc.L1::no_allocate.b", "ld.volatile.b", "ld.acquire.cta.b",
                                         "ld.acquire.gpu.global.L1::no_allocate.b", "ld.relaxed.sys.b",
                                         "ld.relaxed.cta.global.L1::no_allocate.b"};
  for (int w = 0; w < 2; w++)
    for (int remote = 0; remote < 2; remote++) {
      ts_param p[] = {{"dtype", w ? "\"uint64\"" : "\"int32\""}, {"remote_st", remote ? "True" : "False"}};
      ts_kernel *k = compile_file_p(t, ctx, "tests/dist/ldst_matrix.py", "ldst_matrix", "sm_90a", p, 2);
      if (!k) continue;
      const char *cu = ts_kernel_text(k, TS_EMIT_CUDA), *ptx = ts_kernel_text(k, TS_EMIT_PTX);
      REQUIRE(cu && ptx);
      for (int i = 0; i < TS_ARRAY_LEN(ldst_ptx); i++) {
        char want[96];
        snprintf(want, sizeof want, "%s%s", ldst_ptx[i], w ? "64" : "32");
        if (!strstr(ptx, want)) {
          fprintf(stderr, "  ldst_matrix(%s, remote_st=%d): no '%s' in the PTX\n", w ? "uint64" : "int32", remote, want);
          t->failures++;
        }
      }
      /* 21 stores, one per variant (the flag store is the 22nd), and 27 loads */
      int st = 0, ld = 0;
      for (const char *q = cu; (q = strstr(q, "ts::dist::st<")); q++) st++;
      for (const char *q = cu; (q = strstr(q, "ts::dist::ld<")); q++) ld++;
      CHECK(st == 22 && ld == 27);
      CHECK(strstr(cu, remote ? "(int64_t)right);" : "(int64_t)left);") != NULL);
      ts_kernel_destroy(k);
    }
  /* waits on 32- and 64-bit flags, local and remote */
  for (int w = 0; w < 2; w++)
    for (int remote = 0; remote < 2; remote++) {
      ts_param p[] = {{"dtype", w ? "\"uint64\"" : "\"int32\""}, {"remote_wait", remote ? "True" : "False"}};
      ts_kernel *k = compile_file_p(t, ctx, "tests/dist/waits.py", "waits", "sm_90a", p, 2);
      if (!k) continue;
      const char *cu = ts_kernel_text(k, TS_EMIT_CUDA), *ptx = ts_kernel_text(k, TS_EMIT_PTX);
      REQUIRE(cu && ptx);
      static const char *const waits[] = {"wait_eq", "wait_ne", "wait_ge", "wait_le", "wait_gt", "wait_lt"};
      for (int i = 0; i < 6; i++) {
        char want[64];
        snprintf(want, sizeof want, "ts::dist::%s(&F[%d]", waits[i], i * (w ? 16 : 32));
        CHECK(strstr(cu, want) != NULL);
      }
      CHECK(strstr(ptx, w ? "ld.acquire.sys.b64" : "ld.acquire.sys.b32") != NULL);
      ts_kernel_destroy(k);
    }
  ts_kernel *k = compile_file(t, ctx, "tests/dist/waits.py", "signals", "sm_90a");
  if (k) {
    const char *cu = ts_kernel_text(k, TS_EMIT_CUDA);
    CHECK(strstr(cu, "ts::shmem::signal_op(&Sig[1], (uint64_t)1ull, 10, p)") != NULL); /* SIGNAL_ADD */
    CHECK(strstr(cu, "ts::shmem::signal_wait_until(&Sig[5], 1,") != NULL);             /* CmpType.NE */
    CHECK(strstr(cu, "ts::shmem::signal_wait_until(&Sig[3], 3,") != NULL);             /* CmpType.LE */
    ts_kernel_destroy(k);
  }
  /* barriers: sync_blocks has no fence; sync_grid kernels (and only they) launch cooperatively */
  for (int fence = 0; fence < 2; fence++) {
    ts_param p[] = {{"fence", fence ? "True" : "False"}};
    k = compile_file_p(t, ctx, "tests/dist/barriers.py", "barrier_reuse", "sm_90a", p, 1);
    if (!k) continue;
    CHECK(strstr(k->cuda_source, fence ? "ts::dist::barrier_blocks(&bar[0])" : "ts::dist::sync_blocks(&bar[0])"));
    CHECK(!k->cooperative);
    ts_kernel_destroy(k);
  }
  static const char *const nbs[] = {"64", "100000"};
  for (int i = 0; i < 2; i++) {
    ts_param p[] = {{"nb", nbs[i]}};
    k = compile_file_p(t, ctx, "tests/dist/barriers.py", "grid_sync", "sm_90a", p, 1);
    if (!k) continue;
    CHECK(k->cooperative);
    CHECK(strstr(ts_kernel_text(k, TS_EMIT_PTX), "atom.add.release.gpu.u32") != NULL);
    ts_kernel_destroy(k);
  }
  for (int mode = 0; mode < 2; mode++) {
    ts_param p[] = {{"mode", mode ? "1" : "0"}};
    k = compile_file_p(t, ctx, "tests/dist/timeout.py", "stuck", "sm_90a", p, 1);
    if (!k) continue;
    CHECK(strstr(k->cuda_source, mode ? "ts::dist::barrier_blocks(&bar[0])" : "ts::dist::wait_eq(&flag[1]"));
    ts_kernel_destroy(k);
  }
  /* a wait one thread makes gates the whole block (tests/dist/gated.py) */
  k = compile_file(t, ctx, "tests/dist/gated.py", "gated_copy", "sm_90a");
  if (k) {
    const char *w = strstr(k->cuda_source, "ts::dist::wait_ge("), *b = w ? strstr(w, "__syncthreads();") : NULL;
    const char *rd = w ? strstr(w, "In[") : NULL;
    CHECK(w && b && rd && b < rd);
    ts_kernel_destroy(k);
  }
  k = compile_file(t, ctx, "tests/dist/gated.py", "gated_rounds", "sm_90a");
  if (k) { /* the wait ends the loop body: the barrier after it, still inside the loop */
    const char *w = strstr(k->cuda_source, "ts::dist::wait_ge("), *b = w ? strstr(w, "__syncthreads();") : NULL;
    const char *close = w ? strstr(w, "\n  }\n") : NULL; /* the loop's closing brace */
    CHECK(w && b && close && b < close);
    ts_kernel_destroy(k);
  }
  k = compile_file(t, ctx, "tests/dist/gated.py", "gated_gemm", "sm_90a");
  if (k) { /* warp-specialized: the TMA producer waits, then fences the async proxy, then loads */
    const char *cu = k->cuda_source, *prod = strstr(cu, "setmaxnreg_dec");
    const char *w = prod ? strstr(prod, "ts::dist::wait_eq(&sig[") : NULL;
    const char *f = w ? strstr(w, "ts::dist::fence_async_global();") : NULL, *ld = f ? strstr(f, "tma_load_2d(A_") : NULL;
    const char *cons = strstr(cu, "setmaxnreg_inc");
    CHECK(prod && w && f && ld && cons && ld < cons);
    /* the consumers read only what the producer loads after its wait: no wait of their own */
    CHECK(cons && !strstr(cons, "wait_eq("));
    ts_kernel_destroy(k);
  }
  k = compile_file(t, ctx, "tests/dist/gated.py", "gated_gemm_bias", "sm_90a");
  if (k) { /* consumers that read global memory themselves (a bias) keep their wait */
    const char *cons = strstr(k->cuda_source, "setmaxnreg_inc");
    const char *pw = strstr(k->cuda_source, "setmaxnreg_dec");
    CHECK(pw && strstr(pw, "wait_eq(") && cons && strstr(cons, "wait_eq("));
    ts_kernel_destroy(k);
  }
  k = compile_file(t, ctx, "tests/dist/gated.py", "counted_gemm", "sm_90a");
  if (k) { /* 1-D grid made persistent; the tile's TMA store has landed before the count */
    const char *cu = k->cuda_source, *cons = strstr(cu, "setmaxnreg_inc");
    const char *loop = cons ? strstr(cons, "for (int tile_iter") : NULL, *st = loop ? strstr(loop, "tma_store_2d(") : NULL;
    const char *w = st ? strstr(st, "ts::tma_store_wait<0>();") : NULL;
    const char *f = w ? strstr(w, "ts::dist::fence_async_global();") : NULL;
    const char *bar = f ? strstr(f, "named_barrier_sync<1, 256>();") : NULL, *at = bar ? strstr(bar, "atom_add") : NULL;
    CHECK(k->nlaunches == 1 && k->launches[0].persistent && loop && st && w && f && bar && at);
    ts_kernel_destroy(k);
  }
  ts_param no_count[] = {{"count_tiles", "False"}};
  k = compile_file_p(t, ctx, "tests/dist/gated.py", "counted_gemm", "sm_90a", no_count, 1);
  if (k) { /* persistent, overlapped epilogue: the store names the tile's lets, written out so
            * the previous tile is stored at its own coordinates (bid_p), the last at bid_l */
    const char *cu = k->cuda_source;
    CHECK(k->launches[0].persistent && strstr(cu, "C_l_pack") && !strstr(cu, "atom_add"));
    const char *prev = strstr(cu, "const int bid_p ="), *st = prev ? strstr(prev, "tma_store_2d(") : NULL;
    const char *eol = st ? strchr(st, '\n') : NULL;
    CHECK(st && eol && memmem(st, (size_t)(eol - st), "bid_p", 5) && !memmem(st, (size_t)(eol - st), "pid_m", 5));
    ts_kernel_destroy(k);
  }
  ts_context_destroy(ctx);

  /* the hand-written kernels of prims.cu, through the runtime's JIT as dist_prims.c does */
  FILE *f = fopen("tests/dist/prims.cu", "rb");
  REQUIRE(f != NULL);
  StrBuf src = {0};
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) sb_appendn(&src, buf, n);
  fclose(f);
  RtNvrtc nv = {0};
  StrBuf err = {0};
  RtJitInput in = {0};
  RtJitOutput out = {0};
  in.source = sb_str(&src);
  in.name = "prims.cu";
  in.target = (TsTarget){90, true};
  in.headers = ts_device_headers;
  in.nheaders = ts_device_headers_count;
  if (rt_jit_compile(&nv, &in, &out, &err) != TS_OK) {
    fprintf(stderr, "  prims.cu: %s\n", sb_str(&err));
    t->failures++;
  } else {
    REQUIRE(out.ptx != NULL);
    static const char *const want[] = {".entry copy_u8", ".entry copy_u16", ".entry copy_u32", ".entry copy_u64",
                                       ".entry copy_u128", ".entry atom_every_rank", "atom.add.relaxed.sys.u32",
                                       "atom.add.release.sys.u32", "atom.add.acquire.sys.u32",
                                       "atom.add.acq_rel.sys.u32", "atom.add.relaxed.sys.u64"};
    for (int i = 0; i < TS_ARRAY_LEN(want); i++)
      if (!strstr(out.ptx, want[i])) {
        fprintf(stderr, "  prims.cu: no '%s' in the PTX\n", want[i]);
        t->failures++;
      }
    CHECK(rt_cubin_symbol(out.cubin, out.cubin_size, "copy_u128") == RT_CUBIN_SYM_GLOBAL);
  }
  rt_jit_output_free(&out);
  rt_nvrtc_close(&nv);
  sb_free(&err);
  sb_free(&src);
}
