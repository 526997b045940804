/* Thread-local storage on x86-64 (libc's picotls.h interface). The
 * x86-64 TLS layout puts the TLS image just below the thread pointer
 * (the FS base): the linker resolves a local-exec variable to
 * %fs:(its offset in the image - the image's size rounded up to 16),
 * and the word at the thread pointer holds the thread pointer itself,
 * which the compiler loads (%fs:0) to take a variable's address. A
 * block is therefore [image, rounded to 16][self pointer, 16 bytes]. */
#include <stdint.h>
#include <string.h>
#include <picotls.h>
#include "ulib.h"

/* user.ld: the TLS template; sizes come as symbol addresses. */
extern char __tdata_source[], __tdata_size[], __tbss_offset[], __tbss_size[], __tls_size[];

/* Where the thread pointer sits in a block: the image rounded up to
 * 16 bytes (user.ld asserts the image needs no more alignment). */
static size_t tp_offset(void)
{
	return ((size_t)(uintptr_t)__tls_size + 15) & ~(size_t)15;
}

size_t _tls_size(void)
{
	return tp_offset() + 16;
}

void _init_tls(void *block)
{
	char *b = block;
	memcpy(b, __tdata_source, (size_t)(uintptr_t)__tdata_size);
	memset(b + (uintptr_t)__tbss_offset, 0, (size_t)(uintptr_t)__tbss_size);
	void **tp = (void **)(b + tp_offset());
	*tp = tp;
}

void _set_tls(void *block)
{
	uarch_set_tp((char *)block + tp_offset());
}
