/* test_device_abi.c — the device ABI table (src/codegen/device_abi.c) against the device
 * headers themselves (the copies embedded in the library): every typed device operation
 * names a function that exists in the header the row says, with as many call parameters as
 * the IR operation has operands, and as many template parameters as the row passes (no
 * fewer than the template requires, no more than it takes).  A header change that breaks
 * the contract fails here instead of in NVRTC on a GPU machine. */
#include <ctype.h>
#include <stdlib.h>

#include "../../src/codegen/device_abi.h"
#include "../../src/rt/embedded.h"
#include "test.h"

typedef struct Decl {
  const char *header; /* include name */
  int nparams;        /* call parameters */
  int ntemplate;      /* template parameters */
  int nrequired;      /* template parameters without a default */
  bool found;
} Decl;

/* Parameters of a parenthesised / angle-bracketed list starting after `open`: commas at
 * depth 0 plus one, 0 for an empty list.  Defaults are `=` at depth 0. */
static int count_list(const char *p, char open, char close, int *ndefaults) {
  int depth = 0, n = 0, defaults = 0;
  bool any = false;
  for (; *p; p++) {
    if (*p == open || *p == '(' || *p == '<') depth++;
    else if (*p == close || *p == ')' || *p == '>') {
      if (depth-- == 0) break;
    } else if (*p == ',' && depth == 0) n++;
    else if (*p == '=' && depth == 0) defaults++;
    if (!isspace((unsigned char)*p)) any = true;
  }
  if (ndefaults) *ndefaults = defaults;
  return any ? n + 1 : 0;
}

/* Finds `TS_DEV <type> name(` in the headers (the definition of a device function). */
static Decl find_decl(const char *name) {
  Decl d = {0};
  size_t len = strlen(name);
  for (int h = 0; h < ts_device_headers_count && !d.found; h++) {
    const char *text = ts_device_headers[h].contents;
    for (const char *p = strstr(text, name); p && !d.found; p = strstr(p + 1, name)) {
      if (p[len] != '(' || (p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '_'))) continue;
      const char *line = p;
      while (line > text && line[-1] != '\n') line--;
      const char *dev = strstr(line, "TS_DEV ");
      if (!dev || dev > p) continue;
      d.found = true;
      d.header = ts_device_headers[h].name;
      d.nparams = count_list(p + len + 1, '(', ')', NULL);
      /* a template head right before TS_DEV: only white space between its `>` and TS_DEV */
      const char *q = dev - 1;
      while (q > text && isspace((unsigned char)*q)) q--;
      if (*q == '>') {
        int depth = 1;
        while (q > text && depth > 0) {
          q--;
          depth += *q == '>' ? 1 : *q == '<' ? -1 : 0;
        }
        const char *kw = q - 1;
        while (kw > text && isspace((unsigned char)*kw)) kw--;
        if (kw - 7 >= text && !strncmp(kw - 7, "template", 8)) {
          int defaults = 0;
          d.ntemplate = count_list(q + 1, '<', '>', &defaults);
          d.nrequired = d.ntemplate - defaults;
        }
      }
    }
  }
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

TEST(device_abi_matches_headers) {
  for (int op = 0; op < IRD_COUNT; op++) {
    const CgDeviceAbi *abi = &cg_device_abi[op];
    REQUIRE(abi->spelling && abi->template_args && abi->header);
    const char *pct = strstr(abi->spelling, "%d");
    int nattrs = ir_device_info[op].nattrs - (pct ? 1 : 0);
    CHECK((int)strlen(abi->template_args) == nattrs);
    for (int rank = 2; rank <= (pct ? 4 : 2); rank++) {
      char name[128];
      const char *bare = !strncmp(abi->spelling, "ts::", 4) ? abi->spelling + 4 : abi->spelling;
      if (pct) snprintf(name, sizeof name, "%.*s%d%s", (int)(strstr(bare, "%d") - bare), bare, rank, strstr(bare, "%d") + 2);
      else snprintf(name, sizeof name, "%s", bare);
      Decl d = find_decl(name);
      if (!d.found) {
        fprintf(stderr, "  device op %s: no TS_DEV function %s in the device headers\n", ir_device_info[op].name, name);
        t->failures++;
        continue;
      }
      char want[64];
      snprintf(want, sizeof want, "tilescale/%s", abi->header);
      if (strcmp(d.header, want) || d.nparams != expected_params((IrDeviceOp)op, rank) ||
          nattrs > d.ntemplate || nattrs < d.nrequired) {
        fprintf(stderr, "  device op %s (%s): header %s (table: %s), %d call parameters (IR: %d), "
                        "%d..%d template parameters (table passes %d)\n",
                ir_device_info[op].name, name, d.header, want, d.nparams, expected_params((IrDeviceOp)op, rank),
                d.nrequired, d.ntemplate, nattrs);
        t->failures++;
      }
    }
  }
}

/* The checker itself: a wrong row must be caught (a template parameter too many). */
TEST(device_abi_checker_catches_mismatch) {
  Decl d = find_decl("gemm_wgmma_wait");
  REQUIRE(d.found);
  CHECK(d.nparams == 1);
  CHECK(d.ntemplate == 3 && d.nrequired == 2);
  Decl none = find_decl("no_such_device_function");
  CHECK(!none.found);
  Decl plain = find_decl("mbar_wait");
  CHECK(plain.found && plain.ntemplate == 0 && plain.nparams == 2);
}
