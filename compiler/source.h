/* source.h — the syntax tree written back as source (source_*):
 * `--dump=source`, and the text of trees that no parser built (the ONNX
 * importer's).
 *
 * The output is the canonical form of the language: the house layout of
 * models/ (four-space indents, one member or statement a line, a blank
 * line between declarations), `///` doc comments where the tree has doc
 * text, and a trailing `// comment` where a node has one (Node.comment).
 * Parsing it gives back the same tree, source positions aside, and
 * printing that tree gives the same text again (tests/source).  Source
 * comments other than doc comments are not in the tree, so they are lost.
 */
#ifndef NNC_SOURCE_H
#define NNC_SOURCE_H

#include <stdio.h>

#include "ast.h"

/* Writes an ND_FILE tree as source.  Another kind of node is written as
 * what it is: a declaration, a member, a statement (each with its lines),
 * or an expression (on one line). */
void source_print(const Node *file, FILE *out);

/* Writes one expression on one line, with the parentheses that its
 * reading needs and no others. */
void source_print_expr(const Node *expr, FILE *out);

#endif
