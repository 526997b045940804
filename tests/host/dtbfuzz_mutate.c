/* Mutations of a DTB, each a way firmware could get it wrong: bit flips
 * and byte sets, truncation, header offsets and sizes, property lengths
 * and name offsets, rewritten tokens (END before BEGIN, BEGIN without END,
 * nesting past any limit), absurd #address-cells/#size-cells, reg of odd
 * lengths, strings without their NUL or cut by the block's end, many
 * memory or cpu nodes, a broken memreserve block. Everything is drawn from the caller's generator, so a
 * seed and an input number reproduce an input. */
#include <string.h>
#include "fdt.h"
#include "dtbfuzz.h"

#define MAX_TOKS 4096

struct tok {
	uint32_t off;      /* of the token word, from the blob's start */
	uint32_t kind;
	uint32_t end;      /* just past the token and its payload */
};

static uint32_t get32(const struct dtb_buf *d, uint32_t off)
{
	return off <= d->len && d->len - off >= 4 ? fdt_be32(d->b + off) : 0;
}

static void put32(struct dtb_buf *d, uint32_t off, uint32_t v)
{
	if (off > d->len || d->len - off < 4)
		return;
	d->b[off] = (uint8_t)(v >> 24);
	d->b[off + 1] = (uint8_t)(v >> 16);
	d->b[off + 2] = (uint8_t)(v >> 8);
	d->b[off + 3] = (uint8_t)v;
}

/* Header words, by index (1 totalsize, 2 off_dt_struct, 3 off_dt_strings,
 * 4 off_mem_rsvmap, 5 version, 6 last_comp_version, 7 boot_cpuid_phys,
 * 8 size_dt_strings, 9 size_dt_struct). */
static uint32_t hdr(const struct dtb_buf *d, int i) { return get32(d, 4u * (uint32_t)i); }

/* The tokens of the structure block as far as they can be followed
 * (a tolerant walk: it stops at the first thing it cannot read). */
static int tokens(const struct dtb_buf *d, struct tok *t, int max)
{
	uint32_t pos = hdr(d, 2), end = pos + hdr(d, 9);
	if (end < pos || end > d->len)
		end = d->len;
	int n = 0;
	while (n < max && pos < end && end - pos >= 4) {
		uint32_t k = get32(d, pos), next;
		if (k == FDT_BEGIN_NODE) {
			size_t l = strnlen((const char *)d->b + pos + 4, end - pos - 4);
			next = (pos + 4 + (uint32_t)l + 1 + 3) & ~3u;
		} else if (k == FDT_PROP) {
			if (end - pos < 12 || get32(d, pos + 4) > end - pos - 12)
				break;
			next = (pos + 12 + get32(d, pos + 4) + 3) & ~3u;
		} else if (k == FDT_END_NODE || k == FDT_NOP || k == FDT_END) {
			next = pos + 4;
		} else {
			break;
		}
		t[n++] = (struct tok){ pos, k, next };
		if (k == FDT_END)
			break;
		pos = next;
	}
	return n;
}

/* The name of the property token t, or "" if it has none readable. */
static const char *prop_name(const struct dtb_buf *d, const struct tok *t)
{
	uint32_t so = hdr(d, 3), ss = hdr(d, 8), no = get32(d, t->off + 8);
	if (so > d->len || ss > d->len - so || no >= ss)
		return "";
	const char *s = (const char *)d->b + so + no;
	return memchr(s, 0, ss - no) ? s : "";
}

/* Does node token t's name start with pre (exact: equal pre)? Reads
 * nothing past the token or the blob. */
static int name_is(const struct dtb_buf *d, const struct tok *t, const char *pre, int exact)
{
	uint32_t end = t->end < d->len ? t->end : d->len;
	size_t l = strlen(pre) + (exact ? 1 : 0);
	return end >= t->off + 4 && end - (t->off + 4) >= l && !memcmp(d->b + t->off + 4, pre, l);
}

/* A random token of the given kind (0: any) whose property name is
 * `name` (NULL: any); -1 if none. */
static int pick(const struct dtb_buf *d, const struct tok *t, int n, uint32_t kind,
		const char *name, uint64_t *rng)
{
	int idx[MAX_TOKS], m = 0;
	for (int i = 0; i < n; i++)
		if ((!kind || t[i].kind == kind) &&
		    (!name || (t[i].kind == FDT_PROP && !strcmp(prop_name(d, &t[i]), name))))
			idx[m++] = i;
	return m ? idx[fz_below(rng, (uint32_t)m)] : -1;
}

/* Insert n bytes at `at`, moving whatever follows and keeping the header's
 * offsets and sizes describing the same blocks. No-op without room. */
static void insert(struct dtb_buf *d, uint32_t at, const uint8_t *src, uint32_t n)
{
	if (at > d->len || n > d->cap - d->len || d->len < FDT_HEADER_SIZE)
		return;
	memmove(d->b + at + n, d->b + at, d->len - at);
	memcpy(d->b + at, src, n);
	d->len += n;
	put32(d, 4, hdr(d, 1) + n);
	for (int i = 2; i <= 4; i++)
		if (hdr(d, i) > at)
			put32(d, 4u * (uint32_t)i, hdr(d, i) + n);
	uint32_t so = hdr(d, 2);
	if (so <= at && at <= so + hdr(d, 9))
		put32(d, 36, hdr(d, 9) + n);
	uint32_t ss = hdr(d, 3);
	if (ss <= at && at < ss + hdr(d, 8))
		put32(d, 32, hdr(d, 8) + n);
}

static const uint32_t interesting[] = {
	0, 1, 2, 3, 4, 7, 8, 9, 16, 17, 40, 0x7f, 0x80, 0xff, 0x100, 0xfff, 0x1000,
	0x7fff, 0x8000, 0xffff, 0x10000, 0x100000, 0x200000, 0x200001, 0x7fffffff,
	0x80000000, 0xfffffff0, 0xfffffffc, 0xfffffffd, 0xffffffff,
};

/* An interesting value, or one near `near`. */
static uint32_t pick_value(uint64_t *rng, uint32_t near)
{
	switch (fz_below(rng, 4)) {
	case 0: return interesting[fz_below(rng, sizeof interesting / sizeof *interesting)];
	case 1: return near + fz_below(rng, 9) - 4;
	case 2: return near + 4 * (fz_below(rng, 33) - 16);
	default: return (uint32_t)fz_next(rng);
	}
}

/* A BEGIN_NODE "nN" word pair, or an END_NODE, as bytes. */
static uint32_t node_words(uint8_t *out, int begin)
{
	static const uint8_t b[] = { 0, 0, 0, 1, 'n', 0, 0, 0 }, e[] = { 0, 0, 0, 2 };
	memcpy(out, begin ? b : e, begin ? 8 : 4);
	return begin ? 8 : 4;
}

/* One mutation. */
static void mutate_once(struct dtb_buf *d, const struct dtb_buf *other, uint64_t *rng)
{
	static struct tok t[MAX_TOKS];
	int n = tokens(d, t, MAX_TOKS);
	uint32_t st = hdr(d, 2), sts = hdr(d, 9);
	int i;
	switch (fz_below(rng, 21)) {
	case 0:   /* bit flip, half of them in the structure block */
		if (d->len) {
			uint32_t at = fz_below(rng, 2) && st < d->len
				? st + fz_below(rng, d->len - st) : fz_below(rng, d->len);
			d->b[at] ^= (uint8_t)(1u << fz_below(rng, 8));
		}
		break;
	case 1:   /* byte set */
		if (d->len)
			d->b[fz_below(rng, d->len)] = (uint8_t)pick_value(rng, 0);
		break;
	case 2:   /* truncation: anywhere, or just short of the end */
		if (d->len)
			d->len = fz_below(rng, 2) ? fz_below(rng, d->len)
						  : d->len - 1 - fz_below(rng, d->len < 64 ? d->len : 64);
		break;
	case 3: { /* a header offset, size or version */
		int f = 1 + (int)fz_below(rng, 9);
		uint32_t near = fz_below(rng, 2) ? hdr(d, f) : hdr(d, 1 + (int)fz_below(rng, 9));
		put32(d, 4u * (uint32_t)f, pick_value(rng, near));
		break;
	}
	case 4:   /* property length */
		if ((i = pick(d, t, n, FDT_PROP, NULL, rng)) >= 0)
			put32(d, t[i].off + 4, pick_value(rng, get32(d, t[i].off + 4)));
		break;
	case 5:   /* property name offset */
		if ((i = pick(d, t, n, FDT_PROP, NULL, rng)) >= 0)
			put32(d, t[i].off + 8, pick_value(rng, fz_below(rng, 2) ? hdr(d, 8)
							: get32(d, t[i].off + 8)));
		break;
	case 6:   /* a token rewritten as another */
		if ((i = pick(d, t, n, 0, NULL, rng)) >= 0) {
			static const uint32_t k[] = { 1, 2, 3, 4, 9, 0, 5, 0x01000000 };
			put32(d, t[i].off, k[fz_below(rng, 8)]);
		}
		break;
	case 7: { /* nodes nested deep, closed or not */
		if ((i = pick(d, t, n, fz_below(rng, 2) ? FDT_BEGIN_NODE : FDT_END_NODE, NULL, rng)) < 0)
			break;
		uint32_t depth = 1 + fz_below(rng, 40);
		int close = (int)fz_below(rng, 3);
		uint8_t w[40 * 12];
		uint32_t m = 0;
		for (uint32_t j = 0; j < depth; j++)
			m += node_words(w + m, 1);
		for (uint32_t j = 0; close && j < depth; j++)
			m += node_words(w + m, 0);
		insert(d, t[i].off, w, m);
		break;
	}
	case 8: { /* END_NODE before the first BEGIN_NODE, or at random */
		uint8_t w[4];
		node_words(w, 0);
		insert(d, fz_below(rng, 2) || !n ? st : t[fz_below(rng, (uint32_t)n)].off, w, 4);
		break;
	}
	case 9:   /* an END_NODE or the FDT_END gone */
		if ((i = pick(d, t, n, fz_below(rng, 2) ? FDT_END_NODE : FDT_END, NULL, rng)) >= 0)
			put32(d, t[i].off, FDT_NOP);
		break;
	case 10:  /* #address-cells / #size-cells */
		if ((i = pick(d, t, n, FDT_PROP, fz_below(rng, 2) ? "#address-cells" : "#size-cells",
			      rng)) >= 0) {
			static const uint32_t v[] = { 0, 1, 2, 3, 4, 0x40000001, 0x80000000, 0xffffffff };
			put32(d, t[i].off + 12, v[fz_below(rng, 8)]);
		}
		break;
	case 11:  /* reg of odd length */
		if ((i = pick(d, t, n, FDT_PROP, "reg", rng)) >= 0) {
			uint32_t l = get32(d, t[i].off + 4);
			static const int dl[] = { -1, -2, -3, -4, -8, 4, 8, 1 };
			put32(d, t[i].off + 4, fz_below(rng, 4) ? l + (uint32_t)dl[fz_below(rng, 8)]
							    : fz_below(rng, 24));
		}
		break;
	case 12: { /* a string without its NUL: a name, a value or the strings block's end */
		uint32_t so = hdr(d, 3), ss = hdr(d, 8);
		int what = (int)fz_below(rng, 3);
		if (what == 0 && (i = pick(d, t, n, FDT_BEGIN_NODE, NULL, rng)) >= 0) {
			for (uint32_t p = t[i].off + 4; p < t[i].end && p < d->len; p++)
				if (!d->b[p])
					d->b[p] = 'x';
		} else if (what == 1 && (i = pick(d, t, n, FDT_PROP, NULL, rng)) >= 0) {
			uint32_t l = get32(d, t[i].off + 4), v = t[i].off + 12;
			if (l && v + l <= d->len)
				d->b[v + l - 1] = 'x';
		} else if (ss && so < d->len && ss <= d->len - so) {
			d->b[so + ss - 1] = 'x';
		}
		break;
	}
	case 13:  /* riscv,isa, bootargs, mmu-type, status, device_type rewritten */
	{
		static const char *const names[] = { "riscv,isa", "bootargs", "mmu-type",
						     "status", "device_type" };
		static const char *const vals[] = { "_", "__", "rv64imac_", "_svpbmt", "_sstc_",
						    "rv64i_sstc_svpbmt__", "okay", "riscv,none", "" };
		if ((i = pick(d, t, n, FDT_PROP, names[fz_below(rng, 5)], rng)) < 0)
			break;
		uint32_t l = get32(d, t[i].off + 4), v = t[i].off + 12;
		const char *s = vals[fz_below(rng, 9)];
		for (uint32_t p = 0; p < l && v + p < d->len; p++)
			d->b[v + p] = (uint8_t)s[p % (strlen(s) + 1)];
		if (fz_below(rng, 2) && l && v + l <= d->len)
			d->b[v + l - 1] = fz_below(rng, 2) ? '_' : 0;
		break;
	}
	case 14: { /* a chunk of the structure block copied over another */
		if (st >= d->len || sts < 8)
			break;
		uint32_t lim = d->len - st < sts ? d->len - st : sts;
		uint32_t l = 4 * (1 + fz_below(rng, 16));
		if (l > lim)
			break;
		uint32_t from = st + (fz_below(rng, lim - l + 1) & ~3u);
		uint32_t to = st + (fz_below(rng, lim - l + 1) & ~3u);
		memmove(d->b + to, d->b + from, l);
		break;
	}
	case 15: { /* a cpu or memory node (or any) copied many times after itself */
		if ((i = pick(d, t, n, FDT_BEGIN_NODE, NULL, rng)) < 0)
			break;
		for (int tries = 0; tries < 16; tries++) {
			int j = pick(d, t, n, FDT_BEGIN_NODE, NULL, rng);
			if (name_is(d, &t[j], "cpu@", 0) || name_is(d, &t[j], "memory", 0)) {
				i = j;
				break;
			}
		}
		int depth = 0, e = i;
		for (; e < n; e++) {
			depth += t[e].kind == FDT_BEGIN_NODE ? 1 : t[e].kind == FDT_END_NODE ? -1 : 0;
			if (depth == 0)
				break;
		}
		if (e >= n)
			break;
		uint32_t l = t[e].end - t[i].off, copies = 1 + fz_below(rng, 40);
		static uint8_t w[1 << 16];
		if (l > sizeof w)
			break;
		memcpy(w, d->b + t[i].off, l);
		for (uint32_t c = 0; c < copies; c++)
			insert(d, t[e].end, w, l);
		break;
	}
	case 16: { /* memreserve: entries added, the terminator lost, odd values */
		uint32_t r = hdr(d, 4);
		uint8_t w[16 * 40];
		switch (fz_below(rng, 3)) {
		case 0: {
			uint32_t k = 1 + fz_below(rng, 40);
			for (uint32_t j = 0; j < 16 * k; j++)
				w[j] = (uint8_t)(j % 16 == 3 || j % 16 == 13 ? 1 : 0);
			insert(d, r, w, 16 * k);
			break;
		}
		case 1:
			put32(d, r + 4, 0x1000);
			put32(d, r + 12, 0x1000);
			break;
		default:
			put32(d, r + 4 * fz_below(rng, 4), pick_value(rng, 0));
			break;
		}
		break;
	}
	case 17:  /* timebase-frequency of odd length */
		if ((i = pick(d, t, n, FDT_PROP, "timebase-frequency", rng)) >= 0)
			put32(d, t[i].off + 4, fz_below(rng, 13));
		break;
	case 18: { /* splice: a range of another seed over the same offsets */
		if (!other->len || !d->len)
			break;
		uint32_t lim = d->len < other->len ? d->len : other->len;
		uint32_t at = fz_below(rng, lim), l = 1 + fz_below(rng, lim - at);
		memcpy(d->b + at, other->b + at, l);
		break;
	}
	case 19: { /* the strings block cut inside a property's name, at the
		    * blob's end if the block is last: a name that runs off */
		if ((i = pick(d, t, n, FDT_PROP, NULL, rng)) < 0)
			break;
		uint32_t so = hdr(d, 3), ss = hdr(d, 8), no = get32(d, t[i].off + 8);
		size_t l = strlen(prop_name(d, &t[i]));
		if (!l)
			break;
		uint32_t cut = no + 1 + fz_below(rng, (uint32_t)l);
		if (so + ss == hdr(d, 1) && hdr(d, 1) == d->len) {
			put32(d, 4, so + cut);
			d->len = so + cut;
		}
		put32(d, 32, cut);
		break;
	}
	default: { /* a long bootargs in /chosen: a property inserted before its END */
		int ch = -1;
		for (int j = 0; j < n && ch < 0; j++)
			if (t[j].kind == FDT_BEGIN_NODE && name_is(d, &t[j], "chosen", 1))
				ch = j;
		int nmoff = -1;
		for (int j = 0; j < n && nmoff < 0; j++)
			if (t[j].kind == FDT_PROP && !strcmp(prop_name(d, &t[j]), "bootargs"))
				nmoff = (int)get32(d, t[j].off + 8);
		if (ch < 0 || nmoff < 0)
			break;
		uint32_t l = 500 + fz_below(rng, 24);
		static uint8_t w[12 + 528];
		put32(&(struct dtb_buf){ w, sizeof w, sizeof w }, 0, FDT_PROP);
		put32(&(struct dtb_buf){ w, sizeof w, sizeof w }, 4, l);
		put32(&(struct dtb_buf){ w, sizeof w, sizeof w }, 8, (uint32_t)nmoff);
		memset(w + 12, 'a', l);
		w[12 + l - 1] = fz_below(rng, 4) ? 0 : 'a';
		insert(d, t[ch].end, w, 12 + ((l + 3) & ~3u));
		break;
	}
	}
}

void dtb_mutate(struct dtb_buf *d, const struct dtb_buf *other, uint64_t *rng)
{
	uint32_t k = 1 + fz_below(rng, 6);
	for (uint32_t j = 0; j < k; j++)
		mutate_once(d, other, rng);
}
