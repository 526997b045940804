#!/usr/bin/env python3
"""Run the Spin models of CortenMM's locking protocols and check each result.

Every run generates the verifier (spin -a), compiles pan.c with the native
C compiler, runs it in a fresh temporary directory and compares what pan
reports with what the run expects:

  ok          full search, no error (the correct models)
  assert:TXT  an assertion violation whose expression contains TXT
  deadlock    an invalid end state (threads blocked forever)
  cycle       an acceptance cycle against the LTL claim (liveness violated)

Modes: "safety", or "live" / "live:CLAIM" (pan -a -f -N CLAIM, default
claim "done").

A run whose search was cut short (depth limit, out of memory) never counts
as "ok". Exit status: 0 when every selected run met its expectation.

Compile flags: -DSAFETY -DNOCLAIM for safety runs (assertions and invalid end
states), plain build plus pan -a -f for the liveness claim `done` under weak
fairness. Both use -DCOLLAPSE (lossless state compression, only to save
memory); BITSTATE (lossy) is never used, so every "ok" is an exhaustive search.
"""

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL_FILES = ["rw.pml", "adv.pml", "tree.pml"]

# Workloads both correct models run, safety: P1, no use after free, no
# deadlock. suffix -> (defines, what it shows, after "<model>, ").
SAFETY_WORKLOADS = [
    ("", [], "2 threads x 2 transactions, covers on all levels"),
    ("-w2", ["WORKLOAD=2"], "root cover removing a whole level-1 subtree"),
    ("-w3", ["WORKLOAD=3"], "ranges spanning their whole cover page"),
    ("-3t", ["NT=3", "NTX=1", "WORKLOAD=1"], "3 threads x 1 transaction"),
    ("-w3-lowest", ["WORKLOAD=3", "LOWEST_COVER"],
     "whole-page ranges, cover = lowest page spanning the range"),
]

# name -> (model, defines, mode, expectation, what it shows)
RUNS = [
    # correct models, safety
    *[(m + sfx, m, defs, "safety", "ok", m + ", " + what)
      for m in ("rw", "adv") for sfx, defs, what in SAFETY_WORKLOADS],
    # correct models, liveness: every thread finishes, weak fairness
    ("rw-live", "rw", [], "live", "ok",
     "rw: <> all threads done, weak fairness"),
    ("adv-live", "adv", [], "live", "ok",
     "adv: <> all threads done, weak fairness"),
    ("adv-w2-live", "adv", ["WORKLOAD=2"], "live", "ok",
     "adv: <> all threads done, weak fairness, subtree removal"),
    # seeded bugs: each must be rejected, with the expected kind of error
    ("rw-bug-early-release", "rw", ["BUG_EARLY_RELEASE"], "safety",
     "assert:freed", "parent reader lock dropped before the child is locked"),
    ("rw-bug-read-cover", "rw", ["BUG_READ_COVER"], "safety",
     "assert:freed", "reader lock instead of writer lock on the cover"),
    ("rw-bug-read-cover-p1", "rw", ["BUG_READ_COVER", "MAP_ONLY"], "safety",
     "assert:owner", "same bug, map only: caught by P1 (range ownership)"),
    ("rw-bug-free-cover", "rw", ["BUG_FREE_COVER", "WORKLOAD=3", "LOWEST_COVER"],
     "safety",
     "assert:freed", "unmap removes the cover via a read-locked parent"),
    ("adv-bug-no-stale-check", "adv", ["BUG_NO_STALE_CHECK"], "safety",
     "assert:owner", "cover not re-checked for stale after locking"),
    ("adv-bug-no-grace", "adv", ["BUG_NO_GRACE"], "safety",
     "assert:freed", "removed PT pages freed without an RCU grace period"),
    ("adv-bug-no-desc", "adv", ["BUG_NO_DESC"], "safety",
     "assert:lk==", "existing descendants of the cover not locked"),
    ("adv-bug-no-desc-p1", "adv", ["BUG_NO_DESC", "MAP_ONLY", "P1_ONLY"],
     "safety", "assert:owner",
     "same bug, lock-ownership assert off: caught by P1 alone"),
    ("adv-bug-desc-postorder", "adv", ["BUG_DESC_POSTORDER"], "safety",
     "deadlock", "descendants locked children before parents"),
    ("adv-bug-desc-postorder-live", "adv", ["BUG_DESC_POSTORDER"], "live",
     "cycle", "same bug seen by the liveness claim"),
    ("adv-bug-stale-top-only", "adv", ["BUG_STALE_TOP_ONLY", "WORKLOAD=2"],
     "safety", "assert:freed",
     "only the detached page marked stale, not its subtree"),
    # what the protocols do NOT promise: with one thread transacting forever
    # (PT pages reused), another thread may never finish under weak fairness
    ("rw-forever-live", "rw", ["FOREVER"], "live", "cycle",
     "not promised: starvation-freedom (unfair locks)"),
    ("adv-forever-live", "adv", ["FOREVER"], "live", "cycle",
     "not promised: starvation-freedom (unfair locks)"),
    ("adv-forever-retry", "adv", ["FOREVER", "NTX=1", "WORKLOAD=1"], "live:retry_ends", "cycle",
     "not promised: bounded retries (stale cover, retry, forever)"),
]

MEMLIM_MB = 3072
DEPTH = 20000


def run(cmd, cwd, timeout):
    p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=timeout)
    return p.returncode, p.stdout


def parse(out):
    """Pull the figures and the first error out of pan's report."""
    r = {}
    m = re.search(r"errors: (\d+)", out)
    r["errors"] = int(m.group(1)) if m else None
    m = re.search(r"^\s*(\d+) states, stored", out, re.M)
    r["states"] = int(m.group(1)) if m else None
    m = re.search(r"depth reached (\d+)", out)
    r["depth"] = int(m.group(1)) if m else None
    m = re.search(r"pan: elapsed time ([\d.e+]+) seconds", out)
    r["pan_s"] = float(m.group(1)) if m else 0.0
    m = re.search(r"total actual memory usage", out)
    mm = re.search(r"([\d.]+)\s+total actual memory usage", out)
    r["mem_mb"] = float(mm.group(1)) if m and mm else None
    m = re.search(r"^pan:1: (.*)$", out, re.M)
    r["first_error"] = m.group(1).strip() if m else None
    r["truncated"] = bool(re.search(
        r"max search depth too small|out of memory|Search not completed",
        out))
    return r


def verdict(expect, r):
    """Did pan's result match the expectation? Returns (ok, why)."""
    if r["errors"] is None:
        return False, "no result from pan"
    if expect == "ok":
        if r["errors"] != 0:
            return False, "unexpected error: %s" % r["first_error"]
        if r["truncated"]:
            return False, "search incomplete (depth or memory)"
        return True, "no errors, full search"
    if r["errors"] == 0:
        return False, "seeded bug NOT caught"
    err = r["first_error"] or ""
    if expect.startswith("assert:"):
        want = expect.split(":", 1)[1]
        if "assertion violated" in err and want in err.replace(" ", ""):
            return True, err
        return False, "caught, but not as expected (%s): %s" % (expect, err)
    if expect == "deadlock":
        return ("invalid end state" in err), err
    if expect == "cycle":
        return ("acceptance cycle" in err), err
    return False, "unknown expectation " + expect


def one(entry, spin, cc, src, timeout, keep):
    name, model, defines, mode, expect, what = entry
    work = tempfile.mkdtemp(prefix="spin-%s-" % name)
    try:
        for f in MODEL_FILES:
            shutil.copy(os.path.join(src, f), work)
        t0 = time.time()
        dflags = ["-D" + d for d in defines]
        rc, out = run([spin, "-a"] + dflags + [model + ".pml"], work, timeout)
        if rc != 0 or not os.path.exists(os.path.join(work, "pan.c")):
            return {"name": name, "pass": False, "why": "spin -a failed",
                    "log": out}
        cflags = ["-O2", "-w", "-DCOLLAPSE", "-DMEMLIM=%d" % MEMLIM_MB]
        claim = mode.split(":", 1)[1] if ":" in mode else "done"
        if mode == "safety":
            cflags += ["-DSAFETY", "-DNOCLAIM"]
        else:
            cflags += ["-DNFAIR=4"]
        rc, cout = run(cc + cflags + ["-o", "pan", "pan.c"], work, timeout)
        if rc != 0:
            return {"name": name, "pass": False, "why": "cc pan.c failed",
                    "log": cout}
        pargs = ["./pan", "-m%d" % DEPTH, "-w24"]
        if mode != "safety":
            pargs += ["-a", "-f", "-N", claim]
        rc, out = run(pargs, work, timeout)
        r = parse(out)
        ok, why = verdict(expect, r)
        r.update({"name": name, "model": model, "defines": defines,
                  "mode": mode, "expect": expect, "what": what,
                  "pass": ok, "why": why,
                  "wall_s": round(time.time() - t0, 2)})
        if not ok:
            r["log"] = out[-4000:]
        return r
    except subprocess.TimeoutExpired:
        return {"name": name, "pass": False,
                "why": "timed out after %ds" % timeout}
    finally:
        if keep:
            print("kept", work, file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("names", nargs="*", help="runs to do (default: all)")
    ap.add_argument("--spin", default="spin")
    ap.add_argument("--cc", default="cc",
                    help="C compiler command line for pan.c")
    ap.add_argument("--src", default=HERE, help="folder with the .pml files")
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--names", dest="list_names", action="store_true",
                    help="print the run names, one a line (for meson)")
    ap.add_argument("--json", help="append one JSON object a run here")
    ap.add_argument("--keep", action="store_true",
                    help="keep the work directories (for trails)")
    a = ap.parse_args()

    if a.list_names:
        for e in RUNS:
            print(e[0])
        return 0
    if a.list:
        for e in RUNS:
            print("%-30s %-4s %-6s %-14s %s" % (e[0], e[1], e[3], e[4], e[5]))
        return 0
    spin = shutil.which(a.spin)
    if not spin:
        print("FAIL: spin not found (%s); install Spin 6 (scripts/test does)"
              % a.spin)
        return 1
    cc = shlex.split(a.cc)
    table = {e[0]: e for e in RUNS}
    names = a.names or [e[0] for e in RUNS]
    unknown = [n for n in names if n not in table]
    if unknown:
        print("FAIL: unknown run(s): " + ", ".join(unknown))
        return 1
    bad = 0
    for n in names:
        r = one(table[n], spin, cc, a.src, a.timeout, a.keep)
        status = "PASS" if r["pass"] else "FAIL"
        print("%s %-30s states=%s depth=%s pan=%.2fs wall=%ss: %s" % (
            status, n, r.get("states"), r.get("depth"),
            r.get("pan_s") or 0.0, r.get("wall_s"), r["why"]))
        if not r["pass"]:
            bad += 1
            if "log" in r:
                print(r["log"])
        if a.json:
            with open(a.json, "a") as f:
                r.pop("log", None)
                f.write(json.dumps(r) + "\n")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
