/* QEMU boot tests are not white-box tests of the core. */
int x86_bits(unsigned long e)
{
	return (e & X86_NX) != 0; /* BOUNDARY-EXPECT */
}
