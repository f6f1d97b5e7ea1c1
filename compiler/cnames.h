/* cnames.h — language names as C identifiers (cname_*): the one rule by
 * which a name of the model (a field, a param, an hparam, an input, the
 * model itself) becomes the identifier the generated C uses for it.
 *
 * A name C can take is used as written.  One it cannot gets `_` appended
 * (`default` -> `default_`), and `u` in front as well if it begins with
 * `_` (`_X` -> `u_X_`, `__x` -> `u__x_`).  C cannot take: its keywords
 * (C11, C23, GNU and C++'s, since the header is also C++), the names the
 * C library and OpenBLAS headers declare or define (cnames.def: `errno`,
 * `main`, `exp`, `NULL`, `size_t`, ...), the families of the runtime and
 * BLAS (`nnc_`, `cblas_`, ...), any name that begins with `_`, and any
 * that ends with `_`, the form mangled names take, which keeps the rule
 * one-to-one except for a name beginning `u_` next to one beginning `_`
 * (`u_a_` and `_a_`), which model.c reports.  See docs/generated-c.md.
 */
#ifndef NNC_CNAMES_H
#define NNC_CNAMES_H

/* 1 if C, its headers or the runtime take `name` (not counting a final `_`). */
int cname_taken(const char *name);
/* 1 if `name` is not used as written: taken, or ending in `_`. */
int cname_reserved(const char *name);
/* The C identifier for a language name: the name, or it mangled. */
const char *cname_of(const char *name);
/* The identifier for an input or label, a parameter of the passes: also
 * `_` after a name the passes give their other parameters and their
 * function-wide locals (`m`, `n`, `out`, `loss`, `metrics`, `A`, `P`, ...). */
const char *cname_param(const char *name);
/* The enum constant of an int hparam: `<P>_<NAME>` with `P` the
 * upper-cased prefix, and `_` after it when the name ends in `_` or the
 * constant is one the header or the C headers define already
 * (`<P>_NUM_PARAMS`, the include guard `<P>_H`, `M_PI` for prefix `m`). */
const char *cname_const(const char *upper_prefix, const char *name);

#endif
