/* The parts of the `bench` command (bench.c parses and dispatches): the
 * IPC round trips (ubench.c), the five memory microbenchmarks
 * (bench_mm.c), fork (bench_fork.c), the page-table memory overhead
 * (bench_overhead.c) and the fault round trip through a user-level pager
 * (bench_pager.c). Each prints one JSON object a line. */
#ifndef USER_BENCH_H
#define USER_BENCH_H

#include <stddef.h>
#include <stdint.h>

/* rdtime ticks in ns, at the rate the kernel reports (DBG_TIMEBASE,
 * testlib's ticks_per_sec: 10 MHz on QEMU virt, the TSC's on x86-64). */
uint64_t bench_ns(uint64_t ticks);
#define BENCH_NS(ticks) bench_ns(ticks)
#define BENCH_PG 4096UL

/* One result line: `ops` operations in all, `per_thread` of them by each
 * thread; `ticks` the rdtime ticks of the slowest thread over its share,
 * `instret` the instructions retired over all counted operations. */
struct bench_line {
	const char *bench, *contention;
	int threads;
	unsigned long ops, per_thread;
	uint64_t ticks, instret;
	uint64_t union_ticks;       /* 0, or first start to last end of all threads' windows */
	int instret_clock;          /* instret is QEMU's -icount clock, not a count: print null */
	const char *extra;          /* NULL, or more "key":value pairs for this bench */
};

/* Print l as {"bench","contention","threads","mm","paging","ops",
 * "ns_per_op","ops_per_sec","instret_per_op"}: ns_per_op is the slowest
 * thread's time per operation; ops_per_sec all threads' operations over
 * union_ticks when set (the span from the first thread's start to the
 * last one's end), else over the slowest thread's time; instret_per_op
 * the mean over all operations, or null when l->instret_clock is set or
 * bench_instret_is_clock says so of a line one stream measured (ops ==
 * per_thread). The mm mode and paging come from the kernel (DBG_MMINFO).
 * l->extra, when set, follows the standard fields inside the same object. */
void bench_print(const struct bench_line *l);
/* ops per second over ticks of rdtime (0 when ticks is 0). */
uint64_t bench_rate(uint64_t ops, uint64_t ticks);
/* Whether instret, read around a window of ticks rdtime ticks, is no
 * instruction count of one hart: the ISA has no user-readable count
 * (UARCH_HAS_INSTRET is 0, as on x86-64: every instret field prints
 * null), or more than one hart is online and instret grew as the time
 * in ns did (within 10%). QEMU's -icount shift=0 makes
 * rdinstret its virtual clock in ns, shared by all harts, which run in
 * turn; on one hart that clock is that hart's count, so it stays valid. */
int bench_instret_is_clock(uint64_t ticks, uint64_t instret);
/* "adv", "rw" or "vma", and the paging name (UARCH_PAGING_NAMES: "sv39",
 * "sv48", "sv57" on RISC-V), as the kernel reports them. */
void bench_mm_names(const char **mm, const char **paging);
/* n / d with one decimal, rounded down ("12.3"), written into buf. */
const char *bench_tenths(char *buf, size_t size, uint64_t n, uint64_t d);
/* Make [va, va+len) of this task invalid (ROP_UNMAP): 0 or -E_*. */
long bench_unmap(uint64_t va, uint64_t len);

/* The bench program's children, by the low byte of the spawn argument:
 * bench ipc's server task (ubench.c) and bench pager's client task
 * (bench_pager.c). */
#define ROLE_BENCH_SRV 8
#define ROLE_BENCH_PGCLI 9
int bench_ipc_child(long arg);
int bench_pager_child(void);
int cmd_bench(int argc, char **argv);

/* Contention modes of the five microbenchmarks (a mask). */
#define BENCH_LOW  1
#define BENCH_HIGH 2

/* round_trips call/reply round trips on one hart, then across two
 * harts when there are two: 0. */
int bench_ipc(unsigned long round_trips);
/* faults page faults served by a user-level pager, each timed from the
 * faulting write to its retry: through libpager in another task, then
 * through the bare ABI in this one. 0, or 1 after printing what failed. */
int bench_pager(unsigned long faults);
/* The microbenchmark called name, or all five for "all" (bench_mm_known
 * says which names these are), at each thread count of threads[0..n) and
 * each contention in mask: 0, or 1 after printing what failed. */
int bench_mm(const char *name, const int *threads, int n, int mask);
int bench_mm_known(const char *name);
/* Fork of 64 MiB, and fork followed by the child's end: 0, or 1 after
 * printing what failed. */
int bench_fork(void);
/* Page-table bytes per mapped page, dense and sparse: 0, or 1 after
 * printing what failed. */
int bench_overhead(void);

#endif
