/* The C library's system layer on patina: program start and exit, the
 * console as stdin/stdout, the heap, locks and thread-local storage.
 * picolibc (RISC-V) and libc/ (x86-64) call it through the same names.
 * Programs are ordinary C: main(argc, argv), printf, malloc. */
#include "ulib.h"
#include <picotls.h>
#include <sys/lock.h>

/* --- start and exit --- */

uint64_t spawn_arg_word;
long self_module_index;
int main(int argc, char **argv);

/* The main thread's TLS block; threads get theirs on their stack. */
#define MAIN_TLS_MAX 1024
static char main_tls[MAIN_TLS_MAX] __attribute__((aligned(16)));

/* From crt0.S, with the registers the kernel started us with. */
void patina_start(uint64_t arg, long argc, char **argv, long module)
{
	if (_tls_size() > MAIN_TLS_MAX)
		sys_exit(127);      /* cannot happen unless a program grows its TLS */
	_init_tls(main_tls);
	_set_tls(main_tls);
	spawn_arg_word = arg;
	self_module_index = module;
	exit(main((int)argc, argv));
}

static void con_flush_line(void);

void _exit(int status)
{
	con_flush_line();
	sys_exit(status);
}

/* A thread started by uthread_start returns here (crt0.S). */
void uthread_exit(void)
{
	con_flush_line();
	sc0(SYS_THREAD_EXIT);
	for (;;)
		;
}

/* --- console: each thread collects a line, then writes it in one call,
 * so lines of different threads do not interleave --- */

static __thread char con_line[160];
static __thread unsigned con_len;

static void con_flush_line(void)
{
	if (con_len)
		sys_puts(con_line, con_len);
	con_len = 0;
}

static int con_put(char c, FILE *f)
{
	(void)f;
	con_line[con_len++] = c;
	if (c == '\n' || con_len == sizeof con_line)
		con_flush_line();
	return (unsigned char)c;
}

static int con_get(FILE *f)
{
	(void)f;
	long c;
	while ((c = sys_getc()) < 0)
		sys_yield();
	return (int)c;
}

static int con_flush(FILE *f)
{
	(void)f;
	con_flush_line();
	return 0;
}

static FILE con = FDEV_SETUP_STREAM(con_put, con_get, con_flush, _FDEV_SETUP_RW);
FILE *const stdin = &con;
FILE *const stdout = &con;
FILE *const stderr = &con;

/* --- heap: a window of anonymous memory, reserved as it grows and
 * filled on first touch --- */

#define HEAP_BASE 0x800000000UL    /* 32 GiB: no fixed-address program uses it */
#define HEAP_MAX  0x40000000UL     /* 1 GiB */
#define HEAP_STEP 0x10000UL
static uint64_t heap_brk = HEAP_BASE, heap_reserved = HEAP_BASE;

/* Called by malloc with the C library's lock held. The old break, or
 * (void *)-1 with errno ENOMEM when the window or the quota is full. */
void *sbrk(ptrdiff_t incr)
{
	uint64_t old = heap_brk, want = old + (uint64_t)incr;
	if (incr < 0 || want > HEAP_BASE + HEAP_MAX) {
		errno = ENOMEM;
		return (void *)-1;
	}
	if (want > heap_reserved) {
		uint64_t top = (want + HEAP_STEP - 1) & ~(HEAP_STEP - 1);
		if (mem_reserve(heap_reserved, top - heap_reserved)) {
			errno = ENOMEM;
			return (void *)-1;
		}
		heap_reserved = top;
	}
	heap_brk = want;
	return (void *)old;
}

/* --- locks for the C library (malloc, stdio): spin with yield; a
 * recursive lock knows its owner by the thread's TLS pointer --- */

struct __lock {
	void *owner;
	unsigned depth;
};
struct __lock __lock___libc_recursive_mutex;
#define DYN_LOCKS 32
static struct __lock dyn_locks[DYN_LOCKS];
static unsigned dyn_used;

static void lock_new(_LOCK_T *l)
{
	unsigned i = __atomic_fetch_add(&dyn_used, 1, __ATOMIC_RELAXED);
	if (i >= DYN_LOCKS) {
		sys_puts("libc: out of locks\n", 19);
		sys_exit(134);
	}
	*l = &dyn_locks[i];
}
void __retarget_lock_init(_LOCK_T *l) { lock_new(l); }
void __retarget_lock_init_recursive(_LOCK_T *l) { lock_new(l); }
void __retarget_lock_close(_LOCK_T l) { (void)l; }
void __retarget_lock_close_recursive(_LOCK_T l) { (void)l; }

int __retarget_lock_try_acquire_recursive(_LOCK_T l)
{
	void *me = uarch_tp(), *none = NULL;
	if (__atomic_load_n(&l->owner, __ATOMIC_RELAXED) == me) {
		l->depth++;
		return 1;
	}
	if (!__atomic_compare_exchange_n(&l->owner, &none, me, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return 0;
	l->depth = 1;
	return 1;
}
int __retarget_lock_try_acquire(_LOCK_T l) { return __retarget_lock_try_acquire_recursive(l); }
void __retarget_lock_acquire_recursive(_LOCK_T l)
{
	while (!__retarget_lock_try_acquire_recursive(l))
		sys_yield();
}
void __retarget_lock_acquire(_LOCK_T l) { __retarget_lock_acquire_recursive(l); }
void __retarget_lock_release_recursive(_LOCK_T l)
{
	if (--l->depth == 0)
		__atomic_store_n(&l->owner, NULL, __ATOMIC_RELEASE);
}
void __retarget_lock_release(_LOCK_T l) { __retarget_lock_release_recursive(l); }

/* --- TLS for new threads (ulib.c uthread_start) --- */

size_t uthread_tls_size(void)
{
	return (_tls_size() + 15) & ~15UL;
}
void uthread_tls_init(void *block)
{
	_init_tls(block);
}
