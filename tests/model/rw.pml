/*
 * CortenMM-rw locking protocol (docs/architecture.md section 2), Promela model.
 *
 * lock [s, e):
 *   from the root, while one entry of the current page covers the whole
 *   range: take a reader lock on the page, read that entry; if the child
 *   exists, keep the reader lock and descend. The page where the walk stops
 *   (the lowest existing page spanning the range) is the cover: drop the
 *   reader lock if one was taken there and take the writer lock. Every
 *   descendant of the cover is owned implicitly.
 * body: map / unmap below the cover (shared with adv, tree.pml); PT pages
 *   are removed by clearing their parent entry under the writer lock.
 * release: writer lock, then the reader locks bottom-up; removed pages are
 *   freed at once (nobody can hold a pointer to a page below a
 *   writer-locked one, so rw needs no RCU).
 *
 * Seeded bugs (spin -DBUG_...):
 *   BUG_EARLY_RELEASE    drop the parent's reader lock before locking the child
 *   BUG_READ_COVER       take a reader lock, not the writer lock, on the cover
 *   BUG_FREE_COVER       unmap of a whole cover also removes the cover itself,
 *                        writing the parent entry it holds only for reading
 */

#define HELD(p)         (COVER_HELD)
#ifdef BUG_READ_COVER
#define COVER_HELD      (pg[cur].rd > 0)
#else
#define COVER_HELD      (pg[cur].wr == me + 1)
#endif
#define BORN(c)         skip
#define REMOVE(c)       atomic { CHK(c); rm = rm | (1 << c) }
#define REMOVE_SUB(c)   REMOVE(c)

#include "tree.pml"

inline rdlock(p) {
    atomic { pg[p].wr == 0 -> CHK(p); pg[p].rd++ }
}

inline rdunlock(p) {
    atomic { CHK(p); assert(pg[p].rd > 0); pg[p].rd-- }
}

inline wrlock(p, me) {
    atomic { pg[p].wr == 0 && pg[p].rd == 0 -> CHK(p); pg[p].wr = me + 1 }
}

inline lock_range(me) {
    cur = ROOT;
    do
    :: ONE_ENTRY(cur) ->
        rdlock(cur);
        atomic { CHK(cur); c = pg[cur].ent[IDX(cur, s)] };
        if
        :: c != NIL ->
            path[dep] = cur; dep++;
#ifdef BUG_EARLY_RELEASE
            rdunlock(cur); dep--;
#endif
            cur = c
        :: else ->
            rdunlock(cur);
            break
        fi
    :: else -> break
    od;
#ifdef BUG_READ_COVER
    rdlock(cur);
#else
    wrlock(cur, me);
#endif
    c = 0
}

inline release(me) {
#ifdef BUG_READ_COVER
    rdunlock(cur);
#else
    atomic { CHK(cur); assert(pg[cur].wr == me + 1); pg[cur].wr = 0 };
#endif
    do
    :: dep > 0 -> dep--; rdunlock(path[dep]); path[dep] = 0
    :: else -> break
    od;
    /* Detached pages go back to the frame allocator now. */
    atomic {
        k = 0;
        do
        :: k < NPG ->
            if
            :: rm & (1 << k) -> pg[k].freed = 1
            :: else
            fi;
            k++
        :: else -> break
        od;
        k = 0; rm = 0
    }
}

#ifdef BUG_FREE_COVER
/* The seeded bug: when the range spans the whole cover, detach the cover
 * from its parent too (path[dep-1] is held only for reading). */
inline free_cover() {
    if
    :: dep > 0 && INSIDE(cur) ->
        atomic { CHK(path[dep - 1]);
                 pg[path[dep - 1]].ent[IDX(path[dep - 1], pg[cur].base)] = NIL };
        REMOVE(cur)
    :: else
    fi
}
#endif

proctype thread(byte me) {
    byte s, e, op, k, t, v, cur, p, c, g, i, j, dep;
    byte path[3];
    int rm;

    do
    :: MORE(me) ->
        pick();
        lock_range(me);
        claim(me);
        if
        :: op == OP_MAP -> do_map(me)
        :: else -> do_unmap(me);
#ifdef BUG_FREE_COVER
            free_cover();
#endif
            skip
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
