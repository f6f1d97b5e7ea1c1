/* source_test.c — compiler/source.c in process: the printed text of tricky
 * trees, checked against text written here by hand; random expression
 * trees printed and parsed back; random doubles read back bit for bit;
 * the `comment` member; and, for each file named on the command line,
 * parse -> print -> parse giving the same tree and the same text again.
 *
 *     source_test [FILE.nn...]
 *
 * Trees are compared node by node (same_tree), every member but the
 * source positions and the parser's expression heights.  Built with ASan
 * and UBSan where the compiler has them (CMakeLists.txt).
 */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ast.h"
#include "source.h"

static int failures;

#define CHECK(cond, ...) \
    do { \
        if (!(cond)) { \
            failures++; \
            fprintf(stderr, "%s:%d: FAIL: ", __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__); \
            fputc('\n', stderr); \
        } \
    } while (0)

/* ---- helpers ------------------------------------------------------------- */

static int same_str(const char *a, const char *b) { return a == b || (a && b && !strcmp(a, b)); }

static int same_double(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

/* Everything but loc, name_loc and depth; `comment` only when asked (the
 * parser never sets it, so a tree read back from a printout has none). */
static int same_tree(const Node *a, const Node *b, int comments)
{
    if (!a || !b)
        return a == b;
    if (a->kind != b->kind || !same_str(a->name, b->name) || !same_str(a->str, b->str) || !same_str(a->doc, b->doc) ||
        a->ival != b->ival || !same_double(a->fval, b->fval) || a->flags != b->flags || a->list.n != b->list.n ||
        (comments && !same_str(a->comment, b->comment)))
        return 0;
    if ((a->kind == ND_UNARY || a->kind == ND_BINARY) && a->op != b->op)
        return 0;
    for (int i = 0; i < a->list.n; i++)
        if (!same_tree(a->list.v[i], b->list.v[i], comments))
            return 0;
    return same_tree(a->a, b->a, comments) && same_tree(a->b, b->b, comments) && same_tree(a->c, b->c, comments);
}

/* what `print` (source_print or source_print_expr) writes for n, as a string */
static char *printed(void (*print)(const Node *, FILE *), const Node *n)
{
    char *text;
    size_t len;
    FILE *f = open_memstream(&text, &len);
    print(n, f);
    fclose(f);
    return text;
}
#define print_file(n) printed(source_print, (n))
#define print_expr(n) printed(source_print_expr, (n))

/* A copy of text as a source file, in the arena (diag_string_file's
 * would outlive ast_reset, as leaks) */
static SrcFile *src(const char *name, const char *text, size_t len)
{
    SrcFile *f = ast_alloc(sizeof *f);
    f->path = name;
    f->text = ast_strndup(text, len);
    f->len = len;
    return f;
}

/* NULL when the text has errors (reported on stderr) */
static Node *parse_file(const char *text)
{
    int errors = diag_errors();
    Node *n = ast_parse(src("<printout>", text, strlen(text)));
    return diag_errors() > errors ? NULL : n;
}

static Node *parse_expr(const char *text) { return ast_parse_expr(src("<expr>", text, strlen(text))); }

static Node *mk(NodeKind k) { return ast_new(k, (Loc){0}); }

static Node *ident(const char *name)
{
    Node *n = mk(ND_IDENT);
    n->name = name;
    return n;
}

static Node *num(long long v)
{
    Node *n = mk(ND_INT);
    n->ival = v;
    return n;
}

static Node *flt(double v)
{
    Node *n = mk(ND_FLOAT);
    n->fval = v;
    return n;
}

static Node *bin(Op op, Node *a, Node *b)
{
    Node *n = mk(ND_BINARY);
    n->op = op;
    n->a = a;
    n->b = b;
    return n;
}

static Node *un(Op op, Node *a)
{
    Node *n = mk(ND_UNARY);
    n->op = op;
    n->a = a;
    return n;
}

/* ---- expressions: source text -> canonical text -------------------------- */

static void expr_cases(void)
{
    static const char *const cases[][2] = {
        /* associativity: left, so only a right operand of the same level
         * keeps its parentheses */
        {"a - (b - c)", "a - (b - c)"},
        {"(a - b) - c", "a - b - c"},
        {"a / (b * c)", "a / (b * c)"},
        {"(a / b) * c", "a / b * c"},
        {"a % b * c", "a % b * c"},
        {"a @ (b @ c)", "a @ (b @ c)"},
        {"(a < b) < c", "a < b < c"},
        {"a < (b < c)", "a < (b < c)"},
        {"a == (b != c)", "a == (b != c)"},
        {"a || (b || c)", "a || (b || c)"},
        /* precedence */
        {"a * (b + c)", "a * (b + c)"},
        {"(a * b) + c", "a * b + c"},
        {"a + b * c", "a + b * c"},
        {"(a + b) * (c - d)", "(a + b) * (c - d)"},
        {"a || b && c", "a || b && c"},
        {"(a || b) && c", "(a || b) && c"},
        {"a && b == c", "a && b == c"},
        {"(a && b) == c", "(a && b) == c"},
        {"a + b < c * d", "a + b < c * d"},
        {"(a < b) + c", "(a < b) + c"},
        /* unary binds tighter than every binary operator */
        {"-(x @ y)", "-(x @ y)"},
        {"(-x) @ y", "-x @ y"},
        {"-x * y", "-x * y"},
        {"-(x * y)", "-(x * y)"},
        {"!(a && b)", "!(a && b)"},
        {"!a && b", "!a && b"},
        {"!(a == b)", "!(a == b)"},
        {"-(-x)", "- -x"},
        {"-(-1)", "- -1"},
        {"- - -x", "- - -x"},
        {"!!a", "!!a"},
        {"-!a", "-!a"},
        {"!-a", "!-a"},
        {"a - -b", "a - -b"},
        {"a + (-b)", "a + -b"},
        {"a - (-b)", "a - -b"},
        {"-1", "-1"},
        {"-1.5 * x", "-1.5 * x"},
        {"(-f)(x)", "(-f)(x)"},
        {"-f(x)", "-f(x)"},
        {"-x[0]", "-x[0]"},
        {"(-x)[0]", "(-x)[0]"},
        /* ?: : right-associative; the condition is no ?: itself */
        {"a ? b : (c ? d : e)", "a ? b : c ? d : e"},
        {"a ? (b ? c : d) : e", "a ? b ? c : d : e"},
        {"(a ? b : c) ? d : e", "(a ? b : c) ? d : e"},
        {"(a ? b : c) + 1", "(a ? b : c) + 1"},
        {"-(a ? b : c)", "-(a ? b : c)"},
        {"a || b ? c + 1 : d * 2", "a || b ? c + 1 : d * 2"},
        {"f(a ? b : c, k: d ? e : g)", "f(a ? b : c, k: d ? e : g)"},
        {"[a ? b : c]", "[a ? b : c]"},
        {"x[a ? 0 : 1]", "x[a ? 0 : 1]"},
        /* postfix */
        {"(a + b)(x)", "(a + b)(x)"},
        {"(a + b)[0]", "(a + b)[0]"},
        {"(a + b).mean(axis: 0)", "(a + b).mean(axis: 0)"},
        {"(-x).mean(axis: 0)", "(-x).mean(axis: 0)"},
        {"(3).f()", "(3).f()"},
        {"3.5.f()", "3.5.f()"},
        {"(x.f(y)).g()[0][1]", "x.f(y).g()[0][1]"},
        {"f(x)(y)", "f(x)(y)"},
        {"[1, 2][0]", "[1, 2][0]"},
        {"\"s\".f()", "\"s\".f()"},
        {"self(x)", "self(x)"},
        {"Dense(units: 3, activation: relu)", "Dense(units: 3, activation: relu)"},
        {"f(a, b: 1, c: [1, 2],)", "f(a, b: 1, c: [1, 2])"},
        {"f()", "f()"},
        {"[]", "[]"},
        {"[[1], [], [2, 3]]", "[[1], [], [2, 3]]"},
        {"f(init: x, in: y)", "f(init: x, in: y)"},
        {"true && !false", "true && !false"},
        {"(((x)))", "x"},
        /* literals */
        {"\"a\\\"b\\\\c\\nd\\te\"", "\"a\\\"b\\\\c\\nd\\te\""},
        {"\"\"", "\"\""},
        {"\"caf\xc3\xa9 // not a comment /* */\"", "\"caf\xc3\xa9 // not a comment /* */\""},
        {"9223372036854775807", "9223372036854775807"},
        {"0", "0"},
        {"007", "7"},
        {"1e-5", "1e-5"},
        {"0.00001", "1e-5"},
        {"0.0001", "0.0001"},
        {"0.1", "0.1"},
        {"3.0", "3.0"},
        {"3.", "3.0"},
        {"0.0", "0.0"},
        {"2.5E+4", "25000.0"},
        {"1e15", "1000000000000000.0"},
        {"1e16", "1e16"},
        {"1.5e300", "1.5e300"},
        {"0.30000000000000004", "0.30000000000000004"},
        {"0.1e1", "1.0"},
        {"123456789.125", "123456789.125"},
        {"4.9e-324", "5e-324"},
        {"1.7976931348623157e308", "1.7976931348623157e308"},
        {"2.2250738585072014e-308", "2.2250738585072014e-308"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        Node *e = parse_expr(cases[i][0]);
        CHECK(e, "does not parse: %s", cases[i][0]);
        if (!e)
            continue;
        char *text = print_expr(e);
        CHECK(!strcmp(text, cases[i][1]), "%s printed as %s, want %s", cases[i][0], text, cases[i][1]);
        Node *back = parse_expr(text);
        CHECK(back && same_tree(e, back, 1), "%s: the printout %s reads as another tree", cases[i][0], text);
        free(text);
    }
}

/* Trees that the parser never makes (an importer's): negative literals,
 * LLONG_MIN, -0.0, infinities and NaN.  Each is written as an expression
 * that computes its value (the text is checked) and that parses. */
static void importer_literals(void)
{
    struct {
        Node *e;
        const char *want;
    } c[] = {
        {num(-5), "-5"},
        {bin(OP_MUL, ident("x"), num(-5)), "x * -5"},
        {bin(OP_SUB, ident("x"), num(-5)), "x - -5"},
        {bin(OP_MUL, num(-5), ident("x")), "-5 * x"},
        {un(OP_NEG, num(-5)), "- -5"},
        {un(OP_NEG, flt(-0.5)), "- -0.5"},
        {un(OP_NOT, num(-5)), "!-5"},
        {num(LLONG_MIN), "(-9223372036854775807 - 1)"},
        {bin(OP_SUB, ident("x"), num(LLONG_MIN)), "x - (-9223372036854775807 - 1)"},
        {flt(-0.0), "-0.0"},
        {flt(-1e-5), "-1e-5"},
        {flt(-2.5), "-2.5"},
        {flt(INFINITY), "(1.0 / 0.0)"},
        {flt(-INFINITY), "(-1.0 / 0.0)"},
        {flt(NAN), "(0.0 / 0.0)"},
        {bin(OP_MUL, flt(-INFINITY), ident("x")), "(-1.0 / 0.0) * x"},
        {flt(DBL_MAX), "1.7976931348623157e308"},
        {flt(DBL_TRUE_MIN), "5e-324"},
    };
    Node *m = mk(ND_METHOD);
    m->a = num(-5);
    m->name = "abs";
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        char *text = print_expr(c[i].e);
        CHECK(!strcmp(text, c[i].want), "printed as %s, want %s", text, c[i].want);
        CHECK(parse_expr(text) != NULL, "%s does not parse", text);
        free(text);
    }
    char *text = print_expr(m);
    CHECK(!strcmp(text, "(-5).abs()"), "printed as %s, want (-5).abs()", text);
    free(text);
    /* -5 reads back as the negation of 5 */
    Node *back = parse_expr("-5");
    CHECK(back && back->kind == ND_UNARY && back->op == OP_NEG && back->a->kind == ND_INT && back->a->ival == 5,
          "-5 is not -(5)");
}

/* ---- random trees ------------------------------------------------------------ */

static uint64_t rng = 0x9e3779b97f4a7c15u;

static uint64_t next_u64(void)
{
    /* xorshift64* */
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 0x2545f4914f6cdd1du;
}

static int below(int n) { return (int)(next_u64() % (uint64_t)n); }

static const char *const names[] = {"a", "b", "x", "in", "init", "_", "training"};

/* A random expression as the parser makes them: literals never negative
 * (the parser reads `-1` as a negation), every operator and postfix form,
 * calls of any callee. */
static Node *random_expr(int depth)
{
    int leaf = depth <= 0 || below(4) == 0;
    if (leaf) {
        switch (below(7)) {
        case 0: return num((long long)(next_u64() >> (1 + below(63))));
        case 1: {
            double v;
            do {
                uint64_t bits = next_u64() >> 1; /* sign bit clear */
                memcpy(&v, &bits, sizeof v);
            } while (!isfinite(v));
            return flt(below(2) ? v : (double)below(1000) / 8);
        }
        case 2: {
            Node *n = mk(ND_BOOL);
            n->ival = below(2);
            return n;
        }
        case 3: {
            Node *n = mk(ND_STR);
            n->str = below(2) ? "s" : "q\"\\\n\t";
            return n;
        }
        case 4: return mk(ND_SELF);
        default: return ident(names[below(sizeof names / sizeof names[0])]);
        }
    }
    static const Op binops[] = {OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MOD, OP_MATMUL, OP_EQ,
                                OP_NE,  OP_LT,  OP_LE,  OP_GT,  OP_GE,  OP_AND,    OP_OR};
    switch (below(9)) {
    case 0:
    case 1:
    case 2: return bin(binops[below(sizeof binops / sizeof binops[0])], random_expr(depth - 1), random_expr(depth - 1));
    case 3: return un(below(2) ? OP_NEG : OP_NOT, random_expr(depth - 1));
    case 4: {
        Node *n = mk(ND_COND);
        n->a = random_expr(depth - 1);
        n->b = random_expr(depth - 1);
        n->c = random_expr(depth - 1);
        return n;
    }
    case 5:
    case 6: {
        Node *n = mk(below(2) ? ND_CALL : ND_METHOD);
        n->a = random_expr(depth - 1);
        if (n->kind == ND_METHOD)
            n->name = "f";
        for (int i = below(3); i > 0; i--) {
            Node *arg = mk(ND_ARG);
            arg->name = below(2) ? "k" : NULL;
            arg->a = random_expr(depth - 1);
            ast_push(&n->list, arg);
        }
        return n;
    }
    case 7: {
        Node *n = mk(ND_INDEX);
        n->a = random_expr(depth - 1);
        n->b = random_expr(depth - 1);
        return n;
    }
    default: {
        Node *n = mk(ND_LIST);
        for (int i = below(3); i > 0; i--)
            ast_push(&n->list, random_expr(depth - 1));
        return n;
    }
    }
}

static void random_trees(void)
{
    int bad = 0;
    for (int i = 0; i < 20000 && bad < 5; i++) {
        Node *e = random_expr(1 + below(6));
        char *text = print_expr(e);
        Node *back = parse_expr(text);
        if (!back || !same_tree(e, back, 1)) {
            char *again = back ? print_expr(back) : NULL;
            CHECK(0, "random tree %d: %s reads back as %s", i, text, again ? again : "(a syntax error)");
            free(again);
            bad++;
        }
        free(text);
        if (i % 1000 == 999)
            ast_reset(); /* keeps the arena small; nothing else holds nodes */
    }
}

/* Every finite double reads back bit for bit, and in no more significant
 * digits than %.17g's shortest round trip needs. */
static void random_floats(void)
{
    int bad = 0;
    for (int i = 0; i < 100000 && bad < 5; i++) {
        double v;
        uint64_t bits = next_u64() >> 1;
        memcpy(&v, &bits, sizeof v);
        if (i % 4 == 1)
            v = (double)(next_u64() % 100000) / (double)(1 + next_u64() % 1000);
        if (!isfinite(v))
            continue;
        char *text = print_expr(flt(v));
        char *end;
        double back = strtod(text, &end);
        int digits = 0, shortest = 1;
        for (const char *p = text; *p && *p != 'e'; p++)
            digits += *p >= '0' && *p <= '9';
        char buf[40];
        for (; shortest < 17; shortest++) {
            snprintf(buf, sizeof buf, "%.*g", shortest, v);
            if (strtod(buf, NULL) == v)
                break;
        }
        /* positional forms carry zeros the shortest %g does not: 0.0001
         * (1 digit) is written with 5, 100.0 (1) with 4 */
        int slack = strchr(text, 'e') ? 0 : 22;
        if (*end || !same_double(v, back) || !strpbrk(text, ".e") || digits > shortest + slack) {
            CHECK(0, "%.17g printed as %s", v, text);
            bad++;
        }
        Node *n = parse_expr(text);
        if (!n || n->kind != ND_FLOAT || !same_double(n->fval, v)) {
            CHECK(0, "%.17g: %s does not lex as the same float", v, text);
            bad++;
        }
        free(text);
        if (i % 5000 == 4999)
            ast_reset();
    }
}

/* ---- whole files ---------------------------------------------------------------- */

/* Every construct, written untidily; `want` is its canonical form. */
static void layout(void)
{
    static const char src[] =
        "import \"a.nn\"; import \"lib/b.nn\"\n"
        "/// Doc of L.\n///\n///   indented\nlayer L { hparams { /// u\n"
        "units: int where units > 0; act: fn = relu; ks: [[int]] = [[1]]; t: layer = Dense\n"
        "f: fn; /// l\nl: layer; lf: [fn]\n"
        "r: float = 1e-3 where r >= 0.0 && r < 1.0; b: bool = !false }\n"
        "/// the weight\nparam w: f32[units, in] = glorot_uniform if units > 1\n"
        "state n: i64[] = zeros; state m: [units]\n"
        "inner: Dense(units: units) * 2 if b init normal(std: 0.01) from \"w.safetensors\" frozen\n"
        "list: [Dense(units: 1), t]\n"
        "/// f\nfn call(x: [..., _, in], y) -> [..., units] { let h = x; if training { h = -h }\n"
        "else if b { update m = m * (1 - r) } else {}\n"
        "for i in 0..2 + 1 { h = h + 1.0 }; summary \"a \\\"q\\\"\" = mean(h); return act(h @ w)\n"
        "}\n fn other() {} }\n"
        "layer K { hparams { k: layer }; k: k }\n"
        "model M { input x: f32[N, 4]; label y: i32[N]; l: L(units: 3)\n"
        "loss cross_entropy(self(x), y); /// acc\nmetric acc = accuracy(self(x), y) }\n"
        "layer Empty {}\n";
    static const char want[] =
        "import \"a.nn\"\n"
        "import \"lib/b.nn\"\n"
        "\n"
        "/// Doc of L.\n"
        "///\n"
        "///   indented\n"
        "layer L {\n"
        "    hparams {\n"
        "        /// u\n"
        "        units: int where units > 0\n"
        "        act: fn = relu\n"
        "        ks: [[int]] = [[1]]\n"
        "        t: layer = Dense\n"
        "        f: fn;\n"
        "        /// l\n"
        "        l: layer;\n"
        "        lf: [fn]\n"
        "        r: float = 0.001 where r >= 0.0 && r < 1.0\n"
        "        b: bool = !false\n"
        "    }\n"
        "    /// the weight\n"
        "    param w: [units, in] = glorot_uniform if units > 1\n"
        "    state n: i64[] = zeros\n"
        "    state m: [units]\n"
        "    inner: Dense(units: units) * 2 if b init normal(std: 0.01) from \"w.safetensors\" frozen\n"
        "    list: [Dense(units: 1), t]\n"
        "    /// f\n"
        "    fn call(x: [..., _, in], y) -> [..., units] {\n"
        "        let h = x\n"
        "        if training {\n"
        "            h = -h\n"
        "        } else if b {\n"
        "            update m = m * (1 - r)\n"
        "        } else {}\n"
        "        for i in 0..2 + 1 {\n"
        "            h = h + 1.0\n"
        "        }\n"
        "        summary \"a \\\"q\\\"\" = mean(h)\n"
        "        return act(h @ w)\n"
        "    }\n"
        "    fn other() {}\n"
        "}\n"
        "\n"
        "layer K {\n"
        "    hparams {\n"
        "        k: layer\n"
        "    }\n"
        "    k: k\n"
        "}\n"
        "\n"
        "model M {\n"
        "    input x: f32[N, 4]\n"
        "    label y: i32[N]\n"
        "    l: L(units: 3)\n"
        "    loss cross_entropy(self(x), y)\n"
        "    /// acc\n"
        "    metric acc = accuracy(self(x), y)\n"
        "}\n"
        "\n"
        "layer Empty {}\n";
    Node *f = parse_file(src);
    CHECK(f, "the layout source does not parse");
    if (!f)
        return;
    char *text = print_file(f);
    CHECK(!strcmp(text, want), "layout:\n--- got\n%s--- want\n%s", text, want);
    Node *back = parse_file(text);
    CHECK(back && same_tree(f, back, 1), "layout: the printout reads as another tree");
    free(text);
}

/* Node.comment: a trailing `// comment` on the line of a member or a
 * statement (the first line of one with a body), never inside it. */
static void comments(void)
{
    static const char src[] = "layer L {\n"
                              "    hparams { k: int = 1 }\n"
                              "    /// doc\n"
                              "    fc: Dense(units: k)\n"
                              "    fn call(x) {\n"
                              "        let h = fc(x)\n"
                              "        if k > 1 { h = h * 2 } else if k > 0 {} else { h = h + 1 }\n"
                              "        for i in 0..k {}\n"
                              "        return h\n"
                              "    }\n"
                              "}\n";
    static const char want[] = "layer L { // /model/L\n"
                               "    hparams { // hp\n"
                               "        k: int = 1 // the k\n"
                               "    }\n"
                               "    /// doc\n"
                               "    fc: Dense(units: k) // /fc/Gemm two lines\n"
                               "    fn call(x) { // call\n"
                               "        let h = fc(x) // let\n"
                               "        if k > 1 { // if\n"
                               "            h = h * 2 // /Mul_1\n"
                               "        } else if k > 0 { // else-if\n"
                               "        } else { // else\n"
                               "            h = h + 1\n"
                               "        }\n"
                               "        for i in 0..k { // for\n"
                               "        }\n"
                               "        return h // ret\n"
                               "    }\n"
                               "}\n";
    Node *f = parse_file(src);
    CHECK(f, "the comment source does not parse");
    if (!f)
        return;
    Node *l = f->list.v[0], *hp = l->list.v[0], *fc = l->list.v[1], *fn = l->list.v[2];
    Node *body = fn->b, *let = body->list.v[0], *if1 = body->list.v[1], *loop = body->list.v[2], *ret = body->list.v[3];
    l->comment = "/model/L";
    hp->comment = "hp";
    hp->list.v[0]->comment = "the k";
    fc->comment = "/fc/Gemm\ntwo\rlines";
    fn->comment = "call";
    let->comment = "let";
    if1->comment = "if";
    if1->b->list.v[0]->comment = "/Mul_1";
    if1->c->comment = "else-if";
    if1->c->c->comment = "else";
    loop->comment = "for";
    ret->comment = "ret";
    char *text = print_file(f);
    CHECK(!strcmp(text, want), "comments:\n--- got\n%s--- want\n%s", text, want);
    Node *back = parse_file(text);
    CHECK(back && same_tree(f, back, 0), "comments: the printout reads as another tree");
    CHECK(back && !same_tree(f, back, 1), "same_tree ignores comments even when asked");
    /* an empty comment is none */
    ret->comment = "";
    char *t2 = print_file(f);
    CHECK(strstr(t2, "return h\n"), "an empty comment is written:\n%s", t2);
    free(t2);
    free(text);
}

/* parse -> print -> parse gives the same tree; print again, the same text */
static int roundtrip_file(const char *path)
{
    FILE *fp = fopen(path, "rb");
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    for (int c; fp && (c = getc(fp)) != EOF;)
        putc(c, mem);
    fclose(mem);
    if (!fp) {
        CHECK(0, "cannot read %s", path);
        free(buf);
        return 0;
    }
    fclose(fp);
    SrcFile *f = src(path, buf, len);
    free(buf);
    int errors = diag_errors();
    Node *tree = ast_parse(f);
    if (!tree || diag_errors() > errors) {
        CHECK(0, "%s does not parse", path); /* the caller names only files that parse */
        return 0;
    }
    char *text = print_file(tree);
    Node *back = parse_file(text);
    CHECK(back && same_tree(tree, back, 1), "%s: the printout reads as another tree", path);
    if (back) {
        char *again = print_file(back);
        CHECK(!strcmp(text, again), "%s: printing the printout changes it", path);
        free(again);
    }
    free(text);
    return 1;
}

int main(int argc, char **argv)
{
    expr_cases();
    importer_literals();
    layout();
    comments();
    random_trees();
    random_floats();
    int files = 0;
    for (int i = 1; i < argc; i++) {
        files += roundtrip_file(argv[i]);
        ast_reset();
    }
    if (argc > 1 && files == 0)
        CHECK(0, "none of the %d files parses", argc - 1);
    printf("source_test: %d failures (%d files)\n", failures, files);
    return failures ? 1 : 0;
}
