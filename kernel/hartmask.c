/* Splitting a set of logical harts into SBI hart-mask windows. */
#include "hartmask.h"

long hartmask_windows(const struct hartmask *m, long skip, const uint32_t *ids, uint32_t n,
		      hart_window_fn fn, void *arg)
{
	if (n > HARTS_MAX)
		n = HARTS_MAX;
	uint64_t from = 0;      /* windows below this base are done */
	for (;;) {
		/* The lowest window at or above `from` holding a target. */
		uint64_t base = ~0ULL;
		for (uint32_t i = 0; i < n; i++) {
			if ((long)i == skip || !hartmask_test(m, i) || ids[i] < from)
				continue;
			uint64_t b = ids[i] & ~63ULL;
			if (b < base)
				base = b;
		}
		if (base == ~0ULL)
			return 0;
		unsigned long mask = 0;
		for (uint32_t i = 0; i < n; i++)
			if ((long)i != skip && hartmask_test(m, i) && (ids[i] & ~63ULL) == base)
				mask |= 1UL << (ids[i] & 63);
		long r = fn(mask, (unsigned long)base, arg);
		if (r)
			return r;
		from = base + 64;
	}
}
