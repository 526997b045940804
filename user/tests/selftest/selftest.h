/* The selftest program: its tests and the child-task roles they spawn
 * (copies of this program started with a role as the spawn argument). */
#ifndef USER_SELFTEST_H
#define USER_SELFTEST_H

#include <stdint.h>
#include "testlib.h"

/* Spawn argument: low 8 bits the role, the rest role-specific; 0 is the
 * program itself. */
enum { ROLE_NONE = 0, ROLE_ECHO, ROLE_PROBE, ROLE_HOG = 4, ROLE_SHARE, ROLE_SLEEPER, ROLE_FAULT };

/* A user test returns 0 (passed), UTEST_SKIP with the reason in why (the
 * machine lacks what it needs: counted as skipped, not passed), or another
 * nonzero value with why filled (failed). */
#define UTEST_SKIP 2
/* The frame quota a copy of this program needs to start, with room: its
 * image (user.ld's __image_start .. __image_end: about 66 pages on
 * RISC-V, 80 on x86-64, growing with the tests) and 32 more for its page
 * tables, stack, heap and a thread's stack. */
extern char __image_start[], __image_end[];
#define SELF_CHILD_FRAMES \
	((long)(((uintptr_t)__image_end - (uintptr_t)__image_start + 4095) / 4096) + 32)
int child_main(long arg);

/* Exploit-style isolation tests (selftest names sec_*). */
int sec_sched_stress(char *why);
int sec_kill_mid_ipc(char *why);
/* Spawn this program with role arg, quota word and cap give; wait for it and
 * drop its task cap. 0 with the exit status in *st, or the error. */
long spawn_wait(uint64_t arg, long quota, long give, long *st);

/* Child roles of the sec_* tests (roles.c), numbered apart from the
 * list above so either can grow. */
enum { ROLE_SEC_THREADS = 64, ROLE_SEC_EPS, ROLE_SEC_PT, ROLE_SEC_CONSOLE, ROLE_SEC_IPC_STORM };
/* ROLE_SEC_PT reports through a frame the parent gives it, mapped at
 * SEC_PT_SHARE_VA in the child: these are indexes of longs in it. */
enum { SEC_PT_STATE, SEC_PT_TXNS, SEC_PT_LO, SEC_PT_HI, SEC_PT_ERR,
       SEC_PT_LO0,       /* usage before the transaction that was refused */
       SEC_PT_OP,        /* the op it named (-1: the reservation of the whole) */
       SEC_PT_REFUSED,   /* its ops refused when applied one at a time after */
       SEC_PT_SPURIOUS,  /* 1 if all of them fit one at a time after */
       SEC_PT_LO1,       /* usage right after the refusal */
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
/* Frame grants bind their mappings (sec_grants.c). */
int sec_ro_frame_protect(char *why);
int sec_clone_noshare(char *why);
/* Priority is an authority (sec_prio.c). */
int sec_prio_mcp(char *why);
/* A call waiting for its reply ends when its endpoint dies (sec_ipc.c). */
int sec_ep_death_reply(char *why);
/* Region transactions apply every op or none (txn_tests.c). */
int txn_map_exist(char *why);
int txn_supply_move(char *why);
int txn_supply_refused(char *why);
int txn_supply_bad(char *why);
int txn_supply_huge(char *why);
int txn_supply_charge(char *why);
int txn_map(char *why);
int txn_mark(char *why);
int txn_unmap(char *why);
int txn_mark_invalid(char *why);
int txn_mark_pager(char *why);
int txn_mark_swapped(char *why);
int txn_protect(char *why);
int txn_age(char *why);
int txn_clean(char *why);
int txn_evict(char *why);
int txn_query(char *why);
int txn_overlay(char *why);
int txn_model(char *why);
/* A dead task's frame charges go to its parent (sec_charge.c). */
int sec_dead_charge(char *why);
/* IPC with timeouts (plat_ipc.c). */
int plat_recv_timeout(char *why);
/* Death notices (plat_death.c) and their child roles. */
enum { ROLE_DEATH_CHILD = 120, ROLE_DEATH_WATCHER };
int death_role(long arg);
int plat_death_notice(char *why);
int plat_client_dies_mid_fault(char *why);
/* A CSpace that grows (plat_cspace.c); its child's role, numbered apart
 * from the lists above. */
enum { ROLE_PLAT_CSPACE = 200, ROLE_PLAT_SPAWN, ROLE_PLAT_THREADS };
/* Arguments and handed caps at spawn (plat_spawn.c). */
int plat_spawn_args(char *why);
int plat_spawn_child(int argc, char **argv);
/* Many threads made and ended, their kernel stacks back (plat_threads.c). */
int plat_threads_many(char *why);
int plat_threads_child(void);
int plat_caps_2000(char *why);
int plat_cspace_child(void);
/* libpager and the file pager at scale and at their edges (plat_pager.c);
 * its clients' roles (the high bits of ROLE_PP_MANY's: its threads). */
enum { ROLE_PP_FILE = 208, ROLE_PP_RACE, ROLE_PP_TOUCH, ROLE_PP_MANY };
int plat_pager_role(long arg);
int plat_file_4096_shared(char *why);
int plat_pager_racing(char *why);
int plat_pager_deferred_death(char *why);
int plat_pager_1000_deferred(char *why);
int plat_pager_async_deferred(char *why);

int pg_fault_message(char *why);
int pg_fault_kill_reply(char *why);
int pg_fault_garbage_reply(char *why);
int pg_fault_ep_rights(char *why);
int pg_reply_not_waiting(char *why);
int pg_pager_gone(char *why);
int pg_uaccess_pager(char *why);
int pg_task_create(char *why);
/* async_tests.c */
int async_fault_notice(char *why);
int async_reverse_order(char *why);
int async_supply_wakes_all(char *why);
int async_same_page(char *why);
int async_pager_gone(char *why);
int async_fault_kill(char *why);
int async_kill_waiter(char *why);
int async_setf_rules(char *why);
/* Region ops for pagers, page rights, frame sharing, COW fork
 * (mmops_tests.c, selftest names mm_*). */
enum { ROLE_MM_TOUCH = 80 };
int mm_touch_child(long arg);
/* A ROLE_MM_TOUCH child: its task, the endpoint its server receives on,
 * a region cap over its space. child_start (frames of quota, its server
 * on hart `hart`, -1 any): 0 or the error; child_end: its exit status
 * (killed first if kill), slots freed. mt_call: one MT_* command at va
 * (value val) to it: 0 and the word read in *out (may be NULL), or the
 * IPC error. */
enum { MT_READ = 1, MT_WRITE, MT_EXIT, MT_SPIN };
struct child { long task, ep, rc; };
long child_start(struct child *ch, int hart, long frames);
long child_end(struct child *ch, int kill);
long mt_call(long ep, uint64_t cmd, uint64_t va, uint64_t val, uint64_t *out);
/* Memory objects (mobj_tests.c, selftest names mobj_*). */
int mobj_anon_shared(char *why);
int mobj_pager_fault(char *why);
int mobj_range_ops(char *why);
int mobj_bad_input(char *why);
int mobj_teardown(char *why);
int mobj_cost(char *why);
/* Asynchronous object faults (mobj_async_tests.c, selftest names mobj_async_*). */
int mobj_async_notice(char *why);
int mobj_async_two_tasks(char *why);
int mobj_async_supply_range(char *why);
int mobj_async_ep_gone(char *why);
int mobj_async_kill_waiter(char *why);
int mobj_async_ops(char *why);
int mobj_async_bad_flags(char *why);


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

/* Devices for user-space drivers (dev_tests.c, selftest names dev_*)
 * and the driver role dev_reset_on_death spawns. */
enum { ROLE_DEV_DRIVER = 230 };
int dev_driver_role(void);
int dev_list(char *why);
int dev_caps_all_or_nothing(char *why);
int dev_map_mmio(char *why);
int dev_map_refused(char *why);
int dev_clone(char *why);
int dev_dma_addr(char *why);
int dev_reset_on_death(char *why);
/* Interrupts as messages (dev_irq.c, selftest names dev_irq_*) and the
 * binder child of dev_irq_binder_death. */
enum { ROLE_DEV_IRQ_BINDER = 232 };
int dev_irq_binder_role(long arg);
int dev_irq_bind_rules(char *why);
int dev_irq_message(char *why);
int dev_irq_binder_death(char *why);

/* Dirty and residency tracking for pagers (dirty_tests.c). */
int mm_dirty_bitmap(char *why);

#endif
