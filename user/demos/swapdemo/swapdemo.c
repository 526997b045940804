/* swapdemo: the swap pager (swappager.c) serving a client task whose
 * threads, one per hart, write and verify a pattern over more pages than
 * the client may hold resident.
 *
 *   swapdemo [--pages P] [--frames F] [--threads T] [--passes S] [--disk [--disk-slots N]]
 *
 * The swap pager (a struct swappager, on libpager) runs on this program's
 * thread; the client is a child task (role ROLE_SWAPDEMO): a copy of this
 * program with a cap to the pager's endpoint (badge SD_BADGE_CTL) on
 * which it calls "hello" (the reply is "go" with the window and the work)
 * and "done" (with its corrupt count). libpager routes the client's faults
 * and death to the same endpoint. With --disk the store is the attached
 * disk (the virtio-blk driver started on it, slots from sector 0, at most
 * N of them with --disk-slots: fewer than the pages evicted leaves pages
 * in memory). Last line:
 *   swapdemo: <N> pages out, <M> pages in, <C> corrupt
 * and with --disk ", <W> pages written to disk, <R> read back" after it;
 * exit 0 only if C is 0, N > 0, the client exited 0 and the kernel
 * counters came back to where they were (the driver gone too). */
#include "ulib.h"
#include "testlib.h"
#include "swappager.h"

#define ROLE_SWAPDEMO 112    /* spawn argument of the client copy of this program */

#define SD_BASE        0x80000000UL   /* the client's demo window */
#define SD_BADGE_CTL   0x5d0c71UL
#define SD_HELLO 1
#define SD_DONE  2
#define PG 4096UL

/* --- the client --- */

#define SD_MAX_THREADS 32

static struct sd_client {
	uint64_t base;
	unsigned long pages, threads, passes;
	volatile unsigned long finished;
	unsigned long corrupt[SD_MAX_THREADS];
	unsigned long first_bad[SD_MAX_THREADS];
} sdc;

static inline uint64_t sd_word(uint64_t addr, unsigned long pass)
{
	return (addr * 0x9e3779b97f4a7c15ULL) ^ ((pass + 1) * 0xd1b54a32d192ed03ULL);
}

static void sd_write(uint64_t va, unsigned long pass)
{
	volatile uint64_t *p = (volatile uint64_t *)va;
	for (unsigned k = 0; k < PG / 8; k++)
		p[k] = sd_word(va + k * 8, pass);
}

static int sd_check(uint64_t va, unsigned long pass)
{
	volatile uint64_t *p = (volatile uint64_t *)va;
	int bad = 0;
	for (unsigned k = 0; k < PG / 8; k++)
		if (p[k] != sd_word(va + k * 8, pass))
			bad = 1;
	return bad;
}

static void sd_bad(unsigned long t, uint64_t va)
{
	if (!sdc.corrupt[t]++)
		sdc.first_bad[t] = va;
}

/* Thread t: its share of the window. Pass 0 writes; every later pass
 * checks the previous pattern while writing the next; each pass ends with
 * a check of everything it wrote. */
static void sd_worker(void *arg)
{
	unsigned long t = (unsigned long)arg;
	unsigned long lo = sdc.pages * t / sdc.threads, hi = sdc.pages * (t + 1) / sdc.threads;
	for (unsigned long pass = 0; pass < sdc.passes; pass++) {
		for (unsigned long i = lo; i < hi; i++) {
			uint64_t va = sdc.base + i * PG;
			if (pass && sd_check(va, pass - 1))
				sd_bad(t, va);
			sd_write(va, pass);
		}
		for (unsigned long i = lo; i < hi; i++) {
			uint64_t va = sdc.base + i * PG;
			if (sd_check(va, pass))
				sd_bad(t, va);
		}
	}
	__atomic_fetch_add(&sdc.finished, 1, __ATOMIC_ACQ_REL);
}

int swapdemo_client(uint64_t arg)
{
	(void)arg;
	struct cap_info ci;
	int i;
	for (i = 0; i < 1000 && cap_info(SLOT_GIVEN, &ci); i++)
		sys_yield();
	if (i == 1000 || ci.type != CAP_ENDPOINT)
		return 200;
	uint64_t w[4] = { SD_HELLO, 0, 0, 0 };
	struct sysret r = ipc(SYS_CALL, SLOT_GIVEN, w, SLOT_NONE);
	if (r.a0)
		return 201;
	sdc.base = (uint64_t)r.a1;
	sdc.pages = (unsigned long)r.a2;
	sdc.threads = (unsigned long)r.a3 & 0xffff;
	sdc.passes = ((unsigned long)r.a3 >> 16) & 0xffff;
	unsigned long ncpus = (unsigned long)r.a4;
	if (!sdc.threads || sdc.threads > SD_MAX_THREADS || !ncpus)
		return 202;
	int status = 0;
	unsigned long started = 0;
	for (unsigned long t = 0; t < sdc.threads; t++) {
		if (uthread_start(sd_worker, (void *)t, (int)(t % ncpus), 1) < 0) {
			status = 203;
			break;
		}
		started++;
	}
	while (__atomic_load_n(&sdc.finished, __ATOMIC_ACQUIRE) < started)
		sys_yield();
	unsigned long corrupt = 0, first = 0;
	for (unsigned long t = 0; t < started; t++) {
		if (sdc.corrupt[t] && !first)
			first = sdc.first_bad[t];
		corrupt += sdc.corrupt[t];
	}
	w[0] = SD_DONE;
	w[1] = corrupt;
	w[2] = (uint64_t)status;
	w[3] = first;
	ipc(SYS_CALL, SLOT_GIVEN, w, SLOT_NONE);
	if (status)
		return status;
	return corrupt > 199 ? 199 : (int)corrupt;
}

/* --- the pager side --- */

struct sd_ctl {
	uint64_t go[4];
	int hello, done, gone;
	unsigned long corrupt, status, first_bad;
};

/* The client's calls on the pager's endpoint (badge SD_BADGE_CTL). */
static long sd_ctl_msg(struct pager *pg, uint64_t badge, const uint64_t w[4], uint64_t reply[4])
{
	struct sd_ctl *c = ((struct swappager *)pg->data)->owner;
	if (badge == SD_BADGE_CTL && w[0] == SD_HELLO && !c->hello) {
		c->hello = 1;
		memcpy(reply, c->go, sizeof c->go);
		return 1;
	}
	if (badge == SD_BADGE_CTL && w[0] == SD_DONE) {
		c->done = 1;
		c->corrupt = w[1];
		c->status = w[2];
		c->first_bad = w[3];
		/* Answered once the pager let go of the client's window. */
		pager_stop(pg);
		return 0;
	}
	reply[0] = ~0ULL;   /* not ours: answered, ignored */
	return 1;
}

/* The client died before it was done (a refused fault, or killed). */
static void sd_gone(struct pager *pg, struct pager_client *cl, long status)
{
	(void)cl;
	(void)status;
	((struct sd_ctl *)((struct swappager *)pg->data)->owner)->gone = 1;
	pager_stop(pg);
}

static const struct pager_ops sd_ops = { .message = sd_ctl_msg, .client_gone = sd_gone };

/* ticks of the time counter in milliseconds */
static unsigned long sd_ms(uint64_t ticks)
{
	long hz = dbg(DBG_TIMEBASE, 0, 0);
	return hz > 0 ? (unsigned long)(ticks * 1000 / (uint64_t)hz) : 0;
}

/* Pages per second over `ticks`, 0 when no time passed. */
static unsigned long sd_rate(unsigned long pages, uint64_t ticks)
{
	long hz = dbg(DBG_TIMEBASE, 0, 0);
	return ticks && hz > 0 ? (unsigned long)(pages * (uint64_t)hz / ticks) : 0;
}

static int sd_opt(int argc, char **argv, int *i, const char *name, unsigned long *v)
{
	if (strcmp(argv[*i], name))
		return 0;
	if (*i + 1 >= argc || parse_ulong(argv[*i + 1], v))
		return -1;
	(*i)++;
	return 1;
}

static int sd_counters_back(const struct kcounters *a)
{
	struct kcounters b;
	for (int i = 0; i < 100; i++) {
		settled_counters(&b);
		if (b.free_frames == a->free_frames && b.tasks == a->tasks && b.threads == a->threads &&
		    b.endpoints == a->endpoints && b.frame_objs == a->frame_objs && b.caps == a->caps)
			return 0;
	}
	printf("swapdemo: counters not back: free_frames %ld tasks %ld threads %ld endpoints %ld "
	       "user_frames %ld caps %ld\n",
	       (long)(b.free_frames - a->free_frames), (long)(b.tasks - a->tasks),
	       (long)(b.threads - a->threads), (long)(b.endpoints - a->endpoints),
	       (long)(b.frame_objs - a->frame_objs), (long)(b.caps - a->caps));
	return 1;
}

static __attribute__((noinline)) void sd_grow_first(void)
{
	volatile char buf[16384];
	for (unsigned i = 0; i < sizeof buf; i += 512)
		buf[i] = 0;
	/* libpager keeps its records (the client, a fault) on the heap, which
	 * never shrinks: its first page must be there before too. */
	free(malloc(PG));
}

int cmd_swapdemo(int argc, char **argv)
{
	unsigned long pages = 1024, frames = 128, threads = 0, passes = 2, dslots = 0;
	int use_disk = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--disk")) {
			use_disk = 1;
			continue;
		}
		int m = sd_opt(argc, argv, &i, "--pages", &pages);
		if (!m)
			m = sd_opt(argc, argv, &i, "--disk-slots", &dslots);
		if (!m)
			m = sd_opt(argc, argv, &i, "--frames", &frames);
		if (!m)
			m = sd_opt(argc, argv, &i, "--threads", &threads);
		if (!m)
			m = sd_opt(argc, argv, &i, "--passes", &passes);
		if (m != 1)
			return prog_usage("swapdemo [--pages P] [--frames F] [--threads T] [--passes S] "
					  "[--disk [--disk-slots N]]");
	}
	long ncpus = dbg(DBG_NCPUS, 0, 0);
	if (ncpus < 1)
		ncpus = 1;
	if (!threads)
		threads = (unsigned long)ncpus;
	if (!pages || pages > 65536 || frames < 2 || frames > pages || !threads ||
	    threads > SD_MAX_THREADS || threads > pages || !passes || passes > 1000) {
		printf("swapdemo: need 1 <= pages <= 65536, 2 <= frames <= pages, "
		       "1 <= threads <= %d (and <= pages), 1 <= passes <= 1000\n", SD_MAX_THREADS);
		return 2;
	}
	printf("swapdemo: %lu pages, %lu frames, %lu threads on %ld harts, %lu passes\n",
	       pages, frames, threads, ncpus, passes);

	/* Our stack and heap grow while we serve (and stay): touch them
	 * first, so the counters compare like with like. */
	sd_grow_first();
	struct kcounters before;
	settled_counters(&before);
	uint64_t t0 = rdtime();
	int fail = 0, pager = 0, spawned = 0, disk_up = 0;
	struct blk blk;
	struct swapdisk disk;
	long st = -1, sr = 0;
	struct swap_stats ss = { 0 };
	struct sd_ctl ctl = { .go = { SD_BASE, pages, threads | passes << 16, (uint64_t)ncpus } };
	struct swappager sp;
	long cctl = slot_alloc(), task = slot_alloc();
	long r = -E_NOMEM;
	if (cctl < 0 || task < 0)
		goto out;
	if (use_disk) {
		if ((r = blk_start(&blk))) {
			printf("swapdemo: disk: %s%s\n", err_name(r),
			       r == -E_NOENT ? " (no disk attached: scripts/run --disk IMAGE)" : "");
			goto out;
		}
		if ((r = swapdisk_init(&disk, &blk, pages, 0, dslots))) {
			printf("swapdemo: disk store: %s\n", err_name(r));
			blk_stop(&blk);
			goto out;
		}
		disk_up = 1;
		printf("swapdemo: swapping to a %lu MiB disk, %lu slots\n",
		       (unsigned long)(blk.sectors / 2048), disk.nslots);
	}
	if ((r = swappager_init(&sp, pages, frames, &sd_ops, &ctl, disk_up ? &disk : NULL))) {
		printf("swapdemo: pager set-up: %ld\n", r);
		goto out;
	}
	pager = 1;
	if ((r = cap_mint(sp.pg.ep, cctl, R_SEND, SD_BADGE_CTL, 0, 0))) {
		printf("swapdemo: endpoint: %ld\n", r);
		goto out;
	}
	/* The client: its stacks, threads and page tables; the window's frames are ours. */
	long cq = QUOTA(128 + 16 * threads + pages / 128, threads + 2, 2, 0);
	if ((r = task_spawn_q(self_module(), ROLE_SWAPDEMO, task, cq, cctl))) {
		printf("swapdemo: spawn: %ld\n", r);
		goto out;
	}
	spawned = 1;
	/* Before the client's hello is answered: it touches the window only after. */
	if (!swappager_attach(&sp, task, SD_BASE, &r)) {
		printf("swapdemo: attach: %ld%s\n", r,
		       r == -E_NOSYS ? " (the kernel has no fault endpoints yet)" : "");
		goto out;
	}
	sr = pager_serve(&sp.pg);
	swappager_stats(&sp, &ss);
	swappager_fini(&sp);
	pager = 0;
	if (ctl.done) {
		uint64_t w[4] = { 0 };
		ipc(SYS_REPLY, 0, w, SLOT_NONE);
	} else if (ctl.gone) {
		printf("swapdemo: client killed: fault at offset %lx (access %u kind %u tag %lx): %ld\n",
		       (unsigned long)ss.err_offset, ss.err_access, ss.err_kind,
		       (unsigned long)ss.err_tag, ss.first_err);
	} else {
		printf("swapdemo: pager receive: %ld\n", sr);
	}
out:
	if (pager)
		swappager_fini(&sp);
	if (spawned) {
		if (!ctl.done)
			task_kill(task);
		st = task_wait(task);
	}
	struct swapdisk ds = { 0 };
	if (disk_up) {
		ds = disk;
		swapdisk_fini(&disk);
		blk_stop(&blk);
	}
	long slots[] = { task, cctl };
	for (unsigned i = 0; i < sizeof slots / sizeof slots[0]; i++)
		if (slots[i] >= 0) {
			cap_delete(slots[i]);
			slot_release(slots[i]);
		}
	unsigned long ms = sd_ms(rdtime() - t0);
	if (!ctl.done)
		fail = 1;
	if (ctl.done && ctl.status) {
		printf("swapdemo: client error %lu\n", ctl.status);
		fail = 1;
	}
	if (ctl.corrupt)
		printf("swapdemo: first corrupt page at %lx\n", ctl.first_bad);
	if (spawned && st != (long)(ctl.corrupt > 199 ? 199 : ctl.corrupt)) {
		printf("swapdemo: client exit status %ld\n", st);
		fail = 1;
	}
	if (sd_counters_back(&before))
		fail = 1;
	printf("swapdemo: %lu faults: %lu zero-filled, %lu swapped in, %lu evicted (%lu written to "
	       "swap), %lu already mapped, %lu aged, %lu killed; %lu ms (pager busy %lu ms)\n",
	       ss.faults, ss.zero, ss.in, ss.out, ss.written, ss.spurious, ss.aged, ss.killed,
	       ms, sd_ms(ss.busy));
	if ((!ss.out && !ss.kept) || ctl.corrupt)
		fail = 1;
	if (!disk_up) {
		printf("swapdemo: %lu pages out, %lu pages in, %lu corrupt\n", ss.out, ss.in, ctl.corrupt);
		return fail;
	}
	printf("swapdemo: disk: %lu pages written in %lu ms (%lu pages/s), %lu read in %lu ms "
	       "(%lu pages/s); %lu kept in memory (disk full %lu, I/O errors %lu), %lu frames past %lu\n",
	       ds.written, sd_ms(ds.wticks), sd_rate(ds.written, ds.wticks), ds.readback,
	       sd_ms(ds.rticks), sd_rate(ds.readback, ds.rticks), ss.kept, ds.full, ds.errors,
	       ss.over, frames);
	if (ss.kept)
		printf("swapdemo: the disk refused %lu pages (full or failing); they stayed in memory\n",
		       ss.kept);
	if (!ds.written && !ss.kept)
		fail = 1;
	printf("swapdemo: %lu pages out, %lu pages in, %lu corrupt, %lu pages written to disk, "
	       "%lu read back\n", ss.out, ss.in, ctl.corrupt, ds.written, ds.readback);
	return fail;
}

int main(int argc, char **argv)
{
	if (spawn_arg())
		return swapdemo_client(spawn_arg());
	return cmd_swapdemo(argc, argv);
}
