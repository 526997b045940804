/* Legitimate kernel code: talks about PTE_V and pte_t in comments only.
 * The cursor API is the way in: mm_lock, mm_map, mm_release. The machine
 * is reached through the hooks of arch.h, never csr_read(sstatus), wfi,
 * sfence.vma, ecall or sbi_set_timer( in code. */
#include "cortenmm/cursor.h"
#include "cortenmm/mm.h"
#include "arch.h"

static const char *why = "PTE_V missing, ->present( said no, satp << SATP_MODE_SHIFT";
static const char *msg = "remote sfence.vma failed; csrr sstatus; ecall; sbi_set_timer(0); wfi";
static const char tick = 'w'; /* rdtime, asm( */

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
	/* switching to an opaque, arch-built token (a satp value on
	 * RISC-V) through the hooks is fine */
	arch_as_switch(boot_as_token_value());
	arch_tlb_flush_all();
	(void)why;
	(void)msg;
	(void)tick;
	(void)KERNEL_FLAG;   /* kernel/pte-names is no table folder's: not a PTE name */
	return arch_as_token_levels(arch_as_current());
}
