/* The lock classes of lockclass.h: one object per line of its table. They
 * exist in every build (a few bytes of rodata): every lock points at its
 * class, for the checker and for the lock statistics (its stat slot). */
#include "lockclass.h"

#define LOCK_CLASS_DEFINE(id, nm, rk, fl) \
	const struct lock_class lock_class_##id = { nm, rk, fl, LOCK_CLASS_IDX_##id };
LOCK_CLASSES(LOCK_CLASS_DEFINE)
