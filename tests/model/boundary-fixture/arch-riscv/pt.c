/* Allowed: an arch table builds entries and satp values. */
#define SV_V (1ull << 0)
#define SATP_MODE_SHIFT 60
unsigned long long satp_of(unsigned long long root_pa)
{
	return (8ull << SATP_MODE_SHIFT) | (root_pa >> 12) | SV_V;
}

/* Allowed: arch code owns the CSRs. */
#include "riscv.h"
static inline void set_satp(unsigned long v)
{
	__asm__ volatile("csrw satp, %0\n\tsfence.vma" :: "r"(v) : "memory");
}
