/* The start-up page of the application processors (ap_boot.S, smpboot.c):
 * where it lies and the layout of the data block the boot CPU fills in
 * before each start. Included by assembly and C. */
#ifndef ARCH_X86_AP_BOOT_H
#define ARCH_X86_AP_BOOT_H

/* A page below 1 MiB (a SIPI's vector is its page number). Why this one
 * is never a free frame: the device tree lists RAM from
 * X86_BOOT_LOW_LIMIT (1 MiB) up only (bootfdt.c), so the frame allocator
 * never sees the first MiB; nothing the kernel still needs lies there once
 * the generic boot runs (bootfdt.c has copied what the start info says,
 * and the ACPI tables it keeps are in RAM above 1 MiB). Above the
 * real-mode IVT and BIOS data area, below the EBDA. */
#define X86_AP_TRAMP_PA 0x8000

/* The data block's fields (byte offsets). */
#define APD_CR0     0     /* the boot CPU's CR0 (PE PG WP ...) */
#define APD_CR3     8     /* entry.S's boot PML4: below 4 GiB, PCID 0 */
#define APD_CR4     16    /* the boot CPU's CR4; PCIDE only once in long mode */
#define APD_EFER    24    /* the boot CPU's EFER, LMA left out */
#define APD_XCR0    32    /* the boot CPU's XCR0, 0 when CR4.OSXSAVE is clear */
#define APD_ENTRY   40    /* physical address to jump to (identity-mapped) */
#define APD_ARG     48    /* rdi there: the struct cpu */
#define APD_APIC    56    /* 32 bits: the APIC id expected to run it */
#define APD_ARRIVED 60    /* 32 bits: set by that CPU once it runs the page */
#define APD_SIZE    64

#ifndef __ASSEMBLER__
#include <stdint.h>

struct x86_ap_data {
	uint64_t cr0, cr3, cr4, efer, xcr0, entry, arg;
	uint32_t apic_id;
	volatile uint32_t arrived;
};

_Static_assert(__builtin_offsetof(struct x86_ap_data, cr3) == APD_CR3, "APD_CR3");
_Static_assert(__builtin_offsetof(struct x86_ap_data, xcr0) == APD_XCR0, "APD_XCR0");
_Static_assert(__builtin_offsetof(struct x86_ap_data, arg) == APD_ARG, "APD_ARG");
_Static_assert(__builtin_offsetof(struct x86_ap_data, apic_id) == APD_APIC, "APD_APIC");
_Static_assert(__builtin_offsetof(struct x86_ap_data, arrived) == APD_ARRIVED, "APD_ARRIVED");
_Static_assert(sizeof(struct x86_ap_data) == APD_SIZE, "APD_SIZE");

/* ap_boot.S: the code and data copied to the page, and the data block's
 * place among them. */
extern const char x86_ap_tramp_start[], x86_ap_tramp_data[], x86_ap_tramp_end[];
#endif

#endif
