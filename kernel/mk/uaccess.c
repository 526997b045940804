/* Copies between kernel and user memory that fail cleanly.
 *
 * The range is checked to lie in the user half first; the copy itself runs
 * in uaccess_copy (uentry.S) inside arch_uaccess_begin/end only. A
 * page fault inside it is first offered to the anonymous-memory fault
 * handler (a user buffer on a not yet touched stack page is fine); if that
 * cannot resolve it, the trap returns into uaccess_fault and the copy
 * returns -E_FAULT instead of taking the kernel down.
 *
 * Pager-managed and swapped memory: the kernel never calls a pager from
 * inside a system call. A copy that touches a page uvm_fault cannot fill
 * by itself (invalid, pager-managed, swapped, or without the permission
 * the copy needs) fails with -E_FAULT, whether or not the thread has a
 * fault endpoint; the caller's pager must page the buffer in first. So a
 * syscall never blocks on a pager while it holds a half-done operation,
 * and a dead or stuck pager can never wedge the kernel inside a copy.
 * (uaccess_fixup below only ever calls uvm_fault, never fault_to_pager.) */
#include "mk.h"
#include "arch.h"

extern long uaccess_copy(void *dst, const void *src, unsigned long n);
extern char uaccess_copy_end[], uaccess_fault[];
volatile unsigned long uaccess_faults_fixed;

static int user_range_ok(uint64_t a, size_t n)
{
	return n <= user_top && a <= user_top - n;
}

int copy_from_user(void *dst, uint64_t usrc, size_t n)
{
	if (!user_range_ok(usrc, n))
		return -E_FAULT;
	arch_uaccess_begin();
	long r = uaccess_copy(dst, (const void *)(uintptr_t)usrc, n);
	arch_uaccess_end();
	return (int)r;
}

int copy_to_user(uint64_t udst, const void *src, size_t n)
{
	if (!user_range_ok(udst, n))
		return -E_FAULT;
	arch_uaccess_begin();
	long r = uaccess_copy((void *)(uintptr_t)udst, src, n);
	arch_uaccess_end();
	return (int)r;
}

/* Called by ktrap_fault (kernel/trap.c) for a kernel-mode exception of
 * kind (TRAP_*) at addr, page_fault as the arch decoded it. Returns 1 when
 * the trap was a user-copy fault and the frame was edited to retry or
 * bail. */
int uaccess_fixup(struct trap_frame *tf, uint64_t addr, unsigned kind, int page_fault)
{
	uint64_t pc = uf_get(tf, UREG_PC);
	if (pc < (uint64_t)(uintptr_t)uaccess_copy ||
	    pc >= (uint64_t)(uintptr_t)uaccess_copy_end)
		return 0;
	if (kind != TRAP_READ_FAULT && kind != TRAP_WRITE_FAULT)
		return 0;
	struct thread *th = cur_thread();
	if (page_fault && th && th->task &&
	    uvm_fault(th->task, addr, kind == TRAP_WRITE_FAULT, 0, NULL) == 0)
		return 1;     /* resolved: retry the load/store */
	__atomic_fetch_add(&uaccess_faults_fixed, 1, __ATOMIC_RELAXED);
	uf_set(tf, UREG_PC, (uint64_t)(uintptr_t)uaccess_fault);
	return 1;
}
