/* Suite 'mm': the core's queue locks (mm/core/qlock.c) through the host
 * platform's lock hooks, on their own, hammered by threads.
 *   test_qlock [--threads N] [--iters N]
 * Spin lock: a plain (non-atomic) counter bumped under the lock ends at
 * threads x iters, and no two threads are ever inside at once. Readers-
 * writer lock: a writer is inside only alone, readers only without a
 * writer; the writers' plain counter ends exact. ThreadSanitizer sees the
 * plain counters too. At the end both words are 0 (free, queue empty).
 * Exit 0 iff every check held. */
#include "host_platform.h"

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int nthreads = 4;
static long iters = 20000;
static mm_lock_t spin_word, rw_word;
static long spin_count, write_count;     /* plain: only under the locks */
static atomic_int spin_inside, readers_inside, writers_inside;
static atomic_int max_readers;
static atomic_int failed;

#define FAIL(...) do { fprintf(stderr, __VA_ARGS__); atomic_fetch_add(&failed, 1); } while (0)

static void spin_round(void)
{
	host_plat.spin_lock(&spin_word);
	if (atomic_fetch_add(&spin_inside, 1) != 0)
		FAIL("two threads inside the spin lock\n");
	spin_count++;
	atomic_fetch_sub(&spin_inside, 1);
	host_plat.spin_unlock(&spin_word);
}

/* Readers and writers yield inside now and then, so that sections
 * overlap even on a host with fewer cores than threads. */
static void read_round(bool linger)
{
	host_plat.read_lock(&rw_word);
	int r = atomic_fetch_add(&readers_inside, 1) + 1;
	if (atomic_load(&writers_inside))
		FAIL("a reader inside with a writer\n");
	int m = atomic_load(&max_readers);
	while (r > m && !atomic_compare_exchange_weak(&max_readers, &m, r))
		;
	if (linger)
		sched_yield();
	atomic_fetch_sub(&readers_inside, 1);
	host_plat.read_unlock(&rw_word);
}

static void write_round(bool linger)
{
	host_plat.write_lock(&rw_word);
	if (atomic_fetch_add(&writers_inside, 1) != 0 || atomic_load(&readers_inside))
		FAIL("a writer inside with someone else\n");
	write_count++;
	if (linger)
		sched_yield();
	atomic_fetch_sub(&writers_inside, 1);
	host_plat.write_unlock(&rw_word);
}

/* Thread i: all spin rounds, then rw rounds, one write in four. */
static void *worker(void *arg)
{
	long id = (long)arg;
	for (long k = 0; k < iters; k++)
		spin_round();
	for (long k = 0; k < iters; k++) {
		if ((k + id) % 4 == 0)
			write_round(k % 8 == 0);
		else
			read_round(k % 8 == 1);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--threads"))
			nthreads = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--iters"))
			iters = atol(argv[i + 1]);
	}
	if (nthreads < 1 || nthreads >= HOST_MAX_THREADS || iters < 1) {
		fprintf(stderr, "usage: test_qlock [--threads 1..%d] [--iters N]\n",
			HOST_MAX_THREADS - 1);
		return 2;
	}
	if (host_lock_select("queue")) {
		fprintf(stderr, "no queue locks\n");
		return 2;
	}
	pthread_t th[HOST_MAX_THREADS];
	for (long i = 0; i < nthreads; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)i)) {
			fprintf(stderr, "pthread_create\n");
			return 2;
		}
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	long writes = 0;
	for (long id = 0; id < nthreads; id++)
		for (long k = 0; k < iters; k++)
			writes += (k + id) % 4 == 0;
	if (spin_count != nthreads * iters)
		FAIL("spin count %ld, want %ld\n", spin_count, nthreads * iters);
	if (write_count != writes)
		FAIL("write count %ld, want %ld\n", write_count, writes);
	if (spin_word.v || rw_word.v)
		FAIL("lock words not free at the end: %#x %#x\n", spin_word.v, rw_word.v);
	printf("qlock: %d threads x %ld: %s (most readers inside at once: %d)\n", nthreads, iters,
	       atomic_load(&failed) ? "FAIL" : "ok", atomic_load(&max_readers));
	return atomic_load(&failed) ? 1 : 0;
}
