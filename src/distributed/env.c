/* env.c — which group a process belongs to, as its launcher's environment says
 * (ts_dist_env_read, used by ts_dist_init and by the Python package before torch.distributed).
 *
 * One launcher family is chosen, by the first whose rank variable is set, and every field is
 * read from that family only (mixing, e.g. RANK from torchrun and the local rank from an
 * enclosing SLURM allocation, would give a rank its neighbour's GPU):
 *
 *   torchrun / tilescale launch  RANK  WORLD_SIZE  LOCAL_RANK  LOCAL_WORLD_SIZE
 *   Open MPI (mpirun)            OMPI_COMM_WORLD_RANK / _SIZE / _LOCAL_RANK / _LOCAL_SIZE
 *   MPICH / Intel MPI (Hydra)    PMI_RANK  PMI_SIZE  MPI_LOCALRANKID  MPI_LOCALNRANKS
 *   SLURM (srun)                 SLURM_PROCID  SLURM_STEP_NUM_TASKS  SLURM_LOCALID,
 *                                SLURM_STEP_TASKS_PER_NODE at SLURM_NODEID
 *
 * SLURM counts only inside a job step (srun): a batch script itself also has SLURM_PROCID=0
 * and SLURM_NTASKS=N, and taking those would make a plain `python x.py` wait for N-1 ranks
 * that never come, so without SLURM_STEP_NUM_TASKS the family is not used.
 * The rendezvous address is MASTER_ADDR/MASTER_PORT when set; under SLURM it defaults to the
 * first host of the step's node list and a port derived from the job id (every task of the
 * step computes the same one); otherwise 127.0.0.1:29500, which only a one-node group can use. */
#include "dist.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ENV_DEFAULT_PORT 29500

typedef struct EnvFamily {
  const char *name;
  const char *rank, *world, *local_rank, *local_world; /* local_world NULL: computed */
} EnvFamily;

static const EnvFamily FAMILIES[] = {
    {"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"},
    {"openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
     "OMPI_COMM_WORLD_LOCAL_SIZE"},
    {"mpich", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"},
    {"slurm", "SLURM_PROCID", "SLURM_STEP_NUM_TASKS", "SLURM_LOCALID", NULL},
};

static void env_error(ts_context *ctx, const char *fmt, const char *name, const char *value, long lo,
                      long hi) {
  if (ctx) rt_set_error(ctx, fmt, name, value, lo, hi);
}

static const char *env_str(const char *name) {
  const char *s = name ? getenv(name) : NULL;
  return (s && *s) ? s : NULL;
}

/* An integer variable in [lo, hi]: true and *out set when it is; true and *out untouched
 * when unset; false (and an error naming it) when set but malformed. */
static bool env_int(ts_context *ctx, const char *name, long lo, long hi, int *out) {
  const char *s = env_str(name);
  if (!s) return true;
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (*end || errno || v < lo || v > hi) {
    env_error(ctx, "ts_dist_env_read: environment variable %s='%s' is not an integer in [%ld, %ld]", name, s,
              lo, hi);
    return false;
  }
  *out = (int)v;
  return true;
}

/* SLURM_STEP_TASKS_PER_NODE ("2(x3),1": three nodes with 2 tasks, then one with 1): the count
 * on node `node`, or -1 when the text does not say. */
int dist_env_slurm_tasks_on_node(const char *spec, int node) {
  const char *p = spec;
  while (p && *p) {
    char *end;
    long n = strtol(p, &end, 10);
    if (end == p || n <= 0) return -1;
    long repeat = 1;
    if (end[0] == '(' && end[1] == 'x') {
      repeat = strtol(end + 2, &end, 10);
      if (repeat <= 0 || *end != ')') return -1;
      end++;
    }
    if (node < repeat) return (int)n;
    node -= (int)repeat;
    if (*end != ',') return -1;
    p = end + 1;
  }
  return -1;
}

/* The first host of a SLURM node list: "gpu[003-004,007],cpu1" -> "gpu003".  false when the
 * text is not a node list this understands or the name does not fit. */
bool dist_env_slurm_first_host(const char *list, char *out, size_t cap) {
  size_t n = strcspn(list, ",[");
  if (n == 0 || n >= cap) return false;
  memcpy(out, list, n);
  out[n] = '\0';
  if (list[n] != '[') return true;
  const char *q = list + n + 1;
  size_t digits = strspn(q, "0123456789"); /* the first number of the range, zero padding kept */
  if (digits == 0 || n + digits >= cap) return false;
  memcpy(out + n, q, digits);
  out[n + digits] = '\0';
  const char *close = strchr(q, ']');
  if (!close) return false;
  size_t suffix = strcspn(close + 1, ",");
  if (n + digits + suffix >= cap) return false;
  memcpy(out + n + digits, close + 1, suffix);
  out[n + digits + suffix] = '\0';
  return true;
}

/* The rendezvous address and port: MASTER_ADDR / MASTER_PORT, else the family's defaults. */
static ts_status env_rendezvous(ts_context *ctx, const EnvFamily *fam, ts_dist_env *e) {
  const char *addr = env_str("MASTER_ADDR");
  e->master_port = ENV_DEFAULT_PORT;
  if (fam && strcmp(fam->name, "slurm") == 0) {
    const char *list = env_str("SLURM_STEP_NODELIST");
    if (!list) list = env_str("SLURM_JOB_NODELIST");
    if (!addr && list && !dist_env_slurm_first_host(list, e->master_addr, sizeof e->master_addr)) {
      if (ctx)
        rt_set_error(ctx,
                     "ts_dist_env_read: cannot read the first host of SLURM node list '%s'; set MASTER_ADDR",
                     list);
      return TS_ERR_INVALID_ARGUMENT;
    }
    int job = 0;
    if (!env_int(ctx, "SLURM_JOB_ID", 0, 0x7fffffff, &job)) return TS_ERR_INVALID_ARGUMENT;
    e->master_port = 20000 + job % 20000; /* every task of the step agrees, other jobs rarely collide */
  }
  if (addr) {
    if (strlen(addr) >= sizeof e->master_addr) {
      if (ctx)
        rt_set_error(ctx, "ts_dist_env_read: MASTER_ADDR is longer than %zu characters",
                     sizeof e->master_addr - 1);
      return TS_ERR_INVALID_ARGUMENT;
    }
    snprintf(e->master_addr, sizeof e->master_addr, "%s", addr);
  }
  if (!e->master_addr[0]) snprintf(e->master_addr, sizeof e->master_addr, "127.0.0.1");
  if (!env_int(ctx, "MASTER_PORT", 1, 65535, &e->master_port)) return TS_ERR_INVALID_ARGUMENT;
  return TS_OK;
}

/* rank/world/local fields from one family; unset local fields default to "one node". */
static ts_status env_family(ts_context *ctx, const EnvFamily *fam, ts_dist_env *e) {
  const int max = TS_DIST_MAX_RANKS;
  if (!env_int(ctx, fam->rank, 0, max - 1, &e->rank) || !env_int(ctx, fam->world, 1, max, &e->world_size) ||
      !env_int(ctx, fam->local_rank, 0, max - 1, &e->local_rank))
    return TS_ERR_INVALID_ARGUMENT;
  if (fam->local_world) {
    if (!env_int(ctx, fam->local_world, 1, max, &e->local_world_size)) return TS_ERR_INVALID_ARGUMENT;
  } else { /* SLURM: the step's tasks on this node */
    int node = 0;
    if (!env_int(ctx, "SLURM_NODEID", 0, max - 1, &node)) return TS_ERR_INVALID_ARGUMENT;
    const char *spec = env_str("SLURM_STEP_TASKS_PER_NODE");
    int n = spec ? dist_env_slurm_tasks_on_node(spec, node) : -1;
    if (spec && n < 0) {
      if (ctx)
        rt_set_error(ctx, "ts_dist_env_read: cannot read SLURM_STEP_TASKS_PER_NODE='%s' for node %d", spec,
                     node);
      return TS_ERR_INVALID_ARGUMENT;
    }
    if (n > 0) e->local_world_size = n;
  }
  return TS_OK;
}

ts_status ts_dist_env_read(ts_context *ctx, ts_dist_env *e) {
  if (!e) return TS_ERR_INVALID_ARGUMENT;
  memset(e, 0, sizeof *e);
  e->rank = 0;
  e->world_size = 1;
  e->local_rank = e->local_world_size = -1;
  e->launcher = "none";
  const EnvFamily *fam = NULL;
  for (size_t i = 0; i < sizeof FAMILIES / sizeof FAMILIES[0] && !fam; i++) {
    if (!env_str(FAMILIES[i].rank)) continue;
    if (strcmp(FAMILIES[i].name, "slurm") == 0 && !env_str("SLURM_STEP_NUM_TASKS"))
      continue; /* a batch script */
    fam = &FAMILIES[i];
  }
  if (fam) {
    e->launcher = fam->name;
    ts_status st = env_family(ctx, fam, e);
    if (st != TS_OK) return st;
  }
  if (e->local_rank < 0) e->local_rank = e->rank;
  if (e->local_world_size < 0) e->local_world_size = e->world_size;
  if (e->rank >= e->world_size || e->local_rank >= e->local_world_size ||
      e->local_world_size > e->world_size) {
    if (ctx)
      rt_set_error(ctx, "ts_dist_env_read: inconsistent %s environment: rank %d of %d, local rank %d of %d",
                   e->launcher, e->rank, e->world_size, e->local_rank, e->local_world_size);
    return TS_ERR_INVALID_ARGUMENT;
  }
  return env_rendezvous(ctx, fam, e);
}

int ts_dist_env_local_rank(void) {
  ts_dist_env e;
  return ts_dist_env_read(NULL, &e) == TS_OK ? e.local_rank : 0;
}
