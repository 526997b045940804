/* RISC-V paging modes: levels <-> satp MODE <-> name <-> mm table. */
#include "paging.h"
#include "boot.h"
#include "kstring.h"
#include "riscv.h"
#include "pt/sv.h"

static const struct riscv_paging modes[] = {
	{ 3, SATP_MODE_SV39, "sv39", &mm_arch_sv39, &mm_arch_sv39_svpbmt },
	{ 4, SATP_MODE_SV48, "sv48", &mm_arch_sv48, &mm_arch_sv48_svpbmt },
	{ 5, SATP_MODE_SV57, "sv57", &mm_arch_sv57, &mm_arch_sv57_svpbmt },
};

const struct riscv_paging *riscv_paging_by_levels(int levels)
{
	for (unsigned i = 0; i < sizeof modes / sizeof modes[0]; i++)
		if (modes[i].levels == levels)
			return &modes[i];
	return 0;
}

const struct riscv_paging *riscv_paging_by_name(const char *name)
{
	for (unsigned i = 0; i < sizeof modes / sizeof modes[0]; i++)
		if (!strcmp(modes[i].name, name))
			return &modes[i];
	return 0;
}

int riscv_paging_accepted(int levels)
{
	switch (levels) {
	case 3: return 1;
	case 4: return boot_satp_sv48_ok != 0;
	case 5: return boot_satp_sv57_ok != 0;
	default: return 0;
	}
}

int riscv_paging_default(void)
{
	return riscv_paging_accepted(4) ? 4 : 3;
}

/* The hooks of kernel/arch.h over the table above. */
int arch_paging_by_name(const char *name)
{
	const struct riscv_paging *m = riscv_paging_by_name(name);
	return m ? m->levels : 0;
}

const char *arch_paging_name(int levels)
{
	const struct riscv_paging *m = riscv_paging_by_levels(levels);
	return m ? m->name : 0;
}

int arch_paging_choose(int requested)
{
	return requested && riscv_paging_accepted(requested) ? requested : riscv_paging_default();
}

/* Svpbmt's bits fault on a hart without it: its tables only when every
 * hart has it (else the PMAs alone give MMIO its device type). */
const struct pt_arch *arch_paging_table(int levels, int memtypes)
{
	const struct riscv_paging *m = riscv_paging_by_levels(levels);
	if (!m)
		return 0;
	return memtypes ? m->arch_svpbmt : m->arch;
}
