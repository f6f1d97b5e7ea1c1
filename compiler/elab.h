/* elab.h — elaboration (elab_*): hparams, instantiation, shape inference,
 * and lowering of a model to one IR graph per entry point.
 */
#ifndef NNC_ELAB_H
#define NNC_ELAB_H

#include "ir.h"
#include "load.h"

/* Elaborates every model declared in the main file into *models. */
int elab_models(Program *p, const ElabOptions *opt, Model ***models);

#endif
