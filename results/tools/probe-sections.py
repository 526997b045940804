import sys, json, re, statistics
# Reads sections-adv.log and sections-vma.log of results/2026-12-01-vma/probe (instrumented kernel).
# per bench: the PROF lines between the previous JSON line and this one
names = {0:"total",13:"mm_lock",1:" pool_refill",2:" proto.lock",3:"ops (query for a fault)",4:"frame alloc",5:"mm_map",14:"mm_release",6:" commit",11:"  resv_return",7:"  flush+frames",8:"  proto.unlock",9:"  retire",10:" prune loop",12:" prune cursors (count)",15:"  range_op dry run",16:"  range_op resv_fill",17:"  range_op real run",18:"  lock: rcu_read_lock / mmap_read_lock",19:"  lock: page_desc(root)",20:"  lock: walk loop",21:"  lock: walk_desc",22:"  vma: mm_pt_next_used",23:"  vma: prepare (plan, upgrade, reserve)",24:"  vma: finish (apply to tree)",25:"  vma: mm_pt_unmap"}
order=[0,13,1,2,18,19,20,21,3,22,23,25,24,15,16,17,4,5,14,6,11,7,8,9,10,12]
def parse(path):
    res = {}
    pending = []
    for ln in open(path, errors="replace"):
        ln = ln.strip()
        if ln.startswith("PROF"):
            parts = ln.split()
            kind = parts[1] + ("" if parts[1]=="fault" else " " + parts[2])
            vals = {int(k): int(v) for k, v in (p.split("=") for p in parts[2:] if "=" in p and not p.startswith("len"))}
            pending.append((kind, vals))
        elif ln.startswith("{"):
            rec = json.loads(ln)
            res[rec["bench"]] = (rec, pending)
            pending = []
    return res
out = {}
for path in sys.argv[1:]:
    mm = path.split("-")[-1].split(".")[0]
    for b, (rec, pend) in parse(path).items():
        kinds = {}
        for k, v in pend:
            kinds.setdefault(k, []).append(v)
        for k, lst in kinds.items():
            if len(lst) < 16: continue
            last = lst[-16:] if len(lst) <= 40 else lst[-16:]
            avg = {i: sum(v.get(i,0) for v in last)/len(last) for i in order}
            out.setdefault((b, k), {})[mm] = (avg, rec["instret_per_op"], len(lst))
for (b, k), per in out.items():
    mms = sorted(per)
    print("== %s: %s (n=%s) bench instret/op %s" % (b, k, [per[m][2] for m in mms], {m: per[m][1] for m in mms}))
    for i in order:
        print("  %-26s" % names[i] + "".join("%10.1f" % per[m][0][i] for m in mms) + "   " + " ".join(mms))
