/* Dirty and residency tracking for pagers: SYS_REGION_BITMAP and
 * ROP_CLEAN (selftest name mm_dirty_bitmap; txn_clean is in txn_tests.c).
 *
 * mm_dirty_bitmap: DB_PAGES anonymous pages; some written, some only
 * read: the bitmaps say exactly which are resident, accessed and dirty.
 * ROP_CLEAN over them reports dirt; after it every page is clean and still
 * resident with its data; a write makes exactly that page dirty again,
 * also a write from another hart whose TLB held the page dirty before the
 * clean (the clean's flush reached it); then, 64 times each here and on a
 * thread that spins on hart 1 (its TLB kept), a page written, cleaned and
 * at once written again must read dirty. Then the bad inputs: no R_QUERY
 * (E_PERM), no R_PROTECT for a clean (E_PERM), unaligned or empty range
 * and flags (E_INVAL), too many pages or outside the cap (E_RANGE), a bad
 * buffer (E_FAULT). Prints the exact instruction counts of a bitmap of
 * the DB_PAGES resident pages and of a clean of them (exact under
 * scripts/run --smp 1 --icount). */
#include "ulib.h"
#include "selftest.h"

#define PG 4096UL
#define DB 0x74000000UL
#define DB_PAGES 4096UL
#define DB_WORDS (DB_PAGES / 64)
#define CK(c, ...) do { if (!(c)) { snprintf(why, 160, __VA_ARGS__); goto out; } } while (0)

static uint64_t bm[3 * DB_WORDS];

static int bit(const uint64_t *b, unsigned long i) { return (int)((b[i / 64] >> (i % 64)) & 1); }

static void db_unmap(void)
{
	struct region_op u = { .op = ROP_UNMAP, .va = DB, .len = DB_PAGES * PG };
	region_txn(SLOT_SELF_AS, DB, DB + DB_PAGES * PG, &u, 1);
}

/* The bitmaps of the window into bm: the resident count, or -E_*. */
static long db_bitmap(void)
{
	for (unsigned long i = 0; i < 3 * DB_WORDS; i++)
		bm[i] = ~0ul;       /* the call must write every word */
	return region_bitmap(SLOT_SELF_AS, DB, DB + DB_PAGES * PG, bm, 0);
}

/* Page i of the window: resident, accessed and dirty as wanted? The first
 * page that differs, or -1. */
static long db_differs(int (*res)(unsigned long), int (*dirty)(unsigned long))
{
	for (unsigned long i = 0; i < DB_PAGES; i++)
		if (bit(bm, i) != res(i) || bit(bm + DB_WORDS, i) != res(i) ||
		    bit(bm + 2 * DB_WORDS, i) != dirty(i))
			return (long)i;
	return -1;
}

static int written(unsigned long i) { return i % 7 == 0; }
static int read_only(unsigned long i) { return i % 5 == 0 && !written(i); }
static int touched(unsigned long i) { return written(i) || read_only(i); }
static int none(unsigned long i) { (void)i; return 0; }
static int touched_all(unsigned long i) { (void)i; return 1; }
static int rewritten(unsigned long i) { return i % 21 == 0; }
static int remote(unsigned long i) { return i % 35 == 0; }

static long db_clean(uint64_t *prot)
{
	struct region_op op = { .op = ROP_CLEAN, .va = DB, .len = DB_PAGES * PG };
	long r = region_txn(SLOT_SELF_AS, DB, DB + DB_PAGES * PG, &op, 1);
	*prot = op.out_prot;
	return r < 0 ? r : op.result;
}

struct db_writer {
	unsigned long pass;
	volatile int done;
};

/* On another hart: write every remote() page (tagged with the pass). */
static void db_write_fn(void *a)
{
	struct db_writer *w = a;
	for (unsigned long i = 0; i < DB_PAGES; i++)
		if (remote(i))
			*(volatile uint64_t *)(DB + i * PG + 8) = w->pass;
	__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
}

/* Run db_write_fn on hart 1 and wait for it. 0 or the error. */
static long db_remote_write(unsigned long pass)
{
	struct db_writer w = { .pass = pass };
	long th = uthread_start(db_write_fn, &w, 1, 1);
	if (th < 0)
		return th;
	while (!__atomic_load_n(&w.done, __ATOMIC_ACQUIRE))
		sys_yield();
	cap_delete(th);
	slot_release(th);
	return 0;
}

/* A writer that stays on its hart between commands, so its TLB keeps
 * what it cached: cmd = page index + 1 to write, -1 to stop; ack = the
 * last command done. */
struct db_spinner {
	volatile long cmd, ack;
};

static void db_spin_fn(void *a)
{
	struct db_spinner *w = a;
	long seen = 0;
	for (;;) {
		long c = __atomic_load_n(&w->cmd, __ATOMIC_ACQUIRE);
		if (c == seen)
			continue;
		if (c < 0)
			break;
		*(volatile uint64_t *)(DB + (uint64_t)(c >> 16) * PG + 16) = (uint64_t)c;
		seen = c;
		__atomic_store_n(&w->ack, c, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&w->ack, -1, __ATOMIC_RELEASE);
}

/* Page i written (by the spinner, or here with w NULL): round k. */
static void db_write_page(struct db_spinner *w, unsigned long i, long k)
{
	long c = (long)(i << 16) | k;
	if (!w) {
		*(volatile uint64_t *)(DB + i * PG + 16) = (uint64_t)c;
		return;
	}
	__atomic_store_n(&w->cmd, c, __ATOMIC_RELEASE);
	while (__atomic_load_n(&w->ack, __ATOMIC_ACQUIRE) != c)
		;
}

/* Write a page (its TLB entry now writable and dirty), clean it, write it
 * at once again: the second write must show as dirty. Without the
 * clean's flush the writer's TLB would still let it write without setting
 * the bit. From this hart, then from a thread spinning on hart 1. */
static int db_flush_check(char *why)
{
	struct db_spinner w = { 0 };
	long th = -1;
	int fail = 1;
	for (int remote = 0; remote < 2; remote++) {
		if (remote) {
			if (dbg(DBG_NCPUS, 0, 0) < 2)
				break;
			th = uthread_start(db_spin_fn, &w, 1, 1);
			CK(th >= 0, "spinner on hart 1: %s", err_name(th));
		}
		for (unsigned long i = 0; i < 64; i++) {
			uint64_t prot;
			struct region_op op = { .op = ROP_CLEAN, .va = DB + i * PG, .len = PG };
			db_write_page(remote ? &w : 0, i, 1);
			long r = region_txn(SLOT_SELF_AS, DB, DB + DB_PAGES * PG, &op, 1);
			prot = op.out_prot;
			CK(r == 1 && (prot & QF_DIRTY), "clean of page %lu: %ld %lx", i, r, prot);
			db_write_page(remote ? &w : 0, i, 2);
			struct region_op q = { .op = ROP_QUERY, .va = DB + i * PG };
			CK(region_txn(SLOT_SELF_AS, DB, DB + DB_PAGES * PG, &q, 1) == 1 &&
			   (q.out_prot & QF_DIRTY), "page %lu written %s right after its clean: not dirty",
			   i, remote ? "on hart 1" : "here");
		}
	}
	fail = 0;
out:
	if (th >= 0) {
		__atomic_store_n(&w.cmd, -1, __ATOMIC_RELEASE);
		while (__atomic_load_n(&w.ack, __ATOMIC_ACQUIRE) != -1)
			sys_yield();
		cap_delete(th);
		slot_release(th);
	}
	return fail;
}

/* The bad inputs, each refused before anything is read or written (the
 * window is all resident by now). */
static int db_bad(char *why)
{
	long sub = slot_alloc(), r;
	int fail = 1;
	uint64_t lo = DB, hi = DB + DB_PAGES * PG;
	CK(cap_mint(SLOT_SELF_AS, sub, R_ALL & ~R_QUERY, 0, lo, hi) == 0, "mint");
	CK((r = region_bitmap(sub, lo, hi, bm, 0)) == -E_PERM, "bitmap without R_QUERY: %s", err_name(r));
	cap_delete(sub);
	CK(cap_mint(SLOT_SELF_AS, sub, R_ALL & ~R_PROTECT, 0, lo, hi) == 0, "mint");
	struct region_op op = { .op = ROP_CLEAN, .va = lo, .len = PG };
	CK((r = region_txn(sub, lo, hi, &op, 1)) == -E_PERM, "clean without R_PROTECT: %s", err_name(r));
	CK((r = region_bitmap(sub, lo, hi, bm, 0)) == (long)DB_PAGES, "bitmap with R_QUERY alone: %ld", r);
	CK((r = region_bitmap(sub, lo - PG, hi, bm, 0)) == -E_RANGE, "bitmap outside the cap: %s", err_name(r));
	cap_delete(sub);
	CK((r = region_bitmap(SLOT_SELF_AS, lo + 8, hi, bm, 0)) == -E_INVAL, "unaligned lo: %s", err_name(r));
	CK((r = region_bitmap(SLOT_SELF_AS, lo, lo, bm, 0)) == -E_INVAL, "empty range: %s", err_name(r));
	CK((r = region_bitmap(SLOT_SELF_AS, lo, hi, bm, 1)) == -E_INVAL, "flags: %s", err_name(r));
	CK((r = region_bitmap(SLOT_SELF_AS, 0, (REGION_BITMAP_MAX_PAGES + 1) * PG, bm, 0)) == -E_RANGE,
	   "2^18 + 1 pages: %s", err_name(r));
	CK((r = region_bitmap(SLOT_SELF_AS, lo, hi, (uint64_t *)8, 0)) == -E_FAULT, "buffer at 8: %s",
	   err_name(r));
	CK((r = region_bitmap(SLOT_SELF_AS, lo, hi, (uint64_t *)~0xfffUL, 0)) == -E_FAULT,
	   "kernel buffer: %s", err_name(r));
	CK((r = region_bitmap(SLOT_SELF_AS, lo, hi, (uint64_t *)((char *)bm + 1), 0)) == -E_FAULT,
	   "unaligned buffer: %s", err_name(r));
	CK((r = region_bitmap(SLOT_SELF_AS + 1000, lo, hi, bm, 0)) == -E_BADCAP, "bad slot: %s", err_name(r));
	fail = 0;
out:
	cap_delete(sub);
	slot_release(sub);
	return fail;
}

int mm_dirty_bitmap(char *why)
{
	int fail = 1;
	long r, d;
	uint64_t prot;
	int two = dbg(DBG_NCPUS, 0, 0) > 1;
	CK(mem_reserve(DB, DB_PAGES * PG) == 0, "reserve");
	for (unsigned long i = 0; i < DB_PAGES; i++)
		if (written(i))
			*(volatile uint64_t *)(DB + i * PG) = i + 1;
		else if (read_only(i))
			(void)*(volatile uint64_t *)(DB + i * PG);
	uint64_t t0 = rdinstret();
	r = db_bitmap();
	uint64_t t1 = rdinstret();
	CK(r == (long)(DB_PAGES / 7 + 1 + DB_PAGES / 5 - DB_PAGES / 35), "resident count %ld", r);
	CK((d = db_differs(touched, written)) < 0, "after the writes and reads: page %ld: R%d A%d D%d", d,
	   bit(bm, d), bit(bm + DB_WORDS, d), bit(bm + 2 * DB_WORDS, d));
	/* a page dirty on hart 1 (its TLB holds the entry dirty) */
	if (two)
		CK(db_remote_write(1) == 0, "thread on hart 1");
	CK(db_clean(&prot) == 0 && (prot & QF_DIRTY), "clean: prot %lx", prot);
	CK(db_bitmap() == r, "resident after the clean");
	CK((d = db_differs(touched, none)) < 0, "after the clean: page %ld: R%d A%d D%d", d, bit(bm, d),
	   bit(bm + DB_WORDS, d), bit(bm + 2 * DB_WORDS, d));
	for (unsigned long i = 0; i < DB_PAGES; i++)   /* (reading others would fault them in) */
		CK(!touched(i) || *(volatile uint64_t *)(DB + i * PG) == (written(i) ? i + 1 : 0),
		   "page %lu lost its data", i);
	CK(db_clean(&prot) == 0 && !(prot & QF_DIRTY), "a second clean found dirt: %lx", prot);
	/* write again: exactly those pages are dirty again */
	for (unsigned long i = 0; i < DB_PAGES; i++)
		if (rewritten(i))
			*(volatile uint64_t *)(DB + i * PG) = i + 2;
	CK((d = db_bitmap()) == r, "resident after the rewrite: %ld, want %ld", d, r);
	CK((d = db_differs(touched, rewritten)) < 0, "after the rewrite: page %ld: D%d", d,
	   bit(bm + 2 * DB_WORDS, d));
	/* the measured clean: DB_PAGES resident pages, some dirty */
	uint64_t t2 = rdinstret();
	CK(db_clean(&prot) == 0 && (prot & QF_DIRTY), "clean after the rewrite");
	uint64_t t3 = rdinstret();
	if (two) {
		/* hart 1 writes again: its write must be seen dirty */
		CK(db_remote_write(2) == 0, "thread on hart 1");
		CK(db_bitmap() == r, "resident after the remote write");
		CK((d = db_differs(touched, remote)) < 0, "after hart 1's write: page %ld: D%d", d,
		   bit(bm + 2 * DB_WORDS, d));
	}
	printf("mm_dirty_bitmap: %lu pages, %ld resident: bitmap %lu instructions, clean %lu\n",
	       DB_PAGES, r, (unsigned long)(t1 - t0), (unsigned long)(t3 - t2));
	/* every page resident and dirty: the figures of docs/performance.md */
	for (unsigned long i = 0; i < DB_PAGES; i++)
		*(volatile uint64_t *)(DB + i * PG) = i + 3;
	t0 = rdinstret();
	r = db_bitmap();
	t1 = rdinstret();
	CK(r == (long)DB_PAGES && db_differs(touched_all, touched_all) < 0, "all written: %ld", r);
	CK(db_clean(&prot) == 0 && (prot & QF_DIRTY), "clean of all");
	t2 = rdinstret();
	CK(db_clean(&prot) == 0 && !(prot & QF_DIRTY), "clean of clean pages");
	t3 = rdinstret();
	/* what the same answers cost as ROP_QUERY, 16 a call */
	uint64_t t4 = rdinstret();
	for (unsigned long p = 0; p < DB_PAGES; p += REGION_MAX_OPS) {
		struct region_op q[REGION_MAX_OPS];
		for (unsigned k = 0; k < REGION_MAX_OPS; k++)
			q[k] = (struct region_op){ .op = ROP_QUERY, .va = DB + (p + k) * PG };
		CK(region_txn(SLOT_SELF_AS, DB + p * PG, DB + (p + REGION_MAX_OPS) * PG, q,
			      REGION_MAX_OPS) == REGION_MAX_OPS, "queries");
	}
	uint64_t t5 = rdinstret();
	printf("mm_dirty_bitmap: %lu resident dirty pages: bitmap %lu instructions, clean %lu, "
	       "clean again (nothing dirty) %lu, ROP_QUERY 16 a call %lu\n", DB_PAGES,
	       (unsigned long)(t1 - t0), (unsigned long)(t2 - t1), (unsigned long)(t3 - t2),
	       (unsigned long)(t5 - t4));
	fail = db_flush_check(why) || db_bad(why);
out:
	db_unmap();
	return fail;
}
