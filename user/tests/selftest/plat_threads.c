/* Threads made and ended by the hundred (kernel stacks taken on demand):
 *
 * plat_threads_many: a child makes PT_ROUNDS rounds of PT_THREADS threads
 * that all live at once. Its frame use (cap_info: the quota's view) falls
 * by exactly PT_THREADS * THREAD_KSTACK_FRAMES once a round's threads have
 * ended: each thread's kernel stack is charged while it lives and not
 * after. When the child is reaped, the kernel's free frames and thread
 * count are back where they were: no stack is left behind. */
#include "ulib.h"
#include "selftest.h"
#include "testlib.h"

#define PT_THREADS 256
#define PT_ROUNDS 3
#define PT_WAIT_POLLS 20000   /* 10 us each at least: a round that takes longer has hung */

static struct { volatile unsigned long started, round; } pt;

/* A round's thread: counted in, then held until its round is over. */
static void pt_thread(void *arg)
{
	unsigned long round = (unsigned long)arg;
	__atomic_add_fetch(&pt.started, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&pt.round, __ATOMIC_ACQUIRE) == round)
		sys_yield();
}

static long frames_in_use(void)
{
	struct cap_info ci;
	return cap_info(SLOT_SELF_TASK, &ci) ? -1 : (long)ci.lo;
}

/* The child: 0, or the number of the check that failed (10 + round: a
 * thread not made; 20 + round: not all started; 30 + round: the frames
 * did not fall by the stacks). */
int plat_threads_child(void)
{
	static long slots[PT_THREADS];
	for (unsigned long r = 0; r < PT_ROUNDS; r++) {
		for (unsigned i = 0; i < PT_THREADS; i++)
			if ((slots[i] = uthread_start(pt_thread, (void *)r, -1, 1)) < 0)
				return 10 + (int)r;
		int polls = 0;
		while (__atomic_load_n(&pt.started, __ATOMIC_ACQUIRE) < (r + 1) * PT_THREADS && polls++ < PT_WAIT_POLLS)
			sys_yield();
		if (polls >= PT_WAIT_POLLS)
			return 20 + (int)r;
		long live = frames_in_use(), after = live;
		__atomic_store_n(&pt.round, r + 1, __ATOMIC_RELEASE);
		for (polls = 0; after > live - PT_THREADS * THREAD_KSTACK_FRAMES && polls < PT_WAIT_POLLS; polls++) {
			sys_yield();
			after = frames_in_use();
		}
		if (after != live - PT_THREADS * THREAD_KSTACK_FRAMES) {
			printf("  round %lu: %ld frames in use with the threads, %ld after (want %ld)\n", r, live,
			       after, live - PT_THREADS * THREAD_KSTACK_FRAMES);
			return 30 + (int)r;
		}
		for (unsigned i = 0; i < PT_THREADS; i++) {
			cap_delete(slots[i]);
			slot_release(slots[i]);
		}
	}
	return 0;
}

int plat_threads_many(char *why)
{
	struct kcounters before;
	settled_counters(&before);
	/* Each round's user stacks are new 64 KiB windows (a page or two
	 * touched, their page tables), the CSpace grows for the thread caps,
	 * and the live round's kernel stacks. */
	long quota = QUOTA(512 + PT_ROUNDS * PT_THREADS * 4 + PT_THREADS * THREAD_KSTACK_FRAMES,
			   PT_THREADS + 2, 0, 0);
	long st = -1, r = spawn_wait(ROLE_PLAT_THREADS, quota, SLOT_NONE, &st);
	if (r || st) {
		snprintf(why, 160, "child: spawn %ld, status %ld (10+r: thread not made, 20+r: not started, "
			 "30+r: stacks still charged)", r, st);
		return 1;
	}
	return pg_counters_back(&before, 1, why);
}
