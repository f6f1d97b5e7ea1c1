/* dist.h — data-parallel completion across processes (dist_*, dist.c). */
#ifndef NNC_DIST_H
#define NNC_DIST_H

#include "ir.h"

/* Marks g's reductions over the batch `global`, inserts the allreduce and
 * rank0 nodes its backward pass needs, and fills g->dist_grads; may set
 * m->dist_refuse.  After autodiff, before plan_rewrite. */
void dist_plan(Model *m, Graph *g);

#endif
