/* init.c — parameter initializers with PyTorch's conventions.
 *
 * The language's initializers (glorot_uniform, he_normal, …) are defined by
 * reference to torch.nn.init, so that a model trained here starts from the
 * same distribution as its PyTorch twin.  Fan-in and fan-out follow
 * torch.nn.init._calculate_fan_in_and_fan_out, extended to 0-D and 1-D
 * tensors (where PyTorch raises) by the language spec's rule: such a tensor
 * uses its element count for both.  The values themselves come from
 * nnc_rng, so they are reproducible for a seed but not equal to PyTorch's.
 */
#include <math.h>

#include "nnc_runtime.h"

void nnc_fans(int ndim, const int *shape, double *fan_in, double *fan_out)
{
    if (ndim < 2) {
        double n = ndim == 1 ? (double)shape[0] : 1.0;
        *fan_in = n;
        *fan_out = n;
        return;
    }
    double rf = 1.0;
    for (int i = 2; i < ndim; i++)
        rf *= (double)shape[i];
    *fan_in = (double)shape[1] * rf;
    *fan_out = (double)shape[0] * rf;
}

static size_t numel(int ndim, const int *shape)
{
    size_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= (size_t)(shape[i] > 0 ? shape[i] : 0);
    return n;
}

/* Which distribution a kind reduces to, and its parameters: everything is
 * either a constant, a uniform [lo, hi) or a normal (mean, std). */
typedef enum { DIST_CONST, DIST_UNIFORM, DIST_NORMAL } dist_kind;

static dist_kind resolve(int ndim, const int *shape, nnc_init_kind kind, double a, double b, double *p, double *q)
{
    double fin, fout;
    nnc_fans(ndim, shape, &fin, &fout);
    /* A zero fan means an empty tensor: nothing will be drawn, but avoid a
     * division by zero all the same. */
    if (fin <= 0)
        fin = 1;
    if (fout <= 0)
        fout = 1;
    switch (kind) {
    case NNC_INIT_ZEROS: *p = 0; return DIST_CONST;
    case NNC_INIT_ONES: *p = 1; return DIST_CONST;
    case NNC_INIT_CONSTANT: *p = a; return DIST_CONST;
    case NNC_INIT_NORMAL:
        *p = b; /* mean */
        *q = a; /* std */
        return DIST_NORMAL;
    case NNC_INIT_UNIFORM:
        *p = a;
        *q = b;
        return DIST_UNIFORM;
    case NNC_INIT_GLOROT_UNIFORM: {
        double bound = sqrt(6.0 / (fin + fout));
        *p = -bound;
        *q = bound;
        return DIST_UNIFORM;
    }
    case NNC_INIT_GLOROT_NORMAL:
        *p = 0;
        *q = sqrt(2.0 / (fin + fout));
        return DIST_NORMAL;
    case NNC_INIT_HE_UNIFORM: {
        double bound = sqrt(6.0 / fin);
        *p = -bound;
        *q = bound;
        return DIST_UNIFORM;
    }
    case NNC_INIT_HE_NORMAL:
        *p = 0;
        *q = sqrt(2.0 / fin);
        return DIST_NORMAL;
    }
    *p = 0;
    return DIST_CONST;
}

static double draw(dist_kind d, double p, double q, nnc_rng *r)
{
    switch (d) {
    case DIST_UNIFORM: return p + (q - p) * nnc_rng_uniform(r);
    case DIST_NORMAL: return p + q * nnc_rng_normal(r);
    case DIST_CONST: break;
    }
    return p;
}

void nnc_init_f32(float *x, int ndim, const int *shape, nnc_init_kind kind, double a, double b, nnc_rng *r)
{
    double p = 0, q = 0;
    dist_kind d = resolve(ndim, shape, kind, a, b, &p, &q);
    size_t n = numel(ndim, shape);
    for (size_t i = 0; i < n; i++)
        x[i] = (float)draw(d, p, q, r);
}

void nnc_init_f64(double *x, int ndim, const int *shape, nnc_init_kind kind, double a, double b, nnc_rng *r)
{
    double p = 0, q = 0;
    dist_kind d = resolve(ndim, shape, kind, a, b, &p, &q);
    size_t n = numel(ndim, shape);
    for (size_t i = 0; i < n; i++)
        x[i] = draw(d, p, q, r);
}
