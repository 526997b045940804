/* bench overhead: the memory the page table costs per mapped page, read
 * from our own frame usage (SYS_CAP_INFO on our task cap counts data
 * frames plus page-table pages and their metadata arrays).
 *
 *   dense   4096 pages side by side (16 MiB), each filled by a write fault,
 *           as `bench pf` leaves its region
 *   sparse  512 pages, one at the start of every 2 MiB (1 GiB)
 *
 * Usage is read before the region is mapped and after every page was
 * touched; minus one data frame per page, the rest is page-table pages
 * and metadata. One line per pattern:
 * {"bench":"overhead","pattern","mm","paging","pages","pt_frames",
 *  "bytes_per_page"}. */
#include "ulib.h"
#include "bench.h"

#define OV_VA 0x3000000000UL      /* no other program uses it; 1 GiB aligned, below Sv39's top */

/* Frames charged to this task now, or -E_*. */
static long ov_usage(void)
{
	struct cap_info ci;
	long r = cap_info(SLOT_SELF_TASK, &ci);
	return r ? r : (long)ci.lo;
}

/* Map pages pages stride bytes apart at OV_VA and touch each; print the
 * line. 0, or 1 after printing what failed. Leaves the region empty. */
static int ov_pattern(const char *pattern, uint64_t pages, uint64_t stride)
{
	uint64_t span = pages * stride;
	long before = ov_usage();
	long err = before < 0 ? before : mem_reserve(OV_VA, span);
	for (uint64_t i = 0; !err && i < pages; i++)
		*(volatile char *)(OV_VA + i * stride) = 1;
	long after = err ? 0 : ov_usage();
	if (after < 0)
		err = after;
	long un = bench_unmap(OV_VA, span);
	if (!err)
		err = un;
	if (!err && (uint64_t)(after - before) < pages)
		err = -E_INVAL;     /* fewer frames than pages touched: usage is not what we read */
	if (err) {
		printf("bench: overhead %s failed: %s\n", pattern, err_name(err));
		return 1;
	}
	const char *mm, *paging;
	bench_mm_names(&mm, &paging);
	uint64_t pt = (uint64_t)(after - before) - pages;
	char bpp[32];
	printf("{\"bench\":\"overhead\",\"pattern\":\"%s\",\"mm\":\"%s\",\"paging\":\"%s\",\"pages\":%lu,"
	       "\"pt_frames\":%lu,\"bytes_per_page\":%s}\n",
	       pattern, mm, paging, pages, pt, bench_tenths(bpp, sizeof bpp, pt * BENCH_PG, pages));
	return 0;
}

int bench_overhead(void)
{
	if (ov_pattern("dense", 4096, BENCH_PG))
		return 1;
	return ov_pattern("sparse", 512, 512 * BENCH_PG);
}
