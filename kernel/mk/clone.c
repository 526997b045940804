/* SYS_REGION_CLONE: copy [lo, hi) of one address space into another
 * copy-on-write (the memory half of fork).
 *
 * Decode checks both region caps (src: R_QUERY | R_MAP, dst: R_MAP), that
 * [lo, hi) is page aligned and inside both caps' ranges, and that the two
 * caps name different address spaces. Then one cursor on each side, taken
 * in a fixed order (the lower task id first), so two clones between the
 * same pair of tasks in opposite directions cannot deadlock.
 *
 * Under the cursors, first validation (nothing changes on failure): the
 * destination range must be empty (E_EXIST), no huge mapped page in the
 * source (E_INVAL; user space never maps any), no page whose
 * permissions the destination cap's R_READ / R_WRITE / R_EXEC do not allow
 * (E_PERM), and no page mapped through a frame cap without R_SHARE
 * (MM_MAP_NOSHARE: E_PERM; that frame's giver allowed one mapping; a
 * memory object's mapping, mapped or not yet, is refused the same way:
 * only ROP_MAP_OBJ makes one, with its mapping record). A
 * device's registers (ROP_MAP of an MMIO cap) are left out: they stay as
 * they are in the source and the destination gets nothing there. Then the source's other mapped pages become copy-on-write (keeping
 * their permissions as the logical ones) and that downgrade is flushed
 * from every hart's TLB BEFORE anything appears in the destination, so no
 * write made after the snapshot can reach a shared frame. Then a walk
 * over the source's used entries only (empty subtrees are skipped by the
 * PT pages' live-entry counts, mm_next_used) shares each COW frame with
 * the destination (one more reference) and copies reserved, pager and
 * swapped statuses as statuses.
 *
 * Quota: PT pages and metadata arrays of the destination are charged to
 * the destination as they are drawn (frames_charge); those the source
 * needs for its COW metadata to the source. Shared frames stay charged to
 * whoever paid for them before; a later COW break allocates the copy for
 * the task that writes. If the destination runs out (E_QUOTA / E_NOMEM)
 * the destination range is emptied again; source pages stay COW (same
 * contents; a write then costs a fault, and no copy when the frame is no
 * longer shared). */
#include "region.h"
#include "pagewait.h"
#include "uvm_frames.h"
#include "devices.h"
#include "mobj.h"
#include <patina/pager.h>

#define MM_RWX (MM_PROT_R | MM_PROT_W | MM_PROT_X)


/* End (exclusive, clipped to hi) of the entry at `level` holding va. */
static uint64_t piece_end(uint64_t va, unsigned level, uint64_t hi)
{
	uint64_t span = PAGE_SIZE << (9 * (level - 1));
	uint64_t end = (va & ~(span - 1)) + span;
	return end > hi || end == 0 ? hi : end;
}

/* Needs the cursor over [lo, hi). mm_make_cow over [lo, hi) but its
 * device pages, which never become COW (a write to a device register
 * must reach the device, and no second space gets them): the pieces
 * between them, each whole 4 KiB pages, so nothing is split. 0 or -E_*
 * (the pieces before the failing one stay COW, as a failed clone leaves
 * the source). */
static int cow_around_devices(struct mm_cursor *cs, uint64_t lo, uint64_t hi)
{
	uint64_t from = lo, va = lo, nx;
	struct mm_info info;
	int err = 0;
	while (!err && va < hi && mm_next_used(cs, va, &nx, NULL) == 1 && nx < hi) {
		mm_query(cs, nx, &info);
		if (info.kind == MM_MAPPED && device_pa(info.pa)) {
			if (nx > from)
				err = err_from_mm(mm_make_cow(cs, from, nx - from));
			from = nx + PAGE_SIZE;
		}
		va = piece_end(nx, info.level, hi);
	}
	if (!err && from < hi)
		err = err_from_mm(mm_make_cow(cs, from, hi - from));
	return err;
}

long sys_region_clone(struct task *t, long src, long dst, uint64_t lo, uint64_t hi, uint64_t ustats)
{
	struct clone_stats st = { 0 };
	if ((lo | hi) & (PAGE_SIZE - 1) || lo >= hi)
		return -E_INVAL;
	/* The report must be writable: checked before anything changes
	 * (never written while a cursor is held: the copy could fault). */
	if (copy_to_user(ustats, &st, sizeof st))
		return -E_FAULT;

	int err = 0;
	auth_read_lock();
	unsigned long f = cspace_decode_lock(t);   /* not mk_lock: region.c */
	struct cap *sc = cap_lookup(t, src, CAP_REGION, R_QUERY | R_MAP, &err);
	struct cap *dc = sc ? cap_lookup(t, dst, CAP_REGION, R_MAP, &err) : NULL;
	struct task *S = NULL, *D = NULL;
	if (dc) {
		S = sc->o.task;
		D = dc->o.task;
		if (lo < sc->lo || hi > sc->hi || lo < dc->lo || hi > dc->hi)
			err = -E_RANGE;
		else if (S == D)
			err = -E_INVAL;
	}
	unsigned allowed = dc ? (prot_to_mm(prot_of_rights(dc->rights)) & MM_RWX) : 0;
	cspace_decode_unlock(t, f);
	if (!err && !(err = task_txn_try_begin(S)) && (err = task_txn_try_begin(D)))
		task_txn_end(S);
	if (err) {
		auth_read_unlock();
		return err;
	}

	struct mm_cursor cs, cd;
	struct mm_cursor *first = S->id < D->id ? &cs : &cd, *second = first == &cs ? &cd : &cs;
	struct task *tf = first == &cs ? S : D, *ts = first == &cs ? D : S;
	cur_thread()->quota_refused = 0;
	err = err_from_mm(mm_lock(first, &tf->as, lo, hi));
	if (!err) {
		err = err_from_mm(mm_lock(second, &ts->as, lo, hi));
		if (err)
			mm_release(first);
	}
	int code = 0, copied = 0;
	if (!err) {
		struct mm_info info;
		uint64_t va, nx;
		/* Validate: nothing changes before this passes. */
		if (mm_next_used(&cd, lo, &nx, NULL) == 1)
			err = -E_EXIST;
		int devices = 0;
		for (va = lo; !err && va < hi && mm_next_used(&cs, va, &nx, NULL) == 1; ) {
			mm_query(&cs, nx, &info);
			if (info.kind == MM_MAPPED && device_pa(info.pa))
				devices = 1;      /* left out: nothing to check */
			else if ((info.kind == MM_MAPPED || info.kind == MM_COW) && info.level != 1)
				err = -E_INVAL;
			else if (info.prot & MM_RWX & ~allowed)
				err = -E_PERM;
			else if ((info.kind == MM_MAPPED || info.kind == MM_COW) &&
				 (info.limits & MM_MAP_NOSHARE))
				err = -E_PERM;
			else if (mobj_status_is(&info))
				err = -E_PERM;   /* an object's mapping: only ROP_MAP_OBJ makes one */
			va = piece_end(nx, info.level, hi);
		}
		/* The source's downgrade, gone from every TLB before the
		 * destination shows anything. */
		if (!err)
			err = devices ? cow_around_devices(&cs, lo, hi) :
					err_from_mm(mm_make_cow(&cs, lo, hi - lo));
		if (!err)
			mm_flush(&cs);
		uint64_t nr0 = __atomic_load_n(&D->as.nr_frames, __ATOMIC_RELAXED);
		for (va = lo; !err && va < hi && mm_next_used(&cs, va, &nx, &st.skipped) == 1; ) {
			mm_query(&cs, nx, &info);
			uint64_t end = piece_end(nx, info.level, hi);
			copied = 1;
			if (info.kind == MM_COW) {
				uvm_frame_get(info.pa);
				uvm_frame_mapped(info.pa);
				int e = mm_map(&cd, nx, info.pa, 1, info.prot, MM_MAP_COW);
				if (e) {
					uvm_frame_unmapped(info.pa);
					uvm_frame_put(info.pa);
					err = err_from_mm(e);
				} else {
					st.frames++;
					if (info.prot & MM_PROT_X)
						code = 1;
				}
			} else if (info.kind == MM_MAPPED) {
				/* a device's registers (all else is COW now): the
				 * destination gets nothing there */
			} else {
				struct mm_status ms = { .kind = info.kind, .prot = info.prot,
							.dev = info.dev, .arg = info.arg };
				int e = mm_mark(&cd, nx, end - nx, &ms);
				if (e)
					err = err_from_mm(e);
				else
					st.statuses++;
			}
			va = end;
		}
		uint64_t nr1 = __atomic_load_n(&D->as.nr_frames, __ATOMIC_RELAXED);
		st.pt_pages = nr1 > nr0 ? nr1 - nr0 : 0;
		/* Out of memory half way: empty the destination range again (it
		 * was empty, so this splits nothing and cannot fail). */
		if (err && copied)
			mm_unmap(&cd, lo, hi - lo);
		mm_release(second);
		mm_release(first);
	}
	if (code && !err)
		uvm_icache_sync(D);
	if (!err)     /* threads of D waiting on a page there retry (pagewait.c) */
		pagewait_wake_range(D, lo, hi, 0);
	task_txn_end(S);
	task_txn_end(D);
	auth_read_unlock();
	if (err)
		return err;
	if (copy_to_user(ustats, &st, sizeof st))
		return -E_FAULT;
	return 0;
}
