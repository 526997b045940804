#!/usr/bin/env python3
"""Tests of scripts/check-boundary.

  test_boundary.py SCRIPT tree ROOT   the real tree must be clean (exit 0)
  test_boundary.py SCRIPT fixture     on a copy of boundary-fixture/ the
      script must fail and report exactly the lines marked BOUNDARY-EXPECT
      (no misses, no false alarms); with those lines deleted from the copy
      it must pass; and each planted violation alone (a marked line, or a
      run of adjacent marked lines: one statement over several lines),
      put back into that clean copy, must make it fail naming exactly its
      file:line(s). A marker that names rules (BOUNDARY-EXPECT: rule,
      rule) must be reported under exactly those rules.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "boundary-fixture")
MARK = "BOUNDARY-EXPECT"


def check(script, root):
    p = subprocess.run([sys.executable, script, root], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    return p.returncode, p.stdout


MARK_RULES = re.compile(MARK + r":\s*(.*?)\s*(?:\*/|$)")


def source_lines(root):
    """(file:line, text) of every line of the C and assembly files under
    root."""
    for dirpath, _, files in os.walk(root):
        for f in files:
            if not f.endswith((".c", ".h", ".S", ".s")):
                continue
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, root).replace(os.sep, "/")
            with open(path, encoding="utf-8") as fh:
                for ln, line in enumerate(fh, 1):
                    yield "%s:%d" % (rel, ln), line


def marked_rules(root):
    """{file:line: set of rule names} for the markers that name rules."""
    out = {}
    for where, line in source_lines(root):
        m = MARK_RULES.search(line)
        if m:
            out[where] = set(r.strip() for r in m.group(1).split(","))
    return out


def reported_rules(out):
    """{file:line: set of rule names} of a report."""
    got = {}
    for m in re.finditer(r"^(\S+:\d+): (.+?): ", out, re.M):
        got.setdefault(m.group(1), set()).add(m.group(2))
    return got


def marked(root):
    return set(where for where, line in source_lines(root) if MARK in line)


def reported(out):
    return set(m.group(1) for m in re.finditer(r"^(\S+:\d+): ", out, re.M))


def units(want):
    """The planted violations: runs of adjacent marked lines of one file,
    as (file, [line, ...])."""
    out = []
    for rel, ln in sorted((w.rsplit(":", 1)[0], int(w.rsplit(":", 1)[1]))
                          for w in want):
        if out and out[-1][0] == rel and out[-1][1][-1] == ln - 1:
            out[-1][1].append(ln)
        else:
            out.append((rel, [ln]))
    return out


def plant_one(clean, tree, rel, lns):
    """tree = clean (the fixture without its marked lines) with the marked
    lines lns of file rel put back. Returns their file:line set in tree."""
    shutil.rmtree(tree, ignore_errors=True)
    shutil.copytree(clean, tree)
    with open(os.path.join(FIXTURE, rel), encoding="utf-8") as fh:
        lines = fh.readlines()
    keep = [l for i, l in enumerate(lines, 1) if MARK not in l or i in lns]
    with open(os.path.join(tree, rel), "w", encoding="utf-8") as fh:
        fh.writelines(keep)
    before = sum(1 for l in lines[:lns[0] - 1] if MARK in l)
    return set("%s:%d" % (rel, ln - before) for ln in lns)


def test_each(script, clean, work, want):
    """Each planted violation on its own fails the check, reported at its
    file:line(s) and nothing else."""
    bad = 0
    tree = os.path.join(work, "one")
    planted = units(want)
    for rel, lns in planted:
        where = plant_one(clean, tree, rel, lns)
        rc, out = check(script, tree)
        got = reported(out)
        if rc != 1 or got != where or not re.search(
                r"^check-boundary: \d+ violation", out, re.M):
            print(out, end="")
            print("FAIL: %s:%s alone: exit %d, reported %s, want exit 1 and %s"
                  % (rel, lns, rc, sorted(got), sorted(where)))
            bad = 1
    if not bad:
        print("PASS: each of %d planted violations alone fails the check at "
              "its file:line" % len(planted))
    return bad


def test_fixture(script):
    work = tempfile.mkdtemp(prefix="boundary-")
    try:
        tree = os.path.join(work, "tree")
        shutil.copytree(FIXTURE, tree)
        want = marked(tree)
        if not want:
            print("FAIL: fixture has no marked violations")
            return 1
        rc, out = check(script, tree)
        print(out, end="")
        got = reported(out)
        bad = 0
        if rc != 1:
            print("FAIL: exit %d on the planted violations, want 1" % rc)
            bad = 1
        for miss in sorted(want - got):
            print("FAIL: missed %s" % miss)
            bad = 1
        for extra in sorted(got - want):
            print("FAIL: false alarm %s" % extra)
            bad = 1
        named = marked_rules(tree)
        rules = reported_rules(out)
        for where in sorted(named):
            if rules.get(where, set()) != named[where]:
                print("FAIL: %s reported as %s, want %s" % (
                    where, sorted(rules.get(where, set())),
                    sorted(named[where])))
                bad = 1
        # Remove the violating lines: what is left (legitimate kernel code,
        # comments and strings about PTEs, allowed dirs) must pass.
        for dirpath, _, files in os.walk(tree):
            for f in files:
                path = os.path.join(dirpath, f)
                with open(path, encoding="utf-8") as fh:
                    lines = fh.readlines()
                with open(path, "w", encoding="utf-8") as fh:
                    fh.writelines(l for l in lines if MARK not in l)
        rc2, out2 = check(script, tree)
        if rc2 != 0:
            print(out2, end="")
            print("FAIL: exit %d on the fixture without violations" % rc2)
            bad = 1
        if not bad:
            print("PASS: %d planted violations reported exactly (%d under "
                  "their named rules); clean copy passes" % (len(want),
                                                            len(named)))
        return test_each(script, tree, work, want) or bad
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv):
    if len(argv) == 4 and argv[2] == "tree":
        rc, out = check(argv[1], argv[3])
        print(out, end="")
        return 0 if rc == 0 else 1
    if len(argv) == 3 and argv[2] == "fixture":
        return test_fixture(argv[1])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
