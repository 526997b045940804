/* The sieve pager: a client's range reads as a bitmap of the primes
 * (bit j of page i is set when 2 * (32768 * i + j) + 1 is prime), each
 * page computed by a segmented sieve when it is first touched. At most
 * `resident` pages stay mapped: the oldest is unmapped to make room, and
 * computed again if it is touched again. One client at a time. Built on
 * libpager. */
#ifndef USER_SIEVEPAGER_H
#define USER_SIEVEPAGER_H

#include <stdint.h>
#include "pager.h"

#define SIEVE_PAGE_NUMBERS 65536UL      /* numbers a page covers (its bits: the odd ones) */

struct sievepager {
	struct pager pg;
	uint32_t *base;           /* odd primes below 65536: enough for numbers below 2^32 */
	unsigned nbase;
	uint64_t *ring;           /* offsets of the resident pages, oldest first */
	unsigned long resident, head, max;
	unsigned long computed, evicted;
	struct pager_ops ops;     /* ours for faults, the program's for the rest */
};

/* A sieve pager keeping at most `resident` pages mapped (>= 1); more:
 * the program's client_gone and message callbacks. 0 or an error. */
long sievepager_init(struct sievepager *sp, unsigned long resident, const struct pager_ops *more);
/* Attach `pages` pages at base in task `task` as the bitmap (-E_BUSY
 * while another client is attached). */
struct pager_client *sievepager_attach(struct sievepager *sp, long task, uint64_t base,
				       unsigned long pages, long *err);
void sievepager_fini(struct sievepager *sp);

#endif
