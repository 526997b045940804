#!/usr/bin/env python3
"""Break-before-make bites, for one registered paging table.

    bbm_mutant.py TLB_NOBBM ARCH

TLB_NOBBM is the TLB harness built on a core that replaces entries
without breaking them first (MM_BUG_NO_BBM). The table says itself whether
it needs break-before-make (tlb --print-bbm: its needs_bbm). If it does,
every run below must end in a TLB conflict (exit 1 and that report); if it
does not, the same build must run coherent. Every table in the registry
gets this test, so a new one is covered by its registry line alone.
Exit 0 when the table behaves as its flag says."""
import subprocess
import sys

# (protocol, extra arguments): single-threaded runs of both protocols and
# a concurrent one, each with a fixed seed.
BBM_RUNS = [("adv", []), ("rw", []), ("adv", ["--threads", "4"])]
PLAIN_RUNS = [("adv", ["--steps", "50000"])]


def run(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return r.returncode, r.stdout


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    tlb, arch = sys.argv[1], sys.argv[2]
    rc, out = run([tlb, "--arch", arch, "--print-bbm"])
    if rc != 0 or out.strip() not in ("0", "1"):
        sys.exit("%s --print-bbm: exit %d, %r" % (arch, rc, out))
    needs = out.strip() == "1"
    bad = []
    for proto, extra in BBM_RUNS if needs else PLAIN_RUNS:
        cmd = [tlb, "--arch", arch, "--mm", proto, "--seed", "11"] + extra
        rc, out = run(cmd)
        print(" ".join(cmd[1:]) + ": exit %d" % rc)
        print(out.strip().splitlines()[-1] if out.strip() else "(no output)")
        caught = rc == 1 and "TLB conflict" in out
        if needs and not caught:
            bad.append("%s %s: the missing break-before-make was not caught" % (proto, extra))
        if not needs and rc != 0:
            print(out)
            bad.append("%s %s: a table without break-before-make failed" % (proto, extra))
    print("%s: needs_bbm %d, %s" % (arch, needs, "; ".join(bad) if bad else "as expected"))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
