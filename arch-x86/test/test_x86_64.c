/* Suite 'mm': the x86-64 table's entries, bit by bit, against the 4-level
 * paging layout (Intel SDM vol. 3, 4.5, tables 4-15 to 4-20) written out
 * here as plain numbers, so a wrong macro in x86_64.c cannot hide behind
 * itself; and a leaf of each size decoded at its own level, where the PAT
 * bit sits at bit 7 (4 KiB) or bit 12 (2 MiB, 1 GiB). Exit 0 iff all hold. */
#include "cortenmm/pt_arch.h"
#include "cortenmm/status.h"

#include <inttypes.h>
#include <stdio.h>

#define GOLDEN_NAME "pte-x86_64"
#include "pte_golden.h"

extern const struct pt_arch mm_arch_x86_64;


/* The layout of one leaf, read off the SDM: P 0, R/W 1, U/S 2, PWT 3,
 * PCD 4, A 5, D 6, PS 7 above level 1 (PAT at 4 KiB), G 8, PAT 12 above
 * level 1, XD 63. */
static void golden(const struct pt_arch *a)
{
	const unsigned R = MM_PROT_R, W = MM_PROT_W, X = MM_PROT_X, U = MM_PROT_U, G = MM_PROT_G;
	uint64_t e = a->make_leaf(0x12345000ull, R | W | U, 1, PT_AD_A);
	EXPECT(e == (0x12345000ull | bit(63) | bit(5) | bit(2) | bit(1) | bit(0)),
	       "user RW 4 KiB leaf %#" PRIx64, e);
	e = a->make_leaf(0x12345000ull, R | X | G, 1, PT_AD_A | PT_AD_D);
	EXPECT(e == (0x12345000ull | bit(8) | bit(6) | bit(5) | bit(0)),
	       "kernel text 4 KiB leaf %#" PRIx64, e);
	e = a->make_leaf(0x40200000ull, R | W | G, 2, 0);
	EXPECT(e == (0x40200000ull | bit(63) | bit(8) | bit(7) | bit(1) | bit(0)),
	       "2 MiB leaf %#" PRIx64, e);
	e = a->make_leaf(0x80000000ull, R | W | G, 3, 0);
	EXPECT(field(e, 51, 30) == 2 && field(e, 29, 12) == 0 && (e & bit(7)),
	       "1 GiB leaf %#" PRIx64, e);
	e = a->make_leaf(0x12345000ull, R | W | MM_PROT_NC, 1, 0);
	EXPECT(field(e, 4, 3) == 2 && !(e & bit(7)), "UC-: PCD alone, PAT index 2");
	e = a->make_leaf(0x40200000ull, R | W | MM_PROT_DEVICE, 2, 0);
	EXPECT(field(e, 4, 3) == 3 && !(e & bit(12)), "UC: PCD PWT, PAT index 3");
	uint64_t t = a->make_table(0x81234000ull);
	EXPECT(t == (0x81234000ull | bit(2) | bit(1) | bit(0)), "table entry %#" PRIx64, t);
	/* PS is reserved in a PML4 entry (SDM 4.5.4, table 4-15): no leaf
	 * may sit at level 4, nor above a 1 GiB page. */
	EXPECT(a->leaf_levels == (bit(1) | bit(2) | bit(3)), "leaf levels %#x", a->leaf_levels);
	EXPECT(a->levels == 4 && a->va_bits == 48, "4-level, 48-bit");
}

/* A leaf of each size decodes as made, at its own level, for every
 * memory type; the PAT bit of its size (bit 7 at 4 KiB, bit 12 above)
 * makes it no type this table knows, and the other size's position does
 * not: bit 12 of a 4 KiB leaf is address, bit 7 of a huge one is PS. */
static void sizes(const struct pt_arch *a)
{
	for (unsigned L = 1; L <= 3; L++) {
		uint64_t span = 1ull << pt_shift(a, L);
		uint64_t pa = 3 * span;    /* bit 12 set at 4 KiB */
		for (unsigned mt = 0; mt < MM_MT_COUNT; mt++) {
			unsigned prot = MM_PROT_R | MM_PROT_W | (mt << MM_PROT_MT_SHIFT);
			uint64_t e = a->make_leaf(pa, prot, L, PT_AD_A | PT_AD_D);
			EXPECT(a->present(e) && a->is_leaf(e, L) && a->addr(e, L) == pa,
			       "L%u leaf at %#" PRIx64 " reads %#" PRIx64, L, pa, a->addr(e, L));
			EXPECT(a->prot(e, L) == prot, "L%u type %u: prot %#x, want %#x", L, mt,
			       a->prot(e, L), prot);
			EXPECT(a->accessed(e, L) && a->dirty(e, L), "L%u A/D", L);
			uint64_t pat = L == 1 ? bit(7) : bit(12);
			EXPECT(mm_prot_mt(a->prot(e | pat, L)) >= MM_MT_COUNT,
			       "L%u type %u with PAT set reads as type %u", L, mt,
			       mm_prot_mt(a->prot(e | pat, L)));
		}
	}
}

int main(void)
{
	golden(&mm_arch_x86_64);
	sizes(&mm_arch_x86_64);
	return golden_report();
}
