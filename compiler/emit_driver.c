/* emit_driver.c — the command-line driver, <prefix>_main.c (emit_*):
 * wrappers from the runtime driver's generic calls to the model's typed
 * API, the descriptions of the inputs, labels and output, and a main()
 * that hands them all to nnc_driver_main.  Float only.
 */
#include <string.h>

#include "emitter.h"

/* One nnc_io_desc initializer: a batched array's first dim is written 0
 * (the driver ignores it); a scalar's shape is {0}, as C11 has no empty
 * initializer. */
static void io_desc(Emitter *e, const char *indent, const IoDecl *io, const char *end)
{
    P(e, "%s{\"%s\", %s, %d, {", indent, io->name, io->dt == DT_I32 ? "NNC_I32" : "NNC_F32", io->shape.nd);
    for (int k = 0; k < io->shape.nd; k++)
        P(e, "%s%lld", k ? ", " : "", k == 0 && io->shape.bd == 0 ? 0LL : (long long)io->shape.d[k]);
    P(e, "%s}, %d, %d, %d}%s\n", io->shape.nd ? "" : "0", io->shape.bd == 0, io->limit, io->ignore_ok, end);
}

static double flops(Emitter *e)
{
    const Graph *g = e->m->infer;
    double f = 0;
    for (int i = 0; i < g->core_end; i++)
        if (g->nodes[i].fused >= 0)
            f += ir_node_flops(g, i);
    return f;
}

void emit_driver(Emitter *e, const char *hname, const char *fname)
{
    const char *p = e->m->prefix;
    emit_banner(e, fname);
    P(e, "#include \"%s\"\n\n", hname);
    P(e, "/* Thin wrappers from the driver's generic calls to the typed API. */\n");
    /* C11 needs the casts: a pointer to an array of const is not const */
    const char *args = "";
    for (int i = 0; i < e->m->ninputs; i++)
        args = emit_fmt("%s, (%s)in[%d]", args, emit_io_decl(e, &e->m->inputs[i], 1, ""), i);
    const char *largs = "";
    for (int i = 0; i < e->m->nlabels; i++)
        largs = emit_fmt("%s, (%s)lab[%d]", largs, emit_io_decl(e, &e->m->labels[i], 1, ""), i);
    /* the model's type by its struct tag where the prefix could also be a
     * parameter's or a local's name (prefix `m`, `argc`) */
    P(e, "static int init_(void *m, int max_batch, uint64_t seed) { return %s_init(m, max_batch, seed); }\n", p);
    P(e, "static void release_(void *m) { %s_release(m); }\n", p);
    IoDecl oio;
    memset(&oio, 0, sizeof oio);
    oio.dt = e->m->infer->nodes[e->m->infer->output].dt; /* i32: predict writes <i4 */
    oio.shape = e->m->infer->nodes[e->m->infer->output].shape;
    const char *ocast = emit_io_decl(e, &oio, 0, "");
    P(e,
      "static void forward_(void *m, int n, const void *const *in, void *out)\n{\n    %s_forward(m, n%s, "
      "(%s)out);\n}\n",
      p, args, ocast);
    if (e->m->has_loss) {
        /* a loss over the inputs alone (no labels) leaves lab unread */
        const char *nolab = e->m->nlabels ? "" : "    (void)lab;\n";
        P(e,
          "static float train_forward_(void *m, int n, const void *const *in, const void *const *lab)\n{\n%s    return "
          "%s_train_forward(m, n%s%s);\n}\n",
          nolab, p, args, largs);
        P(e, "static void backward_(void *m) { %s_backward(m); }\n", p);
        P(e,
          "static void eval_(void *m, int n, const void *const *in, const void *const *lab, float *loss, float "
          "*metrics)\n{\n%s    %s_eval(m, n%s%s, loss, metrics);\n}\n",
          nolab, p, args, largs);
    }
    int ns = e->m->train ? e->m->train->nsummaries : 0;
    if (ns)
        P(e, "static const float *summaries_(const void *m) { return ((const struct %s *)m)->summary_; }\n", p);
    P(e, "static int save_(const void *m, const char *path) { return %s_save(m, path); }\n", p);
    P(e, "static int load_(void *m, const char *path) { return %s_load(m, path); }\n", p);
    P(e, "static int load_non_strict_(void *m, const char *path) { return %s_load_non_strict(m, path); }\n", p);
    P(e, "static nnc_rng *rng_(void *m) { return &((struct %s *)m)->rng_; }\n", p);
    if (e->opt->check_numerics)
        P(e, "static const char *numerics_error_(const void *m) { return %s_numerics_error(m); }\n", p);
    P(e, "\n");
    P(e, "static const nnc_io_desc inputs_[%d] = {\n", e->m->ninputs);
    for (int i = 0; i < e->m->ninputs; i++)
        io_desc(e, "    ", &e->m->inputs[i], ",");
    P(e, "};\n\n");
    if (e->m->nlabels) {
        P(e, "static const nnc_io_desc labels_[%d] = {\n", e->m->nlabels);
        for (int i = 0; i < e->m->nlabels; i++)
            io_desc(e, "    ", &e->m->labels[i], ",");
        P(e, "};\n\n");
    }
    P(e, "int main(int argc, char **argv)\n{\n");
    P(e, "    static const nnc_model_desc desc = {\n");
    P(e, "        .name = \"%s\",\n        .model_size = sizeof(struct %s),\n", p, p);
    P(e, "        .num_inputs = %d,\n        .num_labels = %d,\n        .num_metrics = %d,\n", e->m->ninputs,
      e->m->nlabels, e->m->nmetrics);
    P(e, "        .inputs = inputs_,\n        .labels = %s,\n", e->m->nlabels ? "labels_" : "NULL");
    /* the output of a fixed-shape model has no batch dim (model.c) */
    oio.name = "output";
    io_desc(e, "        .output = ", &oio, ",");
    P(e, "        .metric_names = %s,\n", e->m->nmetrics ? emit_fmt("%s_metric_names", p) : "NULL");
    P(e, "        .num_params = %s_NUM_PARAMS,\n        .num_state = %s_NUM_STATE,\n", emit_upper(p), emit_upper(p));
    P(e, "        .flops_per_example = %.17g,\n", flops(e));
    P(e, "        .has_loss = %d,\n", e->m->has_loss);
    P(e,
      "        .tensors = %s_tensors,\n        .init = init_,\n        .release = release_,\n        .forward = "
      "forward_,\n",
      p);
    if (e->m->has_loss)
        P(e, "        .train_forward = train_forward_,\n        .backward = backward_,\n        .eval = eval_,\n");
    if (ns)
        P(e,
          "        .num_summaries = %d,\n        .summary_names = %s_summary_names,\n        .summaries = "
          "summaries_,\n",
          ns, p);
    P(e,
      "        .save = save_,\n        .load = load_,\n        .load_non_strict = load_non_strict_,\n        .rng = "
      "rng_,\n");
    if (e->opt->check_numerics)
        P(e, "        .numerics_error = numerics_error_,\n");
    P(e, "    };\n");
    P(e, "    return nnc_driver_main(argc, argv, &desc);\n}\n");
}
