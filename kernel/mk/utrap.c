/* Traps from user mode: syscalls, page faults (anonymous memory resolved
 * in-kernel; anything else goes to the thread's fault endpoint if it has
 * one (fault.c), else kills the task), timer preemption, IPIs, device
 * interrupts (messages to their drivers, irq.c). */
#include "mk.h"
#include "arch.h"
#include "timer.h"
#include "smp.h"
#include "printk.h"
#include "irqchip.h"

#define CAUSE_ECALL_U 8

static const char *const trap_names[] = {
	[TRAP_READ_FAULT] = "read fault", [TRAP_WRITE_FAULT] = "write fault",
	[TRAP_EXEC_FAULT] = "exec fault", [TRAP_ILLEGAL] = "illegal instruction",
	[TRAP_MISALIGNED] = "misaligned", [TRAP_BREAKPOINT] = "breakpoint",
	[TRAP_OTHER] = "other exception",
};

/* The current thread took an exception of `kind` (TRAP_*, arch_trap_kind)
 * that nobody resolves: its task ends with EXIT_TRAP(kind). Needs:
 * mk_lock NOT held. Does not return. */
static __attribute__((noreturn)) void kill_current_task(struct uframe *uf, unsigned kind, const char *why)
{
	struct thread *th = cur_thread();
	printk("task %d: %s (%s, scause %lu, stval %lx, pc %lx): killed\n", th->task->id, why,
	       trap_names[kind], (unsigned long)uf->tf.scause, (unsigned long)uf->tf.stval,
	       (unsigned long)uf->tf.sepc);
	unsigned long f = spin_lock_irqsave(&mk_lock);
	task_exit(th->task, EXIT_TRAP(kind));
	spin_unlock_irqrestore(&mk_lock, f);
	thread_exit();
}

void user_trap(struct uframe *uf)
{
	uint64_t cause = uf->tf.scause;
	if (cause & SCAUSE_INTR) {
		switch (cause & ~SCAUSE_INTR) {
		case IRQ_S_TIMER:
			timer_interrupt(1);   /* from user: a quiescent state */
			cur_thread()->ticks++;
			sched_yield();
			break;
		case IRQ_S_SOFT:
			ipi_interrupt();
			break;
		case IRQ_S_EXT:
			/* Its message wakes the driver: at once on an idle hart;
			 * here, as soon as this thread yields, which it does now
			 * rather than at the end of its tick (a driver is usually
			 * woken on the hart that takes its interrupts, where it
			 * last ran). */
			irq_external();
			sched_yield();
			break;
		}
	} else if (cause == CAUSE_ECALL_U) {
		/* sepc already points past the ecall (user_vector). */
		irq_enable();
		syscall_dispatch(uf);
	} else {
		int page_fault;
		unsigned kind = arch_trap_kind(&uf->tf, &page_fault);
		irq_enable();
		if (!page_fault)
			kill_current_task(uf, kind, "exception");
		uint64_t status;
		int err = uvm_fault(cur_thread()->task, uf->tf.stval, kind == TRAP_WRITE_FAULT,
				    kind == TRAP_EXEC_FAULT, &status);
		if (err == -E_FAULT) {
			err = fault_to_pager(uf, kind, status);
			if (err)
				kill_current_task(uf, kind, err == -E_FAULT ? "page fault nobody handles" :
						  err == -E_DEAD ? "page fault, pager gone" :
						  "page fault refused by the pager");
		} else if (err) {
			kill_current_task(uf, kind, "out of memory in a page fault");
		}
	}
	return_to_user();
}

void return_to_user(void)
{
	irq_disable();
	struct thread *th = cur_thread();
	if (th->killed)
		thread_exit();
	struct uframe *uf = th->uf;
	arch_trap_frame_to_user(&uf->tf);
	user_return(uf);
}
