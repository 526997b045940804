/* libpager: everything a user-level pager needs around its own logic.
 *
 * A pager owns an endpoint. pager_attach makes a range of a client task
 * pager-managed and routes the client's faults and its death to that
 * endpoint in one call; pager_serve receives and dispatches: each fault
 * reaches the pager's `fault` callback as a typed struct pager_fault
 * (client, offset in the range, access kind, the page's status), and the
 * callback fixes the page with the range helpers below (pager_supply,
 * pager_map, pager_zero ...) and returns PAGER_RESUME, PAGER_KILL or
 * PAGER_DEFER (answer later with pager_resume). A fault on a page that a
 * racing fault of another thread has mapped meanwhile resumes as soon as
 * the callback's map finds the page mapped (it returns that -E_EXIST):
 * no page is made or mapped twice. A client that dies has its deferred
 * faults dropped (their reply caps freed at once), then `client_gone`
 * called, then its range detached.
 *
 * Asynchronous mode (pager_set_async; docs/pagers.md "Asynchronous
 * faults"): clients attached after it send their faults as notices, not
 * calls. Nothing is replied: the page the callback fixes wakes every
 * thread waiting on it, so a deferred fault holds no reply cap (and no
 * slot) and any number may be outstanding; pager_resume then just frees
 * the record (the fix already woke the threads) and pager_kill refuses
 * the page (SYS_FAULT_KILL). One fault arrives per page, however many
 * threads wait on it.
 *
 * One thread serves a pager: no callback runs concurrently with another.
 * Tutorial: docs/writing-a-pager.md. */
#ifndef PATINA_LIBPAGER_H
#define PATINA_LIBPAGER_H

#include <stdint.h>
#include <patina/cap.h>
#include <patina/pager.h>

struct pager;
struct pager_client;

/* A fault as the pager sees it. */
struct pager_fault {
	struct pager_client *client;  /* NULL once the client died (pager_resume then frees it) */
	uint64_t offset;     /* of the faulting page, from the start of the client's range */
	uint64_t addr;       /* the faulting address in the client */
	unsigned access;     /* FA_READ, FA_WRITE or FA_EXEC */
	unsigned kind;       /* the page's status when it faulted: RK_PAGER, RK_SWAPPED, ... */
	unsigned prot;       /* PROT_* the range gives the page */
	uint64_t tag;        /* the page's tag or swap slot */
	long thread;         /* the faulting thread's id, for logs */
	/* libpager's own: */
	struct pager *pager;
	long reply;          /* saved reply cap while deferred, else -1 */
	int async;           /* an asynchronous fault: nothing to reply to */
	struct pager_fault *next;
};

enum { PAGER_RESUME = 0, PAGER_KILL = 1, PAGER_DEFER = 2 };

struct pager_ops {
	/* Serve f (required). Return PAGER_RESUME once the page allows
	 * f->access, PAGER_KILL (or any negative error) to kill the client,
	 * or PAGER_DEFER to keep the faulting thread waiting: f stays valid
	 * until pager_resume(f) or pager_kill(f). */
	int (*fault)(struct pager *pg, struct pager_fault *f);
	/* The client died with `status` (optional). Its range is detached
	 * and its struct freed after this returns; its deferred faults have
	 * client == NULL. */
	void (*client_gone)(struct pager *pg, struct pager_client *c, long status);
	/* Any other message on the endpoint (badge below PAGER_BADGE_MIN;
	 * optional): return 1 with reply[] filled to answer a call, 0 for no
	 * answer, or < 0 to end pager_serve with that value. */
	long (*message)(struct pager *pg, uint64_t badge, const uint64_t w[4], uint64_t reply[4]);
};

/* Badges at or above this are libpager's (faults and death notices). */
#define PAGER_BADGE_MIN (1ULL << 61)

struct pager_client {
	struct pager *pager;
	uint64_t base, len;       /* the range, in the client's address space */
	long region;              /* our region cap over exactly that range */
	long task;                /* the client's task cap (the caller's slot) */
	void *data;               /* the pager's own, from pager_attach */
	unsigned long faults;     /* faults of this client served */
	/* libpager's own: */
	unsigned id;
	int async;                /* attached in asynchronous mode */
	struct pager_client *next;
};

struct pager {
	long ep;                  /* the endpoint (a slot of ours) */
	const struct pager_ops *ops;
	void *data;               /* the pager's own, from pager_init */
	struct pager_client *clients;
	unsigned next_id, live;   /* clients attached and not gone */
	int stop;
	int async;                /* attach clients in asynchronous mode (pager_set_async) */
	struct pager_fault *deferred;
	struct pager_fault *spare;    /* the record the next fault is read into */
	/* What happened so far. */
	unsigned long faults, racing, killed, deferrals, deaths;
};

/* Make a pager with a fresh endpoint. 0, or an error (nothing made). */
long pager_init(struct pager *pg, const struct pager_ops *ops, void *data);
/* Detach every client, drop deferred faults, delete the endpoint. */
void pager_fini(struct pager *pg);

/* Attach [base, base + len) (4 KiB aligned) of the task behind task cap
 * `task` (R_CONTROL): the range becomes pager-managed with rights prot
 * (PROT_*; its pages forgotten), the task's faults come to this pager,
 * and so does its death. One range per client task and pager. The client
 * or NULL with *err set; a failure leaves the task as it was. */
struct pager_client *pager_attach(struct pager *pg, long task, uint64_t base, uint64_t len,
				  unsigned prot, void *data, long *err);
/* Undo pager_attach for a live client: its faults and death no longer
 * come here, its range is unmapped and left invalid. 0 or an error. */
long pager_detach(struct pager_client *c);

/* Clients attached from now on fault asynchronously (on: 1) or with
 * calls (0, the default). */
void pager_set_async(struct pager *pg, int on);

/* Receive and dispatch until a callback calls pager_stop (0; a pending
 * answer is sent first) or a receive fails (its error). A pager whose
 * clients come and go (attached from `message`) stops when it decides to. */
long pager_serve(struct pager *pg);
void pager_stop(struct pager *pg);

/* Answer a deferred fault: resume the thread, or kill the client.
 * 0, -E_DEAD if the client died meanwhile; f is freed either way. */
long pager_resume(struct pager_fault *f);
long pager_kill(struct pager_fault *f);

/* A fresh frame holding a copy of the 4 KiB at src (NULL: zeros), its
 * cap minted down to `rights` (R_READ | R_SHARE: a read-only frame any
 * number of clients may map) in a new slot *slot. 0 or an error. */
long pager_frame_new(const void *src, unsigned rights, long *slot);

/* A page cache of n frame caps, each slot empty (-1): the array (free it
 * with pager_cache_free), or NULL when out of memory. */
long *pager_cache_new(unsigned long n);
/* Delete every frame cap the cache holds, free it. */
void pager_cache_free(long *cache, unsigned long n);

/* Range helpers: off is an offset in c's range (4 KiB aligned), len a
 * multiple of 4 KiB. Each is one region transaction, locking only the
 * pages it names; 0 or an error (-E_RANGE outside the range). */
long pager_supply(struct pager_client *c, uint64_t off, const void *src, unsigned prot);
long pager_map(struct pager_client *c, uint64_t off, long frame, unsigned prot);
long pager_zero(struct pager_client *c, uint64_t off, uint64_t len, unsigned prot);
long pager_unmap(struct pager_client *c, uint64_t off, uint64_t len);
long pager_protect(struct pager_client *c, uint64_t off, uint64_t len, unsigned prot);
long pager_query(struct pager_client *c, uint64_t off, struct region_op *out);
/* Move npages (1..SUPPLY_MAX_PAGES) pages mapped at src_va of our own
 * space into c's range at off, no copy: our pages become invalid, the
 * client's map the same frames with prot (their quota charge moves to
 * the client). Each of our pages must be a 4 KiB mapping whose frame only
 * it holds (-E_BUSY), each of the client's pages not mapped (-E_EXIST);
 * all or nothing. 512 contiguous frames from region_alloc_contig at a
 * 2 MiB-aligned client page become one 2 MiB leaf. Pages supplied beyond
 * the faulting one are read-ahead: their first touches do not fault. */
long pager_supply_range(struct pager_client *c, uint64_t off, uint64_t src_va, unsigned npages,
			unsigned prot);
/* Up to REGION_MAX_OPS region ops on c's range as one transaction (one
 * TLB shootdown for all its downgrades): each op's va is an offset in the
 * range, as in the helpers above, and reads so again after the call, with
 * each op's outputs and result filled in. Locks the span the ops cover.
 * 0 when every op succeeded; else the call's error (-E_RANGE for an op
 * outside the range: nothing done) or the first op's own result that is
 * not 0 (every op ran on its own: check each op's result). */
long pager_txn(struct pager_client *c, struct region_op *ops, unsigned n);

#endif
