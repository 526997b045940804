/* Trap frame layout shared by trapvec.S and the C dispatcher. */
#ifndef ARCH_RISCV_TRAP_H
#define ARCH_RISCV_TRAP_H

#include <stdint.h>

/* regs[i] is x<i>; regs[0] is unused. Field order is fixed by trapvec.S. */
struct trap_frame {
	uint64_t regs[32];
	uint64_t sepc;
	uint64_t sstatus;
	uint64_t scause;
	uint64_t stval;
};

#define TF_SIZE 288

extern char trap_vector[];

/* Called by trapvec.S with interrupts off; returning resumes at frame->sepc. */
void trap_dispatch(struct trap_frame *tf);

#endif
