#!/usr/bin/env python3
"""Boot patina under QEMU and judge the run by what the kernel prints.

One place for the QEMU command line and for reading a run's output; both
scripts/run and the 'kernel' test suite use it. QEMU exits 0 after any SBI
shutdown (PLATFORM.md), so the verdict never comes from QEMU's status:

  patina: exit <N>   the command finished with status N   -> N
  panic: ...         the kernel panicked                    -> 70
  no exit line       QEMU ended early / the run broke       -> 125
  time limit passed  hang                                   -> 124
"""
import argparse
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import time

EXIT_PANIC = 70
EXIT_TIMEOUT = 124
EXIT_BROKEN = 125

BANNER_RE = re.compile(
    r"^patina: (\d+) harts, (sv39|sv48|sv57|x86_64|x86_64-la57), (\d+) MiB, mm=(adv|rw|vma)\s*$")
EXIT_RE = re.compile(r"^patina: exit (-?\d+)\s*$")
# Skipped tests (what the machine lacks) are counted apart, and the part
# is printed only when there are some.
SELFTEST_RE = re.compile(r"^selftest: (\d+) passed, (\d+) failed(?:, (\d+) skipped)?\s*$")


# The QEMU RISC-V machines the kernel boots on, and the fewest -smp each
# takes (sifive_u's hart 0 is its E51 monitor core: at least one U54 more).
MACHINES = {"virt": 1, "spike": 1, "sifive_u": 2}


# ELF e_machine of the kernels this runner boots.
ELF_MACHINES = {0xf3: "riscv64", 0x3e: "x86_64"}


def kernel_arch(path):
    """The ISA of the kernel ELF at path (from its header): riscv64 or x86_64."""
    try:
        with open(path, "rb") as f:
            hdr = f.read(20)
    except OSError:
        return "riscv64"   # QEMU then reports the missing file itself
    if len(hdr) < 20 or hdr[:4] != b"\x7fELF":
        raise SystemExit("patina: %s is not an ELF file" % path)
    machine = int.from_bytes(hdr[18:20], "little")
    if machine not in ELF_MACHINES:
        raise SystemExit("patina: %s is for ELF machine %#x, not a patina ISA" % (path, machine))
    return ELF_MACHINES[machine]


def qemu_has_machine(name):
    """Does this qemu-system-riscv64 offer -machine name?"""
    qemu = shutil.which("qemu-system-riscv64") or "qemu-system-riscv64"
    try:
        out = subprocess.run([qemu, "-machine", "help"], capture_output=True,
                             text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return False
    return any(ln.split()[:1] == [name] for ln in out.splitlines())


def add_boot_args(p):
    """The boot flags shared by scripts/run and the test drivers."""
    p.add_argument("--kernel", required=True, help="path to patina.elf")
    p.add_argument("--machine", choices=sorted(MACHINES), default="virt",
                   help="QEMU machine: virt (16550 UART), spike (HTIF console, "
                   "no UART) or sifive_u (SiFive UART; hart 0 is an E51 without "
                   "an MMU that stays with the firmware, so --smp must be >= 2)")
    p.add_argument("--smp", type=int, default=4)
    p.add_argument("--mem", default="512M")
    p.add_argument("--paging", choices=["sv39", "sv48", "sv57", "x86_64"])
    p.add_argument("--mm", choices=["adv", "rw", "vma"], default="adv")
    p.add_argument("--icount", action="store_true")
    p.add_argument("--ablate", help="comma list of mklock, lateflush, prefault, ipiflush: "
                   "scalability measures to turn off (to measure them)")
    p.add_argument("--gdb", action="store_true")
    p.add_argument("--failalloc", type=failalloc_word, metavar="N[,B]",
                   help="fail the Nth kernel allocation of the command (and the B-1 after "
                        "it; 0: count only)")
    p.add_argument("--disk", metavar="IMAGE",
                   help="attach IMAGE (raw) as a virtio-blk disk on a virtio-mmio slot; "
                        "created at --disk-size when it does not exist")
    p.add_argument("--disk-size", type=disk_size, default=disk_size("64M"), metavar="SIZE",
                   help="size of a --disk image made here: bytes, or with K, M or G "
                        "(default 64M)")
    p.add_argument("--cmd")
    p.add_argument("--timeout", type=float, default=600.0,
                   help="seconds before a --cmd run counts as hung")


def failalloc_word(s):
    """--failalloc's value: N or N,B (decimal, B >= 1), as the kernel takes it."""
    parts = str(s).split(",")
    if len(parts) > 2 or not all(p.isdigit() for p in parts) or (len(parts) == 2 and int(parts[1]) < 1):
        raise argparse.ArgumentTypeError("expected N or N,B")
    return ",".join(str(int(p)) for p in parts)


def disk_size(s):
    """--disk-size's value in bytes: N, NK, NM or NG (powers of 1024), N >= 1."""
    m = re.fullmatch(r"(\d+)([KMG]?)", str(s).strip().upper())
    if not m or int(m.group(1)) < 1:
        raise argparse.ArgumentTypeError("expected a size such as 64M")
    return int(m.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[m.group(2)]


def disk_args(opts):
    """QEMU arguments for --disk: a virtio-blk device on virtio-mmio (QEMU
    7.2's legacy interface, its default), the image made first (a sparse
    file of --disk-size bytes) when there is none."""
    image = getattr(opts, "disk", None)
    if not image:
        return []
    if not os.path.exists(image):
        with open(image, "wb") as f:
            f.truncate(opts.disk_size)
    return ["-drive", "if=none,file=%s,format=raw,id=d0" % image,
            "-device", "virtio-blk-device,drive=d0"]


def bootargs(opts):
    words = []
    if opts.paging:
        words.append("paging=" + opts.paging)
    words.append("mm=" + opts.mm)
    if getattr(opts, "ablate", None):
        words.append("ablate=" + opts.ablate)
    if getattr(opts, "failalloc", None) is not None:
        words.append("failalloc=%s" % opts.failalloc)
    if opts.cmd is not None:
        words += ["--", opts.cmd]
    return " ".join(words)


def qemu_command_x86(opts):
    """The argv that boots an x86-64 kernel: q35 with every CPU feature
    TCG has (PCID, INVPCID, FSGSBASE, SMAP), entered through the ELF's PVH
    note; isa-debug-exit gives the kernel's power off a QEMU status."""
    if getattr(opts, "machine", None) not in (None, "virt"):
        raise SystemExit("patina: --machine is RISC-V only")
    if opts.paging and opts.paging != "x86_64":
        raise SystemExit("patina: --paging %s is RISC-V only" % opts.paging)
    if getattr(opts, "disk", None):
        raise SystemExit("patina: --disk is RISC-V only (no virtio-blk on x86-64 yet)")
    qemu = shutil.which("qemu-system-x86_64") or "qemu-system-x86_64"
    return [qemu, "-machine", "q35", "-cpu", "max", "-no-reboot",
            "-smp", str(opts.smp), "-m", opts.mem,
            "-kernel", opts.kernel, "-append", bootargs(opts),
            "-device", "isa-debug-exit,iobase=0xf4,iosize=4"]


def qemu_command_riscv(opts):
    """The argv that boots a RISC-V kernel on OpenSBI (and its disk)."""
    qemu = shutil.which("qemu-system-riscv64") or "qemu-system-riscv64"
    machine = getattr(opts, "machine", None) or "virt"
    if opts.smp < MACHINES[machine]:
        raise SystemExit("patina: -machine %s needs --smp >= %d" % (machine, MACHINES[machine]))
    return [qemu, "-machine", machine, "-bios", "default",
            "-smp", str(opts.smp), "-m", opts.mem,
            "-kernel", opts.kernel, "-append", bootargs(opts)] + disk_args(opts)


def qemu_command(opts, extra=(), interactive=False):
    """Return the argv that boots the kernel with these options."""
    if kernel_arch(opts.kernel) == "x86_64":
        argv = qemu_command_x86(opts)
    else:
        argv = qemu_command_riscv(opts)
    if opts.icount:
        # Exact, repeatable instruction counts; all harts on one host thread.
        argv += ["-icount", "shift=0"]
    else:
        argv += ["-accel", "tcg,thread=multi"]
    if interactive:
        argv += ["-nographic"]
    else:
        argv += ["-display", "none", "-serial", "stdio", "-monitor", "none"]
    if opts.gdb:
        argv += ["-s", "-S"]
    return argv + list(extra)


class Run:
    """What one non-interactive boot printed, and its verdict."""

    def __init__(self):
        self.lines = []
        self.status = None
        self.timed_out = False

    def banner(self):
        for ln in self.lines:
            m = BANNER_RE.match(ln)
            if m:
                return m
        return None

    def exit_line(self):
        for ln in self.lines:
            m = EXIT_RE.match(ln)
            if m:
                return int(m.group(1))
        return None

    def panicked(self):
        return any(ln.startswith("panic:") for ln in self.lines)

    def verdict(self):
        if self.panicked():
            return EXIT_PANIC
        if self.timed_out:
            return EXIT_TIMEOUT
        code = self.exit_line()
        if code is None or self.banner() is None:
            return EXIT_BROKEN
        return code & 0xff if code >= 0 else EXIT_BROKEN


def run_captured(argv, timeout, echo=True):
    """Run QEMU, stream its output, stop at the exit line, a panic or the
    time limit. Returns a Run."""
    run = Run()
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    deadline = time.monotonic() + timeout
    grace_until = None  # after the verdict line, give the shutdown a moment
    buf = b""
    fd = proc.stdout.fileno()
    try:
        while True:
            now = time.monotonic()
            limit = grace_until if grace_until is not None else deadline
            if now >= limit:
                if grace_until is None:
                    run.timed_out = True
                break
            r, _, _ = select.select([fd], [], [], min(1.0, limit - now))
            if not r:
                if proc.poll() is not None:
                    break
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            if echo:
                sys.stdout.buffer.write(chunk)
                sys.stdout.flush()
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                text = line.decode("utf-8", "replace").rstrip("\r")
                run.lines.append(text)
                if grace_until is None and (EXIT_RE.match(text) or
                                            text.startswith("panic:")):
                    # A panic prints its report after the first line.
                    grace_until = time.monotonic() + 3.0
    finally:
        if buf:
            run.lines.append(buf.decode("utf-8", "replace"))
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(timeout=5)
            except (subprocess.TimeoutExpired, ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    return run


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    add_boot_args(p)
    p.add_argument("extra", nargs="*", help="more QEMU arguments (after --)")
    opts = p.parse_args()
    if opts.gdb:
        print("patina: QEMU waits for a debugger on tcp::1234. In another shell:\n"
              "  gdb-multiarch %s -ex 'target remote :1234'" % opts.kernel,
              file=sys.stderr)
    if opts.cmd is None:
        argv = qemu_command(opts, opts.extra, interactive=True)
        print("patina: interactive shell; quit QEMU with Ctrl-A X", file=sys.stderr)
        os.execvp(argv[0], argv)
    timeout = opts.timeout if not opts.gdb else 1e9
    run = run_captured(qemu_command(opts, opts.extra), timeout)
    code = run.verdict()
    if code == EXIT_TIMEOUT:
        print("\npatina-run: no result after %gs; counted as a hang" % timeout,
              file=sys.stderr)
    elif code == EXIT_BROKEN:
        print("\npatina-run: the run ended without a banner or an exit line",
              file=sys.stderr)
    elif code == EXIT_PANIC:
        print("\npatina-run: kernel panic", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
