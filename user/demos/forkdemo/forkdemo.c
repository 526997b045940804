/* forkdemo: copy-on-write fork of 64 MiB of anonymous memory.
 *
 * The parent fills 16384 pages, spawns a child (init's ELF in the fork
 * role, an endpoint given at spawn), clones the window into it with
 * SYS_REGION_CLONE and then writes every fourth page (index % 4 == 1)
 * itself. It then calls the child, which writes its own pattern into
 * every page with index % 4 == 0 and checks that every other page still
 * holds the parent's pre-fork data (in particular none of the parent's
 * post-fork writes). The parent checks it sees its own writes and not the
 * child's. Prints what the fork copied; "forkdemo: ok" and exit 0 only
 * if every check held. */
#include "ulib.h"
#include "testlib.h"
#include <patina/pager.h>

#define ROLE_FORK_CHILD 81    /* spawn argument of the child copy of this program */

#define FW 0x80000000UL           /* the window, in both address spaces */
#define FPAGES 16384UL
#define FPG 4096UL

static uint64_t pre(uint64_t i) { return 0xf0000000UL ^ (i * 2654435761UL); }
static uint64_t post_parent(uint64_t i) { return 0xaa000000UL + i; }
static uint64_t post_child(uint64_t i) { return 0xcc000000UL + i; }
static volatile uint64_t *word(uint64_t i) { return (volatile uint64_t *)(FW + i * FPG + (i % 509) * 8); }

/* The child (ROLE_FORK_CHILD): wait for the parent's call (the clone is
 * done by then), write, check, answer with the number of bad pages. */
int forkdemo_child(void)
{
	struct cap_info ci;
	for (int i = 0; i < 1000 && cap_info(SLOT_GIVEN, &ci); i++)
		sys_yield();
	uint64_t w[4] = { 0 };
	struct sysret r = ipc(SYS_RECV, SLOT_GIVEN, w, SLOT_NONE);
	if (r.a0)
		return 2;
	uint64_t bad = 0;
	for (uint64_t i = 0; i < FPAGES; i += 4)
		*word(i) = post_child(i);
	for (uint64_t i = 0; i < FPAGES; i++) {
		uint64_t want = i % 4 == 0 ? post_child(i) : pre(i);
		if (*word(i) != want)
			bad++;
	}
	w[0] = bad;
	ipc(SYS_REPLY, 0, w, SLOT_NONE);
	return bad ? 1 : 0;
}

int cmd_forkdemo(int argc, char **argv)
{
	if (argc > 1)
		return prog_usage("forkdemo (no options: forks 64 MiB and checks the copies)");
	(void)argv;
	int ok = 1;
	long task = slot_alloc(), ep = slot_alloc(), rc = slot_alloc();
	if (task < 0 || ep < 0 || rc < 0 || ep_create(ep)) {
		printf("forkdemo: no slots\n");
		return 1;
	}
	long r = mem_reserve(FW, FPAGES * FPG);
	if (r) {
		printf("forkdemo: reserve: %s\n", err_name(r));
		ok = 0;
		goto out;
	}
	uint64_t t0 = rdtime();
	for (uint64_t i = 0; i < FPAGES; i++)
		*word(i) = pre(i);
	uint64_t t1 = rdtime();
	/* the child pays for its PT pages and the pages it writes */
	r = task_spawn_q(self_module(), ROLE_FORK_CHILD, task, QUOTA(FPAGES / 4 + 1024, 4, 4, 0), ep);
	if (!r)
		r = task_region(task, rc);
	if (r) {
		printf("forkdemo: child: %s\n", err_name(r));
		ok = 0;
		goto out;
	}
	struct clone_stats st;
	uint64_t t2 = rdtime();
	r = sc6(SYS_REGION_CLONE, SLOT_SELF_AS, rc, FW, FW + FPAGES * FPG, (long)&st, 0);
	uint64_t t3 = rdtime();
	if (r) {
		printf("forkdemo: clone: %s\n", err_name(r));
		ok = 0;
		task_kill(task);
		task_wait(task);
		goto out;
	}
	printf("forkdemo: touched %lu pages (%lu ms), fork copied %lu PT pages and shared %lu frames "
	       "(%lu statuses, %lu empty subtrees skipped) in %lu ms\n",
	       FPAGES, (t1 - t0) / 10000, st.pt_pages, st.frames, st.statuses, st.skipped, (t3 - t2) / 10000);
	if (st.frames != FPAGES) {
		printf("forkdemo: shared %lu frames, want %lu\n", st.frames, FPAGES);
		ok = 0;
	}
	for (uint64_t i = 1; i < FPAGES; i += 4)
		*word(i) = post_parent(i);
	uint64_t w[4] = { 1, 0, 0, 0 };
	struct sysret s = ipc(SYS_CALL, ep, w, SLOT_NONE);
	if (s.a0 || s.a1) {
		printf("forkdemo: child: call %s, %ld pages wrong\n", err_name(s.a0), s.a1);
		ok = 0;
	}
	long cst = task_wait(task);
	if (cst) {
		printf("forkdemo: child exit %ld\n", cst);
		ok = 0;
	}
	uint64_t bad = 0;
	for (uint64_t i = 0; i < FPAGES; i++)
		if (*word(i) != (i % 4 == 1 ? post_parent(i) : pre(i)))
			bad++;
	if (bad) {
		printf("forkdemo: parent: %lu pages wrong\n", bad);
		ok = 0;
	}
out:;
	struct region_op un = { .op = ROP_UNMAP, .va = FW, .len = FPAGES * FPG };
	region_txn(SLOT_SELF_AS, FW, FW + FPAGES * FPG, &un, 1);
	cap_delete(rc), cap_delete(ep), cap_delete(task);
	slot_release(rc), slot_release(ep), slot_release(task);
	if (ok)
		printf("forkdemo: ok\n");
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (spawn_arg() == ROLE_FORK_CHILD)
		return forkdemo_child();
	return cmd_forkdemo(argc, argv);
}
