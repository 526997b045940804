/* The kernel's hooks into the machine: the only way kernel/ (and
 * kernel/mk/) reaches CSRs, privileged instructions or the firmware.
 * This header says what each hook must do; the ISA's folder implements
 * them in "arch_hooks.h" (found on the include path: arch-riscv/ today),
 * static inline where a hook sits on the trap, syscall, IPC or switch
 * path, out of line where the firmware is called anyway.
 * scripts/check-boundary rejects CSR access, privileged instructions,
 * inline assembly and SBI calls anywhere outside the arch folders and
 * sbi/. docs/porting.md lists the hooks with what a new ISA's port
 * writes. */
#ifndef KERNEL_ARCH_H
#define KERNEL_ARCH_H

#include <stdint.h>
#include <stddef.h>

struct hartmask;
struct trap_frame;
struct kctx;
struct mm_as;
struct pt_arch;

/* --- this hart --- */

/* Make c this hart's per-hart pointer (this_cpu()). Boot and hart start
 * only, before anything calls this_cpu(). */
static inline void arch_cpu_set(void *c);
/* This hart's per-hart pointer: one register read, any context. */
static inline void *arch_cpu_get(void);

/* --- interrupts and idle --- */

/* Disable this hart's interrupts; returns the previous state for
 * irq_restore, so nested sections restore correctly. */
static inline unsigned long irq_save(void);
static inline void irq_restore(unsigned long flags);
static inline void irq_enable(void);
static inline void irq_disable(void);
/* Nonzero while this hart takes interrupts. */
static inline int irq_enabled(void);
/* Spin-wait pause: a few cycles, no side effects. */
static inline void cpu_relax(void);
/* Stop until an interrupt is pending (returns even with interrupts
 * disabled; the interrupt is then taken when they are enabled). */
static inline void arch_wait_for_interrupt(void);
/* The idle hart's sleep. Called with interrupts off, after its last look
 * at the run queues: sleeps until an interrupt is pending (one raised
 * since that look included) and returns with interrupts on, the
 * interrupt taken. The enable and the sleep are one step, so no wakeup
 * falls between them. */
static inline void arch_idle_sleep(void);
/* Mask every interrupt source of this hart (a hart about to stop). */
static inline void arch_irqs_mask_all(void);

/* --- traps --- */

/* Point this hart's traps at the kernel's trap vector. Every hart, at
 * start, before interrupts are enabled. */
static inline void arch_trap_init_hart(void);
/* Edit the saved status of tf so that returning through it enters user
 * mode with interrupts enabled and no kernel access to user memory.
 * Needs: interrupts off (the live status is its template). */
static inline void arch_trap_frame_to_user(struct trap_frame *tf);
/* Nonzero when the context that took trap tf had interrupts enabled. */
static inline int arch_trap_irqs_were_on(const struct trap_frame *tf);
/* The trap of tf in words for a report, e.g. "store page fault", and
 * the machine's own view of it (cause, address and status registers,
 * every register by its ISA name) printed on the console. Any context
 * (panic_trap). */
const char *arch_trap_name(const struct trap_frame *tf);
void arch_trap_dump(const struct trap_frame *tf);
/* The caller's program counter and frame pointer, for a backtrace. */
static inline uint64_t arch_current_pc(void);
static inline uint64_t arch_frame_pointer(void);
/* From a frame pointer (as arch_frame_pointer gives), the return address
 * and the caller's frame pointer its frame saved; fp is a checked kernel
 * stack address. */
static inline void arch_frame_step(uint64_t fp, uint64_t *ra, uint64_t *prev);

/* --- user registers and kernel contexts --- */

/* struct trap_frame (the registers a trap saved; a thread's user
 * registers are the one in its struct uframe, member tf), struct uframe
 * and struct kctx (a kernel context switch_context saves) are the arch's:
 * generic code holds pointers and names no field but uframe's tf. It
 * reads and writes registers through these, each one load or store.
 * enum ureg names the registers generic code needs, with an ISA's value
 * each: UREG_PC (where the thread resumes), UREG_SP, UREG_FP (the frame
 * pointer, for backtraces), UREG_TLS, UREG_RA, UREG_SYSNO (the system
 * call's number), UREG_RET (its result), UREG_ARG0..UREG_ARG6 (its
 * arguments; the ABI's register words of IPC too). UREG_RET may be the
 * same register as UREG_ARG0, so a result is written after the
 * arguments are read. */
#include "uregs.h"      /* the ISA's: enum ureg and the frame layouts */
static inline uint64_t uf_get(const struct trap_frame *tf, enum ureg r);
static inline void uf_set(struct trap_frame *tf, enum ureg r, uint64_t v);
/* Argument i (< UREG_NARGS) of a system call. */
static inline uint64_t uf_arg(const struct trap_frame *tf, unsigned i);
static inline void uf_set_arg(struct trap_frame *tf, unsigned i, uint64_t v);
/* Make c a context that, switched to, runs thread_trampoline on the
 * stack whose top is stack. */
static inline void arch_kctx_init(struct kctx *c, void *stack);

/* --- time and the timer --- */

/* The time counter (timebase units, from the device tree). */
static inline uint64_t arch_time_now(void);
/* Program this hart's next timer interrupt at absolute time `when`;
 * direct: through the hart's own compare register (the caller knows
 * every hart has one), else through the firmware. 0 or a firmware
 * error. */
static inline long arch_timer_set(uint64_t when, int direct);
/* Enable / disable this hart's timer interrupt. */
static inline void arch_timer_irq_on(void);
static inline void arch_timer_irq_off(void);

/* --- inter-processor interrupts --- */

/* Raise a software interrupt on the hart with this hardware id.
 * 0 or a firmware error. */
static inline long arch_ipi_send(uint32_t hartid);
/* Raise a software interrupt on every online hart whose logical index is
 * set in m except this one: one firmware call per 64-id window. 0 or the
 * first firmware error (harts before it were signalled). Any context. */
long arch_ipi_send_mask(const struct hartmask *m);
/* Acknowledge this hart's software interrupt; one raised after this
 * call is taken again. */
static inline void arch_ipi_clear(void);
/* Enable this hart's software interrupt. */
static inline void arch_ipi_irq_on(void);

/* --- address spaces and the TLB --- */

/* The token that selects address space as (its root, in the paging
 * mode of its table) tagged with asid. Opaque to the kernel, which only
 * compares, stores and switches to it. */
static inline uint64_t arch_as_token(const struct mm_as *as, uint16_t asid);
/* The tag (ASID) of a token; 0: untagged, flushed at every switch. */
static inline uint16_t arch_as_token_asid(uint64_t token);
/* The number of table levels of the paging mode a token selects, 0 when
 * it selects none (translation off). */
static inline unsigned arch_as_token_levels(uint64_t token);
/* The paging modes are the arch's: the kernel names one by its number of
 * table levels and lets the arch spell it, choose it and give the mm
 * core's table for it. Out of line: boot only. */
/* The levels of the mode called name (as paging= spells it), 0 if the
 * arch has none by that name. */
int arch_paging_by_name(const char *name);
/* The name of the mode with `levels` levels, NULL if the arch has none. */
const char *arch_paging_name(int levels);
/* The mode to run: `requested` (0: none) when this hart accepts it,
 * else the arch's default. */
int arch_paging_choose(int requested);
/* The mm core's page-table format for the mode with `levels` levels
 * (one arch_paging_choose gave), NULL if none; memtypes: every hart has
 * page-based memory types (the table may carry them). */
const struct pt_arch *arch_paging_table(int levels, int memtypes);

/* Switch this hart to the address space of a token / the one it runs
 * now. Switching does not flush: the caller flushes when tags cannot
 * tell spaces apart. */
static inline void arch_as_switch(uint64_t token);
static inline uint64_t arch_as_current(void);
/* How many address-space tag (ASID) bits this hart implements, 0 if
 * none. Probes by writing the live token, so: boot, interrupts off. */
static inline int arch_asid_bits_probe(void);

/* This hart's TLB: everything; one page in every address space; one
 * tag; one page of one tag. Return once later accesses see the tables. */
static inline void arch_tlb_flush_all(void);
static inline void arch_tlb_flush_page(uint64_t va);
static inline void arch_tlb_flush_asid(unsigned long asid);
static inline void arch_tlb_flush_page_asid(uint64_t va, unsigned long asid);

#define ARCH_NO_ASID (-1L)
/* Flush [start, start + size) (size -1: everything), of tag `asid` only
 * unless it is ARCH_NO_ASID, on every online hart whose logical index is
 * set in m except this one. Returns once every target flushed: 0, or the
 * first firmware error (harts before it were flushed). Any context. */
long arch_tlb_flush_remote(const struct hartmask *m, uint64_t start, uint64_t size,
			   long asid);

/* Make instruction fetch on this hart see earlier data stores. */
static inline void arch_icache_sync(void);
/* The same on every online hart in m except this one; 0 or the first
 * firmware error. Any context. */
long arch_icache_sync_remote(const struct hartmask *m);

/* --- user memory and user mode --- */

/* Bracket a kernel access to user memory (user pages are off limits to
 * the kernel outside it). Never nested, never across a sleep. */
static inline void arch_uaccess_begin(void);
static inline void arch_uaccess_end(void);
/* Let user mode read the cycle, time and instruction counters. Every
 * hart, once. */
static inline void arch_user_counters_on(void);

/* --- firmware: console, harts, power --- */

/* Probe the firmware. 0, or its error (then only the early console
 * works). Boot hart, once, before any other firmware hook. */
static inline long arch_firmware_init(void);
/* Write all of buf (a kernel address) to the console; 0 or the first
 * firmware error. Callers serialise. */
static inline long arch_console_write(const char *buf, size_t len);
/* A byte from the console, or -1 if none is waiting. */
static inline int arch_console_getc(void);

/* ARCH_FIRMWARE_IN_RAM (a constant, 0 or 1): whether the firmware that
 * stays resident lives in RAM the device tree lists as memory (and must
 * therefore be reserved there). */

/* ARCH_ELF_MACHINE: the ELF e_machine of this ISA's user programs (the
 * loader refuses any other). */

/* ARCH_IPC_FAST_IN_ENTRY (0 or 1): 1 when the arch's system-call entry
 * calls the IPC fast path itself (ipc_fast_call / ipc_fast_reply_recv,
 * with its own hand-over: RISC-V's uentry.S); 0 when the generic
 * system-call entry calls it (ipc_fast_syscall) before the general
 * dispatch. */

enum arch_hart_state {
	ARCH_HART_STARTED,
	ARCH_HART_STOPPED,
	ARCH_HART_START_PENDING,
	ARCH_HART_OTHER,           /* stopping, suspended, ... */
};
/* Start hart `hartid` at physical address entry_pa (its boot code gets
 * hartid and opaque). 0 or a (negative) firmware error. */
static inline long arch_hart_start(uint32_t hartid, uint64_t entry_pa, unsigned long opaque);
/* enum arch_hart_state of hart `hartid`, or a negative firmware error. */
static inline long arch_hart_state(uint32_t hartid);
/* Stop this hart for good. Returns only if the firmware refused. */
static inline void arch_hart_stop(void);
/* Power the machine off, reporting failure or success to whoever runs
 * it. Returns only if that failed, with the firmware's error. */
static inline long arch_poweroff(int failure);

#include "arch_hooks.h"

#endif
