#!/usr/bin/env python3
"""Tables of a data folder (default results/2026-12-02-final): exact 1-hart instructions per op
(adv, vma) and adv's 1 -> 2 hart scaling (medians over the boots)."""
import sys
import json
import os
import statistics

# The data folder: the first argument, else results/2026-12-02-final.
here = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "2026-12-02-final")
BENCHES = ["mmap", "mmap-pf", "pf", "unmap-virt", "unmap"]


def rows(name):
    with open(os.path.join(here, name)) as f:
        return [json.loads(l) for l in f if l.strip()]


ic = rows("icount.jsonl")
print("| instructions per op, 1 hart, -icount | " + " | ".join(BENCHES) + " |")
print("| --- |" + " ---: |" * len(BENCHES))
for mm in ("adv", "vma"):
    got = {r["bench"]: r["instret_per_op"] for r in ic if r["config"] == mm}
    print(f"| {mm} | " + " | ".join(str(got.get(b, "-")) for b in BENCHES) + " |")
print()
sc = rows("scaling.jsonl")
loads = [r["load"] for r in sc]
# Ratios: each 2-thread run against the 1-thread run just before it in the
# same boot (file order), then the median over all such pairs.
print("| adv, 1 -> 2 threads at 2 harts: median ratio of adjacent runs (min-max; pairs) | " +
      " | ".join(BENCHES) + " |")
print("| --- |" + " --- |" * len(BENCHES))
for cfg in ("ipi", "ipiflush"):
    cells = []
    for b in BENCHES:
        seq = [r for r in sc if r["config"] == cfg and r["bench"] == b]
        ratios = []
        for prev, cur in zip(seq, seq[1:]):
            if prev["repeat"] == cur["repeat"] and prev["threads"] == 1 and cur["threads"] == 2:
                ratios.append(cur["ops_per_sec"] / prev["ops_per_sec"])
        if not ratios:
            cells.append("-")
            continue
        cells.append(f"{statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f}; {len(ratios)})")
    n = len({r["repeat"] for r in sc if r["config"] == cfg})
    print(f"| {cfg} ({n} boots) | " + " | ".join(cells) + " |")
print()
print("| adv, ops/s median over all runs | " + " | ".join(f"{b} 1 thr | {b} 2 thr" for b in BENCHES) + " |")
for cfg in ("ipi", "ipiflush"):
    cells = []
    for b in BENCHES:
        for t in (1, 2):
            v = [r["ops_per_sec"] for r in sc if r["config"] == cfg and r["bench"] == b and r["threads"] == t]
            cells.append(f"{statistics.median(v) / 1000:.1f}k" if v else "-")
    print(f"| {cfg} | " + " | ".join(cells) + " |")
if loads:
    print(f"\nhost load average at boot: {min(loads)} to {max(loads)}")
