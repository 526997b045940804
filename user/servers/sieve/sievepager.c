/* The sieve pager (sievepager.h). */
#include "ulib.h"
#include "sievepager.h"

#define PG 4096UL

/* The odd primes below 65536, by a plain sieve. */
static long base_primes(struct sievepager *sp)
{
	uint8_t *composite = calloc(65536, 1);
	sp->base = malloc(6542 * sizeof *sp->base);
	if (!composite || !sp->base) {
		free(composite);
		return -E_NOMEM;
	}
	for (uint32_t n = 3; n < 65536; n += 2) {
		if (composite[n])
			continue;
		sp->base[sp->nbase++] = n;
		for (uint32_t m = n * n; m < 65536; m += 2 * n)
			composite[m] = 1;
	}
	free(composite);
	return 0;
}

/* Page i of the bitmap: the odd numbers of [i * 65536, (i + 1) * 65536). */
static void sieve_page(const struct sievepager *sp, uint64_t i, uint8_t *bits)
{
	uint64_t lo = i * SIEVE_PAGE_NUMBERS, hi = lo + SIEVE_PAGE_NUMBERS;
	memset(bits, 0xff, PG);
	if (i == 0)
		bits[0] &= (uint8_t)~1u;              /* 1 is not prime */
	for (unsigned k = 0; k < sp->nbase; k++) {
		uint64_t p = sp->base[k];
		if (p * p >= hi)
			break;
		uint64_t m = p * p > lo ? p * p : (lo + p - 1) / p * p;
		if (!(m & 1))
			m += p;                       /* odd multiples only */
		for (; m < hi; m += 2 * p) {
			uint64_t bit = (m - lo) / 2;
			bits[bit / 8] &= (uint8_t)~(1u << (bit % 8));
		}
	}
}

/* Unmap the oldest resident page (one shootdown in the client). */
static long evict_oldest(struct sievepager *sp, struct pager_client *c)
{
	long r = pager_unmap(c, sp->ring[sp->head], PG);
	if (r)
		return r;
	sp->head = (sp->head + 1) % sp->max;
	sp->resident--;
	sp->evicted++;
	return 0;
}

static int sieve_fault(struct pager *pg, struct pager_fault *f)
{
	struct sievepager *sp = pg->data;
	if (f->access != FA_READ)
		return PAGER_KILL;                    /* the bitmap is read-only */
	if (sp->resident == sp->max) {
		long r = evict_oldest(sp, f->client);
		if (r)
			return (int)r;
	}
	uint8_t bits[PG];
	sieve_page(sp, f->offset / PG, bits);
	long r = pager_supply(f->client, f->offset, bits, PROT_R);
	if (r)
		return (int)r;
	sp->ring[(sp->head + sp->resident++) % sp->max] = f->offset;
	sp->computed++;
	return PAGER_RESUME;
}

long sievepager_init(struct sievepager *sp, unsigned long resident, const struct pager_ops *more)
{
	memset(sp, 0, sizeof *sp);
	if (!resident)
		return -E_INVAL;
	long r = base_primes(sp);
	if (!r && !(sp->ring = malloc(resident * sizeof *sp->ring)))
		r = -E_NOMEM;
	sp->ops = (struct pager_ops){ .fault = sieve_fault, .client_gone = more ? more->client_gone : NULL,
				      .message = more ? more->message : NULL };
	if (!r)
		r = pager_init(&sp->pg, &sp->ops, sp);
	if (r) {
		free(sp->base);
		free(sp->ring);
	}
	sp->max = resident;
	return r;
}

struct pager_client *sievepager_attach(struct sievepager *sp, long task, uint64_t base,
				       unsigned long pages, long *err)
{
	if (sp->pg.live) {
		*err = -E_BUSY;
		return NULL;
	}
	sp->resident = sp->head = 0;              /* a new client starts with nothing mapped */
	return pager_attach(&sp->pg, task, base, pages * PG, PROT_R, NULL, err);
}

void sievepager_fini(struct sievepager *sp)
{
	pager_fini(&sp->pg);
	free(sp->base);
	free(sp->ring);
}
