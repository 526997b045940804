/* Thread-local storage, with picolibc's interface (so the runtime's
 * start.c is one source for both C libraries); the layout is the ISA's
 * and lives with it (user/lib/arch/<arch>/tls.c). A thread's block holds
 * the TLS image and whatever the ISA's thread pointer needs beside it. */
#ifndef LIBC_PICOTLS_H
#define LIBC_PICOTLS_H

#include <stddef.h>

/* Bytes of one thread's block (a multiple of 16; blocks are 16-aligned). */
size_t _tls_size(void);
/* Fill block with the TLS image (.tdata copied, .tbss zeroed). */
void _init_tls(void *block);
/* Make block, filled by _init_tls, the running thread's TLS. */
void _set_tls(void *block);

#endif
