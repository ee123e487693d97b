/* nvshmem_paths.c — NVSHMEM discovery (see nvshmem_paths.h). */
#include "nvshmem_paths.h"

#include <dlfcn.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool file_exists(const char *p) { return access(p, R_OK) == 0; }

/* Accepts an NVSHMEM root (with lib/ or lib64/) and records its pieces. */
static bool try_root(RtNvshmemPaths *p, const char *root, StrBuf *looked) {
  static const char *const libdirs[] = {"lib", "lib64"};
  for (int i = 0; i < TS_ARRAY_LEN(libdirs); i++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s/libnvshmem_host.so.3", root, libdirs[i]);
    sb_printf(looked, "\n  %s", path);
    if (!file_exists(path)) continue;
    sb_clear(&p->host_lib);
    sb_append(&p->host_lib, path);
    snprintf(path, sizeof path, "%s/include", root);
    sb_clear(&p->include_dir);
    if (file_exists(path)) sb_append(&p->include_dir, path);
    snprintf(path, sizeof path, "%s/%s/libnvshmem_device.bc", root, libdirs[i]);
    sb_clear(&p->device_bc);
    if (file_exists(path)) sb_append(&p->device_bc, path);
    return true;
  }
  return false;
}

static bool try_glob(RtNvshmemPaths *p, const char *pattern, StrBuf *looked) {
  glob_t g;
  bool found = false;
  if (glob(pattern, GLOB_NOSORT, NULL, &g) == 0) {
    for (size_t i = 0; i < g.gl_pathc && !found; i++) found = try_root(p, g.gl_pathv[i], looked);
    globfree(&g);
  } else {
    sb_printf(looked, "\n  %s (no match)", pattern);
  }
  return found;
}

/* Asks the python3 on PATH where the pip package is (the torch python of our GPU machines
 * has it).  stderr is silenced: a missing module is an ordinary "not here". */
static bool try_python(RtNvshmemPaths *p, StrBuf *looked) {
  FILE *f = popen("python3 -c 'import nvidia.nvshmem as m; print(list(m.__path__)[0])' 2>/dev/null", "r");
  if (!f) return false;
  char line[4096] = {0};
  bool got = fgets(line, sizeof line, f) != NULL;
  pclose(f);
  if (!got) {
    sb_append(looked, "\n  python3 -c 'import nvidia.nvshmem' (module not installed)");
    return false;
  }
  line[strcspn(line, "\r\n")] = 0;
  return try_root(p, line, looked);
}

/* $NVSHMEM_SRC, TileScale's switch: an NVSHMEM source tree built by its build_nvshmem.sh,
 * installed into build/install, or used in place (build/src/{lib,include}, what TileScale
 * puts on LD_LIBRARY_PATH); also a plain install root. */
static bool try_source_tree(RtNvshmemPaths *p, StrBuf *looked) {
  const char *src = getenv("NVSHMEM_SRC");
  if (!src || !*src) {
    sb_append(looked, "\n  $NVSHMEM_SRC (not set)");
    return false;
  }
  static const char *const under[] = {"/build/install", "/build/src", ""};
  for (int i = 0; i < TS_ARRAY_LEN(under); i++) {
    char root[4096];
    snprintf(root, sizeof root, "%s%s", src, under[i]);
    if (try_root(p, root, looked)) return true;
  }
  return false;
}

bool rt_nvshmem_find(RtNvshmemPaths *p, StrBuf *why) {
  StrBuf looked = {0};
  bool ok = false;
  const char *home = getenv("NVSHMEM_HOME");
  if (home && *home) ok = try_root(p, home, &looked);
  else sb_append(&looked, "\n  $NVSHMEM_HOME (not set)");
  if (!ok) ok = try_source_tree(p, &looked);
  /* The pip package nvidia-nvshmem-cu13 installs nvidia/nvshmem/{lib,include}. */
  static const char *const site_patterns[] = {
      "%s/lib/python3*/site-packages/nvidia/nvshmem",
      "%s/lib/python3*/dist-packages/nvidia/nvshmem",
  };
  const char *prefixes[] = {getenv("VIRTUAL_ENV"), getenv("CONDA_PREFIX"), "/usr/local", "/usr", NULL, "/opt/conda"};
  char local[4096] = {0};
  const char *h = getenv("HOME");
  if (h) snprintf(local, sizeof local, "%s/.local", h);
  prefixes[4] = h ? local : NULL;
  for (int i = 0; !ok && i < TS_ARRAY_LEN(prefixes); i++) {
    if (!prefixes[i] || !*prefixes[i]) continue;
    for (int j = 0; !ok && j < TS_ARRAY_LEN(site_patterns); j++) {
      char pat[4400];
      snprintf(pat, sizeof pat, site_patterns[j], prefixes[i]);
      ok = try_glob(p, pat, &looked);
    }
  }
  if (!ok) ok = try_python(p, &looked);
  if (!ok) ok = try_root(p, "/usr/local/nvshmem", &looked) || try_glob(p, "/usr/lib/x86_64-linux-gnu/nvshmem/*", &looked);
  if (!ok) {
    /* Last: the dynamic loader's own search (LD_LIBRARY_PATH, ld.so.cache). */
    void *hdl = dlopen("libnvshmem_host.so.3", RTLD_LAZY | RTLD_LOCAL);
    sb_append(&looked, "\n  libnvshmem_host.so.3 on the loader path (LD_LIBRARY_PATH, ld.so.cache)");
    if (hdl) {
      dlclose(hdl);
      sb_clear(&p->host_lib);
      sb_append(&p->host_lib, "libnvshmem_host.so.3");
      ok = true;
    }
  }
  if (!ok)
    sb_printf(why,
              "NVSHMEM not found (libnvshmem_host.so.3); looked in:%s\nset NVSHMEM_HOME to an NVSHMEM install (or "
              "NVSHMEM_SRC to a built source tree), or "
              "`pip install nvidia-nvshmem-cu13`, or use TILESCALE_DIST_BACKEND=ipc",
              sb_str(&looked));
  sb_free(&looked);
  return ok;
}

void rt_nvshmem_paths_free(RtNvshmemPaths *p) {
  sb_free(&p->host_lib);
  sb_free(&p->include_dir);
  sb_free(&p->device_bc);
}

/* ---- backend --------------------------------------------------------------------------------- */
