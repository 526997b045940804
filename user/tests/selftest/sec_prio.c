/* Exploit-style test of priority as an authority (selftest name
 * sec_prio_mcp).
 *
 * The attack: a task spins one thread per hart at the highest level it can
 * get, so that nothing below that level ever runs again; the kernel's
 * reaper among them, so kills never complete and waits never end.
 *
 * What must hold: a task's threads get no priority above the task's
 * maximum controlled priority (mcp, carved from its parent's: E_PERM
 * above it), and kernel threads run above every user level, so a task
 * killed while another task hogs every hart at its mcp is still torn down.
 *
 * Progress is judged by an event, not a time window: the killed task's
 * frames in use (cap_info) must reach 0, which only the reaper's teardown
 * does. The bound (20 s of timebase, far above the milliseconds it takes
 * on a loaded host) only keeps a broken kernel from hanging the run. */
#include "ulib.h"
#include "selftest.h"

#define TICKS_PER_SEC ticks_per_sec()
#define SPIN_VA  0x6e100000UL      /* the hog's code page, in the hogs */
#define CODE_VA  0x6e200000UL      /* where we write it */
#define HOG_MCP  2                 /* below our test thread's level */

#define CK(c, ...) do { if (!(c)) { if (!why[0]) snprintf(why, 160, __VA_ARGS__); goto out; } } while (0)

static long txn1(long region, uint32_t op, uint32_t prot, uint64_t va, int64_t arg)
{
	return txn_one(region, op, prot, va, arg, NULL);
}

static long thread_in(long task, uint64_t pc, int hart, int prio, long *slot)
{
	*slot = slot_alloc();
	if (*slot < 0)
		return -E_NOMEM;
	long r = sc6(SYS_THREAD_CREATE, task, (long)pc, 0, 0, *slot, ((long)prio << 16) | (hart + 1));
	if (r) {
		slot_release(*slot);
		*slot = -1;
	}
	return r;
}

/* An empty task with mcp `mcp` and `code` mapped R|X at SPIN_VA. */
static long hog_task(long code, int threads, int mcp, long *task)
{
	long rc = slot_alloc();
	*task = slot_alloc();
	if (rc < 0 || *task < 0)
		return -E_NOMEM;
	long r = sc3(SYS_TASK_CREATE, SLOT_SELF_TASK, *task, QUOTA_MCP(QUOTA(64, threads, 0, 0), mcp));
	if (r) {
		slot_release(*task);
		*task = -1;
	} else if (!(r = task_region(*task, rc))) {
		r = txn1(rc, ROP_MAP, PROT_R | PROT_X, SPIN_VA, code);
	}
	slot_drop(&rc);
	return r;
}

static struct {
	volatile long done;
	char why[160];
	long refused_above, refused_kernel, spawn_above;
	uint64_t waited;
} pm;

static void prio_main(void *arg)
{
	(void)arg;
	char *why = pm.why;
	long code = -1, hog = -1, victim = -1, th[16], vth = -1;
	int n = (int)dbg(DBG_NCPUS, 0, 0);
	for (int i = 0; i < 16; i++)
		th[i] = -1;
	if (n > 15)
		n = 15;
	code = slot_alloc();
	CK(code >= 0 && frame_alloc(code) == 0, "frame_alloc");
	CK(txn1(SLOT_SELF_AS, ROP_MAP, PROT_R | PROT_W, CODE_VA, code) == 0, "map code RW");
	uarch_code_spin((volatile uint8_t *)CODE_VA);
	CK(txn1(SLOT_SELF_AS, ROP_UNMAP, 0, CODE_VA, 0) == 0, "unmap code");

	/* No child above our own mcp. */
	long probe = slot_alloc();
	pm.spawn_above = sc3(SYS_TASK_CREATE, SLOT_SELF_TASK, probe,
			     QUOTA_MCP(QUOTA(64, 1, 0, 0), PRIO_USER_MAX + 1));
	if (pm.spawn_above == 0)
		cap_delete(probe);
	slot_release(probe);
	CK(pm.spawn_above == -E_PERM, "child with an mcp above ours: %ld", pm.spawn_above);

	CK(hog_task(code, n, HOG_MCP, &hog) == 0, "hog task");
	long t;
	pm.refused_above = thread_in(hog, SPIN_VA, -1, HOG_MCP + 1, &t);
	CK(pm.refused_above == -E_PERM, "thread above the task's mcp: %ld", pm.refused_above);
	pm.refused_kernel = thread_in(hog, SPIN_VA, -1, PRIO_USER_MAX + 1, &t);
	CK(pm.refused_kernel == -E_INVAL, "thread at the kernel's level: %ld", pm.refused_kernel);
	CK(hog_task(code, 1, HOG_MCP, &victim) == 0, "victim task");
	/* The victim runs on a hart of its own (we keep hart 0 and run above
	 * the hogs, so a thread queued there would wait for us). */
	CK(thread_in(victim, SPIN_VA, n - 1, HOG_MCP, &vth) == 0, "victim thread");
	for (int h = 0; h < n; h++)
		CK(thread_in(hog, SPIN_VA, h, HOG_MCP, &th[h]) == 0, "hog thread on hart %d", h);
	/* Every hart now has a hog at HOG_MCP; we run above it. */
	uint64_t t0 = rdtime();
	while (rdtime() - t0 < TICKS_PER_SEC / 10)
		sys_yield();
	CK(task_kill(victim) == 0, "kill the victim");
	struct cap_info ci = { 0 };
	t0 = rdtime();
	while (cap_info(victim, &ci) == 0 && ci.lo != 0 && rdtime() - t0 < 20 * TICKS_PER_SEC)
		sys_yield();
	pm.waited = rdtime() - t0;
	CK(ci.lo == 0, "killed task not torn down while another task hogs every hart "
	   "(%lu frames still in use after %lu ms)", (unsigned long)ci.lo,
	   (unsigned long)(pm.waited / (TICKS_PER_SEC / 1000)));
out:
	if (hog >= 0) {
		task_kill(hog);
		task_wait(hog);
	}
	if (victim >= 0) {
		task_kill(victim);
		task_wait(victim);
	}
	for (int h = 0; h < 16; h++)
		slot_drop(&th[h]);
	slot_drop(&vth);
	slot_drop(&hog);
	slot_drop(&victim);
	slot_drop(&code);
	__atomic_store_n(&pm.done, 1, __ATOMIC_RELEASE);
}

int sec_prio_mcp(char *why)
{
	struct kcounters before, after;
	why[0] = 0;
	if (dbg(DBG_NCPUS, 0, 0) < 2) {
		snprintf(why, 160, "needs 2 harts: the victim must run beside our test thread");
		return UTEST_SKIP;
	}
	memset(&pm, 0, sizeof pm);
	settled_counters(&before);
	/* The test runs on a thread at the top user level: the hogs sit
	 * below it, so it keeps running while they hold every other hart. */
	long me = uthread_start(prio_main, NULL, 0, PRIO_USER_MAX);
	if (me < 0) {
		snprintf(why, 160, "test thread: %ld", me);
		return 1;
	}
	while (!__atomic_load_n(&pm.done, __ATOMIC_ACQUIRE))
		sys_yield();
	cap_delete(me);
	slot_release(me);
	if (pm.why[0]) {
		memcpy(why, pm.why, 160);
		return 1;
	}
	printf("  sec_prio_mcp: thread above mcp %ld, at kernel level %ld, child above our mcp %ld; "
	       "victim torn down in %lu ms with %ld hogs spinning\n", pm.refused_above,
	       pm.refused_kernel, pm.spawn_above, (unsigned long)(pm.waited / (TICKS_PER_SEC / 1000)),
	       dbg(DBG_NCPUS, 0, 0));
	settled_counters(&after);
	if (after.tasks != before.tasks || after.threads != before.threads || after.caps != before.caps)
		snprintf(why, 160, "leak: tasks %ld threads %ld caps %ld",
			 (long)(after.tasks - before.tasks), (long)(after.threads - before.threads),
			 (long)(after.caps - before.caps));
	return why[0] ? 1 : 0;
}
