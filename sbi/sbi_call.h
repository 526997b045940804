/* The raw ecall; private to sbi/. */
#ifndef SBI_CALL_H
#define SBI_CALL_H

#include "sbi.h"

static inline struct sbiret sbi_ecall(long eid, long fid, unsigned long a0,
				      unsigned long a1, unsigned long a2,
				      unsigned long a3, unsigned long a4)
{
	register unsigned long r0 __asm__("a0") = a0;
	register unsigned long r1 __asm__("a1") = a1;
	register unsigned long r2 __asm__("a2") = a2;
	register unsigned long r3 __asm__("a3") = a3;
	register unsigned long r4 __asm__("a4") = a4;
	register unsigned long r6 __asm__("a6") = (unsigned long)fid;
	register unsigned long r7 __asm__("a7") = (unsigned long)eid;
	__asm__ volatile("ecall"
			 : "+r"(r0), "+r"(r1)
			 : "r"(r2), "r"(r3), "r"(r4), "r"(r6), "r"(r7)
			 : "memory");
	return (struct sbiret){ .error = (long)r0, .value = (long)r1 };
}

#endif
