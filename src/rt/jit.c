/* jit.c — NVRTC and nvcc back ends of the JIT (see jit.h).
 *
 * Every NVRTC call goes through NVRTC_CHECK, which records the call, its code and
 * nvrtcGetErrorString in the error buffer and jumps to the function's cleanup label.
 *
 * Distributed kernels (the source calls ts::dist:: or ts::shmem::) get the device library
 * dist_shmem.cuh included, and TILESCALE_WAIT_TIMEOUT_MS defined from the environment.
 * When the NVSHMEM family is used, the context's distributed backend is nvshmem
 * (RtJitInput.link_nvshmem: ts_dist_init's choice, before it $TILESCALE_DIST_BACKEND) and
 * NVSHMEM is found, NVRTC emits LTO-IR with TILESCALE_NVSHMEM defined (ts::shmem:: then forwards to nvshmem_*) and nvJitLink links it
 * with libnvshmem_device.bc into the cubin; otherwise ts::shmem:: is the ipc implementation,
 * which is correct within a node on either backend. */
#include "jit.h"

#include <nvJitLink.h>

#include "nvshmem_paths.h"

#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define RT_STR2(x) #x
#define RT_STR(x) RT_STR2(x)

static const char *cuda_home(void) {
  const char *h = getenv("CUDA_HOME");
  if (!h || !*h) h = getenv("CUDA_PATH");
  return (h && *h) ? h : "/usr/local/cuda";
}

/* ---- loading NVRTC ------------------------------------------------------------------ */
static bool nvrtc_try(RtNvrtc *n, const char *path, StrBuf *why) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *e = dlerror();
    sb_printf(why, "\n  %s: %s", path, e ? e : "not found");
    return false;
  }
  RtNvrtc t;
  memset(&t, 0, sizeof t);
  t.handle = h;
#define RT_NVRTC_LOAD(fn)                                          \
  *(void **)&t.fn = dlsym(h, RT_STR(fn));                          \
  if (!t.fn) {                                                     \
    sb_printf(why, "\n  %s: lacks %s", path, RT_STR(fn));          \
    dlclose(h);                                                    \
    return false;                                                  \
  }
  RT_NVRTC_FUNCS(RT_NVRTC_LOAD)
#undef RT_NVRTC_LOAD
  *n = t;
  return true;
}

bool rt_nvrtc_open(RtNvrtc *n, StrBuf *why) {
  if (n->handle) return true;
  memset(n, 0, sizeof *n);
  StrBuf tried = {0};
  char home_lib[4096];
  snprintf(home_lib, sizeof home_lib, "%s/lib64/libnvrtc.so", cuda_home());
  const char *paths[] = {"libnvrtc.so.13", "libnvrtc.so", home_lib};
  for (int i = 0; i < TS_ARRAY_LEN(paths); i++) {
    if (nvrtc_try(n, paths[i], &tried)) {
      sb_free(&tried);
      return true;
    }
  }
  sb_printf(why, "NVRTC could not be loaded; tried:%s", sb_str(&tried));
  sb_free(&tried);
  return false;
}

void rt_nvrtc_close(RtNvrtc *n) {
  /* The library stays mapped: NVRTC's C++ runtime keeps process-wide allocations that
   * would be orphaned (and reported by LeakSanitizer) by dlclose, and a later context
   * reloads it for free (each open adds one reference that is never dropped). */
  memset(n, 0, sizeof *n);
}

/* ---- targets and options ---------------------------------------------------------- */
const char *rt_target_arch(TsTarget t, char *buf, size_t n) {
  snprintf(buf, n, "sm_%d%s", t.sm, t.arch_a ? "a" : "");
  return buf;
}

/* ---- distributed kernels ------------------------------------------------------------ */
typedef struct DistJit {
  bool uses;         /* calls the distributed device library */
  bool nvshmem;      /* link with NVSHMEM's device library */
  int timeout_ms;    /* TILESCALE_WAIT_TIMEOUT_MS, 0: off */
  char inc[4096], bc[4096];
} DistJit;

static void dist_jit_config(const RtJitInput *in, DistJit *dj) {
  memset(dj, 0, sizeof *dj);
  dj->uses = in->uses_dist;
  if (!dj->uses) return;
  const char *t = getenv("TILESCALE_WAIT_TIMEOUT_MS");
  if (t && *t) {
    long v = strtol(t, NULL, 10);
    dj->timeout_ms = v > 0 && v < 1000000000 ? (int)v : 0;
  }
  if (!in->uses_shmem || !in->link_nvshmem || in->compiler != TS_COMPILER_NVRTC) return;
  RtNvshmemPaths p = {0};
  StrBuf why = {0};
  if (rt_nvshmem_find(&p, &why) && sb_str(&p.include_dir)[0] && sb_str(&p.device_bc)[0]) {
    snprintf(dj->inc, sizeof dj->inc, "-I%s", sb_str(&p.include_dir));
    snprintf(dj->bc, sizeof dj->bc, "%s", sb_str(&p.device_bc));
    dj->nvshmem = true;
  }
  rt_nvshmem_paths_free(&p);
  sb_free(&why);
}

/* NVRTC's option list (argv-style); the strings live in `store`. */
static int nvrtc_options(const RtJitInput *in, const DistJit *dj, char store[6][4200], const char **opts) {
  int n = 0;
  char arch[16];
  snprintf(store[0], sizeof store[0], "--gpu-architecture=%s", rt_target_arch(in->target, arch, sizeof arch));
  opts[n++] = store[0];
  opts[n++] = "-default-device";
  opts[n++] = "-std=c++17";
  opts[n++] = "-DNDEBUG";
  /* NVRTC ships cuda_fp16.h and friends built in, but the toolkit's copies are offered
   * too so headers it does not carry (curand_kernel.h, mma helpers) resolve when installed,
   * and the <cuda/std/...> they include, which CUDA 13 keeps under include/cccl. */
  snprintf(store[1], sizeof store[1], "%s/include", cuda_home());
  struct stat st;
  if (stat(store[1], &st) == 0 && S_ISDIR(st.st_mode)) {
    snprintf(store[2], sizeof store[2], "-I%s/include", cuda_home());
    opts[n++] = store[2];
    snprintf(store[5], sizeof store[5], "%s/include/cccl", cuda_home());
    if (stat(store[5], &st) == 0 && S_ISDIR(st.st_mode)) {
      snprintf(store[5], sizeof store[5], "-I%s/include/cccl", cuda_home());
      opts[n++] = store[5];
    }
  }
  if (in->fast_math) opts[n++] = "--use_fast_math";
  if (dj->timeout_ms > 0) {
    snprintf(store[3], sizeof store[3], "-DTILESCALE_WAIT_TIMEOUT_MS=%d", dj->timeout_ms);
    opts[n++] = store[3];
  }
  if (dj->nvshmem) {
    snprintf(store[4], sizeof store[4], "%s", dj->inc);
    opts[n++] = store[4]; /* (NVSHMEM's <cuda/std/...> come from include/cccl above) */
    opts[n++] = "-DTILESCALE_NVSHMEM";
    opts[n++] = "-rdc=true";
    opts[n++] = "-dlto";
  }
  return n;
}

void rt_jit_options_text(const RtJitInput *in, StrBuf *out) {
  char arch[16];
  rt_target_arch(in->target, arch, sizeof arch);
  /* Looking NVSHMEM up touches the file system: once per call. */
  DistJit dj;
  dist_jit_config(in, &dj);
  if (in->compiler == TS_COMPILER_NVCC) {
    sb_printf(out, "nvcc\n-cubin\n-gencode=arch=compute_%d%s,code=%s\n-O3\n-std=c++17\n", in->target.sm,
              in->target.arch_a ? "a" : "", arch);
    if (in->fast_math) sb_append(out, "--use_fast_math\n");
    if (dj.timeout_ms > 0) sb_printf(out, "-DTILESCALE_WAIT_TIMEOUT_MS=%d\n", dj.timeout_ms);
    if (dj.uses) sb_append(out, "include tilescale/dist_shmem.cuh\n");
    return;
  }
  char store[6][4200];
  const char *opts[16];
  int n = nvrtc_options(in, &dj, store, opts);
  sb_append(out, "nvrtc\n");
  for (int i = 0; i < n; i++) sb_printf(out, "%s\n", opts[i]);
  if (dj.uses) sb_append(out, "include tilescale/dist_shmem.cuh\n");
  if (dj.nvshmem) sb_printf(out, "nvjitlink %s\n", dj.bc);
}

/* ---- NVRTC ---------------------------------------------------------------------------- */
#define NVRTC_CHECK(fn, args)                                                      \
  do {                                                                             \
    nvrtcResult nv_r_ = nv->fn args;                                               \
    if (nv_r_ != NVRTC_SUCCESS) {                                                  \
      sb_printf(err, "%s failed: %s (%d)", #fn, nv->nvrtcGetErrorString(nv_r_), (int)nv_r_); \
      status = TS_ERR_JIT;                                                         \
      goto cleanup;                                                                \
    }                                                                              \
  } while (0)

/* nvJitLink, loaded on demand (the signatures of nvJitLink.h, called through dlsym). */
typedef struct NvJitLink {
  nvJitLinkResult (*create)(nvJitLinkHandle *, uint32_t, const char **);
  nvJitLinkResult (*destroy)(nvJitLinkHandle *);
  nvJitLinkResult (*add_data)(nvJitLinkHandle, nvJitLinkInputType, const void *, size_t, const char *);
  nvJitLinkResult (*add_file)(nvJitLinkHandle, nvJitLinkInputType, const char *);
  nvJitLinkResult (*complete)(nvJitLinkHandle);
  nvJitLinkResult (*cubin_size)(nvJitLinkHandle, size_t *);
  nvJitLinkResult (*cubin)(nvJitLinkHandle, void *);
  nvJitLinkResult (*log_size)(nvJitLinkHandle, size_t *);
  nvJitLinkResult (*log)(nvJitLinkHandle, char *);
} NvJitLink;

static bool nvjitlink_open(NvJitLink *l, StrBuf *err) {
  char home_lib[4096];
  snprintf(home_lib, sizeof home_lib, "%s/lib64/libnvJitLink.so", cuda_home());
  const char *paths[] = {"libnvJitLink.so.13", "libnvJitLink.so", home_lib};
  void *h = NULL;
  for (int i = 0; i < TS_ARRAY_LEN(paths) && !h; i++) h = dlopen(paths[i], RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    sb_printf(err, "nvJitLink could not be loaded (tried libnvJitLink.so.13, libnvJitLink.so, %s): it links NVSHMEM's "
                   "device library into kernels on the nvshmem backend", home_lib);
    return false;
  }
  /* The library stays loaded, as NVRTC does (see rt_nvrtc_close). */
  *(void **)&l->create = dlsym(h, "nvJitLinkCreate");
  *(void **)&l->destroy = dlsym(h, "nvJitLinkDestroy");
  *(void **)&l->add_data = dlsym(h, "nvJitLinkAddData");
  *(void **)&l->add_file = dlsym(h, "nvJitLinkAddFile");
  *(void **)&l->complete = dlsym(h, "nvJitLinkComplete");
  *(void **)&l->cubin_size = dlsym(h, "nvJitLinkGetLinkedCubinSize");
  *(void **)&l->cubin = dlsym(h, "nvJitLinkGetLinkedCubin");
  *(void **)&l->log_size = dlsym(h, "nvJitLinkGetErrorLogSize");
  *(void **)&l->log = dlsym(h, "nvJitLinkGetErrorLog");
  if (!l->create || !l->destroy || !l->add_data || !l->add_file || !l->complete || !l->cubin_size || !l->cubin ||
      !l->log_size || !l->log) {
    sb_printf(err, "nvJitLink lacks an entry point of the CUDA 12/13 API");
    return false;
  }
  return true;
}

/* LTO-IR of the kernel + libnvshmem_device.bc -> cubin. */
static ts_status link_nvshmem(const RtJitInput *in, const void *ltoir, size_t ltoir_size, const char *bc,
                              RtJitOutput *out, StrBuf *err) {
  NvJitLink l;
  if (!nvjitlink_open(&l, err)) return TS_ERR_JIT;
  char arch[16], arch_opt[32];
  snprintf(arch_opt, sizeof arch_opt, "-arch=%s", rt_target_arch(in->target, arch, sizeof arch));
  const char *opts[] = {arch_opt, "-lto", "-O3"};
  nvJitLinkHandle h = NULL;
  ts_status status = TS_OK;
  nvJitLinkResult r = l.create(&h, 3, opts);
  const char *step = "nvJitLinkCreate";
  if (r == NVJITLINK_SUCCESS) step = "nvJitLinkAddData (kernel LTO-IR)", r = l.add_data(h, NVJITLINK_INPUT_LTOIR, ltoir, ltoir_size, "kernel");
  /* The static device library (relocatable device code in host objects) links with our
   * LTO-IR; the .bc next to it is LLVM bitcode for libNVVM users, which nvJitLink rejects. */
  char lib[4096];
  snprintf(lib, sizeof lib, "%s", bc);
  char *dot = strrchr(lib, '.');
  if (dot && !strcmp(dot, ".bc") && (size_t)(dot - lib) + 3 < sizeof lib) strcpy(dot, ".a");
  if (r == NVJITLINK_SUCCESS) step = "nvJitLinkAddFile (NVSHMEM device library)", r = l.add_file(h, NVJITLINK_INPUT_LIBRARY, lib);
  if (r == NVJITLINK_SUCCESS) step = "nvJitLinkComplete", r = l.complete(h);
  if (r == NVJITLINK_SUCCESS) step = "nvJitLinkGetLinkedCubinSize", r = l.cubin_size(h, &out->cubin_size);
  if (r == NVJITLINK_SUCCESS) {
    out->cubin = ts_malloc(out->cubin_size ? out->cubin_size : 1);
    step = "nvJitLinkGetLinkedCubin", r = l.cubin(h, out->cubin);
  }
  if (r != NVJITLINK_SUCCESS) {
    size_t n = 0;
    char *log = NULL;
    if (h && l.log_size(h, &n) == NVJITLINK_SUCCESS && n > 1) {
      log = ts_malloc(n + 1);
      if (l.log(h, log) != NVJITLINK_SUCCESS) log[0] = 0;
      log[n] = 0;
    }
    sb_printf(err, "linking with NVSHMEM (%s) failed at %s (nvJitLink error %d)\n%s", bc, step, (int)r,
              log ? log : "");
    ts_free(log);
    rt_jit_output_free(out);
    status = TS_ERR_JIT;
  }
  if (h) l.destroy(&h);
  return status;
}

static ts_status compile_nvrtc(RtNvrtc *nv, const RtJitInput *in, const DistJit *dj, RtJitOutput *out, StrBuf *err) {
  ts_status status = TS_OK;
  nvrtcProgram prog = NULL;
  char *log = NULL;
  const char **hdr_src = ts_calloc((size_t)in->nheaders + 1, sizeof *hdr_src);
  const char **hdr_name = ts_calloc((size_t)in->nheaders + 1, sizeof *hdr_name);
  for (int i = 0; i < in->nheaders; i++) {
    hdr_src[i] = in->headers[i].contents;
    hdr_name[i] = in->headers[i].name;
  }
  char store[6][4200];
  const char *opts[16];
  int nopts = nvrtc_options(in, dj, store, opts);
  char arch[16];
  rt_target_arch(in->target, arch, sizeof arch);

  NVRTC_CHECK(nvrtcCreateProgram, (&prog, in->source, in->name ? in->name : "kernel.cu", in->nheaders,
                                   hdr_src, hdr_name));
  nvrtcResult cr = nv->nvrtcCompileProgram(prog, nopts, opts);
  size_t log_size = 0;
  if (nv->nvrtcGetProgramLogSize(prog, &log_size) == NVRTC_SUCCESS && log_size > 1) {
    log = ts_malloc(log_size + 1);
    if (nv->nvrtcGetProgramLog(prog, log) != NVRTC_SUCCESS) log[0] = 0;
    log[log_size] = 0;
  }
  if (cr != NVRTC_SUCCESS) {
    sb_printf(err, "NVRTC compilation for %s failed: %s\n%s", arch, nv->nvrtcGetErrorString(cr),
              log ? log : "(no compiler log)");
    status = TS_ERR_JIT;
    goto cleanup;
  }
  if (dj->nvshmem) {
    size_t n = 0;
    NVRTC_CHECK(nvrtcGetLTOIRSize, (prog, &n));
    char *ir = ts_malloc(n ? n : 1);
    nvrtcResult gr = nv->nvrtcGetLTOIR(prog, ir);
    if (gr != NVRTC_SUCCESS) {
      ts_free(ir);
      sb_printf(err, "nvrtcGetLTOIR failed: %s", nv->nvrtcGetErrorString(gr));
      status = TS_ERR_JIT;
      goto cleanup;
    }
    status = link_nvshmem(in, ir, n, dj->bc, out, err);
    ts_free(ir);
    goto cleanup;
  }
  NVRTC_CHECK(nvrtcGetCUBINSize, (prog, &out->cubin_size));
  if (out->cubin_size == 0) {
    sb_printf(err, "NVRTC produced no cubin for %s (a virtual architecture?)", arch);
    status = TS_ERR_JIT;
    goto cleanup;
  }
  out->cubin = ts_malloc(out->cubin_size);
  NVRTC_CHECK(nvrtcGetCUBIN, (prog, out->cubin));
  /* PTX is a convenience (--emit ptx); a compiler that keeps none is not an error. */
  size_t ptx_size = 0;
  if (nv->nvrtcGetPTXSize(prog, &ptx_size) == NVRTC_SUCCESS && ptx_size > 1) {
    out->ptx = ts_malloc(ptx_size + 1);
    if (nv->nvrtcGetPTX(prog, out->ptx) != NVRTC_SUCCESS) {
      ts_free(out->ptx);
      out->ptx = NULL;
    } else {
      out->ptx[ptx_size] = 0;
    }
  }
cleanup:
  if (status != TS_OK) rt_jit_output_free(out);
  if (prog) nv->nvrtcDestroyProgram(&prog);
  ts_free(log);
  ts_free(hdr_src);
  ts_free(hdr_name);
  return status;
}

/* ---- nvcc ------------------------------------------------------------------------------ */
static bool write_file(const char *path, const void *data, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f) return false;
  bool ok = fwrite(data, 1, n, f) == n;
  return fclose(f) == 0 && ok;
}

/* mkdir -p for the directory part of `path` below `root` (header names such as
 * "tilescale/common.cuh" carry one level of directories). */
static bool make_parents(char *path, size_t root_len) {
  for (char *p = path + root_len + 1; *p; p++) {
    if (*p != '/') continue;
    *p = 0;
    bool ok = mkdir(path, 0700) == 0 || errno == EEXIST;
    *p = '/';
    if (!ok) return false;
  }
  return true;
}

static void remove_tree(const char *path) {
  DIR *d = opendir(path);
  if (d) {
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
      if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
      char sub[4096];
      snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
      remove_tree(sub);
    }
    closedir(d);
    rmdir(path);
  } else {
    unlink(path);
  }
}

static ts_status compile_nvcc(const RtJitInput *in, const DistJit *dj, RtJitOutput *out, StrBuf *err) {
  ts_status status = TS_OK;
  char dir[4096], path[4096 + 256], src_path[4096 + 16], bin_path[4096 + 16], log_path[4096 + 16];
  const char *tmp = getenv("TMPDIR");
  snprintf(dir, sizeof dir, "%s/tilescale-nvcc-XXXXXX", (tmp && *tmp) ? tmp : "/tmp");
  if (!mkdtemp(dir)) {
    sb_printf(err, "nvcc: cannot create a temporary directory %s: %s", dir, strerror(errno));
    return TS_ERR_IO;
  }
  size_t root_len = strlen(dir);
  snprintf(src_path, sizeof src_path, "%s/kernel.cu", dir);
  snprintf(bin_path, sizeof bin_path, "%s/kernel.cubin", dir);
  snprintf(log_path, sizeof log_path, "%s/nvcc.log", dir);
  if (!write_file(src_path, in->source, strlen(in->source))) {
    sb_printf(err, "nvcc: cannot write %s", src_path);
    status = TS_ERR_IO;
    goto cleanup;
  }
  for (int i = 0; i < in->nheaders; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, in->headers[i].name);
    if (!make_parents(path, root_len) || !write_file(path, in->headers[i].contents, in->headers[i].size)) {
      sb_printf(err, "nvcc: cannot write %s", path);
      status = TS_ERR_IO;
      goto cleanup;
    }
  }

  char nvcc[4096], gencode[128], inc[4096 + 4];
  snprintf(nvcc, sizeof nvcc, "%s/bin/nvcc", cuda_home());
  if (access(nvcc, X_OK) != 0) snprintf(nvcc, sizeof nvcc, "nvcc"); /* found through PATH */
  snprintf(gencode, sizeof gencode, "-gencode=arch=compute_%d%s,code=sm_%d%s", in->target.sm,
           in->target.arch_a ? "a" : "", in->target.sm, in->target.arch_a ? "a" : "");
  snprintf(inc, sizeof inc, "-I%s", dir);
  char *argv[16];
  int argc = 0;
  argv[argc++] = nvcc;
  argv[argc++] = "-cubin";
  argv[argc++] = gencode;
  argv[argc++] = "-O3";
  argv[argc++] = "-std=c++17";
  argv[argc++] = "-DNDEBUG";
  argv[argc++] = inc;
  char timeout[64];
  if (dj->timeout_ms > 0) {
    snprintf(timeout, sizeof timeout, "-DTILESCALE_WAIT_TIMEOUT_MS=%d", dj->timeout_ms);
    argv[argc++] = timeout;
  }
  if (in->fast_math) argv[argc++] = "--use_fast_math";
  argv[argc++] = "-o";
  argv[argc++] = bin_path;
  argv[argc++] = src_path;
  argv[argc] = NULL;

  /* nvcc's stdout and stderr both go to the log, which becomes the error text. */
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid;
  int rc = posix_spawnp(&pid, nvcc, &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    sb_printf(err, "nvcc could not be started (%s): %s", nvcc, strerror(rc));
    status = TS_ERR_JIT;
    goto cleanup;
  }
  int wst = 0;
  while (waitpid(pid, &wst, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(wst) || WEXITSTATUS(wst) != 0) {
    size_t n = 0;
    char *log = ts_read_file(log_path, &n);
    sb_printf(err, "nvcc compilation for sm_%d%s failed (exit %d):\n%s", in->target.sm,
              in->target.arch_a ? "a" : "", WIFEXITED(wst) ? WEXITSTATUS(wst) : -1,
              log ? log : "(no log)");
    ts_free(log);
    status = TS_ERR_JIT;
    goto cleanup;
  }
  out->cubin = ts_read_file(bin_path, &out->cubin_size);
  if (!out->cubin || out->cubin_size == 0) {
    sb_printf(err, "nvcc reported success but %s is missing or empty", bin_path);
    status = TS_ERR_JIT;
  }
cleanup:
  if (status != TS_OK) rt_jit_output_free(out);
  remove_tree(dir);
  return status;
}

/* ---- symbols of the linked image ------------------------------------------------------- */
/* Every offset and size is checked against the image before use: the bytes come from a
 * compiler (or the cache) but a truncated file must not read out of bounds. */
static bool elf_range(size_t size, uint64_t off, uint64_t len) { return off <= size && len <= size - off; }

RtCubinSym rt_cubin_symbol(const void *cubin, size_t size, const char *name) {
  const unsigned char *b = cubin;
  if (!b || size < sizeof(Elf64_Ehdr) || memcmp(b, ELFMAG, SELFMAG) || b[EI_CLASS] != ELFCLASS64)
    return RT_CUBIN_SYM_BAD_ELF;
  Elf64_Ehdr eh;
  memcpy(&eh, b, sizeof eh);
  if (eh.e_shentsize != sizeof(Elf64_Shdr) || !elf_range(size, eh.e_shoff, (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr)))
    return RT_CUBIN_SYM_BAD_ELF;
  RtCubinSym best = RT_CUBIN_SYM_ABSENT;
  size_t nlen = strlen(name);
  for (unsigned i = 0; i < eh.e_shnum; i++) {
    Elf64_Shdr sh, strh;
    memcpy(&sh, b + eh.e_shoff + (uint64_t)i * sizeof sh, sizeof sh);
    if (sh.sh_type != SHT_SYMTAB) continue;
    if (sh.sh_entsize != sizeof(Elf64_Sym) || sh.sh_link >= eh.e_shnum || !elf_range(size, sh.sh_offset, sh.sh_size))
      return RT_CUBIN_SYM_BAD_ELF;
    memcpy(&strh, b + eh.e_shoff + (uint64_t)sh.sh_link * sizeof strh, sizeof strh);
    if (!elf_range(size, strh.sh_offset, strh.sh_size)) return RT_CUBIN_SYM_BAD_ELF;
    const char *str = (const char *)b + strh.sh_offset;
    for (uint64_t j = 0; j < sh.sh_size / sizeof(Elf64_Sym); j++) {
      Elf64_Sym sym;
      memcpy(&sym, b + sh.sh_offset + j * sizeof sym, sizeof sym);
      if (sym.st_shndx == SHN_UNDEF || sym.st_name >= strh.sh_size) continue;
      if (strh.sh_size - sym.st_name <= nlen || memcmp(str + sym.st_name, name, nlen + 1)) continue;
      int bind = ELF64_ST_BIND(sym.st_info);
      if (bind == STB_GLOBAL || bind == STB_WEAK) return RT_CUBIN_SYM_GLOBAL;
      best = RT_CUBIN_SYM_LOCAL;
    }
  }
  return best;
}

/* A distributed kernel's image must define, by name, what the distributed runtime fills in
 * at module load: ts_dist_meta (rank, world, heap bases), and after an NVSHMEM link also
 * NVSHMEM's device state and library version (read by nvshmemx_cumodule_init).  The
 * driver finds them by name whatever their binding (whole-program images bind variables
 * LOCAL), so a link that renamed or dropped one is what must not pass: the load-time upload
 * would find nothing and the kernel would run on zeros (rank 0 everywhere, null heap bases). */
static ts_status check_dist_symbols(const DistJit *dj, const RtJitOutput *out, StrBuf *err) {
  const char *need[3] = {"ts_dist_meta", NULL, NULL};
  if (dj->nvshmem) need[1] = "nvshmemi_device_state_d", need[2] = "nvshmemi_device_lib_version_d";
  for (int i = 0; i < 3 && need[i]; i++) {
    RtCubinSym s = rt_cubin_symbol(out->cubin, out->cubin_size, need[i]);
    if (s == RT_CUBIN_SYM_GLOBAL || s == RT_CUBIN_SYM_LOCAL) continue;
    sb_printf(err, "the %s image of this distributed kernel %s '%s', which the distributed runtime fills in at "
                   "module load",
              dj->nvshmem ? "NVSHMEM-linked" : "compiled",
              s == RT_CUBIN_SYM_BAD_ELF ? "is not a readable ELF file, so it cannot be checked for" : "does not define",
              need[i]);
    return TS_ERR_JIT;
  }
  return TS_OK;
}

ts_status rt_jit_compile(RtNvrtc *nvrtc, const RtJitInput *in, RtJitOutput *out, StrBuf *err) {
  memset(out, 0, sizeof *out);
  /* A distributed kernel gets the device communication library (the options text, hence
   * the cache key, records it). */
  RtJitInput din = *in;
  StrBuf src = {0};
  DistJit dj;
  dist_jit_config(in, &dj);
  if (dj.uses) {
    sb_append(&src, "#include <tilescale/dist_shmem.cuh>\n");
    sb_append(&src, in->source);
    din.source = sb_str(&src);
  }
  ts_status status;
  if (in->compiler == TS_COMPILER_NVCC) {
    status = compile_nvcc(&din, &dj, out, err);
  } else if (!nvrtc->handle && !rt_nvrtc_open(nvrtc, err)) {
    status = TS_ERR_JIT;
  } else {
    status = compile_nvrtc(nvrtc, &din, &dj, out, err);
  }
  if (status == TS_OK && dj.uses) {
    status = check_dist_symbols(&dj, out, err);
    if (status != TS_OK) rt_jit_output_free(out);
  }
  sb_free(&src);
  return status;
}

void rt_jit_output_free(RtJitOutput *out) {
  ts_free(out->cubin);
  ts_free(out->ptx);
  memset(out, 0, sizeof *out);
}
