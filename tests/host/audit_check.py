#!/usr/bin/env python3
"""Checks of scripts/audit, run by the suite `mm` on a built mmaudit.

  audit_check.py determinism AUDIT MMAUDIT
      runs a small sweep (adv and vma, the five benchmarks, both
      contentions, 2 and 4 threads, 8 requests a thread) twice: the two
      outputs must be identical, and every line a JSON object whose first
      fields are the contract's, in order, with sane values.
  audit_check.py disjoint AUDIT MMAUDIT
      adv at low contention (every thread in its own leaf page tables), on
      the benchmarks that need no TLB shootdown: fewer than 0.5 transfers
      per request at 2, 8 and 16 threads, and at 16 no more than 0.25 above
      2 threads: operations on disjoint ranges share (almost) nothing.
Exit 0 iff the check holds; a failure says what differed."""
import json
import subprocess
import sys

CONTRACT = ["audit", "mm", "bench", "contention", "threads", "ops", "transfers_per_op"]


def sweep(audit, binary, *args):
    """scripts/audit's stdout for args, on the given mmaudit."""
    return subprocess.run([sys.executable, audit, "--bin", binary, *args], check=True,
                          stdout=subprocess.PIPE, text=True).stdout


def determinism(audit, binary):
    args = ["--mm", "adv,vma", "--bench", "all", "--contention", "both",
            "--threads", "2,4", "--ops", "8"]
    first, second = sweep(audit, binary, *args), sweep(audit, binary, *args)
    if first != second:
        return "two runs with the same arguments differ:\n%s---\n%s" % (first, second)
    lines = first.splitlines()
    if len(lines) != 2 * 5 * 2 * 2:
        return "expected 40 lines, got %d" % len(lines)
    for line in lines:
        r = json.loads(line)
        if list(r)[:len(CONTRACT)] != CONTRACT:
            return "fields out of contract order: %s" % line
        if r["audit"] != "coherence" or r["ops"] != 4 * r["threads"] or \
           not r["transfers_per_op"] >= 0:
            return "bad values: %s" % line
    return None


def disjoint(audit, binary):
    out = sweep(audit, binary, "--mm", "adv", "--bench", "mmap,mmap-pf,pf,unmap-virt",
                "--contention", "low", "--threads", "2,8,16")
    per = {}
    for line in out.splitlines():
        r = json.loads(line)
        per[(r["bench"], r["threads"])] = r["transfers_per_op"]
    for (bench, t), x in sorted(per.items()):
        if x >= 0.5:
            return "%s at %d threads: %.3f transfers per op" % (bench, t, x)
        if x > per[(bench, 2)] + 0.25:
            return "%s: %.3f transfers per op at %d threads, %.3f at 2" % (
                bench, x, t, per[(bench, 2)])
    return None


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("determinism", "disjoint"):
        sys.exit(__doc__)
    why = {"determinism": determinism, "disjoint": disjoint}[sys.argv[1]](*sys.argv[2:])
    if why:
        sys.exit("audit_check %s: %s" % (sys.argv[1], why))


if __name__ == "__main__":
    main()
