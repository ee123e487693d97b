/* driver.c — the compiler driver (driver.h): front end -> passes -> codegen, and target
 * names.  The only file that includes headers of every compiler layer. */
#include "driver.h"

#include <string.h>

#include "../front/front.h"
#include "../front/lex.h"
#include "../pass/pipeline.h"

_Static_assert(DRV_MAX_SOURCE_BYTES == LEX_MAX_SOURCE_BYTES, "driver.h and lex.h disagree on the file limit");

AstNode *drv_parse(TsCompiler *c, const SourceFile *file) { return parse_module(c, file); }

int drv_functions(const AstNode *module, const char **names, int max) {
  return module ? front_list_functions(module, names, names ? max : 0) : 0;
}

bool drv_compile(TsCompiler *c, const AstNode *module, const char *func, const ts_param *params, int nparams,
                 StrBuf *ir_text, IrFunc **f_out, CgOutput *cg) {
  memset(cg, 0, sizeof *cg);
  *f_out = NULL;
  IrFunc *f = front_compile(c, module, func, params, nparams);
  if (c->diag.errors > 0 || !f) return false;
  ir_print_func(ir_text, f);
  if (!pass_pipeline(c, f) || c->diag.errors > 0) return false;
  if (!cg_cuda(c, f, cg) || c->diag.errors > 0) return false;
  *f_out = f;
  return true;
}

bool drv_parse_arch(const char *s, TsTarget *out) {
  if (!s) return false;
  if (strncmp(s, "sm_", 3) == 0) s += 3;
  int sm = 0, digits = 0;
  while (*s >= '0' && *s <= '9' && digits < 4) sm = sm * 10 + (*s++ - '0'), digits++;
  bool a = false;
  if (*s == 'a') a = true, s++;
  if (*s || digits < 2 || sm < 50) return false;
  out->sm = sm;
  out->arch_a = a;
  return true;
}
