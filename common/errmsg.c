/* errmsg.c: error text into the caller's buffer (see errmsg.h). */
#include "errmsg.h"

#include <stdarg.h>
#include <stdio.h>

void um_errmsg(char *err, size_t errlen, const char *fmt, ...)
{
	if (!err || errlen == 0)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}
