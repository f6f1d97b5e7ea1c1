"""The runtime library's objects are compiled at -O3, whatever the build
type but Debug (CMakeLists.txt, NNC_RUNTIME_OPT).

The default build type, RelWithDebInfo (-O2), is what README.md's
commands install; at -O2 gcc 12 unrolled the direct convolution's
register blocks only in part and ran it at a third of its -O3 rate.  The
check reads the flags gcc recorded in each object's debug information
(DW_AT_producer, -grecord-gcc-switches, on by default with -g): the last
-O of every object of the archive must be -O3.  A build without debug
information (Release) records nothing and is skipped (exit 77).
Arguments: readelf, the library."""

import re
import subprocess
import sys

readelf, lib = sys.argv[1], sys.argv[2]
out = subprocess.run([readelf, "--debug-dump=info", lib], capture_output=True, text=True, check=True).stdout
member, levels, failures = None, {}, []
for line in out.splitlines():
    m = re.match(r"^File: .*\((.+)\)$", line)
    if m:
        member = m.group(1)
        continue
    if "DW_AT_producer" in line and member and member not in levels:
        opts = re.findall(r"(?<!\S)-O(\S*)", line)
        levels[member] = opts[-1] if opts else "(none)"
if not levels:
    print(f"{lib}: no debug information, so no recorded flags to check")
    sys.exit(77)
for member, level in sorted(levels.items()):
    if level != "3":
        failures.append(f"{member} was compiled at -O{level}, not -O3")
for f in failures:
    print(f)
print(f"{len(levels)} objects, {len(failures)} not at -O3")
sys.exit(1 if failures else 0)
