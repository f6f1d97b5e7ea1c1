/* grad.h — reverse-mode autodiff over the IR (grad_*). */
#ifndef NNC_GRAD_H
#define NNC_GRAD_H

#include "ir.h"

/* Appends the backward pass of g's loss to g and fills g->param_grad. */
void grad_build(const Model *m, Graph *g);

#endif
