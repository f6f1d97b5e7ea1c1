"""libnnc_runtime.a depends on nothing of MPI: it references no MPI symbol
(MPI_*, PMPI_*, ompi_*), so a program that links it needs no MPI.  The
MPI variant, when given, must reference MPI (so that the pattern is seen
to match where MPI is used).  Arguments: nm, libnnc_runtime.a, then
optionally libnnc_runtime_mpi.a."""

import re
import subprocess
import sys

MPI = re.compile(r"^(P?MPI_|ompi_|mpi_)", re.I)


def undefined(nm, lib):
    out = subprocess.run([nm, "-A", "-u", lib], capture_output=True, text=True, check=True).stdout
    syms = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[-2] == "U":
            syms.append((parts[0].rstrip(":"), parts[-1]))
    return syms


nm, lib = sys.argv[1], sys.argv[2]
failures = 0
und = undefined(nm, lib)
for member, sym in und:
    if MPI.match(sym):
        print(f"check_no_mpi: {member} references {sym}")
        failures += 1
print(f"check_no_mpi: {lib}: {len(und)} undefined references, {failures} to MPI")
if len(sys.argv) > 3:
    mpi = [s for m, s in undefined(nm, sys.argv[3]) if MPI.match(s)]
    print(f"check_no_mpi: {sys.argv[3]}: {len(mpi)} references to MPI")
    if "MPI_Init_thread" not in mpi:
        print("check_no_mpi: the MPI variant does not reference MPI_Init_thread")
        failures += 1
sys.exit(1 if failures else 0)
