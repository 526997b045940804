/* Out-of-memory injection: see failalloc.h. One atomic counter shared by
 * every allocator entry point. */
#include "failalloc.h"
#include "printk.h"

int failalloc_armed;
static int enabled;                 /* failalloc= was on the boot line */
static int started;                 /* armed once: later arms do nothing */
static unsigned long fail_at;       /* 0: count only */
static unsigned long fail_burst = 1;
static unsigned long counted;

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
	__atomic_store_n(&failalloc_armed, 0, __ATOMIC_RELEASE);
	return (long)__atomic_load_n(&counted, __ATOMIC_ACQUIRE);
}

void failalloc_report(void)
{
	if (enabled)
		printk("failalloc: %lu allocations counted\n",
		       __atomic_load_n(&counted, __ATOMIC_ACQUIRE));
}

int failalloc_count(void)
{
	unsigned long k = __atomic_add_fetch(&counted, 1, __ATOMIC_ACQ_REL);
	if (!fail_at || k < fail_at || k - fail_at >= fail_burst)
		return 0;
	printk("failalloc: allocation %lu fails\n", k);
	return 1;
}
