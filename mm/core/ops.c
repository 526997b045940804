/* The four cursor operations: query, map, mark, unmap.
 *
 * A protocol with its own operations (hooks of mm_protocol: the two-level
 * baseline) gets the public query / mark / unmap / protect / take /
 * next_used and the dry runs; it builds on their page-table halves,
 * mm_pt_* (internal.h).
 *
 * Every changing operation runs twice over the same code: a dry run that
 * validates and counts the frames it will need (a split is simulated with
 * a "virtual" node whose entries are derived from the entry being split),
 * then, once those frames are reserved, the real run, which cannot fail.
 * So a failing operation leaves the tree exactly as it was.
 *
 * Needs (all functions): the cursor holds its range (mm_lock); every PT
 * page below the covering page inside the range belongs to the cursor. */
#include "internal.h"

struct node {
	struct mm_page *pg;   /* NULL: virtual node of a dry-run split */
	unsigned level;
	uint64_t base;
	uint64_t vpte;        /* virtual: the split huge leaf (level+1), or 0 */
	unsigned vad;         /* virtual: vpte's accessed/dirty state (PT_AD_*) */
	uint64_t vmeta;       /* virtual: the split entry's metadata word */
	bool vmeta_alloc;     /* virtual: would get a metadata array */
};

struct slot {
	uint64_t pte, meta;
};

/* The accessed/dirty bits set in leaf pte at level L (where hw_ad, the
 * ones the MMU sets on live leaves), found through the trait table's own
 * decoders so the core stays ISA-neutral: every set bit b of pte for
 * which accessed(b, L) or dirty(b, L). */
static uint64_t pte_ad(const struct pt_arch *a, uint64_t pte, unsigned L)
{
	uint64_t ad = 0;
	for (uint64_t m = pte; m; m &= m - 1) {
		uint64_t b = m & -m;
		if (a->accessed(b, L) || a->dirty(b, L))
			ad |= b;
	}
	return ad;
}

/* The accessed/dirty state of leaf pte at level L as make_leaf's ad (PT_AD_*). */
static unsigned leaf_ad(const struct pt_arch *a, uint64_t pte, unsigned L)
{
	return (a->accessed(pte, L) ? PT_AD_A : 0) | (a->dirty(pte, L) ? PT_AD_D : 0);
}

/* Leaf pte (level L) made again with permissions prot and accessed/dirty
 * state ad: every bit a table encodes comes from make_leaf, so a table
 * whose dirty state also changes a permission bit (hw_ad false: a clean
 * writable leaf is read-only in hardware) gets it right. */
static uint64_t remake_leaf(const struct pt_arch *a, uint64_t pte, unsigned L, unsigned prot,
			    unsigned ad)
{
	return a->make_leaf(a->addr(pte, L), prot, L, ad);
}

/* Entry i of a page at level-1 made from huge leaf `pte` at `level`, with
 * the leaf's accessed/dirty state `ad` (leaf_ad(pte)): every piece keeps
 * what was recorded for the whole. */
static uint64_t split_leaf(const struct pt_arch *a, uint64_t pte, unsigned ad, unsigned level,
			   unsigned i)
{
	uint64_t pa = a->addr(pte, level) + (uint64_t)i * span_of(a, level - 1);
	return a->make_leaf(pa, a->prot(pte, level), level - 1, ad);
}

static struct slot node_slot(struct mm_cursor *c, const struct node *n, unsigned i)
{
	struct slot s;
	if (n->pg) {
		s.pte = ent_load(&pg_ptes(c->as, n->pg)[i]);
		s.meta = ent_status(c->as, n->pg, i, s.pte);
	} else {
		s.pte = n->vpte ? split_leaf(c->as->arch, n->vpte, n->vad, n->level + 1, i) : 0;
		s.meta = n->vmeta;
	}
	return s;
}

static void ensure_meta(struct mm_cursor *c, struct mm_page *pg)
{
	if (pg->meta_pa)
		return;
	pg->meta_pa = mm_resv_pop(c);
	__atomic_fetch_add(&c->as->nr_frames, 1, __ATOMIC_RELAXED);
	mm_resv_used(c);
}

/* Write entry i of pg and keep nr_live right; returns the entry it
 * replaced. A present entry is replaced with an atomic exchange, so the
 * value returned holds every accessed/dirty bit the hardware set until
 * the moment it was replaced (a load then a store would lose a bit set
 * in between). pte is 0 or present; a non-present entry holds meta
 * itself where the table encodes it, any other non-zero meta needs the
 * page's metadata array (meta_in_array; ensure_meta first). */
static uint64_t slot_write(struct mm_cursor *c, struct mm_page *pg, unsigned i, uint64_t pte,
			   uint64_t meta)
{
	const struct pt_arch *a = c->as->arch;
	uint64_t *pt = pg_ptes(c->as, pg);
	uint64_t *m = pg_meta(c->as, pg);
	uint64_t old = ent_load(&pt[i]);
	bool was = old || (m && m[i]);   /* a non-present entry is 0 or holds a status */
	bool now = a->present(pte) || meta;
	uint64_t raw;
	uint64_t am = meta_in_array(a, pte, pg->level, meta, &raw) ? meta : 0;
	if (m ? m[i] != am : am != 0) {
		if (!m)
			c->as->plat->panic("mm: status without metadata array");
		m[i] = am;
	}
	if (a->present(old))
		old = ent_xchg(&pt[i], raw);
	else if (raw != old)
		ent_store(&pt[i], raw);
	pg->nr_live = (uint16_t)(pg->nr_live + (int)now - (int)was);
	return old;
}

static bool subtree_mapped(struct mm_cursor *c, struct mm_page *pg)
{
	const struct pt_arch *a = c->as->arch;
	uint64_t *pt = pg_ptes(c->as, pg);
	for (unsigned i = 0; i < pt_entries(a); i++) {
		uint64_t e = ent_load(&pt[i]);
		if (!a->present(e))
			continue;
		if (!is_table(a, e, pg->level))
			return true;
		if (subtree_mapped(c, child_of(c->as, e, pg->level)))
			return true;
	}
	return false;
}

/* Release every mapped page below pg and unlink every PT page below it
 * (pg itself stays; its entries are left as they are, it is dying). */
static void subtree_clear(struct mm_cursor *c, struct mm_page *pg, bool release)
{
	const struct pt_arch *a = c->as->arch;
	uint64_t *pt = pg_ptes(c->as, pg);
	for (unsigned i = 0; i < pt_entries(a); i++) {
		uint64_t e = ent_load(&pt[i]);
		if (!a->present(e))
			continue;
		if (is_table(a, e, pg->level)) {
			struct mm_page *ch = child_of(c->as, e, pg->level);
			subtree_clear(c, ch, release);
			c->as->proto->unlinked(c, ch);
			mm_cursor_dead_pt(c, ch);
		} else if (release) {
			mm_cursor_release_frame(c, a->addr(e, pg->level), pg->level);
		}
	}
}

/* Remove child ch (entry i of pg, range [eb, el]) and all below it. */
static void remove_subtree(struct mm_cursor *c, struct mm_page *pg, unsigned i,
			   struct mm_page *ch, uint64_t eb, uint64_t el, bool release)
{
	/* Unlink and record the flush first: subtree_clear may fill the
	 * cursor's batch and flush + release frames before it returns, and
	 * those frames must no longer be reachable (found by tests/model/tlb). */
	slot_write(c, pg, i, 0, 0);
	mm_cursor_flush_range(c, eb, el);
	subtree_clear(c, ch, release);
	c->as->proto->unlinked(c, ch);
	mm_cursor_dead_pt(c, ch);
}

/* Break-before-make, for an arch with needs_bbm: entry i of pg (level L,
 * first address eb) is about to become a present entry. If a TLB may
 * hold a translation there that differs from the one coming (the entry
 * is present now, or this cursor removed or changed something in its
 * range that is not flushed yet), make the entry invalid and flush its
 * range on every hart (tlb_flush_bbm) first, so no TLB ever holds the
 * old and the new translation together. Returns the entry taken out,
 * with every accessed/dirty bit the hardware set until then, or 0. The
 * metadata word stays; the caller writes the replacement at once. */
static uint64_t bbm_break(struct mm_cursor *c, struct mm_page *pg, unsigned i, uint64_t eb,
			  unsigned L)
{
	const struct pt_arch *a = c->as->arch;
	uint64_t el = eb + span_of(a, L) - 1;
	uint64_t *p = &pg_ptes(c->as, pg)[i];
	bool live = a->present(ent_load(p));
	bool pending = c->flush && c->flush_lo <= el && eb <= c->flush_hi;
	if (!live && !pending)
		return 0;
#ifdef MM_BUG_NO_BBM
	/* Seeded bug (tests/model: tlb-bbm-mutant): the replacement goes
	 * straight over the live entry; the TLB harness must catch it. */
	return 0;
#endif
	uint64_t old = live ? slot_write(c, pg, i, 0, slot_meta(c->as, pg, i)) : 0;
	c->as->plat->tlb_flush_bbm(c->as, eb, el + 1);
	return old;
}

/* Replace entry i of pg (level L, first address eb, not a table) by a new
 * child table whose entries reproduce it: pieces of a huge leaf (each
 * with the leaf's accessed/dirty bits, including any the hardware sets
 * while the child is built: the leaf is swapped out atomically and what
 * it held by then is added to every piece), or its status everywhere.
 * With needs_bbm a live leaf is broken first (bbm_break). */
struct mm_page *mm_split(struct mm_cursor *c, struct mm_page *pg, unsigned i, uint64_t eb,
			 uint64_t pte, uint64_t meta, unsigned L, bool cmeta)
{
	struct slot s = { pte, meta };
	const struct pt_arch *a = c->as->arch;
	struct mm_page *ch = mm_pt_init(c->as, mm_resv_pop(c), L - 1);
	mm_resv_used(c);      /* mm_pt_init counted it in nr_frames */
	if (cmeta)
		ensure_meta(c, ch);
	uint64_t *cp = pg_ptes(c->as, ch);
	uint64_t *cm = pg_meta(c->as, ch);
	bool leaf = a->present(s.pte);
	uint64_t ad = leaf ? pte_ad(a, s.pte, L) : 0;
	unsigned adf = leaf ? leaf_ad(a, s.pte, L) : 0;
	uint64_t fill;    /* what each non-present piece holds */
	bool arr = meta_in_array(a, leaf ? s.pte : 0, L, s.meta, &fill);
	if (arr && !cm)
		c->as->plat->panic("mm: split status without metadata array");
	unsigned live = 0;
	for (unsigned j = 0; j < pt_entries(a); j++) {
		uint64_t e = leaf ? split_leaf(a, s.pte, adf, L, j) : fill;
		if (leaf && s.meta && !arr)
			meta_in_array(a, e, L - 1, s.meta, &e);   /* the piece holds it as the leaf did */
		cp[j] = e;
		if (arr)
			cm[j] = s.meta;
		live += (e || s.meta) ? 1 : 0;
	}
	ch->nr_live = (uint16_t)live;
	c->as->proto->born(c, ch);
	uint64_t broken = a->needs_bbm ? bbm_break(c, pg, i, eb, L) : 0;
	uint64_t old = slot_write(c, pg, i, a->make_table(ch->pa), 0);
	if (broken)
		old = broken;
	/* Bits set on the leaf since the caller read it: the pieces are live
	 * now (the hardware may be setting bits in them too), so add them
	 * atomically. Only an MMU sets bits behind the cursor's back, so with
	 * hw_ad false there are none. */
	uint64_t late = leaf ? pte_ad(a, old, L) & ~ad : 0;
	if (late)
		for (unsigned j = 0; j < pt_entries(a); j++)
			__atomic_fetch_or(&cp[j], late, __ATOMIC_ACQ_REL);
	return ch;
}

struct rop {
	bool unmap;        /* unmap (mapped pages allowed) or mark */
	bool release;      /* hand unmapped frames to frame_release */
	bool dry;
	uint64_t meta_new; /* status word to leave in the range */
	bool new_arr;      /* meta_new goes to metadata arrays (meta_in_array) */
	uint64_t new_raw;  /* else what a non-present entry holding it is */
	unsigned need;     /* dry: frames needed */
	int err;
};

/* range_apply on entries i0..i1 of a real last-level page pg (first entry
 * at base): the case every small mark and unmap ends in, kept cheap by
 * reading the page's entry and status arrays once. It does exactly what
 * the general loop below does for a last-level entry (never a table,
 * always covered whole). */
static void range_leaf(struct mm_cursor *c, struct rop *op, struct mm_page *pg, uint64_t base,
		       unsigned i0, unsigned i1)
{
	const struct pt_arch *a = c->as->arch;
	bool (*present)(uint64_t) = a->present;
	uint64_t *pt = pg_ptes(c->as, pg);
	uint64_t *m = pg_meta(c->as, pg);
	bool meta_ready = m != 0;
	/* A non-present entry's status is its array word, or (that being 0)
	 * its own bits; encodings are unique, so comparing the two words
	 * compares statuses without decoding. */
	uint64_t want = op->new_arr ? op->meta_new : 0, want_raw = op->new_arr ? 0 : op->new_raw;
	for (unsigned i = i0; i <= i1; i++) {
		uint64_t pte = ent_load(&pt[i]);
		uint64_t om = m ? m[i] : 0;
		if (!present(pte)) {
			if (om == want && pte == want_raw)
				continue;                       /* already what we want */
		} else if (!op->unmap) {
			op->err = MM_EMAPPED;
			return;
		} else if (!op->dry) {
			uint64_t eb = entry_base(a, base, 1, i);
			slot_write(c, pg, i, 0, 0);
			mm_cursor_flush_range(c, eb, eb + MM_PAGE_SIZE - 1);
			if (op->release)
				mm_cursor_release_frame(c, a->addr(pte, 1), 1);
			om = m ? m[i] : 0;
			pte = 0;
		}
		if (want && !meta_ready) {
			if (op->dry) {
				op->need++;
			} else {
				ensure_meta(c, pg);
				m = pg_meta(c->as, pg);
			}
			meta_ready = true;
		}
		if (op->dry)
			continue;
		/* slot_write(c, pg, i, 0, op->meta_new) for a non-present entry */
		if (want != om)
			m[i] = want;
		if (pte != want_raw)
			ent_store(&pt[i], want_raw);
		pg->nr_live = (uint16_t)(pg->nr_live + (op->meta_new != 0) - ((om | pte) != 0));
	}
}

static void range_apply(struct mm_cursor *c, struct rop *op, const struct node *n,
			uint64_t lo, uint64_t hi)
{
	const struct pt_arch *a = c->as->arch;
	unsigned L = n->level;
	if (L == 1 && n->pg) {
		range_leaf(c, op, n->pg, n->base, pt_index(a, lo, 1), pt_index(a, hi, 1));
		return;
	}
	uint64_t sz = span_of(a, L);
	bool meta_ready = n->pg ? n->pg->meta_pa != 0 : n->vmeta_alloc;
	unsigned i0 = pt_index(a, lo, L), i1 = pt_index(a, hi, L);
	for (unsigned i = i0; i <= i1 && !op->err; i++) {
		uint64_t eb = entry_base(a, n->base, L, i), el = eb + sz - 1;
		uint64_t slo = lo > eb ? lo : eb, shi = hi < el ? hi : el;
		bool full = slo == eb && shi == el;
		struct slot s = node_slot(c, n, i);
		bool present = a->present(s.pte);
		bool table = is_table(a, s.pte, L);
		if (!present && s.meta == op->meta_new)
			continue;                       /* already what we want */
		bool fixed = c->as->sealed && L == a->levels;  /* sealed root entry */
		if (full && fixed) {
			op->err = MM_EINVAL;
			return;
		}
		if (full) {
			if (present && !table) {
				if (!op->unmap) {
					op->err = MM_EMAPPED;
					return;
				}
				if (!op->dry) {
					slot_write(c, n->pg, i, 0, 0);
					mm_cursor_flush_range(c, eb, el);
					if (op->release)
						mm_cursor_release_frame(c, a->addr(s.pte, L), L);
				}
			} else if (table) {
				struct mm_page *ch = child_of(c->as, s.pte, L);
				if (op->dry && !op->unmap && subtree_mapped(c, ch)) {
					op->err = MM_EMAPPED;
					return;
				}
				if (!op->dry)
					remove_subtree(c, n->pg, i, ch, eb, el, op->release);
			}
			if (op->new_arr && !meta_ready) {
				if (op->dry)
					op->need++;
				else
					ensure_meta(c, n->pg);
				meta_ready = true;
			}
			if (!op->dry)
				slot_write(c, n->pg, i, 0, op->meta_new);
			continue;
		}
		if (table) {
			struct mm_page *ch = child_of(c->as, s.pte, L);
			struct node cn = { .pg = ch, .level = L - 1, .base = eb };
			range_apply(c, op, &cn, slo, shi);
			if (!op->dry && ch->nr_live == 0 && !fixed && !c->keep_tables)
				remove_subtree(c, n->pg, i, ch, eb, el, op->release);
			continue;
		}
		if (fixed) {   /* a split would rewrite a sealed root entry */
			op->err = MM_EINVAL;
			return;
		}
		if (present && !op->unmap) {
			op->err = MM_EMAPPED;
			return;
		}
		uint64_t raw;
		bool cmeta = meta_in_array(a, present ? s.pte : 0, L, s.meta, &raw) || op->new_arr;
		if (op->dry) {
			op->need += 1 + (cmeta ? 1 : 0);
			struct node cn = { .pg = 0, .level = L - 1, .base = eb,
					   .vpte = present ? s.pte : 0,
					   .vad = present ? leaf_ad(a, s.pte, L) : 0, .vmeta = s.meta,
					   .vmeta_alloc = cmeta };
			range_apply(c, op, &cn, slo, shi);
		} else {
			struct mm_page *ch = mm_split(c, n->pg, i, eb, s.pte, s.meta, L, cmeta);
			struct node cn = { .pg = ch, .level = L - 1, .base = eb };
			range_apply(c, op, &cn, slo, shi);
			if (ch->nr_live == 0 && !c->keep_tables)
				remove_subtree(c, n->pg, i, ch, eb, el, op->release);
		}
	}
}

int mm_check_range(struct mm_cursor *c, uint64_t va, uint64_t len)
{
	if ((va | len) & (MM_PAGE_SIZE - 1))
		return MM_EALIGN;
	if (len == 0 || va + len - 1 < va)
		return MM_ERANGE;
	if (va < c->start || va + len - 1 > c->last)
		return MM_ENOTLOCKED;
	return MM_OK;
}

static int range_op(struct mm_cursor *c, uint64_t va, uint64_t len, bool unmap,
		    bool release, uint64_t meta_new)
{
	struct node root = { .pg = c->cover, .level = c->cover_level, .base = c->cover_base };
	struct rop op = { .unmap = unmap, .release = release, .dry = true, .meta_new = meta_new };
	op.new_arr = meta_in_array(c->as->arch, 0, 1, meta_new, &op.new_raw);
	range_apply(c, &op, &root, va, va + len - 1);
	if (op.err)
		return op.err;
	int err = mm_resv_fill(c, op.need);
	if (err) {
		mm_resv_return(c);
		return err;
	}
	op.dry = false;
	range_apply(c, &op, &root, va, va + len - 1);
	if (c->nr_resv)
		c->as->plat->panic("mm: reservation overcounted");
	return MM_OK;
}

/* The dry half of range_op: its error, or MM_OK and *need. */
static int range_need(struct mm_cursor *c, uint64_t va, uint64_t len, bool unmap, uint64_t meta_new,
		      unsigned *need)
{
	struct node root = { .pg = c->cover, .level = c->cover_level, .base = c->cover_base };
	struct rop op = { .unmap = unmap, .release = unmap, .dry = true, .meta_new = meta_new };
	op.new_arr = meta_in_array(c->as->arch, 0, 1, meta_new, &op.new_raw);
	range_apply(c, &op, &root, va, va + len - 1);
	*need = op.need;
	return op.err;
}

/* A protocol with its own dry runs (mm_protocol.need): the nodes it
 * counts go to the transaction's. */
static int proto_need(struct mm_cursor *c, unsigned op, uint64_t va, uint64_t len,
		    const struct mm_status *st, unsigned prot, unsigned *need)
{
	unsigned nodes = 0;
	int err = c->as->proto->need(c, op, va, len, st, prot, need, &nodes);
	if (!err)
		c->txn_nodes += nodes;
	return err;
}

int mm_mark_need(struct mm_cursor *c, uint64_t va, uint64_t len, const struct mm_status *st,
		 unsigned *need)
{
	*need = 0;
	if (c->as->proto->need)
		return proto_need(c, MM_NEED_MARK, va, len, st, 0, need);
	int err = mm_check_range(c, va, len);
	uint64_t meta;
	if (!err)
		err = mm_status_meta(c->as->arch, st, &meta);
	return err ? err : range_need(c, va, len, false, meta, need);
}

int mm_pt_unmap_need(struct mm_cursor *c, uint64_t va, uint64_t len, unsigned *need)
{
	*need = 0;
	int err = mm_check_range(c, va, len);
	return err ? err : range_need(c, va, len, true, 0, need);
}

int mm_unmap_need(struct mm_cursor *c, uint64_t va, uint64_t len, unsigned *need)
{
	if (c->as->proto->need)
		return proto_need(c, MM_NEED_UNMAP, va, len, 0, 0, need);
	return mm_pt_unmap_need(c, va, len, need);
}

int mm_take_need(struct mm_cursor *c, uint64_t va, unsigned *need)
{
	*need = 0;
	if (c->as->proto->need)
		return proto_need(c, MM_NEED_TAKE, va, MM_PAGE_SIZE, 0, 0, need);
	struct mm_info info;
	int err = mm_pt_query(c, va, &info);
	if (!err && (info.kind != MM_MAPPED))
		err = MM_EINVAL;
	if (!err && info.level != 1)
		err = MM_EHUGE;
	return err;
}

unsigned mm_txn_need_max(struct mm_cursor *c, uint64_t va, uint64_t len)
{
	unsigned below = c->cover_level - 1, ends = len > MM_PAGE_SIZE ? 2 : 1;
	unsigned n = ends * (2 * below + c->cover_level);
	(void)va;
	if (c->as->proto->need)
		c->txn_nodes += 2;          /* a change splits at most two VMAs */
	return n < MM_CURSOR_RESV ? n : MM_CURSOR_RESV;
}

int mm_status_meta(const struct pt_arch *a, const struct mm_status *st, uint64_t *meta)
{
	if (st->prot & ~MM_PROT_MASK || st->arg > MM_STATUS_ARG_MAX)
		return MM_EINVAL;
	if (st->kind != MM_INVALID && !pt_mt_ok(a, st->prot))
		return MM_EPROT;
	switch (st->kind) {
	case MM_INVALID:
		*meta = 0;
		return MM_OK;
	case MM_RESERVED:
	case MM_SWAPPED:
	case MM_PAGER:
		*meta = meta_make(st->kind, st->prot, st->dev, st->arg);
		return MM_OK;
	default:
		return MM_EINVAL;
	}
}

int mm_mark(struct mm_cursor *c, uint64_t va, uint64_t len, const struct mm_status *st)
{
	if (c->as->proto->mark)
		return c->as->proto->mark(c, va, len, st);
	int err = mm_check_range(c, va, len);
	if (err)
		return err;
	uint64_t meta;
	err = mm_status_meta(c->as->arch, st, &meta);
	if (err)
		return err;
	return range_op(c, va, len, false, false, meta);
}

int mm_pt_unmap(struct mm_cursor *c, uint64_t va, uint64_t len)
{
	int err = mm_check_range(c, va, len);
	if (err)
		return err;
	return range_op(c, va, len, true, true, 0);
}

int mm_unmap(struct mm_cursor *c, uint64_t va, uint64_t len)
{
	if (c->as->proto->unmap)
		return c->as->proto->unmap(c, va, len);
	return mm_pt_unmap(c, va, len);
}

int mm_query(struct mm_cursor *c, uint64_t va, struct mm_info *out)
{
	if (c->as->proto->query)
		return c->as->proto->query(c, va, out);
	return mm_pt_query(c, va, out);
}

int mm_pt_query(struct mm_cursor *c, uint64_t va, struct mm_info *out)
{
	const struct pt_arch *a = c->as->arch;
	if (va < c->start || va > c->last)
		return MM_ENOTLOCKED;
	struct mm_page *pg = c->cover;
	unsigned L = c->cover_level;
	for (;;) {
		unsigned i = pt_index(a, va, L);
		uint64_t e = ent_load(&pg_ptes(c->as, pg)[i]);
		if (is_table(a, e, L)) {
			pg = child_of(c->as, e, L);
			L--;
			continue;
		}
		uint64_t m = ent_status(c->as, pg, i, e);
		*out = (struct mm_info){ .level = (uint8_t)L };
		if (a->present(e)) {
			bool cow = meta_kind(m) == MM_COW;
			out->kind = cow ? MM_COW : MM_MAPPED;
			out->prot = (uint8_t)(cow ? meta_prot(m) : a->prot(e, L));
			out->pa = a->addr(e, L) + ((va & (span_of(a, L) - 1)) & ~(MM_PAGE_SIZE - 1));
			out->accessed = a->accessed(e, L);
			out->dirty = a->dirty(e, L);
			out->limits = (uint8_t)meta_limits(m);
		} else {
			out->kind = (uint8_t)meta_kind(m);
			out->prot = (uint8_t)meta_prot(m);
			out->dev = (uint8_t)meta_dev(m);
			out->arg = meta_arg(m);
		}
		return MM_OK;
	}
}

/* The checks of mm_map that need no walk: MM_OK or its error. */
static int map_check(struct mm_cursor *c, uint64_t va, uint64_t pa, unsigned level,
		     unsigned prot, unsigned flags)
{
	const struct pt_arch *a = c->as->arch;
	if (level < 1 || level > a->levels || !pt_leaf_ok(a, level))
		return MM_EHUGE;
	uint64_t sz = span_of(a, level);
	if ((va | pa) & (sz - 1))
		return MM_EALIGN;
	if ((prot & ~MM_PROT_MASK) || !(prot & MM_PROT_R) || !pt_mt_ok(a, prot))
		return MM_EPROT;
	if (flags & ~MM_MAP_FLAGS)
		return MM_EINVAL;
	if ((flags & MM_MAP_NOWRITE) && !(flags & MM_MAP_COW) && (prot & MM_PROT_W))
		return MM_EPROT;
	if (c->as->sealed && level == a->levels)
		return MM_EINVAL;
	if (va < c->start || va + sz - 1 > c->last || va + sz - 1 < va)
		return MM_ENOTLOCKED;
	return MM_OK;
}

/* Dry run of a map at va, level (checked): MM_EEXIST if any part of it is
 * mapped or COW, else MM_OK with *need = the frames the splits on the way
 * down (and, with new_meta, a metadata array for the entry) will take. */
static int map_need(struct mm_cursor *c, uint64_t va, unsigned level, bool new_meta,
		    unsigned *need)
{
	const struct pt_arch *a = c->as->arch;
	struct mm_page *pg = c->cover;
	bool virt = false, has_meta;
	bool varr = false;     /* the virtual pages get metadata arrays */
	unsigned L;
	*need = 0;
	for (L = c->cover_level; L > level; L--) {
		if (virt) {
			*need += 1 + (varr ? 1 : 0);
			continue;
		}
		unsigned i = pt_index(a, va, L);
		uint64_t e = ent_load(&pg_ptes(c->as, pg)[i]), raw;
		if (is_table(a, e, L)) {
			pg = child_of(c->as, e, L);
			continue;
		}
		if (a->present(e))
			return MM_EEXIST;
		virt = true;
		varr = meta_in_array(a, 0, L, ent_status(c->as, pg, i, e), &raw);
		*need += 1 + (varr ? 1 : 0);
	}
	if (virt) {
		has_meta = varr;
	} else {
		uint64_t e = ent_load(&pg_ptes(c->as, pg)[pt_index(a, va, level)]);
		if (a->present(e) && !is_table(a, e, level))
			return MM_EEXIST;
		if (is_table(a, e, level) && subtree_mapped(c, child_of(c->as, e, level)))
			return MM_EEXIST;
		has_meta = pg->meta_pa != 0;
	}
	if (new_meta && !has_meta)
		(*need)++;
	return MM_OK;
}

/* Split every entry above `level` on va's path that is not a table yet
 * (frames from the reservation map_need counted); the page at `level`
 * holding va, with its first entry's address in *basep. flag: mark each
 * page made here (MM_PG_MADE). */
static struct mm_page *map_descend(struct mm_cursor *c, uint64_t va, unsigned level,
				   uint64_t *basep, uint32_t flag)
{
	const struct pt_arch *a = c->as->arch;
	struct mm_page *pg = c->cover;
	uint64_t base = c->cover_base;
	for (unsigned L = c->cover_level; L > level; L--) {
		unsigned i = pt_index(a, va, L);
		uint64_t eb = entry_base(a, base, L, i);
		struct slot s = { ent_load(&pg_ptes(c->as, pg)[i]), 0 };
		if (is_table(a, s.pte, L)) {
			pg = child_of(c->as, s.pte, L);
		} else {
			uint64_t raw;
			s.meta = ent_status(c->as, pg, i, s.pte);
			pg = mm_split(c, pg, i, eb, s.pte, s.meta, L,
				      meta_in_array(a, a->present(s.pte) ? s.pte : 0, L, s.meta, &raw));
			if (flag)
				__atomic_fetch_or(&pg->flags, flag, __ATOMIC_RELEASE);
		}
		base = eb;
	}
	*basep = base;
	return pg;
}

int mm_map_need(struct mm_cursor *c, uint64_t va, uint64_t pa, unsigned level, unsigned prot,
		unsigned flags, unsigned *need)
{
	*need = 0;
	int err = map_check(c, va, pa, level, prot, flags);
	if (err)
		return err;
	bool cow = flags & MM_MAP_COW;
	uint64_t meta = meta_leaf(cow, prot, flags), raw;
	/* the leaf is built only to ask whether its bits hold meta */
	bool arr = meta && meta_in_array(c->as->arch,
					 c->as->arch->make_leaf(pa, cow ? prot & ~MM_PROT_W : prot,
								level, 0), level, meta, &raw);
	return map_need(c, va, level, arr, need);
}

int mm_map(struct mm_cursor *c, uint64_t va, uint64_t pa, unsigned level,
	   unsigned prot, unsigned flags)
{
	const struct pt_arch *a = c->as->arch;
	int err = map_check(c, va, pa, level, prot, flags);
	if (err)
		return err;
	bool cow = flags & MM_MAP_COW;
	uint64_t new_meta = meta_leaf(cow, prot, flags), raw;
	unsigned ad = (flags & MM_MAP_DIRTY) ? PT_AD_A | PT_AD_D :
		      (flags & MM_MAP_ACCESSED) ? PT_AD_A : 0;
	uint64_t leaf = a->make_leaf(pa, cow ? prot & ~MM_PROT_W : prot, level, ad);
	bool arr = meta_in_array(a, leaf, level, new_meta, &raw);
	unsigned need;
	err = map_need(c, va, level, arr, &need);
	if (err)
		return err;
	err = mm_resv_fill(c, need);
	if (err) {
		mm_resv_return(c);
		return err;
	}

	/* real run: cannot fail */
	uint64_t base, sz = span_of(a, level);
	struct mm_page *pg = map_descend(c, va, level, &base, 0);
	unsigned i = pt_index(a, va, level);
	uint64_t e = ent_load(&pg_ptes(c->as, pg)[i]);
	if (is_table(a, e, level)) {
		uint64_t eb = entry_base(a, base, level, i);
		remove_subtree(c, pg, i, child_of(c->as, e, level), eb, eb + sz - 1, true);
	}
	if (arr)
		ensure_meta(c, pg);
	if (a->needs_bbm)   /* a table left just now, or an unflushed unmap */
		bbm_break(c, pg, i, entry_base(a, base, level, i), level);
	slot_write(c, pg, i, leaf, new_meta);
	if (c->nr_resv)
		c->as->plat->panic("mm: reservation overcounted");
	return MM_OK;
}

/* The level of the next piece of mm_map_range: the largest page that va
 * and pa are aligned to, that fits in len and that the arch allows below
 * the covering page. */
static unsigned piece_level(struct mm_cursor *c, uint64_t va, uint64_t pa, uint64_t len)
{
	const struct pt_arch *a = c->as->arch;
	for (unsigned L = c->cover_level; L > 1; L--) {
		uint64_t sz = span_of(a, L);
		if (pt_leaf_ok(a, L) && !(va & (sz - 1)) && !(pa & (sz - 1)) && len >= sz)
			return L;
	}
	return 1;
}

/* Remove the pages marked MM_PG_MADE below pg (level L, first entry at
 * base) inside [lo, hi], bottom up, where each still holds one status
 * everywhere (undo: the status goes back into the entry it was split
 * from), and clear the mark on the rest. undo false: only clear marks. */
static void made_settle(struct mm_cursor *c, struct mm_page *pg, unsigned L, uint64_t base,
			uint64_t lo, uint64_t hi, bool undo);

int mm_map_range(struct mm_cursor *c, uint64_t va, uint64_t pa, uint64_t len,
		 unsigned prot)
{
	const struct pt_arch *a = c->as->arch;
	int err = mm_check_range(c, va, len);
	if (err)
		return err;
	if (pa & (MM_PAGE_SIZE - 1))
		return MM_EALIGN;
	/* Pass 1: check every piece and build the tables each needs. Splits
	 * only refine statuses (the tree means the same), and each page made
	 * here is marked, so a failure takes them away again and leaves the
	 * tree exactly as it was. */
	uint64_t done, base;
	for (done = 0; done < len && !err; ) {
		unsigned level = piece_level(c, va + done, pa + done, len - done), need;
		err = map_check(c, va + done, pa + done, level, prot, 0);
		if (!err)
			err = map_need(c, va + done, level, false, &need);
		if (!err)
			err = mm_resv_fill(c, need);
		if (err) {
			mm_resv_return(c);
			break;
		}
		map_descend(c, va + done, level, &base, MM_PG_MADE);
		done += span_of(a, level);
	}
	made_settle(c, c->cover, c->cover_level, c->cover_base, va, va + len - 1, err != MM_OK);
	if (err)
		return err;
	/* Pass 2: every table is in place, so no map below needs a frame or
	 * can fail: the statuses it replaces are never lost to a failure. */
	for (done = 0; done < len; ) {
		unsigned level = piece_level(c, va + done, pa + done, len - done);
		if (mm_map(c, va + done, pa + done, level, prot, 0))
			c->as->plat->panic("mm: map_range failed after its checks");
		done += span_of(a, level);
	}
	return MM_OK;
}

/* Visit, children first, every table below pg (level L, first entry at
 * base) that overlaps [lo, hi]: visit(c, pg, L, i, ch, eb, el, arg) for
 * table ch in entry i of pg, whose range is [eb, el]. visit may remove ch.
 * sealed: also what hangs from a sealed root entry (else left out). */
typedef void tables_fn(struct mm_cursor *c, struct mm_page *pg, unsigned L, unsigned i,
		       struct mm_page *ch, uint64_t eb, uint64_t el, void *arg);
static void tables_post(struct mm_cursor *c, struct mm_page *pg, unsigned L, uint64_t base,
			uint64_t lo, uint64_t hi, bool sealed, tables_fn *visit, void *arg)
{
	const struct pt_arch *a = c->as->arch;
	if (L == 1)
		return;
	uint64_t sz = span_of(a, L);
	for (unsigned i = pt_index(a, lo, L); i <= pt_index(a, hi, L); i++) {
		uint64_t e = ent_load(&pg_ptes(c->as, pg)[i]);
		if (!is_table(a, e, L) || (!sealed && c->as->sealed && L == a->levels))
			continue;
		uint64_t eb = entry_base(a, base, L, i), el = eb + sz - 1;
		struct mm_page *ch = child_of(c->as, e, L);
		tables_post(c, ch, L - 1, eb, lo > eb ? lo : eb, hi < el ? hi : el, sealed, visit,
			    arg);
		visit(c, pg, L, i, ch, eb, el, arg);
	}
}

/* tables_post visitor of mm_prune: remove ch if it holds nothing.
 * Allocates nothing, cannot fail. */
static void prune_one(struct mm_cursor *c, struct mm_page *pg, unsigned L, unsigned i,
		      struct mm_page *ch, uint64_t eb, uint64_t el, void *arg)
{
	(void)L;
	(void)arg;
	if (ch->nr_live == 0)
		remove_subtree(c, pg, i, ch, eb, el, false);
}

void mm_prune(struct mm_cursor *c)
{
	tables_post(c, c->cover, c->cover_level, c->cover_base, c->start, c->last, false, prune_one,
		    0);
}

/* Entry i of pg (level L, range [eb, el]) holds the table ch. If ch holds
 * no mapping and the same status word in every entry (0: nothing), as a
 * split left it, put that status back into entry i and remove ch; false
 * (nothing changed) otherwise, or when entry i may not change (a sealed
 * root entry) or cannot hold the status (it needs a metadata array and pg
 * has none).
 * Allocates nothing. */
static bool unsplit(struct mm_cursor *c, struct mm_page *pg, unsigned L, unsigned i,
		    struct mm_page *ch, uint64_t eb, uint64_t el)
{
	const struct pt_arch *a = c->as->arch;
	if (c->as->sealed && L == a->levels)
		return false;
	uint64_t *cp = pg_ptes(c->as, ch);
	uint64_t m = slot_meta(c->as, ch, 0);
	for (unsigned j = 0; j < pt_entries(a); j++)
		if (a->present(ent_load(&cp[j])) || slot_meta(c->as, ch, j) != m)
			return false;
	uint64_t raw;
	if (meta_in_array(a, 0, L - 1, m, &raw) && !pg->meta_pa)
		return false;
	remove_subtree(c, pg, i, ch, eb, el, false);
	if (m)
		slot_write(c, pg, i, 0, m);
	return true;
}

void mm_unsplit_path(struct mm_cursor *c, uint64_t va, struct mm_page *const *made, unsigned n)
{
	const struct pt_arch *a = c->as->arch;
	struct mm_page *path[MM_MAX_LEVELS + 1];
	uint64_t bases[MM_MAX_LEVELS + 1];
	unsigned d, L = c->cover_level;
	path[0] = c->cover;
	bases[0] = c->cover_base;
	for (d = 0; d < n && L - d > 1; d++) {
		unsigned i = pt_index(a, va, L - d);
		uint64_t e = ent_load(&pg_ptes(c->as, path[d])[i]);
		if (!is_table(a, e, L - d) || child_of(c->as, e, L - d) != made[d])
			break;
		path[d + 1] = made[d];
		bases[d + 1] = entry_base(a, bases[d], L - d, i);
	}
	/* path[1..d] are the pages made, as they still are; from the bottom */
	for (; d > 0; d--) {
		unsigned Lp = L - (d - 1);
		unsigned i = pt_index(a, va, Lp);
		uint64_t eb = bases[d];
		if (!unsplit(c, path[d - 1], Lp, i, path[d], eb, eb + span_of(a, Lp) - 1))
			return;
	}
}

/* tables_post visitor of made_settle: clear ch's MM_PG_MADE; with *undo,
 * also put back the status it was split from where it still holds only
 * that. */
static void settle_one(struct mm_cursor *c, struct mm_page *pg, unsigned L, unsigned i,
		       struct mm_page *ch, uint64_t eb, uint64_t el, void *undo)
{
	if (!(__atomic_load_n(&ch->flags, __ATOMIC_ACQUIRE) & MM_PG_MADE))
		return;
	__atomic_fetch_and(&ch->flags, ~MM_PG_MADE, __ATOMIC_RELEASE);
	if (*(bool *)undo)
		unsplit(c, pg, L, i, ch, eb, el);
}

static void made_settle(struct mm_cursor *c, struct mm_page *pg, unsigned L, uint64_t base,
			uint64_t lo, uint64_t hi, bool undo)
{
	tables_post(c, pg, L, base, lo, hi, true, settle_one, &undo);
}

/* ---- operations for pagers and fork: protect, make_cow, age, take,
 * next_used (contracts in cortenmm/cursor.h) ---- */

#define RWX (MM_PROT_R | MM_PROT_W | MM_PROT_X)

/* The bits of a leaf at level L that hold accessed and dirty (where
 * hw_ad, owned by the MMU on live leaves), found through the trait
 * table's own decoders so the core stays ISA-neutral: every bit b for
 * which accessed(1 << b, L) or dirty(1 << b, L) holds. */
static uint64_t hw_ad_bits(const struct pt_arch *a, bool dirty_too, unsigned L)
{
	uint64_t m = 0;
	for (unsigned b = 0; b < 64; b++)
		if (a->accessed(1ull << b, L) || (dirty_too && a->dirty(1ull << b, L)))
			m |= 1ull << b;
	return m;
}

enum { P_PROTECT, P_COW, P_UNCOW, P_CLEAN };

struct pop {
	int mode;
	unsigned prot;     /* P_PROTECT: the new R/W/X */
	/* by leaf level: hardware A/D bits, kept on rewritten leaves (P_CLEAN: A only) */
	uint64_t ad[MM_MAX_LEVELS + 1];
	bool dry;
	bool arrays;       /* dry, and give existing pages their arrays now */
	unsigned need;
	int err;
	struct mm_page *attached;   /* pages given an array by this op */
	bool dirty_seen;   /* P_CLEAN, real run: a leaf in the range was dirty */
	unsigned changes;  /* entries the run found to rewrite */
	uint64_t dbits[MM_MAX_LEVELS + 1];  /* by leaf level, P_CLEAN where hw_ad: the dirty bits a clean takes off */
};

/* Give pg a metadata array now, from a reservation of its own, noted in
 * op->attached (an all-zero array means what no array means). */
static void pop_attach(struct mm_cursor *c, struct pop *op, struct mm_page *pg)
{
	if (mm_resv_fill(c, 1)) {
		mm_resv_return(c);
		op->err = MM_ENOMEM;
		return;
	}
	ensure_meta(c, pg);
	pg->next = op->attached;
	op->attached = pg;
}

/* Take the arrays pop_attach added off again (nothing was written). */
static void pop_detach(struct mm_cursor *c, struct pop *op)
{
	while (op->attached) {
		struct mm_page *pg = op->attached;
		uint64_t m = pg->meta_pa;
		op->attached = pg->next;
		pg->next = 0;
		pg->meta_pa = 0;
		__atomic_fetch_sub(&c->as->nr_frames, 1, __ATOMIC_RELAXED);
		c->as->plat->pt_free(m);
	}
}

/* What op makes of a non-table slot at level L; false: it stays as it is. */
static bool pop_slot(struct mm_cursor *c, const struct pop *op, struct slot s, unsigned L,
		     struct slot *out)
{
	const struct pt_arch *a = c->as->arch;
	if (op->mode == P_CLEAN) {
		/* Only a dirty leaf changes: a clean one keeps its entry, so a
		 * bit the MMU sets after this read stays set. Where the MMU
		 * owns A/D, clearing D is the whole change; elsewhere D also
		 * decides the hardware W bit, so make_leaf rebuilds the leaf. */
		if (!a->present(s.pte) || !a->dirty(s.pte, L))
			return false;
		out->meta = s.meta;
		out->pte = a->hw_ad ? s.pte & ~op->dbits[L] :
			   remake_leaf(a, s.pte, L, a->prot(s.pte, L), leaf_ad(a, s.pte, L) & ~PT_AD_D);
		return true;
	}
	if (a->present(s.pte)) {
		unsigned hw = a->prot(s.pte, L);
		bool cow = meta_kind(s.meta) == MM_COW;
		unsigned lim = meta_limits(s.meta);
		if (op->mode == P_UNCOW) {
			if (!cow)
				return false;
			out->meta = meta_leaf(false, 0, lim);
			out->pte = remake_leaf(a, s.pte, L, meta_prot(s.meta), leaf_ad(a, s.pte, L));
		} else if (op->mode == P_COW) {
			if (cow)
				return false;
			out->meta = meta_leaf(true, hw, lim);
			out->pte = remake_leaf(a, s.pte, L, hw & ~MM_PROT_W, leaf_ad(a, s.pte, L));
		} else {
			unsigned np = ((cow ? meta_prot(s.meta) : hw) & ~RWX) | op->prot;
			out->meta = cow ? meta_leaf(true, np, lim) : s.meta;
			out->pte = remake_leaf(a, s.pte, L, cow ? np & ~MM_PROT_W : np, leaf_ad(a, s.pte, L));
		}
		return out->pte != (s.pte & ~a->leaf_status_bits) || out->meta != s.meta;
	}
	unsigned k = meta_kind(s.meta);
	if (op->mode != P_PROTECT || (k != MM_RESERVED && k != MM_PAGER))
		return false;
	out->pte = 0;
	out->meta = meta_make(k, (meta_prot(s.meta) & ~RWX) | op->prot, meta_dev(s.meta),
			      meta_arg(s.meta));
	return out->meta != s.meta;
}

/* Rewrite entry i of pg (not a table) from old to nw; a present leaf is
 * swapped with a compare-and-swap so A/D bits the hardware sets meanwhile
 * survive, and its range is flushed at commit. A non-present entry's
 * status is written where it is kept (slot_write). */
static void pop_write(struct mm_cursor *c, const struct pop *op, struct mm_page *pg, unsigned i,
		      struct slot old, struct slot nw, uint64_t eb, uint64_t el)
{
	if (!c->as->arch->present(old.pte)) {
		slot_write(c, pg, i, 0, nw.meta);
		return;
	}
	uint64_t *m = pg_meta(c->as, pg), raw;
	uint64_t am = meta_in_array(c->as->arch, nw.pte, pg->level, nw.meta, &raw) ? nw.meta : 0;
	if (m ? m[i] != am : am != 0) {
		if (!m)
			c->as->plat->panic("mm: status without metadata array");
		m[i] = am;
	}
	uint64_t *p = &pg_ptes(c->as, pg)[i];
	uint64_t cur = old.pte;
	uint64_t keep = op->ad[pg->level];
	while (!__atomic_compare_exchange_n(p, &cur, (raw & ~keep) | (cur & keep), false,
					    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		;
	mm_cursor_flush_range(c, eb, el);
}

static void pop_apply(struct mm_cursor *c, struct pop *op, const struct node *n,
		      uint64_t lo, uint64_t hi)
{
	const struct pt_arch *a = c->as->arch;
	unsigned L = n->level;
	uint64_t sz = span_of(a, L);
	bool meta_ready = n->pg ? n->pg->meta_pa != 0 : n->vmeta_alloc;
	unsigned i0 = pt_index(a, lo, L), i1 = pt_index(a, hi, L);
	for (unsigned i = i0; i <= i1 && !op->err; i++) {
		uint64_t eb = entry_base(a, n->base, L, i), el = eb + sz - 1;
		uint64_t slo = lo > eb ? lo : eb, shi = hi < el ? hi : el;
		struct slot s = node_slot(c, n, i), nw;
		uint64_t raw;
		if (is_table(a, s.pte, L)) {
			struct node cn = { .pg = child_of(c->as, s.pte, L), .level = L - 1, .base = eb };
			pop_apply(c, op, &cn, slo, shi);
			continue;
		}
		if (op->mode == P_PROTECT && (op->prot & MM_PROT_W) && a->present(s.pte) &&
		    meta_kind(s.meta) != MM_COW && (meta_limits(s.meta) & MM_MAP_NOWRITE)) {
			op->err = MM_EPROT;             /* a read-only grant stays read-only */
			return;
		}
		if (!pop_slot(c, op, s, L, &nw))
			continue;
		op->changes++;
		if (slo == eb && shi == el) {
			op->dirty_seen |= op->mode == P_CLEAN && !op->dry;
			if (meta_in_array(a, nw.pte, L, nw.meta, &raw) && !meta_ready) {
				if (op->arrays)
					pop_attach(c, op, n->pg);
				else if (op->dry)
					op->need++;
				else
					ensure_meta(c, n->pg);
				meta_ready = true;
			}
			if (!op->dry)
				pop_write(c, op, n->pg, i, s, nw, eb, el);
			continue;
		}
		if (op->arrays)
			continue;                       /* splits: counted by the dry run */
		if (c->as->sealed && L == a->levels) {   /* a split would rewrite a sealed root entry */
			op->err = MM_EINVAL;
			return;
		}
		bool cmeta = meta_in_array(a, s.pte, L, s.meta, &raw) ||
			     meta_in_array(a, nw.pte, L, nw.meta, &raw);
		if (op->dry) {
			op->need += 1 + (cmeta ? 1 : 0);
			struct node cn = { .pg = 0, .level = L - 1, .base = eb,
					   .vpte = a->present(s.pte) ? s.pte : 0,
					   .vad = a->present(s.pte) ? leaf_ad(a, s.pte, L) : 0,
					   .vmeta = s.meta, .vmeta_alloc = cmeta };
			pop_apply(c, op, &cn, slo, shi);
		} else {
			struct mm_page *ch = mm_split(c, n->pg, i, eb, s.pte, s.meta, L, cmeta);
			struct node cn = { .pg = ch, .level = L - 1, .base = eb };
			pop_apply(c, op, &cn, slo, shi);
		}
	}
}

static int pop_run(struct mm_cursor *c, struct pop *op, uint64_t va, uint64_t len)
{
	struct node root = { .pg = c->cover, .level = c->cover_level, .base = c->cover_base };
	/* A clean takes D off: only A is carried over from the live entry. */
	for (unsigned L = 1; L <= c->as->arch->levels; L++) {
		op->ad[L] = hw_ad_bits(c->as->arch, op->mode != P_CLEAN, L);
		op->dbits[L] = hw_ad_bits(c->as->arch, true, L) & ~op->ad[L];
	}
	op->dry = true;
	pop_apply(c, op, &root, va, va + len - 1);
	if (!op->err && !op->changes)
		return MM_OK;           /* nothing to rewrite: skip the real run */
	if (!op->err && op->need > MM_CURSOR_RESV) {
		/* Arrays for more existing pages than one reservation holds
		 * (make_cow over leaf tables that have none): give them theirs
		 * first, a frame at a time, then count again (splits only). */
		op->arrays = true;
		pop_apply(c, op, &root, va, va + len - 1);
		op->arrays = false;
		op->need = 0;
		if (!op->err)
			pop_apply(c, op, &root, va, va + len - 1);
	}
	int err = op->err ? op->err : mm_resv_fill(c, op->need);
	if (err) {
		mm_resv_return(c);
		pop_detach(c, op);
		return err;
	}
	op->dry = false;
	pop_apply(c, op, &root, va, va + len - 1);
	if (c->nr_resv)
		c->as->plat->panic("mm: reservation overcounted");
	return MM_OK;
}

/* The dry run of op (dry set) over [va, va+len), checked: its error, or
 * MM_OK and *need = the frames its real run would take. */
static int pop_need(struct mm_cursor *c, struct pop *op, uint64_t va, uint64_t len,
		    unsigned *need)
{
	struct node root = { .pg = c->cover, .level = c->cover_level, .base = c->cover_base };
	pop_apply(c, op, &root, va, va + len - 1);
	*need = op->need;
	return op->err;
}

int mm_protect(struct mm_cursor *c, uint64_t va, uint64_t len, unsigned prot)
{
	if (c->as->proto->protect)
		return c->as->proto->protect(c, va, len, prot);
	return mm_pt_protect(c, va, len, prot);
}

int mm_pt_protect(struct mm_cursor *c, uint64_t va, uint64_t len, unsigned prot)
{
	int err = mm_check_range(c, va, len);
	if (err)
		return err;
	if ((prot & ~RWX) || !(prot & MM_PROT_R))
		return MM_EPROT;
	struct pop op = { .mode = P_PROTECT, .prot = prot };
	return pop_run(c, &op, va, len);
}

int mm_protect_need(struct mm_cursor *c, uint64_t va, uint64_t len, unsigned prot,
		    unsigned *need)
{
	if (c->as->proto->need)
		return proto_need(c, MM_NEED_PROTECT, va, len, 0, prot, need);
	return mm_pt_protect_need(c, va, len, prot, need);
}

int mm_pt_protect_need(struct mm_cursor *c, uint64_t va, uint64_t len, unsigned prot,
		       unsigned *need)
{
	*need = 0;
	int err = mm_check_range(c, va, len);
	if (err)
		return err;
	if ((prot & ~RWX) || !(prot & MM_PROT_R))
		return MM_EPROT;
	struct pop op = { .mode = P_PROTECT, .prot = prot, .dry = true };
	return pop_need(c, &op, va, len, need);
}

int mm_make_cow(struct mm_cursor *c, uint64_t va, uint64_t len)
{
	int err = mm_check_range(c, va, len);
	if (err)
		return err;
	struct pop op = { .mode = P_COW };
	return pop_run(c, &op, va, len);
}

int mm_unshare(struct mm_cursor *c, uint64_t va, uint64_t len)
{
	int err = mm_check_range(c, va, len);
	if (err)
		return err;
	struct pop op = { .mode = P_UNCOW };
	return pop_run(c, &op, va, len);
}

int mm_clean(struct mm_cursor *c, uint64_t va, uint64_t len, bool *was_dirty)
{
	int err = mm_check_range(c, va, len);
	if (err)
		return err;
	struct pop op = { .mode = P_CLEAN };
	err = pop_run(c, &op, va, len);
	if (was_dirty)
		*was_dirty = !err && op.dirty_seen;
	return err;
}

int mm_clean_need(struct mm_cursor *c, uint64_t va, uint64_t len, unsigned *need)
{
	*need = 0;
	int err = mm_check_range(c, va, len);
	if (err)
		return err;
	struct pop op = { .mode = P_CLEAN, .dry = true };
	return pop_need(c, &op, va, len, need);
}

/* The non-table entry holding va: its page, index, level and base. */
static void find_entry(struct mm_cursor *c, uint64_t va, struct mm_page **pgp, unsigned *ip,
		       unsigned *Lp, uint64_t *basep)
{
	const struct pt_arch *a = c->as->arch;
	struct mm_page *pg = c->cover;
	unsigned L = c->cover_level;
	uint64_t base = c->cover_base;
	for (;;) {
		unsigned i = pt_index(a, va, L);
		uint64_t e = ent_load(&pg_ptes(c->as, pg)[i]);
		if (!is_table(a, e, L)) {
			*pgp = pg, *ip = i, *Lp = L, *basep = entry_base(a, base, L, i);
			return;
		}
		base = entry_base(a, base, L, i);
		pg = child_of(c->as, e, L);
		L--;
	}
}

/* Where find_entry found a va: the non-table entry i of pg, level L, its
 * range starting at eb. */
struct spot {
	struct mm_page *pg;
	unsigned i, L;
	uint64_t eb;
};

/* find_entry for a va the cursor holds: MM_OK, or MM_ENOTLOCKED. */
static int find_locked(struct mm_cursor *c, uint64_t va, struct spot *w)
{
	if (va < c->start || va > c->last)
		return MM_ENOTLOCKED;
	find_entry(c, va, &w->pg, &w->i, &w->L, &w->eb);
	return MM_OK;
}

int mm_age(struct mm_cursor *c, uint64_t va, struct mm_info *out)
{
	int err = mm_query(c, va, out);
	if (err)
		return err;
	if (out->kind != MM_MAPPED && out->kind != MM_COW)
		return MM_OK;
	const struct pt_arch *a = c->as->arch;
	struct mm_page *pg;
	unsigned i, L;
	uint64_t eb;
	find_entry(c, va, &pg, &i, &L, &eb);
	uint64_t abits = hw_ad_bits(a, false, L);
	uint64_t old = __atomic_fetch_and(&pg_ptes(c->as, pg)[i], ~abits, __ATOMIC_ACQ_REL);
	if (old & abits)
		mm_cursor_flush_range(c, eb, eb + span_of(a, L) - 1);
	return MM_OK;
}

int mm_touch(struct mm_cursor *c, uint64_t va, bool write)
{
	const struct pt_arch *a = c->as->arch;
	struct spot w;
	int err = find_locked(c, va, &w);
	if (err)
		return err;
	uint64_t *p = &pg_ptes(c->as, w.pg)[w.i];
	uint64_t cur = ent_load(p);
	if (!a->present(cur))
		return MM_EINVAL;
	if (write && !(a->prot(cur, w.L) & MM_PROT_W))
		return MM_EPROT;     /* read-only or COW: a real protection fault */
	unsigned want = PT_AD_A | (write ? PT_AD_D : 0);
	/* Compare-and-swap: where the MMU sets A/D itself it may be setting
	 * them now; where software does, nothing else writes the entry. */
	for (;;) {
		unsigned ad = leaf_ad(a, cur, w.L);
		if ((ad & want) == want)
			return MM_OK;
		uint64_t nw = remake_leaf(a, cur, w.L, a->prot(cur, w.L), ad | want);
		nw |= cur & a->leaf_status_bits;   /* the leaf's status stays */
		if (__atomic_compare_exchange_n(p, &cur, nw, false, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			break;
	}
	mm_cursor_flush_range(c, w.eb, w.eb + span_of(a, w.L) - 1);
	return MM_OK;
}

int mm_take(struct mm_cursor *c, uint64_t va, struct mm_info *out)
{
	if (c->as->proto->take)
		return c->as->proto->take(c, va, out);
	return mm_pt_take(c, va, out);
}

int mm_pt_take(struct mm_cursor *c, uint64_t va, struct mm_info *out)
{
	const struct pt_arch *a = c->as->arch;
	if (va & (MM_PAGE_SIZE - 1))
		return MM_EALIGN;
	struct spot w;
	int err = find_locked(c, va, &w);
	if (err)
		return err;
	struct mm_page *pg = w.pg;
	unsigned i = w.i, L = w.L;
	uint64_t eb = w.eb;
	uint64_t e = ent_load(&pg_ptes(c->as, pg)[i]);
	if (!a->present(e) || meta_kind(slot_meta(c->as, pg, i)) == MM_COW)
		return MM_EINVAL;
	if (L != 1)
		return MM_EHUGE;
	/* The last word of the entry, with every A/D bit set until now. */
	uint64_t last = ent_xchg(&pg_ptes(c->as, pg)[i], 0);
	uint64_t *m = pg_meta(c->as, pg);
	unsigned lim = meta_limits(ent_status(c->as, pg, i, last));
	if (m)
		m[i] = 0;                       /* the limits go with the mapping */
	pg->nr_live--;
	mm_cursor_flush_range(c, eb, eb + MM_PAGE_SIZE - 1);
	*out = (struct mm_info){ .kind = MM_MAPPED, .prot = (uint8_t)a->prot(last, 1), .level = 1,
				 .accessed = a->accessed(last, 1), .dirty = a->dirty(last, 1),
				 .pa = a->addr(last, 1), .limits = (uint8_t)lim };
	/* Remove the PT pages this left empty (needs no frames: the entry is
	 * empty now, so nothing is split); in a transaction, at its end. */
	if (!c->keep_tables)
		range_op(c, va, MM_PAGE_SIZE, true, false, 0);
	return MM_OK;
}

static int next_used(struct mm_cursor *c, struct mm_page *pg, unsigned L, uint64_t base,
		     uint64_t lo, uint64_t hi, uint64_t *next, uint64_t *skipped)
{
	const struct pt_arch *a = c->as->arch;
	uint64_t sz = span_of(a, L);
	unsigned i0 = pt_index(a, lo, L), i1 = pt_index(a, hi, L);
	/* From entry 0 on, nr_live says when the rest of the page is empty. */
	unsigned left = i0 == 0 ? pg->nr_live : ~0u;
	for (unsigned i = i0; i <= i1; i++) {
		if (left == 0) {
			(*skipped)++;
			return 0;
		}
		uint64_t eb = entry_base(a, base, L, i), el = eb + sz - 1;
		uint64_t slo = lo > eb ? lo : eb, shi = hi < el ? hi : el;
		uint64_t e = ent_load(&pg_ptes(c->as, pg)[i]);
		if (is_table(a, e, L)) {
			left--;
			struct mm_page *ch = child_of(c->as, e, L);
			if (ch->nr_live == 0) {
				(*skipped)++;
				continue;
			}
			if (next_used(c, ch, L - 1, eb, slo, shi, next, skipped))
				return 1;
			continue;
		}
		if (a->present(e) || ent_status(c->as, pg, i, e)) {
			*next = slo;
			return 1;
		}
		if (L > 1)
			(*skipped)++;
	}
	return 0;
}

int mm_pt_next_used(struct mm_cursor *c, uint64_t lo, uint64_t hi, uint64_t *next,
		    uint64_t *skipped)
{
	uint64_t sk = 0;
	int r = next_used(c, c->cover, c->cover_level, c->cover_base, lo, hi, next, &sk);
	if (skipped)
		*skipped += sk;
	return r;
}

int mm_next_used(struct mm_cursor *c, uint64_t va, uint64_t *next, uint64_t *skipped)
{
	if (c->as->proto->next_used)
		return c->as->proto->next_used(c, va, next, skipped);
	if (va & (MM_PAGE_SIZE - 1))
		return MM_EALIGN;
	if (va < c->start || va > c->last)
		return MM_ENOTLOCKED;
	return mm_pt_next_used(c, va, c->last, next, skipped);
}
