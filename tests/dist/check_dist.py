"""Runs MPI jobs of tests/dist under `timeout`, so that a hang fails the
test instead of stalling it, and checks how each ends.

  check_dist.py run MPIRUN NP PROG ARGS...     exits 0 (the program checks itself)
  check_dist.py abort MPIRUN NP DIST_CRASH     one rank calls nnc_dist_abort(5)
  check_dist.py kill MPIRUN NP DIST_CRASH      one rank dies of SIGKILL
  check_dist.py mismatch MPIRUN DIST_CRASH DIST_CRASH_OTHER
                                              two runtimes of different versions

abort and kill: the job must end non-zero well within the timeout and no
process of it may be left.  mismatch: rank 0 names both versions on one
line of stderr and the job ends non-zero; and the same program on both
ranks ends normally (so the failure is the versions', not the job's).

MPIRUN is the launcher and its flags, one argument ("mpiexec
--oversubscribe"); OMPI_ALLOW_RUN_AS_ROOT(_CONFIRM) let it run as root."""

import os
import shlex
import sys
import tempfile
import time

import subprocess

TIMEOUT = int(os.environ.get("NNC_DIST_TIMEOUT", "120"))  # seconds: then `timeout` kills a hung job


def job(mpirun, parts, tmp=None):
    """Runs mpirun with the given MPMD parts [(np, argv)], returns (rc, out, err, seconds)."""
    cmd = ["timeout", "-k", "10", str(TIMEOUT)] + shlex.split(mpirun)
    for i, (np, argv) in enumerate(parts):
        if i:
            cmd.append(":")
        cmd += ["-np", str(np)] + argv
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    return p.returncode, p.stdout, p.stderr, time.monotonic() - t0


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def main():
    mode, mpirun = sys.argv[1], sys.argv[2]
    fails = []
    if mode == "run":
        np, argv = int(sys.argv[3]), sys.argv[4:]
        rc, out, err, s = job(mpirun, [(np, argv)])
        sys.stdout.write(out)
        sys.stderr.write(err)
        print(f"check_dist: {np} processes, exit {rc}, {s:.1f} s")
        if rc != 0:
            fails.append(f"exit status {rc}" + (" (timed out)" if s >= TIMEOUT else ""))
    elif mode in ("abort", "kill"):
        np, prog = int(sys.argv[3]), sys.argv[4]
        with tempfile.TemporaryDirectory() as tmp:
            rc, out, err, s = job(mpirun, [(np, [prog, mode, tmp])])
            sys.stderr.write(err)
            print(f"check_dist: {mode} with {np} processes: exit {rc} after {s:.1f} s")
            if rc == 0 or s >= TIMEOUT:
                fails.append(f"exit status {rc} after {s:.0f} s: the job did not end by itself with an error")
            if mode == "abort" and "rank %d aborts" % (np - 1) not in err:
                fails.append("the aborting rank did not get to say so")
            pids = []
            for r in range(np):
                try:
                    pids.append(int(open(os.path.join(tmp, f"pid.{r}")).read()))
                except (OSError, ValueError):
                    fails.append(f"rank {r} wrote no pid")
            deadline = time.monotonic() + 10
            while any(alive(p) for p in pids) and time.monotonic() < deadline:
                time.sleep(0.1)
            left = [p for p in pids if alive(p)]
            if left:
                fails.append(f"processes left after the job: {left}")
            print(f"check_dist: {len(pids)} ranks' processes, {len(left)} left")
    elif mode == "mismatch":
        prog, other = sys.argv[3], sys.argv[4]
        with tempfile.TemporaryDirectory() as tmp:
            rc, out, err, s = job(mpirun, [(1, [prog, "hello", tmp]), (1, [prog, "hello", tmp])])
            print(f"check_dist: the same runtime twice: exit {rc}")
            if rc != 0:
                sys.stderr.write(err)
                fails.append(f"the same runtime on both ranks: exit {rc}")
            rc, out, err, s = job(mpirun, [(1, [prog, "hello", tmp]), (1, [other, "hello", tmp])])
            sys.stderr.write(err)
            print(f"check_dist: different runtimes: exit {rc} after {s:.1f} s")
            lines = [l for l in err.splitlines() if l.startswith("nnc: ")]
            if rc == 0 or s >= TIMEOUT:
                fails.append(f"exit status {rc} after {s:.0f} s")
            if len(lines) != 1 or "rank 1 has runtime 1 of nnc 0.0.0-other, rank 0 has runtime 1 of nnc" not in lines[0]:
                fails.append(f"want one line naming both runtimes, got {lines}")
            if "hello" in out:
                fails.append("a rank got past nnc_dist_init")
    else:
        sys.exit(f"check_dist: unknown mode {mode}")
    for f in fails:
        print("check_dist: FAIL:", f)
    sys.exit(1 if fails else 0)


main()
