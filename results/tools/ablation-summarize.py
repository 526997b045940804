#!/usr/bin/env python3
"""Markdown tables from icount.jsonl, scaling.jsonl and host.jsonl in a data
folder (default results/2026-12-01-ablation): exact instructions per operation at 1 hart, the median ops/s at 1
and 2 threads (low contention) with their ratio, and the host program's
median ns per operation at 1 and 2 threads, per ablation config."""
import json, os, statistics, sys
# The data folder: the first argument, else results/2026-12-01-ablation.
here = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "2026-12-01-ablation")
BENCHES = ["mmap", "mmap-pf", "pf", "unmap-virt", "unmap"]
CONFIGS = ["all-on", "mklock", "lateflush", "prefault", "tas", "all-off"]

def load(name):
    path = os.path.join(here, name)
    if not os.path.exists(path):
        return []
    return [json.loads(l) for l in open(path) if l.startswith("{")]

def icount_table(rows, mm):
    print(f"\n| {mm}, instructions per op (1 hart, -icount) | " + " | ".join(BENCHES) + " |")
    print("| --- |" + " ---: |" * len(BENCHES))
    for c in CONFIGS:
        v = {r["bench"]: r["instret_per_op"] for r in rows if r["config"] == c and r["mm"] == mm}
        if v:
            print(f"| {c} | " + " | ".join(f"{v[b]:g}" if b in v else "-" for b in BENCHES) + " |")

def scaling_table(rows, mm):
    print(f"\n| {mm}, ops/s median (1 thread -> 2 threads, ratio) | " + " | ".join(BENCHES) + " |")
    print("| --- |" + " ---: |" * len(BENCHES))
    for c in CONFIGS:
        cells, any_ = [], False
        for b in BENCHES:
            m = {}
            for t in (1, 2):
                xs = [r["ops_per_sec"] for r in rows if r["config"] == c and r["mm"] == mm
                      and r["bench"] == b and r["threads"] == t and r["contention"] == "low"]
                m[t] = statistics.median(xs) if xs else None
            if m[1] and m[2]:
                any_ = True
                cells.append(f"{m[1]/1000:.0f}k -> {m[2]/1000:.0f}k, {m[2]/m[1]:.2f}")
            else:
                cells.append("-")
        if any_:
            n = len({r["repeat"] for r in rows if r["config"] == c and r["mm"] == mm})
            print(f"| {c} ({n} boots) | " + " | ".join(cells) + " |")

def host_table(rows, contention):
    print(f"\n| host mmbench, adv, {contention} contention, median ns/op (1 thread / 2 threads) | "
          + " | ".join(BENCHES) + " |")
    print("| --- |" + " ---: |" * len(BENCHES))
    for c in CONFIGS:
        cells = []
        for b in BENCHES:
            m = {}
            for t in (1, 2):
                xs = [r["ns_per_op"] for r in rows if r["config"] == c and r["bench"] == b
                      and r["threads"] == t and r["contention"] == contention]
                m[t] = statistics.median(xs) if xs else None
            cells.append(f"{m[1]:,.0f} / {m[2]:,.0f}" if m[1] and m[2] else "-")
        if any(x != "-" for x in cells):
            print(f"| {c} | " + " | ".join(cells) + " |")

ic, sc, ho = load("icount.jsonl"), load("scaling.jsonl"), load("host.jsonl")
for mm in sorted({r["mm"] for r in ic}):
    icount_table(ic, mm)
for mm in sorted({r["mm"] for r in sc}):
    scaling_table(sc, mm)
for contention in ("low", "high"):
    if ho:
        host_table(ho, contention)
