/* test_parse.c — unit tests of the parser (src/front/parse.c) through ast_dump:
 * precedence, every statement form, f-strings, realistic TileLang files (lazy factory,
 * eager style, torch harness), locations, exact diagnostics with recovery, nesting
 * limits, parse_expression, and a mutation smoke test that must never crash. */
#include <stdlib.h>

#include "../../src/base/compiler.h"
#include "../../src/front/ast.h"
#include "test.h"

typedef struct ParseFixture {
  TsCompiler c;
  SourceFile file;
  StrBuf out;
  AstNode *mod;
} ParseFixture;

static const char *parse_dump(ParseFixture *fx, const char *src) {
  ts_compiler_init(&fx->c, (TsTarget){90, true});
  fx->file = (SourceFile){"k.py", src, strlen(src)};
  fx->out = (StrBuf){0};
  fx->mod = parse_module(&fx->c, &fx->file);
  if (fx->mod) ast_dump(&fx->out, fx->mod);
  return sb_str(&fx->out);
}

static const char *diag_text(ParseFixture *fx) { return sb_str(&fx->c.diag.out); }

static void parse_fini(ParseFixture *fx) {
  sb_free(&fx->out);
  ts_compiler_fini(&fx->c);
}

/* Parses one statement-level source and compares the module dump. */
#define CHECK_PARSE(src, want)                                                     \
  do {                                                                             \
    ParseFixture fx_;                                                              \
    CHECK_STR(parse_dump(&fx_, src), want);                                        \
    if (fx_.c.diag.errors) fprintf(stderr, "%s", diag_text(&fx_));                 \
    CHECK(fx_.c.diag.errors == 0);                                                 \
    parse_fini(&fx_);                                                              \
  } while (0)

/* Parses src and compares the complete diagnostic output. */
#define CHECK_DIAG(src, want)                                                      \
  do {                                                                             \
    ParseFixture fx_;                                                              \
    parse_dump(&fx_, src);                                                         \
    CHECK_STR(diag_text(&fx_), want);                                              \
    parse_fini(&fx_);                                                              \
  } while (0)

TEST(parse_precedence) {
  CHECK_PARSE("-2**-3\n",
              "(Module (Expr (UnaryOp - (BinOp ** (Int 2) (UnaryOp - (Int 3))))))");
  CHECK_PARSE("a ** b ** c\n", "(Module (Expr (BinOp ** (Name a) (BinOp ** (Name b) (Name c)))))");
  CHECK_PARSE("1 + 2 * 3 // 4 - 5 % 6 @ m\n",
              "(Module (Expr (BinOp - (BinOp + (Int 1) (BinOp // (BinOp * (Int 2) (Int 3)) (Int 4))) "
              "(BinOp @ (BinOp % (Int 5) (Int 6)) (Name m)))))");
  CHECK_PARSE("a | b ^ c & d << e + f\n",
              "(Module (Expr (BinOp | (Name a) (BinOp ^ (Name b) (BinOp & (Name c) (BinOp << (Name d) "
              "(BinOp + (Name e) (Name f))))))))");
  CHECK_PARSE("not a == b and c or d\n",
              "(Module (Expr (BoolOp or (BoolOp and (UnaryOp not (Compare (Name a) == (Name b))) (Name c)) "
              "(Name d))))");
  CHECK_PARSE("a < b <= c is not d not in e in f is g != h\n",
              "(Module (Expr (Compare (Name a) < (Name b) <= (Name c) is not (Name d) not in (Name e) in "
              "(Name f) is (Name g) != (Name h))))");
  CHECK_PARSE("x = a if b else c if d else e\n",
              "(Module (Assign (Name x) = (IfExp (Name b) (Name a) (IfExp (Name d) (Name c) (Name e)))))");
  CHECK_PARSE("f = lambda x, *a, k=1, **kw: x + k\n",
              "(Module (Assign (Name f) = (Lambda (Params x *a (kw:k = (Int 1)) **kw) "
              "(BinOp + (Name x) (Name k)))))");
  CHECK_PARSE("if (n := len(a)) > 10: pass\n",
              "(Module (If (Compare (NamedExpr (Name n) (Call (Name len) (Name a))) > (Int 10)) (body Pass)))");
  CHECK_PARSE("~x.y[1](2).z\n",
              "(Module (Expr (UnaryOp ~ (Attr (Call (Sub (Attr (Name x) y) (Int 1)) (Int 2)) z))))");
  CHECK_PARSE("await f(x) ** 2\n",
              "(Module (Expr (BinOp ** (Await (Call (Name f) (Name x))) (Int 2))))");
}

TEST(parse_literals) {
  CHECK_PARSE("x = (1, 2.5, 3j, 'a' \"b\", b'c', True, False, None, ..., 123456789012345678901234)\n",
              "(Module (Assign (Name x) = (Tuple (Int 1) (Float 2.5) (Imag 3) (Str \"ab\") (Bytes \"c\") "
              "True False None ... (BigInt 123456789012345678901234))))");
  CHECK_PARSE("x = f'a{b!r:>{w}}c' 'd' f\"{e=}{{}}\"\n",
              "(Module (Assign (Name x) = (FString (Str \"a\") (Fmt (Name b) !r (FString (Str \">\") "
              "(Fmt (Name w)))) (Str \"cde=\") (Fmt (Name e) !r) (Str \"{}\"))))");
  CHECK_PARSE("f'{x = :.2f}{d[\"k\"]}{a, b}\\n'\n",
              "(Module (Expr (FString (Str \"x = \") (Fmt (Name x) (FString (Str \".2f\"))) "
              "(Fmt (Sub (Name d) (Str \"k\"))) (Fmt (Tuple (Name a) (Name b))) (Str \"\\n\"))))");
  CHECK_PARSE("d = {'a': 1, **e}\ns = {1, *t}\nl = [*u, 2]\n()\n[]\n{}\n",
              "(Module (Assign (Name d) = (Dict ((Str \"a\") (Int 1)) (** (Name e)))) "
              "(Assign (Name s) = (Set (Int 1) (Starred (Name t)))) "
              "(Assign (Name l) = (List (Starred (Name u)) (Int 2))) (Expr (Tuple)) (Expr (List)) (Expr (Dict)))");
  CHECK_PARSE("[x for x in y if x if not z for w in x]\n{k: v for k, v in d.items()}\n"
              "{a for a in b}\n(g async for g in h)\n",
              "(Module (Expr (ListComp (Name x) (for (Name x) (Name y) (if (Name x)) (if (UnaryOp not (Name z)))) "
              "(for (Name w) (Name x)))) (Expr (DictComp (Name k) (Name v) (for (Tuple (Name k) (Name v)) "
              "(Call (Attr (Name d) items))))) (Expr (SetComp (Name a) (for (Name a) (Name b)))) "
              "(Expr (GenExp (Name g) (async-for (Name g) (Name h)))))");
}

TEST(parse_calls_and_subscripts) {
  CHECK_PARSE("f(a, *b, c=1, **d)\n",
              "(Module (Expr (Call (Name f) (Name a) (Starred (Name b)) (kw c (Int 1)) (kw ** (Name d)))))");
  CHECK_PARSE("sum(x * x for x in range(10))\n",
              "(Module (Expr (Call (Name sum) (GenExp (BinOp * (Name x) (Name x)) "
              "(for (Name x) (Call (Name range) (Int 10)))))))");
  CHECK_PARSE("a[1:2, ::3, i]\na[:]\na[x:]\na[::]\na[i, j]\na[*k]\n",
              "(Module (Expr (Sub (Name a) (Tuple (Slice (Int 1) (Int 2) _) (Slice _ _ (Int 3)) (Name i)))) "
              "(Expr (Sub (Name a) (Slice _ _ _))) (Expr (Sub (Name a) (Slice (Name x) _ _))) "
              "(Expr (Sub (Name a) (Slice _ _ _))) (Expr (Sub (Name a) (Tuple (Name i) (Name j)))) "
              "(Expr (Sub (Name a) (Tuple (Starred (Name k))))))");
  CHECK_PARSE("T.copy(Q[bz, bx * bm:(bx + 1) * bm, by, :], Q_s)\n",
              "(Module (Expr (Call (Attr (Name T) copy) (Sub (Name Q) (Tuple (Name bz) (Slice (BinOp * (Name bx) "
              "(Name bm)) (BinOp * (BinOp + (Name bx) (Int 1)) (Name bm)) _) (Name by) (Slice _ _ _))) (Name Q_s))))");
}

TEST(parse_statements) {
  CHECK_PARSE("a = b = c\na, b = x\n*a, b = c\na.b: int\nc[0]: int = 1\nx += 1\ny //= 2\nz **= 3\n",
              "(Module (Assign (Name a) (Name b) = (Name c)) (Assign (Tuple (Name a) (Name b)) = (Name x)) "
              "(Assign (Tuple (Starred (Name a)) (Name b)) = (Name c)) (AnnAssign (Attr (Name a) b) (Name int)) "
              "(AnnAssign (Sub (Name c) (Int 0)) (Name int) (Int 1)) (AugAssign (Name x) += (Int 1)) "
              "(AugAssign (Name y) //= (Int 2)) (AugAssign (Name z) **= (Int 3)))");
  CHECK_PARSE("import a.b as c, d\nfrom . import (x, y as z,)\nfrom ...p.q import *\n"
              "global g, h\nnonlocal n\nassert x, 'm'\nraise E from e\nraise\ndel a[0], b\n"
              "pass; break; continue\nreturn\n",
              "(Module (Import (a.b as c) d) (ImportFrom . x (y as z)) (ImportFrom ...p.q *) (Global g h) "
              "(Nonlocal n) (Assert (Name x) (Str \"m\")) (Raise (Name E) (from (Name e))) (Raise) "
              "(Delete (Sub (Name a) (Int 0)) (Name b)) Pass Break Continue (Return))");
  CHECK_PARSE("for i, (j, k) in x:\n  pass\nelse:\n  y\nwhile a:\n  break\nelse: pass\n",
              "(Module (For (Tuple (Name i) (Tuple (Name j) (Name k))) (Name x) (body Pass) "
              "(orelse (Expr (Name y)))) (While (Name a) (body Break) (orelse Pass)))");
  CHECK_PARSE("if a:\n  x\nelif b:\n  y\nelse:\n  z\n",
              "(Module (If (Name a) (body (Expr (Name x))) (orelse (If (Name b) (body (Expr (Name y))) "
              "(orelse (Expr (Name z)))))))");
  CHECK_PARSE("with a as b, c:\n  pass\nwith (d as e, f as g,):\n  pass\nwith (h, i):\n  pass\n"
              "with (j) as k: pass\n",
              "(Module (With (item (Name a) (Name b)) (item (Name c)) (body Pass)) "
              "(With (item (Name d) (Name e)) (item (Name f) (Name g)) (body Pass)) "
              "(With (item (Name h)) (item (Name i)) (body Pass)) (With (item (Name j) (Name k)) (body Pass)))");
  CHECK_PARSE("try:\n  x\nexcept (A, B) as e:\n  y\nexcept:\n  pass\nelse:\n  z\nfinally:\n  w\n"
              "try:\n  pass\nexcept* E:\n  pass\n",
              "(Module (Try (body (Expr (Name x))) (except (Tuple (Name A) (Name B)) as e (body (Expr (Name y)))) "
              "(except (body Pass)) (orelse (Expr (Name z))) (finally (Expr (Name w)))) "
              "(Try (body Pass) (except (Name E) (body Pass))))");
  CHECK_PARSE("@d1\n@d2.x(1)\nclass C(B, metaclass=M):\n  '''doc'''\n  def m(self): return self\n",
              "(Module (ClassDef C (bases (Name B)) (keywords (kw metaclass (Name M))) (decorators (Name d1) "
              "(Call (Attr (Name d2) x) (Int 1))) (body (Expr (Str \"doc\")) (FunctionDef m (Params self) "
              "(body (Return (Name self)))))))");
  CHECK_PARSE("async def f(a, b=1, /, c=2, *args, d, e=3, **kw) -> int:\n"
              "  async with x as y:\n    await y\n  async for i in y:\n    yield i\n  yield from z\n"
              "  r = yield\n",
              "(Module (AsyncFunctionDef f (Params pos:a (pos:b = (Int 1)) (c = (Int 2)) *args kw:d "
              "(kw:e = (Int 3)) **kw) (returns (Name int)) (body (AsyncWith (item (Name x) (Name y)) "
              "(body (Expr (Await (Name y))))) (AsyncFor (Name i) (Name y) (body (Expr (Yield (Name i))))) "
              "(Expr (YieldFrom (Name z))) (Assign (Name r) = (Yield _)))))");
  CHECK_PARSE("def f(*, a): pass\ndef g(a, /): pass\n",
              "(Module (FunctionDef f (Params kw:a) (body Pass)) (FunctionDef g (Params pos:a) (body Pass)))");
  /* `match` is a soft keyword: ordinary uses of the name still work. */
  CHECK_PARSE("match = re.match(p, s)\nmatch(x)\nmatch.group(1)\n",
              "(Module (Assign (Name match) = (Call (Attr (Name re) match) (Name p) (Name s))) "
              "(Expr (Call (Name match) (Name x))) (Expr (Call (Attr (Name match) group) (Int 1))))");
}

/* Finds the first FUNCTIONDEF named `name` anywhere in a statement list. */
static const AstNode *find_def(AstList body, const char *name) {
  for (int i = 0; i < body.n; i++) {
    const AstNode *s = body.items[i];
    if ((s->kind == AST_FUNCTIONDEF || s->kind == AST_CLASSDEF) && !strcmp(s->id, name)) return s;
    if (!AST_HAS(s, orelse)) continue; /* a statement without blocks */
    const AstList *lists[] = {&s->body, &s->orelse};
    for (int k = 0; k < 2; k++) {
      const AstNode *r = find_def(*lists[k], name);
      if (r) return r;
    }
  }
  return NULL;
}

static const char *const lazy_kernel =
    "import tilelang\n"
    "import tilelang.language as T\n"
    "\n"
    "\n"
    "@tilelang.jit(out_idx=[-1], pass_configs={tilelang.PassConfigKey.TL_ENABLE_FAST_MATH: True})\n"
    "def softmax(M, N, block_M=64, dtype=\"float16\", accum_dtype=\"float\"):\n"
    "    scale = 1.44269504  # log2(e)\n"
    "\n"
    "    @T.prim_func\n"
    "    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M, N), dtype)):\n"
    "        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:\n"
    "            x_s = T.alloc_shared((block_M, N), dtype)\n"
    "            x_f = T.alloc_fragment((block_M, N), accum_dtype)\n"
    "            m = T.alloc_fragment((block_M,), accum_dtype)\n"
    "            s = T.alloc_fragment((block_M,), accum_dtype)\n"
    "            T.copy(X[bx * block_M:(bx + 1) * block_M, :], x_s)\n"
    "            T.copy(x_s, x_f)\n"
    "            T.reduce_max(x_f, m, dim=1, clear=True)\n"
    "            for i, j in T.Parallel(block_M, N):\n"
    "                x_f[i, j] = T.exp2(x_f[i, j] * scale - m[i] * scale)\n"
    "            T.reduce_sum(x_f, s, dim=1)\n"
    "            for i, j in T.Parallel(block_M, N):\n"
    "                x_f[i, j] /= s[i]\n"
    "            for k in T.serial(4):\n"
    "                if k < 2:\n"
    "                    T.atomic_add(Y[0, 0], T.cast(x_f[0, 0], dtype))\n"
    "                else:\n"
    "                    pass\n"
    "            T.copy(x_f, Y[bx * block_M, 0])\n"
    "\n"
    "    return main\n";

TEST(parse_lazy_kernel) {
  ParseFixture fx;
  parse_dump(&fx, lazy_kernel);
  CHECK(fx.c.diag.errors == 0);
  REQUIRE(fx.mod && fx.mod->body.n == 3);
  const AstNode *f = find_def(fx.mod->body, "softmax");
  REQUIRE(f);
  CHECK(f->params.n == 5 && f->params.items[3].default_value &&
        f->params.items[3].default_value->kind == AST_CONST_STR);
  CHECK(f->decorators.n == 1 && f->decorators.items[0]->kind == AST_CALL &&
        f->decorators.items[0]->nkwargs == 2);
  CHECK(f->loc.line == 6 && f->loc.col == 1);
  REQUIRE(f->body.n == 3);
  const AstNode *main_fn = f->body.items[1];
  CHECK(main_fn->kind == AST_FUNCTIONDEF && !strcmp(main_fn->id, "main") && main_fn->params.n == 2);
  CHECK(main_fn->params.items[0].annotation && main_fn->params.items[0].annotation->kind == AST_CALL);
  CHECK(f->body.items[2]->kind == AST_RETURN);
  const AstNode *with = main_fn->body.items[0];
  REQUIRE(with->kind == AST_WITH && with->nwithitems == 1);
  CHECK(with->withitems[0].vars->kind == AST_NAME && with->body.n == 12);
  /* The serial loop's if/else and the atomic add inside it. */
  const AstNode *loop = with->body.items[10];
  REQUIRE(loop->kind == AST_FOR && loop->body.n == 1);
  CHECK(loop->body.items[0]->kind == AST_IF && loop->body.items[0]->orelse.n == 1);
  StrBuf sb = {0};
  ast_dump(&sb, with->body.items[9]);
  CHECK_STR(sb_str(&sb), "(For (Tuple (Name i) (Name j)) (Call (Attr (Name T) Parallel) (Name block_M) (Name N)) "
                         "(body (AugAssign (Sub (Name x_f) (Tuple (Name i) (Name j))) /= (Sub (Name s) (Name i)))))");
  sb_free(&sb);
  parse_fini(&fx);
}

TEST(parse_eager_and_harness) {
  const char *src =
      "import argparse\n"
      "import torch\n"
      "import tilelang\n"
      "import tilelang.language as T\n"
      "\n"
      "@tilelang.jit\n"
      "def rms_norm(A, eps: float = 1e-6, block_M: int = 1):\n"
      "    M, N = T.const(\"M, N\")\n"
      "    A: T.Tensor((M, N), T.float16)\n"
      "    B = T.empty((M, N), T.float16)\n"
      "    with T.Kernel(T.ceildiv(M, block_M), threads=128) as (bx,):\n"
      "        acc = T.alloc_var(T.float32)\n"
      "        acc = 0\n"
      "        r = T.alloc_fragment((block_M,), T.float32)\n"
      "        for i in T.unroll(4):\n"
      "            acc += T.rsqrt(r[i] / N + eps) if i > 0 else -T.infinity(T.float32)\n"
      "    return B\n"
      "\n"
      "def ref_program(x, eps=1e-6):\n"
      "    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)\n"
      "\n"
      "if __name__ == \"__main__\":\n"
      "    parser = argparse.ArgumentParser(description=__doc__)\n"
      "    parser.add_argument(\"--m\", type=int, default=8192, help=\"rows\")\n"
      "    args, _ = parser.parse_known_args()\n"
      "    a = torch.randn(args.m, 1024, device=\"cuda\", dtype=torch.float16)\n"
      "    out = rms_norm(a)\n"
      "    torch.testing.assert_close(out, ref_program(a), rtol=1e-2, atol=1e-2)\n"
      "    print(f\"all close, max err {(out - ref_program(a)).abs().max().item():.3e}\")\n";
  ParseFixture fx;
  parse_dump(&fx, src);
  CHECK(fx.c.diag.errors == 0);
  if (fx.c.diag.errors) fprintf(stderr, "%s", diag_text(&fx));
  REQUIRE(fx.mod && fx.mod->body.n == 7);
  const AstNode *f = find_def(fx.mod->body, "rms_norm");
  REQUIRE(f && f->body.n == 5);
  CHECK(f->params.items[1].annotation && f->params.items[1].default_value &&
        f->params.items[1].default_value->kind == AST_CONST_FLOAT &&
        f->params.items[1].default_value->fval == 1e-6);
  CHECK(f->body.items[1]->kind == AST_ANNASSIGN && !f->body.items[1]->value);
  CHECK(f->body.items[0]->kind == AST_ASSIGN && f->body.items[0]->items.items[0]->kind == AST_TUPLE);
  const AstNode *main_if = fx.mod->body.items[6];
  CHECK(main_if->kind == AST_IF && main_if->body.n == 7);
  const AstNode *pr = main_if->body.items[6]->value;
  CHECK(pr->kind == AST_CALL && pr->items.n == 1 && pr->items.items[0]->kind == AST_FSTRING);
  const AstNode *fs = pr->items.items[0];
  CHECK(fs->items.n == 2 && fs->items.items[1]->kind == AST_FORMATTED &&
        fs->items.items[1]->format_spec && fs->items.items[1]->value->kind == AST_CALL);
  /* Locations inside an f-string field point into the source line. */
  CHECK(fs->items.items[1]->value->loc.line == 29 && fs->items.items[1]->value->loc.col == 33);
  parse_fini(&fx);
}

TEST(parse_locations) {
  ParseFixture fx;
  parse_dump(&fx, "x = foo(a, b)\nif y:\n    z = [1,\n         2]\n");
  REQUIRE(fx.mod && fx.mod->body.n == 2);
  const AstNode *asg = fx.mod->body.items[0];
  CHECK(asg->loc.line == 1 && asg->loc.col == 1 && asg->end.line == 1 && asg->end.col == 14);
  const AstNode *call = asg->value;
  CHECK(call->loc.col == 5 && call->end.col == 14);
  CHECK(call->items.items[1]->loc.col == 12 && call->items.items[1]->end.col == 13);
  const AstNode *lst = fx.mod->body.items[1]->body.items[0]->value;
  CHECK(lst->loc.line == 3 && lst->loc.col == 9 && lst->end.line == 4 && lst->end.col == 12);
  CHECK(lst->items.items[1]->loc.line == 4 && lst->items.items[1]->loc.col == 10);
  CHECK(fx.mod->body.items[1]->loc.line == 2);
  parse_fini(&fx);
}

TEST(parse_errors_exact) {
  CHECK_DIAG("def f(x)\n    return x\n",
             "k.py:1:9: error: expected ':' after function signature\n  def f(x)\n          ^\n");
  CHECK_DIAG("x = 1\n  y = 2\n", "k.py:2:3: error: unexpected indent\n    y = 2\n    ^\n");
  CHECK_DIAG("if x:\npass\n",
             "k.py:2:1: error: expected an indented block after 'if' statement on line 1\n  pass\n  ^\n");
  CHECK_DIAG("f() = 1\n", "k.py:1:1: error: cannot assign to function call\n  f() = 1\n  ^\n");
  CHECK_DIAG("x = [1, 2 3]\n",
             "k.py:1:9: error: invalid syntax. Perhaps you forgot a comma?\n  x = [1, 2 3]\n          ^\n");
  CHECK_DIAG("s = 'abc\n",
             "k.py:1:5: error: unterminated string literal (detected at line 1)\n  s = 'abc\n      ^\n");
  CHECK_DIAG("x = = 1\n", "k.py:1:5: error: invalid syntax\n  x = = 1\n      ^\n");
  CHECK_DIAG("def g(a=1, b): pass\n",
             "k.py:1:12: error: non-default argument follows default argument\n  def g(a=1, b): pass\n"
             "             ^\n");
  CHECK_DIAG("f(a=1, b)\n",
             "k.py:1:8: error: positional argument follows keyword argument\n  f(a=1, b)\n         ^\n");
  CHECK_DIAG("x = (1,\n", "k.py:1:5: error: '(' was never closed\n  x = (1,\n      ^\n");
  CHECK_DIAG("print(f'{}')\n",
             "k.py:1:9: error: f-string: empty expression not allowed\n  print(f'{}')\n          ^\n");
  CHECK_DIAG("a, b: int\n",
             "k.py:1:1: error: only single target (not tuple) can be annotated\n  a, b: int\n  ^\n");
  CHECK_DIAG("match x:\n    case 1:\n        pass\ny = 1 +\n",
             "k.py:1:1: error: match statements are not supported\n  match x:\n  ^\n"
             "k.py:4:8: error: invalid syntax\n  y = 1 +\n         ^\n");
  CHECK_DIAG("try:\n    pass\nx = 1\n",
             "k.py:3:1: error: expected 'except' or 'finally' block\n  x = 1\n  ^\n");
}

TEST(parse_error_recovery) {
  /* Every broken statement is reported once, in source order, and the rest parses. */
  const char *src =
      "def f(x)\n"           /* missing ':' ; its body still parses */
      "    return x +\n"     /* broken expression inside that body */
      "y = 1\n"
      "for in z:\n"          /* missing target */
      "    pass\n"
      "a = 0777\n"           /* lexical error */
      "class C\n"            /* missing ':' */
      "    pass\n"
      "ok = True\n";
  ParseFixture fx;
  parse_dump(&fx, src);
  CHECK_STR(diag_text(&fx),
            "k.py:1:9: error: expected ':' after function signature\n  def f(x)\n          ^\n"
            "k.py:2:15: error: invalid syntax\n      return x +\n                ^\n"
            "k.py:4:5: error: invalid syntax\n  for in z:\n      ^\n"
            "k.py:6:5: error: leading zeros in decimal integer literals are not permitted; use an 0o prefix "
            "for octal integers\n  a = 0777\n      ^\n"
            "k.py:7:8: error: expected ':'\n  class C\n         ^\n");
  CHECK(fx.c.diag.errors == 5);
  REQUIRE(fx.mod);
  const AstNode *last = fx.mod->body.items[fx.mod->body.n - 1];
  CHECK(last->kind == AST_ASSIGN && !strcmp(last->items.items[0]->id, "ok"));
  CHECK(find_def(fx.mod->body, "f") && find_def(fx.mod->body, "C"));
  parse_fini(&fx);
}

TEST(parse_depth_limit) {
  /* 500 nested parentheses, 2000 unary minus and 1000 `not`: diagnostics, no crash. */
  StrBuf sb = {0};
  sb_append(&sb, "x = ");
  for (int i = 0; i < 500; i++) sb_putc(&sb, '(');
  sb_putc(&sb, '1');
  for (int i = 0; i < 500; i++) sb_putc(&sb, ')');
  sb_append(&sb, "\ny = ");
  for (int i = 0; i < 2000; i++) sb_putc(&sb, '-');
  sb_append(&sb, "1\nz = ");
  for (int i = 0; i < 1000; i++) sb_append(&sb, "not ");
  sb_append(&sb, "1\nw = [[[[1]]]]\n");
  ParseFixture fx;
  parse_dump(&fx, sb_str(&sb));
  CHECK(fx.c.diag.errors == 1); /* reported once per file */
  CHECK(strstr(diag_text(&fx), "k.py:1:") && strstr(diag_text(&fx), "error: expression nested too deeply"));
  REQUIRE(fx.mod && fx.mod->body.n >= 1);
  CHECK(fx.mod->body.items[fx.mod->body.n - 1]->kind == AST_ASSIGN);
  parse_fini(&fx);
  sb_free(&sb);
}

TEST(parse_expression_values) {
  const char *cases[][2] = {
      {"(64, 64)", "(Tuple (Int 64) (Int 64))"},
      {"64, 128", "(Tuple (Int 64) (Int 128))"},
      {"T.float16", "(Attr (Name T) float16)"},
      {"\"abc\"", "(Str \"abc\")"},
      {"-1.5", "(UnaryOp - (Float 1.5))"},
      {"True", "True"},
      {" [1, 2]\n", "(List (Int 1) (Int 2))"},
  };
  for (int i = 0; i < TS_ARRAY_LEN(cases); i++) {
    TsCompiler c;
    ts_compiler_init(&c, (TsTarget){90, true});
    SourceFile f = {"-D", cases[i][0], strlen(cases[i][0])};
    AstNode *e = parse_expression(&c, &f);
    StrBuf sb = {0};
    if (e) ast_dump(&sb, e);
    CHECK_STR(sb_str(&sb), cases[i][1]);
    CHECK(c.diag.errors == 0);
    sb_free(&sb);
    ts_compiler_fini(&c);
  }
  const char *bad[] = {"1 +", "", "x = 1", "(1, 2"};
  for (int i = 0; i < TS_ARRAY_LEN(bad); i++) {
    TsCompiler c;
    ts_compiler_init(&c, (TsTarget){90, true});
    SourceFile f = {"-D", bad[i], strlen(bad[i])};
    CHECK(parse_expression(&c, &f) == NULL);
    CHECK(c.diag.errors >= 1);
    ts_compiler_fini(&c);
  }
}

TEST(parse_mutation_smoke) {
  /* Deterministic mutations of a real kernel (byte flips, deletions, duplications and
   * truncations) must never crash, and errors must come with a location. */
  size_t n = strlen(lazy_kernel);
  char *buf = malloc(2 * n + 2);
  uint64_t state = 0x9E3779B97F4A7C15ull;
  static const char alphabet[] = "()[]{}:,.=\n \t\\'\"#fx0_*@!{}";
  for (int iter = 0; iter < 400; iter++) {
    memcpy(buf, lazy_kernel, n + 1);
    size_t len = n;
    int edits = 1 + iter % 6;
    for (int e = 0; e < edits; e++) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      if (len == 0) break;
      size_t pos = (size_t)(state >> 33) % len;
      int op = (int)((state >> 20) % 4);
      if (op == 0) {
        buf[pos] = alphabet[(state >> 40) % (sizeof alphabet - 1)];
      } else if (op == 1 && len > 1) {
        memmove(buf + pos, buf + pos + 1, len - pos);
        len--;
      } else if (op == 2 && len < 2 * n) {
        memmove(buf + pos + 1, buf + pos, len - pos + 1);
        len++;
      } else {
        len = pos;
        buf[len] = '\0';
      }
    }
    TsCompiler c;
    ts_compiler_init(&c, (TsTarget){90, true});
    SourceFile f = {"m.py", buf, len};
    AstNode *m = parse_module(&c, &f);
    CHECK(m != NULL);
    StrBuf sb = {0};
    ast_dump(&sb, m);
    sb_free(&sb);
    if (c.diag.errors) CHECK(strncmp(sb_str(&c.diag.out), "m.py:", 5) == 0);
    ts_compiler_fini(&c);
  }
  free(buf);
}

/* Chains and nesting the evaluator could not walk: a 5000-term sum, a 3000-link attribute
 * chain, 2 ** 2 ** ... 500 deep, and sums of sums nested 30 deep (each under the chain
 * limit, together 27000 deep) are each one diagnostic; a 900-term sum still parses. */
TEST(parse_chain_and_depth_limits) {
  struct { const char *unit; int reps; const char *pre, *want; } cases[] = {
      {"+1", 5000, "x = 1", "m.py:1:2006: error: expression too long: more than 1000 chained operations"},
      {".b", 3000, "x = a", "m.py:1:2006: error: expression too long: more than 1000 chained operations"},
      {"2**", 500, "x = ", "m.py:1:455: error: expression nested too deeply"},
  };
  for (int k = 0; k < TS_ARRAY_LEN(cases); k++) {
    StrBuf sb = {0};
    sb_append(&sb, cases[k].pre);
    for (int i = 0; i < cases[k].reps; i++) sb_append(&sb, cases[k].unit);
    sb_append(&sb, k == 2 ? "2\n" : "\n");
    TsCompiler c;
    ts_compiler_init(&c, (TsTarget){90, true});
    SourceFile f = {"m.py", sb_str(&sb), sb.len};
    (void)parse_module(&c, &f);
    CHECK(c.diag.errors == 1);
    CHECK(strncmp(sb_str(&c.diag.out), cases[k].want, strlen(cases[k].want)) == 0);
    ts_compiler_fini(&c);
    sb_free(&sb);
  }
  for (int levels = 1; levels <= 30; levels += 29) {
    StrBuf sb = {0};
    sb_append(&sb, "x = ");
    for (int i = 0; i < levels; i++) sb_putc(&sb, '(');
    sb_putc(&sb, '1');
    for (int i = 0; i < levels; i++) {
      for (int j = 0; j < 900; j++) sb_append(&sb, "+1");
      sb_putc(&sb, ')');
    }
    sb_append(&sb, "\ny = 2\n");
    TsCompiler c;
    ts_compiler_init(&c, (TsTarget){90, true});
    SourceFile f = {"m.py", sb_str(&sb), sb.len};
    AstNode *m = parse_module(&c, &f);
    if (levels == 1) {
      CHECK(c.diag.errors == 0);
    } else {
      CHECK(c.diag.errors == 1);
      const char *want = "m.py:1:1: error: statement too complex: expressions nested more than 2000 deep\n";
      CHECK(strncmp(sb_str(&c.diag.out), want, strlen(want)) == 0);
      /* the rest of the file is still there */
      CHECK(m && m->body.n == 2 && m->body.items[1]->kind == AST_ASSIGN);
    }
    ts_compiler_fini(&c);
    sb_free(&sb);
  }
}
