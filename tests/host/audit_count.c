/* The coherence audit's line model and counters (see audit_count.h).
 * Lines live in an open-addressed hash table that doubles when half full;
 * sites in a second, fixed-size one. Only one thread runs observed code at
 * a time (audit_sched.h), so none of this needs locks. */
#include "audit_count.h"

#include <stdio.h>
#include <stdlib.h>

#define NOBODY (-1)

struct line {
	uintptr_t key;        /* line address + 1; 0: empty slot */
	uint64_t holders;     /* threads that fetched it since its last write */
	const void *wpc;      /* code of the last write (for audit_top) */
	int32_t writer;       /* last writer, NOBODY for memory */
};

static struct line *lines;
static size_t cap, used;
static bool counting;
static struct audit_totals tot;

#define SITES 8192
static struct audit_site sites[SITES];

/* Out of memory in the model: nothing sensible to count any more. */
static void oom(void)
{
	fputs("audit: out of memory for the line table\n", stderr);
	abort();
}

static size_t hash(uintptr_t k) { return (size_t)((k * 0x9E3779B97F4A7C15ull) >> 17); }

/* The slot of key k in tab (cap n, a power of two): where it is, or the
 * empty slot where it goes. */
static struct line *slot_in(struct line *tab, size_t n, uintptr_t k)
{
	for (size_t i = hash(k) & (n - 1);; i = (i + 1) & (n - 1))
		if (tab[i].key == k || !tab[i].key)
			return &tab[i];
}

/* Double the table (or make the first one), moving every line. */
static void grow(void)
{
	size_t n = cap ? 2 * cap : (size_t)1 << 20;
	struct line *t = calloc(n, sizeof(*t));
	if (!t)
		oom();
	for (size_t i = 0; i < cap; i++)
		if (lines[i].key)
			*slot_in(t, n, lines[i].key) = lines[i];
	free(lines);
	lines = t;
	cap = n;
}

/* The line with address l, made (no writer, no holders) if new. */
static struct line *line_of(uintptr_t l)
{
	if (2 * (used + 1) > cap)
		grow();
	struct line *e = slot_in(lines, cap, l + 1);
	if (!e->key) {
		e->key = l + 1;
		e->writer = NOBODY;
		used++;
	}
	return e;
}

/* Count one transfer made by the code at pc, of line l last written by
 * the code at wpc. */
static void site_count(const void *pc, uintptr_t l, const void *wpc)
{
	size_t h = hash((uintptr_t)pc) & (SITES - 1);
	for (size_t k = 0; k < SITES; k++, h = (h + 1) & (SITES - 1)) {
		struct audit_site *s = &sites[h];
		if (s->pc == pc || !s->pc) {
			s->pc = pc;
			s->line = l;
			s->writer_pc = wpc;
			s->transfers++;
			return;
		}
	}
	/* table full: the transfer is counted in the totals only */
}

void audit_note(const volatile void *a, size_t n, bool write, const void *pc, int self)
{
	if (!n)
		return;
	uintptr_t first = (uintptr_t)a / AUDIT_LINE, last = ((uintptr_t)a + n - 1) / AUDIT_LINE;
	for (uintptr_t l = first; l <= last; l++) {
		struct line *e = line_of(l);
		if (self < 0) {
			/* the main thread stands for memory */
			if (write) {
				e->writer = NOBODY;
				e->holders = 0;
			}
			continue;
		}
		uint64_t me = 1ull << self;
		bool moved = e->writer != NOBODY && e->writer != self && !(e->holders & me);
		e->holders |= me;
		if (counting) {
			tot.accesses++;
			if (moved) {
				tot.transfers++;
				site_count(pc, l * AUDIT_LINE, e->wpc);
			}
		}
		if (write) {
			e->writer = self;
			e->holders = me;
			e->wpc = pc;
		}
	}
}

void audit_counting(bool on) { counting = on; }

void audit_totals(struct audit_totals *t)
{
	*t = tot;
	t->sites = 0;
	for (size_t i = 0; i < SITES; i++)
		t->sites += sites[i].pc != NULL;
}

/* qsort order: most transfers first, then lower pc. */
static int by_count(const void *x, const void *y)
{
	const struct audit_site *a = x, *b = y;
	if (a->transfers != b->transfers)
		return a->transfers < b->transfers ? 1 : -1;
	return (uintptr_t)a->pc < (uintptr_t)b->pc ? -1 : (uintptr_t)a->pc > (uintptr_t)b->pc;
}

size_t audit_top(struct audit_site *out, size_t max)
{
	static struct audit_site all[SITES];
	size_t n = 0;
	for (size_t i = 0; i < SITES; i++)
		if (sites[i].pc)
			all[n++] = sites[i];
	qsort(all, n, sizeof(*all), by_count);
	n = n < max ? n : max;
	for (size_t i = 0; i < n; i++)
		out[i] = all[i];
	return n;
}
