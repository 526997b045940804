#!/usr/bin/env bash
# The final kernel of 2026-12-02 (IPC without a global lock, IPI
# shootdown): exact instructions per op at 1 hart (-icount) for adv and
# vma, and wall-clock 1 -> 2 hart scaling of adv at low contention in R
# boots (default 5), with the IPI shootdown and with ablate=ipiflush (SBI
# RFENCE). Each boot runs every benchmark at 1, 2, 1, 2, 1, 2 threads: a
# ratio is taken between a 1-thread run and the 2-thread run right after
# it, as this host's speed drifts by up to 2x over minutes. Writes
# icount.jsonl and scaling.jsonl into results/2026-12-02-final (OUT=DIR: into
# DIR); results/tools/final-summarize.py prints the tables.
# Usage (from the repository root, build/ built):
#   results/tools/final-run.sh [R]           both files afresh
#   results/tools/final-run.sh R FIRST       R more boots, numbered from FIRST,
#                                                 appended to scaling.jsonl
set -euo pipefail
dir=${OUT:-results/2026-12-02-final}
reps=${1:-5}
first=${2:-}
benches="bench mmap mmap-pf pf unmap-virt unmap --contention low"
if [[ -z $first ]]; then
first=1
: > "$dir/icount.jsonl"
for mm in adv vma; do
  python3 scripts/patina_qemu.py --kernel build/kernel/patina.elf --smp 1 --icount --mm "$mm" \
    --cmd "$benches --threads 1" --timeout 900 |
    grep '^{' | sed "s/^{/{\"config\":\"$mm\",/" >> "$dir/icount.jsonl"
done
: > "$dir/scaling.jsonl"
fi
for r in $(seq "$first" $((first + reps - 1))); do
  for cfg in ipi ipiflush; do
    extra=()
    [[ $cfg == ipiflush ]] && extra=(--ablate ipiflush)
    load=$(cut -d' ' -f1 /proc/loadavg)
    python3 scripts/patina_qemu.py --kernel build/kernel/patina.elf --smp 2 --mm adv "${extra[@]}" \
      --cmd "$benches --threads 1,2,1,2,1,2" --timeout 900 |
      grep '^{' | sed "s/^{/{\"config\":\"$cfg\",\"repeat\":$r,\"load\":$load,/" >> "$dir/scaling.jsonl"
    # This host throttles its CPUs in long busy stretches (a 2-thread
    # run then gets about one core): rest between boots.
    sleep "${PAUSE:-30}"
  done
done
