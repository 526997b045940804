/* The atomic spec (see spec.h). */
#include "spec.h"
#include "cortenmm/errors.h"
#include "cortenmm/pt_arch.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

void spec_init(struct spec *s, uint64_t base, size_t npages, unsigned mem_types)
{
	s->base = base;
	s->npages = npages;
	s->mem_types = mem_types;
	s->pg = calloc(npages, sizeof(*s->pg));
	if (!s->pg)
		abort();
}

void spec_free(struct spec *s)
{
	free(s->pg);
	s->pg = NULL;
}

struct spec_page *spec_at(struct spec *s, uint64_t va)
{
	uint64_t i = (va - s->base) / MM_PAGE_SIZE;
	if (va < s->base || i >= s->npages)
		abort();
	return &s->pg[i];
}

static int any_mapped(struct spec *s, uint64_t va, uint64_t len)
{
	for (uint64_t o = 0; o < len; o += MM_PAGE_SIZE) {
		unsigned k = spec_at(s, va + o)->kind;
		if (k == MM_MAPPED || k == MM_COW)
			return 1;
	}
	return 0;
}

static int type_ok(const struct spec *s, unsigned prot)
{
	return (s->mem_types >> mm_prot_mt(prot)) & 1u;
}

int spec_map(struct spec *s, uint64_t va, uint64_t pa, uint64_t size, unsigned prot, unsigned flags)
{
	if (!type_ok(s, prot))
		return MM_EPROT;
	bool cow = flags & MM_MAP_COW;
	if ((flags & MM_MAP_NOWRITE) && !cow && (prot & MM_PROT_W))
		return MM_EPROT;
	if (any_mapped(s, va, size))
		return MM_EEXIST;
	for (uint64_t o = 0; o < size; o += MM_PAGE_SIZE) {
		struct spec_page *p = spec_at(s, va + o);
		*p = (struct spec_page){ .kind = cow ? MM_COW : MM_MAPPED,
					 .prot = (uint8_t)prot, .pa = pa + o,
					 .limits = (uint8_t)(flags & (cow ? MM_MAP_NOSHARE : MM_MAP_LIMITS)) };
	}
	return MM_OK;
}

int spec_mark(struct spec *s, uint64_t va, uint64_t len, const struct mm_status *st)
{
	if (st->kind != MM_INVALID && !type_ok(s, st->prot))
		return MM_EPROT;
	if (any_mapped(s, va, len))
		return MM_EMAPPED;
	for (uint64_t o = 0; o < len; o += MM_PAGE_SIZE) {
		struct spec_page *p = spec_at(s, va + o);
		if (st->kind == MM_INVALID)
			*p = (struct spec_page){ 0 };
		else
			*p = (struct spec_page){ .kind = st->kind, .prot = st->prot,
						 .dev = st->dev, .arg = st->arg };
	}
	return MM_OK;
}

int spec_unmap(struct spec *s, uint64_t va, uint64_t len)
{
	for (uint64_t o = 0; o < len; o += MM_PAGE_SIZE)
		*spec_at(s, va + o) = (struct spec_page){ 0 };
	return MM_OK;
}

int spec_protect(struct spec *s, uint64_t va, uint64_t len, unsigned prot)
{
	const unsigned rwx = MM_PROT_R | MM_PROT_W | MM_PROT_X;
	for (uint64_t o = 0; o < len && (prot & MM_PROT_W); o += MM_PAGE_SIZE) {
		struct spec_page *p = spec_at(s, va + o);
		if (p->kind == MM_MAPPED && (p->limits & MM_MAP_NOWRITE))
			return MM_EPROT;
	}
	for (uint64_t o = 0; o < len; o += MM_PAGE_SIZE) {
		struct spec_page *p = spec_at(s, va + o);
		if (p->kind == MM_MAPPED || p->kind == MM_COW || p->kind == MM_RESERVED ||
		    p->kind == MM_PAGER)
			p->prot = (uint8_t)((p->prot & ~rwx) | prot);
	}
	return MM_OK;
}

int spec_make_cow(struct spec *s, uint64_t va, uint64_t len)
{
	for (uint64_t o = 0; o < len; o += MM_PAGE_SIZE) {
		struct spec_page *p = spec_at(s, va + o);
		if (p->kind == MM_MAPPED) {
			p->kind = MM_COW;
			p->limits &= MM_MAP_NOSHARE;
		}
	}
	return MM_OK;
}

int spec_unshare(struct spec *s, uint64_t va, uint64_t len)
{
	for (uint64_t o = 0; o < len; o += MM_PAGE_SIZE) {
		struct spec_page *p = spec_at(s, va + o);
		if (p->kind == MM_COW)
			p->kind = MM_MAPPED;
	}
	return MM_OK;
}

int spec_touch(struct spec *s, uint64_t va, int write)
{
	struct spec_page *p = spec_at(s, va);
	if (p->kind != MM_MAPPED && p->kind != MM_COW)
		return MM_EINVAL;
	if (write && (p->kind == MM_COW || !(p->prot & MM_PROT_W)))
		return MM_EPROT;
	return MM_OK;
}

int spec_check_info(struct spec *s, uint64_t va, const struct mm_info *in, const char *who)
{
	struct spec_page *p = spec_at(s, va);
	int ok = in->kind == p->kind && in->prot == p->prot;
	if (ok && (p->kind == MM_MAPPED || p->kind == MM_COW))
		ok = in->pa == p->pa && in->limits == p->limits;
	if (ok && p->kind == MM_SWAPPED)
		ok = in->dev == p->dev && in->arg == p->arg;
	if (ok && p->kind == MM_PAGER)
		ok = in->arg == p->arg;
	if (ok)
		return 0;
	fprintf(stderr, "%s: va %#" PRIx64 ": core kind %u prot %#x pa %#" PRIx64 " dev %u arg %" PRIu64
		" limits %#x | spec kind %u prot %#x pa %#" PRIx64 " dev %u arg %" PRIu64 " limits %#x\n",
		who, va, in->kind, in->prot, in->pa, in->dev, in->arg, in->limits,
		p->kind, p->prot, p->pa, p->dev, p->arg, p->limits);
	return -1;
}
