/* restoredemo: snapshot restore through a user-level pager, as a VM
 * monitor's fault handler restores guest memory from a snapshot.
 *
 *   restoredemo [--mode one|batch|huge] [--mib M] [--async [--threads T]]
 *
 * This program's thread is the pager: it fills an image of M MiB (default
 * 64) with a pattern in its own memory, then serves the faults of a
 * client task (a copy of this program, role ROLE_RESTORE) that touches
 * every page of its restore range once and then checks every word. The
 * pager answers each fault with SYS_REGION_SUPPLY, which moves the
 * image's frames into the client without copying them:
 *   one    the faulting page only (one fault a page);
 *   batch  the 2 MiB block holding the fault, 512 pages at once, the rest
 *          read ahead (one fault a block);
 *   huge   the same block from 2 MiB-aligned contiguous frames
 *          (SYS_REGION_ALLOC_CONTIG), mapped as one 2 MiB leaf.
 * With --async the client is attached in asynchronous mode (pager.h) and
 * touches its range with T threads (default 64), each its own slice. The
 * pager holds every fault until all the client's threads still touching
 * wait in one, then answers them last first, one supply per block (mode
 * one: per page), each waking every thread waiting in it; it prints
 *   restore: async, <T> threads, <K> faults outstanding at most, <R> rounds
 * before the last line.
 * The client counts rdinstret across its touch loop. Last line:
 *   restore: <P> pages, <F> faults, <I> instructions per page, mode <m>, <C> corrupt
 * (I counts every instruction the hart retired in the loop: the client's,
 * the kernel's and the pager's; exact under scripts/run --smp 1 --icount).
 * Exit 0 only if C is 0 and the client exited 0. */
#include "ulib.h"
#include "pager.h"
#include "testlib.h"

#define ROLE_RESTORE 113
#define RS_BASE    0x200000000UL  /* the client's restore range (2 MiB aligned) */
#define RS_IMAGE   0x400000000UL  /* the image in the pager */
#define RS_BADGE   0x7e5704eUL
#define RS_HELLO 1
#define RS_DONE  2
#define RS_THREAD_DONE 3          /* an async client's thread finished its slice */
#define RS_THREADS_MAX 4000
#define PG    4096UL
#define BLOCK (512 * PG)

enum { MODE_ONE, MODE_BATCH, MODE_HUGE };
static const char *const mode_name[] = { "one", "batch", "huge" };

/* The image's word at offset off of the range. */
static inline uint64_t rs_word(uint64_t off)
{
	return (off + 8) * 0x9e3779b97f4a7c15ULL ^ 0x5eed5eed5eedULL;
}

/* --- the client --- */

/* An async client's touch: T threads, thread t over pages [lo, hi) of
 * slice t, each telling the pager when it is done. */
static struct { uint64_t pages, n; volatile uint64_t bad, done; } rt;

static void rs_slice(void *a)
{
	uint64_t t = (uint64_t)a, bad = 0;
	for (uint64_t p = t * rt.pages / rt.n; p < (t + 1) * rt.pages / rt.n; p++)
		bad += *(volatile uint64_t *)(RS_BASE + p * PG) != rs_word(p * PG);
	__atomic_add_fetch(&rt.bad, bad, __ATOMIC_RELAXED);
	uint64_t w[4] = { RS_THREAD_DONE, 0, 0, 0 };
	ipc(SYS_CALL, SLOT_GIVEN, w, SLOT_NONE);
	__atomic_add_fetch(&rt.done, 1, __ATOMIC_RELEASE);
}

/* The touch loop (one read a page, against the pattern), counted, then
 * every word checked: the pages with a wrong word. */
static int rs_client(void)
{
	if (given_cap_type() != CAP_ENDPOINT)
		return 200;
	uint64_t w[4] = { RS_HELLO, 0, 0, 0 };
	struct sysret r = ipc(SYS_CALL, SLOT_GIVEN, w, SLOT_NONE);
	if (r.a0)
		return 201;
	uint64_t pages = (uint64_t)r.a1, bad = 0;
	uint64_t i0 = rdinstret();
	if (r.a2) {
		rt.pages = pages;
		rt.n = (uint64_t)r.a2;
		for (uint64_t t = 0; t + 1 < rt.n; t++)
			if (uthread_start(rs_slice, (void *)t, -1, 1) < 0)
				return 202;
		rs_slice((void *)(rt.n - 1));
		while (__atomic_load_n(&rt.done, __ATOMIC_ACQUIRE) < rt.n)
			sys_yield();
		bad = rt.bad;
	}
	for (uint64_t p = 0; !r.a2 && p < pages; p++)
		bad += *(volatile uint64_t *)(RS_BASE + p * PG) != rs_word(p * PG);
	uint64_t ins = rdinstret() - i0;
	unsigned long corrupt = 0;
	for (uint64_t p = 0; p < pages; p++) {
		const volatile uint64_t *q = (const volatile uint64_t *)(RS_BASE + p * PG);
		int wrong = 0;
		for (unsigned k = 0; k < PG / 8; k++)
			wrong |= q[k] != rs_word(p * PG + k * 8);
		corrupt += (unsigned long)wrong;
	}
	if (bad > corrupt)
		corrupt = bad;
	w[0] = RS_DONE;
	w[1] = corrupt;
	w[2] = ins;
	ipc(SYS_CALL, SLOT_GIVEN, w, SLOT_NONE);
	return corrupt ? 1 : 0;
}

/* --- the pager --- */

struct rs_pager {
	int mode;
	uint64_t pages;
	unsigned long supplied, corrupt, ins;
	long err;
	int hello, done, gone;
	/* --async: client threads still touching, faults held now and at
	 * most, rounds of answers, blocks (or pages) supplied (a bit each) */
	unsigned threads, active, held, most, rounds;
	uint64_t *given;
};

/* Supply the page at f (one) or its 2 MiB block, clipped to the image,
 * unless an earlier supply of an async round gave it already. */
static long rs_supply(struct rs_pager *rp, struct pager_fault *f)
{
	uint64_t off = f->offset, n = 1;
	if (rp->mode != MODE_ONE) {
		off &= ~(BLOCK - 1);
		n = rp->pages - off / PG < 512 ? rp->pages - off / PG : 512;
	}
	uint64_t bit = rp->mode == MODE_ONE ? off / PG : off / BLOCK;
	if (rp->given && (rp->given[bit / 64] >> (bit % 64) & 1))
		return 0;
	long r = pager_supply_range(f->client, off, RS_IMAGE + off, (unsigned)n, PROT_R | PROT_W);
	if (r) {
		if (!rp->err)
			rp->err = r;
		return r;
	}
	if (rp->given)
		rp->given[bit / 64] |= 1ULL << (bit % 64);
	rp->supplied += n;
	return 0;
}

/* Every thread still touching waits in a fault: answer the held faults,
 * last first (libpager keeps them newest first). */
static void rs_answer_held(struct pager *pg, struct rs_pager *rp)
{
	rp->rounds++;
	while (pg->deferred) {
		struct pager_fault *f = pg->deferred;
		if (f->client && rs_supply(rp, f))
			pager_kill(f);
		else
			pager_resume(f);
	}
	rp->held = 0;
}

/* A fault. Synchronous: supplied now. --async: held until every thread
 * still touching waits in one; the one that completes the set is
 * answered first, then the held ones. */
static int rs_fault(struct pager *pg, struct pager_fault *f)
{
	struct rs_pager *rp = pg->data;
	if (f->async && ++rp->held > rp->most)
		rp->most = rp->held;
	if (f->async && rp->held < rp->active)
		return PAGER_DEFER;
	long r = rs_supply(rp, f);
	if (f->async)
		rs_answer_held(pg, rp);
	if (r)
		return r == -E_EXIST ? r : PAGER_KILL;
	return PAGER_RESUME;
}

/* A thread finished: the held faults are answered if every thread still
 * touching waits in one. */
static void rs_maybe_answer(struct pager *pg, struct rs_pager *rp)
{
	if (rp->held && rp->held >= rp->active)
		rs_answer_held(pg, rp);
}

/* The client's hello (answered with the page count) and done (its
 * corrupt count and instructions: the serve loop stops, the answer waits
 * until we let go of the client). */
static long rs_msg(struct pager *pg, uint64_t badge, const uint64_t w[4], uint64_t reply[4])
{
	struct rs_pager *rp = pg->data;
	if (badge == RS_BADGE && w[0] == RS_HELLO && !rp->hello) {
		rp->hello = 1;
		reply[0] = rp->pages;
		reply[1] = rp->threads;
		return 1;
	}
	if (badge == RS_BADGE && w[0] == RS_THREAD_DONE && rp->active) {
		rp->active--;
		rs_maybe_answer(pg, rp);
		return 1;
	}
	if (badge == RS_BADGE && w[0] == RS_DONE) {
		rp->done = 1;
		rp->corrupt = w[1];
		rp->ins = w[2];
		pager_stop(pg);     /* answered once we let go of the client */
		return 0;
	}
	reply[0] = ~0ULL;
	return 1;
}

/* The client died before it was done. */
static void rs_gone(struct pager *pg, struct pager_client *c, long status)
{
	(void)c;
	(void)status;
	((struct rs_pager *)pg->data)->gone = 1;
	pager_stop(pg);
}

static const struct pager_ops rs_ops = { .fault = rs_fault, .message = rs_msg,
					 .client_gone = rs_gone };

/* The image: pages of our own memory holding the pattern (huge: each
 * 2 MiB from one contiguous, aligned run). 0 or an error. */
static long rs_fill(int mode, uint64_t pages)
{
	uint64_t len = pages * PG;
	for (uint64_t b = 0; mode == MODE_HUGE && b < len; b += BLOCK) {
		long r = region_alloc_contig(SLOT_SELF_AS, RS_IMAGE + b, 9, PROT_R | PROT_W);
		if (r)
			return r;
	}
	if (mode != MODE_HUGE) {
		struct region_op m = { .op = ROP_MARK, .prot = PROT_R | PROT_W, .va = RS_IMAGE, .len = len };
		long r = region_txn(SLOT_SELF_AS, RS_IMAGE, RS_IMAGE + len, &m, 1);
		if (r < 0)
			return r;
	}
	for (uint64_t off = 0; off < len; off += 8)
		*(volatile uint64_t *)(RS_IMAGE + off) = rs_word(off);
	return 0;
}

/* What the supplies left of the image (nothing once all went), gone. */
static void rs_unfill(uint64_t pages)
{
	struct region_op u = { .op = ROP_UNMAP, .va = RS_IMAGE, .len = pages * PG };
	region_txn(SLOT_SELF_AS, RS_IMAGE, RS_IMAGE + pages * PG, &u, 1);
}

/* --mode, --mib, --async and --threads into *mode, *mib and *threads (0:
 * synchronous): 0, or -1 for anything else. */
static int rs_args(int argc, char **argv, int *mode, unsigned long *mib, unsigned long *threads)
{
	int async = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--async")) {
			async = 1;
			continue;
		}
		if (i + 1 >= argc)
			return -1;
		if (!strcmp(argv[i], "--threads")) {
			if (parse_ulong(argv[++i], threads) || *threads < 1 || *threads > RS_THREADS_MAX)
				return -1;
		} else if (!strcmp(argv[i], "--mib")) {
			if (parse_ulong(argv[++i], mib) || *mib < 2 || *mib > 1024 || (*mib & 1))
				return -1;
		} else if (!strcmp(argv[i], "--mode")) {
			i++;
			int m;
			for (m = 0; m < 3 && strcmp(argv[i], mode_name[m]); m++)
				;
			if (m == 3)
				return -1;
			*mode = m;
		} else {
			return -1;
		}
	}
	if (!async && *threads)
		return -1;          /* --threads only with --async */
	if (async && !*threads)
		*threads = 64;
	return 0;
}

/* Fill, spawn the client, serve it, report (the last line). 0 only with
 * every page right and the client's exit clean; 2 for bad options. */
int cmd_restoredemo(int argc, char **argv)
{
	int mode = MODE_BATCH;
	unsigned long mib = 64, threads = 0;
	if (rs_args(argc, argv, &mode, &mib, &threads))
		return prog_usage("restoredemo [--mode one|batch|huge] [--mib M] [--async [--threads T]]"
				  "  (M even, 2..1024; T 1..4000, default 64)");
	struct rs_pager rp = { .mode = mode, .pages = mib * 256, .threads = (unsigned)threads,
			       .active = (unsigned)threads };
	struct pager pg;
	long ctl = slot_alloc(), task = slot_alloc(), r, st = -1;
	int inited = 0, spawned = 0;
	if (ctl < 0 || task < 0) {
		r = -E_NOMEM;
		goto out;
	}
	if ((r = rs_fill(mode, rp.pages))) {
		printf("restoredemo: image: %ld\n", r);
		goto out;
	}
	if (threads && !(rp.given = calloc(rp.pages / 64 + 1, sizeof *rp.given))) {
		r = -E_NOMEM;
		goto out;
	}
	if ((r = pager_init(&pg, &rs_ops, &rp)))
		goto out;
	inited = 1;
	pager_set_async(&pg, threads != 0);
	if ((r = cap_mint(pg.ep, ctl, R_SEND, RS_BADGE, 0, 0)))
		goto out;
	/* The client holds the restored pages and their page tables, and
	 * its threads their stacks (user: a page or two of each 64 KiB
	 * window, and the CSpace for their caps; kernel: THREAD_KSTACK_FRAMES). */
	long cq = QUOTA(rp.pages + rp.pages / 256 + 256 + (8 + THREAD_KSTACK_FRAMES) * (2 + threads),
			2 + (int)threads, 2, 0);
	if ((r = task_spawn_q(self_module(), ROLE_RESTORE, task, cq, ctl)))
		goto out;
	spawned = 1;
	if (!pager_attach(&pg, task, RS_BASE, rp.pages * PG, PROT_R | PROT_W, NULL, &r))
		goto out;
	r = pager_serve(&pg);
	if (rp.done) {
		uint64_t w[4] = { 0 };
		ipc(SYS_REPLY, 0, w, SLOT_NONE);
	}
out:
	if (r)
		printf("restoredemo: set-up or serve: %ld\n", r);
	if (rp.err)
		printf("restoredemo: a supply refused: %ld\n", rp.err);
	unsigned long faults = inited ? pg.faults : 0;
	if (inited)
		pager_fini(&pg);
	if (spawned) {
		if (!rp.done)
			task_kill(task);
		st = task_wait(task);
	}
	rs_unfill(rp.pages);
	long slots[] = { task, ctl };
	for (unsigned i = 0; i < 2; i++)
		if (slots[i] >= 0) {
			cap_delete(slots[i]);
			slot_release(slots[i]);
		}
	free(rp.given);
	if (!rp.done)
		rp.corrupt = rp.pages;
	if (threads)
		printf("restore: async, %lu threads, %u faults outstanding at most, %u rounds\n", threads,
		       rp.most, rp.rounds);
	printf("restore: %lu pages, %lu faults, %lu instructions per page, mode %s, %lu corrupt\n",
	       (unsigned long)rp.pages, faults, rp.ins / (unsigned long)rp.pages, mode_name[mode],
	       rp.corrupt);
	return rp.done && !rp.corrupt && st == 0 && !rp.err ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (spawn_arg() == ROLE_RESTORE)
		return rs_client();
	return cmd_restoredemo(argc, argv);
}
