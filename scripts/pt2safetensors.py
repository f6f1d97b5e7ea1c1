#!/usr/bin/env python3
"""pt2safetensors.py -- turns a PyTorch .pt file into a safetensors checkpoint.

PyTorch writes checkpoints with torch.save, which is pickle; nnc reads
safetensors (an 8-byte little-endian header length, a JSON header giving
each tensor's dtype, shape and data_offsets, then the raw little-endian
data).  Debian has no safetensors package, so this script writes the
format itself, with nothing but torch, numpy and the standard library.

The names stay PyTorch's: the standard library's layers use PyTorch's
param and state names (docs/language.md, "Standard library"), so a model
whose fields are named as the PyTorch modules loads the result as it is.
The options below cover the usual differences.

What the input may hold (torch.load, by default with weights_only=True,
which unpickles tensors and plain containers but runs no code):

  - a state_dict: a dict whose values are all tensors, as written by
    torch.save(model.state_dict(), path);
  - a checkpoint dict holding one: the value of the first of the keys
    "state_dict" (PyTorch Lightning and many scripts), "model_state_dict"
    (PyTorch's tutorials) and "model" (torchvision's reference scripts)
    that is a dict of tensors or a module; --key chooses another key;
  - a whole nn.Module (torch.save(model, path)), whose state_dict() is
    taken; unpickling a module runs code, so this needs --trust.

Each tensor is written in its own dtype (F64, F32, F16, BF16, I64, I32,
I16, I8, U8, BOOL): nnc converts F16, BF16 and F64 to float as it loads,
and keeps BatchNorm's num_batches_tracked an I64.  --dtype f32 writes
every floating-point tensor as F32 instead (integer tensors stay as they
are).  Names are rewritten in this order: every --strip-prefix and
--rename in the order given (each a prefix rewrite, applied to the result
of the ones before), then --drop removes the tensors whose new name
matches.  The header lists the tensors in the input's order; the data
section holds them by decreasing element size, so that every tensor is
aligned to its element in the file.

Exit status: 0 on success, 2 on any error (a one-line message on stderr;
no output file is written or left half-written).

Examples:
  pt2safetensors.py resnet18.pt resnet18.safetensors
  pt2safetensors.py --list ckpt.pth                   # names, dtypes, shapes
  pt2safetensors.py --strip-prefix module. dp.pt out.safetensors
  pt2safetensors.py --rename features.=backbone. --drop '^classifier\\.' a.pt b.safetensors
  pt2safetensors.py --dtype f32 half.pt out.safetensors
"""
import argparse
import json
import os
import re
import struct
import sys
import tempfile

PROG = "pt2safetensors.py"
STATE_DICT_KEYS = ("state_dict", "model_state_dict", "model")


class Fail(Exception):
    """An error for the user: printed as one line, exit status 2."""


def fail(msg):
    raise Fail(msg)


class Parser(argparse.ArgumentParser):
    """argparse, with usage errors on one line and exit status 2."""

    def error(self, message):
        sys.stderr.write("%s: error: %s (see --help)\n" % (PROG, message))
        sys.exit(2)


class Rename(argparse.Action):
    """--strip-prefix P and --rename OLD=NEW both append (old, new) to one
    list, so that they apply in the order they were given."""

    def __call__(self, parser, ns, value, option_string=None):
        if option_string == "--strip-prefix":
            old, new = value, ""
        else:
            old, sep, new = value.partition("=")
            if not sep:
                parser.error("--rename takes OLD=NEW, got %r" % value)
        if not old:
            parser.error("%s: the prefix to replace is empty" % option_string)
        ns.renames = (ns.renames or []) + [(old, new)]


def parse_args(argv):
    ap = Parser(prog=PROG, description="Turns a PyTorch .pt file (a state_dict) into a safetensors checkpoint.",
                epilog="The docstring at the top of the script (and docs/from-pytorch.md) says more.",
                formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("input", metavar="IN.pt", help="the file torch.save wrote")
    ap.add_argument("output", metavar="OUT.safetensors", nargs="?",
                    help="the file to write (required unless --list)")
    ap.add_argument("--dtype", choices=("keep", "f32"), default="keep",
                    help="keep: each tensor in its own dtype (default); f32: floating-point "
                         "tensors as F32, integer ones as they are")
    ap.add_argument("--strip-prefix", metavar="PREFIX", action=Rename, dest="renames",
                    help="remove PREFIX from the names that start with it (e.g. 'module.' of "
                         "DataParallel, '_orig_mod.' of torch.compile); repeatable")
    ap.add_argument("--rename", metavar="OLD=NEW", action=Rename, dest="renames",
                    help="replace the prefix OLD by NEW in the names that start with OLD "
                         "(include the dot to match whole components: 'features.=backbone.'); "
                         "repeatable")
    ap.add_argument("--drop", metavar="REGEX", action="append", default=[],
                    help="leave out the tensors whose name (after the renames) matches the Python "
                         "regular expression (re.search: 'num_batches_tracked$'); repeatable")
    ap.add_argument("--key", metavar="KEY",
                    help="take the state_dict from this top-level key of a checkpoint dict "
                         "(default: the first of %s that holds one)" % ", ".join(STATE_DICT_KEYS))
    ap.add_argument("--list", action="store_true",
                    help="print each tensor that would be written (name, dtype, shape) on stdout")
    ap.add_argument("--trust", action="store_true",
                    help="unpickle any object in the file (torch.load with weights_only=False): it "
                         "can run code, so only for files you trust")
    args = ap.parse_args(argv)
    if args.output is None and not args.list:
        ap.error("give OUT.safetensors (or --list)")
    args.renames = args.renames or []
    drops = []
    for r in args.drop:
        try:
            drops.append(re.compile(r))
        except re.error as e:
            ap.error("--drop %r: not a regular expression: %s" % (r, e))
    args.drop = drops
    return args


# ---- reading ---------------------------------------------------------------------------

def load(path, trust):
    import torch
    if not os.path.exists(path):
        fail("%s: no such file" % path)
    try:
        with open(path, "rb") as f:
            magic = f.read(2)
    except OSError as e:
        fail("%s: cannot read: %s" % (path, e.strerror or e))
    # torch.save writes a zip archive (PyTorch >= 1.6) or, in the legacy
    # format, pickles (protocol 2 and up start with 0x80)
    if magic != b"PK" and magic[:1] != b"\x80":
        fail("%s: not a file that torch.save wrote (neither a zip archive nor a pickle)" % path)
    try:
        if trust:
            return torch.load(path, map_location="cpu")
        try:
            return torch.load(path, map_location="cpu", weights_only=True)
        except TypeError as e:
            if "weights_only" not in str(e):
                raise
            fail("%s: this PyTorch (%s) has no weights-only load; pass --trust if you trust the file"
                 % (path, torch.__version__))
    except Fail:
        raise
    except Exception as e:  # noqa: BLE001 -- torch.load raises anything a file can cause
        msg = " ".join(str(e).split()) or type(e).__name__
        if not trust and "weights only" in msg.lower():
            # torch's message is a paragraph; its last sentence names the object
            why = msg.rsplit("error:", 1)[-1].strip()
            fail("%s: holds an object that a weights-only load refuses (%s); pass --trust if you "
                 "trust the file" % (path, why))
        fail("%s: torch.load failed: %s" % (path, msg[:300]))


def is_tensor_dict(d):
    import torch
    return isinstance(d, dict) and len(d) > 0 and all(isinstance(v, torch.Tensor) for v in d.values())


def as_state_dict(obj, path, key):
    """The state_dict held by what torch.load returned (see the docstring)."""
    import torch
    if isinstance(obj, torch.nn.Module):
        return obj.state_dict()
    if not isinstance(obj, dict):
        fail("%s: holds a %s, not a state_dict or a checkpoint dict" % (path, type(obj).__name__))
    if key is not None:
        if key not in obj:
            fail("%s: no key %r; the top-level keys are %s" % (path, key, keys_of(obj)))
        sd = obj[key]
        if isinstance(sd, torch.nn.Module):
            return sd.state_dict()
        if not isinstance(sd, dict):
            fail("%s: %r holds a %s, not a state_dict" % (path, key, type(sd).__name__))
        return sd
    if is_tensor_dict(obj):
        return obj
    for k in STATE_DICT_KEYS:
        v = obj.get(k)
        if isinstance(v, torch.nn.Module):
            return v.state_dict()
        if is_tensor_dict(v):
            return v
    if any(isinstance(v, torch.Tensor) for v in obj.values()):
        return obj      # a state_dict with non-tensor entries: named below
    fail("%s: holds no state_dict: its top-level keys are %s (choose one with --key)"
         % (path, keys_of(obj)))


def keys_of(d):
    ks = [repr(k) for k in list(d)[:12]]
    return ", ".join(ks) + (", ..." if len(d) > 12 else "") if ks else "none"


# ---- names and dtypes ---------------------------------------------------------------------

def rename(name, renames):
    for old, new in renames:
        if name.startswith(old):
            name = new + name[len(old):]
    return name


def st_dtype(t):
    """The safetensors dtype of a torch dtype, or None."""
    import torch
    return {torch.float64: "F64", torch.float32: "F32", torch.float16: "F16",
            torch.bfloat16: "BF16", torch.int64: "I64", torch.int32: "I32", torch.int16: "I16",
            torch.int8: "I8", torch.uint8: "U8", torch.bool: "BOOL"}.get(t.dtype)


def raw_bytes(t):
    """A tensor's elements, C order, little-endian."""
    import numpy as np
    import torch
    t = t.detach().cpu().contiguous()
    if t.dtype == torch.bfloat16:
        a = t.view(torch.int16).numpy()      # numpy has no bfloat16: move the bits
    else:
        a = t.numpy()
    return np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<"), copy=False).tobytes()


def select(sd, args, path):
    """[(new name, tensor)] in the state_dict's order, renamed, dropped and
    converted; fails on anything that cannot be written."""
    import torch
    out, seen = [], {}
    for name, t in sd.items():
        if not isinstance(name, str):
            fail("%s: a state_dict key is a %s (%r), not a string" % (path, type(name).__name__, name))
        new = rename(name, args.renames)
        if any(r.search(new) for r in args.drop):
            continue
        if not new:
            fail("%s: %r has an empty name after the renames" % (path, name))
        if new == "__metadata__":
            fail("%s: %r would be named __metadata__, which safetensors reserves" % (path, name))
        if new in seen:
            fail("%s: %r and %r are both named %r after the renames" % (path, seen[new], name, new))
        seen[new] = name
        if not isinstance(t, torch.Tensor):
            fail("%s: %r is not a tensor but of type %s (leave it out with --drop)"
                 % (path, name, type(t).__name__))
        if t.layout != torch.strided or t.is_quantized:
            fail("%s: %r is a %s tensor; only dense tensors can be written"
                 % (path, name, "quantized" if t.is_quantized else str(t.layout)))
        if args.dtype == "f32" and t.is_floating_point():
            t = t.to(torch.float32)
        if st_dtype(t) is None:
            fail("%s: %r has dtype %s, which safetensors cannot hold here" % (path, name, t.dtype))
        out.append((new, t))
    if not out:
        fail("%s: no tensor is left to write" % path)
    return out


# ---- writing ------------------------------------------------------------------------------

def encode(tensors):
    """The whole file as bytes: header length, JSON header padded with
    spaces to a multiple of 8, then the data, largest elements first."""
    blobs = [(new, t, raw_bytes(t)) for new, t in tensors]
    order = sorted(range(len(blobs)), key=lambda i: -blobs[i][1].element_size())   # stable
    offsets, off = {}, 0
    for i in order:
        offsets[i] = (off, off + len(blobs[i][2]))
        off += len(blobs[i][2])
    header = {"__metadata__": {"format": "pt"}}
    for i, (new, t, _) in enumerate(blobs):
        header[new] = {"dtype": st_dtype(t), "shape": list(t.shape), "data_offsets": list(offsets[i])}
    h = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    h += b" " * (-len(h) % 8)
    return b"".join([struct.pack("<Q", len(h)), h] + [blobs[i][2] for i in order])


def write_atomic(path, data):
    """Writes path through a temporary file beside it and a rename, so that
    a failure never leaves a partial file at path."""
    d = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=".pt2safetensors.", dir=d)
    except OSError as e:
        fail("%s: cannot write: %s" % (path, e.strerror or e))
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)     # as open() would have made it
        os.replace(tmp, path)
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        fail("%s: cannot write: %s" % (path, e.strerror or e))


def main(argv):
    args = parse_args(argv)
    try:
        import torch  # noqa: F401
        import numpy  # noqa: F401
    except ImportError as e:
        fail("needs PyTorch and NumPy (Debian: python3-torch python3-numpy): %s" % e)
    if args.output is not None and os.path.exists(args.output) and os.path.exists(args.input) \
            and os.path.samefile(args.input, args.output):
        fail("%s: the output would overwrite the input" % args.output)
    sd = as_state_dict(load(args.input, args.trust), args.input, args.key)
    tensors = select(sd, args, args.input)
    if args.list:
        w = max(len(n) for n, _ in tensors)
        for n, t in tensors:
            print("%-*s  %-4s  %s" % (w, n, st_dtype(t), list(t.shape)))
        sys.stdout.flush()
    if args.output is not None:
        write_atomic(args.output, encode(tensors))
    return 0


def run(argv):
    """main() with the errors reported: the exit status."""
    try:
        return main(argv)
    except Fail as e:
        sys.stderr.write("%s: error: %s\n" % (PROG, e))
        return 2
    except BrokenPipeError:             # --list | head
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    try:
        sys.exit(run(sys.argv[1:]))
    except KeyboardInterrupt:
        sys.exit(130)
