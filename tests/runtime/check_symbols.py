"""The runtime library's external symbols, where its kernels are built once
per instruction set (runtime/nnc_isa.h, runtime/dispatch.c).

Every global symbol that a variant's object (<source>_<isa>.c.o) defines
ends in _<isa>, so that the three builds of a source never clash; no
global symbol is defined twice in the library; and every function of
runtime/kernels.def is defined once under its public name, by threads.c,
once as name_serial, by dispatch.c, and under each suffix.  Arguments: nm, the library,
kernels.def, then the instruction sets built."""

import re
import subprocess
import sys

nm, lib, kdef, isas = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
out = subprocess.run([nm, "-A", "-g", "--defined-only", lib], capture_output=True, text=True, check=True).stdout
failures = []
defined = {}  # symbol -> [member]
for line in out.splitlines():
    m = re.match(r"^[^:]*:([^:]+):\s*\S*\s+([A-Za-z])\s+(\S+)$", line)
    if not m:
        continue
    member, kind, sym = m.groups()
    defined.setdefault(sym, []).append(member)
    v = re.match(r"^(.*)_(" + "|".join(isas) + r")\.c\.o$", member)
    if v and not sym.endswith("_" + v.group(2)):
        failures.append(f"{member} defines {sym}, without the suffix _{v.group(2)}")
for sym, members in sorted(defined.items()):
    if len(members) > 1:
        failures.append(f"{sym} is defined {len(members)} times: {', '.join(members)}")
names = re.findall(r"^V?KERNEL\w*\((?:[^,]+,\s*)?(nnc_\w+),", open(kdef).read(), re.M)
if len(names) < 20:
    failures.append(f"{kdef}: only {len(names)} kernels found")
for name in names:
    if defined.get(name) != ["threads.c.o"]:
        failures.append(f"{name}: defined by {defined.get(name)}, not by threads.c.o alone")
    if defined.get(name + "_serial") != ["dispatch.c.o"]:
        failures.append(f"{name}_serial: defined by {defined.get(name + '_serial')}, not by dispatch.c.o alone")
    for isa in isas:
        if f"{name}_serial_{isa}" not in defined:
            failures.append(f"{name}_serial_{isa} is not defined")
for f in failures:
    print("check_symbols:", f)
print(f"check_symbols: {len(names)} kernels x {len(isas)} instruction sets, {len(defined)} symbols, "
      f"{len(failures)} failures")
sys.exit(1 if failures else 0)
