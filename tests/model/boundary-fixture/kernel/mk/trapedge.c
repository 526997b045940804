/* Planted trap-edge violations: saved registers by index, trap causes
 * and satp belong to arch-* / and sbi/. Words in comments are fine:
 * regs[10], tf->sepc += 4, scause == 8, satp. */
#include "mk.h"
#include "arch.h"

#define CAUSE_ECALL_U 8 /* BOUNDARY-EXPECT: trap cause */

static const char *msg = "scause %lu, stval %lx, regs[10] %lx, satp %lx";

void set_result(struct trap_frame *tf, long r)
{
	tf->regs[10] = (uint64_t)r; /* BOUNDARY-EXPECT: register index */
	uf_set(tf, UREG_RET, (uint64_t)r);
}

long sysno(struct uframe *uf)
{
	(void)msg;
	return (long)uf->tf.regs[17]; /* BOUNDARY-EXPECT: register index */
}

void start(uint64_t *regs, uint64_t sp, uint64_t words[4])
{
	regs[2] = sp; /* BOUNDARY-EXPECT: register index */
	for (int i = 0; i < 4; i++)
		uf_set_arg(0, (unsigned)i, words[i]);
}

void copy_regs(struct trap_frame *to, const struct trap_frame *from, int i)
{
	to->regs[i] = from->regs[i]; /* BOUNDARY-EXPECT: register index */
}

int is_store_fault(const struct trap_frame *tf, uint64_t cause)
{
	if (tf->scause & SCAUSE_INTR) /* BOUNDARY-EXPECT: trap cause */
		return 0;
	return cause == 15; /* BOUNDARY-EXPECT: trap cause */
}

void skip_ecall(struct trap_frame *tf)
{
	tf->sepc += 4; /* BOUNDARY-EXPECT: trap cause */
}

uint64_t fault_address(const struct trap_frame *tf)
{
	return tf->stval; /* BOUNDARY-EXPECT: trap cause */
}

int exc_is_page_fault(uint64_t code)
{
	return code == EXC_LOAD_PAGE_FAULT || code == IRQ_S_TIMER; /* BOUNDARY-EXPECT: trap cause */
}

uint64_t token_of(struct task *t)
{
	return t->satp; /* BOUNDARY-EXPECT: satp */
}

void switch_to(struct rq *rq, struct task *t)
{
	sched_as_write(rq, t, t->as_token);
	arch_as_switch(arch_user_satp(&t->as, 4, t->asid)); /* BOUNDARY-EXPECT: satp */
}

uint64_t ret_of(const struct trap_frame *tf, unsigned i)
{
	return uf_get(tf, UREG_RET) + uf_arg(tf, i);
}

void new_thread(struct thread *th, void (*entry)(void))
{
	th->ctx.ra = (uint64_t)(uintptr_t)entry; /* BOUNDARY-EXPECT: saved-context field */
	th->ctx.sp = (uint64_t)(uintptr_t)th->uf; /* BOUNDARY-EXPECT: saved-context field */
	th->uf->kernel_tp = 0; /* BOUNDARY-EXPECT: saved-context field */
	th->uf->tf.sstatus = 0; /* BOUNDARY-EXPECT: saved-context field */
	arch_kctx_init(&th->ctx, th->uf);
}
