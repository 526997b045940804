/*
 * Shared part of the CortenMM protocol models (rw.pml, adv.pml): the
 * page-table tree, the PT-page pool, the ghost state the properties are
 * stated over, and the workload each thread runs.
 *
 * Geometry (docs/architecture.md section 2, shrunk): 3 levels, FAN = 2 entries a
 * level, NV = 8 virtual pages.
 *   level 2 (root) spans 8 pages, an entry spans 4
 *   level 1        spans 4 pages, an entry spans 2
 *   level 0        spans 2 pages, an entry maps 1 page (NIL or MAPPED)
 * PT pages come from a pool of NPG descriptors handed out in order and never
 * reused, so a freed descriptor stays freed and every later access to it is
 * caught by the ghost flag (ABA through reuse is therefore not modelled; the
 * real code excludes it by the same RCU argument that these models check).
 */

#ifndef NT
#define NT 2            /* threads */
#endif
#ifndef NTX
#define NTX 2           /* transactions per thread */
#endif
#ifndef NPG
#define NPG 12          /* PT-page descriptors in the pool */
#endif
#define NV 8
#define NIL 255
#define MAPPED 1
#define ROOT 0

#define OP_MAP 0
#define OP_UNMAP 1

typedef Page {
    byte lvl;           /* 2 = root, 0 = leaf table */
    byte base;          /* first virtual page the PT page spans */
    byte ent[2];        /* child descriptor, or (level 0) NIL / MAPPED */
    bool stale;         /* adv: unlinked, lockers must retry */
    byte lk;            /* adv: spinlock owner + 1, 0 free */
    byte rd;            /* rw: reader count */
    byte wr;            /* rw: writer + 1, 0 none */
    bool freed;         /* ghost: returned to the frame allocator */
};

Page pg[NPG];
byte nextpg = 1;        /* bump allocator over the pool; 0 is the root */
byte owner[NV];         /* ghost: thread + 1 that holds the page in a cursor */
byte ndone;             /* threads that finished every transaction */

#define SPAN(l)       (2 << (l))
#define IDX(p, va)    (((va) - pg[p].base) >> pg[p].lvl)
#define CBASE(p, i)   (pg[p].base + ((i) << pg[p].lvl))
/*
 * The walk goes below p: the whole range [s, e) lies under one entry of p.
 * Like the C core (mm_whole_entry), it also stops when the range is exactly
 * that entry's span (the entry may hold a huge page or a status, so the
 * cover is p). LOWEST_COVER instead always descends to the lowest page that
 * spans the range (the textbook definition; BUG_FREE_COVER needs it).
 */
#ifdef LOWEST_COVER
#define ONE_ENTRY(p)  (pg[p].lvl > 0 && IDX(p, s) == IDX(p, e - 1))
#else
#define ONE_ENTRY(p)  (pg[p].lvl > 0 && IDX(p, s) == IDX(p, e - 1) && \
                       !(s == CBASE(p, IDX(p, s)) && \
                         e == CBASE(p, IDX(p, s)) + (1 << pg[p].lvl)))
#endif
/* Entry i of p overlaps [s, e). */
#define EOVL(p, i)    (CBASE(p, i) < e && s < CBASE(p, i) + (1 << pg[p].lvl))
/* PT page c lies entirely inside [s, e). */
#define INSIDE(c)     (s <= pg[c].base && pg[c].base + SPAN(pg[c].lvl) <= e)

/* Property "no use after free": every access to a PT page goes through CHK. */
#define CHK(p)        assert(!pg[p].freed)

/*
 * Take a fresh descriptor for a child of p at entry i (not yet published).
 * Safety runs never reuse a descriptor, so the freed flag stays a witness.
 * FOREVER (liveness only) reuses freed ones so an endless workload has a
 * finite state space.
 */
inline alloc_child(c, p, i) {
    d_step {
#ifdef FOREVER
        c = 1;
        do
        :: c < nextpg && !pg[c].freed -> c++
        :: else -> break
        od;
        if
        :: c == nextpg -> nextpg++
        :: else ->
            pg[c].freed = 0; pg[c].stale = 0; pg[c].lk = 0;
            pg[c].rd = 0; pg[c].wr = 0; pg[c].ent[0] = NIL; pg[c].ent[1] = NIL
        fi;
        assert(c < NPG);
#else
        assert(nextpg < NPG);   /* the pool is sized for the workload */
        c = nextpg; nextpg++;
#endif
        pg[c].lvl = pg[p].lvl - 1;
        pg[c].base = CBASE(p, i)
    }
}

/* A thread's transaction loop: NTX transactions, or (FOREVER) thread 0
 * does NTX and every other thread transacts without end. */
#ifdef FOREVER
#define MORE(me)   (t < NTX || me > 0)
#define DONE_PROP  (ndone > 0)
#define FOREVER_THREAD(me) (me > 0)
#else
#define MORE(me)   (t < NTX)
#define DONE_PROP  (ndone == NT)
#define FOREVER_THREAD(me) (0)
#endif

/* Property P1: claiming a range asserts nobody else holds any part of it. */
inline claim(me) {
    d_step {
        k = s;
        do
        :: k < e -> assert(owner[k] == 0); owner[k] = me + 1; k++
        :: else -> break
        od
    }
}

inline unclaim(me) {
    d_step {
        k = s;
        do
        :: k < e -> assert(owner[k] == me + 1); owner[k] = 0; k++
        :: else -> break
        od;
        k = 0
    }
}

/*
 * The workload: each transaction picks one of a few ranges chosen so that
 * covers land on every level and ranges overlap in every way (equal,
 * nested, partial, disjoint), and maps or unmaps the whole range.
 * WORKLOAD selects a set; the default mixes all levels.
 */
inline pick() {
#if WORKLOAD == 1
    /* small: one leaf-level and one mid-level cover */
    if
    :: s = 1; e = 2
    :: s = 0; e = 3
    fi;
#elif WORKLOAD == 2
    /* root cover that removes a whole level-1 subtree, plus a leaf cover */
    if
    :: s = 0; e = 5
    :: s = 1; e = 2
    :: s = 1; e = 3
    fi;
#elif WORKLOAD == 3
    /* [0,2) is exactly one entry of the level-1 page [0,4) */
    if
    :: s = 0; e = 2
    :: s = 1; e = 3
    fi;
#else
    if
    :: s = 1; e = 2     /* cover: level-0 page [0,2) */
    :: s = 0; e = 3     /* cover: level-1 page [0,4) */
    :: s = 1; e = 5     /* cover: root */
    fi;
#endif
#ifdef MAP_ONLY
    op = OP_MAP     /* no PT page is ever removed: isolates property P1 */
#else
    if
    :: op = OP_MAP
    :: op = OP_UNMAP
    fi
#endif
}

inline init_tree() {
    d_step {
        k = 0;
        do
        :: k < NPG -> pg[k].ent[0] = NIL; pg[k].ent[1] = NIL; k++
        :: else -> break
        od;
        pg[ROOT].lvl = 2; pg[ROOT].base = 0;
        k = 0
    }
}

/*
 * The body of a transaction, shared by both protocols. The including model
 * defines:
 *   HELD(p)    the protocol says this thread may write PT page p now
 *   BORN(c)    what happens to a PT page created inside the transaction
 *              before it is published (adv: it is born locked)
 *   REMOVE(c)  c was detached from its parent: mark it (adv: stale) and
 *              remember it in rm so release() can free or retire it
 * Locals used: cur (the covering page), v, p, c, g, i, j, rm.
 */

/* Map every page of [s, e), creating missing PT pages below the cover. */
inline do_map(me) {
    v = s;
    do
    :: v < e ->
        p = cur;
        do
        :: pg[p].lvl > 0 ->
            i = IDX(p, v);
            atomic { CHK(p); c = pg[p].ent[i] };
            if
            :: c == NIL ->
                alloc_child(c, p, i);
                BORN(c);
                atomic { CHK(p); assert(HELD(p)); pg[p].ent[i] = c }
            :: else
            fi;
            p = c
        :: else -> break
        od;
        atomic { CHK(p); assert(HELD(p)); pg[p].ent[IDX(p, v)] = MAPPED };
        v++
    :: else -> break
    od;
    atomic { v = 0; p = 0; c = 0; i = 0 }
}

/*
 * Unmap every page of [s, e), then remove the PT pages below the cover
 * that lie entirely inside the range: one store to the parent entry
 * detaches the subtree, then every page of it is marked (REMOVE). The
 * cover itself is never removed: its parent entry belongs to nobody here.
 */
inline do_unmap(me) {
    v = s;
    do
    :: v < e ->
        p = cur;
        do
        :: pg[p].lvl > 0 ->
            atomic { CHK(p); c = pg[p].ent[IDX(p, v)] };
            if
            :: c == NIL -> p = NIL; break
            :: else -> p = c
            fi
        :: else -> break
        od;
        if
        :: p != NIL ->
            atomic { CHK(p); assert(HELD(p)); pg[p].ent[IDX(p, v)] = NIL }
        :: else
        fi;
        v++
    :: else -> break
    od;
    if
    :: pg[cur].lvl > 0 ->
        i = 0;
        do
        :: i < 2 ->
            atomic { CHK(cur); c = pg[cur].ent[i] };
            if
            :: c != NIL && INSIDE(c) ->
                atomic { CHK(cur); assert(HELD(cur)); pg[cur].ent[i] = NIL };
                REMOVE(c);
                if
                :: pg[c].lvl > 0 ->
                    j = 0;
                    do
                    :: j < 2 ->
                        atomic { CHK(c); g = pg[c].ent[j] };
                        if
                        :: g != NIL -> REMOVE_SUB(g)
                        :: else
                        fi;
                        j++
                    :: else -> break
                    od
                :: else
                fi
            :: c != NIL && !INSIDE(c) && pg[c].lvl > 0 ->
                j = 0;
                do
                :: j < 2 ->
                    atomic { CHK(c); g = pg[c].ent[j] };
                    if
                    :: g != NIL && INSIDE(g) ->
                        atomic { CHK(c); assert(HELD(c)); pg[c].ent[j] = NIL };
                        REMOVE(g)
                    :: else
                    fi;
                    j++
                :: else -> break
                od
            :: else
            fi;
            i++
        :: else -> break
        od
    :: else
    fi;
    atomic { v = 0; p = 0; c = 0; g = 0; i = 0; j = 0 }
}
