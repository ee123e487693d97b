/* test_device_abi.c — the device ABI table (src/codegen/device_abi.c) against the device
 * headers themselves (the copies embedded in the library): every typed device operation
 * names a function that exists in the header the row says, with as many call parameters as
 * the IR operation has operands, and as many template parameters as the row passes (no
 * fewer than the template requires, no more than it takes).  A header change that breaks
 * the contract fails here instead of in NVRTC on a GPU machine. */
#include <ctype.h>
#include <stdlib.h>

#include "../../src/codegen/device_abi.h"
#include "../../src/base/embedded.h"
#include "test.h"

typedef struct Decl {
  const char *header; /* include name */
  int nparams;        /* call parameters */
  int nparams_req;    /* ... without a default */
  int ntemplate;      /* template parameters */
  int nrequired;      /* value template parameters without a default (class ones are deduced) */
  bool found;
} Decl;

/* Items of a parenthesised / angle-bracketed list starting after its opening bracket: commas
 * at depth 0 plus one, 0 for an empty list.  Also counts defaulted items (`=` at depth 0)
 * and items that are neither defaulted nor `class`/`typename` parameters. */
static int count_list(const char *p, int *ndefaults, int *nvalue_req) {
  int depth = 0, n = 0, defaults = 0, value_req = 0;
  bool any = false, item_default = false, item_class = false, item_start = true;
  for (; *p; p++) {
    if (item_start && !isspace((unsigned char)*p)) {
      item_class = !strncmp(p, "class ", 6) || !strncmp(p, "typename ", 9);
      item_start = false;
    }
    if (*p == '(' || *p == '<' || *p == '[') depth++;
    else if (*p == ')' || *p == '>' || *p == ']') {
      if (depth-- == 0) break;
    } else if (*p == ',' && depth == 0) {
      value_req += !item_default && !item_class;
      n++;
      item_default = item_class = false;
      item_start = true;
    } else if (*p == '=' && depth == 0) {
      defaults++;
      item_default = true;
    }
    if (!isspace((unsigned char)*p)) any = true;
  }
  if (any) value_req += !item_default && !item_class;
  if (ndefaults) *ndefaults = defaults;
  if (nvalue_req) *nvalue_req = any ? value_req : 0;
  return any ? n + 1 : 0;
}

/* The template head right before TS_DEV at `dev` (only white space between its `>` and
 * TS_DEV), if any. */
static void template_head(const char *text, const char *dev, Decl *d) {
  const char *q = dev - 1;
  while (q > text && isspace((unsigned char)*q)) q--;
  if (*q != '>') return;
  int depth = 1;
  while (q > text && depth > 0) {
    q--;
    depth += *q == '>' ? 1 : *q == '<' ? -1 : 0;
  }
  const char *kw = q - 1;
  while (kw > text && isspace((unsigned char)*kw)) kw--;
  if (kw - 7 >= text && !strncmp(kw - 7, "template", 8)) d->ntemplate = count_list(q + 1, NULL, &d->nrequired);
}

/* Calls fn on every `TS_DEV <type> name(` definition in the headers (overloads and the
 * per-backend variants each count); stops early when fn returns true. */
static bool each_decl(const char *name, bool (*fn)(const Decl *, void *), void *ctx) {
  size_t len = strlen(name);
  for (int h = 0; h < ts_device_headers_count; h++) {
    const char *text = ts_device_headers[h].contents;
    for (const char *p = strstr(text, name); p; p = strstr(p + 1, name)) {
      if (p[len] != '(' || (p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '_'))) continue;
      const char *line = p;
      while (line > text && line[-1] != '\n') line--;
      const char *dev = strstr(line, "TS_DEV ");
      if (!dev || dev > p) continue;
      Decl d = {0};
      d.found = true;
      d.header = ts_device_headers[h].name;
      int defaults = 0;
      d.nparams = count_list(p + len + 1, &defaults, NULL);
      d.nparams_req = d.nparams - defaults;
      template_head(text, dev, &d);
      if (fn(&d, ctx)) return true;
    }
  }
  return false;
}

static bool first_decl(const Decl *d, void *ctx) {
  *(Decl *)ctx = *d;
  return true;
}
static Decl find_decl(const char *name) {
  Decl d = {0};
  each_decl(name, first_decl, &d);
  return d;
}

/* The operand count a call of `name` takes: fixed for most rows; TMA rows depend on the
 * rank (descriptor, smem[, mbarrier][, mask], one coordinate per dim). */
static int expected_params(IrDeviceOp op, int rank) {
  switch (op) {
  case IRD_TMA_LOAD: return 3 + rank;
  case IRD_TMA_LOAD_MC: return 4 + rank;
  case IRD_TMA_STORE: return 2 + rank;
  default: return ir_device_info[op].nargs;
  }
}

typedef struct Want {
  const char *header;
  int nparams, nattrs;
} Want;

/* A definition that a call with this many operands and template arguments can use. */
static bool fits(const Decl *d, void *ctx) {
  const Want *w = ctx;
  return !strcmp(d->header, w->header) && w->nparams >= d->nparams_req && w->nparams <= d->nparams &&
         w->nattrs >= d->nrequired && w->nattrs <= d->ntemplate;
}

TEST(device_abi_matches_headers) {
  for (int op = 0; op < IRD_COUNT; op++) {
    const CgDeviceAbi *abi = &cg_device_abi[op];
    REQUIRE(abi->spelling && abi->template_args && abi->header);
    const char *pct = strstr(abi->spelling, "%d");
    int nattrs = ir_device_info[op].nattrs - (pct ? 1 : 0);
    CHECK((int)strlen(abi->template_args) == nattrs);
    /* the unqualified name: what follows the last "::" */
    const char *bare = abi->spelling;
    for (const char *q = strstr(bare, "::"); q; q = strstr(bare, "::")) bare = q + 2;
    for (int rank = 2; rank <= (pct ? 4 : 2); rank++) {
      char name[128], header[64];
      if (pct) snprintf(name, sizeof name, "%.*s%d%s", (int)(strstr(bare, "%d") - bare), bare, rank, strstr(bare, "%d") + 2);
      else snprintf(name, sizeof name, "%s", bare);
      snprintf(header, sizeof header, "tilescale/%s", abi->header);
      Want w = {header, expected_params((IrDeviceOp)op, rank), nattrs};
      if (each_decl(name, fits, &w)) continue;
      Decl d = find_decl(name);
      if (!d.found) fprintf(stderr, "  device op %s: no TS_DEV function %s in the device headers\n", ir_device_info[op].name, name);
      else
        fprintf(stderr, "  device op %s (%s): no definition fits: e.g. %s with %d..%d call parameters (IR: %d) and "
                        "%d..%d template arguments (table: %d; table header %s)\n",
                ir_device_info[op].name, name, d.header, d.nparams_req, d.nparams, w.nparams, d.nrequired, d.ntemplate,
                nattrs, header);
      t->failures++;
    }
  }
}

/* The checker itself: a wrong row must be caught (a template parameter too many). */
TEST(device_abi_checker_catches_mismatch) {
  Decl d = find_decl("gemm_wgmma_wait");
  REQUIRE(d.found);
  CHECK(d.nparams == 1 && d.nparams_req == 1);
  CHECK(d.ntemplate == 3 && d.nrequired == 2); /* NREGS, PENDING; TC has a default */
  Want too_many = {"tilescale/gemm.cuh", 1, 4}, right = {"tilescale/gemm.cuh", 1, 2}, wrong_header = {"tilescale/tma.cuh", 1, 2};
  CHECK(!fits(&d, &too_many) && fits(&d, &right) && !fits(&d, &wrong_header));
  Decl none = find_decl("no_such_device_function");
  CHECK(!none.found);
  Decl plain = find_decl("mbar_wait");
  CHECK(plain.found && plain.ntemplate == 0 && plain.nparams == 2);
}
