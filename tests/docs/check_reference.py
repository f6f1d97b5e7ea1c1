#!/usr/bin/env python3
"""docs/language.md and docs/generated-c.md stay in step with the compiler.

    check_reference.py layers   NNC LANGUAGE_MD
    check_reference.py prims    LANGUAGE_MD SOURCE.c...
    check_reference.py driver   DRIVER GENERATED_C_MD
    check_reference.py examples NNC LANGUAGE_MD

layers    Every layer of the standard library (the `layer Name` lines of
          `nnc --print-std`) is named in a heading of language.md or in
          the first cell of one of its table rows.

prims     Every primitive the compiler accepts is the first word of a code
          span in the first cell of a table row of language.md
          (`| \\`sum(x, axis?)\\` | ...`).  The primitives are read from the
          compiler's C sources given on the command line (all of
          compiler/*.c), which hold them in one or more arrays:
            - an array is a primitive table when its name contains "prim"
              (`unary_prims[]`, `other_prims[]`, `prims[]`, `prim_table[]`),
              or when it is defined in a file whose name contains "prim"
              (compiler/prims.c) and its rows are braced;
            - a braced row (`{"relu", IR_RELU}`, `{"sum", prim_sum}`,
              `{.name = "sum", ...}`) contributes its first string literal;
            - a table without braced rows (`{"pow", "maximum", ...}`)
              contributes every string literal.
          C comments are ignored.  Fewer than 20 names means the tables
          changed shape: the script fails rather than pass on nothing.

driver    Every `--flag` that a generated driver prints for `--help`, and
          every subcommand of its usage lines, appears in generated-c.md
          as the start of a code span (`--epochs`, `train`).

examples  Every ```nn block of language.md that declares a model compiles
          with `nnc block.nn -o DIR` (exit 0); a ```nn block that declares
          layers but no model parses (`nnc --dump=ast`); every ```nn-error
          block fails with exit status 1, prints an error and writes no
          file.  Other ```nn blocks (fragments) are not compiled.
"""
import os
import re
import subprocess
import sys
import tempfile


def fail_report(problems, what):
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} problem(s) with {what}")
        return 1
    return 0


# ---- markdown ------------------------------------------------------------------------

def prose(md):
    """The document without its fenced code blocks."""
    out, fenced = [], False
    for line in md.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced:
            out.append(line)
    return "\n".join(out)


def first_cells(md):
    """The first cell of every table row (header and separator rows too)."""
    cells = []
    for line in prose(md).splitlines():
        s = line.strip()
        if s.startswith("|"):
            cells.append(s[1:].split("|", 1)[0])
    return cells


def headings(md):
    return [l for l in prose(md).splitlines() if re.match(r"#{1,6} ", l)]


def code_spans(text):
    return re.findall(r"`([^`]+)`", prose(text))


# ---- layers ------------------------------------------------------------------------------

def check_layers(nnc, doc):
    std = subprocess.run([nnc, "--print-std"], check=True, capture_output=True, text=True).stdout
    layers = re.findall(r"^\s*layer\s+([A-Za-z_]\w*)", std, re.M)
    if len(layers) < 5:
        print(f"only {len(layers)} layers found in nnc --print-std: {layers}")
        return 1
    md = open(doc, encoding="utf-8").read()
    places = headings(md) + first_cells(md)
    problems = []
    for name in layers:
        if not any(re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", p) for p in places):
            problems.append(f"{doc}: the standard layer '{name}' is in no heading and no table row "
                            "(add it to the standard library table)")
    if fail_report(problems, doc):
        return 1
    print(f"{len(layers)} standard layers, all in {doc}")
    return 0


# ---- primitives -------------------------------------------------------------------------

C_TOKEN = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|/\*.*?\*/|//[^\n]*', re.S)


def strip_comments(src):
    return C_TOKEN.sub(lambda m: " " if m.group(0).startswith("/") else m.group(0), src)


def braced(src, open_at):
    """The text between the brace at open_at and its match (strings skipped)."""
    depth, i = 0, open_at
    while i < len(src):
        c = src[i]
        if c == '"':
            m = re.compile(r'"(?:\\.|[^"\\\n])*"').match(src, i)
            i = m.end() if m else i + 1
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return src[open_at + 1:i]
        i += 1
    return None


def rows(body):
    """The top-level {...} groups of an initializer body."""
    out, i = [], 0
    while i < len(body):
        if body[i] == '"':
            m = re.compile(r'"(?:\\.|[^"\\\n])*"').match(body, i)
            i = m.end() if m else i + 1
            continue
        if body[i] == "{":
            inner = braced(body, i)
            if inner is None:
                break
            out.append(inner)
            i += len(inner) + 2
            continue
        i += 1
    return out


STRING = re.compile(r'"((?:\\.|[^"\\\n])*)"')
ARRAY = re.compile(r"([A-Za-z_]\w*)\s*\[[^\]\[]*\]\s*=\s*\{")


def primitives(sources):
    names, tables = [], []
    for path in sources:
        src = strip_comments(open(path, encoding="utf-8").read())
        prim_file = "prim" in os.path.basename(path).lower()
        for m in ARRAY.finditer(src):
            ident = m.group(1)
            body = braced(src, m.end() - 1)
            if body is None:
                continue
            rs = rows(body)
            if "prim" in ident.lower():
                found = [STRING.search(r).group(1) for r in rs if STRING.search(r)] if rs \
                    else STRING.findall(body)
            elif prim_file and rs:
                found = [STRING.search(r).group(1) for r in rs if STRING.search(r)]
            else:
                continue
            found = [f for f in found if re.fullmatch(r"[a-z_][a-z0-9_]*", f)]
            if found:
                tables.append(f"{os.path.basename(path)}:{ident}[{len(found)}]")
                names += [f for f in found if f not in names]
    return names, tables


def check_prims(doc, sources):
    names, tables = primitives(sources)
    if len(names) < 20:
        print(f"only {len(names)} primitives found in {', '.join(sources)} ({tables}): "
              "the primitive tables changed shape; update tests/docs/check_reference.py")
        return 1
    md = open(doc, encoding="utf-8").read()
    firsts = [re.match(r"[A-Za-z_]\w*", s) for c in first_cells(md) for s in code_spans(c)]
    documented = {m.group(0) for m in firsts if m}
    problems = [f"{doc}: the primitive '{n}' has no table row (a row whose first cell is `{n}(...)`)"
                for n in names if n not in documented]
    if fail_report(problems, doc):
        return 1
    print(f"{len(names)} primitives ({', '.join(tables)}), all in the tables of {doc}")
    return 0


# ---- the driver --------------------------------------------------------------------------

def check_driver(driver, doc):
    r = subprocess.run([driver, "--help"], capture_output=True, text=True)
    if r.returncode != 0:
        print(f"{driver} --help exited with {r.returncode}")
        return 1
    text = r.stdout
    flags = sorted(set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", text)))
    prog = os.path.basename(driver)
    subs = re.findall(rf"^(?:usage:)?\s+{re.escape(prog)} ([a-z]+)", text, re.M)
    if len(flags) < 10 or len(subs) < 3:
        print(f"{driver} --help: only flags {flags} and subcommands {subs} parsed from:\n{text}")
        return 1
    md = open(doc, encoding="utf-8").read()
    spans = code_spans(md)
    problems = []
    for f in flags:
        if not any(re.match(rf"{re.escape(f)}(?![\w-])", s) for s in spans):
            problems.append(f"{doc}: the driver's option '{f}' is not documented (as `{f} ...`)")
    for s in subs:
        if not any(re.match(rf"(?:{re.escape(prog)} |<p> )?{s}(?![\w-])", sp) for sp in spans):
            problems.append(f"{doc}: the driver's subcommand '{s}' is not documented (as `{s}`)")
    if fail_report(problems, doc):
        return 1
    print(f"{len(flags)} options and {len(subs)} subcommands of {prog} --help, all in {doc}")
    return 0


# ---- examples ----------------------------------------------------------------------------

def blocks(md):
    """(line, info string, text) of every fenced block tagged nn or nn-error."""
    out, lines, i = [], md.splitlines(), 0
    while i < len(lines):
        m = re.match(r"^```(nn|nn-error)\s*$", lines[i])
        if not m:
            i += 1
            continue
        start, j = i + 1, i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        out.append((start, m.group(1), "\n".join(lines[start:j]) + "\n"))
        i = j + 1
    return out


def check_examples(nnc, doc):
    md = open(doc, encoding="utf-8").read()
    problems, counts = [], {"compiled": 0, "parsed": 0, "rejected": 0, "fragments": 0}
    with tempfile.TemporaryDirectory() as tmp:
        for line, kind, text in blocks(md):
            src = os.path.join(tmp, f"{os.path.basename(doc)}.L{line}.nn")
            out = os.path.join(tmp, f"out{line}")
            with open(src, "w", encoding="utf-8") as f:
                f.write(text)
            where = f"{doc}:{line}"
            has_model = re.search(r"^\s*model\s+[A-Za-z_]", text, re.M)
            has_layer = re.search(r"^\s*layer\s+[A-Za-z_]", text, re.M)
            if kind == "nn-error":
                r = subprocess.run([nnc, src, "-o", out], capture_output=True, text=True)
                written = os.path.isdir(out) and os.listdir(out)
                if r.returncode != 1 or "error:" not in r.stderr or written:
                    problems.append(f"{where}: an nn-error block should fail with exit 1, an error "
                                    f"and no file; got exit {r.returncode}, files {written or []}, "
                                    f"stderr:\n{r.stderr}")
                counts["rejected"] += 1
            elif has_model:
                r = subprocess.run([nnc, src, "-o", out], capture_output=True, text=True)
                if r.returncode != 0:
                    problems.append(f"{where}: this model does not compile (exit {r.returncode}):\n"
                                    f"{r.stderr}")
                counts["compiled"] += 1
            elif has_layer:
                r = subprocess.run([nnc, "--dump=ast", src], capture_output=True, text=True)
                if r.returncode != 0:
                    problems.append(f"{where}: these layers do not parse (exit {r.returncode}):\n"
                                    f"{r.stderr}")
                counts["parsed"] += 1
            else:
                counts["fragments"] += 1
    if counts["compiled"] == 0:
        problems.append(f"{doc}: no ```nn block with a model was found")
    if fail_report(problems, doc):
        return 1
    print(f"{doc}: {counts['compiled']} models compiled, {counts['parsed']} layer blocks parsed, "
          f"{counts['rejected']} nn-error blocks rejected, {counts['fragments']} fragments")
    return 0


def main(argv):
    usage = __doc__.split("\n\n")[1]
    if len(argv) < 3:
        print(usage)
        return 2
    mode, args = argv[1], argv[2:]
    if mode == "layers" and len(args) == 2:
        return check_layers(*args)
    if mode == "prims" and len(args) >= 2:
        return check_prims(args[0], args[1:])
    if mode == "driver" and len(args) == 2:
        return check_driver(*args)
    if mode == "examples" and len(args) == 2:
        return check_examples(*args)
    print(usage)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
