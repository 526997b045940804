/* Traps taken in the kernel, as the arch decoded them (kernel/trapentry.h):
 * interrupts go to their handlers (a device's interrupt becomes a message
 * to its driver, kernel/mk/irq.c); the only exception expected is a fault
 * inside a user copy (kernel/mk/uaccess.c). The arch reports any other
 * with panic_trap. */
#include "trapentry.h"
#include "arch.h"
#include "timer.h"
#include "smp.h"
#include "kernel.h"
#include "irqchip.h"

/* kernel/mk/uaccess.c: a fault inside a user copy is resolved or turned
 * into -E_FAULT for the copy instead of a panic. */
int uaccess_fixup(struct trap_frame *tf, uint64_t addr, unsigned kind, int page_fault);

void ktrap_interrupt(enum trap_irq irq, int irqs_were_on)
{
	switch (irq) {
	case TRAP_IRQ_TIMER:
		timer_interrupt(irqs_were_on);
		break;
	case TRAP_IRQ_IPI:
		ipi_interrupt();
		break;
	case TRAP_IRQ_EXTERNAL:
		irq_external();
		break;
	}
}

int ktrap_fault(struct trap_frame *tf, uint64_t addr, unsigned kind, int page_fault)
{
	return uaccess_fixup(tf, addr, kind, page_fault);
}

void trap_init_hart(void)
{
	arch_trap_init_hart();
}
