/* x86-64 half of the user runtime's ISA seam: system calls, counters,
 * the thread pointer, fences and deliberately faulting instructions.
 * Generic code includes ulib.h, which includes this after defining
 * struct sysret; the build puts user/lib/arch/<arch>/ on the include
 * path. The register convention is abi/patina/syscall.h's. */
#ifndef USER_UARCH_H
#define USER_UARCH_H

#include <stdint.h>

/* A system call: number n in rax, arguments in rdi, rsi, rdx, r10, r8,
 * r9, r12; returns rax. The kernel may return values in every argument
 * register, so all are in/out; `syscall` itself overwrites rcx (the
 * return rip) and r11 (the saved rflags). */
static inline long sc7(long n, long a0, long a1, long a2, long a3, long a4, long a5, long a6)
{
	register long r3 __asm__("r10") = a3;
	register long r4 __asm__("r8") = a4;
	register long r5 __asm__("r9") = a5;
	register long r6 __asm__("r12") = a6;
	__asm__ volatile("syscall" : "+a"(n), "+D"(a0), "+S"(a1), "+d"(a2), "+r"(r3), "+r"(r4), "+r"(r5),
			 "+r"(r6) : : "memory", "rcx", "r11");
	return n;
}

/* IPC: all message registers in and out; a6 in (r12) is the timeout of
 * SYS_RECV_TIMED / SYS_CALL_TIMED (microseconds; other calls ignore it).
 * Out: rax the result, rsi rdx r10 r8 the message words, r9 the badge,
 * r12 the cap-transfer information. */
static inline struct sysret ipc_timed(long n, long slot, const uint64_t w[4], long extra, uint64_t us)
{
	register long r1 __asm__("rsi") = (long)w[0];
	register long r2 __asm__("rdx") = (long)w[1];
	register long r3 __asm__("r10") = (long)w[2];
	register long r4 __asm__("r8") = (long)w[3];
	register long r5 __asm__("r9") = extra;
	register long r6 __asm__("r12") = (long)us;
	__asm__ volatile("syscall" : "+a"(n), "+D"(slot), "+r"(r1), "+r"(r2), "+r"(r3), "+r"(r4), "+r"(r5),
			 "+r"(r6) : : "memory", "rcx", "r11");
	return (struct sysret){ n, r1, r2, r3, r4, r5, r6 };
}

/* The time counter is the TSC (its rate: DBG_TIMEBASE, which the kernel
 * measures); the cycle counter is the TSC too (x86 has no user-readable
 * count of core cycles). x86 has no user-readable count of instructions
 * retired: rdinstret reads 0 and UARCH_HAS_INSTRET says so, and bench
 * prints instret_per_op and one_way_instret as null. */
static inline uint64_t rdtsc(void)
{
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}
static inline uint64_t rdtime(void) { return rdtsc(); }
static inline uint64_t rdcycle(void) { return rdtsc(); }
static inline uint64_t rdinstret(void) { return 0; }
#define UARCH_HAS_INSTRET 0

/* The names of the paging modes of 3, 4 and 5 levels (bench's "paging");
 * x86-64 has no 3-level mode. */
#define UARCH_PAGING_NAMES { "?", "4-level", "5-level" }

/* The thread pointer: the FS base, which points at a word holding its
 * own value (the x86-64 TLS ABI's thread control block, libc's
 * _init_tls), so one %fs-relative load reads it. Unique per running
 * thread: the C library's locks use it as the owner's name. */
static inline void *uarch_tp(void)
{
	void *tp;
	__asm__ volatile("mov %%fs:0, %0" : "=r"(tp));
	return tp;
}
/* Make tp this thread's pointer (needs CR4.FSGSBASE, which the kernel
 * sets; the kernel keeps the FS base per thread). */
static inline void uarch_set_tp(void *tp) { __asm__ volatile("wrfsbase %0" : : "r"(tp) : "memory"); }

/* Order every earlier memory and device access before every later one.
 * x86-TSO already keeps stores in order with stores and loads with
 * loads, and uncached device registers are never reordered; what it
 * does not keep is a store before a later load (the store may wait in
 * the store buffer), which a driver needs when it publishes a ring
 * entry and then reads the device's state: mfence orders all four. */
static inline void uarch_io_fence(void) { __asm__ volatile("mfence" ::: "memory"); }

/* Trap on purpose: an undefined instruction (ud2, #UD) and a
 * breakpoint (int3, #BP), for the tests of how a task's death is
 * reported. */
static inline void uarch_illegal_insn(void) { __asm__ volatile("ud2" ::: "memory"); }
static inline void uarch_breakpoint(void) { __asm__ volatile("int3" ::: "memory"); }

/* Machine code of a function returning v (0 <= v < 2^31) written at
 * code, for the tests that run code they wrote: mov $v, %eax; ret.
 * x86 fetches through the same coherent caches: no fence needed. */
static inline void uarch_code_return(volatile uint8_t *code, uint32_t v)
{
	code[0] = 0xb8;
	for (int i = 0; i < 4; i++)
		code[1 + i] = (uint8_t)(v >> (8 * i));
	code[5] = 0xc3;
}

/* Machine code of a thread that loops on itself for ever: jmp . */
static inline void uarch_code_spin(volatile uint8_t *code)
{
	code[0] = 0xeb, code[1] = 0xfe;
}

/* Machine code of a thread's whole life written at code: system call
 * `sysno` with first argument v, then a loop on itself should the call
 * return: mov $sysno, %eax; mov $v, %edi; syscall; jmp . */
static inline void uarch_code_syscall1(volatile uint8_t *code, uint32_t sysno, uint32_t v)
{
	code[0] = 0xb8;
	code[5] = 0xbf;
	for (int i = 0; i < 4; i++) {
		code[1 + i] = (uint8_t)(sysno >> (8 * i));
		code[6 + i] = (uint8_t)(v >> (8 * i));
	}
	code[10] = 0x0f, code[11] = 0x05;    /* syscall */
	uarch_code_spin(code + 12);
}

/* Machine code of a thread that stores a zero word at the address its
 * first argument names, then loops on itself: movl $0, (%rdi); jmp . */
static inline void uarch_code_store_arg(volatile uint8_t *code)
{
	const uint8_t movl[] = { 0xc7, 0x07, 0, 0, 0, 0 };
	for (unsigned i = 0; i < sizeof movl; i++)
		code[i] = movl[i];
	uarch_code_spin(code + sizeof movl);
}

#endif
