/* kernel.h — kernel selection (kernel_*): which implementation computes
 * each convolution, and how much work memory it needs. */
#ifndef NNC_KERNEL_H
#define NNC_KERNEL_H

#include "ir.h"

/* Sets kernel and work of every convolution of g (kernel.c says how);
 * f64: the graph is emitted in double precision. */
void kernel_select(Graph *g, int f64);
const char *kernel_name(KernelKind k);

#endif
