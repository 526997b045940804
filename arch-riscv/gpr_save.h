/* For the assembly trap entries (trapvec.S, uentry.S): store x1 and
 * x3..x31 (SAVE_GPRS_BUT_SP), or the registers listed (SAVE_GPRS 1, 3,
 * ...), at their trap-frame slots, 8 * n bytes above sp (x2, sp itself,
 * goes to slot 2 by whatever way each entry found it). */
#ifndef ARCH_RISCV_GPR_SAVE_H
#define ARCH_RISCV_GPR_SAVE_H

.macro SAVE_GPRS regs:vararg
	.irp n, \regs
	sd	x\n, (8 * \n)(sp)
	.endr
.endm

.macro SAVE_GPRS_BUT_SP
	sd	x1, 8(sp)
	.irp n, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31
	sd	x\n, (8 * \n)(sp)
	.endr
.endm

#endif
