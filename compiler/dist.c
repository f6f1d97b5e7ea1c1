/* dist.c — data-parallel completion across processes (dist_*).
 *
 * Under `mpirun -np P` each process holds a slice of the global batch
 * (runtime/dist.c).  The batch dim of every node says what a process
 * holds of it:
 *
 *   SHARD  a batched node: this process's examples only;
 *   REPL   an unbatched node, whole and the same on every process (params,
 *          state, constants, anything made from them);
 *   PART   an unbatched node that is one process's share of a sum over the
 *          batch: the true value is the sum over processes.
 *
 * Forward, every reduction over the batch (a loss's mean, BatchNorm's
 * statistics, a mean, sum or max over the batch axis, a product that
 * contracts the batch) is marked `global`: its emitter completes it across
 * the processes (emit_*.c), dividing by the global batch where it divides,
 * so its result is REPL and everything after it is what one process
 * computes on the joined batch.
 *
 * Backward, the adjoints of REPL nodes come out PART (each process sums
 * over its own examples), and stay so through linear ops.  A PART value
 * is completed (an `allreduce` node after it) where a batched node reads
 * it, where a non-linear op reads it, and where it meets a whole value in
 * a sum (there the whole value is kept on rank 0 only, `rank0`, so the
 * sum over processes counts it once).  A param's gradient that ends PART
 * is summed across the processes at the end of the backward pass
 * (Graph.dist_grads, emit_fn.c); one that ends REPL is whole already.
 *
 * One process is the special case P = 1: the sums are the value itself,
 * and the generated code skips every cross-process step (docs/
 * generated-c.md, "Processes").  Ops whose batched result mixes examples
 * (a softmax over the batch axis, a slice of it) cannot be split by
 * examples: the model then refuses to start on several processes
 * (Model.dist_refuse), naming the op.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "dist.h"

enum { SHARD = 1, REPL, PART };

/* "file:line:col: what", for the message a model gives when it refuses
 * to start on several processes */
static const char *where(Loc loc, const char *what, IrOp op)
{
    int line = 0, col = 0;
    if (loc.file)
        diag_linecol(loc, &line, &col);
    const char *path = loc.file ? loc.file->path : "?";
    size_t cap = strlen(path) + strlen(what) + 64;
    char *s = malloc(cap);
    if (!s)
        abort();
    snprintf(s, cap, "%s:%d:%d: %s %s", path, line, col, ir_op_name(op), what);
    return s;
}

/* The reductions over the batch that the emitters complete (forward). */
static int completes(IrOp op)
{
    switch (op) {
    case IR_SUM:
    case IR_MEAN:
    case IR_MAX:
    case IR_MATMUL:
    case IR_BN_STATS:
    case IR_CROSS_ENTROPY:
    case IR_MSE:
    case IR_BCE_LOGITS:
    case IR_ACCURACY: return 1;
    default: return 0;
    }
}

/* Whether node n, batched, computes each example's rows from that
 * example's rows alone (so any split of the batch gives the same rows):
 * every op but those that work along an axis that is the batch dim. */
static int per_example(const Graph *g, const IrNode *n)
{
    switch (n->op) {
    case IR_SOFTMAX:
    case IR_LOG_SOFTMAX:
    case IR_ARGMAX:
    case IR_ARGMIN:
    case IR_SOFTMAX_BWD:
    case IR_LOG_SOFTMAX_BWD: return n->axis != g->nodes[n->in[0]].shape.bd;
    case IR_CONCAT:
    case IR_SLICE:
    case IR_PAD:
    case IR_PAD_REFLECT:
    case IR_PAD_REFLECT_BWD:
    case IR_CUMSUM: return n->axis != n->shape.bd;
    case IR_GATHER_ELEMENTS:
    case IR_GATHER_ELEMENTS_BWD:
        return n->axis != g->nodes[n->in[1]].shape.bd &&
            n->axis != (n->op == IR_GATHER_ELEMENTS ? g->nodes[n->in[0]].shape : n->shape).bd;
    default: return 1;
    }
}

/* Ops through which a PART operand stays PART (they are linear in it):
 * `k` is the operand, `nparts` how many operands are PART. */
static int linear_in(const IrNode *n, int k, int nparts)
{
    switch (n->op) {
    case IR_NEG:
    case IR_EXPAND:
    case IR_RESHAPE:
    case IR_PERMUTE:
    case IR_SLICE:
    case IR_PAD:
    case IR_SUM:
    case IR_MEAN:
    case IR_ADD:
    case IR_SUB:
    case IR_CONCAT: return 1;
    case IR_MUL:
    case IR_MATMUL: return nparts == 1;
    case IR_DIV: return k == 0 && nparts == 1;
    default: return 0;
    }
}

/* Sums (ADD, SUB, CONCAT): a whole operand next to a PART one must be
 * counted once over the processes. */
static int is_sum(IrOp op) { return op == IR_ADD || op == IR_SUB || op == IR_CONCAT; }

/* How a reader takes one operand (how[i][s] in dist_plan): as it is, through a rank0
 * node made before the reader, or through the allreduce made after the
 * operand. */
enum { AS_IS, VIA_RANK0, VIA_SUM };

static IrNode made(IrOp op, const IrNode *of, int in)
{
    IrNode n = ir_node(op, of->dt, of->shape, 1, &in);
    n.loc = of->loc;
    n.what = of->what;
    n.name = op == IR_ALLREDUCE ? "allreduce" : "rank0";
    n.backward = 1;
    return n;
}

/* Rebuilds g with the new nodes: an allreduce right after each node with
 * sum_after set, a rank0 right before each reader slot that asks for one.
 * Node ids change; everything in Graph that holds one is remapped. */
static void rebuild(const Model *m, Graph *g, const char *sum_after, char **how)
{
    int old = g->n;
    int *map = malloc(sizeof(int) * (size_t)(old + 1)), *red = malloc(sizeof(int) * (size_t)(old + 1));
    IrNode *nodes = malloc(sizeof(IrNode) * (size_t)(3 * old + 1));
    if (!map || !red || !nodes)
        abort();
    int k = 0;
    for (int i = 0; i < old; i++) {
        IrNode n = g->nodes[i];
        for (int s = 0; s < n.nin; s++) {
            int src = n.in[s], h = how[i] ? how[i][s] : AS_IS;
            int from = h == VIA_SUM ? red[src] : map[src];
            if (h == VIA_RANK0) {
                nodes[k] = made(IR_RANK0, &g->nodes[src], from);
                from = k++;
            }
            n.in[s] = from;
        }
        map[i] = red[i] = k;
        nodes[k++] = n;
        if (sum_after[i]) {
            nodes[k] = made(IR_ALLREDUCE, &g->nodes[i], map[i]);
            red[i] = k++;
        }
    }
    /* the loss, outputs, metrics, summaries and updates are forward
     * values, which are never PART */
    if (g->output >= 0)
        g->output = map[g->output];
    if (g->loss >= 0)
        g->loss = map[g->loss];
    for (int i = 0; i < g->nmetrics; i++)
        g->metrics[i] = map[g->metrics[i]];
    for (int i = 0; i < g->nupdates; i++)
        g->update_value[i] = map[g->update_value[i]];
    for (int i = 0; i < g->nsummaries; i++)
        g->summary_value[i] = map[g->summary_value[i]];
    /* a gradient that is completed anyway is taken whole */
    for (int p = 0; g->param_grad && p < m->nparams; p++)
        if (g->param_grad[p] >= 0)
            g->param_grad[p] = red[g->param_grad[p]];
    g->fwd_end = g->fwd_end < old ? map[g->fwd_end] : k;
    if (g->core_end >= 0)
        g->core_end = g->core_end < old ? map[g->core_end] : k;
    free(g->nodes);
    g->nodes = nodes;
    g->n = g->cap = k;
    free(map);
    free(red);
}

void dist_plan(Model *m, Graph *g)
{
    int n0 = g->n;
    char *kind = calloc((size_t)n0 + 1, 1), *sum_after = calloc((size_t)n0 + 1, 1);
    char **how = calloc((size_t)n0 + 1, sizeof(char *));
    if (!kind || !sum_after || !how)
        abort();
    int extra = 0;
    for (int i = 0; i < n0; i++) {
        IrNode *n = &g->nodes[i];
        /* what this node reads, operand by operand: a PART operand that
         * is completed already is read whole */
        char c[16], *cls = n->nin <= 16 ? c : malloc((size_t)n->nin);
        if (!cls)
            abort();
        int shard = 0, parts = 0, whole = 0;
        for (int s = 0; s < n->nin; s++) {
            int src = n->in[s];
            cls[s] = kind[src] == PART && sum_after[src] ? REPL : kind[src];
            shard += cls[s] == SHARD;
            parts += cls[s] == PART;
            whole += cls[s] == REPL;
        }
        /* need: 1 completes every PART operand first, 2 masks the whole
         * operands of a sum that has PART ones */
        int need = 0;
        if (n->shape.bd >= 0) {
            kind[i] = SHARD;
            if (!per_example(g, n) && !m->dist_refuse)
                m->dist_refuse = where(n->loc, "along the batch axis", n->op);
            need = parts ? 1 : 0; /* a batched reader takes whole values */
        } else if (!n->backward) {
            /* forward: a reduction over the batch is completed where it is
             * made, by its emitter */
            kind[i] = REPL;
            if (shard && completes(n->op))
                n->global = 1;
            else if (shard && !m->dist_refuse)
                m->dist_refuse = where(n->loc, "over the batch", n->op);
        } else if (shard) { /* a contraction over this process's examples */
            kind[i] = PART;
            need = parts ? 1 : 0;
        } else if (!parts) {
            kind[i] = REPL;
        } else {
            int lin = 1;
            for (int s = 0; s < n->nin; s++)
                if (cls[s] == PART && !linear_in(n, s, parts))
                    lin = 0;
            kind[i] = lin ? PART : REPL;
            need = !lin ? 1 : whole && is_sum(n->op) ? 2 : 0;
        }
        if (need) {
            how[i] = calloc((size_t)n->nin, 1);
            if (!how[i])
                abort();
            for (int s = 0; s < n->nin; s++) {
                int src = n->in[s];
                if (need == 1 && cls[s] == PART) {
                    sum_after[src] = 1;
                    how[i][s] = VIA_SUM;
                } else if (need == 1 && kind[src] == PART) {
                    how[i][s] = VIA_SUM; /* completed for an earlier reader */
                } else if (need == 2 && cls[s] == REPL) {
                    /* a completed PART operand is read as its share */
                    how[i][s] = kind[src] == PART ? AS_IS : VIA_RANK0;
                }
            }
            extra = 1;
        } else if (parts + whole + shard) {
            /* whole reads of completed operands */
            for (int s = 0; s < n->nin; s++)
                if (kind[n->in[s]] == PART && sum_after[n->in[s]]) {
                    if (!how[i] && !(how[i] = calloc((size_t)n->nin, 1)))
                        abort();
                    how[i][s] = VIA_SUM;
                }
        }
        if (cls != c)
            free(cls);
    }
    /* a param's gradient that ends PART is summed at the end of the
     * backward pass; one completed anyway is taken from its allreduce */
    if (g->param_grad) {
        g->dist_grads = calloc((size_t)m->nparams + 1, 1);
        if (!g->dist_grads)
            abort();
        for (int p = 0; p < m->nparams; p++) {
            int t = g->param_grad[p];
            g->dist_grads[p] = t >= 0 && kind[t] == PART && !sum_after[t];
        }
    }
    if (extra)
        rebuild(m, g, sum_after, how);
    for (int i = 0; i < n0; i++)
        free(how[i]);
    free(how);
    free(kind);
    free(sum_after);
}
