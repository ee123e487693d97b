/* thread_owners.h — which thread touches which element of a shared buffer, for thread_sync's
 * write-after-write test (thread_owners.c): a second write needs no barrier after a first when
 * every element both write is written by one and the same thread in both (that thread's own
 * program order orders its two stores). */
#ifndef TS_PASS_THREAD_OWNERS_H
#define TS_PASS_THREAD_OWNERS_H

#include "../ir/ir.h"

/* A loop whose bounds are constants: its variable takes each value of [lo, hi). */
typedef struct OwnerLoop {
  IrVar *var;
  int64_t lo, hi;
} OwnerLoop;

/* What the enumeration may assume about an index's variables. */
typedef struct OwnerEnv {
  TsCompiler *c;
  int64_t threads[3];        /* the block of the kernel the accesses are in */
  int64_t tx_lo, tx_hi;      /* the threadIdx.x values running them (a warpgroup range, the consumers) */
  PtrVec loops;              /* OwnerLoop* (loops bound once, constant bounds) */
  const PtrVec *let_vars;    /* IrVar*: each LET bound once ... */
  const PtrVec *let_vals;    /* ... and its value */
  const PtrVec *redefined;   /* IrVar* bound by more than one statement */
  const PtrVec *tdep;        /* IrVar* whose value may differ between threads */
} OwnerEnv;

/* A condition a store is under inside its statement: cond, or with neg its negation (else). */
typedef struct OwnerGuard {
  IrExpr *cond;
  bool neg;
} OwnerGuard;

/* One write: the buffer's indices as written (NULL: any element), the vector width along the
 * last one; local: the variables the indices name that its statement bound itself, or that
 * were rebound since (thread_sync's strip_bound): enumerated over their constant bounds when
 * loops, through their values when LETs, beyond the analysis otherwise; every other variable
 * holds one value at both writes.  guards: the conditions it is under inside its statement
 * (those of enumerated values only are evaluated: a thread they exclude writes nothing);
 * guarded: also under some condition not known (a `while`, a loop of thread-dependent trip
 * count, a break, or a guard naming other values). */
typedef struct OwnerSite {
  IrExpr **idx;
  int nidx, lanes;
  const PtrVec *local;
  const OwnerGuard *guards;
  int nguards;
  bool guarded;
} OwnerSite;

/* The STOREs of a statement with the guards they are under (owner_collect_stores). */
typedef struct OwnerStore {
  const IrStmt *store;
  const OwnerGuard *guards;
  int nguards;
  bool unknown; /* under a condition the guards do not state */
} OwnerStore;

/* Appends an OwnerStore* to out for every STORE inside s; every one unknown when all_unknown. */
void owner_collect_stores(const OwnerEnv *env, IrStmt *s, bool all_unknown, PtrVec *out);

/* The constant-bound loops of s (OwnerEnv.loops). */
void owner_collect_loops(OwnerEnv *env, IrStmt *s);

/* True when write b, made after write a of the same buffer by the same threads' program,
 * cannot leave a's value in any element: every element both write is written by one thread in
 * both, or, b not guarded, by every thread of a in b too.
 * False when that cannot be shown. */
bool owner_writes_ordered(const OwnerEnv *env, const OwnerSite *a, const OwnerSite *b);

/* True when every element both accesses touch (reads or writes, in either order) is touched by
 * one and the same thread in both: that thread's program order orders them, no barrier is
 * needed between them (a read of one's own earlier store, a store over one's own earlier
 * read).  Guards only shrink the sets, so any site may be guarded.  False when not shown. */
bool owner_same_thread(const OwnerEnv *env, const OwnerSite *a, const OwnerSite *b);

#endif
