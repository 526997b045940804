/* RISC-V S-mode CSR access and bits, for arch-riscv/ and sbi/ only; the
 * kernel reaches them through its hooks (kernel/arch.h, arch_hooks.h). */
#ifndef ARCH_RISCV_H
#define ARCH_RISCV_H

#include <stdint.h>

#define SSTATUS_SIE   (1UL << 1)
#define SSTATUS_SPIE  (1UL << 5)
#define SSTATUS_SPP   (1UL << 8)
#define SSTATUS_SUM   (1UL << 18)

#define SIE_SSIE      (1UL << 1)
#define SIE_STIE      (1UL << 5)
#define SIE_SEIE      (1UL << 9)
#define SIP_SSIP      (1UL << 1)

#define SCAUSE_INTR   (1UL << 63)
#define IRQ_S_SOFT    1
#define IRQ_S_TIMER   5
#define IRQ_S_EXT     9
/* scause exception codes (interrupt bit clear). */
#define EXC_INST_MISALIGNED  0
#define EXC_INST_ACCESS      1
#define EXC_ILLEGAL_INST     2
#define EXC_BREAKPOINT       3
#define EXC_LOAD_MISALIGNED  4
#define EXC_LOAD_ACCESS      5
#define EXC_STORE_MISALIGNED 6
#define EXC_STORE_ACCESS     7
#define EXC_INST_PAGE_FAULT  12
#define EXC_LOAD_PAGE_FAULT  13
#define EXC_STORE_PAGE_FAULT 15

#define SATP_MODE_SHIFT 60
#define SATP_MODE_BARE  0UL
#define SATP_MODE_SV39  8UL
#define SATP_MODE_SV48  9UL
#define SATP_MODE_SV57  10UL

#define csr_read(csr) ({ unsigned long __v; \
	__asm__ volatile("csrr %0, " #csr : "=r"(__v) :: "memory"); __v; })
#define csr_write(csr, val) ({ unsigned long __v = (unsigned long)(val); \
	__asm__ volatile("csrw " #csr ", %0" :: "rK"(__v) : "memory"); })
#define csr_set(csr, val) ({ unsigned long __v = (unsigned long)(val); \
	__asm__ volatile("csrs " #csr ", %0" :: "rK"(__v) : "memory"); })
#define csr_clear(csr, val) ({ unsigned long __v = (unsigned long)(val); \
	__asm__ volatile("csrc " #csr ", %0" :: "rK"(__v) : "memory"); })
#define csr_read_clear(csr, val) ({ unsigned long __v = (unsigned long)(val); \
	__asm__ volatile("csrrc %0, " #csr ", %1" : "=r"(__v) : "rK"(__v) : "memory"); __v; })

#endif
