/* x86-64 paging modes: 4-level paging (the mm core's x86_64 table) is
 * the one mode; its name is the banner's and paging='s. */
#include "arch.h"
#include "kstring.h"

extern const struct pt_arch mm_arch_x86_64;

int arch_paging_by_name(const char *name)
{
	return strcmp(name, "x86_64") ? 0 : 4;
}

const char *arch_paging_name(int levels)
{
	return levels == 4 ? "x86_64" : 0;
}

int arch_paging_choose(int requested)
{
	(void)requested;
	return 4;
}

/* Every x86-64 CPU has PAT memory types: one table either way. */
const struct pt_arch *arch_paging_table(int levels, int memtypes)
{
	(void)memtypes;
	return levels == 4 ? &mm_arch_x86_64 : 0;
}
