/* libpager: see pager.h. */
