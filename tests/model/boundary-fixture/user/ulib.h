/* User mode has ecall (a system call) and the counter reads. */
static inline long syscall0(long n)
{
	register long a7 __asm__("a7") = n;
	__asm__ volatile("ecall" : "+r"(a7) :: "memory");
	return a7;
}
static inline unsigned long rdtime(void)
{
	unsigned long t;
	__asm__ volatile("rdtime %0" : "=r"(t));
	return t;
}
