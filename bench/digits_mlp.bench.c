/* Benchmark glue for digits_mlp.nn (see src/harness.h). */
#include "digits_mlp.h"
#include "harness.h"

/* Forward GEMMs per example: 64x128 + 128x10 multiply-adds. */
BENCH_CLASSIFIER(digits_mlp, DIGITS_MLP, [64], 64, DIGITS_MLP_CLASSES, 64,
                 2.0 * (64.0 * DIGITS_MLP_HIDDEN + DIGITS_MLP_HIDDEN * (double)DIGITS_MLP_CLASSES));
