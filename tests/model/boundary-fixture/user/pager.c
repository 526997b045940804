/* A user-space pager may not build entries either. */
#include "cortenmm/pt_arch.h" /* BOUNDARY-EXPECT */

unsigned long leaf(const struct pt_arch *a, unsigned long pa)
{
	return a->make_leaf(pa, 3, 1); /* BOUNDARY-EXPECT */
}
