#!/usr/bin/env python3
"""docs/nnc.1 and `nnc --help` cannot drift apart: every option line of
the help (its signature, e.g. `-o DIR`, `--emit=KIND`) is the tag of an
entry in the man page's OPTIONS section, and every entry there is in the
help; the version in .TH is `nnc --version`'s; groff, when installed,
formats the page without a warning.

    check_man.py NNC MANPAGE
"""
import re
import shlex
import shutil
import subprocess
import sys


def help_options(nnc):
    text = subprocess.run([nnc, "--help"], check=True, capture_output=True, text=True).stdout
    opts = []
    for line in text.splitlines():
        m = re.match(r"^  (-\S.*?)(?:\s{2,}|$)", line)
        if m:
            opts.append(m.group(1).strip())
    return opts


def roff_text(s):
    """A tag line's text: fonts dropped, escapes resolved."""
    s = re.sub(r"\\f[BIRP]", "", s)
    return s.replace("\\-", "-").replace("\\e", "\\").replace("\\&", "")


def man_options(page):
    lines = page.splitlines()
    tags, section = [], None
    for i, line in enumerate(lines):
        if line.startswith(".SH"):
            section = line[3:].strip().strip('"')
        elif section == "OPTIONS" and line.startswith(".TP") and i + 1 < len(lines):
            tag = lines[i + 1]
            macro, _, rest = tag.partition(" ")
            args = shlex.split(rest, posix=True)
            # .B joins its arguments with spaces; .BI/.IB/.BR... alternate fonts without
            tags.append(roff_text((" " if macro == ".B" else "").join(args)))
    return tags


def main():
    nnc, man = sys.argv[1], sys.argv[2]
    page = open(man, encoding="utf-8").read()
    in_help, in_man = help_options(nnc), man_options(page)
    bad = False
    if len(in_help) < 10:
        print(f"only {len(in_help)} options parsed from nnc --help: {in_help}")
        bad = True
    for o in in_help:
        if o not in in_man:
            print(f"nnc --help has '{o}', {man} does not (add an entry under OPTIONS)")
            bad = True
    for o in in_man:
        if o not in in_help:
            print(f"{man} documents '{o}', nnc --help does not list it")
            bad = True
    version = subprocess.run([nnc, "--version"], check=True, capture_output=True, text=True).stdout.split()[-1]
    th = next((l for l in page.splitlines() if l.startswith(".TH")), "")
    if f'"nnc {version}"' not in th:
        print(f"{man}: .TH should say \"nnc {version}\": {th}")
        bad = True
    if shutil.which("groff"):
        r = subprocess.run(["groff", "-man", "-ww", "-z", man], capture_output=True, text=True)
        if r.returncode != 0 or r.stderr:
            print(f"groff warns about {man}:\n{r.stderr}")
            bad = True
    if bad:
        return 1
    print(f"{len(in_help)} options, in nnc --help and in {man} alike")
    return 0


if __name__ == "__main__":
    sys.exit(main())
