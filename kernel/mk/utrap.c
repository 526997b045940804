/* Traps from user mode: syscalls, page faults (anonymous memory resolved
 * in-kernel; anything else goes to the thread's fault endpoint if it has
 * one (fault.c), else kills the task), timer preemption, IPIs. */
#include "mk.h"
#include "riscv.h"
#include "timer.h"
#include "smp.h"
#include "printk.h"

#define CAUSE_ECALL_U 8
#define CAUSE_FETCH_PF 12
#define CAUSE_LOAD_PF 13
#define CAUSE_STORE_PF 15

static void kill_current_task(struct uframe *uf, const char *why)
{
	struct thread *th = cur_thread();
	printk("task %d: %s (scause %lu, stval %lx, pc %lx): killed\n", th->task->id, why,
	       (unsigned long)uf->tf.scause, (unsigned long)uf->tf.stval,
	       (unsigned long)uf->tf.sepc);
	unsigned long f = spin_lock_irqsave(&mk_lock);
	task_exit(th->task, 128 + (int)(uf->tf.scause & 0x7f));
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
		}
	} else if (cause == CAUSE_ECALL_U) {
		uf->tf.sepc += 4;
		irq_enable();
		syscall_dispatch(uf);
	} else if (cause == CAUSE_FETCH_PF || cause == CAUSE_LOAD_PF || cause == CAUSE_STORE_PF) {
		irq_enable();
		int err = uvm_fault(cur_thread()->task, uf->tf.stval, cause == CAUSE_STORE_PF,
				    cause == CAUSE_FETCH_PF);
		if (err == -E_FAULT) {
			err = fault_to_pager(uf);
			if (err)
				kill_current_task(uf, err == -E_FAULT ? "page fault nobody handles" :
						  err == -E_DEAD ? "page fault, pager gone" :
						  "page fault refused by the pager");
		} else if (err) {
			kill_current_task(uf, "out of memory in a page fault");
		}
	} else {
		irq_enable();
		kill_current_task(uf, "exception");
	}
	return_to_user();
}

void return_to_user(void)
{
	irq_disable();
	struct thread *th = cur_thread();
	if (th->killed)
		thread_exit();
	uint64_t s = csr_read(sstatus);
	s &= ~(SSTATUS_SPP | SSTATUS_SIE | SSTATUS_SUM | (3UL << 13));
	s |= SSTATUS_SPIE;
	th->uf->tf.sstatus = s;
	user_return(th->uf);
}
