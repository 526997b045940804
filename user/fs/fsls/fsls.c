/* fsls [PATH]: list a directory of the attached ext2 disk (default "/"):
 * one line an entry, "<type> <size> <name>" (type f, d, l, o or ?), then
 * "fsls: <PATH>: <N> entries". A PATH that names a file lists that file
 * alone. Status 0, 1 when the disk or the path cannot be read, 2 usage. */
#include "ulib.h"
#include "fsdisk.h"

static struct fsdisk disk;

static void entry(unsigned type, uint64_t size, const char *name)
{
	printf("%c %10llu %s\n", ext2_type_char(type), (unsigned long long)size, name);
}

/* The listing of `path` on the mounted disk: 0 or the error. */
static long list(const char *path)
{
	struct ext2 *fs = &disk.fs;
	struct ext2_inode in;
	long r = ext2_lookup(fs, path, &in);
	if (r)
		return r;
	unsigned long n = 0;
	if (ext2_type(&in) != EXT2_T_DIR) {
		const char *base = strrchr(path, '/');
		entry(ext2_type(&in), in.size, base ? base + 1 : path);
		n = 1;
	} else {
		static struct ext2_dir d;
		static struct ext2_dirent e;
		if ((r = ext2_dir_open(fs, &in, &d)))
			return r;
		while ((r = ext2_dir_next(fs, &d, &e)) == 1) {
			entry(e.type, e.size, e.name);
			n++;
		}
		if (r < 0)
			return r;
	}
	printf("fsls: %s: %lu entries\n", path, n);
	return 0;
}

int main(int argc, char **argv)
{
	const char *path = "/";
	for (int i = 1; i < argc; i++) {
		if (argv[i][0] == '-' || i > 1)
			return prog_usage("fsls [PATH]");
		path = argv[i];
	}
	long r = fsdisk_open(&disk);
	if (r) {
		printf("fsls: disk: %s\n", err_name(r));
		return 1;
	}
	r = list(path);
	if (r)
		printf("fsls: %s: %s\n", path, err_name(r));
	fsdisk_close(&disk);
	return r ? 1 : 0;
}
