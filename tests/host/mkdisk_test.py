#!/usr/bin/env python3
"""mkdisk_test: scripts/mkdisk's refusals and one image it makes.

Usage: mkdisk_test.py MKDISK EXT2CHECK

Refusals: no arguments, a missing folder, a file instead of a folder, an
unknown option and a malformed size each exit 2 with the usage line and
leave no image; a size too small for the folder exits 1 and leaves no
image. Then an image of a small folder is made at the default size
(8 MiB), said so on one line, and EXT2CHECK finds the folder in it."""

import os
import subprocess
import sys
import tempfile


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def main():
    mkdisk, check = sys.argv[1], sys.argv[2]
    failed = []
    with tempfile.TemporaryDirectory(prefix="mkdisk.") as tmp:
        img = os.path.join(tmp, "out.img")
        tree = os.path.join(tmp, "tree")
        os.makedirs(os.path.join(tree, "sub"))
        with open(os.path.join(tree, "sub", "f.bin"), "wb") as f:
            f.write(bytes(range(256)) * 4000)
        refusals = {
            "no arguments": [],
            "missing folder": [img, os.path.join(tmp, "nope")],
            "a file, not a folder": [img, os.path.join(tree, "sub", "f.bin")],
            "unknown option": [img, tree, "--fast"],
            "malformed size": [img, tree, "--size", "12Q"],
            "bad block size": [img, tree, "--block-size", "512"],
        }
        for what, args in refusals.items():
            rc, out = run([mkdisk] + args)
            if rc != 2 or "usage: mkdisk" not in out or os.path.exists(img):
                failed.append("%s: exit %d, %r" % (what, rc, out))
        rc, out = run([mkdisk, img, tree, "--size", "64K"])
        if rc != 1 or os.path.exists(img):
            failed.append("too small: exit %d, %r" % (rc, out))
        rc, out = run([mkdisk, img, tree])
        if rc != 0 or "mkdisk: %s: ext2, 8 MiB, 4096-byte blocks" % img not in out:
            failed.append("made: exit %d, %r" % (rc, out))
        elif os.path.getsize(img) != 8 << 20:
            failed.append("made: %d bytes" % os.path.getsize(img))
        else:
            rc, out = run([check, img, tree])
            sys.stdout.write(out)
            if rc:
                failed.append("ext2check: exit %d" % rc)
    for f in failed:
        print("mkdisk_test: FAIL " + f)
    print("mkdisk_test: %s" % ("FAILED" if failed else "ok"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
