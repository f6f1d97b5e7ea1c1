/* permute.c — a block of a float matrix transposed: y[c][r] = x[r][c],
 * the copy behind transpose() and permute() where they move the last
 * axis (emit_ops.c emit_permute: a batch of [R, C] matrices to [C, R],
 * each in blocks of rows on the threads).  The generated loop read one
 * float a column apart for each it stored, 3-3.5x the time of
 * nnc_transpose.h's blocks of 16x16 (AVX-512) or 8x8 (AVX2) in registers:
 * [32, 64, 128] -> [32, 128, 64] 64 -> 20 us, [64, 80, 96] -> [64, 96, 80]
 * 131 -> 38 us (1 thread, Zen 5, in cache); an MLP-Mixer's token mixing
 * moves its activations and their gradients so 16 times a step.  A copy:
 * the same bits in every build. */
#include <stdint.h>

#include "nnc_isa.h"
#include "nnc_transpose.h"

void NNC_ISA_FN(nnc_transpose_f32)(int64_t R, int64_t C, const float *x, int64_t ldx, float *y, int64_t ldy)
{
    transpose(y, ldy, x, ldx, R, C); /* (R or C 0: nothing read or written) */
}
