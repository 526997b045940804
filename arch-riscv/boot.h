/* Facts entry.S leaves for C: the Sv48/Sv57 probe results and the trampoline. */
#ifndef ARCH_RISCV_BOOT_H
#define ARCH_RISCV_BOOT_H

#include <stdint.h>

/* Nonzero when satp accepted Sv48 during the probe in entry.S. */
extern uint64_t boot_satp_sv48_ok;
/* Nonzero when satp accepted Sv57 during the probe in entry.S. */
extern uint64_t boot_satp_sv57_ok;
/* Sv39 trampoline satp: the low 256 GiB 1:1 plus the kernel's gigabyte at
 * its link address. Secondary harts run on it until they load the kernel
 * page table. */
extern uint64_t boot_satp_tramp;
/* The kernel page table's token (a satp value), which a secondary hart loads as soon as it
 * runs at the link address (its struct cpu and stack are in the direct
 * map). Set by harts_init before any secondary starts. */
extern uint64_t boot_kernel_as_token;

#endif
