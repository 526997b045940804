/* bench fork: 64 MiB of touched anonymous memory cloned copy-on-write
 * into a fresh task (SYS_TASK_CREATE + SYS_REGION_CLONE), and the same
 * followed by the child's end (SYS_TASK_KILL + SYS_TASK_WAIT, which
 * returns once the reaper has torn the child's address space down and
 * dropped its shares of our frames).
 *
 * Before each fork every page is written again: once the last child is
 * gone its copy-on-write pages are ours alone, and the write makes them
 * writable again without a copy, so every fork write-protects 16384
 * writable pages as the first one does. 8 forks; the last 4 count. Two
 * lines, contention "none", 1 thread: "fork" (create + clone) and
 * "fork-exit" (create + clone + kill + wait). */
#include "ulib.h"
#include "bench.h"
#include <patina/pager.h>

#define FK_VA 0x2800000000UL      /* no other program uses it; below Sv39's top */
#define FK_PAGES 16384UL          /* 64 MiB */
#define FK_REQS 8
#define FK_TIMED 4                /* the last FK_TIMED forks count */
/* The child pays for the page-table pages the clone gives it (about 70
 * for 64 MiB) and needs no thread. */
#define FK_QUOTA QUOTA(1024, 0, 0, 0)

static void fk_touch(void)
{
	for (uint64_t i = 0; i < FK_PAGES; i++)
		*(volatile uint64_t *)(FK_VA + i * BENCH_PG) = i;
}

/* One fork into a new task (caps in slots task and rc) and its end.
 * t[0..2], ins[0..2]: rdtime and rdinstret before the fork, after the
 * clone, after the child is reaped. 0 or -E_*; the slots are empty again. */
static long fk_once(long task, long rc, uint64_t t[3], uint64_t ins[3])
{
	struct clone_stats st = { 0 };
	t[0] = rdtime();
	ins[0] = rdinstret();
	long r = sc3(SYS_TASK_CREATE, SLOT_SELF_TASK, task, FK_QUOTA);
	long created = !r;
	if (!r)
		r = task_region(task, rc);
	if (!r)
		r = sc6(SYS_REGION_CLONE, SLOT_SELF_AS, rc, FK_VA, FK_VA + FK_PAGES * BENCH_PG, (long)&st, 0);
	ins[1] = rdinstret();
	t[1] = rdtime();
	if (created) {
		long k = task_kill(task);
		long w = k ? 0 : task_wait(task);
		if (!r)
			r = k ? k : w < 0 ? w : 0;
	}
	ins[2] = rdinstret();
	t[2] = rdtime();
	cap_delete(rc);
	cap_delete(task);
	if (!r && st.frames != FK_PAGES) {
		printf("bench: fork shared %lu frames, want %lu\n", st.frames, FK_PAGES);
		r = -E_INVAL;
	}
	return r;
}

int bench_fork(void)
{
	long task = slot_alloc(), rc = slot_alloc();
	long err = task < 0 || rc < 0 ? -E_NOMEM : mem_reserve(FK_VA, FK_PAGES * BENCH_PG);
	struct bench_line f = { .bench = "fork", .contention = "none", .threads = 1,
				.ops = FK_TIMED, .per_thread = FK_TIMED };
	struct bench_line fe = f;
	fe.bench = "fork-exit";
	for (int j = 0; !err && j < FK_REQS; j++) {
		uint64_t t[3], ins[3];
		fk_touch();
		err = fk_once(task, rc, t, ins);
		if (j >= FK_REQS - FK_TIMED) {
			f.ticks += t[1] - t[0];
			f.instret += ins[1] - ins[0];
			fe.ticks += t[2] - t[0];
			fe.instret += ins[2] - ins[0];
		}
	}
	if (!err) {
		bench_print(&f);
		bench_print(&fe);
	}
	long un = bench_unmap(FK_VA, FK_PAGES * BENCH_PG);
	slot_release(task);
	slot_release(rc);
	if (!err)
		err = un;
	if (err)
		printf("bench: fork failed: %s\n", err_name(err));
	return err ? 1 : 0;
}
