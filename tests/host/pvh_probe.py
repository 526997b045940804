#!/usr/bin/env python3
"""pvh_probe: the x86-64 boot DTB built from what a real QEMU PVH boot gives.

Usage: pvh_probe.py QEMU PVHPROBE TEST_BOOTFDT

Boots PVHPROBE (arch-x86/test/pvh_probe: x86_bootfdt_build on the real start
info, memory map and ACPI tables, the DTB printed in hex) on a q35 machine
in two shapes, then reads the DTB back through the kernel's fdt_validate
and fdt_scan (`TEST_BOOTFDT --scan`) and checks what they found: the
processors QEMU was given (those hot-pluggable later left out), the
command line, memory from 1 MiB, the RAM above 4 GiB, and the initrd (the
first module) kept by a memreserve entry. Exit 0 when every check held."""

import os
import subprocess
import sys
import tempfile

SHAPES = [
    # (name, QEMU arguments, processors, command line, RAM runs, module bytes)
    ("smp4-3G", ["-smp", "4,maxcpus=6", "-m", "3G"], 4, "console=ttyS0 probe", 2, 70001),
    ("smp1-256M", ["-smp", "1", "-m", "256M"], 1, None, 1, 0),
]


def run_shape(qemu, probe, scan, tmp, shape):
    name, args, ncpu, cmdline, nram, modsize = shape
    argv = [qemu, "-M", "q35", "-cpu", "max", "-display", "none", "-monitor", "none",
            "-serial", "stdio", "-no-reboot", "-device", "isa-debug-exit,iobase=0xf4,iosize=4",
            "-kernel", probe] + args
    if cmdline is not None:
        argv += ["-append", cmdline]
    if modsize:
        mod = os.path.join(tmp, name + ".mod")
        with open(mod, "wb") as f:
            f.write(bytes((i * 7) & 0xff for i in range(modsize)))
        argv += ["-initrd", mod]
    out = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60,
                         text=True, errors="replace").stdout
    lines = {l.split(" ", 1)[0]: l.split(" ", 1)[1].strip()
             for l in out.splitlines() if l.startswith("PROBE-") and " " in l}
    if "PROBE-DTB" not in lines:
        return ["no DTB: %s" % (lines.get("PROBE-REFUSED") or out[-400:])]
    dtb = os.path.join(tmp, name + ".dtb")
    with open(dtb, "wb") as f:
        f.write(bytes.fromhex(lines["PROBE-DTB"]))
    res = subprocess.run([scan, "--scan", dtb], stdout=subprocess.PIPE, text=True)
    facts = res.stdout.splitlines()
    print("\n".join("  %s: %s" % (name, l) for l in facts))
    if res.returncode:
        return ["the kernel's parser refused the DTB"]
    errs = []
    cpus = [l.split()[1:] for l in facts if l.startswith("cpu ")]
    want = [[str(i), "okay", "x86,4-level"] for i in range(ncpu)]
    if cpus != want:
        errs.append("cpus %s, want %s" % (cpus, want))
    if "boot_cpuid 0" not in facts:
        errs.append("boot_cpuid is not 0")
    if "timebase 1000000000" not in facts:
        errs.append("timebase missing")
    args_line = [l.rstrip() for l in facts if l.startswith("bootargs")]
    if cmdline and args_line != ["bootargs " + cmdline]:
        errs.append("bootargs %s, want %r" % (args_line, cmdline))
    if not cmdline and args_line not in ([], ["bootargs"]):
        errs.append("bootargs %s, want none or empty" % args_line)
    mem = [tuple(int(x, 16) for x in l.split()[1:]) for l in facts if l.startswith("mem ")]
    if len(mem) != nram or mem[0][0] != 0x100000:
        errs.append("memory %s: want %d runs from 1 MiB" % (mem, nram))
    if nram == 2 and mem[1][0] != 1 << 32:
        errs.append("no RAM at 4 GiB")
    if modsize:
        base, size = (int(x, 16) for x in lines.get("PROBE-MODULE", "0 0").split())
        rsv = [tuple(int(x, 16) for x in l.split()[1:]) for l in facts if l.startswith("memrsv")]
        if size != modsize or not any(b <= base and base + size <= b + s for b, s in rsv):
            errs.append("module %#x+%#x not kept by %s" % (base, size, rsv))
    return errs


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    qemu, probe, scan = sys.argv[1:]
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for shape in SHAPES:
            errs = run_shape(qemu, probe, scan, tmp, shape)
            for e in errs:
                print("FAIL %s: %s" % (shape[0], e))
            if not errs:
                print("ok %s" % shape[0])
            failed += bool(errs)
    print("pvh_probe: %d shapes, %d failed" % (len(SHAPES), failed))
    sys.exit(1 if failed else 0)


main()
