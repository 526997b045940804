/* The console: the 16550 UART at I/O port 0x3f8 (COM1), polled; and
 * power off through QEMU's isa-debug-exit device at port 0xf4 (QEMU exits
 * with status (v << 1) | 1 for a byte v written there), else the ACPI
 * S5 sleep of QEMU's q35 chipset. */
#include "arch.h"
#include "x86.h"

#define COM1 0x3f8
#define LSR_DATA  0x01
#define LSR_THRE  0x20
#define DEBUG_EXIT_PORT 0xf4
#define Q35_PM1A_CNT 0x604
#define PM1_SLP_EN (1u << 13)

/* 115200 8N1, FIFOs on, no interrupts. */
void x86_console_init(void)
{
	outb(COM1 + 1, 0x00);      /* IER: no interrupts */
	outb(COM1 + 3, 0x80);      /* LCR: divisor latch */
	outb(COM1 + 0, 0x01);      /* 115200 */
	outb(COM1 + 1, 0x00);
	outb(COM1 + 3, 0x03);      /* 8N1 */
	outb(COM1 + 2, 0x07);      /* FIFO on, cleared */
	outb(COM1 + 4, 0x03);      /* DTR, RTS */
}

static void put(char c)
{
	while (!(inb(COM1 + 5) & LSR_THRE))
		cpu_relax();
	outb(COM1, (uint8_t)c);
}

long x86_console_write(const char *buf, size_t len)
{
	for (size_t i = 0; i < len; i++)
		put(buf[i]);
	return 0;
}

int x86_console_getc(void)
{
	if (!(inb(COM1 + 5) & LSR_DATA))
		return -1;
	return inb(COM1);
}

/* Success leaves QEMU with status 1, failure with 3 (scripts/run knows);
 * without the device the write is ignored and the ACPI power-off ends
 * the machine with no status. Returns only if both were ignored. */
long x86_poweroff(int failure)
{
	outb(DEBUG_EXIT_PORT, failure ? 1 : 0);
	__asm__ volatile("outw %0, %1" :: "a"((uint16_t)PM1_SLP_EN), "Nd"((uint16_t)Q35_PM1A_CNT));
	return -1;
}
