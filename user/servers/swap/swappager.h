/* The swap pager: pages a client range against a small pool of frames,
 * keeping evicted pages in its own memory. Linked into swapdemo. */
#ifndef USER_SWAPPAGER_H
#define USER_SWAPPAGER_H

#include <stdint.h>

struct swap_stats {
	unsigned long faults, zero, in, out, written, spurious, aged, killed, resident;
	uint64_t busy;                    /* timebase ticks spent serving faults */
	long first_err;                   /* why the first killed fault was refused */
	uint64_t err_addr, err_w1, err_w2;
};
typedef int (*swap_msg_fn)(uint64_t badge, const uint64_t w[4], uint64_t reply[4], void *ctx);
enum { SWAP_STOP = 1, SWAP_CLIENT_KILLED = 2 };
long swap_pager_init(long client_region, uint64_t base, unsigned long pages, unsigned long frames);
long swap_pager_fault(const uint64_t w[4]);
long swap_pager_serve(long ep, uint64_t fault_badge, swap_msg_fn other, void *ctx);
void swap_pager_fini(struct swap_stats *st);

#endif
