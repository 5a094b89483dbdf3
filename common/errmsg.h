/*
 * errmsg.h: the one way library code reports an error: as text in the
 * caller's buffer, naming the file and the problem. The command decides
 * what to tell the user (style.md: errors returned, not printed).
 */
#ifndef UMKIT_ERRMSG_H
#define UMKIT_ERRMSG_H

#include <stddef.h>

/* Formats into err[errlen]; does nothing when err is NULL or errlen 0. */
void um_errmsg(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
