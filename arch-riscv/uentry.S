/* User-mode trap entry/exit, kernel thread context switch and the faulting
 * user-copy primitive (owner: microkernel).
 *
 * While a hart runs user code, stvec = user_vector and sscratch = the
 * running thread's user frame (struct uframe, kernel/mk/thread.h): a
 * struct trap_frame followed by the kernel tp to restore. The frame sits at
 * the top of the thread's kernel stack, so after saving the user registers
 * the kernel stack pointer is simply the frame's address. In the kernel,
 * stvec = trap_vector (kernel/trap.c) and sscratch is not used (it holds
 * the user sp of the last entry: nothing reads it).
 *
 * The one exception is the IPC fast path (kernel/mk/ipc_fast.c): an ecall
 * that it completes runs with stvec still user_vector from entry to the
 * sret into the partner, so neither side writes stvec. That code runs
 * with interrupts off and touches only kernel objects that are always
 * mapped (threads, tasks, endpoints, CSpaces): it takes no trap. Every
 * way out of it into other kernel code (the slow path, a killed partner,
 * a partner to requeue, lock-check builds) sets stvec = trap_vector
 * first. */
#include "gpr_save.h"
#define UF_KTP 288
#define THREAD_UF 184      /* offsetof(struct thread, uf): checked in ipc_fast.c */
#define THREAD_ON_CPU 120  /* offsetof(struct thread, on_cpu): checked in ipc_fast.c */
#define THREAD_KILLED 124  /* offsetof(struct thread, killed): checked in ipc_fast.c */
#define ONCPU_REQUEUE 2    /* kernel/mk/mk.h */
#define CAUSE_ECALL_U 8

	.section .text
	.globl user_vector
	.balign 4
user_vector:
	/* sp = our frame, sscratch = the user's sp; a0..a7 stay the user's
	 * for the fast path. */
	csrrw	sp, sscratch, sp
	SAVE_GPRS_BUT_SP
	csrr	t0, sscratch
	sd	t0, 16(sp)
	ld	tp, UF_KTP(sp)
	/* tf.sstatus is not saved: it holds what the last return to user
	 * wrote (return_to_user), which is what the next one restores. */
	csrr	t0, sepc
	csrr	t2, scause
	li	t1, CAUSE_ECALL_U
	bne	t2, t1, 2f
	/* A system call resumes after its ecall, on every path. */
	addi	t0, t0, 4
	sd	t0, 256(sp)
	/* IPC fast path (kernel/mk/ipc_fast.c): the user's a0..a5 and a7
	 * as they are, a6 = the frame. It returns a0 = caller, a1 = partner
	 * when it took the call (endpoint lock dropped, the partner current,
	 * its address space in effect): hand the hart over to the partner.
	 * Else a1 = 0, nothing changed, and the general path runs. */
	mv	a6, sp
	call	ipc_fastpath
	bnez	a1, 3f
	li	t2, CAUSE_ECALL_U
	j	4f
2:	sd	t0, 256(sp)
4:	sd	t2, 272(sp)
	csrr	t0, stval
	sd	t0, 280(sp)
	lla	t0, trap_vector
	csrw	stvec, t0
	li	s0, 0
	mv	a0, sp
	call	user_trap
1:	j	1b

	/* The handoff from the fast path: a0 = caller (blocked now), a1 =
	 * partner. Move to the partner's frame (the stack below it is free:
	 * its kernel context is just "return to user"), then what
	 * sched_handoff_done does: let the caller go from this hart (on_cpu,
	 * queueing it if it was made runnable meanwhile), end a killed
	 * partner, return the partner to user. stvec is still user_vector
	 * and sstatus is what the partner's return needs (SPP = 0, SPIE = 1,
	 * SUM and FS off: the ecall came from user mode, where they are as
	 * return_to_user set them for every thread), so neither is written. */
3:	ld	a2, THREAD_UF(a1)
	mv	sp, a2
#ifndef LOCK_CHECK
	lw	t0, THREAD_KILLED(a1)
	bnez	t0, 5f
	addi	t1, a0, THREAD_ON_CPU
	amoswap.w.aqrl t0, zero, (t1)
	li	t1, ONCPU_REQUEUE
	beq	t0, t1, 6f
	mv	a0, a2
	j	user_return_ipc
6:	lla	t0, trap_vector
	csrw	stvec, t0
	mv	s1, a2
	li	s0, 0
	call	sched_handoff_requeue
	mv	a0, s1
	j	user_return
#endif
	/* Lock-check builds (sched_handoff_done asserts that no lock is
	 * held) and a killed partner: the general hand-over in C. */
5:	lla	t0, trap_vector
	csrw	stvec, t0
	li	s0, 0
	tail	sched_handoff_done

/* void user_return(struct uframe *uf): interrupts off, uf->tf.sstatus
 * already says SPP=0 (user), SPIE=1, SUM=0. Does not return.
 * user_return_ipc: the same with stvec already user_vector and sstatus
 * already uf->tf.sstatus (the fast path's handoff, above). */
	.globl user_return
user_return:
	ld	t0, 264(a0)
	csrw	sstatus, t0
	lla	t0, user_vector
	csrw	stvec, t0
user_return_ipc:
	sd	tp, UF_KTP(a0)
	csrw	sscratch, a0
	ld	t0, 256(a0)
	csrw	sepc, t0
	ld	x1, 8(a0)
	ld	x2, 16(a0)
	ld	x3, 24(a0)
	ld	x4, 32(a0)
	ld	x5, 40(a0)
	ld	x6, 48(a0)
	ld	x7, 56(a0)
	ld	x8, 64(a0)
	ld	x9, 72(a0)
	ld	x11, 88(a0)
	ld	x12, 96(a0)
	ld	x13, 104(a0)
	ld	x14, 112(a0)
	ld	x15, 120(a0)
	ld	x16, 128(a0)
	ld	x17, 136(a0)
	ld	x18, 144(a0)
	ld	x19, 152(a0)
	ld	x20, 160(a0)
	ld	x21, 168(a0)
	ld	x22, 176(a0)
	ld	x23, 184(a0)
	ld	x24, 192(a0)
	ld	x25, 200(a0)
	ld	x26, 208(a0)
	ld	x27, 216(a0)
	ld	x28, 224(a0)
	ld	x29, 232(a0)
	ld	x30, 240(a0)
	ld	x31, 248(a0)
	ld	x10, 80(a0)
	sret

/* struct kctx *switch_context(struct kctx *from, struct kctx *to):
 * save the callee-saved state into from, load to's. Returns `from` on the
 * new stack (a0 is untouched), which is how the next thread learns whom it
 * replaced. */
	.globl switch_context
switch_context:
	sd	ra, 0(a0)
	sd	sp, 8(a0)
	sd	s0, 16(a0)
	sd	s1, 24(a0)
	sd	s2, 32(a0)
	sd	s3, 40(a0)
	sd	s4, 48(a0)
	sd	s5, 56(a0)
	sd	s6, 64(a0)
	sd	s7, 72(a0)
	sd	s8, 80(a0)
	sd	s9, 88(a0)
	sd	s10, 96(a0)
	sd	s11, 104(a0)
	ld	ra, 0(a1)
	ld	sp, 8(a1)
	ld	s0, 16(a1)
	ld	s1, 24(a1)
	ld	s2, 32(a1)
	ld	s3, 40(a1)
	ld	s4, 48(a1)
	ld	s5, 56(a1)
	ld	s6, 64(a1)
	ld	s7, 72(a1)
	ld	s8, 80(a1)
	ld	s9, 88(a1)
	ld	s10, 96(a1)
	ld	s11, 104(a1)
	ret

/* First run of a new thread: switch_context "returned" here with a0 =
 * the previous thread's context. */
	.globl thread_trampoline
thread_trampoline:
	call	thread_first_run
2:	j	2b

/* void sched_resume_on(struct thread *prev, struct thread *next,
 * struct uframe *uf): the IPC handoff (sched_handoff, kernel/mk/mk.h).
 * The stack below next's frame uf is free (next's kernel context is just
 * "return to user"): finish the switch from prev on it. */
	.globl sched_resume_on
sched_resume_on:
	mv	sp, a2
	li	s0, 0
	tail	sched_handoff_done

/* long uaccess_copy(void *dst, const void *src, unsigned long n):
 * copy with SUM already set by the caller: eight bytes at a time while
 * both pointers are 8-aligned (an aligned doubleword never crosses a
 * page, so a fault names one page), bytes otherwise and for the tail. A
 * page fault inside it is either resolved (anonymous memory) and the
 * access retried, or redirected by uaccess_fixup (kernel/mk/uaccess.c)
 * to uaccess_fault, which returns -E_FAULT. Returns 0 when all n bytes
 * were copied. */
	.globl uaccess_copy, uaccess_copy_end, uaccess_fault
uaccess_copy:
	or	t1, a0, a1
	andi	t1, t1, 7
	bnez	t1, 3f
	li	t2, 8
4:	bltu	a2, t2, 3f
	ld	t0, 0(a1)
	sd	t0, 0(a0)
	addi	a0, a0, 8
	addi	a1, a1, 8
	addi	a2, a2, -8
	j	4b
3:	beqz	a2, 2f
1:	lbu	t0, 0(a1)
	sb	t0, 0(a0)
	addi	a0, a0, 1
	addi	a1, a1, 1
	addi	a2, a2, -1
	bnez	a2, 1b
2:	li	a0, 0
	ret
uaccess_copy_end:
uaccess_fault:
	li	a0, -7
	ret
