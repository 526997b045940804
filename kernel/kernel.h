/* Boot-wide state and the entry points entry.S calls. */
#ifndef KERNEL_KERNEL_H
#define KERNEL_KERNEL_H

#include <stdint.h>

enum mm_mode { MM_ADV, MM_RW, MM_VMA };

struct boot_config {
	int paging_levels;          /* table levels of the paging mode running (arch_paging_name) */
	enum mm_mode mm;
	const char *command;        /* after " -- ", or NULL for the shell */
	uint64_t kernel_as_token;   /* selects the kernel page table (arch_as_token) */
	unsigned ablate;            /* ABLATE_*: scalability measures turned off to measure them */
};

/* ablate=LIST (comma separated): turn one of the kernel's scalability
 * measures off, to measure what it buys (docs/performance.md). Behaviour
 * stays correct either way. */
#define ABLATE_MKLOCK    0x1u  /* "mklock": region transactions decode under mk_lock */
#define ABLATE_LATEFLUSH 0x2u  /* "lateflush": commits flush before dropping their locks */
#define ABLATE_PREFAULT  0x4u  /* "prefault": faults take their frame under the PT lock */
#define ABLATE_IPIFLUSH  0x8u  /* "ipiflush": user TLB shootdown by SBI RFENCE, frames freed at once */

extern struct boot_config boot_config;

const char *paging_name(int levels);
const char *mm_name(enum mm_mode m);

/* Parse /chosen/bootargs (see bootargs.c): paging=sv39|sv48|sv57, mm=adv|rw|vma,
 * timer=sbi|sstc, ablate=LIST, failalloc=N, then optionally "-- command line". Unknown words are reported in
 * warn (a message or "") and otherwise ignored. Returns 0 or -E_INVAL for
 * a malformed known option (also reported in warn). `args` is modified:
 * the command points into it. */
struct bootargs {
	int paging_levels;          /* 0 = not requested */
	int mm_set;
	enum mm_mode mm;
	char *command;              /* NULL = interactive */
	int timer_sstc;             /* timer=sstc: program stimecmp directly */
	unsigned ablate;            /* ABLATE_* */
	int failalloc_set;          /* failalloc=N given */
	unsigned long failalloc;    /* N: the allocation to fail, 0 = count only */
	unsigned long failalloc_burst; /* B: how many in a row from N (1) */
};
int bootargs_parse(char *args, struct bootargs *out, char *warn, int warnlen);

/* Per-hart trap set-up (stvec). */
void trap_init_hart(void);

void kmain(uint64_t hartid, uint64_t dtb_pa);
void secondary_main(uint64_t hartid, void *cpu);

#endif
