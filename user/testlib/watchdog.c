/* A guard for demos that count the kernel's objects around children that
 * may hang: a watchdog thread, and the caller's stack grown up front. */
#include "ulib.h"
#include "testlib.h"

struct watchdog {
	const char *name;
	unsigned seconds;
	volatile int *done;
	volatile int up;
};

static void watchdog_main(void *arg)
{
	struct watchdog *w = arg;
	uint64_t end = rdtime() + w->seconds * ticks_per_sec();
	w->up = 1;
	while (!*w->done) {
		if (rdtime() > end) {
			printf("%s: FAIL: timed out (a task hangs)\n", w->name);
			sys_exit(1);
		}
		sys_yield();
	}
	sc0(SYS_THREAD_EXIT);
}

/* One watchdog a program (its state is static). Returns once the thread
 * runs, with its thread slot, or the error of uthread_start. */
long watchdog_start(const char *name, unsigned seconds, volatile int *done)
{
	static struct watchdog w;
	w = (struct watchdog){ .name = name, .seconds = seconds, .done = done };
	ticks_per_sec();      /* asked now: the count of objects must not see it */
	long th = uthread_start(watchdog_main, &w, -1, 1);
	if (th < 0)
		return th;
	while (!w.up)
		sys_yield();
	return th;
}

/* Grow the stack by 8 KiB now, so a later frame count does not see it
 * grow. */
__attribute__((noinline)) void touch_stack(void)
{
	volatile char buf[8192];
	for (int i = 0; i < (int)sizeof buf; i += 512)
		buf[i] = 0;
}
