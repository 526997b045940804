/* Suite 'mm': the AArch64 table's descriptors, bit by bit, against the
 * VMSAv8-64 layout (ARM ARM D8.3) written out here as plain numbers, so a
 * wrong macro in arm64.c cannot hide behind itself. Exit 0 iff all hold. */
#include "cortenmm/pt_arch.h"
#include "cortenmm/status.h"
#include "arm64.h"

#include <inttypes.h>
#include <stdio.h>

#define GOLDEN_NAME "pte-aarch64"
#include "pte_golden.h"


int main(void)
{
	const struct pt_arch *a = &mm_arch_aarch64;
	const unsigned R = MM_PROT_R, W = MM_PROT_W, X = MM_PROT_X, U = MM_PROT_U, G = MM_PROT_G;

	/* A user RW page, clean and not accessed: valid, page (bit 1), EL0
	 * access (AP[1]), read-only in hardware until dirty (AP[2]), inner
	 * shareable, no AF, not global (nG), never kernel- or user-executable. */
	uint64_t e = a->make_leaf(0x40201000ull, R | W | U, 1, 0);
	EXPECT(field(e, 1, 0) == 3, "page descriptor type %" PRIu64, field(e, 1, 0));
	EXPECT(field(e, 47, 12) == 0x40201, "page address");
	EXPECT(field(e, 4, 2) == 0, "normal memory: AttrIndx 0");
	EXPECT(field(e, 7, 6) == 3, "clean user RW page: AP %" PRIu64 ", want 3 (EL0, RO)",
	       field(e, 7, 6));
	EXPECT(field(e, 9, 8) == 3, "SH inner shareable");
	EXPECT(!(e & bit(10)), "AF set on a leaf made without A");
	EXPECT(e & bit(11), "user page is global");
	EXPECT((e & bit(53)) && (e & bit(54)), "non-executable user page: PXN, UXN");
	EXPECT(a->prot(e, 1) == (R | W | U), "prot %#x", a->prot(e, 1));
	EXPECT(!a->accessed(e, 1) && !a->dirty(e, 1), "fresh leaf A/D");

	/* The same accessed and dirty: AF, and writable in hardware (AP[2] 0). */
	e = a->make_leaf(0x40201000ull, R | W | U, 1, PT_AD_A | PT_AD_D);
	EXPECT(e & bit(10), "AF");
	EXPECT(field(e, 7, 6) == 1, "dirty user RW page: AP %" PRIu64 ", want 1 (EL0, RW)",
	       field(e, 7, 6));
	EXPECT(a->accessed(e, 1) && a->dirty(e, 1) && a->prot(e, 1) == (R | W | U), "A/D decode");

	/* Read-only stays read-only whatever the dirty state. */
	e = a->make_leaf(0x40201000ull, R | U | X, 1, PT_AD_A | PT_AD_D);
	EXPECT(field(e, 7, 6) == 3, "RO page writable");
	EXPECT((e & bit(53)) && !(e & bit(54)), "user exec page: PXN set, UXN clear");

	/* Kernel text: global, EL1 only, executable by EL1 only. */
	e = a->make_leaf(0x80000000ull, R | X | G, 1, PT_AD_A);
	EXPECT(!(e & bit(11)) && !(e & bit(6)), "kernel text: nG or AP[1] set");
	EXPECT(!(e & bit(53)) && (e & bit(54)), "kernel text: PXN clear, UXN set");
	EXPECT(a->prot(e, 1) == (R | X | G), "kernel text prot %#x", a->prot(e, 1));

	/* Blocks: bit 1 clear, address from the block alignment up. */
	e = a->make_leaf(0x40200000ull, R | W | G, 2, 0);
	EXPECT(field(e, 1, 0) == 1, "2 MiB block descriptor type");
	EXPECT(a->is_leaf(e, 2) && a->addr(e, 2) == 0x40200000ull, "2 MiB block");
	e = a->make_leaf(0x40000000ull, R | W | G, 3, 0);
	EXPECT(field(e, 1, 0) == 1 && field(e, 47, 30) == 1, "1 GiB block");
	uint64_t t = a->make_table(0x81234000ull);
	EXPECT(field(t, 1, 0) == 3 && field(t, 47, 12) == 0x81234, "table descriptor");
	EXPECT(field(t, 63, 59) == 0, "table descriptor restricts (APTable/XNTable)");
	EXPECT(!a->is_leaf(t, 2), "table taken for a block");
	/* With the 4 KiB granule, lookup level 0 (our level 4) has no block
	 * descriptor: a level-0 entry with bit 1 clear is invalid. */
	EXPECT(a->leaf_levels == (bit(1) | bit(2) | bit(3)), "leaf levels %#x", a->leaf_levels);
	/* Permission faults may stay cached (tlb_caches_invalid). */
	EXPECT(a->tlb_caches_invalid, "aarch64 claims faulting entries are never cached");

	/* Memory types: AttrIndx selects the MAIR_EL1 byte holding that type. */
	static const struct { unsigned mt; uint8_t mair; const char *what; } mts[] = {
		{ MM_MT_NORMAL, 0xff, "normal write-back" },
		{ MM_MT_NC, 0x44, "normal non-cacheable" },
		{ MM_MT_DEVICE, 0x04, "Device-nGnRE" },
	};
	for (unsigned i = 0; i < 3; i++) {
		unsigned prot = R | W | G | (mts[i].mt << MM_PROT_MT_SHIFT);
		EXPECT((a->mem_types >> mts[i].mt) & 1, "%s not offered", mts[i].what);
		e = a->make_leaf(0x10000000ull, prot, 1, PT_AD_A);
		unsigned idx = (unsigned)field(e, 4, 2);
		EXPECT(((ARM64_MAIR_EL1 >> (8 * idx)) & 0xff) == mts[i].mair,
		       "%s: AttrIndx %u selects MAIR byte %#llx", mts[i].what, idx,
		       (unsigned long long)((ARM64_MAIR_EL1 >> (8 * idx)) & 0xff));
		EXPECT(a->prot(e, 1) == prot, "%s: prot %#x, want %#x", mts[i].what, a->prot(e, 1), prot);
	}
	EXPECT(!a->hw_ad, "aarch64 without FEAT_HAFDBS claims hardware A/D");
	EXPECT(!a->present(0), "zero entry present");
	return golden_report();
}
