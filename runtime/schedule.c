/* schedule.c — learning-rate schedules, as functions of the optimizer step.
 *
 * The driver's --lr-schedule and --warmup (docs/driver.md), and any C
 * program's own loop: nnc_lr_at(s, t) is the rate of optimizer step t
 * (0-based, the steps taken before it), so a resumed run that knows its
 * step gets the same rate as one that never stopped.  The shapes are
 * PyTorch's (torch.optim.lr_scheduler), which tests/driver checks step by
 * step:
 *
 *   warmup W > 0   steps t < W: base (t + 1) / W, LinearLR(start_factor
 *                  1 / W, total_iters W - 1); the schedule below then
 *                  starts at u = t - W (SequentialLR, milestone W)
 *   constant       base
 *   step           base gamma^floor(u / step_size)          (StepLR)
 *   cosine         base (1 + cos(pi min(u, T) / T)) / 2     (CosineAnnealingLR,
 *                  T_max T = total - W, eta_min 0)
 *   linear         base (1 - min(u, T) / T)                 (LinearLR from
 *                  factor 1 to 0 over T steps)
 *
 * Computed in double, as PyTorch's schedulers are in Python floats; the
 * optimizer takes the value as a float.
 */
#include <math.h>
#include <string.h>

#include "nnc_runtime.h"

double nnc_lr_at(const nnc_lr_schedule *s, long t)
{
    const long w = s->warmup > 0 ? s->warmup : 0;
    if (t < 0)
        t = 0;
    if (t < w)
        return s->base * (double)(t + 1) / (double)w;
    const long u = t - w, T = s->total - w > 0 ? s->total - w : 1;
    const double f = (double)(u < T ? u : T) / (double)T;
    switch (s->kind) {
    case NNC_LR_STEP: return s->base * pow(s->gamma, (double)(u / (s->step_size > 0 ? s->step_size : 1)));
    case NNC_LR_COSINE: return s->base * (1 + cos(3.14159265358979323846 * f)) / 2;
    case NNC_LR_LINEAR: return s->base * (1 - f);
    case NNC_LR_CONSTANT: break;
    }
    return s->base;
}

const char *nnc_lr_kind_name(nnc_lr_kind k)
{
    static const char *const names[] = {"constant", "step", "cosine", "linear"};
    return k >= NNC_LR_CONSTANT && k <= NNC_LR_LINEAR ? names[k] : "?";
}

int nnc_lr_kind_parse(const char *name, nnc_lr_kind *k)
{
    for (int i = NNC_LR_CONSTANT; i <= NNC_LR_LINEAR; i++)
        if (name && !strcmp(name, nnc_lr_kind_name((nnc_lr_kind)i))) {
            *k = (nnc_lr_kind)i;
            return 0;
        }
    return -1;
}
