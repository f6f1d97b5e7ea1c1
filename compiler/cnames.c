/* cnames.c — language names as C identifiers (cname_*): the rule of
 * cnames.h, over three tables: C's keywords (here), the names of the C
 * library and OpenBLAS headers (cnames.def, written by
 * scripts/c-names.sh from the headers themselves), and the generated
 * passes' own parameters and locals (cname_param).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "ast.h"
#include "cnames.h"

/* Keywords: C11, C23, GNU's and C++'s (the header declares its API
 * inside extern "C" for C++), and other targets' predefined macros in
 * the GNU modes (cnames.def has those of the machine that wrote it). */
static const char *const keywords[] = {
    /* C11 (the _X ones are reserved by their leading `_`) */
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum", "extern", "float",
    "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return", "short", "signed", "sizeof",
    "static", "struct", "switch", "typedef", "union", "unsigned", "void", "volatile", "while",
    /* C23, and the macros of stdalign.h, stdnoreturn.h, complex.h */
    "alignas", "alignof", "bool", "constexpr", "false", "nullptr", "static_assert", "thread_local", "true", "typeof",
    "typeof_unqual", "noreturn", "complex", "imaginary",
    /* GNU */
    "asm", "i386", "linux", "unix",
    /* C++, and the operator macros of iso646.h */
    "and", "and_eq", "bitand", "bitor", "catch", "char16_t", "char32_t", "char8_t", "class", "co_await", "co_return",
    "co_yield", "compl", "concept", "const_cast", "consteval", "constinit", "decltype", "delete", "dynamic_cast",
    "explicit", "export", "friend", "mutable", "namespace", "new", "noexcept", "not", "not_eq", "operator", "or",
    "or_eq", "private", "protected", "public", "reinterpret_cast", "requires", "static_cast", "template", "this",
    "throw", "try", "typeid", "typename", "using", "virtual", "wchar_t", "xor", "xor_eq",
    /* the runtime's own prefix alone (`nnc` would make `nnc_init`) */
    "nnc", "NNC"};

/* The C library's and OpenBLAS's names, sorted by strcmp. */
static const char *const library[] = {
#include "cnames.def"
};

/* What every pass declares for its whole body besides the inputs: its
 * parameters and its fixed locals (emit_fn.c, end_body). */
static const char *const pass_names[] = {"m", "n", "out", "loss", "metrics", "A", "MB", "SB", "P", "G", "S"};

static int in_list(const char *const *v, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(v[i], s))
            return 1;
    return 0;
}

static int by_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

static int in_library(const char *s)
{
    return bsearch(&s, library, sizeof library / sizeof *library, sizeof *library, by_str) != NULL;
}

int cname_taken(const char *s)
{
    static const char *const families[] = {"_", "nnc_", "NNC_", "cblas_", "Cblas", "CBLAS", "openblas_", "OPENBLAS_"};
    for (size_t i = 0; i < sizeof families / sizeof *families; i++)
        if (!strncmp(s, families[i], strlen(families[i])))
            return 1;
    return in_list(keywords, sizeof keywords / sizeof *keywords, s) || in_library(s);
}

int cname_reserved(const char *s)
{
    size_t n = strlen(s);
    return cname_taken(s) || (n && s[n - 1] == '_');
}

static const char *cat(const char *a, const char *b, const char *c)
{
    size_t la = strlen(a), lb = strlen(b), lc = strlen(c);
    char *s = ast_alloc(la + lb + lc + 1);
    memcpy(s, a, la);
    memcpy(s + la, b, lb);
    memcpy(s + la + lb, c, lc + 1);
    return s;
}

const char *cname_of(const char *s)
{
    if (!cname_reserved(s))
        return s;
    return cat(s[0] == '_' ? "u" : "", s, "_");
}

const char *cname_param(const char *s)
{
    const char *c = cname_of(s);
    return in_list(pass_names, sizeof pass_names / sizeof *pass_names, c) ? cat(c, "_", "") : c;
}

const char *cname_const(const char *P, const char *name)
{
    const char *c = cat(P, "_", name);
    char *u = (char *)c;
    for (size_t i = strlen(P); u[i]; i++)
        u[i] = (char)toupper((unsigned char)u[i]);
    static const char *const own[] = {"H", "NUM_PARAMS", "NUM_STATE", "NUM_METRICS", "NUM_SUMMARIES"};
    const char *rest = c + strlen(P) + 1;
    size_t n = strlen(name);
    if ((n && name[n - 1] == '_') || in_list(own, sizeof own / sizeof *own, rest) || cname_taken(c))
        return cat(c, "_", "");
    return c;
}
