/* Planted lock misuse, built only into the test kernel
 * patina-lockcheck.elf (LOCK_CHECK_PLANTED). Each mode must end in the
 * checker's panic; the boot tests lockcheck-planted* expect its line.
 *   (none)   this hart's run-queue lock, then its own task's CSpace lock,
 *            which ranks below it (lockclass.h): an inversion
 *   switch   the CSpace lock held into sched_yield (a context switch)
 *   release  a lock released that this hart never took
 *   irq      (2 harts or more) the CSpace lock held with interrupts on
 *            while another hart has a cross-call sent back to this one,
 *            whose handler takes mk_lock: an inversion in interrupt
 *            context */
#ifdef LOCK_CHECK_PLANTED
#include "mk.h"
#include "cmd.h"
#include "printk.h"
#include "kstring.h"
#include "smp.h"

static spinlock_t stray = SPINLOCK_INIT_CLASS(&lock_class_console);
static volatile int irq_took;

/* In interrupt context on the commanding hart. */
static void take_mk(void *arg)
{
	(void)arg;
	spin_lock(&mk_lock);
	spin_unlock(&mk_lock);
	irq_took = 1;
}

/* In interrupt context on the other hart: send take_mk back. */
static void relay(void *arg)
{
	(void)smp_call_async((uint32_t)(uintptr_t)arg, take_mk, NULL);
}

/* Needs: interrupts on, 2 harts or more. Returns 1 if the handler got
 * mk_lock under the held CSpace lock (the checker missed it), 2 if no
 * interrupt came. */
static int irq_inversion(spinlock_t *cs)
{
	uint32_t me = this_cpu()->index;
	spin_lock(cs);
	int r = smp_call_async((me + 1) % ncpus, relay, (void *)(uintptr_t)me) ? 2 : 1;
	for (long i = 0; r == 1 && !irq_took; i++)
		if (i == 100000000)
			r = 2;
	spin_unlock(cs);
	return r;
}

KCMD(lockorder_planted, "[switch|release|irq] misuse a lock on purpose (the lock checker must panic)")
{
	struct thread *me = cur_thread();
	const char *mode = argc > 1 ? argv[1] : "";
	if (!me || !me->task) {
		printk("lockorder_planted: no current task\n");
		return 1;
	}
	spinlock_t *cs = &me->task->cspace_lock;
	if (!strcmp(mode, "irq")) {
		if (ncpus < 2 || irq_inversion(cs) == 2) {
			printk("lockorder_planted: no cross-call came back (needs 2 harts)\n");
			return 1;
		}
		printk("lockorder_planted: the misuse went unnoticed\n");
		return 1;
	}
	unsigned long f = irq_save();
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
