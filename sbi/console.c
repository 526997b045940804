/* Firmware console: DBCN (SBI 2.0) when probed, legacy putchar/getchar
 * otherwise. Before sbi_init runs, sbi_info is zero and the legacy calls are
 * used, which is what makes early panics visible. */
#include "sbi.h"
#include "sbi_call.h"
#include "memlayout.h"

long sbi_console_putc(char c)
{
	if (sbi_info.has_dbcn)
		return sbi_ecall(SBI_EXT_DBCN, 2, (unsigned char)c, 0, 0, 0, 0).error;
	/* Legacy calls return their status in a0 only. */
	return sbi_ecall(SBI_EXT_LEGACY_PUTCHAR, 0, (unsigned char)c, 0, 0, 0, 0).error;
}

long sbi_console_write(const char *buf, size_t len)
{
	if (sbi_info.has_dbcn) {
		while (len) {
			paddr_t pa = virt_to_phys(buf);
			struct sbiret r = sbi_ecall(SBI_EXT_DBCN, 0, len, pa, 0, 0, 0);
			if (r.error)
				return r.error;
			if ((size_t)r.value > len)
				return SBI_ERR_FAILED;
			buf += r.value;
			len -= (size_t)r.value;
		}
		return SBI_SUCCESS;
	}
	for (size_t i = 0; i < len; i++) {
		long e = sbi_console_putc(buf[i]);
		if (e)
			return e;
	}
	return SBI_SUCCESS;
}

int sbi_console_getc(void)
{
	if (sbi_info.has_dbcn) {
		/* One byte into a stack buffer; stacks live in the kernel image. */
		volatile char c = 0;
		struct sbiret r = sbi_ecall(SBI_EXT_DBCN, 1, 1, virt_to_phys((const void *)&c),
					    0, 0, 0);
		if (r.error || r.value != 1)
			return -1;
		return (unsigned char)c;
	}
	long v = sbi_ecall(SBI_EXT_LEGACY_GETCHAR, 0, 0, 0, 0, 0, 0).error;
	return v < 0 ? -1 : (int)(v & 0xff);
}
