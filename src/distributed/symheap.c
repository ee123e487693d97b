/* symheap.c — the symmetric allocator behind ts_dist_malloc (DESIGN.md §7).
 *
 *   ts_dist_malloc(bytes) -> dist_symheap_alloc -> offset -> heap base + offset on every rank
 *
 * Symmetry comes from determinism, not communication: every rank runs this allocator on
 * the same sequence of requests and so gets the same offsets (dist.c checks that with an
 * allgather).  It is a first-fit list of blocks covering the heap, sorted by offset, with
 * free and coalescing — TileScale's bump allocator never frees, which leaks the heap in
 * long-running programs.  Allocation counts are small (buffers, not tensors per step), so
 * a linear scan is plenty. */
#include "dist.h"

#include <string.h>

void dist_symheap_init(DistSymHeap *h, uint64_t size) {
  memset(h, 0, sizeof *h);
  h->size = size;
  h->cap = 16;
  h->blocks = ts_malloc(sizeof *h->blocks * (size_t)h->cap);
  h->blocks[0] = (DistSymBlock){0, size, false};
  h->nblocks = size > 0 ? 1 : 0;
}

void dist_symheap_destroy(DistSymHeap *h) {
  ts_free(h->blocks);
  memset(h, 0, sizeof *h);
}

static void insert_at(DistSymHeap *h, int i, DistSymBlock blk) {
  if (h->nblocks == h->cap) {
    h->cap *= 2;
    h->blocks = ts_realloc(h->blocks, sizeof *h->blocks * (size_t)h->cap);
  }
  memmove(&h->blocks[i + 1], &h->blocks[i], sizeof *h->blocks * (size_t)(h->nblocks - i));
  h->blocks[i] = blk;
  h->nblocks++;
}

static void remove_at(DistSymHeap *h, int i) {
  memmove(&h->blocks[i], &h->blocks[i + 1], sizeof *h->blocks * (size_t)(h->nblocks - i - 1));
  h->nblocks--;
}

bool dist_symheap_alloc(DistSymHeap *h, uint64_t bytes, uint64_t align, uint64_t *off) {
  if (bytes == 0) bytes = 1; /* a distinct address for every allocation */
  if (align == 0 || (align & (align - 1))) return false;
  for (int i = 0; i < h->nblocks; i++) {
    DistSymBlock b = h->blocks[i];
    if (b.used) continue;
    uint64_t start = (b.off + align - 1) & ~(align - 1);
    if (start < b.off || start - b.off > b.size || b.size - (start - b.off) < bytes) continue;
    /* Split into [pad][allocation][tail]; the pad and tail stay free. */
    uint64_t pad = start - b.off, tail = b.size - pad - bytes;
    int j = i;
    if (pad) {
      h->blocks[j] = (DistSymBlock){b.off, pad, false};
      insert_at(h, ++j, (DistSymBlock){start, bytes, true});
    } else {
      h->blocks[j] = (DistSymBlock){start, bytes, true};
    }
    if (tail) insert_at(h, j + 1, (DistSymBlock){start + bytes, tail, false});
    *off = start;
    return true;
  }
  return false;
}

bool dist_symheap_free(DistSymHeap *h, uint64_t off) {
  int i = 0;
  while (i < h->nblocks && h->blocks[i].off != off) i++;
  if (i == h->nblocks || !h->blocks[i].used) return false;
  h->blocks[i].used = false;
  if (i + 1 < h->nblocks && !h->blocks[i + 1].used) {
    h->blocks[i].size += h->blocks[i + 1].size;
    remove_at(h, i + 1);
  }
  if (i > 0 && !h->blocks[i - 1].used) {
    h->blocks[i - 1].size += h->blocks[i].size;
    remove_at(h, i);
  }
  return true;
}

uint64_t dist_symheap_used_bytes(const DistSymHeap *h) {
  uint64_t n = 0;
  for (int i = 0; i < h->nblocks; i++)
    if (h->blocks[i].used) n += h->blocks[i].size;
  return n;
}
