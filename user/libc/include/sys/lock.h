/* The C library's locks, with picolibc's retargetable interface: the
 * runtime (user/lib/start.c) defines struct __lock and the functions;
 * the library takes __lock___libc_recursive_mutex around the heap. */
#ifndef LIBC_SYS_LOCK_H
#define LIBC_SYS_LOCK_H

struct __lock;
typedef struct __lock *_LOCK_T;

extern struct __lock __lock___libc_recursive_mutex;

void __retarget_lock_init(_LOCK_T *l);
void __retarget_lock_init_recursive(_LOCK_T *l);
void __retarget_lock_close(_LOCK_T l);
void __retarget_lock_close_recursive(_LOCK_T l);
int __retarget_lock_try_acquire(_LOCK_T l);
int __retarget_lock_try_acquire_recursive(_LOCK_T l);
void __retarget_lock_acquire(_LOCK_T l);
void __retarget_lock_acquire_recursive(_LOCK_T l);
void __retarget_lock_release(_LOCK_T l);
void __retarget_lock_release_recursive(_LOCK_T l);

#endif
