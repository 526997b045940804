/* Trap dispatch: interrupts go to their handlers (a device's interrupt
 * becomes a message to its driver, kernel/mk/irq.c); any exception is
 * unexpected until user space exists, and is reported by panic_trap. */
#include "trap.h"
#include "arch.h"
#include "panic.h"
#include "timer.h"
#include "smp.h"
#include "kernel.h"
#include "irqchip.h"

/* kernel/mk/uaccess.c: a fault inside a user copy is resolved or turned
 * into -E_FAULT for the copy instead of a panic. */
int uaccess_fixup(struct trap_frame *tf);

void trap_dispatch(struct trap_frame *tf)
{
	if (tf->scause & SCAUSE_INTR) {
		switch (tf->scause & ~SCAUSE_INTR) {
		case IRQ_S_TIMER:
			timer_interrupt(arch_trap_irqs_were_on(tf));
			return;
		case IRQ_S_SOFT:
			ipi_interrupt();
			return;
		case IRQ_S_EXT:
			irq_external();
			return;
		}
	} else if (uaccess_fixup(tf)) {
		return;
	}
	panic_trap(tf);
}

void trap_init_hart(void)
{
	arch_trap_init_hart();
}
