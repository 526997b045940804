/* pagerkill: a pager dies while its client waits in a page fault.
 *
 * Two rounds, each with a pager child task (ROLE_PG_PAGER) that holds the
 * only cap able to receive on the fault endpoint, and a client child task
 * (ROLE_PG_CLIENT) whose task fault endpoint it is:
 *   1. the pager has received the client's fault and never answers (it
 *      waits in a call to us); we kill the pager: the client's fault call
 *      fails (E_DEAD) and the kernel kills the client (EXIT_TRAP of its
 *      read fault);
 *   2. the pager never receives, so the client's fault call is queued on
 *      the endpoint; we kill the pager: nobody can receive there any more,
 *      so the queued call fails at once and the client is killed.
 * Then every child is reaped and the kernel's counters must be back where
 * they were. Last line `pagerkill: kernel alive`, exit 0; otherwise a
 * reason line and exit 1. A watchdog thread fails the run after 30 s
 * instead of hanging. */
#include "ulib.h"
#include "testlib.h"
#include <patina/pager.h>

#define PK_FRAMES 256
#define B_FAULT 0xfa17ULL
#define B_PAGER 0x9a9eULL
#define B_READY 0x4ead1ULL

static volatile int pk_done;

#define PK_CHECK(c, ...) do { if (!(c)) { snprintf(why, 160, __VA_ARGS__); return 1; } } while (0)

static int round_once(int queued, char *why)
{
	long fep = slot_alloc(), note = slot_alloc(), fe = slot_alloc(), pn = slot_alloc(),
	     rd = slot_alloc(), pager = slot_alloc(), client = slot_alloc();
	PK_CHECK(fep >= 0 && client >= 0, "out of slots");
	PK_CHECK(ep_create(fep) == 0 && ep_create(note) == 0, "ep_create");
	PK_CHECK(cap_mint(fep, fe, R_SEND, B_FAULT, 0, 0) == 0, "mint the fault cap");
	PK_CHECK(cap_mint(note, pn, R_SEND, B_PAGER, 0, 0) == 0 &&
		 cap_mint(note, rd, R_SEND, B_READY, 0, 0) == 0, "mint the notify caps");
	/* The pager gets the fault endpoint (with RECV); we keep no receive
	 * right on it, so the pager's death leaves nobody who can receive. */
	long r = task_spawn(self_module(), ROLE_PG_PAGER | ((long)queued << 8), pager, PK_FRAMES, fep);
	PK_CHECK(r == 0, "spawn the pager: %s", err_name(r));
	uint64_t w[4] = { 0 };
	long fep_send = slot_alloc();
	PK_CHECK(cap_mint(fep, fep_send, R_SEND | R_GRANT, 0, 0, 0) == 0, "mint a grant cap");
	cap_delete(fep);
	struct sysret s = ipc(SYS_CALL, fep_send, w, pn);    /* hand the pager its notify cap */
	PK_CHECK(s.a0 == 0, "handshake with the pager: %s", err_name(s.a0));
	cap_delete(fep_send), cap_delete(pn);
	slot_release(fep_send);

	r = task_spawn(self_module(), ROLE_PG_CLIENT, client, PK_FRAMES, rd);
	PK_CHECK(r == 0, "spawn the client: %s", err_name(r));
	PK_CHECK(fault_ep_set(client, fe) == 0, "set the client's fault endpoint");
	cap_delete(rd), cap_delete(fe);
	/* Two messages arrive on note: the client's "ready" and the pager's
	 * report (the fault it holds, or in the queued round that it is up). */
	int ready = 0, reported = 0;
	while (!ready || !reported) {
		s = ipc(SYS_RECV, note, w, SLOT_NONE);
		PK_CHECK(s.a0 == 0, "recv on note: %s", err_name(s.a0));
		if ((uint64_t)s.a5 == B_READY) {
			ready = 1;
			PK_CHECK(ipc(SYS_REPLY, 0, w, SLOT_NONE).a0 == 0, "answer ready");
		} else if ((uint64_t)s.a5 == B_PAGER) {
			reported = 1;     /* never answered: the pager stays blocked */
			if (!queued) {
				PK_CHECK((uint64_t)s.a1 == PG_CLIENT_VA && FAULT_ACCESS(s.a2) == FA_READ &&
					 (uint64_t)s.a4 == B_FAULT,
					 "pager got address %lx access %lx badge %lx", s.a1, s.a2, s.a4);
				printf("pagerkill: client faulted at %lx, pager holds it\n", s.a1);
			}
		} else {
			PK_CHECK(0, "unexpected badge %lx", s.a5);
		}
	}
	if (queued) {
		/* Let the client's fault call queue on the endpoint. */
		uint64_t t = rdtime() + 3 * ticks_per_sec() / 100;
		while (rdtime() < t)
			sys_yield();
	}
	PK_CHECK(task_kill(pager) == 0, "kill the pager");
	printf("pagerkill: pager killed%s\n", queued ? " (fault still queued)" : "");
	long st = task_wait(client);
	PK_CHECK(st == EXIT_TRAP(TRAP_READ_FAULT), "client ended with %ld, wanted %d (killed by its read fault)",
		 st, EXIT_TRAP(TRAP_READ_FAULT));
	printf("pagerkill: client killed, status %ld\n", st);
	st = task_wait(pager);
	PK_CHECK(st == 137, "pager ended with %ld", st);
	/* A call on the fault endpoint now fails at once. */
	struct cap_info ci;
	PK_CHECK(cap_info(note, &ci) == 0, "note cap");
	cap_delete(pager), cap_delete(client), cap_delete(note);
	slot_release(fep), slot_release(note), slot_release(fe), slot_release(pn), slot_release(rd),
		slot_release(pager), slot_release(client);
	return 0;
}

int cmd_pagerkill(int argc, char **argv)
{
	if (argc > 1)
		return prog_usage("pagerkill (no options)");
	(void)argv;
	char why[160];
	why[0] = 0;
	/* The watchdog runs from before the first count to after the last, and
	 * our stack is grown first: only the children can move the counters. */
	pk_done = 0;
	long wd = watchdog_start("pagerkill", 30, &pk_done);
	if (wd < 0) {
		printf("pagerkill: FAIL: no watchdog thread (%s)\n", err_name(wd));
		return 1;
	}
	touch_stack();
	struct kcounters before;
	settled_counters(&before);
	int bad = round_once(0, why) || round_once(1, why);
	if (!bad && pg_counters_back(&before, 1, why))
		bad = 1;
	struct kcounters after;
	settled_counters(&after);
	pk_done = 1;
	cap_delete(wd);
	slot_release(wd);
	if (bad) {
		printf("pagerkill: FAIL: %s\n", why);
		return 1;
	}
	printf("pagerkill: counters back (free frames %lu, tasks %lu, threads %lu, endpoints %lu)\n",
	       after.free_frames, after.tasks, after.threads, after.endpoints);
	printf("pagerkill: kernel alive\n");
	return 0;
}

int main(int argc, char **argv)
{
	if (spawn_arg())
		return pg_role((long)spawn_arg());
	return cmd_pagerkill(argc, argv);
}
