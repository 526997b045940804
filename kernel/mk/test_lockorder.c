/* Planted lock misuse, built only into the test kernel
 * patina-lockcheck.elf (LOCK_CHECK_PLANTED). Each mode must end in the
 * checker's panic; the boot tests lockcheck-planted* expect its line.
 *   (none)   this hart's run-queue lock, then its own task's CSpace lock,
 *            which ranks below it (lockclass.h): an inversion
 *   switch   the CSpace lock held into sched_yield (a context switch)
 *   release  a lock released that this hart never took */
#ifdef LOCK_CHECK_PLANTED
#include "mk.h"
#include "cmd.h"
#include "printk.h"
#include "kstring.h"

static spinlock_t stray = SPINLOCK_INIT_CLASS(&lock_class_console);

KCMD(lockorder_planted, "[switch|release] misuse a lock on purpose (the lock checker must panic)")
{
	struct thread *me = cur_thread();
	const char *mode = argc > 1 ? argv[1] : "";
	if (!me || !me->task) {
		printk("lockorder_planted: no current task\n");
		return 1;
	}
	unsigned long f = irq_save();
	spinlock_t *cs = &me->task->cspace_lock;
	if (!strcmp(mode, "switch")) {
		spin_lock(cs);
		sched_yield();
		spin_unlock(cs);
	} else if (!strcmp(mode, "release")) {
		spin_unlock(&stray);
	} else {
		struct rq *rq = this_rq();
		spin_lock(&rq->lock);
		spin_lock(cs);
		spin_unlock(cs);
		spin_unlock(&rq->lock);
	}
	irq_restore(f);
	printk("lockorder_planted: the misuse went unnoticed\n");
	return 1;
}
#endif
