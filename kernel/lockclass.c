/* The lock classes of lockclass.h: one object per line of its table. They
 * exist in every build (a few bytes of rodata), so a lock's initialiser
 * names a real class whether or not the checker is built in. */
#include "lockclass.h"

#define LOCK_CLASS_DEFINE(id, nm, rk, fl) \
	const struct lock_class lock_class_##id = { nm, rk, fl };
LOCK_CLASSES(LOCK_CLASS_DEFINE)
