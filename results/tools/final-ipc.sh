#!/usr/bin/env bash
# bench ipc wall clock (rdtime) on the final kernel: R boots (default 5) each
# of --smp 2 and --smp 4, alternating, with a rest between boots. Writes
# ipc.jsonl into results/2026-12-02-final (OUT=DIR: into DIR). Usage (repository root, build/ built):
#   results/tools/final-ipc.sh [R]
set -euo pipefail
dir=${OUT:-results/2026-12-02-final}
reps=${1:-5}
: > "$dir/ipc.jsonl"
for r in $(seq 1 "$reps"); do
  for n in 2 4; do
    load=$(cut -d' ' -f1 /proc/loadavg)
    python3 scripts/patina_qemu.py --kernel build/kernel/patina.elf --smp "$n" --cmd "bench ipc" --timeout 600 |
      grep '^{' | sed "s/^{/{\"smp\":$n,\"repeat\":$r,\"load\":$load,/" >> "$dir/ipc.jsonl"
    sleep "${PAUSE:-15}"
  done
done
