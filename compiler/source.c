/* source.c — the syntax tree written back as source (source_*).
 *
 * The inverse of grammar/parse.y, for --dump=source and for trees that no
 * parser built (the ONNX importer's), which people then read and edit.
 * What it must keep is the tree: parsing the output gives the same tree
 * again, source positions aside (tests/source checks every .nn file of the
 * repository).  Hence:
 *   - parentheses exactly where the grammar's precedence and left
 *     associativity need them (the levels below are parse.y's), so that
 *     `a - (b - c)` keeps its parentheses and `(a - b) - c` loses them;
 *   - a float in the shortest form that reads back as the same double,
 *     always with a '.' or an exponent so that it stays a float;
 *   - every member and statement on a line of its own: the newline rule of
 *     the lexer (lex.re) then ends each one where it should, and nothing
 *     inside a line depends on it.
 * Layout is the house style of models/: four-space indents, a blank line
 * between declarations (not between imports), none between members.
 */
#include "source.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Binding strength, loosest first, as parse.y's %left lines and rules:
 * the condition of `?:` is a bexpr (anything but another `?:`), its
 * branches are full expressions, a unary operand is a unary or postfix
 * expression, and only postfix expressions take calls and indexing. */
enum {
    P_COND = 1,
    P_OR,
    P_AND,
    P_CMP,
    P_ADD,
    P_MUL,
    P_UNARY,
    P_POSTFIX,
    P_ATOM,
};

static const char *const op_text[] = {
    [OP_ADD] = "+",  [OP_SUB] = "-", [OP_MUL] = "*", [OP_DIV] = "/", [OP_MOD] = "%", [OP_MATMUL] = "@",
    [OP_EQ] = "==",  [OP_NE] = "!=", [OP_LT] = "<",  [OP_LE] = "<=", [OP_GT] = ">",  [OP_GE] = ">=",
    [OP_AND] = "&&", [OP_OR] = "||", [OP_NEG] = "-", [OP_NOT] = "!",
};

static const char *op_str(Op op)
{
    return (unsigned)op < sizeof op_text / sizeof op_text[0] && op_text[op] ? op_text[op] : "?";
}

/* A name a tree without one gets: `?`, which no parser takes (put_expr) */
static const char *name_of(const Node *n) { return n->name ? n->name : "?"; }

static int binary_prec(Op op)
{
    switch (op) {
    case OP_OR: return P_OR;
    case OP_AND: return P_AND;
    case OP_EQ:
    case OP_NE:
    case OP_LT:
    case OP_LE:
    case OP_GT:
    case OP_GE: return P_CMP;
    case OP_ADD:
    case OP_SUB: return P_ADD;
    case OP_MUL:
    case OP_DIV:
    case OP_MOD:
    case OP_MATMUL: return P_MUL;
    default: return P_OR; /* not a binary operator: written as `?`, loosely */
    }
}

/* A literal written with a leading '-'.  The parser never makes one (it
 * reads `-1` as a negation), but another builder of trees may; it reads
 * back as a negation, so it binds as one.  LLONG_MIN has no literal and
 * non-finite floats none either: those are written in parentheses. */
static int negative_number(const Node *n)
{
    if (n->kind == ND_INT)
        return n->ival < 0 && n->ival != LLONG_MIN;
    if (n->kind == ND_FLOAT)
        return isfinite(n->fval) && signbit(n->fval);
    return 0;
}

static int prec_of(const Node *n)
{
    switch (n->kind) {
    case ND_COND: return P_COND;
    case ND_BINARY: return binary_prec(n->op);
    case ND_UNARY: return P_UNARY;
    case ND_CALL:
    case ND_METHOD:
    case ND_INDEX: return P_POSTFIX;
    default: return negative_number(n) ? P_UNARY : P_ATOM;
    }
}

/* ---- literals ------------------------------------------------------------ */

/* The escapes of lex.re's strings are \" \\ \n \t; any other byte stands
 * for itself. */
static void put_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        switch (*s) {
        case '"': fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\n': fputs("\\n", out); break;
        case '\t': fputs("\\t", out); break;
        default: fputc(*s, out);
        }
    }
    fputc('"', out);
}

/* The shortest decimal that strtod reads back as v, laid out as Python's
 * repr lays it out: positional for decimal exponents -4 to 15 (0.1, 3.0,
 * 0.0001, 100000.0), exponential beyond, with the exponent as short as it
 * goes (1e-5, 2.5e16; printf's 1e-05 and 2.5e+16 read the same).
 * Infinities and NaN have no literal: they are written as the divisions
 * that compute them (elab.c folds float division at compile time). */
static void put_float(FILE *out, double v)
{
    if (isnan(v)) {
        fputs("(0.0 / 0.0)", out);
        return;
    }
    if (isinf(v)) {
        fputs(v < 0 ? "(-1.0 / 0.0)" : "(1.0 / 0.0)", out);
        return;
    }
    char sci[40], fixed[64];
    int digits = 0; /* after the first significant one */
    for (; digits < 17; digits++) {
        snprintf(sci, sizeof sci, "%.*e", digits, v);
        if (strtod(sci, NULL) == v)
            break;
    }
    char *e = strchr(sci, 'e');
    int exp10 = atoi(e + 1);
    if (exp10 >= -4 && exp10 < 16) {
        int decimals = digits - exp10;
        snprintf(fixed, sizeof fixed, "%.*f", decimals > 0 ? decimals : 0, v);
        if (decimals <= 0)
            strcat(fixed, ".0");
        if (strtod(fixed, NULL) == v) {
            fputs(fixed, out);
            return;
        }
    }
    *e = '\0';
    fprintf(out, "%se%d", sci, exp10);
}

static void put_int(FILE *out, long long v)
{
    if (v == LLONG_MIN) /* its magnitude is no int literal */
        fputs("(-9223372036854775807 - 1)", out);
    else
        fprintf(out, "%lld", v);
}

/* ---- expressions ------------------------------------------------------------ */

static void put_expr(FILE *out, const Node *n, int min);

/* [a, b, c]: list literals, shapes and shape patterns (whose items may be
 * `...` and `_`, an ND_ELLIPSIS and an identifier). */
static void put_items(FILE *out, const NodeVec *v, const char *open, const char *close)
{
    fputs(open, out);
    int first = 1;
    for (int i = 0; i < v->n; i++) {
        if (!v->v[i])
            continue;
        if (!first)
            fputs(", ", out);
        put_expr(out, v->v[i], P_COND);
        first = 0;
    }
    fputs(close, out);
}

static void put_type(FILE *out, const Node *t)
{
    if (t && t->kind == ND_TYPE && t->name && !strcmp(t->name, "list")) {
        fputc('[', out);
        put_type(out, t->a);
        fputc(']', out);
    } else {
        fputs(t && t->name ? t->name : "?", out);
    }
}

/* The operand of a unary minus starts with '-' itself: written apart, as
 * `- -x`, for the reader (the lexer has no `--`). */
static int starts_with_minus(const Node *n)
{
    return (n->kind == ND_UNARY && n->op == OP_NEG) || (negative_number(n) && prec_of(n) >= P_UNARY);
}

/* Writes n, in parentheses when it binds more loosely than `min`, the
 * strength its place needs.  A missing node (a tree no parser made) is
 * written as `?`, which no parser takes, so that it cannot go unnoticed. */
static void put_expr(FILE *out, const Node *n, int min)
{
    if (!n) {
        fputc('?', out);
        return;
    }
    int paren = prec_of(n) < min;
    if (paren)
        fputc('(', out);
    switch (n->kind) {
    case ND_INT: put_int(out, n->ival); break;
    case ND_FLOAT: put_float(out, n->fval); break;
    case ND_STR: put_string(out, n->str ? n->str : ""); break;
    case ND_BOOL: fputs(n->ival ? "true" : "false", out); break;
    case ND_IDENT: fputs(name_of(n), out); break;
    case ND_SELF: fputs("self", out); break;
    case ND_ELLIPSIS: fputs("...", out); break;
    case ND_LIST: put_items(out, &n->list, "[", "]"); break;
    case ND_UNARY:
        fputs(n->op == OP_NOT ? "!" : n->op == OP_NEG ? "-" : "?", out);
        if (n->a && n->op == OP_NEG && starts_with_minus(n->a))
            fputc(' ', out);
        put_expr(out, n->a, P_UNARY);
        break;
    case ND_BINARY: {
        /* left-associative: an operand of the same level needs
         * parentheses on the right only */
        int p = binary_prec(n->op);
        put_expr(out, n->a, p);
        fprintf(out, " %s ", op_str(n->op));
        put_expr(out, n->b, p + 1);
        break;
    }
    case ND_COND:
        put_expr(out, n->a, P_OR);
        fputs(" ? ", out);
        put_expr(out, n->b, P_COND);
        fputs(" : ", out);
        put_expr(out, n->c, P_COND);
        break;
    case ND_CALL:
        put_expr(out, n->a, P_POSTFIX);
        put_items(out, &n->list, "(", ")");
        break;
    case ND_METHOD:
        /* `3.f()` would lex as the number `3.` and a name: (3).f() */
        put_expr(out, n->a, n->a && n->a->kind == ND_INT ? P_ATOM + 1 : P_POSTFIX);
        fprintf(out, ".%s", name_of(n));
        put_items(out, &n->list, "(", ")");
        break;
    case ND_INDEX:
        put_expr(out, n->a, P_POSTFIX);
        fputc('[', out);
        put_expr(out, n->b, P_COND);
        fputc(']', out);
        break;
    case ND_ARG:
        if (n->name)
            fprintf(out, "%s: ", n->name);
        put_expr(out, n->a, P_COND);
        break;
    case ND_FNPARAM:
        fputs(name_of(n), out);
        if (n->a) {
            fputs(": ", out);
            put_expr(out, n->a, P_COND);
        }
        break;
    case ND_TYPE: put_type(out, n); break;
    default: fputc('?', out); break; /* not an expression */
    }
    if (paren)
        fputc(')', out);
}

void source_print_expr(const Node *expr, FILE *out) { put_expr(out, expr, P_COND); }

/* ---- lines ---------------------------------------------------------------------- */

static void indent(FILE *out, int depth)
{
    for (int i = 0; i < depth; i++)
        fputs("    ", out);
}

/* One `///` line per line of the text; lex.re drops the one space after
 * the slashes, so a line's own leading spaces survive. */
static void put_doc(FILE *out, const char *doc, int depth)
{
    if (!doc)
        return;
    for (const char *s = doc;;) {
        const char *nl = strchr(s, '\n');
        int len = nl ? (int)(nl - s) : (int)strlen(s);
        indent(out, depth);
        if (len)
            fprintf(out, "/// %.*s\n", len, s);
        else
            fputs("///\n", out);
        if (!nl)
            break;
        s = nl + 1;
    }
}

static int has_comment(const Node *n) { return n->comment && n->comment[0]; }

/* Ends a line, with n's comment as a `//` comment: its line breaks become
 * spaces, since a `//` comment ends at the first. */
static void end_line(FILE *out, const Node *n)
{
    if (has_comment(n)) {
        fputs(" // ", out);
        for (const char *p = n->comment; *p; p++)
            fputc(*p == '\n' || *p == '\r' ? ' ' : *p, out);
    }
    fputc('\n', out);
}

static void put_line(FILE *out, const Node *n, int depth, int more);

/* `{`, the items a line each one level deeper, `}`, leaving the line
 * open after it (for `else`).  Empty: `{}`, unless `owner` has a comment,
 * which must end the line that the brace opens. */
static void put_body(FILE *out, const NodeVec *items, int depth, const Node *owner)
{
    int n = 0;
    for (int i = 0; i < items->n; i++)
        n += items->v[i] != NULL;
    if (!n && !has_comment(owner)) {
        fputs("{}", out);
        return;
    }
    fputc('{', out);
    end_line(out, owner);
    for (int i = 0; i < items->n; i++) {
        if (!items->v[i])
            continue;
        int more = 0;
        for (int k = i + 1; k < items->n && !more; k++)
            more = items->v[k] != NULL;
        put_line(out, items->v[i], depth + 1, more);
    }
    indent(out, depth);
    fputc('}', out);
}

static const NodeVec no_items;

static const NodeVec *block_items(const Node *block) { return block ? &block->list : &no_items; }

/* if c { … } else if d { … } else { … }: each `if` has its comment after
 * its own `{`. */
static void put_if(FILE *out, const Node *n, int depth)
{
    fputs("if ", out);
    put_expr(out, n->a, P_COND);
    fputc(' ', out);
    put_body(out, block_items(n->b), depth, n);
    if (!n->c)
        return;
    fputs(" else ", out);
    if (n->c->kind == ND_IF)
        put_if(out, n->c, depth);
    else
        put_body(out, block_items(n->c), depth, n->c);
}

/* `: [dims] = init if cond` of a param or state */
static void put_tensor(FILE *out, const Node *n)
{
    fprintf(out, "%s %s: %s", n->kind == ND_PARAM ? "param" : "state", name_of(n), n->str ? n->str : "");
    put_expr(out, n->a, P_COND);
    if (n->b) {
        fputs(" = ", out);
        put_expr(out, n->b, P_COND);
    }
    if (n->c) {
        fputs(" if ", out);
        put_expr(out, n->c, P_COND);
    }
}

/* An hparam `name: fn` or `name: layer`: its line ends in a keyword that
 * lex.re's newline rule does not let end an item, so a newline after it
 * is no `;`. */
static int ends_in_keyword(const Node *n)
{
    const Node *t = n->a;
    return n->kind == ND_HPARAM && !n->b && !n->c && t && t->kind == ND_TYPE && t->name &&
        (!strcmp(t->name, "fn") || !strcmp(t->name, "layer"));
}

/* A declaration, a member, a statement or an hparam, with its doc comment
 * above and its comment at the end of its (first) line; `more`: another
 * item of the same block follows. */
static void put_line(FILE *out, const Node *n, int depth, int more)
{
    put_doc(out, n->doc, depth);
    indent(out, depth);
    switch (n->kind) {
    /* declarations */
    case ND_IMPORT:
        fputs("import ", out);
        put_string(out, n->str ? n->str : "");
        break;
    case ND_LAYER:
    case ND_MODEL:
        fprintf(out, "%s %s ", n->kind == ND_LAYER ? "layer" : "model", name_of(n));
        put_body(out, &n->list, depth, n);
        fputc('\n', out);
        return;
    /* members */
    case ND_HPARAMS:
        fputs("hparams ", out);
        put_body(out, &n->list, depth, n);
        fputc('\n', out);
        return;
    case ND_HPARAM:
        fprintf(out, "%s: ", name_of(n));
        put_type(out, n->a);
        if (n->b) {
            fputs(" = ", out);
            put_expr(out, n->b, P_COND);
        }
        if (n->c) {
            fputs(" where ", out);
            put_expr(out, n->c, P_COND);
        }
        break;
    case ND_FIELD:
        fprintf(out, "%s: ", name_of(n));
        put_expr(out, n->a, P_COND);
        if (n->b) {
            fputs(" if ", out);
            put_expr(out, n->b, P_COND);
        }
        if (n->c) {
            fputs(" init ", out);
            put_expr(out, n->c, P_COND);
        }
        if (n->str) {
            fputs(" from ", out);
            put_string(out, n->str);
        }
        if (n->flags & FIELD_FROZEN)
            fputs(" frozen", out);
        break;
    case ND_PARAM:
    case ND_STATE: put_tensor(out, n); break;
    case ND_INPUT:
    case ND_LABEL:
        fprintf(out, "%s %s: %s", n->kind == ND_INPUT ? "input" : "label", name_of(n), n->str ? n->str : "?");
        put_expr(out, n->a, P_COND);
        break;
    case ND_FN:
        fprintf(out, "fn %s", name_of(n));
        put_items(out, &n->list, "(", ")");
        if (n->a) {
            fputs(" -> ", out);
            put_expr(out, n->a, P_COND);
        }
        fputc(' ', out);
        put_body(out, block_items(n->b), depth, n);
        fputc('\n', out);
        return;
    case ND_LOSS:
        fputs("loss ", out);
        put_expr(out, n->a, P_COND);
        break;
    case ND_METRIC:
        fprintf(out, "metric %s = ", name_of(n));
        put_expr(out, n->a, P_COND);
        break;
    /* statements */
    case ND_LET:
    case ND_ASSIGN:
    case ND_UPDATE:
        fprintf(out, "%s%s = ", n->kind == ND_LET ? "let " : n->kind == ND_UPDATE ? "update " : "", name_of(n));
        put_expr(out, n->a, P_COND);
        break;
    case ND_SUMMARY:
        fputs("summary ", out);
        put_string(out, n->str ? n->str : "");
        fputs(" = ", out);
        put_expr(out, n->a, P_COND);
        break;
    case ND_RETURN:
        fputs("return ", out);
        put_expr(out, n->a, P_COND);
        break;
    case ND_IF:
        put_if(out, n, depth);
        fputc('\n', out);
        return;
    case ND_FOR:
        fprintf(out, "for %s in ", name_of(n));
        put_expr(out, n->a, P_COND);
        fputs("..", out);
        put_expr(out, n->b, P_COND);
        fputc(' ', out);
        put_body(out, block_items(n->c), depth, n);
        fputc('\n', out);
        return;
    case ND_BLOCK: /* no statement of the language: what it holds */
        put_body(out, &n->list, depth, n);
        fputc('\n', out);
        return;
    default: put_expr(out, n, P_COND); break;
    }
    if (more && ends_in_keyword(n))
        fputc(';', out);
    end_line(out, n);
}

void source_print(const Node *file, FILE *out)
{
    if (!file)
        return;
    if (file->kind != ND_FILE) {
        put_line(out, file, 0, 0);
        return;
    }
    const Node *prev = NULL;
    for (int i = 0; i < file->list.n; i++) {
        const Node *d = file->list.v[i];
        if (!d)
            continue;
        if (prev && !(prev->kind == ND_IMPORT && d->kind == ND_IMPORT))
            fputc('\n', out);
        put_line(out, d, 0, 0);
        prev = d;
    }
}
