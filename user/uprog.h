/* The built-in programs of the user shell and the child-task roles. */
#ifndef USER_UPROG_H
#define USER_UPROG_H

#include <stdint.h>

/* Spawn argument: low 8 bits the role, the rest role-specific. */
enum { ROLE_INIT = 0, ROLE_ECHO, ROLE_PROBE, ROLE_FUZZ, ROLE_HOG, ROLE_SHARE, ROLE_SLEEPER, ROLE_FAULT,
       ROLE_BENCH_SRV };

int cmd_selftest(int argc, char **argv);
/* A user test returns 0 (passed), UTEST_SKIP with the reason in why (the
 * machine lacks what it needs: counted as skipped, not passed), or another
 * nonzero value with why filled (failed). */
#define UTEST_SKIP 2
int cmd_sysfuzz(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int bench_ipc_child(long arg);      /* ROLE_BENCH_SRV: bench ipc's server task */
int child_main(long arg);
int fuzz_child(uint64_t arg);
struct kcounters;
void settled_counters(struct kcounters *out);

/* Exploit-style isolation tests (selftest names sec_*). */
int sec_sched_stress(char *why);
int sec_kill_mid_ipc(char *why);
/* Spawn module 0 with role arg, quota word and cap give; wait for it and
 * drop its task cap. 0 with the exit status in *st, or the error. */
long spawn_wait(uint64_t arg, long quota, long give, long *st);

/* Child roles of the sec_* tests (roles.c), numbered apart from the
 * list above so either can grow. */
enum { ROLE_SEC_THREADS = 64, ROLE_SEC_EPS, ROLE_SEC_PT, ROLE_SEC_CONSOLE, ROLE_SEC_IPC_STORM };
/* ROLE_SEC_PT reports through a frame the parent gives it, mapped at
 * SEC_PT_SHARE_VA in the child: these are indexes of longs in it. */
enum { SEC_PT_STATE, SEC_PT_TXNS, SEC_PT_LO, SEC_PT_HI, SEC_PT_ERR,
       SEC_PT_LO0,       /* usage before the transaction that was refused */
       SEC_PT_OP,        /* its first op refused with E_QUOTA */
       SEC_PT_REFUSED,   /* how many of its ops were refused */
       SEC_PT_SPURIOUS,  /* refused ops that fit when retried alone afterwards */
};
enum { SEC_PT_RUNNING = 1, SEC_PT_AT_QUOTA, SEC_PT_BROKEN, SEC_PT_NO_QUOTA };
#define SEC_PT_SHARE_VA 0x3f800000UL
int sec_reply_cap_copy(char *why);
int sec_reply_cap_bound(char *why);
int sec_quota_overflow(char *why);
int sec_kernel_cap(char *why);
int sec_thread_structs(char *why);
int sec_no_kernel_read(char *why);
int sec_object_quota(char *why);
int sec_pt_quota(char *why);
int sec_query_no_pa(char *why);
int sec_wx(char *why);
int sec_console_cap(char *why);
int sec_revoke_region(char *why);
int sec_grant_at_delivery(char *why);
/* Shared by the sec_* files below (sec_util.c): empty a slot and give it
 * back (no-op for -1; *s becomes -1); one region op on the 4 KiB page at
 * va: 0 or its error, the op as it came back in *out (may be NULL). */
struct region_op;
void slot_drop(long *s);
/* rdtime ticks per second: the kernel's timebase (DBG_TIMEBASE), cached. */
uint64_t ticks_per_sec(void);
long txn_one(long region, uint32_t op, uint32_t prot, uint64_t va, int64_t arg,
	     struct region_op *out);
/* Frame grants bind their mappings (sec_grants.c). */
int sec_ro_frame_protect(char *why);
int sec_clone_noshare(char *why);
/* Priority is an authority (sec_prio.c). */
int sec_prio_mcp(char *why);
/* A call waiting for its reply ends when its endpoint dies (sec_ipc.c). */
int sec_ep_death_reply(char *why);
/* A dead task's frame charges go to its parent (sec_charge.c). */
int sec_dead_charge(char *why);
/* IPC with timeouts (plat_ipc.c). */
int plat_recv_timeout(char *why);
/* A CSpace that grows (plat_cspace.c); its child's role, numbered apart
 * from the lists above. */
enum { ROLE_PLAT_CSPACE = 200 };
int plat_caps_2000(char *why);
int plat_cspace_child(void);

/* Fault endpoints and empty tasks (pager_tests.c, selftest names pg_*)
 * and the `pagerkill` command (pagerkill.c). Their child roles: */
enum { ROLE_PG_CLIENT = 96, ROLE_PG_PAGER };
#define PG_CLIENT_VA 0x5b000000UL   /* where a ROLE_PG_CLIENT child faults */
int pg_role(long arg);
long fault_ep_set(long target, long ep);
int pg_counters_back(const struct kcounters *a, int frames, char *why);
int pg_mark_pager(long region, uint64_t va, uint64_t len, uint64_t tag);
int pg_fault_message(char *why);
int pg_fault_kill_reply(char *why);
int pg_fault_garbage_reply(char *why);
int pg_fault_ep_rights(char *why);
int pg_reply_not_waiting(char *why);
int pg_pager_gone(char *why);
int pg_uaccess_pager(char *why);
int pg_task_create(char *why);
int cmd_pagerkill(int argc, char **argv);

/* The swap pager (swappager.c) and swapdemo (swapdemo.c). The client's
 * role is numbered apart from the lists above. */
enum { ROLE_SWAPDEMO = 112 };
int cmd_swapdemo(int argc, char **argv);
int swapdemo_client(uint64_t arg);
struct swap_stats {
	unsigned long faults, zero, in, out, written, spurious, aged, killed, resident;
	uint64_t busy;                    /* timebase ticks spent serving faults */
	long first_err;                   /* why the first killed fault was refused */
	uint64_t err_addr, err_w1, err_w2;
};
typedef int (*swap_msg_fn)(uint64_t badge, const uint64_t w[4], uint64_t reply[4], void *ctx);
enum { SWAP_STOP = 1, SWAP_CLIENT_KILLED = 2 };
long swap_pager_init(long client_region, uint64_t base, unsigned long pages, unsigned long frames);
long swap_pager_fault(const uint64_t w[4]);
long swap_pager_serve(long ep, uint64_t fault_badge, swap_msg_fn other, void *ctx);
void swap_pager_fini(struct swap_stats *st);

/* Region ops for pagers, page rights, frame sharing, COW fork
 * (mmops_tests.c, selftest names mm_*) and the forkdemo program. */
enum { ROLE_MM_TOUCH = 80, ROLE_FORK_CHILD };
int mm_touch_child(long arg);
int forkdemo_child(void);
int cmd_forkdemo(int argc, char **argv);
int mm_cow_fork(char *why);
int mm_protect(char *why);
int mm_unmap_other_hart(char *why);
int mm_unmap_high_hart(char *why);
int mm_pager_ops_confined(char *why);
int mm_bad_input(char *why);
int mm_evict_roundtrip(char *why);
int mm_evict_charge(char *why);
int mm_tlb_targets(char *why);

/* Per-hart address chunks behind mem_map (uva_tests.c, names u_va_*). */
int u_va_reuse(char *why);
int u_va_harts(char *why);
int u_va_steal(char *why);

/* IPC without the global kernel lock (ipc_lock_tests.c). */
int u_ipc_no_mk_lock(char *why);

#endif
