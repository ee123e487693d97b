/* source_kernel.c — T.CUDASourceCodeKernel(*grid, threads=, source_code_or_path=, entry_name=):
 * a kernel written in CUDA by the user, launched with the prim_func's parameters.
 *
 *   builtins_loops.c (its arguments)  ->  here: a KERNEL statement with an empty body and
 *   IrKernel.source / entry  ->  codegen/cuda.c prints the source as it is
 *
 * The user's function receives what a generated kernel receives (cuda.h's ABI): the tensor
 * parameters' data pointers and the scalar parameters in their order, then the dynamic
 * dimensions (int64; an `int` parameter reads their low half).  The runtime finds the function
 * by name, so it must be extern "C".  source_code_or_path is the text, or the path of a file
 * holding it (one line naming an existing file). */
#include <string.h>
#include <sys/stat.h>

#include "builtin.h"

/* The source: the file `s` names when it is one line naming a regular file, else s itself. */
static const char *source_text(Eval *ev, const char *s, SrcLoc loc) {
  struct stat st;
  if (strchr(s, '\n') || strstr(s, "__global__")) return s;
  if (stat(s, &st) != 0 || !S_ISREG(st.st_mode)) { /* one line: a path, or nothing to launch */
    ts_error(ev->c, loc, "T.CUDASourceCodeKernel: source_code_or_path '%s' is not a readable file, and as CUDA text it "
             "has no __global__ function", s);
    return NULL;
  }
  StrBuf why = {0};
  size_t len = 0;
  char *text = ts_read_file_max(s, TS_READ_DEFAULT_MAX, 0, &len, &why);
  if (!text) {
    ts_error(ev->c, loc, "T.CUDASourceCodeKernel: cannot read '%s': %s", s, sb_str(&why));
    sb_free(&why);
    return NULL;
  }
  sb_free(&why);
  char *copy = arena_memdup(ev->a, text, len + 1);
  ts_free(text);
  return copy;
}

static bool ident_char(char ch) {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_';
}

/* The name of the function a `__global__` at p declares: the identifier before the first '('
 * that is not an attribute's (__launch_bounds__(...), __cluster_dims__(...)); "" if none. */
static const char *global_name(Eval *ev, const char *p) {
  const char *last = NULL;
  size_t len = 0;
  while (*p && *p != ';' && *p != '{') {
    if (ident_char(*p)) {
      last = p;
      while (ident_char(*p)) p++;
      len = (size_t)(p - last);
      continue;
    }
    if (*p == '(') {
      bool attr = last && ((len == 17 && !strncmp(last, "__launch_bounds__", 17)) ||
                           (len == 16 && !strncmp(last, "__cluster_dims__", 16)));
      if (!attr) return last ? arena_strndup(ev->a, last, len) : "";
      int depth = 0;
      do { /* past the attribute's arguments */
        depth += *p == '(';
        depth -= *p == ')';
        p++;
      } while (*p && depth);
      last = NULL;
      continue;
    }
    p++;
  }
  return "";
}

/* Whether the declaration holding the __global__ at p (from the previous ';' or '}') says
 * extern "C", or the text before it opens an extern "C" { block. */
static bool extern_c(const char *text, const char *p) {
  const char *b = p;
  while (b > text && b[-1] != ';' && b[-1] != '}') b--;
  const char *e = strstr(b, "extern \"C\"");
  if (e && e < p) return true;
  const char *block = strstr(text, "extern \"C\" {");
  return block && block < p;
}

/* The entry: entry_name, which must be an extern "C" __global__ function of the text, or the
 * text's only __global__ function; NULL after a diagnostic listing the available entries. */
static const char *find_entry(Eval *ev, const char *text, const char *want, SrcLoc loc) {
  StrBuf names = {0};
  const char *found = NULL, *only = NULL;
  bool plain = true;
  int n = 0;
  for (const char *p = strstr(text, "__global__"); p; p = strstr(p + 10, "__global__")) {
    const char *name = global_name(ev, p + 10);
    if (!*name) continue;
    sb_printf(&names, "%s%s", n++ ? ", " : "", name);
    only = name;
    if (want && !strcmp(name, want)) found = name, plain = extern_c(text, p);
    else if (!want) plain = extern_c(text, p);
  }
  const char *entry = want ? found : n == 1 ? only : NULL;
  if (!entry)
    ts_error(ev->c, loc, "T.CUDASourceCodeKernel: %s%s%s. Available entries: %s", want ? "no __global__ function '" : "",
             want ? want : "entry_name= is needed (the source has more or fewer than one __global__ function)",
             want ? "' in the source" : "", n ? sb_str(&names) : "none");
  else if (!plain)
    ts_error(ev->c, loc, "T.CUDASourceCodeKernel: '%s' must be declared extern \"C\" (the runtime finds it by its "
             "unmangled name)", entry);
  sb_free(&names);
  return entry && plain ? entry : NULL;
}

Value *ev_source_kernel(Eval *ev, KernelFrame *kf, SrcLoc loc) {
  if (!ev->block) {
    ts_error(ev->c, loc, "T.CUDASourceCodeKernel can only be used inside a @T.prim_func");
    return ev->poison;
  }
  if (ev->kernel) {
    ts_error(ev->c, loc, "T.CUDASourceCodeKernel cannot be used inside a T.Kernel block");
    return ev->poison;
  }
  if (!kf->source) {
    ts_error(ev->c, loc, "T.CUDASourceCodeKernel needs source_code_or_path= (CUDA text or a .cu file)");
    return ev->poison;
  }
  const char *text = source_text(ev, kf->source, loc);
  const char *entry = text ? find_entry(ev, text, kf->entry, loc) : NULL;
  if (!entry) return ev->poison;
  IrStmt *k = ir_stmt(ev->c, IR_S_KERNEL, loc);
  for (int i = 0; i < 3; i++) {
    k->u.kernel.grid[i] = i < kf->ngrid ? kf->grid[i] : ir_int(ev->c, 1, TS_DTYPE_INT32, loc);
    k->u.kernel.threads[i] = kf->threads[i];
  }
  k->u.kernel.body = ir_seq(ev->c, NULL, 0, loc);
  k->u.kernel.source = text;
  k->u.kernel.entry = entry;
  k->u.kernel.manual_ws = true;
  ev_emit(ev, k);
  return ev->none;
}
