#!/usr/bin/env python3
"""One QEMU boot of patina, judged by its output (suite 'kernel').

Fails on: a missing or wrong banner, a failed or missing selftest summary, a
panic (unless --expect-status panic asks for one), a hang, an exit status
other than the one expected, or (--expect-bench) no well-formed bench line.
"""
import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "scripts"))
import patina_qemu as pq  # noqa: E402


def mib(size):
    units = {"M": 1, "G": 1024}
    return int(size[:-1]) * units[size[-1].upper()]


# The fields every `bench` JSON line has (docs/performance.md).
BENCH_FIELDS = ("bench", "contention", "threads", "mm", "paging", "ops",
                "ns_per_op", "ops_per_sec", "instret_per_op")


def bench_line_error(lines, spec):
    """None if some line is a JSON object whose "bench" is spec's name and
    that has the standard fields and spec's own (NAME[:KEY,KEY...]), each
    a number, a string or null as the format gives; else why not. The
    values are not judged: benchmarks are not pass/fail on speed."""
    name, _, keys = spec.partition(":")
    want = BENCH_FIELDS + tuple(k for k in keys.split(",") if k)
    for ln in lines:
        if not ln.startswith("{"):
            continue
        try:
            obj = json.loads(ln)
        except ValueError:
            continue
        if not isinstance(obj, dict) or obj.get("bench") != name:
            continue
        missing = [k for k in want if k not in obj]
        if missing:
            return "bench line %s lacks %s" % (name, ", ".join(missing))
        odd = [k for k in want if not isinstance(obj[k], (int, float, str, type(None)))]
        if odd:
            return "bench line %s: %s not a number, string or null" % (name, ", ".join(odd))
        return None
    return "no JSON line with \"bench\":\"%s\"" % name


RESTORE_RE = re.compile(r"^restore: (\d+) pages, (\d+) faults, ")


def restore_ratio_error(lines, least):
    """None if the last `restore:` line names at least `least` pages per
    fault; else why not."""
    found = [m for m in (RESTORE_RE.match(ln) for ln in lines) if m]
    if not found:
        return "no 'restore: P pages, F faults, ...' line"
    pages, faults = int(found[-1].group(1)), int(found[-1].group(2))
    if faults == 0 or pages / faults < least:
        return "restore: %d pages in %d faults, want at least %g pages a fault" % (
            pages, faults, least)
    return None


ASYNC_RE = re.compile(r"^restore: async, (\d+) threads, (\d+) faults outstanding at most, ")


def restore_outstanding_error(lines, least):
    """None if the last `restore: async` line (restoredemo --async) names at
    least `least` faults outstanding at once; else why not."""
    found = [m for m in (ASYNC_RE.match(ln) for ln in lines) if m]
    if not found:
        return "no 'restore: async, T threads, K faults outstanding at most' line"
    most = int(found[-1].group(2))
    if most < least:
        return "restore: %d faults outstanding at most, want at least %d" % (most, least)
    return None


def main():
    p = argparse.ArgumentParser(description=__doc__)
    pq.add_boot_args(p)
    p.add_argument("--expect-status", default="0",
                   help="exact status, 'nonzero', or 'panic' (the kernel must panic)")
    p.add_argument("--expect-line", action="append", default=[],
                   help="a substring some output line must contain")
    p.add_argument("--expect-lines-from", action="append", default=[], metavar="FILE",
                   help="each line of FILE (one written at build time) as an --expect-line")
    p.add_argument("--expect-mib", type=int,
                   help="RAM the banner must report (default: from --mem)")
    p.add_argument("--expect-paging",
                   help="paging mode the banner must report (default: --paging, else sv48)")
    p.add_argument("--expect-mm",
                   help="mm the banner must report (default: --mm)")
    p.add_argument("--expect-harts", type=int,
                   help="harts the banner must report (default: --smp; sifive_u's "
                   "hart 0 has no MMU and stays with the firmware)")
    p.add_argument("--min-passed", type=int, default=1,
                   help="least number of selftest passes accepted")
    p.add_argument("--help-lists", action="append", default=[], metavar="NAME",
                   help="the output is `help`'s: NAME is listed, and no name is listed twice")
    p.add_argument("--expect-bench", action="append", default=[], metavar="NAME[:KEY,...]",
                   help="some line is a bench JSON object for NAME with the standard "
                   "fields and these KEYs")
    p.add_argument("--restore-min-ratio", type=float, metavar="R",
                   help="the last `restore:` line (restoredemo) names at least R pages "
                   "per fault")
    p.add_argument("--restore-min-outstanding", type=int, metavar="K",
                   help="the last `restore: async` line (restoredemo --async) names at "
                   "least K faults outstanding at once")
    p.add_argument("extra", nargs="*")
    opts = p.parse_args()
    for path in opts.expect_lines_from:
        with open(path) as f:
            opts.expect_line += [ln.rstrip("\n") for ln in f if ln.strip()]

    # A QEMU without the machine cannot say anything about the kernel on
    # it: meson's skip status (77), with the reason printed.
    if opts.machine != "virt" and not pq.qemu_has_machine(opts.machine):
        print("boot_test: SKIP: this QEMU has no -machine %s" % opts.machine)
        return 77

    run = pq.run_captured(pq.qemu_command(opts, opts.extra), opts.timeout,
                          echo=True)
    errors = []
    m = run.banner()
    if m is None:
        errors.append("no banner line")
    else:
        harts = opts.expect_harts if opts.expect_harts is not None else opts.smp
        want = (harts, opts.expect_paging or opts.paging or "sv48",
                opts.expect_mib if opts.expect_mib is not None else mib(opts.mem),
                opts.expect_mm or opts.mm)
        got = (int(m.group(1)), m.group(2), int(m.group(3)), m.group(4))
        if got != want:
            errors.append("banner says %s, expected %s" % (got, want))
    if opts.expect_status == "panic":
        if not run.panicked():
            errors.append("no panic, expected one")
    elif run.panicked():
        errors.append("kernel panic")
    if run.timed_out:
        errors.append("hang: no exit line within %gs" % opts.timeout)
    if opts.cmd == "selftest":
        sums = [pq.SELFTEST_RE.match(ln) for ln in run.lines]
        sums = [s for s in sums if s]
        if not sums:
            errors.append("no 'selftest: P passed, F failed' line")
        elif (int(sums[-1].group(2)) != 0 or
              int(sums[-1].group(1)) < opts.min_passed):
            errors.append("selftest: %s passed, %s failed (want >= %d passed)"
                          % (sums[-1].group(1), sums[-1].group(2), opts.min_passed))
    for want_line in opts.expect_line:
        if not any(want_line in ln for ln in run.lines):
            errors.append("no line contains %r" % want_line)
    if opts.restore_min_ratio is not None:
        why = restore_ratio_error(run.lines, opts.restore_min_ratio)
        if why:
            errors.append(why)
    if opts.restore_min_outstanding is not None:
        why = restore_outstanding_error(run.lines, opts.restore_min_outstanding)
        if why:
            errors.append(why)
    for spec in opts.expect_bench:
        why = bench_line_error(run.lines, spec)
        if why:
            errors.append(why)
    if opts.help_lists:
        names = [ln.split()[0] for ln in run.lines if ln.startswith("  ") and ln.strip()]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            errors.append("help lists %s more than once" % ", ".join(twice))
        for n in opts.help_lists:
            if n not in names:
                errors.append("help does not list %s" % n)
    code = run.verdict()
    if opts.expect_status == "panic":
        pass    # judged above: the panic line itself
    elif opts.expect_status == "nonzero":
        if code == 0:
            errors.append("exit status 0, expected non-zero")
        elif code in (pq.EXIT_TIMEOUT, pq.EXIT_BROKEN, pq.EXIT_PANIC):
            errors.append("exit status %d is a hang/breakage, not a refusal" % code)
    elif code != int(opts.expect_status):
        errors.append("exit status %d, expected %s" % (code, opts.expect_status))

    for e in errors:
        print("boot_test: FAIL: " + e, file=sys.stderr)
    if not errors:
        print("boot_test: ok (status %d)" % code)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
