#!/bin/sh
# 10 runs each of the host mmbench 2-thread unmap (low contention), adv and
# vma, threads spread over the host's cores (pinned) and both on core 0
# (taskset -c 0). Usage: results/tools/probe-host-unmap-2t.sh BUILD_DIR > results/2026-12-01-vma/probe/host-unmap-2t.jsonl
B=$1/tests/host/mmbench
for mm in adv vma; do
  for pin in spread core0; do
    for i in 1 2 3 4 5 6 7 8 9 10; do
      if [ $pin = spread ]; then $B --bench unmap --arch sv48 --mm $mm --threads 2 --overlap low
      else taskset -c 0 $B --bench unmap --arch sv48 --mm $mm --threads 2 --overlap low; fi 2>/dev/null |
        sed "s/}\$/,\"placement\":\"$pin\",\"repeat\":$i}/"
    done
  done
done
