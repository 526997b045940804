/* mm/ may touch entries but not the machine. */
unsigned long irqs_off(void)
{
	unsigned long s;
	__asm__ volatile("csrrc %0, sstatus, 2" : "=r"(s)); /* BOUNDARY-EXPECT */
	return s;
}
