/* Helpers of the paging tables' golden tests (each folder's test/): each checks
 * its table's entries bit by bit against the manual's layout, written as
 * plain numbers. A test defines GOLDEN_NAME (its test name) before it
 * includes this, calls EXPECT for each fact and returns golden_report(). */
#ifndef PATINA_PTE_GOLDEN_H
#define PATINA_PTE_GOLDEN_H

#include <stdint.h>
#include <stdio.h>

static int golden_fails;

#define EXPECT(cond, ...)                                                       \
	do {                                                                    \
		if (!(cond)) {                                                  \
			golden_fails++;                                         \
			fprintf(stderr, GOLDEN_NAME ": " __VA_ARGS__);          \
			fputc('\n', stderr);                                    \
		}                                                               \
	} while (0)

static inline uint64_t bit(unsigned b) { return 1ull << b; }
/* Bits hi..lo of entry e, shifted down. */
static inline uint64_t field(uint64_t e, unsigned hi, unsigned lo)
{
	return (e >> lo) & ((1ull << (hi - lo + 1)) - 1);
}

/* Prints the verdict; the exit status: 0 iff every EXPECT held. */
static inline int golden_report(void)
{
	printf(GOLDEN_NAME ": %s (%d failures)\n", golden_fails ? "FAIL" : "ok", golden_fails);
	return golden_fails ? 1 : 0;
}

#endif
