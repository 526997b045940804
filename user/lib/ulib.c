/* Helpers for user programs: slot bookkeeping, anonymous memory and
 * threads (printf and the rest of the C library: picolibc, start.c). */
#include "ulib.h"

int parse_ulong(const char *s, unsigned long *out)
{
	unsigned long v = 0;
	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (unsigned long)(*s - '0');
	}
	*out = v;
	return 0;
}

/* One bit per slot, set while it is handed out. The lowest free one is
 * taken, so a task's slots stay in its fixed slots and its first CSpace
 * chunks (abi/patina/cap.h) as long as it holds few caps. */
static uint64_t slots_used[CSPACE_MAX_SLOTS / 64] = { (1UL << SLOT_FIRST_FREE) - 1 };
long slot_alloc(void)
{
	for (long w = 0; w < CSPACE_MAX_SLOTS / 64; w++) {
		uint64_t v = __atomic_load_n(&slots_used[w], __ATOMIC_RELAXED);
		for (long b = 0; ~v && b < 64; b++) {
			uint64_t bit = 1UL << b;
			if (v & bit)
				continue;
			v = __atomic_fetch_or(&slots_used[w], bit, __ATOMIC_ACQ_REL);
			if (!(v & bit))
				return w * 64 + b;
		}
	}
	return -E_NOMEM;
}
void slot_release(long s)
{
	if (s >= SLOT_FIRST_FREE && s < CSPACE_MAX_SLOTS)
		__atomic_fetch_and(&slots_used[s / 64], ~(1UL << (s % 64)), __ATOMIC_ACQ_REL);
}

long mem_reserve(uint64_t va, uint64_t len)
{
	struct region_op op = { .op = ROP_MARK, .prot = PROT_R | PROT_W, .va = va, .len = len };
	long r = region_txn(SLOT_SELF_AS, va, va + len, &op, 1);
	return r < 0 ? r : op.result;
}

/* Thread stacks: 64 KiB each, from a window below the main stack. */
#define TSTACK_BASE 0x20000000UL
#define TSTACK_SIZE 0x10000UL
static volatile unsigned long next_tstack;
extern char uthread_entry[];

long uthread_start(void (*fn)(void *), void *arg, int hart, int prio)
{
	unsigned long i = __atomic_fetch_add(&next_tstack, 1, __ATOMIC_RELAXED);
	uint64_t lo = TSTACK_BASE + i * TSTACK_SIZE;
	if (lo + TSTACK_SIZE > 0x3f000000UL)
		return -E_NOMEM;
	long r = mem_reserve(lo, TSTACK_SIZE);
	if (r)
		return r;
	/* The thread's TLS block at the top, its start block {fn, arg, tls}
	 * below it (crt0.S uthread_entry), the stack below that. */
	uint64_t tls = lo + TSTACK_SIZE - uthread_tls_size();
	uthread_tls_init((void *)tls);
	uint64_t *top = (uint64_t *)(tls - 32);
	top[0] = (uint64_t)fn;
	top[1] = (uint64_t)arg;
	top[2] = tls;
	long slot = slot_alloc();
	if (slot < 0)
		return slot;
	r = sc6(SYS_THREAD_CREATE, SLOT_SELF_TASK, (long)uthread_entry, (long)top, (long)top, slot,
		((long)prio << 16) | (hart + 1));
	if (r) {
		slot_release(slot);
		return r;
	}
	return slot;
}
