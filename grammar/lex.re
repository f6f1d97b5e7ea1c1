/* lex.re — the lexer of the nn language (spec §1), for re2c.
 *
 * scan() cuts the source into raw tokens; lex_next() adds the statement
 * ends that newlines make.  A newline is a `;` (a TK_SEMI with `implicit`
 * set) when every ( and [ of the logical line is closed and the token
 * before it can end an expression.  Two deliberate extensions:
 *   - no `;` before `else` or `{`, so that `}\nelse {` and a brace on its
 *     own line work: a `;` there could only be a syntax error anyway;
 *   - `frozen`, `in` and `init` may end a line too: `frozen` ends a field,
 *     and `in` and `init` double as names (the spec's own `[units, in]` and
 *     Dense's `init` hparam; see %fallback in parse.y), as `where` does
 *     (the primitive), which never ends a line.
 * `///` lines are collected and handed to the next token as its doc text.
 * Errors are reported here and the token is still returned (or the bad
 * character skipped), so the parser carries on; a lone `&` or `|` and a
 * 'single-quoted' string are reported and then read as what was meant.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ast.h"
#include "parse.h"

struct Lexer {
    const SrcFile *file;
    const unsigned char *cur, *lim, *mar, *tok;
    int depth;            /* ( and [ open on the logical line */
    int prev;             /* kind of the last token handed out */
    int prev_end;         /* offset just past it */
    int raw_end;          /* offset just past the last real token */
    int newline;          /* a newline was crossed by the current scan */
    int bol, last_bol;    /* the raw / handed-out token began its line */
    Token pending;        /* the token behind an implicit ';' */
    int has_pending;
    char *buf;            /* decoded text of the current string */
    size_t len, cap;
    char *doc;            /* doc text collected so far */
    size_t doc_len, doc_cap;
    int has_doc;
};

/*!re2c
    re2c:define:YYCTYPE = "unsigned char";
    re2c:define:YYCURSOR = "lx->cur";
    re2c:define:YYMARKER = "lx->mar";
    re2c:define:YYLIMIT = "lx->lim";
    re2c:yyfill:enable = 0;
    re2c:eof = 0;

    dec   = [0-9]+;
    exp   = [eE] [+-]? [0-9]+;
    ident = [A-Za-z_][A-Za-z0-9_]*;
*/

/* ---- token names --------------------------------------------------------- */

static const char *const kind_names[] = {
    [0] = "EOF",
    [TK_SEMI] = "SEMI", [TK_IMPORT] = "IMPORT", [TK_LAYER] = "LAYER",
    [TK_MODEL] = "MODEL", [TK_HPARAMS] = "HPARAMS", [TK_PARAM] = "PARAM",
    [TK_STATE] = "STATE", [TK_INPUT] = "INPUT", [TK_LABEL] = "LABEL",
    [TK_FN] = "FN", [TK_LET] = "LET", [TK_RETURN] = "RETURN", [TK_IF] = "IF",
    [TK_ELSE] = "ELSE", [TK_FOR] = "FOR", [TK_IN] = "IN", [TK_WHERE] = "WHERE",
    [TK_LOSS] = "LOSS", [TK_METRIC] = "METRIC", [TK_SUMMARY] = "SUMMARY",
    [TK_UPDATE] = "UPDATE", [TK_INIT] = "INIT", [TK_FROM] = "FROM",
    [TK_FROZEN] = "FROZEN", [TK_TRUE] = "TRUE", [TK_FALSE] = "FALSE",
    [TK_SELF] = "SELF", [TK_IDENT] = "IDENT", [TK_INT] = "INT",
    [TK_FLOAT] = "FLOAT", [TK_STRING] = "STRING", [TK_PLUS] = "PLUS",
    [TK_MINUS] = "MINUS", [TK_STAR] = "STAR", [TK_SLASH] = "SLASH",
    [TK_PERCENT] = "PERCENT", [TK_AT] = "AT", [TK_EQEQ] = "EQEQ",
    [TK_NE] = "NE", [TK_LT] = "LT", [TK_LE] = "LE", [TK_GT] = "GT",
    [TK_GE] = "GE", [TK_ANDAND] = "ANDAND", [TK_OROR] = "OROR",
    [TK_NOT] = "NOT", [TK_QUESTION] = "QUESTION", [TK_EQ] = "EQ",
    [TK_COLON] = "COLON", [TK_COMMA] = "COMMA", [TK_DOT] = "DOT",
    [TK_DOTDOT] = "DOTDOT", [TK_ELLIPSIS] = "ELLIPSIS", [TK_ARROW] = "ARROW",
    [TK_LPAREN] = "LPAREN", [TK_RPAREN] = "RPAREN", [TK_LBRACKET] = "LBRACKET",
    [TK_RBRACKET] = "RBRACKET", [TK_LBRACE] = "LBRACE", [TK_RBRACE] = "RBRACE",
    [TK_EXPR_START] = "EXPR_START",
};

static const char *const kind_texts[] = {
    [0] = "end of file",
    [TK_SEMI] = "';'", [TK_IMPORT] = "'import'", [TK_LAYER] = "'layer'",
    [TK_MODEL] = "'model'", [TK_HPARAMS] = "'hparams'", [TK_PARAM] = "'param'",
    [TK_STATE] = "'state'", [TK_INPUT] = "'input'", [TK_LABEL] = "'label'",
    [TK_FN] = "'fn'", [TK_LET] = "'let'", [TK_RETURN] = "'return'",
    [TK_IF] = "'if'", [TK_ELSE] = "'else'", [TK_FOR] = "'for'",
    [TK_IN] = "'in'", [TK_WHERE] = "'where'", [TK_LOSS] = "'loss'",
    [TK_METRIC] = "'metric'", [TK_SUMMARY] = "'summary'",
    [TK_UPDATE] = "'update'", [TK_INIT] = "'init'", [TK_FROM] = "'from'",
    [TK_FROZEN] = "'frozen'", [TK_TRUE] = "'true'", [TK_FALSE] = "'false'",
    [TK_SELF] = "'self'", [TK_IDENT] = "identifier", [TK_INT] = "integer",
    [TK_FLOAT] = "number", [TK_STRING] = "string", [TK_PLUS] = "'+'",
    [TK_MINUS] = "'-'", [TK_STAR] = "'*'", [TK_SLASH] = "'/'",
    [TK_PERCENT] = "'%'", [TK_AT] = "'@'", [TK_EQEQ] = "'=='",
    [TK_NE] = "'!='", [TK_LT] = "'<'", [TK_LE] = "'<='", [TK_GT] = "'>'",
    [TK_GE] = "'>='", [TK_ANDAND] = "'&&'", [TK_OROR] = "'||'",
    [TK_NOT] = "'!'", [TK_QUESTION] = "'?'", [TK_EQ] = "'='",
    [TK_COLON] = "':'", [TK_COMMA] = "','", [TK_DOT] = "'.'",
    [TK_DOTDOT] = "'..'", [TK_ELLIPSIS] = "'...'", [TK_ARROW] = "'->'",
    [TK_LPAREN] = "'('", [TK_RPAREN] = "')'", [TK_LBRACKET] = "'['",
    [TK_RBRACKET] = "']'", [TK_LBRACE] = "'{'", [TK_RBRACE] = "'}'",
    [TK_EXPR_START] = "start of expression",
};

const char *lex_kind_name(int kind)
{
    if (kind < 0 || (size_t)kind >= sizeof kind_names / sizeof kind_names[0] ||
        !kind_names[kind])
        return "?";
    return kind_names[kind];
}

const char *lex_kind_text(int kind)
{
    if (kind < 0 || (size_t)kind >= sizeof kind_texts / sizeof kind_texts[0] ||
        !kind_texts[kind])
        return "?";
    return kind_texts[kind];
}

/* ---- helpers ---------------------------------------------------------------- */

static int offset(const Lexer *lx, const unsigned char *p)
{
    return (int)(p - (const unsigned char *)lx->file->text);
}

static Loc loc_of(const Lexer *lx, const unsigned char *from,
                  const unsigned char *to)
{
    return (Loc){lx->file, offset(lx, from), (int)(to - from)};
}

static void grow(char **buf, size_t *cap, size_t need)
{
    if (need <= *cap)
        return;
    size_t cap2 = *cap ? *cap : 64;
    while (cap2 < need)
        cap2 *= 2;
    char *nb = realloc(*buf, cap2);
    if (!nb) {
        fputs("nnc: error: out of memory\n", stderr);
        exit(1);
    }
    *buf = nb;
    *cap = cap2;
}

static void put_bytes(Lexer *lx, const unsigned char *s, size_t n)
{
    grow(&lx->buf, &lx->cap, lx->len + n + 1);
    memcpy(lx->buf + lx->len, s, n);
    lx->len += n;
}

/* Length of the UTF-8 sequence at p (1 for a stray or malformed byte). */
static int utf8_len(const unsigned char *p, const unsigned char *lim)
{
    int n = *p >= 0xF0 && *p <= 0xF4 ? 4 : *p >= 0xE0 ? 3 :
            *p >= 0xC2 && *p <= 0xDF ? 2 : 1;
    if (*p >= 0xF5)
        n = 1;
    if (lim - p < n)
        return 1;
    for (int i = 1; i < n; i++)
        if ((p[i] & 0xC0) != 0x80)
            return 1;
    return n;
}

/* A character as the user would want to read it in a message. */
static const char *show_char(const unsigned char *p, int n, char out[16])
{
    if (n > 1) {
        memcpy(out, p, (size_t)n);
        out[n] = '\0';
    } else if (*p == '\'' || *p == '\\') {
        snprintf(out, 16, "\\%c", *p);
    } else if (*p >= 0x20 && *p < 0x7f) {
        snprintf(out, 16, "%c", *p);
    } else {
        snprintf(out, 16, "\\x%02x", *p);
    }
    return out;
}

/* ---- comments --------------------------------------------------------------- */

/* A `///` line: its text without the slashes and one following space. */
static void doc_line(Lexer *lx)
{
    const unsigned char *s = lx->tok + 3, *e = lx->cur;
    if (s < e && *s == ' ')
        s++;
    if (e > s && e[-1] == '\r')
        e--;
    size_t n = (size_t)(e - s);
    grow(&lx->doc, &lx->doc_cap, lx->doc_len + n + 2);
    if (lx->has_doc)
        lx->doc[lx->doc_len++] = '\n';
    memcpy(lx->doc + lx->doc_len, s, n);
    lx->doc_len += n;
    lx->doc[lx->doc_len] = '\0';
    lx->has_doc = 1;
}

static void block_comment(Lexer *lx)
{
    const unsigned char *start = lx->tok;
    for (;;) {
        lx->tok = lx->cur;
        /*!re2c
            "*" "/"     { return; }
            "\n"        { lx->newline = 1; continue; }
            [^*\n]+     { continue; }
            "*"         { continue; }
            $           {
                diag_error(loc_of(lx, start, start + 2),
                           "unterminated comment");
                return;
            }
        */
    }
}

/* ---- literals ------------------------------------------------------------------ */

/* "…" with \" \\ \n \t; the text is decoded into tok->str. */
static int string(Lexer *lx, Token *tok)
{
    const unsigned char *start = lx->tok;
    lx->len = 0;
    for (;;) {
        lx->tok = lx->cur;
        /*!re2c
            "\""        { break; }
            "\\\""      { put_bytes(lx, (const unsigned char *)"\"", 1); continue; }
            "\\\\"      { put_bytes(lx, (const unsigned char *)"\\", 1); continue; }
            "\\n"       { put_bytes(lx, (const unsigned char *)"\n", 1); continue; }
            "\\t"       { put_bytes(lx, (const unsigned char *)"\t", 1); continue; }
            "\\" [^\n]  {
                const unsigned char *c = lx->tok + 1;
                int n = utf8_len(c, lx->lim);
                char shown[16];
                lx->cur = c + n;
                diag_error(loc_of(lx, lx->tok, lx->cur),
                           "unknown escape sequence '\\%s' in string",
                           show_char(c, n, shown));
                put_bytes(lx, c, (size_t)n);
                continue;
            }
            "\\"        { continue; }
            [^"\\\n]+   { put_bytes(lx, lx->tok, (size_t)(lx->cur - lx->tok)); continue; }
            "\n"        { lx->cur--; goto unterminated; }
            $           { goto unterminated; }
        */
    }
    lx->tok = start;            /* the token is the whole literal */
    tok->str = ast_strndup(lx->buf ? lx->buf : "", lx->len);
    return TK_STRING;
unterminated:
    diag_error(loc_of(lx, start, start + 1), "unterminated string");
    lx->tok = start;
    tok->str = ast_strndup(lx->buf ? lx->buf : "", lx->len);
    return TK_STRING;
}

static int int_literal(Lexer *lx, Token *tok)
{
    long long v = 0;
    for (const unsigned char *p = lx->tok; p < lx->cur; p++) {
        int d = *p - '0';
        if (v > (LLONG_MAX - d) / 10) {
            diag_error(loc_of(lx, lx->tok, lx->cur),
                       "integer literal '%.*s' is too large",
                       (int)(lx->cur - lx->tok), (const char *)lx->tok);
            v = 0;
            break;
        }
        v = v * 10 + d;
    }
    tok->ival = v;
    return TK_INT;
}

static int float_literal(Lexer *lx, Token *tok)
{
    /* `0..3` is a range: the `.` that re2c took belongs to `..` */
    if (lx->cur[-1] == '.' && lx->cur < lx->lim && *lx->cur == '.') {
        lx->cur--;
        return int_literal(lx, tok);
    }
    char *text = ast_strndup((const char *)lx->tok, (size_t)(lx->cur - lx->tok));
    tok->fval = strtod(text, NULL);
    if (isinf(tok->fval)) {
        diag_error(loc_of(lx, lx->tok, lx->cur),
                   "float literal '%s' is out of range", text);
        tok->fval = 0;
    }
    return TK_FLOAT;
}

/* `12abc`: one bad token rather than a number and a name. */
static int bad_suffix(Lexer *lx, Token *tok)
{
    const unsigned char *p = lx->tok;
    while (p < lx->cur && (*p == '.' || (*p >= '0' && *p <= '9')))
        p++;
    if (p < lx->cur && (*p == 'e' || *p == 'E') && p + 1 < lx->cur &&
        (p[1] == '+' || p[1] == '-' || (p[1] >= '0' && p[1] <= '9'))) {
        p += 2;
        while (p < lx->cur && *p >= '0' && *p <= '9')
            p++;
    }
    diag_error(loc_of(lx, p, lx->cur), "invalid suffix '%.*s' on number",
               (int)(lx->cur - p), (const char *)p);
    tok->ival = 0;
    return TK_INT;
}

static void bad_char(Lexer *lx)
{
    int n = utf8_len(lx->tok, lx->lim);
    char shown[16];
    lx->cur = lx->tok + n;
    diag_error(loc_of(lx, lx->tok, lx->cur), "invalid character '%s'",
               show_char(lx->tok, n, shown));
}

/* `&` for `&&`, `'s'` for `"s"`: reported, then taken as meant, so that
 * the parser does not add errors of its own. */
static int taken_as(Lexer *lx, int kind, const char *msg)
{
    diag_error(loc_of(lx, lx->tok, lx->cur), "%s", msg);
    return kind;
}

/* ---- raw tokens ------------------------------------------------------------------ */

static int scan(Lexer *lx, Token *tok)
{
    for (;;) {
        lx->tok = lx->cur;
        /*!re2c
            $                   { return 0; }
            [ \t\r\f\v]+        { continue; }
            "\n"                { lx->newline = 1; continue; }
            "///" ([^/\n] [^\n]*)? { doc_line(lx); continue; }
            "//" [^\n]*         { continue; }
            "/*"                { block_comment(lx); continue; }

            "import"    { return TK_IMPORT; }
            "layer"     { return TK_LAYER; }
            "model"     { return TK_MODEL; }
            "hparams"   { return TK_HPARAMS; }
            "param"     { return TK_PARAM; }
            "state"     { return TK_STATE; }
            "input"     { return TK_INPUT; }
            "label"     { return TK_LABEL; }
            "fn"        { return TK_FN; }
            "let"       { return TK_LET; }
            "return"    { return TK_RETURN; }
            "if"        { return TK_IF; }
            "else"      { return TK_ELSE; }
            "for"       { return TK_FOR; }
            "in"        { tok->str = "in"; return TK_IN; }
            "where"     { tok->str = "where"; return TK_WHERE; }
            "loss"      { return TK_LOSS; }
            "metric"    { return TK_METRIC; }
            "summary"   { return TK_SUMMARY; }
            "update"    { return TK_UPDATE; }
            "init"      { tok->str = "init"; return TK_INIT; }
            "from"      { return TK_FROM; }
            "frozen"    { return TK_FROZEN; }
            "true"      { return TK_TRUE; }
            "false"     { return TK_FALSE; }
            "self"      { return TK_SELF; }
            ident       {
                tok->str = ast_strndup((const char *)lx->tok,
                                       (size_t)(lx->cur - lx->tok));
                return TK_IDENT;
            }

            dec                             { return int_literal(lx, tok); }
            dec "." [0-9]* exp? | dec exp   { return float_literal(lx, tok); }
            dec ("." [0-9]* exp? | exp)? ident { return bad_suffix(lx, tok); }
            "\""                            { return string(lx, tok); }

            "+"   { return TK_PLUS; }
            "-"   { return TK_MINUS; }
            "*"   { return TK_STAR; }
            "/"   { return TK_SLASH; }
            "%"   { return TK_PERCENT; }
            "@"   { return TK_AT; }
            "=="  { return TK_EQEQ; }
            "!="  { return TK_NE; }
            "<"   { return TK_LT; }
            "<="  { return TK_LE; }
            ">"   { return TK_GT; }
            ">="  { return TK_GE; }
            "&&"  { return TK_ANDAND; }
            "||"  { return TK_OROR; }
            "!"   { return TK_NOT; }
            "?"   { return TK_QUESTION; }
            "="   { return TK_EQ; }
            ":"   { return TK_COLON; }
            ","   { return TK_COMMA; }
            "."   { return TK_DOT; }
            ".."  { return TK_DOTDOT; }
            "..." { return TK_ELLIPSIS; }
            "->"  { return TK_ARROW; }
            "("   { return TK_LPAREN; }
            ")"   { return TK_RPAREN; }
            "["   { return TK_LBRACKET; }
            "]"   { return TK_RBRACKET; }
            "{"   { return TK_LBRACE; }
            "}"   { return TK_RBRACE; }
            ";"   { return TK_SEMI; }

            "&"   { return taken_as(lx, TK_ANDAND, "'&' is not an operator; did you mean '&&'?"); }
            "|"   { return taken_as(lx, TK_OROR, "'|' is not an operator; did you mean '||'?"); }
            "'" [^'\n]* "'" {
                tok->str = ast_strndup((const char *)lx->tok + 1,
                                       (size_t)(lx->cur - lx->tok - 2));
                return taken_as(lx, TK_STRING, "strings use double quotes");
            }

            *     { bad_char(lx); continue; }
        */
    }
}

/* ---- the token stream ------------------------------------------------------------- */

Lexer *lex_open(const SrcFile *file)
{
    Lexer *lx = ast_alloc(sizeof *lx);
    lx->file = file;
    lx->cur = (const unsigned char *)file->text;
    lx->lim = lx->cur + file->len;
    return lx;
}

/* Tokens after which a newline ends the statement (spec §1, plus the
 * extensions above). */
static int ends_statement(int kind)
{
    switch (kind) {
    case TK_IDENT: case TK_INT: case TK_FLOAT: case TK_STRING:
    case TK_RPAREN: case TK_RBRACKET: case TK_RBRACE:
    case TK_TRUE: case TK_FALSE: case TK_SELF: case TK_RETURN:
    case TK_FROZEN: case TK_IN: case TK_INIT:
        return 1;
    default:
        return 0;
    }
}

static void next_raw(Lexer *lx, Token *tok)
{
    *tok = (Token){0};
    lx->newline = 0;
    tok->kind = scan(lx, tok);
    lx->bol = lx->newline || lx->prev == 0;
    if (tok->kind == 0) {
        /* "expected '}', got end of file" points just after the last
         * token, where the missing text belongs, not at blank lines */
        tok->loc = (Loc){lx->file, lx->raw_end, 0};
    } else {
        tok->loc = loc_of(lx, lx->tok, lx->cur);
        lx->raw_end = offset(lx, lx->cur);
    }
    if (lx->has_doc && tok->kind != 0) {
        tok->doc = ast_strndup(lx->doc, lx->doc_len);
        lx->has_doc = 0;
        lx->doc_len = 0;
    }
}

void lex_next(Lexer *lx, Token *tok)
{
    if (lx->has_pending) {
        *tok = lx->pending;
        lx->has_pending = 0;
    } else {
        next_raw(lx, tok);
        if (lx->newline && lx->depth == 0 && ends_statement(lx->prev) &&
            tok->kind != TK_ELSE && tok->kind != TK_LBRACE) {
            lx->pending = *tok;
            lx->has_pending = 1;
            *tok = (Token){.kind = TK_SEMI, .implicit = 1,
                           .loc = {lx->file, lx->prev_end, 0}};
        }
    }
    switch (tok->kind) {
    case TK_LPAREN: case TK_LBRACKET:
        lx->depth++;
        break;
    case TK_RPAREN: case TK_RBRACKET:
        if (lx->depth > 0)
            lx->depth--;
        break;
    case TK_LBRACE: case TK_RBRACE:
        /* braces never occur inside ( or [: a stray one there is already
         * an error, and forgetting the parens keeps newlines meaningful */
        lx->depth = 0;
        break;
    }
    lx->prev = tok->kind;
    lx->prev_end = tok->loc.off + tok->loc.len;
    lx->last_bol = tok->implicit ? 0 : lx->bol;
}

/* After a syntax error.  When the bad token began a line while a ( or [ was
 * still open, the likely story is a missing `)` on an earlier line: forget
 * the open ones, so that this line's newline can end the statement and the
 * parser resynchronizes there instead of at the next `}`.  A bad token in
 * mid-line leaves the count alone: its own line still closes what it
 * opened. */
void lex_recover(Lexer *lx)
{
    if (lx->last_bol)
        lx->depth = 0;
}
