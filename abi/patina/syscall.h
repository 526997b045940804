/* System call ABI.
 *
 * A call has a number and up to seven arguments a0..a6 (a6 only where a
 * call says so). The kernel returns a0 = 0 or a negative E_* code (or a
 * non-negative value where a call says so); IPC calls also return message
 * words in a1..a4, the sender's badge in a5 and cap-transfer info in a6.
 * All slot arguments are indexes into the calling task's CSpace. The
 * registers, per ISA (user/lib/arch/<arch>/uarch.h holds the inlines):
 *
 * RISC-V: ecall with the number in a7 and a0..a6 in the registers of the
 * same names; results in a0..a6. The temporaries t0..t6 are not kept (the
 * kernel does not save them on a system call: it is that much cheaper);
 * every other register is preserved.
 *
 * x86-64: syscall with the number in rax and a0..a6 in rdi, rsi, rdx, r10,
 * r8, r9, r12; result a0 in rax, and an IPC call's a1..a4 in rsi, rdx,
 * r10, r8, a5 (the badge) in r9, a6 (cap-transfer info) in r12. Every
 * argument register may come back changed (it holds what the call
 * returns there, or whatever it held); the instruction itself destroys
 * rcx and r11; rbx, rbp, r13, r14, r15 and rsp are preserved. User code
 * keeps to the general registers (it is built -mgeneral-regs-only): the
 * kernel keeps no SSE or x87 state per thread. The thread pointer is the
 * FS base, which user code sets with wrfsbase (the kernel enables
 * CR4.FSGSBASE and keeps the FS base per thread); the time counter is the
 * TSC, whose rate DBG_TIMEBASE reports.
 *
 * Every call validates all its arguments and caps before it changes any
 * state (decode, then perform): a failing call changes nothing. */
#ifndef PATINA_SYSCALL_H
#define PATINA_SYSCALL_H

enum patina_sys {
	SYS_PUTS = 1,          /* (console, buf, len) -> len written; console cap with R_WRITE */
	SYS_GETC,              /* (console) -> char, or -E_AGAIN; console cap with R_READ */
	SYS_EXIT,              /* (status): the whole task ends; does not return */
	SYS_THREAD_EXIT,       /* (): only this thread ends */
	SYS_YIELD,             /* () */
	SYS_CAP_COPY,          /* (src, dst) */
	SYS_CAP_MINT,          /* (src, dst, rights, badge, lo, hi): fewer rights; region: sub-range */
	SYS_CAP_DELETE,        /* (slot) */
	SYS_CAP_REVOKE,        /* (slot): delete every cap derived from it (anywhere) */
	SYS_CAP_INFO,          /* (slot, struct cap_info *) */
	SYS_EP_CREATE,         /* (dst) */
	SYS_FRAME_ALLOC,       /* (dst): one zeroed 4 KiB frame, charged to the quota */
	SYS_THREAD_CREATE,     /* (task, pc, sp, arg, dst, prio<<16 | (hart+1)) hart 0 = any;
	                        * prio 0..PRIO_USER_MAX (E_INVAL), at most the task's mcp (E_PERM);
	                        * E_QUOTA: no thread quota, or no frame quota for its kernel stack */
	SYS_TASK_SPAWN,        /* (kernel, module, arg, dst, quota, give; a6 = struct spawn_ext *
	                        * or 0): new task from a boot module (kernel cap with R_CONTROL);
	                        * quota = QUOTA(...) below, carved from the caller's; a copy of
	                        * cap `give` (or SLOT_NONE) lands in its slot 4 (kernel and reply
	                        * caps cannot be given there); spawn_ext adds arguments and the
	                        * kernel and console caps (below) */
	SYS_TASK_WAIT,         /* (task) -> exit status once the task is dead (EXIT_* below) */
	SYS_TASK_KILL,         /* (task) */
	SYS_TASK_REGION,       /* (task, dst): region cap for the task's whole user range */
	SYS_CALL,              /* (ep, w0..w3, xfer): send, wait for the reply */
	SYS_SEND,              /* (ep, w0..w3, xfer): send (blocks until received) */
	SYS_RECV,              /* (ep, recv_slot): -> words, badge in a5 */
	SYS_REPLY,             /* (w0..w3 in a1..a4): answer the last call received */
	SYS_REPLY_RECV,        /* (ep, w0..w3, recv_slot): reply then wait again */
	SYS_REGION_TXN,        /* (region, lo, hi, struct region_op *, n) -> n, all applied
	                        * (or -E_* and none: cap.h ROP_NOT_DONE) */
	SYS_DEBUG,             /* (kernel, op, a, b, c): DBG_* below */
	SYS_THREAD_SELF_HART,  /* () -> logical index of the hart running the caller */
	SYS_REPLY_SAVE,        /* (dst): move the pending reply (last call received) into a reply cap */
	SYS_REPLY_CAP,         /* (reply, w0..w3): answer through a saved reply cap (one shot: it is used up) */
	SYS_THREAD_KILL,       /* (thread): end that thread (it exits at its next kernel exit) */
	SYS_FAULT_EP_SET,      /* (task or thread cap with R_CONTROL, endpoint cap with R_SEND or
	                        * SLOT_NONE): faults the kernel cannot resolve become calls on that
	                        * endpoint (patina/pager.h); a thread's own setting beats its task's */
	SYS_TASK_CREATE,       /* (self task cap with R_CONTROL, dst, quota): an empty task (no code,
	                        * no thread) with quotas carved from ours; slots 0 and 1 as at spawn */
	SYS_REGION_CLONE,      /* (src region, dst region, lo, hi, struct clone_stats *): copy
	                        * [lo, hi) of src's address space into dst's copy-on-write
	                        * (src: R_QUERY | R_MAP, dst: R_MAP; both ranges must hold it) */
	SYS_RECV_TIMED,        /* as SYS_RECV, a6 = timeout in microseconds (1..3600 s, else
	                        * E_INVAL): E_TIMEDOUT if no message came first (10 ms resolution) */
	SYS_CALL_TIMED,        /* as SYS_CALL, a6 = timeout: E_TIMEDOUT if no reply came first (the
	                        * call is then over: a late reply finds no waiter) */
	SYS_TASK_NOTIFY,       /* (task cap with R_CONTROL, endpoint cap with R_SEND or SLOT_NONE):
	                        * when that task dies (exit, kill, trap) the kernel sends one
	                        * MSG_DEATH message (below) on the endpoint with the cap's badge.
	                        * One registration per (task, calling task): calling again
	                        * replaces its endpoint and badge, SLOT_NONE cancels it (E_NOENT if
	                        * there is none). Up to NOTIFY_WATCHERS_MAX tasks may watch one task
	                        * (E_BUSY beyond). Each registration counts as one endpoint against
	                        * the caller's endpoint quota (E_QUOTA; E_NOMEM: the kernel's pool
	                        * is full) until its message is received, or it is cancelled, or
	                        * nobody can receive on its endpoint any more (then it is dropped).
	                        * E_DEAD: the task is not alive (registering only) */
	SYS_REGION_BITMAP,     /* (region, lo, hi, uint64_t *buf, flags): residency and
	                        * accessed/dirty bitmaps of [lo, hi); see <patina/cap.h> */
	SYS_REGION_SUPPLY,     /* (dst region, dst_va, src region, src_va, npages, prot): move
	                        * npages (1..SUPPLY_MAX_PAGES) mapped frames of the caller's own
	                        * range into dst's, no copy (cap.h, docs/pagers.md) */
	SYS_REGION_ALLOC_CONTIG, /* (region over the caller's own space, va, order, prot): 2^order
	                        * (0..9) physically contiguous zeroed frames aligned to their
	                        * size, charged to the caller, mapped 4 KiB each at va */
	SYS_DEVICE_INFO,       /* (kernel, index, struct device_info *): patina/device.h */
	SYS_DEVICE_CAPS,       /* (kernel, index, mmio dst, irq dst): patina/device.h */
	SYS_IRQ_BIND,          /* (irq, endpoint or SLOT_NONE): patina/device.h */
	SYS_IRQ_ACK,           /* (irq): patina/device.h */
	SYS_DMA_ADDR,          /* (mmio with R_DMA, frame) -> physical address: patina/device.h */
	SYS_FAULT_EP_SETF,     /* (target, endpoint or SLOT_NONE, flags): SYS_FAULT_EP_SET with
	                        * FAULT_EP_* flags (patina/pager.h); E_INVAL for unknown bits */
	SYS_FAULT_KILL,        /* (region with R_MAP, va): refuse an asynchronous fault: every thread
	                        * waiting on that page dies as for FAULT_KILL (patina/pager.h) */
	SYS_MOBJ_CREATE,       /* (npages, dst, ep or SLOT_NONE, flags MOBJ_*): patina/mobj.h */
	SYS_MOBJ_SUPPLY,       /* (mobj, offset, src region, src_va, npages): patina/mobj.h */
	SYS_MOBJ_OP,           /* (mobj, op, offset, npages): patina/mobj.h */
	SYS_COUNT
};

/* SYS_TASK_SPAWN's extension (a6). The new task's first thread starts at
 * the ELF entry with a0 = arg, a1 = argc, a2 = argv (a NULL-ended array of
 * the strings, on the top page of its stack), a3 = its own module index
 * (so a program can spawn copies of itself); on x86-64 in rdi, rsi, rdx,
 * r10 (the system-call argument registers: crt0 moves r10 to rcx for C),
 * rsp below argv. Without
 * the extension argc is 0 and argv points at a NULL. A thread made with
 * SYS_THREAD_CREATE starts at pc with sp and a0 = arg (x86-64: rip, rsp,
 * rdi).
 * args: argc strings back to back, each NUL-terminated, args_len bytes in
 * all (at most SPAWN_ARGS_MAX, at most SPAWN_ARGC_MAX strings; else E_INVAL).
 * kernel: a kernel cap of the caller (or SLOT_NONE); a copy lands in the
 * child's SLOT_KERNEL. It is how a parent delegates spawning and debug
 * authority to a program it starts; kernel caps never travel by IPC or
 * `give`. console: a console cap (or SLOT_NONE), copied to SLOT_CONSOLE. */
struct spawn_ext {
	const char *args;
	unsigned long args_len;
	long kernel;
	long console;
};
#define SPAWN_ARGS_MAX 512
#define SPAWN_ARGC_MAX 32

/* Exit statuses (SYS_TASK_WAIT). A task that calls SYS_EXIT ends with the
 * status it gives; the kernel ends tasks with these, the same numbers on
 * every ISA. */
#define EXIT_KILLED 137        /* SYS_TASK_KILL; an empty task nobody names; a spawn undone */
/* A task killed by an exception one of its threads took that nobody
 * resolved (no fault endpoint, a pager that answered FAULT_KILL or is gone,
 * out of memory in a page fault) ends with EXIT_TRAP(kind): */
enum patina_trap {
	TRAP_READ_FAULT = 1,   /* a load the address space refused (unmapped, no read right) */
	TRAP_WRITE_FAULT,      /* a store or atomic the address space refused */
	TRAP_EXEC_FAULT,       /* an instruction fetch the address space refused */
	TRAP_ILLEGAL,          /* an illegal or privileged instruction */
	TRAP_MISALIGNED,       /* a misaligned access or jump the machine does not do */
	TRAP_BREAKPOINT,       /* a breakpoint instruction */
	TRAP_OTHER,            /* any other exception */
};
#define EXIT_TRAP(kind)    (128 + (int)(kind))
#define EXIT_IS_TRAP(st)   ((st) > 128 && (st) <= 128 + TRAP_OTHER)

/* A spawned task's quota, carved from its parent's: frames (data frames,
 * page-table pages and metadata, and each live thread's kernel stack of
 * THREAD_KSTACK_FRAMES frames), and the kernel objects it may hold at
 * once: threads, endpoints and child tasks (each child also carves its own
 * quota from ours). Every field must fit: frames < 2^32, threads <=
 * QUOTA_THREADS_MAX, others < 256. Threads take bits 32..39 (low) and
 * 59..62 (high). */
#define THREAD_KSTACK_FRAMES 4
#define QUOTA_THREADS_MAX  4095
#define QUOTA(frames, threads, endpoints, tasks) \
	((long)(((unsigned long)(frames) & 0xffffffffUL) | ((unsigned long)(threads) & 0xff) << 32 | \
		((unsigned long)(endpoints) & 0xff) << 40 | ((unsigned long)(tasks) & 0xff) << 48 | \
		((unsigned long)(threads) >> 8 & 0xf) << 59))
#define QUOTA_FRAMES(q)    ((long)((unsigned long)(q) & 0xffffffffUL))
#define QUOTA_THREADS(q)   ((int)(((unsigned long)(q) >> 32 & 0xff) | ((unsigned long)(q) >> 59 & 0xf) << 8))
#define QUOTA_ENDPOINTS(q) ((int)(((unsigned long)(q) >> 40) & 0xff))
#define QUOTA_TASKS(q)     ((int)(((unsigned long)(q) >> 48) & 0xff))
/* The child's maximum controlled priority (mcp): the highest priority any
 * of its threads may get (SYS_THREAD_CREATE refuses more with E_PERM).
 * Bits 56..58 hold mcp + 1; 0 means "the caller's own". An mcp above the
 * caller's is refused (E_PERM). User priorities are 0..PRIO_USER_MAX;
 * kernel threads run above all of them. Bit 63 must be 0 (E_INVAL). */
#define PRIO_USER_MAX      3
#define QUOTA_MCP(q, mcp)  ((long)((unsigned long)(q) | (((unsigned long)(mcp) + 1) & 0x7) << 56))
#define QUOTA_MCP_FIELD(q) ((unsigned)(((unsigned long)(q) >> 56) & 0x7))
#define QUOTA_VALID(q)     (((unsigned long)(q) >> 63) == 0)

/* SYS_DEBUG operations (kernel cap: R_READ for the queries, R_WRITE for
 * DBG_KTEST and DBG_KCMD). */
enum patina_dbg {
	DBG_KTEST = 1,         /* (prefix, counts[3]) run in-kernel tests: passed, failed, skipped */
	DBG_KCMD,              /* (line, len) run an in-kernel command -> its status */
	DBG_COUNTERS,          /* (struct kcounters *) */
	DBG_NCPUS,             /* () -> harts online */
	DBG_CMDLINE,           /* (buf, size) -> the boot command line for init's shell */
	DBG_UFAULTS,           /* () -> user-copy faults the kernel recovered from */
	DBG_MMINFO,            /* () -> paging levels | mm mode (0 adv, 1 rw, 2 vma) << 8 */
	DBG_HARTID,            /* (hart) -> the hart id of logical hart `hart` (0..harts online - 1) */
	DBG_AS_HARTS,          /* () -> harts with the caller's address space loaded now (TLB-shootdown targets) */
	DBG_HOLD_MKLOCK,       /* (us | need << 32, long *counter) hold mk_lock, interrupts off, for
	                        * us <= 10000000 microseconds, or with need > 0 only until *counter
	                        * has moved by need (us then a hang guard) -> how far *counter
	                        * moved meanwhile (needs R_WRITE) */
	DBG_FAILALLOC,         /* () stop counting kernel allocations (boot argument failalloc=N)
	                        * -> how many were counted, -E_INVAL without failalloc= (needs R_WRITE) */
	DBG_TIMEBASE,          /* () -> the time counter's frequency in Hz (rdtime ticks per second;
	                        * RISC-V: from the device tree, 10 MHz on QEMU virt, 1 MHz on
	                        * sifive_u; x86-64: the TSC's rate, as the kernel measured it); any
	                        * task may ask, the slot is not looked at */
	DBG_NAME,              /* (kind << 32 | index, buf, size) -> bytes written: kind DBG_NAME_MODULE,
	                        * the boot module's name; DBG_NAME_KCMD, an in-kernel command's
	                        * "name\0help\0". -E_NOENT past the last, -E_INVAL if size is short */
};

enum { DBG_NAME_MODULE = 0, DBG_NAME_KCMD = 1 };

/* Kernel resource counters, to check that nothing leaks. */
struct kcounters {
	unsigned long free_frames;
	unsigned long tasks, threads, endpoints, frame_objs, caps;
	unsigned long kernel_faults;   /* unexpected kernel-mode traps survived: always 0 */
	unsigned long rcu_busy;        /* harts with frees still deferred by RCU */
	unsigned long notices;         /* death notices registered or waiting to be received */
	unsigned long txn_overdraws;   /* region transactions that needed frames they had not
	                                * planned for (mm_txn_overdraws): always 0 */
	unsigned long pagewaits;       /* pages threads wait on in asynchronous faults (pager.h) */
	unsigned long pagewait_threads; /* threads waiting on them */
	unsigned long mobjs;           /* memory objects alive */
	unsigned long mobj_maps;       /* their mapping records */
	unsigned long mobj_pages;      /* object pages held (frames in page indexes) */
};

/* IPC: number of message words in registers, and "no cap" for xfer slots. */
#define IPC_WORDS   4
#define SLOT_NONE   (-1L)

/* a6 after a receive: bit 0 set when a cap arrived in recv_slot. */
#define IPC_GOT_CAP 1

/* A death notice (SYS_TASK_NOTIFY), received by SYS_RECV / SYS_REPLY_RECV /
 * SYS_RECV_TIMED like a SYS_SEND (nothing to reply to): w0 = MSG_DEATH,
 * w1 = the task's exit status (what SYS_TASK_WAIT returns: its SYS_EXIT
 * status, EXIT_KILLED or EXIT_TRAP(kind)), w2 = the task's id (the kernel's
 * task number, for logs: not a capability), w3 = 0; a5 = the badge of the
 * endpoint cap given at registration, a6 = 0 (no cap). It is sent once the
 * task is dead (its threads gone, its caps deleted: SYS_TASK_WAIT returns
 * at once). A receive takes a waiting death notice before any waiting
 * sender. */
#define MSG_DEATH           0xd1edd1edUL
#define NOTIFY_WATCHERS_MAX 8

#endif
