/* The AArch64 paging trait table of arm64.c, and the translation-control
 * values a kernel must program for its entries to mean what the table
 * says. Declared on an incomplete type: naming the table exposes no entry
 * format. */
#ifndef ARCH_ARM64_ARM64_H
#define ARCH_ARM64_ARM64_H

struct pt_arch;

/* 4 KiB granule, 48-bit VA, 4 levels, stage 1 (EL1&0 regime). */
extern const struct pt_arch mm_arch_aarch64;

/* MAIR_EL1: the memory attributes the leaves' AttrIndx select.
 * Attr0 0xff Normal, write-back read/write-allocate (MM_MT_NORMAL);
 * Attr1 0x44 Normal, inner and outer non-cacheable (MM_MT_NC);
 * Attr2 0x04 Device-nGnRE (MM_MT_DEVICE). */
#define ARM64_MAIR_EL1 0x00000000000444ffull

/* TCR_EL1.T0SZ and T1SZ: 48-bit halves, each with a root of its own
 * (split_roots): TTBR0_EL1 = a user address space's root, TTBR1_EL1 = the
 * kernel's (mm_as_root_pa_for). */
#define ARM64_TCR_TXSZ 16

#endif
