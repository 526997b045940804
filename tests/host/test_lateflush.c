/* The late TLB flush of a commit (mm/core/cursor.c), checked with a flush
 * that blocks until the test lets it go.
 *
 *   test_lateflush --arch A --mm rw|adv [--locked]
 *
 * Two 4 KiB pages a and b share one leaf table. Thread T1 unmaps a; its
 * flush blocks. While it is blocked:
 *  - a transaction over b (same leaf table, other addresses) completes:
 *    the commit dropped its locks before flushing;
 *  - a transaction over a does not get through mm_lock: it waits for the
 *    flush still in flight over its range, and gets through once that
 *    flush returned.
 * --locked sets as.flush_locked (flush before the locks drop, as a
 * two-level MM does): then the transaction over b must wait too, which
 * shows that the first check can fail. */
#include "arch_registry.h"
#include "host_platform.h"
#include "testutil.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PG MM_PAGE_SIZE

static struct mm_as as;
static uint64_t va_a, va_b;
static atomic_int in_flush, let_go, b_done, a_locked, a_flushed;
static unsigned long fails;

static void check_failed(void)
{
	fails++;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* Wait up to ms for *flag; its final value. */
static int wait_flag(atomic_int *flag, long ms)
{
	for (long t = 0; t < ms && !atomic_load(flag); t++)
		sleep_ms(1);
	return atomic_load(flag);
}

/* The flush of a blocks until the test sets let_go. */
static void blocking_flush(struct mm_as *a, uint64_t start, uint64_t end)
{
	(void)a;
	if (start <= va_a && va_a < end && !atomic_load(&let_go)) {
		atomic_store(&in_flush, 1);
		while (!atomic_load(&let_go))
			sleep_ms(1);
		atomic_store(&a_flushed, 1);
	}
}

static int map_one(uint64_t va)
{
	struct mm_cursor c;
	uint64_t pa = host_frame_alloc(1);
	if (pa == MM_NOFRAME || mm_lock(&c, &as, va, va + PG) != MM_OK)
		return -1;
	int r = mm_map(&c, va, pa, 1, MM_PROT_R | MM_PROT_W | MM_PROT_U, 0);
	mm_release(&c);
	return r;
}

static void *unmap_a(void *arg)
{
	(void)arg;
	struct mm_cursor c;
	if (mm_lock(&c, &as, va_a, va_a + PG) == MM_OK) {
		CHECK(mm_unmap(&c, va_a, PG) == MM_OK, "unmap a failed");
		mm_release(&c);
	}
	host_pool_drain();    /* this thread's pool of zeroed frames */
	return NULL;
}

static void *touch_b(void *arg)
{
	(void)arg;
	struct mm_cursor c;
	struct mm_info info;
	if (mm_lock(&c, &as, va_b, va_b + PG) == MM_OK) {
		CHECK(mm_query(&c, va_b, &info) == MM_OK && info.kind == MM_MAPPED, "b not mapped");
		mm_release(&c);
	}
	atomic_store(&b_done, 1);
	host_pool_drain();
	return NULL;
}

static void *lock_a(void *arg)
{
	(void)arg;
	struct mm_cursor c;
	struct mm_info info;
	if (mm_lock(&c, &as, va_a, va_a + PG) == MM_OK) {
		/* Anything seen from here on must be past a's flush. */
		CHECK(atomic_load(&a_flushed), "a locked while its flush was still in flight");
		atomic_store(&a_locked, 1);
		CHECK(mm_query(&c, va_a, &info) == MM_OK && info.kind == MM_INVALID,
		      "a still mapped");
		mm_release(&c);
	}
	host_pool_drain();    /* this thread's pool of zeroed frames */
	return NULL;
}

int main(int argc, char **argv)
{
	const char *arch = "sv48", *proto = "adv";
	int locked = 0;
	if (mm_arch_list_requested(argc, argv))
		return 0;
	for (int i = 1; i < argc; i++) {
		if (arg_arch_mm(argc, argv, &i, &arch, &proto))
			continue;
		if (!strcmp(argv[i], "--locked"))
			locked = 1;
		else {
			fprintf(stderr, "usage: test_lateflush --arch %s --mm rw|adv [--locked]\n",
				mm_arch_names());
			return 2;
		}
	}
	const struct pt_arch *A = mm_arch_by_name(arch);
	const struct mm_protocol *P = mm_proto_by_name(proto);
	if (!A || !P || P->flush_under_locks) {
		fprintf(stderr, "test_lateflush: bad --arch or --mm (rw or adv)\n");
		return 2;
	}
	host_init((size_t)1 << 12);
	if (mm_as_init(&as, A, P, &host_plat, A->user_lo, A->user_last, NULL) != MM_OK) {
		fprintf(stderr, "test_lateflush: as_init failed\n");
		return 1;
	}
	as.flush_locked = locked;
	va_a = 1ull << 30;       /* a and b: neighbours in one leaf table */
	va_b = va_a + PG;
	CHECK(map_one(va_a) == MM_OK && map_one(va_b) == MM_OK, "setting up a and b failed");
	host_tlb_hook = blocking_flush;

	pthread_t t1, tb, ta;
	pthread_create(&t1, NULL, unmap_a, NULL);
	CHECK(wait_flag(&in_flush, 5000), "the flush of a never started");
	pthread_create(&tb, NULL, touch_b, NULL);
	pthread_create(&ta, NULL, lock_a, NULL);
	int b_early = wait_flag(&b_done, locked ? 300 : 5000);
	int a_early = atomic_load(&a_locked);
	if (locked)
		CHECK(!b_early, "--locked: b got through while a's flush held the leaf lock");
	else
		CHECK(b_early, "b waited for a's flush: the commit flushed before dropping its locks");
	CHECK(!a_early, "a was locked again while its flush was in flight");
	atomic_store(&let_go, 1);
	pthread_join(t1, NULL);
	pthread_join(tb, NULL);
	pthread_join(ta, NULL);
	CHECK(atomic_load(&b_done) && atomic_load(&a_locked), "a transaction never finished");
	host_tlb_hook = NULL;

	mm_as_destroy(&as);
	host_rcu_barrier();
	host_pool_drain();
	CHECK(host_frames_used() == 0, "%zu frames not returned", host_frames_used());
	host_fini();
	printf("test_lateflush %s %s%s: %s\n", A->name, P->name, locked ? " locked" : "",
	       fails ? "FAILED" : "ok");
	return fails ? 1 : 0;
}
