/* What a PVH boot hands the kernel: the layouts of the PVH boot protocol
 * (Xen's "HVM direct boot ABI", start_info.h: version 1 of struct
 * hvm_start_info, which added the memory map), declared here from that
 * description. The loader (QEMU's PVH option ROM) passes the physical
 * address of the start info in ebx at the 32-bit entry. Every field is
 * firmware input: bootfdt.c checks each before use. */
#ifndef ARCH_X86_PVH_H
#define ARCH_X86_PVH_H

#include <stdint.h>

#define HVM_START_MAGIC      0x336ec578u

/* memmap entry types (the E820 numbering) */
#define HVM_MEMMAP_RAM       1
#define HVM_MEMMAP_RESERVED  2
#define HVM_MEMMAP_ACPI      3
#define HVM_MEMMAP_NVS       4
#define HVM_MEMMAP_UNUSABLE  5

struct hvm_start_info {
	uint32_t magic;             /* HVM_START_MAGIC */
	uint32_t version;           /* 0: no memmap fields; 1: with them */
	uint32_t flags;
	uint32_t nr_modules;        /* entries of the modlist */
	uint64_t modlist_paddr;     /* struct hvm_modlist_entry[nr_modules] */
	uint64_t cmdline_paddr;     /* NUL-terminated string, or 0 */
	uint64_t rsdp_paddr;        /* ACPI RSDP, or 0 */
	/* version 1 and later */
	uint64_t memmap_paddr;      /* struct hvm_memmap_table_entry[memmap_entries] */
	uint32_t memmap_entries;    /* 0: no memory map */
	uint32_t reserved;
};

struct hvm_modlist_entry {
	uint64_t paddr;
	uint64_t size;
	uint64_t cmdline_paddr;
	uint64_t reserved;
};

struct hvm_memmap_table_entry {
	uint64_t addr;
	uint64_t size;
	uint32_t type;              /* HVM_MEMMAP_* */
	uint32_t reserved;
};

_Static_assert(sizeof(struct hvm_start_info) == 56, "PVH start info, version 1");
_Static_assert(sizeof(struct hvm_modlist_entry) == 32, "PVH module entry");
_Static_assert(sizeof(struct hvm_memmap_table_entry) == 24, "PVH memory map entry");

#endif
