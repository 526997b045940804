/* satp for a user address space (owner: microkernel). The PPN half of a
 * satp value is composed only here, in arch code: the kernel passes the
 * address space and gets an opaque value to write. */
#ifndef ARCH_RISCV_USATP_H
#define ARCH_RISCV_USATP_H

#include <stdint.h>
#include <cortenmm/mm.h>
#include "paging.h"
#include "riscv.h"

#define SATP_ASID_SHIFT 44

/* satp selecting `as` (the paging mode with `levels` levels, one the
 * kernel has: riscv_paging_by_levels) tagged with asid. */
static inline uint64_t arch_user_satp(const struct mm_as *as, unsigned levels, uint16_t asid)
{
	uint64_t mode = riscv_paging_by_levels((int)levels)->satp_mode;
	return (mode << SATP_MODE_SHIFT) | ((uint64_t)asid << SATP_ASID_SHIFT) |
	       (mm_as_root_pa(as) >> 12);
}

/* Make satp the hart's translation root and ASID. No TLB flush: the
 * caller knows the ASID's entries here are current. */
static inline void arch_satp_write(uint64_t satp)
{
	csr_write(satp, satp);
}

/* The ASID field of a satp value. */
static inline uint16_t arch_satp_asid(uint64_t satp)
{
	return (uint16_t)(satp >> SATP_ASID_SHIFT);
}

#endif
