/* The user programs' own C library (user/libc, with lib/fmt.c and
 * lib/kstring.c), built for the host with every name prefixed mini_
 * (tests/host/meson.build), against the host's glibc:
 *   fmt      snprintf, vsnprintf and fmt_vprint on a table of the formats
 *            user programs use (flags 0 and -, widths, l/ll/z, d i u x X
 *            c s %), each compared with glibc's output and return value,
 *            also truncated; %p against glibc's "0x%016lx" (patina's
 *            %p is always 16 digits)
 *   string   memchr strrchr strcpy strcat and lib/kstring.c's functions
 *            on a table of inputs, results (and signs) compared
 *   malloc   the heap over a fixed arena (test_sbrk refuses past its end,
 *            as the runtime's sbrk does past its window): alignment, no
 *            overlap, contents kept, calloc zeroing reused memory,
 *            overflow refused, exhaustion answered NULL, everything freed
 *            merging back into one block, a double free caught (exit 134),
 *            and four threads sharing the heap under the library's lock.
 * Exit 0 when every check holds; each failure prints FAIL and the case. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE     /* PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP */
#endif
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"

/* The library under test, renamed (meson.build: -Dname=mini_name). */
int mini_snprintf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int mini_vsnprintf(char *buf, size_t size, const char *fmt, va_list ap);
int mini_fmt_vprint(void (*sink)(char c, void *ctx), void *ctx, const char *fmt, va_list ap);
void *mini_memchr(const void *s, int c, size_t n);
char *mini_strrchr(const char *s, int c);
char *mini_strcpy(char *dst, const char *src);
char *mini_strcat(char *dst, const char *src);
void *mini_memset(void *dst, int c, size_t n);
void *mini_memcpy(void *dst, const void *src, size_t n);
void *mini_memmove(void *dst, const void *src, size_t n);
int mini_memcmp(const void *a, const void *b, size_t n);
size_t mini_strlen(const char *s);
size_t mini_strnlen(const char *s, size_t max);
int mini_strcmp(const char *a, const char *b);
int mini_strncmp(const char *a, const char *b, size_t n);
char *mini_strchr(const char *s, int c);
void *mini_malloc(size_t n);
void *mini_calloc(size_t count, size_t size);
void mini_free(void *p);

static int failures;
static void check_failed(void)
{
	if (++failures > 50)
		exit(1);
}

/* --- what the runtime gives the library: sbrk, _exit, the lock --- */

#define ARENA (4u << 20)
static _Alignas(16) unsigned char arena[ARENA];
static size_t arena_brk;

void *test_sbrk(ptrdiff_t incr)
{
	if (incr < 0 || (size_t)incr > ARENA - arena_brk)
		return (void *)-1;
	void *old = arena + arena_brk;
	arena_brk += (size_t)incr;
	return old;
}

static jmp_buf exit_jmp;
static int exit_armed;
void test_exit(int status)
{
	if (!exit_armed) {
		fprintf(stderr, "FAIL: the library exited (%d) unexpectedly\n", status);
		exit(1);
	}
	exit_armed = 0;
	longjmp(exit_jmp, status);
}

struct __lock {
	pthread_mutex_t m;
};
struct __lock __lock___libc_recursive_mutex;
void __retarget_lock_acquire_recursive(struct __lock *l) { pthread_mutex_lock(&l->m); }
void __retarget_lock_release_recursive(struct __lock *l) { pthread_mutex_unlock(&l->m); }

/* --- fmt --- */

/* Compare the library's snprintf(fmt, ...) with glibc's, whole and cut
 * to 0, 1 and 5 bytes, and fmt_vprint's output and count. */
static char sunk[512];
static size_t nsunk;
static void sink(char c, void *ctx)
{
	(void)ctx;
	if (nsunk + 1 < sizeof sunk)
		sunk[nsunk++] = c;
}
static int vprint(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	nsunk = 0;
	int n = mini_fmt_vprint(sink, NULL, fmt, ap);
	va_end(ap);
	sunk[nsunk] = 0;
	return n;
}

#define FMT(fmt, ...)                                                                        \
	do {                                                                                 \
		char want[256], got[256];                                                    \
		int nw = snprintf(want, sizeof want, fmt, __VA_ARGS__);                      \
		int ng = mini_snprintf(got, sizeof got, fmt, __VA_ARGS__);                   \
		CHECK(nw == ng && !strcmp(want, got), "snprintf(\"%s\"): glibc %d \"%s\", mini %d \"%s\"", \
		      fmt, nw, want, ng, got);                                               \
		static const size_t cuts[] = { 0, 1, 5 };                                    \
		for (unsigned k = 0; k < 3; k++) {                                           \
			memset(want, 'Z', sizeof want);                                      \
			memset(got, 'Z', sizeof got);                                        \
			nw = snprintf(want, cuts[k], fmt, __VA_ARGS__);                      \
			ng = mini_snprintf(got, cuts[k], fmt, __VA_ARGS__);                  \
			CHECK(nw == ng && !memcmp(want, got, 8), "snprintf(\"%s\") cut to %zu", fmt, cuts[k]); \
		}                                                                            \
		ng = vprint(fmt, __VA_ARGS__);                                               \
		nw = snprintf(want, sizeof want, fmt, __VA_ARGS__);                          \
		CHECK(nw == ng && !strcmp(want, sunk), "fmt_vprint(\"%s\"): \"%s\" %d", fmt, sunk, ng); \
	} while (0)

static void test_fmt(void)
{
	FMT("plain text%s", "");
	FMT("%d %d %d %d", 0, 7, -7, 2147483647);
	FMT("%d", (int)-2147483647 - 1);
	FMT("%i|%5d|%-5d|%05d|%-3d|", 42, 42, 42, -42, 12345);
	FMT("%u %u", 0u, 4294967295u);
	FMT("%x %X %08x %8x %-8x|", 0xbeefu, 0xbeefu, 0xbeefu, 0xbeefu, 0xbeefu);
	FMT("%ld %ld %ld", 0L, -1L, (long)INT64_MIN);
	FMT("%lu %lu", 0UL, (unsigned long)UINT64_MAX);
	FMT("%lx %08lx %016lx", 0xfedcba9876543210UL, 0x12UL, 0xabcUL);
	FMT("%02ld:%02ld", 5L, 59L);
	FMT("%llu %10llu %lld", 18446744073709551615ULL, 12345ULL, -9LL);
	FMT("%zu %zx", (size_t)123456789, (size_t)0x1000);
	FMT("%c%c%c", 'a', ' ', '~');
	FMT("[%s] [%10s] [%-10s] [%2s]", "abc", "abc", "abc", "abcdef");
	FMT("100%% %s", "done");
	FMT("%s=%lu (%ld%%)", "frames", 4096UL, -3L);
	/* %p: always 0x and 16 digits */
	char want[64], got[64];
	void *p = (void *)0x1234abcdUL;
	snprintf(want, sizeof want, "0x%016lx", (unsigned long)(uintptr_t)p);
	mini_snprintf(got, sizeof got, "%p", p);
	CHECK(!strcmp(want, got), "%%p: \"%s\", want \"%s\"", got, want);
	/* vsnprintf is snprintf's engine: one direct call */
	CHECK(mini_snprintf(NULL, 0, "%s%d", "x", 12345) == 6, "length with no buffer");
}

/* --- string --- */

static int sign(int v) { return (v > 0) - (v < 0); }

static void test_string(void)
{
	static const char *const strs[] = { "", "a", "abc", "abd", "ab", "hello world", "\x80\x01", "zzzz" };
	const unsigned n = sizeof strs / sizeof strs[0];
	for (unsigned i = 0; i < n; i++) {
		const char *s = strs[i];
		size_t len = strlen(s);
		CHECK(mini_strlen(s) == len, "strlen(\"%s\")", s);
		for (size_t m = 0; m <= len + 2; m++)
			CHECK(mini_strnlen(s, m) == strnlen(s, m), "strnlen(\"%s\", %zu)", s, m);
		for (int c = 0; c < 256; c += 1) {
			CHECK(mini_strchr(s, c) == strchr(s, c), "strchr(\"%s\", %d)", s, c);
			CHECK(mini_strrchr(s, c) == strrchr(s, c), "strrchr(\"%s\", %d)", s, c);
			CHECK(mini_memchr(s, c, len + 1) == memchr(s, c, len + 1), "memchr(\"%s\", %d)", s, c);
		}
		for (unsigned j = 0; j < n; j++) {
			const char *t = strs[j];
			CHECK(sign(mini_strcmp(s, t)) == sign(strcmp(s, t)), "strcmp(\"%s\", \"%s\")", s, t);
			for (size_t m = 0; m < 5; m++)
				CHECK(sign(mini_strncmp(s, t, m)) == sign(strncmp(s, t, m)),
				      "strncmp(\"%s\", \"%s\", %zu)", s, t, m);
			size_t k = len < strlen(t) ? len : strlen(t);
			CHECK(sign(mini_memcmp(s, t, k + 1)) == sign(memcmp(s, t, k + 1)),
			      "memcmp(\"%s\", \"%s\")", s, t);
			char a[64] = "pre-", b[64] = "pre-";
			CHECK(mini_strcat(mini_strcpy(a + 4, s), t) == a + 4 &&
			      !strcmp(strcat(strcpy(b + 4, s), t), a + 4) && !memcmp(a, b, sizeof a),
			      "strcpy+strcat(\"%s\", \"%s\"): \"%s\"", s, t, a);
		}
	}
	CHECK(mini_memchr("abc", 'c', 2) == NULL, "memchr stops at n");
	/* memset, memcpy, memmove (both overlaps) against the same on glibc */
	unsigned char x[300], y[300];
	for (unsigned i = 0; i < sizeof x; i++)
		x[i] = y[i] = (unsigned char)(i * 7 + 3);
	CHECK(mini_memset(x + 3, 0xa5, 100) == x + 3, "memset returns dst");
	memset(y + 3, 0xa5, 100);
	CHECK(!memcmp(x, y, sizeof x), "memset");
	mini_memcpy(x + 150, x + 1, 77);
	memcpy(y + 150, y + 1, 77);
	CHECK(!memcmp(x, y, sizeof x), "memcpy");
	mini_memmove(x + 10, x + 4, 200);
	memmove(y + 10, y + 4, 200);
	CHECK(!memcmp(x, y, sizeof x), "memmove up");
	mini_memmove(x + 4, x + 11, 200);
	memmove(y + 4, y + 11, 200);
	CHECK(!memcmp(x, y, sizeof x), "memmove down");
}

/* --- malloc --- */

#define SLOTS 256
struct live {
	unsigned char *p;
	size_t n;
	unsigned char tag;
};

static int live_ok(const struct live *l)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->p[i] != l->tag)
			return 0;
	return 1;
}

static void test_malloc(void)
{
	struct live live[SLOTS] = { 0 };
	uint64_t rng = 0x9e3779b97f4a7c15ULL;
	for (int step = 0; step < 20000; step++) {
		struct live *l = &live[xorshift64_below(&rng, SLOTS)];
		if (l->p) {
			CHECK(live_ok(l), "step %d: a block of %zu bytes lost its contents", step, l->n);
			mini_free(l->p);
			l->p = NULL;
			continue;
		}
		l->n = xorshift64_below(&rng, 4) ? xorshift64_below(&rng, 200) : xorshift64_below(&rng, 20000);
		l->tag = (unsigned char)(step | 1);
		l->p = step & 1 ? mini_calloc(1, l->n) : mini_malloc(l->n);
		CHECK(l->p, "step %d: %zu bytes refused", step, l->n);
		if (!l->p)
			continue;
		CHECK(((uintptr_t)l->p & 15) == 0, "step %d: %p not 16-byte aligned", step, (void *)l->p);
		CHECK(l->p >= arena && l->p + l->n <= arena + arena_brk, "step %d: block outside the heap", step);
		if (step & 1)
			for (size_t i = 0; i < l->n; i++)
				CHECK(l->p[i] == 0, "step %d: calloc byte %zu is %u", step, i, l->p[i]);
		memset(l->p, l->tag, l->n);
	}
	for (unsigned i = 0; i < SLOTS; i++)
		for (unsigned j = 0; j < SLOTS; j++)
			if (i != j && live[i].p && live[j].p)
				CHECK(live[i].p + live[i].n <= live[j].p || live[j].p + live[j].n <= live[i].p,
				      "blocks %u and %u overlap", i, j);
	for (unsigned i = 0; i < SLOTS; i++) {
		if (live[i].p) {
			CHECK(live_ok(&live[i]), "block %u lost its contents", i);
			mini_free(live[i].p);
		}
	}
	mini_free(NULL);
	/* Everything free has merged: one block takes (nearly) the whole heap
	 * grown so far, without growing it. */
	size_t grown = arena_brk;
	void *big = mini_malloc(grown - 64);
	CHECK(big && arena_brk == grown, "freed blocks did not merge (heap %zu)", grown);
	mini_free(big);
	/* refusals */
	CHECK(mini_calloc(SIZE_MAX / 8, 16) == NULL, "calloc overflow not refused");
	CHECK(mini_malloc(SIZE_MAX - 8) == NULL, "malloc(SIZE_MAX - 8) not refused");
	CHECK(mini_malloc(2 * ARENA) == NULL, "malloc past the arena not refused");
	/* exhaustion: NULL, and the heap still works */
	void *blocks[4096];
	unsigned nb = 0;
	while (nb < 4096 && (blocks[nb] = mini_malloc(4000)))
		nb++;
	CHECK(nb > 100 && nb < 4096, "exhaustion after %u blocks", nb);
	while (nb)
		mini_free(blocks[--nb]);
	void *again = mini_malloc(ARENA / 2);
	CHECK(again, "no large block after freeing everything");
	/* calloc of reused (dirty) memory is zero */
	memset(again, 0xee, ARENA / 2);
	mini_free(again);
	unsigned char *z = mini_calloc(1000, 100);
	CHECK(z, "calloc(1000, 100)");
	for (size_t i = 0; z && i < 100000; i++)
		if (z[i]) {
			CHECK(0, "calloc of reused memory: byte %zu is %u", i, z[i]);
			break;
		}
	mini_free(z);
	/* a double free ends the program with 134 */
	void *d = mini_malloc(64);
	mini_free(d);
	int st = setjmp(exit_jmp);
	if (!st) {
		exit_armed = 1;
		mini_free(d);
		exit_armed = 0;
		CHECK(0, "double free not caught");
	} else {
		CHECK(st == 134, "double free: exit %d", st);
		/* the library exited holding its lock */
		pthread_mutex_unlock(&__lock___libc_recursive_mutex.m);
	}
}

/* Four threads allocate, fill, check and free at once. */
static void *heap_thread(void *arg)
{
	uint64_t rng = (uintptr_t)arg * 0x2545f4914f6cdd1dULL + 1;
	unsigned char tag = (unsigned char)(uintptr_t)arg;
	for (int i = 0; i < 20000; i++) {
		size_t n = xorshift64_below(&rng, 300) + 1;
		unsigned char *p = mini_malloc(n);
		CHECK(p, "thread %u: malloc(%zu)", tag, n);
		if (!p)
			continue;
		memset(p, tag, n);
		sched_yield();
		for (size_t k = 0; k < n; k++)
			if (p[k] != tag) {
				CHECK(0, "thread %u: block changed under it", tag);
				break;
			}
		mini_free(p);
	}
	return NULL;
}

static void test_malloc_threads(void)
{
	pthread_t t[4];
	for (uintptr_t i = 0; i < 4; i++)
		CHECK(pthread_create(&t[i], NULL, heap_thread, (void *)(i + 1)) == 0, "pthread_create");
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
}

int main(void)
{
	pthread_mutex_t m = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
	__lock___libc_recursive_mutex.m = m;
	test_fmt();
	test_string();
	test_malloc();
	test_malloc_threads();
	if (failures) {
		printf("libc: %d failures\n", failures);
		return 1;
	}
	printf("libc: fmt, string and malloc match\n");
	return 0;
}
