/* The pager protocol: fault messages and their replies.
 *
 * A fault the kernel cannot resolve in a thread that has a fault endpoint
 * (SYS_FAULT_EP_SET) becomes a call on that endpoint made by the faulting
 * thread: the pager receives the words below and the badge of the fault
 * endpoint cap (a5), fixes the client's memory with region transactions,
 * and replies FAULT_RESUME (the access is retried) or FAULT_KILL (the
 * client task is killed). Any other reply, a pager that dies, or an
 * endpoint nobody can receive on any more kills the client. */
#ifndef PATINA_PAGER_H
#define PATINA_PAGER_H

#include <stdint.h>

/* w[0]: faulting address. w[1]: the access, one FA_* (the same on every
 * ISA; the bits above FAULT_ACCESS are 0). w[2]: the page's status word
 * (FAULT_STATUS_*). w[3]: the faulting thread's id (for the pager's log;
 * not a capability). A client the pager does not resume ends with
 * EXIT_TRAP(TRAP_READ_FAULT / TRAP_WRITE_FAULT / TRAP_EXEC_FAULT) for
 * FA_READ / FA_WRITE / FA_EXEC (patina/syscall.h). */
#define FA_READ  1u
#define FA_WRITE 2u
#define FA_EXEC  4u
#define FAULT_ACCESS(w1)   ((unsigned)((w1) & 0xff))
/* Status word: kind (enum region_kind) | prot << 8 | tag or slot << 16.
 * Kind RK_OBJECT: a memory object's page (patina/mobj.h), on the
 * object's endpoint with the object's badge in a5; the tag is the object
 * page's offset, prot the mapping's permissions. */
#define FAULT_STATUS_KIND(w2) ((unsigned)((w2) & 0xff))
#define FAULT_STATUS_PROT(w2) ((unsigned)(((w2) >> 8) & 0xff))
#define FAULT_STATUS_TAG(w2)  ((w2) >> 16)

/* Reply word 0. */
#define FAULT_RESUME 0
#define FAULT_KILL   1

/* Asynchronous faults (docs/pagers.md "Asynchronous faults").
 * SYS_FAULT_EP_SETF(target, ep, FAULT_EP_ASYNC) makes the setting
 * asynchronous: a fault sends no call; the faulting thread sleeps on its
 * page, and the kernel queues one message per waited-on page on the
 * endpoint, received by SYS_RECV / SYS_REPLY_RECV like a SYS_SEND
 * (nothing to reply to; no cap slot per fault): a5 = the fault endpoint
 * cap's badge, w0 = MSG_FAULT, w1 = the faulting address, w2 = the
 * page's status word, w3 = the access (FAULT_ACCESS) | the faulting
 * thread's id << 8 (FAULT_THREAD). Threads that fault on a page already
 * waited on send nothing and wait with the others. Any commit that makes
 * pages present (SYS_REGION_TXN with a MAP, MARK or PROTECT op,
 * SYS_REGION_SUPPLY, SYS_REGION_CLONE) wakes every thread waiting on a
 * page of its range; each retries its access. SYS_FAULT_KILL(region, va)
 * refuses the page: its threads' task ends with EXIT_TRAP(kind), and so
 * it does when nobody can receive on the endpoint any more. A memory
 * object made with MOBJ_ASYNC sends the same message for an object page,
 * shared by every task that maps it (patina/mobj.h). */
#define FAULT_EP_ASYNC 1u
#define MSG_FAULT 0xfa017fa0UL
#define FAULT_THREAD(w3) ((long)((w3) >> 8))

/* SYS_REGION_CLONE's report. */
struct clone_stats {
	uint64_t pt_pages;    /* page-table pages created in the destination */
	uint64_t frames;      /* frames now shared copy-on-write */
	uint64_t statuses;    /* reserved / pager / swapped entries copied */
	uint64_t skipped;     /* empty subtrees skipped by entry counts */
};

#endif
