/* Support shared by the tests and the demos: kernel-counter checks, the
 * child roles of the fault-endpoint tests and pagerkill, small helpers. */
#ifndef USER_TESTLIB_H
#define USER_TESTLIB_H

#include <stdint.h>

struct kcounters;
struct region_op;

/* counters.c: counters once deferred frees (RCU) have drained; and
 * whether they are back where they were (tasks, threads, endpoints, caps,
 * and frames too when `frames`): 0, or 1 with why filled. */
void settled_counters(struct kcounters *out);
int pg_counters_back(const struct kcounters *a, int frames, char *why);
/* Frame objects, caps and tasks back where *before had them (settled):
 * 0, or 1 with the difference in why. */
int counters_objs_back(const struct kcounters *before, char *why);

/* util.c: empty a slot and give it back (no-op for -1; *s becomes -1);
 * rdtime ticks per second (DBG_TIMEBASE, cached); one region op on the
 * 4 KiB page at va: 0 or its error, the op as it came back in *out (may
 * be NULL). */
void slot_drop(long *s);
/* The type of the cap our parent gave at spawn (SLOT_GIVEN), 0 if none. */
int given_cap_type(void);
uint64_t ticks_per_sec(void);
long txn_one(long region, uint32_t op, uint32_t prot, uint64_t va, int64_t arg,
	     struct region_op *out);

/* watchdog.c: a thread that prints "<name>: FAIL: timed out (a task
 * hangs)" and ends the program with status 1 unless *done is set within
 * `seconds` (it runs when this returns: its thread slot, or the error);
 * and 8 KiB of stack grown now, so a later frame count is not moved by
 * it. For the demos that count the kernel's objects around children. */
long watchdog_start(const char *name, unsigned seconds, volatile int *done);
void touch_stack(void);

/* pgroles.c: the fault-endpoint test roles (selftest pg_*, pagerkill). */
enum { ROLE_PG_CLIENT = 96, ROLE_PG_PAGER };
#define PG_CLIENT_VA 0x5b000000UL   /* where a ROLE_PG_CLIENT child faults */
#define PG_FRAMES 512
#define BADGE_READY 0x4ead1ULL
#define BADGE_FAULT 0xfa17ULL
int pg_role(long arg);
long fault_ep_set(long target, long ep);
int pg_mark_pager(long region, uint64_t va, uint64_t len, uint64_t tag);
long pg_task_new(long self, long dst, long quota);   /* SYS_TASK_CREATE */
void pause_ms(long ms);
long pg_query_kind(uint64_t va, uint64_t *tag);
void pg_unmap(uint64_t va, uint64_t len);
/* Map a fresh frame at va holding v at offset off; its slot in *slot. */
long pg_map_frame_with(uint64_t va, uint64_t off, uint64_t v, long *slot);

#endif
