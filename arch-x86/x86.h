/* x86-64 registers, MSRs and instructions the arch folder uses (Intel
 * SDM vol. 3). Only arch-x86/ includes this. */
#ifndef ARCH_X86_X86_H
#define ARCH_X86_X86_H

#include <stdint.h>

#define X86_RFLAGS_IF   (1UL << 9)
#define X86_CR0_WP      (1UL << 16)
#define X86_CR4_PGE     (1UL << 7)
#define X86_CR4_FSGSBASE (1UL << 16)
#define X86_CR4_PCIDE   (1UL << 17)
#define X86_CR4_OSXSAVE (1UL << 18)
#define X86_EFER_LMA    (1UL << 10)
#define X86_CR3_NOFLUSH (1UL << 63)

#define MSR_APIC_BASE   0x1b
#define MSR_PAT         0x277
#define MSR_TSC_DEADLINE 0x6e0
#define MSR_EFER        0xc0000080
#define MSR_STAR        0xc0000081
#define MSR_LSTAR       0xc0000082
#define MSR_FMASK       0xc0000084
#define MSR_FS_BASE     0xc0000100
#define MSR_GS_BASE     0xc0000101
#define MSR_KERNEL_GS_BASE 0xc0000102

/* Segment selectors of the GDT (cpu_tables.c). The order kernel code,
 * kernel data, user data, user code is what syscall/sysret derive from
 * STAR. */
#define SEL_KCODE 0x08
#define SEL_KDATA 0x10
#define SEL_UDATA (0x18 | 3)
#define SEL_UCODE (0x20 | 3)
#define SEL_TSS   0x28

/* Interrupt vectors above the 32 exceptions. */
#define VEC_TIMER    0x20
#define VEC_IPI      0x21
#define VEC_SPURIOUS 0xff

static inline void outb(uint16_t port, uint8_t v)
{
	__asm__ volatile("outb %0, %1" :: "a"(v), "Nd"(port));
}

static inline uint8_t inb(uint16_t port)
{
	uint8_t v;
	__asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

static inline uint64_t rdmsr(uint32_t msr)
{
	uint32_t lo, hi;
	__asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
	return ((uint64_t)hi << 32) | lo;
}

static inline void wrmsr(uint32_t msr, uint64_t v)
{
	__asm__ volatile("wrmsr" :: "c"(msr), "a"((uint32_t)v), "d"((uint32_t)(v >> 32)) : "memory");
}

struct cpuid { uint32_t a, b, c, d; };

static inline struct cpuid cpuid(uint32_t leaf, uint32_t sub)
{
	struct cpuid r;
	__asm__ volatile("cpuid" : "=a"(r.a), "=b"(r.b), "=c"(r.c), "=d"(r.d) : "a"(leaf), "c"(sub));
	return r;
}

static inline uint64_t read_cr0(void)
{
	uint64_t v;
	__asm__ volatile("mov %%cr0, %0" : "=r"(v));
	return v;
}

/* Extended control register `reg` (XCR0: reg 0); needs CR4.OSXSAVE. */
static inline uint64_t xgetbv(uint32_t reg)
{
	uint32_t lo, hi;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(reg));
	return ((uint64_t)hi << 32) | lo;
}

static inline uint64_t read_cr2(void)
{
	uint64_t v;
	__asm__ volatile("mov %%cr2, %0" : "=r"(v));
	return v;
}

static inline uint64_t read_cr3(void)
{
	uint64_t v;
	__asm__ volatile("mov %%cr3, %0" : "=r"(v));
	return v;
}

static inline void write_cr3(uint64_t v)
{
	__asm__ volatile("mov %0, %%cr3" :: "r"(v) : "memory");
}

static inline uint64_t read_cr4(void)
{
	uint64_t v;
	__asm__ volatile("mov %%cr4, %0" : "=r"(v));
	return v;
}

static inline void write_cr4(uint64_t v)
{
	__asm__ volatile("mov %0, %%cr4" :: "r"(v) : "memory");
}

static inline uint64_t rdtsc(void)
{
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

/* What boot.c found in CPUID, for the inline hooks. */
struct x86_features {
	uint8_t pcid, invpcid, fsgsbase, tsc_deadline, smap;
};
extern struct x86_features x86_feat;

#endif
