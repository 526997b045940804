/* Programs by name: find a boot module, start it with arguments. */
#include "ulib.h"

long module_find(const char *name)
{
	char buf[64];
	for (long i = 0;; i++) {
		long n = sc6(SYS_DEBUG, SLOT_KERNEL, DBG_NAME, (long)DBG_NAME_MODULE << 32 | i,
			     (long)buf, sizeof buf, 0);
		if (n == -E_NOENT)
			return -E_NOENT;
		if (n < 0)
			return n;
		if (!strcmp(buf, name))
			return i;
	}
}

long program_spawn(long module, int argc, char **argv, long quota, long dst)
{
	return program_spawn_give(module, argc, argv, quota, dst, SLOT_NONE, 1);
}

/* Needs: argv strings fit SPAWN_ARGS_MAX together. Hands over the
 * console cap of SLOT_CONSOLE, and the kernel cap of SLOT_KERNEL when
 * `kernel`, when this task holds them. */
long program_spawn_give(long module, int argc, char **argv, long quota, long dst, long give,
			int kernel)
{
	char block[SPAWN_ARGS_MAX];
	size_t n = 0;
	if (argc > SPAWN_ARGC_MAX)
		return -E_INVAL;
	for (int i = 0; i < argc; i++) {
		size_t l = strlen(argv[i]) + 1;
		if (n + l > sizeof block)
			return -E_INVAL;
		memcpy(block + n, argv[i], l);
		n += l;
	}
	struct cap_info ci;
	struct spawn_ext ext = {
		.args = block, .args_len = n,
		.kernel = kernel && cap_info(SLOT_KERNEL, &ci) == 0 && ci.type == CAP_KERNEL ?
			  SLOT_KERNEL : SLOT_NONE,
		.console = cap_info(SLOT_CONSOLE, &ci) == 0 && ci.type == CAP_CONSOLE ? SLOT_CONSOLE : SLOT_NONE,
	};
	return sc7(SYS_TASK_SPAWN, SLOT_KERNEL, module, 0, dst, quota, give, (long)&ext);
}

int prog_usage(const char *text)
{
	printf("usage: %s\n", text);
	return 2;
}
