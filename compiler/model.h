/* model.h — model assembly (model_*): elaborates the models of a loaded
 * program, each into a Model with one IR graph per entry point.
 */
#ifndef NNC_MODEL_H
#define NNC_MODEL_H

#include "ir.h"
#include "load.h"

/* Elaborates every model declared in the main file (or only --model's)
 * into *models; returns how many. */
int model_elaborate(Program *p, const ElabOptions *opt, Model ***models);

#endif
