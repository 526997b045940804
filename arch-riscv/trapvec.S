/* Supervisor trap vector (direct mode). Traps only come from S-mode for now,
 * so the frame is pushed on the current kernel stack. Every register is
 * saved so the report of an unexpected trap shows the full state, and the
 * dispatcher may edit sepc/sstatus in the frame. */
#include "gpr_save.h"
	.section .text
	.globl trap_vector
	.balign 4
trap_vector:
	addi	sp, sp, -288
	SAVE_GPRS_BUT_SP
	addi	t0, sp, 288
	sd	t0, 16(sp)
	csrr	t0, sepc
	sd	t0, 256(sp)
	csrr	t0, sstatus
	sd	t0, 264(sp)
	csrr	t0, scause
	sd	t0, 272(sp)
	csrr	t0, stval
	sd	t0, 280(sp)
	mv	a0, sp
	call	trap_dispatch
	ld	t0, 256(sp)
	csrw	sepc, t0
	ld	t0, 264(sp)
	csrw	sstatus, t0
	ld	x1, 8(sp)
	ld	x3, 24(sp)
	ld	x4, 32(sp)
	ld	x5, 40(sp)
	ld	x6, 48(sp)
	ld	x7, 56(sp)
	ld	x8, 64(sp)
	ld	x9, 72(sp)
	ld	x10, 80(sp)
	ld	x11, 88(sp)
	ld	x12, 96(sp)
	ld	x13, 104(sp)
	ld	x14, 112(sp)
	ld	x15, 120(sp)
	ld	x16, 128(sp)
	ld	x17, 136(sp)
	ld	x18, 144(sp)
	ld	x19, 152(sp)
	ld	x20, 160(sp)
	ld	x21, 168(sp)
	ld	x22, 176(sp)
	ld	x23, 184(sp)
	ld	x24, 192(sp)
	ld	x25, 200(sp)
	ld	x26, 208(sp)
	ld	x27, 216(sp)
	ld	x28, 224(sp)
	ld	x29, 232(sp)
	ld	x30, 240(sp)
	ld	x31, 248(sp)
	addi	sp, sp, 288
	sret
