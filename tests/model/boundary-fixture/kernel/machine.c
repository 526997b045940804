/* Planted machine-boundary violations: CSRs, privileged instructions and
 * SBI calls belong to arch-* / and sbi/; every marked line is reported. */
#include <stdint.h>
#include "sbi.h" /* BOUNDARY-EXPECT */

#include "../arch-riscv/riscv.h" /* BOUNDARY-EXPECT */
#include "arch.h"

#define my_csr_read(csr) ({ unsigned long v; \
	__asm__ volatile("csrr %0, " #csr : "=r"(v)); v; }) /* BOUNDARY-EXPECT */

unsigned long status(void)
{
	return csr_read(sstatus); /* BOUNDARY-EXPECT */
}

unsigned long status_asm(void)
{
	unsigned long s;
	asm volatile("csrr %0, sstatus" : "=r"(s)); /* BOUNDARY-EXPECT */
	return s;
}

long arm_timer(uint64_t t)
{
	return sbi_set_timer(t).error; /* BOUNDARY-EXPECT */
}

long raw_sbi(long eid)
{
	register long a7 __asm__("a7") = eid; /* BOUNDARY-EXPECT */
	register long a0 __asm__("a0"); /* BOUNDARY-EXPECT */
	__asm__ __volatile__( /* BOUNDARY-EXPECT */
		"ecall" /* BOUNDARY-EXPECT */
		: "=r"(a0) : "r"(a7) : "memory");
	return a0;
}

void flush(unsigned long va)
{
	__asm__ volatile("sfence.vma %0, zero\n\t" /* BOUNDARY-EXPECT */
			 "fence.i" :: "r"(va) : "memory"); /* BOUNDARY-EXPECT */
}

uint64_t now(void)
{
	return rdtime(); /* BOUNDARY-EXPECT */
}

void idle(void)
{
	wfi(); /* BOUNDARY-EXPECT */

	struct sbiret r = { 0, 0 }; /* BOUNDARY-EXPECT */
	(void)r;
}
