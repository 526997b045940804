/* RISC-V trap decoding: the one place scause and stval are read. Kernel
 * traps (trap_vector, trapvec.S) and user traps (user_vector, uentry.S)
 * are turned into the kernel's entries (kernel/trapentry.h): a system
 * call, a page fault with its address and access, an interrupt, another
 * exception; panic reports get the cause's name and the registers. */
#include "arch.h"
#include "riscv.h"
#include "trapentry.h"
#include "panic.h"
#include "printk.h"
#include <patina/syscall.h>

#define EXC_ECALL_U 8

/* The kernel's interrupt for an scause interrupt code, -1 if none. */
static int irq_of(uint64_t code)
{
	switch (code) {
	case IRQ_S_TIMER: return TRAP_IRQ_TIMER;
	case IRQ_S_SOFT: return TRAP_IRQ_IPI;
	case IRQ_S_EXT: return TRAP_IRQ_EXTERNAL;
	default: return -1;
	}
}

/* An exception's scause code as the ABI's TRAP_* kind. *page_fault:
 * load/store/fetch page faults (12, 13, 15), the ones the mm may resolve;
 * access faults (PMP: 1, 5, 7) decode to the same kinds but never reach
 * it. AMOs fault as stores. */
static unsigned exc_kind(uint64_t code, int *page_fault)
{
	*page_fault = code == EXC_INST_PAGE_FAULT || code == EXC_LOAD_PAGE_FAULT ||
		      code == EXC_STORE_PAGE_FAULT;
	switch (code) {
	case EXC_LOAD_PAGE_FAULT: case EXC_LOAD_ACCESS: return TRAP_READ_FAULT;
	case EXC_STORE_PAGE_FAULT: case EXC_STORE_ACCESS: return TRAP_WRITE_FAULT;
	case EXC_INST_PAGE_FAULT: case EXC_INST_ACCESS: return TRAP_EXEC_FAULT;
	case EXC_ILLEGAL_INST: return TRAP_ILLEGAL;
	case EXC_INST_MISALIGNED: case EXC_LOAD_MISALIGNED: case EXC_STORE_MISALIGNED:
		return TRAP_MISALIGNED;
	case EXC_BREAKPOINT: return TRAP_BREAKPOINT;
	default: return TRAP_OTHER;
	}
}

/* A trap taken in S-mode (trapvec.S): interrupts off; returning resumes
 * through tf. Whatever the kernel does not expect is reported. */
void trap_dispatch(struct trap_frame *tf)
{
	uint64_t cause = tf->scause;
	if (cause & SCAUSE_INTR) {
		int irq = irq_of(cause & ~SCAUSE_INTR);
		if (irq >= 0) {
			ktrap_interrupt((enum trap_irq)irq, arch_trap_irqs_were_on(tf));
			return;
		}
	} else {
		int page_fault;
		unsigned kind = exc_kind(cause, &page_fault);
		if (ktrap_fault(tf, tf->stval, kind, page_fault))
			return;
	}
	panic_trap(tf);
}

/* A trap taken in U-mode (user_vector, uentry.S): interrupts off, uf the
 * current thread's frame with scause and stval stored (an ecall's sepc
 * already advanced past it). An interrupt the kernel has no use for is
 * dropped. Does not return: back to user mode, or the thread ends. */
void user_trap(struct uframe *uf)
{
	uint64_t cause = uf->tf.scause;
	if (cause & SCAUSE_INTR) {
		int irq = irq_of(cause & ~SCAUSE_INTR);
		if (irq >= 0)
			utrap_interrupt(uf, (enum trap_irq)irq);
	} else if (cause == EXC_ECALL_U) {
		utrap_syscall(uf);
	} else {
		int page_fault;
		unsigned kind = exc_kind(cause, &page_fault);
		if (page_fault)
			utrap_page_fault(uf, uf->tf.stval, kind);
		else
			utrap_exception(uf, kind, uf->tf.stval);
	}
	return_to_user();
}

static const char *exc_name(uint64_t code)
{
	static const char *const names[] = {
		"instruction address misaligned", "instruction access fault",
		"illegal instruction", "breakpoint", "load address misaligned",
		"load access fault", "store address misaligned", "store access fault",
		"environment call from U-mode", "environment call from S-mode",
		"reserved (10)", "reserved (11)", "instruction page fault",
		"load page fault", "reserved (14)", "store page fault",
	};
	return code < sizeof names / sizeof names[0] ? names[code] : "unknown exception";
}

const char *arch_trap_name(const struct trap_frame *tf)
{
	uint64_t code = tf->scause & ~SCAUSE_INTR;
	if (!(tf->scause & SCAUSE_INTR))
		return exc_name(code);
	switch (code) {
	case IRQ_S_SOFT: return "supervisor software interrupt";
	case IRQ_S_TIMER: return "supervisor timer interrupt";
	case IRQ_S_EXT: return "supervisor external interrupt";
	default: return "unknown interrupt";
	}
}

void arch_trap_dump(const struct trap_frame *tf)
{
	printk("  scause %016lx  sepc %016lx  stval %016lx  sstatus %016lx\n",
	       (unsigned long)tf->scause, (unsigned long)tf->sepc,
	       (unsigned long)tf->stval, (unsigned long)tf->sstatus);
	static const char *const rn[32] = {
		"zero", "ra", "sp", "gp", "tp", "t0", "t1", "t2", "s0", "s1", "a0",
		"a1", "a2", "a3", "a4", "a5", "a6", "a7", "s2", "s3", "s4", "s5",
		"s6", "s7", "s8", "s9", "s10", "s11", "t3", "t4", "t5", "t6",
	};
	for (int i = 1; i < 32; i += 4) {
		char line[160];
		int n = 0;
		for (int j = i; j < i + 4 && j < 32; j++)
			n += snprintf(line + n, sizeof line - (size_t)n, "  %-4s %016lx",
				      rn[j], (unsigned long)tf->regs[j]);
		printk("%s\n", line);
	}
}
