/* Facts the x86-64 boot leaves for C (entry.S, boot.c). */
#ifndef ARCH_X86_BOOT_H
#define ARCH_X86_BOOT_H

#include <stdint.h>

struct hvm_start_info;

/* The kernel page table's token (a CR3 value), for CPUs started later.
 * Set by harts_init. */
extern uint64_t boot_kernel_as_token;

/* From entry.S, on the boot stack at the link address, the PVH start
 * info still reachable 1:1: probe the CPU, build the device tree, kmain. */
void x86_boot(const struct hvm_start_info *si) __attribute__((noreturn));

/* The TSC's frequency in Hz: CPUID leaf 0x15 (or 0x16) where the CPU
 * gives it, else measured against PIT channel 2. Boot CPU, once. */
uint64_t x86_tsc_hz(void);

#endif
