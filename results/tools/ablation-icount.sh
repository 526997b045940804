#!/usr/bin/env bash
# Exact instructions per operation at 1 hart (-icount) for each ablation:
# the five benchmarks, low contention, adv and rw. Writes icount.jsonl into results/2026-12-01-ablation.
# Usage (from the repository root, with build/ and build-tas/ built, the
# latter configured with -Dmm_lock=tas): results/tools/ablation-icount.sh
# (OUT=DIR writes DIR/icount.jsonl instead of results/2026-12-01-ablation/)
set -euo pipefail
out=${OUT:-results/2026-12-01-ablation}/icount.jsonl
: > "$out"
run() {   # name build ablate mm
  local name=$1 build=$2 ablate=$3 mm=$4
  local extra=()
  [[ -n $ablate ]] && extra=(--ablate "$ablate")
  python3 scripts/patina_qemu.py --kernel "$build/kernel/patina.elf" --smp 1 --icount --mm "$mm" "${extra[@]}" \
    --cmd "bench mmap mmap-pf pf unmap-virt unmap --threads 1 --contention low" --timeout 900 |
    grep '^{' | sed "s/^{/{\"config\":\"$name\",/" >> "$out"
}
for mm in adv rw; do
  run all-on build "" $mm
  run mklock build mklock $mm
  run lateflush build lateflush $mm
  run prefault build prefault $mm
  run tas build-tas "" $mm
  run all-off build-tas mklock,lateflush,prefault $mm
done
