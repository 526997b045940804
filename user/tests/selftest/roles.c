/* Child-task roles of the selftest program (see selftest.h). */
#include "ulib.h"
#include "selftest.h"

static int echo_server(void)
{
	if (given_cap_type() != CAP_ENDPOINT)
		return 3;
	uint64_t w[4] = { 0 };
	struct sysret r = ipc(SYS_RECV, SLOT_GIVEN, w, SLOT_NONE);
	for (;;) {
		if (r.a0)
			return 4;
		w[0] = (uint64_t)r.a1 + 1;
		w[1] = (uint64_t)r.a5;    /* echo the badge back */
		w[2] = (uint64_t)self_hart();
		w[3] = 0;
		if ((uint64_t)r.a1 == ~0ULL) {
			ipc(SYS_REPLY, 0, w, SLOT_NONE);
			return 0;
		}
		r = ipc(SYS_REPLY_RECV, SLOT_GIVEN, w, SLOT_NONE);
	}
}

/* Isolation probe: nothing but our own caps is reachable; the parent's
 * address (arg >> 8) is not mapped here, so touching it kills us. */
static int probe(uint64_t arg)
{
	struct region_op op = { .op = ROP_QUERY, .va = 0x30000000 };
	if (region_txn(SLOT_GIVEN, 0x30000000, 0x30001000, &op, 1) != -E_BADCAP)
		return 50;
	for (long s = SLOT_GIVEN; s < CSPACE_MAX_SLOTS; s++) {
		struct cap_info ci;
		if (cap_info(s, &ci) != -E_BADCAP || cap_copy(s, 63) != -E_BADCAP)
			return 51;
	}
	volatile uint64_t *p = (volatile uint64_t *)(arg >> 8);
	return (int)(*p & 0x7f) + 52;    /* must not get here */
}

static int hog(void)
{
	for (int i = 0; i < 3; i++)
		if (ep_create(slot_alloc()))
			return 10;
	for (int i = 0; i < 4; i++)
		if (frame_alloc(slot_alloc()))
			return 11;
	if (mem_reserve(0x30000000, 0x40000))
		return 12;
	for (uint64_t a = 0x30000000; a < 0x30040000; a += 4096)
		*(volatile uint64_t *)a = a;
	long ep = slot_alloc();
	if (ep_create(ep))
		return 13;
	uint64_t w[4] = { 0 };
	ipc(SYS_RECV, ep, w, SLOT_NONE);   /* nobody sends: blocks until killed */
	return 14;
}

static int share(void)
{
	if (given_cap_type() != CAP_REGION)
		return 20;
	long f = slot_alloc();
	if (frame_alloc(f))
		return 21;
	struct cap_info ci;
	cap_info(SLOT_GIVEN, &ci);
	struct region_op op = { .op = ROP_MAP, .prot = PROT_R | PROT_W, .va = ci.lo, .arg = f };
	if (region_txn(SLOT_GIVEN, ci.lo, ci.hi, &op, 1) != 1)
		return 22;
	struct region_op mine = { .op = ROP_MAP, .prot = PROT_R | PROT_W, .va = 0x31000000, .arg = f };
	if (region_txn(SLOT_SELF_AS, 0x31000000, 0x31001000, &mine, 1) != 1)
		return 23;
	*(volatile uint64_t *)0x31000000 = 0xfeed;
	/* Outside the minted range: refused. */
	op.va = ci.hi;
	if (region_txn(SLOT_GIVEN, ci.hi, ci.hi + 4096, &op, 1) != -E_RANGE)
		return 24;
	return 0;
}

/* --- roles of the sec_* tests (sec_tests.c) --- */

/* Parks a thread: a receive nobody answers. */
static void sec_park(void *a)
{
	uint64_t w[4] = { 0 };
	ipc(SYS_RECV, (long)a, w, SLOT_NONE);
	for (;;)
		sys_yield();
}

/* ROLE_SEC_IPC_STORM: every thread forever entering IPC (servers
 * answering, clients calling one endpoint) until the parent kills us. */
static void storm_server(void *a)
{
	uint64_t w[4] = { 0 };
	ipc(SYS_RECV, (long)a, w, SLOT_NONE);
	for (;;)
		ipc(SYS_REPLY_RECV, (long)a, w, SLOT_NONE);
}

static void storm_client(void *a)
{
	uint64_t w[4] = { 1, 2, 3, 4 };
	for (;;)
		ipc(SYS_CALL, (long)a, w, SLOT_NONE);
}

static int sec_ipc_storm(void)
{
	long ep = slot_alloc();
	if (ep < 0 || ep_create(ep))
		return 1;
	for (int i = 0; i < 2; i++)
		if (uthread_start(storm_server, (void *)ep, -1, 1) < 0)
			return 2;
	for (int i = 0; i < 3; i++)
		if (uthread_start(storm_client, (void *)ep, -1, 1) < 0)
			return 3;
	storm_client((void *)ep);
	return 4;
}

/* Create threads (each parks) until the kernel refuses: exit status =
 * threads created * 100 + the error code. */
static int sec_threads(void)
{
	long ep = slot_alloc();
	if (ep < 0 || ep_create(ep))
		return 1;
	int n = 0;
	long r;
	while ((r = uthread_start(sec_park, (void *)ep, -1, 1)) >= 0)
		if (++n > 50)
			return 2;
	return n * 100 + (int)-r;
}

/* Create endpoints until the kernel refuses: endpoints * 100 + error. */
static int sec_eps(void)
{
	int n = 0;
	long r;
	while ((r = ep_create(slot_alloc())) == 0)
		if (++n > 50)
			return 2;
	return n * 100 + (int)-r;
}

static __attribute__((noinline)) void sec_touch_stack(void)
{
	volatile char buf[8192];
	for (int i = 0; i < (int)sizeof buf; i += 512)
		buf[i] = 0;
}

/* Page-table pages against the frame quota: transactions of 16 one-page
 * reservations, 1 GiB apart and 1 MiB on from one transaction to the next
 * (under CortenMM each needs fresh PT pages; under mm=vma each is a VMA of
 * its own, and VMA nodes are charged by the frame), until one is refused
 * with E_QUOTA. A transaction applies all its ops or none: the usage after
 * the refusal must be the usage before it. Then the refused ops are
 * applied one at a time: they must not all fit (else the refusal was
 * spurious). Reports through the frame given at spawn (mapped at
 * SEC_PT_SHARE_VA, layout SEC_PT_* in selftest.h), then blocks for good. */
static int sec_pt(void)
{
	if (given_cap_type() != CAP_FRAME)
		return 40;
	struct region_op m = { .op = ROP_MAP, .prot = PROT_R | PROT_W, .va = SEC_PT_SHARE_VA,
			       .arg = SLOT_GIVEN };
	if (region_txn(SLOT_SELF_AS, SEC_PT_SHARE_VA, SEC_PT_SHARE_VA + 4096, &m, 1) != 1)
		return 41;
	volatile long *sh = (volatile long *)SEC_PT_SHARE_VA;
	long ep = slot_alloc();
	if (ep < 0 || ep_create(ep))
		return 42;
	sec_touch_stack();    /* no stack fault once the quota is gone */
	sh[SEC_PT_STATE] = SEC_PT_RUNNING;
	const uint64_t base = 0x100000000UL, gib = 0x40000000UL;
	struct region_op ops[REGION_MAX_OPS];
	long state = SEC_PT_NO_QUOTA, err = 0;
	struct cap_info ci;
	for (long k = 0; k < 1024 && state == SEC_PT_NO_QUOTA; k++) {
		if (cap_info(SLOT_SELF_TASK, &ci) == 0)
			sh[SEC_PT_LO0] = (long)ci.lo;
		for (int i = 0; i < REGION_MAX_OPS; i++) {
			memset(&ops[i], 0, sizeof ops[i]);
			ops[i].op = ROP_MARK;
			ops[i].prot = PROT_R | PROT_W;
			ops[i].va = base + (uint64_t)i * gib + (uint64_t)k * 0x100000;
			ops[i].len = 4096;
		}
		long r = region_txn(SLOT_SELF_AS, base, base + REGION_MAX_OPS * gib, ops, REGION_MAX_OPS);
		sh[SEC_PT_TXNS] = k + 1;
		if (r == -E_QUOTA) {
			state = SEC_PT_AT_QUOTA;
			sh[SEC_PT_OP] = -1;     /* the reservation of the whole */
			for (int i = 0; i < REGION_MAX_OPS; i++)
				if (ops[i].result == -E_QUOTA)
					sh[SEC_PT_OP] = i;
			if (cap_info(SLOT_SELF_TASK, &ci) == 0)
				sh[SEC_PT_LO1] = (long)ci.lo;
		} else if (r != REGION_MAX_OPS) {
			err = r;
			state = SEC_PT_BROKEN;
		}
	}
	/* A refusal must mean "does not fit": nothing was freed since, so
	 * the ops applied one at a time run out too. */
	int fit = 0;
	for (int i = 0; state == SEC_PT_AT_QUOTA && i < REGION_MAX_OPS; i++) {
		struct region_op one = ops[i];
		one.result = 0;
		if (region_txn(SLOT_SELF_AS, one.va, one.va + 4096, &one, 1) == 1)
			fit++;
		else
			sh[SEC_PT_REFUSED]++;
	}
	sh[SEC_PT_SPURIOUS] = state == SEC_PT_AT_QUOTA && fit == REGION_MAX_OPS;
	if (cap_info(SLOT_SELF_TASK, &ci) == 0) {
		sh[SEC_PT_LO] = (long)ci.lo;
		sh[SEC_PT_HI] = (long)ci.hi;
	}
	sh[SEC_PT_ERR] = err;
	__atomic_store_n(&sh[SEC_PT_STATE], state, __ATOMIC_RELEASE);
	uint64_t w[4] = { 0 };
	ipc(SYS_RECV, ep, w, SLOT_NONE);   /* until the parent kills us */
	return 43;
}

/* Without the console cap no slot reaches the console. */
static int sec_console(void)
{
	for (long s = -1; s <= CSPACE_MAX_SLOTS; s++) {
		if (sc3(SYS_PUTS, s, "x", 1) != -E_BADCAP)
			return 60;
		if (sc1(SYS_GETC, s) != -E_BADCAP)
			return 61;
	}
	return 0;
}

int child_main(long arg)
{
	switch (arg & 0xff) {
	case ROLE_ECHO: return echo_server();
	case ROLE_PROBE: return probe((uint64_t)arg);
	case ROLE_HOG: return hog();
	case ROLE_SHARE: return share();
	case ROLE_FAULT: {
		volatile uint64_t bad = 8;   /* hidden from the compiler's bounds check */
		*(volatile int *)(uintptr_t)bad = 1;
		return 99;
	}
	case ROLE_SEC_THREADS: return sec_threads();
	case ROLE_SEC_EPS: return sec_eps();
	case ROLE_SEC_PT: return sec_pt();
	case ROLE_SEC_CONSOLE: return sec_console();
	case ROLE_SEC_IPC_STORM: return sec_ipc_storm();
	case ROLE_MM_TOUCH: return mm_touch_child(arg);
	case ROLE_PG_CLIENT: case ROLE_PG_PAGER: return pg_role(arg);
	case ROLE_DEATH_CHILD: case ROLE_DEATH_WATCHER: return death_role(arg);
	case ROLE_PLAT_CSPACE: return plat_cspace_child();
	case ROLE_DEV_DRIVER: return dev_driver_role();
	case ROLE_PP_FILE: case ROLE_PP_RACE: case ROLE_PP_TOUCH: case ROLE_PP_MANY:
		return plat_pager_role(arg);
	}
	return 100;
}
