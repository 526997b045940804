#!/usr/bin/env bash
# The user TLB shootdown by kernel IPI (default) against SBI RFENCE
# (ablate=ipiflush), adv: exact instructions per operation at 1 hart
# (-icount) for pf, unmap-virt and unmap, then R boots (default 3) of --smp 2
# per config running the same at 1 and 2 threads (wall
# clock). With BASE=path/to/patina.elf (a build of the tree before the
# IPI shootdown and the per-hart quota reserves), the same runs of that
# kernel as config "base". Writes icount.jsonl and scaling.jsonl into results/2026-12-02-ipiflush (OUT=DIR: into DIR)
# ("config", and "repeat" for the latter, added). Then results/tools/ipiflush-summarize.py prints
# the tables.
# Usage (from the repository root, build/ built): [BASE=...] results/tools/ipiflush-run.sh [R]
set -euo pipefail
dir=${OUT:-results/2026-12-02-ipiflush}
reps=${1:-3}
: > "$dir/icount.jsonl"
: > "$dir/scaling.jsonl"
configs=(ipi ipiflush)
[[ -n ${BASE:-} ]] && configs+=(base)
boot() {   # config smp repeat-or-empty out extra-qemu-args...
  local cfg=$1 smp=$2 r=$3 out=$4
  shift 4
  local extra=() tag="\"config\":\"$cfg\"," kernel=build/kernel/patina.elf
  [[ $cfg == ipiflush ]] && extra=(--ablate ipiflush)
  [[ $cfg == base ]] && kernel=$BASE
  [[ -n $r ]] && tag="$tag\"repeat\":$r,"
  nice -n 5 python3 scripts/patina_qemu.py --kernel "$kernel" --smp "$smp" --mm adv \
    "${extra[@]}" "$@" --timeout 900 |
    grep '^{' | sed "s/^{/{$tag/" >> "$out"
}
for cfg in "${configs[@]}"; do
  boot "$cfg" 1 "" "$dir/icount.jsonl" --icount \
    --cmd "bench pf unmap-virt unmap --threads 1 --contention low"
done
for r in $(seq 1 "$reps"); do
  for cfg in "${configs[@]}"; do
    boot "$cfg" 2 "$r" "$dir/scaling.jsonl" \
      --cmd "bench pf unmap-virt unmap --threads 1,2 --contention low"
  done
done
