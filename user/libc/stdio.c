/* printf and fflush on the streams of stdio.h: lib/fmt.c formats, the
 * stream's put function takes each character. */
#include <stdio.h>
#include "fmt.h"

static void stream_sink(char c, void *f)
{
	FILE *s = f;
	s->put(c, s);
}

int printf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = fmt_vprint(stream_sink, stdout, fmt, ap);
	va_end(ap);
	return n;
}

/* Flush f, or stdout for NULL (the only stream with a buffer): 0 or EOF. */
int fflush(FILE *f)
{
	if (!f)
		f = stdout;
	return f->flush ? f->flush(f) : 0;
}
