/* diag.c — user-facing diagnostics: `file:line:col: error: message`, the source line
 * and a caret under the column (cproc/chibicc style).  Errors are counted, never fatal. */
#include <stdio.h>
#include <string.h>

#include "base.h"
#include "compiler.h"

const SrcLoc SRCLOC_NONE = {NULL, 0, 0};

/* Appends the text of line `line` (1-based) of f, without its newline. */
static void append_source_line(StrBuf *sb, const SourceFile *f, int line, int col) {
  if (!f || !f->text || line <= 0) return;
  const char *p = f->text, *end = f->text + f->len;
  for (int l = 1; l < line && p < end; p++)
    if (*p == '\n') l++;
  if (p >= end && line > 1) return;
  const char *e = p;
  while (e < end && *e != '\n' && *e != '\r') e++;
  sb_appendn(sb, "  ", 2);
  sb_appendn(sb, p, (size_t)(e - p));
  sb_appendn(sb, "\n  ", 3);
  /* Tabs in the line are copied so the caret lines up in a terminal. */
  for (int i = 1; i < col && p + i - 1 < e; i++) sb_putc(sb, p[i - 1] == '\t' ? '\t' : ' ');
  sb_appendn(sb, "^\n", 2);
}

void diag_verror(Diag *d, SrcLoc loc, const char *kind, const char *fmt, va_list ap) {
  int max = d->max_errors ? d->max_errors : 50;
  bool is_error = strcmp(kind, "error") == 0;
  if (is_error) d->errors++;
  if (!strcmp(kind, "warning")) d->warnings++;
  if (is_error && d->errors == max + 1) {
    sb_append(&d->out, "tilescale: too many errors, stopping output\n");
    return;
  }
  if (is_error && d->errors > max + 1) return;
  size_t start = d->out.len;
  if (loc.file && loc.line > 0)
    sb_printf(&d->out, "%s:%d:%d: %s: ", loc.file->name, loc.line, loc.col, kind);
  else if (loc.file)
    sb_printf(&d->out, "%s: %s: ", loc.file->name, kind);
  else
    sb_printf(&d->out, "tilescale: %s: ", kind);
  sb_vprintf(&d->out, fmt, ap);
  sb_putc(&d->out, '\n');
  append_source_line(&d->out, loc.file, loc.line, loc.col);
  if (d->echo) fputs(d->out.data + start, stderr);
}

#define DIAG_FN(fn, kind)                                   \
  void fn(Diag *d, SrcLoc loc, const char *fmt, ...) {      \
    va_list ap;                                             \
    va_start(ap, fmt);                                      \
    diag_verror(d, loc, kind, fmt, ap);                     \
    va_end(ap);                                             \
  }
DIAG_FN(diag_error, "error")
DIAG_FN(diag_warning, "warning")
DIAG_FN(diag_note, "note")

void diag_free(Diag *d) { sb_free(&d->out); }

void ts_compiler_init(TsCompiler *c, TsTarget target) {
  memset(c, 0, sizeof *c);
  c->arena = arena_new();
  c->target = target;
}

void ts_compiler_fini(TsCompiler *c) {
  arena_destroy(c->arena);
  diag_free(&c->diag);
  c->arena = NULL;
}
