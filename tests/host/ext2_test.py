#!/usr/bin/env python3
"""ext2_test: the ext2 reader (lib/ext2) on images mke2fs makes.

Usage: ext2_test.py EXT2CHECK MKE2FS [--rounds R]

Generates a folder (nested directories, a 4.5 MiB file that needs double
indirect blocks at 1 KiB blocks, a 70 MiB sparse file that needs triple
indirect ones, an empty file, files with holes made by truncate, files of
block-boundary sizes, 255-byte names, a directory of many entries spanning
several blocks, a symbolic link), builds an ext2 image of it at 1, 2 and 4
KiB blocks (mke2fs -q -t ext2 -d DIR IMG SIZE) and runs `EXT2CHECK IMG DIR`
on each, then `EXT2CHECK --corrupt` on each. Exit 0 when every run did."""

import hashlib
import os
import subprocess
import sys
import tempfile


def data(seed, n):
    """n deterministic bytes."""
    return hashlib.shake_256(seed.encode()).digest(n)


def make_tree(top):
    def put(rel, content):
        path = os.path.join(top, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(content)
        return path

    put("readme.txt", b"A small text file.\n" * 3)
    put("empty", b"")
    put("big.bin", data("big", 4 * 1024 * 1024 + 512 * 1024 + 123))
    for n in (1, 1023, 1024, 1025, 2048, 4095, 4096, 4097, 12 * 1024, 12 * 1024 + 1, 13 * 4096):
        put("sizes/f%d" % n, data("size%d" % n, n))
    # A hole after the data, made by truncate.
    p = put("holes/tail", data("tail", 100))
    os.truncate(p, 300 * 1024)
    # Data, a hole, data: the hole in the middle of the block map.
    p = put("holes/middle", data("mid1", 5000))
    os.truncate(p, 2 * 1024 * 1024)
    with open(p, "ab") as f:
        f.write(data("mid2", 3000))
    # Past the double indirect blocks of 1 KiB blocks (64.26 MiB): its
    # last bytes sit under the triple indirect block.
    p = put("holes/sparse70m", data("sp1", 4096))
    os.truncate(p, 70 * 1024 * 1024 - 3000)
    with open(p, "ab") as f:
        f.write(data("sp2", 3000))
    put("a/b/c/d/e/deep.txt", b"five levels down\n")
    put("L" * 255, data("long", 777))
    put("a/" + "m" * 200 + ".dat", data("long2", 5000))
    for i in range(300):
        put("many/entry-%03d-%s" % (i, "n" * (i % 40)), data("many%d" % i, i * 7))
    os.makedirs(os.path.join(top, "emptydir"))
    os.symlink("readme.txt", os.path.join(top, "link"))


def main():
    if len(sys.argv) < 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    check, mke2fs = sys.argv[1], sys.argv[2]
    rounds = sys.argv[4] if len(sys.argv) > 4 and sys.argv[3] == "--rounds" else "300"
    ok = True
    with tempfile.TemporaryDirectory(prefix="ext2test.") as tmp:
        tree = os.path.join(tmp, "tree")
        os.makedirs(tree)
        make_tree(tree)
        for bs in (1024, 2048, 4096):
            img = os.path.join(tmp, "fs%d.img" % bs)
            r = subprocess.run([mke2fs, "-q", "-F", "-t", "ext2", "-b", str(bs), "-d", tree, img, "24M"],
                               capture_output=True, text=True)
            if r.returncode:
                print("ext2_test: mke2fs -b %d: %s" % (bs, r.stderr.strip()))
                ok = False
                continue
            for args in ([img, tree], ["--corrupt", img, "--seed", str(bs), "--rounds", rounds]):
                r = subprocess.run([check] + args, capture_output=True, text=True)
                sys.stdout.write(r.stdout)
                sys.stdout.write(r.stderr)
                if r.returncode:
                    print("ext2_test: %s exited %d" % (" ".join(args), r.returncode))
                    ok = False
    print("ext2_test: %s" % ("ok" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
