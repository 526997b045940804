/* Parsing of command words and numbers, shared by the kernel's command
 * line and shell and by user programs (freestanding: needs only strlen,
 * strncmp). */
#include "textargs.h"
#include <patina/errno.h>

/* The standard functions, from the kernel's lib/kstring.c or the C library. */
size_t strlen(const char *s);
int strncmp(const char *a, const char *b, size_t n);

int str_starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

int parse_u64(const char *s, unsigned long long *out)
{
	unsigned long long v = 0;
	unsigned base = 10;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (!*s)
		return -E_INVAL;
	for (; *s; s++) {
		unsigned d;
		if (*s >= '0' && *s <= '9')
			d = (unsigned)(*s - '0');
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = (unsigned)(*s - 'a' + 10);
		else if (base == 16 && *s >= 'A' && *s <= 'F')
			d = (unsigned)(*s - 'A' + 10);
		else
			return -E_INVAL;
		if (v > (~0ULL - d) / base)
			return -E_INVAL;
		v = v * base + d;
	}
	*out = v;
	return 0;
}

int split_args(char *line, char **argv, int max)
{
	int argc = 0;
	char *p = line;
	while (*p) {
		while (*p == ' ' || *p == '\t')
			*p++ = 0;
		if (!*p)
			break;
		if (argc == max)
			return -1;
		argv[argc++] = p;
		while (*p && *p != ' ' && *p != '\t')
			p++;
	}
	argv[argc] = NULL;
	return argc;
}
