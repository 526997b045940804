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

#endif
