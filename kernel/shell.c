/* Interactive console shell: line editing with echo and backspace over the
 * SBI console, polling between timer ticks with wfi. */
#include "cmd.h"
#include "printk.h"
#include "kstring.h"
#include "sbi.h"
#include "riscv.h"

#define LINE_MAX 256

/* Read one line into buf (NUL-terminated, without the newline). */
static void read_line(char *buf, int size)
{
	int n = 0;
	for (;;) {
		int c = sbi_console_getc();
		if (c < 0) {
			/* Nothing typed: sleep until the next interrupt (tick). */
			wfi();
			continue;
		}
		if (c == '\r' || c == '\n') {
			console_write("\n", 1);
			buf[n] = 0;
			return;
		}
		if (c == 0x7f || c == 0x08) {
			if (n > 0) {
				n--;
				console_write("\b \b", 3);
			}
			continue;
		}
		if (c == 0x15) {            /* ^U: kill the line */
			while (n > 0) {
				n--;
				console_write("\b \b", 3);
			}
			continue;
		}
		if (c < 0x20 || c > 0x7e || n >= size - 1)
			continue;
		buf[n++] = (char)c;
		char ch = (char)c;
		console_write(&ch, 1);
	}
}

int shell_run(void)
{
	char line[LINE_MAX];
	irq_enable();
	for (;;) {
		console_write("patina> ", 8);
		read_line(line, sizeof line);
		int st = cmd_run_line(line);
		if (st == CMD_STATUS_POWEROFF)
			return 0;
	}
}
