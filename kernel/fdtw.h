/* A small device-tree writer for in-kernel tests that need made-up
 * device trees: nodes and properties appended in order into a struct
 * fdtw, then laid out as a blob (header, empty memreserve block,
 * structure, strings) in the same struct. Overflow of any part is noted
 * and makes fw_finish return NULL. */
#ifndef KERNEL_FDTW_H
#define KERNEL_FDTW_H

#include <stdbool.h>
#include <stdint.h>

struct fdtw {
	uint8_t st[1024];
	char strs[256];
	uint32_t st_len, strs_len;
	bool overflow;
	uint8_t blob[1536];
};

void fw_word(struct fdtw *w, uint32_t v);
/* Append n bytes and pad the structure block to 4. */
void fw_bytes(struct fdtw *w, const void *p, uint32_t n);
void fw_begin(struct fdtw *w, const char *name);
void fw_end(struct fdtw *w);
/* A property of len bytes; the name goes to the strings block (no sharing). */
void fw_prop(struct fdtw *w, const char *name, const void *v, uint32_t len);
/* A string property (one string; a list is "a\0b" with fw_prop and its length). */
void fw_str(struct fdtw *w, const char *name, const char *s);
/* A property of n (at most 8) 32-bit cells. */
void fw_cells(struct fdtw *w, const char *name, int n, const uint32_t *c);
void fw_u32(struct fdtw *w, const char *name, uint32_t v);
/* Close the structure block and lay out the blob in w->blob. Returns it,
 * or NULL if anything overflowed. */
const void *fw_finish(struct fdtw *w);

#endif
