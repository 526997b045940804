/* A spawned program's arguments: fetched from the parent once (checked),
 * then laid out as argv on the top page of the child's stack. */
#include "mk.h"
#include "kstring.h"

/* Needs: nothing held (copies from user memory). Copy the spawn_ext at
 * uext (0: none) and its argument strings into *a, checking the block:
 * at most SPAWN_ARGS_MAX bytes and SPAWN_ARGC_MAX strings, each ended by
 * a NUL. 0, -E_FAULT (unreadable) or -E_INVAL (malformed); *a is then
 * "no arguments, no caps". */
int spawn_args_fetch(uint64_t uext, struct spawn_args *a)
{
	a->len = 0;
	a->argc = 0;
	a->kernel = a->console = SLOT_NONE;
	if (!uext)
		return 0;
	struct spawn_ext e;
	if (copy_from_user(&e, uext, sizeof e))
		return -E_FAULT;
	if (e.args_len > SPAWN_ARGS_MAX || (e.args_len && !e.args))
		return -E_INVAL;
	if (e.args_len && copy_from_user(a->buf, (uint64_t)e.args, e.args_len))
		return -E_FAULT;
	if (e.args_len && a->buf[e.args_len - 1])
		return -E_INVAL;          /* the last string must end */
	int argc = 0;
	for (size_t i = 0; i < e.args_len; i++)
		if (!a->buf[i] && ++argc > SPAWN_ARGC_MAX)
			return -E_INVAL;
	a->len = e.args_len;
	a->argc = argc;
	a->kernel = e.kernel;
	a->console = e.console;
	return 0;
}

/* Needs: t not yet running, nothing held. Put argv for a's strings on a
 * fresh frame (charged to t) mapped as the top page of t's stack: the
 * strings at the top, the NULL-ended pointer array below them. Sets
 * *sp (16-byte aligned, below the array) and *argv. 0, or -E_QUOTA /
 * -E_NOMEM with nothing mapped. */
int spawn_args_place(struct task *t, const struct spawn_args *a, uint64_t *sp, uint64_t *argv)
{
	uint64_t page = USER_STACK_TOP - PAGE_SIZE;
	uint64_t pa;
	int err = uvm_frame_alloc(t, &pa);
	if (err)
		return err;
	uint8_t *k = phys_to_virt(pa);
	uint64_t strs = USER_STACK_TOP - ((a->len + 15) & ~15UL);
	uint64_t vec = (strs - (uint64_t)(a->argc + 1) * 8) & ~15UL;
	memcpy(k + (strs - page), a->buf, a->len);
	uint64_t *v = (uint64_t *)(k + (vec - page));
	uint64_t s = strs;
	for (int i = 0; i < a->argc; i++) {
		v[i] = s;
		s += strlen(a->buf + (s - strs)) + 1;
	}
	v[a->argc] = 0;
	struct mm_cursor c;
	if (mm_lock(&c, &t->as, page, USER_STACK_TOP)) {
		uvm_frame_put(pa);
		return -E_NOMEM;
	}
	if (mm_map(&c, page, pa, 1, MM_PROT_R | MM_PROT_W | MM_PROT_U, 0)) {
		uvm_frame_put(pa);
		err = -E_NOMEM;
	}
	mm_release(&c);
	if (err)
		return err;
	*sp = vec;
	*argv = vec;
	return 0;
}
