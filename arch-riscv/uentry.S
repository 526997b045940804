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
#define SYS_CALL 18        /* abi/patina/syscall.h: checked in ipc_fast.c */
#define SYS_REPLY_RECV 22

/* The fast path's words (s2..s5) into the partner's frame at \uf, with
 * its a0 and a6 zero, and a5 too after a reply (\reply = 1): for the ways
 * out through C, which return to user from the frame. */
.macro PUT_WORDS uf, reply
	sd	s2, 88(\uf)
	sd	s3, 96(\uf)
	sd	s4, 104(\uf)
	sd	s5, 112(\uf)
	sd	zero, 80(\uf)
	sd	zero, 128(\uf)
	.if \reply
	sd	zero, 120(\uf)
	.endif
.endm

/* The handoff from the fast path: a0 = caller (blocked now), a1 =
 * partner, the words in s2..s5. What sched_handoff_done does: let the
 * caller go from this hart (on_cpu, queueing it if it was made runnable
 * meanwhile), end a killed partner, return the partner to user, its a0 =
 * 0, a1..a4 = the words, a6 = 0 and a5 = the badge: from its frame after
 * a call (ipc_fast_call wrote it there), 0 after a reply (\reply = 1).
 * stvec is still user_vector and sstatus is what the partner's return
 * needs (SPP = 0, SPIE = 1, SUM and FS off: the ecall came from user
 * mode, where they are as return_to_user set them for every thread), so
 * neither is written. The stack below the partner's frame is free (its
 * kernel context is just "return to user"): the ways into C run on it. */
.macro HANDOFF reply
#ifndef LOCK_CHECK
	lw	t0, THREAD_KILLED(a1)
	bnez	t0, 5f
	addi	t1, a0, THREAD_ON_CPU
	amoswap.w.aqrl t0, zero, (t1)
	li	t1, ONCPU_REQUEUE
	beq	t0, t1, 6f
	ld	a0, THREAD_UF(a1)
	sd	tp, UF_KTP(a0)
	csrw	sscratch, a0
	ld	t0, 256(a0)
	csrw	sepc, t0
	mv	a1, s2
	mv	a2, s3
	mv	a3, s4
	mv	a4, s5
	li	a6, 0
	.if \reply
	li	a5, 0
	.irp n, 1, 2, 3, 4, 5, 6, 7, 8, 9, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31
	ld	x\n, (8 * \n)(a0)
	.endr
	.else
	.irp n, 1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31
	ld	x\n, (8 * \n)(a0)
	.endr
	.endif
	li	a0, 0
	sret
	/* The caller was made runnable meanwhile: queue it, in C. */
6:	ld	a2, THREAD_UF(a1)
	PUT_WORDS a2, \reply
	mv	sp, a2
	lla	t0, trap_vector
	csrw	stvec, t0
	mv	s1, a2
	li	s0, 0
	call	sched_handoff_requeue
	mv	a0, s1
	j	user_return
#endif
	/* Lock-check builds (sched_handoff_done asserts that no lock is
	 * held) and a killed partner: the general hand-over in C. */
5:	ld	a2, THREAD_UF(a1)
	PUT_WORDS a2, \reply
	mv	sp, a2
	lla	t0, trap_vector
	csrw	stvec, t0
	li	s0, 0
	tail	sched_handoff_done
.endm


	.section .text
	.globl user_vector
	.balign 4
user_vector:
	/* sp = our frame, sscratch = the user's sp; a0..a7 stay the user's
	 * for the fast path. t0 first: the one register the look at scause
	 * needs. */
	csrrw	sp, sscratch, sp
	sd	t0, 40(sp)
	csrr	t0, scause
	addi	t0, t0, -CAUSE_ECALL_U
	bnez	t0, 2f
	/* A system call does not keep t0..t6 (abi/patina/syscall.h): they
	 * are not saved, and the return gives back what the frame holds. */
	SAVE_GPRS 1, 3, 4, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27
	csrr	t0, sscratch
	sd	t0, 16(sp)
	ld	tp, UF_KTP(sp)
	/* tf.sstatus is not saved: it holds what the last return to user
	 * wrote (return_to_user), which is what the next one restores. A
	 * system call resumes after its ecall, on every path. */
	csrr	t0, sepc
	addi	t0, t0, 4
	sd	t0, 256(sp)
	/* IPC fast path (kernel/mk/ipc_fast.c), one entry per call kind:
	 * the user's a0 and a5 as they are, a6 = the frame, the words
	 * (a1..a4) kept in s2..s5, which C code keeps (the user's s2..s5 are
	 * in the frame). It returns a0 = caller, a1 = partner when it took
	 * the call (endpoint lock dropped, the partner current, its address
	 * space in effect): hand the hart over to the partner. Else a1 = 0,
	 * nothing changed, and the general path runs. */
	li	t0, SYS_CALL
	beq	a7, t0, 7f
	li	t0, SYS_REPLY_RECV
	bne	a7, t0, 8f
	mv	s2, a1
	mv	s3, a2
	mv	s4, a3
	mv	s5, a4
	mv	a6, sp
	call	ipc_fast_reply_recv
	bnez	a1, 9f
	j	8f
7:	mv	s2, a1
	mv	s3, a2
	mv	s4, a3
	mv	s5, a4
	mv	a6, sp
	call	ipc_fast_call
	bnez	a1, 3f
8:	li	t2, CAUSE_ECALL_U
	j	4f
	/* Any other trap: every register. */
2:	SAVE_GPRS 1, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31
	csrr	t0, sscratch
	sd	t0, 16(sp)
	ld	tp, UF_KTP(sp)
	csrr	t0, sepc
	sd	t0, 256(sp)
	csrr	t2, scause
4:	sd	t2, 272(sp)
	csrr	t0, stval
	sd	t0, 280(sp)
	lla	t0, trap_vector
	csrw	stvec, t0
	li	s0, 0
	mv	a0, sp
	call	user_trap
1:	j	1b

	/* The handoffs from the fast path. */
3:	HANDOFF 0
9:	HANDOFF 1

/* void user_return(struct uframe *uf): interrupts off, uf->tf.sstatus
 * already says SPP=0 (user), SPIE=1, SUM=0. Does not return. */
	.globl user_return
user_return:
	ld	t0, 264(a0)
	csrw	sstatus, t0
	lla	t0, user_vector
	csrw	stvec, t0
	sd	tp, UF_KTP(a0)
	csrw	sscratch, a0
	ld	t0, 256(a0)
	csrw	sepc, t0
	.irp n, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31
	ld	x\n, (8 * \n)(a0)
	.endr
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
