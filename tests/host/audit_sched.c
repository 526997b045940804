/* The audit's deterministic scheduler (see audit_sched.h). Each worker
 * waits on a semaphore of its own; the running worker posts the next
 * one's and waits on its own, so exactly one worker runs at any time. */
#include "audit_sched.h"
#include "testutil.h"

#include <errno.h>
#include <sched.h>
#include <semaphore.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

static int nworkers;
static sem_t go[AUDIT_MAX_THREADS];
static sem_t main_go;                /* posted by a worker that leaves */
static bool live[AUDIT_MAX_THREADS];
static int nlive;
static int leaving;                  /* the worker main is to join next */
static uint64_t rng;
static _Thread_local int self = -1;
static unsigned quantum;
static uint64_t left;                /* accesses until the next preemption */

/* Stop the program: the scheduler cannot go on after a failed call. */
static void die(const char *what)
{
	perror(what);
	abort();
}

void audit_sched_init(int n, uint64_t seed)
{
	if (n < 1 || n > AUDIT_MAX_THREADS) {
		fprintf(stderr, "audit: 1..%d threads\n", AUDIT_MAX_THREADS);
		exit(2);
	}
	nworkers = n;
	nlive = n;
	rng = seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull;
	if (!rng)
		rng = 1;
	for (int i = 0; i < n; i++) {
		live[i] = true;
		if (sem_init(&go[i], 0, 0))
			die("sem_init");
	}
	if (sem_init(&main_go, 0, 0))
		die("sem_init");
}

/* Wait on s, retrying when a signal interrupts the wait. */
static void wait_sem(sem_t *s)
{
	while (sem_wait(s))
		if (errno != EINTR)
			die("sem_wait");
}

void audit_sched_enter(int id)
{
	self = id;
	wait_sem(&go[id]);
}

int audit_self(void) { return self; }

void audit_switch(void)
{
	if (self < 0 || nlive < 2)
		return;
	/* the k-th live worker other than the caller */
	int k = (int)xorshift64_below(&rng, (uint64_t)(nlive - 1)), next = -1;
	for (int i = 0; i < nworkers; i++)
		if (live[i] && i != self && k-- == 0) {
			next = i;
			break;
		}
	if (sem_post(&go[next]))
		die("sem_post");
	wait_sem(&go[self]);
}

void audit_sched_quantum(unsigned q)
{
	quantum = q;
	left = q ? 1 + xorshift64_below(&rng, 2 * (uint64_t)q) : 0;
}

void audit_tick(void)
{
	if (self < 0 || !quantum || --left)
		return;
	left = 1 + xorshift64_below(&rng, 2 * (uint64_t)quantum);
	audit_switch();
}

void audit_sched_leave(void)
{
	live[self] = false;
	nlive--;
	leaving = self;
	self = -1;
	if (sem_post(&main_go))
		die("sem_post");
}

void audit_sched_run(const pthread_t *tids)
{
	if (sem_post(&go[0]))
		die("sem_post");
	for (int left = 0; left < nworkers; left++) {
		wait_sem(&main_go);
		pthread_join(tids[leaving], NULL);
		for (int i = 0; i < nworkers; i++)
			if (live[i]) {
				if (sem_post(&go[i]))
					die("sem_post");
				break;
			}
	}
}

/* ---- waits that hand the turn on (linked with --wrap) ---- */

int __real_sched_yield(void);
int __wrap_sched_yield(void);
int __real_pthread_mutex_lock(pthread_mutex_t *m);
int __wrap_pthread_mutex_lock(pthread_mutex_t *m);

/* A worker that would yield the CPU yields its turn instead. */
int __wrap_sched_yield(void)
{
	if (self < 0)
		return __real_sched_yield();
	audit_switch();
	return 0;
}

/* A worker that finds the mutex taken lets the others run until its
 * holder, which cannot run while the caller waits, has given it back. */
int __wrap_pthread_mutex_lock(pthread_mutex_t *m)
{
	if (self < 0)
		return __real_pthread_mutex_lock(m);
	int e;
	while ((e = pthread_mutex_trylock(m)) == EBUSY)
		audit_switch();
	return e;
}
