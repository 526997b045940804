/* The paging-table registry of the host programs: every table a folder
 * registered in the build (pt_names in meson.build), found by name. */
#ifndef HOST_ARCH_REGISTRY_H
#define HOST_ARCH_REGISTRY_H

#include <stdbool.h>
#include <stdio.h>
#include "cortenmm/pt_arch.h"

/* Every registered table in build order, NULL-terminated (generated from
 * arch_table.c.in). */
extern const struct pt_arch *const mm_arch_registry[];

/* The registered table whose name is `name`, NULL if none. */
const struct pt_arch *mm_arch_by_name(const char *name);

/* Write every registered name to f, one a line (the programs' --list-arch). */
void mm_arch_list(FILE *f);

/* The names joined by '|' for usage lines, e.g. "sv39|sv48|x86_64"; a
 * static buffer, truncated with "..." if it would not fit. */
const char *mm_arch_names(void);

/* If argv holds "--list-arch": list the tables on stdout and return true
 * (the caller exits 0). */
bool mm_arch_list_requested(int argc, char **argv);

#endif
