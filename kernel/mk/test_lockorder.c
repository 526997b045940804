/* A planted lock-order inversion, built only into the test kernel
 * patina-lockcheck.elf (LOCK_CHECK_PLANTED): the command takes this
 * hart's run-queue lock and then its own task's CSpace lock, which ranks
 * below it (lockclass.h). The checker must panic naming both; the boot
 * test lockcheck-planted expects that line. */
#ifdef LOCK_CHECK_PLANTED
#include "mk.h"
#include "cmd.h"
#include "printk.h"

KCMD(lockorder_planted, "take a CSpace lock under a run-queue lock (the lock checker must panic)")
{
	struct thread *me = cur_thread();
	if (!me || !me->task) {
		printk("lockorder_planted: no current task\n");
		return 1;
	}
	unsigned long f = irq_save();
	struct rq *rq = this_rq();
	spin_lock(&rq->lock);
	spin_lock(&me->task->cspace_lock);
	spin_unlock(&me->task->cspace_lock);
	spin_unlock(&rq->lock);
	irq_restore(f);
	printk("lockorder_planted: the inversion went unnoticed\n");
	return 1;
}
#endif
