#!/bin/sh
# 15 rounds of the host mmbench at 2 threads, low and high contention,
# adv and vma alternating run by run (both see the same host load).
# Usage: results/tools/probe-host-2t-recheck.sh BUILD_DIR > results/2026-12-01-vma/probe/host-2t-recheck.jsonl
B=$1/tests/host/mmbench
for i in $(seq 1 15); do
  for b in mmap mmap-pf pf unmap-virt; do
    for o in low high; do
      for mm in adv vma; do
        $B --bench $b --arch sv48 --mm $mm --threads 2 --overlap $o 2>/dev/null |
          sed "s/}\$/,\"repeat\":$i}/"
      done
    done
  done
done
