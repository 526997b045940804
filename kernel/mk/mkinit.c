/* Microkernel start: set up user address spaces, the reaper, and init
 * (boot module 0) with the kernel cap; then this hart becomes an idle
 * hart like the others. init's exit status is the machine's. */
#include "mk.h"
#include "panic.h"
#include "printk.h"
#include "frame.h"
#include "kstring.h"
#include "harts.h"
#include "cmd.h"

const char *mk_command;

int mk_harts_init(void)
{
	int err = sched_init_harts();
	return err ? err : auth_init_harts();
}

/* A kernel built without user programs (an ISA whose user side is not
 * built yet) has no init and no shell: the command line runs here, in a
 * kernel thread, through the kernel's command table (cmd.h), and its
 * status is the machine's as init's would be. Without a command there is
 * no interactive shell to offer: status 1. */
static void kernel_command_main(void *arg)
{
	static char line[256];
	const char *command = arg;
	int st = 1;
	if (command && strlen(command) < sizeof line) {
		strlcpy(line, command, sizeof line);
		st = cmd_run_line(line);
		if (st == CMD_STATUS_POWEROFF)
			st = 0;
	} else if (command) {
		printk("patina: command line too long for the kernel's command table\n");
	} else {
		printk("patina: no interactive shell without user programs\n");
	}
	printk("patina: exit %d\n", st);
	machine_poweroff(st != 0);
}

void mk_start(const char *command)
{
	mk_command = command;
	int err = uvm_init();
	if (err)
		panic("user memory set-up failed (%d)", err);
	reaper_start();
	/* Before init: the lines its drivers bind. */
	err = irq_init();
	if (err)
		printk("patina: no memory for the interrupt-line table: device interrupts off\n");
	if (nboot_modules < 1) {
		printk("patina: no user programs in this build: running the command in the kernel\n");
		if (!kthread_create(kernel_command_main, (void *)command, -1))
			panic("cannot start the kernel command thread");
		sched_idle_loop();
	}
	/* Init gets three quarters of free memory, every task and endpoint
	 * but itself, and every thread but a few kept for kernel threads; its
	 * children are carved out of that, so no task can exhaust a pool
	 * beyond what init chose to give it. */
	struct quota q = { .frames = (long)(frame_free_count() * 3 / 4),
			   .threads = MAX_THREADS - KTHREADS_RESERVED,
			   .eps = MAX_ENDPOINTS, .tasks = MAX_TASKS - 1, .mcp = PRIO_USER_MAX };
	struct task *init;
	struct spawned sp;
	err = task_spawn_module(NULL, 0, 0, NULL, &q, 1, &init, &sp);
	if (!err)
		err = task_start(&sp);
	if (err)
		panic("cannot start init (%d)", err);
	sched_idle_loop();
}
