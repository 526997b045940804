/* blktest: the virtio-blk driver under load and its refusals.
 *
 * Starts the driver on the first virtio block device (blk_start), then T
 * threads (default 4), each with BLK_MAX_PAGES buffers of its own and its
 * own part of the disk, write a pattern over their part in requests of
 * 1..BLK_MAX_PAGES pages and read it back into cleared buffers, P passes
 * (default 2) with a new pattern each: requests of all threads are in
 * flight together. Every page read back is checked. Then the refusals:
 * past the end of the disk (-E_RANGE), a request naming another client's
 * buffer (-E_PERM), a read into a frame attached without R_WRITE
 * (-E_PERM), 0 or too many pages (-E_INVAL), set-up and BLK_FORGET
 * messages from a client (-E_PERM), and the owner's BLK_FORGET; and a
 * client task that dies with buffers attached: once its owner forgets
 * its badge its frames are free again.
 * Last line `blktest: <N> requests, <C> corrupt, ok` and exit 0; a
 * `blktest: FAIL: ...` line and exit 1 otherwise; with --readonly (the
 * disk attached read-only) it checks instead that writes fail with E_IO
 * (the device's status byte) and reads work; `blktest: no disk` and
 * exit 2 when no virtio block device is attached. */
#include "ulib.h"
#include "testlib.h"
#include "blk.h"

#define PG 4096UL
#define MAX_THREADS 8
#define PART_PAGES 256           /* disk pages each thread writes and reads */
#define WORDS (PG / 8)

struct worker {
	struct blk *b;
	unsigned first;          /* its buffers' first index */
	uint64_t va;             /* where its buffers are mapped */
	uint64_t page0;          /* its part of the disk, in pages */
	unsigned passes, t;
	unsigned long requests, corrupt;
	long err;                /* the first unexpected error */
	volatile int done;
};

static uint64_t pattern(uint64_t disk_page, unsigned word, unsigned pass)
{
	return (disk_page << 20 | word) ^ ((uint64_t)(pass + 1) * 0x9e3779b97f4a7c15ULL);
}

/* One sweep over the worker's part: write (read = 0) the pattern, or
 * read back (read = 1) into buffers filled with junk and count the pages
 * that differ. Request sizes are random, 1..BLK_MAX_PAGES. */
static void sweep(struct worker *w, unsigned pass, int read, uint64_t *rng)
{
	for (uint64_t p = 0; p < PART_PAGES && !w->err;) {
		unsigned n = 1 + (unsigned)(xorshift64(rng) % BLK_MAX_PAGES);
		if (n > PART_PAGES - p)
			n = (unsigned)(PART_PAGES - p);
		uint64_t *buf = (uint64_t *)w->va;
		uint64_t disk_page = w->page0 + p;
		for (unsigned i = 0; i < n * WORDS; i++)
			buf[i] = read ? 0xdbdbdbdbdbdbdbdbULL : pattern(disk_page + i / WORDS, i % WORDS, pass);
		uint64_t sector = disk_page * BLK_PAGE_SECTORS;
		long r = read ? blk_read(w->b, sector, w->first, n) : blk_write(w->b, sector, w->first, n);
		w->requests++;
		if (r) {
			w->err = r;
			break;
		}
		if (read)
			for (unsigned pg = 0; pg < n; pg++)
				for (unsigned i = 0; i < WORDS; i++)
					if (buf[pg * WORDS + i] != pattern(disk_page + pg, i, pass)) {
						w->corrupt++;
						break;
					}
		p += n;
	}
}

static void worker_main(void *arg)
{
	struct worker *w = arg;
	uint64_t rng = 0x1234567ULL * (w->t + 1);
	for (unsigned pass = 0; pass < w->passes && !w->err; pass++) {
		sweep(w, pass, 0, &rng);
		sweep(w, pass, 1, &rng);
	}
	w->done = 1;
	sc0(SYS_THREAD_EXIT);
}

#define CHECK(c, ...) do { if (!(c)) { snprintf(why, 200, __VA_ARGS__); return 1; } } while (0)

/* The refusals, each with a request that works next to it so a refusal
 * cannot come from a broken driver. 0, or 1 with why. */
static int refusals(struct blk *b, struct worker *w0, unsigned nbufs, char *why)
{
	long r;
	unsigned buf = w0->first;
	r = blk_read(b, b->sectors - 4, buf, 1);
	CHECK(r == -E_RANGE, "a read across the end gave %s, not E_RANGE", err_name(r));
	r = blk_write(b, b->sectors, buf, 1);
	CHECK(r == -E_RANGE, "a write past the end gave %s, not E_RANGE", err_name(r));
	r = blk_read(b, ~0ULL - 3, buf, 2);
	CHECK(r == -E_RANGE, "a read at sector 2^64-4 gave %s, not E_RANGE", err_name(r));
	r = blk_read(b, b->sectors - BLK_PAGE_SECTORS, buf, 1);
	CHECK(r == 0, "a read of the last page gave %s", err_name(r));
	r = blk_read(b, 0, buf, 0);
	CHECK(r == -E_INVAL, "a request of 0 pages gave %s, not E_INVAL", err_name(r));
	r = blk_read(b, 0, buf, BLK_MAX_PAGES + 1);
	CHECK(r == -E_INVAL, "a request of %u pages gave %s, not E_INVAL", BLK_MAX_PAGES + 1, err_name(r));

	/* A second client (its own badge) with one buffer of its own. */
	struct blk c;
	long s = slot_alloc(), f = slot_alloc(), ro = slot_alloc();
	CHECK(blk_client_cap(b, 0, s) == -E_INVAL, "a client cap with the owner's badge was made");
	CHECK(blk_client_cap(b, BLK_BADGE_DRIVER | 2, s) == -E_INVAL, "a client cap with a driver badge was made");
	CHECK((r = blk_client_cap(b, 2, s)) == 0, "blk_client_cap: %s", err_name(r));
	CHECK((r = blk_connect(&c, s)) == 0, "connect the second client: %s", err_name(r));
	CHECK(frame_alloc(f) == 0, "frame_alloc");
	long mine = blk_attach(&c, f);
	CHECK(mine >= 0, "the second client's attach: %s", err_name(mine));
	/* Indexes are each client's own: buf + 5 is one of ours the second
	 * client never attached, and past our last one is nobody's of ours. */
	CHECK(mine == 0, "the second client's first buffer is %ld, not 0", mine);
	r = blk_read(&c, 0, buf + 5, 1);
	CHECK(r == -E_PERM, "a read naming another client's buffer gave %s, not E_PERM", err_name(r));
	r = blk_write(&c, 0, buf + 5, 1);
	CHECK(r == -E_PERM, "a write naming another client's buffer gave %s, not E_PERM", err_name(r));
	r = blk_read(&c, 0, (unsigned)mine, 2);
	CHECK(r == -E_PERM, "a request running past the client's buffers gave %s, not E_PERM", err_name(r));
	r = blk_read(b, 0, nbufs, 1);
	CHECK(r == -E_PERM, "a read naming an index we never attached gave %s, not E_PERM", err_name(r));
	r = blk_detach(&c, buf + 5);
	CHECK(r == -E_PERM, "a detach of another client's buffer gave %s, not E_PERM", err_name(r));
	r = blk_read(&c, 0, (unsigned)mine, 1);
	CHECK(r == 0, "the second client's read of its own buffer: %s", err_name(r));
	uint64_t w[4] = { BLK_SETUP_MMIO, 0, 0, 0 };
	struct sysret m = ipc(SYS_CALL, c.ep, w, SLOT_NONE);
	r = m.a0 ? m.a0 : m.a1;
	CHECK(r == -E_PERM, "a client's BLK_SETUP_MMIO gave %s, not E_PERM", err_name(r));
	/* A frame the client may only read: the device must not write it. */
	CHECK(cap_mint(f, ro, R_READ, 0, 0, 0) == 0, "mint a read-only frame cap");
	long rb = blk_attach(&c, ro);
	CHECK(rb >= 0, "attach a read-only frame: %s", err_name(rb));
	r = blk_read(&c, 0, (unsigned)rb, 1);
	CHECK(r == -E_PERM, "a read into a read-only frame gave %s, not E_PERM", err_name(r));
	r = blk_write(&c, b->sectors - BLK_PAGE_SECTORS, (unsigned)rb, 1);
	CHECK(r == 0, "a write from a read-only frame: %s", err_name(r));
	CHECK(blk_detach(&c, (unsigned)rb) == 0 && blk_detach(&c, (unsigned)mine) == 0, "detach");
	r = blk_read(&c, 0, (unsigned)mine, 1);
	CHECK(r == -E_PERM, "a read into a detached buffer gave %s, not E_PERM", err_name(r));
	/* The owner drops a (dead) client's buffers; nobody else may. */
	long again = blk_attach(&c, f);
	CHECK(again == 0, "attach again: %ld", again);
	w[0] = BLK_FORGET, w[1] = 2;
	m = ipc(SYS_CALL, c.ep, w, SLOT_NONE);
	r = m.a0 ? m.a0 : m.a1;
	CHECK(r == -E_PERM, "a client's BLK_FORGET gave %s, not E_PERM", err_name(r));
	r = blk_forget(b, 2);
	CHECK(r == 1, "BLK_FORGET of the second client dropped %ld buffers, not 1", r);
	r = blk_read(&c, 0, (unsigned)again, 1);
	CHECK(r == -E_PERM, "a read into a forgotten buffer gave %s, not E_PERM", err_name(r));
	blk_stop(&c);       /* connected, not started: drops its cap only */
	cap_delete(f), cap_delete(ro);
	slot_release(f), slot_release(ro);
	return 0;
}

/* --readonly: the disk is attached read-only (QEMU answers writes with
 * VIRTIO_BLK_S_IOERR): each write must fail with E_IO, each read work.
 * 0, or 1 with why; requests counted in *n. */
static int readonly_checks(struct blk *b, unsigned first, unsigned long *n, char *why)
{
	for (unsigned i = 0; i < 8; i++, *n += 2) {
		uint64_t sector = i * 37 * BLK_PAGE_SECTORS;
		long r = blk_write(b, sector, first, 1 + i);
		CHECK(r == -E_IO, "a write to a read-only disk gave %s, not E_IO", err_name(r));
		r = blk_read(b, sector, first, 1 + i);
		CHECK(r == 0, "a read of a read-only disk gave %s", err_name(r));
	}
	printf("blktest: read-only disk: writes fail with E_IO, reads work\n");
	return 0;
}

#define DYING_PAGES 4
#define DYING_BADGE 3

/* --dying-client: attach DYING_PAGES buffers through the cap in
 * SLOT_GIVEN and end without detaching them. */
static int dying_client(void)
{
	struct blk c;
	long frames[DYING_PAGES];
	uint64_t va;
	unsigned first;
	long r = blk_connect(&c, SLOT_GIVEN);
	if (!r)
		r = blk_buffers_new(&c, DYING_PAGES, &va, frames, &first);
	return r ? 1 : 0;
}

/* A client task dies with buffers attached; the driver cannot see it
 * (no task cap of its clients), so we, its owner, forget its badge on
 * its death: every one of its frames must come back to the kernel. 0,
 * or 1 with why. */
static int client_death(struct blk *b, char *why)
{
	long cap = slot_alloc(), task = slot_alloc();
	long r = blk_client_cap(b, DYING_BADGE, cap);
	CHECK(r == 0, "client cap: %s", err_name(r));
	char *argv[] = { "blktest", "--dying-client", NULL };
	r = program_spawn_give(self_module(), 2, argv, QUOTA(128, 2, 2, 0), task, cap, 0);
	CHECK(r == 0, "spawn a client: %s", err_name(r));
	long st = task_wait(task);
	CHECK(st == 0, "the client ended with %ld", st);
	cap_delete(task), cap_delete(cap);
	slot_release(task), slot_release(cap);
	struct kcounters k0, k1;
	settled_counters(&k0);
	r = blk_forget(b, DYING_BADGE);
	CHECK(r == DYING_PAGES, "BLK_FORGET of the dead client dropped %ld buffers, not %d", r, DYING_PAGES);
	settled_counters(&k1);
	CHECK(k1.free_frames >= k0.free_frames + DYING_PAGES,
	      "%ld frames came back when the dead client's %d buffers were dropped",
	      (long)(k1.free_frames - k0.free_frames), DYING_PAGES);
	printf("blktest: a dead client's %d buffers dropped (BLK_FORGET), their frames back\n", DYING_PAGES);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--dying-client"))
		return dying_client();
	unsigned long threads = 4, passes = 2;
	int readonly = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--readonly")) {
			readonly = 1;
			continue;
		}
		if (!strcmp(argv[i], "--threads") && i + 1 < argc && !parse_ulong(argv[++i], &threads) &&
		    threads >= 1 && threads <= MAX_THREADS)
			continue;
		if (!strcmp(argv[i], "--passes") && i + 1 < argc && !parse_ulong(argv[++i], &passes) &&
		    passes >= 1 && passes <= 100)
			continue;
		return prog_usage("blktest [--threads 1-8] [--passes 1-100] [--readonly]");
	}
	struct blk b;
	long r = blk_start(&b);
	if (r == -E_NOENT) {
		printf("blktest: no disk\n");
		return 2;
	}
	if (r) {
		printf("blktest: FAIL: blk_start: %s\n", err_name(r));
		return 1;
	}
	printf("blktest: disk of %lu sectors, %u pages a request at most\n", (unsigned long)b.sectors,
	       b.max_pages);
	static struct worker ws[MAX_THREADS];
	static long frames[MAX_THREADS][BLK_MAX_PAGES];
	char why[200] = "";
	int bad = 0;
	if (b.sectors / BLK_PAGE_SECTORS < threads * PART_PAGES + 1) {
		snprintf(why, sizeof why, "the disk is too small (%lu pages for %lu threads)",
			 (unsigned long)(b.sectors / BLK_PAGE_SECTORS), threads);
		bad = 1;
	}
	unsigned made = 0;
	for (; !bad && made < threads; made++) {
		struct worker *w = &ws[made];
		*w = (struct worker){ .b = &b, .page0 = made * PART_PAGES, .passes = (unsigned)passes,
				      .t = made };
		if ((r = blk_buffers_new(&b, BLK_MAX_PAGES, &w->va, frames[made], &w->first))) {
			snprintf(why, sizeof why, "buffers: %s", err_name(r));
			bad = 1;
			break;
		}
	}
	unsigned long requests = 0, corrupt = 0;
	if (readonly) {
		if (!bad)
			bad = readonly_checks(&b, ws[0].first, &requests, why);
		threads = 0;
	}
	long ncpu = dbg(DBG_NCPUS, 0, 0);
	for (unsigned t = 0; !bad && t < threads; t++)
		if ((r = uthread_start(worker_main, &ws[t], (int)(t % (unsigned long)ncpu), 1)) < 0) {
			snprintf(why, sizeof why, "thread: %s", err_name(r));
			bad = 1;
			threads = t;
		}
	for (unsigned t = 0; t < threads && made == threads; t++) {
		while (!ws[t].done)
			sys_yield();
		requests += ws[t].requests;
		corrupt += ws[t].corrupt;
		if (ws[t].err && !bad) {
			snprintf(why, sizeof why, "thread %u: a request failed: %s", t, err_name(ws[t].err));
			bad = 1;
		}
	}
	uint64_t w[4] = { BLK_INFO, 0, 0, 0 };
	struct sysret info = ipc(SYS_CALL, b.ep, w, SLOT_NONE);
	if (!bad && threads)
		printf("blktest: %lu threads, at most %ld requests in flight at once\n", threads, info.a4);
	if (!bad && threads > 1 && ncpu > 1 && info.a4 < 2) {
		snprintf(why, sizeof why, "never more than one request in flight");
		bad = 1;
	}
	if (!bad && threads)
		bad = refusals(&b, &ws[0], made * BLK_MAX_PAGES, why);
	if (!bad && threads)
		bad = client_death(&b, why);
	for (unsigned t = 0; t < made; t++)
		blk_buffers_free(&b, BLK_MAX_PAGES, ws[t].va, frames[t], ws[t].first);
	blk_stop(&b);
	if (bad || corrupt) {
		printf("blktest: FAIL: %s%s%lu corrupt pages\n", why, why[0] ? "; " : "", corrupt);
		return 1;
	}
	printf("blktest: %lu requests, %lu corrupt, ok\n", requests, corrupt);
	return 0;
}
