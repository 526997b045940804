/* In-kernel command table; init's user shell reaches it through
 * SYS_DEBUG DBG_KCMD. KCMD places a
 * descriptor in the .kcmds.* linker section. */
#ifndef KERNEL_CMD_H
#define KERNEL_CMD_H

struct kcmd {
	const char *name;
	const char *help;
	int (*fn)(int argc, char **argv);   /* returns the exit status */
};

#define KCMD(cname, helptext) \
	static int kcmd_fn_##cname(int argc, char **argv); \
	static const struct kcmd kcmd_desc_##cname \
		__attribute__((used, section(".kcmds." #cname), aligned(8))) = \
		{ #cname, helptext, kcmd_fn_##cname }; \
	static int kcmd_fn_##cname(int argc __attribute__((unused)), \
				   char **argv __attribute__((unused)))

#define CMD_STATUS_UNKNOWN 127
/* Status poweroff/exit return (init's shell then ends). */
#define CMD_STATUS_POWEROFF (-1000)

/* Split `line` (modified in place) at spaces and run the command. Empty
 * lines return 0. Unknown names print "shell: unknown command: <name>" and
 * return 127. */
int cmd_run_line(char *line);

/* First / next descriptor, for help. */
const struct kcmd *cmd_first(void);
const struct kcmd *cmd_end(void);

#endif
