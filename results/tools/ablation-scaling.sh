#!/usr/bin/env bash
# Wall-clock scaling at low contention, 1 -> 2 harts, for each ablation:
# R boots (default 5) of --smp 2 per config and mm, each running the five
# benchmarks at 1 and 2 threads. Writes scaling.jsonl into results/2026-12-01-ablation (with "config"
# and "repeat" added). Same builds as ablation-icount.sh.
# Usage (from the repository root): results/tools/ablation-scaling.sh [R] [MM...]
# (OUT=DIR writes DIR/scaling.jsonl instead of results/2026-12-01-ablation/)
set -euo pipefail
out=${OUT:-results/2026-12-01-ablation}/scaling.jsonl
reps=${1:-5}
shift || true
mms=("${@:-adv}")
: > "$out"
run() {   # name build ablate mm repeat
  local name=$1 build=$2 ablate=$3 mm=$4 r=$5
  local extra=()
  [[ -n $ablate ]] && extra=(--ablate "$ablate")
  python3 scripts/patina_qemu.py --kernel "$build/kernel/patina.elf" --smp 2 --mm "$mm" "${extra[@]}" \
    --cmd "bench mmap mmap-pf pf unmap-virt unmap --threads 1,2 --contention low" --timeout 900 |
    grep '^{' | sed "s/^{/{\"config\":\"$name\",\"repeat\":$r,/" >> "$out"
}
for r in $(seq 1 "$reps"); do
  for mm in "${mms[@]}"; do
    run all-on build "" "$mm" "$r"
    run mklock build mklock "$mm" "$r"
    run lateflush build lateflush "$mm" "$r"
    run prefault build prefault "$mm" "$r"
    run tas build-tas "" "$mm" "$r"
    run all-off build-tas mklock,lateflush,prefault "$mm" "$r"
  done
done
