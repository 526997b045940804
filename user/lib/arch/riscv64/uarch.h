/* RISC-V (rv64) half of the user runtime's ISA seam: system calls,
 * counters, the thread pointer, fences and deliberately faulting
 * instructions. Generic code includes ulib.h, which includes this after
 * defining struct sysret; the build puts user/lib/arch/<arch>/ on the
 * include path. The register convention is abi/patina/syscall.h's. */
#ifndef USER_UARCH_H
#define USER_UARCH_H

#include <stdint.h>

/* A system call: number n, arguments in a0..a6; returns a0. The kernel
 * may use the t registers, so they are clobbered. */
static inline long sc7(long n, long a0, long a1, long a2, long a3, long a4, long a5, long a6)
{
	register long r0 __asm__("a0") = a0;
	register long r1 __asm__("a1") = a1;
	register long r2 __asm__("a2") = a2;
	register long r3 __asm__("a3") = a3;
	register long r4 __asm__("a4") = a4;
	register long r5 __asm__("a5") = a5;
	register long r6 __asm__("a6") = a6;
	register long r7 __asm__("a7") = n;
	__asm__ volatile("ecall" : "+r"(r0), "+r"(r1), "+r"(r2), "+r"(r3), "+r"(r4), "+r"(r5), "+r"(r6)
			 : "r"(r7) : "memory", "t0", "t1", "t2", "t3", "t4", "t5", "t6");
	return r0;
}

/* IPC: all message registers in and out; a6 in is the timeout of
 * SYS_RECV_TIMED / SYS_CALL_TIMED (microseconds; other calls ignore it). */
static inline struct sysret ipc_timed(long n, long slot, const uint64_t w[4], long extra, uint64_t us)
{
	register long r0 __asm__("a0") = slot;
	register long r1 __asm__("a1") = (long)w[0];
	register long r2 __asm__("a2") = (long)w[1];
	register long r3 __asm__("a3") = (long)w[2];
	register long r4 __asm__("a4") = (long)w[3];
	register long r5 __asm__("a5") = extra;
	register long r6 __asm__("a6") = (long)us;
	register long r7 __asm__("a7") = n;
	__asm__ volatile("ecall" : "+r"(r0), "+r"(r1), "+r"(r2), "+r"(r3), "+r"(r4), "+r"(r5), "+r"(r6)
			 : "r"(r7) : "memory", "t0", "t1", "t2", "t3", "t4", "t5", "t6");
	return (struct sysret){ r0, r1, r2, r3, r4, r5, r6 };
}

/* The time counter (its rate: DBG_TIMEBASE), the cycle counter and the
 * count of instructions retired by this hart. */
static inline uint64_t rdtime(void) { uint64_t t; __asm__ volatile("rdtime %0" : "=r"(t)); return t; }
static inline uint64_t rdinstret(void) { uint64_t t; __asm__ volatile("rdinstret %0" : "=r"(t)); return t; }
static inline uint64_t rdcycle(void) { uint64_t t; __asm__ volatile("rdcycle %0" : "=r"(t)); return t; }
/* rdinstret counts instructions (bench prints instret_per_op). */
#define UARCH_HAS_INSTRET 1

/* The names of the paging modes of 3, 4 and 5 levels (bench's "paging"). */
#define UARCH_PAGING_NAMES { "sv39", "sv48", "sv57" }

/* The thread pointer (tp): unique per running thread, so the C library's
 * locks use it as the owner's name. */
static inline void *uarch_tp(void)
{
	void *tp;
	__asm__ volatile("mv %0, tp" : "=r"(tp));
	return tp;
}

/* Order every earlier memory and device access before every later one:
 * a driver's ring writes before the register write that publishes them,
 * and the device's index read before the entries it covers. */
static inline void uarch_io_fence(void) { __asm__ volatile("fence iorw, iorw" ::: "memory"); }

/* Trap on purpose: an illegal instruction (the all-zero word) and a
 * breakpoint, for the tests of how a task's death is reported. */
static inline void uarch_illegal_insn(void) { __asm__ volatile(".word 0" ::: "memory"); }
static inline void uarch_breakpoint(void) { __asm__ volatile("ebreak" ::: "memory"); }

/* Machine code of a function returning v (0 <= v < 2048) written at
 * code, for the tests that run code they wrote: li a0, v; ret. The
 * kernel's mapping of it makes the instruction fetch see it. */
static inline void uarch_code_return(volatile uint8_t *code, uint32_t v)
{
	volatile uint32_t *w = (volatile uint32_t *)code;
	w[0] = 0x00000513u | (v << 20);      /* addi a0, zero, v */
	w[1] = 0x00008067u;                  /* jalr zero, 0(ra) */
}

/* Machine code of a thread that loops on itself for ever: j . */
static inline void uarch_code_spin(volatile uint8_t *code)
{
	*(volatile uint32_t *)code = 0x0000006fu;   /* jal zero, 0 */
}

/* Machine code of a thread's whole life written at code: system call
 * `sysno` with first argument v (both 0 <= x < 2048), then a loop on
 * itself should the call return: li a0, v; li a7, sysno; ecall; j . */
static inline void uarch_code_syscall1(volatile uint8_t *code, uint32_t sysno, uint32_t v)
{
	volatile uint32_t *w = (volatile uint32_t *)code;
	w[0] = 0x00000513u | (v << 20);      /* addi a0, zero, v */
	w[1] = 0x00000893u | (sysno << 20);  /* addi a7, zero, sysno */
	w[2] = 0x00000073u;                  /* ecall */
	uarch_code_spin(code + 12);
}

/* Machine code of a thread that stores a zero word at the address its
 * first argument names, then loops on itself: sw zero, 0(a0); j . */
static inline void uarch_code_store_arg(volatile uint8_t *code)
{
	volatile uint32_t *w = (volatile uint32_t *)code;
	w[0] = 0x00052023u;                  /* sw zero, 0(a0) */
	uarch_code_spin(code + 4);
}

#endif
