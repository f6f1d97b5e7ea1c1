/* Benchmark glue for mlp_big.nn (see src/harness.h). */
#include "mlp_big.h"
#include "harness.h"

/* Forward GEMMs per example: 784x1024 + 1024x1024 + 1024x10 multiply-adds. */
BENCH_CLASSIFIER(mlp_big, MLP_BIG, [784], 784, MLP_BIG_CLASSES, 128,
                 2.0 * (784.0 * MLP_BIG_HIDDEN + (double)MLP_BIG_HIDDEN * MLP_BIG_HIDDEN +
                        (double)MLP_BIG_HIDDEN * MLP_BIG_CLASSES));
