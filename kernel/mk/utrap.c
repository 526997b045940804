/* Traps from user mode, as the arch decoded them (kernel/trapentry.h):
 * system calls, page faults (anonymous memory resolved in-kernel;
 * anything else goes to the thread's fault endpoint if it has one
 * (fault.c), else kills the task), other exceptions (kill the task),
 * timer preemption, IPIs, device interrupts (messages to their drivers,
 * irq.c). */
#include "mk.h"
#include "arch.h"
#include "trapentry.h"
#include "timer.h"
#include "smp.h"
#include "printk.h"
#include "irqchip.h"

static const char *const trap_names[] = {
	[TRAP_READ_FAULT] = "read fault", [TRAP_WRITE_FAULT] = "write fault",
	[TRAP_EXEC_FAULT] = "exec fault", [TRAP_ILLEGAL] = "illegal instruction",
	[TRAP_MISALIGNED] = "misaligned", [TRAP_BREAKPOINT] = "breakpoint",
	[TRAP_OTHER] = "other exception",
};

/* The current thread took an exception of `kind` (TRAP_*) at addr (the
 * arch's trap value) that nobody resolves: its task ends with
 * EXIT_TRAP(kind). Needs: mk_lock NOT held. Does not return. */
static __attribute__((noreturn)) void kill_current_task(struct uframe *uf, unsigned kind,
							 uint64_t addr, const char *why)
{
	struct thread *th = cur_thread();
	printk("task %d: %s (%s at %lx, pc %lx): killed\n", th->task->id, why, trap_names[kind],
	       (unsigned long)addr, (unsigned long)uf_get(&uf->tf, UREG_PC));
	unsigned long f = spin_lock_irqsave(&mk_lock);
	task_exit(th->task, EXIT_TRAP(kind));
	spin_unlock_irqrestore(&mk_lock, f);
	thread_exit();
}

void utrap_interrupt(struct uframe *uf, enum trap_irq irq)
{
	(void)uf;
	/* As in the kernel, with interrupts on before the trap: a timer tick
	 * from user is a quiescent state. */
	ktrap_interrupt(irq, 1);
	if (irq == TRAP_IRQ_TIMER)
		cur_thread()->ticks++;
	/* A tick ends the time slice. An external interrupt's message wakes
	 * its driver: at once on an idle hart; here, as soon as this thread
	 * yields, which it does now rather than at the end of its tick (a
	 * driver is usually woken on the hart that takes its interrupts,
	 * where it last ran). */
	if (irq != TRAP_IRQ_IPI)
		sched_yield();
}

void utrap_syscall(struct uframe *uf)
{
#if !ARCH_IPC_FAST_IN_ENTRY
	ipc_fast_syscall(uf);    /* returns only when it did not take the call */
#endif
	irq_enable();
	syscall_dispatch(uf);
}

void utrap_exception(struct uframe *uf, unsigned kind, uint64_t addr)
{
	irq_enable();
	kill_current_task(uf, kind, addr, "exception");
}

void utrap_page_fault(struct uframe *uf, uint64_t addr, unsigned kind)
{
	irq_enable();
	uint64_t status;
	int err = uvm_fault(cur_thread()->task, addr, kind == TRAP_WRITE_FAULT,
			    kind == TRAP_EXEC_FAULT, &status);
	if (err == -E_FAULT) {
		err = fault_to_pager(addr, kind, status);
		if (err)
			kill_current_task(uf, kind, addr, err == -E_FAULT ? "page fault nobody handles" :
					  err == -E_DEAD ? "page fault, pager gone" :
					  "page fault refused by the pager");
	} else if (err) {
		kill_current_task(uf, kind, addr, "out of memory in a page fault");
	}
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
