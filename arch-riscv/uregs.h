/* The user registers generic code may name (enum ureg, kernel/arch.h),
 * as RISC-V trap-frame slots: each value is the register's index in
 * regs[], so every accessor is one load or store. The system-call ABI
 * (abi/patina/syscall.h): number in a7, arguments in a0..a6, result in
 * a0. */
#ifndef ARCH_RISCV_UREGS_H
#define ARCH_RISCV_UREGS_H

#include <stdint.h>
#include "trap.h"

enum ureg {
	UREG_RA = 1,
	UREG_SP = 2,
	UREG_TLS = 4,              /* tp */
	UREG_FP = 8,               /* s0 */
	UREG_RET = 10,             /* a0 */
	UREG_ARG0 = 10, UREG_ARG1, UREG_ARG2, UREG_ARG3, UREG_ARG4, UREG_ARG5, UREG_ARG6,
	UREG_SYSNO = 17,           /* a7 */
	UREG_PC = 32,              /* sepc: the slot after x31 */
};

#define UREG_NARGS 7

static inline uint64_t uf_get(const struct trap_frame *tf, enum ureg r)
{
	return r == UREG_PC ? tf->sepc : tf->regs[r];
}

static inline void uf_set(struct trap_frame *tf, enum ureg r, uint64_t v)
{
	if (r == UREG_PC)
		tf->sepc = v;
	else
		tf->regs[r] = v;
}

static inline uint64_t uf_arg(const struct trap_frame *tf, unsigned i)
{
	return tf->regs[UREG_ARG0 + i];
}

static inline void uf_set_arg(struct trap_frame *tf, unsigned i, uint64_t v)
{
	tf->regs[UREG_ARG0 + i] = v;
}

#endif
