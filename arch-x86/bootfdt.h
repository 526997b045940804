/* The x86-64 machine described as a flattened device tree: the generic
 * kernel reads every machine fact from a DTB (kernel/fdt.h, fdt_scan), and
 * a PVH boot brings none, so the platform writes one from the PVH start
 * info and the ACPI tables.
 *
 * The DTB holds:
 *   /                 #address-cells = #size-cells = 2,
 *                     compatible = "patina,x86-64-pvh"
 *   /chosen           bootargs = the PVH command line (when there is one),
 *                     stdout-path = "/isa/serial@i3f8"
 *   /memory@<base>    device_type = "memory", reg: one node per run of RAM
 *                     (memmap type 1, overlapping and adjacent entries
 *                     merged) above the first MiB (the BIOS areas and the
 *                     AP start-up code live below it)
 *   /cpus             #address-cells = 1, #size-cells = 0,
 *                     timebase-frequency (when the caller knows it)
 *   /cpus/cpu@<apic>  device_type = "cpu", reg = APIC id,
 *                     mmu-type = "x86,4-level", status = "okay" (MADT
 *                     enabled) or "disabled" (online-capable only);
 *                     processors that are neither are left out
 *   /isa/serial@i3f8  the PC's COM1, a 16550 at I/O port 0x3f8, in the ISA
 *                     binding's I/O space (no `ranges`: not a CPU address)
 *   memreserve block  what inside that RAM must survive boot: the start
 *                     info, command line, memory map, module list and
 *                     modules, the ACPI tables (RSDP, root, every table
 *                     the root lists, the FADT's DSDT and FACS) and any
 *                     non-RAM memmap entry overlapping RAM; rounded out to
 *                     pages and merged
 *   header            boot_cpuid_phys = the BSP's APIC id */
#ifndef ARCH_X86_BOOTFDT_H
#define ARCH_X86_BOOTFDT_H

#include <stdint.h>
#include "acpi.h"
#include "pvh.h"

/* x86_bootfdt_build reads physical memory 1:1 in [0, X86_BOOT_WINDOW):
 * the boot identity map must cover it. */
#define X86_BOOT_WINDOW        (4ull << 30)

#define X86_BOOT_LOW_LIMIT     0x100000u   /* RAM below is left out */
#define X86_BOOT_MEMMAP_MAX    128         /* memmap entries read */
#define X86_BOOT_MODULES_MAX   64
#define X86_BOOT_CPUS_MAX      1024        /* processors the MADT may list */

/* Build a DTB describing this machine into buf[0..len) from the PVH start
 * info si (physical = virtual: called under the boot identity map, which
 * must cover [0, X86_BOOT_WINDOW)). bsp_apic_id is the boot processor's
 * APIC id as the caller reads it (CPUID leaf 0xb EDX, or leaf 1
 * EBX[31:24]); it goes into the header's boot_cpuid_phys and must be an
 * enabled processor of the MADT. timebase_hz goes into /cpus
 * timebase-frequency (0: left out). Not reentrant (boot, one CPU).
 * Returns 0, or -E_INVAL (bad start info magic or version, no memory map,
 * a range that wraps, more RAM runs than BI_MAX_MEM, a command line of
 * BI_ARGS_LEN bytes or more, missing or malformed ACPI tables, no enabled
 * processor or none with bsp_apic_id), or -E_NOMEM (buf too small). On
 * failure buf holds no DTB (its first 4 bytes, if len allows, are zero)
 * and, when why is not NULL, *why names the defect (a constant string). */
long x86_bootfdt_build(const struct hvm_start_info *si, uint32_t bsp_apic_id,
		       uint64_t timebase_hz, void *buf, uint32_t len, const char **why);

/* x86_bootfdt_build reading physical memory through w instead of the
 * identity window (host tests place the tables in a buffer). */
long x86_bootfdt_build_in(const struct acpi_window *w, const struct hvm_start_info *si,
			  uint32_t bsp_apic_id, uint64_t timebase_hz, void *buf, uint32_t len,
			  const char **why);

#endif
