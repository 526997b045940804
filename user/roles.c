/* Child-task roles used by the tests, sysfuzz and bench (see uprog.h). */
#include "ulib.h"
#include "uprog.h"

/* Wait for the cap the parent gives at spawn to land in slot 4. */
static int wait_given(void)
{
	struct cap_info ci;
	for (int i = 0; i < 1000; i++) {
		if (cap_info(SLOT_GIVEN, &ci) == 0)
			return (int)ci.type;
		sys_yield();
	}
	return 0;
}

static int echo_server(void)
{
	if (wait_given() != CAP_ENDPOINT)
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
	for (long s = SLOT_GIVEN; s < CSPACE_SLOTS; s++) {
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
	if (wait_given() != CAP_REGION)
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
	case ROLE_FUZZ: return fuzz_child((uint64_t)arg);
	}
	return 100;
}
