/* init: the first task (boot module 0). It holds the boot caps (slot 2
 * is the kernel cap) and runs the shell: with a boot command line it runs
 * that one line and exits with its status (the kernel then prints
 * "patina: exit <status>" and powers off); without one it reads lines
 * from the console. A line names a shell built-in, a program (a boot
 * module, started with the words as its argv and waited for) or an
 * in-kernel command, in that order. */
#include "ulib.h"
#include "testlib.h"

#define LINE_MAX 256
#define MAX_ARGS 16

static int cmd_help(int argc, char **argv);
static int cmd_echo(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		printf("%s%s", argv[i], i + 1 < argc ? " " : "");
	printf("\n");
	return 0;
}
static int cmd_exit(int argc, char **argv)
{
	unsigned long st = 0;
	if (argc > 1 && parse_ulong(argv[1], &st))
		return 2;
	sys_exit((int)st);
	return 0;
}
static int cmd_counters(int argc, char **argv)
{
	(void)argc, (void)argv;
	struct kcounters kc;
	long r = dbg(DBG_COUNTERS, (uint64_t)&kc, 0);
	if (r)
		return 1;
	printf("free_frames %lu tasks %lu threads %lu endpoints %lu user_frames %lu caps %lu notices %lu\n",
	       kc.free_frames, kc.tasks, kc.threads, kc.endpoints, kc.frame_objs, kc.caps, kc.notices);
	return 0;
}

/* leakcheck CMD [ARGS] [; CMD [ARGS]]...: run the commands, then check
 * that the kernel's frame and object counters (memory objects, their
 * mappings and pages too) are back where they were
 * before (deferred frees get up to 20 s to drain). The shell's own growth
 * is allowed for: frames it holds itself now (thread stacks it keeps, and
 * their page tables; its task's frames in use) need not come back. Caps a
 * failed command left in the shell's CSpace are dropped first (a task or
 * thread they name is killed and, for a task, waited for): the kernel must
 * then free what they held. A command that fails is
 * reported, not a leak; the status is 1 only for a leak. With the boot
 * argument failalloc=N it also stops the kernel's allocation count after
 * the commands and prints it (scripts/oomsweep). */
static int run_line(char *line);
static int cmd_leakcheck(int argc, char **argv)
{
	struct kcounters before, after;
	struct cap_info me0, me;
	settled_counters(&before);
	cap_info(SLOT_SELF_TASK, &me0);
	/* Slots at or above our CSpace extent (cap_info's badge) are empty. */
	static uint64_t had[CSPACE_MAX_SLOTS / 64];
	memset(had, 0, sizeof had);
	for (long s = 0; s < (long)me0.badge && s < CSPACE_MAX_SLOTS; s++)
		if (cap_info(s, &me) == 0 && me.type != CAP_NULL)
			had[s / 64] |= 1UL << (s % 64);
	for (int i = 1; i < argc;) {
		char line[LINE_MAX];
		size_t n = 0;
		int j = i;
		for (; j < argc && strcmp(argv[j], ";"); j++) {
			size_t l = strlen(argv[j]);
			if (n + l + 2 > sizeof line)
				return 2;
			memcpy(line + n, argv[j], l);
			n += l;
			line[n++] = ' ';
		}
		line[n ? n - 1 : 0] = 0;
		char shown[LINE_MAX];
		memcpy(shown, line, n ? n : 1);
		int st = n ? run_line(line) : 0;
		printf("leakcheck: '%s' exited %d\n", shown, st);
		i = j + 1;
	}
	long k = dbg(DBG_FAILALLOC, 0, 0);
	if (k >= 0)
		printf("leakcheck: %ld allocations counted\n", k);
	int dropped = 0;
	cap_info(SLOT_SELF_TASK, &me);
	long extent = (long)me.badge < CSPACE_MAX_SLOTS ? (long)me.badge : CSPACE_MAX_SLOTS;
	for (long s = 0; s < extent; s++) {
		if ((had[s / 64] >> (s % 64) & 1) || cap_info(s, &me) || me.type == CAP_NULL)
			continue;
		if (me.type == CAP_TASK && (me.rights & R_CONTROL)) {
			task_kill(s);
			task_wait(s);
		} else if (me.type == CAP_THREAD && (me.rights & R_CONTROL)) {
			sc1(SYS_THREAD_KILL, s);
		}
		cap_delete(s);
		slot_release(s);
		dropped++;
	}
	if (dropped)
		printf("leakcheck: dropped %d caps the commands left behind\n", dropped);
	uint64_t until = rdtime() + 20 * ticks_per_sec();    /* 20 s */
	for (;;) {
		dbg(DBG_COUNTERS, (uint64_t)&after, 0);
		cap_info(SLOT_SELF_TASK, &me);
		long grew = (long)(me.lo - me0.lo);
		after.free_frames += (unsigned long)grew;
		int same = after.free_frames == before.free_frames &&
			   after.frame_objs >= before.frame_objs &&
			   after.frame_objs - before.frame_objs <= (unsigned long)(grew > 0 ? grew : 0) &&
			   after.tasks == before.tasks &&
			   after.threads == before.threads && after.endpoints == before.endpoints &&
			   after.caps == before.caps && after.notices == before.notices &&
			   after.mobjs == before.mobjs && after.mobj_maps == before.mobj_maps &&
			   after.mobj_pages == before.mobj_pages;
		if (same) {
			printf("leakcheck: counts back\n");
			return 0;
		}
		if (rdtime() > until)
			break;
		uint64_t t = rdtime() + ticks_per_sec() / 10;
		while (rdtime() < t)
			sys_yield();
	}
	printf("leakcheck: LEAK (the shell grew by %ld frames) frames %ld tasks %ld threads %ld endpoints %ld user_frames %ld caps %ld notices %ld"
	       " mobjs %ld mobj_maps %ld mobj_pages %ld\n",
	       (long)(me.lo - me0.lo), (long)(before.free_frames - after.free_frames),
	       (long)(after.tasks - before.tasks),
	       (long)(after.threads - before.threads), (long)(after.endpoints - before.endpoints),
	       (long)(after.frame_objs - before.frame_objs), (long)(after.caps - before.caps),
	       (long)(after.notices - before.notices), (long)(after.mobjs - before.mobjs),
	       (long)(after.mobj_maps - before.mobj_maps), (long)(after.mobj_pages - before.mobj_pages));
	return 1;
}

static const struct ucmd {
	const char *name, *help;
	int (*fn)(int, char **);
} ucmds[] = {
	{ "help", "list commands and programs", cmd_help },
	{ "echo", "print the arguments", cmd_echo },
	{ "counters", "kernel object and frame counters", cmd_counters },
	{ "leakcheck", "leakcheck CMD [; CMD]...: run, then check kernel counters are back", cmd_leakcheck },
	{ "exit", "exit [status]: end init, power off", cmd_exit },
	{ "poweroff", "power off", cmd_exit },
};
#define NCMDS (int)(sizeof ucmds / sizeof ucmds[0])

static int listed(const char *name)
{
	for (int i = 0; i < NCMDS; i++)
		if (!strcmp(ucmds[i].name, name))
			return 1;
	return 0;
}

/* Every name once: built-ins, then programs, then the in-kernel commands
 * that neither shadows. */
static int cmd_help(int argc, char **argv)
{
	if (argc > 1)
		return prog_usage("help");
	(void)argv;
	for (int i = 0; i < NCMDS; i++)
		printf("  %-10s %s\n", ucmds[i].name, ucmds[i].help);
	char buf[128];
	for (long i = 1;; i++) {
		if (sc6(SYS_DEBUG, SLOT_KERNEL, DBG_NAME, (long)DBG_NAME_MODULE << 32 | i, (long)buf,
			sizeof buf, 0) < 0)
			break;
		if (!listed(buf))
			printf("  %-10s program (NAME --help for its usage)\n", buf);
	}
	for (long i = 0;; i++) {
		if (sc6(SYS_DEBUG, SLOT_KERNEL, DBG_NAME, (long)DBG_NAME_KCMD << 32 | i, (long)buf,
			sizeof buf, 0) < 0)
			break;
		if (!listed(buf) && module_find(buf) < 0)
			printf("  %-10s %s (in-kernel)\n", buf, buf + strlen(buf) + 1);
	}
	return 0;
}

/* Start program `module` with argv, carving most of what we have left
 * (a reserve stays for the shell), and wait for it: its exit status. */
#define SHELL_KEEP_FRAMES 256
#define SHELL_KEEP_OBJS   4
static int run_program(long module, int argc, char **argv)
{
	struct cap_info me;
	if (cap_info(SLOT_SELF_TASK, &me))
		return 126;
	long frames = (long)me.hi - (long)me.lo - SHELL_KEEP_FRAMES;
	int th = QUOTA_THREADS(me.objects) - SHELL_KEEP_OBJS, ep = QUOTA_ENDPOINTS(me.objects) - SHELL_KEEP_OBJS,
	    tk = QUOTA_TASKS(me.objects) - 1;
	if (frames < 64 || th < 2 || ep < 1 || tk < 0) {
		printf("shell: too little quota left to start %s\n", argv[0]);
		return 126;
	}
	long slot = slot_alloc();
	if (slot < 0)
		return 126;
	long r = program_spawn(module, argc, argv, QUOTA(frames, th, ep, tk), slot);
	if (r) {
		printf("shell: cannot start %s: %s\n", argv[0], err_name(r));
		slot_release(slot);
		return 126;
	}
	long st = task_wait(slot);
	cap_delete(slot);
	slot_release(slot);
	return (int)st;
}

/* Split line and run it: user built-ins first, then the kernel's command
 * table (which prints "shell: unknown command" and returns 127 itself). */
static int run_line(char *line)
{
	char copy[LINE_MAX];
	size_t len = strlen(line);
	if (len >= LINE_MAX)
		return 2;
	memcpy(copy, line, len + 1);
	char *argv[MAX_ARGS + 1];
	int argc = split_args(line, argv, MAX_ARGS);
	if (argc < 0) {
		printf("shell: too many arguments (max %d)\n", MAX_ARGS);
		return 2;
	}
	if (!argc)
		return 0;
	for (int i = 0; i < NCMDS; i++)
		if (!strcmp(ucmds[i].name, argv[0]))
			return ucmds[i].fn(argc, argv);
	long m = module_find(argv[0]);
	if (m > 0)
		return run_program(m, argc, argv);
	long st = dbg(DBG_KCMD, (uint64_t)copy, len);
	return st == -1000 ? 0 : (int)st;   /* CMD_STATUS_POWEROFF */
}

static void read_line(char *buf, int size)
{
	int n = 0;
	for (;;) {
		long c = sys_getc();
		if (c < 0) {
			sys_yield();
			continue;
		}
		if (c == '\r' || c == '\n') {
			sys_puts("\n", 1);
			buf[n] = 0;
			return;
		}
		if (c == 0x7f || c == 8) {
			if (n > 0) {
				n--;
				sys_puts("\b \b", 3);
			}
			continue;
		}
		if (c < 0x20 || c > 0x7e || n >= size - 1)
			continue;
		buf[n++] = (char)c;
		char ch = (char)c;
		sys_puts(&ch, 1);
	}
}

int main(void)
{
	if (spawn_arg())
		return 2;        /* init runs only as the first task */
	char line[LINE_MAX];
	long n = dbg(DBG_CMDLINE, (uint64_t)line, sizeof line);
	if (n > 0)
		return run_line(line);
	for (;;) {
		printf("patina> ");
		fflush(stdout);
		read_line(line, sizeof line);
		if (!strcmp(line, "poweroff") || !strcmp(line, "exit"))
			return 0;
		run_line(line);
	}
}
