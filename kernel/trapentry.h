/* The trap edge: what an ISA's trap decoding (arch-<isa>/, e.g.
 * arch-riscv/trap.c) calls in the kernel once it has told what trapped.
 * Causes, cause registers and trap values stay in the arch folder; the
 * kernel hears of a system call, a page fault (address and access), an
 * interrupt (timer, IPI, external) or another exception (its ABI kind). */
#ifndef KERNEL_TRAPENTRY_H
#define KERNEL_TRAPENTRY_H

#include <stdint.h>

struct trap_frame;
struct uframe;

enum trap_irq {
	TRAP_IRQ_TIMER,            /* this hart's timer */
	TRAP_IRQ_IPI,              /* a software interrupt from another hart */
	TRAP_IRQ_EXTERNAL,         /* the interrupt controller has a line pending */
};

/* --- traps taken in the kernel (interrupts off) --- */

/* An interrupt; irqs_were_on: the interrupted code had them enabled. */
void ktrap_interrupt(enum trap_irq irq, int irqs_were_on);
/* An exception at tf's pc: kind is its TRAP_* (patina/syscall.h), addr
 * the address it faulted on for TRAP_READ_FAULT, TRAP_WRITE_FAULT and
 * TRAP_EXEC_FAULT, page_fault 1 when the translation was missing or
 * forbade the access (the memory manager may resolve it), 0 for a fault
 * of physical protection. Returns 1 when handled (tf may have been
 * edited: resume through it), 0 when nothing expected it: the arch then
 * reports it with panic_trap. */
int ktrap_fault(struct trap_frame *tf, uint64_t addr, unsigned kind, int page_fault);

/* --- traps taken in user mode (interrupts off; uf is the current
 * thread's frame). Each returns to the arch's decoding, which then
 * returns to user mode with return_to_user (kernel/mk/mk.h). --- */

/* A system call: its number and arguments are in uf (uf_get UREG_SYSNO,
 * uf_arg); the pc already points past the instruction that made it. */
void utrap_syscall(struct uframe *uf);
/* A page fault at addr, access kind TRAP_READ_FAULT, TRAP_WRITE_FAULT or
 * TRAP_EXEC_FAULT. */
void utrap_page_fault(struct uframe *uf, uint64_t addr, unsigned kind);
void utrap_interrupt(struct uframe *uf, enum trap_irq irq);
/* Any other exception: kind is its TRAP_* (faults of physical protection
 * are TRAP_*_FAULT here too), addr the arch's trap value (the address of
 * a fault), for the report. Ends the task. */
void utrap_exception(struct uframe *uf, unsigned kind, uint64_t addr);
/* Back to user mode in the current thread (its registers as uf holds
 * them), or its end if it was killed. Needs: mk_lock NOT held. */
void return_to_user(void) __attribute__((noreturn));

#endif
