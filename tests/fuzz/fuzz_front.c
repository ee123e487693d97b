/* fuzz_front.c — fuzz harness over the whole compiler front to back, minus NVRTC:
 *
 *   bytes -> parse_module -> for each compilable function (front_list_functions):
 *            front_compile with a few -D parameter sets -> pass_pipeline -> cg_cuda
 *
 * Built two ways from this one file:
 *   - with clang -fsanitize=fuzzer,address,undefined: the libFuzzer target behind
 *     `make fuzz` (LLVMFuzzerTestOneInput);
 *   - with -DFUZZ_REPLAY and any compiler: a plain program that replays files or whole
 *     directories (the committed corpus) through the same function; `make test` runs it
 *     as a smoke test so CI exercises every corpus entry without libFuzzer.
 *
 * The input is a kernel file.  Parameter sets, in order:
 *   1. the `-D name=value` words of a `# tilescale-test:` line in the input, if any
 *      (so the seeds taken from examples/ and tests/front/ compile all the way through);
 *   2. every parameter of the function without a default bound to 64 (names that look
 *      like dtypes get "float16"), plus the same for its T.const names;
 *   3. no parameters at all (exercises the "missing -D" diagnostics).
 * Evaluation runs with small step/depth/memory limits so runaway inputs end quickly in a
 * diagnostic instead of a libFuzzer timeout.  Diagnostics are the expected outcome for
 * most inputs; only crashes, sanitizer reports, hangs and leaks are findings. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../src/codegen/cuda.h"
#include "../../src/front/front.h"
#include "../../src/pass/pipeline.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum {
  MAX_FUNCS = 4,       /* functions compiled per input */
  MAX_PARAMS = 32,     /* -D parameters per set */
  FUZZ_STEPS = 20000,  /* evaluator limits: small, so that runaway loops end fast */
  FUZZ_DEPTH = 40,
};
#define FUZZ_BYTES ((int64_t)64 << 20)

/* What one input reached (printed by the replay tool with -v). */
typedef struct FuzzStats {
  int parsed, compiled, lowered, generated;
} FuzzStats;

typedef struct ParamSet {
  ts_param p[MAX_PARAMS];
  int n;
} ParamSet;

static void add_param(Arena *a, ParamSet *ps, const char *name, size_t nlen, const char *value, size_t vlen) {
  if (ps->n >= MAX_PARAMS || nlen == 0) return;
  for (int i = 0; i < ps->n; i++)
    if (strlen(ps->p[i].name) == nlen && !strncmp(ps->p[i].name, name, nlen)) return;
  ps->p[ps->n].name = arena_strndup(a, name, nlen);
  ps->p[ps->n].value = arena_strndup(a, value, vlen);
  ps->n++;
}

/* Set 1: `# tilescale-test: -k f -D M=64 -D dtype=float16` (words split on blanks). */
static void params_from_test_line(Arena *a, const char *text, ParamSet *ps) {
  const char *line = strstr(text, "# tilescale-test:");
  if (!line) return;
  const char *p = line + strlen("# tilescale-test:");
  while (*p && *p != '\n') {
    while (*p == ' ' || *p == '\t') p++;
    const char *w = p;
    while (*p && *p != '\n' && *p != ' ' && *p != '\t') p++;
    if (p - w == 2 && !strncmp(w, "-D", 2)) {
      while (*p == ' ' || *p == '\t') p++;
      const char *d = p;
      while (*p && *p != '\n' && *p != ' ' && *p != '\t') p++;
      const char *eq = memchr(d, '=', (size_t)(p - d));
      if (eq) add_param(a, ps, d, (size_t)(eq - d), eq + 1, (size_t)(p - eq - 1));
    }
  }
}

static bool looks_like_dtype(const char *name) { return strstr(name, "dtype") || strstr(name, "type"); }

/* T.const("M, N") names anywhere in a statement list (a shallow walk is enough: the
 * eager style writes them at the top of the body). */
static void params_from_tconst(Arena *a, const AstList *body, ParamSet *ps) {
  for (int i = 0; i < body->n; i++) {
    const AstNode *s = body->items[i];
    const AstNode *v = s->kind == AST_ASSIGN || s->kind == AST_EXPR ? s->value : NULL;
    if (!v || v->kind != AST_CALL || !v->func || v->func->kind != AST_ATTRIBUTE || !v->func->id ||
        strcmp(v->func->id, "const") || v->items.n < 1 || v->items.items[0]->kind != AST_CONST_STR)
      continue;
    const char *q = v->items.items[0]->sval;
    while (q && *q) {
      while (*q == ' ' || *q == ',') q++;
      const char *w = q;
      while (*q && *q != ' ' && *q != ',') q++;
      if (q > w) add_param(a, ps, w, (size_t)(q - w), "64", 2);
    }
  }
}

static const AstNode *find_def(const AstNode *module, const char *name) {
  for (int i = 0; i < module->body.n; i++) {
    const AstNode *s = module->body.items[i];
    if (s->kind == AST_FUNCTIONDEF && s->id && !strcmp(s->id, name)) return s;
  }
  return NULL;
}

/* Set 2: the function's required parameters and T.const names. */
static void params_from_def(Arena *a, const AstNode *def, ParamSet *ps) {
  if (!def) return;
  for (int i = 0; i < def->params.n; i++) {
    const AstParam *p = &def->params.items[i];
    if (p->default_value || p->kind == APARAM_VARARGS || p->kind == APARAM_VARKW || !p->name) continue;
    const char *v = looks_like_dtype(p->name) ? "float16" : "64";
    add_param(a, ps, p->name, strlen(p->name), v, strlen(v));
  }
  params_from_tconst(a, &def->body, ps);
}

/* One compilation, the same steps as ts_kernel_compile up to (not including) NVRTC. */
static void compile_one(const AstNode *module, const char *func, const ParamSet *ps, TsTarget target,
                        FuzzStats *st) {
  TsCompiler c;
  ts_compiler_init(&c, target);
  c.limit_steps = FUZZ_STEPS;
  c.limit_depth = FUZZ_DEPTH;
  c.limit_bytes = FUZZ_BYTES;
  c.debug = true; /* ir_verify after every pass: malformed IR is a finding too */
  IrFunc *f = front_compile(&c, module, func, ps->p, ps->n);
  if (f && c.diag.errors == 0) {
    st->compiled++;
    StrBuf ir = {0};
    ir_print_func(&ir, f);
    sb_free(&ir);
    if (pass_pipeline(&c, f) && c.diag.errors == 0) {
      st->lowered++;
      CgOutput out;
      memset(&out, 0, sizeof out);
      if (cg_cuda(&c, f, &out) && c.diag.errors == 0) st->generated++;
    }
  }
  ts_compiler_fini(&c);
}

static void fuzz_one(const uint8_t *data, size_t size, FuzzStats *st) {
  /* The front end takes NUL-terminated text (ts_program_load_* reject embedded NULs). */
  if (memchr(data, 0, size)) return;
  char *text = malloc(size + 1);
  memcpy(text, data, size);
  text[size] = 0;
  SourceFile file = {"fuzz.py", text, size};

  TsCompiler pc;
  ts_compiler_init(&pc, (TsTarget){90, true});
  pc.limit_steps = FUZZ_STEPS;
  pc.limit_depth = FUZZ_DEPTH;
  pc.limit_bytes = FUZZ_BYTES;
  AstNode *module = parse_module(&pc, &file);
  if (module) {
    StrBuf dump = {0};
    ast_dump(&dump, module);
    sb_free(&dump);
  }
  if (module && pc.diag.errors == 0) {
    st->parsed++;
    const char *names[MAX_FUNCS];
    int n = front_list_functions(module, names, MAX_FUNCS);
    for (int i = 0; i < n && i < MAX_FUNCS; i++) {
      ParamSet sets[3];
      memset(sets, 0, sizeof sets);
      params_from_test_line(pc.arena, text, &sets[0]);
      params_from_def(pc.arena, find_def(module, names[i]), &sets[1]);
      /* sets[2] stays empty */
      for (int s = 0; s < 3; s++) {
        if (s == 0 && sets[0].n == 0) continue;
        /* Alternate the target so both the sm_80 and sm_90a code paths are reached. */
        compile_one(module, names[i], &sets[s], (TsTarget){s == 1 ? 80 : 90, s != 1}, st);
      }
    }
  }
  ts_compiler_fini(&pc);
  free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  FuzzStats st = {0};
  fuzz_one(data, size, &st);
  return 0;
}

#ifdef FUZZ_REPLAY
/* Replays files and directories (one level) through the harness; prints a count and,
 * with -v first, what each input reached. */
static int replay_file(const char *path, bool verbose, FuzzStats *total) {
  FILE *fp = fopen(path, "rb");
  if (!fp) {
    fprintf(stderr, "fuzz_replay: cannot open %s\n", path);
    return 1;
  }
  StrBuf sb = {0};
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, fp)) > 0) sb_appendn(&sb, buf, n);
  fclose(fp);
  FuzzStats st = {0};
  fuzz_one((const uint8_t *)(sb.data ? sb.data : ""), sb.len, &st);
  if (verbose)
    printf("%s: parsed %d, compiled %d, lowered %d, generated %d\n", path, st.parsed, st.compiled, st.lowered,
           st.generated);
  total->parsed += st.parsed;
  total->compiled += st.compiled;
  total->lowered += st.lowered;
  total->generated += st.generated;
  sb_free(&sb);
  return 0;
}

int main(int argc, char **argv) {
  int files = 0, errors = 0;
  bool verbose = argc > 1 && !strcmp(argv[1], "-v");
  FuzzStats total = {0};
  for (int i = verbose ? 2 : 1; i < argc; i++) {
    struct stat st;
    if (stat(argv[i], &st) != 0) {
      fprintf(stderr, "fuzz_replay: cannot stat %s\n", argv[i]);
      errors++;
      continue;
    }
    if (!S_ISDIR(st.st_mode)) {
      errors += replay_file(argv[i], verbose, &total);
      files++;
      continue;
    }
    DIR *d = opendir(argv[i]);
    if (!d) {
      errors++;
      continue;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
      if (e->d_name[0] == '.') continue;
      char path[4096];
      snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
      errors += replay_file(path, verbose, &total);
      files++;
    }
    closedir(d);
  }
  printf("fuzz_replay: %d inputs replayed, %d unreadable; %d parsed, %d compilations reached IR, %d lowered, %d CUDA\n",
         files, errors, total.parsed, total.compiled, total.lowered, total.generated);
  return errors ? 1 : 0;
}
#endif
