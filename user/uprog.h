/* The built-in programs of the user shell and the child-task roles. */
#ifndef USER_UPROG_H
#define USER_UPROG_H

#include <stdint.h>

/* Spawn argument: low 8 bits the role, the rest role-specific. */
enum { ROLE_INIT = 0, ROLE_ECHO, ROLE_PROBE, ROLE_FUZZ, ROLE_HOG, ROLE_SHARE, ROLE_SLEEPER, ROLE_FAULT };

int cmd_selftest(int argc, char **argv);
int cmd_sysfuzz(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int child_main(long arg);
int fuzz_child(uint64_t arg);
struct kcounters;
void settled_counters(struct kcounters *out);

/* Exploit-style isolation tests (selftest names sec_*). */
int sec_sched_stress(char *why);
/* Spawn module 0 with role arg, quota word and cap give; wait for it and
 * drop its task cap. 0 with the exit status in *st, or the error. */
long spawn_wait(uint64_t arg, long quota, long give, long *st);

/* Child roles of the sec_* tests (roles.c), numbered apart from the
 * list above so either can grow. */
enum { ROLE_SEC_THREADS = 64, ROLE_SEC_EPS, ROLE_SEC_PT, ROLE_SEC_CONSOLE };
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

#endif
