/* Lookups over the generated registry of paging tables (arch_registry.h). */
#include "arch_registry.h"
#include <string.h>

const struct pt_arch *mm_arch_by_name(const char *name)
{
	for (unsigned i = 0; mm_arch_registry[i]; i++)
		if (!strcmp(mm_arch_registry[i]->name, name))
			return mm_arch_registry[i];
	return NULL;
}

void mm_arch_list(FILE *f)
{
	for (unsigned i = 0; mm_arch_registry[i]; i++)
		fprintf(f, "%s\n", mm_arch_registry[i]->name);
}

const char *mm_arch_names(void)
{
	static char buf[256];
	size_t n = 0;
	buf[0] = 0;
	for (unsigned i = 0; mm_arch_registry[i]; i++) {
		const char *nm = mm_arch_registry[i]->name;
		size_t len = strlen(nm) + (i ? 1 : 0);
		if (n + len + 4 > sizeof buf) {
			memcpy(buf + n, "...", 4);
			break;
		}
		n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s", i ? "|" : "", nm);
	}
	return buf;
}

bool mm_arch_list_requested(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--list-arch")) {
			mm_arch_list(stdout);
			return true;
		}
	return false;
}
