/* Legitimate kernel code: talks about PTE_V and pte_t in comments only.
 * The cursor API is the way in: mm_lock, mm_map, mm_release. */
#include "cortenmm/cursor.h"
#include "cortenmm/mm.h"
#include "riscv.h"

static const char *why = "PTE_V missing, ->present( said no, satp << SATP_MODE_SHIFT";

int map_one(struct mm_as *as, unsigned long va, unsigned long pa)
{
	struct mm_cursor c;
	int err = mm_lock(&c, as, va, va + 4096); // a PTE_W comment
	if (err)
		return err;
	err = mm_map(&c, va, pa, 3);
	mm_release(&c);
	return err;
}

unsigned long paging_mode(void)
{
	/* reading the mode and writing an opaque, arch-built satp are fine */
	csr_write(satp, boot_satp_value());
	(void)why;
	(void)KERNEL_FLAG;   /* kernel/pte-names is no table folder's: not a PTE name */
	return csr_read(satp) >> SATP_MODE_SHIFT;
}
