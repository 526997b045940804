/* Fault endpoints: faults the kernel cannot resolve become IPC calls to a
 * user-level pager (abi/patina/pager.h). Not built yet. */
#include "mk.h"

long sys_fault_ep_set(struct task *t, long target, long ep)
{
	(void)t, (void)target, (void)ep;
	return -E_NOSYS;
}
