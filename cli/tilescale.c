/* tilescale.c — the `tilescale` command-line tool.
 *
 * A thin client of the public API (include/tilescale.h) and nothing else:
 *   tilescale compile FILE ...   front end + passes + codegen (+ NVRTC/nvcc), prints or writes
 *                                the IR, CUDA source, PTX or cubin;
 *   tilescale run FILE ...       compiles for the local GPU, allocates random inputs for every
 *                                tensor parameter, poisons the outputs, launches, and reports
 *                                the median kernel time and the achieved bandwidth;
 *   tilescale cache dir|size|clear   shows or empties the binary cache.
 * Everything the tool knows about a kernel (parameter names, dtypes, shapes, which are
 * outputs) comes from ts_kernel_arg_info, so it works for any kernel file.
 *
 * Exit codes: 0 success, 1 error (compile error, JIT, CUDA, I/O), 2 usage error (anything
 * wrong in the command line itself, found before any work), 3 `run --check` found unwritten
 * or non-finite outputs, 4 no usable GPU or driver (`run`, once its arguments are checked).
 * One code per kind of mistake, however it is spelt: `--arch=sm_999`, `--arch sm_999` and
 * `--arch 999` are all 2. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "launch.h"
#include "tilescale.h"
#include "tilescale_dist.h"

enum { EXIT_OK = 0, EXIT_ERROR = 1, EXIT_USAGE = 2, EXIT_CHECK = 3, EXIT_NO_GPU = 4 };

#define MAX_DEFINES 64
#define MAX_SCALARS 64
#define MAX_ZEROS 32
#define MAX_PASS_CONFIGS 32
#define MAX_FUNCS 64

static const char main_usage[] =
    "usage: tilescale <command> [options]\n"
    "\n"
    "Compiles TileLang kernel files (Python syntax, `import tilelang.language as T`) to CUDA\n"
    "and runs them on NVIDIA GPUs.\n"
    "\n"
    "commands:\n"
    "  compile FILE   compile one function of FILE; print or write its IR, CUDA, PTX or cubin\n"
    "  run FILE       compile for the local GPU, launch on random inputs, time it\n"
    "  launch -n N PROG [ARGS]  run PROG as N ranks (one process per GPU) with the rank\n"
    "                 environment and a TCP rendezvous; stops all ranks when one fails\n"
    "  cache dir|size|clear  print the binary cache folder, its size, or empty it\n"
    "  help [CMD]     show this text, or the options of CMD\n"
    "\n"
    "options:\n"
    "  -h, --help     show this text (`tilescale CMD --help` shows the options of CMD)\n"
    "  --version      print the library version\n"
    "\n"
    "environment:\n"
    "  TILESCALE_CACHE_DIR        binary cache folder (default ~/.cache/tilescale)\n"
    "  TILESCALE_DISABLE_CACHE    1/true/yes/on: neither read nor write the cache\n"
    "                             (0/false/no/off or empty: use it)\n"
    "  TILESCALE_CACHE_MAX_BYTES  cache size limit, e.g. 4G (the default), 512M; 0 = none;\n"
    "                             least recently used entries are removed after a write\n"
    "  TILESCALE_VERBOSE          1: progress, cache hits and misses on stderr\n"
    "\n"
    "exit codes: 0 success, 1 error (compile error, JIT/CUDA failure, unreadable file),\n"
    "            2 usage error (a wrong command line: unknown option or command, bad value),\n"
    "            3 `run --check` failed, 4 no usable GPU or CUDA driver (`run` only)\n";

static const char compile_usage[] =
    "usage: tilescale compile FILE [-k FUNC] [-D NAME=VALUE]... [--emit ir|cuda|ptx|cubin|stats]\n"
    "                         [-o OUT] [--arch ARCH] [--compiler nvrtc|nvcc]\n"
    "                         [--dump-after PASS] [--debug] [--pass-config KEY=VALUE]...\n"
    "                         [--no-cache] [-v]\n"
    "\n"
    "Compiles function FUNC of the kernel file FILE with the given parameters.  FILE must be\n"
    "a regular file of at most 16 MiB.\n"
    "\n"
    "  -k FUNC              the function to compile: a factory (e.g. @tilelang.jit def f(M, N)),\n"
    "                       a @T.prim_func or an eager @tilelang.jit kernel.  May be left out when\n"
    "                       FILE has exactly one compilable function.\n"
    "  -D NAME=VALUE        binds parameter NAME of FUNC; VALUE is Python syntax: 1024, 0.5,\n"
    "                       True, float16, T.bfloat16, \"x\", (64, 64).  Repeatable.  Parameters\n"
    "                       not given keep their default values.\n"
    "  --emit WHAT          what to output (default cuda):\n"
    "                         ir     the Tile IR after the pass pipeline (no CUDA compiler runs)\n"
    "                         cuda   the generated CUDA C++ source (no CUDA compiler runs)\n"
    "                         ptx    the PTX (NVRTC only)\n"
    "                         cubin  the device binary (needs -o, or a stdout that is not a terminal)\n"
    "                         stats  the work counted from the tile-level IR, as JSON: per kernel and\n"
    "                                in total, the FLOPs of its T.gemm statements (2*M*N*K each) and\n"
    "                                the bytes read and written in global memory, times loop trip\n"
    "                                counts and blocks; each total \"exact\", \"upper_bound\" or\n"
    "                                \"unknown\" (null, with a note why).  No CUDA compiler runs\n"
    "  -o OUT               write the output to OUT instead of stdout ('-' = stdout); OUT is\n"
    "                       replaced only once the output is complete (never left truncated),\n"
    "                       and may not be FILE itself\n"
    "  --arch ARCH          target architecture, e.g. sm_90a, sm_80 (default: the local GPU's,\n"
    "                       sm_90a when there is none); checked for every --emit\n"
    "  --compiler NAME      nvrtc (default, in-process) or nvcc (runs the nvcc program)\n"
    "  --dump-after PASS    also print the IR after pass PASS ('all' = after every pass); the dumps\n"
    "                       are part of the --emit ir output, and go to stderr for other --emit.\n"
    "                       Passes: parallel_locals, bound_parallel, size_registers,\n"
    "                       thread_return_tiles,\n"
    "                       uniform_selects, plan_gemm,\n"
    "                       warp_specialize, rasterize_blocks, heavy_first_blocks,\n"
    "                       pipeline_serial_loops, inject_pipeline,\n"
    "                       legalize, split_flat_indices, layout_inference, view_layouts,\n"
    "                       lower_tile_ops,\n"
    "                       remap_global,\n"
    "                       simplify, safe_memory, prefetch_loads, vectorize_loops,\n"
    "                       thread_sync,\n"
    "                       merge_shared_memory, thread_return_barriers\n"
    "  --debug              verify the IR after every pass (slower; catches compiler bugs early)\n"
    "  --pass-config KEY=VALUE  a pass_configs entry, as @tilelang.jit(pass_configs={...}) writes\n"
    "                       it (e.g. tl.disable_warp_specialized=True); over the decorator's, this\n"
    "                       one winning.  Repeatable (at most 32)\n"
    "  --no-cache           neither read nor write the binary cache\n"
    "  -v, --verbose        progress messages on stderr\n"
    "  -h, --help           show this text\n"
    "\n"
    "exit codes: 0 success, 1 error (FILE unreadable, diagnostics, or the compiler log on stderr;\n"
    "            a bad -D value is a diagnostic), 2 usage error (unknown option, bad --emit,\n"
    "            --arch or --dump-after, -k naming no function of FILE, -o naming FILE)\n";

static const char run_usage[] =
    "usage: tilescale run FILE [-k FUNC] [-D NAME=VALUE]... [--arg NAME=VALUE]...\n"
    "                     [--warmup N] [--reps N] [--no-flush-l2] [--check] [--zero NAME]...\n"
    "                     [--seed N] [--device N] [--compiler nvrtc|nvcc] [--pass-config KEY=VALUE]...\n"
    "                     [--no-cache] [-v]\n"
    "\n"
    "Compiles FUNC for the local GPU, allocates every tensor parameter on the device, fills\n"
    "inputs with random values (floats uniform in [-1, 1), signed ints in [-2, 2], unsigned ints\n"
    "and bools in [0, 2] or {0, 1}), fills outputs (parameters in out_idx or made by T.empty)\n"
    "with 0xFF bytes (NaN for float types), launches, and prints the median kernel time and\n"
    "the achieved bandwidth.  Bytes counted = the sum of the sizes of all tensor parameters,\n"
    "i.e. each one read or written exactly once.  Every argument (options, FILE, -k, -D,\n"
    "--arg, --zero) is checked before the GPU is looked for.\n"
    "\n"
    "  -k FUNC, -D NAME=VALUE   as for `tilescale compile`\n"
    "  --arg NAME=VALUE     value of scalar kernel parameter NAME (an integer or a float);\n"
    "                       required for every scalar parameter.  Repeatable.\n"
    "  --warmup N           untimed launches before timing (default 10)\n"
    "  --reps N             timed launches; the median is reported (default 100)\n"
    "  --no-flush-l2        do not overwrite the L2 cache before every timed launch\n"
    "  --check              before timing, launch once and verify that every output element was\n"
    "                       written (no 0xFF poison left) and is finite; exit code 3 if not\n"
    "  --zero NAME          fill tensor parameter NAME with zeros instead (for kernels that\n"
    "                       accumulate into an output, e.g. with T.atomic_add).  Repeatable.\n"
    "  --seed N             seed of the random inputs (default 1)\n"
    "  --device N           CUDA device ordinal (default 0)\n"
    "  --compiler NAME      nvrtc (default) or nvcc\n"
    "  --pass-config KEY=VALUE  a pass_configs entry, as @tilelang.jit(pass_configs={...}) writes\n"
    "                       it (e.g. tl.disable_warp_specialized=True); over the decorator's, this\n"
    "                       one winning.  Repeatable (at most 32)\n"
    "  --no-cache           neither read nor write the binary cache\n"
    "  -v, --verbose        progress messages on stderr\n"
    "  -h, --help           show this text\n"
    "\n"
    "exit codes: 0 success, 1 error, 2 usage error (as for compile, and --arg/--zero naming no\n"
    "            parameter or a bad value), 3 --check failed, 4 no usable GPU or driver (also\n"
    "            when --device names no device)\n";

static const char cache_usage[] =
    "usage: tilescale cache dir|size|clear\n"
    "\n"
    "The binary cache: one file per compiled kernel in $TILESCALE_CACHE_DIR (default\n"
    "~/.cache/tilescale), at most $TILESCALE_CACHE_MAX_BYTES (default 4G) in all.\n"
    "\n"
    "  dir     print the folder\n"
    "  size    print the number of entries, their total size and the limit\n"
    "  clear   remove every entry (files named <sha256>.cubin and writers' temp files;\n"
    "          nothing else in the folder is touched)\n"
    "\n"
    "exit codes: 0 success, 1 the folder could not be read or emptied, 2 usage error\n";

/* Everything given on the command line, for both subcommands. */
typedef struct Options {
  const char *file;
  const char *func;
  ts_param defines[MAX_DEFINES];
  int ndefines;
  ts_param scalars[MAX_SCALARS]; /* --arg NAME=VALUE, same split as -D */
  ts_param pass_configs[MAX_PASS_CONFIGS]; /* --pass-config KEY=VALUE, as @tilelang.jit's */
  int npass_configs;
  int nscalars;
  const char *zeros[MAX_ZEROS];
  int nzeros;
  ts_emit emit;
  const char *out_path;
  const char *arch;
  ts_compiler_kind compiler;
  const char *dump_after;
  int debug;
  int no_cache;
  int verbose;
  int warmup, reps, flush_l2, check, device;
  uint64_t seed;
} Options;

/* A usage mistake: the message and where to find the options (usage is the subcommand's text). */
static void usage_error(const char *usage, const char *fmt, const char *arg) {
  fprintf(stderr, "tilescale: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\n(`tilescale %s --help` lists the options)\n",
          usage == run_usage ? "run" : usage == cache_usage ? "cache" : "compile");
}

/* Splits "NAME=VALUE" in place (the argv string is ours to modify). */
static int split_assignment(char *s, ts_param *out) {
  char *eq = strchr(s, '=');
  if (!eq || eq == s)
    return 0;
  *eq = 0;
  out->name = s;
  out->value = eq + 1;
  return 1;
}

static int parse_int(const char *s, long long lo, long long hi, long long *out) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 0);
  if (errno || end == s || *end || v < lo || v > hi)
    return 0;
  *out = v;
  return 1;
}

/* Returns the option's value: the text after '=' in "--opt=value", else the next argv. */
static const char *option_value(int argc, char **argv, int *i, const char *arg, size_t optlen) {
  if (arg[optlen] == '=')
    return arg + optlen + 1;
  if (*i + 1 >= argc)
    return NULL;
  return argv[++*i];
}

/* Matches "--opt" or "--opt=..." exactly (not "--optx"). */
static int is_opt(const char *arg, const char *opt) {
  size_t n = strlen(opt);
  return strncmp(arg, opt, n) == 0 && (arg[n] == 0 || arg[n] == '=');
}

/* Parses the options of `compile` (is_run = 0) or `run` (is_run = 1).  Returns -1 when
 * parsing succeeded, else the exit code (0 for --help). */
static int parse_options(int argc, char **argv, int is_run, Options *o) {
  const char *usage = is_run ? run_usage : compile_usage;
  memset(o, 0, sizeof *o);
  o->emit = TS_EMIT_CUDA;
  o->warmup = 10;
  o->reps = 100;
  o->flush_l2 = 1;
  o->seed = 1;
  for (int i = 0; i < argc; i++) {
    char *a = argv[i];
    const char *v;
    long long n;
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      fputs(usage, stdout);
      return EXIT_OK;
    } else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
      o->verbose = 1;
    } else if (!strncmp(a, "-k", 2)) {
      o->func = a[2] ? a + 2 : (i + 1 < argc ? argv[++i] : NULL);
      if (!o->func) {
        usage_error(usage, "%s needs a function name", "-k");
        return EXIT_USAGE;
      }
    } else if (!strncmp(a, "-D", 2)) {
      char *d = a[2] ? a + 2 : (i + 1 < argc ? argv[++i] : NULL);
      if (!d) {
        usage_error(usage, "%s needs NAME=VALUE", "-D");
        return EXIT_USAGE;
      }
      if (o->ndefines == MAX_DEFINES) {
        usage_error(usage, "too many -D options (at most %s)", "64");
        return EXIT_USAGE;
      }
      if (!split_assignment(d, &o->defines[o->ndefines])) {
        usage_error(usage, "-D '%s' is not NAME=VALUE", d);
        return EXIT_USAGE;
      }
      o->ndefines++;
    } else if (!strcmp(a, "-o")) {
      v = i + 1 < argc ? argv[++i] : NULL;
      if (!v || !*v || is_run) {
        usage_error(usage, is_run ? "%s is an option of `compile`" : "%s needs a file name", "-o");
        return EXIT_USAGE;
      }
      o->out_path = v;
    } else if (!is_run && is_opt(a, "--emit")) {
      v = option_value(argc, argv, &i, a, 6);
      if (v && !strcmp(v, "ir"))
        o->emit = TS_EMIT_IR;
      else if (v && !strcmp(v, "cuda"))
        o->emit = TS_EMIT_CUDA;
      else if (v && !strcmp(v, "ptx"))
        o->emit = TS_EMIT_PTX;
      else if (v && !strcmp(v, "cubin"))
        o->emit = TS_EMIT_CUBIN;
      else if (v && !strcmp(v, "stats"))
        o->emit = TS_EMIT_STATS;
      else {
        usage_error(usage, "--emit takes ir, cuda, ptx, cubin or stats (got '%s')", v ? v : "");
        return EXIT_USAGE;
      }
    } else if (!is_run && is_opt(a, "--arch")) {
      /* Only present here; whether NVIDIA defined it is the library's answer
       * (ts_compile_options_check in check_compile_options). */
      o->arch = option_value(argc, argv, &i, a, 6);
      if (!o->arch || !*o->arch) {
        usage_error(usage, "%s needs an architecture, e.g. sm_90a", "--arch");
        return EXIT_USAGE;
      }
    } else if (is_opt(a, "--compiler")) {
      v = option_value(argc, argv, &i, a, 10);
      if (v && !strcmp(v, "nvrtc"))
        o->compiler = TS_COMPILER_NVRTC;
      else if (v && !strcmp(v, "nvcc"))
        o->compiler = TS_COMPILER_NVCC;
      else {
        usage_error(usage, "--compiler takes nvrtc or nvcc (got '%s')", v ? v : "");
        return EXIT_USAGE;
      }
    } else if (!is_run && is_opt(a, "--dump-after")) {
      o->dump_after = option_value(argc, argv, &i, a, 12);
      if (!o->dump_after || !*o->dump_after) {
        usage_error(usage, "%s needs a pass name (or 'all')", "--dump-after");
        return EXIT_USAGE;
      }
    } else if (!is_run && !strcmp(a, "--debug")) {
      o->debug = 1;
    } else if (!strcmp(a, "--no-cache")) {
      o->no_cache = 1;
    } else if (is_opt(a, "--pass-config")) {
      v = option_value(argc, argv, &i, a, 13);
      if (!v || o->npass_configs == MAX_PASS_CONFIGS ||
          !split_assignment((char *)v, &o->pass_configs[o->npass_configs])) {
        usage_error(usage, "--pass-config '%s' is not KEY=VALUE (at most 32 of them)", v ? v : "");
        return EXIT_USAGE;
      }
      o->npass_configs++;
    } else if (is_run && is_opt(a, "--arg")) {
      v = option_value(argc, argv, &i, a, 5);
      if (!v || o->nscalars == MAX_SCALARS || !split_assignment((char *)v, &o->scalars[o->nscalars])) {
        usage_error(usage, "--arg '%s' is not NAME=VALUE", v ? v : "");
        return EXIT_USAGE;
      }
      o->nscalars++;
    } else if (is_run && is_opt(a, "--zero")) {
      v = option_value(argc, argv, &i, a, 6);
      if (!v || !*v || o->nzeros == MAX_ZEROS) {
        usage_error(usage, "%s needs a parameter name", "--zero");
        return EXIT_USAGE;
      }
      o->zeros[o->nzeros++] = v;
    } else if (is_run && (is_opt(a, "--warmup") || is_opt(a, "--reps") || is_opt(a, "--seed") ||
                          is_opt(a, "--device"))) {
      size_t optlen = strchr(a, '=') ? (size_t)(strchr(a, '=') - a) : strlen(a);
      v = option_value(argc, argv, &i, a, optlen);
      long long lo = is_opt(a, "--reps") ? 1 : 0;
      if (!v || !parse_int(v, lo, is_opt(a, "--seed") ? INT64_MAX : 1000000, &n)) {
        usage_error(usage, "bad or missing number for %s", a);
        return EXIT_USAGE;
      }
      if (is_opt(a, "--warmup"))
        o->warmup = (int)n;
      else if (is_opt(a, "--reps"))
        o->reps = (int)n;
      else if (is_opt(a, "--seed"))
        o->seed = (uint64_t)n;
      else
        o->device = (int)n;
    } else if (is_run && !strcmp(a, "--no-flush-l2")) {
      o->flush_l2 = 0;
    } else if (is_run && !strcmp(a, "--check")) {
      o->check = 1;
    } else if (a[0] == '-' && a[1]) {
      usage_error(usage, "unknown option '%s'", a);
      return EXIT_USAGE;
    } else if (!o->file) {
      o->file = a;
    } else {
      usage_error(usage, "unexpected argument '%s' (one kernel file per command)", a);
      return EXIT_USAGE;
    }
  }
  if (!o->file) {
    usage_error(usage, "%s", "no kernel file given");
    return EXIT_USAGE;
  }
  return -1;
}

/* Prints the library's last error; compile diagnostics already carry file:line:col.
 * TS_ERR_INVALID_ARGUMENT can only answer an option value the command line gave: a usage
 * error, whichever call found it. */
static int report(ts_context *ctx, ts_status s, const char *what) {
  const char *msg = ts_last_error(ctx);
  if (s == TS_ERR_COMPILE && msg[0])
    fprintf(stderr, "%s%s", msg, msg[strlen(msg) - 1] == '\n' ? "" : "\n");
  else if ((s == TS_ERR_IO || s == TS_ERR_INVALID_ARGUMENT || s == TS_ERR_NOT_FOUND) && msg[0])
    fprintf(stderr, "tilescale: %s\n", msg); /* the message names the file or option */
  else
    fprintf(stderr, "tilescale: %s failed: %s%s%s\n", what, ts_status_string(s), msg[0] ? ": " : "",
            msg);
  if (s == TS_ERR_INVALID_ARGUMENT)
    return EXIT_USAGE;
  return s == TS_ERR_NO_DRIVER ? EXIT_NO_GPU : EXIT_ERROR;
}

static ts_status create_context(const Options *o, ts_context **ctx) {
  ts_context_options co = {0};
  co.size = sizeof co;
  co.device = o->device;
  co.disable_cache = o->no_cache;
  co.verbose = o->verbose;
  ts_status s = ts_context_create(&co, ctx);
  if (s != TS_OK)
    fprintf(stderr, "tilescale: cannot create a context: %s\n", ts_status_string(s));
  return s;
}

/* The compile options checked by the library before any file is read, so `--arch sm_999`
 * or `--dump-after bogus` is a usage error for every --emit (and names what is valid). */
static int check_compile_options(ts_context *ctx, const ts_compile_options *copt) {
  ts_status s = ts_compile_options_check(ctx, copt);
  if (s == TS_OK)
    return -1;
  report(ctx, s, "checking the options");
  return s == TS_ERR_INVALID_ARGUMENT ? EXIT_USAGE : EXIT_ERROR;
}

/* Loads FILE and compiles FUNC (or the only function of the file). */
static int load_and_compile(ts_context *ctx, const Options *o, const ts_compile_options *copt,
                            ts_program **prog, ts_kernel **k, const char **func_out) {
  ts_status s = ts_program_load_file(ctx, o->file, prog);
  if (s != TS_OK)
    return report(ctx, s, "loading the kernel file");
  const char *func = o->func;
  if (!func) {
    const char *names[MAX_FUNCS];
    int n = ts_program_functions(*prog, names, MAX_FUNCS);
    if (n == 0) {
      fprintf(stderr, "tilescale: %s defines no compilable function\n", o->file);
      return EXIT_ERROR;
    }
    if (n != 1) {
      fprintf(stderr, "tilescale: %s has %d compilable functions; pick one with -k:", o->file, n);
      for (int i = 0; i < n && i < MAX_FUNCS; i++)
        fprintf(stderr, " %s", names[i]);
      fprintf(stderr, "\n");
      return EXIT_USAGE;
    }
    func = names[0];
  }
  *func_out = func;
  s = ts_kernel_compile(*prog, func, o->defines, o->ndefines, copt, k);
  if (s != TS_OK) {
    int rc = report(ctx, s, "compilation");
    /* -k naming no function of FILE is the same mistake as leaving -k out of a file with
     * several: the command line does not say which function, so both are usage errors. */
    return s == TS_ERR_NOT_FOUND ? EXIT_USAGE : rc;
  }
  return -1;
}

/* gcc refuses an output that is its own input ("input file is the same as output file");
 * so do we, by st_dev/st_ino, which also sees through symbolic and hard links.  Otherwise
 * `compile s.py -o s.py` replaces the kernel source with CUDA and exits 0. */
static int same_file(const char *a, const char *b) {
  struct stat sa, sb;
  return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static int write_all(int fd, const void *data, size_t size) {
  const char *p = data;
  while (size > 0) {
    ssize_t w = write(fd, p, size);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return 0;
    p += w;
    size -= (size_t)w;
  }
  return 1;
}

/* Writes into an existing non-regular OUT (/dev/null, a FIFO with a reader, a terminal):
 * there is nothing to rename over.  O_NONBLOCK keeps a FIFO with no reader from blocking
 * the open (it fails with ENXIO instead). */
static int write_special(const char *path, const void *data, size_t size) {
  int fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    fprintf(stderr, "tilescale: cannot write %s: %s\n", path,
            errno == ENXIO ? "a FIFO with no reader" : strerror(errno));
    return EXIT_ERROR;
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  int ok = write_all(fd, data, size);
  ok = close(fd) == 0 && ok;
  if (!ok) {
    fprintf(stderr, "tilescale: writing %s failed: %s\n", path, strerror(errno));
    return EXIT_ERROR;
  }
  return EXIT_OK;
}

/* Writes the output to stdout, or to OUT through a temp file in OUT's folder renamed over
 * it: a write that fails half-way (full disk, signal) never leaves a truncated OUT, and an
 * earlier OUT survives.  A symbolic link OUT is written through (its target is replaced),
 * as opening it for writing would. */
static int write_output(const char *path, const void *data, size_t size) {
  if (!path || !strcmp(path, "-")) {
    int bad = fwrite(data, 1, size, stdout) != size || fflush(stdout) != 0;
    if (bad) {
      fprintf(stderr, "tilescale: writing stdout failed: %s\n", strerror(errno));
      return EXIT_ERROR;
    }
    return EXIT_OK;
  }
  char resolved[PATH_MAX];
  const char *dest = path;
  struct stat st;
  if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode) && realpath(path, resolved))
    dest = resolved;
  int exists = stat(dest, &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) {
    fprintf(stderr, "tilescale: cannot write %s: is a directory\n", path);
    return EXIT_ERROR;
  }
  if (exists && !S_ISREG(st.st_mode))
    return write_special(dest, data, size);

  /* The temp file lives next to OUT so that rename() is atomic (same file system). */
  char tmp[PATH_MAX + 16];
  const char *slash = strrchr(dest, '/');
  int dir_len = slash ? (int)(slash - dest + 1) : 0;
  if (snprintf(tmp, sizeof tmp, "%.*s.%s.XXXXXX", dir_len, dest, slash ? slash + 1 : dest) >=
      (int)sizeof tmp) {
    fprintf(stderr, "tilescale: cannot write %s: path too long\n", path);
    return EXIT_ERROR;
  }
  int fd = mkstemp(tmp);
  if (fd < 0) {
    fprintf(stderr, "tilescale: cannot write %s: %s\n", path, strerror(errno));
    return EXIT_ERROR;
  }
  /* mkstemp makes 0600; OUT gets the mode it had, else what a plain create would give. */
  mode_t mask = umask(0);
  umask(mask);
  fchmod(fd, exists ? (st.st_mode & 07777) : (0666 & ~mask));
  int ok = write_all(fd, data, size);
  ok = close(fd) == 0 && ok;
  if (!ok || rename(tmp, dest) != 0) {
    fprintf(stderr, "tilescale: writing %s failed: %s\n", path, strerror(errno));
    unlink(tmp);
    return EXIT_ERROR;
  }
  return EXIT_OK;
}

/* The checks of `compile` that need no file: the emit/compiler pair, a binary for a
 * terminal, -o naming FILE. */
static int check_compile_args(const Options *o) {
  int to_stdout = !o->out_path || !strcmp(o->out_path, "-");
  if (o->emit == TS_EMIT_CUBIN && to_stdout && isatty(STDOUT_FILENO)) {
    usage_error(compile_usage, "%s writes a binary: give -o FILE (or redirect stdout)", "--emit cubin");
    return EXIT_USAGE;
  }
  if (o->emit == TS_EMIT_PTX && o->compiler == TS_COMPILER_NVCC) {
    usage_error(compile_usage, "%s is produced by NVRTC only: drop --compiler nvcc", "--emit ptx");
    return EXIT_USAGE;
  }
  if (!to_stdout && same_file(o->file, o->out_path)) {
    fprintf(stderr, "tilescale: -o %s is the input file %s itself; refusing to overwrite it\n",
            o->out_path, o->file);
    return EXIT_USAGE;
  }
  return -1;
}

static int cmd_compile(int argc, char **argv) {
  Options o;
  int rc = parse_options(argc, argv, 0, &o);
  if (rc >= 0)
    return rc;
  rc = check_compile_args(&o);
  if (rc >= 0)
    return rc;

  ts_context *ctx = NULL;
  if (create_context(&o, &ctx) != TS_OK)
    return EXIT_ERROR;
  ts_compile_options copt = {0};
  copt.size = sizeof copt;
  copt.arch = o.arch;
  copt.compiler = o.compiler;
  copt.no_jit = o.emit == TS_EMIT_IR || o.emit == TS_EMIT_CUDA || o.emit == TS_EMIT_STATS;
  copt.dump_after = o.dump_after;
  copt.debug = o.debug;
  copt.pass_configs = o.pass_configs;
  copt.npass_configs = o.npass_configs;

  ts_program *prog = NULL;
  ts_kernel *k = NULL;
  const char *func = NULL;
  rc = check_compile_options(ctx, &copt);
  if (rc < 0)
    rc = load_and_compile(ctx, &o, &copt, &prog, &k, &func);
  if (rc < 0) {
    if (o.dump_after && o.emit != TS_EMIT_IR) {
      const char *ir = ts_kernel_text(k, TS_EMIT_IR);
      if (ir)
        fputs(ir, stderr);
    }
    if (o.emit == TS_EMIT_CUBIN) {
      const void *data = NULL;
      size_t size = 0;
      ts_status s = ts_kernel_binary(k, &data, &size);
      rc = s != TS_OK ? report(ctx, s, "getting the cubin") : write_output(o.out_path, data, size);
    } else {
      const char *text = ts_kernel_text(k, o.emit);
      if (!text) {
        fprintf(stderr, "tilescale: the compiler produced no %s output\n",
                o.emit == TS_EMIT_IR     ? "IR"
                : o.emit == TS_EMIT_CUDA ? "CUDA"
                : o.emit == TS_EMIT_PTX  ? "PTX"
                                         : "stats");
        rc = EXIT_ERROR;
      } else {
        rc = write_output(o.out_path, text, strlen(text));
      }
    }
  }
  ts_kernel_destroy(k);
  ts_program_destroy(prog);
  ts_context_destroy(ctx);
  return rc;
}

/* ---- run: random inputs ------------------------------------------------------------------ */

/* splitmix64: small, fast, and good enough for test data; state is explicit (no globals). */
static uint64_t rng_next(uint64_t *state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* Uniform in [-1, 1) with 24 random bits: exactly representable in fp32. */
static float rng_unit(uint64_t *state) {
  return (float)((int64_t)(rng_next(state) >> 40) - (1 << 23)) / (float)(1 << 23);
}

/* Small signed integer in [-2, 2]. */
static int64_t rng_small(uint64_t *state) {
  return (int64_t)(rng_next(state) % 5) - 2;
}

/* Fills n elements of dtype t with random values (see run_usage for the ranges). */
static int fill_random(void *buf, ts_dtype t, size_t n, uint64_t *rng) {
  for (size_t i = 0; i < n; i++) {
    switch (t) {
    case TS_DTYPE_FLOAT32: ((float *)buf)[i] = rng_unit(rng); break;
    case TS_DTYPE_FLOAT64: ((double *)buf)[i] = rng_unit(rng); break;
    case TS_DTYPE_FLOAT16: ((uint16_t *)buf)[i] = ts_f32_to_f16(rng_unit(rng)); break;
    case TS_DTYPE_BFLOAT16: ((uint16_t *)buf)[i] = ts_f32_to_bf16(rng_unit(rng)); break;
    /* fp8: a random sign and mantissa with an exponent field below the bias, i.e. a
     * magnitude below 1, without needing an fp8 encoder. */
    case TS_DTYPE_FLOAT8_E4M3: ((uint8_t *)buf)[i] = (uint8_t)(rng_next(rng) & 0xb7u); break;
    case TS_DTYPE_FLOAT8_E5M2: ((uint8_t *)buf)[i] = (uint8_t)(rng_next(rng) & 0xbbu); break;
    case TS_DTYPE_BOOL: ((uint8_t *)buf)[i] = (uint8_t)(rng_next(rng) & 1u); break;
    /* 4-bit types: any byte is two valid elements (the buffer holds n bytes, twice enough) */
    case TS_DTYPE_INT4: case TS_DTYPE_UINT4: case TS_DTYPE_FLOAT4_E2M1:
      ((uint8_t *)buf)[i] = (uint8_t)rng_next(rng);
      break;
    case TS_DTYPE_INT8: ((int8_t *)buf)[i] = (int8_t)rng_small(rng); break;
    case TS_DTYPE_INT16: ((int16_t *)buf)[i] = (int16_t)rng_small(rng); break;
    case TS_DTYPE_INT32: ((int32_t *)buf)[i] = (int32_t)rng_small(rng); break;
    case TS_DTYPE_INT64: ((int64_t *)buf)[i] = rng_small(rng); break;
    case TS_DTYPE_UINT8: ((uint8_t *)buf)[i] = (uint8_t)(rng_next(rng) % 3); break;
    case TS_DTYPE_UINT16: ((uint16_t *)buf)[i] = (uint16_t)(rng_next(rng) % 3); break;
    case TS_DTYPE_UINT32: ((uint32_t *)buf)[i] = (uint32_t)(rng_next(rng) % 3); break;
    case TS_DTYPE_UINT64: ((uint64_t *)buf)[i] = rng_next(rng) % 3; break;
    default: return 0;
    }
  }
  return 1;
}

/* Counts, among n elements, those still all-0xFF (never written) and the non-finite ones. */
static void scan_output(const unsigned char *buf, ts_dtype t, size_t n, size_t *poisoned,
                        size_t *nonfinite) {
  size_t es = ts_dtype_size(t);
  *poisoned = *nonfinite = 0;
  for (size_t i = 0; i < n; i++) {
    const unsigned char *e = buf + i * es;
    size_t b = 0;
    while (b < es && e[b] == 0xFF)
      b++;
    if (b == es) {
      (*poisoned)++;
      continue;
    }
    uint64_t bits = 0;
    memcpy(&bits, e, es); /* little-endian: the low bytes */
    int bad = 0;
    switch (t) {
    case TS_DTYPE_FLOAT16: bad = (bits & 0x7c00u) == 0x7c00u; break;
    case TS_DTYPE_BFLOAT16: bad = (bits & 0x7f80u) == 0x7f80u; break;
    case TS_DTYPE_FLOAT32: bad = (bits & 0x7f800000u) == 0x7f800000u; break;
    case TS_DTYPE_FLOAT64: bad = (bits & 0x7ff0000000000000ull) == 0x7ff0000000000000ull; break;
    case TS_DTYPE_FLOAT8_E4M3: bad = (bits & 0x7fu) == 0x7fu; break;
    case TS_DTYPE_FLOAT8_E5M2: bad = (bits & 0x7cu) == 0x7cu; break;
    default: break;
    }
    *nonfinite += (size_t)bad;
  }
}

static int is_float_dtype(ts_dtype t) {
  return t == TS_DTYPE_FLOAT16 || t == TS_DTYPE_BFLOAT16 || t == TS_DTYPE_FLOAT32 ||
         t == TS_DTYPE_FLOAT64 || t == TS_DTYPE_FLOAT8_E4M3 || t == TS_DTYPE_FLOAT8_E5M2;
}

static void format_shape(char *out, size_t cap, const ts_arg_info *ai) {
  size_t len = (size_t)snprintf(out, cap, "%s[", ts_dtype_name(ai->dtype));
  for (int d = 0; d < ai->ndim && len < cap; d++)
    len += (size_t)snprintf(out + len, cap - len, "%s%lld", d ? ", " : "", (long long)ai->shape[d]);
  if (len < cap)
    snprintf(out + len, cap - len, "]");
}

/* Per-parameter state of `run`. */
typedef struct RunParam {
  ts_arg_info info;
  int64_t shape[8];
  size_t numel, bytes;
  void *dev;
  int zero;
} RunParam;

/* Binds scalar parameter p from --arg; returns 0 (with a message) when missing or bad. */
static int bind_scalar(const Options *o, const RunParam *p, ts_arg *arg) {
  for (int i = 0; i < o->nscalars; i++) {
    if (strcmp(o->scalars[i].name, p->info.name) != 0)
      continue;
    const char *v = o->scalars[i].value;
    char *end;
    arg->kind = TS_ARG_SCALAR;
    if (is_float_dtype(p->info.dtype)) {
      arg->f = strtod(v, &end);
      arg->i = (int64_t)arg->f;
    } else if (p->info.dtype == TS_DTYPE_BOOL && (!strcmp(v, "True") || !strcmp(v, "true"))) {
      arg->i = 1, end = (char *)v + strlen(v);
    } else if (p->info.dtype == TS_DTYPE_BOOL && (!strcmp(v, "False") || !strcmp(v, "false"))) {
      arg->i = 0, end = (char *)v + strlen(v);
    } else {
      errno = 0;
      arg->i = strtoll(v, &end, 0);
      arg->f = (double)arg->i;
      if (errno)
        end = (char *)v;
    }
    if (end == v || *end) {
      fprintf(stderr, "tilescale: --arg %s=%s: not a valid %s value\n", p->info.name, v,
              ts_dtype_name(p->info.dtype));
      return 0;
    }
    return 1;
  }
  fprintf(stderr, "tilescale: scalar parameter '%s' (%s) needs a value: --arg %s=VALUE\n", p->info.name,
          ts_dtype_name(p->info.dtype), p->info.name);
  return 0;
}

/* Everything `run` holds, released by run_free. */
typedef struct RunState {
  ts_context *ctx;
  ts_program *prog;
  ts_kernel *k;
  const char *func;
  RunParam *params;
  ts_arg *args;
  unsigned char *host; /* staging buffer of max_bytes */
  int nargs;
  size_t total_bytes, max_bytes;
} RunState;

/* Compiles FUNC and checks every argument against its parameters, all before looking for
 * a GPU: a typo in --zero or a missing --arg is reported as such on any machine, not
 * hidden behind "no GPU".  Without a GPU the kernel goes through the front end and the
 * passes only (no_jit, for the default target), which is what the checks need. */
static int run_prepare(const Options *o, RunState *r) {
  ts_compile_options copt = {0};
  copt.size = sizeof copt;
  copt.compiler = o->compiler; /* arch NULL: the device's own */
  copt.pass_configs = o->pass_configs;
  copt.npass_configs = o->npass_configs;
  int has_gpu = ts_context_device_sm(r->ctx) != 0;
  copt.no_jit = !has_gpu;
  int rc = check_compile_options(r->ctx, &copt);
  if (rc < 0)
    rc = load_and_compile(r->ctx, o, &copt, &r->prog, &r->k, &r->func);
  if (rc >= 0)
    return rc;
  r->nargs = ts_kernel_num_args(r->k);
  r->params = calloc((size_t)(r->nargs > 0 ? r->nargs : 1), sizeof *r->params);
  r->args = calloc((size_t)(r->nargs > 0 ? r->nargs : 1), sizeof *r->args);
  if (!r->params || !r->args) {
    fprintf(stderr, "tilescale: out of host memory\n");
    return EXIT_ERROR;
  }
  for (int z = 0; z < o->nzeros; z++) {
    int found = 0;
    for (int i = 0; i < r->nargs; i++) {
      ts_arg_info ai;
      if (ts_kernel_arg_info(r->k, i, &ai) == TS_OK && !strcmp(ai.name, o->zeros[z]))
        found = ai.kind == TS_ARG_TENSOR;
    }
    if (!found) {
      fprintf(stderr, "tilescale: --zero %s: the kernel has no tensor parameter of that name\n", o->zeros[z]);
      return EXIT_USAGE;
    }
  }
  for (int i = 0; i < r->nargs; i++) {
    RunParam *p = &r->params[i];
    ts_status s = ts_kernel_arg_info(r->k, i, &p->info);
    if (s != TS_OK)
      return report(r->ctx, s, "reading the kernel's parameters");
    if (p->info.kind == TS_ARG_SCALAR) {
      if (!bind_scalar(o, p, &r->args[i]))
        return EXIT_USAGE;
      continue;
    }
    p->numel = 1;
    for (int d = 0; d < p->info.ndim; d++) {
      if (p->info.shape[d] < 0) {
        fprintf(stderr,
                "tilescale: parameter '%s' has a dynamic dimension %d; `run` needs static shapes "
                "(bind them with -D)\n",
                p->info.name, d);
        return EXIT_USAGE;
      }
      p->shape[d] = p->info.shape[d];
      p->numel *= (size_t)p->info.shape[d];
    }
    p->bytes = p->numel * ts_dtype_size(p->info.dtype);
    r->total_bytes += p->bytes;
    if (p->bytes > r->max_bytes)
      r->max_bytes = p->bytes;
    for (int z = 0; z < o->nzeros; z++)
      p->zero |= !strcmp(o->zeros[z], p->info.name);
  }
  if (!has_gpu) {
    /* Any device call fails with the context's reason (no libcuda.so.1, no device N). */
    const char *why = ts_synchronize(r->ctx) == TS_ERR_NO_DRIVER ? ts_last_error(r->ctx) : "";
    fprintf(stderr, "tilescale: no usable GPU or CUDA driver%s%s\n",
            why[0] ? ": " : " (libcuda.so.1 missing or no device)", why);
    return EXIT_NO_GPU;
  }
  return -1;
}

/* Allocates every tensor parameter on the device and fills it (random, zeros or poison). */
static int run_alloc(const Options *o, RunState *r) {
  uint64_t rng = o->seed * 0x2545F4914F6CDD1Dull + 1;
  printf("kernel %s from %s%s\n", r->func, o->file,
         ts_kernel_from_cache(r->k) ? " (binary from the cache)" : "");
  r->host = malloc(r->max_bytes ? r->max_bytes : 1);
  if (!r->host) {
    fprintf(stderr, "tilescale: out of host memory\n");
    return EXIT_ERROR;
  }
  for (int i = 0; i < r->nargs; i++) {
    RunParam *p = &r->params[i];
    if (p->info.kind != TS_ARG_TENSOR) {
      printf("  %-12s %-24s scalar  %g\n", p->info.name, ts_dtype_name(p->info.dtype),
             is_float_dtype(p->info.dtype) ? r->args[i].f : (double)r->args[i].i);
      continue;
    }
    const char *how = p->zero ? "zeros" : p->info.is_output ? "poisoned (0xFF)" : "random";
    char shape[160];
    format_shape(shape, sizeof shape, &p->info);
    printf("  %-12s %-24s %-7s %s\n", p->info.name, shape, p->info.is_output ? "output" : "input", how);
    ts_status s = ts_device_malloc(r->ctx, p->bytes ? p->bytes : 1, &p->dev);
    if (s == TS_OK && p->bytes) {
      if (p->zero)
        s = ts_memset_d8(r->ctx, p->dev, 0, p->bytes);
      else if (p->info.is_output)
        s = ts_memset_d8(r->ctx, p->dev, 0xFF, p->bytes);
      else if (!fill_random(r->host, p->info.dtype, p->numel, &rng)) {
        fprintf(stderr, "tilescale: no random fill for dtype %s (parameter '%s')\n",
                ts_dtype_name(p->info.dtype), p->info.name);
        return EXIT_ERROR;
      } else
        s = ts_memcpy_h2d(r->ctx, p->dev, r->host, p->bytes);
    }
    if (s != TS_OK)
      return report(r->ctx, s, "allocating the parameters");
    ts_arg *a = &r->args[i];
    a->kind = TS_ARG_TENSOR;
    a->tensor.data = p->dev;
    a->tensor.dtype = p->info.dtype;
    a->tensor.ndim = p->info.ndim;
    a->tensor.shape = p->shape;
    a->tensor.strides = NULL;
    a->tensor.device = o->device;
  }
  return -1;
}

/* --check: one launch, then every output scanned for poison left and non-finite values. */
static int run_check(RunState *r) {
  ts_status s = ts_kernel_launch(r->k, r->args, r->nargs, NULL);
  if (s == TS_OK)
    s = ts_synchronize(r->ctx);
  if (s != TS_OK)
    return report(r->ctx, s, "launch");
  int failed = 0;
  for (int i = 0; i < r->nargs; i++) {
    RunParam *p = &r->params[i];
    if (p->info.kind != TS_ARG_TENSOR || !p->info.is_output || !p->bytes)
      continue;
    s = ts_memcpy_d2h(r->ctx, r->host, p->dev, p->bytes);
    if (s != TS_OK)
      return report(r->ctx, s, "copying an output back");
    size_t poisoned, nonfinite;
    scan_output(r->host, p->info.dtype, p->numel, &poisoned, &nonfinite);
    printf("check %s: %zu of %zu elements unwritten, %zu not finite: %s\n", p->info.name, poisoned, p->numel,
           nonfinite, poisoned || nonfinite ? "FAIL" : "ok");
    failed |= poisoned || nonfinite;
  }
  return failed ? EXIT_CHECK : -1;
}

static int run_time(const Options *o, RunState *r) {
  double ms = 0;
  ts_status s = ts_kernel_benchmark(r->k, r->args, r->nargs, o->warmup, o->reps, o->flush_l2, &ms);
  if (s != TS_OK)
    return report(r->ctx, s, "benchmark");
  printf("time: %.4f ms (median of %d runs after %d warm-up%s)\n", ms, o->reps, o->warmup,
         o->flush_l2 ? ", L2 flushed before each" : ", L2 not flushed");
  printf("bandwidth: %.1f GB/s (%.2f MB: every tensor parameter read or written once)\n",
         ms > 0 ? (double)r->total_bytes / (ms * 1e-3) / 1e9 : 0.0, (double)r->total_bytes / 1e6);
  return EXIT_OK;
}

static void run_free(RunState *r) {
  if (r->params)
    for (int i = 0; i < r->nargs; i++)
      if (r->params[i].dev)
        ts_device_free(r->ctx, r->params[i].dev);
  free(r->host);
  free(r->params);
  free(r->args);
  ts_kernel_destroy(r->k);
  ts_program_destroy(r->prog);
  ts_context_destroy(r->ctx);
}

static int cmd_run(int argc, char **argv) {
  Options o;
  int rc = parse_options(argc, argv, 1, &o);
  if (rc >= 0)
    return rc;
  RunState r;
  memset(&r, 0, sizeof r);
  if (create_context(&o, &r.ctx) != TS_OK)
    return EXIT_ERROR;
  rc = run_prepare(&o, &r);
  if (rc < 0)
    rc = run_alloc(&o, &r);
  if (rc < 0 && o.check)
    rc = run_check(&r);
  if (rc < 0)
    rc = run_time(&o, &r);
  run_free(&r);
  return rc;
}

/* ---- cache ------------------------------------------------------------------------------ */
/* "3.2 MiB": the size for people, next to the exact byte count for scripts. */
static const char *human_bytes(uint64_t n, char *buf, size_t cap) {
  static const char *const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  double v = (double)n;
  int u = 0;
  while (v >= 1024 && u < 4)
    v /= 1024, u++;
  if (u == 0)
    snprintf(buf, cap, "%llu bytes", (unsigned long long)n);
  else
    snprintf(buf, cap, "%.1f %s", v, units[u]);
  return buf;
}

static int cmd_cache(int argc, char **argv) {
  if (argc >= 1 && (!strcmp(argv[0], "-h") || !strcmp(argv[0], "--help"))) {
    fputs(cache_usage, stdout);
    return EXIT_OK;
  }
  if (argc != 1 || (strcmp(argv[0], "dir") && strcmp(argv[0], "size") && strcmp(argv[0], "clear"))) {
    usage_error(cache_usage, argc ? "unknown cache action '%s' (dir, size or clear)" : "%s",
                argc ? argv[0] : "cache needs an action: dir, size or clear");
    return EXIT_USAGE;
  }
  const char *action = argv[0];
  Options o;
  memset(&o, 0, sizeof o);
  ts_context *ctx = NULL;
  if (create_context(&o, &ctx) != TS_OK)
    return EXIT_ERROR;
  ts_cache_info info;
  int rc = EXIT_OK;
  if (ts_cache_get_info(ctx, &info) != TS_OK || !info.dir) {
    fprintf(stderr, "tilescale: no cache folder: set TILESCALE_CACHE_DIR (HOME is not set)\n");
    rc = EXIT_ERROR;
  } else if (!strcmp(action, "dir")) {
    printf("%s\n", info.dir);
    if (!info.enabled)
      fprintf(stderr, "tilescale: note: the cache is turned off (TILESCALE_DISABLE_CACHE)\n");
  } else if (!strcmp(action, "size")) {
    char used[32], limit[64], limit_h[32];
    if (info.max_bytes)
      snprintf(limit, sizeof limit, "%llu bytes (%s)", (unsigned long long)info.max_bytes,
               human_bytes(info.max_bytes, limit_h, sizeof limit_h));
    printf("%s: %llu entries, %llu bytes (%s); limit: %s%s\n", info.dir, (unsigned long long)info.entries,
           (unsigned long long)info.bytes, human_bytes(info.bytes, used, sizeof used),
           info.max_bytes ? limit : "none", info.enabled ? "" : " [turned off]");
  } else {
    uint64_t removed = 0;
    ts_status s = ts_cache_clear(ctx, &removed);
    printf("%s: removed %llu entries\n", info.dir, (unsigned long long)removed);
    if (s != TS_OK)
      rc = report(ctx, s, "clearing the cache");
  }
  ts_context_destroy(ctx);
  return rc;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fputs(main_usage, stderr);
    return EXIT_USAGE;
  }
  const char *cmd = argv[1];
  if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
    fputs(main_usage, stdout);
    return EXIT_OK;
  }
  if (!strcmp(cmd, "--version")) {
    if (argc > 2) {
      fprintf(stderr, "tilescale: unexpected argument '%s' after --version\n", argv[2]);
      return EXIT_USAGE;
    }
    printf("tilescale %s\n", TS_VERSION_STRING);
    return EXIT_OK;
  }
  if (!strcmp(cmd, "help")) {
    const char *topic = argc > 2 ? argv[2] : NULL;
    if (!topic)
      fputs(main_usage, stdout);
    else if (!strcmp(topic, "compile"))
      fputs(compile_usage, stdout);
    else if (!strcmp(topic, "run"))
      fputs(run_usage, stdout);
    else if (!strcmp(topic, "cache"))
      fputs(cache_usage, stdout);
    else if (!strcmp(topic, "launch")) {
      char *help_argv[] = {"launch", "--help", NULL};
      return cmd_launch(2, help_argv);
    } else {
      fprintf(stderr, "tilescale: no command '%s' to show help for (compile, run, launch, cache)\n", topic);
      return EXIT_USAGE;
    }
    return EXIT_OK;
  }
  if (!strcmp(cmd, "compile"))
    return cmd_compile(argc - 2, argv + 2);
  if (!strcmp(cmd, "run"))
    return cmd_run(argc - 2, argv + 2);
  if (!strcmp(cmd, "cache"))
    return cmd_cache(argc - 2, argv + 2);
  if (!strcmp(cmd, "launch"))
    return cmd_launch(argc - 1, argv + 1);
  fprintf(stderr, "tilescale: unknown command '%s'\n\n%s", cmd, main_usage);
  return EXIT_USAGE;
}
