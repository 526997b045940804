#include <patina/errno.h>
#include "memmap.h"
#include "memlayout.h"

static void add(struct phys_range *t, int *n, int max, paddr_t base, uint64_t size, int *err)
{
	if (!size)
		return;
	if (*n >= max) {
		*err = -E_INVAL;
		return;
	}
	paddr_t lo = base & ~(PAGE_SIZE - 1);
	paddr_t hi = (base + size + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1);
	t[*n].base = lo;
	t[*n].size = hi - lo;
	(*n)++;
}

int memmap_taken_ranges(const struct boot_info *bi, struct phys_range *out, int max)
{
	int n = 0, err = 0;
	for (int i = 0; i < bi->nresv; i++)
		add(out, &n, max, bi->resv[i].base, bi->resv[i].size, &err);
	for (int i = 0; i < bi->nmemrsv; i++)
		add(out, &n, max, bi->memrsv[i].base, bi->memrsv[i].size, &err);
	add(out, &n, max, bi->dtb_pa, bi->dtb_size, &err);
	add(out, &n, max, kernel_image_pa_start(),
	    kernel_image_pa_end() - kernel_image_pa_start(), &err);
	return err ? err : n;
}

int memmap_free_ranges(const struct boot_info *bi, struct phys_range *out, int max)
{
	struct phys_range taken[BI_MAX_RESV * 2 + 2];
	int nt = memmap_taken_ranges(bi, taken, BI_MAX_RESV * 2 + 2);
	if (nt < 0)
		return nt;

	int n = 0;
	for (int m = 0; m < bi->nmem; m++) {
		/* Start with the whole node, then cut every taken range out. */
		struct phys_range cur[MEMMAP_MAX];
		int nc = 1;
		cur[0].base = (bi->mem[m].base + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1);
		paddr_t end = (bi->mem[m].base + bi->mem[m].size) & ~(PAGE_SIZE - 1);
		if (end <= cur[0].base)
			continue;
		cur[0].size = end - cur[0].base;
		for (int t = 0; t < nt; t++) {
			paddr_t tl = taken[t].base, th = taken[t].base + taken[t].size;
			struct phys_range next[MEMMAP_MAX];
			int nn = 0;
			for (int c = 0; c < nc; c++) {
				paddr_t cl = cur[c].base, ch = cur[c].base + cur[c].size;
				if (th <= cl || tl >= ch) {
					if (nn >= MEMMAP_MAX)
						return -E_INVAL;
					next[nn++] = cur[c];
					continue;
				}
				if (tl > cl) {
					if (nn >= MEMMAP_MAX)
						return -E_INVAL;
					next[nn].base = cl;
					next[nn++].size = tl - cl;
				}
				if (th < ch) {
					if (nn >= MEMMAP_MAX)
						return -E_INVAL;
					next[nn].base = th;
					next[nn++].size = ch - th;
				}
			}
			for (int c = 0; c < nn; c++)
				cur[c] = next[c];
			nc = nn;
		}
		for (int c = 0; c < nc; c++) {
			if (n >= max)
				return -E_INVAL;
			out[n++] = cur[c];
		}
	}
	/* Insertion sort by base: memory nodes need not be in order. */
	for (int i = 1; i < n; i++) {
		struct phys_range k = out[i];
		int j = i - 1;
		while (j >= 0 && out[j].base > k.base) {
			out[j + 1] = out[j];
			j--;
		}
		out[j + 1] = k;
	}
	return n;
}
