#!/usr/bin/env python3
"""Markdown tables from icount.jsonl and scaling.jsonl in a data folder (default results/2026-12-02-ipiflush):
exact instructions per operation at 1 hart, and the median ops/s at 1
and 2 threads on 2 harts (with the ratio and the spread of the boots),
for the IPI shootdown (ipi), SBI RFENCE (ipiflush) and, when measured, the
kernel before either (base)."""
import sys
import json, os, statistics
# The data folder: the first argument, else results/2026-12-02-ipiflush.
here = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "2026-12-02-ipiflush")
BENCHES = ["pf", "unmap-virt", "unmap"]
CONFIGS = ["base", "ipi", "ipiflush"]

def load(name):
    path = os.path.join(here, name)
    if not os.path.exists(path):
        return []
    return [json.loads(l) for l in open(path) if l.startswith("{")]

icount = load("icount.jsonl")
print("| adv, instructions per op (1 hart, -icount) | " + " | ".join(BENCHES) + " |")
print("| --- |" + " ---: |" * len(BENCHES))
for c in CONFIGS:
    v = {r["bench"]: r["instret_per_op"] for r in icount if r["config"] == c}
    if not v:
        continue
    print(f"| {c} | " + " | ".join(f"{v[b]:g}" if b in v else "-" for b in BENCHES) + " |")

scaling = load("scaling.jsonl")
print("\n| adv, 2 harts, ops/s median (1 thread -> 2 threads, ratio; min-max of 2 threads) | "
      + " | ".join(BENCHES) + " |")
print("| --- |" + " ---: |" * len(BENCHES))
for c in CONFIGS:
    cells = []
    boots = len({r.get("repeat") for r in scaling if r["config"] == c})
    if not boots:
        continue
    for b in BENCHES:
        xs = {t: [r["ops_per_sec"] for r in scaling if r["config"] == c and r["bench"] == b
                  and r["threads"] == t] for t in (1, 2)}
        if xs[1] and xs[2]:
            m1, m2 = statistics.median(xs[1]), statistics.median(xs[2])
            cells.append(f"{m1/1000:.1f}k -> {m2/1000:.1f}k, {m2/m1:.2f}; "
                         f"{min(xs[2])/1000:.1f}k-{max(xs[2])/1000:.1f}k")
        else:
            cells.append("-")
    print(f"| {c} ({boots} boots) | " + " | ".join(cells) + " |")
