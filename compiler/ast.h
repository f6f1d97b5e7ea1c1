/* ast.h — the syntax tree built by grammar/parse.y (ast_*).
 *
 * One Node type for everything (as chibicc does), so that lemon actions are
 * one call each.  Which members a kind uses is listed next to the kind; the
 * rest stay zero.  The tree is never freed: the compiler is a short-lived
 * process and the arena (ast_alloc) keeps pointers stable.
 */
#ifndef NNC_AST_H
#define NNC_AST_H

#include <stdio.h>

#include "diag.h"

typedef struct Node Node;

typedef struct NodeVec {
    Node **v;
    int n, cap;
} NodeVec;

/* Operators of ND_UNARY / ND_BINARY. */
typedef enum Op {
    OP_ADD,    /* + */
    OP_SUB,    /* - */
    OP_MUL,    /* * */
    OP_DIV,    /* / */
    OP_MOD,    /* % */
    OP_MATMUL, /* @ */
    OP_EQ,     /* == */
    OP_NE,     /* != */
    OP_LT,     /* < */
    OP_LE,     /* <= */
    OP_GT,     /* > */
    OP_GE,     /* >= */
    OP_AND,    /* && */
    OP_OR,     /* || */
    OP_NEG,    /* unary - */
    OP_NOT,    /* unary ! */
} Op;

typedef enum NodeKind {
    /* ---- expressions ------------------------------------------------ */
    ND_INT,      /* ival */
    ND_FLOAT,    /* fval */
    ND_STR,      /* str (escapes already decoded) */
    ND_BOOL,     /* ival: 0 or 1 */
    ND_IDENT,    /* name; `_` in a shape pattern is the name "_" */
    ND_SELF,     /* `self` */
    ND_ELLIPSIS, /* `...` in a shape pattern */
    ND_LIST,     /* [ list... ] */
    ND_UNARY,    /* op, a */
    ND_BINARY,   /* op, a, b */
    ND_COND,     /* a ? b : c */
    ND_CALL,     /* a(list...); list holds ND_ARG */
    ND_METHOD,   /* a.name(list...); list holds ND_ARG */
    ND_INDEX,    /* a[b] */
    ND_ARG,      /* name: a   (name NULL for a positional argument) */

    /* ---- statements (bodies of fn) ---------------------------------- */
    ND_BLOCK,   /* { list... } of statements */
    ND_LET,     /* let name = a */
    ND_ASSIGN,  /* name = a */
    ND_IF,      /* if a b(ND_BLOCK) else c (ND_BLOCK, ND_IF or NULL) */
    ND_FOR,     /* for name in a .. b  c(ND_BLOCK) */
    ND_UPDATE,  /* update name = a */
    ND_SUMMARY, /* summary str = a */
    ND_RETURN,  /* return a */

    /* ---- types (of hparams) ----------------------------------------- */
    ND_TYPE, /* name: "int" "float" "bool" "fn" "layer", or "list"
                    with a = element type */

    /* ---- members of a layer or model --------------------------------- */
    ND_HPARAMS, /* hparams { list... of ND_HPARAM } */
    ND_HPARAM,  /* name: a(ND_TYPE) [= b] [where c]; doc */
    ND_FIELD,   /* name: a [if b] [init c] [from str] [frozen: flags];
                    `a` is the layer expression: a call such as
                    Dense(units: 3), an identifier, `x * 3`, or a list;
                    doc */
    ND_PARAM,   /* param name: a(ND_LIST of dims) [= b] [if c]; doc */
    ND_STATE,   /* state name: a(ND_LIST of dims) [= b] [if c]; str "i64" for a counter; doc */
    ND_INPUT,   /* input name: str(dtype "f32"|"i32") a(ND_LIST of dims) */
    ND_LABEL,   /* label name: str(dtype) a(ND_LIST of dims) */
    ND_FN,      /* fn name(list... of ND_FNPARAM) [-> a(ND_LIST)] b(ND_BLOCK) */
    ND_FNPARAM, /* name [: a(ND_LIST, the shape pattern)] */
    ND_LOSS,    /* loss a */
    ND_METRIC,  /* metric name = a */

    /* ---- declarations ------------------------------------------------ */
    ND_IMPORT, /* import str */
    ND_LAYER,  /* layer name { list... of members }; doc */
    ND_MODEL,  /* model name { list... of members }; doc */
    ND_FILE,   /* list... of declarations */
} NodeKind;

enum { FIELD_FROZEN = 1 };

struct Node {
    NodeKind kind;
    Loc loc;      /* the whole construct; for ND_BINARY the operator */
    Loc name_loc; /* where `name` is written, when there is a name */
    Op op;
    const char *name;
    const char *str;
    const char *doc;     /* text of the `///` lines before it, joined by
                            '\n', without the slashes; NULL if none */
    const char *comment; /* a member's or statement's `// comment`: never
                            set by the parser (comments are not kept);
                            a tree's builder sets it (the ONNX importer,
                            with the node's name) and source.c writes it
                            at the end of the line */
    long long ival;
    double fval;
    unsigned flags;
    Node *a, *b, *c;
    NodeVec list;
    int depth; /* height of an expression tree; the parser caps
                            it so that recursive walks cannot overflow */
};

/* Allocation is from one arena that lives as long as the process. */
void *ast_alloc(size_t size);
/* Frees the whole arena: every node and string, for a new compilation in
 * the same process (the fuzz target, tests/fuzz/). */
void ast_reset(void);
char *ast_strndup(const char *s, size_t n);
Node *ast_new(NodeKind kind, Loc loc);
void ast_push(NodeVec *vec, Node *node);
Loc ast_span(Loc from, Loc to); /* from the start of one to the end of the other */

/* Parses one file; NULL after reporting diagnostics when it has errors
 * (the tree may still be returned with errors, in which case diag_errors()
 * is non-zero).  Implemented in grammar/parse.y with the re2c lexer. */
Node *ast_parse(const SrcFile *file);
/* Parses `file` as one expression (a -D value): the expression, or NULL
 * after reporting diagnostics when it has any. */
Node *ast_parse_expr(const SrcFile *file);

/* ---- tokens (grammar/lex.re) --------------------------------------
 * The lexer applies the newline rule of spec §1 itself: a newline that ends
 * a statement comes out as a TK_SEMI with `implicit` set.  Token kinds are
 * the TK_ codes of the lemon-generated parse.h; 0 is the end of the file. */
typedef struct Token {
    int kind; /* TK_*, or 0 at the end of the file */
    Loc loc;
    const char *doc; /* `///` lines directly before it, or NULL */
    const char *str; /* TK_STRING: decoded text; TK_IDENT: the name */
    long long ival;  /* TK_INT */
    double fval;     /* TK_FLOAT */
    int implicit;    /* a TK_SEMI made from a newline */
} Token;

typedef struct Lexer Lexer;

Lexer *lex_open(const SrcFile *file);
void lex_next(Lexer *lx, Token *tok);
void lex_recover(Lexer *lx);         /* after a syntax error (see lex.re) */
const char *lex_kind_name(int kind); /* "IDENT", "LPAREN": for dumps */
const char *lex_kind_text(int kind); /* "identifier", "'('": for messages */

/* --dump=tokens and --dump=ast. */
void ast_dump_tokens(const SrcFile *file, FILE *out);
void ast_dump(const Node *file, FILE *out);

#endif
