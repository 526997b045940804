/* The shell's `bench` command: argument parsing, dispatch to the
 * benchmarks, and the one JSON line format they all print.
 *
 *   bench ipc [round-trips]
 *   bench pager [faults]
 *   bench NAME... [--threads LIST] [--contention low|high|both]
 *
 * NAME: mmap, mmap-pf, pf, unmap-virt, unmap, all (those five), fork,
 * overhead, ipc, pager. LIST: thread counts separated by commas, each at most the
 * harts online (default 1, 2, 4, ... up to the harts, and the harts).
 * Contention defaults to both. */
#include "ulib.h"
#include "bench.h"
#include "testlib.h"

#define MAX_COUNTS 16
#define IPC_ROUND_TRIPS 2000      /* bench ipc's default */
#define PAGER_FAULTS 1024         /* bench pager's default */
#define PAGER_FAULTS_MAX 16384    /* frames held at once: 64 MiB */

void bench_mm_names(const char **mm, const char **paging)
{
	static const char *const mms[] = { "adv", "rw", "vma", "?" };
	static const char *const pagings[] = UARCH_PAGING_NAMES;
	long info = dbg(DBG_MMINFO, 0, 0);
	long levels = info < 0 ? 0 : info & 0xff;
	*mm = info < 0 ? "?" : mms[(info >> 8) & 3];
	*paging = levels >= 3 && levels <= 5 ? pagings[levels - 3] : "?";
}

const char *bench_tenths(char *buf, size_t size, uint64_t n, uint64_t d)
{
	uint64_t v = d ? n * 10 / d : 0;
	snprintf(buf, size, "%lu.%lu", v / 10, v % 10);
	return buf;
}

uint64_t bench_ns(uint64_t ticks)
{
	uint64_t hz = ticks_per_sec();
	/* in two parts: ticks * 1e9 alone overflows after 18 s at 1 GHz */
	return ticks / hz * 1000000000UL + ticks % hz * 1000000000UL / hz;
}

uint64_t bench_rate(uint64_t ops, uint64_t ticks)
{
	uint64_t ns = BENCH_NS(ticks);
	return ns ? ops * 1000000000UL / ns : 0;
}

int bench_instret_is_clock(uint64_t ticks, uint64_t instret)
{
	if (!UARCH_HAS_INSTRET)
		return 1;           /* rdinstret reads 0: nothing to print */
	uint64_t ns = BENCH_NS(ticks);
	uint64_t diff = instret > ns ? instret - ns : ns - instret;
	/* Without -icount QEMU's rdinstret follows the host's cycle counter
	 * (GHz), so it does not track the 1 ns unit within 10%. */
	return ns && diff * 10 <= ns && dbg(DBG_NCPUS, 0, 0) > 1;
}

void bench_print(const struct bench_line *l)
{
	const char *mm, *paging;
	bench_mm_names(&mm, &paging);
	uint64_t ns = BENCH_NS(l->ticks);
	uint64_t ops_per_sec = bench_rate(l->ops, l->union_ticks ? l->union_ticks : l->ticks);
	int clock = l->instret_clock ||
		    (l->ops == l->per_thread && bench_instret_is_clock(l->ticks, l->instret));
	char nsop[32], insop[32];
	/* Two writes: printf stops at 255 characters, and a line with the
	 * multi-thread fields is longer. */
	printf("{\"bench\":\"%s\",\"contention\":\"%s\",\"threads\":%d,\"mm\":\"%s\",\"paging\":\"%s\","
	       "\"ops\":%lu,\"ns_per_op\":%s,\"ops_per_sec\":%lu,\"instret_per_op\":%s",
	       l->bench, l->contention, l->threads, mm, paging, l->ops,
	       bench_tenths(nsop, sizeof nsop, ns, l->per_thread), ops_per_sec,
	       clock ? "null" : bench_tenths(insop, sizeof insop, l->instret, l->ops));
	printf("%s%s}\n", l->extra ? "," : "", l->extra ? l->extra : "");
}

long bench_unmap(uint64_t va, uint64_t len)
{
	struct region_op op = { .op = ROP_UNMAP, .va = va, .len = len };
	long r = region_txn(SLOT_SELF_AS, va, va + len, &op, 1);
	return r < 0 ? r : op.result;
}

/* "1,2,4" -> counts; each in [1, harts]. Number of counts, or -1. */
static int parse_counts(const char *s, int *out, int max, long harts)
{
	int n = 0;
	char num[16];
	while (*s) {
		size_t len = 0;
		while (s[len] && s[len] != ',')
			len++;
		unsigned long v;
		if (!len || len >= sizeof num || n == max)
			return -1;
		memcpy(num, s, len);
		num[len] = 0;
		if (parse_ulong(num, &v) || v < 1 || v > (unsigned long)harts)
			return -1;
		out[n++] = (int)v;
		s += len + (s[len] == ',');
	}
	return n;
}

/* 1, 2, 4, ... below harts, then harts. */
static int default_counts(int *out, long harts)
{
	int n = 0;
	for (long t = 1; t < harts && n < MAX_COUNTS - 1; t *= 2)
		out[n++] = (int)t;
	out[n++] = (int)harts;
	return n;
}

static int usage(void)
{
	printf("usage: bench ipc [round-trips]\n"
	       "       bench pager [faults]   (1 to %d)\n"
	       "       bench NAME... [--threads LIST] [--contention low|high|both]\n"
	       "       NAME: mmap mmap-pf pf unmap-virt unmap all fork overhead ipc pager\n",
	       PAGER_FAULTS_MAX);
	return 2;
}

/* Run the in-kernel command `line`: "lockstat reset" before a run and
 * "lockstat" after it print the kernel's lock statistics for the run. */
static void bench_kcmd(const char *line)
{
	dbg(DBG_KCMD, (uint64_t)(uintptr_t)line, strlen(line));
}

/* The shell command (usage at the top of this file): runs the benchmarks
 * named, in order, and stops at the first that fails, then prints the
 * lock statistics of the run. 0, 1 when one failed (it says why), 2 for
 * bad arguments. */
int cmd_bench(int argc, char **argv)
{
	long harts = dbg(DBG_NCPUS, 0, 0);
	ticks_per_sec();     /* asked now, outside every timed window */
	int pager = argc > 1 && !strcmp(argv[1], "pager");
	if (argc > 1 && (pager || !strcmp(argv[1], "ipc")) && argc <= 3) {
		unsigned long ops = pager ? PAGER_FAULTS : IPC_ROUND_TRIPS;
		if (argc == 3 && (parse_ulong(argv[2], &ops) || !ops || (pager && ops > PAGER_FAULTS_MAX)))
			return usage();
		bench_kcmd("lockstat reset");
		int st = pager ? bench_pager(ops) : bench_ipc(ops);
		bench_kcmd("lockstat");
		return st;
	}
	int counts[MAX_COUNTS], ncounts = default_counts(counts, harts), mask = BENCH_LOW | BENCH_HIGH;
	int first_opt = argc;
	for (int i = 1; i < argc; i++) {
		if (argv[i][0] != '-' && first_opt == argc)
			continue;
		if (argv[i][0] != '-')
			return usage();     /* a name after the options */
		if (first_opt == argc)
			first_opt = i;
		if (i + 1 >= argc)
			return usage();
		const char *v = argv[++i];
		if (!strcmp(argv[i - 1], "--threads")) {
			ncounts = parse_counts(v, counts, MAX_COUNTS, harts);
			if (ncounts < 1) {
				printf("bench: --threads %s: counts from 1 to %ld harts, comma separated\n", v, harts);
				return 2;
			}
		} else if (!strcmp(argv[i - 1], "--contention")) {
			mask = !strcmp(v, "low") ? BENCH_LOW : !strcmp(v, "high") ? BENCH_HIGH :
			       !strcmp(v, "both") ? BENCH_LOW | BENCH_HIGH : 0;
			if (!mask)
				return usage();
		} else {
			return usage();
		}
	}
	if (first_opt < 2)
		return usage();
	for (int i = 1; i < first_opt; i++)
		if (!bench_mm_known(argv[i]) && strcmp(argv[i], "fork") &&
		    strcmp(argv[i], "overhead") && strcmp(argv[i], "ipc") && strcmp(argv[i], "pager"))
			return usage();
	int st = 0;
	bench_kcmd("lockstat reset");
	for (int i = 1; i < first_opt && !st; i++) {
		if (!strcmp(argv[i], "fork"))
			st = bench_fork();
		else if (!strcmp(argv[i], "overhead"))
			st = bench_overhead();
		else if (!strcmp(argv[i], "ipc"))
			st = bench_ipc(IPC_ROUND_TRIPS);
		else if (!strcmp(argv[i], "pager"))
			st = bench_pager(PAGER_FAULTS);
		else
			st = bench_mm(argv[i], counts, ncounts, mask);
	}
	bench_kcmd("lockstat");
	return st;
}

int main(int argc, char **argv)
{
	if ((spawn_arg() & 0xff) == ROLE_BENCH_PGCLI)
		return bench_pager_child();                  /* bench pager's client task */
	if (spawn_arg())
		return bench_ipc_child((long)spawn_arg());   /* bench ipc's server task */
	return cmd_bench(argc, argv);
}
