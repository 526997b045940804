/* driverkill: the block driver dies under its clients' I/O.
 *
 * We start the virtio-blk driver (blk_start) and two client tasks (copies
 * of this program, `--client T`), each with T threads that read and write
 * their own sectors in a loop, several requests in flight at once. Once
 * every thread has had a few requests answered the clients say so, and we
 * kill the driver task (SYS_TASK_KILL) mid-I/O. Then:
 *   - the kernel reset the device when it reaped the driver (its status
 *     register reads 0; DRIVER_OK before the kill);
 *   - every client thread's request in flight or queued fails with E_DEAD,
 *     and so does a later one: each client checks its own threads and
 *     exits with 10 + the number of E_DEAD failures it saw (1 on anything
 *     else); a client that does not end within 20 s is hung (a death
 *     notice taken with a timed receive is the guard);
 *   - the kernel's counters come back to where they were before the driver
 *     started (no frame, cap, thread, endpoint or task left behind);
 *   - a new driver started on the same device serves requests (a third
 *     client, `--verify`, writes and reads back a pattern), and after it is
 *     stopped the counters come back again.
 * Last line `driverkill: <N> requests failed with E_DEAD, 0 hung, driver
 * restarted, kernel alive` and exit 0; a `driverkill: FAIL: ...` line and
 * exit 1 otherwise; `driverkill: no disk` and exit 2 without a disk. A
 * watchdog thread fails the run after 90 s instead of hanging. */
#include "ulib.h"
#include "testlib.h"
#include "blk.h"

#define PG 4096UL
#define CLIENTS 2
#define CLIENT_THREADS 3
#define CLIENT_QUOTA QUOTA(256, 8, 4, 0)
#define WAIT_US 20000000UL       /* 20 s: a client that takes longer is hung */
#define WARM_REQUESTS 3          /* answered requests a thread has before the kill */
#define REQ_PAGES 4
#define DK_HELLO 0xd1c0001UL      /* main -> client, with its cap to the driver */
#define DK_READY 0xd1c0002UL      /* client -> main: every thread is under way */
#define STATUS_BASE 10

static volatile int dk_done;

/* ---- the client tasks ---- */

struct cthread {
	struct blk *b;
	unsigned first, t;
	uint64_t va;
	volatile unsigned long answered;
	volatile long last;            /* the result that ended its loop */
	volatile int done;
};

/* Requests until one fails: alternately write and read REQ_PAGES pages of
 * its own part of the disk. */
static void client_thread(void *arg)
{
	struct cthread *c = arg;
	uint64_t sector = (uint64_t)c->t * 64 * BLK_PAGE_SECTORS;
	for (unsigned long i = 0;; i++) {
		memset((void *)c->va, (int)(i & 0xff), REQ_PAGES * PG);
		long r = i & 1 ? blk_read(c->b, sector, c->first, REQ_PAGES)
			       : blk_write(c->b, sector, c->first, REQ_PAGES);
		if (r) {
			c->last = r;
			break;
		}
		c->answered++;
	}
	c->done = 1;
	sc0(SYS_THREAD_EXIT);
}

/* Our cap to the driver comes with DK_HELLO on the endpoint in
 * SLOT_GIVEN; DK_READY goes back on it once each thread has had
 * WARM_REQUESTS answers. Exit status STATUS_BASE + the E_DEAD failures
 * seen (every thread's last request, and one more made after), or 1. */
static int client_main(unsigned threads, unsigned base)
{
	long s = slot_alloc();
	uint64_t w[4] = { 0 };
	struct sysret m = ipc(SYS_RECV, SLOT_GIVEN, w, s);
	if (m.a0 || (uint64_t)m.a1 != DK_HELLO || !(m.a6 & IPC_GOT_CAP)) {
		printf("driverkill client: no hello\n");
		return 1;
	}
	ipc(SYS_REPLY, 0, w, SLOT_NONE);
	static struct blk b;
	static struct cthread ct[8];
	static long frames[8][REQ_PAGES];
	long r = blk_connect(&b, s);
	for (unsigned t = 0; !r && t < threads; t++) {
		ct[t] = (struct cthread){ .b = &b, .t = base + t };
		r = blk_buffers_new(&b, REQ_PAGES, &ct[t].va, frames[t], &ct[t].first);
	}
	for (unsigned t = 0; !r && t < threads; t++)
		if ((r = uthread_start(client_thread, &ct[t], -1, 1)) > 0)
			r = 0;
	if (r) {
		printf("driverkill client: set-up: %s\n", err_name(r));
		return 1;
	}
	for (unsigned t = 0; t < threads; t++)
		while (ct[t].answered < WARM_REQUESTS && !ct[t].done)
			sys_yield();
	w[0] = DK_READY;
	ipc(SYS_CALL, SLOT_GIVEN, w, SLOT_NONE);
	unsigned dead = 0;
	int bad = 0;
	for (unsigned t = 0; t < threads; t++) {
		while (!ct[t].done)
			sys_yield();
		if (ct[t].last == -E_DEAD && ct[t].answered >= WARM_REQUESTS)
			dead++;
		else {
			printf("driverkill client: thread %u ended with %s after %lu answers\n", base + t,
			       err_name(ct[t].last), ct[t].answered);
			bad = 1;
		}
	}
	r = blk_read(&b, 0, ct[0].first, 1);
	if (r == -E_DEAD)
		dead++;
	else {
		printf("driverkill client: a request after the driver's death gave %s\n", err_name(r));
		bad = 1;
	}
	return bad ? 1 : STATUS_BASE + (int)dead;
}

/* --verify: write a pattern over 16 pages through the driver whose cap
 * comes with DK_HELLO and read it back. 0 when every word came back. */
static int verify_main(void)
{
	long s = slot_alloc();
	uint64_t w[4] = { 0 };
	struct sysret m = ipc(SYS_RECV, SLOT_GIVEN, w, s);
	if (m.a0 || (uint64_t)m.a1 != DK_HELLO || !(m.a6 & IPC_GOT_CAP))
		return 1;
	ipc(SYS_REPLY, 0, w, SLOT_NONE);
	struct blk b;
	long frames[BLK_MAX_PAGES];
	unsigned first;
	uint64_t va;
	long r = blk_connect(&b, s);
	if (!r)
		r = blk_buffers_new(&b, BLK_MAX_PAGES, &va, frames, &first);
	uint64_t *buf = (uint64_t *)va;
	const unsigned words = BLK_MAX_PAGES * PG / 8;
	for (unsigned i = 0; !r && i < words; i++)
		buf[i] = i * 0x9e3779b97f4a7c15ULL + 7;
	if (!r)
		r = blk_write(&b, 8 * 64 * BLK_PAGE_SECTORS, first, BLK_MAX_PAGES);
	for (unsigned i = 0; !r && i < words; i++)
		buf[i] = 0;
	if (!r)
		r = blk_read(&b, 8 * 64 * BLK_PAGE_SECTORS, first, BLK_MAX_PAGES);
	unsigned wrong = 0;
	for (unsigned i = 0; !r && i < words; i++)
		wrong += buf[i] != i * 0x9e3779b97f4a7c15ULL + 7;
	if (r || wrong) {
		printf("driverkill verify: %s, %u words wrong\n", err_name(r), wrong);
		return 1;
	}
	return 0;
}

/* ---- the parent ---- */

#define CHECK(c, ...) do { if (!(c)) { snprintf(why, 200, __VA_ARGS__); return 1; } } while (0)

struct child {
	long task, ep;    /* its task cap; the endpoint it was given (we can receive there too) */
};

/* Start a copy of us with argv, given a fresh endpoint on which it gets
 * a client cap to b's driver (badge) with DK_HELLO; death notice on note
 * with the badge too. 0, or 1 with why. */
static int child_start(struct blk *b, struct child *c, char **argv, int argc, uint64_t badge,
		       long note, char *why)
{
	long cap = slot_alloc(), nb = slot_alloc();
	c->task = slot_alloc();
	c->ep = slot_alloc();
	CHECK(ep_create(c->ep) == 0, "ep_create");
	long r = program_spawn_give(self_module(), argc, argv, CLIENT_QUOTA, c->task, c->ep, 0);
	CHECK(r == 0, "spawn a client: %s", err_name(r));
	CHECK(cap_mint(note, nb, R_SEND, badge, 0, 0) == 0 && sc2(SYS_TASK_NOTIFY, c->task, nb) == 0,
	      "death notice");
	CHECK((r = blk_client_cap(b, badge, cap)) == 0, "client cap: %s", err_name(r));
	uint64_t w[4] = { DK_HELLO, 0, 0, 0 };
	r = ipc(SYS_CALL, c->ep, w, cap).a0;
	CHECK(r == 0, "hello to a client: %s", err_name(r));
	cap_delete(cap), cap_delete(nb);
	slot_release(cap), slot_release(nb);
	return 0;
}

/* Wait until every one of the n children (badges badge0 + i) has ended,
 * at most WAIT_US for all: each one's exit status in st[i], or -1 for one
 * whose death notice did not come (it hung: it is killed then). Every
 * child is reaped and its caps dropped. */
static void children_end(long note, uint64_t badge0, struct child *c, unsigned n, long *st)
{
	unsigned left = n;
	for (unsigned i = 0; i < n; i++)
		st[i] = -1;
	uint64_t end = rdtime() + WAIT_US / 1000000 * ticks_per_sec();
	while (left) {
		uint64_t now = rdtime();
		if (now >= end)
			break;
		uint64_t us = (end - now) * 1000000 / ticks_per_sec() + 1;
		uint64_t w[4] = { 0 };
		struct sysret m = ipc_timed(SYS_RECV_TIMED, note, w, SLOT_NONE, us);
		if (m.a0)
			break;
		uint64_t i = (uint64_t)m.a5 - badge0;
		if ((uint64_t)m.a1 == MSG_DEATH && i < n && st[i] < 0) {
			st[i] = m.a2;
			left--;
		}
	}
	for (unsigned i = 0; i < n; i++) {
		if (st[i] < 0)
			task_kill(c[i].task);
		task_wait(c[i].task);
		cap_delete(c[i].task), cap_delete(c[i].ep);
		slot_release(c[i].task), slot_release(c[i].ep);
	}
}

static int kill_round(unsigned *dead, unsigned *hung, char *why)
{
	struct blk b;
	long r = blk_start(&b);
	CHECK(r == 0, "blk_start: %s", err_name(r));
	long note = slot_alloc();
	CHECK(ep_create(note) == 0, "ep_create");
	struct child cl[CLIENTS];
	for (unsigned i = 0; i < CLIENTS; i++) {
		char nthreads[8], base[8];
		snprintf(nthreads, sizeof nthreads, "%u", CLIENT_THREADS);
		snprintf(base, sizeof base, "%u", i * CLIENT_THREADS);
		char *argv[] = { "driverkill", "--client", nthreads, base, NULL };
		if (child_start(&b, &cl[i], argv, 4, 100 + i, note, why))
			return 1;
	}
	/* Each client says when its threads are under way: then they have
	 * requests in flight (in the device, or queued at the driver). */
	for (unsigned i = 0; i < CLIENTS; i++) {
		uint64_t w[4] = { 0 };
		struct sysret m = ipc_timed(SYS_RECV_TIMED, cl[i].ep, w, SLOT_NONE, WAIT_US);
		CHECK(!m.a0 && (uint64_t)m.a1 == DK_READY, "client %u not under way: %s", i, err_name(m.a0));
		ipc(SYS_REPLY, 0, w, SLOT_NONE);
	}
	uint64_t iw[4] = { BLK_INFO, 0, 0, 0 };
	unsigned long inflight = (unsigned long)ipc(SYS_CALL, b.ep, iw, SLOT_NONE).a4;
	long dst = blk_device_status();
	CHECK(dst >= 0 && (dst & VIRTIO_STATUS_DRIVER_OK), "the running device's status is %ld", dst);
	CHECK(task_kill(b.driver) == 0, "kill the driver");
	long st = task_wait(b.driver);
	CHECK(st == EXIT_KILLED, "the driver ended with %ld", st);
	/* The kernel stopped the device (its DMA) when it reaped the driver. */
	dst = blk_device_status();
	CHECK(dst == 0, "the device's status after the driver's death is %ld, not 0 (reset)", dst);
	printf("driverkill: driver killed under %u client threads (up to %lu requests in flight at once"
	       " before), device reset\n", CLIENTS * CLIENT_THREADS, inflight);
	long cst[CLIENTS];
	children_end(note, 100, cl, CLIENTS, cst);
	for (unsigned i = 0; i < CLIENTS; i++) {
		if (cst[i] < 0) {
			++*hung;
			continue;
		}
		CHECK(cst[i] > STATUS_BASE && cst[i] < STATUS_BASE + 100, "client %u ended with %ld", i, cst[i]);
		*dead += (unsigned)(cst[i] - STATUS_BASE);
	}
	/* Our own cap to the dead driver fails too, at once. */
	r = blk_read(&b, 0, 0, 1);
	CHECK(r == -E_DEAD, "our request after the driver's death gave %s", err_name(r));
	++*dead;
	blk_stop(&b);
	cap_delete(note);
	slot_release(note);
	return 0;
}

/* A new driver on the same device: a --verify client's round trip. */
static int restart_round(char *why)
{
	struct blk b;
	long r = blk_start(&b);
	CHECK(r == 0, "a new driver on the device: blk_start: %s", err_name(r));
	long note = slot_alloc();
	CHECK(ep_create(note) == 0, "ep_create");
	struct child c;
	char *argv[] = { "driverkill", "--verify", NULL };
	if (child_start(&b, &c, argv, 2, 200, note, why))
		return 1;
	long st;
	children_end(note, 200, &c, 1, &st);
	blk_stop(&b);
	cap_delete(note);
	slot_release(note);
	CHECK(st == 0, "the new driver's client ended with %ld", st);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long n = 0, base = 0;
	if (argc == 4 && !strcmp(argv[1], "--client") && !parse_ulong(argv[2], &n) && n >= 1 && n <= 8 &&
	    !parse_ulong(argv[3], &base) && base < 64)
		return client_main((unsigned)n, (unsigned)base);
	if (argc == 2 && !strcmp(argv[1], "--verify"))
		return verify_main();
	if (argc > 1)
		return prog_usage("driverkill (no options)");
	long wd = watchdog_start("driverkill", 90, &dk_done);
	if (wd < 0) {
		printf("driverkill: FAIL: no watchdog thread (%s)\n", err_name(wd));
		return 1;
	}
	touch_stack();
	struct kcounters before;
	settled_counters(&before);
	char why[200] = "";
	unsigned dead = 0, hung = 0;
	struct blk probe;
	long r = blk_start(&probe);
	if (r == -E_NOENT) {
		dk_done = 1;
		printf("driverkill: no disk\n");
		return 2;
	}
	int bad = 0;
	if (r) {
		snprintf(why, sizeof why, "blk_start: %s", err_name(r));
		bad = 1;
	} else {
		blk_stop(&probe);
	}
	if (!bad)
		bad = kill_round(&dead, &hung, why);
	if (!bad && hung)
		snprintf(why, sizeof why, "%u clients hung", hung), bad = 1;
	if (!bad && (bad = pg_counters_back(&before, 1, why)))
		strcat(why, " (after the kill)");
	if (!bad)
		bad = restart_round(why);
	if (!bad && (bad = pg_counters_back(&before, 1, why)))
		strcat(why, " (after the restart)");
	struct kcounters after;
	dbg(DBG_COUNTERS, (uint64_t)&after, 0);
	if (!bad && after.kernel_faults)
		snprintf(why, sizeof why, "%lu kernel faults", after.kernel_faults), bad = 1;
	dk_done = 1;
	cap_delete(wd);
	slot_release(wd);
	if (bad) {
		printf("driverkill: FAIL: %s\n", why);
		return 1;
	}
	printf("driverkill: %u requests failed with E_DEAD, %u hung, driver restarted, kernel alive\n",
	       dead, hung);
	return 0;
}
