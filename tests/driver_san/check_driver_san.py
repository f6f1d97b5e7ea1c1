"""The generated driver's whole command line, with bad values, under ASan
and UBSan (LeakSanitizer too).

DRIVER is the digits model's checked-in driver (generated/digits: input x
f32 [N, 64], label y i32 [N] < 10 or -100) built with the runtime and
driver.c under -fsanitize=address,undefined.  Every case is a bad command
line: missing values, non-numbers, trailing garbage, negatives, zero,
huge numbers, NaN and infinities, empty strings, unknown and repeated
flags, flags of another subcommand, missing, truncated, mistyped and
misshapen files, directories where files go, bad enum values, a log with
another extension, outputs into missing directories, --resume from a
checkpoint without training state.  Each must:

- exit with its status, 1 (usage) or 2 (a file), and no other: the
  sanitizers' exit codes are set apart (97-99);
- print one line on stderr, `<prog>: <message>`, followed, for a usage
  error, by exactly the usage that `<prog> <sub> --help` prints (the
  driver's convention: docs/generated-c.md, "Exit status"), and nothing
  on stdout;
- write nothing: the scratch directory's listing (names, sizes and
  modification times) is the same after as before.

Usage: check_driver_san.py DRIVER LSAN_SUPPRESSIONS
"""

import json
import os
import re
import struct
import subprocess
import sys
import tempfile

import numpy as np

DRIVER, SUPP = sys.argv[1], sys.argv[2]
PROG = os.path.basename(DRIVER)
ENV = {**os.environ,
       "ASAN_OPTIONS": "exitcode=97:detect_leaks=1:abort_on_error=0",
       "UBSAN_OPTIONS": "exitcode=98:print_stacktrace=1:halt_on_error=1",
       "LSAN_OPTIONS": f"exitcode=99:suppressions={SUPP}",
       "OMP_NUM_THREADS": "2"}
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(args):
    return subprocess.run([DRIVER] + [str(a) for a in args], capture_output=True, text=True, env=ENV)


def listing(root):
    out = {}
    for d, dirs, files in os.walk(root):
        for f in dirs + files:
            p = os.path.join(d, f)
            st = os.lstat(p)
            out[os.path.relpath(p, root)] = (st.st_size, st.st_mtime_ns)
    return out


def write_st(path, tensors, dtype="F32"):
    header, blobs, off = {}, [], 0
    for name, a in tensors.items():
        b = np.ascontiguousarray(a, "<f4").tobytes()
        header[name] = {"dtype": dtype, "shape": list(a.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


with tempfile.TemporaryDirectory() as root:
    os.chdir(root)
    rng = np.random.default_rng(0)
    n = 20
    np.save("x.npy", rng.standard_normal((n, 64)).astype(np.float32))
    np.save("y.npy", (np.arange(n) % 10).astype(np.int32))
    np.save("x_i32.npy", np.zeros((n, 64), np.int32))
    np.save("x_f64.npy", np.zeros((n, 64), np.float64))
    np.save("x_shape.npy", np.zeros((n, 63), np.float32))
    np.save("x_3d.npy", np.zeros((n, 8, 8), np.float32))
    np.save("x_empty.npy", np.zeros((0, 64), np.float32))
    np.save("x_fortran.npy", np.asfortranarray(np.zeros((n, 64), np.float32)))
    np.save("x_few.npy", np.zeros((n - 1, 64), np.float32))
    with open("x.npy", "rb") as f:
        data = f.read()
    with open("x_trunc.npy", "wb") as f:
        f.write(data[:len(data) - 100])
    with open("x_hdr.npy", "wb") as f:
        f.write(data[:40])
    with open("garbage.npy", "wb") as f:
        f.write(b"not an array at all\n" * 10)
    open("empty.npy", "wb").close()
    np.save("y_range.npy", np.full(n, 10, np.int32))
    np.save("y_neg.npy", np.full(n, -5, np.int32))
    np.save("y_f32.npy", np.zeros(n, np.float32))
    np.save("y_2d.npy", np.zeros((n, 1), np.int32))
    np.save("y_short.npy", np.zeros(n - 1, np.int32))
    os.mkdir("adir")
    os.mkdir("adir.npy")
    os.mkdir("adir.safetensors")
    os.mkdir("adir.csv")
    # weights: a valid file from the driver itself, then broken ones
    r = run(["train", "--inputs", "x.npy", "--labels", "y.npy", "--save", "w.st", "--epochs", 1, "--quiet"])
    check(r.returncode == 0, f"setup: train: {r.stderr!r}")
    r = run(["train", "--inputs", "x.npy", "--labels", "y.npy", "--save", "ck.st", "--epochs", 2, "--quiet",
             "--stop-after", 1, "--seed", 3])
    check(r.returncode == 0, f"setup: a checkpoint with training state: {r.stderr!r}")
    with open("w.st", "rb") as f:
        wdata = f.read()
    with open("w_trunc.st", "wb") as f:
        f.write(wdata[:len(wdata) // 2])
    with open("w_hdr.st", "wb") as f:
        f.write(wdata[:5])
    good = {"fc1.weight": np.zeros((128, 64)), "fc1.bias": np.zeros(128), "fc2.weight": np.zeros((10, 128)),
            "fc2.bias": np.zeros(10)}
    write_st("w_shape.st", {**good, "fc1.weight": np.zeros((64, 128))})
    write_st("w_missing.st", {k: v for k, v in good.items() if k != "fc2.bias"})
    write_st("w_extra.st", {**good, "fc3.bias": np.zeros(3)})
    write_st("w_i32.st", good, dtype="I32")
    write_st("w_f16.st", good, dtype="F16")
    with open("w_json.st", "wb") as f:
        f.write(struct.pack("<Q", 5) + b"{abc}")
    with open("w_huge.st", "wb") as f:
        f.write(struct.pack("<Q", 1 << 63) + b"{}")

    T = ["train", "--inputs", "x.npy", "--labels", "y.npy", "--save", "out.st", "--epochs", 1, "--quiet"]
    E = ["eval", "--weights", "w.st", "--inputs", "x.npy", "--labels", "y.npy"]
    PR = ["predict", "--weights", "w.st", "--inputs", "x.npy", "--output", "p.npy"]
    G = ["grad", "--weights", "w.st", "--inputs", "x.npy", "--labels", "y.npy", "--output", "g.st"]

    def with_opt(base, flag, value):
        """base with --flag value, replacing a --flag it has"""
        a = list(base)
        if flag in a:
            i = a.index(flag)
            a[i + 1] = value
            return a
        return a + [flag, value]

    cases = []  # (label, args, status)
    # ---- numbers
    bad_all = ["", "x", "3x", "1.5.2", " 1", "1 ", "-1", "nan", "NaN", "-nan", "inf", "-inf", "infinity",
               "0x", "--", "-", "1e", "e5"]
    int_flags = {"--epochs": 0, "--batch": 1, "--accumulate": 1, "--warmup": 0, "--lr-step-size": 1,
                 "--log-every": 1, "--save-every": 1, "--stop-after": 1}
    float_flags = {"--lr": 0, "--momentum": 0, "--weight-decay": 0, "--clip": 1, "--lr-gamma": 1,
                   "--val-split": 1, "--progress": 0}
    ctx = {"--lr-step-size": ["--lr-schedule", "step"], "--lr-gamma": ["--lr-schedule", "step"],
           "--momentum": ["--optimizer", "sgd"]}
    for flag, lo in int_flags.items():
        bad = bad_all + ["99999999999999999999", "-99999999999999999999", "1.5", "1e3", "2147483648" if flag in (
            "--epochs", "--batch", "--accumulate") else "9223372036854775808"]
        if lo == 1:
            bad += ["0", "-0"]
        for b in bad:
            cases.append((f"train {flag} {b!r}", T + ctx.get(flag, []) + [flag, b], 1))
    for flag, lo_open in float_flags.items():
        bad = bad_all + ["1e999", "-1e999", "-0.5", "1e-99999"]
        if lo_open:
            bad += ["0", "-0", "0.0"]
        if flag == "--val-split":
            bad += ["1", "1.0", "99999999999999999999"]
        for b in bad:
            cases.append((f"train {flag} {b!r}", T + ctx.get(flag, []) + [flag, b], 1))
    for b in bad_all + ["18446744073709551616", "99999999999999999999", "+1", "1.0"]:
        if b in ("+1",):
            continue
        cases.append((f"train --seed {b!r}", T + ["--seed", b], 1))
        cases.append((f"grad --seed {b!r}", G + ["--seed", b], 1))
    for sub in (["info"], T, E, PR, G):
        for b in bad_all + ["0", "-0", "99999999999999999999", "1000000", "1.5"]:
            cases.append((f"{sub[0]} --threads {b!r}", sub + ["--threads", b], 1))
    # ---- enums
    for b in ["foo", "", "SGD", "Adam", "adam ", "adamw,sgd", "rmsprop"]:
        cases.append((f"--optimizer {b!r}", T + ["--optimizer", b], 1))
    for b in ["foo", "", "Cosine", "exp", "step "]:
        cases.append((f"--lr-schedule {b!r}", T + ["--lr-schedule", b], 1))
    for b in ["log.txt", "log", "", "log.csvx", "log.json", "adir"]:
        cases.append((f"--log {b!r}", T + ["--log", b], 1))
    # ---- the command line's shape
    cases += [
        ("no arguments", [], 1),
        ("empty subcommand", [""], 1),
        ("unknown subcommand", ["bogus"], 1),
        ("subcommand in capitals", ["Train"], 1),
        ("an option for a subcommand", ["--epochs", "3"], 1),
        ("info positional", ["info", "extra"], 1),
        ("info unknown", ["info", "--bogus"], 1),
        ("info another's flag", ["info", "--epochs", "3"], 1),
        ("single dash", T + ["-epochs", "3"], 1),
        ("bare --", T + ["--"], 1),
        ("bare -", T + ["-"], 1),
        ("triple dash", T + ["---epochs", "3"], 1),
        ("--=", T + ["--=3"], 1),
        ("capital flag", T + ["--EPOCHS", "3"], 1),
        ("unknown flag", T + ["--bogus", "1"], 1),
        ("unknown flag with =", T + ["--bogus=1"], 1),
        ("duplicate flag", T + ["--epochs", "2"], 1),
        ("duplicate with =", T + ["--epochs=2"], 1),
        ("duplicate inputs", T + ["--inputs", "x.npy"], 1),
        ("= with two values", T[:-3] + ["--epochs=3=4", "--quiet"], 1),
        ("--quiet=1", T[:-1] + ["--quiet=1"], 1),
        ("--quiet twice", T + ["--quiet"], 1),
        ("--non-strict=1", E + ["--non-strict=1"], 1),
        ("--non-strict for info", ["info", "--non-strict"], 1),
        ("train missing value", T + ["--lr"], 1),
        ("eval missing value", E + ["--threads"], 1),
        ("predict missing value", PR + ["--threads"], 1),
        ("grad missing value", G + ["--seed"], 1),
        ("eval another's flag", E + ["--save", "s.st"], 1),
        ("predict --labels", PR + ["--labels", "y.npy"], 1),
        ("predict another's flag", PR + ["--epochs", "1"], 1),
        ("grad another's flag", G + ["--lr", "1"], 1),
        ("eval --save-every", E + ["--save-every", "1"], 1),
        ("train missing --inputs", T[:1] + T[3:], 1),
        ("train missing --labels", T[:3] + T[5:], 1),
        ("train missing --save", T[:5] + T[7:], 1),
        ("eval missing --weights", E[:1] + E[3:], 1),
        ("eval missing --labels", E[:5], 1),
        ("predict missing --output", PR[:5], 1),
        ("predict missing --inputs", PR[:3] + PR[5:], 1),
        ("grad missing --output", G[:7], 1),
        ("grad missing --weights", G[:1] + G[3:], 1),
        ("empty --inputs", with_opt(T, "--inputs", ""), 1),
        ("empty --labels", with_opt(T, "--labels", ""), 1),
        ("empty --save", with_opt(T, "--save", ""), 1),
        ("empty --weights", with_opt(E, "--weights", ""), 1),
        ("empty --output", with_opt(PR, "--output", ""), 1),
        ("empty --resume", T + ["--resume", ""], 1),
        ("two inputs", with_opt(T, "--inputs", "x.npy,x.npy"), 1),
        ("comma input", with_opt(T, "--inputs", ","), 1),
        ("trailing comma", with_opt(E, "--inputs", "x.npy,"), 1),
        ("two labels", with_opt(E, "--labels", "y.npy,y.npy"), 1),
        # ---- combinations
        ("--lr-step-size without step", T + ["--lr-step-size", "3"], 1),
        ("--lr-gamma without step", T + ["--lr-schedule", "cosine", "--lr-gamma", "0.5"], 1),
        ("--momentum with adam", T + ["--momentum", "0.9"], 1),
        ("--val-labels alone", T + ["--val-labels", "y.npy"], 1),
        ("--val-inputs alone", T + ["--val-inputs", "x.npy"], 1),
        ("--val-split and --val-inputs", T + ["--val-split", "0.5", "--val-inputs", "x.npy", "--val-labels",
                                              "y.npy"], 1),
        ("--val-split holding out none", T + ["--val-split", "0.01"], 1),
        ("--resume and --weights", T + ["--resume", "ck.st", "--weights", "w.st"], 1),
        ("--resume with another seed", with_opt(T, "--epochs", 2) + ["--resume", "ck.st", "--seed", "4"], 1),
        ("--resume with another batch", with_opt(T, "--epochs", 2) + ["--resume", "ck.st", "--seed", "3",
                                                                      "--batch", "7"], 1),
        # ---- files (exit 2)
        ("--resume from weights only", T + ["--resume", "w.st"], 2),
        ("--resume missing", T + ["--resume", "nope.st"], 2),
        ("--resume directory", T + ["--resume", "adir.safetensors"], 2),
        ("--resume truncated", T + ["--resume", "w_trunc.st"], 2),
        ("--save into a missing directory", with_opt(T, "--save", "nodir/out.st"), 2),
        ("--save into a missing directory, with a log", with_opt(T, "--save", "nodir/out.st") + ["--log", "l.csv"],
         2),
        ("--save-every into a missing directory", with_opt(T, "--save", "nodir/out.st") + ["--save-every", 1], 2),
        ("--save a directory", with_opt(T, "--save", "adir.safetensors"), 2),
        ("--save a directory, with a log", with_opt(T, "--save", "adir") + ["--log", "l.jsonl"], 2),
        ("--save under a file", with_opt(T, "--save", "x.npy/out.st"), 2),
        ("--log into a missing directory", T + ["--log", "nodir/l.csv"], 2),
        ("--log a directory", T + ["--log", "adir.csv"], 2),
        # a bad value is a usage error before any file is looked at
        ("a bad number and a missing directory", with_opt(T, "--save", "nodir/out.st") + ["--lr", "x"], 1),
        ("a bad number and a missing file", with_opt(T, "--inputs", "nope.npy") + ["--lr", "x"], 1),
        ("grad: a bad seed and a missing directory", with_opt(G, "--output", "nodir/g.st") + ["--seed", "x"], 1),
        ("predict --output into a missing directory", with_opt(PR, "--output", "nodir/p.npy"), 2),
        ("predict --output a directory", with_opt(PR, "--output", "adir.npy"), 2),
        ("grad --output into a missing directory", with_opt(G, "--output", "nodir/g.st"), 2),
        ("grad --output a directory", with_opt(G, "--output", "adir"), 2),
    ]
    npy_bad = ["nope.npy", "adir.npy", "adir", "garbage.npy", "empty.npy", "x_trunc.npy", "x_hdr.npy",
               "x_fortran.npy"]
    for f in npy_bad + ["x_i32.npy", "x_f64.npy", "x_shape.npy", "x_3d.npy", "x_empty.npy", "y.npy"]:
        for base in (T, E, PR, G):
            cases.append((f"{base[0]} --inputs {f}", with_opt(base, "--inputs", f), 2))
        cases.append((f"train --val-inputs {f}", T + ["--val-inputs", f, "--val-labels", "y.npy"], 2))
    for f in npy_bad + ["y_range.npy", "y_neg.npy", "y_f32.npy", "y_2d.npy", "y_short.npy", "x.npy"]:
        for base in (T, E, G):
            cases.append((f"{base[0]} --labels {f}", with_opt(base, "--labels", f), 2))
        cases.append((f"train --val-labels {f}", T + ["--val-inputs", "x.npy", "--val-labels", f], 2))
    cases.append(("--inputs and --labels disagree", with_opt(T, "--inputs", "x_few.npy"), 2))
    for f in ["nope.st", "adir.safetensors", "adir", "x.npy", "w_trunc.st", "w_hdr.st", "w_shape.st",
              "w_missing.st", "w_extra.st", "w_i32.st", "w_f16.st", "w_json.st", "w_huge.st", "empty.npy"]:
        for base in (E, PR, G):
            cases.append((f"{base[0]} --weights {f}", with_opt(base, "--weights", f), 2))
        cases.append((f"train --weights {f}", T + ["--weights", f], 2))

    helps = {}
    for sub in ("", "info", "train", "eval", "predict", "grad"):
        r = run([sub, "--help"] if sub else ["--help"])
        check(r.returncode == 0 and r.stdout.startswith("usage:"), f"{sub} --help")
        helps[sub] = r.stdout

    # every flag and subcommand of the usage is in some case
    used = {str(a).split("=")[0] for _, args, _ in cases for a in args}
    named = set(re.findall(r"--[a-z][a-z-]*", helps[""])) | set(re.findall(r"\b(?:%s) (info|train|eval|predict|grad)\b"
                                                                          % re.escape(PROG), helps[""]))
    check(len(named) > 30 and named <= used, f"flags and subcommands without a bad case: {sorted(named - used)}")

    before = listing(root)
    for label, args, status in cases:
        r = run(args)
        lines = r.stderr.split("\n")
        sub = args[0] if args and args[0] in helps and args[0] else ""
        if status == 1 and label in ("no arguments", "empty subcommand", "unknown subcommand",
                                     "subcommand in capitals", "an option for a subcommand"):
            sub = ""
        ok = r.returncode == status and r.stdout == "" and lines[0].startswith(PROG + ": ") and len(lines[0]) > len(
            PROG) + 2
        if status == 1:
            ok = ok and "\n".join(lines[1:]) == helps[sub]
        else:
            ok = ok and len(lines) == 2 and lines[1] == ""
        sanitizer = any(s in r.stderr for s in ("Sanitizer", "runtime error:"))
        check(ok and not sanitizer, f"{label}: exit {r.returncode} (want {status}), stderr {r.stderr[:2000]!r}, "
                                    f"stdout {r.stdout[:200]!r}")
        after = listing(root)
        if after != before:
            check(False, f"{label}: wrote {sorted(set(after.items()) ^ set(before.items()))}")
            for p in set(after) - set(before):
                os.remove(p)
            before = listing(root)
    print(f"{len(cases)} bad command lines")

print("FAILED" if failures else "ok")
sys.exit(1 if failures else 0)
