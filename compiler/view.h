/* view.h — human views of an elaborated model (view_*): the --summary
 * table and the --emit=dot Graphviz picture. */
#ifndef NNC_VIEW_H
#define NNC_VIEW_H

#include "ir.h"

/* Keras-like: field path, layer, output shape, params, FLOPs per example. */
void view_summary(const Model *m, FILE *out);
/* Layers as boxes, tensors with their shapes on the edges. */
void view_dot(const Model *m, FILE *out);

#endif
