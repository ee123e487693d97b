/* thread_sync.c — inserts __syncthreads (EVAL of CALL sync_threads) where shared memory
 * is written by some threads and then read by others (RAW), read and then written (WAR), or
 * written twice by different threads (WAW: the first store could land last; thread_owners.c
 * says which thread writes which element), after lowering, when every access is explicit.
 *
 * Walks each statement list in order with the set of shared buffers read and written
 * since the last barrier; a statement that conflicts with that set gets a barrier in
 * front.  A loop body is entered with the accesses of its own body added to the state,
 * which models the previous iteration (a body that reads then writes gets a barrier
 * before the write and one at the top for the next iteration's reads).  Barriers are
 * never placed inside code that only some threads run: an `if` whose condition depends
 * on the thread index (or on loaded data) is treated as one opaque access, so the
 * barrier goes around it.  Inside such code, a shared buffer that every thread only
 * touches at its own row (index threadIdx.x in one dimension: per-thread counters) needs
 * no barrier; any other conflict there is refused, since no barrier can be placed.
 * Conservative: extra barriers cost little, missing ones are races.
 *
 * Accesses are tracked with their indices: two accesses of one buffer conflict unless some
 * dimension provably differs in every pair of threads (index_disjoint: different constants,
 * or x ^ c1 / x + c1 against x ^ c2 / x + c2 with x block-uniform and load-free, its LETs
 * too, e.g. the two halves s[r ^ 1, ...] and s[r, ...] of a double buffer).  An index naming a variable bound
 * inside a loop or branch is unknown outside it, and in the loop's next iteration, where the
 * loop's own variable has moved on too (strip_bound, summarize_iterations).  Inside a lowered T.Parallel nest (IrStmt.iter_owned), the T.Parallel
 * contract (an iteration's accesses do not conflict with the other iterations') lets code
 * that only some threads run go without a barrier; the nest's uniform code is synchronised as
 * usual and barriers go between the nest and the code around it.
 *
 * In a warp-specialized kernel (pass_is_role_split) the producer warpgroup never joins the
 * consumers' barriers: the consumer branch is synchronised on its own, with named barrier 1
 * over the consumer threads (bar.sync 1, T) wherever a __syncthreads would go, its code
 * counted uniform across those threads; the producer branch is ordered by its mbarriers.
 *
 * A T.ws body (IrStmt if_.ws_hi) runs on its warpgroups only, so a __syncthreads inside it
 * would wait forever for the others: it is synchronised on its own with a named barrier over
 * its threads (one barrier id per thread range of the kernel, from 2), entered with the
 * accesses of its own body as pending when an enclosing loop runs it again, and seen
 * from outside as one access, with __syncthreads around it as needed.  A hand-written branch on
 * thread ranges (`if tx < 128: ... else: ...`, front/thread_branch.c) is a chain of such bodies,
 * each the else of the one before: they run at once on disjoint threads, ordered only by the
 * user's mbarriers, so the chain is one access from outside and no barrier goes between them.
 *
 * Hand-issued cp.async (T.ptx_cp_async) in a function that waits with T.ptx_wait_group is
 * tracked as a write when issued (WAR) and when a wait lands it (RAW): see summ_user_groups.
 * Barriers after a T.thread_return are checked by thread_return.c. */
#include "passes.h"
#include "thread_owners.h"

/* One access to shared memory: buf[idx] (lanes elements from the last index when > 1), or
 * any element of buf when idx is NULL (an address taken, a view, a swizzled buffer).  An
 * index that names variables which no longer hold the value they had is NULL (any value:
 * see strip_bound).  For the write-after-write test (thread_owners.h): orig, the indices as
 * written (also through a swizzle or strides: a bijection either way), NULL for any element,
 * indices of buffer `space` (buf itself, or a view of it: only indices of one space compare);
 * local, the variables they name that were bound since; guards, the conditions inside its
 * statement it is written under, guarded, also under others not known (OwnerSite); atomic,
 * an atomic update (two of those need no order). */
typedef struct Access {
  const IrBuffer *buf;
  IrExpr **idx;
  int nidx, lanes;
  IrExpr **orig;
  const IrBuffer *space;
  PtrVec local;
  const OwnerGuard *guards;
  int nguards;
  bool guarded, atomic;
} Access;

/* The accesses since the last barrier: the buffers read and written, and each access. */
typedef struct SyncState {
  PtrVec reads, writes; /* IrBuffer* */
  PtrVec racc, wacc;    /* Access* of those buffers */
  /* User cp.async groups (summ_user_groups): a copy's issue is a write for WAR only (a
   * statement's own `issues`, never a pending access), a T.ptx_wait_group a write for RAW
   * only (`lands`: what later reads must see, no WAR check at the wait). */
  PtrVec issues, iacc, lands, lacc;
} SyncState;

typedef struct Sync {
  TsCompiler *c;
  PtrVec tdep;    /* IrVar* whose value may differ between threads */
  PtrVec tregs;   /* IrBuffer* (local / local.var) whose contents may differ between threads */
  bool fence;     /* the function issues wgmma: fence.proxy.async before inserted barriers */
  const IrKernel *kernel; /* the kernel being synchronised */
  int64_t group;  /* > 0: inside a consumer branch of that many threads (named barriers) */
  int bar_id;     /* the named barrier of the group */
  int64_t ranges[14][2]; /* T.ws thread ranges seen in the kernel: barrier ids 2, 3, ... */
  int nranges;
  bool ws_wait;   /* a T.ws body that waits on an mbarrier ran since the last block barrier */
  PtrVec private_; /* check_divergent's dry run: shared buffers each thread only touches at its
                      own threadIdx.x slice inside the code checked (no hazard between threads) */
  PtrVec redefined; /* IrVar* bound by more than one LET or FOR: an index naming one is not compared */
  bool in_nest;     /* inside a lowered T.Parallel nest (IrStmt.iter_owned): see check_divergent */
  PtrVec let_vars, let_vals; /* each LET's variable and value (block_uniform_value) */
  bool user_groups; /* the function waits with T.ptx_wait_group: see summ_user_groups */
  bool returns;     /* the function has a T.thread_return: any store may be skipped by some threads */
  PtrVec landed;    /* const IrBuffer*: the shared destinations of its T.ptx_cp_async copies */
  int divergent;    /* > 0: check_divergent's dry run of code only some threads run */
  int loops;        /* uniform loops around the list being synchronised */
  IrStmt *loop;     /* the innermost of them, or NULL */
  OwnerEnv owners;  /* the write-after-write test's view of the kernel */
  /* check_divergent's dry run of a branch: the conditions every thread running it met (the
   * branch's, negated for an else), which same_thread adds to both accesses' guards */
  OwnerGuard encl[8];
  int nencl;
} Sync;

/* A T.view / T.reshape alias names the memory of another buffer: hazards are tracked on
 * the buffer that owns the memory, so a write through one name orders reads through any. */
static bool is_shared(const IrBuffer *b) { return pass_is_shared(ir_buffer_root(b)); }

static void add(TsCompiler *c, PtrVec *v, void *p) {
  if (!vec_has(v, p)) vec_push(c->arena, v, p);
}

/* Records one access of buffer b (its memory: a view's accesses are any element of the owner)
 * in set (reads or writes) and its list acc.  At most ACCESS_CAP accesses are kept per buffer:
 * past that, one access of any element stands for them all. */
enum { ACCESS_CAP = 8 };
static bool any_element(const PtrVec *acc, const IrBuffer *b, int *count) {
  *count = 0;
  for (int i = 0; i < acc->len; i++) {
    const Access *a = acc->items[i];
    if (a->buf != b) continue;
    if (!a->idx && !a->orig) return true;
    ++*count;
  }
  return false;
}
static void add_access(TsCompiler *c, PtrVec *set, PtrVec *acc, const Access *a) {
  add(c, set, (void *)a->buf);
  int count;
  if (any_element(acc, a->buf, &count)) {
    if (!a->atomic)
      for (int i = 0; i < acc->len; i++) /* no longer atomic updates only */
        if (((Access *)acc->items[i])->buf == a->buf) ((Access *)acc->items[i])->atomic = false;
    return;
  }
  if ((a->idx || a->orig) && count < ACCESS_CAP) {
    vec_push(c->arena, acc, (void *)a);
    return;
  }
  bool atomic = a->atomic; /* the one access standing for atomic updates only is one too */
  int keep = 0; /* drop b's indexed accesses, add one of any element */
  for (int i = 0; i < acc->len; i++) {
    Access *o = acc->items[i];
    if (o->buf != a->buf) acc->items[keep++] = o;
    else atomic &= o->atomic;
  }
  acc->len = keep;
  Access *any = ARENA_NEW(c->arena, Access);
  any->buf = a->buf;
  any->atomic = atomic;
  vec_push(c->arena, acc, any);
}

typedef struct Summ {
  TsCompiler *c;
  SyncState *st;
  const PtrVec *ignore;
  PtrVec opaque; /* LOAD nodes whose address a call takes: it may touch more than that element */
  const PtrVec *landed; /* user cp.async groups (Sync.landed): their copies' destinations, else NULL */
  PtrVec copied;        /* the &dst LOADs of those copies: written (summ_user_groups), not read */
  PtrVec stores;        /* OwnerStore*: the STOREs visited, with their guards (find_stores) */
} Summ;
enum { ACC_READ, ACC_WRITE, ACC_ISSUE, ACC_LAND };
static Access *summ_add(Summ *s, int how, const IrBuffer *b, IrExpr **idx, int nidx, int lanes) {
  const IrBuffer *m = ir_buffer_root(b);
  Access *a = ARENA_NEW(s->c->arena, Access);
  if (vec_has(s->ignore, m)) return a;
  a->buf = m;
  if (idx && (nidx == b->ndim || nidx == 1)) { /* one index: the element offset (lowered layouts) */
    a->orig = idx;
    a->space = b;
    a->nidx = nidx;
    a->lanes = lanes;
    if (m == b && !b->layout && !b->strides && nidx == b->ndim) a->idx = idx;
  }
  SyncState *st = s->st;
  if (how == ACC_WRITE) add_access(s->c, &st->writes, &st->wacc, a);
  else if (how == ACC_READ) add_access(s->c, &st->reads, &st->racc, a);
  else if (how == ACC_ISSUE) add_access(s->c, &st->issues, &st->iacc, a);
  else add_access(s->c, &st->lands, &st->lacc, a);
  return a;
}
/* The LOADs under a call's arguments (not inside their indices) are pointers it may use. */
static void mark_opaque(Summ *s, IrExpr *e) {
  if (!e) return;
  if (e->kind == IR_LOAD) {
    vec_push(s->c->arena, &s->opaque, e);
    return;
  }
  if (e->kind == IR_CALL)
    for (int i = 0; i < e->u.call.nargs; i++) mark_opaque(s, e->u.call.args[i]);
  else if (e->kind != IR_INT && e->kind != IR_FLOAT && e->kind != IR_STR && e->kind != IR_VAR)
    for (int i = 0; i < ir_expr_nops[e->kind]; i++) mark_opaque(s, e->u.ops[i]);
}
static const IrBuffer *cp_async_dst(const IrExpr *e, const IrExpr **load);
static void summ_expr(IrExpr *e, void *ctx) {
  Summ *s = ctx;
  if (e->kind == IR_CALL && !ir_call_is_pure(e))
    for (int i = 0; i < e->u.call.nargs; i++) mark_opaque(s, e->u.call.args[i]);
  const IrExpr *dst_load;
  if (s->landed && e->kind == IR_CALL && cp_async_dst(e, &dst_load)) vec_push(s->c->arena, &s->copied, (void *)dst_load);
  if (e->kind == IR_LOAD && vec_has(&s->copied, e)) return;
  if (e->kind == IR_LOAD && is_shared(e->u.load.buf)) {
    bool whole = vec_has(&s->opaque, e);
    summ_add(s, ACC_READ, e->u.load.buf, whole ? NULL : e->u.load.idx, e->u.load.nidx, e->lanes);
  }
  if (e->kind == IR_CALL && (e->u.call.op == IRI_ATOMIC_ADD || e->u.call.op == IRI_ATOMIC_MAX ||
                             e->u.call.op == IRI_ATOMIC_MIN || e->u.call.op == IRI_ATOMIC_ADD_X) &&
      e->u.call.nargs > 0) {
    IrExpr *a = e->u.call.args[0];
    if (a->kind == IR_CALL && a->u.call.nargs == 1) a = a->u.call.args[0];
    if (a->kind == IR_LOAD && is_shared(a->u.load.buf)) summ_add(s, ACC_WRITE, a->u.load.buf, NULL, 0, 1)->atomic = true;
  }
}
/* The shared buffer a T.ptx_cp_async copy writes (its &dst operand; *load: that LOAD), or NULL. */
static const IrBuffer *cp_async_dst(const IrExpr *e, const IrExpr **load) {
  if (!(ir_is_device(e, IRD_CP_ASYNC) || ir_is_device(e, IRD_CP_ASYNC_ZFILL)) || e->u.call.nargs < 1) return NULL;
  const IrExpr *a = e->u.call.args[0];
  if (a->kind == IR_CALL && a->u.call.op == IRI_ADDRESS_OF && a->u.call.nargs == 1) a = a->u.call.args[0];
  if (load) *load = a;
  return a->kind == IR_LOAD && is_shared(a->u.load.buf) ? a->u.load.buf : NULL;
}

/* User cp.async groups (T.ptx_commit_group / T.ptx_wait_group).  A copy writes its
 * destination at some time between its issue and the wait that covers it.  So the issue is a
 * write for WAR only (every thread still reading the old contents must be done before it),
 * and every T.ptx_wait_group a write of every copy destination of the function, any element,
 * for RAW only: the data is in the waiting thread's view there, and another thread's later
 * read needs a barrier after the wait — one before the wait orders nothing, __syncthreads
 * does not wait for copies in flight.  A barrier already following the wait clears the state
 * as usual, so none is doubled. */
static void summ_user_groups(Summ *s, IrExpr *e) {
  if (!s->landed || e->kind != IR_CALL || e->u.call.op != IRI_DEVICE) return;
  const IrBuffer *dst = cp_async_dst(e, NULL);
  if (dst) summ_add(s, ACC_ISSUE, dst, NULL, 0, 1);
  if (ir_is_device(e, IRD_CP_ASYNC_WAIT_GROUP))
    for (int i = 0; i < s->landed->len; i++) summ_add(s, ACC_LAND, s->landed->items[i], NULL, 0, 1);
}

static void summ_stmt(IrStmt *st, void *ctx) {
  Summ *s = ctx;
  if (st->kind == IR_S_EVAL) summ_user_groups(s, st->u.eval.value);
  /* cp.async stores (inject_pipeline) complete later; the pipeline places its own
   * wait + barrier before their stage is read, so they are not tracked here. */
  if (st->kind == IR_S_STORE && is_shared(st->u.store.buf) && !st->u.store.async_) {
    Access *a = summ_add(s, ACC_WRITE, st->u.store.buf, st->u.store.idx, st->u.store.nidx, st->u.store.lanes);
    a->guarded = true; /* until its guards are found */
    for (int i = 0; i < s->stores.len; i++) {
      const OwnerStore *o = s->stores.items[i];
      if (o->store != st) continue;
      a->guards = o->guards;
      a->nguards = o->nguards;
      a->guarded = o->unknown;
      break;
    }
  }
}

/* The variables bound (FOR, LET) inside s: outside s, or in another iteration of a loop s, an
 * index naming one of them no longer means the element it meant. */
typedef struct Bound { TsCompiler *c; PtrVec vars; } Bound;
static void bound_stmt(IrStmt *s, void *ctx) {
  Bound *b = ctx;
  if (s->kind == IR_S_FOR && s->u.loop.var) add(b->c, &b->vars, s->u.loop.var);
  if (s->kind == IR_S_LET) add(b->c, &b->vars, s->u.let.var);
}
static bool uses_any(const IrExpr *e, const PtrVec *vars) {
  for (int k = 0; e && k < vars->len; k++)
    if (ir_expr_uses_var(e, vars->items[k])) return true;
  return false;
}
/* The variables of vars that a's indices name, directly or through a LET already among them. */
static void add_local(const Sync *sy, Access *a, const PtrVec *vars) {
  TsCompiler *c = sy->c;
  for (bool grew = true; grew;) {
    grew = false;
    for (int k = 0; k < vars->len; k++) {
      IrVar *v = vars->items[k];
      if (vec_has(&a->local, v)) continue;
      bool used = false;
      for (int d = 0; d < a->nidx && !used; d++) used = ir_expr_uses_var(a->orig[d], v);
      for (int i = 0; i < sy->let_vars.len && !used; i++)
        used = vec_has(&a->local, sy->let_vars.items[i]) && ir_expr_uses_var(sy->let_vals.items[i], v);
      if (used) {
        vec_push(c->arena, &a->local, v);
        grew = true;
      }
    }
  }
}
static void strip_list(const Sync *sy, PtrVec *acc, const PtrVec *vars) {
  TsCompiler *c = sy->c;
  for (int i = 0; i < acc->len; i++) {
    Access *a = acc->items[i];
    int d = 0;
    while (a->orig && d < a->nidx && !uses_any(a->orig[d], vars)) d++;
    if (!a->orig || d == a->nidx) continue;
    Access *r = ARENA_NEW(c->arena, Access);
    *r = *a;
    r->local = (PtrVec){0};
    for (int k = 0; k < a->local.len; k++) vec_push(c->arena, &r->local, a->local.items[k]);
    add_local(sy, r, vars);
    if (a->idx) {
      r->idx = ARENA_ARRAY(c->arena, IrExpr *, a->nidx);
      for (d = 0; d < a->nidx; d++) r->idx[d] = uses_any(a->idx[d], vars) ? NULL : a->idx[d];
    }
    acc->items[i] = r;
  }
}
/* Makes the indices of st that name a variable bound inside s unknown (NULL: any value). */
static void strip_bound(const Sync *sy, SyncState *st, IrStmt *s) {
  if (!st->racc.len && !st->wacc.len && !st->iacc.len && !st->lacc.len) return;
  Bound b = {sy->c, {0}};
  IrVisitor v = {bound_stmt, NULL, &b};
  ir_visit(s, &v);
  if (!b.vars.len) return;
  strip_list(sy, &st->racc, &b.vars);
  strip_list(sy, &st->wacc, &b.vars);
  strip_list(sy, &st->iacc, &b.vars);
  strip_list(sy, &st->lacc, &b.vars);
}

/* The STOREs of s with the conditions inside s they are under (Summ.stores); all of them under
 * unknown ones when s has a break or continue, or the function a T.thread_return. */
static void find_break(IrStmt *st, void *ctx) {
  if (st->kind == IR_S_BREAK || st->kind == IR_S_CONTINUE) *(bool *)ctx = true;
}
static void find_stores(const Sync *sy, Summ *sm, IrStmt *s) {
  bool all = sy->returns;
  IrVisitor v = {find_break, NULL, &all};
  if (!all) ir_visit(s, &v);
  owner_collect_stores(&sy->owners, s, all, &sm->stores);
}

static SyncState summarize(const Sync *sy, IrStmt *s) {
  SyncState st = {0};
  Summ sm = {sy->c, &st, &sy->private_, {0}, sy->user_groups ? &sy->landed : NULL, {0}, {0}};
  find_stores(sy, &sm, s);
  IrVisitor v = {summ_stmt, summ_expr, &sm};
  ir_visit(s, &v);
  strip_bound(sy, &st, s);
  return st;
}
/* The accesses of a loop's body as a previous iteration left them: its variable too has moved
 * on since (s[k + 1] read then is s[k] now). */
static SyncState summarize_iterations(const Sync *sy, IrStmt *loop) {
  IrStmt *body = loop->kind == IR_S_FOR ? loop->u.loop.body : loop->u.while_.body;
  SyncState st = summarize(sy, body);
  strip_bound(sy, &st, loop);
  return st;
}
/* The shared-memory reads of a loop's bounds (evaluated once, before the loop). */
static SyncState summarize_bounds(const Sync *sy, IrStmt *loop) {
  SyncState st = {0};
  Summ sm = {sy->c, &st, &sy->private_, {0}, NULL, {0}, {0}};
  IrVisitor v = {summ_stmt, summ_expr, &sm};
  ir_visit_expr(loop->u.loop.min, &v);
  ir_visit_expr(loop->u.loop.extent, &v);
  return st;
}

/* Thread uniformity.  A value is uniform when every thread of the block computes the same
 * one: constants, block indices, parameters, and loads at uniform indices from global or
 * shared memory (all threads read one address; the barriers this pass places order any
 * write before such a read) or from a register buffer whose every store is uniform.  A
 * loop bound by such a value (e.g. `T.Pipelined(T.ceildiv(batch_sizes[bz], block_K))`)
 * runs the same trip count in every thread, so barriers may go inside it. */
typedef struct Dep { const Sync *sy; bool found; } Dep;

/* Registers that hold the same index space in every thread: locals, vars, and a fragment
 * whose layout replicates it whole (registers per thread = its element count, e.g. a
 * block-sparse mask copied into a [n] fragment and read at a loop index).  Such a buffer is
 * uniform when every store to it is. */
static bool per_thread_copy(const IrBuffer *b) {
  if (b->scope == IR_SCOPE_LOCAL || b->scope == IR_SCOPE_VAR) return true;
  if (b->scope != IR_SCOPE_FRAGMENT || b->local_size <= 0) return false;
  int64_t n = 1, d;
  for (int i = 0; i < b->ndim; i++) {
    if (!ir_is_const_int(b->shape[i], &d)) return false;
    n *= d;
  }
  return n == b->local_size;
}

/* The rank and group size are the same in every thread. */
static bool rank_query(const IrExpr *e) {
  return ir_is_device(e, IRD_DIST_GET_RANK) || ir_is_device(e, IRD_DIST_GET_NUM_RANKS) ||
         ir_is_device(e, IRD_SHMEM_MY_PE) || ir_is_device(e, IRD_SHMEM_N_PES);
}
static void dep_expr(IrExpr *e, void *ctx) {
  Dep *d = ctx;
  if (e->kind == IR_LOAD) {
    const IrBuffer *mem = ir_buffer_root(e->u.load.buf);
    IrScope sc = mem->scope;
    bool uniform_mem = sc == IR_SCOPE_GLOBAL || sc == IR_SCOPE_SHARED || sc == IR_SCOPE_SHARED_DYN ||
                       (per_thread_copy(mem) && !vec_has(&d->sy->tregs, e->u.load.buf));
    if (!uniform_mem || e->lanes > 1) d->found = true; /* the index is visited on its own */
  }
  if (e->kind == IR_VAR && (e->u.var->kind == IR_VAR_THREAD_IDX || vec_has(&d->sy->tdep, e->u.var))) d->found = true;
  if (e->kind == IR_CALL && !ir_call_is_pure(e) && !rank_query(e)) d->found = true;
}
static bool thread_dependent(const Sync *sy, IrExpr *e) {
  Dep d = {sy, false};
  IrVisitor v = {NULL, dep_expr, &d};
  ir_visit_expr(e, &v);
  return d.found;
}

/* A register buffer whose address a call takes may be written by it with anything. */
typedef struct Taint { Sync *sy; bool grew; } Taint;
static void taint_address_of(IrExpr *e, void *ctx) {
  Taint *t = ctx;
  if (e->kind != IR_CALL || e->u.call.op != IRI_ADDRESS_OF || e->u.call.nargs != 1 || e->u.call.args[0]->kind != IR_LOAD)
    return;
  IrBuffer *b = e->u.call.args[0]->u.load.buf;
  if (per_thread_copy(b) && !vec_has(&t->sy->tregs, b)) {
    vec_push(t->sy->c->arena, &t->sy->tregs, b);
    t->grew = true;
  }
}

/* One sweep of the uniformity analysis over s, run under `divergent` control (only some
 * threads get here); marks the LET vars, loop vars and register buffers that may differ
 * between threads.  Returns true when it marked something new. */
static bool taint_sweep(Sync *sy, IrStmt *s, bool divergent) {
  if (!s) return false;
  bool grew = false;
  switch (s->kind) {
    case IR_S_SEQ:
      for (int i = 0; i < s->u.seq.n; i++) grew |= taint_sweep(sy, s->u.seq.items[i], divergent);
      return grew;
    case IR_S_LET:
      if ((divergent || thread_dependent(sy, s->u.let.value)) && !vec_has(&sy->tdep, s->u.let.var)) {
        vec_push(sy->c->arena, &sy->tdep, s->u.let.var);
        grew = true;
      }
      return grew;
    case IR_S_FOR: {
      bool d = divergent || thread_dependent(sy, s->u.loop.min) || thread_dependent(sy, s->u.loop.extent);
      if (d && s->u.loop.var && !vec_has(&sy->tdep, s->u.loop.var)) {
        vec_push(sy->c->arena, &sy->tdep, s->u.loop.var);
        grew = true;
      }
      return taint_sweep(sy, s->u.loop.body, d) || grew;
    }
    case IR_S_IF: {
      if (sy->kernel && pass_is_role_split(sy->kernel, s)) {
        /* the consumer branch is uniform across the consumer threads */
        grew |= taint_sweep(sy, s->u.if_.then_s, true);
        return taint_sweep(sy, s->u.if_.else_s, divergent) || grew;
      }
      if (s->u.if_.ws_hi) { /* a T.ws body is uniform across its warpgroups; its else is the next
                               range of a thread branch, or code of threads forming no one range */
        const IrStmt *e = s->u.if_.else_s;
        grew |= taint_sweep(sy, s->u.if_.then_s, divergent);
        return taint_sweep(sy, s->u.if_.else_s, divergent || (e && !(e->kind == IR_S_IF && e->u.if_.ws_hi))) || grew;
      }
      bool d = divergent || thread_dependent(sy, s->u.if_.cond);
      grew |= taint_sweep(sy, s->u.if_.then_s, d);
      return taint_sweep(sy, s->u.if_.else_s, d) || grew;
    }
    case IR_S_WHILE: return taint_sweep(sy, s->u.while_.body, divergent || thread_dependent(sy, s->u.while_.cond));
    case IR_S_KERNEL: {
      const IrKernel *outer = sy->kernel;
      sy->kernel = &s->u.kernel;
      grew = taint_sweep(sy, s->u.kernel.body, false);
      sy->kernel = outer;
      return grew;
    }
    case IR_S_EVAL: { /* a device call writing registers through T.address_of(buf[...]) */
      Taint t = {sy, false};
      IrVisitor v = {NULL, taint_address_of, &t};
      ir_visit_expr(s->u.eval.value, &v);
      return t.grew;
    }
    case IR_S_STORE: {
      IrBuffer *b = s->u.store.buf;
      if (!per_thread_copy(b)) return false;
      bool d = divergent || thread_dependent(sy, s->u.store.value);
      for (int i = 0; i < s->u.store.nidx && !d; i++) d = thread_dependent(sy, s->u.store.idx[i]);
      if (d && !vec_has(&sy->tregs, b)) {
        vec_push(sy->c->arena, &sy->tregs, b);
        return true;
      }
      return false;
    }
    default: return false;
  }
}

/* A barrier of the threads being synchronised: __syncthreads, or in a consumer branch a
 * named barrier over all its threads. */
static bool is_barrier(const Sync *sy, const IrStmt *s) {
  if (s->kind != IR_S_EVAL || s->u.eval.value->kind != IR_CALL) return false;
  const IrExpr *e = s->u.eval.value;
  if (e->u.call.op == IRI_SYNCTHREADS) return true;
  return sy->group && ir_is_device(e, IRD_NAMED_BARRIER_SYNC) && e->u.call.nattrs == 2 &&
         e->u.call.attrs[0] == sy->bar_id && e->u.call.attrs[1] == sy->group;
}

static IrStmt *barrier(const Sync *sy, SrcLoc loc) {
  TsCompiler *c = sy->c;
  if (sy->group) {
    int64_t attrs[2] = {sy->bar_id, sy->group};
    return ir_device_stmt(c, IRD_NAMED_BARRIER_SYNC, attrs, 2, NULL, 0, loc);
  }
  return ir_eval(c, ir_call(c, IRI_SYNCTHREADS, TS_DTYPE_VOID, NULL, 0, loc), loc);
}

/* wgmma reads its shared operands through the async proxy: in a function that issues
 * wgmma, every barrier this pass inserts is preceded by fence.proxy.async so that the
 * ordinary stores before it are visible to the tensor cores after it. */
static bool device_flag(const IrExpr *e, int flag) {
  return e->kind == IR_CALL && e->u.call.op == IRI_DEVICE && (ir_device_info[e->u.call.dop].flags & flag);
}
static void find_wgmma(IrExpr *e, void *ctx) {
  if (device_flag(e, IRD_WGMMA)) *(bool *)ctx = true;
}

static IrStmt *fenced_barrier(const Sync *sy, SrcLoc loc) {
  if (!sy->fence) return barrier(sy, loc);
  IrStmt *f = ir_device_stmt(sy->c, IRD_FENCE_PROXY_ASYNC, NULL, 0, NULL, 0, loc);
  return ir_seq(sy->c, (IrStmt *[]){f, barrier(sy, loc)}, 2, loc);
}

/* Explicit mbarriers (T.alloc_barrier) order the thread ranges of a T.ws kernel among
 * themselves: one range may wait for an arrival that another range makes later in program
 * order.  A __syncthreads between two such bodies would then deadlock (the waiting range never
 * reaches it), so where one would be needed there, the kernel is refused instead. */
static void find_mbar_wait(IrExpr *e, void *ctx) {
  if (e->kind == IR_CALL && (ir_is_device(e, IRD_MBAR_WAIT) || ir_is_device(e, IRD_MBAR_WAIT_CLUSTER)))
    *(bool *)ctx = true;
}
static bool waits_on_mbarrier(IrStmt *s) {
  bool found = false;
  IrVisitor v = {NULL, find_mbar_wait, &found};
  ir_visit(s, &v);
  return found;
}
static void find_ws_wait(IrStmt *s, void *ctx) {
  if (s->kind == IR_S_IF && s->u.if_.ws_hi && waits_on_mbarrier(s)) *(bool *)ctx = true;
}
static bool has_ws_wait(IrStmt *s) {
  bool found = false;
  IrVisitor v = {find_ws_wait, NULL, &found};
  ir_visit(s, &v);
  return found;
}
/* A barrier in front of the first such body is safe: every thread gets there after code that
 * waits for no other range (the copies a consumer range reads, made by the whole block). */
static bool block_barrier_ok(Sync *sy, SrcLoc loc) {
  if (sy->group || !sy->ws_wait) return true;
  ts_error(sy->c, loc,
           "shared memory written and read across T.ws bodies that wait on mbarriers is not supported yet: thread_sync "
           "cannot tell whether the mbarriers order it, and the __syncthreads it would place here could deadlock (a "
           "range waiting for another range's arrival never reaches it)");
  return false;
}

static void merge_into(TsCompiler *c, SyncState *dst, const SyncState *src) {
  for (int i = 0; i < src->racc.len; i++)
    if (!vec_has(&dst->racc, src->racc.items[i])) add_access(c, &dst->reads, &dst->racc, src->racc.items[i]);
  for (int i = 0; i < src->wacc.len; i++)
    if (!vec_has(&dst->wacc, src->wacc.items[i])) add_access(c, &dst->writes, &dst->wacc, src->wacc.items[i]);
  for (int i = 0; i < src->iacc.len; i++)
    if (!vec_has(&dst->iacc, src->iacc.items[i])) add_access(c, &dst->issues, &dst->iacc, src->iacc.items[i]);
  for (int i = 0; i < src->lacc.len; i++)
    if (!vec_has(&dst->lacc, src->lacc.items[i])) add_access(c, &dst->lands, &dst->lacc, src->lacc.items[i]);
}
static void clear_state(SyncState *st) {
  st->reads.len = st->writes.len = st->racc.len = st->wacc.len = 0;
  st->issues.len = st->iacc.len = st->lands.len = st->lacc.len = 0;
}

/* Provably different elements.  Two indices name different elements in every pair of threads
 * when they are different constants, or the same expression x combined with different
 * constants (x ^ c1 against x ^ c2, x + c1 against x + c2, x itself is c = 0: e.g. the two
 * halves s[r ^ 1, ...] and s[r, ...] of a double buffer) where x has one value in every thread
 * of the block at both accesses: no thread index, no value loaded from memory or returned by a
 * call (another thread, or a later load, may see another), and only variables bound outside the
 * code compared (strip_bound drops the indices of the others, e.g. a previous iteration's). */
typedef struct Stable { const Sync *sy; bool ok; int depth; } Stable;
static bool block_uniform_value(const Sync *sy, IrExpr *e, int depth);
static void stable_expr(IrExpr *e, void *ctx) {
  Stable *st = ctx;
  if (e->kind == IR_LOAD || (e->kind == IR_CALL && !ir_call_is_pure(e)))
    st->ok = false;
  if (e->kind != IR_VAR || !st->ok) return;
  IrVar *v = e->u.var;
  if (v->kind == IR_VAR_THREAD_IDX || v->kind == IR_VAR_PLACEHOLDER || vec_has(&st->sy->tdep, v) ||
      vec_has(&st->sy->redefined, v)) {
    st->ok = false;
    return;
  }
  if (v->kind != IR_VAR_LET) return;
  /* a LET's value must be load-free too: another block may change global memory between two
   * threads' loads, and a uniform load from shared memory is not looked into here */
  int i = 0;
  while (i < st->sy->let_vars.len && st->sy->let_vars.items[i] != v) i++;
  if (i == st->sy->let_vars.len || st->depth >= 8 ||
      !block_uniform_value(st->sy, st->sy->let_vals.items[i], st->depth + 1))
    st->ok = false;
}
static bool block_uniform_value(const Sync *sy, IrExpr *e, int depth) {
  Stable st = {sy, true, depth};
  IrVisitor v = {NULL, stable_expr, &st};
  ir_visit_expr(e, &v);
  return st.ok;
}
typedef enum { OFF_NONE, OFF_ADD, OFF_XOR } OffsetOp;
/* e as base `op` constant (base NULL: e is the constant). */
static IrExpr *split_offset(IrExpr *e, OffsetOp *op, int64_t *k) {
  int64_t v;
  *op = OFF_NONE;
  *k = 0;
  if (ir_is_const_int(e, &v)) {
    *k = v;
    return NULL;
  }
  bool add = e->kind == IR_ADD, sub = e->kind == IR_SUB, x = e->kind == IR_BITXOR;
  if (!add && !sub && !x) return e;
  for (int side = 1; side >= 0; side--) {
    if (sub && side == 0) break; /* c - x is not x + c */
    if (!ir_is_const_int(e->u.ops[side], &v) || v <= -(1LL << 30) || v >= (1LL << 30)) continue;
    *op = x ? OFF_XOR : OFF_ADD;
    *k = sub ? -v : v;
    return e->u.ops[1 - side];
  }
  return e;
}
static bool index_disjoint(const Sync *sy, IrExpr *a, IrExpr *b) {
  if (!a || !b) return false; /* unknown (strip_bound) */
  OffsetOp oa, ob;
  int64_t ka, kb;
  IrExpr *xa = split_offset(a, &oa, &ka), *xb = split_offset(b, &ob, &kb);
  if (ka == kb) return false;
  if (!xa || !xb) return !xa && !xb;
  if (oa != OFF_NONE && ob != OFF_NONE && oa != ob) return false;
  return ir_expr_equal(xa, xb) && block_uniform_value(sy, xa, 0);
}
static bool access_disjoint(const Sync *sy, const Access *a, const Access *b) {
  if (!a->idx || !b->idx || a->nidx != b->nidx) return false;
  for (int d = 0; d < a->nidx; d++) {
    if (d == a->nidx - 1 && (a->lanes > 1 || b->lanes > 1)) continue; /* a vector spans elements */
    if (index_disjoint(sy, a->idx[d], b->idx[d])) return true;
  }
  return false;
}
/* Every element both touch is touched by one thread in both (thread_owners.h). */
static OwnerSite owner_site(const Access *a, bool guarded) {
  return (OwnerSite){a->orig, a->nidx, a->lanes, &a->local, a->guards, a->nguards, guarded};
}
/* a's guards and the enclosing branches' (only the threads that met those run a). */
static void with_enclosing(const Sync *sy, const Access *a, OwnerSite *site) {
  if (!sy->nencl) return;
  OwnerGuard *g = ARENA_ARRAY(sy->c->arena, OwnerGuard, a->nguards + sy->nencl);
  for (int i = 0; i < a->nguards; i++) g[i] = a->guards[i];
  for (int i = 0; i < sy->nencl; i++) g[a->nguards + i] = sy->encl[i];
  site->guards = g;
  site->nguards = a->nguards + sy->nencl;
}
static bool same_thread(const Sync *sy, const Access *a, const Access *o) {
  if (!a->orig || a->space != o->space) return false;
  OwnerSite x = owner_site(a, true), y = owner_site(o, true); /* reads have no guards recorded */
  with_enclosing(sy, a, &x);
  with_enclosing(sy, o, &y);
  return owner_same_thread(&sy->owners, &x, &y);
}
/* Some access of buffer b in x may touch an element that an access of b in y touches through
 * another thread. */
static bool overlap(const Sync *sy, const IrBuffer *b, const PtrVec *x, const PtrVec *y) {
  for (int i = 0; i < x->len; i++) {
    const Access *a = x->items[i];
    if (a->buf != b) continue;
    for (int k = 0; k < y->len; k++) {
      const Access *o = y->items[k];
      if (o->buf == b && !access_disjoint(sy, a, o) && !same_thread(sy, a, o)) return true;
    }
  }
  return false;
}
static bool conflict(const Sync *sy, const PtrVec *mine, const PtrVec *macc, const PtrVec *theirs,
                     const PtrVec *tacc) {
  for (int i = 0; i < mine->len; i++)
    if (vec_has(theirs, mine->items[i]) && overlap(sy, mine->items[i], macc, tacc)) return true;
  return false;
}

/* WAW: a write of buffer b in `later` may be overtaken by one in `earlier` (thread_owners.h):
 * two atomic updates need no order, disjoint elements none. */
static bool writes_race(const Sync *sy, const IrBuffer *b, const PtrVec *later, const PtrVec *earlier) {
  for (int i = 0; i < earlier->len; i++) {
    const Access *a = earlier->items[i];
    for (int k = 0; a->buf == b && k < later->len; k++) {
      const Access *o = later->items[k];
      if (o->buf != b || (a->atomic && o->atomic) || access_disjoint(sy, a, o)) continue;
      if (a->space != o->space) return true;
      OwnerSite x = owner_site(a, a->guarded), y = owner_site(o, o->guarded);
      if (!owner_writes_ordered(&sy->owners, &x, &y)) return true;
    }
  }
  return false;
}
static bool write_after_write(const Sync *sy, const SyncState *st, const SyncState *me) {
  for (int i = 0; i < me->writes.len; i++)
    if (vec_has(&st->writes, me->writes.items[i]) && writes_race(sy, me->writes.items[i], &me->wacc, &st->wacc))
      return true;
  return false;
}

/* RAW: s reads what others wrote; WAR: s writes what others read; WAW: s writes what other
 * threads wrote (the earlier store could land last). */
static bool hazard(const Sync *sy, const SyncState *st, const SyncState *me) {
  return conflict(sy, &me->reads, &me->racc, &st->writes, &st->wacc) || write_after_write(sy, st, me) ||
         conflict(sy, &me->writes, &me->wacc, &st->reads, &st->racc) ||
         conflict(sy, &me->reads, &me->racc, &st->lands, &st->lacc) ||   /* copies landed at a wait */
         conflict(sy, &me->issues, &me->iacc, &st->reads, &st->racc);    /* a copy issued over read data */
}

static IrStmt *sync_stmt(Sync *sy, IrStmt *s, SyncState *st);
static IrStmt *sync_leaf(Sync *sy, IrStmt *s, SyncState *st);

typedef struct CountCtx { const Sync *sy; int n; } CountCtx;
static void count_barriers(IrStmt *s, void *ctx) {
  CountCtx *cc = ctx;
  if (is_barrier(cc->sy, s)) cc->n++;
}
/* Barriers this pass would place inside `body` (entered with state `st`). */
static int inner_barriers(Sync *sy, IrStmt *body, SyncState st) {
  CountCtx before = {sy, 0}, after = {sy, 0};
  IrVisitor v = {count_barriers, NULL, &before};
  ir_visit(body, &v);
  IrStmt *r = sync_stmt(sy, body, &st);
  v.ctx = &after;
  ir_visit(r, &v);
  return after.n - before.n;
}

/* Code that only some threads run (or that runs a different number of times in different
 * threads) can hold no __syncthreads.  When its own shared-memory accesses need one (one
 * thread reads what another wrote inside it), no correct barrier exists: refuse it rather
 * than emit a race. */
static void find_own_sync(IrExpr *e, void *ctx) {
  if ((e->kind == IR_CALL && e->u.call.op == IRI_SYNCWARP) || device_flag(e, IRD_SYNC)) *(bool *)ctx = true;
}

/* Thread-private shared buffers of a region: every access names the element at threadIdx.x in
 * one fixed dimension (`per_thread[tx, e] += 1`, the per-thread counters of TileScale's DeepEP
 * layout kernel), so two threads never touch the same element there and the region needs no
 * barrier for them.  Only a one-dimensional block (threadIdx.x is the only thread index) and
 * plain loads and stores qualify: an address taken (T.address_of, atomics) may reach past the
 * thread's slice, and an access through a view is not recognised. */
typedef struct Priv {
  const Sync *sy;
  PtrVec bufs, dims; /* candidate buffer, (its tx dimension + 1) */
  PtrVec bad;
} Priv;

static void priv_access(Priv *p, IrBuffer *b, IrExpr **idx, int nidx) {
  if (!is_shared(b) || vec_has(&p->bad, b)) return;
  int d = -1;
  for (int i = 0; i < nidx && d < 0; i++)
    if (idx[i]->kind == IR_VAR && idx[i]->u.var->kind == IR_VAR_THREAD_IDX) d = i;
  TsCompiler *c = p->sy->c;
  if (d < 0 || ir_buffer_root(b) != b) {
    add(c, &p->bad, (void *)ir_buffer_root(b));
    return;
  }
  for (int i = 0; i < p->bufs.len; i++)
    if (p->bufs.items[i] == b) {
      if ((intptr_t)p->dims.items[i] != d + 1) add(c, &p->bad, b);
      return;
    }
  vec_push(c->arena, &p->bufs, b);
  vec_push(c->arena, &p->dims, (void *)(intptr_t)(d + 1));
}
static void priv_expr(IrExpr *e, void *ctx) {
  Priv *p = ctx;
  if (e->kind == IR_LOAD) priv_access(p, e->u.load.buf, e->u.load.idx, e->u.load.nidx);
  if (e->kind != IR_CALL || e->u.call.op == IRI_SYNCTHREADS) return;
  bool takes_address = e->u.call.op == IRI_ADDRESS_OF || e->u.call.op == IRI_ATOMIC_ADD ||
                       e->u.call.op == IRI_ATOMIC_MAX || e->u.call.op == IRI_ATOMIC_MIN ||
                       e->u.call.op == IRI_ATOMIC_ADD_X || e->u.call.op == IRI_DEVICE;
  for (int i = 0; takes_address && i < e->u.call.nargs; i++) {
    IrExpr *a = e->u.call.args[i];
    if (a->kind == IR_CALL && a->u.call.op == IRI_ADDRESS_OF && a->u.call.nargs == 1) a = a->u.call.args[0];
    if (a->kind == IR_LOAD && is_shared(a->u.load.buf)) add(p->sy->c, &p->bad, (void *)ir_buffer_root(a->u.load.buf));
  }
}
static void priv_stmt(IrStmt *s, void *ctx) {
  Priv *p = ctx;
  if (s->kind == IR_S_STORE) priv_access(p, s->u.store.buf, s->u.store.idx, s->u.store.nidx);
}
static PtrVec private_buffers(Sync *sy, IrStmt *s) {
  PtrVec out = {0};
  const IrKernel *k = sy->kernel;
  if (!k || sy->group || k->threads[1] != 1 || k->threads[2] != 1 || k->producer_threads) return out;
  Priv p = {sy, {0}, {0}, {0}};
  IrVisitor v = {priv_stmt, priv_expr, &p};
  ir_visit(s, &v);
  for (int i = 0; i < p.bufs.len; i++)
    if (!vec_has(&p.bad, p.bufs.items[i])) vec_push(sy->c->arena, &out, p.bufs.items[i]);
  return out;
}

static void check_divergent(Sync *sy, IrStmt *s) {
  /* Inside a lowered T.Parallel nest (IrStmt.iter_owned), by T.Parallel's contract an
   * iteration's accesses do not conflict with the other iterations', which other threads run:
   * code there that only some threads run (an iteration's branch on its own data, the guard of
   * the replicas or of the padding) needs no barrier inside. */
  if (sy->in_nest) return;
  /* Code that synchronizes its own threads (warp_specialize's producer and consumer
   * branches: mbarriers and named barriers) is ordered by the pass that made it. */
  bool own = false;
  IrVisitor ov = {NULL, find_own_sync, &own};
  ir_visit(s, &ov);
  if (own) return;
  /* Buffers each thread only touches at its own slice in s are left out of the dry run
   * (also the previous iteration's accesses to them: the same thread made them). */
  PtrVec outer = sy->private_;
  sy->private_ = private_buffers(sy, s);
  IrStmt *parts[2] = {NULL, NULL};
  SyncState carried = {0};
  if (s->kind == IR_S_FOR) {
    parts[0] = s->u.loop.body;
    carried = summarize_iterations(sy, s); /* the previous iteration */
  } else if (s->kind == IR_S_WHILE) {
    parts[0] = s->u.while_.body;
    carried = summarize_iterations(sy, s);
  } else {
    parts[0] = s->u.if_.then_s;
    parts[1] = s->u.if_.else_s;
  }
  for (int i = 0; i < 2; i++) {
    /* a branch's threads met its condition (or, in the else, failed it) */
    bool guard = s->kind == IR_S_IF && sy->nencl < TS_ARRAY_LEN(sy->encl);
    if (guard) sy->encl[sy->nencl++] = (OwnerGuard){s->u.if_.cond, i == 1};
    sy->divergent++;
    int inner = parts[i] ? inner_barriers(sy, parts[i], carried) : 0;
    sy->divergent--;
    if (guard) sy->nencl--;
    if (!inner) continue;
    sy->private_ = outer;
    ts_error(sy->c, s->loc,
             "shared memory is written and read by different threads inside a %s whose %s differs between "
             "threads: no __syncthreads can be placed there (make the %s uniform across the block)",
             s->kind == IR_S_IF ? "branch" : "loop", s->kind == IR_S_IF ? "condition" : "trip count",
             s->kind == IR_S_IF ? "condition" : "bounds");
    return;
  }
  sy->private_ = outer;
}

/* A T.wait_* on a flag (signal, barrier counter) that only some threads make: TileScale's
 * examples wait in thread 0 and then read what the flag publishes with every thread. */
static void find_dist_wait(IrExpr *e, void *ctx) {
  if (ir_is_flag_wait(e)) *(bool *)ctx = true;
}
static bool waits_on_flag(IrStmt *s) {
  bool found = false;
  IrVisitor v = {NULL, find_dist_wait, &found};
  ir_visit(s, &v);
  return found;
}
static bool guarded_wait(const Sync *sy, IrStmt *s) {
  return s->kind == IR_S_IF && !s->u.if_.ws_hi && thread_dependent(sy, s->u.if_.cond) && waits_on_flag(s);
}

/* A statement list; after a wait only some threads make, a barrier makes the others wait too
 * (unless a barrier follows already, or the list ends the kernel: at the end of a loop body
 * the next iteration's statements follow it). */
static IrStmt *sync_list(Sync *sy, IrStmt *s, SyncState *st) {
  TsCompiler *c = sy->c;
  PtrVec out = {0};
  for (int i = 0; i < s->u.seq.n; i++) {
    IrStmt *item = s->u.seq.items[i];
    vec_push(c->arena, &out, sync_stmt(sy, item, st));
    bool blockwide_ok = (sy->group || !sy->ws_wait) && !sy->divergent && !sy->in_nest;
    bool next = i + 1 < s->u.seq.n;
    if ((next || sy->loops) && guarded_wait(sy, item) && !(next && is_barrier(sy, s->u.seq.items[i + 1])) &&
        blockwide_ok) {
      vec_push(c->arena, &out, fenced_barrier(sy, item->loc));
      clear_state(st);
    }
  }
  return ir_seq_vec(c, &out, s->loc);
}

/* The named barrier of T.ws range [lo, hi): one id per range of the kernel, from 2; 0 when
 * the 16 of a block are used up (reported). */
static int range_barrier(Sync *sy, const IrStmt *s) {
  for (int i = 0; i < sy->nranges; i++)
    if (sy->ranges[i][0] == s->u.if_.ws_lo && sy->ranges[i][1] == s->u.if_.ws_hi) return i + 2;
  if (sy->nranges == 14) {
    ts_error(sy->c, s->loc, "too many different T.ws thread ranges in one kernel (a block has 16 named barriers)");
    return 0;
  }
  sy->ranges[sy->nranges][0] = s->u.if_.ws_lo;
  sy->ranges[sy->nranges][1] = s->u.if_.ws_hi;
  return 2 + sy->nranges++;
}

/* The inside of a T.ws body and of the bodies chained as its else (a hand-written `if tx < 128:
 * ... elif ...` on thread ranges, whose branches run at once on different threads: no barrier
 * between them, the user's mbarriers order them): each synchronised with its range's named
 * barrier.  A last else of threads that form no one range is code only some threads run. */
static IrStmt *sync_ws_chain(Sync *sy, IrStmt *s) {
  TsCompiler *c = sy->c;
  if (!s) return NULL;
  if (s->kind != IR_S_IF || !s->u.if_.ws_hi) {
    IrStmt *branch = ir_if(c, s->kind == IR_S_IF ? s->u.if_.cond : ir_i32(c, 1), s, NULL, s->loc);
    check_divergent(sy, branch);
    return s;
  }
  int id = range_barrier(sy, s);
  if (!id) return s;
  /* In a loop, entered with the body's own accesses pending from its previous iteration (the
   * loop's variables moved on).  Outside one nothing of it ran before: what ran before the
   * statement is ordered from outside (sync_ws), and a phantom previous run would put barriers
   * where none is needed (one after DeepEP combine's thread-dependent receive loop, before
   * warps retire one by one, could stall them). */
  SyncState inner = {0};
  if (sy->loop) {
    inner = summarize(sy, s->u.if_.then_s);
    strip_bound(sy, &inner, sy->loop);
  }
  IrStmt *r = ir_stmt(c, IR_S_IF, s->loc);
  *r = *s;
  sy->group = s->u.if_.ws_hi - s->u.if_.ws_lo;
  sy->bar_id = id;
  int64_t lo = sy->owners.tx_lo, hi = sy->owners.tx_hi;
  sy->owners.tx_lo = s->u.if_.ws_lo;
  sy->owners.tx_hi = s->u.if_.ws_hi;
  r->u.if_.then_s = sync_stmt(sy, s->u.if_.then_s, &inner);
  sy->owners.tx_lo = lo;
  sy->owners.tx_hi = hi;
  sy->group = 0;
  r->u.if_.else_s = sync_ws_chain(sy, s->u.if_.else_s);
  return r;
}

/* A T.ws body or chain (see the top): named barriers inside, one access outside. */
static IrStmt *sync_ws(Sync *sy, IrStmt *s, SyncState *st) {
  TsCompiler *c = sy->c;
  IrStmt *r = sync_ws_chain(sy, s);
  SyncState me = summarize(sy, s);
  bool waits = waits_on_mbarrier(s);
  if (hazard(sy, st, &me)) {
    block_barrier_ok(sy, s->loc);
    clear_state(st);
    merge_into(c, st, &me);
    sy->ws_wait = waits;
    return ir_seq(c, (IrStmt *[]){fenced_barrier(sy, s->loc), r}, 2, s->loc);
  }
  merge_into(c, st, &me);
  sy->ws_wait |= waits;
  return r;
}

static IrStmt *sync_compound(Sync *sy, IrStmt *s, SyncState *st);

/* Returns s (possibly with a barrier in front or inside); updates st. */
static IrStmt *sync_stmt(Sync *sy, IrStmt *s, SyncState *st) {
  if (!s) return NULL;
  bool outer = sy->in_nest;
  if (s->iter_owned) sy->in_nest = true;
  IrStmt *r = sync_compound(sy, s, st);
  sy->in_nest = outer;
  return r;
}

static IrStmt *sync_compound(Sync *sy, IrStmt *s, SyncState *st) {
  TsCompiler *c = sy->c;
  if (is_barrier(sy, s)) {
    clear_state(st);
    if (!sy->group) sy->ws_wait = false;
    return s;
  }
  switch (s->kind) {
    case IR_S_SEQ: return sync_list(sy, s, st);
    case IR_S_LET:
      if (thread_dependent(sy, s->u.let.value)) add(c, &sy->tdep, s->u.let.var);
      break;
    case IR_S_FOR:
      if (!thread_dependent(sy, s->u.loop.min) && !thread_dependent(sy, s->u.loop.extent)) {
        SyncState body = summarize_iterations(sy, s), bounds = summarize_bounds(sy, s);
        if (!body.reads.len && !body.writes.len && !body.issues.len && !body.lands.len && !bounds.reads.len &&
            !waits_on_flag(s->u.loop.body))
          return s;
        /* A conflict with what precedes the loop is resolved once, in front of it. */
        IrStmt *pre = NULL;
        if (hazard(sy, st, &body) || hazard(sy, st, &bounds)) {
          block_barrier_ok(sy, s->loc);
                pre = fenced_barrier(sy, s->loc);
          clear_state(st);
          if (!sy->group) sy->ws_wait = false;
        }
        /* the previous iteration's T.ws bodies precede the body's first statements */
        if (!sy->group && has_ws_wait(s->u.loop.body)) sy->ws_wait = true;
        /* Entry state: what precedes the loop plus the previous iteration. */
        SyncState in = {0}, entry = {0};
        merge_into(c, &in, st);
        merge_into(c, &in, &body);
        merge_into(c, &entry, st);
        IrStmt *r = ir_stmt(c, IR_S_FOR, s->loc);
        *r = *s;
        IrStmt *outer_loop = sy->loop;
        sy->loops++;
        sy->loop = s;
        r->u.loop.body = sync_stmt(sy, s->u.loop.body, &in);
        sy->loop = outer_loop;
        sy->loops--;
        /* The loop may run zero times: keep what was pending before it too. */
        merge_into(c, &in, &entry);
        *st = in;
        strip_bound(sy, st, s);
        return pre ? ir_seq(c, (IrStmt *[]){pre, r}, 2, s->loc) : r;
      }
      break;
    case IR_S_IF:
      if (s->u.if_.ws_hi && !sy->group) return sync_ws(sy, s, st);
      if (!sy->group && sy->kernel && pass_is_role_split(sy->kernel, s)) {
        /* producer: ordered by its own mbarriers; consumers: named barriers among them */
        SyncState cons = {0};
        IrStmt *r = ir_stmt(c, IR_S_IF, s->loc);
        *r = *s;
        sy->group = sy->kernel->threads[0];
        sy->bar_id = 1;
        int64_t hi = sy->owners.tx_hi;
        sy->owners.tx_hi = sy->kernel->threads[0]; /* the consumers: threadIdx.x below it */
        r->u.if_.else_s = sync_stmt(sy, s->u.if_.else_s, &cons);
        sy->owners.tx_hi = hi;
        sy->group = 0;
        clear_state(st);
        return r;
      }
      if (!thread_dependent(sy, s->u.if_.cond)) {
        SyncState a = {0}, b = {0};
        merge_into(c, &a, st);
        merge_into(c, &b, st);
        IrStmt *r = ir_stmt(c, IR_S_IF, s->loc);
        *r = *s;
        r->u.if_.then_s = sync_stmt(sy, s->u.if_.then_s, &a);
        r->u.if_.else_s = sync_stmt(sy, s->u.if_.else_s, &b);
        merge_into(c, &a, &b);
        *st = a;
        strip_bound(sy, st, s);
        return r;
      }
      break;
    case IR_S_KERNEL: {
      SyncState k = {0};
      IrStmt *r = ir_stmt(c, IR_S_KERNEL, s->loc);
      *r = *s;
      const IrKernel *outer = sy->kernel;
      OwnerEnv outer_owners = sy->owners;
      sy->kernel = &s->u.kernel;
      for (int a = 0; a < 3; a++) sy->owners.threads[a] = s->u.kernel.threads[a];
      sy->owners.threads[0] += s->u.kernel.producer_threads;
      sy->owners.tx_lo = 0;
      sy->owners.tx_hi = sy->owners.threads[0];
      r->u.kernel.body = sync_stmt(sy, s->u.kernel.body, &k);
      sy->kernel = outer;
      sy->owners = outer_owners;
      return r;
    }
    default: break;
  }
  return sync_leaf(sy, s, st);
}

/* A leaf (or a compound only some threads run): one access set, with a barrier in front when
 * it conflicts with st. */
static IrStmt *sync_leaf(Sync *sy, IrStmt *s, SyncState *st) {
  TsCompiler *c = sy->c;
  if (s->kind == IR_S_FOR || s->kind == IR_S_IF || s->kind == IR_S_WHILE) check_divergent(sy, s);
  SyncState me = summarize(sy, s);
  if (hazard(sy, st, &me)) {
    block_barrier_ok(sy, s->loc);
    clear_state(st);
    merge_into(c, st, &me);
    if (!sy->group) sy->ws_wait = false;
    return ir_seq(c, (IrStmt *[]){fenced_barrier(sy, s->loc), s}, 2, s->loc);
  }
  merge_into(c, st, &me);
  return s;
}

/* Variables bound by more than one statement (Sync.redefined), and each LET's value. */
typedef struct Defs { TsCompiler *c; PtrVec seen, twice, lets, vals; bool returns; } Defs;
static void def_stmt(IrStmt *s, void *ctx) {
  Defs *d = ctx;
  if (s->kind == IR_S_RETURN) d->returns = true;
  IrVar *v = s->kind == IR_S_FOR ? s->u.loop.var : s->kind == IR_S_LET ? s->u.let.var : NULL;
  if (!v) return;
  if (vec_has(&d->seen, v)) add(d->c, &d->twice, v);
  else vec_push(d->c->arena, &d->seen, v);
  if (s->kind == IR_S_LET) {
    vec_push(d->c->arena, &d->lets, v);
    vec_push(d->c->arena, &d->vals, s->u.let.value);
  }
}

/* The T.ptx_wait_group statements and T.ptx_cp_async destinations of a function. */
static void find_user_groups(IrExpr *e, void *ctx) {
  Sync *sy = ctx;
  if (ir_is_device(e, IRD_CP_ASYNC_WAIT_GROUP)) sy->user_groups = true;
  const IrBuffer *dst = cp_async_dst(e, NULL);
  if (dst) add(sy->c, &sy->landed, (void *)ir_buffer_root(dst));
}

void pass_thread_sync(TsCompiler *c, IrFunc *f) {
  Sync sy = {c, {0}, {0}, false, NULL, 0, 0, {{0}}, 0, false, {0}, {0}, false, {0}, {0}, false, false, {0}, 0, 0, NULL, {0}, {{0}}, 0};
  IrVisitor gv = {NULL, find_user_groups, &sy};
  ir_visit(f->body, &gv);
  Defs defs = {c, {0}, {0}, {0}, {0}, false};
  IrVisitor dv = {def_stmt, NULL, &defs};
  ir_visit(f->body, &dv);
  sy.redefined = defs.twice;
  sy.let_vars = defs.lets;
  sy.let_vals = defs.vals;
  sy.returns = defs.returns;
  sy.owners = (OwnerEnv){c, {1, 1, 1}, 0, 1, {0}, &sy.let_vars, &sy.let_vals, &sy.redefined, &sy.tdep};
  owner_collect_loops(&sy.owners, f->body);
  if (c->target.sm >= 90 && c->target.arch_a) {
    IrVisitor v = {NULL, find_wgmma, &sy.fence};
    ir_visit(f->body, &v);
  }
  /* Taints only grow and are bounded by the vars and buffers of f: a fixed point. */
  while (taint_sweep(&sy, f->body, false)) {
  }
  SyncState st = {0};
  f->body = sync_stmt(&sy, f->body, &st);
}
