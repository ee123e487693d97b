/* target.c — the device-property table of target.h (one row per architecture; the values
 * are those the CUDA driver reports for the part named). */
#include "target.h"

#include <stddef.h>
#include <string.h>

static const TsDeviceProps rows[] = {
    {70, "Tesla V100-SXM2-32GB", 80, 49152, 98304, 98304, 65536, 1024, 6291456, 0, 34359738368, 32},
    {80, "NVIDIA A100-SXM4-80GB", 108, 49152, 166912, 167936, 65536, 1024, 41943040, 31457280, 85899345920, 32},
    {86, "NVIDIA A10", 72, 49152, 101376, 102400, 65536, 1024, 6291456, 4718592, 24146608128, 32},
    {89, "NVIDIA L40S", 142, 49152, 101376, 102400, 65536, 1024, 100663296, 75497472, 48305799168, 32},
    {90, "NVIDIA H100 80GB HBM3", 132, 49152, 232448, 233472, 65536, 1024, 52428800, 82837504, 85045379072, 32},
    {100, "NVIDIA B200", 148, 49152, 232448, 233472, 65536, 1024, 132120576, 82837504, 191525994496, 32},
};

const TsDeviceProps *ts_target_device(int sm) {
  const TsDeviceProps *best = NULL;
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
    if (rows[i].sm <= sm) best = &rows[i];
  return best;
}

bool ts_device_int_attr(const TsDeviceProps *d, const char *name, int64_t *out) {
  struct { const char *name; int64_t value; } attrs[] = {
      {"multiprocessor_count", d->multiprocessor_count},
      {"shared_memory_per_block", d->shared_memory_per_block},
      {"shared_memory_per_block_optin", d->shared_memory_per_block_optin},
      {"shared_memory_per_sm", d->shared_memory_per_sm},
      {"registers_per_block", d->registers_per_block},
      {"max_threads_per_block", d->max_threads_per_block},
      {"l2_cache_size", d->l2_cache_size},
      {"persisting_l2_cache_max_size", d->persisting_l2_cache_max_size},
      {"total_memory", d->total_memory},
      {"warp_size", d->warp_size},
      {"compute_capability", d->sm},
      {"device_count", 1},
  };
  for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++)
    if (strcmp(attrs[i].name, name) == 0) {
      *out = attrs[i].value;
      return true;
    }
  return false;
}
