#!/usr/bin/env python3
"""Lines of code of the CortenMM core, its protocols, every registered
paging table and the host tests: non-blank lines that are not only comment
(C /* */ and //)."""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

GROUPS = [
    ("core (mm/core without protocols)", ["mm/core/as.c", "mm/core/cursor.c", "mm/core/frames.c",
                                         "mm/core/lock.c", "mm/core/ops.c", "mm/core/util.c",
                                         "mm/core/internal.h"]),
    ("core: well-formedness checker", ["mm/core/wf.c"]),
    ("public headers (mm/include/cortenmm)", sorted(str(p.relative_to(ROOT)) for p in (ROOT / "mm/include/cortenmm").glob("*.h"))),
    ("protocol adv", ["mm/core/proto_adv.c"]),
    ("protocol rw", ["mm/core/proto_rw.c"]),
    ("host tests (tests/host/*.c *.h)", sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests/host").glob("*.[ch]"))),
]


def table_groups():
    """One group per registered paging table folder: an arch-*/ folder whose
    meson.build adds names to pt_names; its C files and headers."""
    groups = []
    for build in sorted(ROOT.glob("arch-*/**/meson.build")):
        names = []
        for m in re.finditer(r"pt_names\s*\+=\s*\[([^\]]*)\]", build.read_text()):
            names += re.findall(r"'([^']+)'", m.group(1))
        if names:
            folder = build.parent
            files = sorted(str(p.relative_to(ROOT)) for p in folder.glob("*.[ch]"))
            groups.append(("table %s (%s)" % (folder.relative_to(ROOT), ", ".join(names)),
                           files))
    return groups


def sloc(text):
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    return sum(1 for line in text.splitlines() if line.strip())


def main():
    for name, files in GROUPS[:-1] + table_groups() + GROUPS[-1:]:
        n = sum(sloc((ROOT / f).read_text()) for f in files)
        print(f"{n:6d}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
