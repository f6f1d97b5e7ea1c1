#!/usr/bin/env python3
"""--dump=source against every .nn file of the repository (compiler/source.c).

    check_source.py NNC SRC_ROOT WORK_DIR roundtrip|models|unit [SOURCE_TEST]

The files are found when the test runs (every *.nn under SRC_ROOT, build
trees and .git aside, and every ```nn block of the Markdown files), so that
a new file is covered without a change here.  A file whose source dump
fails does not parse (the error tests): it is counted and skipped.

roundtrip, for each file that parses:
  (a) the printout parses, and its --dump=ast equals the original's with
      only the source positions (`@line:col`) removed from both lines; the
      printout sits in a directory of its own, so its imports are found
      along -I <the original's directory>.  When the original itself does
      not load (an import test's missing file or cycle), the printout must
      fail to load too; the tree comparison needs a loaded file.
  (b) printing is idempotent: the printout's own printout is the same,
      byte for byte.
unit: SOURCE_TEST (source_test.c, under the sanitizers) runs its own cases,
      then parses, prints and parses again each file that parses, in
      process: the trees are compared node by node, which needs no import
      to load.
models: the printout of each .nn file of models/, bench/, examples/ and
      docs/examples/ that compiles (all of models/ must) compiles to the
      same files as the original, byte for byte, except the comment lines
      that quote the source (`/* digits.nn:14  fc1: ... */`), which carry
      .nn line numbers and excerpts of the original text, and which are
      removed from both.  Nothing else is: the model hash of
      nnc_dist_check, which also covers those excerpts, is compared too
      (the printouts of today's models quote the same text).
"""
import os
import re
import shutil
import subprocess
import sys

# ` @12:5`, then optionally the node's doc and comment text, then its
# closing parens, at the end of a line of --dump=ast (ast.c's dump_node):
# anchored there, a ` @1:2` inside a quoted string cannot match.
QUOTED = r'"(?:[^"\\]|\\.)*"'
LOC = re.compile(r" @\d+:\d+((?: doc=" + QUOTED + r")?(?: comment=" + QUOTED + r")?\)*)$")
# the comment above each node's code in generated C (emit.c's emit_comment)
SOURCE_COMMENT = re.compile(r"^\s*/\* [^ /]+\.nn:\d+  .*\*/$")


def strip_locs(dump):
    out = []
    for line in dump.splitlines():
        stripped, n = LOC.subn(r"\1", line)
        if n != 1:
            raise ValueError(f"no position in --dump=ast line: {line!r}")
        out.append(stripped)
    return out


def find_files(root):
    files = []
    for dirpath, dirnames, filenames in os.walk(root):
        # build trees (CMakeCache.txt) hold copies and generated files
        dirnames[:] = sorted(d for d in dirnames
                             if d != ".git" and not os.path.exists(os.path.join(dirpath, d, "CMakeCache.txt")))
        files += [os.path.join(dirpath, f) for f in sorted(filenames) if f.endswith(".nn")]
    return files


def markdown_blocks(root, work):
    """Every ```nn block of the Markdown files, each written to a file."""
    out = []
    for path in find_md(root):
        text = open(path, encoding="utf-8").read()
        for k, m in enumerate(re.finditer(r"^```nn\n(.*?)^```", text, re.S | re.M)):
            rel = os.path.relpath(path, root).replace("/", "_")
            dest = os.path.join(work, "md", f"{rel}.{k}.nn")
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            with open(dest, "w", encoding="utf-8") as f:
                f.write(m.group(1))
            out.append((dest, os.path.dirname(path)))
    return out


def find_md(root):
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames
                             if d != ".git" and not os.path.exists(os.path.join(dirpath, d, "CMakeCache.txt")))
        for f in sorted(filenames):
            if f.endswith(".md"):
                yield os.path.join(dirpath, f)


def run(args, cwd=None):
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True)


def printout(nnc, path, work, k):
    """The source dump of path, written to a directory of its own under
    the same file name: (text, path of the printout), or (None, None)."""
    r = run([nnc, path, "--dump=source"])
    if r.returncode != 0:
        return None, None
    d = os.path.join(work, "print", str(k))
    os.makedirs(d, exist_ok=True)
    dest = os.path.join(d, os.path.basename(path))
    with open(dest, "w", encoding="utf-8") as f:
        f.write(r.stdout)
    return r.stdout, dest


def all_cases(root, work):
    return [(f, os.path.dirname(f)) for f in find_files(root)] + markdown_blocks(root, work)


def unit(nnc, root, work, binary):
    files = [f for f, _ in all_cases(root, work) if run([nnc, f, "--dump=source"]).returncode == 0]
    r = subprocess.run([binary] + files, capture_output=True, text=True)
    print(r.stdout + r.stderr, end="")
    failures = [] if r.returncode == 0 else [f"{binary} failed ({r.returncode})"]
    if f"({len(files)} files)" not in r.stdout:
        failures.append(f"{binary} did not round-trip the {len(files)} files")
    if len(files) < 100:
        failures.append(f"only {len(files)} files parsed: the search for .nn files is broken")
    return failures


def roundtrip(nnc, root, work):
    cases = all_cases(root, work)
    failures, parsed, unparsed, unloaded = [], 0, 0, 0
    for k, (path, incdir) in enumerate(cases):
        name = os.path.relpath(path, root) if path.startswith(root) else path
        text, copy = printout(nnc, path, work, k)
        if text is None:
            unparsed += 1
            continue
        parsed += 1
        # (b) idempotent
        again = run([nnc, copy, "--dump=source"])
        if again.returncode != 0:
            failures.append(f"{name}: the printout does not parse:\n{again.stderr}")
            continue
        if again.stdout != text:
            failures.append(f"{name}: printing the printout changes it (see {copy})")
        # (a) the same tree
        want = run([nnc, path, "--dump=ast"])
        got = run([nnc, copy, "-I", incdir, "--dump=ast"])
        if want.returncode != 0:
            unloaded += 1
            if got.returncode == 0:
                failures.append(f"{name}: the original does not load, its printout does")
            continue
        if got.returncode != 0:
            failures.append(f"{name}: the printout does not load:\n{got.stderr}")
            continue
        a, b = strip_locs(want.stdout), strip_locs(got.stdout)
        if a != b:
            i = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), min(len(a), len(b)))
            failures.append(f"{name}: --dump=ast differs at line {i + 1} (see {copy}):\n"
                            f"  original: {a[i] if i < len(a) else '(end)'}\n"
                            f"  printout: {b[i] if i < len(b) else '(end)'}")
    print(f"{len(cases)} files: {parsed} printed and compared ({unloaded} of them do not load, "
          f"compared by printout only), {unparsed} do not parse")
    if parsed < 100:
        failures.append(f"only {parsed} files parsed: the search for .nn files is broken")
    return failures


def strip_comments(text):
    return [l for l in text.splitlines() if not SOURCE_COMMENT.match(l)]


# the files compiled in `models` mode; each of models/ must compile
COMPILED = ["models", "bench", "examples", "docs/examples"]


def models(nnc, root, work):
    failures, n, stripped = [], 0, 0
    for top in COMPILED:
        for path in find_files(os.path.join(root, top)):
            rel = os.path.relpath(path, root)
            orig = os.path.join(work, "models_out", rel, "orig")
            c = run([nnc, rel, "--emit=all", "-o", orig], cwd=root)
            if c.returncode != 0:
                if top == "models":
                    failures.append(f"{rel}: nnc failed:\n{c.stderr}")
                continue  # a library of layers, or a model that needs -D
            n += 1
            r = run([nnc, rel, "--dump=source"], cwd=root)
            if r.returncode != 0:
                failures.append(f"{rel}: --dump=source failed:\n{r.stderr}")
                continue
            # the printout at the same relative path, so that the banner's
            # "generated by nnc from models/x.nn" is the same
            pdir = os.path.join(work, "models_print", rel)
            os.makedirs(os.path.join(pdir, os.path.dirname(rel)), exist_ok=True)
            with open(os.path.join(pdir, rel), "w", encoding="utf-8") as out:
                out.write(r.stdout)
            printed = os.path.join(work, "models_out", rel, "print")
            c = run([nnc, rel, "--emit=all", "-o", printed, "-I", os.path.dirname(path)], cwd=pdir)
            if c.returncode != 0:
                failures.append(f"{rel}: the printout does not compile:\n{c.stderr}")
                continue
            names = [sorted(os.listdir(o)) for o in (orig, printed)]
            if names[0] != names[1] or not names[0]:
                failures.append(f"{rel}: different files: {names[0]} vs {names[1]}")
                continue
            same = True
            for name in names[0]:
                a, b = (open(os.path.join(o, name), encoding="utf-8").read() for o in (orig, printed))
                sa, sb = strip_comments(a), strip_comments(b)
                stripped += len(a.splitlines()) - len(sa)
                if sa != sb:
                    same = False
                    i = next((i for i in range(min(len(sa), len(sb))) if sa[i] != sb[i]), min(len(sa), len(sb)))
                    failures.append(f"{rel}: {name} differs:\n  original: {sa[i] if i < len(sa) else '(end)'}\n"
                                    f"  printout: {sb[i] if i < len(sb) else '(end)'}")
                    if i < len(sa) and "nnc_dist_check" in sa[i]:
                        # emit_fn.c's model_hash hashes --dump=ir, whose
                        # node comments quote the source text
                        failures.append(f"{rel}: (the model hash also covers the source excerpts of --dump=ir: "
                                        "a printout that differs from the original inside an expression, in "
                                        "parentheses or line breaks, changes it)")
            if same:
                print(f"{rel}: {', '.join(names[0])} the same")
    print(f"{n} models compared, {stripped} source comment lines removed")
    if not stripped:
        failures.append("no source comment line was removed: the filter is stale")
    if n < 10:
        failures.append(f"only {n} models compiled")
    return failures


def main():
    nnc, root, work, what = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3], sys.argv[4]
    # a directory per mode, emptied first: ctest may run the modes at once
    work = os.path.join(work, what)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    if what == "roundtrip":
        failures = roundtrip(nnc, root, work)
    elif what == "models":
        failures = models(nnc, root, work)
    else:
        failures = unit(nnc, root, work, sys.argv[5])
    for f in failures:
        print("FAIL", f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
