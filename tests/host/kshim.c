/* What the kernel's FDT parser takes from lib/kstring.c that the host's C
 * library may lack (glibc before 2.38 has no strlcpy). Same contract as
 * lib/kstring.h: copy at most size-1 bytes, always NUL-terminate (size >
 * 0), return strlen(src). */
#include <string.h>

size_t strlcpy(char *dst, const char *src, size_t size);

size_t strlcpy(char *dst, const char *src, size_t size)
{
	size_t n = strlen(src);
	size_t c = n < size - 1 ? n : size - 1;
	memcpy(dst, src, c);
	dst[c] = 0;
	return n;
}

/* kernel/memmap.c takes the kernel image's bounds from the linker script
 * (memlayout.h): here a 64 KiB image whose physical address, through
 * phys_map_base, is 0x80200000 as on QEMU virt. _kernel_end is this
 * array's end, set by the link (--defsym in tests/host/meson.build). */
#include <stdint.h>
char _kernel_start[65536] __attribute__((aligned(4096)));
uint64_t kernel_va_pa_offset;
uint64_t phys_map_base;

void kshim_init(void);
void kshim_init(void)
{
	phys_map_base = (uint64_t)(uintptr_t)_kernel_start - 0x80200000u;
}
