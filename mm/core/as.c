/* Address spaces: creation, the shared kernel half, destruction. */
#include "internal.h"

/* The VA of the first entry of the root that holds [lo, last] (lo <= last),
 * or 1 (never page aligned) when no root holds all of it. One root holds
 * both canonical halves, but a range must stay inside one: the core's
 * entry addresses sign-extend, so an address past the top of the low half
 * would be taken for one of the high half (and a range over it would see
 * no entry wholly covered, split without bound and overrun the cursor's
 * reservation). With split roots each half has its own root, whose
 * entries must reach from the half's start to last. */
static uint64_t root_base_of(const struct pt_arch *a, uint64_t lo, uint64_t last)
{
	if (!a->split_roots)
		return va_canon(a, lo) == lo && va_canon(a, last) == last && !((lo ^ last) >> 63)
			       ? 0 : 1;
	uint64_t half = lo >= a->kernel_lo ? a->kernel_lo : a->user_lo;
	uint64_t half_last = half == a->kernel_lo ? a->kernel_last : a->user_last;
	unsigned root_bits = pt_shift(a, a->levels) + a->bits_per_level;
	if (lo < half || last > half_last || ((last - half) >> root_bits))
		return 1;
	return half;
}

int mm_as_init(struct mm_as *as, const struct pt_arch *arch,
	       const struct mm_protocol *proto, const struct mm_platform *plat,
	       uint64_t lo, uint64_t last, void *ctx)
{
	if ((lo & (MM_PAGE_SIZE - 1)) || ((last + 1) & (MM_PAGE_SIZE - 1)))
		return MM_EALIGN;
	if (last < lo)
		return MM_ERANGE;
	uint64_t root_base = root_base_of(arch, lo, last);
	if (root_base & (MM_PAGE_SIZE - 1))
		return MM_ERANGE;
	if (arch->needs_bbm && !plat->tlb_flush_bbm)
		return MM_EINVAL;
	*as = (struct mm_as){ .arch = arch, .proto = proto, .plat = plat, .root_base = root_base,
			      .lo = lo, .last = last, .ctx = ctx };
	uint64_t pa = plat->pt_alloc();
	if (pa == MM_NOFRAME)
		return MM_ENOMEM;
	mm_zero_frame(plat, pa);
	mm_pt_init(as, pa, arch->levels);
	as->root_pa = pa;
	return MM_OK;
}

static void root_range(const struct mm_as *as, const struct mm_as *of, unsigned *i0, unsigned *i1)
{
	*i0 = pt_index(as->arch, of->lo, as->arch->levels);
	*i1 = pt_index(as->arch, of->last, as->arch->levels);
}

/* Needs: boot, no cursor on kas. With split roots every AS runs with the
 * kernel root itself, so its entries may change: nothing to fix. */
int mm_as_kernel_seal(struct mm_as *kas)
{
	const struct pt_arch *a = kas->arch;
	const struct mm_platform *p = kas->plat;
	if (a->split_roots)
		return MM_OK;
	struct mm_page *root = p->page_desc(kas->root_pa);
	uint64_t *pt = pg_ptes(kas, root);
	uint64_t added[(1u << 9) / 64] = { 0 };   /* root slots this call filled */
	unsigned i0, i1;
	if (pt_entries(a) > 512)
		p->panic("mm: seal supports at most 512 root entries");
	root_range(kas, kas, &i0, &i1);
	for (unsigned i = i0; i <= i1; i++) {
		if (a->present(pt[i]) || slot_meta(kas, root, i))
			continue;
		uint64_t pa = p->pt_alloc();
		if (pa == MM_NOFRAME) {
			for (unsigned j = i0; j < i; j++) {
				if (!(added[j / 64] >> (j % 64) & 1))
					continue;
				struct mm_page *ch = child_of(kas, pt[j], a->levels);
				ent_store(&pt[j], 0);
				root->nr_live--;
				__atomic_fetch_sub(&kas->nr_frames, 1, __ATOMIC_RELAXED);
				mm_pt_free_now(kas->plat, ch);
			}
			return MM_ENOMEM;
		}
		mm_zero_frame(p, pa);
		mm_pt_init(kas, pa, a->levels - 1);
		ent_store(&pt[i], a->make_table(pa));
		root->nr_live++;
		added[i / 64] |= 1ull << (i % 64);
	}
	kas->sealed = true;
	return MM_OK;
}

void mm_as_share_kernel(struct mm_as *as, const struct mm_as *kas)
{
	const struct pt_arch *a = as->arch;
	if (a->split_roots) {
		as->kernel_root_pa = kas->root_pa;
		return;
	}
	struct mm_page *root = as->plat->page_desc(as->root_pa);
	struct mm_page *kroot = kas->plat->page_desc(kas->root_pa);
	uint64_t *pt = pg_ptes(as, root), *kpt = pg_ptes(kas, kroot);
	unsigned i0, i1;
	root_range(as, kas, &i0, &i1);
	for (unsigned i = i0; i <= i1; i++) {
		uint64_t e = ent_load(&kpt[i]);
		if (!a->present(e))
			continue;
		ent_store(&pt[i], e);
		root->nr_live++;
	}
}

void mm_as_destroy(struct mm_as *as)
{
	struct mm_cursor c;
	as->sealed = false;   /* whoever shared the kernel half is gone */
	int err = mm_lock_last(&c, as, as->lo, as->last);
	if (err == MM_OK) {
		err = mm_unmap(&c, as->lo, as->last + 1 - as->lo);
		mm_release(&c);
	}
	if (err)
		as->plat->panic("mm: destroy could not clear the address space");
	struct mm_page *root = as->plat->page_desc(as->root_pa);
	__atomic_fetch_sub(&as->nr_frames, root->meta_pa ? 2 : 1, __ATOMIC_RELAXED);
	mm_pt_free_now(as->plat, root);
	as->root_pa = 0;
}
