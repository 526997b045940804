/* The address-space token of RISC-V: a satp value. Composed only here,
 * in arch code: the kernel passes the address space and gets an opaque
 * value to store, compare and switch to (kernel/arch.h). */
#ifndef ARCH_RISCV_USATP_H
#define ARCH_RISCV_USATP_H

#include <stdint.h>
#include <cortenmm/mm.h>
#include <cortenmm/pt_arch.h>
#include "paging.h"
#include "riscv.h"

#define SATP_ASID_SHIFT 44

/* satp selecting `as` (in the paging mode of its table's levels, one the
 * kernel has: riscv_paging_by_levels) tagged with asid. */
static inline uint64_t arch_as_token(const struct mm_as *as, uint16_t asid)
{
	uint64_t mode = riscv_paging_by_levels((int)as->arch->levels)->satp_mode;
	return (mode << SATP_MODE_SHIFT) | ((uint64_t)asid << SATP_ASID_SHIFT) |
	       (mm_as_root_pa(as) >> 12);
}

/* The ASID field of a satp value. */
static inline uint16_t arch_as_token_asid(uint64_t token)
{
	return (uint16_t)(token >> SATP_ASID_SHIFT);
}

/* The paging levels of a token's mode (3 for Sv39 ...), 0 if it
 * translates nothing. */
static inline unsigned arch_as_token_levels(uint64_t token)
{
	uint64_t mode = token >> SATP_MODE_SHIFT;
	for (int levels = 3; levels <= 5; levels++)
		if (riscv_paging_by_levels(levels) && riscv_paging_by_levels(levels)->satp_mode == mode)
			return (unsigned)levels;
	return 0;
}

#endif
