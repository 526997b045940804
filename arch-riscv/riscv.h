/* RISC-V S-mode CSR access and small hardware helpers (kernel only). */
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

/* stimecmp (Sstc) by number: older assemblers do not know the name. */
static inline void csr_write_stimecmp(uint64_t v)
{
	__asm__ volatile("csrw 0x14d, %0" :: "r"(v) : "memory");
}

static inline uint64_t rdtime(void)
{
	uint64_t t;
	__asm__ volatile("rdtime %0" : "=r"(t));
	return t;
}

/* Interrupt enable state of this hart; irq_save returns the previous
 * sstatus.SIE so nested sections restore correctly. */
static inline unsigned long irq_save(void)
{
	return csr_read_clear(sstatus, SSTATUS_SIE) & SSTATUS_SIE;
}

static inline void irq_restore(unsigned long flags)
{
	if (flags & SSTATUS_SIE)
		csr_set(sstatus, SSTATUS_SIE);
}

static inline void irq_enable(void)  { csr_set(sstatus, SSTATUS_SIE); }
static inline void irq_disable(void) { csr_clear(sstatus, SSTATUS_SIE); }
static inline int irq_enabled(void)  { return (csr_read(sstatus) & SSTATUS_SIE) != 0; }

static inline void wfi(void) { __asm__ volatile("wfi" ::: "memory"); }
static inline void cpu_relax(void) { __asm__ volatile("nop; nop; nop; nop" ::: "memory"); }

/* Flush this hart's whole TLB (all ASIDs, global entries included). */
static inline void local_flush_tlb_all(void)
{
	__asm__ volatile("sfence.vma zero, zero" ::: "memory");
}

static inline unsigned long read_fp(void)
{
	unsigned long fp;
	__asm__ volatile("mv %0, s0" : "=r"(fp));
	return fp;
}

#endif
