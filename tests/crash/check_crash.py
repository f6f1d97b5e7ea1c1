"""Checkpoints survive kill -9 (docs/generated-c.md, "Checkpoints").

Two writers of a 50 MB model (big.nn), each killed with SIGKILL at
random moments of its saves, KILLS times each (25 by default, env
NNC_CRASH_KILLS):

- the runtime's own save (saver.c: big_save in a loop, every param set to
  the save's number k);
- the driver's periodic checkpoints (`train --save-every 1`, SGD, so 100
  MB with the momentum buffer), each run after the first resuming from
  the checkpoint the last kill left (`--resume`).

A kill is timed from the moment the writer's temp file `<path>.tmp.<pid>`
appears, by a random fraction of a save's duration; it landed mid-save
when that temp file is still there after the process died.  After each
kill: the file under the final name is whole (its size is what its header
says) and loads (saver check: big_load, every param the same k, so one
save and not a mix; the driver: the next run's `--resume`, which
validates the whole file before it trains, and after the last kill
`eval --weights`); and once the next writer's save has begun, the temp file of
the killed one is gone.  Prints how many kills landed mid-save.

Usage: check_crash.py SAVER DRIVER
"""

import json
import os
import random
import signal
import struct
import subprocess
import sys
import tempfile
import time

SAVER, DRIVER = sys.argv[1], sys.argv[2]
KILLS = int(os.environ.get("NNC_CRASH_KILLS", "25"))
failures = []
rnd = random.Random(int(os.environ.get("NNC_CRASH_SEED", str(time.time_ns()))))


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def wait_for(cond, timeout=30.0):
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            return False
        time.sleep(0.0005)
    return True


def whole(path):
    """the file's size is 8 + its header's length + its data's end"""
    with open(path, "rb") as f:
        data = f.read(8)
        if len(data) < 8:
            return False
        (n,) = struct.unpack("<Q", data)
        header = json.loads(f.read(n))
    end = max((v["data_offsets"][1] for k, v in header.items() if k != "__metadata__"), default=0)
    return os.path.getsize(path) == 8 + n + end


def temps(path):
    d, base = os.path.split(path)
    return sorted(f for f in os.listdir(d) if f.startswith(os.path.basename(path) + ".tmp."))


def kill_during_save(proc, tmp_path, save_time, label, last_dead):
    """SIGKILL proc a random fraction of a save after its temp file appears;
    True when the kill landed mid-save (the temp file outlived it).  By the
    time the temp file is there, the save has deleted `last_dead`, the temp
    file of the process killed before."""
    if not wait_for(lambda: os.path.exists(tmp_path) or proc.poll() is not None):
        check(False, f"{label}: no save started")
    check(not last_dead or not os.path.exists(last_dead), f"{label}: the killed save's {last_dead} is still there")
    time.sleep(rnd.uniform(0, save_time))
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    check(proc.returncode == -signal.SIGKILL, f"{label}: killed by SIGKILL, got {proc.returncode}")
    return os.path.exists(tmp_path)


def one_save_time(proc, tmp_path):
    """waits for one whole save of proc: its temp file appears, then goes"""
    t0 = None
    ok = wait_for(lambda: os.path.exists(tmp_path) or proc.poll() is not None)
    t0 = time.monotonic()
    ok = ok and wait_for(lambda: not os.path.exists(tmp_path) or proc.poll() is not None)
    return time.monotonic() - t0 if ok and proc.poll() is None else None


with tempfile.TemporaryDirectory() as tmp:
    t_start = time.monotonic()

    # ---- the runtime's own save
    ck = os.path.join(tmp, "rt.safetensors")
    mid, last_dead, save_time = 0, None, None
    for i in range(KILLS):
        p = subprocess.Popen([SAVER, "save", ck], stdout=subprocess.PIPE, text=True)
        tmp_path = f"{ck}.tmp.{p.pid}"
        if save_time is None:  # measured once: a save of the same file takes as long each time
            line = p.stdout.readline()
            check(line == "saved 1\n", f"runtime {i}: first save: {line!r}")
            save_time = one_save_time(p, tmp_path) or 0.1
        if kill_during_save(p, tmp_path, save_time, f"runtime {i}", last_dead):
            mid += 1
            last_dead = tmp_path
        else:
            last_dead = None
        p.stdout.close()
        check(whole(ck), f"runtime {i}: {ck} is not whole after the kill")
        r = subprocess.run([SAVER, "check", ck], capture_output=True, text=True)
        check(r.returncode == 0, f"runtime {i}: the checkpoint does not load: {r.stdout!r} {r.stderr!r}")
        check(temps(ck) in ([], [os.path.basename(last_dead or "")]), f"runtime {i}: temp files {temps(ck)}")
    print(f"runtime save: {mid} of {KILLS} kills landed mid-save")
    check(mid >= KILLS // 2, f"runtime save: only {mid} of {KILLS} kills landed mid-save")
    mid_rt = mid
    # a next save removes the last one's temp file
    p = subprocess.Popen([SAVER, "save", ck], stdout=subprocess.PIPE, text=True)
    check(p.stdout.readline() == "saved 1\n", "runtime: a save after the kills")
    p.send_signal(signal.SIGKILL)
    p.wait()
    p.stdout.close()
    check(all(t == os.path.basename(f"{ck}.tmp.{p.pid}") for t in temps(ck)),
          f"runtime: stale temp files after a save: {temps(ck)}")
    os.remove(ck)
    for t in temps(ck):
        os.remove(os.path.join(tmp, t))

    # ---- the driver's --save-every checkpoints
    x, y = os.path.join(tmp, "x.npy"), os.path.join(tmp, "y.npy")
    for path, seed, width in ((x, 1, 4096), (y, 2, 3072)):  # 4 examples: a .npy v1.0 file by hand
        r = random.Random(seed)
        hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (4, %d), }" % width
        hdr += " " * (127 - 10 - len(hdr)) + "\n"
        with open(path, "wb") as f:
            f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode())
            f.write(struct.pack("<%df" % (4 * width), *(r.uniform(-1, 1) for _ in range(4 * width))))
    ck = os.path.join(tmp, "drv.safetensors")
    train = [DRIVER, "train", "--inputs", x, "--labels", y, "--save", ck, "--save-every", 1, "--epochs", 1000000,
             "--batch", 4, "--optimizer", "sgd", "--lr", 1e-3, "--quiet", "--threads", 1]
    train = [str(a) for a in train]
    mid, last_dead, save_time = 0, None, None
    for i in range(KILLS):
        p = subprocess.Popen(train + (["--resume", ck] if i else []), stderr=subprocess.PIPE, text=True)
        tmp_path = f"{ck}.tmp.{p.pid}"
        if save_time is None:
            save_time = one_save_time(p, tmp_path)
            if save_time is None:
                check(False, f"driver {i}: no whole save: {p.stderr.read()!r}")
                p.kill()
                p.wait()
                break
        if kill_during_save(p, tmp_path, save_time, f"driver {i}", last_dead):
            mid += 1
            last_dead = tmp_path
        else:
            last_dead = None
        p.stderr.close()
        check(whole(ck), f"driver {i}: {ck} is not whole after the kill")
        if i < KILLS - 1:  # the next run's --resume loads it (and fails on a damaged one)
            continue
        r = subprocess.run([DRIVER, "eval", "--weights", ck, "--inputs", x, "--labels", y], capture_output=True,
                           text=True)
        check(r.returncode == 0 and r.stdout.startswith("loss="),
              f"driver {i}: eval --weights of the checkpoint: {r.returncode} {r.stderr!r}")
    check(temps(ck) in ([], [os.path.basename(last_dead or "")]), f"driver: temp files {temps(ck)}")
    print(f"driver --save-every: {mid} of {KILLS} kills landed mid-save")
    check(mid >= KILLS // 2, f"driver: only {mid} of {KILLS} kills landed mid-save")
    print(f"{mid_rt + mid} of {2 * KILLS} kills mid-save, {time.monotonic() - t_start:.1f} s")

print("FAILED" if failures else "ok")
sys.exit(1 if failures else 0)
