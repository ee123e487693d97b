/* base.c — memory (allocation hook, arena), vectors, string buffers, string maps,
 * and assertion failure (file reading: file.c).  The lowest layer: no project includes besides
 * base.h. */
#include "base.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- compiler bugs ------------------------------------------------------------------ */
void ts_assert_fail(const char *file, int line, const char *cond) {
  fprintf(stderr, "tilescale: internal compiler error at %s:%d: %s\n", file, line, cond);
  abort();
}

/* ---- allocation scopes ------------------------------------------------------------ */
/* The innermost scope of this thread (base.h): per call, never shared between threads. */
static _Thread_local TsAllocScope *alloc_top;

void ts_alloc_enter(TsAllocScope *s, TsReallocFn fn, void *user, jmp_buf *oom) {
  s->cleanups = NULL;
  s->fn = fn;
  s->user = user;
  s->oom = oom;
  s->prev = alloc_top;
  alloc_top = s;
}

void ts_alloc_leave(TsAllocScope *s) {
  if (alloc_top == s) alloc_top = s->prev;
}

void ts_oom_cleanup_push(TsOomCleanup *c, void (*fn)(void *), void *arg) {
  c->fn = fn;
  c->arg = arg;
  c->prev = alloc_top ? alloc_top->cleanups : NULL;
  if (alloc_top) alloc_top->cleanups = c;
}

void ts_oom_cleanup_pop(TsOomCleanup *c) {
  if (alloc_top && alloc_top->cleanups == c) alloc_top->cleanups = c->prev;
}

void *ts_realloc(void *p, size_t n) {
  TsAllocScope *s = alloc_top;
  void *r;
  if (s && s->fn) {
    r = s->fn(s->user, p, n);
  } else if (n == 0) {
    free(p);
    return NULL;
  } else {
    r = realloc(p, n);
  }
  if (!r && n) {
    if (s && s->oom) {
      jmp_buf *to = s->oom;
      s->oom = NULL; /* the handler runs in the scope; a second failure there aborts */
      TsOomCleanup *c = s->cleanups;
      s->cleanups = NULL;
      for (; c; c = c->prev) c->fn(c->arg); /* frees only: they cannot fail */
      longjmp(*to, 1);
    }
    fprintf(stderr, "tilescale: out of memory (%zu bytes)\n", n);
    abort();
  }
  return r;
}
void *ts_malloc(size_t n) { return ts_realloc(NULL, n ? n : 1); }
void *ts_calloc(size_t n, size_t sz) {
  void *p = ts_malloc(n * sz);
  memset(p, 0, n * sz);
  return p;
}
void ts_free(void *p) {
  if (p) ts_realloc(p, 0);
}
char *ts_strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *r = ts_malloc(n);
  memcpy(r, s, n);
  return r;
}

/* ---- arena ------------------------------------------------------------------------ */
/* Chunks grow geometrically; big requests get a chunk of their own. */
typedef struct Chunk {
  struct Chunk *next;
  size_t size, used;
  _Alignas(16) unsigned char data[];
} Chunk;

struct Arena {
  Chunk *head;
  size_t total;
};

Arena *arena_new(void) { return ts_calloc(1, sizeof(Arena)); }

void arena_destroy(Arena *a) {
  if (!a) return;
  for (Chunk *c = a->head, *n; c; c = n) {
    n = c->next;
    ts_free(c);
  }
  ts_free(a);
}

static void *arena_take(Arena *a, size_t n, size_t align) {
  Chunk *c = a->head;
  size_t at = c ? (c->used + align - 1) & ~(align - 1) : 0;
  if (!c || at + n > c->size) {
    size_t sz = c ? c->size * 2 : 64 * 1024;
    if (sz > 16 * 1024 * 1024) sz = 16 * 1024 * 1024;
    if (sz < n) sz = n;
    Chunk *nc = ts_malloc(sizeof(Chunk) + sz);
    nc->size = sz;
    nc->used = 0;
    nc->next = a->head;
    a->head = nc;
    c = nc;
    at = 0;
  }
  void *p = c->data + at;
  c->used = at + n;
  a->total += n;
  memset(p, 0, n);
  return p;
}

void *arena_alloc(Arena *a, size_t n) { return arena_take(a, (n + 15) & ~(size_t)15, 16); }

/* For the many small objects with no 16-byte member (AST nodes): rounding each to 16
 * bytes would cost a name node a seventh of its size. */
void *arena_alloc8(Arena *a, size_t n) { return arena_take(a, (n + 7) & ~(size_t)7, 8); }

size_t arena_bytes(const Arena *a) { return a->total; }

void *arena_memdup(Arena *a, const void *p, size_t n) {
  void *r = arena_alloc(a, n);
  if (n) memcpy(r, p, n);
  return r;
}
char *arena_strndup(Arena *a, const char *s, size_t n) {
  char *r = arena_alloc(a, n + 1);
  memcpy(r, s, n);
  r[n] = 0;
  return r;
}
char *arena_strdup(Arena *a, const char *s) { return s ? arena_strndup(a, s, strlen(s)) : NULL; }

char *arena_printf(Arena *a, const char *fmt, ...) {
  va_list ap, ap2;
  va_start(ap, fmt);
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *r = arena_alloc(a, (size_t)n + 1);
  vsnprintf(r, (size_t)n + 1, fmt, ap2);
  va_end(ap2);
  return r;
}

/* ---- vectors ------------------------------------------------------------------------ */
void vec_push(Arena *a, PtrVec *v, void *item) {
  if (v->len == v->cap) {
    /* From 2: most vectors (call arguments, assignment targets, a block's statements)
     * hold one or two items, and every outgrown array stays in the arena. */
    int cap = v->cap ? v->cap * 2 : 2;
    void **items = arena_alloc(a, sizeof(void *) * (size_t)cap);
    if (v->len) memcpy(items, v->items, sizeof(void *) * (size_t)v->len);
    v->items = items;
    v->cap = cap;
  }
  v->items[v->len++] = item;
}
void *vec_last(const PtrVec *v) { return v->len ? v->items[v->len - 1] : NULL; }
void *vec_pop(PtrVec *v) { return v->len ? v->items[--v->len] : NULL; }
bool vec_has(const PtrVec *v, const void *item) {
  for (int i = 0; i < v->len; i++)
    if (v->items[i] == item) return true;
  return false;
}

/* ---- string buffers ------------------------------------------------------------------ */
static void sb_reserve(StrBuf *sb, size_t extra) {
  if (sb->len + extra + 1 <= sb->cap) return;
  size_t cap = sb->cap ? sb->cap * 2 : 256;
  while (cap < sb->len + extra + 1) cap *= 2;
  sb->data = ts_realloc(sb->data, cap);
  sb->cap = cap;
}
void sb_appendn(StrBuf *sb, const char *s, size_t n) {
  sb_reserve(sb, n);
  memcpy(sb->data + sb->len, s, n);
  sb->len += n;
  sb->data[sb->len] = 0;
}
void sb_append(StrBuf *sb, const char *s) { sb_appendn(sb, s, strlen(s)); }
void sb_putc(StrBuf *sb, char ch) { sb_appendn(sb, &ch, 1); }
void sb_vprintf(StrBuf *sb, const char *fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  sb_reserve(sb, (size_t)n);
  vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap2);
  va_end(ap2);
  sb->len += (size_t)n;
}
void sb_printf(StrBuf *sb, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  sb_vprintf(sb, fmt, ap);
  va_end(ap);
}
void sb_indent(StrBuf *sb, int n) {
  for (int i = 0; i < n; i++) sb_appendn(sb, "  ", 2);
}
void sb_clear(StrBuf *sb) {
  sb->len = 0;
  if (sb->data) sb->data[0] = 0;
}
void sb_free(StrBuf *sb) {
  ts_free(sb->data);
  sb->data = NULL;
  sb->len = sb->cap = 0;
}
const char *sb_str(StrBuf *sb) { return sb->data ? sb->data : ""; }

/* ---- string map ------------------------------------------------------------------------ */
static uint64_t str_hash(const char *s) { return ts_fnv1a(s, strlen(s), 0); }

static int strmap_find(const StrMap *m, const char *key) {
  if (!m->cap) return -1;
  uint64_t h = str_hash(key);
  for (int i = 0; i < m->cap; i++) {
    int slot = (int)((h + (uint64_t)i) & (uint64_t)(m->cap - 1));
    if (!m->slots[slot].key) return -1 - slot;
    if (strcmp(m->slots[slot].key, key) == 0) return slot;
  }
  return -1;
}
void *strmap_get(const StrMap *m, const char *key) {
  int s = strmap_find(m, key);
  return s >= 0 ? m->slots[s].value : NULL;
}
bool strmap_has(const StrMap *m, const char *key) { return strmap_find(m, key) >= 0; }

void strmap_put(Arena *a, StrMap *m, const char *key, void *value) {
  if ((m->len + 1) * 2 > m->cap) {
    StrMap n = {0};
    n.cap = m->cap ? m->cap * 2 : 16;
    n.slots = arena_alloc(a, sizeof(StrMapEntry) * (size_t)n.cap);
    for (int i = 0; i < m->cap; i++)
      if (m->slots[i].key) {
        int s = strmap_find(&n, m->slots[i].key);
        n.slots[-1 - s] = m->slots[i];
        n.len++;
      }
    *m = n;
  }
  int s = strmap_find(m, key);
  if (s >= 0) {
    m->slots[s].value = value;
  } else {
    m->slots[-1 - s] = (StrMapEntry){key, value};
    m->len++;
  }
}

/* ---- hashing -------------------------------------------------------------------------- */
uint64_t ts_fnv1a(const void *data, size_t n, uint64_t seed) {
  const unsigned char *p = data;
  uint64_t h = 1469598103934665603ull ^ seed;
  for (size_t i = 0; i < n; i++) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
  return h;
}

