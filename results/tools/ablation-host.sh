#!/usr/bin/env bash
# Host mmbench for each ablation the host program has (late flush, fault
# frame before the lock, queue locks; mk_lock is the kernel's alone): the
# five benchmarks, adv, Sv39, 1 and 2 threads, low and high contention,
# R rounds (default 15) of every configuration in turn. Writes host.jsonl
# in results/2026-12-01-ablation with "config" and "repeat" added. Needs build/tests/host/mmbench.
# Usage (from the repository root): results/tools/ablation-host.sh [R]
# (OUT=DIR writes DIR/host.jsonl instead of results/2026-12-01-ablation/)
set -euo pipefail
out=${OUT:-results/2026-12-01-ablation}/host.jsonl
reps=${1:-15}
: > "$out"
declare -A cfg=(
  [all-on]=""
  [lateflush]="--flush locked"
  [prefault]="--fault-frame inside"
  [tas]="--lock tas"
  [all-off]="--flush locked --fault-frame inside --lock tas"
)
for r in $(seq 1 "$reps"); do
  for name in all-on lateflush prefault tas all-off; do
    for t in 1 2; do
      for ov in low high; do
        # shellcheck disable=SC2086
        build/tests/host/mmbench --bench all --mm adv --arch sv39 --threads $t --overlap $ov \
          --ops 256 ${cfg[$name]} 2>/dev/null |
          sed "s/^{/{\"config\":\"$name\",\"repeat\":$r,/" >> "$out"
      done
    done
  done
done
