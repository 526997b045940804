/* ... but no privileged CSR, fence or firmware call. */
#include "ulib.h"
unsigned long t0(void) { return rdtime(); }
unsigned long sneak(void)
{
	unsigned long s;
	__asm__ volatile("csrr %0, sstatus" : "=r"(s)); /* BOUNDARY-EXPECT */
	__asm__ volatile("sfence.vma"); /* BOUNDARY-EXPECT */
	return s + (unsigned long)sbi_get_spec_version().value; /* BOUNDARY-EXPECT */
}
