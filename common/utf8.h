/*
 * utf8.h: text from outside (a path, a device's or a kernel's name, an
 * NVTX range's) made valid UTF-8 before it goes into JSON, which allows
 * nothing else: a byte that starts no well-formed sequence (RFC 3629: no
 * overlong forms, no surrogates, nothing past U+10FFFF) becomes U+FFFD.
 */
#ifndef UMKIT_UTF8_H
#define UMKIT_UTF8_H

#include <stddef.h>

/* The length of the well-formed sequence at s (1 to 4), or 0 when s[0]
 * starts none. s is NUL-terminated; a NUL ends any sequence. */
size_t utf8_sequence(const unsigned char *s);

/* A malloc'd copy of s with every byte that starts no well-formed
 * sequence replaced by U+FFFD; NULL when out of memory. */
char *utf8_valid_copy(const char *s);

#endif
