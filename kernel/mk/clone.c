/* SYS_REGION_CLONE: copy a range of one address space into another
 * copy-on-write. Not built yet. */
#include "mk.h"

long sys_region_clone(struct task *t, long src, long dst, uint64_t lo, uint64_t hi, uint64_t ustats)
{
	(void)t, (void)src, (void)dst, (void)lo, (void)hi, (void)ustats;
	return -E_NOSYS;
}
