/* System call dispatch (numbers and registers: abi/patina/syscall.h).
 * Each handler decodes first (all caps and arguments checked under
 * mk_lock) and changes state only once nothing can fail. */
#include "mobj.h"
#include "mk.h"
#include "region_supply.h"
#include "pagewait.h"
#include "kstring.h"
#include "printk.h"
#include "cmd.h"
#include "ktest.h"
#include "frame.h"
#include "arch.h"
#include "kernel.h"
#include "timer.h"
#include "shootdown.h"
#include "rcu.h"
#include "smp.h"
#include "failalloc.h"

#define A(i) uf_arg(&uf->tf, i)

/* Does t hold, in slot, a cap of this type with these rights? 0 or the
 * lookup error. A lookup only: t's CSpace lock, not mk_lock (console
 * output and debug queries never wait for cap or lifecycle work). */
int has_cap(struct task *t, long slot, int type, unsigned rights)
{
	int err = 0;
	unsigned long f = spin_lock_irqsave(&t->cspace_lock);
	cap_lookup(t, slot, type, rights, &err);
	spin_unlock_irqrestore(&t->cspace_lock, f);
	return err;
}

/* The console is a capability: write needs R_WRITE, read R_READ. */
static long sys_puts(struct task *t, long slot, uint64_t ubuf, uint64_t len)
{
	char buf[128];
	int err = has_cap(t, slot, CAP_CONSOLE, R_WRITE);
	if (err)
		return err;
	if (len > (1UL << 20))
		return -E_INVAL;
	uint64_t done = 0;
	while (done < len) {
		size_t n = len - done < sizeof buf ? len - done : sizeof buf;
		if (copy_from_user(buf, ubuf + done, n))
			return done ? (long)done : -E_FAULT;
		console_write(buf, n);
		done += n;
	}
	return (long)len;
}

static long sys_cap_copy_mint(struct task *t, long src, long dst, int mint, unsigned rights,
			      uint64_t badge, uint64_t lo, uint64_t hi)
{
	int err = 0;
	unsigned long f = spin_lock_irqsave(&mk_lock);
	struct cap *s = cap_lookup(t, src, 0, 0, &err);
	if (s)
		err = cap_slot_check(t, dst);
	if (!err && s->type == CAP_REPLY)
		err = -E_PERM;   /* one shot, bound to one call: never copied */
	if (!err) {
		struct cap nc = *s;
		if (mint) {
			if (s->type != CAP_REGION && s->type != CAP_MMIO) {
				lo = s->lo;
				hi = s->hi;
			}
			if (!cap_derive_ok(s, rights, lo, hi))
				err = -E_PERM;
			else if (badge && (s->type != CAP_ENDPOINT || s->badge))
				err = -E_INVAL;   /* badge once, endpoints only */
			nc.rights = (uint16_t)rights;
			nc.lo = lo;
			nc.hi = hi;
			if (badge)
				nc.badge = badge;
		}
		/* Last: the slot's chunk, if it is not there yet. */
		struct cap *d = err ? NULL : cap_slot_free(t, dst, &err);
		if (d) {
			cap_get_obj(&nc);
			cap_install(d, &nc, s);
		}
	}
	spin_unlock_irqrestore(&mk_lock, f);
	return err;
}

/* Delete or revoke: region transactions authorised by a removed cap have
 * all finished when this returns (the revoke barrier, authority.c). */
static long sys_cap_del(struct task *t, long slot, int revoke)
{
	int err = 0;
	auth_write_lock();
	unsigned long f = spin_lock_irqsave(&mk_lock);
	struct cap *c = cap_lookup(t, slot, 0, 0, &err);
	if (c) {
		if (revoke)
			cap_revoke(c);
		else
			cap_delete(c);
	}
	spin_unlock_irqrestore(&mk_lock, f);
	auth_write_unlock();
	return err;
}

static long sys_cap_info(struct task *t, long slot, uint64_t uout)
{
	int err = 0;
	struct cap_info ci = { 0 };
	unsigned long f = spin_lock_irqsave(&mk_lock);
	struct cap *c = cap_lookup(t, slot, 0, 0, &err);
	if (c) {
		ci.type = c->type;
		ci.rights = c->rights;
		ci.badge = c->badge;
		ci.lo = c->lo;
		ci.hi = c->hi;
		if (c->type == CAP_TASK) {
			/* What the task uses of its frame quota, and the quota;
			 * its CSpace extent. */
			struct task *k = c->o.task;
			ci.lo = (uint64_t)(quota_frames_used(k) +
					   (long)__atomic_load_n(&k->as.nr_frames, __ATOMIC_RELAXED));
			ci.hi = (uint64_t)k->frame_quota;
			ci.badge = (uint64_t)cspace_extent(k);
			/* Objects: each field saturates at the most a quota word carves. */
			int th = k->thread_quota - k->threads_used, ep = k->ep_quota - k->eps_used,
			    tk = k->task_quota - k->tasks_used;
			ci.objects = (uint64_t)QUOTA(0, th > QUOTA_THREADS_MAX ? QUOTA_THREADS_MAX : th, ep > 255 ? 255 : ep,
						   tk > 255 ? 255 : tk);
		}
		if (c->type == CAP_MOBJ)
			mobj_cap_info(c->o.mobj, &ci);
	}
	spin_unlock_irqrestore(&mk_lock, f);
	if (err)
		return err;
	return copy_to_user(uout, &ci, sizeof ci);
}

static long sys_ep_create(struct task *t, long dst)
{
	unsigned long f = spin_lock_irqsave(&mk_lock);
	struct cchunk *spare = NULL;
	int err = cap_slot_check(t, dst);
	if (!err && t->eps_used >= t->ep_quota)
		err = -E_QUOTA;
	if (!err)
		err = cspace_prepare(t, dst, &spare);   /* the slot's chunk, published below */
	if (!err) {
		struct endpoint *e = ep_alloc(t);
		if (!e) {
			err = -E_NOMEM;
			cspace_unprepare(t, spare);
		} else {
			struct cap nc = { .type = CAP_ENDPOINT, .rights = R_SEND | R_RECV | R_GRANT,
					  .o.ep = e };
			cap_install(cspace_commit(t, dst, spare), &nc, NULL);
		}
	}
	spin_unlock_irqrestore(&mk_lock, f);
	return err;
}

static long sys_frame_alloc(struct task *t, long dst)
{
	unsigned long f = spin_lock_irqsave(&mk_lock);
	int err = cap_slot_check(t, dst);
	spin_unlock_irqrestore(&mk_lock, f);
	if (err)
		return err;
	uint64_t pa;
	err = uvm_frame_alloc(t, &pa);
	if (err)
		return err;
	f = spin_lock_irqsave(&mk_lock);
	struct cap *d = cap_slot_free(t, dst, &err);   /* another thread may have raced */
	if (d) {
		struct cap nc = { .type = CAP_FRAME, .rights = R_READ | R_WRITE | R_SHARE, .o.pa = pa };
		cap_install(d, &nc, NULL);
	}
	spin_unlock_irqrestore(&mk_lock, f);
	if (err)
		uvm_frame_put(pa);
	return err;
}

static long sys_thread_create(struct task *t, long tslot, uint64_t pc, uint64_t sp,
			      uint64_t arg, long dst, uint64_t flags)
{
	int err = 0;
	int hart = (int)(flags & 0xffff) - 1;
	int prio = (int)((flags >> 16) & 0xffff);
	if (hart >= (int)ncpus || prio > PRIO_USER_MAX)
		return -E_INVAL;
	unsigned long f = spin_lock_irqsave(&mk_lock);
	struct cap *tc = cap_lookup(t, tslot, CAP_TASK, R_CONTROL, &err);
	if (tc)
		err = cap_slot_check(t, dst);
	struct task *target = tc ? tc->o.task : NULL;
	struct thread *th = NULL;
	struct cchunk *spare = NULL;
	if (!err && target->state != TASK_ALIVE)
		err = -E_DEAD;
	else if (!err && prio > target->mcp)
		err = -E_PERM;      /* priority is carved like a quota: no level above the task's mcp */
	else if (!err && !(err = cspace_prepare(t, dst, &spare)) &&   /* dst's chunk, published below */
		 !(th = thread_alloc(target, &err)))     /* the target's thread quota */
		cspace_unprepare(t, spare);
	if (th) {
		err = 0;
		th->affinity = hart;
		th->prio = prio;
		struct cap nc = { .type = CAP_THREAD, .rights = R_ALL, .o.thread = th, .gen = th->gen };
		cap_install(cspace_commit(t, dst, spare), &nc, NULL);
		th->refs++;     /* ours until it is started: the cap may go meanwhile */
	}
	spin_unlock_irqrestore(&mk_lock, f);
	if (err)
		return err;
	thread_start_user(th, pc, sp, arg);
	f = spin_lock_irqsave(&mk_lock);
	th->refs--;
	thread_put(th);
	spin_unlock_irqrestore(&mk_lock, f);
	return 0;
}

/* Needs mk_lock. The caps a spawn hands over besides `give`: the
 * kernel and console caps named in a (SLOT_NONE: none), each of its type.
 * 0 or the lookup's error; *kc / *cc the caps (NULL for none). */
static int spawn_handed_caps(struct task *t, const struct spawn_args *a, struct cap **kc,
			     struct cap **cc)
{
	int err = 0;
	*kc = *cc = NULL;
	if (a->kernel != SLOT_NONE && !(*kc = cap_lookup(t, a->kernel, CAP_KERNEL, 0, &err)))
		return err;
	if (a->console != SLOT_NONE && !(*cc = cap_lookup(t, a->console, CAP_CONSOLE, 0, &err)))
		return err;
	return 0;
}

/* A new task from a boot module (kernel cap, R_CONTROL) with quotas
 * carved from ours; `give` (any transferable cap) lands in its slot 4;
 * uext (struct spawn_ext, or 0) adds argv and the kernel and console
 * caps. Everything is checked before the task is made. */
static long sys_task_spawn(struct task *t, long kslot, long module, uint64_t arg, long dst,
			   long quota, long give, uint64_t uext)
{
	struct quota q;
	int err = quota_decode(t, quota, &q);
	if (err)
		return err;
	struct spawn_args args;
	err = spawn_args_fetch(uext, &args);
	if (err)
		return err;
	unsigned long f = spin_lock_irqsave(&mk_lock);
	struct cap *kc = cap_lookup(t, kslot, CAP_KERNEL, R_CONTROL, &err);
	if (kc)
		err = cap_slot_check(t, dst);
	struct cap *gc = NULL, *hk, *hc;
	if (!err && give != SLOT_NONE && (gc = cap_lookup(t, give, 0, 0, &err)) &&
	    !cap_transferable(gc))
		err = -E_PERM;
	if (!err)
		err = spawn_handed_caps(t, &args, &hk, &hc);
	spin_unlock_irqrestore(&mk_lock, f);
	if (err)
		return err;
	struct task *child;
	struct spawned sp;
	err = task_spawn_module(t, (int)module, arg, &args, &q, 0, &child, &sp);
	if (err)
		return err;
	/* Both caps exist before the child runs: it cannot die and be reaped
	 * before we hold it, and finds its given cap from its first step. */
	f = spin_lock_irqsave(&mk_lock);
	struct cap *d = NULL, *g = NULL;
	err = cap_slot_check(t, dst);
	if (!err && give != SLOT_NONE && (g = cap_lookup(t, give, 0, 0, &err)) &&
	    !cap_transferable(g))
		err = -E_PERM;
	if (!err)
		err = spawn_handed_caps(t, &args, &hk, &hc);
	if (!err)
		d = cap_slot_free(t, dst, &err);    /* last: dst's chunk, if need be */
	if (d) {
		struct cap nc = { .type = CAP_TASK, .rights = R_ALL, .o.task = child };
		cap_get_obj(&nc);
		cap_install(d, &nc, NULL);
		if (g && child->cspace[SLOT_GIVEN].type == CAP_NULL) {
			cap_get_obj(g);
			cap_install(&child->cspace[SLOT_GIVEN], g, g);
		}
		/* Kernel and console caps name no object: a plain copy. */
		if (hk && child->cspace[SLOT_KERNEL].type == CAP_NULL)
			cap_install(&child->cspace[SLOT_KERNEL], hk, hk);
		if (hc && child->cspace[SLOT_CONSOLE].type == CAP_NULL)
			cap_install(&child->cspace[SLOT_CONSOLE], hc, hc);
	} else {
		task_exit(child, EXIT_KILLED);
	}
	spin_unlock_irqrestore(&mk_lock, f);
	task_start(&sp);     /* a killed child's thread just exits */
	return err;
}

static long sys_task_wait(struct task *t, long slot)
{
	int err = 0;
	irq_disable();
	spin_lock(&mk_lock);
	struct cap *c = cap_lookup(t, slot, CAP_TASK, 0, &err);
	struct task *target = c ? c->o.task : NULL;
	if (target == t)
		err = -E_INVAL;
	if (err) {
		spin_unlock(&mk_lock);
		irq_enable();
		return err;
	}
	target->refs++;     /* keep the struct while we sleep on it */
	while (target->state != TASK_DEAD) {
		struct thread *me = cur_thread();
		if (me->killed)
			break;
		me->state = T_BLOCKED;
		me->block = B_WAIT;
		me->wait_task = target;
		me->rq_next = target->waiters;
		target->waiters = me;
		spin_unlock(&mk_lock);
		sched_block();
		spin_lock(&mk_lock);
		me->wait_task = NULL;
	}
	long st = target->state == TASK_DEAD ? target->exit_status : -E_DEAD;
	target->refs--;
	task_put(target);
	spin_unlock(&mk_lock);
	irq_enable();
	return st;
}

static long sys_task_kill(struct task *t, long slot)
{
	int err = 0;
	unsigned long f = spin_lock_irqsave(&mk_lock);
	struct cap *c = cap_lookup(t, slot, CAP_TASK, R_CONTROL, &err);
	if (c)
		task_exit(c->o.task, EXIT_KILLED);
	spin_unlock_irqrestore(&mk_lock, f);
	return err;
}

static long sys_thread_kill(struct task *t, long slot)
{
	int err = 0;
	unsigned long f = spin_lock_irqsave(&mk_lock);
	struct cap *c = cap_lookup(t, slot, CAP_THREAD, R_CONTROL, &err);
	if (c) {
		struct thread *th = cap_thread(c);
		if (!th) {
			err = -E_DEAD;
		} else {
			thread_kill_locked(th);
			if (th->state == T_RUNNING && th != cur_thread() && th->last_cpu >= 0)
				ipi_send((uint32_t)th->last_cpu);
		}
	}
	spin_unlock_irqrestore(&mk_lock, f);
	if (!err && c && cur_thread()->killed)
		thread_exit();     /* it was us */
	return err;
}

static long sys_task_region(struct task *t, long slot, long dst)
{
	int err = 0;
	unsigned long f = spin_lock_irqsave(&mk_lock);
	struct cap *c = cap_lookup(t, slot, CAP_TASK, R_CONTROL, &err);
	struct cap *d = c ? cap_slot_free(t, dst, &err) : NULL;
	if (d) {
		struct cap nc = { .type = CAP_REGION, .rights = R_QUERY | R_MAP | R_MARK | R_UNMAP | R_PROTECT | R_READ | R_WRITE | R_EXEC,
				  .o.task = c->o.task, .lo = PAGE_SIZE, .hi = user_top };
		cap_get_obj(&nc);
		cap_install(d, &nc, c);
	}
	spin_unlock_irqrestore(&mk_lock, f);
	return err;
}

/* Debug and test hooks: queries need the kernel cap with R_READ, running
 * kernel tests or commands R_WRITE. */
/* DBG_NAME: copy a boot module's name, or an in-kernel command's
 * "name\0help\0", to the user buffer ubuf of size bytes. */
static long dbg_name(uint64_t which, uint64_t ubuf, uint64_t size)
{
	uint32_t kind = (uint32_t)(which >> 32), i = (uint32_t)which;
	const char *name, *help = NULL;
	if (kind == DBG_NAME_MODULE) {
		if (i >= (uint32_t)nboot_modules)
			return -E_NOENT;
		name = boot_modules[i].name;
	} else if (kind == DBG_NAME_KCMD) {
		if (i >= (uint64_t)(cmd_end() - cmd_first()))
			return -E_NOENT;
		name = cmd_first()[i].name;
		help = cmd_first()[i].help;
	} else {
		return -E_INVAL;
	}
	size_t n = strlen(name) + 1, h = help ? strlen(help) + 1 : 0;
	if (n + h > size)
		return -E_INVAL;
	if (copy_to_user(ubuf, name, n) || (h && copy_to_user(ubuf + n, help, h)))
		return -E_FAULT;
	return (long)(n + h);
}

static long sys_debug(struct task *t, long kslot, long op, uint64_t a, uint64_t b, uint64_t c)
{
	int write = op == DBG_KTEST || op == DBG_KCMD || op == DBG_HOLD_MKLOCK ||
		    op == DBG_FAILALLOC;
	/* The time counter's rate is what any program needs to turn rdtime
	 * into time: no authority asked for it. */
	int err = op == DBG_TIMEBASE ? 0 : has_cap(t, kslot, CAP_KERNEL, write ? R_WRITE : R_READ);
	if (err)
		return err;
	unsigned long f;
	char buf[256];
	switch (op) {
	case DBG_KTEST: {
		buf[0] = 0;
		if (a && (copy_from_user(buf, a, 32) || (buf[31] = 0)))
			return -E_FAULT;
		/* Kernel tests expect the kernel address space, as at boot. */
		int counts[3];
		unsigned long fl = irq_save();
		sched_as_write(this_rq(), NULL, boot_config.kernel_as_token);
		irq_restore(fl);
		counts[1] = ktest_run_each(buf, &counts[0], &counts[2]);
		/* Back to our address space the scheduler's way, on whichever
		 * hart a test left us: its hart_mask bit set there. */
		fl = irq_save();
		sched_activate(cur_thread());
		irq_restore(fl);
		long c2[3] = { counts[0], counts[1], counts[2] };
		return copy_to_user(b, c2, sizeof c2);
	}
	case DBG_KCMD:
		if (b >= sizeof buf)
			return -E_INVAL;
		if (copy_from_user(buf, a, b))
			return -E_FAULT;
		buf[b] = 0;
		return cmd_run_line(buf);
	case DBG_COUNTERS: {
		struct kcounters kc = { 0 };
		shootdown_settle();    /* frames parked behind a shootdown count as free */
		f = spin_lock_irqsave(&mk_lock);
		kc.free_frames = frame_free_count() + uvm_pooled_frames();
		kc.tasks = tasks_live();
		kc.threads = threads_live();
		kc.endpoints = eps_live();
		kc.frame_objs = (unsigned long)uvm_frames_in_use();
		kc.caps = caps_live();
		kc.notices = notices_live();
		kc.pagewaits = pagewait_live();
		kc.pagewait_threads = pagewait_threads();
		kc.txn_overdraws = __atomic_load_n(&mm_txn_overdraws, __ATOMIC_RELAXED);
		mobj_counts(&kc.mobjs, &kc.mobj_maps, &kc.mobj_pages);
		kc.kernel_faults = 0;  /* an unexpected kernel trap panics: none survive */
		for (uint32_t i = 0; i < ncpus; i++)
			if (__atomic_load_n(&cpus[i].rcu_next, __ATOMIC_RELAXED) ||
			    __atomic_load_n(&cpus[i].rcu_wait, __ATOMIC_RELAXED))
				kc.rcu_busy++;
		spin_unlock_irqrestore(&mk_lock, f);
		return copy_to_user(a, &kc, sizeof kc);
	}
	case DBG_FAILALLOC: {
		long k = failalloc_stop();
		return k < 0 ? -E_INVAL : k;
	}
	case DBG_TIMEBASE:
		return (long)timer_timebase();
	case DBG_NAME:
		return dbg_name(a, b, c);
	case DBG_NCPUS:
		return ncpus;
	case DBG_CMDLINE: {
		const char *s = mk_command ? mk_command : "";
		size_t n = strlen(s) + 1;
		if (n > b)
			return -E_INVAL;
		failalloc_arm();    /* the workload starts: count from here */
		return copy_to_user(a, s, n) ? -E_FAULT : (long)(n - 1);
	}
	case DBG_MMINFO:
		return boot_config.paging_levels | ((long)boot_config.mm << 8);
	case DBG_UFAULTS:
		return (long)uaccess_faults_fixed;
	case DBG_HARTID:
		return a < __atomic_load_n(&ncpus, __ATOMIC_ACQUIRE) ? (long)cpus[a].hartid : -E_INVAL;
	case DBG_HOLD_MKLOCK: {
		/* Shows what does not wait for mk_lock: whatever moves *b while
		 * this hart holds it (interrupts off) got there without it. The
		 * hart holds it on the kernel's address space, out of every
		 * task's TLB-shootdown set: a shootdown of ours would otherwise
		 * wait for an acknowledgement this hart cannot give with
		 * interrupts off (the SBI fallback, after 20 ms), and that is
		 * not what is measured here. */
		/* With a count to wait for (a's high half), the hold ends as
		 * soon as *b has moved that far: a test judged by events, not
		 * by how much a loaded host lets the other harts run in a
		 * fixed window; the time (a's low half) is then a hang guard.
		 * *b is polled through the direct map (this hart is on the
		 * kernel's token), its frame held by a reference taken under
		 * the page's cursor lock so no unmap frees it meanwhile. */
		uint64_t us = a & 0xffffffffu, need = a >> 32;
		long c0, c1;
		if (us > 10000000 || (b & 7))
			return -E_INVAL;
		if (copy_from_user(&c0, b, sizeof c0))
			return -E_FAULT;
		uint64_t pa = 0;
		if (need) {
			uint64_t page = b & ~(PAGE_SIZE - 1);
			struct mm_cursor cur;
			struct mm_info in;
			if (mm_lock(&cur, &t->as, page, page + PAGE_SIZE))
				return -E_FAULT;
			if (mm_query(&cur, page, &in) == MM_OK && in.kind == MM_MAPPED &&
			    uvm_frame_valid(in.pa)) {
				pa = in.pa;
				uvm_frame_get(pa);
			}
			mm_release(&cur);
			if (!pa)
				return -E_FAULT;
		}
		f = spin_lock_irqsave(&mk_lock);
		sched_as_write(this_rq(), NULL, boot_config.kernel_as_token);
		if (need) {
			/* Counted from when the lock is held: what moved while
			 * this hart waited for it proves nothing. */
			volatile long *w = phys_to_virt(pa + (b & (PAGE_SIZE - 1)));
			c0 = *w;
			uint64_t end = time_after_us(us);
			while ((uint64_t)(*w - c0) < need && arch_time_now() < end)
				cpu_relax();
		} else {
			udelay(us);
		}
		sched_activate(cur_thread());
		int e = copy_from_user(&c1, b, sizeof c1);
		spin_unlock_irqrestore(&mk_lock, f);
		if (pa)
			uvm_frame_put(pa);
		return e ? -E_FAULT : c1 - c0;
	}
	case DBG_AS_HARTS: {
		long n = 0;
		for (uint32_t i = 0; i < ncpus; i++)
			n += hartmask_test(&t->hart_mask, i);
		return n;
	}
	}
	return -E_INVAL;
}

void syscall_dispatch(struct uframe *uf)
{
	struct thread *me = cur_thread();
	struct task *t = me->task;
	long nr = (long)uf_get(&uf->tf, UREG_SYSNO);
	long r;
	switch (nr) {
	case SYS_PUTS: r = sys_puts(t, A(0), A(1), A(2)); break;
	case SYS_GETC:
		r = has_cap(t, A(0), CAP_CONSOLE, R_READ);
		if (!r) {
			int c = arch_console_getc();
			r = c < 0 ? -E_AGAIN : c;
		}
		break;
	case SYS_EXIT: {
		unsigned long f = spin_lock_irqsave(&mk_lock);
		task_exit(t, (int)A(0));
		spin_unlock_irqrestore(&mk_lock, f);
		thread_exit();
	}
	case SYS_THREAD_EXIT: thread_exit();
	case SYS_YIELD: sched_yield(); r = 0; break;
	case SYS_CAP_COPY: r = sys_cap_copy_mint(t, A(0), A(1), 0, 0, 0, 0, 0); break;
	case SYS_CAP_MINT: r = sys_cap_copy_mint(t, A(0), A(1), 1, (unsigned)A(2), A(3), A(4), A(5)); break;
	case SYS_CAP_DELETE: r = sys_cap_del(t, A(0), 0); break;
	case SYS_CAP_REVOKE: r = sys_cap_del(t, A(0), 1); break;
	case SYS_CAP_INFO: r = sys_cap_info(t, A(0), A(1)); break;
	case SYS_EP_CREATE: r = sys_ep_create(t, A(0)); break;
	case SYS_FRAME_ALLOC: r = sys_frame_alloc(t, A(0)); break;
	case SYS_THREAD_CREATE: r = sys_thread_create(t, A(0), A(1), A(2), A(3), A(4), A(5)); break;
	case SYS_TASK_SPAWN: r = sys_task_spawn(t, A(0), A(1), A(2), A(3), A(4), A(5), A(6)); break;
	case SYS_TASK_WAIT: r = sys_task_wait(t, A(0)); break;
	case SYS_TASK_KILL: r = sys_task_kill(t, A(0)); break;
	case SYS_TASK_REGION: r = sys_task_region(t, A(0), A(1)); break;
	case SYS_CALL: case SYS_SEND: case SYS_RECV: case SYS_REPLY: case SYS_REPLY_RECV:
	case SYS_REPLY_SAVE: case SYS_REPLY_CAP: case SYS_RECV_TIMED: case SYS_CALL_TIMED:
		r = sys_ipc(uf, nr);
		break;
	case SYS_REGION_TXN: r = sys_region_txn(t, A(0), A(1), A(2), A(3), A(4)); break;
	case SYS_DEBUG: r = sys_debug(t, A(0), A(1), A(2), A(3), A(4)); break;
	case SYS_THREAD_SELF_HART: r = this_cpu()->index; break;
	case SYS_THREAD_KILL: r = sys_thread_kill(t, A(0)); break;
	case SYS_FAULT_EP_SET: r = sys_fault_ep_set(t, A(0), A(1), 0); break;
	case SYS_FAULT_EP_SETF: r = sys_fault_ep_set(t, A(0), A(1), A(2)); break;
	case SYS_FAULT_KILL: r = sys_fault_kill(t, A(0), A(1)); break;
	case SYS_TASK_CREATE: r = sys_task_create(t, A(0), A(1), A(2)); break;
	case SYS_REGION_CLONE: r = sys_region_clone(t, A(0), A(1), A(2), A(3), A(4)); break;
	case SYS_TASK_NOTIFY: r = sys_task_notify(t, A(0), A(1)); break;
	case SYS_REGION_BITMAP: r = sys_region_bitmap(t, A(0), A(1), A(2), A(3), A(4)); break;
	case SYS_REGION_SUPPLY: r = sys_region_supply(t, A(0), A(1), A(2), A(3), A(4), A(5)); break;
	case SYS_REGION_ALLOC_CONTIG: r = sys_region_alloc_contig(t, A(0), A(1), A(2), A(3)); break;
	case SYS_IRQ_BIND: r = sys_irq_bind(t, A(0), A(1)); break;
	case SYS_IRQ_ACK: r = sys_irq_ack(t, A(0)); break;
	case SYS_DEVICE_INFO: r = sys_device_info(t, A(0), A(1), A(2)); break;
	case SYS_DEVICE_CAPS: r = sys_device_caps(t, A(0), A(1), A(2), A(3)); break;
	case SYS_DMA_ADDR: r = sys_dma_addr(t, A(0), A(1)); break;
	case SYS_MOBJ_CREATE: r = sys_mobj_create(t, A(0), A(1), A(2), A(3)); break;
	case SYS_MOBJ_SUPPLY: r = sys_mobj_supply(t, A(0), A(1), A(2), A(3), A(4)); break;
	case SYS_MOBJ_OP: r = sys_mobj_op(t, A(0), A(1), A(2), A(3)); break;
	default: r = -E_NOSYS; break;
	}
	if (r != RET_KEEP)
		uf_set(&uf->tf, UREG_RET, (uint64_t)r);
}
