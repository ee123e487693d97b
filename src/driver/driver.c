/* driver.c — the compiler driver (driver.h): front end -> passes -> codegen, and target
 * names.  The only file that includes headers of every compiler layer. */
#include "driver.h"

#include <string.h>

#include "../front/front.h"
#include "../front/lex.h"
#include "../ir/stats.h"
#include "../pass/pipeline.h"

_Static_assert(DRV_MAX_SOURCE_BYTES == LEX_MAX_SOURCE_BYTES, "driver.h and lex.h disagree on the file limit");

AstNode *drv_parse(TsCompiler *c, const SourceFile *file) { return parse_module(c, file); }

int drv_functions(const AstNode *module, const char **names, int max) {
  return module ? front_list_functions(module, names, names ? max : 0) : 0;
}

bool drv_compile(TsCompiler *c, const AstNode *module, const char *func, const ts_param *params, int nparams,
                 StrBuf *ir_text, StrBuf *stats_text, IrFunc **f_out, CgOutput *cg) {
  memset(cg, 0, sizeof *cg);
  *f_out = NULL;
  IrFunc *f = front_compile(c, module, func, params, nparams);
  if (c->diag.errors > 0 || !f) return false;
  ir_print_func(ir_text, f);
  /* counted on the tile-level IR, before the passes split tile statements over threads */
  ir_func_stats(f, stats_text);
  if (!pass_pipeline(c, f) || c->diag.errors > 0) return false;
  if (!cg_cuda(c, f, cg) || c->diag.errors > 0) return false;
  *f_out = f;
  return true;
}

/* The SM versions NVIDIA has defined (sm_101 was renamed sm_110 in CUDA 13 and stays
 * accepted for older toolkits).  A number outside this list is a typo: it is refused for
 * every --emit, not only when NVRTC gets to see it.  Which of these the installed NVRTC
 * still compiles for is NVRTC's answer (CUDA 13 dropped everything below sm_75). */
static const int known_sms[] = {50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 88, 89, 90,
                                100, 101, 103, 110, 120, 121};

bool drv_parse_arch(const char *s, TsTarget *out) {
  if (!s) return false;
  if (strncmp(s, "sm_", 3) == 0) s += 3;
  int sm = 0, digits = 0;
  while (*s >= '0' && *s <= '9' && digits < 4) sm = sm * 10 + (*s++ - '0'), digits++;
  bool a = false;
  if (*s == 'a') a = true, s++;
  if (*s || digits < 2) return false;
  bool known = false;
  for (int i = 0; i < TS_ARRAY_LEN(known_sms); i++) known |= known_sms[i] == sm;
  /* The "a" (architecture-specific) variants exist from Hopper on. */
  if (!known || (a && sm < 90)) return false;
  out->sm = sm;
  out->arch_a = a;
  return true;
}

void drv_arch_list(StrBuf *out) {
  for (int i = 0; i < TS_ARRAY_LEN(known_sms); i++) {
    sb_printf(out, "%ssm_%d", i ? ", " : "", known_sms[i]);
    if (known_sms[i] >= 90) sb_printf(out, ", sm_%da", known_sms[i]);
  }
}

bool drv_has_pass(const char *name) { return pass_pipeline_has(name); }
void drv_pass_names(StrBuf *out) { pass_pipeline_names(out); }
