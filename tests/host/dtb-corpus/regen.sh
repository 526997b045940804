#!/bin/bash
# Regenerate the seed DTBs of tests/host/dtbfuzz: what QEMU writes for the
# virt, spike and sifive_u machines at several hart counts and memory sizes,
# each repacked by dtc to its used size (QEMU pads its blob to 1 MiB), plus
# seeds with what firmware adds on the way to the kernel: a /reserved-memory
# node and a memreserve entry (as OpenSBI passes on), and /chosen/bootargs.
# Needs qemu-system-riscv64, dtc, fdtget and fdtput (Debian: qemu-system-misc,
# device-tree-compiler). Run from anywhere; writes next to itself.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"

# dump NAME MACHINE SMP MEM [QEMU-ARGS...]: QEMU's DTB, repacked, as NAME.dtb
dump() {
	local name=$1 machine=$2 smp=$3 mem=$4
	shift 4
	qemu-system-riscv64 -machine "$machine,dumpdtb=raw.dtb" -smp "$smp" -m "$mem" \
		-display none "$@" > /dev/null 2>&1
	# virt writes 32 random bytes as /chosen/rng-seed: fixed ones keep
	# the seeds the same from one regeneration to the next
	if fdtget raw.dtb /chosen rng-seed > /dev/null 2>&1; then
		fdtput -t x raw.dtb /chosen rng-seed 5eed0001 5eed0002 5eed0003 5eed0004 \
			5eed0005 5eed0006 5eed0007 5eed0008
	fi
	dtc -q -I dtb -O dtb -o "$here/$name.dtb" raw.dtb
	rm -f raw.dtb
}

for smp in 1 2 4 8; do
	dump "virt-smp$smp-256M" virt "$smp" 256M
	dump "spike-smp$smp-256M" spike "$smp" 256M
done
dump virt-smp4-128M virt 4 128M
dump virt-smp4-1G virt 4 1G
dump virt-smp8-3G virt 8 3G
for smp in 2 4 5; do     # sifive_u: one E51 and up to four U54 harts
	dump "sifive_u-smp$smp-256M" sifive_u "$smp" 256M
done
dump virt-numa2-512M virt 2 512M -numa node,cpus=0,mem=256M -numa node,cpus=1,mem=256M

# /chosen/bootargs: QEMU writes it only with -kernel, so give it a stub image.
head -c 64 /dev/zero > stub.bin
dump virt-smp2-256M-bootargs virt 2 256M -kernel stub.bin -append "mm=adv cmd=selftest"

# What OpenSBI passes on: its own memory in /reserved-memory (no-map) and
# a memreserve entry in the header's block.
dtc -q -I dtb -O dts -o resv.dts "$here/virt-smp4-256M.dtb"
python3 - resv.dts <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
node = """
	reserved-memory {
		#address-cells = <0x02>;
		#size-cells = <0x02>;
		ranges;

		mmode_resv1@80000000 {
			reg = <0x00 0x80000000 0x00 0x40000>;
			no-map;
		};

		mmode_resv0@80040000 {
			reg = <0x00 0x80040000 0x00 0x20000>;
			no-map;
		};
	};
"""
head = "/dts-v1/;\n"
assert s.startswith(head)
s = head + "/memreserve/ 0x8fe00000 0x10000;\n" + s[len(head):]
i = s.rindex("};")            # the root node's end: subnodes follow properties
s = s[:i] + node + s[i:]
open(p, "w").write(s)
PY
dtc -q -I dts -O dtb -o "$here/virt-smp4-256M-resv.dtb" resv.dts
ls -l "$here"/*.dtb
