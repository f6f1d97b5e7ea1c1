/* kernel.h — kernel selection (kernel_*): which implementation computes
 * each convolution, and how much work memory it needs. */
#ifndef NNC_KERNEL_H
#define NNC_KERNEL_H

#include "ir.h"
#include "nnc_conv.h"

/* Sets kernel and work of every convolution of g (kernel.c says how);
 * f64: the graph is emitted in double precision. */
void kernel_select(Graph *g, int f64);
const char *kernel_name(KernelKind k);
/* The geometry of convolution node n of g as the runtime's general kernel
 * takes it (nnc_conv.h). */
nnc_conv2d_geom kernel_conv_geom(const Graph *g, const IrNode *n);

#endif
