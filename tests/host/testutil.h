/* The check and random-number helpers shared by the native tests
 * (tests/host, tests/model). Header-only: each test is one executable. */
#ifndef PATINA_TESTUTIL_H
#define PATINA_TESTUTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* CHECK(cond, fmt, ...): if cond is false, print "FAIL file:line: <fmt>"
 * to stderr and call check_failed(void), which a test that uses CHECK
 * defines before its first CHECK: it counts the failure and decides when
 * to give up (exit). */

#define CHECK(cond, ...)                                                        \
	do {                                                                    \
		if (!(cond)) {                                                  \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);    \
			fprintf(stderr, __VA_ARGS__);                           \
			fputc('\n', stderr);                                    \
			check_failed();                                         \
		}                                                               \
	} while (0)

/* xorshift64 (13, 7, 17) step on the caller's state *s, which must not be
 * 0; returns the new state. Each test keeps its own state (global, per
 * thread or per worker) so seeded runs replay. */
static inline uint64_t xorshift64(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	return x;
}

/* A draw in [0, n) from state *s; n > 0. */
static inline uint64_t xorshift64_below(uint64_t *s, uint64_t n)
{
	return xorshift64(s) % n;
}

/* The options every host program shares: if argv[*i] is "--arch NAME" or
 * "--mm NAME", store NAME, step *i onto it and return true. */
static inline bool arg_arch_mm(int argc, char **argv, int *i, const char **arch,
			       const char **mm)
{
	const char **to = !strcmp(argv[*i], "--arch") ? arch : !strcmp(argv[*i], "--mm") ? mm : NULL;
	if (!to || *i + 1 >= argc)
		return false;
	*to = argv[++*i];
	return true;
}

#endif
