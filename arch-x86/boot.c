/* The x86-64 boot CPU between entry.S and kmain: turn on what the CPU
 * offers (PCIDs with INVPCID, FSGSBASE, SMEP/SMAP, global pages), find
 * the TSC's rate, describe the machine as a device tree and enter the
 * generic boot as RISC-V does: kmain(boot CPU's APIC id, DTB address). */
#include <patina/errno.h>
#include "boot.h"
#include "bootfdt.h"
#include "cpu.h"
#include "kernel.h"
#include "memlayout.h"
#include "panic.h"
#include "x86.h"

struct x86_features x86_feat;
unsigned x86_paging_levels = 4;

void x86_console_init(void);

#define CR4_SMEP (1UL << 20)
#define CR4_SMAP (1UL << 21)

/* CPUID leaves 1 and 7, and CR4 set to match. */
static void cpu_features(void)
{
	struct cpuid l0 = cpuid(0, 0);
	struct cpuid l1 = cpuid(1, 0);
	struct cpuid l7 = l0.a >= 7 ? cpuid(7, 0) : (struct cpuid){ 0, 0, 0, 0 };
	x86_feat.tsc_deadline = (l1.c >> 24) & 1;
	x86_feat.invpcid = (l7.b >> 10) & 1;
	/* PCIDs only with INVPCID: flushing another PCID needs it. */
	x86_feat.pcid = ((l1.c >> 17) & 1) && x86_feat.invpcid;
	x86_feat.fsgsbase = l7.b & 1;
	x86_feat.smap = (l7.b >> 20) & 1;
	uint64_t cr4 = read_cr4() | X86_CR4_PGE;
	if (x86_feat.pcid)
		cr4 |= X86_CR4_PCIDE;      /* CR3's PCID is 0 now, as required */
	if (x86_feat.fsgsbase)
		cr4 |= X86_CR4_FSGSBASE;
	if ((l7.b >> 7) & 1)
		cr4 |= CR4_SMEP;
	if (x86_feat.smap)
		cr4 |= CR4_SMAP;
	write_cr4(cr4);
}

#define PIT_HZ 1193182ull
#define PIT_MS 20

/* TSC ticks in PIT_MS milliseconds of PIT channel 2 (mode 0: its output,
 * read in bit 5 of port 0x61, rises when the count runs out). */
static uint64_t tsc_vs_pit(void)
{
	uint16_t count = (uint16_t)(PIT_HZ * PIT_MS / 1000);
	outb(0x61, (uint8_t)((inb(0x61) & ~0x02) | 0x01));   /* gate on, speaker off */
	outb(0x43, 0xb0);                                      /* ch 2, lo/hi, mode 0 */
	outb(0x42, (uint8_t)count);
	outb(0x42, (uint8_t)(count >> 8));
	uint64_t t0 = rdtsc();
	while (!(inb(0x61) & 0x20))
		;
	return rdtsc() - t0;
}

/* CPUID leaf 0x15 gives the TSC rate exactly (crystal Hz times a ratio)
 * where the CPU fills it in; leaf 0x16 gives only the nominal base
 * frequency, which need not be the TSC's (under QEMU's TCG the TSC is
 * the host's), so without 0x15 the TSC is measured against the PIT:
 * the best of three 20 ms windows. */
uint64_t x86_tsc_hz(void)
{
	if (cpuid(0, 0).a >= 0x15) {
		struct cpuid r = cpuid(0x15, 0);
		if (r.a && r.b && r.c)
			return (uint64_t)r.c * r.b / r.a;
	}
	uint64_t best = ~0ull;
	for (int i = 0; i < 3; i++) {
		uint64_t t = tsc_vs_pit();
		if (t < best)
			best = t;
	}
	return best * 1000 / PIT_MS;
}

/* The device tree the generic boot reads (in the image: reserved with
 * it). Room for the memory map, a few hundred CPUs and the reservations. */
static uint8_t boot_dtb[16384] __attribute__((aligned(8)));

/* The legacy 8259 PICs as the firmware left them deliver their timer at
 * vector 8 (the double fault's): mask every line. The local APIC's timer
 * and IPIs are the interrupts used. */
static void pic_mask_all(void)
{
	outb(0x21, 0xff);
	outb(0xa1, 0xff);
}

void x86_boot(const struct hvm_start_info *si)
{
	pic_mask_all();
	x86_console_init();
	/* The per-CPU pointer first: printk and panic read it. */
	x86_cpu_set(cpus);
	cpu_features();
	uint64_t hz = x86_tsc_hz();
	/* The initial APIC id (CPUID leaf 1 EBX[31:24]): the MADT must list it. */
	uint32_t apic_id = cpuid(1, 0).b >> 24;
	const char *why = NULL;
	long err = x86_bootfdt_build(si, apic_id, hz, boot_dtb, sizeof boot_dtb, &why);
	if (err)
		panic("cannot describe the machine from the PVH start info and ACPI: %s (error %ld)",
		      why ? why : "?", err);
	kmain(apic_id, virt_to_phys(boot_dtb));
	panic("kmain returned");
}
