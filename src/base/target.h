/* target.h — what a compile target's GPU looks like to host code: the device properties kernel
 * factories query while building a kernel (SM count, shared memory, registers, name).
 *
 * A compile answers from the table in target.c: one representative data-center part per
 * architecture, so a compile on a CPU machine builds the same kernel it would on that GPU
 * (answering from the caller's own GPU is not done yet). */
#ifndef TS_BASE_TARGET_H
#define TS_BASE_TARGET_H

#include <stdbool.h>
#include <stdint.h>

typedef struct TsDeviceProps {
  int sm;                        /* major*10 + minor */
  const char *name;              /* as the driver names it */
  int multiprocessor_count;
  int64_t shared_memory_per_block;       /* default static limit, 48 KB */
  int64_t shared_memory_per_block_optin; /* dynamic shared memory one block may opt in to */
  int64_t shared_memory_per_sm;
  int registers_per_block;
  int max_threads_per_block;
  int64_t l2_cache_size;
  int64_t persisting_l2_cache_max_size;
  int64_t total_memory;
  int warp_size;
} TsDeviceProps;

/* The table's row for an architecture (sm 80, 86, 89, 90, 100 ...; the nearest lower row
 * for one between them), or NULL below sm_70. */
const TsDeviceProps *ts_target_device(int sm);

/* An integer property by its name ("multiprocessor_count", "shared_memory_per_block_optin",
 * ... and "compute_capability", "device_count"); false for an unknown name. */
bool ts_device_int_attr(const TsDeviceProps *d, const char *name, int64_t *out);

#endif
