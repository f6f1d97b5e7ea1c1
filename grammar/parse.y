/* parse.y — the grammar of the nn language (spec §2–§6), for lemon.
 *
 * Each rule's action is one call to a node builder in the %include section
 * below; the builders set the Node members listed in ast.h and nothing
 * else.  Lists (members, statements, hparams, the whole file) are items
 * separated by `;`, where an item may be empty, so that blank statements
 * and the `;` the lexer makes from newlines are allowed anywhere.
 *
 * Syntax errors.  Before each token is fed, the driver (drive, at the
 * end) checks that the parser can take it, by replaying lemon's tables on
 * the state stack.  This happens before lemon's own default reductions, so
 * the expected tokens are those of the real context ("expected member or
 * '}'", not just "expected ';'"), and the message names them.  Lemon then
 * pops to the nearest member, statement, hparam or declaration list (the
 * `error` rules) and the driver skips tokens up to the next `;`, newline or
 * `}` at that level, so that one run reports every independent error.
 * (`list ::= list error` catches junk right after a complete item; without
 * it lemon would pop the list itself and lose the items before.)
 *
 * The same grammar reads a single expression, a -D value from the command
 * line: the driver then feeds a token no source can contain, EXPR_START,
 * which selects the start rule `file ::= EXPR_START expr`.
 *
 * There is no %destructor: nodes live in the arena and are never freed
 * (ast.h), so values popped during error recovery need no cleanup.
 */

%name ast_lemon
%token_prefix TK_
%token_type {Token}
%default_type {Node *}
%extra_context {Parser *ctx}
%stack_size 2000
%start_symbol file

%syntax_error { syntax_error(ctx, yypParser, yymajor, &yyminor); }
%stack_overflow { too_deep(ctx); }

/* The order of the token codes (parse.h); lex.re's tables are indexed by
 * them with designated initializers, so the order is free.  EXPR_START is
 * never lexed: the driver feeds it first to parse one expression instead
 * of a file (ast_parse_expr). */
%token SEMI IMPORT LAYER MODEL HPARAMS PARAM STATE INPUT LABEL FN LET RETURN
       IF ELSE FOR IN WHERE LOSS METRIC SUMMARY UPDATE INIT FROM FROZEN TRUE
       FALSE SELF IDENT INT FLOAT STRING PLUS MINUS STAR SLASH PERCENT AT EQEQ
       NE LT LE GT GE ANDAND OROR NOT QUESTION EQ COLON COMMA DOT DOTDOT
       ELLIPSIS ARROW LPAREN RPAREN LBRACKET RBRACKET LBRACE RBRACE
       EXPR_START.

/* `in` is the dimension name of spec §4 (`[units, in]`), `init` an
 * hparam of Dense (§8) and `where` a primitive (`where(c, a, b)`): where
 * the keyword cannot appear, they are names. */
%fallback IDENT IN INIT WHERE.

/* §5, loosest first.  `?:` is written out as rules (expr vs bexpr) so that
 * `:` needs no precedence of its own: it also separates names from types. */
%left OROR.
%left ANDAND.
%left EQEQ NE LT LE GT GE.
%left PLUS MINUS.
%left STAR SLASH PERCENT AT.
%right NOT.

%include {
#include <stdlib.h>
#include <string.h>

#include "ast.h"
#include "diag.h"
#include "parse.h"   /* TK_ codes: lemon defines them only after %include */

/* The %extra_context: what the actions and the error handler share. */
typedef struct Parser {
    const SrcFile *file;
    Node *root;          /* ND_FILE, filled as declarations are reduced */
    Token tok;           /* the token being fed */
    int error;           /* `tok` does not fit: a syntax error */
    int reported;        /* ...and the driver has already reported it */
    int stop;            /* give up: the parser stack overflowed */
    int too_deep;        /* an expression was cut (see expr_done) */
    Node *decl;          /* the layer or model whose members are parsed */
    Node *first_hparams, *first_loss;
    int start;           /* TK_EXPR_START when parsing one expression */
    Node *expr;          /* ...and the expression */
} Parser;

struct yyParser;
static void syntax_error(Parser *p, struct yyParser *yyp, int major,
                         const Token *tok);

enum { MAX_DEPTH = 1000 };   /* expression height; see Node.depth */

/* ---- helpers ---------------------------------------------------------- */

static Node *node(NodeKind kind, const Token *t)
{
    return ast_new(kind, t->loc);
}

/* The source an expression covers.  Every node's loc is its whole
 * construct except ND_BINARY's, which is the operator (ast.h). */
static Loc extent(const Node *n)
{
    const Node *l = n, *r = n;
    while (l->kind == ND_BINARY && l->a)
        l = l->a;
    while (r->kind == ND_BINARY && r->b)
        r = r->b;
    return ast_span(l->loc, r->loc);
}

static Loc end_of(const Node *n, Loc fallback)
{
    return n ? extent(n) : fallback;
}

/* %stack_overflow: reported once, since the parse stops there */
static void too_deep(Parser *p)
{
    diag_error(p->tok.loc, "too deeply nested");
    p->stop = 1;
}

/* Sets the height of an expression from its children; a tree that is too
 * tall (`a+a+a+…` many thousand times) is cut down to a leaf, so that no
 * later recursive walk can run out of stack. */
static Node *expr_done(Parser *p, Node *n)
{
    int d = 0;
    Node *kids[3] = {n->a, n->b, n->c};
    for (int i = 0; i < 3; i++)
        if (kids[i] && kids[i]->depth > d)
            d = kids[i]->depth;
    for (int i = 0; i < n->list.n; i++)
        if (n->list.v[i] && n->list.v[i]->depth > d)
            d = n->list.v[i]->depth;
    n->depth = d + 1;
    if (n->depth > MAX_DEPTH) {
        if (!p->too_deep)
            diag_error(n->loc, "expression is nested too deeply (more than "
                       "%d levels)", MAX_DEPTH);
        p->too_deep = 1;
        *n = (Node){.kind = ND_INT, .loc = n->loc, .depth = 1};
    }
    return n;
}

/* ---- lists ---- */

static Node *list_new(Node *first)
{
    Node *l = ast_new(ND_LIST, first ? first->loc : (Loc){0});
    if (first)
        ast_push(&l->list, first);
    return l;
}

static Node *list_add(Node *l, Node *item)
{
    if (item)
        ast_push(&l->list, item);
    return l;
}

/* [ items ] : the bracketed ND_LIST */
static Node *list_close(Parser *p, Node *l, const Token *lb, const Token *rb)
{
    l->loc = ast_span(lb->loc, rb->loc);
    return expr_done(p, l);
}

/* ---- declarations ---- */

static void add_decl(Parser *p, Node *decl)
{
    if (decl)
        ast_push(&p->root->list, decl);
}

static Node *import_decl(const Token *kw, const Token *path)
{
    Node *n = ast_new(ND_IMPORT, ast_span(kw->loc, path->loc));
    n->str = path->str;
    return n;
}

/* layer/model Name: the node is made here, before the members, so that
 * each member can be checked against it as soon as it is parsed. */
static Node *decl_head(Parser *p, NodeKind kind, const Token *kw,
                       const Token *name)
{
    Node *n = node(kind, kw);
    n->name = name->str;
    n->name_loc = name->loc;
    n->doc = kw->doc;
    p->decl = n;
    p->first_hparams = p->first_loss = NULL;
    return n;
}

static Node *decl_body(Node *head, Node *members, const Token *rb)
{
    head->loc = ast_span(head->loc, rb->loc);
    head->list = members->list;
    return head;
}

static const char *member_word(NodeKind k)
{
    switch (k) {
    case ND_INPUT: return "input";
    case ND_LABEL: return "label";
    case ND_LOSS: return "loss";
    case ND_METRIC: return "metric";
    default: return "hparams";
    }
}

/* Which members a declaration may hold is checked here rather than in the
 * grammar, for better messages than a syntax error: only a model has
 * input, label, loss and metric, and hparams and loss come at most once. */
static Node *check_member(Parser *p, Node *m)
{
    Node *d = p->decl;
    if (!m || !d)
        return m;
    const char *word = member_word(m->kind);
    Loc at = {m->loc.file, m->loc.off, (int)strlen(word)};   /* keyword */
    Node **first = m->kind == ND_HPARAMS ? &p->first_hparams :
                   m->kind == ND_LOSS ? &p->first_loss : NULL;
    if (d->kind == ND_LAYER && (m->kind == ND_INPUT || m->kind == ND_LABEL ||
                                m->kind == ND_LOSS || m->kind == ND_METRIC)) {
        diag_error(at, "'%s' is only allowed in a model", word);
        diag_note(d->name_loc, "'%s' is a layer", d->name);
    } else if (first && *first) {
        diag_error(at, "more than one '%s' in '%s'", word, d->name);
        diag_note((Loc){at.file, (*first)->loc.off, at.len},
                  "the first one is here");
    } else if (first) {
        *first = m;
    }
    return m;
}

/* ---- members ---- */

static Node *hparams_block(const Token *kw, Node *items, const Token *rb)
{
    Node *n = ast_new(ND_HPARAMS, ast_span(kw->loc, rb->loc));
    n->list = items->list;
    return n;
}

/* name: type [= default] [where constraint] */
static Node *hparam(const Token *name, Node *type, Node *def, Node *where)
{
    Node *n = ast_new(ND_HPARAM, ast_span(name->loc,
                      end_of(where, end_of(def, type->loc))));
    n->name = name->str;
    n->name_loc = name->loc;
    n->doc = name->doc;
    n->a = type;
    n->b = def;
    n->c = where;
    return n;
}

/* int, float, bool (plain names), fn, layer (keywords), [T] */
static Node *type_name(const Token *t)
{
    static const char *const names[] = {"int", "float", "bool", "fn", "layer"};
    Node *n = node(ND_TYPE, t);
    n->name = t->kind == TK_FN ? "fn" : t->kind == TK_LAYER ? "layer" : t->str;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(n->name, names[i]) == 0)
            return n;
    const char *near = diag_closest(n->name, names, 5);
    if (near)
        diag_error(t->loc, "unknown hparam type '%s'; did you mean '%s'?",
                   n->name, near);
    else
        diag_error(t->loc, "unknown hparam type '%s' (expected int, float, "
                   "bool, fn, layer or a list [T])", n->name);
    return n;
}

static Node *type_list(const Token *lb, Node *elem, const Token *rb)
{
    Node *n = ast_new(ND_TYPE, ast_span(lb->loc, rb->loc));
    n->name = "list";
    n->a = elem;
    return n;
}

/* name: layer-expr [if e] [init e] [from "path"] [frozen] */
static Node *field(const Token *name, Node *layer, Node *cond, Node *init,
                   Node *from, const Token *frozen)
{
    Loc end = frozen->kind ? frozen->loc :
              end_of(from, end_of(init, end_of(cond, extent(layer))));
    Node *n = ast_new(ND_FIELD, ast_span(name->loc, end));
    n->name = name->str;
    n->name_loc = name->loc;
    n->doc = name->doc;
    n->a = layer;
    n->b = cond;
    n->c = init;
    n->str = from ? from->str : NULL;
    n->flags = frozen->kind ? FIELD_FROZEN : 0;
    return n;
}

/* param|state name: [dtype][dims] [= init] [if e].  A param is f32; a
 * state is f32 or an i64 counter (BatchNorm's num_batches_tracked), whose
 * dtype is kept in n->str. */
static Node *tensor(NodeKind kind, const Token *kw, const Token *name,
                    const Token *dtype, Node *shape, Node *init, Node *cond)
{
    Node *n = ast_new(kind, ast_span(kw->loc,
                      end_of(cond, end_of(init, shape->loc))));
    n->name = name->str;
    n->name_loc = name->loc;
    n->doc = kw->doc;
    n->a = shape;
    n->b = init;
    n->c = cond;
    if (dtype && !strcmp(dtype->str, "i64") && kind == ND_STATE)
        n->str = "i64";
    else if (dtype && strcmp(dtype->str, "f32") != 0)
        diag_error(dtype->loc, kind == ND_STATE
                   ? "unknown dtype '%s' for a state (expected f32 or i64)"
                   : "unknown dtype '%s' for a param (params are f32)",
                   dtype->str);
    return n;
}

/* input|label name: dtype[dims] */
static Node *io(NodeKind kind, const Token *kw, const Token *name,
                const Token *dtype, Node *shape)
{
    Node *n = ast_new(kind, ast_span(kw->loc, shape->loc));
    n->name = name->str;
    n->name_loc = name->loc;
    n->doc = kw->doc;
    n->str = dtype->str;
    n->a = shape;
    if (strcmp(dtype->str, "f32") != 0 && strcmp(dtype->str, "i32") != 0)
        diag_error(dtype->loc, "unknown dtype '%s' (expected f32 or i32)",
                   dtype->str);
    return n;
}

/* fn name(params) [-> pattern] block */
static Node *fn(const Token *kw, const Token *name, Node *params, Node *ret,
                Node *body)
{
    Node *n = ast_new(ND_FN, ast_span(kw->loc, body->loc));
    n->name = name->str;
    n->name_loc = name->loc;
    n->doc = kw->doc;
    n->list = params->list;
    n->a = ret;
    n->b = body;
    return n;
}

static Node *fn_param(const Token *name, Node *pattern)
{
    Node *n = ast_new(ND_FNPARAM, ast_span(name->loc, end_of(pattern, name->loc)));
    n->name = name->str;
    n->name_loc = name->loc;
    n->a = pattern;
    return n;
}

static Node *loss(const Token *kw, Node *e)
{
    Node *n = ast_new(ND_LOSS, ast_span(kw->loc, extent(e)));
    n->doc = kw->doc;
    n->a = e;
    return n;
}

/* let, assignment, update, metric: `name = e` after an optional keyword */
static Node *named(NodeKind kind, const Token *kw, const Token *name, Node *e)
{
    Node *n = ast_new(kind, ast_span(kw ? kw->loc : name->loc, extent(e)));
    n->name = name->str;
    n->name_loc = name->loc;
    n->doc = kw ? kw->doc : NULL;
    n->a = e;
    return n;
}

/* ---- statements ---- */

static Node *block(Node *stmts, const Token *lb, const Token *rb)
{
    Node *n = ast_new(ND_BLOCK, ast_span(lb->loc, rb->loc));
    n->list = stmts->list;
    return n;
}

static Node *if_stmt(const Token *kw, Node *cond, Node *then, Node *els)
{
    Node *n = ast_new(ND_IF, ast_span(kw->loc, end_of(els, then->loc)));
    n->a = cond;
    n->b = then;
    n->c = els;
    return n;
}

static Node *for_stmt(const Token *kw, const Token *var, Node *from, Node *to,
                      Node *body)
{
    Node *n = ast_new(ND_FOR, ast_span(kw->loc, body->loc));
    n->name = var->str;
    n->name_loc = var->loc;
    n->a = from;
    n->b = to;
    n->c = body;
    return n;
}

static Node *summary(const Token *kw, const Token *name, Node *e)
{
    Node *n = ast_new(ND_SUMMARY, ast_span(kw->loc, extent(e)));
    n->str = name->str;
    n->name_loc = name->loc;
    n->a = e;
    return n;
}

static Node *return_stmt(const Token *kw, Node *e)
{
    Node *n = ast_new(ND_RETURN, ast_span(kw->loc, extent(e)));
    n->a = e;
    return n;
}

/* ---- expressions ---- */

static Node *literal(Parser *p, NodeKind kind, const Token *t)
{
    Node *n = node(kind, t);
    switch (kind) {
    case ND_INT: n->ival = t->ival; break;
    case ND_FLOAT: n->fval = t->fval; break;
    case ND_STR: n->str = t->str; break;
    case ND_BOOL: n->ival = t->kind == TK_TRUE; break;
    case ND_IDENT: n->name = t->str; n->name_loc = t->loc; break;
    default: break;
    }
    return expr_done(p, n);
}

static Node *binary(Parser *p, Op op, const Token *t, Node *a, Node *b)
{
    Node *n = node(ND_BINARY, t);
    n->op = op;
    n->a = a;
    n->b = b;
    return expr_done(p, n);
}

static Node *unary(Parser *p, Op op, const Token *t, Node *a)
{
    Node *n = ast_new(ND_UNARY, ast_span(t->loc, extent(a)));
    n->op = op;
    n->a = a;
    return expr_done(p, n);
}

static Node *cond(Parser *p, Node *c, Node *a, Node *b)
{
    Node *n = ast_new(ND_COND, ast_span(extent(c), extent(b)));
    n->a = c;
    n->b = a;
    n->c = b;
    return expr_done(p, n);
}

/* f(args) and x.f(args); `args` is an ND_LIST of ND_ARG */
static Node *call(Parser *p, Node *f, const Token *name, Node *args,
                  const Token *rp)
{
    Node *n = ast_new(name ? ND_METHOD : ND_CALL, ast_span(extent(f), rp->loc));
    n->a = f;
    if (name) {
        n->name = name->str;
        n->name_loc = name->loc;
    }
    n->list = args->list;
    return expr_done(p, n);
}

static Node *arg(Parser *p, const Token *name, Node *e)
{
    Node *n = ast_new(ND_ARG, name ? ast_span(name->loc, extent(e)) : extent(e));
    if (name) {
        n->name = name->str;
        n->name_loc = name->loc;
    }
    n->a = e;
    return expr_done(p, n);
}

static Node *index_expr(Parser *p, Node *a, Node *i, const Token *rb)
{
    Node *n = ast_new(ND_INDEX, ast_span(extent(a), rb->loc));
    n->a = a;
    n->b = i;
    return expr_done(p, n);
}
}

/* ======================================================================
 * Files
 * ====================================================================== */

// file = decl? (";" decl?)*
file ::= decls.
// or one expression, for a -D value (the driver feeds EXPR_START first)
file ::= EXPR_START expr(E).                          { ctx->expr = E; }
decls ::= decl_opt.
decls ::= decls SEMI decl_opt.
decls ::= decls error.
decl_opt ::= .
decl_opt ::= decl(D).                                 { add_decl(ctx, D); }

// decl = "import" STRING
decl(A) ::= IMPORT(K) STRING(S).                      { A = import_decl(&K, &S); }
// decl = ("layer" | "model") IDENT "{" members "}"
decl(A) ::= decl_head(H) LBRACE members(M) RBRACE(R). { A = decl_body(H, M, &R); }
decl_head(A) ::= LAYER(K) IDENT(N).                   { A = decl_head(ctx, ND_LAYER, &K, &N); }
decl_head(A) ::= MODEL(K) IDENT(N).                   { A = decl_head(ctx, ND_MODEL, &K, &N); }
decl(A) ::= error.                                    { A = NULL; }

/* ======================================================================
 * Members (spec §3, §4, §6)
 * ====================================================================== */

// members = member? (";" member?)*
members(A) ::= member_opt(M).                         { A = list_new(M); }
members(A) ::= members(L) SEMI member_opt(M).         { A = list_add(L, M); }
members(A) ::= members(L) error.                      { A = L; }
member_opt(A) ::= .                                   { A = NULL; }
member_opt(A) ::= member(M).                          { A = check_member(ctx, M); }

// member = "hparams" "{" hparam? (";" hparam?)* "}"
member(A) ::= HPARAMS(K) LBRACE hparams(L) RBRACE(R). { A = hparams_block(&K, L, &R); }
hparams(A) ::= hparam_opt(H).                         { A = list_new(H); }
hparams(A) ::= hparams(L) SEMI hparam_opt(H).         { A = list_add(L, H); }
hparams(A) ::= hparams(L) error.                      { A = L; }
hparam_opt(A) ::= .                                   { A = NULL; }
hparam_opt(A) ::= hparam(H).                          { A = H; }

// hparam = IDENT ":" type ["=" expr] ["where" expr]
hparam(A) ::= IDENT(N) COLON type(T) opt_eq(D) opt_where(W).
                                                      { A = hparam(&N, T, D, W); }
hparam(A) ::= error.                                  { A = NULL; }

// type = IDENT | "fn" | "layer" | "[" type "]"
type(A) ::= IDENT(T).                                 { A = type_name(&T); }
type(A) ::= FN(T).                                    { A = type_name(&T); }
type(A) ::= LAYER(T).                                 { A = type_name(&T); }
type(A) ::= LBRACKET(L) type(E) RBRACKET(R).          { A = type_list(&L, E, &R); }

// member = IDENT ":" expr ["if" expr] ["init" expr] ["from" STRING] ["frozen"]
member(A) ::= IDENT(N) COLON expr(E) opt_if(C) opt_init(I) opt_from(F) opt_frozen(Z).
                                                { A = field(&N, E, C, I, F, &Z); }
opt_init(A) ::= .                                     { A = NULL; }
opt_init(A) ::= INIT expr(E).                         { A = E; }
opt_from(A) ::= .                                     { A = NULL; }
opt_from(A) ::= FROM STRING(S).                       { A = literal(ctx, ND_STR, &S); }
%type opt_frozen {Token}
opt_frozen(A) ::= .                                   { A = (Token){0}; }
opt_frozen(A) ::= FROZEN(K).                          { A = K; }

// member = ("param" | "state") IDENT ":" [IDENT] brackets ["=" expr] ["if" expr]
member(A) ::= PARAM(K) IDENT(N) COLON brackets(S) opt_eq(I) opt_if(C).
                                    { A = tensor(ND_PARAM, &K, &N, NULL, S, I, C); }
member(A) ::= PARAM(K) IDENT(N) COLON IDENT(T) brackets(S) opt_eq(I) opt_if(C).
                                    { A = tensor(ND_PARAM, &K, &N, &T, S, I, C); }
member(A) ::= STATE(K) IDENT(N) COLON brackets(S) opt_eq(I) opt_if(C).
                                    { A = tensor(ND_STATE, &K, &N, NULL, S, I, C); }
member(A) ::= STATE(K) IDENT(N) COLON IDENT(T) brackets(S) opt_eq(I) opt_if(C).
                                    { A = tensor(ND_STATE, &K, &N, &T, S, I, C); }

// member = ("input" | "label") IDENT ":" IDENT brackets
member(A) ::= INPUT(K) IDENT(N) COLON IDENT(T) brackets(S).
                                    { A = io(ND_INPUT, &K, &N, &T, S); }
member(A) ::= LABEL(K) IDENT(N) COLON IDENT(T) brackets(S).
                                    { A = io(ND_LABEL, &K, &N, &T, S); }

// member = "fn" IDENT "(" fnparams ")" ["->" pattern] block
member(A) ::= FN(K) IDENT(N) LPAREN fnparams(P) RPAREN opt_ret(R) block(B).
                                    { A = fn(&K, &N, P, R, B); }
fnparams(A) ::= .                                     { A = list_new(NULL); }
fnparams(A) ::= fnparam_list(L).                      { A = L; }
fnparams(A) ::= fnparam_list(L) COMMA.                { A = L; }
fnparam_list(A) ::= fnparam(P).                       { A = list_new(P); }
fnparam_list(A) ::= fnparam_list(L) COMMA fnparam(P). { A = list_add(L, P); }
// fnparam = IDENT [":" pattern]
fnparam(A) ::= IDENT(N).                              { A = fn_param(&N, NULL); }
fnparam(A) ::= IDENT(N) COLON pattern(P).             { A = fn_param(&N, P); }
opt_ret(A) ::= .                                      { A = NULL; }
opt_ret(A) ::= ARROW pattern(P).                      { A = P; }

// pattern = "[" (expr | "...") ("," (expr | "..."))* [","] "]"
pattern(A) ::= LBRACKET(L) pattern_elems(E) RBRACKET(R).
                                                      { A = list_close(ctx, E, &L, &R); }
pattern_elems(A) ::= .                                { A = list_new(NULL); }
pattern_elems(A) ::= pattern_list(L).                 { A = L; }
pattern_elems(A) ::= pattern_list(L) COMMA.           { A = L; }
pattern_list(A) ::= pattern_elem(E).                  { A = list_new(E); }
pattern_list(A) ::= pattern_list(L) COMMA pattern_elem(E).
                                                      { A = list_add(L, E); }
pattern_elem(A) ::= expr(E).                          { A = E; }
pattern_elem(A) ::= ELLIPSIS(T).                      { A = literal(ctx, ND_ELLIPSIS, &T); }

// member = "loss" expr | "metric" IDENT "=" expr
member(A) ::= LOSS(K) expr(E).                        { A = loss(&K, E); }
member(A) ::= METRIC(K) IDENT(N) EQ expr(E).          { A = named(ND_METRIC, &K, &N, E); }
member(A) ::= error.                                  { A = NULL; }

opt_eq(A) ::= .                                       { A = NULL; }
opt_eq(A) ::= EQ expr(E).                             { A = E; }
opt_where(A) ::= .                                    { A = NULL; }
opt_where(A) ::= WHERE expr(E).                       { A = E; }
opt_if(A) ::= .                                       { A = NULL; }
opt_if(A) ::= IF expr(E).                             { A = E; }

/* ======================================================================
 * Statements (spec §4, fn call)
 * ====================================================================== */

// block = "{" stmt? (";" stmt?)* "}"
block(A) ::= LBRACE(L) stmts(S) RBRACE(R).            { A = block(S, &L, &R); }
stmts(A) ::= stmt_opt(S).                             { A = list_new(S); }
stmts(A) ::= stmts(L) SEMI stmt_opt(S).               { A = list_add(L, S); }
stmts(A) ::= stmts(L) error.                          { A = L; }
stmt_opt(A) ::= .                                     { A = NULL; }
stmt_opt(A) ::= stmt(S).                              { A = S; }

// stmt = "let" IDENT "=" expr | IDENT "=" expr
stmt(A) ::= LET(K) IDENT(N) EQ expr(E).               { A = named(ND_LET, &K, &N, E); }
stmt(A) ::= IDENT(N) EQ expr(E).                      { A = named(ND_ASSIGN, NULL, &N, E); }
// stmt = "if" expr block ["else" (block | if)]
stmt(A) ::= ifstmt(S).                                    { A = S; }
ifstmt(A) ::= IF(K) expr(C) block(T).                     { A = if_stmt(&K, C, T, NULL); }
ifstmt(A) ::= IF(K) expr(C) block(T) ELSE block(E).       { A = if_stmt(&K, C, T, E); }
ifstmt(A) ::= IF(K) expr(C) block(T) ELSE ifstmt(E).     { A = if_stmt(&K, C, T, E); }
// stmt = "for" IDENT "in" expr ".." expr block
stmt(A) ::= FOR(K) IDENT(N) IN expr(F) DOTDOT expr(T) block(B).
                                                      { A = for_stmt(&K, &N, F, T, B); }
// stmt = "update" IDENT "=" expr | "summary" STRING "=" expr | "return" expr
stmt(A) ::= UPDATE(K) IDENT(N) EQ expr(E).            { A = named(ND_UPDATE, &K, &N, E); }
stmt(A) ::= SUMMARY(K) STRING(S) EQ expr(E).          { A = summary(&K, &S, E); }
stmt(A) ::= RETURN(K) expr(E).                        { A = return_stmt(&K, E); }
stmt(A) ::= error.                                    { A = NULL; }

/* ======================================================================
 * Expressions (spec §5)
 * ====================================================================== */

// expr = bexpr ["?" expr ":" expr]
expr(A) ::= bexpr(E).                                 { A = E; }
expr(A) ::= bexpr(C) QUESTION expr(T) COLON expr(E).  { A = cond(ctx, C, T, E); }

// bexpr = bexpr binop bexpr | ("-" | "!") bexpr | postfix
bexpr(A) ::= bexpr(L) OROR(O) bexpr(R).               { A = binary(ctx, OP_OR, &O, L, R); }
bexpr(A) ::= bexpr(L) ANDAND(O) bexpr(R).             { A = binary(ctx, OP_AND, &O, L, R); }
bexpr(A) ::= bexpr(L) EQEQ(O) bexpr(R).               { A = binary(ctx, OP_EQ, &O, L, R); }
bexpr(A) ::= bexpr(L) NE(O) bexpr(R).                 { A = binary(ctx, OP_NE, &O, L, R); }
bexpr(A) ::= bexpr(L) LT(O) bexpr(R).                 { A = binary(ctx, OP_LT, &O, L, R); }
bexpr(A) ::= bexpr(L) LE(O) bexpr(R).                 { A = binary(ctx, OP_LE, &O, L, R); }
bexpr(A) ::= bexpr(L) GT(O) bexpr(R).                 { A = binary(ctx, OP_GT, &O, L, R); }
bexpr(A) ::= bexpr(L) GE(O) bexpr(R).                 { A = binary(ctx, OP_GE, &O, L, R); }
bexpr(A) ::= bexpr(L) PLUS(O) bexpr(R).               { A = binary(ctx, OP_ADD, &O, L, R); }
bexpr(A) ::= bexpr(L) MINUS(O) bexpr(R).              { A = binary(ctx, OP_SUB, &O, L, R); }
bexpr(A) ::= bexpr(L) STAR(O) bexpr(R).               { A = binary(ctx, OP_MUL, &O, L, R); }
bexpr(A) ::= bexpr(L) SLASH(O) bexpr(R).              { A = binary(ctx, OP_DIV, &O, L, R); }
bexpr(A) ::= bexpr(L) PERCENT(O) bexpr(R).            { A = binary(ctx, OP_MOD, &O, L, R); }
bexpr(A) ::= bexpr(L) AT(O) bexpr(R).                 { A = binary(ctx, OP_MATMUL, &O, L, R); }
bexpr(A) ::= MINUS(O) bexpr(E). [NOT]                 { A = unary(ctx, OP_NEG, &O, E); }
bexpr(A) ::= NOT(O) bexpr(E).                         { A = unary(ctx, OP_NOT, &O, E); }
bexpr(A) ::= postfix(E).                              { A = E; }

// postfix = postfix "(" args ")" | postfix "." IDENT "(" args ")"
//         | postfix "[" expr "]" | primary
postfix(A) ::= postfix(F) LPAREN args(L) RPAREN(R).   { A = call(ctx, F, NULL, L, &R); }
postfix(A) ::= postfix(X) DOT IDENT(N) LPAREN args(L) RPAREN(R).
                                                      { A = call(ctx, X, &N, L, &R); }
postfix(A) ::= postfix(X) LBRACKET expr(I) RBRACKET(R).
                                                      { A = index_expr(ctx, X, I, &R); }
postfix(A) ::= primary(E).                            { A = E; }

// args = (arg ("," arg)* [","])?      arg = [IDENT ":"] expr
args(A) ::= .                                         { A = list_new(NULL); }
args(A) ::= arg_list(L).                              { A = L; }
args(A) ::= arg_list(L) COMMA.                        { A = L; }
arg_list(A) ::= arg(E).                               { A = list_new(E); }
arg_list(A) ::= arg_list(L) COMMA arg(E).             { A = list_add(L, E); }
arg(A) ::= expr(E).                                   { A = arg(ctx, NULL, E); }
arg(A) ::= IDENT(N) COLON expr(E).                    { A = arg(ctx, &N, E); }

// primary = INT | FLOAT | STRING | "true" | "false" | IDENT | "self"
//         | "(" expr ")" | brackets
primary(A) ::= INT(T).                                { A = literal(ctx, ND_INT, &T); }
primary(A) ::= FLOAT(T).                              { A = literal(ctx, ND_FLOAT, &T); }
primary(A) ::= STRING(T).                             { A = literal(ctx, ND_STR, &T); }
primary(A) ::= TRUE(T).                               { A = literal(ctx, ND_BOOL, &T); }
primary(A) ::= FALSE(T).                              { A = literal(ctx, ND_BOOL, &T); }
primary(A) ::= IDENT(T).                              { A = literal(ctx, ND_IDENT, &T); }
primary(A) ::= SELF(T).                               { A = literal(ctx, ND_SELF, &T); }
primary(A) ::= LPAREN expr(E) RPAREN.                 { A = E; }
primary(A) ::= brackets(E).                           { A = E; }

// brackets = "[" (expr ("," expr)* [","])? "]"     (list literals, shapes)
brackets(A) ::= LBRACKET(L) exprs(E) RBRACKET(R).     { A = list_close(ctx, E, &L, &R); }
exprs(A) ::= .                                        { A = list_new(NULL); }
exprs(A) ::= expr_list(L).                            { A = L; }
exprs(A) ::= expr_list(L) COMMA.                      { A = L; }
expr_list(A) ::= expr(E).                             { A = list_new(E); }
expr_list(A) ::= expr_list(L) COMMA expr(E).          { A = list_add(L, E); }

/* ======================================================================
 * Error messages and the driver
 * ====================================================================== */

%code {

/* Could the parser take `tok` now?  Replays lemon's tables on a copy of
 * the top of the state stack: reductions pop states (first the copied
 * ones, then, read-only, the real ones below) and push their gotos. */
static int accepts(const yyParser *yyp, int tok)
{
    enum { EXTRA = 64 };
    YYACTIONTYPE extra[EXTRA];
    int nextra = 0;
    const yyStackEntry *base = yyp->yytos;   /* real entries at and below */

    for (int steps = 0; steps < 10000; steps++) {
        YYACTIONTYPE state = nextra ? extra[nextra - 1] : base->stateno;
        YYACTIONTYPE act = yy_find_shift_action((YYCODETYPE)tok, state);
        if (act <= YY_MAX_SHIFTREDUCE || act == YY_ACCEPT_ACTION)
            return 1;
        if (act < YY_MIN_REDUCE)
            return 0;                 /* error */
        int rule = act - YY_MIN_REDUCE;
        for (int pop = -yyRuleInfoNRhs[rule]; pop > 0; pop--) {
            if (nextra > 0)
                nextra--;
            else if (base > yyp->yystack)
                base--;
            else
                return 0;
        }
        state = nextra ? extra[nextra - 1] : base->stateno;
        if (nextra == EXTRA)
            return 1;                 /* cannot happen in this grammar */
        extra[nextra++] = yy_find_reduce_action(state, yyRuleInfoLhs[rule]);
    }
    return 1;
}

/* Tokens by their role in a message. */
static int is_operator(int t)
{
    switch (t) {
    case TK_PLUS: case TK_MINUS: case TK_STAR: case TK_SLASH:
    case TK_PERCENT: case TK_AT: case TK_EQEQ: case TK_NE: case TK_LT:
    case TK_LE: case TK_GT: case TK_GE: case TK_ANDAND: case TK_OROR:
    case TK_QUESTION: case TK_DOT: case TK_LPAREN: case TK_LBRACKET:
        return 1;
    default:
        return 0;
    }
}

static int starts_expr(int t)
{
    switch (t) {
    case TK_INT: case TK_FLOAT: case TK_STRING: case TK_TRUE: case TK_FALSE:
    case TK_IDENT: case TK_SELF: case TK_LPAREN: case TK_LBRACKET:
    case TK_MINUS: case TK_NOT:
        return 1;
    default:
        return 0;
    }
}

static int starts_member(int t)
{
    switch (t) {
    case TK_IDENT: case TK_HPARAMS: case TK_PARAM: case TK_STATE:
    case TK_INPUT: case TK_LABEL: case TK_FN: case TK_LOSS: case TK_METRIC:
        return 1;
    default:
        return 0;
    }
}

static int starts_stmt(int t)
{
    switch (t) {
    case TK_IDENT: case TK_LET: case TK_IF: case TK_FOR: case TK_UPDATE:
    case TK_SUMMARY: case TK_RETURN:
        return 1;
    default:
        return 0;
    }
}

/* "'x'", "newline" or "end of file" for the token the parser got. */
static void describe_token(const Parser *p, const Token *t, char *out, size_t n)
{
    if (t->kind == 0)
        snprintf(out, n, "end of file");
    else if (t->implicit)
        snprintf(out, n, "newline");
    else if (t->loc.len > 24)
        snprintf(out, n, "'%.20s...'", p->file->text + t->loc.off);
    else
        snprintf(out, n, "'%.*s'", t->loc.len, p->file->text + t->loc.off);
}

/* "expected A, B or C, got 'x'", phrased by the tokens the parser could
 * take: a whole list head is "member"/"statement", a run of expression
 * starts is "expression", operators that could extend a finished
 * expression are left out, and where a statement could end it is
 * "';' or newline".  Too many choices become "unexpected 'x'". */
static void report(Parser *p, const yyParser *yyp, const Token *tok)
{
    unsigned char ok[YYNTOKEN];
    for (int t = 0; t < YYNTOKEN; t++)
        ok[t] = (unsigned char)accepts(yyp, t);
    /* keywords that are also names are only worth naming on their own */
    if (ok[TK_IDENT])
        ok[TK_IN] = ok[TK_INIT] = ok[TK_WHERE] = 0;
    /* the driver's own token: never worth expecting */
    ok[TK_EXPR_START] = 0;

    const char *items[8];
    int n = 0;
    int after_expr = ok[TK_PLUS];
    int head = 0;
    if (ok[TK_PARAM]) {
        items[n++] = "member";
        head = 1;
    } else if (ok[TK_LET]) {
        items[n++] = "statement";
        head = 1;
    } else if (ok[TK_LAYER]) {
        head = 1;
    } else if (ok[TK_IDENT] && ok[TK_SEMI] && !ok[TK_INT] && !after_expr) {
        items[n++] = "hparam name";
        head = 1;
    }

    char expected[160] = "";
    if (!head && ok[TK_SEMI]) {
        snprintf(expected, sizeof expected, "';' or newline");
    } else {
        if (!head && ok[TK_INT])
            items[n++] = "expression";
        for (int t = 1; t < YYNTOKEN && n < 6; t++) {
            if (!ok[t] || t == TK_SEMI)
                continue;
            if (after_expr && is_operator(t))
                continue;
            if (ok[TK_INT] && starts_expr(t))
                continue;
            if (ok[TK_PARAM] && starts_member(t))
                continue;
            if (ok[TK_LET] && starts_stmt(t))
                continue;
            if (head && t == TK_IDENT)
                continue;
            items[n++] = lex_kind_text(t);
        }
        if (n > 4)
            n = 0;
        for (int i = 0; i < n; i++) {
            size_t len = strlen(expected);
            snprintf(expected + len, sizeof expected - len, "%s%s",
                     i == 0 ? "" : i == n - 1 ? " or " : ", ", items[i]);
        }
    }

    char got[48];
    describe_token(p, tok, got, sizeof got);
    if (expected[0])
        diag_error(tok->loc, "expected %s, got %s", expected, got);
    else
        diag_error(tok->loc, "unexpected %s", got);

    /* A -D value is one line, shown whole above: its brackets need no
     * pointing out. */
    if (p->start)
        return;

    /* The innermost unclosed bracket, when the parser wants it closed.
     * For '{' this is only news at the end of the file.  A closed pair can
     * still be on the stack, waiting for its reduction: skip those. */
    int closed = 0;
    for (const yyStackEntry *e = yyp->yytos; e > yyp->yystack; e--) {
        int close = e->major == TK_LPAREN ? TK_RPAREN :
                    e->major == TK_LBRACKET ? TK_RBRACKET :
                    e->major == TK_LBRACE ? TK_RBRACE : 0;
        if (e->major == TK_RPAREN || e->major == TK_RBRACKET ||
            e->major == TK_RBRACE)
            closed++;
        if (!close)
            continue;
        if (closed > 0) {
            closed--;
            continue;
        }
        if (ok[close] && strstr(expected, lex_kind_text(close)) &&
            (close != TK_RBRACE || tok->kind == 0))
            diag_note(e->minor.yy0.loc, "to match this %s",
                      lex_kind_text(e->major));
        break;
    }
}

/* lemon's %syntax_error: the driver normally got there first. */
static void syntax_error(Parser *p, struct yyParser *yyp, int major,
                         const Token *tok)
{
    (void)major;
    p->error = 1;
    if (!p->reported)
        report(p, yyp, tok);
}

/* file = decl? (";" decl?)*  — drives the lexer and lemon over one file,
 * or over one expression when `start` is TK_EXPR_START (fed first).
 *
 * After a syntax error lemon has popped to the innermost list that has an
 * `error` rule and wants a `;` or `}` next; skipping to that token here
 * (over whole {…} groups) avoids a cascade of errors from the rest of the
 * broken line.  The tree is returned even when there were errors.  An
 * expression has no list to recover in: it stops at its first error, the
 * lexer's included, so that a bad -D value gets one message. */
static Parser drive(const SrcFile *file, int start)
{
    Parser p = {.file = file, .start = start};
    p.root = ast_new(ND_FILE, (Loc){file, 0, (int)file->len});
    yyParser *lemon = ast_lemonAlloc(malloc, &p);
    if (!lemon) {
        fputs("nnc: error: out of memory\n", stderr);
        exit(1);
    }
    Lexer *lx = lex_open(file);
    if (start)
        ast_lemon(lemon, start, (Token){.kind = start, .loc = {file, 0, 0}});

    int skipping = 0, depth = 0, recovering = 0, errors = diag_errors();
    Token t;
    do {
        lex_next(lx, &t);
        if (p.start && diag_errors() > errors)
            break;
        if (skipping) {
            if (t.kind == TK_LBRACE) {
                depth++;
                continue;
            }
            if ((t.kind == TK_RBRACE || t.kind == TK_SEMI) && depth > 0) {
                depth -= t.kind == TK_RBRACE;
                continue;
            }
            if (t.kind != TK_RBRACE && t.kind != TK_SEMI && t.kind != 0)
                continue;
            skipping = 0;
        }
        /* Lemon itself stays quiet for three tokens after an error, so
         * the check before feeding is what finds errors.  Until lemon
         * takes a token again after an error (a stray `}`, say, was
         * dropped instead), more misfits are fallout and not reported. */
        p.tok = t;
        p.error = !accepts(lemon, t.kind);
        p.reported = p.error;
        if (p.error && !recovering)
            report(&p, lemon, &t);
        if (p.error && p.start)
            break;
        ast_lemon(lemon, t.kind, t);
        if (p.stop)
            break;
        /* a token that lemon shifted is on top of its stack */
        recovering = p.error && lemon->yytos->major != t.kind;
        if (p.error) {
            lex_recover(lx);
            skipping = t.kind != TK_SEMI && t.kind != TK_RBRACE && t.kind != 0;
            depth = t.kind == TK_LBRACE;
        }
    } while (t.kind != 0);

    ast_lemonFree(lemon, free);
    return p;
}

Node *ast_parse(const SrcFile *file)
{
    return drive(file, 0).root;
}

Node *ast_parse_expr(const SrcFile *file)
{
    int errors = diag_errors();
    Parser p = drive(file, TK_EXPR_START);
    return diag_errors() > errors ? NULL : p.expr;
}

}
