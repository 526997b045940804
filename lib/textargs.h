/* Command words and numbers (lib/textargs.c): kernel and user programs. */
#ifndef LIB_TEXTARGS_H
#define LIB_TEXTARGS_H

#include <stddef.h>

/* 1 if s starts with prefix. */
int str_starts_with(const char *s, const char *prefix);

/* Parse an unsigned decimal (or 0x-prefixed hex) number; the whole string
 * must be consumed. Returns 0 and *out, or -E_INVAL. */
int parse_u64(const char *s, unsigned long long *out);

/* Split line (modified in place) at spaces and tabs into argv, which must
 * hold max + 1 pointers; argv[argc] is NULL. Returns argc, or -1 if there
 * are more than max words (argv is then partly filled). */
int split_args(char *line, char **argv, int max);

#endif
