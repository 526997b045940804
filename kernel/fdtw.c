/* The device-tree writer of in-kernel tests (fdtw.h). */
#include "fdtw.h"
#include "fdt.h"
#include "kstring.h"

void fw_word(struct fdtw *w, uint32_t v)
{
	if (w->st_len + 4 > sizeof w->st) {
		w->overflow = true;
		return;
	}
	w->st[w->st_len++] = (uint8_t)(v >> 24);
	w->st[w->st_len++] = (uint8_t)(v >> 16);
	w->st[w->st_len++] = (uint8_t)(v >> 8);
	w->st[w->st_len++] = (uint8_t)v;
}

/* Append n bytes and pad the structure block to 4. */
void fw_bytes(struct fdtw *w, const void *p, uint32_t n)
{
	uint32_t padded = (n + 3) & ~3u;
	if (w->st_len + padded > sizeof w->st) {
		w->overflow = true;
		return;
	}
	memcpy(w->st + w->st_len, p, n);
	memset(w->st + w->st_len + n, 0, padded - n);
	w->st_len += padded;
}

void fw_begin(struct fdtw *w, const char *name)
{
	fw_word(w, FDT_BEGIN_NODE);
	fw_bytes(w, name, (uint32_t)strlen(name) + 1);
}

void fw_end(struct fdtw *w) { fw_word(w, FDT_END_NODE); }

/* A property of len bytes; the name goes to the strings block (no sharing). */
void fw_prop(struct fdtw *w, const char *name, const void *v, uint32_t len)
{
	uint32_t nl = (uint32_t)strlen(name) + 1;
	if (w->strs_len + nl > sizeof w->strs) {
		w->overflow = true;
		return;
	}
	memcpy(w->strs + w->strs_len, name, nl);
	fw_word(w, FDT_PROP);
	fw_word(w, len);
	fw_word(w, w->strs_len);
	w->strs_len += nl;
	fw_bytes(w, v, len);
}

/* A string property (one string; a list is "a\0b" with fw_prop and its length). */
void fw_str(struct fdtw *w, const char *name, const char *s)
{
	fw_prop(w, name, s, (uint32_t)strlen(s) + 1);
}

/* A property of n 32-bit cells. */
void fw_cells(struct fdtw *w, const char *name, int n, const uint32_t *c)
{
	uint8_t v[32];
	for (int i = 0; i < n && i < 8; i++) {
		v[4 * i] = (uint8_t)(c[i] >> 24);
		v[4 * i + 1] = (uint8_t)(c[i] >> 16);
		v[4 * i + 2] = (uint8_t)(c[i] >> 8);
		v[4 * i + 3] = (uint8_t)c[i];
	}
	fw_prop(w, name, v, 4 * (uint32_t)(n < 8 ? n : 8));
}

void fw_u32(struct fdtw *w, const char *name, uint32_t v) { fw_cells(w, name, 1, &v); }

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
}

/* Close the structure block and lay out header, an empty memreserve
 * block, structure and strings. Returns the blob, or NULL if it overflowed. */
const void *fw_finish(struct fdtw *w)
{
	fw_word(w, FDT_END);
	uint32_t off_rsv = 40, off_st = off_rsv + 16, off_strs = off_st + w->st_len;
	uint32_t total = off_strs + w->strs_len;
	if (w->overflow || total > sizeof w->blob)
		return NULL;
	memset(w->blob, 0, sizeof w->blob);
	uint32_t hdr[10] = { FDT_MAGIC, total, off_st, off_strs, off_rsv, 17, 16, 0,
			     w->strs_len, w->st_len };
	for (int i = 0; i < 10; i++)
		put_be32(w->blob + 4 * i, hdr[i]);
	memcpy(w->blob + off_st, w->st, w->st_len);
	memcpy(w->blob + off_strs, w->strs, w->strs_len);
	return w->blob;
}

