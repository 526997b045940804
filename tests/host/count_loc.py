#!/usr/bin/env python3
"""Lines of code of the CortenMM core, its protocols and arch tables:
non-blank lines that are not only comment (C /* */ and //)."""
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
    ("arch: RISC-V Sv39 + Sv48", ["arch-riscv/pt/sv.c"]),
    ("arch: x86-64", ["arch-x86/x86_64.c"]),
    ("host tests (tests/host/*.c *.h)", sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests/host").glob("*.[ch]"))),
]


def sloc(text):
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    return sum(1 for line in text.splitlines() if line.strip())


def main():
    for name, files in GROUPS:
        n = sum(sloc((ROOT / f).read_text()) for f in files)
        print(f"{n:6d}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
