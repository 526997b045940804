/* Suite 'mm': the Sv39/Sv48/Sv57 tables' entries, bit by bit, against the
 * RISC-V privileged spec's PTE layout (4.3-4.6, Svpbmt) written out here
 * as plain numbers, so a wrong macro in sv.c cannot hide behind itself.
 * Exit 0 iff all hold. */
#include "cortenmm/pt_arch.h"
#include "cortenmm/status.h"
#include "sv.h"

#include <inttypes.h>
#include <stdio.h>

#define GOLDEN_NAME "pte-sv"
#include "pte_golden.h"


/* V 0, R 1, W 2, X 3, U 4, G 5, A 6, D 7, RSW 9:8, PPN 53:10, reserved
 * 60:54, PBMT 62:61 (Svpbmt; reserved without it), N 63 (Svnapot). */
static void one(const struct pt_arch *a, unsigned levels, unsigned va_bits, bool pbmt)
{
	const unsigned R = MM_PROT_R, W = MM_PROT_W, X = MM_PROT_X, U = MM_PROT_U, G = MM_PROT_G;
	EXPECT(a->levels == levels && a->va_bits == va_bits, "%s: %u levels, %u bits", a->name,
	       a->levels, a->va_bits);
	uint64_t e = a->make_leaf(0x80201000ull, R | W | U, 1, PT_AD_A);
	EXPECT(e == ((0x80201ull << 10) | bit(6) | bit(4) | bit(2) | bit(1) | bit(0)),
	       "%s: user RW page %#" PRIx64, a->name, e);
	e = a->make_leaf(0x80201000ull, R | X | G, 1, PT_AD_A | PT_AD_D);
	EXPECT(e == ((0x80201ull << 10) | bit(7) | bit(6) | bit(5) | bit(3) | bit(1) | bit(0)),
	       "%s: kernel text page %#" PRIx64, a->name, e);
	/* superpages: PPN from the leaf's alignment up, the rest 0 (a
	 * misaligned superpage faults) */
	e = a->make_leaf(0x80200000ull, R | W, 2, 0);
	EXPECT(field(e, 53, 10) == 0x80200 && field(e, 18, 10) == 0 && field(e, 3, 0) == 7,
	       "%s: 2 MiB leaf %#" PRIx64, a->name, e);
	e = a->make_leaf(0xc0000000ull, R, 3, 0);
	EXPECT(field(e, 53, 10) == 0xc0000 && field(e, 27, 10) == 0 && field(e, 3, 0) == 3,
	       "%s: 1 GiB leaf %#" PRIx64, a->name, e);
	/* a table: V alone, and D, A, U reserved (0) in non-leaf entries */
	uint64_t t = a->make_table(0x81234000ull);
	EXPECT(t == ((0x81234ull << 10) | bit(0)), "%s: table entry %#" PRIx64, a->name, t);
	for (unsigned mt = 0; mt < MM_MT_COUNT; mt++) {
		bool offered = (a->mem_types >> mt) & 1;
		EXPECT(offered == (pbmt || mt == MM_MT_NORMAL), "%s: type %u offered %d", a->name, mt,
		       offered);
		if (!offered)
			continue;
		e = a->make_leaf(0x80201000ull, R | W | (mt << MM_PROT_MT_SHIFT), 1, 0);
		static const unsigned pbmt_of[MM_MT_COUNT] = { 0, 1, 2 };   /* PMA, NC, IO */
		EXPECT(field(e, 62, 61) == pbmt_of[mt], "%s: type %u has PBMT %" PRIu64, a->name, mt,
		       field(e, 62, 61));
		EXPECT(field(e, 60, 54) == 0 && !(e & bit(63)), "%s: reserved or N bits set", a->name);
	}
	/* every level may hold a leaf in Sv, but only levels the table has */
	EXPECT(a->leaf_levels && !(a->leaf_levels & ~((bit(levels + 1) - 1) & ~1ull)),
	       "%s: leaf levels %#x", a->name, a->leaf_levels);
	EXPECT(a->hw_ad && a->tlb_caches_invalid, "%s: A/D or TLB rules", a->name);
}

int main(void)
{
	one(&mm_arch_sv39, 3, 39, false);
	one(&mm_arch_sv48, 4, 48, false);
	one(&mm_arch_sv57, 5, 57, false);
	one(&mm_arch_sv39_svpbmt, 3, 39, true);
	one(&mm_arch_sv48_svpbmt, 4, 48, true);
	one(&mm_arch_sv57_svpbmt, 5, 57, true);
	return golden_report();
}
