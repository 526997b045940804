/* Programs started with arguments and handed caps (SYS_TASK_SPAWN's
 * spawn_ext): the child sees its argv and its own module, holds exactly
 * the kernel and console caps it was handed, with the rights it was
 * handed; a malformed extension is refused and changes nothing. */
#include "ulib.h"
#include "selftest.h"

#define FAIL(...) do { snprintf(why, 160, __VA_ARGS__); return 1; } while (0)
#define CK(c, ...) do { if (!(c)) FAIL(__VA_ARGS__); } while (0)

/* The child: argv must be "one", "--two", "3" and we must be a copy of
 * our parent's program; the kernel cap (slot 2) must carry R_READ only,
 * so spawning is refused; the console cap must write. Exit 0, or the
 * number of the check that failed. */
int plat_spawn_child(int argc, char **argv)
{
	static const char *want[] = { "one", "--two", "3" };
	if (argc != 3 || argv[3])
		return 10;
	for (int i = 0; i < 3; i++)
		if (strcmp(argv[i], want[i]))
			return 11 + i;
	struct cap_info ci;
	if (cap_info(SLOT_KERNEL, &ci) || ci.type != CAP_KERNEL || ci.rights != R_READ)
		return 20;
	if (dbg(DBG_NCPUS, 0, 0) < 1)
		return 21;                           /* R_READ: queries work */
	if (task_spawn(self_module(), ROLE_NONE, slot_alloc(), 32, SLOT_NONE) != -E_PERM)
		return 22;                           /* no R_CONTROL: no spawning */
	if (cap_info(SLOT_CONSOLE, &ci) || ci.type != CAP_CONSOLE || sys_puts("", 0) < 0)
		return 30;
	return 0;
}

static long spawn_ext_raw(long role, long dst, const struct spawn_ext *e)
{
	return sc7(SYS_TASK_SPAWN, SLOT_KERNEL, self_module(), role, dst, QUOTA(SELF_CHILD_FRAMES + 2 * THREAD_KSTACK_FRAMES, 2, 1, 0), SLOT_NONE,
		   (long)e);
}

int plat_spawn_args(char *why)
{
	struct kcounters before;
	settled_counters(&before);
	long kro = slot_alloc(), task = slot_alloc(), ep = slot_alloc();
	CK(cap_mint(SLOT_KERNEL, kro, R_READ, 0, 0, 0) == 0 && ep_create(ep) == 0, "setup");
	static const char args[] = "one\0--two\0" "3";
	struct spawn_ext e = { .args = args, .args_len = sizeof args, .kernel = kro, .console = SLOT_CONSOLE };
	CK(spawn_ext_raw(ROLE_PLAT_SPAWN, task, &e) == 0, "spawn with arguments");
	long st = task_wait(task);
	cap_delete(task);
	CK(st == 0, "child: check %ld failed (10-13 argv, 20-22 kernel cap, 30 console)", st);

	/* Malformed: each refused before anything is made. */
	char many[2 * (SPAWN_ARGC_MAX + 1)];
	for (int i = 0; i < SPAWN_ARGC_MAX + 1; i++)
		many[2 * i] = 'a', many[2 * i + 1] = 0;
	static char big[SPAWN_ARGS_MAX + 1];
	struct { struct spawn_ext e; long want; const char *what; } bad[] = {
		{ { args, sizeof args - 1, SLOT_NONE, SLOT_NONE }, -E_INVAL, "last string not ended" },
		{ { big, sizeof big, SLOT_NONE, SLOT_NONE }, -E_INVAL, "over SPAWN_ARGS_MAX" },
		{ { many, sizeof many, SLOT_NONE, SLOT_NONE }, -E_INVAL, "over SPAWN_ARGC_MAX strings" },
		{ { (const char *)8, 4, SLOT_NONE, SLOT_NONE }, -E_FAULT, "unreadable strings" },
		{ { args, sizeof args, ep, SLOT_NONE }, -E_BADCAP, "an endpoint as the kernel cap" },
		{ { args, sizeof args, SLOT_NONE, kro }, -E_BADCAP, "a kernel cap as the console" },
	};
	for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		long r = spawn_ext_raw(ROLE_PLAT_SPAWN, task, &bad[i].e);
		struct cap_info ci;
		CK(r == bad[i].want, "%s: %ld, want %ld", bad[i].what, r, bad[i].want);
		CK(cap_info(task, &ci) == -E_BADCAP, "%s: left a task cap", bad[i].what);
	}
	long r = sc7(SYS_TASK_SPAWN, SLOT_KERNEL, self_module(), ROLE_PLAT_SPAWN, task, QUOTA(SELF_CHILD_FRAMES + 2 * THREAD_KSTACK_FRAMES, 2, 1, 0),
		     SLOT_NONE, 8);
	CK(r == -E_FAULT, "unreadable spawn_ext: %ld", r);
	slot_drop(&kro);
	slot_drop(&ep);
	slot_release(task);
	return pg_counters_back(&before, 1, why);
}
