/* The RISC-V paging modes the kernel can run (owner: kernel foundation):
 * one row per mode ties its levels, satp MODE, name and mm trait table
 * together, so boot arguments, the banner, satp values and the mm core
 * agree. Which modes this hart accepts comes from the probe in entry.S. */
#ifndef ARCH_RISCV_PAGING_H
#define ARCH_RISCV_PAGING_H

#include <stdint.h>

struct pt_arch;

struct riscv_paging {
	int levels;                  /* 3, 4, 5 */
	uint64_t satp_mode;          /* SATP_MODE_SV39 ... */
	const char *name;            /* "sv39" ...: the banner and paging= */
	const struct pt_arch *arch;  /* the mm core's table for this mode */
	const struct pt_arch *arch_svpbmt; /* the same where every hart has Svpbmt */
};

/* The mode with `levels` levels, NULL if the kernel has none. */
const struct riscv_paging *riscv_paging_by_levels(int levels);

/* The mode called `name` ("sv39", "sv48", "sv57"), NULL if none. */
const struct riscv_paging *riscv_paging_by_name(const char *name);

/* Nonzero when the boot probe saw satp accept the mode with `levels`
 * levels (Sv39 always: the trampoline runs on it). */
int riscv_paging_accepted(int levels);

/* The mode used without paging=: Sv48 when accepted, else Sv39. Sv57 is
 * only used when asked for (paging=sv57). */
int riscv_paging_default(void);

#endif
