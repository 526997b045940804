/* pvhprobe: a 32-bit PVH guest that runs x86_bootfdt_build on what QEMU
 * really gives (start info, memory map, ACPI tables; physical = virtual,
 * paging off) and prints the DTB in hex on COM1, with the first module's
 * place, then leaves QEMU through isa-debug-exit (status 1: built, 3:
 * refused). pvh_probe.py checks the DTB through the kernel's parser. */
#include <stdint.h>
#include "bootfdt.h"

static void outb(uint16_t port, uint8_t v)
{
	__asm__ volatile("outb %0, %1" : : "a"(v), "Nd"(port));
}

static uint8_t inb(uint16_t port)
{
	uint8_t v;
	__asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

static void put(char c)
{
	while (!(inb(0x3fd) & 0x20))   /* transmitter holding register empty */
		;
	outb(0x3f8, (uint8_t)c);
}

static void puts_(const char *s)
{
	while (*s)
		put(*s++);
}

static void hex(uint64_t v, int digits)
{
	for (int i = digits - 1; i >= 0; i--)
		put("0123456789abcdef"[(v >> (4 * i)) & 15]);
}

static uint8_t dtb[65536];

void probe_main(const struct hvm_start_info *si);

void probe_main(const struct hvm_start_info *si)
{
	uint32_t a = 1, b, c = 0, d;
	__asm__ volatile("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d));
	const char *why = "";
	long r = x86_bootfdt_build(si, b >> 24, 1000000000, dtb, sizeof dtb, &why);
	if (r) {
		puts_("PROBE-REFUSED ");
		puts_(why);
		puts_("\n");
		outb(0xf4, 1);
		return;
	}
	if (si->nr_modules) {
		const struct hvm_modlist_entry *m =
			(const void *)(uintptr_t)si->modlist_paddr;
		puts_("PROBE-MODULE ");
		hex(m->paddr, 16);
		put(' ');
		hex(m->size, 16);
		puts_("\n");
	}
	uint32_t total = (uint32_t)dtb[4] << 24 | (uint32_t)dtb[5] << 16 | dtb[6] << 8 | dtb[7];
	puts_("PROBE-DTB ");
	for (uint32_t i = 0; i < total; i++)
		hex(dtb[i], 2);
	puts_("\n");
	outb(0xf4, 0);
}
