/* The user runtime: system calls, CSpace slots, anonymous memory,
 * threads and spawning programs by name. Programs are ordinary C on
 * picolibc (RISC-V) or the in-tree libc/ (x86-64): stdio, stdlib, string;
 * start.c is the C library's system layer. The instructions that differ
 * by ISA are in arch/<arch>/uarch.h. */
#ifndef USER_ULIB_H
#define USER_ULIB_H

#include <stdint.h>
#include <stddef.h>
#include <stdarg.h>
#include <patina/errno.h>
#include <patina/syscall.h>
#include <patina/cap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include "textargs.h"  /* lib/: split_args, parse_u64, str_starts_with */
#include "crc32.h"     /* lib/: crc32_update */

struct sysret { long a0, a1, a2, a3, a4, a5, a6; };

#include "uarch.h"    /* lib/arch/<arch>/: sc7, ipc_timed, rdtime, fences */

#define sc6(n, a, b, c, d, e, f) sc7(n, a, b, c, d, e, f, 0)
#define sc0(n) sc6(n, 0, 0, 0, 0, 0, 0)
#define sc1(n, a) sc6(n, (long)(a), 0, 0, 0, 0, 0)
#define sc2(n, a, b) sc6(n, (long)(a), (long)(b), 0, 0, 0, 0)
#define sc3(n, a, b, c) sc6(n, (long)(a), (long)(b), (long)(c), 0, 0, 0)

/* IPC: all message registers in and out. */
static inline struct sysret ipc(long n, long slot, const uint64_t w[4], long extra)
{
	return ipc_timed(n, slot, w, extra, 0);
}

static inline long sys_puts(const char *s, size_t n) { return sc3(SYS_PUTS, SLOT_CONSOLE, s, n); }
static inline long sys_getc(void) { return sc1(SYS_GETC, SLOT_CONSOLE); }
static inline void sys_exit(int st) { sc1(SYS_EXIT, st); for (;;) ; }
static inline long sys_yield(void) { return sc0(SYS_YIELD); }
static inline long cap_copy(long s, long d) { return sc2(SYS_CAP_COPY, s, d); }
static inline long cap_mint(long s, long d, unsigned r, uint64_t badge, uint64_t lo, uint64_t hi)
{ return sc6(SYS_CAP_MINT, s, d, r, (long)badge, (long)lo, (long)hi); }
static inline long cap_delete(long s) { return sc1(SYS_CAP_DELETE, s); }
static inline long cap_revoke(long s) { return sc1(SYS_CAP_REVOKE, s); }
static inline long cap_info(long s, struct cap_info *ci) { return sc2(SYS_CAP_INFO, s, ci); }
static inline long ep_create(long d) { return sc1(SYS_EP_CREATE, d); }
static inline long frame_alloc(long d) { return sc1(SYS_FRAME_ALLOC, d); }
/* Spawn with a full quota word (QUOTA(frames, threads, endpoints, tasks)). */
static inline long task_spawn_q(long module, uint64_t arg, long dst, long quota, long give)
{ return sc7(SYS_TASK_SPAWN, SLOT_KERNEL, module, (long)arg, dst, quota, give, 0); }
/* The usual child: `frames` of frame quota, 8 threads, 16 endpoints, no
 * children of its own. */
#define CHILD_THREADS 8
#define CHILD_ENDPOINTS 16
static inline long task_spawn(long module, uint64_t arg, long dst, long frames, long give)
{
	if (frames < 0 || frames > 0xffffffffL)
		return -E_QUOTA;
	return task_spawn_q(module, arg, dst, QUOTA(frames, CHILD_THREADS, CHILD_ENDPOINTS, 0), give);
}
static inline long task_wait(long s) { return sc1(SYS_TASK_WAIT, s); }
static inline long task_kill(long s) { return sc1(SYS_TASK_KILL, s); }
static inline long task_region(long s, long d) { return sc2(SYS_TASK_REGION, s, d); }
static inline long region_txn(long s, uint64_t lo, uint64_t hi, struct region_op *ops, long n)
{ return sc6(SYS_REGION_TXN, s, (long)lo, (long)hi, (long)ops, n, 0); }
static inline long region_bitmap(long s, uint64_t lo, uint64_t hi, uint64_t *buf, long flags)
{ return sc6(SYS_REGION_BITMAP, s, (long)lo, (long)hi, (long)buf, flags, 0); }
/* SYS_REGION_SUPPLY: move n mapped pages at sva of our own space (region
 * cap src) to dva of dst's, no copy (patina/cap.h). */
static inline long region_supply(long dst, uint64_t dva, long src, uint64_t sva, long n, unsigned prot)
{ return sc6(SYS_REGION_SUPPLY, dst, (long)dva, src, (long)sva, n, prot); }
/* SYS_REGION_ALLOC_CONTIG: 2^order contiguous frames mapped at va of our own space. */
static inline long region_alloc_contig(long s, uint64_t va, unsigned order, unsigned prot)
{ return sc6(SYS_REGION_ALLOC_CONTIG, s, (long)va, order, prot, 0, 0); }
/* Memory objects (patina/mobj.h). */
static inline long mobj_create(uint64_t npages, long dst, long ep)
{ return sc3(SYS_MOBJ_CREATE, (long)npages, dst, ep); }
static inline long mobj_create_flags(uint64_t npages, long dst, long ep, unsigned flags)
{ return sc6(SYS_MOBJ_CREATE, (long)npages, dst, ep, flags, 0, 0); }
static inline long mobj_supply(long obj, uint64_t off, long src, uint64_t sva, long n)
{ return sc6(SYS_MOBJ_SUPPLY, obj, (long)off, src, (long)sva, n, 0); }
static inline long mobj_op(long obj, unsigned op, uint64_t off, uint64_t n)
{ return sc6(SYS_MOBJ_OP, obj, op, (long)off, (long)n, 0, 0); }
static inline long dbg(long op, uint64_t a, uint64_t b)
{ return sc6(SYS_DEBUG, SLOT_KERNEL, op, (long)a, (long)b, 0, 0); }
static inline long self_hart(void) { return sc0(SYS_THREAD_SELF_HART); }

/* xorshift64: the next pseudo-random number from state *s (never 0). */
static inline uint64_t xorshift64(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

/* ulib.c */
int parse_ulong(const char *s, unsigned long *out);
long slot_alloc(void);             /* a free CSpace slot of this task (not thread safe) */
void slot_release(long s);
/* Anonymous memory: reserve [va, va+len) RW in this task. */
long mem_reserve(uint64_t va, uint64_t len);
/* Start a thread of this task running fn(arg) on `hart` (-1 any) with a
 * fresh reserved stack; returns its thread slot or an error. */
long uthread_start(void (*fn)(void *), void *arg, int hart, int prio);

/* How this task was started (start.c): the spawn argument word (0 for a
 * program started by name; a child role of the program otherwise) and
 * this program's own boot module index (to spawn copies of itself). */
extern uint64_t spawn_arg_word;
extern long self_module_index;
static inline uint64_t spawn_arg(void) { return spawn_arg_word; }
static inline long self_module(void) { return self_module_index; }
size_t uthread_tls_size(void);
void uthread_tls_init(void *block);

/* spawn.c: programs by name. The index of the boot module `name`, or
 * -E_NOENT. */
long module_find(const char *name);
/* Start module `module` with argv[0..argc) as its arguments, quota word
 * `quota` (QUOTA()), and our kernel and console caps handed over (those we
 * hold); its task cap lands in dst. 0 or the error. */
long program_spawn(long module, int argc, char **argv, long quota, long dst);
/* The same with a copy of cap `give` (or SLOT_NONE) in the child's
 * SLOT_GIVEN, and our kernel cap handed over only when `kernel` (a server
 * that needs no boot authority gets none). */
long program_spawn_give(long module, int argc, char **argv, long quota, long dst, long give,
			int kernel);
/* Print "usage: <usage>" and return 2: what a program does with an
 * unknown option or argument. */
int prog_usage(const char *usage);

#endif
