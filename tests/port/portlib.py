"""What the port tests share: their command line (the nnc and runtime to
build drivers with, as tests/parity/parity.py's) and their failure list."""
import argparse
import os


def parse_args(doc):
    """--nnc, --runtime-lib, --runtime-include [--include DIR]... [--keep],
    made absolute (the tests work in a temporary directory)."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--nnc", required=True)
    ap.add_argument("--runtime-lib", required=True)
    ap.add_argument("--runtime-include", required=True)
    ap.add_argument("--include", action="append", default=[])
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    args = ap.parse_args()
    args.nnc, args.runtime_lib, args.runtime_include = (
        os.path.abspath(p) for p in (args.nnc, args.runtime_lib, args.runtime_include))
    args.include = [os.path.abspath(p) for p in args.include]
    return args


failures = []


def check(cond, msg):
    """Records and prints a failure unless cond; returns cond."""
    if not cond:
        failures.append(msg)
        print("FAIL  " + msg, flush=True)
    return cond
