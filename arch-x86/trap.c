/* x86-64 trap decoding: the one place vectors and error codes are read.
 * Kernel traps (trap_dispatch) and user traps (user_trap) from trapvec.S
 * and the syscall entry (uentry.S) become the kernel's entries
 * (kernel/trapentry.h): a system call, a page fault with its address and
 * access, an interrupt, another exception; panic reports get the
 * vector's name and the registers. */
#include "arch.h"
#include "trapentry.h"
#include "panic.h"
#include "printk.h"
#include "x86.h"
#include <patina/syscall.h>

#define VEC_SYSCALL 0x100       /* uentry.S: the syscall entry's frame */
#define VEC_PAGE_FAULT 14
#define PF_WRITE (1u << 1)
#define PF_FETCH (1u << 4)

void x86_lapic_eoi(void);
void x86_timer_fired(void);

/* The kernel's interrupt for a vector, -1 if none. The local APIC's end
 * of interrupt goes first: one raised while the handler runs is taken
 * again after it (arch_ipi_clear has nothing left to do). */
static int irq_of(uint64_t vector)
{
	switch (vector) {
	case VEC_TIMER: x86_timer_fired(); x86_lapic_eoi(); return TRAP_IRQ_TIMER;
	case VEC_IPI: x86_lapic_eoi(); return TRAP_IRQ_IPI;
	default: return -1;
	}
}

/* An exception vector as the ABI's TRAP_* kind; *page_fault for #PF,
 * the one the mm may resolve. */
static unsigned exc_kind(const struct trap_frame *tf, int *page_fault)
{
	*page_fault = tf->vector == VEC_PAGE_FAULT;
	switch (tf->vector) {
	case VEC_PAGE_FAULT:
		if (tf->error & PF_FETCH)
			return TRAP_EXEC_FAULT;
		return tf->error & PF_WRITE ? TRAP_WRITE_FAULT : TRAP_READ_FAULT;
	case 6: return TRAP_ILLEGAL;            /* #UD */
	case 17: return TRAP_MISALIGNED;        /* #AC */
	case 1: case 3: return TRAP_BREAKPOINT; /* #DB, #BP */
	default: return TRAP_OTHER;
	}
}

/* The faulting address a kernel or user handler gets: CR2 for a page
 * fault, else none. */
static uint64_t fault_addr(const struct trap_frame *tf)
{
	return tf->vector == VEC_PAGE_FAULT ? tf->cr2 : 0;
}

/* A trap taken in ring 0 (trapvec.S): interrupts off; returning resumes
 * through tf. A spurious APIC interrupt is dropped (it takes no EOI);
 * whatever else the kernel does not expect is reported. */
void trap_dispatch(struct trap_frame *tf)
{
	if (tf->vector >= 32) {
		if (tf->vector == VEC_SPURIOUS)
			return;
		int irq = irq_of(tf->vector);
		if (irq >= 0) {
			ktrap_interrupt((enum trap_irq)irq, arch_trap_irqs_were_on(tf));
			return;
		}
	} else {
		int page_fault;
		unsigned kind = exc_kind(tf, &page_fault);
		if (ktrap_fault(tf, fault_addr(tf), kind, page_fault))
			return;
	}
	panic_trap(tf);
}

/* A trap taken in ring 3: interrupts off, uf the current thread's frame.
 * An interrupt the kernel has no use for is dropped. Does not return:
 * back to user mode, or the thread ends. */
void user_trap(struct uframe *uf)
{
	uint64_t v = uf->tf.vector;
	if (v == VEC_SYSCALL) {
		utrap_syscall(uf);
	} else if (v >= 32) {
		int irq = v == VEC_SPURIOUS ? -1 : irq_of(v);
		if (irq >= 0)
			utrap_interrupt(uf, (enum trap_irq)irq);
	} else {
		int page_fault;
		unsigned kind = exc_kind(&uf->tf, &page_fault);
		if (page_fault)
			utrap_page_fault(uf, uf->tf.cr2, kind);
		else
			utrap_exception(uf, kind, fault_addr(&uf->tf));
	}
	return_to_user();
}

const char *arch_trap_name(const struct trap_frame *tf)
{
	static const char *const names[32] = {
		"divide error", "debug", "NMI", "breakpoint", "overflow",
		"bound range exceeded", "invalid opcode", "device not available",
		"double fault", "coprocessor segment overrun", "invalid TSS",
		"segment not present", "stack-segment fault", "general protection fault",
		"page fault", "reserved (15)", "x87 floating-point error",
		"alignment check", "machine check", "SIMD floating-point error",
		"virtualization exception", "control protection exception",
		"reserved (22)", "reserved (23)", "reserved (24)", "reserved (25)",
		"reserved (26)", "reserved (27)", "hypervisor injection",
		"VMM communication", "security exception", "reserved (31)",
	};
	if (tf->vector < 32)
		return names[tf->vector];
	switch (tf->vector) {
	case VEC_TIMER: return "local APIC timer interrupt";
	case VEC_IPI: return "inter-processor interrupt";
	case VEC_SYSCALL: return "system call";
	default: return "unexpected interrupt";
	}
}

void arch_trap_dump(const struct trap_frame *tf)
{
	printk("  vector %lu  error %016lx  rip %016lx  cs %04lx  rflags %016lx\n",
	       (unsigned long)tf->vector, (unsigned long)tf->error, (unsigned long)tf->rip,
	       (unsigned long)tf->cs, (unsigned long)tf->rflags);
	printk("  cr2 %016lx  cr3 %016lx  rsp %016lx  ss %04lx\n",
	       (unsigned long)tf->cr2, (unsigned long)read_cr3(), (unsigned long)tf->rsp,
	       (unsigned long)tf->ss);
	const struct { const char *n; uint64_t v; } r[] = {
		{ "rax", tf->rax }, { "rbx", tf->rbx }, { "rcx", tf->rcx }, { "rdx", tf->rdx },
		{ "rsi", tf->rsi }, { "rdi", tf->rdi }, { "rbp", tf->rbp }, { "r8", tf->r8 },
		{ "r9", tf->r9 }, { "r10", tf->r10 }, { "r11", tf->r11 }, { "r12", tf->r12 },
		{ "r13", tf->r13 }, { "r14", tf->r14 }, { "r15", tf->r15 }, { "fsbase", tf->fs_base },
	};
	for (unsigned i = 0; i < sizeof r / sizeof r[0]; i += 4) {
		char line[160];
		int n = 0;
		for (unsigned j = i; j < i + 4; j++)
			n += snprintf(line + n, sizeof line - (size_t)n, "  %-6s %016lx",
				      r[j].n, (unsigned long)r[j].v);
		printk("%s\n", line);
	}
}
