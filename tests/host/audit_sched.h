/* A deterministic scheduler for the coherence audit: n worker pthreads
 * run one at a time, and the turn passes only at the points the audit
 * chooses (audit_switch), to a worker drawn from a seeded generator. So
 * two runs with the same seed interleave the workers' code the same way
 * and make the same memory accesses in the same order, however the host
 * schedules its threads and however many cores it has.
 *
 * Waiting must go through the scheduler: the program is linked with
 * -Wl,--wrap=sched_yield,--wrap=pthread_mutex_lock, so a worker that
 * spins (the host platform's relax calls sched_yield) or finds a mutex
 * taken hands the turn on instead of waiting for a worker that cannot run. */
#ifndef AUDIT_SCHED_H
#define AUDIT_SCHED_H

#include <pthread.h>
#include <stdint.h>

#define AUDIT_MAX_THREADS 64

/* Prepare for n workers (1..AUDIT_MAX_THREADS), the draws seeded by seed. */
void audit_sched_init(int n, uint64_t seed);
/* A worker's first call: become worker id and wait for the first turn. */
void audit_sched_enter(int id);
/* The calling worker's id, or -1 outside the workers (the main thread). */
int audit_self(void);
/* Give the turn to another live worker, drawn from the seeded generator,
 * and return when the turn comes back; returns at once when the caller
 * is the only live worker, or is not a worker. */
void audit_switch(void);
/* Preemption: with quantum q > 0, the running worker hands the turn on
 * after a seeded draw of 1..2q observed accesses (audit_tick); 0: only at
 * the points where workers wait or call audit_switch. Call before the
 * workers start. */
void audit_sched_quantum(unsigned q);
/* Called by every observed access: counts down the quantum and switches
 * when it runs out. A no-op outside the workers. */
void audit_tick(void);
/* A worker's last call: it runs nothing the audit observes after this but
 * its thread's exit. The main thread joins it before any other worker
 * runs again. */
void audit_sched_leave(void);
/* Main thread: give the first turn to worker 0, then join the workers
 * (tids[0..n-1]) one at a time as they leave, resuming the lowest live
 * one after each, so that each thread's exit (its TLS destructors, which
 * the host platform has) runs alone. Returns when all have been joined. */
void audit_sched_run(const pthread_t *tids);

#endif
