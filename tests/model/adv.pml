/*
 * CortenMM-adv locking protocol (docs/architecture.md section 2), Promela model.
 *
 * lock [s, e):
 *   rcu_read_lock; walk down from the root WITHOUT locks while one entry
 *   covers the whole range. Where that entry is empty: lock the page,
 *   re-check stale (retry if set), allocate the child locked at birth,
 *   publish it, unlock the parent, go on (holding the newborn).
 *   At the cover (the lowest page spanning the range): lock it, re-check
 *   stale (retry from the root if set), then lock every existing descendant
 *   overlapping the range in DFS pre-order, ascending. rcu_read_unlock.
 * body: map / unmap; new PT pages are born locked; removal = one store
 *   clearing the parent entry, then every page of the detached subtree is
 *   marked stale and unlocked (adv_unlinked).
 * release: unlock the rest, then retire removed pages to RCU; a retired
 *   page is freed when every thread that was inside a read-side section at
 *   retire time has left it (freed at the earliest legal moment, the most
 *   adversarial RCU).
 *
 * Seeded bugs (spin -DBUG_...):
 *   BUG_NO_STALE_CHECK   cover is not re-checked for stale after locking
 *   BUG_NO_GRACE         removed pages are freed at release, no grace period
 *   BUG_NO_DESC          existing descendants of the cover are not locked
 *   BUG_DESC_POSTORDER   descendants locked children-before-parent
 *   BUG_STALE_TOP_ONLY   only the detached page is marked stale, not its subtree
 * P1_ONLY turns off the "writes only to pages I hold locked" assertion so a
 * run shows that the range-ownership assertion (P1) catches BUG_NO_DESC alone.
 */

#ifdef P1_ONLY
#define HELD(p)     (1)     /* drop the per-page lock check: only P1 can catch */
#else
#define HELD(p)     (pg[p].lk == me + 1)
#endif
#define BORN(c)     pg[c].lk = me + 1
/* Like adv_unlinked in C: mark stale and unlock at once (a waiter gets the
 * lock, sees stale, retries); retired to RCU at release. */
#define MARK(c)     atomic { CHK(c); assert(HELD(c)); pg[c].stale = 1; pg[c].lk = 0; \
                             rm = rm | (1 << c) }
#define REMOVE(c)   MARK(c)
#ifdef BUG_STALE_TOP_ONLY
#define REMOVE_SUB(c) atomic { CHK(c); assert(HELD(c)); pg[c].lk = 0; rm = rm | (1 << c) }
#else
#define REMOVE_SUB(c) MARK(c)
#endif

#include "tree.pml"

byte rcu_in;            /* bit t: thread t is inside a read-side section */
byte gp_wait[NPG];      /* retired page: readers it still waits for */
bool retired[NPG];

/* Leaving a read-side section is this thread's quiescent state: every
 * retired page waiting only for it is freed now. */
inline rcu_unlock(me) {
    d_step {
        rcu_in = rcu_in & ~(1 << me);
        k = 0;
        do
        :: k < NPG ->
            if
            :: retired[k] && (gp_wait[k] & (1 << me)) ->
                gp_wait[k] = gp_wait[k] & ~(1 << me);
                if
                :: gp_wait[k] == 0 -> retired[k] = 0; pg[k].freed = 1
                :: else
                fi
            :: else
            fi;
            k++
        :: else -> break
        od;
        k = 0
    }
}

/* Spinlock: skip if we already hold it (a page born locked). */
inline plock(p, me) {
    if
    :: pg[p].lk == me + 1
    :: else -> atomic { pg[p].lk == 0 -> CHK(p); pg[p].lk = me + 1 }
    fi
}

inline punlock(p) {
    atomic { CHK(p); pg[p].lk = 0 }
}

/* Lock existing descendants of cur overlapping [s, e), DFS pre-order. */
inline lock_desc(me) {
    if
    :: pg[cur].lvl > 0 ->
        i = 0;
        do
        :: i < 2 ->
            if
            :: EOVL(cur, i) ->
                atomic { CHK(cur); c = pg[cur].ent[i] };
                if
                :: c != NIL ->
#ifndef BUG_DESC_POSTORDER
                    plock(c, me);
#endif
                    if
                    :: pg[c].lvl > 0 ->
                        j = 0;
                        do
                        :: j < 2 ->
                            if
                            :: EOVL(c, j) ->
                                atomic { CHK(c); g = pg[c].ent[j] };
                                if
                                :: g != NIL -> plock(g, me)
                                :: else
                                fi
                            :: else
                            fi;
                            j++
                        :: else -> break
                        od
                    :: else
                    fi;
#ifdef BUG_DESC_POSTORDER
                    plock(c, me);
#endif
                    skip
                :: else
                fi
            :: else
            fi;
            i++
        :: else -> break
        od
    :: else
    fi;
    atomic { c = 0; g = 0; i = 0; j = 0 }
}

inline lock_range(me) {
    skip;
retry:
    rcu_in = rcu_in | (1 << me);   /* rcu_read_lock */
    cur = ROOT;
    do
    :: ONE_ENTRY(cur) ->
        i = IDX(cur, s);
        atomic { CHK(cur); c = pg[cur].ent[i] };
        if
        :: c != NIL -> cur = c
        :: else ->
            plock(cur, me);
            atomic { CHK(cur); st = pg[cur].stale };
            if
            :: st -> punlock(cur); rcu_unlock(me); goto retry
            :: else
            fi;
            atomic { CHK(cur); c = pg[cur].ent[i] };
            if
            :: c == NIL ->
                alloc_child(c, cur, i);
                BORN(c);
                atomic { CHK(cur); assert(HELD(cur)); pg[cur].ent[i] = c }
            :: else
            fi;
            punlock(cur);
            cur = c
        fi
    :: else -> break
    od;
    plock(cur, me);
#ifndef BUG_NO_STALE_CHECK
    atomic { CHK(cur); st = pg[cur].stale };
    if
    :: st -> punlock(cur); rcu_unlock(me); goto retry
    :: else
    fi;
#endif
#ifndef BUG_NO_DESC
    lock_desc(me);
#endif
    rcu_unlock(me);
    atomic { c = 0; i = 0; st = 0 }
}

/* Unlock everything held, then hand removed pages to RCU. */
inline release(me) {
    k = 0;
    do
    :: k < NPG ->
        atomic {
            if
            :: pg[k].lk == me + 1 -> CHK(k); pg[k].lk = 0
            :: else
            fi;
            k++
        }
    :: else -> break
    od;
    atomic {
        k = 0;
        do
        :: k < NPG ->
            if
            :: rm & (1 << k) ->
#ifdef BUG_NO_GRACE
                pg[k].freed = 1
#else
                gp_wait[k] = rcu_in;
                if
                :: gp_wait[k] == 0 -> pg[k].freed = 1
                :: else -> retired[k] = 1
                fi
#endif
            :: else
            fi;
            k++
        :: else -> break
        od;
        k = 0; rm = 0
    }
}

proctype thread(byte me) {
    byte s, e, op, k, t, v, cur, p, c, g, i, j;
    bool st;
    int rm;

    do
    :: MORE(me) ->
        pick();
        lock_range(me);
        claim(me);
        if
        :: op == OP_MAP -> do_map(me)
        :: else -> do_unmap(me)
        fi;
        unclaim(me);
        release(me);
        d_step { t = t + (FOREVER_THREAD(me) -> 0 : 1); s = 0; e = 0; op = 0; cur = 0 }
    :: else -> break
    od;
    ndone++
}

init {
    byte k;
    init_tree();
    atomic {
        k = 0;
        do
        :: k < NT -> run thread(k); k++
        :: else -> break
        od;
        k = 0
    }
}

/* Every thread finishes all its transactions (checked with pan -a -f);
 * under FOREVER: thread 0 finishes while the others never stop. */
ltl done { <> DONE_PROP }

#ifdef FOREVER
/* "Thread 0 eventually stops (re)starting its lock walk". A counterexample
 * is a weakly fair run in which thread 0 restarts forever: the adv retry
 * loop (stale cover, retry) is not bounded when others keep removing PT
 * pages. thread[1] is thread 0 (pid 0 is init). */
ltl retry_ends { <>[] !(thread[1]@retry) }
#endif
