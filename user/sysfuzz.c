/* sysfuzz [iterations] [seed]: a child task issues random syscalls with
 * random numbers, random and stale caps, wild pointers (kernel addresses,
 * unmapped, misaligned, huge lengths) and random message words from
 * several threads. Its only memory authority is a region cap over a scratch
 * window, so it cannot unmap its own code. When the workers are done (or
 * all left are blocked in IPC for good), the child exits; init then checks
 * that every kernel counter is back where it started. */
#include "ulib.h"
#include "uprog.h"

#define NWORKERS 3
#define SCRATCH 0x60000000UL
#define SCRATCH_LEN 0x100000UL
#define SLOT_SCRATCH 8

static uint64_t rnd(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

static uint64_t wild_ptr(uint64_t *s)
{
	static const uint64_t p[] = {
		0, 1, 8, 0x10000, 0x10001, 0xffffffc000000000UL, 0xffffffff80200000UL,
		0x7ffffffff000UL, 0x3ffffff000UL, SCRATCH, SCRATCH + 0x800, SCRATCH + SCRATCH_LEN - 8,
		0x3fffff00UL, ~0UL, ~0UL - 4095, 0x8000000000000000UL, 0x40000000UL - 16,
	};
	uint64_t r = rnd(s);
	if (r % 5 == 0)
		return rnd(s);
	return p[r % (sizeof p / sizeof p[0])];
}

static long wild_arg(uint64_t *s)
{
	uint64_t r = rnd(s) % 8;
	switch (r) {
	case 0: return (long)(rnd(s) % CSPACE_SLOTS);
	case 1: return (long)(rnd(s) % 80) - 8;
	case 2: return (long)wild_ptr(s);
	case 3: return (long)rnd(s);
	case 4: return (long)(SCRATCH + (rnd(s) % (SCRATCH_LEN / 4096)) * 4096);
	case 5: return (long)((rnd(s) % 16) * 4096);
	case 6: return -1;
	default: return (long)(rnd(s) % 0x800);
	}
}

struct worker { uint64_t seed; long iters; volatile long done_calls; volatile long finished; };
static struct worker workers[NWORKERS];
static volatile int go;

static void worker_fn(void *a)
{
	struct worker *w = a;
	uint64_t s = w->seed;
	struct region_op ops[4];
	while (!go)
		sys_yield();
	for (long i = 0; i < w->iters; i++) {
		long nr = (long)(rnd(&s) % (SYS_COUNT + 2));
		if (nr == SYS_EXIT || nr == SYS_THREAD_EXIT || nr == SYS_TASK_WAIT)
			nr = SYS_YIELD;
		long a0 = wild_arg(&s), a1 = wild_arg(&s), a2 = wild_arg(&s), a3 = wild_arg(&s),
		     a4 = wild_arg(&s), a5 = wild_arg(&s);
		if (nr == SYS_REGION_TXN && rnd(&s) % 2) {
			/* A plausible transaction in the scratch window. */
			long n = 1 + (long)(rnd(&s) % 4);
			for (long k = 0; k < n; k++) {
				ops[k].op = 1 + (uint32_t)(rnd(&s) % 6);
				ops[k].prot = (uint32_t)(rnd(&s) % 8);
				ops[k].va = SCRATCH + (rnd(&s) % 64) * 4096;
				ops[k].len = (1 + rnd(&s) % 8) * 4096;
				ops[k].arg = (long)(rnd(&s) % CSPACE_SLOTS);
			}
			a0 = rnd(&s) % 4 ? SLOT_SCRATCH : a0;
			a1 = (long)SCRATCH;
			a2 = (long)(SCRATCH + SCRATCH_LEN);
			a3 = (long)ops;
			a4 = n;
		}
		if (nr == SYS_PUTS) {
			/* Only pointers that must fail (or print nothing): keep the
			 * console readable. */
			static const uint64_t badp[] = { 0, 8, 0xffffffc000000000UL, 0x7ffffffff000UL,
							 ~0UL - 4095, 0x3ffffff000UL };
			a0 = (long)badp[rnd(&s) % 6];
			if (rnd(&s) % 3 == 0)
				a1 = 0;
		}
		if (nr == SYS_THREAD_CREATE)
			a0 = 5 + (long)(rnd(&s) % 3);   /* never a task cap we hold: none is left */
		if ((nr == SYS_CALL || nr == SYS_RECV || nr == SYS_REPLY_RECV || nr == SYS_SEND) &&
		    rnd(&s) % 4)
			nr = SYS_CAP_INFO;       /* keep most calls non-blocking */
		if (nr == SYS_CAP_INFO && rnd(&s) % 2)
			a1 = (long)SCRATCH + (long)(rnd(&s) % 100) * 8;
		sc6(nr, a0, a1, a2, a3, a4, a5);
		w->done_calls++;
		/* Touch the scratch window now and then: faults there are either
		 * resolved (reserved) or kill us (then init sees it). */
	}
	w->finished = 1;
}

int fuzz_child(uint64_t arg)
{
	uint64_t seed = (arg >> 8) & 0xffffffff;
	long iters = (long)(arg >> 40);
	if (!seed)
		seed = 1;
	/* A scratch region cap; then give up the wide memory and task caps. */
	if (cap_mint(SLOT_SELF_AS, SLOT_SCRATCH, R_QUERY | R_MAP | R_MARK | R_UNMAP, 0, SCRATCH,
		     SCRATCH + SCRATCH_LEN))
		return 2;
	long th[NWORKERS];
	for (int i = 0; i < NWORKERS; i++) {
		workers[i].seed = seed * 0x9e3779b97f4a7c15ULL + (uint64_t)i * 7919 + 1;
		workers[i].iters = iters / NWORKERS + (i == 0 ? iters % NWORKERS : 0);
		th[i] = uthread_start(worker_fn, &workers[i], -1, 1);
		if (th[i] < 0)
			return 3;
	}
	/* From here on no slot may matter: workers delete and revoke at random. */
	cap_delete(SLOT_SELF_AS);
	cap_delete(SLOT_SELF_TASK);
	/* No thread caps either: a random SYS_THREAD_KILL of this main thread
	 * could leave workers blocked for good with nobody to end the task. */
	cap_delete(SLOT_SELF_THREAD);
	for (int i = 0; i < NWORKERS; i++)
		cap_delete(th[i]);
	go = 1;
	long last = -1;
	uint64_t stall_since = rdtime();
	for (;;) {
		long calls = 0, fin = 0;
		for (int i = 0; i < NWORKERS; i++) {
			calls += workers[i].done_calls;
			fin += workers[i].finished;
		}
		if (fin == NWORKERS)
			break;
		if (calls != last) {
			last = calls;
			stall_since = rdtime();
		} else if (rdtime() - stall_since > 3000000) {
			break;      /* the rest are blocked in IPC for good */
		}
		sys_yield();
	}
	long calls = 0;
	for (int i = 0; i < NWORKERS; i++)
		calls += workers[i].done_calls;
	/* The exit status carries the count (bit 30 marks a normal end). */
	sys_exit((int)((1L << 30) | calls));
	return 0;
}

/* Runs fuzz children until `iters` calls were made in total: a child
 * whose workers are all stuck in IPC for good ends early and the next one
 * (next seed) carries on. */
int cmd_sysfuzz(int argc, char **argv)
{
	unsigned long iters = 10000, seed = 1;
	if (argc > 1 && parse_ulong(argv[1], &iters))
		return 2;
	if (argc > 2 && parse_ulong(argv[2], &seed))
		return 2;
	if (iters > 0xffffff)
		iters = 0xffffff;
	struct kcounters before, after;
	settled_counters(&before);
	long total = 0, children = 0, killed = 0;
	while (total < (long)iters) {
		long task = slot_alloc();
		uint64_t left = iters - (unsigned long)total;
		uint64_t sd = (seed + (uint64_t)children * 1000003ULL) & 0xffffffff;
		uint64_t arg = ROLE_FUZZ | (sd << 8) | (left << 40);
		long r = task_spawn(0, arg, task, 2048, SLOT_NONE);
		if (r) {
			printf("sysfuzz: spawn failed: %s\n", err_name(r));
			return 1;
		}
		long st = task_wait(task);
		cap_delete(task);
		slot_release(task);
		children++;
		if (st >= 0 && (st & (1L << 30))) {
			total += st & ((1L << 30) - 1);
		} else {
			killed++;
			printf("sysfuzz: child %ld ended with status %ld\n", children, st);
			/* Its count died with it; charge a token amount so the run
			 * always ends, without overshooting the total asked for. */
			total += left < 100 ? (long)left : 100;
		}
	}
	settled_counters(&after);
	int same = after.free_frames == before.free_frames && after.tasks == before.tasks &&
		   after.threads == before.threads && after.endpoints == before.endpoints &&
		   after.frame_objs == before.frame_objs && after.caps == before.caps;
	printf("sysfuzz: %ld child tasks (%ld killed)\n", children, killed);
	printf("sysfuzz: %ld calls, %lu kernel faults\n", total, after.kernel_faults);
	if (!same) {
		printf("sysfuzz: LEAK frames %ld tasks %ld threads %ld endpoints %ld user_frames %ld caps %ld\n",
		       (long)(before.free_frames - after.free_frames), (long)(after.tasks - before.tasks),
		       (long)(after.threads - before.threads), (long)(after.endpoints - before.endpoints),
		       (long)(after.frame_objs - before.frame_objs), (long)(after.caps - before.caps));
		return 1;
	}
	printf("sysfuzz: frame and object counts back to their starting values\n");
	return 0;
}
