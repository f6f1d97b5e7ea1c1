/* ast.c — syntax tree storage and the --dump=tokens / --dump=ast printers.
 *
 * Nodes come from one arena that is never freed (ast.h): the compiler is a
 * short-lived process, and stable pointers let every later stage keep
 * references into the tree.  The dumps are for people and for golden tests,
 * so they are plain, one construct per line, with source positions.
 */
#include "ast.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- arena ------------------------------------------------------------- */

enum { CHUNK = 64 * 1024 };

/* Chunks are chained from `head` so that they stay reachable (leak
 * checkers then see the arena as live memory, which it is). */
typedef union Chunk {
    union Chunk *next;
    long double align_ld;
    void *align_p;
    long long align_ll;
} Chunk;

static struct {
    Chunk *head;
    char *cur, *end;
} arena;

static void *new_chunk(size_t size)
{
    Chunk *c = calloc(1, sizeof(Chunk) + size);
    if (!c) {
        fputs("nnc: error: out of memory\n", stderr);
        exit(1);
    }
    c->next = arena.head;
    arena.head = c;
    return c + 1;
}

void *ast_alloc(size_t size)
{
    const size_t align = sizeof(Chunk);
    size = size ? (size + align - 1) / align * align : align;
    /* a big request gets a chunk of its own; the current one keeps
     * serving small ones */
    if (size > CHUNK / 4)
        return new_chunk(size);
    if ((size_t)(arena.end - arena.cur) < size) {
        arena.cur = new_chunk(CHUNK);
        arena.end = arena.cur + CHUNK;
    }
    void *p = arena.cur;
    arena.cur += size;
    return p;
}

void ast_reset(void)
{
    while (arena.head) {
        Chunk *next = arena.head->next;
        free(arena.head);
        arena.head = next;
    }
    arena.cur = arena.end = NULL;
}

char *ast_strndup(const char *s, size_t n)
{
    char *p = ast_alloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

Node *ast_new(NodeKind kind, Loc loc)
{
    Node *n = ast_alloc(sizeof *n);
    n->kind = kind;
    n->loc = loc;
    return n;
}

void ast_push(NodeVec *vec, Node *node)
{
    if (vec->n == vec->cap) {
        int cap = vec->cap ? vec->cap * 2 : 4;
        Node **v = ast_alloc((size_t)cap * sizeof *v);
        if (vec->n)
            memcpy(v, vec->v, (size_t)vec->n * sizeof *v);
        vec->v = v;
        vec->cap = cap;
    }
    vec->v[vec->n++] = node;
}

Loc ast_span(Loc from, Loc to)
{
    if (!from.file)
        return to;
    if (!to.file || to.file != from.file)
        return from;
    int start = from.off < to.off ? from.off : to.off;
    int end = from.off + from.len;
    if (to.off + to.len > end)
        end = to.off + to.len;
    return (Loc){from.file, start, end - start};
}

/* ---- shared printing helpers ------------------------------------------------ */

/* A string in double quotes with C escapes, so that dumps stay one line. */
static void put_quoted(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        switch (c) {
        case '"': fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\n': fputs("\\n", out); break;
        case '\t': fputs("\\t", out); break;
        default:
            if (c < 0x20 || c == 0x7f)
                fprintf(out, "\\x%02x", c);
            else
                fputc(c, out);
        }
    }
    fputc('"', out);
}

/* The shortest %g form that reads back as the same double. */
static void put_double(FILE *out, double v)
{
    char buf[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    /* keep a float looking like a float: 3 -> 3.0 */
    if (isfinite(v) && !strpbrk(buf, ".e"))
        strcat(buf, ".0");
    fputs(buf, out);
}

static void put_loc(FILE *out, Loc loc)
{
    int line, col;
    diag_linecol(loc, &line, &col);
    fprintf(out, "%d:%d", line, col);
}

/* ---- --dump=tokens -------------------------------------------------------- */

/* One token a line: `line:col KIND 'text'`; a statement end made from a
 * newline shows as `SEMI (newline)`. */
void ast_dump_tokens(const SrcFile *file, FILE *out)
{
    Lexer *lx = lex_open(file);
    Token t;
    do {
        lex_next(lx, &t);
        put_loc(out, t.loc);
        fprintf(out, " %s", lex_kind_name(t.kind));
        if (t.implicit)
            fputs(" (newline)", out);
        else if (t.kind != 0)
            fprintf(out, " '%.*s'", t.loc.len, file->text + t.loc.off);
        if (t.doc) {
            fputs(" doc=", out);
            put_quoted(out, t.doc);
        }
        fputc('\n', out);
    } while (t.kind != 0);
}

/* ---- --dump=ast ------------------------------------------------------------- */

/* Names and child roles per kind, in NodeKind order (ORDER NodeKind).
 * A role names what `a`, `b`, `c` hold; NULL roles print without a label. */
static const struct {
    const char *name;
    const char *role[3];
} kinds[] = {
    [ND_INT] = {"int", {0}},
    [ND_FLOAT] = {"float", {0}},
    [ND_STR] = {"str", {0}},
    [ND_BOOL] = {"bool", {0}},
    [ND_IDENT] = {"ident", {0}},
    [ND_SELF] = {"self", {0}},
    [ND_ELLIPSIS] = {"ellipsis", {0}},
    [ND_LIST] = {"list", {0}},
    [ND_UNARY] = {"unary", {0}},
    [ND_BINARY] = {"binary", {0}},
    [ND_COND] = {"cond", {"if", "then", "else"}},
    [ND_CALL] = {"call", {0}},
    [ND_METHOD] = {"method", {0}},
    [ND_INDEX] = {"index", {0}},
    [ND_ARG] = {"arg", {0}},
    [ND_BLOCK] = {"block", {0}},
    [ND_LET] = {"let", {0}},
    [ND_ASSIGN] = {"assign", {0}},
    [ND_IF] = {"if", {"cond", "then", "else"}},
    [ND_FOR] = {"for", {"from", "to", "body"}},
    [ND_UPDATE] = {"update", {0}},
    [ND_SUMMARY] = {"summary", {0}},
    [ND_RETURN] = {"return", {0}},
    [ND_TYPE] = {"type", {0}},
    [ND_HPARAMS] = {"hparams", {0}},
    [ND_HPARAM] = {"hparam", {"type", "default", "where"}},
    [ND_FIELD] = {"field", {"layer", "if", "init"}},
    [ND_PARAM] = {"param", {"shape", "init", "if"}},
    [ND_STATE] = {"state", {"shape", "init", "if"}},
    [ND_INPUT] = {"input", {"shape", 0, 0}},
    [ND_LABEL] = {"label", {"shape", 0, 0}},
    [ND_FN] = {"fn", {"returns", "body", 0}},
    [ND_FNPARAM] = {"fnparam", {"shape", 0, 0}},
    [ND_LOSS] = {"loss", {0}},
    [ND_METRIC] = {"metric", {0}},
    [ND_IMPORT] = {"import", {0}},
    [ND_LAYER] = {"layer", {0}},
    [ND_MODEL] = {"model", {0}},
    [ND_FILE] = {"file", {0}},
};

static const char *const op_text[] = {
    [OP_ADD] = "+",  [OP_SUB] = "-", [OP_MUL] = "*", [OP_DIV] = "/", [OP_MOD] = "%", [OP_MATMUL] = "@",
    [OP_EQ] = "==",  [OP_NE] = "!=", [OP_LT] = "<",  [OP_LE] = "<=", [OP_GT] = ">",  [OP_GE] = ">=",
    [OP_AND] = "&&", [OP_OR] = "||", [OP_NEG] = "-", [OP_NOT] = "!",
};

static void dump_node(const Node *n, FILE *out, int indent, const char *role);

static void dump_child(const Node *n, FILE *out, int indent, const char *role)
{
    if (!n)
        return;
    fprintf(out, "\n%*s", indent, "");
    dump_node(n, out, indent, role);
}

/* `(kind attrs... @line:col` then the children one per line, each indented
 * by two more, and the closing paren after the last one. */
static void dump_node(const Node *n, FILE *out, int indent, const char *role)
{
    if (role)
        fprintf(out, "%s: ", role);
    unsigned k = n->kind;
    fprintf(out, "(%s", k < sizeof kinds / sizeof kinds[0] && kinds[k].name ? kinds[k].name : "?");

    switch (n->kind) {
    case ND_UNARY:
    case ND_BINARY:
        fprintf(out, " %s", (unsigned)n->op < sizeof op_text / sizeof op_text[0] ? op_text[n->op] : "?");
        break;
    case ND_INT: fprintf(out, " %lld", n->ival); break;
    case ND_FLOAT:
        fputc(' ', out);
        put_double(out, n->fval);
        break;
    case ND_BOOL: fputs(n->ival ? " true" : " false", out); break;
    default: break;
    }
    if (n->name)
        fprintf(out, " %s", n->name);
    if (n->str) {
        fputs(n->kind == ND_INPUT || n->kind == ND_LABEL ? " dtype=" : n->kind == ND_FIELD ? " from=" : " ", out);
        put_quoted(out, n->str);
    }
    if (n->flags & FIELD_FROZEN && n->kind == ND_FIELD)
        fputs(" frozen", out);
    if (n->loc.file) {
        fputs(" @", out);
        put_loc(out, n->loc);
    }
    if (n->doc) {
        fputs(" doc=", out);
        put_quoted(out, n->doc);
    }
    if (n->comment) {
        fputs(" comment=", out);
        put_quoted(out, n->comment);
    }

    const char *const *roles = k < sizeof kinds / sizeof kinds[0] ? kinds[k].role : NULL;
    int callee_first = n->kind == ND_CALL || n->kind == ND_METHOD;
    if (callee_first)
        dump_child(n->a, out, indent + 2, NULL);
    for (int i = 0; i < n->list.n; i++)
        dump_child(n->list.v[i], out, indent + 2, NULL);
    if (!callee_first)
        dump_child(n->a, out, indent + 2, roles ? roles[0] : NULL);
    dump_child(n->b, out, indent + 2, roles ? roles[1] : NULL);
    dump_child(n->c, out, indent + 2, roles ? roles[2] : NULL);
    fputc(')', out);
}

void ast_dump(const Node *file, FILE *out)
{
    if (!file)
        return;
    dump_node(file, out, 0, NULL);
    fputc('\n', out);
}
