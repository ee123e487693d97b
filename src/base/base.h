/* base.h — the bottom layer: arenas, growable vectors, string buffers, string maps,
 * source files and diagnostics, assertions and hashing.
 *
 * Everything above (front, ir, layout, pass, codegen, rt, dist) includes this header;
 * it includes nothing of the project.  One compilation owns one Arena: AST and IR nodes
 * are allocated from it and released together (DESIGN.md §2). */
#ifndef TS_BASE_H
#define TS_BASE_H

#include <stdarg.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- compiler bugs (never user errors) ---------------------------------------- */
void ts_assert_fail(const char *file, int line, const char *cond);
#define TS_ASSERT(c) ((c) ? (void)0 : ts_assert_fail(__FILE__, __LINE__, #c))
#define ts_unreachable() ts_assert_fail(__FILE__, __LINE__, "unreachable")
#define TS_ARRAY_LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* TS_ASAN: built with AddressSanitizer (gcc defines __SANITIZE_ADDRESS__, clang has
 * __has_feature); code that keeps its own memory pools makes misuse visible to it. */
#if defined(__SANITIZE_ADDRESS__)
#define TS_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TS_ASAN 1
#endif
#endif
#ifndef TS_ASAN
#define TS_ASAN 0
#endif

#if defined(__GNUC__)
#define TS_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define TS_PRINTF(f, a)
#endif

/* ---- allocation ------------------------------------------------------------------ */
/* All heap memory of the library goes through ts_realloc.  A public call made for a
 * context runs inside an allocation scope (thread-local, nested): the context's hook
 * (ts_context_options.realloc_fn; NULL: the C library) serves every allocation, and an
 * allocation failure jumps to the scope's `oom` point, where the call returns
 * TS_ERR_OUT_OF_MEMORY.  Outside any scope (or with no oom point) a failure aborts with a
 * message: only code that cannot report errors (the CLI's own helpers) runs there. */
typedef void *(*TsReallocFn)(void *user, void *ptr, size_t size); /* size 0 = free */
/* Heap temporaries held across allocations (a parser's token chunks) register a cleanup:
 * an out-of-memory exit runs the innermost scope's cleanups, last registered first, before
 * it returns the error, so nothing is lost.  Push and pop in strict nesting. */
typedef struct TsOomCleanup {
  void (*fn)(void *arg);
  void *arg;
  struct TsOomCleanup *prev;
} TsOomCleanup;
typedef struct TsAllocScope {
  TsReallocFn fn;      /* NULL: realloc/free */
  void *user;
  jmp_buf *oom;        /* where an allocation failure goes; NULL: abort */
  TsOomCleanup *cleanups;
  struct TsAllocScope *prev;
} TsAllocScope;
void ts_oom_cleanup_push(TsOomCleanup *c, void (*fn)(void *), void *arg);
void ts_oom_cleanup_pop(TsOomCleanup *c);
void ts_alloc_enter(TsAllocScope *s, TsReallocFn fn, void *user, jmp_buf *oom);
void ts_alloc_leave(TsAllocScope *s);
void *ts_malloc(size_t n);
void *ts_calloc(size_t n, size_t sz);
void *ts_realloc(void *p, size_t n);
void ts_free(void *p);
char *ts_strdup(const char *s);

/* ---- arena ------------------------------------------------------------------------ */
typedef struct Arena Arena;
Arena *arena_new(void);
void arena_destroy(Arena *a);
void *arena_alloc(Arena *a, size_t n);       /* zeroed, 16-byte aligned */
void *arena_alloc8(Arena *a, size_t n);      /* zeroed, 8-byte aligned */
char *arena_strdup(Arena *a, const char *s);
char *arena_strndup(Arena *a, const char *s, size_t n);
char *arena_printf(Arena *a, const char *fmt, ...) TS_PRINTF(2, 3);
void *arena_memdup(Arena *a, const void *p, size_t n);
size_t arena_bytes(const Arena *a);
#define ARENA_NEW(a, T) ((T *)arena_alloc((a), sizeof(T)))
#define ARENA_ARRAY(a, T, n) ((T *)arena_alloc((a), sizeof(T) * (size_t)((n) > 0 ? (n) : 1)))

/* ---- vector of pointers (arena-backed) ----------------------------------------- */
typedef struct PtrVec {
  void **items;
  int len, cap;
} PtrVec;
void vec_push(Arena *a, PtrVec *v, void *item);
void *vec_last(const PtrVec *v);
void *vec_pop(PtrVec *v);
bool vec_has(const PtrVec *v, const void *item); /* item is one of v's pointers */

/* ---- growable string buffer (heap) -------------------------------------------------- */
typedef struct StrBuf {
  char *data; /* always NUL-terminated once anything was appended */
  size_t len, cap;
} StrBuf;
void sb_append(StrBuf *sb, const char *s);
void sb_appendn(StrBuf *sb, const char *s, size_t n);
void sb_putc(StrBuf *sb, char ch);
void sb_printf(StrBuf *sb, const char *fmt, ...) TS_PRINTF(2, 3);
void sb_vprintf(StrBuf *sb, const char *fmt, va_list ap);
void sb_indent(StrBuf *sb, int n); /* n*2 spaces */
void sb_clear(StrBuf *sb);
void sb_free(StrBuf *sb);
const char *sb_str(StrBuf *sb); /* "" when empty */

/* ---- string -> pointer map (arena-backed, open addressing) ------------------------ */
typedef struct StrMapEntry {
  const char *key;
  void *value;
} StrMapEntry;
typedef struct StrMap {
  StrMapEntry *slots;
  int cap, len;
} StrMap;
void *strmap_get(const StrMap *m, const char *key);
bool strmap_has(const StrMap *m, const char *key);
void strmap_put(Arena *a, StrMap *m, const char *key, void *value); /* key is not copied */

/* ---- hashing ---------------------------------------------------------------------- */
uint64_t ts_fnv1a(const void *data, size_t n, uint64_t seed);
void ts_sha256(const void *data, size_t n, uint8_t out[32]);
void ts_sha256_hex(const void *data, size_t n, char out[65]);

/* ---- UTF-8 (utf8.c) ------------------------------------------------------------ */
/* Decodes one UTF-8 character at s (never reading at or past end) into *cp; returns its
 * length in bytes, or 0 when the bytes there are not valid UTF-8 (overlong forms and
 * surrogates included). */
int ts_utf8_decode(const char *s, const char *end, uint32_t *cp);
/* Offset of the first byte of s[0, n) that is not valid UTF-8, or n when all of it is. */
size_t ts_utf8_invalid(const char *s, size_t n);
/* Columns a terminal gives the character: 2 for East Asian wide and emoji, 0 for
 * combining marks, else 1. */
int ts_char_width(uint32_t cp);
/* Whether cp may be part of a Python identifier (an approximation of XID_Continue that
 * rejects punctuation, symbols, spaces and emoji), and whether Python would print it. */
bool ts_char_is_identifier(uint32_t cp);
bool ts_char_is_printable(uint32_t cp);

/* ---- source files and locations -------------------------------------------------- */
typedef struct SourceFile {
  const char *name; /* as the user named it */
  const char *text; /* NUL-terminated, owned by whoever loaded the file */
  size_t len;
} SourceFile;

/* Every AST and IR node carries one: a diagnostic raised in a late pass still points
 * at the user's line.  line/col are 1-based; line 0 means "no location". */
typedef struct SrcLoc {
  const SourceFile *file;
  int line, col;
} SrcLoc;
extern const SrcLoc SRCLOC_NONE;

/* ---- diagnostics -------------------------------------------------------------------- */
/* Messages go into `out` as
 *   file:line:col: error: message
 *     <source line>
 *         ^
 * Errors are counted; compilation goes on where sensible and only the caller (CLI or
 * API) turns a non-zero count into a failure.  max_errors bounds the output. */
typedef struct Diag {
  StrBuf out;
  int errors, warnings;
  int max_errors; /* 0 = default (50) */
  bool echo;      /* also write each message to stderr as it is produced */
} Diag;
void diag_error(Diag *d, SrcLoc loc, const char *fmt, ...) TS_PRINTF(3, 4);
void diag_warning(Diag *d, SrcLoc loc, const char *fmt, ...) TS_PRINTF(3, 4);
void diag_note(Diag *d, SrcLoc loc, const char *fmt, ...) TS_PRINTF(3, 4);
void diag_verror(Diag *d, SrcLoc loc, const char *kind, const char *fmt, va_list ap);
void diag_free(Diag *d);
/* Where the diagnostics stand, and going back there: what was said since is withdrawn (a
 * probe that may fail quietly: getattr's default, a module that may not parse). */
typedef struct DiagMark {
  size_t out_len;
  int errors, warnings;
} DiagMark;
DiagMark diag_mark(const Diag *d);
void diag_rewind(Diag *d, DiagMark m);

/* ---- files (file.c) ------------------------------------------------------------------ */
/* Every file the library reads goes through ts_open_regular: a kernel file named
 * /dev/zero, a FIFO, a directory or a multi-gigabyte cache entry must fail at once with
 * a message that says what the path is, never hang or read until memory runs out. */
enum {
  TS_FILE_NOFOLLOW = 1, /* refuse a symbolic link as the last component (cache entries) */
};
#define TS_READ_DEFAULT_MAX ((uint64_t)256 << 20) /* ts_read_file's cap */

/* Opens `path` read-only if it is a regular file of at most max_bytes; returns the
 * descriptor (close-on-exec, never blocking on open) and the size in *size_out.  On
 * failure returns -1 with errno set (EISDIR, EINVAL for other non-regular files, EFBIG,
 * ELOOP for a refused link, or open's own) and, when `why` is not NULL, appends the
 * reason: "is a directory", "is a FIFO (named pipe)", "is 3.0 GiB, over the 16.0 MiB
 * limit", or strerror's text. */
int ts_open_regular(const char *path, uint64_t max_bytes, int flags, uint64_t *size_out, StrBuf *why);

/* Reads exactly n bytes (retrying short reads and EINTR); false on error or early EOF. */
bool ts_read_exact(int fd, void *buf, size_t n);

/* Reads a whole regular file of at most max_bytes into a heap buffer (NUL-terminated).
 * Returns NULL with errno set and the reason in `why` (see ts_open_regular). */
char *ts_read_file_max(const char *path, uint64_t max_bytes, int flags, size_t *len_out, StrBuf *why);

/* ts_read_file_max with TS_READ_DEFAULT_MAX, following links, no reason text. */
char *ts_read_file(const char *path, size_t *len_out);

/* "1.5 KiB", "3.0 GiB": sizes in messages. */
const char *ts_format_bytes(uint64_t n, char *buf, size_t cap);

/* ---- environment switches (file.c) -------------------------------------------------- */
/* A boolean environment variable: unset or "" -> dflt; 1/true/yes/on -> 1; 0/false/no/off
 * -> 0 (any case).  Anything else is a warning on stderr naming the variable and dflt is
 * used: a typo must not silently turn a switch the wrong way. */
int ts_env_flag(const char *name, int dflt);

#endif
