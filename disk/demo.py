#!/usr/bin/env python3
"""demo.py: the demo disk image the kernel suite boots with.

Usage: demo.py MKDISK TREE IMAGE EXPECT

Writes a folder TREE (data/big.bin: 6 MiB and 1234 bytes from a seeded
generator, the same on every host; hello.txt; docs/nested/notes.txt),
builds IMAGE of it with MKDISK (scripts/mkdisk, 1 KiB blocks: big.bin
needs double indirect blocks) and writes EXPECT, the line
`fsmap /data/big.bin` must print, with the host's size and CRC-32."""

import hashlib
import os
import shutil
import subprocess
import sys
import zlib

BIG_SIZE = 6 * 1024 * 1024 + 1234


def main():
    if len(sys.argv) != 5:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    mkdisk, tree, image, expect = sys.argv[1:]
    shutil.rmtree(tree, ignore_errors=True)
    os.makedirs(os.path.join(tree, "data"))
    os.makedirs(os.path.join(tree, "docs", "nested"))
    big = hashlib.shake_256(b"patina demo disk").digest(BIG_SIZE)
    with open(os.path.join(tree, "data", "big.bin"), "wb") as f:
        f.write(big)
    with open(os.path.join(tree, "hello.txt"), "w") as f:
        f.write("Hello from the demo disk.\n")
    with open(os.path.join(tree, "docs", "nested", "notes.txt"), "w") as f:
        f.write("A file two folders down.\n" * 10)
    r = subprocess.run([sys.executable, mkdisk, image, tree, "--size", "16M", "--block-size", "1024"])
    if r.returncode:
        return r.returncode
    with open(expect, "w") as f:
        f.write("fsmap: /data/big.bin: %d bytes, crc32 %08x\n" % (len(big), zlib.crc32(big)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
