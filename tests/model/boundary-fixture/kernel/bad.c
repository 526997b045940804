/* Planted violations: every marked line must be reported. */
#include "cortenmm/mm.h"
#include "cortenmm/pt_arch.h" /* BOUNDARY-EXPECT */
#include "../mm/core/internal.h" /* BOUNDARY-EXPECT */

typedef unsigned long pte_t; /* BOUNDARY-EXPECT */

int peek(struct mm_as *as, unsigned long *table)
{
	unsigned long e = table[3];
	if (!(e & PTE_V)) /* BOUNDARY-EXPECT */
		return 0;
	if (as->arch->is_leaf(e, 1)) /* BOUNDARY-EXPECT */
		return 1;
	unsigned long *root = (unsigned long *)mm_as_root_pa(as); /* BOUNDARY-EXPECT */
	ent_store(root, 0); /* BOUNDARY-EXPECT */
	if (e & TOY_VALID) /* BOUNDARY-EXPECT */
		return 2;
	return (int)(e & SV_D); /* BOUNDARY-EXPECT */
}

unsigned long make_token(struct mm_as *as)
{
	return (8ul << SATP_MODE_SHIFT) | (as->root_pa >> 12); /* BOUNDARY-EXPECT */
}
