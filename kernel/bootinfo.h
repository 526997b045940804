/* Machine facts gathered from the DTB at boot, copied out of the blob so
 * they stay valid however the blob is mapped later. */
#ifndef KERNEL_BOOTINFO_H
#define KERNEL_BOOTINFO_H

#include <stdint.h>
#include <stdbool.h>
#include "memlayout.h"

#define BI_MAX_MEM   16
#define BI_MAX_RESV  32
#define BI_ARGS_LEN  512

struct bi_cpu {
	uint32_t hartid;
	bool okay;          /* status absent, "okay" or "ok" */
	bool has_mmu;       /* mmu-type present and not "riscv,none" */
	bool has_sstc;      /* riscv,isa mentions _sstc */
	char mmu_type[16];
};

struct boot_info {
	paddr_t dtb_pa;
	uint32_t dtb_size;
	uint32_t boot_cpuid;                  /* header field */

	struct phys_range mem[BI_MAX_MEM];    /* memory nodes' reg, in DTB order */
	int nmem;
	struct phys_range resv[BI_MAX_RESV];  /* /reserved-memory children's reg */
	int nresv;
	struct phys_range memrsv[BI_MAX_RESV];/* the header's memreserve block */
	int nmemrsv;

	/* cpu nodes: ncpus counts them all; the first cpus_cap of them are
	 * stored in cpus (none before harts_init gives it room, harts.h). */
	struct bi_cpu *cpus;
	int cpus_cap;
	int ncpus;
	uint64_t timebase;                    /* Hz; 0 if absent */
	bool no_svpbmt;                       /* an enabled hart's riscv,isa lacks _svpbmt */

	char bootargs[BI_ARGS_LEN];
	bool has_bootargs;

	const char *refused;                  /* why fdt_scan refused the blob, or NULL */
};

extern struct boot_info boot_info;

#endif
