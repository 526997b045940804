/* bench ipc: call/reply round trips between two threads of this task,
 * pinned to the same hart and to two different harts, and between this
 * task and a child task on the same hart. Prints bench JSON lines
 * (docs/architecture.md section 4). instret_per_op counts every
 * instruction the client's hart retired per round trip (kernel included),
 * exact only under --icount on one hart (null under --icount on more:
 * bench_instret_is_clock); ns_per_op comes from rdtime. */
#include "ulib.h"
#include "bench.h"

#define BENCH_SRV_FRAMES 512   /* the server task: its image, stacks and page tables */

struct bsrv { long ep; };
static void bench_server(void *a)
{
	struct bsrv *b = a;
	uint64_t w[4] = { 0 };
	struct sysret r = ipc(SYS_RECV, b->ep, w, SLOT_NONE);
	while (r.a0 == 0) {
		w[0] = (uint64_t)r.a1;
		if ((uint64_t)r.a1 == ~0ULL) {
			ipc(SYS_REPLY, 0, w, SLOT_NONE);
			return;
		}
		r = ipc(SYS_REPLY_RECV, b->ep, w, SLOT_NONE);
	}
}

struct bcli { long ep, done_ep, ops; volatile uint64_t t, ins, done; };
static void bench_client(void *a)
{
	struct bcli *c = a;
	uint64_t w[4] = { 0 };
	for (int i = 0; i < 100; i++)
		ipc(SYS_CALL, c->ep, w, SLOT_NONE);      /* warm up */
	uint64_t t0 = rdtime(), i0 = rdinstret();
	for (long i = 0; i < c->ops; i++)
		ipc(SYS_CALL, c->ep, w, SLOT_NONE);
	c->ins = rdinstret() - i0;
	c->t = rdtime() - t0;
	w[0] = ~0ULL;
	ipc(SYS_CALL, c->ep, w, SLOT_NONE);
	c->done = 1;
	ipc(SYS_SEND, c->done_ep, w, SLOT_NONE);
}

/* ROLE_BENCH_SRV child (roles.c): serve the endpoint given in slot 4
 * from a thread pinned to hart (arg >> 8) - 1 at the client's level. The
 * first thread ends alone (returning would end the task), so the task
 * ends when the server does. */
int bench_ipc_child(long arg)
{
	static struct bsrv s = { SLOT_GIVEN };
	struct cap_info ci;
	while (cap_info(SLOT_GIVEN, &ci))
		sys_yield();
	if (uthread_start(bench_server, &s, (int)(arg >> 8) - 1, 2) < 0)
		return 1;
	sc0(SYS_THREAD_EXIT);
	return 2;
}

/* Time ops round trips from a client pinned to chart against a server on
 * shart: a thread of this task, or (other_task) a child task. */
static void one(const char *name, int shart, int chart, long ops, int other_task)
{
	long ep = slot_alloc(), done = slot_alloc(), st;
	if (ep_create(ep) || ep_create(done)) {
		printf("bench: no endpoint\n");
		return;
	}
	struct bsrv s = { ep };
	struct bcli c = { .ep = ep, .done_ep = done, .ops = ops };
	if (other_task) {
		st = slot_alloc();
		long r = task_spawn(self_module(), ROLE_BENCH_SRV | ((uint64_t)(shart + 1) << 8), st, BENCH_SRV_FRAMES, ep);
		if (r) {
			slot_release(st);
			st = r;
		}
	} else {
		st = uthread_start(bench_server, &s, shart, 2);
	}
	if (st < 0) {
		printf("bench: no server (%ld)\n", st);
		return;
	}
	long ct = uthread_start(bench_client, &c, chart, 2);
	/* Block (not poll) until the client is done, so this thread takes no
	 * hart time from the measurement. */
	uint64_t w[4] = { 0 };
	while (!c.done)
		ipc(SYS_RECV, done, w, SLOT_NONE);
	if (other_task)
		task_wait(st);
	/* A round trip is two one-way IPCs (call, then reply-and-wait). */
	char ow[32], rt[32], extra[96];
	int clock = bench_instret_is_clock(c.t, c.ins);   /* -icount on several harts */
	snprintf(extra, sizeof extra, "\"one_way_instret\":%s,\"round_trip_ns\":%s",
		 clock ? "null" : bench_tenths(ow, sizeof ow, c.ins, 2 * (uint64_t)ops),
		 bench_tenths(rt, sizeof rt, BENCH_NS(c.t), (uint64_t)ops));
	struct bench_line l = { .bench = name, .contention = "none", .threads = 2, .ops = (unsigned long)ops,
				.per_thread = (unsigned long)ops, .ticks = c.t, .instret = c.ins,
				.instret_clock = clock, .extra = extra };
	bench_print(&l);
	cap_delete(st), cap_delete(ct), cap_delete(ep), cap_delete(done);
	slot_release(st), slot_release(ct), slot_release(ep), slot_release(done);
}

int bench_ipc(unsigned long ops)
{
	long n = dbg(DBG_NCPUS, 0, 0);
	one("ipc-same-hart", 0, 0, (long)ops, 0);
	one("ipc-cross-task", 0, 0, (long)ops, 1);
	if (n > 1)
		one("ipc-cross-hart", 1, 0, (long)ops, 0);
	return 0;
}
