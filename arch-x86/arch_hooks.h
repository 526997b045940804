/* x86-64 implementation of the kernel's machine hooks (kernel/arch.h
 * gives each contract; include that, not this). Instructions inline here;
 * the local APIC (timer, IPIs), the console and power off out of line
 * (lapic.c, console.c), as are the cross-CPU TLB hooks (remote.c). */
#ifndef ARCH_X86_ARCH_HOOKS_H
#define ARCH_X86_ARCH_HOOKS_H

#include <stdint.h>
#include <stddef.h>
#include <cortenmm/mm.h>
#include <cortenmm/pt_arch.h>
#include "x86.h"
#include "trap.h"
#include "uregs.h"

/* The out-of-line halves (lapic.c, console.c, boot.c). The local APIC
 * ones need the kernel page table (the first maps the registers) and
 * interrupts off, and act on this CPU's APIC. */
/* Arm this CPU's timer for TSC value `when` (past: at once); 0. */
long x86_timer_set(uint64_t when);
/* Unmask (on) or mask this CPU's timer interrupt; unmasking delivers an
 * armed deadline that ran out while masked. */
void x86_timer_irq(int on);
/* A fixed IPI at VEC_IPI / an NMI to the CPU with this APIC id; 0. Any
 * context but an NMI handler. */
long x86_ipi_send(uint32_t apic_id);
long x86_nmi_send(uint32_t apic_id);
/* INIT, then two start-up IPIs for the code at physical page `page`
 * (below 1 MiB), with the SDM's delays (10 ms, 200 us). */
void x86_lapic_start_ap(uint32_t apic_id, uint32_t page);
/* smpboot.c: arch_hart_start and arch_hart_state. */
long x86_hart_start(uint32_t hartid, uint64_t entry_pa, unsigned long opaque);
long x86_hart_state(uint32_t hartid);
/* Set the task priority (0 takes every vector, 0xf0 none); nothing
 * before the APIC is set up. */
void x86_lapic_tpr(uint32_t tpr);
/* The 16550: all of buf, polled; 0. A byte, or -1 when none waits. */
long x86_console_write(const char *buf, size_t len);
int x86_console_getc(void);
/* isa-debug-exit, then ACPI S5; returns -1 only if neither ended QEMU. */
long x86_poweroff(int failure);
extern unsigned x86_paging_levels;   /* 4: the one mode (paging.c) */

/* GS base points at this CPU's block (cpu_tables.c), whose first word is
 * the per-hart pointer: one load. */
static inline void arch_cpu_set(void *c) { x86_cpu_set(c); }

static inline void *arch_cpu_get(void)
{
	void *c;
	/* volatile: read again after every call (a thread may resume on
	 * another CPU). */
	__asm__ volatile("movq %%gs:0, %0" : "=r"(c));
	return c;
}

/* RFLAGS.IF is the CPU's interrupt enable; irq_save returns it. */
static inline unsigned long irq_save(void)
{
	unsigned long f;
	__asm__ volatile("pushfq; popq %0; cli" : "=r"(f) :: "memory");
	return f & X86_RFLAGS_IF;
}

/* sti takes effect after the next instruction: a cli right behind it
 * (a loop that enables, then disables at its top) would never take a
 * pending interrupt. The nop is that instruction, so an interrupt
 * pending when interrupts come on is taken here, as the generic code
 * expects (the idle loop's "take the interrupt that woke us"). */
static inline void irq_enable(void)  { __asm__ volatile("sti; nop" ::: "memory"); }

static inline void irq_restore(unsigned long flags)
{
	if (flags & X86_RFLAGS_IF)
		irq_enable();
}

static inline void irq_disable(void) { __asm__ volatile("cli" ::: "memory"); }

static inline int irq_enabled(void)
{
	unsigned long f;
	__asm__ volatile("pushfq; popq %0" : "=r"(f) :: "memory");
	return (f & X86_RFLAGS_IF) != 0;
}

static inline void cpu_relax(void) { __asm__ volatile("pause" ::: "memory"); }

/* hlt with interrupts off would sleep for good (only NMI/INIT wake it),
 * and x86 cannot wait for an interrupt without taking it: with
 * interrupts off this returns at once (a spurious wake the callers
 * allow), so the pending interrupt is taken when they are enabled. */
static inline void arch_wait_for_interrupt(void)
{
	if (irq_enabled())
		__asm__ volatile("hlt" ::: "memory");
	else
		cpu_relax();
}

/* sti's one-instruction delay makes "sti; hlt" atomic: an interrupt
 * pending before it (or raised after the last look at the queues) ends
 * the hlt, and is taken there. */
static inline void arch_idle_sleep(void)
{
	__asm__ volatile("sti; hlt" ::: "memory");
}

/* The task priority register at 15 blocks every vector. */
static inline void arch_irqs_mask_all(void) { x86_lapic_tpr(0xf0); }

static inline void arch_trap_init_hart(void) { x86_trap_init_hart(); }

/* iretq to ring 3 with interrupts on, AC clear (SMAP keeps the kernel
 * out of user pages), the user code and stack selectors. */
static inline void arch_trap_frame_to_user(struct trap_frame *tf)
{
	tf->cs = SEL_UCODE;
	tf->ss = SEL_UDATA;
	tf->rflags = X86_RFLAGS_IF | 2;   /* bit 1 always reads 1 */
}

static inline int arch_trap_irqs_were_on(const struct trap_frame *tf)
{
	return (tf->rflags & X86_RFLAGS_IF) != 0;
}

/* switch_context jumps to rip on rsp: thread_trampoline (uentry.S) on
 * that stack. */
static inline void arch_kctx_init(struct kctx *c, void *stack)
{
	c->rip = (uint64_t)(uintptr_t)thread_trampoline;
	c->rsp = (uint64_t)(uintptr_t)stack;
	c->rbp = 0;
}

static inline uint64_t arch_current_pc(void)
{
	uint64_t pc;
	__asm__ volatile("leaq 0(%%rip), %0" : "=r"(pc));
	return pc;
}

static inline uint64_t arch_frame_pointer(void)
{
	uint64_t fp;
	__asm__ volatile("movq %%rbp, %0" : "=r"(fp));
	return fp;
}

/* The SysV frame: rbp points at the caller's rbp, the return address
 * above it. */
static inline void arch_frame_step(uint64_t fp, uint64_t *ra, uint64_t *prev)
{
	*prev = ((const uint64_t *)(uintptr_t)fp)[0];
	*ra = ((const uint64_t *)(uintptr_t)fp)[1];
}

/* The TSC (timebase-frequency in the device tree is its rate, boot.c). */
static inline uint64_t arch_time_now(void) { return rdtsc(); }

/* Every CPU has its local APIC timer: direct or not is the same. */
static inline long arch_timer_set(uint64_t when, int direct)
{
	(void)direct;
	return x86_timer_set(when);
}

static inline void arch_timer_irq_on(void)  { x86_timer_irq(1); }
static inline void arch_timer_irq_off(void) { x86_timer_irq(0); }

static inline long arch_ipi_send(uint32_t hartid) { return x86_ipi_send(hartid); }

/* trap.c signals the local APIC's end of interrupt when it takes the IPI
 * vector, before the handler runs: an IPI raised after that is taken
 * again. Nothing is left to acknowledge here. */
static inline void arch_ipi_clear(void) { }

/* A fixed IPI cannot be masked by itself: accept every priority. */
static inline void arch_ipi_irq_on(void) { x86_lapic_tpr(0); }

/* The token is a CR3 value: the root table's physical address, its PCID
 * in bits 0..11 where PCIDs are on (x86_feat.pcid). */
static inline uint64_t arch_as_token(const struct mm_as *as, uint16_t asid)
{
	return mm_as_root_pa(as) | (x86_feat.pcid ? (asid & 0xfffu) : 0);
}

static inline uint16_t arch_as_token_asid(uint64_t token)
{
	return x86_feat.pcid ? (uint16_t)(token & 0xfff) : 0;
}

/* The paging mode is CR4's, one for every address space. */
static inline unsigned arch_as_token_levels(uint64_t token)
{
	return token ? x86_paging_levels : 0;
}

/* Bit 63 keeps the TLB entries of the PCID switched to. */
static inline void arch_as_switch(uint64_t token)
{
	write_cr3(x86_feat.pcid ? token | X86_CR3_NOFLUSH : token);
}

static inline uint64_t arch_as_current(void) { return read_cr3(); }

static inline int arch_asid_bits_probe(void) { return x86_feat.pcid ? 12 : 0; }

/* INVPCID types: 0 one address of one PCID, 1 one PCID, 2 everything
 * with globals. */
static inline void x86_invpcid(unsigned type, uint64_t pcid, uint64_t va)
{
	struct { uint64_t pcid, va; } d = { pcid, va };
	__asm__ volatile("invpcid %0, %1" :: "m"(d), "r"((uint64_t)type) : "memory");
}

/* Toggling CR4.PGE flushes every entry of every PCID, global ones too
 * (boot.c turns PGE on). */
static inline void arch_tlb_flush_all(void)
{
	uint64_t cr4 = read_cr4();
	write_cr4(cr4 ^ X86_CR4_PGE);
	write_cr4(cr4);
}

/* invlpg reaches the current PCID and global entries only: with PCIDs
 * on, a user page may be cached under others. */
static inline void arch_tlb_flush_page(uint64_t va)
{
	if (x86_feat.pcid && !(va >> 63))
		arch_tlb_flush_all();
	else
		__asm__ volatile("invlpg (%0)" :: "r"(va) : "memory");
}

/* PCIDs are on only where INVPCID exists (boot.c). */
static inline void arch_tlb_flush_asid(unsigned long asid)
{
	if (x86_feat.pcid)
		x86_invpcid(1, asid, 0);
	else
		arch_tlb_flush_all();
}

static inline void arch_tlb_flush_page_asid(uint64_t va, unsigned long asid)
{
	if (x86_feat.pcid)
		x86_invpcid(0, asid, va);
	else
		__asm__ volatile("invlpg (%0)" :: "r"(va) : "memory");
}

/* Instruction fetch snoops stores on x86, and the return to user mode
 * (iretq) serialises: only the compiler must keep the stores before. */
static inline void arch_icache_sync(void) { __asm__ volatile("" ::: "memory"); }

/* SMAP (where the CPU has it, boot.c): RFLAGS.AC opens user pages. */
static inline void arch_uaccess_begin(void)
{
	if (x86_feat.smap)
		__asm__ volatile("stac" ::: "memory");
}

static inline void arch_uaccess_end(void)
{
	if (x86_feat.smap)
		__asm__ volatile("clac" ::: "memory");
}

/* rdtsc is allowed in user mode while CR4.TSD is clear (boot.c leaves
 * it clear); rdpmc needs CR4.PCE. */
static inline void arch_user_counters_on(void)
{
	write_cr4(read_cr4() | (1UL << 8));
}

/* The BIOS's memory is outside the RAM ranges of the PVH memory map. */
#define ARCH_FIRMWARE_IN_RAM 0

#define ARCH_ELF_MACHINE 62      /* EM_X86_64 */

#define ARCH_IPC_FAST_IN_ENTRY 0  /* utrap_syscall calls ipc_fast_syscall */

/* No firmware to probe: the console is the 16550 boot.c set up. */
static inline long arch_firmware_init(void) { return 0; }

static inline long arch_console_write(const char *buf, size_t len)
{
	return x86_console_write(buf, len);
}

static inline int arch_console_getc(void) { return x86_console_getc(); }

/* Other CPUs start by INIT and start-up IPIs through a real-mode page
 * (smpboot.c, ap_boot.S). Errors: the APIC id cannot be reached by the
 * xAPIC (above 254), or the start is refused (this CPU's id, an entry
 * outside the boot table's 1:1 window). */
#define X86_ERR_NOT_SUPPORTED (-2)
#define X86_ERR_INVALID       (-3)
#define X86_ERR_NOMEM         (-4)
static inline long arch_hart_start(uint32_t hartid, uint64_t entry_pa, unsigned long opaque)
{
	return x86_hart_start(hartid, entry_pa, opaque);
}

static inline long arch_hart_state(uint32_t hartid)
{
	return x86_hart_state(hartid);
}

/* Nothing to hand the CPU back to: halt with interrupts off for good. */
static inline void arch_hart_stop(void)
{
	for (;;)
		__asm__ volatile("cli; hlt" ::: "memory");
}

static inline long arch_poweroff(int failure) { return x86_poweroff(failure); }

#endif
