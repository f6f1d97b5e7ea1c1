/* view.c — the --summary table and the --emit=dot picture (view_*).
 *
 * Both read the rows model.c records while elaborating the inference graph:
 * each field's first application, with the range of IR nodes it made.
 * That range gives its FLOPs and, for the picture, which box or cluster a
 * node belongs to: an edge is drawn wherever a tensor crosses between
 * vertices.
 */
#include <stdlib.h>
#include <string.h>

#include "view.h"

static const char *num(double v, char *buf, size_t cap)
{
    /* 1234567 -> "1,234,567" */
    char raw[64];
    snprintf(raw, sizeof raw, "%.0f", v);
    size_t n = strlen(raw), k = 0;
    for (size_t i = 0; i < n && k + 2 < cap; i++) {
        if (i && (n - i) % 3 == 0)
            buf[k++] = ',';
        buf[k++] = raw[i];
    }
    buf[k] = 0;
    return buf;
}

void view_summary(const Model *m, FILE *out)
{
    char sb[128], b1[64], b2[64];
    int wpath = 5, wlayer = 5, wshape = 12;
    for (int i = 0; i < m->nrows; i++) {
        const SummaryRow *r = &m->rows[i];
        int w = (int)strlen(r->path) + 2 * (r->depth - 1);
        if (w > wpath)
            wpath = w;
        if ((int)strlen(r->layer) > wlayer)
            wlayer = (int)strlen(r->layer);
        if (r->out.nd >= 0 && (int)strlen(ir_shape_str(r->out, "N", sb, sizeof sb)) > wshape)
            wshape = (int)strlen(sb);
    }
    fprintf(out, "model %s (%s)\n", m->name, m->source);
    int width = wpath + wlayer + wshape + 13 + 16 + 8;
    fprintf(out, "%-*s  %-*s  %-*s  %13s  %16s\n", wpath, "field", wlayer, "layer", wshape, "output shape", "params",
            "FLOPs/example");
    for (int i = 0; i < width; i++)
        fputc('-', out);
    fputc('\n', out);
    for (int i = 0; i < m->nrows; i++) {
        const SummaryRow *r = &m->rows[i];
        fprintf(out, "%*s%-*s  %-*s  %-*s  %13s  %16s\n", 2 * (r->depth - 1), "", wpath - 2 * (r->depth - 1), r->path,
                wlayer, r->layer, wshape, r->out.nd >= 0 ? ir_shape_str(r->out, "N", sb, sizeof sb) : "-",
                num((double)r->params, b1, sizeof b1), num(r->flops, b2, sizeof b2));
    }
    for (int i = 0; i < width; i++)
        fputc('-', out);
    fputc('\n', out);
    double total = 0;
    for (int i = 0; i < m->infer->core_end; i++)
        total += ir_node_flops(m->infer, i);
    fprintf(out, "%-*s  %-*s  %-*s  %13s  %16s\n", wpath, "total", wlayer, "", wshape, "",
            num((double)m->num_params, b1, sizeof b1), num(total, b2, sizeof b2));
    if (m->num_state)
        fprintf(out, "state: %s floats\n", num((double)m->num_state, b1, sizeof b1));
}

/* ---- the picture ---------------------------------------------------------------
 *
 * Fields with fields of their own (a BasicBlock, a list of blocks) are
 * clusters, drawn around their sub-fields; fields without (a Conv2D, a
 * Dense) are boxes.  An operation a layer's own `call` makes outside its
 * sub-fields (the `+` of a residual block) is a small circle inside that
 * layer's cluster, or at the top for the model's.  A tensor that feeds
 * several vertices and reaches one of those circles past the layers in
 * between is a skip connection: drawn dashed, labelled "skip". */

typedef struct Pic {
    const Model *m;
    int *parent;  /* each row's enclosing row, -1 at depth 1 */
    char *nested; /* whether a row has rows inside it: a cluster */
    int *home;    /* each node's innermost row, -1 for none */
} Pic;

/* The picture's vertex of node i: a box (a row without rows inside), an
 * input, or an operation; 0 for leaves that are not drawn (params,
 * constants). */
static int vertex(const Pic *p, int i, char *name, size_t cap)
{
    const IrNode *n = &p->m->infer->nodes[i];
    const int r = p->home[i];
    if (r >= 0 && !p->nested[r]) {
        snprintf(name, cap, "f%d", r);
        return 1;
    }
    if (n->op == IR_INPUT) {
        snprintf(name, cap, "in%d", n->ival);
        return 1;
    }
    if (ir_op_class(n->op) == OC_LEAF)
        return 0;
    snprintf(name, cap, "op%d", i);
    return 1;
}

static void dot_escape(FILE *out, const char *s)
{
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', out);
        fputc(*s, out);
    }
}

/* The operations whose innermost row is r (-1: the model's own) */
static void dot_ops(const Pic *p, int r, FILE *out, const char *ind)
{
    const Graph *g = p->m->infer;
    char b[32];
    for (int i = 0; i < g->core_end; i++)
        if (p->home[i] == r && vertex(p, i, b, sizeof b) && !strncmp(b, "op", 2))
            fprintf(out, "%s%s [shape=circle, width=0.3, label=\"%s\"];\n", ind, b, ir_op_name(g->nodes[i].op));
}

typedef struct Edge {
    char from[32], to[32], shape[64];
} Edge;

void view_dot(const Model *m, FILE *out)
{
    const Graph *g = m->infer;
    char sb[128], a[32], b[32], pb[64];
    Pic p = {
        m,
        calloc((size_t)m->nrows + 1, sizeof(int)),
        calloc((size_t)m->nrows + 1, 1),
        calloc((size_t)g->n + 1, sizeof(int)),
    };
    const int cap = g->n * 4 + 8;
    Edge *edges = calloc((size_t)cap, sizeof *edges);
    if (!p.parent || !p.nested || !p.home || !edges)
        abort();
    /* rows come in pre-order: a row's parent is the last row one level up */
    for (int r = 0; r < m->nrows; r++) {
        p.parent[r] = -1;
        for (int q = r - 1; q >= 0 && p.parent[r] < 0; q--)
            if (m->rows[q].depth == m->rows[r].depth - 1)
                p.parent[r] = q;
        if (p.parent[r] >= 0)
            p.nested[p.parent[r]] = 1;
    }
    /* a node's innermost row: the deepest whose range holds it */
    for (int i = 0; i < g->n; i++) {
        p.home[i] = -1;
        for (int r = 0; r < m->nrows; r++)
            if (i >= m->rows[r].first && i < m->rows[r].last &&
                (p.home[i] < 0 || m->rows[r].depth > m->rows[p.home[i]].depth))
                p.home[i] = r;
    }

    fprintf(out, "// %s: generated by nnc from %s\n", m->name, m->source);
    fprintf(out, "digraph \"%s\" {\n", m->name);
    fprintf(out, "    rankdir=TB;\n    compound=true;\n    node [fontname=\"Helvetica\", fontsize=11];\n");
    fprintf(out, "    edge [fontname=\"Helvetica\", fontsize=9];\n");
    for (int i = 0; i < m->ninputs; i++)
        fprintf(out, "    in%d [shape=ellipse, label=\"%s\\n%s\"];\n", i, m->inputs[i].name,
                ir_shape_str(m->inputs[i].shape, "N", sb, sizeof sb));
    dot_ops(&p, -1, out, "    ");
    /* the rows, clusters opened and closed by depth */
    int open = 0; /* clusters open */
    for (int r = 0; r < m->nrows; r++) {
        const SummaryRow *row = &m->rows[r];
        for (; open >= row->depth; open--)
            fprintf(out, "%*s}\n", 4 * open, "");
        const int ind = 4 * (open + 1);
        if (p.nested[r]) {
            fprintf(out, "%*ssubgraph cluster_f%d {\n%*slabel=\"", ind, "", r, ind + 4, "");
            dot_escape(out, row->path);
            fprintf(out, ": %s\\n%s params\";\n%*sstyle=rounded;\n%*scolor=gray50;\n%*sfontname=\"Helvetica\";\n",
                    row->layer, num((double)row->params, pb, sizeof pb), ind + 4, "", ind + 4, "", ind + 4, "");
            char in[64];
            snprintf(in, sizeof in, "%*s", ind + 4, "");
            dot_ops(&p, r, out, in);
            open = row->depth;
            continue;
        }
        if (row->first >= row->last) /* a field that made no nodes (a list called item by item) */
            continue;
        fprintf(out, "%*sf%d [shape=box, style=rounded, label=\"", ind, "", r);
        dot_escape(out, row->path);
        fprintf(out, ": %s\\n%s params\"];\n", row->layer, num((double)row->params, pb, sizeof pb));
    }
    for (; open > 0; open--)
        fprintf(out, "%*s}\n", 4 * open, "");

    /* edges where a tensor crosses from one vertex to another, once each */
    int ne = 0;
    for (int i = 0; i < g->core_end; i++) {
        const IrNode *n = &g->nodes[i];
        if (!vertex(&p, i, b, sizeof b))
            continue;
        for (int k = 0; k < n->nin; k++) {
            if (!vertex(&p, n->in[k], a, sizeof a) || !strcmp(a, b))
                continue;
            const char *shape = ir_shape_str(g->nodes[n->in[k]].shape, "N", sb, sizeof sb);
            int dup = 0;
            for (int s = 0; s < ne && !dup; s++)
                dup = !strcmp(edges[s].from, a) && !strcmp(edges[s].to, b) && !strcmp(edges[s].shape, shape);
            if (dup || ne >= cap)
                continue;
            snprintf(edges[ne].from, sizeof edges[ne].from, "%s", a);
            snprintf(edges[ne].to, sizeof edges[ne].to, "%s", b);
            snprintf(edges[ne].shape, sizeof edges[ne].shape, "%s", shape);
            ne++;
        }
    }
    for (int s = 0; s < ne; s++) {
        /* a skip: its source feeds other vertices too, and it joins an
         * operation (the sum of a residual block) */
        int fan = 0;
        for (int t = 0; t < ne; t++)
            fan += !strcmp(edges[t].from, edges[s].from);
        const int skip = fan > 1 && !strncmp(edges[s].to, "op", 2);
        fprintf(out, "    %s -> %s [label=\"%s%s\"%s];\n", edges[s].from, edges[s].to, skip ? "skip " : "",
                edges[s].shape, skip ? ", style=dashed, color=\"#1f6fb4\", fontcolor=\"#1f6fb4\"" : "");
    }
    if (g->output >= 0 && vertex(&p, g->output, a, sizeof a))
        fprintf(out, "    out [shape=ellipse, label=\"output\"];\n    %s -> out [label=\"%s\"];\n", a,
                ir_shape_str(g->nodes[g->output].shape, "N", sb, sizeof sb));
    fprintf(out, "}\n");
    free(edges);
    free(p.parent);
    free(p.nested);
    free(p.home);
}
