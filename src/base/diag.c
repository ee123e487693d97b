/* diag.c — user-facing diagnostics: `file:line:col: error: message`, the source line
 * and a caret under the column (cproc/chibicc style).  Errors are counted, never fatal. */
#include <stdio.h>
#include <string.h>

#include "base.h"
#include "compiler.h"

const SrcLoc SRCLOC_NONE = {NULL, 0, 0};

/* The echoed line is cut to a window of this many display columns around the caret,
 * marked "..." where cut: a generated 50 MB one-line file must not come back whole. */
enum { DIAG_LINE_COLS = 200, DIAG_TAB = 8, DIAG_MSG_BYTES = 4096 };

/* Start of line `line` (1-based) of f, or NULL; *end gets the end of its text.  Line
 * breaks are "\n", "\r\n" and a lone "\r", as the lexer counts them. */
static const char *find_line(const SourceFile *f, int line, const char **end) {
  const char *p = f->text, *e = f->text + f->len;
  for (int l = 1; l < line; l++) {
    while (p < e && *p != '\n' && *p != '\r') p++;
    if (p >= e) return NULL;
    if (*p == '\r' && p + 1 < e && p[1] == '\n') p++;
    p++;
  }
  const char *q = p;
  while (q < e && *q != '\n' && *q != '\r') q++;
  *end = q;
  return p;
}

/* One character of the echoed line: how many bytes it takes in the source, what is
 * printed for it (tabs expand to the next tab stop so the caret line needs no tabs;
 * control characters and bytes that are not UTF-8 are replaced, never sent to the
 * terminal) and how many columns that takes. */
typedef struct Cell {
  int bytes, width;
  const char *text;
  int text_len;
} Cell;

static Cell next_cell(const char *p, const char *e, int dcol) {
  static const char spaces[DIAG_TAB] = "        ";
  unsigned char ch = (unsigned char)*p;
  uint32_t cp;
  if (ch == '\t') {
    int w = DIAG_TAB - dcol % DIAG_TAB;
    return (Cell){1, w, spaces, w};
  }
  if (ch < 0x20 || ch == 0x7F) return (Cell){1, 1, "?", 1};
  if (ch < 0x80) return (Cell){1, 1, p, 1};
  int n = ts_utf8_decode(p, e, &cp);
  if (!n) return (Cell){1, 1, "\xEF\xBF\xBD", 3}; /* U+FFFD */
  return (Cell){n, ts_char_width(cp), p, n};
}

/* Appends line `line` of f and a caret under byte column `col` (1-based), both in
 * display columns (wide characters count two, combining marks none). */
static void append_source_line(StrBuf *sb, const SourceFile *f, int line, int col) {
  if (!f || !f->text || line <= 0) return;
  const char *e, *p = find_line(f, line, &e);
  if (!p) return;
  /* Display column of the caret: the character containing byte col - 1, or the end. */
  const char *target = col > 1 && (size_t)(col - 1) < (size_t)(e - p) ? p + col - 1 : col > 1 ? e : p;
  int caret = 0;
  for (const char *q = p; q < target;) {
    Cell c = next_cell(q, e, caret);
    if (q + c.bytes > target) break;
    caret += c.width;
    q += c.bytes;
  }
  /* Window [lo, lo + DIAG_LINE_COLS): from the start when the caret fits well inside. */
  int lo = caret < DIAG_LINE_COLS - DIAG_LINE_COLS / 4 ? 0 : caret - DIAG_LINE_COLS / 2;
  int hi = lo + DIAG_LINE_COLS, dcol = 0, first = -1;
  bool cut_right = false;
  sb_appendn(sb, "  ", 2);
  if (lo > 0) sb_appendn(sb, "...", 3);
  for (const char *q = p; q < e;) {
    Cell c = next_cell(q, e, dcol);
    if (dcol + c.width > hi) {
      cut_right = true;
      break;
    }
    if (dcol >= lo) {
      if (first < 0) first = dcol;
      sb_appendn(sb, c.text, (size_t)c.text_len);
    }
    dcol += c.width;
    q += c.bytes;
  }
  if (first < 0) first = dcol;
  if (cut_right) sb_appendn(sb, "...", 3);
  sb_appendn(sb, "\n  ", 3);
  if (lo > 0) sb_appendn(sb, "   ", 3);
  for (int i = first; i < caret; i++) sb_putc(sb, ' ');
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
  size_t msg = d->out.len;
  sb_vprintf(&d->out, fmt, ap);
  /* A message quotes user text (names, strings); a huge one is cut like the line. */
  if (d->out.len - msg > DIAG_MSG_BYTES) {
    size_t cut = msg + DIAG_MSG_BYTES;
    while (cut > msg && ((unsigned char)d->out.data[cut] & 0xC0) == 0x80) cut--; /* UTF-8 boundary */
    d->out.len = cut;
    sb_appendn(&d->out, "...", 3);
  }
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

DiagMark diag_mark(const Diag *d) { return (DiagMark){d->out.len, d->errors, d->warnings}; }

void diag_rewind(Diag *d, DiagMark m) {
  d->out.len = m.out_len;
  if (d->out.data) d->out.data[m.out_len] = 0;
  d->errors = m.errors;
  d->warnings = m.warnings;
}

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
