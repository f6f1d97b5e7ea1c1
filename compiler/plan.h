/* plan.h — peepholes, fusion and the static memory plan (plan_*). */
#ifndef NNC_PLAN_H
#define NNC_PLAN_H

#include "ir.h"

/* Rewrites g in place (peepholes, folds) and marks fused and dead nodes. */
void plan_rewrite(const Model *m, Graph *g);
/* Groups the matrix-by-matrix ops of attention (its products and
 * softmaxes) that follow each other into one loop over the matrices
 * (IrNode.group, .local); none where `allow` is 0.  After kernel_select. */
void plan_groups(const Model *m, Graph *g, int allow);
/* Assigns every stored node, and every kernel's work, a place in the arena. */
void plan_memory(const Model *m, Graph *g);
/* The node whose storage t uses (through reshape views). */
int plan_storage_root(const Graph *g, int t);
void plan_dump(const Model *m, const Graph *g, FILE *out);

#endif
