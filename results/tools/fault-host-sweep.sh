#!/bin/bash
# The host sweep of docs/performance.md ("Fault path and queue locks"):
# every config in turn, R rounds, one JSON line per benchmark and run.
# Usage (repository root): results/tools/fault-host-sweep.sh OUT [R]
# Needs b-host (meson setup b-host -Dhost_only=true && ninja -C b-host).
out=$1; R=${2:-15}
: > "$out"
for rep in $(seq 1 "$R"); do
 for ov in low high; do
  for t in 1 2; do
   for mm in adv rw; do
    for lock in tas queue; do
     for ff in inside before; do
      b-host/tests/host/mmbench --bench all --mm $mm --threads $t --overlap $ov --lock $lock \
        --fault-frame $ff --ops 256 --seed 5 2>/dev/null | sed "s/^{/{\"repeat\":$rep,/" >> "$out"
     done
    done
   done
  done
 done
done
