/* The client role of the programs that map one read-only file into
 * copies of themselves (filedemo, fsmap). */
#include "ulib.h"
#include "testlib.h"

int map_client(uint64_t va)
{
	uint64_t w[4] = { MAP_READY, 0, 0, 0 };
	struct sysret r = ipc(SYS_CALL, SLOT_GIVEN, w, SLOT_NONE);
	if (r.a0 || r.a1)
		return 3;
	uint64_t size = (uint64_t)r.a2;
	w[0] = MAP_DONE;
	w[1] = crc32_update(0, (const void *)va, size);
	r = ipc(SYS_CALL, SLOT_GIVEN, w, SLOT_NONE);
	return r.a0 ? 4 : 0;
}
