/* /chosen/bootargs: "[paging=sv39|sv48|sv57] [mm=adv|rw|vma] [timer=sbi|sstc]
 * [ablate=mklock,lateflush,prefault,ipiflush] [failalloc=N[,B]] [-- command line]".
 * The command is everything after the first "--" word, spaces included.
 * failalloc=N (decimal): the Nth kernel allocation counted fails as if
 * memory had run out (and with ,B the B allocations from the Nth on, so a
 * path that retries once fails too); counting starts when init reads the
 * command line, and failalloc=0 only counts (failalloc.h; the count is
 * printed at power-off). */
#include <patina/errno.h>
#include "kernel.h"
#include "kstring.h"
#include "arch.h"
#include "printk.h"

const char *paging_name(int levels)
{
	const char *name = arch_paging_name(levels);
	return name ? name : "bare";
}

const char *mm_name(enum mm_mode m)
{
	switch (m) {
	case MM_RW: return "rw";
	case MM_VMA: return "vma";
	default: return "adv";
	}
}

/* The ABLATE_* bits a comma list names, or -1 when a name is unknown. */
static int ablate_bits(const char *list)
{
	static const struct { const char *name; unsigned bit; } names[] = {
		{ "mklock", ABLATE_MKLOCK }, { "lateflush", ABLATE_LATEFLUSH },
		{ "prefault", ABLATE_PREFAULT }, { "ipiflush", ABLATE_IPIFLUSH },
	};
	unsigned bits = 0;
	while (*list) {
		size_t n = 0;
		while (list[n] && list[n] != ',')
			n++;
		unsigned k = 0;
		while (k < sizeof names / sizeof names[0] &&
		       !(strlen(names[k].name) == n && !strncmp(list, names[k].name, n)))
			k++;
		if (k == sizeof names / sizeof names[0])
			return -1;
		bits |= names[k].bit;
		list += n + (list[n] == ',');
	}
	return (int)bits;
}

/* Whether s is a decimal number that fits; its value in *out. */
static int decimal(const char *s, unsigned long *out)
{
	unsigned long v = 0;
	if (!*s)
		return 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > (~0UL - 9) / 10)
			return 0;
		v = v * 10 + (unsigned long)(*s - '0');
	}
	*out = v;
	return 1;
}

/* "N" or "N,B" (decimal, B >= 1; B is 1 when absent): 1, else 0. */
static int failalloc_arg(char *s, unsigned long *n, unsigned long *burst)
{
	char *comma = s;
	while (*comma && *comma != ',')
		comma++;
	*burst = 1;
	if (!*comma)
		return decimal(s, n);
	*comma = 0;
	int ok = decimal(s, n) && decimal(comma + 1, burst) && *burst >= 1;
	*comma = ',';
	return ok;
}

int bootargs_parse(char *args, struct bootargs *out, char *warn, int warnlen)
{
	out->paging_levels = 0;
	out->mm_set = 0;
	out->mm = MM_ADV;
	out->command = NULL;
	out->timer_sstc = 0;
	out->ablate = 0;
	out->failalloc_set = 0;
	out->failalloc = 0;
	out->failalloc_burst = 1;
	warn[0] = 0;
	int err = 0;

	char *p = args;
	while (*p) {
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		char *w = p;
		while (*p && *p != ' ')
			p++;
		int last = *p == 0;
		*p = 0;
		if (!strcmp(w, "--")) {
			out->command = last ? p : p + 1;
			return err;
		}
		if (str_starts_with(w, "paging=") && arch_paging_by_name(w + 7)) {
			out->paging_levels = arch_paging_by_name(w + 7);
		} else if (!strcmp(w, "mm=adv")) {
			out->mm = MM_ADV, out->mm_set = 1;
		} else if (!strcmp(w, "mm=rw")) {
			out->mm = MM_RW, out->mm_set = 1;
		} else if (!strcmp(w, "mm=vma")) {
			out->mm = MM_VMA, out->mm_set = 1;
		} else if (!strcmp(w, "timer=sbi")) {
			out->timer_sstc = 0;
		} else if (!strcmp(w, "timer=sstc")) {
			out->timer_sstc = 1;
		} else if (str_starts_with(w, "ablate=") && ablate_bits(w + 7) >= 0) {
			out->ablate = (unsigned)ablate_bits(w + 7);
		} else if (str_starts_with(w, "failalloc=") &&
			   failalloc_arg(w + 10, &out->failalloc, &out->failalloc_burst)) {
			out->failalloc_set = 1;
		} else if (str_starts_with(w, "paging=") || str_starts_with(w, "mm=") ||
			   str_starts_with(w, "timer=") || str_starts_with(w, "ablate=") ||
			   str_starts_with(w, "failalloc=")) {
			snprintf(warn, (size_t)warnlen, "bad boot option '%s' ignored", w);
			err = -E_INVAL;
		} else {
			snprintf(warn, (size_t)warnlen, "unknown boot option '%s' ignored", w);
		}
		if (!last)
			p++;
	}
	return err;
}
