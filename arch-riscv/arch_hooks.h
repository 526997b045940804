/* RISC-V implementation of the kernel's machine hooks (kernel/arch.h
 * gives each contract; include that, not this). CSRs and privileged
 * instructions inline here; firmware hooks are thin wrappers over SBI
 * (sbi/sbi.h), the remote fences are in sbi/remote_fence.c. */
#ifndef ARCH_RISCV_ARCH_HOOKS_H
#define ARCH_RISCV_ARCH_HOOKS_H

#include <stdint.h>
#include <stddef.h>
#include "riscv.h"
#include "trap.h"
#include "uregs.h"
#include "usatp.h"
#include "sbi.h"

/* The per-hart pointer lives in tp. */
static inline void arch_cpu_set(void *c)
{
	__asm__ volatile("mv tp, %0" :: "r"(c) : "memory");
}

static inline void *arch_cpu_get(void)
{
	/* tp itself, named as the output of an empty asm: loads go straight
	 * through tp (no copy to another register), and the volatile asm is
	 * read again after every call (a thread may resume on another hart). */
	register void *c __asm__("tp");
	__asm__ volatile("" : "=r"(c));
	return c;
}

/* sstatus.SIE is the hart's interrupt enable; irq_save returns its old
 * value. */
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

static inline void cpu_relax(void) { __asm__ volatile("nop; nop; nop; nop" ::: "memory"); }
static inline void arch_wait_for_interrupt(void) { __asm__ volatile("wfi" ::: "memory"); }
/* wfi returns on a pending interrupt even with SIE off; enabling then
 * takes it. */
static inline void arch_idle_sleep(void)
{
	arch_wait_for_interrupt();
	irq_enable();
}
static inline void arch_irqs_mask_all(void) { csr_write(sie, 0); }

/* Kernel traps go to trap_vector (trapvec.S). sscratch starts at 0;
 * uentry.S uses it only while user code runs (in the kernel it keeps the
 * user sp of the last entry, which nothing reads). */
static inline void arch_trap_init_hart(void)
{
	csr_write(stvec, (unsigned long)(uintptr_t)trap_vector);
	csr_write(sscratch, 0);
}

/* sret to U-mode (SPP 0) with SIE set from SPIE, SUM off, FPU off
 * (FS = 0: user code has no floating point). */
static inline void arch_trap_frame_to_user(struct trap_frame *tf)
{
	uint64_t s = csr_read(sstatus);
	s &= ~(SSTATUS_SPP | SSTATUS_SIE | SSTATUS_SUM | (3UL << 13));
	s |= SSTATUS_SPIE;
	tf->sstatus = s;
}

static inline int arch_trap_irqs_were_on(const struct trap_frame *tf)
{
	return (tf->sstatus & SSTATUS_SPIE) != 0;
}

/* switch_context loads ra and sp: its return lands in thread_trampoline
 * (uentry.S) on that stack. */
static inline void arch_kctx_init(struct kctx *c, void *stack)
{
	c->ra = (uint64_t)(uintptr_t)thread_trampoline;
	c->sp = (uint64_t)(uintptr_t)stack;
}

static inline uint64_t arch_current_pc(void)
{
	uint64_t pc;
	__asm__ volatile("auipc %0, 0" : "=r"(pc));
	return pc;
}

static inline uint64_t arch_frame_pointer(void)
{
	uint64_t fp;
	__asm__ volatile("mv %0, s0" : "=r"(fp));
	return fp;
}

/* GCC's RISC-V frame: ra at fp-8, the caller's fp at fp-16. */
static inline void arch_frame_step(uint64_t fp, uint64_t *ra, uint64_t *prev)
{
	*ra = ((const uint64_t *)(uintptr_t)fp)[-1];
	*prev = ((const uint64_t *)(uintptr_t)fp)[-2];
}

static inline uint64_t arch_time_now(void)
{
	uint64_t t;
	__asm__ volatile("rdtime %0" : "=r"(t));
	return t;
}

/* direct: Sstc's stimecmp, written by number (older assemblers do not
 * know the name); else SBI TIME. */
static inline long arch_timer_set(uint64_t when, int direct)
{
	if (direct) {
		__asm__ volatile("csrw 0x14d, %0" :: "r"(when) : "memory");
		return 0;
	}
	return sbi_set_timer(when).error;
}

static inline void arch_timer_irq_on(void)  { csr_set(sie, SIE_STIE); }
static inline void arch_timer_irq_off(void) { csr_clear(sie, SIE_STIE); }

static inline long arch_ipi_send(uint32_t hartid)
{
	return sbi_send_ipi(1, hartid).error;
}

static inline void arch_ipi_clear(void) { csr_clear(sip, SIP_SSIP); }
static inline void arch_ipi_irq_on(void) { csr_set(sie, SIE_SSIE); }

static inline void arch_as_switch(uint64_t token) { csr_write(satp, token); }
static inline uint64_t arch_as_current(void) { return csr_read(satp); }

/* satp keeps only the ASID bits the hart implements: write all ones,
 * read back, restore. */
static inline int arch_asid_bits_probe(void)
{
	uint64_t old = csr_read(satp);
	csr_write(satp, old | (0xffffUL << SATP_ASID_SHIFT));
	uint64_t got = (csr_read(satp) >> SATP_ASID_SHIFT) & 0xffff;
	csr_write(satp, old);
	__asm__ volatile("sfence.vma zero, zero" ::: "memory");
	int bits = 0;
	while (got & 1) {
		bits++;
		got >>= 1;
	}
	return bits;
}

/* Global entries included. */
static inline void arch_tlb_flush_all(void)
{
	__asm__ volatile("sfence.vma zero, zero" ::: "memory");
}

static inline void arch_tlb_flush_page(uint64_t va)
{
	__asm__ volatile("sfence.vma %0, zero" :: "r"(va) : "memory");
}

static inline void arch_tlb_flush_asid(unsigned long asid)
{
	__asm__ volatile("sfence.vma zero, %0" :: "r"(asid) : "memory");
}

static inline void arch_tlb_flush_page_asid(uint64_t va, unsigned long asid)
{
	__asm__ volatile("sfence.vma %0, %1" :: "r"(va), "r"(asid) : "memory");
}

static inline void arch_icache_sync(void) { __asm__ volatile("fence.i" ::: "memory"); }

static inline void arch_uaccess_begin(void) { csr_set(sstatus, SSTATUS_SUM); }
static inline void arch_uaccess_end(void)   { csr_clear(sstatus, SSTATUS_SUM); }

/* scounteren bits CY, TM, IR. */
static inline void arch_user_counters_on(void) { csr_write(scounteren, 7); }

/* OpenSBI sits at the start of RAM and reserves itself in the DTB. */
#define ARCH_FIRMWARE_IN_RAM 1

#define ARCH_ELF_MACHINE 243     /* EM_RISCV */

#define ARCH_IPC_FAST_IN_ENTRY 1  /* uentry.S user_vector */

static inline long arch_firmware_init(void) { return sbi_init(); }

static inline long arch_console_write(const char *buf, size_t len)
{
	return sbi_console_write(buf, len);
}

static inline int arch_console_getc(void) { return sbi_console_getc(); }

static inline long arch_hart_start(uint32_t hartid, uint64_t entry_pa, unsigned long opaque)
{
	return sbi_hart_start(hartid, entry_pa, opaque).error;
}

static inline long arch_hart_state(uint32_t hartid)
{
	struct sbiret r = sbi_hart_get_status(hartid);
	if (r.error)
		return r.error < 0 ? r.error : SBI_ERR_FAILED;
	switch (r.value) {
	case SBI_HSM_STARTED: return ARCH_HART_STARTED;
	case SBI_HSM_STOPPED: return ARCH_HART_STOPPED;
	case SBI_HSM_START_PENDING: return ARCH_HART_START_PENDING;
	default: return ARCH_HART_OTHER;
	}
}

static inline void arch_hart_stop(void) { (void)sbi_hart_stop(); }

static inline long arch_poweroff(int failure)
{
	return sbi_system_reset(SBI_SRST_SHUTDOWN,
				failure ? SBI_SRST_REASON_FAIL : SBI_SRST_REASON_NONE).error;
}

#endif
