/* The hooks GCC's -fsanitize=thread puts around every load, store and
 * atomic operation of the code it compiles (the memory managers and the
 * host platform, for the coherence audit), implemented here instead of
 * by libtsan: each access is handed to the line model (audit_count.h)
 * with the calling thread and the code address, and counts toward the
 * scheduler's quantum (audit_sched.h). An atomic hook also performs its
 * operation, always sequentially consistent: only one worker runs at a
 * time, so a stronger order changes nothing the audit observes.
 * Also memset, which the instrumented code calls and libtsan would
 * intercept (the program is linked with -Wl,--wrap=memset). */
#include "audit_count.h"
#include "audit_sched.h"

#include <stdint.h>
#include <string.h>

#define PC __builtin_return_address(0)
#define SC __ATOMIC_SEQ_CST

/* One observed access: first a possible preemption, so the access
 * happens (and is counted) when the turn comes back. */
static inline void observe(const volatile void *a, size_t n, int write, const void *pc)
{
	audit_tick();
	audit_note(a, n, write, pc, audit_self());
}

void __tsan_init(void);
void __tsan_init(void) {}
void __tsan_func_entry(void *pc);
void __tsan_func_entry(void *pc) { (void)pc; }
void __tsan_func_exit(void);
void __tsan_func_exit(void) {}

#define PLAIN(name, n, w)                                                       \
	void name(void *a);                                                     \
	void name(void *a) { observe(a, n, w, PC); }
#define PLAIN_SIZES(prefix, w)                                                  \
	PLAIN(prefix##1, 1, w) PLAIN(prefix##2, 2, w) PLAIN(prefix##4, 4, w)   \
	PLAIN(prefix##8, 8, w) PLAIN(prefix##16, 16, w)
PLAIN_SIZES(__tsan_read, 0)
PLAIN_SIZES(__tsan_write, 1)
PLAIN_SIZES(__tsan_volatile_read, 0)
PLAIN_SIZES(__tsan_volatile_write, 1)
PLAIN(__tsan_unaligned_read2, 2, 0) PLAIN(__tsan_unaligned_read4, 4, 0)
PLAIN(__tsan_unaligned_read8, 8, 0) PLAIN(__tsan_unaligned_read16, 16, 0)
PLAIN(__tsan_unaligned_write2, 2, 1) PLAIN(__tsan_unaligned_write4, 4, 1)
PLAIN(__tsan_unaligned_write8, 8, 1) PLAIN(__tsan_unaligned_write16, 16, 1)

void __tsan_read_range(void *a, unsigned long n);
void __tsan_read_range(void *a, unsigned long n) { observe(a, n, 0, PC); }
void __tsan_write_range(void *a, unsigned long n);
void __tsan_write_range(void *a, unsigned long n) { observe(a, n, 1, PC); }

/* Atomics of one width T, suffix N: load (a read), store, exchange, the
 * fetch-and-ops and compare-exchange (writes: each needs the line
 * exclusive, even a compare-exchange that fails). */
#define ATOMICS(T, N)                                                           \
	T __tsan_atomic##N##_load(const volatile T *a, int mo);                 \
	T __tsan_atomic##N##_load(const volatile T *a, int mo)                  \
	{ (void)mo; observe(a, sizeof(T), 0, PC); return __atomic_load_n(a, SC); } \
	void __tsan_atomic##N##_store(volatile T *a, T v, int mo);              \
	void __tsan_atomic##N##_store(volatile T *a, T v, int mo)               \
	{ (void)mo; observe(a, sizeof(T), 1, PC); __atomic_store_n(a, v, SC); } \
	T __tsan_atomic##N##_exchange(volatile T *a, T v, int mo);              \
	T __tsan_atomic##N##_exchange(volatile T *a, T v, int mo)               \
	{ (void)mo; observe(a, sizeof(T), 1, PC); return __atomic_exchange_n(a, v, SC); } \
	RMW(T, N, add) RMW(T, N, sub) RMW(T, N, and) RMW(T, N, or)              \
	RMW(T, N, xor) RMW(T, N, nand)                                          \
	CAS(T, N, strong) CAS(T, N, weak)                                       \
	T __tsan_atomic##N##_compare_exchange_val(volatile T *a, T c, T v, int mo, int fmo); \
	T __tsan_atomic##N##_compare_exchange_val(volatile T *a, T c, T v, int mo, int fmo) \
	{                                                                       \
		(void)mo; (void)fmo;                                            \
		observe(a, sizeof(T), 1, PC);                                   \
		__atomic_compare_exchange_n(a, &c, v, 0, SC, SC);               \
		return c;                                                       \
	}
/* compare-exchange, strong or weak: both done strong (a weak one may
 * fail spuriously, never has to) */
#define CAS(T, N, kind)                                                         \
	int __tsan_atomic##N##_compare_exchange_##kind(volatile T *a, T *c, T v, int mo, int fmo); \
	int __tsan_atomic##N##_compare_exchange_##kind(volatile T *a, T *c, T v, int mo, int fmo) \
	{                                                                       \
		(void)mo; (void)fmo;                                            \
		observe(a, sizeof(T), 1, PC);                                   \
		return __atomic_compare_exchange_n(a, c, v, 0, SC, SC);         \
	}
#define RMW(T, N, op)                                                           \
	T __tsan_atomic##N##_fetch_##op(volatile T *a, T v, int mo);            \
	T __tsan_atomic##N##_fetch_##op(volatile T *a, T v, int mo)             \
	{ (void)mo; observe(a, sizeof(T), 1, PC); return __atomic_fetch_##op(a, v, SC); }

ATOMICS(uint8_t, 8)
ATOMICS(uint16_t, 16)
ATOMICS(uint32_t, 32)
ATOMICS(uint64_t, 64)

void __tsan_atomic_thread_fence(int mo);
void __tsan_atomic_thread_fence(int mo) { (void)mo; __atomic_thread_fence(SC); }
void __tsan_atomic_signal_fence(int mo);
void __tsan_atomic_signal_fence(int mo) { (void)mo; }

void *__real_memset(void *d, int c, size_t n);
void *__wrap_memset(void *d, int c, size_t n);
/* memset as the instrumented code sees it: n bytes written. */
void *__wrap_memset(void *d, int c, size_t n)
{
	observe(d, n, 1, PC);
	return __real_memset(d, c, n);
}
