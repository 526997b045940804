#!/bin/sh
# 15 rounds of the host mmbench at 1 thread, low contention, adv and vma
# alternating run by run (both see the same host load), for the benches
# where the 5-run medians put adv below vma.
# Usage: results/tools/probe-host-1t-recheck.sh BUILD_DIR > results/2026-12-01-vma/probe/host-1t-recheck.jsonl
B=$1/tests/host/mmbench
for i in $(seq 1 15); do
  for b in mmap mmap-pf pf; do
    for mm in adv vma; do
      $B --bench $b --arch sv48 --mm $mm --threads 1 --overlap low 2>/dev/null |
        sed "s/}\$/,\"repeat\":$i}/"
    done
  done
done
