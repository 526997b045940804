/* Allowed: the core touches entries. */
#include "internal.h"
#include "cortenmm/pt_arch.h"
#define PTE_V 1ul
unsigned long first(unsigned long *t) { return ent_load(t) & PTE_V; }
