/* The user registers generic code may name (enum ureg, kernel/arch.h),
 * as x86-64 trap-frame words: each value is the register's word index in
 * struct trap_frame, so every accessor is one load or store. The system
 * call ABI (abi/patina/syscall.h): `syscall`, number in rax, arguments
 * in rdi, rsi, rdx, r10, r8, r9, r12, result in rax. There is no return
 * address register: enum ureg has no UREG_RA here, so generic code that
 * would need one does not build. */
#ifndef ARCH_X86_UREGS_H
#define ARCH_X86_UREGS_H

#include <stdint.h>
#include "trap.h"

#define UREG_WORD(f) (__builtin_offsetof(struct trap_frame, f) / 8)

enum ureg {
	UREG_TLS = UREG_WORD(fs_base),
	UREG_FP = UREG_WORD(rbp),
	UREG_RET = UREG_WORD(rax),
	UREG_SYSNO = UREG_WORD(rax),
	UREG_PC = UREG_WORD(rip),
	UREG_SP = UREG_WORD(rsp),
};

#define UREG_NARGS 7

/* rdi, rsi, rdx, r10, r8, r9, r12 */
static const uint8_t x86_ureg_args[UREG_NARGS] = {
	UREG_WORD(rdi), UREG_WORD(rsi), UREG_WORD(rdx), UREG_WORD(r10),
	UREG_WORD(r8), UREG_WORD(r9), UREG_WORD(r12),
};

static inline uint64_t uf_get(const struct trap_frame *tf, enum ureg r)
{
	return ((const uint64_t *)tf)[r];
}

static inline void uf_set(struct trap_frame *tf, enum ureg r, uint64_t v)
{
	((uint64_t *)tf)[r] = v;
}

static inline uint64_t uf_arg(const struct trap_frame *tf, unsigned i)
{
	return ((const uint64_t *)tf)[x86_ureg_args[i]];
}

static inline void uf_set_arg(struct trap_frame *tf, unsigned i, uint64_t v)
{
	((uint64_t *)tf)[x86_ureg_args[i]] = v;
}

#endif
