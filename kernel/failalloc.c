/* Out-of-memory injection: see failalloc.h. One atomic counter shared by
 * every allocator entry point. */
#include "failalloc.h"
#include "printk.h"
#include "cpu.h"

int failalloc_armed;
static int enabled;                 /* failalloc= was on the boot line */
static int started;                 /* armed once: later arms do nothing */
static unsigned long fail_at;       /* 0: count only */
static unsigned long fail_burst = 1;
static unsigned long counted;
static int stopped;                 /* DBG_FAILALLOC came */
static int here_hart = -1;          /* failalloc_here: its hart, and what it lets pass first */
static unsigned here_skip;

void failalloc_setup(unsigned long n, unsigned long burst)
{
	enabled = 1;
	fail_at = n;
	fail_burst = burst ? burst : 1;
}

void failalloc_arm(void)
{
	if (enabled && !__atomic_exchange_n(&started, 1, __ATOMIC_ACQ_REL))
		__atomic_store_n(&failalloc_armed, 1, __ATOMIC_RELEASE);
}

long failalloc_stop(void)
{
	if (!enabled)
		return -1;
	__atomic_store_n(&stopped, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&failalloc_armed, 0, __ATOMIC_RELEASE);
	return (long)__atomic_load_n(&counted, __ATOMIC_ACQUIRE);
}

void failalloc_report(void)
{
	if (enabled)
		printk("failalloc: %lu allocations counted\n",
		       __atomic_load_n(&counted, __ATOMIC_ACQUIRE));
}

void failalloc_here(unsigned skip)
{
	here_skip = skip;
	__atomic_store_n(&here_hart, (int)this_cpu()->index, __ATOMIC_RELEASE);
	__atomic_store_n(&failalloc_armed, 1, __ATOMIC_RELEASE);
}

void failalloc_here_end(void)
{
	__atomic_store_n(&here_hart, -1, __ATOMIC_RELEASE);
	int own = enabled && __atomic_load_n(&started, __ATOMIC_ACQUIRE) &&
		  !__atomic_load_n(&stopped, __ATOMIC_RELAXED);
	__atomic_store_n(&failalloc_armed, own, __ATOMIC_RELEASE);
}

/* Only the hart failalloc_here named reads or writes here_skip. */
static int here_fails(void)
{
	if (__atomic_load_n(&here_hart, __ATOMIC_ACQUIRE) != (int)this_cpu()->index)
		return 0;
	if (here_skip) {
		here_skip--;
		return 0;
	}
	__atomic_store_n(&here_hart, -1, __ATOMIC_RELEASE);
	return 1;
}

int failalloc_count(void)
{
	if (here_fails())
		return 1;
	if (!enabled)
		return 0;           /* armed by failalloc_here alone */
	unsigned long k = __atomic_add_fetch(&counted, 1, __ATOMIC_ACQ_REL);
	if (!fail_at || k < fail_at || k - fail_at >= fail_burst)
		return 0;
	printk("failalloc: allocation %lu fails\n", k);
	return 1;
}
