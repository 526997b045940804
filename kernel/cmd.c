#include "cmd.h"
#include "kstring.h"
#include "printk.h"

extern const struct kcmd __kcmds_start[], __kcmds_end[];

const struct kcmd *cmd_first(void) { return __kcmds_start; }
const struct kcmd *cmd_end(void) { return __kcmds_end; }

#define MAX_ARGS 16

int cmd_run_line(char *line)
{
	char *argv[MAX_ARGS + 1];
	int argc = split_args(line, argv, MAX_ARGS);
	if (argc < 0) {
		printk("shell: too many arguments (max %d)\n", MAX_ARGS);
		return 2;
	}
	if (argc == 0)
		return 0;
	for (const struct kcmd *c = __kcmds_start; c < __kcmds_end; c++)
		if (!strcmp(c->name, argv[0]))
			return c->fn(argc, argv);
	printk("shell: unknown command: %s\n", argv[0]);
	return CMD_STATUS_UNKNOWN;
}
