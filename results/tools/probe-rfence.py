import sys, statistics
# Reads the rfence-*.log files of results/2026-12-01-vma/probe (instrumented kernel).
# per boot log: the RF blocks (one per bench run: threads 1 then 2); last 16 ops per hart
for path in sys.argv[1:]:
    blocks=[]; cur=[]
    for ln in open(path, errors="replace"):
        if ln.startswith("RF hart="):
            d=dict(p.split("=") for p in ln.split()[1:]); cur.append({k:int(v) for k,v in d.items()})
        elif ln.startswith("RF end"):
            blocks.append(cur); cur=[]
    for bi, b in enumerate(blocks):
        harts=sorted({r["hart"] for r in b})
        for h in harts:
            ops=[r for r in b if r["hart"]==h][-16:]
            if len(ops) < 16: continue
            txn=[r["txn_ticks"]/10 for r in ops]; rf=[r["rfence_ticks"]/10 for r in ops]
            print("%s block%d hart%d n=%d: txn us median %.0f (min %.0f max %.0f), rfence us median %.0f (min %.0f max %.0f), rfence share %.0f%%, rfences/op %.1f" % (
                path.split("/")[-1], bi, h, len(ops), statistics.median(txn), min(txn), max(txn), statistics.median(rf), min(rf), max(rf), 100*sum(rf)/sum(txn), sum(r["rfences"] for r in ops)/len(ops)))

# Where the long fences end: every RF line of every log (all 32 unmaps of
# each hart), fences over 1 ms, distance to the nearest multiple of 4 ms
# (the host's scheduler tick at CONFIG_HZ=250) and of 10 ms (the guest's).
long = []
for path in sys.argv[1:]:
    for ln in open(path, errors="replace"):
        if ln.startswith("RF hart="):
            ms = int(ln.split("rfence_ticks=")[1].split()[0]) / 1e4
            if ms > 1:
                long.append(ms)
for step in (4, 10):
    near = [x for x in long if min(abs(x - step * k) for k in range(1, 40)) < 0.35]
    print("fences over 1 ms: %d; within 0.35 ms of a multiple of %d ms: %d (%.0f if spread evenly)"
          % (len(long), step, len(near), len(long) * 0.7 / step))
